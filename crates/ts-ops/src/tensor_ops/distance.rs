//! `cdist` (and its `_cdist_forward` / `_euclidean_dist` forms): batched `p`-norm distances
//! between the rows of two matrices, composed from broadcasting subtraction and `norm`.

use ts_tensor::{Error, Scalar, Tensor};

use super::{def, def_many};
use crate::registry::Registry;

type R<T> = Result<T, Error>;

/// `cdist(x1 [..., P, M], x2 [..., R, M], p)`: `[..., P, R]` distances, batch dimensions
/// broadcast. The `compute_mode` hint (matrix-multiplication formula for `p = 2`) only changes
/// rounding in ATen, so every mode computes the differences directly.
fn cdist(x1: &Tensor, x2: &Tensor, p: f64, compute_mode: Option<i64>) -> R<Tensor> {
    for (name, x) in [("X1", x1), ("X2", x2)] {
        if x.dim() < 2 {
            return Err(Error::runtime(format!(
                "cdist only supports at least 2D tensors, {name} got: {}D",
                x.dim()
            )));
        }
        if !x.dtype().is_floating_point() {
            return Err(Error::runtime(format!(
                "cdist only supports floating-point dtypes, {name} got: {}",
                x.dtype().scalar_type_name()
            )));
        }
    }
    let (c1, c2) = (x1.sizes()[x1.dim() - 1], x2.sizes()[x2.dim() - 1]);
    if c1 != c2 {
        return Err(Error::runtime(format!(
            "X1 and X2 must have the same number of columns. X1: {c1} X2: {c2}"
        )));
    }
    if x1.dtype() != x2.dtype() {
        return Err(Error::runtime(format!(
            "X1 and X2 must have the same dtype, but got {} and {}",
            x1.dtype().scalar_type_name(),
            x2.dtype().scalar_type_name()
        )));
    }
    if p < 0.0 || p.is_nan() {
        return Err(Error::runtime("cdist only supports non-negative p values"));
    }
    if let Some(m) = compute_mode {
        if !(0..=2).contains(&m) {
            return Err(Error::runtime(format!(
                "{m} is not a valid value for compute_mode"
            )));
        }
    }
    let d = x1.unsqueeze(-2)?.sub(&x2.unsqueeze(-3)?, Scalar::Int(1))?;
    d.norm(Some(Scalar::Float(p)), Some(&[-1]), false, None)
}

/// Registers the distance operators.
pub fn register(r: &Registry) {
    def_many(r, &["aten::cdist", "aten::_cdist_forward"], |a| {
        cdist(a.t(0)?, a.t(1)?, a.f(2)?, a.oint(3)?)
    });
    def(r, "aten::_euclidean_dist", |a| {
        cdist(a.t(0)?, a.t(1)?, 2.0, None)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_and_errors() {
        let a = Tensor::from_vec(vec![0.0f32, 0.0, 3.0, 4.0], &[2, 2]).unwrap();
        let b = Tensor::from_vec(vec![0.0f32, 0.0, 1.0, 1.0, 6.0, 8.0], &[3, 2]).unwrap();
        let d = cdist(&a, &b, 2.0, None).unwrap();
        assert_eq!(d.sizes().as_slice(), &[2, 3]);
        let v = d.to_vec::<f32>();
        assert!(
            (v[0] - 0.0).abs() < 1e-6 && (v[2] - 10.0).abs() < 1e-6 && (v[3] - 5.0).abs() < 1e-6
        );
        let l1 = cdist(&a, &b, 1.0, Some(1)).unwrap().to_vec::<f32>();
        assert!((l1[1] - 2.0).abs() < 1e-6);
        let batched = cdist(&a.unsqueeze(0).unwrap(), &b, 2.0, None).unwrap();
        assert_eq!(batched.sizes().as_slice(), &[1, 2, 3]);
        let c3 = Tensor::from_vec(vec![0.0f32; 3], &[1, 3]).unwrap();
        assert!(cdist(&a, &c3, 2.0, None).is_err());
        assert!(cdist(&a, &b, -1.0, None).is_err());
    }
}
