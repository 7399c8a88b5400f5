//! The scalar type the decompositions are written over: `f32` or `f64`, with LAPACK's machine
//! constants. Each algorithm runs in the input's own precision, as LAPACK's `s`/`d` routines do,
//! so that its data-dependent decisions (pivots, convergence, deflation) match theirs.

use std::fmt::Debug;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use crate::element::Element;

/// A real floating-point scalar (`f32` or `f64`).
pub(crate) trait Real:
    Copy
    + PartialOrd
    + Debug
    + Default
    + Send
    + Sync
    + 'static
    + Element
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
{
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// LAPACK's `dlamch('E')`: the relative rounding error (half the machine epsilon).
    const EPS: Self;
    /// The machine epsilon (`torch.finfo(dtype).eps`, LAPACK's `dlamch('P')`).
    const ULP: Self;
    /// LAPACK's `dlamch('S')`: the smallest normal number whose reciprocal does not overflow.
    const SAFMIN: Self;
    /// The largest finite value.
    const MAX: Self;

    /// Conversion from f64 (rounding).
    fn of(x: f64) -> Self;
    /// Conversion to f64.
    fn f64(self) -> f64;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// NaN test.
    fn is_nan(self) -> bool;
    /// `|self|` with the sign of `sign` (Fortran's `SIGN`; `+0` counts as positive).
    fn sign_of(self, sign: Self) -> Self {
        if sign >= Self::ZERO {
            self.abs()
        } else {
            -self.abs()
        }
    }
    /// The larger of two values (the first when equal or unordered).
    fn max2(self, other: Self) -> Self {
        if other > self {
            other
        } else {
            self
        }
    }
    /// The smaller of two values (the first when equal or unordered).
    fn min2(self, other: Self) -> Self {
        if other < self {
            other
        } else {
            self
        }
    }
    /// `sqrt(x^2 + y^2)` without needless overflow (LAPACK's `dlapy2`).
    fn lapy2(self, y: Self) -> Self {
        let (xa, ya) = (self.abs(), y.abs());
        if self.is_nan() {
            return self;
        }
        if y.is_nan() {
            return y;
        }
        let w = xa.max2(ya);
        let z = xa.min2(ya);
        if z == Self::ZERO || w > Self::MAX {
            w
        } else {
            w * (Self::ONE + (z / w) * (z / w)).sqrt()
        }
    }
}

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const EPS: Self = <$t>::EPSILON * 0.5;
            const ULP: Self = <$t>::EPSILON;
            const SAFMIN: Self = <$t>::MIN_POSITIVE;
            const MAX: Self = <$t>::MAX;
            fn of(x: f64) -> Self {
                x as $t
            }
            fn f64(self) -> f64 {
                self as f64
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
        }
    };
}
real!(f32);
real!(f64);

/// Euclidean norm of a vector, scaled against overflow (BLAS `nrm2`).
pub(crate) fn nrm2<T: Real>(x: impl Iterator<Item = T> + Clone) -> T {
    let scale = x.clone().fold(T::ZERO, |m, v| m.max2(v.abs()));
    if scale == T::ZERO || scale.is_nan() {
        return scale;
    }
    let mut ssq = T::ZERO;
    for v in x {
        let r = v / scale;
        ssq += r * r;
    }
    scale * ssq.sqrt()
}
