//! Neural-network operators built from ts-tensor's primitives: linear, dropout, normalizations,
//! embedding, losses and small activations.

use ts_tensor::{factory, DType, Error, Scalar, Tensor};

use super::{def, def_many};
use crate::registry::Registry;

type R<T> = Result<T, Error>;

const ONE: Scalar = Scalar::Int(1);

/// `input @ weight.T + bias` on the GEMM kernel.
pub fn linear(input: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> R<Tensor> {
    input.linear(weight, bias)
}

/// Dropout: the identity in evaluation, a scaled Bernoulli mask in training.
fn dropout(x: &Tensor, p: f64, train: bool) -> R<Tensor> {
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::runtime(format!(
            "dropout probability has to be between 0 and 1, but got {p}"
        )));
    }
    if !train || p == 0.0 {
        return Ok(x.clone());
    }
    if p == 1.0 {
        return factory::zeros_like(x, None);
    }
    let mask = factory::empty_like(x, None)?;
    mask.bernoulli_(1.0 - p, None)?;
    x.mul(&mask)?.div_scalar(Scalar::Float(1.0 - p))
}

/// The shape that broadcasts a per-channel vector over dim 1 of an `ndim`-d input.
fn channel_shape(ndim: usize, c: i64) -> Vec<i64> {
    let mut s = vec![1; ndim.max(2)];
    s[1] = c;
    s
}

/// `aten::batch_norm`: normalizes over every dim but 1, with running statistics in evaluation
/// and batch statistics (updating the running ones in place) in training.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm(
    x: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    training: bool,
    momentum: f64,
    eps: f64,
) -> R<Tensor> {
    if x.dim() < 2 {
        return Err(Error::runtime(format!(
            "batch_norm: expected 2D or more input (got {}D input)",
            x.dim()
        )));
    }
    let c = x.sizes()[1];
    let shape = channel_shape(x.dim(), c);
    let dims: Vec<i64> = (0..x.dim() as i64).filter(|&d| d != 1).collect();
    let (mean, var) = if training {
        let mean = x.mean(Some(&dims), false, None)?;
        let var = x.var(Some(&dims), Some(0.0), false)?;
        let n = (x.numel() as i64 / c.max(1)) as f64;
        if let (Some(rm), Some(rv)) = (running_mean, running_var) {
            let unbiased = var.mul_scalar(Scalar::Float(n / (n - 1.0).max(1.0)))?;
            let new_m = rm
                .mul_scalar(Scalar::Float(1.0 - momentum))?
                .add(&mean.mul_scalar(Scalar::Float(momentum))?, ONE)?;
            let new_v = rv
                .mul_scalar(Scalar::Float(1.0 - momentum))?
                .add(&unbiased.mul_scalar(Scalar::Float(momentum))?, ONE)?;
            rm.copy_(&new_m)?;
            rv.copy_(&new_v)?;
        }
        (mean, var)
    } else {
        match (running_mean, running_var) {
            (Some(m), Some(v)) => (m.clone(), v.clone()),
            _ => {
                return Err(Error::runtime(
                    "running_mean and running_var must be defined in evaluation mode",
                ))
            }
        }
    };
    let inv = var.add_scalar(Scalar::Float(eps), ONE)?.rsqrt()?;
    let mut y = x
        .sub(&mean.reshape(&shape)?, ONE)?
        .mul(&inv.reshape(&shape)?)?;
    if let Some(w) = weight {
        y = y.mul(&w.reshape(&shape)?)?;
    }
    if let Some(b) = bias {
        y = y.add(&b.reshape(&shape)?, ONE)?;
    }
    Ok(y)
}

