//! Volumetric and index-driven pooling: `max_pool3d` (with indices), `avg_pool3d`,
//! `adaptive_avg_pool3d`, `adaptive_max_pool3d`, `max_unpool2d/3d` and
//! `fractional_max_pool2d/3d`, with ATen's window rules. Inputs are `[N, C, *spatial]` or
//! unbatched `[C, *spatial]`; indices are flat positions within one input plane/volume.

use rayon::prelude::*;

use crate::cpu::num::{FloatMath, OpNum};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// ATen's `pooling_output_shape`.
fn pooled_size(input: i64, k: i64, pad: i64, stride: i64, dil: i64, ceil: bool) -> i64 {
    let num = input + 2 * pad - dil * (k - 1) - 1 + if ceil { stride - 1 } else { 0 };
    let mut out = num.div_euclid(stride) + 1;
    if ceil && (out - 1) * stride >= input + pad {
        out -= 1;
    }
    out
}

/// Expands a 3-d pooling parameter (one value or three); `default` fills an empty list.
fn triple(v: &[i64], name: &str, default: Option<[i64; 3]>) -> Result<[i64; 3]> {
    match v.len() {
        0 => default.ok_or_else(|| {
            Error::runtime(format!(
                "{name} must either be a single int, or a tuple of three ints"
            ))
        }),
        1 => Ok([v[0]; 3]),
        3 => Ok([v[0], v[1], v[2]]),
        _ => Err(Error::runtime(format!(
            "{name} must either be a single int, or a tuple of three ints"
        ))),
    }
}

/// Geometry of a 3-d sliding window over `[planes, d, h, w]` data.
#[derive(Clone, Copy)]
struct Geo3 {
    planes: usize,
    inp: [i64; 3],
    k: [i64; 3],
    s: [i64; 3],
    p: [i64; 3],
    dil: [i64; 3],
    out: [i64; 3],
}

impl Geo3 {
    fn in_vol(&self) -> usize {
        self.inp.iter().product::<i64>() as usize
    }

    fn out_vol(&self) -> usize {
        self.out.iter().product::<i64>() as usize
    }
}

/// Checks of `max_pool3d`/`avg_pool3d` (ATen's `pool3d_shape_check`).
#[allow(clippy::too_many_arguments)]
fn geometry3(
    x: &Tensor,
    name: &str,
    kernel: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil: bool,
) -> Result<(Geo3, Vec<i64>)> {
    let k = triple(kernel, &format!("{name}: kernel_size"), None)?;
    let s = triple(stride, &format!("{name}: stride"), Some(k))?;
    let p = triple(padding, &format!("{name}: padding"), None)?;
    let dil = triple(dilation, &format!("{name}: dilation"), None)?;
    if k.iter().any(|&v| v <= 0) {
        return Err(Error::runtime(format!(
            "kernel size should be greater than zero, but got kT: {} kH: {} kW: {}",
            k[0], k[1], k[2]
        )));
    }
    if s.iter().any(|&v| v <= 0) {
        return Err(Error::runtime(format!(
            "stride should be greater than zero, but got dT: {} dH: {} dW: {}",
            s[0], s[1], s[2]
        )));
    }
    if dil.iter().any(|&v| v <= 0) {
        return Err(Error::runtime(format!(
            "dilation should be greater than zero, but got dilationT: {} dilationH: {} dilationW: {}",
            dil[0], dil[1], dil[2]
        )));
    }
    let sz = x.sizes();
    let nd = x.dim();
    if (nd != 4 && nd != 5) || sz[nd - 4..].contains(&0) {
        return Err(Error::runtime(format!(
            "{name}: Expected 4D or 5D tensor for input, but got: {:?}",
            sz.as_slice()
        )));
    }
    for a in 0..3 {
        if p[a] < 0 || p[a] > k[a] / 2 {
            return Err(Error::runtime(format!(
                "pad should be smaller than or equal to half of kernel size, but got kT: {} kW: {} kH: {} padT: {} padW: {} padH: {}",
                k[0], k[2], k[1], p[0], p[2], p[1]
            )));
        }
    }
    let inp = [sz[nd - 3], sz[nd - 2], sz[nd - 1]];
    let mut out = [0i64; 3];
    for a in 0..3 {
        out[a] = pooled_size(inp[a], k[a], p[a], s[a], dil[a], ceil);
    }
    if out.iter().any(|&o| o < 1) {
        return Err(Error::runtime(format!(
            "Given input size: ({}x{}x{}x{}). Calculated output size: ({}x{}x{}x{}). Output size is too small",
            sz[nd - 4], inp[0], inp[1], inp[2], sz[nd - 4], out[0], out[1], out[2]
        )));
    }
    let mut shape = sz[..nd - 3].to_vec();
    shape.extend(out);
    let planes = sz[..nd - 3].iter().product::<i64>() as usize;
    Ok((
        Geo3 {
            planes,
            inp,
            k,
            s,
            p,
            dil,
            out,
        },
        shape,
    ))
}

