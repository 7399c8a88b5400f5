//! The floating-point GEMM driver: strided, batched `dst = beta * dst + alpha * a @ b`: f32 and
//! f64 on the project's packed AVX-512/AVX2 kernels (`blocked_gemm`), f16, complex64,
//! complex128 (and f32/f64 on CPUs without AVX2) on the `gemm` crate. Operands keep their strides (transposed and expanded
//! views need no copy); the batch loop is parallel when the matrices are too small to split.

use gemm::Parallelism;

use crate::cpu::blocked_gemm::{GemmFloat, Problem};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::TensorMeta;

/// Work (in multiply-adds) under which one product runs on a single thread.
const SERIAL_WORK: usize = crate::cpu::blocked_gemm::PARALLEL_WORK;

/// A raw pointer that may cross threads; each task writes a disjoint batch slice.
#[derive(Clone, Copy)]
struct SendPtr(*mut u8);
// SAFETY: the pointer is only dereferenced by `gemm` calls on disjoint output batches, while the
// tensors it points into are kept alive by the caller.
unsafe impl Send for SendPtr {}
// SAFETY: as above; the inputs are only read.
unsafe impl Sync for SendPtr {}

impl SendPtr {
    /// The pointer (a method, so closures capture the whole `Send` wrapper).
    fn get(self) -> *mut u8 {
        self.0
    }
}

/// The geometry of a 3-d operand `[batch, rows, cols]`: the base pointer and strides in elements.
#[derive(Clone, Copy)]
struct Operand {
    ptr: SendPtr,
    batch_stride: isize,
    rs: isize,
    cs: isize,
}

impl Operand {
    fn of(m: &TensorMeta) -> Operand {
        Operand {
            ptr: SendPtr(m.data_ptr()),
            batch_stride: m.strides[0] as isize,
            rs: m.strides[1] as isize,
            cs: m.strides[2] as isize,
        }
    }
}

/// Computes `dst[i] = beta * dst[i] + alpha * a[i] @ b[i]` for 3-d views `dst: [B, M, N]`,
/// `a: [B, M, K]`, `b: [B, K, N]` of one dtype (f32, f64 or f16). With `read_dst == false` the
/// old contents of `dst` are ignored (not even NaNs propagate), as BLAS does for `beta == 0`.
/// `dst` must be a fresh tensor that does not overlap `a` or `b`, with distinct elements.
pub(crate) fn gemm_batched(
    dst: &TensorMeta,
    a: &TensorMeta,
    b: &TensorMeta,
    read_dst: bool,
    beta: f64,
    alpha: f64,
    threads: usize,
) -> Result<()> {
    let (batch, m, n) = (
        dst.sizes[0] as usize,
        dst.sizes[1] as usize,
        dst.sizes[2] as usize,
    );
    let k = a.sizes[2] as usize;
    if a.sizes[0] as usize != batch
        || b.sizes[0] as usize != batch
        || a.sizes[1] as usize != m
        || b.sizes[1] as usize != k
        || b.sizes[2] as usize != n
        || a.dtype != dst.dtype
        || b.dtype != dst.dtype
    {
        return Err(Error::runtime("gemm: internal operand mismatch"));
    }
    if batch == 0 || m == 0 || n == 0 {
        return Ok(());
    }
    let (d, l, r) = (Operand::of(dst), Operand::of(a), Operand::of(b));
    let work = m.saturating_mul(n).saturating_mul(k.max(1));
    // Batches go to threads when each is small but all together are worth a fork-join.
    let split_batches = batch > 1
        && work < SERIAL_WORK * 8
        && threads > 1
        && work.saturating_mul(batch) >= SERIAL_WORK;
    let inner = if split_batches || work < SERIAL_WORK || threads <= 1 {
        Parallelism::None
    } else {
        Parallelism::Rayon(threads)
    };
    macro_rules! run {
        ($T:ty, $conv:expr) => {{
            let (beta, alpha): ($T, $T) = ($conv(beta), $conv(alpha));
            let one = move |i: usize| {
                let i = i as isize;
                if let Some(done) = blocked::<$T>(m, n, k, d, l, r, i, read_dst, beta, alpha, inner)
                {
                    if done {
                        return;
                    }
                }
                // SAFETY: the metas come from live tensors whose every in-bounds index maps into
                // their storage (checked at construction); batch `i < batch` and the row/column
                // strides describe exactly those elements. `dst` is fresh, so writes to batch `i`
                // touch no other batch and no input.
                unsafe {
                    gemm::gemm::<$T>(
                        m,
                        n,
                        k,
                        (d.ptr.get() as *mut $T).offset(i * d.batch_stride),
                        d.cs,
                        d.rs,
                        read_dst,
                        (l.ptr.get() as *const $T).offset(i * l.batch_stride),
                        l.cs,
                        l.rs,
                        (r.ptr.get() as *const $T).offset(i * r.batch_stride),
                        r.cs,
                        r.rs,
                        beta,
                        alpha,
                        false,
                        false,
                        false,
                        inner,
                    )
                }
            };
            if split_batches {
                use rayon::prelude::*;
                crate::threads::parallel_region();
                (0..batch).into_par_iter().for_each(one);
            } else {
                (0..batch).for_each(one);
            }
        }};
    }
    match dst.dtype {
        DType::Float32 => run!(f32, |v: f64| v as f32),
        DType::Float64 => run!(f64, |v: f64| v),
        DType::Float16 => run!(half::f16, half::f16::from_f64),
        // `Complex32`/`Complex64` are `#[repr(C)] { re, im }`, the layout of gemm's c32/c64
        // (`num_complex::Complex`), so the element pointers are reinterpreted as those.
        DType::Complex64 => run!(gemm::c32, |v: f64| gemm::c32::new(v as f32, 0.0)),
        DType::Complex128 => run!(gemm::c64, |v: f64| gemm::c64::new(v, 0.0)),
        other => {
            return Err(Error::runtime(format!(
                "gemm: unsupported dtype {}",
                other.scalar_type_name()
            )))
        }
    }
    Ok(())
}

