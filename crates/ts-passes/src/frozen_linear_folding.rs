//! Linear folding in frozen graphs: an `aten::linear` with a constant weight (and bias or none)
//! whose only use is
//!
//! - an inference `batch_norm` with constant statistics (PyTorch's `FoldFrozenLinearBatchnorm`)
//!   becomes one linear — only where the linear's output is known to be 2-D (its input comes
//!   from `flatten(x, 1)` or is typed so), because batch norm normalizes dimension 1, which is
//!   the feature dimension only then;
//! - `+` of a constant of one value per output feature (or a single value) moves into the bias;
//!   `*` by one scales the weight and bias.

use ts_core::aten;
use ts_ir::{Graph, NodeId, ValueId};
use ts_tensor::Tensor;

use crate::constant_tensors::set_constant_input;
use crate::frozen_folding::{
    broadcast_to_vector, constant_operand, fold_each_node, single_use_producer, weight_and_bias,
    BatchNormFold,
};
use crate::node_schema::node_full_name;

/// The 2-D constant weight and the bias of a linear.
fn linear_params(g: &Graph, lin: NodeId) -> Option<(Tensor, Tensor)> {
    weight_and_bias(g, lin).filter(|(w, _)| w.dim() == 2)
}

fn single_use_linear(g: &Graph, v: ValueId) -> Option<NodeId> {
    single_use_producer(g, v, |g, n| {
        g.node(n).kind() == aten::linear && g.node(n).inputs().len() == 3
    })
}

/// The linear's output is 2-D: its input is `flatten(_, 1, -1)` or typed with rank 2.
fn output_is_2d(g: &Graph, lin: NodeId) -> bool {
    let x = g.node(lin).input(0);
    if g.value(x).ty().tensor_type().and_then(|t| t.rank()) == Some(2) {
        return true;
    }
    let p = g.value(x).node();
    node_full_name(g, p).as_deref() == Some("aten::flatten.using_ints")
        && g.to_ivalue(g.node(p).input(1)).and_then(|v| v.as_int()) == Some(1)
        && g.to_ivalue(g.node(p).input(2)).and_then(|v| v.as_int()) == Some(-1)
}

/// Folds inference batch norms into the linears before them (see the module documentation).
pub fn fold_frozen_linear_batchnorm(g: &mut Graph) -> bool {
    fold_each_node(g, &fold_bn)
}

fn fold_bn(g: &mut Graph, bn: NodeId) -> bool {
    let Some(stats) = BatchNormFold::of(g, bn) else {
        return false;
    };
    let Some(lin) = single_use_linear(g, g.node(bn).input(0)) else {
        return false;
    };
    if !output_is_2d(g, lin) {
        return false;
    }
    let Some((new_w, new_b)) = linear_params(g, lin).and_then(|(w, b)| stats.fold(&w, &b)) else {
        return false;
    };
    set_constant_input(g, lin, 1, new_w, "_fused_bn");
    set_constant_input(g, lin, 2, new_b, "_fused_bn");
    let (lo, bo) = (g.node(lin).output(0), g.node(bn).output(0));
    g.replace_all_uses_with(bo, lo);
    crate::graph_update!("Folded a batch norm into a linear");
    true
}

/// Folds per-feature additions and multiplications into the linears before them.
pub fn fold_frozen_linear_add_or_mul(g: &mut Graph) -> bool {
    fold_each_node(g, &fold_add_mul)
}

/// A per-feature operand as an `[out]` vector: one value, or a 1-D constant of `out` values
/// (higher ranks could add dimensions to the result, so they are not folded).
fn feature_vector(t: &Tensor, out: i64) -> Option<Tensor> {
    if t.dim() > 1 || (t.numel() != 1 && t.sizes().as_slice() != [out]) {
        return None;
    }
    broadcast_to_vector(t, out)
}

