//! Printing named types: module and plain classes (attributes, constants, methods), named
//! tuples, interfaces and enums.

use std::sync::Arc;

use super::annotation::annotation;
use ts_core::types::{EnumType, InterfaceType};
use ts_core::{ClassType, FunctionSchema, IValue, Type, TypeRef};
use ts_ir::Graph;

use super::constant::write_constant;
use super::names::is_valid_identifier;
use super::{split_qualified, PrintError, PythonPrinter};

/// A method to print in a class: its name, graph and schema (with `self` first).
pub struct MethodSource<'a> {
    /// The method's unqualified name (`forward`).
    pub name: &'a str,
    /// Its graph; the first input is `self`.
    pub graph: &'a Graph,
    /// Its declaration: argument names, types and defaults, and the return type.
    pub schema: &'a FunctionSchema,
}

impl PythonPrinter {
    /// Appends `class` with the methods its `ClassType` lists (graph functions only; a class
    /// with a method that is not a graph function is a bound C++ class and is skipped).
    pub fn add_class_type(&mut self, class: &Arc<ClassType>) -> Result<(), PrintError> {
        let mut owned = Vec::new();
        for m in class.methods() {
            let Some(f) = ts_ir::as_function(&m) else {
                return Ok(());
            };
            let Some(g) = f.graph() else {
                return Err(PrintError::new(format!(
                    "method '{}' of {} has no graph",
                    m.name(),
                    class.name
                )));
            };
            let schema = f
                .try_schema()
                .unwrap_or_else(|| super::schema_from_graph(m.name(), &g));
            owned.push((m.name().to_string(), g, schema));
        }
        let methods: Vec<MethodSource<'_>> = owned
            .iter()
            .map(|(n, g, s)| MethodSource {
                name: n,
                graph: g,
                schema: s,
            })
            .collect();
        self.add_class(class, &methods)
    }

    /// Appends `class` to its qualifier's file: `class Name(Module):` (or `class Name:`), for
    /// modules the `__parameters__`/`__buffers__` lists, one annotation per attribute
    /// (`__annotations__["0"] = T` for names that are not identifiers), the constants as
    /// `name : Final[T] = value`, then `methods` in order.
    pub fn add_class(
        &mut self,
        class: &ClassType,
        methods: &[MethodSource<'_>],
    ) -> Result<(), PrintError> {
        let (qualifier, name) = split_qualified(&class.name);
        self.transactional(qualifier, |p| {
            let attributes = class.attributes();
            let constants = class.members.read().constants.clone();
            let mut head = format!("class {name}");
            if class.is_module {
                head.push_str("(Module)");
            }
            head.push_str(":\n");
            if class.is_module {
                let list = |f: &dyn Fn(&ts_core::types::ClassAttribute) -> bool| {
                    let mut s = String::from("[");
                    for a in attributes.iter().filter(|a| f(a)) {
                        s.push_str(&format!("\"{}\", ", a.name));
                    }
                    s.push(']');
                    s
                };
                head.push_str(&format!(
                    "  __parameters__ = {}\n",
                    list(&|a| a.is_parameter)
                ));
                head.push_str(&format!("  __buffers__ = {}\n", list(&|a| a.is_buffer)));
            }
            for (i, a) in attributes.iter().enumerate() {
                p.deps.add_contained(&a.ty);
                if is_valid_identifier(&a.name) {
                    head.push_str(&format!("  {} : {}\n", a.name, annotation(&a.ty)));
                } else {
                    if i == 0 {
                        head.push_str("  __annotations__ = []\n");
                    }
                    head.push_str(&format!(
                        "  __annotations__[\"{}\"] = {}\n",
                        a.name,
                        annotation(&a.ty)
                    ));
                }
            }
            for (cname, v) in &constants {
                head.push_str(&format!(
                    "  {cname} : Final[{}] = ",
                    annotation(&constant_type(v))
                ));
                write_constant(&mut head, v, &mut p.constants);
                head.push('\n');
            }
            p.files
                .entry(qualifier.to_string())
                .or_default()
                .text
                .push_str(&head);
            for m in methods {
                p.emitter(qualifier, 1)
                    .function(m.name, m.graph, m.schema, true)?;
            }
            Ok(())
        })
    }

    /// Appends a named tuple type: `class Name(NamedTuple):` and `field : T` lines.
    pub fn add_named_tuple(&mut self, t: &TypeRef) -> Result<(), PrintError> {
        let Type::Tuple(tt) = &**t else {
            return Err(PrintError::new(format!(
                "{} is not a named tuple",
                annotation(t)
            )));
        };
        let Some(info) = &tt.names else {
            return Err(PrintError::new(format!(
                "{} is not a named tuple",
                annotation(t)
            )));
        };
        let (qualifier, name) = split_qualified(&info.qualified_name);
        let mut s = format!("class {name}(NamedTuple):\n");
        for (f, ty) in info.fields.iter().zip(&tt.elements) {
            self.deps.add_contained(ty);
            s.push_str(&format!("  {f} : {}\n", annotation(ty)));
        }
        self.files
            .entry(qualifier.to_string())
            .or_default()
            .text
            .push_str(&s);
        Ok(())
    }

    /// Appends an interface: `class Name(Interface):` (or `ModuleInterface`) with one
    /// `def m(self, a: T) -> R:` / `pass` stub per method.
    pub fn add_interface(&mut self, i: &InterfaceType) -> Result<(), PrintError> {
        let (qualifier, name) = split_qualified(&i.name);
        let base = if i.is_module {
            "ModuleInterface"
        } else {
            "Interface"
        };
        let mut s = format!("class {name}({base}):\n");
        for m in i.methods.read().iter() {
            if m.arguments.first().map(|a| a.name.as_str()) != Some("self") {
                return Err(PrintError::new(format!(
                    "interface method '{}' of {} does not take self first",
                    m.name, i.name
                )));
            }
            s.push_str(&format!("  def {}(self", m.name));
            for a in &m.arguments[1..] {
                self.deps.add_contained(&a.ty);
                s.push_str(&format!(", {}: {}", a.name, annotation(&a.ty)));
            }
            let ret = m
                .returns
                .first()
                .map(|r| r.ty.clone())
                .unwrap_or_else(Type::none);
            self.deps.add_contained(&ret);
            s.push_str(&format!(") -> {}:\n    pass\n", annotation(&ret)));
        }
        self.files
            .entry(qualifier.to_string())
            .or_default()
            .text
            .push_str(&s);
        Ok(())
    }

    /// Appends an enum: `class Name(Enum):` and `MEMBER = value` lines (string values in
    /// double quotes, unescaped, as PyTorch writes them).
    pub fn add_enum(&mut self, e: &EnumType) -> Result<(), PrintError> {
        let (qualifier, name) = split_qualified(&e.name);
        let mut s = format!("class {name}(Enum):\n");
        for (member, v) in &e.members {
            let value = match v {
                IValue::String(text) => format!("\"{text}\""),
                IValue::Double(d) => super::constant::float_repr(*d),
                other => other.to_display_string(),
            };
            s.push_str(&format!("  {member} = {value}\n"));
        }
        self.files
            .entry(qualifier.to_string())
            .or_default()
            .text
            .push_str(&s);
        Ok(())
    }
}

/// The type PyTorch infers for a class constant (`Tuple[int, int]` for `(1, 1)`).
fn constant_type(v: &IValue) -> TypeRef {
    v.type_of()
}
