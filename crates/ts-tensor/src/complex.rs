//! Complex numbers as tensor elements (`torch.complex64` / `torch.complex128`).
//!
//! [`Complex<T>`] is `#[repr(C)] { re, im }`, the layout of C++'s `std::complex`, c10's
//! `c10::complex` and `num_complex::Complex` (so buffers can be handed to the `gemm` crate).
//! The elementary functions follow the principal branches of C99's `<complex.h>`, which is what
//! ATen computes with.

use std::ops::{Add, Div, Mul, Neg, Sub};

/// A complex number with parts of type `T` (`f32` for complex64, `f64` for complex128).
#[derive(Clone, Copy, Default, PartialEq, Debug)]
#[repr(C)]
pub struct Complex<T> {
    pub re: T,
    pub im: T,
}

/// `torch.complex64`'s element type.
pub type Complex32 = Complex<f32>;
/// `torch.complex128`'s element type.
pub type Complex64 = Complex<f64>;

impl<T> Complex<T> {
    /// `re + im·i`.
    pub const fn new(re: T, im: T) -> Self {
        Complex { re, im }
    }
}

impl From<Complex<f64>> for (f64, f64) {
    fn from(z: Complex<f64>) -> (f64, f64) {
        (z.re, z.im)
    }
}

/// Complex numbers have no order; this one (real part, then imaginary part, as NumPy sorts them)
/// exists only so that complex elements satisfy the generic kernels' trait bounds. Kernels that
/// order elements (max, sort, comparisons) reject complex dtypes before they dispatch.
impl<T: PartialOrd> PartialOrd for Complex<T> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        match self.re.partial_cmp(&o.re) {
            Some(std::cmp::Ordering::Equal) => self.im.partial_cmp(&o.im),
            other => other,
        }
    }
}

/// The real operations the complex functions are built from (implemented for f32 and f64).
pub trait ComplexPart:
    Copy
    + PartialOrd
    + Default
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    const HALF: Self;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn abs(self) -> Self;
    fn sqrt(self) -> Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn sinh(self) -> Self;
    fn cosh(self) -> Self;
    fn atan2(self, x: Self) -> Self;
    fn hypot(self, o: Self) -> Self;
    fn copysign(self, o: Self) -> Self;
    fn is_nan(self) -> bool;
    fn is_finite(self) -> bool;
    fn is_infinite(self) -> bool;
}

macro_rules! complex_part {
    ($t:ty) => {
        impl ComplexPart for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const HALF: Self = 0.5;
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                <$t>::ln(self)
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
            fn sinh(self) -> Self {
                <$t>::sinh(self)
            }
            #[inline(always)]
            fn cosh(self) -> Self {
                <$t>::cosh(self)
            }
            #[inline(always)]
            fn atan2(self, x: Self) -> Self {
                <$t>::atan2(self, x)
            }
            #[inline(always)]
            fn hypot(self, o: Self) -> Self {
                <$t>::hypot(self, o)
            }
            #[inline(always)]
            fn copysign(self, o: Self) -> Self {
                <$t>::copysign(self, o)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn is_infinite(self) -> bool {
                <$t>::is_infinite(self)
            }
        }
    };
}

complex_part!(f32);
complex_part!(f64);

impl<T: ComplexPart> Add for Complex<T> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Complex::new(self.re + o.re, self.im + o.im)
    }
}

impl<T: ComplexPart> Sub for Complex<T> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Complex::new(self.re - o.re, self.im - o.im)
    }
}

impl<T: ComplexPart> Mul for Complex<T> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Complex::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
}

impl<T: ComplexPart> Div for Complex<T> {
    type Output = Self;
    /// Smith's algorithm (scales by the larger part of the divisor, as c10::complex does), so
    /// that large divisors do not overflow.
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        let (a, b, c, d) = (self.re, self.im, o.re, o.im);
        if c.abs() >= d.abs() {
            if c == T::ZERO && d == T::ZERO {
                return Complex::new(a / c.abs(), b / d.abs());
            }
            let r = d / c;
            let den = c + d * r;
            Complex::new((a + b * r) / den, (b - a * r) / den)
        } else {
            let r = c / d;
            let den = d + c * r;
            Complex::new((a * r + b) / den, (b * r - a) / den)
        }
    }
}

impl<T: ComplexPart> Neg for Complex<T> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Complex::new(-self.re, -self.im)
    }
}

impl<T: ComplexPart> Complex<T> {
    /// `0 + 0i`.
    pub fn zero() -> Self {
        Complex::new(T::ZERO, T::ZERO)
    }

    /// `1 + 0i`.
    pub fn one() -> Self {
        Complex::new(T::ONE, T::ZERO)
    }

    /// A real number as a complex one.
    pub fn from_real(re: T) -> Self {
        Complex::new(re, T::ZERO)
    }

    /// The complex conjugate.
    #[inline(always)]
    pub fn conj(self) -> Self {
        Complex::new(self.re, -self.im)
    }

