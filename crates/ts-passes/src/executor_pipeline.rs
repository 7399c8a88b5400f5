//! The graph executor's optimization pipeline: what runs on a copy of a function's graph before
//! it becomes an execution plan for one argument spec.
//!
//! [`ExecutorMode::Profiling`] (the default) follows PyTorch 2.x's profiling executor, so that
//! its result is what `torch.jit.last_executed_optimized_graph()` shows: shape-independent
//! optimizations (inlining, constant propagation, CSE, peephole, ...), profiling points on the
//! uses an optimizer may specialize, the pre-autodiff pipeline (loop unrolling, list mutation
//! removal, more peephole/constant propagation/CSE) with those points in place, then the
//! points give way to the types the argument spec implies (propagated through the graph),
//! matrix products are batched with them, the type refinements are wiped, and trivial `If`s
//! become `prim::IfThenElse`.
//!
//! [`ExecutorMode::Legacy`] follows PyTorch's original graph executor (the spec's "Graph
//! Executor" section): the inputs are typed by the spec first, shapes are propagated, and the
//! peephole passes use them (`x.dim()` of a rank-2 input is 2); peephole, constant propagation,
//! CSE and loop unrolling then run to a fixed point, and the refined types stay on the graph.

use std::sync::atomic::{AtomicU8, Ordering};

use ts_core::TensorType;
use ts_ir::Graph;

use crate::pass_manager::PassManager;

/// Which executor's pipeline runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ExecutorMode {
    /// PyTorch 2.x's profiling executor (its default).
    #[default]
    Profiling,
    /// PyTorch's original, argument-spec executor with shape-aware peepholes.
    Legacy,
}

/// What the pipeline does.
#[derive(Clone, Copy, Debug)]
pub struct OptimizeOptions {
    /// Run optimizations at all (PyTorch's `torch._C._set_graph_executor_optimize`); when off,
    /// only the passes needed to execute run.
    pub optimize: bool,
    /// Inline calls first (PyTorch inlines before optimizing).
    pub inline: bool,
    /// Which pipeline.
    pub mode: ExecutorMode,
    /// Differentiate symbolically (`prim::DifferentiableGraph`) when an input requires grad;
    /// off, the autograd engine records every operator (`TSRS_JIT_AUTODIFF=0`).
    pub autodiff: bool,
    /// Run the first call of each argument spec as PyTorch's profiling executor does (its
    /// `num_profiled_runs` of 1): on the graph with the required passes only, the full pipeline
    /// running from the second call on. Off (`TSRS_JIT_PROFILED_RUNS=0`, PyTorch's
    /// `_jit_set_num_profiled_runs(0)`), the first call already runs the optimized plan.
    pub profiled_run: bool,
}

impl Default for OptimizeOptions {
    fn default() -> Self {
        OptimizeOptions {
            optimize: true,
            inline: true,
            mode: ExecutorMode::Profiling,
            autodiff: true,
            profiled_run: true,
        }
    }
}

static GLOBAL_OPTIONS: AtomicU8 = AtomicU8::new(0xff);

/// The options executors use, from `set_executor_options` or the environment
/// (`TSRS_JIT_OPTIMIZE=0` turns optimization off, `TSRS_JIT_INLINE=0` inlining,
/// `TSRS_JIT_EXECUTOR=legacy` selects the legacy pipeline, `TSRS_JIT_AUTODIFF=0` symbolic
/// differentiation, `TSRS_JIT_PROFILED_RUNS=0` the unoptimized first call).
pub fn executor_options() -> OptimizeOptions {
    let bits = GLOBAL_OPTIONS.load(Ordering::Relaxed);
    if bits != 0xff {
        return decode(bits);
    }
    let env_off =
        |k: &str| std::env::var(k).is_ok_and(|v| v == "0" || v.eq_ignore_ascii_case("false"));
    let opts = OptimizeOptions {
        optimize: !env_off("TSRS_JIT_OPTIMIZE"),
        inline: !env_off("TSRS_JIT_INLINE"),
        mode: if std::env::var("TSRS_JIT_EXECUTOR").is_ok_and(|v| v.eq_ignore_ascii_case("legacy"))
        {
            ExecutorMode::Legacy
        } else {
            ExecutorMode::Profiling
        },
        autodiff: !env_off("TSRS_JIT_AUTODIFF"),
        profiled_run: !env_off("TSRS_JIT_PROFILED_RUNS"),
    };
    GLOBAL_OPTIONS.store(encode(opts), Ordering::Relaxed);
    opts
}

