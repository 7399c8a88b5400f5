//! Indexing: Python's `x[...]` and `x[...] = v`, and ATen's advanced indexing (`aten::index`,
//! `aten::index_put_`).
//!
//! Basic indices (ints, slices, `None`, `...`) produce views. Tensor indices (integer or bool)
//! select elements and produce copies; their positions follow NumPy's rule: when the tensor
//! indices are adjacent the indexed dimensions are replaced in place, otherwise the broadcast
//! index dimensions come first.

use smallvec::SmallVec;

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::ops::gather::{copy_elem, offsets};
use crate::shape::broadcast_shapes;
use crate::tensor::{Dims, Tensor};

/// One element of a Python subscript.
#[derive(Clone, Debug)]
pub enum TensorIndex {
    /// `x[i]`: selects (removes the dimension).
    Int(i64),
    /// `x[start:stop:step]`.
    Slice {
        start: Option<i64>,
        stop: Option<i64>,
        step: i64,
    },
    /// `x[None]`: inserts a size-1 dimension.
    None,
    /// `x[...]`.
    Ellipsis,
    /// `x[True]` / `x[False]`: a new dimension of size 1 or 0.
    Bool(bool),
    /// An integer or bool tensor index.
    Tensor(Tensor),
}

impl TensorIndex {
    /// The full slice `:`.
    pub fn full() -> TensorIndex {
        TensorIndex::Slice {
            start: None,
            stop: None,
            step: 1,
        }
    }
}

fn index_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::IndexError, msg)
}

/// Applies the basic indices, recording tensor indices by the dimension of the result they
/// apply to. Returns the view and the (possibly sparse) tensor index list.
fn apply_slicing(x: &Tensor, indices: &[TensorIndex]) -> Result<(Tensor, Vec<Option<Tensor>>)> {
    let ndim = x.dim() as i64;
    let specified: i64 = indices
        .iter()
        .map(|i| match i {
            TensorIndex::Int(_) | TensorIndex::Slice { .. } => 1,
            TensorIndex::Tensor(t) if matches!(t.dtype(), DType::Bool | DType::UInt8) => {
                t.dim() as i64
            }
            TensorIndex::Tensor(_) => 1,
            _ => 0,
        })
        .sum();
    if specified > ndim {
        return Err(index_error(format!(
            "too many indices for tensor of dimension {ndim}"
        )));
    }
    let mut result = x.clone();
    let mut tensor_indices: Vec<Option<Tensor>> = Vec::new();
    let mut dim: i64 = 0;
    let record = |list: &mut Vec<Option<Tensor>>, dim: i64, t: Tensor| {
        while (list.len() as i64) < dim {
            list.push(None);
        }
        list.push(Some(t));
    };
    for idx in indices {
        match idx {
            TensorIndex::Int(i) => {
                let size = result.meta().sizes.get(dim as usize).copied().unwrap_or(0);
                if *i < -size || *i >= size {
                    return Err(index_error(format!(
                        "index {i} is out of bounds for dimension {dim} with size {size}"
                    )));
                }
                result = result.select(dim, *i)?;
            }
            TensorIndex::Slice { start, stop, step } => {
                if *step == 0 {
                    return Err(Error::new(
                        ErrorKind::ValueError,
                        "slice step cannot be zero",
                    ));
                }
                result = result.slice(dim, *start, *stop, *step)?;
                dim += 1;
            }
            TensorIndex::None => {
                result = result.unsqueeze(dim)?;
                dim += 1;
            }
            TensorIndex::Ellipsis => {
                dim += ndim - specified;
            }
            TensorIndex::Bool(b) => {
                result = result.unsqueeze(dim)?;
                let t = if *b {
                    Tensor::zeros(&[1], DType::Int64)?
                } else {
                    Tensor::zeros(&[0], DType::Int64)?
                };
                record(&mut tensor_indices, dim, t);
                dim += 1;
            }
            TensorIndex::Tensor(t) => {
                record(&mut tensor_indices, dim, t.clone());
                if matches!(t.dtype(), DType::Bool | DType::UInt8) {
                    dim += t.dim() as i64;
                } else {
                    dim += 1;
                }
            }
        }
    }
    Ok((result, tensor_indices))
}

