//! Dense row-major matrices for the decompositions, and the conversions between a batched
//! tensor `[..., rows, cols]` and a list of them.

use std::ops::{Index, IndexMut};

use super::real::Real;
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::tensor::Tensor;

/// A dense row-major matrix.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Mat<T> {
    /// Number of rows.
    pub r: usize,
    /// Number of columns.
    pub c: usize,
    /// The elements, row after row.
    pub d: Vec<T>,
}

impl<T: Real> Mat<T> {
    /// An `r x c` zero matrix.
    pub fn zeros(r: usize, c: usize) -> Self {
        Mat {
            r,
            c,
            d: vec![T::ZERO; r * c],
        }
    }

    /// The `r x c` identity (ones on the main diagonal).
    pub fn eye(r: usize, c: usize) -> Self {
        let mut m = Self::zeros(r, c);
        for i in 0..r.min(c) {
            m[(i, i)] = T::ONE;
        }
        m
    }

    /// The transpose.
    pub fn t(&self) -> Self {
        let mut m = Self::zeros(self.c, self.r);
        for i in 0..self.r {
            for j in 0..self.c {
                m[(j, i)] = self[(i, j)];
            }
        }
        m
    }

    /// The product `self @ o`.
    pub fn matmul(&self, o: &Mat<T>) -> Self {
        let mut m = Self::zeros(self.r, o.c);
        for i in 0..self.r {
            for k in 0..self.c {
                let a = self[(i, k)];
                if a == T::ZERO {
                    continue;
                }
                for j in 0..o.c {
                    let v = m[(i, j)] + a * o[(k, j)];
                    m[(i, j)] = v;
                }
            }
        }
        m
    }

    /// Columns `j0..j1` of every row.
    pub fn cols(&self, j0: usize, j1: usize) -> Self {
        let mut m = Self::zeros(self.r, j1 - j0);
        for i in 0..self.r {
            for j in j0..j1 {
                m[(i, j - j0)] = self[(i, j)];
            }
        }
        m
    }

    /// Rows `i0..i1`.
    pub fn rows(&self, i0: usize, i1: usize) -> Self {
        Mat {
            r: i1 - i0,
            c: self.c,
            d: self.d[i0 * self.c..i1 * self.c].to_vec(),
        }
    }

    /// Swaps columns `a` and `b`.
    pub fn swap_cols(&mut self, a: usize, b: usize) {
        for i in 0..self.r {
            self.d.swap(i * self.c + a, i * self.c + b);
        }
    }

    /// Swaps rows `a` and `b`.
    pub fn swap_rows(&mut self, a: usize, b: usize) {
        for j in 0..self.c {
            self.d.swap(a * self.c + j, b * self.c + j);
        }
    }

    /// The upper (`upper`) or lower triangle, the rest zeroed.
    pub fn triangle(&self, upper: bool) -> Self {
        let mut m = self.clone();
        for i in 0..self.r {
            for j in 0..self.c {
                if (upper && j < i) || (!upper && j > i) {
                    m[(i, j)] = T::ZERO;
                }
            }
        }
        m
    }
}

impl<T> Index<(usize, usize)> for Mat<T> {
    type Output = T;
    #[inline]
    fn index(&self, (i, j): (usize, usize)) -> &T {
        &self.d[i * self.c + j]
    }
}

impl<T> IndexMut<(usize, usize)> for Mat<T> {
    #[inline]
    fn index_mut(&mut self, (i, j): (usize, usize)) -> &mut T {
        &mut self.d[i * self.c + j]
    }
}

/// The matrices of a `[..., r, c]` tensor (read as `T`), with the batch shape.
pub(crate) struct Batch<T> {
    /// The leading (batch) dimensions.
    pub batch: Vec<i64>,
    /// One matrix per batch element, in row-major batch order.
    pub mats: Vec<Mat<T>>,
}

/// Splits a tensor of at least two dimensions into its matrices.
pub(crate) fn unbatch<T: Real>(t: &Tensor) -> Result<Batch<T>> {
    let s = t.sizes();
    let n = s.len();
    let (r, c) = (s[n - 2] as usize, s[n - 1] as usize);
    let data = t.to_vec::<T>();
    let count = data
        .len()
        .checked_div(r * c)
        .unwrap_or_else(|| s[..n - 2].iter().product::<i64>() as usize);
    let mats = (0..count)
        .map(|b| Mat {
            r,
            c,
            d: data[b * r * c..(b + 1) * r * c].to_vec(),
        })
        .collect();
    Ok(Batch {
        batch: s[..n - 2].to_vec(),
        mats,
    })
}

