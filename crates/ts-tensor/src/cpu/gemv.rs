//! Matrix-vector products: a GEMM with one row (or one column) of C whose matrix is contiguous
//! along the depth, as a linear layer's weight is for one input row. Each output is one dot
//! product read straight from the matrix. The blocked GEMM would first copy the matrix into
//! micro-panels (reading it twice and keeping a megabyte-sized pack buffer on every thread:
//! ResNet's classifier, batch-1 linear and recurrent layers) and then run its 8-row tiles with
//! one row in use.

use rayon::prelude::*;

use crate::cpu::blocked_gemm::{GemmFloat, Problem, PARALLEL_WORK};
use crate::cpu::simd::simd_dispatch;

/// Lanes of each dot product's accumulator (a vector register or two; summed at the end).
const LANES: usize = 16;
/// Matrix rows one kernel call reduces together (their accumulators are independent chains
/// sharing each load of the vector).
const ROWS: usize = 4;
/// Outputs computed per chunk before they are written to C (a stack buffer).
const CHUNK: usize = 64;

/// Runs `p` as matrix-vector products when C has one row (or one column) and the matrix is
/// contiguous along the depth with a non-negative stride between its rows; `false` when `p` is
/// not such a product (the caller runs the blocked GEMM).
///
/// # Safety
/// As [`crate::cpu::blocked_gemm::gemm`]: the operands are valid for their sizes and strides, and
/// C is disjoint from A and B with distinct elements.
pub(crate) unsafe fn try_gemv<T: GemmFloat>(p: &Problem<T>, threads: usize) -> bool {
    // One column of C is the transposed product `C^T = B^T A^T` with one row.
    let p = if p.m != 1 && p.n == 1 {
        Problem {
            m: 1,
            n: p.m,
            a: p.b,
            rsa: p.csb,
            csa: p.rsb,
            b: p.a,
            rsb: p.csa,
            csb: p.rsa,
            rsc: p.csc,
            csc: p.rsc,
            ..*p
        }
    } else {
        *p
    };
    // The vector and the matrix's rows (B's columns) must be contiguous along the depth.
    let depth_contiguous = p.k == 1 || (p.csa == 1 && p.rsb == 1);
    if p.m != 1 || p.k == 0 || !depth_contiguous || p.csb < 0 || p.n < 2 {
        return false;
    }
    let ld = p.csb as usize;
    // SAFETY: the vector is row 0 of A: `k` contiguous elements (caller contract).
    let x = unsafe { std::slice::from_raw_parts(p.a, p.k) };
    // SAFETY: B's columns are `n` runs of `k` contiguous elements `ld` apart, all inside B.
    let w = unsafe { std::slice::from_raw_parts(p.b, (p.n - 1) * ld + p.k) };
    // The closure borrows the whole problem (`Sync`), not its raw-pointer fields.
    let p = &p;
    let run = |lo: usize, hi: usize| {
        let mut acc = [T::ZERO; CHUNK];
        let mut j = lo;
        while j < hi {
            let len = CHUNK.min(hi - j);
            dot_rows_simd(x, &w[j * ld..], ld, &mut acc[..len]);
            for (t, &v) in acc[..len].iter().enumerate() {
                // SAFETY: column `j + t < n` of C's single row is inside C, and the column
                // ranges of parallel calls are disjoint.
                unsafe {
                    let q = p.c.offset((j + t) as isize * p.csc);
                    *q = if p.read_c {
                        p.alpha * v + p.beta * *q
                    } else {
                        p.alpha * v
                    };
                }
            }
            j += len;
        }
    };
    let tasks = if p.n.saturating_mul(p.k) >= PARALLEL_WORK {
        threads.clamp(1, p.n.div_ceil(CHUNK))
    } else {
        1
    };
    if tasks <= 1 {
        run(0, p.n);
    } else {
        crate::threads::parallel_region();
        (0..tasks)
            .into_par_iter()
            .for_each(|t| run(p.n * t / tasks, p.n * (t + 1) / tasks));
    }
    true
}

simd_dispatch!(fn dot_rows_simd<T: GemmFloat>(x: &[T], w: &[T], ld: usize, out: &mut [T]) = dot_rows;);

/// `out[j] = x . w[j * ld..j * ld + x.len()]` for each `j` (rows of `w` `ld` apart), [`ROWS`]
/// rows at a time and the rest one by one.
#[inline(always)]
fn dot_rows<T: GemmFloat>(x: &[T], w: &[T], ld: usize, out: &mut [T]) {
    let k = x.len();
    let row = |j: usize| &w[j * ld..j * ld + k];
    let whole = out.len() / ROWS * ROWS;
    for (q, o) in out[..whole].chunks_exact_mut(ROWS).enumerate() {
        o.copy_from_slice(&dots::<T, ROWS>(
            x,
            std::array::from_fn(|r| row(q * ROWS + r)),
        ));
    }
    for (j, o) in out.iter_mut().enumerate().skip(whole) {
        *o = dots::<T, 1>(x, [row(j)])[0];
    }
}

