//! Dead code elimination (PyTorch's `EliminateDeadCode`), an inverse mark and sweep: the
//! return node, nodes with side effects and nodes writing memory from outside the graph are
//! live; a node is live when it produces a live value or writes memory a live value may
//! point to (alias analysis); loops are marked to a fixed point; everything unmarked is
//! removed, innermost first, together with the unused outputs of `If` and `Loop` nodes.
//!
//! [`eliminate_dead_code`] works on the whole graph with an [`AliasDb`];
//! [`eliminate_dead_code_in_block`] works without one (any node whose schema writes is kept),
//! for passes that clean up a block they just built.

// Keyed by dense arena ids: foldhash, not SipHash (hashing was ~10% of compile time).
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use ts_core::prim;
use ts_ir::{BlockId, Graph, NodeId, ValueId};

use crate::alias_analysis::AliasDb;
use crate::memory_locations::MemoryLocations;
use crate::side_effects::{node_has_side_effects, schema_is_mutable};

/// The name [`eliminate_dead_code`] records its fixed points under ([`Graph::is_fixed_point`]).
const FIXED_POINT: &str = "EliminateDeadCode";

/// Runs DCE over the whole graph with alias analysis; returns whether anything was removed.
/// A graph unchanged since a run that removed nothing is not analyzed again (the pipelines
/// run DCE after most passes, and each run with a writer in the graph builds an AliasDb).
pub fn eliminate_dead_code(g: &mut Graph) -> bool {
    let top = g.block();
    let changed = if g.is_fixed_point(FIXED_POINT) {
        // Tests check the claim: the run that is skipped would remove nothing.
        debug_assert!(!Eliminator::new(true).run(&mut g.clone(), top, true));
        false
    } else {
        let changed = Eliminator::new(true).run(g, top, true);
        if !changed {
            g.mark_fixed_point(FIXED_POINT);
        }
        changed
    };
    crate::graph_dump!("After eliminateDeadCode: ", g);
    changed
}

/// Runs DCE on block `b` (and its nested blocks when `recurse`) without alias analysis.
pub fn eliminate_dead_code_in_block(g: &mut Graph, b: BlockId, recurse: bool) -> bool {
    Eliminator::new(false).run(g, b, recurse)
}

struct Eliminator {
    use_alias_db: bool,
    /// No node of the graph may write (`AliasDb::block_may_write`): alias analysis would find
    /// no writer, so it is not built.
    no_writers: bool,
    /// The writers, when each certainly writes a wildcard ([`AliasDb::wildcard_writers`]): they
    /// are kept as untracked mutations, no other write can make a node live, and alias
    /// analysis is not built.
    wildcard_writers: Option<HashSet<NodeId>>,
    alias_db: Option<AliasDb>,
    marked: HashSet<NodeId>,
    live: HashSet<ValueId>,
    /// `live` in insertion order: the values from `folded` on are not yet in `live_locations`.
    live_order: Vec<ValueId>,
    folded: usize,
    /// Every location a live value may point to (grows with `live`), so "does this node write
    /// memory a live value may point to" is one intersection instead of one per live value.
    live_locations: MemoryLocations,
    memo: HashMap<NodeId, bool>,
    changed: bool,
}

impl Eliminator {
    fn new(use_alias_db: bool) -> Eliminator {
        Eliminator {
            use_alias_db,
            no_writers: false,
            wildcard_writers: None,
            alias_db: None,
            marked: HashSet::new(),
            live: HashSet::new(),
            live_order: Vec::new(),
            folded: 0,
            live_locations: MemoryLocations::new(),
            memo: HashMap::new(),
            changed: false,
        }
    }

    fn run(mut self, g: &mut Graph, b: BlockId, recurse: bool) -> bool {
        self.eliminate_dead_fork_inputs(g, b, recurse);
        self.no_writers = self.use_alias_db && !AliasDb::block_may_write(g, g.block());
        if self.use_alias_db && !self.no_writers {
            self.wildcard_writers = AliasDb::wildcard_writers(g);
        }
        let ret = g.return_node(b);
        self.mark_node(g, ret);
        self.mark_block(g, b);
        self.sweep(g, b, recurse);
        self.changed
    }

    fn alias_db(&mut self, g: &Graph) -> &AliasDb {
        if self.alias_db.is_none() {
            self.alias_db = Some(AliasDb::new(g));
        }
        self.alias_db.as_ref().expect("just built")
    }

