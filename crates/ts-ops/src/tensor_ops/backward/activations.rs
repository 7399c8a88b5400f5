//! Backward kernels of the pointwise activations, from their derivatives (ATen's CPU
//! kernels' boundary conventions: `threshold_backward` zeroes `x <= threshold`,
//! `hardswish_backward` is zero at `x <= -3` and passes the gradient from `x >= 3`, ...).

use ts_core::IValue;
use ts_tensor::{Error, Tensor};

use super::{tv, vjp_op};
use crate::autograd::ops::{self as o, fv};
use crate::registry::Registry;
use crate::tensor_ops::def;

/// `where(cond, a, b)` with a scalar `b`.
fn where_s(c: &Tensor, a: &Tensor, b: f64) -> Result<Tensor, Error> {
    o::call1("aten::where.ScalarOther", vec![tv(c), tv(a), fv(b)])
}

fn or(a: &Tensor, b: &Tensor) -> Result<Tensor, Error> {
    o::call1("aten::logical_or", vec![tv(a), tv(b)])
}

fn and(a: &Tensor, b: &Tensor) -> Result<Tensor, Error> {
    o::call1("aten::logical_and", vec![tv(a), tv(b)])
}

/// `g` where `keep`, zero elsewhere, broadcast as ATen's TensorIterator does.
fn keep_where(keep: &Tensor, g: &Tensor) -> Result<Tensor, Error> {
    where_s(keep, g, 0.0)
}

/// `tanh_backward(grad, y) = grad * (1 - y^2)` (conjugated for complex outputs).
fn tanh_backward(g: &Tensor, y: &Tensor) -> Result<Tensor, Error> {
    let y = if y.dtype().is_complex() {
        o::conj(y)?
    } else {
        y.clone()
    };
    o::mul(g, &o::rsub_s(&o::mul(&y, &y)?, 1.0)?)
}

/// `sigmoid_backward(grad, y) = grad * y * (1 - y)` (conjugated for complex outputs).
fn sigmoid_backward(g: &Tensor, y: &Tensor) -> Result<Tensor, Error> {
    let y = if y.dtype().is_complex() {
        o::conj(y)?
    } else {
        y.clone()
    };
    o::mul(g, &o::mul(&y, &o::rsub_s(&y, 1.0)?)?)
}

/// `logit_backward`: `grad / (x (1 - x))`; outside `[eps, 1 - eps]` zero when `eps` is given,
/// NaN outside `[0, 1]` when not.
fn logit_backward(g: &Tensor, x: &Tensor, eps: Option<f64>) -> Result<Tensor, Error> {
    let d = o::div(g, &o::mul(x, &o::rsub_s(x, 1.0)?)?)?;
    match eps {
        Some(e) => {
            let out = or(&o::lt_s(x, e)?, &o::gt_s(x, 1.0 - e)?)?;
            where_s(&o::logical_not(&out)?, &d, 0.0)
        }
        None => {
            let out = or(&o::lt_s(x, 0.0)?, &o::gt_s(x, 1.0)?)?;
            where_s(&o::logical_not(&out)?, &d, f64::NAN)
        }
    }
}

/// `elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result)`.
fn elu_backward(
    g: &Tensor,
    alpha: f64,
    scale: f64,
    input_scale: f64,
    is_result: bool,
    v: &Tensor,
) -> Result<Tensor, Error> {
    let neg = o::le_s(v, 0.0)?;
    let pos = o::mul_s(g, scale)?;
    let negv = if is_result {
        if alpha < 0.0 {
            return Err(Error::runtime(
                "In-place elu backward calculation is triggered with a negative slope which is not supported. This is caused by calling in-place forward function with a negative slope, please call out-of-place version instead.",
            ));
        }
        o::mul(g, &o::mul_s(&o::add_s(v, alpha * scale)?, input_scale)?)?
    } else {
        let e = o::exp(&o::mul_s(v, input_scale)?)?;
        o::mul(g, &o::mul_s(&e, input_scale * alpha * scale)?)?
    };
    o::where_(&neg, &negv, &pos)
}

