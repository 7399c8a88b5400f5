//! Binding a call's positional and keyword arguments to a function's schema, as Python calls
//! of scripted functions do.

use ts_core::FunctionSchema;

use crate::error::{Error, ErrorKind, Result};
use crate::ivalue::IValue;

/// Converts `args` and `kwargs` to the values the function receives (declared types, defaults
/// filled). `skip_self` leaves out a method's `self`.
pub(crate) fn bind(
    schema: &FunctionSchema,
    args: Vec<IValue>,
    kwargs: &[(&str, IValue)],
    skip_self: bool,
) -> Result<Vec<ts_core::IValue>> {
    let args: Vec<ts_core::IValue> = args.into_iter().map(IValue::into_core).collect();
    if kwargs.is_empty() {
        return ts_runtime::bind_arguments(schema, args, skip_self).map_err(Error::argument);
    }
    let params = if skip_self && !schema.arguments.is_empty() {
        &schema.arguments[1..]
    } else {
        &schema.arguments[..]
    };
    if args.len() > params.len() {
        return ts_runtime::bind_arguments(schema, args, skip_self).map_err(Error::argument);
    }
    let mut slots: Vec<Option<ts_core::IValue>> = args.into_iter().map(Some).collect();
    slots.resize(params.len(), None);
    for (k, v) in kwargs {
        let i = params.iter().position(|p| p.name == *k).ok_or_else(|| {
            Error::new(
                ErrorKind::Argument,
                format!("{}() got an unexpected keyword argument '{k}'", schema.name),
            )
        })?;
        if slots[i].is_some() {
            return Err(Error::new(
                ErrorKind::Argument,
                format!("{}() got multiple values for argument '{k}'", schema.name),
            ));
        }
        slots[i] = Some(v.clone().into_core());
    }
    let mut full = Vec::with_capacity(params.len());
    for (p, s) in params.iter().zip(slots) {
        match s.or_else(|| p.default.clone()) {
            Some(v) => full.push(v),
            None => {
                return Err(Error::new(
                    ErrorKind::Argument,
                    format!(
                        "{}() is missing value for argument '{}'. Declaration: {schema}",
                        schema.name, p.name
                    ),
                ))
            }
        }
    }
    ts_runtime::bind_arguments(schema, full, skip_self).map_err(Error::argument)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_fill_their_parameters() {
        let s = FunctionSchema::parse("f(int a, int b=2, int c=3) -> int").unwrap();
        let out = bind(&s, vec![IValue::Int(1)], &[("c", IValue::Int(9))], false).unwrap();
        let ints: Vec<i64> = out.iter().map(|v| v.as_int().unwrap()).collect();
        assert_eq!(ints, vec![1, 2, 9]);
        let e = bind(&s, vec![IValue::Int(1)], &[("d", IValue::Int(9))], false).unwrap_err();
        assert!(e.message().contains("unexpected keyword argument 'd'"));
        let e = bind(&s, vec![IValue::Int(1)], &[("a", IValue::Int(9))], false).unwrap_err();
        assert!(e.message().contains("multiple values"));
        let e = bind(&s, vec![], &[("b", IValue::Int(9))], false).unwrap_err();
        assert!(e.message().contains("missing value for argument 'a'"));
    }
}
