//! Quantized kernels with FBGEMM's arithmetic.
//!
//! Convolution and linear layers accumulate `(x - x_zp) * (w - w_zp)` exactly in `i32`, then
//! requantize as FBGEMM's `ReQuantizeOutput` does with a float bias: with
//! `act_times_w_scale = x_scale * w_scale[c]` and `multiplier = act_times_w_scale / y_scale`
//! (all `f32`), `y = y_zp + nearbyint((acc + bias[c] / act_times_w_scale) * multiplier)`,
//! saturated (at `y_zp` from below when a ReLU is fused). Dynamic linear layers choose the
//! input's parameters from its range and return `x_scale * w_scale[c] * acc + bias[c]`.
//! Elementwise operators dequantize (`q * s + (-zp * s)`, one rounding), compute in `f32` and
//! quantize with `nearbyint(v * (1 / s)) + zp`, as ATen's vectorized kernels.

use super::depthwise::{self, DwShape};
use super::fused::{
    self, with_qint, with_stored, Dequant, MulParams, QInt, QuantizeTo, RequantChannel,
};
use super::qgemm::{self, Epilogue, RowLayout};
use super::weight_cache::{self, PreparedWeight};
use super::{
    choose_qparams, from_stored, int_values, quantize_val, quantizer_of, round_clamp, QDType,
    QScheme, Quantizer,
};
use crate::element::Element;
use crate::{Error, Result, Tensor};

/// Stride, padding, dilation and groups of a quantized 2-d convolution.
#[derive(Clone, Debug, PartialEq)]
pub struct QConvParams {
    pub stride: [usize; 2],
    pub padding: [usize; 2],
    pub dilation: [usize; 2],
    pub groups: usize,
}

fn per_tensor_quantizer(dtype: QDType, scale: f64, zero_point: i64) -> Quantizer {
    Quantizer {
        dtype,
        scheme: QScheme::PerTensorAffine { scale, zero_point },
    }
}

fn check_out_params(scale: f64, zero_point: i64, dtype: QDType, what: &str) -> Result<()> {
    let (lo, hi) = dtype.range();
    if !(scale > 0.0 && scale.is_finite()) || zero_point < lo || zero_point > hi {
        return Err(Error::runtime(format!(
            "{what}: invalid output scale {scale} or zero point {zero_point} for {}",
            dtype.name()
        )));
    }
    Ok(())
}

/// The bias as `n` floats.
fn bias_values(bias: Option<&Tensor>, n: usize, what: &str) -> Result<Option<Vec<f32>>> {
    let Some(b) = bias else { return Ok(None) };
    if b.is_quantized() || b.numel() != n || b.dim() != 1 {
        return Err(Error::runtime(format!(
            "{what}: the bias must be a float tensor of {n} elements, got shape {:?}",
            b.sizes().as_slice()
        )));
    }
    Ok(Some(b.to_vec::<f32>()))
}

/// FBGEMM's requantization of the accumulators of output channel `c`: `round((acc + bias[c] /
/// (x_scale * w_scale[c])) * x_scale * w_scale[c] / y_scale) + zero_point`, rounded half to
/// even and clamped to the output range.
struct Requant {
    /// `bias[c] / (x_scale * w_scale[c])` (zero without a bias: adding it changes nothing).
    bias_term: Vec<f32>,
    multiplier: Vec<f32>,
    zero_point: i64,
    lo: i64,
    hi: i64,
}

/// `1.5 * 2^23`: adding and subtracting it rounds an `f32` of magnitude below `2^22` to an
/// integer, half to even (the default rounding mode), in a form the compiler vectorizes.
const ROUND_MAGIC: f32 = 12_582_912.0;

impl Requant {
    fn new(
        x_scale: f64,
        w_scales: &[f64],
        bias: Option<Vec<f32>>,
        out: (f64, i64, QDType),
        relu: bool,
    ) -> Requant {
        let (y_scale, zero_point, dtype) = out;
        let act_times_w_scale: Vec<f32> = w_scales
            .iter()
            .map(|&w| x_scale as f32 * w as f32)
            .collect();
        let multiplier = act_times_w_scale
            .iter()
            .map(|&a| a / y_scale as f32)
            .collect();
        let bias_term = match bias {
            Some(b) => b
                .iter()
                .zip(&act_times_w_scale)
                .map(|(&b, &a)| b / a)
                .collect(),
            None => vec![0.0; act_times_w_scale.len()],
        };
        let (lo, hi) = dtype.range();
        Requant {
            bias_term,
            multiplier,
            zero_point,
            lo: if relu { lo.max(zero_point) } else { lo },
            hi,
        }
    }

    /// The constants for the `u8` kernels (8-bit outputs only, whose ranges are exact):
    /// `x_zp * row_sum` comes off each accumulator first (none when `row_sum` is empty).
    fn epilogue(&self, x_zp: i64, row_sum: &[i32]) -> Epilogue {
        let zp = self.zero_point;
        Epilogue::new(
            x_zp as i32,
            row_sum,
            &self.bias_term,
            &self.multiplier,
            ((self.lo - zp) as f32, (self.hi - zp) as f32, zp as f32),
        )
    }

    /// Requantizes `acc`, whose element `i` belongs to output channel `channel(i)`, into `out`.
    fn apply(&self, acc: &[i32], out: &mut [i64], channel: impl Fn(usize) -> usize) {
        let zp = self.zero_point;
        // Clamping before rounding gives the same integer (the bounds are integers and
        // rounding is monotonic) and keeps the magic-number rounding in its exact range.
        let (lo, hi) = ((self.lo - zp) as f32, (self.hi - zp) as f32);
        let exact = lo >= -4_194_304.0 && hi <= 4_194_304.0;
        for (i, (o, &a)) in out.iter_mut().zip(acc).enumerate() {
            let c = channel(i);
            let x = (a as f32 + self.bias_term[c]) * self.multiplier[c];
            *o = if exact {
                ((x.max(lo).min(hi) + ROUND_MAGIC) - ROUND_MAGIC) as i64 + zp
            } else {
                (x.round_ties_even() as f64 + zp as f64).clamp(self.lo as f64, self.hi as f64)
                    as i64
            };
        }
    }

    /// [`Requant::apply`] for a run of accumulators of one channel (a convolution's plane).
    fn apply_channel(&self, acc: &[i32], out: &mut [i64], c: usize) {
        let (b, m, zp) = (self.bias_term[c], self.multiplier[c], self.zero_point);
        let (lo, hi) = ((self.lo - zp) as f32, (self.hi - zp) as f32);
        if lo >= -4_194_304.0 && hi <= 4_194_304.0 {
            for (o, &a) in out.iter_mut().zip(acc) {
                let x = ((a as f32 + b) * m).max(lo).min(hi);
                *o = ((x + ROUND_MAGIC) - ROUND_MAGIC) as i64 + zp;
            }
        } else {
            self.apply(acc, out, |_| c);
        }
    }

