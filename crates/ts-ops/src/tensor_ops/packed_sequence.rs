//! The operators behind `torch.nn.utils.rnn`: `_pack_padded_sequence`,
//! `_pad_packed_sequence`, `pad_sequence` and `_pack_sequence`.
//!
//! A packed sequence is `data` (the time steps' rows concatenated, longest sequences first)
//! with `batch_sizes[t]`, the number of sequences still running at step `t`.

use ts_core::IValue;
use ts_tensor::{DType, Error, Scalar, Tensor};

use super::def;
use crate::registry::Registry;

fn cat0(parts: Vec<Tensor>) -> Result<Tensor, Error> {
    crate::autograd::ops::call1(
        "aten::cat",
        vec![IValue::tensor_list(parts), IValue::Int(0)],
    )
}

fn pack_padded(
    input: &Tensor,
    lengths: &Tensor,
    batch_first: bool,
) -> Result<(Tensor, Tensor), Error> {
    let x = if batch_first {
        input.transpose(0, 1)?
    } else {
        input.clone()
    };
    if lengths.dim() != 1 {
        return Err(Error::runtime(format!(
            "'lengths' argument should be a 1D CPU int64 tensor, but got {}D {} tensor",
            lengths.dim(),
            lengths.dtype().scalar_type_name()
        )));
    }
    let lens = lengths.to_vec::<i64>();
    let batch = x.sizes().get(1).copied().unwrap_or(0);
    if lens.len() as i64 != batch {
        return Err(Error::runtime(format!(
            "Expected `len(lengths)` to be equal to batch_size, but got {} (batch_size={batch})",
            lens.len()
        )));
    }
    if lens.last().is_some_and(|&l| l <= 0) || lens.is_empty() {
        return Err(Error::runtime(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0",
        ));
    }
    if lens.windows(2).any(|w| w[0] < w[1]) {
        return Err(Error::runtime(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you do not need ONNX exportability.",
        ));
    }
    let steps = lens[0];
    if steps > x.sizes()[0] {
        return Err(Error::runtime(format!(
            "the longest length {steps} exceeds the sequence dimension {}",
            x.sizes()[0]
        )));
    }
    let mut parts = Vec::new();
    let mut batch_sizes = Vec::new();
    for t in 0..steps {
        let running = lens.iter().filter(|&&l| l > t).count() as i64;
        parts.push(x.select(0, t)?.narrow(0, 0, running)?);
        batch_sizes.push(running);
    }
    Ok((cat0(parts)?, Tensor::from_vec(batch_sizes, &[steps])?))
}

fn pad_packed(
    data: &Tensor,
    batch_sizes: &Tensor,
    batch_first: bool,
    padding: Scalar,
    total_length: i64,
) -> Result<(Tensor, Tensor), Error> {
    let bs = batch_sizes.to_vec::<i64>();
    let steps = bs.len() as i64;
    let batch = bs.first().copied().unwrap_or(0);
    if total_length > 0 && total_length < steps {
        return Err(Error::runtime(format!(
            "Expected total_length to be at least the length of the longest sequence in input, but got total_length={total_length} and max sequence length being {steps}"
        )));
    }
    let t_out = steps.max(total_length);
    let mut shape = vec![t_out, batch];
    shape.extend_from_slice(&data.sizes()[1..]);
    let out = ts_tensor::factory::full(&shape, padding, Some(data.dtype()))?;
    let mut offset = 0;
    for (t, &n) in bs.iter().enumerate() {
        out.select(0, t as i64)?
            .narrow(0, 0, n)?
            .copy_(&data.narrow(0, offset, n)?)?;
        offset += n;
    }
    let lengths: Vec<i64> = (0..batch)
        .map(|b| bs.iter().filter(|&&n| n > b).count() as i64)
        .collect();
    let out = if batch_first {
        out.transpose(0, 1)?
    } else {
        out
    };
    Ok((out, Tensor::from_vec(lengths, &[batch])?))
}

