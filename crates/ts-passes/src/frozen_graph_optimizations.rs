//! Optimizations for frozen graphs, whose parameters are constants (PyTorch's
//! `OptimizeFrozenGraph`): dropout with a constant `train=False` is removed, then the
//! convolution and linear foldings run until nothing changes (a convolution followed by a
//! batch norm, an add and a multiply by constants becomes one convolution).

use ts_core::{aten, IValue, Symbol};
use ts_ir::{BlockId, Graph, NodeId};

/// Removes dropout that cannot drop (`train` constant False); returns whether any was removed.
pub fn remove_dropout(g: &mut Graph) -> bool {
    let top = g.block();
    let changed = remove_in_block(g, top);
    crate::graph_dump!("After removeDropout: ", g);
    changed
}

fn is_dropout(k: Symbol) -> bool {
    [
        aten::dropout,
        aten::dropout_,
        aten::feature_dropout,
        aten::alpha_dropout,
        aten::feature_alpha_dropout,
    ]
    .contains(&k)
        || k == Symbol::aten("feature_dropout_")
        || k == Symbol::aten("alpha_dropout_")
        || k == Symbol::aten("feature_alpha_dropout_")
}

fn remove_in_block(g: &mut Graph, b: BlockId) -> bool {
    let mut changed = false;
    let mut dead: Vec<NodeId> = Vec::new();
    for n in g.block_nodes(b).into_iter().rev() {
        for sb in g.node(n).blocks().to_vec() {
            changed |= remove_in_block(g, sb);
        }
        if !is_dropout(g.node(n).kind()) || g.node(n).inputs().len() != 3 {
            continue;
        }
        if !matches!(g.to_ivalue(g.node(n).input(2)), Some(IValue::Bool(false))) {
            continue;
        }
        let (x, out) = (g.node(n).input(0), g.node(n).output(0));
        g.replace_all_uses_with(out, x);
        dead.push(n);
    }
    for n in dead {
        if g.destroy_node(n).is_ok() {
            changed = true;
        }
    }
    changed
}

/// The frozen-graph pipeline; `optimize_numerics` allows the foldings that change results in
/// the last bits (all of them here).
pub fn optimize_frozen_graph(g: &mut Graph, optimize_numerics: bool) -> bool {
    let mut changed = remove_dropout(g);
    if optimize_numerics {
        loop {
            let mut round = false;
            round |= crate::frozen_conv_folding::fold_frozen_conv_batchnorm(g);
            round |= crate::frozen_conv_folding::fold_frozen_conv_add_or_sub(g);
            round |= crate::frozen_conv_folding::fold_frozen_conv_mul_or_div(g);
            round |= crate::frozen_linear_folding::fold_frozen_linear_batchnorm(g);
            round |= crate::frozen_linear_folding::fold_frozen_linear_add_or_mul(g);
            changed |= round;
            if !round {
                break;
            }
        }
    }
    if changed {
        crate::dead_code_elimination::eliminate_dead_code(g);
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn removes_eval_dropout_only() {
        let mut g = parse_ir(
            "graph(%x : Tensor, %t : bool):\n  %p : float = prim::Constant[value=0.5]()\n  %f : bool = prim::Constant[value=0]()\n  %a : Tensor = aten::dropout(%x, %p, %f)\n  %b : Tensor = aten::dropout(%a, %p, %t)\n  %c : Tensor = aten::feature_dropout(%b, %p, %f)\n  return (%c)\n",
        )
        .unwrap();
        assert!(remove_dropout(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("aten::dropout(%x, %p, %t)")
            .check_not("feature_dropout")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
        assert_eq!(g.to_string().matches("dropout").count(), 1);
    }
}
