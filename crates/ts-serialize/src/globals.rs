//! The allow-list: every global a PyTorch pickle may name, classified by what loading does with
//! it. A name not listed here is refused.
//!
//! The list is the union of what `torch.load(weights_only=True)` and TorchScript's C++
//! unpickler accept: tensor rebuild functions, storage classes, dtypes, a few containers and
//! scalars, the `torch.jit._pickle` helpers and `__torch__.*` user types (resolved by the module
//! importer).

use crate::pickle_value::GlobalName;
use crate::storage_kind::{dtype_global, storage_class, ElementKind, StorageClass};

/// A global on the allow-list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KnownGlobal {
    /// `torch._utils._rebuild_tensor(storage, offset, size, stride)` (old files).
    RebuildTensor,
    /// `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata])`.
    RebuildTensorV2,
    /// `torch._utils._rebuild_qtensor(storage, offset, size, stride, quantizer_params,
    /// requires_grad, hooks)`: a quantized tensor.
    RebuildQTensor,
    /// `torch._utils._rebuild_tensor_v3(storage, offset, size, stride, requires_grad, hooks, dtype[, metadata])`.
    RebuildTensorV3,
    /// `torch._utils._rebuild_parameter(data, requires_grad, hooks)`.
    RebuildParameter,
    /// `torch._utils._rebuild_parameter_with_state(data, requires_grad, hooks, state)`.
    RebuildParameterWithState,
    /// `torch._tensor._rebuild_from_type_v2(func, new_type, args, state)`.
    RebuildFromTypeV2,
    /// A tensor rebuild function for a layout this library lacks (quantized, sparse, nested,
    /// meta, wrapper subclasses); loading it is an error naming the feature.
    UnsupportedTensor(&'static str),
    /// `torch.Tensor` / `torch.nn.Parameter` as the `new_type` of `_rebuild_from_type_v2`.
    TensorClass,
    /// `collections.OrderedDict`.
    OrderedDict,
    /// `builtins.complex(real, imag)`.
    Complex,
    /// `torch.device(type[, index])`.
    Device,
    /// `torch.Size(tuple)`.
    Size,
    /// A storage class (`torch.FloatStorage`, `torch.storage.UntypedStorage`, ...).
    Storage(StorageClass),
    /// A dtype (`torch.float32`, `torch.long`, ...).
    Dtype(ElementKind),
    /// A quantization scheme (`torch.per_tensor_affine`, ...), whose value in TorchScript is
    /// its `QScheme` number.
    QScheme(i64),
    /// `torch.jit._pickle.restore_type_tag(container, type_string)`.
    RestoreTypeTag,
    /// `torch.jit._pickle.build_intlist` and friends: a list with a known element type.
    BuildList(SpecializedList),
    /// `torch.jit._pickle.build_tensor_from_id(id)`: a tensor from a table the caller holds.
    BuildTensorFromId,
    /// A value PyTorch can pickle but TorchScript has no type for (sets, slices, bytes).
    UnsupportedValue(&'static str),
    /// A TorchScript class, named tuple or enum (`__torch__.foo.Bar`), by qualified name.
    UserType(String),
    /// `__main__.TensorID` of the legacy `attributes.pkl`: an object whose BUILD state is an
    /// index into the archive's tensor table.
    LegacyTensorId,
    /// `__main__.IntList` of the legacy `attributes.pkl`: an object whose BUILD state is a
    /// `List[int]`.
    LegacyIntList,
}

/// The element type of a `torch.jit._pickle.build_*list` call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecializedList {
    Int,
    Double,
    Bool,
    Tensor,
}

