//! Derivatives of the matrix factorizations: LU (`linalg.lu`, `lu_factor`, `lu_unpack`, the LU
//! solvers), QR, the general eigendecomposition (`eig`, `eigvals`), Householder products
//! (`householder_product`/`orgqr`, `ormqr`), and the spectral functions written on `eigh`
//! (`polar`, `matrix_sqrth`).
//!
//! LU and QR follow the forward-mode identities of the factorization (`A = P L U`: with
//! `X = L^-1 P^T dA`, `dL` is `L` times the strictly lower part of `X U^-1` and `dU` the rest;
//! `A = Q R`: `Q^H dQ` is the skew-Hermitian part fixed by the strictly lower triangle of
//! `Q^H dA R^-1`), transposed into the reverse mode by hand. The solvers, `polar` and
//! `matrix_sqrth` are differentiated through their decomposition into recorded operators.

use ts_core::IValue;
use ts_tensor::{Error, Tensor};

use super::formula::{Ctx, Table};
use super::nn::via_decomposition;
use super::ops::{self as o, tv};

type R = Result<Vec<Option<Tensor>>, Error>;

fn t_of(a: &[IValue], i: usize) -> Result<Tensor, Error> {
    a.get(i)
        .and_then(|v| v.as_tensor().cloned())
        .ok_or_else(|| Error::runtime("autograd: expected a tensor argument"))
}

fn b_of(a: &[IValue], i: usize, default: bool) -> bool {
    a.get(i).and_then(|v| v.as_bool()).unwrap_or(default)
}

fn tril(x: &Tensor, k: i64) -> Result<Tensor, Error> {
    o::call1("aten::tril", vec![tv(x), IValue::Int(k)])
}

fn triu(x: &Tensor, k: i64) -> Result<Tensor, Error> {
    o::call1("aten::triu", vec![tv(x), IValue::Int(k)])
}

fn narrow(x: &Tensor, dim: i64, start: i64, len: i64) -> Result<Tensor, Error> {
    o::call1(
        "aten::narrow",
        vec![
            tv(x),
            IValue::Int(dim),
            IValue::Int(start),
            IValue::Int(len),
        ],
    )
}

fn cat(xs: Vec<Tensor>, dim: i64) -> Result<Tensor, Error> {
    o::call1("aten::cat", vec![IValue::tensor_list(xs), IValue::Int(dim)])
}

/// `linalg.solve_triangular(a, b, upper, left, unitriangular)`.
fn solve_tri(a: &Tensor, b: &Tensor, upper: bool, left: bool, unit: bool) -> Result<Tensor, Error> {
    o::call1(
        "aten::linalg_solve_triangular",
        vec![
            tv(a),
            tv(b),
            IValue::Bool(upper),
            IValue::Bool(left),
            IValue::Bool(unit),
        ],
    )
}

/// Rows and columns of a (batch of) matrices.
fn rows_cols(x: &Tensor) -> (i64, i64) {
    let s = x.sizes();
    (s[s.len() - 2], s[s.len() - 1])
}

/// The gradient of `A = P L U` from the gradients of `L` (`m x k`) and `U` (`k x n`).
fn lu_backward(
    p: &Tensor,
    l: &Tensor,
    u: &Tensor,
    gl: &Tensor,
    gu: &Tensor,
) -> Result<Tensor, Error> {
    let (m, k) = rows_cols(l);
    let n = rows_cols(u).1;
    let gl = tril(gl, -1)?;
    let gu = triu(gu, 0)?;
    let ga = if m <= n {
        // X = L^-1 P^T dA = [X1 X2]; gX1 = tril(L^H gL - gU U^H, -1) U1^-H + gU1, gX2 = gU2.
        let u1 = narrow(u, -1, 0, k)?;
        let x = o::sub(&o::matmul(&o::mh(l)?, &gl)?, &o::matmul(&gu, &o::mh(u)?)?)?;
        let x = solve_tri(&o::mh(&u1)?, &tril(&x, -1)?, false, false, false)?;
        let x = o::add(&x, &narrow(&gu, -1, 0, k)?)?;
        let x = if n > m {
            cat(vec![x, narrow(&gu, -1, k, n - k)?], -1)?
        } else {
            x
        };
        solve_tri(&o::mh(l)?, &x, true, true, true)?
    } else {
        // Y = P^T dA U^-1 = [Y1; Y2]; gY1 = L1^-H triu(gU U^H - L^H gL) + gL1, gY2 = gL2.
        let l1 = narrow(l, -2, 0, k)?;
        let x = o::sub(&o::matmul(&gu, &o::mh(u)?)?, &o::matmul(&o::mh(l)?, &gl)?)?;
        let x = solve_tri(&o::mh(&l1)?, &triu(&x, 0)?, true, true, true)?;
        let x = o::add(&x, &narrow(&gl, -2, 0, k)?)?;
        let x = cat(vec![x, narrow(&gl, -2, k, m - k)?], -2)?;
        solve_tri(&o::mh(u)?, &x, false, false, false)?
    };
    if p.numel() == 0 {
        Ok(ga)
    } else {
        o::matmul(p, &ga)
    }
}

