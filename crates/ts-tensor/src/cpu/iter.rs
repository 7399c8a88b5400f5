//! The elementwise iterator (a small TensorIterator): broadcasts inputs, allocates or checks the
//! output, picks a memory-friendly iteration order and hands a [`Plan`] to typed kernels.
//!
//! Output layout follows ATen: a new output gets the dimension order of the inputs (so
//! `x.t().exp()` is itself transposed), an in-place output must already have the broadcast shape,
//! and an `out=` tensor is resized when its shape differs. When the output's dtype differs from the
//! kernel's result dtype the kernel writes a temporary that is then cast into the output.

use smallvec::SmallVec;

use crate::cpu::loops::{LoopOperand, Plan, SendPtr};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::overlap::{assert_no_internal_overlap, assert_no_partial_overlap};
use crate::shape::{broadcast_shapes, strides_for_permutation};
use crate::tensor::{Dims, Tensor, TensorMeta};

/// Where an elementwise result goes.
#[derive(Clone, Copy)]
pub(crate) enum Out<'a> {
    /// A new tensor of the given dtype.
    New(DType),
    /// An existing tensor that must already have the broadcast shape (`add_`).
    InPlace(&'a Tensor),
    /// An `out=` tensor, resized to the broadcast shape if needed.
    Into(&'a Tensor),
}

/// The dtype kernels compute and store in for a result of dtype `dt`: float16 and bfloat16
/// results are computed as float32 and rounded once when written back, which is what ATen's
/// `opmath` does and keeps the number of kernel instantiations down.
pub(crate) fn kernel_dtype(dt: DType) -> DType {
    match dt {
        DType::Float16 | DType::BFloat16 => DType::Float32,
        other => other,
    }
}

/// A built elementwise iteration: output first, then the inputs.
pub(crate) struct ElementwiseIter<const N: usize> {
    pub plan: Plan<N>,
    /// The tensor the kernel writes.
    pub output: Tensor,
    /// The caller's output when the kernel writes a temporary of another dtype.
    target: Option<Tensor>,
}

impl<const N: usize> ElementwiseIter<N> {
    /// Builds the iteration. `kernel_dtype` is the dtype the kernel writes; inputs are read with
    /// their own dtypes (callers cast them first when the kernel expects one dtype).
    pub(crate) fn new(out: Out<'_>, kernel_dtype: DType, inputs: &[&Tensor]) -> Result<Self> {
        if inputs.len() + 1 != N {
            return Err(Error::runtime(format!(
                "internal error: elementwise iterator built for {} operands with {} inputs",
                N,
                inputs.len()
            )));
        }
        if let Out::New(dt) = out {
            if dt == kernel_dtype {
                if let Some(it) = Self::flat(kernel_dtype, inputs)? {
                    return Ok(it);
                }
            }
        }
        Self::general(out, kernel_dtype, inputs)
    }

    /// Builds any iteration: broadcasts the inputs, orders the dimensions, and makes or checks
    /// the output.
    fn general(out: Out<'_>, kernel_dtype: DType, inputs: &[&Tensor]) -> Result<Self> {
        let metas: SmallVec<[TensorMeta; 4]> = inputs.iter().map(|t| t.meta_snapshot()).collect();
        let mut shape: Dims = SmallVec::new();
        for m in &metas {
            shape = broadcast_shapes(&shape, &m.sizes)?;
        }
        let fixed_out = match out {
            Out::InPlace(t) => {
                let om = t.meta_snapshot();
                let b = broadcast_shapes(&om.sizes, &shape)?;
                if b != om.sizes {
                    return Err(Error::runtime(format!(
                        "output with shape {:?} doesn't match the broadcast shape {:?}",
                        om.sizes.as_slice(),
                        b.as_slice()
                    )));
                }
                shape = b;
                Some((t, om))
            }
            Out::Into(t) => Some((t, t.meta_snapshot())),
            Out::New(_) => None,
        };
        // Input strides broadcast to `shape`.
        let nd = shape.len();
        let in_strides: SmallVec<[Dims; 4]> =
            metas.iter().map(|m| broadcast_strides(m, &shape)).collect();
        // The output's strides take part in ordering only when it exists already with the shape.
        let out_existing: Option<Dims> = match &fixed_out {
            Some((_, om)) if om.sizes == shape => Some(om.strides.clone()),
            _ => None,
        };
        let perm = reorder(&shape, out_existing.as_ref(), &in_strides);
        let mut target = None;
        let output = match out {
            Out::New(dt) => {
                let strides = strides_for_permutation(&shape, &perm);
                if dt != kernel_dtype {
                    target = Some(Tensor::empty_strided(&shape, &strides, dt)?);
                }
                fresh_output(&shape, &strides, kernel_dtype)?
            }
            Out::InPlace(t) | Out::Into(t) => {
                if matches!(out, Out::Into(_)) && t.meta().sizes != shape {
                    resize_out(t, &shape, &strides_for_permutation(&shape, &perm))?;
                }
                let om = t.meta_snapshot();
                assert_no_internal_overlap(&om)?;
                for m in &metas {
                    assert_no_partial_overlap(&om, m)?;
                }
                if om.dtype == kernel_dtype {
                    t.clone()
                } else {
                    target = Some(t.clone());
                    Tensor::empty_strided(
                        &shape,
                        &strides_for_permutation(&shape, &perm),
                        kernel_dtype,
                    )?
                }
            }
        };
        let om = output.meta_snapshot();
        let mut ops: SmallVec<[LoopOperand; 4]> = SmallVec::new();
        ops.push(LoopOperand {
            ptr: SendPtr(om.data_ptr()),
            strides: om
                .strides
                .iter()
                .map(|&s| s as isize * om.dtype.size() as isize)
                .collect(),
        });
        for (m, st) in metas.iter().zip(&in_strides) {
            ops.push(LoopOperand {
                ptr: SendPtr(m.data_ptr()),
                strides: st
                    .iter()
                    .map(|&s| s as isize * m.dtype.size() as isize)
                    .collect(),
            });
        }
        let order: SmallVec<[usize; 6]> = perm.iter().rev().copied().collect();
        let mut it = ops.into_iter();
        let ops_arr: [LoopOperand; N] = std::array::from_fn(|_| {
            it.next().unwrap_or(LoopOperand {
                ptr: SendPtr(std::ptr::null_mut()),
                strides: SmallVec::from_elem(0, nd),
            })
        });
        Ok(ElementwiseIter {
            plan: Plan::new(&shape, &order, ops_arr),
            output,
            target,
        })
    }

    /// The common case, built without the general broadcasting and reordering: a new output
    /// of the kernel's dtype and inputs that are all row-major with the strides a fresh tensor
    /// of one shape has, or zero-dimensional (broadcast). The iteration is one flat run and the
    /// output is row-major, as the general path would make it. `None` when the inputs differ.
    fn flat(kernel_dtype: DType, inputs: &[&Tensor]) -> Result<Option<Self>> {
        let mut shape: Option<Dims> = None;
        let mut ops: [LoopOperand; N] = std::array::from_fn(|_| LoopOperand {
            ptr: SendPtr(std::ptr::null_mut()),
            strides: SmallVec::from_elem(0, 1),
        });
        for (t, op) in inputs.iter().zip(ops.iter_mut().skip(1)) {
            let m = t.meta();
            if m.sizes.is_empty() {
                op.ptr = SendPtr(m.data_ptr());
                continue;
            }
            match &shape {
                None => {
                    if m.numel() == 0 || !is_row_major(&m.sizes, &m.strides) {
                        return Ok(None);
                    }
                    shape = Some(m.sizes.clone());
                }
                Some(s) if *s == m.sizes && is_row_major(&m.sizes, &m.strides) => {}
                Some(_) => return Ok(None),
            }
            op.ptr = SendPtr(m.data_ptr());
            op.strides[0] = m.dtype.size() as isize;
        }
        let shape = shape.unwrap_or_default();
        let strides = crate::shape::contiguous_strides(&shape);
        let output = fresh_output(&shape, &strides, kernel_dtype)?;
        ops[0].ptr = SendPtr(output.meta().data_ptr());
        ops[0].strides[0] = kernel_dtype.size() as isize;
        let numel = crate::shape::numel(&shape) as i64;
        Ok(Some(ElementwiseIter {
            plan: Plan::new(&[numel], &[0], ops),
            output,
            target: None,
        }))
    }

    /// Finishes: casts a temporary into the caller's output and returns the output tensor.
    pub(crate) fn finish(self) -> Result<Tensor> {
        match self.target {
            Some(t) => {
                crate::cpu::cast::copy_into(&t.meta_snapshot(), &self.output.meta_snapshot())?;
                Ok(t)
            }
            None => Ok(self.output),
        }
    }
}

/// Whether `strides` are exactly those of a fresh row-major tensor of `sizes` (size-1
/// dimensions included, so that the output's strides match the general path's).
fn is_row_major(sizes: &[i64], strides: &[i64]) -> bool {
    let mut expect = 1i64;
    for (&sz, &st) in sizes.iter().zip(strides).rev() {
        if st != expect {
            return false;
        }
        expect = expect.saturating_mul(sz);
    }
    true
}

/// Strides of `m` broadcast to `shape` (0 where `m` is broadcast).
pub(crate) fn broadcast_strides(m: &TensorMeta, shape: &[i64]) -> Dims {
    let nd = shape.len();
    let off = nd - m.sizes.len();
    let mut st: Dims = SmallVec::from_elem(0, nd);
    for i in 0..m.sizes.len() {
        if m.sizes[i] != 1 || shape[i + off] == 1 {
            st[i + off] = m.strides[i];
        }
    }
    st
}

/// The iteration permutation from fastest- to slowest-varying dimension, as ATen's
/// `reorder_dimensions`: operands are compared in order (output first when it already exists),
/// broadcast dimensions are skipped, and ties are broken by size.
pub(crate) fn reorder(shape: &[i64], out: Option<&Dims>, inputs: &[Dims]) -> SmallVec<[usize; 6]> {
    let nd = shape.len();
    let mut perm: SmallVec<[usize; 6]> = (0..nd).rev().collect();
    let operands: SmallVec<[&Dims; 5]> = out.into_iter().chain(inputs.iter()).collect();
    // Returns 1 when dim0 should move after dim1 (dim0 is slower-varying), -1 to keep.
    let should_swap = |dim0: usize, dim1: usize| -> i32 {
        for st in &operands {
            let s0 = st[dim0];
            let s1 = st[dim1];
            if s0 == 0 || s1 == 0 {
                continue;
            }
            if s0 < s1 {
                return -1;
            }
            if s0 > s1 {
                return 1;
            }
            if shape[dim0] > shape[dim1] {
                return 1;
            }
        }
        0
    };
    for i in 1..nd {
        let mut dim1 = i;
        for dim0 in (0..i).rev() {
            let c = should_swap(perm[dim0], perm[dim1]);
            if c > 0 {
                perm.swap(dim0, dim1);
                dim1 = dim0;
            } else if c < 0 {
                break;
            }
        }
    }
    perm
}

/// Resizes an `out=` tensor in place (visible through every handle), keeping its storage when
/// it is large enough. A larger size gets new storage holding the old bytes.
pub(crate) fn resize_out(t: &Tensor, sizes: &[i64], strides: &[i64]) -> Result<()> {
    let m = t.meta_snapshot();
    let numel = crate::tensor::checked_numel(sizes)?;
    let mut extent = 0usize;
    if numel > 0 {
        extent = 1;
        for (&sz, &st) in sizes.iter().zip(strides) {
            extent += (sz as usize - 1) * st as usize;
        }
    }
    let need = (m.offset + extent) * m.dtype.size();
    let storage = if need <= m.storage.nbytes() {
        m.storage.clone()
    } else {
        let s = crate::Storage::zeroed(need, m.storage.device())?;
        let old = m.storage.nbytes();
        // SAFETY: both buffers are valid for `old` bytes (the new one is larger) and distinct.
        unsafe { std::ptr::copy_nonoverlapping(m.storage.as_ptr(), s.as_mut_ptr(), old) };
        s
    };
    t.set_meta(TensorMeta {
        storage,
        sizes: sizes.into(),
        strides: strides.into(),
        offset: m.offset,
        dtype: m.dtype,
        requires_grad: m.requires_grad,
    });
    Ok(())
}

/// Bytes from which a fresh output is allocated uninitialized (below, zeroing costs little).
const UNINIT_OUTPUT_BYTES: usize = 1 << 16;

/// A fresh dense output for the iterator: every element is written by the plan before the
/// tensor is returned, so large ones skip the zero fill (a serial memset of the whole buffer,
/// about as costly as a parallel elementwise op itself).
fn fresh_output(shape: &[i64], strides: &[i64], dt: DType) -> Result<Tensor> {
    let numel: usize = shape.iter().map(|&s| s.max(0) as usize).product();
    let nbytes = numel.saturating_mul(dt.size());
    if nbytes < UNINIT_OUTPUT_BYTES {
        return Tensor::empty_strided(shape, strides, dt);
    }
    crate::threads::init_pool();
    // `strides` is a permutation of the contiguous strides, so the tensor spans `numel`
    // elements; `from_parts` checks that again.
    let storage = crate::storage::Storage::uninit(nbytes, crate::device::Device::Cpu)?;
    Tensor::from_parts(storage, shape, strides, 0, dt)
}

/// Typed inner loops. Each takes the pointers and byte strides of one innermost run and applies
/// a per-element function; contiguous and scalar-broadcast runs get loops the compiler
/// vectorizes, compiled for the widest vector ISA the CPU has (`widest!`).
pub(crate) mod kernels {
    use std::mem::size_of;

    /// Declares `unsafe fn name(args)` running `body` compiled for AVX-512 or AVX2 + FMA when
    /// the CPU has them and the run has at least 16 elements (else as baseline code). The
    /// pointers and the closure reference are parameters of the feature-enabled copy, so the
    /// compiler sees them as loop invariants and vectorizes the loop.
    macro_rules! widest {
        ($(#[$m:meta])* ($len:ident) fn $name:ident<$($g:ident),*>($($arg:ident: $ty:ty),*) where [$($w:tt)*] $body:block) => {
            $(#[$m])*
            ///
            /// # Safety
            /// The pointers must address `n` elements each.
            #[inline(always)]
            unsafe fn $name<$($g),*>($($arg: $ty),*) where $($w)* {
                #[inline(always)]
                unsafe fn body<$($g),*>($($arg: $ty),*) where $($w)* $body
                #[cfg(target_arch = "x86_64")]
                {
                    /// `body` for AVX-512.
                    ///
                    /// # Safety
                    /// As `body`; the CPU must support AVX-512F, AVX2 and FMA.
                    #[target_feature(enable = "avx512f,avx2,fma")]
                    unsafe fn v512<$($g),*>($($arg: $ty),*) where $($w)* {
                        // SAFETY: forwarded.
                        unsafe { body($($arg),*) }
                    }
                    /// `body` for AVX2 + FMA.
                    ///
                    /// # Safety
                    /// As `body`; the CPU must support AVX2 and FMA.
                    #[target_feature(enable = "avx2,fma")]
                    unsafe fn v256<$($g),*>($($arg: $ty),*) where $($w)* {
                        // SAFETY: forwarded.
                        unsafe { body($($arg),*) }
                    }
                    if $len >= 16 {
                        if crate::cpu::simd::has_avx512() {
                            // SAFETY: the features were just detected; the rest is forwarded.
                            return unsafe { v512($($arg),*) };
                        }
                        if crate::cpu::simd::has_avx2_fma() {
                            // SAFETY: as above.
                            return unsafe { v256($($arg),*) };
                        }
                    }
                }
                // SAFETY: forwarded.
                unsafe { body($($arg),*) }
            }
        };
    }

    widest!(
        /// `o[i] = f(a[i])` over contiguous runs.
        (n) fn contig1<A, O, F>(o: *mut O, a: *const A, n: usize, f: &F)
        where [A: Copy, O: Copy, F: Fn(A) -> O] {
            for i in 0..n {
                // SAFETY: `i < n`, guaranteed by the caller.
                unsafe { *o.add(i) = f(*a.add(i)) };
            }
        }
    );
    widest!(
        /// `o[i] = f(a[i], b[i])` over contiguous runs.
        (n) fn contig2<A, B, O, F>(o: *mut O, a: *const A, b: *const B, n: usize, f: &F)
        where [A: Copy, B: Copy, O: Copy, F: Fn(A, B) -> O] {
            for i in 0..n {
                // SAFETY: `i < n`, guaranteed by the caller.
                unsafe { *o.add(i) = f(*a.add(i), *b.add(i)) };
            }
        }
    );
    widest!(
        /// `o[i] = f(a[i], bv)`.
        (n) fn scalar_right<A, B, O, F>(o: *mut O, a: *const A, bv: B, n: usize, f: &F)
        where [A: Copy, B: Copy, O: Copy, F: Fn(A, B) -> O] {
            for i in 0..n {
                // SAFETY: `i < n`, guaranteed by the caller.
                unsafe { *o.add(i) = f(*a.add(i), bv) };
            }
        }
    );
    widest!(
        /// `o[i] = f(av, b[i])`.
        (n) fn scalar_left<A, B, O, F>(o: *mut O, av: A, b: *const B, n: usize, f: &F)
        where [A: Copy, B: Copy, O: Copy, F: Fn(A, B) -> O] {
            for i in 0..n {
                // SAFETY: `i < n`, guaranteed by the caller.
                unsafe { *o.add(i) = f(av, *b.add(i)) };
            }
        }
    );
    widest!(
        /// `o[i] = f(a[i], b[i], c[i])` over contiguous runs.
        (n) fn contig3<A, B, C, O, F>(o: *mut O, a: *const A, b: *const B, c: *const C, n: usize, f: &F)
        where [A: Copy, B: Copy, C: Copy, O: Copy, F: Fn(A, B, C) -> O] {
            for i in 0..n {
                // SAFETY: `i < n`, guaranteed by the caller.
                unsafe { *o.add(i) = f(*a.add(i), *b.add(i), *c.add(i)) };
            }
        }
    );

    /// `out[i] = f(a[i])`.
    ///
    /// # Safety
    /// The pointers must address `n` elements of the given types at the given byte strides.
    #[inline(always)]
    pub(crate) unsafe fn unary<A: Copy, O: Copy>(
        p: &[*mut u8; 2],
        s: &[isize; 2],
        n: usize,
        f: impl Fn(A) -> O,
    ) {
        let o = p[0] as *mut O;
        let a = p[1] as *const A;
        // SAFETY: guaranteed by the caller.
        unsafe {
            if s[0] == size_of::<O>() as isize && s[1] == size_of::<A>() as isize {
                contig1(o, a, n, &f);
            } else if s[0] == size_of::<O>() as isize && s[1] == 0 {
                let v = f(*a);
                for i in 0..n {
                    *o.add(i) = v;
                }
            } else {
                let (mut po, mut pa) = (p[0], p[1] as *const u8);
                for _ in 0..n {
                    *(po as *mut O) = f(*(pa as *const A));
                    po = po.wrapping_offset(s[0]);
                    pa = pa.wrapping_offset(s[1]);
                }
            }
        }
    }

    /// `out[i] = f(a[i], b[i])`.
    ///
    /// # Safety
    /// The pointers must address `n` elements of the given types at the given byte strides.
    #[inline(always)]
    pub(crate) unsafe fn binary<A: Copy, B: Copy, O: Copy>(
        p: &[*mut u8; 3],
        s: &[isize; 3],
        n: usize,
        f: impl Fn(A, B) -> O,
    ) {
        let o = p[0] as *mut O;
        let a = p[1] as *const A;
        let b = p[2] as *const B;
        let so = size_of::<O>() as isize;
        let sa = size_of::<A>() as isize;
        let sb = size_of::<B>() as isize;
        // SAFETY: guaranteed by the caller.
        unsafe {
            if s[0] == so && s[1] == sa && s[2] == sb {
                contig2(o, a, b, n, &f);
            } else if s[0] == so && s[1] == sa && s[2] == 0 {
                let bv = *b;
                scalar_right(o, a, bv, n, &f);
            } else if s[0] == so && s[1] == 0 && s[2] == sb {
                let av = *a;
                scalar_left(o, av, b, n, &f);
            } else {
                let (mut po, mut pa, mut pb) = (p[0], p[1] as *const u8, p[2] as *const u8);
                for _ in 0..n {
                    *(po as *mut O) = f(*(pa as *const A), *(pb as *const B));
                    po = po.wrapping_offset(s[0]);
                    pa = pa.wrapping_offset(s[1]);
                    pb = pb.wrapping_offset(s[2]);
                }
            }
        }
    }

    /// `out[i] = f(a[i], b[i], c[i])` (no special fast paths beyond contiguity).
    ///
    /// # Safety
    /// The pointers must address `n` elements of the given types at the given byte strides.
    #[inline(always)]
    pub(crate) unsafe fn ternary<A: Copy, B: Copy, C: Copy, O: Copy>(
        p: &[*mut u8; 4],
        s: &[isize; 4],
        n: usize,
        f: impl Fn(A, B, C) -> O,
    ) {
        let (mut po, mut pa, mut pb, mut pc) = (
            p[0],
            p[1] as *const u8,
            p[2] as *const u8,
            p[3] as *const u8,
        );
        // SAFETY: guaranteed by the caller.
        unsafe {
            if s[0] == size_of::<O>() as isize
                && s[1] == size_of::<A>() as isize
                && s[2] == size_of::<B>() as isize
                && s[3] == size_of::<C>() as isize
            {
                let (o, a, b, c) = (po as *mut O, pa as *const A, pb as *const B, pc as *const C);
                contig3(o, a, b, c, n, &f);
                return;
            }
            for _ in 0..n {
                *(po as *mut O) = f(*(pa as *const A), *(pb as *const B), *(pc as *const C));
                po = po.wrapping_offset(s[0]);
                pa = pa.wrapping_offset(s[1]);
                pb = pb.wrapping_offset(s[2]);
                pc = pc.wrapping_offset(s[3]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(sizes: &[i64]) -> Tensor {
        let n = crate::shape::numel(sizes);
        Tensor::from_vec((0..n).map(|i| i as f32).collect::<Vec<f32>>(), sizes).unwrap()
    }

    /// The outputs the flat and the general path make for a new f32 result of `inputs`.
    fn both_outputs<const N: usize>(inputs: &[&Tensor]) -> (Tensor, Tensor) {
        let f32 = DType::Float32;
        let fast = ElementwiseIter::<N>::flat(f32, inputs).unwrap().unwrap();
        let slow = ElementwiseIter::<N>::general(Out::New(f32), f32, inputs).unwrap();
        (fast.output, slow.output)
    }

    #[test]
    fn the_flat_path_builds_what_the_general_path_builds() {
        let scalar = t(&[]);
        let cases: Vec<Vec<Tensor>> = vec![
            vec![t(&[4, 4]), t(&[4, 4])],
            vec![t(&[4, 4]), scalar.clone()],
            vec![scalar.clone(), t(&[3, 1, 5])],
            vec![t(&[1, 7]), t(&[1, 7])],
            vec![scalar.clone(), scalar.clone()],
            vec![t(&[33])],
        ];
        for ins in cases {
            let refs: Vec<&Tensor> = ins.iter().collect();
            let (fast, slow) = if refs.len() == 1 {
                both_outputs::<2>(&refs)
            } else {
                both_outputs::<3>(&refs)
            };
            assert_eq!(fast.sizes(), slow.sizes());
            assert_eq!(fast.strides(), slow.strides());
        }
    }

    #[test]
    fn the_flat_path_declines_other_layouts() {
        let a = t(&[4, 3]);
        let declined = [
            vec![a.transpose(0, 1).unwrap(), t(&[3, 4])],
            vec![a.clone(), t(&[1, 3])],
            vec![a.clone(), t(&[3, 4])],
            vec![t(&[0, 3]), t(&[0, 3])],
        ];
        for ins in declined {
            let refs: Vec<&Tensor> = ins.iter().collect();
            assert!(ElementwiseIter::<3>::flat(DType::Float32, &refs)
                .unwrap()
                .is_none());
        }
    }

    #[test]
    fn flat_results_are_the_elementwise_results() {
        // An add through the flat path (same shapes, and a 0-dim operand) gives the values.
        let a = t(&[2, 3]);
        let b = t(&[2, 3]);
        let sum = a.add(&b, crate::Scalar::Int(1)).unwrap();
        assert_eq!(sum.to_vec::<f32>(), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let c = a
            .add(
                &Tensor::scalar_tensor(crate::Scalar::Float(0.5), DType::Float32).unwrap(),
                crate::Scalar::Int(2),
            )
            .unwrap();
        assert_eq!(c.to_vec::<f32>(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(c.strides().as_slice(), &[3, 1]);
    }
}
