//! Concat combining (PyTorch's `CombineConcats`, run by the peephole pass): a `cat` whose only
//! use is as an element of another `cat`'s list literal on the same (constant) dimension is
//! spliced into that list: `cat([a, cat([b, c], d), e], d)` becomes `cat([a, b, c, e], d)`.

use ts_core::{aten, prim, IValue};
use ts_ir::{Graph, NodeId, ValueId};

use crate::alias_analysis::AliasDb;

struct Combinable {
    first: NodeId,
    second: NodeId,
    /// Where `first`'s result sits in `second`'s list.
    idx: usize,
}

/// Combines nested concatenations; returns whether the graph changed.
pub fn combine_concats(g: &mut Graph) -> bool {
    let cats: Vec<NodeId> = g
        .all_nodes()
        .into_iter()
        .filter(|&n| g.node(n).kind() == aten::cat)
        .collect();
    if cats.is_empty() {
        return false;
    }
    let db = AliasDb::new(g);
    let mut pairs = Vec::new();
    for n in cats {
        if let Some(c) = combinable(g, &db, n) {
            pairs.push(c);
        }
    }
    if pairs.is_empty() {
        return false;
    }
    // New list inputs per concat, accumulated as chains collapse into their last concat.
    let mut lists: Vec<(NodeId, Vec<ValueId>)> = Vec::new();
    for p in &pairs {
        let inputs_to_add = cat_inputs(g, p.second);
        let mut cur = match lists.iter().position(|(n, _)| *n == p.first) {
            Some(i) => lists.remove(i).1,
            None => cat_inputs(g, p.first),
        };
        let mut merged = inputs_to_add[..p.idx].to_vec();
        merged.append(&mut cur);
        merged.extend_from_slice(&inputs_to_add[p.idx + 1..]);
        lists.push((p.second, merged));
    }
    for (n, inputs) in lists {
        let old_list = g.node(n).input(0);
        let ty = g.value(old_list).ty().clone();
        let lc = g.with_insert_point(n, |g| {
            let m = g.insert(prim::ListConstruct, &inputs, 0);
            g.add_output(m, ty)
        });
        g.replace_all_uses_with(old_list, lc);
    }
    crate::dead_code_elimination::eliminate_dead_code(g);
    crate::graph_dump!("After combining concats", g);
    true
}

fn cat_inputs(g: &Graph, cat: NodeId) -> Vec<ValueId> {
    let list = g.node(cat).input(0);
    g.node(g.value(list).node()).inputs().to_vec()
}

fn combinable(g: &mut Graph, db: &AliasDb, n: NodeId) -> Option<Combinable> {
    if g.node(n).inputs().len() != 2 {
        return None;
    }
    let Some(IValue::Int(dim)) = g.to_ivalue(g.node(n).input(1)) else {
        return None;
    };
    let list = g.node(n).input(0);
    let list_node = g.value(list).node();
    if g.node(list_node).kind() != prim::ListConstruct
        || !db.could_move_before_topologically(g, list_node, n)
    {
        return None;
    }
    let out = g.node(n).output(0);
    let uses = g.value(out).uses();
    if uses.len() != 1 {
        return None;
    }
    let next_list = uses[0].user;
    if g.node(next_list).kind() != prim::ListConstruct {
        return None;
    }
    let next_uses = g.value(g.node(next_list).output(0)).uses();
    if next_uses.len() != 1 {
        return None;
    }
    let next_cat = next_uses[0].user;
    if g.node(next_cat).kind() != aten::cat || g.node(next_cat).inputs().len() != 2 {
        return None;
    }
    if g.to_ivalue(g.node(next_cat).input(1))
        .and_then(|v| v.as_int())
        != Some(dim)
    {
        return None;
    }
    let idx = g.node(next_list).inputs().iter().position(|&v| v == out)?;
    Some(Combinable {
        first: n,
        second: next_cat,
        idx,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn splices_inner_concat() {
        let mut g = parse_ir(
            "graph(%a : Tensor, %b : Tensor, %c : Tensor):\n  %d : int = prim::Constant[value=0]()\n  %l1 : Tensor[] = prim::ListConstruct(%b, %c)\n  %i : Tensor = aten::cat(%l1, %d)\n  %l2 : Tensor[] = prim::ListConstruct(%a, %i, %a)\n  %o : Tensor = aten::cat(%l2, %d)\n  return (%o)\n",
        )
        .unwrap();
        assert!(combine_concats(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("prim::ListConstruct(%a, %b, %c, %a)")
            .check_count("aten::cat", 1, true)
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }
}