/// Sets the options every executor uses for plans made from now on.
pub fn set_executor_options(o: OptimizeOptions) {
    GLOBAL_OPTIONS.store(encode(o), Ordering::Relaxed);
}

fn encode(o: OptimizeOptions) -> u8 {
    (o.optimize as u8)
        | ((o.inline as u8) << 1)
        | (((o.mode == ExecutorMode::Legacy) as u8) << 2)
        | ((o.autodiff as u8) << 3)
        | ((o.profiled_run as u8) << 4)
}

fn decode(b: u8) -> OptimizeOptions {
    OptimizeOptions {
        optimize: b & 1 != 0,
        inline: b & 2 != 0,
        mode: if b & 4 != 0 {
            ExecutorMode::Legacy
        } else {
            ExecutorMode::Profiling
        },
        autodiff: b & 8 != 0,
        profiled_run: b & 16 != 0,
    }
}

/// The largest graph (in nodes, blocks included) the executor optimizes; larger ones run with
/// the required passes only, since alias analysis costs memory quadratic in the graph's size.
pub const MAX_OPTIMIZED_NODES: usize = 20_000;

/// Optimizes `g` (a copy of a function's graph) for inputs of the given tensor types (`None`
/// for non-tensor inputs), running each pass through `pm`.
pub fn optimize_graph(
    g: &mut Graph,
    input_types: &[Option<TensorType>],
    opts: OptimizeOptions,
    pm: &mut PassManager,
) {
    let needs_grad = needs_gradient(input_types);
    optimize_graph_for_grad(g, input_types, needs_grad, None, opts, pm)
}

/// The types of a method's module attributes by path from `self` (`["fc1", "weight"]`), as
/// the executor observes them on the module it plans for.
pub type AttributeTypes<'a> = &'a dyn Fn(&[String]) -> Option<TensorType>;

/// As [`optimize_graph`], told whether gradients are needed: an input requiring grad, or (a
/// method) a parameter of its module reached through `prim::GetAttr` that does. `attr_types`
/// types the module attributes the graph reads (the observed types that let a layer's
/// `linear` be differentiated symbolically).
pub fn optimize_graph_for_grad(
    g: &mut Graph,
    input_types: &[Option<TensorType>],
    needs_grad: bool,
    attr_types: Option<AttributeTypes>,
    opts: OptimizeOptions,
    pm: &mut PassManager,
) {
    pm.snapshot("Input", g);
    match opts.mode {
        ExecutorMode::Profiling => {
            profiling_pipeline(g, input_types, needs_grad, attr_types, opts, pm)
        }
        ExecutorMode::Legacy => legacy_pipeline(g, input_types, needs_grad, attr_types, opts, pm),
    }
    crate::graph_dump!("Optimized Graph: ", g);
}

use crate::add_if_then_else::add_if_then_else_op;
use crate::batch_mm::batch_mm;
use crate::canonicalize_graph_fuser_ops::canonicalize_ops;
use crate::common_subexpression_elimination::eliminate_common_subexpression;
use crate::constant_pooling::constant_pooling;
use crate::constant_propagation::constant_propagation;
use crate::create_autodiff_subgraphs::create_autodiff_subgraphs;
use crate::dead_code_elimination::eliminate_dead_code;
use crate::decompose_ops::decompose_ops;
use crate::inliner::inline_calls;
use crate::loop_unrolling::unroll_loops;
use crate::lower_tuples::lower_simple_tuples;
use crate::peephole::peephole_optimize;
use crate::profiling_record::{insert_profile_nodes, remove_profile_nodes_and_specialize_types};
use crate::remove_expands::remove_expands;
use crate::remove_mutation::remove_list_mutation;
use crate::shape_analysis::{
    propagate_input_shapes, remove_tensor_type_specializations, specialize_attribute_types,
    specialize_input_types,
};

