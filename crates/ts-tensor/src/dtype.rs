//! Element types (`torch.dtype`) and their numbering as TorchScript sees it.

use std::fmt;

/// A tensor element type. The discriminants are PyTorch's `ScalarType` numbers, which is what
/// TorchScript stores when a dtype is an `int` (e.g. `prim::Constant[value=6]` is `torch.float32`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
#[repr(u8)]
pub enum DType {
    UInt8 = 0,
    Int8 = 1,
    Int16 = 2,
    Int32 = 3,
    Int64 = 4,
    Float16 = 5,
    Float32 = 6,
    Float64 = 7,
    Bool = 11,
    BFloat16 = 15,
}

impl DType {
    /// Every supported dtype, in ScalarType order.
    pub const ALL: [DType; 10] = [
        DType::UInt8,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::Float16,
        DType::Float32,
        DType::Float64,
        DType::Bool,
        DType::BFloat16,
    ];

    /// PyTorch's `ScalarType` number (the `int` TorchScript uses for a dtype).
    pub fn scalar_type_index(self) -> i64 {
        self as u8 as i64
    }

    /// The dtype with the given `ScalarType` number, if this library supports it.
    pub fn from_scalar_type_index(i: i64) -> Option<DType> {
        DType::ALL
            .iter()
            .copied()
            .find(|d| d.scalar_type_index() == i)
    }

    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::UInt8 | DType::Int8 => 1,
            DType::Int16 | DType::Float16 | DType::BFloat16 => 2,
            DType::Int32 | DType::Float32 => 4,
            DType::Int64 | DType::Float64 => 8,
        }
    }

    /// True for float16, bfloat16, float32 and float64.
    pub fn is_floating_point(self) -> bool {
        matches!(
            self,
            DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64
        )
    }

    /// True for the signed and unsigned integer types (not bool).
    pub fn is_integral(self) -> bool {
        matches!(
            self,
            DType::UInt8 | DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64
        )
    }

    /// The name PyTorch prints after `torch.` (`float32`, `int64`, `bool`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::UInt8 => "uint8",
            DType::Int8 => "int8",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::Float16 => "float16",
            DType::BFloat16 => "bfloat16",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
        }
    }

    /// The ScalarType name used in IR tensor types (`Float(2, 3)`, `Long(...)`).
    pub fn scalar_type_name(self) -> &'static str {
        match self {
            DType::Bool => "Bool",
            DType::UInt8 => "Byte",
            DType::Int8 => "Char",
            DType::Int16 => "Short",
            DType::Int32 => "Int",
            DType::Int64 => "Long",
            DType::Float16 => "Half",
            DType::BFloat16 => "BFloat16",
            DType::Float32 => "Float",
            DType::Float64 => "Double",
        }
    }

    /// Parses a ScalarType name as printed in IR types (`Float`, `Long`, ...).
    pub fn from_scalar_type_name(s: &str) -> Option<DType> {
        DType::ALL
            .iter()
            .copied()
            .find(|d| d.scalar_type_name() == s)
    }

    /// The C++ type name ATen prints in some messages (`float`, `double`, `long int`).
    pub fn cpp_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::UInt8 => "unsigned char",
            DType::Int8 => "signed char",
            DType::Int16 => "short int",
            DType::Int32 => "int",
            DType::Int64 => "long int",
            DType::Float16 => "c10::Half",
            DType::BFloat16 => "c10::BFloat16",
            DType::Float32 => "float",
            DType::Float64 => "double",
        }
    }

    /// Parses a `torch.<name>` dtype name, accepting PyTorch's aliases (`float`, `long`, `half`, ...).
    pub fn from_name(s: &str) -> Option<DType> {
        Some(match s {
            "bool" => DType::Bool,
            "uint8" => DType::UInt8,
            "int8" => DType::Int8,
            "int16" | "short" => DType::Int16,
            "int32" | "int" => DType::Int32,
            "int64" | "long" => DType::Int64,
            "float16" | "half" => DType::Float16,
            "bfloat16" => DType::BFloat16,
            "float32" | "float" => DType::Float32,
            "float64" | "double" => DType::Float64,
            _ => return None,
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "torch.{}", self.name())
    }
}
