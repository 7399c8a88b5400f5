//! Further operators behind `torch.nn.functional` and its layers: `bilinear`, `conv_tbc`,
//! `pdist`, `rrelu`, `exponential_`, `embedding_renorm_`, the `native_group_norm` /
//! `_native_batch_norm_legit*` forms that also return statistics, and the softmax backward
//! formulas, composed from ts-tensor's kernels.

use ts_tensor::{factory, DType, Error, Operand, Scalar, Tensor};

use super::{def, def_many, Args};
use crate::registry::Registry;

type R<T> = Result<T, Error>;

const ONE: Scalar = Scalar::Int(1);

/// `bilinear(x1, x2, weight, bias)`: `y[..., o] = x1[..., i] W[o, i, j] x2[..., j] + b[o]`.
fn bilinear(x1: &Tensor, x2: &Tensor, w: &Tensor, bias: Option<&Tensor>) -> R<Tensor> {
    if x1.dim() != x2.dim() {
        return Err(Error::runtime(format!(
            "bilinear(): input dimensions do not match: got {} and {}",
            x1.dim(),
            x2.dim()
        )));
    }
    if w.dim() != 3 {
        return Err(Error::runtime(format!(
            "bilinear(): weight must be three-dimensional, but got {}-dimensional weight",
            w.dim()
        )));
    }
    let (ws, s1, s2) = (w.sizes(), x1.sizes(), x2.sizes());
    let nd = x1.dim();
    if nd == 0 || s1[..nd - 1] != s2[..nd - 1] {
        return Err(Error::runtime(format!(
            "bilinear(): input batch dimensions do not match: got {:?} and {:?}",
            s1.as_slice(),
            s2.as_slice()
        )));
    }
    if s1[nd - 1] != ws[1] {
        return Err(Error::runtime(format!(
            "bilinear(): input1 size does not match weight size: got {} but expected {}",
            s1[nd - 1],
            ws[1]
        )));
    }
    if s2[nd - 1] != ws[2] {
        return Err(Error::runtime(format!(
            "bilinear(): input2 size does not match weight size: got {} but expected {}",
            s2[nd - 1],
            ws[2]
        )));
    }
    let (o, i, j) = (ws[0], ws[1], ws[2]);
    // [*, I] @ [I, O * J] -> [*, O, J], then contract J with x2.
    let wm = w.permute(&[1, 0, 2])?.reshape(&[i, o * j])?;
    let mut shape = s1[..nd - 1].to_vec();
    shape.extend([o, j]);
    let t = x1.matmul(&wm)?.reshape(&shape)?;
    let mut y = t.mul(&x2.unsqueeze(-2)?)?.sum(Some(&[-1]), false, None)?;
    if let Some(b) = bias {
        y = y.add(b, ONE)?;
    }
    Ok(y)
}

/// `conv_tbc(self [T, B, C_in], weight [K, C_in, C_out], bias [C_out], pad)`: a time-major
/// 1-d convolution.
fn conv_tbc(x: &Tensor, w: &Tensor, b: &Tensor, pad: i64) -> R<Tensor> {
    if x.dim() != 3 {
        return Err(Error::runtime(
            "Input must have 3 dims: time, batch, in_channel",
        ));
    }
    if w.dim() != 3 {
        return Err(Error::runtime(
            "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.",
        ));
    }
    if b.dim() != 1 {
        return Err(Error::runtime("Bias must be 1-D"));
    }
    if x.sizes()[2] != w.sizes()[1] {
        return Err(Error::runtime(
            "Input dim 2 (input channels) is not == dim 1 in the weight tensor",
        ));
    }
    if w.sizes()[2] != b.sizes()[0] {
        return Err(Error::runtime(
            "Bias size must equal dim 2 in the weight tensor (output channels).",
        ));
    }
    let xi = x.permute(&[1, 2, 0])?;
    let wi = w.permute(&[2, 1, 0])?;
    let y = ts_tensor::conv1d(
        &xi,
        &wi,
        Some(b),
        &[1],
        &ts_tensor::ConvPadding::Explicit(vec![pad]),
        &[1],
        1,
    )?;
    y.permute(&[2, 0, 1])?.contiguous()
}

/// `pdist(self [N, M], p)`: the `p`-norm distances of the row pairs `i < j`, row-major.
fn pdist(x: &Tensor, p: f64) -> R<Tensor> {
    if x.dim() != 2 {
        return Err(Error::runtime(format!(
            "pdist only supports 2D tensors, got: {}D",
            x.dim()
        )));
    }
    if !x.dtype().is_floating_point() {
        return Err(Error::runtime("pdist only supports floating-point dtypes"));
    }
    if p < 0.0 {
        return Err(Error::runtime("pdist only supports non-negative p values"));
    }
    let n = x.sizes()[0];
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for i in 0..n {
        for j in i + 1..n {
            a.push(i);
            b.push(j);
        }
    }
    let pairs = a.len() as i64;
    if pairs == 0 {
        return Tensor::zeros(&[0], x.dtype());
    }
    let ia = Tensor::from_vec(a, &[pairs])?;
    let ib = Tensor::from_vec(b, &[pairs])?;
    let d = x.index_select(0, &ia)?.sub(&x.index_select(0, &ib)?, ONE)?;
    d.norm(Some(Scalar::Float(p)), Some(&[1]), false, None)
}

