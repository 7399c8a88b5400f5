//! Per-element arithmetic as ATen defines it for each dtype.
//!
//! Kernels load an element of type `T: Elem`, lift it to its *op type* `T::Op` (what ATen calls
//! `opmath_type`: float32 for float16/bfloat16, the type itself otherwise), compute there and
//! round once when storing. Integer arithmetic wraps like C++'s two's complement arithmetic.

use half::{bf16, f16};

use crate::complex::{Complex, Complex32, Complex64};
use crate::element::Element;
use crate::scalar::Scalar;

/// A storable element with its computation type.
pub(crate) trait Elem: Element + Default + PartialEq {
    /// The type arithmetic on this element happens in.
    type Op: OpNum;
    /// Lifts to the op type.
    fn op(self) -> Self::Op;
    /// Rounds an op-type value back to the element type.
    fn from_op(v: Self::Op) -> Self;
}

/// Arithmetic shared by every op type (bool, the integers, f32, f64).
pub(crate) trait OpNum:
    Copy + Send + Sync + PartialOrd + PartialEq + Default + 'static
{
    fn zero() -> Self;
    fn one() -> Self;
    /// Converts a Python number with C-cast semantics.
    fn from_scalar(s: Scalar) -> Self {
        match s {
            Scalar::Bool(b) => Self::from_i64(b as i64),
            Scalar::Int(i) => Self::from_i64(i),
            Scalar::Float(f) => Self::from_f64(f),
        }
    }
    fn from_f64(v: f64) -> Self;
    fn from_i64(v: i64) -> Self;
    fn to_f64(self) -> f64;
    fn to_i64(self) -> i64;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn neg(self) -> Self;
    fn wabs(self) -> Self;
    fn is_nan(self) -> bool {
        false
    }
}

