//! Index-driven data movement: `index_select`, `gather`, `scatter`/`scatter_add`, `index_fill_`,
//! `masked_fill`, `masked_select`, `nonzero`.
//!
//! These ops address elements through index tensors, so they work on element offsets computed
//! from the strides and copy elements bytewise (dtype-agnostic), except the accumulating ones.

use smallvec::SmallVec;

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::scalar::Scalar;
use crate::shape::{broadcast_shapes, wrap_dim};
use crate::tensor::{Dims, Tensor, TensorMeta};

/// Element offsets (relative to the tensor's offset) of every position of `sizes` under
/// `strides`, in row-major order.
pub(crate) fn offsets(sizes: &[i64], strides: &[i64]) -> Vec<i64> {
    let n = crate::shape::numel(sizes);
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    let nd = sizes.len();
    let mut idx: SmallVec<[i64; 6]> = SmallVec::from_elem(0, nd);
    let mut off = 0i64;
    for _ in 0..n {
        out.push(off);
        for d in (0..nd).rev() {
            idx[d] += 1;
            off += strides[d];
            if idx[d] < sizes[d] {
                break;
            }
            off -= strides[d] * idx[d];
            idx[d] = 0;
        }
    }
    out
}

/// Copies one element of `size` bytes.
///
/// # Safety
/// Both pointers must address valid elements of `size` bytes.
pub(crate) unsafe fn copy_elem(dst: *mut u8, src: *const u8, size: usize) {
    // SAFETY: guaranteed by the caller; elements are aligned to their size.
    unsafe {
        match size {
            1 => *dst = *src,
            2 => *(dst as *mut u16) = *(src as *const u16),
            4 => *(dst as *mut u32) = *(src as *const u32),
            8 => *(dst as *mut u64) = *(src as *const u64),
            _ => *(dst as *mut [u64; 2]) = *(src as *const [u64; 2]),
        }
    }
}

fn index_values(index: &Tensor) -> Result<Vec<i64>> {
    index.contiguous_vec::<i64>()
}

fn check_index_dtype(index: &Tensor, msg: &str) -> Result<()> {
    match index.dtype() {
        DType::Int64 | DType::Int32 => Ok(()),
        _ => Err(Error::runtime(msg.to_string())),
    }
}

impl Tensor {
    /// `index_select(dim, index)`: the slices at `index` (a vector of int32/int64) along `dim`.
    pub fn index_select(&self, dim: i64, index: &Tensor) -> Result<Tensor> {
        check_index_dtype(
            index,
            "index_select(): Expected dtype int32 or int64 for index",
        )?;
        if index.dim() > 1 {
            return Err(Error::new(
                ErrorKind::IndexError,
                "index_select(): Index is supposed to be a vector",
            ));
        }
        let m = self.meta_snapshot();
        let nd = m.dim();
        let d = wrap_dim(dim, nd)?;
        let idx = index_values(index)?;
        let size = if nd == 0 { 1 } else { m.sizes[d] };
        if idx.iter().any(|&i| i < 0 || i >= size) {
            return Err(Error::new(
                ErrorKind::IndexError,
                "index out of range in self",
            ));
        }
        if nd == 0 {
            // A 0-d source gives a 0-d result whatever the index's rank (ATen's behaviour).
            return self.clone_tensor();
        }
        if self.is_quantized() {
            // A quantized result keeps its quantizer: slice and join through the view ops.
            let parts: Vec<Tensor> = idx
                .iter()
                .map(|&i| self.narrow(d as i64, i, 1))
                .collect::<Result<_>>()?;
            if !parts.is_empty() {
                return crate::ops::join::cat(&parts, d as i64);
            }
        }
        // Rows of `inner` contiguous elements: for every outer position, the selected rows in
        // index order.
        let src = self.contiguous()?;
        let sm = src.meta_snapshot();
        let outer: i64 = m.sizes[..d].iter().product();
        let inner: i64 = m.sizes[d + 1..].iter().product();
        let mut out_sizes = m.sizes.clone();
        out_sizes[d] = idx.len() as i64;
        let out = Tensor::zeros(&out_sizes, m.dtype)?;
        let row = (inner as usize) * m.dtype.size();
        if row == 0 || idx.is_empty() || outer == 0 {
            return Ok(out);
        }
        let (sp, dp) = (sm.data_ptr() as *const u8, out.meta().data_ptr());
        for o in 0..outer as usize {
            for (j, &i) in idx.iter().enumerate() {
                let from = (o * size as usize + i as usize) * row;
                let to = (o * idx.len() + j) * row;
                // SAFETY: `src` is contiguous with `outer * size * inner` elements and `i < size`
                // (checked above), so `from..from + row` lies in it; `out` is a fresh contiguous
                // tensor of `outer * idx.len() * inner` elements, so `to..to + row` lies in it;
                // they are distinct allocations.
                unsafe { std::ptr::copy_nonoverlapping(sp.add(from), dp.add(to), row) };
            }
        }
        Ok(out)
    }

