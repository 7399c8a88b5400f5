//! Python values to and from TorchScript values.

use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use ts_core::{IValue, Type};
use ts_runtime::dispatch::Arg;

use crate::module::{PyScriptModule, PyScriptObject};
use crate::tensor::{PyDType, PyTensor};

/// Converts a Python value; NumPy arrays and DLPack producers (PyTorch tensors) become
/// tensors without copying where their layout allows.
pub fn to_ivalue(obj: &Bound<'_, PyAny>) -> PyResult<IValue> {
    to_ivalue_depth(obj, 0)
}

fn to_ivalue_depth(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<IValue> {
    if depth > 100 {
        return Err(PyTypeError::new_err("value nested too deeply"));
    }
    if obj.is_none() {
        return Ok(IValue::None);
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(IValue::Tensor(t.borrow().t.clone()));
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(IValue::Bool(obj.extract::<bool>()?));
    }
    if obj.is_instance_of::<PyInt>() {
        let v: i64 = obj
            .extract()
            .map_err(|_| PyOverflowError::new_err("int too large for TorchScript's 64-bit int"))?;
        return Ok(IValue::Int(v));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(IValue::Double(obj.extract::<f64>()?));
    }
    if let Ok(c) = obj.cast::<PyComplex>() {
        return Ok(IValue::complex(c.real(), c.imag()));
    }
    if obj.is_instance_of::<PyString>() {
        return Ok(IValue::str(obj.extract::<String>()?));
    }
    if let Ok(d) = obj.cast::<PyDType>() {
        return Ok(IValue::Int(d.borrow().dtype.scalar_type_index()));
    }
    if let Ok(m) = obj.cast::<PyScriptModule>() {
        return Ok(IValue::Object(m.borrow().module.object().clone()));
    }
    if let Ok(o) = obj.cast::<PyScriptObject>() {
        return Ok(IValue::Object(o.borrow().obj.clone()));
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        let items = t
            .iter()
            .map(|x| to_ivalue_depth(&x, depth + 1))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(IValue::tuple(items));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        let items = l
            .iter()
            .map(|x| to_ivalue_depth(&x, depth + 1))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(IValue::list(Type::any(), items));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let entries = d
            .iter()
            .map(|(k, v)| {
                Ok((
                    to_ivalue_depth(&k, depth + 1)?,
                    to_ivalue_depth(&v, depth + 1)?,
                ))
            })
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(IValue::dict(Type::any(), Type::any(), entries));
    }
    if obj.hasattr("__array_interface__")? {
        return Ok(IValue::Tensor(crate::numpy_interop::from_numpy(obj)?));
    }
    if obj.hasattr("__dlpack__")? {
        return Ok(IValue::Tensor(crate::dlpack::from_dlpack(obj)?));
    }
    Err(PyTypeError::new_err(format!(
        "cannot pass a value of type '{}' to TorchScript",
        obj.get_type().name()?
    )))
}

/// Converts an operator argument: dtypes stay dtypes so that overloads can tell them apart.
pub fn to_arg(obj: &Bound<'_, PyAny>) -> PyResult<Arg> {
    if let Ok(d) = obj.cast::<PyDType>() {
        return Ok(Arg::DType(d.borrow().dtype));
    }
    Ok(Arg::Value(to_ivalue(obj)?))
}

/// Converts a TorchScript value to Python (modules become `ScriptModule`s).
pub fn to_py(py: Python<'_>, v: IValue) -> PyResult<Py<PyAny>> {
    Ok(match v {
        IValue::None => py.None(),
        IValue::Bool(b) => PyBool::new(py, b).to_owned().into_any().unbind(),
        IValue::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        IValue::Double(d) => d.into_pyobject(py)?.into_any().unbind(),
        IValue::Complex(c) => PyComplex::from_doubles(py, c.0, c.1).into_any().unbind(),
        IValue::String(s) => PyString::new(py, &s).into_any().unbind(),
        IValue::Tensor(t) => Py::new(py, PyTensor { t })?.into_any(),
        IValue::Device(d) => PyString::new(py, &d.to_string()).into_any().unbind(),
        IValue::Tuple(t) => {
            let items = t
                .elements
                .iter()
                .map(|x| to_py(py, x.clone()))
                .collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, items)?.into_any().unbind()
        }
        IValue::List(l) => {
            let items = l.items.read().clone();
            let items = items
                .into_iter()
                .map(|x| to_py(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any().unbind()
        }
        IValue::Dict(d) => {
            let out = PyDict::new(py);
            for (k, v) in d.entries.read().iter() {
                out.set_item(to_py(py, k.0.clone())?, to_py(py, v.clone())?)?;
            }
            out.into_any().unbind()
        }
        IValue::Object(o) if o.class.is_module => Py::new(
            py,
            PyScriptModule {
                module: torchscript::Module::from_ivalue(torchscript::IValue::from_core(
                    IValue::Object(o),
                ))
                .map_err(crate::errors::to_py)?,
            },
        )?
        .into_any(),
        IValue::Object(o) => Py::new(py, PyScriptObject { obj: o })?.into_any(),
        other => PyString::new(py, &other.to_display_string())
            .into_any()
            .unbind(),
    })
}
