//! Pooling: `max_pool1d/2d` (with indices), `avg_pool1d/2d`, `adaptive_avg_pool1d/2d` and
//! `adaptive_max_pool2d`, with ATen's output-size rules (`ceil_mode`, padding, dilation) and
//! messages. 1-d pooling runs the 2-d kernels on `[N, C, 1, L]`.

use rayon::prelude::*;

use crate::cpu::contiguous::{filled_tensor, with_slice};
use crate::cpu::num::FloatMath;
use crate::cpu::simd::simd_dispatch;
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

/// Expands a pooling parameter (one value or one per spatial dimension).
fn pair(v: &[i64], name: &str, default: Option<[i64; 2]>) -> Result<[i64; 2]> {
    match v.len() {
        0 => default.ok_or_else(|| {
            Error::runtime(format!(
                "{name} must either be a single int, or a tuple of two ints"
            ))
        }),
        1 => Ok([v[0], v[0]]),
        2 => Ok([v[0], v[1]]),
        _ => Err(Error::runtime(format!(
            "{name} must either be a single int, or a tuple of two ints"
        ))),
    }
}

/// Pooling geometry after checks, on `[planes, h, w]` data.
struct Pool {
    planes: usize,
    h: i64,
    w: i64,
    k: [i64; 2],
    s: [i64; 2],
    p: [i64; 2],
    d: [i64; 2],
    oh: i64,
    ow: i64,
}

/// Per output index along one axis, the input range `start..end` its window reads ([`taps`]).
type AxisTaps = Vec<(usize, usize)>;

impl Pool {
    /// The input rows and columns ([`taps`]) of every output row and column.
    fn window_taps(&self) -> (AxisTaps, AxisTaps) {
        let along = |out: i64, ax: usize, len: i64| -> AxisTaps {
            (0..out)
                .map(|o| taps(o, self.k[ax], self.s[ax], self.p[ax], self.d[ax], len))
                .collect()
        };
        (along(self.oh, 0, self.h), along(self.ow, 1, self.w))
    }
}

/// Shared checks of max/avg pooling (ATen's `pool2d_shape_check`); returns the geometry and
/// the output shape.
#[allow(clippy::too_many_arguments)]
fn geometry(
    input: &Tensor,
    kernel: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil: bool,
) -> Result<(Pool, Vec<i64>)> {
    let k = pair(kernel, "max_pool2d: kernel_size", None)?;
    let s = pair(stride, "max_pool2d: stride", Some(k))?;
    let p = pair(padding, "max_pool2d: padding", None)?;
    let d = pair(dilation, "max_pool2d: dilation", None)?;
    if s[0] == 0 || s[1] == 0 {
        return Err(Error::runtime("stride should not be zero"));
    }
    if k[0] <= 0 || k[1] <= 0 {
        return Err(Error::runtime(format!(
            "kernel size should be greater than zero, but got kH: {} kW: {}",
            k[0], k[1]
        )));
    }
    if s[0] < 0 || s[1] < 0 {
        return Err(Error::runtime(format!(
            "stride should be greater than zero, but got dH: {} dW: {}",
            s[0], s[1]
        )));
    }
    if d[0] <= 0 || d[1] <= 0 {
        return Err(Error::runtime(format!(
            "dilation should be greater than zero, but got dilationH: {} dilationW: {}",
            d[0], d[1]
        )));
    }
    let sz = input.sizes();
    if (input.dim() != 3 && input.dim() != 4) || sz[input.dim() - 3..].contains(&0) {
        return Err(Error::runtime(
            "non-empty 3D or 4D (batch mode) tensor expected for input",
        ));
    }
    for a in 0..2 {
        if p[a] < 0 || p[a] > ((k[a] - 1) * d[a] + 1) / 2 {
            return Err(Error::runtime(format!(
                "pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and dilation={}",
                p[a], k[a], d[a]
            )));
        }
    }
    let nd = input.dim();
    let (c, h, w) = (sz[nd - 3], sz[nd - 2], sz[nd - 1]);
    let oh = pooled_size(h, k[0], p[0], s[0], d[0], ceil);
    let ow = pooled_size(w, k[1], p[1], s[1], d[1], ceil);
    if oh < 1 || ow < 1 {
        return Err(Error::runtime(format!(
            "Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). Output size is too small"
        )));
    }
    let mut shape: Vec<i64> = sz[..nd - 2].to_vec();
    shape.extend([oh, ow]);
    let planes = sz[..nd - 2].iter().product::<i64>() as usize;
    Ok((
        Pool {
            planes,
            h,
            w,
            k,
            s,
            p,
            d,
            oh,
            ow,
        },
        shape,
    ))
}

