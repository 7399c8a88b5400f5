//! Backward kernels of the normalizations, from the saved statistics they are given (ATen's
//! `mean`/`rstd`, batch norm's `save_mean`/`save_invstd` or running statistics in eval):
//! with `x̂ = (x - mean) * rstd` and `ĝ = grad * weight`, the input gradient is
//! `rstd * (ĝ - mean(ĝ) - x̂ * mean(ĝ x̂))` over the normalized elements.

use ts_core::IValue;
use ts_tensor::{Error, Tensor};

use super::{bools, tv, Grads};
use crate::autograd::ops as o;
use crate::registry::Registry;
use crate::tensor_ops::def;

/// The mean over `dims`, kept.
fn mean(t: &Tensor, dims: &[i64]) -> Result<Tensor, Error> {
    o::call1(
        "aten::mean.dim",
        vec![
            tv(t),
            IValue::int_list(dims.iter().copied()),
            IValue::Bool(true),
            IValue::None,
        ],
    )
}

/// `rstd * (ĝ - mean(ĝ) - x̂ mean(ĝ x̂))` over `dims`.
fn normalized_input_grad(
    gh: &Tensor,
    xh: &Tensor,
    rstd: &Tensor,
    dims: &[i64],
) -> Result<Tensor, Error> {
    let m1 = mean(gh, dims)?;
    let m2 = mean(&o::mul(gh, xh)?, dims)?;
    let inner = o::sub(&o::sub(gh, &m1)?, &o::mul(xh, &m2)?)?;
    o::mul(rstd, &inner)
}

/// `native_layer_norm_backward(grad, input, normalized_shape, mean, rstd, weight, bias, mask)`.
fn layer_norm_backward(
    g: &Tensor,
    x: &Tensor,
    normalized: &[i64],
    mean_t: &Tensor,
    rstd: &Tensor,
    weight: Option<&Tensor>,
    mask: &[bool],
) -> Result<Grads, Error> {
    let nd = x.dim();
    let k = normalized.len();
    if k > nd || x.sizes()[nd - k..] != *normalized {
        return Err(Error::runtime(format!(
            "Given normalized_shape={normalized:?}, expected input with shape [*, {}], but got input of size {:?}",
            normalized.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
            x.sizes().as_slice()
        )));
    }
    if g.sizes() != x.sizes() {
        return Err(Error::runtime(format!(
            "native_layer_norm_backward: grad_out of shape {:?} does not match input of shape {:?}",
            g.sizes().as_slice(),
            x.sizes().as_slice()
        )));
    }
    let batch = &x.sizes()[..nd - k];
    let mut stat_shape: Vec<i64> = batch.to_vec();
    stat_shape.extend(std::iter::repeat_n(1, k));
    let mean_t = o::reshape(mean_t, &stat_shape)?;
    let rstd = o::reshape(rstd, &stat_shape)?;
    let xh = o::mul(&o::sub(x, &mean_t)?, &rstd)?;
    let norm_dims: Vec<i64> = ((nd - k) as i64..nd as i64).collect();
    let batch_dims: Vec<i64> = (0..(nd - k) as i64).collect();
    let gh = match weight {
        Some(w) => o::mul(g, w)?,
        None => g.clone(),
    };
    let gi = if mask[0] {
        Some(if x.numel() == 0 {
            o::zeros_like(x)?
        } else {
            normalized_input_grad(&gh, &xh, &rstd, &norm_dims)?
        })
    } else {
        None
    };
    let gw = if mask[1] && weight.is_some() {
        Some(o::sum_dims(&o::mul(g, &xh)?, &batch_dims, false)?)
    } else {
        None
    };
    let gb = if mask[2] && weight.is_some() {
        Some(o::sum_dims(g, &batch_dims, false)?)
    } else {
        None
    };
    Ok(Grads(vec![gi, gw, gb]))
}

/// `native_batch_norm_backward(grad, input, weight, running_mean, running_var, save_mean,
/// save_invstd, train, eps, mask)`.
#[allow(clippy::too_many_arguments)]
fn batch_norm_backward(
    g: &Tensor,
    x: &Tensor,
    weight: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    save_mean: Option<&Tensor>,
    save_invstd: Option<&Tensor>,
    train: bool,
    eps: f64,
    mask: &[bool],
) -> Result<Grads, Error> {
    let nd = x.dim();
    if nd < 2 {
        return Err(Error::runtime(format!(
            "batch_norm_backward: expected an input of at least 2 dimensions, got {nd}"
        )));
    }
    let c = x.sizes()[1];
    let mut stat_shape = vec![1, c];
    stat_shape.extend(std::iter::repeat_n(1, nd - 2));
    let (mean_t, invstd) = if train {
        match (save_mean, save_invstd) {
            (Some(m), Some(s)) => (m.clone(), s.clone()),
            _ => {
                return Err(Error::runtime(
                    "batch_norm_backward: training mode needs save_mean and save_invstd",
                ))
            }
        }
    } else {
        match (running_mean, running_var) {
            (Some(m), Some(v)) => (m.clone(), o::rsqrt(&o::add_s(v, eps)?)?),
            _ => {
                return Err(Error::runtime(
                    "batch_norm_backward: evaluation mode needs running_mean and running_var",
                ))
            }
        }
    };
    let mean_t = o::reshape(&mean_t, &stat_shape)?;
    let invstd = o::reshape(&invstd, &stat_shape)?;
    let xh = o::mul(&o::sub(x, &mean_t)?, &invstd)?;
    let dims: Vec<i64> = (0..nd as i64).filter(|&d| d != 1).collect();
    let gh = match weight {
        Some(w) => o::mul(g, &o::reshape(w, &stat_shape)?)?,
        None => g.clone(),
    };
    let gi = if !mask[0] {
        None
    } else if train {
        Some(normalized_input_grad(&gh, &xh, &invstd, &dims)?)
    } else {
        Some(o::mul(&gh, &invstd)?)
    };
    let gw = if mask[1] {
        Some(o::sum_dims(&o::mul(g, &xh)?, &dims, false)?)
    } else {
        None
    };
    let gb = if mask[2] {
        Some(o::sum_dims(g, &dims, false)?)
    } else {
        None
    };
    Ok(Grads(vec![gi, gw, gb]))
}

