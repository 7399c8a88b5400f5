//! Tracing Rust code into a TorchScript module: [`trace`] and the [`Tracer`] builder.
//!
//! The closure runs once on the example inputs; every tensor operator it calls through this
//! crate ([`Tensor`] methods, [`crate::ops::call`]) is recorded into a graph, which becomes
//! the `forward` of a new module. Tensors registered as parameters are read from the module
//! (`prim::GetAttr`); other tensors the closure captures become constants. Control flow in the
//! closure is not recorded: the trace keeps the path the example took (reading tensor data,
//! e.g. [`Tensor::item`], adds a warning). Calls of compiled TorchScript functions keep their
//! control flow: their graphs are inlined.

use crate::error::{Error, Result};
use crate::ivalue::IValue;
use crate::module::Module;
use crate::tensor::Tensor;

/// True while a trace records on this thread.
pub fn is_tracing() -> bool {
    ts_runtime::tracer::is_tracing()
}

/// Traces `f` on `example_inputs` into a module whose `forward` replays the recorded
/// operators.
///
/// ```
/// use torchscript::{trace, Tensor};
///
/// let w = Tensor::from_data(&[0.5f32, -1.0, 2.0, 1.0], &[2, 2])?;
/// let x = Tensor::from_data(&[1.0f32, 2.0], &[1, 2])?;
/// let m = trace(|xs| xs[0].matmul(&w)?.relu(), &[x])?;
/// let y = m.forward((Tensor::from_data(&[2.0f32, 0.0], &[1, 2])?,))?;
/// assert_eq!(y.as_tensor().unwrap().to_vec::<f32>(), vec![1.0, 0.0]);
/// assert!(m.method("forward")?.graph()?.contains("aten::matmul"));
/// # Ok::<(), torchscript::Error>(())
/// ```
pub fn trace<F, O>(f: F, example_inputs: &[Tensor]) -> Result<Module>
where
    F: FnOnce(&[Tensor]) -> Result<O>,
    O: Into<IValue>,
{
    Ok(Tracer::new().trace(f, example_inputs)?.module)
}

/// Options for a trace: the module's class name and parameters, input names, dynamic sizes.
///
/// ```
/// use torchscript::{Tensor, Tracer};
///
/// let w = Tensor::randn(&[4, 3], 0)?;
/// let b = Tensor::zeros(&[4], torchscript::DType::Float32)?;
/// let t = Tracer::new()
///     .class_name("Linear")
///     .parameter("fc.weight", &w)
///     .parameter("fc.bias", &b)
///     .input_names(&["x"])
///     .trace(|xs| xs[0].linear(&w, Some(&b)), &[Tensor::randn(&[2, 3], 1)?])?;
/// assert_eq!(t.module.parameters().len(), 2);
/// let graph = t.module.method("forward")?.graph()?;
/// assert!(graph.contains("prim::GetAttr[name=\"fc\"](%self)"));
/// assert!(graph.contains("aten::linear(%x, %weight, %bias)"));
/// # Ok::<(), torchscript::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Tracer {
    spec: ts_runtime::tracer::ModuleSpec,
    input_names: Vec<String>,
    options: ts_runtime::tracer::TraceOptions,
}

/// The result of [`Tracer::trace`]: the module and the warnings the trace raised.
#[derive(Clone, Debug)]
pub struct Trace {
    pub module: Module,
    /// Where the trace may not generalize (tensor data read as host values).
    pub warnings: Vec<String>,
}

impl Tracer {
    /// A tracer for a module of class `__torch__.TracedModule` without parameters.
    pub fn new() -> Tracer {
        Tracer::default()
    }

    /// The module's class name (`MLP` becomes `__torch__.MLP`).
    pub fn class_name(mut self, name: &str) -> Tracer {
        self.spec.class_name = qualify(name);
        self
    }

    /// Registers `t` as parameter `path` (`fc1.weight` puts `weight` in submodule `fc1`):
    /// uses of `t` read it from the module.
    pub fn parameter(mut self, path: &str, t: &Tensor) -> Tracer {
        insert(&mut self.spec, path, t, true);
        self
    }

    /// Registers `t` as buffer `path` (saved with the module, not a parameter).
    pub fn buffer(mut self, path: &str, t: &Tensor) -> Tracer {
        insert(&mut self.spec, path, t, false);
        self
    }

