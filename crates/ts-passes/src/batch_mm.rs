//! Matrix-multiply batching (PyTorch's `BatchMM`), for the graphs loop unrolling makes.
//!
//! - Tree reduction: a tree of at least 4 `mm`s summed by `add`s (each intermediate used once)
//!   becomes one `prim::MMTreeReduce(lhs..., rhs...)`, which at run time concatenates the left
//!   and right operands and does a single `mm` when the shapes allow (else the original sum);
//!   `t(mm(a, b))` leaves enter the tree as `mm(t(b), t(a))`.
//! - Side batching: 8 or more independent `mm`s sharing one operand on the same side become one
//!   `prim::MMBatchSide[side=0|1](shared, others...)`, run as one `mm` of the concatenated other
//!   operands, chunked back.
//!
//! Graphs with in-place operators are left alone, as in PyTorch.

use std::collections::{HashMap, HashSet};

use ts_core::{aten, attr, prim};
use ts_ir::{AttributeValue, BlockId, Graph, NodeId, ValueId};

use crate::alias_analysis::AliasDb;
use crate::node_schema::node_full_name;

/// The smallest tree (in `mm` leaves) worth reducing.
pub const MIN_FUSION_SIZE: usize = 4;
/// The fewest `mm`s sharing an operand worth batching (the loop unrolling factor).
pub const HOW_MANY_IS_MANY: usize = 8;

/// Batches matrix products; returns whether the graph changed.
pub fn batch_mm(g: &mut Graph) -> bool {
    let top = g.block();
    if has_mutable_operators(g, top) || !g.all_nodes().into_iter().any(|n| is_mm(g, n)) {
        return false;
    }
    let db = AliasDb::new(g);
    let mut changed = tree_reduce(g, top, &db);
    changed |= batch_side(g, top, &db);
    if changed {
        crate::dead_code_elimination::eliminate_dead_code(g);
        // Transposes may now cancel out; tensor types are not trusted here.
        crate::peephole::peephole_optimize(g, true);
    }
    crate::graph_dump!("After BatchMM: ", g);
    changed
}

fn is_mm(g: &Graph, n: NodeId) -> bool {
    g.node(n).kind() == aten::mm && node_full_name(g, n).as_deref() == Some("aten::mm")
}

fn has_mutable_operators(g: &Graph, b: BlockId) -> bool {
    g.block_nodes(b).into_iter().any(|n| {
        (g.node(n).kind().is_ns("aten") && crate::side_effects::schema_is_mutable(g, n))
            || g.node(n)
                .blocks()
                .iter()
                .any(|&sb| has_mutable_operators(g, sb))
    })
}

#[derive(Clone, Copy)]
struct Token {
    size: usize,
    node: NodeId,
    is_root: bool,
}

fn tree_reduce(g: &mut Graph, b: BlockId, db: &AliasDb) -> bool {
    let mut tokens: HashMap<NodeId, Token> = HashMap::new();
    let mut order: Vec<NodeId> = Vec::new();
    let mut changed = false;
    for n in g.block_nodes(b) {
        let name = node_full_name(g, n);
        let unwritten = || !db.node_has_writers(g, n);
        match name.as_deref() {
            Some("aten::mm") if unwritten() => {
                tokens.insert(
                    n,
                    Token {
                        size: 1,
                        node: n,
                        is_root: true,
                    },
                );
                order.push(n);
            }
            Some("aten::t") if unwritten() => {
                let inp = g.value(g.node(n).input(0)).node();
                if let Some(t) = tokens.get_mut(&inp) {
                    if is_mm(g, t.node) {
                        t.is_root = false;
                        tokens.insert(
                            n,
                            Token {
                                size: 1,
                                node: n,
                                is_root: true,
                            },
                        );
                        order.push(n);
                    }
                }
            }
            Some("aten::add.Tensor")
                if g.to_ivalue(g.node(n).input(2)).is_some() && unwritten() =>
            {
                let l = g.value(g.node(n).input(0)).node();
                let r = g.value(g.node(n).input(1)).node();
                let single_uses = g.value(g.node(l).outputs()[0]).uses().len() == 1
                    && g.value(g.node(r).outputs()[0]).uses().len() == 1;
                if l != r && single_uses {
                    if let (Some(lt), Some(rt)) = (tokens.get(&l).copied(), tokens.get(&r).copied())
                    {
                        if lt.is_root && rt.is_root {
                            tokens.get_mut(&l).expect("present").is_root = false;
                            tokens.get_mut(&r).expect("present").is_root = false;
                            tokens.insert(
                                n,
                                Token {
                                    size: lt.size + rt.size,
                                    node: n,
                                    is_root: true,
                                },
                            );
                            order.push(n);
                        }
                    }
                }
            }
            _ => {
                for sb in g.node(n).blocks().to_vec() {
                    changed |= tree_reduce(g, sb, db);
                }
            }
        }
    }
    for n in order {
        let t = tokens[&n];
        if !t.is_root || t.size < MIN_FUSION_SIZE {
            continue;
        }
        let mms = gather_matmuls(g, t.node);
        let mut inputs: Vec<ValueId> = mms.iter().map(|&m| g.node(m).input(0)).collect();
        inputs.extend(mms.iter().map(|&m| g.node(m).input(1)));
        let out = g.node(t.node).output(0);
        let reduced = g.with_insert_point(t.node, |g| {
            let r = g.insert(prim::MMTreeReduce, &inputs, 1);
            g.node(r).output(0)
        });
        g.replace_all_uses_with(out, reduced);
        crate::graph_update!("Reduced a tree of {} matrix products", mms.len());
        changed = true;
    }
    changed
}

