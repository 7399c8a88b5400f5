//! Running passes by name: the registry of named graph passes (used by the executor's pipeline,
//! filetests and tools), and [`PassManager`], which runs a sequence of them with the cross-cutting
//! concerns in one place: JIT logging before/after each pass, the verifier after each pass (in
//! tests and when asked), and snapshots of the graph after each pass (what `tsrs graph --format
//! html` shows). New pipelines (the profiling executor with guards, the fuser, autodiff) add
//! passes to the registry and run them through a `PassManager`.

use ts_ir::Graph;

/// A graph pass: rewrites the graph, returns whether it changed anything.
pub type GraphPass = fn(&mut Graph) -> bool;

/// The named passes, with PyTorch's names.
pub fn registered_passes() -> &'static [(&'static str, GraphPass)] {
    &[
        ("Inline", crate::inliner::inline_calls),
        (
            "CanonicalizeOutputs",
            crate::canonicalize_outputs::canonicalize_outputs,
        ),
        (
            "EliminateDeadCode",
            crate::dead_code_elimination::eliminate_dead_code,
        ),
        (
            "ConstantPropagation",
            crate::constant_propagation::constant_propagation,
        ),
        (
            "ConstantPropagationImmutableTypes",
            crate::constant_propagation::constant_propagation_immutable_types,
        ),
        ("ConstantPooling", crate::constant_pooling::constant_pooling),
        (
            "CreateAutodiffSubgraphs",
            crate::create_autodiff_subgraphs::create_autodiff_subgraphs,
        ),
        (
            "EliminateCommonSubexpression",
            crate::common_subexpression_elimination::eliminate_common_subexpression,
        ),
        ("PeepholeOptimize", peephole_with_shapes),
        ("PeepholeOptimizeNoShapes", peephole_without_shapes),
        (
            "PeepholeOptimizeListIdioms",
            crate::peephole_list_idioms::peephole_optimize_list_idioms,
        ),
        (
            "PeepholeOptimizeDictIdioms",
            crate::peephole_dict_idioms::peephole_optimize_dict_idioms,
        ),
        (
            "PeepholeOptimizeAliasSensitive",
            alias_sensitive_with_shapes,
        ),
        (
            "PeepholeOptimizeNonTensor",
            crate::peephole_non_tensor::peephole_optimize_non_tensor,
        ),
        ("CombineConcats", crate::concat_opt::combine_concats),
        ("UnrollLoops", crate::loop_unrolling::unroll_loops),
        (
            "UnrollConstantLoops",
            crate::loop_unrolling::unroll_constant_loops,
        ),
        (
            "CanonicalizeOps",
            crate::canonicalize_graph_fuser_ops::canonicalize_ops,
        ),
        ("DecomposeOps", crate::decompose_ops::decompose_ops),
        (
            "RemoveListMutation",
            crate::remove_mutation::remove_list_mutation,
        ),
        ("RemoveTensorMutation", remove_tensor_mutation_all),
        ("RemoveExpands", crate::remove_expands::remove_expands),
        (
            "LowerSimpleTuples",
            crate::lower_tuples::lower_simple_tuples,
        ),
        (
            "PropagateInputShapes",
            crate::shape_analysis::propagate_input_shapes,
        ),
        ("RemoveTensorTypeSpecializations", remove_specializations),
        ("BatchMM", crate::batch_mm::batch_mm),
        (
            "AddIfThenElseOp",
            crate::add_if_then_else::add_if_then_else_op,
        ),
        ("InsertProfileNodes", insert_profiles),
        ("RemoveProfileNodesAndSpecializeTypes", remove_profiles),
        (
            "RemoveDropout",
            crate::frozen_graph_optimizations::remove_dropout,
        ),
        (
            "FoldFrozenConvBatchnorm",
            crate::frozen_conv_folding::fold_frozen_conv_batchnorm,
        ),
        (
            "FoldFrozenConvAddOrSub",
            crate::frozen_conv_folding::fold_frozen_conv_add_or_sub,
        ),
        (
            "FoldFrozenConvMulOrDiv",
            crate::frozen_conv_folding::fold_frozen_conv_mul_or_div,
        ),
        (
            "FoldFrozenLinearBatchnorm",
            crate::frozen_linear_folding::fold_frozen_linear_batchnorm,
        ),
        (
            "FoldFrozenLinearAddOrMul",
            crate::frozen_linear_folding::fold_frozen_linear_add_or_mul,
        ),
        (
            "FrozenLinearTranspose",
            crate::frozen_linear_transpose::frozen_linear_transpose,
        ),
    ]
}

