//! The `Tensor` handle: a reference to (storage, sizes, strides, offset, dtype).

use std::sync::Arc;

use parking_lot::{RwLock, RwLockReadGuard};
use smallvec::SmallVec;

use crate::device::Device;
use crate::dtype::DType;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::storage::Storage;

/// Sizes or strides of a tensor; inline for up to 6 dimensions.
pub type Dims = SmallVec<[i64; 6]>;

/// The metadata of a tensor. Shared by every handle to the same tensor; in-place metadata
/// operations (`unsqueeze_`, `t_`, `resize_`, `set_`) change it for all of them.
#[derive(Clone, Debug)]
pub struct TensorMeta {
    pub storage: Storage,
    pub sizes: Dims,
    pub strides: Dims,
    /// Offset of element 0, in elements (not bytes).
    pub offset: usize,
    pub dtype: DType,
    pub requires_grad: bool,
}

impl TensorMeta {
    /// Number of elements.
    pub fn numel(&self) -> usize {
        crate::shape::numel(&self.sizes)
    }

    /// Number of dimensions.
    pub fn dim(&self) -> usize {
        self.sizes.len()
    }

    /// True when row-major without gaps.
    pub fn is_contiguous(&self) -> bool {
        crate::shape::is_contiguous(&self.sizes, &self.strides)
    }

    /// Address of element 0 (the storage base plus the offset), for kernels.
    pub(crate) fn data_ptr(&self) -> *mut u8 {
        self.storage
            .as_mut_ptr()
            .wrapping_add(self.offset * self.dtype.size())
    }

    /// The same storage seen with other sizes, strides and offset (a view). Callers guarantee
    /// that every element lies in the storage.
    pub(crate) fn with_geometry(&self, sizes: Dims, strides: Dims, offset: usize) -> TensorMeta {
        TensorMeta {
            storage: self.storage.clone(),
            sizes,
            strides,
            offset,
            dtype: self.dtype,
            requires_grad: self.requires_grad,
        }
    }
}

struct TensorImpl {
    meta: RwLock<TensorMeta>,
    /// For a nested tensor: the length (dim 1) of each of its sequences. The metadata then
    /// describes the padded `[B, T, ...]` tensor that holds them (see `ops/nested.rs`).
    nested: Option<Box<[i64]>>,
    /// Autograd history and `.grad` (see [`crate::autograd`]); `None` for plain tensors.
    autograd: parking_lot::Mutex<Option<Box<crate::autograd::AutogradMeta>>>,
    /// For a quantized tensor: how its integer elements map to real values (see `quantized/`).
    quantizer: Option<Arc<crate::quantized::Quantizer>>,
}

/// A tensor. Cloning the handle aliases: both clones are the same tensor, as Python references
/// are. Use [`Tensor::shallow_view`]-style operations for views and `clone` ops for copies.
#[derive(Clone)]
pub struct Tensor {
    inner: Arc<TensorImpl>,
}

/// A weak handle to a tensor (see [`Tensor::downgrade`]).
#[derive(Clone)]
pub struct WeakTensor(std::sync::Weak<TensorImpl>);

impl WeakTensor {
    /// The tensor, if some handle still keeps it alive.
    pub fn upgrade(&self) -> Option<Tensor> {
        self.0.upgrade().map(|inner| Tensor { inner })
    }
}

/// Row-major (contiguous) strides for `sizes`.
pub fn contiguous_strides(sizes: &[i64]) -> Dims {
    crate::shape::contiguous_strides(sizes)
}

/// Number of elements of a shape, or an error when it overflows or a size is negative.
pub fn checked_numel(sizes: &[i64]) -> Result<usize> {
    let mut n: usize = 1;
    for &s in sizes {
        if s < 0 {
            return Err(Error::runtime(format!(
                "Trying to create tensor with negative dimension {s}: {sizes:?}"
            )));
        }
        n = n
            .checked_mul(s as usize)
            .ok_or_else(|| Error::runtime(format!("tensor of size {sizes:?} is too large")))?;
    }
    Ok(n)
}

