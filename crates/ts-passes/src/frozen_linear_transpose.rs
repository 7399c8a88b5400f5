//! Pre-transposed linear weights in frozen graphs (PyTorch's `FrozenLinearTranspose`, run by
//! `optimize_for_inference`): `linear(x, W, b)` with a constant `W` becomes
//! `matmul(x, Wᵀ) + b`, with `Wᵀ` computed once and stored contiguous, so the product reads the
//! weight row-major instead of transposing it on every call.

use ts_core::{aten, IValue};
use ts_ir::{Graph, NodeId};

use crate::constant_tensors::constant_tensor;
use crate::frozen_folding::fold_each_node;

/// Rewrites linears with constant weights; returns whether any was rewritten.
pub fn frozen_linear_transpose(g: &mut Graph) -> bool {
    let changed = fold_each_node(g, &|g, n| {
        g.node(n).kind() == aten::linear && g.node(n).inputs().len() == 3 && rewrite(g, n)
    });
    crate::graph_dump!("After FrozenLinearTranspose: ", g);
    changed
}

fn rewrite(g: &mut Graph, n: NodeId) -> bool {
    let ins = g.node(n).inputs().to_vec();
    let Some(w) = constant_tensor(g, ins[1]) else {
        return false;
    };
    if w.dim() != 2 {
        return false;
    }
    let Ok(wt) = w.t().and_then(|t| t.contiguous()) else {
        return false;
    };
    let out = g.node(n).output(0);
    let ty = g.value(out).ty().clone();
    let range = g.node(n).source_range().cloned();
    let result = g.with_insert_point(n, |g| {
        let wt = g.insert_constant(&IValue::Tensor(wt));
        let mm = g.insert(aten::matmul, &[ins[0], wt], 0);
        g.set_source_range(mm, range.clone());
        let prod = g.add_output(mm, ty.clone());
        if g.must_be_none(ins[2]) {
            return prod;
        }
        let one = g.insert_constant(&IValue::Int(1));
        let add = g.insert(aten::add, &[prod, ins[2], one], 0);
        g.set_source_range(add, range);
        g.add_output(add, ty)
    });
    g.replace_all_uses_with(out, result);
    let _ = g.destroy_node(n);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{verify, FileCheck};
    use ts_tensor::Tensor;

    #[test]
    fn linear_becomes_matmul_with_transposed_weight() {
        let mut g = Graph::new();
        let x = g.add_graph_input(ts_core::Type::tensor());
        let w = g.insert_constant(&IValue::Tensor(
            Tensor::from_vec(vec![1f32, 2., 3., 4., 5., 6.], &[3, 2]).unwrap(),
        ));
        let b = g.insert_constant(&IValue::Tensor(
            Tensor::from_vec(vec![0.5f32, -1., 2.], &[3]).unwrap(),
        ));
        let lin = g.insert(aten::linear, &[x, w, b], 1);
        let lo = g.node(lin).output(0);
        g.register_output(lo);
        let input = Tensor::from_vec(vec![1f32, -2., 0.5, 4.], &[2, 2]).unwrap();
        let before = crate::test_eval::run(&g, vec![IValue::Tensor(input.clone())]);
        assert!(frozen_linear_transpose(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("Float(2, 3, strides=[3, 1]")
            .check("aten::matmul")
            .check("aten::add")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
        let after = crate::test_eval::run(&g, vec![IValue::Tensor(input)]);
        assert_eq!(
            before.as_tensor().unwrap().to_vec::<f32>(),
            after.as_tensor().unwrap().to_vec::<f32>()
        );
    }
}
