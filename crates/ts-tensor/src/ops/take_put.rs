//! Flat and along-a-dimension element selection: `take`, `take_along_dim`, `masked_scatter`,
//! `argwhere`, `nonzero_static`.

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::ops::gather::{copy_elem, offsets};
use crate::shape::{broadcast_shapes, wrap_dim};
use crate::tensor::Tensor;

impl Tensor {
    /// `take(index)`: the elements of `self` (as if flattened) at `index`, shaped like `index`;
    /// negative positions count from the end.
    pub fn take(&self, index: &Tensor) -> Result<Tensor> {
        if index.dtype() != DType::Int64 {
            return Err(Error::runtime(format!(
                "take(): Expected a long tensor for index, but got {}",
                index.dtype().scalar_type_name()
            )));
        }
        let n = self.numel() as i64;
        let idx = index.contiguous_vec::<i64>()?;
        let m = self.meta_snapshot();
        let offs = offsets(&m.sizes, &m.strides);
        let out = Tensor::zeros(&index.sizes(), m.dtype)?;
        let es = m.dtype.size();
        let src = m.data_ptr();
        let dst = out.meta().data_ptr();
        for (k, &i) in idx.iter().enumerate() {
            if i < -n || i >= n {
                return Err(Error::new(
                    ErrorKind::IndexError,
                    format!("out of range: tried to access index {i} on a tensor of {n} elements."),
                ));
            }
            let o = offs[i.rem_euclid(n) as usize];
            // SAFETY: `o` is the offset of an element of `self` (from its own geometry) and `k`
            // is within the fresh output of `idx.len()` elements.
            unsafe { copy_elem(dst.add(k * es), src.offset((o * es as i64) as isize), es) };
        }
        Ok(out)
    }

    /// `take_along_dim(indices, dim)`: `gather` after broadcasting `self` and `indices` against
    /// each other outside `dim`; without `dim`, over the flattened tensor.
    pub fn take_along_dim(&self, indices: &Tensor, dim: Option<i64>) -> Result<Tensor> {
        if indices.dtype() != DType::Int64 {
            return Err(Error::runtime(format!(
                "torch.take_along_dim(): dtype of indices should be Long but got {}",
                indices.dtype().scalar_type_name()
            )));
        }
        let Some(dim) = dim else {
            return self.reshape(&[-1])?.gather(0, &indices.reshape(&[-1])?);
        };
        if self.dim() != indices.dim() {
            return Err(Error::runtime(format!(
                "torch.take_along_dim(): input and indices should have the same number of dimensions, but got {} dimensions for input, and {} dimensions for indices",
                self.dim(),
                indices.dim()
            )));
        }
        let d = wrap_dim(dim, self.dim())?;
        if self.dim() == 0 {
            return self.gather(0, indices);
        }
        let mut self_sizes = self.sizes().to_vec();
        self_sizes[d] = indices.sizes()[d];
        let ishape = broadcast_shapes(&self_sizes, &indices.sizes())?;
        let idx = indices.expand(&ishape, false)?;
        let mut idx_sizes = indices.sizes().to_vec();
        idx_sizes[d] = self.sizes()[d];
        let sshape = broadcast_shapes(&idx_sizes, &self.sizes())?;
        self.expand(&sshape, false)?.gather(d as i64, &idx)
    }

    /// `masked_scatter(mask, source)`: `self` (broadcast with `mask`) where the positions of
    /// true mask elements take consecutive elements of `source`, in row-major order.
    pub fn masked_scatter(&self, mask: &Tensor, source: &Tensor) -> Result<Tensor> {
        if !matches!(mask.dtype(), DType::Bool | DType::UInt8) {
            return Err(Error::runtime(format!(
                "masked_scatter_ only supports boolean masks, but got mask with dtype {}",
                mask.dtype().scalar_type_name()
            )));
        }
        if source.dtype() != self.dtype() {
            return Err(Error::runtime(format!(
                "masked_scatter: expected self and source to have same dtypes but got {} and {}",
                self.dtype().scalar_type_name(),
                source.dtype().scalar_type_name()
            )));
        }
        let shape = broadcast_shapes(&self.sizes(), &mask.sizes())?;
        let out = self.expand(&shape, false)?.contiguous()?;
        let out = if Tensor::is_same(&out, self) {
            self.clone_tensor()?
        } else {
            out
        };
        let flags = mask.expand(&shape, false)?.contiguous_vec::<bool>()?;
        let src = source.contiguous()?;
        let count = flags.iter().filter(|&&b| b).count();
        if count > src.numel() {
            return Err(Error::runtime(
                "masked_scatter: expected source to have at least as many elements as ones in mask",
            ));
        }
        let es = self.dtype().size();
        let dst = out.meta().data_ptr();
        let sp = src.meta().data_ptr();
        let mut k = 0;
        for (p, &f) in flags.iter().enumerate() {
            if f {
                // SAFETY: `out` is a fresh contiguous tensor of `flags.len()` elements; `src` is
                // contiguous with at least `count > k` elements.
                unsafe { copy_elem(dst.add(p * es), sp.add(k * es), es) };
                k += 1;
            }
        }
        Ok(out)
    }

