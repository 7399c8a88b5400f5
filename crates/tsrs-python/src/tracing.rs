//! `tsrs._trace`: records a Python function run on `tsrs.Tensor`s into a module.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use ts_core::IValue;
use ts_runtime::tracer::{ModuleSpec, TraceOptions};

use crate::module::PyScriptModule;
use crate::tensor::PyTensor;

/// Named tensors of a module description.
type NamedTensors<'py> = Vec<(String, Bound<'py, PyTensor>)>;
/// A module description as Python passes it.
type RawSpec<'py> = (
    String,
    NamedTensors<'py>,
    NamedTensors<'py>,
    Vec<(String, Bound<'py, PyAny>)>,
);

/// A module description from Python: `(class_name, [(name, tensor)], [(name, tensor)],
/// [(name, spec)])` for parameters, buffers and submodules.
fn spec_from(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<ModuleSpec> {
    if depth > 64 {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "modules nested too deeply",
        ));
    }
    let (class_name, params, buffers, subs): RawSpec<'_> = obj.extract()?;
    let tensors = |v: Vec<(String, Bound<'_, PyTensor>)>| {
        v.into_iter()
            .map(|(n, t)| (n, t.borrow().t.clone()))
            .collect::<Vec<_>>()
    };
    Ok(ModuleSpec {
        class_name,
        parameters: tensors(params),
        buffers: tensors(buffers),
        submodules: subs
            .into_iter()
            .map(|(n, s)| Ok((n, spec_from(&s, depth + 1)?)))
            .collect::<PyResult<Vec<_>>>()?,
    })
}

/// Traces `f(*inputs)`; returns the module and the trace's warnings.
#[pyfunction]
#[pyo3(signature = (f, inputs, names, spec, dynamic_sizes = false))]
pub fn _trace(
    py: Python<'_>,
    f: &Bound<'_, PyAny>,
    inputs: &Bound<'_, PyList>,
    names: Vec<String>,
    spec: &Bound<'_, PyAny>,
    dynamic_sizes: bool,
) -> PyResult<(PyScriptModule, Vec<String>)> {
    let spec = spec_from(spec, 0)?;
    let mut values = Vec::new();
    for x in inputs.iter() {
        let t = x.cast::<PyTensor>().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err("example inputs must be tsrs.Tensor objects")
        })?;
        values.push(IValue::Tensor(t.borrow().t.clone()));
    }
    let args = PyTuple::new(py, inputs.iter())?;
    let mut failure: Option<PyErr> = None;
    let r = ts_runtime::tracer::trace(
        &spec,
        &values,
        &names,
        TraceOptions { dynamic_sizes },
        |_| {
            let out = f
                .call1(args.clone())
                .and_then(|o| crate::convert::to_ivalue(&o));
            out.map_err(|e| {
                let msg = e.to_string();
                failure = Some(e);
                ts_tensor::Error::runtime(msg)
            })
        },
    );
    if let Some(e) = failure {
        return Err(e);
    }
    let r = r.map_err(crate::errors::from_tensor)?;
    let module =
        torchscript::Module::from_ivalue(torchscript::IValue::from_core(IValue::Object(r.module)))
            .map_err(crate::errors::to_py)?;
    Ok((PyScriptModule { module }, r.warnings))
}
