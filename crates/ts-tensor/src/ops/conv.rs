//! Convolutions: `conv1d`, `conv2d`, `conv_transpose1d/2d` and the generic `convolution` entry
//! (`aten::convolution` / `aten::_convolution`) with ATen's argument checks and messages.
//! Forward convolutions unfold patches (im2col) and multiply with the strided GEMM; 1x1 kernels
//! skip the unfolding and depthwise filters run a direct loop. Transposed convolutions multiply
//! first and fold the columns back (col2im).

use crate::cpu::contiguous::{filled_tensor, with_slice};
use crate::cpu::conv::{conv2d_tiled, ConvShape};
use crate::cpu::im2col::{col2im, depthwise, im2col, scatter_tiles, tiles_without_overlap, Window};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::join::cat;
use crate::ops::linalg::product;
use crate::scalar::Scalar;
use crate::tensor::Tensor;

/// The `padding` argument of the functional convolutions: explicit sizes or `"same"`/`"valid"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConvPadding {
    /// Symmetric padding per spatial dimension (one value broadcasts to all).
    Explicit(Vec<i64>),
    /// Output as large as the input (stride 1 only); odd total padding goes to the end.
    Same,
    /// No padding.
    Valid,
}

impl ConvPadding {
    /// Parses the string form (`"same"`, `"valid"`), with PyTorch's message for anything else.
    pub fn parse(s: &str) -> Result<ConvPadding> {
        match s {
            "same" => Ok(ConvPadding::Same),
            "valid" => Ok(ConvPadding::Valid),
            other => Err(Error::runtime(format!("Invalid padding string: '{other}'"))),
        }
    }
}

/// Expands a length-1 parameter list to `k` entries, as ATen's `expand_param_if_needed`.
fn expand_param(v: &[i64], name: &str, k: usize) -> Result<Vec<i64>> {
    if v.len() == 1 {
        Ok(vec![v[0]; k])
    } else if v.len() == k {
        Ok(v.to_vec())
    } else {
        Err(Error::runtime(format!(
            "expected {name} to be a single integer value or a list of {k} values to match the convolution dimensions, but got {name}={v:?}"
        )))
    }
}

/// Validated convolution parameters for `k` spatial dimensions.
struct Params {
    stride: Vec<i64>,
    pad_before: Vec<i64>,
    pad_after: Vec<i64>,
    dilation: Vec<i64>,
    output_padding: Vec<i64>,
    transposed: bool,
    groups: i64,
}

