//! NumPy arrays in and out of tensors without copying, through NumPy's
//! `__array_interface__`: an exported array views the tensor's storage (which it keeps
//! alive), and an imported array becomes a tensor's storage (the tensor keeps the array
//! alive). Layouts a tensor cannot view (read-only, misaligned, byte-swapped) are copied.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use ts_tensor::{DType, Storage, Tensor};

/// The `__array_interface__` type string of a dtype.
pub fn typestr(d: DType) -> PyResult<&'static str> {
    Ok(match d {
        DType::Bool => "|b1",
        DType::UInt8 => "|u1",
        DType::Int8 => "|i1",
        DType::Int16 => "<i2",
        DType::Int32 => "<i4",
        DType::Int64 => "<i8",
        DType::Float16 => "<f2",
        DType::Float32 => "<f4",
        DType::Float64 => "<f8",
        DType::UInt16 => "<u2",
        DType::UInt32 => "<u4",
        DType::UInt64 => "<u8",
        DType::Complex64 => "<c8",
        DType::Complex128 => "<c16",
        DType::BFloat16 => {
            return Err(PyTypeError::new_err(
                "NumPy has no bfloat16: convert the tensor first (t.to(tsrs.float32))",
            ))
        }
    })
}

/// The dtype of a type string, and whether it is in native (little-endian) byte order.
fn dtype_of(typestr: &str) -> Option<(DType, bool)> {
    let (order, kind) = typestr.split_at(typestr.len().min(1));
    let native = matches!(order, "<" | "|" | "=");
    let d = match kind {
        "b1" => DType::Bool,
        "u1" => DType::UInt8,
        "i1" => DType::Int8,
        "i2" => DType::Int16,
        "i4" => DType::Int32,
        "i8" => DType::Int64,
        "f2" => DType::Float16,
        "f4" => DType::Float32,
        "f8" => DType::Float64,
        "u2" => DType::UInt16,
        "u4" => DType::UInt32,
        "u8" => DType::UInt64,
        "c8" => DType::Complex64,
        "c16" => DType::Complex128,
        _ => return None,
    };
    Some((d, native || d.size() == 1))
}

/// What NumPy reads to view a tensor's memory: the interface dict and the storage it points
/// into (kept alive as long as the array exists, since NumPy keeps this object as its base).
#[pyclass(module = "tsrs", name = "_ArrayExport")]
pub struct ArrayExport {
    _storage: Storage,
    interface: Py<PyDict>,
}

#[pymethods]
impl ArrayExport {
    #[getter]
    fn __array_interface__(&self, py: Python<'_>) -> Py<PyDict> {
        self.interface.clone_ref(py)
    }
}

/// A NumPy array viewing `t` (no copy).
pub fn to_numpy(py: Python<'_>, t: &Tensor) -> PyResult<Py<PyAny>> {
    let m = t.meta_snapshot();
    let size = m.dtype.size() as i64;
    let d = PyDict::new(py);
    let shape: Vec<i64> = m.sizes.to_vec();
    let strides: Vec<i64> = m.strides.iter().map(|s| s * size).collect();
    let ptr = m.storage.as_ptr() as usize + m.offset * m.dtype.size();
    d.set_item("shape", PyTuple::new(py, shape)?)?;
    d.set_item("strides", PyTuple::new(py, strides)?)?;
    d.set_item("typestr", typestr(m.dtype)?)?;
    d.set_item("data", (ptr, false))?;
    d.set_item("version", 3)?;
    let export = Py::new(
        py,
        ArrayExport {
            _storage: m.storage.clone(),
            interface: d.unbind(),
        },
    )?;
    Ok(py
        .import("numpy")?
        .call_method1("asarray", (export,))?
        .unbind())
}

/// Keeps a NumPy array alive while a tensor uses its memory.
struct ArrayOwner(#[allow(dead_code)] Py<PyAny>);

/// A tensor over a NumPy array's memory (copied first when the layout does not allow a view).
pub fn from_numpy(obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    from_numpy_inner(obj, true)
}

fn from_numpy_inner(obj: &Bound<'_, PyAny>, may_copy: bool) -> PyResult<Tensor> {
    let py = obj.py();
    let iface = obj.getattr("__array_interface__")?;
    let iface = iface.cast::<PyDict>()?;
    let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        iface
            .get_item(k)?
            .ok_or_else(|| PyTypeError::new_err(format!("__array_interface__ has no '{k}'")))
    };
    let ts: String = get("typestr")?.extract()?;
    let (dtype, native) = dtype_of(&ts).ok_or_else(|| {
        PyTypeError::new_err(format!("arrays of dtype '{ts}' cannot become tsrs tensors"))
    })?;
    let shape: Vec<i64> = get("shape")?.extract()?;
    let size = dtype.size() as i64;
    let data = get("data")?;
    let (ptr, readonly): (usize, bool) = match data.extract() {
        Ok(d) => d,
        Err(_) if may_copy => return copy_then_view(obj, dtype),
        Err(e) => return Err(e),
    };
    let strides: Option<Vec<i64>> = match iface.get_item("strides")? {
        Some(s) if !s.is_none() => Some(s.extract()?),
        _ => None,
    };
    let strides = match strides {
        None => Some(ts_tensor::tensor::contiguous_strides(&shape).to_vec()),
        Some(s) if s.iter().all(|&b| b >= 0 && b % size == 0) => {
            Some(s.iter().map(|b| b / size).collect())
        }
        Some(_) => None,
    };
    let aligned = ptr % dtype.size() == 0;
    let Some(strides) = strides.filter(|_| native && aligned && !readonly && ptr != 0) else {
        if may_copy {
            return copy_then_view(obj, dtype);
        }
        return Err(PyTypeError::new_err(
            "the array's layout cannot be viewed as a tensor",
        ));
    };
    let numel: i64 = shape.iter().product();
    let extent = if numel == 0 {
        0
    } else {
        1 + shape
            .iter()
            .zip(&strides)
            .map(|(&n, &s)| (n - 1) * s)
            .sum::<i64>()
    };
    let nbytes = extent as usize * dtype.size();
    let owner = Box::new(ArrayOwner(obj.clone().unbind()));
    // SAFETY: the interface describes `nbytes` writable (not read-only), aligned bytes at
    // `ptr` that NumPy keeps valid while the array lives; `owner` holds a reference to the
    // array until the storage drops, and NumPy refuses to resize an array that is referenced.
    let storage = unsafe { Storage::from_external(ptr as *mut u8, nbytes, owner) }
        .map_err(crate::errors::from_tensor)?;
    let _ = py;
    Tensor::from_parts(storage, &shape, &strides, 0, dtype).map_err(crate::errors::from_tensor)
}

/// A writable, aligned, native-order, C-contiguous copy of the array, viewed as a tensor.
fn copy_then_view(obj: &Bound<'_, PyAny>, dtype: DType) -> PyResult<Tensor> {
    let np = obj.py().import("numpy")?;
    let kwargs = PyDict::new(obj.py());
    kwargs.set_item("dtype", typestr(dtype)?.replace('>', "<"))?;
    kwargs.set_item("order", "C")?;
    let fresh = np.call_method("array", (obj,), Some(&kwargs))?;
    from_numpy_inner(&fresh, false)
}
