//! Rust types that can be tensor elements, tied to their [`DType`].

use half::{bf16, f16};

use crate::complex::{Complex32, Complex64};
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
    /// Converts to a complex number `(re, im)` (real types have no imaginary part).
    fn to_c64(self) -> (f64, f64) {
        (self.to_f64(), 0.0)
    }
    /// Converts from a complex number; real types keep the real part, as ATen's casts do.
    fn from_c64(re: f64, im: f64) -> Self {
        let _ = im;
        Self::from_f64(re)
    }
    /// Converts to u64 with C-cast semantics (exact for uint64 values above `i64::MAX`).
    fn to_u64(self) -> u64 {
        self.to_i64() as u64
    }
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
// uint16 goes through the 32-bit truncation like int16 (torch: -1e10 -> uint16 == 0), uint32
// through int64 (torch: 5e9 -> uint32 == 705032704).
int_element!(u16, DType::UInt16, f64_to_i32);
int_element!(u32, DType::UInt32, f64_to_i64);

impl Element for u64 {
    const DTYPE: DType = DType::UInt64;
    fn to_f64(self) -> f64 {
        self as f64
    }
    /// x86's float-to-uint64 sequence: values from 2^63 up convert exactly, negative values
    /// wrap through int64 (torch: -1.0 -> 18446744073709551615).
    fn from_f64(v: f64) -> Self {
        const TWO_63: f64 = (1u64 << 63) as f64;
        if (TWO_63..2.0 * TWO_63).contains(&v) {
            v as u64
        } else {
            f64_to_i64(v) as u64
        }
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn from_i64(v: i64) -> Self {
        v as u64
    }
    fn to_u64(self) -> u64 {
        self
    }
}

macro_rules! complex_element {
    ($t:ty, $part:ty, $d:expr) => {
        impl Element for $t {
            const DTYPE: DType = $d;
            /// The real part (ATen's complex-to-real casts drop the imaginary part).
            fn to_f64(self) -> f64 {
                self.re as f64
            }
            fn from_f64(v: f64) -> Self {
                <$t>::new(v as $part, 0.0)
            }
            fn to_i64(self) -> i64 {
                f64_to_i64(self.re as f64)
            }
            fn from_i64(v: i64) -> Self {
                <$t>::new(v as $part, 0.0)
            }
            fn to_c64(self) -> (f64, f64) {
                (self.re as f64, self.im as f64)
            }
            fn from_c64(re: f64, im: f64) -> Self {
                <$t>::new(re as $part, im as $part)
            }
        }
    };
}

complex_element!(Complex32, f32, DType::Complex64);
complex_element!(Complex64, f64, DType::Complex128);

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
    /// A complex number is true when either part is nonzero.
    fn from_c64(re: f64, im: f64) -> Self {
        re != 0.0 || im != 0.0
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsigned_casts_match_torch() {
        // torch 2.15: tensor([-1., 70000., -1e10]).to(uint16) == [65535, 4464, 0];
        // .to(uint32) == [4294967295, 705032704, 2884901888]; tensor([1e19]).to(uint64) ==
        // 9999999980506447872 (via float32); int64 -1 -> uint64 18446744073709551615.
        let u16s: Vec<u16> = [-1.0, 70000.0, -1e10]
            .iter()
            .map(|&v| u16::from_f64(v))
            .collect();
        assert_eq!(u16s, [65535, 4464, 0]);
        let u32s: Vec<u32> = [-1.0, 5e9, -1e10]
            .iter()
            .map(|&v| u32::from_f64(v))
            .collect();
        assert_eq!(u32s, [4294967295, 705032704, 2884901888]);
        assert_eq!(u64::from_f64(1e19f32 as f64), 9999999980506447872);
        assert_eq!(u64::from_i64(-1), u64::MAX);
        assert_eq!(u64::MAX.to_f64(), 18446744073709551615.0);
    }

    #[test]
    fn complex_casts_keep_the_real_part() {
        let z = Complex32::new(2.5, -1.0);
        assert_eq!(z.to_f64(), 2.5);
        assert_eq!(z.to_i64(), 2);
        assert_eq!(z.to_c64(), (2.5, -1.0));
        assert_eq!(Complex64::from_f64(3.0), Complex64::new(3.0, 0.0));
        assert_eq!(f32::from_c64(1.5, 9.0), 1.5);
    }
}
