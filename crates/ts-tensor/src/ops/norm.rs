//! Normalization layers (`batch_norm` in inference and training mode, `layer_norm`,
//! `group_norm`, `instance_norm`) and `dropout`, composed from the crate's reductions and
//! broadcasting arithmetic. Half-precision inputs are computed in f32.

use crate::cpu::contiguous::map_rows;
use crate::cpu::num::{FloatMath, OpNum};
use crate::cpu::simd::simd_dispatch;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::generator::Generator;
use crate::scalar::Scalar;
use crate::tensor::Tensor;

/// The dtype statistics are computed in.
fn stat_dtype(dt: DType) -> DType {
    match dt {
        DType::Float64 => DType::Float64,
        _ => DType::Float32,
    }
}

/// `[1, C, 1, ...]`: a per-channel vector shaped to broadcast over an `nd`-d input.
fn channel_view(v: &Tensor, nd: usize, c: i64) -> Result<Tensor> {
    let mut shape = vec![1i64; nd];
    shape[1] = c;
    v.reshape(&shape)
}

fn check_float(t: &Tensor, name: &str) -> Result<()> {
    if !t.dtype().is_floating_point() {
        return Err(crate::cpu::dispatch::not_implemented(name, t.dtype()));
    }
    Ok(())
}

/// `(x - mean) * rsqrt(var + eps)`, then the optional affine transform (already broadcastable).
fn normalize(
    x: &Tensor,
    mean: &Tensor,
    var: &Tensor,
    eps: f64,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
) -> Result<Tensor> {
    let inv = var
        .add_scalar(Scalar::Float(eps), Scalar::Int(1))?
        .rsqrt()?;
    let mut out = x.sub(mean, Scalar::Int(1))?.mul(&inv)?;
    if let Some(w) = weight {
        out = out.mul(w)?;
    }
    if let Some(b) = bias {
        out = out.add(b, Scalar::Int(1))?;
    }
    Ok(out)
}

/// `running = (1 - momentum) * running + momentum * value`, written in place.
fn update_running(running: &Tensor, value: &Tensor, momentum: f64) -> Result<()> {
    let upd = running
        .to_dtype(value.dtype(), false)?
        .mul_scalar(Scalar::Float(1.0 - momentum))?
        .add(value, Scalar::Float(momentum))?;
    running.copy_(&upd)
}

/// `batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)` over
/// dimension 1 of an `[N, C, ...]` input. In training mode the batch statistics normalize and
/// the running statistics (when given) are updated in place with the unbiased variance.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    training: bool,
    momentum: f64,
    eps: f64,
) -> Result<Tensor> {
    native_batch_norm(
        input,
        weight,
        bias,
        running_mean,
        running_var,
        training,
        momentum,
        eps,
    )
    .map(|(out, _, _)| out)
}

/// `native_batch_norm`: [`batch_norm`]'s output with the batch mean and inverse standard
/// deviation it normalized with (training mode; empty tensors in evaluation mode, as ATen).
/// The normalization itself is one pass: `x * scale[c] + shift[c]`.
#[allow(clippy::too_many_arguments)]
pub fn native_batch_norm(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    training: bool,
    momentum: f64,
    eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    if input.dim() < 2 {
        return Err(Error::runtime(format!(
            "batch_norm: expected input with at least 2 dimensions, but got {}-D",
            input.dim()
        )));
    }
    check_float(input, "batch_norm")?;
    let nd = input.dim();
    let c = input.sizes()[1];
    for (t, name) in [
        (weight, "weight"),
        (bias, "bias"),
        (running_mean, "running_mean"),
        (running_var, "running_var"),
    ] {
        if let Some(t) = t {
            if t.numel() as i64 != c {
                return Err(Error::runtime(format!(
                    "{name} should contain {c} elements not {}",
                    t.numel()
                )));
            }
        }
    }
    let dt = input.dtype();
    let ct = stat_dtype(dt);
    let x = input.to_dtype(ct, false)?.contiguous()?;
    let flat = |t: &Tensor| -> Result<Tensor> { t.to_dtype(ct, false)?.reshape(&[c]) };
    let (mean, var) = if training {
        let dims: Vec<i64> = (0..nd as i64).filter(|&d| d != 1).collect();
        let mean = x.mean(Some(&dims), false, None)?;
        let var = x.var(Some(&dims), Some(0.0), false)?;
        let n = (input.numel() as i64 / c.max(1)) as f64;
        if let Some(rm) = running_mean {
            update_running(rm, &mean, momentum)?;
        }
        if let Some(rv) = running_var {
            let unbiased = var.mul_scalar(Scalar::Float(n / (n - 1.0).max(0.0)))?;
            update_running(rv, &unbiased, momentum)?;
        }
        (mean, var)
    } else {
        match (running_mean, running_var) {
            (Some(m), Some(v)) => (flat(m)?, flat(v)?),
            _ => {
                return Err(Error::runtime(
                    "running_mean and running_var must be defined in evaluation mode",
                ))
            }
        }
    };
    let invstd = var
        .add_scalar(Scalar::Float(eps), Scalar::Int(1))?
        .rsqrt()?;
    // scale = invstd * weight, shift = bias - mean * scale (ATen's inference transform).
    let scale = match weight {
        Some(w) => invstd.mul(&flat(w)?)?,
        None => invstd.clone(),
    };
    let shift = mean.mul(&scale)?.neg()?;
    let shift = match bias {
        Some(b) => shift.add(&flat(b)?, Scalar::Int(1))?,
        None => shift,
    };
    let planes = input.sizes()[0] * c;
    let inner = if planes == 0 {
        0
    } else {
        x.numel() as i64 / planes
    };
    let out = channel_affine(&x, &scale, &shift, c, inner)?.to_dtype(dt, false)?;
    let (save_mean, save_invstd) = if training {
        (mean, invstd)
    } else {
        (Tensor::zeros(&[0], ct)?, Tensor::zeros(&[0], ct)?)
    };
    Ok((out, save_mean, save_invstd))
}

