//! Forward-mode AD entry points that have a meaning without dual tensors. torchscript-rs has
//! no forward AD, so no tensor carries a tangent: `_fw_primal` is the tensor itself (a view),
//! `_unpack_dual` gives it with an undefined tangent, as PyTorch does for a non-dual tensor.

use ts_core::IValue;
use ts_tensor::{Error, Tensor};

use crate::registry::Registry;
use crate::tensor_ops::def;

use super::Grads;

pub(super) fn register(r: &Registry) {
    def(r, "aten::_fw_primal", |a| {
        let _ = a.int(1)?;
        crate::autograd::ops::call1("aten::alias", vec![IValue::Tensor(a.t(0)?.clone())])
    });
    def(r, "aten::_fw_primal_copy", |a| {
        let _ = a.int(1)?;
        crate::autograd::ops::clone_detached(a.t(0)?)
    });
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