#[allow(clippy::too_many_arguments)]
fn check_params(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &ConvPadding,
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
) -> Result<Params> {
    let k = weight.dim().saturating_sub(2).max(1);
    let stride = expand_param(stride, "stride", k)?;
    let dilation = expand_param(dilation, "dilation", k)?;
    let output_padding = expand_param(output_padding, "output_padding", k)?;
    let (pad_before, pad_after) = match padding {
        ConvPadding::Explicit(p) => {
            let p = expand_param(p, "padding", k)?;
            (p.clone(), p)
        }
        ConvPadding::Valid => (vec![0; k], vec![0; k]),
        ConvPadding::Same => {
            if stride.iter().any(|&s| s != 1) {
                return Err(Error::runtime(
                    "padding='same' is not supported for strided convolutions",
                ));
            }
            let ws = weight.sizes();
            let mut before = vec![0; k];
            let mut after = vec![0; k];
            for d in 0..k {
                let kd = ws.get(d + 2).copied().unwrap_or(1);
                let total = dilation[d] * (kd - 1);
                before[d] = total / 2;
                after[d] = total - total / 2;
            }
            (before, after)
        }
    };
    if stride.iter().any(|&s| s <= 0) {
        return Err(Error::runtime("non-positive stride is not supported"));
    }
    if pad_before.iter().any(|&p| p < 0) {
        return Err(Error::runtime("negative padding is not supported"));
    }
    if output_padding.iter().any(|&p| p < 0) {
        return Err(Error::runtime("negative output_padding is not supported"));
    }
    if dilation.iter().any(|&d| d <= 0) {
        return Err(Error::runtime(format!(
            "dilation should be greater than zero, but got {dilation:?}"
        )));
    }
    if groups <= 0 {
        return Err(Error::runtime("non-positive groups is not supported"));
    }
    if input.dtype() != weight.dtype() {
        return Err(Error::runtime(format!(
            "expected scalar type {} but found {}",
            input.dtype().scalar_type_name(),
            weight.dtype().scalar_type_name()
        )));
    }
    if let Some(b) = bias {
        if b.dtype() != input.dtype() {
            return Err(Error::runtime(format!(
                "expected scalar type {} but found {}",
                input.dtype().scalar_type_name(),
                b.dtype().scalar_type_name()
            )));
        }
    }
    if input.dtype() == DType::Bool {
        return Err(crate::cpu::dispatch::not_implemented(
            "slow_conv2d_cpu",
            DType::Bool,
        ));
    }
    // Shape checks (ATen's check_shape_forward).
    let (is, ws) = (input.sizes(), weight.sizes());
    if weight.dim() != input.dim() {
        return Err(Error::runtime(format!(
            "Expected {}-dimensional input for {}-dimensional weight {:?}, but got {}-dimensional input of size {:?} instead",
            weight.dim(),
            weight.dim(),
            ws.as_slice(),
            input.dim(),
            is.as_slice()
        )));
    }
    if ws[0] % groups != 0 && !transposed {
        return Err(Error::runtime(format!(
            "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size [{:?}] instead",
            ws.as_slice()
        )));
    }
    if transposed {
        if is[1] != ws[0] {
            return Err(Error::runtime(format!(
                "Given transposed=1, weight of size {:?}, expected input{:?} to have {} channels, but got {} channels instead",
                ws.as_slice(),
                is.as_slice(),
                ws[0],
                is[1]
            )));
        }
        if ws[0] % groups != 0 {
            return Err(Error::runtime(format!(
                "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size [{:?}] instead",
                ws.as_slice()
            )));
        }
        for d in 0..k {
            if output_padding[d] >= stride[d] && output_padding[d] >= dilation[d] {
                let names = ["height", "width"];
                if k == 2 {
                    return Err(Error::runtime(format!(
                        "output padding must be smaller than either stride or dilation, but got output_padding_{}: {} output_padding_{}: {} stride_{}: {} stride_{}: {} dilation_{}: {} dilation_{}: {}",
                        names[0], output_padding[0], names[1], output_padding[1],
                        names[0], stride[0], names[1], stride[1],
                        names[0], dilation[0], names[1], dilation[1]
                    )));
                }
                return Err(Error::runtime(format!(
                    "output padding must be smaller than either stride or dilation, but got output_padding: {:?} stride: {:?} dilation: {:?}",
                    output_padding, stride, dilation
                )));
            }
        }
        let out_c = ws[1] * groups;
        if let Some(b) = bias {
            if b.dim() != 1 || b.sizes()[0] != out_c {
                return Err(Error::runtime(format!(
                    "Given transposed=1, weight of size {:?}, expected bias to be 1-dimensional with {} elements, but got bias of size {:?} instead",
                    ws.as_slice(),
                    out_c,
                    b.sizes().as_slice()
                )));
            }
        }
    } else {
        if is[1] != ws[1] * groups {
            return Err(Error::runtime(format!(
                "Given groups={groups}, weight of size {:?}, expected input{:?} to have {} channels, but got {} channels instead",
                ws.as_slice(),
                is.as_slice(),
                ws[1] * groups,
                is[1]
            )));
        }
        if let Some(b) = bias {
            if b.dim() != 1 || b.sizes()[0] != ws[0] {
                return Err(Error::runtime(format!(
                    "Given weight of size {:?}, expected bias to be 1-dimensional with {} elements, but got bias of size {:?} instead",
                    ws.as_slice(),
                    ws[0],
                    b.sizes().as_slice()
                )));
            }
        }
        let padded: Vec<i64> = (0..k)
            .map(|d| is[d + 2] + pad_before[d] + pad_after[d])
            .collect();
        let kernel: Vec<i64> = (0..k).map(|d| dilation[d] * (ws[d + 2] - 1) + 1).collect();
        if padded.iter().zip(&kernel).any(|(p, k)| k > p) {
            let j = |v: &[i64]| {
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(" x ")
            };
            return Err(Error::runtime(format!(
                "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be greater than actual input size",
                j(&padded),
                j(&kernel)
            )));
        }
    }
    Ok(Params {
        stride,
        pad_before,
        pad_after,
        dilation,
        output_padding,
        transposed,
        groups,
    })
}

