//! Elementwise drivers: promotion, broadcasting, output allocation or in-place/`out=` checks,
//! then a dtype-dispatched loop over the [`IterSpace`](crate::iter::IterSpace).

use smallvec::SmallVec;

use crate::compute::Load;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::float::Float;
use crate::iter::{IterSpace, SendPtr};
use crate::promotion::{can_cast, cast_error, Operand};
use crate::shape::broadcast_shapes;
use crate::tensor::{Dims, Tensor};
use crate::{dispatch_all, dispatch_compute};

/// A binary kernel over the compute types.
pub trait BinaryKernel: Sync {
    /// Floating inputs (f32 for half types).
    fn float<F: Float>(&self, a: F, b: F) -> F;
    /// Integer inputs (computed in i64, wrapped on store).
    fn int(&self, a: i64, b: i64) -> i64;
    /// Bool inputs.
    fn boolean(&self, a: bool, b: bool) -> bool {
        self.int(a as i64, b as i64) != 0
    }
}

/// A comparison-like binary kernel producing bools.
pub trait PredicateKernel: Sync {
    fn float<F: Float>(&self, a: F, b: F) -> bool;
    fn int(&self, a: i64, b: i64) -> bool;
    fn boolean(&self, a: bool, b: bool) -> bool {
        self.int(a as i64, b as i64)
    }
}

/// A unary kernel.
pub trait UnaryKernel: Sync {
    fn float<F: Float>(&self, x: F) -> F;
    /// Integer inputs; by default computed through f64.
    fn int(&self, x: i64) -> i64 {
        self.float(x as f64) as i64
    }
    /// Bool inputs; by default through `int`.
    fn boolean(&self, x: bool) -> bool {
        self.int(x as i64) != 0
    }
}

/// A unary predicate (`isnan`, ...).
pub trait UnaryPredicate: Sync {
    fn float<F: Float>(&self, x: F) -> bool;
    fn int(&self, x: i64) -> bool;
    fn boolean(&self, x: bool) -> bool {
        self.int(x as i64)
    }
}

/// Typed pointer to element 0 of a tensor.
pub fn data_ptr<T>(t: &Tensor) -> SendPtr<T> {
    let m = t.meta();
    // SAFETY: the offset is inside the storage (checked when the view was made).
    SendPtr(unsafe { (m.storage.as_mut_ptr() as *mut T).add(m.offset) })
}

/// Strides of `t` broadcast to `shape` (0 in broadcast dimensions).
pub fn broadcast_strides(t: &Tensor, shape: &[i64]) -> Result<Dims> {
    let m = t.meta();
    let nd = shape.len();
    if m.sizes.len() > nd {
        return Err(Error::runtime(format!(
            "cannot broadcast tensor of shape {:?} to {:?}",
            m.sizes.as_slice(),
            shape
        )));
    }
    let lead = nd - m.sizes.len();
    let mut st: Dims = SmallVec::from_elem(0, nd);
    for d in 0..m.sizes.len() {
        let (s, target) = (m.sizes[d], shape[lead + d]);
        if s == target {
            st[lead + d] = if s == 1 { 0 } else { m.strides[d] };
        } else if s == 1 {
            st[lead + d] = 0;
        } else {
            return Err(Error::runtime(format!(
                "The expanded size of the tensor ({target}) must match the existing size ({s}) at non-singleton dimension {}.  Target sizes: {:?}.  Tensor sizes: {:?}",
                lead + d,
                shape,
                m.sizes.as_slice()
            )));
        }
    }
    Ok(st)
}

/// Converts an operand to a tensor of `dtype` (scalars become 0-dim tensors).
pub(crate) fn operand_tensor(op: &Operand<'_>, dtype: DType) -> Result<Tensor> {
    match op {
        Operand::Tensor(t) => {
            if t.dtype() == dtype {
                Ok((*t).clone())
            } else {
                t.to_dtype(dtype)
            }
        }
        Operand::Scalar(s) => Tensor::scalar_tensor(*s, dtype),
    }
}

