//! Embedding lookups: `embedding` (rows of a weight matrix) and `embedding_bag` (sum, mean or
//! max of bags of rows delimited by offsets).

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::ops::view::legacy_type_name;
use crate::tensor::Tensor;

/// How `embedding_bag` reduces each bag (ATen's `mode` integer: 0, 1, 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BagMode {
    Sum,
    Mean,
    Max,
}

impl BagMode {
    /// From ATen's integer code.
    pub fn from_code(code: i64) -> Result<BagMode> {
        match code {
            0 => Ok(BagMode::Sum),
            1 => Ok(BagMode::Mean),
            2 => Ok(BagMode::Max),
            _ => Err(Error::runtime(format!(
                "Unknown mode for embedding_bag: {code}"
            ))),
        }
    }

    /// From the functional API's string (`"sum"`, `"mean"`, `"max"`).
    pub fn parse(s: &str) -> Result<BagMode> {
        match s {
            "sum" => Ok(BagMode::Sum),
            "mean" => Ok(BagMode::Mean),
            "max" => Ok(BagMode::Max),
            _ => Err(Error::new(
                ErrorKind::ValueError,
                "mode has to be one of sum, mean or max",
            )),
        }
    }
}

fn check_indices(t: &Tensor, arg: &str, op: &str) -> Result<()> {
    if !matches!(t.dtype(), DType::Int64 | DType::Int32) {
        return Err(Error::runtime(format!(
            "Expected tensor for argument #1 '{arg}' to have one of the following scalar types: Long, Int; but got {} instead (while checking arguments for {op})",
            legacy_type_name(t.dtype())
        )));
    }
    Ok(())
}

/// `embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)`: `weight[indices]`
/// with shape `indices.shape + [embedding_dim]`. `padding_idx` only matters for gradients.
pub fn embedding(weight: &Tensor, indices: &Tensor) -> Result<Tensor> {
    if weight.dim() != 2 {
        return Err(Error::runtime("'weight' must be 2-D"));
    }
    check_indices(indices, "indices", "embedding")?;
    let rows = weight.sizes()[0];
    let flat = indices.reshape(&[-1])?;
    if flat.to_vec::<i64>().iter().any(|&i| i < -rows || i >= rows) {
        return Err(Error::new(
            ErrorKind::IndexError,
            "index out of range in self",
        ));
    }
    let mut shape: Vec<i64> = indices.sizes().to_vec();
    shape.push(weight.sizes()[1]);
    weight.index_select(0, &flat)?.reshape(&shape)
}

