//! [`Tensor`]: creation from Rust data, metadata, and zero-copy access to the elements.

use std::fmt;

use crate::error::{Error, Result};

pub use ts_tensor::{DType, DataView, Device, Element};

/// An n-dimensional array of one element type, on the CPU.
///
/// A `Tensor` is a handle: cloning it aliases the same tensor (as Python references do), and
/// views (`reshape`, `transpose`, slices) share the data. Models take and return tensors
/// inside [`IValue`](crate::IValue)s.
///
/// ```
/// use torchscript::{DType, Tensor};
///
/// let t = Tensor::from_data(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
/// assert_eq!(t.shape(), vec![2, 3]);
/// assert_eq!(t.dtype(), DType::Float32);
/// assert_eq!(&*t.as_slice::<f32>()?, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
/// # Ok::<(), torchscript::Error>(())
/// ```
#[derive(Clone)]
pub struct Tensor(pub(crate) ts_tensor::Tensor);

impl Tensor {
    /// A 1-D tensor holding a copy of `data`.
    pub fn from_slice<T: Element>(data: &[T]) -> Tensor {
        match ts_tensor::Tensor::from_vec(data.to_vec(), &[data.len() as i64]) {
            Ok(t) => Tensor(t),
            // Only an allocation failure can get here; report it as Rust's allocator does.
            Err(_) => std::alloc::handle_alloc_error(
                std::alloc::Layout::array::<T>(data.len())
                    .unwrap_or_else(|_| std::alloc::Layout::new::<T>()),
            ),
        }
    }

    /// A tensor of shape `shape` holding a copy of `data` (row-major).
    pub fn from_data<T: Element>(data: &[T], shape: &[i64]) -> Result<Tensor> {
        Ok(Tensor(ts_tensor::Tensor::from_vec(data.to_vec(), shape)?))
    }

