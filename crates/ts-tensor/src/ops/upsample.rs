//! Upsampling (`aten::upsample_*`, `_upsample_nearest_exact*`, `_upsample_*_aa`): resampling of
//! the trailing 1, 2 or 3 dims with ATen's index rules (`align_corners`, explicit scales, the
//! nearest-neighbour special cases) and its arithmetic precision (index math in the tensor's
//! float type, as ATen's `opmath_t`).
//!
//! Every mode is separable: the output is computed one axis at a time, last axis first, each
//! output position being a weighted sum of a few input positions along that axis ("taps").
//! Nearest modes select (an `index_select` per axis, any dtype); the others interpolate floats.

use rayon::prelude::*;

use crate::cpu::num::FloatMath;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// How an upsampling operator computes each output position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpsampleMode {
    /// `upsample_nearest*`: `floor(dst * scale)` (OpenCV's rule).
    Nearest,
    /// `_upsample_nearest_exact*`: `floor((dst + 0.5) * scale)` (Pillow's rule).
    NearestExact,
    /// `upsample_linear1d`, `upsample_bilinear2d`, `upsample_trilinear3d`.
    Linear,
    /// `upsample_bicubic2d` (cubic convolution, `A = -0.75`, clamped borders).
    Cubic,
    /// `_upsample_bilinear2d_aa`: a triangle filter widened by the downscaling factor.
    LinearAntialias,
    /// `_upsample_bicubic2d_aa`: a cubic filter (`A = -0.5`) widened by the downscaling factor.
    CubicAntialias,
    /// `_upsample_lanczos2d_aa`: a Lanczos window (`a = 3`, `sinc(x) sinc(x / 3)`) widened by
    /// the downscaling factor, Pillow's LANCZOS filter.
    LanczosAntialias,
}

impl UpsampleMode {
    fn op_name(self, k: usize) -> String {
        match self {
            UpsampleMode::Nearest => format!("upsample_nearest{k}d"),
            UpsampleMode::NearestExact => format!("_upsample_nearest_exact{k}d"),
            UpsampleMode::Linear => [
                "upsample_linear1d",
                "upsample_bilinear2d",
                "upsample_trilinear3d",
            ][k.clamp(1, 3) - 1]
                .to_string(),
            UpsampleMode::Cubic => "upsample_bicubic2d".to_string(),
            UpsampleMode::LinearAntialias => "_upsample_bilinear2d_aa".to_string(),
            UpsampleMode::CubicAntialias => "_upsample_bicubic2d_aa".to_string(),
            UpsampleMode::LanczosAntialias => "_upsample_lanczos2d_aa".to_string(),
        }
    }
}

/// The Lanczos window with `a = 3` at `x >= 0`: `sinc(x) * sinc(x / 3)` inside the window,
/// zero outside (normalised sinc, `sinc(0) = 1`).
fn lanczos3<T: FloatMath>(x: T) -> T {
    let xf = x.to_f64();
    if xf >= 3.0 {
        return T::zero();
    }
    if xf == 0.0 {
        return T::one();
    }
    let px = std::f64::consts::PI * xf;
    T::from_f64((px.sin() / px) * ((px / 3.0).sin() / (px / 3.0)))
}

/// ATen's `compute_scales_value`: the source step per output step (`1 / scale` when a positive
/// scale was given, else the size ratio), in the compute type.
fn scales_value<T: FloatMath>(scale: Option<f64>, input: i64, output: i64) -> T {
    match scale {
        Some(s) if s > 0.0 => T::from_f64(1.0 / s),
        _ => T::from_f64(input as f64) / T::from_f64(output as f64),
    }
}

/// ATen's `area_pixel_compute_scale`.
fn area_scale<T: FloatMath>(input: i64, output: i64, align_corners: bool, scale: Option<f64>) -> T {
    if align_corners {
        if output > 1 {
            T::from_f64((input - 1) as f64) / T::from_f64((output - 1) as f64)
        } else {
            T::zero()
        }
    } else {
        scales_value(scale, input, output)
    }
}

