//! Operations that work along one dimension row by row: cumulative sums and products,
//! softmax and log-softmax. Rows are gathered contiguously (the dimension moved last), processed
//! in parallel, and written back in the input's shape.

use rayon::prelude::*;

use crate::complex::Complex64;
use crate::cpu::contiguous::map_rows;
use crate::cpu::num::FloatMath;
use crate::cpu::simd::simd_dispatch;
use crate::dtype::DType;
use crate::element::Element;
use crate::error::{Error, ErrorKind, Result};
use crate::shape::wrap_dim;
use crate::tensor::Tensor;

/// Applies `f(input_row, output_row)` to every row along `dim` and returns the output (dtype
/// `U::DTYPE`, contiguous, same shape as `x`).
pub(crate) fn rowwise<T, U>(
    x: &Tensor,
    dim: i64,
    f: impl Fn(&[T], &mut [U]) + Sync,
) -> Result<Tensor>
where
    T: Element + Send + Sync,
    U: Element + Send + Sync + Default,
{
    let nd = x.dim();
    let d = wrap_dim(dim, nd)?;
    let moved = if nd == 0 {
        x.reshape(&[1])?
    } else {
        x.movedim(d as i64, -1)?
    };
    let msizes = moved.sizes();
    let row = *msizes.last().unwrap_or(&1) as usize;
    // Rows are read in place and results written straight into the new tensor.
    let src = moved.to_dtype(T::DTYPE, false)?.contiguous()?;
    let r = map_rows::<T, U>(&src, row, |_, i, o| f(i, o))?;
    if nd == 0 {
        return r.reshape(&[]);
    }
    r.movedim(-1, d as i64)?.contiguous()
}

/// Like [`rowwise`] with a second, int64 output (sort indices).
pub(crate) fn rowwise_indexed<T>(
    x: &Tensor,
    dim: i64,
    f: impl Fn(&[T], &mut [T], &mut [i64]) + Sync,
) -> Result<(Tensor, Tensor)>
where
    T: Element + Send + Sync + Default,
{
    let nd = x.dim();
    let d = wrap_dim(dim, nd)?;
    let moved = if nd == 0 {
        x.reshape(&[1])?
    } else {
        x.movedim(d as i64, -1)?
    };
    let msizes = moved.sizes();
    let row = *msizes.last().unwrap_or(&1) as usize;
    let data: Vec<T> = moved.contiguous_vec::<T>()?;
    let mut vals: Vec<T> = vec![T::default(); data.len()];
    let mut idx: Vec<i64> = vec![0; data.len()];
    if row > 0 {
        vals.par_chunks_mut(row)
            .zip(idx.par_chunks_mut(row))
            .zip(data.par_chunks(row))
            .with_min_len(crate::threads::min_piece_for(data.len()))
            .for_each(|((v, i), r)| f(r, v, i));
    }
    let finish = |t: Tensor| -> Result<Tensor> {
        if nd == 0 {
            return t.reshape(&[]);
        }
        t.movedim(-1, d as i64)?.contiguous()
    };
    Ok((
        finish(Tensor::from_vec(vals, &msizes)?)?,
        finish(Tensor::from_vec(idx, &msizes)?)?,
    ))
}

impl Tensor {
    fn scan_dtype(&self, dtype: Option<DType>) -> DType {
        dtype.unwrap_or_else(|| {
            let d = self.dtype();
            if d.is_floating_point() || d.is_complex() {
                d
            } else {
                DType::Int64
            }
        })
    }

    /// `cumsum(dim, dtype)`: running sums; integers and bool accumulate as int64.
    pub fn cumsum(&self, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
        let result = self.scan_dtype(dtype);
        let x = self.to_dtype(result, false)?;
        let out = if result.is_complex() {
            rowwise::<Complex64, Complex64>(&x, dim, |i, o| {
                let mut acc = Complex64::zero();
                for (a, b) in i.iter().zip(o.iter_mut()) {
                    acc = acc + *a;
                    *b = acc;
                }
            })?
        } else if result.is_floating_point() {
            rowwise::<f64, f64>(&x, dim, |i, o| {
                let mut acc = 0.0;
                for (a, b) in i.iter().zip(o.iter_mut()) {
                    acc += a;
                    *b = acc;
                }
            })?
        } else {
            rowwise::<i64, i64>(&x, dim, |i, o| {
                let mut acc = 0i64;
                for (a, b) in i.iter().zip(o.iter_mut()) {
                    acc = acc.wrapping_add(*a);
                    *b = acc;
                }
            })?
        };
        out.to_dtype(result, false)
    }

