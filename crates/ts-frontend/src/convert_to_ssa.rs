//! Conversion to SSA (PyTorch's `convert_to_ssa`): control-flow nodes get explicit outputs
//! and block inputs/outputs for the variables they define (via temporary loads and stores),
//! `break`/`continue` become `prim::LoopContinuation`, the loop condition block is inlined,
//! loads and stores are erased, and the exit transform removes `ReturnStmt`s and
//! `LoopContinuation`s.

use std::collections::{BTreeMap, HashMap};

use ts_core::{attr, prim, IValue, TypeRef};
use ts_ir::{AttributeValue, BlockId, Graph, NodeId, ValueId};

fn name_of(g: &Graph, n: NodeId) -> String {
    g.node(n).s(attr::name).unwrap_or("").to_string()
}

fn create_load(g: &mut Graph, name: &str, ty: TypeRef) -> NodeId {
    let n = g.create(prim::Load, &[], 0);
    g.add_output(n, ty);
    g.set_attr(n, attr::name, AttributeValue::String(name.to_string()));
    n
}

fn create_store(g: &mut Graph, name: &str, v: ValueId) -> NodeId {
    let n = g.create(prim::Store, &[v], 0);
    g.set_attr(n, attr::name, AttributeValue::String(name.to_string()));
    n
}

fn meaningful(name: &str) -> bool {
    crate::emitter::function::meaningful_name(name)
}

/// Frames of variable types, one per block.
struct TypeEnv {
    frames: Vec<BTreeMap<String, TypeRef>>,
    /// Insertion order per frame (what PyTorch's unordered map happens to iterate).
    order: Vec<Vec<String>>,
}

impl TypeEnv {
    fn push(&mut self) {
        self.frames.push(BTreeMap::new());
        self.order.push(Vec::new());
    }
    fn pop(&mut self) -> (BTreeMap<String, TypeRef>, Vec<String>) {
        (
            self.frames.pop().unwrap_or_default(),
            self.order.pop().unwrap_or_default(),
        )
    }
    fn set(&mut self, name: &str, t: TypeRef) {
        if let Some(f) = self.frames.last_mut() {
            if f.insert(name.to_string(), t).is_none() {
                if let Some(o) = self.order.last_mut() {
                    o.push(name.to_string());
                }
            }
        }
    }
    fn find(&self, name: &str) -> Option<TypeRef> {
        self.frames.iter().rev().find_map(|f| f.get(name).cloned())
    }
}

/// Adds loads/stores around control flow so every variable a block defines flows out of it.
fn add_control_flow_load_stores(
    g: &mut Graph,
    env: &mut TypeEnv,
    b: BlockId,
) -> (BTreeMap<String, TypeRef>, Vec<String>) {
    env.push();
    let mut n = g.first_node(b);
    let ret = g.return_node(b);
    while n != ret {
        let kind = g.node(n).kind();
        if kind == prim::If {
            add_if_load_stores(g, env, n);
        } else if kind == prim::Loop {
            add_loop_load_stores(g, env, n);
        } else if kind == prim::Store {
            let name = name_of(g, n);
            let t = g.value(g.node(n).input(0)).ty().clone();
            env.set(&name, t);
        } else if kind == prim::ComprehensionScope {
            let blk = g.node(n).blocks()[0];
            add_control_flow_load_stores(g, env, blk);
        }
        n = g.next_node(n);
    }
    env.pop()
}

fn add_block_output(g: &mut Graph, b: BlockId, ty: TypeRef, name: &str) {
    let ret = g.return_node(b);
    let l = create_load(g, name, ty);
    g.insert_before(l, ret);
    let v = g.node(l).output(0);
    g.add_block_output(b, v);
}

fn add_node_output(g: &mut Graph, n: NodeId, ty: TypeRef, name: &str) {
    let out = g.add_output(n, ty);
    if meaningful(name) {
        let _ = g.set_debug_name(out, name);
    }
    let s = create_store(g, name, out);
    g.insert_after(s, n);
}

fn add_node_input(g: &mut Graph, n: NodeId, ty: TypeRef, name: &str) {
    let l = create_load(g, name, ty);
    g.insert_before(l, n);
    let v = g.node(l).output(0);
    g.add_input(n, v);
}

