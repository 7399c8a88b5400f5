//! Symmetric eigendecomposition as LAPACK's `syevd` computes it for small matrices:
//! Householder tridiagonalization (`sytd2`, either triangle), the orthogonal factor (`orgtr`),
//! then implicit QL/QR iteration (`steqr`) with LAPACK's shifts, deflation tests, 2x2 blocks
//! (`laev2`), plane rotations and final selection sort, so that eigenvector signs come out as
//! LAPACK's.

use super::mat::Mat;
use super::qr::larfg;
use super::real::Real;

/// Reduces the symmetric matrix stored in the `upper` (or lower) triangle of `a` to
/// tridiagonal form `Q^T A Q = T`: the diagonal, the off-diagonal and `Q` (when `want_q`).
pub(crate) fn sytd2<T: Real>(
    a: &Mat<T>,
    upper: bool,
    want_q: bool,
) -> (Vec<T>, Vec<T>, Option<Mat<T>>) {
    let n = a.r;
    let mut s = Mat::zeros(n, n);
    for i in 0..n {
        for j in 0..n {
            let (p, q) = if (j >= i) == upper { (i, j) } else { (j, i) };
            s[(i, j)] = a[(p, q)];
        }
    }
    let mut d = vec![T::ZERO; n];
    let mut e = vec![T::ZERO; n.saturating_sub(1)];
    // (first row of v, v's entries, tau) per reflector.
    let mut refl: Vec<(usize, Vec<T>, T)> = Vec::new();
    if n == 0 {
        return (d, e, want_q.then(|| Mat::zeros(0, 0)));
    }
    // Symmetric rank-2 update of the leading/trailing block `lo..hi` with `v`.
    let update = |s: &mut Mat<T>, lo: usize, v: &[T], tau: T| {
        let m = v.len();
        let mut w = vec![T::ZERO; m];
        for i in 0..m {
            let mut acc = T::ZERO;
            for j in 0..m {
                acc += s[(lo + i, lo + j)] * v[j];
            }
            w[i] = tau * acc;
        }
        let mut dot = T::ZERO;
        for i in 0..m {
            dot += w[i] * v[i];
        }
        let alpha = -(T::of(0.5) * tau * dot);
        for i in 0..m {
            w[i] += alpha * v[i];
        }
        for i in 0..m {
            for j in 0..m {
                let x = s[(lo + i, lo + j)] - v[i] * w[j] - w[i] * v[j];
                s[(lo + i, lo + j)] = x;
            }
        }
    };
    if upper {
        for i in (0..n - 1).rev() {
            let mut x: Vec<T> = (0..i).map(|r| s[(r, i + 1)]).collect();
            let (beta, tau) = larfg(s[(i, i + 1)], &mut x);
            e[i] = beta;
            let mut v = x;
            v.push(T::ONE);
            if tau != T::ZERO {
                update(&mut s, 0, &v, tau);
            }
            s[(i, i + 1)] = beta;
            s[(i + 1, i)] = beta;
            d[i + 1] = s[(i + 1, i + 1)];
            refl.push((0, v, tau));
        }
        d[0] = s[(0, 0)];
    } else {
        for i in 0..n - 1 {
            let mut x: Vec<T> = (i + 2..n).map(|r| s[(r, i)]).collect();
            let (beta, tau) = larfg(s[(i + 1, i)], &mut x);
            e[i] = beta;
            let mut v = vec![T::ONE];
            v.extend(x);
            if tau != T::ZERO {
                update(&mut s, i + 1, &v, tau);
            }
            s[(i + 1, i)] = beta;
            s[(i, i + 1)] = beta;
            d[i] = s[(i, i)];
            refl.push((i + 1, v, tau));
        }
        d[n - 1] = s[(n - 1, n - 1)];
    }
    let q = want_q.then(|| {
        // Upper: Q = H(n-2) ... H(0); lower: Q = H(0) ... H(n-2). Either way the reflector
        // pushed first is the leftmost factor, so apply them to I from the last pushed on.
        let mut q = Mat::eye(n, n);
        for (lo, v, tau) in refl.iter().rev() {
            if *tau == T::ZERO {
                continue;
            }
            for j in 0..n {
                let mut w = T::ZERO;
                for (k, &vk) in v.iter().enumerate() {
                    w += q[(lo + k, j)] * vk;
                }
                w *= *tau;
                for (k, &vk) in v.iter().enumerate() {
                    let x = q[(lo + k, j)] - vk * w;
                    q[(lo + k, j)] = x;
                }
            }
        }
        q
    });
    (d, e, q)
}

