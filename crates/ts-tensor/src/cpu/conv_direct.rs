//! Direct convolution for f32 layers on AVX-512 and AVX2: the GEMM micro-kernel reads its `B`
//! rows straight out of the padded input planes instead of an unfolded (im2col) copy.
//!
//! The outputs are computed on the padded grid: output `(oy, ox)` sits at `oy * wq + ox`
//! (`wq` the padded row length, so each row has `wq - ow` discarded columns), and every tap
//! `(c, ki, kj)` of `nr` consecutive grid positions is then `nr` consecutive input values, at a
//! fixed offset `c * plane + ki * dh * wq + kj * dw` from the first. The unfold this replaces
//! wrote every input value once per tap (nine times for 3 x 3), about 11% of ResNet-18.
//!
//! A strided layer reads the same way from its input split into stride phases (phase
//! `(a, b)` holds the padded rows `a, a + sh, ...` and columns `b, b + sw, ...`, each `wq`
//! long): tap `(ki, kj)` reads phase `(ki * dh % sh, kj * dw % sw)` from row
//! `ki * dh / sh` and column `kj * dw / sw`, consecutive outputs from consecutive values.

use crate::cpu::conv::ConvFloat;
use crate::cpu::im2col::Window;

/// The widest micro-tile's columns (the slack past the planes covers its reads).
const MAX_NR: usize = 48;
/// Output channels per task (rounded down to whole micro-panels).
const OC_BLOCK: usize = 64;
/// Grid columns per task, at most (two AVX-512 panels, six AVX2 ones).
const TILE_COLS: usize = 96;

/// Whether the direct path runs a layer of this geometry: the CPU has a kernel of the
/// micro-tile the weights are packed for (`tile` is the packed GEMM's), and the discarded
/// columns of the grid (rows `wq` long, the padded row's length per column phase) are at
/// most an eighth of the work.
///
/// A strided layer also needs a window of at least four times the stride's area, so that its
/// unfold would copy each input value four or more times: ResNet's 7 x 7 stride-2 stem ran
/// 15% faster direct, while its 3 x 3 stride-2 layers were as fast either way (one 10%
/// slower, one 8% faster), and its 1 x 1 stride-2 ones, which read a quarter of their input,
/// 30-40% slower for splitting all of it into phases.
pub(super) fn applies(g: &Window, wq: usize, tile: Option<(usize, usize)>) -> bool {
    let strides = g.sh * g.sw;
    g.ow > 0
        && g.oh > 0
        && (strides == 1 || g.kh * g.kw >= 4 * strides)
        && kernel().is_some_and(|k| tile == Some((k.mr, k.nr)))
        && (wq - g.ow) * 8 <= wq
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
    MAX_NR + (g.kw - 1) * g.dw + 16
}

