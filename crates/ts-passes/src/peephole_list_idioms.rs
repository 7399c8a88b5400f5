//! List idioms of the peephole pass (PyTorch's `PeepholeOptimizeListIdioms`), on lists that
//! nothing writes (alias analysis says so): `len([a, b])` is 2, `[a, b][1]` is `b`, unpacking
//! a list literal gives its elements, `[a] + [b]` is `[a, b]`, and a constant slice of a list
//! literal is the literal of the sliced elements.

use std::collections::HashSet;

use ts_core::{aten, prim, IValue, Type};
use ts_ir::{BlockId, Graph, ValueId};

use crate::alias_analysis::AliasDb;

/// Runs the list idioms; returns whether the graph changed.
pub fn peephole_optimize_list_idioms(g: &mut Graph) -> bool {
    // Every rewrite reads a list literal: without one, the alias analysis (the pass's cost,
    // run by every peephole) is skipped.
    let top = g.block();
    if !reads_literal(g, top, |g, v| {
        is_list(g, v) && g.node(g.value(v).node()).kind() == prim::ListConstruct
    }) {
        return false;
    }
    let db = AliasDb::new(g);
    let mut mutated = HashSet::new();
    let top = g.block();
    collect_mutated_lists(g, &db, top, &mut mutated);
    run_block(g, top, &mut mutated)
}

/// True when some node in `b` (nested blocks included) has a first input that `literal` accepts.
pub(crate) fn reads_literal(g: &Graph, b: BlockId, literal: fn(&Graph, ValueId) -> bool) -> bool {
    g.block_nodes(b).into_iter().any(|n| {
        g.node(n).inputs().first().is_some_and(|&v| literal(g, v))
            || g.node(n)
                .blocks()
                .iter()
                .any(|&sb| reads_literal(g, sb, literal))
    })
}

fn is_list(g: &Graph, v: ValueId) -> bool {
    matches!(&**g.value(v).ty(), Type::List(_))
}

fn collect_mutated_lists(g: &Graph, db: &AliasDb, b: BlockId, out: &mut HashSet<ValueId>) {
    let mutated = |v: ValueId| is_list(g, v) && db.has_writers(g, v);
    for &v in g.block_inputs(b) {
        if mutated(v) {
            out.insert(v);
        }
    }
    for n in g.block_nodes(b) {
        for &v in g.node(n).outputs() {
            if mutated(v) {
                out.insert(v);
            }
        }
        for &sb in g.node(n).blocks() {
            collect_mutated_lists(g, db, sb, out);
        }
    }
}

/// `index` normalized against `len` (negative from the end), when in range.
pub(crate) fn normalize_index(index: i64, len: usize) -> Option<usize> {
    let i = if index < 0 { index + len as i64 } else { index };
    (i >= 0 && i < len as i64).then_some(i as usize)
}