    /// `gather(dim, index)`: `out[i][j] = self[index[i][j]][j]` (for `dim = 0`), with `index` of
    /// the same rank and no larger than `self` outside `dim`.
    pub fn gather(&self, dim: i64, index: &Tensor) -> Result<Tensor> {
        if index.numel() == 0 {
            // ATen returns early for an empty index, before checking its dtype.
            wrap_dim(dim, self.dim())?;
            return Tensor::zeros(&index.sizes(), self.dtype());
        }
        check_index_dtype(index, "gather(): Expected dtype int32/int64 for index")?;
        let m = self.meta_snapshot();
        let im = index.meta_snapshot();
        let nd = m.dim();
        let d = wrap_dim(dim, nd)?;
        check_index_shape(&m, &im, d, None)?;
        let idx = index_values(index)?;
        let out = Tensor::zeros(&im.sizes, m.dtype)?;
        let es = m.dtype.size();
        let dim_size = if nd == 0 { 1 } else { m.sizes[d] };
        let dim_stride = if nd == 0 { 0 } else { m.strides[d] };
        // Offsets of index positions in `self` with the `dim` coordinate dropped.
        let mut strides = m.strides.clone();
        if nd > 0 {
            strides[d] = 0;
        }
        let offs = offsets(&im.sizes, if nd == 0 { &[] } else { &strides });
        let src = m.data_ptr();
        let dst = out.meta().data_ptr();
        for (k, (&o, &i)) in offs.iter().zip(&idx).enumerate() {
            if i < 0 || i >= dim_size {
                return Err(Error::runtime(format!(
                    "index {i} is out of bounds for dimension {d} with size {dim_size}"
                )));
            }
            // SAFETY: `o + i * dim_stride` addresses an element of `self` (bounds checked above and
            // by the shape check); `k` is within the fresh output.
            unsafe {
                copy_elem(
                    dst.add(k * es),
                    src.offset(((o + i * dim_stride) * es as i64) as isize),
                    es,
                );
            }
        }
        Ok(out)
    }

    fn scatter_impl(
        &self,
        dim: i64,
        index: &Tensor,
        src: ScatterSrc<'_>,
        accumulate: bool,
    ) -> Result<()> {
        // ATen's scatter kernels take int32 indices too (torch 2.15).
        check_index_dtype(index, "scatter(): Expected dtype int64 for index")?;
        let m = self.meta_snapshot();
        crate::overlap::assert_no_internal_overlap(&m)?;
        let im = index.meta_snapshot();
        let nd = m.dim();
        let d = wrap_dim(dim, nd)?;
        let src_t = match src {
            ScatterSrc::Tensor(t) => {
                if t.dtype() != m.dtype {
                    return Err(Error::runtime(
                        "scatter(): Expected self.dtype to be equal to src.dtype",
                    ));
                }
                check_index_shape(&m, &im, d, Some(&t.meta_snapshot()))?;
                // Only the leading `index`-shaped block of src is read.
                let sm = t.meta_snapshot();
                let view = Tensor::from_meta(sm.with_geometry(
                    im.sizes.clone(),
                    sm.strides.clone(),
                    sm.offset,
                ));
                view.contiguous()?
            }
            ScatterSrc::Value(v) => {
                check_index_shape(&m, &im, d, None)?;
                crate::ops::factory::full(&im.sizes, v, Some(m.dtype))?
            }
        };
        let idx = index_values(index)?;
        let es = m.dtype.size();
        let dim_size = if nd == 0 { 1 } else { m.sizes[d] };
        let dim_stride = if nd == 0 { 0 } else { m.strides[d] };
        let mut strides = m.strides.clone();
        if nd > 0 {
            strides[d] = 0;
        }
        let offs = offsets(&im.sizes, if nd == 0 { &[] } else { &strides });
        for &i in &idx {
            if i < 0 || i >= dim_size {
                return Err(Error::runtime(format!(
                    "index {i} is out of bounds for dimension {d} with size {dim_size}"
                )));
            }
        }
        let dst = m.data_ptr();
        let sp = src_t.meta().data_ptr();
        if accumulate {
            dispatch_all_c!(m.dtype, T => {
                for (k, (&o, &i)) in offs.iter().zip(&idx).enumerate() {
                    // SAFETY: indices were bounds checked; `k` is within the contiguous source.
                    unsafe {
                        let p = dst.offset(((o + i * dim_stride) * es as i64) as isize) as *mut T;
                        let s = *(sp as *const T).add(k);
                        *p = add_elem(*p, s);
                    }
                }
            });
        } else {
            for (k, (&o, &i)) in offs.iter().zip(&idx).enumerate() {
                // SAFETY: indices were bounds checked; `k` is within the contiguous source.
                unsafe {
                    copy_elem(
                        dst.offset(((o + i * dim_stride) * es as i64) as isize),
                        sp.add(k * es),
                        es,
                    );
                }
            }
        }
        Ok(())
    }

