//! Derivatives of the matrix-product family (`matmul`, `mm`, `bmm`, `addmm`, `linear`, ...)
//! and of basic linear algebra (inverse, determinants, trace, solve).

use ts_core::IValue;
use ts_tensor::{Error, Tensor};

use super::formula::{Ctx, Table};
use super::ops::{self as o, tv};

type R = Result<Vec<Option<Tensor>>, Error>;

fn one(t: Tensor) -> R {
    Ok(vec![Some(t)])
}

/// Gradients of `a @ b` (matmul semantics: 1-D operands promoted, batch dims broadcast).
pub(super) fn matmul_grads(a: &Tensor, b: &Tensor, g: &Tensor) -> Result<(Tensor, Tensor), Error> {
    let (a1, b1) = (a.dim() == 1, b.dim() == 1);
    let ap = if a1 { o::unsqueeze(a, 0)? } else { a.clone() };
    let bp = if b1 { o::unsqueeze(b, 1)? } else { b.clone() };
    let mut gp = g.clone();
    if a1 && b1 {
        gp = o::reshape(&gp, &[1, 1])?;
    } else if a1 {
        gp = o::unsqueeze(&gp, -2)?;
    } else if b1 {
        gp = o::unsqueeze(&gp, -1)?;
    }
    let ga = o::matmul(&gp, &o::mh(&bp)?)?;
    let gb = o::matmul(&o::mh(&ap)?, &gp)?;
    let ga = o::reshape(&o::sum_to(&ga, &ap.sizes())?, &a.sizes())?;
    let gb = o::reshape(&o::sum_to(&gb, &bp.sizes())?, &b.sizes())?;
    Ok((ga, gb))
}

fn t_of(a: &[IValue], i: usize) -> Result<Tensor, Error> {
    a[i].as_tensor()
        .cloned()
        .ok_or_else(|| Error::runtime("autograd: expected a tensor argument"))
}

/// Matrix norms over two dimensions: Frobenius, nuclear (through singular values), and the
/// 1/inf (max column/row abs sums) and 2/-2 (extreme singular values) orders.
fn matrix_norm(
    x: &Tensor,
    ord: f64,
    dims: &[i64],
    kd: bool,
    sord: Option<&str>,
) -> Result<Tensor, Error> {
    let nd = x.dim() as i64;
    let d0 = if dims[0] < 0 { dims[0] + nd } else { dims[0] };
    let d1 = if dims[1] < 0 { dims[1] + nd } else { dims[1] };
    match sord {
        Some("fro") => {
            return o::call1(
                "aten::linalg_vector_norm",
                vec![
                    tv(x),
                    o::fv(2.0),
                    IValue::int_list([d0, d1]),
                    IValue::Bool(kd),
                    IValue::None,
                ],
            )
        }
        Some("nuc") => {
            let m = o::permute(x, &move_last(nd, d0, d1))?;
            let sv = o::call1("aten::linalg_svdvals", vec![tv(&m), IValue::None])?;
            let r = o::sum_dims(&sv, &[-1], false)?;
            return keep_two(&r, d0, d1, kd);
        }
        _ => {}
    }
    if ord.abs() == 2.0 {
        let m = o::permute(x, &move_last(nd, d0, d1))?;
        let sv = o::call1("aten::linalg_svdvals", vec![tv(&m), IValue::None])?;
        let r = o::call1(
            if ord > 0.0 {
                "aten::amax"
            } else {
                "aten::amin"
            },
            vec![tv(&sv), IValue::int_list([-1]), IValue::Bool(false)],
        )?;
        return keep_two(&r, d0, d1, kd);
    }
    // 1 / inf: the largest (-1 / -inf: smallest) absolute column / row sum.
    let (sum_dim, red_dim) = if ord.abs() == 1.0 { (d0, d1) } else { (d1, d0) };
    let s = o::sum_dims(&o::abs(x)?, &[sum_dim], true)?;
    let r = o::call1(
        if ord > 0.0 {
            "aten::amax"
        } else {
            "aten::amin"
        },
        vec![tv(&s), IValue::int_list([red_dim]), IValue::Bool(true)],
    )?;
    if kd {
        Ok(r)
    } else {
        let mut ds = [d0, d1];
        ds.sort_unstable();
        let r = o::call1("aten::squeeze.dim", vec![tv(&r), IValue::Int(ds[1])])?;
        o::call1("aten::squeeze.dim", vec![tv(&r), IValue::Int(ds[0])])
    }
}