/// The dot products of `x` with each of `R` rows of its length: `LANES`-wide accumulators, one
/// independent chain per row sharing each load of `x`, then the tail.
#[inline(always)]
fn dots<T: GemmFloat, const R: usize>(x: &[T], rows: [&[T]; R]) -> [T; R] {
    let k = x.len();
    let body = k / LANES * LANES;
    let mut acc = [[T::ZERO; LANES]; R];
    for i in (0..body).step_by(LANES) {
        let xs = &x[i..i + LANES];
        for (acc, row) in acc.iter_mut().zip(&rows) {
            let ws = &row[i..i + LANES];
            for l in 0..LANES {
                acc[l] = xs[l].fma(ws[l], acc[l]);
            }
        }
    }
    std::array::from_fn(|r| {
        let mut s = lane_sum(&acc[r]);
        for i in body..k {
            s = x[i].fma(rows[r][i], s);
        }
        s
    })
}

/// The sum of an accumulator's lanes, pairwise (halves added until one lane is left).
#[inline(always)]
fn lane_sum<T: GemmFloat>(acc: &[T; LANES]) -> T {
    let mut v = *acc;
    let mut width = LANES / 2;
    while width > 0 {
        for l in 0..width {
            v[l] = v[l] + v[l + width];
        }
        width /= 2;
    }
    v[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The product of `[1, k] @ [k, n]` (B column `j` at `b[j * ld..]`), in f64.
    fn reference(x: &[f64], w: &[f64], ld: usize, n: usize) -> Vec<f64> {
        (0..n)
            .map(|j| x.iter().enumerate().map(|(i, &v)| v * w[j * ld + i]).sum())
            .collect()
    }

    fn values(len: usize, seed: u64) -> Vec<f64> {
        (0..len)
            .map(|i| (((i as u64 * 2654435761 + seed) % 1000) as f64 - 500.0) / 250.0)
            .collect()
    }

    #[test]
    fn one_row_matches_the_reference_for_every_tail() {
        for &(k, n) in &[(1, 3), (15, 5), (16, 4), (17, 9), (70, 67), (512, 130)] {
            let ld = k + 3;
            let x = values(k, 1);
            let w = values((n - 1) * ld + k, 2);
            let want = reference(&x, &w, ld, n);
            for read_c in [false, true] {
                let mut c = vec![1.5f64; n];
                let p = Problem {
                    m: 1,
                    n,
                    k,
                    a: x.as_ptr(),
                    rsa: k as isize,
                    csa: 1,
                    b: w.as_ptr(),
                    rsb: 1,
                    csb: ld as isize,
                    c: c.as_mut_ptr(),
                    rsc: n as isize,
                    csc: 1,
                    alpha: 2.0,
                    beta: 0.5,
                    read_c,
                };
                // SAFETY: the operands are the vectors above, with these sizes and strides.
                assert!(unsafe { try_gemv(&p, 2) });
                for (j, (&got, &want)) in c.iter().zip(&want).enumerate() {
                    let want = 2.0 * want + if read_c { 0.75 } else { 0.0 };
                    assert!(
                        (got - want).abs() < 1e-9,
                        "k {k} n {n} col {j}: {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn one_column_runs_transposed_and_f32_matches() {
        // C [n, 1] = A [n, k] (row-major) @ x [k, 1]; large enough to split across threads.
        let (n, k) = (2048, 600);
        let a: Vec<f32> = values(n * k, 3).iter().map(|&v| v as f32).collect();
        let x: Vec<f32> = values(k, 4).iter().map(|&v| v as f32).collect();
        let mut c = vec![f32::NAN; n];
        let p = Problem {
            m: n,
            n: 1,
            k,
            a: a.as_ptr(),
            rsa: k as isize,
            csa: 1,
            b: x.as_ptr(),
            rsb: 1,
            csb: 1,
            c: c.as_mut_ptr(),
            rsc: 1,
            csc: 1,
            alpha: 1.0,
            beta: 0.0,
            read_c: false,
        };
        // SAFETY: as above.
        assert!(unsafe { try_gemv(&p, 2) });
        let a64: Vec<f64> = a.iter().map(|&v| v as f64).collect();
        let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let want = reference(&x64, &a64, k, n);
        for (j, (&got, &want)) in c.iter().zip(&want).enumerate() {
            assert!((got as f64 - want).abs() < 1e-3, "row {j}: {got} vs {want}");
        }
    }

    #[test]
    fn other_layouts_are_left_to_the_blocked_gemm() {
        let (x, w) = (vec![1.0f32; 8], vec![1.0f32; 64]);
        let mut c = vec![0.0f32; 8];
        let p = Problem {
            m: 1,
            n: 8,
            k: 8,
            a: x.as_ptr(),
            rsa: 8,
            csa: 1,
            b: w.as_ptr(),
            // B row-major (`[k, n]` contiguous along n): not depth-contiguous.
            rsb: 8,
            csb: 1,
            c: c.as_mut_ptr(),
            rsc: 8,
            csc: 1,
            alpha: 1.0,
            beta: 0.0,
            read_c: false,
        };
        // SAFETY: as above.
        assert!(!unsafe { try_gemv(&p, 1) });
        assert!(c.iter().all(|&v| v == 0.0));
    }
}
