//! Floating-point 2-d convolution as tiled im2col + GEMM. The output plane is cut into column
//! tiles; each tile's patches are unfolded into a per-thread scratch buffer small enough to stay
//! in cache (never a whole `[c * kh * kw, oh * ow]` matrix) and multiplied straight into the
//! output, which the bias pre-fills. 1x1 stride-1 convolutions multiply the input in place.

use std::cell::{Cell, RefCell};

use gemm::Parallelism;
use rayon::prelude::*;

use crate::cpu::blocked_gemm::{pack_lhs, pack_rhs_transposed, packed_lhs_len, Prepacked};
use crate::cpu::contiguous::copy_short;
use crate::cpu::contiguous::with_slice;
use crate::cpu::conv_direct;
use crate::cpu::im2col::Window;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Bytes of unfolded patches per tile: most of a 1 MB per-core L2 cache (384 KB measured ~2%
/// slower on the 3x3 64-channel bench case, a whole 7 MB plane no faster).
const TILE_BYTES: usize = 768 * 1024;
/// The fewest output columns a tile gets (narrower tiles starve the GEMM micro-kernel).
const MIN_TILE: usize = 48;
/// Multiply-adds under which one tile's GEMM is not split across threads.
const SERIAL_WORK: usize = 1 << 22;

/// Float types the tiled convolution runs on (those the `gemm` crate multiplies).
pub(crate) trait ConvFloat: Element + Default + crate::cpu::blocked_gemm::GemmFloat {
    /// Runs `f` with this thread's scratch buffer of at least `len` elements.
    fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [Self]) -> R) -> R;
    /// A buffer from this thread's pool of per-call buffers (holding what its last user left,
    /// so that resizing it to the same length writes nothing):
    /// fresh allocations of padded planes and packed weights on every call page-faulted
    /// (a third of the 3x3 64-channel bench's time was the kernel's).
    fn take_buf() -> Vec<Self>;
    /// Returns a buffer taken with [`ConvFloat::take_buf`] to the pool.
    fn give_buf(v: Vec<Self>);
}

/// Buffers kept in each thread's pool.
const POOL_BUFS: usize = 4;

thread_local! {
    static SCRATCH_F32: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    static SCRATCH_F64: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
    static POOL_F32: RefCell<Vec<Vec<f32>>> = const { RefCell::new(Vec::new()) };
    static POOL_F64: RefCell<Vec<Vec<f64>>> = const { RefCell::new(Vec::new()) };
}

macro_rules! conv_float {
    ($t:ty, $key:ident, $pool:ident) => {
        impl ConvFloat for $t {
            fn take_buf() -> Vec<$t> {
                $pool.with(|p| p.borrow_mut().pop()).unwrap_or_default()
            }
            fn give_buf(v: Vec<$t>) {
                if !crate::buffer_cache::keep_freed() {
                    return;
                }
                $pool.with(|p| {
                    let mut p = p.borrow_mut();
                    if p.len() < POOL_BUFS {
                        p.push(v);
                    }
                });
            }
            fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [$t]) -> R) -> R {
                $key.with(|cell| match cell.try_borrow_mut() {
                    Ok(mut v) => {
                        if v.len() < len {
                            crate::cpu::blocked_gemm::reserve_to(&mut v, len);
                            v.resize(len, 0.0);
                        }
                        f(&mut v[..len])
                    }
                    // Re-entered on this thread (a nested parallel region ran another tile
                    // here): use a temporary buffer.
                    Err(_) => f(&mut vec![0.0; len]),
                })
            }
        }
    };
}
conv_float!(f32, SCRATCH_F32, POOL_F32);
conv_float!(f64, SCRATCH_F64, POOL_F64);

/// The problem: batch, channels, output channels, groups and the window geometry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConvShape {
    pub n: usize,
    pub c: usize,
    pub o: usize,
    pub groups: usize,
    pub win: Window,
}

/// A raw pointer that may cross threads; every task writes a disjoint part of the output.
#[derive(Clone, Copy)]
struct OutPtr<T>(*mut T);
// SAFETY: tasks write disjoint output blocks (distinct batch/group rows or column ranges) while
// the caller keeps the output tensor alive and unshared for the whole call.
unsafe impl<T> Send for OutPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for OutPtr<T> {}

impl<T> OutPtr<T> {
    fn get(self) -> *mut T {
        self.0
    }
}

/// `dst[oc * l .. oc * l + width] = bias[oc]`: one tile's output rows start at `dst`.
///
/// # Safety
/// `dst` must point at `bias.len()` rows of row stride `l` holding at least `width` writable
/// elements each, which no other thread touches during the call.
unsafe fn fill_bias<T: Copy>(dst: *mut T, bias: &[T], l: usize, width: usize) {
    for (oc, &b) in bias.iter().enumerate() {
        // SAFETY: row `oc`'s `width` elements are in bounds and exclusively ours (contract).
        unsafe { std::slice::from_raw_parts_mut(dst.add(oc * l), width) }.fill(b);
    }
}

/// Unfolds the patches of output columns `j0..j1` (flattened `oy * ow + ox`) of channels
/// `planes` (`[cg, h, w]`) into `dst` (`[cg * kh * kw, j1 - j0]`), writing every element
/// (padding taps as zeros).
fn unfold_tile<T: Copy + Default>(planes: &[T], g: &Window, j0: usize, j1: usize, dst: &mut [T]) {
    let tl = j1 - j0;
    let plane = g.h * g.w;
    let cg = planes.len() / plane.max(1);
    let zero = T::default();
    let mut row = 0;
    for ci in 0..cg {
        let src = &planes[ci * plane..(ci + 1) * plane];
        for ki in 0..g.kh {
            for kj in 0..g.kw {
                let d = &mut dst[row * tl..(row + 1) * tl];
                row += 1;
                // Output columns `lo..hi` of a row read input column `ox * sw + shift`.
                let shift = (kj * g.dw) as isize - g.pw as isize;
                let (lo, hi) = valid_range(shift, g.sw, g.w, g.ow);
                let mut j = j0;
                while j < j1 {
                    let (oy, ox0) = (j / g.ow, j % g.ow);
                    let ox1 = g.ow.min(ox0 + (j1 - j));
                    let seg = &mut d[j - j0..j - j0 + (ox1 - ox0)];
                    j += ox1 - ox0;
                    let iy = (oy * g.sh + ki * g.dh).checked_sub(g.ph);
                    let Some(iy) = iy.filter(|&iy| iy < g.h) else {
                        seg.fill(zero);
                        continue;
                    };
                    let line = &src[iy * g.w..(iy + 1) * g.w];
                    let a = lo.clamp(ox0, ox1);
                    let b = hi.clamp(a, ox1);
                    seg[..a - ox0].fill(zero);
                    seg[b - ox0..].fill(zero);
                    let body = &mut seg[a - ox0..b - ox0];
                    if body.is_empty() {
                        // The whole segment reads padding (a dilation wider than the input).
                        continue;
                    }
                    if g.sw == 1 {
                        let s0 = (a as isize + shift) as usize;
                        body.copy_from_slice(&line[s0..s0 + body.len()]);
                    } else {
                        for (k, v) in body.iter_mut().enumerate() {
                            *v = line[((a + k) as isize * g.sw as isize + shift) as usize];
                        }
                    }
                }
            }
        }
    }
}

