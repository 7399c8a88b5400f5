//! Backward nodes and the edges between them.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::{Dims, Tensor, WeakTensor};

/// Computes the gradients of a node's inputs (one per edge) from the gradients of its outputs
/// (one per output, zero-filled where none arrived).
pub type BackwardFn = dyn Fn(&[Tensor]) -> Result<Vec<Option<Tensor>>> + Send + Sync;

/// Where a node sends the gradient of one of its inputs.
#[derive(Clone)]
pub enum Edge {
    /// To input `input_nr` of another node (the gradient of that node's output `input_nr`).
    Node { node: Arc<Node>, input_nr: usize },
    /// Into a leaf that requires grad (PyTorch's `AccumulateGrad`).
    Leaf(Tensor),
}

/// A tensor a node keeps for its formula, with the version it had when saved.
pub struct SavedTensor {
    pub tensor: Tensor,
    pub version: u64,
    /// Whether it is output 0 of the node that saves it (`exp`, `relu`: the formula reads the
    /// result); the version error then names that node, as PyTorch does.
    pub is_output: bool,
}

/// How PyTorch's version-counter error names a node: the class name without its
/// `Backward<N>` suffix (`MulBackward0` → `Mul`); `CopySlices` by its C++ name.
fn node_label(name: &str) -> String {
    if name == "CopySlices" {
        return "torch::autograd::CopySlices".into();
    }
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
    match stem.strip_suffix("Backward") {
        Some(s) if stem.len() < name.len() => s.to_string(),
        _ => name.to_string(),
    }
}

/// One recorded operation of the backward graph.
pub struct Node {
    /// PyTorch's class name of the node (`MulBackward0`), for messages and `grad_fn` printing.
    pub name: String,
    /// One edge per differentiable input (`None` where that input needs no gradient).
    pub next_edges: Vec<Option<Edge>>,
    /// Sizes and dtype of each output, to zero-fill gradients that do not arrive.
    pub outputs: Vec<(Dims, DType)>,
    /// Tensors whose in-place modification invalidates this node.
    pub saved: Vec<SavedTensor>,
    backward: Mutex<Option<Box<BackwardFn>>>,
    /// Non-leaf outputs that `retain_grad()` asked to keep their gradient.
    retained: Mutex<Vec<(usize, WeakTensor)>>,
}

impl Node {
    /// A node computing its inputs' gradients with `backward`.
    pub fn new(
        name: String,
        next_edges: Vec<Option<Edge>>,
        outputs: Vec<(Dims, DType)>,
        saved: Vec<SavedTensor>,
        backward: Box<BackwardFn>,
    ) -> Node {
        Node {
            name,
            next_edges,
            outputs,
            saved,
            backward: Mutex::new(Some(backward)),
            retained: Mutex::new(Vec::new()),
        }
    }

    /// Runs the formula on the outputs' gradients. Fails when the graph was already freed by
    /// an earlier backward pass or a saved tensor was modified in place since.
    pub fn apply(&self, grads: &[Tensor], release: bool) -> Result<Vec<Option<Tensor>>> {
        for s in &self.saved {
            let now = s.tensor.version();
            if now != s.version {
                let m = s.tensor.meta();
                let what = if s.is_output {
                    format!(", which is output 0 of {},", node_label(&self.name))
                } else {
                    match s.tensor.grad_fn() {
                        Some((f, nr)) => {
                            format!(", which is output {nr} of {},", node_label(&f.name))
                        }
                        None => String::new(),
                    }
                };
                return Err(Error::runtime(format!(
                    "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.{}Tensor {:?}]{what} is at version {now}; expected version {} instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).",
                    m.dtype.scalar_type_name(),
                    m.sizes.as_slice(),
                    s.version
                )));
            }
        }
        let f = if release {
            self.backward.lock().take()
        } else {
            None
        };
        let out = match f {
            Some(f) => f(grads),
            None => match self.backward.lock().as_ref() {
                Some(f) => f(grads),
                None => Err(Error::runtime(
                    "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.",
                )),
            },
        }?;
        if out.len() != self.next_edges.len() {
            return Err(Error::runtime(format!(
                "function {} returned an incorrect number of gradients (expected {}, got {})",
                self.name,
                self.next_edges.len(),
                out.len()
            )));
        }
        Ok(out)
    }

    /// Asks that output `output_nr` (the tensor `t`) keep its gradient in `.grad`.
    pub fn retain_output(&self, output_nr: usize, t: &Tensor) {
        let mut r = self.retained.lock();
        if !r
            .iter()
            .any(|(n, w)| *n == output_nr && w.upgrade().is_some_and(|u| Tensor::is_same(&u, t)))
        {
            r.push((output_nr, t.downgrade()));
        }
    }

    /// The live tensors that retain their gradient, with their output numbers.
    pub fn retained_outputs(&self) -> Vec<(usize, Tensor)> {
        self.retained
            .lock()
            .iter()
            .filter_map(|(n, w)| w.upgrade().map(|t| (*n, t)))
            .collect()
    }
}
