//! Loss operators (`aten::nll_loss*`, `cross_entropy_loss`, `kl_div`, the margin, hinge,
//! smooth/huber, Poisson, binary cross-entropy and CTC losses), composed from ts-tensor's
//! kernels with ATen's formulas, shape checks and reduction codes (0 none, 1 mean, 2 sum).

use ts_tensor::{factory, DType, Error, Operand, Scalar, Tensor};

use super::{def, def_many, Args};
use crate::registry::Registry;

type R<T> = Result<T, Error>;

const ONE: Scalar = Scalar::Int(1);

/// Applies a reduction code.
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

fn float(v: f64) -> Scalar {
    Scalar::Float(v)
}

fn zeros_like(t: &Tensor) -> R<Tensor> {
    factory::zeros_like(t, None)
}

fn select(cond: &Tensor, a: &Tensor, b: &Tensor) -> R<Tensor> {
    ts_tensor::where_(cond, Operand::Tensor(a), Operand::Tensor(b))
}

/// Negative log-likelihood of `[M, C]` log-probabilities at `[M]` class targets: the
/// per-element losses (0 where ignored) and weights (0 where ignored).
fn nll_rows(
    x: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    ignore_index: i64,
) -> R<(Tensor, Tensor)> {
    let c = x.sizes()[1];
    if target.dtype().is_floating_point() || target.dtype() == DType::Bool {
        return Err(Error::runtime(format!(
            "expected scalar type Long but found {}",
            target.dtype().scalar_type_name()
        )));
    }
    let t = target.to_dtype(DType::Int64, false)?;
    let ignored = t.eq_scalar(Scalar::Int(ignore_index))?;
    let safe = t.masked_fill(&ignored, Scalar::Int(0))?;
    let tv = safe.to_vec::<i64>();
    if let Some(bad) = tv.iter().find(|&&v| v < 0 || v >= c) {
        return Err(Error::new(
            ts_tensor::ErrorKind::IndexError,
            format!("Target {bad} is out of bounds."),
        ));
    }
    let picked = x.gather(1, &safe.unsqueeze(1)?)?.squeeze_dim(1)?;
    let w = match weight {
        Some(w) => {
            if w.numel() as i64 != c {
                return Err(Error::runtime(format!(
                    "weight tensor should be defined either for all {c} classes or no classes but got weight tensor of shape: {:?}",
                    w.sizes().as_slice()
                )));
            }
            w.reshape(&[c])?
                .to_dtype(x.dtype(), false)?
                .index_select(0, &safe)?
        }
        None => factory::ones_like(&picked, None)?,
    };
    let w = w.masked_fill(&ignored, Scalar::Int(0))?;
    let loss = picked.mul(&w)?.neg()?;
    Ok((loss, w))
}

/// `nll_loss_nd`: class dim 1 (0 for a 1-d input); targets have the input's shape without it.
/// Returns the reduced loss and the total weight.
fn nll_loss_nd(
    x: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: i64,
    ignore_index: i64,
) -> R<(Tensor, Tensor)> {
    let nd = x.dim();
    if nd < 1 {
        return Err(Error::new(
            ts_tensor::ErrorKind::ValueError,
            format!("Expected 1 or more dimensions (got {nd})"),
        ));
    }
    let (xs, ts) = (x.sizes(), target.sizes());
    if nd != 1 && (target.dim() == 0 || xs[0] != ts[0]) {
        return Err(Error::new(
            ts_tensor::ErrorKind::ValueError,
            format!(
                "Expected input batch_size ({}) to match target batch_size ({}).",
                xs[0],
                ts.first().copied().unwrap_or(1)
            ),
        ));
    }
    let class_dim = if nd == 1 { 0 } else { 1 };
    let c = xs[class_dim];
    let mut expect: Vec<i64> = xs.to_vec();
    expect.remove(class_dim);
    if ts.as_slice() != expect.as_slice() {
        if nd <= 2 {
            return Err(Error::runtime(if target.dim() > 1 {
                "0D or 1D target tensor expected, multi-target not supported".to_string()
            } else {
                format!(
                    "Expected input batch_size ({}) to match target batch_size ({}).",
                    if nd == 1 { 1 } else { xs[0] },
                    ts.first().copied().unwrap_or(1)
                )
            }));
        }
        return Err(Error::runtime(format!(
            "expected target of size {expect:?}, got {:?}",
            ts.as_slice()
        )));
    }
    let x2 = x.movedim(class_dim as i64, -1)?.reshape(&[-1, c])?;
    let t = target.reshape(&[-1])?;
    let (loss, w) = nll_rows(&x2, &t, weight, ignore_index)?;
    let total = w.sum(None, false, None)?;
    let out = match reduction {
        0 => loss.reshape(&ts)?,
        1 => loss.sum(None, false, None)?.div(&total)?,
        2 => loss.sum(None, false, None)?,
        r => {
            return Err(Error::runtime(format!(
                "{r} is not a valid value for reduction"
            )))
        }
    };
    Ok((out, total))
}

