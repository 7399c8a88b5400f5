//! Backward kernels of the parameterized layers: convolutions, embeddings and embedding bags,
//! weight norm, distances, grid sampling, the RNN cells and CPU flash attention.
//! `output_mask` entries that are false give undefined (None) gradients, as in ATen.

use ts_core::IValue;
use ts_tensor::{DType, Error, Tensor};

use super::{bools, ints, tv, vjp, vjp_op, zeros, Grads};
use crate::autograd::ops as o;
use crate::registry::Registry;
use crate::tensor_ops::{def, Args};

fn call(name: &str, args: Vec<IValue>) -> Result<Tensor, Error> {
    o::call1(name, args)
}

/// Keeps the gradients whose mask entry is true.
fn masked(v: Vec<Tensor>, mask: &[bool]) -> Vec<Option<Tensor>> {
    v.into_iter()
        .zip(mask)
        .map(|(t, &m)| if m { Some(t) } else { None })
        .collect()
}

/// `grad` summed over every dimension but 1 (a convolution's bias gradient).
fn bias_grad(g: &Tensor) -> Result<Tensor, Error> {
    let dims: Vec<i64> = (0..g.dim() as i64).filter(|&d| d != 1).collect();
    o::sum_dims(g, &dims, false)
}

/// `convolution_backward(grad, input, weight, bias_sizes, stride, padding, dilation,
/// transposed, output_padding, groups, output_mask)`.
fn convolution_backward(a: &Args, conv: &[IValue], mask: &[bool]) -> Result<Grads, Error> {
    let (g, x, w) = (a.t(0)?, a.t(1)?, a.t(2)?);
    let mut args = vec![tv(x), tv(w), IValue::None];
    args.extend(conv.iter().cloned());
    let v = if mask[0] || mask[1] {
        vjp_op("aten::convolution", args, &[0, 1], g)?
    } else {
        // Validates the shapes the same way.
        o::call1("aten::convolution", args)?;
        vec![o::zeros_like(x)?, o::zeros_like(w)?]
    };
    let mut out = masked(v, &mask[..2]);
    out.push(if mask[2] { Some(bias_grad(g)?) } else { None });
    Ok(Grads(out))
}

/// `embedding_dense_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq)`.
fn embedding_dense_backward(
    g: &Tensor,
    idx: &Tensor,
    num_weights: i64,
    padding_idx: i64,
    scale_by_freq: bool,
) -> Result<Tensor, Error> {
    if !matches!(idx.dtype(), DType::Int64 | DType::Int32) {
        return Err(Error::runtime(format!(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got {:?} instead",
            idx.dtype()
        )));
    }
    let flat = o::to_dtype(&o::reshape(idx, &[-1])?, DType::Int64)?;
    let n = flat.numel() as i64;
    let d = if n == 0 {
        g.sizes().last().copied().unwrap_or(0)
    } else {
        g.numel() as i64 / n
    };
    let rows = o::reshape(g, &[n, d])?;
    let rows = if padding_idx >= 0 {
        let keep = o::call1("aten::ne.Scalar", vec![tv(&flat), IValue::Int(padding_idx)])?;
        o::mask(&o::unsqueeze(&keep, 1)?, &rows)?
    } else {
        rows
    };
    let rows = if scale_by_freq && n > 0 {
        let counts = call(
            "aten::bincount",
            vec![tv(&flat), IValue::None, IValue::Int(num_weights)],
        )?;
        let per = call(
            "aten::index_select",
            vec![tv(&counts), IValue::Int(0), tv(&flat)],
        )?;
        o::div(&rows, &o::unsqueeze(&o::to_dtype(&per, g.dtype())?, 1)?)?
    } else {
        rows
    };
    let z = zeros(&[num_weights, d], g)?;
    call(
        "aten::index_add",
        vec![tv(&z), IValue::Int(0), tv(&flat), tv(&rows), IValue::Int(1)],
    )
}

