//! Forward-mode AD entry points. torchscript-rs has no forward AD, so no tensor carries a
//! tangent: `_unpack_dual` gives the tensor with an undefined tangent, as PyTorch does for a
//! non-dual tensor (`_fw_primal` is in `view_copies`), and `_make_dual` fails as PyTorch does
//! outside a forward-AD level, which TorchScript code cannot enter.

use ts_core::IValue;
use ts_tensor::{Error, Tensor};

use crate::registry::Registry;
use crate::tensor_ops::def;

use super::Grads;

pub(super) fn register(r: &Registry) {
    def(r, "aten::_unpack_dual", |a| {
        let _ = a.int(1)?;
        Ok(Grads(vec![
            Some(crate::autograd::ops::call1(
                "aten::alias",
                vec![IValue::Tensor(a.t(0)?.clone())],
            )?),
            None,
        ]))
    });
    // TorchScript cannot enter `torch.autograd.forward_ad.dual_level`, so PyTorch's kernel
    // always finds the level invalid when called from TorchScript.
    def(r, "aten::_make_dual", |a| {
        make_dual(a.t(0)?, a.t(1)?, a.int(2)?)
    });
    def(r, "aten::_make_dual_copy", |a| {
        make_dual(a.t(0)?, a.t(1)?, a.int(2)?)
    });
    def(r, "aten::_new_zeros_with_same_feature_meta", |a| {
        new_zeros_with_same_feature_meta(a.t(0)?, a.t(1)?, a.int(2)?)
    });
}

/// `_new_zeros_with_same_feature_meta(self, other, self_num_batch_dims)`: zeros laid out like
/// `other` (its sizes, strides and storage offset) under `self`'s leading batch dimensions,
/// each batch entry a copy of `other`'s whole storage.
fn new_zeros_with_same_feature_meta(
    s: &Tensor,
    other: &Tensor,
    batch_dims: i64,
) -> Result<Tensor, Error> {
    if batch_dims < 0 || batch_dims as usize > s.dim() {
        return Err(Error::runtime(format!(
            "_new_zeros_with_same_feature_meta: self_num_batch_dims={batch_dims} is out of range for a tensor of {} dimensions",
            s.dim()
        )));
    }
    let nb = batch_dims as usize;
    let item = other.dtype().size().max(1);
    let storage_numel = (other.storage().nbytes() / item) as i64;
    let mut sizes: Vec<i64> = s.sizes()[..nb].to_vec();
    let mut strides = vec![0; nb];
    let mut acc = storage_numel;
    for i in (0..nb).rev() {
        strides[i] = acc;
        acc *= sizes[i];
    }
    sizes.extend(other.sizes().iter().copied());
    strides.extend(other.strides().iter().copied());
    let buf = Tensor::zeros(&[acc], other.dtype())?;
    buf.as_strided(&sizes, &strides, Some(other.storage_offset() as i64))
}

/// PyTorch's error for a forward-AD level that was never entered (no level exists here).
fn make_dual(_primal: &Tensor, _tangent: &Tensor, _level: i64) -> Result<Tensor, Error> {
    Err(Error::runtime(
        "Trying to access a forward AD level with an invalid index. This index was either not created or is already deleted.",
    ))
}
