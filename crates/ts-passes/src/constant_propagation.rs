//! Constant propagation on immutable types (PyTorch's `ConstantPropagationImmutableTypes`, run
//! by the cleanup passes after compiling): nodes whose inputs are all constants and whose inputs
//! and outputs have no mutable types are run at compile time and replaced by constants; `If`s on
//! constant conditions are inlined; loops that cannot run are removed; `If`/`Loop` outputs that
//! do not change are forwarded. Dead code is removed afterwards when anything changed.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ts_core::{prim, IValue, Symbol, Type};
use ts_ir::{BlockId, Graph, NodeId, ValueId};

use crate::dead_code_elimination::eliminate_dead_code;
use crate::side_effects::has_side_effects;

/// Runs the pass; returns whether the graph changed.
pub fn constant_propagation_immutable_types(g: &mut Graph) -> bool {
    let mut changed = false;
    let top = g.block();
    propagate_block(g, top, &mut changed);
    if changed {
        eliminate_dead_code(g);
    }
    changed
}

fn propagate_block(g: &mut Graph, b: BlockId, changed: &mut bool) {
    for n in g.block_nodes(b) {
        if g.is_alive(n) {
            propagate_node(g, n, changed);
        }
    }
}

fn propagate_blocks(g: &mut Graph, n: NodeId, changed: &mut bool) {
    for b in g.node(n).blocks().to_vec() {
        propagate_block(g, b, changed);
    }
}

fn is_constant(g: &Graph, v: ValueId) -> bool {
    g.node(g.value(v).node()).kind() == prim::Constant
}

fn propagate_node(g: &mut Graph, n: NodeId, changed: &mut bool) {
    let kind = g.node(n).kind();
    let constant_inputs = g.node(n).inputs().iter().all(|&v| is_constant(g, v));
    if kind == prim::If {
        if constant_inputs {
            inline_if(g, n, changed);
        } else {
            propagate_blocks(g, n, changed);
            remove_extra_if_outputs(g, n, changed);
        }
    } else if kind == prim::Loop {
        if loop_will_not_run(g, n) {
            remove_loop(g, n);
            *changed = true;
        } else {
            propagate_blocks(g, n, changed);
            remove_extra_loop_outputs(g, n, changed);
        }
    } else if constant_inputs && supported_node(g, n) {
        fold(g, n, changed);
    } else {
        propagate_blocks(g, n, changed);
    }
}

/// Nodes the pass may run: no mutable inputs or outputs, no side effects, no blocks.
fn supported_node(g: &Graph, n: NodeId) -> bool {
    let node = g.node(n);
    let skip = [
        prim::If,
        prim::Loop,
        prim::Constant,
        prim::Uninitialized,
        Symbol::prim("Closure"),
        Symbol::prim("AutogradZero"),
        Symbol::prim("unchecked_unwrap_optional"),
        Symbol::prim("awaitable"),
        Symbol::aten("dequantize"),
    ];
    if skip.contains(&node.kind()) || !node.blocks().is_empty() {
        return false;
    }
    let mutable = node
        .inputs()
        .iter()
        .chain(node.outputs())
        .any(|&v| g.value(v).ty().is_mutable_type());
    !mutable && !has_side_effects(g, n)
}

/// Runs `n` on its constant inputs; `None` when it cannot run (or raises).
fn run_node(g: &Graph, n: NodeId) -> Option<Vec<IValue>> {
    let node = g.node(n);
    let mut stack = Vec::with_capacity(node.inputs().len());
    for &v in node.inputs() {
        stack.push(g.to_ivalue(v)?);
    }
    let kind = node.kind();
    if kind == prim::TupleConstruct {
        let ty = g.value(node.output(0)).ty().clone();
        let named = matches!(&*ty, Type::Tuple(t) if t.names.is_some());
        return Some(vec![if named {
            IValue::named_tuple(ty, stack)
        } else {
            IValue::tuple(stack)
        }]);
    }
    if kind == prim::TupleUnpack {
        let t = stack.pop()?;
        let elems = t.as_tuple()?.elements.clone();
        return (elems.len() == node.outputs().len()).then_some(elems);
    }
    if kind == prim::unchecked_cast {
        return Some(stack);
    }
    let op = ts_ops::registry().match_node(g, n)?;
    if op.schema.is_vararg {
        return None;
    }
    let operation = op.operation_for(g, n).ok()?;
    let ok = catch_unwind(AssertUnwindSafe(|| operation(&mut stack))).ok()?;
    ok.ok()?;
    (stack.len() == node.outputs().len()).then_some(stack)
}

/// Whether `v` can be written as a `prim::Constant`.
fn insertable(v: &IValue) -> bool {
    match v {
        IValue::None
        | IValue::Int(_)
        | IValue::Double(_)
        | IValue::Bool(_)
        | IValue::String(_)
        | IValue::Device(_) => true,
        IValue::Tuple(t) => t.elements.iter().all(insertable),
        _ => false,
    }
}