/// `_weight_norm_interface_backward(grad_w, v, g, norms, dim)` through
/// `w = v * g / ||v||` (norm over every dimension but `dim`).
fn weight_norm_backward(a: &Args) -> Result<(Tensor, Tensor), Error> {
    let (gw, v, g, dim) = (a.t(0)?, a.t(1)?, a.t(2)?, a.int(4)?);
    let nd = v.dim() as i64;
    let dim = if dim < 0 { dim + nd } else { dim };
    let dims: Vec<i64> = (0..nd).filter(|&d| d != dim || dim == -1).collect();
    let mut r = vjp(&[v, g], &[Some(gw.clone())], |l| {
        let sq = o::mul(&l[0], &l[0])?;
        let norm = o::sqrt(&o::sum_dims(&sq, &dims, true)?)?;
        Ok(vec![o::mul(&l[0], &o::div(&l[1], &norm)?)?])
    })?;
    let gg = r.pop().unwrap_or(o::zeros_like(g)?);
    let gv = r.pop().unwrap_or(o::zeros_like(v)?);
    Ok((gv, gg))
}

/// `affine_grid_generator_backward(grad, size, align_corners)`: the grid is
/// `base @ theta^T`, so `grad_theta = grad^T @ base` with `base` the homogeneous
/// coordinates of the output grid.
fn affine_grid_backward(g: &Tensor, size: &[i64], align: bool) -> Result<Tensor, Error> {
    let k = match size.len() {
        4 => 2,
        5 => 3,
        n => {
            return Err(Error::runtime(format!(
                "affine_grid_generator_backward needs a 4-D or 5-D size, got {n} dimensions"
            )))
        }
    };
    let n = size[0];
    let mut expected = vec![n];
    expected.extend_from_slice(&size[2..]);
    expected.push(k);
    if g.sizes().as_slice() != expected {
        return Err(Error::runtime(format!(
            "affine_grid_generator_backward: expected grad of shape {expected:?}, got {:?}",
            g.sizes().as_slice()
        )));
    }
    // theta = [I | 0] gives the base coordinates themselves.
    let eye = call(
        "aten::eye.m",
        vec![
            IValue::Int(k),
            IValue::Int(k + 1),
            IValue::Int(g.dtype().scalar_type_index()),
            IValue::None,
            IValue::None,
            IValue::None,
        ],
    )?;
    let theta = o::expand(&o::unsqueeze(&eye, 0)?, &[n, k, k + 1])?;
    let coords = call(
        "aten::affine_grid_generator",
        vec![tv(&theta), ints(size), IValue::Bool(align)],
    )?;
    let coords = o::reshape(&coords, &[n, -1, k])?;
    let ones = call(
        "aten::ones_like",
        vec![
            tv(&o::call1(
                "aten::narrow",
                vec![tv(&coords), IValue::Int(2), IValue::Int(0), IValue::Int(1)],
            )?),
            IValue::None,
            IValue::None,
            IValue::None,
            IValue::None,
            IValue::None,
        ],
    )?;
    let base = call(
        "aten::cat",
        vec![IValue::tensor_list([coords, ones]), IValue::Int(2)],
    )?;
    let g2 = o::reshape(g, &[n, -1, k])?;
    o::bmm(&o::transpose(&g2, 1, 2)?, &base)
}

/// `a + b` where `b` may be absent.
fn add_opt(a: &Tensor, b: Option<&Tensor>) -> Result<Tensor, Error> {
    match b {
        Some(b) => o::add(a, b),
        None => Ok(a.clone()),
    }
}

/// Four (LSTM) or three (GRU) equal column blocks of `t`.
fn blocks(t: &Tensor, n: i64) -> Result<Vec<Tensor>, Error> {
    let w = t.sizes().last().copied().unwrap_or(0);
    if t.dim() != 2 || w % n != 0 {
        return Err(Error::runtime(format!(
            "expected gates of shape [batch, {n} * hidden], got {:?}",
            t.sizes().as_slice()
        )));
    }
    let h = w / n;
    (0..n)
        .map(|k| {
            o::call1(
                "aten::narrow",
                vec![tv(t), IValue::Int(1), IValue::Int(k * h), IValue::Int(h)],
            )
        })
        .collect()
}