fn run_block(g: &mut Graph, b: BlockId, mutated: &mut HashSet<ValueId>) -> bool {
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
        if !is_list(g, first) || mutated.contains(&first) {
            continue;
        }
        let kind = g.node(n).kind();
        let creator = g.value(first).node();
        let is_literal = g.node(creator).kind() == prim::ListConstruct;
        if kind == aten::len {
            if is_literal {
                let len = g.node(creator).inputs().len() as i64;
                let c = g.with_insert_point(n, |g| g.insert_constant(&IValue::Int(len)));
                let out = g.node(n).output(0);
                g.replace_all_uses_with(out, c);
                changed = true;
            }
        } else if kind == aten::__getitem__ {
            if is_literal {
                if let Some(IValue::Int(i)) = g.to_ivalue(g.node(n).input(1)) {
                    let elems = g.node(creator).inputs().to_vec();
                    if let Some(k) = normalize_index(i, elems.len()) {
                        let out = g.node(n).output(0);
                        g.replace_all_uses_with(out, elems[k]);
                        changed = true;
                    }
                }
            }
        } else if kind == prim::ListUnpack {
            if is_literal {
                let elems = g.node(creator).inputs().to_vec();
                let outs = g.node(n).outputs().to_vec();
                // Unequal sizes are a runtime error.
                if elems.len() == outs.len() {
                    for (o, e) in outs.into_iter().zip(elems) {
                        g.replace_all_uses_with(o, e);
                        changed = true;
                    }
                }
            }
        } else if kind == aten::add {
            if g.node(n).inputs().len() != 2 {
                continue;
            }
            let second = g.node(n).input(1);
            if mutated.contains(&second) || !is_literal {
                continue;
            }
            let c2 = g.value(second).node();
            if g.node(c2).kind() != prim::ListConstruct {
                continue;
            }
            let mut elems = g.node(creator).inputs().to_vec();
            elems.extend_from_slice(g.node(c2).inputs());
            let out = g.node(n).output(0);
            let ty = g.value(out).ty().clone();
            let lc = g.with_insert_point(n, |g| {
                let m = g.insert(prim::ListConstruct, &elems, 0);
                g.add_output(m, ty)
            });
            g.replace_all_uses_with(out, lc);
            if mutated.contains(&out) {
                mutated.insert(lc);
            }
            changed = true;
        } else if kind == aten::slice {
            if !is_literal || g.node(n).inputs().len() != 4 {
                continue;
            }
            let len = g.node(creator).inputs().len() as i64;
            let arg = |i: usize| g.to_ivalue(g.node(n).input(i)).and_then(|v| v.as_int());
            let step = arg(3).unwrap_or(1);
            if step == 0 {
                continue;
            }
            let (start, count) = slice_indices(len, arg(1), arg(2), step);
            let src = g.node(creator).inputs().to_vec();
            let elems: Vec<ValueId> = (0..count)
                .map(|j| src[(start + j as i64 * step) as usize])
                .collect();
            let out = g.node(n).output(0);
            let ty = g.value(out).ty().clone();
            let lc = g.with_insert_point(n, |g| {
                let m = g.insert(prim::ListConstruct, &elems, 0);
                g.add_output(m, ty)
            });
            g.replace_all_uses_with(out, lc);
            if mutated.contains(&out) {
                mutated.insert(lc);
            }
            changed = true;
        }
    }
    changed
}

/// Python's slice adjustment (`PySlice_AdjustIndices`): the first index and how many elements
/// a slice `[start:end:step]` of a sequence of `len` takes.
pub(crate) fn slice_indices(
    len: i64,
    start: Option<i64>,
    end: Option<i64>,
    step: i64,
) -> (i64, usize) {
    let (lo, hi) = if step < 0 { (-1, len - 1) } else { (0, len) };
    let adjust = |v: Option<i64>, default: i64| match v {
        None => default,
        Some(x) if x < 0 => (x + len).max(lo),
        Some(x) => x.min(hi),
    };
    let start = adjust(start, if step < 0 { hi } else { lo });
    let end = adjust(end, if step < 0 { lo } else { hi });
    let count = if step < 0 {
        if end < start {
            (start - end - 1) / (-step) + 1
        } else {
            0
        }
    } else if start < end {
        (end - start - 1) / step + 1
    } else {
        0
    };
    (start, count.max(0) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn python_slice_indices() {
        assert_eq!(slice_indices(5, Some(1), Some(3), 1), (1, 2));
        assert_eq!(slice_indices(5, None, None, -1), (4, 5));
        assert_eq!(slice_indices(5, Some(-2), None, 1), (3, 2));
        assert_eq!(slice_indices(5, Some(10), None, 1).1, 0);
        assert_eq!(slice_indices(5, None, None, 2), (0, 3));
    }

    #[test]
    fn rewrites_unmutated_list_literals_only() {
        let mut g = parse_ir(
            "graph(%a : int, %b : int):\n  %zero : int = prim::Constant[value=0]()\n  %l : int[] = prim::ListConstruct(%a, %b)\n  %n : int = aten::len(%l)\n  %e : int = aten::__getitem__(%l, %zero)\n  %m : int[] = prim::ListConstruct(%a)\n  %w : int[] = aten::append(%m, %b)\n  %k : int = aten::len(%m)\n  %r : (int, int, int) = prim::TupleConstruct(%n, %e, %k)\n  return (%r)\n",
        )
        .unwrap();
        assert!(peephole_optimize_list_idioms(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("int = prim::Constant[value=2]")
            .check("aten::len(%m)")
            .check("prim::TupleConstruct(")
            .check_same(", %a, %k)")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }
}
