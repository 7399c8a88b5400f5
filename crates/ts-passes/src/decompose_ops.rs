//! Operator decomposition (PyTorch's `DecomposeOps`): `addmm(b, x, w)` with constant
//! `beta == alpha == 1` becomes `b + x.mm(w)`, so the matrix product can take part in batching.
//! (PyTorch also decomposes batch and layer norm, on GPUs only.) Constant propagation and dead
//! code elimination follow when something was decomposed.

use ts_core::{aten, IValue};
use ts_ir::{BlockId, Graph, NodeId};

use crate::node_schema::node_full_name;

/// Decomposes what it can; returns whether anything was decomposed.
pub fn decompose_ops(g: &mut Graph) -> bool {
    let top = g.block();
    let changed = decompose_block(g, top);
    if changed {
        crate::constant_propagation::constant_propagation(g);
        crate::dead_code_elimination::eliminate_dead_code(g);
    }
    crate::graph_dump!("After DecomposeOps: ", g);
    changed
}

fn is_one(v: Option<IValue>) -> bool {
    match v {
        Some(IValue::Int(i)) => i == 1,
        Some(IValue::Double(d)) => d == 1.0,
        Some(IValue::Bool(b)) => b,
        _ => false,
    }
}

fn decompose_block(g: &mut Graph, b: BlockId) -> bool {
    let mut changed = false;
    for n in g.block_nodes(b) {
        for sb in g.node(n).blocks().to_vec() {
            changed |= decompose_block(g, sb);
        }
        if node_full_name(g, n).as_deref() == Some("aten::addmm") {
            changed |= decompose_addmm(g, n);
        }
    }
    changed
}

fn decompose_addmm(g: &mut Graph, n: NodeId) -> bool {
    let ins = g.node(n).inputs().to_vec();
    if !is_one(g.to_ivalue(ins[3])) || !is_one(g.to_ivalue(ins[4])) {
        return false;
    }
    let out = g.node(n).output(0);
    let ty = g.value(out).ty().clone();
    let range = g.node(n).source_range().cloned();
    let cs = g.node(n).callstack().cloned();
    let sum = g.with_insert_point(n, |g| {
        let mm = g.insert(aten::mm, &[ins[1], ins[2]], 1);
        let one = g.insert_constant(&IValue::Int(1));
        let prod = g.node(mm).output(0);
        let add = g.insert(aten::add, &[ins[0], prod, one], 0);
        for m in [mm, add] {
            g.set_source_range(m, range.clone());
            g.set_callstack(m, cs.clone());
        }
        g.add_output(add, ty)
    });
    g.replace_all_uses_with(out, sum);
    let _ = g.destroy_node(n);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn addmm_with_unit_scales_becomes_mm_and_add() {
        let mut g = parse_ir(
            "graph(%b : Tensor, %x : Tensor, %w : Tensor):\n  %one : int = prim::Constant[value=1]()\n  %h : float = prim::Constant[value=0.5]()\n  %a : Tensor = aten::addmm(%b, %x, %w, %one, %one)\n  %c : Tensor = aten::addmm(%b, %x, %w, %h, %one)\n  %t : (Tensor, Tensor) = prim::TupleConstruct(%a, %c)\n  return (%t)\n",
        )
        .unwrap();
        assert!(decompose_ops(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("aten::mm(%x, %w)")
            .check("aten::add(%b, ")
            .check("aten::addmm(%b, %x, %w, %h")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }
}