/// `x * scale[ch] + shift[ch]` where `ch` is the channel (dimension 1) of the contiguous `x`,
/// whose planes hold `inner` elements each; `scale` and `shift` have `c` elements.
fn channel_affine(
    x: &Tensor,
    scale: &Tensor,
    shift: &Tensor,
    c: i64,
    inner: i64,
) -> Result<Tensor> {
    let (c, inner) = (c as usize, inner as usize);
    macro_rules! run {
        ($T:ty) => {{
            let sc = scale.contiguous_vec::<$T>()?;
            let sh = shift.contiguous_vec::<$T>()?;
            map_rows::<$T, $T>(x, inner, |p, i, o| {
                let (a, b) = (sc[p % c], sh[p % c]);
                for (o, &v) in o.iter_mut().zip(i) {
                    *o = v * a + b;
                }
            })
        }};
    }
    match x.dtype() {
        DType::Float64 => run!(f64),
        _ => run!(f32),
    }
}

/// `layer_norm(input, normalized_shape, weight, bias, eps)` over the trailing dimensions.
pub fn layer_norm(
    input: &Tensor,
    normalized_shape: &[i64],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    let k = normalized_shape.len();
    let sz = input.sizes();
    if k == 0 {
        return Err(Error::runtime(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got normalized_shape = []",
        ));
    }
    for (t, name) in [(weight, "weight"), (bias, "bias")] {
        if let Some(t) = t {
            if t.sizes().as_slice() != normalized_shape {
                return Err(Error::runtime(format!(
                    "Expected {name} to be of same shape as normalized_shape, but got {name} of shape {:?} and normalized_shape = {:?}",
                    t.sizes().as_slice(),
                    normalized_shape
                )));
            }
        }
    }
    if sz.len() < k || &sz[sz.len() - k..] != normalized_shape {
        return Err(Error::runtime(format!(
            "Given normalized_shape={:?}, expected input with shape [*, {}], but got input of size{:?}",
            normalized_shape,
            normalized_shape
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            sz.as_slice()
        )));
    }
    check_float(input, "LayerNormKernelImpl")?;
    let dt = input.dtype();
    let ct = stat_dtype(dt);
    let x = input.to_dtype(ct, false)?;
    let x = x.contiguous()?;
    let row: i64 = normalized_shape.iter().product();
    let flat = |t: Option<&Tensor>| -> Result<Option<Tensor>> {
        t.map(|t| t.to_dtype(ct, false)?.reshape(&[row]))
            .transpose()
    };
    let (w, b) = (flat(weight)?, flat(bias)?);
    rows_normalized(&x, row as usize, eps, w.as_ref(), b.as_ref())?.to_dtype(dt, false)
}

/// Layer normalization of each contiguous row of `row` elements of `x`.
fn rows_normalized(
    x: &Tensor,
    row: usize,
    eps: f64,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
) -> Result<Tensor> {
    macro_rules! run {
        ($T:ty) => {{
            let wv = weight.map(|t| t.contiguous_vec::<$T>()).transpose()?;
            let bv = bias.map(|t| t.contiguous_vec::<$T>()).transpose()?;
            let (wv, bv) = (wv.as_deref(), bv.as_deref());
            map_rows::<$T, $T>(x, row, |_, i, o| layer_norm_row_simd(i, o, eps, wv, bv))
        }};
    }
    match x.dtype() {
        DType::Float64 => run!(f64),
        _ => run!(f32),
    }
}