/// A plane rotation `[c s; -s c] [f; g] = [r; 0]` with the conventions of LAPACK 3.9's
/// `dlartg` (which torch's LAPACK follows).
pub(crate) fn lartg<T: Real>(f: T, g: T) -> (T, T, T) {
    if g == T::ZERO {
        return (T::ONE, T::ZERO, f);
    }
    if f == T::ZERO {
        return (T::ZERO, T::ONE, g);
    }
    let r = f.lapy2(g);
    let (mut c, mut s, mut r) = (f / r, g / r, r);
    if f.abs() > g.abs() && c < T::ZERO {
        c = -c;
        s = -s;
        r = -r;
    }
    (c, s, r)
}

/// Eigen-decomposition of `[[a, b], [b, c]]` (`dlaev2`): `(rt1, rt2, cs1, sn1)` with
/// `|rt1| >= |rt2|` and `(cs1, sn1)` the unit eigenvector of `rt1`.
pub(crate) fn laev2<T: Real>(a: T, b: T, c: T) -> (T, T, T, T) {
    let half = T::of(0.5);
    let sm = a + c;
    let df = a - c;
    let adf = df.abs();
    let tb = b + b;
    let ab = tb.abs();
    let (acmx, acmn) = if a.abs() > c.abs() { (a, c) } else { (c, a) };
    let rt = if adf > ab {
        adf * (T::ONE + (ab / adf) * (ab / adf)).sqrt()
    } else if adf < ab {
        ab * (T::ONE + (adf / ab) * (adf / ab)).sqrt()
    } else {
        ab * T::of(2.0).sqrt()
    };
    let (rt1, rt2, sgn1) = if sm < T::ZERO {
        let rt1 = half * (sm - rt);
        (rt1, (acmx / rt1) * acmn - (b / rt1) * b, -1)
    } else if sm > T::ZERO {
        let rt1 = half * (sm + rt);
        (rt1, (acmx / rt1) * acmn - (b / rt1) * b, 1)
    } else {
        (half * rt, -half * rt, 1)
    };
    let (cs, sgn2) = if df >= T::ZERO {
        (df + rt, 1)
    } else {
        (df - rt, -1)
    };
    let (mut cs1, mut sn1);
    if cs.abs() > ab {
        let ct = -tb / cs;
        sn1 = T::ONE / (T::ONE + ct * ct).sqrt();
        cs1 = ct * sn1;
    } else if ab == T::ZERO {
        cs1 = T::ONE;
        sn1 = T::ZERO;
    } else {
        let tn = -cs / tb;
        cs1 = T::ONE / (T::ONE + tn * tn).sqrt();
        sn1 = tn * cs1;
    }
    if sgn1 == sgn2 {
        let tn = cs1;
        cs1 = -sn1;
        sn1 = tn;
    }
    (rt1, rt2, cs1, sn1)
}

/// Applies the rotations `(c[j], s[j])` to column pairs `(j0 + j, j0 + j + 1)` of `z`
/// (LAPACK `dlasr('R', 'V', direction)`), last pair first when `backward`.
fn lasr<T: Real>(z: &mut Mat<T>, c: &[T], s: &[T], j0: usize, backward: bool) {
    let count = c.len();
    let mut apply = |j: usize| {
        let (ct, st) = (c[j], s[j]);
        if ct == T::ONE && st == T::ZERO {
            return;
        }
        for i in 0..z.r {
            let temp = z[(i, j0 + j + 1)];
            let zj = z[(i, j0 + j)];
            z[(i, j0 + j + 1)] = ct * temp - st * zj;
            z[(i, j0 + j)] = st * temp + ct * zj;
        }
    };
    if backward {
        for j in (0..count).rev() {
            apply(j);
        }
    } else {
        for j in 0..count {
            apply(j);
        }
    }
}

