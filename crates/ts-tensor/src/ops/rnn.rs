//! Recurrent layers with ATen's fused semantics: the cells (`lstm_cell`, `gru_cell`,
//! `rnn_tanh_cell`, `rnn_relu_cell`) and the multi-layer, optionally bidirectional sequence ops
//! (`lstm`, `gru`, `rnn_tanh`, `rnn_relu`) taking the flat weight list that scripted
//! `nn.LSTM`/`nn.GRU`/`nn.RNN` pass. Each layer's input projection runs as one GEMM over all
//! time steps; the recurrence then runs step by step.

use crate::cpu::num::FloatMath;
use crate::error::{Error, Result};
use crate::ops::join::{cat, stack};
use crate::ops::norm::dropout;
use crate::scalar::Scalar;
use crate::tensor::Tensor;

/// The recurrent cell kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cell {
    Lstm,
    Gru,
    Tanh,
    Relu,
}

impl Cell {
    fn gates(self) -> i64 {
        match self {
            Cell::Lstm => 4,
            Cell::Gru => 3,
            Cell::Tanh | Cell::Relu => 1,
        }
    }
}

/// One weight set of a layer and direction.
struct Weights<'a> {
    w_ih: &'a Tensor,
    w_hh: &'a Tensor,
    b_ih: Option<&'a Tensor>,
    b_hh: Option<&'a Tensor>,
    w_hr: Option<&'a Tensor>,
}

/// One step given the input projection `gi = x @ w_ih.T + b_ih`; `state` is `[h]` or `[h, c]`.
fn step(cell: Cell, gi: &Tensor, state: &[Tensor], w: &Weights) -> Result<Vec<Tensor>> {
    let h = &state[0];
    let gh = h.linear(w.w_hh, w.b_hh)?;
    match cell {
        Cell::Lstm => {
            if let Some((h, c)) = lstm_pointwise(gi, &gh, &state[1])? {
                let h = match w.w_hr {
                    Some(p) => h.matmul(&p.t()?)?,
                    None => h,
                };
                return Ok(vec![h, c]);
            }
            let g = gi.add(&gh, Scalar::Int(1))?.chunk(4, 1)?;
            let (i, f, c_in, o) = (
                g[0].sigmoid()?,
                g[1].sigmoid()?,
                g[2].tanh()?,
                g[3].sigmoid()?,
            );
            let c = f.mul(&state[1])?.add(&i.mul(&c_in)?, Scalar::Int(1))?;
            let mut h = o.mul(&c.tanh()?)?;
            if let Some(p) = w.w_hr {
                h = h.matmul(&p.t()?)?;
            }
            Ok(vec![h, c])
        }
        Cell::Gru => {
            let a = gi.chunk(3, 1)?;
            let b = gh.chunk(3, 1)?;
            let r = a[0].add(&b[0], Scalar::Int(1))?.sigmoid()?;
            let z = a[1].add(&b[1], Scalar::Int(1))?.sigmoid()?;
            let n = a[2].add(&r.mul(&b[2])?, Scalar::Int(1))?.tanh()?;
            // h' = n + z * (h - n) == (1 - z) * n + z * h
            let hn = n.add(&z.mul(&h.sub(&n, Scalar::Int(1))?)?, Scalar::Int(1))?;
            Ok(vec![hn])
        }
        Cell::Tanh => Ok(vec![gi.add(&gh, Scalar::Int(1))?.tanh()?]),
        Cell::Relu => Ok(vec![gi.add(&gh, Scalar::Int(1))?.relu()?]),
    }
}

