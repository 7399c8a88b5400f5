//! Shape arithmetic: dimension wrapping, broadcasting, `view` stride computation and layout
//! predicates, with PyTorch's error messages.

use smallvec::SmallVec;

use crate::error::{Error, ErrorKind, Result};
use crate::tensor::Dims;

/// Wraps a possibly negative dimension index for a tensor of `ndim` dimensions. A 0-dim tensor
/// accepts `0` and `-1`, as PyTorch's `maybe_wrap_dim` does.
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

/// Wraps a dimension for an operation that inserts one (`unsqueeze`, `stack`): valid range is
/// `[-(ndim+1), ndim]`.
pub fn wrap_dim_insert(dim: i64, ndim: usize) -> Result<usize> {
    wrap_dim(dim, ndim + 1)
}

/// Wraps a list of dimensions and rejects repeats (`dim 0 appears multiple times in the list of
/// dims`). Returns a bit mask over the dimensions as well as the wrapped list.
pub fn wrap_dims(dims: &[i64], ndim: usize) -> Result<(SmallVec<[usize; 6]>, u64)> {
    let mut out = SmallVec::new();
    let mut mask = 0u64;
    for &d in dims {
        let w = wrap_dim(d, ndim)?;
        if w >= 64 {
            return Err(Error::runtime(
                "tensors with more than 64 dimensions are not supported",
            ));
        }
        if mask & (1 << w) != 0 {
            return Err(Error::runtime(format!(
                "dim {w} appears multiple times in the list of dims"
            )));
        }
        mask |= 1 << w;
        out.push(w);
    }
    Ok((out, mask))
}

/// The broadcast shape of two shapes (`torch.broadcast_shapes`), or PyTorch's mismatch error.
pub fn broadcast_shapes(a: &[i64], b: &[i64]) -> Result<Dims> {
    let n = a.len().max(b.len());
    let mut out: Dims = SmallVec::from_elem(0, n);
    for i in (0..n).rev() {
        let off = n - 1 - i;
        let sa = if off < a.len() {
            a[a.len() - 1 - off]
        } else {
            1
        };
        let sb = if off < b.len() {
            b[b.len() - 1 - off]
        } else {
            1
        };
        if sa != sb && sa != 1 && sb != 1 {
            return Err(Error::runtime(format!(
                "The size of tensor a ({sa}) must match the size of tensor b ({sb}) at non-singleton dimension {i}"
            )));
        }
        out[i] = if sa == 1 { sb } else { sa };
    }
    Ok(out)
}

/// Number of elements of a shape (sizes are assumed non-negative).
pub fn numel(sizes: &[i64]) -> usize {
    sizes.iter().map(|&s| s.max(0) as usize).product()
}

/// Resolves a `view`/`reshape` shape with at most one `-1` against `numel` elements.
pub fn infer_size(shape: &[i64], numel: usize) -> Result<Dims> {
    let mut out: Dims = shape.into();
    let mut infer: Option<usize> = None;
    let mut known: usize = 1;
    for (i, &s) in shape.iter().enumerate() {
        if s == -1 {
            if infer.is_some() {
                return Err(Error::runtime("only one dimension can be inferred"));
            }
            infer = Some(i);
        } else if s >= 0 {
            known = known.saturating_mul(s as usize);
        } else {
            return Err(Error::runtime(format!(
                "invalid shape dimension {s} at index {i} of shape {shape:?}"
            )));
        }
    }
    let bad = || {
        Error::runtime(format!(
            "shape '{shape:?}' is invalid for input of size {numel}"
        ))
    };
    match infer {
        Some(i) => {
            if known == 0 {
                // `view(0, -1)` on an empty tensor is ambiguous.
                if numel == 0 {
                    return Err(Error::runtime(format!(
                        "cannot reshape tensor of 0 elements into shape {shape:?} because the unspecified dimension size -1 can be any value and is ambiguous"
                    )));
                }
                return Err(bad());
            }
            if !numel.is_multiple_of(known) {
                return Err(bad());
            }
            out[i] = (numel / known) as i64;
        }
        None => {
            if known != numel {
                return Err(bad());
            }
        }
    }
    Ok(out)
}

