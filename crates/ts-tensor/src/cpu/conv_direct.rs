//! Direct convolution for stride-1 f32 layers on AVX-512: the GEMM micro-kernel reads its
//! `B` rows straight out of the padded input planes instead of an unfolded (im2col) copy.
//!
//! The outputs are computed on the padded grid: output `(oy, ox)` sits at `oy * wp + ox`
//! (`wp` the padded row length, so each row has `wp - ow` discarded columns), and every tap
//! `(c, ki, kj)` of 48 consecutive grid positions is then 48 consecutive input values, at a
//! fixed offset `c * plane + ki * dh * wp + kj * dw` from the first. The unfold this replaces
//! wrote every input value once per tap (nine times for 3 x 3), about 11% of ResNet-18.

use crate::cpu::conv::ConvFloat;
use crate::cpu::im2col::Window;

/// Micro-tile rows (output channels) and columns (grid positions) of the kernel.
pub(super) const MR: usize = 8;
pub(super) const NR: usize = 48;
/// Output channels per task.
const OC_BLOCK: usize = 64;
/// The deepest block of taps per pass over a tile (as the packed GEMM's `kc`).
const KC: usize = 512;

/// Whether the direct path runs a stride-1 layer of this geometry: the CPU has the AVX-512
/// kernel the weights are packed for (`tile` is the packed GEMM's micro-tile), and the
/// discarded grid columns are at most an eighth of the work.
pub(super) fn applies(g: &Window, wp: usize, tile: Option<(usize, usize)>) -> bool {
    g.sh == 1
        && g.sw == 1
        && g.ow > 0
        && g.oh > 0
        && tile == Some((MR, NR))
        && (wp - g.ow) * 8 <= wp
        && kernel().is_some()
        && !tiled_by_request()
}

/// `TSRS_CONV=tiled` keeps these layers on the unfolded tiles (for comparisons).
fn tiled_by_request() -> bool {
    static TILED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TILED.get_or_init(|| std::env::var("TSRS_CONV").is_ok_and(|v| v == "tiled"))
}

/// Elements a padded input buffer needs past its last plane for [`run`]: the last tile reads
/// up to a micro-panel past the grid of the last plane.
pub(super) fn slack(g: &Window) -> usize {
    NR + (g.kw - 1) * g.dw + 16
}

/// One convolution problem on the padded planes.
pub(super) struct Direct<'a> {
    /// Padded planes of all images, `[n * c, hp, wp]`, followed by [`slack`] elements.
    pub padded: &'a [f32],
    /// Elements per padded plane (`hp * wp`) and the padded row length.
    pub pplane: usize,
    pub wp: usize,
    /// The group's weights packed as `MR`-row panels of all `kk` taps (one slice per group).
    pub packed_w: &'a [&'a [f32]],
    pub bias: Option<&'a [f32]>,
    pub n: usize,
    pub c: usize,
    pub o: usize,
    pub groups: usize,
    pub g: Window,
}

/// A raw output pointer that may cross threads (tasks write disjoint blocks).
#[derive(Clone, Copy)]
pub(super) struct Out(pub *mut f32);
// SAFETY: every task writes its own (image, channel block, grid tile) block of the output,
// which the caller keeps alive and unshared for the call.
unsafe impl Send for Out {}
// SAFETY: as above.
unsafe impl Sync for Out {}

impl Out {
    /// The pointer (a method, so that closures capture the `Send` wrapper, not its field).
    fn ptr(self) -> *mut f32 {
        self.0
    }
}