/// Shape of operands broadcast together.
pub(crate) fn broadcast_all(ops: &[&Tensor]) -> Result<Dims> {
    let mut shape: Dims = SmallVec::new();
    for t in ops {
        shape = broadcast_shapes(&shape, &t.sizes())?;
    }
    Ok(shape)
}

// ---------------------------------------------------------------------------------------------
// Raw loops

/// # Safety
/// Pointers and strides must describe valid elements for every index of `space`.
pub unsafe fn loop2<A: Copy, O: Copy>(
    space: &IterSpace<2>,
    o: SendPtr<O>,
    a: SendPtr<A>,
    f: impl Fn(A) -> O + Sync,
) {
    space.par_for_each(|[oo, ao], n, [so, sa]| {
        // SAFETY: the iteration space only produces in-bounds offsets (caller contract).
        unsafe {
            let (po, pa) = (o.at(oo), a.at(ao));
            if so == 1 && sa == 1 {
                for i in 0..n {
                    *po.add(i) = f(*pa.add(i));
                }
            } else {
                for i in 0..n as isize {
                    *po.offset(i * so) = f(*pa.offset(i * sa));
                }
            }
        }
    });
}

/// # Safety
/// Pointers and strides must describe valid elements for every index of `space`.
pub unsafe fn loop3<A: Copy, B: Copy, O: Copy>(
    space: &IterSpace<3>,
    o: SendPtr<O>,
    a: SendPtr<A>,
    b: SendPtr<B>,
    f: impl Fn(A, B) -> O + Sync,
) {
    space.par_for_each(|[oo, ao, bo], n, [so, sa, sb]| {
        // SAFETY: the iteration space only produces in-bounds offsets (caller contract).
        unsafe {
            let (po, pa, pb) = (o.at(oo), a.at(ao), b.at(bo));
            if so == 1 && sa == 1 && sb == 1 {
                for i in 0..n {
                    *po.add(i) = f(*pa.add(i), *pb.add(i));
                }
            } else if so == 1 && sa == 1 && sb == 0 {
                let y = *pb;
                for i in 0..n {
                    *po.add(i) = f(*pa.add(i), y);
                }
            } else {
                for i in 0..n as isize {
                    *po.offset(i * so) = f(*pa.offset(i * sa), *pb.offset(i * sb));
                }
            }
        }
    });
}