fn peephole_with_shapes(g: &mut Graph) -> bool {
    crate::peephole::peephole_optimize(g, false)
}

fn peephole_without_shapes(g: &mut Graph) -> bool {
    crate::peephole::peephole_optimize(g, true)
}

fn alias_sensitive_with_shapes(g: &mut Graph) -> bool {
    crate::peephole_alias_sensitive::peephole_optimize_alias_sensitive(g, true)
}

fn remove_tensor_mutation_all(g: &mut Graph) -> bool {
    crate::remove_mutation::remove_tensor_mutation(g, None)
}

fn remove_specializations(g: &mut Graph) -> bool {
    crate::shape_analysis::remove_tensor_type_specializations(g);
    true
}

fn insert_profiles(g: &mut Graph) -> bool {
    crate::profiling_record::insert_profile_nodes(g) > 0
}

fn remove_profiles(g: &mut Graph) -> bool {
    crate::profiling_record::remove_profile_nodes_and_specialize_types(g);
    true
}

/// The pass registered under `name`.
pub fn pass_by_name(name: &str) -> Option<GraphPass> {
    registered_passes()
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, p)| *p)
}

/// The graph after one pass, for pictures of what the optimizer did.
#[derive(Clone, Debug)]
pub struct PassSnapshot {
    /// The pass (or pipeline stage) name.
    pub pass: String,
    /// Whether the pass reported a change.
    pub changed: bool,
    /// The graph after it.
    pub graph: Graph,
}

/// Runs passes with logging, optional verification and optional snapshots.
#[derive(Default)]
pub struct PassManager {
    verify: bool,
    snapshots: Option<Vec<PassSnapshot>>,
}

impl PassManager {
    /// A manager that neither verifies nor records.
    pub fn new() -> PassManager {
        PassManager::default()
    }

    /// Runs the verifier after every pass (a failure panics with the pass name: a pass bug).
    pub fn verify_each(mut self, on: bool) -> PassManager {
        self.verify = on;
        self
    }

    /// Records the graph after every pass (see [`PassManager::snapshots`]).
    pub fn record(mut self, on: bool) -> PassManager {
        self.snapshots = on.then(Vec::new);
        self
    }

    /// Records `g` under `label` (e.g. the input graph) when recording.
    pub fn snapshot(&mut self, label: &str, g: &Graph) {
        if let Some(s) = &mut self.snapshots {
            s.push(PassSnapshot {
                pass: label.to_string(),
                changed: true,
                graph: g.clone(),
            });
        }
    }

    /// The recorded snapshots, in order.
    pub fn snapshots(&self) -> &[PassSnapshot] {
        self.snapshots.as_deref().unwrap_or(&[])
    }

    /// Takes the recorded snapshots.
    pub fn take_snapshots(&mut self) -> Vec<PassSnapshot> {
        self.snapshots
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Runs `pass` as `name`.
    pub fn run(
        &mut self,
        name: &str,
        g: &mut Graph,
        pass: impl FnOnce(&mut Graph) -> bool,
    ) -> bool {
        crate::graph_debug!("Before {name}\n{}", crate::jit_log::graph_text(g));
        let changed = pass(g);
        crate::graph_debug!("After {name}\n{}", crate::jit_log::graph_text(g));
        if self.verify {
            if let Err(e) = ts_ir::verify(g) {
                panic!("the graph is invalid after {name}: {e}\n{g}");
            }
        }
        if let Some(s) = &mut self.snapshots {
            s.push(PassSnapshot {
                pass: name.to_string(),
                changed,
                graph: g.clone(),
            });
        }
        changed
    }

    /// Runs the registered pass `name`; `false` (and nothing runs) when there is none.
    pub fn run_named(&mut self, name: &str, g: &mut Graph) -> bool {
        match pass_by_name(name) {
            Some(p) => self.run(name, g, p),
            None => false,
        }
    }
}