fn fold_add_mul(g: &mut Graph, n: NodeId) -> bool {
    let Some(name) = node_full_name(g, n) else {
        return false;
    };
    let kind = match name.as_str() {
        "aten::add.Tensor" | "aten::add.Scalar" => 'a',
        "aten::sub.Tensor" | "aten::sub.Scalar" => 's',
        "aten::mul.Tensor" | "aten::mul.Scalar" => 'm',
        _ => return false,
    };
    let ins = g.node(n).inputs().to_vec();
    let commutes = kind != 's' && name.ends_with(".Tensor");
    let (lin, other) = match (single_use_linear(g, ins[0]), single_use_linear(g, ins[1])) {
        (Some(l), _) => (l, ins[1]),
        (None, Some(l)) if commutes => (l, ins[0]),
        _ => return false,
    };
    let Some((w, b)) = linear_params(g, lin) else {
        return false;
    };
    let Some(vec) = constant_operand(g, other, &name, w.dtype())
        .filter(|t| t.dtype() == w.dtype())
        .and_then(|t| feature_vector(&t, w.sizes()[0]))
    else {
        return false;
    };
    let folded = (|| -> ts_tensor::Result<(Option<Tensor>, Tensor)> {
        Ok(match kind {
            'm' => (Some(w.mul(&vec.reshape(&[-1, 1])?)?), b.mul(&vec)?),
            _ => {
                let alpha = g
                    .to_ivalue(ins[2])
                    .and_then(|v| v.as_scalar())
                    .ok_or_else(|| ts_tensor::Error::runtime("non-constant alpha"))?;
                let nb = if kind == 'a' {
                    b.add(&vec, alpha)?
                } else {
                    b.sub(&vec, alpha)?
                };
                (None, nb)
            }
        })
    })();
    let Ok((new_w, new_b)) = folded else {
        return false;
    };
    if let Some(nw) = new_w {
        set_constant_input(g, lin, 1, nw, "_fused_mul");
    }
    set_constant_input(g, lin, 2, new_b, "_fused_add");
    let (lo, o) = (g.node(lin).output(0), g.node(n).output(0));
    g.replace_all_uses_with(o, lo);
    crate::graph_update!("Folded an elementwise constant into a linear");
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_core::IValue;
    use ts_ir::verify;

    #[test]
    fn folds_per_feature_add_and_mul() {
        let mut g = Graph::new();
        let x = g.add_graph_input(ts_core::Type::tensor());
        let w = g.insert_constant(&IValue::Tensor(
            Tensor::from_vec(vec![1f32, 2., 3., 4., 5., 6.], &[3, 2]).unwrap(),
        ));
        let b = g.insert_constant(&IValue::Tensor(
            Tensor::from_vec(vec![0.5f32, -1., 2.], &[3]).unwrap(),
        ));
        let lin = g.insert(aten::linear, &[x, w, b], 1);
        let k = g.insert_constant(&IValue::Tensor(
            Tensor::from_vec(vec![1f32, 2., 3.], &[3]).unwrap(),
        ));
        let one = g.insert_constant(&IValue::Int(1));
        let lo = g.node(lin).output(0);
        let add = g.insert(aten::add, &[lo, k, one], 1);
        let ao = g.node(add).output(0);
        let three = g.insert_constant(&IValue::Double(3.0));
        let mul = g.insert(aten::mul, &[ao, three], 1);
        let mo = g.node(mul).output(0);
        g.register_output(mo);
        let input = Tensor::from_vec(vec![1f32, -2., 0.5, 4.], &[2, 2]).unwrap();
        let before = crate::test_eval::run(&g, vec![IValue::Tensor(input.clone())]);
        let mut f = g.clone();
        assert!(crate::frozen_graph_optimizations::optimize_frozen_graph(
            &mut f, true
        ));
        verify(&f).unwrap();
        assert!(
            !f.to_string().contains("aten::add") && !f.to_string().contains("aten::mul"),
            "{f}"
        );
        let after = crate::test_eval::run(&f, vec![IValue::Tensor(input)]);
        assert_eq!(
            before.as_tensor().unwrap().to_vec::<f32>(),
            after.as_tensor().unwrap().to_vec::<f32>()
        );
    }

    #[test]
    fn folds_an_inference_batch_norm_after_a_2d_linear() {
        let mut g = Graph::new();
        let x = g.add_graph_input(ts_core::Type::tensor());
        let c = |g: &mut Graph, v: Vec<f32>, sizes: &[i64]| {
            g.insert_constant(&IValue::Tensor(Tensor::from_vec(v, sizes).unwrap()))
        };
        let w = c(&mut g, vec![1., 2., 3., 4., 5., 6.], &[3, 2]);
        let none = g.insert_constant(&IValue::None);
        let one = g.insert_constant(&IValue::Int(1));
        let minus_one = g.insert_constant(&IValue::Int(-1));
        let flat = g.insert(ts_core::Symbol::aten("flatten"), &[x, one, minus_one], 1);
        let fo = g.node(flat).output(0);
        let lin = g.insert(aten::linear, &[fo, w, none], 1);
        let lo = g.node(lin).output(0);
        let gamma = c(&mut g, vec![0.5, -1., 2.], &[3]);
        let mean = c(&mut g, vec![0.1, 0.2, -0.3], &[3]);
        let var = c(&mut g, vec![1.5, 0.25, 4.], &[3]);
        let f = g.insert_constant(&IValue::Bool(false));
        let mom = g.insert_constant(&IValue::Double(0.1));
        let eps = g.insert_constant(&IValue::Double(1e-5));
        let t = g.insert_constant(&IValue::Bool(true));
        // No bias: the folded bias is -mean·γ/√(σ²+ε).
        let bn = g.insert(
            aten::batch_norm,
            &[lo, gamma, none, mean, var, f, mom, eps, t],
            1,
        );
        let bo = g.node(bn).output(0);
        g.register_output(bo);
        let input = Tensor::from_vec(vec![1f32, -2., 0.5, 4.], &[2, 2]).unwrap();
        let before = crate::test_eval::run(&g, vec![IValue::Tensor(input.clone())]);
        let mut folded = g.clone();
        assert!(fold_frozen_linear_batchnorm(&mut folded));
        verify(&folded).unwrap();
        assert!(!folded.to_string().contains("aten::batch_norm"), "{folded}");
        let after = crate::test_eval::run(&folded, vec![IValue::Tensor(input)]);
        let (b, a) = (
            before.as_tensor().unwrap().to_vec::<f32>(),
            after.as_tensor().unwrap().to_vec::<f32>(),
        );
        for (x, y) in b.iter().zip(&a) {
            assert!((x - y).abs() < 1e-5, "{b:?} vs {a:?}");
        }
    }
}
