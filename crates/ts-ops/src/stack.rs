//! Popping typed arguments off the stack with clear errors.

use std::sync::Arc;

use ts_core::{Dict, IValue, List, Object, Tuple};
use ts_tensor::{DType, Device, Error, Scalar, Tensor};

use crate::registry::Stack;

fn wrong(expected: &str, got: &IValue) -> Error {
    Error::runtime(format!(
        "Expected a value of type '{expected}' but got '{}'",
        got.tag_name()
    ))
}

/// Pops any value.
pub fn pop(s: &mut Stack) -> Result<IValue, Error> {
    s.pop()
        .ok_or_else(|| Error::runtime("internal error: the interpreter stack is empty"))
}

/// Pops `n` values, in push order.
pub fn pop_n(s: &mut Stack, n: usize) -> Result<Vec<IValue>, Error> {
    if s.len() < n {
        return Err(Error::runtime(
            "internal error: the interpreter stack has too few values",
        ));
    }
    Ok(s.split_off(s.len() - n))
}

/// Pops an int (bools are accepted as 0/1).
pub fn pop_int(s: &mut Stack) -> Result<i64, Error> {
    match pop(s)? {
        IValue::Int(i) => Ok(i),
        IValue::Bool(b) => Ok(b as i64),
        v => Err(wrong("int", &v)),
    }
}

/// Pops a float (ints are converted, as schemas with `float` accept them after conversion).
pub fn pop_float(s: &mut Stack) -> Result<f64, Error> {
    match pop(s)? {
        IValue::Double(d) => Ok(d),
        IValue::Int(i) => Ok(i as f64),
        IValue::Bool(b) => Ok(b as i64 as f64),
        v => Err(wrong("float", &v)),
    }
}

/// Pops a bool.
pub fn pop_bool(s: &mut Stack) -> Result<bool, Error> {
    match pop(s)? {
        IValue::Bool(b) => Ok(b),
        IValue::Int(i) => Ok(i != 0),
        v => Err(wrong("bool", &v)),
    }
}

/// Pops a Python number.
pub fn pop_scalar(s: &mut Stack) -> Result<Scalar, Error> {
    let v = pop(s)?;
    v.as_scalar().ok_or_else(|| wrong("Scalar", &v))
}

/// Pops a string.
pub fn pop_str(s: &mut Stack) -> Result<Arc<String>, Error> {
    match pop(s)? {
        IValue::String(x) => Ok(x),
        v => Err(wrong("str", &v)),
    }
}

/// Pops a tensor.
pub fn pop_tensor(s: &mut Stack) -> Result<Tensor, Error> {
    match pop(s)? {
        IValue::Tensor(t) => Ok(t),
        v => Err(wrong("Tensor", &v)),
    }
}

/// Pops an optional tensor.
pub fn pop_opt_tensor(s: &mut Stack) -> Result<Option<Tensor>, Error> {
    match pop(s)? {
        IValue::Tensor(t) => Ok(Some(t)),
        IValue::None => Ok(None),
        v => Err(wrong("Optional[Tensor]", &v)),
    }
}

/// Pops an optional int.
pub fn pop_opt_int(s: &mut Stack) -> Result<Option<i64>, Error> {
    match pop(s)? {
        IValue::None => Ok(None),
        IValue::Int(i) => Ok(Some(i)),
        IValue::Bool(b) => Ok(Some(b as i64)),
        v => Err(wrong("Optional[int]", &v)),
    }
}

/// Pops an optional float.
pub fn pop_opt_float(s: &mut Stack) -> Result<Option<f64>, Error> {
    match pop(s)? {
        IValue::None => Ok(None),
        IValue::Double(d) => Ok(Some(d)),
        IValue::Int(i) => Ok(Some(i as f64)),
        v => Err(wrong("Optional[float]", &v)),
    }
}

/// Pops an optional Python number.
pub fn pop_opt_scalar(s: &mut Stack) -> Result<Option<Scalar>, Error> {
    let v = pop(s)?;
    if v.is_none() {
        return Ok(None);
    }
    v.as_scalar()
        .map(Some)
        .ok_or_else(|| wrong("Optional[Scalar]", &v))
}

/// Pops an optional string.
pub fn pop_opt_str(s: &mut Stack) -> Result<Option<Arc<String>>, Error> {
    match pop(s)? {
        IValue::None => Ok(None),
        IValue::String(x) => Ok(Some(x)),
        v => Err(wrong("Optional[str]", &v)),
    }
}

/// Pops a list.
pub fn pop_list(s: &mut Stack) -> Result<Arc<List>, Error> {
    match pop(s)? {
        IValue::List(l) => Ok(l),
        v => Err(wrong("List", &v)),
    }
}