/// `_thnn_differentiable_lstm_cell_backward(grad_hy, grad_cy, input_gates, hidden_gates,
/// input_bias, hidden_bias, cx, cy)`: with the activated gates `i, f, g, o`, the gradient of
/// the summed gate pre-activations, of `cx`, and of the biases (their sum over the batch).
fn lstm_cell_backward(a: &Args) -> Result<Grads, Error> {
    let (ghy, gcy) = (a.ot(0)?, a.ot(1)?);
    let pre = o::add(a.t(2)?, a.t(3)?)?;
    let pre = add_opt(&add_opt(&pre, a.ot(4)?)?, a.ot(5)?)?;
    let (cx, cy) = (a.t(6)?, a.t(7)?);
    let b = blocks(&pre, 4)?;
    let (i, f, gg, og) = (
        o::sigmoid(&b[0])?,
        o::sigmoid(&b[1])?,
        o::tanh(&b[2])?,
        o::sigmoid(&b[3])?,
    );
    let tcy = o::tanh(cy)?;
    let zero = o::zeros_like(cy)?;
    let ghy = ghy.cloned().unwrap_or(zero.clone());
    let gcy = gcy.cloned().unwrap_or(zero);
    let one_minus = |t: &Tensor| o::rsub_s(t, 1.0);
    let gc = o::add(
        &gcy,
        &o::mul(&o::mul(&ghy, &og)?, &one_minus(&o::mul(&tcy, &tcy)?)?)?,
    )?;
    let d_o = o::mul(&o::mul(&ghy, &tcy)?, &o::mul(&og, &one_minus(&og)?)?)?;
    let d_i = o::mul(&o::mul(&gc, &gg)?, &o::mul(&i, &one_minus(&i)?)?)?;
    let d_g = o::mul(&o::mul(&gc, &i)?, &one_minus(&o::mul(&gg, &gg)?)?)?;
    let d_f = o::mul(&o::mul(&gc, cx)?, &o::mul(&f, &one_minus(&f)?)?)?;
    let gates = call(
        "aten::cat",
        vec![IValue::tensor_list([d_i, d_f, d_g, d_o]), IValue::Int(1)],
    )?;
    let gcx = o::mul(&gc, &f)?;
    let gb = if a.ot(4)?.is_some() {
        Some(o::sum_dims(&gates, &[0], false)?)
    } else {
        None
    };
    Ok(Grads(vec![
        Some(gates.clone()),
        Some(gates),
        Some(gcx),
        gb.clone(),
        gb,
    ]))
}

/// `_thnn_differentiable_gru_cell_backward(grad_hy, input_gates, hidden_gates, hx,
/// input_bias, hidden_bias)`: `hy = (1 - z) n + z hx`, `n = tanh(i_n + r h_n)`.
fn gru_cell_backward(a: &Args) -> Result<Grads, Error> {
    let ghy = a.t(0)?;
    let ig = add_opt(a.t(1)?, a.ot(4)?)?;
    let hg = add_opt(a.t(2)?, a.ot(5)?)?;
    let hx = a.t(3)?;
    let ib = blocks(&ig, 3)?;
    let hb = blocks(&hg, 3)?;
    let rg = o::sigmoid(&o::add(&ib[0], &hb[0])?)?;
    let zg = o::sigmoid(&o::add(&ib[1], &hb[1])?)?;
    let hn = hb[2].clone();
    let ng = o::tanh(&o::add(&ib[2], &o::mul(&rg, &hn)?)?)?;
    let one_minus = |t: &Tensor| o::rsub_s(t, 1.0);
    let ghx = o::mul(ghy, &zg)?;
    let gn = o::mul(
        &o::mul(ghy, &one_minus(&zg)?)?,
        &one_minus(&o::mul(&ng, &ng)?)?,
    )?;
    let gz = o::mul(
        &o::mul(ghy, &o::sub(hx, &ng)?)?,
        &o::mul(&zg, &one_minus(&zg)?)?,
    )?;
    let ghn = o::mul(&gn, &rg)?;
    let gr = o::mul(&o::mul(&gn, &hn)?, &o::mul(&rg, &one_minus(&rg)?)?)?;
    let gin = call(
        "aten::cat",
        vec![
            IValue::tensor_list([gr.clone(), gz.clone(), gn]),
            IValue::Int(1),
        ],
    )?;
    let ghid = call(
        "aten::cat",
        vec![IValue::tensor_list([gr, gz, ghn]), IValue::Int(1)],
    )?;
    let (bi, bh) = if a.ot(4)?.is_some() {
        (
            Some(o::sum_dims(&gin, &[0], false)?),
            Some(o::sum_dims(&ghid, &[0], false)?),
        )
    } else {
        (None, None)
    };
    Ok(Grads(vec![Some(gin), Some(ghid), Some(ghx), bi, bh]))
}

