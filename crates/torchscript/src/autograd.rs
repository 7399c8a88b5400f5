//! Gradients from Rust: grad-mode guards (`torch.no_grad()` and friends), and the functions
//! that run the backward engine (`Tensor.backward`, `torch.autograd.grad`).
//!
//! Operators record history whenever grad mode is on and one of their inputs requires grad, as
//! in PyTorch; the tensor methods [`Tensor::requires_grad`], [`Tensor::set_requires_grad`],
//! [`Tensor::grad`] and [`Tensor::backward`] cover a training step.

use crate::{Result, Tensor};

pub use ts_tensor::autograd::GradModeGuard;

/// Whether operators on this thread record autograd history (`torch.is_grad_enabled()`).
pub fn is_grad_enabled() -> bool {
    ts_tensor::autograd::is_grad_enabled()
}

/// Turns recording on or off for this thread until changed again.
pub fn set_grad_enabled(enabled: bool) {
    ts_tensor::autograd::set_grad_enabled(enabled)
}

/// A scope without recording (`with torch.no_grad():`); the previous mode returns on drop.
pub fn no_grad() -> GradModeGuard {
    GradModeGuard::no_grad()
}

/// A scope with recording on (`with torch.enable_grad():`).
pub fn enable_grad() -> GradModeGuard {
    GradModeGuard::new(true)
}

/// `torch.autograd.grad(outputs, inputs, grad_outputs)`: the gradients of `outputs` with
/// respect to `inputs`, seeded with `grad_outputs` (ones for scalar outputs when `None`).
/// With `create_graph`, the result records history so that it can be differentiated again.
/// An input that `outputs` does not depend on gives `None` when `allow_unused`, else an error.
pub fn grad(
    outputs: &[Tensor],
    inputs: &[Tensor],
    grad_outputs: Option<&[Tensor]>,
    create_graph: bool,
    allow_unused: bool,
) -> Result<Vec<Option<Tensor>>> {
    let outs: Vec<ts_tensor::Tensor> = outputs.iter().map(|t| t.0.clone()).collect();
    let ins: Vec<ts_tensor::Tensor> = inputs.iter().map(|t| t.0.clone()).collect();
    let given: Vec<Option<ts_tensor::Tensor>> = grad_outputs
        .map(|g| g.iter().map(|t| Some(t.0.clone())).collect())
        .unwrap_or_default();
    let roots = ts_ops::autograd::api::seed(&outs, given)?;
    let req = ts_ops::autograd::engine::BackwardRequest {
        roots: &roots,
        inputs: Some(&ins),
        retain_graph: create_graph,
        create_graph,
        allow_unused,
    };
    let grads = ts_ops::autograd::engine::run_backward(&req)?;
    Ok(grads.into_iter().map(|g| g.map(Tensor)).collect())
}

impl Tensor {
    /// Whether operations on this tensor record history (`Tensor.requires_grad`).
    pub fn requires_grad(&self) -> bool {
        self.0.requires_grad()
    }

    /// Marks a leaf tensor as requiring grad, or not (`Tensor.requires_grad_`). Only floating
    /// and complex tensors can require grad, as in PyTorch.
    pub fn set_requires_grad(&self, requires_grad: bool) -> Result<()> {
        if requires_grad && !(self.0.dtype().is_floating_point() || self.0.dtype().is_complex()) {
            return Err(crate::Error::new(
                crate::ErrorKind::Runtime,
                "only Tensors of floating point and complex dtype can require gradients",
            ));
        }
        if !self.0.is_leaf() {
            return Err(crate::Error::new(
                crate::ErrorKind::Runtime,
                "you can only change requires_grad flags of leaf variables.",
            ));
        }
        self.0.set_requires_grad(requires_grad);
        Ok(())
    }

    /// The gradient accumulated into this leaf by [`Tensor::backward`] (`Tensor.grad`).
    pub fn grad(&self) -> Option<Tensor> {
        self.0.grad().map(Tensor)
    }

    /// Replaces or clears the accumulated gradient (`Tensor.grad = g`, `zero_grad`).
    pub fn set_grad(&self, grad: Option<Tensor>) {
        self.0.set_grad(grad.map(|g| g.0))
    }

    /// Whether this tensor was created by the user rather than by a recorded operation.
    pub fn is_leaf(&self) -> bool {
        self.0.is_leaf()
    }

    /// A tensor sharing this one's data with no history (`Tensor.detach()`).
    pub fn detach(&self) -> Tensor {
        Tensor(self.0.detach())
    }

    /// Runs the backward pass from this scalar tensor and accumulates gradients into every leaf
    /// that requires grad (`Tensor.backward()`); the recorded graph is freed afterwards.
    pub fn backward(&self) -> Result<()> {
        let roots = ts_ops::autograd::api::seed(std::slice::from_ref(&self.0), Vec::new())?;
        let req = ts_ops::autograd::engine::BackwardRequest {
            roots: &roots,
            inputs: None,
            retain_graph: false,
            create_graph: false,
            allow_unused: true,
        };
        ts_ops::autograd::engine::run_backward(&req)?;
        Ok(())
    }
}
