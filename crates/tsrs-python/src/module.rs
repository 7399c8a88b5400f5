//! `ScriptModule`, `ScriptMethod`, `ScriptFunction`, `CompilationUnit` and plain script
//! objects: the callables `torch.jit` gives Python, on the `torchscript` crate.

use std::sync::Arc;

use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::convert::{to_ivalue, to_py};
use crate::errors::to_py as err;

/// Positional and keyword arguments of a call.
type CallArgs = (Vec<torchscript::IValue>, Vec<(String, torchscript::IValue)>);

/// Positional and keyword arguments as the facade's values.
fn call_args(args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<CallArgs> {
    let a = args
        .iter()
        .map(|x| Ok(torchscript::IValue::from_core(to_ivalue(&x)?)))
        .collect::<PyResult<Vec<_>>>()?;
    let mut k = Vec::new();
    if let Some(kw) = kwargs {
        for (key, v) in kw.iter() {
            k.push((
                key.extract::<String>()?,
                torchscript::IValue::from_core(to_ivalue(&v)?),
            ));
        }
    }
    Ok((a, k))
}

fn result(py: Python<'_>, r: torchscript::Result<torchscript::IValue>) -> PyResult<Py<PyAny>> {
    to_py(py, r.map_err(err)?.into_core())
}

/// A loaded, traced or wrapped module, called like `torch.jit.ScriptModule`.
#[pyclass(module = "tsrs", name = "ScriptModule")]
pub struct PyScriptModule {
    pub module: torchscript::Module,
}

#[pymethods]
impl PyScriptModule {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        self.forward(py, args, kwargs)
    }

    /// Calls `forward`.
    #[pyo3(signature = (*args, **kwargs))]
    fn forward(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let m = self.module.method("forward").map_err(err)?;
        PyScriptMethod { method: m }.__call__(py, args, kwargs)
    }

    /// The graph of `forward`, as `module.graph` prints.
    #[getter]
    fn graph(&self) -> PyResult<String> {
        self.module
            .method("forward")
            .and_then(|m| m.graph())
            .map_err(err)
    }

    /// The code of `forward`, as `module.code` prints.
    #[getter]
    fn code(&self) -> PyResult<String> {
        self.module.code().map_err(err)
    }

    /// The class name without `__torch__.`.
    #[getter]
    fn original_name(&self) -> String {
        self.module
            .class_name()
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .to_string()
    }

    /// Saves as a `torch.jit.save` archive.
    fn save(&self, path: std::path::PathBuf) -> PyResult<()> {
        self.module.save(path).map_err(err)
    }

    /// The archive bytes `save` would write.
    fn save_to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let b = self.module.save_bytes().map_err(err)?;
        Ok(pyo3::types::PyBytes::new(py, &b))
    }

    fn named_parameters(&self, py: Python<'_>) -> PyResult<Py<PyList>> {
        named(py, self.module.parameters())
    }

    fn parameters(&self, py: Python<'_>) -> PyResult<Py<PyList>> {
        unnamed(py, self.module.parameters())
    }

    fn named_buffers(&self, py: Python<'_>) -> PyResult<Py<PyList>> {
        named(py, self.module.buffers())
    }

    fn buffers(&self, py: Python<'_>) -> PyResult<Py<PyList>> {
        unnamed(py, self.module.buffers())
    }

    fn named_children(&self, py: Python<'_>) -> PyResult<Py<PyList>> {
        let items = self
            .module
            .submodules()
            .into_iter()
            .map(|(n, m)| Ok((n, Py::new(py, PyScriptModule { module: m })?)))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.unbind())
    }

    fn children(&self, py: Python<'_>) -> PyResult<Py<PyList>> {
        let items = self
            .module
            .submodules()
            .into_iter()
            .map(|(_, m)| Py::new(py, PyScriptModule { module: m }))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.unbind())
    }

    /// Parameters and buffers by dotted name.
    fn state_dict(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let d = PyDict::new(py);
        for (n, t) in self
            .module
            .parameters()
            .into_iter()
            .chain(self.module.buffers())
        {
            d.set_item(n, to_py(py, ts_core::IValue::Tensor(t.inner().clone()))?)?;
        }
        Ok(d.unbind())
    }

    fn _method_names(&self) -> Vec<String> {
        self.module.method_names()
    }

    /// Methods (as callables) and attributes (parameters, buffers, submodules, values).
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        if let Ok(m) = self.module.method(name) {
            if !name.contains('.') {
                return Ok(Py::new(py, PyScriptMethod { method: m })?.into_any());
            }
        }
        match self.module.attribute(name) {
            Ok(v) => to_py(py, v.into_core()),
            Err(_) => Err(PyAttributeError::new_err(format!(
                "'{}' object has no attribute or method '{name}'",
                self.original_name()
            ))),
        }
    }

    fn __setattr__(&self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = torchscript::IValue::from_core(to_ivalue(value)?);
        self.module.set_attribute(name, v).map_err(err)
    }

    fn __repr__(&self) -> String {
        format!(
            "RecursiveScriptModule(original_name={})",
            self.original_name()
        )
    }
}