/// `_convolution_double_backward(ggI, ggW, ggb, gO, weight, input, conv..., output_mask)`:
/// the gradient of the output gradient (`conv(ggI, w) + conv(x, ggW) + ggb`), and of the
/// first backward's input and weight gradients contracted with `gO`.
fn convolution_double_backward(a: &Args) -> Result<Grads, Error> {
    let (ggi, ggw, ggb) = (a.ot(0)?, a.ot(1)?, a.ot(2)?);
    let (go, w, x) = (a.t(3)?, a.t(4)?, a.t(5)?);
    let mask = bools(a, 12, 3)?;
    let conv_args = &a.0[6..12];
    let conv = |input: &Tensor, weight: &Tensor| {
        let mut args = vec![tv(input), tv(weight), IValue::None];
        args.extend(conv_args.iter().cloned());
        call("aten::convolution", args)
    };
    let ggo = if mask[0] {
        let mut acc: Option<Tensor> = None;
        let mut add = |t: Tensor| -> Result<(), Error> {
            acc = Some(match acc.take() {
                Some(p) => o::add(&p, &t)?,
                None => t,
            });
            Ok(())
        };
        if let Some(ggi) = ggi {
            add(conv(ggi, w)?)?;
        }
        if let Some(ggw) = ggw {
            add(conv(x, ggw)?)?;
        }
        if let Some(ggb) = ggb {
            let mut view = vec![1, -1];
            view.extend(std::iter::repeat_n(1, go.dim().saturating_sub(2)));
            let b = o::expand(&o::reshape(ggb, &view)?, &go.sizes())?;
            add(o::call1("aten::contiguous", vec![tv(&b), IValue::Int(0)])?)?;
        }
        acc
    } else {
        None
    };
    let gw = match ggi {
        Some(ggi) if mask[2] => {
            Some(vjp(&[w], &[Some(go.clone())], |l| Ok(vec![conv(ggi, &l[0])?]))?.remove(0))
        }
        _ => None,
    };
    let gi = match ggw {
        Some(ggw) if mask[1] => {
            Some(vjp(&[x], &[Some(go.clone())], |l| Ok(vec![conv(&l[0], ggw)?]))?.remove(0))
        }
        _ => None,
    };
    Ok(Grads(vec![ggo, gi, gw]))
}

/// How often each row of the embedding table is indexed, per index position.
fn index_counts(flat: &Tensor, num_weights: i64) -> Result<Tensor, Error> {
    let counts = call(
        "aten::bincount",
        vec![tv(flat), IValue::None, IValue::Int(num_weights)],
    )?;
    call(
        "aten::index_select",
        vec![tv(&counts), IValue::Int(0), tv(flat)],
    )
}

