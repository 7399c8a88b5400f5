//! View operations: new tensors sharing storage with their base (`view`, `transpose`, `select`,
//! `slice`, `expand`, ...), plus the in-place metadata forms (`unsqueeze_`, `t_`, ...).

use smallvec::SmallVec;

use crate::error::{Error, ErrorKind, Result};
use crate::shape::{compute_view_strides, fmt_shape, infer_size, wrap_dim};
use crate::tensor::{Dims, Tensor, TensorMeta};

impl Tensor {
    fn view_of(&self, sizes: Dims, strides: Dims, offset: usize) -> Tensor {
        let m = self.meta();
        Tensor::from_meta(TensorMeta {
            storage: m.storage.clone(),
            sizes,
            strides,
            offset,
            dtype: m.dtype,
            requires_grad: m.requires_grad,
        })
    }

    /// `as_strided(sizes, strides, offset)`: an arbitrary view, bounds-checked.
    pub fn as_strided(
        &self,
        sizes: &[i64],
        strides: &[i64],
        offset: Option<i64>,
    ) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let off = offset.unwrap_or(m.offset as i64);
        if off < 0 {
            return Err(Error::runtime(format!(
                "Tensor: invalid storage offset {off}"
            )));
        }
        if strides.iter().any(|&s| s < 0) {
            return Err(Error::runtime(
                "as_strided: Negative strides are not supported at the moment",
            ));
        }
        let mut t = Tensor::from_parts(m.storage, sizes, strides, off as usize, m.dtype)?;
        if m.requires_grad {
            t = t.with_requires_grad(true);
        }
        Ok(t)
    }

    fn with_requires_grad(self, rg: bool) -> Tensor {
        self.set_requires_grad(rg);
        self
    }

    /// `view(shape)`: requires compatible strides, else PyTorch's error suggesting `reshape`.
    pub fn view(&self, shape: &[i64]) -> Result<Tensor> {
        let m = self.meta();
        let numel = m.sizes.iter().product::<i64>() as usize;
        let sizes = infer_size(shape, numel)?;
        match compute_view_strides(&m.sizes, &m.strides, &sizes) {
            Some(st) => {
                let off = m.offset;
                drop(m);
                Ok(self.view_of(sizes, st, off))
            }
            None => Err(Error::runtime(
                "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
            )),
        }
    }

    /// `reshape(shape)`: a view when strides allow, otherwise a copy.
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        let m = self.meta();
        let numel = m.sizes.iter().product::<i64>() as usize;
        let sizes = infer_size(shape, numel)?;
        if let Some(st) = compute_view_strides(&m.sizes, &m.strides, &sizes) {
            let off = m.offset;
            drop(m);
            return Ok(self.view_of(sizes, st, off));
        }
        drop(m);
        self.clone_tensor()?.view(&sizes)
    }

    /// `transpose(d0, d1)`.
    pub fn transpose(&self, d0: i64, d1: i64) -> Result<Tensor> {
        let m = self.meta();
        let nd = m.sizes.len();
        let (a, b) = (wrap_dim(d0, nd)?, wrap_dim(d1, nd)?);
        let (mut sizes, mut strides) = (m.sizes.clone(), m.strides.clone());
        if nd > 0 {
            sizes.swap(a, b);
            strides.swap(a, b);
        }
        let off = m.offset;
        drop(m);
        Ok(self.view_of(sizes, strides, off))
    }

    /// `t()`: transpose of a matrix (rank ≤ 2).
    pub fn t(&self) -> Result<Tensor> {
        let nd = self.dim();
        if nd > 2 {
            return Err(Error::runtime(format!(
                "t() expects a tensor with <= 2 dimensions, but self is {nd}D"
            )));
        }
        if nd < 2 {
            return Ok(self.view_of(self.sizes(), self.strides(), self.storage_offset()));
        }
        self.transpose(0, 1)
    }

    /// `permute(dims)`.
    pub fn permute(&self, dims: &[i64]) -> Result<Tensor> {
        let m = self.meta();
        let nd = m.sizes.len();
        if dims.len() != nd {
            return Err(Error::runtime(format!(
                "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal to len(dims) = {}",
                dims.len()
            )));
        }
        let w = crate::shape::wrap_dims(dims, nd).map_err(|e| {
            if e.message.contains("multiple times") {
                Error::runtime("permute(): duplicate dims are not allowed.")
            } else {
                e
            }
        })?;
        let sizes = w.iter().map(|&d| m.sizes[d]).collect();
        let strides = w.iter().map(|&d| m.strides[d]).collect();
        let off = m.offset;
        drop(m);
        Ok(self.view_of(sizes, strides, off))
    }

    /// `select(dim, index)`: removes `dim`, taking one index (negative counts from the end).
    pub fn select(&self, dim: i64, index: i64) -> Result<Tensor> {
        let m = self.meta();
        let nd = m.sizes.len();
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
                format!("index {index} is out of bounds for dimension {d} with size {size}"),
            ));
        }
        let i = if index < 0 { index + size } else { index };
        let off = (m.offset as i64 + i * m.strides[d]) as usize;
        let (mut sizes, mut strides) = (m.sizes.clone(), m.strides.clone());
        sizes.remove(d);
        strides.remove(d);
        drop(m);
        Ok(self.view_of(sizes, strides, off))
    }

    /// `slice(dim, start, end, step)` with Python's clamping of out-of-range bounds.
    pub fn slice(
        &self,
        dim: i64,
        start: Option<i64>,
        end: Option<i64>,
        step: i64,
    ) -> Result<Tensor> {
        if step <= 0 {
            return Err(Error::runtime("slice step must be positive"));
        }
        let m = self.meta();
        let nd = m.sizes.len();
        if nd == 0 {
            return Err(Error::new(
                ErrorKind::IndexError,
                "slice() cannot be applied to a 0-dim tensor.",
            ));
        }
        let d = wrap_dim(dim, nd)?;
        let size = m.sizes[d];
        let clamp = |v: i64| -> i64 {
            let v = if v < 0 { v + size } else { v };
            v.clamp(0, size)
        };
        let s = clamp(start.unwrap_or(0));
        let e = clamp(end.unwrap_or(size)).max(s);
        let len = (e - s + step - 1) / step;
        let off = (m.offset as i64 + s * m.strides[d]) as usize;
        let (mut sizes, mut strides) = (m.sizes.clone(), m.strides.clone());
        sizes[d] = len;
        strides[d] *= step;
        drop(m);
        Ok(self.view_of(sizes, strides, off))
    }

    /// `narrow(dim, start, length)`.
    pub fn narrow(&self, dim: i64, start: i64, length: i64) -> Result<Tensor> {
        let nd = self.dim();
        if nd == 0 {
            return Err(Error::runtime(
                "narrow() cannot be applied to a 0-dim tensor.",
            ));
        }
        let d = wrap_dim(dim, nd)?;
        let size = self.sizes()[d];
        let st = if start < 0 { start + size } else { start };
        if st < 0 || st > size {
            return Err(Error::new(
                ErrorKind::IndexError,
                format!(
                    "start out of range (expected to be in range of [{}, {size}], but got {start})",
                    -size
                ),
            ));
        }
        if length < 0 || st + length > size {
            return Err(Error::runtime(format!(
                "start ({st}) + length ({length}) exceeds dimension size ({size})."
            )));
        }
        self.slice(d as i64, Some(st), Some(st + length), 1)
    }

    /// `unsqueeze(dim)`.
    pub fn unsqueeze(&self, dim: i64) -> Result<Tensor> {
        let m = self.meta();
        let nd = m.sizes.len();
        let d = wrap_dim(dim, nd + 1)?;
        let (mut sizes, mut strides) = (m.sizes.clone(), m.strides.clone());
        let st = if d < nd { m.sizes[d] * m.strides[d] } else { 1 };
        sizes.insert(d, 1);
        strides.insert(d, st);
        let off = m.offset;
        drop(m);
        Ok(self.view_of(sizes, strides, off))
    }

    /// `squeeze()` (all size-1 dims) or `squeeze(dims)`.
    pub fn squeeze(&self, dims: Option<&[i64]>) -> Result<Tensor> {
        let m = self.meta();
        let nd = m.sizes.len();
        let keep: Vec<usize> = match dims {
            None => (0..nd).filter(|&d| m.sizes[d] != 1).collect(),
            Some(ds) => {
                let w = crate::shape::wrap_dims(ds, nd)?;
                (0..nd)
                    .filter(|d| !(w.contains(d) && m.sizes[*d] == 1))
                    .collect()
            }
        };
        let sizes = keep.iter().map(|&d| m.sizes[d]).collect();
        let strides = keep.iter().map(|&d| m.strides[d]).collect();
        let off = m.offset;
        drop(m);
        Ok(self.view_of(sizes, strides, off))
    }

    /// `expand(sizes)`: broadcast to `sizes` (`-1` keeps a dimension) without copying.
    pub fn expand(&self, sizes: &[i64]) -> Result<Tensor> {
        let m = self.meta();
        let nd = m.sizes.len();
        if sizes.len() < nd {
            return Err(Error::runtime(format!(
                "expand({}{{{}}}, size=[{}]): the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({nd})",
                crate::print::aten_type_name(m.dtype),
                m.sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
                sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
                sizes.len()
            )));
        }
        let lead = sizes.len() - nd;
        let mut out_sizes: Dims = SmallVec::new();
        let mut out_strides: Dims = SmallVec::new();
        for (i, &target) in sizes.iter().enumerate() {
            if i < lead {
                if target < 0 {
                    return Err(Error::runtime(format!(
                        "The expanded size of the tensor ({target}) isn't allowed in a leading, non-existing dimension {i}"
                    )));
                }
                out_sizes.push(target);
                out_strides.push(0);
                continue;
            }
            let (s, st) = (m.sizes[i - lead], m.strides[i - lead]);
            let t = if target == -1 { s } else { target };
            if s == t {
                out_sizes.push(s);
                out_strides.push(st);
            } else if s == 1 {
                out_sizes.push(t);
                out_strides.push(0);
            } else {
                return Err(Error::runtime(format!(
                    "The expanded size of the tensor ({t}) must match the existing size ({s}) at non-singleton dimension {i}.  Target sizes: {}.  Tensor sizes: {}",
                    fmt_shape(sizes),
                    fmt_shape(&m.sizes)
                )));
            }
        }
        let off = m.offset;
        drop(m);
        Ok(self.view_of(out_sizes, out_strides, off))
    }

    /// `expand_as(other)`.
    pub fn expand_as(&self, other: &Tensor) -> Result<Tensor> {
        self.expand(&other.sizes())
    }

    /// `flatten(start_dim, end_dim)`.
    pub fn flatten(&self, start: i64, end: i64) -> Result<Tensor> {
        let sizes = self.sizes();
        let nd = sizes.len();
        if nd == 0 {
            return self.reshape(&[1]);
        }
        let (s, e) = (wrap_dim(start, nd)?, wrap_dim(end, nd)?);
        if s > e {
            return Err(Error::runtime(
                "flatten() has invalid args: start_dim cannot come after end_dim",
            ));
        }
        if s == e {
            return Ok(self.view_of(sizes, self.strides(), self.storage_offset()));
        }
        let mut shape: Vec<i64> = sizes[..s].to_vec();
        shape.push(sizes[s..=e].iter().product());
        shape.extend_from_slice(&sizes[e + 1..]);
        self.reshape(&shape)
    }

    /// `unflatten(dim, sizes)`.
    pub fn unflatten(&self, dim: i64, sizes: &[i64]) -> Result<Tensor> {
        let cur = self.sizes();
        let d = wrap_dim(dim, cur.len())?;
        let inner = infer_size(sizes, cur.get(d).copied().unwrap_or(1) as usize).map_err(|_| {
            Error::runtime(format!(
                "unflatten: Provided sizes {} don't multiply up to the size of dim {dim} ({}) in the input tensor",
                fmt_shape(sizes),
                cur.get(d).copied().unwrap_or(1)
            ))
        })?;
        let mut shape: Vec<i64> = cur[..d].to_vec();
        shape.extend_from_slice(&inner);
        shape.extend_from_slice(&cur[d + 1..]);
        self.view(&shape)
    }

    /// `unbind(dim)`.
    pub fn unbind(&self, dim: i64) -> Result<Vec<Tensor>> {
        let nd = self.dim();
        if nd == 0 {
            return Err(Error::runtime(
                "Dimension specified as 0 but tensor has no dimensions",
            ));
        }
        let d = wrap_dim(dim, nd)?;
        (0..self.sizes()[d])
            .map(|i| self.select(d as i64, i))
            .collect()
    }

    /// `split(split_size, dim)`: chunks of `split_size` (the last may be smaller).
    pub fn split(&self, split_size: i64, dim: i64) -> Result<Vec<Tensor>> {
        let nd = self.dim();
        if nd == 0 {
            return Err(Error::runtime(
                "split expects at least a 1-dimensional tensor",
            ));
        }
        let d = wrap_dim(dim, nd)?;
        let size = self.sizes()[d];
        if split_size < 0 || (split_size == 0 && size != 0) {
            return Err(Error::runtime(format!(
                "split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
            )));
        }
        if size == 0 {
            return Ok(vec![self.view_of(
                self.sizes(),
                self.strides(),
                self.storage_offset(),
            )]);
        }
        let n = (size + split_size - 1) / split_size;
        (0..n)
            .map(|i| {
                let s = i * split_size;
                self.narrow(d as i64, s, split_size.min(size - s))
            })
            .collect()
    }

    /// `split_with_sizes(sizes, dim)`.
    pub fn split_with_sizes(&self, sizes: &[i64], dim: i64) -> Result<Vec<Tensor>> {
        let nd = self.dim();
        let d = wrap_dim(dim, nd)?;
        let size = self.sizes().get(d).copied().unwrap_or(0);
        let total: i64 = sizes.iter().sum();
        if total != size || sizes.iter().any(|&s| s < 0) {
            return Err(Error::runtime(format!(
                "split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at dimension {d}), but got split_sizes={}",
                fmt_shape(sizes)
            )));
        }
        let mut start = 0;
        sizes
            .iter()
            .map(|&len| {
                let t = self.narrow(d as i64, start, len);
                start += len;
                t
            })
            .collect()
    }

    /// `chunk(chunks, dim)`.
    pub fn chunk(&self, chunks: i64, dim: i64) -> Result<Vec<Tensor>> {
        if chunks <= 0 {
            return Err(Error::runtime(format!(
                "chunk expects `chunks` to be greater than 0, got: {chunks}"
            )));
        }
        let nd = self.dim();
        if nd == 0 {
            return Err(Error::runtime(
                "chunk expects at least a 1-dimensional tensor",
            ));
        }
        let d = wrap_dim(dim, nd)?;
        let size = self.sizes()[d];
        let split_size = (size + chunks - 1) / chunks;
        if split_size == 0 && size == 0 {
            let sizes = vec![0; chunks as usize];
            return self.split_with_sizes(&sizes, dim);
        }
        self.split(split_size.max(1), dim)
    }

    /// `diagonal(offset, dim1, dim2)`.
    pub fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
        let m = self.meta();
        let nd = m.sizes.len();
        let (a, b) = (wrap_dim(dim1, nd)?, wrap_dim(dim2, nd)?);
        if a == b {
            return Err(Error::runtime(format!(
                "diagonal dimensions cannot be identical {dim1}, {dim2}"
            )));
        }
        let mut off = m.offset as i64;
        let len = if offset >= 0 {
            off += offset * m.strides[b];
            (m.sizes[a]).min(m.sizes[b] - offset).max(0)
        } else {
            off -= offset * m.strides[a];
            (m.sizes[a] + offset).min(m.sizes[b]).max(0)
        };
        if len == 0 {
            off = m.offset as i64;
        }
        let mut sizes: Dims = SmallVec::new();
        let mut strides: Dims = SmallVec::new();
        for d in 0..nd {
            if d != a && d != b {
                sizes.push(m.sizes[d]);
                strides.push(m.strides[d]);
            }
        }
        sizes.push(len);
        strides.push(m.strides[a] + m.strides[b]);
        drop(m);
        Ok(self.view_of(sizes, strides, off as usize))
    }

    /// `movedim(source, destination)` for single dims.
    pub fn movedim(&self, src: i64, dst: i64) -> Result<Tensor> {
        let nd = self.dim();
        let (s, d) = (wrap_dim(src, nd)?, wrap_dim(dst, nd)?);
        let mut order: Vec<i64> = (0..nd as i64).filter(|&x| x != s as i64).collect();
        order.insert(d, s as i64);
        self.permute(&order)
    }

    /// Replaces this tensor's metadata with that of a view of itself (the `*_` metadata ops).
    fn become_(&self, v: Tensor) -> Tensor {
        self.set_meta(v.meta_snapshot());
        self.clone()
    }

    /// `unsqueeze_(dim)`.
    pub fn unsqueeze_(&self, dim: i64) -> Result<Tensor> {
        Ok(self.become_(self.unsqueeze(dim)?))
    }

    /// `squeeze_()`/`squeeze_(dims)`.
    pub fn squeeze_(&self, dims: Option<&[i64]>) -> Result<Tensor> {
        Ok(self.become_(self.squeeze(dims)?))
    }

    /// `t_()`.
    pub fn t_(&self) -> Result<Tensor> {
        Ok(self.become_(self.t()?))
    }

    /// `transpose_(d0, d1)`.
    pub fn transpose_(&self, d0: i64, d1: i64) -> Result<Tensor> {
        Ok(self.become_(self.transpose(d0, d1)?))
    }

    /// True when both tensors view the same storage.
    pub fn is_alias_of(&self, other: &Tensor) -> bool {
        crate::Storage::ptr_eq(&self.meta().storage, &other.meta().storage)
    }
}