/// Sum of `f(v)` over `i` in f64, in eight independent partial sums (vectorizable).
#[inline(always)]
fn lane_sum<F: OpNum>(i: &[F], f: impl Fn(f64) -> f64) -> f64 {
    let mut acc = [0.0f64; 8];
    let mut chunks = i.chunks_exact(8);
    for c in &mut chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += f(v.to_f64());
        }
    }
    let mut s: f64 = chunks.remainder().iter().map(|&v| f(v.to_f64())).sum();
    for a in acc {
        s += a;
    }
    s
}

simd_dispatch!(pub(crate) fn layer_norm_row_simd<F: FloatMath>(i: &[F], o: &mut [F], eps: f64, w: Option<&[F]>, b: Option<&[F]>) = layer_norm_row;);

/// One row of layer normalization: mean and biased variance accumulated in f64 (two passes),
/// then `(v - mean) * rstd * w + b`.
#[inline(always)]
fn layer_norm_row<F: FloatMath>(i: &[F], o: &mut [F], eps: f64, w: Option<&[F]>, b: Option<&[F]>) {
    let n = i.len() as f64;
    let mean = lane_sum(i, |v| v) / n;
    let var = lane_sum(i, |v| (v - mean) * (v - mean)) / n;
    let rstd = F::from_f64(1.0 / (var + eps).sqrt());
    let mean = F::from_f64(mean);
    match (w, b) {
        (Some(w), Some(b)) => {
            for (((o, &v), &w), &b) in o.iter_mut().zip(i).zip(w).zip(b) {
                *o = (v - mean) * rstd * w + b;
            }
        }
        _ => {
            for (j, (o, &v)) in o.iter_mut().zip(i).enumerate() {
                let mut y = (v - mean) * rstd;
                if let Some(w) = w {
                    y = y * w[j];
                }
                if let Some(b) = b {
                    y = y + b[j];
                }
                *o = y;
            }
        }
    }
}

/// `group_norm(input, num_groups, weight, bias, eps)`: statistics per sample and channel group.
pub fn group_norm(
    input: &Tensor,
    num_groups: i64,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    let sz = input.sizes();
    if input.dim() < 2 {
        return Err(Error::runtime(format!(
            "Expected at least 2 dimensions for input tensor but received {}",
            input.dim()
        )));
    }
    let (n, c) = (sz[0], sz[1]);
    if num_groups <= 0 || c % num_groups != 0 {
        return Err(Error::runtime(format!(
            "Expected number of channels in input to be divisible by num_groups, but got input of shape {:?} and num_groups={num_groups}",
            sz.as_slice()
        )));
    }
    for (t, name) in [(weight, "weight"), (bias, "bias")] {
        if let Some(t) = t {
            if t.dim() != 1 || t.numel() as i64 != c {
                return Err(Error::runtime(format!(
                    "Expected {name} to be a vector of size equal to the number of channels in input, but got {name} of shape {:?} and input of shape {:?}",
                    t.sizes().as_slice(),
                    sz.as_slice()
                )));
            }
        }
    }
    check_float(input, "GroupNormKernelImpl")?;
    let dt = input.dtype();
    let ct = stat_dtype(dt);
    // Explicit group size: `-1` would be ambiguous for an empty batch.
    let group = (c / num_groups) * sz[2..].iter().product::<i64>();
    let x = input
        .to_dtype(ct, false)?
        .reshape(&[n, num_groups, group])?;
    let mean = x.mean(Some(&[2]), true, None)?;
    let var = x.var(Some(&[2]), Some(0.0), true)?;
    let y = normalize(&x, &mean, &var, eps, None, None)?.reshape(&sz)?;
    let nd = sz.len();
    let view = |t: Option<&Tensor>| -> Result<Option<Tensor>> {
        t.map(|t| channel_view(&t.to_dtype(ct, false)?, nd, c))
            .transpose()
    };
    let mut out = y;
    if let Some(w) = view(weight)? {
        out = out.mul(&w)?;
    }
    if let Some(b) = view(bias)? {
        out = out.add(&b, Scalar::Int(1))?;
    }
    out.to_dtype(dt, false)
}