/// `log_sigmoid_backward(grad, x, buffer)` with ATen's CPU buffer `exp(-|x|)`:
/// `x < 0: grad (1 - z/(1+z))`, else `grad z/(1+z)`.
fn log_sigmoid_backward(g: &Tensor, x: &Tensor, z: &Tensor) -> Result<Tensor, Error> {
    let r = o::div(z, &o::add_s(z, 1.0)?)?;
    let neg = o::lt_s(x, 0.0)?;
    let d = o::where_(&neg, &o::rsub_s(&r, 1.0)?, &r)?;
    o::mul(g, &d)
}

/// `rrelu_with_noise_backward`: in training with a real range the recorded slopes (`noise`),
/// otherwise the leaky-ReLU derivative at the mean slope.
fn rrelu_backward(
    g: &Tensor,
    x: &Tensor,
    noise: &Tensor,
    lower: f64,
    upper: f64,
    training: bool,
) -> Result<Tensor, Error> {
    if training && upper - lower > 1e-6 {
        o::mul(g, noise)
    } else {
        let slope = (lower + upper) / 2.0;
        let pos = o::gt_s(x, 0.0)?;
        o::where_(&pos, g, &o::mul_s(g, slope)?)
    }
}

/// The two halves of `t` along `dim` (GLU's `a` and `b`); the size there must be even.
fn halves(t: &Tensor, dim: i64) -> Result<(Tensor, Tensor), Error> {
    let n = t.sizes().get(wrap(dim, t.dim())?).copied().unwrap_or(0);
    if n % 2 != 0 {
        return Err(Error::runtime(format!(
            "Halving dimension must be even, but dimension {dim} is size {n}"
        )));
    }
    let a = o::call1(
        "aten::narrow",
        vec![tv(t), IValue::Int(dim), IValue::Int(0), IValue::Int(n / 2)],
    )?;
    let b = o::call1(
        "aten::narrow",
        vec![
            tv(t),
            IValue::Int(dim),
            IValue::Int(n / 2),
            IValue::Int(n / 2),
        ],
    )?;
    Ok((a, b))
}

/// `glu_jvp(glu, x, dx, dim)`: the forward derivative of `glu` along `dx`.
fn glu_jvp(glu: &Tensor, x: &Tensor, dx: &Tensor, dim: i64) -> Result<Tensor, Error> {
    let (_, b) = halves(x, dim)?;
    let (da, db) = halves(dx, dim)?;
    let sb = o::sigmoid(&b)?;
    let t1 = o::mul(&da, &sb)?;
    let t2 = o::mul(&o::mul(glu, &o::rsub_s(&sb, 1.0)?)?, &db)?;
    o::add(&t1, &t2)
}

/// `glu_backward_jvp(grad_x, grad_glu, x, dgrad_glu, dx, dim)`: the forward derivative of
/// `glu_backward(grad_glu, x)` along `(dgrad_glu, dx)`. With `x = [a, b]`, `s = sigmoid(b)`,
/// that backward is `[g s, g a s (1 - s)]`.
fn glu_backward_jvp(
    gg: &Tensor,
    x: &Tensor,
    dgg: &Tensor,
    dx: &Tensor,
    dim: i64,
) -> Result<Tensor, Error> {
    let (a, b) = halves(x, dim)?;
    let (da, db) = halves(dx, dim)?;
    let s = o::sigmoid(&b)?;
    let ds = o::mul(&s, &o::rsub_s(&s, 1.0)?)?;
    let first = o::add(&o::mul(dgg, &s)?, &o::mul(&o::mul(gg, &ds)?, &db)?)?;
    let dds = o::mul(&ds, &o::rsub_s(&o::mul_s(&s, 2.0)?, 1.0)?)?;
    let second = o::add(
        &o::add(
            &o::mul(&o::mul(dgg, &a)?, &ds)?,
            &o::mul(&o::mul(gg, &da)?, &ds)?,
        )?,
        &o::mul(&o::mul(&o::mul(gg, &a)?, &dds)?, &db)?,
    )?;
    o::call1(
        "aten::cat",
        vec![IValue::tensor_list([first, second]), IValue::Int(dim)],
    )
}

