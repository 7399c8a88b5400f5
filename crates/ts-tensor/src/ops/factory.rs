//! Tensor constructors (`torch.zeros`, `ones`, `full`, `empty`, `arange`, `linspace`, `eye`
//! and the `_like` forms). A `None` dtype means PyTorch's inference: the default dtype for
//! floating factories, and the fill value's type for `full`.

use crate::config::default_dtype;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::promote::scalar_dtype;
use crate::scalar::Scalar;
use crate::shape::preserve_format_strides;
use crate::tensor::Tensor;

fn check_sizes(name: &str, sizes: &[i64]) -> Result<()> {
    if sizes.iter().any(|&s| s < 0) {
        return Err(Error::runtime(format!(
            "{name}: Dimension size must be non-negative."
        )));
    }
    Ok(())
}

/// `torch.zeros(sizes, dtype)`.
pub fn zeros(sizes: &[i64], dtype: Option<DType>) -> Result<Tensor> {
    check_sizes("zeros", sizes)?;
    Tensor::zeros(sizes, dtype.unwrap_or_else(default_dtype))
}

/// `torch.ones(sizes, dtype)`.
pub fn ones(sizes: &[i64], dtype: Option<DType>) -> Result<Tensor> {
    check_sizes("ones", sizes)?;
    full(
        sizes,
        Scalar::Int(1),
        Some(dtype.unwrap_or_else(default_dtype)),
    )
}

/// `torch.empty(sizes, dtype)` (zero-filled here: reading it is well defined).
pub fn empty(sizes: &[i64], dtype: Option<DType>) -> Result<Tensor> {
    check_sizes("empty", sizes)?;
    Tensor::zeros(sizes, dtype.unwrap_or_else(default_dtype))
}

/// `torch.full(sizes, fill_value, dtype)`: the dtype defaults to the fill value's (int64 for an
/// int, the default dtype for a float, bool for a bool).
pub fn full(sizes: &[i64], fill_value: Scalar, dtype: Option<DType>) -> Result<Tensor> {
    check_sizes("full", sizes)?;
    let t = Tensor::zeros(sizes, dtype.unwrap_or_else(|| scalar_dtype(fill_value)))?;
    t.fill_(fill_value)?;
    Ok(t)
}

/// `torch.zeros_like(t, dtype)`: same shape and (dense) layout.
pub fn zeros_like(t: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
    let m = t.meta_snapshot();
    Tensor::empty_strided(
        &m.sizes,
        &preserve_format_strides(&m.sizes, &m.strides),
        dtype.unwrap_or(m.dtype),
    )
}

/// `torch.empty_like(t, dtype)` (zero-filled).
pub fn empty_like(t: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
    zeros_like(t, dtype)
}

/// `torch.ones_like(t, dtype)`.
pub fn ones_like(t: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
    full_like(t, Scalar::Int(1), dtype)
}

/// `torch.full_like(t, fill_value, dtype)`: the dtype defaults to `t`'s.
pub fn full_like(t: &Tensor, fill_value: Scalar, dtype: Option<DType>) -> Result<Tensor> {
    let r = zeros_like(t, dtype)?;
    r.fill_(fill_value)?;
    Ok(r)
}

