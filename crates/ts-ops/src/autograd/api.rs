//! The operators through which TorchScript drives autograd: `torch.autograd.grad`,
//! `Tensor.backward`, `.grad`, `requires_grad_`, `detach_`, `retain_grad`, `is_leaf`,
//! `_version`, and grad mode (`torch.is_grad_enabled`, `torch.set_grad_enabled`).

use ts_core::IValue;
use ts_tensor::autograd::{is_grad_enabled, set_grad_enabled};
use ts_tensor::{Error, Tensor};

use super::engine::{run_backward, BackwardRequest};
use super::ops;
use crate::registry::{op, Registry};
use crate::stack::pop_tensor;
use crate::tensor_ops::def;

/// Gradients seeded for `outputs`: the given ones, or ones for scalar outputs (PyTorch's
/// "grad can be implicitly created only for scalar outputs" otherwise).
pub fn seed(
    outputs: &[Tensor],
    given: Vec<Option<Tensor>>,
) -> Result<Vec<(Tensor, Tensor)>, Error> {
    let mut v = Vec::new();
    for (i, t) in outputs.iter().enumerate() {
        let g = match given.get(i).cloned().flatten() {
            Some(g) => {
                if g.sizes() != t.sizes() {
                    return Err(Error::runtime(format!(
                        "Mismatch in shape: grad_output[{i}] has a shape of {:?} and output[{i}] has a shape of {:?}.",
                        g.sizes().as_slice(),
                        t.sizes().as_slice()
                    )));
                }
                g
            }
            None => {
                if t.numel() != 1 {
                    return Err(Error::runtime(
                        "grad can be implicitly created only for scalar outputs",
                    ));
                }
                if !(t.dtype().is_floating_point()) {
                    return Err(Error::runtime(format!(
                        "grad can be implicitly created only for real scalar outputs but got {}",
                        t.dtype().name()
                    )));
                }
                ops::add_s(&ops::zeros_like(t)?, 1.0)?
            }
        };
        v.push((t.clone(), g));
    }
    Ok(v)
}

/// Registers the autograd operators.
pub fn register(r: &Registry) {
    def(r, "aten::grad", |a| {
        let outputs = a.tensors(0)?;
        let inputs = a.tensors(1)?;
        let given = match a.v(2)? {
            IValue::None => Vec::new(),
            _ => a.opt_tensors(2)?,
        };
        let create_graph = a.b(4)?;
        let retain_graph = a.ob(3)?.unwrap_or(create_graph);
        let roots = seed(&outputs, given)?;
        let grads = run_backward(&BackwardRequest {
            roots: &roots,
            inputs: Some(&inputs),
            retain_graph,
            create_graph,
            allow_unused: a.b(5)?,
        })?;
        Ok(IValue::list(
            ts_core::Type::optional(ts_core::Type::tensor()),
            grads
                .into_iter()
                .map(|g| g.map(IValue::Tensor).unwrap_or(IValue::None))
                .collect(),
        ))
    });
    def(r, "aten::backward", |a| {
        let t = a.t(0)?.clone();
        let given = vec![a.ot(1)?.cloned()];
        let create_graph = a.b(3)?;
        let retain_graph = a.ob(2)?.unwrap_or(create_graph);
        let roots = seed(std::slice::from_ref(&t), given)?;
        run_backward(&BackwardRequest {
            roots: &roots,
            inputs: None,
            retain_graph,
            create_graph,
            allow_unused: true,
        })?;
        Ok(())
    });
    // `Tensor._backward(inputs, ...)`: `backward` restricted to `inputs` when given (only
    // their `.grad` accumulates).
    def(r, "aten::_backward", |a| {
        let t = a.t(0)?.clone();
        let inputs = a.tensors(1)?;
        let given = vec![a.ot(2)?.cloned()];
        let create_graph = a.b(4)?;
        let retain_graph = a.ob(3)?.unwrap_or(create_graph);
        let roots = seed(std::slice::from_ref(&t), given)?;
        let grads = run_backward(&BackwardRequest {
            roots: &roots,
            inputs: if inputs.is_empty() {
                None
            } else {
                Some(&inputs)
            },
            retain_graph,
            create_graph,
            allow_unused: true,
        })?;
        for (x, g) in inputs.iter().zip(grads) {
            if let Some(g) = g {
                super::engine::accumulate_grad(x, g, create_graph)?;
            }
        }
        Ok(())
    });
    def(r, "aten::backward.TensorList", |a| {
        let ts = a.tensors(0)?;
        let given = match a.v(1)? {
            IValue::None => Vec::new(),
            _ => a.opt_tensors(1)?,
        };
        let create_graph = a.b(3)?;
        let retain_graph = a.ob(2)?.unwrap_or(create_graph);
        let roots = seed(&ts, given)?;
        run_backward(&BackwardRequest {
            roots: &roots,
            inputs: None,
            retain_graph,
            create_graph,
            allow_unused: true,
        })?;
        Ok(())
    });
    def(r, "aten::requires_grad_", |a| {
        let t = a.t(0)?;
        let v = a.b(1)?;
        if !t.is_leaf() && !v {
            return Err(Error::runtime(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().",
            ));
        }
        let d = t.dtype();
        if v && !(d.is_floating_point() || d.is_complex()) {
            return Err(Error::runtime(
                "only Tensors of floating point and complex dtype can require gradients",
            ));
        }
        if t.is_leaf() {
            t.set_requires_grad(v);
        }
        Ok(t.clone())
    });
    def(r, "aten::detach_", |a| {
        let t = a.t(0)?;
        t.clear_grad_fn();
        Ok(t.clone())
    });
    def(r, "aten::retain_grad", |a| {
        let t = a.t(0)?;
        if !t.requires_grad() {
            return Err(Error::runtime(
                "can't retain_grad on Tensor that has requires_grad=False",
            ));
        }
        if let Some((node, nr)) = t.grad_fn() {
            node.retain_output(nr, t);
            if let Some(m) = t.autograd().as_mut() {
                m.retains_grad = true;
            }
        }
        Ok(())
    });
    def(r, "aten::retains_grad", |a| Ok(a.t(0)?.retains_grad()));
    def(r, "aten::is_leaf", |a| Ok(a.t(0)?.is_leaf()));
    def(r, "aten::_version", |a| Ok(a.t(0)?.version() as i64));
    def(r, "aten::output_nr", |a| {
        Ok(a.t(0)?.grad_fn().map(|(_, nr)| nr as i64).unwrap_or(0))
    });
    def(r, "aten::is_grad_enabled", |_a| Ok(is_grad_enabled()));
    def(r, "aten::set_grad_enabled", |a| {
        set_grad_enabled(a.b(0)?);
        Ok(())
    });
    let _ = r.register_pt(
        "prim::grad",
        op(|s| {
            let t = pop_tensor(s)?;
            s.push(t.grad().map(IValue::Tensor).unwrap_or(IValue::None));
            Ok(())
        }),
    );
}