/// Runs batch `i` on the packed kernels when `T` is f32/f64: `Some(true)` when done, `Some(false)`
/// when the CPU has no kernel, `None` for other element types.
#[allow(clippy::too_many_arguments)]
fn blocked<T: 'static + Copy>(
    m: usize,
    n: usize,
    k: usize,
    d: Operand,
    l: Operand,
    r: Operand,
    i: isize,
    read_dst: bool,
    beta: T,
    alpha: T,
    inner: Parallelism,
) -> Option<bool> {
    use std::any::Any;
    let threads = match inner {
        Parallelism::None => 1,
        Parallelism::Rayon(t) => t.max(1),
    };
    #[allow(clippy::too_many_arguments)]
    fn go<F: GemmFloat>(
        m: usize,
        n: usize,
        k: usize,
        d: Operand,
        l: Operand,
        r: Operand,
        i: isize,
        read_dst: bool,
        beta: F,
        alpha: F,
        threads: usize,
    ) -> bool {
        let p = Problem {
            m,
            n,
            k,
            a: (l.ptr.get() as *const F).wrapping_offset(i * l.batch_stride),
            rsa: l.rs,
            csa: l.cs,
            b: (r.ptr.get() as *const F).wrapping_offset(i * r.batch_stride),
            rsb: r.rs,
            csb: r.cs,
            c: (d.ptr.get() as *mut F).wrapping_offset(i * d.batch_stride),
            rsc: d.rs,
            csc: d.cs,
            alpha,
            beta,
            read_c: read_dst,
        };
        // SAFETY: as for the `gemm` crate call in `gemm_batched`: the metas describe live
        // tensors, batch `i` is in range, and `dst` is fresh and disjoint from the inputs.
        unsafe { crate::cpu::blocked_gemm::gemm(&p, threads) }
    }
    let (b, a): (&dyn Any, &dyn Any) = (&beta, &alpha);
    if let (Some(&b), Some(&a)) = (b.downcast_ref::<f32>(), a.downcast_ref::<f32>()) {
        return Some(go::<f32>(m, n, k, d, l, r, i, read_dst, b, a, threads));
    }
    if let (Some(&b), Some(&a)) = (b.downcast_ref::<f64>(), a.downcast_ref::<f64>()) {
        return Some(go::<f64>(m, n, k, d, l, r, i, read_dst, b, a, threads));
    }
    None
}
