//! Compute types: each element type is loaded into one of `f32`, `f64`, `i64` or `bool` for
//! arithmetic and stored back with C-cast semantics. float16/bfloat16 compute in f32 as ATen
//! does; narrow integers compute in i64 and wrap when stored.

use half::{bf16, f16};

/// A type computations run in.
pub trait Num: Copy + Send + Sync + PartialOrd + 'static {
    /// Converts to f64.
    fn to_f64(self) -> f64;
    /// Converts from f64 (C cast).
    fn from_f64(v: f64) -> Self;
}

impl Num for f32 {
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}
impl Num for f64 {
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
}
impl Num for i64 {
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as i64
    }
}
impl Num for bool {
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
}

/// An element type loadable into compute type `C`.
pub trait Load<C>: Copy + Send + Sync + 'static {
    /// Element to compute type.
    fn load(self) -> C;
    /// Compute type to element (C cast, wrapping for narrow ints).
    fn store(c: C) -> Self;
}

macro_rules! identity_load {
    ($t:ty) => {
        impl Load<$t> for $t {
            #[inline(always)]
            fn load(self) -> $t {
                self
            }
            #[inline(always)]
            fn store(c: $t) -> $t {
                c
            }
        }
    };
}
identity_load!(f32);
identity_load!(f64);
identity_load!(i64);
identity_load!(bool);

macro_rules! int_load {
    ($t:ty) => {
        impl Load<i64> for $t {
            #[inline(always)]
            fn load(self) -> i64 {
                self as i64
            }
            #[inline(always)]
            fn store(c: i64) -> $t {
                c as $t
            }
        }
    };
}
int_load!(u8);
int_load!(i8);
int_load!(i16);
int_load!(i32);

impl Load<f32> for f16 {
    #[inline(always)]
    fn load(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn store(c: f32) -> f16 {
        f16::from_f32(c)
    }
}

impl Load<f32> for bf16 {
    #[inline(always)]
    fn load(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn store(c: f32) -> bf16 {
        bf16::from_f32(c)
    }
}
