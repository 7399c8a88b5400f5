//! Joins and splits built from views and `cat`: `atleast_{1,2,3}d`, `column_stack`, `dstack`,
//! `tensor_split` with its `hsplit`/`vsplit`/`dsplit` forms, `block_diag`, `cartesian_prod`,
//! `combinations`, `broadcast_to`/`broadcast_tensors`.
//!
//! None of these needs a kernel of its own: they rearrange views and copy through `cat`, as ATen's
//! composite implementations do, so their results share the dtype rules of `cat`.

use crate::error::{Error, ErrorKind, Result};
use crate::ops::join::cat;
use crate::promote::promote_types;
use crate::shape::{broadcast_shapes, wrap_dim};
use crate::tensor::Tensor;

fn non_empty(tensors: &[Tensor], op: &str) -> Result<()> {
    if tensors.is_empty() {
        return Err(Error::runtime(format!(
            "{op} expects a non-empty TensorList"
        )));
    }
    Ok(())
}

/// `torch.dstack`: stacks along the third dimension after `atleast_3d`.
pub fn dstack(tensors: &[Tensor]) -> Result<Tensor> {
    non_empty(tensors, "dstack")?;
    let parts: Vec<Tensor> = tensors
        .iter()
        .map(Tensor::atleast_3d)
        .collect::<Result<_>>()?;
    cat(&parts, 2)
}

/// `torch.column_stack`: 0-d and 1-d tensors become columns, then everything is joined along
/// dimension 1.
pub fn column_stack(tensors: &[Tensor]) -> Result<Tensor> {
    non_empty(tensors, "column_stack")?;
    let parts: Vec<Tensor> = tensors
        .iter()
        .map(|t| {
            if t.dim() <= 1 {
                t.reshape(&[t.numel() as i64, 1])
            } else {
                Ok(t.clone())
            }
        })
        .collect::<Result<_>>()?;
    cat(&parts, 1)
}

/// `torch.block_diag`: the tensors (at most 2-d) placed along the diagonal of a zero matrix of
/// their promoted dtype.
pub fn block_diag(tensors: &[Tensor]) -> Result<Tensor> {
    let mut mats = Vec::with_capacity(tensors.len());
    let mut dtype = None;
    for (i, t) in tensors.iter().enumerate() {
        let m = match t.dim() {
            0 => t.reshape(&[1, 1])?,
            1 => t.reshape(&[1, t.numel() as i64])?,
            2 => t.clone(),
            n => {
                return Err(Error::runtime(format!(
                    "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {n} dimensions"
                )))
            }
        };
        dtype = Some(match dtype {
            None => t.dtype(),
            Some(d) => promote_types(d, t.dtype()),
        });
        mats.push(m);
    }
    let dtype = dtype.unwrap_or_else(crate::config::default_dtype);
    if mats.is_empty() {
        return Tensor::zeros(&[1, 0], dtype);
    }
    let rows: i64 = mats.iter().map(|m| m.sizes()[0]).sum();
    let cols: i64 = mats.iter().map(|m| m.sizes()[1]).sum();
    let out = Tensor::zeros(&[rows, cols], dtype)?;
    let (mut r, mut c) = (0, 0);
    for m in &mats {
        let (h, w) = (m.sizes()[0], m.sizes()[1]);
        if h > 0 && w > 0 {
            out.narrow(0, r, h)?.narrow(1, c, w)?.copy_(m)?;
        }
        r += h;
        c += w;
    }
    Ok(out)
}

/// `torch.cartesian_prod`: every combination of the elements of 1-d tensors, one per row.
pub fn cartesian_prod(tensors: &[Tensor]) -> Result<Tensor> {
    for t in tensors {
        if t.dim() != 1 {
            return Err(Error::runtime(format!(
                "Expect a 1D vector, but got shape {:?}",
                t.sizes().as_slice()
            )));
        }
    }
    match tensors {
        [] => Err(Error::runtime("meshgrid expects a non-empty TensorList")),
        [t] => Ok(t.clone()),
        _ => {
            let shape: Vec<i64> = tensors.iter().map(|t| t.numel() as i64).collect();
            let n = shape.len();
            let cols: Vec<Tensor> = tensors
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let mut view = vec![1; n];
                    view[i] = shape[i];
                    t.reshape(&view)?.expand(&shape, false)?.reshape(&[-1])
                })
                .collect::<Result<_>>()?;
            crate::ops::join::stack(&cols, 1)
        }
    }
}

