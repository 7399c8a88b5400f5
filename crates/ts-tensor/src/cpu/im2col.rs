//! Patch gathering for convolution as GEMM: `im2col` unfolds sliding windows into columns,
//! `col2im` folds columns back with accumulation (the transposed convolution).

use rayon::prelude::*;

use crate::cpu::conv::valid_range;

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
    out.par_chunks_mut(l).enumerate().for_each(|(r, dst)| {
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

/// Folds columns `[n, c * kh * kw, h * w]` (one column per *input* position of a transposed
/// convolution) into `[n, c, oh, ow]`, summing overlapping taps.
pub(crate) fn col2im<T: Accum>(cols: &[T], n: usize, c: usize, g: &Window) -> Vec<T> {
    let oplane = g.oh * g.ow;
    let mut out = vec![T::default(); n * c * oplane];
    if oplane == 0 {
        return out;
    }
    let l = g.h * g.w;
    let k = g.kh * g.kw;
    out.par_chunks_mut(oplane).enumerate().for_each(|(p, dst)| {
        let (nb, ci) = (p / c, p % c);
        for ki in 0..g.kh {
            for kj in 0..g.kw {
                let row = ((nb * c + ci) * k + ki * g.kw + kj) * l;
                let src = &cols[row..row + l];
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
            }
        }
    });
    out
}

/// Depthwise convolution (`groups == channels`, one input channel per filter) computed directly:
/// `x: [n, c, h, w]`, `w: [c * mult, 1, kh, kw]`, result `[n, c * mult, oh, ow]`.
pub(crate) fn depthwise<T>(
    x: &[T],
    wt: &[T],
    bias: Option<&[T]>,
    n: usize,
    c: usize,
    mult: usize,
    g: &Window,
) -> Vec<T>
where
    T: Accum + std::ops::Mul<Output = T>,
{
    let oplane = g.oh * g.ow;
    let oc = c * mult;
    let mut out = vec![T::default(); n * oc * oplane];
    if oplane == 0 {
        return out;
    }
    let plane = g.h * g.w;
    let k = g.kh * g.kw;
    out.par_chunks_mut(oplane).enumerate().for_each(|(p, dst)| {
        let (nb, o) = (p / oc, p % oc);
        let ci = o / mult;
        let src = &x[(nb * c + ci) * plane..(nb * c + ci + 1) * plane];
        let filt = &wt[o * k..(o + 1) * k];
        let b = bias.map(|b| b[o]).unwrap_or_default();
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                let mut acc = b;
                for ki in 0..g.kh {
                    let Some(iy) = Window::src(oy, ki, g.sh, g.ph, g.dh, g.h) else {
                        continue;
                    };
                    for kj in 0..g.kw {
                        if let Some(ix) = Window::src(ox, kj, g.sw, g.pw, g.dw, g.w) {
                            acc = acc.acc(src[iy * g.w + ix] * filt[ki * g.kw + kj]);
                        }
                    }
                }
                dst[oy * g.ow + ox] = acc;
            }
        }
    });
    out
}
