//! Host memory in and out of tensors without copying: a `Vec` becomes a tensor's storage
//! ([`Tensor::from_vec_shared`]) and a contiguous tensor's elements are readable as a slice
//! ([`Tensor::data_view`]).

use std::marker::PhantomData;
use std::ops::Deref;

use crate::element::Element;
use crate::error::{Error, Result};
use crate::storage::Storage;
use crate::tensor::{checked_numel, contiguous_strides, Tensor};

impl Tensor {
    /// A contiguous tensor over `data` itself (no copy): the `Vec` becomes the storage and is
    /// dropped with the last tensor viewing it.
    pub fn from_vec_shared<T: Element>(mut data: Vec<T>, sizes: &[i64]) -> Result<Tensor> {
        let numel = checked_numel(sizes)?;
        if numel != data.len() {
            return Err(Error::runtime(format!(
                "shape {sizes:?} is invalid for input of size {}",
                data.len()
            )));
        }
        let nbytes = std::mem::size_of_val(data.as_slice());
        let ptr = data.as_mut_ptr() as *mut u8;
        // SAFETY: the Vec's buffer is valid for `nbytes` bytes, aligned for `T`, and is moved
        // into the owner box, so it is neither freed nor reallocated before the storage drops
        // it (moving a Vec does not move its heap buffer).
        let storage = unsafe { Storage::from_external(ptr, nbytes, Box::new(data)) }?;
        Tensor::from_parts(storage, sizes, &contiguous_strides(sizes), 0, T::DTYPE)
    }

    /// The elements of a contiguous tensor of dtype `T::DTYPE` as a slice, without copying.
    ///
    /// The view keeps the storage alive. Like a NumPy view, it sees later writes to the tensor;
    /// the caller must not write the same tensor (through another handle or thread) while the
    /// view is in use.
    pub fn data_view<T: Element>(&self) -> Result<DataView<T>> {
        let m = self.meta();
        if m.dtype != T::DTYPE {
            return Err(Error::runtime(format!(
                "expected a tensor of dtype {} for this view, got {}",
                T::DTYPE.name(),
                m.dtype.name()
            )));
        }
        if !m.is_contiguous() {
            return Err(Error::runtime(
                "a slice view needs a contiguous tensor (call contiguous() first)",
            ));
        }
        let len = m.numel();
        let ptr = m
            .storage
            .as_ptr()
            .wrapping_add(m.offset * std::mem::size_of::<T>()) as *const T;
        Ok(DataView {
            _storage: m.storage.clone(),
            ptr,
            len,
            _marker: PhantomData,
        })
    }
}

/// A read-only slice over a contiguous tensor's elements (see [`Tensor::data_view`]).
pub struct DataView<T> {
    _storage: Storage,
    ptr: *const T,
    len: usize,
    _marker: PhantomData<T>,
}

impl<T: Element> Deref for DataView<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the tensor was contiguous with `len` elements of `T` starting at `ptr`, all
        // inside the storage (checked when the tensor was made), which `_storage` keeps alive;
        // storages are allocated aligned for every element type (or wrap memory aligned for
        // the dtype viewing it).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Element + std::fmt::Debug> std::fmt::Debug for DataView<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    #[test]
    fn vec_becomes_storage_and_view_reads_it_back() {
        let v = vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let p = v.as_ptr();
        let t = Tensor::from_vec_shared(v, &[2, 3]).unwrap();
        assert_eq!(t.storage().as_ptr() as *const f32, p);
        let view = t.data_view::<f32>().unwrap();
        assert_eq!(&*view, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert!(Tensor::from_vec_shared(vec![1i64, 2], &[3]).is_err());
        assert!(t.data_view::<i64>().is_err());
    }

    #[test]
    fn views_need_contiguous_data_and_follow_the_offset() {
        let t = Tensor::from_vec((0..6).map(|i| i as i64).collect(), &[6]).unwrap();
        let tail = Tensor::from_parts(t.storage(), &[2], &[1], 4, DType::Int64).unwrap();
        assert_eq!(&*tail.data_view::<i64>().unwrap(), &[4, 5]);
        let strided = Tensor::from_parts(t.storage(), &[3], &[2], 0, DType::Int64).unwrap();
        assert!(strided.data_view::<i64>().is_err());
        let empty = Tensor::zeros(&[0], DType::Float32).unwrap();
        assert!(empty.data_view::<f32>().unwrap().is_empty());
    }
}
