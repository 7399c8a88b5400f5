//! Neural-network operators: linear, the dropout family, normalizations and embeddings on
//! ts-tensor's kernels, plus losses and small activations composed from its primitives.

use ts_tensor::{factory, DType, Error, Scalar, Tensor};

use super::{def, def_many, Args};
use crate::registry::Registry;

type R<T> = Result<T, Error>;

const ONE: Scalar = Scalar::Int(1);

/// `input @ weight.T + bias` on the GEMM kernel.
pub fn linear(input: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> R<Tensor> {
    input.linear(weight, bias)
}

/// The shape that broadcasts a per-channel vector over dim 1 of an `ndim`-d input.
fn channel_shape(ndim: usize, c: i64) -> Vec<i64> {
    let mut s = vec![1; ndim.max(2)];
    s[1] = c;
    s
}

/// The dropout family as ATen's `_dropout_impl`: plain dropout is ts-tensor's kernel; feature
/// dropout draws one mask value per (sample, channel); alpha dropout keeps SELU's mean and
/// variance. All are the identity outside training.
fn dropout_impl(x: &Tensor, p: f64, train: bool, feature: bool, alpha: bool) -> R<Tensor> {
    if !feature && !alpha {
        return ts_tensor::dropout(x, p, train, None);
    }
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::runtime(format!(
            "dropout probability has to be between 0 and 1, but got {p}"
        )));
    }
    if p == 0.0 || !train || x.numel() == 0 {
        return Ok(x.clone());
    }
    if feature && x.dim() < 2 {
        return Err(Error::runtime(
            "Feature dropout requires at least 2 dimensions in the input",
        ));
    }
    if p == 1.0 {
        return x.mul_scalar(Scalar::Int(0));
    }
    let shape = if feature {
        let mut s = vec![1; x.dim()];
        s[0] = x.sizes()[0];
        s[1] = x.sizes()[1];
        s
    } else {
        x.sizes().to_vec()
    };
    let dt = if x.dtype().is_floating_point() {
        x.dtype()
    } else {
        DType::Float32
    };
    let noise = Tensor::zeros(&shape, dt)?;
    noise.bernoulli_(1.0 - p, None)?;
    if alpha {
        const ALPHA: f64 = 1.758_099_340_847_376_6;
        let a = 1.0 / ((ALPHA * ALPHA * p + 1.0) * (1.0 - p)).sqrt();
        let b = noise
            .add_scalar(Scalar::Int(-1), ONE)?
            .mul_scalar(Scalar::Float(ALPHA * a))?
            .add_scalar(Scalar::Float(ALPHA * a * p), ONE)?;
        x.mul(&noise.mul_scalar(Scalar::Float(a))?)?.add(&b, ONE)
    } else {
        x.mul(&noise.div_scalar(Scalar::Float(1.0 - p))?)
    }
}

/// Checks `normalized_shape` against the input's trailing dims and the affine tensors' shapes,
/// with ATen's layer-norm messages; returns the reduced dims.
fn check_normalized_shape(
    x: &Tensor,
    shape: &[i64],
    affine: &[(Option<&Tensor>, &str)],
) -> R<Vec<i64>> {
    let sizes = x.sizes();
    let (nd, k) = (sizes.len(), shape.len());
    if k == 0 {
        return Err(Error::runtime(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got normalized_shape = []",
        ));
    }
    for (t, name) in affine {
        if let Some(t) = t {
            if t.sizes().as_slice() != shape {
                return Err(Error::runtime(format!(
                    "Expected {name} to be of same shape as normalized_shape, but got {name} of shape {:?} and normalized_shape = {shape:?}",
                    t.sizes().as_slice()
                )));
            }
        }
    }
    if k > nd || sizes[nd - k..] != *shape {
        return Err(Error::runtime(format!(
            "Given normalized_shape={shape:?}, expected input with shape [*, {}], but got input of size{:?}",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            sizes.as_slice()
        )));
    }
    Ok(((nd - k) as i64..nd as i64).collect())
}

/// The dtype normalization statistics are computed in.
fn stat_dtype(dt: DType) -> DType {
    if dt == DType::Float64 {
        DType::Float64
    } else {
        DType::Float32
    }
}

/// `rms_norm(input, normalized_shape, weight, eps)`: `x * rsqrt(mean(x^2) + eps) * weight` over
/// the trailing dims; `eps` defaults to the machine epsilon of the computation dtype.
fn rms_norm(x: &Tensor, shape: &[i64], weight: Option<&Tensor>, eps: Option<f64>) -> R<Tensor> {
    let dims = check_normalized_shape(x, shape, &[(weight, "weight")])?;
    let dt = x.dtype();
    if !dt.is_floating_point() {
        return Err(Error::runtime(format!(
            "rms_norm only supports floating-point inputs, but got {}",
            dt.scalar_type_name()
        )));
    }
    let ct = stat_dtype(dt);
    let eps = eps.unwrap_or(if ct == DType::Float64 {
        f64::EPSILON
    } else {
        f32::EPSILON as f64
    });
    let xf = x.to_dtype(ct, false)?;
    let inv = xf
        .square()?
        .mean(Some(&dims), true, None)?
        .add_scalar(Scalar::Float(eps), ONE)?
        .rsqrt()?;
    let mut y = xf.mul(&inv)?;
    if let Some(w) = weight {
        y = y.mul(&w.to_dtype(ct, false)?)?;
    }
    y.to_dtype(dt, false)
}

