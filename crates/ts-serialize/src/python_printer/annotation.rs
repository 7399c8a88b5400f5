//! Type annotations as printed source spells them.

use ts_core::Type;

/// The annotation of `t` in printed source: `Type::annotation_str`, except that a tuple type
/// that only carries field names (an operator's return such as `cummax`'s, which the IR text
/// writes as `NamedTuple(values : Tensor, indices : Tensor)`) has no class to name and is
/// spelled `Tuple[...]`, as PyTorch does.
pub fn annotation(t: &Type) -> String {
    let join = |ts: &[ts_core::TypeRef]| {
        ts.iter()
            .map(|e| annotation(e))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match t {
        Type::Tuple(tt) => match &tt.names {
            Some(info) if info.qualified_name != "NamedTuple" => info.qualified_name.clone(),
            _ if tt.elements.is_empty() => "Tuple[()]".to_string(),
            _ => format!("Tuple[{}]", join(&tt.elements)),
        },
        Type::List(e) => format!("List[{}]", annotation(e)),
        Type::Optional(e) => format!("Optional[{}]", annotation(e)),
        Type::Future(e) => format!("Future[{}]", annotation(e)),
        Type::RRef(e) => format!("RRef[{}]", annotation(e)),
        Type::Await(e) => format!("Await[{}]", annotation(e)),
        Type::Dict(k, v) => format!("Dict[{}, {}]", annotation(k), annotation(v)),
        Type::Union(ms) => format!("Union[{}]", join(ms)),
        _ => t.annotation_str(),
    }
}

/// True for a named tuple with a class name (printed as that name, constructed as
/// `Name(...)`).
pub fn is_named_tuple_class(t: &Type) -> bool {
    matches!(t, Type::Tuple(tt) if tt.names.as_ref().is_some_and(|i| i.qualified_name != "NamedTuple"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anonymous_named_tuples_print_as_tuples() {
        let fields = vec!["values".to_string(), "indices".to_string()];
        let elems = vec![Type::tensor(), Type::tensor()];
        let anon = Type::named_tuple("NamedTuple", fields.clone(), elems.clone());
        assert_eq!(
            annotation(&Type::list(anon.clone())),
            "List[Tuple[Tensor, Tensor]]"
        );
        assert!(!is_named_tuple_class(&anon));
        let named = Type::named_tuple("__torch__.P", fields, elems);
        assert_eq!(
            annotation(&Type::optional(named.clone())),
            "Optional[__torch__.P]"
        );
        assert!(is_named_tuple_class(&named));
    }
}