    /// Requantizes a convolution's accumulators `[nb, oc, plane]` (each the `f32` of its `i32`,
    /// which is what the formula starts from) into stored integers, a plane at a time.
    fn planes<T: QInt>(&self, acc: &[f32], plane: usize, oc: usize) -> Vec<T> {
        let mut out = vec![T::default(); acc.len()];
        let zp = self.zero_point;
        let (lo, hi) = ((self.lo - zp) as f32, (self.hi - zp) as f32);
        let exact = lo >= -4_194_304.0 && hi <= 4_194_304.0;
        let plane = plane.max(1);
        for (k, (a, o)) in acc.chunks(plane).zip(out.chunks_mut(plane)).enumerate() {
            let c = k % oc.max(1);
            if exact {
                let r = RequantChannel {
                    bias: self.bias_term[c],
                    multiplier: self.multiplier[c],
                    lo,
                    hi,
                    zero_point: zp as f32,
                };
                fused::requant_channel(a, r, o);
            } else {
                let ai: Vec<i32> = a.iter().map(|&v| v as i32).collect();
                let mut v = vec![0i64; a.len()];
                self.apply_channel(&ai, &mut v, c);
                for (o, v) in o.iter_mut().zip(v) {
                    *o = T::from_i64(v);
                }
            }
        }
        out
    }
}

/// The stored integers of quantized `x` (8-bit or 32-bit) minus `zero_point`, as `f32` (exact
/// when [`kind_for`] picks `f32`, whose bound covers every input value) and `max |x - zp|`.
fn shifted_input(x: &Tensor, zero_point: i64, dtype: QDType) -> (Vec<f32>, u64) {
    with_qint!(dtype, T => {
        with_stored::<T, _>(x, |v| {
            let mut out = vec![0.0f32; v.len()];
            let m = fused::shift(v, zero_point as i32, &mut out);
            (out, m)
        })
    })
}

/// The stored integers of quantized `x` minus `zero_point` in wrapping `i32` (the exact form
/// for the `f64` and direct paths).
fn shifted_i32(x: &Tensor, zero_point: i64) -> Vec<i32> {
    x.to_vec::<i32>()
        .iter()
        .map(|&v| v.wrapping_sub(zero_point as i32))
        .collect()
}

/// Weight integers minus their zero points, with each output channel's scale.
fn weight_ints(w: &Tensor, n: usize, what: &str) -> Result<(Vec<i32>, Vec<f64>)> {
    let wq = quantizer_of(w, what)?;
    if wq.dtype != QDType::QInt8 {
        return Err(Error::runtime(format!(
            "{what}: expected a qint8 weight, got {}",
            wq.dtype.name()
        )));
    }
    let (scales, zps) = wq.channel_params(n, what)?;
    let vals = int_values(w);
    let per = vals.len() / n.max(1);
    let ints = vals
        .iter()
        .enumerate()
        .map(|(i, &v)| (v - zps[i / per.max(1)]) as i32)
        .collect();
    Ok((ints, scales))
}

/// `acc[m][n] = sum_k a[m][k] * b[n][k]` in (wrapping) `i32` (tests: the prepared form below
/// is what layers use).
#[cfg(test)]
fn int_gemm_nt(a: &[i32], m: usize, k: usize, b: &[i32], n: usize) -> Result<Vec<i32>> {
    int_gemm_prepared(a, m, k, &PreparedWeight::new(b.to_vec(), Vec::new(), n), n)
}

/// `acc[m][n] = sum_k a[m][k] * w[n][k]` in (wrapping) `i32`: through the float GEMM when a
/// float type computes it exactly (see [`kind_for`]), else the direct loop.
fn int_gemm_prepared(
    a: &[i32],
    m: usize,
    k: usize,
    w: &PreparedWeight,
    n: usize,
) -> Result<Vec<i32>> {
    if m == 0 || n == 0 || k == 0 {
        return Ok(vec![0i32; m * n]);
    }
    let wsz = [n as i64, k as i64];
    macro_rules! via {
        ($T:ty, $wt:expr) => {{
            let at = Tensor::from_vec(
                a.iter().map(|&v| v as $T).collect::<Vec<_>>(),
                &[m as i64, k as i64],
            )?;
            at.mm(&$wt.t()?)?
                .to_vec::<$T>()
                .into_iter()
                .map(|v| wrap_i32(v as f64))
                .collect()
        }};
    }
    Ok(match kind_for(abs_max(a), w.row_l1) {
        Some(ExactFloat::F32) => via!(f32, w.as_f32(&wsz)?),
        Some(ExactFloat::F64) => via!(f64, w.as_f64(&wsz)?),
        None => int_gemm_nt_direct(a, m, k, &w.ints, n),
    })
}

/// [`int_gemm_nt`] by the direct loop (the reference, and the path for very large sums).
fn int_gemm_nt_direct(a: &[i32], m: usize, k: usize, b: &[i32], n: usize) -> Vec<i32> {
    let mut out = vec![0i32; m * n];
    for i in 0..m {
        let ar = &a[i * k..(i + 1) * k];
        for j in 0..n {
            let br = &b[j * k..(j + 1) * k];
            out[i * n + j] = ar
                .iter()
                .zip(br)
                .fold(0i32, |s, (&x, &y)| s.wrapping_add(x.wrapping_mul(y)));
        }
    }
    out
}

/// Rows `[M, K]` of the input's last dimension and the result's shape with `n` columns.
fn rows(x: &Tensor, k: usize, n: usize, what: &str) -> Result<(usize, Vec<i64>)> {
    let sizes = x.sizes();
    if sizes.is_empty() || sizes[sizes.len() - 1] as usize != k {
        return Err(Error::runtime(format!(
            "{what}: the input's last dimension must be {k}, got shape {:?}",
            sizes.as_slice()
        )));
    }
    let mut out: Vec<i64> = sizes.to_vec();
    *out.last_mut().expect("non-empty") = n as i64;
    Ok((x.numel() / k.max(1), out))
}

/// `quantized::linear` / `linear_relu`: quantized input, qint8 weight `[N, K]`, float bias.
pub fn qlinear(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    out_scale: f64,
    out_zero_point: i64,
    relu: bool,
) -> Result<Tensor> {
    let what = "quantized::linear";
    let xq = quantizer_of(x, what)?;
    let (xs, xz) = xq.per_tensor(what)?;
    check_out_params(out_scale, out_zero_point, xq.dtype, what)?;
    let wsz = w.sizes();
    if wsz.len() != 2 {
        return Err(Error::runtime(format!("{what}: the weight must be 2-d")));
    }
    let (n, k) = (wsz[0] as usize, wsz[1] as usize);
    let (m, out_sizes) = rows(x, k, n, what)?;
    let pw = weight_cache::prepared(w, n, what, || weight_ints(w, n, what))?;
    let rq = Requant::new(
        xs,
        &pw.scales,
        bias_values(bias, n, what)?,
        (out_scale, out_zero_point, xq.dtype),
        relu,
    );
    let quantizer = per_tensor_quantizer(xq.dtype, out_scale, out_zero_point);
    if let Some(vals) = linear_u8(x, xz, &pw, &rq, m, n) {
        return from_stored(vals, &out_sizes, quantizer);
    }
    let xi = shifted_i32(x, xz);
    let acc = int_gemm_prepared(&xi, m, k, &pw, n)?;
    let mut vals = vec![0i64; acc.len()];
    rq.apply(&acc, &mut vals, |i| i % n);
    with_qint!(xq.dtype, T => {
        from_stored(vals.iter().map(|&v| T::from_i64(v)).collect::<Vec<T>>(), &out_sizes, quantizer)
    })
}

