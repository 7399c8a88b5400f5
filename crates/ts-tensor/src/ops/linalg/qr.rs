//! Householder QR (LAPACK `geqr2`, `org2r`, `orm2r`) with LAPACK's reflector convention
//! (`dlarfg`: `H = I - tau v v^T`, `v[0] = 1`, `beta = -sign(alpha) * norm`, `tau = 0` when
//! the column below the diagonal is already zero), so `R`'s signs are LAPACK's.

use super::mat::Mat;
use super::real::{nrm2, Real};

/// Generates an elementary reflector for `(alpha, x)` (`dlarfg`): returns `(beta, tau)` and
/// overwrites `x` with `v[1..]`.
pub(crate) fn larfg<T: Real>(mut alpha: T, x: &mut [T]) -> (T, T) {
    if x.is_empty() {
        return (alpha, T::ZERO);
    }
    let mut xnorm = nrm2(x.iter().copied());
    if xnorm == T::ZERO {
        return (alpha, T::ZERO);
    }
    let mut beta = -alpha.lapy2(xnorm).sign_of(alpha);
    let mut knt = 0;
    if beta.abs() < T::SAFMIN {
        let rsafmn = T::ONE / T::SAFMIN;
        loop {
            knt += 1;
            for v in x.iter_mut() {
                *v *= rsafmn;
            }
            beta *= rsafmn;
            alpha *= rsafmn;
            if !(beta.abs() < T::SAFMIN && knt < 20) {
                break;
            }
        }
        xnorm = nrm2(x.iter().copied());
        beta = -alpha.lapy2(xnorm).sign_of(alpha);
    }
    let tau = (beta - alpha) / beta;
    let scale = T::ONE / (alpha - beta);
    for v in x.iter_mut() {
        *v *= scale;
    }
    for _ in 0..knt {
        beta *= T::SAFMIN;
    }
    (beta, tau)
}

/// Applies `H = I - tau v v^T` from the left to rows `i0..` and columns `j0..j1` of `c`, where
/// `v` has length `c.r - i0`.
fn apply_left<T: Real>(c: &mut Mat<T>, v: &[T], tau: T, i0: usize, j0: usize, j1: usize) {
    if tau == T::ZERO {
        return;
    }
    for j in j0..j1 {
        let mut w = T::ZERO;
        for (k, &vk) in v.iter().enumerate() {
            w += c[(i0 + k, j)] * vk;
        }
        w *= tau;
        for (k, &vk) in v.iter().enumerate() {
            let x = c[(i0 + k, j)] - vk * w;
            c[(i0 + k, j)] = x;
        }
    }
}

/// Applies `H` from the right to columns `j0..` (length of `v`) of rows `0..c.r`.
fn apply_right<T: Real>(c: &mut Mat<T>, v: &[T], tau: T, j0: usize) {
    if tau == T::ZERO {
        return;
    }
    for i in 0..c.r {
        let mut w = T::ZERO;
        for (k, &vk) in v.iter().enumerate() {
            w += c[(i, j0 + k)] * vk;
        }
        w *= tau;
        for (k, &vk) in v.iter().enumerate() {
            let x = c[(i, j0 + k)] - vk * w;
            c[(i, j0 + k)] = x;
        }
    }
}

/// The reflector vector `v` of column `i` of a `geqrf` result (`v[0] = 1`).
fn reflector<T: Real>(a: &Mat<T>, i: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(a.r - i);
    v.push(T::ONE);
    for r in i + 1..a.r {
        v.push(a[(r, i)]);
    }
    v
}