/// The height and width of the padded planes [`unfold_tile_packed`] reads: the input with
/// its padding, extended (with zeros) to every row and column a tap reaches, which lies past
/// the symmetric padding when the caller's padding is asymmetric (`padding='same'` with an even
/// kernel puts the extra row and column on the far side).
fn padded_dims(g: &Window) -> (usize, usize) {
    let reach = |o: usize, s: usize, k: usize, d: usize| (o.max(1) - 1) * s + (k - 1) * d + 1;
    (
        (g.h + 2 * g.ph).max(reach(g.oh, g.sh, g.kh, g.dh)),
        (g.w + 2 * g.pw).max(reach(g.ow, g.sw, g.kw, g.dw)),
    )
}

/// The row layout of the padded planes: `(wq, row)`. With a column stride `sw > 1` each padded
/// row of `wp` columns is stored as `sw` phases of `wq = ceil(wp / sw)` columns (phase `p`
/// holds columns `p, p + sw, ...`), so that the columns one tap reads for consecutive outputs
/// (`ox * sw + kj * dw`) are contiguous, in phase `kj * dw % sw` from `ox + kj * dw / sw`: the
/// unfold copies runs instead of gathering every `sw`-th element (AlexNet's 11 x 11 stride-4
/// layer spent ~45% of the model's time in that gather). With `sw == 1`, `(wp, wp)`.
fn phased_row(g: &Window) -> (usize, usize) {
    let wp = padded_dims(g).1;
    let wq = wp.div_ceil(g.sw.max(1));
    (wq, wq * g.sw.max(1))
}

/// Offset within a padded row (see [`phased_row`]) of the first column tap `kj` reads.
fn tap_column(g: &Window, wq: usize, kj: usize) -> usize {
    let (c, sw) = (kj * g.dw, g.sw.max(1));
    (c % sw) * wq + c / sw
}

/// The input planes (`[planes, h, w]`) with their zero padding written out (`[planes, hp, row]`
/// of [`padded_dims`] and [`phased_row`]) into `out`, so that every patch row of
/// [`unfold_tile_packed`] reads in bounds without a test per piece. Large inputs are padded on
/// `threads` threads (a serial copy of a 64-channel 56 x 56 input was ~5% of the layer's time,
/// with the other core idle). `slack` zeros follow the planes (reads past the last one). With
/// a column stride, rows and column phases no tap reads keep whatever `out` held.
fn padded_planes<T: Copy + Default + Send + Sync>(
    x: &[T],
    planes: usize,
    g: &Window,
    threads: usize,
    slack: usize,
    mut out: Vec<T>,
) -> Vec<T> {
    let plane = g.h * g.w;
    let hp = padded_dims(g).0;
    let (wq, wr) = phased_row(g);
    let pplane = hp * wr;
    let zero = T::default();
    // Every element is written below; a pooled buffer of this length is reused as it is.
    // Grown exactly: `resize` alone may double the capacity, and the pages it touches stay.
    out.truncate(planes * pplane);
    crate::cpu::blocked_gemm::reserve_to(&mut out, planes * pplane + slack);
    out.resize(planes * pplane, zero);
    let pad_one = |(src, dst): (&[T], &mut [T])| {
        let (top, rest) = dst.split_at_mut(g.ph * wr);
        top.fill(zero);
        let (body, bottom) = rest.split_at_mut(g.h * wr);
        bottom.fill(zero);
        if g.sw == 1 {
            for (line, d) in src.chunks_exact(g.w.max(1)).zip(body.chunks_exact_mut(wr)) {
                d[..g.pw].fill(zero);
                d[g.pw..g.pw + g.w].copy_from_slice(line);
                d[g.pw + g.w..].fill(zero);
            }
            return;
        }
        // Strided: each line padded into `row`, whose column `q * sw + ph` then goes to
        // `d[ph * wq + q]`, in branch-free loops the compiler vectorizes; testing every column
        // against the input's edges cost ~2.5 cycles an element, half the time of a stride-2
        // 1 x 1 layer of ResNet-18.
        // Rows and phases no tap reads are left as they are (a stride-2 1 x 1 layer reads a
        // quarter of its input); the buffer's elements are initialized either way.
        let in_place = g.pw == 0 && wr == g.w;
        let mut row = if in_place { Vec::new() } else { vec![zero; wr] };
        for (y, (line, d)) in src
            .chunks_exact(g.w.max(1))
            .zip(body.chunks_exact_mut(wr))
            .enumerate()
        {
            if !row_is_read(g, g.ph + y) {
                continue;
            }
            let row: &[T] = if in_place {
                line
            } else {
                copy_short(&mut row[g.pw..g.pw + g.w], line);
                &row
            };
            if g.sw == 2 && phase_is_read(g, 1) {
                let (d0, d1) = d.split_at_mut(wq);
                for ((a, b), pair) in d0.iter_mut().zip(d1).zip(row.chunks_exact(2)) {
                    *a = pair[0];
                    *b = pair[1];
                }
            } else {
                for (ph, dq) in d.chunks_exact_mut(wq).enumerate() {
                    if !phase_is_read(g, ph) {
                        continue;
                    }
                    for (v, &c) in dq.iter_mut().zip(row[ph..].iter().step_by(g.sw)) {
                        *v = c;
                    }
                }
            }
        }
    };
    if plane == 0 {
        // An empty input: every tap reads padding.
        out.fill(zero);
        out.resize(planes * pplane + slack, zero);
        return out;
    }
    let x = &x[..planes * plane];
    if threads > 1 && planes > 1 && planes * pplane >= PARALLEL_PAD {
        x.par_chunks_exact(plane)
            .zip(out.par_chunks_exact_mut(pplane))
            .for_each(pad_one);
    } else {
        x.chunks_exact(plane)
            .zip(out.chunks_exact_mut(pplane))
            .for_each(pad_one);
    }
    out.resize(planes * pplane + slack, zero);
    out
}

/// The padded plane's stride phases: `(hq, wq)`, the rows and columns of each. Phase `(a, b)`
/// of a padded plane holds its rows `a, a + sh, ...` and columns `b, b + sw, ...`; with
/// stride 1 it is the padded plane itself.
fn phase_dims(g: &Window) -> (usize, usize) {
    let (hp, wp) = padded_dims(g);
    (hp.div_ceil(g.sh.max(1)), wp.div_ceil(g.sw.max(1)))
}

/// The input planes (`[planes, h, w]`) padded and split into their stride phases for the
/// direct kernel: `[planes, sh, sw, hq, wq]` (see [`phase_dims`]), then `slack` zeros. In a
/// phase every tap of a strided window reads consecutive outputs from consecutive elements
/// (output `(oy, ox)` at `oy * wq + ox` of the grid), as with stride 1, so the direct kernel
/// runs ResNet's 7 x 7 stride-2 stem without unfolding its 7.4 MB of patches.
fn phase_planes<T: Copy + Default + Send + Sync>(
    x: &[T],
    planes: usize,
    g: &Window,
    threads: usize,
    slack: usize,
    mut out: Vec<T>,
) -> Vec<T> {
    let (sh, sw) = (g.sh.max(1), g.sw.max(1));
    let (hq, wq) = phase_dims(g);
    let plane = g.h * g.w;
    // One row phase of one plane: its `sw` column phases of `hq` rows.
    let chunk = sw * hq * wq;
    let zero = T::default();
    out.truncate(planes * sh * chunk);
    crate::cpu::blocked_gemm::reserve_to(&mut out, planes * sh * chunk + slack);
    out.resize(planes * sh * chunk, zero);
    let fill = |(i, dst): (usize, &mut [T])| {
        let (p, a) = (i / sh, i % sh);
        let src = &x[p * plane..(p + 1) * plane];
        // A padded row (`wq * sw` columns): zeros around the input's line.
        let mut row = vec![zero; wq * sw];
        for yq in 0..hq {
            let line = (yq * sh + a)
                .checked_sub(g.ph)
                .filter(|&y| y < g.h && plane > 0);
            let Some(y) = line else {
                for b in 0..sw {
                    dst[(b * hq + yq) * wq..][..wq].fill(zero);
                }
                continue;
            };
            row[g.pw..g.pw + g.w].copy_from_slice(&src[y * g.w..(y + 1) * g.w]);
            if sw == 1 {
                dst[yq * wq..][..wq].copy_from_slice(&row);
                continue;
            }
            let (d0, rest) = dst.split_at_mut(hq * wq);
            if sw == 2 {
                let d0 = &mut d0[yq * wq..][..wq];
                let d1 = &mut rest[yq * wq..][..wq];
                for ((u, v), pair) in d0.iter_mut().zip(d1).zip(row.chunks_exact(2)) {
                    *u = pair[0];
                    *v = pair[1];
                }
                continue;
            }
            for b in 0..sw {
                let d = &mut dst[(b * hq + yq) * wq..][..wq];
                for (v, &c) in d.iter_mut().zip(row[b..].iter().step_by(sw)) {
                    *v = c;
                }
            }
        }
    };
    if threads > 1 && planes * sh > 1 && planes * sh * chunk >= PARALLEL_PAD {
        out.par_chunks_exact_mut(chunk).enumerate().for_each(fill);
    } else {
        out.chunks_exact_mut(chunk).enumerate().for_each(fill);
    }
    out.resize(planes * sh * chunk + slack, zero);
    out
}