/// `quantized::linear_dynamic` (`linear_relu_dynamic` with `relu`): float input quantized to
/// quint8 from its own range, qint8 weight `[N, K]`, float result.
pub fn qlinear_dynamic(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    reduce_range: bool,
    relu: bool,
) -> Result<Tensor> {
    let what = "quantized::linear_dynamic";
    if x.is_quantized() || !x.dtype().is_floating_point() {
        return Err(Error::runtime(format!(
            "{what}: the input must be a float tensor"
        )));
    }
    let wsz = w.sizes();
    if wsz.len() != 2 {
        return Err(Error::runtime(format!("{what}: the weight must be 2-d")));
    }
    let (n, k) = (wsz[0] as usize, wsz[1] as usize);
    let (m, out_sizes) = rows(x, k, n, what)?;
    let pw = weight_cache::prepared(w, n, what, || weight_ints(w, n, what))?;
    let bias = bias_values(bias, n, what)?;
    let xv = x.to_vec::<f32>();
    let (mut min, mut max) = (0.0f32, 0.0f32);
    if let Some(&first) = xv.first() {
        (min, max) = (first, first);
        for &v in &xv {
            min = min.min(v);
            max = max.max(v);
        }
    }
    let (scale, zp) = choose_qparams(min, max, 0, 255, reduce_range);
    let inv = 1.0f32 / scale;
    let xi: Vec<i32> = xv
        .iter()
        .map(|&v| (quantize_val(v, inv, zp, 0, 255) - zp) as i32)
        .collect();
    let acc = int_gemm_prepared(&xi, m, k, &pw, n)?;
    let out: Vec<f32> = acc
        .iter()
        .enumerate()
        .map(|(i, &a)| {
            let c = i % n;
            let mut v = scale * pw.scales[c] as f32 * a as f32;
            if let Some(b) = &bias {
                v += b[c];
            }
            if relu {
                v = v.max(0.0);
            }
            v
        })
        .collect();
    Tensor::from_vec(out, &out_sizes)
}

fn conv_out(size: usize, k: usize, s: usize, p: usize, d: usize) -> Option<usize> {
    let span = d * (k - 1) + 1;
    (size + 2 * p).checked_sub(span).map(|r| r / s + 1)
}

/// `quantized::conv2d` / `conv2d_relu`: NCHW quantized input, qint8 weight
/// `[OC, IC / groups, KH, KW]` (per tensor or per output channel), float bias.
pub fn qconv2d(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    p: &QConvParams,
    out_scale: f64,
    out_zero_point: i64,
    relu: bool,
) -> Result<Tensor> {
    let what = "quantized::conv2d";
    let xq = quantizer_of(x, what)?;
    let (xs, xz) = xq.per_tensor(what)?;
    check_out_params(out_scale, out_zero_point, xq.dtype, what)?;
    let (xsz, wsz) = (x.sizes(), w.sizes());
    if xsz.len() != 4 || wsz.len() != 4 {
        return Err(Error::runtime(format!(
            "{what}: expected a 4-d input and weight, got shapes {:?} and {:?}",
            xsz.as_slice(),
            wsz.as_slice()
        )));
    }
    let [nb, ic, h, wd] = [xsz[0], xsz[1], xsz[2], xsz[3]].map(|v| v as usize);
    let [oc, icg, kh, kw] = [wsz[0], wsz[1], wsz[2], wsz[3]].map(|v| v as usize);
    let g = p.groups;
    if g == 0
        || icg * g != ic
        || oc % g != 0
        || kh == 0
        || kw == 0
        || p.stride.contains(&0)
        || p.dilation.contains(&0)
    {
        return Err(Error::runtime(format!(
            "{what}: input of shape {:?} does not fit weight {:?} with groups {g}",
            xsz.as_slice(),
            wsz.as_slice()
        )));
    }
    let (Some(oh), Some(ow)) = (
        conv_out(h, kh, p.stride[0], p.padding[0], p.dilation[0]),
        conv_out(wd, kw, p.stride[1], p.padding[1], p.dilation[1]),
    ) else {
        return Err(Error::runtime(format!(
            "{what}: the kernel is larger than the padded input {:?}",
            xsz.as_slice()
        )));
    };
    let pw = weight_cache::prepared(w, oc, what, || weight_ints(w, oc, what))?;
    let rq = Requant::new(
        xs,
        &pw.scales,
        bias_values(bias, oc, what)?,
        (out_scale, out_zero_point, xq.dtype),
        relu,
    );
    let geo = ConvGeometry {
        nb,
        ic,
        h,
        wd,
        oc,
        icg,
        kh,
        kw,
        oh,
        ow,
    };
    let sizes = [nb as i64, oc as i64, oh as i64, ow as i64];
    let quantizer = per_tensor_quantizer(xq.dtype, out_scale, out_zero_point);
    if xq.dtype == QDType::QUInt8 {
        if let Some(vals) = conv_u8(x, xz, &pw, &rq, &geo, p) {
            return from_stored(vals, &sizes, quantizer);
        }
    }
    let (xf, x_max) = shifted_input(x, xz, xq.dtype);
    let wsz = [oc, icg, kh, kw].map(|v| v as i64);
    let xs = [nb, ic, h, wd].map(|v| v as i64);
    let acc: Tensor = match kind_for(x_max, pw.row_l1) {
        Some(ExactFloat::F32) => conv_acc_float(
            &Tensor::from_vec_shared(xf, &xs)?,
            &pw.as_f32(&wsz)?,
            &geo,
            p,
        )?,
        Some(ExactFloat::F64) => {
            let xd: Vec<f64> = shifted_i32(x, xz).iter().map(|&v| v as f64).collect();
            conv_acc_float(&Tensor::from_vec(xd, &xs)?, &pw.as_f64(&wsz)?, &geo, p)?
        }
        None => {
            let acc = conv_acc_direct(&shifted_i32(x, xz), &pw.ints, &geo, p);
            let acc: Vec<f32> = acc.into_iter().map(|a| a as f32).collect();
            Tensor::from_vec(acc, &[nb as i64, oc as i64, oh as i64, ow as i64])?
        }
    };
    with_qint!(xq.dtype, T => {
        let vals = with_stored::<f32, _>(&acc, |a| rq.planes::<T>(a, oh * ow, oc));
        from_stored(vals, &sizes, quantizer)
    })
}

/// `quantized::linear` on the `u8 x i8` kernel when it applies (quint8 input, AVX-512 VNNI,
/// weights that fit `i8`): the stored rows `[m, k]`, requantized into `[m, n]`.
fn linear_u8(
    x: &Tensor,
    xz: i64,
    pw: &PreparedWeight,
    rq: &Requant,
    m: usize,
    n: usize,
) -> Option<Vec<u8>> {
    if quantizer_of(x, "").ok()?.dtype != QDType::QUInt8 || !qgemm::available() {
        return None;
    }
    let w = pw.packed(n)?;
    let ep = rq.epilogue(xz, &w.row_sum);
    let mut out = vec![0u8; m * n];
    let layout = RowLayout {
        per_image: m.max(1),
        image: 0,
        row: n,
        col: 1,
    };
    with_stored::<u8, _>(x, |v| {
        if w.k % 4 == 0 {
            qgemm::rows_channels(v, m, w, &ep, layout, &mut out);
        } else {
            let lda = w.kq * 4;
            let mut a = vec![0u8; m * lda];
            for (d, s) in a.chunks_exact_mut(lda).zip(v.chunks_exact(w.k)) {
                d[..w.k].copy_from_slice(s);
            }
            qgemm::rows_channels(&a, m, w, &ep, layout, &mut out);
        }
    });
    Some(out)
}

