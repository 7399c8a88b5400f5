//! `CreateAutodiffSubgraphs`: groups adjacent operators with symbolic gradients into
//! `prim::DifferentiableGraph` nodes, each carrying its forward graph `f` (`attr::Subgraph`)
//! and backward graph `df` (`attr::ReverseSubgraph`) from [`crate::autodiff::differentiate`],
//! as PyTorch's graph executor does when some input requires grad.
//!
//! Groups are runs of consecutive differentiable nodes of one block (constants in between are
//! copied into the group), so no differentiable node is reordered; module attribute reads
//! (`prim::GetAttr`, pure) between them move ahead of the run so that a layer's parameters do
//! not split it. As in PyTorch, a group needs at least
//! [`MIN_GROUP_NODES`] non-constant nodes to be created, and is inlined back when its forward
//! graph has fewer than [`INLINE_THRESHOLD`] nodes (entering a differentiable graph has a
//! cost). Nodes whose inputs or outputs are written in place stay outside: the autograd engine
//! handles in-place history.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ts_core::{prim, Symbol};
use ts_ir::{AttributeValue, BlockId, Graph, NodeId, ValueId};

use crate::alias_analysis::AliasDb;
use crate::autodiff::{differentiate, has_symbolic_gradient};

/// The fewest non-constant nodes a differentiable group is made of
/// (PyTorch's `autodiffSubgraphNodeThreshold`).
pub const MIN_GROUP_NODES: usize = 2;

/// Groups whose forward graph has fewer nodes than this are inlined back
/// (PyTorch's `autodiffSubgraphInlineThreshold`).
pub const INLINE_THRESHOLD: usize = 5;

/// Replaces runs of differentiable nodes by `prim::DifferentiableGraph` nodes; true when the
/// graph changed.
pub fn create_autodiff_subgraphs(g: &mut Graph) -> bool {
    let eligible: HashSet<NodeId> = {
        let db = AliasDb::new(g);
        g.all_nodes()
            .into_iter()
            .filter(|&n| {
                has_symbolic_gradient(g, n)
                    && !db.has_writers_any(g, g.node(n).inputs())
                    && !db.has_writers_any(g, g.node(n).outputs())
            })
            .collect()
    };
    let top = g.block();
    let mut changed = false;
    group_block(g, top, &eligible, &mut changed);
    changed
}

fn group_block(g: &mut Graph, b: BlockId, eligible: &HashSet<NodeId>, changed: &mut bool) {
    let nodes = g.block_nodes(b);
    let mut run: Vec<NodeId> = Vec::new();
    for n in nodes {
        if eligible.contains(&n) {
            run.push(n);
            continue;
        }
        if g.node(n).kind() == prim::Constant {
            continue;
        }
        // A module attribute read (a layer's weight) between two differentiable nodes moves
        // ahead of the run instead of ending it: it only reads `self` or an earlier read, and
        // no node of the run writes anything, so the order of everything else is unchanged.
        if g.node(n).kind() == prim::GetAttr && !run.is_empty() {
            let first = run[0];
            g.move_before(n, first);
            continue;
        }
        flush(g, &mut run, changed);
        for sb in g.node(n).blocks().to_vec() {
            group_block(g, sb, eligible, changed);
        }
    }
    flush(g, &mut run, changed);
}

fn flush(g: &mut Graph, run: &mut Vec<NodeId>, changed: &mut bool) {
    if run.len() >= MIN_GROUP_NODES && make_group(g, run) {
        *changed = true;
    }
    run.clear();
}

/// The subgraph of `run`: its inputs (values from before the run, constants copied in) and
/// outputs (values used after it).
fn extract(g: &Graph, run: &[NodeId]) -> Option<(Graph, Vec<ValueId>, Vec<ValueId>)> {
    let in_run: HashSet<NodeId> = run.iter().copied().collect();
    let mut sub = Graph::new();
    let top = sub.block();
    sub.set_insert_point_at_end(top);
    let mut map: HashMap<ValueId, ValueId> = HashMap::new();
    let mut outer_inputs = Vec::new();
    for &n in run {
        for &v in g.node(n).inputs() {
            if map.contains_key(&v) {
                continue;
            }
            let producer = g.value(v).node();
            let constant = if g.node(producer).kind() == prim::Constant {
                g.to_ivalue(v)
            } else {
                None
            };
            let nv = match constant {
                Some(c) => {
                    let cn = sub.create_constant(&c);
                    sub.prepend_node(top, cn);
                    sub.node(cn).output(0)
                }
                None => {
                    outer_inputs.push(v);
                    let nv = sub.add_graph_input(g.value(v).ty().clone());
                    if let Some(name) = g.value(v).debug_name() {
                        if !name.bytes().all(|b| b.is_ascii_digit()) {
                            let _ = sub.set_debug_name(nv, name);
                        }
                    }
                    nv
                }
            };
            map.insert(v, nv);
        }
        sub.clone_node_from(g, n, &mut map).ok()?;
    }
    let mut outer_outputs = Vec::new();
    for &n in run {
        for &o in g.node(n).outputs() {
            if g.value(o).uses().iter().any(|u| !in_run.contains(&u.user)) {
                outer_outputs.push(o);
                sub.register_output(map[&o]);
            }
        }
    }
    if outer_outputs.is_empty() {
        return None;
    }
    Some((sub, outer_inputs, outer_outputs))
}

fn ints(v: &[usize]) -> AttributeValue {
    AttributeValue::Ints(v.iter().map(|&i| i as i64).collect())
}

fn make_group(g: &mut Graph, run: &[NodeId]) -> bool {
    let Some((sub, inputs, outputs)) = extract(g, run) else {
        return false;
    };
    let Some(grad) = differentiate(&sub) else {
        return false;
    };
    if grad.f.all_nodes().len() < INLINE_THRESHOLD {
        return false;
    }
    let node = g.create(prim::DifferentiableGraph, &inputs, 0);
    for &o in &outputs {
        let ty = g.value(o).ty().clone();
        let no = g.add_output(node, ty);
        g.copy_metadata(no, o);
    }
    g.insert_before(node, run[0]);
    g.set_attr(
        node,
        Symbol::attr("Subgraph"),
        AttributeValue::Graph(Arc::new(grad.f)),
    );
    g.set_attr(
        node,
        Symbol::attr("ReverseSubgraph"),
        AttributeValue::Graph(Arc::new(grad.df)),
    );
    g.set_attr(
        node,
        Symbol::attr("f_real_outputs"),
        AttributeValue::Int(grad.f_real_outputs as i64),
    );
    g.set_attr(
        node,
        Symbol::attr("df_input_captured_inputs"),
        ints(&grad.df_input_captured_inputs),
    );
    g.set_attr(
        node,
        Symbol::attr("df_input_captured_outputs"),
        ints(&grad.df_input_captured_outputs),
    );
    let new_outs = g.node(node).outputs().to_vec();
    for (o, no) in outputs.iter().zip(new_outs) {
        g.replace_all_uses_with(*o, no);
    }
    for &n in run.iter().rev() {
        if g.destroy_node(n).is_err() {
            // Unreachable: every use outside the run was redirected above.
            return true;
        }
    }
    true
}
