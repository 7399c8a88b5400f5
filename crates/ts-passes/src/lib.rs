//! `ts-passes`: graph passes (PyTorch's `jit/passes`), each a function on a `Graph` in its own
//! module, tested graph-in/graph-out with FileCheck and the verifier.

pub mod constant_pooling;
pub mod constant_propagation;
pub mod dead_code_elimination;
pub mod lower_tuples;
pub mod side_effects;

pub use constant_pooling::constant_pooling;
pub use constant_propagation::constant_propagation_immutable_types;
pub use dead_code_elimination::eliminate_dead_code;
pub use lower_tuples::lower_simple_tuples;
pub use side_effects::has_side_effects;

/// The cleanup PyTorch runs at the end of compiling a function (`runCleanupPasses`).
pub fn run_cleanup_passes(g: &mut ts_ir::Graph) {
    lower_simple_tuples(g);
    eliminate_dead_code(g);
    constant_propagation_immutable_types(g);
    constant_pooling(g);
}

/// The passes the graph executor runs before interpreting a graph.
pub fn run_required_passes(g: &mut ts_ir::Graph) {
    eliminate_dead_code(g);
    constant_pooling(g);
}
