//! What the frozen conv and linear folding passes share: walking every block, the constant
//! weight and bias of the layer being folded into, the statistics of an inference batch norm,
//! and the constant operand of an elementwise op.

use ts_core::{aten, IValue, Scalar};
use ts_ir::{BlockId, Graph, NodeId, ValueId};
use ts_tensor::{DType, Tensor};

use crate::constant_tensors::{constant_tensor, is_constant};
use crate::node_schema::{constant_input, named_input};

/// Applies `fold` to every node of every block (inner blocks first) and removes what it left
/// dead; says whether anything was folded.
pub fn fold_each_node(g: &mut Graph, fold: &dyn Fn(&mut Graph, NodeId) -> bool) -> bool {
    fn walk(g: &mut Graph, b: BlockId, fold: &dyn Fn(&mut Graph, NodeId) -> bool) -> bool {
        let mut changed = false;
        for n in g.block_nodes(b) {
            if !g.is_alive(n) {
                continue;
            }
            for sb in g.node(n).blocks().to_vec() {
                changed |= walk(g, sb, fold);
            }
            changed |= fold(g, n);
        }
        changed
    }
    let top = g.block();
    let changed = walk(g, top, fold);
    if changed {
        crate::dead_code_elimination::eliminate_dead_code(g);
    }
    changed
}

/// The constant floating-point weight (input 1) and bias (input 2; zeros when `None`) of a
/// convolution or linear node.
pub fn weight_and_bias(g: &Graph, layer: NodeId) -> Option<(Tensor, Tensor)> {
    let w = constant_tensor(g, g.node(layer).input(1))?;
    if !w.dtype().is_floating_point() {
        return None;
    }
    let bv = g.node(layer).input(2);
    let b = if g.must_be_none(bv) {
        Tensor::zeros(&[w.sizes()[0]], w.dtype()).ok()?
    } else {
        constant_tensor(g, bv)?
    };
    Some((w, b))
}

/// The node producing `v` when it satisfies `is_layer` and `v` has no other use.
pub fn single_use_producer(
    g: &Graph,
    v: ValueId,
    is_layer: impl Fn(&Graph, NodeId) -> bool,
) -> Option<NodeId> {
    let n = g.value(v).node();
    (is_layer(g, n) && g.value(v).uses().len() == 1).then_some(n)
}

/// An inference `batch_norm` as the per-channel affine map it applies: `x * scale + shift`.
pub struct BatchNormFold {
    scale: Tensor,
    mean: Tensor,
    beta: Option<Tensor>,
}

impl BatchNormFold {
    /// Reads `bn` when it is an inference (`training=False`) batch norm whose statistics,
    /// weight, bias and eps are all constants.
    pub fn of(g: &Graph, bn: NodeId) -> Option<Self> {
        if g.node(bn).kind() != aten::batch_norm || g.node(bn).inputs().len() != 9 {
            return None;
        }
        if !matches!(constant_input(g, bn, "training"), Some(IValue::Bool(false))) {
            return None;
        }
        let eps = constant_input(g, bn, "eps").and_then(|v| v.as_double())?;
        let opt = |name: &str| -> Option<Option<Tensor>> {
            let v = named_input(g, bn, name)?;
            if g.must_be_none(v) {
                Some(None)
            } else {
                constant_tensor(g, v).map(Some)
            }
        };
        let mean = opt("running_mean")??;
        let var = opt("running_var")??;
        let gamma = opt("weight")?;
        let beta = opt("bias")?;
        let inv_std = var
            .add_scalar(Scalar::Float(eps), Scalar::Int(1))
            .and_then(|t| t.rsqrt())
            .ok()?;
        let scale = match gamma {
            Some(gm) => gm.mul(&inv_std).ok()?,
            None => inv_std,
        };
        Some(BatchNormFold { scale, mean, beta })
    }

    /// The folded weight and bias of a layer computing `w·x + b` per output channel (dimension 0
    /// of `w`) followed by this batch norm, in the weight's dtype.
    pub fn fold(&self, w: &Tensor, b: &Tensor) -> Option<(Tensor, Tensor)> {
        let folded = (|| -> ts_tensor::Result<(Tensor, Tensor)> {
            let new_w = w.mul(&crate::constant_tensors::per_channel(&self.scale, w.dim())?)?;
            let mut new_b = b.sub(&self.mean, Scalar::Int(1))?.mul(&self.scale)?;
            if let Some(beta) = &self.beta {
                new_b = new_b.add(beta, Scalar::Int(1))?;
            }
            Ok((
                new_w.to_dtype(w.dtype(), false)?,
                new_b.to_dtype(w.dtype(), false)?,
            ))
        })();
        let (new_w, new_b) = folded.ok()?;
        (new_b.sizes().as_slice() == [w.sizes()[0]]).then_some((new_w, new_b))
    }
}

/// The other operand of an elementwise `.Tensor`/`.Scalar` op as a constant tensor of `dtype`:
/// a constant tensor value, or (for the `.Scalar` overloads) the scalar as a 0-dim tensor.
pub fn constant_operand(g: &Graph, other: ValueId, overload: &str, dtype: DType) -> Option<Tensor> {
    match g.to_ivalue(other) {
        Some(IValue::Tensor(t)) if is_constant(g, other) => Some(t),
        Some(v) if overload.ends_with(".Scalar") => {
            Tensor::scalar_tensor(v.as_scalar()?, dtype).ok()
        }
        _ => None,
    }
}

/// `t` (one value, or already `[n]`-shaped after the caller's checks) as a contiguous `[n]`
/// vector.
pub fn broadcast_to_vector(t: &Tensor, n: i64) -> Option<Tensor> {
    if t.numel() == 1 {
        return t
            .reshape(&[1])
            .ok()?
            .expand(&[n], false)
            .ok()?
            .contiguous()
            .ok();
    }
    t.reshape(&[n]).ok()?.contiguous().ok()
}
