//! Binary elementwise operations with broadcasting and type promotion: arithmetic, division
//! modes, powers, min/max, comparisons, logical and bitwise operations.
//!
//! Each op comes in five forms named after ATen: `op(&Tensor)`, `op_scalar(Scalar)` (a Python
//! number as the other operand, promoted as a wrapped number), the in-place `op_` and
//! `op_scalar_`, and `op_out(&Tensor, out)`.

// Generic comparison kernels are also instantiated for bool, where `<` is what we mean.
#![allow(clippy::bool_comparison)]

use std::sync::atomic::{AtomicBool, Ordering};

use crate::complex::Complex;
use crate::config::default_dtype;
use crate::cpu::iter::{kernel_dtype, kernels, ElementwiseIter, Out};
use crate::cpu::num::{Elem, FloatMath, IntOps, OpNum};
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::promote::{check_can_cast, try_result_type, Operand};
use crate::scalar::Scalar;
use crate::tensor::Tensor;

/// Rounding of [`Tensor::div_mode`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RoundingMode {
    /// True division (`/`).
    None,
    /// Rounds toward zero.
    Trunc,
    /// Rounds toward negative infinity (`//`).
    Floor,
}

impl RoundingMode {
    /// Parses the `rounding_mode` argument (`None`, `"trunc"`, `"floor"`).
    pub fn parse(mode: Option<&str>) -> Result<RoundingMode> {
        match mode {
            None => Ok(RoundingMode::None),
            Some("trunc") => Ok(RoundingMode::Trunc),
            Some("floor") => Ok(RoundingMode::Floor),
            Some(other) => Err(Error::runtime(format!(
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{other}'"
            ))),
        }
    }
}

/// The binary operations of this module.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum BinaryOp {
    Add(Scalar),
    Sub(Scalar),
    Mul,
    Div(RoundingMode),
    Remainder,
    Fmod,
    Pow,
    Atan2,
    Maximum,
    Minimum,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
}

/// Where an op's result goes: a new tensor, `self` (in-place), or an `out=` tensor.
#[derive(Clone, Copy)]
pub(crate) enum Dest<'a> {
    New,
    InPlace(&'a Tensor),
    Into(&'a Tensor),
}

impl<'a> Dest<'a> {
    /// The iterator output for a result of dtype `result`, checking `can_cast` for existing
    /// outputs.
    pub(crate) fn out(self, result: DType) -> Result<Out<'a>> {
        Ok(match self {
            Dest::New => Out::New(result),
            Dest::InPlace(t) => {
                check_can_cast(result, t.dtype())?;
                Out::InPlace(t)
            }
            Dest::Into(t) => {
                check_can_cast(result, t.dtype())?;
                Out::Into(t)
            }
        })
    }
}

fn operand_dtype(o: Operand<'_>) -> DType {
    match o {
        Operand::Tensor(t) => t.dtype(),
        Operand::Scalar(s) => crate::promote::scalar_dtype(s),
    }
}

fn is_comparison(op: BinaryOp) -> bool {
    use BinaryOp::*;
    matches!(
        op,
        Eq | Ne | Lt | Le | Gt | Ge | LogicalAnd | LogicalOr | LogicalXor
    )
}

fn materialize(o: Operand<'_>, dtype: DType) -> Result<Tensor> {
    match o {
        Operand::Tensor(t) => t.cast_if_needed(dtype),
        Operand::Scalar(s) => Tensor::scalar_tensor(s, dtype),
    }
}

fn zero_division() -> Error {
    Error::runtime("ZeroDivisionError")
}

/// Runs `op` on two operands into `dest`.
pub(crate) fn binary_op(
    op: BinaryOp,
    a: Operand<'_>,
    b: Operand<'_>,
    dest: Dest<'_>,
) -> Result<Tensor> {
    use BinaryOp::*;
    let (da, db) = (operand_dtype(a), operand_dtype(b));
    let common = try_result_type(&[a, b])?;
    match op {
        Sub(_) if da == DType::Bool && db == DType::Bool => {
            return Err(Error::new(
                ErrorKind::NotImplementedError,
                "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.",
            ))
        }
        Sub(_) if da == DType::Bool || db == DType::Bool => {
            return Err(Error::new(
                ErrorKind::NotImplementedError,
                "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
            ))
        }
        _ => {}
    }
    if let Add(alpha) | Sub(alpha) = op {
        if common != DType::Bool && matches!(alpha, Scalar::Bool(_)) {
            return Err(Error::runtime(
                "Boolean alpha only supported for Boolean results.",
            ));
        }
        if !common.is_floating_point() && !common.is_complex() && matches!(alpha, Scalar::Float(_))
        {
            return Err(Error::runtime(
                "For integral input tensors, argument alpha must not be a floating point number.",
            ));
        }
    }
    if op == Pow && !common.is_floating_point() && !common.is_complex() {
        if let Operand::Scalar(Scalar::Int(e)) = b {
            if e < 0 {
                return Err(Error::runtime(
                    "Integers to negative integer powers are not allowed.",
                ));
            }
        }
    }
    let compute = match op {
        Div(RoundingMode::None) | Atan2 if !common.is_floating_point() && !common.is_complex() => {
            default_dtype()
        }
        LogicalAnd | LogicalOr | LogicalXor => DType::Bool,
        _ => common,
    };
    let result = if is_comparison(op) {
        DType::Bool
    } else {
        compute
    };
    let out = dest.out(result)?;
    let compute = kernel_dtype(compute);
    let ta = materialize(a, compute)?;
    let tb = materialize(b, compute)?;
    let it = ElementwiseIter::<3>::new(out, kernel_dtype(result), &[&ta, &tb])?;
    let scalar_exp = match b {
        Operand::Scalar(s) if op == Pow => Some(s.to_f64()),
        _ => None,
    };
    run(op, &it, compute, scalar_exp)?;
    it.finish()
}