/// The dtype the kernels compute in: f16/bf16 go through f32, integers through i64.
fn compute_dtype(dt: DType) -> DType {
    match dt {
        DType::Float32 | DType::Float64 => dt,
        DType::Float16 | DType::BFloat16 => DType::Float32,
        _ => DType::Int64,
    }
}

/// Lifts a 1-d convolution problem (`[n, c, l]`) to 2-d (`[n, c, 1, l]`) parameters.
fn to_2d(v: &[i64], fill: i64) -> [i64; 2] {
    if v.len() == 1 {
        [fill, v[0]]
    } else {
        [v[0], v[1]]
    }
}

/// Forward (non-transposed) convolution of a batched 4-d input with validated parameters.
fn conv2d_forward(x: &Tensor, w: &Tensor, bias: Option<&Tensor>, p: &Params) -> Result<Tensor> {
    let dt = x.dtype();
    let ct = compute_dtype(dt);
    let (is, ws) = (x.sizes(), w.sizes());
    let (n, c, h, wd) = (is[0], is[1], is[2], is[3]);
    let (o, cg, kh, kw) = (ws[0], ws[1], ws[2], ws[3]);
    let s = to_2d(&p.stride, 1);
    let pb = to_2d(&p.pad_before, 0);
    let pa = to_2d(&p.pad_after, 0);
    let d = to_2d(&p.dilation, 1);
    let oh = (h + pb[0] + pa[0] - d[0] * (kh - 1) - 1) / s[0] + 1;
    let ow = (wd + pb[1] + pa[1] - d[1] * (kw - 1) - 1) / s[1] + 1;
    let g = p.groups;
    let og = o / g;
    let win = Window {
        h: h as usize,
        w: wd as usize,
        kh: kh as usize,
        kw: kw as usize,
        sh: s[0] as usize,
        sw: s[1] as usize,
        ph: pb[0] as usize,
        pw: pb[1] as usize,
        dh: d[0] as usize,
        dw: d[1] as usize,
        oh: oh as usize,
        ow: ow as usize,
    };
    let xc = x.to_dtype(ct, false)?.contiguous()?;
    let wc = w.to_dtype(ct, false)?.contiguous()?;
    let bc = bias
        .map(|b| b.to_dtype(ct, false)?.contiguous())
        .transpose()?;
    let out_shape = [n, o, oh, ow];
    // Depthwise: one input channel per group.
    if g == c && cg == 1 && g > 1 && matches!(ct, DType::Float32 | DType::Float64) {
        let mult = (o / c) as usize;
        macro_rules! dw {
            ($T:ty) => {{
                let bv = bc.as_ref().map(|b| b.contiguous_vec::<$T>()).transpose()?;
                with_slice::<$T, _>(&xc, |xv| {
                    with_slice::<$T, _>(&wc, |wv| {
                        filled_tensor::<$T>(&out_shape, |out| {
                            depthwise(xv, wv, bv.as_deref(), out, c as usize, mult, &win)
                        })
                    })
                })???
            }};
        }
        let r = if ct == DType::Float32 {
            dw!(f32)
        } else {
            dw!(f64)
        };
        return r.to_dtype(dt, false);
    }
    if matches!(ct, DType::Float32 | DType::Float64) {
        let shape = ConvShape {
            n: n as usize,
            c: c as usize,
            o: o as usize,
            groups: g as usize,
            win,
        };
        // Every element is written (bias fill or an overwriting product), so no zero fill.
        let out = crate::cpu::contiguous::uninit_contiguous(&out_shape, ct)?;
        let threads = crate::threads::num_threads();
        if ct == DType::Float32 {
            conv2d_tiled::<f32>(&xc, &wc, bc.as_ref(), shape, &out, threads)?;
        } else {
            conv2d_tiled::<f64>(&xc, &wc, bc.as_ref(), shape, &out, threads)?;
        }
        return out.to_dtype(dt, false);
    }
    let kk = cg * kh * kw;
    let l = oh * ow;
    let pointwise = kh == 1 && kw == 1 && s == [1, 1] && pb == [0, 0] && pa == [0, 0];
    // The input as a flat buffer of the compute dtype, unfolded group by group.
    enum Flat {
        F32(Vec<f32>),
        F64(Vec<f64>),
        I64(Vec<i64>),
    }
    let flat = if pointwise {
        None
    } else {
        Some(match ct {
            DType::Float32 => Flat::F32(xc.contiguous_vec()?),
            DType::Float64 => Flat::F64(xc.contiguous_vec()?),
            _ => Flat::I64(xc.contiguous_vec()?),
        })
    };
    let mut parts = Vec::with_capacity(g as usize);
    for gi in 0..g {
        let cols = if pointwise {
            xc.narrow(1, gi * cg, cg)?.reshape(&[n, cg, l])?
        } else {
            let (n_, c_, c0, cg_) = (n as usize, c as usize, (gi * cg) as usize, cg as usize);
            match &flat {
                Some(Flat::F32(v)) => {
                    filled_tensor(&[n, kk, l], |o| im2col(v, n_, c_, c0, cg_, &win, o))?
                }
                Some(Flat::F64(v)) => {
                    filled_tensor(&[n, kk, l], |o| im2col(v, n_, c_, c0, cg_, &win, o))?
                }
                Some(Flat::I64(v)) => {
                    filled_tensor(&[n, kk, l], |o| im2col(v, n_, c_, c0, cg_, &win, o))?
                }
                None => {
                    return Err(Error::runtime(
                        "conv2d: internal error: missing input buffer",
                    ))
                }
            }
        };
        let wg = wc
            .narrow(0, gi * og, og)?
            .reshape(&[1, og, kk])?
            .expand(&[n, og, kk], false)?;
        let base = match &bc {
            Some(b) => Some(
                b.narrow(0, gi * og, og)?
                    .reshape(&[1, og, 1])?
                    .expand(&[n, og, l], false)?,
            ),
            None => None,
        };
        parts.push(product(
            &wg,
            &cols,
            base.as_ref(),
            Scalar::Int(1),
            Scalar::Int(1),
        )?);
    }
    let out = if parts.len() == 1 {
        parts.pop().unwrap_or(Tensor::zeros(&[n, o, l], ct)?)
    } else {
        cat(&parts, 1)?
    };
    out.reshape(&out_shape)?.to_dtype(dt, false)
}

