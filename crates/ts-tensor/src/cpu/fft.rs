//! One-dimensional discrete Fourier transforms of any length, on complex128 buffers.
//!
//! Power-of-two lengths use an iterative radix-2 Cooley–Tukey transform; short other lengths a
//! direct O(n²) sum with an exact twiddle table; longer other lengths Bluestein's chirp-z
//! algorithm, which turns the transform into a circular convolution of power-of-two length. All
//! arithmetic is in f64 (complex64 tensors are widened), so results are at least as accurate as
//! PocketFFT's float32 ones that PyTorch computes.

use std::f64::consts::PI;

use crate::complex::Complex64 as C;

/// Lengths up to this (that are not powers of two) use the direct sum.
const DIRECT_MAX: usize = 64;

/// A precomputed transform of one length.
pub(crate) struct FftPlan {
    n: usize,
    kind: Kind,
}

enum Kind {
    /// Radix-2: `tw[k] = e^{-2πik/n}` for `k < n/2`.
    Pow2 { tw: Vec<C> },
    /// Direct sum: `tw[k] = e^{-2πik/n}` for `k < n`.
    Direct { tw: Vec<C> },
    /// Bluestein: the chirp `w[k] = e^{-πik²/n}`, the transformed conjugate chirp of length
    /// `m` (a power of two ≥ 2n-1) and the plan for `m`.
    Bluestein {
        chirp: Vec<C>,
        kernel: Vec<C>,
        inner: Box<FftPlan>,
    },
}

/// `e^{-2πi·num/den}`.
fn root(num: usize, den: usize) -> C {
    let a = -2.0 * PI * (num as f64) / (den as f64);
    C::new(a.cos(), a.sin())
}

/// How many plans each thread keeps (most programs transform one or two lengths).
const CACHED_PLANS: usize = 8;
/// Longer plans are rebuilt per call rather than kept (their tables are megabytes).
const CACHED_MAX_LEN: usize = 1 << 16;