/// `embedding_bag(weight, indices, offsets, mode, per_sample_weights, include_last_offset,
/// padding_idx)`. A 2-d `indices` holds fixed-length bags (then `offsets` must be absent).
/// Returns `(output, offset2bag, bag_size, max_indices)` as ATen does; `output` is the value
/// models use; empty bags give zeros; indices equal to `padding_idx` are left out of their bag.
pub fn embedding_bag(
    weight: &Tensor,
    indices: &Tensor,
    offsets: Option<&Tensor>,
    mode: BagMode,
    per_sample_weights: Option<&Tensor>,
    include_last_offset: bool,
    padding_idx: Option<i64>,
) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
    if weight.dim() != 2 {
        return Err(Error::runtime("'weight' must be 2-D"));
    }
    check_indices(indices, "indices", "embedding_bag")?;
    let (rows, dim) = (weight.sizes()[0], weight.sizes()[1]);
    let idx: Vec<i64> = indices.reshape(&[-1])?.to_vec();
    let offs: Vec<i64> = match (indices.dim(), offsets) {
        (2, None) => {
            let l = indices.sizes()[1];
            (0..indices.sizes()[0]).map(|b| b * l).collect()
        }
        (2, Some(_)) => {
            return Err(Error::new(
                ErrorKind::ValueError,
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences.",
            ))
        }
        (1, Some(o)) => {
            check_indices(o, "offsets", "embedding_bag")?;
            if o.dim() != 1 {
                return Err(Error::new(ErrorKind::ValueError, "offsets has to be a 1D Tensor"));
            }
            o.to_vec()
        }
        (1, None) => {
            return Err(Error::new(
                ErrorKind::ValueError,
                "offsets has to be a 1D Tensor but got None",
            ))
        }
        (d, _) => {
            return Err(Error::new(
                ErrorKind::ValueError,
                format!("input has to be 1D or 2D Tensor, but got Tensor of dimension {d}"),
            ))
        }
    };
    if let Some(&first) = offs.first() {
        if first != 0 {
            return Err(Error::runtime(format!(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got {first}"
            )));
        }
    }
    if let Some(&last) = offs.last() {
        if last > idx.len() as i64 {
            return Err(Error::runtime(format!(
                "offsets[-1] can not be greater than input's length {} but got offsets[-1] of {last}",
                idx.len()
            )));
        }
    }
    for (i, &v) in idx.iter().enumerate() {
        if v < 0 || v >= rows {
            return Err(Error::runtime(format!(
                "Index {i} of input takes value {v} which is not in the valid range [0, {rows})"
            )));
        }
    }
    let psw: Option<Vec<f64>> = match per_sample_weights {
        Some(w) => {
            if mode != BagMode::Sum {
                return Err(Error::runtime(
                    "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' (got mode='mean'). Please open a feature request on GitHub.",
                ));
            }
            if w.numel() != idx.len() {
                return Err(Error::runtime(
                    "embedding_bag: expected per_sample_weights to have the same shape as input",
                ));
            }
            Some(w.to_vec())
        }
        None => None,
    };
    let bags = if include_last_offset {
        offs.len().saturating_sub(1)
    } else {
        offs.len()
    };
    let d = dim as usize;
    let wv: Vec<f64> = weight.to_vec();
    let mut out = vec![0f64; bags * d];
    let mut max_idx = vec![-1i64; if mode == BagMode::Max { bags * d } else { 0 }];
    let mut offset2bag = vec![0i64; idx.len()];
    let mut bag_size = vec![0i64; bags];
    for b in 0..bags {
        let start = offs[b].max(0) as usize;
        let end = if b + 1 < offs.len() {
            (offs[b + 1] as usize).min(idx.len())
        } else {
            idx.len()
        };
        let row = &mut out[b * d..(b + 1) * d];
        let mut count = 0usize;
        for (i, &ix) in idx.iter().enumerate().take(end).skip(start) {
            offset2bag[i] = b as i64;
            if Some(ix) == padding_idx {
                continue;
            }
            let src = &wv[ix as usize * d..(ix as usize + 1) * d];
            let scale = psw.as_ref().map(|w| w[i]).unwrap_or(1.0);
            for (j, (o, &s)) in row.iter_mut().zip(src).enumerate() {
                match mode {
                    BagMode::Max => {
                        if count == 0 || s > *o {
                            *o = s;
                            max_idx[b * d + j] = ix;
                        }
                    }
                    _ => *o += s * scale,
                }
            }
            count += 1;
        }
        if mode == BagMode::Mean && count > 0 {
            row.iter_mut().for_each(|o| *o /= count as f64);
        }
        bag_size[b] = count as i64;
    }
    let dt = weight.dtype();
    let output = Tensor::from_vec(out, &[bags as i64, dim])?.to_dtype(dt, false)?;
    let max_indices = if mode == BagMode::Max {
        Tensor::from_vec(max_idx, &[bags as i64, dim])?
    } else {
        Tensor::from_vec(vec![0i64; bags], &[bags as i64])?
    };
    Ok((
        output,
        Tensor::from_vec(offset2bag, &[idx.len() as i64])?,
        Tensor::from_vec(bag_size, &[bags as i64])?,
        max_indices,
    ))
}
