//! Binding host values to a function's declared parameters, as PyTorch does when Python calls a
//! scripted function: each value is converted to the parameter's type (lists and dicts are
//! rebuilt with the declared element types, ints widen to float), missing trailing arguments
//! take their defaults, and a value of the wrong type is a clear error naming the parameter.

use ts_core::{FunctionSchema, IValue, Type, TypeRef};
use ts_tensor::{Error, Result};

/// Converts `args` (positional) to the parameters of `schema`, filling defaults.
///
/// `skip_self` leaves the first schema argument (a method's `self`) out of the binding.
pub fn bind_arguments(
    schema: &FunctionSchema,
    args: Vec<IValue>,
    skip_self: bool,
) -> Result<Vec<IValue>> {
    let params = if skip_self && !schema.arguments.is_empty() {
        &schema.arguments[1..]
    } else {
        &schema.arguments[..]
    };
    if args.len() > params.len() {
        return Err(Error::runtime(format!(
            "{}() expected at most {} argument(s) but received {} argument(s). Declaration: {}",
            schema.name,
            params.len(),
            args.len(),
            schema
        )));
    }
    let mut out = Vec::with_capacity(params.len());
    let mut args = args.into_iter();
    for p in params {
        let v = match args.next() {
            Some(v) => {
                let found = describe_type(&v);
                coerce(v, &p.ty).ok_or_else(|| {
                    Error::runtime(format!(
                        "{}() Expected a value of type '{}' for argument '{}' but instead found type '{}'.",
                        schema.name,
                        p.ty.annotation_str(),
                        p.name,
                        found
                    ))
                })?
            }
            None => p.default.clone().ok_or_else(|| {
                Error::runtime(format!(
                    "{}() is missing value for argument '{}'. Declaration: {}",
                    schema.name, p.name, schema
                ))
            })?,
        };
        out.push(v);
    }
    Ok(out)
}

/// Converts a host value to `ty`, or `None` when it is not a value of that type.
///
/// Containers are rebuilt so that their runtime element types are the declared ones (an
/// unpickled `[1, 2]` becomes a `List[int]`).
pub fn coerce(v: IValue, ty: &TypeRef) -> Option<IValue> {
    match &**ty {
        Type::Any => Some(v),
        Type::Optional(inner) => {
            if matches!(v, IValue::None) {
                Some(v)
            } else {
                coerce(v, inner)
            }
        }
        Type::Union(members) => members.iter().find_map(|m| coerce(v.clone(), m)),
        Type::Float | Type::SymFloat => match v {
            IValue::Double(_) => Some(v),
            IValue::Int(i) => Some(IValue::Double(i as f64)),
            _ => None,
        },
        Type::Number => match v {
            IValue::Double(_) | IValue::Int(_) | IValue::Bool(_) | IValue::Complex(_) => Some(v),
            _ => None,
        },
        Type::List(elem) => {
            let items = match &v {
                IValue::List(l) => l.items.read().clone(),
                IValue::Tuple(t) => t.elements.clone(),
                _ => return None,
            };
            let items = items
                .into_iter()
                .map(|x| coerce(x, elem))
                .collect::<Option<Vec<_>>>()?;
            Some(IValue::list(elem.clone(), items))
        }
        Type::Tuple(tt) => {
            let elems = match &v {
                IValue::Tuple(t) => t.elements.clone(),
                IValue::List(l) => l.items.read().clone(),
                _ => return None,
            };
            if elems.len() != tt.elements.len() {
                return None;
            }
            let elems = elems
                .into_iter()
                .zip(&tt.elements)
                .map(|(x, t)| coerce(x, t))
                .collect::<Option<Vec<_>>>()?;
            Some(if tt.names.is_some() {
                IValue::named_tuple(ty.clone(), elems)
            } else {
                IValue::tuple(elems)
            })
        }
        Type::Dict(k, val) => {
            let d = v.as_dict()?;
            let entries = d
                .entries
                .read()
                .iter()
                .map(|(key, x)| Some((coerce(key.0.clone(), k)?, coerce(x.clone(), val)?)))
                .collect::<Option<Vec<_>>>()?;
            Some(IValue::dict(k.clone(), val.clone(), entries))
        }
        _ => {
            if v.is_instance_of(ty) {
                Some(v)
            } else {
                None
            }
        }
    }
}

/// Describes the runtime type of `v` for error messages.
pub fn describe_type(v: &IValue) -> String {
    v.type_of().annotation_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_take_the_declared_element_type() {
        let v = IValue::list(Type::any(), vec![IValue::Int(1), IValue::Int(2)]);
        let c = coerce(v, &Type::float_list()).unwrap();
        let l = c.as_list().unwrap();
        assert_eq!(*l.elem_type, Type::Float);
        assert!(matches!(l.items.read()[0], IValue::Double(x) if x == 1.0));
        assert!(coerce(IValue::str("a"), &Type::int_list()).is_none());
        assert!(coerce(IValue::None, &Type::optional(Type::int())).is_some());
        assert!(coerce(IValue::Bool(true), &Type::int()).is_none());
    }

    #[test]
    fn binding_fills_defaults_and_names_bad_arguments() {
        let s = ts_core::FunctionSchema::parse("f(int a, float b=2.5) -> float").unwrap();
        let out = bind_arguments(&s, vec![IValue::Int(1)], false).unwrap();
        assert!(matches!(out[1], IValue::Double(x) if x == 2.5));
        let e = bind_arguments(&s, vec![IValue::str("x")], false).unwrap_err();
        assert!(e.message.contains("argument 'a'"), "{}", e.message);
        let e = bind_arguments(&s, vec![], false).unwrap_err();
        assert!(e.message.contains("missing value for argument 'a'"));
    }
}