/// Classifies `global`, or returns `None` when it is not on the allow-list.
pub fn classify(global: &GlobalName) -> Option<KnownGlobal> {
    use KnownGlobal as K;
    let (module, name) = (global.module.as_str(), global.name.as_str());
    if module == "__torch__" || module.starts_with("__torch__.") {
        return Some(K::UserType(format!("{module}.{name}")));
    }
    if let Some(s) = storage_class(module, name) {
        return Some(K::Storage(s));
    }
    if let Some(d) = dtype_global(module, name) {
        return Some(K::Dtype(d));
    }
    Some(match (module, name) {
        ("torch._utils", "_rebuild_tensor") => K::RebuildTensor,
        ("torch._utils", "_rebuild_tensor_v2") => K::RebuildTensorV2,
        ("torch._utils", "_rebuild_tensor_v3") => K::RebuildTensorV3,
        ("torch._utils", "_rebuild_parameter") => K::RebuildParameter,
        ("torch._utils", "_rebuild_parameter_with_state") => K::RebuildParameterWithState,
        ("torch._tensor", "_rebuild_from_type_v2") => K::RebuildFromTypeV2,
        ("torch._utils", "_rebuild_qtensor") => K::RebuildQTensor,
        ("torch._utils", "_rebuild_sparse_tensor")
        | ("torch._utils", "_rebuild_sparse_csr_tensor") => K::UnsupportedTensor("sparse tensors"),
        ("torch._utils", "_rebuild_nested_tensor") => K::UnsupportedTensor("nested tensors"),
        ("torch._utils", "_rebuild_meta_tensor_no_storage") => K::UnsupportedTensor("meta tensors"),
        ("torch._utils", "_rebuild_wrapper_subclass") => {
            K::UnsupportedTensor("tensor wrapper subclasses")
        }
        ("torch._utils", "_rebuild_device_tensor_from_numpy")
        | ("torch._utils", "_rebuild_device_tensor_from_cpu_tensor") => {
            K::UnsupportedTensor("tensors saved through numpy")
        }
        ("torch", "Tensor") | ("torch._tensor", "Tensor") | ("torch.nn.parameter", "Parameter") => {
            K::TensorClass
        }
        ("collections", "OrderedDict") => K::OrderedDict,
        // Protocol-2 pickles from Python 3 name the builtins module `__builtin__`.
        ("builtins" | "__builtin__", "complex") => K::Complex,
        ("torch", "device") => K::Device,
        ("torch", "per_tensor_affine") => K::QScheme(0),
        ("torch", "per_channel_affine") => K::QScheme(1),
        ("torch", "per_tensor_symmetric") => K::QScheme(2),
        ("torch", "per_channel_symmetric") => K::QScheme(3),
        ("torch", "per_channel_affine_float_qparams") => K::QScheme(4),
        ("torch", "Size") => K::Size,
        ("torch.jit._pickle", "restore_type_tag") => K::RestoreTypeTag,
        ("torch.jit._pickle", "build_intlist") => K::BuildList(SpecializedList::Int),
        ("torch.jit._pickle", "build_doublelist") => K::BuildList(SpecializedList::Double),
        ("torch.jit._pickle", "build_boollist") => K::BuildList(SpecializedList::Bool),
        ("torch.jit._pickle", "build_tensorlist") => K::BuildList(SpecializedList::Tensor),
        ("torch.jit._pickle", "build_tensor_from_id") => K::BuildTensorFromId,
        ("__main__", "TensorID") => K::LegacyTensorId,
        ("__main__", "IntList") => K::LegacyIntList,
        ("builtins" | "__builtin__", "set" | "frozenset") => K::UnsupportedValue("sets"),
        ("builtins" | "__builtin__", "slice") => K::UnsupportedValue("slices"),
        ("builtins" | "__builtin__", "bytearray") | ("_codecs", "encode") => {
            K::UnsupportedValue("bytes values")
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_tensor::DType;

    fn g(module: &str, name: &str) -> Option<KnownGlobal> {
        classify(&GlobalName {
            module: module.into(),
            name: name.into(),
        })
    }

    #[test]
    fn dangerous_globals_are_refused() {
        for (m, n) in [
            ("os", "system"),
            ("builtins", "eval"),
            ("builtins", "exec"),
            ("builtins", "getattr"),
            ("subprocess", "Popen"),
            ("posix", "system"),
            ("torch", "load"),
            ("torch._utils", "_import_dotted_name"),
            ("__builtin__", "eval"),
            ("torch.jit._pickle", "eval"),
        ] {
            assert_eq!(g(m, n), None, "{m}.{n}");
        }
    }

    #[test]
    fn known_globals() {
        assert_eq!(
            g("torch._utils", "_rebuild_tensor_v2"),
            Some(KnownGlobal::RebuildTensorV2)
        );
        assert_eq!(
            g("torch", "BFloat16Storage"),
            Some(KnownGlobal::Storage(StorageClass::Typed(
                ElementKind::Supported(DType::BFloat16)
            )))
        );
        assert_eq!(
            g("torch", "float"),
            Some(KnownGlobal::Dtype(ElementKind::Supported(DType::Float32)))
        );
        assert_eq!(
            g("__torch__.torch.nn.modules.linear", "Linear"),
            Some(KnownGlobal::UserType(
                "__torch__.torch.nn.modules.linear.Linear".into()
            ))
        );
        assert_eq!(
            g("torch._utils", "_rebuild_qtensor"),
            Some(KnownGlobal::RebuildQTensor)
        );
        // `__torch__x` is not the `__torch__` namespace.
        assert_eq!(g("__torch__x", "M"), None);
    }
}
