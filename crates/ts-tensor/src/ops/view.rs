//! View operations: new tensors over the same storage with other sizes, strides or offset.
//! Writing through a view changes the base and every other view of the same memory.

use smallvec::SmallVec;

use crate::error::{Error, ErrorKind, Result};
use crate::shape::{compute_view_strides, infer_size, wrap_dim, wrap_dim_insert};
use crate::tensor::{Dims, Tensor, TensorMeta};

fn view_of(m: &TensorMeta, sizes: Dims, strides: Dims, offset: usize) -> Tensor {
    Tensor::from_meta(m.with_geometry(sizes, strides, offset))
}

/// Python-style slice bounds clamped to `[0, size]` for a positive step.
pub(crate) fn clamp_slice(start: Option<i64>, end: Option<i64>, size: i64) -> (i64, i64) {
    let norm = |v: i64| {
        if v < 0 {
            (v + size).max(0)
        } else {
            v.min(size)
        }
    };
    let s = start.map(norm).unwrap_or(0);
    let e = end.map(norm).unwrap_or(size);
    (s, e.max(s))
}

impl Tensor {
    /// `view(shape)`: the same data with a new shape (one `-1` is inferred), without copying.
    /// Fails when the strides do not allow it; use [`Tensor::reshape`] then.
    pub fn view(&self, shape: &[i64]) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let sizes = infer_size(shape, m.numel())?;
        let strides = compute_view_strides(&m.sizes, &m.strides, &sizes).ok_or_else(|| {
            Error::runtime(
                "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
            )
        })?;
        Ok(view_of(&m, sizes, strides, m.offset))
    }

    /// `reshape(shape)`: a view when the strides allow it, otherwise a contiguous copy.
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let sizes = infer_size(shape, m.numel())?;
        match compute_view_strides(&m.sizes, &m.strides, &sizes) {
            Some(strides) => Ok(view_of(&m, sizes, strides, m.offset)),
            None => self.contiguous()?.view(&sizes),
        }
    }

    /// `view_as(other)` / `reshape_as(other)` shape source.
    pub fn view_as(&self, other: &Tensor) -> Result<Tensor> {
        self.view(&other.sizes())
    }

    /// `as_strided(size, stride, storage_offset)`: an arbitrary view of the storage, bounds
    /// checked. `storage_offset` defaults to this tensor's.
    pub fn as_strided(
        &self,
        size: &[i64],
        stride: &[i64],
        storage_offset: Option<i64>,
    ) -> Result<Tensor> {
        let m = self.meta_snapshot();
        if let Some(s) = stride.iter().find(|&&s| s < 0) {
            let _ = s;
            return Err(Error::runtime(format!(
                "as_strided: Negative strides are not supported at the moment, got strides: {stride:?}"
            )));
        }
        let offset = storage_offset.unwrap_or(m.offset as i64);
        if offset < 0 {
            return Err(Error::runtime(format!(
                "Tensor: invalid storage offset {offset}"
            )));
        }
        let t = Tensor::from_parts(m.storage.clone(), size, stride, offset as usize, m.dtype)?;
        t.set_requires_grad(m.requires_grad);
        Ok(t)
    }

    /// `transpose(dim0, dim1)`: swaps two dimensions.
    pub fn transpose(&self, dim0: i64, dim1: i64) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let nd = m.dim();
        let a = wrap_dim(dim0, nd)?;
        let b = wrap_dim(dim1, nd)?;
        if nd == 0 {
            return Ok(view_of(&m, m.sizes.clone(), m.strides.clone(), m.offset));
        }
        let mut sizes = m.sizes.clone();
        let mut strides = m.strides.clone();
        sizes.swap(a, b);
        strides.swap(a, b);
        Ok(view_of(&m, sizes, strides, m.offset))
    }

    /// `t()`: transposes a matrix; 0-d and 1-d tensors are returned as views of themselves.
    pub fn t(&self) -> Result<Tensor> {
        let nd = self.dim();
        if nd > 2 {
            return Err(Error::runtime(format!(
                "t() expects a tensor with <= 2 dimensions, but self is {nd}D"
            )));
        }
        if nd < 2 {
            return self.transpose(0, 0);
        }
        self.transpose(0, 1)
    }

    /// `permute(dims)`: reorders dimensions.
    pub fn permute(&self, dims: &[i64]) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let nd = m.dim();
        if dims.len() != nd {
            return Err(Error::runtime(format!(
                "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal to len(dims) = {}",
                dims.len()
            )));
        }
        let mut seen = 0u64;
        let mut sizes: Dims = SmallVec::new();
        let mut strides: Dims = SmallVec::new();
        for &d in dims {
            let w = wrap_dim(d, nd)?;
            if seen & (1 << w) != 0 {
                return Err(Error::runtime("permute(): duplicate dims are not allowed."));
            }
            seen |= 1 << w;
            sizes.push(m.sizes[w]);
            strides.push(m.strides[w]);
        }
        Ok(view_of(&m, sizes, strides, m.offset))
    }

    /// `select(dim, index)`: the slice at `index` along `dim`, with that dimension removed.
    pub fn select(&self, dim: i64, index: i64) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let nd = m.dim();
        if nd == 0 {
            return Err(Error::new(
                ErrorKind::IndexError,
                "select() cannot be applied to a 0-dim tensor.",
            ));
        }
        let d = wrap_dim(dim, nd)?;
        let size = m.sizes[d];
        if index < -size || index >= size {
            return Err(Error::new(
                ErrorKind::IndexError,
                format!(
                    "select(): index {index} out of range for tensor of size {:?} at dimension {d}",
                    m.sizes.as_slice()
                ),
            ));
        }
        let i = if index < 0 { index + size } else { index };
        let offset = (m.offset as i64 + i * m.strides[d]) as usize;
        let mut sizes = m.sizes.clone();
        let mut strides = m.strides.clone();
        sizes.remove(d);
        strides.remove(d);
        Ok(view_of(&m, sizes, strides, offset))
    }

    /// `slice(dim, start, end, step)` (`x[start:end:step]` along `dim`): Python bounds, clamped;
    /// `step` must be positive.
    pub fn slice(
        &self,
        dim: i64,
        start: Option<i64>,
        end: Option<i64>,
        step: i64,
    ) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let nd = m.dim();
        if nd == 0 {
            return Err(Error::new(
                ErrorKind::IndexError,
                "slice() cannot be applied to a 0-dim tensor.",
            ));
        }
        let d = wrap_dim(dim, nd)?;
        if step <= 0 {
            return Err(Error::runtime("slice step must be positive"));
        }
        let size = m.sizes[d];
        let (s, e) = clamp_slice(start, end, size);
        let len = (e - s + step - 1) / step;
        let offset = (m.offset as i64 + s * m.strides[d]) as usize;
        let mut sizes = m.sizes.clone();
        let mut strides = m.strides.clone();
        sizes[d] = len;
        strides[d] *= step;
        Ok(view_of(&m, sizes, strides, offset))
    }

    /// `narrow(dim, start, length)`: `length` elements from `start` (which may be negative).
    pub fn narrow(&self, dim: i64, start: i64, length: i64) -> Result<Tensor> {
        let nd = self.dim();
        if nd == 0 {
            return Err(Error::runtime(
                "narrow() cannot be applied to a 0-dim tensor.",
            ));
        }
        let d = wrap_dim(dim, nd)?;
        let size = self.meta().sizes[d];
        if length < 0 {
            return Err(Error::runtime("narrow(): length must be non-negative."));
        }
        if start < -size || start > size {
            return Err(Error::new(
                ErrorKind::IndexError,
                format!(
                    "start out of range (expected to be in range of [{}, {size}], but got {start})",
                    -size
                ),
            ));
        }
        let s = if start < 0 { start + size } else { start };
        if s + length > size {
            return Err(Error::runtime(format!(
                "start ({s}) + length ({length}) exceeds dimension size ({size})."
            )));
        }
        self.slice(d as i64, Some(s), Some(s + length), 1)
    }

    /// `unsqueeze(dim)`: inserts a size-1 dimension.
    pub fn unsqueeze(&self, dim: i64) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let d = wrap_dim_insert(dim, m.dim())?;
        let (sizes, strides) = unsqueezed(&m, d);
        Ok(view_of(&m, sizes, strides, m.offset))
    }

    /// `squeeze()`: removes every size-1 dimension.
    pub fn squeeze(&self) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let mut sizes: Dims = SmallVec::new();
        let mut strides: Dims = SmallVec::new();
        for (&s, &st) in m.sizes.iter().zip(&m.strides) {
            if s != 1 {
                sizes.push(s);
                strides.push(st);
            }
        }
        Ok(view_of(&m, sizes, strides, m.offset))
    }

    /// `squeeze(dim)`: removes `dim` if it has size 1 (otherwise a plain view).
    pub fn squeeze_dim(&self, dim: i64) -> Result<Tensor> {
        self.squeeze_dims(&[dim])
    }

    /// `squeeze(dims)`: removes the listed dimensions that have size 1.
    pub fn squeeze_dims(&self, dims: &[i64]) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let (_, mask) = crate::shape::wrap_dims(dims, m.dim())?;
        let mut sizes: Dims = SmallVec::new();
        let mut strides: Dims = SmallVec::new();
        for (i, (&s, &st)) in m.sizes.iter().zip(&m.strides).enumerate() {
            if s == 1 && mask & (1 << i) != 0 {
                continue;
            }
            sizes.push(s);
            strides.push(st);
        }
        Ok(view_of(&m, sizes, strides, m.offset))
    }

    /// `expand(size)`: broadcasts size-1 dimensions (stride 0) and prepends new ones; `-1` keeps
    /// a size. `implicit` is ATen's flag and does not change the result.
    pub fn expand(&self, size: &[i64], implicit: bool) -> Result<Tensor> {
        let _ = implicit;
        let m = self.meta_snapshot();
        let nd = m.dim();
        if size.len() < nd {
            return Err(Error::runtime(format!(
                "expand({}{{{:?}}}, size={size:?}): the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({nd})",
                legacy_type_name(m.dtype),
                m.sizes.as_slice(),
                size.len()
            )));
        }
        let n = size.len();
        let mut sizes: Dims = SmallVec::from_elem(0, n);
        let mut strides: Dims = SmallVec::from_elem(0, n);
        for i in (0..n).rev() {
            let off = n - 1 - i;
            let target = size[i];
            if off >= nd {
                if target < 0 {
                    return Err(Error::runtime(format!(
                        "The expanded size of the tensor ({target}) isn't allowed in a leading, non-existing dimension {i}"
                    )));
                }
                sizes[i] = target;
                strides[i] = if i + 1 < n {
                    sizes[i + 1] * strides[i + 1]
                } else {
                    1
                };
                strides[i] = 0;
                continue;
            }
            let j = nd - 1 - off;
            let cur = m.sizes[j];
            let t = if target == -1 { cur } else { target };
            if cur == t {
                sizes[i] = t;
                strides[i] = m.strides[j];
            } else if cur == 1 {
                if t < 0 {
                    return Err(Error::runtime(format!(
                        "Trying to create tensor with negative dimension {t}: {size:?}"
                    )));
                }
                sizes[i] = t;
                strides[i] = 0;
            } else {
                return Err(Error::runtime(format!(
                    "The expanded size of the tensor ({t}) must match the existing size ({cur}) at non-singleton dimension {i}.  Target sizes: {size:?}.  Tensor sizes: {:?}",
                    m.sizes.as_slice()
                )));
            }
        }
        Ok(view_of(&m, sizes, strides, m.offset))
    }

    /// `expand_as(other)`.
    pub fn expand_as(&self, other: &Tensor) -> Result<Tensor> {
        self.expand(&other.sizes(), false)
    }

    /// `flatten(start_dim, end_dim)`: merges a range of dimensions (a view when possible).
    pub fn flatten(&self, start_dim: i64, end_dim: i64) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let nd = m.dim();
        let s = wrap_dim(start_dim, nd)?;
        let e = wrap_dim(end_dim, nd)?;
        if s > e {
            return Err(Error::runtime(
                "flatten() has invalid args: start_dim cannot come after end_dim",
            ));
        }
        if nd == 0 {
            return self.reshape(&[1]);
        }
        if s == e {
            return Ok(view_of(&m, m.sizes.clone(), m.strides.clone(), m.offset));
        }
        let mut shape: Dims = SmallVec::new();
        shape.extend_from_slice(&m.sizes[..s]);
        shape.push(m.sizes[s..=e].iter().product());
        shape.extend_from_slice(&m.sizes[e + 1..]);
        self.reshape(&shape)
    }

    /// `unflatten(dim, sizes)`: splits one dimension into several (one `-1` allowed).
    pub fn unflatten(&self, dim: i64, sizes: &[i64]) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let d = wrap_dim(dim, m.dim())?;
        if sizes.is_empty() {
            return Err(Error::runtime("unflatten: sizes must be non-empty"));
        }
        let size = m.sizes.get(d).copied().unwrap_or(1);
        let inferred = infer_size(sizes, size as usize).map_err(|_| {
            Error::runtime(format!(
                "unflatten: Provided sizes {sizes:?} don't multiply up to the size of dim {d} ({size}) in the input tensor"
            ))
        })?;
        let mut shape: Dims = SmallVec::new();
        shape.extend_from_slice(&m.sizes[..d]);
        shape.extend_from_slice(&inferred);
        shape.extend_from_slice(&m.sizes[d + 1..]);
        self.view(&shape)
    }

    /// `unbind(dim)`: every slice along `dim`, as views.
    pub fn unbind(&self, dim: i64) -> Result<Vec<Tensor>> {
        let nd = self.dim();
        if nd == 0 {
            return Err(Error::new(
                ErrorKind::IndexError,
                "Dimension specified as 0 but tensor has no dimensions",
            ));
        }
        let d = wrap_dim(dim, nd)?;
        let n = self.meta().sizes[d];
        (0..n).map(|i| self.select(d as i64, i)).collect()
    }

    /// `chunk(chunks, dim)`: up to `chunks` views of equal size (the last may be smaller).
    pub fn chunk(&self, chunks: i64, dim: i64) -> Result<Vec<Tensor>> {
        if self.dim() == 0 {
            return Err(Error::runtime(
                "chunk expects at least a 1-dimensional tensor",
            ));
        }
        if chunks <= 0 {
            return Err(Error::runtime(format!(
                "chunk expects `chunks` to be greater than 0, got: {chunks}"
            )));
        }
        let d = wrap_dim(dim, self.dim())?;
        let size = self.meta().sizes[d];
        let split = (size + chunks - 1) / chunks;
        if split == 0 && size == 0 {
            // torch: zeros(0).chunk(2) gives `chunks` empty tensors.
            return (0..chunks)
                .map(|_| self.slice(d as i64, Some(0), Some(0), 1))
                .collect();
        }
        self.split(split, d as i64)
    }

    /// `split(split_size, dim)`: views of `split_size` along `dim` (the last may be smaller).
    pub fn split(&self, split_size: i64, dim: i64) -> Result<Vec<Tensor>> {
        if self.dim() == 0 {
            return Err(Error::runtime(
                "split expects at least a 1-dimensional tensor",
            ));
        }
        if split_size < 0 {
            return Err(Error::runtime(format!(
                "split expects split_size be non-negative, but got split_size={split_size}"
            )));
        }
        let d = wrap_dim(dim, self.dim())?;
        let size = self.meta().sizes[d];
        if split_size == 0 && size != 0 {
            return Err(Error::runtime(format!(
                "split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
            )));
        }
        let n = if split_size == 0 {
            1
        } else {
            ((size + split_size - 1) / split_size).max(1)
        };
        (0..n)
            .map(|i| {
                let start = i * split_size;
                let len = split_size.min(size - start);
                self.narrow(d as i64, start, len)
            })
            .collect()
    }

    /// `split_with_sizes(split_sizes, dim)`: views with the given sizes, which must sum to the
    /// dimension's size.
    pub fn split_with_sizes(&self, split_sizes: &[i64], dim: i64) -> Result<Vec<Tensor>> {
        if self.dim() == 0 {
            return Err(Error::runtime(
                "split expects at least a 1-dimensional tensor",
            ));
        }
        let d = wrap_dim(dim, self.dim())?;
        let size = self.meta().sizes[d];
        let total: i64 = split_sizes.iter().sum();
        if split_sizes.iter().any(|&s| s < 0) || total != size {
            if split_sizes.iter().any(|&s| s < 0) {
                return Err(Error::runtime(format!(
                    "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes={split_sizes:?}"
                )));
            }
            return Err(Error::runtime(format!(
                "split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at dimension {d}), but got split_sizes={split_sizes:?}"
            )));
        }
        let mut start = 0;
        let mut out = Vec::with_capacity(split_sizes.len());
        for &len in split_sizes {
            out.push(self.narrow(d as i64, start, len)?);
            start += len;
        }
        Ok(out)
    }

    /// `diagonal(offset, dim1, dim2)`: the diagonal as a view, appended as the last dimension.
    pub fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let nd = m.dim();
        let a = wrap_dim(dim1, nd)?;
        let b = wrap_dim(dim2, nd)?;
        if a == b {
            return Err(Error::runtime(format!(
                "diagonal dimensions cannot be identical {dim1}, {dim2}"
            )));
        }
        let (sa, sb) = (m.sizes[a], m.sizes[b]);
        let (len, start) = if offset >= 0 {
            ((sa.min(sb - offset)).max(0), offset * m.strides[b])
        } else {
            ((sa + offset).min(sb).max(0), -offset * m.strides[a])
        };
        let offset_elems = if len == 0 {
            m.offset as i64
        } else {
            m.offset as i64 + start
        };
        let mut sizes: Dims = SmallVec::new();
        let mut strides: Dims = SmallVec::new();
        for i in 0..nd {
            if i != a && i != b {
                sizes.push(m.sizes[i]);
                strides.push(m.strides[i]);
            }
        }
        sizes.push(len);
        strides.push(m.strides[a] + m.strides[b]);
        Ok(view_of(&m, sizes, strides, offset_elems as usize))
    }

    /// `movedim(source, destination)` for single dimensions.
    pub fn movedim(&self, source: i64, destination: i64) -> Result<Tensor> {
        let nd = self.dim();
        let s = wrap_dim(source, nd)?;
        let d = wrap_dim(destination, nd)?;
        let mut order: Vec<i64> = (0..nd as i64).filter(|&i| i != s as i64).collect();
        order.insert(d.min(order.len()), s as i64);
        self.permute(&order)
    }

    /// In-place `unsqueeze_`: changes this tensor's shape for every handle.
    pub fn unsqueeze_(&self, dim: i64) -> Result<()> {
        let v = self.unsqueeze(dim)?;
        self.set_meta(v.meta_snapshot());
        Ok(())
    }

    /// In-place `squeeze_(dim)`.
    pub fn squeeze_dim_(&self, dim: i64) -> Result<()> {
        let v = self.squeeze_dim(dim)?;
        self.set_meta(v.meta_snapshot());
        Ok(())
    }

    /// In-place `t_()`.
    pub fn t_(&self) -> Result<()> {
        let v = self.t()?;
        self.set_meta(v.meta_snapshot());
        Ok(())
    }

    /// In-place `transpose_(dim0, dim1)`.
    pub fn transpose_(&self, dim0: i64, dim1: i64) -> Result<()> {
        let v = self.transpose(dim0, dim1)?;
        self.set_meta(v.meta_snapshot());
        Ok(())
    }
}

