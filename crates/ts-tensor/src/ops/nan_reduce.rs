//! Reductions that skip NaN (`nansum`, `nanmean`) and the paired `aminmax`.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::ternary::where_;
use crate::promote::Operand;
use crate::scalar::Scalar;
use crate::tensor::Tensor;

impl Tensor {
    /// `self` with NaN replaced by zero (a no-op for non-floating tensors).
    fn nan_to_zero(&self) -> Result<Tensor> {
        if !self.dtype().is_floating_point() {
            return Ok(self.clone());
        }
        where_(
            &self.isnan()?,
            Operand::Scalar(Scalar::Float(0.0)),
            Operand::Tensor(self),
        )
    }

    /// `nansum(dim, keepdim, dtype)`: `sum` treating NaN as zero.
    pub fn nansum(
        &self,
        dims: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        self.nan_to_zero()?.sum(dims, keepdim, dtype)
    }

    /// `nanmean(dim, keepdim, dtype)`: the mean of the non-NaN elements.
    pub fn nanmean(
        &self,
        dims: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        if !self.dtype().is_floating_point() {
            return Err(Error::runtime(format!(
                "nanmean(): expected input to have floating point or complex dtype but got {}",
                self.dtype().scalar_type_name()
            )));
        }
        let count = self.isnan()?.logical_not()?.sum(dims, keepdim, None)?;
        self.nansum(dims, keepdim, dtype)?.div(&count)
    }

    /// `aminmax(dim, keepdim)`: the minimum and maximum (NaN propagates) over `dim`, or over
    /// everything.
    pub fn aminmax(&self, dim: Option<i64>, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let empty_dim = match dim {
            None => self.numel() == 0,
            Some(d) => {
                let nd = self.dim();
                let w = crate::shape::wrap_dim(d, nd)?;
                nd > 0 && self.sizes()[w] == 0
            }
        };
        if empty_dim {
            return Err(Error::runtime(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.",
            ));
        }
        let dims: Vec<i64> = match dim {
            Some(d) => vec![d],
            None => (0..self.dim() as i64).collect(),
        };
        if self.dim() == 0 {
            return Ok((self.clone_tensor()?, self.clone_tensor()?));
        }
        Ok((self.amin(&dims, keepdim)?, self.amax(&dims, keepdim)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_reductions() {
        let x = Tensor::from_vec(vec![1.0f32, f32::NAN, 3.0, 4.0], &[2, 2]).unwrap();
        assert_eq!(
            x.nansum(None, false, None).unwrap().to_vec::<f32>(),
            vec![8.]
        );
        assert_eq!(
            x.nanmean(Some(&[1]), false, None).unwrap().to_vec::<f32>(),
            vec![1., 3.5]
        );
        let (lo, hi) = x.aminmax(Some(0), false).unwrap();
        assert_eq!(lo.to_vec::<f32>()[0], 1.0);
        assert!(hi.to_vec::<f32>()[1].is_nan());
        let i = Tensor::from_vec(vec![3i64, 1], &[2]).unwrap();
        assert!(i.nanmean(None, false, None).is_err());
        let (lo, hi) = i.aminmax(None, true).unwrap();
        assert_eq!((lo.to_vec::<i64>(), hi.to_vec::<i64>()), (vec![1], vec![3]));
        assert_eq!(lo.sizes().as_slice(), &[1]);
    }
}
