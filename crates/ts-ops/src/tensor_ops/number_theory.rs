//! Elementwise operators on the numbers themselves: `gcd`, `lcm`, `nextafter`, `float_power`,
//! the `Scalar_Tensor` overloads of the bitwise operators and `isin`.
//!
//! `gcd`/`lcm` and `nextafter` broadcast their operands and compute on host values (i64, or
//! f32/f64 bit patterns for `nextafter`); `float_power` computes in double (complex double
//! when an operand is complex), as PyTorch defines it.

use std::collections::HashSet;

use ts_tensor::promote::{promote_types, scalar_tensor_dtype};
use ts_tensor::shape::broadcast_shapes;
use ts_tensor::{DType, Error, Scalar, Tensor};

use super::def;
use crate::registry::Registry;

fn not_for(kernel: &str, dt: DType) -> Error {
    Error::runtime(format!(
        "\"{kernel}\" not implemented for '{}'",
        dt.scalar_type_name()
    ))
}

/// Both operands broadcast to their common shape, with the promoted dtype.
fn broadcast_pair(a: &Tensor, b: &Tensor) -> Result<(Tensor, Tensor, DType), Error> {
    let shape = broadcast_shapes(&a.sizes(), &b.sizes())?;
    let dt = ts_tensor::promote::try_result_type(&[
        ts_tensor::Operand::Tensor(a),
        ts_tensor::Operand::Tensor(b),
    ])?;
    Ok((a.expand(&shape, false)?, b.expand(&shape, false)?, dt))
}

fn gcd_i64(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as i64
}

fn integer_binary(
    name: &str,
    a: &Tensor,
    b: &Tensor,
    f: fn(i64, i64) -> i64,
) -> Result<Tensor, Error> {
    let (x, y, dt) = broadcast_pair(a, b)?;
    if !dt.is_integral() || dt == DType::Bool {
        return Err(not_for(name, dt));
    }
    let vals: Vec<i64> = x
        .to_vec::<i64>()
        .into_iter()
        .zip(y.to_vec::<i64>())
        .map(|(p, q)| f(p, q))
        .collect();
    Tensor::from_vec(vals, &x.sizes())?.to_dtype(dt, false)
}

fn gcd(a: &Tensor, b: &Tensor) -> Result<Tensor, Error> {
    integer_binary("gcd_cpu", a, b, gcd_i64)
}

fn lcm(a: &Tensor, b: &Tensor) -> Result<Tensor, Error> {
    integer_binary("lcm_cpu", a, b, |p, q| {
        let g = gcd_i64(p, q);
        if g == 0 {
            0
        } else {
            (p / g).wrapping_mul(q).wrapping_abs()
        }
    })
}

fn next_after_f64(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else if x == y {
        y
    } else if y > x {
        x.next_up()
    } else {
        x.next_down()
    }
}

fn next_after_f32(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        f32::NAN
    } else if x == y {
        y
    } else if y > x {
        x.next_up()
    } else {
        x.next_down()
    }
}

fn nextafter(a: &Tensor, b: &Tensor) -> Result<Tensor, Error> {
    let (x, y, dt) = broadcast_pair(a, b)?;
    match dt {
        DType::Float64 => {
            let v: Vec<f64> = x
                .to_vec::<f64>()
                .into_iter()
                .zip(y.to_vec::<f64>())
                .map(|(p, q)| next_after_f64(p, q))
                .collect();
            Tensor::from_vec(v, &x.sizes())
        }
        DType::Float32 => {
            let v: Vec<f32> = x
                .to_vec::<f32>()
                .into_iter()
                .zip(y.to_vec::<f32>())
                .map(|(p, q)| next_after_f32(p, q))
                .collect();
            Tensor::from_vec(v, &x.sizes())
        }
        d => Err(not_for("nextafter_cpu", d)),
    }
}

/// The dtype `float_power` computes in: complex double if an operand is complex, else double.
fn float_power_dtype(complex: bool) -> DType {
    if complex {
        DType::Complex128
    } else {
        DType::Float64
    }
}

fn scalar_is_complex(s: &Scalar) -> bool {
    scalar_tensor_dtype(*s).is_complex()
}

fn float_power(base: &Tensor, exponent: &Tensor) -> Result<Tensor, Error> {
    let dt = float_power_dtype(base.dtype().is_complex() || exponent.dtype().is_complex());
    base.to_dtype(dt, false)?
        .pow(&exponent.to_dtype(dt, false)?)
}

fn float_power_scalar(base: &Tensor, exponent: Scalar) -> Result<Tensor, Error> {
    let dt = float_power_dtype(base.dtype().is_complex() || scalar_is_complex(&exponent));
    base.to_dtype(dt, false)?.pow_scalar(exponent)
}

fn float_power_base(base: Scalar, exponent: &Tensor) -> Result<Tensor, Error> {
    let dt = float_power_dtype(exponent.dtype().is_complex() || scalar_is_complex(&base));
    Tensor::pow_scalar_base(base, &exponent.to_dtype(dt, false)?)?.to_dtype(dt, false)
}

/// `float_power_`: `self` must already have the dtype of the result.
fn float_power_in_place(x: &Tensor, result: Tensor) -> Result<Tensor, Error> {
    if x.dtype() != result.dtype() {
        return Err(Error::runtime(format!(
            "the base given to float_power_ has dtype {} but the operation's result requires dtype {}",
            x.dtype().scalar_type_name(),
            result.dtype().scalar_type_name()
        )));
    }
    x.copy_(&result)?;
    Ok(x.clone())
}

