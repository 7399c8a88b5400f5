//! Derivatives of pointwise operators (unary, binary with broadcasting, clamps, comparisons
//! with zero gradient).

use ts_tensor::{Error, Tensor};

use super::formula::{Ctx, Table};
use super::ops::{self as o, reduce_to};

type R = Result<Vec<Option<Tensor>>, Error>;

fn one(t: Tensor) -> R {
    Ok(vec![Some(t)])
}

/// Unary `f(x)` with `df/dx` given as a function of x (and the output).
fn unary(c: &Ctx, g: &[Tensor], d: impl Fn(&Tensor) -> Result<Tensor, Error>) -> R {
    let x = c.t(0)?;
    one(o::mul(&g[0], &d(x)?)?)
}

/// For complex inputs the chain rule uses the conjugate of the derivative.
fn unary_c(c: &Ctx, g: &[Tensor], d: impl Fn(&Tensor) -> Result<Tensor, Error>) -> R {
    let x = c.t(0)?;
    let dx = d(x)?;
    let dx = if dx.dtype().is_complex() {
        o::conj(&dx)?
    } else {
        dx
    };
    one(o::mul(&g[0], &dx)?)
}

/// A unary formula written with the operator's result `y`: `g * conj(d(y))`. When the backward
/// pass records (`create_graph=True`) `y` is recomputed from the input so that it carries
/// history; an in-place operator's input is gone by then, which is an error rather than a
/// wrong second derivative.
fn from_result(c: &Ctx, g: &[Tensor], d: impl Fn(Tensor) -> Result<Tensor, Error>) -> R {
    let y = if ts_tensor::autograd::is_grad_enabled() {
        let x = c.t(0)?;
        let saved = c.out(0)?;
        if ts_tensor::Storage::ptr_eq(&x.storage(), &saved.storage()) {
            return Err(Error::runtime(format!(
                "tsrs: double backward through the in-place form of {} is not supported",
                c.op
            )));
        }
        c.rerun(0)?
    } else {
        c.out(0)?
    };
    let dy = d(y)?;
    let dy = if dy.dtype().is_complex() {
        o::conj(&dy)?
    } else {
        dy
    };
    one(o::mul(&g[0], &dy)?)
}

fn scalar_arg(c: &Ctx, i: usize) -> Result<f64, Error> {
    let s = c.args.s(i)?;
    Ok(s.to_f64())
}