/// `_embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices,
/// num_weights, scale_grad_by_freq, mode, per_sample_weights, padding_idx)`.
#[allow(clippy::too_many_arguments)]
fn embedding_bag_dense_backward(
    g: &Tensor,
    indices: &Tensor,
    offset2bag: &Tensor,
    bag_size: &Tensor,
    max_idx: &Tensor,
    num_weights: i64,
    freq: bool,
    mode: i64,
    psw: Option<&Tensor>,
    padding_idx: i64,
) -> Result<Tensor, Error> {
    if g.dim() != 2 {
        return Err(Error::runtime(format!(
            "embedding_bag backward: expected a 2-D grad, got {} dimensions",
            g.dim()
        )));
    }
    let d = g.sizes()[1];
    let z = zeros(&[num_weights, d], g)?;
    let flat = o::to_dtype(&o::reshape(indices, &[-1])?, DType::Int64)?;
    match mode {
        0 | 1 => {
            let bags = o::to_dtype(&o::reshape(offset2bag, &[-1])?, DType::Int64)?;
            let mut rows = call("aten::index_select", vec![tv(g), IValue::Int(0), tv(&bags)])?;
            if mode == 1 {
                let sizes = call(
                    "aten::index_select",
                    vec![tv(bag_size), IValue::Int(0), tv(&bags)],
                )?;
                rows = o::div(&rows, &o::unsqueeze(&o::to_dtype(&sizes, g.dtype())?, 1)?)?;
            }
            if let Some(p) = psw {
                if mode != 0 {
                    return Err(Error::runtime(
                        "embedding_bag_backward: per_sample_weights only supported for mode='sum'",
                    ));
                }
                rows = o::mul(&rows, &o::unsqueeze(p, 1)?)?;
            }
            if padding_idx >= 0 {
                let keep = o::call1("aten::ne.Scalar", vec![tv(&flat), IValue::Int(padding_idx)])?;
                rows = o::mask(&o::unsqueeze(&keep, 1)?, &rows)?;
            }
            if freq && flat.numel() > 0 {
                let per = index_counts(&flat, num_weights)?;
                rows = o::div(&rows, &o::unsqueeze(&o::to_dtype(&per, g.dtype())?, 1)?)?;
            }
            call(
                "aten::index_add",
                vec![tv(&z), IValue::Int(0), tv(&flat), tv(&rows), IValue::Int(1)],
            )
        }
        2 => {
            let mi = o::to_dtype(max_idx, DType::Int64)?;
            if mi.sizes() != g.sizes() {
                return Err(Error::runtime(format!(
                    "embedding_bag backward: maximum_indices of shape {:?} do not match grad of shape {:?}",
                    mi.sizes().as_slice(),
                    g.sizes().as_slice()
                )));
            }
            // Empty bags (size 0) have no maximum; their index is a placeholder.
            let nonempty = o::gt_s(&o::reshape(bag_size, &[-1, 1])?, 0.0)?;
            let valid = o::call1(
                "aten::logical_and",
                vec![tv(&o::ge_s(&mi, 0.0)?), tv(&nonempty)],
            )?;
            let mut rows = o::mask(&valid, g)?;
            let safe = o::where_(&valid, &mi, &o::zeros_like(&mi)?)?;
            if freq && flat.numel() > 0 {
                let counts = call(
                    "aten::bincount",
                    vec![tv(&flat), IValue::None, IValue::Int(num_weights)],
                )?;
                let per = call(
                    "aten::index_select",
                    vec![tv(&counts), IValue::Int(0), tv(&o::reshape(&safe, &[-1])?)],
                )?;
                let per = o::reshape(&o::to_dtype(&per, g.dtype())?, &g.sizes())?;
                let per = o::where_(&valid, &per, &o::add_s(&o::zeros_like(&per)?, 1.0)?)?;
                rows = o::div(&rows, &per)?;
            }
            call(
                "aten::scatter_add",
                vec![tv(&z), IValue::Int(0), tv(&safe), tv(&rows)],
            )
        }
        m => Err(Error::runtime(format!(
            "embedding_bag backward: unknown mode {m} (0 sum, 1 mean, 2 max)"
        ))),
    }
}

