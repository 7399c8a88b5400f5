//! Patch gathering for convolution as GEMM: `im2col` unfolds sliding windows into columns,
//! `col2im` folds columns back with accumulation (the transposed convolution).

use rayon::prelude::*;

use crate::cpu::conv::valid_range;
use crate::cpu::simd::simd_dispatch;

/// The geometry of a 2-d sliding window over `[h, w]` planes: kernel, stride, leading padding,
/// dilation and the output plane size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    pub h: usize,
    pub w: usize,
    pub kh: usize,
    pub kw: usize,
    pub sh: usize,
    pub sw: usize,
    pub ph: usize,
    pub pw: usize,
    pub dh: usize,
    pub dw: usize,
    pub oh: usize,
    pub ow: usize,
}

impl Window {
    /// Input row/column for output `o` and kernel tap `k` along one axis (None when in padding).
    #[inline]
    fn src(o: usize, k: usize, s: usize, p: usize, d: usize, len: usize) -> Option<usize> {
        let pos = (o * s + k * d).checked_sub(p)?;
        (pos < len).then_some(pos)
    }
}

/// Element types the convolution helpers accumulate (integers wrap, as ATen's do).
pub(crate) trait Accum: Copy + Default + Send + Sync {
    fn acc(self, other: Self) -> Self;
}

impl Accum for f32 {
    #[inline]
    fn acc(self, o: f32) -> f32 {
        self + o
    }
}
impl Accum for f64 {
    #[inline]
    fn acc(self, o: f64) -> f64 {
        self + o
    }
}
impl Accum for i64 {
    #[inline]
    fn acc(self, o: i64) -> i64 {
        self.wrapping_add(o)
    }
}

/// Unfolds `x` (`[n, c_total, h, w]` contiguous) channels `c0..c0 + c` into the zeroed columns
/// `out` (`[n, c * kh * kw, oh * ow]`).
pub(crate) fn im2col<T: Accum>(
    x: &[T],
    n: usize,
    c_total: usize,
    c0: usize,
    c: usize,
    g: &Window,
    out: &mut [T],
) {
    let l = g.oh * g.ow;
    let rows = c * g.kh * g.kw;
    if l == 0 || out.len() < n * rows * l {
        return;
    }
    let plane = g.h * g.w;
    let out_len = out.len();
    out.par_chunks_mut(l)
        .enumerate()
        .with_min_len(crate::threads::min_piece_for(out_len))
        .for_each(|(r, dst)| {
            let nb = r / rows;
            let rr = r % rows;
            let ci = rr / (g.kh * g.kw);
            let ki = (rr / g.kw) % g.kh;
            let kj = rr % g.kw;
            let src = &x[(nb * c_total + c0 + ci) * plane..(nb * c_total + c0 + ci + 1) * plane];
            // Output columns `lo..hi` read input column `ox * sw + shift`; the rest is padding.
            let shift = (kj * g.dw) as isize - g.pw as isize;
            let (lo, hi) = valid_range(shift, g.sw, g.w, g.ow);
            for oy in 0..g.oh {
                let row = &mut dst[oy * g.ow..(oy + 1) * g.ow];
                let Some(iy) = Window::src(oy, ki, g.sh, g.ph, g.dh, g.h) else {
                    continue;
                };
                let line = &src[iy * g.w..(iy + 1) * g.w];
                if g.sw == 1 {
                    row[lo..hi].copy_from_slice(
                        &line[(lo as isize + shift) as usize..(hi as isize + shift) as usize],
                    );
                } else {
                    for (ox, v) in row.iter_mut().enumerate().take(hi).skip(lo) {
                        *v = line[(ox as isize * g.sw as isize + shift) as usize];
                    }
                }
            }
        });
}

/// True when `g`'s kernel tiles the output without overlap or padding (stride equal to the
/// kernel, as the 2x2/stride-2 upsampling of U-Nets and Mask R-CNN's mask head): every output
/// element then receives exactly one column entry, so [`scatter_tiles`] applies.
pub(crate) fn tiles_without_overlap(g: &Window) -> bool {
    g.sh == g.kh
        && g.sw == g.kw
        && g.ph == 0
        && g.pw == 0
        && g.dh == 1
        && g.dw == 1
        && g.oh == g.h * g.kh
        && g.ow == g.w * g.kw
}