/// Index tuples of `combinations`: increasing (or non-decreasing with replacement) `r`-tuples
/// drawn from `0..n`, in lexicographic order.
fn combination_indices(n: i64, r: usize, with_replacement: bool) -> Vec<i64> {
    let mut out = Vec::new();
    let mut cur: Vec<i64> = Vec::with_capacity(r);
    fn rec(n: i64, r: usize, rep: bool, start: i64, cur: &mut Vec<i64>, out: &mut Vec<i64>) {
        if cur.len() == r {
            out.extend_from_slice(cur);
            return;
        }
        for i in start..n {
            cur.push(i);
            rec(n, r, rep, if rep { i } else { i + 1 }, cur, out);
            cur.pop();
        }
    }
    rec(n, r, with_replacement, 0, &mut cur, &mut out);
    out
}

impl Tensor {
    /// `atleast_1d`: a 0-d tensor becomes shape `[1]`; others are returned as they are.
    pub fn atleast_1d(&self) -> Result<Tensor> {
        match self.dim() {
            0 => self.reshape(&[1]),
            _ => Ok(self.clone()),
        }
    }

    /// `atleast_2d`: `[]` becomes `[1, 1]` and `[n]` becomes `[1, n]`.
    pub fn atleast_2d(&self) -> Result<Tensor> {
        match self.dim() {
            0 => self.reshape(&[1, 1]),
            1 => self.unsqueeze(0),
            _ => Ok(self.clone()),
        }
    }

    /// `atleast_3d`: `[]` becomes `[1, 1, 1]`, `[n]` becomes `[1, n, 1]` and `[m, n]` becomes
    /// `[m, n, 1]`.
    pub fn atleast_3d(&self) -> Result<Tensor> {
        match self.dim() {
            0 => self.reshape(&[1, 1, 1]),
            1 => self.unsqueeze(0)?.unsqueeze(-1),
            2 => self.unsqueeze(-1),
            _ => Ok(self.clone()),
        }
    }

    fn split_dim_check(&self, dim: i64) -> Result<usize> {
        if self.dim() == 0 {
            return Err(Error::runtime(
                "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims",
            ));
        }
        wrap_dim(dim, self.dim())
    }

    /// `tensor_split(sections, dim)`: `sections` views whose sizes differ by at most one, the
    /// larger first.
    pub fn tensor_split_sections(&self, sections: i64, dim: i64) -> Result<Vec<Tensor>> {
        let d = self.split_dim_check(dim)?;
        if sections <= 0 {
            return Err(Error::runtime(format!(
                "number of sections must be larger than 0, got {sections}"
            )));
        }
        let size = self.sizes()[d];
        let (base, extra) = (size / sections, size % sections);
        let mut start = 0;
        (0..sections)
            .map(|i| {
                let len = base + i64::from(i < extra);
                let part = self.slice(d as i64, Some(start), Some(start + len), 1);
                start += len;
                part
            })
            .collect()
    }

    /// `tensor_split(indices, dim)`: views between consecutive split points (clamped to the
    /// dimension, so out-of-range or decreasing points give empty parts).
    pub fn tensor_split_indices(&self, indices: &[i64], dim: i64) -> Result<Vec<Tensor>> {
        let d = self.split_dim_check(dim)? as i64;
        let mut start = 0;
        let mut parts = Vec::with_capacity(indices.len() + 1);
        for &i in indices {
            parts.push(self.slice(d, Some(start), Some(i), 1)?);
            start = i;
        }
        parts.push(self.slice(d, Some(start), None, 1)?);
        Ok(parts)
    }

    /// `tensor_split(tensor_indices_or_sections, dim)`: a 0-d int64 tensor gives sections, a 1-d
    /// one split indices.
    pub fn tensor_split_tensor(&self, spec: &Tensor, dim: i64) -> Result<Vec<Tensor>> {
        if spec.dtype() != crate::DType::Int64 {
            return Err(Error::runtime(format!(
                "tensor_split expected tensor_indices_or_sections to have dtype of long, but got {}",
                spec.dtype().scalar_type_name()
            )));
        }
        match spec.dim() {
            0 => self.tensor_split_sections(spec.item()?.to_i64(), dim),
            1 => self.tensor_split_indices(&spec.contiguous_vec::<i64>()?, dim),
            n => Err(Error::runtime(format!(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, but got a tensor with {n} dims"
            ))),
        }
    }

