//! Derivatives of neural-network operators: softmax family, activations, losses, norms,
//! convolutions, max pooling, embeddings, and the index-rearranging layers (pixel shuffle,
//! reflection/replication padding, nearest upsampling).
//!
//! Composite operators (losses, normalizations, smooth activations) are differentiated
//! through their decomposition into recorded operators ([`via_decomposition`]), which stays
//! differentiable for `create_graph=True`.

use ts_core::IValue;
use ts_tensor::autograd::{is_grad_enabled, GradModeGuard};
use ts_tensor::{Error, Tensor};

use super::engine::{run_backward, BackwardRequest};
use super::formula::{Ctx, Table};
use super::ops::{self as o, tv};

type R = Result<Vec<Option<Tensor>>, Error>;

fn one(t: Tensor) -> R {
    Ok(vec![Some(t)])
}

/// Differentiates `f`, a decomposition of the operator into recorded operators, over the
/// operator's tensor arguments (flattened as the formula's result must be). Without
/// `create_graph` the inputs are replaced by fresh leaves, so that nothing before them runs.
pub(super) fn via_decomposition(
    c: &Ctx,
    g: &[Tensor],
    f: impl Fn(&[IValue]) -> Result<Vec<Tensor>, Error>,
) -> R {
    let cg = is_grad_enabled();
    let mut args = c.args.0.clone();
    let mut slots: Vec<Option<Tensor>> = Vec::new();
    for (i, a) in args.iter_mut().enumerate() {
        match a {
            IValue::Tensor(t) => {
                let d = t.dtype();
                let differentiable = d.is_floating_point() || d.is_complex();
                let x = if !differentiable {
                    slots.push(None);
                    continue;
                } else if cg {
                    t.clone()
                } else {
                    let l = t.detach();
                    l.set_requires_grad(true);
                    l
                };
                slots.push(if x.requires_grad() {
                    Some(x.clone())
                } else {
                    None
                });
                *a = IValue::Tensor(x);
            }
            IValue::List(l) => {
                let items = l.items.read().clone();
                let mut new = Vec::new();
                for it in items {
                    match it {
                        IValue::Tensor(t) => {
                            let x = if cg {
                                t.clone()
                            } else {
                                let l = t.detach();
                                l.set_requires_grad(true);
                                l
                            };
                            slots.push(if x.requires_grad() {
                                Some(x.clone())
                            } else {
                                None
                            });
                            new.push(IValue::Tensor(x));
                        }
                        other => {
                            if other.is_none() {
                                slots.push(None);
                            }
                            new.push(other)
                        }
                    }
                }
                if new.iter().any(|v| matches!(v, IValue::Tensor(_))) {
                    *a = IValue::list(l.elem_type.clone(), new);
                }
            }
            // An absent optional tensor still has its gradient slot (`None`).
            IValue::None if c.tensor_args.contains(&i) => slots.push(None),
            _ => {}
        }
    }
    let outs = {
        let _on = GradModeGuard::new(true);
        f(&args)?
    };
    let roots: Vec<(Tensor, Tensor)> = outs
        .into_iter()
        .zip(g.iter().cloned())
        .filter(|(t, _)| t.requires_grad())
        .collect();
    let wanted: Vec<Tensor> = slots.iter().flatten().cloned().collect();
    if roots.is_empty() || wanted.is_empty() {
        return Ok(vec![None; slots.len()]);
    }
    let grads = run_backward(&BackwardRequest {
        roots: &roots,
        inputs: Some(&wanted),
        retain_graph: cg,
        create_graph: cg,
        allow_unused: true,
    })?;
    let mut it = grads.into_iter();
    Ok(slots
        .iter()
        .map(|s| s.as_ref().and_then(|_| it.next().flatten()))
        .collect())
}

fn t_of(a: &[IValue], i: usize) -> Result<Tensor, Error> {
    a[i].as_tensor()
        .cloned()
        .ok_or_else(|| Error::runtime("autograd: expected a tensor argument"))
}

fn ot_of(a: &[IValue], i: usize) -> Option<Tensor> {
    a.get(i).and_then(|v| v.as_tensor().cloned())
}

pub(super) fn f_of(a: &[IValue], i: usize) -> f64 {
    a.get(i)
        .and_then(|v| v.as_scalar())
        .map(|s| s.to_f64())
        .unwrap_or(0.0)
}

pub(super) fn i_of(a: &[IValue], i: usize) -> i64 {
    a.get(i).and_then(|v| v.as_int()).unwrap_or(0)
}

/// PyTorch's error for a tensor argument its formula does not differentiate (a loss's class
/// weights), raised when that argument requires grad instead of dropping its gradient.
fn not_differentiable(c: &Ctx, i: usize, func: &str, arg: &str) -> Result<(), Error> {
    match c.args.0.get(i) {
        Some(IValue::Tensor(t)) if t.requires_grad() => Err(Error::runtime(format!(
            "The function '{func}' is not differentiable with respect to argument '{arg}'. This input cannot have requires_grad True."
        ))),
        _ => Ok(()),
    }
}

/// `reduction` (0 none, 1 mean, 2 sum) applied to an elementwise loss.
pub(super) fn reduce(l: &Tensor, reduction: i64) -> Result<Tensor, Error> {
    match reduction {
        0 => Ok(l.clone()),
        1 => o::call1("aten::mean", vec![tv(l), IValue::None]),
        _ => o::sum(l),
    }
}

fn softmax_like(c: &Ctx, g: &[Tensor], log: bool) -> R {
    let d = c.args.int(1)?;
    let y = c.out_diff(0, || c.rerun(0))?;
    let gs = o::call1(
        "aten::sum.dim_IntList",
        vec![
            tv(&g[0]),
            IValue::int_list([d]),
            IValue::Bool(true),
            IValue::None,
        ],
    );
    if log {
        // g - exp(y) * sum(g)
        let s = gs?;
        one(o::sub(&g[0], &o::mul(&o::exp(&y)?, &s)?)?)
    } else {
        // y * (g - sum(g * y))
        let s = o::call1(
            "aten::sum.dim_IntList",
            vec![
                tv(&o::mul(&g[0], &y)?),
                IValue::int_list([d]),
                IValue::Bool(true),
                IValue::None,
            ],
        )?;
        one(o::mul(&y, &o::sub(&g[0], &s)?)?)
    }
}