/// A quantized convolution on the `u8` kernels when one applies (quint8 input): depthwise on
/// any CPU; dense (groups 1) with AVX-512 VNNI and weights that fit `i8`, lanes over pixels
/// for planes of 16 or more, else over output channels. `None` otherwise.
fn conv_u8(
    x: &Tensor,
    xz: i64,
    pw: &PreparedWeight,
    rq: &Requant,
    g: &ConvGeometry,
    p: &QConvParams,
) -> Option<Vec<u8>> {
    let plane = g.oh * g.ow;
    let mut out = vec![0u8; g.nb * g.oc * plane];
    if p.groups == g.ic && g.oc == g.ic && g.icg == 1 {
        let wt = pw.depthwise(g.oc)?;
        let ep = rq.epilogue(0, &[]);
        let s = DwShape {
            nb: g.nb,
            c: g.ic,
            h: g.h,
            w: g.wd,
            kh: g.kh,
            kw: g.kw,
            stride: p.stride,
            padding: p.padding,
            dilation: p.dilation,
            oh: g.oh,
            ow: g.ow,
        };
        with_stored::<u8, _>(x, |v| {
            depthwise::depthwise(v, xz as i32, &s, wt, &ep, &mut out)
        });
        return Some(out);
    }
    if p.groups != 1 || !qgemm::available() {
        return None;
    }
    let w = pw.packed(g.oc)?;
    let ep = rq.epilogue(xz, &w.row_sum);
    let k = g.ic * g.kh * g.kw;
    with_stored::<u8, _>(x, |xv| {
        let mut col = vec![0u8; plane];
        if plane >= 16 {
            let pp = plane.div_ceil(16) * 16;
            let per = w.kq * pp * 4;
            let mut a = vec![0u8; g.nb * per];
            let mut cols = vec![0u8; 4 * plane];
            for img in 0..g.nb {
                // Four window rows at a time, stored as one `u32` per pixel.
                for q in 0..w.kq {
                    let mut quad: [&[u8]; 4] = [&[]; 4];
                    let mut rest = &mut cols[..];
                    for (j, slot) in quad.iter_mut().enumerate() {
                        let (mine, tail) = rest.split_at_mut(plane);
                        rest = tail;
                        let r = q * 4 + j;
                        *slot = if r < k {
                            conv_column(xv, g, p, xz as u8, img, r, mine)
                        } else {
                            mine.fill(0);
                            mine
                        };
                    }
                    let dst = &mut a[img * per + q * pp * 4..][..plane * 4];
                    for (i, d) in dst.chunks_exact_mut(4).enumerate() {
                        d.copy_from_slice(&[quad[0][i], quad[1][i], quad[2][i], quad[3][i]]);
                    }
                }
            }
            qgemm::conv_pixels(&a, g.nb, plane, w, &ep, &mut out);
        } else {
            let lda = w.kq * 4;
            let mut a = vec![0u8; g.nb * plane * lda];
            for img in 0..g.nb {
                for r in 0..k {
                    let row = conv_column(xv, g, p, xz as u8, img, r, &mut col);
                    for (q, &v) in row.iter().enumerate() {
                        a[(img * plane + q) * lda + r] = v;
                    }
                }
            }
            let layout = RowLayout {
                per_image: plane.max(1),
                image: g.oc * plane,
                row: 1,
                col: plane,
            };
            qgemm::rows_channels(&a, g.nb * plane, w, &ep, layout, &mut out);
        }
    });
    Some(out)
}

/// Input row `r` (a `(channel, ky, kx)` of the window) of image `img` at every output pixel,
/// `xz` where the window reaches into the padding: the input plane itself for a pointwise
/// convolution, else gathered into `col`.
fn conv_column<'a>(
    xv: &'a [u8],
    g: &ConvGeometry,
    p: &QConvParams,
    xz: u8,
    img: usize,
    r: usize,
    col: &'a mut [u8],
) -> &'a [u8] {
    let (c, ky, kx) = (r / (g.kh * g.kw), (r / g.kw) % g.kh, r % g.kw);
    let src = &xv[(img * g.ic + c) * g.h * g.wd..][..g.h * g.wd];
    if g.kh == 1 && g.kw == 1 && p.stride == [1, 1] && p.padding == [0, 0] {
        return src;
    }
    let shift = (kx * p.dilation[1]) as isize - p.padding[1] as isize;
    let (lo, hi) = crate::cpu::conv::valid_range(shift, p.stride[1], g.wd, g.ow);
    for oy in 0..g.oh {
        let dst = &mut col[oy * g.ow..(oy + 1) * g.ow];
        let iy = (oy * p.stride[0] + ky * p.dilation[0]) as isize - p.padding[0] as isize;
        if iy < 0 || iy as usize >= g.h || lo == hi {
            dst.fill(xz);
            continue;
        }
        dst[..lo].fill(xz);
        dst[hi..].fill(xz);
        let srow = &src[iy as usize * g.wd..][..g.wd];
        let first = (lo as isize * p.stride[1] as isize + shift) as usize;
        if p.stride[1] == 1 {
            dst[lo..hi].copy_from_slice(&srow[first..first + hi - lo]);
        } else {
            for (d, &v) in dst[lo..hi]
                .iter_mut()
                .zip(srow[first..].iter().step_by(p.stride[1]))
            {
                *d = v;
            }
        }
    }
    col
}

/// Sizes of a quantized 2-d convolution: input `[nb, ic, h, wd]`, weight `[oc, icg, kh, kw]`,
/// output planes `oh x ow`.
#[derive(Clone, Copy)]
struct ConvGeometry {
    nb: usize,
    ic: usize,
    h: usize,
    wd: usize,
    oc: usize,
    icg: usize,
    kh: usize,
    kw: usize,
    oh: usize,
    ow: usize,
}

/// Which float type computes an integer product exactly.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ExactFloat {
    F32,
    F64,
}

/// The float type whose kernels give the exact integer accumulators of sums
/// `sum_k x[k] * w[r][k]`: every partial sum, in any order, is bounded by
/// `max |x| * max_r sum_k |w[r][k]|` (`x_max * row_l1`), so `f32` is exact below 2^24 and `f64`
/// below 2^53; `None` beyond (the direct `i32` loop then runs).
fn kind_for(x_max: u64, row_l1: u64) -> Option<ExactFloat> {
    let bound = x_max.checked_mul(row_l1)?;
    if bound < 1 << 24 {
        Some(ExactFloat::F32)
    } else if bound < 1 << 53 {
        Some(ExactFloat::F64)
    } else {
        None
    }
}

/// `max |v|` (0 when empty).
fn abs_max(v: &[i32]) -> u64 {
    v.iter().map(|v| v.unsigned_abs() as u64).max().unwrap_or(0)
}

/// An exact float result back to FBGEMM's wrapping `i32` accumulator.
fn wrap_i32(v: f64) -> i32 {
    v as i64 as i32
}