pub(crate) fn map2<A: Elem, B: Elem, O: Elem>(
    it: &ElementwiseIter<3>,
    f: impl Fn(A, B) -> O + Sync,
) {
    it.plan.run(|p, s, n| {
        // SAFETY: the iterator's operands hold O (output), A and B at the plan's strides.
        unsafe { kernels::binary::<A, B, O>(p, s, n, &f) }
    });
}

/// Like [`map2`] for kernels that can fail on an element (integer division by zero).
fn try_map2<A: Elem, B: Elem, O: Elem>(
    it: &ElementwiseIter<3>,
    f: impl Fn(A, B) -> Option<O> + Sync,
) -> Result<()> {
    let failed = AtomicBool::new(false);
    map2::<A, B, O>(it, |a, b| match f(a, b) {
        Some(v) => v,
        None => {
            failed.store(true, Ordering::Relaxed);
            O::default()
        }
    });
    if failed.load(Ordering::Relaxed) {
        return Err(zero_division());
    }
    Ok(())
}

fn run(op: BinaryOp, it: &ElementwiseIter<3>, dt: DType, scalar_exp: Option<f64>) -> Result<()> {
    use BinaryOp::*;
    match op {
        Add(alpha) => dispatch_compute_c!(dt, T => add_kernel::<T>(it, alpha, false)),
        Sub(alpha) => dispatch_compute_c!(dt, T => add_kernel::<T>(it, alpha, true)),
        Mul => {
            dispatch_compute_c!(dt, T => map2::<T, T, T>(it, |a, b| T::from_op(a.op().mul(b.op()))))
        }
        Div(RoundingMode::None) if dt.is_complex() => {
            dispatch_complex!(dt, "div_true_cpu", T => map2::<T, T, T>(it, |a, b| a / b))
        }
        Div(RoundingMode::Trunc) if dt.is_complex() => {
            return Err(Error::runtime(
                "div_trunc_cpu is not supported for complex inputs",
            ))
        }
        Div(RoundingMode::Floor) if dt.is_complex() => {
            return Err(Error::runtime(
                "div_floor_cpu is not supported for complex inputs",
            ))
        }
        Pow if dt.is_complex() => {
            if dt == DType::Complex64 {
                complex_pow::<f32>(it, scalar_exp)
            } else {
                complex_pow::<f64>(it, scalar_exp)
            }
        }
        Div(mode) => {
            if dt.is_floating_point() {
                dispatch_compute_float!(dt, "div_cpu", T => float_div::<T>(it, mode))
            } else {
                match mode {
                    RoundingMode::None => {
                        return Err(Error::runtime("internal error: integer true division"))
                    }
                    RoundingMode::Trunc => {
                        dispatch_int_or_bool(dt, "div_trunc_cpu", it, |a, b| a.truncdiv(b))?
                    }
                    RoundingMode::Floor => {
                        dispatch_int_or_bool(dt, "div_floor_cpu", it, |a, b| a.floordiv(b))?
                    }
                }
            }
        }
        Remainder => {
            if dt.is_floating_point() {
                dispatch_compute_float!(dt, "remainder_cpu", T => map2::<T, T, T>(it, |a, b| T::from_op(a.op().rem_euclid_like(b.op()))))
            } else {
                dispatch_int!(dt, "remainder_cpu", T => try_map2::<T, T, T>(it, |a, b| a.pymod(b))?)
            }
        }
        Fmod => {
            if dt.is_floating_point() {
                dispatch_compute_float!(dt, "fmod_cpu", T => map2::<T, T, T>(it, |a, b| T::from_op(a.op().fmod(b.op()))))
            } else {
                dispatch_int!(dt, "fmod_cpu", T => try_map2::<T, T, T>(it, |a, b| a.cmod(b))?)
            }
        }
        Pow => {
            if dt.is_floating_point() {
                dispatch_compute_float!(dt, "pow", T => float_pow::<T>(it, scalar_exp))
            } else if dt == DType::Bool {
                // ATen's pow(Tensor, Scalar) short-circuits exponents 0 and 1 before dispatch.
                match scalar_exp {
                    Some(1.0) => map2::<bool, bool, bool>(it, |a, _| a),
                    Some(0.0) => map2::<bool, bool, bool>(it, |_, _| true),
                    _ => return Err(crate::cpu::dispatch::not_implemented("pow", dt)),
                }
            } else {
                dispatch_int!(dt, "pow", T => map2::<T, T, T>(it, |a, b| a.ipow(b)))
            }
        }
        Atan2 => {
            dispatch_compute_float!(dt, "atan2_cpu", T => map2::<T, T, T>(it, |a, b| T::from_op(a.op().atan2(b.op()))))
        }
        Maximum => dispatch_compute!(dt, T => map2::<T, T, T>(it, |a, b| {
            let (x, y) = (a.op(), b.op());
            if x.is_nan() { a } else if y.is_nan() { b } else if x >= y { a } else { b }
        })),
        Minimum => dispatch_compute!(dt, T => map2::<T, T, T>(it, |a, b| {
            let (x, y) = (a.op(), b.op());
            if x.is_nan() { a } else if y.is_nan() { b } else if x <= y { a } else { b }
        })),
        BitAnd => bitwise(dt, "bitwise_and_cpu", it, |a, b| a & b, |a, b| a.bitand(b))?,
        BitOr => bitwise(dt, "bitwise_or_cpu", it, |a, b| a | b, |a, b| a.bitor(b))?,
        BitXor => bitwise(dt, "bitwise_xor_cpu", it, |a, b| a ^ b, |a, b| a.bitxor(b))?,
        Shl => dispatch_int!(dt, "lshift_cpu", T => map2::<T, T, T>(it, |a, b| a.shl(b))),
        Shr => dispatch_int!(dt, "rshift_cpu", T => map2::<T, T, T>(it, |a, b| a.shr(b))),
        Eq => dispatch_compute_c!(dt, T => map2::<T, T, bool>(it, |a, b| a.op() == b.op())),
        Ne => dispatch_compute_c!(dt, T => map2::<T, T, bool>(it, |a, b| a.op() != b.op())),
        Lt => dispatch_compute!(dt, T => map2::<T, T, bool>(it, |a, b| a.op() < b.op())),
        Le => dispatch_compute!(dt, T => map2::<T, T, bool>(it, |a, b| a.op() <= b.op())),
        Gt => dispatch_compute!(dt, T => map2::<T, T, bool>(it, |a, b| a.op() > b.op())),
        Ge => dispatch_compute!(dt, T => map2::<T, T, bool>(it, |a, b| a.op() >= b.op())),
        LogicalAnd => map2::<bool, bool, bool>(it, |a, b| a && b),
        LogicalOr => map2::<bool, bool, bool>(it, |a, b| a || b),
        LogicalXor => map2::<bool, bool, bool>(it, |a, b| a != b),
    }
    Ok(())
}