pub(super) fn register(t: &mut Table) {
    for name in ["aten::softmax.int", "aten::_softmax"] {
        t.add(name, |c, g| {
            if c.t(0)?.dim() == 0 {
                return one(o::zeros_like(&g[0])?);
            }
            softmax_like(c, g, false)
        });
    }
    for name in ["aten::log_softmax.int", "aten::_log_softmax"] {
        t.add(name, |c, g| {
            if c.t(0)?.dim() == 0 {
                return one(o::zeros_like(&g[0])?);
            }
            softmax_like(c, g, true)
        });
    }

    t.add("aten::_softmax_backward_data", |c, g| {
        via_decomposition(c, g, |a| {
            let (go, y) = (t_of(a, 0)?, t_of(a, 1)?);
            let d = i_of(a, 2);
            let s = o::sum_dims(&o::mul(&go, &y)?, &[d], true)?;
            Ok(vec![o::mul(&y, &o::sub(&go, &s)?)?])
        })
    });

    // Activations.
    t.add("aten::silu", |c, g| {
        let x = c.t(0)?;
        let s = o::sigmoid(x)?;
        let d = o::mul(&s, &o::add_s(&o::mul(x, &o::rsub_s(&s, 1.0)?)?, 1.0)?)?;
        one(o::mul(&g[0], &d)?)
    });
    t.add("aten::gelu", |c, g| {
        via_decomposition(c, g, |a| {
            let x = t_of(a, 0)?;
            let approx = a.get(1).and_then(|v| v.as_str()).unwrap_or("none");
            let y = if approx == "tanh" {
                let k = (2.0 / std::f64::consts::PI).sqrt();
                let inner = o::mul_s(&o::add(&x, &o::mul_s(&o::pow_s(&x, 3.0)?, 0.044715)?)?, k)?;
                o::mul(&o::mul_s(&x, 0.5)?, &o::add_s(&o::tanh(&inner)?, 1.0)?)?
            } else {
                let e = o::erf(&o::mul_s(&x, std::f64::consts::FRAC_1_SQRT_2)?)?;
                o::mul(&o::mul_s(&x, 0.5)?, &o::add_s(&e, 1.0)?)?
            };
            Ok(vec![y])
        })
    });
    t.add("aten::elu", |c, g| {
        let x = c.t(0)?;
        let (alpha, scale, iscale) = (
            c.args.s(1)?.to_f64(),
            c.args.s(2)?.to_f64(),
            c.args.s(3)?.to_f64(),
        );
        let neg = o::mul_s(&o::exp(&o::mul_s(x, iscale)?)?, alpha * scale * iscale)?;
        let pos = o::add_s(&o::zeros_like(x)?, scale)?;
        one(o::mul(&g[0], &o::where_(&o::gt_s(x, 0.0)?, &pos, &neg)?)?)
    });
    t.add("aten::celu", |c, g| {
        let x = c.t(0)?;
        let alpha = c.args.s(1)?.to_f64();
        let neg = o::exp(&o::div_s(x, alpha)?)?;
        let pos = o::add_s(&o::zeros_like(x)?, 1.0)?;
        one(o::mul(&g[0], &o::where_(&o::gt_s(x, 0.0)?, &pos, &neg)?)?)
    });
    t.add("aten::selu", |c, g| {
        let x = c.t(0)?;
        let alpha = 1.673_263_242_354_377_3;
        let scale = 1.050_700_987_355_480_5;
        let neg = o::mul_s(&o::exp(x)?, alpha * scale)?;
        let pos = o::add_s(&o::zeros_like(x)?, scale)?;
        one(o::mul(&g[0], &o::where_(&o::gt_s(x, 0.0)?, &pos, &neg)?)?)
    });
    t.add("aten::leaky_relu", |c, g| {
        let x = c.t(0)?;
        let s = c.args.s(1)?.to_f64();
        one(o::where_(&o::gt_s(x, 0.0)?, &g[0], &o::mul_s(&g[0], s)?)?)
    });
    // The mask is read from the result (`lo < out < hi` exactly where `lo < x < hi`), so
    // that `hardtanh_` needs no copy of its input, as in PyTorch.
    t.result("aten::hardtanh", |c, g| {
        let x = &c.out(0)?;
        let (lo, hi) = (c.args.s(1)?.to_f64(), c.args.s(2)?.to_f64());
        let keep = o::call1(
            "aten::logical_and",
            vec![tv(&o::gt_s(x, lo)?), tv(&o::lt_s(x, hi)?)],
        )?;
        one(o::mask(&keep, &g[0])?)
    });
    t.add("aten::relu6", |c, g| {
        let x = c.t(0)?;
        let keep = o::call1(
            "aten::logical_and",
            vec![tv(&o::gt_s(x, 0.0)?), tv(&o::lt_s(x, 6.0)?)],
        )?;
        one(o::mask(&keep, &g[0])?)
    });
    t.add("aten::threshold", |c, g| {
        let x = c.t(0)?;
        one(o::mask(&o::gt_s(x, c.args.s(1)?.to_f64())?, &g[0])?)
    });
    t.add("aten::hardsigmoid", |c, g| {
        let x = c.t(0)?;
        let keep = o::call1(
            "aten::logical_and",
            vec![tv(&o::gt_s(x, -3.0)?), tv(&o::lt_s(x, 3.0)?)],
        )?;
        one(o::mask(&keep, &o::div_s(&g[0], 6.0)?)?)
    });
    t.add("aten::hardswish", |c, g| {
        let x = c.t(0)?;
        let mid = o::mul(&g[0], &o::add_s(&o::div_s(x, 3.0)?, 0.5)?)?;
        let r = o::where_(
            &o::lt_s(x, -3.0)?,
            &o::zeros_like(&g[0])?,
            &o::where_(&o::le_s(x, 3.0)?, &mid, &g[0])?,
        )?;
        one(r)
    });
    for name in ["aten::hardshrink", "aten::softshrink"] {
        t.add(name, |c, g| {
            let x = c.t(0)?;
            let l = c.args.s(1)?.to_f64();
            let keep = o::call1(
                "aten::logical_or",
                vec![tv(&o::gt_s(x, l)?), tv(&o::lt_s(x, -l)?)],
            )?;
            one(o::mask(&keep, &g[0])?)
        });
    }
    t.add("aten::softplus", |c, g| {
        let x = c.t(0)?;
        let (beta, th) = (c.args.s(1)?.to_f64(), c.args.s(2)?.to_f64());
        let s = o::sigmoid(&o::mul_s(x, beta)?)?;
        let lin = o::gt_s(&o::mul_s(x, beta)?, th)?;
        one(o::mul(
            &g[0],
            &o::where_(&lin, &o::add_s(&o::zeros_like(x)?, 1.0)?, &s)?,
        )?)
    });
    t.add("aten::log_sigmoid", |c, g| {
        let x = c.t(0)?;
        one(o::mul(&g[0], &o::sigmoid(&o::neg(x)?)?)?)
    });
    t.add("aten::mish", |c, g| {
        via_decomposition(c, g, |a| {
            let x = t_of(a, 0)?;
            let sp = o::call1(
                "aten::softplus",
                vec![tv(&x), IValue::Int(1), IValue::Int(20)],
            )?;
            Ok(vec![o::mul(&x, &o::tanh(&sp)?)?])
        })
    });
    t.add("aten::glu", |c, g| {
        via_decomposition(c, g, |a| {
            let x = t_of(a, 0)?;
            let d = i_of(a, 1);
            let h = o::call("aten::chunk", vec![tv(&x), IValue::Int(2), IValue::Int(d)])?;
            let parts = h[0].list_items().unwrap_or_default();
            let (p, q) = (t_of(&parts, 0)?, t_of(&parts, 1)?);
            Ok(vec![o::mul(&p, &o::sigmoid(&q)?)?])
        })
    });
    for name in ["aten::prelu", "aten::_prelu_kernel"] {
        t.add(name, |c, g| {
            via_decomposition(c, g, |a| {
                let x = t_of(a, 0)?;
                let w = t_of(a, 1)?;
                let w = if w.numel() > 1 && x.dim() >= 2 {
                    let mut shape = vec![1i64; x.dim()];
                    shape[1] = w.numel() as i64;
                    o::reshape(&w, &shape)?
                } else {
                    w
                };
                let neg = o::mul(&x, &w)?;
                Ok(vec![o::where_(&o::gt_s(&x, 0.0)?, &x, &neg)?])
            })
        });
    }

    // Losses.
    t.add("aten::mse_loss", |c, g| {
        via_decomposition(c, g, |a| {
            let d = o::sub(&t_of(a, 0)?, &t_of(a, 1)?)?;
            Ok(vec![reduce(&o::square(&d)?, i_of(a, 2))?])
        })
    });
    t.add("aten::l1_loss", |c, g| {
        via_decomposition(c, g, |a| {
            let d = o::sub(&t_of(a, 0)?, &t_of(a, 1)?)?;
            Ok(vec![reduce(&o::abs(&d)?, i_of(a, 2))?])
        })
    });
    t.add("aten::smooth_l1_loss", |c, g| {
        via_decomposition(c, g, |a| {
            let beta = f_of(a, 3);
            let d = o::sub(&t_of(a, 0)?, &t_of(a, 1)?)?;
            let ad = o::abs(&d)?;
            let l = if beta == 0.0 {
                ad
            } else {
                let quad = o::div_s(&o::mul_s(&o::square(&d)?, 0.5)?, beta)?;
                o::where_(&o::lt_s(&ad, beta)?, &quad, &o::add_s(&ad, -0.5 * beta)?)?
            };
            Ok(vec![reduce(&l, i_of(a, 2))?])
        })
    });
    t.add("aten::huber_loss", |c, g| {
        via_decomposition(c, g, |a| {
            let delta = f_of(a, 3);
            let d = o::sub(&t_of(a, 0)?, &t_of(a, 1)?)?;
            let ad = o::abs(&d)?;
            let quad = o::mul_s(&o::square(&d)?, 0.5)?;
            let lin = o::mul_s(&o::add_s(&ad, -0.5 * delta)?, delta)?;
            let l = o::where_(&o::lt_s(&ad, delta)?, &quad, &lin)?;
            Ok(vec![reduce(&l, i_of(a, 2))?])
        })
    });
    t.add("aten::binary_cross_entropy", |c, g| {
        via_decomposition(c, g, |a| {
            let (x, y) = (t_of(a, 0)?, t_of(a, 1)?);
            let lx = o::call1("aten::clamp_min", vec![tv(&o::log(&x)?), o::fv(-100.0)])?;
            let l1x = o::call1(
                "aten::clamp_min",
                vec![tv(&o::log(&o::rsub_s(&x, 1.0)?)?), o::fv(-100.0)],
            )?;
            let mut l = o::neg(&o::add(
                &o::mul(&y, &lx)?,
                &o::mul(&o::rsub_s(&y, 1.0)?, &l1x)?,
            )?)?;
            if let Some(w) = ot_of(a, 2) {
                l = o::mul(&l, &w)?;
            }
            Ok(vec![reduce(&l, i_of(a, 3))?])
        })
    });
    t.add("aten::binary_cross_entropy_with_logits", |c, g| {
        via_decomposition(c, g, |a| {
            let (x, y) = (t_of(a, 0)?, t_of(a, 1)?);
            let ls = o::call1("aten::log_sigmoid", vec![tv(&x)])?;
            let lns = o::call1("aten::log_sigmoid", vec![tv(&o::neg(&x)?)])?;
            let pos = match ot_of(a, 3) {
                Some(pw) => o::mul(&o::mul(&y, &pw)?, &ls)?,
                None => o::mul(&y, &ls)?,
            };
            let mut l = o::neg(&o::add(&pos, &o::mul(&o::rsub_s(&y, 1.0)?, &lns)?)?)?;
            if let Some(w) = ot_of(a, 2) {
                l = o::mul(&l, &w)?;
            }
            Ok(vec![reduce(&l, i_of(a, 4))?])
        })
    });
    t.add("aten::kl_div", |c, g| {
        via_decomposition(c, g, |a| {
            let (x, y) = (t_of(a, 0)?, t_of(a, 1)?);
            let log_target = a.get(3).and_then(|v| v.as_bool()).unwrap_or(false);
            let l = if log_target {
                o::mul(&o::exp(&y)?, &o::sub(&y, &x)?)?
            } else {
                o::sub(&o::xlogy(&y, &y)?, &o::mul(&y, &x)?)?
            };
            Ok(vec![reduce(&l, i_of(a, 2))?])
        })
    });
    for name in ["aten::nll_loss", "aten::nll_loss_nd", "aten::nll_loss2d"] {
        t.add(name, |c, g| {
            not_differentiable(c, 2, "nll_loss_forward", "weight")?;
            let x = c.t(0)?;
            let target = c.t(1)?;
            let w = c.args.ot(2)?;
            let red = c.args.int(3)?;
            let ig = c.args.int(4)?;
            one(nll_grad(x, target, w, red, ig, &g[0])?)
        });
    }
    t.add("aten::cross_entropy_loss", |c, g| {
        if !c.t(1)?.dtype().is_floating_point() {
            not_differentiable(c, 2, "nll_loss_forward", "weight")?;
        }
        via_decomposition(c, g, |a| {
            let x = t_of(a, 0)?;
            let y = t_of(a, 1)?;
            // Class weights with class-index targets are not differentiable (checked above).
            let w = ot_of(a, 2).map(|w| {
                if y.dtype().is_floating_point() {
                    w
                } else {
                    w.detach()
                }
            });
            let red = i_of(a, 3);
            let ig = i_of(a, 4);
            let ls = f_of(a, 5);
            let cd = if x.dim() == 1 { 0 } else { 1 };
            let lp = o::call1(
                "aten::log_softmax.int",
                vec![tv(&x), IValue::Int(cd), IValue::None],
            )?;
            if y.dtype().is_floating_point() {
                // class probabilities
                let nc = x.sizes()[cd as usize] as f64;
                let y = if ls > 0.0 {
                    o::add_s(&o::mul_s(&y, 1.0 - ls)?, ls / nc)?
                } else {
                    y
                };
                let mut prod = o::mul(&lp, &y)?;
                if let Some(w) = &w {
                    let mut shape = vec![1i64; x.dim()];
                    shape[cd as usize] = w.numel() as i64;
                    prod = o::mul(&prod, &o::reshape(w, &shape)?)?;
                }
                let l = o::neg(&o::sum_dims(&prod, &[cd], false)?)?;
                let n = if x.dim() == 1 {
                    1.0
                } else {
                    (x.numel() as f64) / nc
                };
                return Ok(vec![match red {
                    0 => l,
                    1 => o::div_s(&o::sum(&l)?, n)?,
                    _ => o::sum(&l)?,
                }]);
            }
            let nll = o::call1(
                "aten::nll_loss_nd",
                vec![
                    tv(&lp),
                    tv(&y),
                    w.clone().map(|w| tv(&w)).unwrap_or(IValue::None),
                    IValue::Int(red),
                    IValue::Int(ig),
                ],
            )?;
            if ls > 0.0 {
                let nc = x.sizes()[cd as usize] as f64;
                let valid = o::to_dtype(
                    &o::ne(&y, &o::add_s(&o::zeros_like(&y)?, ig as f64)?)?,
                    x.dtype(),
                )?;
                let lpw = match &w {
                    Some(w) => {
                        let mut shape = vec![1i64; x.dim()];
                        shape[cd as usize] = w.numel() as i64;
                        o::mul(&lp, &o::reshape(w, &shape)?)?
                    }
                    None => lp.clone(),
                };
                let smooth = o::mul(&o::neg(&o::sum_dims(&lpw, &[cd], false)?)?, &valid)?;
                let smooth = match red {
                    0 => smooth,
                    1 => match &w {
                        Some(w) => {
                            let wt = o::call1(
                                "aten::index_select",
                                vec![
                                    tv(w),
                                    IValue::Int(0),
                                    tv(&o::reshape(
                                        &o::mask(
                                            &o::to_dtype(&valid, ts_tensor::DType::Bool)?,
                                            &y,
                                        )?,
                                        &[-1],
                                    )?),
                                ],
                            )?;
                            let wt = o::mul(&o::reshape(&wt, &valid.sizes())?, &valid)?;
                            o::div(&o::sum(&smooth)?, &o::sum(&wt)?)?
                        }
                        None => o::div(&o::sum(&smooth)?, &o::sum(&valid)?)?,
                    },
                    _ => o::sum(&smooth)?,
                };
                let total = o::add(&o::mul_s(&nll, 1.0 - ls)?, &o::mul_s(&smooth, ls / nc)?)?;
                return Ok(vec![total]);
            }
            Ok(vec![nll])
        })
    });

    t.add("aten::multi_margin_loss", |c, g| {
        not_differentiable(c, 4, "multi_margin_loss", "weight")?;
        via_decomposition(c, g, |a| {
            let x = t_of(a, 0)?;
            let y = t_of(a, 1)?;
            let p = i_of(a, 2);
            let margin = f_of(a, 3);
            let w = ot_of(a, 4);
            let red = i_of(a, 5);
            let x2 = as_rows(&x)?;
            let y2 = o::reshape(&y, &[-1, 1])?;
            let nc = x2.sizes()[1];
            let xy = o::call1(
                "aten::gather",
                vec![tv(&x2), IValue::Int(1), tv(&y2), IValue::Bool(false)],
            )?;
            let m = o::call1(
                "aten::clamp_min",
                vec![tv(&o::add_s(&o::sub(&x2, &xy)?, margin)?), o::fv(0.0)],
            )?;
            let m = if p == 2 { o::square(&m)? } else { m };
            let m = match &w {
                Some(w) => {
                    let wy = o::call1(
                        "aten::index_select",
                        vec![tv(w), IValue::Int(0), tv(&o::reshape(&y, &[-1])?)],
                    )?;
                    o::mul(&m, &o::unsqueeze(&wy, 1)?)?
                }
                None => m,
            };
            let cols = o::call1(
                "aten::arange",
                vec![
                    IValue::Int(nc),
                    IValue::None,
                    IValue::None,
                    IValue::None,
                    IValue::None,
                ],
            )?;
            let not_y = o::ne(&o::unsqueeze(&cols, 0)?, &y2)?;
            let per = o::div_s(&o::sum_dims(&o::mask(&not_y, &m)?, &[1], false)?, nc as f64)?;
            let per = if x.dim() < 2 {
                o::reshape(&per, &[])?
            } else {
                per
            };
            Ok(vec![reduce(&per, red)?])
        })
    });
    t.add("aten::multilabel_margin_loss", |c, g| {
        via_decomposition(c, g, |a| {
            let x = t_of(a, 0)?;
            let y = t_of(a, 1)?;
            let red = i_of(a, 2);
            let x2 = as_rows(&x)?;
            let ys = y.to_vec::<i64>();
            let (n, nc) = (x2.sizes()[0], x2.sizes()[1]);
            if ys.len() as i64 != n * nc {
                return Err(Error::runtime(
                    "multilabel_margin_loss: target and input sizes differ",
                ));
            }
            let mut rows = Vec::new();
            for i in 0..n {
                let row = o::call1(
                    "aten::select.int",
                    vec![tv(&x2), IValue::Int(0), IValue::Int(i)],
                )?;
                let labels: Vec<i64> = ys[(i * nc) as usize..((i + 1) * nc) as usize]
                    .iter()
                    .copied()
                    .take_while(|&v| v >= 0)
                    .collect();
                let mut is_t = vec![false; nc as usize];
                for &l in &labels {
                    if l >= nc {
                        return Err(Error::runtime(format!(
                            "multilabel_margin_loss: target {l} is out of bounds"
                        )));
                    }
                    is_t[l as usize] = true;
                }
                let others =
                    Tensor::from_vec(is_t.iter().map(|&b| !b).collect::<Vec<bool>>(), &[nc])?;
                let mut acc = o::zeros(&[], x.dtype())?;
                for &l in &labels {
                    let xl = o::call1(
                        "aten::select.int",
                        vec![tv(&row), IValue::Int(0), IValue::Int(l)],
                    )?;
                    let m = o::call1(
                        "aten::clamp_min",
                        vec![tv(&o::add_s(&o::sub(&row, &xl)?, 1.0)?), o::fv(0.0)],
                    )?;
                    acc = o::add(&acc, &o::sum(&o::mask(&others, &m)?)?)?;
                }
                rows.push(o::div_s(&acc, nc as f64)?);
            }
            let per = o::call1(
                "aten::stack",
                vec![IValue::tensor_list(rows), IValue::Int(0)],
            )?;
            let per = if x.dim() < 2 {
                o::reshape(&per, &[])?
            } else {
                per
            };
            Ok(vec![reduce(&per, red)?])
        })
    });

    // Normalization.
    t.add("aten::layer_norm", |c, g| {
        via_decomposition(c, g, |a| {
            let x = t_of(a, 0)?;
            let ns = a[1].as_int_list().unwrap_or_default();
            let eps = f_of(a, 4);
            let dims: Vec<i64> = ((x.dim() - ns.len()) as i64..x.dim() as i64).collect();
            let y = normalize(&x, &dims, eps)?;
            Ok(vec![affine(y, ot_of(a, 2), ot_of(a, 3))?])
        })
    });
    t.add("aten::native_layer_norm", |c, g| {
        via_decomposition(c, &g[..1], |a| {
            let x = t_of(a, 0)?;
            let ns = a[1].as_int_list().unwrap_or_default();
            let eps = f_of(a, 4);
            let dims: Vec<i64> = ((x.dim() - ns.len()) as i64..x.dim() as i64).collect();
            // Only the normalized output is differentiable (as in PyTorch).
            let y = normalize(&x, &dims, eps)?;
            Ok(vec![affine(y, ot_of(a, 2), ot_of(a, 3))?])
        })
    });
    t.add("aten::native_group_norm", |c, g| {
        via_decomposition(c, g, |a| {
            let x = t_of(a, 0)?;
            let groups = i_of(a, 6);
            let eps = f_of(a, 7);
            let n = x.sizes()[0];
            let xr = o::reshape(&x, &[n, groups, -1])?;
            let (y, mean, rstd) = normalize_stats(&xr, &[2], eps)?;
            let y = o::reshape(&y, &x.sizes())?;
            Ok(vec![
                channel_affine(y, ot_of(a, 1), ot_of(a, 2))?,
                o::reshape(&mean, &[n, groups])?,
                o::reshape(&rstd, &[n, groups])?,
            ])
        })
    });
    t.add("aten::group_norm", |c, g| {
        via_decomposition(c, g, |a| {
            let x = t_of(a, 0)?;
            let groups = i_of(a, 1);
            let eps = f_of(a, 4);
            let n = x.sizes()[0];
            let xr = o::reshape(&x, &[n, groups, -1])?;
            let y = normalize(&xr, &[2], eps)?;
            let y = o::reshape(&y, &x.sizes())?;
            Ok(vec![channel_affine(y, ot_of(a, 2), ot_of(a, 3))?])
        })
    });
    t.add("aten::batch_norm", |c, g| {
        via_decomposition(c, g, |a| {
            let x = t_of(a, 0)?;
            let training = a[5].as_bool().unwrap_or(false);
            let eps = f_of(a, 7);
            let y = batch_norm_decomposed(&x, ot_of(a, 3), ot_of(a, 4), training, eps)?;
            Ok(vec![channel_affine(y, ot_of(a, 1), ot_of(a, 2))?])
        })
    });
    t.add("aten::_native_batch_norm_legit", |c, g| {
        via_decomposition(c, &g[..1], |a| {
            let x = t_of(a, 0)?;
            let training = a[5].as_bool().unwrap_or(false);
            let eps = f_of(a, 7);
            let y = batch_norm_decomposed(&x, ot_of(a, 3), ot_of(a, 4), training, eps)?;
            Ok(vec![channel_affine(y, ot_of(a, 1), ot_of(a, 2))?])
        })
    });
    t.add("aten::native_batch_norm", |c, g| {
        via_decomposition(c, &g[..1], |a| {
            let x = t_of(a, 0)?;
            let training = a[5].as_bool().unwrap_or(false);
            let eps = f_of(a, 7);
            let y = batch_norm_decomposed(&x, ot_of(a, 3), ot_of(a, 4), training, eps)?;
            Ok(vec![channel_affine(y, ot_of(a, 1), ot_of(a, 2))?])
        })
    });
    t.add("aten::instance_norm", |c, g| {
        via_decomposition(c, g, |a| {
            let x = t_of(a, 0)?;
            let use_stats = a[5].as_bool().unwrap_or(true);
            let eps = f_of(a, 7);
            let y = if use_stats {
                let dims: Vec<i64> = (2..x.dim() as i64).collect();
                normalize(&x, &dims, eps)?
            } else {
                batch_norm_decomposed(&x, ot_of(a, 3), ot_of(a, 4), false, eps)?
            };
            Ok(vec![channel_affine(y, ot_of(a, 1), ot_of(a, 2))?])
        })
    });

    // Convolutions.
    for name in ["aten::conv1d", "aten::conv2d", "aten::conv3d"] {
        t.add(name, |c, g| {
            let a = &c.args.0;
            conv_grads(
                c,
                &g[0],
                ConvArgs {
                    stride: a[3].as_int_list().unwrap_or_default(),
                    padding: a[4].as_int_list().unwrap_or_default(),
                    dilation: a[5].as_int_list().unwrap_or_default(),
                    transposed: false,
                    output_padding: vec![],
                    groups: i_of(a, 6),
                },
            )
        });
    }
    for name in [
        "aten::conv_transpose1d",
        "aten::conv_transpose2d.input",
        "aten::conv_transpose3d.input",
    ] {
        t.add(name, |c, g| {
            let a = &c.args.0;
            conv_grads(
                c,
                &g[0],
                ConvArgs {
                    stride: a[3].as_int_list().unwrap_or_default(),
                    padding: a[4].as_int_list().unwrap_or_default(),
                    dilation: a[7].as_int_list().unwrap_or_default(),
                    transposed: true,
                    output_padding: a[5].as_int_list().unwrap_or_default(),
                    groups: i_of(a, 6),
                },
            )
        });
    }
    for name in [
        "aten::conv1d.padding",
        "aten::conv2d.padding",
        "aten::conv3d.padding",
    ] {
        t.add(name, |c, g| {
            via_decomposition(c, g, |a| {
                let x = t_of(a, 0)?;
                let w = t_of(a, 1)?;
                let nd = w.dim() - 2;
                let stride = expand_list(&a[3].as_int_list().unwrap_or_default(), nd, 1);
                let dil = expand_list(&a[5].as_int_list().unwrap_or_default(), nd, 1);
                let mode = a[4].as_str().unwrap_or("valid");
                let mut pad = Vec::new();
                if mode == "same" {
                    for i in (0..nd).rev() {
                        let total = dil[i] * (w.sizes()[2 + i] - 1);
                        pad.push(total / 2);
                        pad.push(total - total / 2);
                    }
                }
                let unbatched = x.dim() == w.dim() - 1;
                let x = if unbatched { o::unsqueeze(&x, 0)? } else { x };
                let xp = if pad.iter().any(|&p| p != 0) {
                    o::call1(
                        "aten::constant_pad_nd",
                        vec![tv(&x), IValue::int_list(pad), IValue::Int(0)],
                    )?
                } else {
                    x
                };
                let mut y = convolution(
                    &xp,
                    &w,
                    &stride,
                    &vec![0; nd],
                    &dil,
                    false,
                    &vec![0; nd],
                    i_of(a, 6).max(1),
                )?;
                if let Some(b) = ot_of(a, 2) {
                    let mut shape = vec![1i64; y.dim()];
                    shape[y.dim() - nd - 1] = -1;
                    y = o::add(&y, &o::reshape(&b, &shape)?)?;
                }
                if unbatched {
                    y = o::call1("aten::squeeze.dim", vec![tv(&y), IValue::Int(0)])?;
                }
                Ok(vec![y])
            })
        });
    }
    for name in [
        "aten::convolution",
        "aten::_convolution",
        "aten::_convolution.deprecated",
    ] {
        t.add(name, |c, g| {
            let a = &c.args.0;
            conv_grads(
                c,
                &g[0],
                ConvArgs {
                    stride: a[3].as_int_list().unwrap_or_default(),
                    padding: a[4].as_int_list().unwrap_or_default(),
                    dilation: a[5].as_int_list().unwrap_or_default(),
                    transposed: a[6].as_bool().unwrap_or(false),
                    output_padding: a[7].as_int_list().unwrap_or_default(),
                    groups: i_of(a, 8),
                },
            )
        });
    }

    // Max pooling: route the gradient to the recorded argmax.
    t.add("aten::max_pool1d", |c, g| {
        pool_via_indices(c, g, "aten::max_pool1d_with_indices")
    });
    t.add("aten::max_pool2d", |c, g| {
        pool_via_indices(c, g, "aten::max_pool2d_with_indices")
    });
    t.add("aten::max_pool3d", |c, g| {
        pool_via_indices(c, g, "aten::max_pool3d_with_indices")
    });
    for name in ["aten::max_pool1d_with_indices", "aten::adaptive_max_pool1d"] {
        t.add(name, |c, g| {
            one(scatter_by_plane_known(c.t(0)?, &c.out(1)?, &g[0], 1)?)
        });
    }
    for name in ["aten::max_pool2d_with_indices", "aten::adaptive_max_pool2d"] {
        t.add(name, |c, g| {
            one(scatter_by_plane_known(c.t(0)?, &c.out(1)?, &g[0], 2)?)
        });
    }
    for name in ["aten::max_pool3d_with_indices", "aten::adaptive_max_pool3d"] {
        t.add(name, |c, g| {
            one(scatter_by_plane_known(c.t(0)?, &c.out(1)?, &g[0], 3)?)
        });
    }

    // Index-rearranging layers: differentiate by where each output element comes from.
    for name in [
        "aten::pixel_shuffle",
        "aten::pixel_unshuffle",
        "aten::channel_shuffle",
        "aten::native_channel_shuffle",
        "aten::reflection_pad1d",
        "aten::reflection_pad2d",
        "aten::reflection_pad3d",
        "aten::replication_pad1d",
        "aten::replication_pad2d",
        "aten::replication_pad3d",
        "aten::upsample_nearest1d",
        "aten::upsample_nearest2d",
        "aten::upsample_nearest3d",
        "aten::upsample_nearest1d.vec",
        "aten::upsample_nearest2d.vec",
        "aten::upsample_nearest3d.vec",
        "aten::_upsample_nearest_exact1d",
        "aten::_upsample_nearest_exact2d",
        "aten::_upsample_nearest_exact3d",
        "aten::_upsample_nearest_exact1d.vec",
        "aten::_upsample_nearest_exact2d.vec",
        "aten::_upsample_nearest_exact3d.vec",
        "aten::pad",
    ] {
        t.linear(name, gather_like);
    }

    t.linear("aten::embedding", |c, g| {
        let w = c.t(0)?;
        let idx = c.t(1)?;
        let pad = c.args.int(2)?;
        let d = w.sizes()[1];
        let gi = o::reshape(&g[0], &[-1, d])?;
        let flat = o::reshape(idx, &[-1])?;
        let gi = if pad >= 0 {
            let keep = o::call1("aten::ne.Scalar", vec![tv(&flat), IValue::Int(pad)])?;
            o::mask(&o::unsqueeze(&keep, 1)?, &gi)?
        } else {
            gi
        };
        let z = o::zeros(&w.sizes(), g[0].dtype())?;
        Ok(vec![
            Some(o::call1(
                "aten::index_add",
                vec![tv(&z), IValue::Int(0), tv(&flat), tv(&gi), IValue::Int(1)],
            )?),
            None,
        ])
    });
    for name in [
        "aten::dropout",
        "aten::feature_dropout",
        "aten::alpha_dropout",
        "aten::feature_alpha_dropout",
    ] {
        t.add(name, |c, g| {
            let x = c.t(0)?;
            let p = c.args.f(1)?;
            let train = c.args.b(2)?;
            if !train || p == 0.0 {
                return one(g[0].clone());
            }
            // Recover the mask from the output: kept elements are x / (1 - p).
            let y = c.out(0)?;
            let kept = o::ne(&y, &o::zeros_like(&y)?)?;
            let _ = x;
            one(o::mask(&kept, &o::div_s(&g[0], 1.0 - p)?)?)
        });
    }
}