    /// The magnitude `|z|` (without intermediate overflow).
    #[inline(always)]
    pub fn abs(self) -> T {
        self.re.hypot(self.im)
    }

    /// The argument (phase) in `(-π, π]`.
    #[inline(always)]
    pub fn arg(self) -> T {
        self.im.atan2(self.re)
    }

    /// `r·e^{iθ}`.
    pub fn from_polar(r: T, theta: T) -> Self {
        Complex::new(r * theta.cos(), r * theta.sin())
    }

    /// True when either part is NaN.
    pub fn is_nan(self) -> bool {
        self.re.is_nan() || self.im.is_nan()
    }

    /// True when both parts are finite.
    pub fn is_finite(self) -> bool {
        self.re.is_finite() && self.im.is_finite()
    }

    /// True when either part is infinite.
    pub fn is_infinite(self) -> bool {
        self.re.is_infinite() || self.im.is_infinite()
    }

    /// Multiplication by a real number.
    #[inline(always)]
    pub fn scale(self, s: T) -> Self {
        Complex::new(self.re * s, self.im * s)
    }

    /// `e^z`.
    pub fn exp(self) -> Self {
        if self.im == T::ZERO {
            return Complex::new(self.re.exp(), self.im);
        }
        let m = self.re.exp();
        Complex::new(m * self.im.cos(), m * self.im.sin())
    }

    /// The principal natural logarithm.
    pub fn ln(self) -> Self {
        Complex::new(self.abs().ln(), self.arg())
    }

    /// The principal square root (branch cut along the negative real axis).
    pub fn sqrt(self) -> Self {
        let (x, y) = (self.re, self.im);
        if x == T::ZERO && y == T::ZERO {
            return Complex::new(T::ZERO, y);
        }
        if y.is_infinite() {
            return Complex::new(T::ZERO - (T::ZERO - y.abs()), y);
        }
        let t = ((x.abs() + self.abs()) * T::HALF).sqrt();
        if x >= T::ZERO {
            Complex::new(t, y / (t + t))
        } else {
            Complex::new(y.abs() / (t + t), t.copysign(y))
        }
    }

    /// `1 / z`.
    pub fn recip(self) -> Self {
        Complex::one() / self
    }

    /// `1 / sqrt(z)`.
    pub fn rsqrt(self) -> Self {
        self.sqrt().recip()
    }

    /// `sin z`.
    pub fn sin(self) -> Self {
        Complex::new(
            self.re.sin() * self.im.cosh(),
            self.re.cos() * self.im.sinh(),
        )
    }

    /// `cos z`.
    pub fn cos(self) -> Self {
        Complex::new(
            self.re.cos() * self.im.cosh(),
            -(self.re.sin() * self.im.sinh()),
        )
    }

    /// `tan z = -i·tanh(iz)`.
    pub fn tan(self) -> Self {
        let t = Complex::new(-self.im, self.re).tanh();
        Complex::new(t.im, -t.re)
    }

    /// `sinh z`.
    pub fn sinh(self) -> Self {
        Complex::new(
            self.re.sinh() * self.im.cos(),
            self.re.cosh() * self.im.sin(),
        )
    }

    /// `cosh z`.
    pub fn cosh(self) -> Self {
        Complex::new(
            self.re.cosh() * self.im.cos(),
            self.re.sinh() * self.im.sin(),
        )
    }

    /// `tanh z`, computed so that large real parts saturate to ±1 instead of overflowing.
    pub fn tanh(self) -> Self {
        let (x, y) = (self.re, self.im);
        if x.abs() > T::from_f64(20.0) {
            // tanh(x + iy) -> sign(x) + 4i·sin(y)cos(y)·e^{-2|x|}.
            let e = (T::from_f64(-2.0) * x.abs()).exp();
            let s = (y + y).sin();
            return Complex::new(T::ONE.copysign(x), T::from_f64(2.0) * s * e);
        }
        let two_x = x + x;
        let two_y = y + y;
        let den = two_x.cosh() + two_y.cos();
        Complex::new(two_x.sinh() / den, two_y.sin() / den)
    }

    /// `asin z = -i·ln(iz + sqrt(1 - z²))`.
    pub fn asin(self) -> Self {
        let iz = Complex::new(-self.im, self.re);
        let w = (iz + (Complex::one() - self * self).sqrt()).ln();
        Complex::new(w.im, -w.re)
    }

    /// `acos z = π/2 - asin z`.
    pub fn acos(self) -> Self {
        let a = self.asin();
        Complex::new(
            T::from_f64(std::f64::consts::FRAC_PI_2) - a.re,
            T::ZERO - a.im,
        )
    }

    /// `atan z = (i/2)·(ln(1 - iz) - ln(1 + iz))`.
    pub fn atan(self) -> Self {
        let iz = Complex::new(-self.im, self.re);
        let d = (Complex::one() - iz).ln() - (Complex::one() + iz).ln();
        Complex::new(-d.im * T::HALF, d.re * T::HALF)
    }

