//! Exact GELU, `x Φ(x) = x erfc(-x / sqrt 2) / 2`, on AVX-512 with intrinsics: the erfc
//! formula of [`super::fastmath::erfc_f32`] (`t e^(g(t) - a^2)`, `t = 1 / (1 + a / 2)`), with
//! `t` from `vrcp14ps` and one Newton step instead of a division, `e^w` from a degree-5
//! polynomial with the power of two applied by `vscalefps`, and the halving folded into its
//! coefficients: ~31 instructions per 16 lanes, eight vectors at a time with every constant an
//! embedded-broadcast memory operand. Eight vectors with every `|x| <= 3` (96% of blocks of
//! normal activations) take a shorter path instead: `x (1/2 + x R(x^2))` with `R` a degree-10
//! fit, ~16 instructions per 16 lanes, as accurate as torch's own formula there (absolute error
//! under 4e-7; torch's `erf` is within 1.5e-7 of `erf`, so its `Φ` within 7.5e-8 and its GELU
//! within 2.3e-7 at `|x| = 3`); this brought the 2-thread kernel from above torch's time to
//! below it. The scalar-form kernels the compiler
//! vectorizes evaluate both of `erf`'s branches per element (about 70 instructions per 16
//! lanes), and written through a division the formula lost on a Xeon, where a zmm division
//! costs more than a polynomial; neither the approximate reciprocal nor `vscalefps` can be
//! reached from scalar code. AVX2 CPUs get the same formula on 8 lanes (`t` by a division,
//! which on Zen 3 runs beside the FMA pipes, `2^n` from exponent bits).

// The polynomial coefficients keep the digits of their fits.
#![allow(clippy::excessive_precision)]

/// The contiguous-run kernel for this CPU (`dst[i] = gelu(src[i])`, `dst` equal to `src` or
/// disjoint from it), or `None` without AVX2 and FMA (the generic loop then runs).
pub(crate) fn kernel() -> Option<unsafe fn(*const f32, *mut f32, usize)> {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx512() {
            return Some(x86::gelu_erf_avx512);
        }
        if super::simd::has_avx2_fma() {
            return Some(x86::gelu_erf_avx2);
        }
    }
    None
}

/// `g(u)` of the erfc formula, highest power first (`u = t - 1/2`; the fit of
/// [`super::fastmath::erfc_f32`]).
const G: [f32; 10] = [
    1.395_468_3e-1,
    -2.338_073_8e-2,
    -2.625_357_5e-1,
    1.073_624_3e-1,
    2.795_236_4e-1,
    -1.575_741_5e-1,
    -3.750_745e-1,
    1.893_647_2e-1,
    1.345_285_7,
    -6.717_940_6e-1,
];

/// `e^r / 2` on `|r| <= ln 2 / 2`, highest power first (relative error below 1.5e-7).
const HALF_EXP: [f32; 6] = [
    0.5 * 8.297_646_4e-3,
    0.5 * 4.191_538_3e-2,
    0.5 * 1.666_757_5e-1,
    0.5 * 4.999_889_4e-1,
    0.5 * 9.999_997e-1,
    0.5 * 1.000_000_1,
];

/// Where the AVX-512 kernel's short path applies: `|x| <=` this for all 128 lanes of a step.
const SHORT_MAX: f32 = 3.0;

