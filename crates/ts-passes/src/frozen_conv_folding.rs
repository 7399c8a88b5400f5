//! Convolution folding in frozen graphs (PyTorch's `FoldFrozenConvBatchnorm`,
//! `FoldFrozenConvAddOrSub`, `FoldFrozenConvMulOrDiv`): a `conv{1,2,3}d` with a constant weight
//! (and bias or none) whose only use is
//!
//! - an inference `batch_norm` with constant statistics becomes one convolution with
//!   `w * γ/√(σ²+ε)` and `(b - μ)·γ/√(σ²+ε) + β`;
//! - `+`/`-` of a constant that is one value per output channel (or a single value) moves into
//!   the bias;
//! - `*`/`/` by such a constant scales the weight and bias.

use ts_core::{aten, IValue, Scalar};
use ts_ir::{BlockId, Graph, NodeId, ValueId};
use ts_tensor::Tensor;

use crate::constant_tensors::{constant_tensor, per_channel, set_constant_input};
use crate::node_schema::{constant_input, named_input, node_full_name};

fn is_conv(g: &Graph, n: NodeId) -> bool {
    let k = g.node(n).kind();
    (k == aten::conv1d || k == aten::conv2d || k == aten::conv3d) && g.node(n).inputs().len() == 7
}

/// The constant weight and the bias (zeros when `None`) of a convolution.
fn conv_params(g: &Graph, conv: NodeId) -> Option<(Tensor, Tensor)> {
    let w = constant_tensor(g, g.node(conv).input(1))?;
    if !w.dtype().is_floating_point() {
        return None;
    }
    let bv = g.node(conv).input(2);
    let b = if g.must_be_none(bv) {
        Tensor::zeros(&[w.sizes()[0]], w.dtype()).ok()?
    } else {
        constant_tensor(g, bv)?
    };
    Some((w, b))
}

/// The convolution producing `v`, when `v` is its only use.
fn single_use_conv(g: &Graph, v: ValueId) -> Option<NodeId> {
    let c = g.value(v).node();
    (is_conv(g, c) && g.value(v).uses().len() == 1).then_some(c)
}

/// A per-output-channel operand as a `[C]` vector: a single value, or a constant whose shape
/// is 1 everywhere except at the channel dimension of an output of rank `out_rank`.
fn channel_vector(
    t: &Tensor,
    channels: i64,
    out_rank: usize,
    dtype: ts_tensor::DType,
) -> Option<Tensor> {
    if t.dtype() != dtype {
        return None;
    }
    if t.numel() == 1 {
        return t
            .reshape(&[1])
            .ok()?
            .expand(&[channels], false)
            .ok()?
            .contiguous()
            .ok();
    }
    let sizes = t.sizes();
    // Right-aligned against a batched output the channel dimension is 1; against an unbatched
    // one (a rank lower) it is 0. A constant of full rank would add a batch dimension to an
    // unbatched output, so it is not folded.
    if sizes.len() + 1 > out_rank {
        return None;
    }
    let offset = out_rank - sizes.len();
    for (i, &s) in sizes.iter().enumerate() {
        let out_dim = offset + i;
        if out_dim == 1 {
            if s != channels {
                return None;
            }
        } else if s != 1 {
            return None;
        }
    }
    if offset != 1 {
        return None;
    }
    t.reshape(&[channels]).ok()?.contiguous().ok()
}

fn fold_in_blocks(g: &mut Graph, b: BlockId, f: &dyn Fn(&mut Graph, NodeId) -> bool) -> bool {
    let mut changed = false;
    for n in g.block_nodes(b) {
        if !g.is_alive(n) {
            continue;
        }
        for sb in g.node(n).blocks().to_vec() {
            changed |= fold_in_blocks(g, sb, f);
        }
        changed |= f(g, n);
    }
    changed
}

/// Folds inference batch norms into the convolutions before them.
pub fn fold_frozen_conv_batchnorm(g: &mut Graph) -> bool {
    let top = g.block();
    let changed = fold_in_blocks(g, top, &fold_bn);
    if changed {
        crate::dead_code_elimination::eliminate_dead_code(g);
    }
    changed
}

fn fold_bn(g: &mut Graph, bn: NodeId) -> bool {
    if g.node(bn).kind() != aten::batch_norm || g.node(bn).inputs().len() != 9 {
        return false;
    }
    let Some(conv) = single_use_conv(g, g.node(bn).input(0)) else {
        return false;
    };
    if !matches!(constant_input(g, bn, "training"), Some(IValue::Bool(false))) {
        return false;
    }
    let Some(eps) = constant_input(g, bn, "eps").and_then(|v| v.as_double()) else {
        return false;
    };
    let Some((w, b)) = conv_params(g, conv) else {
        return false;
    };
    let opt = |name: &str| -> Option<Option<Tensor>> {
        let v = named_input(g, bn, name)?;
        if g.must_be_none(v) {
            Some(None)
        } else {
            constant_tensor(g, v).map(Some)
        }
    };
    let (Some(Some(rm)), Some(Some(rv)), Some(bw), Some(bb)) = (
        opt("running_mean"),
        opt("running_var"),
        opt("weight"),
        opt("bias"),
    ) else {
        return false;
    };
    let folded = (|| -> ts_tensor::Result<(Tensor, Tensor)> {
        let c = w.sizes()[0];
        let ones = ts_tensor::factory::ones(&[c], Some(w.dtype()))?;
        let zeros = Tensor::zeros(&[c], w.dtype())?;
        let bw = bw.unwrap_or(ones);
        let bb = bb.unwrap_or(zeros);
        let inv_std = rv.add_scalar(Scalar::Float(eps), Scalar::Int(1))?.rsqrt()?;
        let scale = bw.mul(&inv_std)?;
        let new_w = w.mul(&per_channel(&scale, w.dim())?)?;
        let new_b = b
            .sub(&rm, Scalar::Int(1))?
            .mul(&scale)?
            .add(&bb, Scalar::Int(1))?;
        Ok((
            new_w.to_dtype(w.dtype(), false)?,
            new_b.to_dtype(w.dtype(), false)?,
        ))
    })();
    let Ok((new_w, new_b)) = folded else {
        return false;
    };
    if new_b.sizes().as_slice() != [w.sizes()[0]] {
        return false;
    }
    set_constant_input(g, conv, 1, new_w, "_fused_bn");
    set_constant_input(g, conv, 2, new_b, "_fused_bn");
    let (conv_out, bn_out) = (g.node(conv).output(0), g.node(bn).output(0));
    g.replace_all_uses_with(bn_out, conv_out);
    crate::graph_update!("Folded a batch norm into a convolution");
    true
}

