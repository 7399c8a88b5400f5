//! Reducing scatters: `scatter(reduce=)`, `scatter_reduce`, `index_reduce`, `index_add`,
//! `index_copy`, `put`, and `_segment_reduce`.
//!
//! Every op here lowers to one kernel: a list of (destination, source element) pairs applied in
//! order to a contiguous copy of `self` with a [`ReduceOp`]. The pairs come from the index
//! tensors (scatter-style, index-along-a-dimension or flat), so each op only has to say where its
//! elements go.

use crate::cpu::num::{Elem, OpNum};
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::ops::gather::{check_index_shape, offsets};
use crate::scalar::Scalar;
use crate::shape::wrap_dim;
use crate::tensor::Tensor;

/// How scattered elements combine with what is already at their destination.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ReduceOp {
    /// Overwrite (plain scatter, `index_copy`, `put` without accumulation).
    Replace,
    /// Add (`sum`, scatter's `add`).
    Sum,
    /// Multiply (`prod`, scatter's `multiply`).
    Prod,
    /// Arithmetic mean of the contributions (and `self`, when included).
    Mean,
    /// Maximum, propagating NaN.
    Amax,
    /// Minimum, propagating NaN.
    Amin,
}

impl ReduceOp {
    /// Parses `scatter_reduce`'s / `index_reduce`'s `reduce` argument.
    pub fn parse(s: &str, op: &str) -> Result<ReduceOp> {
        Ok(match s {
            "sum" if op != "index_reduce" => ReduceOp::Sum,
            "prod" => ReduceOp::Prod,
            "mean" => ReduceOp::Mean,
            "amax" => ReduceOp::Amax,
            "amin" => ReduceOp::Amin,
            _ => {
                let allowed = if op == "index_reduce" {
                    "prod, mean, amax or amin"
                } else {
                    "sum, prod, mean, amax or amin"
                };
                return Err(Error::runtime(format!(
                    "{op}(): Expected reduce argument to be one of {allowed}, but got {s}."
                )));
            }
        })
    }

    /// Parses `scatter`'s legacy `reduce` argument (`add` or `multiply`).
    pub fn parse_scatter(s: &str) -> Result<ReduceOp> {
        match s {
            "add" => Ok(ReduceOp::Sum),
            "multiply" => Ok(ReduceOp::Prod),
            _ => Err(Error::runtime(format!(
                "reduce argument must be either add or multiply. Got {s}"
            ))),
        }
    }
}

/// The extreme values of an op type: the identities of `amax` and `amin`.
trait Extremes: OpNum {
    fn lowest() -> Self;
    fn highest() -> Self;
}

macro_rules! extremes {
    ($($t:ty: $lo:expr, $hi:expr;)*) => {
        $(impl Extremes for $t {
            fn lowest() -> Self { $lo }
            fn highest() -> Self { $hi }
        })*
    };
}

extremes! {
    bool: false, true;
    u8: u8::MIN, u8::MAX;
    i8: i8::MIN, i8::MAX;
    i16: i16::MIN, i16::MAX;
    i32: i32::MIN, i32::MAX;
    i64: i64::MIN, i64::MAX;
    u16: u16::MIN, u16::MAX;
    u32: u32::MIN, u32::MAX;
    u64: u64::MIN, u64::MAX;
    f32: f32::NEG_INFINITY, f32::INFINITY;
    f64: f64::NEG_INFINITY, f64::INFINITY;
}

fn identity<V: Extremes>(op: ReduceOp) -> V {
    match op {
        ReduceOp::Replace | ReduceOp::Sum | ReduceOp::Mean => V::zero(),
        ReduceOp::Prod => V::one(),
        ReduceOp::Amax => V::lowest(),
        ReduceOp::Amin => V::highest(),
    }
}

#[inline]
fn combine<V: OpNum>(op: ReduceOp, acc: V, x: V) -> V {
    match op {
        ReduceOp::Replace => x,
        ReduceOp::Sum | ReduceOp::Mean => acc.add(x),
        ReduceOp::Prod => acc.mul(x),
        ReduceOp::Amax => {
            if acc.is_nan() || x.is_nan() {
                if acc.is_nan() {
                    acc
                } else {
                    x
                }
            } else if x > acc {
                x
            } else {
                acc
            }
        }
        ReduceOp::Amin => {
            if acc.is_nan() || x.is_nan() {
                if acc.is_nan() {
                    acc
                } else {
                    x
                }
            } else if x < acc {
                x
            } else {
                acc
            }
        }
    }
}