/// The strides that let a tensor of (`old_sizes`, `old_strides`) be viewed with `new_sizes`
/// without copying, or `None` when the new shape splits a dimension across non-contiguous
/// memory. This is ATen's `computeStride`.
pub fn compute_view_strides(
    old_sizes: &[i64],
    old_strides: &[i64],
    new_sizes: &[i64],
) -> Option<Dims> {
    if old_sizes.is_empty() {
        return Some(SmallVec::from_elem(1, new_sizes.len()));
    }
    let n = numel(old_sizes);
    if n == 0 && old_sizes == new_sizes {
        return Some(old_strides.into());
    }
    let mut new_strides: Dims = SmallVec::from_elem(0, new_sizes.len());
    if n == 0 {
        for d in (0..new_sizes.len()).rev() {
            new_strides[d] = if d + 1 == new_sizes.len() {
                1
            } else {
                new_sizes[d + 1].max(1) * new_strides[d + 1]
            };
        }
        return Some(new_strides);
    }
    let mut view_d = new_sizes.len() as i64 - 1;
    let mut chunk_base_stride = *old_strides.last()?;
    let mut tensor_numel: i64 = 1;
    let mut view_numel: i64 = 1;
    for tensor_d in (0..old_sizes.len()).rev() {
        tensor_numel *= old_sizes[tensor_d];
        let boundary = tensor_d == 0
            || (old_sizes[tensor_d - 1] != 1
                && old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride);
        if boundary {
            while view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d as usize] == 1) {
                new_strides[view_d as usize] = view_numel * chunk_base_stride;
                view_numel *= new_sizes[view_d as usize];
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if tensor_d > 0 {
                chunk_base_stride = old_strides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    if view_d != -1 {
        return None;
    }
    Some(new_strides)
}

/// Row-major strides for `sizes` (size-0 and size-1 dimensions count as 1, as in ATen).
pub fn contiguous_strides(sizes: &[i64]) -> Dims {
    let mut strides: Dims = SmallVec::from_elem(1, sizes.len());
    let mut acc = 1i64;
    for i in (0..sizes.len()).rev() {
        strides[i] = acc;
        acc = acc.saturating_mul(sizes[i].max(1));
    }
    strides
}

/// True when the layout is row-major without gaps (size-1 dimensions' strides do not matter).
pub fn is_contiguous(sizes: &[i64], strides: &[i64]) -> bool {
    if sizes.contains(&0) {
        return true;
    }
    let mut expected = 1i64;
    for i in (0..sizes.len()).rev() {
        if sizes[i] == 1 {
            continue;
        }
        if strides[i] != expected {
            return false;
        }
        expected *= sizes[i];
    }
    true
}

/// True when the elements occupy a gap-free block of memory without overlap, in any dimension
/// order (ATen's `is_non_overlapping_and_dense`).
pub fn is_non_overlapping_and_dense(sizes: &[i64], strides: &[i64]) -> bool {
    let n = sizes.len();
    if n == 1 {
        return sizes[0] < 2 || strides[0] == 1;
    }
    let mut perm: SmallVec<[usize; 6]> = (0..n).collect();
    perm.sort_by(|&a, &b| {
        use std::cmp::Ordering;
        match (sizes[a] < 2, sizes[b] < 2) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => strides[a].cmp(&strides[b]),
        }
    });
    let mut require = 1i64;
    for &d in &perm {
        if sizes[d] < 2 {
            return true;
        }
        if strides[d] != require {
            return false;
        }
        require *= sizes[d];
    }
    true
}

/// Strides for a new dense tensor that follows the memory order of (`sizes`, `strides`): the
/// same strides when that layout is already dense, row-major otherwise (`empty_like` with
/// `torch.preserve_format`).
pub fn preserve_format_strides(sizes: &[i64], strides: &[i64]) -> Dims {
    if is_non_overlapping_and_dense(sizes, strides) {
        strides.into()
    } else {
        contiguous_strides(sizes)
    }
}

/// Dense strides for `sizes` where `perm` lists dimensions from fastest- to slowest-varying.
pub fn strides_for_permutation(sizes: &[i64], perm: &[usize]) -> Dims {
    let mut strides: Dims = SmallVec::from_elem(0, sizes.len());
    let mut acc = 1i64;
    for &d in perm {
        strides[d] = acc;
        acc = acc.saturating_mul(sizes[d].max(1));
    }
    strides
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_dims_like_pytorch() {
        assert_eq!(wrap_dim(-1, 3).unwrap(), 2);
        assert_eq!(wrap_dim(0, 0).unwrap(), 0);
        let e = wrap_dim(2, 2).unwrap_err();
        assert_eq!(e.kind, ErrorKind::IndexError);
        assert_eq!(
            e.message,
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
        );
        // torch 2.15: torch.zeros(3).sum(5) -> "... range of [-1, 0], but got 5"
        assert!(wrap_dim(5, 1)
            .unwrap_err()
            .message
            .contains("[-1, 0], but got 5"));
        assert!(wrap_dims(&[0, -2], 2).is_err());
    }

    #[test]
    fn broadcasts_and_reports_mismatch() {
        assert_eq!(broadcast_shapes(&[2, 1], &[3]).unwrap().as_slice(), &[2, 3]);
        assert_eq!(broadcast_shapes(&[], &[4]).unwrap().as_slice(), &[4]);
        assert_eq!(
            broadcast_shapes(&[2, 3], &[2, 4]).unwrap_err().message,
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
        );
        assert_eq!(broadcast_shapes(&[0], &[1]).unwrap().as_slice(), &[0]);
    }

    #[test]
    fn infers_minus_one() {
        assert_eq!(infer_size(&[-1, 2], 6).unwrap().as_slice(), &[3, 2]);
        assert_eq!(
            infer_size(&[4, -1], 6).unwrap_err().message,
            "shape '[4, -1]' is invalid for input of size 6"
        );
        assert!(infer_size(&[-1, -1], 6).is_err());
        assert!(infer_size(&[-2, 3], 6).is_err());
    }

    #[test]
    fn view_strides_follow_compute_stride() {
        // Contiguous 2x3 viewed as 6 and 3x2.
        assert_eq!(
            compute_view_strides(&[2, 3], &[3, 1], &[6])
                .unwrap()
                .as_slice(),
            &[1]
        );
        assert_eq!(
            compute_view_strides(&[2, 3], &[3, 1], &[3, 2])
                .unwrap()
                .as_slice(),
            &[2, 1]
        );
        // Transposed 3x2 (strides 1, 3) cannot be flattened.
        assert!(compute_view_strides(&[3, 2], &[1, 3], &[6]).is_none());
        // ... but can gain unit dimensions (torch: ones(2,3).t().view(3,1,2).stride() == (1, 6, 3)).
        assert_eq!(
            compute_view_strides(&[3, 2], &[1, 3], &[3, 1, 2])
                .unwrap()
                .as_slice(),
            &[1, 6, 3]
        );
    }

    #[test]
    fn dense_layouts() {
        assert!(is_non_overlapping_and_dense(&[3, 2], &[1, 3]));
        assert!(!is_non_overlapping_and_dense(&[2, 2], &[3, 1]));
        assert!(!is_non_overlapping_and_dense(&[2, 3], &[0, 1]));
        assert!(is_contiguous(&[2, 1, 3], &[3, 7, 1]));
        assert!(!is_contiguous(&[3, 2], &[1, 3]));
    }
}