/// The element layout of an advanced-indexing operation.
struct AdvancedIndex {
    /// Shape of the result.
    result_shape: Dims,
    /// Offsets into `self` of each broadcast index position (over the indexed dimensions).
    index_offsets: Vec<i64>,
    /// Offsets of the non-indexed dimensions before (pre) and after (post) the index block; when
    /// the indices are not adjacent, all non-indexed dimensions are in `post` and the index
    /// dimensions come first in the result.
    pre_offsets: Vec<i64>,
    post_offsets: Vec<i64>,
}

/// Expands bool masks to integer indices, broadcasts the indices and computes offsets.
fn make_advanced(x: &Tensor, indices: &[Option<Tensor>]) -> Result<AdvancedIndex> {
    let m = x.meta_snapshot();
    let nd = m.dim();
    // Expand masks.
    let mut expanded: Vec<Option<Tensor>> = Vec::new();
    for idx in indices {
        match idx {
            Some(t) if matches!(t.dtype(), DType::Bool | DType::UInt8) => {
                let start = expanded.len();
                let ts = t.sizes();
                for (j, &s) in ts.iter().enumerate() {
                    let d = start + j;
                    if d >= nd || m.sizes[d] != s {
                        return Err(index_error(format!(
                            "The shape of the mask {:?} at index {j} does not match the shape of the indexed tensor {:?} at index {d}",
                            ts.as_slice(),
                            m.sizes.as_slice()
                        )));
                    }
                }
                let parts = t.nonzero_tuple()?;
                if t.dim() == 0 {
                    // A 0-dim mask adds no dimension (handled by the caller's unsqueeze).
                    expanded.push(Some(parts[0].clone()));
                } else {
                    expanded.extend(parts.into_iter().map(Some));
                }
            }
            Some(t) => {
                if !matches!(
                    t.dtype(),
                    DType::Int64 | DType::Int32 | DType::Int16 | DType::Int8
                ) {
                    return Err(index_error(
                        "tensors used as indices must be long, int, byte or bool tensors",
                    ));
                }
                expanded.push(Some(t.clone()));
            }
            None => expanded.push(None),
        }
    }
    if expanded.len() > nd {
        return Err(index_error(format!(
            "too many indices for tensor of dimension {nd} (got {})",
            expanded.len()
        )));
    }
    expanded.resize(nd, None);
    let defined: Vec<usize> = (0..nd).filter(|&d| expanded[d].is_some()).collect();
    // Broadcast index shapes.
    let mut bshape: Dims = SmallVec::new();
    for &d in &defined {
        let s = expanded[d].as_ref().map(|t| t.sizes()).unwrap_or_default();
        bshape = broadcast_shapes(&bshape, &s).map_err(|_| {
            let shapes: Vec<String> = defined
                .iter()
                .map(|&k| {
                    format!(
                        "{:?}",
                        expanded[k]
                            .as_ref()
                            .map(|t| t.sizes().to_vec())
                            .unwrap_or_default()
                    )
                })
                .collect();
            index_error(format!(
                "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
                shapes.join(", ")
            ))
        })?;
    }
    let bn = crate::shape::numel(&bshape);
    let mut index_offsets = vec![0i64; bn];
    for &d in &defined {
        let t = expanded[d]
            .as_ref()
            .map(|t| t.expand(&bshape, false))
            .transpose()?;
        let vals = match t {
            Some(t) => t.contiguous_vec::<i64>()?,
            None => continue,
        };
        let size = m.sizes[d];
        for (o, &v) in index_offsets.iter_mut().zip(&vals) {
            if v < -size || v >= size {
                return Err(index_error(format!(
                    "index {v} is out of bounds for dimension {d} with size {size}"
                )));
            }
            let v = if v < 0 { v + size } else { v };
            *o += v * m.strides[d];
        }
    }
    let adjacent = defined.windows(2).all(|w| w[1] == w[0] + 1);
    let first = defined.first().copied().unwrap_or(0);
    let (mut pre_s, mut pre_st, mut post_s, mut post_st): (Dims, Dims, Dims, Dims) = (
        SmallVec::new(),
        SmallVec::new(),
        SmallVec::new(),
        SmallVec::new(),
    );
    for (d, e) in expanded.iter().enumerate() {
        if e.is_some() {
            continue;
        }
        if adjacent && d < first {
            pre_s.push(m.sizes[d]);
            pre_st.push(m.strides[d]);
        } else {
            post_s.push(m.sizes[d]);
            post_st.push(m.strides[d]);
        }
    }
    let mut result_shape: Dims = SmallVec::new();
    result_shape.extend_from_slice(&pre_s);
    result_shape.extend_from_slice(&bshape);
    result_shape.extend_from_slice(&post_s);
    Ok(AdvancedIndex {
        result_shape,
        index_offsets,
        pre_offsets: offsets(&pre_s, &pre_st),
        post_offsets: offsets(&post_s, &post_st),
    })
}

