//! The schema a node runs under (PyTorch's `Node::maybeSchema`): the registered overload its
//! input types match, else the matching line of PyTorch's schema table (an operator
//! torchscript-rs lacks still has known alias annotations), else none.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;
use ts_core::{FunctionSchema, IValue};
use ts_ir::{Graph, NodeId, ValueId};

/// The schema of node `n`, when one matches.
pub fn node_schema(g: &Graph, n: NodeId) -> Option<Arc<FunctionSchema>> {
    let kind = g.node(n).kind();
    if !(kind.is_ns("aten") || kind.is_ns("prim")) {
        if let Some(op) = ts_ops::registry().match_node(g, n) {
            return Some(op.schema.clone());
        }
        return None;
    }
    if let Some(op) = ts_ops::registry().match_node(g, n) {
        return Some(op.schema.clone());
    }
    table_schemas(&kind.to_string())
        .into_iter()
        .find(|s| ts_ops::matching::node_matches_schema(g, n, s))
}

/// `name.overload` of a schema.
pub fn full_name(s: &FunctionSchema) -> String {
    if s.overload_name.is_empty() {
        s.name.clone()
    } else {
        format!("{}.{}", s.name, s.overload_name)
    }
}

/// The full name (`aten::add.Tensor`) of the overload node `n` matches.
pub fn node_full_name(g: &Graph, n: NodeId) -> Option<String> {
    node_schema(g, n).map(|s| full_name(&s))
}

/// True when `n` matches the overload `full` (`aten::add.Tensor`, or `aten::t` for one
/// without an overload name).
pub fn node_matches(g: &Graph, n: NodeId, full: &str) -> bool {
    let name_start = full.find("::").map(|p| p + 2).unwrap_or(0);
    let base = match full[name_start..].find('.') {
        Some(d) => &full[..name_start + d],
        None => full,
    };
    if g.node(n).kind().qualified() != base {
        return false;
    }
    node_full_name(g, n).as_deref() == Some(full)
}

/// The input of `n` bound to the schema argument `name`.
pub fn named_input(g: &Graph, n: NodeId, name: &str) -> Option<ValueId> {
    let s = node_schema(g, n)?;
    let i = s.arguments.iter().position(|a| a.name == name)?;
    g.node(n).inputs().get(i).copied()
}

/// The constant value of the input bound to argument `name`, when it is a constant.
pub fn constant_input(g: &Graph, n: NodeId, name: &str) -> Option<IValue> {
    g.to_ivalue(named_input(g, n, name)?)
}

fn table_schemas(name: &str) -> Vec<Arc<FunctionSchema>> {
    static CACHE: OnceLock<RwLock<HashMap<String, Vec<Arc<FunctionSchema>>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| RwLock::new(HashMap::new()));
    if let Some(v) = cache.read().get(name) {
        return v.clone();
    }
    let parsed: Vec<Arc<FunctionSchema>> = ts_ops::schema_table::overload_lines(name)
        .iter()
        .filter_map(|l| FunctionSchema::parse(l).ok().map(Arc::new))
        .collect();
    cache.write().insert(name.to_string(), parsed.clone());
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::parse_ir;

    #[test]
    fn finds_registered_and_table_schemas() {
        let g = parse_ir(
            "graph(%x : Tensor, %y : Tensor):\n  %one : int = prim::Constant[value=1]()\n  %a : Tensor = aten::add(%x, %y, %one)\n  %b : Tensor = aten::add_(%a, %y, %one)\n  %t : Tensor = aten::t(%b)\n  return (%t)\n",
        )
        .unwrap();
        let nodes = g.block_nodes(g.block());
        assert_eq!(
            node_full_name(&g, nodes[1]).as_deref(),
            Some("aten::add.Tensor")
        );
        assert!(node_matches(&g, nodes[1], "aten::add.Tensor"));
        assert!(!node_matches(&g, nodes[1], "aten::add.Scalar"));
        assert!(node_matches(&g, nodes[3], "aten::t"));
        let s = node_schema(&g, nodes[2]).unwrap();
        assert!(s.arguments[0].alias_info.as_ref().unwrap().is_write);
        assert_eq!(
            named_input(&g, nodes[1], "alpha"),
            Some(g.node(nodes[0]).output(0))
        );
        assert_eq!(
            constant_input(&g, nodes[1], "alpha").and_then(|v| v.as_int()),
            Some(1)
        );
    }
}