fn move_last(nd: i64, d0: i64, d1: i64) -> Vec<i64> {
    let mut p: Vec<i64> = (0..nd).filter(|&d| d != d0 && d != d1).collect();
    p.push(d0);
    p.push(d1);
    p
}

fn keep_two(r: &Tensor, d0: i64, d1: i64, kd: bool) -> Result<Tensor, Error> {
    if !kd {
        return Ok(r.clone());
    }
    let mut ds = [d0, d1];
    ds.sort_unstable();
    let r = o::unsqueeze(r, ds[0])?;
    o::unsqueeze(&r, ds[1])
}

fn solve_grads(a: &Tensor, b: &Tensor, x: &Tensor, g: &Tensor) -> R {
    let vec_b =
        b.dim() == 1 || (b.dim() + 1 == a.dim() && b.sizes().last() == a.sizes().get(a.dim() - 1));
    let (xg, gg) = if vec_b {
        (o::unsqueeze(x, -1)?, o::unsqueeze(g, -1)?)
    } else {
        (x.clone(), g.clone())
    };
    let gb = o::call1(
        "aten::linalg_solve",
        vec![tv(&o::mh(a)?), tv(&gg), IValue::Bool(true)],
    )?;
    let ga = o::neg(&o::matmul(&gb, &o::mh(&xg)?)?)?;
    let gb = if vec_b {
        o::call1("aten::squeeze.dim", vec![tv(&gb), IValue::Int(-1)])?
    } else {
        gb
    };
    Ok(vec![
        Some(o::sum_to(&ga, &a.sizes())?),
        Some(o::sum_to(&gb, &b.sizes())?),
    ])
}

fn s(c: &Ctx, i: usize) -> Result<f64, Error> {
    Ok(c.args.s(i)?.to_f64())
}

