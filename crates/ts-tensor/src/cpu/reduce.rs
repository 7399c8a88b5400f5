//! The reduction driver: folds the elements of each output position's reduced sub-tensor.
//!
//! The input is viewed as an *outer* iteration over the kept dimensions (in row-major order of
//! the keepdim-shaped output) and an *inner* iteration over the reduced dimensions (row-major, so
//! the position passed to `step` is the flat index within the reduced dimensions, which arg
//! reductions need). Outer positions run in parallel when the total work is large; a full
//! reduction of a large tensor instead splits the inner range and combines partial results in
//! order.

use rayon::prelude::*;
use smallvec::SmallVec;

use crate::cpu::loops::{identity_order, LoopOperand, Plan, SendPtr, GRAIN_SIZE};
use crate::tensor::{Dims, TensorMeta};

/// Which dimensions a reduction folds and the resulting shapes.
#[derive(Clone, Debug)]
pub(crate) struct ReduceShape {
    /// Input sizes with reduced dimensions set to 1.
    pub keep_shape: Dims,
    /// Input sizes with kept dimensions set to 1.
    pub inner_shape: Dims,
    /// Number of output positions.
    pub outer_numel: usize,
    /// Number of elements folded per output position.
    pub inner_numel: usize,
    /// The output shape (`keep_shape` without the reduced dimensions unless `keepdim`).
    pub out_shape: Dims,
}

impl ReduceShape {
    /// Shapes for reducing `sizes` over the dimensions in `mask`.
    pub(crate) fn new(sizes: &[i64], mask: u64, keepdim: bool) -> ReduceShape {
        let mut keep_shape: Dims = SmallVec::new();
        let mut inner_shape: Dims = SmallVec::new();
        let mut out_shape: Dims = SmallVec::new();
        for (d, &s) in sizes.iter().enumerate() {
            if mask & (1 << d) != 0 {
                keep_shape.push(1);
                inner_shape.push(s);
                if keepdim {
                    out_shape.push(1);
                }
            } else {
                keep_shape.push(s);
                inner_shape.push(1);
                out_shape.push(s);
            }
        }
        ReduceShape {
            outer_numel: crate::shape::numel(&keep_shape),
            inner_numel: crate::shape::numel(&inner_shape),
            keep_shape,
            inner_shape,
            out_shape,
        }
    }
}

/// Folds every output position of `input` (element type `T`) over the reduced dimensions and
/// hands the result to `emit(output_index, acc)`, where `output_index` is the row-major index
/// into the keepdim-shaped output. `step(acc, x, pos)` folds one element at flat position `pos`
/// of the reduced sub-tensor; `combine` merges partial results of consecutive ranges.
pub(crate) fn reduce<T, A, S, C, E>(
    input: &TensorMeta,
    shape: &ReduceShape,
    init: A,
    step: S,
    combine: C,
    emit: E,
) where
    T: Copy,
    A: Copy + Send + Sync,
    S: Fn(A, T, usize) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
    E: Fn(usize, A) + Sync,
{
    let es = input.dtype.size() as isize;
    let nd = input.sizes.len();
    let base = input.data_ptr();
    let bytes: SmallVec<[isize; 6]> = input.strides.iter().map(|&s| s as isize * es).collect();
    let inner = Plan::<1>::new(
        &shape.inner_shape,
        &identity_order(nd),
        [LoopOperand {
            ptr: SendPtr(base),
            strides: bytes.clone(),
        }],
    );
    let fold = |acc: A, start: usize, end: usize, at: *mut u8| -> A {
        let mut acc = acc;
        inner.run_range_with_base([at], start, end, &mut |pos, p, s, n| {
            let mut q = p[0] as *const u8;
            for i in 0..n {
                // SAFETY: the plan addresses elements of T inside the input's storage.
                let x = unsafe { *(q as *const T) };
                acc = step(acc, x, pos + i);
                q = q.wrapping_offset(s[0]);
            }
        });
        acc
    };
    if shape.outer_numel == 0 {
        return;
    }
    let threads = crate::threads::num_threads();
    if shape.outer_numel == 1 {
        let n = shape.inner_numel;
        if n >= 2 * GRAIN_SIZE && threads > 1 {
            let chunks = (n / GRAIN_SIZE).min(threads * 4).max(1);
            let chunk = n.div_ceil(chunks);
            let base_ptr = SendPtr(base);
            crate::threads::parallel_region();
            let parts: Vec<A> = (0..chunks)
                .into_par_iter()
                .map(|c| {
                    let s = c * chunk;
                    let e = (s + chunk).min(n);
                    let p = base_ptr;
                    fold(init, s, e, p.0)
                })
                .collect();
            let mut acc = parts[0];
            for &p in &parts[1..] {
                acc = combine(acc, p);
            }
            emit(0, acc);
        } else {
            emit(0, fold(init, 0, n, base));
        }
        return;
    }
    let outer = Plan::<1>::new(
        &shape.keep_shape,
        &identity_order(nd),
        [LoopOperand {
            ptr: SendPtr(base),
            strides: bytes,
        }],
    );
    outer.run_indexed(shape.inner_numel, |k0, p, s, n| {
        let mut at = p[0];
        for j in 0..n {
            emit(k0 + j, fold(init, 0, shape.inner_numel, at));
            at = at.wrapping_offset(s[0]);
        }
    });
}

/// Typed writer into a contiguous output buffer from parallel emitters.
#[derive(Clone, Copy)]
pub(crate) struct OutPtr<T>(pub *mut T);

// SAFETY: emitters write distinct indices of a buffer that outlives the reduction.
unsafe impl<T> Send for OutPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for OutPtr<T> {}

impl<T: Copy> OutPtr<T> {
    /// Writes element `k`.
    ///
    /// # Safety
    /// `k` must be in bounds of the buffer and written by one emitter only.
    pub(crate) unsafe fn write(self, k: usize, v: T) {
        // SAFETY: guaranteed by the caller.
        unsafe { *self.0.add(k) = v }
    }
}