/// `rrelu`: a leaky ReLU whose negative slope is `(lower + upper) / 2` in evaluation and drawn
/// uniformly from `[lower, upper]` per element in training.
fn rrelu(x: &Tensor, lower: f64, upper: f64, training: bool) -> R<Tensor> {
    if lower > upper {
        return Err(Error::runtime(format!(
            "Lower bound should be less than or equal to the upper bound, but got lower={lower} upper={upper}"
        )));
    }
    if !training {
        return x.leaky_relu(Scalar::Float((lower + upper) / 2.0));
    }
    let noise = factory::zeros_like(x, None)?;
    noise.uniform_(lower, upper, None)?;
    ts_tensor::where_(
        &x.ge_scalar(Scalar::Int(0))?,
        Operand::Tensor(x),
        Operand::Tensor(&x.mul(&noise)?),
    )
}

/// `embedding_renorm_(self, indices, max_norm, norm_type)`: rescales (in place) each indexed
/// row whose norm exceeds `max_norm` to norm `max_norm` (ATen's `1e-7` guard).
fn embedding_renorm(w: &Tensor, indices: &Tensor, max_norm: f64, norm_type: f64) -> R<Tensor> {
    if w.dim() != 2 {
        return Err(Error::runtime(format!(
            "embedding_renorm_: expected 2-D weight, got {}-D",
            w.dim()
        )));
    }
    let mut rows = indices
        .to_dtype(DType::Int64, false)?
        .reshape(&[-1])?
        .to_vec::<i64>();
    rows.sort_unstable();
    rows.dedup();
    for r in rows {
        let row = w.select(0, r)?;
        let norm = row
            .norm(Some(Scalar::Float(norm_type)), None, false, None)?
            .item()?
            .to_f64();
        if norm > max_norm {
            row.mul_scalar_(Scalar::Float(max_norm / (norm + 1e-7)))?;
        }
    }
    Ok(w.clone())
}

/// `native_group_norm(input, weight, bias, N, C, HxW, group, eps)`: the output and the
/// per-(sample, group) mean and reciprocal standard deviation `[N, group]`.
#[allow(clippy::too_many_arguments)]
fn native_group_norm(
    x: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    n: i64,
    c: i64,
    hw: i64,
    group: i64,
    eps: f64,
) -> R<(Tensor, Tensor, Tensor)> {
    if group <= 0 || c % group != 0 {
        return Err(Error::runtime(format!(
            "Expected number of channels in input to be divisible by num_groups, but got input of shape {:?} and num_groups={group}",
            x.sizes().as_slice()
        )));
    }
    if x.numel() as i64 != n * c * hw {
        return Err(Error::runtime(format!(
            "Expected input to have {} elements (N={n}, C={c}, HxW={hw}), but got {:?}",
            n * c * hw,
            x.sizes().as_slice()
        )));
    }
    let out = ts_tensor::group_norm(x, group, weight, bias, eps)?;
    let dt = x.dtype();
    let ct = if dt == DType::Float64 {
        dt
    } else {
        DType::Float32
    };
    let g = x
        .to_dtype(ct, false)?
        .reshape(&[n, group, (c / group) * hw])?;
    let mean = g.mean(Some(&[2]), false, None)?;
    let rstd = g
        .var(Some(&[2]), Some(0.0), false)?
        .add_scalar(Scalar::Float(eps), ONE)?
        .rsqrt()?;
    Ok((out, mean.to_dtype(dt, false)?, rstd.to_dtype(dt, false)?))
}

/// `_native_batch_norm_legit*`: `native_batch_norm` whose saved statistics are empty `[0]`
/// tensors outside training, as ATen returns them.
#[allow(clippy::too_many_arguments)]
fn batch_norm_legit(
    x: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    training: bool,
    momentum: f64,
    eps: f64,
) -> R<(Tensor, Tensor, Tensor)> {
    let (out, mean, rstd) = ts_tensor::native_batch_norm(
        x,
        weight,
        bias,
        running_mean,
        running_var,
        training,
        momentum,
        eps,
    )?;
    if training {
        return Ok((out, mean, rstd));
    }
    let empty = Tensor::zeros(&[0], x.dtype())?;
    Ok((out, empty.clone(), empty))
}

