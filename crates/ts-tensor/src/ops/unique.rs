//! `_unique2`, `unique_dim`, `unique_consecutive`: distinct values (or slices along a
//! dimension), with the inverse mapping and counts when asked (empty tensors otherwise, as ATen
//! returns). The CPU kernel always sorts; NaNs never compare equal, so each stays distinct.

use std::cmp::Ordering;

use crate::dtype::DType;
use crate::error::Result;
use crate::shape::wrap_dim;
use crate::tensor::Tensor;

/// `(values, inverse, counts)` of the unique operators.
pub type UniqueResult = (Tensor, Tensor, Tensor);

/// The slices being deduplicated: `n` rows of `len` keys each.
struct Rows<T> {
    keys: Vec<T>,
    len: usize,
    n: usize,
}

impl<T: PartialOrd + Copy> Rows<T> {
    fn row(&self, i: usize) -> &[T] {
        &self.keys[i * self.len..(i + 1) * self.len]
    }

    fn cmp(&self, a: usize, b: usize) -> Ordering {
        for (x, y) in self.row(a).iter().zip(self.row(b)) {
            match x.partial_cmp(y) {
                Some(Ordering::Equal) => {}
                Some(o) => return o,
                // NaN sorts last.
                None => {
                    let (xn, yn) = (x.partial_cmp(x).is_none(), y.partial_cmp(y).is_none());
                    match (xn, yn) {
                        (true, false) => return Ordering::Greater,
                        (false, true) => return Ordering::Less,
                        _ => {}
                    }
                }
            }
        }
        Ordering::Equal
    }

    fn equal(&self, a: usize, b: usize) -> bool {
        self.row(a).iter().zip(self.row(b)).all(|(x, y)| x == y)
    }

    /// Groups rows (in `order`) into runs of equal rows: for each run its first row, and for
    /// each row its run number; plus the run lengths.
    fn runs(&self, order: &[usize]) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
        let mut firsts = Vec::new();
        let mut inverse = vec![0i64; self.n];
        let mut counts: Vec<i64> = Vec::new();
        for (k, &i) in order.iter().enumerate() {
            if k == 0 || !self.equal(order[k - 1], i) {
                firsts.push(i as i64);
                counts.push(0);
            }
            inverse[i] = firsts.len() as i64 - 1;
            if let Some(c) = counts.last_mut() {
                *c += 1;
            }
        }
        (firsts, inverse, counts)
    }
}

fn empty_long() -> Result<Tensor> {
    Tensor::zeros(&[0], DType::Int64)
}

impl Tensor {
    /// The rows to deduplicate: every element (`dim = None`) or every slice along `dim`.
    fn unique_rows<T: crate::Element + PartialOrd + Copy>(
        &self,
        dim: Option<usize>,
    ) -> Result<Rows<T>> {
        match dim {
            None => {
                let keys = self.contiguous_vec::<T>()?;
                let n = keys.len();
                Ok(Rows { keys, len: 1, n })
            }
            Some(d) => {
                let moved = self.movedim(d as i64, 0)?;
                let n = self.sizes()[d] as usize;
                let keys = moved.contiguous_vec::<T>()?;
                let len = keys.len().checked_div(n).unwrap_or(0);
                Ok(Rows { keys, len, n })
            }
        }
    }

    fn unique_impl(
        &self,
        dim: Option<i64>,
        consecutive: bool,
        return_inverse: bool,
        return_counts: bool,
    ) -> Result<UniqueResult> {
        let d = dim.map(|d| wrap_dim(d, self.dim())).transpose()?;
        let (firsts, inverse, counts) = if self.dtype().is_floating_point() {
            runs_of(&self.unique_rows::<f64>(d)?, consecutive)
        } else {
            runs_of(&self.unique_rows::<i64>(d)?, consecutive)
        };
        let nf = firsts.len() as i64;
        let idx = Tensor::from_vec(firsts, &[nf])?;
        let values = match d {
            None => self.reshape(&[-1])?.index_select(0, &idx)?,
            Some(d) => self.index_select(d as i64, &idx)?,
        };
        let inverse = if return_inverse {
            let shape = match d {
                None => self.sizes().to_vec(),
                Some(d) => vec![self.sizes()[d]],
            };
            Tensor::from_vec(inverse, &shape)?
        } else {
            empty_long()?
        };
        let counts = if return_counts {
            let n = counts.len() as i64;
            Tensor::from_vec(counts, &[n])?
        } else {
            empty_long()?
        };
        Ok((values, inverse, counts))
    }

    /// `_unique2(sorted, return_inverse, return_counts)`: the sorted distinct elements.
    pub fn unique2(&self, return_inverse: bool, return_counts: bool) -> Result<UniqueResult> {
        self.unique_impl(None, false, return_inverse, return_counts)
    }

    /// `unique_dim(dim, sorted, return_inverse, return_counts)`: the sorted distinct slices
    /// along `dim`.
    pub fn unique_dim(
        &self,
        dim: i64,
        return_inverse: bool,
        return_counts: bool,
    ) -> Result<UniqueResult> {
        self.unique_impl(Some(dim), false, return_inverse, return_counts)
    }

    /// `unique_consecutive(return_inverse, return_counts, dim)`: collapses runs of equal
    /// consecutive elements (or slices along `dim`).
    pub fn unique_consecutive(
        &self,
        return_inverse: bool,
        return_counts: bool,
        dim: Option<i64>,
    ) -> Result<UniqueResult> {
        self.unique_impl(dim, true, return_inverse, return_counts)
    }
}

fn runs_of<T: PartialOrd + Copy>(
    rows: &Rows<T>,
    consecutive: bool,
) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    let mut order: Vec<usize> = (0..rows.n).collect();
    if !consecutive {
        order.sort_by(|&a, &b| rows.cmp(a, b));
    }
    rows.runs(&order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_values() {
        let x =
            Tensor::from_vec(vec![3.0f32, 1.0, 2.0, 1.0, 3.0, f32::NAN, f32::NAN], &[7]).unwrap();
        let (v, inv, cnt) = x.unique2(true, true).unwrap();
        assert_eq!(v.sizes().as_slice(), &[5]);
        assert_eq!(inv.to_vec::<i64>(), vec![2, 0, 1, 0, 2, 3, 4]);
        assert_eq!(cnt.to_vec::<i64>(), vec![2, 1, 2, 1, 1]);
        let m = Tensor::from_vec(vec![2i64, 1, 1, 1, 2, 1], &[3, 2]).unwrap();
        let (v, inv, cnt) = m.unique_dim(0, true, true).unwrap();
        assert_eq!(v.to_vec::<i64>(), vec![1, 1, 2, 1]);
        assert_eq!(inv.to_vec::<i64>(), vec![1, 0, 1]);
        assert_eq!(cnt.to_vec::<i64>(), vec![1, 2]);
        let s = Tensor::from_vec(vec![5.0f64], &[]).unwrap();
        let (v, inv, cnt) = s.unique_consecutive(true, false, None).unwrap();
        assert_eq!(v.sizes().as_slice(), &[1]);
        assert_eq!(inv.dim(), 0);
        assert_eq!(cnt.numel(), 0);
    }
}