/// # Safety
/// Pointers and strides must describe valid elements for every index of `space`.
pub unsafe fn loop4<A: Copy, B: Copy, C: Copy, O: Copy>(
    space: &IterSpace<4>,
    o: SendPtr<O>,
    a: SendPtr<A>,
    b: SendPtr<B>,
    c: SendPtr<C>,
    f: impl Fn(A, B, C) -> O + Sync,
) {
    space.par_for_each(|[oo, ao, bo, co], n, [so, sa, sb, sc]| {
        // SAFETY: the iteration space only produces in-bounds offsets (caller contract).
        unsafe {
            let (po, pa, pb, pc) = (o.at(oo), a.at(ao), b.at(bo), c.at(co));
            for i in 0..n as isize {
                *po.offset(i * so) = f(*pa.offset(i * sa), *pb.offset(i * sb), *pc.offset(i * sc));
            }
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Overlap checks (PyTorch's `assert_no_internal_overlap` / `assert_no_partial_overlap`)

fn is_non_overlapping_and_dense(t: &Tensor) -> bool {
    let m = t.meta();
    let mut dims: Vec<(i64, i64)> = m
        .sizes
        .iter()
        .copied()
        .zip(m.strides.iter().copied())
        .filter(|d| d.0 != 1)
        .collect();
    dims.sort_by_key(|d| d.1);
    let mut expected = 1;
    for (size, stride) in dims {
        if stride != expected {
            return false;
        }
        expected *= size;
    }
    true
}

/// Refuses writing to a tensor where several elements share memory (an expanded tensor).
pub(crate) fn check_no_internal_overlap(out: &Tensor) -> Result<()> {
    if is_non_overlapping_and_dense(out) {
        return Ok(());
    }
    let m = out.meta();
    if m.sizes
        .iter()
        .zip(&m.strides)
        .any(|(&s, &st)| s > 1 && st == 0)
    {
        return Err(Error::runtime(
            "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.",
        ));
    }
    Ok(())
}

/// Refuses an input that partially overlaps the output (full overlap is allowed).
pub(crate) fn check_no_partial_overlap(out: &Tensor, input: &Tensor) -> Result<()> {
    if Tensor::is_same(out, input) {
        return Ok(());
    }
    let (a, b) = (out.meta(), input.meta());
    if !crate::Storage::ptr_eq(&a.storage, &b.storage) {
        return Ok(());
    }
    drop((a, b));
    if !is_non_overlapping_and_dense(out) || !is_non_overlapping_and_dense(input) {
        return Ok(());
    }
    let (a, b) = (out.meta(), input.meta());
    let span = |m: &crate::TensorMeta| {
        let n: i64 = m.sizes.iter().product();
        let start = m.offset as i64 * m.dtype.size() as i64;
        (start, start + n * m.dtype.size() as i64)
    };
    let ((s1, e1), (s2, e2)) = (span(&a), span(&b));
    if s1 < e2 && s2 < e1 {
        if s1 == s2 && e1 == e2 && a.strides == b.strides && a.dtype.size() == b.dtype.size() {
            return Ok(());
        }
        return Err(Error::runtime(
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.",
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Drivers

/// Where an elementwise result goes.
pub enum Dest<'a> {
    /// A new contiguous tensor.
    New,
    /// An existing tensor (in-place ops and `out=`): resized when empty or of the wrong shape,
    /// and the result cast to its dtype when allowed.
    Into(&'a Tensor),
}

/// Prepares the output for `shape`/`dtype` (the result dtype) and returns it plus whether the
/// computation can write into it directly (same dtype).
fn output_for(
    dest: &Dest<'_>,
    shape: &[i64],
    dtype: DType,
    inputs: &[&Tensor],
) -> Result<(Tensor, bool)> {
    match dest {
        Dest::New => Ok((Tensor::empty(shape, dtype)?, true)),
        Dest::Into(out) => {
            if !can_cast(dtype, out.dtype()) {
                return Err(cast_error(dtype, out.dtype()));
            }
            if out.sizes().as_slice() != shape {
                if out.numel() == 0 || inputs.iter().all(|i| !Tensor::is_same(i, out)) {
                    out.resize_(shape)?;
                } else {
                    return Err(Error::runtime(format!(
                        "output with shape {:?} doesn't match the broadcast shape {:?}",
                        out.sizes().as_slice(),
                        shape
                    )));
                }
            }
            check_no_internal_overlap(out)?;
            for i in inputs {
                check_no_partial_overlap(out, i)?;
            }
            Ok(((*out).clone(), out.dtype() == dtype))
        }
    }
}

/// Runs a binary arithmetic kernel with result dtype `dtype` (inputs are converted to it).
pub fn binary<K: BinaryKernel>(
    a: Operand<'_>,
    b: Operand<'_>,
    dtype: DType,
    k: &K,
    dest: Dest<'_>,
) -> Result<Tensor> {
    let (ta, tb) = (operand_tensor(&a, dtype)?, operand_tensor(&b, dtype)?);
    let shape = broadcast_all(&[&ta, &tb])?;
    let orig: Vec<&Tensor> = [&a, &b]
        .iter()
        .filter_map(|o| {
            if let Operand::Tensor(t) = o {
                Some(*t)
            } else {
                None
            }
        })
        .collect();
    let (out, direct) = output_for(&dest, &shape, dtype, &orig)?;
    let target = if direct {
        out.clone()
    } else {
        Tensor::empty(&shape, dtype)?
    };
    let (sa, sb) = (
        broadcast_strides(&ta, &shape)?,
        broadcast_strides(&tb, &shape)?,
    );
    let so = target.strides();
    let space = IterSpace::new(&shape, [&so, &sa, &sb]);
    dispatch_compute!(dtype, T, C =>
        float: unsafe {
            // SAFETY: all three tensors cover `shape` with these strides.
            loop3::<T, T, T>(&space, data_ptr(&target), data_ptr(&ta), data_ptr(&tb),
                |x, y| <T as Load<C>>::store(k.float::<C>(x.load(), y.load())))
        },
        int: unsafe {
            // SAFETY: as above.
            loop3::<T, T, T>(&space, data_ptr(&target), data_ptr(&ta), data_ptr(&tb),
                |x, y| <T as Load<C>>::store(k.int(x.load(), y.load())))
        },
        bool: unsafe {
            // SAFETY: as above.
            loop3::<T, T, T>(&space, data_ptr(&target), data_ptr(&ta), data_ptr(&tb), |x, y| k.boolean(x, y))
        }
    );
    if !direct {
        out.copy_(&target)?;
    }
    Ok(out)
}

/// Runs a comparison-like kernel: inputs are compared in `compute` dtype, the result is bool.
pub fn predicate<K: PredicateKernel>(
    a: Operand<'_>,
    b: Operand<'_>,
    compute: DType,
    k: &K,
    dest: Dest<'_>,
) -> Result<Tensor> {
    let (ta, tb) = (operand_tensor(&a, compute)?, operand_tensor(&b, compute)?);
    let shape = broadcast_all(&[&ta, &tb])?;
    let orig: Vec<&Tensor> = [&a, &b]
        .iter()
        .filter_map(|o| {
            if let Operand::Tensor(t) = o {
                Some(*t)
            } else {
                None
            }
        })
        .collect();
    let (out, direct) = output_for(&dest, &shape, DType::Bool, &orig)?;
    let target = if direct {
        out.clone()
    } else {
        Tensor::empty(&shape, DType::Bool)?
    };
    let (sa, sb) = (
        broadcast_strides(&ta, &shape)?,
        broadcast_strides(&tb, &shape)?,
    );
    let so = target.strides();
    let space = IterSpace::new(&shape, [&so, &sa, &sb]);
    dispatch_compute!(compute, T, C =>
        float: unsafe {
            // SAFETY: all three tensors cover `shape` with these strides.
            loop3::<T, T, bool>(&space, data_ptr(&target), data_ptr(&ta), data_ptr(&tb),
                |x, y| k.float::<C>(x.load(), y.load()))
        },
        int: unsafe {
            // SAFETY: as above.
            loop3::<T, T, bool>(&space, data_ptr(&target), data_ptr(&ta), data_ptr(&tb),
                |x, y| k.int(x.load(), y.load()))
        },
        bool: unsafe {
            // SAFETY: as above.
            loop3::<T, T, bool>(&space, data_ptr(&target), data_ptr(&ta), data_ptr(&tb), |x, y| k.boolean(x, y))
        }
    );
    if !direct {
        out.copy_(&target)?;
    }
    Ok(out)
}

/// Runs a unary kernel producing `dtype` from the input converted to `dtype`.
pub fn unary<K: UnaryKernel>(x: &Tensor, dtype: DType, k: &K, dest: Dest<'_>) -> Result<Tensor> {
    let tx = operand_tensor(&Operand::Tensor(x), dtype)?;
    let shape = tx.sizes();
    let (out, direct) = output_for(&dest, &shape, dtype, &[x])?;
    let target = if direct {
        out.clone()
    } else {
        Tensor::empty(&shape, dtype)?
    };
    let (so, sx) = (target.strides(), tx.strides());
    let space = IterSpace::new(&shape, [&so, &sx]);
    dispatch_compute!(dtype, T, C =>
        float: unsafe {
            // SAFETY: both tensors cover `shape` with these strides.
            loop2::<T, T>(&space, data_ptr(&target), data_ptr(&tx), |v| <T as Load<C>>::store(k.float::<C>(v.load())))
        },
        int: unsafe {
            // SAFETY: as above.
            loop2::<T, T>(&space, data_ptr(&target), data_ptr(&tx), |v| <T as Load<C>>::store(k.int(v.load())))
        },
        bool: unsafe {
            // SAFETY: as above.
            loop2::<T, T>(&space, data_ptr(&target), data_ptr(&tx), |v| k.boolean(v))
        }
    );
    if !direct {
        out.copy_(&target)?;
    }
    Ok(out)
}

/// Runs a unary predicate (bool result) on `x` as it is.
pub fn unary_predicate<K: UnaryPredicate>(x: &Tensor, k: &K) -> Result<Tensor> {
    let shape = x.sizes();
    let out = Tensor::empty(&shape, DType::Bool)?;
    let (so, sx) = (out.strides(), x.strides());
    let space = IterSpace::new(&shape, [&so, &sx]);
    dispatch_compute!(x.dtype(), T, C =>
        float: unsafe {
            // SAFETY: both tensors cover `shape` with these strides.
            loop2::<T, bool>(&space, data_ptr(&out), data_ptr(x), |v| k.float::<C>(v.load()))
        },
        int: unsafe {
            // SAFETY: as above.
            loop2::<T, bool>(&space, data_ptr(&out), data_ptr(x), |v| k.int(v.load()))
        },
        bool: unsafe {
            // SAFETY: as above.
            loop2::<T, bool>(&space, data_ptr(&out), data_ptr(x), |v| k.boolean(v))
        }
    );
    Ok(out)
}

/// Elementwise copy with dtype conversion from `src` (broadcast to `dst`'s shape) into `dst`.
pub(crate) fn copy_into(dst: &Tensor, src: &Tensor) -> Result<()> {
    let shape = dst.sizes();
    let ss = broadcast_strides(src, &shape)?;
    let sd = dst.strides();
    let space = IterSpace::new(&shape, [&sd, &ss]);
    let (dt, st) = (dst.dtype(), src.dtype());
    if dt == st {
        dispatch_all!(dt, T => unsafe {
            // SAFETY: both tensors cover `shape` with these strides.
            loop2::<T, T>(&space, data_ptr(dst), data_ptr(src), |v| v)
        });
        return Ok(());
    }
    use crate::element::Element;
    let via_int = !st.is_floating_point() && !dt.is_floating_point();
    dispatch_all!(st, S => dispatch_all!(dt, D => unsafe {
        // SAFETY: both tensors cover `shape` with these strides.
        if dt == DType::Bool {
            loop2::<S, D>(&space, data_ptr(dst), data_ptr(src), |v: S| D::from_i64((v.to_f64() != 0.0) as i64))
        } else if via_int {
            loop2::<S, D>(&space, data_ptr(dst), data_ptr(src), |v: S| D::from_i64(v.to_i64()))
        } else {
            loop2::<S, D>(&space, data_ptr(dst), data_ptr(src), |v: S| D::from_f64(v.to_f64()))
        }
    }));
    Ok(())
}

/// `torch.where(cond, a, b)` core: all operands already of the result dtype and broadcastable.
pub fn select3(cond: &Tensor, a: &Tensor, b: &Tensor, dtype: DType) -> Result<Tensor> {
    let shape = broadcast_all(&[cond, a, b])?;
    let out = Tensor::empty(&shape, dtype)?;
    let (so, sc, sa, sb) = (
        out.strides(),
        broadcast_strides(cond, &shape)?,
        broadcast_strides(a, &shape)?,
        broadcast_strides(b, &shape)?,
    );
    let space = IterSpace::new(&shape, [&so, &sc, &sa, &sb]);
    dispatch_all!(dtype, T => unsafe {
        // SAFETY: all tensors cover `shape` with these strides.
        loop4::<bool, T, T, T>(&space, data_ptr(&out), data_ptr(cond), data_ptr(a), data_ptr(b), |c, x, y| if c { x } else { y })
    });
    Ok(out)
}
