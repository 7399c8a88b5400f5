//! The project's own f32/f64 GEMM: `C = beta * C + alpha * A @ B` on strided operands, packed
//! into cache blocks (BLIS-style loops: `NC` columns of B, `KC` deep, `MC` rows of A) and
//! multiplied by register-blocked micro-kernels chosen at run time: AVX-512 (16/8 lanes) when the
//! CPU has it, else AVX2 + FMA; `None` (the caller falls back to the `gemm` crate) otherwise
//! (`TSRS_GEMM=avx2` or `TSRS_GEMM=crate` force the slower paths, for comparisons).
//! Threads split the output into disjoint column or row ranges, each a whole serial product.

use std::cell::RefCell;
use std::ops::{Add, Mul};

use rayon::prelude::*;

/// The largest operand (elements) packed once for all threads; larger ones are packed by
/// each task for its part (no 32 MB+ buffer kept per calling thread).
const SHARED_MAX: usize = 1 << 23;

/// Multiply-adds under which a product runs on one thread: splitting costs a rayon fork-join
/// (a few microseconds), which below about a million multiply-adds (~8 us on one core at peak)
/// made two threads slower than one on small layers (a training step's MLP, attention heads).
pub(crate) const PARALLEL_WORK: usize = 1 << 20;

/// Multiply-adds under which a product runs on one thread when no worker is spinning: waking a
/// sleeping one costs a futex call and, on a virtual machine, an inter-processor interrupt, and
/// leaves it spinning for the rest of the model. A detection model whose one mid-sized
/// convolution (2.4M multiply-adds) split ran 3-5% slower at 2 threads than at 1.
pub(crate) const COLD_PARALLEL_WORK: usize = 4 * PARALLEL_WORK;

/// The multiply-adds from which a product or convolution splits across threads now:
/// [`PARALLEL_WORK`] while a worker spins for the next kernel, [`COLD_PARALLEL_WORK`] otherwise.
pub(crate) fn parallel_work() -> usize {
    if crate::threads::worker_spinning() {
        PARALLEL_WORK
    } else {
        COLD_PARALLEL_WORK
    }
}

/// A micro-kernel: one tile of C from packed panels.
type Ukr<T> = unsafe fn(&Tile<T>);

/// One register-blocked micro-kernel and the cache blocking that suits it.
#[derive(Clone, Copy)]
pub(crate) struct Kernel<T> {
    /// Rows of C per micro-tile.
    mr: usize,
    /// Columns of C per micro-tile.
    nr: usize,
    /// Depth of one packed block (B's `kc x nr` micro-panel stays in L1).
    kc: usize,
    /// The depth on a CPU whose L2 holds at least [`LARGE_L2_BYTES`] (see [`Kernel::depth`]).
    kc_large_l2: usize,
    /// Whether this CPU's L2 is that large ([`for_this_cache`]).
    large_l2: bool,
    /// Rows of A per packed block (stays in L2).
    mc: usize,
    /// Columns of B per packed block.
    nc: usize,
    /// The micro-kernel.
    ukr: Ukr<T>,
    /// Narrower micro-kernels of the same rows, `(columns, kernel)` from the narrowest: the
    /// last column panel of a product runs on the narrowest that covers it (512 columns are
    /// ten 48-wide panels and 32 more, which the full kernel computed as 48).
    narrow: [Option<(usize, Ukr<T>)>; 2],
    /// Full-width micro-kernels of fewer rows, `(rows, kernel)` from the fewest, reading the
    /// same `mr`-row A panels: a product's last row tile runs on the fewest that cover it (a
    /// 49-row product's last tile of 1 row cost a full 8-row tile, B's loads its limit).
    short: [Option<(usize, Ukr<T>)>; 3],
    /// A name for tests and benchmarks.
    #[allow(dead_code)]
    pub(crate) name: &'static str,
}

/// The arguments of one micro-kernel call.
pub(crate) struct Tile<T> {
    kc: usize,
    /// Packed A micro-panel: `kc` groups of `mr` values.
    a: *const T,
    /// B micro-panel: `kc` rows of `nr` values, row `p` at `b + p * ldb`.
    b: *const T,
    ldb: usize,
    c: *mut T,
    rsc: isize,
    csc: isize,
    /// The valid rows/columns of this tile (`<= mr`, `<= nr`).
    m: usize,
    n: usize,
    alpha: T,
    beta: T,
    /// Ignore C's old contents (not even NaNs propagate).
    overwrite: bool,
    /// The part of the next B micro-panel this call brings into L2, one 64-byte line per
    /// depth step (`next_lines` lines from `next`; 0 for none).
    next: *const T,
    next_lines: usize,
}

/// Element types with a packed GEMM.
pub(crate) trait GemmFloat:
    Copy + Send + Sync + Default + PartialEq + Add<Output = Self> + Mul<Output = Self> + 'static
{
    /// Zero (packing pads with it).
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// `self * a + b` rounded once (an FMA instruction where the caller enables one).
    fn fma(self, a: Self, b: Self) -> Self;
    /// The micro-kernels this CPU can run, fastest first.
    fn kernels() -> Vec<Kernel<Self>>;
    /// The fastest kernel, detected once.
    fn best_kernel() -> Option<Kernel<Self>>;
    /// Runs `f` with this thread's packing buffers.
    fn with_pack<R>(f: impl FnOnce(&mut PackBufs<Self>) -> R) -> R;
    /// Runs `f` with this thread's buffer for an operand packed by all threads together (kept
    /// apart from [`GemmFloat::with_pack`], which the tasks borrow while it is in use).
    fn with_shared<R>(f: impl FnOnce(&mut Vec<Self>) -> R) -> R;
}

/// Per-thread packing buffers, reused across calls so small products do not allocate.
#[derive(Default)]
pub(crate) struct PackBufs<T> {
    a: Vec<T>,
    b: Vec<T>,
}

/// Grows `v`'s capacity to exactly `len` elements when it is smaller: `Vec::resize` would
/// round it up to double, and a reused per-thread buffer keeps (and touches) what it grew to.
pub(crate) fn reserve_to<T>(v: &mut Vec<T>, len: usize) {
    if v.capacity() < len {
        v.reserve_exact(len - v.len());
    }
}

/// A 64-byte aligned window of at least `len` elements of `v`.
fn aligned<T: GemmFloat>(v: &mut Vec<T>, len: usize) -> &mut [T] {
    let lanes = 64 / std::mem::size_of::<T>();
    if v.len() < len + lanes {
        // Grown exactly: doubling would leave up to twice the buffer on every thread.
        reserve_to(v, len + lanes);
        v.resize(len + lanes, T::ZERO);
    }
    let off = v.as_ptr().align_offset(64).min(lanes);
    &mut v[off..off + len]
}

