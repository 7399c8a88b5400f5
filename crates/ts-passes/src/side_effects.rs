//! Which nodes must stay even when their outputs are unused.

use ts_core::{aten, prim, Symbol};
use ts_ir::{Graph, NodeId};

/// True when running `n` can be observed other than through its outputs: printing, raising,
/// attribute writes, calls, `with` hooks, waits, warnings, grad mode, and any operator whose schema
/// writes an argument (`Tensor(a!)`, `t[](a!)`).
pub fn has_side_effects(g: &Graph, n: NodeId) -> bool {
    // `prim::fork` is not listed: as in PyTorch, a fork whose future is unused is dead code.
    let node = g.node(n);
    let k = node.kind();
    if [
        prim::Print,
        prim::RaiseException,
        prim::SetAttr,
        prim::CallFunction,
        prim::CallMethod,
        prim::Enter,
        prim::Exit,
        aten::warn,
        aten::wait,
        prim::Store,
        prim::ReturnStmt,
        prim::BreakStmt,
        prim::ContinueStmt,
        prim::LoopContinuation,
        Symbol::aten("manual_seed"),
        Symbol::aten("set_grad_enabled"),
        Symbol::prim("AddStatValue"),
        Symbol::prim("TimePoint"),
    ]
    .contains(&k)
    {
        return true;
    }
    if node
        .blocks()
        .iter()
        .any(|&b| g.block_nodes(b).into_iter().any(|m| has_side_effects(g, m)))
    {
        return true;
    }
    if k.is_ns("aten") || k.is_ns("prim") {
        // The registered overload, or else PyTorch's schema for the node (an operator without
        // a kernel keeps its writes, so it fails loudly when run instead of vanishing).
        if let Some(op) = ts_ops::registry().resolve_node(g, n) {
            return op.schema.arguments.iter().any(|a| {
                a.alias_info
                    .as_ref()
                    .is_some_and(|ai| ai.is_write || ai.contained.iter().any(|c| c.is_write))
            });
        }
        // No schema matches the node's types: any overload writing an argument keeps the node,
        // then the in-place naming convention does.
        let writes = ts_ops::schema_table::overload_lines(&k.to_string())
            .iter()
            .any(|l| l.contains("!)") || l.contains("! ->"));
        return writes || (k.name().ends_with('_') && !k.name().starts_with("__"));
    }
    // Operators of other namespaces are treated as opaque.
    true
}
