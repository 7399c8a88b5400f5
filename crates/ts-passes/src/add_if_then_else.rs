//! `prim::IfThenElse` (PyTorch's `AddIfThenElseOp`, run last by the profiling executor): an
//! `If` with one output and two empty blocks only selects a value, so it becomes
//! `prim::IfThenElse(cond, then_value, else_value)`, which the interpreter runs without jumps.

use ts_core::prim;
use ts_ir::{Graph, NodeId};

/// Rewrites trivial `If`s; returns whether any was rewritten.
pub fn add_if_then_else_op(g: &mut Graph) -> bool {
    let targets: Vec<NodeId> = g
        .all_nodes()
        .into_iter()
        .filter(|&n| {
            let node = g.node(n);
            node.kind() == prim::If
                && node.outputs().len() == 1
                && node.blocks().iter().all(|&b| g.block_nodes(b).is_empty())
        })
        .collect();
    for &n in &targets {
        let blocks = g.node(n).blocks().to_vec();
        let cond = g.node(n).input(0);
        let t = g.block_outputs(blocks[0])[0];
        let f = g.block_outputs(blocks[1])[0];
        let out = g.node(n).output(0);
        let ty = g.value(out).ty().clone();
        let ite = g.with_insert_point(n, |g| {
            let m = g.insert(prim::IfThenElse, &[cond, t, f], 0);
            g.add_output(m, ty)
        });
        g.copy_metadata(ite, out);
        g.replace_all_uses_with(out, ite);
        let _ = g.destroy_node(n);
    }
    crate::graph_dump!("After AddIfThenElseOp: ", g);
    !targets.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn selects_become_if_then_else() {
        let mut g = parse_ir(
            "graph(%c : bool, %a : Tensor, %b : Tensor):\n  %y : Tensor = prim::If(%c)\n    block0():\n      -> (%a)\n    block1():\n      -> (%b)\n  %z : Tensor = prim::If(%c)\n    block0():\n      %r : Tensor = aten::relu(%a)\n      -> (%r)\n    block1():\n      -> (%b)\n  %t : (Tensor, Tensor) = prim::TupleConstruct(%y, %z)\n  return (%t)\n",
        )
        .unwrap();
        assert!(add_if_then_else_op(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("prim::IfThenElse(%c, %a, %b)")
            .check_count("prim::If(", 1, true)
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }
}
