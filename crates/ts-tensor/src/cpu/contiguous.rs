//! Contiguous tensors as slices: the safe bridge kernels use to read an operand in place and to
//! fill a fresh output without building an intermediate `Vec`.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// A fresh contiguous tensor of `shape` whose zero-initialised elements `fill` writes in place
/// (saves the copy that building a `Vec` and wrapping it would cost).
pub(crate) fn filled_tensor<T: Element>(
    shape: &[i64],
    fill: impl FnOnce(&mut [T]),
) -> Result<Tensor> {
    let t = Tensor::zeros(shape, T::DTYPE)?;
    let n = t.numel();
    {
        let m = t.meta();
        // SAFETY: `t` was just created and no other handle to its storage exists; it is
        // contiguous, suitably aligned and holds `n` zero-initialised elements of `T` (all-zero
        // bytes are a valid value of every element type).
        let s = unsafe { std::slice::from_raw_parts_mut(m.data_ptr() as *mut T, n) };
        fill(s);
    }
    Ok(t)
}

/// Reads a contiguous tensor of element type `T` as a slice for the duration of `f`.
pub(crate) fn with_slice<T: Element, R>(t: &Tensor, f: impl FnOnce(&[T]) -> R) -> Result<R> {
    let m = t.meta();
    if m.dtype != T::DTYPE || !m.is_contiguous() {
        return Err(Error::runtime(
            "internal error: kernel operand is not a contiguous tensor of its compute dtype",
        ));
    }
    let n = m.numel();
    if n == 0 {
        return Ok(f(&[]));
    }
    // SAFETY: the tensor is contiguous with `n` elements of `T` starting at its data pointer,
    // all inside its storage (checked when the view was made); the read guard keeps the
    // metadata, and the handle keeps the storage, alive while `f` runs.
    let s = unsafe { std::slice::from_raw_parts(m.data_ptr() as *const T, n) };
    Ok(f(s))
}

/// Elements from which [`map_rows`] splits rows across threads.
const PARALLEL_ELEMS: usize = 1 << 15;

/// A fresh tensor shaped like the contiguous `x` (element type `T`) whose `row`-element rows are
/// `f(row_index, input_row, output_row)`, run in parallel when the tensor is large.
pub(crate) fn map_rows<T: Element, U: Element>(
    x: &Tensor,
    row: usize,
    f: impl Fn(usize, &[T], &mut [U]) + Sync,
) -> Result<Tensor> {
    use rayon::prelude::*;
    with_slice::<T, _>(x, |xs| {
        filled_tensor::<U>(&x.sizes(), |out| {
            if row == 0 {
                return;
            }
            if crate::threads::should_split(out.len() >= PARALLEL_ELEMS) {
                out.par_chunks_mut(row)
                    .zip(xs.par_chunks(row))
                    .enumerate()
                    .for_each(|(p, (o, i))| f(p, i, o));
            } else {
                out.chunks_mut(row)
                    .zip(xs.chunks(row))
                    .enumerate()
                    .for_each(|(p, (o, i))| f(p, i, o));
            }
        })
    })?
}

/// A fresh contiguous tensor whose elements are NOT initialized, for kernels that write every
/// element before the tensor is returned (a convolution's output): skips the zero fill, a
/// serial memset of the whole buffer.
pub(crate) fn uninit_contiguous(shape: &[i64], dt: crate::DType) -> Result<Tensor> {
    let numel: usize = shape.iter().map(|&s| s.max(0) as usize).product();
    let mut strides = vec![1i64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1].max(1);
    }
    let storage =
        crate::storage::Storage::uninit(numel.saturating_mul(dt.size()), crate::Device::Cpu)?;
    Tensor::from_parts(storage, shape, &strides, 0, dt)
}

/// `dst.copy_from_slice(src)` for short runs (a convolution's patch pieces, at most a
/// micro-panel wide; an attention head's rows): fixed-size copies (8, then 4, 2, 1 elements)
/// the compiler emits as vector moves, where a `memcpy` call per piece cost more than the
/// copying. (A plain loop for the remainder was turned into such a call: 4% of a stride-2
/// convolution's time.)
#[inline(always)]
pub(crate) fn copy_short<T: Copy>(dst: &mut [T], src: &[T]) {
    let n = dst.len().min(src.len());
    let mut i = 0;
    while i + 8 <= n {
        dst[i..i + 8].copy_from_slice(&src[i..i + 8]);
        i += 8;
    }
    if i + 4 <= n {
        dst[i..i + 4].copy_from_slice(&src[i..i + 4]);
        i += 4;
    }
    if i + 2 <= n {
        dst[i..i + 2].copy_from_slice(&src[i..i + 2]);
        i += 2;
    }
    if i < n {
        dst[i] = src[i];
    }
}