/// [`col2im`] for a window that [`tiles_without_overlap`], with the per-channel `bias` added
/// in the same pass: each output element is `(0 + column entry) + bias`, the same arithmetic
/// as folding then adding the bias, without the accumulation buffer's second pass.
pub(crate) fn scatter_tiles<T: Accum>(
    cols: &[T],
    n: usize,
    c: usize,
    g: &Window,
    bias: Option<&[T]>,
) -> Vec<T> {
    for_each_tap(cols, n, c, g, |ci, ki, kj, src, dst| {
        let b = bias.map(|b| b[ci]);
        for iy in 0..g.h {
            let drow = &mut dst[(iy * g.kh + ki) * g.ow..][..g.ow];
            for (ix, &v) in src[iy * g.w..(iy + 1) * g.w].iter().enumerate() {
                let folded = T::default().acc(v);
                drow[ix * g.kw + kj] = match b {
                    Some(b) => folded.acc(b),
                    None => folded,
                };
            }
        }
    })
}

/// Folds columns `[n, c * kh * kw, h * w]` (one column per *input* position of a transposed
/// convolution) into `[n, c, oh, ow]`, summing overlapping taps.
pub(crate) fn col2im<T: Accum>(cols: &[T], n: usize, c: usize, g: &Window) -> Vec<T> {
    for_each_tap(cols, n, c, g, |_, ki, kj, src, dst| {
        for iy in 0..g.h {
            let Some(oy) = (iy * g.sh + ki * g.dh).checked_sub(g.ph) else {
                continue;
            };
            if oy >= g.oh {
                continue;
            }
            for ix in 0..g.w {
                let Some(ox) = (ix * g.sw + kj * g.dw).checked_sub(g.pw) else {
                    continue;
                };
                if ox < g.ow {
                    let d = &mut dst[oy * g.ow + ox];
                    *d = d.acc(src[iy * g.w + ix]);
                }
            }
        }
    })
}

/// A zeroed `[n, c, oh, ow]` output, planes in parallel; `tap(channel, ki, kj, column row,
/// output plane)` is called for every kernel tap of every plane with that tap's `h * w`
/// column entries.
fn for_each_tap<T: Accum>(
    cols: &[T],
    n: usize,
    c: usize,
    g: &Window,
    tap: impl Fn(usize, usize, usize, &[T], &mut [T]) + Sync,
) -> Vec<T> {
    let oplane = g.oh * g.ow;
    let mut out = vec![T::default(); n * c * oplane];
    if oplane == 0 {
        return out;
    }
    let l = g.h * g.w;
    let k = g.kh * g.kw;
    let out_len = out.len();
    out.par_chunks_mut(oplane)
        .enumerate()
        .with_min_len(crate::threads::min_piece_for(out_len))
        .for_each(|(p, dst)| {
            let (nb, ci) = (p / c, p % c);
            for ki in 0..g.kh {
                for kj in 0..g.kw {
                    let row = ((nb * c + ci) * k + ki * g.kw + kj) * l;
                    tap(ci, ki, kj, &cols[row..row + l], dst);
                }
            }
        });
    out
}

/// Element types of the direct depthwise kernel (an alias for its two bounds, so that the
/// kernel can go through [`simd_dispatch!`]).
pub(crate) trait Tap: Accum + std::ops::Mul<Output = Self> {}
impl<T: Accum + std::ops::Mul<Output = T>> Tap for T {}

