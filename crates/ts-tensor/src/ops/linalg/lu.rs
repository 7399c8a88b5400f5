//! LU factorization with partial pivoting (LAPACK `getrf`: the pivot is the first entry of
//! largest magnitude), and the solves, inverse and determinants built on it.

use super::mat::Mat;
use super::real::Real;

/// An LU factorization `P A = L U` stored in one matrix (`L` unit lower, `U` upper), with
/// LAPACK's 1-based sequential row interchanges and `info` (the 1-based index of the first
/// zero pivot, 0 when `U` is nonsingular).
pub(crate) struct Lu<T> {
    /// `L` below the diagonal, `U` on and above it.
    pub lu: Mat<T>,
    /// Row `i` was interchanged with row `piv[i] - 1`.
    pub piv: Vec<i32>,
    /// First zero pivot (1-based) or 0.
    pub info: i32,
}

/// Factors `a` (any shape) as `getf2` does.
pub(crate) fn getrf<T: Real>(mut a: Mat<T>) -> Lu<T> {
    let (m, n) = (a.r, a.c);
    let k = m.min(n);
    let mut piv = vec![0i32; k];
    let mut info = 0;
    for j in 0..k {
        // First index of the largest |a(i, j)| (BLAS idamax).
        let mut p = j;
        let mut best = a[(j, j)].abs();
        for i in j + 1..m {
            let v = a[(i, j)].abs();
            if v > best {
                best = v;
                p = i;
            }
        }
        piv[j] = (p + 1) as i32;
        if a[(p, j)] != T::ZERO {
            if p != j {
                a.swap_rows(p, j);
            }
            let pivot = a[(j, j)];
            if pivot.abs() >= T::SAFMIN {
                let r = T::ONE / pivot;
                for i in j + 1..m {
                    a[(i, j)] *= r;
                }
            } else {
                for i in j + 1..m {
                    a[(i, j)] /= pivot;
                }
            }
        } else if info == 0 {
            info = (j + 1) as i32;
        }
        for i in j + 1..m {
            let l = a[(i, j)];
            if l == T::ZERO {
                continue;
            }
            for c in j + 1..n {
                let v = a[(i, c)] - l * a[(j, c)];
                a[(i, c)] = v;
            }
        }
    }
    Lu { lu: a, piv, info }
}

/// The row permutation the pivots describe: row `i` of `P^T A` is row `perm[i]` of `A`
/// (for `m` rows).
pub(crate) fn permutation(piv: &[i32], m: usize) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..m).collect();
    for (i, &p) in piv.iter().enumerate() {
        let p = (p - 1) as usize;
        if p < m && p != i {
            perm.swap(i, p);
        }
    }
    perm
}

/// Solves `A X = B` (`trans` false) or `A^T X = B` from a square LU factorization (`getrs`).
pub(crate) fn getrs<T: Real>(lu: &Mat<T>, piv: &[i32], b: &Mat<T>, trans: bool) -> Mat<T> {
    let n = lu.r;
    let mut x = b.clone();
    if !trans {
        for (i, &p) in piv.iter().enumerate() {
            let p = (p - 1) as usize;
            if p != i && p < n {
                x.swap_rows(i, p);
            }
        }
        trsm_left(lu, &mut x, false, true, false);
        trsm_left(lu, &mut x, true, false, false);
    } else {
        trsm_left(lu, &mut x, true, false, true);
        trsm_left(lu, &mut x, false, true, true);
        for (i, &p) in piv.iter().enumerate().rev() {
            let p = (p - 1) as usize;
            if p != i && p < n {
                x.swap_rows(i, p);
            }
        }
    }
    x
}

/// In place `B := op(T)^{-1} B` for the triangle of `t` (`upper`, `unit` diagonal, `trans`
/// reads `T^T`). Division by a zero diagonal gives infinities/NaNs, as BLAS `trsm` does.
pub(crate) fn trsm_left<T: Real>(t: &Mat<T>, b: &mut Mat<T>, upper: bool, unit: bool, trans: bool) {
    let n = t.r;
    let k = b.c;
    let at = |i: usize, j: usize| if trans { t[(j, i)] } else { t[(i, j)] };
    // After transposing, an upper triangle becomes lower.
    let forward = upper == trans;
    let order: Vec<usize> = if forward {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    };
    for &i in &order {
        for c in 0..k {
            let mut s = b[(i, c)];
            if forward {
                for j in 0..i {
                    s -= at(i, j) * b[(j, c)];
                }
            } else {
                for j in i + 1..n {
                    s -= at(i, j) * b[(j, c)];
                }
            }
            if !unit {
                s /= at(i, i);
            }
            b[(i, c)] = s;
        }
    }
}

/// The determinant sign of the permutation and the diagonal of `U`.
pub(crate) fn perm_sign(piv: &[i32]) -> i32 {
    piv.iter()
        .enumerate()
        .filter(|(i, &p)| p as usize != i + 1)
        .count() as i32
        % 2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(r: usize, c: usize, d: &[f64]) -> Mat<f64> {
        Mat {
            r,
            c,
            d: d.to_vec(),
        }
    }

    #[test]
    fn getrf_matches_lapack() {
        // torch.linalg.lu_factor(torch.tensor([[1.,2,3],[4,5,6],[7,8,10.]], dtype=float64))
        let f = getrf(m(3, 3, &[1., 2., 3., 4., 5., 6., 7., 8., 10.]));
        assert_eq!(f.piv, vec![3, 3, 3]);
        let want = [
            7.0,
            8.0,
            10.0,
            1.0 / 7.0,
            0.857_142_857_142_857_2,
            1.571_428_571_428_571_4,
            4.0 / 7.0,
            0.5,
            -0.5,
        ];
        for (a, b) in f.lu.d.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{:?}", f.lu.d);
        }
        assert_eq!(f.info, 0);
        // Singular: the first zero pivot is reported, the factorization completes.
        let s = getrf(m(2, 2, &[1., 2., 2., 4.]));
        assert_eq!((s.piv.clone(), s.info), (vec![2, 2], 2));
        // Ties pick the first row.
        assert_eq!(getrf(m(2, 2, &[-3., 1., 3., 1.])).piv, vec![1, 2]);
    }

    #[test]
    fn getrs_solves_both_ways() {
        let a = m(3, 3, &[2., 1., 1., 1., 3., 2., 1., 0., 0.]);
        let f = getrf(a.clone());
        let b = m(3, 1, &[4., 5., 6.]);
        for trans in [false, true] {
            let x = getrs(&f.lu, &f.piv, &b, trans);
            let op = if trans { a.t() } else { a.clone() };
            let back = op.matmul(&x);
            for (u, v) in back.d.iter().zip(&b.d) {
                assert!((u - v).abs() < 1e-12);
            }
        }
    }
}