fn add_block_input(g: &mut Graph, b: BlockId, ty: TypeRef, name: &str) {
    let v = g.add_block_input(b, ty);
    if meaningful(name) {
        let _ = g.set_debug_name(v, name);
    }
    let s = create_store(g, name, v);
    let first = g.first_node(b);
    g.insert_before(s, first);
}

fn add_if_load_stores(g: &mut Graph, env: &mut TypeEnv, n: NodeId) {
    let (tb, fb) = (g.node(n).blocks()[0], g.node(n).blocks()[1]);
    let (tvars, _) = add_control_flow_load_stores(g, env, tb);
    let (fvars, _) = add_control_flow_load_stores(g, env, fb);
    let find_t = |v: &str| tvars.get(v).cloned().or_else(|| env.find(v));
    let find_f = |v: &str| fvars.get(v).cloned().or_else(|| env.find(v));
    let mut mutated: Vec<String> = Vec::new();
    for v in tvars.keys() {
        if find_f(v).is_some() {
            mutated.push(v.clone());
        }
    }
    for v in fvars.keys() {
        if find_t(v).is_some() && !mutated.contains(v) {
            mutated.push(v.clone());
        }
    }
    mutated.sort();
    for x in mutated {
        let (Some(tt), Some(ft)) = (find_t(&x), find_f(&x)) else {
            continue;
        };
        let unified = ts_core::unify_types(&tt, &ft, true).unwrap_or_else(|| tt.clone());
        add_block_output(g, tb, tt, &x);
        add_block_output(g, fb, ft, &x);
        add_node_output(g, n, unified, &x);
    }
}

fn add_loop_load_stores(g: &mut Graph, env: &mut TypeEnv, n: NodeId) {
    let body = g.node(n).blocks()[0];
    let (vars, order) = add_control_flow_load_stores(g, env, body);
    for name in loop_var_order(&order) {
        let Some(parent_ty) = env.find(&name) else {
            continue;
        };
        let block_ty = vars
            .get(&name)
            .cloned()
            .unwrap_or_else(|| parent_ty.clone());
        let unified =
            ts_core::unify_types(&parent_ty, &block_ty, false).unwrap_or_else(|| parent_ty.clone());
        add_node_input(g, n, parent_ty, &name);
        add_block_input(g, body, unified.clone(), &name);
        add_block_output(g, body, block_ty, &name);
        add_node_output(g, n, unified, &name);
    }
}

/// The order PyTorch's `std::unordered_map<std::string, ...>` (libstdc++) iterates keys
/// inserted in `inserted` order; loop-carried values are created in this order.
pub fn loop_var_order(inserted: &[String]) -> Vec<String> {
    crate::stdhash::unordered_iteration_order(inserted)
}

// ---------------------------------------------------------------------------------------------
// Loop continuations

fn add_loop_carried_outputs(g: &mut Graph, cont: NodeId, loop_node: NodeId) {
    let body = g.node(loop_node).blocks()[0];
    let outs: Vec<ValueId> = g.block_outputs(body).to_vec();
    for out in outs {
        let load = g.value(out).node();
        let name = name_of(g, load);
        let ty = g.value(out).ty().clone();
        let l = create_load(g, &name, ty);
        g.insert_before(l, cont);
        let v = g.node(l).output(0);
        g.add_input(cont, v);
    }
}

fn assign_exit_continuations(
    g: &mut Graph,
    b: BlockId,
    cur_loop: Option<NodeId>,
    false_val: ValueId,
) {
    let nodes = g.block_nodes(b);
    for n in nodes {
        if !g.is_alive(n) {
            continue;
        }
        let kind = g.node(n).kind();
        if kind == prim::If {
            let bs = g.node(n).blocks().to_vec();
            for blk in bs {
                assign_exit_continuations(g, blk, cur_loop, false_val);
            }
        } else if kind == prim::Loop {
            let body = g.node(n).blocks()[0];
            assign_exit_continuations(g, body, Some(n), false_val);
        } else if kind == prim::ComprehensionScope {
            let body = g.node(n).blocks()[0];
            assign_exit_continuations(g, body, cur_loop, false_val);
        } else if kind == prim::ContinueStmt || kind == prim::BreakStmt {
            let Some(lp) = cur_loop else { continue };
            let cont = g.create(prim::LoopContinuation, &[], 0);
            g.insert_after(cont, n);
            if kind == prim::ContinueStmt {
                // Re-evaluate the loop condition here (clone the condition block before `n`).
                let pre_header = g.node(lp).blocks()[1];
                let cond = clone_block_before(g, pre_header, n);
                g.add_input(cont, cond[0]);
            } else {
                g.add_input(cont, false_val);
            }
            add_loop_carried_outputs(g, cont, lp);
            let _ = g.destroy_node(n);
        }
    }
}