/// Runs `f(plane_in, out_values, out_indices)` over every `[h, w]` plane in parallel, on data
/// converted to `T`.
fn per_plane<T, F>(x: &[T], planes: usize, plane: usize, oplane: usize, f: F) -> (Vec<T>, Vec<i64>)
where
    T: Copy + Default + Send + Sync,
    F: Fn(&[T], &mut [T], &mut [i64]) + Send + Sync,
{
    let mut vals = vec![T::default(); planes * oplane];
    let mut idx = vec![0i64; planes * oplane];
    if oplane > 0 {
        vals.par_chunks_mut(oplane)
            .zip(idx.par_chunks_mut(oplane))
            .enumerate()
            .with_min_len(crate::threads::min_piece_for(x.len()))
            .for_each(|(i, (v, ix))| f(&x[i * plane..(i + 1) * plane], v, ix));
    }
    (vals, idx)
}

/// The input positions `start..end` (stepping by `dil`) that output `o` of one axis reads,
/// clipped to `0..len`: the first in-bounds tap and one past the last.
fn taps(o: i64, k: i64, s: i64, p: i64, dil: i64, len: i64) -> (usize, usize) {
    let mut start = o * s - p;
    let end = (start + (k - 1) * dil + 1).min(len);
    while start < 0 {
        start += dil;
    }
    (start as usize, end.max(start) as usize)
}

/// Max over each window; NaN wins, ties keep the first position (ATen's order). Indices are
/// only produced when `with_idx` (otherwise the second vector is empty).
fn max_kernel<T: FloatMath + Default + Send + Sync>(
    x: &[T],
    g: &Pool,
    with_idx: bool,
) -> (Vec<T>, Vec<i64>) {
    let plane = (g.h * g.w) as usize;
    let oplane = (g.oh * g.ow) as usize;
    let w = g.w as usize;
    let (dh, dw) = (g.d[0] as usize, g.d[1] as usize);
    let (rows, cols) = g.window_taps();
    let lowest = T::from_f64(f64::NEG_INFINITY);
    // The maximum without branches on the data (random data defeats branch prediction), then
    // the first position holding it; windows with a NaN take the exact scan.
    let window = |src: &[T], (hs, he): (usize, usize), (ws, we): (usize, usize), idx: bool| {
        let mut best = lowest;
        let mut nan = false;
        let mut y = hs;
        while y < he {
            let mut xx = y * w + ws;
            let end = y * w + we;
            while xx < end {
                let v = src[xx];
                nan |= v.is_nan();
                best = if v > best { v } else { best };
                xx += dw;
            }
            y += dh;
        }
        let first = hs * w + ws;
        if !nan && !idx {
            return (best, first);
        }
        let mut y = hs;
        while y < he {
            let mut xx = y * w + ws;
            let end = y * w + we;
            while xx < end {
                let v = src[xx];
                if if nan { v.is_nan() } else { v == best } {
                    return (v, xx);
                }
                xx += dw;
            }
            y += dh;
        }
        (best, first)
    };
    let planes = g.planes;
    let mut vals = vec![T::default(); planes * oplane];
    if oplane == 0 {
        return (vals, Vec::new());
    }
    if with_idx {
        let mut idx = vec![0i64; planes * oplane];
        vals.par_chunks_mut(oplane)
            .zip(idx.par_chunks_mut(oplane))
            .enumerate()
            .with_min_len(crate::threads::min_piece_for(x.len()))
            .for_each(|(i, (out, ix))| {
                let src = &x[i * plane..(i + 1) * plane];
                for (oy, &r) in rows.iter().enumerate() {
                    for (ox, &c) in cols.iter().enumerate() {
                        let (v, b) = window(src, r, c, true);
                        out[oy * cols.len() + ox] = v;
                        ix[oy * cols.len() + ox] = b as i64;
                    }
                }
            });
        (vals, idx)
    } else {
        vals.par_chunks_mut(oplane)
            .enumerate()
            .with_min_len(crate::threads::min_piece_for(x.len()))
            .for_each(|(i, out)| {
                let src = &x[i * plane..(i + 1) * plane];
                for (oy, &r) in rows.iter().enumerate() {
                    for (ox, &c) in cols.iter().enumerate() {
                        out[oy * cols.len() + ox] = window(src, r, c, false).0;
                    }
                }
            });
        (vals, Vec::new())
    }
}