impl Tensor {
    /// `aten::index(self, indices)`: advanced indexing with optional integer/bool tensors per
    /// leading dimension (`None` keeps a dimension whole). Returns a copy.
    pub fn index_tensors(&self, indices: &[Option<Tensor>]) -> Result<Tensor> {
        let adv = make_advanced(self, indices)?;
        let m = self.meta_snapshot();
        let out = Tensor::zeros(&adv.result_shape, m.dtype)?;
        let es = m.dtype.size();
        let src = m.data_ptr();
        let dst = out.meta().data_ptr();
        let mut k = 0usize;
        for &pre in &adv.pre_offsets {
            for &io in &adv.index_offsets {
                for &post in &adv.post_offsets {
                    let off = pre + io + post;
                    // SAFETY: every offset combines in-bounds coordinates of `self`; `k` walks
                    // the fresh contiguous output.
                    unsafe {
                        copy_elem(dst.add(k * es), src.offset((off * es as i64) as isize), es)
                    };
                    k += 1;
                }
            }
        }
        Ok(out)
    }

    /// `aten::index_put_(self, indices, values, accumulate)`: writes `values` (broadcast to the
    /// indexing result's shape, same dtype as `self`) at the indexed positions; with
    /// `accumulate`, adds instead (duplicates accumulate).
    pub fn index_put_tensors_(
        &self,
        indices: &[Option<Tensor>],
        values: &Tensor,
        accumulate: bool,
    ) -> Result<()> {
        let m = self.meta_snapshot();
        if values.dtype() != m.dtype {
            return Err(Error::runtime(format!(
                "Index put requires the source and destination dtypes match, got {} for the destination and {} for the source.",
                m.dtype.scalar_type_name(),
                values.dtype().scalar_type_name()
            )));
        }
        crate::overlap::assert_no_internal_overlap(&m)?;
        let adv = make_advanced(self, indices)?;
        let vs = values.sizes();
        let b = broadcast_shapes(&vs, &adv.result_shape);
        if b.as_ref().map(|b| *b != adv.result_shape).unwrap_or(true) {
            return Err(Error::runtime(format!(
                "shape mismatch: value tensor of shape {:?} cannot be broadcast to indexing result of shape {:?}",
                vs.as_slice(),
                adv.result_shape.as_slice()
            )));
        }
        let v = values.expand(&adv.result_shape, false)?.contiguous()?;
        let es = m.dtype.size();
        let dst = m.data_ptr();
        let src = v.meta().data_ptr();
        let mut k = 0usize;
        if accumulate {
            dispatch_all_c!(m.dtype, T => {
                for &pre in &adv.pre_offsets {
                    for &io in &adv.index_offsets {
                        for &post in &adv.post_offsets {
                            let off = pre + io + post;
                            // SAFETY: offsets are in bounds of `self`; `k` walks `v`.
                            unsafe {
                                let p = dst.offset((off * es as i64) as isize) as *mut T;
                                *p = crate::ops::index::add_same(*p, *(src as *const T).add(k));
                            }
                            k += 1;
                        }
                    }
                }
            });
        } else {
            for &pre in &adv.pre_offsets {
                for &io in &adv.index_offsets {
                    for &post in &adv.post_offsets {
                        let off = pre + io + post;
                        // SAFETY: offsets are in bounds of `self`; `k` walks `v`.
                        unsafe {
                            copy_elem(dst.offset((off * es as i64) as isize), src.add(k * es), es)
                        };
                        k += 1;
                    }
                }
            }
        }
        Ok(())
    }

