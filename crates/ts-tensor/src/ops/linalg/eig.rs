//! General (nonsymmetric) real eigen-decomposition, LAPACK `geev`'s algorithm re-derived:
//! balancing (`gebal`: isolating permutations and power-of-two scaling), Householder
//! Hessenberg reduction (`gehd2` + `orghr`), the double-shift Francis QR iteration of `lahqr`
//! (Ahues–Kressner deflation, exceptional shifts, `lanv2` standardized 2x2 blocks), then
//! eigenvectors by back substitution on the quasi-triangular Schur form (`trevc`),
//! back-transformed, un-balanced (`gebak`) and normalized as `geev` does: unit 2-norm, and for
//! complex pairs rotated so that the component of largest modulus is real. Following the same
//! steps makes the eigenvalue order and the eigenvector signs those torch returns.

use super::decompose::{check_infos, map_mats};
use super::mat::{by_real, check_square, unbatch, Mat};
use super::qr::larfg;
use super::real::{nrm2, Real};
use crate::complex::Complex;
use crate::error::Result;
use crate::tensor::Tensor;

/// The result of [`geev`]: eigenvalues `(re, im)` in Schur order, right eigenvectors as
/// complex columns `(re, im)` of `n x n` matrices (when asked for), and LAPACK's `info`.
pub(crate) struct Eig<T> {
    pub wr: Vec<T>,
    pub wi: Vec<T>,
    pub vectors: Option<(Mat<T>, Mat<T>)>,
    pub info: i32,
}

/// `gebal('B')`: permutes rows/columns isolating eigenvalues, then scales rows and columns by
/// powers of two so that their norms are close. Returns `(ilo, ihi, scale)` (0-based,
/// inclusive); `scale[i]` is the permutation index outside `ilo..=ihi`, the factor inside.
fn gebal<T: Real>(a: &mut Mat<T>) -> (usize, usize, Vec<T>) {
    let n = a.r;
    let mut scale = vec![T::ONE; n];
    let swap = |a: &mut Mat<T>, i: usize, j: usize, rows_to: usize, cols_from: usize| {
        for r in 0..=rows_to {
            a.d.swap(r * n + i, r * n + j);
        }
        for c in cols_from..n {
            a.d.swap(i * n + c, j * n + c);
        }
    };
    let mut k = 0usize;
    let mut l = n - 1;
    // Rows isolating an eigenvalue go to the bottom.
    let mut noconv = true;
    while noconv {
        noconv = false;
        let mut i = l as isize;
        while i >= 0 {
            let iu = i as usize;
            let can = (0..=l).all(|j| j == iu || a[(iu, j)] == T::ZERO);
            if can {
                scale[l] = T::of(iu as f64);
                if iu != l {
                    swap(a, iu, l, l, k);
                }
                noconv = true;
                if l == 0 {
                    return (0, 0, scale);
                }
                l -= 1;
            }
            i -= 1;
        }
    }
    // Columns isolating an eigenvalue go to the left.
    noconv = true;
    while noconv {
        noconv = false;
        let mut j = k;
        while j <= l {
            let can = (k..=l).all(|i| i == j || a[(i, j)] == T::ZERO);
            if can {
                scale[k] = T::of(j as f64);
                if j != k {
                    swap(a, j, k, l, k);
                }
                noconv = true;
                k += 1;
            }
            j += 1;
        }
    }
    for s in scale.iter_mut().take(l + 1).skip(k) {
        *s = T::ONE;
    }
    let two = T::of(2.0);
    let sfmin1 = T::SAFMIN / T::ULP;
    let sfmax1 = T::ONE / sfmin1;
    let sfmin2 = sfmin1 * two;
    let sfmax2 = T::ONE / sfmin2;
    let mut noconv = true;
    while noconv {
        noconv = false;
        for i in k..=l {
            let mut c = nrm2((k..=l).map(|r| a[(r, i)]));
            let mut r = nrm2((k..=l).map(|cc| a[(i, cc)]));
            let mut ca = (0..=l).fold(T::ZERO, |m, rr| m.max2(a[(rr, i)].abs()));
            let mut ra = (k..n).fold(T::ZERO, |m, cc| m.max2(a[(i, cc)].abs()));
            if c == T::ZERO || r == T::ZERO {
                continue;
            }
            if c.is_nan() || r.is_nan() || ca.is_nan() || ra.is_nan() {
                // LAPACK reports NaN input as an error; keep the matrix as it is.
                return (k, l, scale);
            }
            let mut g = r / two;
            let mut f = T::ONE;
            let s = c + r;
            while c < g && f.max2(c).max2(ca) < sfmax2 && r.min2(g).min2(ra) > sfmin2 {
                f *= two;
                c *= two;
                ca *= two;
                r /= two;
                g /= two;
                ra /= two;
            }
            g = c / two;
            while g >= r && r.max2(ra) < sfmax2 && f.min2(c).min2(g).min2(ca) > sfmin2 {
                f /= two;
                c /= two;
                g /= two;
                ca /= two;
                r *= two;
                ra *= two;
            }
            if c + r >= T::of(0.95) * s {
                continue;
            }
            if f < T::ONE && scale[i] < T::ONE && f * scale[i] <= sfmin1 {
                continue;
            }
            if f > T::ONE && scale[i] > T::ONE && scale[i] >= sfmax1 / f {
                continue;
            }
            let g = T::ONE / f;
            scale[i] *= f;
            noconv = true;
            for cc in k..n {
                a[(i, cc)] *= g;
            }
            for rr in 0..=l {
                a[(rr, i)] *= f;
            }
        }
    }
    (k, l, scale)
}

