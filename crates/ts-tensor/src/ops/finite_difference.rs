//! Finite differences and the trapezoidal rule: `diff`, `trapezoid`/`trapz`,
//! `cumulative_trapezoid`, composed from slices and arithmetic as ATen composes them (so dtype
//! promotion follows the arithmetic: integer samples integrate to floats).

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::join::cat;
use crate::scalar::Scalar;
use crate::shape::wrap_dim;
use crate::tensor::Tensor;

fn zeros_without(y: &Tensor, dim: usize) -> Result<Tensor> {
    let mut sizes = y.sizes().to_vec();
    sizes.remove(dim);
    Tensor::zeros(&sizes, y.dtype())
}

/// `dx` broadcastable against `y`'s neighbour pairs along `dim`, from sample points `x`.
fn spacing(y: &Tensor, x: &Tensor, dim: usize) -> Result<Tensor> {
    if x.dtype() == DType::Bool {
        return Err(Error::runtime(
            "trapezoid: received a bool input for `x`, but bool is not supported",
        ));
    }
    let nd = y.dim();
    let xv = if x.dim() == 1 {
        if x.sizes()[0] != y.sizes()[dim] {
            return Err(Error::runtime(
                "trapezoid: There must be one `x` value for each sample point",
            ));
        }
        let mut shape = vec![1; nd];
        shape[dim] = x.sizes()[0];
        x.reshape(&shape)?
    } else if x.dim() < nd {
        let mut shape = vec![1; nd - x.dim()];
        shape.extend_from_slice(&x.sizes());
        x.reshape(&shape)?
    } else {
        x.clone()
    };
    let d = dim as i64;
    xv.slice(d, Some(1), None, 1)?
        .sub(&xv.slice(d, Some(0), Some(-1), 1)?, Scalar::Int(1))
}

fn pair_sums(y: &Tensor, dim: usize) -> Result<Tensor> {
    let d = dim as i64;
    y.slice(d, Some(0), Some(-1), 1)?
        .add(&y.slice(d, Some(1), None, 1)?, Scalar::Int(1))
}

fn check_y(y: &Tensor) -> Result<()> {
    if y.dtype() == DType::Bool {
        return Err(Error::runtime(
            "trapezoid: received a bool input for `y`, but bool is not supported",
        ));
    }
    Ok(())
}

impl Tensor {
    /// `diff(n, dim, prepend, append)`: the `n`-th forward difference along `dim` (logical xor
    /// for bool tensors), after joining `prepend` and `append`.
    pub fn diff(
        &self,
        n: i64,
        dim: i64,
        prepend: Option<&Tensor>,
        append: Option<&Tensor>,
    ) -> Result<Tensor> {
        if self.dim() == 0 {
            return Err(Error::runtime(
                "diff expects input to be at least one-dimensional",
            ));
        }
        if n < 0 {
            return Err(Error::runtime(format!(
                "order must be non-negative but got {n}"
            )));
        }
        let d = wrap_dim(dim, self.dim())?;
        let mut parts = Vec::with_capacity(3);
        for t in [prepend, Some(self), append].into_iter().flatten() {
            if t.dim() != self.dim() {
                return Err(Error::runtime(
                    "diff expects prepend or append to be the same dimension as input",
                ));
            }
            parts.push(t.clone());
        }
        let input = if parts.len() == 1 {
            self.clone()
        } else {
            cat(&parts, d as i64)?
        };
        if n == 0 {
            return input.clone_tensor();
        }
        let size = input.sizes()[d];
        let n = n.min(size);
        let mut len = size - 1;
        let mut result = input;
        for _ in 0..n {
            let hi = result.narrow(d as i64, 1, len)?;
            let lo = result.narrow(d as i64, 0, len)?;
            result = if result.dtype() == DType::Bool {
                hi.logical_xor(&lo)?
            } else {
                hi.sub(&lo, Scalar::Int(1))?
            };
            len -= 1;
        }
        if n == 0 {
            return result.clone_tensor();
        }
        Ok(result)
    }

    /// `trapezoid(y, x, dim)`: the trapezoidal rule over samples `y` at points `x`.
    pub fn trapezoid_x(&self, x: &Tensor, dim: i64) -> Result<Tensor> {
        let d = wrap_dim(dim, self.dim())?;
        if self.sizes()[d] == 0 {
            return zeros_without(self, d);
        }
        check_y(self)?;
        let dx = spacing(self, x, d)?;
        dx.mul(&pair_sums(self, d)?)?
            .sum(Some(&[d as i64]), false, None)?
            .div_scalar(Scalar::Float(2.0))
    }

