//! The strided loop engine under every elementwise kernel (a small TensorIterator).
//!
//! Operands share one (broadcast) shape and each has its own strides in elements. Dimensions are
//! coalesced where every operand allows it, then the body is called once per innermost run with
//! the element offsets of each operand and the run's inner strides; runs whose inner strides are
//! all 1 are plain slices the compiler can vectorize. Large iterations split across rayon tasks.

use rayon::prelude::*;
use smallvec::SmallVec;

/// Element count above which loops run in parallel.
pub const PARALLEL_THRESHOLD: usize = 1 << 15;

type Shape = SmallVec<[i64; 6]>;

/// A coalesced iteration space for `N` operands.
#[derive(Clone, Debug)]
pub struct IterSpace<const N: usize> {
    /// Sizes, outermost first; the last is the inner run length.
    pub shape: Shape,
    pub strides: [Shape; N],
}

impl<const N: usize> IterSpace<N> {
    /// Builds and coalesces the space for `shape` and per-operand `strides`.
    pub fn new(shape: &[i64], strides: [&[i64]; N]) -> IterSpace<N> {
        let mut dims: Vec<(i64, [i64; N])> = Vec::with_capacity(shape.len());
        for (d, &size) in shape.iter().enumerate() {
            if size == 1 {
                continue;
            }
            let st: [i64; N] = std::array::from_fn(|k| strides[k][d]);
            dims.push((size, st));
        }
        // Merge an outer dim into the following inner one when contiguous for every operand.
        let mut merged: Vec<(i64, [i64; N])> = Vec::with_capacity(dims.len());
        for (size, st) in dims {
            if let Some(last) = merged.last_mut() {
                // `last` is outer, (size, st) inner.
                if (0..N).all(|k| last.1[k] == st[k] * size) {
                    last.0 *= size;
                    last.1 = st;
                    continue;
                }
            }
            merged.push((size, st));
        }
        if merged.is_empty() {
            merged.push((1, [0; N]));
        }
        IterSpace {
            shape: merged.iter().map(|d| d.0).collect(),
            strides: std::array::from_fn(|k| merged.iter().map(|d| d.1[k]).collect()),
        }
    }

    /// Total elements.
    pub fn numel(&self) -> usize {
        self.shape.iter().product::<i64>().max(0) as usize
    }

    fn inner_len(&self) -> usize {
        *self.shape.last().unwrap_or(&1) as usize
    }

    fn rows(&self) -> usize {
        let n = self.shape.len();
        self.shape[..n - 1].iter().product::<i64>().max(0) as usize
    }

    /// Visits rows `[r0, r1)`, in runs of at most the inner length starting at column `c0`
    /// in the first row and ending before column `c_end` of the last visited row when given.
    fn visit_rows(
        &self,
        r0: usize,
        r1: usize,
        body: &mut dyn FnMut([isize; N], usize, [isize; N]),
    ) {
        let nd = self.shape.len();
        let inner = self.inner_len();
        let inner_st: [isize; N] = std::array::from_fn(|k| self.strides[k][nd - 1] as isize);
        let outer = &self.shape[..nd - 1];
        // Multi-index of row r0.
        let mut idx: SmallVec<[i64; 6]> = SmallVec::from_elem(0, outer.len());
        let mut rem = r0 as i64;
        for d in (0..outer.len()).rev() {
            idx[d] = rem % outer[d];
            rem /= outer[d];
        }
        let mut offs: [isize; N] = std::array::from_fn(|k| {
            (0..outer.len())
                .map(|d| idx[d] * self.strides[k][d])
                .sum::<i64>() as isize
        });
        for _ in r0..r1 {
            body(offs, inner, inner_st);
            for d in (0..outer.len()).rev() {
                idx[d] += 1;
                for (k, o) in offs.iter_mut().enumerate() {
                    *o += self.strides[k][d] as isize;
                }
                if idx[d] < outer[d] {
                    break;
                }
                for (k, o) in offs.iter_mut().enumerate() {
                    *o -= (self.strides[k][d] * outer[d]) as isize;
                }
                idx[d] = 0;
            }
        }
    }

