//! The graph executor: specializes a function's graph to the argument properties that change
//! how it runs (an `ArgumentSpec`: per tensor input whether it is defined, its dtype, rank,
//! device and requires_grad, the latter only with grad mode on, as in PyTorch; tuples
//! flattened), optimizes a copy for each spec with the
//! pipeline of [`ts_passes::executor_pipeline`] (inlining, constant propagation, CSE, peephole,
//! loop unrolling, ...), and keeps one execution plan (optimized graph + code) per spec.
//!
//! As in PyTorch's profiling executor, the first call of each spec is a profiling run: it runs
//! the graph with the required passes only (no inlining, no optimization), and calls it makes
//! run so too; the optimized plan is made on the second call. A process that calls a model
//! once (`tsrs run`) does not pay for optimizing it (for ResNet-18, about as long as the
//! forward itself). [`GraphExecutor::execution_plan`] asks for the optimized plan directly.
//!
//! The graph of the plan a thread ran last is kept, as PyTorch's
//! `torch.jit.last_executed_optimized_graph()`: [`last_executed_optimized_graph`].

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use ts_core::{IValue, TensorType, Type};
use ts_ir::{Function, Graph};
use ts_passes::{OptimizeOptions, PassManager};
use ts_tensor::autograd::is_grad_enabled;
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
    /// A module (`self` of a method) with a parameter or buffer that requires grad, with grad
    /// mode on: the plan takes the autodiff path as for an input that requires grad, with its
    /// attributes typed as observed; the value fingerprints those types (dtype, rank,
    /// requires_grad of every tensor attribute), so a reassigned attribute gets a new plan.
    ModuleRequiresGrad(u64),
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
                requires_grad: m.requires_grad && is_grad_enabled(),
                device: m.storage.device().to_string(),
            })
        }
        IValue::Tuple(t) => t.elements.iter().for_each(|e| flatten(e, out)),
        IValue::None => out.push(ArgInfo::UndefinedTensor),
        IValue::Object(o) if is_grad_enabled() && object_requires_grad(o, 0) => {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            hash_attribute_types(o, 0, &mut h);
            out.push(ArgInfo::ModuleRequiresGrad(std::hash::Hasher::finish(&h)))
        }
        _ => out.push(ArgInfo::Other),
    }
}

/// True when a tensor attribute of `o` or of its submodules (and their tensor lists)
/// requires grad.
fn object_requires_grad(o: &ts_core::Object, depth: usize) -> bool {
    if depth > 32 {
        return false;
    }
    o.slots.read().iter().any(|v| match v {
        IValue::Tensor(t) => t.requires_grad(),
        IValue::Object(sub) => object_requires_grad(sub, depth + 1),
        IValue::List(l) => l
            .items
            .read()
            .iter()
            .any(|x| x.as_tensor().is_some_and(|t| t.requires_grad())),
        _ => false,
    })
}

/// Hashes what a plan specialized to `o`'s attributes depends on: the dtype, rank and
/// requires_grad of each tensor attribute, by position, through submodules.
fn hash_attribute_types(o: &ts_core::Object, depth: usize, h: &mut impl std::hash::Hasher) {
    use std::hash::Hash;
    if depth > 32 {
        return;
    }
    for (i, v) in o.slots.read().iter().enumerate() {
        match v {
            IValue::Tensor(t) => {
                let m = t.meta();
                (i, m.dtype as u8, m.sizes.len(), m.requires_grad).hash(h);
            }
            IValue::Object(sub) => {
                (i, usize::MAX).hash(h);
                hash_attribute_types(sub, depth + 1, h);
            }
            _ => {}
        }
    }
}

/// The tensor attribute of `o` at `path` (attribute names from `o`), typed as the argument
/// spec types inputs.
fn attribute_type(o: &Arc<ts_core::Object>, path: &[String]) -> Option<TensorType> {
    let mut cur = IValue::Object(o.clone());
    for name in path {
        let IValue::Object(obj) = &cur else {
            return None;
        };
        let slot = obj
            .class
            .attributes()
            .iter()
            .position(|a| &a.name == name)?;
        let next = obj.slots.read().get(slot)?.clone();
        cur = next;
    }
    spec_type_of(&cur)
}

/// The tensor type an argument spec guarantees for a value (dtype, rank, device,
/// requires_grad; sizes stay unknown so that one plan serves every size).
pub fn spec_type_of(v: &IValue) -> Option<TensorType> {
    let IValue::Tensor(t) = v else {
        return None;
    };
    let m = t.meta();
    Some(TensorType {
        dtype: Some(m.dtype),
        device: Some(m.storage.device()),
        sizes: Some(vec![None; m.sizes.len()]),
        strides: None,
        requires_grad: Some(m.requires_grad && is_grad_enabled()),
        undefined: Some(false),
    })
}