/// Whether some tap reads padded row `r` (`r = oy * sh + ki * dh` for an output row `oy`).
fn row_is_read(g: &Window, r: usize) -> bool {
    (0..g.kh).any(|ki| {
        r.checked_sub(ki * g.dh)
            .is_some_and(|o| o % g.sh.max(1) == 0 && o / g.sh.max(1) < g.oh)
    })
}

/// Whether some tap reads column phase `ph` of a padded row (see [`phased_row`]).
fn phase_is_read(g: &Window, ph: usize) -> bool {
    (0..g.kw).any(|kj| kj * g.dw % g.sw.max(1) == ph)
}

/// Elements of padded planes from which [`padded_planes`] runs on several threads (it is
/// given several only for a layer that splits anyway; a 128-channel 28 x 28 input, 115K
/// elements, was padded by one thread while the other waited, 4% of the layer).
const PARALLEL_PAD: usize = 1 << 14;

/// The most columns a packed micro-panel may have for [`unfold_tile_packed`].
const MAX_PANEL: usize = 64;

/// Unfolds the patches of output columns `j0..j1` like [`unfold_tile`], but from padded planes
/// (`[cg, hp, row]`, see [`padded_planes`]) into the GEMM's packed layout:
/// `ceil((j1 - j0) / nr)` micro-panels, each all `cg * kh * kw` patch rows of `nr` consecutive
/// output columns (the last panel zero-padded), so that the GEMM reads them without packing
/// them again. A panel's columns fall into a few runs of one output row each, at the same
/// offsets for every patch row, so the runs are found once per panel and each patch row is a
/// few short copies.
fn unfold_tile_packed<T: Copy + Default>(
    padded: &[T],
    g: &Window,
    j0: usize,
    j1: usize,
    nr: usize,
    dst: &mut [T],
) {
    let hp = padded_dims(g).0;
    let (wq, wr) = phased_row(g);
    let pplane = hp * wr;
    let cg = padded.len() / pplane.max(1);
    let kk = cg * g.kh * g.kw;
    let tl = j1 - j0;
    let zero = T::default();
    debug_assert!(nr <= MAX_PANEL);
    // (column in the panel, length, offset of its first input element in a padded plane).
    let mut runs = [(0usize, 0usize, 0usize); MAX_PANEL];
    for (pi, panel) in dst
        .chunks_exact_mut(kk * nr)
        .take(tl.div_ceil(nr))
        .enumerate()
    {
        let (c0, c1) = (pi * nr, ((pi + 1) * nr).min(tl));
        let mut count = 0;
        let mut c = c0;
        while c < c1 {
            let (oy, ox) = ((j0 + c) / g.ow, (j0 + c) % g.ow);
            let len = (g.ow - ox).min(c1 - c);
            runs[count] = (c - c0, len, oy * g.sh * wr + ox);
            count += 1;
            c += len;
        }
        let runs = &runs[..count];
        let (mut ci, mut ki, mut kj) = (0, 0, 0);
        for drow in panel.chunks_exact_mut(nr) {
            let base = ci * pplane + ki * g.dh * wr + tap_column(g, wq, kj);
            for &(at, len, off) in runs {
                let s0 = base + off;
                copy_short(&mut drow[at..at + len], &padded[s0..s0 + len]);
            }
            fill_short(&mut drow[c1 - c0..], zero);
            kj += 1;
            if kj == g.kw {
                kj = 0;
                ki += 1;
                if ki == g.kh {
                    ki = 0;
                    ci += 1;
                }
            }
        }
    }
}

/// [`unfold_tile_packed`] of columns `j0..j1` into `dst`, the panels shared out among the
/// threads when the product that reads them is split (`par`): a tile unfolded by one thread
/// kept the other waiting (a 512-channel 7 x 7 layer's 1 MB of patches was a tenth of it).
fn unfold_packed_split<T: Copy + Default + Send + Sync>(
    padded: &[T],
    g: &Window,
    j0: usize,
    j1: usize,
    nr: usize,
    dst: &mut [T],
    par: Parallelism,
) {
    let panels = (j1 - j0).div_ceil(nr);
    match par {
        Parallelism::Rayon(threads) if threads > 1 && panels > 1 => {
            let per = panels.div_ceil(threads);
            let panel_len = dst.len() / panels;
            crate::threads::parallel_region();
            dst.par_chunks_mut(per * panel_len)
                .enumerate()
                .for_each(|(t, part)| {
                    let a0 = j0 + t * per * nr;
                    let a1 = (a0 + per * nr).min(j1);
                    unfold_tile_packed(padded, g, a0, a1, nr, part);
                });
        }
        _ => unfold_tile_packed(padded, g, j0, j1, nr, dst),
    }
}

/// `dst.fill(v)` for the short (usually empty) pieces of [`unfold_tile_packed`].
#[inline(always)]
fn fill_short<T: Copy>(dst: &mut [T], v: T) {
    for x in dst.iter_mut() {
        *x = v;
    }
}

/// The outputs `o` in `0..out` with `0 <= o * stride + shift < len`, as a range.
pub(crate) fn valid_range(shift: isize, stride: usize, len: usize, out: usize) -> (usize, usize) {
    let s = stride as isize;
    let lo = if shift < 0 { (-shift + s - 1) / s } else { 0 };
    let end = len as isize - shift;
    let hi = if end <= 0 { 0 } else { (end + s - 1) / s };
    let lo = (lo as usize).min(out);
    (lo, (hi as usize).clamp(lo, out))
}

/// Output planes of at most this many columns may run transposed (one tile per plane).
const MAX_TRANSPOSED: usize = 512;

/// `Some((mr, nr))` of the GEMM kernel when a plane of `l` output columns and `og` output
/// channels should run transposed: `C^T [l, og] = patches^T [l, kk] @ W^T [kk, og]`, the
/// patches packed as `mr`-row panels and the weights as `nr`-column panels. Chosen when that
/// pads the product at least 10% less than the direct form: a 7 x 7 plane (49 columns) filled
/// two 48-column panels, twice its work, where 512 channels over 49 rows pad ~18%.
fn transposed_tile<T: ConvFloat>(l: usize, og: usize) -> Option<(usize, usize)> {
    let (mr, nr) = crate::cpu::blocked_gemm::micro_tile::<T>()?;
    let direct = l.div_ceil(nr) * nr * og.div_ceil(mr) * mr;
    let flipped = l.div_ceil(mr) * mr * og.div_ceil(nr) * nr;
    (l <= MAX_TRANSPOSED && nr <= MAX_PANEL && mr <= MAX_PANEL && flipped * 10 < direct * 9)
        .then_some((mr, nr))
}