fn peephole(g: &mut Graph) -> bool {
    peephole_optimize(g, false)
}

fn required_passes(g: &mut Graph, pm: &mut PassManager) {
    pm.run("RemoveExpands", g, remove_expands);
    pm.run("CanonicalizeOps", g, canonicalize_ops);
    pm.run("EliminateDeadCode", g, eliminate_dead_code);
}

fn profiling_pipeline(
    g: &mut Graph,
    input_types: &[Option<TensorType>],
    needs_grad: bool,
    attr_types: Option<AttributeTypes>,
    opts: OptimizeOptions,
    pm: &mut PassManager,
) {
    // The shapes a graph declares (a traced graph records its example inputs' sizes on every
    // value) are not promises about later inputs: only the ArgumentSpec's types, applied below,
    // may specialize the plan, so `x.size(0)` of a traced graph stays dynamic.
    pm.run("RemoveTensorTypeSpecializations", g, |g| {
        remove_tensor_type_specializations(g);
        true
    });
    // runProfilingInsensitiveOptimizations
    if opts.optimize && opts.inline {
        pm.run("Inline", g, inline_calls);
    }
    required_passes(g, pm);
    if !opts.optimize {
        return;
    }
    pm.run("DecomposeOps", g, decompose_ops);
    pm.run("ConstantPropagation", g, constant_propagation);
    pm.run("EliminateDeadCode", g, eliminate_dead_code);
    pm.run(
        "EliminateCommonSubexpression",
        g,
        eliminate_common_subexpression,
    );
    pm.run("ConstantPooling", g, constant_pooling);
    pm.run("PeepholeOptimize", g, peephole);
    pm.run("EliminateDeadCode", g, eliminate_dead_code);
    pm.run("LowerSimpleTuples", g, lower_simple_tuples);
    // The profiled graph.
    pm.run("InsertProfileNodes", g, |g| insert_profile_nodes(g) > 0);
    // runPreAutodiffPassPipeline
    required_passes(g, pm);
    pm.run("PeepholeOptimize", g, peephole);
    pm.run("ConstantPropagation", g, constant_propagation);
    pm.run("EliminateDeadCode", g, eliminate_dead_code);
    pm.run(
        "EliminateCommonSubexpression",
        g,
        eliminate_common_subexpression,
    );
    pm.run("PeepholeOptimize", g, peephole);
    pm.run("ConstantPropagation", g, constant_propagation);
    pm.run("ConstantPooling", g, constant_pooling);
    pm.run("UnrollLoops", g, unroll_loops);
    pm.run("RemoveListMutation", g, remove_list_mutation);
    pm.run("PeepholeOptimize", g, peephole);
    pm.run("ConstantPropagation", g, constant_propagation);
    pm.run(
        "EliminateCommonSubexpression",
        g,
        eliminate_common_subexpression,
    );
    pm.run("LowerSimpleTuples", g, lower_simple_tuples);
    pm.run("RemoveProfileNodesAndSpecializeTypes", g, |g| {
        remove_profile_nodes_and_specialize_types(g);
        specialize_input_types(g, input_types);
        if let Some(resolve) = attr_types {
            specialize_attribute_types(g, resolve);
        }
        propagate_input_shapes(g);
        true
    });
    if opts.autodiff && needs_grad {
        // The autodiff path: differentiable subgraphs with symbolic gradients; the rest is
        // recorded by the autograd engine. Passes that would break gradients (BatchMM's
        // `prim::` tree reductions) do not run.
        pm.run("CreateAutodiffSubgraphs", g, create_autodiff_subgraphs);
    } else {
        // runNoGradOptimizations
        pm.run("BatchMM", g, batch_mm);
    }
    pm.run("RemoveTensorTypeSpecializations", g, |g| {
        remove_tensor_type_specializations(g);
        true
    });
    pm.run("EliminateDeadCode", g, eliminate_dead_code);
    // runFinalOptimizations
    pm.run("AddIfThenElseOp", g, add_if_then_else_op);
}