/// Depthwise convolution (`groups == channels`, one input channel per filter) computed directly:
/// `x: [n, c, h, w]`, `w: [c * mult, 1, kh, kw]`, written into `out: [n, c * mult, oh, ow]`.
/// Each output plane starts as the bias and every kernel tap adds its weight times the shifted
/// input row over the columns where the tap is inside the input, so the inner loops have no
/// bounds tests and vectorize; every element still sums bias then taps in row-major tap order.
pub(crate) fn depthwise<T: Tap>(
    x: &[T],
    wt: &[T],
    bias: Option<&[T]>,
    out: &mut [T],
    c: usize,
    mult: usize,
    g: &Window,
) {
    let oplane = g.oh * g.ow;
    if oplane == 0 {
        return;
    }
    let oc = c * mult;
    let plane = g.h * g.w;
    let k = g.kh * g.kw;
    let one = |(p, dst): (usize, &mut [T])| {
        let (nb, o) = (p / oc, p % oc);
        let ci = o / mult;
        let src = &x[(nb * c + ci) * plane..(nb * c + ci + 1) * plane];
        let filt = &wt[o * k..(o + 1) * k];
        let b = bias.map(|b| b[o]).unwrap_or_default();
        depthwise_plane_simd(src, filt, b, dst, g);
    };
    if crate::threads::should_split(out.len() >= 1 << 14) {
        out.par_chunks_mut(oplane).enumerate().for_each(one);
    } else {
        out.chunks_mut(oplane).enumerate().for_each(one);
    }
}

simd_dispatch!(
    fn depthwise_plane_simd<T: Tap>(src: &[T], filt: &[T], b: T, dst: &mut [T], g: &Window)
        = depthwise_plane;
);