    /// The dimension `hsplit`/`vsplit`/`dsplit` split along, after their rank checks.
    fn directional_split_dim(&self, op: &str, min_dims: usize, dim: usize) -> Result<i64> {
        if self.dim() < min_dims {
            let what = if min_dims == 1 {
                "1 dimension".to_string()
            } else {
                format!("{min_dims} dimensions")
            };
            return Err(Error::runtime(format!(
                "torch.{op} requires a tensor with at least {what}, but got a tensor with {} dimensions!",
                self.dim()
            )));
        }
        Ok(dim as i64)
    }

    /// `hsplit`/`vsplit`/`dsplit` with a number of equal sections.
    pub fn directional_split_sections(&self, op: &str, sections: i64) -> Result<Vec<Tensor>> {
        let d = self.directional_split(op)?;
        let size = self.sizes()[d as usize];
        if sections == 0 || size % sections != 0 {
            return Err(Error::runtime(format!(
                "torch.{op} attempted to split along dimension {d}, but the size of the dimension {size} is not divisible by the split_size {sections}!"
            )));
        }
        self.tensor_split_sections(sections, d)
    }

    /// `hsplit`/`vsplit`/`dsplit` at split indices.
    pub fn directional_split_indices(&self, op: &str, indices: &[i64]) -> Result<Vec<Tensor>> {
        let d = self.directional_split(op)?;
        self.tensor_split_indices(indices, d)
    }

    fn directional_split(&self, op: &str) -> Result<i64> {
        match op {
            "hsplit" => {
                let d = if self.dim() == 1 { 0 } else { 1 };
                self.directional_split_dim(op, 1, d)
            }
            "vsplit" => self.directional_split_dim(op, 2, 0),
            "dsplit" => self.directional_split_dim(op, 3, 2),
            other => Err(Error::runtime(format!(
                "internal error: unknown split '{other}'"
            ))),
        }
    }

    /// `combinations(r, with_replacement)`: the `r`-element combinations of a 1-d tensor's
    /// elements as rows, in lexicographic order of positions.
    pub fn combinations(&self, r: i64, with_replacement: bool) -> Result<Tensor> {
        if self.dim() != 1 {
            return Err(Error::runtime(format!(
                "Expect a 1D vector, but got shape {:?}",
                self.sizes().as_slice()
            )));
        }
        if r < 0 {
            return Err(Error::runtime(format!(
                "Expect a non-negative number, but got {r}"
            )));
        }
        if r == 0 {
            return Tensor::zeros(&[0], self.dtype());
        }
        let idx = combination_indices(self.numel() as i64, r as usize, with_replacement);
        let rows = (idx.len() / r as usize) as i64;
        let idx = Tensor::from_vec(idx, &[rows * r])?;
        // torch 2.15 keeps the pair dimension for r = 1 as well (`[n, 1]`).
        self.index_select(0, &idx)?.reshape(&[rows, r])
    }

    /// `broadcast_to(size)`: `expand` under its NumPy name.
    pub fn broadcast_to(&self, size: &[i64]) -> Result<Tensor> {
        self.expand(size, false)
    }
}

/// `torch.broadcast_tensors`: every tensor expanded to the common broadcast shape.
pub fn broadcast_tensors(tensors: &[Tensor]) -> Result<Vec<Tensor>> {
    let mut shape: Vec<i64> = Vec::new();
    for t in tensors {
        shape = broadcast_shapes(&shape, &t.sizes())?.to_vec();
    }
    tensors.iter().map(|t| t.expand(&shape, false)).collect()
}

/// `torch.broadcast_shapes(a, b)` for two shapes; negative sizes are rejected as ATen does.
pub fn broadcast_shape_lists(a: &[i64], b: &[i64]) -> Result<Vec<i64>> {
    if let Some(&s) = a.iter().chain(b).find(|&&s| s < 0) {
        return Err(Error::new(
            ErrorKind::RuntimeError,
            format!("Trying to create tensor with negative dimension {s}: {a:?}"),
        ));
    }
    Ok(broadcast_shapes(a, b)?.to_vec())
}

