//! Order statistics along a dimension: `median(dim)`, `nanmedian`, `kthvalue`, `mode`,
//! `quantile`/`nanquantile`.
//!
//! Rows are sorted stably with NaN last (as `sort` does), so among equal values the one that
//! comes first in the row is "first", which decides the index PyTorch reports for ties.

use std::cmp::Ordering;

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::shape::wrap_dim;
use crate::tensor::Tensor;

fn cmp_nan_last(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// Positions of `row` in stable ascending order, NaN last.
fn sorted_positions(row: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..row.len()).collect();
    order.sort_by(|&a, &b| cmp_nan_last(row[a], row[b]));
    order
}

/// The rows of `x` along `dim` (moved last, as f64 — or i64-exact values for integers), with
/// the shape of the reduced result.
pub(crate) struct Rows {
    pub data: Vec<f64>,
    pub row: usize,
    pub out_shape: Vec<i64>,
}

pub(crate) fn rows_along(x: &Tensor, dim: Option<i64>, keepdim: bool) -> Result<Rows> {
    let sizes = x.sizes();
    let nd = sizes.len();
    match dim {
        None => {
            let data = x.contiguous_vec::<f64>()?;
            let out_shape = if keepdim { vec![1; nd] } else { vec![] };
            let row = data.len();
            Ok(Rows {
                data,
                row,
                out_shape,
            })
        }
        Some(dim) => {
            let d = wrap_dim(dim, nd)?;
            let moved = if nd == 0 {
                x.reshape(&[1])?
            } else {
                x.movedim(d as i64, -1)?
            };
            let row = *moved.sizes().last().unwrap_or(&1) as usize;
            let data = moved.contiguous_vec::<f64>()?;
            let mut out_shape = sizes.to_vec();
            if nd > 0 {
                if keepdim {
                    out_shape[d] = 1;
                } else {
                    out_shape.remove(d);
                }
            }
            Ok(Rows {
                data,
                row,
                out_shape,
            })
        }
    }
}

fn n_rows(r: &Rows) -> usize {
    r.data
        .len()
        .checked_div(r.row)
        .unwrap_or_else(|| crate::shape::numel(&r.out_shape))
}

/// Reduces every row to a (value, index) pair.
fn reduce_indexed(
    x: &Tensor,
    dim: i64,
    keepdim: bool,
    op: &str,
    f: impl Fn(&[f64]) -> (f64, i64),
) -> Result<(Tensor, Tensor)> {
    let r = rows_along(x, Some(dim), keepdim)?;
    if r.row == 0 && n_rows(&r) > 0 {
        return Err(Error::new(
            ErrorKind::IndexError,
            format!("{op}(): Expected reduction dim {dim} to have non-zero size."),
        ));
    }
    let n = n_rows(&r);
    let mut vals = Vec::with_capacity(n);
    let mut idx = Vec::with_capacity(n);
    for row in r.data.chunks(r.row.max(1)).take(n) {
        let (v, i) = f(row);
        vals.push(v);
        idx.push(i);
    }
    let v = Tensor::from_vec(vals, &r.out_shape)?.to_dtype(x.dtype(), false)?;
    let i = Tensor::from_vec(idx, &r.out_shape)?;
    Ok((v, i))
}

fn median_row(row: &[f64], ignore_nan: bool) -> (f64, i64) {
    if !ignore_nan {
        if let Some(p) = row.iter().position(|v| v.is_nan()) {
            return (f64::NAN, p as i64);
        }
    }
    let order = sorted_positions(row);
    let valid = row.iter().filter(|v| !v.is_nan()).count();
    if valid == 0 {
        let k = (row.len() - 1) / 2;
        return (f64::NAN, order[k] as i64);
    }
    let k = order[(valid - 1) / 2];
    (row[k], k as i64)
}

/// Linear interpolation as ATen's `lerp` computes it (from the nearer end).
fn lerp(a: f64, b: f64, w: f64) -> f64 {
    if w < 0.5 {
        a + w * (b - a)
    } else {
        b - (b - a) * (1.0 - w)
    }
}

/// `quantile`'s `interpolation` argument.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum QuantileInterpolation {
    Linear,
    Lower,
    Higher,
    Midpoint,
    Nearest,
}

impl QuantileInterpolation {
    /// Parses the argument string.
    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "linear" => Self::Linear,
            "lower" => Self::Lower,
            "higher" => Self::Higher,
            "midpoint" => Self::Midpoint,
            "nearest" => Self::Nearest,
            other => {
                return Err(Error::runtime(format!(
                    "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest. Got {other}"
                )))
            }
        })
    }
}