#[cfg(target_arch = "x86_64")]
macro_rules! microkernel {
    ($name:ident, $T:ty, $feat:literal, $lanes:literal, $mr:literal, $step:literal, $nv:literal,
     $pf:literal, $zero:ident, $set1:ident, $load:ident, $store:ident, $fmadd:ident,
     $mul:ident) => {
        /// A micro-kernel: `$mr` rows by `$nv` vectors of `$lanes` lanes, from A panels of
        /// `$step` rows.
        ///
        /// # Safety
        /// The CPU must have the enabled features; `t.a` must hold `kc * $step` values, `t.b`
        /// `kc` rows of the full vector width at stride `ldb`, and `t.c` the `m x n` block.
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn $name(t: &Tile<$T>) {
            use std::arch::x86_64::*;
            const NR: usize = $lanes * $nv;
            // SAFETY: (whole body) every read stays inside the panels the contract describes,
            // every write inside the valid `m x n` block of C.
            unsafe {
                // Bring C's tile towards L1 while the products run (its rows are far apart,
                // often in the same cache sets, and it is read only at the end).
                if t.csc == 1 {
                    for i in 0..t.m {
                        let row = t.c.wrapping_offset(i as isize * t.rsc) as *const i8;
                        let mut off = 0;
                        while off < t.n * std::mem::size_of::<$T>() {
                            _mm_prefetch::<_MM_HINT_T0>(row.wrapping_add(off));
                            off += 64;
                        }
                        _mm_prefetch::<_MM_HINT_T0>(
                            row.wrapping_add(t.n * std::mem::size_of::<$T>() - 1),
                        );
                    }
                }
                let mut acc = [[$zero(); $nv]; $mr];
                let (mut a, mut b) = (t.a, t.b);
                // B's micro-panel (up to 96 KB) does not fit in L1: fetch its rows `$pf` steps
                // ahead (on a Xeon with AVX-512 the loads of B were where the kernel stalled;
                // the AVX2 kernels' narrower panels gain nothing from it).
                let pf = $pf * t.ldb;
                // The next B micro-panel, a share of its lines per call: the first tile of
                // each panel otherwise streams it from L3 at 3 lines per 24 FMAs.
                let (next, next_lines) = (t.next as *const i8, t.next_lines.min(t.kc));
                for q in 0..t.kc {
                    if $pf > 0 {
                        for v in 0..$nv {
                            _mm_prefetch::<_MM_HINT_T0>(
                                b.wrapping_add(pf + v * $lanes) as *const i8
                            );
                        }
                        if q < next_lines {
                            _mm_prefetch::<_MM_HINT_T1>(next.wrapping_add(q * 64));
                        }
                    }
                    let mut bv = [$zero(); $nv];
                    for (v, slot) in bv.iter_mut().enumerate() {
                        *slot = $load(b.add(v * $lanes));
                    }
                    for (i, row) in acc.iter_mut().enumerate() {
                        let ai = $set1(*a.add(i));
                        for (r, bvv) in row.iter_mut().zip(bv.iter()) {
                            *r = $fmadd(ai, *bvv, *r);
                        }
                    }
                    a = a.add($step);
                    b = b.add(t.ldb);
                }
                if t.m == $mr && t.n == NR && t.csc == 1 {
                    let alpha = $set1(t.alpha);
                    let beta = $set1(t.beta);
                    for (i, row) in acc.iter().enumerate() {
                        let crow = t.c.offset(i as isize * t.rsc);
                        for (v, r) in row.iter().enumerate() {
                            let p = crow.add(v * $lanes);
                            let r = $mul(*r, alpha);
                            let r = if t.overwrite {
                                r
                            } else {
                                $fmadd($load(p), beta, r)
                            };
                            $store(p, r);
                        }
                    }
                } else {
                    let mut buf: [$T; $mr * NR] = [0.0; $mr * NR];
                    for (i, row) in acc.iter().enumerate() {
                        for (v, r) in row.iter().enumerate() {
                            $store(buf.as_mut_ptr().add(i * NR + v * $lanes), *r);
                        }
                    }
                    for i in 0..t.m {
                        for j in 0..t.n {
                            let p = t.c.offset(i as isize * t.rsc + j as isize * t.csc);
                            let r = t.alpha * buf[i * NR + j];
                            *p = if t.overwrite { r } else { t.beta * *p + r };
                        }
                    }
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Tile;

    /// Micro-kernels of one element type and instruction set, all of `$mr` rows: the full one
    /// and the narrow ones for a product's last column panel, `name: vectors` each.
    macro_rules! kernels {
        ($T:ty, $feat:literal, $lanes:literal, $mr:literal, $pf:literal,
         [$zero:ident, $set1:ident, $load:ident, $store:ident, $fmadd:ident, $mul:ident],
         $($name:ident: $nv:literal),*) => {
            $(microkernel!(
                $name, $T, $feat, $lanes, $mr, $mr, $nv, $pf, $zero, $set1, $load, $store,
                $fmadd, $mul
            );)*
        };
    }

    /// Full-width kernels of fewer rows than the panels they read (`$step`), `name: rows`.
    macro_rules! short_kernels {
        ($T:ty, $feat:literal, $lanes:literal, $step:literal, $nv:literal, $pf:literal,
         [$zero:ident, $set1:ident, $load:ident, $store:ident, $fmadd:ident, $mul:ident],
         $($name:ident: $mr:literal),*) => {
            $(microkernel!(
                $name, $T, $feat, $lanes, $mr, $step, $nv, $pf, $zero, $set1, $load, $store,
                $fmadd, $mul
            );)*
        };
    }

    kernels!(
        f32,
        "avx512f,avx2,fma",
        16,
        8,
        32,
        [
            _mm512_setzero_ps,
            _mm512_set1_ps,
            _mm512_loadu_ps,
            _mm512_storeu_ps,
            _mm512_fmadd_ps,
            _mm512_mul_ps
        ],
        f32_avx512: 3,
        f32_avx512_16: 1,
        f32_avx512_32: 2
    );
    short_kernels!(
        f32,
        "avx512f,avx2,fma",
        16,
        8,
        3,
        32,
        [
            _mm512_setzero_ps,
            _mm512_set1_ps,
            _mm512_loadu_ps,
            _mm512_storeu_ps,
            _mm512_fmadd_ps,
            _mm512_mul_ps
        ],
        f32_avx512_r1: 1,
        f32_avx512_r2: 2,
        f32_avx512_r4: 4
    );
    kernels!(
        f64,
        "avx512f,avx2,fma",
        8,
        8,
        32,
        [
            _mm512_setzero_pd,
            _mm512_set1_pd,
            _mm512_loadu_pd,
            _mm512_storeu_pd,
            _mm512_fmadd_pd,
            _mm512_mul_pd
        ],
        f64_avx512: 3,
        f64_avx512_8: 1,
        f64_avx512_16: 2
    );
    short_kernels!(
        f64,
        "avx512f,avx2,fma",
        8,
        8,
        3,
        32,
        [
            _mm512_setzero_pd,
            _mm512_set1_pd,
            _mm512_loadu_pd,
            _mm512_storeu_pd,
            _mm512_fmadd_pd,
            _mm512_mul_pd
        ],
        f64_avx512_r1: 1,
        f64_avx512_r2: 2,
        f64_avx512_r4: 4
    );
    kernels!(
        f32,
        "avx2,fma",
        8,
        6,
        0,
        [
            _mm256_setzero_ps,
            _mm256_set1_ps,
            _mm256_loadu_ps,
            _mm256_storeu_ps,
            _mm256_fmadd_ps,
            _mm256_mul_ps
        ],
        f32_avx2: 2,
        f32_avx2_8: 1
    );
    kernels!(
        f64,
        "avx2,fma",
        4,
        6,
        0,
        [
            _mm256_setzero_pd,
            _mm256_set1_pd,
            _mm256_loadu_pd,
            _mm256_storeu_pd,
            _mm256_fmadd_pd,
            _mm256_mul_pd
        ],
        f64_avx2: 2,
        f64_avx2_4: 1
    );

    /// Writes the transpose of 8 rows of `kc` contiguous f32 (row `i` at `src + i * rs`): `kc`
    /// groups of 8 values, group `q` at `dst + q * ld`, 8 x 8 tiles at a time in registers.
    /// Packs A panels (`ld = 8`) and slices of B panels when B is stored transposed.
    /// `PREFETCH` also fetches the next 8 rows, for callers that pack cold rows group by group.
    ///
    /// # Safety
    /// The CPU must have AVX2; the 8 rows must hold `kc` values each and `dst` must be valid
    /// for 8 values at each `q * ld`, `q < kc`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn pack8_f32<const PREFETCH: bool>(
        src: *const f32,
        rs: isize,
        kc: usize,
        dst: *mut f32,
        ld: usize,
    ) {
        use std::arch::x86_64::*;
        // SAFETY: (whole body) reads stay inside the 8 rows' first `kc` values, writes inside
        // the 8-value groups at `q * ld`.
        unsafe {
            let row = |i: isize| src.offset(i * rs);
            // With `PREFETCH` the next 8 rows (the caller's next call) are fetched while these
            // are transposed, a line per row every 16 values. A one-shot model run packs each
            // weight once, straight from the archive's mapping, and those reads missed every
            // cache (ResNet-18's layer4 weights packed at ~1.4 GB/s; 25% less time with this).
            // Warm sources (a GEMM's activations) only pay for the extra instructions.
            // Prefetching never faults; `wrapping_offset` keeps the address arithmetic defined
            // past the end of the matrix.
            let next = src.wrapping_offset(8 * rs) as *const i8;
            let mut q = 0;
            while q + 8 <= kc {
                if PREFETCH && q % 16 == 0 {
                    for i in 0..8 {
                        _mm_prefetch::<_MM_HINT_T0>(
                            next.wrapping_offset((i * rs + q as isize) * 4),
                        );
                    }
                }
                let r = |i: isize| _mm256_loadu_ps(row(i).add(q));
                let (r0, r1, r2, r3) = (r(0), r(1), r(2), r(3));
                let (r4, r5, r6, r7) = (r(4), r(5), r(6), r(7));
                let t0 = _mm256_unpacklo_ps(r0, r1);
                let t1 = _mm256_unpackhi_ps(r0, r1);
                let t2 = _mm256_unpacklo_ps(r2, r3);
                let t3 = _mm256_unpackhi_ps(r2, r3);
                let t4 = _mm256_unpacklo_ps(r4, r5);
                let t5 = _mm256_unpackhi_ps(r4, r5);
                let t6 = _mm256_unpacklo_ps(r6, r7);
                let t7 = _mm256_unpackhi_ps(r6, r7);
                let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
                let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
                let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
                let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
                let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
                let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
                let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
                let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
                let d = |r: usize| dst.add((q + r) * ld);
                _mm256_storeu_ps(d(0), _mm256_permute2f128_ps::<0x20>(u0, u4));
                _mm256_storeu_ps(d(1), _mm256_permute2f128_ps::<0x20>(u1, u5));
                _mm256_storeu_ps(d(2), _mm256_permute2f128_ps::<0x20>(u2, u6));
                _mm256_storeu_ps(d(3), _mm256_permute2f128_ps::<0x20>(u3, u7));
                _mm256_storeu_ps(d(4), _mm256_permute2f128_ps::<0x31>(u0, u4));
                _mm256_storeu_ps(d(5), _mm256_permute2f128_ps::<0x31>(u1, u5));
                _mm256_storeu_ps(d(6), _mm256_permute2f128_ps::<0x31>(u2, u6));
                _mm256_storeu_ps(d(7), _mm256_permute2f128_ps::<0x31>(u3, u7));
                q += 8;
            }
            while q < kc {
                for i in 0..8 {
                    *dst.add(q * ld + i) = *row(i as isize).add(q);
                }
                q += 1;
            }
        }
    }

    pub(super) fn has_avx512() -> bool {
        std::arch::is_x86_feature_detected!("avx512f") && super::super::simd::has_avx2_fma()
    }
}

macro_rules! gemm_float {
    ($T:ty, $key:ident, $k512:ident, [$($n512:ident: $w512:literal),*],
     [$($s512:ident: $r512:literal),*], $k2:ident,
     [$($n2:ident: $w2:literal),*], $mr512:literal, $nr512:literal, $mr2:literal,
     $nr2:literal, $kc512:literal, $kc512_large_l2:literal, $mc512:literal,
     $kc2:literal) => {
        thread_local! {
            static $key: RefCell<PackBufs<$T>> = RefCell::new(PackBufs::default());
        }
        impl GemmFloat for $T {
            const ZERO: $T = 0.0;
            const ONE: $T = 1.0;
            #[inline(always)]
            fn fma(self, a: $T, b: $T) -> $T {
                self.mul_add(a, b)
            }
            fn kernels() -> Vec<Kernel<$T>> {
                #[allow(unused_mut)]
                let mut v: Vec<Kernel<$T>> = Vec::new();
                #[cfg(target_arch = "x86_64")]
                {
                    if x86::has_avx512() {
                        v.push(Kernel {
                            mr: $mr512,
                            nr: $nr512,
                            kc: $kc512,
                            kc_large_l2: $kc512_large_l2,
                            large_l2: false,
                            mc: $mc512,
                            nc: 3072,
                            ukr: x86::$k512,
                            narrow: alternatives([$(($w512, x86::$n512 as Ukr<$T>)),*]),
                            short: alternatives([$(($r512, x86::$s512 as Ukr<$T>)),*]),
                            name: concat!(stringify!($T), "-avx512"),
                        });
                    }
                    if super::simd::has_avx2_fma() {
                        v.push(Kernel {
                            mr: $mr2,
                            nr: $nr2,
                            kc: $kc2,
                            kc_large_l2: $kc2,
                            large_l2: false,
                            mc: 240,
                            nc: 3072,
                            ukr: x86::$k2,
                            narrow: alternatives([$(($w2, x86::$n2 as Ukr<$T>)),*]),
                            short: [None; 3],
                            name: concat!(stringify!($T), "-avx2"),
                        });
                    }
                }
                v
            }
            fn best_kernel() -> Option<Kernel<$T>> {
                static BEST: std::sync::OnceLock<Option<Kernel<$T>>> = std::sync::OnceLock::new();
                *BEST.get_or_init(|| {
                    // `TSRS_GEMM=avx2` / `TSRS_GEMM=crate` select a slower path for comparisons.
                    let choice = std::env::var("TSRS_GEMM").unwrap_or_default();
                    let k = if choice == "crate" {
                        None
                    } else if choice == "avx2" {
                        <$T>::kernels()
                            .into_iter()
                            .find(|k| k.name.ends_with("avx2"))
                    } else {
                        <$T>::kernels().into_iter().next()
                    };
                    k.map(for_this_cache).map(blocks_override)
                })
            }
            fn with_pack<R>(f: impl FnOnce(&mut PackBufs<$T>) -> R) -> R {
                $key.with(|cell| match cell.try_borrow_mut() {
                    Ok(mut bufs) => f(&mut bufs),
                    Err(_) => f(&mut PackBufs::default()),
                })
            }
            fn with_shared<R>(f: impl FnOnce(&mut Vec<$T>) -> R) -> R {
                thread_local! {
                    static SHARED: RefCell<Vec<$T>> = const { RefCell::new(Vec::new()) };
                }
                SHARED.with(|cell| match cell.try_borrow_mut() {
                    Ok(mut v) => f(&mut v),
                    Err(_) => f(&mut Vec::new()),
                })
            }
        }
    };
}
// f32 on AVX-512: a deep `kc` (the 96 KB B micro-panel streams from L2 at 3 vectors per 24
// FMAs) halves the C-tile traffic of each product, which dominated at 1024 and beyond; `mc`
// shrinks so that the packed A block stays well inside L2 (measured on Zen 5, bench `nn`).
// Where L2 is 2 MB (Xeons since Sapphire Rapids), twice that depth again: a 2048 product at
// 2 threads ran 5% faster with 1024 (one pass over C per 1024 of depth instead of two).
gemm_float!(
    f32,
    PACK_F32,
    f32_avx512,
    [f32_avx512_16: 16, f32_avx512_32: 32],
    [f32_avx512_r1: 1, f32_avx512_r2: 2, f32_avx512_r4: 4],
    f32_avx2,
    [f32_avx2_8: 8],
    8,
    48,
    6,
    16,
    512,
    1024,
    144,
    256
);
gemm_float!(
    f64,
    PACK_F64,
    f64_avx512,
    [f64_avx512_8: 8, f64_avx512_16: 16],
    [f64_avx512_r1: 1, f64_avx512_r2: 2, f64_avx512_r4: 4],
    f64_avx2,
    [f64_avx2_4: 4],
    8,
    24,
    6,
    8,
    192,
    192,
    240,
    256
);

/// A [`Kernel`]'s list of alternative kernels (`narrow`, `short`) from a list of at most `M`.
#[cfg(target_arch = "x86_64")]
fn alternatives<T, const N: usize, const M: usize>(
    list: [(usize, Ukr<T>); N],
) -> [Option<(usize, Ukr<T>)>; M] {
    let mut out = [None; M];
    for (slot, k) in out.iter_mut().zip(list) {
        *slot = Some(k);
    }
    out
}

impl<T> Kernel<T> {
    /// The depth of the packed blocks: [`Kernel::kc_large_l2`] on a CPU with a large L2,
    /// except in a process that calls its model once (freed buffers not kept): there the
    /// deeper blocks' larger packing buffers (2 MB more resident in a one-shot ResNet-18)
    /// cost more than the passes over C they save.
    fn depth(&self) -> usize {
        if self.large_l2 && crate::buffer_cache::keep_freed() {
            self.kc_large_l2
        } else {
            self.kc
        }
    }

    /// The micro-kernel for a tile of `m` valid rows in a full-width column panel and the
    /// rows it computes: the shortest kernel that covers them, else the full one.
    fn for_rows(&self, m: usize) -> (Ukr<T>, usize) {
        self.short
            .iter()
            .flatten()
            .find(|&&(r, _)| m <= r && r < self.mr)
            .map_or((self.ukr, self.mr), |&(r, k)| (k, r))
    }

    /// The micro-kernel for a column panel with `n` valid columns and the columns it
    /// computes: the narrowest kernel that covers them.
    fn for_cols(&self, n: usize) -> (Ukr<T>, usize) {
        self.narrow
            .iter()
            .flatten()
            .find(|&&(w, _)| n <= w && w < self.nr)
            .map_or((self.ukr, self.nr), |&(w, k)| (k, w))
    }
}

/// The L2 size from which kernels take their deeper blocks ([`Kernel::kc_large_l2`]).
const LARGE_L2_BYTES: usize = 2 << 20;

/// The kernel, told whether this CPU's L2 holds [`LARGE_L2_BYTES`] ([`Kernel::depth`]).
fn for_this_cache<T>(mut k: Kernel<T>) -> Kernel<T> {
    k.large_l2 = l2_bytes().is_some_and(|l2| l2 >= LARGE_L2_BYTES);
    k
}

/// This core's L2 cache size, when the CPU reports it (CPUID leaf `0x8000_0006`, which Intel
/// and AMD both fill in).
fn l2_bytes() -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        if __cpuid(0x8000_0000).eax >= 0x8000_0006 {
            let kb = (__cpuid(0x8000_0006).ecx >> 16) as usize;
            return (kb > 0).then_some(kb << 10);
        }
    }
    None
}

/// The kernel with its cache blocks replaced by `TSRS_GEMM_BLOCKS=mc,kc,nc` (for tuning
/// experiments; malformed or zero values keep the defaults).
fn blocks_override<T>(mut k: Kernel<T>) -> Kernel<T> {
    if let Ok(v) = std::env::var("TSRS_GEMM_BLOCKS") {
        let b: Vec<usize> = v.split(',').filter_map(|x| x.trim().parse().ok()).collect();
        if let [mc, kc, nc] = b[..] {
            if mc > 0 && kc > 0 && nc > 0 {
                k.mc = mc.div_ceil(k.mr) * k.mr;
                k.kc = kc;
                k.kc_large_l2 = kc;
                k.nc = nc.div_ceil(k.nr) * k.nr;
            }
        }
    }
    k
}

/// One product `C = beta * C + alpha * A @ B`, strides in elements.
#[derive(Clone, Copy)]
pub(crate) struct Problem<T> {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub a: *const T,
    pub rsa: isize,
    pub csa: isize,
    pub b: *const T,
    pub rsb: isize,
    pub csb: isize,
    pub c: *mut T,
    pub rsc: isize,
    pub csc: isize,
    pub alpha: T,
    pub beta: T,
    /// Whether C's old contents are read (false: they are overwritten, NaNs included).
    pub read_c: bool,
}

// SAFETY: the pointers are only dereferenced inside `gemm`, whose caller guarantees they stay
// valid for the call; parallel tasks write disjoint blocks of C and only read A and B.
unsafe impl<T: Send> Send for Problem<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Problem<T> {}

impl<T: GemmFloat> Problem<T> {
    /// The sub-product of rows `r0..r1` and columns `c0..c1` of C.
    fn block(&self, r0: usize, r1: usize, c0: usize, c1: usize) -> Problem<T> {
        Problem {
            m: r1 - r0,
            n: c1 - c0,
            a: self.a.wrapping_offset(r0 as isize * self.rsa),
            b: self.b.wrapping_offset(c0 as isize * self.csb),
            c: self
                .c
                .wrapping_offset(r0 as isize * self.rsc + c0 as isize * self.csc),
            ..*self
        }
    }
}

/// Runs the product with the fastest micro-kernel on up to `threads` threads. Returns `false`
/// (doing nothing) when this CPU has no kernel for `T`, so the caller can fall back.
///
/// # Safety
/// A (`m x k`), B (`k x n`) and C (`m x n`) must be valid for their strides; C's elements must be
/// distinct and must not overlap A or B; nothing else may touch C during the call.
pub(crate) unsafe fn gemm<T: GemmFloat>(p: &Problem<T>, threads: usize) -> bool {
    match T::best_kernel() {
        // SAFETY: forwarded from the caller.
        Some(kern) => unsafe { gemm_with(kern, p, threads) },
        None => false,
    }
}

/// [`gemm`] with a given kernel (tests run every kernel the CPU has).
///
/// # Safety
/// As [`gemm`], and the CPU must support the kernel (it came from [`GemmFloat::kernels`]).
pub(crate) unsafe fn gemm_with<T: GemmFloat>(
    kern: Kernel<T>,
    p: &Problem<T>,
    threads: usize,
) -> bool {
    // SAFETY: forwarded from the caller; A and B are read through their strides.
    unsafe { gemm_impl(kern, p, threads, Prepacked::NONE) }
}

/// Operands the caller packed already (`None`: read through the problem's pointer and
/// strides). A packed A is `ceil(m / mr)` micro-panels of the kernel's `mr` rows, each all `k`
/// columns as groups of `mr` values (see [`pack_lhs`]); a packed B is `ceil(n / nr)` micro-panels
/// of `nr` columns ([`panel_cols`]), each all `k` rows of `nr` values. Entries past `m` / `n`
/// in the last panel are multiplied but never stored.
#[derive(Clone, Copy)]
pub(crate) struct Prepacked<T> {
    pub a: Option<*const T>,
    pub b: Option<*const T>,
}

impl<T> Prepacked<T> {
    /// Nothing packed.
    pub(crate) const NONE: Prepacked<T> = Prepacked { a: None, b: None };

    /// The packed operands moved on by `a` and `b` elements (to a later row or column panel).
    fn advanced(self, a: usize, b: usize) -> Prepacked<T> {
        Prepacked {
            a: self.a.map(|p| p.wrapping_add(a)),
            b: self.b.map(|p| p.wrapping_add(b)),
        }
    }
}

// SAFETY: the panels are only read, while the caller of `gemm_packed` keeps them alive.
unsafe impl<T: Sync> Send for Prepacked<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Prepacked<T> {}

/// The length of `rows x k` A packed for [`gemm_packed`] with the fastest kernel, or `None`
/// when this CPU has none.
pub(crate) fn packed_lhs_len<T: GemmFloat>(rows: usize, k: usize) -> Option<usize> {
    T::best_kernel().map(|kern| rows.div_ceil(kern.mr) * kern.mr * k)
}

/// Packs `rows x k` row-major A (row stride `rsa`) into `out` ([`packed_lhs_len`] long) for
/// [`gemm_packed`] with the fastest kernel; `false` when this CPU has none. A convolution packs
/// its weights once per call rather than once per column tile (ResNet's deep layers have
/// several tiles of few columns and megabytes of weights, which were re-packed for each).
pub(crate) fn pack_lhs<T: GemmFloat>(
    a: &[T],
    rows: usize,
    k: usize,
    rsa: usize,
    out: &mut [T],
) -> bool {
    let Some(kern) = T::best_kernel() else {
        return false;
    };
    if rows == 0 || k == 0 {
        return true;
    }
    assert!(
        a.len() >= (rows - 1) * rsa + k && out.len() == rows.div_ceil(kern.mr) * kern.mr * k,
        "pack_lhs: operand sizes do not match"
    );
    let p = Problem {
        m: rows,
        n: 0,
        k,
        a: a.as_ptr(),
        rsa: rsa as isize,
        csa: 1,
        b: std::ptr::null(),
        rsb: 0,
        csb: 0,
        c: std::ptr::null_mut(),
        rsc: 0,
        csc: 0,
        alpha: T::ONE,
        beta: T::ONE,
        read_c: false,
    };
    by_panel_ranges(out, kern.mr * k, |first, dst| {
        let i0 = first * kern.mr;
        let mc = (dst.len() / k).min(rows - i0);
        // SAFETY: rows `i0..i0 + mc`, columns `0..k` lie inside `a` (asserted above); `dst`
        // holds their `ceil(mc / mr)` panels of `k * mr` values.
        unsafe { pack_a(&p, i0, mc, 0, k, kern.mr, dst) };
    });
    true
}

/// The smallest packed operand (bytes) split among threads: below it the hand-off costs more
/// than the copy.
const PARALLEL_PACK_BYTES: usize = 1 << 20;

/// Runs `pack(first_panel, dst)` over `out` cut into ranges of whole panels of `panel`
/// values, in parallel when `out` is large. A layer's weights are packed for its first call
/// (ResNet-18's 47 MB of them at start-up): on one thread that was a seventh of the call.
fn by_panel_ranges<T: GemmFloat>(
    out: &mut [T],
    panel: usize,
    pack: impl Fn(usize, &mut [T]) + Sync,
) {
    let panels = out.len() / panel.max(1);
    let threads = crate::threads::num_threads();
    if threads <= 1 || panels < 2 || std::mem::size_of_val(out) < PARALLEL_PACK_BYTES {
        pack(0, out);
        return;
    }
    let per = panels.div_ceil(threads * 4);
    out.par_chunks_mut(per * panel)
        .enumerate()
        .for_each(|(i, dst)| pack(i * per, dst));
}

/// The rows of the fastest kernel's micro-tile and the columns of its micro-panel (`None`
/// when this CPU has no kernel for `T`).
pub(crate) fn micro_tile<T: GemmFloat>() -> Option<(usize, usize)> {
    T::best_kernel().map(|k| (k.mr, k.nr))
}

/// Packs B, given transposed as `cols` contiguous rows of `k` values (`bt[j * k + q]` is
/// `B[q, j]`, a weight matrix `[out, in]` used as `W^T`), into the micro-panels [`gemm_packed`]
/// reads (`ceil(cols / nr) * nr * k` values in `out`); `false` when this CPU has no kernel.
pub(crate) fn pack_rhs_transposed<T: GemmFloat>(
    bt: &[T],
    cols: usize,
    k: usize,
    out: &mut [T],
) -> bool {
    let Some(kern) = T::best_kernel() else {
        return false;
    };
    if cols == 0 || k == 0 {
        return true;
    }
    assert!(
        bt.len() >= cols * k && out.len() == cols.div_ceil(kern.nr) * kern.nr * k,
        "pack_rhs_transposed: operand sizes do not match"
    );
    let p = Problem {
        m: 0,
        n: cols,
        k,
        a: std::ptr::null(),
        rsa: 0,
        csa: 0,
        b: bt.as_ptr(),
        rsb: 1,
        csb: k as isize,
        c: std::ptr::null_mut(),
        rsc: 0,
        csc: 0,
        alpha: T::ONE,
        beta: T::ONE,
        read_c: false,
    };
    by_panel_ranges(out, kern.nr * k, |first, dst| {
        let j0 = first * kern.nr;
        let nc = (dst.len() / k).min(cols - j0);
        // SAFETY: rows `0..k`, columns `j0..j0 + nc` of B lie inside `bt` (asserted above);
        // `dst` holds their `ceil(nc / nr)` panels of `k * nr` values.
        unsafe { pack_b(&p, 0, k, j0, nc, kern.nr, false, dst) };
    });
    true
}

/// [`gemm`] with operands the caller packed (the pointer and strides of a packed operand are
/// not read). A convolution unfolds its patches straight into B's packed layout, which saves
/// copying them once more into the GEMM's own packing buffer. Returns `false` (doing nothing)
/// when this CPU has no kernel for `T`.
///
/// # Safety
/// As [`gemm`] for the operands read through pointers; packed operands must hold all their
/// panels, packed for the kernel [`panel_cols`] / [`pack_lhs`] describe.
pub(crate) unsafe fn gemm_packed<T: GemmFloat>(
    p: &Problem<T>,
    pre: Prepacked<T>,
    threads: usize,
) -> bool {
    match T::best_kernel() {
        // SAFETY: forwarded from the caller.
        Some(kern) => unsafe { gemm_impl(kern, p, threads, pre) },
        None => false,
    }
}

/// [`gemm_with`], with operands read from their strides or from caller-packed panels.
///
/// # Safety
/// As [`gemm_with`] / [`gemm_packed`].
unsafe fn gemm_impl<T: GemmFloat>(
    kern: Kernel<T>,
    p: &Problem<T>,
    threads: usize,
    pre: Prepacked<T>,
) -> bool {
    if p.m == 0 || p.n == 0 {
        return true;
    }
    if p.k == 0 {
        // SAFETY: C is valid for `m x n` (caller contract).
        unsafe { scale_c(p) };
        return true;
    }
    // SAFETY: forwarded from the caller.
    if pre.a.is_none() && pre.b.is_none() && unsafe { crate::cpu::gemv::try_gemv(p, threads) } {
        return true;
    }
    let work = p.m.saturating_mul(p.n).saturating_mul(p.k);
    if threads <= 1 || work < parallel_work() {
        // SAFETY: forwarded from the caller.
        unsafe { serial(&kern, p, pre) };
        return true;
    }
    // Split one dimension into `threads` ranges of whole tiles (see `split_by_cols`).
    let (mt, nt) = (p.m.div_ceil(kern.mr), p.n.div_ceil(kern.nr));
    let by_cols = split_by_cols(&kern, p, pre, threads);
    let (tiles, unit, len) = if by_cols {
        (nt, kern.nr, p.n)
    } else {
        (mt, kern.mr, p.m)
    };
    let tasks = threads.min(tiles);
    let ranges: Vec<(usize, usize)> = (0..tasks)
        .map(|t| {
            let lo = (tiles * t / tasks * unit).min(len);
            let hi = (tiles * (t + 1) / tasks * unit).min(len);
            (lo, hi)
        })
        .filter(|(lo, hi)| lo < hi)
        .collect();
    if ranges.len() > 1 {
        // A single micro-tile row and column (a deep, narrow product) runs on one thread.
        crate::threads::parallel_region();
    }
    // The operand every task reads whole (B when the rows are split, A when the columns are)
    // is packed once, by all the threads, instead of once per task: on a 512 product split by
    // rows each thread packed all of B, ~8% of the time.
    let (panels, grain) = if by_cols {
        (mt, kern.mr)
    } else {
        (nt, kern.nr)
    };
    let shared_len = panels * grain * p.k;
    let rows_each = if by_cols {
        p.m
    } else {
        p.m / ranges.len().max(1)
    };
    let share = if by_cols { pre.a.is_none() } else { pre.b.is_none() }
        && ranges.len() > 1
        && shared_len <= SHARED_MAX
        // Few rows per task read B in place (see `serial`).
        && (by_cols || p.csb != 1 || rows_each > 2 * kern.mr);
    if share {
        return T::with_shared(|buf| {
            let buf = aligned(buf, shared_len);
            let per = panels.div_ceil(ranges.len());
            buf.par_chunks_mut(per * grain * p.k)
                .enumerate()
                .for_each(|(t, out)| {
                    let (q0, q1) = (t * per, ((t + 1) * per).min(panels));
                    let (lo, hi) = (
                        q0 * grain,
                        (q1 * grain).min(if by_cols { p.m } else { p.n }),
                    );
                    // SAFETY: rows (or columns) `lo..hi` over the whole depth lie inside the
                    // operand; `out` holds their `q1 - q0` panels of `k` groups.
                    unsafe {
                        if by_cols {
                            pack_a(p, lo, hi - lo, 0, p.k, kern.mr, out);
                        } else {
                            pack_b(p, 0, p.k, lo, hi - lo, kern.nr, false, out);
                        }
                    }
                });
            let packed = Some(buf.as_ptr());
            let pre = if by_cols {
                Prepacked { a: packed, ..pre }
            } else {
                Prepacked { b: packed, ..pre }
            };
            // SAFETY: as below, with the shared panels alive until the tasks are done.
            unsafe { run_ranges(&kern, p, pre, by_cols, &ranges) };
            true
        });
    }
    // SAFETY: forwarded from the caller.
    unsafe { run_ranges(&kern, p, pre, by_cols, &ranges) };
    true
}

/// Multiply-adds that one element of an operand every thread reads whole costs when this call
/// packs it: the threads pack it together, then each reads the parts the others packed from
/// their caches. A 64 x 1024 x 256 product with B transposed (an LSTM cell's gates) split by
/// rows, B packed and shared, took ~25% longer than split by columns, A shared.
const SHARED_PACK_MACS: usize = 64;

/// Whether a parallel product splits its columns (else its rows) into ranges of whole tiles:
/// the split whose busiest range has the least work ([`split_costs`]), counting the operand it
/// makes every range read whole when this call packs it ([`SHARED_PACK_MACS`]); equal, the
/// dimension with more micro-tiles. With both operands packed by the caller (a convolution's
/// weights and unfolded patches, whose freshly written panels are not free to share either),
/// the dimension with more micro-tiles.
fn split_by_cols<T>(kern: &Kernel<T>, p: &Problem<T>, pre: Prepacked<T>, threads: usize) -> bool {
    let (mt, nt) = (p.m.div_ceil(kern.mr), p.n.div_ceil(kern.nr));
    if pre.a.is_some() && pre.b.is_some() {
        return nt >= mt;
    }
    let tasks = threads.min(mt.max(nt)).max(1);
    let (rows, cols) = split_costs(kern, p.m, p.n, tasks);
    let shared = |elems: usize, packed: bool| {
        if packed {
            0
        } else {
            elems.saturating_mul(SHARED_PACK_MACS) / tasks * (tasks - 1)
        }
    };
    let rows = rows
        .saturating_mul(p.k)
        .saturating_add(shared(p.k.saturating_mul(p.n), pre.b.is_some()));
    let cols = cols
        .saturating_mul(p.k)
        .saturating_add(shared(p.m.saturating_mul(p.k), pre.a.is_some()));
    if rows == cols {
        nt >= mt
    } else {
        cols < rows
    }
}

/// The work of the busiest of `tasks` ranges when the rows are split and when the columns
/// are (micro-tile rows times the columns its kernels compute, narrow kernels counted at
/// their width). A 64-row product over 512 columns split by columns gave one thread five
/// 48-wide panels and the other five and a 32-wide one: 13% more work than the other.
fn split_costs<T>(kern: &Kernel<T>, m: usize, n: usize, tasks: usize) -> (usize, usize) {
    let (mt, nt) = (m.div_ceil(kern.mr), n.div_ceil(kern.nr));
    let width = |panel: usize| kern.for_cols(kern.nr.min(n - panel * kern.nr)).1;
    let all_cols: usize = (0..nt).map(width).sum();
    let busiest = |tiles: usize, cost: &dyn Fn(usize, usize) -> usize| {
        let tasks = tasks.clamp(1, tiles.max(1));
        (0..tasks)
            .map(|t| cost(tiles * t / tasks, tiles * (t + 1) / tasks))
            .max()
            .unwrap_or(0)
    };
    let rows = busiest(mt, &|lo, hi| (hi - lo) * kern.mr * all_cols);
    let cols = busiest(nt, &|lo, hi| {
        mt * kern.mr * (lo..hi).map(width).sum::<usize>()
    });
    (rows, cols)
}

/// Runs the column (`by_cols`) or row ranges of the product as parallel tasks.
///
/// # Safety
/// As [`gemm_impl`]; the ranges start at whole micro-panels and partition C.
unsafe fn run_ranges<T: GemmFloat>(
    kern: &Kernel<T>,
    p: &Problem<T>,
    pre: Prepacked<T>,
    by_cols: bool,
    ranges: &[(usize, usize)],
) {
    ranges.par_iter().for_each(|&(lo, hi)| {
        // Ranges start at whole micro-panels (`lo` is a multiple of `nr` or `mr`).
        let (sub, sub_pre) = if by_cols {
            let off = lo / kern.nr * p.k * kern.nr;
            (p.block(0, p.m, lo, hi), pre.advanced(0, off))
        } else {
            let off = lo / kern.mr * p.k * kern.mr;
            (p.block(lo, hi, 0, p.n), pre.advanced(off, 0))
        };
        // SAFETY: the ranges partition C, so each task writes its own block; A and B are read.
        unsafe { serial(kern, &sub, sub_pre) };
    });
}

/// `C = beta * C` (or zero when C is not read): the product of an empty inner dimension.
///
/// # Safety
/// C must be valid for `m x n` with its strides.
unsafe fn scale_c<T: GemmFloat>(p: &Problem<T>) {
    for i in 0..p.m {
        for j in 0..p.n {
            // SAFETY: `(i, j)` is inside C.
            unsafe {
                let q = p.c.offset(i as isize * p.rsc + j as isize * p.csc);
                *q = if p.read_c { p.beta * *q } else { T::ZERO };
            }
        }
    }
}

/// The blocked product on this thread.
///
/// # Safety
/// As [`gemm_with`].
unsafe fn serial<T: GemmFloat>(kern: &Kernel<T>, p: &Problem<T>, pre: Prepacked<T>) {
    let (mr, nr) = (kern.mr, kern.nr);
    let packed_b = pre.b;
    // A few rows of A: B is read in place (when its rows are contiguous) rather than packed,
    // which would cost as much as the product.
    let direct_b = packed_b.is_none() && p.csb == 1 && p.m <= 2 * mr;
    let kc_blk = depth_block(kern.depth(), p.k);
    // Row blocks of at most `mc` rows whose tile counts differ by at most one: a short last
    // block (16 rows of a 1024-row task after seven of 144) read every B panel from L3 for
    // two tiles' use.
    let row_tiles = p.m.div_ceil(mr);
    let row_blocks = row_tiles.div_ceil((kern.mc / mr).max(1));
    let blk_rows = |blk: usize| (row_tiles * blk / row_blocks * mr).min(p.m);
    T::with_pack(|bufs| {
        let mut jc = 0;
        while jc < p.n {
            let nc = kern.nc.min(p.n - jc);
            let mut pc = 0;
            while pc < p.k {
                let kc = kc_blk.min(p.k - pc);
                let first = pc == 0;
                let bpack = if packed_b.is_some() {
                    std::ptr::null()
                } else {
                    let bpack = aligned(&mut bufs.b, nc.div_ceil(nr) * nr * kc);
                    // SAFETY: the panels read lie inside B (`pc + kc <= k`, `jc + nc <= n`).
                    unsafe { pack_b(p, pc, kc, jc, nc, nr, direct_b, bpack) };
                    bpack.as_ptr()
                };
                for blk in 0..row_blocks {
                    let (ic, end) = (blk_rows(blk), blk_rows(blk + 1));
                    let mc = end - ic;
                    let apack = if pre.a.is_some() {
                        std::ptr::null()
                    } else {
                        let apack = aligned(&mut bufs.a, mc.div_ceil(mr) * mr * kc);
                        // SAFETY: rows `ic..ic + mc`, columns `pc..pc + kc` lie inside A.
                        unsafe { pack_a(p, ic, mc, pc, kc, mr, apack) };
                        apack.as_ptr()
                    };
                    // B micro-panel `jr` and its row stride.
                    let panel = |jr: usize| -> (*const T, usize) {
                        let n = nr.min(nc - jr);
                        if let Some(pb) = packed_b {
                            // SAFETY: panel `(jc + jr) / nr` (`jc` and `jr` are multiples of
                            // `nr`), rows `pc..pc + kc`, of the caller's packed B.
                            (unsafe { pb.add(((jc + jr) / nr * p.k + pc) * nr) }, nr)
                        } else if direct_b && n == nr {
                            // SAFETY: row `pc`, column `jc + jr` is inside B.
                            (
                                unsafe { p.b.offset(pc as isize * p.rsb + (jc + jr) as isize) },
                                p.rsb as usize,
                            )
                        } else {
                            // SAFETY: panel `jr / nr` of the packed block.
                            (unsafe { bpack.add(jr * kc) }, nr)
                        }
                    };
                    let tiles = mc.div_ceil(mr);
                    let mut jr = 0;
                    while jr < nc {
                        let n = nr.min(nc - jr);
                        let (ukr, _) = kern.for_cols(n);
                        let (b, ldb) = panel(jr);
                        // The panel after this one (the first again for the next row block):
                        // its lines are spread over this panel's tiles (see `Tile::next`).
                        let (next, next_ld) = match (jr + nr < nc, ic + mc < p.m) {
                            (true, _) => panel(jr + nr),
                            (false, true) => panel(0),
                            (false, false) => (std::ptr::null(), 0),
                        };
                        let lines = if next_ld == nr {
                            kc * nr * std::mem::size_of::<T>() / 64
                        } else {
                            // Rows read in place are not contiguous.
                            0
                        };
                        let per_tile = lines.div_ceil(tiles);
                        let mut ir = 0;
                        while ir < mc {
                            let m = mr.min(mc - ir);
                            let first_line = ir / mr * per_tile;
                            let ukr = if n == nr && m < mr {
                                kern.for_rows(m).0
                            } else {
                                ukr
                            };
                            let tile = Tile {
                                kc,
                                a: match pre.a {
                                    // SAFETY: panel `(ic + ir) / mr` (`ic`, `ir` are multiples
                                    // of `mr`), columns `pc..pc + kc`, of the caller's A.
                                    Some(pa) => unsafe { pa.add(((ic + ir) / mr * p.k + pc) * mr) },
                                    // SAFETY: panel `ir / mr` of the packed block.
                                    None => unsafe { apack.add(ir * kc) },
                                },
                                b,
                                ldb,
                                // SAFETY: `(ic + ir, jc + jr)` is inside C.
                                c: unsafe {
                                    p.c.offset(
                                        (ic + ir) as isize * p.rsc + (jc + jr) as isize * p.csc,
                                    )
                                },
                                rsc: p.rsc,
                                csc: p.csc,
                                m,
                                n,
                                alpha: p.alpha,
                                beta: if first { p.beta } else { T::ONE },
                                overwrite: first && !p.read_c,
                                next: (next as *const u8).wrapping_add(first_line * 64) as *const T,
                                next_lines: per_tile.min(lines.saturating_sub(first_line)),
                            };
                            // SAFETY: the panels hold `kc` full rows (packing pads with zeros)
                            // and the tile's `m x n` block is inside this task's part of C.
                            unsafe { ukr(&tile) };
                            ir += mr;
                        }
                        jr += nr;
                    }
                }
                pc += kc;
            }
            jc += nc;
        }
    });
}

/// The depth of the packed blocks for a product of depth `k`, given the kernel's preferred
/// `kc`: `k` itself when it exceeds `kc` by at most a quarter (a 3x3 convolution over 64
/// channels, `k = 576`, ran a 512-deep block and a 64-deep one, which paid a second full pass
/// over C for 1/9 of the work), else `k` split into equal blocks of at most `kc`.
fn depth_block(kc: usize, k: usize) -> usize {
    if k <= kc + kc / 4 {
        k.max(1)
    } else {
        k.div_ceil(k.div_ceil(kc))
    }
}

/// Columns of one packed B micro-panel of the fastest `T` kernel (`None` when there is none):
/// callers that cut a product into column ranges cut at multiples of it, so that no range
/// ends in a partly empty micro-tile.
pub(crate) fn panel_cols<T: GemmFloat>() -> Option<usize> {
    T::best_kernel().map(|k| k.nr)
}

/// Packs rows `ic..ic + mc`, columns `pc..pc + kc` of A as `mr`-row panels, each `kc` groups
/// of `mr` values (zero-padded past the last row).
///
/// # Safety
/// That block must lie inside A.
unsafe fn pack_a<T: GemmFloat>(
    p: &Problem<T>,
    ic: usize,
    mc: usize,
    pc: usize,
    kc: usize,
    mr: usize,
    out: &mut [T],
) {
    for (panel, dst) in out.chunks_exact_mut(mr * kc).enumerate() {
        let i0 = ic + panel * mr;
        let rows = mr.min(ic + mc - i0);
        if rows == mr && p.csa == 1 {
            // Full panel of contiguous rows: walk the depth in the outer loop so the writes are
            // sequential (the `mr` reads per step hit `mr` rows that stay in L1).
            // SAFETY: rows `i0..i0 + mr` and columns `pc..pc + kc` are inside A.
            let base = unsafe { p.a.offset(i0 as isize * p.rsa + pc as isize) };
            #[cfg(target_arch = "x86_64")]
            if mr == 8
                && std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>()
                && super::simd::has_avx2_fma()
            {
                // SAFETY: `T` is f32; the source rows hold `kc` values each at stride `rsa`
                // and `dst` holds `8 * kc`; the CPU has AVX2.
                unsafe {
                    x86::pack8_f32::<false>(
                        base as *const f32,
                        p.rsa,
                        kc,
                        dst.as_mut_ptr() as *mut f32,
                        8,
                    )
                };
                continue;
            }
            for (q, grp) in dst.chunks_exact_mut(mr).enumerate() {
                for (i, v) in grp.iter_mut().enumerate() {
                    // SAFETY: as above (`i < mr`, `q < kc`).
                    *v = unsafe { *base.offset(i as isize * p.rsa + q as isize) };
                }
            }
            continue;
        }
        for i in 0..mr {
            if i >= rows {
                for q in 0..kc {
                    dst[q * mr + i] = T::ZERO;
                }
                continue;
            }
            // SAFETY: row `i0 + i < ic + mc` and columns `pc..pc + kc` are inside A.
            let row = unsafe { p.a.offset((i0 + i) as isize * p.rsa + pc as isize * p.csa) };
            for q in 0..kc {
                // SAFETY: as above.
                dst[q * mr + i] = unsafe { *row.offset(q as isize * p.csa) };
            }
        }
    }
}

/// Packs rows `pc..pc + kc`, columns `jc..jc + nc` of B as `nr`-column panels, each `kc` rows
/// of `nr` values (zero-padded past the last column). With `partial_only`, only a trailing
/// panel narrower than `nr` is packed (the full ones are read in place).
///
/// # Safety
/// That block must lie inside B.
#[allow(clippy::too_many_arguments)]
unsafe fn pack_b<T: GemmFloat>(
    p: &Problem<T>,
    pc: usize,
    kc: usize,
    jc: usize,
    nc: usize,
    nr: usize,
    partial_only: bool,
    out: &mut [T],
) {
    if p.csb == 1 && !partial_only {
        #[cfg(target_arch = "x86_64")]
        if super::simd::has_avx2_fma() {
            // SAFETY: forwarded from the caller; the CPU has AVX2.
            unsafe { pack_b_rows_avx2(p, pc, kc, jc, nc, nr, out) };
            return;
        }
        // SAFETY: forwarded from the caller.
        unsafe { pack_b_rows(p, pc, kc, jc, nc, nr, out) };
        return;
    }
    for (panel, dst) in out.chunks_exact_mut(nr * kc).enumerate() {
        let j0 = jc + panel * nr;
        let cols = nr.min(jc + nc - j0);
        if partial_only && cols == nr {
            continue;
        }
        #[cfg(target_arch = "x86_64")]
        if cols == nr
            && nr.is_multiple_of(8)
            && p.rsb == 1
            && std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>()
            && super::simd::has_avx2_fma()
        {
            // B stored transposed (a linear layer's weight): each 8 columns of the panel are
            // the transpose of 8 contiguous rows of the stored matrix.
            for g in 0..nr / 8 {
                // SAFETY: columns `j0 + 8g .. j0 + 8g + 8` (each contiguous over rows
                // `pc..pc + kc`) are inside B; `T` is f32; `dst` holds `kc` rows of `nr`
                // values, so group `q` of 8 at `8g + q * nr` is inside it; the CPU has AVX2.
                unsafe {
                    let src = p.b.offset((j0 + 8 * g) as isize * p.csb + pc as isize);
                    let d = dst.as_mut_ptr().add(8 * g) as *mut f32;
                    // Stored transposed, B is a weight: cold on a model's first call.
                    x86::pack8_f32::<true>(src as *const f32, p.csb, kc, d, nr);
                }
            }
            continue;
        }
        for q in 0..kc {
            // SAFETY: row `pc + q < pc + kc` and column `j0` are inside B.
            let row = unsafe { p.b.offset((pc + q) as isize * p.rsb + j0 as isize * p.csb) };
            let d = &mut dst[q * nr..(q + 1) * nr];
            if p.csb == 1 {
                // SAFETY: columns `j0..j0 + cols` of this row are inside B.
                d[..cols].copy_from_slice(unsafe { std::slice::from_raw_parts(row, cols) });
            } else {
                for (j, v) in d[..cols].iter_mut().enumerate() {
                    // SAFETY: as above.
                    *v = unsafe { *row.offset(j as isize * p.csb) };
                }
            }
            d[cols..].fill(T::ZERO);
        }
    }
}

/// [`pack_b_rows`] compiled with AVX2, where a panel row (192 bytes for f32 on AVX-512) is
/// copied by a few vector moves: without it the compiler calls `memcpy` for copies over 128
/// bytes, and those calls were 4% of a 1024 product.
///
/// # Safety
/// As [`pack_b_rows`]; the CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn pack_b_rows_avx2<T: GemmFloat>(
    p: &Problem<T>,
    pc: usize,
    kc: usize,
    jc: usize,
    nc: usize,
    nr: usize,
    out: &mut [T],
) {
    // SAFETY: forwarded from the caller.
    unsafe { pack_b_rows(p, pc, kc, jc, nc, nr, out) }
}

