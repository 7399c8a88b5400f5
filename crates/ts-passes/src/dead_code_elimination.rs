//! Dead code elimination: removes nodes whose outputs are unused and that have no side effects,
//! innermost blocks first, repeating until nothing changes.

use ts_core::prim;
use ts_ir::{BlockId, Graph, NodeId};

use crate::side_effects::has_side_effects;

/// Runs DCE over the whole graph; returns whether anything was removed.
pub fn eliminate_dead_code(g: &mut Graph) -> bool {
    let mut changed = false;
    loop {
        let top = g.block();
        let round = dce_block(g, top);
        changed |= round;
        if !round {
            return changed;
        }
    }
}

fn dce_block(g: &mut Graph, b: BlockId) -> bool {
    let mut changed = false;
    for n in g.block_nodes(b).into_iter().rev() {
        changed |= remove_dead_if_outputs(g, n);
        changed |= remove_dead_loop_outputs(g, n);
        for sb in g.node(n).blocks().to_vec() {
            changed |= dce_block(g, sb);
        }
        let unused = g.node(n).outputs().iter().all(|&o| !g.value(o).has_uses());
        if unused && !has_side_effects(g, n) && g.destroy_node(n).is_ok() {
            changed = true;
        }
    }
    changed
}

/// Drops the unused outputs of a `prim::If` together with what each block returns for them
/// (PyTorch's `removeDeadBlockOutputs`).
fn remove_dead_if_outputs(g: &mut Graph, n: NodeId) -> bool {
    if g.node(n).kind() != prim::If {
        return false;
    }
    let mut changed = false;
    for i in (0..g.node(n).outputs().len()).rev() {
        if g.value(g.node(n).output(i)).has_uses() {
            continue;
        }
        if g.erase_output(n, i).is_ok() {
            for b in g.node(n).blocks().to_vec() {
                g.erase_block_output(b, i);
            }
            changed = true;
        }
    }
    changed
}

/// Drops the loop-carried values of a `prim::Loop` whose output and body input are both unused
/// (PyTorch's `removeDeadLoopOutputs`).
fn remove_dead_loop_outputs(g: &mut Graph, n: NodeId) -> bool {
    if g.node(n).kind() != prim::Loop {
        return false;
    }
    let body = g.node(n).blocks()[0];
    let mut changed = false;
    for i in (0..g.node(n).outputs().len()).rev() {
        let out = g.node(n).output(i);
        let carried = g.block_inputs(body)[1 + i];
        if g.value(out).has_uses() || g.value(carried).has_uses() {
            continue;
        }
        if g.erase_output(n, i).is_ok() {
            g.remove_input(n, 2 + i);
            let _ = g.erase_block_input(body, 1 + i);
            g.erase_block_output(body, 1 + i);
            changed = true;
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn removes_unused_pure_nodes_keeps_side_effects() {
        let mut g = parse_ir(
            "graph(%x : Tensor, %l : int[]):\n  %one : int = prim::Constant[value=1]()\n  %a : Tensor = aten::add(%x, %x, %one)\n  %b : Tensor = aten::mul(%a, %a)\n  %c : int[] = aten::append(%l, %one)\n  %s : str = prim::Constant[value=\"hi\"]()\n   = prim::Print(%s)\n  %d : Tensor = aten::add_(%x, %x, %one)\n  return (%x)\n",
        )
        .unwrap();
        assert!(eliminate_dead_code(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check_not("aten::mul")
            .check("aten::append")
            .check("prim::Print")
            .check("aten::add_")
            .run_graph(&g)
            .unwrap();
        assert!(!g.to_string().contains("aten::add(%x"), "{g}");
        assert!(!eliminate_dead_code(&mut g));
    }

    #[test]
    fn keeps_unmatched_overloads_of_writing_operators() {
        // No registered overload of aten::Delete takes (str, int), but PyTorch's schemas say
        // Delete writes its argument: the node stays (and fails at run time), it does not
        // silently disappear.
        let mut g = parse_ir(
            "graph(%s : str, %i : int):\n   = aten::Delete(%s, %i)\n  %n : int = aten::len(%s)\n  return (%i)\n",
        )
        .unwrap();
        eliminate_dead_code(&mut g);
        FileCheck::new()
            .check("aten::Delete")
            .check_not("aten::len")
            .run_graph(&g)
            .unwrap();
    }

    #[test]
    fn schemas_without_kernels_keep_their_write_effects() {
        // Neither operator has a kernel in tsrs; PyTorch's schemas decide: the in-place one
        // writes `%f` and stays, the pure one with an unused result goes.
        let mut g = parse_ir(
            "graph(%a : Tensor[], %f : Tensor, %s : Tensor):\n   = aten::_amp_foreach_non_finite_check_and_unscale_(%a, %f, %s)\n  %ok : bool = aten::cudnn_is_acceptable(%f)\n  return (%f)\n",
        )
        .unwrap();
        eliminate_dead_code(&mut g);
        verify(&g).unwrap();
        FileCheck::new()
            .check("aten::_amp_foreach_non_finite_check_and_unscale_")
            .check_not("aten::cudnn_is_acceptable")
            .run_graph(&g)
            .unwrap();
    }

    #[test]
    fn removes_pure_control_flow_and_keeps_raising_branches() {
        let mut g = parse_ir(
            "graph(%c : bool, %x : int):\n  %y : int = prim::If(%c)\n    block0():\n      %z : int = aten::add(%x, %x)\n      -> (%z)\n    block1():\n      -> (%x)\n   = prim::If(%c)\n    block0():\n      %m : str = prim::Constant[value=\"boom\"]()\n       = prim::RaiseException(%m)\n      -> ()\n    block1():\n      -> ()\n  return (%x)\n",
        )
        .unwrap();
        eliminate_dead_code(&mut g);
        verify(&g).unwrap();
        FileCheck::new()
            .check_count("prim::If", 1, true)
            .check("prim::RaiseException")
            .run_graph(&g)
            .unwrap();
    }
}