    /// `cumprod(dim, dtype)`: running products.
    pub fn cumprod(&self, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
        let result = self.scan_dtype(dtype);
        let x = self.to_dtype(result, false)?;
        let out = if result.is_complex() {
            rowwise::<Complex64, Complex64>(&x, dim, |i, o| {
                let mut acc = Complex64::one();
                for (a, b) in i.iter().zip(o.iter_mut()) {
                    acc = acc * *a;
                    *b = acc;
                }
            })?
        } else if result.is_floating_point() {
            rowwise::<f64, f64>(&x, dim, |i, o| {
                let mut acc = 1.0;
                for (a, b) in i.iter().zip(o.iter_mut()) {
                    acc *= a;
                    *b = acc;
                }
            })?
        } else {
            rowwise::<i64, i64>(&x, dim, |i, o| {
                let mut acc = 1i64;
                for (a, b) in i.iter().zip(o.iter_mut()) {
                    acc = acc.wrapping_mul(*a);
                    *b = acc;
                }
            })?
        };
        out.to_dtype(result, false)
    }

    /// In-place `cumsum_`.
    pub fn cumsum_(&self, dim: i64, dtype: Option<DType>) -> Result<()> {
        let r = self.cumsum(dim, dtype)?;
        self.copy_(&r)
    }

    pub(crate) fn softmax_impl(
        &self,
        dim: i64,
        dtype: Option<DType>,
        kind: SoftmaxKind,
    ) -> Result<Tensor> {
        let log = kind == SoftmaxKind::LogSoftmax;
        let result = dtype.unwrap_or_else(|| self.dtype());
        if !result.is_floating_point() {
            let last = self.dim() == 0 || wrap_dim(dim, self.dim())? + 1 == self.dim();
            let name = match (log, last) {
                (false, true) => "softmax_lastdim_kernel_impl",
                (false, false) => "softmax_kernel_impl",
                (true, true) => "log_softmax_lastdim_kernel_impl",
                (true, false) => "log_softmax_kernel_impl",
            };
            return Err(Error::new(
                ErrorKind::NotImplementedError,
                format!(
                    "\"{name}\" not implemented for '{}'",
                    result.scalar_type_name()
                ),
            ));
        }
        // Computed in the result's op type (float32 for float32 and half types), as ATen does.
        let out = if result == DType::Float64 {
            let x = self.to_dtype(DType::Float64, false)?;
            rowwise::<f64, f64>(&x, dim, |i, o| softmax_row_simd(i, o, kind))?
        } else {
            let x = self.to_dtype(DType::Float32, false)?;
            rowwise::<f32, f32>(&x, dim, |i, o| softmax_row_simd(i, o, kind))?
        };
        out.to_dtype(result, false)
    }

    /// `softmax(dim, dtype)`: `exp(x - max) / sum(exp(x - max))` along `dim`.
    pub fn softmax(&self, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
        self.softmax_impl(dim, dtype, SoftmaxKind::Softmax)
    }

    /// `log_softmax(dim, dtype)`: `x - max - log(sum(exp(x - max)))` along `dim`.
    pub fn log_softmax(&self, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
        self.softmax_impl(dim, dtype, SoftmaxKind::LogSoftmax)
    }
}

/// Which normalization [`softmax_row`] computes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SoftmaxKind {
    /// `exp(x - max) / sum`.
    Softmax,
    /// `x - max - log(sum)`.
    LogSoftmax,
    /// Softmax whose fully masked rows (every element `-inf`) are zeros instead of NaN, as
    /// attention wants.
    SafeSoftmax,
}