/// `a` unless `b` is larger or NaN: the running maximum of a window scanned in order (NaN wins,
/// a tie keeps the earlier value, so `-0.0` before `0.0` stays `-0.0`), without branches.
#[inline(always)]
fn max_step<T: FloatMath>(a: T, b: T) -> T {
    if b > a || b.is_nan() {
        b
    } else {
        a
    }
}

/// Whether `g` is the common 2 x 2, stride 2 window without padding or dilation (every window
/// whole), which [`max_pairs_into`] runs.
fn is_pairwise(g: &Pool) -> bool {
    g.k == [2, 2]
        && g.s == [2, 2]
        && g.p == [0, 0]
        && g.d == [1, 1]
        && 2 * g.oh <= g.h
        && 2 * g.ow <= g.w
}

/// The maxima of every 2 x 2 window ([`is_pairwise`] geometry, no indices) written into `out`
/// (`planes * oh * ow`): a branch-free loop over row pairs, planes in parallel. The generic
/// window scan with the input copied into a fresh vector and a second output vector was a
/// third of a small CNN's time (most of it page faults).
fn max_pairs_into<T: FloatMath + Send + Sync>(x: &[T], g: &Pool, out: &mut [T]) {
    let plane = (g.h * g.w) as usize;
    let oplane = (g.oh * g.ow) as usize;
    if oplane == 0 || g.planes == 0 {
        return;
    }
    let (w, ow) = (g.w as usize, g.ow as usize);
    // Planes per task: at least ~16K outputs, so small layers do not pay a fork per plane.
    let per = (16384 / oplane).max(1);
    out.par_chunks_mut(oplane * per)
        .enumerate()
        .with_min_len(crate::threads::min_piece_for(x.len()))
        .for_each(|(t, outs)| {
            for (q, o) in outs.chunks_exact_mut(oplane).enumerate() {
                let i = t * per + q;
                let src = &x[i * plane..(i + 1) * plane];
                for (oy, orow) in o.chunks_exact_mut(ow).enumerate() {
                    let r0 = &src[2 * oy * w..2 * oy * w + 2 * ow];
                    let r1 = &src[(2 * oy + 1) * w..(2 * oy + 1) * w + 2 * ow];
                    for ((v, a), b) in orow
                        .iter_mut()
                        .zip(r0.chunks_exact(2))
                        .zip(r1.chunks_exact(2))
                    {
                        *v = max_step(max_step(max_step(a[0], a[1]), b[0]), b[1]);
                    }
                }
            }
        });
}

