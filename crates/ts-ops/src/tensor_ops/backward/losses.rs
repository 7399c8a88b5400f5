//! Backward kernels of the losses: the derivative of the forward loss with respect to its
//! input (`self`), taken through the loss's own formula.

use ts_core::IValue;
use ts_tensor::{DType, Error, Tensor};

use super::{tv, vjp_op};
use crate::autograd::ops as o;
use crate::registry::Registry;
use crate::tensor_ops::{def, Args};

/// `(grad_output, self, rest...)` → the gradient of `fwd(self, rest...)` at `self`.
fn loss_grad(a: &Args, fwd: &str) -> Result<Tensor, Error> {
    let mut args = vec![tv(a.t(1)?)];
    args.extend(a.0[2..].iter().cloned());
    Ok(vjp_op(fwd, args, &[0], a.t(0)?)?.remove(0))
}

/// `nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight)`
/// (also the 2-D form): `-weight[t] * grad` at each target class, divided by the given
/// `total_weight` for a mean (the incoming gradient is divided first, as ATen does, so ignored
/// targets stay zero even when the total weight is zero).
fn nll_backward(a: &Args) -> Result<Tensor, Error> {
    let (g, x, target) = (a.t(0)?, a.t(1)?, a.t(2)?);
    let weight = a.ot(3)?;
    let reduction = a.int(4)?;
    let ignore = a.int(5)?;
    let total = a.t(6)?;
    if total.numel() != 1 {
        return Err(Error::runtime(format!(
            "expected total_weight to be a single element tensor, got: {:?} ({} elements)",
            total.sizes().as_slice(),
            total.numel()
        )));
    }
    if !matches!(target.dtype(), DType::Int64 | DType::UInt8 | DType::Int32) {
        return Err(Error::runtime(format!(
            "expected scalar type Long but found {:?}",
            target.dtype()
        )));
    }
    let batched = x.dim() >= 2;
    let class_dim: i64 = if batched { 1 } else { 0 };
    let mut expected: Vec<i64> = x.sizes().to_vec();
    expected.remove(class_dim as usize);
    if target.sizes().as_slice() != expected {
        return Err(Error::runtime(format!(
            "nll_loss_backward: target of shape {:?} does not match input of shape {:?}",
            target.sizes().as_slice(),
            x.sizes().as_slice()
        )));
    }
    let c = x.sizes()[class_dim as usize];
    let t = o::to_dtype(target, DType::Int64)?;
    let ignored = o::call1("aten::eq.Scalar", vec![tv(&t), IValue::Int(ignore)])?;
    let safe = o::where_(&ignored, &o::zeros_like(&t)?, &t)?;
    let bad = o::call1(
        "aten::logical_or",
        vec![tv(&o::lt_s(&safe, 0.0)?), tv(&o::ge_s(&safe, c as f64)?)],
    )?;
    if o::call1("aten::any", vec![tv(&bad)])?.item()?.to_bool() {
        return Err(Error::runtime(format!(
            "Target out of bounds: a target is outside [0, {c})"
        )));
    }
    let coef = match reduction {
        0 => {
            if g.sizes().as_slice() != expected {
                return Err(Error::runtime(format!(
                    "nll_loss_backward: expected grad_output of shape {expected:?}, got {:?}",
                    g.sizes().as_slice()
                )));
            }
            g.clone()
        }
        1 | 2 => {
            if g.numel() != 1 {
                return Err(Error::runtime(format!(
                    "Expected a single element grad_output tensor, but got: {:?}",
                    g.sizes().as_slice()
                )));
            }
            let g = o::reshape(g, &[])?;
            let g = if reduction == 1 {
                o::div(&g, &o::to_dtype(&o::reshape(total, &[])?, g.dtype())?)?
            } else {
                g
            };
            o::expand(&g, &expected)?
        }
        r => {
            return Err(Error::runtime(format!(
                "nll_loss_backward: unknown reduction {r}"
            )))
        }
    };
    let val = match weight {
        Some(w) => {
            let wt = o::call1(
                "aten::index_select",
                vec![tv(w), IValue::Int(0), tv(&o::reshape(&safe, &[-1])?)],
            )?;
            o::mul(&coef, &o::reshape(&wt, &expected)?)?
        }
        None => coef,
    };
    let val = o::where_(&ignored, &o::zeros_like(&val)?, &o::neg(&val)?)?;
    let z = o::zeros_like(x)?;
    o::call1(
        "aten::scatter.src",
        vec![
            tv(&z),
            IValue::Int(class_dim),
            tv(&o::unsqueeze(&safe, class_dim)?),
            tv(&o::unsqueeze(&o::to_dtype(&val, x.dtype())?, class_dim)?),
        ],
    )
}

