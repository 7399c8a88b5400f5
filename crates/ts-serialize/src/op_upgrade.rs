//! Keeps old archives meaning what they meant when saved: nodes of operators whose behaviour
//! changed after the archive's file-format version are pointed at the upgrader that reproduces
//! the old behaviour ([`ts_ops::upgraders`]), as PyTorch's loader does.

use ts_core::Symbol;
use ts_ir::{CompilationUnit, Graph};

/// The newest file-format version with an upgrader; archives at or above the next one need no
/// rewriting.
const NEWEST_UPGRADED_VERSION: u64 = 4;

/// Rewrites every function of `cu` compiled from an archive of file-format `version`.
pub fn upgrade_operators(cu: &CompilationUnit, version: u64) {
    if version > NEWEST_UPGRADED_VERSION {
        return;
    }
    for f in cu.functions() {
        if let Some(g) = f.graph() {
            let mut g = (*g).clone();
            if upgrade_graph(&mut g, version) > 0 {
                f.set_graph(g);
            }
        }
    }
}

/// Points each node whose operator changed after `version` at its upgrader; returns how many.
pub fn upgrade_graph(g: &mut Graph, version: u64) -> usize {
    let registry = ts_ops::registry();
    let mut n = 0;
    for node in g.all_nodes() {
        let Some(op) = registry.match_node(g, node) else {
            continue;
        };
        if let Some(up) = ts_ops::upgraders::upgrader_for(&op.full_name(), version) {
            g.set_kind(node, Symbol::new(up));
            n += 1;
        }
    }
    n
}