/// The maxima of every window (any geometry, no indices) written into `out`
/// (`planes * oh * ow`), separably: each input row's window maxima along the width into a
/// `[h, ow]` buffer, then those rows' maxima down the height. Both passes run over whole
/// rows with [`max_step`], so interior windows vectorize (the per-window scan of
/// [`max_kernel`], with its input copy, was 4% of ResNet-18: its 3 x 3 stride-2 stem pool).
/// The value matches the row-major scan: the first row holding the maximum keeps the first
/// column's value in it, and NaN wins.
fn max_separable_into<T: FloatMath + Send + Sync>(x: &[T], g: &Pool, out: &mut [T]) {
    let plane = (g.h * g.w) as usize;
    let oplane = (g.oh * g.ow) as usize;
    if oplane == 0 || g.planes == 0 {
        return;
    }
    let (h, w, ow) = (g.h as usize, g.w as usize, g.ow as usize);
    let (rows, cols) = g.window_taps();
    // Outputs `lo..hi` along the width have their whole window inside the row.
    let (s, p, d, k) = (g.s[1], g.p[1], g.d[1], g.k[1]);
    let lo = ((p + s - 1) / s).min(g.ow) as usize;
    let hi = if w as i64 + p - (k - 1) * d - 1 < 0 {
        0
    } else {
        ((w as i64 + p - (k - 1) * d - 1) / s + 1).min(g.ow) as usize
    }
    .max(lo);
    let (su, du, ku, pu) = (s as usize, d as usize, k as usize, p as usize);
    // Window maxima at every start position of a row that holds a whole window.
    let starts = (w + 1).saturating_sub((ku - 1) * du + 1);
    let dh = g.d[0] as usize;
    let lowest = T::from_f64(f64::NEG_INFINITY);
    let per = (16384 / oplane).max(1);
    out.par_chunks_mut(oplane * per)
        .enumerate()
        .with_min_len(crate::threads::min_piece_for(x.len()))
        .for_each(|(t, outs)| {
            let mut hm = vec![lowest; h * ow];
            let mut wm = vec![lowest; starts];
            let mut taps_of: Vec<&[T]> = Vec::new();
            for (q, o) in outs.chunks_exact_mut(oplane).enumerate() {
                let src = &x[(t * per + q) * plane..(t * per + q + 1) * plane];
                for (row, hrow) in src.chunks_exact(w).zip(hm.chunks_exact_mut(ow)) {
                    for ox in (0..lo).chain(hi..ow) {
                        let (ws, we) = cols[ox];
                        hrow[ox] = (ws..we)
                            .step_by(du)
                            .fold(lowest, |m, c| max_step(m, row[c]));
                    }
                    if lo < hi {
                        taps_of.clear();
                        taps_of.extend((0..ku).map(|tap| &row[tap * du..]));
                        max_of_simd(&mut wm, &taps_of);
                        let first = lo * su - pu;
                        if su == 1 {
                            hrow[lo..hi].copy_from_slice(&wm[first..first + hi - lo]);
                        } else {
                            for (i, v) in hrow[lo..hi].iter_mut().enumerate() {
                                *v = wm[first + i * su];
                            }
                        }
                    }
                }
                let mut rows_of: Vec<&[T]> = Vec::new();
                for (orow, &(hs, he)) in o.chunks_exact_mut(ow).zip(&rows) {
                    rows_of.clear();
                    rows_of.extend((hs..he).step_by(dh).map(|y| &hm[y * ow..(y + 1) * ow]));
                    if rows_of.is_empty() {
                        orow.fill(lowest);
                    } else {
                        max_of_simd(orow, &rows_of);
                    }
                }
            }
        });
}

simd_dispatch!(fn max_of_simd<T: FloatMath>(out: &mut [T], srcs: &[&[T]]) = max_of;);

/// `out[j]` = the [`max_step`] scan of `srcs[0][j], srcs[1][j], ...` (each source at least as
/// long as `out`, `srcs` not empty). Blocks of outputs stay in registers across the sources:
/// written as one pass per source, the select became a masked store whose reload by the next
/// pass stalled (about one element per cycle). A row's tail is one more block ending at its
/// last element, overlapping the one before (outputs are recomputed, not accumulated).
#[inline(always)]
fn max_of<T: FloatMath>(out: &mut [T], srcs: &[&[T]]) {
    let n = out.len();
    if n >= 64 {
        max_blocks::<T, 64>(out, srcs);
    } else if n >= 16 {
        max_blocks::<T, 16>(out, srcs);
    } else {
        for (j, o) in out.iter_mut().enumerate() {
            *o = srcs[1..]
                .iter()
                .fold(srcs[0][j], |m, src| max_step(m, src[j]));
        }
    }
}

/// [`max_of`] in blocks of `B` (`out.len() >= B`).
#[inline(always)]
fn max_blocks<T: FloatMath, const B: usize>(out: &mut [T], srcs: &[&[T]]) {
    let n = out.len();
    let last = n - B;
    let mut j0 = 0;
    loop {
        let mut acc: [T; B] = srcs[0][j0..j0 + B].try_into().expect("block of B");
        for src in &srcs[1..] {
            for (a, &v) in acc.iter_mut().zip(&src[j0..j0 + B]) {
                *a = max_step(*a, v);
            }
        }
        out[j0..j0 + B].copy_from_slice(&acc);
        if j0 == last {
            break;
        }
        j0 = (j0 + B).min(last);
    }
}

macro_rules! by_dtype {
    ($x:expr, $dt:expr, $T:ident => $body:expr) => {{
        match $dt {
            DType::Float32 => {
                type $T = f32;
                $body
            }
            DType::Float64 => {
                type $T = f64;
                $body
            }
            _ => {
                type $T = f64;
                $body
            }
        }
    }};
}

