//! `LowerSimpleTuples`: `prim::TupleUnpack`, `prim::TupleIndex` (constant index) and
//! `prim::TupleSlice` applied straight to a `prim::TupleConstruct` use the constructed elements
//! instead (the emptied nodes are left for dead code elimination).

use ts_core::{prim, IValue, Symbol};
use ts_ir::{BlockId, Graph, NodeId};

/// Runs the pass over every block; returns whether anything changed.
pub fn lower_simple_tuples(g: &mut Graph) -> bool {
    let top = g.block();
    lower_block(g, top)
}

fn lower_block(g: &mut Graph, b: BlockId) -> bool {
    let mut changed = false;
    for n in g.block_nodes(b) {
        changed |= remove_tuple_node(g, n);
        for sb in g.node(n).blocks().to_vec() {
            changed |= lower_block(g, sb);
        }
    }
    changed
}

fn remove_tuple_node(g: &mut Graph, n: NodeId) -> bool {
    let kind = g.node(n).kind();
    if kind != prim::TupleUnpack && kind != prim::TupleIndex && kind != prim::TupleSlice {
        return false;
    }
    let construct = g.value(g.node(n).input(0)).node();
    if g.node(construct).kind() != prim::TupleConstruct {
        return false;
    }
    let elems = g.node(construct).inputs().to_vec();
    if kind == prim::TupleUnpack {
        let outs = g.node(n).outputs().to_vec();
        if outs.len() != elems.len() {
            return false;
        }
        for (o, e) in outs.into_iter().zip(elems) {
            g.replace_all_uses_with(o, e);
        }
        return true;
    }
    if kind == prim::TupleIndex {
        let Some(IValue::Int(i)) = g.to_ivalue(g.node(n).input(1)) else {
            return false;
        };
        let len = elems.len() as i64;
        let k = if i < 0 { i + len } else { i };
        if k < 0 || k >= len {
            return false;
        }
        let out = g.node(n).output(0);
        g.replace_all_uses_with(out, elems[k as usize]);
        return true;
    }
    let beg = g.node(n).i(Symbol::attr("beg")).unwrap_or(0).max(0) as usize;
    let end = g.node(n).i(Symbol::attr("end")).unwrap_or(0).max(0) as usize;
    let values: Vec<_> = elems
        .get(beg..end.min(elems.len()).max(beg))
        .unwrap_or(&[])
        .to_vec();
    let out = g.node(n).output(0);
    let tuple = g.with_insert_point(n, |g| g.insert_tuple(&values));
    let tn = g.value(tuple).node();
    if let Some(r) = g.node(n).source_range().cloned() {
        g.set_source_range(tn, Some(r));
    }
    g.replace_all_uses_with(out, tuple);
    true
}
