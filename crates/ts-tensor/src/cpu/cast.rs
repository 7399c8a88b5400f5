//! Copying with dtype conversion: the kernel behind `copy_`, `to(dtype)` and `contiguous`.
//!
//! Conversions follow C++ `static_cast` as PyTorch compiles it on x86 (see [`crate::element`]):
//! integer sources convert through i64 (uint64 through u64 into floating dtypes), floating
//! sources through f64 (exact for every supported dtype), bool is `!= 0`. Complex to real
//! keeps the real part, as ATen does (PyTorch also warns that the imaginary part is discarded).

use smallvec::SmallVec;

use crate::cpu::iter::{broadcast_strides, kernels, reorder};
use crate::cpu::loops::{LoopOperand, Plan, SendPtr};
use crate::cpu::num::Elem;
use crate::element::Element;
use crate::error::Result;
use crate::shape::broadcast_shapes;
use crate::tensor::TensorMeta;

/// Converts one element with PyTorch's cast rules.
#[inline(always)]
pub(crate) fn cast<S: Element, D: Element>(s: S) -> D {
    if S::DTYPE.is_complex() || D::DTYPE.is_complex() {
        let (re, im) = s.to_c64();
        D::from_c64(re, im)
    } else if S::DTYPE.is_floating_point()
        || (S::DTYPE == crate::DType::UInt64 && D::DTYPE.is_floating_point())
    {
        D::from_f64(s.to_f64())
    } else {
        D::from_i64(s.to_i64())
    }
}

/// Writes `src` (broadcast to `dst`'s shape) into `dst`, converting dtypes. Overlap checks are
/// the caller's job.
pub(crate) fn copy_into(dst: &TensorMeta, src: &TensorMeta) -> Result<()> {
    let shape = broadcast_shapes(&dst.sizes, &src.sizes)?;
    if shape != dst.sizes {
        return Err(crate::Error::runtime(format!(
            "output with shape {:?} doesn't match the broadcast shape {:?}",
            dst.sizes.as_slice(),
            shape.as_slice()
        )));
    }
    let src_strides = broadcast_strides(src, &shape);
    let perm = reorder(
        &shape,
        Some(&dst.strides),
        std::slice::from_ref(&src_strides),
    );
    let order: SmallVec<[usize; 6]> = perm.iter().rev().copied().collect();
    let ds = dst.dtype.size() as isize;
    let ss = src.dtype.size() as isize;
    let plan = Plan::<2>::new(
        &shape,
        &order,
        [
            LoopOperand {
                ptr: SendPtr(dst.data_ptr()),
                strides: dst.strides.iter().map(|&s| s as isize * ds).collect(),
            },
            LoopOperand {
                ptr: SendPtr(src.data_ptr()),
                strides: src_strides.iter().map(|&s| s as isize * ss).collect(),
            },
        ],
    );
    if dst.dtype == src.dtype {
        match dst.dtype.size() {
            1 => run_same::<u8>(&plan),
            2 => run_same::<u16>(&plan),
            4 => run_same::<u32>(&plan),
            8 => run_same::<u64>(&plan),
            _ => run_same::<[u64; 2]>(&plan),
        }
        return Ok(());
    }
    dispatch_all_c!(src.dtype, S => dispatch_all_c!(dst.dtype, D => run_cast::<S, D>(&plan)));
    Ok(())
}

fn run_same<T: Copy + Send + Sync + 'static>(plan: &Plan<2>) {
    plan.run(|p, s, n| {
        // SAFETY: the plan addresses `n` elements of size_of::<T>() bytes for both operands.
        unsafe { kernels::unary::<T, T>(p, s, n, |x| x) }
    });
}

fn run_cast<S: Elem, D: Elem>(plan: &Plan<2>) {
    plan.run(|p, s, n| {
        // SAFETY: the plan addresses `n` elements of S (source) and D (destination).
        unsafe { kernels::unary::<S, D>(p, s, n, cast::<S, D>) }
    });
}