/// The convolution's accumulators `[nb, oc, oh, ow]`, each as the `f32` of its wrapping `i32`,
/// through the float convolution kernels (tiled im2col + GEMM, depthwise) on `x` and `w`, the
/// input's and weight's integers minus their zero points as `f32` or `f64` (both the same
/// type), exact by [`kind_for`]'s bound (an `f32` result is then already that integer).
fn conv_acc_float(x: &Tensor, w: &Tensor, g: &ConvGeometry, p: &QConvParams) -> Result<Tensor> {
    debug_assert_eq!(x.numel(), g.nb * g.ic * g.h * g.wd);
    let y = crate::ops::conv::conv2d(
        x,
        w,
        None,
        &p.stride.map(|v| v as i64),
        &crate::ops::conv::ConvPadding::Explicit(p.padding.map(|v| v as i64).to_vec()),
        &p.dilation.map(|v| v as i64),
        p.groups as i64,
    )?;
    if y.dtype() == crate::DType::Float64 {
        let acc: Vec<f32> = y
            .to_vec::<f64>()
            .into_iter()
            .map(|v| wrap_i32(v) as f32)
            .collect();
        return Tensor::from_vec(acc, &y.sizes());
    }
    Ok(y)
}

/// The convolution's accumulators `[nb, oc, oh, ow]` by the direct `i32` loop (the reference,
/// and the path for sums too large for an exact float kernel).
fn conv_acc_direct(xi: &[i32], wi: &[i32], g: &ConvGeometry, p: &QConvParams) -> Vec<i32> {
    let ConvGeometry {
        nb,
        ic,
        h,
        wd,
        oc,
        icg,
        kh,
        kw,
        oh,
        ow,
    } = *g;
    let ocg = oc / p.groups;
    let mut out = vec![0i32; nb * oc * oh * ow];
    for n in 0..nb {
        for o in 0..oc {
            let grp = o / ocg;
            let wbase = o * icg * kh * kw;
            for y in 0..oh {
                for xo in 0..ow {
                    let mut acc = 0i32;
                    for ci in 0..icg {
                        let c = grp * icg + ci;
                        let xplane = (n * ic + c) * h * wd;
                        for ki in 0..kh {
                            let iy = (y * p.stride[0] + ki * p.dilation[0]) as isize
                                - p.padding[0] as isize;
                            if iy < 0 || iy as usize >= h {
                                continue;
                            }
                            for kj in 0..kw {
                                let ix = (xo * p.stride[1] + kj * p.dilation[1]) as isize
                                    - p.padding[1] as isize;
                                if ix < 0 || ix as usize >= wd {
                                    continue;
                                }
                                let xv = xi[xplane + iy as usize * wd + ix as usize];
                                let wv = wi[wbase + (ci * kh + ki) * kw + kj];
                                acc = acc.wrapping_add(xv.wrapping_mul(wv));
                            }
                        }
                    }
                    out[((n * oc + o) * oh + y) * ow + xo] = acc;
                }
            }
        }
    }
    out
}

/// The common shape of `a` and `b` and the stored integers of both broadcast to it.
fn broadcast_stored<T: QInt>(
    a: &Tensor,
    b: &Tensor,
    what: &str,
) -> Result<(Vec<T>, Vec<T>, Vec<i64>)> {
    let (sa, sb) = (a.sizes(), b.sizes());
    let shape = crate::shape::broadcast_shapes(&sa, &sb).map_err(|_| {
        Error::runtime(format!(
            "{what}: operands of shapes {:?} and {:?} do not broadcast",
            sa.as_slice(),
            sb.as_slice()
        ))
    })?;
    let stored = |t: &Tensor, s: &[i64]| -> Result<Vec<T>> {
        if s == shape.as_slice() {
            Ok(with_stored::<T, _>(t, |v| v.to_vec()))
        } else {
            Ok(super::plain_view(t)?.expand(&shape, false)?.to_vec::<T>())
        }
    };
    Ok((stored(a, &sa)?, stored(b, &sb)?, shape.to_vec()))
}

/// A per-tensor scale and zero point.
type QParams = (f64, i64);

/// The per-tensor quantizers of two operands, which must share a dtype.
fn binary_quantizers<'a>(
    a: &'a Tensor,
    b: &'a Tensor,
    what: &str,
) -> Result<(&'a Quantizer, QParams, QParams)> {
    let (qa, qb) = (quantizer_of(a, what)?, quantizer_of(b, what)?);
    if qa.dtype != qb.dtype {
        return Err(Error::runtime(format!(
            "{what}: both inputs must have the same quantized dtype, got {} and {}",
            qa.dtype.name(),
            qb.dtype.name()
        )));
    }
    Ok((qa, qa.per_tensor(what)?, qb.per_tensor(what)?))
}

/// `quantized::add` / `add_relu`: dequantize both, add in `f32`, quantize to `(scale, zp)`,
/// fused per element on the stored integers.
pub fn qadd(a: &Tensor, b: &Tensor, scale: f64, zero_point: i64, relu: bool) -> Result<Tensor> {
    let what = "quantized::add";
    let (qa, (sa, za), (sb, zb)) = binary_quantizers(a, b, what)?;
    let dtype = qa.dtype;
    check_out_params(scale, zero_point, dtype, what)?;
    let (da, db) = (Dequant::new(sa, za), Dequant::new(sb, zb));
    let qt = QuantizeTo::new(scale, zero_point, dtype);
    let floor = if relu { 0.0 } else { f32::NEG_INFINITY };
    with_qint!(dtype, T => {
        let (va, vb, shape) = broadcast_stored::<T>(a, b, what)?;
        let mut out = vec![T::default(); va.len()];
        fused::add(&va, &vb, da, db, floor, qt, &mut out);
        from_stored(out, &shape, per_tensor_quantizer(dtype, scale, zero_point))
    })
}

/// `quantized::mul` / `mul_relu`: the integer product of the zero-point-shifted operands,
/// requantized with `multiplier = a_scale * b_scale / scale` (ATen's `qmul` kernel).
pub fn qmul(a: &Tensor, b: &Tensor, scale: f64, zero_point: i64, relu: bool) -> Result<Tensor> {
    let what = "quantized::mul";
    let (qa, (sa, za), (sb, zb)) = binary_quantizers(a, b, what)?;
    let dtype = qa.dtype;
    check_out_params(scale, zero_point, dtype, what)?;
    let inv = 1.0f32 / scale as f32;
    let multiplier = (sa * sb * inv as f64) as f32;
    let (lo, hi) = dtype.range();
    let lo = if relu { lo.max(zero_point) } else { lo };
    let params = MulParams::new(za, zb, multiplier, zero_point, lo, hi);
    with_qint!(dtype, T => {
        let (va, vb, shape) = broadcast_stored::<T>(a, b, what)?;
        let mut out = vec![T::default(); va.len()];
        fused::mul(&va, &vb, params, &mut out);
        from_stored(out, &shape, per_tensor_quantizer(dtype, scale, zero_point))
    })
}