/// How an output plane of `l` columns is cut into tiles: at multiples of the GEMM's micro-panel
/// width (a tile of 341 columns left its last 48-column micro-tile 5 columns full, 11% of the
/// multiply-adds wasted), in a number of tiles that the threads share evenly.
#[derive(Clone, Copy, Debug)]
struct Tiling {
    l: usize,
    /// Columns per micro-panel (tile bounds are multiples of it, except the plane's end).
    unit: usize,
    /// Micro-panels in the plane.
    panels: usize,
    tiles: usize,
}

impl Tiling {
    /// The whole plane as one tile.
    fn whole(l: usize) -> Tiling {
        Tiling {
            l,
            unit: l.max(1),
            panels: 1,
            tiles: 1,
        }
    }

    /// Tiles whose unfolded patches (`kk` rows) fit [`TILE_BYTES`], rounded to whole
    /// micro-panels, their count a multiple of `threads` when there are several.
    fn new<T: ConvFloat>(l: usize, kk: usize, threads: usize) -> Tiling {
        let max = (TILE_BYTES / (kk * std::mem::size_of::<T>()).max(1)).max(MIN_TILE);
        let unit = crate::cpu::blocked_gemm::panel_cols::<T>()
            .unwrap_or(1)
            .clamp(1, MIN_TILE);
        let panels = l.div_ceil(unit);
        let per = (max / unit).max(1);
        let mut tiles = panels.div_ceil(per);
        if threads > 1 && tiles > 1 {
            tiles = (tiles.div_ceil(threads) * threads).min(panels);
        }
        Tiling {
            l,
            unit,
            panels,
            tiles,
        }
    }

    /// Output columns `j0..j1` of tile `t`.
    fn bounds(&self, t: usize) -> (usize, usize) {
        let at = |t: usize| (self.panels * t / self.tiles * self.unit).min(self.l);
        (at(t), at(t + 1))
    }
}

thread_local! {
    /// Tests set this to run the im2col-then-pack path on machines with a packed kernel.
    static FORCE_UNPACKED: Cell<bool> = const { Cell::new(false) };
    /// Tests set this to run the unfolded tiles where the direct path would apply.
    static FORCE_TILED: Cell<bool> = const { Cell::new(false) };
    /// Tests set this to read uncached weights in place, as a one-call process does.
    static FORCE_IN_PLACE: Cell<bool> = const { Cell::new(false) };
    /// Tests set this to split layers across threads however small they are.
    static FORCE_SPLIT: Cell<bool> = const { Cell::new(false) };
}

/// Whether a test set `flag` on this thread (never outside tests).
fn forced(flag: &'static std::thread::LocalKey<Cell<bool>>) -> bool {
    cfg!(test) && flag.with(Cell::get)
}

/// Geometry of one GEMM: `dst[m, n] (+)= lhs[m, k] @ rhs[k, n]`, strides in elements.
struct Mm<T> {
    m: usize,
    n: usize,
    k: usize,
    dst: *mut T,
    dst_rs: isize,
    lhs: *const T,
    lhs_rs: isize,
    rhs: *const T,
    rhs_rs: isize,
    read_dst: bool,
}

impl<T: ConvFloat> Mm<T> {
    /// Runs the product (row-major operands with unit column strides).
    ///
    /// # Safety
    /// Every pointer must address a live buffer covering its `[rows, cols]` block with the given
    /// row stride, `dst` must not overlap `lhs`/`rhs`, and no other thread may touch `dst`'s
    /// block during the call.
    unsafe fn run(&self, par: Parallelism) {
        let p = self.problem();
        // SAFETY: forwarded from the caller's contract.
        if unsafe { crate::cpu::blocked_gemm::gemm(&p, threads_of(par)) } {
            return;
        }
        // SAFETY: forwarded from the caller's contract.
        unsafe {
            gemm::gemm::<T>(
                self.m,
                self.n,
                self.k,
                self.dst,
                1,
                self.dst_rs,
                self.read_dst,
                self.lhs,
                1,
                self.lhs_rs,
                self.rhs,
                1,
                self.rhs_rs,
                T::ONE,
                T::ONE,
                false,
                false,
                false,
                par,
            )
        }
    }

    /// Runs the product with operands given as packed micro-panels (their pointers are not
    /// read); see [`crate::cpu::blocked_gemm::gemm_packed`]. Returns `false` when this CPU
    /// has no packed kernel for `T` (then nothing was written).
    ///
    /// # Safety
    /// As [`Mm::run`] for `dst` and unpacked operands; packed ones must hold all their panels.
    unsafe fn run_packed(&self, pre: Prepacked<T>, par: Parallelism) -> bool {
        // SAFETY: forwarded from the caller's contract.
        unsafe { crate::cpu::blocked_gemm::gemm_packed(&self.problem(), pre, threads_of(par)) }
    }

    /// [`Mm::run_packed`] with C's columns `csc` apart (and its rows `dst_rs` apart), and an
    /// unpacked `rhs` stored transposed: element `(q, j)` at `rhs[j * rhs_rs + q]`.
    ///
    /// # Safety
    /// As [`Mm::run_packed`], with C covering `m` rows and `n` columns at these strides.
    unsafe fn run_packed_cols(&self, pre: Prepacked<T>, csc: usize, par: Parallelism) -> bool {
        let p = crate::cpu::blocked_gemm::Problem {
            csc: csc as isize,
            rsb: 1,
            csb: self.rhs_rs,
            ..self.problem()
        };
        // SAFETY: forwarded from the caller's contract.
        unsafe { crate::cpu::blocked_gemm::gemm_packed(&p, pre, threads_of(par)) }
    }

    /// The product for the blocked GEMM.
    fn problem(&self) -> crate::cpu::blocked_gemm::Problem<T> {
        crate::cpu::blocked_gemm::Problem {
            m: self.m,
            n: self.n,
            k: self.k,
            a: self.lhs,
            rsa: self.lhs_rs,
            csa: 1,
            b: self.rhs,
            rsb: self.rhs_rs,
            csb: 1,
            c: self.dst,
            rsc: self.dst_rs,
            csc: 1,
            alpha: T::ONE,
            beta: T::ONE,
            read_c: self.read_dst,
        }
    }
}

/// The thread count a `gemm` crate parallelism stands for.
fn threads_of(par: Parallelism) -> usize {
    match par {
        Parallelism::None => 1,
        Parallelism::Rayon(t) => t.max(1),
    }
}

/// `out = conv2d(x, w) + bias` for contiguous `x: [n, c, h, w]`, `w: [o, c / groups, kh, kw]`
/// and `bias: [o]` of element type `T`; `out` is a fresh contiguous `[n, o, oh, ow]` tensor.
pub(crate) fn conv2d_tiled<T: ConvFloat>(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    shape: ConvShape,
    out: &Tensor,
    threads: usize,
) -> Result<()> {
    let om = out.meta_snapshot();
    if om.dtype != T::DTYPE
        || !om.is_contiguous()
        || om.numel() != shape.n * shape.o * shape.win.oh * shape.win.ow
    {
        return Err(Error::runtime(
            "conv2d: internal error: output buffer does not match the problem",
        ));
    }
    let optr = OutPtr(om.data_ptr() as *mut T);
    with_slice::<T, _>(x, |xs| {
        with_slice::<T, _>(w, |ws| match bias {
            Some(b) => with_slice::<T, _>(b, |bs| {
                conv2d_slices(xs, ws, w, Some(bs), shape, optr, threads)
            })?,
            None => conv2d_slices(xs, ws, w, None, shape, optr, threads),
        })?
    })?
}