fn legacy_pipeline(
    g: &mut Graph,
    input_types: &[Option<TensorType>],
    needs_grad: bool,
    attr_types: Option<AttributeTypes>,
    opts: OptimizeOptions,
    pm: &mut PassManager,
) {
    pm.run("SpecializeInputTypes", g, |g| {
        specialize_input_types(g, input_types);
        true
    });
    if opts.optimize && opts.inline {
        pm.run("Inline", g, inline_calls);
    }
    pm.run("LowerSimpleTuples", g, lower_simple_tuples);
    pm.run("ConstantPooling", g, constant_pooling);
    required_passes(g, pm);
    if !opts.optimize {
        return;
    }
    pm.run("ConstantPropagation", g, constant_propagation);
    if let Some(resolve) = attr_types {
        pm.run("SpecializeAttributeTypes", g, |g| {
            specialize_attribute_types(g, resolve);
            true
        });
    }
    pm.run("PropagateInputShapes", g, propagate_input_shapes);
    // runOptimization, to a fixed point.
    pm.run("EliminateDeadCode", g, eliminate_dead_code);
    for _ in 0..4 {
        let mut changed = false;
        changed |= pm.run(
            "EliminateCommonSubexpression",
            g,
            eliminate_common_subexpression,
        );
        changed |= pm.run("PeepholeOptimize", g, peephole);
        changed |= pm.run("ConstantPropagation", g, constant_propagation);
        pm.run("ConstantPooling", g, constant_pooling);
        if pm.run("UnrollLoops", g, unroll_loops) {
            changed = true;
            pm.run("RemoveListMutation", g, remove_list_mutation);
        }
        changed |= pm.run("PropagateInputShapes", g, propagate_input_shapes);
        if !changed {
            break;
        }
    }
    // runNondiffOptimization
    pm.run("DecomposeOps", g, decompose_ops);
    pm.run("LowerSimpleTuples", g, lower_simple_tuples);
    if opts.autodiff && needs_grad {
        pm.run("CreateAutodiffSubgraphs", g, create_autodiff_subgraphs);
    } else {
        pm.run("BatchMM", g, batch_mm);
    }
    pm.run("EliminateDeadCode", g, eliminate_dead_code);
}

