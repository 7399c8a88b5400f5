//! The tensor side of autograd: grad mode (thread-local, as in PyTorch), the metadata a tensor
//! carries once it takes part in differentiation (`.grad`, `grad_fn`, `retain_grad`), and the
//! backward graph's nodes and edges.
//!
//! Operators record nodes (ts-ops' `autograd::record`, one wrapper around every registered
//! operator) and the engine (ts-ops' `autograd::engine`) runs them; both live above this crate
//! because derivative formulas are written with the operators themselves, so that the graph
//! they build can be differentiated again (`create_graph=True`).

mod grad_mode;
mod node;

pub use grad_mode::{is_grad_enabled, set_grad_enabled, GradModeGuard};
pub use node::{BackwardFn, Edge, Node, SavedTensor};

use std::sync::Arc;

use crate::tensor::Tensor;

/// What a tensor knows about its place in the backward graph.
#[derive(Default)]
pub struct AutogradMeta {
    /// The accumulated gradient (`.grad`) of a leaf, or of a non-leaf that retains it.
    pub grad: Option<Tensor>,
    /// The node that computes the gradient of the operation that produced this tensor; `None`
    /// for leaves.
    pub grad_fn: Option<Arc<Node>>,
    /// Which output of `grad_fn` this tensor is.
    pub output_nr: usize,
    /// Set by `retain_grad()` on a non-leaf.
    pub retains_grad: bool,
    /// For a view made while grad mode was on: the tensor it views (itself never a view).
    /// An in-place write through the view rewrites that base's history (`CopySlices`).
    pub view_base: Option<Tensor>,
    /// The storage version when this view's `grad_fn` last matched its base's history; a
    /// write since (through the base or another view) makes the history stale.
    pub view_version: u64,
}

impl Tensor {
    /// The node that produced this tensor (`grad_fn`), with its output number.
    pub fn grad_fn(&self) -> Option<(Arc<Node>, usize)> {
        let g = self.autograd();
        g.as_ref()
            .and_then(|m| m.grad_fn.clone().map(|f| (f, m.output_nr)))
    }

    /// True when no recorded operation produced this tensor (`is_leaf`).
    pub fn is_leaf(&self) -> bool {
        self.grad_fn().is_none()
    }

    /// Attaches history: this tensor is output `output_nr` of `node`, and requires grad.
    pub fn set_grad_fn(&self, node: Arc<Node>, output_nr: usize) {
        {
            let mut g = self.autograd();
            let m = g.get_or_insert_with(Default::default);
            m.grad_fn = Some(node);
            m.output_nr = output_nr;
        }
        self.set_requires_grad(true);
    }

    /// Drops the history (`detach_`): the tensor becomes a leaf that does not require grad.
    pub fn clear_grad_fn(&self) {
        if let Some(m) = self.autograd().as_mut() {
            m.grad_fn = None;
            m.output_nr = 0;
        }
        self.set_requires_grad(false);
    }

    /// The accumulated gradient (`.grad`).
    pub fn grad(&self) -> Option<Tensor> {
        self.autograd().as_ref().and_then(|m| m.grad.clone())
    }

    /// Replaces the accumulated gradient (`.grad = g`).
    pub fn set_grad(&self, grad: Option<Tensor>) {
        let mut g = self.autograd();
        match (g.as_mut(), grad) {
            (Some(m), grad) => m.grad = grad,
            (None, Some(grad)) => {
                *g = Some(Box::new(AutogradMeta {
                    grad: Some(grad),
                    ..Default::default()
                }))
            }
            (None, None) => {}
        }
    }

    /// True when `retain_grad()` was called on this non-leaf.
    pub fn retains_grad(&self) -> bool {
        self.autograd().as_ref().is_some_and(|m| m.retains_grad)
    }

    /// The base this tensor is a view of (see [`AutogradMeta::view_base`]).
    pub fn view_base(&self) -> Option<Tensor> {
        self.autograd().as_ref().and_then(|m| m.view_base.clone())
    }

    /// The base this tensor views and the version its history was last in step with it.
    pub fn view_info(&self) -> Option<(Tensor, u64)> {
        self.autograd()
            .as_ref()
            .and_then(|m| m.view_base.clone().map(|b| (b, m.view_version)))
    }

    /// Marks this tensor as a view of `base` (a tensor that is not itself a view) whose history
    /// is in step with the base at storage version `version`.
    pub fn set_view_base(&self, base: Tensor, version: u64) {
        let mut g = self.autograd();
        let m = g.get_or_insert_with(Default::default);
        m.view_base = Some(base);
        m.view_version = version;
    }

    /// `Tensor._version`: how many in-place writes its storage has seen.
    pub fn version(&self) -> u64 {
        self.meta().storage.version()
    }

    /// Records an in-place write to this tensor (see [`Tensor::version`]).
    pub fn bump_version(&self) {
        self.meta().storage.bump_version();
    }
}
