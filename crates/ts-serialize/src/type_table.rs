//! Hash-consed JIT types for the values a pickle produces.
//!
//! Loading infers the element types of lists and dicts from their contents and checks values
//! against type tags. A pickle can describe a deep DAG of shared tuples whose types, compared
//! structurally, would take exponential time; so every type built here is interned: two types are
//! equal exactly when they are the same `Arc`, and unification is a pointer comparison.

use std::collections::HashMap;
use std::sync::Arc;

use ts_core::types::TupleType;
use ts_core::{Type, TypeRef};

/// Interned types: leaves are ts-core's shared singletons (`Type::int()`, ...), composite types
/// are looked up by their children's addresses.
pub struct TypeTable {
    pub any: TypeRef,
    pub none: TypeRef,
    pub bool_: TypeRef,
    pub int: TypeRef,
    pub float: TypeRef,
    pub complex: TypeRef,
    pub str_: TypeRef,
    pub tensor: TypeRef,
    pub device: TypeRef,
    pub number: TypeRef,
    lists: HashMap<usize, TypeRef>,
    optionals: HashMap<usize, TypeRef>,
    futures: HashMap<usize, TypeRef>,
    dicts: HashMap<(usize, usize), TypeRef>,
    tuples: HashMap<Vec<usize>, TypeRef>,
    unions: HashMap<Vec<usize>, TypeRef>,
    /// Nominal types (classes, enums, named tuples) by qualified name.
    nominal: HashMap<String, TypeRef>,
}

fn addr(t: &TypeRef) -> usize {
    Arc::as_ptr(t) as usize
}

impl Default for TypeTable {
    fn default() -> Self {
        TypeTable::new()
    }
}

impl TypeTable {
    /// A table holding only the leaf types.
    pub fn new() -> TypeTable {
        TypeTable {
            any: Type::any(),
            none: Type::none(),
            bool_: Type::bool(),
            int: Type::int(),
            float: Type::float(),
            complex: Type::complex(),
            str_: Type::string(),
            tensor: Type::tensor(),
            device: Type::device(),
            number: Type::number(),
            lists: HashMap::new(),
            optionals: HashMap::new(),
            futures: HashMap::new(),
            dicts: HashMap::new(),
            tuples: HashMap::new(),
            unions: HashMap::new(),
            nominal: HashMap::new(),
        }
    }

    /// `List[elem]`.
    pub fn list(&mut self, elem: &TypeRef) -> TypeRef {
        self.lists
            .entry(addr(elem))
            .or_insert_with(|| Arc::new(Type::List(elem.clone())))
            .clone()
    }

    /// `Optional[inner]` (`Optional[Optional[T]]` and `Optional[Any]` collapse as in PyTorch).
    pub fn optional(&mut self, inner: &TypeRef) -> TypeRef {
        if matches!(**inner, Type::Optional(_) | Type::Any | Type::NoneType) {
            return inner.clone();
        }
        self.optionals
            .entry(addr(inner))
            .or_insert_with(|| Arc::new(Type::Optional(inner.clone())))
            .clone()
    }

    /// `Future[inner]`.
    pub fn future(&mut self, inner: &TypeRef) -> TypeRef {
        self.futures
            .entry(addr(inner))
            .or_insert_with(|| Arc::new(Type::Future(inner.clone())))
            .clone()
    }

    /// `Dict[key, value]`.
    pub fn dict(&mut self, key: &TypeRef, value: &TypeRef) -> TypeRef {
        self.dicts
            .entry((addr(key), addr(value)))
            .or_insert_with(|| Arc::new(Type::Dict(key.clone(), value.clone())))
            .clone()
    }

    /// An unnamed `Tuple[elements...]`.
    pub fn tuple(&mut self, elements: Vec<TypeRef>) -> TypeRef {
        let key: Vec<usize> = elements.iter().map(addr).collect();
        self.tuples
            .entry(key)
            .or_insert_with(|| {
                Arc::new(Type::Tuple(TupleType {
                    elements,
                    names: None,
                }))
            })
            .clone()
    }

