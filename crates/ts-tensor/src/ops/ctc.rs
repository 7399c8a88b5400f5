//! Connectionist temporal classification loss (`aten::_ctc_loss`, `aten::ctc_loss`): the
//! negative log-likelihood of each target sequence under the per-frame log-probabilities,
//! summed over all alignments with blanks by the forward (alpha) recursion in log space.

use rayon::prelude::*;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// `log(exp(a) + exp(b))` that keeps `-inf` exact.
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

/// `_ctc_loss(log_probs, targets, input_lengths, target_lengths, blank)`: `log_probs` is
/// `[T, N, C]`; `targets` is `[N, S]` (padded) or 1-d (concatenated). Returns the per-sample
/// negative log-likelihood `[N]` and the log-alphas `[N, T, 2 * max_target + 1]`.
pub fn ctc_loss_forward(
    log_probs: &Tensor,
    targets: &Tensor,
    input_lengths: &[i64],
    target_lengths: &[i64],
    blank: i64,
) -> Result<(Tensor, Tensor)> {
    let dt = log_probs.dtype();
    if !dt.is_floating_point() {
        return Err(crate::cpu::dispatch::not_implemented("ctc_loss_cpu", dt));
    }
    if log_probs.dim() != 3 {
        return Err(Error::runtime(format!(
            "ctc_loss: expected log_probs to be 3-dimensional ([T, N, C]), but got {:?}",
            log_probs.sizes().as_slice()
        )));
    }
    if targets.dtype().is_floating_point() || targets.dtype() == DType::Bool {
        return Err(Error::runtime(format!(
            "ctc_loss: expected targets to have an integer dtype, but got {}",
            targets.dtype().scalar_type_name()
        )));
    }
    let ls = log_probs.sizes();
    let (t_max, n, c) = (ls[0], ls[1], ls[2]);
    if blank < 0 || blank >= c {
        return Err(Error::runtime("blank must be in label range"));
    }
    if input_lengths.len() as i64 != n {
        return Err(Error::runtime(format!(
            "input_lengths must be of size batch_size, but got {} and batch size {n}",
            input_lengths.len()
        )));
    }
    if target_lengths.len() as i64 != n {
        return Err(Error::runtime(format!(
            "target_lengths must be of size batch_size, but got {} and batch size {n}",
            target_lengths.len()
        )));
    }
    let tg = targets.contiguous_vec::<i64>()?;
    // Where each sample's target starts in the flat target buffer.
    let mut starts = Vec::with_capacity(n as usize);
    let max_target = target_lengths.iter().copied().max().unwrap_or(0).max(0);
    if targets.dim() == 1 {
        let mut pos = 0i64;
        for &l in target_lengths {
            starts.push(pos);
            pos += l;
        }
        if pos > tg.len() as i64 {
            return Err(Error::runtime(format!(
                "Expected tensor to have size at least {pos} at dimension 0, but got size {} for argument #2 'targets' (while checking arguments for ctc_loss_cpu)",
                tg.len()
            )));
        }
    } else {
        let ts = targets.sizes();
        if targets.dim() != 2 || ts[0] != n {
            return Err(Error::runtime(format!(
                "ctc_loss: expected targets of shape [N, S] or a 1-d concatenation, but got {:?}",
                ts.as_slice()
            )));
        }
        if max_target > ts[1] {
            return Err(Error::runtime(format!(
                "Expected tensor to have size at least {max_target} at dimension 1, but got size {} for argument #2 'targets' (while checking arguments for ctc_loss_cpu)",
                ts[1]
            )));
        }
        for b in 0..n {
            starts.push(b * ts[1]);
        }
    }
    for b in 0..n as usize {
        if input_lengths[b] < 0 || input_lengths[b] > t_max {
            return Err(Error::runtime(format!(
                "Expected input_lengths to have value at most {t_max}, but got value {} (while checking arguments for ctc_loss_cpu)",
                input_lengths[b]
            )));
        }
        if target_lengths[b] < 0 {
            return Err(Error::runtime(format!(
                "Expected target_lengths to be non-negative, but got value {}",
                target_lengths[b]
            )));
        }
    }
    let lp = log_probs.contiguous_vec::<f64>()?;
    let s_max = (2 * max_target + 1) as usize;
    let (tu, nu, cu) = (t_max as usize, n as usize, c as usize);
    let results: Vec<(f64, Vec<f64>)> = (0..nu)
        .into_par_iter()
        .with_min_len(crate::threads::min_piece(true))
        .map(|b| {
            let tl = target_lengths[b] as usize;
            let il = input_lengths[b] as usize;
            let tgt = &tg[starts[b] as usize..starts[b] as usize + tl];
            let s_len = 2 * tl + 1;
            // Extended label: blanks around and between the targets.
            let label = |s: usize| -> i64 {
                if s.is_multiple_of(2) {
                    blank
                } else {
                    tgt[s / 2]
                }
            };
            let at = |t: usize, k: i64| -> f64 {
                if k < 0 || k as usize >= cu {
                    f64::NAN
                } else {
                    lp[(t * nu + b) * cu + k as usize]
                }
            };
            let mut alpha = vec![f64::NEG_INFINITY; tu * s_max];
            if il == 0 {
                let nll = if tl == 0 { 0.0 } else { f64::INFINITY };
                return (nll, alpha);
            }
            alpha[0] = at(0, blank);
            if s_len > 1 {
                alpha[1] = at(0, label(1));
            }
            for t in 1..il {
                for s in 0..s_len {
                    let l = label(s);
                    let prev = &alpha[(t - 1) * s_max..t * s_max];
                    let mut a = prev[s];
                    if s > 0 {
                        a = log_add(a, prev[s - 1]);
                    }
                    if s > 1 && l != blank && l != label(s - 2) {
                        a = log_add(a, prev[s - 2]);
                    }
                    alpha[t * s_max + s] = if a == f64::NEG_INFINITY {
                        a
                    } else {
                        a + at(t, l)
                    };
                }
            }
            let last = &alpha[(il - 1) * s_max..il * s_max];
            let mut ll = last[s_len - 1];
            if s_len > 1 {
                ll = log_add(ll, last[s_len - 2]);
            }
            (-ll, alpha)
        })
        .collect();
    let mut nll = Vec::with_capacity(nu);
    let mut alphas = Vec::with_capacity(nu * tu * s_max);
    for (l, a) in results {
        nll.push(l);
        alphas.extend(a);
    }
    let nll = Tensor::from_vec(nll, &[n])?.to_dtype(dt, false)?;
    let alphas = Tensor::from_vec(alphas, &[n, t_max, s_max as i64])?.to_dtype(dt, false)?;
    Ok((nll, alphas))
}