/// `sum / count` as the mean reductions divide: true division for floats, floor division for
/// integers (`count` is positive).
fn mean_of<V: OpNum>(sum: V, count: i64, floating: bool) -> V {
    if floating {
        V::from_f64(sum.to_f64() / count as f64)
    } else {
        V::from_i64(sum.to_i64().div_euclid(count))
    }
}

/// Applies `src[k]` to `out[targets[k]]` for every `k`, in order.
fn apply_pairs<T: Elem>(
    out: &mut [T],
    targets: &[usize],
    src: &[T],
    op: ReduceOp,
    include_self: bool,
) where
    T::Op: Extremes,
{
    let floating = T::DTYPE.is_floating_point();
    let mut counts: Vec<i64> = Vec::new();
    if op == ReduceOp::Mean {
        counts = vec![1; out.len()];
    }
    if !include_self {
        for &t in targets {
            out[t] = T::from_op(identity::<T::Op>(op));
            if op == ReduceOp::Mean {
                counts[t] = 0;
            }
        }
    }
    for (&t, &s) in targets.iter().zip(src) {
        out[t] = T::from_op(combine(op, out[t].op(), s.op()));
        if op == ReduceOp::Mean {
            counts[t] += 1;
        }
    }
    if op == ReduceOp::Mean {
        // Untouched positions count 1 (themselves), so dividing everything is exact for them.
        for (o, &c) in out.iter_mut().zip(&counts) {
            *o = T::from_op(mean_of(o.op(), c.max(1), floating));
        }
    }
}

/// Runs [`apply_pairs`] on a contiguous copy of `base` with sources `src` (same dtype).
fn reduce_into_copy(
    base: &Tensor,
    targets: &[usize],
    src: &Tensor,
    op: ReduceOp,
    include_self: bool,
) -> Result<Tensor> {
    let dt = base.dtype();
    let sizes = base.sizes();
    dispatch_all!(dt, T => {
        let mut out = base.contiguous_vec::<T>()?;
        let s = src.cast_if_needed(dt)?.contiguous_vec::<T>()?;
        apply_pairs::<T>(&mut out, targets, &s, op, include_self);
        Tensor::from_vec(out, &sizes)
    })
}

fn row_major_strides(sizes: &[i64]) -> Vec<i64> {
    let mut st = vec![1i64; sizes.len()];
    for d in (0..sizes.len().saturating_sub(1)).rev() {
        st[d] = st[d + 1] * sizes[d + 1].max(1);
    }
    st
}

fn index_list(index: &Tensor, what: &str) -> Result<Vec<i64>> {
    match index.dtype() {
        DType::Int64 | DType::Int32 => index.contiguous_vec::<i64>(),
        other => Err(Error::runtime(format!(
            "{what}(): Expected dtype int64 for index, but got {}",
            other.scalar_type_name()
        ))),
    }
}

fn out_of_bounds(i: i64, d: usize, size: i64) -> Error {
    Error::new(
        ErrorKind::IndexError,
        format!("index {i} is out of bounds for dimension {d} with size {size}"),
    )
}

impl Tensor {
    /// Destinations (contiguous offsets into `self`) of a scatter along `d` by `index`.
    fn scatter_targets(&self, d: usize, index: &Tensor) -> Result<Vec<usize>> {
        let sizes = self.sizes();
        let nd = sizes.len();
        let out_strides = row_major_strides(&sizes);
        let idx = index_list(index, "scatter")?;
        let dim_size = if nd == 0 { 1 } else { sizes[d] };
        let mut strides = out_strides.clone();
        if nd > 0 {
            strides[d] = 0;
        }
        let isz = index.sizes();
        let base = offsets(&isz, if nd == 0 { &[] } else { &strides });
        let dstride = if nd == 0 { 0 } else { out_strides[d] };
        base.iter()
            .zip(&idx)
            .map(|(&o, &i)| {
                if i < 0 || i >= dim_size {
                    return Err(out_of_bounds(i, d, dim_size));
                }
                Ok((o + i * dstride) as usize)
            })
            .collect()
    }

