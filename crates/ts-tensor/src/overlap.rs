//! Memory overlap checks for in-place and `out=` writes, with ATen's errors.
//!
//! Writing to a tensor whose elements share memory (an `expand`ed tensor) or reading an input
//! that partially overlaps the output would make results depend on iteration order, so PyTorch
//! refuses both. Full overlap (`x.add_(x)`) is fine: each element is read before it is written.

use crate::error::{Error, Result};
use crate::shape::is_non_overlapping_and_dense;
use crate::tensor::TensorMeta;

/// Result of comparing two tensors' memory.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MemOverlap {
    /// Definitely disjoint.
    No,
    /// Definitely overlapping.
    Yes,
    /// Not decidable cheaply; treated as no overlap, as ATen does.
    TooHard,
}

/// Relationship between two tensors' memory.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MemOverlapStatus {
    /// Same elements in the same places.
    Full,
    /// Some elements shared.
    Partial,
    /// Disjoint.
    No,
    /// Not decidable cheaply.
    TooHard,
}

/// Whether several elements of `t` refer to the same memory location.
pub fn has_internal_overlap(t: &TensorMeta) -> MemOverlap {
    if is_non_overlapping_and_dense(&t.sizes, &t.strides) {
        return MemOverlap::No;
    }
    for (&sz, &st) in t.sizes.iter().zip(&t.strides) {
        if sz > 1 && st == 0 {
            return MemOverlap::Yes;
        }
    }
    MemOverlap::TooHard
}

/// Errors when `t` cannot be written elementwise because elements share memory.
pub fn assert_no_internal_overlap(t: &TensorMeta) -> Result<()> {
    if has_internal_overlap(t) == MemOverlap::Yes {
        return Err(Error::runtime(
            "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.",
        ));
    }
    Ok(())
}

/// Compares the memory of two tensors.
pub fn overlap_status(a: &TensorMeta, b: &TensorMeta) -> MemOverlapStatus {
    let na = crate::shape::numel(&a.sizes);
    let nb = crate::shape::numel(&b.sizes);
    if na == 0 || nb == 0 || !crate::Storage::ptr_eq(&a.storage, &b.storage) {
        return MemOverlapStatus::No;
    }
    if !is_non_overlapping_and_dense(&a.sizes, &a.strides)
        || !is_non_overlapping_and_dense(&b.sizes, &b.strides)
    {
        return MemOverlapStatus::TooHard;
    }
    let a_start = a.offset * a.dtype.size();
    let a_end = a_start + na * a.dtype.size();
    let b_start = b.offset * b.dtype.size();
    let b_end = b_start + nb * b.dtype.size();
    if a_start == b_start && a_end == b_end {
        if a.strides == b.strides && a.sizes == b.sizes && a.dtype == b.dtype {
            return MemOverlapStatus::Full;
        }
        return MemOverlapStatus::Partial;
    }
    if a_start < b_end && b_start < a_end {
        return MemOverlapStatus::Partial;
    }
    MemOverlapStatus::No
}

/// Errors when an input partially overlaps the output of an operation.
pub fn assert_no_partial_overlap(a: &TensorMeta, b: &TensorMeta) -> Result<()> {
    if overlap_status(a, b) == MemOverlapStatus::Partial {
        return Err(Error::runtime(
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.",
        ));
    }
    Ok(())
}

/// Errors when an input shares any memory with the output (for ops that read inputs out of
/// order, such as `index_select` or `cat`).
pub fn assert_no_overlap(a: &TensorMeta, b: &TensorMeta) -> Result<()> {
    match overlap_status(a, b) {
        MemOverlapStatus::Partial | MemOverlapStatus::Full => Err(Error::runtime(
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.",
        )),
        _ => Ok(()),
    }
}
