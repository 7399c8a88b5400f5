//! Running `prim::DifferentiableGraph` (PyTorch's `DifferentiableGraphOp`).
//!
//! With grad mode on and some input requiring grad, the forward graph `f` runs on detached
//! inputs without recording anything per operator; its outputs then get ONE autograd node
//! whose backward runs the backward graph `df` in the interpreter on the output gradients and
//! the values `f` captured (inputs kept, outputs detached so that no reference cycle forms),
//! and sends `df`'s results along the inputs' edges. Captured tensors are saved with their
//! versions, so an in-place write to one before the backward pass is reported as the engine
//! reports it.
//!
//! A backward pass with `create_graph=True` needs a gradient that is itself differentiable
//! with respect to the inputs, which `df` on detached captures cannot give; the node then
//! recomputes `f` with recording on the original inputs and lets the engine differentiate
//! that (the fallback the spec allows: never a wrong higher-order gradient). Without grad mode
//! or inputs that require grad, only `f` runs.

use std::sync::Arc;

use ts_core::{IValue, Symbol};
use ts_ir::{AttributeValue, Graph, NodeId};
use ts_ops::autograd::engine::{run_backward, BackwardRequest};
use ts_ops::autograd::record::edge_of;
use ts_ops::registry::{Operation, Stack};
use ts_tensor::autograd::{is_grad_enabled, Edge, GradModeGuard, Node, SavedTensor};
use ts_tensor::{Error, Tensor};

use crate::code::Code;
use crate::interpreter::{run_to_completion, InterpreterState};

/// A compiled differentiable graph node.
struct DifferentiableGraph {
    f: Arc<Code>,
    df: Arc<Code>,
    n_inputs: usize,
    f_real_outputs: usize,
    captured_inputs: Vec<usize>,
    captured_outputs: Vec<usize>,
}

fn attr_error(what: &str) -> Error {
    Error::runtime(format!("prim::DifferentiableGraph without {what}"))
}

/// The operation running the `prim::DifferentiableGraph` node `n` of `g`.
pub(crate) fn operation(g: &Graph, n: NodeId, name: &str) -> Result<Operation, Error> {
    let node = g.node(n);
    let f = node
        .g(Symbol::attr("Subgraph"))
        .ok_or_else(|| attr_error("a forward graph"))?;
    let df = node
        .g(Symbol::attr("ReverseSubgraph"))
        .ok_or_else(|| attr_error("a backward graph"))?;
    let ints = |k: &str| match node.attr(Symbol::attr(k)) {
        Some(AttributeValue::Ints(v)) => Ok(v.iter().map(|&i| i.max(0) as usize).collect()),
        _ => Err(attr_error(k)),
    };
    let captured_inputs: Vec<usize> = ints("df_input_captured_inputs")?;
    let captured_outputs: Vec<usize> = ints("df_input_captured_outputs")?;
    let f_real_outputs = node
        .i(Symbol::attr("f_real_outputs"))
        .ok_or_else(|| attr_error("f_real_outputs"))? as usize;
    let n_inputs = node.inputs().len();
    let consistent = f.inputs().len() == n_inputs
        && f_real_outputs == node.outputs().len()
        && f_real_outputs <= f.outputs().len()
        && captured_inputs.iter().all(|&i| i < n_inputs)
        && captured_outputs.iter().all(|&j| j < f.outputs().len())
        && df.inputs().len() == f_real_outputs + captured_inputs.len() + captured_outputs.len()
        && df.outputs().len() == n_inputs;
    if !consistent {
        return Err(Error::runtime(
            "prim::DifferentiableGraph: its forward and backward graphs do not match the node",
        ));
    }
    let d = Arc::new(DifferentiableGraph {
        f: Arc::new(Code::new(f, &format!("{name}.<differentiable graph>"))?),
        df: Arc::new(Code::new(
            df,
            &format!("{name}.<differentiable graph backward>"),
        )?),
        n_inputs,
        f_real_outputs,
        captured_inputs,
        captured_outputs,
    });
    Ok(Arc::new(move |s: &mut Stack| d.run(s)))
}

fn run_code(code: &Arc<Code>, args: Vec<IValue>) -> Result<Vec<IValue>, Error> {
    let st = InterpreterState::new(code.clone(), args).map_err(|e| e.into_error())?;
    run_to_completion(st).map_err(|e| e.into_error())
}

fn differentiable(t: &Tensor) -> bool {
    let d = t.dtype();
    d.is_floating_point() || d.is_complex()
}

fn detached(v: &IValue) -> IValue {
    match v {
        IValue::Tensor(t) => IValue::Tensor(t.detach()),
        o => o.clone(),
    }
}