/// `_embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag,
/// mode, padding_idx)`: each sample's weight gradient is its bag's gradient dotted with the
/// row it selected.
fn per_sample_weights_backward(a: &Args) -> Result<Tensor, Error> {
    let (g, w, indices, offset2bag) = (a.t(0)?, a.t(1)?, a.t(2)?, a.t(4)?);
    let (mode, padding_idx) = (a.int(5)?, a.int(6)?);
    if mode != 0 {
        return Err(Error::runtime(
            "embedding_bag_backward: per_sample_weights only supported for mode='sum'",
        ));
    }
    let flat = o::to_dtype(&o::reshape(indices, &[-1])?, DType::Int64)?;
    let bags = o::to_dtype(&o::reshape(offset2bag, &[-1])?, DType::Int64)?;
    let gr = call("aten::index_select", vec![tv(g), IValue::Int(0), tv(&bags)])?;
    let wr = call("aten::index_select", vec![tv(w), IValue::Int(0), tv(&flat)])?;
    let dot = o::sum_dims(&o::mul(&gr, &wr)?, &[1], false)?;
    if padding_idx >= 0 {
        let keep = o::call1("aten::ne.Scalar", vec![tv(&flat), IValue::Int(padding_idx)])?;
        o::mask(&keep, &dot)
    } else {
        Ok(dot)
    }
}

/// `matrix_exp_backward(self, grad)`: the Fréchet derivative of the exponential at `A^H`
/// applied to `grad`, read off the upper-right block of `exp([[A^H, G], [0, A^H]])`.
fn matrix_exp_backward(x: &Tensor, g: &Tensor) -> Result<Tensor, Error> {
    let nd = x.dim();
    if nd < 2 || x.sizes()[nd - 1] != x.sizes()[nd - 2] || g.sizes() != x.sizes() {
        return Err(Error::runtime(format!(
            "matrix_exp_backward: expected square matrices of equal shapes, got {:?} and {:?}",
            x.sizes().as_slice(),
            g.sizes().as_slice()
        )));
    }
    let n = x.sizes()[nd - 1];
    let ah = o::mh(x)?;
    let z = o::zeros_like(&ah)?;
    let top = call(
        "aten::cat",
        vec![
            IValue::tensor_list([ah.clone(), g.clone()]),
            IValue::Int(-1),
        ],
    )?;
    let bottom = call(
        "aten::cat",
        vec![IValue::tensor_list([z, ah]), IValue::Int(-1)],
    )?;
    let m = call(
        "aten::cat",
        vec![IValue::tensor_list([top, bottom]), IValue::Int(-2)],
    )?;
    let e = call("aten::linalg_matrix_exp", vec![tv(&m)])?;
    let rows = o::call1(
        "aten::narrow",
        vec![tv(&e), IValue::Int(-2), IValue::Int(0), IValue::Int(n)],
    )?;
    let block = o::call1(
        "aten::narrow",
        vec![tv(&rows), IValue::Int(-1), IValue::Int(n), IValue::Int(n)],
    )?;
    o::call1("aten::contiguous", vec![tv(&block), IValue::Int(0)])
}

