//! Copies that rearrange elements: `repeat`, `flip`, `roll`, `tril`/`triu`, `diag`, `trace`,
//! `cummax`/`cummin`, `one_hot`, plus small accessors (`size(dim)`, `stride(dim)`, `T`).

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::factory;
use crate::ops::scan::rowwise_indexed;
use crate::promote::Operand;
use crate::scalar::Scalar;
use crate::shape::{wrap_dim, wrap_dims};
use crate::tensor::Tensor;

impl Tensor {
    /// `size(dim)`.
    pub fn size(&self, dim: i64) -> Result<i64> {
        let m = self.meta();
        let d = wrap_dim(dim, m.dim())?;
        Ok(if m.dim() == 0 { 1 } else { m.sizes[d] })
    }

    /// `stride(dim)`.
    pub fn stride(&self, dim: i64) -> Result<i64> {
        let m = self.meta();
        let d = wrap_dim(dim, m.dim())?;
        Ok(if m.dim() == 0 { 1 } else { m.strides[d] })
    }

    /// `x.T`: all dimensions reversed (a view).
    pub fn numpy_t(&self) -> Result<Tensor> {
        let perm: Vec<i64> = (0..self.dim() as i64).rev().collect();
        self.permute(&perm)
    }

    /// `repeat(repeats)`: tiles the tensor; `repeats` may add leading dimensions.
    pub fn repeat(&self, repeats: &[i64]) -> Result<Tensor> {
        let nd = self.dim();
        if repeats.len() < nd {
            return Err(Error::runtime(
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
            ));
        }
        if repeats.iter().any(|&r| r < 0) {
            return Err(Error::runtime(format!(
                "Trying to create tensor with negative dimension {}: {repeats:?}",
                repeats.iter().find(|&&r| r < 0).copied().unwrap_or(-1)
            )));
        }
        let lead = repeats.len() - nd;
        let sizes = self.sizes();
        let padded: Vec<i64> = std::iter::repeat_n(1, lead)
            .chain(sizes.iter().copied())
            .collect();
        let mut interleaved_view = Vec::new();
        let mut interleaved_target = Vec::new();
        let mut out = Vec::new();
        for (i, &s) in padded.iter().enumerate() {
            interleaved_view.extend([1, s]);
            interleaved_target.extend([repeats[i], s]);
            out.push(repeats[i] * s);
        }
        self.reshape(&interleaved_view)?
            .expand(&interleaved_target, false)?
            .contiguous()?
            .reshape(&out)
    }

    /// `flip(dims)`: reverses the order of elements along `dims` (a copy).
    pub fn flip(&self, dims: &[i64]) -> Result<Tensor> {
        let (ds, _) = wrap_dims(dims, self.dim())?;
        let mut r = self.clone();
        for d in ds {
            let n = r.meta().sizes[d];
            let idx = factory::arange(Scalar::Int(n - 1), Scalar::Int(-1), Scalar::Int(-1), None)?;
            r = r.index_select(d as i64, &idx)?;
        }
        if Tensor::is_same(&r, self) {
            return self.clone_tensor();
        }
        Ok(r)
    }

    /// `roll(shifts, dims)`: rotates elements; without `dims` the flattened tensor is rolled.
    pub fn roll(&self, shifts: &[i64], dims: &[i64]) -> Result<Tensor> {
        if dims.is_empty() {
            if shifts.len() != 1 {
                return Err(Error::runtime(format!(
                    "`shifts` required to be of size 1 when `dims` is empty, but got {}",
                    shifts.len()
                )));
            }
            return self.reshape(&[-1])?.roll(shifts, &[0])?.view(&self.sizes());
        }
        if shifts.len() != dims.len() {
            return Err(Error::runtime(format!(
                "shifts and dimensions must align. shifts: {}, dims:{}",
                shifts.len(),
                dims.len()
            )));
        }
        let mut r = self.clone();
        for (&s, &d) in shifts.iter().zip(dims) {
            let d = wrap_dim(d, self.dim())?;
            let n = r.meta().sizes[d];
            if n == 0 {
                continue;
            }
            let s = s.rem_euclid(n);
            if s == 0 {
                continue;
            }
            let tail = r.narrow(d as i64, n - s, s)?;
            let head = r.narrow(d as i64, 0, n - s)?;
            r = crate::ops::join::cat(&[tail, head], d as i64)?;
        }
        if Tensor::is_same(&r, self) {
            return self.clone_tensor();
        }
        Ok(r)
    }

