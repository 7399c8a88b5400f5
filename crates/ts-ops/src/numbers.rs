//! TorchScript's operators on Python numbers (`int`, `float`, `bool`, `complex`, `Scalar`), with
//! Python semantics where TorchScript has them (floor division and modulo on negatives, int
//! `**` giving float) and PyTorch's own where it differs (`1.0 / 0.0` is `inf`).
//!
//! Each operator is implemented once over [`Num`] and registered under every PyTorch overload
//! of its name whose arguments are all numbers (`add.int`, `add.float`, `add.int_float`,
//! `add.Scalar_Scalar`, ...); the result is converted to the overload's declared return type.

use std::sync::Arc;

use ts_core::{FunctionSchema, IValue, Type};
use ts_tensor::{Error, ErrorKind};

use crate::registry::{op, Registry, Stack};
use crate::schema_table::overload_lines;
use crate::stack::pop_n;

/// A Python number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    I(i64),
    F(f64),
    C(f64, f64),
}

impl Num {
    /// Reads a number (bools are ints).
    pub fn from_ivalue(v: &IValue) -> Result<Num, Error> {
        match v {
            IValue::Int(i) => Ok(Num::I(*i)),
            IValue::Bool(b) => Ok(Num::I(*b as i64)),
            IValue::Double(d) => Ok(Num::F(*d)),
            IValue::Complex(c) => Ok(Num::C(c.0, c.1)),
            other => Err(Error::runtime(format!(
                "Expected a number but got '{}'",
                other.tag_name()
            ))),
        }
    }

    /// As f64 (complex: the real part).
    pub fn f(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::F(f) => f,
            Num::C(r, _) => r,
        }
    }

    fn c(self) -> (f64, f64) {
        match self {
            Num::C(r, i) => (r, i),
            other => (other.f(), 0.0),
        }
    }

    fn to_ivalue(self) -> IValue {
        match self {
            Num::I(i) => IValue::Int(i),
            Num::F(f) => IValue::Double(f),
            Num::C(r, i) => IValue::complex(r, i),
        }
    }
}

fn is_numeric(t: &Type) -> bool {
    matches!(
        t,
        Type::Int
            | Type::SymInt
            | Type::Float
            | Type::SymFloat
            | Type::Complex
            | Type::Number
            | Type::Bool
    )
}

/// Converts a result to the declared return type.
fn coerce(n: Num, ret: &Type) -> Result<IValue, Error> {
    Ok(match (ret, n) {
        (Type::Float | Type::SymFloat, Num::I(i)) => IValue::Double(i as f64),
        (Type::Float | Type::SymFloat, Num::C(r, _)) => IValue::Double(r),
        (Type::Int | Type::SymInt, Num::F(f)) => IValue::Int(f as i64),
        (Type::Bool, n) => IValue::Bool(n.f() != 0.0),
        (Type::Complex, Num::I(_) | Num::F(_)) => IValue::complex(n.f(), 0.0),
        (_, n) => n.to_ivalue(),
    })
}

fn div_zero() -> Error {
    Error::new(ErrorKind::ZeroDivisionError, "division by 0")
}

/// Python floor division on ints.
pub fn floordiv_i(a: i64, b: i64) -> Result<i64, Error> {
    floordiv_i_nonzero(a, b).ok_or_else(div_zero)
}

