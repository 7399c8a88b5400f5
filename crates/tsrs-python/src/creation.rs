//! `tsrs.tensor(data)`: tensors from nested Python lists and numbers (and copies of arrays).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyTuple};
use ts_tensor::{DType, Tensor};

use crate::errors::from_tensor;
use crate::tensor::PyTensor;

#[derive(Default)]
struct Flat {
    floats: Vec<f64>,
    /// The same values as ints (exact for int64 beyond 2^53), used when none is a float.
    ints: Vec<i64>,
    any_float: bool,
    all_bool: bool,
}

fn walk(
    obj: &Bound<'_, PyAny>,
    depth: usize,
    shape: &mut Vec<i64>,
    flat: &mut Flat,
) -> PyResult<()> {
    if depth > 64 {
        return Err(PyValueError::new_err("nested too deeply"));
    }
    let seq: Option<Vec<Bound<'_, PyAny>>> = if let Ok(l) = obj.cast::<PyList>() {
        Some(l.iter().collect())
    } else if let Ok(t) = obj.cast::<PyTuple>() {
        Some(t.iter().collect())
    } else {
        None
    };
    match seq {
        Some(items) => {
            if shape.len() == depth {
                shape.push(items.len() as i64);
            } else if shape.get(depth) != Some(&(items.len() as i64)) || shape.len() < depth {
                return Err(PyValueError::new_err(format!(
                    "expected sequence of length {} at dim {depth} (got {})",
                    shape.get(depth).copied().unwrap_or(0),
                    items.len()
                )));
            }
            for x in &items {
                walk(x, depth + 1, shape, flat)?;
            }
        }
        None => {
            if depth != shape.len() {
                return Err(PyValueError::new_err("ragged nested sequence"));
            }
            if obj.is_instance_of::<PyBool>() {
                let b = obj.extract::<bool>()? as i64;
                flat.floats.push(b as f64);
                flat.ints.push(b);
            } else if obj.is_instance_of::<PyInt>() {
                flat.all_bool = false;
                let i = obj.extract::<i64>()?;
                flat.floats.push(i as f64);
                flat.ints.push(i);
            } else if obj.is_instance_of::<PyFloat>() {
                flat.all_bool = false;
                flat.any_float = true;
                flat.floats.push(obj.extract::<f64>()?);
                flat.ints.push(0);
            } else if let Ok(t) = obj.cast::<PyTensor>() {
                let t = &t.borrow().t;
                if t.numel() != 1 {
                    return Err(PyValueError::new_err(
                        "only one-element tensors can be list items",
                    ));
                }
                flat.all_bool &= t.dtype() == DType::Bool;
                flat.any_float |= t.dtype().is_floating_point();
                flat.floats.push(t.to_vec::<f64>()[0]);
                flat.ints.push(t.to_vec::<i64>()[0]);
            } else {
                return Err(PyTypeError::new_err(format!(
                    "cannot make a tensor element of a '{}'",
                    obj.get_type().name()?
                )));
            }
        }
    }
    Ok(())
}

/// A new tensor holding `data` (nested lists of numbers, a tensor, or an array), of dtype
/// `dtype` or the one PyTorch infers (bool, int64, or the default float dtype).
pub fn tensor_from_data(data: &Bound<'_, PyAny>, dtype: Option<DType>) -> PyResult<Tensor> {
    let base = if let Ok(t) = data.cast::<PyTensor>() {
        t.borrow().t.clone_tensor().map_err(from_tensor)?
    } else if data.hasattr("__array_interface__")? || data.hasattr("__dlpack__")? {
        crate::convert::to_ivalue(data)?
            .as_tensor()
            .ok_or_else(|| PyTypeError::new_err("not an array"))?
            .clone_tensor()
            .map_err(from_tensor)?
    } else {
        let mut shape = Vec::new();
        let mut flat = Flat {
            all_bool: true,
            ..Default::default()
        };
        walk(data, 0, &mut shape, &mut flat)?;
        let inferred = if flat.all_bool && !flat.floats.is_empty() {
            DType::Bool
        } else if flat.any_float || flat.floats.is_empty() {
            ts_tensor::default_dtype()
        } else {
            DType::Int64
        };
        let t = if inferred == DType::Int64 || inferred == DType::Bool {
            Tensor::from_vec(flat.ints, &shape)
        } else {
            Tensor::from_vec(flat.floats, &shape)
        }
        .map_err(from_tensor)?;
        return t
            .to_dtype(dtype.unwrap_or(inferred), false)
            .map_err(from_tensor);
    };
    match dtype {
        Some(d) => base.to_dtype(d, false).map_err(from_tensor),
        None => Ok(base),
    }
}