/// `(P, L, U)` of a packed LU factorization.
fn unpack(lu: &Tensor, piv: &Tensor) -> Result<(Tensor, Tensor, Tensor), Error> {
    let r = o::call(
        "aten::lu_unpack",
        vec![tv(lu), tv(piv), IValue::Bool(true), IValue::Bool(true)],
    )?;
    let get = |i: usize| {
        r.get(i)
            .and_then(|v| v.as_tensor().cloned())
            .ok_or_else(|| Error::runtime("autograd: lu_unpack returned no tensor"))
    };
    Ok((get(0)?, get(1)?, get(2)?))
}

/// The gradient of `A` from the gradient of the packed factor `LU` (`m x n`).
fn lu_factor_grad(c: &Ctx, g: &[Tensor]) -> R {
    let lu = c.out_diff(0, || c.rerun(0))?;
    let piv = c.out(1)?;
    let (p, l, u) = unpack(&lu, &piv)?;
    let (m, n) = rows_cols(&lu);
    let k = m.min(n);
    let gl = if m < n {
        narrow(&g[0], -1, 0, k)?
    } else {
        g[0].clone()
    };
    let gu = if m > n {
        narrow(&g[0], -2, 0, k)?
    } else {
        g[0].clone()
    };
    Ok(vec![Some(lu_backward(&p, &l, &u, &gl, &gu)?)])
}

/// `A X = B` (or `A^H X = B`, `X A = B`, `X A^H = B`) with `A = P L U` unpacked from `LU`.
fn lu_solve_decomposed(
    lu: &Tensor,
    piv: &Tensor,
    b: &Tensor,
    left: bool,
    adjoint: bool,
) -> Result<Tensor, Error> {
    let (p, l, u) = unpack(lu, piv)?;
    let pt = o::mt(&p)?;
    match (left, adjoint) {
        (true, false) => {
            let y = solve_tri(&l, &o::matmul(&pt, b)?, false, true, true)?;
            solve_tri(&u, &y, true, true, false)
        }
        (true, true) => {
            let y = solve_tri(&o::mh(&u)?, b, false, true, false)?;
            let y = solve_tri(&o::mh(&l)?, &y, true, true, true)?;
            o::matmul(&p, &y)
        }
        (false, false) => {
            let w = solve_tri(&u, b, true, false, false)?;
            let z = solve_tri(&l, &w, false, false, true)?;
            o::matmul(&z, &pt)
        }
        (false, true) => {
            let w = solve_tri(&o::mh(&l)?, &o::matmul(b, &p)?, true, false, true)?;
            solve_tri(&o::mh(&u)?, &w, false, false, false)
        }
    }
}

/// The gradient of `A = Q R` (`m >= n`, reduced) from the gradients of `Q` and `R`.
fn qr_backward(q: &Tensor, r: &Tensor, gq: &Tensor, gr: &Tensor) -> Result<Tensor, Error> {
    let gr = triu(gr, 0)?;
    let m = o::sub(&o::matmul(&gr, &o::mh(r)?)?, &o::matmul(&o::mh(q)?, gq)?)?;
    let gc = o::add(&triu(&m, 0)?, &tril(&o::mh(&m)?, -1)?)?;
    let b = o::add(gq, &o::matmul(q, &gc)?)?;
    solve_tri(&o::mh(r)?, &b, false, false, false)
}

/// `V diag(sqrt(max(w, 0))) V^H` of the Hermitian matrix `a` (its lower triangle).
fn sqrt_hermitian(a: &Tensor) -> Result<Tensor, Error> {
    let r = o::call("aten::linalg_eigh", vec![tv(a), IValue::str("L")])?;
    let w = r[0]
        .as_tensor()
        .cloned()
        .ok_or_else(|| Error::runtime("autograd: eigh returned no eigenvalues"))?;
    let v = r[1]
        .as_tensor()
        .cloned()
        .ok_or_else(|| Error::runtime("autograd: eigh returned no eigenvectors"))?;
    let s = o::sqrt(&o::call1(
        "aten::clamp_min",
        vec![tv(&w), IValue::Double(0.0)],
    )?)?;
    let vs = o::mul(&v, &o::unsqueeze(&s, -2)?)?;
    o::matmul(&vs, &o::mh(&v)?)
}