pub(super) fn register(t: &mut Table) {
    for name in [
        "aten::matmul",
        "aten::mm",
        "aten::bmm",
        "aten::mv",
        "aten::dot",
    ] {
        t.add(name, |c, g| {
            let (a, b) = (c.t(0)?, c.t(1)?);
            if a.dim() == 0 || b.dim() == 0 {
                return Ok(vec![
                    Some(o::sum_to(&o::mul(&g[0], b)?, &a.sizes())?),
                    Some(o::sum_to(&o::mul(&g[0], a)?, &b.sizes())?),
                ]);
            }
            let (ga, gb) = matmul_grads(a, b, &g[0])?;
            Ok(vec![Some(ga), Some(gb)])
        });
    }
    t.add("aten::inner", |c, g| inner_grads(c.t(0)?, c.t(1)?, &g[0]));
    t.add("aten::vdot", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        Ok(vec![
            Some(o::mul(&o::conj(&g[0])?, b)?),
            Some(o::mul(&g[0], a)?),
        ])
    });
    t.add("aten::linalg_vecdot", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        let d = c.args.int(2)?;
        let gk = o::unsqueeze(&g[0], d)?;
        Ok(vec![
            Some(o::sum_to(&o::mul(&gk, b)?, &a.sizes())?),
            Some(o::sum_to(&o::mul(&gk, a)?, &b.sizes())?),
        ])
    });
    for name in ["aten::outer", "aten::ger"] {
        t.add(name, |c, g| {
            let (a, b) = (c.t(0)?, c.t(1)?);
            Ok(vec![
                Some(o::matmul(&g[0], b)?),
                Some(o::matmul(&o::t(&g[0])?, a)?),
            ])
        });
    }
    for name in ["aten::addmm", "aten::addmv", "aten::baddbmm", "aten::addr"] {
        t.add(name, |c, g| {
            let (x, a, b) = (c.t(0)?, c.t(1)?, c.t(2)?);
            let (beta, alpha) = (s(c, 3)?, s(c, 4)?);
            let (ga, gb) = if a.dim() == 1 && b.dim() == 1 {
                // addr: outer product
                (o::matmul(&g[0], b)?, o::matmul(&o::t(&g[0])?, a)?)
            } else {
                let gfull = o::expand(&g[0], &out_shape(a, b))?;
                matmul_grads(a, b, &gfull)?
            };
            Ok(vec![
                Some(o::sum_to(&o::mul_s(&g[0], beta)?, &x.sizes())?),
                Some(o::mul_s(&ga, alpha)?),
                Some(o::mul_s(&gb, alpha)?),
            ])
        });
    }
    t.add("aten::addbmm", |c, g| {
        let (x, a, b) = (c.t(0)?, c.t(1)?, c.t(2)?);
        let (beta, alpha) = (s(c, 3)?, s(c, 4)?);
        let n = a.sizes()[0];
        let gb3 = o::expand(
            &o::unsqueeze(&g[0], 0)?,
            &[n, g[0].sizes()[0], g[0].sizes()[1]],
        )?;
        let (ga, gb) = matmul_grads(a, b, &gb3)?;
        Ok(vec![
            Some(o::sum_to(&o::mul_s(&g[0], beta)?, &x.sizes())?),
            Some(o::mul_s(&ga, alpha)?),
            Some(o::mul_s(&gb, alpha)?),
        ])
    });
    t.add("aten::linear", |c, g| {
        let (x, w) = (c.t(0)?, c.t(1)?);
        let b = c.args.ot(2)?;
        let gx = o::sum_to(&o::matmul(&g[0], w)?, &x.sizes())?;
        let gw = if w.dim() == 1 {
            // weight [in]: y = x @ w
            let (_, gw) = matmul_grads(x, w, &g[0])?;
            gw
        } else {
            let g2 = o::reshape(&g[0], &[-1, w.sizes()[0]])?;
            let x2 = o::reshape(x, &[-1, w.sizes()[1]])?;
            o::mm(&o::t(&g2)?, &x2)?
        };
        let gb = match b {
            Some(b) => Some(o::sum_to(&g[0], &b.sizes())?),
            None => None,
        };
        Ok(vec![Some(gx), Some(gw), gb])
    });
    t.add("aten::trace", |c, g| {
        let x = c.t(0)?;
        let n = x.sizes()[0].min(x.sizes()[1]);
        let eye = o::call1(
            "aten::eye",
            vec![
                IValue::Int(n),
                IValue::Int(x.dtype().scalar_type_index()),
                IValue::None,
                IValue::None,
                IValue::None,
            ],
        )?;
        let z = o::zeros(&x.sizes(), x.dtype())?;
        let d = o::call1(
            "aten::diagonal_scatter",
            vec![
                tv(&z),
                tv(&o::call1(
                    "aten::diagonal",
                    vec![tv(&eye), IValue::Int(0), IValue::Int(0), IValue::Int(1)],
                )?),
                IValue::Int(0),
                IValue::Int(0),
                IValue::Int(1),
            ],
        )?;
        one(o::mul(&d, &g[0])?)
    });
    for name in ["aten::linalg_inv", "aten::inverse"] {
        t.add(name, |c, g| {
            let inv = o::call1("aten::linalg_inv", vec![tv(c.t(0)?)])?;
            let ih = o::mh(&inv)?;
            one(o::neg(&o::matmul(&o::matmul(&ih, &g[0])?, &ih)?)?)
        });
    }
    for name in ["aten::linalg_det", "aten::det"] {
        t.add(name, |c, g| {
            let a = c.t(0)?;
            let d = o::call1("aten::linalg_det", vec![tv(a)])?;
            let inv = o::call1("aten::linalg_inv", vec![tv(a)])?;
            let gd = o::mul(&g[0], &d)?;
            let gd = o::unsqueeze(&o::unsqueeze(&gd, -1)?, -1)?;
            one(o::mul(&gd, &o::mh(&inv)?)?)
        });
    }
    t.add("aten::logdet", |c, g| {
        let a = c.t(0)?;
        let inv = o::call1("aten::linalg_inv", vec![tv(a)])?;
        let gk = o::unsqueeze(&o::unsqueeze(&g[0], -1)?, -1)?;
        one(o::mul(&gk, &o::mh(&inv)?)?)
    });
    for name in ["aten::linalg_slogdet", "aten::slogdet"] {
        t.add(name, |c, g| {
            let a = c.t(0)?;
            let inv = o::call1("aten::linalg_inv", vec![tv(a)])?;
            let gk = o::unsqueeze(&o::unsqueeze(&g[1], -1)?, -1)?;
            one(o::mul(&gk, &o::mh(&inv)?)?)
        });
    }

    t.add("aten::linalg_inv_ex", |c, g| {
        let inv = o::call1("aten::linalg_inv", vec![tv(c.t(0)?)])?;
        let ih = o::mh(&inv)?;
        one(o::neg(&o::matmul(&o::matmul(&ih, &g[0])?, &ih)?)?)
    });
    t.add("aten::linalg_solve_ex", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        let x = o::call1("aten::linalg_solve", vec![tv(a), tv(b), IValue::Bool(true)])?;
        solve_grads(a, b, &x, &g[0])
    });
    t.add("aten::linalg_eigh", |c, g| {
        let a = c.t(0)?;
        let r = o::call(
            "aten::linalg_eigh",
            vec![tv(&a.detach()), c.args.0[1].clone()],
        )?;
        let l = r[0]
            .as_tensor()
            .cloned()
            .ok_or_else(|| Error::runtime("eigh"))?;
        let v = r[1]
            .as_tensor()
            .cloned()
            .ok_or_else(|| Error::runtime("eigh"))?;
        // Project V^H gV onto the skew-Hermitian matrices, divide by L_j - L_i off the
        // diagonal, put gL on the diagonal, and conjugate by V.
        let vhgv = o::matmul(&o::mh(&v)?, &g[1])?;
        let skew = o::mul_s(&o::sub(&vhgv, &o::mh(&vhgv)?)?, 0.5)?;
        let e = o::sub(&o::unsqueeze(&l, -2)?, &o::unsqueeze(&l, -1)?)?;
        let n = l.sizes()[l.dim() - 1];
        let eye = o::call1(
            "aten::eye",
            vec![
                IValue::Int(n),
                IValue::Int(7),
                IValue::None,
                IValue::None,
                IValue::None,
            ],
        )?;
        let eye_b = o::to_dtype(&eye, ts_tensor::DType::Bool)?;
        let ones = o::add_s(&o::zeros_like(&e)?, 1.0)?;
        let e_safe = o::where_(&eye_b, &ones, &e)?;
        let off = o::where_(&eye_b, &o::zeros_like(&skew)?, &o::div(&skew, &e_safe)?)?;
        let inner = o::add(
            &off,
            &o::call1(
                "aten::diag_embed",
                vec![tv(&g[0]), IValue::Int(0), IValue::Int(-2), IValue::Int(-1)],
            )?,
        )?;
        one(o::matmul(&o::matmul(&v, &inner)?, &o::mh(&v)?)?)
    });
    t.add("aten::linalg_eigvalsh", |c, g| {
        let a = c.t(0)?;
        let r = o::call("aten::linalg_eigh", vec![tv(a), c.args.0[1].clone()])?;
        let v = r[1]
            .as_tensor()
            .cloned()
            .ok_or_else(|| Error::runtime("eigh"))?;
        // V diag(g) V^H
        let vg = o::mul(&v, &o::unsqueeze(&g[0], -2)?)?;
        one(o::matmul(&vg, &o::mh(&v)?)?)
    });
    t.add("aten::linalg_svdvals", |c, g| {
        let a = c.t(0)?;
        let r = o::call(
            "aten::linalg_svd",
            vec![tv(a), IValue::Bool(false), IValue::None],
        )?;
        let u = r[0]
            .as_tensor()
            .cloned()
            .ok_or_else(|| Error::runtime("svd"))?;
        let vh = r[2]
            .as_tensor()
            .cloned()
            .ok_or_else(|| Error::runtime("svd"))?;
        let ug = o::mul(&u, &o::unsqueeze(&g[0], -2)?)?;
        one(o::matmul(&ug, &vh)?)
    });
    for name in ["aten::linalg_cholesky", "aten::linalg_cholesky_ex"] {
        t.add(name, |c, g| {
            let a = c.t(0)?;
            let upper = c.args.b(1)?;
            let l = o::call1("aten::linalg_cholesky", vec![tv(a), IValue::Bool(false)])?;
            let gl = if upper { o::mh(&g[0])? } else { g[0].clone() };
            // Phi(L^H gL): lower triangle with the diagonal halved.
            let p = o::matmul(&o::mh(&l)?, &gl)?;
            let p = o::call1("aten::tril", vec![tv(&p), IValue::Int(0)])?;
            let d = o::call1(
                "aten::diagonal",
                vec![tv(&p), IValue::Int(0), IValue::Int(-2), IValue::Int(-1)],
            )?;
            let p = o::sub(
                &p,
                &o::call1(
                    "aten::diag_embed",
                    vec![
                        tv(&o::mul_s(&d, 0.5)?),
                        IValue::Int(0),
                        IValue::Int(-2),
                        IValue::Int(-1),
                    ],
                )?,
            )?;
            let li = o::call1("aten::linalg_inv", vec![tv(&l)])?;
            let s = o::matmul(&o::matmul(&o::mh(&li)?, &p)?, &li)?;
            let s = o::mul_s(&o::add(&s, &o::mh(&s)?)?, 0.5)?;
            one(s)
        });
    }
    t.add("aten::linalg_norm", |c, g| {
        super::nn::via_decomposition(c, g, |a| {
            let x = t_of(a, 0)?;
            let ord = a[1].as_scalar().map(|s| s.to_f64());
            let dims = a[2].as_int_list();
            let kd = a[3].as_bool().unwrap_or(false);
            let two_d = match &dims {
                Some(d) => d.len() == 2,
                None => ord.is_some() && x.dim() == 2,
            };
            if two_d {
                let dims = dims.unwrap_or(vec![-2, -1]);
                return Ok(vec![matrix_norm(&x, ord.unwrap_or(2.0), &dims, kd, None)?]);
            }
            let dims_v = match dims {
                Some(d) => IValue::int_list(d),
                None => IValue::None,
            };
            Ok(vec![o::call1(
                "aten::linalg_vector_norm",
                vec![
                    tv(&x),
                    o::fv(ord.unwrap_or(2.0)),
                    dims_v,
                    IValue::Bool(kd),
                    IValue::None,
                ],
            )?])
        })
    });
    for name in [
        "aten::linalg_matrix_norm",
        "aten::linalg_matrix_norm.str_ord",
        "aten::linalg_norm.ord_str",
    ] {
        t.add(name, |c, g| {
            super::nn::via_decomposition(c, g, |a| {
                let x = t_of(a, 0)?;
                let (ord, sord) = match &a[1] {
                    IValue::String(s) => (0.0, Some(s.to_string())),
                    v => (v.as_scalar().map(|s| s.to_f64()).unwrap_or(2.0), None),
                };
                let dims = a[2].as_int_list().unwrap_or(vec![-2, -1]);
                let kd = a[3].as_bool().unwrap_or(false);
                Ok(vec![matrix_norm(&x, ord, &dims, kd, sord.as_deref())?])
            })
        });
    }
    t.add("aten::linalg_solve", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        if !c.args.b(2)? {
            return Err(Error::runtime(
                "the derivative of linalg_solve with left=False is not implemented in tsrs",
            ));
        }
        solve_grads(a, b, &c.out(0)?, &g[0])
    });
    t.add("aten::kron", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        let nd = a.dim().max(b.dim());
        let pad = |x: &Tensor| -> Vec<i64> {
            let mut v = vec![1i64; nd - x.dim()];
            v.extend(x.sizes().iter().copied());
            v
        };
        let (sa, sb) = (pad(a), pad(b));
        // g viewed as [a0, b0, a1, b1, ...]
        let mut inter = Vec::new();
        for i in 0..nd {
            inter.push(sa[i]);
            inter.push(sb[i]);
        }
        let g4 = o::reshape(&g[0], &inter)?;
        let a4: Vec<i64> = sa.iter().flat_map(|&x| [x, 1]).collect();
        let b4: Vec<i64> = sb.iter().flat_map(|&x| [1, x]).collect();
        let ar = o::reshape(a, &a4)?;
        let br = o::reshape(b, &b4)?;
        let odd: Vec<i64> = (0..nd).map(|i| (2 * i + 1) as i64).collect();
        let even: Vec<i64> = (0..nd).map(|i| (2 * i) as i64).collect();
        let ga = o::sum_dims(&o::mul(&g4, &br)?, &odd, false)?;
        let gb = o::sum_dims(&o::mul(&g4, &ar)?, &even, false)?;
        Ok(vec![
            Some(o::reshape(&ga, &a.sizes())?),
            Some(o::reshape(&gb, &b.sizes())?),
        ])
    });
    for name in ["aten::linalg_cross", "aten::cross"] {
        t.add(name, |c, g| {
            let (a, b) = (c.t(0)?, c.t(1)?);
            let d = match c.args.0.get(2) {
                Some(IValue::Int(d)) => *d,
                _ => -1,
            };
            let cross = |x: &Tensor, y: &Tensor| {
                o::call1("aten::linalg_cross", vec![tv(x), tv(y), IValue::Int(d)])
            };
            Ok(vec![
                Some(o::sum_to(&cross(b, &g[0])?, &a.sizes())?),
                Some(o::sum_to(&cross(&g[0], a)?, &b.sizes())?),
            ])
        });
    }
}