/// Runs `f(input_plane, out_values, out_indices)` for every plane in parallel.
fn per_plane<T, F>(x: &[T], planes: usize, plane: usize, oplane: usize, f: F) -> (Vec<T>, Vec<i64>)
where
    T: Copy + Default + Send + Sync,
    F: Fn(usize, &[T], &mut [T], &mut [i64]) + Send + Sync,
{
    let mut vals = vec![T::default(); planes * oplane];
    let mut idx = vec![0i64; planes * oplane];
    if oplane > 0 && plane > 0 {
        vals.par_chunks_mut(oplane)
            .zip(idx.par_chunks_mut(oplane))
            .enumerate()
            .with_min_len(crate::threads::min_piece_for(x.len()))
            .for_each(|(i, (v, ix))| f(i, &x[i * plane..(i + 1) * plane], v, ix));
    }
    (vals, idx)
}

/// The max over a set of flat positions; NaN propagates (the last NaN seen wins, as ATen's
/// `val > max || isnan(val)` update) and an all `-inf` window reports its first position.
/// Returns `(value, index)`.
fn max_of<T: FloatMath>(src: &[T], positions: impl Iterator<Item = usize>) -> (T, i64) {
    let mut best = T::from_f64(f64::NEG_INFINITY);
    let mut bi: i64 = -1;
    for i in positions {
        let v = src[i];
        if bi < 0 {
            bi = i as i64;
        }
        if v > best || v.is_nan() {
            best = v;
            bi = i as i64;
        }
    }
    (best, bi)
}

macro_rules! float_dispatch {
    ($dt:expr, $T:ident => $body:expr) => {{
        match $dt {
            DType::Float64 => {
                type $T = f64;
                $body
            }
            _ => {
                type $T = f32;
                $body
            }
        }
    }};
}

/// Window taps along one axis: the in-bounds input positions output `o` reads.
fn taps(o: i64, k: i64, s: i64, p: i64, dil: i64, len: i64) -> Vec<i64> {
    (0..k)
        .map(|j| o * s - p + j * dil)
        .filter(|&v| v >= 0 && v < len)
        .collect()
}

/// `[start, end)` of adaptive window `i` of `out` over `len` inputs.
fn adaptive_range(i: i64, len: i64, out: i64) -> (i64, i64) {
    ((i * len) / out, ((i + 1) * len + out - 1) / out)
}

fn check_pool_dtype(x: &Tensor, name: &str, float_only: bool) -> Result<DType> {
    let dt = x.dtype();
    if dt == DType::Bool || (float_only && !dt.is_floating_point()) {
        return Err(crate::cpu::dispatch::not_implemented(name, dt));
    }
    Ok(dt)
}

impl Tensor {
    /// `max_pool3d_with_indices(kernel_size, stride, padding, dilation, ceil_mode)`.
    pub fn max_pool3d_with_indices(
        &self,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
    ) -> Result<(Tensor, Tensor)> {
        let (g, shape) = geometry3(
            self,
            "max_pool3d",
            kernel_size,
            stride,
            padding,
            dilation,
            ceil_mode,
        )?;
        let dt = check_pool_dtype(self, "max_pool3d", false)?;
        let (vals, idx) = float_dispatch!(if dt.is_floating_point() { dt } else { DType::Float64 }, T => {
            let x = self.contiguous_vec::<T>()?;
            let [id, ih, iw] = g.inp;
            let [od, oh, ow] = g.out;
            let (v, i) = per_plane(&x, g.planes, g.in_vol(), g.out_vol(), |_, src, out, ix| {
                for z in 0..od {
                    let tz = taps(z, g.k[0], g.s[0], g.p[0], g.dil[0], id);
                    for y in 0..oh {
                        let ty = taps(y, g.k[1], g.s[1], g.p[1], g.dil[1], ih);
                        for xx in 0..ow {
                            let tx = taps(xx, g.k[2], g.s[2], g.p[2], g.dil[2], iw);
                            let pos = tz.iter().flat_map(|&a| {
                                let ty = &ty;
                                let tx = &tx;
                                ty.iter().flat_map(move |&b| {
                                    tx.iter().map(move |&c| ((a * ih + b) * iw + c) as usize)
                                })
                            });
                            let (m, mi) = max_of(src, pos);
                            let o = ((z * oh + y) * ow + xx) as usize;
                            out[o] = m;
                            ix[o] = mi;
                        }
                    }
                }
            });
            (Tensor::from_vec(v, &shape)?, i)
        });
        Ok((vals.to_dtype(dt, false)?, Tensor::from_vec(idx, &shape)?))
    }