/// One convolution problem on the padded planes.
pub(super) struct Direct<'a> {
    /// Padded planes of all images split into stride phases, `[n * c, sh, sw, hq, wq]`
    /// (with stride 1 `[n * c, hp, wp]`), followed by [`slack`] elements.
    pub padded: &'a [f32],
    /// Elements per padded plane (`sh * sw * hq * wq`), per phase (`hq * wq`), and per row
    /// of a phase (`wq`, the grid's row length).
    pub pplane: usize,
    pub phase: usize,
    pub row: usize,
    /// The group's weights packed as `mr`-row panels of all `kk` taps (one slice per group),
    /// or none: then the kernel reads them in place from `weights`.
    pub packed_w: &'a [&'a [f32]],
    /// The layer's `[o, kk]` weights as stored, read in place when nothing is packed (the
    /// output channels per group are then a multiple of the micro-tile's rows).
    pub weights: &'a [f32],
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
    /// weights `og.div_ceil(mr) * mr * kk` values each, for the micro-tile of [`kernel`]; with
    /// no packed weights, `weights` must hold `o * kk` values and `og` be a multiple of `mr`.
    pub(super) unsafe fn run(&self, out: Out, threads: usize) {
        use rayon::prelude::*;
        let Micro {
            mr,
            nr,
            kc: max_kc,
            taps: kern,
            taps_rows,
        } = kernel().expect("applies() checked the kernel");
        let in_place = self.packed_w.is_empty();
        debug_assert!(!in_place || (self.o / self.groups).is_multiple_of(mr));
        let oc_block = OC_BLOCK / mr * mr;
        let g = &self.g;
        let (cg, og) = (self.c / self.groups, self.o / self.groups);
        let kk = cg * g.kh * g.kw;
        let grid = g.oh * self.row;
        let panels = grid.div_ceil(nr);
        let ocbs = og.div_ceil(oc_block);
        let outer = self.n * self.groups * ocbs;
        // Panels per tile: up to `TILE_COLS`, fewer while that leaves under 8 tasks per thread
        // (17 tasks of 4 panels on 2 threads left one thread a ninth of the layer alone).
        let mut per = TILE_COLS / nr;
        while per > 1 && outer * panels.div_ceil(per) < 8 * threads {
            per /= 2;
        }
        let tiles = panels.div_ceil(per);
        // Offsets of the taps from a grid position, in the weights' (c, ki, kj) order: the
        // phase of the tap's padded row and column, then its row and column within it.
        let (sh, sw) = (g.sh.max(1), g.sw.max(1));
        let off: Vec<isize> = (0..cg)
            .flat_map(|ci| {
                (0..g.kh).flat_map(move |ki| {
                    (0..g.kw).map(move |kj| {
                        let (y, x) = (ki * g.dh, kj * g.dw);
                        let phase = (y % sh * sw + x % sw) * self.phase;
                        (ci * self.pplane + phase + y / sh * self.row + x / sw) as isize
                    })
                })
            })
            .collect();
        let task = |t: usize| {
            let (rest, ti) = (t / tiles, t % tiles);
            let (bg, ob) = (rest / ocbs, rest % ocbs);
            let (b, gi) = (bg / self.groups, bg % self.groups);
            let (o0, o1) = (ob * oc_block, ((ob + 1) * oc_block).min(og));
            let (t0, t1) = (ti * per * nr, ((ti + 1) * per * nr).min(panels * nr));
            let cols = t1 - t0;
            let rows = (o1 - o0).div_ceil(mr) * mr;
            let base = (b * self.c + gi * cg) * self.pplane + t0;
            let pw = self.packed_w.get(gi).copied().unwrap_or_default();
            // Calls `f(oc, at, from, len)` for each run of real outputs the tile holds: `len`
            // of channel `oc`'s at `at` in the output, from grid column `t0 + from`.
            let runs = |f: &mut dyn FnMut(usize, usize, usize, usize)| {
                let l = g.oh * g.ow;
                let (y0, y1) = (t0 / self.row, (t1.min(grid) - 1) / self.row);
                for oc in o0..o1 {
                    let plane = (b * self.o + gi * og + oc) * l;
                    for oy in y0..=y1 {
                        // Real outputs `(oy, ox..ox + hi - lo)`: `oy < oh`, `ox + hi - lo <= ow`.
                        let lo = (oy * self.row).max(t0);
                        let hi = (oy * self.row + g.ow).min(t1);
                        if lo < hi {
                            f(oc, plane + oy * g.ow + lo - oy * self.row, lo - t0, hi - lo);
                        }
                    }
                }
            };
            // The output's lines are fetched while the kernel runs: copied into when cold (as in
            // a model, where the stem's 3 MB of outputs were last touched a forward ago), they
            // cost the stem a fifth of its time.
            runs(&mut |_, at, _, len| prefetch_lines(out.ptr().wrapping_add(at), len));
            <f32 as ConvFloat>::with_scratch(rows * cols, |cbuf| {
                let kc_blk = if kk <= max_kc + max_kc / 4 {
                    kk
                } else {
                    kk.div_ceil(kk.div_ceil(max_kc))
                };
                let mut pc = 0;
                while pc < kk {
                    let kc = kc_blk.min(kk - pc);
                    for jr in (0..cols).step_by(nr) {
                        for ir in (o0..o1).step_by(mr) {
                            // SAFETY: panel `ir / mr` of the packed weights holds `kk` groups of
                            // `mr` values, so taps `pc..pc + kc` are inside it; in place, rows
                            // `ir..ir + mr` of the group (`og` is a multiple of `mr`) hold taps
                            // `pc..pc + kc` `kk` apart. Every `B` row read lies inside `padded`
                            // (the grid of this group's planes plus `slack`); the C micro-tile is
                            // `mr` rows of `nr` inside `cbuf`.
                            unsafe {
                                let (k, a, rs) = if in_place {
                                    let row = (gi * og + ir) * kk + pc;
                                    (taps_rows, self.weights.as_ptr().add(row), kk)
                                } else {
                                    (kern, pw.as_ptr().add(((ir / mr) * kk + pc) * mr), 1)
                                };
                                k(
                                    a,
                                    rs,
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
                runs(&mut |oc, at, from, len| {
                    let bias = self.bias.map_or(0.0, |v| v[gi * og + oc]);
                    // SAFETY: `runs` gives runs of real outputs of this task's (image, channel
                    // block, tile): inside the output, and written by this task alone.
                    let dst = unsafe { std::slice::from_raw_parts_mut(out.ptr().add(at), len) };
                    for (d, &v) in dst.iter_mut().zip(&cbuf[(oc - o0) * cols + from..][..len]) {
                        *d = v + bias;
                    }
                });
            });
        };
        let tasks = outer * tiles;
        if threads > 1 && tasks > 1 {
            crate::threads::parallel_region();
            (0..tasks).into_par_iter().for_each(task);
        } else {
            (0..tasks).for_each(task);
        }
    }
}

/// Asks for the cache lines of `len` values at `p` (a hint: it reads nothing and faults on
/// nothing).
fn prefetch_lines(p: *const f32, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let (start, end) = (p as usize & !63, p.wrapping_add(len) as usize);
        for line in (start..end).step_by(64) {
            // SAFETY: SSE is baseline on x86_64, and a prefetch neither reads nor faults.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line as *const i8) };
        }
    }
}

/// A micro-kernel: `C[mr x nr] (=|+=) A x B`, row `q` of B at `b + off[q]`; A a packed panel
/// or (the `rows` kernel) `mr` weight rows read in place, the given stride apart.
type Taps = unsafe fn(*const f32, usize, *const f32, *const isize, usize, *mut f32, usize, bool);

/// A micro-kernel with its tile and deepest block of taps per pass (as the packed GEMM's).
#[derive(Clone, Copy)]
pub(super) struct Micro {
    pub mr: usize,
    pub nr: usize,
    kc: usize,
    taps: Taps,
    /// The same kernel reading its weights in place (a weight used once is not packed).
    taps_rows: Taps,
}

/// The kernel for this CPU: AVX-512 8 x 48 or AVX2 6 x 16 (the packed GEMM's tiles).
pub(super) fn kernel() -> Option<Micro> {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx512() {
            return Some(Micro {
                mr: 8,
                nr: 48,
                kc: 512,
                taps: x86::taps_8x48::<false>,
                taps_rows: x86::taps_8x48::<true>,
            });
        }
        if super::simd::has_avx2_fma() {
            return Some(Micro {
                mr: 6,
                nr: 16,
                kc: 256,
                taps: x86::taps_6x16::<false>,
                taps_rows: x86::taps_6x16::<true>,
            });
        }
    }
    None
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Declares a taps kernel of `$mr` rows by `$nv` vectors of `$lanes`.
    macro_rules! taps_kernel {
        ($name:ident, $feat:literal, $mr:literal, $nv:literal, $lanes:literal, $zero:ident,
         $load:ident, $set1:ident, $fmadd:ident, $add:ident, $store:ident) => {
            /// `mr x nr` outputs over `kc` taps: `a` holds `kc` groups of `mr` weights (or,
            /// `ROWS`, `mr` rows of `kc` weights, `rsa` apart), tap `q`'s `nr` input values
            /// start at `b + off[q]`; the tile is stored at `c` (row stride `rsc`), overwriting
            /// it when `first`, else added to it.
            ///
            /// # Safety
            /// The CPU must have the enabled features; `a` must hold `mr * kc` values (`ROWS`:
            /// `kc` values at each of `a + i * rsa`), `off` `kc` offsets with `nr` readable
            /// values at each `b + off[q]`, and `c` `mr` rows of `nr` writable values.
            // The micro-kernel's operands, as the packed GEMM's kernels take them.
            #[allow(clippy::too_many_arguments)]
            #[target_feature(enable = $feat)]
            pub(super) unsafe fn $name<const ROWS: bool>(
                a: *const f32,
                rsa: usize,
                b: *const f32,
                off: *const isize,
                kc: usize,
                c: *mut f32,
                rsc: usize,
                first: bool,
            ) {
                // SAFETY: (whole body) the reads and writes stay inside the ranges of the
                // contract.
                unsafe {
                    let mut acc = [[$zero(); $nv]; $mr];
                    let mut a = a;
                    for q in 0..kc {
                        let bq = b.offset(*off.add(q));
                        let mut bv = [$zero(); $nv];
                        for (v, slot) in bv.iter_mut().enumerate() {
                            *slot = $load(bq.add(v * $lanes));
                        }
                        for (i, row) in acc.iter_mut().enumerate() {
                            let ai = $set1(*a.add(if ROWS { i * rsa } else { i }));
                            for (r, v) in row.iter_mut().zip(bv.iter()) {
                                *r = $fmadd(ai, *v, *r);
                            }
                        }
                        a = a.add(if ROWS { 1 } else { $mr });
                    }
                    for (i, row) in acc.iter().enumerate() {
                        let crow = c.add(i * rsc);
                        for (v, r) in row.iter().enumerate() {
                            let p = crow.add($lanes * v);
                            let r = if first { *r } else { $add($load(p), *r) };
                            $store(p, r);
                        }
                    }
                }
            }
        };
    }

    taps_kernel!(
        taps_8x48,
        "avx512f,avx2,fma",
        8,
        3,
        16,
        _mm512_setzero_ps,
        _mm512_loadu_ps,
        _mm512_set1_ps,
        _mm512_fmadd_ps,
        _mm512_add_ps,
        _mm512_storeu_ps
    );
    taps_kernel!(
        taps_6x16,
        "avx2,fma",
        6,
        2,
        8,
        _mm256_setzero_ps,
        _mm256_loadu_ps,
        _mm256_set1_ps,
        _mm256_fmadd_ps,
        _mm256_add_ps,
        _mm256_storeu_ps
    );
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// Every kernel this CPU can run, packed and in place, against a scalar product: taps at
    /// scattered offsets, a first pass that overwrites and a second that accumulates.
    #[test]
    fn taps_kernels_match_a_scalar_product() {
        let mut kernels: Vec<(usize, usize, Taps, Taps)> = Vec::new();
        if crate::cpu::simd::has_avx2_fma() {
            kernels.push((6, 16, x86::taps_6x16::<false>, x86::taps_6x16::<true>));
        }
        if crate::cpu::simd::has_avx512() {
            kernels.push((8, 48, x86::taps_8x48::<false>, x86::taps_8x48::<true>));
        }
        for (mr, nr, packed, rows) in kernels {
            let kc = 37;
            let rsa = kc + 5;
            // `mr` weight rows of `rsa` values (the first `kc` used) and their packed panel.
            let w: Vec<f32> = (0..mr * rsa)
                .map(|i| ((i * 31) % 17) as f32 - 8.0)
                .collect();
            let panel: Vec<f32> = (0..kc)
                .flat_map(|q| (0..mr).map(move |i| (i, q)))
                .map(|(i, q)| w[i * rsa + q])
                .collect();
            let b: Vec<f32> = (0..4096).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
            let off: Vec<isize> = (0..kc).map(|q| ((q * 53) % 2000) as isize).collect();
            let want = |i: usize, j: usize| -> f32 {
                (0..kc)
                    .map(|q| w[i * rsa + q] * b[off[q] as usize + j])
                    .sum()
            };
            for (kern, a, stride) in [(packed, &panel, 0), (rows, &w, rsa)] {
                let rsc = nr + 3;
                let mut c = vec![f32::NAN; mr * rsc];
                for first in [true, false] {
                    // SAFETY: `a` holds the panel (or `mr` rows `rsa` apart), every tap's `nr`
                    // values lie inside `b` (offsets below 2000), `c` holds `mr` rows of `rsc`.
                    unsafe {
                        kern(
                            a.as_ptr(),
                            stride,
                            b.as_ptr(),
                            off.as_ptr(),
                            kc,
                            c.as_mut_ptr(),
                            rsc,
                            first,
                        )
                    };
                }
                for i in 0..mr {
                    for j in 0..nr {
                        assert_eq!(c[i * rsc + j], 2.0 * want(i, j), "{mr}x{nr} ({i}, {j})");
                    }
                }
            }
        }
    }
}