/// One output plane of [`depthwise`]: `dst = b + sum over taps of filt[tap] * shifted src`.
#[inline(always)]
fn depthwise_plane<T: Tap>(src: &[T], filt: &[T], b: T, dst: &mut [T], g: &Window) {
    dst.fill(b);
    for oy in 0..g.oh {
        let drow = &mut dst[oy * g.ow..(oy + 1) * g.ow];
        for ki in 0..g.kh {
            let Some(iy) = Window::src(oy, ki, g.sh, g.ph, g.dh, g.h) else {
                continue;
            };
            let srow = &src[iy * g.w..(iy + 1) * g.w];
            for kj in 0..g.kw {
                let wv = filt[ki * g.kw + kj];
                let shift = (kj * g.dw) as isize - g.pw as isize;
                let (lo, hi) = valid_range(shift, g.sw, g.w, g.ow);
                if lo >= hi {
                    continue;
                }
                let d = &mut drow[lo..hi];
                // `lo * sw + shift >= 0` by the definition of the valid range.
                let start = (lo * g.sw) as isize + shift;
                let s = &srow[start as usize..];
                if g.sw == 1 {
                    for (o, &v) in d.iter_mut().zip(s) {
                        *o = o.acc(v * wv);
                    }
                } else {
                    for (o, &v) in d.iter_mut().zip(s.iter().step_by(g.sw)) {
                        *o = o.acc(v * wv);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct definition: every output element sums bias then its in-bounds taps.
    fn reference(
        x: &[f32],
        wt: &[f32],
        bias: Option<&[f32]>,
        n: usize,
        c: usize,
        mult: usize,
        g: &Window,
    ) -> Vec<f32> {
        let oc = c * mult;
        let mut out = vec![0.0; n * oc * g.oh * g.ow];
        for nb in 0..n {
            for o in 0..oc {
                let src = &x[(nb * c + o / mult) * g.h * g.w..];
                for oy in 0..g.oh {
                    for ox in 0..g.ow {
                        let mut acc = bias.map(|b| b[o]).unwrap_or(0.0);
                        for ki in 0..g.kh {
                            for kj in 0..g.kw {
                                let iy = (oy * g.sh + ki * g.dh) as isize - g.ph as isize;
                                let ix = (ox * g.sw + kj * g.dw) as isize - g.pw as isize;
                                if iy >= 0 && ix >= 0 && (iy as usize) < g.h && (ix as usize) < g.w
                                {
                                    acc += src[iy as usize * g.w + ix as usize]
                                        * wt[(o * g.kh + ki) * g.kw + kj];
                                }
                            }
                        }
                        out[((nb * oc + o) * g.oh + oy) * g.ow + ox] = acc;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn depthwise_matches_the_definition_bit_for_bit() {
        let mut seed = 7u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        // Widths around every vector width, strides 1-3, padding wider than the kernel reach,
        // dilation, kernels wider than the input, and a multiplier of 2.
        for (h, w, kh, kw, s, p, d, mult, with_bias) in [
            (5, 1, 3, 3, 1, 1, 1, 1, true),
            (7, 17, 3, 3, 1, 1, 1, 1, true),
            (9, 33, 3, 3, 2, 1, 1, 2, false),
            (6, 15, 5, 5, 2, 2, 1, 1, true),
            (8, 31, 3, 3, 3, 0, 2, 1, true),
            (4, 4, 5, 5, 1, 3, 1, 1, false),
            (3, 64, 1, 7, 1, 3, 1, 1, true),
            (10, 9, 3, 3, 1, 0, 3, 1, true),
        ] {
            let (n, c) = (2, 3);
            let oh = (h + 2 * p - d * (kh - 1) - 1) / s + 1;
            let ow = (w + 2 * p - d * (kw - 1) - 1) / s + 1;
            let g = Window {
                h,
                w,
                kh,
                kw,
                sh: s,
                sw: s,
                ph: p,
                pw: p,
                dh: d,
                dw: d,
                oh,
                ow,
            };
            let x: Vec<f32> = (0..n * c * h * w).map(|_| rnd()).collect();
            let wt: Vec<f32> = (0..c * mult * kh * kw).map(|_| rnd()).collect();
            let b: Vec<f32> = (0..c * mult).map(|_| rnd()).collect();
            let bias = with_bias.then_some(&b[..]);
            let mut out = vec![f32::NAN; n * c * mult * oh * ow];
            depthwise(&x, &wt, bias, &mut out, c, mult, &g);
            let want = reference(&x, &wt, bias, n, c, mult, &g);
            assert_eq!(out.len(), want.len());
            for (i, (a, b)) in out.iter().zip(&want).enumerate() {
                assert_eq!(a.to_bits(), b.to_bits(), "element {i} of {g:?}");
            }
        }
    }

    #[test]
    fn depthwise_propagates_nan_and_inf() {
        let g = Window {
            h: 1,
            w: 20,
            kh: 1,
            kw: 3,
            sh: 1,
            sw: 1,
            ph: 0,
            pw: 1,
            dh: 1,
            dw: 1,
            oh: 1,
            ow: 20,
        };
        let mut x = vec![1.0f32; 20];
        x[4] = f32::NAN;
        x[12] = f32::INFINITY;
        let wt = [1.0f32, 2.0, 1.0];
        let mut out = vec![0.0f32; 20];
        depthwise(&x, &wt, None, &mut out, 1, 1, &g);
        assert!(out[3].is_nan() && out[4].is_nan() && out[5].is_nan() && !out[2].is_nan());
        assert!(out[11].is_infinite() && out[13].is_infinite() && out[14] == 4.0);
        assert_eq!(out[0], 3.0);
    }

    #[test]
    fn scatter_tiles_matches_fold_then_bias_bit_for_bit() {
        let mut seed = 11u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        for &(n, c, h, w, kh, kw) in &[(2, 3, 5, 7, 2, 2), (1, 4, 3, 1, 3, 2), (1, 1, 1, 2, 1, 1)] {
            let g = Window {
                h,
                w,
                kh,
                kw,
                sh: kh,
                sw: kw,
                ph: 0,
                pw: 0,
                dh: 1,
                dw: 1,
                oh: h * kh,
                ow: w * kw,
            };
            assert!(tiles_without_overlap(&g));
            let mut cols: Vec<f32> = (0..n * c * kh * kw * h * w).map(|_| rnd()).collect();
            cols[0] = f32::NAN;
            cols[1] = -0.0;
            let bias: Vec<f32> = (0..c).map(|_| rnd()).collect();
            let folded = col2im(&cols, n, c, &g);
            let with_bias: Vec<f32> = folded
                .iter()
                .enumerate()
                .map(|(i, &v)| v + bias[(i / (g.oh * g.ow)) % c])
                .collect();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&scatter_tiles(&cols, n, c, &g, None)), bits(&folded));
            assert_eq!(
                bits(&scatter_tiles(&cols, n, c, &g, Some(&bias))),
                bits(&with_bias)
            );
        }
        let overlapping = Window {
            h: 4,
            w: 4,
            kh: 3,
            kw: 3,
            sh: 2,
            sw: 2,
            ph: 0,
            pw: 0,
            dh: 1,
            dw: 1,
            oh: 9,
            ow: 9,
        };
        assert!(!tiles_without_overlap(&overlapping));
    }
}
