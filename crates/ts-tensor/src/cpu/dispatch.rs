//! Macros that turn a runtime [`DType`](crate::DType) into a Rust element type for generic code.
//!
//! `dispatch_all!(dtype, T => expr)` evaluates `expr` with `T` aliased to the element type of
//! `dtype`. The narrower variants return an error naming the operation for dtypes they exclude.
//!
//! The macros without `_c` in their name never run their body for complex dtypes (they return
//! a "not implemented for 'ComplexFloat'" error instead), so generic bodies written for real
//! numbers (ordering, `to_f64`) cannot silently misbehave on complex tensors. Kernels that are
//! correct for complex elements use the `_c` variants, which add `Complex32`/`Complex64`.

/// Dispatches over every real dtype (bool, the integers including uint16/32/64, the floats);
/// complex dtypes give `Err(not_implemented(name, dtype))` (`name` defaults to
/// "this operation"), so the enclosing function must return `Result`.
macro_rules! dispatch_all {
    ($dt:expr, $T:ident => $body:expr) => {
        dispatch_all!($dt, "this operation", $T => $body)
    };
    ($dt:expr, $name:expr, $T:ident => $body:expr) => {{
        match $dt {
            $crate::DType::Complex64 | $crate::DType::Complex128 => {
                return Err($crate::cpu::dispatch::not_implemented($name, $dt).into())
            }
            $crate::DType::UInt16 => {
                #[allow(dead_code)]
                type $T = u16;
                $body
            }
            $crate::DType::UInt32 => {
                #[allow(dead_code)]
                type $T = u32;
                $body
            }
            $crate::DType::UInt64 => {
                #[allow(dead_code)]
                type $T = u64;
                $body
            }
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
            $crate::DType::UInt16 => {
                type $T = u16;
                $body
            }
            $crate::DType::UInt32 => {
                type $T = u32;
                $body
            }
            $crate::DType::UInt64 => {
                type $T = u64;
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

/// Dispatches over the real kernel compute dtypes: all but float16/bfloat16, which kernels
/// compute as float32 (see [`crate::cpu::iter::kernel_dtype`]; those two give an internal
/// error here) and the complex dtypes (a "not implemented" error, as [`dispatch_all!`]).
macro_rules! dispatch_compute {
    ($dt:expr, $T:ident => $body:expr) => {
        dispatch_compute!($dt, "this operation", $T => $body)
    };
    ($dt:expr, $name:expr, $T:ident => $body:expr) => {{
        match $dt {
            $crate::DType::Float16 | $crate::DType::BFloat16 => {
                return Err($crate::Error::runtime(
                    "internal error: half-precision kernel dtype",
                ))
            }
            $crate::DType::Complex64 | $crate::DType::Complex128 => {
                return Err($crate::cpu::dispatch::not_implemented($name, $dt).into())
            }
            $crate::DType::UInt16 => {
                type $T = u16;
                $body
            }
            $crate::DType::UInt32 => {
                type $T = u32;
                $body
            }
            $crate::DType::UInt64 => {
                type $T = u64;
                $body
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

/// Dispatches over every dtype, complex included, for kernels whose body is correct for complex
/// elements (copies, gathers, sums, products, equality).
macro_rules! dispatch_all_c {
    ($dt:expr, $T:ident => $body:expr) => {{
        match $dt {
            $crate::DType::Complex64 => {
                #[allow(dead_code)]
                type $T = $crate::complex::Complex32;
                $body
            }
            $crate::DType::Complex128 => {
                #[allow(dead_code)]
                type $T = $crate::complex::Complex64;
                $body
            }
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
            $crate::DType::UInt16 => {
                #[allow(dead_code)]
                type $T = u16;
                $body
            }
            $crate::DType::UInt32 => {
                #[allow(dead_code)]
                type $T = u32;
                $body
            }
            $crate::DType::UInt64 => {
                #[allow(dead_code)]
                type $T = u64;
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

/// [`dispatch_compute!`] plus the complex dtypes, for kernels whose body is correct for complex
/// elements.
macro_rules! dispatch_compute_c {
    ($dt:expr, $T:ident => $body:expr) => {{
        match $dt {
            $crate::DType::Complex64 => {
                type $T = $crate::complex::Complex32;
                $body
            }
            $crate::DType::Complex128 => {
                type $T = $crate::complex::Complex64;
                $body
            }
            other => dispatch_compute!(other, $T => $body),
        }
    }};
}

/// Dispatches over complex64 and complex128 only; others give an error naming `name`.
macro_rules! dispatch_complex {
    ($dt:expr, $name:expr, $T:ident => $body:expr) => {{
        match $dt {
            $crate::DType::Complex64 => {
                type $T = $crate::complex::Complex32;
                $body
            }
            $crate::DType::Complex128 => {
                type $T = $crate::complex::Complex64;
                $body
            }
            other => return Err($crate::cpu::dispatch::not_implemented($name, other)),
        }
    }};
}
