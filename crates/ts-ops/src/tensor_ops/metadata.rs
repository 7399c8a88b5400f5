//! Queries of tensor metadata and of the dtype promotion lattice: `result_type`, `can_cast`,
//! `promote_types`, `is_signed`, `storage_offset`, `is_contiguous(memory_format=)`, the `sym_*`
//! forms (plain integers here: there are no symbolic shapes), `is_pinned` (CPU tensors are
//! never pinned) and friends.

use ts_core::IValue;
use ts_tensor::promote::{can_cast, promote_types, try_result_type};
use ts_tensor::{DType, Error, Operand, Storage, Tensor};

use super::{def, Args};
use crate::registry::Registry;

/// `MemoryFormat` codes as TorchScript passes them.
const CONTIGUOUS: i64 = 0;
const PRESERVE: i64 = 1;
const CHANNELS_LAST: i64 = 2;
const CHANNELS_LAST_3D: i64 = 3;

fn dtype_arg(a: &Args, i: usize) -> Result<DType, Error> {
    a.dtype(i)?
        .ok_or_else(|| Error::runtime("expected a dtype, got None"))
}

fn dtype_value(d: DType) -> IValue {
    IValue::Int(d.scalar_type_index())
}

/// Whether `t`'s strides are those of a dense tensor laid out in `order` (outermost first),
/// ignoring dimensions of size 1.
fn dense_in_order(t: &Tensor, order: &[usize]) -> bool {
    let (sizes, strides) = (t.sizes(), t.strides());
    let mut expected = 1i64;
    for &d in order.iter().rev() {
        if sizes[d] != 1 {
            if strides[d] != expected {
                return false;
            }
            expected *= sizes[d];
        }
    }
    true
}

/// `is_contiguous(memory_format)`.
fn contiguous_in(t: &Tensor, format: i64) -> Result<bool, Error> {
    match format {
        CONTIGUOUS => Ok(t.is_contiguous()),
        CHANNELS_LAST => Ok(t.dim() == 4 && dense_in_order(t, &[0, 2, 3, 1])),
        CHANNELS_LAST_3D => Ok(t.dim() == 5 && dense_in_order(t, &[0, 2, 3, 4, 1])),
        PRESERVE => Err(Error::runtime(
            "is_contiguous: memory_format torch.preserve_format is not a layout",
        )),
        f => Err(Error::runtime(format!("unknown memory format {f}"))),
    }
}

/// Whether the elements of `t` cover a dense block of memory without overlap, in some order.
fn non_overlapping_and_dense(t: &Tensor) -> bool {
    let (sizes, strides) = (t.sizes(), t.strides());
    let mut dims: Vec<usize> = (0..sizes.len()).filter(|&d| sizes[d] != 1).collect();
    dims.sort_by_key(|&d| strides[d]);
    let mut expected = 1i64;
    for d in dims {
        if strides[d] != expected {
            return false;
        }
        expected *= sizes[d];
    }
    true
}

fn check_dim(t: &Tensor, dim: i64) -> Result<usize, Error> {
    let n = t.dim() as i64;
    let d = if dim < 0 { dim + n } else { dim };
    if d < 0 || d >= n.max(1) || n == 0 {
        return Err(Error::new(
            ts_tensor::ErrorKind::IndexError,
            format!(
                "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
                -n.max(1),
                n.max(1) - 1
            ),
        ));
    }
    Ok(d as usize)
}

/// Registers the metadata queries.
pub fn register(r: &Registry) {
    def(r, "aten::result_type.Tensor", |a| {
        try_result_type(&[Operand::Tensor(a.t(0)?), Operand::Tensor(a.t(1)?)]).map(dtype_value)
    });
    def(r, "aten::result_type.Scalar", |a| {
        try_result_type(&[Operand::Tensor(a.t(0)?), Operand::Scalar(a.s(1)?)]).map(dtype_value)
    });
    def(r, "aten::result_type.Scalar_Tensor", |a| {
        try_result_type(&[Operand::Scalar(a.s(0)?), Operand::Tensor(a.t(1)?)]).map(dtype_value)
    });
    def(r, "aten::result_type.Scalar_Scalar", |a| {
        try_result_type(&[Operand::Scalar(a.s(0)?), Operand::Scalar(a.s(1)?)]).map(dtype_value)
    });
    def(r, "aten::can_cast", |a| {
        Ok(IValue::Bool(can_cast(dtype_arg(a, 0)?, dtype_arg(a, 1)?)))
    });
    def(r, "aten::promote_types", |a| {
        Ok(dtype_value(promote_types(
            dtype_arg(a, 0)?,
            dtype_arg(a, 1)?,
        )))
    });
    def(r, "aten::is_signed", |a| {
        let d = a.t(0)?.dtype();
        Ok(IValue::Bool(!matches!(
            d,
            DType::Bool | DType::UInt8 | DType::UInt16 | DType::UInt32 | DType::UInt64
        )))
    });
    def(r, "aten::is_inference", |a| {
        a.t(0)?;
        Ok(IValue::Bool(false))
    });
    def(r, "aten::get_device", |a| {
        a.t(0)?;
        Ok(IValue::Int(-1))
    });
    def(r, "aten::is_pinned", |a| {
        a.t(0)?;
        a.check_device(1)?;
        Ok(IValue::Bool(false))
    });
    def(r, "aten::storage_offset", |a| {
        Ok(IValue::Int(a.t(0)?.storage_offset() as i64))
    });
    def(r, "aten::sym_storage_offset", |a| {
        Ok(IValue::Int(a.t(0)?.storage_offset() as i64))
    });
    def(r, "aten::sym_numel", |a| {
        Ok(IValue::Int(a.t(0)?.numel() as i64))
    });
    def(r, "aten::sym_stride", |a| {
        Ok(IValue::int_list(a.t(0)?.strides()))
    });
    def(r, "aten::sym_stride.int", |a| {
        let t = a.t(0)?;
        let d = check_dim(t, a.int(1)?)?;
        Ok(IValue::Int(t.strides().get(d).copied().unwrap_or(1)))
    });
    def(r, "aten::is_contiguous.memory_format", |a| {
        contiguous_in(a.t(0)?, a.int(1)?).map(IValue::Bool)
    });
    def(r, "aten::sym_is_contiguous", |a| {
        contiguous_in(a.t(0)?, a.int(1)?).map(IValue::Bool)
    });
    def(r, "aten::is_strides_like_format", |a| {
        let (t, f) = (a.t(0)?, a.int(1)?);
        Ok(IValue::Bool(match f {
            CHANNELS_LAST => t.dim() == 4 && contiguous_in(t, f)?,
            CHANNELS_LAST_3D => t.dim() == 5 && contiguous_in(t, f)?,
            _ => false,
        }))
    });
    def(r, "aten::is_non_overlapping_and_dense", |a| {
        Ok(IValue::Bool(non_overlapping_and_dense(a.t(0)?)))
    });
    def(r, "aten::is_same_size", |a| {
        Ok(IValue::Bool(a.t(0)?.sizes() == a.t(1)?.sizes()))
    });
    def(r, "aten::is_set_to", |a| {
        let (x, y) = (a.t(0)?, a.t(1)?);
        Ok(IValue::Bool(
            Storage::ptr_eq(&x.storage(), &y.storage())
                && x.storage_offset() == y.storage_offset()
                && x.sizes() == y.sizes()
                && x.strides() == y.strides(),
        ))
    });
    def(r, "aten::_shape_as_tensor", |a| {
        let s = a.t(0)?.sizes();
        Tensor::from_vec(s.to_vec(), &[s.len() as i64])
    });
}
