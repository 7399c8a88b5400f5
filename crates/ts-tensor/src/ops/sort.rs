//! Sorting along a dimension: `sort`, `argsort`, `topk`, `msort`-style helpers.
//!
//! Sorting is stable. NaN sorts as the largest value (last ascending, first descending), as in
//! PyTorch. `topk` returns the first `k` of a stable sort, so among equal values the lower index
//! comes first (PyTorch's partial sort may order ties differently).

use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::ops::scan::rowwise_indexed;
use crate::shape::wrap_dim;
use crate::tensor::Tensor;

fn cmp_f64(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

fn sort_row<T: Copy>(
    row: &[T],
    vals: &mut [T],
    idx: &mut [i64],
    descending: bool,
    cmp: impl Fn(T, T) -> Ordering,
) {
    let mut order: Vec<usize> = (0..row.len()).collect();
    if descending {
        order.sort_by(|&a, &b| cmp(row[b], row[a]));
    } else {
        order.sort_by(|&a, &b| cmp(row[a], row[b]));
    }
    for (k, &o) in order.iter().enumerate() {
        vals[k] = row[o];
        idx[k] = o as i64;
    }
}

impl Tensor {
    /// `sort(dim, descending, stable)`: sorted values and their original indices. The sort is
    /// always stable.
    pub fn sort(&self, dim: i64, descending: bool) -> Result<(Tensor, Tensor)> {
        let dt = self.dtype();
        let (v, i) = if dt.is_floating_point() {
            rowwise_indexed::<f64>(self, dim, |r, v, i| sort_row(r, v, i, descending, cmp_f64))?
        } else {
            rowwise_indexed::<i64>(self, dim, |r, v, i| {
                sort_row(r, v, i, descending, |a: i64, b: i64| a.cmp(&b))
            })?
        };
        Ok((v.to_dtype(dt, false)?, i))
    }

    /// `argsort(dim, descending)`: the indices of [`Tensor::sort`].
    pub fn argsort(&self, dim: i64, descending: bool) -> Result<Tensor> {
        Ok(self.sort(dim, descending)?.1)
    }

    /// `topk(k, dim, largest, sorted)`: the `k` largest (or smallest) values along `dim` and
    /// their indices, in sorted order.
    pub fn topk(&self, k: i64, dim: i64, largest: bool, sorted: bool) -> Result<(Tensor, Tensor)> {
        let _ = sorted;
        let nd = self.dim();
        let d = wrap_dim(dim, nd)?;
        let size = if nd == 0 { 1 } else { self.meta().sizes[d] };
        if k < 0 || k > size {
            return Err(Error::runtime("selected index k out of range"));
        }
        let (v, i) = self.sort(d as i64, largest)?;
        if nd == 0 {
            return Ok((v, i));
        }
        Ok((
            v.narrow(d as i64, 0, k)?.contiguous()?,
            i.narrow(d as i64, 0, k)?.contiguous()?,
        ))
    }

    /// `msort()`: sort along dimension 0.
    pub fn msort(&self) -> Result<Tensor> {
        Ok(self.sort(0, false)?.0)
    }

    /// `median()`: the lower median of all elements (NaN if any element is NaN).
    pub fn median(&self) -> Result<Tensor> {
        let n = self.numel();
        if n == 0 {
            return Err(Error::runtime("median() input tensor cannot be empty"));
        }
        let flat = self.reshape(&[-1])?;
        let (v, _) = flat.sort(0, false)?;
        let dt = self.dtype();
        if dt.is_floating_point() && flat.isnan()?.any(None, false)?.item()?.to_bool() {
            return Tensor::scalar_tensor(crate::Scalar::Float(f64::NAN), dt);
        }
        v.select(0, ((n - 1) / 2) as i64)?.clone_tensor()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_with_nan_and_ties() {
        let x = Tensor::from_vec(vec![3f32, 1., f32::NAN, 1., 3., 2.], &[6]).unwrap();
        // torch: sort -> values [1,1,2,3,3,nan], indices [1,3,5,0,4,2]
        let (v, i) = x.sort(0, false).unwrap();
        assert_eq!(i.to_vec::<i64>(), vec![1, 3, 5, 0, 4, 2]);
        assert!(v.to_vec::<f32>()[5].is_nan());
        // torch: descending -> indices [2,0,4,5,1,3]
        assert_eq!(
            x.sort(0, true).unwrap().1.to_vec::<i64>(),
            vec![2, 0, 4, 5, 1, 3]
        );
        // torch: argsort([2,1,2,1]) -> [1,3,0,2]; descending -> [0,2,1,3]
        let a = Tensor::from_vec(vec![2i64, 1, 2, 1], &[4]).unwrap();
        assert_eq!(
            a.argsort(0, false).unwrap().to_vec::<i64>(),
            vec![1, 3, 0, 2]
        );
        assert_eq!(
            a.argsort(0, true).unwrap().to_vec::<i64>(),
            vec![0, 2, 1, 3]
        );
        let m = Tensor::from_vec(vec![3i64, 1, 2, 9, 8, 7], &[2, 3]).unwrap();
        assert_eq!(
            m.sort(1, false).unwrap().0.to_vec::<i64>(),
            vec![1, 2, 3, 7, 8, 9]
        );
        assert_eq!(
            m.sort(0, true).unwrap().1.to_vec::<i64>(),
            vec![1, 1, 1, 0, 0, 0]
        );
    }

    #[test]
    fn topk_and_median() {
        let x = Tensor::from_vec(vec![3f32, 1., f32::NAN, 1., 3., 2.], &[6]).unwrap();
        // torch: topk(3, largest=False) -> values [1,1,2], indices [1,3,5]
        let (v, i) = x.topk(3, 0, false, true).unwrap();
        assert_eq!(v.to_vec::<f32>(), vec![1., 1., 2.]);
        assert_eq!(i.to_vec::<i64>(), vec![1, 3, 5]);
        assert_eq!(
            x.topk(7, 0, true, true).unwrap_err().message,
            "selected index k out of range"
        );
        assert_eq!(x.topk(0, 0, true, true).unwrap().0.numel(), 0);
        // torch: median([1,5,2,4]) -> 2.
        let m = Tensor::from_vec(vec![1f32, 5., 2., 4.], &[4]).unwrap();
        assert_eq!(m.median().unwrap().to_vec::<f32>(), vec![2.]);
    }
}