/// `A^-1 B` for complex `A`, through the real system `[[Ar, -Ai], [Ai, Ar]] [Xr; Xi] = [Br; Bi]`
/// (the solver kernels are real).
fn solve_complex(a: &Tensor, b: &Tensor) -> Result<Tensor, Error> {
    let re = |x: &Tensor| o::call1("aten::real", vec![tv(x)]);
    let im = |x: &Tensor| o::call1("aten::imag", vec![tv(x)]);
    let (ar, ai) = (re(a)?, im(a)?);
    let m = cat(
        vec![
            cat(vec![ar.clone(), o::neg(&ai)?], -1)?,
            cat(vec![ai, ar], -1)?,
        ],
        -2,
    )?;
    let rhs = cat(vec![re(b)?, im(b)?], -2)?;
    let x = o::call1(
        "aten::linalg_solve",
        vec![tv(&m), tv(&rhs), IValue::Bool(true)],
    )?;
    let n = rows_cols(a).1;
    o::call1(
        "aten::complex",
        vec![tv(&narrow(&x, -2, 0, n)?), tv(&narrow(&x, -2, n, n)?)],
    )
}

/// The gradient of `A V = V diag(L)` (unit-norm eigenvectors, gauge-invariant loss):
/// `gA = V^-H (diag(gL) + (V^H gV - V^H V diag(Re(V^H gV)_ii)) / conj(L_j - L_i)) V^H`, the
/// quotient taken off the diagonal only.
fn eig_backward(l: &Tensor, v: &Tensor, gl: &Tensor, gv: Option<&Tensor>) -> Result<Tensor, Error> {
    let vh = o::mh(v)?;
    let mut inner = o::call1(
        "aten::diag_embed",
        vec![tv(gl), IValue::Int(0), IValue::Int(-2), IValue::Int(-1)],
    )?;
    if let Some(gv) = gv {
        let vhgv = o::matmul(&vh, gv)?;
        let d = o::call1(
            "aten::diagonal",
            vec![tv(&vhgv), IValue::Int(0), IValue::Int(-2), IValue::Int(-1)],
        )?;
        let re = o::call1("aten::real", vec![tv(&d)])?;
        let re = o::to_dtype(&re, v.dtype())?;
        let t = o::sub(
            &vhgv,
            &o::matmul(&vh, &o::mul(v, &o::unsqueeze(&re, -2)?)?)?,
        )?;
        let lc = o::conj(l)?;
        let e = o::sub(&o::unsqueeze(&lc, -2)?, &o::unsqueeze(&lc, -1)?)?;
        let n = rows_cols(v).1;
        let eye = o::call1(
            "aten::eye",
            vec![
                IValue::Int(n),
                IValue::Int(11),
                IValue::None,
                IValue::None,
                IValue::None,
            ],
        )?;
        let ones = o::add_s(&o::zeros_like(&e)?, 1.0)?;
        let q = o::div(&t, &o::where_(&eye, &ones, &e)?)?;
        inner = o::add(&inner, &o::where_(&eye, &o::zeros_like(&q)?, &q)?)?;
    }
    solve_complex(&vh, &o::matmul(&inner, &vh)?)
}

/// The product of the Householder reflectors `H_i = I - tau_i v_i v_i^H` stored below the
/// diagonal of `a` (unit diagonal implied), `m x m` (`full`) or its first `n` columns.
fn householder(a: &Tensor, tau: &Tensor, full: bool) -> Result<Tensor, Error> {
    let (m, n) = rows_cols(a);
    let k = tau.sizes().last().copied().unwrap_or(0);
    let eye = |r: i64, c: i64| {
        o::call1(
            "aten::eye.m",
            vec![
                IValue::Int(r),
                IValue::Int(c),
                IValue::Int(a.dtype().scalar_type_index()),
                IValue::None,
                IValue::None,
                IValue::None,
            ],
        )
    };
    let v = o::add(&tril(a, -1)?, &eye(m, n)?)?;
    let mut q = eye(m, m)?;
    for i in 0..k {
        let vi = narrow(&v, -1, i, 1)?;
        let ti = o::unsqueeze(&narrow(tau, -1, i, 1)?, -1)?;
        let qv = o::matmul(&o::matmul(&q, &vi)?, &o::mh(&vi)?)?;
        q = o::sub(&q, &o::mul(&ti, &qv)?)?;
    }
    if full {
        Ok(q)
    } else {
        narrow(&q, -1, 0, n)
    }
}