/// The LSTM step after the two projections, fused into one pass for float32/float64:
/// gates `i, f, g, o` from `gi + gh` (`[B, 4H]`), `c' = σ(f)·c + σ(i)·tanh(g)` and
/// `h' = σ(o)·tanh(c')`. Per element it performs the same operations in the same order as the
/// unfused ops, so results are identical; it saves a dozen small tensors per step. `None` for
/// other dtypes or shapes, which take the unfused path.
fn lstm_pointwise(gi: &Tensor, gh: &Tensor, c: &Tensor) -> Result<Option<(Tensor, Tensor)>> {
    let dt = gi.dtype();
    if gh.dtype() != dt || c.dtype() != dt || gi.dim() != 2 || c.dim() != 2 {
        return Ok(None);
    }
    let (b, hidden) = (c.sizes()[0], c.sizes()[1]);
    if gi.sizes().as_slice() != [b, 4 * hidden] || gh.sizes() != gi.sizes() {
        return Ok(None);
    }
    fn run<T: FloatMath + crate::element::Element>(
        gi: &Tensor,
        gh: &Tensor,
        c: &Tensor,
        hidden: usize,
    ) -> Result<(Tensor, Tensor)> {
        let (gi, gh, c) = (gi.to_vec::<T>(), gh.to_vec::<T>(), c.to_vec::<T>());
        let one = T::one();
        let sigmoid = |x: T| one / (one + (-x).exp());
        let mut h_out = Vec::with_capacity(c.len());
        let mut c_out = Vec::with_capacity(c.len());
        for (row, c_row) in c.chunks_exact(hidden.max(1)).enumerate() {
            let base = row * 4 * hidden;
            let gate = |k: usize, j: usize| gi[base + k * hidden + j] + gh[base + k * hidden + j];
            for (j, &c_prev) in c_row.iter().enumerate() {
                let (i, f) = (sigmoid(gate(0, j)), sigmoid(gate(1, j)));
                let (g, o) = (gate(2, j).tanh(), sigmoid(gate(3, j)));
                let c_new = f * c_prev + i * g;
                c_out.push(c_new);
                h_out.push(o * c_new.tanh());
            }
        }
        let shape = [c.len() as i64 / hidden.max(1) as i64, hidden as i64];
        Ok((
            Tensor::from_vec(h_out, &shape)?,
            Tensor::from_vec(c_out, &shape)?,
        ))
    }
    if hidden == 0 {
        return Ok(None);
    }
    Ok(Some(match dt {
        crate::dtype::DType::Float32 => run::<f32>(gi, gh, c, hidden as usize)?,
        crate::dtype::DType::Float64 => run::<f64>(gi, gh, c, hidden as usize)?,
        _ => return Ok(None),
    }))
}

fn check_cell(
    cell: Cell,
    input: &Tensor,
    hx: &[Tensor],
    w_ih: &Tensor,
    w_hh: &Tensor,
) -> Result<()> {
    if input.dim() != 2 {
        return Err(Error::runtime(format!(
            "Expected 2D input (batch x feature), but got {}D input",
            input.dim()
        )));
    }
    let inp = input.sizes()[input.dim() - 1];
    if w_ih.dim() != 2 || w_ih.sizes()[1] != inp {
        return Err(Error::runtime(format!(
            "input has inconsistent input_size: got {} expected {}",
            inp,
            w_ih.sizes().get(1).copied().unwrap_or(0)
        )));
    }
    let hidden = w_hh.sizes().get(1).copied().unwrap_or(0);
    if w_ih.sizes()[0] != cell.gates() * hidden {
        return Err(Error::runtime(format!(
            "weight_ih has {} rows, expected {} * hidden_size = {}",
            w_ih.sizes()[0],
            cell.gates(),
            cell.gates() * hidden
        )));
    }
    for (i, h) in hx.iter().enumerate() {
        let hs = h.sizes();
        if hs.last().copied() != Some(hidden) && !(cell == Cell::Lstm && i == 0) {
            return Err(Error::runtime(format!(
                "hidden{i} has inconsistent hidden_size: got {}, expected {hidden}",
                hs.last().copied().unwrap_or(0)
            )));
        }
    }
    Ok(())
}