/// `aten::layer_norm` over the trailing `normalized_shape` dims.
pub fn layer_norm(
    x: &Tensor,
    normalized_shape: &[i64],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> R<Tensor> {
    let nd = x.dim();
    let k = normalized_shape.len();
    let sizes = x.sizes();
    if k > nd || sizes[nd - k..] != *normalized_shape {
        return Err(Error::runtime(format!(
            "Given normalized_shape={normalized_shape:?}, expected input with shape [*, {}], but got input of size{:?}",
            normalized_shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            sizes.as_slice()
        )));
    }
    let dims: Vec<i64> = ((nd - k) as i64..nd as i64).collect();
    let mean = x.mean(Some(&dims), true, None)?;
    let var = x.var(Some(&dims), Some(0.0), true)?;
    let mut y = x
        .sub(&mean, ONE)?
        .mul(&var.add_scalar(Scalar::Float(eps), ONE)?.rsqrt()?)?;
    if let Some(w) = weight {
        y = y.mul(w)?;
    }
    if let Some(b) = bias {
        y = y.add(b, ONE)?;
    }
    Ok(y)
}

/// `aten::group_norm`: statistics per (sample, group of channels).
fn group_norm(
    x: &Tensor,
    groups: i64,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> R<Tensor> {
    let sizes = x.sizes();
    if sizes.len() < 2 || groups <= 0 || sizes[1] % groups != 0 {
        return Err(Error::runtime(format!(
            "Expected number of channels in input to be divisible by num_groups, but got input of shape {:?} and num_groups={groups}",
            sizes.as_slice()
        )));
    }
    let n = sizes[0];
    let g = x.reshape(&[n, groups, -1])?;
    let normed = layer_norm_last(&g, eps)?.reshape(&sizes)?;
    let shape = channel_shape(sizes.len(), sizes[1]);
    let mut y = normed;
    if let Some(w) = weight {
        y = y.mul(&w.reshape(&shape)?)?;
    }
    if let Some(b) = bias {
        y = y.add(&b.reshape(&shape)?, ONE)?;
    }
    Ok(y)
}

fn layer_norm_last(x: &Tensor, eps: f64) -> R<Tensor> {
    let mean = x.mean(Some(&[-1]), true, None)?;
    let var = x.var(Some(&[-1]), Some(0.0), true)?;
    x.sub(&mean, ONE)?
        .mul(&var.add_scalar(Scalar::Float(eps), ONE)?.rsqrt()?)
}

/// `aten::embedding`: rows of `weight` picked by `indices` (any shape).
fn embedding(weight: &Tensor, indices: &Tensor) -> R<Tensor> {
    if !indices.dtype().is_integral() || indices.dtype() == DType::Bool {
        return Err(Error::runtime(format!(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got {} instead",
            indices.dtype().cpp_name()
        )));
    }
    let flat = indices.reshape(&[-1])?;
    let rows = weight.index_select(0, &flat)?;
    let mut shape = indices.sizes().to_vec();
    shape.push(weight.size(1)?);
    rows.reshape(&shape)
}

/// Applies a loss reduction code (0 none, 1 mean, 2 sum).
fn reduce(loss: Tensor, reduction: i64) -> R<Tensor> {
    match reduction {
        0 => Ok(loss),
        1 => loss.mean(None, false, None),
        2 => loss.sum(None, false, None),
        r => Err(Error::runtime(format!(
            "{r} is not a valid value for reduction"
        ))),
    }
}

/// Registers the neural-network operators.
pub fn register(r: &Registry) {
    def(r, "aten::linear", |a| linear(a.t(0)?, a.t(1)?, a.ot(2)?));
    def_many(
        r,
        &[
            "aten::dropout",
            "aten::feature_dropout",
            "aten::alpha_dropout",
        ],
        |a| dropout(a.t(0)?, a.f(1)?, a.b(2)?),
    );
    def(r, "aten::batch_norm", |a| {
        batch_norm(
            a.t(0)?,
            a.ot(1)?,
            a.ot(2)?,
            a.ot(3)?,
            a.ot(4)?,
            a.b(5)?,
            a.f(6)?,
            a.f(7)?,
        )
    });
    def(r, "aten::instance_norm", |a| {
        let x = a.t(0)?;
        let sizes = x.sizes();
        let g = x.reshape(&[sizes[0] * sizes[1], -1])?;
        let y = layer_norm_last(&g, a.f(7)?)?.reshape(&sizes)?;
        let shape = channel_shape(sizes.len(), sizes[1]);
        let y = match a.ot(1)? {
            Some(w) => y.mul(&w.reshape(&shape)?)?,
            None => y,
        };
        match a.ot(2)? {
            Some(b) => y.add(&b.reshape(&shape)?, ONE),
            None => Ok(y),
        }
    });
    def(r, "aten::layer_norm", |a| {
        layer_norm(a.t(0)?, &a.ints(1)?, a.ot(2)?, a.ot(3)?, a.f(4)?)
    });
    def(r, "aten::group_norm", |a| {
        group_norm(a.t(0)?, a.int(1)?, a.ot(2)?, a.ot(3)?, a.f(4)?)
    });
    def(r, "aten::embedding", |a| embedding(a.t(0)?, a.t(1)?));
    def(r, "aten::prelu", |a| {
        let (x, w) = (a.t(0)?, a.t(1)?);
        let w = if w.numel() > 1 && x.dim() >= 2 {
            w.reshape(&channel_shape(x.dim(), w.numel() as i64))?
        } else {
            w.clone()
        };
        let neg = x.mul(&w)?;
        ts_tensor::where_(
            &x.gt_scalar(Scalar::Int(0))?,
            ts_tensor::Operand::Tensor(x),
            ts_tensor::Operand::Tensor(&neg),
        )
    });
    def(r, "aten::threshold", |a| {
        let x = a.t(0)?;
        x.masked_fill(&x.le_scalar(a.s(1)?)?, a.s(2)?)
    });
    def(r, "aten::glu", |a| {
        let parts = a.t(0)?.chunk(2, a.int(1)?)?;
        parts[0].mul(&parts[1].sigmoid()?)
    });
    def(r, "aten::hardshrink", |a| {
        let x = a.t(0)?;
        let l = a.s(1)?.to_f64();
        x.masked_fill(&x.abs()?.le_scalar(Scalar::Float(l))?, Scalar::Int(0))
    });
    def(r, "aten::softshrink", |a| {
        let x = a.t(0)?;
        let l = Scalar::Float(a.s(1)?.to_f64());
        let shrunk = x.sub(&x.sign()?.mul_scalar(l)?, ONE)?;
        shrunk.masked_fill(&x.abs()?.le_scalar(l)?, Scalar::Int(0))
    });
    def(r, "aten::logaddexp", |a| {
        let (x, y) = (a.t(0)?, a.t(1)?);
        let m = x.maximum(y)?;
        let d = x.sub(y, ONE)?.abs()?.neg()?.exp()?.log1p()?;
        m.add(&d, ONE)
    });
    def(r, "aten::logcumsumexp", |a| {
        let (x, d) = (a.t(0)?, a.int(1)?);
        let m = x.amax(&[d], true)?;
        let m = m.masked_fill(&m.isinf()?, Scalar::Int(0))?;
        x.sub(&m, ONE)?.exp()?.cumsum(d, None)?.log()?.add(&m, ONE)
    });
    def(r, "aten::dist", |a| {
        a.t(0)?
            .sub(a.t(1)?, ONE)?
            .norm(Some(a.s(2)?), None, false, None)
    });
    def(r, "aten::linalg_matrix_norm", |a| {
        // ord 1/-1: max/min over columns of the absolute column sums; inf/-inf: over rows.
        let (x, dims, keep) = (a.t(0)?, a.ints(2)?, a.b(3)?);
        if dims.len() != 2 {
            return Err(Error::runtime(
                "linalg.matrix_norm: dim must be a 2-tuple of ints",
            ));
        }
        let ord = a.s(1)?.to_f64();
        let (sum_dim, pick_dim) = if ord.abs() == 1.0 {
            (dims[0], dims[1])
        } else if ord.is_infinite() {
            (dims[1], dims[0])
        } else {
            return Err(Error::runtime(format!(
                "linalg.matrix_norm: ord={ord} needs singular values, which torchscript-rs does not implement"
            )));
        };
        let sums = x.abs()?.sum(Some(&[sum_dim]), true, a.dtype(4)?)?;
        let picked = if ord > 0.0 {
            sums.amax(&[pick_dim], true)?
        } else {
            sums.amin(&[pick_dim], true)?
        };
        if keep {
            Ok(picked)
        } else {
            picked.squeeze_dims(&dims)
        }
    });
    def(r, "aten::linalg_matrix_norm.str_ord", |a| {
        match a.str(1)? {
            "fro" => a.t(0)?.norm(None, Some(&a.ints(2)?), a.b(3)?, a.dtype(4)?),
            other => Err(Error::runtime(format!(
                "linalg.matrix_norm: ord='{other}' is not implemented in torchscript-rs"
            ))),
        }
    });
    def(r, "aten::mse_loss", |a| {
        reduce(a.t(0)?.sub(a.t(1)?, ONE)?.square()?, a.int(2)?)
    });
    def(r, "aten::l1_loss", |a| {
        reduce(a.t(0)?.sub(a.t(1)?, ONE)?.abs()?, a.int(2)?)
    });
    def(r, "aten::cosine_similarity", |a| {
        let (x, y, d, eps) = (a.t(0)?, a.t(1)?, a.int(2)?, a.f(3)?);
        let dot = x.mul(y)?.sum(Some(&[d]), false, None)?;
        let nx = x.norm(None, Some(&[d]), false, None)?;
        let ny = y.norm(None, Some(&[d]), false, None)?;
        let denom = nx.mul(&ny)?.clamp_min(Scalar::Float(eps))?;
        dot.div(&denom)
    });
    def(r, "aten::pairwise_distance", |a| {
        let diff = a
            .t(0)?
            .sub(a.t(1)?, ONE)?
            .add_scalar(Scalar::Float(a.f(3)?), ONE)?;
        diff.norm(Some(Scalar::Float(a.f(2)?)), Some(&[-1]), a.b(4)?, None)
    });
    def(r, "aten::baddbmm", |a| {
        a.t(0)?.baddbmm(a.t(1)?, a.t(2)?, a.s(3)?, a.s(4)?)
    });
    def(r, "aten::addmv", |a| {
        a.t(0)?.addmv(a.t(1)?, a.t(2)?, a.s(3)?, a.s(4)?)
    });
    def(r, "aten::constant_pad_nd", |a| {
        constant_pad(a.t(0)?, &a.ints(1)?, a.s(2)?)
    });
    def(r, "aten::pad", |a| match a.str(2)? {
        "constant" => constant_pad(a.t(0)?, &a.ints(1)?, Scalar::Float(a.of(3)?.unwrap_or(0.0))),
        mode => Err(Error::runtime(format!(
            "pad mode '{mode}' is not implemented in torchscript-rs"
        ))),
    });
    def(r, "aten::is_grad_enabled", |_a| Ok(false));
    def(r, "aten::is_autocast_enabled", |_a| Ok(false));
}

/// `F.pad(x, pad, value=v)`: pads the last dims (pairs from the last dim backwards); negative
/// pads crop.
fn constant_pad(x: &Tensor, pad: &[i64], value: Scalar) -> R<Tensor> {
    let nd = x.dim();
    if !pad.len().is_multiple_of(2) || pad.len() / 2 > nd {
        return Err(Error::runtime(format!(
            "Padding length must be divisible by 2 and at most twice the number of dimensions of the input, got {}",
            pad.len()
        )));
    }
    let mut out_sizes = x.sizes().to_vec();
    let mut src = x.clone();
    for (i, pair) in pad.chunks(2).enumerate() {
        let d = nd - 1 - i;
        let (lo, hi) = (pair[0], pair[1]);
        out_sizes[d] += lo + hi;
        if out_sizes[d] < 0 {
            return Err(Error::runtime(
                "The input size after padding must be non-negative",
            ));
        }
        // Crop for negative pads.
        let start = (-lo).max(0);
        let len = src.sizes()[d] - start - (-hi).max(0);
        src = src.narrow(d as i64, start, len.max(0))?;
    }
    let out = factory::full(&out_sizes, value, Some(x.dtype()))?;
    let mut dst = out.clone();
    for (i, pair) in pad.chunks(2).enumerate() {
        let d = nd - 1 - i;
        let start = pair[0].max(0);
        dst = dst.narrow(d as i64, start, src.sizes()[d])?;
    }
    dst.copy_(&src)?;
    Ok(out)
}
