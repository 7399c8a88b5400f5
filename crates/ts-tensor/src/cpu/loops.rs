//! The strided loop driver: runs a kernel over N operands that share one iteration shape.
//!
//! A [`Plan`] holds, per operand, a base pointer and byte strides over a common shape (already
//! broadcast: a broadcast dimension has stride 0). Building a plan drops size-1 dimensions and
//! merges dimensions that are contiguous for every operand, so most elementwise work ends up as a
//! single innermost run. Running it calls the kernel once per innermost run with the operand
//! pointers, their innermost byte strides and the run length; large iterations are split into
//! ranges executed on rayon's pool.

use rayon::prelude::*;
use smallvec::SmallVec;

/// Elements below which an iteration runs on the calling thread (ATen's `GRAIN_SIZE`).
pub(crate) const GRAIN_SIZE: usize = 32768;

/// A raw pointer that may cross threads. Kernels split their writes into disjoint ranges.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SendPtr(pub *mut u8);

// SAFETY: the pointer is only dereferenced by kernels, which write disjoint element ranges from
// different threads and only read memory that no other thread writes during the loop.
unsafe impl Send for SendPtr {}
// SAFETY: as above.
unsafe impl Sync for SendPtr {}

type Strides = SmallVec<[isize; 6]>;

/// One operand of a plan: the address of its element at index 0 and its byte strides.
#[derive(Clone, Debug)]
pub(crate) struct LoopOperand {
    pub ptr: SendPtr,
    pub strides: Strides,
}

/// A coalesced iteration over N operands.
#[derive(Debug)]
pub(crate) struct Plan<const N: usize> {
    /// Outermost first.
    shape: SmallVec<[usize; 6]>,
    /// `strides[op][dim]`, in bytes.
    strides: [Strides; N],
    base: [SendPtr; N],
    numel: usize,
}

impl<const N: usize> Plan<N> {
    /// Builds a plan over `shape` (outermost first). `order` lists the dimensions from outermost to
    /// innermost iteration order (a permutation of `0..shape.len()`); each operand's strides are
    /// in bytes, indexed like `shape`.
    pub(crate) fn new(shape: &[i64], order: &[usize], ops: [LoopOperand; N]) -> Plan<N> {
        let numel = shape.iter().map(|&s| s.max(0) as usize).product();
        let mut dims: SmallVec<[usize; 6]> = SmallVec::new();
        let mut strides: [Strides; N] = std::array::from_fn(|_| SmallVec::new());
        for &d in order {
            if shape[d] == 1 {
                continue;
            }
            dims.push(shape[d].max(0) as usize);
            for (k, op) in ops.iter().enumerate() {
                strides[k].push(op.strides[d]);
            }
        }
        // Merge an outer dimension into the following inner one when every operand steps
        // through it exactly as if the two were one dimension.
        let mut i = dims.len();
        while i > 1 {
            i -= 1;
            let inner = i;
            let outer = i - 1;
            let mergeable =
                (0..N).all(|k| strides[k][outer] == strides[k][inner] * dims[inner] as isize);
            if mergeable {
                dims[inner] *= dims[outer];
                dims.remove(outer);
                for s in strides.iter_mut() {
                    s.remove(outer);
                }
            }
        }
        Plan {
            shape: dims,
            strides,
            base: std::array::from_fn(|k| ops[k].ptr),
            numel,
        }
    }

    /// Runs `f(pointers, inner_strides, len)` over every innermost run, in parallel when the
    /// iteration is large.
    pub(crate) fn run<F>(&self, f: F)
    where
        F: Fn(&[*mut u8; N], &[isize; N], usize) + Sync,
    {
        self.run_indexed(1, |_, p, s, n| f(p, s, n));
    }

    /// Like [`Plan::run`], also passing the linear index of each run's first element. `cost`
    /// is the work per element (in elements), used to decide how to split the iteration.
    pub(crate) fn run_indexed<F>(&self, cost: usize, f: F)
    where
        F: Fn(usize, &[*mut u8; N], &[isize; N], usize) + Sync,
    {
        if self.numel == 0 {
            return;
        }
        let threads = crate::threads::num_threads();
        let work = self.numel.saturating_mul(cost.max(1));
        if work < 2 * GRAIN_SIZE || threads <= 1 || self.numel < 2 {
            self.run_range_mut(0, self.numel, &mut |pos, p, s, n| f(pos, p, s, n));
            return;
        }
        let chunks = (work / GRAIN_SIZE).min(threads * 4).min(self.numel).max(1);
        let chunk = self.numel.div_ceil(chunks);
        crate::threads::parallel_region();
        (0..chunks).into_par_iter().for_each(|c| {
            let start = c * chunk;
            let end = (start + chunk).min(self.numel);
            if start < end {
                self.run_range_mut(start, end, &mut |pos, p, s, n| f(pos, p, s, n));
            }
        });
    }