thread_local! {
    /// Recently used plans of this thread, most recent last.
    static PLANS: std::cell::RefCell<Vec<std::rc::Rc<FftPlan>>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl FftPlan {
    /// The plan for length `n`, reused from this thread's cache: building one costs a sine and
    /// cosine per twiddle, as much as the transform of a short frame.
    pub(crate) fn cached(n: usize) -> std::rc::Rc<FftPlan> {
        if n > CACHED_MAX_LEN {
            return std::rc::Rc::new(FftPlan::new(n));
        }
        PLANS.with(|plans| {
            let mut plans = plans.borrow_mut();
            if let Some(i) = plans.iter().position(|p| p.n == n) {
                let plan = plans.remove(i);
                plans.push(plan.clone());
                return plan;
            }
            let plan = std::rc::Rc::new(FftPlan::new(n));
            if plans.len() == CACHED_PLANS {
                plans.remove(0);
            }
            plans.push(plan.clone());
            plan
        })
    }

    /// A plan for length `n` (≥ 1).
    pub(crate) fn new(n: usize) -> FftPlan {
        let kind = if n.is_power_of_two() {
            Kind::Pow2 {
                tw: (0..n / 2).map(|k| root(k, n)).collect(),
            }
        } else if n <= DIRECT_MAX {
            Kind::Direct {
                tw: (0..n).map(|k| root(k, n)).collect(),
            }
        } else {
            let m = (2 * n - 1).next_power_of_two();
            // k² mod 2n keeps the chirp's angle small and exact.
            let chirp: Vec<C> = (0..n)
                .map(|k| {
                    let k2 = ((k as u128 * k as u128) % (2 * n as u128)) as usize;
                    root(k2, 2 * n)
                })
                .collect();
            let inner = Box::new(FftPlan::new(m));
            let mut kernel = vec![C::new(0.0, 0.0); m];
            kernel[0] = chirp[0].conj();
            for k in 1..n {
                kernel[k] = chirp[k].conj();
                kernel[m - k] = chirp[k].conj();
            }
            inner.forward(&mut kernel);
            Kind::Bluestein {
                chirp,
                kernel,
                inner,
            }
        };
        FftPlan { n, kind }
    }

    /// In place, unnormalized: `X[k] = Σ x[j]·e^{-2πijk/n}`.
    pub(crate) fn forward(&self, buf: &mut [C]) {
        debug_assert_eq!(buf.len(), self.n);
        match &self.kind {
            Kind::Pow2 { tw } => radix2(buf, tw),
            Kind::Direct { tw } => {
                let n = self.n;
                let x = buf.to_vec();
                for (k, out) in buf.iter_mut().enumerate() {
                    let mut acc = C::new(0.0, 0.0);
                    for (j, &v) in x.iter().enumerate() {
                        acc = acc + v * tw[(j * k) % n];
                    }
                    *out = acc;
                }
            }
            Kind::Bluestein {
                chirp,
                kernel,
                inner,
            } => {
                let m = kernel.len();
                let mut a = vec![C::new(0.0, 0.0); m];
                for k in 0..self.n {
                    a[k] = buf[k] * chirp[k];
                }
                inner.forward(&mut a);
                for (v, &b) in a.iter_mut().zip(kernel.iter()) {
                    *v = *v * b;
                }
                inner.inverse(&mut a);
                let scale = 1.0 / m as f64;
                for k in 0..self.n {
                    buf[k] = (a[k] * chirp[k]).scale(scale);
                }
            }
        }
    }

    /// In place, unnormalized: `x[j] = Σ X[k]·e^{+2πijk/n}`.
    pub(crate) fn inverse(&self, buf: &mut [C]) {
        for v in buf.iter_mut() {
            *v = v.conj();
        }
        self.forward(buf);
        for v in buf.iter_mut() {
            *v = v.conj();
        }
    }
}

/// Iterative decimation-in-time radix-2 transform (`buf.len()` a power of two).
fn radix2(buf: &mut [C], tw: &[C]) {
    let n = buf.len();
    if n <= 1 {
        return;
    }
    let bits = n.trailing_zeros();
    for i in 0..n {
        let j = i.reverse_bits() >> (usize::BITS - bits);
        if j > i {
            buf.swap(i, j);
        }
    }
    // The first two stages have the twiddles 1 and -i: no multiplies.
    for pair in buf.chunks_exact_mut(2) {
        let (u, v) = (pair[0], pair[1]);
        pair[0] = u + v;
        pair[1] = u - v;
    }
    if n >= 4 {
        for quad in buf.chunks_exact_mut(4) {
            let (u0, u1) = (quad[0], quad[1]);
            let (v0, v1) = (quad[2], C::new(quad[3].im, -quad[3].re));
            quad[0] = u0 + v0;
            quad[2] = u0 - v0;
            quad[1] = u1 + v1;
            quad[3] = u1 - v1;
        }
    }
    let mut len = 8;
    while len <= n {
        let half = len / 2;
        let step = n / len;
        for block in buf.chunks_exact_mut(len) {
            let (lo, hi) = block.split_at_mut(half);
            for (j, (u, v)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                let t = *v * tw[j * step];
                let a = *u;
                *u = a + t;
                *v = a - t;
            }
        }
        len *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(x: &[C], sign: f64) -> Vec<C> {
        let n = x.len();
        (0..n)
            .map(|k| {
                x.iter().enumerate().fold(C::new(0.0, 0.0), |acc, (j, &v)| {
                    let a = sign * 2.0 * PI * ((j * k) % n) as f64 / n as f64;
                    acc + v * C::new(a.cos(), a.sin())
                })
            })
            .collect()
    }

    fn input(n: usize) -> Vec<C> {
        (0..n)
            .map(|i| {
                C::new(
                    (i as f64 * 0.37).sin() + 0.1 * i as f64,
                    (i as f64 * 1.3).cos(),
                )
            })
            .collect()
    }

    #[test]
    fn every_algorithm_matches_the_direct_sum() {
        // 1, powers of two, short odd/composite lengths, and long primes and composites
        // (Bluestein).
        for n in [
            1usize, 2, 3, 4, 5, 6, 7, 8, 12, 16, 64, 65, 97, 100, 128, 211, 360,
        ] {
            let x = input(n);
            let plan = FftPlan::new(n);
            let mut f = x.clone();
            plan.forward(&mut f);
            for (a, b) in f.iter().zip(naive(&x, -1.0)) {
                assert!(
                    (a.re - b.re).abs() < 1e-9 && (a.im - b.im).abs() < 1e-9,
                    "n={n}"
                );
            }
            let mut back = f.clone();
            plan.inverse(&mut back);
            for (a, b) in back.iter().zip(&x) {
                assert!(
                    (a.re / n as f64 - b.re).abs() < 1e-9 && (a.im / n as f64 - b.im).abs() < 1e-9,
                    "n={n}"
                );
            }
        }
    }

    #[test]
    fn cached_plans_are_reused_and_evicted() {
        let a = FftPlan::cached(16);
        assert!(std::rc::Rc::ptr_eq(&a, &FftPlan::cached(16)));
        for n in 1..=CACHED_PLANS + 1 {
            let plan = FftPlan::cached(100 + n);
            assert_eq!(plan.n, 100 + n);
        }
        // 16 was least recently used and is gone; a rebuilt plan transforms the same.
        let b = FftPlan::cached(16);
        assert!(!std::rc::Rc::ptr_eq(&a, &b));
        let x = input(16);
        let (mut fa, mut fb) = (x.clone(), x);
        a.forward(&mut fa);
        b.forward(&mut fb);
        assert_eq!(fa, fb);
        assert!(!std::rc::Rc::ptr_eq(
            &FftPlan::cached(CACHED_MAX_LEN * 2),
            &FftPlan::cached(CACHED_MAX_LEN * 2)
        ));
    }
}
