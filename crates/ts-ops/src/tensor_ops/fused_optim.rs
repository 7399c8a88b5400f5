//! The fused optimizer steps `_fused_adam`, `_fused_adamw`, `_fused_sgd` and `_fused_adagrad`
//! with the math of ATen's CPU kernels.
//!
//! Each runs over the parameter lists element by element. A `found_inf` of 1 skips the step;
//! a `grad_scale` divides each gradient first, and the unscaled gradient is written back into
//! `grads` (as the CPU kernels store it). `maximize` negates the gradient used, not the one
//! stored. The step counts in `state_steps` are read, not incremented (the Python optimizer
//! increments them before the call). The in-place overloads (`_fused_adam_`) update their
//! lists; the functional ones step clones and return them; the `.out` ones write the new
//! parameters into `out` and update the state lists in place.

use ts_core::IValue;
use ts_tensor::{Error, Scalar, Tensor};

use super::args::Args;
use crate::registry::{op, Registry};
use crate::stack::pop_n;

fn f(x: f64) -> Scalar {
    Scalar::Float(x)
}

/// A number that may come as a float or a one-element tensor (`tensor_lr` overloads).
fn number(a: &Args, i: usize) -> Result<f64, Error> {
    match a.v(i)? {
        IValue::Tensor(t) => Ok(t.item()?.to_f64()),
        _ => a.f(i),
    }
}

/// Whether `found_inf` says to skip the step, and the gradient scale.
fn scaling(a: &Args, gs: usize) -> Result<(bool, Option<Tensor>), Error> {
    let skip = match a.ot(gs + 1)? {
        Some(t) => t.item()?.to_f64() == 1.0,
        None => false,
    };
    Ok((skip, a.ot(gs)?.cloned()))
}

/// The gradient the update uses: unscaled (and stored back unscaled), negated for `maximize`.
fn effective_grad(g: &Tensor, scale: &Option<Tensor>, maximize: bool) -> Result<Tensor, Error> {
    if let Some(s) = scale {
        g.copy_(&g.div(s)?)?;
    }
    if maximize {
        g.neg()
    } else {
        Ok(g.clone())
    }
}

fn check_lengths(lists: &[&[Tensor]]) -> Result<usize, Error> {
    let n = lists[0].len();
    if let Some(l) = lists.iter().find(|l| !l.is_empty() && l.len() != n) {
        return Err(Error::runtime(format!(
            "Tensor lists must have the same number of tensors, got {n} and {}",
            l.len()
        )));
    }
    Ok(n)
}

/// One Adam/AdamW step over the lists of `a` (the in-place overload's argument layout).
fn adam_step(a: &Args, lists: &[Vec<Tensor>], adamw: bool) -> Result<(), Error> {
    let (params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps) = (
        &lists[0], &lists[1], &lists[2], &lists[3], &lists[4], &lists[5],
    );
    let lr = number(a, 6)?;
    let (beta1, beta2, weight_decay, eps) = (a.f(7)?, a.f(8)?, a.f(9)?, a.f(10)?);
    let (amsgrad, maximize) = (a.b(11)?, a.b(12)?);
    let (skip, scale) = scaling(a, 13)?;
    let n = check_lengths(&[params, grads, exp_avgs, exp_avg_sqs, steps])?;
    if amsgrad && max_sqs.len() != n {
        return Err(Error::runtime(
            "_fused_adam: max_exp_avg_sqs must have one tensor per parameter when amsgrad=True",
        ));
    }
    if skip {
        return Ok(());
    }
    for i in 0..n {
        let (p, m, v) = (&params[i], &exp_avgs[i], &exp_avg_sqs[i]);
        let mut g = effective_grad(&grads[i], &scale, maximize)?;
        let step = steps[i].item()?.to_f64();
        let bias1 = 1.0 - beta1.powf(step);
        let bias2 = 1.0 - beta2.powf(step);
        if weight_decay != 0.0 {
            if adamw {
                p.mul_scalar_(f(1.0 - lr * weight_decay))?;
            } else {
                g = g.add(p, f(weight_decay))?;
            }
        }
        // m = beta1 * m + (1 - beta1) * g; v = beta2 * v + (1 - beta2) * g * g
        m.mul_scalar_(f(beta1))?;
        m.add_(&g, f(1.0 - beta1))?;
        v.mul_scalar_(f(beta2))?;
        v.add_(&g.mul(&g)?, f(1.0 - beta2))?;
        let second = if amsgrad {
            let mx = &max_sqs[i];
            mx.copy_(&mx.maximum(v)?)?;
            mx.clone()
        } else {
            v.clone()
        };
        let denom = second
            .sqrt()?
            .div_scalar(f(bias2.sqrt()))?
            .add_scalar(f(eps), f(1.0))?;
        p.sub_(&m.div(&denom)?, f(lr / bias1))?;
    }
    Ok(())
}