/// Transposed convolution of a batched 4-d input with validated parameters.
fn conv_transpose2d_forward(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    p: &Params,
) -> Result<Tensor> {
    let dt = x.dtype();
    let ct = compute_dtype(dt);
    let (is, ws) = (x.sizes(), w.sizes());
    let (n, cin, h, wd) = (is[0], is[1], is[2], is[3]);
    let (cog, kh, kw) = (ws[1], ws[2], ws[3]);
    let g = p.groups;
    let cig = cin / g;
    let s = to_2d(&p.stride, 1);
    let pd = to_2d(&p.pad_before, 0);
    let d = to_2d(&p.dilation, 1);
    let op = to_2d(&p.output_padding, 0);
    let oh = (h - 1) * s[0] - 2 * pd[0] + d[0] * (kh - 1) + op[0] + 1;
    let ow = (wd - 1) * s[1] - 2 * pd[1] + d[1] * (kw - 1) + op[1] + 1;
    if oh <= 0 || ow <= 0 {
        return Err(Error::runtime(format!(
            "Given input size per channel: ({} x {}). Calculated output size per channel: ({} x {}). Output size is too small",
            h, wd, oh, ow
        )));
    }
    let win = Window {
        h: h as usize,
        w: wd as usize,
        kh: kh as usize,
        kw: kw as usize,
        sh: s[0] as usize,
        sw: s[1] as usize,
        ph: pd[0] as usize,
        pw: pd[1] as usize,
        dh: d[0] as usize,
        dw: d[1] as usize,
        oh: oh as usize,
        ow: ow as usize,
    };
    let xc = x.to_dtype(ct, false)?.contiguous()?;
    let wc = w.to_dtype(ct, false)?.contiguous()?;
    let kk = cog * kh * kw;
    if g == 1 && tiles_without_overlap(&win) && bias.is_none_or(|b| b.numel() as i64 == cog) {
        let wg = wc
            .reshape(&[cin, kk])?
            .t()?
            .unsqueeze(0)?
            .expand(&[n, kk, cin], false)?;
        let xg = xc.reshape(&[n, cin, h * wd])?;
        let cols = product(&wg, &xg, None, Scalar::Int(0), Scalar::Int(1))?.contiguous()?;
        let bias = bias
            .map(|b| b.to_dtype(ct, false)?.contiguous())
            .transpose()?;
        macro_rules! scatter {
            ($T:ty) => {{
                let b = bias
                    .as_ref()
                    .map(|b| b.contiguous_vec::<$T>())
                    .transpose()?;
                let out = with_slice::<$T, _>(&cols, |cv| {
                    scatter_tiles(cv, n as usize, cog as usize, &win, b.as_deref())
                })?;
                Tensor::from_vec(out, &[n, cog, oh, ow])?
            }};
        }
        let out = match ct {
            DType::Float32 => scatter!(f32),
            DType::Float64 => scatter!(f64),
            _ => scatter!(i64),
        };
        return out.to_dtype(dt, false);
    }
    let mut parts = Vec::with_capacity(g as usize);
    for gi in 0..g {
        let wg = wc
            .narrow(0, gi * cig, cig)?
            .reshape(&[cig, kk])?
            .t()?
            .unsqueeze(0)?
            .expand(&[n, kk, cig], false)?;
        let xg = xc.narrow(1, gi * cig, cig)?.reshape(&[n, cig, h * wd])?;
        let cols = product(&wg, &xg, None, Scalar::Int(0), Scalar::Int(1))?;
        let cols = cols.contiguous()?;
        macro_rules! fold {
            ($T:ty) => {{
                let folded =
                    with_slice::<$T, _>(&cols, |cv| col2im(cv, n as usize, cog as usize, &win))?;
                Tensor::from_vec(folded, &[n, cog, oh, ow])?
            }};
        }
        parts.push(match ct {
            DType::Float32 => fold!(f32),
            DType::Float64 => fold!(f64),
            _ => fold!(i64),
        });
    }
    let mut out = if parts.len() == 1 {
        parts.pop().unwrap_or(Tensor::zeros(&[n, cog, oh, ow], ct)?)
    } else {
        cat(&parts, 1)?
    };
    if let Some(b) = bias {
        out = out.add(
            &b.to_dtype(ct, false)?.reshape(&[1, cog * g, 1, 1])?,
            Scalar::Int(1),
        )?;
    }
    out.to_dtype(dt, false)
}

