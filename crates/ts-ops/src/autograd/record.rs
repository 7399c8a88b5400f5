//! Recording: the one wrapper every `aten` operator with tensor arguments runs through.
//!
//! With grad mode off, or no tensor argument requiring grad, the wrapper only bumps the version
//! counter of the tensors an in-place or `out=` overload writes, and calls the kernel. Otherwise
//! it captures the inputs' edges, runs the kernel with grad mode off, and attaches a [`Node`]
//! running the operator's formula to its floating-point outputs (an in-place operator rebases
//! `self`'s history onto the new node). An operator without a formula still gets a node, whose
//! backward raises "the derivative for ... is not implemented", so that a gradient is never
//! silently wrong.

use std::sync::Arc;

use ts_core::{FunctionSchema, IValue, Type};
use ts_tensor::autograd::{is_grad_enabled, Edge, GradModeGuard, Node, SavedTensor};
use ts_tensor::{Error, Tensor};

use super::copy_slices;
use super::formula::{formula_for, Ctx, Formula};
use crate::registry::{Operation, Stack};
use crate::tensor_ops::Args;

/// Operators that never record: the autograd operators themselves and those whose outputs do
/// not depend differentiably on their inputs.
const NOT_RECORDED: &[&str] = &[
    "aten::grad",
    "aten::backward",
    "aten::_backward",
    "aten::backward.TensorList",
    "aten::requires_grad_",
    "aten::detach",
    "aten::detach_",
    "aten::retain_grad",
    "aten::is_leaf",
    "aten::_version",
    "aten::output_nr",
    "aten::set_grad_enabled",
    "aten::is_grad_enabled",
    "aten::zeros_like",
    "aten::ones_like",
    "aten::empty_like",
    "aten::full_like",
    "aten::rand_like",
    "aten::randn_like",
    "aten::randint_like",
    "aten::new_zeros",
    "aten::new_ones",
    "aten::new_empty",
    "aten::new_empty_strided",
    "aten::new_full",
    "aten::new_tensor",
    "aten::size",
    "aten::numel",
    "aten::dim",
    "aten::item",
    "aten::bernoulli",
    "aten::bernoulli.p",
    "aten::multinomial",
    "aten::normal.Tensor_Tensor",
    "aten::normal.Tensor_float",
    "aten::normal.float_Tensor",
    "aten::poisson",
];

fn type_has_tensor(t: &Type) -> bool {
    match t {
        Type::Tensor(_) => true,
        Type::Optional(e) | Type::List(e) => type_has_tensor(e),
        _ => false,
    }
}

