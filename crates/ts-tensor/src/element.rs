//! Rust types that can be tensor elements, tied to their [`DType`].

use half::{bf16, f16};

use crate::dtype::DType;

/// A Rust type stored in tensors of dtype [`Element::DTYPE`].
pub trait Element: Copy + Send + Sync + 'static {
    /// The dtype of tensors holding this type.
    const DTYPE: DType;
    /// Converts to f64 (bools are 0/1).
    fn to_f64(self) -> f64;
    /// Converts from f64 with C-cast semantics (PyTorch's `static_cast`).
    fn from_f64(v: f64) -> Self;
    /// Converts to i64 with C-cast semantics.
    fn to_i64(self) -> i64;
    /// Converts from i64 with C-cast semantics (wrapping for narrow integers).
    fn from_i64(v: i64) -> Self;
}

macro_rules! int_element {
    ($t:ty, $d:expr, $conv:path) => {
        impl Element for $t {
            const DTYPE: DType = $d;
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(v: f64) -> Self {
                $conv(v) as $t
            }
            fn to_i64(self) -> i64 {
                self as i64
            }
            fn from_i64(v: i64) -> Self {
                v as $t
            }
        }
    };
}

// uint8 goes through int64 (c10 does so explicitly); int8/int16/int32 through the x86 32-bit
// truncation, whose out-of-range result is INT_MIN (then narrowed): PyTorch on x86 gives
// `3e9 -> int16 == 0` and `300.7 -> int8 == 44` (checked with torch 2.15).
int_element!(u8, DType::UInt8, f64_to_i64);
int_element!(i8, DType::Int8, f64_to_i32);
int_element!(i16, DType::Int16, f64_to_i32);
int_element!(i32, DType::Int32, f64_to_i32);
int_element!(i64, DType::Int64, f64_to_i64);

/// Float to int64 as x86's `cvttsd2si` does: truncation, and `i64::MIN` for NaN and out of range
/// values (which is what PyTorch's C++ casts produce on x86).
pub fn f64_to_i64(v: f64) -> i64 {
    const TWO_63: f64 = (1u64 << 63) as f64;
    if v.is_nan() || !(-TWO_63..TWO_63).contains(&v) {
        i64::MIN
    } else {
        v as i64
    }
}

/// Float to int32 as x86's `cvttsd2si` (32-bit) does: `i32::MIN` for NaN and out of range values.
pub fn f64_to_i32(v: f64) -> i32 {
    if v.is_nan() || !(-2147483648.0..2147483648.0).contains(&v) {
        i32::MIN
    } else {
        v as i32
    }
}

impl Element for f32 {
    const DTYPE: DType = DType::Float32;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_i64(self) -> i64 {
        f64_to_i64(self as f64)
    }
    fn from_i64(v: i64) -> Self {
        v as f32
    }
}

impl Element for f64 {
    const DTYPE: DType = DType::Float64;
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_i64(self) -> i64 {
        f64_to_i64(self)
    }
    fn from_i64(v: i64) -> Self {
        v as f64
    }
}

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
}

impl Element for f16 {
    const DTYPE: DType = DType::Float16;
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
    fn from_f64(v: f64) -> Self {
        f16::from_f64(v)
    }
    fn to_i64(self) -> i64 {
        f64_to_i64(f16::to_f64(self))
    }
    fn from_i64(v: i64) -> Self {
        f16::from_f64(v as f64)
    }
}

impl Element for bf16 {
    const DTYPE: DType = DType::BFloat16;
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
    fn from_f64(v: f64) -> Self {
        bf16::from_f64(v)
    }
    fn to_i64(self) -> i64 {
        f64_to_i64(bf16::to_f64(self))
    }
    fn from_i64(v: i64) -> Self {
        bf16::from_f64(v as f64)
    }
}