impl Tensor {
    /// A tensor over `storage` with the given geometry. Checks that every reachable element lies
    /// inside the storage.
    pub fn from_parts(
        storage: Storage,
        sizes: &[i64],
        strides: &[i64],
        offset: usize,
        dtype: DType,
    ) -> Result<Tensor> {
        if sizes.len() != strides.len() {
            return Err(Error::runtime(format!(
                "mismatch in length of strides and shape: {} vs {}",
                strides.len(),
                sizes.len()
            )));
        }
        let numel = checked_numel(sizes)?;
        if numel > 0 {
            let mut max = offset as i128;
            let mut min = offset as i128;
            for (&sz, &st) in sizes.iter().zip(strides) {
                let reach = (sz as i128 - 1) * st as i128;
                if reach >= 0 {
                    max += reach;
                } else {
                    min += reach;
                }
            }
            let cap = (storage.nbytes() / dtype.size()) as i128;
            if min < 0 || max >= cap {
                return Err(Error::runtime(format!(
                    "setStorage: sizes {sizes:?}, strides {strides:?}, storage offset {offset}, and itemsize {} requiring a storage size of {} are out of bounds for storage of size {}",
                    dtype.size(),
                    (max + 1) as usize * dtype.size(),
                    storage.nbytes()
                )));
            }
        }
        Ok(Tensor::from_meta(TensorMeta {
            storage,
            sizes: sizes.into(),
            strides: strides.into(),
            offset,
            dtype,
            requires_grad: false,
        }))
    }

    /// Wraps metadata into a new tensor handle without checks (callers guarantee bounds).
    pub(crate) fn from_meta(meta: TensorMeta) -> Tensor {
        Tensor {
            inner: Arc::new(TensorImpl {
                meta: RwLock::new(meta),
                nested: None,
                autograd: parking_lot::Mutex::new(None),
                quantizer: None,
            }),
        }
    }

    /// A nested tensor over the padded `[B, T, ...]` tensor `padded` whose sequence `b` is
    /// `padded[b, :lengths[b]]` (the handle shares `padded`'s storage).
    pub fn nested_from_padded(padded: &Tensor, lengths: Vec<i64>) -> Result<Tensor> {
        let meta = padded.meta_snapshot();
        let t = meta.sizes.get(1).copied().unwrap_or(0);
        if meta.dim() < 2
            || lengths.len() as i64 != meta.sizes[0]
            || lengths.iter().any(|&l| l < 0 || l > t)
        {
            return Err(Error::runtime(format!(
                "a nested tensor needs a [B, T, ...] padded tensor and B lengths of at most T, got sizes {:?} and lengths {lengths:?}",
                meta.sizes.as_slice()
            )));
        }
        Ok(Tensor {
            inner: Arc::new(TensorImpl {
                meta: RwLock::new(meta),
                nested: Some(lengths.into_boxed_slice()),
                autograd: parking_lot::Mutex::new(None),
                quantizer: None,
            }),
        })
    }

    /// The sequence lengths of a nested tensor; `None` for an ordinary (strided) tensor.
    pub fn nested_lengths(&self) -> Option<&[i64]> {
        self.inner.nested.as_deref()
    }

    /// A quantized tensor over the integer tensor `ints` (sharing its storage): element `i`
    /// stands for `quantizer`'s real value of `ints[i]`. Callers check dtype and shape.
    pub(crate) fn with_quantizer(
        ints: &Tensor,
        quantizer: Arc<crate::quantized::Quantizer>,
    ) -> Tensor {
        Tensor {
            inner: Arc::new(TensorImpl {
                meta: RwLock::new(ints.meta_snapshot()),
                nested: None,
                quantizer: Some(quantizer),
                autograd: parking_lot::Mutex::new(None),
            }),
        }
    }

