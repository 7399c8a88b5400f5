//! Functional writes through views and the views they use: `slice_scatter`, `select_scatter`,
//! `diagonal_scatter`, `as_strided_scatter` (a copy of `self` with one view overwritten by
//! `src`), `diag_embed`/`diagflat`, the sliding-window view `unfold`, `movedim` with lists and
//! `view(dtype)`.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::wrap_dim;
use crate::tensor::Tensor;

/// Copies `src` into `view` after checking that their shapes agree exactly (no broadcasting),
/// as the `*_scatter` ops require.
fn scatter_into(view: &Tensor, src: &Tensor, what: &str) -> Result<()> {
    if view.sizes() != src.sizes() {
        return Err(Error::runtime(format!(
            "expected src to have a size equal to the {what} of self. src size = {:?}, {what} size = {:?}",
            src.sizes().as_slice(),
            view.sizes().as_slice()
        )));
    }
    view.copy_(src)
}

impl Tensor {
    /// `slice_scatter(src, dim, start, end, step)`: a copy of `self` whose slice is `src`.
    pub fn slice_scatter(
        &self,
        src: &Tensor,
        dim: i64,
        start: Option<i64>,
        end: Option<i64>,
        step: i64,
    ) -> Result<Tensor> {
        let out = self.clone_tensor()?;
        scatter_into(&out.slice(dim, start, end, step)?, src, "slice")?;
        Ok(out)
    }

    /// `select_scatter(src, dim, index)`: a copy of `self` whose `index`-th slice along `dim` is
    /// `src`.
    pub fn select_scatter(&self, src: &Tensor, dim: i64, index: i64) -> Result<Tensor> {
        let out = self.clone_tensor()?;
        scatter_into(&out.select(dim, index)?, src, "slice")?;
        Ok(out)
    }

    /// `diagonal_scatter(src, offset, dim1, dim2)`: a copy of `self` whose diagonal is `src`.
    pub fn diagonal_scatter(
        &self,
        src: &Tensor,
        offset: i64,
        dim1: i64,
        dim2: i64,
    ) -> Result<Tensor> {
        let out = self.clone_tensor()?;
        scatter_into(&out.diagonal(offset, dim1, dim2)?, src, "diagonal")?;
        Ok(out)
    }

    /// `as_strided_scatter(src, size, stride, storage_offset)`: a contiguous copy of `self`
    /// whose `as_strided` view is overwritten by `src`.
    pub fn as_strided_scatter(
        &self,
        src: &Tensor,
        size: &[i64],
        stride: &[i64],
        storage_offset: Option<i64>,
    ) -> Result<Tensor> {
        let out = self.contiguous()?;
        let out = if Tensor::is_same(&out, self) {
            self.clone_tensor()?
        } else {
            out
        };
        let view = out.as_strided(size, stride, storage_offset)?;
        scatter_into(&view, src, "view")?;
        Ok(out)
    }

    /// `diag_embed(offset, dim1, dim2)`: matrices (in the planes `dim1`, `dim2` of a result with
    /// one more dimension) whose `offset` diagonal holds the last dimension of `self`.
    pub fn diag_embed(&self, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
        let nd = self.dim() + 1;
        let d1 = wrap_dim(dim1, nd)?;
        let d2 = wrap_dim(dim2, nd)?;
        if d1 == d2 {
            return Err(Error::runtime(format!(
                "diagonal dimensions cannot be identical {dim1}, {dim2}"
            )));
        }
        let sizes = self.sizes();
        let last = sizes.last().copied().unwrap_or(1);
        let n = last + offset.abs();
        let mut out_sizes: Vec<i64> = sizes[..sizes.len().saturating_sub(1)].to_vec();
        let (lo, hi) = if d1 < d2 { (d1, d2) } else { (d2, d1) };
        out_sizes.insert(lo, n);
        out_sizes.insert(hi, n);
        let out = Tensor::zeros(&out_sizes, self.dtype())?;
        let src = if self.dim() == 0 {
            self.reshape(&[1])?
        } else {
            self.clone()
        };
        out.diagonal(offset, d1 as i64, d2 as i64)?.copy_(&src)?;
        Ok(out)
    }

    /// `diagflat(offset)`: a square matrix with the flattened input on its `offset` diagonal.
    pub fn diagflat(&self, offset: i64) -> Result<Tensor> {
        self.contiguous()?.reshape(&[-1])?.diag(offset)
    }