/// [`conv2d_tiled`] on borrowed operands.
fn conv2d_slices<T: ConvFloat>(
    x: &[T],
    w: &[T],
    w_tensor: &Tensor,
    bias: Option<&[T]>,
    s: ConvShape,
    out: OutPtr<T>,
    threads: usize,
) -> Result<()> {
    let g = s.win;
    let (cg, og) = (s.c / s.groups, s.o / s.groups);
    let kk = cg * g.kh * g.kw;
    let l = g.oh * g.ow;
    let plane = g.h * g.w;
    if x.len() < s.n * s.c * plane
        || w.len() < s.o * kk
        || bias.is_some_and(|b| b.len() < s.o)
        || l == 0
        || s.n == 0
        || og == 0
    {
        return if l == 0 || s.n == 0 || og == 0 {
            Ok(())
        } else {
            Err(Error::runtime(
                "conv2d: internal error: operand sizes do not match",
            ))
        };
    }
    // A layer too small to be worth a fork-join runs on this thread alone: split, it also kept
    // a second core spinning for the rest of the model (wav2vec2's grouped positional
    // convolution, 32 tiny tasks, made the whole model 5% slower at 2 threads than at 1).
    let macs = (s.n * s.o).saturating_mul(l).saturating_mul(kk);
    let threads = if macs < crate::cpu::blocked_gemm::parallel_work() && !forced(&FORCE_SPLIT) {
        1
    } else {
        threads
    };
    let pointwise = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0;
    let pointwise = pointwise && g.oh == g.h && g.ow == g.w;
    let tiling = if pointwise {
        Tiling::whole(l)
    } else {
        Tiling::new::<T>(l, kk, threads)
    };
    let tiles = tiling.tiles;
    // Patches are unfolded straight into the GEMM's packed layout when it has a kernel for `T`.
    let packed_nr = crate::cpu::blocked_gemm::panel_cols::<T>()
        .filter(|&nr| !pointwise && nr <= MAX_PANEL && !forced(&FORCE_UNPACKED));
    // Small planes whose last micro-panel would be mostly empty run transposed.
    let transposed = packed_nr.and_then(|_| transposed_tile::<T>(l, og));
    // f32 layers on AVX-512 and AVX2 read their taps in place from the padded planes (split
    // into stride phases when strided).
    let direct = std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>()
        && packed_nr.is_some()
        && !forced(&FORCE_TILED)
        && transposed.is_none()
        && conv_direct::applies(
            &g,
            phase_dims(&g).1,
            crate::cpu::blocked_gemm::micro_tile::<T>(),
        );
    let padded_buf = match packed_nr {
        Some(_) if direct && (g.sh > 1 || g.sw > 1) => Some(phase_planes(
            x,
            s.n * s.c,
            &g,
            threads,
            conv_direct::slack(&g),
            T::take_buf(),
        )),
        Some(_) if direct || padded_dims(&g) != (g.h, g.w) || g.sw > 1 => {
            let slack = if direct { conv_direct::slack(&g) } else { 0 };
            Some(padded_planes(
                x,
                s.n * s.c,
                &g,
                threads,
                slack,
                T::take_buf(),
            ))
        }
        _ => None,
    };
    let padded: &[T] = padded_buf.as_deref().unwrap_or(x);
    // Each group's weights, packed once for all of its tiles.
    // (Kept between calls by `packed_weights` once a weight is seen twice unchanged.)
    let wlen = match transposed {
        Some((_, nr)) => og.div_ceil(nr) * nr * kk,
        None => packed_lhs_len::<T>(og, kk).unwrap_or(0),
    };
    let pack_all = |dst: &mut [T]| {
        for (gi, dst) in dst.chunks_exact_mut(wlen.max(1)).enumerate() {
            let wg = &w[gi * og * kk..(gi + 1) * og * kk];
            if transposed.is_some() {
                pack_rhs_transposed(wg, og, kk, dst);
            } else {
                pack_lhs(wg, og, kk, kk, dst);
            }
        }
    };
    // One image run transposed reads each weight once: uncached, the GEMM packs it block by
    // block into its own small buffer, instead of into a scratch copy of the layer's weights
    // first (ResNet-18's deep layers hold megabytes each; packing them whole, into fresh
    // pages, was a fifth of a first forward).
    let lazy_b = transposed.is_some() && s.n == 1;
    // A process that runs its model once (`set_keep_freed_buffers(false)`, as `tsrs run`)
    // packs no weight it has not cached: the direct kernel reads the weights in place and the
    // tiled GEMM packs them block by block into its own buffer. Packing a layer whole wrote
    // fresh pages on every layer (the buffer is not kept in that mode), each page fault
    // costing more than packing the block again for every tile.
    let in_place = (!crate::buffer_cache::keep_freed() || forced(&FORCE_IN_PLACE))
        && transposed.is_none()
        && (!direct
            || crate::cpu::blocked_gemm::micro_tile::<T>().is_some_and(|(mr, _)| og % mr == 0));
    let mut wbuf = T::take_buf();
    let cached = match packed_nr {
        Some(_) if wlen > 0 => {
            let c = crate::cpu::packed_weights::cached::<T>(
                w_tensor,
                s.groups,
                u8::from(transposed.is_some()),
                s.groups * wlen,
                pack_all,
            );
            if c.is_none() && !(lazy_b || in_place) {
                crate::cpu::blocked_gemm::reserve_to(&mut wbuf, s.groups * wlen);
                wbuf.resize(s.groups * wlen, T::default());
                pack_all(&mut wbuf);
            }
            c
        }
        _ => None,
    };
    let all_w: &[T] = match (&cached, lazy_b || in_place) {
        (Some(v), _) => &v[..],
        // Nothing packed: the kernels read the weights (`wbuf` holds a previous call's data).
        (None, true) => &[],
        (None, false) => &wbuf[..],
    };
    let packed_w: Vec<&[T]> = if wlen > 0 && packed_nr.is_some() {
        all_w.chunks_exact(wlen).collect()
    } else {
        Vec::new()
    };
    if let (Some((mr, _)), Some(_)) = (transposed, packed_nr) {
        let tasks = s.n * s.groups;
        let outer = threads > 1 && tasks >= 2 * threads;
        let pp = padded_dims(&g).0 * phased_row(&g).1;
        let one = |t: usize| {
            let (b, gi) = (t / s.groups, t % s.groups);
            let dst = out.get().wrapping_add((b * s.o + gi * og) * l);
            if let Some(bias) = bias {
                // SAFETY: the group's `og` output planes of `l` values at `dst` are inside the
                // output and only this task writes them (tasks partition (batch, group)).
                unsafe { fill_bias(dst, &bias[gi * og..(gi + 1) * og], l, l) };
            }
            let pplanes = &padded[(b * s.c + gi * cg) * pp..(b * s.c + (gi + 1) * cg) * pp];
            let small = og * kk * l < SERIAL_WORK && !forced(&FORCE_SPLIT);
            let par = if outer || threads <= 1 || small {
                Parallelism::None
            } else {
                Parallelism::Rayon(threads)
            };
            T::with_scratch(l.div_ceil(mr) * mr * kk, |buf| {
                // The patches as the GEMM's packed A: `mr` output positions by all taps.
                unfold_packed_split(pplanes, &g, 0, l, mr, buf, par);
                let m = Mm {
                    m: l,
                    n: og,
                    k: kk,
                    dst,
                    dst_rs: 1,
                    lhs: std::ptr::null(),
                    lhs_rs: 0,
                    rhs: std::ptr::null(),
                    rhs_rs: 0,
                    read_dst: bias.is_some(),
                };
                // Packed weights, or (`lazy_b`) the group's `[og, kk]` weights read as their
                // transpose `[kk, og]`: row stride 1, column stride `kk`.
                let pre = Prepacked {
                    a: Some(buf.as_ptr()),
                    b: packed_w.get(gi).map(|w| w.as_ptr()),
                };
                let m = Mm {
                    rhs: w[gi * og * kk..].as_ptr(),
                    rhs_rs: kk as isize,
                    ..m
                };
                // SAFETY: `buf` holds the `[l, kk]` patches as `mr`-row panels and
                // `packed_w[gi]` (when there) the group's `[kk, og]` transposed weights as
                // `nr`-column panels, both for the kernel that runs them; otherwise the
                // group's `og x kk` weights lie in `w` from `gi * og * kk`. C is the group's
                // output planes read as `[l, og]` (row stride 1, column stride `l`), this
                // task's alone.
                let done = unsafe { m.run_packed_cols(pre, l, par) };
                debug_assert!(done, "transposed_tile came from the kernel that runs it");
            });
        };
        if outer {
            crate::threads::parallel_region();
            (0..tasks).into_par_iter().for_each(one);
        } else {
            (0..tasks).for_each(one);
        }
        drop(packed_w);
        T::give_buf(wbuf);
        if let Some(b) = padded_buf {
            T::give_buf(b);
        }
        return Ok(());
    }
    if direct {
        let f32s = |v: &[T]| {
            // SAFETY: `direct` holds only when `T` is f32, so the slice is one of f32s.
            unsafe { std::slice::from_raw_parts(v.as_ptr() as *const f32, v.len()) }
        };
        let weights: Vec<&[f32]> = packed_w.iter().map(|v| f32s(v)).collect();
        let problem = conv_direct::Direct {
            padded: f32s(padded),
            pplane: g.sh * g.sw * phase_dims(&g).0 * phase_dims(&g).1,
            phase: phase_dims(&g).0 * phase_dims(&g).1,
            row: phase_dims(&g).1,
            packed_w: &weights,
            weights: f32s(w),
            bias: bias.map(f32s),
            n: s.n,
            c: s.c,
            o: s.o,
            groups: s.groups,
            g,
        };
        // SAFETY: the output is a fresh contiguous `[n, o, oh, ow]` f32 tensor (checked by
        // the caller) that only this call writes; `padded` holds every image's padded planes
        // plus the slack, the weights are packed for the direct kernel's micro-tile
        // (`conv_direct::applies` checked the kernel and its tile) or, none packed, `w` holds
        // all `[o, kk]` of them with `og` a multiple of the tile's rows (`in_place`).
        unsafe { problem.run(conv_direct::Out(out.get() as *mut f32), threads) };
        drop(weights);
        drop(packed_w);
        T::give_buf(wbuf);
        if let Some(b) = padded_buf {
            T::give_buf(b);
        }
        return Ok(());
    }
    let tasks = s.n * s.groups * tiles;
    // Parallel over tiles when there are enough of them; otherwise inside each GEMM.
    let outer = threads > 1 && tasks >= 2 * threads;
    let one = |t: usize| {
        let (bg, ti) = (t / tiles, t % tiles);
        let (b, gi) = (bg / s.groups, bg % s.groups);
        let (j0, j1) = tiling.bounds(ti);
        let rows = (b * s.o + gi * og) * l;
        // The multiply-adds the micro-kernel runs (whole micro-panels): the 1-column last tile
        // of a 7 x 7 plane (49 columns) is a whole panel's work and ran on one thread.
        let work = og * kk * (j1 - j0).div_ceil(tiling.unit) * tiling.unit;
        let par = if outer || threads <= 1 || (work < SERIAL_WORK && !forced(&FORCE_SPLIT)) {
            Parallelism::None
        } else {
            Parallelism::Rayon(threads)
        };
        let planes = &x[(b * s.c + gi * cg) * plane..(b * s.c + (gi + 1) * cg) * plane];
        let filt = &w[gi * og * kk..(gi + 1) * og * kk];
        // SAFETY: element `rows + j0` lies inside the `[n, o, l]` output (`b < n`, the group's
        // first row `< o`, `j0 < l`).
        let dst = unsafe { out.get().add(rows + j0) };
        if let Some(bias) = bias {
            // SAFETY: the block of `og` rows (stride `l`) by `j1 - j0` columns at `dst` is inside
            // the output, and tasks partition (batch, group, tile), so only this task writes it.
            unsafe { fill_bias(dst, &bias[gi * og..(gi + 1) * og], l, j1 - j0) };
        }
        let mm = |rhs: *const T, rhs_rs: usize| Mm {
            m: og,
            n: j1 - j0,
            k: kk,
            dst,
            dst_rs: l as isize,
            lhs: filt.as_ptr(),
            lhs_rs: kk as isize,
            rhs,
            rhs_rs: rhs_rs as isize,
            read_dst: bias.is_some(),
        };
        if pointwise {
            // SAFETY: `filt` is `[og, kk]`, `planes` is `[kk, l]` (cg == kk planes of l) and the
            // destination block `[og, l]` with row stride `l` is this task's, disjoint from
            // both inputs (the output is a fresh tensor).
            unsafe { mm(planes.as_ptr(), l).run(par) };
        } else if let Some(nr) = packed_nr {
            let panels = (j1 - j0).div_ceil(nr);
            let pp = padded_dims(&g).0 * phased_row(&g).1;
            let pplanes = &padded[(b * s.c + gi * cg) * pp..(b * s.c + (gi + 1) * cg) * pp];
            T::with_scratch(panels * kk * nr, |buf| {
                unfold_packed_split(pplanes, &g, j0, j1, nr, buf, par);
                let m = mm(std::ptr::null(), 0);
                let pre = Prepacked {
                    a: packed_w.get(gi).map(|pw| pw.as_ptr()),
                    b: Some(buf.as_ptr()),
                };
                // SAFETY: `buf` holds the `[kk, j1 - j0]` patches as `panels` micro-panels of
                // `nr` columns by `kk` rows, `packed_w[gi]` (when there) the group's `[og, kk]`
                // weights packed for the same kernel, else `filt` holds them as `[og, kk]`; the
                // destination block is as below.
                let done = unsafe { m.run_packed(pre, par) };
                debug_assert!(done, "packed_nr came from the kernel that runs it");
            });
        } else {
            T::with_scratch(kk * (j1 - j0), |cols| {
                unfold_tile(planes, &g, j0, j1, cols);
                // SAFETY: `cols` is `[kk, j1 - j0]`, `filt` is `[og, kk]`, and the destination
                // block (`og` rows of `j1 - j0` columns, row stride `l`) belongs to this task
                // alone; the scratch buffer is thread-local, so no other task reads or writes it.
                unsafe { mm(cols.as_ptr(), j1 - j0).run(par) };
            });
        }
    };
    if outer {
        crate::threads::parallel_region();
        (0..tasks).into_par_iter().for_each(one);
    } else {
        (0..tasks).for_each(one);
    }
    drop(packed_w);
    T::give_buf(wbuf);
    if let Some(b) = padded_buf {
        T::give_buf(b);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Direct nested-loop convolution as the reference.
    fn reference(x: &[f64], w: &[f64], bias: Option<&[f64]>, s: &ConvShape) -> Vec<f64> {
        let g = &s.win;
        let (cg, og) = (s.c / s.groups, s.o / s.groups);
        let mut out = vec![0.0; s.n * s.o * g.oh * g.ow];
        for b in 0..s.n {
            for oc in 0..s.o {
                let gi = oc / og;
                for oy in 0..g.oh {
                    for ox in 0..g.ow {
                        let mut acc = bias.map(|v| v[oc]).unwrap_or(0.0);
                        for ci in 0..cg {
                            for ki in 0..g.kh {
                                for kj in 0..g.kw {
                                    let iy = (oy * g.sh + ki * g.dh) as isize - g.ph as isize;
                                    let ix = (ox * g.sw + kj * g.dw) as isize - g.pw as isize;
                                    if iy < 0 || ix < 0 || iy >= g.h as isize || ix >= g.w as isize
                                    {
                                        continue;
                                    }
                                    let xv = x[((b * s.c + gi * cg + ci) * g.h + iy as usize)
                                        * g.w
                                        + ix as usize];
                                    let wv = w[((oc * cg + ci) * g.kh + ki) * g.kw + kj];
                                    acc += xv * wv;
                                }
                            }
                        }
                        out[((b * s.o + oc) * g.oh + oy) * g.ow + ox] = acc;
                    }
                }
            }
        }
        out
    }

    fn window(h: usize, w: usize, k: usize, stride: usize, pad: usize, dil: usize) -> Window {
        let oh = (h + 2 * pad - dil * (k - 1) - 1) / stride + 1;
        let ow = (w + 2 * pad - dil * (k - 1) - 1) / stride + 1;
        Window {
            h,
            w,
            kh: k,
            kw: k,
            sh: stride,
            sw: stride,
            ph: pad,
            pw: pad,
            dh: dil,
            dw: dil,
            oh,
            ow,
        }
    }

    fn check(s: ConvShape, with_bias: bool, threads: usize) {
        check_as::<f64>(s, with_bias, threads, |v| v);
        check_as::<f32>(s, with_bias, threads, |v| v as f32);
    }

    /// One case in element type `T` on integer-valued data (exact in f32 too), through the
    /// packed path (when the CPU has a kernel) and the im2col-then-pack path.
    fn check_as<T: ConvFloat + Into<f64>>(
        s: ConvShape,
        with_bias: bool,
        threads: usize,
        from: fn(f64) -> T,
    ) {
        let g = s.win;
        let xs: Vec<f64> = (0..s.n * s.c * g.h * g.w)
            .map(|i| ((i * 7919) % 23) as f64 - 11.0)
            .collect();
        let ws: Vec<f64> = (0..s.o * (s.c / s.groups) * g.kh * g.kw)
            .map(|i| ((i * 104729) % 13) as f64 - 6.0)
            .collect();
        let bs: Vec<f64> = (0..s.o).map(|i| i as f64 * 0.5).collect();
        let conv = |v: &[f64]| v.iter().map(|&x| from(x)).collect::<Vec<T>>();
        let x =
            Tensor::from_vec(conv(&xs), &[s.n as i64, s.c as i64, g.h as i64, g.w as i64]).unwrap();
        let w = Tensor::from_vec(conv(&ws), &[ws.len() as i64]).unwrap();
        let b = Tensor::from_vec(conv(&bs), &[s.o as i64]).unwrap();
        let want = reference(&xs, &ws, with_bias.then_some(&bs[..]), &s);
        // Each path with uncached weights read in place (a one-call process), with uncached
        // weights packed for the call, and with cached packed weights (a weight seen twice).
        let fresh_w = || Tensor::from_vec(conv(&ws), &[ws.len() as i64]).unwrap();
        let modes = [(false, false), (false, true), (true, false)];
        for ((unpacked, tiled), (w, in_place)) in modes.into_iter().flat_map(|m| {
            let seen = |_| (w.clone(), false);
            [(fresh_w(), true), (fresh_w(), false), seen(0), seen(1)].map(move |v| (m, v))
        }) {
            // NaN-filled: every element must be written (the real output is uninitialized).
            let out = Tensor::from_vec(
                vec![from(f64::NAN); s.n * s.o * g.oh * g.ow],
                &[s.n as i64, s.o as i64, g.oh as i64, g.ow as i64],
            )
            .unwrap();
            FORCE_UNPACKED.with(|c| c.set(unpacked));
            FORCE_TILED.with(|c| c.set(tiled));
            FORCE_IN_PLACE.with(|c| c.set(in_place));
            FORCE_SPLIT.with(|c| c.set(true));
            let r = conv2d_tiled::<T>(&x, &w, with_bias.then_some(&b), s, &out, threads);
            FORCE_UNPACKED.with(|c| c.set(false));
            FORCE_TILED.with(|c| c.set(false));
            FORCE_IN_PLACE.with(|c| c.set(false));
            FORCE_SPLIT.with(|c| c.set(false));
            r.unwrap();
            let got: Vec<f64> = out.to_vec::<T>().into_iter().map(Into::into).collect();
            assert_eq!(
                got,
                want,
                "{s:?} bias={with_bias} {:?} unpacked={unpacked} tiled={tiled}",
                T::DTYPE
            );
        }
    }

    #[test]
    fn matches_direct_convolution() {
        // Integer-valued data: every product and sum is exact, so results must be identical.
        for (h, w, k, stride, pad, dil) in [
            (7, 9, 3, 1, 1, 1),
            (8, 8, 3, 2, 1, 1),
            (9, 5, 2, 1, 0, 2),
            (6, 6, 1, 1, 0, 1),
            (6, 6, 1, 2, 0, 1),
            (40, 37, 3, 1, 2, 1),
            (5, 5, 5, 3, 4, 1),
            // Dilated taps that land entirely in the padding (DeepLab's ASPP on small maps).
            (6, 5, 3, 1, 6, 6),
            (4, 3, 3, 1, 12, 12),
            // Output rows narrower and wider than a micro-panel, stride 2 with padding.
            (3, 70, 3, 1, 1, 1),
            (21, 53, 3, 2, 1, 1),
            (11, 100, 3, 2, 3, 2),
            // Strided columns read from phase-split rows: AlexNet's 11 x 11 stride 4, a
            // dilation that is not a multiple of the stride, stride 3 without padding.
            (23, 31, 11, 4, 2, 1),
            (17, 19, 3, 2, 0, 3),
            (10, 64, 2, 3, 0, 1),
            // Rows and column phases no tap reads are skipped when padding: 1 x 1 stride 2
            // (odd rows and phase 1 unread) and 3, a 2 x 2 stride 2 (both phases read).
            (7, 56, 1, 2, 0, 1),
            (8, 9, 1, 3, 0, 1),
            (9, 12, 2, 2, 1, 1),
        ] {
            for (c, o, groups) in [(3, 4, 1), (4, 6, 2)] {
                for threads in [1, 2] {
                    let s = ConvShape {
                        n: 2,
                        c,
                        o,
                        groups,
                        win: window(h, w, k, stride, pad, dil),
                    };
                    check(s, true, threads);
                    check(s, false, threads);
                }
            }
        }
    }

    #[test]
    fn direct_layers_match() {
        // The direct path (where the CPU has it): partial channel blocks and micro-tiles, more
        // than one block of output channels and of taps, dilation, asymmetric reach, a grid
        // whose last tile ends past the planes (read from the slack).
        let g = window(20, 30, 3, 1, 1, 1);
        let tile = crate::cpu::blocked_gemm::micro_tile::<f32>();
        if conv_direct::kernel().is_some_and(|k| tile == Some((k.mr, k.nr))) {
            assert!(conv_direct::applies(&g, phase_dims(&g).1, tile));
            let stem = window(224, 224, 7, 2, 3, 1);
            assert_eq!(phase_dims(&stem), (115, 115));
            assert!(conv_direct::applies(&stem, 115, tile));
            // 8 of 12 grid columns discarded; a stride-2 window of 3 x 3 and 1 x 1.
            let wide = window(20, 12, 9, 1, 0, 1);
            assert_eq!((wide.ow, phase_dims(&wide).1), (4, 12));
            assert!(!conv_direct::applies(&wide, 12, tile));
            assert!(!conv_direct::applies(&window(56, 56, 3, 2, 1, 1), 29, tile));
            assert!(!conv_direct::applies(&window(56, 56, 1, 2, 0, 1), 28, tile));
        }
        for (h, w, k, stride, pad, dil, c, o, groups) in [
            (20, 30, 3, 1, 1, 1, 3, 5, 1),
            (9, 33, 3, 1, 1, 1, 80, 70, 1),
            (12, 40, 3, 1, 2, 2, 6, 10, 2),
            (5, 50, 5, 1, 2, 1, 4, 130, 1),
            (3, 17, 1, 1, 0, 1, 9, 9, 3),
            // Whole micro-panels of output channels (8 rows on AVX-512, 6 on AVX2), which a
            // one-call process reads in place, grouped and over more than one block of taps.
            (9, 33, 3, 1, 1, 1, 16, 48, 1),
            (12, 40, 3, 1, 2, 2, 8, 48, 2),
            (7, 20, 3, 1, 1, 1, 80, 48, 1),
            // Strided, from the planes split into phases: a stem (7 x 7 stride 2, padding 3)
            // with odd and even sizes, stride 3, a dilation that is not a multiple of the
            // stride, unequal phases (odd padded sizes), more than one block of taps, an even
            // window.
            (37, 45, 7, 2, 3, 1, 3, 16, 1),
            (36, 50, 7, 2, 3, 1, 3, 10, 1),
            (29, 61, 7, 3, 3, 1, 5, 7, 1),
            (25, 96, 5, 2, 2, 3, 4, 10, 2),
            (21, 53, 5, 2, 2, 1, 40, 24, 1),
            (16, 64, 4, 2, 1, 1, 8, 16, 1),
        ] {
            let g = window(h, w, k, stride, pad, dil);
            if conv_direct::kernel().is_some_and(|k| tile == Some((k.mr, k.nr))) {
                assert!(transposed_tile::<f32>(g.oh * g.ow, o / groups).is_none());
                assert!(conv_direct::applies(&g, phase_dims(&g).1, tile), "{g:?}");
            }
            for threads in [1, 2] {
                let s = ConvShape {
                    n: 2,
                    c,
                    o,
                    groups,
                    win: g,
                };
                check(s, true, threads);
                check(s, false, threads);
            }
        }
    }

    #[test]
    fn padding_only_on_the_far_side_reads_zeros() {
        // `padding='same'` with an even kernel: one more output row and column than the
        // symmetric padding (here none) gives, whose taps read past the input.
        for (h, w, k) in [(5, 7, 2), (6, 60, 4)] {
            let mut win = window(h, w, k, 1, (k - 2) / 2, 1);
            win.oh += 1;
            win.ow += 1;
            for threads in [1, 2] {
                let s = ConvShape {
                    n: 2,
                    c: 3,
                    o: 4,
                    groups: 1,
                    win,
                };
                check(s, true, threads);
            }
        }
    }

    #[test]
    fn small_planes_with_many_channels_run_transposed() {
        // Many output channels over few columns: the product runs as C^T = P^T W^T (where the
        // CPU has a packed kernel), writing the output planes column by column.
        // (ResNet's 7 x 7 planes run transposed with the AVX-512 tile, not with AVX2's 6 x 16;
        // the 2 x 3 planes below do with both.)
        if crate::cpu::blocked_gemm::micro_tile::<f32>().is_some() {
            assert!(transposed_tile::<f32>(6, 100).is_some());
            assert!(transposed_tile::<f32>(3136, 64).is_none());
        }
        for (h, w, k, stride, pad, dil) in [
            (7, 7, 3, 1, 1, 1),
            (13, 13, 3, 2, 1, 1),
            (4, 5, 3, 1, 0, 1),
            (9, 9, 3, 1, 2, 2),
        ] {
            // One image reads the weights unpacked on their first sighting (several images
            // pack them once for all).
            for (n, c, o, groups) in [
                (2, 5, 100, 1),
                (2, 6, 100, 2),
                (1, 5, 100, 1),
                (1, 6, 100, 2),
            ] {
                for threads in [1, 2] {
                    let s = ConvShape {
                        n,
                        c,
                        o,
                        groups,
                        win: window(h, w, k, stride, pad, dil),
                    };
                    check(s, true, threads);
                    check(s, false, threads);
                }
            }
        }
    }

    #[test]
    fn repeated_calls_reuse_packed_weights_until_they_change() {
        // The second call caches the packed weights and the third reads them; an in-place write
        // (as the operator layer records it) must be seen by the next call.
        let s = ConvShape {
            n: 1,
            c: 5,
            o: 9,
            groups: 1,
            win: window(7, 7, 3, 1, 1, 1),
        };
        repeated_calls(s);
        // Many channels over a 7 x 7 plane: the transposed layout is cached.
        repeated_calls(ConvShape { o: 100, ..s });
    }

    fn repeated_calls(s: ConvShape) {
        let g = s.win;
        let xs: Vec<f32> = (0..s.n * s.c * g.h * g.w)
            .map(|i| ((i * 31) % 17) as f32 - 8.0)
            .collect();
        let mut ws: Vec<f32> = (0..s.o * s.c * 9)
            .map(|i| ((i * 13) % 7) as f32 - 3.0)
            .collect();
        let x = Tensor::from_vec(xs.clone(), &[1, 5, 7, 7]).unwrap();
        let w = Tensor::from_vec(ws.clone(), &[s.o as i64, 5, 3, 3]).unwrap();
        let run = || {
            let out = Tensor::from_vec(vec![f32::NAN; s.o * 49], &[1, s.o as i64, 7, 7]).unwrap();
            conv2d_tiled::<f32>(&x, &w, None, s, &out, 1).unwrap();
            out.to_vec::<f32>()
        };
        let want = |ws: &[f32]| {
            let f = |v: &[f32]| v.iter().map(|&a| a as f64).collect::<Vec<_>>();
            reference(&f(&xs), &f(ws), None, &s)
                .into_iter()
                .map(|v| v as f32)
                .collect::<Vec<_>>()
        };
        for _ in 0..3 {
            assert_eq!(run(), want(&ws));
        }
        ws[0] += 1.0;
        // SAFETY: `w` is a contiguous f32 tensor of `ws.len()` elements; nothing reads it now.
        unsafe { *(w.storage().as_mut_ptr() as *mut f32) = ws[0] };
        w.storage().bump_version();
        for _ in 0..3 {
            assert_eq!(run(), want(&ws));
        }
    }

    #[test]
    fn wide_planes_are_split_into_tiles() {
        // 600 channels x 9 taps x 8 bytes leaves fewer columns per tile than the 30 x 30 plane.
        let s = ConvShape {
            n: 1,
            c: 600,
            o: 2,
            groups: 1,
            win: window(30, 30, 3, 1, 1, 1),
        };
        const { assert!(TILE_BYTES / (600 * 9 * 8) < 900) };
        check(s, true, 1);
        check(s, false, 2);
    }
}