    /// The quantizer of a quantized tensor; `None` for an ordinary tensor.
    pub fn quantizer(&self) -> Option<&Arc<crate::quantized::Quantizer>> {
        self.inner.quantizer.as_ref()
    }

    /// Whether this is a quantized tensor (`Tensor.is_quantized`).
    pub fn is_quantized(&self) -> bool {
        self.inner.quantizer.is_some()
    }

    /// Whether this is a nested tensor (`Tensor.is_nested`).
    pub fn is_nested(&self) -> bool {
        self.inner.nested.is_some()
    }

    /// A new contiguous, zero-filled tensor.
    pub fn zeros(sizes: &[i64], dtype: DType) -> Result<Tensor> {
        Tensor::empty_strided(sizes, &contiguous_strides(sizes), dtype)
    }

    /// A new zero-filled tensor with the given strides (which must describe a non-negative,
    /// in-bounds layout; the storage is sized to fit).
    pub fn empty_strided(sizes: &[i64], strides: &[i64], dtype: DType) -> Result<Tensor> {
        crate::threads::init_pool();
        if sizes.len() != strides.len() {
            return Err(Error::runtime(format!(
                "mismatch in length of strides and shape: {} vs {}",
                strides.len(),
                sizes.len()
            )));
        }
        let numel = checked_numel(sizes)?;
        let mut extent: usize = 0;
        if numel > 0 {
            extent = 1;
            for (&sz, &st) in sizes.iter().zip(strides) {
                if st < 0 {
                    return Err(Error::runtime(format!(
                        "as_strided: Negative strides are not supported at the moment, got strides: {strides:?}"
                    )));
                }
                extent = (sz as usize - 1)
                    .checked_mul(st as usize)
                    .and_then(|r| r.checked_add(extent))
                    .ok_or_else(|| Error::runtime("tensor too large"))?;
            }
        }
        let nbytes = extent
            .checked_mul(dtype.size())
            .ok_or_else(|| Error::runtime("tensor too large"))?;
        let storage = Storage::zeroed(nbytes, Device::Cpu)?;
        Ok(Tensor::from_meta(TensorMeta {
            storage,
            sizes: sizes.into(),
            strides: strides.into(),
            offset: 0,
            dtype,
            requires_grad: false,
        }))
    }

    /// A contiguous tensor holding `data` with shape `sizes`.
    pub fn from_vec<T: Element>(data: Vec<T>, sizes: &[i64]) -> Result<Tensor> {
        let numel = checked_numel(sizes)?;
        if numel != data.len() {
            return Err(Error::runtime(format!(
                "shape {sizes:?} is invalid for input of size {}",
                data.len()
            )));
        }
        let t = Tensor::zeros(sizes, T::DTYPE)?;
        let dst = t.meta().storage.as_mut_ptr() as *mut T;
        // SAFETY: `t` is fresh, contiguous, 64-byte aligned and holds exactly `numel` elements of T.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst, numel) };
        Ok(t)
    }