fn quantile_row(
    row: &[f64],
    qs: &[f64],
    ignore_nan: bool,
    mode: QuantileInterpolation,
    out: &mut [f64],
) {
    let mut sorted = row.to_vec();
    sorted.sort_by(|a, b| cmp_nan_last(*a, *b));
    let valid = sorted.iter().filter(|v| !v.is_nan()).count();
    let has_nan = valid < sorted.len();
    for (o, &q) in out.iter_mut().zip(qs) {
        if (has_nan && !ignore_nan) || valid == 0 {
            *o = f64::NAN;
            continue;
        }
        let rank = q * (valid as f64 - 1.0);
        let below = rank.floor();
        let above = rank.ceil();
        let (lo, hi) = (sorted[below as usize], sorted[above as usize]);
        *o = match mode {
            QuantileInterpolation::Linear => lerp(lo, hi, rank - below),
            QuantileInterpolation::Lower => lo,
            QuantileInterpolation::Higher => hi,
            QuantileInterpolation::Midpoint => {
                if rank > below {
                    lerp(lo, hi, 0.5)
                } else {
                    lo
                }
            }
            QuantileInterpolation::Nearest => sorted[rank.round_ties_even() as usize],
        };
    }
}

impl Tensor {
    /// `median(dim, keepdim)`: the lower median of each row and its index (NaN, with the index of
    /// the first NaN, for rows containing NaN).
    pub fn median_dim(&self, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        reduce_indexed(self, dim, keepdim, "median", |r| median_row(r, false))
    }

    /// `nanmedian()`: the lower median of the non-NaN elements (NaN if there are none).
    pub fn nanmedian(&self) -> Result<Tensor> {
        if self.numel() == 0 {
            return Err(Error::runtime("nanmedian() input tensor cannot be empty"));
        }
        let (v, _) = self.reshape(&[-1])?.nanmedian_dim(0, false)?;
        Ok(v)
    }

    /// `nanmedian(dim, keepdim)`: [`Tensor::median_dim`] ignoring NaN.
    pub fn nanmedian_dim(&self, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        reduce_indexed(self, dim, keepdim, "nanmedian", |r| median_row(r, true))
    }

    /// `kthvalue(k, dim, keepdim)`: the `k`-th smallest element of each row (1-based) and its
    /// index.
    pub fn kthvalue(&self, k: i64, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let nd = self.dim();
        let d = wrap_dim(dim, nd)?;
        let size = if nd == 0 { 1 } else { self.sizes()[d] };
        if k < 1 || k > size {
            return Err(Error::new(
                ErrorKind::IndexError,
                format!("kthvalue(): selected number k out of range for dimension {dim}"),
            ));
        }
        reduce_indexed(self, dim, keepdim, "kthvalue", |r| {
            let order = sorted_positions(r);
            let p = order[k as usize - 1];
            (r[p], p as i64)
        })
    }

    /// `mode(dim, keepdim)`: the most frequent value of each row (the smallest among equally
    /// frequent ones; NaNs never equal each other) and the index of its last occurrence.
    pub fn mode(&self, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        reduce_indexed(self, dim, keepdim, "mode", |r| {
            let order = sorted_positions(r);
            let (mut best, mut best_count, mut best_idx) = (f64::NAN, 0usize, 0i64);
            let mut i = 0;
            while i < order.len() {
                let v = r[order[i]];
                let mut j = i + 1;
                while j < order.len() && r[order[j]] == v {
                    j += 1;
                }
                let last = order[i..j].iter().copied().max().unwrap_or(0);
                if j - i > best_count {
                    (best, best_count, best_idx) = (v, j - i, last as i64);
                }
                i = j;
            }
            (best, best_idx)
        })
    }