    /// `trapezoid(y, dx=dx, dim)`: the trapezoidal rule with uniform spacing `dx`.
    pub fn trapezoid_dx(&self, dx: Scalar, dim: i64) -> Result<Tensor> {
        let d = wrap_dim(dim, self.dim())?;
        if self.sizes()[d] == 0 {
            return zeros_without(self, d);
        }
        check_y(self)?;
        if matches!(dx, Scalar::Bool(_)) {
            return Err(Error::runtime(
                "trapezoid: Currently, we only support dx as a real number.",
            ));
        }
        let ends = self
            .select(d as i64, 0)?
            .add(&self.select(d as i64, -1)?, Scalar::Int(1))?
            .mul_scalar(Scalar::Float(0.5))?;
        self.sum(Some(&[d as i64]), false, None)?
            .sub(&ends, Scalar::Int(1))?
            .mul_scalar(Scalar::Float(dx.to_f64()))
    }

    /// `cumulative_trapezoid(y, x, dim)`: running trapezoidal sums over samples at points `x`.
    pub fn cumulative_trapezoid_x(&self, x: &Tensor, dim: i64) -> Result<Tensor> {
        let d = wrap_dim(dim, self.dim())?;
        check_y(self)?;
        let dx = spacing(self, x, d)?;
        dx.mul(&pair_sums(self, d)?)?
            .div_scalar(Scalar::Float(2.0))?
            .cumsum(d as i64, None)
    }

    /// `cumulative_trapezoid(y, dx=dx, dim)`: running trapezoidal sums with uniform spacing.
    pub fn cumulative_trapezoid_dx(&self, dx: Scalar, dim: i64) -> Result<Tensor> {
        let d = wrap_dim(dim, self.dim())?;
        check_y(self)?;
        pair_sums(self, d)?
            .mul_scalar(Scalar::Float(dx.to_f64() / 2.0))?
            .cumsum(d as i64, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: &[f32]) -> Tensor {
        Tensor::from_vec(x.to_vec(), &[x.len() as i64]).unwrap()
    }

    #[test]
    fn diff_orders() {
        let t = v(&[1., 4., 9., 16.]);
        assert_eq!(
            t.diff(1, -1, None, None).unwrap().to_vec::<f32>(),
            vec![3., 5., 7.]
        );
        assert_eq!(
            t.diff(2, -1, None, None).unwrap().to_vec::<f32>(),
            vec![2., 2.]
        );
        assert_eq!(t.diff(9, -1, None, None).unwrap().numel(), 0);
        let p = v(&[0.]);
        assert_eq!(
            t.diff(1, 0, Some(&p), None).unwrap().to_vec::<f32>(),
            vec![1., 3., 5., 7.]
        );
        let b = Tensor::from_vec(vec![true, true, false], &[3]).unwrap();
        assert_eq!(
            b.diff(1, 0, None, None).unwrap().to_vec::<bool>(),
            vec![false, true]
        );
        assert!(t.diff(-1, 0, None, None).is_err());
    }

    #[test]
    fn trapezoid_rules() {
        let y = v(&[1., 2., 3.]);
        let r = y.trapezoid_dx(Scalar::Int(1), -1).unwrap();
        assert_eq!(r.to_vec::<f32>(), vec![4.]);
        let x = v(&[0., 1., 3.]);
        assert_eq!(y.trapezoid_x(&x, -1).unwrap().to_vec::<f32>(), vec![6.5]);
        assert_eq!(
            y.cumulative_trapezoid_x(&x, -1).unwrap().to_vec::<f32>(),
            vec![1.5, 6.5]
        );
        assert_eq!(
            y.cumulative_trapezoid_dx(Scalar::Float(2.0), -1)
                .unwrap()
                .to_vec::<f32>(),
            vec![3., 8.]
        );
        let yi = Tensor::from_vec(vec![1i64, 2, 3], &[3]).unwrap();
        assert_eq!(
            yi.trapezoid_dx(Scalar::Int(1), 0).unwrap().dtype(),
            DType::Float32
        );
    }
}