    /// `Union[members...]`.
    pub fn union(&mut self, members: Vec<TypeRef>) -> TypeRef {
        let key: Vec<usize> = members.iter().map(addr).collect();
        self.unions
            .entry(key)
            .or_insert_with(|| Arc::new(Type::Union(members)))
            .clone()
    }

    /// Interns a nominal type (class, enum, interface, named tuple) under its qualified name, so
    /// that a resolver returning a fresh `Arc` each time still compares equal. The first type
    /// registered under a name wins.
    pub fn nominal(&mut self, ty: TypeRef) -> TypeRef {
        let name = match &*ty {
            Type::Class(c) => c.name.clone(),
            Type::Enum(e) => e.name.clone(),
            Type::Interface(i) => i.name.clone(),
            Type::Tuple(TupleType { names: Some(n), .. }) => n.qualified_name.clone(),
            _ => return ty,
        };
        self.nominal.entry(name).or_insert(ty).clone()
    }

    /// The common type of two values in one container: the type itself when both agree,
    /// `Any` otherwise.
    pub fn unify(&self, a: &TypeRef, b: &TypeRef) -> TypeRef {
        if Arc::ptr_eq(a, b) {
            a.clone()
        } else {
            self.any.clone()
        }
    }

    /// The element type of a container whose items have the given types: their common type,
    /// or `Any` when they are mixed or there are none.
    pub fn common_type<'a>(&self, mut types: impl Iterator<Item = &'a TypeRef>) -> TypeRef {
        let Some(first) = types.next() else {
            return self.any.clone();
        };
        let mut acc = first.clone();
        for t in types {
            acc = self.unify(&acc, t);
            if Arc::ptr_eq(&acc, &self.any) {
                break;
            }
        }
        acc
    }
}

/// True when a value of type `actual` may be stored where `expected` is declared. Lenient where
/// loading cannot know better: a container inferred as holding `Any` (empty or mixed) fits any
/// container type of the same kind.
pub fn is_subtype(actual: &TypeRef, expected: &TypeRef) -> bool {
    if Arc::ptr_eq(actual, expected) {
        return true;
    }
    match (&**actual, &**expected) {
        (_, Type::Any) => true,
        (Type::Any, _) => true,
        (Type::NoneType, Type::Optional(_)) => true,
        (_, Type::Optional(inner)) => is_subtype(actual, inner),
        (_, Type::Union(members)) => members.iter().any(|m| is_subtype(actual, m)),
        (Type::Int | Type::Float | Type::Complex, Type::Number) => true,
        (Type::Tensor(_), Type::Tensor(_)) => true,
        (Type::Int, Type::Int)
        | (Type::Float, Type::Float)
        | (Type::Bool, Type::Bool)
        | (Type::Str, Type::Str)
        | (Type::Complex, Type::Complex)
        | (Type::Device, Type::Device)
        | (Type::NoneType, Type::NoneType) => true,
        (Type::List(a), Type::List(e)) => is_subtype(a, e),
        (Type::Future(a), Type::Future(e)) => is_subtype(a, e),
        (Type::Dict(ak, av), Type::Dict(ek, ev)) => is_subtype(ak, ek) && is_subtype(av, ev),
        (Type::Tuple(a), Type::Tuple(e)) => {
            a.elements.len() == e.elements.len()
                && a.elements
                    .iter()
                    .zip(&e.elements)
                    .all(|(x, y)| is_subtype(x, y))
        }
        (Type::Class(a), Type::Class(e)) => Arc::ptr_eq(a, e) || a.name == e.name,
        (Type::Enum(a), Type::Enum(e)) => Arc::ptr_eq(a, e) || a.name == e.name,
        _ => false,
    }
}

