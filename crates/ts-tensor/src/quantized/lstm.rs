//! The dynamically quantized LSTM (`aten::quantized_lstm` with `use_dynamic=True`): every
//! layer applies FBGEMM's dynamic linear ([`qlinear_dynamic`]) to the whole input sequence at
//! once (as ATen's CPU `FullLayer` pre-computes the input projection) and to the hidden state at
//! each step, then runs the float LSTM cell (`i, f, g, o` gate order).

use super::qlinear_dynamic;
use crate::{Error, Result, Tensor};

/// A prepacked dynamic linear layer: qint8 weight `[N, K]` and float bias.
#[derive(Clone, Debug)]
pub struct DynamicLinearWeights {
    pub weight: Tensor,
    pub bias: Option<Tensor>,
}

/// The weights of one layer and direction of a dynamically quantized LSTM.
#[derive(Clone, Debug)]
pub struct DynamicLstmCell {
    pub ih: DynamicLinearWeights,
    pub hh: DynamicLinearWeights,
    pub reduce_range: bool,
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// Runs the LSTM over `input` (`[T, B, I]`, or `[B, T, I]` when `batch_first`) from hidden
/// state `(h0, c0)` (`[layers * directions, B, H]`); `cells` holds layer-major, direction-minor
/// weights. Returns `(output, h_n, c_n)` as `aten::lstm`.
pub fn quantized_lstm_dynamic(
    input: &Tensor,
    h0: &Tensor,
    c0: &Tensor,
    cells: &[DynamicLstmCell],
    num_layers: usize,
    bidirectional: bool,
    batch_first: bool,
) -> Result<(Tensor, Tensor, Tensor)> {
    let what = "quantized_lstm";
    let dirs = if bidirectional { 2 } else { 1 };
    if cells.len() != num_layers * dirs || num_layers == 0 {
        return Err(Error::runtime(format!(
            "{what}: expected {} cell parameter sets for {num_layers} layer(s), got {}",
            num_layers * dirs,
            cells.len()
        )));
    }
    if input.dim() != 3 {
        return Err(Error::runtime(format!(
            "{what}: expected a 3-d input, got shape {:?}",
            input.sizes().as_slice()
        )));
    }
    let x = if batch_first {
        input.transpose(0, 1)?
    } else {
        input.clone()
    };
    let xs = x.sizes();
    let (t_len, batch) = (xs[0] as usize, xs[1] as usize);
    let hidden = cells[0].hh.weight.sizes()[1] as usize;
    let hs = h0.sizes();
    let want = [(num_layers * dirs) as i64, batch as i64, hidden as i64];
    if hs.as_slice() != want || c0.sizes().as_slice() != want {
        return Err(Error::runtime(format!(
            "{what}: expected hidden states of shape {want:?}, got {:?} and {:?}",
            hs.as_slice(),
            c0.sizes().as_slice()
        )));
    }
    let h0v = h0.to_vec::<f32>();
    let c0v = c0.to_vec::<f32>();
    let mut layer_in = x.contiguous()?.to_dtype(crate::DType::Float32, false)?;
    let mut hn = vec![0f32; h0v.len()];
    let mut cn = vec![0f32; c0v.len()];
    let bh = batch * hidden;
    for layer in 0..num_layers {
        let mut out = vec![0f32; t_len * batch * dirs * hidden];
        for d in 0..dirs {
            let idx = layer * dirs + d;
            let cell = &cells[idx];
            let iw = qlinear_dynamic(
                &layer_in,
                &cell.ih.weight,
                cell.ih.bias.as_ref(),
                cell.reduce_range,
                false,
            )?
            .to_vec::<f32>();
            let gate_w = 4 * hidden;
            if iw.len() != t_len * batch * gate_w {
                return Err(Error::runtime(format!(
                    "{what}: the input weights of layer {layer} do not produce 4 * {hidden} gates"
                )));
            }
            let mut h = h0v[idx * bh..(idx + 1) * bh].to_vec();
            let mut c = c0v[idx * bh..(idx + 1) * bh].to_vec();
            for step in 0..t_len {
                let t = if d == 0 { step } else { t_len - 1 - step };
                let ht = Tensor::from_vec(h.clone(), &[batch as i64, hidden as i64])?;
                let hw = qlinear_dynamic(
                    &ht,
                    &cell.hh.weight,
                    cell.hh.bias.as_ref(),
                    cell.reduce_range,
                    false,
                )?
                .to_vec::<f32>();
                for b in 0..batch {
                    let g = |k: usize| {
                        let j = b * gate_w + k;
                        hw[j] + iw[t * batch * gate_w + j]
                    };
                    for j in 0..hidden {
                        let ig = sigmoid(g(j));
                        let fg = sigmoid(g(hidden + j));
                        let cg = g(2 * hidden + j).tanh();
                        let og = sigmoid(g(3 * hidden + j));
                        let cy = fg * c[b * hidden + j] + ig * cg;
                        let hy = og * cy.tanh();
                        c[b * hidden + j] = cy;
                        h[b * hidden + j] = hy;
                        out[((t * batch + b) * dirs + d) * hidden + j] = hy;
                    }
                }
            }
            hn[idx * bh..(idx + 1) * bh].copy_from_slice(&h);
            cn[idx * bh..(idx + 1) * bh].copy_from_slice(&c);
        }
        layer_in = Tensor::from_vec(out, &[t_len as i64, batch as i64, (dirs * hidden) as i64])?;
    }
    let output = if batch_first {
        layer_in.transpose(0, 1)?.contiguous()?
    } else {
        layer_in
    };
    Ok((
        output,
        Tensor::from_vec(hn, &want)?,
        Tensor::from_vec(cn, &want)?,
    ))
}
