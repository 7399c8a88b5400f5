//! ATen's explicit `*_backward` operators (`tanh_backward`, `convolution_backward`,
//! `native_layer_norm_backward`, `upsample_bilinear2d_backward`, ...) as callable kernels.
//!
//! Autograd graphs, functorch and decompositions dump these operators into graphs, and users
//! call them as `torch.ops.aten.X`. Most are "the vector-Jacobian product of forward op X":
//! [`vjp`] records the forward operator (or a composition of registered operators) on
//! detached leaves with grad mode on and runs the autograd engine, so the derivative formulas
//! of `crate::autograd` are the one implementation. Operators whose arguments carry saved
//! values instead of the forward inputs (`tanh_backward(grad, output)`, the norms' saved
//! mean/rstd, pooling indices) are written directly from their math.

mod activations;
mod forward_ad;
mod layers;
mod losses;
mod norms;
mod pooling;
mod views;

use ts_core::IValue;
use ts_tensor::autograd::GradModeGuard;
use ts_tensor::{Error, Tensor};

use super::{Args, Outputs};
use crate::autograd::engine::{run_backward, BackwardRequest};
use crate::autograd::ops as o;
use crate::registry::Registry;

/// Registers every backward operator.
pub fn register(r: &Registry) {
    activations::register(r);
    losses::register(r);
    pooling::register(r);
    views::register(r);
    layers::register(r);
    norms::register(r);
    forward_ad::register(r);
}

/// Gradients as an operator returns them: an undefined gradient (a false `output_mask`
/// entry) is `None`, as PyTorch hands an undefined tensor to TorchScript.
pub(super) struct Grads(pub Vec<Option<Tensor>>);

impl Outputs for Grads {
    fn push_to(self, stack: &mut Vec<IValue>) {
        stack.extend(
            self.0
                .into_iter()
                .map(|t| t.map(IValue::Tensor).unwrap_or(IValue::None)),
        );
    }
}

/// `IValue::Tensor` of a handle.
pub(super) fn tv(t: &Tensor) -> IValue {
    IValue::Tensor(t.clone())
}

/// An int list value.
pub(super) fn ints(v: &[i64]) -> IValue {
    IValue::int_list(v.iter().copied())
}

/// A `bool[n]` argument (`output_mask`).
pub(super) fn bools(a: &Args, i: usize, n: usize) -> Result<Vec<bool>, Error> {
    let items = a
        .v(i)?
        .list_items()
        .ok_or_else(|| Error::runtime(format!("argument {i}: expected a bool[{n}] mask")))?;
    let v: Vec<bool> = items.iter().filter_map(|x| x.as_bool()).collect();
    if v.len() != n || items.len() != n {
        return Err(Error::runtime(format!(
            "argument {i}: expected a list of {n} bools, got {} values",
            items.len()
        )));
    }
    Ok(v)
}

/// The vector-Jacobian product of `f` at `inputs`: `f` runs on detached copies of `inputs`
/// that require grad, with grad mode on, so the registered operators it calls record their
/// formulas; the engine then propagates `grads` (one per output of `f`, `None` for an output
/// without an incoming gradient) back to the inputs. An input the outputs do not reach gets
/// zeros, as ATen's backward kernels return.
pub(super) fn vjp(
    inputs: &[&Tensor],
    grads: &[Option<Tensor>],
    f: impl FnOnce(&[Tensor]) -> Result<Vec<Tensor>, Error>,
) -> Result<Vec<Tensor>, Error> {
    let leaves: Vec<Tensor> = inputs
        .iter()
        .map(|t| {
            let d = t.dtype();
            if !(d.is_floating_point() || d.is_complex()) {
                return Err(Error::runtime(format!(
                    "expected a floating-point tensor to differentiate, got {d:?}"
                )));
            }
            let l = t.detach();
            l.set_requires_grad(true);
            Ok(l)
        })
        .collect::<Result<_, _>>()?;
    let outs = {
        let _on = GradModeGuard::new(true);
        f(&leaves)?
    };
    if outs.len() < grads.iter().filter(|g| g.is_some()).count() {
        return Err(Error::runtime(
            "internal error: more gradients than outputs",
        ));
    }
    let mut roots = Vec::new();
    for (y, g) in outs.iter().zip(grads) {
        if let Some(g) = g {
            if g.sizes() != y.sizes() {
                return Err(Error::runtime(format!(
                    "Mismatch in shape: grad_output has a shape of {:?} and output has a shape of {:?}",
                    g.sizes().as_slice(),
                    y.sizes().as_slice()
                )));
            }
            if y.requires_grad() {
                roots.push((y.clone(), g.clone()));
            }
        }
    }
    let got = if roots.is_empty() {
        vec![None; leaves.len()]
    } else {
        run_backward(&BackwardRequest {
            roots: &roots,
            inputs: Some(&leaves),
            retain_graph: false,
            create_graph: false,
            allow_unused: true,
        })?
    };
    leaves
        .iter()
        .zip(got)
        .map(|(l, g)| match g {
            Some(g) => Ok(g.detach()),
            None => o::zeros_like(l),
        })
        .collect()
}

/// [`vjp`] of one registered operator: `args` with the tensors at `wrt` differentiated, one
/// incoming gradient for its first output.
pub(super) fn vjp_op(
    op: &str,
    args: Vec<IValue>,
    wrt: &[usize],
    grad: &Tensor,
) -> Result<Vec<Tensor>, Error> {
    let inputs: Vec<Tensor> = wrt
        .iter()
        .map(|&i| {
            args[i]
                .as_tensor()
                .cloned()
                .ok_or_else(|| Error::runtime(format!("internal error: {op} argument {i}")))
        })
        .collect::<Result<_, _>>()?;
    let refs: Vec<&Tensor> = inputs.iter().collect();
    vjp(&refs, &[Some(grad.clone())], |leaves| {
        let mut args = args;
        for (&i, l) in wrt.iter().zip(leaves) {
            args[i] = tv(l);
        }
        let y = o::call1(op, args)?;
        Ok(vec![y])
    })
}

/// Zeros of `sizes` with `like`'s dtype.
pub(super) fn zeros(sizes: &[i64], like: &Tensor) -> Result<Tensor, Error> {
    if sizes.iter().any(|&s| s < 0) {
        return Err(Error::runtime(format!(
            "Trying to create tensor with negative dimension: {sizes:?}"
        )));
    }
    o::zeros(sizes, like.dtype())
}