/// `cross_entropy_loss`: `log_softmax` then NLL for class-index targets (with ATen's label
/// smoothing), or the soft-target formula for probability targets.
fn cross_entropy(
    x: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: i64,
    ignore_index: i64,
    smoothing: f64,
) -> R<Tensor> {
    let class_dim: i64 = if x.dim() == 1 { 0 } else { 1 };
    if x.dim() == 0 {
        return Err(Error::new(
            ts_tensor::ErrorKind::ValueError,
            "Expected 1 or more dimensions (got 0)",
        ));
    }
    if !(0.0..=1.0).contains(&smoothing) {
        return Err(Error::runtime(format!(
            "label_smoothing must be between 0.0 and 1.0. Got: {smoothing}"
        )));
    }
    let c = x.sizes()[class_dim as usize];
    let logp = x.log_softmax(class_dim, None)?;
    let wview = |w: &Tensor| -> R<Tensor> {
        let mut shape = vec![1i64; x.dim()];
        shape[class_dim as usize] = c;
        w.to_dtype(x.dtype(), false)?.reshape(&shape)
    };
    if target.dtype().is_floating_point() {
        if target.sizes() != x.sizes() {
            return Err(Error::runtime(format!(
                "Expected target size {:?}, got {:?}",
                x.sizes().as_slice(),
                target.sizes().as_slice()
            )));
        }
        let mut t = target.clone();
        if smoothing > 0.0 {
            t = t
                .mul_scalar(float(1.0 - smoothing))?
                .add_scalar(float(smoothing / c as f64), ONE)?;
        }
        let mut prod = logp.mul(&t)?;
        if let Some(w) = weight {
            prod = prod.mul(&wview(w)?)?;
        }
        return match reduction {
            0 => prod.sum(Some(&[class_dim]), false, None)?.neg(),
            1 => {
                let batch = if c == 0 { 0 } else { x.numel() as i64 / c };
                prod.sum(None, false, None)?
                    .neg()?
                    .div_scalar(float(batch as f64))
            }
            2 => prod.sum(None, false, None)?.neg(),
            r => Err(Error::runtime(format!(
                "{r} is not a valid value for reduction"
            ))),
        };
    }
    let (nll, _) = nll_loss_nd(&logp, target, weight, reduction, ignore_index)?;
    if smoothing <= 0.0 {
        return Ok(nll);
    }
    let ignored = target.eq_scalar(Scalar::Int(ignore_index))?;
    let mut smooth = match weight {
        Some(w) => logp.mul(&wview(w)?)?,
        None => logp.clone(),
    }
    .sum(Some(&[class_dim]), false, None)?
    .neg()?;
    smooth = smooth.masked_fill(&ignored, Scalar::Int(0))?;
    let smooth = match reduction {
        0 => smooth,
        1 => {
            let kept = ignored.logical_not()?;
            let denom = match weight {
                Some(w) => w
                    .to_dtype(x.dtype(), false)?
                    .index_select(0, &target.masked_select(&kept)?.reshape(&[-1])?)?
                    .sum(None, false, None)?,
                None => kept.sum(None, false, None)?.to_dtype(x.dtype(), false)?,
            };
            smooth.sum(None, false, None)?.div(&denom)?
        }
        2 => smooth.sum(None, false, None)?,
        r => {
            return Err(Error::runtime(format!(
                "{r} is not a valid value for reduction"
            )))
        }
    };
    nll.mul_scalar(float(1.0 - smoothing))?
        .add(&smooth.mul_scalar(float(smoothing / c as f64))?, ONE)
}

