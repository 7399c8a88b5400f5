//! Copies and conversions: `copy_`, `to(dtype)`, `contiguous`, `clone`, `detach`, `fill_`,
//! `zero_`, scalar tensors and `item`.
//!
//! # `out=` variants
//! Every op that has an ATen `out=` overload can be served generically with
//! [`resize_out_and_copy`]: compute the result as a new tensor, then write it into `out`, which is
//! resized (in place, visible through every handle) when its shape differs, and type-checked
//! with PyTorch's `can_cast` rule. Elementwise ops also have native `_out` methods that write
//! directly.

use crate::cpu::cast::copy_into;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::overlap::{assert_no_internal_overlap, overlap_status, MemOverlapStatus};
use crate::promote::check_can_cast;
use crate::scalar::Scalar;
use crate::shape::{broadcast_shapes, preserve_format_strides};
use crate::tensor::{Tensor, TensorMeta};

/// Writes `result` into the `out=` tensor `out`: resizes `out` to `result`'s shape when they
/// differ, checks that `result`'s dtype may be cast to `out`'s, and copies. Returns `out`.
pub fn resize_out_and_copy(out: &Tensor, result: &Tensor) -> Result<Tensor> {
    let rm = result.meta_snapshot();
    check_can_cast(rm.dtype, out.dtype())?;
    if out.meta().sizes != rm.sizes {
        let strides = crate::shape::contiguous_strides(&rm.sizes);
        crate::cpu::iter::resize_out(out, &rm.sizes, &strides)?;
    }
    out.copy_(result)?;
    Ok(out.clone())
}

impl Tensor {
    /// `self.copy_(src)`: writes `src`, broadcast to `self`'s shape and converted to `self`'s
    /// dtype, into `self`'s memory (visible through every view of it).
    pub fn copy_(&self, src: &Tensor) -> Result<()> {
        if Tensor::is_same(self, src) {
            return Ok(());
        }
        let dm = self.meta_snapshot();
        let sm = src.meta_snapshot();
        let shape = broadcast_shapes(&dm.sizes, &sm.sizes)?;
        if shape != dm.sizes {
            return Err(Error::runtime(format!(
                "output with shape {:?} doesn't match the broadcast shape {:?}",
                dm.sizes.as_slice(),
                shape.as_slice()
            )));
        }
        match overlap_status(&dm, &sm) {
            MemOverlapStatus::Full if dm.dtype == sm.dtype => return Ok(()),
            MemOverlapStatus::Partial | MemOverlapStatus::Full => {
                return Err(Error::runtime(
                    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.",
                ))
            }
            _ => {}
        }
        assert_no_internal_overlap(&dm)?;
        copy_into(&dm, &sm)
    }

