//! Operator libraries beyond `aten::`/`prim::` that saved models call (`torchvision::nms`, ...):
//! registered once, before the first load or compile, so that they resolve like PyTorch's
//! when the library's Python package is imported.

/// Registers the bundled operator libraries (idempotent, cheap after the first call).
pub(crate) fn ensure_registered() {
    ts_torchvision::register_global();
}