/// `multi_margin_loss`: per sample, `sum_{j != y} max(0, margin - x[y] + x[j])^p * w[y] / C`.
fn multi_margin(
    x: &Tensor,
    target: &Tensor,
    p: i64,
    margin: f64,
    weight: Option<&Tensor>,
    reduction: i64,
) -> R<Tensor> {
    if p != 1 && p != 2 {
        return Err(Error::runtime("only p == 1 and p == 2 supported"));
    }
    let nd = x.dim();
    if nd > 2 {
        return Err(Error::runtime(format!(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: {:?}",
            x.sizes().as_slice()
        )));
    }
    let x2 = if nd < 2 {
        x.reshape(&[1, -1])?
    } else {
        x.clone()
    };
    let (n, c) = (x2.sizes()[0], x2.sizes()[1]);
    let t = target.reshape(&[-1])?.to_dtype(DType::Int64, false)?;
    if t.numel() as i64 != n {
        return Err(Error::runtime(format!(
            "inconsistent target size, expected {n} but got {:?}",
            target.sizes().as_slice()
        )));
    }
    if t.to_vec::<i64>().iter().any(|&v| v < 0 || v >= c) {
        return Err(Error::runtime("target out of range"));
    }
    let xy = x2.gather(1, &t.unsqueeze(1)?)?;
    let mut z = x2
        .sub(&xy, ONE)?
        .add_scalar(float(margin), ONE)?
        .clamp_min(Scalar::Int(0))?;
    if p == 2 {
        z = z.mul(&z)?;
    }
    if let Some(w) = weight {
        let wy = w
            .to_dtype(x.dtype(), false)?
            .index_select(0, &t)?
            .unsqueeze(1)?;
        z = z.mul(&wy)?;
    }
    let classes = factory::arange(Scalar::Int(0), Scalar::Int(c), ONE, Some(DType::Int64))?;
    let own = classes.unsqueeze(0)?.eq(&t.unsqueeze(1)?)?;
    let z = z.masked_fill(&own, Scalar::Int(0))?;
    let per = z
        .sum(Some(&[1]), false, None)?
        .div_scalar(float(c as f64))?;
    let per = if nd < 2 && target.dim() == 0 {
        per.reshape(&[])?
    } else {
        per
    };
    reduce(per, reduction)
}

/// `multilabel_margin_loss`: targets list class indices up to the first `-1`; per sample,
/// `sum_{j in targets, i not in targets} max(0, 1 - (x[j] - x[i])) / C`.
fn multilabel_margin(x: &Tensor, target: &Tensor, reduction: i64) -> R<(Tensor, Tensor)> {
    let nd = x.dim();
    if nd > 2 || target.sizes() != x.sizes() {
        return Err(Error::runtime(format!(
            "inconsistent target size: {:?} for input of size: {:?}",
            target.sizes().as_slice(),
            x.sizes().as_slice()
        )));
    }
    let c = if nd == 0 { 1 } else { x.sizes()[nd - 1] };
    let n = if nd == 2 { x.sizes()[0] } else { 1 };
    let xv = x
        .to_dtype(DType::Float64, false)?
        .contiguous()?
        .to_vec::<f64>();
    let tv = target
        .to_dtype(DType::Int64, false)?
        .contiguous()?
        .to_vec::<i64>();
    let (nu, cu) = (n as usize, c as usize);
    let mut losses = vec![0f64; nu];
    let mut is_target = vec![0f64; nu * cu];
    for b in 0..nu {
        let xs = &xv[b * cu..(b + 1) * cu];
        let ts = &tv[b * cu..(b + 1) * cu];
        let mut labels = Vec::new();
        for &t in ts {
            if t < 0 {
                break;
            }
            if t >= c {
                return Err(Error::runtime(format!(
                    "target index {t} is out of range for {c} classes"
                )));
            }
            labels.push(t as usize);
            is_target[b * cu + t as usize] = 1.0;
        }
        let mut sum = 0.0;
        for &j in &labels {
            for i in 0..cu {
                if is_target[b * cu + i] == 0.0 {
                    let z = 1.0 - (xs[j] - xs[i]);
                    if z > 0.0 {
                        sum += z;
                    }
                }
            }
        }
        losses[b] = sum / c as f64;
    }
    let dt = x.dtype();
    let per = Tensor::from_vec(losses, &[n])?.to_dtype(dt, false)?;
    let per = if nd < 2 { per.reshape(&[])? } else { per };
    let is_target = Tensor::from_vec(is_target, &x.sizes())?.to_dtype(dt, false)?;
    Ok((reduce(per, reduction)?, is_target))
}