/// `torch.arange(start, end, step, dtype)`: int64 when all bounds are integers, otherwise the
/// default dtype. The length is `ceil((end - start) / step)`, computed in double precision.
pub fn arange(start: Scalar, end: Scalar, step: Scalar, dtype: Option<DType>) -> Result<Tensor> {
    let any_float = [start, end, step].iter().any(|s| s.is_floating_point());
    let dtype = dtype.unwrap_or(if any_float {
        default_dtype()
    } else {
        DType::Int64
    });
    let (s, e, st) = (start.to_f64(), end.to_f64(), step.to_f64());
    if st == 0.0 {
        return Err(Error::runtime("step must be nonzero"));
    }
    if !s.is_finite() || !e.is_finite() {
        return Err(Error::runtime(format!("unsupported range: {s} -> {e}")));
    }
    if (st > 0.0 && e < s) || (st < 0.0 && e > s) {
        return Err(Error::runtime(
            "upper bound and lower bound inconsistent with step sign",
        ));
    }
    let n = if dtype.is_floating_point() || any_float {
        ((e - s) / st).ceil()
    } else {
        // Integer bounds: exact integer arithmetic.
        let (si, ei, sti) = (
            start.to_i64() as i128,
            end.to_i64() as i128,
            step.to_i64() as i128,
        );
        let d = ei - si;
        ((d + sti - sti.signum()) / sti) as f64
    };
    if !(0.0..=(i64::MAX as f64)).contains(&n) {
        return Err(Error::runtime("invalid size, possible overflow?"));
    }
    let n = n as usize;
    if dtype.is_floating_point() {
        let v: Vec<f64> = (0..n).map(|i| s + i as f64 * st).collect();
        Tensor::from_vec(v, &[n as i64])?.to_dtype(dtype, false)
    } else if any_float {
        let v: Vec<f64> = (0..n).map(|i| s + i as f64 * st).collect();
        Tensor::from_vec(v, &[n as i64])?.to_dtype(dtype, false)
    } else {
        let (si, sti) = (start.to_i64(), step.to_i64());
        let v: Vec<i64> = (0..n as i64)
            .map(|i| si.wrapping_add(i.wrapping_mul(sti)))
            .collect();
        Tensor::from_vec(v, &[n as i64])?.to_dtype(dtype, false)
    }
}

/// `torch.linspace(start, end, steps, dtype)`: `steps` evenly spaced values, computed from both
/// ends as ATen does (the first half from `start`, the second from `end`).
pub fn linspace(start: Scalar, end: Scalar, steps: i64, dtype: Option<DType>) -> Result<Tensor> {
    if steps < 0 {
        return Err(Error::runtime("number of steps must be non-negative"));
    }
    let dtype = dtype.unwrap_or_else(default_dtype);
    let (s, e) = (start.to_f64(), end.to_f64());
    let n = steps as usize;
    let v: Vec<f64> = if n == 1 {
        vec![s]
    } else {
        let step = (e - s) / (n as f64 - 1.0);
        let half = n / 2;
        (0..n)
            .map(|i| {
                if i < half {
                    s + step * i as f64
                } else {
                    e - step * (n - 1 - i) as f64
                }
            })
            .collect()
    };
    if dtype.is_floating_point() {
        // Compute in the target precision's opmath like ATen (float for float32).
        if dtype == DType::Float64 {
            return Tensor::from_vec(v, &[steps]);
        }
        let sf = s as f32;
        let ef = e as f32;
        let vf: Vec<f32> = if n == 1 {
            vec![sf]
        } else {
            let step = (ef - sf) / (n as f32 - 1.0);
            let half = n / 2;
            (0..n)
                .map(|i| {
                    if i < half {
                        sf + step * i as f32
                    } else {
                        ef - step * (n - 1 - i) as f32
                    }
                })
                .collect()
        };
        return Tensor::from_vec(vf, &[steps])?.to_dtype(dtype, false);
    }
    Tensor::from_vec(v, &[steps])?.to_dtype(dtype, false)
}

/// `torch.logspace(start, end, steps, base, dtype)`: `base ** linspace(start, end, steps)`,
/// with the exponents computed from both ends as ATen's kernel does (in float32 for float32).
pub fn logspace(
    start: Scalar,
    end: Scalar,
    steps: i64,
    base: f64,
    dtype: Option<DType>,
) -> Result<Tensor> {
    if steps < 0 {
        return Err(Error::runtime("number of steps must be non-negative"));
    }
    let dtype = dtype.unwrap_or_else(default_dtype);
    let n = steps as usize;
    let half = n / 2;
    if matches!(dtype, DType::Float32 | DType::Float16 | DType::BFloat16) {
        let (s, e, b) = (start.to_f64() as f32, end.to_f64() as f32, base as f32);
        let step = if n > 1 {
            (e - s) / (n as f32 - 1.0)
        } else {
            0.0
        };
        let v: Vec<f32> = (0..n)
            .map(|i| {
                if i < half {
                    b.powf(s + step * i as f32)
                } else {
                    b.powf(e - step * (n - 1 - i) as f32)
                }
            })
            .collect();
        return Tensor::from_vec(v, &[steps])?.to_dtype(dtype, false);
    }
    let (s, e) = (start.to_f64(), end.to_f64());
    let step = if n > 1 {
        (e - s) / (n as f64 - 1.0)
    } else {
        0.0
    };
    let v: Vec<f64> = (0..n)
        .map(|i| {
            if i < half {
                base.powf(s + step * i as f64)
            } else {
                base.powf(e - step * (n - 1 - i) as f64)
            }
        })
        .collect();
    Tensor::from_vec(v, &[steps])?.to_dtype(dtype, false)
}