/// `inner(a, b)`: a contraction over the last dimension of both.
fn inner_grads(a: &Tensor, b: &Tensor, g: &Tensor) -> R {
    if a.dim() == 0 || b.dim() == 0 {
        return Ok(vec![
            Some(o::sum_to(&o::mul(g, b)?, &a.sizes())?),
            Some(o::sum_to(&o::mul(g, a)?, &b.sizes())?),
        ]);
    }
    let k = *a.sizes().last().unwrap_or(&1);
    let a2 = o::reshape(a, &[-1, k])?;
    let b2 = o::reshape(b, &[-1, k])?;
    let g2 = o::reshape(g, &[a2.sizes()[0], b2.sizes()[0]])?;
    Ok(vec![
        Some(o::reshape(&o::mm(&g2, &b2)?, &a.sizes())?),
        Some(o::reshape(&o::mm(&o::t(&g2)?, &a2)?, &b.sizes())?),
    ])
}

/// The shape of `a @ b` for 2-D/3-D operands (addmm/addmv/baddbmm's product).
fn out_shape(a: &Tensor, b: &Tensor) -> Vec<i64> {
    let (sa, sb) = (a.sizes(), b.sizes());
    match (a.dim(), b.dim()) {
        (2, 1) => vec![sa[0]],
        (2, 2) => vec![sa[0], sb[1]],
        (3, 3) => vec![sa[0], sa[1], sb[2]],
        _ => vec![],
    }
}