/// `kl_div`: `target * (log(target) - input)` (0 where target is 0), or with log targets
/// `exp(target) * (target - input)`.
fn kl_div(x: &Tensor, t: &Tensor, reduction: i64, log_target: bool) -> R<Tensor> {
    let loss = if log_target {
        t.exp()?.mul(&t.sub(x, ONE)?)?
    } else {
        let tlogt = t.mul(&t.log()?)?;
        let tlogt = tlogt.masked_fill(&t.eq_scalar(Scalar::Int(0))?, Scalar::Int(0))?;
        tlogt.sub(&t.mul(x)?, ONE)?
    };
    reduce(loss, reduction)
}

/// `|x - y| < beta ? 0.5 (x - y)^2 / beta : |x - y| - 0.5 beta` (`beta = 0` is L1).
fn smooth_l1(x: &Tensor, y: &Tensor, reduction: i64, beta: f64) -> R<Tensor> {
    if beta < 0.0 {
        return Err(Error::runtime(
            "smooth_l1_loss does not support negative values for beta.",
        ));
    }
    let z = x.sub(y, ONE)?.abs()?;
    if beta == 0.0 {
        return reduce(z, reduction);
    }
    let quad = z.mul(&z)?.mul_scalar(float(0.5))?.div_scalar(float(beta))?;
    let lin = z.sub_scalar(float(0.5 * beta), ONE)?;
    reduce(select(&z.lt_scalar(float(beta))?, &quad, &lin)?, reduction)
}

/// `|x - y| < delta ? 0.5 (x - y)^2 : delta (|x - y| - 0.5 delta)`.
fn huber(x: &Tensor, y: &Tensor, reduction: i64, delta: f64) -> R<Tensor> {
    if delta <= 0.0 {
        return Err(Error::runtime(
            "huber_loss does not support non-positive values for delta.",
        ));
    }
    let z = x.sub(y, ONE)?.abs()?;
    let quad = z.mul(&z)?.mul_scalar(float(0.5))?;
    let lin = z
        .sub_scalar(float(0.5 * delta), ONE)?
        .mul_scalar(float(delta))?;
    reduce(select(&z.lt_scalar(float(delta))?, &quad, &lin)?, reduction)
}

/// `binary_cross_entropy`: `-w (t log x + (1 - t) log(1 - x))` with logs clamped at -100.
fn bce(x: &Tensor, t: &Tensor, weight: Option<&Tensor>, reduction: i64) -> R<Tensor> {
    if x.sizes() != t.sizes() {
        return Err(Error::new(
            ts_tensor::ErrorKind::ValueError,
            format!(
                "Using a target size ({:?}) that is different to the input size ({:?}) is deprecated. Please ensure they have the same size.",
                t.sizes().as_slice(),
                x.sizes().as_slice()
            ),
        ));
    }
    let bad = x
        .lt_scalar(Scalar::Int(0))?
        .logical_or(&x.gt_scalar(Scalar::Int(1))?)?;
    if bad.any(None, false)?.item()?.to_bool() {
        return Err(Error::runtime(
            "all elements of input should be between 0 and 1",
        ));
    }
    let lx = x.log()?.clamp_min(float(-100.0))?;
    let l1x = x.neg()?.log1p()?.clamp_min(float(-100.0))?;
    let one_minus_t = t.neg()?.add_scalar(ONE, ONE)?;
    let mut loss = t.mul(&lx)?.add(&one_minus_t.mul(&l1x)?, ONE)?.neg()?;
    if let Some(w) = weight {
        loss = loss.mul(w)?;
    }
    reduce(loss, reduction)
}