fn add_kernel<T: Elem>(it: &ElementwiseIter<3>, alpha: Scalar, negate: bool) {
    let one = match alpha {
        Scalar::Int(1) | Scalar::Bool(true) => true,
        Scalar::Float(f) => f == 1.0,
        _ => false,
    };
    if one && !negate {
        map2::<T, T, T>(it, |a, b| T::from_op(a.op().add(b.op())));
    } else if one {
        map2::<T, T, T>(it, |a, b| T::from_op(a.op().sub(b.op())));
    } else {
        let al = <T::Op as OpNum>::from_scalar(alpha);
        if negate {
            map2::<T, T, T>(it, move |a, b| T::from_op(a.op().sub(al.mul(b.op()))));
        } else {
            map2::<T, T, T>(it, move |a, b| T::from_op(a.op().add(al.mul(b.op()))));
        }
    }
}

fn float_div<T: Elem>(it: &ElementwiseIter<3>, mode: RoundingMode)
where
    T::Op: FloatMath,
{
    match mode {
        RoundingMode::None => map2::<T, T, T>(it, |a, b| T::from_op(a.op() / b.op())),
        RoundingMode::Trunc => map2::<T, T, T>(it, |a, b| T::from_op((a.op() / b.op()).trunc())),
        RoundingMode::Floor => map2::<T, T, T>(it, |a, b| T::from_op(floor_div(a.op(), b.op()))),
    }
}

/// Python's float `//` as ATen computes it (through `fmod`, so `inf // 1` is NaN).
pub(crate) fn floor_div<F: FloatMath>(a: F, b: F) -> F {
    if b == F::zero() {
        return a / b;
    }
    let m = a.fmod(b);
    let mut div = (a - m) / b;
    if m != F::zero() && ((b < F::zero()) != (m < F::zero())) {
        div = div - F::one();
    }
    if div != F::zero() {
        let mut fl = div.floor();
        if div - fl > F::from_f64(0.5) {
            fl = fl + F::one();
        }
        fl
    } else {
        F::zero().copysign(a / b)
    }
}

fn float_pow<T: Elem>(it: &ElementwiseIter<3>, scalar_exp: Option<f64>)
where
    T::Op: FloatMath,
{
    // ATen special-cases common scalar exponents (exact squaring, sqrt, reciprocal).
    // ATen special-cases common scalar exponents (exact squaring, sqrt, reciprocal).
    let e = scalar_exp.unwrap_or(f64::NAN);
    if e == 2.0 {
        map2::<T, T, T>(it, |a, _| T::from_op(a.op() * a.op()))
    } else if e == 3.0 {
        map2::<T, T, T>(it, |a, _| {
            let x = a.op();
            T::from_op(x * x * x)
        })
    } else if e == 0.5 {
        map2::<T, T, T>(it, |a, _| T::from_op(a.op().sqrt()))
    } else if e == -0.5 {
        map2::<T, T, T>(it, |a, _| T::from_op(<T::Op>::one() / a.op().sqrt()))
    } else if e == -1.0 {
        map2::<T, T, T>(it, |a, _| T::from_op(<T::Op>::one() / a.op()))
    } else if e == -2.0 {
        map2::<T, T, T>(it, |a, _| {
            let x = a.op();
            T::from_op(<T::Op>::one() / (x * x))
        })
    } else {
        map2::<T, T, T>(it, |a, b| T::from_op(a.op().powf(b.op())))
    }
}

