//! `tsrs._tsrs`: the native part of the `tsrs` Python package (torch.jit's API on
//! torchscript-rs). The Python layer (`python/tsrs/`) adds `script`, `trace`, `nn`.

mod convert;
mod creation;
mod dlpack;
mod errors;
mod module;
mod numpy_interop;
mod tensor;
mod tracing;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::errors::to_py as err;
use crate::module::{PyCompilationUnit, PyScriptFunction, PyScriptModule};
use crate::tensor::{PyDType, PyTensor};

/// Loads a `torch.jit.save` archive from a path or from bytes.
#[pyfunction]
fn load(py: Python<'_>, f: &Bound<'_, PyAny>) -> PyResult<PyScriptModule> {
    let module = if let Ok(b) = f.cast::<PyBytes>() {
        let bytes = b.as_bytes().to_vec();
        py.detach(move || torchscript::Module::load_bytes(&bytes))
    } else {
        let path: std::path::PathBuf = f.extract()?;
        // torch.jit.load's own checks, before any reading.
        if !path.exists() {
            return Err(PyValueError::new_err(format!(
                "The provided filename {} does not exist",
                path.display()
            )));
        }
        if path.is_dir() {
            return Err(PyValueError::new_err(format!(
                "The provided filename {} is a directory",
                path.display()
            )));
        }
        py.detach(move || torchscript::Module::load(path))
    }
    .map_err(err)?;
    Ok(PyScriptModule { module })
}

/// Saves a module (or a scripted function, as a module's `forward`) as an archive.
#[pyfunction]
fn save(m: &Bound<'_, PyAny>, path: std::path::PathBuf) -> PyResult<()> {
    if let Ok(m) = m.cast::<PyScriptModule>() {
        return m.borrow().module.save(path).map_err(err);
    }
    if let Ok(f) = m.cast::<PyScriptFunction>() {
        return f
            .borrow()
            .f
            .to_module("ScriptFunction")
            .and_then(|m| m.save(path))
            .map_err(err);
    }
    Err(PyTypeError::new_err(
        "save() takes a ScriptModule or a ScriptFunction",
    ))
}

/// Compiles TorchScript source into a unit whose functions are attributes.
#[pyfunction]
#[pyo3(signature = (source, filename = "<string>"))]
fn compile(source: &str, filename: &str) -> PyResult<PyCompilationUnit> {
    Ok(PyCompilationUnit {
        cu: torchscript::compile_named(source, filename).map_err(err)?,
        source: source.to_string(),
    })
}

/// Calls an operator (`add`, `aten::add`, `aten::add.Tensor`) with Python arguments.
#[pyfunction]
#[pyo3(signature = (name, *args, **kwargs))]
fn _call_op(
    py: Python<'_>,
    name: &str,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let (a, k) = tensor::op_args(None, args, kwargs)?;
    let q = if name.contains("::") {
        name.to_string()
    } else {
        format!("aten::{name}")
    };
    tensor::call_op(py, &q, a, k)
}

/// True when an operator `aten::name` exists.
#[pyfunction]
fn _has_op(name: &str) -> bool {
    tensor::has_operator(name)
}

/// A tensor sharing a NumPy array's memory (copied when its layout does not allow that).
#[pyfunction]
fn from_numpy(a: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    Ok(PyTensor {
        t: numpy_interop::from_numpy(a)?,
    })
}

/// A tensor sharing the memory of any DLPack producer (PyTorch tensors, NumPy arrays).
#[pyfunction]
fn from_dlpack(obj: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    Ok(PyTensor {
        t: dlpack::from_dlpack(obj)?,
    })
}

/// `tsrs.tensor(data, dtype=None)`: a new tensor holding a copy of `data`.
#[pyfunction]
#[pyo3(name = "tensor", signature = (data, dtype = None))]
fn new_tensor(data: &Bound<'_, PyAny>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
    Ok(PyTensor {
        t: creation::tensor_from_data(data, dtype.map(|d| d.dtype))?,
    })
}