    /// `avg_pool3d(kernel_size, stride, padding, ceil_mode, count_include_pad,
    /// divisor_override)`.
    pub fn avg_pool3d(
        &self,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: Option<i64>,
    ) -> Result<Tensor> {
        if divisor_override == Some(0) {
            return Err(Error::runtime("divisor must be not zero"));
        }
        let (g, shape) = geometry3(
            self,
            "avg_pool3d",
            kernel_size,
            stride,
            padding,
            &[1],
            ceil_mode,
        )?;
        let dt = check_pool_dtype(self, "avg_pool3d", false)?;
        let integral = !dt.is_floating_point();
        let out = float_dispatch!(if integral { DType::Float64 } else { dt }, T => {
            let x = self.contiguous_vec::<T>()?;
            let [id, ih, iw] = g.inp;
            let [od, oh, ow] = g.out;
            let (v, _) = per_plane(&x, g.planes, g.in_vol(), g.out_vol(), |_, src, out, _| {
                // Window start/end along one axis: padded extent, then clipped to the input.
                let span = |o: i64, a: usize, len: i64| {
                    let s0 = o * g.s[a] - g.p[a];
                    let e0 = (s0 + g.k[a]).min(len + g.p[a]);
                    (s0, e0, s0.max(0), e0.min(len))
                };
                for z in 0..od {
                    let (zs0, ze0, zs, ze) = span(z, 0, id);
                    for y in 0..oh {
                        let (ys0, ye0, ys, ye) = span(y, 1, ih);
                        for xx in 0..ow {
                            let (xs0, xe0, xs, xe) = span(xx, 2, iw);
                            let mut sum = T::zero();
                            for a in zs..ze {
                                for b in ys..ye {
                                    for c in xs..xe {
                                        sum += src[((a * ih + b) * iw + c) as usize];
                                    }
                                }
                            }
                            let div = match divisor_override {
                                Some(d) => d,
                                None if count_include_pad => (ze0 - zs0) * (ye0 - ys0) * (xe0 - xs0),
                                None => (ze - zs) * (ye - ys) * (xe - xs),
                            };
                            let r = sum / T::from_f64(div as f64);
                            out[((z * oh + y) * ow + xx) as usize] =
                                if integral { T::from_f64(r.to_f64().trunc()) } else { r };
                        }
                    }
                }
            });
            Tensor::from_vec(v, &shape)?
        });
        out.to_dtype(dt, false)
    }

    /// Checks of the 3-d adaptive pools; returns `(planes, input dims, out shape)`.
    fn adaptive3_geometry(
        &self,
        name: &str,
        output_size: &[i64],
    ) -> Result<(usize, [i64; 3], Vec<i64>)> {
        if output_size.len() != 3 {
            return Err(Error::runtime(format!(
                "{name}(): internal error: output_size.size() must be 3"
            )));
        }
        let sz = self.sizes();
        let nd = self.dim();
        if nd != 4 && nd != 5 {
            return Err(Error::runtime(format!(
                "{name}(): Expected 4D or 5D tensor, but got {:?}",
                sz.as_slice()
            )));
        }
        for (i, &v) in sz.iter().enumerate().skip(1) {
            if v == 0 {
                return Err(Error::runtime(format!(
                    "{name}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes {:?} with dimension {i} being empty",
                    sz.as_slice()
                )));
            }
        }
        if output_size.iter().any(|&o| o < 0) {
            return Err(Error::runtime(format!(
                "{name}(): elements of output_size must be greater than or equal to 0 but received {output_size:?}"
            )));
        }
        let mut shape = sz[..nd - 3].to_vec();
        shape.extend_from_slice(output_size);
        let planes = sz[..nd - 3].iter().product::<i64>() as usize;
        Ok((planes, [sz[nd - 3], sz[nd - 2], sz[nd - 1]], shape))
    }