/// `quantized::hardswish`: `x * min(max(x + 3, 0), 6) / 6` on dequantized values.
pub fn qhardswish(x: &Tensor, scale: f64, zero_point: i64) -> Result<Tensor> {
    let what = "quantized::hardswish";
    let q = quantizer_of(x, what)?;
    let (s, zp) = q.per_tensor(what)?;
    let dtype = q.dtype;
    check_out_params(scale, zero_point, dtype, what)?;
    let (d, qt) = (
        Dequant::new(s, zp),
        QuantizeTo::new(scale, zero_point, dtype),
    );
    with_qint!(dtype, T => {
        let mut out = vec![T::default(); x.numel()];
        with_stored::<T, _>(x, |v| fused::hardswish(v, d, qt, &mut out));
        from_stored(out, &x.sizes(), per_tensor_quantizer(dtype, scale, zero_point))
    })
}

/// `hardsigmoid` of a quantized tensor: `min(max(x + 3, 0), 6) / 6`, quantized with the fixed
/// parameters ATen uses (scale 1/256, zero point 0 for quint8, -128 for qint8).
pub fn qhardsigmoid(x: &Tensor) -> Result<Tensor> {
    let what = "hardsigmoid";
    let q = quantizer_of(x, what)?;
    let (s, zp) = q.per_tensor(what)?;
    let dtype = q.dtype;
    let zero_point = match dtype {
        QDType::QUInt8 => 0,
        QDType::QInt8 => -128,
        QDType::QInt32 => {
            return Err(Error::runtime(
                "hardsigmoid is not implemented for quantized tensors of dtype QInt32",
            ))
        }
    };
    let scale = 1.0 / 256.0;
    let (d, qt) = (
        Dequant::new(s, zp),
        QuantizeTo::new(scale, zero_point, dtype),
    );
    with_qint!(dtype, T => {
        let mut out = vec![T::default(); x.numel()];
        with_stored::<T, _>(x, |v| fused::hardsigmoid(v, d, qt, &mut out));
        from_stored(out, &x.sizes(), per_tensor_quantizer(dtype, scale, zero_point))
    })
}

/// `relu` of a quantized tensor: `max(q, zero_point)` with the same quantizer.
pub fn qrelu(x: &Tensor) -> Result<Tensor> {
    let what = "relu";
    let q = quantizer_of(x, what)?;
    let (_, zp) = q.per_tensor(what)?;
    with_qint!(q.dtype, T => {
        let zq = T::from_i64(zp);
        let zi = zq.to_i32();
        let v: Vec<T> = x
            .to_vec::<T>()
            .into_iter()
            .map(|v| if v.to_i32() < zi { zq } else { v })
            .collect();
        from_stored(v, &x.sizes(), (**q).clone())
    })
}

/// A quantized tensor of `q`'s dtype over `vals` (each in range).
fn from_i32_values(vals: &[i32], sizes: &[i64], q: Quantizer) -> Result<Tensor> {
    with_qint!(q.dtype, T => {
        from_stored(vals.iter().map(|&v| T::from_i64(v as i64)).collect::<Vec<T>>(), sizes, q)
    })
}

/// Splits `[.., H, W]` into planes; returns (planes, H, W).
fn planes(x: &Tensor, what: &str) -> Result<(usize, usize, usize)> {
    let s = x.sizes();
    if s.len() != 3 && s.len() != 4 {
        return Err(Error::runtime(format!(
            "{what}: expected a 3-d or 4-d quantized input, got shape {:?}",
            s.as_slice()
        )));
    }
    let n = s.len();
    let (h, w) = (s[n - 2] as usize, s[n - 1] as usize);
    Ok((x.numel() / (h * w).max(1), h, w))
}

fn out_shape(x: &Tensor, oh: usize, ow: usize) -> Vec<i64> {
    let mut s: Vec<i64> = x.sizes().to_vec();
    let n = s.len();
    s[n - 2] = oh as i64;
    s[n - 1] = ow as i64;
    s
}

/// PyTorch's pooling output size (with `ceil_mode`'s rule that the last window starts inside
/// the input or left padding).
fn pool_out(size: usize, k: usize, s: usize, p: usize, d: usize, ceil: bool) -> Option<usize> {
    let span = (d * (k - 1) + 1) as i64;
    let num = size as i64 + 2 * p as i64 - span;
    if num < 0 && !ceil {
        return None;
    }
    let s_i = s as i64;
    let mut out = if ceil {
        (num + s_i - 1).div_euclid(s_i) + 1
    } else {
        num.div_euclid(s_i) + 1
    };
    if ceil && (out - 1) * s_i >= size as i64 + p as i64 {
        out -= 1;
    }
    (out > 0).then_some(out as usize)
}

/// `max_pool2d` of a quantized tensor: the integer maximum of each window (same quantizer).
pub fn qmax_pool2d(
    x: &Tensor,
    kernel: [usize; 2],
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
    ceil_mode: bool,
) -> Result<Tensor> {
    let what = "quantized max_pool2d";
    let q = quantizer_of(x, what)?;
    let (np, h, w) = planes(x, what)?;
    if kernel.contains(&0) || stride.contains(&0) || dilation.contains(&0) {
        return Err(Error::runtime(format!(
            "{what}: kernel, stride and dilation must be positive"
        )));
    }
    if padding[0] * 2 > kernel[0] || padding[1] * 2 > kernel[1] {
        return Err(Error::runtime(format!(
            "{what}: pad should be at most half of effective kernel size"
        )));
    }
    let (Some(oh), Some(ow)) = (
        pool_out(h, kernel[0], stride[0], padding[0], dilation[0], ceil_mode),
        pool_out(w, kernel[1], stride[1], padding[1], dilation[1], ceil_mode),
    ) else {
        return Err(Error::runtime(format!(
            "{what}: the output size is too small for input of shape {:?}",
            x.sizes().as_slice()
        )));
    };
    let g = PoolWindow {
        h,
        w,
        ow,
        kernel,
        stride,
        padding,
        dilation,
    };
    let shape = out_shape(x, oh, ow);
    with_qint!(q.dtype, T => with_stored::<T, _>(x, |xv| {
        let mut out = vec![T::default(); np * oh * ow];
        for (src, dst) in xv.chunks_exact(h * w).zip(out.chunks_exact_mut(oh * ow)) {
            max_pool_plane(src, &g, dst);
        }
        from_stored(out, &shape, (**q).clone())
    }))
}

/// The window of a 2-d pooling over one `h x w` plane giving rows of `ow` outputs.
struct PoolWindow {
    h: usize,
    w: usize,
    ow: usize,
    kernel: [usize; 2],
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
}

/// The maximum of each window of one plane of stored integers, read in place (every window
/// holds at least one input element: padding is at most half the kernel).
fn max_pool_plane<T: QInt>(src: &[T], g: &PoolWindow, dst: &mut [T]) {
    let [sy, sx] = g.stride;
    let [dy, dx] = g.dilation;
    for (y, row) in dst.chunks_exact_mut(g.ow).enumerate() {
        let rows: Vec<&[T]> = (0..g.kernel[0])
            .filter_map(|ki| {
                let iy = (y * sy + ki * dy).checked_sub(g.padding[0])?;
                (iy < g.h).then(|| &src[iy * g.w..][..g.w])
            })
            .collect();
        for (xo, d) in row.iter_mut().enumerate() {
            let mut best = i32::MIN;
            for kj in 0..g.kernel[1] {
                let Some(ix) = (xo * sx + kj * dx).checked_sub(g.padding[1]) else {
                    continue;
                };
                if ix >= g.w {
                    break;
                }
                for r in &rows {
                    best = best.max(r[ix].to_i32());
                }
            }
            *d = T::from_i64(best as i64);
        }
    }
}