/// `_masked_softmax_backward(grad, output, mask, dim)`: the softmax backward over the kept
/// positions (`mask` true = masked out), zero at the masked ones.
fn masked_softmax_backward(
    g: &Tensor,
    y: &Tensor,
    mask: &Tensor,
    dim: Option<i64>,
) -> Result<Tensor, Error> {
    let dim = dim.unwrap_or(y.dim() as i64 - 1);
    let keep = o::logical_not(mask)?;
    let gm = where_s(&keep, g, 0.0)?;
    let ym = where_s(&keep, y, 0.0)?;
    let s = o::sum_dims(&o::mul(&gm, &ym)?, &[dim], true)?;
    let r = o::mul(&ym, &o::sub(&gm, &s)?)?;
    where_s(&keep, &r, 0.0)
}

/// A dimension index wrapped into `0..dim`.
fn wrap(d: i64, dim: usize) -> Result<usize, Error> {
    let n = dim.max(1) as i64;
    let w = if d < 0 { d + n } else { d };
    if w < 0 || w >= n {
        return Err(Error::new(
            ts_tensor::ErrorKind::IndexError,
            format!(
                "Dimension out of range (expected to be in range of [{}, {}], but got {d})",
                -n,
                n - 1
            ),
        ));
    }
    Ok(w as usize)
}