/// True when some input's type says it requires grad (the argument spec records that only
/// with grad mode on): the graph takes PyTorch's autodiff path.
pub fn needs_gradient(input_types: &[Option<TensorType>]) -> bool {
    input_types
        .iter()
        .flatten()
        .any(|t| t.requires_grad == Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, FileCheck};

    const LSTM: &str = "graph(%x : Tensor, %hx : Tensor, %cx : Tensor, %w_ih : Tensor, %w_hh : Tensor, %b_ih : Tensor, %b_hh : Tensor):\n  %7 : int = prim::Constant[value=4]()\n  %8 : int = prim::Constant[value=1]()\n  %9 : Tensor = aten::t(%w_ih)\n  %10 : Tensor = aten::mm(%x, %9)\n  %11 : Tensor = aten::t(%w_hh)\n  %12 : Tensor = aten::mm(%hx, %11)\n  %13 : Tensor = aten::add(%10, %12, %8)\n  %14 : Tensor = aten::add(%13, %b_ih, %8)\n  %gates : Tensor = aten::add(%14, %b_hh, %8)\n  %16 : Tensor[] = aten::chunk(%gates, %7, %8)\n  %i1 : Tensor, %f1 : Tensor, %c1 : Tensor, %o1 : Tensor = prim::ListUnpack(%16)\n  %i : Tensor = aten::sigmoid(%i1)\n  %f : Tensor = aten::sigmoid(%f1)\n  %c : Tensor = aten::tanh(%c1)\n  %o : Tensor = aten::sigmoid(%o1)\n  %25 : Tensor = aten::mul(%f, %cx)\n  %26 : Tensor = aten::mul(%i, %c)\n  %cy : Tensor = aten::add(%25, %26, %8)\n  %28 : Tensor = aten::tanh(%cy)\n  %hy : Tensor = aten::mul(%o, %28)\n  %30 : (Tensor, Tensor) = prim::TupleConstruct(%hy, %cy)\n  return (%30)\n";

    #[test]
    fn profiling_pipeline_matches_the_spec_example() {
        let mut g = parse_ir(LSTM).unwrap();
        let mut pm = PassManager::new().verify_each(true).record(true);
        optimize_graph(&mut g, &[], OptimizeOptions::default(), &mut pm);
        FileCheck::new()
            .check("prim::ConstantChunk[chunks=4, dim=1](%gates)")
            .check_not("prim::ListUnpack")
            .check_not("prim::profile")
            .check_not("Float(")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
        assert!(pm.snapshots().len() > 20);
    }

    #[test]
    fn inputs_requiring_grad_take_the_autodiff_path() {
        let ty = |rank: usize, requires_grad: bool| {
            Some(TensorType {
                dtype: Some(ts_tensor::DType::Float32),
                device: Some(ts_tensor::Device::Cpu),
                sizes: Some(vec![None; rank]),
                strides: None,
                requires_grad: Some(requires_grad),
                undefined: Some(false),
            })
        };
        let types = |rg: bool| {
            vec![
                ty(2, rg),
                ty(2, rg),
                ty(2, rg),
                ty(2, rg),
                ty(2, rg),
                ty(1, rg),
                ty(1, rg),
            ]
        };
        let mut g = parse_ir(LSTM).unwrap();
        let mut pm = PassManager::new().verify_each(true);
        optimize_graph(&mut g, &types(true), OptimizeOptions::default(), &mut pm);
        FileCheck::new()
            .check("prim::DifferentiableGraph_0(")
            .check("prim::ConstantChunk")
            .check("prim::DifferentiableGraph_1(")
            .check("with prim::DifferentiableGraph_0 = graph(")
            .check("aten::mm")
            .check("with prim::DifferentiableGraph_1 = graph(")
            .check("aten::sigmoid")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
        // Without gradients, or with the pass turned off, the graph stays flat.
        for (rg, autodiff) in [(false, true), (true, false)] {
            let mut g = parse_ir(LSTM).unwrap();
            let opts = OptimizeOptions {
                autodiff,
                ..OptimizeOptions::default()
            };
            optimize_graph(&mut g, &types(rg), opts, &mut pm);
            FileCheck::new()
                .check_not("prim::DifferentiableGraph")
                .run_graph(&g)
                .unwrap_or_else(|e| panic!("{e}\n{g}"));
        }
    }

    #[test]
    fn legacy_pipeline_keeps_specialized_types() {
        let mut g = parse_ir(LSTM).unwrap();
        let f2 = TensorType {
            dtype: Some(ts_tensor::DType::Float32),
            device: Some(ts_tensor::Device::Cpu),
            sizes: Some(vec![None, None]),
            strides: None,
            requires_grad: Some(false),
            undefined: None,
        };
        let types = vec![Some(f2); 5];
        let mut pm = PassManager::new().verify_each(true);
        optimize_graph(
            &mut g,
            &types,
            OptimizeOptions {
                mode: ExecutorMode::Legacy,
                ..OptimizeOptions::default()
            },
            &mut pm,
        );
        FileCheck::new()
            .check("Float(*, *, requires_grad=0, device=cpu) = aten::mm")
            .check("prim::ConstantChunk")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }
}
