//! Constant pooling: hoists every `prim::Constant` to the start of the graph (newest first) and merges equal
//! ones (same type and value), so each distinct constant exists once.

use ts_core::prim;
use ts_ir::{Graph, NodeId};

/// Pools constants; returns whether anything changed.
pub fn constant_pooling(g: &mut Graph) -> bool {
    let mut changed = false;
    let mut pooled: Vec<(NodeId, String)> = Vec::new();
    let all = g.all_nodes();
    for n in all {
        if !g.is_alive(n) || g.node(n).kind() != prim::Constant {
            continue;
        }
        let out = g.node(n).output(0);
        let key = constant_key(g, n);
        if let Some((existing, _)) = pooled.iter().find(|(_, k)| *k == key) {
            let keep = g.node(*existing).output(0);
            g.replace_all_uses_with(out, keep);
            if g.destroy_node(n).is_ok() {
                changed = true;
            }
            continue;
        }
        // Each new constant moves to the very front, as PyTorch's pass does (so pooled
        // constants end up in reverse order of first appearance).
        let front = g.first_node(g.block());
        if front != n {
            g.move_before(n, front);
            changed = true;
        }
        pooled.push((n, key));
    }
    changed
}

/// A key equal exactly for interchangeable constants: the type and the printed attributes.
fn constant_key(g: &Graph, n: NodeId) -> String {
    let node = g.node(n);
    let mut key = format!("{}|", g.value(node.output(0)).ty());
    for (k, v) in node.attrs() {
        let mut s = String::new();
        ts_ir::printer::write_attribute(&mut s, v);
        // Tensors with the same printed value are still different objects.
        if matches!(v, ts_ir::AttributeValue::Tensor(_)) {
            s.push_str(&format!("@{n:?}"));
        }
        key.push_str(&format!("{}={s};", k.name()));
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn hoists_and_dedupes() {
        let mut g = parse_ir(
            "graph(%c : bool):\n  %a : int = prim::Constant[value=1]()\n  %r : int = prim::If(%c)\n    block0():\n      %b : int = prim::Constant[value=1]()\n      -> (%b)\n    block1():\n      %d : float = prim::Constant[value=1.]()\n      %e : int = prim::Constant[value=2]()\n      -> (%e)\n  %s : int = aten::add(%r, %a)\n  return (%s)\n",
        )
        .unwrap();
        assert!(constant_pooling(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("graph")
            .check_next("prim::Constant[value=2]")
            .check_next("prim::Constant[value=1.]")
            .check_next("prim::Constant[value=1]")
            .check_next("prim::If")
            .check_count("prim::Constant", 0, true)
            .run_graph(&g)
            .unwrap();
    }
}
