//! Element-type dispatch: run generic code for a runtime [`DType`](crate::DType).

/// Expands `$body` once per dtype with `$T` bound to the element type.
#[macro_export]
macro_rules! dispatch_all {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
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
        }
    };
}

/// Expands `$body` per dtype with `$T` the element type and `$C` its compute type
/// (`f32` for float16/bfloat16/float32, `f64`, `i64` for integers, `bool`), choosing the
/// matching expression.
#[macro_export]
macro_rules! dispatch_compute {
    ($dtype:expr, $T:ident, $C:ident => float: $f:expr, int: $i:expr, bool: $b:expr) => {
        match $dtype {
            $crate::DType::Bool => {
                type $T = bool;
                #[allow(dead_code)]
                type $C = bool;
                $b
            }
            $crate::DType::UInt8 => {
                type $T = u8;
                #[allow(dead_code)]
                type $C = i64;
                $i
            }
            $crate::DType::Int8 => {
                type $T = i8;
                #[allow(dead_code)]
                type $C = i64;
                $i
            }
            $crate::DType::Int16 => {
                type $T = i16;
                #[allow(dead_code)]
                type $C = i64;
                $i
            }
            $crate::DType::Int32 => {
                type $T = i32;
                #[allow(dead_code)]
                type $C = i64;
                $i
            }
            $crate::DType::Int64 => {
                type $T = i64;
                #[allow(dead_code)]
                type $C = i64;
                $i
            }
            $crate::DType::Float16 => {
                type $T = half::f16;
                #[allow(dead_code)]
                type $C = f32;
                $f
            }
            $crate::DType::BFloat16 => {
                type $T = half::bf16;
                #[allow(dead_code)]
                type $C = f32;
                $f
            }
            $crate::DType::Float32 => {
                type $T = f32;
                #[allow(dead_code)]
                type $C = f32;
                $f
            }
            $crate::DType::Float64 => {
                type $T = f64;
                #[allow(dead_code)]
                type $C = f64;
                $f
            }
        }
    };
}
