//! Inlining (PyTorch's `Inline`): every `prim::CallFunction` of a known TorchScript function and
//! every `prim::CallMethod` of a class method is replaced by the callee's body. The body
//! inlined is the callee's *optimized graph* (its own calls inlined, then peephole, immutable
//! constant propagation and constant pooling), computed once per function and cached on it.
//! Inlined nodes remember the call sites they came through ([`ts_ir::InlinedCallStack`]) so
//! runtime errors still show every frame. A call to a function whose body is being optimized
//! (recursion) stays a call.

use std::sync::Arc;

use ts_core::{attr, prim, Type};
use ts_ir::{BlockId, Function, Graph, InlinedCallStack, InlinedFrame, NodeId};

/// Inlines every call in `g`; returns whether anything was inlined.
pub fn inline_calls(g: &mut Graph) -> bool {
    let top = g.block();
    let changed = inline_block(g, top);
    crate::graph_dump!("After Inline: ", g);
    changed
}

/// The graph of `f` that callers inline (see the module documentation).
pub fn optimized_graph(f: &Function) -> Option<Arc<Graph>> {
    f.optimized_graph(|body| {
        let mut g = body.copy();
        preoptimize_graph(&mut g);
        g
    })
}

/// What PyTorch does to a function's graph before callers inline it (`preoptimizeGraph`).
pub fn preoptimize_graph(g: &mut Graph) {
    inline_calls(g);
    crate::peephole::peephole_optimize(g, true);
    crate::constant_propagation::constant_propagation_immutable_types(g);
    crate::constant_pooling::constant_pooling(g);
}

fn inline_block(g: &mut Graph, b: BlockId) -> bool {
    let mut changed = false;
    for n in g.block_nodes(b) {
        if !g.is_alive(n) {
            continue;
        }
        let kind = g.node(n).kind();
        if kind == prim::CallFunction {
            changed |= inline_function_call(g, n);
        } else if kind == prim::CallMethod {
            changed |= inline_method_call(g, n);
        } else {
            for sb in g.node(n).blocks().to_vec() {
                changed |= inline_block(g, sb);
            }
        }
    }
    changed
}

/// The function a `prim::CallFunction`'s first input names, when known.
pub fn called_function(g: &Graph, call: NodeId) -> Option<Arc<dyn ts_core::types::ClassMethod>> {
    let f = *g.node(call).inputs().first()?;
    match &**g.value(f).ty() {
        Type::Function(ft) => ft.function.clone(),
        _ => None,
    }
}

/// The method a `prim::CallMethod` calls, when its receiver is a class.
pub fn called_method(g: &Graph, call: NodeId) -> Option<Arc<dyn ts_core::types::ClassMethod>> {
    let name = g.node(call).s(attr::name)?;
    let recv = *g.node(call).inputs().first()?;
    g.value(recv).ty().class_type()?.find_method(name)
}

fn inline_function_call(g: &mut Graph, call: NodeId) -> bool {
    let Some(m) = called_function(g, call) else {
        return false;
    };
    let Some(f) = ts_ir::as_function(&m) else {
        return false;
    };
    let Some(body) = optimized_graph(f) else {
        return false;
    };
    crate::graph_update!(
        "Inlining function '{}' to {}",
        f.qualified_name(),
        g.node(call).kind()
    );
    let args = g.node(call).inputs()[1..].to_vec();
    inline_call_to(g, call, f.qualified_name(), &body, &args)
}

fn inline_method_call(g: &mut Graph, call: NodeId) -> bool {
    let Some(m) = called_method(g, call) else {
        return false;
    };
    let Some(f) = ts_ir::as_function(&m) else {
        return false;
    };
    let Some(body) = optimized_graph(f) else {
        return false;
    };
    crate::graph_update!(
        "Inlining method '{}' to {}",
        f.qualified_name(),
        g.node(call).kind()
    );
    let args = g.node(call).inputs().to_vec();
    inline_call_to(g, call, f.qualified_name(), &body, &args)
}

/// Replaces `call` by a copy of `body` bound to `args`; the copied nodes get the call site
/// added to their call stacks.
pub fn inline_call_to(
    g: &mut Graph,
    call: NodeId,
    callee: &str,
    body: &Graph,
    args: &[ts_ir::ValueId],
) -> bool {
    if body.inputs().len() != args.len() || body.outputs().len() != g.node(call).outputs().len() {
        return false;
    }
    let first_new = g.node_slots();
    let outs = match g.with_insert_point(call, |g| g.insert_graph(body, args)) {
        Ok(o) => o,
        Err(_) => {
            g.rollback_to(first_new);
            return false;
        }
    };
    let outer = g.node(call).callstack().cloned();
    let frame = InlinedFrame {
        callee: callee.to_string(),
        call_site: g.node(call).source_range().cloned(),
    };
    for i in first_new..g.node_slots() {
        let n = NodeId(i as u32);
        if !g.is_alive(n) || g.node(n).owning_block().is_none() {
            continue;
        }
        let k = g.node(n).kind();
        if k == prim::Param || k == prim::Return {
            continue;
        }
        let mut frames = outer
            .as_ref()
            .map(|cs| cs.frames.clone())
            .unwrap_or_default();
        frames.push(frame.clone());
        if let Some(inner) = g.node(n).callstack() {
            frames.extend(inner.frames.iter().cloned());
        }
        g.set_callstack(n, Some(Arc::new(InlinedCallStack { frames })));
    }
    let old = g.node(call).outputs().to_vec();
    for (o, n) in old.into_iter().zip(outs) {
        if let Some(name) = g.value(o).debug_name().map(str::to_string) {
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                let _ = g.set_debug_name(n, &name);
            }
        }
        g.replace_all_uses_with(o, n);
    }
    let _ = g.destroy_node(call);
    true
}