pub(super) fn register(t: &mut Table) {
    // Linear and sign-like.
    t.linear("aten::neg", |_, g| one(o::neg(&g[0])?));
    t.linear("aten::positive", |_, g| one(g[0].clone()));
    t.linear("aten::clone", |_, g| one(g[0].clone()));
    t.linear("aten::contiguous", |_, g| one(g[0].clone()));
    t.linear("aten::alias", |_, g| one(g[0].clone()));
    t.linear("aten::alias_copy", |_, g| one(g[0].clone()));
    t.linear("aten::conj_physical", |_, g| one(o::conj(&g[0])?));
    t.linear("aten::resolve_neg", |_, g| one(g[0].clone()));
    t.linear("aten::resolve_conj", |_, g| one(g[0].clone()));
    for name in [
        "aten::floor",
        "aten::ceil",
        "aten::round",
        "aten::round.decimals",
        "aten::trunc",
        "aten::sign",
        "aten::fix",
    ] {
        t.linear(name, |c, _| one(o::zeros_like(c.t(0)?)?));
    }
    t.add("aten::sgn", |c, g| {
        let x = c.t(0)?;
        if !x.dtype().is_complex() {
            return one(o::zeros_like(x)?);
        }
        // (g - real(g * conj(sgn)) * sgn) / |x|, 0 where x == 0
        let s = o::sgn(x)?;
        let a = o::abs(x)?;
        let p = o::real(&o::mul(&g[0], &o::conj(&s)?)?)?;
        let r = o::div(&o::sub(&g[0], &o::mul(&p, &s)?)?, &a)?;
        one(o::mask(&o::ne(&a, &o::zeros_like(&a)?)?, &r)?)
    });
    t.add("aten::abs", |c, g| {
        let x = c.t(0)?;
        if x.dtype().is_complex() {
            let s = o::sgn(x)?;
            return one(o::mul(&g[0], &s)?);
        }
        unary(c, g, o::sign)
    });
    // exp, tanh and sigmoid read their result (as PyTorch: an in-place write to it is caught).
    t.result("aten::exp", |c, g| from_result(c, g, Ok));
    t.result("aten::tanh", |c, g| {
        from_result(c, g, |y| o::rsub_s(&o::square(&y)?, 1.0))
    });
    t.result("aten::sigmoid", |c, g| {
        from_result(c, g, |y| o::mul(&y, &o::rsub_s(&y, 1.0)?))
    });
    t.add("aten::exp2", |c, g| {
        unary(c, g, |x| {
            o::mul_s(
                &o::call1("aten::exp2", vec![o::tv(x)])?,
                std::f64::consts::LN_2,
            )
        })
    });
    t.add("aten::expm1", |c, g| unary_c(c, g, o::exp));
    t.add("aten::log", |c, g| unary_c(c, g, o::reciprocal));
    t.add("aten::log2", |c, g| {
        unary_c(c, g, |x| {
            o::reciprocal(&o::mul_s(x, std::f64::consts::LN_2)?)
        })
    });
    t.add("aten::log10", |c, g| {
        unary_c(c, g, |x| {
            o::reciprocal(&o::mul_s(x, std::f64::consts::LN_10)?)
        })
    });
    t.add("aten::log1p", |c, g| {
        unary_c(c, g, |x| o::reciprocal(&o::add_s(x, 1.0)?))
    });
    t.add("aten::sqrt", |c, g| {
        unary_c(c, g, |x| o::div_s(&o::reciprocal(&o::sqrt(x)?)?, 2.0))
    });
    t.add("aten::rsqrt", |c, g| {
        unary_c(c, g, |x| o::mul_s(&o::pow_s(x, -1.5)?, -0.5))
    });
    t.add("aten::reciprocal", |c, g| {
        unary_c(c, g, |x| o::neg(&o::reciprocal(&o::square(x)?)?))
    });
    t.add("aten::square", |c, g| unary_c(c, g, |x| o::mul_s(x, 2.0)));
    t.add("aten::sin", |c, g| unary_c(c, g, o::cos));
    t.add("aten::cos", |c, g| unary_c(c, g, |x| o::neg(&o::sin(x)?)));
    t.add("aten::tan", |c, g| {
        unary_c(c, g, |x| o::add_s(&o::square(&o::tan(x)?)?, 1.0))
    });
    t.add("aten::sinh", |c, g| unary_c(c, g, o::cosh));
    t.add("aten::cosh", |c, g| unary_c(c, g, o::sinh));
    t.add("aten::asin", |c, g| {
        unary_c(c, g, |x| o::rsqrt(&o::rsub_s(&o::square(x)?, 1.0)?))
    });
    t.add("aten::acos", |c, g| {
        unary_c(c, g, |x| {
            o::neg(&o::rsqrt(&o::rsub_s(&o::square(x)?, 1.0)?)?)
        })
    });
    t.add("aten::atan", |c, g| {
        unary_c(c, g, |x| o::reciprocal(&o::add_s(&o::square(x)?, 1.0)?))
    });
    t.add("aten::asinh", |c, g| {
        unary_c(c, g, |x| o::rsqrt(&o::add_s(&o::square(x)?, 1.0)?))
    });
    t.add("aten::acosh", |c, g| {
        unary_c(c, g, |x| o::rsqrt(&o::add_s(&o::square(x)?, -1.0)?))
    });
    t.add("aten::atanh", |c, g| {
        unary_c(c, g, |x| o::reciprocal(&o::rsub_s(&o::square(x)?, 1.0)?))
    });
    t.add("aten::logit", |c, g| {
        // 1 / (x (1 - x)); with eps, 0 outside [eps, 1 - eps].
        let x = c.t(0)?;
        let d = o::div(&g[0], &o::mul(x, &o::rsub_s(x, 1.0)?)?)?;
        match c.args.of(1)? {
            Some(eps) => {
                let inside = and(&o::ge_s(x, eps)?, &o::le_s(x, 1.0 - eps)?)?;
                one(o::mask(&inside, &d)?)
            }
            None => one(d),
        }
    });
    t.add("aten::angle", |c, _g| {
        let x = c.t(0)?;
        if !x.dtype().is_complex() {
            return one(o::zeros_like(x)?);
        }
        Err(Error::runtime(
            "the derivative for 'aten::angle' of a complex input is not implemented in tsrs",
        ))
    });
    t.add("aten::special_modified_bessel_k0", |c, g| {
        unary(c, g, |x| {
            o::neg(&o::call1(
                "aten::special_modified_bessel_k1",
                vec![o::tv(x)],
            )?)
        })
    });
    t.add("aten::erf", |c, g| {
        unary(c, g, |x| {
            o::mul_s(
                &o::exp(&o::neg(&o::square(x)?)?)?,
                2.0 / std::f64::consts::PI.sqrt(),
            )
        })
    });
    t.add("aten::erfc", |c, g| {
        unary(c, g, |x| {
            o::mul_s(
                &o::exp(&o::neg(&o::square(x)?)?)?,
                -2.0 / std::f64::consts::PI.sqrt(),
            )
        })
    });
    t.add("aten::erfinv", |c, g| {
        unary(c, g, |x| {
            let y = o::call1("aten::erfinv", vec![o::tv(x)])?;
            o::mul_s(&o::exp(&o::square(&y)?)?, std::f64::consts::PI.sqrt() / 2.0)
        })
    });
    t.add("aten::lgamma", |c, g| unary(c, g, o::digamma));
    t.add("aten::digamma", |c, g| {
        unary(c, g, |x| {
            o::call1("aten::polygamma", vec![ts_core::IValue::Int(1), o::tv(x)])
        })
    });
    t.add("aten::polygamma", |c, g| {
        let n = c.args.int(0)?;
        let x = c.t(1)?;
        let d = o::call1(
            "aten::polygamma",
            vec![ts_core::IValue::Int(n + 1), o::tv(x)],
        )?;
        Ok(vec![Some(o::mul(&g[0], &d)?)])
    });
    // From the result (positive exactly where the input is), so `relu_` copies nothing.
    t.result("aten::relu", |c, g| {
        one(o::mask(&o::gt_s(&c.out(0)?, 0.0)?, &g[0])?)
    });
    t.add("aten::frac", |_, g| one(g[0].clone()));
    t.add("aten::deg2rad", |_, g| {
        one(o::mul_s(&g[0], std::f64::consts::PI / 180.0)?)
    });
    t.add("aten::rad2deg", |_, g| {
        one(o::mul_s(&g[0], 180.0 / std::f64::consts::PI)?)
    });
    t.add("aten::sinc", |c, g| {
        unary(c, g, |x| {
            // (cos(pi x) pi x - sin(pi x)) / (pi x^2), 0 at x == 0.
            let px = o::mul_s(x, std::f64::consts::PI)?;
            let num = o::sub(&o::mul(&o::cos(&px)?, &px)?, &o::sin(&px)?)?;
            let den = o::mul_s(&o::square(x)?, std::f64::consts::PI)?;
            let d = o::div(&num, &den)?;
            o::mask(&o::ne(x, &o::zeros_like(x)?)?, &d)
        })
    });
    t.add("aten::nan_to_num", |c, g| {
        let x = c.t(0)?;
        let finite = o::call1("aten::isfinite", vec![o::tv(x)])?;
        one(o::mask(&finite, &g[0])?)
    });

    // Binary, broadcasting.
    t.linear("aten::add.Tensor", |c, g| {
        let alpha = scalar_arg(c, 2)?;
        let gb = if alpha == 1.0 {
            g[0].clone()
        } else {
            o::mul_s(&g[0], alpha)?
        };
        Ok(vec![
            Some(reduce_to(&g[0], c.t(0)?)?),
            Some(reduce_to(&gb, c.t(1)?)?),
        ])
    });
    t.linear("aten::sub.Tensor", |c, g| {
        let alpha = scalar_arg(c, 2)?;
        let gb = o::mul_s(&g[0], -alpha)?;
        Ok(vec![
            Some(reduce_to(&g[0], c.t(0)?)?),
            Some(reduce_to(&gb, c.t(1)?)?),
        ])
    });
    t.linear("aten::rsub.Tensor", |c, g| {
        let alpha = scalar_arg(c, 2)?;
        let ga = o::mul_s(&g[0], -alpha)?;
        Ok(vec![
            Some(reduce_to(&ga, c.t(0)?)?),
            Some(reduce_to(&g[0], c.t(1)?)?),
        ])
    });
    t.linear("aten::add.Scalar", |_, g| one(g[0].clone()));
    t.linear("aten::sub.Scalar", |_, g| one(g[0].clone()));
    t.linear("aten::rsub.Scalar", |c, g| {
        one(o::mul_s(&g[0], -scalar_arg(c, 2)?)?)
    });
    t.linear("aten::mul.Scalar", |c, g| {
        one(o::mul_s(&g[0], scalar_arg(c, 1)?)?)
    });
    t.linear("aten::div.Scalar", |c, g| {
        one(o::div_s(&g[0], scalar_arg(c, 1)?)?)
    });
    t.add("aten::mul.Tensor", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        Ok(vec![
            Some(reduce_to(&o::mul(&g[0], &cj(b)?)?, a)?),
            Some(reduce_to(&o::mul(&g[0], &cj(a)?)?, b)?),
        ])
    });
    t.add("aten::div.Tensor", div_grad);
    t.add("aten::true_divide.Tensor", div_grad);
    t.add("aten::div.Tensor_mode", |c, g| {
        if c.args.ostr(2)?.is_some() {
            return Ok(vec![
                Some(o::zeros_like(c.t(0)?)?),
                Some(o::zeros_like(c.t(1)?)?),
            ]);
        }
        div_grad(c, g)
    });
    t.add("aten::div.Scalar_mode", |c, g| {
        if c.args.ostr(2)?.is_some() {
            return one(o::zeros_like(c.t(0)?)?);
        }
        one(o::div_s(&g[0], scalar_arg(c, 1)?)?)
    });
    t.add("aten::floor_divide", |c, _| {
        Ok(vec![
            Some(o::zeros_like(c.t(0)?)?),
            Some(o::zeros_like(c.t(1)?)?),
        ])
    });
    t.add("aten::pow.Tensor_Scalar", |c, g| {
        let x = c.t(0)?;
        let e = scalar_arg(c, 1)?;
        if e == 0.0 {
            return one(o::zeros_like(x)?);
        }
        one(o::mul(&g[0], &o::mul_s(&o::pow_s(x, e - 1.0)?, e)?)?)
    });
    t.add("aten::pow.Tensor_Tensor", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        let bm1 = o::add_s(b, -1.0)?;
        let da = o::mul(&o::mul(b, &o::pow_t(a, &bm1)?)?, &g[0])?;
        let da = o::mask(&o::ne(b, &o::zeros_like(b)?)?, &da)?;
        let p = o::pow_t(a, b)?;
        let logz = o::log(a)?;
        let db = o::mul(&o::mul(&p, &logz)?, &g[0])?;
        // 0 ** b with b >= 0 has gradient 0 with respect to b.
        let zero_base = o::call1(
            "aten::logical_and",
            vec![
                o::tv(&o::eq(a, &o::zeros_like(a)?)?),
                o::tv(&o::ge_s(b, 0.0)?),
            ],
        )?;
        let db = o::where_(&zero_base, &o::zeros_like(&db)?, &db)?;
        Ok(vec![Some(reduce_to(&da, a)?), Some(reduce_to(&db, b)?)])
    });
    t.add("aten::pow.Scalar", |c, g| {
        let base = scalar_arg(c, 0)?;
        let e = c.t(1)?;
        let p = o::call1("aten::pow.Scalar", vec![c.args.0[0].clone(), o::tv(e)])?;
        let d = o::mul_s(&p, base.ln())?;
        let d = if base == 0.0 {
            o::mask(&o::lt_s(e, 0.0)?, &d)?
        } else {
            d
        };
        Ok(vec![Some(o::mul(&g[0], &d)?)])
    });
    t.add("aten::atan2", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        let den = o::add(&o::square(a)?, &o::square(b)?)?;
        Ok(vec![
            Some(reduce_to(&o::mul(&g[0], &o::div(b, &den)?)?, a)?),
            Some(reduce_to(&o::mul(&g[0], &o::neg(&o::div(a, &den)?)?)?, b)?),
        ])
    });
    t.add("aten::hypot", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        let h = o::call1("aten::hypot", vec![o::tv(a), o::tv(b)])?;
        Ok(vec![
            Some(reduce_to(&o::mul(&g[0], &o::div(a, &h)?)?, a)?),
            Some(reduce_to(&o::mul(&g[0], &o::div(b, &h)?)?, b)?),
        ])
    });
    t.add("aten::maximum", |c, g| minmax_grad(c, g, true, false));
    t.add("aten::max.other", |c, g| minmax_grad(c, g, true, false));
    t.add("aten::fmax", |c, g| minmax_grad(c, g, true, true));
    t.add("aten::minimum", |c, g| minmax_grad(c, g, false, false));
    t.add("aten::min.other", |c, g| minmax_grad(c, g, false, false));
    t.add("aten::fmin", |c, g| minmax_grad(c, g, false, true));
    t.add("aten::logaddexp", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        let s = o::sigmoid(&o::sub(a, b)?)?;
        Ok(vec![
            Some(reduce_to(&o::mul(&g[0], &s)?, a)?),
            Some(reduce_to(&o::mul(&g[0], &o::rsub_s(&s, 1.0)?)?, b)?),
        ])
    });
    t.add("aten::logaddexp2", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        let s = o::sigmoid(&o::mul_s(&o::sub(a, b)?, std::f64::consts::LN_2)?)?;
        Ok(vec![
            Some(reduce_to(&o::mul(&g[0], &s)?, a)?),
            Some(reduce_to(&o::mul(&g[0], &o::rsub_s(&s, 1.0)?)?, b)?),
        ])
    });
    t.add("aten::xlogy.Tensor", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        let da = o::mul(&g[0], &o::log(b)?)?;
        let nz = o::ne(a, &o::zeros_like(a)?)?;
        let nz = o::call1("aten::logical_or", vec![o::tv(&nz), o::tv(&o::isnan(b)?)])?;
        let da = o::mask(&nz, &da)?;
        let db = o::mul(&g[0], &o::div(a, b)?)?;
        Ok(vec![Some(reduce_to(&da, a)?), Some(reduce_to(&db, b)?)])
    });
    t.add("aten::copysign.Tensor", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        let r = o::call1("aten::copysign.Tensor", vec![o::tv(a), o::tv(b)])?;
        let d = o::mask(&o::ne(a, &o::zeros_like(a)?)?, &o::div(&r, a)?)?;
        Ok(vec![
            Some(reduce_to(&o::mul(&g[0], &d)?, a)?),
            Some(o::zeros_like(b)?),
        ])
    });
    t.add("aten::fmod.Tensor", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        let q = o::call1("aten::trunc", vec![o::tv(&o::div(a, b)?)])?;
        Ok(vec![
            Some(reduce_to(&g[0], a)?),
            Some(reduce_to(&o::mul(&o::neg(&g[0])?, &q)?, b)?),
        ])
    });
    t.add("aten::remainder.Tensor", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        let q = o::call1("aten::floor", vec![o::tv(&o::div(a, b)?)])?;
        Ok(vec![
            Some(reduce_to(&g[0], a)?),
            Some(reduce_to(&o::mul(&o::neg(&g[0])?, &q)?, b)?),
        ])
    });
    t.linear("aten::fmod.Scalar", |_, g| one(g[0].clone()));
    t.linear("aten::remainder.Scalar", |_, g| one(g[0].clone()));
    t.add("aten::ldexp.Tensor", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        let p = o::call1("aten::exp2", vec![o::tv(b)])?;
        let r = o::mul(a, &p)?;
        Ok(vec![
            Some(reduce_to(&o::mul(&g[0], &p)?, a)?),
            Some(reduce_to(
                &o::mul_s(&o::mul(&g[0], &r)?, std::f64::consts::LN_2)?,
                b,
            )?),
        ])
    });
    t.add("aten::heaviside", |c, _| {
        Ok(vec![
            Some(o::zeros_like(c.t(0)?)?),
            Some(o::zeros_like(c.t(1)?)?),
        ])
    });
    t.add("aten::lerp.Scalar", |c, g| {
        let w = scalar_arg(c, 2)?;
        Ok(vec![
            Some(reduce_to(&o::mul_s(&g[0], 1.0 - w)?, c.t(0)?)?),
            Some(reduce_to(&o::mul_s(&g[0], w)?, c.t(1)?)?),
        ])
    });
    t.add("aten::lerp.Tensor", |c, g| {
        let (a, b, w) = (c.t(0)?, c.t(1)?, c.t(2)?);
        Ok(vec![
            Some(reduce_to(&o::mul(&g[0], &o::rsub_s(w, 1.0)?)?, a)?),
            Some(reduce_to(&o::mul(&g[0], w)?, b)?),
            Some(reduce_to(&o::mul(&g[0], &o::sub(b, a)?)?, w)?),
        ])
    });
    t.add("aten::addcmul", |c, g| {
        let v = scalar_arg(c, 3)?;
        let (s, a, b) = (c.t(0)?, c.t(1)?, c.t(2)?);
        let gv = o::mul_s(&g[0], v)?;
        Ok(vec![
            Some(reduce_to(&g[0], s)?),
            Some(reduce_to(&o::mul(&gv, b)?, a)?),
            Some(reduce_to(&o::mul(&gv, a)?, b)?),
        ])
    });
    t.add("aten::addcdiv", |c, g| {
        let v = scalar_arg(c, 3)?;
        let (s, a, b) = (c.t(0)?, c.t(1)?, c.t(2)?);
        let gv = o::mul_s(&g[0], v)?;
        Ok(vec![
            Some(reduce_to(&g[0], s)?),
            Some(reduce_to(&o::div(&gv, b)?, a)?),
            Some(reduce_to(
                &o::neg(&o::div(&o::mul(&gv, a)?, &o::square(b)?)?)?,
                b,
            )?),
        ])
    });
    t.add("aten::where.self", |c, g| {
        let (cond, a, b) = (c.t(0)?, c.t(1)?, c.t(2)?);
        let z = o::zeros_like(&g[0])?;
        Ok(vec![
            None,
            Some(reduce_to(&o::where_(cond, &g[0], &z)?, a)?),
            Some(reduce_to(&o::where_(cond, &z, &g[0])?, b)?),
        ])
    });
    t.add("aten::where.ScalarOther", |c, g| {
        let cond = c.t(0)?;
        Ok(vec![
            None,
            Some(reduce_to(&o::mask(cond, &g[0])?, c.t(1)?)?),
        ])
    });
    t.add("aten::where.ScalarSelf", |c, g| {
        let cond = c.t(0)?;
        let z = o::zeros_like(&g[0])?;
        Ok(vec![
            None,
            Some(reduce_to(&o::where_(cond, &z, &g[0])?, c.t(2)?)?),
        ])
    });

    // Special functions.
    t.add("aten::special_ndtr", |c, g| unary(c, g, gauss));
    t.add("aten::special_log_ndtr", |c, g| {
        unary(c, g, |x| {
            let n = o::call1("aten::special_ndtr", vec![o::tv(x)])?;
            o::div(&gauss(x)?, &n)
        })
    });
    t.add("aten::special_ndtri", |c, g| {
        unary(c, g, |x| {
            let y = o::call1("aten::special_ndtri", vec![o::tv(x)])?;
            o::mul_s(
                &o::exp(&o::mul_s(&o::square(&y)?, 0.5)?)?,
                (2.0 * std::f64::consts::PI).sqrt(),
            )
        })
    });
    t.add("aten::special_entr", |c, g| {
        unary(c, g, |x| o::neg(&o::add_s(&o::log(x)?, 1.0)?))
    });
    t.add("aten::special_erfcx", |c, g| {
        unary(c, g, |x| {
            let e = o::call1("aten::special_erfcx", vec![o::tv(x)])?;
            o::add_s(
                &o::mul_s(&o::mul(x, &e)?, 2.0)?,
                -2.0 / std::f64::consts::PI.sqrt(),
            )
        })
    });
    t.add("aten::special_i0e", |c, g| {
        unary(c, g, |x| {
            let i0e = o::call1("aten::special_i0e", vec![o::tv(x)])?;
            let i1e = o::call1("aten::special_i1e", vec![o::tv(x)])?;
            o::sub(&i1e, &o::mul(&o::sign(x)?, &i0e)?)
        })
    });
    t.add("aten::special_i1e", |c, g| {
        unary(c, g, |x| {
            let i0e = o::call1("aten::special_i0e", vec![o::tv(x)])?;
            let i1e = o::call1("aten::special_i1e", vec![o::tv(x)])?;
            let d = o::sub(
                &i0e,
                &o::mul(&i1e, &o::add(&o::sign(x)?, &o::reciprocal(x)?)?)?,
            )?;
            let zero = o::eq(x, &o::zeros_like(x)?)?;
            o::where_(&zero, &o::add_s(&o::zeros_like(x)?, 0.5)?, &d)
        })
    });
    t.add("aten::i0", |c, g| {
        unary(c, g, |x| o::call1("aten::special_i1", vec![o::tv(x)]))
    });
    t.add("aten::special_bessel_j0", |c, g| {
        unary(c, g, |x| {
            o::neg(&o::call1("aten::special_bessel_j1", vec![o::tv(x)])?)
        })
    });
    t.add("aten::special_bessel_j1", |c, g| {
        unary(c, g, |x| {
            let j0 = o::call1("aten::special_bessel_j0", vec![o::tv(x)])?;
            let j1 = o::call1("aten::special_bessel_j1", vec![o::tv(x)])?;
            let d = o::sub(&j0, &o::div(&j1, x)?)?;
            let zero = o::eq(x, &o::zeros_like(x)?)?;
            o::where_(&zero, &o::add_s(&o::zeros_like(x)?, 0.5)?, &d)
        })
    });
    t.add("aten::mvlgamma", |c, g| {
        let x = c.t(0)?;
        let p = c.args.int(1)?;
        let mut acc = o::zeros_like(x)?;
        for i in 0..p {
            acc = o::add(&acc, &o::digamma(&o::add_s(x, -(i as f64) / 2.0)?)?)?;
        }
        one(o::mul(&g[0], &acc)?)
    });
    t.add("aten::special_xlog1py", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        let da = o::mul(&g[0], &o::log1p(b)?)?;
        let nz = o::ne(a, &o::zeros_like(a)?)?;
        let da = o::mask(&nz, &da)?;
        let db = o::mul(&g[0], &o::div(a, &o::add_s(b, 1.0)?)?)?;
        Ok(vec![Some(reduce_to(&da, a)?), Some(reduce_to(&db, b)?)])
    });

    // Clamps.
    t.add("aten::clamp", |c, g| {
        let x = c.t(0)?;
        let mut keep = o::eq(x, x)?;
        if let Some(lo) = c.args.os(1)? {
            keep = and(&keep, &o::ge_s(x, lo.to_f64())?)?;
        }
        if let Some(hi) = c.args.os(2)? {
            keep = and(&keep, &o::le_s(x, hi.to_f64())?)?;
        }
        one(o::mask(&keep, &g[0])?)
    });
    t.add("aten::clamp_min", |c, g| {
        one(o::mask(&o::ge_s(c.t(0)?, scalar_arg(c, 1)?)?, &g[0])?)
    });
    t.add("aten::clamp_max", |c, g| {
        one(o::mask(&o::le_s(c.t(0)?, scalar_arg(c, 1)?)?, &g[0])?)
    });
    t.add("aten::clamp.Tensor", |c, g| {
        let x = c.t(0)?;
        let lo = c.args.ot(1)?;
        let hi = c.args.ot(2)?;
        let mut keep = o::eq(x, x)?;
        if let Some(lo) = lo {
            keep = and(&keep, &o::ge(x, lo)?)?;
        }
        if let Some(hi) = hi {
            keep = and(&keep, &o::le(x, hi)?)?;
        }
        let gx = reduce_to(&o::mask(&keep, &g[0])?, x)?;
        let mut v = vec![Some(gx)];
        let z = o::zeros_like(&g[0])?;
        if let Some(lo) = lo {
            let below = o::lt(x, lo)?;
            let below = match hi {
                Some(hi) => and(&below, &o::lt(lo, hi)?)?,
                None => below,
            };
            v.push(Some(reduce_to(&o::where_(&below, &g[0], &z)?, lo)?));
        } else {
            v.push(None);
        }
        if let Some(hi) = hi {
            let above = o::gt(x, hi)?;
            let above = match lo {
                Some(lo) => o::call1(
                    "aten::logical_or",
                    vec![o::tv(&above), o::tv(&o::lt(hi, lo)?)],
                )?,
                None => above,
            };
            v.push(Some(reduce_to(&o::where_(&above, &g[0], &z)?, hi)?));
        } else {
            v.push(None);
        }
        Ok(v)
    });
    t.add("aten::clamp_min.Tensor", |c, g| {
        let (x, lo) = (c.t(0)?, c.t(1)?);
        let keep = o::ge(x, lo)?;
        let z = o::zeros_like(&g[0])?;
        Ok(vec![
            Some(reduce_to(&o::where_(&keep, &g[0], &z)?, x)?),
            Some(reduce_to(&o::where_(&keep, &z, &g[0])?, lo)?),
        ])
    });
    t.add("aten::clamp_max.Tensor", |c, g| {
        let (x, hi) = (c.t(0)?, c.t(1)?);
        let keep = o::le(x, hi)?;
        let z = o::zeros_like(&g[0])?;
        Ok(vec![
            Some(reduce_to(&o::where_(&keep, &g[0], &z)?, x)?),
            Some(reduce_to(&o::where_(&keep, &z, &g[0])?, hi)?),
        ])
    });
}