/// Complex `pow` with ATen's shortcuts for the common scalar exponents.
fn complex_pow<P: crate::complex::ComplexPart>(it: &ElementwiseIter<3>, scalar_exp: Option<f64>)
where
    Complex<P>: Elem,
{
    let e = scalar_exp.unwrap_or(f64::NAN);
    if e == 2.0 {
        map2::<Complex<P>, Complex<P>, Complex<P>>(it, |a, _| a * a)
    } else if e == 3.0 {
        map2::<Complex<P>, Complex<P>, Complex<P>>(it, |a, _| a * a * a)
    } else if e == 0.5 {
        map2::<Complex<P>, Complex<P>, Complex<P>>(it, |a, _| a.sqrt())
    } else if e == -0.5 {
        map2::<Complex<P>, Complex<P>, Complex<P>>(it, |a, _| a.rsqrt())
    } else if e == -1.0 {
        map2::<Complex<P>, Complex<P>, Complex<P>>(it, |a, _| a.recip())
    } else if e == -2.0 {
        map2::<Complex<P>, Complex<P>, Complex<P>>(it, |a, _| (a * a).recip())
    } else {
        map2::<Complex<P>, Complex<P>, Complex<P>>(it, |a, b| a.powc(b))
    }
}

fn dispatch_int_or_bool(
    dt: DType,
    name: &str,
    it: &ElementwiseIter<3>,
    f: impl Fn(i64, i64) -> Option<i64> + Sync + Copy,
) -> Result<()> {
    // Division kernels are written once over i64 and narrowed, which is exact for every integer
    // dtype (wrapping matches two's complement for the one overflow case, MIN / -1).
    dispatch_int!(dt, name, T => try_map2::<T, T, T>(it, move |a, b| {
        int_binary::<T>(a, b, f)
    }))
}

fn int_binary<T: Elem + IntOps>(a: T, b: T, f: impl Fn(i64, i64) -> Option<i64>) -> Option<T> {
    f(OpNum::to_i64(a), OpNum::to_i64(b)).map(<T as OpNum>::from_i64)
}

fn bitwise(
    dt: DType,
    name: &str,
    it: &ElementwiseIter<3>,
    fb: impl Fn(bool, bool) -> bool + Sync,
    fi: impl Fn(i64, i64) -> i64 + Sync + Copy,
) -> Result<()> {
    if dt == DType::Bool {
        map2::<bool, bool, bool>(it, fb);
        return Ok(());
    }
    dispatch_int!(dt, name, T => map2::<T, T, T>(it, move |a, b| {
        <T as OpNum>::from_i64(fi(OpNum::to_i64(a), OpNum::to_i64(b)))
    }));
    Ok(())
}

