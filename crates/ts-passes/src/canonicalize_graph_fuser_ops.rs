//! Operator canonicalization for the optimizer and fuser (PyTorch's `CanonicalizeOps`):
//! `aten::chunk` with constant chunks and dim whose list is only unpacked (or indexed) becomes
//! `prim::ConstantChunk[chunks=N, dim=D]` with one output per chunk, and arithmetic with a
//! 0-dim tensor constant operand uses the scalar instead. Dead code is removed afterwards.

use ts_core::{attr, prim, IValue};
use ts_ir::{AttributeValue, BlockId, Graph, NodeId, ValueId};

use crate::node_schema::node_full_name;

/// Runs the canonicalizations; returns whether the graph changed.
pub fn canonicalize_ops(g: &mut Graph) -> bool {
    let top = g.block();
    let changed = canonicalize_block(g, top);
    crate::graph_dump!("After CanonicalizeOps: ", g);
    crate::dead_code_elimination::eliminate_dead_code(g);
    changed
}

fn canonicalize_block(g: &mut Graph, b: BlockId) -> bool {
    let mut changed = false;
    for n in g.block_nodes(b) {
        if !g.is_alive(n) {
            continue;
        }
        for sb in g.node(n).blocks().to_vec() {
            changed |= canonicalize_block(g, sb);
        }
        let Some(name) = node_full_name(g, n) else {
            continue;
        };
        match name.as_str() {
            "aten::add.Tensor" | "aten::sub.Tensor" | "aten::mul.Tensor" | "aten::div.Tensor" => {
                changed |= scalarize_rank0_constant(g, n);
            }
            "aten::chunk" => changed |= chunk_to_constant_chunk(g, n),
            _ => {}
        }
    }
    changed
}

/// `x + t` with a 0-dim tensor constant `t` becomes `x + t.item()`.
fn scalarize_rank0_constant(g: &mut Graph, n: NodeId) -> bool {
    let other = g.node(n).input(1);
    let Some(IValue::Tensor(t)) = g.to_ivalue(other) else {
        return false;
    };
    if t.dim() != 0 {
        return false;
    }
    let Ok(item) = t.item() else {
        return false;
    };
    let kind = g.node(n).kind();
    let mut inputs = g.node(n).inputs().to_vec();
    let out = g.node(n).output(0);
    let new_out = g.with_insert_point(n, |g| {
        inputs[1] = g.insert_constant(&IValue::from_scalar(item));
        let m = g.insert(kind, &inputs, 0);
        g.add_output(m, g.value(out).ty().clone())
    });
    let new_node = g.value(new_out).node();
    let range = g.node(n).source_range().cloned();
    let cs = g.node(n).callstack().cloned();
    g.set_source_range(new_node, range);
    g.set_callstack(new_node, cs);
    g.copy_metadata(new_out, out);
    g.replace_all_uses_with(out, new_out);
    true
}

/// The chunk outputs a list is unpacked into, with their chunk index; `None` when the list
/// has another kind of use or is unpacked into the wrong number of values.
fn chunk_outputs(g: &Graph, chunk: NodeId, chunks: i64) -> Option<Vec<(ValueId, usize)>> {
    let list = g.node(chunk).output(0);
    let mut out = Vec::new();
    for u in g.value(list).uses() {
        let user = u.user;
        if node_full_name(g, user).as_deref() == Some("aten::select.t") {
            let Some(IValue::Int(i)) = g.to_ivalue(g.node(user).input(1)) else {
                return None;
            };
            if !g.value(g.node(user).output(0)).ty().is_tensor() || i < 0 {
                return None;
            }
            out.push((g.node(user).output(0), i as usize));
        } else if g.node(user).kind() == prim::ListUnpack {
            let outs = g.node(user).outputs();
            if outs.len() as i64 != chunks {
                return None;
            }
            out.extend(outs.iter().enumerate().map(|(i, &o)| (o, i)));
        } else {
            return None;
        }
    }
    Some(out)
}

fn chunk_to_constant_chunk(g: &mut Graph, n: NodeId) -> bool {
    let ins = g.node(n).inputs().to_vec();
    let (Some(IValue::Int(chunks)), Some(IValue::Int(dim))) =
        (g.to_ivalue(ins[1]), g.to_ivalue(ins[2]))
    else {
        return false;
    };
    if chunks <= 0 {
        return false;
    }
    let Some(outs) = chunk_outputs(g, n, chunks) else {
        return false;
    };
    if outs.iter().any(|&(_, i)| i as i64 >= chunks) {
        return false;
    }
    let cc = g.with_insert_point(n, |g| {
        g.insert(prim::ConstantChunk, &[ins[0]], chunks as usize)
    });
    g.set_attr(cc, attr::chunks, AttributeValue::Int(chunks));
    g.set_attr(cc, attr::dim, AttributeValue::Int(dim));
    let range = g.node(n).source_range().cloned();
    let cs = g.node(n).callstack().cloned();
    g.set_source_range(cc, range);
    g.set_callstack(cc, cs);
    for (v, i) in outs {
        let new = g.node(cc).output(i);
        let ty = g.value(v).ty().clone();
        g.replace_all_uses_with(v, new);
        g.set_type(new, ty);
    }
    crate::graph_update!(
        "Replaced aten::chunk with prim::ConstantChunk[chunks={chunks}, dim={dim}]"
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn chunk_and_unpack_become_constant_chunk() {
        let mut g = parse_ir(
            "graph(%x : Tensor):\n  %two : int = prim::Constant[value=2]()\n  %one : int = prim::Constant[value=1]()\n  %l : Tensor[] = aten::chunk(%x, %two, %one)\n  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)\n  %c : Tensor = aten::mul(%a, %b)\n  return (%c)\n",
        )
        .unwrap();
        assert!(canonicalize_ops(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("prim::ConstantChunk[chunks=2, dim=1](%x)")
            .check_not("aten::chunk")
            .check_not("prim::ListUnpack")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }

    #[test]
    fn rank0_tensor_constants_become_scalars() {
        // Tensor constants cannot be written in IR text: build the graph directly.
        let mut g = Graph::new();
        let x = g.add_graph_input(ts_core::Type::tensor());
        let t = g.insert_constant(&IValue::Tensor(
            ts_tensor::Tensor::from_vec(vec![2.0f32], &[]).unwrap(),
        ));
        let one = g.insert_constant(&IValue::Int(1));
        let add = g.insert(ts_core::aten::add, &[x, t, one], 1);
        let y = g.node(add).output(0);
        g.register_output(y);
        assert!(canonicalize_ops(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("float = prim::Constant[value=2.]")
            .check("aten::add(%0")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }
}