    /// `scatter_(dim, index, src)`: `self[index[i][j]][j] = src[i][j]` (for `dim = 0`).
    pub fn scatter_(&self, dim: i64, index: &Tensor, src: &Tensor) -> Result<()> {
        self.scatter_impl(dim, index, ScatterSrc::Tensor(src), false)
    }

    /// `scatter_(dim, index, value)`.
    pub fn scatter_value_(&self, dim: i64, index: &Tensor, value: Scalar) -> Result<()> {
        self.scatter_impl(dim, index, ScatterSrc::Value(value), false)
    }

    /// `scatter_add_(dim, index, src)`: accumulates instead of overwriting.
    pub fn scatter_add_(&self, dim: i64, index: &Tensor, src: &Tensor) -> Result<()> {
        self.scatter_impl(dim, index, ScatterSrc::Tensor(src), true)
    }

    /// `scatter(dim, index, src)`: out-of-place.
    pub fn scatter(&self, dim: i64, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        let r = self.clone_tensor()?;
        r.scatter_(dim, index, src)?;
        Ok(r)
    }

    /// `scatter(dim, index, value)`: out-of-place.
    pub fn scatter_value(&self, dim: i64, index: &Tensor, value: Scalar) -> Result<Tensor> {
        let r = self.clone_tensor()?;
        r.scatter_value_(dim, index, value)?;
        Ok(r)
    }

    /// `scatter_add(dim, index, src)`: out-of-place.
    pub fn scatter_add(&self, dim: i64, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        let r = self.clone_tensor()?;
        r.scatter_add_(dim, index, src)?;
        Ok(r)
    }

    /// `index_fill_(dim, index, value)`: sets the slices at `index` along `dim`.
    pub fn index_fill_(&self, dim: i64, index: &Tensor, value: Scalar) -> Result<()> {
        if index.dtype() != DType::Int64 {
            return Err(Error::runtime(
                "index_fill_(): Expected dtype int64 for index.",
            ));
        }
        let nd = self.dim();
        let d = wrap_dim(dim, nd)?;
        let size = if nd == 0 { 1 } else { self.meta().sizes[d] };
        for i in index_values(index)? {
            if i < -size || i >= size {
                return Err(Error::new(
                    ErrorKind::IndexError,
                    format!("index {i} is out of bounds for dimension {d} with size {size}"),
                ));
            }
            if nd == 0 {
                self.fill_(value)?;
            } else {
                self.select(d as i64, i)?.fill_(value)?;
            }
        }
        Ok(())
    }

    /// `index_fill(dim, index, value)`: out-of-place.
    pub fn index_fill(&self, dim: i64, index: &Tensor, value: Scalar) -> Result<Tensor> {
        let r = self.clone_tensor()?;
        r.index_fill_(dim, index, value)?;
        Ok(r)
    }