/// `native_group_norm_backward(grad, input, mean, rstd, weight, N, C, HxW, group, mask)`.
#[allow(clippy::too_many_arguments)]
fn group_norm_backward(
    g: &Tensor,
    x: &Tensor,
    mean_t: &Tensor,
    rstd: &Tensor,
    weight: Option<&Tensor>,
    n: i64,
    c: i64,
    hxw: i64,
    group: i64,
    mask: &[bool],
) -> Result<Grads, Error> {
    if group <= 0 || c % group != 0 || n * c * hxw != x.numel() as i64 {
        return Err(Error::runtime(format!(
            "native_group_norm_backward: N={n}, C={c}, HxW={hxw}, group={group} do not describe an input of shape {:?}",
            x.sizes().as_slice()
        )));
    }
    let x3 = o::reshape(x, &[n, c, hxw])?;
    let g3 = o::reshape(g, &[n, c, hxw])?;
    let m = o::reshape(mean_t, &[n, group, 1])?;
    let s = o::reshape(rstd, &[n, group, 1])?;
    let xg = o::reshape(&x3, &[n, group, -1])?;
    let xh = o::mul(&o::sub(&xg, &m)?, &s)?;
    let gh = match weight {
        Some(w) => o::mul(&g3, &o::reshape(w, &[1, c, 1])?)?,
        None => g3.clone(),
    };
    let gi = if mask[0] {
        let gh = o::reshape(&gh, &[n, group, -1])?;
        let gi = normalized_input_grad(&gh, &xh, &s, &[2])?;
        Some(o::reshape(&gi, &x.sizes())?)
    } else {
        None
    };
    let xh3 = o::reshape(&xh, &[n, c, hxw])?;
    let gw = if mask[1] {
        Some(o::sum_dims(&o::mul(&g3, &xh3)?, &[0, 2], false)?)
    } else {
        None
    };
    let gb = if mask[2] {
        Some(o::sum_dims(&g3, &[0, 2], false)?)
    } else {
        None
    };
    Ok(Grads(vec![gi, gw, gb]))
}

pub(super) fn register(r: &Registry) {
    def(r, "aten::native_layer_norm_backward", |a| {
        layer_norm_backward(
            a.t(0)?,
            a.t(1)?,
            &a.ints(2)?,
            a.t(3)?,
            a.t(4)?,
            a.ot(5)?,
            &bools(a, 7, 3)?,
        )
    });
    def(r, "aten::native_batch_norm_backward", |a| {
        batch_norm_backward(
            a.t(0)?,
            a.t(1)?,
            a.ot(2)?,
            a.ot(3)?,
            a.ot(4)?,
            a.ot(5)?,
            a.ot(6)?,
            a.b(7)?,
            a.f(8)?,
            &bools(a, 9, 3)?,
        )
    });
    def(r, "aten::batch_norm_backward", |a| {
        batch_norm_backward(
            a.t(0)?,
            a.t(1)?,
            Some(a.t(2)?),
            a.ot(3)?,
            a.ot(4)?,
            a.ot(5)?,
            a.ot(6)?,
            a.b(7)?,
            a.f(8)?,
            &bools(a, 9, 3)?,
        )
    });
    def(r, "aten::_batch_norm_impl_index_backward", |a| {
        let impl_index = a.int(0)?;
        if impl_index != 0 {
            return Err(Error::runtime(format!(
                "_batch_norm_impl_index_backward: implementation {impl_index} is cuDNN/MIOpen's, which torchscript-rs does not have (only 0, the native kernel)"
            )));
        }
        batch_norm_backward(
            a.t(2)?,
            a.t(1)?,
            a.ot(3)?,
            a.ot(4)?,
            a.ot(5)?,
            a.ot(6)?,
            a.ot(7)?,
            a.b(8)?,
            a.f(9)?,
            &bools(a, 10, 3)?,
        )
    });
    def(r, "aten::native_group_norm_backward", |a| {
        group_norm_backward(
            a.t(0)?,
            a.t(1)?,
            a.t(2)?,
            a.t(3)?,
            a.ot(4)?,
            a.int(5)?,
            a.int(6)?,
            a.int(7)?,
            a.int(8)?,
            &bools(a, 9, 3)?,
        )
    });
}
