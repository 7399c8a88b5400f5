//! Canonical order of control-flow outputs (PyTorch's `CanonicalizeOutputs`, the last step of
//! its compile-time cleanup): the outputs of every `prim::If` and the loop-carried values of
//! every `prim::Loop` are sorted by where each is first used, in the order nodes print (a node
//! before the nodes of its blocks, a true block before its false block); unused ones keep
//! their order at the end. The emitter's order (variable names, sorted) is then replaced by
//! the order the program uses them in, as PyTorch prints it.

use std::cmp::Ordering;
use std::collections::HashMap;

use ts_core::symbol::prim;
use ts_ir::{BlockId, Graph, NodeId, Use, ValueId};

/// Sorts the outputs of every `prim::If` and `prim::Loop` of `g` by their first use.
pub fn canonicalize_outputs(g: &mut Graph) -> bool {
    let mut order = NodeOrder::default();
    order.index(g, g.block(), 0);
    let mut changed = false;
    canonicalize_block(g, g.block(), &order, &mut changed);
    changed
}

/// Each node's position in its block and its depth (blocks from the graph's block).
#[derive(Default)]
struct NodeOrder {
    position: HashMap<NodeId, (usize, usize)>,
}

impl NodeOrder {
    fn index(&mut self, g: &Graph, b: BlockId, depth: usize) {
        // Explicit stack: nesting follows the program.
        let mut work = vec![(b, depth)];
        while let Some((b, depth)) = work.pop() {
            for (i, n) in g.block_nodes(b).into_iter().enumerate() {
                self.position.insert(n, (i, depth));
                for &sub in g.node(n).blocks() {
                    work.push((sub, depth + 1));
                }
            }
            // The block's return node comes after every node of the block.
            let ret = g.return_node(b);
            self.position.insert(ret, (usize::MAX, depth));
        }
    }

    fn depth(&self, n: NodeId) -> usize {
        self.position.get(&n).map_or(0, |p| p.1)
    }

    fn pos(&self, n: NodeId) -> usize {
        self.position.get(&n).map_or(0, |p| p.0)
    }

    /// Whether `a` prints before `b` (`a != b`).
    fn node_before(&self, g: &Graph, mut a: NodeId, mut b: NodeId) -> bool {
        let (mut da, mut db) = (self.depth(a), self.depth(b));
        while da > db {
            a = owner(g, a);
            da -= 1;
            if a == b {
                return false; // `b` contains `a`
            }
        }
        while db > da {
            b = owner(g, b);
            db -= 1;
            if a == b {
                return true; // `a` contains `b`
            }
        }
        loop {
            let (ba, bb) = (g.node(a).owning_block(), g.node(b).owning_block());
            if ba == bb {
                return self.pos(a) < self.pos(b);
            }
            let (oa, ob) = (owner(g, a), owner(g, b));
            if oa == ob {
                let blocks = g.node(oa).blocks();
                let ia = blocks.iter().position(|&x| Some(x) == ba);
                let ib = blocks.iter().position(|&x| Some(x) == bb);
                return ia < ib;
            }
            a = oa;
            b = ob;
        }
    }

    fn use_before(&self, g: &Graph, a: Use, b: Use) -> bool {
        if a.user == b.user {
            return a.offset < b.offset;
        }
        self.node_before(g, a.user, b.user)
    }

    fn first_use(&self, g: &Graph, v: ValueId) -> Option<Use> {
        let uses = g.value(v).uses();
        let mut first = *uses.first()?;
        for &u in &uses[1..] {
            if self.use_before(g, u, first) {
                first = u;
            }
        }
        Some(first)
    }