/// ATen's `area_pixel_compute_source_index`.
fn source_index<T: FloatMath>(scale: T, dst: i64, align_corners: bool, cubic: bool) -> T {
    if align_corners {
        scale * T::from_f64(dst as f64)
    } else {
        let half = T::from_f64(0.5);
        let src = scale * (T::from_f64(dst as f64) + half) - half;
        if !cubic && src < T::zero() {
            T::zero()
        } else {
            src
        }
    }
}

/// The input position a nearest-neighbour output position reads (f32 index math, as ATen).
fn nearest_source(
    mode: UpsampleMode,
    dst: i64,
    input: i64,
    output: i64,
    scale: Option<f64>,
) -> i64 {
    if mode == UpsampleMode::Nearest {
        if output == input {
            return dst;
        }
        if output == 2 * input {
            return dst >> 1;
        }
        let s: f32 = scales_value(scale, input, output);
        ((dst as f32 * s).floor() as i64).min(input - 1)
    } else {
        let s: f32 = scales_value(scale, input, output);
        // `(dst + 0.5) * scale` is a double product, floored as a float.
        ((((dst as f64 + 0.5) * s as f64) as f32).floor() as i64).min(input - 1)
    }
}

/// ATen's `guard_index_and_lambda`: the integer part (at most `input - 1`) and the fraction
/// clamped to `[0, 1]`.
fn guard<T: FloatMath>(real: T, input: i64) -> (i64, T) {
    let i = (real.to_f64().floor() as i64).min(input - 1);
    let mut l = real - T::from_f64(i as f64);
    if l < T::zero() {
        l = T::zero();
    }
    if l > T::one() {
        l = T::one();
    }
    (i, l)
}

fn cubic1<T: FloatMath>(x: T, a: T) -> T {
    ((a + T::from_f64(2.0)) * x - (a + T::from_f64(3.0))) * x * x + T::one()
}

fn cubic2<T: FloatMath>(x: T, a: T) -> T {
    ((a * x - T::from_f64(5.0) * a) * x + T::from_f64(8.0) * a) * x - T::from_f64(4.0) * a
}

/// Per-output-position input indices and weights along one axis (compressed rows).
struct Taps<T> {
    /// `start[j]..start[j + 1]` are output `j`'s taps.
    start: Vec<usize>,
    idx: Vec<usize>,
    w: Vec<T>,
}

impl<T: FloatMath> Taps<T> {
    fn new(out: usize) -> Self {
        let mut start = Vec::with_capacity(out + 1);
        start.push(0);
        Taps {
            start,
            idx: Vec::new(),
            w: Vec::new(),
        }
    }

    fn push(&mut self, taps: &[(usize, T)]) {
        for &(i, w) in taps {
            self.idx.push(i);
            self.w.push(w);
        }
        self.start.push(self.idx.len());
    }
}