/// A loss input as `[N, C]` rows (a 0-D input is one class, a 1-D input one row).
fn as_rows(x: &Tensor) -> Result<Tensor, Error> {
    match x.dim() {
        0 => o::reshape(x, &[1, 1]),
        1 => o::unsqueeze(x, 0),
        2 => Ok(x.clone()),
        d => Err(Error::runtime(format!(
            "margin losses take 0-D, 1-D or 2-D inputs, got {d}-D"
        ))),
    }
}

/// Normalization over `dims` with its (keepdim) mean and reciprocal standard deviation.
fn normalize_stats(x: &Tensor, dims: &[i64], eps: f64) -> Result<(Tensor, Tensor, Tensor), Error> {
    let mean = o::call1(
        "aten::mean.dim",
        vec![
            tv(x),
            IValue::int_list(dims.to_vec()),
            IValue::Bool(true),
            IValue::None,
        ],
    )?;
    let xc = o::sub(x, &mean)?;
    let var = o::call1(
        "aten::mean.dim",
        vec![
            tv(&o::square(&xc)?),
            IValue::int_list(dims.to_vec()),
            IValue::Bool(true),
            IValue::None,
        ],
    )?;
    let rstd = o::rsqrt(&o::add_s(&var, eps)?)?;
    Ok((o::mul(&xc, &rstd)?, mean, rstd))
}

