//! Loop unrolling (PyTorch's `UnrollLoops`). A `for` loop (constant-true start and continue
//! conditions) whose body is small (at most 32 executed nodes, counting nested blocks) is
//! unrolled: with a constant trip count under 64 it is replaced by that many copies of its
//! body; otherwise the body is repeated 8 times per iteration, the trip count becomes
//! `n // 8`, and a copy of the original loop runs the remaining `n - (n // 8) * 8` iterations.
//! When the body reads the loop counter, the counter first becomes an explicit loop-carried
//! value (`i + 1` per copy) shared by the unrolled loop and the remainder loop. Inner loops
//! are unrolled before outer ones.

use std::collections::HashMap;

use ts_core::{aten, prim, IValue};
use ts_ir::{BlockId, Graph, NodeId, ValueId};

use crate::dead_code_elimination::{eliminate_dead_code, eliminate_dead_code_in_block};

/// Copies of the body per iteration of an unrolled loop.
pub const UNROLL_FACTOR: i64 = 8;
/// The largest body (executed nodes) that is unrolled.
pub const MAX_BODY_SIZE: i64 = 32;
/// Constant trip counts below this are unrolled completely.
pub const MAX_BODY_REPEATS: i64 = 64;

/// Unrolls the small loops of `g`; returns whether anything changed.
pub fn unroll_loops(g: &mut Graph) -> bool {
    let top = g.block();
    let changed = unroll_block(g, top, false);
    if changed {
        eliminate_dead_code(g);
    }
    crate::graph_dump!("After UnrollLoops: ", g);
    changed
}

/// Unrolls only the loops with a constant trip count (any body size).
pub fn unroll_constant_loops(g: &mut Graph) -> bool {
    let top = g.block();
    let changed = unroll_block(g, top, true);
    if changed {
        eliminate_dead_code(g);
    }
    changed
}

fn is_true_constant(g: &Graph, v: ValueId) -> bool {
    matches!(g.to_ivalue(v), Some(IValue::Bool(true)))
}

/// A loop with constant-true start and continue conditions.
fn is_for_loop(g: &Graph, n: NodeId) -> bool {
    if g.node(n).kind() != prim::Loop {
        return false;
    }
    let body = g.node(n).blocks()[0];
    is_true_constant(g, g.node(n).input(1)) && is_true_constant(g, g.block_outputs(body)[0])
}

/// The number of nodes a block runs (nested blocks and each block's return included, as
/// PyTorch counts), or `limit` once it reaches it.
fn limited_block_size(g: &Graph, b: BlockId, limit: i64) -> i64 {
    let mut i = 0;
    let mut items = g.block_nodes(b);
    items.push(g.return_node(b));
    let ret = g.return_node(b);
    for n in items {
        if i >= limit {
            return limit;
        }
        for &sb in g.node(n).blocks() {
            i += limited_block_size(g, sb, limit - i);
        }
        let k = g.node(n).kind();
        if k != prim::Constant && k != prim::profile && k != prim::profile_ivalue {
            i += 1;
        }
        if n == ret {
            return i;
        }
    }
    i
}

fn is_small_block(g: &Graph, b: BlockId) -> bool {
    limited_block_size(g, b, MAX_BODY_SIZE + 1) <= MAX_BODY_SIZE
}

fn unroll_block(g: &mut Graph, b: BlockId, constant_only: bool) -> bool {
    let mut changed = false;
    for n in g.block_nodes(b) {
        if !g.is_alive(n) {
            continue;
        }
        for sb in g.node(n).blocks().to_vec() {
            changed |= unroll_block(g, sb, constant_only);
        }
        if !is_for_loop(g, n) {
            continue;
        }
        if constant_only {
            if g.node(g.value(g.node(n).input(0)).node()).kind() != prim::Constant {
                continue;
            }
        } else if !is_small_block(g, g.node(n).blocks()[0]) {
            continue;
        }
        crate::graph_update!(
            "Unrolling a loop of {} body nodes",
            g.block_nodes(g.node(n).blocks()[0]).len()
        );
        unroll(g, n);
        changed = true;
    }
    changed
}