/// `native_layer_norm`: the output with the per-row mean and reciprocal standard deviation
/// (shaped like the input with the normalized dims kept as 1).
fn native_layer_norm(
    x: &Tensor,
    shape: &[i64],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> R<(Tensor, Tensor, Tensor)> {
    let out = ts_tensor::layer_norm(x, shape, weight, bias, eps)?;
    let dims = check_normalized_shape(x, shape, &[])?;
    let xf = x.to_dtype(stat_dtype(x.dtype()), false)?;
    let mean = xf.mean(Some(&dims), true, None)?;
    let rstd = xf
        .var(Some(&dims), Some(0.0), true)?
        .add_scalar(Scalar::Float(eps), ONE)?
        .rsqrt()?;
    Ok((out, mean, rstd))
}

/// `embedding_bag` and its underscore forms: `(weight, indices, offsets, scale_grad_by_freq,
/// mode, sparse, per_sample_weights, include_last_offset)` with a negative `padding_idx` meaning
/// none.
fn embedding_bag(a: &Args, padding_idx: Option<i64>) -> R<(Tensor, Tensor, Tensor, Tensor)> {
    ts_tensor::embedding_bag(
        a.t(0)?,
        a.t(1)?,
        a.ot(2)?,
        ts_tensor::BagMode::from_code(a.int(4)?)?,
        a.ot(6)?,
        a.b(7)?,
        padding_idx.filter(|&p| p >= 0),
    )
}

/// Runs a dropout variant in place: `self` receives the result and is returned.
fn dropout_in_place(a: &Args, feature: bool, alpha: bool) -> R<Tensor> {
    let x = a.t(0)?;
    let y = dropout_impl(x, a.f(1)?, a.b(2)?, feature, alpha)?;
    if !Tensor::is_same(x, &y) {
        x.copy_(&y)?;
    }
    Ok(x.clone())
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
    for (name, feature, alpha) in [
        ("dropout", false, false),
        ("feature_dropout", true, false),
        ("alpha_dropout", false, true),
        ("feature_alpha_dropout", true, true),
    ] {
        def(r, &format!("aten::{name}"), move |a| {
            dropout_impl(a.t(0)?, a.f(1)?, a.b(2)?, feature, alpha)
        });
        def(r, &format!("aten::{name}_"), move |a| {
            dropout_in_place(a, feature, alpha)
        });
    }
    def(r, "aten::batch_norm", |a| {
        // ATen returns a copy of an empty input before any shape check.
        if a.t(0)?.numel() == 0 {
            return a.t(0)?.clone_tensor();
        }
        ts_tensor::batch_norm(
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
    def(r, "aten::native_batch_norm", |a| {
        ts_tensor::native_batch_norm(
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
        ts_tensor::instance_norm(
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
    def(r, "aten::layer_norm", |a| {
        ts_tensor::layer_norm(a.t(0)?, &a.ints(1)?, a.ot(2)?, a.ot(3)?, a.f(4)?)
    });
    def(r, "aten::native_layer_norm", |a| {
        native_layer_norm(a.t(0)?, &a.ints(1)?, a.ot(2)?, a.ot(3)?, a.f(4)?)
    });
    def(r, "aten::rms_norm", |a| {
        rms_norm(a.t(0)?, &a.ints(1)?, a.ot(2)?, a.of(3)?)
    });
    def(r, "aten::group_norm", |a| {
        ts_tensor::group_norm(a.t(0)?, a.int(1)?, a.ot(2)?, a.ot(3)?, a.f(4)?)
    });
    def(r, "aten::embedding", |a| {
        ts_tensor::embedding(a.t(0)?, a.t(1)?)
    });
    def(r, "aten::embedding_bag", |a| embedding_bag(a, None));
    def(r, "aten::embedding_bag.padding_idx", |a| {
        embedding_bag(a, a.oint(8)?)
    });
    def_many(
        r,
        &["aten::_embedding_bag", "aten::_embedding_bag_forward_only"],
        |a| embedding_bag(a, Some(a.int(8)?)),
    );
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
    def(r, "aten::is_autocast_enabled", |_a| Ok(false));
}

/// `F.pad(x, pad, value=v)`: pads the last dims (pairs from the last dim backwards); negative
/// pads crop.
pub(super) fn constant_pad(x: &Tensor, pad: &[i64], value: Scalar) -> R<Tensor> {
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
