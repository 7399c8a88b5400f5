//! `cov` (with frequency and observation weights) and `corrcoef`: rows are variables, columns
//! observations; computed in f64 and returned in the input's floating dtype.

use crate::config::default_dtype;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

impl Tensor {
    /// `cov(correction, fweights, aweights)`: the covariance matrix of the rows of a 1-d or
    /// 2-d tensor (a 0-d result for a single variable).
    pub fn cov(
        &self,
        correction: i64,
        fweights: Option<&Tensor>,
        aweights: Option<&Tensor>,
    ) -> Result<Tensor> {
        let nd = self.dim();
        if nd > 2 {
            return Err(Error::runtime(format!(
                "cov(): expected input to have two or fewer dimensions but got an input with {nd} dimensions"
            )));
        }
        let (vars, obs) = match nd {
            2 => (self.sizes()[0] as usize, self.sizes()[1] as usize),
            _ => (1, self.numel()),
        };
        let x = self.contiguous_vec::<f64>()?;
        let weights = |w: Option<&Tensor>, name: &str, int: bool| -> Result<Option<Vec<f64>>> {
            let Some(w) = w else { return Ok(None) };
            if w.dim() > 1 {
                return Err(Error::runtime(format!(
                    "cov(): expected {name} to have one or fewer dimensions but got {name} with {} dimensions",
                    w.dim()
                )));
            }
            if w.numel() != obs {
                return Err(Error::runtime(format!(
                    "cov(): expected {name} to have the same numel as there are observations in the input but got {} != {obs}",
                    w.numel()
                )));
            }
            if int && !w.dtype().is_integral() {
                return Err(Error::runtime(format!(
                    "cov(): expected {name} to have integral dtype but got {name} with {} dtype",
                    w.dtype().scalar_type_name()
                )));
            }
            if !int && !w.dtype().is_floating_point() {
                return Err(Error::runtime(format!(
                    "cov(): expected {name} to have floating point dtype but got {name} with {} dtype",
                    w.dtype().scalar_type_name()
                )));
            }
            let v = w.contiguous_vec::<f64>()?;
            if v.iter().any(|&x| x < 0.0) {
                return Err(Error::runtime(format!(
                    "cov(): {name} cannot have negative values"
                )));
            }
            Ok(Some(v))
        };
        let fw = weights(fweights, "fweights", true)?;
        let aw = weights(aweights, "aweights", false)?;
        let w: Option<Vec<f64>> = match (&fw, &aw) {
            (None, None) => None,
            (Some(f), None) => Some(f.clone()),
            (None, Some(a)) => Some(a.clone()),
            (Some(f), Some(a)) => Some(f.iter().zip(a).map(|(p, q)| p * q).collect()),
        };
        let wsum: f64 = w.as_ref().map_or(obs as f64, |w| w.iter().sum());
        let c = correction as f64;
        let mut norm = match (&w, &aw) {
            (None, _) => obs as f64 - c,
            (Some(_), _) if correction == 0 => wsum,
            (Some(_), None) => wsum - c,
            (Some(w), Some(a)) => {
                wsum - c * w.iter().zip(a).map(|(p, q)| p * q).sum::<f64>() / wsum
            }
        };
        if norm <= 0.0 {
            norm = 0.0;
        }
        let wt = |k: usize| w.as_ref().map_or(1.0, |w| w[k]);
        let means: Vec<f64> = (0..vars)
            .map(|i| (0..obs).map(|k| x[i * obs + k] * wt(k)).sum::<f64>() / wsum)
            .collect();
        let mut out = vec![0f64; vars * vars];
        for i in 0..vars {
            for j in 0..vars {
                let s: f64 = (0..obs)
                    .map(|k| (x[i * obs + k] - means[i]) * (x[j * obs + k] - means[j]) * wt(k))
                    .sum();
                out[i * vars + j] = s / norm;
            }
        }
        let dt = if self.dtype().is_floating_point() {
            self.dtype()
        } else {
            default_dtype()
        };
        // ATen squeezes the `[vars, vars]` result, so one variable gives a 0-d tensor.
        let shape: Vec<i64> = if nd < 2 || vars == 1 {
            vec![]
        } else {
            vec![vars as i64; 2]
        };
        Tensor::from_vec(out, &shape)?.to_dtype(dt, false)
    }

    /// `corrcoef()`: Pearson correlation coefficients of the rows, clipped to `[-1, 1]`.
    pub fn corrcoef(&self) -> Result<Tensor> {
        let c = self.cov(1, None, None)?;
        if c.dim() == 0 {
            return c.div(&c);
        }
        let n = c.sizes()[0] as usize;
        let v = c.contiguous_vec::<f64>()?;
        let sd: Vec<f64> = (0..n).map(|i| v[i * n + i].sqrt()).collect();
        let out: Vec<f64> = (0..n * n)
            .map(|k| {
                let r = v[k] / sd[k / n] / sd[k % n];
                if r.is_nan() {
                    r
                } else {
                    r.clamp(-1.0, 1.0)
                }
            })
            .collect();
        Tensor::from_vec(out, &c.sizes())?.to_dtype(c.dtype(), false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covariance() {
        let x = Tensor::from_vec(vec![1.0f32, 2.0, 4.0], &[3]).unwrap();
        let c = x.cov(1, None, None).unwrap();
        assert_eq!(c.dim(), 0);
        assert!((c.to_vec::<f32>()[0] - 7.0 / 3.0).abs() < 1e-6);
        // One variable stored as a row: the result is squeezed to 0-d.
        let row = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2]).unwrap();
        assert_eq!(row.corrcoef().unwrap().dim(), 0);
        let m = Tensor::from_vec(vec![1.0f64, 2.0, 4.0, 1.0, 1.0, 1.0], &[2, 3]).unwrap();
        let r = m.corrcoef().unwrap().to_vec::<f64>();
        assert!((r[0] - 1.0).abs() < 1e-12);
        assert!(r[1].is_nan() && r[3].is_nan());
        let f = Tensor::from_vec(vec![1i64, 2, 1], &[3]).unwrap();
        assert!(x.cov(1, Some(&f), None).is_ok());
        assert!(x.cov(1, None, Some(&f)).is_err());
    }
}