    /// `x[indices]` with Python semantics: basic indices give a view, tensor indices a copy.
    pub fn index(&self, indices: &[TensorIndex]) -> Result<Tensor> {
        let (view, tensor_indices) = apply_slicing(self, indices)?;
        if tensor_indices.is_empty() {
            // `x[...]` and `x[:]` are new views, never the same object.
            if Tensor::is_same(&view, self) {
                return Ok(self.detach_view());
            }
            return Ok(view);
        }
        view.index_tensors(&tensor_indices)
    }

    /// `x[indices] = value` with Python semantics: leading size-1 dimensions of `value` are
    /// dropped, then it is broadcast to the indexed region and converted to `self`'s dtype.
    pub fn index_put_(&self, indices: &[TensorIndex], value: &Tensor) -> Result<()> {
        let (view, tensor_indices) = apply_slicing(self, indices)?;
        let vs = value.sizes();
        let lead = vs.iter().take_while(|&&s| s == 1).count();
        let value = value.reshape(&vs[lead..])?;
        if tensor_indices.is_empty() {
            let target = view.sizes();
            let v = if target == value.sizes() {
                value
            } else {
                value.expand(&target, false)?
            };
            return view.copy_(&v);
        }
        let v = value.to_dtype(self.dtype(), false)?;
        view.index_put_tensors_(&tensor_indices, &v, false)
    }

    /// `x[indices] = number`.
    pub fn index_put_scalar_(&self, indices: &[TensorIndex], value: crate::Scalar) -> Result<()> {
        let v = Tensor::scalar_tensor(value, self.dtype())?;
        self.index_put_(indices, &v)
    }

    /// A fresh view with the same geometry (`x[:]`, `x.view_as(x)`).
    fn detach_view(&self) -> Tensor {
        Tensor::from_meta(self.meta_snapshot())
    }
}

