//! Unary elementwise operations: math functions, rounding, activations and predicates.
//!
//! Floating functions (`exp`, `sigmoid`, ...) promote integer and bool inputs to the default
//! dtype, as ATen's "int to float" unary ops do. Activations that ATen only implements for
//! floating types (`gelu`, `elu`, ...) reject integer inputs with ATen's message. Each op has an
//! in-place `op_` form; in-place float ops on integer tensors fail with the `can_cast` error.

// Generic comparison kernels are also instantiated for bool, where `<` is what we mean.
#![allow(clippy::bool_comparison)]

use crate::complex::Complex;
use crate::config::default_dtype;
use crate::cpu::dispatch::not_implemented;
use crate::cpu::iter::{kernel_dtype, kernels, ElementwiseIter};
use crate::cpu::num::{Elem, FloatMath, OpNum};
use crate::cpu::simd::simd_dispatch;
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::ops::binary::Dest;
use crate::scalar::Scalar;
use crate::tensor::Tensor;

/// A unary function on the floating op types, applied per element.
pub(crate) trait FloatFn: Sync {
    fn apply<F: FloatMath>(&self, x: F) -> F;
    /// Whether the function is defined for complex inputs (then [`FloatFn::apply_complex`]
    /// computes it); others reject complex tensors with ATen's "not implemented" error.
    const COMPLEX: bool = false;
    /// The function on a complex element (only called when [`FloatFn::COMPLEX`] is true).
    fn apply_complex<P: crate::complex::ComplexPart>(&self, z: Complex<P>) -> Complex<P> {
        z
    }
    /// A hand-vectorized kernel for contiguous `f32` runs (`dst[i] = f(src[i])`, in place or
    /// disjoint) when this CPU has one; `None` runs the generic loop.
    fn f32_kernel(&self) -> Option<unsafe fn(*const f32, *mut f32, usize)> {
        None
    }
}

pub(crate) fn map1<A: Elem, O: Elem>(it: &ElementwiseIter<2>, f: impl Fn(A) -> O + Sync) {
    it.plan.run(|p, s, n| {
        // SAFETY: the iterator's operands hold O (output) and A at the plan's strides.
        unsafe { kernels::unary::<A, O>(p, s, n, &f) }
    });
}

/// Float element types whose arithmetic happens in the element type itself (f32, f64): the
/// compute dtypes of [`float_unary`].
pub(crate) trait SelfFloat: Elem<Op = Self> + FloatMath {}
impl<T: Elem<Op = T> + FloatMath> SelfFloat for T {}

/// `o[i] = u(a[i])` over one run of the plan: contiguous runs (in place or into a disjoint
/// output) as slice loops the compiler vectorizes, anything else element by element.
///
/// # Safety
/// `p`/`s` must address `n` elements of `T` (output, input) at those byte strides, and no other
/// thread may touch the output run during the call.
#[inline(always)]
unsafe fn float_map_run<T: SelfFloat, U: FloatFn>(
    p: &[*mut u8; 2],
    s: &[isize; 2],
    n: usize,
    u: &U,
) {
    let sz = std::mem::size_of::<T>() as isize;
    if s[0] == sz && s[1] == sz {
        let (o, a) = (p[0] as *mut T, p[1] as *const T);
        if std::ptr::eq(o, a) {
            // SAFETY: the run holds `n` contiguous elements of `T` (output and input), which
            // nothing else touches during the call.
            let v = unsafe { std::slice::from_raw_parts_mut(o, n) };
            for x in v.iter_mut() {
                *x = u.apply(*x);
            }
            return;
        }
        let (olo, alo, bytes) = (o as usize, a as usize, n * sz as usize);
        if olo + bytes <= alo || alo + bytes <= olo {
            // SAFETY: two disjoint runs of `n` contiguous elements of `T`; the output run is
            // written by this call only.
            let (a, o) = unsafe {
                (
                    std::slice::from_raw_parts(a, n),
                    std::slice::from_raw_parts_mut(o, n),
                )
            };
            for (o, &a) in o.iter_mut().zip(a) {
                *o = u.apply(a);
            }
            return;
        }
    }
    // SAFETY: the operands hold `T` (output and input) at these strides (caller contract).
    unsafe { kernels::unary::<T, T>(p, s, n, &|a: T| u.apply(a)) }
}

simd_dispatch!(
    unsafe fn float_map_simd<T: SelfFloat, U: FloatFn>(
        p: &[*mut u8; 2],
        s: &[isize; 2],
        n: usize,
        u: &U,
    ) = float_map_run;
);

/// Runs a floating function over an iteration whose operands are both of type `T`.
/// Every run goes through a loop compiled for the widest vector ISA that calls
/// [`FloatFn::apply`] directly: through the generic closure-taking loops the function (a
/// polynomial `exp`, `tanh`, `erf`, ... once inlined) was too large to be inlined, so it ran out
/// of line per element; and the polynomials use fused multiply-adds, which the baseline
/// x86-64 target can only call out of line (strided runs are dispatched for that reason).
fn map_float<T: SelfFloat, U: FloatFn>(it: &ElementwiseIter<2>, u: &U) {
    let fast = if std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>() {
        u.f32_kernel()
    } else {
        None
    };
    it.plan.run(|p, s, n| {
        if let Some(k) = fast {
            let (o, a) = (p[0] as *mut f32, p[1] as *const f32);
            let (olo, alo, bytes) = (o as usize, a as usize, n * 4);
            let apart = olo + bytes <= alo || alo + bytes <= olo;
            if s[0] == 4 && s[1] == 4 && (std::ptr::eq(o, a) || apart) {
                // SAFETY: `T` is f32; the run holds `n` contiguous f32s (output and input),
                // equal or disjoint, and its output is written by this call only.
                unsafe { k(a, o, n) };
                return;
            }
            if s[0] != 4 || s[1] != 4 {
                // Strided: through a buffer, so every layout gets the kernel's values.
                // SAFETY: `T` is f32 and the run holds `n` f32s at these strides.
                unsafe { strided_through(k, p, s, n) };
                return;
            }
        }
        // SAFETY: the plan's runs hold `n` elements of `T` (output and input) at strides `s`,
        // and each run's output elements are written by this call only.
        unsafe { float_map_simd::<T, U>(p, s, n, u) }
    });
}

/// Runs the contiguous kernel `k` over a strided run of `n` f32s, 64 at a time: gathered into
/// a buffer, mapped in place, scattered to the output.
///
/// # Safety
/// `p`/`s` must address `n` f32s (output, input) at those byte strides, and no other thread
/// may touch the output run during the call.
unsafe fn strided_through(
    k: unsafe fn(*const f32, *mut f32, usize),
    p: &[*mut u8; 2],
    s: &[isize; 2],
    n: usize,
) {
    let mut buf = [0f32; 64];
    let mut done = 0;
    while done < n {
        let len = (n - done).min(buf.len());
        // SAFETY: element `done + i < n` of each operand lies at its stride (caller
        // contract); `buf` holds `len` values.
        unsafe {
            for (i, v) in buf[..len].iter_mut().enumerate() {
                *v = *(p[1].offset((done + i) as isize * s[1]) as *const f32);
            }
            k(buf.as_ptr(), buf.as_mut_ptr(), len);
            for (i, v) in buf[..len].iter().enumerate() {
                *(p[0].offset((done + i) as isize * s[0]) as *mut f32) = *v;
            }
        }
        done += len;
    }
}