/// Wraps a registered operation with recording (see the module documentation).
pub fn wrap(schema: &FunctionSchema, op: Operation) -> Operation {
    if !schema.name.starts_with("aten::") || schema.is_vararg {
        return op;
    }
    let full = if schema.overload_name.is_empty() {
        schema.name.clone()
    } else {
        format!("{}.{}", schema.name, schema.overload_name)
    };
    if NOT_RECORDED.contains(&full.as_str()) {
        return op;
    }
    let tensor_args: Vec<usize> = schema
        .arguments
        .iter()
        .enumerate()
        .filter(|(_, a)| type_has_tensor(&a.ty))
        .map(|(i, _)| i)
        .collect();
    if tensor_args.is_empty() {
        return op;
    }
    let written: Vec<usize> = schema
        .arguments
        .iter()
        .enumerate()
        .filter(|(_, a)| a.alias_info.as_ref().is_some_and(|i| i.is_write))
        .map(|(i, _)| i)
        .collect();
    let base_name = schema.name.trim_start_matches("aten::");
    let in_place = base_name.ends_with('_') && written == [0];
    // `out=` overloads write keyword-only arguments; they do not record: with grad mode on, an
    // argument (out included) that requires grad is an error, as in PyTorch.
    let is_out = written.iter().any(|&i| schema.arguments[i].kwarg_only);
    let is_view = !in_place && written.is_empty() && returns_alias_of_self(schema);
    let mut formula_op = full.clone();
    let formula = if in_place {
        let functional = format!(
            "aten::{}{}",
            base_name.trim_end_matches('_'),
            if schema.overload_name.is_empty() {
                String::new()
            } else {
                format!(".{}", schema.overload_name)
            }
        );
        match formula_for(&functional) {
            Some(f) => {
                formula_op = functional;
                Some(f)
            }
            None => formula_for(&full),
        }
    } else {
        formula_for(&full)
    };
    let info = Arc::new(OpInfo {
        full,
        short_name: base_name.to_string(),
        node_name: node_name(base_name.trim_end_matches('_')),
        n: schema.arguments.len(),
        tensor_args: tensor_args.into(),
        written,
        in_place,
        is_out,
        is_view,
        formula,
        formula_op: Arc::from(formula_op),
    });
    Arc::new(move |s: &mut Stack| {
        let info = &*info;
        if s.len() < info.n {
            return op(s);
        }
        let base = s.len() - info.n;
        let written: Vec<Tensor> = info
            .written
            .iter()
            .filter_map(|&i| s[base + i].as_tensor().cloned())
            .collect();
        let any_requires_grad = || {
            info.tensor_args
                .iter()
                .any(|&i| ivalue_requires_grad(&s[base + i]))
        };
        if info.is_out && is_grad_enabled() && any_requires_grad() {
            return Err(Error::runtime(format!(
                "{}(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.",
                info.short_name
            )));
        }
        let grad_mode = is_grad_enabled();
        if grad_mode {
            for &i in info.tensor_args.iter() {
                if let IValue::Tensor(t) = &s[base + i] {
                    copy_slices::refresh_view(t);
                }
            }
        }
        let record = grad_mode
            && !info.is_out
            && info
                .tensor_args
                .iter()
                .any(|&i| ivalue_requires_grad(&s[base + i]));
        // The view an in-place operator writes, with its base (see `copy_slices`).
        let through_view = match &s[base] {
            IValue::Tensor(t) if record && info.in_place => {
                t.view_info().map(|(b, _)| (t.clone(), b))
            }
            _ => None,
        };
        let view_input = match &s[base] {
            IValue::Tensor(t) if grad_mode && info.is_view => Some(t.clone()),
            _ => None,
        };
        if let Some((_, b)) = &through_view {
            if b.is_leaf() && b.requires_grad() {
                return Err(Error::runtime(
                    "a view of a leaf Variable that requires grad is being used in an in-place operation.",
                ));
            }
        }
        if record {
            run_recorded(info, &op, s, base)?;
        } else {
            op(s)?;
        }
        for t in &written {
            t.bump_version();
        }
        if let Some((v, b)) = through_view {
            copy_slices::rebase_through_view(&v, &b)?;
            v.set_view_base(b, v.version());
        }
        if let Some(input) = view_input {
            let outs = flat_outputs(&s[base..]);
            let outs: Vec<Tensor> = outs.into_iter().filter(differentiable).collect();
            copy_slices::mark_views(&input, &outs);
        }
        Ok(())
    })
}

/// True when the schema's results alias `self` without writing it (`select`, `view`, `split`'s
/// list): the outputs are views of `self`.
fn returns_alias_of_self(schema: &FunctionSchema) -> bool {
    let Some(a0) = schema.arguments.first().and_then(|a| a.alias_info.as_ref()) else {
        return false;
    };
    if a0.is_write || a0.before_sets.is_empty() || a0.before_sets.iter().any(|s| s == "*") {
        return false;
    }
    schema.returns.iter().any(|r| {
        r.alias_info.as_ref().is_some_and(|ri| {
            ri.before_sets == a0.before_sets
                || ri.contained.iter().any(|c| c.before_sets == a0.before_sets)
        })
    })
}

struct OpInfo {
    full: String,
    /// `add` for `aten::add.out` (how PyTorch names the operator in its out= error).
    short_name: String,
    node_name: String,
    n: usize,
    tensor_args: Arc<[usize]>,
    written: Vec<usize>,
    in_place: bool,
    is_out: bool,
    /// The outputs are views of `self` (marked so an in-place write through them rewrites
    /// `self`'s history).
    is_view: bool,
    formula: Option<Formula>,
    /// The operator the formula is written for (the functional one for an in-place op).
    formula_op: Arc<str>,
}