fn run_cell(
    cell: Cell,
    input: &Tensor,
    hx: &[Tensor],
    w_ih: &Tensor,
    w_hh: &Tensor,
    b_ih: Option<&Tensor>,
    b_hh: Option<&Tensor>,
) -> Result<Vec<Tensor>> {
    check_cell(cell, input, hx, w_ih, w_hh)?;
    let w = Weights {
        w_ih,
        w_hh,
        b_ih,
        b_hh,
        w_hr: None,
    };
    let gi = input.linear(w.w_ih, w.b_ih)?;
    step(cell, &gi, hx, &w)
}

/// `lstm_cell(input, (h, c), w_ih, w_hh, b_ih, b_hh)`: one LSTM step, returning `(h', c')`.
pub fn lstm_cell(
    input: &Tensor,
    hx: &[Tensor],
    w_ih: &Tensor,
    w_hh: &Tensor,
    b_ih: Option<&Tensor>,
    b_hh: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    if hx.len() != 2 {
        return Err(Error::runtime(format!(
            "lstm_cell: Expected hx to have 2 tensors, got {}",
            hx.len()
        )));
    }
    let mut r = run_cell(Cell::Lstm, input, hx, w_ih, w_hh, b_ih, b_hh)?;
    let c = r
        .pop()
        .ok_or_else(|| Error::runtime("lstm_cell: missing state"))?;
    let h = r
        .pop()
        .ok_or_else(|| Error::runtime("lstm_cell: missing state"))?;
    Ok((h, c))
}