    fn triangle(&self, diagonal: i64, lower: bool, name: &str) -> Result<Tensor> {
        let nd = self.dim();
        if nd < 2 {
            return Err(Error::runtime(format!(
                "{name}: input tensor must have at least 2 dimensions"
            )));
        }
        let s = self.sizes();
        let (m, n) = (s[nd - 2], s[nd - 1]);
        let rows =
            factory::arange(Scalar::Int(0), Scalar::Int(m), Scalar::Int(1), None)?.unsqueeze(1)?;
        let cols =
            factory::arange(Scalar::Int(0), Scalar::Int(n), Scalar::Int(1), None)?.unsqueeze(0)?;
        let diff = cols.sub(&rows, Scalar::Int(1))?;
        let keep = if lower {
            diff.le_scalar(Scalar::Int(diagonal))?
        } else {
            diff.ge_scalar(Scalar::Int(diagonal))?
        };
        let zeros = factory::zeros(&[], Some(self.dtype()))?;
        crate::ops::ternary::where_(&keep, Operand::Tensor(self), Operand::Tensor(&zeros))
    }

    /// `tril(diagonal)`: keeps the lower triangle (on and below `diagonal`) of the last two
    /// dimensions.
    pub fn tril(&self, diagonal: i64) -> Result<Tensor> {
        self.triangle(diagonal, true, "tril")
    }

    /// `triu(diagonal)`: keeps the upper triangle.
    pub fn triu(&self, diagonal: i64) -> Result<Tensor> {
        self.triangle(diagonal, false, "triu")
    }

    /// `diag(diagonal)`: a vector becomes a square matrix with it on `diagonal`; a matrix gives
    /// its `diagonal` as a vector (a copy).
    pub fn diag(&self, diagonal: i64) -> Result<Tensor> {
        match self.dim() {
            1 => {
                let n = self.numel() as i64;
                let size = n + diagonal.abs();
                let out = factory::zeros(&[size, size], Some(self.dtype()))?;
                out.diagonal(diagonal, 0, 1)?.copy_(self)?;
                Ok(out)
            }
            2 => self.diagonal(diagonal, 0, 1)?.clone_tensor(),
            _ => Err(Error::runtime(
                "diag(): Supports 1D or 2D tensors. Got 0D".replace('0', &self.dim().to_string()),
            )),
        }
    }

    /// `trace()`: the sum of the main diagonal of a matrix (integers sum as int64).
    pub fn trace(&self) -> Result<Tensor> {
        if self.dim() != 2 {
            return Err(Error::runtime(format!(
                "trace: expected a matrix, but got tensor with dim {}",
                self.dim()
            )));
        }
        self.diagonal(0, 0, 1)?.sum(None, false, None)
    }

    fn cum_extreme(&self, dim: i64, max: bool) -> Result<(Tensor, Tensor)> {
        let dt = self.dtype();
        let better = move |x: f64, cur: f64| -> bool {
            if cur.is_nan() {
                return x.is_nan();
            }
            x.is_nan() || if max { x >= cur } else { x <= cur }
        };
        let (v, i) = if dt.is_floating_point() {
            rowwise_indexed::<f64>(self, dim, move |r, v, ix| cum_row(r, v, ix, better))?
        } else {
            rowwise_indexed::<i64>(self, dim, move |r, v, ix| {
                cum_row(
                    r,
                    v,
                    ix,
                    move |x: i64, cur: i64| if max { x >= cur } else { x <= cur },
                )
            })?
        };
        Ok((v.to_dtype(dt, false)?, i))
    }

    /// `cummax(dim)`: running maxima and the index where each was attained (the last index for
    /// ties; NaN propagates).
    pub fn cummax(&self, dim: i64) -> Result<(Tensor, Tensor)> {
        self.cum_extreme(dim, true)
    }

    /// `cummin(dim)`.
    pub fn cummin(&self, dim: i64) -> Result<(Tensor, Tensor)> {
        self.cum_extreme(dim, false)
    }

    /// `clip(min, max)`: alias of [`Tensor::clamp`].
    pub fn clip(&self, min: Option<Scalar>, max: Option<Scalar>) -> Result<Tensor> {
        self.clamp(min, max)
    }

    /// `one_hot(num_classes)` of an int64 tensor (`-1` infers `max + 1`).
    pub fn one_hot(&self, num_classes: i64) -> Result<Tensor> {
        if self.dtype() != DType::Int64 {
            return Err(Error::runtime(
                "one_hot is only applicable to index tensor of type LongTensor.",
            ));
        }
        let vals = self.contiguous_vec::<i64>()?;
        if vals.iter().any(|&v| v < 0) {
            return Err(Error::runtime("Class values must be non-negative."));
        }
        let n = if num_classes == -1 {
            if vals.is_empty() {
                return Err(Error::runtime(
                    "Can not infer total number of classes from empty tensor.",
                ));
            }
            vals.iter().copied().max().unwrap_or(0) + 1
        } else {
            num_classes
        };
        if vals.iter().any(|&v| v >= n) {
            return Err(Error::runtime(
                "Class values must be smaller than num_classes.",
            ));
        }
        let classes = factory::arange(Scalar::Int(0), Scalar::Int(n), Scalar::Int(1), None)?;
        self.unsqueeze(-1)?
            .eq(&classes)?
            .to_dtype(DType::Int64, false)
    }