/// PyTorch's node class name: `log_softmax` → `LogSoftmaxBackward0`.
fn node_name(op: &str) -> String {
    let mut s = String::new();
    for part in op.split('_').filter(|p| !p.is_empty()) {
        let mut c = part.chars();
        if let Some(f) = c.next() {
            s.extend(f.to_uppercase());
            s.push_str(c.as_str());
        }
    }
    s.push_str("Backward0");
    s
}

fn ivalue_requires_grad(v: &IValue) -> bool {
    match v {
        IValue::Tensor(t) => t.requires_grad(),
        IValue::List(l) => l.items.read().iter().any(ivalue_requires_grad),
        _ => false,
    }
}

/// The edge a gradient for `t` follows: into its producer, into the leaf, or nowhere.
pub fn edge_of(t: &Tensor) -> Option<Edge> {
    match t.grad_fn() {
        Some((node, nr)) => Some(Edge::Node { node, input_nr: nr }),
        None if t.requires_grad() => Some(Edge::Leaf(t.clone())),
        None => None,
    }
}

/// True when `t` is a view (through single-input nodes sharing its storage) of a leaf that
/// requires grad: writing into it in place would change the leaf behind autograd's back.
fn views_a_leaf(t: &Tensor) -> bool {
    let Some((mut node, _)) = t.grad_fn() else {
        return false;
    };
    let storage = t.storage();
    for _ in 0..256 {
        let mut edges = node.next_edges.iter().flatten();
        let (Some(e), None) = (edges.next(), edges.next()) else {
            return false;
        };
        match e {
            Edge::Leaf(l) => {
                return l.requires_grad() && ts_tensor::Storage::ptr_eq(&l.storage(), &storage)
            }
            Edge::Node { node: n, .. } => {
                let n = n.clone();
                node = n;
            }
        }
    }
    false
}

/// The tensors of the tensor arguments, flattened (lists expanded, `None` kept as a slot).
fn flat_inputs(args: &[IValue], tensor_args: &[usize]) -> Vec<Option<Tensor>> {
    let mut v = Vec::new();
    for &i in tensor_args {
        match &args[i] {
            IValue::Tensor(t) => v.push(Some(t.clone())),
            IValue::List(l) => {
                for x in l.items.read().iter() {
                    v.push(x.as_tensor().cloned());
                }
            }
            _ => v.push(None),
        }
    }
    v
}

/// The tensor arguments the operator does not write (running statistics are written).
fn read_only_args(info: &OpInfo) -> Vec<usize> {
    info.tensor_args
        .iter()
        .copied()
        .filter(|i| info.in_place || !info.written.contains(i))
        .collect()
}

/// The tensors among an operator's results, flattened over tensor lists.
fn flat_outputs(outs: &[IValue]) -> Vec<Tensor> {
    let mut v = Vec::new();
    for o in outs {
        match o {
            IValue::Tensor(t) => v.push(t.clone()),
            IValue::List(l) => {
                for x in l.items.read().iter() {
                    if let IValue::Tensor(t) = x {
                        v.push(t.clone());
                    }
                }
            }
            IValue::Tuple(tu) => {
                for x in tu.elements.iter() {
                    if let IValue::Tensor(t) = x {
                        v.push(t.clone());
                    }
                }
            }
            _ => {}
        }
    }
    v
}

fn differentiable(t: &Tensor) -> bool {
    let d = t.dtype();
    d.is_floating_point() || d.is_complex()
}