    /// `adaptive_avg_pool3d(output_size)`.
    pub fn adaptive_avg_pool3d(&self, output_size: &[i64]) -> Result<Tensor> {
        let (planes, [d, h, w], shape) =
            self.adaptive3_geometry("adaptive_avg_pool3d", output_size)?;
        let dt = check_pool_dtype(self, "adaptive_avg_pool3d_cpu", true)?;
        let [od, oh, ow] = [output_size[0], output_size[1], output_size[2]];
        let out = float_dispatch!(dt, T => {
            let x = self.contiguous_vec::<T>()?;
            let (v, _) = per_plane(&x, planes, (d * h * w) as usize, (od * oh * ow) as usize, |_, src, out, _| {
                for z in 0..od {
                    let (zs, ze) = adaptive_range(z, d, od);
                    for y in 0..oh {
                        let (ys, ye) = adaptive_range(y, h, oh);
                        for xx in 0..ow {
                            let (xs, xe) = adaptive_range(xx, w, ow);
                            let mut sum = T::zero();
                            for a in zs..ze {
                                for b in ys..ye {
                                    for c in xs..xe {
                                        sum += src[((a * h + b) * w + c) as usize];
                                    }
                                }
                            }
                            let n = (ze - zs) * (ye - ys) * (xe - xs);
                            out[((z * oh + y) * ow + xx) as usize] = sum / T::from_f64(n as f64);
                        }
                    }
                }
            });
            Tensor::from_vec(v, &shape)?
        });
        out.to_dtype(dt, false)
    }

    /// `adaptive_max_pool3d(output_size)`: maxima and their flat volume positions.
    pub fn adaptive_max_pool3d(&self, output_size: &[i64]) -> Result<(Tensor, Tensor)> {
        let (planes, [d, h, w], shape) =
            self.adaptive3_geometry("adaptive_max_pool3d", output_size)?;
        let dt = check_pool_dtype(self, "adaptive_max_pool3d_cpu", true)?;
        let [od, oh, ow] = [output_size[0], output_size[1], output_size[2]];
        let (vals, idx) = float_dispatch!(dt, T => {
            let x = self.contiguous_vec::<T>()?;
            let (v, i) = per_plane(&x, planes, (d * h * w) as usize, (od * oh * ow) as usize, |_, src, out, ix| {
                for z in 0..od {
                    let (zs, ze) = adaptive_range(z, d, od);
                    for y in 0..oh {
                        let (ys, ye) = adaptive_range(y, h, oh);
                        for xx in 0..ow {
                            let (xs, xe) = adaptive_range(xx, w, ow);
                            let pos = (zs..ze).flat_map(|a| {
                                (ys..ye).flat_map(move |b| {
                                    (xs..xe).map(move |c| ((a * h + b) * w + c) as usize)
                                })
                            });
                            let (m, mi) = max_of(src, pos);
                            let o = ((z * oh + y) * ow + xx) as usize;
                            out[o] = m;
                            ix[o] = mi;
                        }
                    }
                }
            });
            (Tensor::from_vec(v, &shape)?, i)
        });
        Ok((vals.to_dtype(dt, false)?, Tensor::from_vec(idx, &shape)?))
    }