/// `ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
/// zero_infinity)`: unbatched `[T, C]` inputs are accepted; reduction 1 (mean) divides each loss
/// by its target length (at least 1) before averaging, 2 sums, 0 keeps `[N]`.
pub fn ctc_loss(
    log_probs: &Tensor,
    targets: &Tensor,
    input_lengths: &[i64],
    target_lengths: &[i64],
    blank: i64,
    reduction: i64,
    zero_infinity: bool,
) -> Result<Tensor> {
    let unbatched = log_probs.dim() == 2;
    let (lp, tg) = if unbatched {
        (log_probs.unsqueeze(1)?, targets.unsqueeze(0)?)
    } else {
        (log_probs.clone(), targets.clone())
    };
    let (mut res, _) = ctc_loss_forward(&lp, &tg, input_lengths, target_lengths, blank)?;
    if zero_infinity {
        res = res.masked_fill(&res.isinf()?, crate::Scalar::Int(0))?;
    }
    let out = match reduction {
        0 => res,
        1 => {
            let tl: Vec<f64> = target_lengths.iter().map(|&l| l.max(1) as f64).collect();
            let len = tl.len() as i64;
            let tl = Tensor::from_vec(tl, &[len])?.to_dtype(res.dtype(), false)?;
            res.div(&tl)?.mean(None, false, None)?
        }
        2 => res.sum(None, false, None)?,
        r => {
            return Err(Error::runtime(format!(
                "{r} is not a valid value for reduction"
            )))
        }
    };
    if unbatched && reduction == 0 {
        out.squeeze_dim(0)
    } else {
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_frame_single_label() {
        // T=1, C=2, target [1]: the only path emits label 1 at frame 0.
        let lp = Tensor::from_vec(vec![0.25f64.ln(), 0.75f64.ln()], &[1, 1, 2]).unwrap();
        let tg = Tensor::from_vec(vec![1i64], &[1, 1]).unwrap();
        let (nll, _) = ctc_loss_forward(&lp, &tg, &[1], &[1], 0).unwrap();
        assert!((nll.to_vec::<f64>()[0] + 0.75f64.ln()).abs() < 1e-12);
        // Two frames: paths "1b", "b1", "11".
        let lp = Tensor::from_vec(vec![0.5f64.ln(); 4], &[2, 1, 2]).unwrap();
        let (nll, _) = ctc_loss_forward(&lp, &tg, &[2], &[1], 0).unwrap();
        assert!((nll.to_vec::<f64>()[0] + 0.75f64.ln()).abs() < 1e-12);
        // Impossible: more labels than frames.
        let tg2 = Tensor::from_vec(vec![1i64, 1], &[1, 2]).unwrap();
        let (nll, _) = ctc_loss_forward(&lp, &tg2, &[2], &[2], 0).unwrap();
        assert!(nll.to_vec::<f64>()[0].is_infinite());
    }
}