/// The 2-d parameters of a 3-d problem (the depth entries dropped).
fn depth_sliced(p: &Params) -> Params {
    Params {
        stride: p.stride[1..].to_vec(),
        pad_before: p.pad_before[1..].to_vec(),
        pad_after: p.pad_after[1..].to_vec(),
        dilation: p.dilation[1..].to_vec(),
        output_padding: p.output_padding[1..].to_vec(),
        transposed: p.transposed,
        groups: p.groups,
    }
}

/// Stacks per-depth `[n, c, h, w]` slices (zeros where a slice got no contribution) into
/// `[n, c, d, h, w]` and adds the bias.
fn stack_depth(
    slices: Vec<Option<Tensor>>,
    zero_shape: &[i64],
    dt: DType,
    bias: Option<&Tensor>,
) -> Result<Tensor> {
    let parts = slices
        .into_iter()
        .map(|s| match s {
            Some(t) => Ok(t),
            None => Tensor::zeros(zero_shape, dt),
        })
        .collect::<Result<Vec<_>>>()?;
    let mut out = crate::ops::join::stack(&parts, 2)?;
    if let Some(b) = bias {
        out = out.add(&b.reshape(&[1, zero_shape[1], 1, 1, 1])?, Scalar::Int(1))?;
    }
    Ok(out)
}