/// Implicit QL/QR on the symmetric tridiagonal `(d, e)` (`dsteqr`), accumulating rotations
/// into `z` when given. Eigenvalues end ascending in `d`; returns LAPACK's `info` (the count
/// of off-diagonal entries that failed to converge).
pub(crate) fn steqr<T: Real>(d: &mut [T], e: &mut [T], mut z: Option<&mut Mat<T>>) -> i32 {
    let n = d.len();
    if n <= 1 {
        return 0;
    }
    let eps = T::EPS;
    let eps2 = eps * eps;
    let safmin = T::SAFMIN;
    let two = T::of(2.0);
    let nmaxit = n * 30;
    let mut jtot = 0;
    let mut wc = vec![T::ZERO; n];
    let mut ws = vec![T::ZERO; n];
    let mut l1 = 0usize;
    'outer: loop {
        if l1 > n - 1 {
            break;
        }
        if l1 > 0 {
            e[l1 - 1] = T::ZERO;
        }
        let mut m = n - 1;
        for mm in l1..n - 1 {
            let tst = e[mm].abs();
            if tst == T::ZERO {
                m = mm;
                break;
            }
            if tst <= d[mm].abs().sqrt() * d[mm + 1].abs().sqrt() * eps {
                e[mm] = T::ZERO;
                m = mm;
                break;
            }
        }
        let mut l = l1;
        let lsv = l;
        let mut lend = m;
        let lendsv = lend;
        l1 = m + 1;
        if lend == l {
            continue;
        }
        let mut anorm = T::ZERO;
        for i in l..=lend {
            anorm = anorm.max2(d[i].abs());
            if i < lend {
                anorm = anorm.max2(e[i].abs());
            }
        }
        if anorm == T::ZERO {
            continue;
        }
        if d[lend].abs() < d[l].abs() {
            lend = lsv;
            l = lendsv;
        }
        if lend > l {
            // QL iteration.
            loop {
                let mut m = lend;
                if l != lend {
                    for mm in l..lend {
                        let tst = e[mm].abs() * e[mm].abs();
                        if tst <= (eps2 * d[mm].abs()) * d[mm + 1].abs() + safmin {
                            m = mm;
                            break;
                        }
                    }
                }
                if m < lend {
                    e[m] = T::ZERO;
                }
                let mut p = d[l];
                if m == l {
                    d[l] = p;
                    l += 1;
                    if l <= lend {
                        continue;
                    }
                    break;
                }
                if m == l + 1 {
                    let (rt1, rt2, c, s) = laev2(d[l], e[l], d[l + 1]);
                    if let Some(z) = z.as_deref_mut() {
                        lasr(z, &[c], &[s], l, true);
                    }
                    d[l] = rt1;
                    d[l + 1] = rt2;
                    e[l] = T::ZERO;
                    l += 2;
                    if l <= lend {
                        continue;
                    }
                    break;
                }
                if jtot == nmaxit {
                    break;
                }
                jtot += 1;
                let mut g = (d[l + 1] - p) / (two * e[l]);
                let mut r = g.lapy2(T::ONE);
                g = d[m] - p + (e[l] / (g + r.sign_of(g)));
                let (mut s, mut c) = (T::ONE, T::ONE);
                p = T::ZERO;
                for i in (l..m).rev() {
                    let f = s * e[i];
                    let b = c * e[i];
                    let (c2, s2, r2) = lartg(g, f);
                    c = c2;
                    s = s2;
                    r = r2;
                    if i != m - 1 {
                        e[i + 1] = r;
                    }
                    g = d[i + 1] - p;
                    r = (d[i] - g) * s + two * c * b;
                    p = s * r;
                    d[i + 1] = g + p;
                    g = c * r - b;
                    wc[i] = c;
                    ws[i] = -s;
                }
                if let Some(z) = z.as_deref_mut() {
                    lasr(z, &wc[l..m], &ws[l..m], l, true);
                }
                d[l] -= p;
                e[l] = g;
            }
        } else {
            // QR iteration.
            loop {
                let mut m = lend;
                if l != lend {
                    let mut mm = l;
                    while mm > lend {
                        let tst = e[mm - 1].abs() * e[mm - 1].abs();
                        if tst <= (eps2 * d[mm].abs()) * d[mm - 1].abs() + safmin {
                            m = mm;
                            break;
                        }
                        mm -= 1;
                    }
                }
                if m > lend {
                    e[m - 1] = T::ZERO;
                }
                let mut p = d[l];
                if m == l {
                    d[l] = p;
                    if l == lend || l == 0 {
                        break;
                    }
                    l -= 1;
                    if l >= lend {
                        continue;
                    }
                    break;
                }
                if m + 1 == l {
                    let (rt1, rt2, c, s) = laev2(d[l - 1], e[l - 1], d[l]);
                    if let Some(z) = z.as_deref_mut() {
                        lasr(z, &[c], &[s], l - 1, false);
                    }
                    d[l - 1] = rt1;
                    d[l] = rt2;
                    e[l - 1] = T::ZERO;
                    if l < lend + 2 {
                        break;
                    }
                    l -= 2;
                    continue;
                }
                if jtot == nmaxit {
                    break;
                }
                jtot += 1;
                let mut g = (d[l - 1] - p) / (two * e[l - 1]);
                let mut r = g.lapy2(T::ONE);
                g = d[m] - p + (e[l - 1] / (g + r.sign_of(g)));
                let (mut s, mut c) = (T::ONE, T::ONE);
                p = T::ZERO;
                for i in m..l {
                    let f = s * e[i];
                    let b = c * e[i];
                    let (c2, s2, r2) = lartg(g, f);
                    c = c2;
                    s = s2;
                    r = r2;
                    if i != m {
                        e[i - 1] = r;
                    }
                    g = d[i] - p;
                    r = (d[i + 1] - g) * s + two * c * b;
                    p = s * r;
                    d[i] = g + p;
                    g = c * r - b;
                    wc[i] = c;
                    ws[i] = s;
                }
                if let Some(z) = z.as_deref_mut() {
                    lasr(z, &wc[m..l], &ws[m..l], m, false);
                }
                d[l] -= p;
                e[l - 1] = g;
            }
        }
        if jtot >= nmaxit {
            break 'outer;
        }
    }
    let info = if jtot >= nmaxit {
        e.iter().filter(|x| **x != T::ZERO).count() as i32
    } else {
        0
    };
    // Selection sort (fewest swaps), moving eigenvector columns along.
    for ii in 1..n {
        let i = ii - 1;
        let mut k = i;
        let mut p = d[i];
        for (j, &dj) in d.iter().enumerate().skip(ii) {
            if dj < p {
                k = j;
                p = dj;
            }
        }
        if k != i {
            d[k] = d[i];
            d[i] = p;
            if let Some(z) = z.as_deref_mut() {
                z.swap_cols(i, k);
            }
        }
    }
    info
}

