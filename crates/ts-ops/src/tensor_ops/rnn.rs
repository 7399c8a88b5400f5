//! Recurrent operators: the cells and the multi-layer sequence ops (`lstm`, `gru`, `rnn_tanh`,
//! `rnn_relu`) on padded (`.input`) and packed (`.data`) sequences, over ts-tensor's kernels.

use ts_tensor::{cat, Error, RnnOptions, Tensor};

use super::{def, Args};
use crate::registry::Registry;

type R<T> = Result<T, Error>;

/// The option tail starting at argument `i`: `has_biases, num_layers, dropout, train,
/// bidirectional[, batch_first]`.
fn options(a: &Args, i: usize, batch_first: bool) -> R<RnnOptions> {
    Ok(RnnOptions {
        has_biases: a.b(i)?,
        num_layers: a.int(i + 1)?,
        dropout: a.f(i + 2)?,
        train: a.b(i + 3)?,
        bidirectional: a.b(i + 4)?,
        batch_first: batch_first && a.b(i + 5)?,
    })
}

/// A packed sequence's `batch_sizes`: non-increasing positive counts per time step.
fn batch_sizes(data: &Tensor, bs: &Tensor) -> R<Vec<i64>> {
    if bs.dim() != 1 || !bs.dtype().is_integral() {
        return Err(Error::runtime(format!(
            "batch_sizes must be a 1D tensor of integers, got a {}D tensor",
            bs.dim()
        )));
    }
    let v: Vec<i64> = bs.to_dtype(ts_tensor::DType::Int64, false)?.to_vec();
    if v.is_empty() || v.iter().any(|&b| b <= 0) || v.windows(2).any(|w| w[1] > w[0]) {
        return Err(Error::runtime(
            "batch_sizes must be non-empty, positive and non-increasing",
        ));
    }
    if data.dim() != 2 || data.sizes()[0] != v.iter().sum::<i64>() {
        return Err(Error::runtime(format!(
            "packed data of shape {:?} does not match batch_sizes (total {})",
            data.sizes().as_slice(),
            v.iter().sum::<i64>()
        )));
    }
    Ok(v)
}

/// Runs a sequence op over a packed sequence, one batch element at a time (each on its own
/// length, so reverse directions and final states see only real steps), and packs the outputs
/// back. `run(input [L, 1, F], states narrowed to the element) -> (output, final states)`.
fn run_packed(
    data: &Tensor,
    bs: &Tensor,
    hx: &[Tensor],
    run: impl Fn(&Tensor, &[Tensor]) -> R<(Tensor, Vec<Tensor>)>,
) -> R<(Tensor, Vec<Tensor>)> {
    let sizes = batch_sizes(data, bs)?;
    let batch = sizes[0];
    let mut starts = Vec::with_capacity(sizes.len());
    let mut acc = 0;
    for &s in &sizes {
        starts.push(acc);
        acc += s;
    }
    let mut outs = Vec::with_capacity(batch as usize);
    let mut finals: Vec<Vec<Tensor>> = vec![Vec::new(); hx.len()];
    let mut out_start = Vec::with_capacity(batch as usize);
    let mut total = 0;
    for b in 0..batch {
        let len = sizes.iter().take_while(|&&s| s > b).count() as i64;
        let rows: Vec<i64> = (0..len as usize).map(|t| starts[t] + b).collect();
        let idx = Tensor::from_vec(rows, &[len])?;
        let x = data.index_select(0, &idx)?.unsqueeze(1)?;
        let h: Vec<Tensor> = hx.iter().map(|h| h.narrow(1, b, 1)).collect::<R<_>>()?;
        let (y, states) = run(&x, &h)?;
        outs.push(y.squeeze_dim(1)?);
        out_start.push(total);
        total += len;
        for (f, s) in finals.iter_mut().zip(states) {
            f.push(s);
        }
    }
    let all = cat(&outs, 0)?;
    let mut order = Vec::with_capacity(total as usize);
    for (t, &s) in sizes.iter().enumerate() {
        order.extend(out_start.iter().take(s as usize).map(|&b| b + t as i64));
    }
    let n = order.len() as i64;
    let out = all.index_select(0, &Tensor::from_vec(order, &[n])?)?;
    let states = finals.iter().map(|f| cat(f, 1)).collect::<R<Vec<_>>>()?;
    Ok((out, states))
}

/// The single-state sequence ops (`gru`, `rnn_tanh`, `rnn_relu`).
type SeqFn = fn(&Tensor, &Tensor, &[Tensor], RnnOptions) -> R<(Tensor, Tensor)>;

fn bind_single_state(r: &Registry, name: &str, f: SeqFn) {
    def(r, &format!("aten::{name}.input"), move |a| {
        f(a.t(0)?, a.t(1)?, &a.tensors(2)?, options(a, 3, true)?)
    });
    def(r, &format!("aten::{name}.data"), move |a| {
        let opts = options(a, 4, false)?;
        let params = a.tensors(3)?;
        let (out, mut states) = run_packed(a.t(0)?, a.t(1)?, &[a.t(2)?.clone()], |x, h| {
            let (y, hn) = f(x, &h[0], &params, opts)?;
            Ok((y, vec![hn]))
        })?;
        let h = states
            .pop()
            .ok_or_else(|| Error::runtime("internal error: missing state"))?;
        Ok((out, h))
    });
}

/// Registers the recurrent operators.
pub fn register(r: &Registry) {
    def(r, "aten::lstm.input", |a| {
        ts_tensor::lstm(
            a.t(0)?,
            &a.tensors(1)?,
            &a.tensors(2)?,
            options(a, 3, true)?,
        )
    });
    def(r, "aten::lstm.data", |a| {
        let opts = options(a, 4, false)?;
        let params = a.tensors(3)?;
        let hx = a.tensors(2)?;
        if hx.len() != 2 {
            return Err(Error::runtime(format!(
                "lstm expects two hidden states, got {}",
                hx.len()
            )));
        }
        let (out, states) = run_packed(a.t(0)?, a.t(1)?, &hx, |x, h| {
            let (y, hn, cn) = ts_tensor::lstm(x, h, &params, opts)?;
            Ok((y, vec![hn, cn]))
        })?;
        let [h, c]: [Tensor; 2] = states
            .try_into()
            .map_err(|_| Error::runtime("internal error: missing state"))?;
        Ok((out, h, c))
    });
    bind_single_state(r, "gru", ts_tensor::gru);
    bind_single_state(r, "rnn_tanh", ts_tensor::rnn_tanh);
    bind_single_state(r, "rnn_relu", ts_tensor::rnn_relu);

    def(r, "aten::lstm_cell", |a| {
        ts_tensor::lstm_cell(
            a.t(0)?,
            &a.tensors(1)?,
            a.t(2)?,
            a.t(3)?,
            a.ot(4)?,
            a.ot(5)?,
        )
    });
    let cells: [(&str, CellFn); 3] = [
        ("aten::gru_cell", ts_tensor::gru_cell),
        ("aten::rnn_tanh_cell", ts_tensor::rnn_tanh_cell),
        ("aten::rnn_relu_cell", ts_tensor::rnn_relu_cell),
    ];
    for (name, f) in cells {
        def(r, name, move |a| {
            f(a.t(0)?, a.t(1)?, a.t(2)?, a.t(3)?, a.ot(4)?, a.ot(5)?)
        });
    }
}

/// The single-state cells (`gru_cell`, `rnn_tanh_cell`, `rnn_relu_cell`).
type CellFn = fn(&Tensor, &Tensor, &Tensor, &Tensor, Option<&Tensor>, Option<&Tensor>) -> R<Tensor>;