    /// The leading `index`-shaped block of `src`, the elements a scatter reads.
    fn scatter_sources(src: &Tensor, index: &Tensor) -> Result<Tensor> {
        let isz = index.sizes();
        let mut s = src.clone();
        for (k, &n) in isz.iter().enumerate() {
            s = s.narrow(k as i64, 0, n)?;
        }
        Ok(s)
    }

    /// `scatter_reduce(dim, index, src, reduce, include_self)`.
    pub fn scatter_reduce(
        &self,
        dim: i64,
        index: &Tensor,
        src: &Tensor,
        op: ReduceOp,
        include_self: bool,
    ) -> Result<Tensor> {
        if index.dtype() != DType::Int64 {
            return Err(Error::runtime(
                "scatter_reduce(): Expected dtype int64 for index",
            ));
        }
        if src.dtype() != self.dtype() {
            return Err(Error::runtime(
                "scatter_reduce(): Expected self.dtype to be equal to src.dtype",
            ));
        }
        let d = wrap_dim(dim, self.dim())?;
        if index.numel() == 0 {
            return self.clone_tensor();
        }
        check_index_shape(
            &self.meta_snapshot(),
            &index.meta_snapshot(),
            d,
            Some(&src.meta_snapshot()),
        )?;
        let targets = self.scatter_targets(d, index)?;
        let s = Tensor::scatter_sources(src, index)?;
        reduce_into_copy(self, &targets, &s, op, include_self)
    }

    /// `scatter(dim, index, src, reduce=)` with `add` or `multiply`.
    pub fn scatter_src_reduce(
        &self,
        dim: i64,
        index: &Tensor,
        src: &Tensor,
        op: ReduceOp,
    ) -> Result<Tensor> {
        self.scatter_reduce(dim, index, src, op, true)
    }

    /// `scatter(dim, index, value, reduce=)` with `add` or `multiply`.
    pub fn scatter_value_reduce(
        &self,
        dim: i64,
        index: &Tensor,
        value: Scalar,
        op: ReduceOp,
    ) -> Result<Tensor> {
        let src = crate::ops::factory::full(&index.sizes(), value, Some(self.dtype()))?;
        self.scatter_reduce(dim, index, &src, op, true)
    }

    /// Destinations of the slices of `source` along `d` sent to `index[i]` (the `index_*`
    /// family): one per element of `source`, in row-major order.
    fn index_targets(
        &self,
        d: usize,
        index: &Tensor,
        source: &Tensor,
        what: &str,
    ) -> Result<Vec<usize>> {
        if index.dim() > 1 {
            return Err(Error::new(
                ErrorKind::IndexError,
                format!("{what}(): Index is supposed to be a vector"),
            ));
        }
        let idx = index_list(index, what)?;
        let sizes = self.sizes();
        let nd = sizes.len();
        let ssz = source.sizes();
        let n = idx.len() as i64;
        let src_dim = if source.dim() == 0 {
            1
        } else {
            ssz[d.min(ssz.len().saturating_sub(1))]
        };
        if source.dim() != 0 && nd != 0 && source.dim() != nd {
            return Err(Error::new(
                ErrorKind::IndexError,
                format!("{what}(): Source/destination tensor must have same number of dimensions"),
            ));
        }
        if src_dim != n {
            return Err(Error::runtime(format!(
                "{what}(): Number of indices ({n}) should be equal to source.size(dim) ({src_dim})"
            )));
        }
        for k in 0..nd.min(ssz.len()) {
            if k != d && ssz[k] != sizes[k] {
                return Err(Error::runtime(format!(
                    "{what}(): Source/destination tensor must have same slice shapes. Destination slice shape: {:?} at dimension {d} and source slice shape: {:?} at dimension 0.",
                    sizes.as_slice(),
                    ssz.as_slice()
                )));
            }
        }
        let dim_size = if nd == 0 { 1 } else { sizes[d] };
        for &i in &idx {
            if i < -dim_size || i >= dim_size {
                return Err(out_of_bounds(i, d, dim_size));
            }
        }
        let out_strides = row_major_strides(&sizes);
        let src_sizes: Vec<i64> = if source.dim() == 0 {
            vec![1; nd.max(1)]
        } else {
            ssz.to_vec()
        };
        let mut pos = vec![0i64; src_sizes.len()];
        let total: i64 = src_sizes.iter().product();
        let mut targets = Vec::with_capacity(total.max(0) as usize);
        for _ in 0..total {
            let mut off = 0i64;
            for (k, &p) in pos.iter().enumerate() {
                if nd == 0 {
                    break;
                }
                let c = if k == d {
                    idx[p as usize].rem_euclid(dim_size)
                } else {
                    p
                };
                off += c * out_strides[k];
            }
            targets.push(off as usize);
            for k in (0..pos.len()).rev() {
                pos[k] += 1;
                if pos[k] < src_sizes[k] {
                    break;
                }
                pos[k] = 0;
            }
        }
        Ok(targets)
    }