fn ivs(a: &[IValue], i: usize) -> bool {
    a.get(i).and_then(|v| v.as_bool()).unwrap_or(false)
}

/// `A^{-1} B` for a triangular `A` (the triangle taken, unit diagonal when asked).
fn tri_solve(a: &Tensor, b: &Tensor, upper: bool, unit: bool, left: bool) -> Result<Tensor, Error> {
    let tri = if upper {
        o::call1(
            "aten::triu",
            vec![tv(a), IValue::Int(if unit { 1 } else { 0 })],
        )?
    } else {
        o::call1(
            "aten::tril",
            vec![tv(a), IValue::Int(if unit { -1 } else { 0 })],
        )?
    };
    let tri = if unit {
        let n = a.sizes()[a.dim() - 1];
        let eye = o::call1(
            "aten::eye",
            vec![
                IValue::Int(n),
                IValue::Int(a.dtype().scalar_type_index()),
                IValue::None,
                IValue::None,
                IValue::None,
            ],
        )?;
        o::add(&tri, &eye)?
    } else {
        tri
    };
    if left {
        o::call1(
            "aten::linalg_solve",
            vec![tv(&tri), tv(b), IValue::Bool(true)],
        )
    } else {
        let r = o::call1(
            "aten::linalg_solve",
            vec![tv(&o::mt(&tri)?), tv(&o::mt(b)?), IValue::Bool(true)],
        )?;
        o::mt(&r)
    }
}

