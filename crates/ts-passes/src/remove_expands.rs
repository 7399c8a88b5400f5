//! `RemoveExpands`: `aten::expand(x, size, implicit=True)` nodes, which the tracer inserts for
//! broadcasting and which are not valid for other sizes, are replaced by `x`.

use ts_core::{aten, IValue};
use ts_ir::{BlockId, Graph};

/// Removes implicit expands; returns whether any was removed.
pub fn remove_expands(g: &mut Graph) -> bool {
    let top = g.block();
    remove_in_block(g, top)
}

fn remove_in_block(g: &mut Graph, b: BlockId) -> bool {
    let mut changed = false;
    for n in g.block_nodes(b) {
        for sb in g.node(n).blocks().to_vec() {
            changed |= remove_in_block(g, sb);
        }
        if g.node(n).kind() != aten::expand || g.node(n).inputs().len() != 3 {
            continue;
        }
        if !matches!(g.to_ivalue(g.node(n).input(2)), Some(IValue::Bool(true))) {
            continue;
        }
        let (out, x) = (g.node(n).output(0), g.node(n).input(0));
        g.replace_all_uses_with(out, x);
        let _ = g.destroy_node(n);
        changed = true;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn removes_only_implicit_expands() {
        let mut g = parse_ir(
            "graph(%x : Tensor, %s : int[]):\n  %t : bool = prim::Constant[value=1]()\n  %f : bool = prim::Constant[value=0]()\n  %a : Tensor = aten::expand(%x, %s, %t)\n  %b : Tensor = aten::expand(%a, %s, %f)\n  return (%b)\n",
        )
        .unwrap();
        assert!(remove_expands(&mut g));
        verify(&g).unwrap();
        assert_eq!(g.to_string().matches("aten::expand").count(), 1);
        FileCheck::new()
            .check("aten::expand(%x, %s, %f)")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }
}