    fn index_family(
        &self,
        dim: i64,
        index: &Tensor,
        source: &Tensor,
        op: ReduceOp,
        include_self: bool,
        what: &str,
    ) -> Result<Tensor> {
        if source.dtype() != self.dtype() {
            return Err(Error::runtime(format!(
                "{what}(): self ({}) and source ({}) must have the same scalar type",
                self.dtype().scalar_type_name(),
                source.dtype().scalar_type_name()
            )));
        }
        let d = wrap_dim(dim, self.dim())?;
        let targets = self.index_targets(d, index, source, what)?;
        reduce_into_copy(self, &targets, source, op, include_self)
    }

    /// `index_reduce(dim, index, source, reduce, include_self)`.
    pub fn index_reduce(
        &self,
        dim: i64,
        index: &Tensor,
        source: &Tensor,
        op: ReduceOp,
        include_self: bool,
    ) -> Result<Tensor> {
        self.index_family(dim, index, source, op, include_self, "index_reduce")
    }

    /// `index_add(dim, index, source, alpha)`: `self` with `alpha * source[i]` added to slice
    /// `index[i]`.
    pub fn index_add(
        &self,
        dim: i64,
        index: &Tensor,
        source: &Tensor,
        alpha: Scalar,
    ) -> Result<Tensor> {
        let one =
            matches!(alpha, Scalar::Int(1) | Scalar::Bool(true)) || alpha == Scalar::Float(1.0);
        let src = if one {
            source.clone()
        } else {
            source.mul_scalar(alpha)?.to_dtype(source.dtype(), false)?
        };
        self.index_family(dim, index, &src, ReduceOp::Sum, true, "index_add")
    }

    /// `index_copy(dim, index, source)`: `self` with slice `index[i]` replaced by `source[i]`.
    pub fn index_copy(&self, dim: i64, index: &Tensor, source: &Tensor) -> Result<Tensor> {
        if index.dtype() != DType::Int64 {
            return Err(Error::runtime(format!(
                "index_copy_(): Expected a long tensor for index, but got {}",
                index.dtype().scalar_type_name()
            )));
        }
        self.index_family(dim, index, source, ReduceOp::Replace, true, "index_copy")
    }

    /// `put(index, source, accumulate)`: `self` (as if flattened) with `source` written (or
    /// added) at the flat positions `index`; negative positions count from the end.
    pub fn put(&self, index: &Tensor, source: &Tensor, accumulate: bool) -> Result<Tensor> {
        if index.dtype() != DType::Int64 {
            return Err(Error::runtime(format!(
                "put_(): Expected a long tensor for index, but got {}",
                index.dtype().scalar_type_name()
            )));
        }
        if source.dtype() != self.dtype() {
            return Err(Error::runtime(format!(
                "put_(): self and source expected to have the same dtype, but got self.dtype = {} and source.dtype = {}",
                self.dtype().scalar_type_name(),
                source.dtype().scalar_type_name()
            )));
        }
        if source.numel() != index.numel() {
            return Err(Error::runtime(format!(
                "put_(): Expected source and index to have the same number of elements, but got source.numel() = {}, index.numel() = {}",
                source.numel(),
                index.numel()
            )));
        }
        let n = self.numel() as i64;
        let targets = flat_targets(&index.contiguous_vec::<i64>()?, n)?;
        let op = if accumulate {
            ReduceOp::Sum
        } else {
            ReduceOp::Replace
        };
        reduce_into_copy(self, &targets, source, op, true)
    }

    /// `put_(index, source, accumulate)`: [`Tensor::put`] written into `self`.
    pub fn put_(&self, index: &Tensor, source: &Tensor, accumulate: bool) -> Result<()> {
        let r = self.put(index, source, accumulate)?;
        self.copy_(&r)
    }