/// One plan: the graph as optimized for a spec, and its code.
pub struct ExecutionPlan {
    pub graph: Arc<Graph>,
    pub code: Arc<Code>,
    /// Whether this is a profiling run's plan (required passes only), not the optimized one.
    pub profiling: bool,
}

/// Plans per argument spec for one graph.
pub struct GraphExecutor {
    graph: Arc<Graph>,
    name: String,
    plans: Mutex<HashMap<ArgumentSpec, Arc<ExecutionPlan>>>,
    /// The profiling runs' plans of the specs that have no optimized plan yet.
    profiling: Mutex<HashMap<ArgumentSpec, Arc<ExecutionPlan>>>,
    hits: AtomicUsize,
    misses: AtomicUsize,
}

thread_local! {
    static LAST_EXECUTED: RefCell<Option<Arc<Graph>>> = const { RefCell::new(None) };
    /// Whether this thread is inside a profiling run: the calls it makes take their specs'
    /// profiling plans too (a block class called eight times in one forward is not optimized
    /// at its second call).
    static IN_PROFILING_RUN: Cell<bool> = const { Cell::new(false) };
}

/// Marks this thread as inside a profiling run until dropped (see [`GraphExecutor::plan_for_call`]).
pub struct ProfilingRun {
    outer: bool,
}

impl ProfilingRun {
    /// Enters a profiling run when `plan` is a profiling plan (otherwise changes nothing).
    pub fn enter(plan: &ExecutionPlan) -> ProfilingRun {
        let outer = IN_PROFILING_RUN.with(|c| c.replace(c.get() || plan.profiling));
        ProfilingRun { outer }
    }
}

impl Drop for ProfilingRun {
    fn drop(&mut self) {
        IN_PROFILING_RUN.with(|c| c.set(self.outer));
    }
}

/// The optimized graph of the last plan this thread ran (PyTorch's
/// `torch.jit.last_executed_optimized_graph()`).
pub fn last_executed_optimized_graph() -> Option<Arc<Graph>> {
    LAST_EXECUTED.with(|l| l.borrow().clone())
}

impl GraphExecutor {
    /// An executor for `graph`.
    pub fn new(graph: Arc<Graph>, name: &str) -> GraphExecutor {
        GraphExecutor {
            graph,
            name: name.to_string(),
            plans: Mutex::new(HashMap::new()),
            profiling: Mutex::new(HashMap::new()),
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
        }
    }

    /// The code of the optimized plan for these inputs, creating it on a cache miss.
    pub fn plan(&self, inputs: &[IValue]) -> Result<Arc<Code>, Error> {
        Ok(self.execution_plan(inputs)?.code.clone())
    }

    /// The plan a call with these inputs runs: the optimized plan once there is one; else,
    /// with profiled runs on, the spec's profiling plan on its first call and on every call
    /// inside a profiling run; else the optimized plan, made now.
    pub fn plan_for_call(&self, inputs: &[IValue]) -> Result<Arc<ExecutionPlan>, Error> {
        let spec = ArgumentSpec::of(inputs);
        let cached = self.plans.lock().get(&spec).cloned();
        if let Some(p) = cached {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(remember(p));
        }
        let opts = self.options();
        if opts.optimize && opts.profiled_run {
            let nested = IN_PROFILING_RUN.with(|c| c.get());
            let seen = self.profiling.lock().get(&spec).cloned();
            match seen {
                Some(p) if nested => {
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(remember(p));
                }
                // The second call: the optimized plan replaces the profiling one.
                Some(_) => {
                    self.profiling.lock().remove(&spec);
                }
                None => {
                    self.misses.fetch_add(1, Ordering::Relaxed);
                    let unoptimized = OptimizeOptions {
                        optimize: false,
                        ..opts
                    };
                    let p = self.make_plan(inputs, unoptimized, true)?;
                    return Ok(remember(keep(&self.profiling, spec, p)));
                }
            }
        }
        self.optimized_plan(spec, inputs, opts)
    }