    /// The permutation that sorts `values` by first use (unused last, in their order).
    fn sorted(&self, g: &Graph, values: &[ValueId]) -> Vec<usize> {
        let firsts: Vec<Option<Use>> = values.iter().map(|&v| self.first_use(g, v)).collect();
        let mut idx: Vec<usize> = (0..values.len()).collect();
        idx.sort_by(|&i, &j| match (firsts[i], firsts[j]) {
            (None, None) => i.cmp(&j),
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(a), Some(b)) => {
                if self.use_before(g, a, b) {
                    Ordering::Less
                } else if self.use_before(g, b, a) {
                    Ordering::Greater
                } else {
                    i.cmp(&j)
                }
            }
        });
        idx
    }
}

/// The node owning the block `n` is in (the graph's block has none: `n` itself).
fn owner(g: &Graph, n: NodeId) -> NodeId {
    g.node(n)
        .owning_block()
        .and_then(|b| g.block_owner(b))
        .unwrap_or(n)
}

fn canonicalize_block(g: &mut Graph, b: BlockId, order: &NodeOrder, changed: &mut bool) {
    // Later nodes first: an output's first use may be a later control-flow node's output.
    for n in g.block_nodes(b).into_iter().rev() {
        let kind = g.node(n).kind();
        if kind == prim::If {
            let perm = order.sorted(g, g.node(n).outputs());
            if !is_identity(&perm) {
                g.permute_outputs(n, &perm);
                for sub in g.node(n).blocks().to_vec() {
                    g.permute_inputs(g.return_node(sub), &perm);
                }
                *changed = true;
            }
        } else if kind == prim::Loop {
            let perm = order.sorted(g, g.node(n).outputs());
            if !is_identity(&perm) {
                let shifted = |k: usize| -> Vec<usize> {
                    (0..k).chain(perm.iter().map(|&p| p + k)).collect()
                };
                g.permute_outputs(n, &perm);
                g.permute_inputs(n, &shifted(2));
                let body = g.node(n).blocks()[0];
                g.permute_outputs(g.param_node(body), &shifted(1));
                g.permute_inputs(g.return_node(body), &shifted(1));
                *changed = true;
            }
        }
        for sub in g.node(n).blocks().to_vec() {
            canonicalize_block(g, sub, order, changed);
        }
    }
}

fn is_identity(perm: &[usize]) -> bool {
    perm.iter().enumerate().all(|(i, &p)| i == p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify};

    #[test]
    fn if_and_loop_outputs_follow_their_first_use() {
        let mut g = parse_ir(
            "graph(%c : bool, %a : int, %b : int):
  %n : int = prim::Constant[value=3]()
  %t : bool = prim::Constant[value=1]()
  %x : int, %y : int = prim::If(%c)
    block0():
      -> (%a, %b)
    block1():
      -> (%b, %a)
  %p : int, %q : int = prim::Loop(%n, %t, %x, %y)
    block0(%i : int, %p1 : int, %q1 : int):
      %s : int = aten::add(%q1, %p1)
      -> (%t, %s, %q1)
  %r : int = aten::sub(%q, %p)
  %u : int = aten::mul(%y, %x)
  return (%r, %u)
",
        )
        .unwrap();
        assert!(canonicalize_outputs(&mut g));
        verify(&g).unwrap();
        let text = g.to_string();
        // The loop's `q` is used first (`sub(%q, %p)`), so it leads; its input, parameter and
        // body result move with it. The if's `y` is first used as the loop's second carried
        // input, which now comes first.
        assert!(
            text.contains("%q : int, %p : int = prim::Loop(%n, %t, %y, %x)"),
            "{text}"
        );
        assert!(
            text.contains("block0(%i : int, %q1 : int, %p1 : int):"),
            "{text}"
        );
        assert!(text.contains("-> (%t, %q1, %s)"), "{text}");
        assert!(text.contains("%y : int, %x : int = prim::If(%c)"), "{text}");
        assert!(
            text.contains("-> (%b, %a)\n    block1():\n      -> (%a, %b)"),
            "{text}"
        );
        // Already canonical: nothing moves.
        assert!(!canonicalize_outputs(&mut g));
    }
}