/// `binary_cross_entropy_with_logits`: `(1 - t) x - lw * logsigmoid(x)` with
/// `lw = 1 + (pos_weight - 1) t`.
fn bce_logits(
    x: &Tensor,
    t: &Tensor,
    weight: Option<&Tensor>,
    pos_weight: Option<&Tensor>,
    reduction: i64,
) -> R<Tensor> {
    let one_minus_t = t.neg()?.add_scalar(ONE, ONE)?;
    let ls = x.log_sigmoid()?;
    let mut loss = match pos_weight {
        Some(pw) => {
            let lw = pw.sub_scalar(ONE, ONE)?.mul(t)?.add_scalar(ONE, ONE)?;
            one_minus_t.mul(x)?.sub(&lw.mul(&ls)?, ONE)?
        }
        None => one_minus_t.mul(x)?.sub(&ls, ONE)?,
    };
    if let Some(w) = weight {
        loss = loss.mul(w)?;
    }
    reduce(loss, reduction)
}

/// `poisson_nll_loss`: `exp(x) - t x` (log input) or `x - t log(x + eps)`, plus Stirling's
/// term for `t > 1` when `full`.
fn poisson_nll(
    x: &Tensor,
    t: &Tensor,
    log_input: bool,
    full: bool,
    eps: f64,
    reduction: i64,
) -> R<Tensor> {
    let mut loss = if log_input {
        x.exp()?.sub(&t.mul(x)?, ONE)?
    } else {
        x.sub(&t.mul(&x.add_scalar(float(eps), ONE)?.log()?)?, ONE)?
    };
    if full {
        let two_pi_t = t.mul_scalar(float(2.0 * std::f64::consts::PI))?;
        let stirling = t
            .mul(&t.log()?)?
            .sub(t, ONE)?
            .add(&two_pi_t.log()?.mul_scalar(float(0.5))?, ONE)?;
        let stirling = stirling.masked_fill(&t.le_scalar(ONE)?, Scalar::Int(0))?;
        loss = loss.add(&stirling, ONE)?;
    }
    reduce(loss, reduction)
}

/// `cosine_embedding_loss`: `1 - cos` for target 1, `max(0, cos - margin)` for target -1.
fn cosine_embedding(
    x1: &Tensor,
    x2: &Tensor,
    target: &Tensor,
    margin: f64,
    reduction: i64,
) -> R<Tensor> {
    let td = target.dim();
    if td > 1 {
        return Err(Error::runtime(format!(
            "0D or 1D target tensor expected, multi-target not supported, but got {td}D target"
        )));
    }
    if x1.sizes() != x2.sizes() {
        return Err(Error::runtime(format!(
            "cosine_embedding_loss: Input1 and Input2 must have same size, but got {:?} and {:?}",
            x1.sizes().as_slice(),
            x2.sizes().as_slice()
        )));
    }
    let (d1, d2) = (x1.dim(), x2.dim());
    if d1 != td + 1 || d2 != td + 1 {
        return Err(Error::runtime(format!(
            "{}D target tensor expects {}D input tensors, but found inputs with sizes {:?} and {:?}.",
            td,
            td + 1,
            x1.sizes().as_slice(),
            x2.sizes().as_slice()
        )));
    }
    let dim = td as i64;
    let eps = 1e-12;
    let prod = x1.mul(x2)?.sum(Some(&[dim]), false, None)?;
    let m1 = x1
        .mul(x1)?
        .sum(Some(&[dim]), false, None)?
        .add_scalar(float(eps), ONE)?;
    let m2 = x2
        .mul(x2)?
        .sum(Some(&[dim]), false, None)?
        .add_scalar(float(eps), ONE)?;
    let cos = prod.div(&m1.mul(&m2)?.sqrt()?)?;
    let zeros = zeros_like(&cos)?;
    let pos = cos.neg()?.add_scalar(ONE, ONE)?;
    let neg = cos
        .sub_scalar(float(margin), ONE)?
        .clamp_min(Scalar::Int(0))?;
    let out = select(&target.eq_scalar(ONE)?, &pos, &zeros)?.add(
        &select(&target.eq_scalar(Scalar::Int(-1))?, &neg, &zeros)?,
        ONE,
    )?;
    reduce(out, reduction)
}