impl DifferentiableGraph {
    fn run(&self, s: &mut Stack) -> Result<(), Error> {
        if s.len() < self.n_inputs {
            return Err(Error::runtime(
                "prim::DifferentiableGraph: too few values on the stack",
            ));
        }
        let inputs: Vec<IValue> = s.split_off(s.len() - self.n_inputs);
        let needs_grad = is_grad_enabled()
            && inputs
                .iter()
                .any(|v| v.as_tensor().is_some_and(|t| t.requires_grad()));
        if !needs_grad {
            let mut outs = run_code(&self.f, inputs)?;
            outs.truncate(self.f_real_outputs);
            s.extend(outs);
            return Ok(());
        }
        let det: Vec<IValue> = inputs.iter().map(detached).collect();
        let outs = {
            let _off = GradModeGuard::no_grad();
            run_code(&self.f, det.clone())?
        };
        if outs.len() < self.f_real_outputs {
            return Err(Error::runtime(
                "prim::DifferentiableGraph: the forward graph returned too few values",
            ));
        }
        let captured: Vec<IValue> = self
            .captured_inputs
            .iter()
            .map(|&i| det[i].clone())
            .chain(self.captured_outputs.iter().map(|&j| detached(&outs[j])))
            .collect();
        let saved: Vec<SavedTensor> = captured
            .iter()
            .filter_map(|v| v.as_tensor())
            .map(|t| SavedTensor {
                version: t.version(),
                tensor: t.clone(),
                is_output: false,
            })
            .collect();
        let real: Vec<IValue> = outs.into_iter().take(self.f_real_outputs).collect();
        let mut metas = Vec::with_capacity(real.len());
        for v in &real {
            let t = v.as_tensor().ok_or_else(|| {
                Error::runtime("prim::DifferentiableGraph: an output is not a tensor")
            })?;
            let m = t.meta();
            metas.push((m.sizes.clone(), m.dtype));
        }
        let edges: Vec<Option<Edge>> = inputs
            .iter()
            .map(|v| v.as_tensor().and_then(edge_of))
            .collect();
        let df = self.df.clone();
        let f = self.f.clone();
        let n_real = self.f_real_outputs;
        let backward = Box::new(move |grads: &[Tensor]| {
            if is_grad_enabled() {
                return differentiate_by_engine(&f, &inputs, n_real, grads);
            }
            let mut args: Vec<IValue> = grads.iter().cloned().map(IValue::Tensor).collect();
            args.extend(captured.iter().cloned());
            let outs = run_code(&df, args)?;
            Ok(outs
                .into_iter()
                .map(|v| match v {
                    IValue::Tensor(t) => Some(t),
                    _ => None,
                })
                .collect())
        });
        let node = Arc::new(Node::new(
            "DifferentiableGraphBackward".to_string(),
            edges,
            metas,
            saved,
            backward,
        ));
        for (nr, v) in real.iter().enumerate() {
            if let IValue::Tensor(t) = v {
                if differentiable(t) {
                    t.set_grad_fn(node.clone(), nr);
                }
            }
        }
        s.extend(real);
        Ok(())
    }
}

/// The inputs' gradients for `create_graph=True`: `f` recomputed with recording on the
/// original inputs, differentiated by the engine with a graph of its own.
fn differentiate_by_engine(
    f: &Arc<Code>,
    inputs: &[IValue],
    n_real: usize,
    grads: &[Tensor],
) -> Result<Vec<Option<Tensor>>, Error> {
    let outs = run_code(f, inputs.to_vec())?;
    let roots: Vec<(Tensor, Tensor)> = outs
        .iter()
        .take(n_real)
        .zip(grads)
        .filter_map(|(o, g)| {
            o.as_tensor()
                .filter(|t| t.requires_grad())
                .map(|t| (t.clone(), g.clone()))
        })
        .collect();
    // Each distinct tensor once: an input passed twice gets its whole gradient at its first
    // position (the edges of both lead to the same place).
    let mut wanted: Vec<(usize, Tensor)> = Vec::new();
    for (i, v) in inputs.iter().enumerate() {
        if let Some(t) = v.as_tensor().filter(|t| t.requires_grad()) {
            if !wanted.iter().any(|(_, w)| Tensor::is_same(w, t)) {
                wanted.push((i, t.clone()));
            }
        }
    }
    let mut res = vec![None; inputs.len()];
    if roots.is_empty() || wanted.is_empty() {
        return Ok(res);
    }
    let ts: Vec<Tensor> = wanted.iter().map(|(_, t)| t.clone()).collect();
    let gs = run_backward(&BackwardRequest {
        roots: &roots,
        inputs: Some(&ts),
        retain_graph: false,
        create_graph: true,
        allow_unused: true,
    })?;
    for ((i, _), g) in wanted.iter().zip(gs) {
        res[*i] = g;
    }
    Ok(res)
}
