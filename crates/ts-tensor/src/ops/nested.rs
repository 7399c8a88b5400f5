//! Nested tensors, as far as `nn.TransformerEncoder`'s inference fast path uses them: a batch of
//! variable-length sequences, built from a dense batch and its key padding mask
//! (`_nested_tensor_from_mask`), run through the fused encoder layer / attention operators, and
//! padded back (`to_padded_tensor`). A nested tensor is represented by the padded `[B, T, ...]`
//! tensor plus one length per sequence ([`Tensor::nested_from_padded`]); its padding positions are
//! kept at zero, and operators that do not know about nested tensors refuse them.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::factory::full;
use crate::scalar::Scalar;
use crate::tensor::Tensor;

/// Checks the `(t, mask)` pair of the mask-to-nested operators and returns the mask's rows.
fn mask_rows(t: &Tensor, mask: &Tensor) -> Result<Vec<Vec<bool>>> {
    if mask.dtype() != DType::Bool {
        return Err(Error::runtime(format!(
            "Expected mask to be of type Bool, got {}",
            mask.dtype().scalar_type_name()
        )));
    }
    if mask.dim() != 2 {
        return Err(Error::runtime("Padding mask should be 2D"));
    }
    if t.dim() != 3 {
        return Err(Error::runtime("Input should be a 3D tensor, N * L * D"));
    }
    if mask.sizes()[..] != t.sizes()[..2] {
        return Err(Error::runtime("Mask size should match input size"));
    }
    let cols = mask.sizes()[1] as usize;
    let m: Vec<bool> = mask.contiguous()?.to_vec();
    if cols == 0 {
        return Ok(vec![Vec::new(); mask.sizes()[0] as usize]);
    }
    Ok(m.chunks(cols).map(<[bool]>::to_vec).collect())
}

/// `_nested_tensor_from_mask_left_aligned(t, mask)`: whether every row of the 2-d bool mask is a
/// run of `true` followed only by `false` (the padding), so a nested tensor can be built.
pub fn nested_mask_left_aligned(t: &Tensor, mask: &Tensor) -> Result<bool> {
    Ok(mask_rows(t, mask)?
        .iter()
        .all(|row| row.windows(2).all(|w| w[0] || !w[1])))
}

/// A bool `[B, T]` tensor that is `true` at the padding positions of sequences of `lengths`.
pub fn padding_mask(lengths: &[i64], t: i64) -> Result<Tensor> {
    let data: Vec<bool> = lengths
        .iter()
        .flat_map(|&l| (0..t).map(move |j| j >= l))
        .collect();
    Tensor::from_vec(data, &[lengths.len() as i64, t])
}

/// Zeroes the padding positions of a `[B, T, ...]` tensor (a new tensor).
fn zero_padding(padded: &Tensor, lengths: &[i64]) -> Result<Tensor> {
    let s = padded.sizes();
    let mut shape = vec![s[0], s[1]];
    shape.resize(s.len(), 1);
    let mask = padding_mask(lengths, s[1])?.reshape(&shape)?;
    padded.masked_fill(&mask, Scalar::Int(0))
}

/// A nested tensor of sequences padded in `padded` (`[B, T, ...]`) to the given lengths, with its
/// padding zeroed.
pub fn nested_from_padded_zeroing(padded: &Tensor, lengths: Vec<i64>) -> Result<Tensor> {
    Tensor::nested_from_padded(&zero_padding(padded, &lengths)?, lengths)
}

/// `_nested_tensor_from_mask(t, mask, mask_check)`: the nested tensor whose sequence `b` is the
/// first `mask[b].sum()` rows of `t[b]` (`mask` is `true` for the tokens to keep).
pub fn nested_tensor_from_mask(t: &Tensor, mask: &Tensor, mask_check: bool) -> Result<Tensor> {
    let rows = mask_rows(t, mask)?;
    if mask_check && !rows.iter().all(|row| row.windows(2).all(|w| w[0] || !w[1])) {
        return Err(Error::runtime(
            "Mask tensor must be left aligned: each row true for the tokens, then false for the padding",
        ));
    }
    let lengths: Vec<i64> = rows
        .iter()
        .map(|r| r.iter().filter(|&&b| b).count() as i64)
        .collect();
    let max = lengths.iter().copied().max().unwrap_or(0);
    nested_from_padded_zeroing(&t.narrow(1, 0, max)?, lengths)
}

impl Tensor {
    /// `to_padded_tensor(padding, output_size)`: the sequences of a nested tensor in a dense
    /// tensor of `output_size` (default: the longest sequence), `padding` everywhere else.
    pub fn to_padded_tensor(&self, padding: f64, output_size: Option<&[i64]>) -> Result<Tensor> {
        let Some(lengths) = self.nested_lengths() else {
            return Err(Error::runtime(
                "to_padded_tensor: expected a nested tensor, got a strided one",
            ));
        };
        let s = self.sizes();
        let max = lengths.iter().copied().max().unwrap_or(0);
        let mut natural = s.to_vec();
        natural[1] = max;
        let size = match output_size {
            None => natural.clone(),
            Some(o) => {
                if o.len() != natural.len() || o.iter().zip(&natural).any(|(&a, &b)| a < b) {
                    return Err(Error::runtime(format!(
                        "Value in output_size is less than NestedTensor padded size: output_size {o:?}, nested sizes {natural:?}"
                    )));
                }
                o.to_vec()
            }
        };
        let out = full(&size, Scalar::Float(padding), Some(self.dtype()))?;
        let mut dst = out.clone();
        let mut src = Tensor::from_meta(self.meta_snapshot());
        for (d, &n) in natural.iter().enumerate().skip(2) {
            dst = dst.narrow(d as i64, 0, n)?;
            src = src.narrow(d as i64, 0, n)?;
        }
        for (b, &l) in lengths.iter().enumerate() {
            let b = b as i64;
            dst.select(0, b)?
                .narrow(0, 0, l)?
                .copy_(&src.select(0, b)?.narrow(0, 0, l)?)?;
        }
        Ok(out)
    }

    /// The padded `[B, T, ...]` data of a nested tensor as an ordinary tensor (a view).
    pub fn nested_padded(&self) -> Tensor {
        Tensor::from_meta(self.meta_snapshot())
    }
}
