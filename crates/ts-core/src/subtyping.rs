//! Subtyping and unification of types (PyTorch's `isSubtypeOf` and `unifyTypes`).

use std::sync::Arc;

use crate::types::{Type, TypeRef};

impl Type {
    /// True when a value of type `self` can be used where `other` is expected.
    pub fn is_subtype_of(&self, other: &Type) -> bool {
        use Type::*;
        if self == other {
            return true;
        }
        match (self, other) {
            (_, Any) => true,
            (NoneType, Optional(_)) => true,
            (Optional(a), Optional(b)) => a.is_subtype_of(b) || a.is_subtype_of(other),
            // A union is a subtype when each member is: `Union[int, str, None]` is an
            // `Optional[Union[int, str]]` (PyTorch flattens the nested union).
            (Union(ms), _) => ms.iter().all(|m| m.is_subtype_of(other)),
            (Optional(a), Union(_)) => NoneType.is_subtype_of(other) && a.is_subtype_of(other),
            (_, Optional(b)) => self.is_subtype_of(b),
            (_, Union(ms)) => ms.iter().any(|m| self.is_subtype_of(m)),
            (Int | SymInt | Float | SymFloat | Complex, Number) => true,
            // Schema-only aliases of `int` (what `torch.result_type` returns) are ints to
            // programs, as in PyTorch, where the schema parser makes them `int`.
            (ScalarType | Layout | MemoryFormat, Int) => true,
            (Tensor(a), Tensor(b)) => a.refines(b),
            (List(_), AnyList) => true,
            (List(a), List(b)) => {
                // Lists are invariant, except that a list of refined tensors is a list of tensors.
                a == b || (a.is_tensor() && matches!(&**b, Tensor(t) if t.is_unspecialized()))
            }
            (Tuple(_), AnyTuple) => true,
            (Tuple(a), Tuple(b)) => {
                if let Some(bn) = &b.names {
                    match &a.names {
                        Some(an) if an.fields == bn.fields => {}
                        _ => return false,
                    }
                }
                a.elements.len() == b.elements.len()
                    && a.elements
                        .iter()
                        .zip(&b.elements)
                        .all(|(x, y)| x.is_subtype_of(y))
            }
            (Future(a), Future(b)) | (Await(a), Await(b)) | (RRef(a), RRef(b)) => {
                a.is_subtype_of(b)
            }
            (Class(_), AnyClass) => true,
            (Class(c), Interface(i)) => {
                let schemas = i.methods.read();
                schemas.iter().all(|s| {
                    c.find_method(&s.name).is_some_and(|m| {
                        let ms = m.schema();
                        ms.arguments.len() == s.arguments.len()
                            && ms.returns.len() == s.returns.len()
                            && ms
                                .arguments
                                .iter()
                                .zip(&s.arguments)
                                .skip(1)
                                .all(|(x, y)| y.ty.is_subtype_of(&x.ty))
                            && ms
                                .returns
                                .iter()
                                .zip(&s.returns)
                                .all(|(x, y)| x.ty.is_subtype_of(&y.ty))
                    })
                })
            }
            (Enum(_), AnyEnum) => true,
            _ => false,
        }
    }
}

/// The least common supertype PyTorch picks when two control-flow paths meet, or `None` when
/// the types cannot be unified (e.g. `int` and `float`). With `default_to_union`, unrelated
/// types unify to `Union[a, b]`.
pub fn unify_types(a: &TypeRef, b: &TypeRef, default_to_union: bool) -> Option<TypeRef> {
    if let Some(t) = unify_impl(a, b) {
        return Some(t);
    }
    if default_to_union {
        return Some(Type::union(vec![a.clone(), b.clone()]));
    }
    None
}