pub(super) fn register(t: &mut Table) {
    for name in ["aten::linalg_householder_product", "aten::orgqr"] {
        t.add(name, |c, g| {
            via_decomposition(c, g, |a| {
                Ok(vec![householder(&t_of(a, 0)?, &t_of(a, 1)?, false)?])
            })
        });
    }
    t.add("aten::ormqr", |c, g| {
        via_decomposition(c, g, |a| {
            let q = householder(&t_of(a, 0)?, &t_of(a, 1)?, true)?;
            let q = if b_of(a, 4, false) { o::mh(&q)? } else { q };
            let other = t_of(a, 2)?;
            Ok(vec![if b_of(a, 3, true) {
                o::matmul(&q, &other)?
            } else {
                o::matmul(&other, &q)?
            }])
        })
    });
    t.add("aten::linalg_eig", |c, g| {
        let (l, v) = (c.out(0)?, c.out(1)?);
        Ok(vec![Some(eig_backward(&l, &v, &g[0], Some(&g[1]))?)])
    });
    t.add("aten::linalg_eigvals", |c, g| {
        let r = o::call("aten::linalg_eig", vec![tv(&c.t(0)?.detach())])?;
        let v = r[1]
            .as_tensor()
            .cloned()
            .ok_or_else(|| Error::runtime("autograd: eig returned no eigenvectors"))?;
        Ok(vec![Some(eig_backward(&c.out(0)?, &v, &g[0], None)?)])
    });
    t.add("aten::linalg_lu", |c, g| {
        let p = c.out(0)?;
        let l = c.out_diff(1, || c.rerun(1))?;
        let u = c.out_diff(2, || c.rerun(2))?;
        Ok(vec![Some(lu_backward(&p, &l, &u, &g[1], &g[2])?)])
    });
    for name in [
        "aten::linalg_lu_factor",
        "aten::linalg_lu_factor_ex",
        "aten::_lu_with_info",
    ] {
        t.add(name, lu_factor_grad);
    }
    t.linear("aten::lu_unpack", |c, g| {
        let lu = c.t(0)?;
        let (m, n) = rows_cols(lu);
        let gl = tril(&g[1], -1)?;
        let gu = triu(&g[2], 0)?;
        let glu = if m < n {
            let gl = o::call1(
                "aten::constant_pad_nd",
                vec![tv(&gl), IValue::int_list([0, n - m]), IValue::Double(0.0)],
            )?;
            o::add(&gl, &gu)?
        } else if m > n {
            let gu = o::call1(
                "aten::constant_pad_nd",
                vec![
                    tv(&gu),
                    IValue::int_list([0, 0, 0, m - n]),
                    IValue::Double(0.0),
                ],
            )?;
            o::add(&gl, &gu)?
        } else {
            o::add(&gl, &gu)?
        };
        Ok(vec![Some(glu), None])
    });
    t.add("aten::linalg_lu_solve", |c, g| {
        via_decomposition(c, g, |a| {
            Ok(vec![lu_solve_decomposed(
                &t_of(a, 0)?,
                &t_of(a, 1)?,
                &t_of(a, 2)?,
                b_of(a, 3, true),
                b_of(a, 4, false),
            )?])
        })
    });
    t.add("aten::lu_solve", |c, g| {
        via_decomposition(c, g, |a| {
            Ok(vec![lu_solve_decomposed(
                &t_of(a, 1)?,
                &t_of(a, 2)?,
                &t_of(a, 0)?,
                true,
                false,
            )?])
        })
    });
    t.add("aten::linalg_qr", |c, g| {
        let a = c.t(0)?;
        let mode = c.args.str(1).unwrap_or("reduced").to_string();
        if mode == "r" {
            return Err(Error::runtime(
                "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.",
            ));
        }
        let (m, n) = rows_cols(a);
        if mode == "complete" && m > n {
            return Err(Error::runtime(
                "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.",
            ));
        }
        let q = c.out_diff(0, || c.rerun(0))?;
        let r = c.out_diff(1, || c.rerun(1))?;
        if m >= n {
            return Ok(vec![Some(qr_backward(&q, &r, &g[0], &g[1])?)]);
        }
        // Wide: A = [X Y] with X = Q R1 and R2 = Q^H Y.
        let y = narrow(a, -1, m, n - m)?;
        let r1 = narrow(&r, -1, 0, m)?;
        let gr1 = narrow(&g[1], -1, 0, m)?;
        let gr2 = narrow(&g[1], -1, m, n - m)?;
        let gy = o::matmul(&q, &gr2)?;
        let gq = o::add(&g[0], &o::matmul(&y, &o::mh(&gr2)?)?)?;
        let gx = qr_backward(&q, &r1, &gq, &gr1)?;
        Ok(vec![Some(cat(vec![gx, gy], -1)?)])
    });
    t.add("aten::linalg_matrix_sqrth", |c, g| {
        via_decomposition(c, g, |a| Ok(vec![sqrt_hermitian(&t_of(a, 0)?)?]))
    });
    t.add("aten::linalg_polar", |c, g| {
        via_decomposition(c, g, |a| {
            let x = t_of(a, 0)?;
            let h = sqrt_hermitian(&o::matmul(&o::mh(&x)?, &x)?)?;
            let u = o::matmul(&x, &o::call1("aten::linalg_inv", vec![tv(&h)])?)?;
            Ok(vec![u, h])
        })
    });
}