/// A Python number as the 0-dim tensor PyTorch wraps it in for a `Scalar self` overload.
fn wrapped(s: Scalar) -> Result<Tensor, Error> {
    Tensor::scalar_tensor(s, scalar_tensor_dtype(s))
}

/// The test set of `isin`, and the membership test.
enum TestSet {
    Ints(HashSet<i64>),
    Floats(Vec<f64>),
}

impl TestSet {
    fn new(t: &Tensor, dt: DType) -> TestSet {
        if dt.is_floating_point() {
            let mut v: Vec<f64> = t
                .to_vec::<f64>()
                .into_iter()
                .filter(|x| !x.is_nan())
                .collect();
            v.sort_by(f64::total_cmp);
            TestSet::Floats(v)
        } else {
            TestSet::Ints(t.to_vec::<i64>().into_iter().collect())
        }
    }

    fn contains_f64(&self, x: f64) -> bool {
        match self {
            TestSet::Floats(v) => {
                v.binary_search_by(|p| p.total_cmp(&x)).is_ok() || (x == 0.0 && v.contains(&0.0))
            }
            TestSet::Ints(_) => false,
        }
    }
}

fn isin(elements: &Tensor, test: &Tensor, invert: bool) -> Result<Tensor, Error> {
    let dt = promote_types(elements.dtype(), test.dtype());
    if dt.is_complex() {
        return Err(not_for("isin_default_cpu", dt));
    }
    let set = TestSet::new(test, dt);
    let hits: Vec<bool> = match &set {
        TestSet::Ints(s) => elements
            .to_vec::<i64>()
            .into_iter()
            .map(|x| s.contains(&x) != invert)
            .collect(),
        TestSet::Floats(_) => elements
            .to_vec::<f64>()
            .into_iter()
            .map(|x| set.contains_f64(x) != invert)
            .collect(),
    };
    Tensor::from_vec(hits, &elements.sizes())
}

/// Registers the operators of this module.
pub fn register(r: &Registry) {
    def(r, "aten::gcd", |a| gcd(a.t(0)?, a.t(1)?));
    def(r, "aten::lcm", |a| lcm(a.t(0)?, a.t(1)?));
    def(r, "aten::nextafter", |a| nextafter(a.t(0)?, a.t(1)?));
    def(r, "aten::float_power.Tensor_Tensor", |a| {
        float_power(a.t(0)?, a.t(1)?)
    });
    def(r, "aten::float_power.Tensor_Scalar", |a| {
        float_power_scalar(a.t(0)?, a.s(1)?)
    });
    def(r, "aten::float_power.Scalar", |a| {
        float_power_base(a.s(0)?, a.t(1)?)
    });
    def(r, "aten::float_power_.Tensor", |a| {
        let x = a.t(0)?;
        float_power_in_place(x, float_power(x, a.t(1)?)?)
    });
    def(r, "aten::float_power_.Scalar", |a| {
        let x = a.t(0)?;
        float_power_in_place(x, float_power_scalar(x, a.s(1)?)?)
    });
    def(r, "aten::bitwise_and.Scalar_Tensor", |a| {
        wrapped(a.s(0)?)?.bitwise_and(a.t(1)?)
    });
    def(r, "aten::bitwise_or.Scalar_Tensor", |a| {
        wrapped(a.s(0)?)?.bitwise_or(a.t(1)?)
    });
    def(r, "aten::bitwise_xor.Scalar_Tensor", |a| {
        wrapped(a.s(0)?)?.bitwise_xor(a.t(1)?)
    });
    def(r, "aten::bitwise_left_shift.Scalar_Tensor", |a| {
        wrapped(a.s(0)?)?.bitwise_left_shift(a.t(1)?)
    });
    def(r, "aten::bitwise_right_shift.Scalar_Tensor", |a| {
        wrapped(a.s(0)?)?.bitwise_right_shift(a.t(1)?)
    });
    def(r, "aten::isin.Tensor_Tensor", |a| {
        isin(a.t(0)?, a.t(1)?, a.b(3)?)
    });
    def(r, "aten::isin.Tensor_Scalar", |a| {
        isin(a.t(0)?, &wrapped(a.s(1)?)?, a.b(3)?)
    });
    def(r, "aten::isin.Scalar_Tensor", |a| {
        isin(&wrapped(a.s(0)?)?, a.t(1)?, a.b(3)?)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[i64]) -> Tensor {
        Tensor::from_vec(v.to_vec(), &[v.len() as i64]).unwrap()
    }

    #[test]
    fn gcd_lcm_nextafter_isin() {
        let g = gcd(&ints(&[12, -18, 0, 7]), &ints(&[8, 12, 5, 0])).unwrap();
        assert_eq!(g.to_vec::<i64>(), vec![4, 6, 5, 7]);
        let l = lcm(&ints(&[4, -6, 0]), &ints(&[6, 4, 3])).unwrap();
        assert_eq!(l.to_vec::<i64>(), vec![12, 12, 0]);
        let f = Tensor::from_vec(vec![1.0f32, 1.0], &[2]).unwrap();
        let t = Tensor::from_vec(vec![2.0f32, 0.0], &[2]).unwrap();
        let n = nextafter(&f, &t).unwrap().to_vec::<f32>();
        assert_eq!(n, vec![1.0f32.next_up(), 1.0f32.next_down()]);
        let e = gcd(&f, &t).unwrap_err();
        assert_eq!(e.message, "\"gcd_cpu\" not implemented for 'Float'");
        let m = isin(&ints(&[1, 2, 3]), &ints(&[3, 1]), false).unwrap();
        assert_eq!(m.to_vec::<bool>(), vec![true, false, true]);
    }
}
