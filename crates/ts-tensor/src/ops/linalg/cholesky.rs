//! Cholesky factorization (LAPACK `potrf`) of the lower triangle.

use super::mat::Mat;
use super::real::Real;

/// Factors `A = L L^T` from the lower triangle of `a`. Returns `L` (upper part zeroed) and
/// `info`: the 1-based order of the first leading minor that is not positive-definite, or 0.
pub(crate) fn potrf_lower<T: Real>(a: &Mat<T>) -> (Mat<T>, i32) {
    let n = a.r;
    let mut l = a.triangle(false);
    for j in 0..n {
        let mut ajj = l[(j, j)];
        for k in 0..j {
            ajj -= l[(j, k)] * l[(j, k)];
        }
        if ajj <= T::ZERO || ajj.is_nan() {
            l[(j, j)] = ajj;
            return (l, (j + 1) as i32);
        }
        let ajj = ajj.sqrt();
        l[(j, j)] = ajj;
        for i in j + 1..n {
            let mut s = l[(i, j)];
            for k in 0..j {
                s -= l[(i, k)] * l[(j, k)];
            }
            l[(i, j)] = s / ajj;
        }
    }
    (l, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_and_reports_the_failing_minor() {
        let a = Mat {
            r: 2,
            c: 2,
            d: vec![4.0f64, 2., 2., 3.],
        };
        let (l, info) = potrf_lower(&a);
        assert_eq!(info, 0);
        assert_eq!(l.d, vec![2.0, 0.0, 1.0, 2f64.sqrt()]);
        let b = Mat {
            r: 2,
            c: 2,
            d: vec![1.0f64, 2., 2., 4.],
        };
        assert_eq!(potrf_lower(&b).1, 2);
    }
}