    /// A new tensor with the same data, keeping the memory layout when it is dense
    /// (`torch.clone` with `preserve_format`).
    pub fn clone_tensor(&self) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let strides = preserve_format_strides(&m.sizes, &m.strides);
        let out = Tensor::empty_strided(&m.sizes, &strides, m.dtype)?;
        copy_into(&out.meta_snapshot(), &m)?;
        out.set_requires_grad(false);
        Ok(out)
    }

    /// `self` when already contiguous (the same tensor object), otherwise a contiguous copy.
    pub fn contiguous(&self) -> Result<Tensor> {
        if self.is_contiguous() {
            return Ok(self.clone());
        }
        let m = self.meta_snapshot();
        let out = Tensor::zeros(&m.sizes, m.dtype)?;
        copy_into(&out.meta_snapshot(), &m)?;
        Ok(out)
    }

    /// A new handle to the same data without autograd history (`detach`): a view.
    pub fn detach(&self) -> Tensor {
        let m = self.meta_snapshot();
        Tensor::from_meta(TensorMeta {
            requires_grad: false,
            ..m
        })
    }

    /// `to(dtype, copy=copy)`: `self` itself when the dtype already matches and no copy is asked
    /// for, otherwise a converted copy (layout preserved when dense).
    pub fn to_dtype(&self, dtype: DType, copy: bool) -> Result<Tensor> {
        // Most calls are no-ops: answer those without copying the metadata.
        if !copy && self.dtype() == dtype {
            return Ok(self.clone());
        }
        let m = self.meta_snapshot();
        let strides = preserve_format_strides(&m.sizes, &m.strides);
        let out = Tensor::empty_strided(&m.sizes, &strides, dtype)?;
        copy_into(&out.meta_snapshot(), &m)?;
        Ok(out)
    }

    /// Converts to `dtype` only when needed (internal helper that never copies for a match).
    pub(crate) fn cast_if_needed(&self, dtype: DType) -> Result<Tensor> {
        self.to_dtype(dtype, false)
    }

    /// `fill_(value)`: sets every element (through all views) to `value` cast to the dtype.
    pub fn fill_(&self, value: Scalar) -> Result<()> {
        let m = self.meta_snapshot();
        assert_no_internal_overlap(&m)?;
        let v = Tensor::scalar_tensor(value, m.dtype)?;
        copy_into(&m, &v.meta_snapshot())
    }

    /// `fill_(value)` with a 0-dim tensor value.
    pub fn fill_tensor_(&self, value: &Tensor) -> Result<()> {
        if value.dim() != 0 {
            return Err(Error::runtime(format!(
                "fill_ only supports 0-dimension value tensor but got tensor with {} dimensions.",
                value.dim()
            )));
        }
        let v = value.clone_tensor()?;
        self.fill_(v.item()?)
    }

    /// `zero_()`.
    pub fn zero_(&self) -> Result<()> {
        self.fill_(Scalar::Int(0))
    }

    /// A 0-dim tensor holding `value` converted to `dtype` (`torch.scalar_tensor`).
    pub fn scalar_tensor(value: Scalar, dtype: DType) -> Result<Tensor> {
        let t = Tensor::zeros(&[], dtype)?;
        let m = t.meta();
        let p = m.data_ptr();
        dispatch_all_c!(dtype, T => {
            let v: T = match value {
                Scalar::Bool(b) => <T as crate::Element>::from_i64(b as i64),
                Scalar::Int(i) => <T as crate::Element>::from_i64(i),
                Scalar::Float(f) => <T as crate::Element>::from_f64(f),
            };
            // SAFETY: `t` is a fresh 0-dim tensor with room for one element of `dtype`.
            unsafe { *(p as *mut T) = v };
        });
        drop(m);
        Ok(t)
    }

    /// The value of a one-element tensor as a Python number (`bool` for bool tensors, `int` for
    /// integer tensors, `float` for floating ones).
    pub fn item(&self) -> Result<Scalar> {
        let m = self.meta_snapshot();
        let n = m.numel();
        if n != 1 {
            return Err(Error::runtime(format!(
                "a Tensor with {n} elements cannot be converted to Scalar"
            )));
        }
        if m.dtype.is_complex() {
            return Err(Error::runtime(
                "item() of a complex tensor is a complex number; use item_complex()",
            ));
        }
        let p = m.data_ptr() as *const u8;
        // SAFETY: a one-element tensor's element 0 is at its offset, inside the storage.
        Ok(unsafe { read_scalar(p, m.dtype) })
    }

    /// The value of a one-element tensor as a complex number `(re, im)` (any dtype; real
    /// dtypes have no imaginary part). TorchScript's `item()` of a complex tensor is a `complex`.
    pub fn item_complex(&self) -> Result<(f64, f64)> {
        let n = self.numel();
        if n != 1 {
            return Err(Error::runtime(format!(
                "a Tensor with {n} elements cannot be converted to Scalar"
            )));
        }
        Ok(self.to_vec::<crate::complex::Complex64>()[0].into())
    }
}

/// Reads one element as a [`Scalar`].
///
/// # Safety
/// `p` must address a valid element of `dtype`.
pub(crate) unsafe fn read_scalar(p: *const u8, dtype: DType) -> Scalar {
    // SAFETY: guaranteed by the caller.
    unsafe {
        match dtype {
            DType::Bool => Scalar::Bool(*p != 0),
            DType::UInt8 => Scalar::Int(*p as i64),
            DType::Int8 => Scalar::Int(*(p as *const i8) as i64),
            DType::Int16 => Scalar::Int(*(p as *const i16) as i64),
            DType::Int32 => Scalar::Int(*(p as *const i32) as i64),
            DType::Int64 => Scalar::Int(*(p as *const i64)),
            DType::Float16 => Scalar::Float((*(p as *const half::f16)).to_f64()),
            DType::BFloat16 => Scalar::Float((*(p as *const half::bf16)).to_f64()),
            DType::Float32 => Scalar::Float(*(p as *const f32) as f64),
            DType::Float64 => Scalar::Float(*(p as *const f64)),
            DType::UInt16 => Scalar::Int(*(p as *const u16) as i64),
            DType::UInt32 => Scalar::Int(*(p as *const u32) as i64),
            // Python ints are unbounded; TorchScript's are int64, so large values wrap.
            DType::UInt64 => Scalar::Int(*(p as *const u64) as i64),
            // Callers read complex elements with `item_complex`.
            DType::Complex64 => Scalar::Float((*(p as *const crate::complex::Complex32)).re as f64),
            DType::Complex128 => Scalar::Float((*(p as *const crate::complex::Complex64)).re),
        }
    }
}