/// The `mm` leaves of a tree, rewriting `t(mm(a, b))` leaves to `mm(t(b), t(a))`.
fn gather_matmuls(g: &mut Graph, root: NodeId) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut queue = vec![root];
    while let Some(n) = queue.pop() {
        let k = g.node(n).kind();
        if k == aten::mm {
            out.push(n);
        } else if k == aten::t {
            let mm = g.value(g.node(n).input(0)).node();
            let (a, b) = (g.node(mm).input(0), g.node(mm).input(1));
            let new_mm = g.with_insert_point(mm, |g| {
                let at = g.insert(aten::t, &[a], 1);
                let bt = g.insert(aten::t, &[b], 1);
                let (at, bt) = (g.node(at).output(0), g.node(bt).output(0));
                g.insert(aten::mm, &[bt, at], 1)
            });
            let old = g.node(n).output(0);
            let new = g.node(new_mm).output(0);
            g.replace_all_uses_with(old, new);
            out.push(new_mm);
        } else {
            queue.push(g.value(g.node(n).input(0)).node());
            queue.push(g.value(g.node(n).input(1)).node());
        }
    }
    out
}

/// The `mm`s of `v`'s block using `v` as left (first) and right (second) operand, without
/// those that depend on an earlier one.
fn independent_mm_uses(g: &mut Graph, v: ValueId, db: &AliasDb) -> (Vec<NodeId>, Vec<NodeId>) {
    let block = g.node(g.value(v).node()).owning_block();
    let mut lhs = Vec::new();
    let mut rhs = Vec::new();
    for u in g.value(v).uses().to_vec() {
        if g.node(u.user).owning_block() != block
            || !is_mm(g, u.user)
            || db.node_has_writers(g, u.user)
        {
            continue;
        }
        let ins = g.node(u.user).inputs();
        if u.offset == 0 && ins[1] != v {
            lhs.push(u.user);
        } else if u.offset == 1 && ins[0] != v {
            rhs.push(u.user);
        }
    }
    (independent(g, lhs, db), independent(g, rhs, db))
}

fn independent(g: &mut Graph, mut mms: Vec<NodeId>, db: &AliasDb) -> Vec<NodeId> {
    mms.sort_by(|&a, &b| {
        if a == b {
            std::cmp::Ordering::Equal
        } else if g.is_before(a, b) {
            std::cmp::Ordering::Less
        } else {
            std::cmp::Ordering::Greater
        }
    });
    let mut keep: Vec<Option<NodeId>> = mms.into_iter().map(Some).collect();
    for i in 0..keep.len() {
        let Some(a) = keep[i] else { continue };
        for slot in keep.iter_mut().skip(i + 1) {
            let Some(b) = *slot else { continue };
            if !db.could_move_before_topologically(g, b, a) {
                *slot = None;
            }
        }
    }
    keep.into_iter().flatten().collect()
}

