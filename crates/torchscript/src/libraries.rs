//! Operator libraries beyond `aten::`/`prim::` that saved models call (`torchvision::nms`, ...):
//! registered once, before the first load or compile, so that they resolve like PyTorch's
//! when the library's Python package is imported; and the hooks through which `ts-ops`
//! reaches higher crates (`aten::save`'s writer).

/// Registers the bundled operator libraries (idempotent, cheap after the first call).
pub(crate) fn ensure_registered() {
    ts_torchvision::register_global();
    // `torch.save` in scripted code writes through ts-serialize (PyTorch's `pickle_save`
    // names the archive folder `archive`).
    ts_ops::save_hook::install(|value, filename| {
        let bytes = ts_serialize::save_torch_save_bytes(value, "archive")
            .map_err(|e| ts_tensor::Error::runtime(format!("aten::save: {e}")))?;
        std::fs::write(filename, bytes)
            .map_err(|e| ts_tensor::Error::runtime(format!("aten::save: {filename}: {e}")))
    });
}
