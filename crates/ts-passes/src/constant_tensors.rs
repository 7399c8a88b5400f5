//! Tensor constants in frozen graphs: reading a value as a constant tensor, and putting a
//! computed tensor in place of an operator input (what the folding passes do).

use ts_core::{prim, IValue};
use ts_ir::{Graph, NodeId, ValueId};
use ts_tensor::Tensor;

/// The tensor `v` is, when it is a tensor constant.
pub fn constant_tensor(g: &Graph, v: ValueId) -> Option<Tensor> {
    if g.node(g.value(v).node()).kind() != prim::Constant {
        return None;
    }
    match g.to_ivalue(v)? {
        IValue::Tensor(t) => Some(t),
        _ => None,
    }
}

/// True when `v` is a constant (of any type).
pub fn is_constant(g: &Graph, v: ValueId) -> bool {
    g.node(g.value(v).node()).kind() == prim::Constant
}

/// Replaces input `i` of `n` by a new constant holding `t`, named after the old input plus
/// `suffix` (`conv.weight` → `conv.weight_fused_bn`, as PyTorch names them).
pub fn set_constant_input(g: &mut Graph, n: NodeId, i: usize, t: Tensor, suffix: &str) {
    let old = g.node(n).input(i);
    let name = g
        .value(old)
        .debug_name()
        .filter(|s| !s.bytes().all(|b| b.is_ascii_digit()))
        .map(|s| format!("{s}{suffix}"));
    let c = g.with_insert_point(n, |g| g.insert_constant(&IValue::Tensor(t)));
    if let Some(name) = name {
        let _ = g.set_debug_name(c, &name);
    }
    g.replace_input(n, i, c);
}

/// `t` reshaped to `[C, 1, 1, ...]` (rank `rank`) for scaling a weight per output channel.
pub fn per_channel(t: &Tensor, rank: usize) -> ts_tensor::Result<Tensor> {
    let mut shape = vec![1i64; rank.max(1)];
    shape[0] = -1;
    t.reshape(&shape)
}
