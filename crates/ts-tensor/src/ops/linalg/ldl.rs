//! Symmetric indefinite `L D L^T` factorization with Bunch–Kaufman pivoting (LAPACK `sytf2`,
//! lower triangle) and its solve (`sytrs`).

use super::mat::Mat;
use super::real::Real;

/// Factors the symmetric matrix in the lower triangle of `a`. Returns the compact factor
/// (`L` below the diagonal, `D`'s 1x1 and 2x2 blocks on and next to it; the strict upper
/// triangle zeroed), LAPACK's 1-based pivots (negative for 2x2 blocks) and `info`.
pub(crate) fn sytf2_lower<T: Real>(a: &Mat<T>) -> (Mat<T>, Vec<i32>, i32) {
    let n = a.r;
    let mut a = a.triangle(false);
    let mut piv = vec![0i32; n];
    let mut info = 0;
    let alpha = (T::ONE + T::of(17.0).sqrt()) / T::of(8.0);
    let mut k = 0;
    while k < n {
        let mut kstep = 1;
        let absakk = a[(k, k)].abs();
        let (mut imax, mut colmax) = (k, T::ZERO);
        if k + 1 < n {
            imax = k + 1;
            colmax = a[(k + 1, k)].abs();
            for i in k + 2..n {
                if a[(i, k)].abs() > colmax {
                    colmax = a[(i, k)].abs();
                    imax = i;
                }
            }
        }
        let kp;
        if absakk.max2(colmax) == T::ZERO || absakk.is_nan() {
            if info == 0 {
                info = (k + 1) as i32;
            }
            kp = k;
        } else {
            if absakk >= alpha * colmax {
                kp = k;
            } else {
                // Largest off-diagonal magnitude in row/column imax.
                let mut rowmax = T::ZERO;
                for j in k..imax {
                    rowmax = rowmax.max2(a[(imax, j)].abs());
                }
                if imax + 1 < n {
                    let mut jmax = imax + 1;
                    for i in imax + 2..n {
                        if a[(i, imax)].abs() > a[(jmax, imax)].abs() {
                            jmax = i;
                        }
                    }
                    rowmax = rowmax.max2(a[(jmax, imax)].abs());
                }
                if absakk >= alpha * colmax * (colmax / rowmax) {
                    kp = k;
                } else if a[(imax, imax)].abs() >= alpha * rowmax {
                    kp = imax;
                } else {
                    kp = imax;
                    kstep = 2;
                }
            }
            let kk = k + kstep - 1;
            if kp != kk {
                // Interchange rows and columns kk and kp of the trailing submatrix.
                for i in kp + 1..n {
                    let t = a[(i, kk)];
                    a[(i, kk)] = a[(i, kp)];
                    a[(i, kp)] = t;
                }
                for j in kk + 1..kp {
                    let t = a[(j, kk)];
                    a[(j, kk)] = a[(kp, j)];
                    a[(kp, j)] = t;
                }
                let t = a[(kk, kk)];
                a[(kk, kk)] = a[(kp, kp)];
                a[(kp, kp)] = t;
                if kstep == 2 {
                    let t = a[(k + 1, k)];
                    a[(k + 1, k)] = a[(kp, k)];
                    a[(kp, k)] = t;
                }
            }
            if kstep == 1 {
                if k + 1 < n {
                    let d11 = T::ONE / a[(k, k)];
                    for j in k + 1..n {
                        let xj = a[(j, k)];
                        for i in j..n {
                            let v = a[(i, j)] - d11 * a[(i, k)] * xj;
                            a[(i, j)] = v;
                        }
                    }
                    for i in k + 1..n {
                        a[(i, k)] *= d11;
                    }
                }
            } else if k + 2 < n {
                let d21 = a[(k + 1, k)];
                let d11 = a[(k + 1, k + 1)] / d21;
                let d22 = a[(k, k)] / d21;
                let t = T::ONE / (d11 * d22 - T::ONE);
                let d21 = t / d21;
                for j in k + 2..n {
                    let wk = d21 * (d11 * a[(j, k)] - a[(j, k + 1)]);
                    let wkp1 = d21 * (d22 * a[(j, k + 1)] - a[(j, k)]);
                    for i in j..n {
                        let v = a[(i, j)] - a[(i, k)] * wk - a[(i, k + 1)] * wkp1;
                        a[(i, j)] = v;
                    }
                    a[(j, k)] = wk;
                    a[(j, k + 1)] = wkp1;
                }
            }
        }
        if kstep == 1 {
            piv[k] = (kp + 1) as i32;
        } else {
            piv[k] = -((kp + 1) as i32);
            piv[k + 1] = -((kp + 1) as i32);
        }
        k += kstep;
    }
    (a, piv, info)
}