/// Eigenvalues (ascending) and, when `vectors`, eigenvectors (columns) of the symmetric
/// matrix stored in the `upper` or lower triangle of `a`, with `info` (nonzero when the
/// iteration failed to converge).
pub(crate) fn syev<T: Real>(
    a: &Mat<T>,
    upper: bool,
    vectors: bool,
) -> (Vec<T>, Option<Mat<T>>, i32) {
    let n = a.r;
    let (mut d, mut e, q) = sytd2(a, upper, vectors);
    if !vectors {
        let info = steqr(&mut d, &mut e, None);
        return (d, None, info);
    }
    let mut z = Mat::eye(n, n);
    let info = steqr(&mut d, &mut e, Some(&mut z));
    let q = q.unwrap_or_else(|| Mat::eye(n, n));
    (d, Some(q.matmul(&z)), info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eigenvectors_have_lapack_signs() {
        // torch.linalg.eigh(A, UPLO=...) for A = [[2,-1,0.5],[-1,3,1],[0.5,1,1]] (float64).
        let a = Mat {
            r: 3,
            c: 3,
            d: vec![2.0f64, -1., 0.5, -1., 3., 1., 0.5, 1., 1.],
        };
        let want_w = [0.1599281908357783, 2.077063898617895, 3.7630079105463254];
        let lower_v = [
            -0.44791642083607686f64,
            0.7854548659624674,
            0.4271200457497647,
            -0.43311613157294704,
            0.22730378448211114,
            -0.872206057151288,
            0.782164494538511,
            0.57566799728315,
            -0.23838007548308948,
        ];
        let upper_v = [
            -0.4479164208360767f64,
            0.7854548659624674,
            -0.4271200457497645,
            -0.4331161315729467,
            0.2273037844821112,
            0.8722060571512877,
            0.782164494538511,
            0.5756679972831497,
            0.23838007548308915,
        ];
        for (upper, want_v) in [(false, lower_v), (true, upper_v)] {
            let (w, v, info) = syev(&a, upper, true);
            assert_eq!(info, 0);
            for (x, y) in w.iter().zip(want_w) {
                assert!((x - y).abs() < 1e-12, "{w:?}");
            }
            let v = v.unwrap();
            for (x, y) in v.d.iter().zip(want_v) {
                assert!((x - y).abs() < 1e-12, "{upper} {:?}", v.d);
            }
            let (w2, none, _) = syev(&a, upper, false);
            assert!(none.is_none());
            for (x, y) in w2.iter().zip(want_w) {
                assert!((x - y).abs() < 1e-12);
            }
        }
    }
}