    /// Unused inputs of a fork's subgraph are dropped with the fork's matching input.
    fn eliminate_dead_fork_inputs(&mut self, g: &mut Graph, b: BlockId, recurse: bool) {
        for n in g.block_nodes(b) {
            if recurse {
                for sb in g.node(n).blocks().to_vec() {
                    self.eliminate_dead_fork_inputs(g, sb, recurse);
                }
            }
            if g.node(n).kind() != prim::fork {
                continue;
            }
            let Some(sub) = g.node(n).g(ts_core::attr::Subgraph).cloned() else {
                continue;
            };
            let mut sub = (*sub).clone();
            let mut touched = false;
            let mut i = 0;
            while i < sub.inputs().len() {
                let v = sub.inputs()[i];
                if !sub.value(v).has_uses() && i < g.node(n).inputs().len() {
                    let top = sub.block();
                    if sub.erase_block_input(top, i).is_ok() {
                        g.remove_input(n, i);
                        touched = true;
                        continue;
                    }
                }
                i += 1;
            }
            if touched {
                g.set_attr(
                    n,
                    ts_core::attr::Subgraph,
                    ts_ir::AttributeValue::Graph(std::sync::Arc::new(sub)),
                );
                self.changed = true;
            }
        }
    }

    /// Marks a return node: only block outputs whose outer value is live make their producers
    /// live (loop-carried values also when the body reads them).
    fn mark_return_node(&mut self, g: &Graph, ret: NodeId) -> bool {
        if self.marked.contains(&ret) {
            return false;
        }
        let block = g
            .node(ret)
            .owning_block()
            .expect("a return node is in a block");
        let Some(outer) = g.block_owner(block) else {
            return self.mark_node(g, ret);
        };
        if g.node(outer).kind() == prim::Loop {
            let body_in = g.block_inputs(block);
            let body_out = g.block_outputs(block);
            for (i, &out) in g.node(outer).outputs().iter().enumerate() {
                if self.live.contains(&out) || g.value(body_in[1 + i]).has_uses() {
                    self.make_live(body_out[1 + i]);
                }
            }
            // The continue condition is read by the loop itself.
            self.make_live(body_out[0]);
        } else {
            let outs = g.node(outer).outputs();
            for (i, &inner) in g.block_outputs(block).iter().enumerate() {
                if outs.get(i).is_some_and(|o| self.live.contains(o)) {
                    self.make_live(inner);
                }
            }
        }
        self.marked.insert(ret);
        true
    }

    fn mark_loop(&mut self, g: &Graph, n: NodeId) -> bool {
        let body = g.node(n).blocks()[0];
        let mut any = false;
        loop {
            let marked = self.mark_block(g, body);
            any |= marked;
            if !marked {
                return any;
            }
        }
    }

    fn mark_block(&mut self, g: &Graph, b: BlockId) -> bool {
        let mut any = false;
        let nodes = g.block_nodes(b);
        for &n in &nodes {
            if self.has_side_effects(g, n) {
                any |= self.mark_node(g, n);
            }
        }
        any |= self.mark_return_node(g, g.return_node(b));
        for &n in nodes.iter().rev() {
            if g.node(n).kind() == prim::Loop {
                any |= self.mark_loop(g, n);
            } else {
                for &sb in g.node(n).blocks() {
                    any |= self.mark_block(g, sb);
                }
            }
            any |= self.mark_if_live(g, n);
        }
        any
    }

    fn mark_if_live(&mut self, g: &Graph, n: NodeId) -> bool {
        if g.node(n).outputs().iter().any(|o| self.live.contains(o)) {
            return self.mark_node(g, n);
        }
        // With only wildcard writers every writer is already marked (`has_side_effects` ran
        // on every node of every block first), and only writers write live memory.
        if self.use_alias_db
            && !self.no_writers
            && self.wildcard_writers.is_none()
            && self.writes_live_memory(g, n)
        {
            return self.mark_node(g, n);
        }
        false
    }

    fn make_live(&mut self, v: ValueId) {
        if self.live.insert(v) {
            self.live_order.push(v);
        }
    }

    /// True when `n` writes memory a live value may point to.
    fn writes_live_memory(&mut self, g: &Graph, n: NodeId) -> bool {
        self.alias_db(g);
        let db = self.alias_db.as_ref().expect("built above");
        let written = db.get_writes(g, n);
        if written.is_empty() {
            return false;
        }
        for &v in &self.live_order[self.folded..] {
            db.add_value_locations(v, &mut self.live_locations);
        }
        self.folded = self.live_order.len();
        written.intersects(&self.live_locations)
    }