macro_rules! single_state_cell {
    ($(#[$doc:meta])* $name:ident, $cell:expr) => {
        $(#[$doc])*
        pub fn $name(
            input: &Tensor,
            hx: &Tensor,
            w_ih: &Tensor,
            w_hh: &Tensor,
            b_ih: Option<&Tensor>,
            b_hh: Option<&Tensor>,
        ) -> Result<Tensor> {
            let mut r = run_cell($cell, input, std::slice::from_ref(hx), w_ih, w_hh, b_ih, b_hh)?;
            r.pop().ok_or_else(|| Error::runtime("rnn cell: missing state"))
        }
    };
}

single_state_cell!(
    /// `gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh)`: one GRU step.
    gru_cell,
    Cell::Gru
);
single_state_cell!(
    /// `rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih, b_hh)`: `tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`.
    rnn_tanh_cell,
    Cell::Tanh
);
single_state_cell!(
    /// `rnn_relu_cell(input, hx, w_ih, w_hh, b_ih, b_hh)`: as `rnn_tanh_cell` with ReLU.
    rnn_relu_cell,
    Cell::Relu
);

/// Options shared by the sequence ops (ATen's `lstm.input` argument tail).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RnnOptions {
    pub has_biases: bool,
    pub num_layers: i64,
    pub dropout: f64,
    pub train: bool,
    pub bidirectional: bool,
    pub batch_first: bool,
}

/// The shared multi-layer driver. `hx` holds the initial states `[layers * dirs, B, H]`.
fn run_sequence(
    cell: Cell,
    input: &Tensor,
    hx: &[Tensor],
    params: &[Tensor],
    o: RnnOptions,
) -> Result<(Tensor, Vec<Tensor>)> {
    if input.dim() != 3 {
        return Err(Error::runtime(format!(
            "input must have 3 dimensions, got {}",
            input.dim()
        )));
    }
    if o.num_layers < 1 {
        return Err(Error::runtime("num_layers must be at least 1"));
    }
    let dirs = if o.bidirectional { 2 } else { 1 };
    let sets = (o.num_layers * dirs) as usize;
    let base = if o.has_biases { 4 } else { 2 };
    let per = if params.len() == sets * base {
        base
    } else if cell == Cell::Lstm && params.len() == sets * (base + 1) {
        base + 1
    } else {
        return Err(Error::runtime(format!(
            "{}: expected {} weight tensors for {} layer(s) and {} direction(s), got {}",
            match cell {
                Cell::Lstm => "lstm",
                Cell::Gru => "gru",
                _ => "rnn",
            },
            sets * base,
            o.num_layers,
            dirs,
            params.len()
        )));
    };
    for h in hx {
        if h.dim() != 3 || h.sizes()[0] != sets as i64 {
            return Err(Error::runtime(format!(
                "Expected hidden size ({}, {}, *), got {:?}",
                sets,
                if o.batch_first {
                    input.sizes()[0]
                } else {
                    input.sizes()[1]
                },
                h.sizes().as_slice()
            )));
        }
    }
    let mut x = if o.batch_first {
        input.transpose(0, 1)?
    } else {
        input.clone()
    };
    let steps = x.sizes()[0];
    let mut finals: Vec<Vec<Tensor>> = vec![Vec::new(); hx.len()];
    for layer in 0..o.num_layers as usize {
        let mut outs = Vec::with_capacity(dirs as usize);
        for dir in 0..dirs as usize {
            let set = layer * dirs as usize + dir;
            let p = &params[set * per..(set + 1) * per];
            let w = Weights {
                w_ih: &p[0],
                w_hh: &p[1],
                b_ih: if o.has_biases { Some(&p[2]) } else { None },
                b_hh: if o.has_biases { Some(&p[3]) } else { None },
                w_hr: if per == base + 1 {
                    Some(&p[base])
                } else {
                    None
                },
            };
            let in_size = x.sizes()[2];
            if w.w_ih.dim() != 2 || w.w_ih.sizes()[1] != in_size {
                return Err(Error::runtime(format!(
                    "input.size(-1) must be equal to input_size. Expected {}, got {}",
                    w.w_ih.sizes().get(1).copied().unwrap_or(0),
                    in_size
                )));
            }
            let gi = x.linear(w.w_ih, w.b_ih)?;
            let mut state: Vec<Tensor> = hx
                .iter()
                .map(|h| h.select(0, set as i64))
                .collect::<Result<_>>()?;
            let mut ys: Vec<Tensor> = Vec::with_capacity(steps as usize);
            for k in 0..steps {
                let t = if dir == 1 { steps - 1 - k } else { k };
                state = step(cell, &gi.select(0, t)?, &state, &w)?;
                ys.push(state[0].clone());
            }
            if dir == 1 {
                ys.reverse();
            }
            let y = if ys.is_empty() {
                let b = x.sizes()[1];
                let hs = state[0].sizes()[1];
                Tensor::zeros(&[0, b, hs], x.dtype())?
            } else {
                stack(&ys, 0)?
            };
            outs.push(y);
            for (f, s) in finals.iter_mut().zip(state) {
                f.push(s);
            }
        }
        x = if outs.len() == 1 {
            outs.pop().unwrap_or(x)
        } else {
            cat(&outs, 2)?
        };
        if o.dropout > 0.0 && o.train && (layer as i64) < o.num_layers - 1 {
            x = dropout(&x, o.dropout, true, None)?;
        }
    }
    let out = if o.batch_first { x.transpose(0, 1)? } else { x };
    let states = finals
        .iter()
        .map(|f| stack(f, 0))
        .collect::<Result<Vec<_>>>()?;
    Ok((out, states))
}

/// `lstm(input, [h0, c0], params, has_biases, num_layers, dropout, train, bidirectional,
/// batch_first)` (`aten::lstm.input`): returns `(output, h_n, c_n)`. `params` lists, per layer
/// and direction, `w_ih, w_hh[, b_ih, b_hh][, w_hr]`.
pub fn lstm(
    input: &Tensor,
    hx: &[Tensor],
    params: &[Tensor],
    opts: RnnOptions,
) -> Result<(Tensor, Tensor, Tensor)> {
    if hx.len() != 2 {
        return Err(Error::runtime(format!(
            "lstm expects two hidden states, got {}",
            hx.len()
        )));
    }
    let (out, mut s) = run_sequence(Cell::Lstm, input, hx, params, opts)?;
    let c = s
        .pop()
        .ok_or_else(|| Error::runtime("lstm: missing state"))?;
    let h = s
        .pop()
        .ok_or_else(|| Error::runtime("lstm: missing state"))?;
    Ok((out, h, c))
}

macro_rules! single_state_seq {
    ($(#[$doc:meta])* $name:ident, $cell:expr) => {
        $(#[$doc])*
        pub fn $name(input: &Tensor, hx: &Tensor, params: &[Tensor], opts: RnnOptions) -> Result<(Tensor, Tensor)> {
            let (out, mut s) = run_sequence($cell, input, std::slice::from_ref(hx), params, opts)?;
            let h = s.pop().ok_or_else(|| Error::runtime("rnn: missing state"))?;
            Ok((out, h))
        }
    };
}

single_state_seq!(
    /// `gru(input, hx, params, ...)` (`aten::gru.input`): returns `(output, h_n)`.
    gru,
    Cell::Gru
);
single_state_seq!(
    /// `rnn_tanh(input, hx, params, ...)` (`aten::rnn_tanh.input`): returns `(output, h_n)`.
    rnn_tanh,
    Cell::Tanh
);
single_state_seq!(
    /// `rnn_relu(input, hx, params, ...)` (`aten::rnn_relu.input`): returns `(output, h_n)`.
    rnn_relu,
    Cell::Relu
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    fn values(n: usize, seed: u32) -> Vec<f64> {
        (0..n)
            .map(|i| (((i as u32).wrapping_mul(2654435761) ^ seed) % 1000) as f64 / 125.0 - 4.0)
            .collect()
    }

    #[test]
    fn fused_lstm_step_equals_the_unfused_ops() {
        for (dt, b, hidden) in [
            (DType::Float32, 3, 5),
            (DType::Float64, 2, 17),
            (DType::Float32, 1, 1),
        ] {
            let t = |v: Vec<f64>, s: &[i64]| {
                Tensor::from_vec(v, s).unwrap().to_dtype(dt, false).unwrap()
            };
            let gi = t(values(b * 4 * hidden, 1), &[b as i64, 4 * hidden as i64]);
            let gh = t(values(b * 4 * hidden, 7), &[b as i64, 4 * hidden as i64]);
            // A strided previous state, as `hx.select(0, layer)` of a transposed tensor gives.
            let c = t(values(b * hidden, 3), &[hidden as i64, b as i64])
                .t()
                .unwrap();
            let (h1, c1) = lstm_pointwise(&gi, &gh, &c).unwrap().expect("fused path");
            let g = gi.add(&gh, Scalar::Int(1)).unwrap().chunk(4, 1).unwrap();
            let c2 = g[1]
                .sigmoid()
                .unwrap()
                .mul(&c)
                .unwrap()
                .add(
                    &g[0].sigmoid().unwrap().mul(&g[2].tanh().unwrap()).unwrap(),
                    Scalar::Int(1),
                )
                .unwrap();
            let h2 = g[3].sigmoid().unwrap().mul(&c2.tanh().unwrap()).unwrap();
            assert_eq!(c1.to_vec::<f64>(), c2.to_vec::<f64>(), "{dt:?}");
            assert_eq!(h1.to_vec::<f64>(), h2.to_vec::<f64>(), "{dt:?}");
            assert_eq!(h1.dtype(), dt);
        }
        // Other dtypes and mismatched shapes take the unfused path.
        let half = Tensor::zeros(&[1, 4], DType::Float16).unwrap();
        let c = Tensor::zeros(&[1, 1], DType::Float16).unwrap();
        assert!(lstm_pointwise(&half, &half, &c).unwrap().is_none());
        let f = Tensor::zeros(&[1, 8], DType::Float32).unwrap();
        let c = Tensor::zeros(&[1, 1], DType::Float32).unwrap();
        assert!(lstm_pointwise(&f, &f, &c).unwrap().is_none());
    }
}