    /// `unfold(dimension, size, step)`: a view of every `size`-long window along `dimension`,
    /// `step` apart, as a new last dimension.
    pub fn unfold(&self, dimension: i64, size: i64, step: i64) -> Result<Tensor> {
        let m = self.meta_snapshot();
        let nd = m.dim();
        let d = wrap_dim(dimension, nd.max(1))?;
        let (dim_size, dim_stride) = if nd == 0 {
            (1, 1)
        } else {
            (m.sizes[d], m.strides[d])
        };
        if size > dim_size {
            return Err(Error::runtime(format!(
                "maximum size for tensor at dimension {d} is {dim_size} but size is {size}"
            )));
        }
        if step <= 0 {
            return Err(Error::runtime(format!("step is {step} but must be > 0")));
        }
        if size < 0 {
            return Err(Error::runtime(format!("size is {size} but must be >= 0")));
        }
        let mut sizes: Vec<i64> = m.sizes.to_vec();
        let mut strides: Vec<i64> = m.strides.to_vec();
        if nd > 0 {
            sizes[d] = (dim_size - size) / step + 1;
            strides[d] = dim_stride * step;
        }
        sizes.push(size);
        strides.push(dim_stride);
        self.as_strided(&sizes, &strides, Some(m.offset as i64))
    }

    /// `movedim(source, destination)` with lists of dimensions; the others keep their order.
    pub fn movedim_list(&self, source: &[i64], destination: &[i64]) -> Result<Tensor> {
        let nd = self.dim();
        if source.len() != destination.len() {
            return Err(Error::runtime(format!(
                "movedim: Invalid source or destination dims: source ({:?} dims) should contain the same number of dims as destination ({:?} dims)",
                source, destination
            )));
        }
        let src: Vec<usize> = source
            .iter()
            .map(|&s| wrap_dim(s, nd))
            .collect::<Result<_>>()?;
        let dst: Vec<usize> = destination
            .iter()
            .map(|&s| wrap_dim(s, nd))
            .collect::<Result<_>>()?;
        for (list, name) in [(&src, "source"), (&dst, "destination")] {
            let mut seen = vec![false; nd];
            for &d in list.iter() {
                if std::mem::replace(&mut seen[d], true) {
                    return Err(Error::runtime(format!(
                        "movedim: repeated dim in `{name}` ({:?})",
                        if name == "source" {
                            source
                        } else {
                            destination
                        }
                    )));
                }
            }
        }
        let mut order: Vec<Option<usize>> = vec![None; nd];
        for (&s, &d) in src.iter().zip(&dst) {
            order[d] = Some(s);
        }
        let mut rest = (0..nd).filter(|i| !src.contains(i));
        let perm: Vec<i64> = order
            .into_iter()
            .map(|o| o.or_else(|| rest.next()).unwrap_or(0) as i64)
            .collect();
        self.permute(&perm)
    }

    /// `view(dtype)`: the same bytes read as another dtype of the same element size.
    pub fn view_dtype(&self, dtype: DType) -> Result<Tensor> {
        let m = self.meta_snapshot();
        if dtype == m.dtype {
            return self.view(&m.sizes);
        }
        if dtype.size() != m.dtype.size() {
            return Err(Error::runtime(format!(
                "Viewing a tensor as a new dtype with a different number of bytes per element ({} to {}) is not supported by torchscript-rs",
                m.dtype.scalar_type_name(),
                dtype.scalar_type_name()
            )));
        }
        let mut meta = m.clone();
        meta.dtype = dtype;
        Ok(Tensor::from_meta(meta))
    }

    /// `narrow(dim, start, length)` with `start` in a 0-d integer tensor.
    pub fn narrow_tensor(&self, dim: i64, start: &Tensor, length: i64) -> Result<Tensor> {
        if start.dim() != 0 || start.dtype().is_floating_point() || start.dtype() == DType::Bool {
            return Err(Error::runtime("start must be an 0-dim integral Tensor."));
        }
        self.narrow(dim, start.item()?.to_i64(), length)
    }

    /// `fill(value)`: a new tensor shaped like `self` holding `value` everywhere.
    pub fn fill_scalar(&self, value: crate::Scalar) -> Result<Tensor> {
        let out = self.clone_tensor()?;
        out.fill_(value)?;
        Ok(out)
    }