fn normalize(x: &Tensor, dims: &[i64], eps: f64) -> Result<Tensor, Error> {
    normalize_stats(x, dims, eps).map(|(y, _, _)| y)
}

fn affine(y: Tensor, w: Option<Tensor>, b: Option<Tensor>) -> Result<Tensor, Error> {
    let y = match w {
        Some(w) => o::mul(&y, &w)?,
        None => y,
    };
    match b {
        Some(b) => o::add(&y, &b),
        None => Ok(y),
    }
}

/// Per-channel (dim 1) scale and shift.
fn channel_affine(y: Tensor, w: Option<Tensor>, b: Option<Tensor>) -> Result<Tensor, Error> {
    let mut shape = vec![1i64; y.dim()];
    if y.dim() > 1 {
        shape[1] = -1;
    } else if !shape.is_empty() {
        shape[0] = -1;
    }
    let y = match w {
        Some(w) => o::mul(&y, &o::reshape(&w, &shape)?)?,
        None => y,
    };
    match b {
        Some(b) => o::add(&y, &o::reshape(&b, &shape)?),
        None => Ok(y),
    }
}

fn batch_norm_decomposed(
    x: &Tensor,
    rm: Option<Tensor>,
    rv: Option<Tensor>,
    training: bool,
    eps: f64,
) -> Result<Tensor, Error> {
    let dims: Vec<i64> = (0..x.dim() as i64).filter(|&d| d != 1).collect();
    if training || rm.is_none() {
        return normalize(x, &dims, eps);
    }
    let mut shape = vec![1i64; x.dim()];
    shape[1] = -1;
    let rm = o::reshape(&rm.unwrap_or(o::zeros(&[1], x.dtype())?), &shape)?;
    let rv = o::reshape(&rv.unwrap_or(o::zeros(&[1], x.dtype())?), &shape)?;
    o::mul(&o::sub(x, &rm)?, &o::rsqrt(&o::add_s(&rv, eps)?)?)
}