fn unsqueezed(m: &TensorMeta, d: usize) -> (Dims, Dims) {
    let mut sizes = m.sizes.clone();
    let mut strides = m.strides.clone();
    let st = if d >= m.dim() {
        1
    } else {
        m.sizes[d] * m.strides[d]
    };
    sizes.insert(d, 1);
    strides.insert(d, st);
    (sizes, strides)
}

/// The legacy type name PyTorch prints in some messages (`torch.FloatTensor`).
pub(crate) fn legacy_type_name(dt: crate::DType) -> String {
    format!("torch.{}Tensor", dt.scalar_type_name())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    fn arange(sizes: &[i64]) -> Tensor {
        let n: i64 = sizes.iter().product();
        Tensor::from_vec((0..n).map(|i| i as f32).collect(), sizes).unwrap()
    }

    fn geo(t: &Tensor) -> (Vec<i64>, Vec<i64>, usize) {
        (t.sizes().to_vec(), t.strides().to_vec(), t.storage_offset())
    }

    #[test]
    fn view_and_reshape() {
        let x = arange(&[2, 3]);
        // torch: x.t().view(-1) -> "view size is not compatible ..."
        assert!(x
            .t()
            .unwrap()
            .view(&[-1])
            .unwrap_err()
            .message
            .starts_with("view size is not compatible"));
        // torch: x.t().reshape(6).stride() == (1,) (a copy)
        let r = x.t().unwrap().reshape(&[6]).unwrap();
        assert_eq!(r.to_vec::<f32>(), vec![0., 3., 1., 4., 2., 5.]);
        assert!(!Storage::ptr_eq(&r.storage(), &x.storage()));
        let v = x.reshape(&[3, 2]).unwrap();
        assert!(Storage::ptr_eq(&v.storage(), &x.storage()));
        assert_eq!(geo(&v), (vec![3, 2], vec![2, 1], 0));
    }

    use crate::Storage;

    #[test]
    fn select_slice_narrow_geometry() {
        let x = arange(&[2, 3]);
        // torch: x.select(1,-4) -> IndexError "select(): index -4 out of range for tensor of size [2, 3] at dimension 1"
        let e = x.select(1, -4).unwrap_err();
        assert_eq!(e.kind, ErrorKind::IndexError);
        assert_eq!(
            e.message,
            "select(): index -4 out of range for tensor of size [2, 3] at dimension 1"
        );
        assert_eq!(geo(&x.select(1, -1).unwrap()), (vec![2], vec![3], 2));
        // x[:, -5:10:2] -> columns 0, 2
        assert_eq!(
            x.slice(1, Some(-5), Some(10), 2).unwrap().to_vec::<f32>(),
            vec![0., 2., 3., 5.]
        );
        assert_eq!(
            x.slice(1, Some(2), Some(1), 1).unwrap().sizes().as_slice(),
            &[2, 0]
        );
        assert_eq!(
            x.slice(1, None, None, -1).unwrap_err().message,
            "slice step must be positive"
        );
        // torch: x.narrow(1, -1, 1) -> sizes (2, 1), strides (3, 1), offset 2
        assert_eq!(
            geo(&x.narrow(1, -1, 1).unwrap()),
            (vec![2, 1], vec![3, 1], 2)
        );
        assert_eq!(
            x.narrow(1, 2, 3).unwrap_err().message,
            "start (2) + length (3) exceeds dimension size (3)."
        );
        assert_eq!(
            x.narrow(1, 4, 1).unwrap_err().message,
            "start out of range (expected to be in range of [-3, 3], but got 4)"
        );
    }

    #[test]
    fn expand_rules_and_messages() {
        let x = arange(&[2, 3]);
        assert_eq!(
            x.expand(&[3], false).unwrap_err().message,
            "expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)"
        );
        assert_eq!(
            x.expand(&[2, 4], false).unwrap_err().message,
            "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: [2, 3]"
        );
        assert_eq!(
            geo(&x.expand(&[4, -1, -1], false).unwrap()),
            (vec![4, 2, 3], vec![0, 3, 1], 0)
        );
        let c = arange(&[3, 1]).expand(&[3, 4], false).unwrap();
        assert_eq!(c.strides().as_slice(), &[1, 0]);
        assert_eq!(
            c.to_vec::<f32>(),
            vec![0., 0., 0., 0., 1., 1., 1., 1., 2., 2., 2., 2.]
        );
    }

    #[test]
    fn split_chunk_unbind_shapes() {
        let x = arange(&[5]);
        let sizes = |v: Vec<Tensor>| v.iter().map(|t| t.sizes()[0]).collect::<Vec<_>>();
        // torch: zeros(5).chunk(4) -> sizes [2, 2, 1]
        assert_eq!(sizes(x.chunk(4, 0).unwrap()), vec![2, 2, 1]);
        assert_eq!(sizes(x.split(2, 0).unwrap()), vec![2, 2, 1]);
        assert_eq!(sizes(arange(&[0]).chunk(2, 0).unwrap()), vec![0, 0]);
        assert_eq!(sizes(arange(&[0]).split(2, 0).unwrap()), vec![0]);
        assert!(x
            .split_with_sizes(&[2, 2], 0)
            .unwrap_err()
            .message
            .contains("sum exactly to 5"));
        let parts = x.split_with_sizes(&[1, 4], 0).unwrap();
        assert_eq!(parts[1].storage_offset(), 1);
        assert_eq!(
            Tensor::zeros(&[], DType::Float32)
                .unwrap()
                .unbind(0)
                .unwrap_err()
                .kind,
            ErrorKind::IndexError
        );
    }

    #[test]
    fn diagonal_and_permute() {
        let x = arange(&[3, 4]);
        // torch: zeros(3,4).diagonal(1) -> size (3,), stride (5,), offset 1
        assert_eq!(geo(&x.diagonal(1, 0, 1).unwrap()), (vec![3], vec![5], 1));
        assert_eq!(geo(&x.diagonal(-1, 0, 1).unwrap()), (vec![2], vec![5], 4));
        assert_eq!(geo(&x.diagonal(5, 0, 1).unwrap()), (vec![0], vec![5], 0));
        // torch: zeros(3,4,5).diagonal(0,0,2) -> size (4, 3), strides (5, 21)
        assert_eq!(
            geo(&arange(&[3, 4, 5]).diagonal(0, 0, 2).unwrap()).0,
            vec![4, 3]
        );
        assert_eq!(
            geo(&arange(&[3, 4, 5]).diagonal(0, 0, 2).unwrap()).1,
            vec![5, 21]
        );
        assert_eq!(
            x.permute(&[0, 0]).unwrap_err().message,
            "permute(): duplicate dims are not allowed."
        );
        assert_eq!(
            geo(&x.permute(&[1, 0]).unwrap()),
            (vec![4, 3], vec![1, 4], 0)
        );
        assert_eq!(
            arange(&[2, 3, 4]).t().unwrap_err().message,
            "t() expects a tensor with <= 2 dimensions, but self is 3D"
        );
    }

    #[test]
    fn flatten_unflatten_squeeze() {
        let x = arange(&[2, 3, 4]);
        assert_eq!(x.flatten(1, 2).unwrap().sizes().as_slice(), &[2, 12]);
        assert_eq!(
            Tensor::zeros(&[], DType::Float32)
                .unwrap()
                .flatten(0, -1)
                .unwrap()
                .sizes()
                .as_slice(),
            &[1]
        );
        assert!(x.flatten(1, 0).is_err());
        assert_eq!(
            x.unflatten(1, &[-1, 1]).unwrap().sizes().as_slice(),
            &[2, 3, 1, 4]
        );
        assert_eq!(
            arange(&[2, 3]).unflatten(1, &[2, 2]).unwrap_err().message,
            "unflatten: Provided sizes [2, 2] don't multiply up to the size of dim 1 (3) in the input tensor"
        );
        let y = arange(&[2, 1, 3]);
        assert_eq!(y.squeeze().unwrap().sizes().as_slice(), &[2, 3]);
        assert_eq!(y.squeeze_dims(&[0, 1]).unwrap().sizes().as_slice(), &[2, 3]);
        assert_eq!(y.unsqueeze(-1).unwrap().sizes().as_slice(), &[2, 1, 3, 1]);
        let h = y.clone();
        y.unsqueeze_(0).unwrap();
        assert_eq!(h.sizes().as_slice(), &[1, 2, 1, 3]);
    }

    #[test]
    fn writes_through_views_reach_the_base() {
        let x = arange(&[2, 3]);
        let col = x.select(1, 1).unwrap();
        col.fill_(crate::Scalar::Float(-1.0)).unwrap();
        assert_eq!(x.to_vec::<f32>(), vec![0., -1., 2., 3., -1., 5.]);
        let d = x.diagonal(0, 0, 1).unwrap();
        d.zero_().unwrap();
        assert_eq!(x.to_vec::<f32>(), vec![0., -1., 2., 3., 0., 5.]);
    }
}