/// Stacks `r x c` matrices back into a `[*batch, r, c]` tensor.
pub(crate) fn rebatch<T: Real>(
    batch: &[i64],
    mats: &[Mat<T>],
    r: usize,
    c: usize,
) -> Result<Tensor> {
    let mut data = Vec::with_capacity(mats.len() * r * c);
    for m in mats {
        debug_assert_eq!((m.r, m.c), (r, c));
        data.extend_from_slice(&m.d);
    }
    let mut shape = batch.to_vec();
    shape.extend([r as i64, c as i64]);
    Tensor::from_vec(data, &shape)
}

/// Stacks per-matrix vectors of length `n` into a `[*batch, n]` tensor of element type `E`.
pub(crate) fn rebatch_vec<E: crate::element::Element>(
    batch: &[i64],
    vecs: Vec<Vec<E>>,
    n: usize,
) -> Result<Tensor> {
    let mut data = Vec::with_capacity(vecs.len() * n);
    for v in vecs {
        data.extend(v);
    }
    let mut shape = batch.to_vec();
    shape.push(n as i64);
    Tensor::from_vec(data, &shape)
}

/// One scalar per matrix, as a `[*batch]` tensor.
pub(crate) fn rebatch_scalar<E: crate::element::Element>(
    batch: &[i64],
    v: Vec<E>,
) -> Result<Tensor> {
    Tensor::from_vec(v, batch)
}

/// `op: Expected a floating point or complex tensor as input. Got Long` unless `t` is float32/64.
pub(crate) fn check_float(t: &Tensor, op: &str) -> Result<()> {
    match t.dtype() {
        DType::Float32 | DType::Float64 => Ok(()),
        DType::Float16 | DType::BFloat16 => Err(Error::runtime(format!(
            "{op}: Low precision dtypes not supported. Got {}",
            t.dtype().scalar_type_name()
        ))),
        d => Err(Error::new(
            ErrorKind::NotImplementedError,
            format!(
                "{op}: Expected a floating point or complex tensor as input. Got {}",
                d.scalar_type_name()
            ),
        )),
    }
}

/// `op: The input tensor A must have at least 2 dimensions.`
pub(crate) fn check_matrix(t: &Tensor, op: &str) -> Result<()> {
    if t.dim() < 2 {
        return Err(Error::runtime(format!(
            "{op}: The input tensor A must have at least 2 dimensions."
        )));
    }
    Ok(())
}

/// A floating matrix batch that must be square:
/// `op: A must be batches of square matrices, but they are 2 by 3 matrices`.
pub(crate) fn check_square(t: &Tensor, op: &str) -> Result<()> {
    check_matrix(t, op)?;
    let s = t.sizes();
    let n = s.len();
    if s[n - 1] != s[n - 2] {
        return Err(Error::runtime(format!(
            "{op}: A must be batches of square matrices, but they are {} by {} matrices",
            s[n - 2],
            s[n - 1]
        )));
    }
    Ok(())
}

/// Runs `$body` with `$T` bound to the Rust type of the floating tensor `$t`'s dtype.
macro_rules! by_real {
    ($t:expr, $op:expr, $T:ident => $body:expr) => {{
        $crate::ops::linalg::mat::check_float($t, $op)?;
        match $t.dtype() {
            $crate::dtype::DType::Float32 => {
                type $T = f32;
                $body
            }
            _ => {
                type $T = f64;
                $body
            }
        }
    }};
}
pub(crate) use by_real;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_round_trip() {
        let t = Tensor::from_vec((0..12).map(|x| x as f32).collect(), &[2, 2, 3]).unwrap();
        let b = unbatch::<f32>(&t).unwrap();
        assert_eq!(b.batch, vec![2]);
        assert_eq!(b.mats[1][(1, 2)], 11.0);
        let back = rebatch(&b.batch, &b.mats, 2, 3).unwrap();
        assert_eq!(back.to_vec::<f32>(), t.to_vec::<f32>());
        let e = Tensor::zeros(&[3, 0, 2], DType::Float64).unwrap();
        assert_eq!(unbatch::<f64>(&e).unwrap().mats.len(), 3);
        let m = Mat {
            r: 2,
            c: 2,
            d: vec![1.0f64, 2.0, 3.0, 4.0],
        };
        assert_eq!(m.matmul(&m.t()).d, vec![5.0, 11.0, 11.0, 25.0]);
    }
}