/// `torch.is_grad_enabled()` on the calling thread.
#[pyfunction]
fn is_grad_enabled() -> bool {
    torchscript::autograd::is_grad_enabled()
}

/// Turns autograd recording on or off for the calling thread (the guards of `tsrs.no_grad`).
#[pyfunction]
fn _set_grad_enabled(enabled: bool) {
    torchscript::autograd::set_grad_enabled(enabled)
}

/// Seeds the default generator (`torch.manual_seed`).
#[pyfunction]
fn manual_seed(seed: u64) {
    torchscript::manual_seed(seed);
}

/// Sets the number of threads tensor kernels use.
#[pyfunction]
fn set_num_threads(n: usize) {
    torchscript::set_num_threads(n);
}

/// True while a trace records on this thread.
#[pyfunction]
fn is_tracing() -> bool {
    torchscript::is_tracing()
}

/// `torch.jit.freeze(module, preserved_attrs=None, optimize_numerics=True)`: a frozen copy
/// (attributes inlined as constants, calls inlined, batch norms folded into convolutions).
#[pyfunction]
#[pyo3(signature = (module, preserved_attrs = None, optimize_numerics = true))]
fn freeze(
    module: &PyScriptModule,
    preserved_attrs: Option<Vec<String>>,
    optimize_numerics: bool,
) -> PyResult<PyScriptModule> {
    let opts = torchscript::FreezeOptions {
        preserved_attrs: preserved_attrs.unwrap_or_default(),
        optimize_numerics,
    };
    Ok(PyScriptModule {
        module: module.module.freeze(&opts).map_err(errors::to_py)?,
    })
}

/// `torch.jit.optimize_for_inference(module, other_methods=None)`: freezes the module unless
/// it is frozen, then applies the inference rewrites.
#[pyfunction]
#[pyo3(signature = (module, other_methods = None))]
fn optimize_for_inference(
    module: &PyScriptModule,
    other_methods: Option<Vec<String>>,
) -> PyResult<PyScriptModule> {
    let m = module
        .module
        .optimize_for_inference(&other_methods.unwrap_or_default())
        .map_err(errors::to_py)?;
    Ok(PyScriptModule { module: m })
}

#[pymodule]
fn _tsrs(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTensor>()?;
    m.add_class::<PyDType>()?;
    m.add_class::<PyScriptModule>()?;
    m.add_class::<module::PyScriptMethod>()?;
    m.add_class::<PyScriptFunction>()?;
    m.add_class::<PyCompilationUnit>()?;
    m.add_class::<module::PyScriptObject>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(save, m)?)?;
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(_call_op, m)?)?;
    m.add_function(wrap_pyfunction!(_has_op, m)?)?;
    m.add_function(wrap_pyfunction!(from_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(new_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(manual_seed, m)?)?;
    m.add_function(wrap_pyfunction!(is_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_set_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(is_tracing, m)?)?;
    m.add_function(wrap_pyfunction!(freeze, m)?)?;
    m.add_function(wrap_pyfunction!(optimize_for_inference, m)?)?;
    m.add_function(wrap_pyfunction!(tracing::_trace, m)?)?;
    use ts_tensor::DType;
    for (name, d) in [
        ("float32", DType::Float32),
        ("float", DType::Float32),
        ("float64", DType::Float64),
        ("double", DType::Float64),
        ("float16", DType::Float16),
        ("half", DType::Float16),
        ("bfloat16", DType::BFloat16),
        ("int8", DType::Int8),
        ("int16", DType::Int16),
        ("short", DType::Int16),
        ("int32", DType::Int32),
        ("int", DType::Int32),
        ("int64", DType::Int64),
        ("long", DType::Int64),
        ("uint8", DType::UInt8),
        ("bool", DType::Bool),
    ] {
        m.add(name, PyDType { dtype: d })?;
    }
    Ok(())
}
