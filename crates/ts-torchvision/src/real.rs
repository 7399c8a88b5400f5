//! The floating types torchvision's CPU kernels are instantiated for, and dispatch over them.

use ts_tensor::{Element, Error, Tensor};

/// `float` or `double`: a kernel's `scalar_t`.
pub(crate) trait Real:
    Element + num_traits::Float + std::ops::AddAssign + std::ops::DivAssign + std::fmt::Debug
{
}

impl Real for f32 {}
impl Real for f64 {}

/// `v` as `T` (C's `static_cast`).
pub(crate) fn r<T: Real>(v: f64) -> T {
    <T as Element>::from_f64(v)
}

/// `v` as a double (C's promotion in mixed comparisons).
pub(crate) fn d<T: Real>(v: T) -> f64 {
    <T as Element>::to_f64(v)
}

/// The error of `AT_DISPATCH_FLOATING_TYPES` for another dtype.
pub(crate) fn not_floating(kernel: &str, t: &Tensor) -> Error {
    Error::runtime(format!(
        "\"{kernel}\" not implemented for '{}'",
        t.dtype().scalar_type_name()
    ))
}

/// Checks the operator's dims-and-size precondition, with torchvision's message.
pub(crate) fn check(cond: bool, message: impl FnOnce() -> String) -> Result<(), Error> {
    if cond {
        Ok(())
    } else {
        Err(Error::runtime(message()))
    }
}