/// `geqrf`: `R` on and above the diagonal, the reflectors below it, and their `tau`s.
pub(crate) fn geqrf<T: Real>(mut a: Mat<T>) -> (Mat<T>, Vec<T>) {
    let (m, n) = (a.r, a.c);
    let k = m.min(n);
    let mut taus = Vec::with_capacity(k);
    for i in 0..k {
        let mut x: Vec<T> = (i + 1..m).map(|r| a[(r, i)]).collect();
        let (beta, tau) = larfg(a[(i, i)], &mut x);
        a[(i, i)] = beta;
        for (r, v) in (i + 1..m).zip(&x) {
            a[(r, i)] = *v;
        }
        if i + 1 < n {
            let v = reflector(&a, i);
            apply_left(&mut a, &v, tau, i, i + 1, n);
        }
        taus.push(tau);
    }
    (a, taus)
}

/// `orgqr`/`householder_product`: the first `ncols` columns of `H(0) H(1) ... H(k-1)` for the
/// reflectors stored below the diagonal of `a` (`m` rows).
pub(crate) fn orgqr<T: Real>(a: &Mat<T>, taus: &[T], ncols: usize) -> Mat<T> {
    let m = a.r;
    let mut q = Mat::eye(m, ncols);
    for i in (0..taus.len()).rev() {
        let v = reflector(a, i);
        apply_left(&mut q, &v, taus[i], i, 0, ncols);
    }
    q
}

/// `ormqr`: `op(Q) C` (`left`) or `C op(Q)`, `op` transposing when `trans`, with
/// `Q = H(0) ... H(k-1)` of the reflectors below the diagonal of `a`.
pub(crate) fn ormqr<T: Real>(
    a: &Mat<T>,
    taus: &[T],
    c: &Mat<T>,
    left: bool,
    trans: bool,
) -> Mat<T> {
    let mut out = c.clone();
    let k = taus.len();
    // Q C = H0 (H1 (... C)): the last reflector first; Q^T C = H(k-1) ... H0 C.
    let order: Vec<usize> = if left != trans {
        (0..k).rev().collect()
    } else {
        (0..k).collect()
    };
    for i in order {
        let v = reflector(a, i);
        if left {
            let n = out.c;
            apply_left(&mut out, &v, taus[i], i, 0, n);
        } else {
            apply_right(&mut out, &v, taus[i], i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geqrf_uses_lapack_signs() {
        // torch.geqrf(torch.tensor([[1.,2],[3,4],[5,6]], dtype=torch.float64))
        let a = Mat {
            r: 3,
            c: 2,
            d: vec![1.0f64, 2., 3., 4., 5., 6.],
        };
        let (f, tau) = geqrf(a.clone());
        let want = [
            -5.916079783099615,
            -7.437357441610946,
            0.4337717455676132,
            0.828078671210825,
            0.7229529092793553,
            0.8926238280228976,
        ];
        for (x, y) in f.d.iter().zip(want) {
            assert!((x - y).abs() < 1e-12, "{:?}", f.d);
        }
        assert!((tau[0] - 1.1690308509457032).abs() < 1e-12);
        assert!((tau[1] - 1.1131040011646904).abs() < 1e-12);
        // Q R reproduces A, and ormqr agrees with the explicit Q.
        let q = orgqr(&f, &tau, 2);
        let qr = q.matmul(&f.rows(0, 2).triangle(true));
        for (x, y) in qr.d.iter().zip(&a.d) {
            assert!((x - y).abs() < 1e-12);
        }
        let full = orgqr(&f, &tau, 3);
        let c = Mat::eye(3, 3);
        assert_eq!(ormqr(&f, &tau, &c, true, false).d.len(), 9);
        for (x, y) in ormqr(&f, &tau, &c, true, false).d.iter().zip(&full.d) {
            assert!((x - y).abs() < 1e-12);
        }
        for (x, y) in ormqr(&f, &tau, &c, false, true).d.iter().zip(&full.t().d) {
            assert!((x - y).abs() < 1e-12);
        }
        // A zero column below the diagonal gives tau = 0 and keeps alpha's sign.
        let (z, t) = geqrf(Mat {
            r: 2,
            c: 1,
            d: vec![-2.0f64, 0.0],
        });
        assert_eq!((z.d.clone(), t), (vec![-2.0, 0.0], vec![0.0]));
    }
}