    /// The optimized plan for these inputs, creating it on a cache miss.
    pub fn execution_plan(&self, inputs: &[IValue]) -> Result<Arc<ExecutionPlan>, Error> {
        let spec = ArgumentSpec::of(inputs);
        let cached = self.plans.lock().get(&spec).cloned();
        match cached {
            Some(p) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Ok(remember(p))
            }
            None => self.optimized_plan(spec, inputs, self.options()),
        }
    }

    /// The executor options for this graph: AliasDb's bitsets grow with the square of the
    /// graph, so generated graphs of tens of thousands of nodes run with the required passes
    /// only.
    fn options(&self) -> OptimizeOptions {
        let mut opts = ts_passes::executor_pipeline::executor_options();
        if self.graph.all_nodes().len() > ts_passes::executor_pipeline::MAX_OPTIMIZED_NODES {
            opts.optimize = false;
        }
        opts
    }

    /// Makes and caches the optimized plan of `spec` (a miss).
    fn optimized_plan(
        &self,
        spec: ArgumentSpec,
        inputs: &[IValue],
        opts: OptimizeOptions,
    ) -> Result<Arc<ExecutionPlan>, Error> {
        self.misses.fetch_add(1, Ordering::Relaxed);
        let plan = self.make_plan(inputs, opts, false)?;
        Ok(remember(keep(&self.plans, spec, plan)))
    }

    /// A plan for these inputs with `opts` (`profiling`: a profiling run's).
    fn make_plan(
        &self,
        inputs: &[IValue],
        opts: OptimizeOptions,
        profiling: bool,
    ) -> Result<ExecutionPlan, Error> {
        let optimized = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.optimized_graph(inputs, opts, &mut PassManager::new())
        }));
        // A pass failing is a bug; the function still runs, unoptimized.
        let g = optimized.unwrap_or_else(|_| {
            let mut g = self.graph.copy();
            ts_passes::run_required_passes(&mut g);
            g
        });
        let code = Arc::new(Code::new(&g, &self.name)?);
        Ok(ExecutionPlan {
            graph: Arc::new(g),
            code,
            profiling,
        })
    }

    /// The graph a plan for `inputs` runs: the function's graph optimized for the inputs'
    /// spec with `opts`, each pass run through `pm` (which may record snapshots).
    pub fn optimized_graph(
        &self,
        inputs: &[IValue],
        opts: OptimizeOptions,
        pm: &mut PassManager,
    ) -> Graph {
        let mut g = self.graph.copy();
        let types: Vec<Option<TensorType>> = if inputs.len() == g.inputs().len() {
            inputs.iter().map(spec_type_of).collect()
        } else {
            vec![]
        };
        let module = match inputs.first() {
            Some(IValue::Object(o)) if is_grad_enabled() && object_requires_grad(o, 0) => {
                Some(o.clone())
            }
            _ => None,
        };
        let needs_grad = module.is_some() || ts_passes::executor_pipeline::needs_gradient(&types);
        let resolve = |path: &[String]| attribute_type(module.as_ref()?, path);
        let attr_types: Option<ts_passes::executor_pipeline::AttributeTypes> =
            module.is_some().then_some(&resolve);
        ts_passes::optimize_graph_for_grad(&mut g, &types, needs_grad, attr_types, opts, pm);
        if !opts.optimize {
            ts_passes::run_required_passes(&mut g);
        }
        g
    }

    /// The graph typed for `spec` before any pass: tensor inputs take the spec's dtype, rank,
    /// device and requires_grad.
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
        g
    }

    /// How many optimized plans (one per distinct argument spec) are cached.
    pub fn plan_count(&self) -> usize {
        self.plans.lock().len()
    }

    /// (cache hits, cache misses) so far: a call or request that found its plan (profiling or
    /// optimized) made already, and one that made it.
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

/// The code to run `f` on `args` (see [`GraphExecutor::plan_for_call`]).
pub fn code_for_call(f: &Function, args: &[IValue]) -> Result<Arc<Code>, Error> {
    Ok(executor_of(f)?.plan_for_call(args)?.code.clone())
}

/// Caches `plan` for `spec` in `plans`, unless another thread made one first; returns the one
/// kept.
fn keep(
    plans: &Mutex<HashMap<ArgumentSpec, Arc<ExecutionPlan>>>,
    spec: ArgumentSpec,
    plan: ExecutionPlan,
) -> Arc<ExecutionPlan> {
    plans
        .lock()
        .entry(spec)
        .or_insert_with(|| Arc::new(plan))
        .clone()
}

/// Records `plan` as the last one this thread ran, and returns it.
fn remember(plan: Arc<ExecutionPlan>) -> Arc<ExecutionPlan> {
    LAST_EXECUTED.with(|l| {
        let mut l = l.borrow_mut();
        if !l.as_ref().is_some_and(|g| Arc::ptr_eq(g, &plan.graph)) {
            *l = Some(plan.graph.clone());
        }
    });
    plan
}