/// The pseudo-inverse of a full-rank matrix: `(A^H A)^{-1} A^H` or `A^H (A A^H)^{-1}`.
fn pinv_full_rank(a: &Tensor) -> Result<Tensor, Error> {
    let s = a.sizes();
    let (m, n) = (s[s.len() - 2], s[s.len() - 1]);
    let ah = o::mh(a)?;
    if m >= n {
        o::call1(
            "aten::linalg_solve",
            vec![tv(&o::matmul(&ah, a)?), tv(&ah), IValue::Bool(true)],
        )
    } else {
        let inv = o::call1("aten::linalg_inv", vec![tv(&o::matmul(a, &ah)?)])?;
        o::matmul(&ah, &inv)
    }
}

/// Registers solvers differentiated through decompositions valid for full-rank inputs.
pub(super) fn register_solvers(t: &mut Table) {
    use super::nn::via_decomposition;
    t.add("aten::linalg_solve_triangular", |c, g| {
        via_decomposition(c, g, |a| {
            Ok(vec![tri_solve(
                &t_of(a, 0)?,
                &t_of(a, 1)?,
                ivs(a, 2),
                ivs(a, 4),
                a[3].as_bool().unwrap_or(true),
            )?])
        })
    });
    t.add("aten::triangular_solve", |c, g| {
        via_decomposition(c, g, |a| {
            let b = t_of(a, 0)?;
            let m = t_of(a, 1)?;
            let upper = a[2].as_bool().unwrap_or(true);
            let transpose = ivs(a, 3);
            let unit = ivs(a, 4);
            let x = if transpose {
                let tri = if upper {
                    o::call1("aten::triu", vec![tv(&m), IValue::Int(0)])?
                } else {
                    o::call1("aten::tril", vec![tv(&m), IValue::Int(0)])?
                };
                tri_solve(&o::mt(&tri)?, &b, !upper, unit, true)?
            } else {
                tri_solve(&m, &b, upper, unit, true)?
            };
            // The second result is a copy of A, weighted like any output.
            Ok(vec![x, o::mul_s(&m, 1.0)?])
        })
    });
    for name in [
        "aten::linalg_pinv",
        "aten::linalg_pinv.atol_rtol_float",
        "aten::linalg_pinv.atol_rtol_tensor",
        "aten::linalg_pinv.rcond_tensor",
        "aten::pinverse",
    ] {
        t.add(name, |c, g| {
            // Golub-Pereyra: dX = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X for
            // X = pinv(A) of locally constant rank, transposed:
            // gA = -X^H G X^H + (I - A X) G^H X X^H + X^H X G^H (I - X A).
            let a = c.t(0)?;
            let x = c.out_diff(0, || c.rerun(0))?;
            let (xh, gh) = (o::mh(&x)?, o::mh(&g[0])?);
            let t1 = o::neg(&o::matmul(&o::matmul(&xh, &g[0])?, &xh)?)?;
            let ghxxh = o::matmul(&gh, &o::matmul(&x, &xh)?)?;
            let t2 = o::sub(&ghxxh, &o::matmul(&o::matmul(a, &x)?, &ghxxh)?)?;
            let xhxgh = o::matmul(&o::matmul(&xh, &x)?, &gh)?;
            let t3 = o::sub(&xhxgh, &o::matmul(&o::matmul(&xhxgh, &x)?, a)?)?;
            Ok(vec![Some(o::add(&o::add(&t1, &t2)?, &t3)?)])
        });
    }
    t.add("aten::cholesky_inverse", |c, g| {
        via_decomposition(c, g, |a| {
            let l = t_of(a, 0)?;
            let p = if ivs(a, 1) {
                o::matmul(&o::mh(&l)?, &l)?
            } else {
                o::matmul(&l, &o::mh(&l)?)?
            };
            Ok(vec![o::call1("aten::linalg_inv", vec![tv(&p)])?])
        })
    });
    t.add("aten::linalg_lstsq", |c, g| {
        let want_res = c.out(1).map(|r| r.numel() > 0).unwrap_or(false);
        via_decomposition(c, g, move |a| {
            let (m, b) = (t_of(a, 0)?, t_of(a, 1)?);
            let vec_b = b.dim() + 1 == m.dim();
            let bm = if vec_b {
                o::unsqueeze(&b, -1)?
            } else {
                b.clone()
            };
            let x = o::matmul(&pinv_full_rank(&m)?, &bm)?;
            let mut outs = vec![if vec_b {
                o::call1("aten::squeeze.dim", vec![tv(&x), IValue::Int(-1)])?
            } else {
                x.clone()
            }];
            if want_res {
                let r = o::sub(&o::matmul(&m, &x)?, &bm)?;
                let res = o::sum_dims(&o::square(&r)?, &[-2], false)?;
                outs.push(if vec_b {
                    o::call1("aten::squeeze.dim", vec![tv(&res), IValue::Int(-1)])?
                } else {
                    res
                });
            }
            Ok(outs)
        })
    });
    for name in ["aten::linalg_cond", "aten::linalg_cond.p_str"] {
        t.add(name, |c, g| {
            via_decomposition(c, g, |a| {
                let x = t_of(a, 0)?;
                let (p, sp) = match a.get(1) {
                    Some(IValue::String(s)) => (0.0, Some(s.to_string())),
                    Some(v) if !v.is_none() => {
                        (v.as_scalar().map(|s| s.to_f64()).unwrap_or(2.0), None)
                    }
                    _ => (2.0, None),
                };
                if sp.is_none() && p.abs() == 2.0 {
                    let sv = o::call1("aten::linalg_svdvals", vec![tv(&x), IValue::None])?;
                    let hi = o::call1(
                        "aten::amax",
                        vec![tv(&sv), IValue::int_list([-1]), IValue::Bool(false)],
                    )?;
                    let lo = o::call1(
                        "aten::amin",
                        vec![tv(&sv), IValue::int_list([-1]), IValue::Bool(false)],
                    )?;
                    return Ok(vec![if p > 0.0 {
                        o::div(&hi, &lo)?
                    } else {
                        o::div(&lo, &hi)?
                    }]);
                }
                let inv = o::call1("aten::linalg_inv", vec![tv(&x)])?;
                let n1 = matrix_norm(&x, p, &[-2, -1], false, sp.as_deref())?;
                let n2 = matrix_norm(&inv, p, &[-2, -1], false, sp.as_deref())?;
                Ok(vec![o::mul(&n1, &n2)?])
            })
        });
    }
}