impl Tensor {
    /// `max_pool2d_with_indices(kernel_size, stride, padding, dilation, ceil_mode)`: the maxima
    /// and their flat positions within each input plane. An empty `stride` means `kernel_size`.
    pub fn max_pool2d_with_indices(
        &self,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
    ) -> Result<(Tensor, Tensor)> {
        let (g, shape) = geometry(self, kernel_size, stride, padding, dilation, ceil_mode)?;
        let (vals, idx) = self.max_pool2d_values(&g, &shape, true)?;
        Ok((vals, Tensor::from_vec(idx, &shape)?))
    }

    /// The max-pooling kernel on this tensor's dtype (through f64 for non-float types), with the
    /// flat indices when `with_idx`.
    fn max_pool2d_values(
        &self,
        g: &Pool,
        shape: &[i64],
        with_idx: bool,
    ) -> Result<(Tensor, Vec<i64>)> {
        let dt = self.dtype();
        if dt == DType::Bool {
            return Err(crate::cpu::dispatch::not_implemented("max_pool2d", dt));
        }
        let (vals, idx) = by_dtype!(self, dt, T => {
            let x = self.contiguous_vec::<T>()?;
            let (v, i) = max_kernel::<T>(&x, g, with_idx);
            (Tensor::from_vec(v, shape)?, i)
        });
        Ok((vals.to_dtype(dt, false)?, idx))
    }

    /// `max_pool2d(kernel_size, stride, padding, dilation, ceil_mode)`.
    pub fn max_pool2d(
        &self,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
    ) -> Result<Tensor> {
        let (g, shape) = geometry(self, kernel_size, stride, padding, dilation, ceil_mode)?;
        let dt = self.dtype();
        if is_pairwise(&g) && matches!(dt, DType::Float32 | DType::Float64) {
            // Read in place and written straight into the result.
            let x = self.contiguous()?;
            return by_dtype!(self, dt, T => {
                with_slice::<T, _>(&x, |xs| {
                    filled_tensor::<T>(&shape, |out| max_pairs_into(xs, &g, out))
                })?
            });
        }
        if matches!(dt, DType::Float32 | DType::Float64) {
            let x = self.contiguous()?;
            return by_dtype!(self, dt, T => {
                with_slice::<T, _>(&x, |xs| {
                    filled_tensor::<T>(&shape, |out| max_separable_into(xs, &g, out))
                })?
            });
        }
        Ok(self.max_pool2d_values(&g, &shape, false)?.0)
    }

    /// `max_pool1d_with_indices(kernel_size, stride, padding, dilation, ceil_mode)` on `[N, C, L]`
    /// or `[C, L]`.
    pub fn max_pool1d_with_indices(
        &self,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
    ) -> Result<(Tensor, Tensor)> {
        if self.dim() < 2 {
            return Err(Error::runtime(format!(
                "Expected 2 to 3 dimensions, but got {}-dimensional tensor for argument #1 'self' (while checking arguments for max_pool1d)",
                self.dim()
            )));
        }
        self.max_pool1d_impl(kernel_size, stride, padding, dilation, ceil_mode)
    }

    fn max_pool1d_impl(
        &self,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
    ) -> Result<(Tensor, Tensor)> {
        if self.dim() != 2 && self.dim() != 3 {
            return Err(Error::runtime(format!(
                "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:{:?}",
                self.sizes().as_slice()
            )));
        }
        let one = |v: &[i64], d: i64| -> Vec<i64> {
            if v.is_empty() {
                vec![]
            } else {
                vec![d, v[0]]
            }
        };
        let (v, i) = self.unsqueeze(-2)?.max_pool2d_with_indices(
            &one(kernel_size, 1),
            &one(stride, 1),
            &one(padding, 0),
            &one(dilation, 1),
            ceil_mode,
        )?;
        Ok((v.squeeze_dim(-2)?, i.squeeze_dim(-2)?))
    }

    /// `max_pool1d(kernel_size, stride, padding, dilation, ceil_mode)`.
    pub fn max_pool1d(
        &self,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
    ) -> Result<Tensor> {
        Ok(self
            .max_pool1d_impl(kernel_size, stride, padding, dilation, ceil_mode)?
            .0)
    }

