//! The graph executor: specializes a function's graph to the argument properties that change
//! how it runs (an `ArgumentSpec`: per tensor input whether it is defined, its dtype, rank,
//! device and requires_grad; tuples flattened), keeps one execution plan per spec, and runs the
//! passes needed before interpretation.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use ts_core::{IValue, TensorType, Type};
use ts_ir::{Function, Graph};
use ts_tensor::Error;

use crate::code::Code;

/// The properties of the arguments a plan is specialized for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArgumentSpec(Vec<ArgInfo>);

/// What the spec records for one (flattened) argument.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ArgInfo {
    Tensor {
        dtype: u8,
        rank: u8,
        requires_grad: bool,
        device: String,
    },
    UndefinedTensor,
    Other,
}

impl ArgumentSpec {
    /// The spec of a list of inputs.
    pub fn of(inputs: &[IValue]) -> ArgumentSpec {
        let mut out = Vec::with_capacity(inputs.len());
        for v in inputs {
            flatten(v, &mut out);
        }
        ArgumentSpec(out)
    }

    /// The flattened argument infos.
    pub fn args(&self) -> &[ArgInfo] {
        &self.0
    }
}

fn flatten(v: &IValue, out: &mut Vec<ArgInfo>) {
    match v {
        IValue::Tensor(t) => {
            let m = t.meta();
            out.push(ArgInfo::Tensor {
                dtype: m.dtype as u8,
                rank: m.sizes.len() as u8,
                requires_grad: m.requires_grad,
                device: m.storage.device().to_string(),
            })
        }
        IValue::Tuple(t) => t.elements.iter().for_each(|e| flatten(e, out)),
        IValue::None => out.push(ArgInfo::UndefinedTensor),
        _ => out.push(ArgInfo::Other),
    }
}

/// Plans per argument spec for one graph.
pub struct GraphExecutor {
    graph: Arc<Graph>,
    name: String,
    plans: Mutex<HashMap<ArgumentSpec, Arc<Code>>>,
    hits: AtomicUsize,
    misses: AtomicUsize,
}

impl GraphExecutor {
    /// An executor for `graph`.
    pub fn new(graph: Arc<Graph>, name: &str) -> GraphExecutor {
        GraphExecutor {
            graph,
            name: name.to_string(),
            plans: Mutex::new(HashMap::new()),
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
        }
    }

    /// The plan for these inputs, creating it on a cache miss.
    pub fn plan(&self, inputs: &[IValue]) -> Result<Arc<Code>, Error> {
        let spec = ArgumentSpec::of(inputs);
        if let Some(c) = self.plans.lock().get(&spec) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(c.clone());
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let g = self.specialized_graph(&spec);
        let code = Arc::new(Code::new(&g, &self.name)?);
        self.plans.lock().insert(spec, code.clone());
        Ok(code)
    }

    /// The graph of the plan for `spec`: a copy with tensor inputs typed by the spec and the
    /// required passes applied.
    pub fn specialized_graph(&self, spec: &ArgumentSpec) -> Graph {
        let mut g = self.graph.copy();
        let inputs = g.inputs().to_vec();
        if inputs.len() == spec.0.len() {
            for (v, info) in inputs.iter().zip(&spec.0) {
                if let (
                    ArgInfo::Tensor {
                        dtype,
                        rank,
                        requires_grad,
                        ..
                    },
                    true,
                ) = (info, g.value(*v).ty().is_tensor())
                {
                    let t = TensorType {
                        dtype: ts_tensor::DType::from_scalar_type_index(*dtype as i64),
                        device: Some(ts_tensor::Device::Cpu),
                        sizes: Some(vec![None; *rank as usize]),
                        strides: None,
                        requires_grad: Some(*requires_grad),
                        undefined: Some(false),
                    };
                    g.set_type(*v, Arc::new(Type::Tensor(t)));
                }
            }
        }
        ts_passes::run_required_passes(&mut g);
        g
    }

    /// How many plans (one per distinct argument spec) are cached.
    pub fn plan_count(&self) -> usize {
        self.plans.lock().len()
    }

    /// (cache hits, cache misses) so far.
    pub fn cache_stats(&self) -> (usize, usize) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }
}

/// The executor attached to a function (created on first use).
pub fn executor_of(f: &Function) -> Result<&GraphExecutor, Error> {
    let graph = f.graph().ok_or_else(|| {
        Error::runtime(format!(
            "function '{}' is called before its definition was compiled",
            f.qualified_name()
        ))
    })?;
    f.runtime_data(|| GraphExecutor::new(graph, f.qualified_name()))
        .ok_or_else(|| Error::runtime("internal error: foreign runtime data on a function"))
}

/// The code to run `f` on `args`.
pub fn code_for_call(f: &Function, args: &[IValue]) -> Result<Arc<Code>, Error> {
    executor_of(f)?.plan(args)
}