impl Tensor {
    /// The elements in row-major order as a `Vec<T>`, converted with PyTorch's cast rules
    /// (a fast path for internal row-wise algorithms).
    pub(crate) fn contiguous_vec<T: crate::Element>(&self) -> Result<Vec<T>> {
        let m = self.meta_snapshot();
        let n = m.numel();
        let tmp = Tensor::zeros(&m.sizes, T::DTYPE)?;
        copy_into(&tmp.meta_snapshot(), &m)?;
        let mut out: Vec<T> = Vec::with_capacity(n);
        // SAFETY: `tmp` is a fresh contiguous tensor of `n` elements of T; the vector has
        // capacity `n` and every slot is initialised by the copy before `set_len`.
        unsafe {
            std::ptr::copy_nonoverlapping(tmp.meta().data_ptr() as *const T, out.as_mut_ptr(), n);
            out.set_len(n);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arange(n: usize) -> Tensor {
        Tensor::from_vec((0..n).map(|i| i as f32).collect(), &[n as i64]).unwrap()
    }

    #[test]
    fn copy_broadcasts_and_converts() {
        let dst = Tensor::zeros(&[2, 3], DType::Int64).unwrap();
        let src = Tensor::from_vec(vec![1.7f32, -2.2, 3.9], &[3]).unwrap();
        dst.copy_(&src).unwrap();
        assert_eq!(dst.to_vec::<i64>(), vec![1, -2, 3, 1, -2, 3]);
        let bad = Tensor::zeros(&[2, 3], DType::Float32).unwrap();
        // torch: zeros(3).copy_(zeros(2,3)) -> output with shape [3] doesn't match the broadcast shape [2, 3]
        let e = src.copy_(&bad).unwrap_err();
        assert_eq!(
            e.message,
            "output with shape [3] doesn't match the broadcast shape [2, 3]"
        );
    }

    #[test]
    fn copy_partial_overlap_is_rejected() {
        // torch: a = arange(5.); a[1:].copy_(a[:-1]) raises the partial-overlap error.
        let a = arange(5);
        let e = a
            .slice(0, Some(1), None, 1)
            .unwrap()
            .copy_(&a.slice(0, None, Some(-1), 1).unwrap());
        assert!(e
            .unwrap_err()
            .message
            .contains("some elements of the input tensor"));
        // Full overlap is a no-op.
        a.copy_(&a.slice(0, None, None, 1).unwrap()).unwrap();
        assert_eq!(a.to_vec::<f32>(), vec![0., 1., 2., 3., 4.]);
    }

    #[test]
    fn fill_through_a_view_and_item() {
        let a = Tensor::zeros(&[2, 3], DType::Float32).unwrap();
        a.select(0, 1).unwrap().fill_(Scalar::Float(2.5)).unwrap();
        assert_eq!(a.to_vec::<f32>(), vec![0., 0., 0., 2.5, 2.5, 2.5]);
        assert_eq!(
            a.select(0, 1)
                .unwrap()
                .select(0, 2)
                .unwrap()
                .item()
                .unwrap(),
            Scalar::Float(2.5)
        );
        assert!(a
            .item()
            .unwrap_err()
            .message
            .contains("a Tensor with 6 elements cannot be converted to Scalar"));
        let e = Tensor::zeros(&[3], DType::Float32)
            .unwrap()
            .expand(&[2, 3], false)
            .unwrap();
        assert!(e.fill_(Scalar::Int(1)).is_err());
    }

    #[test]
    fn clone_preserves_dense_layout_and_contiguous_aliases() {
        // torch: ones(2,3).t().clone().stride() == (1, 3)
        let a = Tensor::zeros(&[2, 3], DType::Float32).unwrap().t().unwrap();
        assert_eq!(a.clone_tensor().unwrap().strides().as_slice(), &[1, 3]);
        let c = Tensor::zeros(&[2, 3], DType::Float32).unwrap();
        assert!(Tensor::is_same(&c.contiguous().unwrap(), &c));
        assert_eq!(a.contiguous().unwrap().strides().as_slice(), &[2, 1]);
        assert!(Tensor::is_same(
            &c.to_dtype(DType::Float32, false).unwrap(),
            &c
        ));
        assert!(!Tensor::is_same(
            &c.to_dtype(DType::Float32, true).unwrap(),
            &c
        ));
    }

    #[test]
    fn out_variant_resizes() {
        let out = Tensor::zeros(&[1], DType::Float64).unwrap();
        let r = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
        let alias = out.clone();
        resize_out_and_copy(&out, &r).unwrap();
        assert_eq!(alias.sizes().as_slice(), &[2]);
        assert_eq!(alias.to_vec::<f64>(), vec![1.0, 2.0]);
        let iout = Tensor::zeros(&[2], DType::Int64).unwrap();
        assert!(resize_out_and_copy(&iout, &r).is_err());
    }
}