    /// `asinh z = ln(z + sqrt(z² + 1))`.
    pub fn asinh(self) -> Self {
        (self + (self * self + Complex::one()).sqrt()).ln()
    }

    /// `acosh z = ln(z + sqrt(z + 1)·sqrt(z - 1))`.
    pub fn acosh(self) -> Self {
        (self + (self + Complex::one()).sqrt() * (self - Complex::one()).sqrt()).ln()
    }

    /// `atanh z = (ln(1 + z) - ln(1 - z)) / 2`.
    pub fn atanh(self) -> Self {
        ((Complex::one() + self).ln() - (Complex::one() - self).ln()).scale(T::HALF)
    }

    /// `z^w = e^{w·ln z}`, with `0^w = 0` for `Re w > 0` and `z^0 = 1`.
    pub fn powc(self, w: Self) -> Self {
        if w.re == T::ZERO && w.im == T::ZERO {
            return Complex::one();
        }
        if self.re == T::ZERO && self.im == T::ZERO {
            if w.im == T::ZERO && w.re > T::ZERO {
                return Complex::zero();
            }
            return (w * self.ln()).exp();
        }
        (w * self.ln()).exp()
    }

    /// `z·sigmoid = 1 / (1 + e^{-z})`.
    pub fn sigmoid(self) -> Self {
        (Complex::one() + (-self).exp()).recip()
    }

    /// `z / |z|` (0 for 0): `torch.sgn`.
    pub fn sgn(self) -> Self {
        let a = self.abs();
        if a == T::ZERO {
            Complex::zero()
        } else {
            Complex::new(self.re / a, self.im / a)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Complex64, re: f64, im: f64) {
        assert!(
            (a.re - re).abs() < 1e-12 && (a.im - im).abs() < 1e-12,
            "{a:?} != ({re}, {im})"
        );
    }

    // Expected values: torch 2.15 on complex128 (and Python's cmath, which agrees).
    #[test]
    fn elementary_functions_match_cmath() {
        let z = Complex64::new(0.5, -1.25);
        close(z.exp(), 0.5198786860084937, -1.5646111274988195);
        close(z.ln(), 0.2973535538733464, -1.1902899496825317);
        close(z.sqrt(), 0.9608046632337985, -0.6504964265019547);
        close(z.sin(), 0.9053586344209573, -1.4058162504314684);
        close(z.cos(), 1.6572478640539148, 0.7680009178735728);
        close(z.tan(), 0.1261085664842344, -0.906724804319431);
        close(z.sinh(), 0.16431300276137265, -1.0700996973668526);
        close(z.cosh(), 0.355565683247121, -0.49451143013196674);
        close(z.tanh(), 1.5839635482844239, -0.8066346988510739);
        close(z.asin(), 0.30798137157211863, -1.0855765577207785);
        close(z.acos(), 1.262814955222778, 1.0855765577207785);
        close(z.atan(), 1.1265564408348223, -0.708303336014054);
        close(z.asinh(), 0.8988936293694824, -1.0611857724687428);
        close(z.acosh(), 1.0855765577207785, -1.262814955222778);
        close(z.atanh(), 0.1858945085467093, -0.9425141129396175);
        close(
            z.powc(Complex64::new(1.5, 0.25)),
            -0.2941542972143379,
            -2.0828315385147005,
        );
        close(z.sigmoid(), 0.6805661698086823, -0.32883527469514817);
        close(z.rsqrt(), 0.7136677874451546, 0.4831766156089769);
        close(z.recip(), 0.2758620689655173, 0.6896551724137931);
        close(z.sgn(), 0.3713906763541037, -0.9284766908852593);
        close(Complex64::new(-4.0, 0.0).sqrt(), 0.0, 2.0);
        close(Complex64::new(-4.0, -0.0).sqrt(), 0.0, -2.0);
    }

    #[test]
    fn arithmetic() {
        let a = Complex64::new(1.0, 2.0);
        let b = Complex64::new(3.0, -4.0);
        close(a * b, 11.0, 2.0);
        close(a / b, -0.2, 0.4);
        close(b / a, -1.0, -2.0);
        close(a - b, -2.0, 6.0);
        close(-a, -1.0, -2.0);
        close(a.conj(), 1.0, -2.0);
        assert_eq!(b.abs(), 5.0);
        close(b.sgn(), 0.6, -0.8);
        close(Complex64::zero().sgn(), 0.0, 0.0);
        // Division by zero as torch gives it: (1+0j)/0 = inf+nanj, (1+1j)/0 = inf+infj.
        let q = Complex64::new(1.0, 0.0) / Complex64::zero();
        assert!(q.re == f64::INFINITY && q.im.is_nan());
        let q = Complex64::new(1.0, 1.0) / Complex64::zero();
        assert!(q.re == f64::INFINITY && q.im == f64::INFINITY);
    }
}