fn run_recorded(info: &OpInfo, op: &Operation, s: &mut Stack, base: usize) -> Result<(), Error> {
    let mut args: Vec<IValue> = s[base..].to_vec();
    let inputs = flat_inputs(&args, &info.tensor_args);
    let edges: Vec<Option<Edge>> = inputs
        .iter()
        .map(|t| t.as_ref().and_then(edge_of))
        .collect();
    if info.in_place {
        if let Some(t) = args[0].as_tensor() {
            if t.is_leaf() && t.requires_grad() {
                return Err(Error::runtime(
                    "a leaf Variable that requires grad is being used in an in-place operation.",
                ));
            }
            if views_a_leaf(t) {
                return Err(Error::runtime(
                    "a view of a leaf Variable that requires grad is being used in an in-place operation.",
                ));
            }
            if info.formula.is_some_and(|f| f.saves_inputs) {
                // The formula sees `self` as it was: a copy made before the write (recorded,
                // so that higher-order gradients flow through it).
                let orig = super::ops::call1(
                    "aten::clone",
                    vec![IValue::Tensor(t.clone()), IValue::None],
                )?;
                args[0] = IValue::Tensor(orig);
            } else {
                // The formula reads only `self`'s shape (or the result); a handle without
                // history keeps the node from owning the tensor that points back at it.
                args[0] = IValue::Tensor(t.detach());
            }
        }
    }
    let before = s.len();
    {
        let _off = GradModeGuard::no_grad();
        op(s)?;
    }
    let n_out = s.len() + info.n - before;
    let outs: Vec<IValue> = s[s.len() - n_out..].to_vec();
    let all_outs = flat_outputs(&outs);
    let Some(first_out) = all_outs.iter().find(|t| differentiable(t)) else {
        return Ok(());
    };
    if edges.iter().all(|e| e.is_none()) {
        return Ok(());
    }
    let mut saved: Vec<SavedTensor> = match info.formula {
        Some(f) if f.saves_inputs => {
            // A functional operator that writes nothing saves exactly its inputs.
            let from_args;
            let src: &[Option<Tensor>] = if !info.in_place && info.written.is_empty() {
                &inputs
            } else {
                from_args = flat_inputs(&args, &read_only_args(info));
                &from_args
            };
            src.iter()
                .flatten()
                .filter(|t| !info.in_place || !Tensor::is_same(t, first_out))
                .map(|t| SavedTensor {
                    version: t.version(),
                    tensor: t.clone(),
                    is_output: false,
                })
                .collect()
        }
        _ => Vec::new(),
    };
    if info.formula.is_some_and(|f| f.saves_result) {
        if let Some(r) = all_outs.first() {
            // An in-place operator's write is counted after this returns.
            saved.push(SavedTensor {
                version: r.version() + u64::from(info.in_place),
                tensor: r.detach(),
                is_output: true,
            });
        }
    }
    let metas = all_outs
        .iter()
        .map(|t| {
            let m = t.meta();
            (m.sizes.clone(), m.dtype)
        })
        .collect();
    let detached: Vec<IValue> = outs
        .iter()
        .map(|v| match v {
            IValue::Tensor(t) => IValue::Tensor(t.detach()),
            IValue::List(l) => IValue::tensor_list(
                l.items
                    .read()
                    .iter()
                    .filter_map(|x| x.as_tensor().map(|t| t.detach())),
            ),
            IValue::Tuple(tu) => IValue::tuple(
                tu.elements
                    .iter()
                    .map(|x| match x {
                        IValue::Tensor(t) => IValue::Tensor(t.detach()),
                        o => o.clone(),
                    })
                    .collect(),
            ),
            o => o.clone(),
        })
        .collect();
    let backward: Box<ts_tensor::autograd::BackwardFn> = match info.formula {
        Some(f) => {
            let n_edges = edges.len();
            let ctx = Ctx {
                op: info.formula_op.clone(),
                tensor_args: info.tensor_args.clone(),
                args: Args(args),
                outs: detached,
            };
            Box::new(move |grads: &[Tensor]| {
                let mut v = (f.f)(&ctx, grads)?;
                v.resize(n_edges, None);
                Ok(v)
            })
        }
        None => {
            let msg = format!(
                "the derivative for '{}' is not implemented in tsrs",
                info.full
            );
            Box::new(move |_: &[Tensor]| Err(Error::runtime(msg.clone())))
        }
    };
    let node = Arc::new(Node::new(
        info.node_name.clone(),
        edges,
        metas,
        saved,
        backward,
    ));
    for (nr, t) in all_outs.iter().enumerate() {
        if !differentiable(t) {
            continue;
        }
        let aliases_input =
            !info.in_place && inputs.iter().flatten().any(|i| Tensor::is_same(i, t));
        if aliases_input {
            continue;
        }
        t.set_grad_fn(node.clone(), nr);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::node_name;

    #[test]
    fn node_names_follow_pytorch() {
        assert_eq!(node_name("log_softmax"), "LogSoftmaxBackward0");
        assert_eq!(node_name("mul"), "MulBackward0");
        assert_eq!(node_name("__and__"), "AndBackward0");
    }
}