#[inline(always)]
pub(crate) fn add_same<T: crate::cpu::num::Elem>(a: T, b: T) -> T {
    use crate::cpu::num::OpNum;
    T::from_op(a.op().add(b.op()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scalar;

    fn ar(n: i64, s: &[i64]) -> Tensor {
        Tensor::from_vec((0..n).collect::<Vec<i64>>(), s).unwrap()
    }
    fn it(v: &[i64]) -> TensorIndex {
        TensorIndex::Tensor(Tensor::from_vec(v.to_vec(), &[v.len() as i64]).unwrap())
    }
    fn sl(a: Option<i64>, b: Option<i64>) -> TensorIndex {
        TensorIndex::Slice {
            start: a,
            stop: b,
            step: 1,
        }
    }

    #[test]
    fn basic_indexing_makes_views() {
        let x = ar(24, &[2, 3, 4]);
        // torch: ones(10,9,8,7,6)[..., 1].shape == (10, 9, 8, 7); x[1, ..., None] -> (9,8,7,6,1)
        let y = Tensor::zeros(&[10, 9, 8, 7, 6], DType::Float32).unwrap();
        assert_eq!(
            y.index(&[TensorIndex::Ellipsis, TensorIndex::Int(1)])
                .unwrap()
                .sizes()
                .as_slice(),
            &[10, 9, 8, 7]
        );
        assert_eq!(
            y.index(&[
                TensorIndex::Int(1),
                TensorIndex::Ellipsis,
                TensorIndex::None
            ])
            .unwrap()
            .sizes()
            .as_slice(),
            &[9, 8, 7, 6, 1]
        );
        assert_eq!(
            y.index(&[
                TensorIndex::Int(1),
                TensorIndex::None,
                TensorIndex::Ellipsis,
                TensorIndex::Int(1)
            ])
            .unwrap()
            .sizes()
            .as_slice(),
            &[1, 9, 8, 7]
        );
        let v = x
            .index(&[TensorIndex::Int(-1), sl(Some(1), None), TensorIndex::Int(0)])
            .unwrap();
        assert_eq!(v.to_vec::<i64>(), vec![16, 20]);
        v.fill_(Scalar::Int(-1)).unwrap();
        assert_eq!(x.to_vec::<i64>()[16], -1);
        let e = x
            .index(&[
                TensorIndex::Int(0),
                TensorIndex::Int(0),
                TensorIndex::Int(0),
                TensorIndex::Int(0),
            ])
            .unwrap_err();
        assert_eq!(
            (e.kind, e.message.as_str()),
            (
                ErrorKind::IndexError,
                "too many indices for tensor of dimension 3"
            )
        );
        assert_eq!(
            ar(3, &[3])
                .index(&[TensorIndex::Int(5)])
                .unwrap_err()
                .message,
            "index 5 is out of bounds for dimension 0 with size 3"
        );
        let s = ar(3, &[3]);
        assert!(!Tensor::is_same(
            &s.index(&[TensorIndex::Ellipsis]).unwrap(),
            &s
        ));
    }

    #[test]
    fn advanced_indexing_positions() {
        let y = ar(24, &[2, 3, 4]);
        // torch: y[[0,1], :, [1,2]] -> [[1,5,9],[14,18,22]] (non-adjacent: index dims first)
        let r = y
            .index(&[it(&[0, 1]), TensorIndex::full(), it(&[1, 2])])
            .unwrap();
        assert_eq!(r.sizes().as_slice(), &[2, 3]);
        assert_eq!(r.to_vec::<i64>(), vec![1, 5, 9, 14, 18, 22]);
        // torch: y[:, [0,1], [1,2]] -> [[1,6],[13,18]]
        let r = y
            .index(&[TensorIndex::full(), it(&[0, 1]), it(&[1, 2])])
            .unwrap();
        assert_eq!(r.to_vec::<i64>(), vec![1, 6, 13, 18]);
        // torch: y[mask2d] with mask [[T,F,T],[F,F,T]] -> rows 0, 2, 5
        let mask = Tensor::from_vec(vec![true, false, true, false, false, true], &[2, 3]).unwrap();
        let r = y.index(&[TensorIndex::Tensor(mask)]).unwrap();
        assert_eq!(r.sizes().as_slice(), &[3, 4]);
        assert_eq!(r.to_vec::<i64>()[8..], [20, 21, 22, 23]);
        // torch: y[None, tensor([1])].shape -> (1, 1, 3, 4)
        assert_eq!(
            y.index(&[TensorIndex::None, it(&[1])])
                .unwrap()
                .sizes()
                .as_slice(),
            &[1, 1, 3, 4]
        );
        let x = ar(12, &[3, 4]);
        let e = x.index(&[it(&[0, 1]), it(&[0, 1, 2])]).unwrap_err();
        assert_eq!(
            e.message,
            "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]"
        );
        let e = x
            .index(&[TensorIndex::Tensor(
                Tensor::from_vec(vec![true, false], &[2]).unwrap(),
            )])
            .unwrap_err();
        assert_eq!(
            e.message,
            "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] at index 0"
        );
        let f = TensorIndex::Tensor(Tensor::from_vec(vec![1.0f32], &[1]).unwrap());
        assert_eq!(
            x.index(&[f]).unwrap_err().message,
            "tensors used as indices must be long, int, byte or bool tensors"
        );
        assert_eq!(
            x.index(&[TensorIndex::Bool(true)])
                .unwrap()
                .sizes()
                .as_slice(),
            &[1, 3, 4]
        );
        assert_eq!(
            x.index(&[TensorIndex::Bool(false)])
                .unwrap()
                .sizes()
                .as_slice(),
            &[0, 3, 4]
        );
        assert_eq!(
            x.index(&[it(&[-1])]).unwrap().to_vec::<i64>(),
            vec![8, 9, 10, 11]
        );
    }

    #[test]
    fn setitem_semantics() {
        let x = Tensor::zeros(&[3, 4], DType::Float32).unwrap();
        // x[1:3] = src through a view
        x.index_put_(
            &[sl(Some(1), Some(3))],
            &Tensor::from_vec(vec![1f32, 2., 3., 4.], &[1, 4]).unwrap(),
        )
        .unwrap();
        assert_eq!(x.to_vec::<f32>()[4..8], [1., 2., 3., 4.]);
        // x[mask] = 9.0
        let m = x.gt_scalar(Scalar::Float(2.5)).unwrap();
        x.index_put_scalar_(&[TensorIndex::Tensor(m)], Scalar::Float(9.0))
            .unwrap();
        assert_eq!(x.to_vec::<f32>()[4..8], [1., 2., 9., 9.]);
        // Python strips leading ones: value [1,1,1,4] works for x[[0]] (result [1, 4]).
        x.index_put_(
            &[it(&[0])],
            &Tensor::from_vec(vec![5f32; 4], &[1, 1, 1, 4]).unwrap(),
        )
        .unwrap();
        assert_eq!(x.to_vec::<f32>()[..4], [5.; 4]);
        // ATen's index_put_ does not: torch reports the shape mismatch.
        let e = x
            .index_put_tensors_(
                &[Some(Tensor::from_vec(vec![0i64], &[1]).unwrap())],
                &Tensor::zeros(&[1, 1, 1, 4], DType::Float32).unwrap(),
                false,
            )
            .unwrap_err();
        assert_eq!(e.message, "shape mismatch: value tensor of shape [1, 1, 1, 4] cannot be broadcast to indexing result of shape [1, 4]");
        let e = x
            .index_put_tensors_(
                &[Some(Tensor::from_vec(vec![0i64], &[1]).unwrap())],
                &Tensor::zeros(&[4], DType::Int64).unwrap(),
                false,
            )
            .unwrap_err();
        assert_eq!(e.message, "Index put requires the source and destination dtypes match, got Float for the destination and Long for the source.");
        // accumulate with duplicates: torch gives [3., 0., 0.]
        let z = Tensor::zeros(&[3], DType::Float32).unwrap();
        z.index_put_tensors_(
            &[Some(Tensor::from_vec(vec![0i64, 0], &[2]).unwrap())],
            &Tensor::from_vec(vec![1f32, 2.], &[2]).unwrap(),
            true,
        )
        .unwrap();
        assert_eq!(z.to_vec::<f32>(), vec![3., 0., 0.]);
        // x[:] = wrong shape -> expand error
        let e = Tensor::zeros(&[2, 3], DType::Float32)
            .unwrap()
            .index_put_(
                &[TensorIndex::full()],
                &Tensor::zeros(&[3, 3], DType::Float32).unwrap(),
            )
            .unwrap_err();
        assert!(e
            .message
            .starts_with("The expanded size of the tensor (2) must match the existing size (3)"));
    }
}