macro_rules! binary_family {
    ($(#[$doc:meta])* $name:ident, $scalar:ident, $inplace:ident, $inplace_scalar:ident, $out:ident, $op:expr) => {
        impl Tensor {
            $(#[$doc])*
            pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
                binary_op($op, Operand::Tensor(self), Operand::Tensor(other), Dest::New)
            }
            #[doc = concat!("`", stringify!($name), "` with a Python number as the other operand.")]
            pub fn $scalar(&self, other: Scalar) -> Result<Tensor> {
                binary_op($op, Operand::Tensor(self), Operand::Scalar(other), Dest::New)
            }
            #[doc = concat!("In-place `", stringify!($name), "`: writes into `self`.")]
            pub fn $inplace(&self, other: &Tensor) -> Result<()> {
                binary_op($op, Operand::Tensor(self), Operand::Tensor(other), Dest::InPlace(self)).map(|_| ())
            }
            #[doc = concat!("In-place `", stringify!($name), "` with a Python number.")]
            pub fn $inplace_scalar(&self, other: Scalar) -> Result<()> {
                binary_op($op, Operand::Tensor(self), Operand::Scalar(other), Dest::InPlace(self)).map(|_| ())
            }
            #[doc = concat!("`", stringify!($name), "(..., out=out)`: resizes `out` if needed and returns it.")]
            pub fn $out(&self, other: &Tensor, out: &Tensor) -> Result<Tensor> {
                binary_op($op, Operand::Tensor(self), Operand::Tensor(other), Dest::Into(out))
            }
        }
    };
}

binary_family!(
    /// Elementwise product (`*`).
    mul, mul_scalar, mul_, mul_scalar_, mul_out, BinaryOp::Mul);
binary_family!(
    /// Python's `%`: the remainder has the sign of the divisor.
    remainder, remainder_scalar, remainder_, remainder_scalar_, remainder_out, BinaryOp::Remainder);
binary_family!(
    /// C's `fmod`: the remainder has the sign of the dividend.
    fmod, fmod_scalar, fmod_, fmod_scalar_, fmod_out, BinaryOp::Fmod);
binary_family!(
    /// `floor_divide` (`//`).
    floor_divide, floor_divide_scalar, floor_divide_, floor_divide_scalar_, floor_divide_out,
    BinaryOp::Div(RoundingMode::Floor));
binary_family!(
    /// `x ** y`.
    pow, pow_scalar, pow_, pow_scalar_, pow_out, BinaryOp::Pow);
binary_family!(
    /// Four-quadrant arctangent of `self / other`.
    atan2, atan2_scalar, atan2_, atan2_scalar_, atan2_out, BinaryOp::Atan2);
binary_family!(
    /// Elementwise maximum, propagating NaN.
    maximum, maximum_scalar, maximum_, maximum_scalar_, maximum_out, BinaryOp::Maximum);
binary_family!(
    /// Elementwise minimum, propagating NaN.
    minimum, minimum_scalar, minimum_, minimum_scalar_, minimum_out, BinaryOp::Minimum);
binary_family!(
    /// Bitwise (or logical, for bool) and (`&`).
    bitwise_and, bitwise_and_scalar, bitwise_and_, bitwise_and_scalar_, bitwise_and_out, BinaryOp::BitAnd);
binary_family!(
    /// Bitwise (or logical, for bool) or (`|`).
    bitwise_or, bitwise_or_scalar, bitwise_or_, bitwise_or_scalar_, bitwise_or_out, BinaryOp::BitOr);
binary_family!(
    /// Bitwise (or logical, for bool) xor (`^`).
    bitwise_xor, bitwise_xor_scalar, bitwise_xor_, bitwise_xor_scalar_, bitwise_xor_out, BinaryOp::BitXor);
binary_family!(
    /// Left shift (`<<`); shifting by the bit width or more gives 0.
    bitwise_left_shift, bitwise_left_shift_scalar, bitwise_left_shift_, bitwise_left_shift_scalar_,
    bitwise_left_shift_out, BinaryOp::Shl);
binary_family!(
    /// Arithmetic right shift (`>>`).
    bitwise_right_shift, bitwise_right_shift_scalar, bitwise_right_shift_, bitwise_right_shift_scalar_,
    bitwise_right_shift_out, BinaryOp::Shr);
binary_family!(
    /// `==`, giving a bool tensor.
    eq, eq_scalar, eq_, eq_scalar_, eq_out, BinaryOp::Eq);
binary_family!(
    /// `!=`, giving a bool tensor.
    ne, ne_scalar, ne_, ne_scalar_, ne_out, BinaryOp::Ne);
binary_family!(
    /// `<`, giving a bool tensor.
    lt, lt_scalar, lt_, lt_scalar_, lt_out, BinaryOp::Lt);
binary_family!(
    /// `<=`, giving a bool tensor.
    le, le_scalar, le_, le_scalar_, le_out, BinaryOp::Le);
binary_family!(
    /// `>`, giving a bool tensor.
    gt, gt_scalar, gt_, gt_scalar_, gt_out, BinaryOp::Gt);
binary_family!(
    /// `>=`, giving a bool tensor.
    ge, ge_scalar, ge_, ge_scalar_, ge_out, BinaryOp::Ge);
binary_family!(
    /// Logical and of truthiness, giving bool.
    logical_and, logical_and_scalar, logical_and_, logical_and_scalar_, logical_and_out, BinaryOp::LogicalAnd);
binary_family!(
    /// Logical or of truthiness, giving bool.
    logical_or, logical_or_scalar, logical_or_, logical_or_scalar_, logical_or_out, BinaryOp::LogicalOr);
binary_family!(
    /// Logical xor of truthiness, giving bool.
    logical_xor, logical_xor_scalar, logical_xor_, logical_xor_scalar_, logical_xor_out, BinaryOp::LogicalXor);

impl Tensor {
    /// `add(other, alpha)`: `self + alpha * other`.
    pub fn add(&self, other: &Tensor, alpha: Scalar) -> Result<Tensor> {
        binary_op(
            BinaryOp::Add(alpha),
            Operand::Tensor(self),
            Operand::Tensor(other),
            Dest::New,
        )
    }
    /// `add(Scalar other, alpha)` (a Python number follows the wrapped-number promotion rule).
    pub fn add_scalar(&self, other: Scalar, alpha: Scalar) -> Result<Tensor> {
        binary_op(
            BinaryOp::Add(alpha),
            Operand::Tensor(self),
            Operand::Scalar(other),
            Dest::New,
        )
    }
    /// In-place `add_`.
    pub fn add_(&self, other: &Tensor, alpha: Scalar) -> Result<()> {
        binary_op(
            BinaryOp::Add(alpha),
            Operand::Tensor(self),
            Operand::Tensor(other),
            Dest::InPlace(self),
        )
        .map(|_| ())
    }
    /// In-place `add_` with a Python number.
    pub fn add_scalar_(&self, other: Scalar, alpha: Scalar) -> Result<()> {
        binary_op(
            BinaryOp::Add(alpha),
            Operand::Tensor(self),
            Operand::Scalar(other),
            Dest::InPlace(self),
        )
        .map(|_| ())
    }
    /// `add(..., out=out)`.
    pub fn add_out(&self, other: &Tensor, alpha: Scalar, out: &Tensor) -> Result<Tensor> {
        binary_op(
            BinaryOp::Add(alpha),
            Operand::Tensor(self),
            Operand::Tensor(other),
            Dest::Into(out),
        )
    }
    /// `sub(other, alpha)`: `self - alpha * other`.
    pub fn sub(&self, other: &Tensor, alpha: Scalar) -> Result<Tensor> {
        binary_op(
            BinaryOp::Sub(alpha),
            Operand::Tensor(self),
            Operand::Tensor(other),
            Dest::New,
        )
    }
    /// `sub` with a Python number.
    pub fn sub_scalar(&self, other: Scalar, alpha: Scalar) -> Result<Tensor> {
        binary_op(
            BinaryOp::Sub(alpha),
            Operand::Tensor(self),
            Operand::Scalar(other),
            Dest::New,
        )
    }
    /// In-place `sub_`.
    pub fn sub_(&self, other: &Tensor, alpha: Scalar) -> Result<()> {
        binary_op(
            BinaryOp::Sub(alpha),
            Operand::Tensor(self),
            Operand::Tensor(other),
            Dest::InPlace(self),
        )
        .map(|_| ())
    }
    /// In-place `sub_` with a Python number.
    pub fn sub_scalar_(&self, other: Scalar, alpha: Scalar) -> Result<()> {
        binary_op(
            BinaryOp::Sub(alpha),
            Operand::Tensor(self),
            Operand::Scalar(other),
            Dest::InPlace(self),
        )
        .map(|_| ())
    }
    /// `sub(..., out=out)`.
    pub fn sub_out(&self, other: &Tensor, alpha: Scalar, out: &Tensor) -> Result<Tensor> {
        binary_op(
            BinaryOp::Sub(alpha),
            Operand::Tensor(self),
            Operand::Tensor(other),
            Dest::Into(out),
        )
    }
    /// `rsub(other, alpha)`: `other - alpha * self`.
    pub fn rsub(&self, other: &Tensor, alpha: Scalar) -> Result<Tensor> {
        binary_op(
            BinaryOp::Sub(alpha),
            Operand::Tensor(other),
            Operand::Tensor(self),
            Dest::New,
        )
    }
    /// `rsub(Scalar other, alpha)`: `other - alpha * self` (`2 - x`).
    pub fn rsub_scalar(&self, other: Scalar, alpha: Scalar) -> Result<Tensor> {
        binary_op(
            BinaryOp::Sub(alpha),
            Operand::Scalar(other),
            Operand::Tensor(self),
            Dest::New,
        )
    }
    /// `div(other)`: true division; integers divide as the default float dtype.
    pub fn div(&self, other: &Tensor) -> Result<Tensor> {
        self.div_mode(other, RoundingMode::None)
    }
    /// `div(Scalar other)`.
    pub fn div_scalar(&self, other: Scalar) -> Result<Tensor> {
        self.div_scalar_mode(other, RoundingMode::None)
    }
    /// `div(other, rounding_mode=...)`.
    pub fn div_mode(&self, other: &Tensor, mode: RoundingMode) -> Result<Tensor> {
        binary_op(
            BinaryOp::Div(mode),
            Operand::Tensor(self),
            Operand::Tensor(other),
            Dest::New,
        )
    }
    /// `div(Scalar other, rounding_mode=...)`.
    pub fn div_scalar_mode(&self, other: Scalar, mode: RoundingMode) -> Result<Tensor> {
        binary_op(
            BinaryOp::Div(mode),
            Operand::Tensor(self),
            Operand::Scalar(other),
            Dest::New,
        )
    }
    /// In-place `div_(other, rounding_mode)`.
    pub fn div_mode_(&self, other: &Tensor, mode: RoundingMode) -> Result<()> {
        binary_op(
            BinaryOp::Div(mode),
            Operand::Tensor(self),
            Operand::Tensor(other),
            Dest::InPlace(self),
        )
        .map(|_| ())
    }
    /// In-place `div_(Scalar other, rounding_mode)`.
    pub fn div_scalar_mode_(&self, other: Scalar, mode: RoundingMode) -> Result<()> {
        binary_op(
            BinaryOp::Div(mode),
            Operand::Tensor(self),
            Operand::Scalar(other),
            Dest::InPlace(self),
        )
        .map(|_| ())
    }
    /// `div(..., rounding_mode, out=out)`.
    pub fn div_mode_out(&self, other: &Tensor, mode: RoundingMode, out: &Tensor) -> Result<Tensor> {
        binary_op(
            BinaryOp::Div(mode),
            Operand::Tensor(self),
            Operand::Tensor(other),
            Dest::Into(out),
        )
    }
    /// `Scalar / Tensor` (`2.0 / x`), as TorchScript's `aten::div(Scalar, Tensor)` path does.
    pub fn rdiv_scalar(&self, other: Scalar) -> Result<Tensor> {
        binary_op(
            BinaryOp::Div(RoundingMode::None),
            Operand::Scalar(other),
            Operand::Tensor(self),
            Dest::New,
        )
    }
    /// `pow(Scalar self, Tensor exponent)`.
    pub fn pow_scalar_base(base: Scalar, exponent: &Tensor) -> Result<Tensor> {
        binary_op(
            BinaryOp::Pow,
            Operand::Scalar(base),
            Operand::Tensor(exponent),
            Dest::New,
        )
    }
    /// `Scalar % Tensor` (`remainder(Scalar, Tensor)`).
    pub fn rremainder_scalar(&self, other: Scalar) -> Result<Tensor> {
        binary_op(
            BinaryOp::Remainder,
            Operand::Scalar(other),
            Operand::Tensor(self),
            Dest::New,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32], s: &[i64]) -> Tensor {
        Tensor::from_vec(v.to_vec(), s).unwrap()
    }
    fn i64s(v: &[i64], s: &[i64]) -> Tensor {
        Tensor::from_vec(v.to_vec(), s).unwrap()
    }

    #[test]
    fn add_broadcasts_with_alpha() {
        let a = f32s(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
        let b = f32s(&[10., 20., 30.], &[3]);
        let r = a.add(&b, Scalar::Int(2)).unwrap();
        assert_eq!(r.to_vec::<f32>(), vec![21., 42., 63., 24., 45., 66.]);
        let e = a.add(&f32s(&[1., 2.], &[2]), Scalar::Int(1)).unwrap_err();
        assert_eq!(
            e.message,
            "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1"
        );
        // torch: tensor([1,2]).add(1, alpha=1.5) -> alpha error
        assert!(i64s(&[1, 2], &[2])
            .add_scalar(Scalar::Int(1), Scalar::Float(1.5))
            .is_err());
    }

    #[test]
    fn promotion_of_results() {
        let i = i64s(&[1, 2], &[2]);
        assert_eq!(
            i.add_scalar(Scalar::Float(0.5), Scalar::Int(1))
                .unwrap()
                .dtype(),
            DType::Float32
        );
        assert_eq!(i.div(&i).unwrap().dtype(), DType::Float32);
        let b = Tensor::from_vec(vec![true, false], &[2]).unwrap();
        assert_eq!(b.add(&b, Scalar::Int(1)).unwrap().dtype(), DType::Bool);
        assert_eq!(
            b.add_scalar(Scalar::Int(1), Scalar::Int(1))
                .unwrap()
                .to_vec::<i64>(),
            vec![2, 1]
        );
        // torch: tensor([True]) - tensor([True]) -> NotImplementedError
        assert_eq!(
            b.sub(&b, Scalar::Int(1)).unwrap_err().kind,
            ErrorKind::NotImplementedError
        );
        // torch: int tensor .div_(2) -> result type Float can't be cast to the desired output type Long
        assert_eq!(
            i.div_scalar_mode_(Scalar::Int(2), RoundingMode::None)
                .unwrap_err()
                .message,
            "result type Float can't be cast to the desired output type Long"
        );
    }

    #[test]
    fn division_modes_and_zero() {
        // torch: div([-7, 7], 2, floor) -> [-4, 3]; trunc on floats -> [-3., 3.]
        let i = i64s(&[-7, 7], &[2]);
        assert_eq!(
            i.div_scalar_mode(Scalar::Int(2), RoundingMode::Floor)
                .unwrap()
                .to_vec::<i64>(),
            vec![-4, 3]
        );
        assert_eq!(
            i.div_scalar_mode(Scalar::Int(2), RoundingMode::Trunc)
                .unwrap()
                .to_vec::<i64>(),
            vec![-3, 3]
        );
        assert_eq!(
            i.div_scalar_mode(Scalar::Int(0), RoundingMode::Floor)
                .unwrap_err()
                .message,
            "ZeroDivisionError"
        );
        assert_eq!(
            i.remainder_scalar(Scalar::Int(0)).unwrap_err().message,
            "ZeroDivisionError"
        );
        // torch: tensor([5.,-5.]) // 0 -> [inf, -inf]; % 0 -> nan; [inf,-inf,nan] // 1 -> nan
        let f = f32s(&[5., -5.], &[2]);
        assert_eq!(
            f.floor_divide_scalar(Scalar::Int(0))
                .unwrap()
                .to_vec::<f32>(),
            vec![f32::INFINITY, f32::NEG_INFINITY]
        );
        assert!(f.remainder_scalar(Scalar::Int(0)).unwrap().to_vec::<f32>()[0].is_nan());
        let inf = f32s(&[f32::INFINITY], &[1]);
        assert!(inf
            .floor_divide_scalar(Scalar::Int(1))
            .unwrap()
            .to_vec::<f32>()[0]
            .is_nan());
        // torch: tensor([5.5, -5.5]) // 2 -> [2., -3.]; remainder(3., -2) -> -1.
        assert_eq!(
            f32s(&[5.5, -5.5], &[2])
                .floor_divide_scalar(Scalar::Int(2))
                .unwrap()
                .to_vec::<f32>(),
            vec![2., -3.]
        );
        assert_eq!(
            f32s(&[3.], &[1])
                .remainder_scalar(Scalar::Int(-2))
                .unwrap()
                .to_vec::<f32>(),
            vec![-1.]
        );
        assert_eq!(
            f32s(&[-5.], &[1])
                .fmod_scalar(Scalar::Int(3))
                .unwrap()
                .to_vec::<f32>(),
            vec![-2.]
        );
    }

    #[test]
    fn powers() {
        let i = i64s(&[2, -3, 0], &[3]);
        // torch: i ** -1 -> "Integers to negative integer powers are not allowed."
        assert!(i.pow_scalar(Scalar::Int(-1)).is_err());
        // torch: i ** tensor([-1,-1,2]) -> [0, 0, 0]; pow(2, i) -> [4, 0, 1]
        assert_eq!(
            i.pow(&i64s(&[-1, -1, 2], &[3])).unwrap().to_vec::<i64>(),
            vec![0, 0, 0]
        );
        assert_eq!(
            Tensor::pow_scalar_base(Scalar::Int(2), &i)
                .unwrap()
                .to_vec::<i64>(),
            vec![4, 0, 1]
        );
        // torch: pow(i, 2.5) -> float [5.6569, nan, 0.]
        let p = i.pow_scalar(Scalar::Float(2.5)).unwrap();
        assert_eq!(p.dtype(), DType::Float32);
        assert!((p.to_vec::<f32>()[0] - 5.656854).abs() < 1e-5);
        assert_eq!(
            f32s(&[3.], &[1])
                .pow_scalar(Scalar::Int(2))
                .unwrap()
                .to_vec::<f32>(),
            vec![9.]
        );
    }

    #[test]
    fn comparisons_and_logic() {
        let a = f32s(&[1., f32::NAN, 3.], &[3]);
        let b = f32s(&[1., 2., 2.], &[3]);
        assert_eq!(a.eq(&b).unwrap().to_vec::<bool>(), vec![true, false, false]);
        assert_eq!(a.ne(&b).unwrap().to_vec::<bool>(), vec![false, true, true]);
        assert_eq!(
            a.gt_scalar(Scalar::Float(1.5)).unwrap().to_vec::<bool>(),
            vec![false, false, true]
        );
        let m = a.maximum(&b).unwrap().to_vec::<f32>();
        assert!(m[1].is_nan());
        assert_eq!(m[2], 3.0);
        // torch: tensor([1,2]).eq_(tensor([1,3])) -> tensor([1, 0]) (int64 kept)
        let x = i64s(&[1, 2], &[2]);
        x.eq_(&i64s(&[1, 3], &[2])).unwrap();
        assert_eq!(x.to_vec::<i64>(), vec![1, 0]);
        assert_eq!(
            a.logical_and(&b).unwrap().to_vec::<bool>(),
            vec![true, true, true]
        );
        // bitwise on float: "bitwise_and_cpu" not implemented for 'Float'
        let e = a.bitwise_and(&b).unwrap_err();
        assert_eq!(e.message, "\"bitwise_and_cpu\" not implemented for 'Float'");
        assert_eq!(
            i64s(&[-8], &[1])
                .bitwise_right_shift_scalar(Scalar::Int(70))
                .unwrap()
                .to_vec::<i64>(),
            vec![-1]
        );
    }

    #[test]
    fn in_place_aliasing() {
        // x.add_(x) reads each element before writing it.
        let x = f32s(&[1., 2., 3.], &[3]);
        x.add_(&x, Scalar::Int(1)).unwrap();
        assert_eq!(x.to_vec::<f32>(), vec![2., 4., 6.]);
        // a[1:].add_(a[:-1]) partially overlaps: error as in torch.
        let a = f32s(&[0., 1., 2., 3., 4.], &[5]);
        let e = a
            .slice(0, Some(1), None, 1)
            .unwrap()
            .add_(&a.slice(0, None, Some(-1), 1).unwrap(), Scalar::Int(1));
        assert!(e
            .unwrap_err()
            .message
            .contains("some elements of the input tensor"));
        // Writing through a strided view updates the base.
        let m = f32s(&[1., 2., 3., 4.], &[2, 2]);
        m.t()
            .unwrap()
            .select(0, 1)
            .unwrap()
            .mul_scalar_(Scalar::Int(10))
            .unwrap();
        assert_eq!(m.to_vec::<f32>(), vec![1., 20., 3., 40.]);
        let e = m
            .add_(
                &f32s(&[1., 2., 3., 4., 5., 6., 7., 8.], &[2, 2, 2]),
                Scalar::Int(1),
            )
            .unwrap_err();
        assert_eq!(
            e.message,
            "output with shape [2, 2] doesn't match the broadcast shape [2, 2, 2]"
        );
    }

    #[test]
    fn out_variant_resizes_and_casts() {
        let out = Tensor::zeros(&[0], DType::Float64).unwrap();
        let a = f32s(&[1., 2.], &[2]);
        a.mul_out(&a, &out).unwrap();
        assert_eq!(out.to_vec::<f64>(), vec![1., 4.]);
        let iout = Tensor::zeros(&[2], DType::Int64).unwrap();
        assert!(a.mul_out(&a, &iout).is_err());
    }

    #[test]
    fn integer_wrapping() {
        // torch: tensor([100], int8) * 3 -> 44; tensor([2], uint8) - 3 -> 255
        let i8t = Tensor::from_vec(vec![100i8], &[1]).unwrap();
        assert_eq!(
            i8t.mul_scalar(Scalar::Int(3)).unwrap().to_vec::<i64>(),
            vec![44]
        );
        let u = Tensor::from_vec(vec![2u8], &[1]).unwrap();
        assert_eq!(
            u.sub_scalar(Scalar::Int(3), Scalar::Int(1))
                .unwrap()
                .to_vec::<i64>(),
            vec![255]
        );
    }
}