/// `gehd2` + `orghr`: reduces rows/columns `ilo..=ihi` of `a` to upper Hessenberg form in
/// place and returns the orthogonal `Q` with `A = Q H Q^T`.
fn gehrd<T: Real>(a: &mut Mat<T>, ilo: usize, ihi: usize) -> Mat<T> {
    let n = a.r;
    let mut refl: Vec<(Vec<T>, T)> = Vec::new();
    for i in ilo..ihi {
        let mut x: Vec<T> = (i + 2..=ihi).map(|r| a[(r, i)]).collect();
        let (beta, tau) = larfg(a[(i + 1, i)], &mut x);
        let mut v = vec![T::ONE];
        v.extend_from_slice(&x);
        // H from the right to rows 0..=ihi, columns i+1..=ihi.
        if tau != T::ZERO {
            for r in 0..=ihi {
                let mut w = T::ZERO;
                for (k, &vk) in v.iter().enumerate() {
                    w += a[(r, i + 1 + k)] * vk;
                }
                w *= tau;
                for (k, &vk) in v.iter().enumerate() {
                    let y = a[(r, i + 1 + k)] - w * vk;
                    a[(r, i + 1 + k)] = y;
                }
            }
            // H from the left to rows i+1..=ihi, columns i+1..n.
            for c in i + 1..n {
                let mut w = T::ZERO;
                for (k, &vk) in v.iter().enumerate() {
                    w += a[(i + 1 + k, c)] * vk;
                }
                w *= tau;
                for (k, &vk) in v.iter().enumerate() {
                    let y = a[(i + 1 + k, c)] - w * vk;
                    a[(i + 1 + k, c)] = y;
                }
            }
        }
        a[(i + 1, i)] = beta;
        for r in i + 2..=ihi {
            a[(r, i)] = T::ZERO;
        }
        refl.push((v, tau));
    }
    // Q = H(ilo) ... H(ihi-1), accumulated backwards as `org2r` does.
    let mut q = Mat::eye(n, n);
    for (idx, (v, tau)) in refl.iter().enumerate().rev() {
        let i = ilo + idx;
        if *tau == T::ZERO {
            continue;
        }
        for c in i + 1..=ihi {
            let mut w = T::ZERO;
            for (k, &vk) in v.iter().enumerate() {
                w += q[(i + 1 + k, c)] * vk;
            }
            w *= *tau;
            for (k, &vk) in v.iter().enumerate() {
                let y = q[(i + 1 + k, c)] - w * vk;
                q[(i + 1 + k, c)] = y;
            }
        }
    }
    q
}

/// Applies the rotation `(c, s)` to the pairs `(x[k], y[k])` (BLAS `drot`).
fn rot<T: Real>(
    m: &mut Mat<T>,
    pairs: impl Iterator<Item = ((usize, usize), (usize, usize))>,
    c: T,
    s: T,
) {
    for (x, y) in pairs {
        let (xv, yv) = (m[x], m[y]);
        m[x] = c * xv + s * yv;
        m[y] = c * yv - s * xv;
    }
}