/// `adaptive_avg_pool2d` of a quantized tensor: the integer sum of each window, shifted by the
/// zero point and requantized with `1 / window size` (same quantizer).
pub fn qadaptive_avg_pool2d(x: &Tensor, output_size: [usize; 2]) -> Result<Tensor> {
    let what = "quantized adaptive_avg_pool2d";
    let q = quantizer_of(x, what)?;
    let (s, zp) = q.per_tensor(what)?;
    let (np, h, w) = planes(x, what)?;
    let [oh, ow] = output_size;
    if oh == 0 || ow == 0 || h == 0 || w == 0 {
        return Err(Error::runtime(format!(
            "{what}: output size {output_size:?} and input shape {:?} must be non-empty",
            x.sizes().as_slice()
        )));
    }
    let (lo, hi) = q.dtype.range();
    let xi = x.to_vec::<i32>();
    let mut vals = vec![0i32; np * oh * ow];
    for pl in 0..np {
        let base = pl * h * w;
        for i in 0..oh {
            let (hs, he) = (i * h / oh, ((i + 1) * h).div_ceil(oh));
            for j in 0..ow {
                let (ws, we) = (j * w / ow, ((j + 1) * w).div_ceil(ow));
                let size = ((he - hs) * (we - ws)) as i64;
                let mut acc: i64 = 0;
                for y in hs..he {
                    for xx in ws..we {
                        acc += xi[base + y * w + xx] as i64;
                    }
                }
                acc -= size * zp;
                // ATen's multiplier is `input_scale / output_scale / size`; the output keeps
                // the input's parameters.
                let (in_scale, out_scale) = (s as f32, s as f32);
                let multiplier = in_scale / out_scale / size as f32;
                let v = round_clamp(acc as f32 * multiplier, i64::MIN / 2, i64::MAX / 2) + zp;
                vals[(pl * oh + i) * ow + j] = v.clamp(lo, hi) as i32;
            }
        }
    }
    from_i32_values(&vals, &out_shape(x, oh, ow), (**q).clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The requantization formula evaluated one element at a time, in f64 after the f32 steps.
    fn requant_reference(rq: &Requant, a: i32, c: usize) -> i64 {
        let x = (a as f32 + rq.bias_term[c]) * rq.multiplier[c];
        (x.round_ties_even() as f64 + rq.zero_point as f64).clamp(rq.lo as f64, rq.hi as f64) as i64
    }

    #[test]
    fn vectorized_requantization_rounds_half_to_even_and_clamps() {
        // Multiplier 0.5 makes odd accumulators land on halves; a large range saturates.
        let mut acc: Vec<i32> = (-700..700).collect();
        acc.extend([i32::MIN, i32::MAX, 1 << 24, -(1 << 24) - 1]);
        for (dtype, relu, zp) in [
            (QDType::QUInt8, false, 3),
            (QDType::QUInt8, true, 128),
            (QDType::QInt8, false, -5),
            (QDType::QInt32, false, 0),
        ] {
            let rq = Requant::new(
                1.0,
                &[0.5, 0.25, 3.0],
                Some(vec![0.5, -1.25, 0.0]),
                (1.0, zp, dtype),
                relu,
            );
            for c in 0..3 {
                let mut out = vec![0i64; acc.len()];
                rq.apply_channel(&acc, &mut out, c);
                let mut mixed = vec![0i64; acc.len()];
                rq.apply(&acc, &mut mixed, |i| (i + c) % 3);
                for (i, &a) in acc.iter().enumerate() {
                    assert_eq!(out[i], requant_reference(&rq, a, c), "{dtype:?} acc {a}");
                    assert_eq!(mixed[i], requant_reference(&rq, a, (i + c) % 3));
                }
            }
        }
    }

    /// Deterministic integers in `[-span, span]`.
    fn ints(len: usize, span: i32, seed: u64) -> Vec<i32> {
        let mut s = seed;
        (0..len)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 33) % (2 * span as u64 + 1)) as i32 - span
            })
            .collect()
    }

    #[test]
    fn exact_kind_follows_the_bound() {
        assert_eq!(kind_for(255, 8), Some(ExactFloat::F32));
        assert_eq!(kind_for(1 << 12, 1 << 12), Some(ExactFloat::F64));
        assert_eq!(kind_for(255, 255 * 2048), Some(ExactFloat::F64));
        assert_eq!(kind_for(1 << 31, 1 << 31), None);
        assert_eq!(kind_for(u64::MAX, 2), None);
        assert_eq!(kind_for(0, 0), Some(ExactFloat::F32));
        assert_eq!(abs_max(&[3, i32::MIN, 7]), 1 << 31);
        assert_eq!(PreparedWeight::new(vec![1, -2, 3, -4], vec![], 2).row_l1, 7);
    }

    #[test]
    fn float_gemm_accumulators_match_the_integer_loop() {
        // Shapes around every vector width; small values take f32, large ones f64.
        for (m, k, n) in [
            (1, 1, 1),
            (3, 17, 5),
            (1, 300, 33),
            (17, 64, 16),
            (9, 1000, 7),
        ] {
            for span in [3, 255] {
                let a = ints(m * k, span, 1);
                let b = ints(n * k, span, 2);
                let got = int_gemm_nt(&a, m, k, &b, n).unwrap();
                assert_eq!(got, int_gemm_nt_direct(&a, m, k, &b, n), "{m}x{k}x{n}");
            }
        }
        assert!(int_gemm_nt(&[], 0, 4, &[1; 8], 2).unwrap().is_empty());
        assert_eq!(int_gemm_nt(&[], 2, 0, &[], 3).unwrap(), vec![0; 6]);
    }

    #[test]
    fn float_conv_accumulators_match_the_integer_loop() {
        // (ic, oc, groups, h, w, k, stride, pad, dilation): dense, grouped, depthwise (with a
        // channel multiplier), strided, dilated, padding wider than the kernel reach.
        for (ic, oc, groups, h, w, k, s, pd, d) in [
            (3, 4, 1, 7, 9, 3, 1, 1, 1),
            (4, 6, 2, 8, 8, 3, 2, 1, 1),
            (5, 5, 5, 9, 6, 3, 1, 1, 1),
            (4, 8, 4, 7, 7, 3, 2, 1, 1),
            (6, 3, 1, 6, 6, 1, 1, 0, 1),
            (2, 3, 1, 9, 5, 2, 1, 3, 2),
            (3, 2, 1, 4, 3, 3, 1, 5, 2),
        ] {
            for span in [4, 255] {
                let g = ConvGeometry {
                    nb: 2,
                    ic,
                    h,
                    wd: w,
                    oc,
                    icg: ic / groups,
                    kh: k,
                    kw: k,
                    oh: conv_out(h, k, s, pd, d).unwrap(),
                    ow: conv_out(w, k, s, pd, d).unwrap(),
                };
                let p = QConvParams {
                    stride: [s; 2],
                    padding: [pd; 2],
                    dilation: [d; 2],
                    groups,
                };
                let x = ints(2 * ic * h * w, span, 3);
                let wt = ints(oc * (ic / groups) * k * k, span.min(128), 4);
                let want = conv_acc_direct(&x, &wt, &g, &p);
                let pw = PreparedWeight::new(wt.clone(), vec![], oc);
                let wsz = [oc, ic / groups, k, k].map(|v| v as i64);
                let mut weights = vec![pw.as_f64(&wsz).unwrap()];
                if kind_for(abs_max(&x), pw.row_l1) == Some(ExactFloat::F32) {
                    weights.push(pw.as_f32(&wsz).unwrap());
                }
                let xs = [2, ic as i64, h as i64, w as i64];
                let want: Vec<f32> = want.iter().map(|&a| a as f32).collect();
                for wf in weights {
                    let dt = wf.dtype();
                    let xt = if dt == crate::DType::Float64 {
                        Tensor::from_vec(x.iter().map(|&v| v as f64).collect::<Vec<_>>(), &xs)
                    } else {
                        Tensor::from_vec(x.iter().map(|&v| v as f32).collect::<Vec<_>>(), &xs)
                    };
                    let got = conv_acc_float(&xt.unwrap(), &wf, &g, &p)
                        .unwrap()
                        .to_vec::<f32>();
                    assert_eq!(got, want, "{ic} {oc} {groups} {h}x{w} k{k} {dt:?}");
                }
            }
        }
    }

    /// `qconv2d` of random quint8 inputs against the direct integer loop and the scalar
    /// requantization: dense (pixel lanes and channel lanes), strided, padded, dilated,
    /// depthwise and grouped convolutions; per-channel weights with zero points 0 (the `u8`
    /// kernels) and nonzero (values beyond `i8` take the float path); input zero points
    /// 0, 128, 255; with and without ReLU; on the widest path and on AVX2.
    #[test]
    fn u8_conv_and_linear_match_the_integer_loop() {
        let check = || {
            for (ic, oc, groups, h, w, k, s, pd, d) in [
                (3, 20, 1, 9, 9, 3, 2, 1, 1),
                (7, 13, 1, 5, 6, 1, 1, 0, 1),
                (16, 7, 1, 3, 3, 1, 1, 0, 1),
                (5, 9, 1, 8, 7, 3, 1, 2, 2),
                (4, 4, 1, 2, 2, 3, 1, 1, 1),
                (24, 24, 24, 6, 6, 3, 2, 1, 1),
                (6, 6, 6, 5, 5, 3, 1, 1, 1),
                (4, 6, 2, 6, 6, 3, 1, 1, 1),
            ] {
                for (xz, wz) in [(0, 0), (128, 0), (255, 0), (7, 3)] {
                    for relu in [false, true] {
                        let icg = ic / groups;
                        let xv: Vec<u8> = ints(2 * ic * h * w, 127, 5)
                            .iter()
                            .map(|&v| (v + 128) as u8)
                            .collect();
                        let wv: Vec<i8> = ints(oc * icg * k * k, 127, 6)
                            .iter()
                            .map(|&v| if v == 127 { -128 } else { v as i8 })
                            .collect();
                        let x = from_stored(
                            xv.clone(),
                            &[2, ic as i64, h as i64, w as i64],
                            per_tensor_quantizer(QDType::QUInt8, 0.02, xz),
                        )
                        .unwrap();
                        let scales: Vec<f64> = (0..oc).map(|c| 0.001 * (c + 1) as f64).collect();
                        let wq = Quantizer {
                            dtype: QDType::QInt8,
                            scheme: QScheme::PerChannelAffine {
                                scales: scales.clone(),
                                zero_points: vec![wz; oc],
                                axis: 0,
                            },
                        };
                        let wt = from_stored(
                            wv.clone(),
                            &[oc as i64, icg as i64, k as i64, k as i64],
                            wq,
                        )
                        .unwrap();
                        let bias: Vec<f32> = (0..oc).map(|c| c as f32 * 0.37 - 1.0).collect();
                        let bt = Tensor::from_vec(bias.clone(), &[oc as i64]).unwrap();
                        let p = QConvParams {
                            stride: [s; 2],
                            padding: [pd; 2],
                            dilation: [d; 2],
                            groups,
                        };
                        let y = qconv2d(&x, &wt, Some(&bt), &p, 0.05, 60, relu).unwrap();
                        let (oh, ow) = (
                            conv_out(h, k, s, pd, d).unwrap(),
                            conv_out(w, k, s, pd, d).unwrap(),
                        );
                        let g = ConvGeometry {
                            nb: 2,
                            ic,
                            h,
                            wd: w,
                            oc,
                            icg,
                            kh: k,
                            kw: k,
                            oh,
                            ow,
                        };
                        let xi: Vec<i32> = xv.iter().map(|&v| v as i32 - xz as i32).collect();
                        let wi: Vec<i32> = wv.iter().map(|&v| v as i32 - wz as i32).collect();
                        let acc = conv_acc_direct(&xi, &wi, &g, &p);
                        let rq = Requant::new(
                            0.02,
                            &scales,
                            Some(bias.clone()),
                            (0.05, 60, QDType::QUInt8),
                            relu,
                        );
                        let plane = oh * ow;
                        let mut want = vec![0i64; acc.len()];
                        rq.apply(&acc, &mut want, |i| (i / plane) % oc);
                        let got: Vec<i64> = y.to_vec::<u8>().iter().map(|&v| v as i64).collect();
                        assert_eq!(
                            got, want,
                            "conv {ic} {oc} {groups} {h}x{w} k{k} zp {xz} {wz}"
                        );
                    }
                }
            }
            // Linear: rows of depth not multiple of 4, channel counts around 16 and 64.
            for (m, kk, n) in [(1, 7, 5), (3, 64, 17), (9, 33, 70)] {
                let xv: Vec<u8> = ints(m * kk, 127, 8)
                    .iter()
                    .map(|&v| (v + 128) as u8)
                    .collect();
                let wv: Vec<i8> = ints(n * kk, 127, 9).iter().map(|&v| v as i8).collect();
                let x = from_stored(
                    xv.clone(),
                    &[m as i64, kk as i64],
                    per_tensor_quantizer(QDType::QUInt8, 0.1, 131),
                )
                .unwrap();
                let wt = from_stored(
                    wv.clone(),
                    &[n as i64, kk as i64],
                    per_tensor_quantizer(QDType::QInt8, 0.01, 0),
                )
                .unwrap();
                let y = qlinear(&x, &wt, None, 0.3, 9, false).unwrap();
                let xi: Vec<i32> = xv.iter().map(|&v| v as i32 - 131).collect();
                let wi: Vec<i32> = wv.iter().map(|&v| v as i32).collect();
                let acc = int_gemm_nt_direct(&xi, m, kk, &wi, n);
                let rq = Requant::new(0.1, &vec![0.01; n], None, (0.3, 9, QDType::QUInt8), false);
                let mut want = vec![0i64; acc.len()];
                rq.apply(&acc, &mut want, |i| i % n);
                let got: Vec<i64> = y.to_vec::<u8>().iter().map(|&v| v as i64).collect();
                assert_eq!(got, want, "linear {m}x{kk}x{n}");
            }
        };
        check();
        crate::cpu::simd::with_avx2_only(check);
    }

    #[test]
    fn wrapping_matches_i32_overflow() {
        assert_eq!(wrap_i32(2f64.powi(31)), i32::MIN);
        assert_eq!(wrap_i32(-5.0), -5);
    }
}
