//! Linear folding in frozen graphs: an `aten::linear` with a constant weight (and bias or none)
//! whose only use is
//!
//! - an inference `batch_norm` with constant statistics (PyTorch's `FoldFrozenLinearBatchnorm`)
//!   becomes one linear — only where the linear's output is known to be 2-D (its input comes
//!   from `flatten(x, 1)` or is typed so), because batch norm normalizes dimension 1, which is
//!   the feature dimension only then;
//! - `+` of a constant of one value per output feature (or a single value) moves into the bias;
//!   `*` by one scales the weight and bias.

use ts_core::{aten, IValue, Scalar};
use ts_ir::{BlockId, Graph, NodeId, ValueId};
use ts_tensor::Tensor;

use crate::constant_tensors::{constant_tensor, is_constant, set_constant_input};
use crate::node_schema::{constant_input, named_input, node_full_name};

fn linear_params(g: &Graph, lin: NodeId) -> Option<(Tensor, Tensor)> {
    let w = constant_tensor(g, g.node(lin).input(1))?;
    if w.dim() != 2 || !w.dtype().is_floating_point() {
        return None;
    }
    let bv = g.node(lin).input(2);
    let b = if g.must_be_none(bv) {
        Tensor::zeros(&[w.sizes()[0]], w.dtype()).ok()?
    } else {
        constant_tensor(g, bv)?
    };
    Some((w, b))
}

fn single_use_linear(g: &Graph, v: ValueId) -> Option<NodeId> {
    let n = g.value(v).node();
    (g.node(n).kind() == aten::linear
        && g.node(n).inputs().len() == 3
        && g.value(v).uses().len() == 1)
        .then_some(n)
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

/// Folds inference batch norms into the linears before them (see the module documentation).
pub fn fold_frozen_linear_batchnorm(g: &mut Graph) -> bool {
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
    let Some(lin) = single_use_linear(g, g.node(bn).input(0)) else {
        return false;
    };
    if !output_is_2d(g, lin)
        || !matches!(constant_input(g, bn, "training"), Some(IValue::Bool(false)))
    {
        return false;
    }
    let Some(eps) = constant_input(g, bn, "eps").and_then(|v| v.as_double()) else {
        return false;
    };
    let Some((w, b)) = linear_params(g, lin) else {
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
        let bw = match bw {
            Some(t) => t,
            None => ts_tensor::factory::ones(&[c], Some(w.dtype()))?,
        };
        let bb = match bb {
            Some(t) => t,
            None => Tensor::zeros(&[c], w.dtype())?,
        };
        let inv_std = rv.add_scalar(Scalar::Float(eps), Scalar::Int(1))?.rsqrt()?;
        let scale = bw.mul(&inv_std)?;
        let new_w = w.mul(&scale.reshape(&[-1, 1])?)?;
        let new_b = b
            .sub(&rm, Scalar::Int(1))?
            .mul(&scale)?
            .add(&bb, Scalar::Int(1))?;
        Ok((new_w, new_b))
    })();
    let Ok((new_w, new_b)) = folded else {
        return false;
    };
    if new_b.sizes().as_slice() != [w.sizes()[0]] {
        return false;
    }
    set_constant_input(g, lin, 1, new_w, "_fused_bn");
    set_constant_input(g, lin, 2, new_b, "_fused_bn");
    let (lo, bo) = (g.node(lin).output(0), g.node(bn).output(0));
    g.replace_all_uses_with(bo, lo);
    crate::graph_update!("Folded a batch norm into a linear");
    true
}

/// Folds per-feature additions and multiplications into the linears before them.
pub fn fold_frozen_linear_add_or_mul(g: &mut Graph) -> bool {
    let top = g.block();
    let changed = fold_in_blocks(g, top, &fold_add_mul);
    if changed {
        crate::dead_code_elimination::eliminate_dead_code(g);
    }
    changed
}

/// A per-feature operand as an `[out]` vector: one value, or a 1-D constant of `out` values
/// (higher ranks could add dimensions to the result, so they are not folded).
fn feature_vector(t: &Tensor, out: i64, dtype: ts_tensor::DType) -> Option<Tensor> {
    if t.dtype() != dtype || t.dim() > 1 {
        return None;
    }
    if t.numel() == 1 {
        return t
            .reshape(&[1])
            .ok()?
            .expand(&[out], false)
            .ok()?
            .contiguous()
            .ok();
    }
    (t.sizes().as_slice() == [out])
        .then(|| t.contiguous().ok())
        .flatten()
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
    let out = w.sizes()[0];
    let other_t = match g.to_ivalue(other) {
        Some(IValue::Tensor(t)) if is_constant(g, other) => t,
        Some(v) if name.ends_with(".Scalar") => {
            match v.as_scalar().map(|s| Tensor::scalar_tensor(s, w.dtype())) {
                Some(Ok(t)) => t,
                _ => return false,
            }
        }
        _ => return false,
    };
    let Some(vec) = feature_vector(&other_t, out, w.dtype()) else {
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
}