/// `lanv2`: the Schur factorization of a real 2x2 block `[[a, b], [c, d]]` in standard form.
/// Returns the new `(a, b, c, d)`, the eigenvalues `(rt1r, rt1i, rt2r, rt2i)` and the rotation.
#[allow(clippy::type_complexity)]
fn lanv2<T: Real>(mut a: T, mut b: T, mut c: T, mut d: T) -> ([T; 4], [T; 4], (T, T)) {
    let half = T::of(0.5);
    let eps = T::ULP;
    let (mut cs, mut sn);
    if c == T::ZERO {
        cs = T::ONE;
        sn = T::ZERO;
    } else if b == T::ZERO {
        cs = T::ZERO;
        sn = T::ONE;
        std::mem::swap(&mut a, &mut d);
        b = -c;
        c = T::ZERO;
    } else if a - d == T::ZERO && (b >= T::ZERO) != (c >= T::ZERO) {
        cs = T::ONE;
        sn = T::ZERO;
    } else {
        let temp = a - d;
        let mut p = half * temp;
        let bcmax = b.abs().max2(c.abs());
        let bcmis = b.abs().min2(c.abs()) * T::ONE.sign_of(b) * T::ONE.sign_of(c);
        let scale = p.abs().max2(bcmax);
        let mut z = (p / scale) * p + (bcmax / scale) * bcmis;
        if z >= T::of(4.0) * eps {
            z = p + (scale.sqrt() * z.sqrt()).sign_of(p);
            a = d + z;
            d -= (bcmax / z) * bcmis;
            let tau = c.lapy2(z);
            cs = z / tau;
            sn = c / tau;
            b -= c;
            c = T::ZERO;
        } else {
            let sigma = b + c;
            let tau = sigma.lapy2(temp);
            cs = (half * (T::ONE + sigma.abs() / tau)).sqrt();
            sn = -(p / (tau * cs)) * T::ONE.sign_of(sigma);
            let aa = a * cs + b * sn;
            let bb = -a * sn + b * cs;
            let cc = c * cs + d * sn;
            let dd = -c * sn + d * cs;
            a = aa * cs + cc * sn;
            b = bb * cs + dd * sn;
            c = -aa * sn + cc * cs;
            d = -bb * sn + dd * cs;
            let temp = half * (a + d);
            a = temp;
            d = temp;
            if c != T::ZERO {
                if b != T::ZERO {
                    if (b >= T::ZERO) == (c >= T::ZERO) {
                        let sab = b.abs().sqrt();
                        let sac = c.abs().sqrt();
                        p = (sab * sac).sign_of(c);
                        let tau = T::ONE / (b + c).abs().sqrt();
                        a = temp + p;
                        d = temp - p;
                        b -= c;
                        c = T::ZERO;
                        let cs1 = sab * tau;
                        let sn1 = sac * tau;
                        let t = cs * cs1 - sn * sn1;
                        sn = cs * sn1 + sn * cs1;
                        cs = t;
                    }
                } else {
                    b = -c;
                    c = T::ZERO;
                    let t = cs;
                    cs = -sn;
                    sn = t;
                }
            }
        }
    }
    let (rt1i, rt2i) = if c == T::ZERO {
        (T::ZERO, T::ZERO)
    } else {
        let v = b.abs().sqrt() * c.abs().sqrt();
        (v, -v)
    };
    ([a, b, c, d], [a, rt1i, d, rt2i], (cs, sn))
}