fn unify_impl(a: &TypeRef, b: &TypeRef) -> Option<TypeRef> {
    use Type::*;
    if a.is_subtype_of(b) {
        return Some(b.clone());
    }
    if b.is_subtype_of(a) {
        return Some(a.clone());
    }
    match (&**a, &**b) {
        (Tensor(x), Tensor(y)) => Some(Arc::new(Tensor(x.merge(y)))),
        (NoneType, _) if !b.is_none_type() => Some(Type::optional(b.clone())),
        (_, NoneType) if !a.is_none_type() => Some(Type::optional(a.clone())),
        (Optional(x), Optional(y)) => unify_impl(x, y).map(Type::optional),
        (Optional(x), _) => unify_impl(x, b).map(Type::optional),
        (_, Optional(y)) => unify_impl(a, y).map(Type::optional),
        (List(x), List(y)) => {
            // Lists are invariant, but two lists of tensors unify to a list of tensors.
            if x.is_tensor() && y.is_tensor() {
                Some(Type::tensor_list())
            } else {
                None
            }
        }
        (Tuple(x), Tuple(y))
            if x.elements.len() == y.elements.len() && x.names.is_none() && y.names.is_none() =>
        {
            let elems: Option<Vec<TypeRef>> = x
                .elements
                .iter()
                .zip(&y.elements)
                .map(|(p, q)| unify_impl(p, q))
                .collect();
            elems.map(Type::tuple)
        }
        (Future(x), Future(y)) => unify_impl(x, y).map(Type::future),
        (Dict(xk, xv), Dict(yk, yv)) if xk == yk => {
            if xv.is_tensor() && yv.is_tensor() {
                Some(Type::dict(xk.clone(), Type::tensor()))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Unifies a whole list (e.g. list-literal elements), left to right.
pub fn unify_type_list(types: &[TypeRef], default_to_union: bool) -> Option<TypeRef> {
    let mut it = types.iter();
    let mut acc = it.next()?.clone();
    for t in it {
        acc = unify_types(&acc, t, default_to_union)?;
    }
    Some(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TensorType;
    use ts_tensor::DType;

    #[test]
    fn subtype_table() {
        let cases: Vec<(TypeRef, TypeRef, bool)> = vec![
            (Type::none(), Type::optional(Type::int()), true),
            (Type::int(), Type::optional(Type::int()), true),
            (Type::float(), Type::optional(Type::int()), false),
            (Type::int(), Type::number(), true),
            (Type::float(), Type::number(), true),
            (Type::bool(), Type::number(), false),
            (Type::int_list(), Type::any_list(), true),
            (Type::int_list(), Type::float_list(), false),
            (Type::tensor_of(DType::Float32), Type::tensor(), true),
            (Type::tensor(), Type::tensor_of(DType::Float32), false),
            (Type::int(), Type::any(), true),
            (
                Type::tuple(vec![Type::int(), Type::none()]),
                Type::tuple(vec![Type::int(), Type::optional(Type::int())]),
                true,
            ),
            (
                Type::int(),
                Type::union(vec![Type::int(), Type::string()]),
                true,
            ),
            (
                Type::union(vec![Type::int(), Type::string()]),
                Type::any(),
                true,
            ),
            (Type::sym_int(), Type::int(), true),
            // `Optional[Union[int, str]]` holds the same values as `Union[int, str, None]`.
            (
                Type::union(vec![Type::int(), Type::string(), Type::none()]),
                Arc::new(Type::Optional(Type::union(vec![
                    Type::int(),
                    Type::string(),
                ]))),
                true,
            ),
            (
                Arc::new(Type::Optional(Type::union(vec![
                    Type::int(),
                    Type::string(),
                ]))),
                Type::union(vec![Type::string(), Type::none(), Type::int()]),
                true,
            ),
            (
                Type::union(vec![Type::int(), Type::float(), Type::none()]),
                Arc::new(Type::Optional(Type::union(vec![
                    Type::int(),
                    Type::string(),
                ]))),
                false,
            ),
        ];
        for (a, b, expect) in cases {
            assert_eq!(a.is_subtype_of(&b), expect, "{a} <: {b}");
        }
    }

    #[test]
    fn unify_table() {
        let u = |a: TypeRef, b: TypeRef| unify_types(&a, &b, false).map(|t| t.to_string());
        assert_eq!(u(Type::int(), Type::none()), Some("int?".into()));
        assert_eq!(u(Type::none(), Type::tensor()), Some("Tensor?".into()));
        assert_eq!(u(Type::int(), Type::float()), None);
        assert_eq!(
            u(
                Type::tensor_of(DType::Float32),
                Type::tensor_of(DType::Int64)
            ),
            Some("Tensor".into())
        );
        assert_eq!(
            u(
                Type::tuple(vec![Type::int(), Type::none()]),
                Type::tuple(vec![Type::none(), Type::tensor()])
            ),
            Some("(int?, Tensor?)".into())
        );
        assert_eq!(
            unify_types(&Type::int(), &Type::string(), true).map(|t| t.to_string()),
            Some("Union(int, str)".into())
        );
        let t = TensorType {
            dtype: Some(DType::Float32),
            ..Default::default()
        };
        assert!(t.refines(&TensorType::default()));
    }
}
