//! Copies and conversions: `copy_` (broadcasting, converting), `clone`, `contiguous`, `to`,
//! `resize_`, `detach`.

use crate::dtype::DType;
use crate::elementwise::{check_no_internal_overlap, check_no_partial_overlap, copy_into};
use crate::error::{Error, Result};
use crate::tensor::{checked_numel, contiguous_strides, Tensor, TensorMeta};

impl Tensor {
    /// `self.copy_(src)`: writes `src` (broadcast to `self`'s shape, converted to its dtype)
    /// into `self` through any view. Partial overlap with `src` is an error, as in PyTorch.
    pub fn copy_(&self, src: &Tensor) -> Result<Tensor> {
        if Tensor::is_same(self, src) {
            return Ok(self.clone());
        }
        check_no_internal_overlap(self)?;
        check_no_partial_overlap(self, src)?;
        copy_into(self, src)?;
        Ok(self.clone())
    }

    /// A new contiguous tensor with the same values (`clone`).
    pub fn clone_tensor(&self) -> Result<Tensor> {
        let out = Tensor::empty(&self.sizes(), self.dtype())?;
        copy_into(&out, self)?;
        Ok(out)
    }

    /// `self` when contiguous, otherwise a contiguous copy.
    pub fn contiguous(&self) -> Result<Tensor> {
        if self.is_contiguous() {
            Ok(self.clone())
        } else {
            self.clone_tensor()
        }
    }

    /// A contiguous copy converted to `dtype` (C-cast semantics: floats truncate toward zero
    /// when cast to integers, nonzero is `true`).
    pub fn to_dtype(&self, dtype: DType) -> Result<Tensor> {
        let out = Tensor::empty(&self.sizes(), dtype)?;
        copy_into(&out, self)?;
        Ok(out)
    }

    /// `self.to(dtype, copy=copy)`: `self` unchanged when the dtype already matches and no copy
    /// is requested.
    pub fn to(&self, dtype: DType, copy: bool) -> Result<Tensor> {
        if self.dtype() == dtype && !copy {
            Ok(self.clone())
        } else {
            self.to_dtype(dtype)
        }
    }

    /// `detach()`: a new tensor object sharing storage and geometry, with requires_grad off.
    pub fn detach(&self) -> Tensor {
        let mut m = self.meta_snapshot();
        m.requires_grad = false;
        Tensor::from_meta(m)
    }

    /// `resize_(sizes)`: changes the shape in place, keeping the data prefix and growing the
    /// storage when needed; the tensor becomes contiguous.
    pub fn resize_(&self, sizes: &[i64]) -> Result<Tensor> {
        let numel = checked_numel(sizes)?;
        let m = self.meta_snapshot();
        let need = (m.offset + numel) * m.dtype.size();
        let storage = if need > m.storage.nbytes() {
            let s = crate::Storage::zeroed(need, m.storage.device())?;
            let keep = m.storage.nbytes().min(need);
            // SAFETY: both buffers hold at least `keep` bytes; they are distinct allocations.
            unsafe { std::ptr::copy_nonoverlapping(m.storage.as_ptr(), s.as_mut_ptr(), keep) };
            s
        } else {
            m.storage.clone()
        };
        self.set_meta(TensorMeta {
            storage,
            sizes: sizes.into(),
            strides: contiguous_strides(sizes),
            offset: m.offset,
            dtype: m.dtype,
            requires_grad: m.requires_grad,
        });
        Ok(self.clone())
    }

    /// `set_(source)`: makes `self` share `source`'s storage and geometry.
    pub fn set_(&self, source: &Tensor) -> Tensor {
        let mut m = source.meta_snapshot();
        m.requires_grad = self.requires_grad();
        self.set_meta(m);
        self.clone()
    }

    /// The single value of a one-element tensor as a Python number.
    pub fn item(&self) -> Result<crate::Scalar> {
        if self.numel() != 1 {
            return Err(Error::runtime(format!(
                "a Tensor with {} elements cannot be converted to Scalar",
                self.numel()
            )));
        }
        let d = self.dtype();
        Ok(if d == DType::Bool {
            crate::Scalar::Bool(self.to_vec::<i64>()[0] != 0)
        } else if d.is_floating_point() {
            crate::Scalar::Float(self.to_vec::<f64>()[0])
        } else {
            crate::Scalar::Int(self.to_vec::<i64>()[0])
        })
    }
}
