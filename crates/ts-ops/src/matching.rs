//! Matching actual argument types against schema types, with type-variable binding.

use std::collections::HashMap;

use ts_core::{FunctionSchema, Type, TypeRef};
use ts_ir::{Graph, NodeId};

/// Type-variable bindings made while matching one schema.
pub type Bindings = HashMap<String, TypeRef>;

/// True when a value of type `actual` can be passed where `formal` is declared.
pub fn type_matches(actual: &TypeRef, formal: &TypeRef, b: &mut Bindings) -> bool {
    use Type::*;
    match (&**actual, &**formal) {
        (_, Any) => true,
        // A union matches when each member does (`Union[str, bool]` is a `Union[str, bool]`).
        (Union(ms), f) if !matches!(f, Var(_)) => ms.iter().all(|m| type_matches(m, formal, b)),
        (_, Var(name)) => match b.get(name).cloned() {
            Some(bound) => {
                if actual.is_subtype_of(&bound) {
                    true
                } else if let Some(u) = ts_core::unify_types(&bound, actual, false) {
                    b.insert(name.clone(), u);
                    true
                } else {
                    false
                }
            }
            None => {
                b.insert(name.clone(), actual.clone());
                true
            }
        },
        (Int | SymInt | Float | SymFloat | Bool | SymBool | Complex | Number, Number) => true,
        (Int | SymInt, ScalarType | Layout | MemoryFormat | QScheme) => true,
        (NoneType, Optional(_)) => true,
        (Optional(a), Optional(f)) => type_matches(a, f, b),
        (_, Optional(f)) => type_matches(actual, f, b),
        (List(a), List(f)) => {
            if a.is_tensor() && f.is_tensor() {
                return true;
            }
            if let (Optional(ae), Optional(fe)) = (&**a, &**f) {
                if ae.is_tensor() && fe.is_tensor() {
                    return true;
                }
            }
            match &**f {
                Var(_) => type_matches(a, f, b),
                // `(str, tVal)[]` takes `List[Tuple[str, int]]`, binding tVal.
                Tuple(_) if f.has_free_variables() => type_matches(a, f, b),
                _ => **a == **f || (matches!(&**f, Optional(_)) && type_matches(a, f, b)),
            }
        }
        (Tuple(a), Tuple(f)) => {
            a.elements.len() == f.elements.len()
                && a.elements
                    .iter()
                    .zip(&f.elements)
                    .all(|(x, y)| type_matches(x, y, b))
        }
        (Dict(ak, av), Dict(fk, fv)) => type_matches(ak, fk, b) && type_matches(av, fv, b),
        (Future(a), Future(f)) => type_matches(a, f, b),
        (Optional(a), Union(_)) => {
            type_matches(&Type::none(), formal, b) && type_matches(a, formal, b)
        }
        (_, Union(ms)) => ms.iter().any(|m| type_matches(actual, m, &mut b.clone())),
        (Tensor(_), Tensor(_)) => true,
        _ => actual.is_subtype_of(formal),
    }
}

/// Substitutes bound type variables in `t`.
pub fn substitute(t: &TypeRef, b: &Bindings) -> TypeRef {
    use Type::*;
    match &**t {
        Var(n) => b.get(n).cloned().unwrap_or_else(|| t.clone()),
        List(e) => Type::list(substitute(e, b)),
        Optional(e) => Type::optional(substitute(e, b)),
        Future(e) => Type::future(substitute(e, b)),
        Dict(k, v) => Type::dict(substitute(k, b), substitute(v, b)),
        Tuple(tt) if tt.names.is_none() => {
            Type::tuple(tt.elements.iter().map(|e| substitute(e, b)).collect())
        }
        _ => t.clone(),
    }
}

/// True when node `n`'s inputs match `schema` (count and types) and its output count fits.
pub fn node_matches_schema(g: &Graph, n: NodeId, schema: &FunctionSchema) -> bool {
    let node = g.node(n);
    let inputs = node.inputs();
    let nargs = schema.arguments.len();
    if schema.is_vararg {
        if inputs.len() < nargs {
            return false;
        }
    } else if inputs.len() != nargs {
        return false;
    }
    if !schema.is_varret && node.outputs().len() != schema.returns.len() {
        return false;
    }
    let mut b = Bindings::new();
    inputs
        .iter()
        .zip(&schema.arguments)
        .all(|(&v, arg)| type_matches(g.value(v).ty(), &arg.ty, &mut b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_with_type_variables() {
        let mut b = Bindings::new();
        let formal = ts_core::parse_type("t[]").unwrap();
        assert!(type_matches(&Type::int_list(), &formal, &mut b));
        assert_eq!(b["t"].to_string(), "int");
        let t = ts_core::parse_type("t").unwrap();
        assert!(!type_matches(&Type::string(), &t, &mut b));
        assert!(type_matches(
            &Type::int(),
            &Type::number(),
            &mut Bindings::new()
        ));
        assert!(type_matches(
            &Type::none(),
            &Type::optional(Type::tensor()),
            &mut Bindings::new()
        ));
        assert!(!type_matches(
            &Type::float(),
            &Type::int(),
            &mut Bindings::new()
        ));
        assert!(type_matches(
            &Type::int(),
            &Type::scalar_type(),
            &mut Bindings::new()
        ));
        assert_eq!(substitute(&formal, &b).to_string(), "int[]");
    }

    #[test]
    fn a_union_matches_itself_and_wider_unions() {
        let u = ts_core::parse_type("Union(str, bool)").unwrap();
        assert!(type_matches(&u, &u, &mut Bindings::new()));
        let tl = ts_core::parse_type("Union(Tensor, Tensor[])").unwrap();
        assert!(type_matches(&tl, &tl, &mut Bindings::new()));
        let wider = ts_core::parse_type("Union(str, bool, int)").unwrap();
        assert!(type_matches(&u, &wider, &mut Bindings::new()));
        assert!(!type_matches(&wider, &u, &mut Bindings::new()));
        let opt = Type::optional(Type::int());
        let with_none = ts_core::parse_type("Union(int, str, NoneType)").unwrap();
        assert!(type_matches(&opt, &with_none, &mut Bindings::new()));
        assert!(!type_matches(&opt, &wider, &mut Bindings::new()));
    }
}