fn pad_sequence(
    seqs: &[Tensor],
    batch_first: bool,
    padding: f64,
    side: &str,
) -> Result<Tensor, Error> {
    let left = match side {
        "left" => true,
        "right" => false,
        s => {
            return Err(Error::runtime(format!(
                "Expected padding_side to be one of left or right, but got {s}."
            )))
        }
    };
    let first = seqs
        .first()
        .ok_or_else(|| Error::runtime("received an empty list of sequences"))?;
    let max_len = seqs
        .iter()
        .map(|s| s.sizes().first().copied().unwrap_or(0))
        .max()
        .unwrap_or(0);
    let trailing: Vec<i64> = first.sizes().iter().skip(1).copied().collect();
    let mut shape = vec![max_len, seqs.len() as i64];
    shape.extend(&trailing);
    let out = ts_tensor::factory::full(&shape, Scalar::Float(padding), Some(first.dtype()))?;
    for (b, s) in seqs.iter().enumerate() {
        let n = s.sizes().first().copied().unwrap_or(0);
        let start = if left { max_len - n } else { 0 };
        out.narrow(0, start, n)?.select(1, b as i64)?.copy_(s)?;
    }
    if batch_first {
        out.transpose(0, 1)?.contiguous()
    } else {
        Ok(out)
    }
}

/// Registers the packed-sequence operators.
pub fn register(r: &Registry) {
    def(r, "aten::_pack_padded_sequence", |a| {
        let lengths = a.t(1)?;
        if lengths.dtype() != DType::Int64 {
            return Err(Error::runtime(format!(
                "'lengths' argument should be a 1D CPU int64 tensor, but got 1D {} tensor",
                lengths.dtype().scalar_type_name()
            )));
        }
        pack_padded(a.t(0)?, lengths, a.b(2)?)
    });
    def(r, "aten::_pad_packed_sequence", |a| {
        pad_packed(a.t(0)?, a.t(1)?, a.b(2)?, a.s(3)?, a.int(4)?)
    });
    def(r, "aten::pad_sequence", |a| {
        pad_sequence(&a.tensors(0)?, a.b(1)?, a.f(2)?, a.str(3)?)
    });
    def(r, "aten::_pack_sequence", |a| {
        Ok(Values(vec![
            a.v(0)?.clone(),
            a.v(1)?.clone(),
            a.v(2)?.clone(),
            a.v(3)?.clone(),
        ]))
    });
}

/// Four results pushed as they are (tensors and optional tensors).
struct Values(Vec<IValue>);

impl super::Outputs for Values {
    fn push_to(self, stack: &mut Vec<IValue>) {
        stack.extend(self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_then_pad_round_trips() {
        // Two sequences of lengths 3 and 2, time-major [3, 2].
        let x = Tensor::from_vec(vec![1.0f64, 4.0, 2.0, 5.0, 3.0, 0.0], &[3, 2]).unwrap();
        let lens = Tensor::from_vec(vec![3i64, 2], &[2]).unwrap();
        let (data, bs) = pack_padded(&x, &lens, false).unwrap();
        assert_eq!(data.to_vec::<f64>(), vec![1.0, 4.0, 2.0, 5.0, 3.0]);
        assert_eq!(bs.to_vec::<i64>(), vec![2, 2, 1]);
        let (padded, lengths) = pad_packed(&data, &bs, true, Scalar::Float(-1.0), 4).unwrap();
        assert_eq!(padded.sizes().as_slice(), &[2, 4]);
        assert_eq!(
            padded.to_vec::<f64>(),
            vec![1.0, 2.0, 3.0, -1.0, 4.0, 5.0, -1.0, -1.0]
        );
        assert_eq!(lengths.to_vec::<i64>(), vec![3, 2]);
        let unsorted = Tensor::from_vec(vec![2i64, 3], &[2]).unwrap();
        assert!(pack_padded(&x, &unsorted, false).is_err());
    }

    #[test]
    fn pad_sequence_sides() {
        let a = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap();
        let b = Tensor::from_vec(vec![4.0f64], &[1]).unwrap();
        let right = pad_sequence(&[a.clone(), b.clone()], true, 0.0, "right").unwrap();
        assert_eq!(right.to_vec::<f64>(), vec![1.0, 2.0, 3.0, 4.0, 0.0, 0.0]);
        let left = pad_sequence(&[a, b], false, 9.0, "left").unwrap();
        assert_eq!(left.to_vec::<f64>(), vec![1.0, 9.0, 2.0, 9.0, 3.0, 4.0]);
    }
}