/// Inserts `a <op> b` (ints) at the insertion point.
fn insert_int_op(g: &mut Graph, op: ts_core::Symbol, a: ValueId, b: ValueId) -> ValueId {
    let n = g.insert(op, &[a, b], 0);
    g.add_output(n, ts_core::Type::int())
}

fn insert_int(g: &mut Graph, v: i64) -> ValueId {
    g.insert_constant(&IValue::Int(v))
}

/// Makes the loop counter an explicit loop-carried value starting at 0 and incremented at
/// the end of the body.
fn replace_loop_counter(g: &mut Graph, lp: NodeId) {
    let body = g.node(lp).blocks()[0];
    let init = g.with_insert_point(lp, |g| insert_int(g, 0));
    g.insert_input(lp, 2, init);
    g.insert_output(lp, 0, ts_core::Type::int());
    let internal = g.insert_block_input(body, 1, ts_core::Type::int());
    let counter = g.block_inputs(body)[0];
    g.replace_all_uses_with(counter, internal);
    let ret = g.return_node(body);
    let next = g.with_insert_point(ret, |g| {
        let one = insert_int(g, 1);
        insert_int_op(g, aten::add, internal, one)
    });
    g.insert_block_output(body, 1, next);
}

/// Inserts a copy of `body` at the insertion point with its inputs bound to `inputs`; returns
/// the values of its outputs.
fn insert_block_copy(g: &mut Graph, body: BlockId, inputs: &[ValueId]) -> Vec<ValueId> {
    let mut map: HashMap<ValueId, ValueId> = g
        .block_inputs(body)
        .iter()
        .copied()
        .zip(inputs.iter().copied())
        .collect();
    for n in g.block_nodes(body) {
        g.clone_node_in_place(n, &mut map);
    }
    g.block_outputs(body)
        .iter()
        .map(|v| map.get(v).copied().unwrap_or(*v))
        .collect()
}

/// Fills the empty block `dest` with `times` chained copies of `body`.
fn repeat_body(g: &mut Graph, body: BlockId, times: i64, dest: BlockId) {
    for i in g.block_inputs(body).to_vec() {
        let ty = g.value(i).ty().clone();
        let ni = g.add_block_input(dest, ty);
        g.copy_metadata(ni, i);
    }
    let mut io = g.block_inputs(dest).to_vec();
    let counter = g.block_inputs(body)[0];
    let saved = g.insert_point();
    g.set_insert_point_at_end(dest);
    for _ in 0..times {
        io[0] = counter;
        io = insert_block_copy(g, body, &io);
    }
    g.set_insert_point_before(saved);
    for v in io {
        g.add_block_output(dest, v);
    }
    // Dead copies (the constant `true` conditions, ...) would make the loop look bigger to
    // an enclosing loop's unrolling.
    eliminate_dead_code_in_block(g, dest, false);
}

/// Replaces a loop that runs exactly once by its body.
fn inline_body(g: &mut Graph, lp: NodeId) {
    let body = g.node(lp).blocks()[0];
    let mut map: HashMap<ValueId, ValueId> = HashMap::new();
    let ins = g.node(lp).inputs().to_vec();
    for (i, &v) in ins.iter().enumerate().skip(2) {
        map.insert(g.block_inputs(body)[i - 1], v);
    }
    g.with_insert_point(lp, |g| {
        for n in g.block_nodes(body) {
            g.clone_node_in_place(n, &mut map);
        }
    });
    let outs = g.node(lp).outputs().to_vec();
    for (i, o) in outs.into_iter().enumerate() {
        let bo = g.block_outputs(body)[i + 1];
        let r = map.get(&bo).copied().unwrap_or(bo);
        g.replace_all_uses_with(o, r);
    }
    let _ = g.destroy_node(lp);
}