pub(super) fn register(r: &Registry) {
    def(r, "aten::tanh_backward", |a| {
        tanh_backward(a.t(0)?, a.t(1)?)
    });
    def(r, "aten::sigmoid_backward", |a| {
        sigmoid_backward(a.t(0)?, a.t(1)?)
    });
    def(r, "aten::logit_backward", |a| {
        logit_backward(a.t(0)?, a.t(1)?, a.of(2)?)
    });
    // The conditions are written as ATen's kernels test them, so NaN inputs pass the
    // gradient where ATen's do.
    def(r, "aten::threshold_backward", |a| {
        let cut = o::le_s(a.t(1)?, a.f(2)?)?;
        keep_where(&o::logical_not(&cut)?, a.t(0)?)
    });
    def(r, "aten::hardtanh_backward", |a| {
        let x = a.t(1)?;
        let clipped = or(&o::le_s(x, a.f(2)?)?, &o::ge_s(x, a.f(3)?)?)?;
        keep_where(&o::logical_not(&clipped)?, a.t(0)?)
    });
    def(r, "aten::hardsigmoid_backward", |a| {
        let x = a.t(1)?;
        let inside = and(&o::gt_s(x, -3.0)?, &o::lt_s(x, 3.0)?)?;
        keep_where(&inside, &o::div_s(a.t(0)?, 6.0)?)
    });
    def(r, "aten::hardswish_backward", |a| {
        let (g, x) = (a.t(0)?, a.t(1)?);
        let mid = o::mul(g, &o::add_s(&o::div_s(x, 3.0)?, 0.5)?)?;
        let d = o::where_(&o::lt_s(x, 3.0)?, &mid, g)?;
        keep_where(&o::logical_not(&o::le_s(x, -3.0)?)?, &d)
    });
    for name in ["aten::softshrink_backward", "aten::hardshrink_backward"] {
        def(r, name, |a| {
            let x = a.t(1)?;
            let l = a.f(2)?;
            let inside = and(&o::ge_s(x, -l)?, &o::le_s(x, l)?)?;
            keep_where(&o::logical_not(&inside)?, a.t(0)?)
        });
    }
    def(r, "aten::leaky_relu_backward", |a| {
        let (g, x) = (a.t(0)?, a.t(1)?);
        let slope = a.f(2)?;
        if a.b(3)? && slope < 0.0 {
            return Err(Error::runtime(
                "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. This is caused by calling in-place forward function with a negative slope, please call out-of-place version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu backward calculation with negative slope",
            ));
        }
        o::where_(&o::gt_s(x, 0.0)?, g, &o::mul_s(g, slope)?)
    });
    def(r, "aten::softplus_backward", |a| {
        let (g, x) = (a.t(0)?, a.t(1)?);
        let (beta, threshold) = (a.f(2)?, a.f(3)?);
        let xb = o::mul_s(x, beta)?;
        let z = o::exp(&xb)?;
        let d = o::mul(g, &o::div(&z, &o::add_s(&z, 1.0)?)?)?;
        o::where_(&o::gt_s(&xb, threshold)?, g, &d)
    });
    def(r, "aten::elu_backward", |a| {
        elu_backward(a.t(0)?, a.f(1)?, a.f(2)?, a.f(3)?, a.b(4)?, a.t(5)?)
    });
    def(r, "aten::log_sigmoid_backward", |a| {
        log_sigmoid_backward(a.t(0)?, a.t(1)?, a.t(2)?)
    });
    def(r, "aten::rrelu_with_noise_backward", |a| {
        rrelu_backward(a.t(0)?, a.t(1)?, a.t(2)?, a.f(3)?, a.f(4)?, a.b(5)?)
    });
    // The smooth activations: the derivative of the forward operator itself.
    def(r, "aten::gelu_backward", |a| {
        let approximate = IValue::str(a.str(2)?);
        Ok(vjp_op("aten::gelu", vec![tv(a.t(1)?), approximate], &[0], a.t(0)?)?.remove(0))
    });
    def(r, "aten::infinitely_differentiable_gelu_backward", |a| {
        Ok(vjp_op(
            "aten::gelu",
            vec![tv(a.t(1)?), IValue::str("none")],
            &[0],
            a.t(0)?,
        )?
        .remove(0))
    });
    for (name, fwd) in [
        ("aten::silu_backward", "aten::silu"),
        ("aten::mish_backward", "aten::mish"),
    ] {
        def(r, name, move |a| {
            Ok(vjp_op(fwd, vec![tv(a.t(1)?)], &[0], a.t(0)?)?.remove(0))
        });
    }
    def(r, "aten::glu_backward", |a| {
        Ok(vjp_op(
            "aten::glu",
            vec![tv(a.t(1)?), IValue::Int(a.int(2)?)],
            &[0],
            a.t(0)?,
        )?
        .remove(0))
    });
    def(r, "aten::glu_jvp", |a| {
        glu_jvp(a.t(0)?, a.t(1)?, a.t(2)?, a.int(3)?)
    });
    def(r, "aten::glu_backward_jvp", |a| {
        glu_backward_jvp(a.t(1)?, a.t(2)?, a.t(3)?, a.t(4)?, a.int(5)?)
    });
    def(r, "aten::_masked_softmax_backward", |a| {
        masked_softmax_backward(a.t(0)?, a.t(1)?, a.t(2)?, a.oint(3)?)
    });
    // The weight gradient stays in the broadcast shape; `prelu`'s caller reduces it.
    def(r, "aten::_prelu_kernel_backward", |a| {
        let (g, x, w) = (a.t(0)?, a.t(1)?, a.t(2)?);
        let pos = o::gt_s(x, 0.0)?;
        let gi = o::where_(&pos, g, &o::mul(w, g)?)?;
        let gw = where_s(&o::logical_not(&pos)?, &o::mul(x, g)?, 0.0)?;
        let shape = ts_tensor::shape::broadcast_shapes(&gi.sizes(), &gw.sizes())?;
        Ok((gi, o::expand(&gw, &shape)?))
    });
    def(r, "aten::native_dropout_backward", |a| {
        let (g, m) = (a.t(0)?, a.t(1)?);
        let m = o::to_dtype(m, g.dtype())?;
        o::mul_s(&o::mul(g, &m)?, a.f(2)?)
    });
}