    /// `masked_fill_(mask, value)`: sets the elements where the (broadcast) bool `mask` is true.
    pub fn masked_fill_(&self, mask: &Tensor, value: Scalar) -> Result<()> {
        check_mask(
            mask,
            "masked_fill_ only supports boolean masks, but got mask with dtype",
        )?;
        let m = self.meta_snapshot();
        crate::overlap::assert_no_internal_overlap(&m)?;
        let b = broadcast_shapes(&m.sizes, &mask.sizes())?;
        if b != m.sizes {
            return Err(Error::runtime(format!(
                "output with shape {:?} doesn't match the broadcast shape {:?}",
                m.sizes.as_slice(),
                b.as_slice()
            )));
        }
        let v = Tensor::scalar_tensor(value, m.dtype)?;
        // where(mask, v, self) written back into self.
        let r = crate::ops::ternary::where_(
            mask,
            crate::Operand::Tensor(&v),
            crate::Operand::Tensor(self),
        )?;
        self.copy_(&r)
    }

    /// `masked_fill_(mask, value)` with a 0-dim tensor value.
    pub fn masked_fill_tensor_(&self, mask: &Tensor, value: &Tensor) -> Result<()> {
        if value.dim() != 0 {
            return Err(Error::runtime(format!(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
                value.dim()
            )));
        }
        self.masked_fill_(mask, value.item()?)
    }

    /// `masked_fill(mask, value)`: out-of-place; the result has the broadcast shape.
    pub fn masked_fill(&self, mask: &Tensor, value: Scalar) -> Result<Tensor> {
        check_mask(
            mask,
            "masked_fill_ only supports boolean masks, but got mask with dtype",
        )?;
        let shape = broadcast_shapes(&self.sizes(), &mask.sizes())?;
        let r = self.expand(&shape, false)?.clone_tensor()?.contiguous()?;
        r.masked_fill_(mask, value)?;
        Ok(r)
    }

    /// `masked_fill(mask, value)` with a 0-dim tensor value.
    pub fn masked_fill_tensor(&self, mask: &Tensor, value: &Tensor) -> Result<Tensor> {
        if value.dim() != 0 {
            return Err(Error::runtime(format!(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
                value.dim()
            )));
        }
        self.masked_fill(mask, value.item()?)
    }

    /// `masked_select(mask)`: the elements where the broadcast `mask` is true, as a 1-d tensor.
    pub fn masked_select(&self, mask: &Tensor) -> Result<Tensor> {
        if mask.dtype() != DType::Bool {
            return Err(Error::runtime(
                "masked_select: expected BoolTensor for mask",
            ));
        }
        let shape = broadcast_shapes(&self.sizes(), &mask.sizes())?;
        let x = self.expand(&shape, false)?;
        let mk = mask.expand(&shape, false)?.contiguous_vec::<bool>()?;
        let xm = x.meta_snapshot();
        let offs = offsets(&xm.sizes, &xm.strides);
        let count = mk.iter().filter(|&&b| b).count();
        let out = Tensor::zeros(&[count as i64], xm.dtype)?;
        let es = xm.dtype.size();
        let src = xm.data_ptr();
        let dst = out.meta().data_ptr();
        let mut k = 0;
        for (&o, &b) in offs.iter().zip(&mk) {
            if b {
                // SAFETY: `o` is an element offset of `x`; `k < count`.
                unsafe { copy_elem(dst.add(k * es), src.offset((o * es as i64) as isize), es) };
                k += 1;
            }
        }
        Ok(out)
    }