    /// Runs the elements `start..end` serially with other base pointers (a plan used as a
    /// template for many sub-iterations, as reductions do).
    pub(crate) fn run_range_with_base<F>(
        &self,
        base: [*mut u8; N],
        start: usize,
        end: usize,
        f: &mut F,
    ) where
        F: FnMut(usize, &[*mut u8; N], &[isize; N], usize),
    {
        self.run_range_impl(base, start, end, f);
    }

    /// Runs on the calling thread only, in iteration order (for kernels with sequential state,
    /// such as random number generation).
    pub(crate) fn run_serial<F>(&self, mut f: F)
    where
        F: FnMut(&[*mut u8; N], &[isize; N], usize),
    {
        if self.numel > 0 {
            self.run_range_mut(0, self.numel, &mut |_, p, s, n| f(p, s, n));
        }
    }

    fn run_range_mut<F>(&self, start: usize, end: usize, f: &mut F)
    where
        F: FnMut(usize, &[*mut u8; N], &[isize; N], usize),
    {
        let base: [*mut u8; N] = std::array::from_fn(|k| self.base[k].0);
        self.run_range_impl(base, start, end, f);
    }

    fn run_range_impl<F>(&self, base: [*mut u8; N], start: usize, end: usize, f: &mut F)
    where
        F: FnMut(usize, &[*mut u8; N], &[isize; N], usize),
    {
        if start >= end {
            return;
        }
        let nd = self.shape.len();
        if nd == 0 {
            f(start, &base, &[0; N], 1);
            return;
        }
        let inner = self.shape[nd - 1];
        let inner_strides: [isize; N] = std::array::from_fn(|k| self.strides[k][nd - 1]);
        let mut idx: SmallVec<[usize; 6]> = SmallVec::from_elem(0, nd);
        let mut rem = start;
        for d in (0..nd).rev() {
            idx[d] = rem % self.shape[d];
            rem /= self.shape[d];
        }
        let mut pos = start;
        while pos < end {
            let ptrs: [*mut u8; N] = std::array::from_fn(|k| {
                let mut off = 0isize;
                for d in 0..nd {
                    off += idx[d] as isize * self.strides[k][d];
                }
                base[k].wrapping_offset(off)
            });
            let n = (inner - idx[nd - 1]).min(end - pos);
            f(pos, &ptrs, &inner_strides, n);
            pos += n;
            idx[nd - 1] += n;
            let mut d = nd - 1;
            while idx[d] >= self.shape[d] && d > 0 {
                idx[d] = 0;
                d -= 1;
                idx[d] += 1;
            }
        }
    }
}

/// The row-major iteration order (outermost first) for a shape of `ndim` dimensions.
pub(crate) fn identity_order(ndim: usize) -> SmallVec<[usize; 6]> {
    (0..ndim).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesces_contiguous_dims() {
        let mut buf = [0u8; 24];
        let p = SendPtr(buf.as_mut_ptr());
        let op = LoopOperand {
            ptr: p,
            strides: SmallVec::from_slice(&[12, 4, 1]),
        };
        let plan = Plan::<1>::new(&[2, 3, 4], &[0, 1, 2], [op]);
        assert_eq!(plan.shape.as_slice(), &[24]);
        let mut runs = vec![];
        plan.run_serial(|_, s, n| runs.push((s[0], n)));
        assert_eq!(runs, vec![(1, 24)]);
    }

    #[test]
    fn splits_ranges_across_rows() {
        let mut buf = [0u8; 64];
        let p = SendPtr(buf.as_mut_ptr());
        // A 3x2 view with row stride 8: rows are not adjacent, so no coalescing.
        let op = LoopOperand {
            ptr: p,
            strides: SmallVec::from_slice(&[8, 1]),
        };
        let plan = Plan::<1>::new(&[3, 2], &[0, 1], [op]);
        let mut runs = vec![];
        plan.run_range_mut(1, 5, &mut |_, ptrs, _, n| {
            runs.push((ptrs[0] as usize - p.0 as usize, n));
        });
        assert_eq!(runs, vec![(1, 1), (8, 2), (16, 1)]);
    }
}