/// `lahqr` with `wantt` and `wantz`: the real Schur form of the Hessenberg `h` (active rows
/// `ilo..=ihi`), accumulating the transformations into `z`. Returns LAPACK's `info` (0, or
/// the 1-based row where the iteration failed to converge).
fn lahqr<T: Real>(
    h: &mut Mat<T>,
    z: &mut Mat<T>,
    ilo: usize,
    ihi: usize,
    wr: &mut [T],
    wi: &mut [T],
) -> i32 {
    let n = h.r;
    if ilo == ihi {
        wr[ilo] = h[(ilo, ilo)];
        wi[ilo] = T::ZERO;
        return 0;
    }
    for j in ilo..ihi.saturating_sub(2) {
        h[(j + 2, j)] = T::ZERO;
        h[(j + 3, j)] = T::ZERO;
    }
    if ilo + 2 <= ihi {
        h[(ihi, ihi - 2)] = T::ZERO;
    }
    let nh = ihi - ilo + 1;
    let ulp = T::ULP;
    let smlnum = T::SAFMIN * (T::of(nh as f64) / ulp);
    let (i1, i2) = (0usize, n - 1);
    let itmax = 30 * nh.max(10);
    let mut kdefl = 0usize;
    let dat1 = T::of(0.75);
    let dat2 = T::of(-0.4375);
    let kexsh = 10usize;
    // `i` is one past the active block's last row (0 means done).
    let mut i = ihi as isize;
    while i >= ilo as isize {
        let iu = i as usize;
        let mut l = ilo;
        let mut converged = false;
        for _its in 0..=itmax {
            // Look for a single small subdiagonal element.
            let mut k = iu;
            while k > l {
                if h[(k, k - 1)].abs() <= smlnum {
                    break;
                }
                let mut tst = h[(k - 1, k - 1)].abs() + h[(k, k)].abs();
                if tst == T::ZERO {
                    if k >= ilo + 2 {
                        tst += h[(k - 1, k - 2)].abs();
                    }
                    if k < ihi {
                        tst += h[(k + 1, k)].abs();
                    }
                }
                if h[(k, k - 1)].abs() <= ulp * tst {
                    let ab = h[(k, k - 1)].abs().max2(h[(k - 1, k)].abs());
                    let ba = h[(k, k - 1)].abs().min2(h[(k - 1, k)].abs());
                    let aa = h[(k, k)].abs().max2((h[(k - 1, k - 1)] - h[(k, k)]).abs());
                    let bb = h[(k, k)].abs().min2((h[(k - 1, k - 1)] - h[(k, k)]).abs());
                    let s = aa + ab;
                    if ba * (ab / s) <= smlnum.max2(ulp * (bb * (aa / s))) {
                        break;
                    }
                }
                k -= 1;
            }
            l = k;
            if l > ilo {
                h[(l, l - 1)] = T::ZERO;
            }
            if l + 1 >= iu {
                converged = true;
                break;
            }
            kdefl += 1;
            let (mut h11, mut h12, mut h21, mut h22);
            if kdefl.is_multiple_of(2 * kexsh) {
                let s = h[(iu, iu - 1)].abs() + h[(iu - 1, iu - 2)].abs();
                h11 = dat1 * s + h[(iu, iu)];
                h12 = dat2 * s;
                h21 = s;
                h22 = h11;
            } else if kdefl.is_multiple_of(kexsh) {
                let s = h[(l + 1, l)].abs() + h[(l + 2, l + 1)].abs();
                h11 = dat1 * s + h[(l, l)];
                h12 = dat2 * s;
                h21 = s;
                h22 = h11;
            } else {
                h11 = h[(iu - 1, iu - 1)];
                h21 = h[(iu, iu - 1)];
                h12 = h[(iu - 1, iu)];
                h22 = h[(iu, iu)];
            }
            let s = h11.abs() + h12.abs() + h21.abs() + h22.abs();
            let (rt1r, rt1i, rt2r, rt2i);
            if s == T::ZERO {
                rt1r = T::ZERO;
                rt1i = T::ZERO;
                rt2r = T::ZERO;
                rt2i = T::ZERO;
            } else {
                h11 /= s;
                h21 /= s;
                h12 /= s;
                h22 /= s;
                let tr = (h11 + h22) / T::of(2.0);
                let det = (h11 - tr) * (h22 - tr) - h12 * h21;
                let rtdisc = det.abs().sqrt();
                if det >= T::ZERO {
                    rt1r = tr * s;
                    rt2r = rt1r;
                    rt1i = rtdisc * s;
                    rt2i = -rt1i;
                } else {
                    let a = tr + rtdisc;
                    let b = tr - rtdisc;
                    let r = if (a - h22).abs() <= (b - h22).abs() {
                        a * s
                    } else {
                        b * s
                    };
                    rt1r = r;
                    rt2r = r;
                    rt1i = T::ZERO;
                    rt2i = T::ZERO;
                }
            }
            // Look for two consecutive small subdiagonal elements.
            let mut v = [T::ZERO; 3];
            let mut m = iu - 2;
            loop {
                let h21s = h[(m + 1, m)];
                let s = (h[(m, m)] - rt2r).abs() + rt2i.abs() + h21s.abs();
                let h21s = h[(m + 1, m)] / s;
                v[0] = h21s * h[(m, m + 1)] + (h[(m, m)] - rt1r) * ((h[(m, m)] - rt2r) / s)
                    - rt1i * (rt2i / s);
                v[1] = h21s * (h[(m, m)] + h[(m + 1, m + 1)] - rt1r - rt2r);
                v[2] = h21s * h[(m + 2, m + 1)];
                let s = v[0].abs() + v[1].abs() + v[2].abs();
                v[0] /= s;
                v[1] /= s;
                v[2] /= s;
                if m == l {
                    break;
                }
                let h00 = h[(m, m - 1)].abs() * (v[1].abs() + v[2].abs());
                let h01 = v[0].abs()
                    * (h[(m - 1, m - 1)].abs() + h[(m, m)].abs() + h[(m + 1, m + 1)].abs());
                if h00 <= ulp * h01 {
                    break;
                }
                m -= 1;
            }
            // Double-shift QR step.
            for k in m..iu {
                let nr = 3.min(iu - k + 1);
                if k > m {
                    for (t, vt) in v.iter_mut().enumerate().take(nr) {
                        *vt = h[(k + t, k - 1)];
                    }
                }
                let (beta, t1) = larfg(v[0], &mut v[1..nr]);
                v[0] = beta;
                if k > m {
                    h[(k, k - 1)] = v[0];
                    h[(k + 1, k - 1)] = T::ZERO;
                    if k + 1 < iu {
                        h[(k + 2, k - 1)] = T::ZERO;
                    }
                } else if m > l {
                    h[(k, k - 1)] *= T::ONE - t1;
                }
                let v2 = v[1];
                let t2 = t1 * v2;
                if nr == 3 {
                    let v3 = v[2];
                    let t3 = t1 * v3;
                    for j in k..=i2 {
                        let sum = h[(k, j)] + v2 * h[(k + 1, j)] + v3 * h[(k + 2, j)];
                        h[(k, j)] -= sum * t1;
                        h[(k + 1, j)] -= sum * t2;
                        h[(k + 2, j)] -= sum * t3;
                    }
                    for j in i1..=(k + 3).min(iu) {
                        let sum = h[(j, k)] + v2 * h[(j, k + 1)] + v3 * h[(j, k + 2)];
                        h[(j, k)] -= sum * t1;
                        h[(j, k + 1)] -= sum * t2;
                        h[(j, k + 2)] -= sum * t3;
                    }
                    for j in ilo..=ihi {
                        let sum = z[(j, k)] + v2 * z[(j, k + 1)] + v3 * z[(j, k + 2)];
                        z[(j, k)] -= sum * t1;
                        z[(j, k + 1)] -= sum * t2;
                        z[(j, k + 2)] -= sum * t3;
                    }
                } else if nr == 2 {
                    for j in k..=i2 {
                        let sum = h[(k, j)] + v2 * h[(k + 1, j)];
                        h[(k, j)] -= sum * t1;
                        h[(k + 1, j)] -= sum * t2;
                    }
                    for j in i1..=iu {
                        let sum = h[(j, k)] + v2 * h[(j, k + 1)];
                        h[(j, k)] -= sum * t1;
                        h[(j, k + 1)] -= sum * t2;
                    }
                    for j in ilo..=ihi {
                        let sum = z[(j, k)] + v2 * z[(j, k + 1)];
                        z[(j, k)] -= sum * t1;
                        z[(j, k + 1)] -= sum * t2;
                    }
                }
            }
        }
        if !converged {
            return iu as i32 + 1;
        }
        if l == iu {
            wr[iu] = h[(iu, iu)];
            wi[iu] = T::ZERO;
        } else if l + 1 == iu {
            let (blk, ev, (cs, sn)) = lanv2(
                h[(iu - 1, iu - 1)],
                h[(iu - 1, iu)],
                h[(iu, iu - 1)],
                h[(iu, iu)],
            );
            h[(iu - 1, iu - 1)] = blk[0];
            h[(iu - 1, iu)] = blk[1];
            h[(iu, iu - 1)] = blk[2];
            h[(iu, iu)] = blk[3];
            wr[iu - 1] = ev[0];
            wi[iu - 1] = ev[1];
            wr[iu] = ev[2];
            wi[iu] = ev[3];
            if i2 > iu {
                rot(h, (iu + 1..=i2).map(|j| ((iu - 1, j), (iu, j))), cs, sn);
            }
            rot(h, (i1..iu - 1).map(|j| ((j, iu - 1), (j, iu))), cs, sn);
            rot(z, (ilo..=ihi).map(|j| ((j, iu - 1), (j, iu))), cs, sn);
        }
        kdefl = 0;
        i = l as isize - 1;
    }
    0
}

