//! Macros that turn a runtime [`DType`](crate::DType) into a Rust element type for generic code.
//!
//! `dispatch_all!(dtype, T => expr)` evaluates `expr` with `T` aliased to the element type of
//! `dtype`. The narrower variants return an error naming the operation for dtypes they exclude.

/// Dispatches over all ten dtypes.
macro_rules! dispatch_all {
    ($dt:expr, $T:ident => $body:expr) => {{
        match $dt {
            $crate::DType::Bool => {
                #[allow(dead_code)]
                type $T = bool;
                $body
            }
            $crate::DType::UInt8 => {
                #[allow(dead_code)]
                type $T = u8;
                $body
            }
            $crate::DType::Int8 => {
                #[allow(dead_code)]
                type $T = i8;
                $body
            }
            $crate::DType::Int16 => {
                #[allow(dead_code)]
                type $T = i16;
                $body
            }
            $crate::DType::Int32 => {
                #[allow(dead_code)]
                type $T = i32;
                $body
            }
            $crate::DType::Int64 => {
                #[allow(dead_code)]
                type $T = i64;
                $body
            }
            $crate::DType::Float16 => {
                #[allow(dead_code)]
                type $T = half::f16;
                $body
            }
            $crate::DType::BFloat16 => {
                #[allow(dead_code)]
                type $T = half::bf16;
                $body
            }
            $crate::DType::Float32 => {
                #[allow(dead_code)]
                type $T = f32;
                $body
            }
            $crate::DType::Float64 => {
                #[allow(dead_code)]
                type $T = f64;
                $body
            }
        }
    }};
}

/// Dispatches over the four floating dtypes; others give `Err(not_implemented(name, dtype))`.
macro_rules! dispatch_float {
    ($dt:expr, $name:expr, $T:ident => $body:expr) => {{
        match $dt {
            $crate::DType::Float16 => {
                type $T = half::f16;
                $body
            }
            $crate::DType::BFloat16 => {
                type $T = half::bf16;
                $body
            }
            $crate::DType::Float32 => {
                type $T = f32;
                $body
            }
            $crate::DType::Float64 => {
                type $T = f64;
                $body
            }
            other => return Err($crate::cpu::dispatch::not_implemented($name, other)),
        }
    }};
}

/// Dispatches over the integer dtypes (no bool); others give an error.
macro_rules! dispatch_int {
    ($dt:expr, $name:expr, $T:ident => $body:expr) => {{
        match $dt {
            $crate::DType::UInt8 => {
                type $T = u8;
                $body
            }
            $crate::DType::Int8 => {
                type $T = i8;
                $body
            }
            $crate::DType::Int16 => {
                type $T = i16;
                $body
            }
            $crate::DType::Int32 => {
                type $T = i32;
                $body
            }
            $crate::DType::Int64 => {
                type $T = i64;
                $body
            }
            other => return Err($crate::cpu::dispatch::not_implemented($name, other)),
        }
    }};
}

/// The error PyTorch gives when a kernel has no implementation for a dtype, e.g.
/// `"exp_vml_cpu" not implemented for 'Long'`.
pub(crate) fn not_implemented(name: &str, dtype: crate::DType) -> crate::Error {
    crate::Error::new(
        crate::ErrorKind::NotImplementedError,
        format!(
            "\"{name}\" not implemented for '{}'",
            dtype.scalar_type_name()
        ),
    )
}

/// Dispatches over the kernel compute dtypes: all but float16/bfloat16, which kernels compute as
/// float32 (see [`crate::cpu::iter::kernel_dtype`]); those two give an internal error here.
macro_rules! dispatch_compute {
    ($dt:expr, $T:ident => $body:expr) => {{
        match $dt {
            $crate::DType::Float16 | $crate::DType::BFloat16 => {
                return Err($crate::Error::runtime(
                    "internal error: half-precision kernel dtype",
                ))
            }
            $crate::DType::Bool => {
                type $T = bool;
                $body
            }
            $crate::DType::UInt8 => {
                type $T = u8;
                $body
            }
            $crate::DType::Int8 => {
                type $T = i8;
                $body
            }
            $crate::DType::Int16 => {
                type $T = i16;
                $body
            }
            $crate::DType::Int32 => {
                type $T = i32;
                $body
            }
            $crate::DType::Int64 => {
                type $T = i64;
                $body
            }
            $crate::DType::Float32 => {
                type $T = f32;
                $body
            }
            $crate::DType::Float64 => {
                type $T = f64;
                $body
            }
        }
    }};
}

/// Dispatches over float32 and float64 (the floating compute dtypes); others give an error.
macro_rules! dispatch_compute_float {
    ($dt:expr, $name:expr, $T:ident => $body:expr) => {{
        match $dt {
            $crate::DType::Float32 => {
                type $T = f32;
                $body
            }
            $crate::DType::Float64 => {
                type $T = f64;
                $body
            }
            other => return Err($crate::cpu::dispatch::not_implemented($name, other)),
        }
    }};
}