/// `hinge_embedding_loss`: `x` where target is 1, `max(0, margin - x)` where it is -1.
fn hinge_embedding(x: &Tensor, t: &Tensor, margin: f64, reduction: i64) -> R<Tensor> {
    let zeros = zeros_like(x)?;
    let clamp = x
        .neg()?
        .add_scalar(float(margin), ONE)?
        .clamp_min(Scalar::Int(0))?;
    let out_margin = select(&t.ne_scalar(ONE)?, &clamp, &zeros)?;
    let out_self = select(&t.ne_scalar(Scalar::Int(-1))?, x, &zeros)?;
    reduce(out_margin.add(&out_self, ONE)?, reduction)
}

/// `pairwise_distance(x1, x2, p, eps)` over the last dim.
fn pairwise(x1: &Tensor, x2: &Tensor, p: f64, eps: f64) -> R<Tensor> {
    x1.sub(x2, ONE)?
        .add_scalar(float(eps), ONE)?
        .norm(Some(float(p)), Some(&[-1]), false, None)
}

/// `triplet_margin_loss`: `max(0, margin + d(a, p) - d(a, n))`, `d(a, n)` replaced by
/// `min(d(a, n), d(p, n))` with `swap`.
#[allow(clippy::too_many_arguments)]
fn triplet_margin(
    a: &Tensor,
    pos: &Tensor,
    neg: &Tensor,
    margin: f64,
    p: f64,
    eps: f64,
    swap: bool,
    reduction: i64,
) -> R<Tensor> {
    let (ad, pd, nd) = (a.dim(), pos.dim(), neg.dim());
    if ad != pd || pd != nd {
        return Err(Error::runtime(format!(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: anchor {ad}D, positive {pd}D, and negative {nd}D inputs"
        )));
    }
    let dp = pairwise(a, pos, p, eps)?;
    let mut dn = pairwise(a, neg, p, eps)?;
    if swap {
        dn = dn.minimum(&pairwise(pos, neg, p, eps)?)?;
    }
    let out = dp
        .sub(&dn, ONE)?
        .add_scalar(float(margin), ONE)?
        .clamp_min(Scalar::Int(0))?;
    reduce(out, reduction)
}

/// Lengths given as an `int[]` or a tensor.
fn lengths(a: &Args, i: usize) -> R<Vec<i64>> {
    match a.v(i)? {
        ts_core::IValue::Tensor(t) => Ok(t.to_dtype(DType::Int64, false)?.reshape(&[-1])?.to_vec()),
        _ => a.ints(i),
    }
}