macro_rules! int_opnum {
    ($t:ty) => {
        impl OpNum for $t {
            #[inline(always)]
            fn zero() -> Self {
                0
            }
            #[inline(always)]
            fn one() -> Self {
                1
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                <$t as Element>::from_f64(v)
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self as i64
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            #[inline(always)]
            fn neg(self) -> Self {
                (0 as $t).wrapping_sub(self)
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn wabs(self) -> Self {
                if self < 0 {
                    (0 as $t).wrapping_sub(self)
                } else {
                    self
                }
            }
        }

        impl Elem for $t {
            type Op = $t;
            #[inline(always)]
            fn op(self) -> $t {
                self
            }
            #[inline(always)]
            fn from_op(v: $t) -> $t {
                v
            }
        }
    };
}

int_opnum!(u8);
int_opnum!(i8);
int_opnum!(i16);
int_opnum!(i32);
int_opnum!(i64);
int_opnum!(u16);
int_opnum!(u32);
int_opnum!(u64);

impl OpNum for bool {
    fn zero() -> Self {
        false
    }
    fn one() -> Self {
        true
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self ^ o
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        self & o
    }
    fn neg(self) -> Self {
        self
    }
    fn wabs(self) -> Self {
        self
    }
}

impl Elem for bool {
    type Op = bool;
    #[inline(always)]
    fn op(self) -> bool {
        self
    }
    #[inline(always)]
    fn from_op(v: bool) -> bool {
        v
    }
}

macro_rules! float_opnum {
    ($t:ty) => {
        impl OpNum for $t {
            #[inline(always)]
            fn zero() -> Self {
                0.0
            }
            #[inline(always)]
            fn one() -> Self {
                1.0
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                crate::element::f64_to_i64(self as f64)
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn neg(self) -> Self {
                -self
            }
            #[inline(always)]
            fn wabs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
        }

        impl Elem for $t {
            type Op = $t;
            #[inline(always)]
            fn op(self) -> $t {
                self
            }
            #[inline(always)]
            fn from_op(v: $t) -> $t {
                v
            }
        }
    };
}

float_opnum!(f32);
float_opnum!(f64);

impl Elem for f16 {
    type Op = f32;
    #[inline(always)]
    fn op(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn from_op(v: f32) -> f16 {
        f16::from_f32(v)
    }
}

impl Elem for bf16 {
    type Op = f32;
    #[inline(always)]
    fn op(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn from_op(v: f32) -> bf16 {
        bf16::from_f32(v)
    }
}

macro_rules! complex_opnum {
    ($t:ty, $part:ty) => {
        /// Complex arithmetic for the generic kernels that support complex dtypes (add, mul,
        /// sums, products, equality). `to_f64`/`to_i64` take the real part; `wabs` is `|z|` as
        /// a complex number (callers wanting a real `abs` use [`Complex::abs`]).
        impl OpNum for $t {
            #[inline(always)]
            fn zero() -> Self {
                <$t>::new(0.0, 0.0)
            }
            #[inline(always)]
            fn one() -> Self {
                <$t>::new(1.0, 0.0)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                <$t>::new(v as $part, 0.0)
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                <$t>::new(v as $part, 0.0)
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self.re as f64
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                crate::element::f64_to_i64(self.re as f64)
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn neg(self) -> Self {
                -self
            }
            #[inline(always)]
            fn wabs(self) -> Self {
                <$t>::new(self.abs(), 0.0)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                Complex::is_nan(self)
            }
        }

        impl Elem for $t {
            type Op = $t;
            #[inline(always)]
            fn op(self) -> $t {
                self
            }
            #[inline(always)]
            fn from_op(v: $t) -> $t {
                v
            }
        }
    };
}

complex_opnum!(Complex32, f32);
complex_opnum!(Complex64, f64);

/// Elementary functions on the floating op types (f32 and f64).
pub(crate) trait FloatMath:
    OpNum
    + std::ops::Neg<Output = Self>
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    fn exp(self) -> Self;
    /// `e^x` for `x <= 0` or NaN (softmax's exponentials once the row maximum is subtracted);
    /// results below the normal range may be 0.
    fn exp_nonpositive(self) -> Self;
    fn exp2(self) -> Self;
    fn exp_m1(self) -> Self;
    fn ln(self) -> Self;
    fn log2(self) -> Self;
    fn log10(self) -> Self;
    fn ln_1p(self) -> Self;
    fn sqrt(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn asin(self) -> Self;
    fn acos(self) -> Self;
    fn atan(self) -> Self;
    fn sinh(self) -> Self;
    fn cosh(self) -> Self;
    fn tanh(self) -> Self;
    fn asinh(self) -> Self;
    fn acosh(self) -> Self;
    fn atanh(self) -> Self;
    fn floor(self) -> Self;
    fn trunc(self) -> Self;
    fn round_even(self) -> Self;
    fn powf(self, o: Self) -> Self;
    fn erf(self) -> Self;
    fn erfc(self) -> Self;
    fn copysign(self, o: Self) -> Self;
    fn rem_euclid_like(self, o: Self) -> Self;
    fn fmod(self, o: Self) -> Self;
}

macro_rules! float_math {
    ($t:ty, $erf:path, $erfc:path, $exp:path, $exp_le0:path, $tanh:path, $ln:path) => {
        impl FloatMath for $t {
            #[inline(always)]
            fn exp(self) -> Self {
                $exp(self)
            }
            #[inline(always)]
            fn exp_nonpositive(self) -> Self {
                $exp_le0(self)
            }
            #[inline(always)]
            fn exp2(self) -> Self {
                <$t>::exp2(self)
            }
            #[inline(always)]
            fn exp_m1(self) -> Self {
                <$t>::exp_m1(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                $ln(self)
            }
            #[inline(always)]
            fn log2(self) -> Self {
                <$t>::log2(self)
            }
            #[inline(always)]
            fn log10(self) -> Self {
                <$t>::log10(self)
            }
            #[inline(always)]
            fn ln_1p(self) -> Self {
                <$t>::ln_1p(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            #[inline(always)]
            fn tan(self) -> Self {
                <$t>::tan(self)
            }
            #[inline(always)]
            fn asin(self) -> Self {
                <$t>::asin(self)
            }
            #[inline(always)]
            fn acos(self) -> Self {
                <$t>::acos(self)
            }
            #[inline(always)]
            fn atan(self) -> Self {
                <$t>::atan(self)
            }
            #[inline(always)]
            fn sinh(self) -> Self {
                <$t>::sinh(self)
            }
            #[inline(always)]
            fn cosh(self) -> Self {
                <$t>::cosh(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                $tanh(self)
            }
            #[inline(always)]
            fn asinh(self) -> Self {
                <$t>::asinh(self)
            }
            #[inline(always)]
            fn acosh(self) -> Self {
                <$t>::acosh(self)
            }
            #[inline(always)]
            fn atanh(self) -> Self {
                <$t>::atanh(self)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                <$t>::trunc(self)
            }
            #[inline(always)]
            fn round_even(self) -> Self {
                <$t>::round_ties_even(self)
            }
            #[inline(always)]
            fn powf(self, o: Self) -> Self {
                <$t>::powf(self, o)
            }
            #[inline(always)]
            fn erf(self) -> Self {
                $erf(self)
            }
            #[inline(always)]
            fn erfc(self) -> Self {
                $erfc(self)
            }
            #[inline(always)]
            fn copysign(self, o: Self) -> Self {
                <$t>::copysign(self, o)
            }
            /// Python's `%`: the result has the sign of the divisor.
            #[inline(always)]
            fn rem_euclid_like(self, o: Self) -> Self {
                let m = self % o;
                if m != 0.0 && ((o < 0.0) != (m < 0.0)) {
                    m + o
                } else {
                    m
                }
            }
            #[inline(always)]
            fn fmod(self, o: Self) -> Self {
                self % o
            }
        }
    };
}

float_math!(
    f32,
    crate::cpu::fastmath::erf_f32,
    crate::cpu::fastmath::erfc_f32,
    crate::cpu::fastmath::exp_f32,
    crate::cpu::fastmath::exp_nonpositive_or_zero_f32,
    crate::cpu::fastmath::tanh_f32,
    crate::cpu::fastmath::log_f32
);
float_math!(
    f64,
    libm::erf,
    libm::erfc,
    f64::exp,
    f64::exp,
    f64::tanh,
    f64::ln
);

/// Integer-only arithmetic (division, shifts, bit operations) for the integer op types.
pub(crate) trait IntOps: OpNum {
    /// C++ `/` (truncating); `None` for division by zero. Overflow (`MIN / -1`) wraps.
    fn truncdiv(self, o: Self) -> Option<Self>;
    /// Python `//`; `None` for division by zero.
    fn floordiv(self, o: Self) -> Option<Self>;
    /// Python `%` (sign of the divisor); `None` for division by zero.
    fn pymod(self, o: Self) -> Option<Self>;
    /// C++ `%` (sign of the dividend); `None` for division by zero.
    fn cmod(self, o: Self) -> Option<Self>;
    fn bitand(self, o: Self) -> Self;
    fn bitor(self, o: Self) -> Self;
    fn bitxor(self, o: Self) -> Self;
    fn shl(self, o: Self) -> Self;
    fn shr(self, o: Self) -> Self;
    /// Integer power by squaring with wrapping; negative exponents follow ATen's rules.
    fn ipow(self, e: Self) -> Self;
}

macro_rules! int_ops {
    ($t:ty, $signed:expr) => {
        impl IntOps for $t {
            #[inline(always)]
            fn truncdiv(self, o: Self) -> Option<Self> {
                if o == 0 {
                    None
                } else {
                    Some(self.wrapping_div(o))
                }
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn floordiv(self, o: Self) -> Option<Self> {
                if o == 0 {
                    return None;
                }
                let q = self.wrapping_div(o);
                let r = self.wrapping_rem(o);
                if r != 0 && ((r < 0) != (o < 0)) {
                    Some(q.wrapping_sub(1))
                } else {
                    Some(q)
                }
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn pymod(self, o: Self) -> Option<Self> {
                if o == 0 {
                    return None;
                }
                let r = self.wrapping_rem(o);
                if r != 0 && ((r < 0) != (o < 0)) {
                    Some(r.wrapping_add(o))
                } else {
                    Some(r)
                }
            }
            #[inline(always)]
            fn cmod(self, o: Self) -> Option<Self> {
                if o == 0 {
                    None
                } else {
                    Some(self.wrapping_rem(o))
                }
            }
            #[inline(always)]
            fn bitand(self, o: Self) -> Self {
                self & o
            }
            #[inline(always)]
            fn bitor(self, o: Self) -> Self {
                self | o
            }
            #[inline(always)]
            fn bitxor(self, o: Self) -> Self {
                self ^ o
            }
            /// ATen: shifting by a negative amount or by at least the bit width gives 0.
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn shl(self, o: Self) -> Self {
                if o < 0 || (o as i64) >= <$t>::BITS as i64 {
                    0
                } else {
                    self.wrapping_shl(o as u32)
                }
            }
            /// ATen: arithmetic shift; amounts out of range saturate to the sign fill.
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn shr(self, o: Self) -> Self {
                if o < 0 || (o as i64) >= <$t>::BITS as i64 {
                    if self < 0 {
                        (0 as $t).wrapping_sub(1)
                    } else {
                        0
                    }
                } else {
                    self.wrapping_shr(o as u32)
                }
            }
            #[allow(unused_comparisons)]
            fn ipow(self, e: Self) -> Self {
                if e < 0 {
                    // ATen: 1 ** neg == 1, (-1) ** neg == ±1, anything else ** neg == 0.
                    if self == 1 {
                        return 1;
                    }
                    if $signed && self == (0 as $t).wrapping_sub(1) {
                        return if e.wrapping_rem(2) == 0 { 1 } else { self };
                    }
                    return 0;
                }
                let mut base = self;
                let mut exp = e;
                let mut acc: $t = 1;
                while exp != 0 {
                    if exp & 1 == 1 {
                        acc = acc.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    exp >>= 1;
                }
                acc
            }
        }
    };
}

int_ops!(u8, false);
int_ops!(i8, true);
int_ops!(i16, true);
int_ops!(i32, true);
int_ops!(i64, true);
int_ops!(u16, false);
int_ops!(u32, false);
int_ops!(u64, false);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_division_semantics() {
        // Python: -7 // 2 == -4, -7 % 2 == 1, 7 % -2 == -1; C: -7 / 2 == -3, -7 % 2 == -1.
        assert_eq!((-7i64).floordiv(2), Some(-4));
        assert_eq!((-7i64).pymod(2), Some(1));
        assert_eq!(7i64.pymod(-2), Some(-1));
        assert_eq!((-7i64).truncdiv(2), Some(-3));
        assert_eq!((-7i64).cmod(2), Some(-1));
        assert_eq!(1i32.floordiv(0), None);
        assert_eq!(i64::MIN.truncdiv(-1), Some(i64::MIN));
        assert_eq!((-7.0f64).rem_euclid_like(2.0), 1.0);
        assert_eq!(7.0f32.rem_euclid_like(-2.0), -1.0);
    }

    #[test]
    fn integer_power_and_shifts() {
        assert_eq!(3i64.ipow(4), 81);
        assert_eq!(2i64.ipow(-1), 0);
        assert_eq!((-1i64).ipow(-3), -1);
        assert_eq!(1i64.ipow(-3), 1);
        assert_eq!(1i32.shl(40), 0);
        assert_eq!((-8i32).shr(40), -1);
        assert_eq!(200u8.shr(1), 100);
    }

    #[test]
    fn half_lifts_to_f32() {
        let h = f16::from_f32(1.5);
        assert_eq!(h.op(), 1.5f32);
        assert_eq!(f16::from_op(65520.0), f16::INFINITY);
    }
}