    /// `fill(value)` with a 0-d tensor value.
    pub fn fill_tensor(&self, value: &Tensor) -> Result<Tensor> {
        let out = self.clone_tensor()?;
        out.fill_tensor_(value)?;
        Ok(out)
    }

    /// `sum_to_size(size)`: sums the broadcast dimensions away so that the result has `size`.
    pub fn sum_to_size(&self, size: &[i64]) -> Result<Tensor> {
        let sizes = self.sizes();
        let nd = sizes.len();
        let expandable = size.len() <= nd
            && size
                .iter()
                .rev()
                .zip(sizes.iter().rev())
                .all(|(&t, &s)| t == s || t == 1);
        if !expandable {
            return Err(Error::runtime(format!(
                "size {{{}}} is not expandable to size {{{}}}.",
                size.iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                sizes
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let lead = nd - size.len();
        let mut dims: Vec<i64> = (0..lead as i64).collect();
        for (i, &t) in size.iter().enumerate() {
            if t == 1 && sizes[lead + i] != 1 {
                dims.push((lead + i) as i64);
            }
        }
        let out = if dims.is_empty() {
            self.clone()
        } else {
            self.sum(Some(&dims), true, None)?
        };
        if lead > 0 {
            out.view(size)
        } else {
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ar(n: i64, shape: &[i64]) -> Tensor {
        Tensor::from_vec((0..n).map(|i| i as f32).collect(), shape).unwrap()
    }

    #[test]
    fn scatters_write_copies() {
        let t = ar(6, &[2, 3]);
        let src = Tensor::from_vec(vec![9.0f32, 9.0], &[2]).unwrap();
        let out = t.select_scatter(&src, 1, 0).unwrap();
        assert_eq!(out.to_vec::<f32>(), vec![9., 1., 2., 9., 4., 5.]);
        assert_eq!(t.to_vec::<f32>(), vec![0., 1., 2., 3., 4., 5.]);
        let out = t.diagonal_scatter(&src, 0, 0, 1).unwrap();
        assert_eq!(out.to_vec::<f32>(), vec![9., 1., 2., 3., 9., 5.]);
        let bad = Tensor::from_vec(vec![9.0f32], &[1]).unwrap();
        assert!(t.select_scatter(&bad, 1, 0).is_err());
        let out = t.as_strided_scatter(&src, &[2], &[2], Some(1)).unwrap();
        assert_eq!(out.to_vec::<f32>(), vec![0., 9., 2., 9., 4., 5.]);
    }

    #[test]
    fn unfold_windows() {
        let t = ar(5, &[5]);
        let u = t.unfold(0, 2, 2).unwrap();
        assert_eq!(u.sizes().as_slice(), &[2, 2]);
        assert_eq!(
            u.contiguous().unwrap().to_vec::<f32>(),
            vec![0., 1., 2., 3.]
        );
        let s = Tensor::from_vec(vec![1.0f32], &[]).unwrap();
        assert_eq!(s.unfold(0, 1, 1).unwrap().sizes().as_slice(), &[1]);
        assert!(t.unfold(0, 6, 1).is_err());
        assert!(t.unfold(0, 2, 0).is_err());
    }

    #[test]
    fn diag_embed_and_sum_to_size() {
        let v = ar(2, &[2]);
        let d = v.diag_embed(1, -2, -1).unwrap();
        assert_eq!(d.sizes().as_slice(), &[3, 3]);
        assert_eq!(d.to_vec::<f32>(), vec![0., 0., 0., 0., 0., 1., 0., 0., 0.]);
        let t = ar(6, &[2, 3]);
        assert_eq!(
            t.sum_to_size(&[3]).unwrap().to_vec::<f32>(),
            vec![3., 5., 7.]
        );
        assert_eq!(
            t.sum_to_size(&[2, 1]).unwrap().to_vec::<f32>(),
            vec![3., 12.]
        );
        assert!(t.sum_to_size(&[4]).is_err());
    }

    #[test]
    fn movedim_lists() {
        let t = ar(24, &[2, 3, 4]);
        let m = t.movedim_list(&[0, 1], &[2, 0]).unwrap();
        assert_eq!(m.sizes().as_slice(), &[3, 4, 2]);
        assert!(t.movedim_list(&[0, 0], &[1, 2]).is_err());
    }
}
