//! `gradcheck` and `gradgradcheck`: compare an operator's recorded gradients with central
//! finite differences in float64 (a test utility, as `torch.autograd.gradcheck`).

use ts_core::IValue;
use ts_tensor::autograd::GradModeGuard;
use ts_tensor::{DType, Error, Tensor};

use super::engine::{run_backward, BackwardRequest};
use super::ops;

/// A function of tensors checked by [`gradcheck`] (its float outputs are differentiated).
pub type OpFn<'a> = dyn Fn(&[Tensor]) -> Result<Vec<IValue>, Error> + 'a;

/// Tolerances and step of a check.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    pub eps: f64,
    pub atol: f64,
    pub rtol: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            eps: 1e-6,
            atol: 1e-5,
            rtol: 1e-3,
        }
    }
}

/// The floating-point tensors among `vals` (tensor lists expanded), in order.
pub fn float_outputs(vals: &[IValue]) -> Vec<Tensor> {
    let mut v = Vec::new();
    for x in vals {
        match x {
            IValue::Tensor(t) if t.dtype().is_floating_point() => v.push(t.clone()),
            IValue::List(l) => {
                for i in l.items.read().iter() {
                    if let IValue::Tensor(t) = i {
                        if t.dtype().is_floating_point() {
                            v.push(t.clone());
                        }
                    }
                }
            }
            _ => {}
        }
    }
    v
}

/// Deterministic weights for output `k` (so incoming gradients are not all ones).
fn weights(k: usize, like: &Tensor) -> Result<Tensor, Error> {
    let n = like.numel();
    let data: Vec<f64> = (0..n)
        .map(|i| ((i * 7 + k * 13 + 3) as f64 * 0.37).sin() + 0.1)
        .collect();
    Tensor::from_vec(data, &like.sizes())
}

/// The weighted sum of the float outputs of `f` as a plain number.
fn loss_value(f: &OpFn, xs: &[Tensor]) -> Result<f64, Error> {
    let _off = GradModeGuard::no_grad();
    let outs = float_outputs(&f(xs)?);
    let mut total = 0.0;
    for (k, o) in outs.iter().enumerate() {
        let w = weights(k, o)?;
        let a = o.to_vec::<f64>();
        let b = w.to_vec::<f64>();
        total += a.iter().zip(&b).map(|(x, y)| x * y).sum::<f64>();
    }
    Ok(total)
}

fn numeric_grads(f: &OpFn, xs: &[Tensor], eps: f64) -> Result<Vec<Vec<f64>>, Error> {
    let mut all = Vec::new();
    for i in 0..xs.len() {
        let base = xs[i].to_vec::<f64>();
        let mut g = vec![0.0; base.len()];
        for j in 0..base.len() {
            let run = |d: f64| -> Result<f64, Error> {
                let mut v = base.clone();
                v[j] += d;
                let mut ys = xs.to_vec();
                ys[i] = Tensor::from_vec(v, &xs[i].sizes())?;
                loss_value(f, &ys)
            };
            g[j] = (run(eps)? - run(-eps)?) / (2.0 * eps);
        }
        all.push(g);
    }
    Ok(all)
}

fn compare(
    what: &str,
    analytic: &[Option<Tensor>],
    numeric: &[Vec<f64>],
    tol: Tolerance,
) -> Result<(), String> {
    for (i, (a, n)) in analytic.iter().zip(numeric).enumerate() {
        let a: Vec<f64> = match a {
            Some(t) => t.to_vec::<f64>(),
            None => vec![0.0; n.len()],
        };
        if a.len() != n.len() {
            return Err(format!(
                "{what}: input {i}: gradient has {} elements, expected {}",
                a.len(),
                n.len()
            ));
        }
        for (j, (x, y)) in a.iter().zip(n).enumerate() {
            if (x - y).abs() > tol.atol + tol.rtol * y.abs() {
                return Err(format!(
                    "{what}: input {i}, element {j}: analytical {x} vs numerical {y}"
                ));
            }
        }
    }
    Ok(())
}

fn leaves(xs: &[Tensor]) -> Vec<Tensor> {
    xs.iter()
        .map(|x| {
            let l = x.detach();
            l.set_requires_grad(true);
            l
        })
        .collect()
}

fn analytic(f: &OpFn, xs: &[Tensor], create_graph: bool) -> Result<Vec<Option<Tensor>>, Error> {
    let outs = float_outputs(&f(xs)?);
    let roots: Vec<(Tensor, Tensor)> = outs
        .iter()
        .enumerate()
        .filter(|(_, o)| o.requires_grad())
        .map(|(k, o)| Ok((o.clone(), weights(k, o)?)))
        .collect::<Result<_, Error>>()?;
    if roots.is_empty() {
        return Ok(vec![None; xs.len()]);
    }
    run_backward(&BackwardRequest {
        roots: &roots,
        inputs: Some(xs),
        retain_graph: create_graph,
        create_graph,
        allow_unused: true,
    })
}

/// Checks the first derivatives of `f` at the float64 tensors `xs`.
pub fn gradcheck(f: &OpFn, xs: &[Tensor], tol: Tolerance) -> Result<(), String> {
    let xs: Vec<Tensor> = xs
        .iter()
        .map(|x| ops::to_dtype(x, DType::Float64).map(|t| t.detach()))
        .collect::<Result<_, _>>()
        .map_err(|e| e.message.clone())?;
    let ls = leaves(&xs);
    let a = analytic(f, &ls, false).map_err(|e| e.message.clone())?;
    let n = numeric_grads(f, &xs, tol.eps).map_err(|e| e.message.clone())?;
    compare("gradcheck", &a, &n, tol)
}

/// Checks the second derivatives of `f`: the gradient of (first gradients · fixed weights),
/// built with `create_graph=True`, against finite differences of the first gradients.
pub fn gradgradcheck(f: &OpFn, xs: &[Tensor], tol: Tolerance) -> Result<(), String> {
    let g = |ys: &[Tensor]| -> Result<Vec<IValue>, Error> {
        let ls: Vec<Tensor> = if ys.iter().all(|y| y.requires_grad()) {
            ys.to_vec()
        } else {
            leaves(ys)
        };
        let _on = GradModeGuard::new(true);
        let grads = analytic(f, &ls, true)?;
        Ok(grads
            .into_iter()
            .map(|g| g.map(IValue::Tensor).unwrap_or(IValue::None))
            .collect())
    };
    gradcheck(&g, xs, tol)
}

/// Runs the operator `name` with `xs` in place of its float tensor arguments (in order).
pub fn op_fn(
    name: &'static str,
    args: Vec<IValue>,
) -> impl Fn(&[Tensor]) -> Result<Vec<IValue>, Error> {
    move |xs: &[Tensor]| {
        let mut a = args.clone();
        let mut it = xs.iter();
        for v in a.iter_mut() {
            if let IValue::Tensor(t) = v {
                if t.dtype().is_floating_point() {
                    if let Some(x) = it.next() {
                        *v = IValue::Tensor(x.clone());
                    }
                }
            }
        }
        ops::call(name, a)
    }
}