fn fold(g: &mut Graph, n: NodeId, changed: &mut bool) {
    let Some(outs) = run_node(g, n) else {
        return;
    };
    for (i, v) in outs.iter().enumerate() {
        if !insertable(v) {
            continue;
        }
        let old = g.node(n).output(i);
        let c = g.create_constant(v);
        g.insert_before(c, n);
        let new = g.node(c).output(0);
        if matches!(v, IValue::None) {
            let ty = g.value(old).ty().clone();
            g.set_type(new, ty);
        }
        g.replace_all_uses_with(old, new);
        *changed = true;
    }
    // Drop the folded node and the constants only it used right away: a chain of folds
    // (`s + 'a' + 'a' ...`) would otherwise keep every intermediate value until the final
    // dead-code pass, quadratic memory for growing strings.
    if g.node(n).outputs().iter().all(|&o| !g.value(o).has_uses()) {
        let inputs = g.node(n).inputs().to_vec();
        if g.destroy_node(n).is_ok() {
            for v in inputs {
                let producer = g.value(v).node();
                if g.is_alive(producer)
                    && g.node(producer).kind() == prim::Constant
                    && !g.value(v).has_uses()
                {
                    let _ = g.destroy_node(producer);
                }
            }
        }
    }
}

fn inline_if(g: &mut Graph, n: NodeId, changed: &mut bool) {
    let Some(IValue::Bool(cond)) = g.to_ivalue(g.node(n).input(0)) else {
        return;
    };
    let b = g.node(n).blocks()[if cond { 0 } else { 1 }];
    propagate_block(g, b, changed);
    for m in g.block_nodes(b) {
        g.move_before(m, n);
    }
    let outs = g.node(n).outputs().to_vec();
    let rets = g.block_outputs(b).to_vec();
    for (o, r) in outs.into_iter().zip(rets) {
        g.replace_all_uses_with(o, r);
    }
    let _ = g.destroy_node(n);
    *changed = true;
}

/// Forwards `If` outputs that are the same value in both blocks, or equal constants.
fn remove_extra_if_outputs(g: &mut Graph, n: NodeId, changed: &mut bool) {
    let (tb, fb) = (g.node(n).blocks()[0], g.node(n).blocks()[1]);
    let mut i = 0;
    while i < g.node(n).outputs().len() {
        let t = g.block_outputs(tb)[i];
        let f = g.block_outputs(fb)[i];
        let replacement = if t == f {
            Some(t)
        } else {
            match (g.to_ivalue(t), g.to_ivalue(f)) {
                (Some(a), Some(b))
                    if is_constant(g, t)
                        && is_constant(g, f)
                        && g.value(t).ty() == g.value(f).ty()
                        && same_constant(g, t, f)
                        && a.type_of() == b.type_of() =>
                {
                    let c = g.create_constant(&a);
                    g.insert_before(c, n);
                    Some(g.node(c).output(0))
                }
                _ => None,
            }
        };
        match replacement {
            Some(r) => {
                let out = g.node(n).output(i);
                g.replace_all_uses_with(out, r);
                let _ = g.erase_output(n, i);
                g.erase_block_output(tb, i);
                g.erase_block_output(fb, i);
                *changed = true;
            }
            None => i += 1,
        }
    }
}

/// Two constant nodes with equal attributes (PyTorch's `EqualNode` on constants).
fn same_constant(g: &Graph, a: ValueId, b: ValueId) -> bool {
    let (na, nb) = (g.node(g.value(a).node()), g.node(g.value(b).node()));
    let print = |attrs: &[(Symbol, ts_ir::AttributeValue)]| {
        let mut s = String::new();
        for (k, v) in attrs {
            if matches!(v, ts_ir::AttributeValue::Tensor(_)) {
                return None;
            }
            s.push_str(k.name());
            s.push('=');
            ts_ir::printer::write_attribute(&mut s, v);
            s.push(';');
        }
        Some(s)
    };
    match (print(na.attrs()), print(nb.attrs())) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

fn loop_will_not_run(g: &Graph, n: NodeId) -> bool {
    let node = g.node(n);
    let trip = match g.to_ivalue(node.input(0)) {
        Some(IValue::Int(i)) => i,
        _ => 1,
    };
    let cond = match g.to_ivalue(node.input(1)) {
        Some(IValue::Bool(b)) => b,
        _ => true,
    };
    !(cond && trip > 0)
}

fn remove_loop(g: &mut Graph, n: NodeId) {
    let outs = g.node(n).outputs().to_vec();
    for (i, o) in outs.into_iter().enumerate() {
        let init = g.node(n).input(2 + i);
        g.replace_all_uses_with(o, init);
    }
    let _ = g.destroy_node(n);
}

/// Drops loop-carried values the body passes through unchanged.
fn remove_extra_loop_outputs(g: &mut Graph, n: NodeId, changed: &mut bool) {
    let body = g.node(n).blocks()[0];
    for i in (0..g.node(n).outputs().len()).rev() {
        let carried = g.block_inputs(body)[1 + i];
        if carried != g.block_outputs(body)[1 + i] {
            continue;
        }
        let init = g.node(n).input(2 + i);
        let out = g.node(n).output(i);
        g.replace_all_uses_with(out, init);
        g.replace_all_uses_with(carried, init);
        g.erase_block_output(body, 1 + i);
        let _ = g.erase_output(n, i);
        g.remove_input(n, 2 + i);
        let _ = g.erase_block_input(body, 1 + i);
        *changed = true;
    }
}