/// Solves `A X = B` from `sytf2_lower`'s factor and pivots (`sytrs`, lower).
pub(crate) fn sytrs_lower<T: Real>(f: &Mat<T>, piv: &[i32], b: &Mat<T>) -> Mat<T> {
    let n = f.r;
    let nrhs = b.c;
    let mut x = b.clone();
    let mut k = 0;
    while k < n {
        if piv[k] > 0 {
            let kp = (piv[k] - 1) as usize;
            if kp != k {
                x.swap_rows(k, kp);
            }
            for i in k + 1..n {
                for j in 0..nrhs {
                    let v = x[(i, j)] - f[(i, k)] * x[(k, j)];
                    x[(i, j)] = v;
                }
            }
            let r = T::ONE / f[(k, k)];
            for j in 0..nrhs {
                x[(k, j)] *= r;
            }
            k += 1;
        } else {
            let kp = (-piv[k] - 1) as usize;
            if kp != k + 1 {
                x.swap_rows(k + 1, kp);
            }
            for i in k + 2..n {
                for j in 0..nrhs {
                    let v = x[(i, j)] - f[(i, k)] * x[(k, j)] - f[(i, k + 1)] * x[(k + 1, j)];
                    x[(i, j)] = v;
                }
            }
            let akm1k = f[(k + 1, k)];
            let akm1 = f[(k, k)] / akm1k;
            let ak = f[(k + 1, k + 1)] / akm1k;
            let denom = akm1 * ak - T::ONE;
            for j in 0..nrhs {
                let bkm1 = x[(k, j)] / akm1k;
                let bk = x[(k + 1, j)] / akm1k;
                x[(k, j)] = (ak * bkm1 - bk) / denom;
                x[(k + 1, j)] = (akm1 * bk - bkm1) / denom;
            }
            k += 2;
        }
    }
    let mut k = n;
    while k > 0 {
        let kk = k - 1;
        if piv[kk] > 0 {
            for j in 0..nrhs {
                let mut s = x[(kk, j)];
                for i in kk + 1..n {
                    s -= f[(i, kk)] * x[(i, j)];
                }
                x[(kk, j)] = s;
            }
            let kp = (piv[kk] - 1) as usize;
            if kp != kk {
                x.swap_rows(kk, kp);
            }
            k -= 1;
        } else {
            for col in [kk, kk - 1] {
                for j in 0..nrhs {
                    let mut s = x[(col, j)];
                    for i in kk + 1..n {
                        s -= f[(i, col)] * x[(i, j)];
                    }
                    x[(col, j)] = s;
                }
            }
            let kp = (-piv[kk] - 1) as usize;
            if kp != kk {
                x.swap_rows(kk, kp);
            }
            k -= 2;
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    const LDL_LD: [f64; 9] = [0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 1.5, 0.5, -3.0];
    const LDL_PIV: [i32; 3] = [-3, -3, 3];

    #[test]
    fn factors_indefinite_matrices_like_lapack() {
        // torch.linalg.ldl_factor(torch.tensor([[0.,1,2],[1,0,3],[2,3,0]], dtype=float64))
        let a = Mat {
            r: 3,
            c: 3,
            d: vec![0.0f64, 1., 2., 1., 0., 3., 2., 3., 0.],
        };
        let (f, piv, info) = sytf2_lower(&a);
        assert_eq!(info, 0);
        assert_eq!(piv, LDL_PIV.to_vec());
        for (x, y) in f.d.iter().zip(LDL_LD) {
            assert!((x - y).abs() < 1e-12, "{:?}", f.d);
        }
        let b = Mat {
            r: 3,
            c: 1,
            d: vec![1.0, 2., 3.],
        };
        let x = sytrs_lower(&f, &piv, &b);
        let back = a.matmul(&x);
        for (u, v) in back.d.iter().zip(&b.d) {
            assert!((u - v).abs() < 1e-12);
        }
    }
}
