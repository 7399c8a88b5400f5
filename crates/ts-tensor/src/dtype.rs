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
    /// `torch.complex64` (`ComplexFloat`): two float32 parts.
    Complex64 = 9,
    /// `torch.complex128` (`ComplexDouble`): two float64 parts.
    Complex128 = 10,
    Bool = 11,
    BFloat16 = 15,
    /// `torch.uint16`; like uint32 and uint64 a "barebones" dtype in PyTorch, which promotes only
    /// with itself and the floating dtypes.
    UInt16 = 27,
    UInt32 = 28,
    UInt64 = 29,
}

impl DType {
    /// Every supported dtype, in ScalarType order.
    pub const ALL: [DType; 15] = [
        DType::UInt8,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::Float16,
        DType::Float32,
        DType::Float64,
        DType::Complex64,
        DType::Complex128,
        DType::Bool,
        DType::BFloat16,
        DType::UInt16,
        DType::UInt32,
        DType::UInt64,
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
            DType::Int16 | DType::UInt16 | DType::Float16 | DType::BFloat16 => 2,
            DType::Int32 | DType::UInt32 | DType::Float32 => 4,
            DType::Int64 | DType::UInt64 | DType::Float64 | DType::Complex64 => 8,
            DType::Complex128 => 16,
        }
    }

    /// True for complex64 and complex128.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::Complex64 | DType::Complex128)
    }

    /// True for uint16, uint32 and uint64, the unsigned dtypes PyTorch supports only partially
    /// (no promotion with other integer dtypes).
    pub fn is_barebones_unsigned(self) -> bool {
        matches!(self, DType::UInt16 | DType::UInt32 | DType::UInt64)
    }

    /// The real dtype of a complex dtype's parts (complex64 → float32); others are returned
    /// unchanged (`toRealValueType`).
    pub fn to_real(self) -> DType {
        match self {
            DType::Complex64 => DType::Float32,
            DType::Complex128 => DType::Float64,
            other => other,
        }
    }

    /// The complex dtype with parts of this floating dtype (float32 → complex64, float64 →
    /// complex128; float16/bfloat16 → complex64, since complex32 is not supported here);
    /// complex dtypes are returned unchanged and others give `None` (`toComplexType`).
    pub fn to_complex(self) -> Option<DType> {
        match self {
            DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Complex64 => {
                Some(DType::Complex64)
            }
            DType::Float64 | DType::Complex128 => Some(DType::Complex128),
            _ => None,
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
            DType::UInt8
                | DType::Int8
                | DType::Int16
                | DType::Int32
                | DType::Int64
                | DType::UInt16
                | DType::UInt32
                | DType::UInt64
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
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
            DType::UInt16 => "uint16",
            DType::UInt32 => "uint32",
            DType::UInt64 => "uint64",
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
            DType::Complex64 => "ComplexFloat",
            DType::Complex128 => "ComplexDouble",
            DType::UInt16 => "UInt16",
            DType::UInt32 => "UInt32",
            DType::UInt64 => "UInt64",
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
            DType::Complex64 => "c10::complex<float>",
            DType::Complex128 => "c10::complex<double>",
            DType::UInt16 => "unsigned short",
            DType::UInt32 => "unsigned int",
            DType::UInt64 => "unsigned long",
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
            "complex64" | "cfloat" => DType::Complex64,
            "complex128" | "cdouble" => DType::Complex128,
            "uint16" => DType::UInt16,
            "uint32" => DType::UInt32,
            "uint64" => DType::UInt64,
            _ => return None,
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "torch.{}", self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_and_names_match_torch() {
        // torch 2.15: ScalarType numbers and str(dtype).
        let want = [
            (DType::Complex64, 9, "complex64", "ComplexFloat", 8),
            (DType::Complex128, 10, "complex128", "ComplexDouble", 16),
            (DType::UInt16, 27, "uint16", "UInt16", 2),
            (DType::UInt32, 28, "uint32", "UInt32", 4),
            (DType::UInt64, 29, "uint64", "UInt64", 8),
        ];
        for (d, n, name, st, size) in want {
            assert_eq!(d.scalar_type_index(), n);
            assert_eq!(DType::from_scalar_type_index(n), Some(d));
            assert_eq!(d.name(), name);
            assert_eq!(DType::from_name(name), Some(d));
            assert_eq!(DType::from_scalar_type_name(st), Some(d));
            assert_eq!(d.size(), size);
        }
        assert_eq!(DType::from_name("cfloat"), Some(DType::Complex64));
        assert!(!DType::Complex64.is_floating_point());
        assert!(DType::Complex64.is_complex());
        assert!(DType::UInt64.is_integral());
        assert_eq!(DType::Complex128.to_real(), DType::Float64);
        assert_eq!(DType::Float32.to_complex(), Some(DType::Complex64));
        assert_eq!(DType::Int64.to_complex(), None);
    }
}