/// The taps of one axis for the interpolating modes.
fn axis_taps<T: FloatMath>(
    mode: UpsampleMode,
    input: i64,
    output: i64,
    align_corners: bool,
    scale: Option<f64>,
) -> Taps<T> {
    let mut taps = Taps::new(output as usize);
    let clamp = |i: i64| i.clamp(0, input - 1) as usize;
    match mode {
        UpsampleMode::Linear => {
            let ratio: T = area_scale(input, output, align_corners, scale);
            for j in 0..output {
                if input == output {
                    taps.push(&[(j as usize, T::one()), (j as usize, T::zero())]);
                    continue;
                }
                let real = source_index(ratio, j, align_corners, false);
                let (i0, l1) = guard(real, input);
                let i1 = i0 + i64::from(i0 < input - 1);
                taps.push(&[(i0 as usize, T::one() - l1), (i1 as usize, l1)]);
            }
        }
        UpsampleMode::Cubic => {
            let ratio: T = area_scale(input, output, align_corners, scale);
            let a = T::from_f64(-0.75);
            for j in 0..output {
                let real = source_index(ratio, j, align_corners, true);
                let (i, t) = guard(real, input);
                let c = [
                    cubic2(t + T::one(), a),
                    cubic1(t, a),
                    cubic1(T::one() - t, a),
                    cubic2(T::one() - t + T::one(), a),
                ];
                taps.push(&[
                    (clamp(i - 1), c[0]),
                    (clamp(i), c[1]),
                    (clamp(i + 1), c[2]),
                    (clamp(i + 2), c[3]),
                ]);
            }
        }
        UpsampleMode::LinearAntialias
        | UpsampleMode::CubicAntialias
        | UpsampleMode::LanczosAntialias => {
            let cubic = mode == UpsampleMode::CubicAntialias;
            let lanczos = mode == UpsampleMode::LanczosAntialias;
            let interp = match mode {
                UpsampleMode::CubicAntialias => 4.0,
                UpsampleMode::LanczosAntialias => 6.0,
                _ => 2.0,
            };
            let scale: T = area_scale(input, output, align_corners, scale);
            let one = T::one();
            let support = if scale >= one {
                T::from_f64(interp * 0.5) * scale
            } else {
                T::from_f64(interp * 0.5)
            };
            let invscale = if scale >= one { one / scale } else { one };
            let half = T::from_f64(0.5);
            let filter = |x: T| -> T {
                let x = if x < T::zero() { -x } else { x };
                if lanczos {
                    lanczos3(x)
                } else if cubic {
                    let a = T::from_f64(-0.5);
                    if x < one {
                        cubic1(x, a)
                    } else if x < T::from_f64(2.0) {
                        cubic2(x, a)
                    } else {
                        T::zero()
                    }
                } else if x < one {
                    one - x
                } else {
                    T::zero()
                }
            };
            let mut row: Vec<(usize, T)> = Vec::new();
            for j in 0..output {
                let center = scale * (T::from_f64(j as f64) + half);
                let xmin = ((center - support + half).to_f64() as i64).max(0);
                let xmax = ((center + support + half).to_f64() as i64).min(input);
                row.clear();
                let mut total = T::zero();
                for x in xmin..xmax.max(xmin) {
                    let w = filter((T::from_f64(x as f64) - center + half) * invscale);
                    row.push((x as usize, w));
                    total = total + w;
                }
                if total != T::zero() {
                    for t in row.iter_mut() {
                        t.1 = t.1 / total;
                    }
                }
                taps.push(&row);
            }
        }
        UpsampleMode::Nearest | UpsampleMode::NearestExact => {
            for j in 0..output {
                let i = nearest_source(mode, j, input, output, scale);
                taps.push(&[(clamp(i), T::one())]);
            }
        }
    }
    taps
}

/// Resamples the middle axis of `x` viewed as `[outer, len_in, inner]` to `[outer, len_out,
/// inner]`: each output row is the weighted sum of its taps' input rows, summed left to right.
fn resample_axis<T: FloatMath>(
    x: &[T],
    outer: usize,
    len_in: usize,
    inner: usize,
    taps: &Taps<T>,
) -> Vec<T> {
    let len_out = taps.start.len() - 1;
    let block = len_out * inner;
    let mut out = vec![T::zero(); outer * block];
    if block == 0 {
        return out;
    }
    let run = |o: usize, dst: &mut [T]| {
        let src = &x[o * len_in * inner..(o + 1) * len_in * inner];
        for j in 0..len_out {
            let row = &mut dst[j * inner..(j + 1) * inner];
            let (a, b) = (taps.start[j], taps.start[j + 1]);
            if a == b {
                continue;
            }
            let (i0, w0) = (taps.idx[a], taps.w[a]);
            let s0 = &src[i0 * inner..(i0 + 1) * inner];
            for (r, &v) in row.iter_mut().zip(s0) {
                *r = w0 * v;
            }
            for k in a + 1..b {
                let (ik, wk) = (taps.idx[k], taps.w[k]);
                let sk = &src[ik * inner..(ik + 1) * inner];
                for (r, &v) in row.iter_mut().zip(sk) {
                    *r = *r + wk * v;
                }
            }
        }
    };
    if crate::threads::should_split(out.len() >= 1 << 14) {
        out.par_chunks_mut(block)
            .enumerate()
            .for_each(|(o, dst)| run(o, dst));
    } else {
        out.chunks_mut(block)
            .enumerate()
            .for_each(|(o, dst)| run(o, dst));
    }
    out
}