    /// `_segment_reduce(reduce, lengths | offsets, axis, initial)`: reduces consecutive segments
    /// of `axis` whose lengths (or boundaries) are given per leading index.
    pub fn segment_reduce(
        &self,
        reduce: &str,
        lengths: Option<&Tensor>,
        offsets_t: Option<&Tensor>,
        axis: i64,
        initial: Option<Scalar>,
    ) -> Result<Tensor> {
        let op = match reduce {
            "sum" => ReduceOp::Sum,
            "prod" => ReduceOp::Prod,
            "mean" => ReduceOp::Mean,
            "max" => ReduceOp::Amax,
            "min" => ReduceOp::Amin,
            other => {
                return Err(Error::runtime(format!(
                    "reduce argument must be either sum, prod, mean, amax or amin, got {other}"
                )))
            }
        };
        let dt = self.dtype();
        if !dt.is_floating_point() {
            return Err(crate::cpu::dispatch::not_implemented(
                "_segment_reduce_cpu",
                dt,
            ));
        }
        let axis = wrap_dim(axis, self.dim())?;
        // Segment boundaries per leading index, as offsets.
        let (bounds, nseg, lead_shape) = match (lengths, offsets_t) {
            (Some(l), _) => {
                if l.dim() != axis + 1 {
                    return Err(Error::runtime(
                        "Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) when !unsafe.",
                    ));
                }
                let lv = l.contiguous_vec::<i64>()?;
                let ls = l.sizes();
                let nseg = ls[axis];
                let mut b =
                    Vec::with_capacity(lv.len() / nseg.max(1) as usize * (nseg as usize + 1));
                for row in lv.chunks(nseg.max(1) as usize) {
                    let mut acc = 0;
                    b.push(0);
                    for &x in row {
                        if x < 0 {
                            return Err(Error::runtime("lengths contains negative value!"));
                        }
                        acc += x;
                        b.push(acc);
                    }
                    if acc != self.sizes()[axis] {
                        return Err(Error::runtime(
                            "Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) when !unsafe.",
                        ));
                    }
                }
                (b, nseg, ls[..axis].to_vec())
            }
            (None, Some(o)) => {
                let ov = o.contiguous_vec::<i64>()?;
                let os = o.sizes();
                if o.dim() != axis + 1 {
                    return Err(Error::runtime(
                        "offsets must have one dimension more than axis",
                    ));
                }
                (ov, os[axis] - 1, os[..axis].to_vec())
            }
            (None, None) => {
                return Err(Error::runtime(
                    "segment_reduce(): Either lengths or offsets must be defined",
                ))
            }
        };
        let sizes = self.sizes();
        if lead_shape.as_slice() != &sizes[..axis] {
            return Err(Error::runtime(
                "segment_reduce(): lengths/offsets must match the leading dimensions of data",
            ));
        }
        let outer: i64 = sizes[..axis].iter().product();
        let inner: i64 = sizes[axis + 1..].iter().product();
        let len = sizes[axis];
        let mut out_sizes = sizes.to_vec();
        out_sizes[axis] = nseg;
        let data = self.contiguous_vec::<f64>()?;
        let stride = (nseg + 1) as usize;
        let mut out = vec![0f64; (outer * nseg * inner) as usize];
        for o in 0..outer as usize {
            let b = &bounds[o * stride..(o + 1) * stride];
            for s in 0..nseg as usize {
                let (lo, hi) = (b[s], b[s + 1]);
                if lo < 0 || hi > len || lo > hi {
                    return Err(Error::runtime("segment_reduce(): offsets out of range"));
                }
                for i in 0..inner as usize {
                    let mut acc = match initial {
                        Some(v) => v.to_f64(),
                        None => identity::<f64>(op),
                    };
                    for j in lo..hi {
                        let x = data[(o * len as usize + j as usize) * inner as usize + i];
                        acc = combine(op, acc, x);
                    }
                    if op == ReduceOp::Mean {
                        let n = hi - lo;
                        acc = if n > 0 {
                            acc / n as f64
                        } else if initial.is_some() {
                            acc
                        } else {
                            f64::NAN
                        };
                    }
                    out[(o * nseg as usize + s) * inner as usize + i] = acc;
                }
            }
        }
        Tensor::from_vec(out, &out_sizes)?.to_dtype(dt, false)
    }
}