pub(super) fn register(r: &Registry) {
    def(r, "aten::convolution_backward", |a| {
        let mask = bools(a, 10, 3)?;
        convolution_backward(a, &a.0[4..10], &mask)
    });
    def(r, "aten::_slow_conv2d_backward.output_mask", |a| {
        let mask = bools(a, 6, 3)?;
        let conv = [
            a.v(4)?.clone(),
            a.v(5)?.clone(),
            ints(&[1, 1]),
            IValue::Bool(false),
            ints(&[0, 0]),
            IValue::Int(1),
        ];
        convolution_backward(a, &conv, &mask)
    });
    // The `out=` form computes all three gradients.
    def(r, "aten::_slow_conv2d_backward.grad_input", |a| {
        let mut args = a.0[..6].to_vec();
        args.push(IValue::bool_list([true, true, true]));
        let r = crate::autograd::ops::call("aten::_slow_conv2d_backward.output_mask", args)?;
        let mut outs = Vec::new();
        for (k, v) in r.iter().enumerate() {
            let t = v
                .as_tensor()
                .ok_or_else(|| Error::runtime("_slow_conv2d_backward: missing gradient"))?;
            outs.push(ts_tensor::resize_out_and_copy(a.t(6 + k)?, t)?);
        }
        let mut it = outs.into_iter();
        match (it.next(), it.next(), it.next()) {
            (Some(x), Some(y), Some(z)) => Ok((x, y, z)),
            _ => Err(Error::runtime("_slow_conv2d_backward: internal error")),
        }
    });
    def(r, "aten::conv_tbc_backward", |a| {
        let (g, x, w, b, pad) = (a.t(0)?, a.t(1)?, a.t(2)?, a.t(3)?, a.int(4)?);
        // conv_tbc is conv1d over [batch, channels, time] with the weight as [out, in, k].
        let v = vjp(&[x, w, b], &[Some(g.clone())], |l| {
            let input = o::permute(&l[0], &[1, 2, 0])?;
            let weight = o::permute(&l[1], &[2, 1, 0])?;
            let y = call(
                "aten::convolution",
                vec![
                    tv(&input),
                    tv(&weight),
                    tv(&l[2]),
                    ints(&[1]),
                    ints(&[pad]),
                    ints(&[1]),
                    IValue::Bool(false),
                    ints(&[0]),
                    IValue::Int(1),
                ],
            )?;
            Ok(vec![o::permute(&y, &[2, 0, 1])?])
        })?;
        let mut it = v.into_iter();
        match (it.next(), it.next(), it.next()) {
            (Some(a), Some(b), Some(c)) => Ok((a, b, c)),
            _ => Err(Error::runtime("conv_tbc_backward: internal error")),
        }
    });
    def(r, "aten::embedding_dense_backward", |a| {
        embedding_dense_backward(a.t(0)?, a.t(1)?, a.int(2)?, a.int(3)?, a.b(4)?)
    });
    def(r, "aten::embedding_backward", |a| {
        if a.b(5)? {
            return Err(Error::runtime(
                "embedding_backward with sparse=True returns a sparse gradient, which torchscript-rs does not support (sparse tensors)",
            ));
        }
        embedding_dense_backward(a.t(0)?, a.t(1)?, a.int(2)?, a.int(3)?, a.b(4)?)
    });
    for name in [
        "aten::_weight_norm_interface_backward",
        "aten::_weight_norm_differentiable_backward",
    ] {
        def(r, name, weight_norm_backward);
    }
    def(r, "aten::_cdist_backward", |a| {
        let (g, x1, x2, p) = (a.t(0)?, a.t(1)?, a.t(2)?, a.f(3)?);
        let v = vjp(&[x1], &[Some(g.clone())], |l| {
            Ok(vec![call(
                "aten::_cdist_forward",
                vec![tv(&l[0]), tv(x2), IValue::Double(p), IValue::None],
            )?])
        })?;
        Ok(v.into_iter().next().unwrap_or(o::zeros_like(x1)?))
    });
    def(r, "aten::_pdist_backward", |a| {
        let (g, x, p) = (a.t(0)?, a.t(1)?, a.f(2)?);
        Ok(vjp_op("aten::pdist", vec![tv(x), IValue::Double(p)], &[0], g)?.remove(0))
    });
    def(r, "aten::matrix_exp_backward", |a| {
        matrix_exp_backward(a.t(0)?, a.t(1)?)
    });
    for name in [
        "aten::grid_sampler_2d_backward",
        "aten::grid_sampler_3d_backward",
    ] {
        let fwd = if name.contains("2d") {
            "aten::grid_sampler_2d"
        } else {
            "aten::grid_sampler_3d"
        };
        def(r, name, move |a| {
            let mask = bools(a, 6, 2)?;
            let args = vec![
                tv(a.t(1)?),
                tv(a.t(2)?),
                IValue::Int(a.int(3)?),
                IValue::Int(a.int(4)?),
                IValue::Bool(a.b(5)?),
            ];
            let v = vjp_op(fwd, args, &[0, 1], a.t(0)?)?;
            Ok(Grads(masked(v, &mask)))
        });
    }
    def(r, "aten::_grid_sampler_2d_cpu_fallback_backward", |a| {
        let args = vec![
            tv(a.t(1)?),
            tv(a.t(2)?),
            IValue::Int(a.int(3)?),
            IValue::Int(a.int(4)?),
            IValue::Bool(a.b(5)?),
        ];
        let mut v = vjp_op("aten::grid_sampler_2d", args, &[0, 1], a.t(0)?)?;
        let gg = v.pop().unwrap_or(o::zeros_like(a.t(2)?)?);
        let gi = v.pop().unwrap_or(o::zeros_like(a.t(1)?)?);
        Ok((gi, gg))
    });
    def(r, "aten::affine_grid_generator_backward", |a| {
        affine_grid_backward(a.t(0)?, &a.ints(1)?, a.b(2)?)
    });
    def(
        r,
        "aten::_thnn_differentiable_lstm_cell_backward",
        lstm_cell_backward,
    );
    def(
        r,
        "aten::_thnn_differentiable_gru_cell_backward",
        gru_cell_backward,
    );
    def(
        r,
        "aten::_convolution_double_backward",
        convolution_double_backward,
    );
    def(r, "aten::_embedding_bag_dense_backward", |a| {
        embedding_bag_dense_backward(
            a.t(0)?,
            a.t(1)?,
            a.t(2)?,
            a.t(3)?,
            a.t(4)?,
            a.int(5)?,
            a.b(6)?,
            a.int(7)?,
            a.ot(8)?,
            a.int(9)?,
        )
    });
    def(r, "aten::_embedding_bag_backward", |a| {
        if a.b(9)? {
            return Err(Error::runtime(
                "_embedding_bag_backward with sparse=True returns a sparse gradient, which torchscript-rs does not support (sparse tensors)",
            ));
        }
        embedding_bag_dense_backward(
            a.t(0)?,
            a.t(1)?,
            a.t(3)?,
            a.t(4)?,
            a.t(5)?,
            a.int(6)?,
            a.b(7)?,
            a.int(8)?,
            a.ot(10)?,
            a.int(11)?,
        )
    });
    def(
        r,
        "aten::_embedding_bag_per_sample_weights_backward",
        per_sample_weights_backward,
    );
    def(
        r,
        "aten::_scaled_dot_product_flash_attention_for_cpu_backward",
        |a| {
            let dropout = a.f(6)?;
            if dropout != 0.0 {
                return Err(Error::runtime(format!(
                    "_scaled_dot_product_flash_attention_for_cpu_backward: dropout_p={dropout} needs the forward's dropout mask, which is not saved; only dropout_p=0 is supported"
                )));
            }
            let args = vec![
                tv(a.t(1)?),
                tv(a.t(2)?),
                tv(a.t(3)?),
                IValue::Double(0.0),
                IValue::Bool(a.b(7)?),
                a.v(8)?.clone(),
                a.v(9)?.clone(),
            ];
            let v = vjp(
                &[a.t(1)?, a.t(2)?, a.t(3)?],
                &[Some(a.t(0)?.clone())],
                |l| {
                    let mut args = args;
                    args[0] = tv(&l[0]);
                    args[1] = tv(&l[1]);
                    args[2] = tv(&l[2]);
                    let out = crate::autograd::ops::call(
                        "aten::_scaled_dot_product_flash_attention_for_cpu",
                        args,
                    )?;
                    match out.into_iter().next() {
                        Some(IValue::Tensor(t)) => Ok(vec![t]),
                        _ => Err(Error::runtime("attention returned no tensor")),
                    }
                },
            )?;
            let mut it = v.into_iter();
            match (it.next(), it.next(), it.next()) {
                (Some(a), Some(b), Some(c)) => Ok((a, b, c)),
                _ => Err(Error::runtime("attention backward: internal error")),
            }
        },
    );
}