simd_dispatch!(pub(crate) fn softmax_row_simd<F: FloatMath>(i: &[F], o: &mut [F], kind: SoftmaxKind) = softmax_row;);

simd_dispatch!(pub(crate) fn softmax_row_in_place_simd<F: FloatMath>(x: &mut [F], safe: bool) = softmax_row_in_place;);

/// One row of (log-)softmax. An infinite maximum makes the row NaN, as in ATen (except fully
/// masked rows of [`SoftmaxKind::SafeSoftmax`]). Written as separate max / exp / sum / scale
/// passes without branches on the data so that each loop vectorizes.
#[inline(always)]
fn softmax_row<F: FloatMath>(i: &[F], o: &mut [F], kind: SoftmaxKind) {
    let Some(m) = row_max(i, kind == SoftmaxKind::SafeSoftmax) else {
        o.fill(F::zero());
        return;
    };
    // Every `a - m` is at most 0 (or NaN, or -inf for a masked entry, whose weight is 0).
    for (&a, b) in i.iter().zip(o.iter_mut()) {
        *b = (a - m).exp_nonpositive();
    }
    let s = row_sum(o);
    if kind == SoftmaxKind::LogSoftmax {
        let l = s.ln();
        for (&a, b) in i.iter().zip(o.iter_mut()) {
            *b = a - m - l;
        }
    } else {
        scale(o, F::one() / s);
    }
}

/// [`softmax_row`] of a row in place (softmax, `safe` as [`SoftmaxKind::SafeSoftmax`]): an
/// attention head's scores become its weights without a copy of each row (copying 128-value
/// rows to a scratch row was ~7% of a head's work at 2 threads).
#[inline(always)]
fn softmax_row_in_place<F: FloatMath>(x: &mut [F], safe: bool) {
    let Some(m) = row_max(x, safe) else {
        x.fill(F::zero());
        return;
    };
    for b in x.iter_mut() {
        *b = (*b - m).exp_nonpositive();
    }
    let s = row_sum(x);
    scale(x, F::one() / s);
}

/// The row's maximum, over sixteen independent lanes (a single running maximum is a serial
/// chain; sixteen fill an AVX-512 register); NaN when the row has no finite maximum and holds
/// a NaN, and `None` for a row of `-inf` that a safe softmax makes zeros.
#[inline(always)]
fn row_max<F: FloatMath>(i: &[F], safe: bool) -> Option<F> {
    let lowest = F::from_f64(f64::NEG_INFINITY);
    let mut lanes = [lowest; 16];
    let mut chunks = i.chunks_exact(16);
    for c in &mut chunks {
        for (m, &x) in lanes.iter_mut().zip(c) {
            *m = if x > *m { x } else { *m };
        }
    }
    let mut m = lowest;
    for &x in chunks.remainder().iter().chain(&lanes) {
        m = if x > m { x } else { m };
    }
    // A NaN needs no flag in that loop: `exp(NaN - m)` makes the sum, and so the whole row,
    // NaN. Only a row with no finite maximum is looked at again: all `-inf` (zeros for the
    // safe softmax) unless it holds a NaN.
    if m == lowest {
        if i.iter().any(|x| x.is_nan()) {
            m = F::from_f64(f64::NAN);
        } else if safe {
            return None;
        }
    }
    Some(m)
}

/// The sum of a row, as eight partial sums: independent additions the compiler can keep in
/// vector lanes.
#[inline(always)]
fn row_sum<F: FloatMath>(o: &[F]) -> F {
    let mut acc = [F::zero(); 8];
    let mut chunks = o.chunks_exact(8);
    for c in &mut chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a = *a + v;
        }
    }
    let mut s = F::zero();
    for &v in chunks.remainder() {
        s = s + v;
    }
    for a in acc {
        s = s + a;
    }
    s
}