fn batch_side(g: &mut Graph, b: BlockId, db: &AliasDb) -> bool {
    let mut changed = false;
    let mut considered: HashSet<ValueId> = HashSet::new();
    for n in g.block_nodes(b) {
        if !g.is_alive(n) {
            continue;
        }
        if is_mm(g, n) && !db.node_has_writers(g, n) {
            for input in g.node(n).inputs().to_vec() {
                if !considered.insert(input) {
                    continue;
                }
                let (lhs, rhs) = independent_mm_uses(g, input, db);
                if lhs.len() >= HOW_MANY_IS_MANY {
                    changed |= batch(g, &lhs, 0, db);
                }
                if rhs.len() >= HOW_MANY_IS_MANY {
                    changed |= batch(g, &rhs, 1, db);
                }
            }
        } else {
            for sb in g.node(n).blocks().to_vec() {
                changed |= batch_side(g, sb, db);
            }
        }
    }
    changed
}

/// Gathers `mms` (sharing their operand on `side`: 0 left, 1 right) next to each other and
/// replaces them with one `prim::MMBatchSide`.
fn batch(g: &mut Graph, mms: &[NodeId], side: i64, db: &AliasDb) -> bool {
    for i in (0..mms.len() - 1).rev() {
        if !db.move_before_topologically_valid(g, mms[i], mms[i + 1]) {
            return false;
        }
    }
    let (shared_at, other_at) = if side == 0 { (0, 1) } else { (1, 0) };
    let shared = g.node(mms[0]).input(shared_at);
    let mut inputs = vec![shared];
    inputs.extend(mms.iter().map(|&m| g.node(m).input(other_at)));
    let batched = g.with_insert_point(mms[0], |g| g.insert(prim::MMBatchSide, &inputs, mms.len()));
    g.set_attr(batched, attr::side, AttributeValue::Int(side));
    for (i, &m) in mms.iter().enumerate() {
        let old = g.node(m).output(0);
        let new = g.node(batched).output(i);
        g.replace_all_uses_with(old, new);
    }
    crate::graph_update!("Batched {} matrix products sharing an operand", mms.len());
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn reduces_trees_of_four_products() {
        let mut g = parse_ir(
            "graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor):\n  %one : int = prim::Constant[value=1]()\n  %m1 : Tensor = aten::mm(%a, %b)\n  %m2 : Tensor = aten::mm(%c, %d)\n  %m3 : Tensor = aten::mm(%a, %d)\n  %m4 : Tensor = aten::mm(%c, %b)\n  %s1 : Tensor = aten::add(%m1, %m2, %one)\n  %s2 : Tensor = aten::add(%m3, %m4, %one)\n  %s : Tensor = aten::add(%s1, %s2, %one)\n  return (%s)\n",
        )
        .unwrap();
        assert!(batch_mm(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("prim::MMTreeReduce(")
            .check_not("aten::mm")
            .check_not("aten::add")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }

    #[test]
    fn batches_eight_products_sharing_an_operand() {
        let mut src = String::from("graph(%w : Tensor");
        for i in 0..8 {
            src.push_str(&format!(", %x{i} : Tensor"));
        }
        src.push_str("):\n");
        for i in 0..8 {
            src.push_str(&format!("  %m{i} : Tensor = aten::mm(%x{i}, %w)\n"));
        }
        let outs: Vec<String> = (0..8).map(|i| format!("%m{i}")).collect();
        let tys = ["Tensor"; 8].join(", ");
        src.push_str(&format!(
            "  %r : ({tys}) = prim::TupleConstruct({})\n  return (%r)\n",
            outs.join(", ")
        ));
        let mut g = parse_ir(&src).unwrap();
        assert!(batch_mm(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("prim::MMBatchSide[side=1](%w, %x0")
            .check_not("aten::mm")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }

    #[test]
    fn leaves_graphs_with_mutation() {
        let mut g = parse_ir(
            "graph(%a : Tensor, %b : Tensor):\n  %one : int = prim::Constant[value=1]()\n  %m1 : Tensor = aten::mm(%a, %b)\n  %m2 : Tensor = aten::mm(%b, %a)\n  %m3 : Tensor = aten::mm(%a, %a)\n  %m4 : Tensor = aten::mm(%b, %b)\n  %s1 : Tensor = aten::add(%m1, %m2, %one)\n  %s2 : Tensor = aten::add(%m3, %m4, %one)\n  %s : Tensor = aten::add(%s1, %s2, %one)\n  %w : Tensor = aten::add_(%a, %one, %one)\n  return (%s)\n",
        )
        .unwrap();
        assert!(!batch_mm(&mut g));
    }
}