/// `instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
/// eps)`: statistics per sample and channel; running statistics (when given and
/// `use_input_stats`) are updated in place with the batch average.
#[allow(clippy::too_many_arguments)]
pub fn instance_norm(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    use_input_stats: bool,
    momentum: f64,
    eps: f64,
) -> Result<Tensor> {
    if !use_input_stats {
        return batch_norm(
            input,
            weight,
            bias,
            running_mean,
            running_var,
            false,
            momentum,
            eps,
        );
    }
    if input.dim() < 2 {
        return Err(Error::runtime(format!(
            "instance_norm: expected input with at least 2 dimensions, but got {}-D",
            input.dim()
        )));
    }
    check_float(input, "instance_norm")?;
    let sz = input.sizes();
    let nd = sz.len();
    let c = sz[1];
    let dt = input.dtype();
    let ct = stat_dtype(dt);
    let x = input.to_dtype(ct, false)?;
    let dims: Vec<i64> = (2..nd as i64).collect();
    let mean = x.mean(Some(&dims), true, None)?;
    let var = x.var(Some(&dims), Some(0.0), true)?;
    let spatial: i64 = sz[2..].iter().product();
    if let Some(rm) = running_mean {
        update_running(
            rm,
            &mean.mean(Some(&[0]), false, None)?.reshape(&[c])?,
            momentum,
        )?;
    }
    if let Some(rv) = running_var {
        let s = spatial as f64;
        let unbiased = var.mul_scalar(Scalar::Float(s / (s - 1.0).max(0.0)))?;
        update_running(
            rv,
            &unbiased.mean(Some(&[0]), false, None)?.reshape(&[c])?,
            momentum,
        )?;
    }
    let view = |t: Option<&Tensor>| -> Result<Option<Tensor>> {
        t.map(|t| channel_view(&t.to_dtype(ct, false)?, nd, c))
            .transpose()
    };
    normalize(
        &x,
        &mean,
        &var,
        eps,
        view(weight)?.as_ref(),
        view(bias)?.as_ref(),
    )?
    .to_dtype(dt, false)
}

/// `dropout(input, p, train)`: the input itself when not training (or `p == 0`); otherwise each
/// element is zeroed with probability `p` (Bernoulli draws from `generator` or the default
/// generator) and survivors are scaled by `1 / (1 - p)`.
pub fn dropout(
    input: &Tensor,
    p: f64,
    train: bool,
    generator: Option<&Generator>,
) -> Result<Tensor> {
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::runtime(format!(
            "dropout probability has to be between 0 and 1, but got {p}"
        )));
    }
    if !train || p == 0.0 || input.numel() == 0 {
        return Ok(input.clone());
    }
    if p == 1.0 {
        return input.mul_scalar(Scalar::Int(0));
    }
    let mask_dtype = if input.dtype().is_floating_point() {
        input.dtype()
    } else {
        DType::Float32
    };
    let mask = Tensor::zeros(&input.sizes(), mask_dtype)?;
    mask.bernoulli_(1.0 - p, generator)?;
    input.mul(&mask)?.div_scalar(Scalar::Float(1.0 - p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropout_is_identity_outside_training() {
        let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
        let y = dropout(&x, 0.5, false, None).unwrap();
        assert!(Tensor::is_same(&x, &y) || y.to_vec::<f32>() == x.to_vec::<f32>());
        assert_eq!(
            dropout(&x, 0.0, true, None).unwrap().to_vec::<f32>(),
            vec![1.0, 2.0, 3.0]
        );
        assert_eq!(
            dropout(&x, 1.0, true, None).unwrap().to_vec::<f32>(),
            vec![0.0; 3]
        );
        assert_eq!(
            dropout(&x, 1.5, true, None).unwrap_err().message,
            "dropout probability has to be between 0 and 1, but got 1.5"
        );
    }

    #[test]
    fn dropout_masks_and_rescales_reproducibly() {
        let x = Tensor::from_vec(vec![1.0f64; 4000], &[4000]).unwrap();
        let g = Generator::new(7);
        let y = dropout(&x, 0.25, true, Some(&g)).unwrap().to_vec::<f64>();
        // Survivors are scaled by 1 / (1 - p); the rest are zero.
        assert!(y
            .iter()
            .all(|&v| v == 0.0 || (v - 1.0 / 0.75).abs() < 1e-12));
        let dropped = y.iter().filter(|&&v| v == 0.0).count();
        assert!((800..1200).contains(&dropped), "dropped {dropped}");
        let g2 = Generator::new(7);
        assert_eq!(
            dropout(&x, 0.25, true, Some(&g2)).unwrap().to_vec::<f64>(),
            y
        );
    }

    #[test]
    fn batch_norm_eval_requires_running_stats() {
        let x = Tensor::zeros(&[2, 3], DType::Float32).unwrap();
        let e = batch_norm(&x, None, None, None, None, false, 0.1, 1e-5).unwrap_err();
        assert_eq!(
            e.message,
            "running_mean and running_var must be defined in evaluation mode"
        );
        let i = Tensor::zeros(&[2, 3], DType::Int64).unwrap();
        assert!(batch_norm(&i, None, None, None, None, true, 0.1, 1e-5).is_err());
    }
}