    /// A tensor of shape `shape` over `data` itself: the `Vec` becomes the tensor's memory,
    /// without a copy.
    ///
    /// ```
    /// # use torchscript::Tensor;
    /// let t = Tensor::from_vec(vec![1i64, 2, 3, 4], &[2, 2])?;
    /// assert_eq!(t.to_vec::<i64>(), vec![1, 2, 3, 4]);
    /// # Ok::<(), torchscript::Error>(())
    /// ```
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[i64]) -> Result<Tensor> {
        Ok(Tensor(ts_tensor::Tensor::from_vec_shared(data, shape)?))
    }

    /// A 0-dimensional tensor holding `v`.
    pub fn scalar<T: Element>(v: T) -> Tensor {
        match ts_tensor::Tensor::from_vec(vec![v], &[]) {
            Ok(t) => Tensor(t),
            Err(_) => std::alloc::handle_alloc_error(std::alloc::Layout::new::<T>()),
        }
    }

    /// A tensor of zeros.
    pub fn zeros(shape: &[i64], dtype: DType) -> Result<Tensor> {
        Ok(Tensor(ts_tensor::ops::factory::zeros(shape, Some(dtype))?))
    }

    /// A tensor of ones.
    pub fn ones(shape: &[i64], dtype: DType) -> Result<Tensor> {
        Ok(Tensor(ts_tensor::ops::factory::ones(shape, Some(dtype))?))
    }

    /// A tensor filled with `value` (converted to `dtype`).
    pub fn full(shape: &[i64], value: f64, dtype: DType) -> Result<Tensor> {
        Ok(Tensor(ts_tensor::ops::factory::full(
            shape,
            ts_tensor::Scalar::Float(value),
            Some(dtype),
        )?))
    }

    /// `0, 1, ..., end - 1` as int64.
    pub fn arange(end: i64) -> Result<Tensor> {
        Ok(Tensor(ts_tensor::ops::factory::arange(
            ts_tensor::Scalar::Int(0),
            ts_tensor::Scalar::Int(end),
            ts_tensor::Scalar::Int(1),
            None,
        )?))
    }

    /// Float32 samples of the standard normal distribution, reproducible from `seed`
    /// (PyTorch's generator, so `torch.manual_seed(seed); torch.randn(shape)` gives the same).
    pub fn randn(shape: &[i64], seed: u64) -> Result<Tensor> {
        let g = ts_tensor::Generator::new(seed);
        Ok(Tensor(ts_tensor::ops::random::randn(
            shape,
            Some(DType::Float32),
            Some(&g),
        )?))
    }

    /// Float32 samples uniform in `[0, 1)`, reproducible from `seed`.
    pub fn rand(shape: &[i64], seed: u64) -> Result<Tensor> {
        let g = ts_tensor::Generator::new(seed);
        Ok(Tensor(ts_tensor::ops::random::rand(
            shape,
            Some(DType::Float32),
            Some(&g),
        )?))
    }

    /// The sizes of each dimension.
    pub fn shape(&self) -> Vec<i64> {
        self.0.sizes().to_vec()
    }

    /// The size of dimension `dim` (negative counts from the end). While tracing with dynamic
    /// sizes, use [`Tensor::size_traced`] to keep the size symbolic.
    pub fn size(&self, dim: i64) -> Result<i64> {
        let nd = self.dim() as i64;
        let d = if dim < 0 { dim + nd } else { dim };
        if d < 0 || d >= nd {
            return Err(Error::new(
                crate::ErrorKind::Argument,
                format!("dimension {dim} is out of range for a tensor of {nd} dimensions"),
            ));
        }
        Ok(self.0.sizes()[d as usize])
    }

    /// The strides of each dimension, in elements.
    pub fn strides(&self) -> Vec<i64> {
        self.0.strides().to_vec()
    }

    /// Number of dimensions.
    pub fn dim(&self) -> usize {
        self.0.dim()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.0.numel()
    }

    /// Element type.
    pub fn dtype(&self) -> DType {
        self.0.dtype()
    }

    /// Where the data lives (always the CPU in this build).
    pub fn device(&self) -> Device {
        self.0.device()
    }

    /// True when the elements are laid out row-major without gaps.
    pub fn is_contiguous(&self) -> bool {
        self.0.is_contiguous()
    }

    /// The elements as a slice, without copying: the tensor must be contiguous and of dtype
    /// `T` (use [`Tensor::contiguous`] or [`Tensor::to_dtype`] first otherwise).
    ///
    /// The view keeps the memory alive. Like a NumPy view it sees later in-place writes; do not
    /// write the tensor through another handle while the view is in use.
    pub fn as_slice<T: Element>(&self) -> Result<DataView<T>> {
        if crate::trace::is_tracing() {
            ts_runtime::tracer::warn_data_dependent(&self.0, "list");
        }
        self.0
            .data_view::<T>()
            .map_err(|e| Error::conversion(e.message))
    }

    /// The elements in row-major order, converted to `T` (C casts, as `tensor.to(dtype)`).
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        if crate::trace::is_tracing() {
            ts_runtime::tracer::warn_data_dependent(&self.0, "list");
        }
        self.0.to_vec::<T>()
    }

    /// The value of a one-element tensor.
    pub fn item<T: Element>(&self) -> Result<T> {
        if self.numel() != 1 {
            return Err(Error::conversion(format!(
                "a Tensor with {} elements cannot be converted to a number",
                self.numel()
            )));
        }
        if crate::trace::is_tracing() {
            ts_runtime::tracer::warn_data_dependent(&self.0, "number");
        }
        Ok(self.0.to_vec::<T>()[0])
    }

    /// True when both handles are the same tensor (Python's `is`).
    pub fn is_same(&self, other: &Tensor) -> bool {
        ts_tensor::Tensor::is_same(&self.0, &other.0)
    }

    /// Elementwise equality of shape, dtype and values (NaN equals NaN), for tests.
    pub fn bit_equal(&self, other: &Tensor) -> bool {
        self.shape() == other.shape()
            && self.dtype() == other.dtype()
            && self
                .0
                .to_vec::<f64>()
                .iter()
                .zip(other.0.to_vec::<f64>())
                .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()))
    }

    /// Wraps a tensor of the underlying tensor library.
    pub fn from_inner(t: ts_tensor::Tensor) -> Tensor {
        Tensor(t)
    }

    /// The tensor of the underlying tensor library (for code that uses the lower crates).
    pub fn inner(&self) -> &ts_tensor::Tensor {
        &self.0
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Tensor(shape={:?}, dtype={})",
            self.shape(),
            self.dtype().name()
        )
    }
}

impl fmt::Display for Tensor {
    /// Prints as PyTorch's `print(tensor)` does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&ts_core::IValue::Tensor(self.0.clone()).to_display_string())
    }
}

impl<T: Element> From<&[T]> for Tensor {
    fn from(data: &[T]) -> Tensor {
        Tensor::from_slice(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creation_and_views() {
        let t = Tensor::from_slice(&[1.5f64, 2.5]);
        assert_eq!(t.shape(), vec![2]);
        assert_eq!(t.dtype(), DType::Float64);
        assert!(Tensor::from_data(&[1.0f32; 3], &[2, 2]).is_err());
        let s = Tensor::scalar(7i64);
        assert_eq!(s.dim(), 0);
        assert_eq!(s.item::<i64>().unwrap(), 7);
        assert!(t.item::<f64>().is_err());
        assert!(t.as_slice::<f32>().is_err());
        assert_eq!(t.size(-1).unwrap(), 2);
        assert!(t.size(1).is_err());
        let a = Tensor::randn(&[3, 4], 0).unwrap();
        let b = Tensor::randn(&[3, 4], 0).unwrap();
        assert!(a.bit_equal(&b));
        assert_eq!(
            Tensor::zeros(&[2], DType::Int32).unwrap().to_vec::<i32>(),
            vec![0, 0]
        );
        assert_eq!(Tensor::arange(3).unwrap().to_vec::<i64>(), vec![0, 1, 2]);
    }
}