/// [`pack_b`] for B with contiguous rows, a row at a time across every panel: reading B's
/// rows in order, rather than each panel's `nr`-wide strip down `kc` rows (a new page per
/// row when rows are 4 KB or more apart), and copying whole panel rows with fixed-size moves.
///
/// # Safety
/// As [`pack_b`], with `p.csb == 1`.
#[inline(always)]
unsafe fn pack_b_rows<T: GemmFloat>(
    p: &Problem<T>,
    pc: usize,
    kc: usize,
    jc: usize,
    nc: usize,
    nr: usize,
    out: &mut [T],
) {
    // SAFETY: row `pc + q` and columns `jc..jc + nc` lie inside B for every `q < kc` (caller
    // contract), and B's columns are contiguous.
    let row = |q: usize| unsafe {
        std::slice::from_raw_parts(p.b.offset((pc + q) as isize * p.rsb + jc as isize), nc)
    };
    match nr {
        48 => pack_rows_of::<T, 48>(row, kc, nc, out),
        24 => pack_rows_of::<T, 24>(row, kc, nc, out),
        16 => pack_rows_of::<T, 16>(row, kc, nc, out),
        8 => pack_rows_of::<T, 8>(row, kc, nc, out),
        _ => {
            for q in 0..kc {
                let src = row(q);
                for (j0, d) in (0..nc).step_by(nr).zip(out.chunks_exact_mut(nr * kc)) {
                    let cols = nr.min(nc - j0);
                    let d = &mut d[q * nr..(q + 1) * nr];
                    d[..cols].copy_from_slice(&src[j0..j0 + cols]);
                    d[cols..].fill(T::ZERO);
                }
            }
        }
    }
}