    /// `to(device)`: only the CPU has storage in this build.
    pub fn to_device(&self, device: crate::Device) -> Result<Tensor> {
        if device == self.device() {
            return Ok(self.clone());
        }
        Err(Error::runtime(format!(
            "tensors on device '{device}' are not supported: this build has no CUDA backend"
        )))
    }
}

fn cum_row<T: Copy>(row: &[T], vals: &mut [T], idx: &mut [i64], better: impl Fn(T, T) -> bool) {
    let mut best: Option<(T, i64)> = None;
    for (k, &x) in row.iter().enumerate() {
        let cur = match best {
            None => (x, k as i64),
            Some((b, bi)) => {
                if better(x, b) {
                    (x, k as i64)
                } else {
                    (b, bi)
                }
            }
        };
        best = Some(cur);
        vals[k] = cur.0;
        idx[k] = cur.1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x() -> Tensor {
        Tensor::from_vec((0..6).map(|i| i as f32).collect(), &[2, 3]).unwrap()
    }

    // Expected values printed by torch 2.15 for torch.arange(6.).view(2, 3).
    #[test]
    fn rearrangements() {
        assert_eq!(
            x().repeat(&[2, 1]).unwrap().to_vec::<f32>(),
            vec![0., 1., 2., 3., 4., 5., 0., 1., 2., 3., 4., 5.]
        );
        assert_eq!(
            x().repeat(&[2, 1, 1]).unwrap().sizes().as_slice(),
            &[2, 2, 3]
        );
        assert!(x().repeat(&[2]).is_err());
        assert_eq!(
            x().flip(&[0, 1]).unwrap().to_vec::<f32>(),
            vec![5., 4., 3., 2., 1., 0.]
        );
        assert_eq!(
            x().flip(&[0, 0]).unwrap_err().message,
            "dim 0 appears multiple times in the list of dims"
        );
        assert_eq!(
            x().roll(&[1], &[1]).unwrap().to_vec::<f32>(),
            vec![2., 0., 1., 5., 3., 4.]
        );
        assert_eq!(
            x().roll(&[1], &[]).unwrap().to_vec::<f32>(),
            vec![5., 0., 1., 2., 3., 4.]
        );
        let a = Tensor::from_vec((0..5i64).collect::<Vec<_>>(), &[5]).unwrap();
        assert_eq!(
            a.roll(&[-7], &[]).unwrap().to_vec::<i64>(),
            vec![2, 3, 4, 0, 1]
        );
        assert_eq!(
            x().tril(0).unwrap().to_vec::<f32>(),
            vec![0., 0., 0., 3., 4., 0.]
        );
        assert_eq!(
            x().triu(1).unwrap().to_vec::<f32>(),
            vec![0., 1., 2., 0., 0., 5.]
        );
        assert_eq!(
            x().tril(-1).unwrap().to_vec::<f32>(),
            vec![0., 0., 0., 3., 0., 0.]
        );
        let v = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
        assert_eq!(
            v.diag(1).unwrap().to_vec::<i64>(),
            vec![0, 1, 0, 0, 0, 2, 0, 0, 0]
        );
        assert_eq!(x().diag(0).unwrap().to_vec::<f32>(), vec![0., 4.]);
        assert_eq!(x().trace().unwrap().to_vec::<f32>(), vec![4.]);
        let (vals, idx) = Tensor::from_vec(vec![1i64, 3, 2, 5], &[4])
            .unwrap()
            .cummax(0)
            .unwrap();
        assert_eq!(
            (vals.to_vec::<i64>(), idx.to_vec::<i64>()),
            (vec![1, 3, 3, 5], vec![0, 1, 1, 3])
        );
        let oh = Tensor::from_vec(vec![0i64, 2], &[2])
            .unwrap()
            .one_hot(-1)
            .unwrap();
        assert_eq!(oh.to_vec::<i64>(), vec![1, 0, 0, 0, 0, 1]);
        assert_eq!(x().numpy_t().unwrap().sizes().as_slice(), &[3, 2]);
        assert_eq!(x().size(-1).unwrap(), 3);
        assert!(Tensor::zeros(&[3], DType::Float32)
            .unwrap()
            .tril(0)
            .is_err());
    }
}