/// Folds additions of per-channel constants into the convolutions before them.
pub fn fold_frozen_conv_add_or_sub(g: &mut Graph) -> bool {
    let top = g.block();
    let changed = fold_in_blocks(g, top, &fold_add_sub);
    if changed {
        crate::dead_code_elimination::eliminate_dead_code(g);
    }
    changed
}

/// The conv output rank implied by its weight.
fn out_rank(w: &Tensor) -> usize {
    w.dim()
}

fn fold_add_sub(g: &mut Graph, n: NodeId) -> bool {
    let Some(name) = node_full_name(g, n) else {
        return false;
    };
    let is_sub = name.starts_with("aten::sub");
    if !matches!(
        name.as_str(),
        "aten::add.Tensor" | "aten::sub.Tensor" | "aten::add.Scalar" | "aten::sub.Scalar"
    ) {
        return false;
    }
    let ins = g.node(n).inputs().to_vec();
    // The convolution is the first operand (or either, for add).
    let (conv_at, other) = match (single_use_conv(g, ins[0]), single_use_conv(g, ins[1])) {
        (Some(c), _) => (c, ins[1]),
        (None, Some(c)) if !is_sub && name.ends_with(".Tensor") => (c, ins[0]),
        _ => return false,
    };
    let Some(alpha) = g.to_ivalue(ins[2]).and_then(|v| v.as_scalar()) else {
        return false;
    };
    let Some((w, b)) = conv_params(g, conv_at) else {
        return false;
    };
    let c = w.sizes()[0];
    let other_t = match g.to_ivalue(other) {
        Some(IValue::Tensor(t)) if crate::constant_tensors::is_constant(g, other) => t,
        Some(v) if name.ends_with(".Scalar") => match v.as_scalar() {
            Some(s) => match Tensor::scalar_tensor(s, w.dtype()) {
                Ok(t) => t,
                Err(_) => return false,
            },
            None => return false,
        },
        _ => return false,
    };
    let Some(vec) = channel_vector(&other_t, c, out_rank(&w), w.dtype()) else {
        return false;
    };
    let new_b = if is_sub {
        b.sub(&vec, alpha)
    } else {
        b.add(&vec, alpha)
    };
    let Ok(new_b) = new_b else {
        return false;
    };
    set_constant_input(g, conv_at, 2, new_b, "_fused_add");
    let (conv_out, out) = (g.node(conv_at).output(0), g.node(n).output(0));
    g.replace_all_uses_with(out, conv_out);
    crate::graph_update!("Folded an addition into a convolution's bias");
    true
}

/// Folds multiplications by per-channel constants into the convolutions before them.
pub fn fold_frozen_conv_mul_or_div(g: &mut Graph) -> bool {
    let top = g.block();
    let changed = fold_in_blocks(g, top, &fold_mul_div);
    if changed {
        crate::dead_code_elimination::eliminate_dead_code(g);
    }
    changed
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
    let ins = g.node(n).inputs().to_vec();
    let (conv, other) = match (single_use_conv(g, ins[0]), single_use_conv(g, ins[1])) {
        (Some(c), _) => (c, ins[1]),
        (None, Some(c)) if !is_div && name.ends_with(".Tensor") => (c, ins[0]),
        _ => return false,
    };
    let Some((w, b)) = conv_params(g, conv) else {
        return false;
    };
    let c = w.sizes()[0];
    let other_t = match g.to_ivalue(other) {
        Some(IValue::Tensor(t)) if crate::constant_tensors::is_constant(g, other) => t,
        Some(v) if name.ends_with(".Scalar") => match v.as_scalar() {
            Some(s) => match Tensor::scalar_tensor(s, w.dtype()) {
                Ok(t) => t,
                Err(_) => return false,
            },
            None => return false,
        },
        _ => return false,
    };
    let Some(vec) = channel_vector(&other_t, c, out_rank(&w), w.dtype()) else {
        return false;
    };
    let folded = (|| -> ts_tensor::Result<(Tensor, Tensor)> {
        let factor = if is_div {
            vec.reciprocal()?
        } else {
            vec.clone()
        };
        let new_w = w.mul(&per_channel(&factor, w.dim())?)?;
        let new_b = b.mul(&factor)?;
        Ok((new_w, new_b))
    })();
    let Ok((new_w, new_b)) = folded else {
        return false;
    };
    set_constant_input(g, conv, 1, new_w, "_fused_mul");
    set_constant_input(g, conv, 2, new_b, "_fused_mul");
    let (conv_out, out) = (g.node(conv).output(0), g.node(n).output(0));
    g.replace_all_uses_with(out, conv_out);
    crate::graph_update!("Folded a multiplication into a convolution");
    true
}

#[cfg(test)]
mod tests {
    use super::*;
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