/// Pops an `int[]` (a single int is broadcast to a one-element list).
pub fn pop_int_list(s: &mut Stack) -> Result<Vec<i64>, Error> {
    match pop(s)? {
        IValue::List(l) => l
            .items
            .read()
            .iter()
            .map(|v| v.as_int().ok_or_else(|| wrong("int", v)))
            .collect(),
        IValue::Int(i) => Ok(vec![i]),
        v => Err(wrong("List[int]", &v)),
    }
}

/// Pops an optional `int[]`.
pub fn pop_opt_int_list(s: &mut Stack) -> Result<Option<Vec<i64>>, Error> {
    if matches!(s.last(), Some(IValue::None)) {
        s.pop();
        return Ok(None);
    }
    pop_int_list(s).map(Some)
}

/// Pops a `float[]`.
pub fn pop_float_list(s: &mut Stack) -> Result<Vec<f64>, Error> {
    match pop(s)? {
        IValue::List(l) => l
            .items
            .read()
            .iter()
            .map(|v| match v {
                IValue::Double(d) => Ok(*d),
                IValue::Int(i) => Ok(*i as f64),
                other => Err(wrong("float", other)),
            })
            .collect(),
        v => Err(wrong("List[float]", &v)),
    }
}

/// Pops a `Tensor[]`.
pub fn pop_tensor_list(s: &mut Stack) -> Result<Vec<Tensor>, Error> {
    match pop(s)? {
        IValue::List(l) => l
            .items
            .read()
            .iter()
            .map(|v| v.as_tensor().cloned().ok_or_else(|| wrong("Tensor", v)))
            .collect(),
        IValue::Tuple(t) => t
            .elements
            .iter()
            .map(|v| v.as_tensor().cloned().ok_or_else(|| wrong("Tensor", v)))
            .collect(),
        v => Err(wrong("List[Tensor]", &v)),
    }
}

/// Pops a `Tensor?[]`.
pub fn pop_opt_tensor_list(s: &mut Stack) -> Result<Vec<Option<Tensor>>, Error> {
    match pop(s)? {
        IValue::List(l) => l
            .items
            .read()
            .iter()
            .map(|v| match v {
                IValue::None => Ok(None),
                IValue::Tensor(t) => Ok(Some(t.clone())),
                other => Err(wrong("Optional[Tensor]", other)),
            })
            .collect(),
        v => Err(wrong("List[Optional[Tensor]]", &v)),
    }
}

/// Pops a tuple.
pub fn pop_tuple(s: &mut Stack) -> Result<Arc<Tuple>, Error> {
    match pop(s)? {
        IValue::Tuple(t) => Ok(t),
        v => Err(wrong("Tuple", &v)),
    }
}

/// Pops a dict.
pub fn pop_dict(s: &mut Stack) -> Result<Arc<Dict>, Error> {
    match pop(s)? {
        IValue::Dict(d) => Ok(d),
        v => Err(wrong("Dict", &v)),
    }
}

/// Pops an object.
pub fn pop_object(s: &mut Stack) -> Result<Arc<Object>, Error> {
    match pop(s)? {
        IValue::Object(o) => Ok(o),
        v => Err(wrong("Object", &v)),
    }
}

/// Pops an optional dtype (`ScalarType?`, an int).
pub fn pop_opt_dtype(s: &mut Stack) -> Result<Option<DType>, Error> {
    match pop_opt_int(s)? {
        None => Ok(None),
        Some(i) => DType::from_scalar_type_index(i)
            .map(Some)
            .ok_or_else(|| Error::runtime(format!("unsupported dtype (ScalarType {i})"))),
    }
}

/// Pops a dtype.
pub fn pop_dtype(s: &mut Stack) -> Result<DType, Error> {
    let i = pop_int(s)?;
    DType::from_scalar_type_index(i)
        .ok_or_else(|| Error::runtime(format!("unsupported dtype (ScalarType {i})")))
}

/// Pops an optional device (`Device?`, also accepting a string).
pub fn pop_opt_device(s: &mut Stack) -> Result<Option<Device>, Error> {
    match pop(s)? {
        IValue::None => Ok(None),
        IValue::Device(d) => Ok(Some(d)),
        IValue::String(x) => Device::parse(&x).map(Some).ok_or_else(|| {
            Error::runtime(format!(
                "Expected one of cpu, cuda device type at start of device string: {x}"
            ))
        }),
        v => Err(wrong("Optional[Device]", &v)),
    }
}

/// Pushes a value.
pub fn push(s: &mut Stack, v: impl Into<IValue>) {
    s.push(v.into());
}