/// Multiplies every value of the row by `r`.
#[inline(always)]
fn scale<F: FloatMath>(o: &mut [F], r: F) {
    for b in o.iter_mut() {
        *b = *b * r;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32], s: &[i64]) -> Tensor {
        Tensor::from_vec(v.to_vec(), s).unwrap()
    }

    #[test]
    fn softmax_rows_longer_than_the_lanes() {
        // 19 elements: eight-lane chunks plus a remainder, the maximum in the remainder.
        let v: Vec<f32> = (0..19).map(|i| (i as f32) * 0.25).collect();
        let got = f32s(&v, &[19]).softmax(0, None).unwrap().to_vec::<f32>();
        let m = v[18] as f64;
        let s: f64 = v.iter().map(|&x| (x as f64 - m).exp()).sum();
        for (g, &x) in got.iter().zip(&v) {
            assert!((*g as f64 - (x as f64 - m).exp() / s).abs() < 1e-6);
        }
        let mut with_nan = v.clone();
        with_nan[11] = f32::NAN;
        let got = f32s(&with_nan, &[19]).softmax(0, None).unwrap();
        assert!(got.to_vec::<f32>().iter().all(|x| x.is_nan()));
    }

    #[test]
    fn safe_softmax_zeroes_fully_masked_rows() {
        let inf = f32::NEG_INFINITY;
        let x = f32s(&[inf, inf, inf, 0.0, inf, 0.0], &[2, 3]);
        let safe = x.softmax_impl(-1, None, SoftmaxKind::SafeSoftmax).unwrap();
        assert_eq!(safe.to_vec::<f32>(), vec![0.0, 0.0, 0.0, 0.5, 0.0, 0.5]);
        let plain = x.softmax(-1, None).unwrap().to_vec::<f32>();
        assert!(plain[..3].iter().all(|v| v.is_nan()));
    }

    #[test]
    fn cumulative() {
        let x = f32s(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
        assert_eq!(
            x.cumsum(1, None).unwrap().to_vec::<f32>(),
            vec![1., 3., 6., 4., 9., 15.]
        );
        assert_eq!(
            x.cumsum(0, None).unwrap().to_vec::<f32>(),
            vec![1., 2., 3., 5., 7., 9.]
        );
        assert_eq!(
            x.cumprod(-1, None).unwrap().to_vec::<f32>(),
            vec![1., 2., 6., 4., 20., 120.]
        );
        // torch: int32 cumsum -> int64; bool cumsum -> [1, 2]
        let i = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap();
        assert_eq!(i.cumsum(0, None).unwrap().dtype(), DType::Int64);
        let b = Tensor::from_vec(vec![true, true], &[2]).unwrap();
        assert_eq!(b.cumsum(0, None).unwrap().to_vec::<i64>(), vec![1, 2]);
        let z = Tensor::scalar_tensor(crate::Scalar::Int(3), DType::Int64).unwrap();
        assert_eq!(z.cumsum(0, None).unwrap().dim(), 0);
        assert!(x.cumsum(2, None).is_err());
    }

    #[test]
    fn softmaxes() {
        let x = Tensor::from_vec(vec![1i64, 2, 3, 4], &[2, 2]).unwrap();
        // torch: int softmax -> NotImplementedError; softmax(0, dtype=float64) -> [[.1192,.1192],[.8808,.8808]]
        assert_eq!(
            x.softmax(0, None).unwrap_err().kind,
            ErrorKind::NotImplementedError
        );
        let s = x.softmax(0, Some(DType::Float64)).unwrap().to_vec::<f64>();
        assert!((s[0] - 0.119_202_922).abs() < 1e-8 && (s[3] - 0.880_797_078).abs() < 1e-8);
        let l = f32s(&[f32::NEG_INFINITY, 0.], &[2])
            .log_softmax(0, None)
            .unwrap()
            .to_vec::<f32>();
        assert_eq!(l, vec![f32::NEG_INFINITY, 0.]);
        let n = f32s(&[f32::NEG_INFINITY, f32::NEG_INFINITY], &[2])
            .softmax(0, None)
            .unwrap()
            .to_vec::<f32>();
        assert!(n[0].is_nan());
        let e = Tensor::zeros(&[0, 3], DType::Float32)
            .unwrap()
            .softmax(1, None)
            .unwrap();
        assert_eq!(e.sizes().as_slice(), &[0, 3]);
    }
}