/// Interpolates the trailing `k` dims of the contiguous `x` (`sizes`) to `out_sizes`.
fn interpolate<T: FloatMath>(
    x: Vec<T>,
    sizes: &[i64],
    out_sizes: &[i64],
    mode: UpsampleMode,
    align_corners: bool,
    scales: &[Option<f64>],
) -> Vec<T> {
    let nd = sizes.len();
    let k = out_sizes.len();
    let mut cur = x;
    let mut shape: Vec<i64> = sizes.to_vec();
    // Last axis first (ATen interpolates the innermost dimension innermost).
    for a in (0..k).rev() {
        let axis = nd - k + a;
        let (input, output) = (shape[axis], out_sizes[a]);
        let outer = shape[..axis].iter().product::<i64>() as usize;
        let inner = shape[axis + 1..].iter().product::<i64>() as usize;
        let taps = axis_taps::<T>(mode, input, output, align_corners, scales[a]);
        cur = resample_axis(&cur, outer, input as usize, inner, &taps);
        shape[axis] = output;
    }
    cur
}

impl Tensor {
    /// `upsample_*(self, output_size, [align_corners,] scales...)`: resamples the trailing
    /// `output_size.len()` (1 to 3) dims of an `[N, C, ...]` input. `scales` are the user's scale
    /// factors per dim (their reciprocal maps output to input positions), `None` for the size
    /// ratio.
    pub fn upsample(
        &self,
        mode: UpsampleMode,
        output_size: &[i64],
        align_corners: bool,
        scales: &[Option<f64>],
    ) -> Result<Tensor> {
        let k = output_size.len();
        let name = mode.op_name(k);
        if !(1..=3).contains(&k) {
            return Err(Error::runtime(format!(
                "{name}: expected 1 to 3 output sizes, got {k}"
            )));
        }
        let sz = self.sizes();
        if sz.len() != k + 2 {
            return Err(Error::runtime(format!(
                "It is expected input_size equals to {}, but got size {}",
                k + 2,
                sz.len()
            )));
        }
        if sz[1..].contains(&0) {
            return Err(Error::runtime(format!(
                "Non-empty {}D data tensor expected but got a tensor with sizes {:?}",
                k + 2,
                sz.as_slice()
            )));
        }
        if sz[2..].iter().chain(output_size).any(|&s| s <= 0) {
            let names = ["D", "H", "W"];
            let names = &names[3 - k..];
            let fmt = |v: &[i64]| {
                names
                    .iter()
                    .zip(v)
                    .map(|(n, s)| format!("{n}: {s}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(Error::runtime(format!(
                "Input and output sizes should be greater than 0, but got input ({}) output ({})",
                fmt(&sz[2..]),
                fmt(output_size)
            )));
        }
        let mut scales = scales.to_vec();
        scales.resize(k, None);
        let mut out_shape = sz[..2].to_vec();
        out_shape.extend_from_slice(output_size);
        let dt = self.dtype();
        if matches!(mode, UpsampleMode::Nearest | UpsampleMode::NearestExact) {
            // Selection is exact for every dtype: gather along each axis.
            let mut cur = self.clone();
            for a in 0..k {
                let (input, output) = (sz[2 + a], output_size[a]);
                let idx: Vec<i64> = (0..output)
                    .map(|j| nearest_source(mode, j, input, output, scales[a]).clamp(0, input - 1))
                    .collect();
                let idx = Tensor::from_vec(idx, &[output])?;
                cur = cur.index_select((2 + a) as i64, &idx)?;
            }
            return cur.contiguous();
        }
        if !dt.is_floating_point() {
            return Err(crate::cpu::dispatch::not_implemented(&name, dt));
        }
        if self.numel() == 0 {
            return Tensor::zeros(&out_shape, dt);
        }
        if dt == DType::Float64 {
            let x = self.contiguous_vec::<f64>()?;
            let v = interpolate(x, &sz, output_size, mode, align_corners, &scales);
            Tensor::from_vec(v, &out_shape)
        } else {
            let x = self.contiguous_vec::<f32>()?;
            let v = interpolate(x, &sz, output_size, mode, align_corners, &scales);
            Tensor::from_vec(v, &out_shape)?.to_dtype(dt, false)
        }
    }
}

