//! Convolution folding in frozen graphs (PyTorch's `FoldFrozenConvBatchnorm`,
//! `FoldFrozenConvAddOrSub`, `FoldFrozenConvMulOrDiv`): a `conv{1,2,3}d` with a constant weight
//! (and bias or none) whose only use is
//!
//! - an inference `batch_norm` with constant statistics becomes one convolution with
//!   `w * γ/√(σ²+ε)` and `(b - μ)·γ/√(σ²+ε) + β`;
//! - `+`/`-` of a constant that is one value per output channel (or a single value) moves into
//!   the bias;
//! - `*`/`/` by such a constant scales the weight and bias.

use ts_core::aten;
use ts_ir::{Graph, NodeId, ValueId};
use ts_tensor::Tensor;

use crate::constant_tensors::{per_channel, set_constant_input};
use crate::frozen_folding::{
    broadcast_to_vector, constant_operand, fold_each_node, single_use_producer, weight_and_bias,
    BatchNormFold,
};
use crate::node_schema::node_full_name;

fn is_conv(g: &Graph, n: NodeId) -> bool {
    let k = g.node(n).kind();
    (k == aten::conv1d || k == aten::conv2d || k == aten::conv3d) && g.node(n).inputs().len() == 7
}

/// The convolution producing `v`, when `v` is its only use.
fn single_use_conv(g: &Graph, v: ValueId) -> Option<NodeId> {
    single_use_producer(g, v, is_conv)
}

/// A per-output-channel operand as a `[C]` vector: a single value, or a constant whose shape
/// is 1 everywhere except at the channel dimension of an output of rank `out_rank` (the
/// weight's rank).
fn channel_vector(t: &Tensor, channels: i64, out_rank: usize) -> Option<Tensor> {
    if t.numel() != 1 {
        let sizes = t.sizes();
        // Right-aligned against a batched output the channel dimension is 1; against an
        // unbatched one (a rank lower) it is 0. A constant of full rank would add a batch
        // dimension to an unbatched output, so it is not folded.
        if sizes.len() + 1 != out_rank {
            return None;
        }
        let channel_only =
            sizes
                .iter()
                .enumerate()
                .all(|(i, &s)| if i == 0 { s == channels } else { s == 1 });
        if !channel_only {
            return None;
        }
    }
    broadcast_to_vector(t, channels)
}

/// The convolution that is one operand of the elementwise op `n` (`name`), the other operand,
/// and its constant value as a per-channel vector with the convolution's weight and bias.
/// `commutes` allows the convolution on the right.
struct ConvOperand {
    conv: NodeId,
    w: Tensor,
    b: Tensor,
    vector: Tensor,
}

fn conv_operand(g: &Graph, n: NodeId, name: &str, commutes: bool) -> Option<ConvOperand> {
    let ins = g.node(n).inputs();
    let (conv, other) = match (single_use_conv(g, ins[0]), single_use_conv(g, ins[1])) {
        (Some(c), _) => (c, ins[1]),
        (None, Some(c)) if commutes && name.ends_with(".Tensor") => (c, ins[0]),
        _ => return None,
    };
    let (w, b) = weight_and_bias(g, conv)?;
    let other = constant_operand(g, other, name, w.dtype())?;
    if other.dtype() != w.dtype() {
        return None;
    }
    let vector = channel_vector(&other, w.sizes()[0], w.dim())?;
    Some(ConvOperand { conv, w, b, vector })
}

/// Makes the convolution's output stand for `n`'s.
fn replace_with_conv(g: &mut Graph, conv: NodeId, n: NodeId) {
    let (conv_out, out) = (g.node(conv).output(0), g.node(n).output(0));
    g.replace_all_uses_with(out, conv_out);
}

/// Folds inference batch norms into the convolutions before them.
pub fn fold_frozen_conv_batchnorm(g: &mut Graph) -> bool {
    fold_each_node(g, &fold_bn)
}

fn fold_bn(g: &mut Graph, bn: NodeId) -> bool {
    let Some(stats) = BatchNormFold::of(g, bn) else {
        return false;
    };
    let Some(conv) = single_use_conv(g, g.node(bn).input(0)) else {
        return false;
    };
    let Some((new_w, new_b)) = weight_and_bias(g, conv).and_then(|(w, b)| stats.fold(&w, &b))
    else {
        return false;
    };
    set_constant_input(g, conv, 1, new_w, "_fused_bn");
    set_constant_input(g, conv, 2, new_b, "_fused_bn");
    replace_with_conv(g, conv, bn);
    crate::graph_update!("Folded a batch norm into a convolution");
    true
}

/// Folds additions of per-channel constants into the convolutions before them.
pub fn fold_frozen_conv_add_or_sub(g: &mut Graph) -> bool {
    fold_each_node(g, &fold_add_sub)
}

fn fold_add_sub(g: &mut Graph, n: NodeId) -> bool {
    let Some(name) = node_full_name(g, n) else {
        return false;
    };
    if !matches!(
        name.as_str(),
        "aten::add.Tensor" | "aten::sub.Tensor" | "aten::add.Scalar" | "aten::sub.Scalar"
    ) {
        return false;
    }
    let is_sub = name.starts_with("aten::sub");
    let Some(alpha) = g.to_ivalue(g.node(n).input(2)).and_then(|v| v.as_scalar()) else {
        return false;
    };
    let Some(op) = conv_operand(g, n, &name, !is_sub) else {
        return false;
    };
    let new_b = if is_sub {
        op.b.sub(&op.vector, alpha)
    } else {
        op.b.add(&op.vector, alpha)
    };
    let Ok(new_b) = new_b else {
        return false;
    };
    set_constant_input(g, op.conv, 2, new_b, "_fused_add");
    replace_with_conv(g, op.conv, n);
    crate::graph_update!("Folded an addition into a convolution's bias");
    true
}

