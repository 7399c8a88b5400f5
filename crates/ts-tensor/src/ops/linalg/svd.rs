//! Singular value decomposition by one-sided (Hestenes) Jacobi rotations in f64, which is
//! accurate to the last bits for the small matrices scripted models use. Singular values come
//! out descending; singular vectors are unique up to sign and do not follow LAPACK `gesdd`'s
//! sign choices.

use super::mat::Mat;
use super::real::Real;

/// `A = U diag(s) Vt`: `U` is `m x k` (or `m x m` when `full`), `Vt` is `k x n` (or `n x n`),
/// `k = min(m, n)`.
pub(crate) struct Svd {
    pub u: Mat<f64>,
    pub s: Vec<f64>,
    pub vt: Mat<f64>,
}

/// Completes the columns of `u` not flagged in `valid` to an orthonormal set, trying unit
/// vectors in order (so a zero matrix gets the identity, as LAPACK gives).
fn complete(u: &mut Mat<f64>, valid: &mut [bool]) {
    let m = u.r;
    let mut next = 0;
    for j in 0..u.c {
        if valid[j] {
            continue;
        }
        while next < m {
            let mut v = vec![0.0; m];
            v[next] = 1.0;
            next += 1;
            for _ in 0..2 {
                for c in 0..u.c {
                    if !valid[c] {
                        continue;
                    }
                    let dot: f64 = (0..m).map(|i| u[(i, c)] * v[i]).sum();
                    for (i, vi) in v.iter_mut().enumerate() {
                        *vi -= dot * u[(i, c)];
                    }
                }
            }
            let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm > 1e-3 {
                for (i, vi) in v.iter().enumerate() {
                    u[(i, j)] = vi / norm;
                }
                valid[j] = true;
                break;
            }
        }
    }
}

/// SVD of a tall (`m >= n`) matrix.
fn tall(a: &Mat<f64>, full: bool) -> Svd {
    let (m, n) = (a.r, a.c);
    let mut w = a.clone();
    let mut v = Mat::<f64>::eye(n, n);
    for _sweep in 0..80 {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let (mut alpha, mut beta, mut gamma) = (0.0, 0.0, 0.0);
                for i in 0..m {
                    let (x, y) = (w[(i, p)], w[(i, q)]);
                    alpha += x * x;
                    beta += y * y;
                    gamma += x * y;
                }
                if gamma == 0.0 || gamma.abs() <= 1e-15 * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                for i in 0..m {
                    let (x, y) = (w[(i, p)], w[(i, q)]);
                    w[(i, p)] = c * x - s * y;
                    w[(i, q)] = s * x + c * y;
                }
                for i in 0..n {
                    let (x, y) = (v[(i, p)], v[(i, q)]);
                    v[(i, p)] = c * x - s * y;
                    v[(i, q)] = s * x + c * y;
                }
            }
        }
        if !rotated {
            break;
        }
    }
    let norms: Vec<f64> = (0..n)
        .map(|j| (0..m).map(|i| w[(i, j)] * w[(i, j)]).sum::<f64>().sqrt())
        .collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| {
        norms[y]
            .partial_cmp(&norms[x])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let ucols = if full { m } else { n };
    let mut u = Mat::zeros(m, ucols);
    let mut valid = vec![false; ucols];
    let smax = norms.iter().cloned().fold(0.0, f64::max);
    let mut s = Vec::with_capacity(n);
    let mut vt = Mat::zeros(n, n);
    for (k, &j) in order.iter().enumerate() {
        let sj = norms[j];
        s.push(sj);
        if sj > 0.0 && sj > smax * 1e-300 {
            for i in 0..m {
                u[(i, k)] = w[(i, j)] / sj;
            }
            valid[k] = true;
        }
        for i in 0..n {
            vt[(k, i)] = v[(i, j)];
        }
    }
    complete(&mut u, &mut valid);
    Svd { u, s, vt }
}

/// The SVD of `a` (computed in f64).
pub(crate) fn svd<T: Real>(a: &Mat<T>, full: bool) -> Svd {
    let a64 = Mat {
        r: a.r,
        c: a.c,
        d: a.d.iter().map(|x| x.f64()).collect(),
    };
    if a.r >= a.c {
        let mut r = tall(&a64, full);
        if !full {
            r.vt = r.vt.rows(0, a.c.min(a.r));
        }
        r
    } else {
        // A^T = U' S V'^T, so A = V' S U'^T.
        let r = tall(&a64.t(), full);
        let k = a.r;
        let u = r.vt.t();
        let vt = r.u.t();
        Svd {
            u: if full { u } else { u.cols(0, k) },
            s: r.s,
            vt: if full { vt } else { vt.rows(0, k) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(a: &Mat<f64>, full: bool) {
        let r = svd(a, full);
        let k = a.r.min(a.c);
        assert_eq!(r.s.len(), k);
        assert!(r.s.windows(2).all(|w| w[0] >= w[1]));
        // U[:, :k] diag(s) Vt[:k] == A; U and Vt orthonormal.
        for i in 0..a.r {
            for j in 0..a.c {
                let v: f64 = (0..k).map(|t| r.u[(i, t)] * r.s[t] * r.vt[(t, j)]).sum();
                assert!((v - a[(i, j)]).abs() < 1e-12);
            }
        }
        let utu = r.u.t().matmul(&r.u);
        let eye = Mat::<f64>::eye(utu.r, utu.c);
        for (x, y) in utu.d.iter().zip(&eye.d) {
            assert!((x - y).abs() < 1e-12);
        }
    }

    #[test]
    fn decomposes_tall_wide_and_rank_deficient() {
        let a = Mat {
            r: 3,
            c: 2,
            d: vec![1.0, 2., 3., 4., 5., 6.],
        };
        check(&a, false);
        check(&a, true);
        check(&a.t(), false);
        check(&a.t(), true);
        let r = svd(&a, false);
        // torch.linalg.svdvals(torch.tensor([[1.,2],[3,4],[5,6]], dtype=float64))
        assert!((r.s[0] - 9.525518091565107).abs() < 1e-12);
        assert!((r.s[1] - 0.5143005806586441).abs() < 1e-12);
        let z = Mat::<f64>::zeros(3, 2);
        check(&z, true);
        let rank1 = Mat {
            r: 2,
            c: 2,
            d: vec![1.0, 2., 2., 4.],
        };
        check(&rank1, true);
    }
}