/// Python floor division on ints; `None` for a zero divisor.
#[inline]
pub fn floordiv_i_nonzero(a: i64, b: i64) -> Option<i64> {
    if b == 0 {
        return None;
    }
    // Wrapping: `i64::MIN // -1` wraps as int64 arithmetic does instead of panicking.
    let q = a.wrapping_div(b);
    Some(if (a.wrapping_rem(b) != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

/// Python modulo on ints (sign of the divisor).
pub fn mod_i(a: i64, b: i64) -> Result<i64, Error> {
    mod_i_nonzero(a, b).ok_or_else(|| {
        Error::new(
            ErrorKind::ZeroDivisionError,
            "integer division or modulo by zero",
        )
    })
}

/// Python modulo on ints; `None` for a zero divisor.
#[inline]
pub fn mod_i_nonzero(a: i64, b: i64) -> Option<i64> {
    if b == 0 {
        return None;
    }
    let r = a.wrapping_rem(b);
    Some(if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    })
}

/// Python modulo on floats (sign of the divisor).
#[inline]
pub fn mod_f(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r != 0.0 && ((r < 0.0) != (b < 0.0)) {
        r + b
    } else {
        r
    }
}

/// Python floor division on floats (PyTorch gives inf/nan for a zero divisor).
#[inline]
pub fn floordiv_f(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        return a / b;
    }
    ((a - mod_f(a, b)) / b).round()
}

fn cmul(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

fn cdiv(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    let d = b.0 * b.0 + b.1 * b.1;
    ((a.0 * b.0 + a.1 * b.1) / d, (a.1 * b.0 - a.0 * b.1) / d)
}

type BinFn = fn(Num, Num) -> Result<Num, Error>;
type ComplexFn = fn((f64, f64), (f64, f64)) -> (f64, f64);
type NumFn = Arc<dyn Fn(&[Num]) -> Result<Num, Error> + Send + Sync>;
type UnFn = fn(Num) -> Result<Num, Error>;

fn arith(
    a: Num,
    b: Num,
    fi: fn(i64, i64) -> Result<Num, Error>,
    ff: fn(f64, f64) -> f64,
    fc: Option<ComplexFn>,
) -> Result<Num, Error> {
    match (a, b) {
        (Num::I(x), Num::I(y)) => fi(x, y),
        (Num::C(..), _) | (_, Num::C(..)) => match fc {
            Some(f) => {
                let (r, i) = f(a.c(), b.c());
                Ok(Num::C(r, i))
            }
            None => Err(Error::runtime(
                "operation not supported for complex numbers",
            )),
        },
        _ => Ok(Num::F(ff(a.f(), b.f()))),
    }
}

fn add(a: Num, b: Num) -> Result<Num, Error> {
    arith(
        a,
        b,
        |x, y| Ok(Num::I(x.wrapping_add(y))),
        |x, y| x + y,
        Some(|a, b| (a.0 + b.0, a.1 + b.1)),
    )
}
fn sub(a: Num, b: Num) -> Result<Num, Error> {
    arith(
        a,
        b,
        |x, y| Ok(Num::I(x.wrapping_sub(y))),
        |x, y| x - y,
        Some(|a, b| (a.0 - b.0, a.1 - b.1)),
    )
}
fn mul(a: Num, b: Num) -> Result<Num, Error> {
    arith(
        a,
        b,
        |x, y| Ok(Num::I(x.wrapping_mul(y))),
        |x, y| x * y,
        Some(cmul),
    )
}
fn div(a: Num, b: Num) -> Result<Num, Error> {
    // True division always gives a float; a zero divisor gives inf/nan as in PyTorch.
    arith(
        a,
        b,
        |x, y| Ok(Num::F(x as f64 / y as f64)),
        |x, y| x / y,
        Some(cdiv),
    )
}
fn floordiv(a: Num, b: Num) -> Result<Num, Error> {
    arith(a, b, |x, y| floordiv_i(x, y).map(Num::I), floordiv_f, None)
}
fn remainder(a: Num, b: Num) -> Result<Num, Error> {
    arith(a, b, |x, y| mod_i(x, y).map(Num::I), mod_f, None)
}
fn fmod(a: Num, b: Num) -> Result<Num, Error> {
    arith(
        a,
        b,
        |x, y| {
            if y == 0 {
                Err(div_zero())
            } else {
                Ok(Num::F(x.wrapping_rem(y) as f64))
            }
        },
        |x, y| x % y,
        None,
    )
}
fn pow(a: Num, b: Num) -> Result<Num, Error> {
    match (a, b) {
        (Num::C(..), _) | (_, Num::C(..)) => {
            let (ar, ai) = a.c();
            let (br, bi) = b.c();
            let (ln_r, th) = ((ar * ar + ai * ai).sqrt().ln(), ai.atan2(ar));
            let (er, ei) = (br * ln_r - bi * th, bi * ln_r + br * th);
            Ok(Num::C(er.exp() * ei.cos(), er.exp() * ei.sin()))
        }
        _ => {
            if a.f() == 0.0 && b.f() < 0.0 {
                return Err(Error::runtime("0.0 cannot be raised to a negative power"));
            }
            Ok(Num::F(a.f().powf(b.f())))
        }
    }
}
fn minimum(a: Num, b: Num) -> Result<Num, Error> {
    Ok(match (a, b) {
        (Num::I(x), Num::I(y)) => Num::I(x.min(y)),
        _ => {
            let (x, y) = (a.f(), b.f());
            Num::F(if x.is_nan() || y.is_nan() {
                f64::NAN
            } else {
                x.min(y)
            })
        }
    })
}
fn maximum(a: Num, b: Num) -> Result<Num, Error> {
    Ok(match (a, b) {
        (Num::I(x), Num::I(y)) => Num::I(x.max(y)),
        _ => {
            let (x, y) = (a.f(), b.f());
            Num::F(if x.is_nan() || y.is_nan() {
                f64::NAN
            } else {
                x.max(y)
            })
        }
    })
}

fn cmp(
    a: Num,
    b: Num,
    fi: fn(&i64, &i64) -> bool,
    ff: fn(&f64, &f64) -> bool,
) -> Result<Num, Error> {
    Ok(Num::I(match (a, b) {
        (Num::I(x), Num::I(y)) => fi(&x, &y),
        (Num::C(..), _) | (_, Num::C(..)) => {
            return Err(Error::runtime("'<' not supported between complex numbers"));
        }
        _ => ff(&a.f(), &b.f()),
    } as i64))
}

fn eq(a: Num, b: Num) -> Result<Num, Error> {
    Ok(Num::I(match (a, b) {
        (Num::I(x), Num::I(y)) => x == y,
        (Num::C(..), _) | (_, Num::C(..)) => a.c() == b.c(),
        _ => a.f() == b.f(),
    } as i64))
}

fn bitop(a: Num, b: Num, f: fn(i64, i64) -> i64) -> Result<Num, Error> {
    match (a, b) {
        (Num::I(x), Num::I(y)) => Ok(Num::I(f(x, y))),
        _ => Err(Error::runtime("bitwise operations need integers")),
    }
}

fn float_fn(f: fn(f64) -> f64) -> impl Fn(Num) -> Result<Num, Error> {
    move |a| Ok(Num::F(f(a.f())))
}

fn register_family(r: &Registry, name: &str, arity: usize, f: NumFn) {
    assert!(arity <= 2, "number operators take one or two operands");
    for line in overload_lines(name) {
        let Ok(schema) = FunctionSchema::parse(line) else {
            continue;
        };
        if schema.arguments.len() != arity
            || schema.is_vararg
            || schema.returns.len() != 1
            || !schema.arguments.iter().all(|a| is_numeric(&a.ty))
            || !is_numeric(&schema.returns[0].ty)
        {
            continue;
        }
        let ret = schema.returns[0].ty.clone();
        let f = f.clone();
        r.register_schema(
            schema,
            op(move |s: &mut Stack| {
                // Read the operands in place: no allocation on the interpreter's hottest path.
                let base = s.len().checked_sub(arity).ok_or_else(|| {
                    Error::runtime("internal error: the interpreter stack has too few values")
                })?;
                let mut nums = [Num::I(0); 2];
                for (slot, v) in nums.iter_mut().zip(&s[base..]) {
                    *slot = Num::from_ivalue(v)?;
                }
                s.truncate(base);
                let out = f(&nums[..arity])?;
                s.push(coerce(out, &ret)?);
                Ok(())
            }),
        );
    }
}

fn bin(r: &Registry, name: &str, f: BinFn) {
    register_family(r, name, 2, Arc::new(move |n: &[Num]| f(n[0], n[1])));
}

fn un(r: &Registry, name: &str, f: UnFn) {
    register_family(r, name, 1, Arc::new(move |n: &[Num]| f(n[0])));
}

fn un_float(r: &Registry, name: &str, f: fn(f64) -> f64) {
    let g = float_fn(f);
    register_family(r, name, 1, Arc::new(move |n: &[Num]| g(n[0])));
}

fn gcd(mut a: i64, mut b: i64) -> i64 {
    while b != 0 {
        let t = a.wrapping_rem(b);
        a = b;
        b = t;
    }
    a.abs()
}

/// Registers the number operators.
pub fn register(r: &Registry) {
    bin(r, "aten::add", add);
    bin(r, "aten::sub", sub);
    bin(r, "aten::mul", mul);
    bin(r, "aten::div", div);
    bin(r, "aten::floordiv", floordiv);
    bin(r, "aten::remainder", remainder);
    bin(r, "aten::fmod", fmod);
    bin(r, "aten::pow", pow);
    bin(r, "aten::min", minimum);
    bin(r, "aten::max", maximum);
    bin(r, "aten::eq", eq);
    bin(r, "aten::ne", |a, b| {
        eq(a, b).map(|n| Num::I((n == Num::I(0)) as i64))
    });
    bin(r, "aten::lt", |a, b| cmp(a, b, i64::lt, f64::lt));
    bin(r, "aten::le", |a, b| cmp(a, b, i64::le, f64::le));
    bin(r, "aten::gt", |a, b| cmp(a, b, i64::gt, f64::gt));
    bin(r, "aten::ge", |a, b| cmp(a, b, i64::ge, f64::ge));
    bin(r, "aten::__and__", |a, b| bitop(a, b, |x, y| x & y));
    bin(r, "aten::__or__", |a, b| bitop(a, b, |x, y| x | y));
    bin(r, "aten::__xor__", |a, b| bitop(a, b, |x, y| x ^ y));
    bin(r, "aten::__lshift__", |a, b| {
        bitop(a, b, |x, y| x.wrapping_shl(y as u32))
    });
    bin(r, "aten::__rshift__", |a, b| {
        bitop(a, b, |x, y| x.wrapping_shr(y as u32))
    });
    bin(r, "aten::__round_to_zero_floordiv", |a, b| match (a, b) {
        (Num::I(_), Num::I(0)) => Err(div_zero()),
        (Num::I(x), Num::I(y)) => Ok(Num::I(x.wrapping_div(y))),
        _ => Ok(Num::F((a.f() / b.f()).trunc())),
    });
    bin(r, "aten::atan2", |a, b| Ok(Num::F(a.f().atan2(b.f()))));
    bin(r, "aten::copysign", |a, b| {
        Ok(Num::F(a.f().copysign(b.f())))
    });
    bin(r, "aten::mathremainder", |a, b| {
        let (x, y) = (a.f(), b.f());
        Ok(Num::F(x - (x / y).round_ties_even() * y))
    });
    bin(r, "aten::gcd", |a, b| match (a, b) {
        (Num::I(x), Num::I(y)) => Ok(Num::I(gcd(x, y))),
        _ => Err(Error::runtime("gcd needs integers")),
    });
    bin(r, "aten::log", |a, b| Ok(Num::F(a.f().ln() / b.f().ln())));
    bin(r, "aten::ldexp", |a, b| {
        Ok(Num::F(a.f() * 2f64.powi(b.f() as i32)))
    });
    un(r, "aten::neg", |a| {
        Ok(match a {
            Num::I(i) => Num::I(i.wrapping_neg()),
            Num::F(f) => Num::F(-f),
            Num::C(x, y) => Num::C(-x, -y),
        })
    });
    un(r, "aten::abs", |a| {
        Ok(match a {
            Num::I(i) => Num::I(i.wrapping_abs()),
            Num::F(f) => Num::F(f.abs()),
            Num::C(x, y) => Num::F((x * x + y * y).sqrt()),
        })
    });
    un(r, "aten::floor", |a| {
        Ok(match a {
            Num::I(i) => Num::I(i),
            other => Num::I(other.f().floor() as i64),
        })
    });
    un(r, "aten::ceil", |a| {
        Ok(match a {
            Num::I(i) => Num::I(i),
            other => Num::I(other.f().ceil() as i64),
        })
    });
    un(r, "aten::factorial", |a| match a {
        Num::I(i) if i < 0 => Err(Error::runtime(
            "factorial() not defined for negative values",
        )),
        Num::I(i) => Ok(Num::I((1..=i).fold(1i64, |acc, x| acc.wrapping_mul(x)))),
        _ => Err(Error::runtime("factorial() only accepts integral values")),
    });
    un(r, "aten::sqrt", |a| Ok(Num::F(a.f().sqrt())));
    un_float(r, "aten::exp", f64::exp);
    un_float(r, "aten::expm1", f64::exp_m1);
    un_float(r, "aten::log10", f64::log10);
    un_float(r, "aten::log1p", f64::ln_1p);
    un_float(r, "aten::sin", f64::sin);
    un_float(r, "aten::cos", f64::cos);
    un_float(r, "aten::tan", f64::tan);
    un_float(r, "aten::asin", f64::asin);
    un_float(r, "aten::acos", f64::acos);
    un_float(r, "aten::atan", f64::atan);
    un_float(r, "aten::sinh", f64::sinh);
    un_float(r, "aten::cosh", f64::cosh);
    un_float(r, "aten::tanh", f64::tanh);
    un_float(r, "aten::asinh", f64::asinh);
    un_float(r, "aten::acosh", f64::acosh);
    un_float(r, "aten::atanh", f64::atanh);
    un_float(r, "aten::fabs", f64::abs);
    un_float(r, "aten::erf", libm_erf);
    un_float(r, "aten::erfc", libm_erfc);
    un_float(r, "aten::gamma", libm_gamma);
    un_float(r, "aten::lgamma", libm_lgamma);
    un_float(r, "aten::degrees", f64::to_degrees);
    un_float(r, "aten::radians", f64::to_radians);
    un_float(r, "aten::round", f64::round_ties_even);
    un_float(r, "aten::trunc", f64::trunc);
    un(r, "aten::isnan", |a| Ok(Num::I(a.f().is_nan() as i64)));
    un(r, "aten::isinf", |a| Ok(Num::I(a.f().is_infinite() as i64)));
    un(r, "aten::isfinite", |a| {
        Ok(Num::I(a.f().is_finite() as i64))
    });
    register_log(r);
    for &(name, fast) in crate::fast::SCALAR_OPS {
        if name != "aten::__not__" {
            r.set_scalar_op(name, fast);
        }
    }
}

fn register_log(r: &Registry) {
    // One-argument `log` (natural log); the two-argument overloads are registered above.
    un_float(r, "aten::log", f64::ln);
}

fn libm_erf(x: f64) -> f64 {
    libm::erf(x)
}
fn libm_erfc(x: f64) -> f64 {
    libm::erfc(x)
}
fn libm_gamma(x: f64) -> f64 {
    gamma(x)
}
fn libm_lgamma(x: f64) -> f64 {
    lgamma(x)
}

/// Gamma function (Lanczos approximation; exact enough for `math.gamma`).
fn gamma(x: f64) -> f64 {
    if x < 0.5 {
        std::f64::consts::PI / ((std::f64::consts::PI * x).sin() * gamma(1.0 - x))
    } else {
        lgamma(x).exp()
    }
}

/// Log of |Gamma(x)| (Lanczos, g = 7).
fn lgamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let s = (std::f64::consts::PI * x).sin().abs();
        return std::f64::consts::PI.ln() - s.ln() - lgamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Python's `divmod` on ints (floored quotient, remainder with the divisor's sign).
fn divmod_int(a: i64, b: i64) -> Result<(i64, i64), Error> {
    if b == 0 {
        return Err(Error::new(
            ErrorKind::ZeroDivisionError,
            "integer divmod by zero",
        ));
    }
    let (q, r) = (a.wrapping_div(b), a.wrapping_rem(b));
    Ok(if r != 0 && ((a < 0) != (b < 0)) {
        (q - 1, r + b)
    } else {
        (q, r)
    })
}

/// PyTorch's float `divmod`: `rem = fmod(a, b)` moved to the divisor's sign, `(a - rem) / b`.
fn divmod_float(a: f64, b: f64) -> Result<(f64, f64), Error> {
    if b == 0.0 {
        return Err(Error::new(ErrorKind::ZeroDivisionError, "float divmod()"));
    }
    let mut rem = a % b;
    if rem != 0.0 && ((a < 0.0) != (b < 0.0)) {
        rem += b;
    }
    Ok(((a - rem) / b, rem))
}

/// The number operators with two results: `divmod`, `math.modf`, `math.frexp`.
pub fn register_pairs(r: &Registry) {
    for line in overload_lines("aten::divmod") {
        let _ = r.register(
            line,
            op(|s: &mut Stack| {
                let args = pop_n(s, 2)?;
                match (&args[0], &args[1]) {
                    (IValue::Int(a), IValue::Int(b)) => {
                        let (q, m) = divmod_int(*a, *b)?;
                        s.push(IValue::Int(q));
                        s.push(IValue::Int(m));
                    }
                    (a, b) => {
                        let (a, b) = (Num::from_ivalue(a)?.f(), Num::from_ivalue(b)?.f());
                        let (q, m) = divmod_float(a, b)?;
                        s.push(IValue::Double(q));
                        s.push(IValue::Double(m));
                    }
                }
                Ok(())
            }),
        );
    }
    let _ = r.register_pt(
        "aten::modf",
        op(|s: &mut Stack| {
            let a = Num::from_ivalue(&pop_n(s, 1)?[0])?.f();
            let int = a.trunc();
            // The fractional part keeps the sign (and is 0 for infinities).
            let frac = if a.is_infinite() {
                0f64.copysign(a)
            } else {
                a - int
            };
            s.push(IValue::Double(frac));
            s.push(IValue::Double(int));
            Ok(())
        }),
    );
    let _ = r.register_pt(
        "aten::frexp",
        op(|s: &mut Stack| {
            let a = Num::from_ivalue(&pop_n(s, 1)?[0])?.f();
            let (m, e) = libm::frexp(a);
            s.push(IValue::Double(m));
            s.push(IValue::Int(e as i64));
            Ok(())
        }),
    );
}

/// `prim::min`/`prim::max` on numbers (the builtins `min(a, b)`/`max(a, b)`).
pub fn register_prim_minmax(r: &Registry) {
    bin(r, "prim::min", minimum);
    bin(r, "prim::max", maximum);
    un(r, "prim::abs", |a| {
        Ok(match a {
            Num::I(i) => Num::I(i.wrapping_abs()),
            Num::F(f) => Num::F(f.abs()),
            Num::C(x, y) => Num::F((x * x + y * y).sqrt()),
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::registry;

    fn call(name: &str, args: Vec<IValue>) -> Result<IValue, Error> {
        let o = registry()
            .find(name)
            .unwrap_or_else(|| panic!("{name} not registered"));
        let crate::registry::OperatorKind::Op(f) = &o.kind else {
            panic!()
        };
        let mut s = args;
        f(&mut s)?;
        Ok(s.pop().unwrap())
    }

    /// Runs `name` and returns the whole stack it leaves (for operators with several results).
    fn call_all(name: &str, args: Vec<IValue>) -> Result<Vec<IValue>, Error> {
        let o = registry()
            .find(name)
            .unwrap_or_else(|| panic!("{name} not registered"));
        let crate::registry::OperatorKind::Op(f) = &o.kind else {
            panic!()
        };
        let mut s = args;
        f(&mut s)?;
        Ok(s)
    }

    #[test]
    fn two_result_operators() {
        let show = |v: Vec<IValue>| {
            v.iter()
                .map(|x| x.to_display_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (i, d) = (IValue::Int, IValue::Double);
        // Python: divmod(7, 3) == (2, 1), divmod(-7, 3) == (-3, 2), divmod(7, -3) == (-3, -2),
        // divmod(7.5, 2.0) == (3.0, 1.5), divmod(-7.5, 2) == (-4.0, 0.5).
        assert_eq!(
            show(call_all("aten::divmod.int", vec![i(7), i(3)]).unwrap()),
            "2, 1"
        );
        assert_eq!(
            show(call_all("aten::divmod.int", vec![i(-7), i(3)]).unwrap()),
            "-3, 2"
        );
        assert_eq!(
            show(call_all("aten::divmod.int", vec![i(7), i(-3)]).unwrap()),
            "-3, -2"
        );
        assert_eq!(
            show(call_all("aten::divmod.float", vec![d(7.5), d(2.0)]).unwrap()),
            "3., 1.5"
        );
        assert_eq!(
            show(call_all("aten::divmod.float_int", vec![d(-7.5), i(2)]).unwrap()),
            "-4., 0.5"
        );
        let e = call_all("aten::divmod.int", vec![i(1), i(0)]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::ZeroDivisionError);
        let e = call_all("aten::divmod.float", vec![d(1.0), d(0.0)]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::ZeroDivisionError);
        // math.modf(2.5) == (0.5, 2.0), math.modf(-1.25) == (-0.25, -1.0);
        // math.frexp(8.0) == (0.5, 4), math.frexp(0.0) == (0.0, 0), math.frexp(-3.0) == (-0.75, 2).
        assert_eq!(
            show(call_all("aten::modf", vec![d(2.5)]).unwrap()),
            "0.5, 2."
        );
        assert_eq!(
            show(call_all("aten::modf", vec![d(-1.25)]).unwrap()),
            "-0.25, -1."
        );
        assert_eq!(
            show(call_all("aten::frexp", vec![d(8.0)]).unwrap()),
            "0.5, 4"
        );
        assert_eq!(
            show(call_all("aten::frexp", vec![d(0.0)]).unwrap()),
            "0., 0"
        );
        assert_eq!(
            show(call_all("aten::frexp", vec![d(-3.0)]).unwrap()),
            "-0.75, 2"
        );
    }

    #[test]
    fn python_semantics() {
        // Expected values from a scripted function in PyTorch 2.15:
        // (-7) // 2 == -4, (-7) % 2 == 1, 7 % -2 == -1, -7.5 // 2 == -4.0, -7.5 % 2 == 0.5,
        // 7 / 2 == 3.5, 7 ** 2 == 49.0, 1.0 / 0.0 == inf.
        assert_eq!(
            call("aten::floordiv.int", vec![IValue::Int(-7), IValue::Int(2)])
                .unwrap()
                .as_int(),
            Some(-4)
        );
        assert_eq!(
            call("aten::remainder.int", vec![IValue::Int(-7), IValue::Int(2)])
                .unwrap()
                .as_int(),
            Some(1)
        );
        assert_eq!(
            call("aten::remainder.int", vec![IValue::Int(7), IValue::Int(-2)])
                .unwrap()
                .as_int(),
            Some(-1)
        );
        assert_eq!(
            call(
                "aten::floordiv.float_int",
                vec![IValue::Double(-7.5), IValue::Int(2)]
            )
            .unwrap()
            .as_double(),
            Some(-4.0)
        );
        assert_eq!(
            call(
                "aten::remainder.float_int",
                vec![IValue::Double(-7.5), IValue::Int(2)]
            )
            .unwrap()
            .as_double(),
            Some(0.5)
        );
        assert_eq!(
            call("aten::div.int", vec![IValue::Int(7), IValue::Int(2)])
                .unwrap()
                .as_double(),
            Some(3.5)
        );
        assert_eq!(
            call("aten::pow.int", vec![IValue::Int(7), IValue::Int(2)])
                .unwrap()
                .as_double(),
            Some(49.0)
        );
        assert_eq!(
            call(
                "aten::div.float",
                vec![IValue::Double(1.0), IValue::Double(0.0)]
            )
            .unwrap()
            .as_double(),
            Some(f64::INFINITY)
        );
        assert_eq!(
            call("aten::add.int", vec![IValue::Int(i64::MAX), IValue::Int(1)])
                .unwrap()
                .as_int(),
            Some(i64::MIN)
        );
        assert_eq!(
            call("aten::add", vec![IValue::Int(1), IValue::Double(0.5)])
                .unwrap()
                .as_double(),
            Some(1.5)
        );
        assert_eq!(
            call(
                "aten::lt.int_float",
                vec![IValue::Int(1), IValue::Double(1.5)]
            )
            .unwrap()
            .as_bool(),
            Some(true)
        );
        assert_eq!(
            call("aten::floor.float", vec![IValue::Double(-1.5)])
                .unwrap()
                .as_int(),
            Some(-2)
        );
    }

    #[test]
    fn errors() {
        let e = call("aten::floordiv.int", vec![IValue::Int(1), IValue::Int(0)]).unwrap_err();
        assert_eq!(e.message, "division by 0");
        assert!(call("aten::remainder.int", vec![IValue::Int(1), IValue::Int(0)]).is_err());
        let e = call("aten::pow.int", vec![IValue::Int(0), IValue::Int(-1)]).unwrap_err();
        assert_eq!(e.message, "0.0 cannot be raised to a negative power");
    }

    #[test]
    fn math_functions() {
        assert!((lgamma(5.0) - 24f64.ln()).abs() < 1e-10);
        assert!((gamma(0.5) - std::f64::consts::PI.sqrt()).abs() < 1e-10);
    }
}