    /// `max_unpool2d(indices, output_size)` / `max_unpool3d(...)`: scatters each value to its
    /// flat position in a zeroed plane/volume of `output_size` (2 or 3 dims).
    pub fn max_unpool(&self, indices: &Tensor, output_size: &[i64]) -> Result<Tensor> {
        let k = output_size.len();
        let name = format!("max_unpool{k}d");
        if k != 2 && k != 3 {
            return Err(Error::runtime(format!(
                "{name}: output_size must have 2 or 3 elements, got {k}"
            )));
        }
        if indices.dtype() != DType::Int64 {
            return Err(Error::runtime(format!(
                "elements in indices should be type int64 but got: {}",
                indices.dtype().scalar_type_name()
            )));
        }
        let nd = self.dim();
        if nd != k + 1 && nd != k + 2 {
            return Err(Error::runtime(format!(
                "Input to {name} should be a {}d or {}d Tensor, but got a tensor with {nd} dimensions.",
                k + 1,
                k + 2
            )));
        }
        if self.sizes() != indices.sizes() {
            return Err(Error::runtime(format!(
                "Expected shape of indices to be same as that of the input tensor ({:?}) but got indices tensor with shape: {:?}",
                self.sizes().as_slice(),
                indices.sizes().as_slice()
            )));
        }
        let sz = self.sizes();
        for (i, &v) in sz.iter().enumerate().skip(nd - k - 1) {
            if v <= 0 {
                return Err(Error::runtime(format!(
                    "{name}(): Expected input to have non-zero size for non-batch dimensions, but got {:?} with dimension {i} being empty.",
                    sz.as_slice()
                )));
            }
        }
        let planes = sz[..nd - k].iter().product::<i64>() as usize;
        let in_plane = sz[nd - k..].iter().product::<i64>() as usize;
        let out_plane = output_size.iter().product::<i64>();
        let mut shape = sz[..nd - k].to_vec();
        shape.extend_from_slice(output_size);
        let dt = self.dtype();
        let work = if dt.is_floating_point() {
            dt
        } else {
            DType::Float64
        };
        let idx = indices.contiguous_vec::<i64>()?;
        if let Some(&bad) = idx.iter().find(|&&i| i < 0 || i >= out_plane) {
            let dims = output_size
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join("x");
            return Err(Error::runtime(format!(
                "Found an invalid max index: {bad} (output volumes are of size {dims}"
            )));
        }
        let out = float_dispatch!(work, T => {
            let x = self.contiguous_vec::<T>()?;
            let mut out = vec![T::zero(); planes * out_plane as usize];
            for p in 0..planes {
                let dst = &mut out[p * out_plane as usize..(p + 1) * out_plane as usize];
                for j in 0..in_plane {
                    dst[idx[p * in_plane + j] as usize] = x[p * in_plane + j];
                }
            }
            Tensor::from_vec(out, &shape)?
        });
        out.to_dtype(dt, false)
    }

