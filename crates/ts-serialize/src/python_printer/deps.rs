//! The named types printed code refers to (classes, named tuples, interfaces, enums and
//! functions): the exporter must print each of them too.

use super::annotation::{annotation, is_named_tuple_class};
use ts_core::{Type, TypeRef};

/// Named types in the order they were first referenced, without duplicates.
#[derive(Default, Debug)]
pub struct Deps {
    types: Vec<TypeRef>,
    names: Vec<String>,
}

impl Deps {
    /// Records `t` itself when it is a named type.
    pub fn add_named(&mut self, t: &TypeRef) {
        let named = match &**t {
            Type::Class(_) | Type::Interface(_) | Type::Enum(_) | Type::Function(_) => true,
            Type::Tuple(_) => is_named_tuple_class(t),
            _ => false,
        };
        if named {
            let name = annotation(t);
            if !self.names.contains(&name) {
                self.names.push(name);
                self.types.push(t.clone());
            }
        }
    }

    /// Records `t` and every named type contained in it (`List[__torch__.Foo]`).
    pub fn add_contained(&mut self, t: &TypeRef) {
        self.add_named(t);
        match &**t {
            Type::List(e)
            | Type::Optional(e)
            | Type::Future(e)
            | Type::RRef(e)
            | Type::Await(e) => self.add_contained(e),
            Type::Dict(k, v) => {
                self.add_contained(k);
                self.add_contained(v);
            }
            Type::Tuple(tt) => tt.elements.iter().for_each(|e| self.add_contained(e)),
            Type::Union(ms) => ms.iter().for_each(|e| self.add_contained(e)),
            _ => {}
        }
    }

    /// The recorded types, first reference first.
    pub fn types(&self) -> &[TypeRef] {
        &self.types
    }

    /// Their qualified names.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}