/// `log(exp(a) + exp(b))`, exact at `-inf`.
fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    if b == f64::NEG_INFINITY {
        return a;
    }
    let m = a.max(b);
    m + ((a - m).exp() + (b - m).exp()).ln()
}

/// The integer lengths of a `_ctc_loss_backward` argument (`int[]` or a tensor).
fn lengths(a: &Args, i: usize) -> Result<Vec<i64>, Error> {
    match a.v(i)? {
        IValue::Tensor(t) => Ok(o::to_dtype(t, DType::Int64)?.to_vec()),
        _ => a.ints(i),
    }
}

/// `_ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, nll,
/// log_alpha, blank, zero_infinity)`: the CTC gradient with respect to the log
/// probabilities, from the forward's `log_alpha` and a backward (beta) recursion over the
/// blank-extended target: `exp(lp) - exp(log(sum_s alpha beta) + nll - lp)`, scaled by the
/// incoming per-sample gradient.
fn ctc_loss_backward(a: &Args) -> Result<Tensor, Error> {
    let (go, lp_t, targets, nll_t, alpha_t) = (a.t(0)?, a.t(1)?, a.t(2)?, a.t(5)?, a.t(6)?);
    let (in_lens, tg_lens) = (lengths(a, 3)?, lengths(a, 4)?);
    let (blank, zero_inf) = (a.int(7)?, a.b(8)?);
    if lp_t.dim() != 3 {
        return Err(Error::runtime(format!(
            "_ctc_loss_backward: expected log_probs of shape [T, N, C], got {:?}",
            lp_t.sizes().as_slice()
        )));
    }
    let (tmax, n, c) = (lp_t.sizes()[0], lp_t.sizes()[1], lp_t.sizes()[2]);
    if in_lens.len() as i64 != n || tg_lens.len() as i64 != n {
        return Err(Error::runtime(format!(
            "_ctc_loss_backward: expected {n} input and target lengths, got {} and {}",
            in_lens.len(),
            tg_lens.len()
        )));
    }
    if blank < 0 || blank >= c {
        return Err(Error::runtime("blank must be in label range"));
    }
    let smax = alpha_t.sizes().get(2).copied().unwrap_or(0);
    if alpha_t.dim() != 3 || alpha_t.sizes()[0] != n || alpha_t.sizes()[1] != tmax {
        return Err(Error::runtime(format!(
            "_ctc_loss_backward: log_alpha of shape {:?} does not match log_probs of shape {:?}",
            alpha_t.sizes().as_slice(),
            lp_t.sizes().as_slice()
        )));
    }
    let lp: Vec<f64> = lp_t.to_vec();
    let alpha: Vec<f64> = alpha_t.to_vec();
    let nll: Vec<f64> = o::reshape(nll_t, &[-1])?.to_vec();
    let gout: Vec<f64> = o::expand(&o::reshape(go, &[-1])?, &[n])?.to_vec();
    let tg: Vec<i64> = o::to_dtype(targets, DType::Int64)?.to_vec();
    let tg_row = if targets.dim() == 2 {
        targets.sizes()[1]
    } else {
        0
    };
    if nll.len() as i64 != n {
        return Err(Error::runtime(
            "_ctc_loss_backward: neg_log_likelihood needs one value per batch entry",
        ));
    }
    let at = |t: i64, b: i64, k: i64| ((t * n + b) * c + k) as usize;
    let mut grad = vec![0.0f64; (tmax * n * c) as usize];
    let mut offset = 0i64;
    for b in 0..n {
        let (tl, ll) = (in_lens[b as usize], tg_lens[b as usize]);
        let start = if targets.dim() == 2 {
            b * tg_row
        } else {
            offset
        };
        offset += ll;
        if tl < 0 || tl > tmax || ll < 0 || 2 * ll + 1 > smax || start + ll > tg.len() as i64 {
            return Err(Error::runtime(format!(
                "_ctc_loss_backward: lengths of batch entry {b} (input {tl}, target {ll}) do not fit the inputs"
            )));
        }
        let label = |s: i64| -> i64 {
            if s % 2 == 0 {
                blank
            } else {
                tg[(start + (s - 1) / 2) as usize]
            }
        };
        for s in 0..2 * ll + 1 {
            let l = label(s);
            if l < 0 || l >= c {
                return Err(Error::runtime(format!(
                    "_ctc_loss_backward: target {l} is out of the label range"
                )));
            }
        }
        let sn = (2 * ll + 1) as usize;
        if (zero_inf && nll[b as usize] == f64::INFINITY) || tl == 0 {
            continue;
        }
        // Beta recursion from the last frame.
        let mut beta = vec![vec![f64::NEG_INFINITY; sn]; tl as usize];
        let last = (tl - 1) as usize;
        beta[last][sn - 1] = lp[at(tl - 1, b, blank)];
        if ll > 0 {
            beta[last][sn - 2] = lp[at(tl - 1, b, label(2 * ll - 1))];
        }
        for t in (0..tl - 1).rev() {
            for s in 0..sn {
                let si = s as i64;
                let mut acc = beta[(t + 1) as usize][s];
                if s + 1 < sn {
                    acc = log_add(acc, beta[(t + 1) as usize][s + 1]);
                }
                if s + 2 < sn && label(si) != label(si + 2) {
                    acc = log_add(acc, beta[(t + 1) as usize][s + 2]);
                }
                beta[t as usize][s] = acc + lp[at(t, b, label(si))];
            }
        }
        let nl = nll[b as usize];
        let g = gout[b as usize];
        for t in 0..tl {
            let mut lcab = vec![f64::NEG_INFINITY; c as usize];
            for s in 0..sn {
                let al = alpha[((b * tmax + t) * smax) as usize + s];
                let k = label(s as i64) as usize;
                lcab[k] = log_add(lcab[k], al + beta[t as usize][s]);
            }
            for k in 0..c {
                let l = lp[at(t, b, k)];
                grad[at(t, b, k)] = (l.exp() - (lcab[k as usize] + nl - l).exp()) * g;
            }
        }
    }
    let out = Tensor::from_vec(grad, &[tmax, n, c])?;
    o::to_dtype(&out, lp_t.dtype())
}

