//! The verifier (PyTorch's `Graph::lint`): structural invariants every pass must keep.
//!
//! Checked: node lists are well linked and owned by their block; every input is defined before
//! its use and in scope (graph inputs, block inputs of enclosing blocks, outputs of earlier
//! nodes of this or an enclosing block); use lists agree with inputs both ways; output offsets
//! agree with their nodes; `prim::If` and `prim::Loop` have the block arity and signatures their
//! semantics need; Param nodes have no inputs and Return nodes no outputs.

use std::collections::HashSet;

use ts_core::prim;

use crate::graph::{BlockId, Graph, NodeId, ValueId};

/// A verification failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("graph verification failed: {0}")]
pub struct VerifyError(pub String);

/// Checks the graph's invariants.
pub fn verify(g: &Graph) -> Result<(), VerifyError> {
    let mut scope: Vec<HashSet<ValueId>> = Vec::new();
    let mut seen_nodes = HashSet::new();
    verify_block(g, g.block(), &mut scope, &mut seen_nodes)?;
    Ok(())
}

fn fail<T>(msg: String) -> Result<T, VerifyError> {
    Err(VerifyError(msg))
}

fn in_scope(scope: &[HashSet<ValueId>], v: ValueId) -> bool {
    scope.iter().any(|s| s.contains(&v))
}

fn verify_block(
    g: &Graph,
    b: BlockId,
    scope: &mut Vec<HashSet<ValueId>>,
    seen: &mut HashSet<NodeId>,
) -> Result<(), VerifyError> {
    let param = g.param_node(b);
    let ret = g.return_node(b);
    if g.node(param).kind() != prim::Param || g.node(ret).kind() != prim::Return {
        return fail(format!("block {b:?} has malformed Param/Return nodes"));
    }
    if !g.node(param).inputs().is_empty() {
        return fail("a Param node has inputs".into());
    }
    if !g.node(ret).outputs().is_empty() {
        return fail("a Return node has outputs".into());
    }
    let mut here = HashSet::new();
    for &v in g.block_inputs(b) {
        check_value_def(g, v, param)?;
        here.insert(v);
    }
    scope.push(here);
    // Walk the list both ways to check the links.
    let mut prev = ret;
    let mut n = g.next_node(ret);
    let mut steps = 0usize;
    while n != ret {
        steps += 1;
        if steps > g.nodes.len() + 1 {
            return fail(format!("node list of block {b:?} is cyclic"));
        }
        if g.prev_node(n) != prev {
            return fail(format!(
                "node {n:?} ({}) has a broken prev link",
                g.node(n).kind()
            ));
        }
        if g.node(n).owning_block() != Some(b) {
            return fail(format!(
                "node {n:?} ({}) is not owned by its block",
                g.node(n).kind()
            ));
        }
        if !g.is_alive(n) || !seen.insert(n) {
            return fail(format!("node {n:?} is dead or appears twice"));
        }
        verify_node(g, n, scope, seen)?;
        prev = n;
        n = g.next_node(n);
    }
    if g.prev_node(ret) != prev {
        return fail(format!("Return node of block {b:?} has a broken prev link"));
    }
    check_inputs(g, ret, scope)?;
    scope.pop();
    Ok(())
}

fn check_value_def(g: &Graph, v: ValueId, n: NodeId) -> Result<(), VerifyError> {
    let vr = g.value(v);
    if vr.node() != n || g.node(n).outputs().get(vr.offset()) != Some(&v) {
        return fail(format!(
            "value %{} does not match its defining node",
            g.display_name(v)
        ));
    }
    for u in vr.uses() {
        if !g.is_alive(u.user) || g.node(u.user).inputs().get(u.offset) != Some(&v) {
            return fail(format!(
                "use list of %{} names input {} of a node that does not use it",
                g.display_name(v),
                u.offset
            ));
        }
    }
    Ok(())
}

fn check_inputs(g: &Graph, n: NodeId, scope: &[HashSet<ValueId>]) -> Result<(), VerifyError> {
    for (i, &v) in g.node(n).inputs().iter().enumerate() {
        if !in_scope(scope, v) {
            return fail(format!(
                "input {i} (%{}) of {} is not defined before its use or is out of scope",
                g.display_name(v),
                g.node(n).kind()
            ));
        }
        if !g
            .value(v)
            .uses()
            .iter()
            .any(|u| u.user == n && u.offset == i)
        {
            return fail(format!(
                "use list of %{} is missing input {i} of {}",
                g.display_name(v),
                g.node(n).kind()
            ));
        }
    }
    Ok(())
}

fn verify_node(
    g: &Graph,
    n: NodeId,
    scope: &mut Vec<HashSet<ValueId>>,
    seen: &mut HashSet<NodeId>,
) -> Result<(), VerifyError> {
    check_inputs(g, n, scope)?;
    let node = g.node(n);
    let kind = node.kind();
    if kind == prim::If {
        if node.inputs().len() != 1 || node.blocks().len() != 2 {
            return fail(format!(
                "prim::If needs 1 input and 2 blocks, has {} and {}",
                node.inputs().len(),
                node.blocks().len()
            ));
        }
        for &b in node.blocks() {
            if !g.block_inputs(b).is_empty() || g.block_outputs(b).len() != node.outputs().len() {
                return fail(format!(
                    "prim::If block has {} inputs and {} outputs; the node has {} outputs",
                    g.block_inputs(b).len(),
                    g.block_outputs(b).len(),
                    node.outputs().len()
                ));
            }
        }
    } else if kind == prim::Loop {
        if node.blocks().len() != 1 || node.inputs().len() < 2 {
            return fail("prim::Loop needs a trip count, a condition and one block".into());
        }
        let carried = node.inputs().len() - 2;
        let b = node.blocks()[0];
        if g.block_inputs(b).len() != carried + 1
            || g.block_outputs(b).len() != carried + 1
            || node.outputs().len() != carried
        {
            return fail(format!(
                "prim::Loop with {carried} carried values has a block with {} inputs and {} outputs and {} node outputs",
                g.block_inputs(b).len(),
                g.block_outputs(b).len(),
                node.outputs().len()
            ));
        }
    }
    for &b in node.blocks() {
        if g.block_owner(b) != Some(n) {
            return fail(format!("block {b:?} does not point back to its node"));
        }
        verify_block(g, b, scope, seen)?;
    }
    let here = scope
        .last_mut()
        .expect("a scope is open while walking a block");
    for &v in node.outputs() {
        check_value_def(g, v, n)?;
        here.insert(v);
    }
    Ok(())
}