/// Clones the nodes of `src` before node `before`; returns the clones of its outputs.
fn clone_block_before(g: &mut Graph, src: BlockId, before: NodeId) -> Vec<ValueId> {
    let copy = g.clone();
    // Values from outside the block map to themselves.
    let mut map: HashMap<ValueId, ValueId> = copy.identity_map();
    let saved = g.insert_point();
    g.set_insert_point_before(before);
    for n in copy.block_nodes(src) {
        let _ = g.clone_node_from(&copy, n, &mut map);
    }
    g.set_insert_point_before(saved);
    copy.block_outputs(src)
        .iter()
        .map(|o| *map.get(o).unwrap_or(o))
        .collect()
}

/// Moves the loop condition: a copy before the loop becomes its start condition, a copy at the
/// end of the body its continue condition; the condition block is removed.
fn inline_loop_condition(g: &mut Graph, b: BlockId) {
    for n in g.block_nodes(b) {
        let blocks = g.node(n).blocks().to_vec();
        for blk in &blocks {
            inline_loop_condition(g, *blk);
        }
        if g.node(n).kind() == prim::Loop && g.node(n).blocks().len() == 2 {
            let body = g.node(n).blocks()[0];
            let pre_header = g.node(n).blocks()[1];
            let start = clone_block_before(g, pre_header, n);
            g.insert_input(n, 1, start[0]);
            let ret = g.return_node(body);
            let next = clone_block_before(g, pre_header, ret);
            g.insert_block_output(body, 0, next[0]);
            g.erase_block(n, 1);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Erasing loads and stores

fn erase_block_load_stores(g: &mut Graph, b: BlockId, env: &mut Vec<HashMap<String, ValueId>>) {
    env.push(HashMap::new());
    for n in g.block_nodes(b) {
        if !g.is_alive(n) {
            continue;
        }
        let kind = g.node(n).kind();
        if kind == prim::Store {
            let name = name_of(g, n);
            let v = g.node(n).input(0);
            if let Some(top) = env.last_mut() {
                top.insert(name, v);
            }
            g.remove_all_inputs(n);
            let _ = g.destroy_node(n);
        } else if kind == prim::Load {
            let name = name_of(g, n);
            let out = g.node(n).output(0);
            if let Some(v) = env.iter().rev().find_map(|f| f.get(&name).copied()) {
                g.replace_all_uses_with(out, v);
                // Keep the most meaningful debug name.
                let _ = g.destroy_node(n);
            } else if !g.value(out).has_uses() {
                let _ = g.destroy_node(n);
            }
        } else if kind == prim::ComprehensionScope {
            let body = g.node(n).blocks()[0];
            // Writes inside the comprehension's scope do not leak out.
            erase_block_load_stores(g, body, env);
            for m in g.block_nodes(body) {
                g.move_before(m, n);
            }
            let _ = g.destroy_node(n);
        } else {
            for blk in g.node(n).blocks().to_vec() {
                erase_block_load_stores(g, blk, env);
            }
        }
    }
    env.pop();
}

/// Runs the whole SSA conversion and the exit transform on a freshly emitted graph.
pub fn convert_to_ssa(g: &mut Graph) {
    let mut env = TypeEnv {
        frames: vec![],
        order: vec![],
    };
    let top = g.block();
    add_control_flow_load_stores(g, &mut env, top);
    let first = g.first_node(top);
    let false_val = g.with_insert_point(first, |g| g.insert_constant(&IValue::Bool(false)));
    assign_exit_continuations(g, top, None, false_val);
    inline_loop_condition(g, top);
    let mut env2 = Vec::new();
    erase_block_load_stores(g, top, &mut env2);
    crate::exit_transform::transform_exits(g);
    if !g.value(false_val).has_uses() {
        let n = g.value(false_val).node();
        let _ = g.destroy_node(n);
    }
}