/// The negative log-likelihood loss's gradient.
fn nll_grad(
    x: &Tensor,
    target: &Tensor,
    w: Option<&Tensor>,
    red: i64,
    ig: i64,
    g: &Tensor,
) -> Result<Tensor, Error> {
    let cd = if x.dim() == 1 { 0 } else { 1 };
    let valid = o::call1("aten::ne.Scalar", vec![tv(target), IValue::Int(ig)])?;
    let safe_t = o::where_(&valid, target, &o::zeros_like(target)?)?;
    let tw = match w {
        Some(w) => {
            let tw = o::call1(
                "aten::index_select",
                vec![tv(w), IValue::Int(0), tv(&o::reshape(&safe_t, &[-1])?)],
            )?;
            o::reshape(&tw, &target.sizes())?
        }
        None => o::add_s(&o::zeros(&target.sizes(), x.dtype())?, 1.0)?,
    };
    let tw = o::mask(&valid, &tw)?;
    let scale = match red {
        0 => o::mul(g, &tw)?,
        1 => o::div(&o::mul(&tw, g)?, &o::sum(&tw)?)?,
        _ => o::mul(&tw, g)?,
    };
    let z = o::zeros_like(x)?;
    let idx = o::unsqueeze(&safe_t, cd)?;
    let src = o::neg(&o::unsqueeze(&scale, cd)?)?;
    o::call1(
        "aten::scatter.src",
        vec![tv(&z), IValue::Int(cd), tv(&idx), tv(&src)],
    )
}