/// Flat destinations of `put`, wrapping negative positions and checking bounds.
fn flat_targets(idx: &[i64], n: i64) -> Result<Vec<usize>> {
    idx.iter()
        .map(|&i| {
            if i < -n || i >= n {
                return Err(Error::new(
                    ErrorKind::IndexError,
                    format!("out of range: tried to access index {i} on a tensor of {n} elements."),
                ));
            }
            Ok(i.rem_euclid(n.max(1)) as usize)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: &[f32], s: &[i64]) -> Tensor {
        Tensor::from_vec(v.to_vec(), s).unwrap()
    }
    fn i(v: &[i64], s: &[i64]) -> Tensor {
        Tensor::from_vec(v.to_vec(), s).unwrap()
    }

    #[test]
    fn scatter_reduce_modes() {
        let base = t(&[1., 2., 3.], &[3]);
        let idx = i(&[0, 0, 2], &[3]);
        let src = t(&[5., 7., 9.], &[3]);
        let run = |op, inc| {
            base.scatter_reduce(0, &idx, &src, op, inc)
                .unwrap()
                .to_vec::<f32>()
        };
        assert_eq!(run(ReduceOp::Sum, true), vec![13., 2., 12.]);
        assert_eq!(run(ReduceOp::Sum, false), vec![12., 2., 9.]);
        assert_eq!(run(ReduceOp::Prod, true), vec![35., 2., 27.]);
        assert_eq!(run(ReduceOp::Mean, true), vec![13. / 3., 2., 6.]);
        assert_eq!(run(ReduceOp::Mean, false), vec![6., 2., 9.]);
        assert_eq!(run(ReduceOp::Amax, false), vec![7., 2., 9.]);
        assert_eq!(run(ReduceOp::Amin, true), vec![1., 2., 3.]);
        let bad = i(&[3], &[1]);
        assert!(base
            .scatter_reduce(0, &bad, &src, ReduceOp::Sum, true)
            .is_err());
    }

    #[test]
    fn integer_mean_floors() {
        let base = Tensor::from_vec(vec![1i64, 0], &[2]).unwrap();
        let idx = i(&[0, 0], &[2]);
        let src = Tensor::from_vec(vec![-4i64, 0], &[2]).unwrap();
        let r = base
            .scatter_reduce(0, &idx, &src, ReduceOp::Mean, true)
            .unwrap();
        assert_eq!(r.to_vec::<i64>(), vec![-1, 0]);
    }

    #[test]
    fn index_ops() {
        let base = t(&[0.; 6], &[3, 2]);
        let idx = i(&[2, 0], &[2]);
        let src = t(&[1., 2., 3., 4.], &[2, 2]);
        let r = base.index_add(0, &idx, &src, Scalar::Int(2)).unwrap();
        assert_eq!(r.to_vec::<f32>(), vec![6., 8., 0., 0., 2., 4.]);
        let r = base.index_copy(0, &idx, &src).unwrap();
        assert_eq!(r.to_vec::<f32>(), vec![3., 4., 0., 0., 1., 2.]);
        let r = base
            .index_reduce(0, &idx, &src, ReduceOp::Amax, false)
            .unwrap();
        assert_eq!(r.to_vec::<f32>(), vec![3., 4., 0., 0., 1., 2.]);
        let bad = i(&[2, 0, 1], &[3]);
        assert!(base.index_add(0, &bad, &src, Scalar::Int(1)).is_err());
    }

    #[test]
    fn put_and_segments() {
        let base = t(&[0.; 4], &[2, 2]);
        let r = base
            .put(&i(&[-1, 0, 0], &[3]), &t(&[1., 2., 3.], &[3]), true)
            .unwrap();
        assert_eq!(r.to_vec::<f32>(), vec![5., 0., 0., 1.]);
        assert!(base.put(&i(&[4], &[1]), &t(&[1.], &[1]), false).is_err());
        let d = t(&[1., 2., 3., 4., 5., 6.], &[6]);
        let l = i(&[2, 0, 3, 1], &[4]);
        let r = d.segment_reduce("max", Some(&l), None, 0, None).unwrap();
        assert_eq!(r.to_vec::<f32>(), vec![2., f32::NEG_INFINITY, 5., 6.]);
        let r = d
            .segment_reduce("mean", Some(&l), None, 0, Some(Scalar::Float(10.)))
            .unwrap();
        assert_eq!(r.to_vec::<f32>(), vec![6.5, 10., 22. / 3., 16.]);
    }
}
