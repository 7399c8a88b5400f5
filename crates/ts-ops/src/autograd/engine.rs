//! The backward engine: runs the recorded nodes from the roots in dependency order, summing
//! the gradients that reach a node along several paths, and delivers the gradients of the
//! requested inputs (`torch.autograd.grad`) or accumulates them into the leaves' `.grad`
//! (`Tensor.backward`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ts_tensor::autograd::{Edge, GradModeGuard, Node};
use ts_tensor::{Error, Tensor};

use super::ops;
use super::record::edge_of;

/// What a backward pass computes.
pub struct BackwardRequest<'a> {
    /// The tensors differentiated, with their incoming gradients.
    pub roots: &'a [(Tensor, Tensor)],
    /// `Some(inputs)`: return their gradients (`autograd.grad`); `None`: accumulate into every
    /// leaf reached (`backward`).
    pub inputs: Option<&'a [Tensor]>,
    pub retain_graph: bool,
    pub create_graph: bool,
    pub allow_unused: bool,
}

fn key(n: &Arc<Node>) -> usize {
    Arc::as_ptr(n) as usize
}

/// Where a requested gradient is collected.
enum Target {
    Leaf(Tensor),
    Output(usize, usize),
}

/// Runs a backward pass; returns one gradient per requested input (empty for `backward`).
pub fn run_backward(req: &BackwardRequest) -> Result<Vec<Option<Tensor>>, Error> {
    let _mode = GradModeGuard::new(req.create_graph);
    let targets: Vec<Target> = match req.inputs {
        Some(inputs) => inputs
            .iter()
            .map(|t| match t.grad_fn() {
                Some((n, nr)) => Ok(Target::Output(key(&n), nr)),
                None if t.requires_grad() => Ok(Target::Leaf(t.clone())),
                None => Err(Error::runtime(
                    "One of the differentiated Tensors does not require grad",
                )),
            })
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    let mut results: Vec<Option<Tensor>> = vec![None; targets.len()];
    let leaf_target = |t: &Tensor| {
        targets
            .iter()
            .position(|g| matches!(g, Target::Leaf(l) if Tensor::is_same(l, t)))
    };

    // Root edges.
    let mut root_edges = Vec::new();
    for (i, (t, g)) in req.roots.iter().enumerate() {
        match edge_of(t) {
            Some(e) => root_edges.push((e, g.clone())),
            None => {
                return Err(Error::runtime(format!(
                    "element {i} of tensors does not require grad and does not have a grad_fn"
                )))
            }
        }
    }

    // Discover the graph: nodes, how many edges lead into each, and which nodes lead to
    // something wanted (a requested input, or any leaf for `backward`).
    let mut nodes: HashMap<usize, Arc<Node>> = HashMap::new();
    let mut deps: HashMap<usize, usize> = HashMap::new();
    let mut stack: Vec<Arc<Node>> = Vec::new();
    for (e, _) in &root_edges {
        if let Edge::Node { node, .. } = e {
            if nodes.insert(key(node), node.clone()).is_none() {
                stack.push(node.clone());
            }
        }
    }
    let mut order: Vec<usize> = Vec::new();
    while let Some(n) = stack.pop() {
        order.push(key(&n));
        for e in n.next_edges.iter().flatten() {
            if let Edge::Node { node, .. } = e {
                *deps.entry(key(node)).or_insert(0) += 1;
                if nodes.insert(key(node), node.clone()).is_none() {
                    stack.push(node.clone());
                }
            }
        }
    }
    let wanted_outputs: HashSet<usize> = targets
        .iter()
        .filter_map(|t| match t {
            Target::Output(k, _) => Some(*k),
            _ => None,
        })
        .collect();
    let needed = needed_nodes(
        &nodes,
        &order,
        &wanted_outputs,
        req.inputs.is_none(),
        &|t| leaf_target(t).is_some(),
    );

    // Seed the roots.
    let mut buffers: HashMap<usize, Vec<Option<Tensor>>> = HashMap::new();
    for (e, g) in root_edges {
        match e {
            Edge::Node { node, input_nr } => {
                let b = buffers
                    .entry(key(&node))
                    .or_insert_with(|| vec![None; node.outputs.len()]);
                accumulate(&mut b[input_nr], g)?;
            }
            Edge::Leaf(t) => deliver_leaf(&t, g, req, &leaf_target, &mut results)?,
        }
    }
    let mut ready: Vec<Arc<Node>> = nodes
        .values()
        .filter(|n| !deps.contains_key(&key(n)))
        .cloned()
        .collect();
    while let Some(node) = ready.pop() {
        let k = key(&node);
        let buf = buffers.remove(&k).unwrap_or_default();
        for (ti, t) in targets.iter().enumerate() {
            if let Target::Output(tk, nr) = t {
                if *tk == k {
                    if let Some(Some(g)) = buf.get(*nr) {
                        accumulate(&mut results[ti], g.clone())?;
                    }
                }
            }
        }
        for (nr, t) in node.retained_outputs() {
            if let Some(Some(g)) = buf.get(nr) {
                accumulate_grad(&t, g.clone(), req.create_graph)?;
            }
        }
        let mut outs: Vec<Option<Tensor>> = vec![None; node.next_edges.len()];
        // Run the formula only when one of its inputs leads to a wanted gradient (a requested
        // non-leaf input is captured above without running its node).
        let apply = node.next_edges.iter().flatten().any(|e| match e {
            Edge::Leaf(t) => req.inputs.is_none() || leaf_target(t).is_some(),
            Edge::Node { node, .. } => needed.contains(&key(node)),
        });
        if apply && buf.iter().any(|g| g.is_some()) {
            let grads: Vec<Tensor> = buf
                .into_iter()
                .enumerate()
                .map(|(i, g)| match g {
                    Some(g) => Ok(g),
                    None => {
                        let (sizes, dtype) = &node.outputs[i];
                        Tensor::zeros(sizes, *dtype)
                    }
                })
                .collect::<Result<_, Error>>()?;
            outs = node.apply(&grads, !req.retain_graph)?;
        }
        for (e, g) in node.next_edges.iter().zip(outs) {
            let Some(e) = e else { continue };
            match e {
                Edge::Node {
                    node: next,
                    input_nr,
                } => {
                    let nk = key(next);
                    if let Some(g) = g {
                        let (sizes, dtype) = &next.outputs[*input_nr];
                        let g = conform(g, sizes, *dtype)?;
                        let b = buffers
                            .entry(nk)
                            .or_insert_with(|| vec![None; next.outputs.len()]);
                        accumulate(&mut b[*input_nr], g)?;
                    }
                    let d = deps.get_mut(&nk).expect("counted while discovering");
                    *d -= 1;
                    if *d == 0 {
                        ready.push(next.clone());
                    }
                }
                Edge::Leaf(t) => {
                    if let Some(g) = g {
                        let (sizes, dtype) = {
                            let m = t.meta();
                            (m.sizes.clone(), m.dtype)
                        };
                        let g = conform(g, &sizes, dtype)?;
                        deliver_leaf(t, g, req, &leaf_target, &mut results)?;
                    }
                }
            }
        }
    }
    if req.inputs.is_some() && !req.allow_unused {
        if let Some(i) = results.iter().position(|r| r.is_none()) {
            // PyTorch's text, missing space included.
            return Err(Error::runtime(format!(
                "element {i}of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior."
            )));
        }
    }
    if !req.create_graph {
        results = results.into_iter().map(|r| r.map(|t| t.detach())).collect();
    }
    Ok(results)
}

/// Nodes from which a wanted gradient is reachable (the others are not run).
fn needed_nodes(
    nodes: &HashMap<usize, Arc<Node>>,
    order: &[usize],
    wanted_outputs: &HashSet<usize>,
    all_leaves: bool,
    leaf_wanted: &dyn Fn(&Tensor) -> bool,
) -> HashSet<usize> {
    // `order` lists every node after some node that reaches it, so walking it backwards sees a
    // node's successors first only for trees; iterate to a fixed point for shared subgraphs.
    let mut needed: HashSet<usize> = HashSet::new();
    loop {
        let mut changed = false;
        for k in order.iter().rev() {
            if needed.contains(k) {
                continue;
            }
            let n = &nodes[k];
            let hit = wanted_outputs.contains(k)
                || !n.retained_outputs().is_empty()
                || n.next_edges.iter().flatten().any(|e| match e {
                    Edge::Leaf(t) => all_leaves || leaf_wanted(t),
                    Edge::Node { node, .. } => needed.contains(&key(node)),
                });
            if hit {
                needed.insert(*k);
                changed = true;
            }
        }
        if !changed {
            return needed;
        }
    }
}

/// Sums a gradient into a slot.
fn accumulate(slot: &mut Option<Tensor>, g: Tensor) -> Result<(), Error> {
    *slot = Some(match slot.take() {
        None => g,
        Some(prev) => ops::add(&prev, &g)?,
    });
    Ok(())
}

/// A gradient in the dtype of the tensor it is for (sizes are the formulas' responsibility;
/// a mismatch is reported rather than broadcast).
fn conform(g: Tensor, sizes: &[i64], dtype: ts_tensor::DType) -> Result<Tensor, Error> {
    if g.sizes().as_slice() != sizes {
        let gs = g.sizes();
        if ts_tensor::shape::numel(&gs) == ts_tensor::shape::numel(sizes) {
            return ops::reshape(&g, sizes);
        }
        return Err(Error::runtime(format!(
            "Function returned an invalid gradient - got [{}] but expected shape compatible with [{}]",
            gs.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "),
            sizes.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
        )));
    }
    if g.dtype() != dtype && !dtype.is_complex() && g.dtype().is_complex() {
        return ops::real(&g);
    }
    if g.dtype() != dtype {
        return ops::to_dtype(&g, dtype);
    }
    Ok(g)
}

fn deliver_leaf(
    t: &Tensor,
    g: Tensor,
    req: &BackwardRequest,
    leaf_target: &dyn Fn(&Tensor) -> Option<usize>,
    results: &mut [Option<Tensor>],
) -> Result<(), Error> {
    if req.inputs.is_some() {
        if let Some(i) = leaf_target(t) {
            accumulate(&mut results[i], g)?;
        }
        Ok(())
    } else {
        accumulate_grad(t, g, req.create_graph)
    }
}

/// `.grad += g` (a fresh tensor the first time, as PyTorch's `AccumulateGrad`).
pub fn accumulate_grad(t: &Tensor, g: Tensor, create_graph: bool) -> Result<(), Error> {
    let new = match t.grad() {
        None if create_graph => g,
        None => ops::clone_detached(&g)?,
        Some(prev) if create_graph => ops::add(&prev, &g)?,
        Some(prev) => ops::add(&prev, &g)?.detach(),
    };
    t.set_grad(Some(new));
    Ok(())
}
