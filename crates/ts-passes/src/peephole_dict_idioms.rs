//! Dict idioms of the peephole pass (PyTorch's `PeepholeOptimizeDictIdioms`), on dicts that
//! nothing writes: `len({...})` of a literal with distinct constant keys is its size, and
//! `{k: v, ...}[k]` is `v`.

use std::collections::HashSet;

use ts_core::{aten, prim, IValue, Type};
use ts_ir::{BlockId, Graph, NodeId, ValueId};

use crate::alias_analysis::AliasDb;

/// Runs the dict idioms; returns whether the graph changed.
pub fn peephole_optimize_dict_idioms(g: &mut Graph) -> bool {
    // Every rewrite reads a dict literal: without one, no alias analysis.
    let top = g.block();
    if !crate::peephole_list_idioms::reads_literal(g, top, |g, v| {
        is_dict(g, v) && g.node(g.value(v).node()).kind() == prim::DictConstruct
    }) {
        return false;
    }
    let db = AliasDb::new(g);
    let mut mutated = HashSet::new();
    let top = g.block();
    collect_mutated(g, &db, top, &mut mutated);
    run_block(g, top, &mutated)
}

fn is_dict(g: &Graph, v: ValueId) -> bool {
    matches!(&**g.value(v).ty(), Type::Dict(..))
}

fn collect_mutated(g: &Graph, db: &AliasDb, b: BlockId, out: &mut HashSet<ValueId>) {
    for &v in g.block_inputs(b) {
        if is_dict(g, v) && db.has_writers(g, v) {
            out.insert(v);
        }
    }
    for n in g.block_nodes(b) {
        for &v in g.node(n).outputs() {
            if is_dict(g, v) && db.has_writers(g, v) {
                out.insert(v);
            }
        }
        for &sb in g.node(n).blocks() {
            collect_mutated(g, db, sb, out);
        }
    }
}

/// A hashable form of a constant key of the types the rewrite handles (int, float, str).
fn key_of(v: &IValue) -> Option<String> {
    match v {
        IValue::Int(i) => Some(format!("i{i}")),
        IValue::Double(d) => Some(format!("f{}", d.to_bits())),
        IValue::String(s) => Some(format!("s{s}")),
        _ => None,
    }
}

/// The literal's entries by constant key, or `None` when a key is not constant, repeats, or
/// has a type the rewrite does not handle.
fn literal_entries(g: &Graph, creator: NodeId) -> Option<Vec<(String, ValueId)>> {
    let ty = g.value(g.node(creator).output(0)).ty().clone();
    let Type::Dict(k, _) = &*ty else {
        return None;
    };
    if !(k.is_int() || k.is_float() || matches!(&**k, Type::Str)) {
        return None;
    }
    let ins = g.node(creator).inputs();
    let mut out: Vec<(String, ValueId)> = Vec::new();
    for pair in ins.chunks(2) {
        let [key, val] = pair else {
            return None;
        };
        let key = key_of(&g.to_ivalue(*key)?)?;
        if out.iter().any(|(k2, _)| *k2 == key) {
            return None;
        }
        out.push((key, *val));
    }
    Some(out)
}

fn run_block(g: &mut Graph, b: BlockId, mutated: &HashSet<ValueId>) -> bool {
    let mut changed = false;
    for n in g.block_nodes(b) {
        if !g.is_alive(n) {
            continue;
        }
        for sb in g.node(n).blocks().to_vec() {
            changed |= run_block(g, sb, mutated);
        }
        let Some(&first) = g.node(n).inputs().first() else {
            continue;
        };
        if !is_dict(g, first) || mutated.contains(&first) {
            continue;
        }
        let creator = g.value(first).node();
        if g.node(creator).kind() != prim::DictConstruct {
            continue;
        }
        let Some(entries) = literal_entries(g, creator) else {
            continue;
        };
        let kind = g.node(n).kind();
        if kind == aten::len {
            let c =
                g.with_insert_point(n, |g| g.insert_constant(&IValue::Int(entries.len() as i64)));
            let out = g.node(n).output(0);
            g.replace_all_uses_with(out, c);
            changed = true;
        } else if kind == aten::__getitem__ {
            let Some(key) = g.to_ivalue(g.node(n).input(1)).and_then(|k| key_of(&k)) else {
                continue;
            };
            if let Some((_, v)) = entries.iter().find(|(k, _)| *k == key) {
                let out = g.node(n).output(0);
                g.replace_all_uses_with(out, *v);
                changed = true;
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn folds_len_and_getitem_of_literals() {
        let mut g = parse_ir(
            "graph(%x : Tensor, %y : Tensor):\n  %a : str = prim::Constant[value=\"a\"]()\n  %b : str = prim::Constant[value=\"b\"]()\n  %d : Dict(str, Tensor) = prim::DictConstruct(%a, %x, %b, %y)\n  %n : int = aten::len(%d)\n  %v : Tensor = aten::__getitem__(%d, %b)\n  %r : (int, Tensor) = prim::TupleConstruct(%n, %v)\n  return (%r)\n",
        )
        .unwrap();
        assert!(peephole_optimize_dict_idioms(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("int = prim::Constant[value=2]")
            .check("prim::TupleConstruct(")
            .check_same(", %y)")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }
}
