//! Common subexpression elimination (PyTorch's `EliminateCommonSubexpression`): a node equal
//! to an earlier one in its block, or in an enclosing block, is replaced by it. Alias analysis
//! keeps it sound: nodes whose inputs or outputs are written are skipped, replacing a node by
//! one from an enclosing block must not change observable aliasing, and two values that may
//! both reach the graph's outputs are not merged (the caller could mutate one of them).
//! Nodes with side effects, random nodes and profiling nodes are never merged.

use std::collections::HashMap;

use ts_core::prim;
use ts_ir::{BlockId, Graph, NodeId};

use crate::alias_analysis::AliasDb;
use crate::node_hashing::{node_key, nodes_equal, NodeKey};
use crate::side_effects::{is_nondeterministic, node_has_side_effects};

/// Runs CSE over the graph; returns whether anything was replaced.
pub fn eliminate_common_subexpression(g: &mut Graph) -> bool {
    crate::graph_dump!("Before CSE", g);
    let mut cse = Cse {
        alias_db: None,
        scopes: Vec::new(),
    };
    let top = g.block();
    let changed = cse.run_block(g, top);
    crate::graph_dump!("After CSE", g);
    changed
}

struct Cse {
    alias_db: Option<AliasDb>,
    /// The expressions seen in each enclosing block, outermost first.
    scopes: Vec<HashMap<NodeKey, NodeId>>,
}

impl Cse {
    fn alias_db(&mut self, g: &Graph) -> &AliasDb {
        self.alias_db.get_or_insert_with(|| AliasDb::new(g))
    }

    fn run_block(&mut self, g: &mut Graph, b: BlockId) -> bool {
        self.scopes.push(HashMap::new());
        let mut changed = false;
        for n in g.block_nodes(b) {
            if !g.is_alive(n) {
                continue;
            }
            let kind = g.node(n).kind();
            if kind == prim::profile {
                crate::graph_debug!("Profiled nodes shouldn't be CSE'ed: {kind}");
                continue;
            }
            if node_has_side_effects(g, n) {
                crate::graph_debug!("Node was skipped due to side effects: {kind}");
                continue;
            }
            if is_nondeterministic(g, n) {
                crate::graph_debug!("Node was skipped due to its non determinism: {kind}");
                continue;
            }
            if !g.node(n).blocks().is_empty() {
                for sb in g.node(n).blocks().to_vec() {
                    changed |= self.run_block(g, sb);
                }
                continue;
            }
            if self.alias_db(g).node_has_writers(g, n) {
                crate::graph_debug!("Node was skipped due to alias analysis result: {kind}");
                continue;
            }
            let Some(key) = node_key(g, n) else {
                continue;
            };
            // An equal node in an enclosing block.
            let depth = self.scopes.len();
            let parent = self.scopes[..depth - 1]
                .iter()
                .rev()
                .find_map(|s| s.get(&key).copied())
                .filter(|&p| g.is_alive(p) && nodes_equal(g, n, p));
            if let Some(p) = parent {
                let (no, po) = (g.node(n).outputs().to_vec(), g.node(p).outputs().to_vec());
                if !self
                    .alias_db(g)
                    .safe_to_change_aliasing_relationship(g, &no, &po)
                {
                    continue;
                }
                crate::graph_update!(
                    "Replacing {} with an equal node of an enclosing block",
                    kind
                );
                replace(g, n, p);
                changed = true;
                continue;
            }
            let scope = self.scopes.last_mut().expect("a scope per block");
            let existing = match scope.get(&key) {
                Some(&e) if g.is_alive(e) && nodes_equal(g, n, e) => e,
                _ => {
                    scope.insert(key, n);
                    continue;
                }
            };
            // Don't introduce new aliasing among graph outputs.
            let outs = g.outputs().to_vec();
            let (no, eo) = (
                g.node(n).outputs().to_vec(),
                g.node(existing).outputs().to_vec(),
            );
            let db = self.alias_db(g);
            if db.may_contain_alias_any(g, &no, &outs) && db.may_contain_alias_any(g, &eo, &outs) {
                continue;
            }
            crate::graph_update!("Replacing {} with an equal earlier node", kind);
            replace(g, n, existing);
            changed = true;
        }
        self.scopes.pop();
        changed
    }
}

fn replace(g: &mut Graph, n: NodeId, with: NodeId) {
    g.replace_all_outputs_with(n, with);
    let _ = g.destroy_node(n);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn merges_equal_pure_nodes_across_blocks() {
        let mut g = parse_ir(
            "graph(%x : Tensor, %c : bool):\n  %a : Tensor = aten::relu(%x)\n  %b : Tensor = aten::relu(%x)\n  %y : Tensor = prim::If(%c)\n    block0():\n      %d : Tensor = aten::relu(%x)\n      -> (%d)\n    block1():\n      -> (%a)\n  %s : Tensor = aten::mul(%a, %b)\n  %t : Tensor = aten::mul(%s, %y)\n  return (%t)\n",
        )
        .unwrap();
        assert!(eliminate_common_subexpression(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check_count("aten::relu", 1, true)
            .run_graph(&g)
            .unwrap();
    }

    #[test]
    fn keeps_written_random_and_output_aliasing_nodes() {
        let mut g = parse_ir(
            "graph(%x : Tensor):\n  %one : int = prim::Constant[value=1]()\n  %p : float = prim::Constant[value=0.5]()\n  %t : bool = prim::Constant[value=1]()\n  %a : Tensor = aten::mul(%x, %one)\n  %b : Tensor = aten::mul(%x, %one)\n  %w : Tensor = aten::add_(%a, %one, %one)\n  %d1 : Tensor = aten::dropout(%x, %p, %t)\n  %d2 : Tensor = aten::dropout(%x, %p, %t)\n  %v1 : Tensor = aten::view_as(%x, %x)\n  %v2 : Tensor = aten::view_as(%x, %x)\n  %r : (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %d1, %d2, %v1, %v2)\n  return (%r)\n",
        )
        .unwrap();
        assert!(!eliminate_common_subexpression(&mut g));
        FileCheck::new()
            .check_count("aten::mul", 2, true)
            .check_count("aten::dropout", 2, true)
            .check_count("aten::view_as", 2, true)
            .run_graph(&g)
            .unwrap();
    }
}