/// 3-d convolution as a sum of 2-d convolutions: output depth `od` adds the kernel's depth slice
/// `kd` applied to input depth `od * stride - pad + kd * dilation`.
fn conv3d_forward(x: &Tensor, w: &Tensor, bias: Option<&Tensor>, p: &Params) -> Result<Tensor> {
    let (is, ws) = (x.sizes(), w.sizes());
    let p2 = depth_sliced(p);
    let (d, kd) = (is[2], ws[2]);
    let od =
        (d + p.pad_before[0] + p.pad_after[0] - p.dilation[0] * (kd - 1) - 1) / p.stride[0] + 1;
    let plane = |a: usize| {
        (is[a + 2] + p.pad_before[a] + p.pad_after[a] - p.dilation[a] * (ws[a + 2] - 1) - 1)
            / p.stride[a]
            + 1
    };
    let zero_shape = [is[0], ws[0], plane(1), plane(2)];
    let mut slices = Vec::with_capacity(od.max(0) as usize);
    for o in 0..od {
        let mut acc: Option<Tensor> = None;
        for t in 0..kd {
            let z = o * p.stride[0] - p.pad_before[0] + t * p.dilation[0];
            if z < 0 || z >= d {
                continue;
            }
            let r = conv2d_forward(&x.select(2, z)?, &w.select(2, t)?, None, &p2)?;
            acc = Some(match acc {
                Some(a) => a.add(&r, Scalar::Int(1))?,
                None => r,
            });
        }
        slices.push(acc);
    }
    stack_depth(slices, &zero_shape, x.dtype(), bias)
}

/// 3-d transposed convolution as a sum of 2-d ones: input depth `id` with kernel slice `kd`
/// lands on output depth `id * stride - pad + kd * dilation`.
fn conv_transpose3d_forward(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    p: &Params,
) -> Result<Tensor> {
    let (is, ws) = (x.sizes(), w.sizes());
    let p2 = depth_sliced(p);
    let (d, kd) = (is[2], ws[2]);
    let od = (d - 1) * p.stride[0] - 2 * p.pad_before[0]
        + p.dilation[0] * (kd - 1)
        + p.output_padding[0]
        + 1;
    let plane = |a: usize| {
        (is[a + 2] - 1) * p.stride[a] - 2 * p.pad_before[a]
            + p.dilation[a] * (ws[a + 2] - 1)
            + p.output_padding[a]
            + 1
    };
    if od <= 0 || plane(1) <= 0 || plane(2) <= 0 {
        return Err(Error::runtime(format!(
            "Given input size per channel: ({} x {} x {}). Calculated output size per channel: ({} x {} x {}). Output size is too small",
            is[2], is[3], is[4], od, plane(1), plane(2)
        )));
    }
    let zero_shape = [is[0], ws[1] * p.groups, plane(1), plane(2)];
    let mut slices: Vec<Option<Tensor>> = vec![None; od as usize];
    for i in 0..d {
        let xi = x.select(2, i)?;
        for t in 0..kd {
            let o = i * p.stride[0] - p.pad_before[0] + t * p.dilation[0];
            if o < 0 || o >= od {
                continue;
            }
            let r = conv_transpose2d_forward(&xi, &w.select(2, t)?, None, &p2)?;
            let slot = &mut slices[o as usize];
            *slot = Some(match slot.take() {
                Some(a) => a.add(&r, Scalar::Int(1))?,
                None => r,
            });
        }
    }
    stack_depth(slices, &zero_shape, x.dtype(), bias)
}

/// Shared driver: checks, batches unbatched input, lifts 1-d to 2-d and runs the kernel.
#[allow(clippy::too_many_arguments)]
fn run_conv(
    name: &str,
    k: usize,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &ConvPadding,
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
) -> Result<Tensor> {
    let d = input.dim();
    if d != k + 1 && d != k + 2 {
        return Err(Error::runtime(format!(
            "Expected {}D (unbatched) or {}D (batched) input to {name}, but got input of size: {:?}",
            k + 1,
            k + 2,
            input.sizes().as_slice()
        )));
    }
    let batched = d == k + 2;
    let x = if batched {
        input.clone()
    } else {
        input.unsqueeze(0)?
    };
    convolution(
        &x,
        weight,
        bias,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
    )
    .and_then(|r| if batched { Ok(r) } else { r.squeeze_dim(0) })
}