/// The output size and per-dim scales of an `upsample_*.vec` call: exactly one of
/// `output_size` and `scale_factors`; a scale factor gives `floor(input * scale)` positions.
pub fn upsample_vec_sizes(
    input: &Tensor,
    k: usize,
    output_size: Option<&[i64]>,
    scale_factors: Option<&[f64]>,
) -> Result<(Vec<i64>, Vec<Option<f64>>)> {
    let sz = input.sizes();
    if sz.len() < k {
        return Err(Error::runtime(format!(
            "It is expected input_size equals to {}, but got size {}",
            k + 2,
            sz.len()
        )));
    }
    match (output_size, scale_factors) {
        (Some(o), None) => {
            if o.len() != k {
                return Err(Error::runtime(format!(
                    "It is expected output_size equals to {k}, but got size {}",
                    o.len()
                )));
            }
            Ok((o.to_vec(), vec![None; k]))
        }
        (None, Some(s)) => {
            if s.len() != k {
                return Err(Error::runtime(format!(
                    "It is expected scale_factors equals to {k}, but got size {}",
                    s.len()
                )));
            }
            let spatial = &sz[sz.len() - k..];
            let out = spatial
                .iter()
                .zip(s)
                .map(|(&i, &f)| (i as f64 * f) as i64)
                .collect();
            Ok((out, s.iter().map(|&f| Some(f)).collect()))
        }
        _ => Err(Error::runtime(
            "Must specify exactly one of output_size and scale_factors",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(shape: &[i64]) -> Tensor {
        let n: i64 = shape.iter().product();
        Tensor::from_vec((0..n).map(|v| v as f32).collect(), shape).unwrap()
    }

    #[test]
    fn nearest_rules() {
        let x = ramp(&[1, 1, 3]);
        // 3 -> 5: floor(j * 0.6); exact: floor((j + 0.5) * 0.6).
        let y = x
            .upsample(UpsampleMode::Nearest, &[5], false, &[None])
            .unwrap();
        assert_eq!(y.to_vec::<f32>(), vec![0., 0., 1., 1., 2.]);
        let y = x
            .upsample(UpsampleMode::NearestExact, &[5], false, &[None])
            .unwrap();
        assert_eq!(y.to_vec::<f32>(), vec![0., 0., 1., 2., 2.]);
        // An explicit scale maps through 1 / scale (1.7 -> output 5 of 3).
        let y = x
            .upsample(UpsampleMode::Nearest, &[5], false, &[Some(1.7)])
            .unwrap();
        assert_eq!(y.to_vec::<f32>(), vec![0., 0., 1., 1., 2.]);
    }

    #[test]
    fn linear_align_corners() {
        let x = ramp(&[1, 1, 2]);
        let y = x
            .upsample(UpsampleMode::Linear, &[4], false, &[None])
            .unwrap();
        assert_eq!(y.to_vec::<f32>(), vec![0., 0.25, 0.75, 1.]);
        let y = x
            .upsample(UpsampleMode::Linear, &[3], true, &[None])
            .unwrap();
        assert_eq!(y.to_vec::<f32>(), vec![0., 0.5, 1.]);
    }

    #[test]
    fn bad_sizes_are_errors() {
        let x = ramp(&[1, 1, 2]);
        assert!(x
            .upsample(UpsampleMode::Linear, &[0], false, &[None])
            .is_err());
        assert!(x
            .upsample(UpsampleMode::Linear, &[2, 2], false, &[None])
            .is_err());
        assert!(upsample_vec_sizes(&x, 1, None, None).is_err());
    }
}