/// The rows of [`pack_b_rows`] for panels of `NR` columns.
#[inline(always)]
fn pack_rows_of<'a, T: GemmFloat, const NR: usize>(
    row: impl Fn(usize) -> &'a [T],
    kc: usize,
    nc: usize,
    out: &mut [T],
) {
    let full = nc / NR;
    for q in 0..kc {
        let src = row(q);
        for (panel, s) in src.chunks_exact(NR).enumerate() {
            copy_fixed::<T, NR>(&mut out[(panel * kc + q) * NR..][..NR], s);
        }
        let tail = &src[full * NR..];
        if !tail.is_empty() {
            let d = &mut out[(full * kc + q) * NR..][..NR];
            d[..tail.len()].copy_from_slice(tail);
            d[tail.len()..].fill(T::ZERO);
        }
    }
}

/// Copies exactly `N` values (inline moves where the vector width allows).
#[inline(always)]
fn copy_fixed<T: Copy, const N: usize>(dst: &mut [T], src: &[T]) {
    let d: &mut [T; N] = dst.try_into().expect("panel row");
    *d = *<&[T; N]>::try_from(src).expect("panel row");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random value in [-1, 1).
    fn rnd(seed: &mut u64) -> f64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    /// Runs one case on every kernel and both thread counts against an f64 reference.
    #[allow(clippy::too_many_arguments)]
    fn check<T: GemmFloat + Into<f64> + std::fmt::Debug>(
        m: usize,
        n: usize,
        k: usize,
        ta: bool,
        tb: bool,
        c_cols_major: bool,
        alpha: T,
        beta: T,
        read_c: bool,
        from: impl Fn(f64) -> T,
        tol: f64,
    ) {
        let mut seed = (m * 131 + n * 17 + k) as u64;
        let av: Vec<T> = (0..m * k).map(|_| from(rnd(&mut seed))).collect();
        let bv: Vec<T> = (0..k * n).map(|_| from(rnd(&mut seed))).collect();
        let c0: Vec<T> = (0..m * n).map(|_| from(rnd(&mut seed))).collect();
        // A stored row-major `[m, k]` or transposed `[k, m]`; likewise B; C row- or col-major.
        let (rsa, csa) = if ta { (1, m as isize) } else { (k as isize, 1) };
        let (rsb, csb) = if tb { (1, k as isize) } else { (n as isize, 1) };
        let (rsc, csc) = if c_cols_major {
            (1, m as isize)
        } else {
            (n as isize, 1)
        };
        let at = |i: usize, q: usize| av[i * rsa as usize + q * csa as usize].into();
        let bt = |q: usize, j: usize| bv[q * rsb as usize + j * csb as usize].into();
        let idx = |i: usize, j: usize| i * rsc as usize + j * csc as usize;
        // Every kernel at its default depth and at the one it takes on a CPU with a large L2.
        let kernels = T::kernels().into_iter().flat_map(|k| {
            let deep = (k.kc_large_l2 != k.kc).then_some(Kernel {
                large_l2: true,
                ..k
            });
            std::iter::once(k).chain(deep)
        });
        for kern in kernels {
            // B as caller-packed panels of `nr` columns; columns past `n` hold NaN, which must
            // never reach C.
            let nr = kern.nr;
            let mut packed = Vec::new();
            for pi in 0..n.div_ceil(nr) {
                for q in 0..k {
                    for jj in 0..nr {
                        let j = pi * nr + jj;
                        packed.push(if j < n {
                            bv[q * rsb as usize + j * csb as usize]
                        } else {
                            from(f64::NAN)
                        });
                    }
                }
            }
            let mut packed_a = vec![from(f64::NAN); m.div_ceil(kern.mr) * kern.mr * k];
            if m > 0 && k > 0 {
                let pa = Problem {
                    a: av.as_ptr(),
                    rsa,
                    csa,
                    m,
                    k,
                    ..Problem::<T> {
                        m: 0,
                        n: 0,
                        k: 0,
                        a: std::ptr::null(),
                        rsa: 0,
                        csa: 0,
                        b: std::ptr::null(),
                        rsb: 0,
                        csb: 0,
                        c: std::ptr::null_mut(),
                        rsc: 0,
                        csc: 0,
                        alpha,
                        beta,
                        read_c,
                    }
                };
                // SAFETY: A is `m x k` at these strides; the buffer holds every panel.
                unsafe { pack_a(&pa, 0, m, 0, k, kern.mr, &mut packed_a) };
            }
            for (threads, pre) in [(1, false), (2, false), (1, true), (2, true)] {
                let mut c = c0.clone();
                let p = Problem {
                    m,
                    n,
                    k,
                    a: av.as_ptr(),
                    rsa,
                    csa,
                    b: bv.as_ptr(),
                    rsb,
                    csb,
                    c: c.as_mut_ptr(),
                    rsc,
                    csc,
                    alpha,
                    beta,
                    read_c,
                };
                let pp = Prepacked {
                    a: pre.then_some(packed_a.as_ptr()),
                    b: pre.then_some(packed.as_ptr()),
                };
                // SAFETY: the vectors hold the described matrices (and their packed panels);
                // C is a separate buffer.
                assert!(unsafe { gemm_impl(kern, &p, threads, pp) });
                for i in 0..m {
                    for j in 0..n {
                        let dot: f64 = (0..k).map(|q| at(i, q) * bt(q, j)).sum();
                        let old: f64 = c0[idx(i, j)].into();
                        let want =
                            alpha.into() * dot + if read_c { beta.into() * old } else { 0.0 };
                        let got: f64 = c[idx(i, j)].into();
                        assert!(
                            (got - want).abs()
                                <= tol * (1.0 + want.abs()) * (k as f64).sqrt().max(1.0),
                            "{} m{m} n{n} k{k} ta{ta} tb{tb} t{threads} packed{pre} ({i},{j}): \
                             {got} vs {want}",
                            kern.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_remainder_and_layout_matches_the_reference() {
        // Remainders of every micro-tile width (6, 8, 16, 24, 48) and block edges.
        let dims = [
            1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 14, 15, 17, 23, 25, 47, 49, 97,
        ];
        for &m in &dims {
            // Also exactly the narrow kernels' widths (8, 16, 32), alone and after a panel.
            for &n in &[1, 3, 8, 16, 24, 32, 33, 48, 50, 80, 97] {
                for &k in &[1, 4, 31] {
                    let (ta, tb) = ((m + n) % 2 == 0, (m + k) % 3 == 0);
                    check::<f32>(
                        m,
                        n,
                        k,
                        ta,
                        tb,
                        n % 2 == 1,
                        1.0,
                        1.0,
                        false,
                        |v| v as f32,
                        1e-5,
                    );
                    check::<f64>(m, n, k, tb, ta, m % 2 == 0, 1.0, 1.0, true, |v| v, 1e-13);
                }
            }
        }
    }

    #[test]
    fn the_split_balances_the_busiest_thread() {
        for kern in f32::kernels() {
            let (mr, nr) = (kern.mr, kern.nr);
            // Ten full column panels and one of two thirds: split by columns, one thread
            // gets five panels and the other six; by rows, both get half the row tiles.
            let (m, n) = (8 * mr, 10 * nr + 2 * nr / 3);
            let (rows, cols) = split_costs(&kern, m, n, 2);
            let (_, last) = kern.for_cols(n % nr);
            assert_eq!(rows, 4 * mr * (10 * nr + last), "{}", kern.name);
            assert_eq!(cols, 8 * mr * (5 * nr + last), "{}", kern.name);
            assert!(rows < cols);
            // Many row tiles and few whole panels: the rows split evenly.
            let (rows, cols) = split_costs(&kern, 64 * mr, 3 * nr, 2);
            assert_eq!(rows, 32 * mr * 3 * nr);
            assert_eq!(cols, 64 * mr * 2 * nr);
            // One row tile cannot be split by rows.
            let (rows, cols) = split_costs(&kern, mr, 4 * nr, 2);
            assert!(cols < rows);
        }
    }

    #[test]
    fn the_split_weighs_the_operand_every_thread_reads_whole() {
        let Some(kern) = f32::best_kernel() else {
            return;
        };
        let x = [0f32; 1];
        let problem = |m: usize, n: usize, k: usize| Problem {
            m,
            n,
            k,
            a: x.as_ptr(),
            rsa: 0,
            csa: 0,
            b: x.as_ptr(),
            rsb: 0,
            csb: 0,
            c: std::ptr::null_mut(),
            rsc: 0,
            csc: 0,
            alpha: 1.0,
            beta: 0.0,
            read_c: false,
        };
        let cached_b = Prepacked {
            a: None,
            b: Some(x.as_ptr()),
        };
        let (mr, nr) = (kern.mr, kern.nr);
        // An LSTM cell's gates: B (the weight, transposed) is packed by this call, so the
        // columns split and the threads share only the small A.
        let lstm = problem(8 * mr, 21 * nr + nr / 3, 256);
        assert!(split_by_cols(&kern, &lstm, Prepacked::NONE, 2));
        // The same product with the weight's panels cached: the rows split, evenly.
        assert!(!split_by_cols(&kern, &lstm, cached_b, 2));
        // Both packed by the caller: the dimension with more micro-tiles.
        let both = Prepacked {
            a: Some(x.as_ptr()),
            b: Some(x.as_ptr()),
        };
        assert!(split_by_cols(&kern, &lstm, both, 2));
        assert!(!split_by_cols(
            &kern,
            &problem(64 * mr, 4 * nr, 64),
            both,
            2
        ));
    }

    #[test]
    fn narrow_kernels_cover_their_widths_and_the_full_one_the_rest() {
        for kern in f32::kernels() {
            for n in 1..=kern.nr {
                let (_, w) = kern.for_cols(n);
                assert!(w >= n && w <= kern.nr, "{} n={n}", kern.name);
                let narrower = kern.narrow.iter().flatten().any(|&(v, _)| v >= n && v < w);
                assert!(!narrower, "{} n={n} ran {w} columns", kern.name);
            }
        }
    }

    #[test]
    fn short_kernels_cover_their_rows_and_the_full_one_the_rest() {
        for kern in f32::kernels() {
            for m in 1..=kern.mr {
                let (_, r) = kern.for_rows(m);
                assert!(r >= m && r <= kern.mr, "{} m={m}", kern.name);
                let shorter = kern.short.iter().flatten().any(|&(v, _)| v >= m && v < r);
                assert!(!shorter, "{} m={m} ran {r} rows", kern.name);
            }
        }
    }

    #[test]
    fn large_blocks_scales_and_transposes_match() {
        // Deeper than KC, wider than MC rows of one block, both thread splits (every product
        // is above `PARALLEL_WORK`).
        for &(m, n, k) in &[
            (250, 70, 400),
            (30, 300, 257),
            (13, 3100, 29),
            (241, 241, 193),
            // Three row blocks of unequal whole tiles (12, 13, 13 of 8 rows on AVX-512).
            (300, 60, 70),
            (17, 70, 1100),
            // One block a little deeper than KC (f32), then two equal ones.
            (9, 50, 600),
            (9, 50, 700),
            // Two blocks at the large-L2 depth of f32 on AVX-512 (1024), three at 512.
            (9, 50, 1400),
        ] {
            for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                check::<f32>(m, n, k, ta, tb, false, 0.5, 2.0, true, |v| v as f32, 1e-5);
                check::<f64>(m, n, k, ta, tb, true, -1.5, 0.25, true, |v| v, 1e-13);
            }
        }
    }

    #[test]
    fn depth_blocks_are_equal_and_at_most_a_quarter_over() {
        assert_eq!(depth_block(512, 576), 576);
        assert_eq!(depth_block(512, 640), 640);
        assert_eq!(depth_block(512, 641), 321);
        assert_eq!(depth_block(512, 1024), 512);
        assert_eq!(depth_block(512, 4608), 512);
        assert_eq!(depth_block(512, 2304), 461);
        assert_eq!(depth_block(512, 0), 1);
        assert_eq!(depth_block(192, 7), 7);
        assert_eq!(depth_block(1024, 1280), 1280);
        assert_eq!(depth_block(1024, 2048), 1024);
        assert_eq!(depth_block(1024, 4608), 922);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn register_transpose_packs_like_the_scalar_loop() {
        if !super::super::simd::has_avx2_fma() {
            return;
        }
        // Depths around the 8-wide tiles, rows farther apart than they are long.
        for kc in [0, 1, 7, 8, 9, 16, 23, 64] {
            let rs = kc as isize + 5;
            let src: Vec<f32> = (0..8 * rs as usize).map(|v| v as f32 * 0.5 - 3.0).collect();
            let mut dst = vec![f32::NAN; 8 * kc];
            // SAFETY: 8 rows of `kc` values at stride `rs` lie in `src`; `dst` holds `8 * kc`;
            // the CPU has AVX2 (checked above).
            unsafe { x86::pack8_f32::<true>(src.as_ptr(), rs, kc, dst.as_mut_ptr(), 8) };
            for q in 0..kc {
                for i in 0..8 {
                    assert_eq!(
                        dst[q * 8 + i],
                        src[i * rs as usize + q],
                        "kc {kc} ({q},{i})"
                    );
                }
            }
        }
    }

    #[test]
    fn large_operands_pack_in_parallel_like_one_panel_at_a_time() {
        // Over a megabyte each, so the panels are packed by several threads; the row and
        // column counts leave a partial last panel.
        let Some((mr, nr)) = micro_tile::<f32>() else {
            return;
        };
        let (rows, k) = (301, 1003);
        let a: Vec<f32> = (0..rows * k).map(|v| (v % 977) as f32 - 400.0).collect();
        // Both layouts hold row `r` of `a` (a row of A, a column of B) as lane `r % w` of
        // panel `r / w`, `k` groups of `w` lanes, zero past the last row.
        let check = |out: &[f32], w: usize, what: &str| {
            for (panel, dst) in out.chunks_exact(w * k).enumerate() {
                for q in 0..k {
                    for i in 0..w {
                        let r = panel * w + i;
                        let want = if r < rows { a[r * k + q] } else { 0.0 };
                        assert_eq!(dst[q * w + i], want, "{what} {r} depth {q}");
                    }
                }
            }
        };
        let mut out = vec![f32::NAN; packed_lhs_len::<f32>(rows, k).unwrap()];
        assert!(pack_lhs(&a, rows, k, k, &mut out));
        check(&out, mr, "lhs row");
        let mut out = vec![f32::NAN; rows.div_ceil(nr) * nr * k];
        assert!(pack_rhs_transposed(&a, rows, k, &mut out));
        check(&out, nr, "rhs column");
    }

    #[test]
    fn empty_and_k0_products() {
        for kern in f32::kernels() {
            let mut c = vec![f32::NAN, 2.0, 3.0, 4.0];
            let p = Problem {
                m: 2,
                n: 2,
                k: 0,
                a: [].as_ptr(),
                rsa: 0,
                csa: 1,
                b: [].as_ptr(),
                rsb: 2,
                csb: 1,
                c: c.as_mut_ptr(),
                rsc: 2,
                csc: 1,
                alpha: 1.0,
                beta: 0.5,
                read_c: true,
            };
            // SAFETY: k = 0, so A and B are not read; C is 2 x 2.
            assert!(unsafe { gemm_with(kern, &p, 2) });
            assert!(c[0].is_nan());
            assert_eq!(&c[1..], &[1.0, 1.5, 2.0]);
            let q = Problem { read_c: false, ..p };
            // SAFETY: as above.
            assert!(unsafe { gemm_with(kern, &q, 1) });
            assert_eq!(c, vec![0.0; 4]);
            let e = Problem { m: 0, ..p };
            // SAFETY: an empty product touches nothing.
            assert!(unsafe { gemm_with(kern, &e, 1) });
        }
    }

    #[test]
    fn nan_and_inf_propagate_but_an_unread_c_does_not() {
        for kern in f32::kernels() {
            let (m, n, k) = (9, 50, 3);
            let mut a = vec![1.0f32; m * k];
            a[0] = f32::NAN; // row 0 all NaN
            a[k] = f32::INFINITY; // row 1: inf * b
            let b = vec![1.0f32; k * n];
            let mut c = vec![f32::NAN; m * n];
            let p = Problem {
                m,
                n,
                k,
                a: a.as_ptr(),
                rsa: k as isize,
                csa: 1,
                b: b.as_ptr(),
                rsb: n as isize,
                csb: 1,
                c: c.as_mut_ptr(),
                rsc: n as isize,
                csc: 1,
                alpha: 1.0,
                beta: 0.0,
                read_c: false,
            };
            // SAFETY: the buffers hold the described matrices.
            assert!(unsafe { gemm_with(kern, &p, 1) });
            assert!(c[..n].iter().all(|v| v.is_nan()), "{}", kern.name);
            assert!(c[n..2 * n].iter().all(|&v| v == f32::INFINITY));
            assert!(c[2 * n..].iter().all(|&v| v == 3.0));
        }
    }
}
