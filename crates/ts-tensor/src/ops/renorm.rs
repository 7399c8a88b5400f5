//! `renorm`: rescales the slices along a dimension whose `p`-norm exceeds `maxnorm`.

use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::shape::wrap_dim;
use crate::tensor::Tensor;

impl Tensor {
    /// `renorm(p, dim, maxnorm)`: each slice `self.select(dim, i)` with `‖slice‖_p > maxnorm`
    /// is multiplied by `maxnorm / (‖slice‖_p + 1e-7)`; the others are unchanged.
    pub fn renorm(&self, p: Scalar, dim: i64, maxnorm: Scalar) -> Result<Tensor> {
        let (pf, mf) = (p.to_f64(), maxnorm.to_f64());
        if pf.is_nan() || pf <= 0.0 {
            return Err(Error::runtime("renorm: non-positive-norm not supported"));
        }
        if mf < 0.0 {
            return Err(Error::runtime(format!(
                "renorm: expected maxnorm to be >= 0 but got {mf}"
            )));
        }
        if !self.dtype().is_floating_point() {
            return Err(Error::runtime(format!(
                "\"renorm_out\" not implemented for '{}'",
                self.dtype().scalar_type_name()
            )));
        }
        let nd = self.dim();
        let d = wrap_dim(dim, nd)?;
        if nd == 0 {
            return Err(Error::runtime(
                "renorm: input needs at least 1 dimension, got 0 dimensions",
            ));
        }
        let others: Vec<i64> = (0..nd as i64).filter(|&k| k != d as i64).collect();
        let norms = self.norm(Some(p), Some(&others), true, None)?;
        let factors: Vec<f64> = norms
            .contiguous_vec::<f64>()?
            .into_iter()
            .map(|n| if n > mf { mf / (n + 1e-7) } else { 1.0 })
            .collect();
        let f = Tensor::from_vec(factors, &norms.sizes())?.to_dtype(self.dtype(), false)?;
        self.mul(&f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renorm_rows() {
        let x = Tensor::from_vec(vec![3.0f64, 4.0, 0.3, 0.4], &[2, 2]).unwrap();
        let y = x.renorm(Scalar::Float(2.0), 0, Scalar::Float(1.0)).unwrap();
        let v = y.to_vec::<f64>();
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
        assert_eq!(&v[2..], &[0.3, 0.4]);
        assert!(x.renorm(Scalar::Float(0.0), 0, Scalar::Float(1.0)).is_err());
    }
}
