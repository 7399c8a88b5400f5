//! Shape arithmetic: dimension wrapping, broadcasting, `-1` inference, and the stride
//! computation that decides whether `view` can alias (PyTorch's `computeStride`).

use smallvec::SmallVec;

use crate::error::{Error, ErrorKind, Result};
use crate::tensor::Dims;

/// Wraps a possibly negative dimension index for a tensor of rank `ndim`, with PyTorch's error.
/// Rank-0 tensors accept dims -1 and 0.
pub fn wrap_dim(dim: i64, ndim: usize) -> Result<usize> {
    let n = ndim.max(1) as i64;
    if dim < -n || dim >= n {
        return Err(Error::new(
            ErrorKind::IndexError,
            format!(
                "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
                -n,
                n - 1
            ),
        ));
    }
    Ok(if dim < 0 {
        (dim + n) as usize
    } else {
        dim as usize
    })
}

/// Wraps a list of dims, refusing repeats.
pub fn wrap_dims(dims: &[i64], ndim: usize) -> Result<SmallVec<[usize; 6]>> {
    let mut out: SmallVec<[usize; 6]> = SmallVec::new();
    for &d in dims {
        let w = wrap_dim(d, ndim)?;
        if out.contains(&w) {
            return Err(Error::runtime(format!(
                "dim {w} appears multiple times in the list of dims"
            )));
        }
        out.push(w);
    }
    Ok(out)
}

/// The broadcast shape of two shapes, with PyTorch's message on mismatch.
pub fn broadcast_shapes(a: &[i64], b: &[i64]) -> Result<Dims> {
    let n = a.len().max(b.len());
    let mut out: Dims = SmallVec::from_elem(1, n);
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(Error::runtime(format!(
                "The size of tensor a ({da}) must match the size of tensor b ({db}) at non-singleton dimension {i}"
            )));
        };
    }
    Ok(out)
}

/// Resolves a single `-1` in a requested shape for `numel` elements.
pub fn infer_size(shape: &[i64], numel: usize) -> Result<Dims> {
    let mut out: Dims = shape.into();
    let mut infer = None;
    let mut known: i64 = 1;
    for (i, &s) in shape.iter().enumerate() {
        if s == -1 {
            if infer.is_some() {
                return Err(Error::runtime("only one dimension can be inferred"));
            }
            infer = Some(i);
        } else if s < 0 {
            return Err(Error::runtime(format!("invalid shape dimension {s}")));
        } else {
            known = known.saturating_mul(s);
        }
    }
    let numel = numel as i64;
    let invalid = || {
        Error::runtime(format!(
            "shape '{}' is invalid for input of size {numel}",
            fmt_shape(shape)
        ))
    };
    match infer {
        Some(i) => {
            if known == 0 || numel % known != 0 {
                return Err(invalid());
            }
            out[i] = numel / known;
        }
        None => {
            if known != numel {
                return Err(invalid());
            }
        }
    }
    Ok(out)
}

/// Strides that let a tensor of `old_sizes`/`old_strides` be viewed as `new_sizes` without
/// copying, or `None` when a copy is needed.
pub fn compute_view_strides(
    old_sizes: &[i64],
    old_strides: &[i64],
    new_sizes: &[i64],
) -> Option<Dims> {
    let numel: i64 = old_sizes.iter().product();
    let mut new_strides: Dims = SmallVec::from_elem(0, new_sizes.len());
    if numel == 0 {
        if old_sizes == new_sizes {
            return Some(old_strides.into());
        }
        // Any strides are valid for an empty tensor; use contiguous ones.
        return Some(crate::tensor::contiguous_strides(new_sizes));
    }
    let mut view_d = new_sizes.len() as i64 - 1;
    let mut chunk_base_stride = *old_strides.last().unwrap_or(&1);
    let mut tensor_numel: i64 = 1;
    let mut view_numel: i64 = 1;
    let mut tensor_d = old_sizes.len() as i64 - 1;
    while tensor_d >= 0 {
        let td = tensor_d as usize;
        tensor_numel *= old_sizes[td];
        if tensor_d == 0
            || (old_sizes[td - 1] != 1 && old_strides[td - 1] != tensor_numel * chunk_base_stride)
        {
            while view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d as usize] == 1) {
                new_strides[view_d as usize] = view_numel * chunk_base_stride;
                view_numel *= new_sizes[view_d as usize];
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if tensor_d > 0 {
                chunk_base_stride = old_strides[td - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
        tensor_d -= 1;
    }
    if view_d != -1 {
        return None;
    }
    Some(new_strides)
}

/// Formats a shape as PyTorch does in messages: `[2, 3]`.
pub fn fmt_shape(s: &[i64]) -> String {
    format!("{s:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_dims_with_pytorch_message() {
        assert_eq!(wrap_dim(-1, 3).unwrap(), 2);
        assert_eq!(wrap_dim(0, 0).unwrap(), 0);
        let e = wrap_dim(2, 2).unwrap_err();
        assert_eq!(
            e.message,
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
        );
        assert_eq!(e.kind, ErrorKind::IndexError);
    }

    #[test]
    fn broadcasts() {
        assert_eq!(broadcast_shapes(&[3, 1], &[4]).unwrap().as_slice(), &[3, 4]);
        assert_eq!(broadcast_shapes(&[], &[2, 2]).unwrap().as_slice(), &[2, 2]);
        let e = broadcast_shapes(&[2, 3], &[2, 4]).unwrap_err();
        assert_eq!(e.message, "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
    }

    #[test]
    fn infers_and_views() {
        assert_eq!(infer_size(&[-1, 3], 6).unwrap().as_slice(), &[2, 3]);
        assert_eq!(
            infer_size(&[4, -1], 6).unwrap_err().message,
            "shape '[4, -1]' is invalid for input of size 6"
        );
        assert!(infer_size(&[-1, -1], 6).is_err());
        // A transposed 2x3 cannot be flattened without a copy; a contiguous one can.
        assert_eq!(
            compute_view_strides(&[2, 3], &[3, 1], &[6])
                .unwrap()
                .as_slice(),
            &[1]
        );
        assert!(compute_view_strides(&[3, 2], &[1, 3], &[6]).is_none());
        // torch.zeros(2, 3).t().view(3, 2, 1).stride() == (1, 3, 3) in PyTorch 2.15.
        assert_eq!(
            compute_view_strides(&[3, 2], &[1, 3], &[3, 2, 1])
                .unwrap()
                .as_slice(),
            &[1, 3, 3]
        );
    }
}