/// The type as TorchScript writes it in annotations (`List[int]`, `Dict[str, Tensor]`), for
/// error messages.
pub fn annotation_str(ty: &Type) -> String {
    let join = |ts: &[TypeRef]| {
        ts.iter()
            .map(|t| annotation_str(t))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match ty {
        Type::Any => "Any".into(),
        Type::Tensor(_) => "Tensor".into(),
        Type::Int | Type::SymInt | Type::ScalarType | Type::Layout | Type::MemoryFormat => {
            "int".into()
        }
        Type::Float | Type::SymFloat => "float".into(),
        Type::Bool | Type::SymBool => "bool".into(),
        Type::Complex => "complex".into(),
        Type::Str => "str".into(),
        Type::NoneType => "NoneType".into(),
        Type::Device => "Device".into(),
        Type::Number => "number".into(),
        Type::QScheme => "QScheme".into(),
        Type::Dimname => "Dimname".into(),
        Type::Generator => "Generator".into(),
        Type::Storage => "Storage".into(),
        Type::Stream => "Stream".into(),
        Type::Capsule => "Capsule".into(),
        Type::AnyList => "list".into(),
        Type::AnyTuple => "tuple".into(),
        Type::AnyClass => "AnyClassType".into(),
        Type::AnyEnum => "AnyEnumType".into(),
        Type::List(e) => format!("List[{}]", annotation_str(e)),
        Type::Tuple(t) => match &t.names {
            Some(n) => n.qualified_name.clone(),
            None if t.elements.is_empty() => "Tuple[()]".into(),
            None => format!("Tuple[{}]", join(&t.elements)),
        },
        Type::Optional(e) => format!("Optional[{}]", annotation_str(e)),
        Type::Union(ms) => format!("Union[{}]", join(ms)),
        Type::Dict(k, v) => format!("Dict[{}, {}]", annotation_str(k), annotation_str(v)),
        Type::Future(e) => format!("Future[{}]", annotation_str(e)),
        Type::RRef(e) => format!("RRef[{}]", annotation_str(e)),
        Type::Await(e) => format!("Await[{}]", annotation_str(e)),
        Type::Class(c) => c.name.clone(),
        Type::Interface(i) => i.name.clone(),
        Type::Enum(e) => e.name.clone(),
        Type::Function(f) => f.name.clone(),
        Type::Var(v) => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composite_types_are_interned() {
        let mut t = TypeTable::new();
        let int = t.int.clone();
        let a = t.list(&int);
        let b = t.list(&int);
        assert!(Arc::ptr_eq(&a, &b));
        let ta = t.tuple(vec![a.clone(), int.clone()]);
        let tb = t.tuple(vec![b, int.clone()]);
        assert!(Arc::ptr_eq(&ta, &tb));
        assert_eq!(annotation_str(&ta), "Tuple[List[int], int]");
        let d = t.dict(&t.str_.clone(), &t.tensor.clone());
        assert_eq!(annotation_str(&d), "Dict[str, Tensor]");
        let empty = t.tuple(vec![]);
        assert_eq!(annotation_str(&empty), "Tuple[()]");
    }

    #[test]
    fn common_type_falls_back_to_any() {
        let t = TypeTable::new();
        let same = [t.int.clone(), t.int.clone()];
        assert!(Arc::ptr_eq(&t.common_type(same.iter()), &t.int));
        let mixed = [t.int.clone(), t.float.clone()];
        assert!(Arc::ptr_eq(&t.common_type(mixed.iter()), &t.any));
        assert!(Arc::ptr_eq(&t.common_type([].iter()), &t.any));
    }

    #[test]
    fn subtyping() {
        let mut t = TypeTable::new();
        let int = t.int.clone();
        let opt = t.optional(&int);
        assert!(is_subtype(&t.none, &opt));
        assert!(is_subtype(&int, &opt));
        assert!(!is_subtype(&t.float, &opt));
        let any_list = t.list(&t.any.clone());
        let int_list = t.list(&int);
        assert!(is_subtype(&any_list, &int_list));
        assert!(!is_subtype(&t.list(&t.str_.clone()), &int_list));
        assert!(is_subtype(&int, &t.number));
        assert!(Arc::ptr_eq(&t.optional(&opt), &opt));
    }
}