    /// Read access to the metadata. Do not hold the guard across calls that mutate this tensor's
    /// metadata.
    pub fn meta(&self) -> RwLockReadGuard<'_, TensorMeta> {
        self.inner.meta.read()
    }

    /// Replaces the metadata (for in-place metadata ops such as `unsqueeze_` and `set_`).
    pub fn set_meta(&self, meta: TensorMeta) {
        *self.inner.meta.write() = meta;
    }

    /// A copy of the metadata.
    pub fn meta_snapshot(&self) -> TensorMeta {
        self.meta().clone()
    }

    /// The sizes.
    pub fn sizes(&self) -> Dims {
        self.meta().sizes.clone()
    }

    /// The strides, in elements.
    pub fn strides(&self) -> Dims {
        self.meta().strides.clone()
    }

    /// Number of dimensions.
    pub fn dim(&self) -> usize {
        self.meta().sizes.len()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.meta().numel()
    }

    /// Element type.
    pub fn dtype(&self) -> DType {
        self.meta().dtype
    }

    /// Device of the data.
    pub fn device(&self) -> Device {
        self.meta().storage.device()
    }

    /// Offset of element 0 in the storage, in elements.
    pub fn storage_offset(&self) -> usize {
        self.meta().offset
    }

    /// The shared storage.
    pub fn storage(&self) -> Storage {
        self.meta().storage.clone()
    }

    /// The `requires_grad` flag.
    pub fn requires_grad(&self) -> bool {
        self.meta().requires_grad
    }

    /// Sets the `requires_grad` flag (visible through every handle).
    pub fn set_requires_grad(&self, v: bool) {
        self.inner.meta.write().requires_grad = v;
    }

    /// The autograd metadata, created on first use (see [`crate::autograd`]).
    pub fn autograd(
        &self,
    ) -> parking_lot::MutexGuard<'_, Option<Box<crate::autograd::AutogradMeta>>> {
        self.inner.autograd.lock()
    }

    /// A handle that does not keep the tensor alive (for `retain_grad` hooks in the graph).
    pub fn downgrade(&self) -> WeakTensor {
        WeakTensor(Arc::downgrade(&self.inner))
    }

    /// True when both handles are the same tensor (Python `is`).
    pub fn is_same(a: &Tensor, b: &Tensor) -> bool {
        Arc::ptr_eq(&a.inner, &b.inner)
    }

    /// How many handles share this tensor object (the interpreter's move tests observe it).
    pub fn use_count(&self) -> usize {
        Arc::strong_count(&self.inner)
    }

    /// A stable identity of this tensor object (for memo tables and hashing by identity).
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }

    /// True when the elements are laid out row-major without gaps.
    pub fn is_contiguous(&self) -> bool {
        self.meta().is_contiguous()
    }

    /// The elements in row-major order, converted to `T` with C-cast semantics.
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        use half::{bf16, f16};
        let m = self.meta();
        let mut out = Vec::with_capacity(m.numel());
        if out.capacity() == 0 {
            return out;
        }
        // The stored dtype is matched once; each arm walks the rows with a typed read, so a
        // contiguous tensor of `T` is a straight copy loop.
        macro_rules! walk {
            ($s:ty, $conv:expr) => {
                walk_rows::<$s, T>(&m, &mut out, $conv)
            };
        }
        match m.dtype {
            DType::Bool | DType::UInt8 => walk!(u8, |v: u8| T::from_i64(v as i64)),
            DType::Int8 => walk!(i8, |v: i8| T::from_i64(v as i64)),
            DType::Int16 => walk!(i16, |v: i16| T::from_i64(v as i64)),
            DType::Int32 => walk!(i32, |v: i32| T::from_i64(v as i64)),
            DType::Int64 => walk!(i64, |v: i64| T::from_i64(v)),
            DType::Float16 => walk!(f16, |v: f16| T::from_f64(v.to_f64())),
            DType::BFloat16 => walk!(bf16, |v: bf16| T::from_f64(v.to_f64())),
            DType::Float32 => walk!(f32, |v: f32| T::from_f64(v as f64)),
            DType::Float64 => walk!(f64, |v: f64| T::from_f64(v)),
            DType::UInt16 => walk!(u16, |v: u16| T::from_i64(v as i64)),
            DType::UInt32 => walk!(u32, |v: u32| T::from_i64(v as i64)),
            DType::UInt64 => walk!(u64, |v: u64| {
                if T::DTYPE.is_floating_point() || T::DTYPE.is_complex() {
                    T::from_f64(v as f64)
                } else {
                    T::from_i64(v as i64)
                }
            }),
            DType::Complex64 => walk!(crate::complex::Complex32, |z: crate::complex::Complex32| {
                T::from_c64(z.re as f64, z.im as f64)
            }),
            DType::Complex128 => {
                walk!(crate::complex::Complex64, |z: crate::complex::Complex64| {
                    T::from_c64(z.re, z.im)
                })
            }
        }
        out
    }
}