fn unroll(g: &mut Graph, lp: NodeId) {
    let body = g.node(lp).blocks()[0];
    if g.value(g.block_inputs(body)[0]).has_uses() {
        replace_loop_counter(g, lp);
    }
    let body = g.node(lp).blocks()[0];
    let trip = g.node(lp).input(0);
    if let Some(IValue::Int(len)) = g.to_ivalue(trip) {
        if len < MAX_BODY_REPEATS {
            let dest = g.add_block(lp);
            repeat_body(g, body, len.max(0), dest);
            g.erase_block(lp, 0);
            inline_body(g, lp);
            return;
        }
    }
    // The remainder loop: a copy of the original, fed by the unrolled loop's results.
    let mut map = HashMap::new();
    let next = g.next_node(lp);
    let epilogue = g.with_insert_point(next, |g| g.clone_node_in_place(lp, &mut map));
    let outs = g.node(lp).outputs().to_vec();
    for (i, o) in outs.iter().enumerate() {
        let eo = g.node(epilogue).output(i);
        g.replace_all_uses_with(*o, eo);
        g.replace_input(epilogue, i + 2, *o);
    }
    let dest = g.add_block(lp);
    repeat_body(g, body, UNROLL_FACTOR, dest);
    g.erase_block(lp, 0);
    let iters = g.node(lp).input(0);
    let (unrolled, rest) = g.with_insert_point(lp, |g| {
        let k = insert_int(g, UNROLL_FACTOR);
        let unrolled = insert_int_op(g, aten::__round_to_zero_floordiv, iters, k);
        let k2 = insert_int(g, UNROLL_FACTOR);
        let done = insert_int_op(g, aten::mul, unrolled, k2);
        let rest = insert_int_op(g, aten::sub, iters, done);
        (unrolled, rest)
    });
    g.replace_input(lp, 0, unrolled);
    g.replace_input(epilogue, 0, rest);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn unrolls_by_eight_with_a_remainder_loop() {
        let mut g = parse_ir(
            "graph(%x : Tensor, %n : int):\n  %t : bool = prim::Constant[value=1]()\n  %one : int = prim::Constant[value=1]()\n  %y : Tensor = prim::Loop(%n, %t, %x)\n    block0(%i : int, %acc : Tensor):\n      %z : Tensor = aten::add(%acc, %i, %one)\n      -> (%t, %z)\n  return (%y)\n",
        )
        .unwrap();
        assert!(unroll_loops(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("aten::__round_to_zero_floordiv")
            .check("aten::mul")
            .check("aten::sub")
            .check("prim::Loop")
            .check_count("aten::add(%", 16, true)
            .check("prim::Loop")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }

    #[test]
    fn unrolls_constant_trip_counts_completely() {
        let mut g = parse_ir(
            "graph(%x : Tensor):\n  %t : bool = prim::Constant[value=1]()\n  %three : int = prim::Constant[value=3]()\n  %y : Tensor = prim::Loop(%three, %t, %x)\n    block0(%i : int, %acc : Tensor):\n      %z : Tensor = aten::relu(%acc)\n      -> (%t, %z)\n  return (%y)\n",
        )
        .unwrap();
        assert!(unroll_loops(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check_not("prim::Loop")
            .check_count("aten::relu", 3, true)
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }

    #[test]
    fn leaves_big_and_while_loops() {
        let mut body = String::new();
        for i in 0..40 {
            body.push_str(&format!("      %z{i} : Tensor = aten::relu(%acc)\n"));
        }
        let src = format!(
            "graph(%x : Tensor, %n : int, %c : bool):\n  %t : bool = prim::Constant[value=1]()\n  %y : Tensor = prim::Loop(%n, %t, %x)\n    block0(%i : int, %acc : Tensor):\n{body}      -> (%t, %z39)\n  %w : Tensor = prim::Loop(%n, %c, %x)\n    block0(%j : int, %a2 : Tensor):\n      %q : Tensor = aten::relu(%a2)\n      -> (%c, %q)\n  %r : (Tensor, Tensor) = prim::TupleConstruct(%y, %w)\n  return (%r)\n"
        );
        let mut g = parse_ir(&src).unwrap();
        assert!(!unroll_loops(&mut g));
    }
}