    /// `quantile(q, dim, keepdim, interpolation)` (`ignore_nan` for `nanquantile`): the `q`
    /// quantiles of each row; a 1-d `q` adds a leading dimension of its length.
    pub fn quantile(
        &self,
        q: &Tensor,
        dim: Option<i64>,
        keepdim: bool,
        interpolation: QuantileInterpolation,
        ignore_nan: bool,
    ) -> Result<Tensor> {
        let op = if ignore_nan {
            "nanquantile"
        } else {
            "quantile"
        };
        let dt = self.dtype();
        if !matches!(dt, DType::Float32 | DType::Float64) {
            return Err(Error::runtime(format!(
                "{op}() input tensor must be either float or double dtype"
            )));
        }
        if q.dtype() != dt {
            return Err(Error::runtime(format!(
                "{op}() q tensor must be same dtype as the input tensor"
            )));
        }
        if q.dim() > 1 {
            return Err(Error::runtime(format!(
                "{op}() q must be a scalar or 1D tensor"
            )));
        }
        if self.numel() == 0 {
            return Err(Error::runtime(format!(
                "{op}() input tensor must be non-empty"
            )));
        }
        let qs = q.contiguous_vec::<f64>()?;
        if qs.iter().any(|&v| !(0.0..=1.0).contains(&v)) {
            return Err(Error::runtime(format!(
                "{op}() q values must be in the range [0, 1]"
            )));
        }
        let r = rows_along(self, dim, keepdim)?;
        let n = n_rows(&r);
        let nq = qs.len();
        // Results laid out [q, rows].
        let mut out = vec![0f64; nq * n];
        let mut buf = vec![0f64; nq];
        for (ri, row) in r.data.chunks(r.row.max(1)).take(n).enumerate() {
            quantile_row(row, &qs, ignore_nan, interpolation, &mut buf);
            for (k, &v) in buf.iter().enumerate() {
                out[k * n + ri] = v;
            }
        }
        let mut shape = r.out_shape.clone();
        if q.dim() == 1 {
            shape.insert(0, nq as i64);
        }
        Tensor::from_vec(out, &shape)?.to_dtype(dt, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAN: f32 = f32::NAN;

    fn t(v: &[f32], s: &[i64]) -> Tensor {
        Tensor::from_vec(v.to_vec(), s).unwrap()
    }

    #[test]
    fn medians_follow_torch() {
        // torch.median(x, 1): values [nan, 1.], indices [2, 1]
        let x = t(&[3., 1., NAN, 2., 1., 1., 2., 2.], &[2, 4]);
        let (v, i) = x.median_dim(1, false).unwrap();
        assert!(v.to_vec::<f32>()[0].is_nan());
        assert_eq!(i.to_vec::<i64>(), vec![2, 1]);
        // torch.nanmedian(x, 1): values [2., 1.], indices [3, 1]
        let (v, i) = x.nanmedian_dim(1, false).unwrap();
        assert_eq!(v.to_vec::<f32>(), vec![2., 1.]);
        assert_eq!(i.to_vec::<i64>(), vec![3, 1]);
        // torch.median([2,1,1,2,1,2], 0) -> (1., 4)
        let (v, i) = t(&[2., 1., 1., 2., 1., 2.], &[6])
            .median_dim(0, true)
            .unwrap();
        assert_eq!((v.to_vec::<f32>(), i.to_vec::<i64>()), (vec![1.], vec![4]));
        assert_eq!(v.sizes().as_slice(), &[1]);
    }

    #[test]
    fn mode_and_kthvalue() {
        // torch.mode([[1,2,2,3,3,1],[5,5,4,4,4,5]], 1) -> values [1, 4], indices [5, 4]
        let y = Tensor::from_vec(vec![1i64, 2, 2, 3, 3, 1, 5, 5, 4, 4, 4, 5], &[2, 6]).unwrap();
        let (v, i) = y.mode(1, false).unwrap();
        assert_eq!(v.to_vec::<i64>(), vec![1, 4]);
        assert_eq!(i.to_vec::<i64>(), vec![5, 4]);
        // torch.mode([[1, nan, nan, 2]], 1) -> (1., 0)
        let (v, i) = t(&[1., NAN, NAN, 2.], &[1, 4]).mode(1, false).unwrap();
        assert_eq!((v.to_vec::<f32>(), i.to_vec::<i64>()), (vec![1.], vec![0]));
        // torch.kthvalue([3,1,2,1], 2) -> (1., 3)
        let (v, i) = t(&[3., 1., 2., 1.], &[4]).kthvalue(2, -1, false).unwrap();
        assert_eq!((v.to_vec::<f32>(), i.to_vec::<i64>()), (vec![1.], vec![3]));
        assert!(t(&[1.], &[1]).kthvalue(2, 0, false).is_err());
    }

    #[test]
    fn quantiles() {
        let x = t(&[1., 2., 3., 4.], &[4]);
        let q = t(&[0.1, 0.5], &[2]);
        let lin = x
            .quantile(&q, None, false, QuantileInterpolation::Linear, false)
            .unwrap();
        let v = lin.to_vec::<f32>();
        assert!((v[0] - 1.3).abs() < 1e-6 && (v[1] - 2.5).abs() < 1e-6);
        // torch nearest: [1., 3.] (half to even)
        let near = x
            .quantile(&q, None, false, QuantileInterpolation::Nearest, false)
            .unwrap();
        assert_eq!(near.to_vec::<f32>(), vec![1., 3.]);
        let xn = t(&[1., NAN, 3.], &[3]);
        let half = t(&[0.5], &[]);
        assert!(xn
            .quantile(&half, None, false, QuantileInterpolation::Linear, false)
            .unwrap()
            .to_vec::<f32>()[0]
            .is_nan());
        assert_eq!(
            xn.quantile(&half, None, false, QuantileInterpolation::Linear, true)
                .unwrap()
                .to_vec::<f32>(),
            vec![2.]
        );
        let bad = t(&[1.5], &[]);
        assert!(x
            .quantile(&bad, None, false, QuantileInterpolation::Linear, false)
            .is_err());
    }
}