/// `_chunk_cat(tensors, dim, num_chunks)`: splits every tensor into `num_chunks` equal chunks
/// along `dim` (zero-padding the last), flattens each chunk with the dimensions after `dim`,
/// and concatenates the chunks of all tensors: shape `[sizes[..dim], num_chunks, Σ chunk_numel]`.
pub fn chunk_cat(tensors: &[Tensor], dim: i64, num_chunks: i64) -> Result<Tensor> {
    let Some(first) = tensors.first() else {
        return Err(Error::runtime(
            "_chunk_cat expects a non-empty input tensor list",
        ));
    };
    if num_chunks < 1 {
        return Err(Error::runtime("_chunk_cat expects positive num_chunks"));
    }
    let d = crate::shape::wrap_dim(dim, first.dim().max(1))?;
    let lead = first.sizes()[..d.min(first.dim())].to_vec();
    let mut parts = Vec::with_capacity(tensors.len());
    for t in tensors {
        if t.dim() <= d || t.sizes()[..d] != lead[..] {
            return Err(Error::runtime(
                "_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all tensors",
            ));
        }
        if t.dtype() != first.dtype() {
            return Err(Error::runtime(
                "_chunk_cat expects all input tensors with the same dtype",
            ));
        }
        let sizes = t.sizes();
        let len = sizes[d];
        let chunk = (len + num_chunks - 1) / num_chunks;
        let padded_len = chunk * num_chunks;
        let padded = if padded_len > len {
            let mut pad_shape = sizes.to_vec();
            pad_shape[d] = padded_len - len;
            let zeros = Tensor::zeros(&pad_shape, t.dtype())?;
            crate::ops::join::cat(&[t.clone(), zeros], d as i64)?
        } else {
            t.contiguous()?
        };
        let trailing: i64 = sizes[d + 1..].iter().product();
        let mut shape = lead.clone();
        shape.push(num_chunks);
        shape.push(chunk * trailing);
        parts.push(padded.reshape(&shape)?);
    }
    crate::ops::join::cat(&parts, d as i64 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ar(n: i64, shape: &[i64]) -> Tensor {
        Tensor::from_vec((0..n).map(|i| i as f32).collect(), shape).unwrap()
    }

    #[test]
    fn atleast_shapes() {
        let s = Tensor::from_vec(vec![1.0f32], &[]).unwrap();
        assert_eq!(s.atleast_3d().unwrap().sizes().as_slice(), &[1, 1, 1]);
        assert_eq!(
            ar(3, &[3]).atleast_3d().unwrap().sizes().as_slice(),
            &[1, 3, 1]
        );
        assert_eq!(
            ar(3, &[3]).atleast_2d().unwrap().sizes().as_slice(),
            &[1, 3]
        );
        assert_eq!(
            ar(6, &[2, 3]).atleast_3d().unwrap().sizes().as_slice(),
            &[2, 3, 1]
        );
    }

    #[test]
    fn tensor_split_sizes() {
        let t = ar(7, &[7]);
        let parts = t.tensor_split_sections(3, 0).unwrap();
        let sizes: Vec<i64> = parts.iter().map(|p| p.numel() as i64).collect();
        assert_eq!(sizes, vec![3, 2, 2]);
        let parts = t.tensor_split_indices(&[2, 9, 1], 0).unwrap();
        let sizes: Vec<i64> = parts.iter().map(|p| p.numel() as i64).collect();
        assert_eq!(sizes, vec![2, 5, 0, 6]);
        assert!(ar(5, &[5]).directional_split_sections("hsplit", 2).is_err());
        assert!(ar(6, &[6]).directional_split_sections("vsplit", 2).is_err());
    }

    #[test]
    fn block_diag_places_blocks() {
        let a = ar(4, &[2, 2]);
        let b = Tensor::from_vec(vec![7i64], &[]).unwrap();
        let out = block_diag(&[a, b]).unwrap();
        assert_eq!(out.sizes().as_slice(), &[3, 3]);
        assert_eq!(
            out.to_vec::<f32>(),
            vec![0., 1., 0., 2., 3., 0., 0., 0., 7.]
        );
    }

    #[test]
    fn combinations_and_products() {
        let t = Tensor::from_vec(vec![1i64, 2, 3], &[3]).unwrap();
        let c = t.combinations(2, false).unwrap();
        assert_eq!(c.to_vec::<i64>(), vec![1, 2, 1, 3, 2, 3]);
        let c = t.combinations(2, true).unwrap();
        assert_eq!(c.sizes().as_slice(), &[6, 2]);
        assert_eq!(
            t.combinations(1, false).unwrap().sizes().as_slice(),
            &[3, 1]
        );
        let p =
            cartesian_prod(&[t.clone(), Tensor::from_vec(vec![5i64, 6], &[2]).unwrap()]).unwrap();
        assert_eq!(p.to_vec::<i64>(), vec![1, 5, 1, 6, 2, 5, 2, 6, 3, 5, 3, 6]);
        assert!(ar(4, &[2, 2]).combinations(2, false).is_err());
    }
}