/// Complex division `(a / b)` on pairs.
fn cdiv<T: Real>(a: (T, T), b: (T, T)) -> (T, T) {
    // Smith's algorithm.
    if b.1.abs() <= b.0.abs() {
        let r = b.1 / b.0;
        let d = b.0 + b.1 * r;
        ((a.0 + a.1 * r) / d, (a.1 - a.0 * r) / d)
    } else {
        let r = b.0 / b.1;
        let d = b.0 * r + b.1;
        ((a.0 * r + a.1) / d, (a.1 * r - a.0) / d)
    }
}

fn cmul<T: Real>(a: (T, T), b: (T, T)) -> (T, T) {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

/// Solves `(T[0..top, 0..top] - lambda) x = rhs` in place by back substitution over the
/// quasi-triangular Schur form (1x1 and 2x2 diagonal blocks), as `trevc`'s `laln2` calls do;
/// tiny pivots are replaced by `smin`.
fn quasi_back_solve<T: Real>(t: &Mat<T>, top: usize, lambda: (T, T), x: &mut [(T, T)], smin: T) {
    let guard = |p: (T, T)| -> (T, T) {
        if p.0.abs() + p.1.abs() < smin {
            (smin, T::ZERO)
        } else {
            p
        }
    };
    let mut j = top as isize - 1;
    while j >= 0 {
        let ju = j as usize;
        if ju > 0 && t[(ju, ju - 1)] != T::ZERO {
            // 2x2 block rows ju-1, ju.
            let a = (t[(ju - 1, ju - 1)] - lambda.0, -lambda.1);
            let b = (t[(ju - 1, ju)], T::ZERO);
            let c = (t[(ju, ju - 1)], T::ZERO);
            let d = (t[(ju, ju)] - lambda.0, -lambda.1);
            let ad = cmul(a, d);
            let bc = cmul(b, c);
            let det = guard((ad.0 - bc.0, ad.1 - bc.1));
            let (r1, r2) = (x[ju - 1], x[ju]);
            let n1 = {
                let p = cmul(d, r1);
                let q = cmul(b, r2);
                (p.0 - q.0, p.1 - q.1)
            };
            let n2 = {
                let p = cmul(a, r2);
                let q = cmul(c, r1);
                (p.0 - q.0, p.1 - q.1)
            };
            let y1 = cdiv(n1, det);
            let y2 = cdiv(n2, det);
            x[ju - 1] = y1;
            x[ju] = y2;
            for k in 0..ju - 1 {
                let (p, q) = (t[(k, ju - 1)], t[(k, ju)]);
                x[k].0 -= p * y1.0 + q * y2.0;
                x[k].1 -= p * y1.1 + q * y2.1;
            }
            j -= 2;
        } else {
            let p = guard((t[(ju, ju)] - lambda.0, -lambda.1));
            let y = cdiv(x[ju], p);
            x[ju] = y;
            for k in 0..ju {
                let q = t[(k, ju)];
                x[k].0 -= q * y.0;
                x[k].1 -= q * y.1;
            }
            j -= 1;
        }
    }
}

/// `trevc` (right eigenvectors, back-transformed by `q`): complex eigenvector columns of the
/// quasi-triangular `t`, each scaled so that its largest `|re| + |im|` is 1.
fn trevc<T: Real>(t: &Mat<T>, q: &Mat<T>, wr: &[T]) -> (Mat<T>, Mat<T>) {
    let n = t.r;
    let mut vr = Mat::zeros(n, n);
    let mut vi = Mat::zeros(n, n);
    let smlnum = T::SAFMIN * (T::of(n as f64) / T::ULP);
    let mut ki = n as isize - 1;
    while ki >= 0 {
        let k = ki as usize;
        let pair = k > 0 && t[(k, k - 1)] != T::ZERO;
        let mut x = vec![(T::ZERO, T::ZERO); n];
        let (cols, lambda, top) = if !pair {
            x[k] = (T::ONE, T::ZERO);
            for (r, xr) in x.iter_mut().enumerate().take(k) {
                *xr = (-t[(r, k)], T::ZERO);
            }
            ((k, None), (wr[k], T::ZERO), k)
        } else {
            let w = t[(k, k - 1)].abs().sqrt() * t[(k - 1, k)].abs().sqrt();
            // The real part lives at k-1 and the imaginary part at k (LAPACK's choice of
            // which one is 1 follows the larger off-diagonal element).
            if t[(k - 1, k)].abs() >= t[(k, k - 1)].abs() {
                x[k - 1] = (T::ONE, T::ZERO);
                x[k] = (T::ZERO, w / t[(k - 1, k)]);
            } else {
                x[k - 1] = (-w / t[(k, k - 1)], T::ZERO);
                x[k] = (T::ZERO, T::ONE);
            }
            for r in 0..k - 1 {
                x[r] = (-x[k - 1].0 * t[(r, k - 1)], -x[k].1 * t[(r, k)]);
            }
            ((k - 1, Some(k)), (t[(k, k)], w), k - 1)
        };
        let smin = (T::ULP * (lambda.0.abs() + lambda.1.abs())).max2(smlnum);
        quasi_back_solve(t, top, lambda, &mut x, smin);
        // Back-transform with q: columns 0..=k.
        let mut re = vec![T::ZERO; n];
        let mut im = vec![T::ZERO; n];
        for r in 0..n {
            let (mut sr, mut si) = (T::ZERO, T::ZERO);
            for (c, xc) in x.iter().enumerate().take(k + 1) {
                sr += q[(r, c)] * xc.0;
                si += q[(r, c)] * xc.1;
            }
            re[r] = sr;
            im[r] = si;
        }
        let emax = (0..n).fold(T::ZERO, |m, r| m.max2(re[r].abs() + im[r].abs()));
        let remax = if emax > T::ZERO {
            T::ONE / emax
        } else {
            T::ONE
        };
        match cols {
            (c, None) => {
                for r in 0..n {
                    vr[(r, c)] = re[r] * remax;
                }
            }
            (c0, Some(c1)) => {
                // Columns c0 (eigenvalue with positive imaginary part) and its conjugate.
                for r in 0..n {
                    vr[(r, c0)] = re[r] * remax;
                    vi[(r, c0)] = im[r] * remax;
                    vr[(r, c1)] = re[r] * remax;
                    vi[(r, c1)] = -im[r] * remax;
                }
            }
        }
        ki -= if pair { 2 } else { 1 };
    }
    (vr, vi)
}

/// The rotation `(c, s)` with `c*f + s*g = r`, `-s*f + c*g = 0` and `r` of `f`'s sign (`c >= 0`),
/// LAPACK 3.10's `dlartg`, which `geev` uses to make a complex eigenvector's largest component
/// real.
fn rotation_to_real<T: Real>(f: T, g: T) -> (T, T) {
    if g == T::ZERO {
        return (T::ONE, T::ZERO);
    }
    if f == T::ZERO {
        return (T::ZERO, T::ONE.sign_of(g));
    }
    let d = f.lapy2(g);
    let r = d.sign_of(f);
    (f.abs() / d, g / r)
}

/// `geev('N', jobvr)`: eigenvalues of the square `a`, and right eigenvectors when `vectors`.
pub(crate) fn geev<T: Real>(mut a: Mat<T>, vectors: bool) -> Eig<T> {
    let n = a.r;
    let mut wr = vec![T::ZERO; n];
    let mut wi = vec![T::ZERO; n];
    if n == 0 {
        return Eig {
            wr,
            wi,
            vectors: vectors.then(|| (Mat::zeros(0, 0), Mat::zeros(0, 0))),
            info: 0,
        };
    }
    let (ilo, ihi, scale) = gebal(&mut a);
    let mut z = gehrd(&mut a, ilo, ihi);
    for i in (0..ilo).chain(ihi + 1..n) {
        wr[i] = a[(i, i)];
    }
    let info = lahqr(&mut a, &mut z, ilo, ihi, &mut wr, &mut wi);
    if info != 0 || !vectors {
        return Eig {
            wr,
            wi,
            vectors: None,
            info,
        };
    }
    for c in 0..n {
        for r in c + 2..n {
            a[(r, c)] = T::ZERO;
        }
    }
    let (mut vr, mut vi) = trevc(&a, &z, &wr);
    // gebak: undo the scaling (none when a single row is left: `scale` then holds only
    // permutation indices), then the permutations.
    let scaled = if ilo == ihi { 0 } else { ihi + 1 };
    for (i, &s) in scale.iter().enumerate().take(scaled).skip(ilo) {
        for c in 0..n {
            vr[(i, c)] *= s;
            vi[(i, c)] *= s;
        }
    }
    for ii in 0..n {
        let mut i = ii;
        if i >= ilo && i <= ihi {
            continue;
        }
        if i < ilo {
            i = ilo - 1 - ii;
        }
        let k = scale[i].f64() as usize;
        if k != i {
            vr.swap_rows(i, k);
            vi.swap_rows(i, k);
        }
    }
    // Normalize as geev does.
    let mut c = 0;
    while c < n {
        if wi[c] == T::ZERO {
            let nrm = nrm2((0..n).map(|r| vr[(r, c)]));
            if nrm > T::ZERO {
                let s = T::ONE / nrm;
                for r in 0..n {
                    vr[(r, c)] *= s;
                }
            }
            c += 1;
        } else {
            let s =
                T::ONE / nrm2((0..n).map(|r| vr[(r, c)])).lapy2(nrm2((0..n).map(|r| vi[(r, c)])));
            let mut kmax = 0;
            let mut best = T::ZERO;
            for r in 0..n {
                vr[(r, c)] *= s;
                vi[(r, c)] *= s;
                let m = vr[(r, c)] * vr[(r, c)] + vi[(r, c)] * vi[(r, c)];
                if m > best {
                    best = m;
                    kmax = r;
                }
            }
            let (cs, sn) = rotation_to_real(vr[(kmax, c)], vi[(kmax, c)]);
            for r in 0..n {
                let (x, y) = (vr[(r, c)], vi[(r, c)]);
                vr[(r, c)] = cs * x + sn * y;
                vi[(r, c)] = cs * y - sn * x;
            }
            vi[(kmax, c)] = T::ZERO;
            if c + 1 < n {
                for r in 0..n {
                    vr[(r, c + 1)] = vr[(r, c)];
                    vi[(r, c + 1)] = -vi[(r, c)];
                }
            }
            c += 2;
        }
    }
    Eig {
        wr,
        wi,
        vectors: Some((vr, vi)),
        info,
    }
}

impl Tensor {
    /// `linalg.eig(A)`: complex eigenvalues `[..., n]` and right eigenvectors `[..., n, n]`
    /// (columns of unit norm) of real square matrices, as LAPACK's `geev` returns them.
    pub fn linalg_eig(&self) -> Result<(Tensor, Tensor)> {
        let (w, v) = self.eig_impl(true, "linalg.eig")?;
        Ok((w, v.expect("eigenvectors were requested")))
    }

    /// `linalg.eigvals(A)`: the complex eigenvalues of real square matrices.
    pub fn linalg_eigvals(&self) -> Result<Tensor> {
        Ok(self.eig_impl(false, "linalg.eigvals")?.0)
    }

    fn eig_impl(&self, vectors: bool, op: &str) -> Result<(Tensor, Option<Tensor>)> {
        check_square(self, op)?;
        by_real!(self, op, T => {
            let b = unbatch::<T>(self)?;
            let n = self.sizes()[self.dim() - 1] as usize;
            let rs = map_mats(b.mats, |a| geev(a, vectors));
            let infos: Vec<i32> = rs.iter().map(|r| r.info).collect();
            check_infos(&infos, self.dim() > 2, op)?;
            let mut wdata: Vec<Complex<T>> = Vec::with_capacity(rs.len() * n);
            let mut vdata: Vec<Complex<T>> = Vec::new();
            for r in &rs {
                wdata.extend(r.wr.iter().zip(&r.wi).map(|(&re, &im)| Complex::new(re, im)));
                if let Some((vr, vi)) = &r.vectors {
                    vdata.extend(vr.d.iter().zip(&vi.d).map(|(&re, &im)| Complex::new(re, im)));
                }
            }
            let mut wshape = b.batch.clone();
            wshape.push(n as i64);
            let w = Tensor::from_vec(wdata, &wshape)?;
            let v = if vectors {
                let mut vshape = wshape.clone();
                vshape.push(n as i64);
                Some(Tensor::from_vec(vdata, &vshape)?)
            } else {
                None
            };
            Ok((w, v))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mat(n: usize, d: &[f64]) -> Mat<f64> {
        Mat {
            r: n,
            c: n,
            d: d.to_vec(),
        }
    }

    /// `A v = lambda v` for every returned pair, and unit-norm vectors.
    fn check(a: &Mat<f64>) -> Eig<f64> {
        let e = geev(a.clone(), true);
        assert_eq!(e.info, 0);
        let n = a.r;
        let (vr, vi) = e.vectors.as_ref().unwrap();
        for j in 0..n {
            let mut norm = 0.0;
            for i in 0..n {
                let (mut sr, mut si) = (0.0, 0.0);
                for k in 0..n {
                    sr += a[(i, k)] * vr[(k, j)];
                    si += a[(i, k)] * vi[(k, j)];
                }
                let lr = e.wr[j] * vr[(i, j)] - e.wi[j] * vi[(i, j)];
                let li = e.wr[j] * vi[(i, j)] + e.wi[j] * vr[(i, j)];
                assert!(
                    (sr - lr).abs() < 1e-10 && (si - li).abs() < 1e-10,
                    "column {j}"
                );
                norm += vr[(i, j)] * vr[(i, j)] + vi[(i, j)] * vi[(i, j)];
            }
            assert!((norm - 1.0).abs() < 1e-12);
        }
        e
    }

    #[test]
    fn rotation_has_conjugate_pair() {
        let e = check(&mat(2, &[0.0, -1.0, 1.0, 0.0]));
        assert_eq!(e.wi[0], 1.0);
        assert_eq!(e.wi[1], -1.0);
    }

    #[test]
    fn matches_lapack_on_a_random_matrix() {
        // torch.linalg.eig of this float64 matrix (LAPACK geev through torch 2.15).
        let a = mat(
            4,
            &[
                0.5, -1.2, 0.3, 2.0, 1.1, 0.4, -0.7, 0.2, -0.3, 0.9, 1.5, -1.0, 0.8, 0.1, 0.6, -0.4,
            ],
        );
        let e = check(&a);
        let wr = [
            -0.995429136003,
            0.911754173932,
            0.911754173932,
            1.171920788139,
        ];
        let wi = [0.0, 1.274140660571, -1.274140660571, 0.0];
        for j in 0..4 {
            assert!((e.wr[j] - wr[j]).abs() < 1e-9 && (e.wi[j] - wi[j]).abs() < 1e-9);
        }
        let (vr, vi) = e.vectors.unwrap();
        // First column of each kind, with LAPACK's signs and phase.
        let col0 = [
            -0.602702568728,
            0.405017426468,
            0.056071618110,
            0.685249203975,
        ];
        let col1 = [
            (0.047215910184, 0.588190804274),
            (0.651532285125, 0.0),
            (-0.378496764558, -0.209450573259),
            (0.082695649856, 0.182592450849),
        ];
        for i in 0..4 {
            assert!((vr[(i, 0)] - col0[i]).abs() < 1e-9);
            assert!((vr[(i, 1)] - col1[i].0).abs() < 1e-9);
            assert!((vi[(i, 1)] - col1[i].1).abs() < 1e-9);
            assert!(
                (vr[(i, 3)]
                    + [
                        0.558093315204,
                        0.564654133607,
                        0.388071683477,
                        0.468078977746
                    ][i])
                    .abs()
                    < 1e-9
            );
        }
    }

    #[test]
    fn complex_vector_phase_follows_lapack() {
        // torch.linalg.eig of this float32 matrix: the pair's largest component is negative.
        let d: Vec<f32> = vec![
            1.6268467,
            0.1722732,
            -1.6115024,
            -0.4794478,
            -0.14335105,
            -0.31729463,
            0.9671457,
            -0.9910827,
            0.54360944,
            0.07880439,
            0.8628601,
            -0.01948963,
            0.9910471,
            -0.7777347,
            0.31404856,
            0.213333,
            1.9158976,
            0.6901953,
            -2.3217015,
            -1.1964102,
            0.19702816,
            -1.1773316,
            -0.06614405,
            -0.35835508,
            -1.395172,
            0.4751187,
            -0.8137258,
            0.92423636,
            -0.2473413,
            -1.4153879,
            -1.078658,
            -0.7209098,
            0.58668745,
            0.15829536,
            0.11024587,
            -0.818812,
        ];
        let e = geev(Mat { r: 6, c: 6, d }, true);
        assert!((e.wr[1] + 0.3889).abs() < 1e-3 && (e.wi[1] - 1.8754).abs() < 1e-3);
        let (vr, vi) = e.vectors.unwrap();
        assert!((vr[(2, 1)] + 0.6448).abs() < 1e-3 && vi[(2, 1)] == 0.0);
        assert!((vr[(0, 1)] + 0.1594).abs() < 1e-3 && (vi[(0, 1)] + 0.2405).abs() < 1e-3);
    }

    #[test]
    fn triangular_and_diagonal_inputs() {
        let e = check(&mat(3, &[1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 0.0, 0.0, 6.0]));
        assert_eq!(e.wr, vec![1.0, 4.0, 6.0]);
        // The first eigenvector of a triangular matrix is e1 (gebal isolates every row).
        assert_eq!(e.vectors.as_ref().unwrap().0[(0, 0)], 1.0);
        check(&mat(3, &[2.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 3.0]));
        check(&mat(1, &[5.0]));
    }

    #[test]
    fn tensor_shapes() {
        let t = Tensor::zeros(&[0, 5, 5], crate::dtype::DType::Float32).unwrap();
        let (w, v) = t.linalg_eig().unwrap();
        assert_eq!(w.sizes().as_slice(), &[0, 5]);
        assert_eq!(v.sizes().as_slice(), &[0, 5, 5]);
        assert_eq!(w.dtype(), crate::dtype::DType::Complex64);
        let r = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[1, 3]);
        assert!(r.unwrap().linalg_eigvals().is_err());
    }
}
