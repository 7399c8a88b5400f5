//! The storage classes and dtype names that pickles use to say what a tensor's bytes hold.
//!
//! `torch.save` and `torch.jit.save` name a storage by its legacy typed class
//! (`torch.FloatStorage`, ...), or by `torch.storage.UntypedStorage` plus a `torch.<dtype>`
//! global for dtypes that have no typed class.

use ts_tensor::DType;

/// The element type of a storage as a pickle names it: either one this library computes with,
/// or one it recognises but cannot represent (quantized, complex32, float8).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ElementKind {
    Supported(DType),
    /// A real PyTorch dtype that ts-tensor has no counterpart for; the name is PyTorch's.
    Unsupported(&'static str),
}

/// What a storage global refers to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StorageClass {
    /// A legacy typed storage class such as `torch.FloatStorage`; its numel counts elements.
    Typed(ElementKind),
    /// `torch.storage.UntypedStorage`; its numel counts bytes and the dtype comes separately.
    Untyped,
}

/// Typed storage class names (`torch.<Name>`) and their element kinds.
const TYPED_CLASSES: &[(&str, ElementKind)] = &[
    ("FloatStorage", ElementKind::Supported(DType::Float32)),
    ("DoubleStorage", ElementKind::Supported(DType::Float64)),
    ("HalfStorage", ElementKind::Supported(DType::Float16)),
    ("BFloat16Storage", ElementKind::Supported(DType::BFloat16)),
    ("LongStorage", ElementKind::Supported(DType::Int64)),
    ("IntStorage", ElementKind::Supported(DType::Int32)),
    ("ShortStorage", ElementKind::Supported(DType::Int16)),
    ("CharStorage", ElementKind::Supported(DType::Int8)),
    ("ByteStorage", ElementKind::Supported(DType::UInt8)),
    ("BoolStorage", ElementKind::Supported(DType::Bool)),
    (
        "ComplexFloatStorage",
        ElementKind::Supported(DType::Complex64),
    ),
    (
        "ComplexDoubleStorage",
        ElementKind::Supported(DType::Complex128),
    ),
    // Quantized storages hold the integers of `_rebuild_qtensor` tensors.
    ("QUInt8Storage", ElementKind::Supported(DType::UInt8)),
    ("QInt8Storage", ElementKind::Supported(DType::Int8)),
    ("QInt32Storage", ElementKind::Supported(DType::Int32)),
    ("QUInt4x2Storage", ElementKind::Unsupported("quint4x2")),
    ("QUInt2x4Storage", ElementKind::Unsupported("quint2x4")),
];

/// `torch.<name>` dtype globals that ts-tensor cannot represent.
const UNSUPPORTED_DTYPES: &[&str] = &[
    "complex32",
    "chalf",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "quint8",
    "qint8",
    "qint32",
    "quint4x2",
    "quint2x4",
];

/// The storage class named `module.name`, if it is one.
pub fn storage_class(module: &str, name: &str) -> Option<StorageClass> {
    match (module, name) {
        ("torch", "UntypedStorage") | ("torch.storage", "UntypedStorage") => {
            Some(StorageClass::Untyped)
        }
        ("torch", _) => TYPED_CLASSES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, k)| StorageClass::Typed(k)),
        _ => None,
    }
}

/// The dtype named by the global `torch.<name>` (accepting PyTorch's aliases such as
/// `torch.float` and `torch.long`), if it is one.
pub fn dtype_global(module: &str, name: &str) -> Option<ElementKind> {
    if module != "torch" {
        return None;
    }
    if let Some(d) = DType::from_name(name) {
        return Some(ElementKind::Supported(d));
    }
    UNSUPPORTED_DTYPES
        .iter()
        .find(|n| **n == name)
        .map(|n| ElementKind::Unsupported(n))
}

/// The typed storage class name PyTorch writes for `dtype` (`FloatStorage` for float32), or
/// `None` for dtypes without one (uint16/32/64), which PyTorch writes as an `UntypedStorage`
/// viewed through `_rebuild_tensor_v3`.
pub fn typed_class_name(dtype: DType) -> Option<&'static str> {
    TYPED_CLASSES
        .iter()
        .find(|(_, k)| *k == ElementKind::Supported(dtype))
        .map(|(n, _)| *n)
}

/// The byte-swapping unit of a dtype's elements in big-endian records: the element size, or
/// the size of one part for complex dtypes.
pub fn swap_unit(dtype: DType) -> usize {
    if dtype.is_complex() {
        dtype.size() / 2
    } else {
        dtype.size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_classes_map_back() {
        for d in DType::ALL {
            match typed_class_name(d) {
                Some(name) => assert_eq!(
                    storage_class("torch", name),
                    Some(StorageClass::Typed(ElementKind::Supported(d)))
                ),
                None => assert!(d.is_barebones_unsigned(), "{d}"),
            }
        }
        assert_eq!(
            typed_class_name(DType::Complex64),
            Some("ComplexFloatStorage")
        );
        assert_eq!(swap_unit(DType::Complex128), 8);
    }

    #[test]
    fn lookups() {
        assert_eq!(
            storage_class("torch.storage", "UntypedStorage"),
            Some(StorageClass::Untyped)
        );
        assert_eq!(storage_class("torch", "system"), None);
        assert_eq!(storage_class("os", "FloatStorage"), None);
        assert_eq!(
            dtype_global("torch", "long"),
            Some(ElementKind::Supported(DType::Int64))
        );
        assert_eq!(
            dtype_global("torch", "uint16"),
            Some(ElementKind::Supported(DType::UInt16))
        );
        assert_eq!(
            dtype_global("torch", "cfloat"),
            Some(ElementKind::Supported(DType::Complex64))
        );
        assert_eq!(
            dtype_global("torch", "chalf"),
            Some(ElementKind::Unsupported("chalf"))
        );
        assert_eq!(dtype_global("torch", "Tensor"), None);
        assert_eq!(dtype_global("numpy", "float32"), None);
    }
}