pub(super) fn register(r: &Registry) {
    for (name, fwd) in [
        ("aten::mse_loss_backward", "aten::mse_loss"),
        ("aten::huber_loss_backward", "aten::huber_loss"),
        ("aten::smooth_l1_loss_backward", "aten::smooth_l1_loss"),
        ("aten::soft_margin_loss_backward", "aten::soft_margin_loss"),
        (
            "aten::binary_cross_entropy_backward",
            "aten::binary_cross_entropy",
        ),
        (
            "aten::multi_margin_loss_backward",
            "aten::multi_margin_loss",
        ),
    ] {
        def(r, name, move |a| loss_grad(a, fwd));
    }
    def(r, "aten::multilabel_margin_loss_backward", |a| {
        let args = vec![tv(a.t(1)?), tv(a.t(2)?), IValue::Int(a.int(3)?)];
        Ok(vjp_op("aten::multilabel_margin_loss", args, &[0], a.t(0)?)?.remove(0))
    });
    for name in [
        "aten::_ctc_loss_backward",
        "aten::_ctc_loss_backward.Tensor",
    ] {
        def(r, name, ctc_loss_backward);
    }
    def(r, "aten::nll_loss_backward", nll_backward);
    def(r, "aten::nll_loss2d_backward", nll_backward);
}