/// `_softmax_backward_data(grad, output, dim, input_dtype)`: `out * (grad - sum(grad * out))`.
fn softmax_backward(
    grad: &Tensor,
    out: &Tensor,
    dim: i64,
    dtype: Option<DType>,
    log: bool,
) -> R<Tensor> {
    let r = if log {
        let s = grad.sum(Some(&[dim]), true, None)?;
        grad.sub(&out.exp()?.mul(&s)?, ONE)?
    } else {
        let s = grad.mul(out)?.sum(Some(&[dim]), true, None)?;
        out.mul(&grad.sub(&s, ONE)?)?
    };
    match dtype {
        Some(d) => r.to_dtype(d, false),
        None => Ok(r),
    }
}

fn legit_args(a: &Args, stats: bool) -> R<(Tensor, Tensor, Tensor)> {
    if stats {
        batch_norm_legit(
            a.t(0)?,
            a.ot(1)?,
            a.ot(2)?,
            a.ot(3)?,
            a.ot(4)?,
            a.b(5)?,
            a.f(6)?,
            a.f(7)?,
        )
    } else {
        batch_norm_legit(
            a.t(0)?,
            a.ot(1)?,
            a.ot(2)?,
            None,
            None,
            a.b(3)?,
            a.f(4)?,
            a.f(5)?,
        )
    }
}

/// Registers these operators.
pub fn register(r: &Registry) {
    def(r, "aten::bilinear", |a| {
        bilinear(a.t(0)?, a.t(1)?, a.t(2)?, a.ot(3)?)
    });
    def(r, "aten::conv_tbc", |a| {
        conv_tbc(a.t(0)?, a.t(1)?, a.t(2)?, a.int(3)?)
    });
    def_many(r, &["aten::pdist", "aten::_pdist_forward"], |a| {
        pdist(a.t(0)?, a.f(1)?)
    });
    def(r, "aten::rrelu", |a| {
        rrelu(a.t(0)?, a.s(1)?.to_f64(), a.s(2)?.to_f64(), a.b(3)?)
    });
    def(r, "aten::exponential_", |a| {
        let (x, lambd) = (a.t(0)?, a.f(1)?);
        if lambd <= 0.0 {
            return Err(Error::runtime(format!(
                "exponential_ expects lambda > 0.0, but found lambda={lambd}"
            )));
        }
        let u = factory::zeros_like(x, None)?;
        u.uniform_(0.0, 1.0, None)?;
        let e = u.neg()?.log1p()?.neg()?.div_scalar(Scalar::Float(lambd))?;
        x.copy_(&e)?;
        Ok(x.clone())
    });
    def(r, "aten::embedding_renorm_", |a| {
        embedding_renorm(a.t(0)?, a.t(1)?, a.f(2)?, a.f(3)?)
    });
    def(r, "aten::_no_grad_embedding_renorm_", |a| {
        embedding_renorm(a.t(0)?, a.t(1)?, a.f(2)?, a.f(3)?)
    });
    def(r, "aten::_infer_size", |a| {
        Ok(ts_tensor::shape::broadcast_shapes(&a.ints(0)?, &a.ints(1)?)?.to_vec())
    });
    def(r, "aten::native_group_norm", |a| {
        native_group_norm(
            a.t(0)?,
            a.ot(1)?,
            a.ot(2)?,
            a.int(3)?,
            a.int(4)?,
            a.int(5)?,
            a.int(6)?,
            a.f(7)?,
        )
    });
    def(r, "aten::_native_batch_norm_legit", |a| legit_args(a, true));
    def(r, "aten::_native_batch_norm_legit.out", |a| {
        // Running statistics update in place as in the functional overload.
        let (out, m, v) = legit_args(a, true)?;
        Ok((
            ts_tensor::resize_out_and_copy(a.t(8)?, &out)?,
            ts_tensor::resize_out_and_copy(a.t(9)?, &m)?,
            ts_tensor::resize_out_and_copy(a.t(10)?, &v)?,
        ))
    });
    def(r, "aten::_native_batch_norm_legit.no_stats", |a| {
        legit_args(a, false)
    });
    def(r, "aten::_native_batch_norm_legit_no_training", |a| {
        batch_norm_legit(
            a.t(0)?,
            a.ot(1)?,
            a.ot(2)?,
            Some(a.t(3)?),
            Some(a.t(4)?),
            false,
            a.f(5)?,
            a.f(6)?,
        )
    });
    def(r, "aten::_softmax_backward_data", |a| {
        softmax_backward(a.t(0)?, a.t(1)?, a.int(2)?, a.dtype(3)?, false)
    });
    def(r, "aten::_log_softmax_backward_data", |a| {
        softmax_backward(a.t(0)?, a.t(1)?, a.int(2)?, a.dtype(3)?, true)
    });
}