/// Whether integer inputs are promoted (true) or rejected (false) by a float function.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum IntInputs {
    Promote,
    Reject,
}

/// Runs a floating function over `x` into `dest`.
pub(crate) fn float_unary<U: FloatFn>(
    x: &Tensor,
    dest: Dest<'_>,
    name: &str,
    ints: IntInputs,
    u: U,
) -> Result<Tensor> {
    let dt = x.dtype();
    if dt.is_complex() {
        if !U::COMPLEX {
            return Err(not_implemented(name, dt));
        }
        let out = dest.out(dt)?;
        let it = ElementwiseIter::<2>::new(out, dt, &[x])?;
        dispatch_complex!(dt, name, T => map1::<T, T>(&it, |a| u.apply_complex(a)));
        return it.finish();
    }
    let result = if dt.is_floating_point() {
        dt
    } else if ints == IntInputs::Promote {
        default_dtype()
    } else {
        return Err(not_implemented(name, dt));
    };
    let out = dest.out(result)?;
    let kd = kernel_dtype(result);
    let input = x.cast_if_needed(kd)?;
    let it = ElementwiseIter::<2>::new(out, kd, &[&input])?;
    dispatch_compute_float!(kd, name, T => map_float::<T, U>(&it, &u));
    it.finish()
}