    /// Marks `n` and the nodes enclosing it; its inputs become live.
    fn mark_node(&mut self, g: &Graph, n: NodeId) -> bool {
        if self.marked.contains(&n) {
            return false;
        }
        self.marked.insert(n);
        // Nodes holding a live node are live.
        let mut cur = n;
        while let Some(owner) = g.node(cur).owning_block().and_then(|b| g.block_owner(b)) {
            if self.marked.insert(owner) {
                for &i in g.node(owner).inputs() {
                    self.make_live(i);
                }
            }
            cur = owner;
        }
        for &i in g.node(n).inputs() {
            self.make_live(i);
        }
        true
    }

    fn has_untracked_mutation(&mut self, g: &Graph, n: NodeId) -> bool {
        if self.no_writers {
            false
        } else if let Some(w) = &self.wildcard_writers {
            w.contains(&n)
        } else if self.use_alias_db {
            self.alias_db(g).writes_to_wildcard(n)
        } else {
            schema_is_mutable(g, n)
        }
    }

    fn has_side_effects(&mut self, g: &Graph, n: NodeId) -> bool {
        if let Some(&m) = self.memo.get(&n) {
            return m;
        }
        let mut r = node_has_side_effects(g, n);
        if !r {
            'outer: for &b in g.node(n).blocks() {
                for m in g.block_nodes(b) {
                    if self.has_side_effects(g, m) {
                        r = true;
                        break 'outer;
                    }
                }
            }
        }
        if !r {
            r = self.has_untracked_mutation(g, n);
        }
        self.memo.insert(n, r);
        r
    }

    fn sweep(&mut self, g: &mut Graph, b: BlockId, recurse: bool) {
        for n in g.block_nodes(b).into_iter().rev() {
            if !g.is_alive(n) {
                continue;
            }
            self.remove_dead_if_outputs(g, n);
            self.remove_dead_loop_outputs(g, n);
            if recurse {
                for sb in g.node(n).blocks().to_vec() {
                    self.sweep(g, sb, true);
                }
            }
            let used = g.node(n).outputs().iter().any(|&o| g.value(o).has_uses());
            if !(self.marked.contains(&n) || used) {
                crate::graph_update!(
                    "Node {} which outputs {} will be removed",
                    g.node(n).kind(),
                    g.node(n)
                        .outputs()
                        .first()
                        .map(|&o| g.display_name(o))
                        .unwrap_or_else(|| "n/a".into())
                );
                if g.destroy_node(n).is_ok() {
                    self.changed = true;
                }
            }
        }
    }

    /// Drops the unused outputs of a `prim::If` with what each block returns for them.
    fn remove_dead_if_outputs(&mut self, g: &mut Graph, n: NodeId) {
        if g.node(n).kind() != prim::If && g.node(n).kind() != prim::GradOf {
            return;
        }
        for i in (0..g.node(n).outputs().len()).rev() {
            if g.value(g.node(n).output(i)).has_uses() {
                continue;
            }
            if g.erase_output(n, i).is_ok() {
                for b in g.node(n).blocks().to_vec() {
                    g.erase_block_output(b, i);
                }
                self.changed = true;
            }
        }
    }

    /// Drops loop-carried values whose output and body input are both unused.
    fn remove_dead_loop_outputs(&mut self, g: &mut Graph, n: NodeId) {
        if g.node(n).kind() != prim::Loop {
            return;
        }
        let body = g.node(n).blocks()[0];
        for i in (0..g.node(n).outputs().len()).rev() {
            let out = g.node(n).output(i);
            let carried = g.block_inputs(body)[1 + i];
            if g.value(out).has_uses() || g.value(carried).has_uses() {
                continue;
            }
            if g.erase_output(n, i).is_ok() {
                g.remove_input(n, 2 + i);
                let _ = g.erase_block_input(body, 1 + i);
                g.erase_block_output(body, 1 + i);
                self.changed = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn removes_unused_pure_nodes_keeps_side_effects() {
        let mut g = parse_ir(
            "graph(%x : Tensor, %l : int[]):\n  %one : int = prim::Constant[value=1]()\n  %a : Tensor = aten::add(%x, %x, %one)\n  %b : Tensor = aten::mul(%a, %a)\n  %c : int[] = aten::append(%l, %one)\n  %s : str = prim::Constant[value=\"hi\"]()\n   = prim::Print(%s)\n  %d : Tensor = aten::add_(%x, %x, %one)\n  return (%x)\n",
        )
        .unwrap();
        assert!(eliminate_dead_code(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check_not("aten::mul")
            .check("aten::append")
            .check("prim::Print")
            .check("aten::add_")
            .run_graph(&g)
            .unwrap();
        assert!(!g.to_string().contains("aten::add(%x"), "{g}");
        assert!(!eliminate_dead_code(&mut g));
    }

    #[test]
    fn graphs_without_writers_skip_alias_analysis_with_the_same_result() {
        let src = "graph(%x : Tensor):\n  %one : int = prim::Constant[value=1]()\n  %a : Tensor = aten::add(%x, %x, %one)\n  %b : Tensor = aten::mul(%a, %a)\n  %l : Tensor[] = prim::ListConstruct(%a, %x)\n  %c : Tensor = aten::cat(%l, %one)\n  %s : str = prim::Constant[value=\"hi\"]()\n   = prim::Print(%s)\n  return (%a)\n";
        let mut g = parse_ir(src).unwrap();
        assert!(!AliasDb::block_may_write(&g, g.block()));
        assert!(eliminate_dead_code(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("aten::add")
            .check_not("aten::mul")
            .check_not("aten::cat")
            .check("prim::Print")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }

    #[test]
    fn wildcard_writers_are_kept_without_alias_analysis_and_pure_nodes_still_go() {
        // A batch norm's running statistics and a counter read off the module are written in
        // place; the profiled statistics still point to the attributes. Every writer writes a
        // wildcard, so DCE decides without an AliasDb (debug builds check the classification
        // against one) and removes only the unused pure nodes.
        let src = "graph(%self : __torch__.M, %x : Tensor):\n  %one : int = prim::Constant[value=1]()\n  %f : float = prim::Constant[value=0.1]()\n  %t : bool = prim::GetAttr[name=\"training\"](%self)\n  %rm : Tensor = prim::GetAttr[name=\"running_mean\"](%self)\n  %rv : Tensor = prim::GetAttr[name=\"running_var\"](%self)\n  %prm : Tensor = prim::profile(%rm)\n  %n : Tensor = prim::GetAttr[name=\"num_batches_tracked\"](%self)\n  %dead : Tensor = aten::mul(%x, %one)\n  %c : Tensor = aten::add_(%n, %one, %one)\n  %none : NoneType = prim::Constant()\n  %y : Tensor = aten::batch_norm(%x, %none, %none, %prm, %rv, %t, %f, %f, %t)\n  %unused : Tensor = aten::batch_norm(%x, %none, %none, %none, %none, %t, %f, %f, %t)\n  return (%x)\n";
        let mut g = parse_ir(src).unwrap();
        let writers = AliasDb::wildcard_writers(&g).expect("every writer writes a wildcard");
        assert_eq!(writers.len(), 2, "{g}");
        assert!(eliminate_dead_code(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("aten::add_")
            .check_count("aten::batch_norm", 1, true)
            .check_not("aten::mul")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
        // A write of fresh memory is not decided this way.
        let local = "graph(%x : Tensor):\n  %one : int = prim::Constant[value=1]()\n  %y : Tensor = aten::mul(%x, %one)\n  %z : Tensor = aten::relu_(%y)\n  return (%x)\n";
        assert!(AliasDb::wildcard_writers(&parse_ir(local).unwrap()).is_none());
    }

    #[test]
    fn removes_writes_to_dead_fresh_memory() {
        // The list and the tensor are created here and never escape: writing them is dead.
        let mut g = parse_ir(
            "graph(%x : Tensor):\n  %one : int = prim::Constant[value=1]()\n  %l : int[] = prim::ListConstruct(%one)\n  %c : int[] = aten::append(%l, %one)\n  %y : Tensor = aten::mul(%x, %one)\n  %z : Tensor = aten::add_(%y, %x, %one)\n  return (%x)\n",
        )
        .unwrap();
        assert!(eliminate_dead_code(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check_not("aten::append")
            .check_not("aten::add_")
            .check_not("aten::mul")
            .run_graph(&g)
            .unwrap();
        // Without alias analysis the writing nodes stay.
        let mut g2 = parse_ir(
            "graph(%x : Tensor):\n  %one : int = prim::Constant[value=1]()\n  %y : Tensor = aten::mul(%x, %one)\n  %z : Tensor = aten::add_(%y, %x, %one)\n  return (%x)\n",
        )
        .unwrap();
        let top = g2.block();
        eliminate_dead_code_in_block(&mut g2, top, true);
        FileCheck::new()
            .check("aten::mul")
            .check("aten::add_")
            .run_graph(&g2)
            .unwrap();
    }

    #[test]
    fn keeps_writes_to_live_memory() {
        // %v is a view of a fresh tensor that is returned: writing the view is live.
        let mut g = parse_ir(
            "graph(%x : Tensor):\n  %one : int = prim::Constant[value=1]()\n  %zero : int = prim::Constant[value=0]()\n  %y : Tensor = aten::mul(%x, %one)\n  %v : Tensor = aten::select(%y, %zero, %zero)\n  %w : Tensor = aten::add_(%v, %x, %one)\n  return (%y)\n",
        )
        .unwrap();
        eliminate_dead_code(&mut g);
        verify(&g).unwrap();
        FileCheck::new()
            .check("aten::select")
            .check("aten::add_")
            .run_graph(&g)
            .unwrap();
    }

    #[test]
    fn keeps_unmatched_overloads_of_writing_operators() {
        // No registered overload of aten::Delete takes (str, int), but PyTorch's schemas say
        // Delete writes its argument: the node stays (and fails at run time), it does not
        // silently disappear.
        let mut g = parse_ir(
            "graph(%s : str, %i : int):\n   = aten::Delete(%s, %i)\n  %n : int = aten::len(%s)\n  return (%i)\n",
        )
        .unwrap();
        eliminate_dead_code(&mut g);
        FileCheck::new()
            .check("aten::Delete")
            .check_not("aten::len")
            .run_graph(&g)
            .unwrap();
    }

    #[test]
    fn schemas_without_kernels_keep_their_write_effects() {
        // Neither operator has a kernel in tsrs; PyTorch's schemas decide: the in-place one
        // writes `%f` and stays, the pure one with an unused result goes.
        let mut g = parse_ir(
            "graph(%a : Tensor[], %f : Tensor, %s : Tensor):\n   = aten::_amp_foreach_non_finite_check_and_unscale_(%a, %f, %s)\n  %ok : bool = aten::cudnn_is_acceptable(%f)\n  return (%f)\n",
        )
        .unwrap();
        eliminate_dead_code(&mut g);
        verify(&g).unwrap();
        FileCheck::new()
            .check("aten::_amp_foreach_non_finite_check_and_unscale_")
            .check_not("aten::cudnn_is_acceptable")
            .run_graph(&g)
            .unwrap();
    }

    #[test]
    fn removes_pure_control_flow_and_keeps_raising_branches() {
        let mut g = parse_ir(
            "graph(%c : bool, %x : int):\n  %y : int = prim::If(%c)\n    block0():\n      %z : int = aten::add(%x, %x)\n      -> (%z)\n    block1():\n      -> (%x)\n   = prim::If(%c)\n    block0():\n      %m : str = prim::Constant[value=\"boom\"]()\n       = prim::RaiseException(%m)\n      -> ()\n    block1():\n      -> ()\n  return (%x)\n",
        )
        .unwrap();
        eliminate_dead_code(&mut g);
        verify(&g).unwrap();
        FileCheck::new()
            .check_count("prim::If", 1, true)
            .check("prim::RaiseException")
            .run_graph(&g)
            .unwrap();
    }

    #[test]
    fn loop_body_writes_feeding_later_iterations_stay() {
        // b = a[0]; b += 1 mutates a, which the next iteration reads.
        let mut g = parse_ir(
            "graph(%x : Tensor, %n : int):\n  %t : bool = prim::Constant[value=1]()\n  %one : int = prim::Constant[value=1]()\n  %zero : int = prim::Constant[value=0]()\n  %a : Tensor = aten::mul(%x, %one)\n  %tot : Tensor = prim::Loop(%n, %t, %x)\n    block0(%i : int, %acc : Tensor):\n      %r : Tensor = aten::select(%a, %zero, %zero)\n      %acc2 : Tensor = aten::add(%acc, %r, %one)\n      %b : Tensor = aten::select(%a, %zero, %zero)\n      %b2 : Tensor = aten::add_(%b, %one, %one)\n      -> (%t, %acc2)\n  return (%tot)\n",
        )
        .unwrap();
        eliminate_dead_code(&mut g);
        verify(&g).unwrap();
        FileCheck::new()
            .check("aten::add(")
            .check("aten::add_")
            .run_graph(&g)
            .unwrap();
    }
}