/// Registers the loss operators.
pub fn register(r: &Registry) {
    def_many(
        r,
        &["aten::nll_loss", "aten::nll_loss_nd", "aten::nll_loss2d"],
        |a| Ok(nll_loss_nd(a.t(0)?, a.t(1)?, a.ot(2)?, a.int(3)?, a.int(4)?)?.0),
    );
    def_many(
        r,
        &["aten::nll_loss_forward", "aten::nll_loss2d_forward"],
        |a| nll_loss_nd(a.t(0)?, a.t(1)?, a.ot(2)?, a.int(3)?, a.int(4)?),
    );
    def(r, "aten::cross_entropy_loss", |a| {
        cross_entropy(a.t(0)?, a.t(1)?, a.ot(2)?, a.int(3)?, a.int(4)?, a.f(5)?)
    });
    def(r, "aten::kl_div", |a| {
        kl_div(a.t(0)?, a.t(1)?, a.int(2)?, a.b(3)?)
    });
    def(r, "aten::smooth_l1_loss", |a| {
        smooth_l1(a.t(0)?, a.t(1)?, a.int(2)?, a.f(3)?)
    });
    def(r, "aten::huber_loss", |a| {
        huber(a.t(0)?, a.t(1)?, a.int(2)?, a.f(3)?)
    });
    def(r, "aten::soft_margin_loss", |a| {
        let (x, t) = (a.t(0)?, a.t(1)?);
        reduce(t.neg()?.mul(x)?.exp()?.log1p()?, a.int(2)?)
    });
    def(r, "aten::margin_ranking_loss", |a| {
        let (x1, x2, t) = (a.t(0)?, a.t(1)?, a.t(2)?);
        let out = t
            .neg()?
            .mul(&x1.sub(x2, ONE)?)?
            .add_scalar(float(a.f(3)?), ONE)?
            .clamp_min(Scalar::Int(0))?;
        reduce(out, a.int(4)?)
    });
    def(r, "aten::hinge_embedding_loss", |a| {
        hinge_embedding(a.t(0)?, a.t(1)?, a.f(2)?, a.int(3)?)
    });
    def(r, "aten::cosine_embedding_loss", |a| {
        cosine_embedding(a.t(0)?, a.t(1)?, a.t(2)?, a.f(3)?, a.int(4)?)
    });
    def(r, "aten::triplet_margin_loss", |a| {
        triplet_margin(
            a.t(0)?,
            a.t(1)?,
            a.t(2)?,
            a.f(3)?,
            a.f(4)?,
            a.f(5)?,
            a.b(6)?,
            a.int(7)?,
        )
    });
    def(r, "aten::multi_margin_loss", |a| {
        let p = a.s(2)?.to_f64();
        if p != 1.0 && p != 2.0 {
            return Err(Error::runtime("only p == 1 and p == 2 supported"));
        }
        multi_margin(
            a.t(0)?,
            a.t(1)?,
            p as i64,
            a.s(3)?.to_f64(),
            a.ot(4)?,
            a.int(5)?,
        )
    });
    def(r, "aten::multilabel_margin_loss", |a| {
        Ok(multilabel_margin(a.t(0)?, a.t(1)?, a.int(2)?)?.0)
    });
    def(r, "aten::multilabel_margin_loss_forward", |a| {
        multilabel_margin(a.t(0)?, a.t(1)?, a.int(2)?)
    });
    def(r, "aten::binary_cross_entropy", |a| {
        bce(a.t(0)?, a.t(1)?, a.ot(2)?, a.int(3)?)
    });
    def(r, "aten::binary_cross_entropy_with_logits", |a| {
        bce_logits(a.t(0)?, a.t(1)?, a.ot(2)?, a.ot(3)?, a.int(4)?)
    });
    def(r, "aten::poisson_nll_loss", |a| {
        poisson_nll(a.t(0)?, a.t(1)?, a.b(2)?, a.b(3)?, a.f(4)?, a.int(5)?)
    });
    def_many(
        r,
        &["aten::ctc_loss.IntList", "aten::ctc_loss.Tensor"],
        |a| {
            ts_tensor::ctc_loss(
                a.t(0)?,
                a.t(1)?,
                &lengths(a, 2)?,
                &lengths(a, 3)?,
                a.int(4)?,
                a.int(5)?,
                a.b(6)?,
            )
        },
    );
    def_many(r, &["aten::_ctc_loss", "aten::_ctc_loss.Tensor"], |a| {
        let res = ts_tensor::ctc_loss_forward(
            a.t(0)?,
            a.t(1)?,
            &lengths(a, 2)?,
            &lengths(a, 3)?,
            a.int(4)?,
        )?;
        let nll = if a.b(5)? {
            res.0.masked_fill(&res.0.isinf()?, Scalar::Int(0))?
        } else {
            res.0
        };
        Ok((nll, res.1))
    });
}