    /// `fractional_max_pool2d/3d(kernel_size, output_size, random_samples)`: max pooling over
    /// pseudo-random windows whose starts come from `random_samples` (`[N, C, k]`, in `[0, 1)`;
    /// sample 0 drives the last spatial dim for 2-d, the first for 3-d, as ATen).
    pub fn fractional_max_pool(
        &self,
        kernel_size: &[i64],
        output_size: &[i64],
        random_samples: &Tensor,
    ) -> Result<(Tensor, Tensor)> {
        let k = output_size.len();
        let name = format!("fractional_max_pool{k}d");
        if (k != 2 && k != 3) || kernel_size.len() != k {
            return Err(Error::runtime(format!(
                "{name}: kernel_size and output_size must have {k} elements"
            )));
        }
        let nd = self.dim();
        if nd != k + 1 && nd != k + 2 {
            return Err(Error::runtime(format!(
                "{name}(): Expected {}D or {}D tensor, but got: {:?}",
                k + 1,
                k + 2,
                self.sizes().as_slice()
            )));
        }
        let sz = self.sizes();
        for (i, &v) in sz.iter().enumerate().skip(nd - k - 1) {
            if v == 0 {
                return Err(Error::runtime(format!(
                    "{name}(): Expected input to have non-zero size for non-batch dimensions, but got {:?} with dimension {i} being empty.",
                    sz.as_slice()
                )));
            }
        }
        let spatial = &sz[nd - k..];
        for a in 0..k {
            if output_size[a] + kernel_size[a] - 1 > spatial[a] {
                let names = if k == 2 {
                    ["height", "width", ""]
                } else {
                    ["time", "height", "width"]
                };
                return Err(Error::runtime(format!(
                    "{name}_out(): pool {} {} too large relative to input {} {}",
                    names[a], kernel_size[a], names[a], spatial[a]
                )));
            }
        }
        let batch = if nd == k + 2 { sz[0] } else { 1 };
        let c = sz[nd - k - 1];
        let rs = random_samples.sizes();
        if random_samples.dim() != 3 || rs[0] < batch || rs[1] < c || rs[2] != k as i64 {
            return Err(Error::runtime(format!(
                "{name}(): expected _random_samples of shape [{batch}, {c}, {k}], but got {:?}",
                rs.as_slice()
            )));
        }
        let dt = check_pool_dtype(self, &format!("{name}_out_frame"), true)?;
        let planes = (batch * c) as usize;
        let in_plane = spatial.iter().product::<i64>() as usize;
        let out_plane = output_size.iter().product::<i64>() as usize;
        let mut shape = sz[..nd - k].to_vec();
        shape.extend_from_slice(output_size);
        let rsn = random_samples.narrow(0, 0, batch)?.narrow(1, 0, c)?;
        let (vals, idx) = float_dispatch!(dt, T => {
            let x = self.contiguous_vec::<T>()?;
            let samples = rsn.contiguous_vec::<T>()?;
            // ATen's generate_intervals.
            let intervals = |sample: T, input: i64, output: i64, pool: i64| -> Vec<i64> {
                let mut seq = vec![0i64; output as usize];
                if output > 1 {
                    let alpha = T::from_f64((input - pool) as f64) / T::from_f64((output - 1) as f64);
                    for (i, slot) in seq.iter_mut().take((output - 1) as usize).enumerate() {
                        let a = ((T::from_f64(i as f64) + sample) * alpha).to_f64() as i32 as i64;
                        let b = (sample * alpha).to_f64() as i32 as i64;
                        *slot = a - b;
                    }
                }
                if output > 0 {
                    seq[output as usize - 1] = input - pool;
                }
                seq
            };
            let (v, i) = per_plane(&x, planes, in_plane, out_plane, |p, src, out, ix| {
                let smp = &samples[p * k..(p + 1) * k];
                // Sample index per spatial axis.
                let order: Vec<usize> = if k == 2 { vec![1, 0] } else { vec![0, 1, 2] };
                let seqs: Vec<Vec<i64>> = (0..k)
                    .map(|a| intervals(smp[order[a]], spatial[a], output_size[a], kernel_size[a]))
                    .collect();
                let strides: Vec<i64> = (0..k).map(|a| spatial[a + 1..].iter().product()).collect();
                for o in 0..out_plane {
                    let mut rem = o as i64;
                    let mut start = vec![0i64; k];
                    for a in (0..k).rev() {
                        start[a] = seqs[a][(rem % output_size[a]) as usize];
                        rem /= output_size[a];
                    }
                    let window: usize = kernel_size.iter().product::<i64>() as usize;
                    let pos = (0..window).map(|wi| {
                        let mut r = wi as i64;
                        let mut flat = 0i64;
                        for a in (0..k).rev() {
                            flat += (start[a] + r % kernel_size[a]) * strides[a];
                            r /= kernel_size[a];
                        }
                        flat as usize
                    });
                    let (m, mi) = max_of(src, pos);
                    out[o] = m;
                    ix[o] = mi;
                }
            });
            (Tensor::from_vec(v, &shape)?, i)
        });
        Ok((vals.to_dtype(dt, false)?, Tensor::from_vec(idx, &shape)?))
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
    fn max_pool3d_and_unpool_round_trip() {
        let x = ramp(&[1, 1, 2, 2, 2]);
        let (v, i) = x
            .max_pool3d_with_indices(&[2], &[], &[0], &[1], false)
            .unwrap();
        assert_eq!(v.to_vec::<f32>(), vec![7.]);
        assert_eq!(i.to_vec::<i64>(), vec![7]);
        let u = v.max_unpool(&i, &[2, 2, 2]).unwrap();
        assert_eq!(u.to_vec::<f32>(), vec![0., 0., 0., 0., 0., 0., 0., 7.]);
        let bad = Tensor::from_vec(vec![9i64], &[1, 1, 1, 1, 1]).unwrap();
        assert!(v.max_unpool(&bad, &[2, 2, 2]).is_err());
    }

    #[test]
    fn avg_pool3d_padding_divisors() {
        let x = ramp(&[1, 1, 1, 1, 2]);
        let y = x
            .avg_pool3d(&[1, 1, 2], &[1, 1, 1], &[0, 0, 1], false, true, None)
            .unwrap();
        assert_eq!(y.to_vec::<f32>(), vec![0., 0.5, 0.5]);
        let y = x
            .avg_pool3d(&[1, 1, 2], &[1, 1, 1], &[0, 0, 1], false, false, None)
            .unwrap();
        assert_eq!(y.to_vec::<f32>(), vec![0., 0.5, 1.]);
    }

    #[test]
    fn adaptive_pools_3d() {
        let x = ramp(&[1, 2, 2, 2]);
        let y = x.adaptive_avg_pool3d(&[1, 1, 1]).unwrap();
        assert_eq!(y.to_vec::<f32>(), vec![3.5]);
        let (m, i) = x.adaptive_max_pool3d(&[1, 1, 2]).unwrap();
        assert_eq!(m.to_vec::<f32>(), vec![6., 7.]);
        assert_eq!(i.to_vec::<i64>(), vec![6, 7]);
    }
}