/// One SGD step (the in-place overload's argument layout).
fn sgd_step(a: &Args, lists: &[Vec<Tensor>]) -> Result<(), Error> {
    let (params, grads, bufs) = (&lists[0], &lists[1], &lists[2]);
    let (weight_decay, momentum) = (a.f(3)?, a.f(4)?);
    let lr = number(a, 5)?;
    let (dampening, nesterov, maximize, first) = (a.f(6)?, a.b(7)?, a.b(8)?, a.b(9)?);
    let (skip, scale) = scaling(a, 10)?;
    let n = check_lengths(&[params, grads])?;
    if momentum != 0.0 && bufs.len() != n {
        return Err(Error::runtime(
            "_fused_sgd: momentum_buffer_list must have one tensor per parameter when momentum != 0",
        ));
    }
    if skip {
        return Ok(());
    }
    for i in 0..n {
        let p = &params[i];
        let mut g = effective_grad(&grads[i], &scale, maximize)?;
        if weight_decay != 0.0 {
            g = g.add(p, f(weight_decay))?;
        }
        if momentum != 0.0 {
            let b = &bufs[i];
            if first {
                b.copy_(&g)?;
            } else {
                b.mul_scalar_(f(momentum))?;
                b.add_(&g, f(1.0 - dampening))?;
            }
            g = if nesterov {
                g.add(b, f(momentum))?
            } else {
                b.clone()
            };
        }
        p.sub_(&g, f(lr))?;
    }
    Ok(())
}

/// One Adagrad step (the in-place overload's argument layout).
fn adagrad_step(a: &Args, lists: &[Vec<Tensor>]) -> Result<(), Error> {
    let (params, grads, sums, steps) = (&lists[0], &lists[1], &lists[2], &lists[3]);
    let lr = number(a, 4)?;
    let (lr_decay, weight_decay, eps, maximize) = (a.f(5)?, a.f(6)?, a.f(7)?, a.b(8)?);
    let (skip, scale) = scaling(a, 9)?;
    let n = check_lengths(&[params, grads, sums, steps])?;
    if skip {
        return Ok(());
    }
    for i in 0..n {
        let (p, s) = (&params[i], &sums[i]);
        let mut g = effective_grad(&grads[i], &scale, maximize)?;
        let step = steps[i].item()?.to_f64();
        if weight_decay != 0.0 {
            g = g.add(p, f(weight_decay))?;
        }
        let clr = lr / (1.0 + (step - 1.0) * lr_decay);
        s.add_(&g.mul(&g)?, f(1.0))?;
        let std = s.sqrt()?.add_scalar(f(eps), f(1.0))?;
        p.sub_(&g.div(&std)?, f(clr))?;
    }
    Ok(())
}

type Step = fn(&Args, &[Vec<Tensor>]) -> Result<(), Error>;

fn adam(a: &Args, l: &[Vec<Tensor>]) -> Result<(), Error> {
    adam_step(a, l, false)
}

fn adamw(a: &Args, l: &[Vec<Tensor>]) -> Result<(), Error> {
    adam_step(a, l, true)
}

/// Registers the in-place, functional and out overloads of one fused optimizer, whose first
/// `n_lists` arguments are tensor lists (the functional form returns the first of them, as
/// many as its schema lists).
fn register_family(r: &Registry, name: &str, n_lists: usize, step: Step) {
    for ov in ["", "tensor_lr"] {
        let dot = |o: &str| {
            if o.is_empty() {
                String::new()
            } else {
                format!(".{o}")
            }
        };
        let in_place = format!("aten::{name}_{}", dot(ov));
        let functional = format!("aten::{name}{}", dot(ov));
        let out = format!(
            "aten::{name}.{}",
            if ov.is_empty() {
                "out".to_string()
            } else {
                format!("{ov}_out")
            }
        );
        for (full, mode) in [(in_place, 0u8), (functional, 1), (out, 2)] {
            let Some(line) = crate::schema_table::schema_line(&full) else {
                continue;
            };
            let Ok(schema) = ts_core::FunctionSchema::parse(line) else {
                continue;
            };
            let n = schema.arguments.len();
            let n_returns = schema.returns.len();
            let _ = r.register(
                line,
                op(move |st| {
                    let mut args = Args(pop_n(st, n)?);
                    let mut lists: Vec<Vec<Tensor>> =
                        (0..n_lists).map(|i| args.tensors(i)).collect::<Result<_, _>>()?;
                    match mode {
                        0 => step(&args, &lists),
                        1 => {
                            for l in lists.iter_mut() {
                                *l = l.iter().map(|t| t.clone_tensor()).collect::<Result<_, _>>()?;
                            }
                            step(&args, &lists)?;
                            for l in lists.into_iter().take(n_returns) {
                                st.push(IValue::tensor_list(l));
                            }
                            Ok(())
                        }
                        _ => {
                            let outs = args.tensors(n - 1)?;
                            if outs.len() != lists[0].len() {
                                return Err(Error::runtime(format!(
                                    "Tensor lists must have the same number of tensors, got {} and {}",
                                    lists[0].len(),
                                    outs.len()
                                )));
                            }
                            for (o, p) in outs.iter().zip(&lists[0]) {
                                ts_tensor::resize_out_and_copy(o, p)?;
                            }
                            lists[0] = outs;
                            args.0.truncate(n - 1);
                            step(&args, &lists)
                        }
                    }
                }),
            );
        }
    }
}

/// Registers every fused optimizer overload.
pub fn register(r: &Registry) {
    register_family(r, "_fused_adam", 6, adam);
    register_family(r, "_fused_adamw", 6, adamw);
    register_family(r, "_fused_sgd", 3, sgd_step);
    register_family(r, "_fused_adagrad", 4, adagrad_step);
}