    /// Calls `body(offsets, len, inner_strides)` for every run, serially.
    pub fn for_each(&self, mut body: impl FnMut([isize; N], usize, [isize; N])) {
        if self.numel() == 0 {
            return;
        }
        self.visit_rows(0, self.rows(), &mut body);
    }

    /// Like [`for_each`](Self::for_each) but splits large spaces across threads; runs never
    /// overlap, so bodies may write their own output elements.
    pub fn par_for_each(&self, body: impl Fn([isize; N], usize, [isize; N]) + Sync + Send) {
        let numel = self.numel();
        if numel == 0 {
            return;
        }
        if numel < PARALLEL_THRESHOLD || rayon::current_num_threads() <= 1 {
            self.visit_rows(0, self.rows(), &mut |o, n, s| body(o, n, s));
            return;
        }
        let rows = self.rows();
        let inner = self.inner_len();
        let nd = self.shape.len();
        if rows == 1 {
            // One long run: split it into chunks.
            let chunk = (inner / (rayon::current_num_threads() * 4)).max(PARALLEL_THRESHOLD / 4);
            let st: [isize; N] = std::array::from_fn(|k| self.strides[k][nd - 1] as isize);
            (0..inner.div_ceil(chunk)).into_par_iter().for_each(|c| {
                let start = c * chunk;
                let len = chunk.min(inner - start);
                let offs: [isize; N] = std::array::from_fn(|k| start as isize * st[k]);
                body(offs, len, st);
            });
            return;
        }
        let rows_per_task = (PARALLEL_THRESHOLD / inner.max(1)).max(1);
        (0..rows.div_ceil(rows_per_task))
            .into_par_iter()
            .for_each(|c| {
                let r0 = c * rows_per_task;
                let r1 = (r0 + rows_per_task).min(rows);
                self.visit_rows(r0, r1, &mut |o, n, s| body(o, n, s));
            });
    }
}

/// A raw pointer that may cross threads; kernels guarantee disjoint writes.
#[derive(Clone, Copy)]
pub struct SendPtr<T>(pub *mut T);

// SAFETY: used only to hand element pointers to rayon tasks that access disjoint elements (or
// only read shared ones); the underlying storage outlives the parallel loop.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    /// The pointer advanced by `off` elements.
    ///
    /// # Safety
    /// The result must stay inside the allocation.
    #[inline(always)]
    pub unsafe fn at(self, off: isize) -> *mut T {
        // SAFETY: guaranteed by the caller.
        unsafe { self.0.offset(off) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesces_contiguous_dims() {
        let s = IterSpace::new(&[2, 3, 4], [&[12, 4, 1], &[12, 4, 1]]);
        assert_eq!(s.shape.as_slice(), &[24]);
        // A transposed operand blocks merging.
        let s = IterSpace::new(&[2, 3], [&[3, 1], &[1, 2]]);
        assert_eq!(s.shape.as_slice(), &[2, 3]);
        // Size-1 dims are dropped; broadcast dims keep stride 0.
        let s = IterSpace::new(&[1, 3, 4], [&[12, 4, 1], &[0, 0, 1]]);
        assert_eq!(s.shape.as_slice(), &[3, 4]);
        assert_eq!(s.strides[1].as_slice(), &[0, 1]);
    }

    #[test]
    fn visits_every_element_once() {
        let s = IterSpace::new(&[3, 5, 7], [&[35, 7, 1], &[1, 3, 15]]);
        let mut seen = vec![0; 105];
        s.for_each(|[a, b], n, [sa, sb]| {
            for i in 0..n as isize {
                seen[(a + i * sa) as usize] += 1;
                assert!((b + i * sb) < 105);
            }
        });
        assert!(seen.iter().all(|&c| c == 1));
        let big = IterSpace::new(&[300, 301], [&[301, 1]]);
        let count = std::sync::atomic::AtomicUsize::new(0);
        big.par_for_each(|_, n, _| {
            count.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        });
        assert_eq!(count.into_inner(), 300 * 301);
    }
}
