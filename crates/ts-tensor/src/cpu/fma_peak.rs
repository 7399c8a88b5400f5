//! The machine's measured peak of fused multiply-adds: the reference a GEMM's efficiency is
//! quoted against ("85% of peak"). Each thread runs chains of independent vector FMAs on
//! registers alone (no loads, nothing to wait on but the FMA units), in the widest instruction
//! set the kernels use, for a few short windows; the best window's total counts.

use std::sync::Barrier;
use std::time::Instant;

/// A measured FMA peak.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FmaPeak {
    /// Floating-point operations per second, in billions (an FMA counts two), all threads.
    pub gflops: f64,
    /// The threads that ran together.
    pub threads: usize,
    /// The instruction set: `"avx512"` (16 f32 lanes) or `"avx2"` (8 lanes).
    pub isa: &'static str,
}

/// Loop iterations of one window (~25 ms at 3.5 GHz on AVX-512: 24 FMAs per iteration, two
/// issued per cycle).
const ITERS: u64 = 8_000_000;
/// Windows measured; the best counts (the first ones also bring the core to its FMA clock).
const WINDOWS: usize = 6;

/// Measures the f32 FMA peak of `threads` threads running at once, or `None` on a CPU without
/// AVX2 + FMA (where the project's kernels have no FMA path to compare against).
pub fn fma_peak(threads: usize) -> Option<FmaPeak> {
    measure(threads, ITERS)
}

/// [`fma_peak`] with windows of `iters` loop iterations.
fn measure(threads: usize, iters: u64) -> Option<FmaPeak> {
    let threads = threads.max(1);
    let (isa, flops_per_iter) = isa()?;
    let barrier = Barrier::new(threads);
    let rates: Vec<Vec<f64>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    (0..WINDOWS)
                        .map(|_| {
                            barrier.wait();
                            let t = Instant::now();
                            std::hint::black_box(run(isa, iters));
                            (iters * flops_per_iter) as f64 / t.elapsed().as_secs_f64() / 1e9
                        })
                        .collect()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_default())
            .collect()
    });
    let gflops = (0..WINDOWS)
        .map(|w| rates.iter().map(|r| r.get(w).copied().unwrap_or(0.0)).sum())
        .fold(0.0, f64::max);
    Some(FmaPeak {
        gflops,
        threads,
        isa,
    })
}

/// The instruction set to measure and the floating-point operations of one loop iteration.
fn isa() -> Option<(&'static str, u64)> {
    if super::simd::has_avx512() {
        Some(("avx512", 24 * 16 * 2))
    } else if super::simd::has_avx2_fma() {
        Some(("avx2", 12 * 8 * 2))
    } else {
        None
    }
}

/// Runs `iters` iterations of the FMA chains of `isa` and returns a value depending on them.
fn run(isa: &str, iters: u64) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `isa` came from `isa()`, which checked that the CPU has the features each
        // function enables.
        unsafe {
            if isa == "avx512" {
                return x86::chains_avx512(iters);
            }
            return x86::chains_avx2(iters);
        }
    }
    #[allow(unreachable_code)]
    {
        let _ = (isa, iters);
        0.0
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// 24 independent chains of 16-lane FMAs (24 of the 32 registers: enough to cover the
    /// FMA latency on two ports several times over).
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn chains_avx512(iters: u64) -> f32 {
        let mut acc = [_mm512_set1_ps(1.0); 24];
        let a = _mm512_set1_ps(std::hint::black_box(0.999_999));
        let b = _mm512_set1_ps(std::hint::black_box(1e-7));
        for _ in 0..iters {
            for r in acc.iter_mut() {
                *r = _mm512_fmadd_ps(*r, a, b);
            }
        }
        let sum = acc
            .iter()
            .fold(_mm512_setzero_ps(), |s, &r| _mm512_add_ps(s, r));
        _mm512_reduce_add_ps(sum)
    }

    /// 12 independent chains of 8-lane FMAs (12 of the 16 registers).
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn chains_avx2(iters: u64) -> f32 {
        let mut acc = [_mm256_set1_ps(1.0); 12];
        let a = _mm256_set1_ps(std::hint::black_box(0.999_999));
        let b = _mm256_set1_ps(std::hint::black_box(1e-7));
        for _ in 0..iters {
            for r in acc.iter_mut() {
                *r = _mm256_fmadd_ps(*r, a, b);
            }
        }
        let mut lanes = [0.0f32; 8];
        let sum = acc
            .iter()
            .fold(_mm256_setzero_ps(), |s, &r| _mm256_add_ps(s, r));
        _mm256_storeu_ps(lanes.as_mut_ptr(), sum);
        lanes.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chains_compute_what_they_claim() {
        // 1 + 1e-7 * sum of 0.999999^i over the iterations, in every lane of every chain.
        #[cfg(target_arch = "x86_64")]
        if let Some((isa, _)) = isa() {
            let chains = if isa == "avx512" { 24 * 16 } else { 12 * 8 };
            let got = run(isa, 1000) as f64 / chains as f64;
            let mut want = 1.0f64;
            for _ in 0..1000 {
                want = want * 0.999_999 + 1e-7;
            }
            assert!((got - want).abs() < 1e-4, "{got} vs {want}");
            // A short measurement returns a positive rate for the threads asked for.
            let p = measure(2, 1000).expect("the CPU has an FMA path");
            assert!(p.gflops > 0.0 && p.threads == 2 && p.isa == isa);
        }
    }
}