/// Folds multiplications by per-channel constants into the convolutions before them.
pub fn fold_frozen_conv_mul_or_div(g: &mut Graph) -> bool {
    fold_each_node(g, &fold_mul_div)
}

fn fold_mul_div(g: &mut Graph, n: NodeId) -> bool {
    let Some(name) = node_full_name(g, n) else {
        return false;
    };
    if !matches!(
        name.as_str(),
        "aten::mul.Tensor" | "aten::div.Tensor" | "aten::mul.Scalar" | "aten::div.Scalar"
    ) {
        return false;
    }
    let is_div = name.starts_with("aten::div");
    let Some(op) = conv_operand(g, n, &name, !is_div) else {
        return false;
    };
    let folded = (|| -> ts_tensor::Result<(Tensor, Tensor)> {
        let factor = if is_div {
            op.vector.reciprocal()?
        } else {
            op.vector.clone()
        };
        let new_w = op.w.mul(&per_channel(&factor, op.w.dim())?)?;
        let new_b = op.b.mul(&factor)?;
        Ok((new_w, new_b))
    })();
    let Ok((new_w, new_b)) = folded else {
        return false;
    };
    set_constant_input(g, op.conv, 1, new_w, "_fused_mul");
    set_constant_input(g, op.conv, 2, new_b, "_fused_mul");
    replace_with_conv(g, op.conv, n);
    crate::graph_update!("Folded a multiplication into a convolution");
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_core::{IValue, Scalar};
    use ts_ir::{verify, FileCheck};

    fn randn(sizes: &[i64], seed: u64) -> Tensor {
        let n: i64 = sizes.iter().product();
        let v: Vec<f32> = (0..n)
            .map(|i| (((i as u64 * 2654435761 + seed * 97) % 1000) as f32) / 500.0 - 1.0)
            .collect();
        Tensor::from_vec(v, sizes).unwrap()
    }

    /// conv(x) -> batch_norm -> + per-channel constant -> * 2, on constants.
    fn build() -> Graph {
        let mut g = Graph::new();
        let x = g.add_graph_input(ts_core::Type::tensor());
        let c = |g: &mut Graph, v: IValue| g.insert_constant(&v);
        let w = c(&mut g, IValue::Tensor(randn(&[4, 3, 3, 3], 1)));
        let bias = c(&mut g, IValue::Tensor(randn(&[4], 2)));
        let ones2 = c(&mut g, IValue::int_list([1, 1]));
        let zeros2 = c(&mut g, IValue::int_list([0, 0]));
        let one = c(&mut g, IValue::Int(1));
        let conv = g.insert(aten::conv2d, &[x, w, bias, ones2, zeros2, ones2, one], 1);
        let co = g.node(conv).output(0);
        let bw = c(&mut g, IValue::Tensor(randn(&[4], 3)));
        let bb = c(&mut g, IValue::Tensor(randn(&[4], 4)));
        let rm = c(&mut g, IValue::Tensor(randn(&[4], 5)));
        let rv = c(
            &mut g,
            IValue::Tensor(
                randn(&[4], 6)
                    .abs()
                    .unwrap()
                    .add_scalar(Scalar::Float(0.5), Scalar::Int(1))
                    .unwrap(),
            ),
        );
        let f = c(&mut g, IValue::Bool(false));
        let mom = c(&mut g, IValue::Double(0.1));
        let eps = c(&mut g, IValue::Double(1e-5));
        let t = c(&mut g, IValue::Bool(true));
        let bn = g.insert(aten::batch_norm, &[co, bw, bb, rm, rv, f, mom, eps, t], 1);
        let bo = g.node(bn).output(0);
        let k = c(&mut g, IValue::Tensor(randn(&[4, 1, 1], 7)));
        let add = g.insert(aten::add, &[bo, k, one], 1);
        let ao = g.node(add).output(0);
        let two = c(&mut g, IValue::Double(2.0));
        let mul = g.insert(aten::mul, &[ao, two], 1);
        let mo = g.node(mul).output(0);
        g.register_output(mo);
        g
    }

    #[test]
    fn folds_bn_add_and_mul_into_the_convolution_with_equal_results() {
        let g = build();
        let x = randn(&[2, 3, 6, 6], 11);
        let run = |g: &Graph| -> Vec<f32> {
            let out = crate::test_eval::run(g, vec![IValue::Tensor(x.clone())]);
            out.as_tensor().unwrap().to_vec::<f32>()
        };
        let before = run(&g);
        let mut f = g.clone();
        assert!(crate::frozen_graph_optimizations::optimize_frozen_graph(
            &mut f, true
        ));
        verify(&f).unwrap();
        FileCheck::new()
            .check("aten::conv2d")
            .check_not("aten::batch_norm")
            .check_not("aten::add")
            .check_not("aten::mul")
            .run_graph(&f)
            .unwrap_or_else(|e| panic!("{e}\n{f}"));
        let after = run(&f);
        for (a, b) in before.iter().zip(&after) {
            assert!((a - b).abs() < 1e-4, "{a} vs {b}");
        }
    }
}
