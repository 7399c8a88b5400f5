//! Conversions between [`Tensor`] and `ndarray` arrays (feature `ndarray`).
//!
//! ```
//! use ndarray::{ArrayD, IxDyn};
//! use torchscript::Tensor;
//!
//! let a = ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
//! let t = Tensor::from_ndarray(a.clone())?;          // no copy for standard-layout arrays
//! let sum: f32 = t.with_ndarray_view(|v| v.sum())?; // a borrowed view, no copy
//! assert_eq!(sum, 10.0);
//! assert_eq!(t.to_ndarray::<f32>()?, a);
//! # Ok::<(), torchscript::Error>(())
//! ```

use ndarray::{ArrayD, ArrayViewD, IxDyn};

use crate::error::{Error, Result};
use crate::tensor::{Element, Tensor};

impl Tensor {
    /// A tensor holding an array's elements: the array's buffer itself when it is in standard
    /// (row-major, contiguous) layout, a copy otherwise.
    pub fn from_ndarray<T: Element>(a: ArrayD<T>) -> Result<Tensor> {
        let shape: Vec<i64> = a.shape().iter().map(|&n| n as i64).collect();
        if a.is_standard_layout() {
            let (v, offset) = a.into_raw_vec_and_offset();
            if offset.unwrap_or(0) == 0 {
                return Tensor::from_vec(v, &shape);
            }
            let n = shape.iter().product::<i64>() as usize;
            let start = offset.unwrap_or(0);
            return Tensor::from_data(&v[start..start + n], &shape);
        }
        let v: Vec<T> = a.iter().copied().collect();
        Tensor::from_vec(v, &shape)
    }

    /// A copy of the elements as an array, converted to `T` (C casts).
    pub fn to_ndarray<T: Element>(&self) -> Result<ArrayD<T>> {
        let shape: Vec<usize> = self.shape().iter().map(|&n| n as usize).collect();
        ArrayD::from_shape_vec(IxDyn(&shape), self.to_vec::<T>())
            .map_err(|e| Error::conversion(e.to_string()))
    }

    /// Runs `f` on a borrowed array view of the elements, without copying (the tensor must
    /// be contiguous and of dtype `T`).
    pub fn with_ndarray_view<T: Element, R>(
        &self,
        f: impl FnOnce(ArrayViewD<'_, T>) -> R,
    ) -> Result<R> {
        let data = self.as_slice::<T>()?;
        let shape: Vec<usize> = self.shape().iter().map(|&n| n as usize).collect();
        let view = ArrayViewD::from_shape(IxDyn(&shape), &data)
            .map_err(|e| Error::conversion(e.to_string()))?;
        Ok(f(view))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_standard_layouts_are_copied_in_logical_order() {
        let a = ArrayD::from_shape_vec(IxDyn(&[2, 3]), (0..6).map(|i| i as i64).collect()).unwrap();
        let t = Tensor::from_ndarray(a.t().to_owned().into_dyn()).unwrap();
        assert_eq!(t.shape(), vec![3, 2]);
        assert_eq!(t.to_vec::<i64>(), vec![0, 3, 1, 4, 2, 5]);
        let tt = t.transpose(0, 1).unwrap();
        assert!(tt.with_ndarray_view::<i64, _>(|v| v.len()).is_err());
        assert_eq!(tt.to_ndarray::<i64>().unwrap(), a);
    }
}