    /// `nonzero()`: the indices of nonzero elements as an `[n, ndim]` int64 tensor.
    pub fn nonzero(&self) -> Result<Tensor> {
        let nd = self.dim();
        let flags = self.contiguous_vec::<bool>()?;
        let sizes = self.sizes();
        let mut out: Vec<i64> = Vec::new();
        let mut idx: SmallVec<[i64; 6]> = SmallVec::from_elem(0, nd);
        let mut n = 0i64;
        for &f in &flags {
            if f {
                out.extend_from_slice(&idx);
                n += 1;
            }
            for d in (0..nd).rev() {
                idx[d] += 1;
                if idx[d] < sizes[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        Tensor::from_vec(out, &[n, nd as i64])
    }

    /// `nonzero(as_tuple=True)`: one index vector per dimension.
    pub fn nonzero_tuple(&self) -> Result<Vec<Tensor>> {
        let nz = self.nonzero()?;
        if self.dim() == 0 {
            return Ok(vec![nz.reshape(&[-1])?]);
        }
        (0..self.dim() as i64)
            .map(|d| nz.select(1, d)?.contiguous())
            .collect()
    }
}

enum ScatterSrc<'a> {
    Tensor(&'a Tensor),
    Value(Scalar),
}

fn check_mask(mask: &Tensor, msg: &str) -> Result<()> {
    let dt = mask.dtype();
    if dt != DType::Bool {
        let cpp = dt.cpp_name();
        return Err(Error::runtime(format!("{msg} {cpp}")));
    }
    Ok(())
}

/// Checks `index` against `self` (and `src`) for gather/scatter.
pub(crate) fn check_index_shape(
    m: &TensorMeta,
    im: &TensorMeta,
    d: usize,
    src: Option<&TensorMeta>,
) -> Result<()> {
    let nd = m.dim().max(1);
    let ind = im.dim().max(1);
    if ind != nd {
        return Err(Error::runtime(
            "Index tensor must have the same number of dimensions as input tensor",
        ));
    }
    let sizes = |t: &TensorMeta| -> Dims {
        if t.dim() == 0 {
            SmallVec::from_elem(1, 1)
        } else {
            t.sizes.clone()
        }
    };
    let (ss, is) = (sizes(m), sizes(im));
    match src {
        None => {
            for k in 0..nd {
                if k != d && is[k] > ss[k] {
                    return Err(Error::runtime(format!(
                        "Size does not match at dimension {k} expected index {:?} to be no larger than self {:?} apart from dimension {d}",
                        im.sizes.as_slice(),
                        m.sizes.as_slice()
                    )));
                }
            }
        }
        Some(sm) => {
            let srs = sizes(sm);
            for k in 0..nd {
                if (k != d && is[k] > ss[k]) || srs.get(k).is_none_or(|&s| is[k] > s) {
                    return Err(Error::runtime(format!(
                        "Expected index {:?} to be no larger than self {:?} apart from dimension {d} and to be no larger size than src {:?}",
                        im.sizes.as_slice(),
                        m.sizes.as_slice(),
                        sm.sizes.as_slice()
                    )));
                }
            }
        }
    }
    Ok(())
}

#[inline(always)]
fn add_elem<T: crate::cpu::num::Elem>(a: T, b: T) -> T {
    use crate::cpu::num::OpNum;
    T::from_op(a.op().add(b.op()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ar(n: i64, s: &[i64]) -> Tensor {
        Tensor::from_vec((0..n).map(|i| i as f32).collect(), s).unwrap()
    }
    fn idx(v: &[i64], s: &[i64]) -> Tensor {
        Tensor::from_vec(v.to_vec(), s).unwrap()
    }

    #[test]
    fn select_and_gather() {
        let x = ar(12, &[3, 4]);
        assert_eq!(
            x.index_select(0, &idx(&[2, 0], &[2]))
                .unwrap()
                .to_vec::<f32>(),
            vec![8., 9., 10., 11., 0., 1., 2., 3.]
        );
        assert_eq!(
            x.index_select(1, &idx(&[3], &[1])).unwrap().to_vec::<f32>(),
            vec![3., 7., 11.]
        );
        // torch: index_select(0, [5]) -> IndexError "index out of range in self"
        assert_eq!(
            x.index_select(0, &idx(&[5], &[1])).unwrap_err().kind,
            ErrorKind::IndexError
        );
        let g = x.gather(1, &idx(&[0, 3, 1, 1], &[2, 2])).unwrap();
        assert_eq!(g.to_vec::<f32>(), vec![0., 3., 5., 5.]);
        assert_eq!(
            x.gather(1, &idx(&[5], &[1, 1])).unwrap_err().message,
            "index 5 is out of bounds for dimension 1 with size 4"
        );
        assert_eq!(
            x.gather(1, &Tensor::zeros(&[4, 1], DType::Int64).unwrap()).unwrap_err().message,
            "Size does not match at dimension 0 expected index [4, 1] to be no larger than self [3, 4] apart from dimension 1"
        );
        // A strided 3-D source along its middle dim, repeated and reordered indices, empty index.
        let y = ar(24, &[2, 3, 4]).transpose(0, 2).unwrap(); // [4, 3, 2]
        let sel = y.index_select(1, &idx(&[2, 2, 0], &[3])).unwrap();
        assert_eq!(sel.sizes().as_slice(), [4, 3, 2]);
        let want: Vec<f32> = (0..4)
            .flat_map(|a| {
                [2i64, 2, 0]
                    .into_iter()
                    .flat_map(move |b| (0..2).map(move |c| (c * 12 + b * 4 + a) as f32))
            })
            .collect();
        assert_eq!(sel.to_vec::<f32>(), want);
        let none = y.index_select(2, &idx(&[], &[0])).unwrap();
        assert_eq!(none.sizes().as_slice(), [4, 3, 0]);
        let ints = Tensor::from_vec(vec![1i64, 2, 3], &[3]).unwrap();
        assert_eq!(
            ints.index_select(0, &idx(&[2, 0], &[2]))
                .unwrap()
                .to_vec::<i64>(),
            vec![3, 1]
        );
        // Gather from a transposed view reads logical positions.
        let t = x.t().unwrap();
        assert_eq!(
            t.gather(0, &idx(&[1, 2], &[1, 2])).unwrap().to_vec::<f32>(),
            vec![1., 6.]
        );
    }

    #[test]
    fn scatter_variants() {
        let z = Tensor::zeros(&[3, 4], DType::Float32).unwrap();
        let s = z
            .scatter(
                1,
                &idx(&[1, 2], &[2, 1]),
                &Tensor::from_vec(vec![5f32, 6.], &[2, 1]).unwrap(),
            )
            .unwrap();
        assert_eq!(s.to_vec::<f32>()[1], 5.);
        assert_eq!(s.to_vec::<f32>()[6], 6.);
        // torch: zeros(3).scatter_add(0, [0,0,2], [1,2,3]) -> [3, 0, 3]
        let a = Tensor::zeros(&[3], DType::Float32).unwrap();
        let r = a
            .scatter_add(
                0,
                &idx(&[0, 0, 2], &[3]),
                &Tensor::from_vec(vec![1f32, 2., 3.], &[3]).unwrap(),
            )
            .unwrap();
        assert_eq!(r.to_vec::<f32>(), vec![3., 0., 3.]);
        let e = z
            .scatter(
                1,
                &idx(&[1], &[1, 1]),
                &Tensor::from_vec(vec![5i64], &[1, 1]).unwrap(),
            )
            .unwrap_err();
        assert_eq!(
            e.message,
            "scatter(): Expected self.dtype to be equal to src.dtype"
        );
        assert!(z
            .scatter_value(1, &idx(&[9], &[1, 1]), Scalar::Int(7))
            .is_err());
        let f = Tensor::zeros(&[2, 3], DType::Float32).unwrap();
        f.index_fill_(1, &idx(&[0, 2], &[2]), Scalar::Float(-1.0))
            .unwrap();
        assert_eq!(f.to_vec::<f32>(), vec![-1., 0., -1., -1., 0., -1.]);
    }

    #[test]
    fn masks() {
        let x = ar(4, &[4]);
        let m = Tensor::from_vec(vec![true, false], &[2, 1]).unwrap();
        // torch: zeros(4).masked_fill([[True],[False]], 1.) -> shape [2, 4]; in-place -> error
        let r = Tensor::zeros(&[4], DType::Float32)
            .unwrap()
            .masked_fill(&m, Scalar::Float(1.0))
            .unwrap();
        assert_eq!(r.sizes().as_slice(), &[2, 4]);
        assert_eq!(r.to_vec::<f32>(), vec![1., 1., 1., 1., 0., 0., 0., 0.]);
        assert!(x.masked_fill_(&m, Scalar::Float(1.0)).is_err());
        let u = Tensor::from_vec(vec![1u8, 0, 0, 1], &[4]).unwrap();
        assert_eq!(
            x.masked_fill(&u, Scalar::Float(1.0)).unwrap_err().message,
            "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"
        );
        let mk = Tensor::from_vec(vec![true, false, false, true], &[4]).unwrap();
        assert_eq!(x.masked_select(&mk).unwrap().to_vec::<f32>(), vec![0., 3.]);
        let nz = ar(4, &[2, 2]).nonzero().unwrap();
        assert_eq!(nz.sizes().as_slice(), &[3, 2]);
        assert_eq!(nz.to_vec::<i64>(), vec![0, 1, 1, 0, 1, 1]);
        let z0 = Tensor::scalar_tensor(Scalar::Int(3), DType::Int64)
            .unwrap()
            .nonzero()
            .unwrap();
        assert_eq!(z0.sizes().as_slice(), &[1, 0]);
        // int tensor filled with a float value truncates: torch gives [2, 0]
        let li = Tensor::zeros(&[2], DType::Int64).unwrap();
        let mk2 = Tensor::from_vec(vec![true, false], &[2]).unwrap();
        assert_eq!(
            li.masked_fill(&mk2, Scalar::Float(2.7))
                .unwrap()
                .to_vec::<i64>(),
            vec![2, 0]
        );
    }
}