struct ConvArgs {
    stride: Vec<i64>,
    padding: Vec<i64>,
    dilation: Vec<i64>,
    transposed: bool,
    output_padding: Vec<i64>,
    groups: i64,
}

fn expand_list(v: &[i64], n: usize, default: i64) -> Vec<i64> {
    match v.len() {
        0 => vec![default; n],
        1 => vec![v[0]; n],
        _ => v.to_vec(),
    }
}

#[allow(clippy::too_many_arguments)]
fn convolution(
    x: &Tensor,
    w: &Tensor,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
) -> Result<Tensor, Error> {
    o::call1(
        "aten::convolution",
        vec![
            tv(x),
            tv(w),
            IValue::None,
            IValue::int_list(stride.to_vec()),
            IValue::int_list(padding.to_vec()),
            IValue::int_list(dilation.to_vec()),
            IValue::Bool(transposed),
            IValue::int_list(output_padding.to_vec()),
            IValue::Int(groups),
        ],
    )
}

/// Gradients of a (possibly transposed, grouped, dilated, strided) convolution.
fn conv_grads(c: &Ctx, g: &Tensor, a: ConvArgs) -> R {
    let (x, w) = (c.t(0)?, c.t(1)?);
    let bias = c.args.ot(2)?;
    let unbatched = x.dim() == w.dim() - 1;
    let (x, g) = if unbatched {
        (o::unsqueeze(x, 0)?, o::unsqueeze(g, 0)?)
    } else {
        (x.clone(), g.clone())
    };
    let nd = w.dim() - 2;
    let stride = expand_list(&a.stride, nd, 1);
    let padding = expand_list(&a.padding, nd, 0);
    let dilation = expand_list(&a.dilation, nd, 1);
    let opad = expand_list(&a.output_padding, nd, 0);
    let groups = a.groups.max(1);
    let xs = x.sizes();
    let gs = g.sizes();
    let ws = w.sizes();
    // input gradient
    let gx = if !a.transposed {
        let op: Vec<i64> = (0..nd)
            .map(|i| {
                let k = ws[2 + i];
                xs[2 + i]
                    - ((gs[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k - 1) + 1)
            })
            .collect();
        convolution(&g, w, &stride, &padding, &dilation, true, &op, groups)?
    } else {
        convolution(
            &g,
            w,
            &stride,
            &padding,
            &dilation,
            false,
            &vec![0; nd],
            groups,
        )?
    };
    // weight gradient, group by group
    let cin = xs[1];
    let cout = gs[1];
    let mut parts = Vec::new();
    for gi in 0..groups {
        let xg = o::call1(
            "aten::narrow",
            vec![
                tv(&x),
                IValue::Int(1),
                IValue::Int(gi * cin / groups),
                IValue::Int(cin / groups),
            ],
        )?;
        let gg = o::call1(
            "aten::narrow",
            vec![
                tv(&g),
                IValue::Int(1),
                IValue::Int(gi * cout / groups),
                IValue::Int(cout / groups),
            ],
        )?;
        let (lhs, rhs) = if !a.transposed {
            (o::transpose(&xg, 0, 1)?, o::transpose(&gg, 0, 1)?)
        } else {
            (o::transpose(&gg, 0, 1)?, o::transpose(&xg, 0, 1)?)
        };
        let r = convolution(
            &lhs,
            &rhs,
            &dilation,
            &padding,
            &stride,
            false,
            &vec![0; nd],
            1,
        )?;
        let mut r = o::transpose(&r, 0, 1)?;
        for i in 0..nd {
            r = o::call1(
                "aten::narrow",
                vec![
                    tv(&r),
                    IValue::Int(2 + i as i64),
                    IValue::Int(0),
                    IValue::Int(ws[2 + i]),
                ],
            )?;
        }
        parts.push(r);
    }
    let gw = if parts.len() == 1 {
        parts.pop().expect("one group")
    } else {
        o::call1(
            "aten::cat",
            vec![IValue::tensor_list(parts), IValue::Int(0)],
        )?
    };
    let _ = opad;
    let gb = match bias {
        Some(_) => {
            let dims: Vec<i64> = (0..g.dim() as i64).filter(|&d| d != 1).collect();
            Some(o::sum_dims(&g, &dims, false)?)
        }
        None => None,
    };
    let gx = if unbatched {
        o::call1("aten::squeeze.dim", vec![tv(&gx), IValue::Int(0)])?
    } else {
        gx
    };
    Ok(vec![Some(gx), Some(gw), gb])
}

fn pool_via_indices(c: &Ctx, g: &[Tensor], with_idx: &str) -> R {
    let mut args = c.args.0.clone();
    args[0] = IValue::Tensor(c.t(0)?.detach());
    let outs = {
        let _off = GradModeGuard::no_grad();
        o::call(with_idx, args)?
    };
    let idx = outs[1]
        .as_tensor()
        .cloned()
        .ok_or_else(|| Error::runtime("autograd: pooling returned no indices"))?;
    let x = c.t(0)?;
    let gx = scatter_by_plane_known(x, &idx, &g[0], pool_dims(with_idx))?;
    one(gx)
}

fn pool_dims(name: &str) -> usize {
    if name.contains("1d") {
        1
    } else if name.contains("3d") {
        3
    } else {
        2
    }
}

fn scatter_by_plane_known(
    x: &Tensor,
    idx: &Tensor,
    g: &Tensor,
    pooled: usize,
) -> Result<Tensor, Error> {
    let xs = x.sizes();
    let lead = xs.len() - pooled;
    let planes: i64 = xs[..lead].iter().product();
    let in_plane: i64 = xs[lead..].iter().product();
    let gf = o::reshape(g, &[planes, -1])?;
    let idf = o::reshape(idx, &[planes, -1])?;
    let z = o::zeros(&[planes, in_plane], g.dtype())?;
    let r = o::call1(
        "aten::scatter_add",
        vec![tv(&z), IValue::Int(1), tv(&idf), tv(&gf)],
    )?;
    o::reshape(&r, &xs)
}

/// For operators that only move elements (each output element is one input element or a
/// constant): run the operator on the element numbers 1..=n of the input and add the gradient
/// back to those positions.
pub(super) fn gather_like(c: &Ctx, g: &[Tensor]) -> R {
    let x = c.t(0)?;
    let n = x.numel() as i64;
    let ids = o::call1(
        "aten::arange.start",
        vec![
            IValue::Int(1),
            IValue::Int(n + 1),
            IValue::Int(7),
            IValue::None,
            IValue::None,
            IValue::None,
        ],
    )?;
    let ids = o::reshape(&ids, &x.sizes())?;
    let mut args = c.args.0.clone();
    args[0] = tv(&ids);
    if &*c.op == "aten::pad" && args.len() > 3 {
        args[3] = IValue::None;
    }
    let full = {
        let _off = GradModeGuard::no_grad();
        o::call1(&c.op, args)?
    };
    let pos = o::to_dtype(&full, ts_tensor::DType::Int64)?;
    let z = o::zeros(&[n + 1], g[0].dtype())?;
    let acc = o::call1(
        "aten::index_add",
        vec![
            tv(&z),
            IValue::Int(0),
            tv(&o::reshape(&pos, &[-1])?),
            tv(&o::reshape(&g[0], &[-1])?),
            IValue::Int(1),
        ],
    )?;
    let body = o::call1(
        "aten::narrow",
        vec![tv(&acc), IValue::Int(0), IValue::Int(1), IValue::Int(n)],
    )?;
    one(o::reshape(&body, &x.sizes())?)
}

/// One-dimensional average pooling along `d` as windows of sums (ATen's window and divisor
/// rules, including `ceil_mode` and `count_include_pad`); `divide` false keeps the sums.
#[allow(clippy::too_many_arguments)]
fn avg_pool_dim(
    x: &Tensor,
    d: i64,
    k: i64,
    s: i64,
    p: i64,
    ceil: bool,
    cip: bool,
    divide: bool,
) -> Result<Tensor, Error> {
    let len = x.sizes()[d as usize];
    let span = len + 2 * p - k;
    let mut out = if ceil {
        (span + s - 1).div_euclid(s) + 1
    } else {
        span.div_euclid(s) + 1
    };
    if ceil && (out - 1) * s >= len + p {
        out -= 1;
    }
    let mut parts = Vec::new();
    for i in 0..out {
        let hstart = i * s - p;
        let hend = (hstart + k).min(len + p);
        let pool = hend - hstart;
        let hs = hstart.max(0);
        let he = hend.min(len);
        let w = o::call1(
            "aten::narrow",
            vec![
                tv(x),
                IValue::Int(d),
                IValue::Int(hs),
                IValue::Int((he - hs).max(0)),
            ],
        )?;
        let sum = o::sum_dims(&w, &[d], true)?;
        let div = if cip { pool } else { he - hs };
        parts.push(if divide {
            o::div_s(&sum, div as f64)?
        } else {
            sum
        });
    }
    o::call1(
        "aten::cat",
        vec![IValue::tensor_list(parts), IValue::Int(d)],
    )
}

/// `avg_pool{1,2,3}d` as separable one-dimensional poolings.
fn avg_pool_decomposed(a: &[IValue], nd: usize) -> Result<Vec<Tensor>, Error> {
    let x = t_of(a, 0)?;
    let k = expand_list(&a[1].as_int_list().unwrap_or_default(), nd, 1);
    let st = a[2].as_int_list().unwrap_or_default();
    let s = if st.is_empty() {
        k.clone()
    } else {
        expand_list(&st, nd, 1)
    };
    let p = expand_list(&a[3].as_int_list().unwrap_or_default(), nd, 0);
    let ceil = a[4].as_bool().unwrap_or(false);
    let cip = a[5].as_bool().unwrap_or(true);
    let over = a.get(6).and_then(|v| v.as_int());
    let mut y = x.clone();
    let first = x.dim() - nd;
    for i in 0..nd {
        y = avg_pool_dim(
            &y,
            (first + i) as i64,
            k[i],
            s[i],
            p[i],
            ceil,
            cip,
            over.is_none(),
        )?;
    }
    if let Some(dv) = over {
        y = o::div_s(&y, dv as f64)?;
    }
    Ok(vec![y])
}

/// `adaptive_avg_pool{1,2,3}d` as separable one-dimensional bin means.
fn adaptive_avg_decomposed(a: &[IValue], nd: usize) -> Result<Vec<Tensor>, Error> {
    let x = t_of(a, 0)?;
    let sizes = expand_list(&a[1].as_int_list().unwrap_or_default(), nd, 1);
    let first = x.dim() - nd;
    let mut y = x.clone();
    for (i, &out) in sizes.iter().enumerate() {
        let d = (first + i) as i64;
        let len = y.sizes()[d as usize];
        let mut parts = Vec::new();
        for j in 0..out {
            let start = (j * len) / out;
            let end = ((j + 1) * len + out - 1) / out;
            let w = o::call1(
                "aten::narrow",
                vec![
                    tv(&y),
                    IValue::Int(d),
                    IValue::Int(start),
                    IValue::Int(end - start),
                ],
            )?;
            parts.push(o::div_s(
                &o::sum_dims(&w, &[d], true)?,
                (end - start) as f64,
            )?);
        }
        y = o::call1(
            "aten::cat",
            vec![IValue::tensor_list(parts), IValue::Int(d)],
        )?;
    }
    Ok(vec![y])
}

/// Registers the pooling decompositions.
pub(super) fn register_pools(t: &mut Table) {
    t.linear("aten::avg_pool1d", |c, g| {
        via_decomposition(c, g, |a| avg_pool_decomposed(a, 1))
    });
    t.linear("aten::avg_pool2d", |c, g| {
        via_decomposition(c, g, |a| avg_pool_decomposed(a, 2))
    });
    t.linear("aten::avg_pool3d", |c, g| {
        via_decomposition(c, g, |a| avg_pool_decomposed(a, 3))
    });
    t.linear("aten::adaptive_avg_pool1d", |c, g| {
        via_decomposition(c, g, |a| adaptive_avg_decomposed(a, 1))
    });
    for name in ["aten::adaptive_avg_pool2d", "aten::_adaptive_avg_pool2d"] {
        t.linear(name, |c, g| {
            via_decomposition(c, g, |a| adaptive_avg_decomposed(a, 2))
        });
    }
    for name in ["aten::adaptive_avg_pool3d", "aten::_adaptive_avg_pool3d"] {
        t.linear(name, |c, g| {
            via_decomposition(c, g, |a| adaptive_avg_decomposed(a, 3))
        });
    }
}