/// `aten::convolution` (and `aten::_convolution`, whose extra backend flags do not change CPU
/// results): a batched 1-d or 2-d convolution, transposed or not, with PyTorch's checks.
#[allow(clippy::too_many_arguments)]
pub fn convolution(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &ConvPadding,
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
) -> Result<Tensor> {
    let p = check_params(
        input,
        weight,
        bias,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
    )?;
    let k = weight.dim() - 2;
    if k == 3 {
        return if p.transposed {
            conv_transpose3d_forward(input, weight, bias, &p)
        } else {
            conv3d_forward(input, weight, bias, &p)
        };
    }
    if k != 1 && k != 2 {
        return Err(Error::runtime(format!(
            "convolution: only 1-d, 2-d and 3-d convolutions are supported, got a {k}-d weight"
        )));
    }
    let (x, w) = if k == 1 {
        (input.unsqueeze(2)?, weight.unsqueeze(2)?)
    } else {
        (input.clone(), weight.clone())
    };
    let out = if p.transposed {
        conv_transpose2d_forward(&x, &w, bias, &p)?
    } else {
        conv2d_forward(&x, &w, bias, &p)?
    };
    if k == 1 {
        out.squeeze_dim(2)
    } else {
        Ok(out)
    }
}

/// `conv1d(input, weight, bias, stride, padding, dilation, groups)` on `[N, C, L]` or `[C, L]`.
pub fn conv1d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &ConvPadding,
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    run_conv(
        "conv1d",
        1,
        input,
        weight,
        bias,
        stride,
        padding,
        dilation,
        false,
        &[0],
        groups,
    )
}

/// `conv2d(input, weight, bias, stride, padding, dilation, groups)` on `[N, C, H, W]` or `[C, H, W]`.
pub fn conv2d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &ConvPadding,
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    run_conv(
        "conv2d",
        2,
        input,
        weight,
        bias,
        stride,
        padding,
        dilation,
        false,
        &[0],
        groups,
    )
}

/// `conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)`.
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose1d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    output_padding: &[i64],
    groups: i64,
    dilation: &[i64],
) -> Result<Tensor> {
    let pad = ConvPadding::Explicit(padding.to_vec());
    run_conv(
        "conv_transpose1d",
        1,
        input,
        weight,
        bias,
        stride,
        &pad,
        dilation,
        true,
        output_padding,
        groups,
    )
}

/// `conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)`;
/// `weight` is `[C_in, C_out / groups, kH, kW]`.
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose2d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    output_padding: &[i64],
    groups: i64,
    dilation: &[i64],
) -> Result<Tensor> {
    let pad = ConvPadding::Explicit(padding.to_vec());
    run_conv(
        "conv_transpose2d",
        2,
        input,
        weight,
        bias,
        stride,
        &pad,
        dilation,
        true,
        output_padding,
        groups,
    )
}

/// `conv3d(input, weight, bias, stride, padding, dilation, groups)` on `[N, C, D, H, W]` or
/// `[C, D, H, W]`.
pub fn conv3d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &ConvPadding,
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    run_conv(
        "conv3d",
        3,
        input,
        weight,
        bias,
        stride,
        padding,
        dilation,
        false,
        &[0],
        groups,
    )
}

/// `conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)`;
/// `weight` is `[C_in, C_out / groups, kD, kH, kW]`.
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose3d(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    output_padding: &[i64],
    groups: i64,
    dilation: &[i64],
) -> Result<Tensor> {
    let pad = ConvPadding::Explicit(padding.to_vec());
    run_conv(
        "conv_transpose3d",
        3,
        input,
        weight,
        bias,
        stride,
        &pad,
        dilation,
        true,
        output_padding,
        groups,
    )
}
