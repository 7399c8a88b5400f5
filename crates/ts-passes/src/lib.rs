//! `ts-passes`: graph analyses and passes (PyTorch's `jit/passes` and `jit/ir/alias_analysis`),
//! each a function on a `Graph` in its own module, tested graph-in/graph-out with FileCheck and
//! the verifier; the executor's pipeline ([`executor_pipeline`]); freezing; JIT logging.

pub mod add_if_then_else;
pub mod alias_analysis;
pub mod autodiff;
pub mod batch_mm;
pub mod canonicalize_graph_fuser_ops;
pub mod canonicalize_outputs;
pub mod common_subexpression_elimination;
pub mod concat_opt;
pub mod constant_pooling;
pub mod constant_propagation;
pub mod constant_tensors;
pub mod create_autodiff_subgraphs;
pub mod dead_code_elimination;
pub mod decompose_ops;
pub mod executor_pipeline;
pub mod freeze_module;
pub mod frozen_conv_folding;
pub mod frozen_folding;
pub mod frozen_graph_optimizations;
pub mod frozen_linear_folding;
pub mod frozen_linear_transpose;
pub mod inliner;
pub mod jit_log;
pub mod loop_unrolling;
pub mod lower_tuples;
pub mod memory_locations;
pub mod node_hashing;
pub mod node_schema;
pub mod pass_manager;
pub mod pass_report;
pub mod peephole;
pub mod peephole_alias_sensitive;
pub mod peephole_dict_idioms;
pub mod peephole_list_idioms;
pub mod peephole_non_tensor;
pub mod profiling_record;
pub mod remove_expands;
pub mod remove_mutation;
pub mod shape_analysis;
pub mod side_effects;
#[cfg(test)]
mod test_eval;

pub use alias_analysis::AliasDb;
pub use constant_pooling::constant_pooling;
pub use constant_propagation::{constant_propagation, constant_propagation_immutable_types};
pub use dead_code_elimination::{eliminate_dead_code, eliminate_dead_code_in_block};
pub use executor_pipeline::{
    optimize_graph, optimize_graph_for_grad, ExecutorMode, OptimizeOptions,
};
pub use lower_tuples::lower_simple_tuples;
pub use pass_manager::{PassManager, PassSnapshot};
pub use side_effects::has_side_effects;

/// The cleanup PyTorch runs at the end of compiling a function (`runCleanupPasses`).
pub fn run_cleanup_passes(g: &mut ts_ir::Graph) {
    lower_simple_tuples(g);
    eliminate_dead_code(g);
    constant_propagation_immutable_types(g);
    constant_pooling(g);
    // For jitter: control-flow outputs in the order the program uses them.
    canonicalize_outputs::canonicalize_outputs(g);
}

/// The passes needed before a graph can be interpreted, when optimization is off.
pub fn run_required_passes(g: &mut ts_ir::Graph) {
    eliminate_dead_code(g);
    constant_pooling(g);
}