/// `torch.eye(n, m, dtype)`: ones on the main diagonal.
pub fn eye(n: i64, m: Option<i64>, dtype: Option<DType>) -> Result<Tensor> {
    if n < 0 {
        return Err(Error::runtime(format!(
            "n must be greater or equal to 0, got {n}"
        )));
    }
    let m = m.unwrap_or(n);
    if m < 0 {
        return Err(Error::runtime(format!(
            "m must be greater or equal to 0, got {m}"
        )));
    }
    let t = Tensor::zeros(&[n, m], dtype.unwrap_or_else(default_dtype))?;
    t.diagonal(0, 0, 1)?.fill_(Scalar::Int(1))?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors() {
        assert_eq!(
            full(&[2], Scalar::Int(7), None).unwrap().dtype(),
            DType::Int64
        );
        assert_eq!(
            full(&[2], Scalar::Bool(true), None).unwrap().dtype(),
            DType::Bool
        );
        assert_eq!(
            full(&[2], Scalar::Float(1.5), None)
                .unwrap()
                .to_vec::<f32>(),
            vec![1.5, 1.5]
        );
        assert_eq!(ones(&[2, 2], None).unwrap().to_vec::<f32>(), vec![1.; 4]);
        assert_eq!(
            zeros(&[-1], None).unwrap_err().message,
            "zeros: Dimension size must be non-negative."
        );
        assert_eq!(
            eye(2, Some(3), None).unwrap().to_vec::<f32>(),
            vec![1., 0., 0., 0., 1., 0.]
        );
        assert_eq!(
            eye(-1, None, None).unwrap_err().message,
            "n must be greater or equal to 0, got -1"
        );
        let t = Tensor::zeros(&[2, 3], DType::Int32).unwrap().t().unwrap();
        let l = ones_like(&t, None).unwrap();
        assert_eq!(
            (l.dtype(), l.strides().to_vec()),
            (DType::Int32, vec![1, 3])
        );
    }

    #[test]
    fn ranges() {
        // torch: arange(1, 4, 0.5) -> 6 floats; arange(5, 0, -2) -> [5, 3, 1]; arange(0, 1, 0.1) has 10
        let a = arange(Scalar::Int(1), Scalar::Int(4), Scalar::Float(0.5), None).unwrap();
        assert_eq!(a.to_vec::<f32>(), vec![1., 1.5, 2., 2.5, 3., 3.5]);
        assert_eq!(
            arange(Scalar::Int(5), Scalar::Int(0), Scalar::Int(-2), None)
                .unwrap()
                .to_vec::<i64>(),
            vec![5, 3, 1]
        );
        assert_eq!(
            arange(Scalar::Int(0), Scalar::Int(1), Scalar::Float(0.1), None)
                .unwrap()
                .numel(),
            10
        );
        assert_eq!(
            arange(Scalar::Int(0), Scalar::Int(5), Scalar::Int(0), None)
                .unwrap_err()
                .message,
            "step must be nonzero"
        );
        assert!(arange(Scalar::Int(5), Scalar::Int(0), Scalar::Int(1), None).is_err());
        // torch: linspace(0, 10, 4, dtype=int64) -> [0, 3, 6, 10]; linspace(0,1,5) -> quarters
        assert_eq!(
            linspace(Scalar::Int(0), Scalar::Int(10), 4, Some(DType::Int64))
                .unwrap()
                .to_vec::<i64>(),
            vec![0, 3, 6, 10]
        );
        assert_eq!(
            linspace(Scalar::Int(0), Scalar::Int(1), 5, None)
                .unwrap()
                .to_vec::<f32>(),
            vec![0., 0.25, 0.5, 0.75, 1.]
        );
        assert_eq!(
            linspace(Scalar::Int(3), Scalar::Int(10), 1, None)
                .unwrap()
                .to_vec::<f32>(),
            vec![3.]
        );
        assert!(linspace(Scalar::Int(3), Scalar::Int(10), -1, None).is_err());
    }
}