/// The standard normal density.
fn gauss(x: &Tensor) -> Result<Tensor, Error> {
    o::mul_s(
        &o::exp(&o::mul_s(&o::square(x)?, -0.5)?)?,
        1.0 / (2.0 * std::f64::consts::PI).sqrt(),
    )
}

fn and(a: &Tensor, b: &Tensor) -> Result<Tensor, Error> {
    o::call1("aten::logical_and", vec![o::tv(a), o::tv(b)])
}

fn cj(t: &Tensor) -> Result<Tensor, Error> {
    if t.dtype().is_complex() {
        o::conj(t)
    } else {
        Ok(t.clone())
    }
}

fn div_grad(c: &Ctx, g: &[Tensor]) -> R {
    let (a, b) = (c.t(0)?, c.t(1)?);
    let ga = o::div(&g[0], &cj(b)?)?;
    let gb = o::neg(&o::mul(&g[0], &cj(&o::div(a, &o::square(b)?)?)?)?)?;
    Ok(vec![Some(reduce_to(&ga, a)?), Some(reduce_to(&gb, b)?)])
}

/// Gradient of elementwise max/min (`maximum`: split evenly on ties; `fmax`: ties and a NaN
/// `other` go to `self`).
fn minmax_grad(c: &Ctx, g: &[Tensor], max: bool, nan_aware: bool) -> R {
    let (a, b) = (c.t(0)?, c.t(1)?);
    let z = o::zeros_like(&g[0])?;
    if nan_aware {
        let keep = if max { o::ge(a, b)? } else { o::le(a, b)? };
        let keep = o::call1("aten::logical_or", vec![o::tv(&keep), o::tv(&o::isnan(b)?)])?;
        let ga = o::where_(&keep, &g[0], &z)?;
        let gb = o::where_(&keep, &z, &g[0])?;
        return Ok(vec![Some(reduce_to(&ga, a)?), Some(reduce_to(&gb, b)?)]);
    }
    let (la, lb) = if max {
        (o::lt(a, b)?, o::gt(a, b)?)
    } else {
        (o::gt(a, b)?, o::lt(a, b)?)
    };
    let base = o::where_(&o::eq(a, b)?, &o::mul_s(&g[0], 0.5)?, &g[0])?;
    let ga = o::where_(&la, &z, &base)?;
    let gb = o::where_(&lb, &z, &base)?;
    Ok(vec![Some(reduce_to(&ga, a)?), Some(reduce_to(&gb, b)?)])
}