/// Appends the elements of `m` (stored as `S`) to `out` in row-major order, row by row along
/// the last dimension, converting each with `conv`.
fn walk_rows<S: Copy, T>(m: &TensorMeta, out: &mut Vec<T>, conv: impl Fn(S) -> T) {
    let p = m.storage.as_ptr() as *const S;
    let nd = m.sizes.len();
    if nd == 0 {
        // SAFETY: a 0-d tensor's single element at `offset` lies within its storage.
        out.push(conv(unsafe { *p.add(m.offset) }));
        return;
    }
    let inner = m.sizes[nd - 1] as usize;
    let step = m.strides[nd - 1] as isize;
    let rows = m.numel() / inner.max(1);
    let mut idx: Dims = SmallVec::from_elem(0, nd - 1);
    for _ in 0..rows {
        let mut off = m.offset as isize;
        for d in 0..nd - 1 {
            off += (idx[d] * m.strides[d]) as isize;
        }
        for j in 0..inner as isize {
            // SAFETY: `from_parts`/kernels guarantee every index within sizes maps into the
            // storage, and the storage holds elements of `m.dtype`, stored as `S`.
            out.push(conv(unsafe { *p.offset(off + j * step) }));
        }
        for d in (0..nd - 1).rev() {
            idx[d] += 1;
            if idx[d] < m.sizes[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = self.meta();
        write!(
            f,
            "Tensor(sizes={:?}, strides={:?}, offset={}, dtype={})",
            m.sizes.as_slice(),
            m.strides.as_slice(),
            m.offset,
            m.dtype
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_vec_walks_views_in_row_major_order() {
        let t = Tensor::from_vec((0..24).collect::<Vec<i32>>(), &[2, 3, 4]).unwrap();
        // Transposed (inner stride 4), sliced with an offset, 0-d, and empty views.
        let tt = t.transpose(1, 2).unwrap();
        let want: Vec<f64> = (0..2)
            .flat_map(|a| {
                (0..4).flat_map(move |c| (0..3).map(move |b| (a * 12 + b * 4 + c) as f64))
            })
            .collect();
        assert_eq!(tt.to_vec::<f64>(), want);
        let s = Tensor::from_parts(t.storage(), &[2, 2], &[12, 1], 5, DType::Int32).unwrap();
        assert_eq!(s.to_vec::<i64>(), vec![5, 6, 17, 18]);
        let z = Tensor::from_parts(t.storage(), &[], &[], 7, DType::Int32).unwrap();
        assert_eq!(z.to_vec::<u8>(), vec![7]);
        let e = Tensor::from_parts(t.storage(), &[3, 0], &[1, 1], 0, DType::Int32).unwrap();
        assert!(e.to_vec::<f32>().is_empty());
        let f = Tensor::from_vec(vec![1.5f32, -2.7, f32::NAN], &[3]).unwrap();
        let i = f.to_vec::<i64>();
        assert_eq!(&i[..2], &[1, -2]);
    }

    #[test]
    fn handle_is_pointer_sized() {
        assert_eq!(std::mem::size_of::<Tensor>(), 8);
    }

    #[test]
    fn from_vec_round_trips() {
        let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
        assert_eq!(t.sizes().as_slice(), &[2, 2]);
        assert_eq!(t.strides().as_slice(), &[2, 1]);
        assert_eq!(t.to_vec::<f32>(), vec![1.0, 2.0, 3.0, 4.0]);
        assert!(t.is_contiguous());
    }

    #[test]
    fn from_parts_checks_bounds() {
        let s = Storage::zeroed(16, Device::Cpu).unwrap();
        assert!(Tensor::from_parts(s.clone(), &[2, 2], &[2, 1], 0, DType::Float32).is_ok());
        assert!(Tensor::from_parts(s, &[2, 2], &[2, 1], 1, DType::Float32).is_err());
    }
}