/// `R(s)` with `gelu(x) = x (1/2 + x R(x^2))` on `|x| <= 3`, in `u = s / 9 - 1/2` (the
/// powers of `s` itself lost four digits to cancellation in f32), highest power first; fitted
/// for the error of `gelu` relative to its value plus a small absolute part.
const SHORT_R: [f32; 11] = [
    2.671_641_8e-3,
    -6.448_088_2e-3,
    1.326_899_5e-2,
    -2.777_984_4e-2,
    5.236_815_7e-2,
    -8.734_907_2e-2,
    1.283_419_9e-1,
    -1.645_681_7e-1,
    1.838_890_3e-1,
    -1.856_649_7e-1,
    2.277_131_7e-1,
];

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{G, HALF_EXP, SHORT_MAX, SHORT_R};
    use std::arch::x86_64::*;

    /// The AVX-512 kernel's constants, one `f32` each: read through a pointer the compiler
    /// cannot see into, each use is an embedded-broadcast memory operand of its instruction
    /// (`{1to16}`) instead of a register, so eight vectors fit in flight without the
    /// constant copies and reloads that register pressure cost four.
    #[repr(C, align(64))]
    struct Consts([f32; 40]);

    // Indices of `Consts` past the two polynomials.
    const C_HALF_EXP: usize = G.len();
    const C_MAX_AX: usize = C_HALF_EXP + HALF_EXP.len();
    const C_HALF_SQRT1_2: usize = C_MAX_AX + 1;
    const C_ONE: usize = C_MAX_AX + 2;
    const C_HALF: usize = C_MAX_AX + 3;
    const C_LOG2E: usize = C_MAX_AX + 4;
    const C_ROUND: usize = C_MAX_AX + 5;
    const C_LN2: usize = C_MAX_AX + 6;
    const C_NEG_ZERO: usize = C_MAX_AX + 7;
    const C_SHORT_MAX: usize = C_MAX_AX + 8;
    const C_NINTH: usize = C_MAX_AX + 9;
    const C_SHORT_R: usize = C_MAX_AX + 10;

    static CONSTS: Consts = {
        let mut c = [0f32; 40];
        let mut i = 0;
        while i < G.len() {
            c[i] = G[i];
            i += 1;
        }
        let mut i = 0;
        while i < HALF_EXP.len() {
            c[C_HALF_EXP + i] = HALF_EXP[i];
            i += 1;
        }
        c[C_MAX_AX] = 15.5;
        c[C_HALF_SQRT1_2] = 0.5 * std::f32::consts::FRAC_1_SQRT_2;
        c[C_ONE] = 1.0;
        c[C_HALF] = 0.5;
        c[C_LOG2E] = std::f32::consts::LOG2_E;
        c[C_ROUND] = 12_582_912.0;
        c[C_LN2] = std::f32::consts::LN_2;
        c[C_NEG_ZERO] = -0.0;
        c[C_SHORT_MAX] = SHORT_MAX;
        c[C_NINTH] = 1.0 / (SHORT_MAX * SHORT_MAX);
        let mut i = 0;
        while i < SHORT_R.len() {
            c[C_SHORT_R + i] = SHORT_R[i];
            i += 1;
        }
        Consts(c)
    };

    /// `gelu(x)` for an array `$x` of `$n` vectors of 16 lanes, `$k` pointing at [`CONSTS`];
    /// ±inf give NaN, as torch's erf formulation does. Every step runs across the vectors
    /// before the next: one vector's evaluation is a single chain of ~45 dependent
    /// instructions, which alone filled the scheduler and ran at a third of the throughput.
    /// A macro, expanded in the feature-enabled loop: as a function, eight vectors' worth was
    /// not inlined, and its arrays went through memory on every call.
    macro_rules! gelu16 {
        ($x:expr, $k:expr, $n:expr) => {{
        let x: [__m512; $n] = $x;
        let k: *const f32 = $k;
        // SAFETY: every index below is inside `CONSTS` (24 values).
        let c = |i: usize| _mm512_set1_ps(*k.add(i));
        // One step across the vectors.
        macro_rules! each {
            ($j:ident => $e:expr) => {{
                let mut out = [_mm512_setzero_ps(); $n];
                for $j in 0..$n {
                    out[$j] = $e;
                }
                out
            }};
        }
        // Φ(x) = erfc(y) / 2 with y = -x / sqrt 2, a = |y| (past a = 11 erfc is 0 in f32);
        // `a^2 = x^2 / 2` is formed from x, since the rounding of x / sqrt 2, squared into
        // the exponent, would cost the negative tail its precision.
        let abs = each!(j => _mm512_abs_ps(x[j]));
        let ax = each!(j => _mm512_min_ps(abs[j], c(C_MAX_AX)));
        let d = each!(j => _mm512_fmadd_ps(ax[j], c(C_HALF_SQRT1_2), c(C_ONE)));
        let t0 = each!(j => _mm512_rcp14_ps(d[j]));
        // One Newton step: t = t0 (2 - d t0), relative error about 2^-28.
        let t = each!(j => _mm512_fmadd_ps(t0[j], _mm512_fnmadd_ps(d[j], t0[j], c(C_ONE)), t0[j]));
        let u = each!(j => _mm512_sub_ps(t[j], c(C_HALF)));
        let mut g = each!(j => _mm512_fmadd_ps(u[j], c(0), c(1)));
        for i in 2..G.len() {
            g = each!(j => _mm512_fmadd_ps(g[j], u[j], c(i)));
        }
        // E / 2 = t e^w / 2 with w = g - a^2 in [-122, 0]: w = n ln 2 + r, 2^n applied by
        // vscalefps (subnormal and zero results correct) and e^r / 2 a degree-5 fit on
        // |r| <= ln 2 / 2 (relative error below 1.5e-7). Forming w in f32 costs the far tail
        // (x < -6) a few parts in 1e6 of relative precision, where torch's formula is off by
        // tens of percent; Φ itself keeps ~2e-7.
        let w = each!(j => _mm512_fnmadd_ps(_mm512_mul_ps(ax[j], ax[j]), c(C_HALF), g[j]));
        // n = round(w log2 e) by adding and subtracting 1.5 * 2^23 (the fused add rounds):
        // two single-uop instructions where vrndscaleps is two uops on port 0 after a multiply.
        let n = each!(j => {
            _mm512_sub_ps(_mm512_fmadd_ps(w[j], c(C_LOG2E), c(C_ROUND)), c(C_ROUND))
        });
        let r = each!(j => _mm512_fnmadd_ps(n[j], c(C_LN2), w[j]));
        let mut p = each!(j => _mm512_fmadd_ps(r[j], c(C_HALF_EXP), c(C_HALF_EXP + 1)));
        for i in C_HALF_EXP + 2..C_HALF_EXP + HALF_EXP.len() {
            p = each!(j => _mm512_fmadd_ps(p[j], r[j], c(i)));
        }
        each!(j => {
            let half_e = _mm512_mul_ps(t[j], _mm512_scalef_ps(p[j], n[j]));
            // x > 0: x (1 - E / 2) = x - |x| E / 2; x <= 0: x E / 2 = -0 - |x| E / 2, the
            // base being max(-0, x) (which keeps a zero result's sign, and is x itself for a
            // NaN, the second operand). ±inf reach inf * 0 (E underflows) and give NaN, as
            // torch's erf formulation does.
            _mm512_fnmadd_ps(abs[j], half_e, _mm512_max_ps(c(C_NEG_ZERO), x[j]))
        })
        }};
    }

    /// `gelu(x)` for `$n` vectors whose lanes all have `|x| <= 3`: `x (1/2 + x R(x^2))`
    /// (see [`SHORT_R`]); `-0` stays `-0` (the last step multiplies by `x`).
    macro_rules! gelu16_short {
        ($x:expr, $k:expr, $n:expr) => {{
            let x: [__m512; $n] = $x;
            let k: *const f32 = $k;
            // SAFETY: every index below is inside `CONSTS`.
            let c = |i: usize| _mm512_set1_ps(*k.add(i));
            let mut out = [_mm512_setzero_ps(); $n];
            let mut u = [_mm512_setzero_ps(); $n];
            for j in 0..$n {
                u[j] = _mm512_fmsub_ps(_mm512_mul_ps(x[j], x[j]), c(C_NINTH), c(C_HALF));
            }
            let mut p = [_mm512_setzero_ps(); $n];
            for j in 0..$n {
                p[j] = _mm512_fmadd_ps(u[j], c(C_SHORT_R), c(C_SHORT_R + 1));
            }
            for i in C_SHORT_R + 2..C_SHORT_R + SHORT_R.len() {
                for j in 0..$n {
                    p[j] = _mm512_fmadd_ps(p[j], u[j], c(i));
                }
            }
            for j in 0..$n {
                out[j] = _mm512_mul_ps(x[j], _mm512_fmadd_ps(x[j], p[j], c(C_HALF)));
            }
            out
        }};
    }

    /// Vectors per step of the AVX-512 kernel: with its constants in memory operands, eight
    /// chains side by side fit the registers.
    const AVX512_VECTORS: usize = 8;

    /// How far ahead (elements) the AVX-512 kernel asks for its input: the hardware
    /// prefetcher alone left a Xeon's single core waiting on memory for 4M-element runs.
    const PREFETCH_AHEAD: usize = 1024;

    /// `dst[i] = gelu(src[i])` for `i < n`, 16 lanes at a time (the last block masked).
    ///
    /// # Safety
    /// The CPU must have AVX-512F and FMA; `src` must be readable and `dst` writable for `n`
    /// `f32`s, and the two must be equal or disjoint.
    #[target_feature(enable = "avx512f,fma")]
    pub(super) unsafe fn gelu_erf_avx512(src: *const f32, dst: *mut f32, n: usize) {
        const LANES: usize = 16;
        const NV: usize = AVX512_VECTORS;
        let k = std::hint::black_box(CONSTS.0.as_ptr());
        let step = LANES * NV;
        let mut i = 0;
        while i + step <= n {
            // SAFETY: elements `i..i + step` lie inside both buffers (caller contract); in
            // place, the block is read before it is written. A prefetch is only a hint (its
            // address may lie past the buffer).
            unsafe {
                for j in 0..NV {
                    let ahead = src.wrapping_add(i + PREFETCH_AHEAD + LANES * j);
                    _mm_prefetch::<_MM_HINT_T0>(ahead as *const i8);
                }
                let mut x = [_mm512_setzero_ps(); NV];
                for (j, v) in x.iter_mut().enumerate() {
                    *v = _mm512_loadu_ps(src.add(i + LANES * j));
                }
                // NaN compares "not <=" and takes the full path.
                let mut outside: __mmask16 = 0;
                for v in x {
                    outside |= _mm512_cmp_ps_mask::<_CMP_NLE_UQ>(
                        _mm512_abs_ps(v),
                        _mm512_set1_ps(*k.add(C_SHORT_MAX)),
                    );
                }
                let y = if outside == 0 {
                    gelu16_short!(x, k, NV)
                } else {
                    gelu16!(x, k, NV)
                };
                for (j, v) in y.into_iter().enumerate() {
                    _mm512_storeu_ps(dst.add(i + LANES * j), v);
                }
            }
            i += step;
        }
        while i < n {
            let left = n - i;
            let m: __mmask16 = if left >= LANES {
                0xFFFF
            } else {
                ((1u32 << left) - 1) as __mmask16
            };
            // SAFETY: lanes outside the mask are neither read nor written; the rest lie
            // inside the `n` elements of each buffer (caller contract).
            unsafe {
                let x = _mm512_maskz_loadu_ps(m, src.add(i));
                _mm512_mask_storeu_ps(dst.add(i), m, gelu16!([x], k, 1)[0]);
            }
            i += LANES;
        }
    }

    /// The AVX2 kernel's constants as whole vectors, read through a pointer the compiler
    /// cannot see into: as memory operands of the FMAs they cost no extra instruction, where
    /// the compiler's per-use `vbroadcastss` (16 registers cannot hold them all) made each
    /// Horner step cost ~1.8 cycles instead of 0.5 on Zen 3.
    #[repr(C, align(32))]
    struct Splats {
        g: [[f32; 8]; G.len()],
        half_exp: [[f32; 8]; HALF_EXP.len()],
        k: [[f32; 8]; 8],
    }

    const fn splat<const L: usize>(c: [f32; L]) -> [[f32; 8]; L] {
        let mut a = [[0.0; 8]; L];
        let mut i = 0;
        while i < L {
            a[i] = [c[i]; 8];
            i += 1;
        }
        a
    }

    // Indices of `Splats::k`.
    const ABS: usize = 0;
    const MAX_AX: usize = 1;
    const HALF_SQRT1_2: usize = 2;
    const ONE: usize = 3;
    const HALF: usize = 4;
    const LOG2E: usize = 5;
    const ROUND: usize = 6;
    const LN2: usize = 7;

    static SPLATS: Splats = Splats {
        g: splat(G),
        half_exp: splat(HALF_EXP),
        k: splat([
            f32::from_bits(0x7fff_ffff),
            15.5,
            0.5 * std::f32::consts::FRAC_1_SQRT_2,
            1.0,
            0.5,
            std::f32::consts::LOG2_E,
            12_582_912.0,
            std::f32::consts::LN_2,
        ]),
    };

    /// [`gelu16!`] on 8 lanes with AVX2: `t` by a division (beside the FMA pipes on Zen 3),
    /// `2^n` from exponent bits in two factors (n reaches -176, past the normal range), the
    /// sign by a blend.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn gelu8<const N: usize>(x: [__m256; N], tab: &Splats) -> [__m256; N] {
        macro_rules! each {
            ($j:ident => $e:expr) => {{
                let mut out = [_mm256_setzero_ps(); N];
                for $j in 0..N {
                    out[$j] = $e;
                }
                out
            }};
        }
        // SAFETY: `Splats` is 32-byte aligned and each row is 8 floats.
        let ld = |v: &[f32; 8]| unsafe { _mm256_load_ps(v.as_ptr()) };
        let k = |i: usize| ld(&tab.k[i]);
        let ax = each!(j => _mm256_min_ps(_mm256_and_ps(x[j], k(ABS)), k(MAX_AX)));
        let d = each!(j => _mm256_fmadd_ps(ax[j], k(HALF_SQRT1_2), k(ONE)));
        let t = each!(j => _mm256_div_ps(k(ONE), d[j]));
        let u = each!(j => _mm256_sub_ps(t[j], k(HALF)));
        let mut g = [ld(&tab.g[0]); N];
        for c in &tab.g[1..] {
            g = each!(j => _mm256_fmadd_ps(g[j], u[j], ld(c)));
        }
        let w = each!(j => _mm256_fnmadd_ps(_mm256_mul_ps(ax[j], ax[j]), k(HALF), g[j]));
        let nr = each!(j => _mm256_fmadd_ps(w[j], k(LOG2E), k(ROUND)));
        let n = each!(j => _mm256_sub_ps(nr[j], k(ROUND)));
        let r = each!(j => _mm256_fnmadd_ps(n[j], k(LN2), w[j]));
        let mut p = [ld(&tab.half_exp[0]); N];
        for c in &tab.half_exp[1..] {
            p = each!(j => _mm256_fmadd_ps(p[j], r[j], ld(c)));
        }
        let int = _mm256_castps_si256;
        each!(j => {
            // n in [-176, 0] from the rounding add's low bits; 2^n as 2^n1 * 2^n2, both
            // normal (n1 = floor(n / 2), n2 = n - n1); 2^m has the bits of 1.0 plus m << 23.
            let ni = _mm256_sub_epi32(int(nr[j]), int(k(ROUND)));
            let n1 = _mm256_srai_epi32::<1>(ni);
            let n2 = _mm256_sub_epi32(ni, n1);
            let pow2 = |m| {
                _mm256_castsi256_ps(_mm256_add_epi32(_mm256_slli_epi32::<23>(m), int(k(ONE))))
            };
            let half_e = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(t[j], p[j]), pow2(n1)), pow2(n2));
            let q = _mm256_mul_ps(x[j], half_e);
            let pos = _mm256_cmp_ps::<_CMP_GT_OQ>(x[j], _mm256_setzero_ps());
            _mm256_blendv_ps(q, _mm256_sub_ps(x[j], q), pos)
        })
    }

    /// Vectors per step of the AVX2 kernel: the evaluation is latency-bound (a ~100-cycle
    /// chain per vector), and six chains side by side ran fastest on Zen 3 (4: +10%, 8:
    /// +30% with spills).
    const AVX2_VECTORS: usize = 6;

    /// `dst[i] = gelu(src[i])` for `i < n`, 8 lanes at a time (the last blocks through a
    /// buffer).
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA; `src` must be readable and `dst` writable for `n`
    /// `f32`s, and the two must be equal or disjoint.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn gelu_erf_avx2(src: *const f32, dst: *mut f32, n: usize) {
        const STEP: usize = 8 * AVX2_VECTORS;
        let tab = std::hint::black_box(&SPLATS);
        let mut i = 0;
        while i + STEP <= n {
            // SAFETY: elements `i..i + STEP` lie inside both buffers (caller contract); in
            // place, the block is read before it is written.
            unsafe {
                let mut x = [_mm256_setzero_ps(); AVX2_VECTORS];
                for (j, v) in x.iter_mut().enumerate() {
                    *v = _mm256_loadu_ps(src.add(i + 8 * j));
                }
                for (j, v) in gelu8(x, tab).into_iter().enumerate() {
                    _mm256_storeu_ps(dst.add(i + 8 * j), v);
                }
            }
            i += STEP;
        }
        while i < n {
            let len = (n - i).min(8);
            let mut buf = [0f32; 8];
            // SAFETY: `len` elements from `i` lie inside both buffers (caller contract).
            unsafe {
                std::ptr::copy_nonoverlapping(src.add(i), buf.as_mut_ptr(), len);
                let y = gelu8::<1>([_mm256_loadu_ps(buf.as_ptr())], tab)[0];
                _mm256_storeu_ps(buf.as_mut_ptr(), y);
                std::ptr::copy_nonoverlapping(buf.as_ptr(), dst.add(i), len);
            }
            i += len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::kernel;

    /// Every kernel this CPU can run: the widest, and the AVX2 one beside AVX-512.
    fn kernels() -> Vec<unsafe fn(*const f32, *mut f32, usize)> {
        let mut ks: Vec<_> = kernel().into_iter().collect();
        ks.extend(crate::cpu::simd::with_avx2_only(kernel));
        ks.dedup_by_key(|k| *k as usize);
        ks
    }

    fn reference(x: f32) -> f64 {
        let x = x as f64;
        x * 0.5 * libm::erfc(-x * std::f64::consts::FRAC_1_SQRT_2)
    }

    /// The error allowed at `x`: 6e-7 relative, plus the rounding of the exponent `-x^2 / 2`
    /// formed in f32 (relative `1e-7 x^2`, which matters in the far negative tail only).
    /// Within `|x| <= 3` the AVX-512 kernel's short path may also be 4e-7 off in absolute
    /// terms (torch's own formula: 2.3e-7 at `|x| = 3`).
    fn tolerance(x: f32, want: f64) -> f64 {
        let short = if x.abs() <= super::SHORT_MAX {
            4e-7
        } else {
            0.0
        };
        (6e-7 + 1e-7 * (x as f64).powi(2)) * want.abs() + 1e-37 + short
    }

    #[test]
    fn matches_the_f64_formula_at_every_length() {
        // Without AVX2 the list is empty: the generic loop runs (tested with the op).
        for (k, n) in kernels().into_iter().flat_map(|k| {
            (0..40usize)
                .chain([63, 64, 65, 100, 127, 128, 129, 200])
                .map(move |n| (k, n))
        }) {
            let src: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 7.0).collect();
            let mut dst = vec![f32::NAN; n + 1];
            // SAFETY: `src` holds `n` values, `dst` at least `n`; disjoint; the kernel's features detected.
            unsafe { k(src.as_ptr(), dst.as_mut_ptr(), n) };
            for (i, &x) in src.iter().enumerate() {
                let want = reference(x);
                let err = (dst[i] as f64 - want).abs();
                assert!(
                    err <= tolerance(x, want),
                    "gelu({x}) = {} want {want}",
                    dst[i]
                );
            }
            assert!(dst[n].is_nan(), "wrote past the end at length {n}");
        }
    }

    #[test]
    fn dense_range_in_place_and_special_values() {
        for k in kernels() {
            dense_range_in_place(k);
        }
    }

    #[test]
    fn short_path_blocks_keep_signs_and_hand_nan_to_the_full_path() {
        for k in kernels() {
            // 128 lanes (one step) inside |x| <= 3, with zeros, tiny values and the bounds.
            let mut src: Vec<f32> = (0..128).map(|i| -3.0 + i as f32 * (6.0 / 127.0)).collect();
            src[3] = -0.0;
            src[4] = 0.0;
            src[5] = -1e-30;
            src[6] = 1e-30;
            src[7] = -3.0;
            src[8] = 3.0;
            let mut with_nan = src.clone();
            with_nan[100] = f32::NAN;
            for v in [src, with_nan] {
                let mut out = vec![0f32; v.len()];
                // SAFETY: both hold `v.len()` values; disjoint; the kernel's features detected.
                unsafe { k(v.as_ptr(), out.as_mut_ptr(), v.len()) };
                for (&x, &got) in v.iter().zip(&out) {
                    if x.is_nan() {
                        assert!(got.is_nan());
                        continue;
                    }
                    let want = reference(x);
                    let err = (got as f64 - want).abs();
                    assert!(err <= tolerance(x, want), "gelu({x}) = {got} want {want}");
                    if x == 0.0 {
                        assert_eq!(got.is_sign_negative(), x.is_sign_negative(), "gelu({x})");
                    }
                }
            }
        }
    }

    fn dense_range_in_place(k: unsafe fn(*const f32, *mut f32, usize)) {
        let mut v: Vec<f32> = (0..200_001).map(|i| -20.0 + i as f32 * 2e-4).collect();
        v.extend([
            0.0,
            -0.0,
            1e-30,
            -1e-30,
            30.0,
            -30.0,
            f32::NAN,
            f32::INFINITY,
            -f32::INFINITY,
        ]);
        let src = v.clone();
        // SAFETY: in place over `v`'s elements; the kernel's features detected.
        unsafe { k(v.as_ptr(), v.as_mut_ptr(), v.len()) };
        for (&x, &got) in src.iter().zip(&v) {
            if x.is_nan() || x.is_infinite() {
                assert!(got.is_nan(), "gelu({x}) = {got}");
                continue;
            }
            let want = reference(x);
            let err = (got as f64 - want).abs();
            assert!(err <= tolerance(x, want), "gelu({x}) = {got} want {want}");
        }
        assert_eq!(v[src.len() - 9], 0.0);
        assert_eq!(v[src.len() - 5], 30.0);
        // Zeros keep torch's signs: gelu(-0) and the underflowed far tail are -0.
        for back in [9, 8, 4] {
            let (x, got) = (src[src.len() - back], v[src.len() - back]);
            assert_eq!(got, 0.0);
            assert_eq!(
                got.is_sign_negative(),
                x.is_sign_negative(),
                "gelu({x}) = {got}"
            );
        }
    }
}
