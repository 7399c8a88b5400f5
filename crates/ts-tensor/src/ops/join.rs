//! Joining tensors: `cat` and `stack` (plus `hstack`/`vstack`).

use crate::error::{Error, ErrorKind, Result};
use crate::promote::ResultTypeState;
use crate::shape::{wrap_dim, wrap_dim_insert};
use crate::tensor::{Dims, Tensor};

/// `torch.cat(tensors, dim)`: concatenates along an existing dimension. Dtypes promote; 1-d
/// empty tensors are skipped (PyTorch's legacy rule); other shapes must match except in `dim`.
pub fn cat(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
    if tensors.is_empty() {
        return Err(Error::new(
            ErrorKind::ValueError,
            "torch.cat(): expected a non-empty list of Tensors",
        ));
    }
    for (i, t) in tensors.iter().enumerate() {
        if t.dim() == 0 {
            return Err(Error::runtime(format!(
                "zero-dimensional tensor (at position {i}) cannot be concatenated"
            )));
        }
    }
    let mut st = ResultTypeState::default();
    for t in tensors {
        st.add_tensor(t);
    }
    let dtype = st.result();
    let skip = |t: &Tensor| t.dim() == 1 && t.numel() == 0;
    let parts: Vec<&Tensor> = tensors.iter().filter(|t| !skip(t)).collect();
    let Some(first) = parts.first() else {
        return Tensor::zeros(&[0], dtype);
    };
    let ref_sizes = first.sizes();
    let nd = ref_sizes.len();
    let d = wrap_dim(dim, nd)?;
    let mut total = 0i64;
    for (i, t) in tensors.iter().enumerate() {
        if skip(t) {
            continue;
        }
        let s = t.sizes();
        if s.len() != nd {
            return Err(Error::runtime(format!(
                "Tensors must have same number of dimensions: got {} and {}",
                nd,
                s.len()
            )));
        }
        for k in 0..nd {
            if k != d && s[k] != ref_sizes[k] {
                return Err(Error::runtime(format!(
                    "Sizes of tensors must match except in dimension {d}. Expected size {} but got size {} for tensor number {i} in the list.",
                    ref_sizes[k], s[k]
                )));
            }
        }
        total += s[d];
    }
    let mut out_sizes: Dims = ref_sizes.clone();
    out_sizes[d] = total;
    let out = Tensor::zeros(&out_sizes, dtype)?;
    let mut at = 0i64;
    for t in parts {
        let len = t.meta().sizes[d];
        if len > 0 {
            out.narrow(d as i64, at, len)?.copy_(t)?;
        }
        at += len;
    }
    Ok(out)
}

/// `torch.cat(tensors, dim, out=out)`.
pub fn cat_out(tensors: &[Tensor], dim: i64, out: &Tensor) -> Result<Tensor> {
    for t in tensors {
        crate::overlap::assert_no_overlap(&out.meta_snapshot(), &t.meta_snapshot())?;
    }
    let r = cat(tensors, dim)?;
    crate::ops::copy::resize_out_and_copy(out, &r)
}

/// `torch.stack(tensors, dim)`: joins equally shaped tensors along a new dimension.
pub fn stack(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
    let Some(first) = tensors.first() else {
        return Err(Error::runtime("stack expects a non-empty TensorList"));
    };
    let s0 = first.sizes();
    for (i, t) in tensors.iter().enumerate().skip(1) {
        let s = t.sizes();
        if s != s0 {
            return Err(Error::runtime(format!(
                "stack expects each tensor to be equal size, but got {:?} at entry 0 and {:?} at entry {i}",
                s0.as_slice(),
                s.as_slice()
            )));
        }
    }
    let d = wrap_dim_insert(dim, s0.len())?;
    let parts: Vec<Tensor> = tensors
        .iter()
        .map(|t| t.unsqueeze(d as i64))
        .collect::<Result<_>>()?;
    cat(&parts, d as i64)
}

/// `torch.hstack(tensors)`: `cat` along dim 1 (dim 0 for 1-d tensors).
pub fn hstack(tensors: &[Tensor]) -> Result<Tensor> {
    let ts: Vec<Tensor> = tensors.iter().map(atleast_1d).collect::<Result<_>>()?;
    match ts.first() {
        Some(t) if t.dim() == 1 => cat(&ts, 0),
        _ => cat(&ts, 1),
    }
}

/// `torch.vstack(tensors)`: `cat` along dim 0 after making every tensor at least 2-d.
pub fn vstack(tensors: &[Tensor]) -> Result<Tensor> {
    let ts: Vec<Tensor> = tensors
        .iter()
        .map(|t| {
            let t = atleast_1d(t)?;
            if t.dim() == 1 {
                t.unsqueeze(0)
            } else {
                Ok(t)
            }
        })
        .collect::<Result<_>>()?;
    cat(&ts, 0)
}

fn atleast_1d(t: &Tensor) -> Result<Tensor> {
    if t.dim() == 0 {
        t.reshape(&[1])
    } else {
        Ok(t.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    fn ar(n: i64, s: &[i64]) -> Tensor {
        Tensor::from_vec((0..n).map(|i| i as f32).collect(), s).unwrap()
    }

    #[test]
    fn cat_rules() {
        let a = ar(4, &[2, 2]);
        let b = ar(2, &[2, 1]);
        let c = cat(&[a.clone(), b], 1).unwrap();
        assert_eq!(c.sizes().as_slice(), &[2, 3]);
        assert_eq!(c.to_vec::<f32>(), vec![0., 1., 0., 2., 3., 1.]);
        // torch: cat([zeros(2,2), zeros(3,2)], 1) -> "Sizes of tensors must match except in dimension 1. ..."
        assert_eq!(
            cat(&[a.clone(), ar(6, &[3, 2])], 1).unwrap_err().message,
            "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for tensor number 1 in the list."
        );
        assert_eq!(
            cat(&[a.clone(), ar(2, &[2])], 0).unwrap_err().message,
            "Tensors must have same number of dimensions: got 2 and 1"
        );
        assert_eq!(cat(&[], 0).unwrap_err().kind, ErrorKind::ValueError);
        assert_eq!(
            cat(&[a.clone(), ar(0, &[0])], 0)
                .unwrap()
                .sizes()
                .as_slice(),
            &[2, 2]
        );
        let i = Tensor::zeros(&[1], DType::Int32).unwrap();
        assert_eq!(cat(&[i, ar(1, &[1])], 0).unwrap().dtype(), DType::Float32);
        let z = Tensor::zeros(&[], DType::Float32).unwrap();
        assert!(cat(&[z.clone(), z], 0).is_err());
    }

    #[test]
    fn stack_rules() {
        let a = ar(2, &[2]);
        let s = stack(&[a.clone(), a.clone()], -1).unwrap();
        assert_eq!(s.sizes().as_slice(), &[2, 2]);
        assert_eq!(s.to_vec::<f32>(), vec![0., 0., 1., 1.]);
        assert_eq!(
            stack(&[a.clone(), ar(3, &[3])], 0).unwrap_err().message,
            "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1"
        );
        assert_eq!(
            stack(&[], 0).unwrap_err().message,
            "stack expects a non-empty TensorList"
        );
        assert_eq!(
            hstack(&[a.clone(), a.clone()]).unwrap().sizes().as_slice(),
            &[4]
        );
        assert_eq!(vstack(&[a.clone(), a]).unwrap().sizes().as_slice(), &[2, 2]);
    }
}