fn named(py: Python<'_>, v: Vec<(String, torchscript::Tensor)>) -> PyResult<Py<PyList>> {
    let items = v
        .into_iter()
        .map(|(n, t)| Ok((n, to_py(py, ts_core::IValue::Tensor(t.inner().clone()))?)))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.unbind())
}

fn unnamed(py: Python<'_>, v: Vec<(String, torchscript::Tensor)>) -> PyResult<Py<PyList>> {
    let items = v
        .into_iter()
        .map(|(_, t)| to_py(py, ts_core::IValue::Tensor(t.inner().clone())))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.unbind())
}

/// A method bound to its module.
#[pyclass(module = "tsrs", name = "ScriptMethod")]
pub struct PyScriptMethod {
    pub method: torchscript::Method,
}

#[pymethods]
impl PyScriptMethod {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let (a, k) = call_args(args, kwargs)?;
        let m = self.method.clone();
        // Other Python threads run while the model does.
        let r = py.detach(move || {
            let kw: Vec<(&str, torchscript::IValue)> =
                k.iter().map(|(n, v)| (n.as_str(), v.clone())).collect();
            m.call_with_kwargs(a, &kw)
        });
        result(py, r)
    }

    #[getter]
    fn graph(&self) -> PyResult<String> {
        self.method.graph().map_err(err)
    }

    #[getter]
    fn code(&self) -> PyResult<String> {
        self.method.code().map_err(err)
    }

    #[getter]
    fn schema(&self) -> PyResult<String> {
        self.method.schema().map_err(err)
    }

    #[getter]
    fn name(&self) -> String {
        self.method.name().to_string()
    }
}

/// A compiled function (`tsrs.script(fn)`, or a function of `tsrs.compile(source)`).
#[pyclass(module = "tsrs", name = "ScriptFunction")]
pub struct PyScriptFunction {
    pub f: torchscript::Function,
    /// The TorchScript source it was compiled from (scripting a caller includes it).
    pub source: Option<String>,
}

#[pymethods]
impl PyScriptFunction {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let (a, k) = call_args(args, kwargs)?;
        let kw: Vec<(&str, torchscript::IValue)> =
            k.iter().map(|(n, v)| (n.as_str(), v.clone())).collect();
        // Not released: inside a trace the call is recorded on this thread.
        result(py, self.f.call_with_kwargs(a, &kw))
    }

    #[getter]
    fn graph(&self) -> PyResult<String> {
        self.f.graph().map_err(err)
    }

    #[getter]
    fn code(&self) -> PyResult<String> {
        self.f.code().map_err(err)
    }

    #[getter]
    fn schema(&self) -> PyResult<String> {
        self.f.schema().map_err(err)
    }

    #[getter]
    fn name(&self) -> String {
        self.f
            .name()
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .to_string()
    }

    #[getter]
    fn __name__(&self) -> String {
        self.name()
    }

    #[getter]
    fn _source(&self) -> Option<String> {
        self.source.clone()
    }

    /// Saves as an archive whose module's `forward` is this function.
    fn save(&self, path: std::path::PathBuf) -> PyResult<()> {
        self.f
            .to_module("ScriptFunction")
            .and_then(|m| m.save(path))
            .map_err(err)
    }

    fn __repr__(&self) -> String {
        format!("<tsrs.ScriptFunction {}>", self.name())
    }
}

/// The functions of a compiled source, as attributes.
#[pyclass(module = "tsrs", name = "CompilationUnit")]
pub struct PyCompilationUnit {
    pub cu: torchscript::CompilationUnit,
    pub source: String,
}

#[pymethods]
impl PyCompilationUnit {
    fn find_function(&self, name: &str) -> PyResult<PyScriptFunction> {
        Ok(PyScriptFunction {
            f: self.cu.function(name).map_err(err)?,
            source: Some(self.source.clone()),
        })
    }

    fn function_names(&self) -> Vec<String> {
        self.cu
            .function_names()
            .into_iter()
            .map(|n| n.rsplit('.').next().unwrap_or_default().to_string())
            .collect()
    }

    fn __getattr__(&self, name: &str) -> PyResult<PyScriptFunction> {
        self.find_function(name)
            .map_err(|_| PyAttributeError::new_err(format!("no function named '{name}'")))
    }
}

/// An object of a TorchScript class that is not a module.
#[pyclass(module = "tsrs", name = "ScriptObject")]
pub struct PyScriptObject {
    pub obj: Arc<ts_core::Object>,
}

#[pymethods]
impl PyScriptObject {
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        let i = self.obj.class.attribute_index(name).ok_or_else(|| {
            PyAttributeError::new_err(format!(
                "'{}' object has no attribute '{name}'",
                self.obj.class.name
            ))
        })?;
        let v = self.obj.slots.read()[i].clone();
        to_py(py, v)
    }

    fn __repr__(&self) -> String {
        format!("<ScriptObject {}>", self.obj.class.name)
    }
}