    /// Names of the graph inputs (default `input_0`, `input_1`, ...).
    pub fn input_names(mut self, names: &[&str]) -> Tracer {
        self.input_names = names.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Records [`Tensor::size_traced`] as `aten::size` so shapes follow the input instead of
    /// being constants of the example.
    pub fn dynamic_sizes(mut self, on: bool) -> Tracer {
        self.options.dynamic_sizes = on;
        self
    }

    /// Runs `f` on `example_inputs` and records it.
    pub fn trace<F, O>(self, f: F, example_inputs: &[Tensor]) -> Result<Trace>
    where
        F: FnOnce(&[Tensor]) -> Result<O>,
        O: Into<IValue>,
    {
        let mut spec = self.spec;
        if spec.class_name.is_empty() {
            spec.class_name = "__torch__.TracedModule".to_string();
        }
        name_submodules(&mut spec);
        let inputs: Vec<ts_core::IValue> = example_inputs
            .iter()
            .map(|t| ts_core::IValue::Tensor(t.0.clone()))
            .collect();
        let mut failure: Option<Error> = None;
        let r =
            ts_runtime::tracer::trace(
                &spec,
                &inputs,
                &self.input_names,
                self.options,
                |_| match f(example_inputs) {
                    Ok(o) => Ok(o.into().into_core()),
                    Err(e) => {
                        let msg = e.to_string();
                        failure = Some(e);
                        Err(ts_tensor::Error::runtime(msg))
                    }
                },
            );
        match (r, failure) {
            (_, Some(e)) => Err(e),
            (Err(e), None) => Err(Error::from(e)),
            (Ok(t), None) => Ok(Trace {
                module: Module::from_object(t.module),
                warnings: t.warnings,
            }),
        }
    }
}

fn qualify(name: &str) -> String {
    if name.starts_with("__torch__.") {
        name.to_string()
    } else {
        format!("__torch__.{name}")
    }
}

fn insert(spec: &mut ts_runtime::tracer::ModuleSpec, path: &str, t: &Tensor, param: bool) {
    match path.split_once('.') {
        Some((head, rest)) => {
            let i = match spec.submodules.iter().position(|(n, _)| n == head) {
                Some(i) => i,
                None => {
                    spec.submodules.push((head.to_string(), Default::default()));
                    spec.submodules.len() - 1
                }
            };
            insert(&mut spec.submodules[i].1, rest, t, param);
        }
        None if param => spec.parameters.push((path.to_string(), t.0.clone())),
        None => spec.buffers.push((path.to_string(), t.0.clone())),
    }
}

/// Gives unnamed submodule classes `__torch__.<Root>_<path>` names.
fn name_submodules(spec: &mut ts_runtime::tracer::ModuleSpec) {
    let root = spec.class_name.clone();
    for (n, sub) in &mut spec.submodules {
        if sub.class_name.is_empty() {
            sub.class_name = format!("{root}_{n}");
        }
        name_submodules(sub);
    }
}

impl Tensor {
    /// The size of dimension `dim`; while tracing with [`Tracer::dynamic_sizes`], a 0-dim
    /// int64 tensor recorded as `aten::size` (usable wherever an int is expected, e.g. in
    /// [`Tensor::reshape_dyn`]), otherwise a constant.
    pub fn size_traced(&self, dim: i64) -> Result<IValue> {
        Ok(IValue::from_core(ts_runtime::tracer::size(&self.0, dim)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traced_modules_save_and_load_back() {
        let w = Tensor::from_data(&[1.0f32, 0.0, 0.0, 1.0], &[2, 2]).unwrap();
        let t = Tracer::new()
            .class_name("Net")
            .parameter("w", &w)
            .input_names(&["x"])
            .trace(
                |xs| xs[0].matmul(&w)?.add(&xs[0]),
                &[Tensor::ones(&[1, 2], crate::DType::Float32).unwrap()],
            )
            .unwrap();
        let bytes = t.module.save_bytes().unwrap();
        let back = Module::load_bytes(&bytes).unwrap();
        let x = Tensor::from_data(&[3.0f32, 4.0], &[1, 2]).unwrap();
        let y = back.forward((x,)).unwrap();
        assert_eq!(y.as_tensor().unwrap().to_vec::<f32>(), vec![6.0, 8.0]);
        assert_eq!(back.parameters()[0].0, "w");
    }

    #[test]
    fn closure_errors_come_back_unchanged() {
        let x = Tensor::ones(&[2], crate::DType::Float32).unwrap();
        let y = Tensor::ones(&[3], crate::DType::Float32).unwrap();
        let e = trace(|xs| xs[0].add(&y), &[x]).unwrap_err();
        assert!(
            e.message().contains("size of tensor a (2) must match"),
            "{e}"
        );
        assert!(!is_tracing());
    }
}