macro_rules! float_fn {
    ($(#[$doc:meta])* $ty:ident, $method:ident, $inplace:ident, $kname:expr, $ints:expr, |$x:ident| $body:expr, complex |$z:ident| $cbody:expr) => {
        pub(crate) struct $ty;
        impl FloatFn for $ty {
            #[inline(always)]
            fn apply<F: FloatMath>(&self, $x: F) -> F {
                $body
            }
            const COMPLEX: bool = true;
            #[inline(always)]
            fn apply_complex<P: crate::complex::ComplexPart>(&self, $z: Complex<P>) -> Complex<P> {
                $cbody
            }
        }
        float_fn!(@methods $(#[$doc])* $ty, $method, $inplace, $kname, $ints);
    };
    ($(#[$doc:meta])* $ty:ident, $method:ident, $inplace:ident, $kname:expr, $ints:expr, |$x:ident| $body:expr) => {
        pub(crate) struct $ty;
        impl FloatFn for $ty {
            #[inline(always)]
            fn apply<F: FloatMath>(&self, $x: F) -> F {
                $body
            }
        }
        float_fn!(@methods $(#[$doc])* $ty, $method, $inplace, $kname, $ints);
    };
    (@methods $(#[$doc:meta])* $ty:ident, $method:ident, $inplace:ident, $kname:expr, $ints:expr) => {
        impl Tensor {
            $(#[$doc])*
            pub fn $method(&self) -> Result<Tensor> {
                float_unary(self, Dest::New, $kname, $ints, $ty)
            }
            #[doc = concat!("In-place `", stringify!($method), "_`.")]
            pub fn $inplace(&self) -> Result<()> {
                float_unary(self, Dest::InPlace(self), $kname, $ints, $ty).map(|_| ())
            }
        }
    };
}

use IntInputs::{Promote, Reject};

fn c<F: FloatMath>(v: f64) -> F {
    F::from_f64(v)
}

float_fn!(/// `exp(x)`.
    Exp, exp, exp_, "exp_vml_cpu", Promote, |x| x.exp(), complex |z| z.exp());
float_fn!(/// `2 ** x`.
    Exp2, exp2, exp2_, "exp2_vml_cpu", Promote, |x| x.exp2(), complex |z| z.scale(<P as crate::complex::ComplexPart>::from_f64(std::f64::consts::LN_2)).exp());
float_fn!(/// `exp(x) - 1`, accurate near 0.
    Expm1, expm1, expm1_, "expm1_vml_cpu", Promote, |x| x.exp_m1(), complex |z| z.exp() - Complex::one());
float_fn!(/// Natural logarithm.
    Log, log, log_, "log_vml_cpu", Promote, |x| x.ln(), complex |z| z.ln());
float_fn!(/// Base-2 logarithm.
    Log2, log2, log2_, "log2_vml_cpu", Promote, |x| x.log2(), complex |z| z.ln().scale(<P as crate::complex::ComplexPart>::from_f64(std::f64::consts::LOG2_E)));
float_fn!(/// Base-10 logarithm.
    Log10, log10, log10_, "log10_vml_cpu", Promote, |x| x.log10(), complex |z| z.ln().scale(<P as crate::complex::ComplexPart>::from_f64(std::f64::consts::LOG10_E)));
float_fn!(/// `log(1 + x)`, accurate near 0.
    Log1p, log1p, log1p_, "log1p_vml_cpu", Promote, |x| x.ln_1p(), complex |z| (z + Complex::one()).ln());
float_fn!(/// Square root.
    Sqrt, sqrt, sqrt_, "sqrt_vml_cpu", Promote, |x| x.sqrt(), complex |z| z.sqrt());
float_fn!(/// `1 / sqrt(x)`.
    Rsqrt, rsqrt, rsqrt_, "rsqrt_cpu", Promote, |x| F::one() / x.sqrt(), complex |z| z.rsqrt());
float_fn!(/// `1 / x`.
    Reciprocal, reciprocal, reciprocal_, "reciprocal_cpu", Promote, |x| F::one() / x, complex |z| z.recip());
float_fn!(/// Sine.
    Sin, sin, sin_, "sin_vml_cpu", Promote, |x| x.sin(), complex |z| z.sin());
float_fn!(/// Cosine.
    Cos, cos, cos_, "cos_vml_cpu", Promote, |x| x.cos(), complex |z| z.cos());
float_fn!(/// Tangent.
    Tan, tan, tan_, "tan_vml_cpu", Promote, |x| x.tan(), complex |z| z.tan());
float_fn!(/// Arcsine.
    Asin, asin, asin_, "asin_vml_cpu", Promote, |x| x.asin(), complex |z| z.asin());
float_fn!(/// Arccosine.
    Acos, acos, acos_, "acos_vml_cpu", Promote, |x| x.acos(), complex |z| z.acos());
float_fn!(/// Arctangent.
    Atan, atan, atan_, "atan_vml_cpu", Promote, |x| x.atan(), complex |z| z.atan());
float_fn!(/// Hyperbolic sine.
    Sinh, sinh, sinh_, "sinh_vml_cpu", Promote, |x| x.sinh(), complex |z| z.sinh());
float_fn!(/// Hyperbolic cosine.
    Cosh, cosh, cosh_, "cosh_vml_cpu", Promote, |x| x.cosh(), complex |z| z.cosh());
float_fn!(/// Hyperbolic tangent.
    Tanh, tanh, tanh_, "tanh_vml_cpu", Promote, |x| x.tanh(), complex |z| z.tanh());
float_fn!(/// Inverse hyperbolic sine.
    Asinh, asinh, asinh_, "asinh_cpu", Promote, |x| x.asinh(), complex |z| z.asinh());
float_fn!(/// Inverse hyperbolic cosine.
    Acosh, acosh, acosh_, "acosh_cpu", Promote, |x| x.acosh(), complex |z| z.acosh());
float_fn!(/// Inverse hyperbolic tangent.
    Atanh, atanh, atanh_, "atanh_cpu", Promote, |x| x.atanh(), complex |z| z.atanh());
float_fn!(/// Logistic sigmoid `1 / (1 + exp(-x))`.
    Sigmoid, sigmoid, sigmoid_, "sigmoid_cpu", Promote, |x| F::one() / (F::one() + (-x).exp()), complex |z| z.sigmoid());
float_fn!(/// Error function.
    Erf, erf, erf_, "erf_vml_cpu", Promote, |x| x.erf());
float_fn!(/// Complementary error function.
    Erfc, erfc, erfc_, "erfc_vml_cpu", Promote, |x| x.erfc());
float_fn!(/// Inverse error function.
    Erfinv, erfinv, erfinv_, "erfinv_cpu", Promote, |x| F::from_f64(erfinv_f64(x.to_f64())));
float_fn!(/// Fractional part `x - trunc(x)`.
    Frac, frac, frac_, "frac_cpu", Reject, |x| x - x.trunc());
float_fn!(/// SiLU (swish): `x * sigmoid(x)`.
    Silu, silu, silu_, "silu_cpu", Reject, |x| x / (F::one() + (-x).exp()), complex |z| z * z.sigmoid());
float_fn!(/// Mish: `x * tanh(softplus(x))`.
    Mish, mish, mish_, "mish_cpu", Reject, |x| x * x.exp().ln_1p().tanh());
float_fn!(/// SELU with PyTorch's constants.
Selu, selu, selu_, "elu_cpu", Reject, |x| {
    let scale: F = c(1.050_700_987_355_480_5);
    let alpha: F = c(1.673_263_242_354_377_3);
    if x > F::zero() { x * scale } else { x.exp_m1() * alpha * scale }
});
float_fn!(/// Hard sigmoid: `clamp(x + 3, 0, 6) / 6`.
Hardsigmoid, hardsigmoid, hardsigmoid_, "hardsigmoid_cpu", Reject, |x| {
    let six: F = c(6.0);
    clampf(x + c(3.0), F::zero(), six) / six
});
float_fn!(/// Hard swish: `x * clamp(x + 3, 0, 6) / 6`.
Hardswish, hardswish, hardswish_, "hardswish_cpu", Reject, |x| {
    let six: F = c(6.0);
    x * clampf(x + c(3.0), F::zero(), six) / six
});
float_fn!(/// `log(sigmoid(x))`, computed stably.
LogSigmoid, log_sigmoid, log_sigmoid_, "log_sigmoid_cpu", Reject, |x| {
    let m = if x < F::zero() { x } else { F::zero() };
    m - (-x.wabs()).exp().ln_1p()
});

#[inline(always)]
fn clampf<F: FloatMath>(x: F, lo: F, hi: F) -> F {
    if x.is_nan() {
        x
    } else if x < lo {
        lo
    } else if x > hi {
        hi
    } else {
        x
    }
}

/// GELU with the tanh approximation. The two forms are separate kernels (not one with a flag)
/// so that each per-element function stays small enough to be inlined into the vectorized
/// loop; with both behind a run-time flag it was called out of line, one element at a time.
struct GeluTanh;
impl FloatFn for GeluTanh {
    #[inline(always)]
    fn apply<F: FloatMath>(&self, x: F) -> F {
        let half: F = c(0.5);
        let k: F = c(0.7978845608028654); // sqrt(2 / pi)
        let inner = k * (x + c::<F>(0.044715) * x * x * x);
        half * x * (F::one() + inner.tanh())
    }
}

/// GELU with the exact (erf) formulation.
struct GeluErf;
impl FloatFn for GeluErf {
    #[inline(always)]
    fn apply<F: FloatMath>(&self, x: F) -> F {
        let half: F = c(0.5);
        let inv_sqrt2: F = c(std::f64::consts::FRAC_1_SQRT_2);
        let r = x * half * (F::one() + (x * inv_sqrt2).erf());
        // torch 2.15 gives NaN for gelu(±inf) with the erf formulation.
        if x.wabs() == F::from_f64(f64::INFINITY) {
            F::from_f64(f64::NAN)
        } else {
            r
        }
    }
    fn f32_kernel(&self) -> Option<unsafe fn(*const f32, *mut f32, usize)> {
        crate::cpu::gelu::kernel()
    }
}

struct Elu {
    alpha: f64,
    scale: f64,
    input_scale: f64,
}
impl FloatFn for Elu {
    #[inline(always)]
    fn apply<F: FloatMath>(&self, x: F) -> F {
        if x <= F::zero() {
            (x * c(self.input_scale)).exp_m1() * c(self.alpha) * c(self.scale)
        } else {
            x * c(self.scale)
        }
    }
}

struct LeakyRelu(f64);
impl FloatFn for LeakyRelu {
    #[inline(always)]
    fn apply<F: FloatMath>(&self, x: F) -> F {
        if x > F::zero() {
            x
        } else {
            x * c(self.0)
        }
    }
}

struct Softplus {
    beta: f64,
    threshold: f64,
}
impl FloatFn for Softplus {
    #[inline(always)]
    fn apply<F: FloatMath>(&self, x: F) -> F {
        let b: F = c(self.beta);
        if x * b > c(self.threshold) {
            x
        } else {
            (x * b).exp().ln_1p() / b
        }
    }
}

struct Logit(Option<f64>);
impl FloatFn for Logit {
    #[inline(always)]
    fn apply<F: FloatMath>(&self, x: F) -> F {
        let z = match self.0 {
            Some(eps) => clampf(x, c(eps), c(1.0 - eps)),
            None => x,
        };
        (z / (F::one() - z)).ln()
    }
}

struct RoundDecimals(i64);
impl FloatFn for RoundDecimals {
    #[inline(always)]
    fn apply<F: FloatMath>(&self, x: F) -> F {
        if self.0 < 0 {
            let p: F = c(10f64.powi((-self.0) as i32));
            (x / p).round_even() * p
        } else {
            let p: F = c(10f64.powi(self.0 as i32));
            (x * p).round_even() / p
        }
    }
}

/// `erfinv` in double precision: Giles' approximation refined by two Newton steps.
pub(crate) fn erfinv_f64(y: f64) -> f64 {
    if y.is_nan() || !(-1.0..=1.0).contains(&y) {
        return f64::NAN;
    }
    if y == 1.0 {
        return f64::INFINITY;
    }
    if y == -1.0 {
        return f64::NEG_INFINITY;
    }
    let mut w = -((1.0 - y) * (1.0 + y)).ln();
    let p = if w < 5.0 {
        w -= 2.5;
        let mut p = 2.81022636e-08;
        for k in [
            3.43273939e-07,
            -3.5233877e-06,
            -4.39150654e-06,
            0.00021858087,
            -0.00125372503,
            -0.00417768164,
            0.246640727,
            1.50140941,
        ] {
            p = k + p * w;
        }
        p
    } else {
        w = w.sqrt() - 3.0;
        let mut p = -0.000200214257;
        for k in [
            0.000100950558,
            0.00134934322,
            -0.00367342844,
            0.00573950773,
            -0.0076224613,
            0.00943887047,
            1.00167406,
            2.83297682,
        ] {
            p = k + p * w;
        }
        p
    };
    let mut x = p * y;
    let two_over_sqrt_pi = 2.0 / std::f64::consts::PI.sqrt();
    for _ in 0..2 {
        let err = libm::erf(x) - y;
        x -= err / (two_over_sqrt_pi * (-x * x).exp());
    }
    x
}

/// Applies `f` to every element keeping the dtype (for ops defined on all numeric dtypes).
fn same_dtype_unary(
    x: &Tensor,
    dest: Dest<'_>,
    name: &str,
    allow_bool: bool,
    f: impl for<'a> Fn(&'a ElementwiseIter<2>, DType) -> Result<()>,
) -> Result<Tensor> {
    let dt = x.dtype();
    if dt == DType::Bool && !allow_bool {
        return Err(not_implemented(name, dt));
    }
    let out = dest.out(dt)?;
    let it = ElementwiseIter::<2>::new(out, dt, &[x])?;
    f(&it, dt)?;
    it.finish()
}

macro_rules! same_dtype_op {
    ($(#[$doc:meta])* $method:ident, $inplace:ident, $name:expr, $allow_bool:expr, |$it:ident, $dt:ident| $body:expr) => {
        impl Tensor {
            $(#[$doc])*
            pub fn $method(&self) -> Result<Tensor> {
                same_dtype_unary(self, Dest::New, $name, $allow_bool, |$it, $dt| { $body; Ok(()) })
            }
            #[doc = concat!("In-place `", stringify!($method), "_`.")]
            pub fn $inplace(&self) -> Result<()> {
                same_dtype_unary(self, Dest::InPlace(self), $name, $allow_bool, |$it, $dt| { $body; Ok(()) }).map(|_| ())
            }
        }
    };
}

impl Tensor {
    /// Absolute value (wrapping for the most negative integer, as in C); the magnitude `|z|`
    /// (a real tensor) for complex inputs.
    pub fn abs(&self) -> Result<Tensor> {
        if self.dtype() == DType::Complex64 {
            // Widened to f64, squares of f32 parts cannot overflow: no need for hypot's scaling.
            return complex_to_real(self, "abs_cpu", |z| {
                if z.re.is_infinite() || z.im.is_infinite() {
                    f64::INFINITY
                } else {
                    (z.re * z.re + z.im * z.im).sqrt()
                }
            });
        }
        if self.dtype().is_complex() {
            return complex_to_real(self, "abs_cpu", |z| z.abs());
        }
        same_dtype_unary(self, Dest::New, "abs_cpu", false, |it, dt| {
            dispatch_all!(dt, "abs_cpu", T => map1::<T, T>(it, |a| T::from_op(a.op().wabs())));
            Ok(())
        })
    }

    /// In-place `abs_` (not defined for complex tensors, whose magnitude is real).
    pub fn abs_(&self) -> Result<()> {
        if self.dtype().is_complex() {
            return Err(Error::runtime(
                "In-place abs is not supported for complex tensors.",
            ));
        }
        same_dtype_unary(self, Dest::InPlace(self), "abs_cpu", false, |it, dt| {
            dispatch_all!(dt, "abs_cpu", T => map1::<T, T>(it, |a| T::from_op(a.op().wabs())));
            Ok(())
        })
        .map(|_| ())
    }

    /// `sgn`: `z / |z|` (0 for 0) for complex inputs, `sign` for real ones.
    pub fn sgn(&self) -> Result<Tensor> {
        if !self.dtype().is_complex() {
            return self.sign();
        }
        same_dtype_unary(self, Dest::New, "sgn_cpu", false, |it, dt| {
            dispatch_complex!(dt, "sgn_cpu", T => map1::<T, T>(it, |a| a.sgn()));
            Ok(())
        })
    }

    /// In-place `sgn_`.
    pub fn sgn_(&self) -> Result<()> {
        if !self.dtype().is_complex() {
            return self.sign_();
        }
        same_dtype_unary(self, Dest::InPlace(self), "sgn_cpu", false, |it, dt| {
            dispatch_complex!(dt, "sgn_cpu", T => map1::<T, T>(it, |a| a.sgn()));
            Ok(())
        })
        .map(|_| ())
    }
}

/// A real tensor (the complex dtype's part type) computed from each complex element.
pub(crate) fn complex_to_real(
    x: &Tensor,
    name: &str,
    f: impl Fn(crate::complex::Complex64) -> f64 + Sync + Copy,
) -> Result<Tensor> {
    let dt = x.dtype();
    let rd = dt.to_real();
    let it = ElementwiseIter::<2>::new(crate::cpu::iter::Out::New(rd), rd, &[x])?;
    match dt {
        DType::Complex64 => map1::<crate::complex::Complex32, f32>(&it, move |z| {
            f(crate::complex::Complex64::new(z.re as f64, z.im as f64)) as f32
        }),
        DType::Complex128 => map1::<crate::complex::Complex64, f64>(&it, f),
        other => return Err(not_implemented(name, other)),
    }
    it.finish()
}
same_dtype_op!(/// Rounds down (integers are returned unchanged).
    floor, floor_, "floor_vml_cpu", false, |it, dt| round_like(it, dt, |x| x.floor())?);
same_dtype_op!(/// Rounds up.
    ceil, ceil_, "ceil_vml_cpu", false, |it, dt| round_like(it, dt, |x| x.ceil())?);
same_dtype_op!(/// Rounds half to even.
    round, round_, "round_vml_cpu", false, |it, dt| round_like(it, dt, |x| x.round_even())?);
same_dtype_op!(/// Rounds toward zero.
    trunc, trunc_, "trunc_vml_cpu", false, |it, dt| round_like(it, dt, |x| x.trunc())?);
same_dtype_op!(/// `x * x`.
    square_same, square_same_, "square", true, |it, dt| dispatch_all_c!(dt, T => map1::<T, T>(it, |a| T::from_op(a.op().mul(a.op())))));
same_dtype_op!(/// Sign: -1, 0 or 1 (0 for NaN), bool stays bool.
sign, sign_, "sign_cpu", true, |it, dt| {
    if dt.is_complex() {
        return Err(Error::runtime("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead."));
    }
    dispatch_all!(dt, T => map1::<T, T>(it, |a| {
    let x = a.op();
    let z = <<T as Elem>::Op as OpNum>::zero();
    if x > z { T::from_op(<<T as Elem>::Op as OpNum>::one()) } else if x < z { T::from_op(<<T as Elem>::Op as OpNum>::one().neg()) } else { T::from_op(z) }
}))});

fn round_like(
    it: &ElementwiseIter<2>,
    dt: DType,
    f: impl Fn(f64) -> f64 + Sync + Copy,
) -> Result<()> {
    match dt {
        DType::Float32 => map1::<f32, f32>(it, |a| {
            let g = |x: f32| -> f32 { f(x as f64) as f32 };
            g(a)
        }),
        DType::Float64 => map1::<f64, f64>(it, f),
        DType::Float16 => map1::<half::f16, half::f16>(it, |a| half::f16::from_f64(f(a.to_f64()))),
        DType::BFloat16 => {
            map1::<half::bf16, half::bf16>(it, |a| half::bf16::from_f64(f(a.to_f64())))
        }
        other => dispatch_all!(other, T => map1::<T, T>(it, |a| a)),
    }
    Ok(())
}

impl Tensor {
    /// `neg` (`-x`); rejected for bool like PyTorch.
    pub fn neg(&self) -> Result<Tensor> {
        self.neg_impl(Dest::New)
    }

    /// In-place `neg_`.
    pub fn neg_(&self) -> Result<()> {
        self.neg_impl(Dest::InPlace(self)).map(|_| ())
    }

    fn neg_impl(&self, dest: Dest<'_>) -> Result<Tensor> {
        if self.dtype() == DType::Bool {
            return Err(Error::new(
                ErrorKind::NotImplementedError,
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
            ));
        }
        same_dtype_unary(self, dest, "neg_cpu", false, |it, dt| {
            dispatch_all_c!(dt, T => map1::<T, T>(it, |a| T::from_op(a.op().neg())));
            Ok(())
        })
    }

    /// `square`: `x * x`; bool becomes int64 as `pow(x, 2)` does.
    pub fn square(&self) -> Result<Tensor> {
        if self.dtype() == DType::Bool {
            return self.to_dtype(DType::Int64, false)?.square_same();
        }
        self.square_same()
    }

    /// `relu`: `max(x, 0)`, for every dtype but bool.
    pub fn relu(&self) -> Result<Tensor> {
        self.relu_impl(Dest::New)
    }

    /// In-place `relu_`.
    pub fn relu_(&self) -> Result<()> {
        self.relu_impl(Dest::InPlace(self)).map(|_| ())
    }

    fn relu_impl(&self, dest: Dest<'_>) -> Result<Tensor> {
        if self.dtype() == DType::Bool {
            return Err(Error::new(
                ErrorKind::NotImplementedError,
                "Boolean inputs not supported for relu",
            ));
        }
        same_dtype_unary(self, dest, "relu", false, |it, dt| {
            dispatch_all!(dt, T => map1::<T, T>(it, |a| {
                let x = a.op();
                if x.is_nan() || x > <<T as Elem>::Op as OpNum>::zero() { a } else { T::from_op(<<T as Elem>::Op as OpNum>::zero()) }
            }));
            Ok(())
        })
    }

    /// `hardtanh(min_val, max_val)`: clamps to the range, keeping the dtype (also for integer
    /// dtypes, where the bounds are truncated).
    pub fn hardtanh(&self, min_val: Scalar, max_val: Scalar) -> Result<Tensor> {
        let dt = self.dtype();
        if dt == DType::Bool {
            return Err(not_implemented("hardtanh_cpu", DType::Bool));
        }
        let cast = |s: Scalar| {
            if dt.is_floating_point() {
                s
            } else {
                Scalar::Int(s.to_i64())
            }
        };
        self.clamp(Some(cast(min_val)), Some(cast(max_val)))?
            .to_dtype(dt, false)
    }

    /// In-place `hardtanh_`.
    pub fn hardtanh_(&self, min_val: Scalar, max_val: Scalar) -> Result<()> {
        let dt = self.dtype();
        if dt == DType::Bool {
            return Err(not_implemented("hardtanh_cpu", DType::Bool));
        }
        let cast = |s: Scalar| {
            if dt.is_floating_point() {
                s
            } else {
                Scalar::Int(s.to_i64())
            }
        };
        self.clamp_(Some(cast(min_val)), Some(cast(max_val)))
    }

    /// `relu6`: `hardtanh(x, 0, 6)`.
    pub fn relu6(&self) -> Result<Tensor> {
        self.hardtanh(Scalar::Int(0), Scalar::Int(6))
    }

    /// `gelu(approximate)`: `approximate` is `"none"` or `"tanh"`.
    pub fn gelu(&self, approximate: &str) -> Result<Tensor> {
        if parse_gelu(approximate)? {
            float_unary(self, Dest::New, "GeluKernelImpl", Reject, GeluTanh)
        } else {
            float_unary(self, Dest::New, "GeluKernelImpl", Reject, GeluErf)
        }
    }

    /// In-place `gelu_`.
    pub fn gelu_(&self, approximate: &str) -> Result<()> {
        let dest = Dest::InPlace(self);
        if parse_gelu(approximate)? {
            float_unary(self, dest, "GeluKernelImpl", Reject, GeluTanh).map(|_| ())
        } else {
            float_unary(self, dest, "GeluKernelImpl", Reject, GeluErf).map(|_| ())
        }
    }

    /// `elu(alpha, scale, input_scale)`: `x` for positive inputs, else
    /// `alpha * scale * (exp(x * input_scale) - 1)`; positive inputs are multiplied by `scale`.
    pub fn elu(&self, alpha: Scalar, scale: Scalar, input_scale: Scalar) -> Result<Tensor> {
        let e = Elu {
            alpha: alpha.to_f64(),
            scale: scale.to_f64(),
            input_scale: input_scale.to_f64(),
        };
        float_unary(self, Dest::New, "elu_cpu", Reject, e)
    }

    /// In-place `elu_`.
    pub fn elu_(&self, alpha: Scalar, scale: Scalar, input_scale: Scalar) -> Result<()> {
        let e = Elu {
            alpha: alpha.to_f64(),
            scale: scale.to_f64(),
            input_scale: input_scale.to_f64(),
        };
        float_unary(self, Dest::InPlace(self), "elu_cpu", Reject, e).map(|_| ())
    }

    /// `celu(alpha)`: `elu` with `input_scale = 1 / alpha`.
    pub fn celu(&self, alpha: Scalar) -> Result<Tensor> {
        let a = alpha.to_f64();
        if a == 0.0 {
            return Err(Error::runtime("ZeroDivisionError"));
        }
        self.elu(alpha, Scalar::Float(1.0), Scalar::Float(1.0 / a))
    }

    /// `leaky_relu(negative_slope)`.
    pub fn leaky_relu(&self, negative_slope: Scalar) -> Result<Tensor> {
        float_unary(
            self,
            Dest::New,
            "leaky_relu_cpu",
            Reject,
            LeakyRelu(negative_slope.to_f64()),
        )
    }

    /// In-place `leaky_relu_`.
    pub fn leaky_relu_(&self, negative_slope: Scalar) -> Result<()> {
        float_unary(
            self,
            Dest::InPlace(self),
            "leaky_relu_cpu",
            Reject,
            LeakyRelu(negative_slope.to_f64()),
        )
        .map(|_| ())
    }

    /// `softplus(beta, threshold)`: `log(1 + exp(beta * x)) / beta`, linear above `threshold`.
    pub fn softplus(&self, beta: Scalar, threshold: Scalar) -> Result<Tensor> {
        let s = Softplus {
            beta: beta.to_f64(),
            threshold: threshold.to_f64(),
        };
        float_unary(self, Dest::New, "softplus_cpu", Reject, s)
    }

    /// `logit(eps)`: `log(p / (1 - p))`, with `p` clamped to `[eps, 1 - eps]` when given.
    pub fn logit(&self, eps: Option<f64>) -> Result<Tensor> {
        float_unary(self, Dest::New, "logit_cpu", Promote, Logit(eps))
    }

    /// `round(decimals=d)`: rounds half to even at `d` decimal places (floating dtypes only).
    pub fn round_decimals(&self, decimals: i64) -> Result<Tensor> {
        if decimals == 0 {
            return self.round();
        }
        float_unary(
            self,
            Dest::New,
            "round_cpu",
            Reject,
            RoundDecimals(decimals),
        )
    }

    /// In-place `round_(decimals=d)`.
    pub fn round_decimals_(&self, decimals: i64) -> Result<()> {
        if decimals == 0 {
            return self.round_();
        }
        float_unary(
            self,
            Dest::InPlace(self),
            "round_cpu",
            Reject,
            RoundDecimals(decimals),
        )
        .map(|_| ())
    }

    /// `isnan`: a bool tensor, false for non-floating dtypes (a complex element is NaN when
    /// either part is).
    pub fn isnan(&self) -> Result<Tensor> {
        if self.dtype().is_complex() {
            return self.complex_predicate(|re, im| re.is_nan() || im.is_nan());
        }
        self.predicate(|x| x.is_nan())
    }

    /// `isinf`: a bool tensor (complex: either part infinite).
    pub fn isinf(&self) -> Result<Tensor> {
        if self.dtype().is_complex() {
            return self.complex_predicate(|re, im| re.is_infinite() || im.is_infinite());
        }
        self.predicate(|x| x.is_infinite())
    }

    /// `isfinite`: a bool tensor (complex: both parts finite).
    pub fn isfinite(&self) -> Result<Tensor> {
        if self.dtype().is_complex() {
            return self.complex_predicate(|re, im| re.is_finite() && im.is_finite());
        }
        self.predicate(|x| x.is_finite())
    }

    /// `isreal`: true where the imaginary part is zero (everywhere for real dtypes).
    pub fn isreal(&self) -> Result<Tensor> {
        if self.dtype().is_complex() {
            return self.complex_predicate(|_, im| im == 0.0);
        }
        let out = Tensor::zeros(&self.sizes(), DType::Bool)?;
        out.fill_(Scalar::Bool(true))?;
        Ok(out)
    }

    fn complex_predicate(&self, f: impl Fn(f64, f64) -> bool + Sync + Copy) -> Result<Tensor> {
        let it = ElementwiseIter::<2>::new(
            crate::cpu::iter::Out::New(DType::Bool),
            DType::Bool,
            &[self],
        )?;
        dispatch_complex!(self.dtype(), "complex predicate", T => map1::<T, bool>(&it, move |z| {
            let (re, im) = crate::Element::to_c64(z);
            f(re, im)
        }));
        it.finish()
    }

    /// `signbit`: true where the sign bit is set (including -0.0).
    pub fn signbit(&self) -> Result<Tensor> {
        self.predicate(|x| x.is_sign_negative())
    }

    fn predicate(&self, f: impl Fn(f64) -> bool + Sync + Copy) -> Result<Tensor> {
        let dt = self.dtype();
        let it = ElementwiseIter::<2>::new(
            crate::cpu::iter::Out::New(DType::Bool),
            DType::Bool,
            &[self],
        )?;
        dispatch_all!(dt, T => map1::<T, bool>(&it, move |a| f(a.to_f64())));
        it.finish()
    }

    /// `logical_not`: a bool tensor that is true where the input is zero.
    pub fn logical_not(&self) -> Result<Tensor> {
        let dt = self.dtype();
        let it = ElementwiseIter::<2>::new(
            crate::cpu::iter::Out::New(DType::Bool),
            DType::Bool,
            &[self],
        )?;
        dispatch_all_c!(dt, T => map1::<T, bool>(&it, |a| a.op() == <<T as Elem>::Op as OpNum>::zero()));
        it.finish()
    }

    /// In-place `logical_not_` (the result is cast to `self`'s dtype).
    pub fn logical_not_(&self) -> Result<()> {
        let r = self.logical_not()?;
        self.copy_(&r)
    }

    /// `bitwise_not` (`~`): integer complement, logical not for bool.
    pub fn bitwise_not(&self) -> Result<Tensor> {
        self.bitwise_not_impl(Dest::New)
    }

    /// In-place `bitwise_not_`.
    pub fn bitwise_not_(&self) -> Result<()> {
        self.bitwise_not_impl(Dest::InPlace(self)).map(|_| ())
    }

    fn bitwise_not_impl(&self, dest: Dest<'_>) -> Result<Tensor> {
        same_dtype_unary(self, dest, "bitwise_not_cpu", true, |it, dt| {
            if dt == DType::Bool {
                map1::<bool, bool>(it, |a| !a);
                return Ok(());
            }
            dispatch_int!(dt, "bitwise_not_cpu", T => map1::<T, T>(it, |a| <T as crate::Element>::from_i64(!crate::Element::to_i64(a))));
            Ok(())
        })
    }

    /// `nan_to_num(nan, posinf, neginf)`: replaces NaN (default 0) and infinities (default the
    /// dtype's largest finite values). Non-floating tensors are copied.
    pub fn nan_to_num(
        &self,
        nan: Option<f64>,
        posinf: Option<f64>,
        neginf: Option<f64>,
    ) -> Result<Tensor> {
        self.nan_to_num_impl(Dest::New, nan, posinf, neginf)
    }

    /// In-place `nan_to_num_`.
    pub fn nan_to_num_(
        &self,
        nan: Option<f64>,
        posinf: Option<f64>,
        neginf: Option<f64>,
    ) -> Result<()> {
        self.nan_to_num_impl(Dest::InPlace(self), nan, posinf, neginf)
            .map(|_| ())
    }

    fn nan_to_num_impl(
        &self,
        dest: Dest<'_>,
        nan: Option<f64>,
        posinf: Option<f64>,
        neginf: Option<f64>,
    ) -> Result<Tensor> {
        let nan = nan.unwrap_or(0.0);
        same_dtype_unary(self, dest, "nan_to_num", true, |it, dt| {
            let (max, min) = match dt {
                DType::Float16 => (65504.0, -65504.0),
                DType::BFloat16 => (half::bf16::MAX.to_f64(), half::bf16::MIN.to_f64()),
                DType::Float32 => (f32::MAX as f64, f32::MIN as f64),
                _ => (f64::MAX, f64::MIN),
            };
            let pos = posinf.unwrap_or(max);
            let neg = neginf.unwrap_or(min);
            if dt.is_floating_point() {
                dispatch_float!(dt, "nan_to_num", T => map1::<T, T>(it, move |a| {
                    let x = a.to_f64();
                    if x.is_nan() {
                        <T as crate::Element>::from_f64(nan)
                    } else if x == f64::INFINITY {
                        <T as crate::Element>::from_f64(pos)
                    } else if x == f64::NEG_INFINITY {
                        <T as crate::Element>::from_f64(neg)
                    } else {
                        a
                    }
                }));
            } else {
                dispatch_all!(dt, T => map1::<T, T>(it, |a| a));
            }
            Ok(())
        })
    }

    /// `positive` (`+x`): `self` itself; rejected for bool as in PyTorch.
    pub fn positive(&self) -> Result<Tensor> {
        if self.dtype() == DType::Bool {
            return Err(Error::runtime(
                "The `+` operator, on a bool tensor is not supported.",
            ));
        }
        Ok(self.clone())
    }
}

fn parse_gelu(approximate: &str) -> Result<bool> {
    match approximate {
        "none" => Ok(false),
        "tanh" => Ok(true),
        _ => Err(Error::runtime(
            "approximate argument must be either none or tanh.",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Tensor {
        Tensor::from_vec(v.to_vec(), &[v.len() as i64]).unwrap()
    }

    fn close(a: &[f32], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!(
                ((*x as f64) - y).abs() <= 1e-6 * (1.0 + y.abs()),
                "{x} vs {y}"
            );
        }
    }

    const X: [f32; 8] = [-3., -1., -0.5, 0., 0.5, 1., 3., 25.];

    #[test]
    fn vectorized_runs_match_the_per_element_function() {
        vectorized_runs_match();
    }

    #[test]
    fn avx2_runs_match_the_per_element_function() {
        // The inputs are small enough to run on this thread, where the override applies.
        crate::cpu::simd::with_avx2_only(vectorized_runs_match);
    }

    /// Exact GELU of one value as every layout computes it: the hand-vectorized kernel where
    /// this CPU (and the AVX2-only override) has one, else the per-element function.
    fn gelu_one(x: f32) -> f32 {
        match crate::cpu::gelu::kernel() {
            Some(k) => {
                let mut o = [0f32];
                // SAFETY: one readable and one writable f32; the kernel's CPU was detected.
                unsafe { k(&x, o.as_mut_ptr(), 1) };
                o[0]
            }
            None => GeluErf.apply(x),
        }
    }

    /// Bit-for-bit comparison of the dispatched kernels against the scalar function.
    fn vectorized_runs_match() {
        // Lengths around every vector width (4, 8 and 16 lanes), NaN/inf inside the runs,
        // fresh outputs, in-place updates and a strided (non-contiguous) input.
        let specials = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            1e-30,
            88.0,
            -104.0,
            0.999_999_94,
            -1.0,
            5.656_854,
            -5.7,
            f32::from_bits(3),
        ];
        for n in [0usize, 1, 7, 15, 16, 17, 31, 33, 64, 100] {
            let v: Vec<f32> = (0..n)
                .map(|i| {
                    if i % 7 == 3 {
                        specials[(i / 7) % specials.len()]
                    } else {
                        (i as f32 * 0.37).sin() * 6.0
                    }
                })
                .collect();
            let t = f32s(&v);
            let same = |got: Vec<f32>, f: &dyn Fn(f32) -> f32, what: &str| {
                for (i, (g, &x)) in got.iter().zip(&v).enumerate() {
                    let w = f(x);
                    assert!(
                        g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                        "{what} n={n} [{i}] of {x}: {g} vs {w}"
                    );
                }
            };
            same(t.gelu("none").unwrap().to_vec(), &gelu_one, "gelu");
            same(
                t.gelu("tanh").unwrap().to_vec(),
                &|x| GeluTanh.apply(x),
                "gelu tanh",
            );
            same(t.tanh().unwrap().to_vec(), &|x| Tanh.apply(x), "tanh");
            same(t.exp().unwrap().to_vec(), &|x| Exp.apply(x), "exp");
            let u = t.clone_tensor().unwrap();
            u.sigmoid_().unwrap();
            same(u.to_vec(), &|x| Sigmoid.apply(x), "sigmoid_");
            if n > 1 {
                let doubled = f32s(&v.iter().flat_map(|&x| [x, 0.0]).collect::<Vec<_>>());
                let strided = doubled.slice(0, Some(0), Some((2 * n) as i64), 2).unwrap();
                same(strided.gelu("none").unwrap().to_vec(), &gelu_one, "strided");
            }
        }
    }

    #[test]
    fn activations_match_torch() {
        // Values printed by torch 2.15 for F.<op>(tensor([-3,-1,-0.5,0,0.5,1,3,25])).tolist().
        let x = f32s(&X);
        close(
            &x.gelu("none").unwrap().to_vec(),
            &[
                -0.004050225019454956,
                -0.15865525603294373,
                -0.1542687714099884,
                0.0,
                0.3457312285900116,
                0.8413447141647339,
                2.9959497451782227,
                25.0,
            ],
        );
        close(
            &x.gelu("tanh").unwrap().to_vec(),
            &[
                -0.0036374330520629883,
                -0.15880799293518066,
                -0.1542859971523285,
                0.0,
                0.3457140028476715,
                0.8411920070648193,
                2.9963626861572266,
                25.0,
            ],
        );
        close(
            &x.elu(Scalar::Float(0.7), Scalar::Int(1), Scalar::Int(1))
                .unwrap()
                .to_vec(),
            &[
                -0.6651490330696106,
                -0.44248437881469727,
                -0.27542853355407715,
                0.0,
                0.5,
                1.0,
                3.0,
                25.0,
            ],
        );
        close(
            &x.selu().unwrap().to_vec(),
            &[
                -1.6705687046051025,
                -1.1113307476043701,
                -0.6917581558227539,
                0.0,
                0.5253505110740662,
                1.0507010221481323,
                3.1521029472351074,
                26.26752471923828,
            ],
        );
        close(
            &x.softplus(Scalar::Float(2.0), Scalar::Float(5.0))
                .unwrap()
                .to_vec(),
            &[
                0.0012378426035866141,
                0.06346400082111359,
                0.15663084387779236,
                0.3465735912322998,
                0.65663081407547,
                1.0634640455245972,
                3.0,
                25.0,
            ],
        );
        close(
            &x.hardsigmoid().unwrap().to_vec(),
            &[
                0.0,
                0.3333333432674408,
                0.4166666567325592,
                0.5,
                0.5833333134651184,
                0.6666666865348816,
                1.0,
                1.0,
            ],
        );
        close(
            &x.hardswish().unwrap().to_vec(),
            &[
                -0.0,
                -0.3333333432674408,
                -0.2083333283662796,
                0.0,
                0.2916666567325592,
                0.6666666865348816,
                3.0,
                25.0,
            ],
        );
        close(
            &x.mish().unwrap().to_vec(),
            &[
                -0.14564746618270874,
                -0.3034014403820038,
                -0.22074376046657562,
                0.0,
                0.37524524331092834,
                0.8650983572006226,
                2.98653507232666,
                25.0,
            ],
        );
        close(
            &x.log_sigmoid().unwrap().to_vec(),
            &[
                -3.0485873222351074,
                -1.3132617473602295,
                -0.9740769863128662,
                -0.6931471824645996,
                -0.4740769863128662,
                -0.3132616877555847,
                -0.04858735203742981,
                -1.3887943746404563e-11,
            ],
        );
        close(
            &x.silu().unwrap().to_vec(),
            &[
                -0.14227761328220367,
                -0.2689414322376251,
                -0.1887703388929367,
                0.0,
                0.3112296760082245,
                0.7310585975646973,
                2.857722520828247,
                25.0,
            ],
        );
        close(
            &x.leaky_relu(Scalar::Float(0.2)).unwrap().to_vec(),
            &[
                -0.6000000238418579,
                -0.20000000298023224,
                -0.10000000149011612,
                0.0,
                0.5,
                1.0,
                3.0,
                25.0,
            ],
        );
        close(
            &x.hardtanh(Scalar::Float(-0.5), Scalar::Float(2.0))
                .unwrap()
                .to_vec(),
            &[-0.5, -0.5, -0.5, 0.0, 0.5, 1.0, 2.0, 2.0],
        );
        assert_eq!(
            x.gelu("foo").unwrap_err().message,
            "approximate argument must be either none or tanh."
        );
    }

    #[test]
    fn integer_inputs() {
        let i = Tensor::from_vec(vec![-2i64, 0, 3], &[3]).unwrap();
        // torch: sigmoid(int) -> float32 [0.1192, 0.5, 0.9526]; sigmoid_ on int -> cast error
        let s = i.sigmoid().unwrap();
        assert_eq!(s.dtype(), DType::Float32);
        assert!((s.to_vec::<f32>()[0] - 0.11920292).abs() < 1e-6);
        assert_eq!(
            i.sigmoid_().unwrap_err().message,
            "result type Float can't be cast to the desired output type Long"
        );
        assert_eq!(
            i.gelu("none").unwrap_err().message,
            "\"GeluKernelImpl\" not implemented for 'Long'"
        );
        assert_eq!(i.relu().unwrap().to_vec::<i64>(), vec![0, 0, 3]);
        assert_eq!(i.floor().unwrap().to_vec::<i64>(), vec![-2, 0, 3]);
        assert_eq!(i.abs().unwrap().to_vec::<i64>(), vec![2, 0, 3]);
        assert_eq!(i.sign().unwrap().to_vec::<i64>(), vec![-1, 0, 1]);
        assert_eq!(i.bitwise_not().unwrap().to_vec::<i64>(), vec![1, -1, -4]);
        assert_eq!(
            i.logical_not().unwrap().to_vec::<bool>(),
            vec![false, true, false]
        );
        assert!(i.frac().is_err());
        let b = Tensor::from_vec(vec![true, false], &[2]).unwrap();
        assert_eq!(b.neg().unwrap_err().kind, ErrorKind::NotImplementedError);
        assert_eq!(
            b.relu().unwrap_err().message,
            "Boolean inputs not supported for relu"
        );
        assert_eq!(b.square().unwrap().to_vec::<i64>(), vec![1, 0]);
        // torch: abs(int8 -128) -> -128
        let m = Tensor::from_vec(vec![-128i8], &[1]).unwrap();
        assert_eq!(m.abs().unwrap().to_vec::<i64>(), vec![-128]);
    }

    #[test]
    fn rounding_and_special_values() {
        // torch: round([0.5, 1.5, 2.5, -2.5]) -> [0., 2., 2., -2.]
        assert_eq!(
            f32s(&[0.5, 1.5, 2.5, -2.5])
                .round()
                .unwrap()
                .to_vec::<f32>(),
            vec![0., 2., 2., -2.]
        );
        // torch: round([1234.5678, 1250.], decimals=-2) -> [1200., 1200.]
        assert_eq!(
            f32s(&[1234.5678, 1250.])
                .round_decimals(-2)
                .unwrap()
                .to_vec::<f32>(),
            vec![1200., 1200.]
        );
        let r = f32s(&[1.2345]).round_decimals(2).unwrap().to_vec::<f32>();
        assert!((r[0] - 1.23).abs() < 1e-6);
        // torch: sign([nan, -0., 0., -2.]) -> [0., 0., 0., -1.]
        assert_eq!(
            f32s(&[f32::NAN, -0.0, 0.0, -2.])
                .sign()
                .unwrap()
                .to_vec::<f32>(),
            vec![0., 0., 0., -1.]
        );
        let n = f32s(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1.])
            .nan_to_num(None, None, None)
            .unwrap();
        assert_eq!(n.to_vec::<f32>(), vec![0., f32::MAX, f32::MIN, 1.]);
        assert_eq!(
            f32s(&[-1.5, 2.25]).frac().unwrap().to_vec::<f32>(),
            vec![-0.5, 0.25]
        );
        let l = f32s(&[0., 0.3, 1.])
            .logit(Some(0.1))
            .unwrap()
            .to_vec::<f32>();
        assert!((l[0] + 2.1972246).abs() < 1e-5);
        assert_eq!(
            f32s(&[1.0, f32::NAN]).isnan().unwrap().to_vec::<bool>(),
            vec![false, true]
        );
    }

    #[test]
    fn erfinv_inverts_erf() {
        for &y in &[-0.999, -0.5, 0.0, 0.1, 0.9, 0.999999] {
            let x = erfinv_f64(y);
            assert!((libm::erf(x) - y).abs() < 1e-14, "{y}");
        }
        assert_eq!(erfinv_f64(1.0), f64::INFINITY);
        assert!(erfinv_f64(1.5).is_nan());
    }

    #[test]
    fn transcendental_values() {
        let x = f32s(&[0.5]);
        assert!((x.exp().unwrap().to_vec::<f32>()[0] - 1.6487213).abs() < 1e-6);
        assert!((x.tanh().unwrap().to_vec::<f32>()[0] - 0.46211716).abs() < 1e-6);
        assert!((x.erf().unwrap().to_vec::<f32>()[0] - 0.5204999).abs() < 1e-6);
        let h = Tensor::from_vec(vec![half::f16::from_f32(0.5)], &[1]).unwrap();
        assert_eq!(h.exp().unwrap().dtype(), DType::Float16);
        // The view sees an in-place update.
        let base = f32s(&[0., 1., 2., 3.]);
        base.slice(0, Some(2), None, 1).unwrap().exp_().unwrap();
        let v = base.to_vec::<f32>();
        assert_eq!(v[1], 1.0);
        assert!((v[3] - 3f32.exp()).abs() < 1e-4);
    }

    #[test]
    fn complex64_abs_matches_hypot_on_edge_values() {
        use crate::complex::Complex32;
        let (inf, nan) = (f32::INFINITY, f32::NAN);
        let zs = [
            (3.0, 4.0),
            (3.0e38, 3.0e38),
            (1.0e-40, -2.0e-40),
            (-0.0, 0.0),
            (inf, nan),
            (nan, -inf),
            (nan, 1.0),
            (1.1, -7.3),
        ];
        let t = Tensor::from_vec(
            zs.iter()
                .map(|&(r, i)| Complex32::new(r, i))
                .collect::<Vec<_>>(),
            &[8],
        )
        .unwrap();
        let got = t.abs().unwrap().to_vec::<f32>();
        for (&(r, i), g) in zs.iter().zip(got) {
            let want = (r as f64).hypot(i as f64) as f32;
            assert!(
                g == want || (g.is_nan() && want.is_nan()),
                "|{r}+{i}i|: {g} vs {want}"
            );
        }
    }
}