    /// `avg_pool2d(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)`.
    pub fn avg_pool2d(
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
        let (g, shape) = geometry(self, kernel_size, stride, padding, &[1], ceil_mode)?;
        let dt = self.dtype();
        if dt == DType::Bool {
            return Err(crate::cpu::dispatch::not_implemented("avg_pool2d", dt));
        }
        let integral = dt.is_integral();
        let out = by_dtype!(self, dt, T => {
            let x = self.contiguous_vec::<T>()?;
            let plane = (g.h * g.w) as usize;
            let oplane = (g.oh * g.ow) as usize;
            let (v, _) = per_plane(&x, g.planes, plane, oplane, |src, out, _| {
                for oy in 0..g.oh {
                    let hs0 = oy * g.s[0] - g.p[0];
                    let he0 = (hs0 + g.k[0]).min(g.h + g.p[0]);
                    for ox in 0..g.ow {
                        let ws0 = ox * g.s[1] - g.p[1];
                        let we0 = (ws0 + g.k[1]).min(g.w + g.p[1]);
                        let pool = (he0 - hs0) * (we0 - ws0);
                        let (hs, he) = (hs0.max(0), he0.min(g.h));
                        let (ws, we) = (ws0.max(0), we0.min(g.w));
                        let mut sum: T = 0.0;
                        for y in hs..he {
                            for xx in ws..we {
                                sum += src[(y * g.w + xx) as usize];
                            }
                        }
                        let div = match divisor_override {
                            Some(d) => d,
                            None if count_include_pad => pool,
                            None => (he - hs) * (we - ws),
                        };
                        let o = (oy * g.ow + ox) as usize;
                        out[o] = if integral { (sum / div as T).trunc() } else { sum / div as T };
                    }
                }
            });
            Tensor::from_vec(v, &shape)?
        });
        out.to_dtype(dt, false)
    }

    /// `avg_pool1d(kernel_size, stride, padding, ceil_mode, count_include_pad)`.
    pub fn avg_pool1d(
        &self,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        ceil_mode: bool,
        count_include_pad: bool,
    ) -> Result<Tensor> {
        if self.dim() != 2 && self.dim() != 3 {
            return Err(Error::runtime(format!(
                "avg_pool1d() Expected 2D or 3D input tensor, but got {:?}",
                self.sizes().as_slice()
            )));
        }
        let one = |v: &[i64], d: i64| -> Vec<i64> {
            if v.is_empty() {
                vec![]
            } else {
                vec![d, v[0]]
            }
        };
        self.unsqueeze(-2)?
            .avg_pool2d(
                &one(kernel_size, 1),
                &one(stride, 1),
                &one(padding, 0),
                ceil_mode,
                count_include_pad,
                None,
            )?
            .squeeze_dim(-2)
    }

    /// Checks of the adaptive pools; returns `(planes, h, w, oh, ow, out_shape)`.
    fn adaptive_geometry(
        &self,
        name: &str,
        output_size: &[i64],
    ) -> Result<(usize, i64, i64, i64, i64, Vec<i64>)> {
        if output_size.len() != 2 {
            return Err(Error::runtime(format!(
                "{name}(): internal error: output_size.size() must be 2"
            )));
        }
        let sz = self.sizes();
        let nd = self.dim();
        if nd != 3 && nd != 4 {
            return Err(Error::runtime(format!(
                "{name}(): Expected 3D or 4D tensor, but got {:?}",
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
                "{name}(): elements of output_size must be greater than or equal to 0 but received {{{}, {}}}",
                output_size[0], output_size[1]
            )));
        }
        let (h, w) = (sz[nd - 2], sz[nd - 1]);
        let mut shape: Vec<i64> = sz[..nd - 2].to_vec();
        shape.extend([output_size[0], output_size[1]]);
        let planes = sz[..nd - 2].iter().product::<i64>() as usize;
        Ok((planes, h, w, output_size[0], output_size[1], shape))
    }

    /// `adaptive_avg_pool2d(output_size)`: window `i` spans `floor(i*in/out)..ceil((i+1)*in/out)`.
    pub fn adaptive_avg_pool2d(&self, output_size: &[i64]) -> Result<Tensor> {
        let (planes, h, w, oh, ow, shape) =
            self.adaptive_geometry("adaptive_avg_pool2d", output_size)?;
        let dt = self.dtype();
        if !dt.is_floating_point() {
            return Err(crate::cpu::dispatch::not_implemented(
                "adaptive_avg_pool2d",
                dt,
            ));
        }
        let out = by_dtype!(self, dt, T => {
            let x = self.contiguous_vec::<T>()?;
            let (v, _) = per_plane(&x, planes, (h * w) as usize, (oh * ow) as usize, |src, out, _| {
                for oy in 0..oh {
                    let (hs, he) = ((oy * h) / oh, ((oy + 1) * h + oh - 1) / oh);
                    for ox in 0..ow {
                        let (ws, we) = ((ox * w) / ow, ((ox + 1) * w + ow - 1) / ow);
                        let mut sum: T = 0.0;
                        for y in hs..he {
                            for xx in ws..we {
                                sum += src[(y * w + xx) as usize];
                            }
                        }
                        out[(oy * ow + ox) as usize] = sum / ((he - hs) * (we - ws)) as T;
                    }
                }
            });
            Tensor::from_vec(v, &shape)?
        });
        out.to_dtype(dt, false)
    }