    /// `masked_scatter_(mask, source)`: [`Tensor::masked_scatter`] written into `self`, whose
    /// shape must be the broadcast shape.
    pub fn masked_scatter_(&self, mask: &Tensor, source: &Tensor) -> Result<()> {
        let shape = broadcast_shapes(&self.sizes(), &mask.sizes())?;
        if shape != self.sizes() {
            return Err(Error::runtime(format!(
                "masked_scatter_: expected mask broadcastable to self's shape {:?}, got {:?}",
                self.sizes().as_slice(),
                mask.sizes().as_slice()
            )));
        }
        let r = self.masked_scatter(mask, source)?;
        self.copy_(&r)
    }

    /// `nonzero_static(size, fill_value)`: `nonzero()` cut or padded (with `fill_value`) to
    /// exactly `size` rows.
    pub fn nonzero_static(&self, size: i64, fill_value: i64) -> Result<Tensor> {
        if size < 0 {
            return Err(Error::runtime(format!(
                "nonzero_static: 'size' must be an non-negative integer, but got {size}"
            )));
        }
        let nz = self.nonzero()?;
        let nd = self.dim() as i64;
        let rows = nz.sizes()[0];
        if rows >= size {
            return nz.narrow(0, 0, size)?.contiguous();
        }
        let pad = crate::ops::factory::full(
            &[size - rows, nd],
            crate::Scalar::Int(fill_value),
            Some(DType::Int64),
        )?;
        crate::ops::join::cat(&[nz, pad], 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_and_take_along_dim() {
        let x = Tensor::from_vec((0..6).map(|i| i as f32).collect(), &[2, 3]).unwrap();
        let i = Tensor::from_vec(vec![-1i64, 0, 4], &[3]).unwrap();
        assert_eq!(x.take(&i).unwrap().to_vec::<f32>(), vec![5., 0., 4.]);
        let bad = Tensor::from_vec(vec![6i64], &[1]).unwrap();
        assert!(x.take(&bad).is_err());
        let j = Tensor::from_vec(vec![2i64, 0], &[2, 1]).unwrap();
        assert_eq!(
            x.take_along_dim(&j, Some(1)).unwrap().to_vec::<f32>(),
            vec![2., 3.]
        );
        let j = Tensor::from_vec(vec![1i64], &[1, 1]).unwrap();
        assert_eq!(
            x.take_along_dim(&j, Some(0)).unwrap().to_vec::<f32>(),
            vec![3., 4., 5.]
        );
    }

    #[test]
    fn masked_scatter_fills_in_order() {
        let x = Tensor::from_vec(vec![0.0f32; 4], &[2, 2]).unwrap();
        let m = Tensor::from_vec(vec![true, false], &[2]).unwrap();
        let s = Tensor::from_vec(vec![7.0f32, 8.0, 9.0], &[3]).unwrap();
        let r = x.masked_scatter(&m, &s).unwrap();
        assert_eq!(r.to_vec::<f32>(), vec![7., 0., 8., 0.]);
        let short = Tensor::from_vec(vec![7.0f32], &[1]).unwrap();
        assert!(x.masked_scatter(&m, &short).is_err());
    }

    #[test]
    fn nonzero_static_pads() {
        let x = Tensor::from_vec(vec![0.0f32, 1.0, 2.0], &[3]).unwrap();
        let r = x.nonzero_static(4, -1).unwrap();
        assert_eq!(r.to_vec::<i64>(), vec![1, 2, -1, -1]);
        assert_eq!(x.nonzero_static(1, -1).unwrap().to_vec::<i64>(), vec![1]);
    }
}