impl Direct<'_> {
    /// Writes the whole `[n, o, oh, ow]` output at `out` (every element), on up to `threads`
    /// threads.
    ///
    /// # Safety
    /// `out` must be valid for `n * o * oh * ow` writes that nothing else touches during the
    /// call; `padded` must hold the planes and slack described on [`Direct`], and the packed
    /// weights `og.div_ceil(MR) * MR * kk` values each; the CPU must support [`kernel`].
    pub(super) unsafe fn run(&self, out: Out, threads: usize) {
        use rayon::prelude::*;
        let g = &self.g;
        let (cg, og) = (self.c / self.groups, self.o / self.groups);
        let kk = cg * g.kh * g.kw;
        let grid = g.oh * self.wp;
        let panels = grid.div_ceil(NR);
        let ocbs = og.div_ceil(OC_BLOCK);
        let outer = self.n * self.groups * ocbs;
        // Panels per tile: up to 2, fewer while that leaves under 8 tasks per thread (17
        // tasks of 4 panels on 2 threads left one thread a ninth of the layer alone).
        let mut per = 2;
        while per > 1 && outer * panels.div_ceil(per) < 8 * threads {
            per /= 2;
        }
        let tiles = panels.div_ceil(per);
        // Offsets of the taps from a grid position, in the weights' (c, ki, kj) order.
        let off: Vec<isize> = (0..cg)
            .flat_map(|ci| {
                (0..g.kh).flat_map(move |ki| {
                    (0..g.kw).map(move |kj| {
                        (ci * self.pplane + ki * g.dh * self.wp + kj * g.dw) as isize
                    })
                })
            })
            .collect();
        let kern = kernel().expect("applies() checked the kernel");
        let task = |t: usize| {
            let (rest, ti) = (t / tiles, t % tiles);
            let (bg, ob) = (rest / ocbs, rest % ocbs);
            let (b, gi) = (bg / self.groups, bg % self.groups);
            let (o0, o1) = (ob * OC_BLOCK, ((ob + 1) * OC_BLOCK).min(og));
            let (t0, t1) = (ti * per * NR, ((ti + 1) * per * NR).min(panels * NR));
            let cols = t1 - t0;
            let rows = (o1 - o0).div_ceil(MR) * MR;
            let base = (b * self.c + gi * cg) * self.pplane + t0;
            let pw = self.packed_w[gi];
            <f32 as ConvFloat>::with_scratch(rows * cols, |cbuf| {
                let kc_blk = if kk <= KC + KC / 4 {
                    kk
                } else {
                    kk.div_ceil(kk.div_ceil(KC))
                };
                let mut pc = 0;
                while pc < kk {
                    let kc = kc_blk.min(kk - pc);
                    for jr in (0..cols).step_by(NR) {
                        for ir in (o0..o1).step_by(MR) {
                            // SAFETY: panel `ir / MR` of the packed weights holds `kk` groups of
                            // `MR` values, so taps `pc..pc + kc` are inside it; every `B` row read
                            // lies inside `padded` (the grid of this group's planes plus `slack`);
                            // the C micro-tile is `MR` rows of `NR` inside `cbuf`.
                            unsafe {
                                kern(
                                    pw.as_ptr().add(((ir / MR) * kk + pc) * MR),
                                    self.padded.as_ptr().add(base + jr),
                                    off.as_ptr().add(pc),
                                    kc,
                                    cbuf.as_mut_ptr().add((ir - o0) * cols + jr),
                                    cols,
                                    pc == 0,
                                )
                            };
                        }
                    }
                    pc += kc;
                }
                // The grid positions of real outputs, with the bias.
                let l = g.oh * g.ow;
                for oc in o0..o1 {
                    let bias = self.bias.map_or(0.0, |v| v[gi * og + oc]);
                    let src = &cbuf[(oc - o0) * cols..(oc - o0 + 1) * cols];
                    let plane = (b * self.o + gi * og + oc) * l;
                    let (y0, y1) = (t0 / self.wp, (t1.min(grid) - 1) / self.wp);
                    for oy in y0..=y1 {
                        let lo = (oy * self.wp).max(t0);
                        let hi = (oy * self.wp + g.ow).min(t1);
                        if lo >= hi {
                            continue;
                        }
                        let ox = lo - oy * self.wp;
                        // SAFETY: `(oy, ox..ox + hi - lo)` are real outputs (`oy < oh`,
                        // `ox + hi - lo <= ow`) of channel `gi * og + oc` of image `b`: inside the
                        // output, and only this task's (image, channel block, tile) covers them.
                        let dst = unsafe {
                            std::slice::from_raw_parts_mut(
                                out.ptr().add(plane + oy * g.ow + ox),
                                hi - lo,
                            )
                        };
                        for (d, &v) in dst.iter_mut().zip(&src[lo - t0..hi - t0]) {
                            *d = v + bias;
                        }
                    }
                }
            });
        };
        let tasks = outer * tiles;
        if threads > 1 && tasks > 1 {
            (0..tasks).into_par_iter().for_each(task);
        } else {
            (0..tasks).for_each(task);
        }
    }
}

/// The micro-kernel: `C[MR x NR] (=|+=) A-panel x B`, row `q` of B at `b + off[q]`.
type Kernel = unsafe fn(*const f32, *const f32, *const isize, usize, *mut f32, usize, bool);

/// The kernel for this CPU, if it has AVX-512.
pub(super) fn kernel() -> Option<Kernel> {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx512() {
            return Some(x86::taps_8x48);
        }
    }
    None
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// `MR x NR` outputs over `kc` taps: `a` holds `kc` groups of 8 weights, tap `q`'s 48 input
    /// values start at `b + off[q]`; the tile is stored at `c` (row stride `rsc`), overwriting
    /// it when `first`, else added to it.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and FMA; `a` must hold `8 * kc` values, `off` `kc` offsets
    /// with 48 readable values at each `b + off[q]`, and `c` 8 rows of 48 writable values.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn taps_8x48(
        a: *const f32,
        b: *const f32,
        off: *const isize,
        kc: usize,
        c: *mut f32,
        rsc: usize,
        first: bool,
    ) {
        // SAFETY: (whole body) the reads and writes stay inside the ranges of the contract.
        unsafe {
            let mut acc = [[_mm512_setzero_ps(); 3]; 8];
            let mut a = a;
            for q in 0..kc {
                let bq = b.offset(*off.add(q));
                let bv = [
                    _mm512_loadu_ps(bq),
                    _mm512_loadu_ps(bq.add(16)),
                    _mm512_loadu_ps(bq.add(32)),
                ];
                for (i, row) in acc.iter_mut().enumerate() {
                    let ai = _mm512_set1_ps(*a.add(i));
                    for (r, v) in row.iter_mut().zip(bv.iter()) {
                        *r = _mm512_fmadd_ps(ai, *v, *r);
                    }
                }
                a = a.add(8);
            }
            for (i, row) in acc.iter().enumerate() {
                let crow = c.add(i * rsc);
                for (v, r) in row.iter().enumerate() {
                    let p = crow.add(16 * v);
                    let r = if first {
                        *r
                    } else {
                        _mm512_add_ps(_mm512_loadu_ps(p), *r)
                    };
                    _mm512_storeu_ps(p, r);
                }
            }
        }
    }
}