    /// `adaptive_avg_pool1d(output_size)` on `[N, C, L]` or `[C, L]`.
    pub fn adaptive_avg_pool1d(&self, output_size: &[i64]) -> Result<Tensor> {
        if self.dim() != 2 && self.dim() != 3 {
            return Err(Error::runtime(format!(
                "adaptive_avg_pool1d() argument 'input' (position 1) must be 2D or 3D, but got {:?}",
                self.sizes().as_slice()
            )));
        }
        let o = output_size.first().copied().unwrap_or(1);
        self.unsqueeze(-2)?
            .adaptive_avg_pool2d(&[1, o])?
            .squeeze_dim(-2)
    }

    /// `adaptive_max_pool2d(output_size)`: the maxima and their flat plane positions.
    pub fn adaptive_max_pool2d(&self, output_size: &[i64]) -> Result<(Tensor, Tensor)> {
        let (planes, h, w, oh, ow, shape) =
            self.adaptive_geometry("adaptive_max_pool2d", output_size)?;
        let dt = self.dtype();
        if dt == DType::Bool {
            return Err(crate::cpu::dispatch::not_implemented(
                "adaptive_max_pool2d",
                dt,
            ));
        }
        let (vals, idx) = by_dtype!(self, dt, T => {
            let x = self.contiguous_vec::<T>()?;
            let (v, i) = per_plane(&x, planes, (h * w) as usize, (oh * ow) as usize, |src, out, idx| {
                for oy in 0..oh {
                    let (hs, he) = ((oy * h) / oh, ((oy + 1) * h + oh - 1) / oh);
                    for ox in 0..ow {
                        let (ws, we) = ((ox * w) / ow, ((ox + 1) * w + ow - 1) / ow);
                        let mut best = T::NEG_INFINITY;
                        let mut bi = hs * w + ws;
                        'outer: for y in hs..he {
                            for xx in ws..we {
                                let i = y * w + xx;
                                let v = src[i as usize];
                                if v > best || v.is_nan() {
                                    best = v;
                                    bi = i;
                                    if v.is_nan() {
                                        break 'outer;
                                    }
                                }
                            }
                        }
                        out[(oy * ow + ox) as usize] = best;
                        idx[(oy * ow + ox) as usize] = bi;
                    }
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

    fn plane(v: &[f32], h: i64, w: i64) -> Tensor {
        Tensor::from_vec(v.to_vec(), &[1, 1, h, w]).unwrap()
    }

    #[test]
    fn max_pool_ties_keep_the_first_position_and_nan_wins() {
        // One 2x3 window per output (kernel 2x3): ties -> first index; -0.0 vs 0.0 is a tie.
        let x = plane(&[1., 5., 5., 0., 5., 2.], 2, 3);
        let (v, i) = x
            .max_pool2d_with_indices(&[2, 3], &[], &[0], &[1], false)
            .unwrap();
        assert_eq!((v.to_vec::<f32>(), i.to_vec::<i64>()), (vec![5.], vec![1]));
        let x = plane(&[-0.0, 0.0, -1., -2., -3., -4.], 2, 3);
        let (v, i) = x
            .max_pool2d_with_indices(&[2, 3], &[], &[0], &[1], false)
            .unwrap();
        assert_eq!(i.to_vec::<i64>(), vec![0]);
        assert!(v.to_vec::<f32>()[0].is_sign_negative());
        // The first NaN wins, values and index alike (with and without indices).
        let x = plane(&[1., 9., f32::NAN, 3., f32::NAN, 2.], 2, 3);
        let (v, i) = x
            .max_pool2d_with_indices(&[2, 3], &[], &[0], &[1], false)
            .unwrap();
        assert!(v.to_vec::<f32>()[0].is_nan());
        assert_eq!(i.to_vec::<i64>(), vec![2]);
        let v = x.max_pool2d(&[2, 3], &[], &[0], &[1], false).unwrap();
        assert!(v.to_vec::<f32>()[0].is_nan());
    }

    /// `[n, c, h, w]` of small integers with NaN, infinities and signed zeros sprinkled in.
    fn mixed(n: usize, c: usize, h: usize, w: usize) -> Tensor {
        let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0];
        let xs: Vec<f32> = (0..n * c * h * w)
            .map(|i| {
                if i % 11 == 3 {
                    specials[(i / 11) % specials.len()]
                } else {
                    ((i * 7919) % 31) as f32 - 15.0
                }
            })
            .collect();
        Tensor::from_vec(xs, &[n as i64, c as i64, h as i64, w as i64]).unwrap()
    }

    /// `max_pool2d`'s fast paths against the indexed (scanning) kernel, in f32 and f64: equal
    /// values, NaN for NaN and the same sign of zero.
    fn check_against_scan(x: &Tensor, k: &[i64], s: &[i64], p: &[i64], d: &[i64], ceil: bool) {
        for t in [x.clone(), x.to_dtype(DType::Float64, false).unwrap()] {
            let fast = t.max_pool2d(k, s, p, d, ceil).unwrap();
            let (slow, _) = t.max_pool2d_with_indices(k, s, p, d, ceil).unwrap();
            assert_eq!(fast.sizes(), slow.sizes());
            let (a, b) = (fast.to_vec::<f64>(), slow.to_vec::<f64>());
            for (i, (p, q)) in a.iter().zip(&b).enumerate() {
                assert!(
                    (p.is_nan() && q.is_nan())
                        || (p == q && p.is_sign_negative() == q.is_sign_negative()),
                    "{:?} k{k:?} s{s:?} p{p:?} d{d:?} ceil {ceil}: [{i}] {p} vs {q}",
                    x.sizes()
                );
            }
        }
    }

    #[test]
    fn pairwise_max_pool_matches_the_window_scan() {
        // The 2 x 2 stride-2 fast path: odd sizes (a dropped last row/column), one and many
        // planes.
        for (n, c, h, w) in [(1, 1, 2, 2), (2, 3, 5, 7), (8, 16, 32, 32), (1, 2, 9, 33)] {
            check_against_scan(&mixed(n, c, h, w), &[2, 2], &[], &[0], &[1], false);
        }
    }

    #[test]
    fn separable_max_pool_matches_the_window_scan() {
        // Every other geometry: clipped border windows (padding, ceil mode), strides past the
        // kernel, dilation, non-square windows, planes narrower than the window's reach.
        for (n, c, h, w) in [
            (1, 1, 1, 1),
            (2, 3, 5, 7),
            (1, 4, 12, 13),
            (1, 70, 9, 30),
            (1, 2, 7, 150),
        ] {
            let x = mixed(n, c, h, w);
            for (k, s, p, d) in [
                (vec![3], vec![2], vec![1], vec![1]),
                (vec![3], vec![1], vec![0], vec![1]),
                (vec![3, 2], vec![2, 3], vec![1, 0], vec![1, 1]),
                (vec![2], vec![1], vec![1], vec![2]),
                (vec![5], vec![3], vec![2], vec![1]),
                (vec![1], vec![1], vec![0], vec![1]),
                (vec![2, 4], vec![4, 1], vec![1, 2], vec![2, 1]),
            ] {
                for ceil in [false, true] {
                    if geometry(&x, &k, &s, &p, &d, ceil).is_ok() {
                        check_against_scan(&x, &k, &s, &p, &d, ceil);
                    }
                }
            }
        }
    }

    #[test]
    fn max_pool_padding_stride_and_dilation() {
        // 4x4 ramp, kernel 3, stride 2, padding 1: windows clipped at the border.
        let x = plane(&(0..16).map(|v| v as f32).collect::<Vec<_>>(), 4, 4);
        let (v, i) = x
            .max_pool2d_with_indices(&[3], &[2], &[1], &[1], false)
            .unwrap();
        assert_eq!(v.to_vec::<f32>(), vec![5., 7., 13., 15.]);
        assert_eq!(i.to_vec::<i64>(), vec![5, 7, 13, 15]);
        // Dilation 2 over the same ramp (kernel 2): taps (y, x) and (y + 2, x + 2).
        let v = x.max_pool2d(&[2], &[1], &[0], &[2], false).unwrap();
        assert_eq!(v.to_vec::<f32>(), vec![10., 11., 14., 15.]);
    }
}
