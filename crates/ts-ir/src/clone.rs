//! Copying nodes and blocks between graphs (for inlining, unrolling and subgraph creation).

use std::collections::HashMap;

use crate::graph::{BlockId, Graph, NodeId, ValueId};

impl Graph {
    /// Every live value mapped to itself: the starting map for cloning nodes within this graph
    /// (values from outside the cloned region keep referring to themselves).
    pub fn identity_map(&self) -> HashMap<ValueId, ValueId> {
        (0..self.values.len())
            .filter(|&i| self.values[i].alive)
            .map(|i| (ValueId(i as u32), ValueId(i as u32)))
            .collect()
    }

    /// A deep copy of the graph.
    pub fn copy(&self) -> Graph {
        self.clone()
    }

    /// Copies node `n` of `src` (with nested blocks) to the insertion point of `self`, mapping
    /// its inputs through `map` and recording its outputs there. Inputs missing from the map
    /// are an error naming the value.
    pub fn clone_node_from(
        &mut self,
        src: &Graph,
        n: NodeId,
        map: &mut HashMap<ValueId, ValueId>,
    ) -> Result<NodeId, crate::graph::GraphError> {
        let node = src.node(n);
        let mut inputs = Vec::with_capacity(node.inputs().len());
        for &v in node.inputs() {
            let m = map.get(&v).copied().ok_or_else(|| {
                crate::graph::GraphError::Invalid(format!(
                    "cloning {}: input %{} has no mapping",
                    node.kind(),
                    src.display_name(v)
                ))
            })?;
            inputs.push(m);
        }
        let new = self.create(node.kind(), &inputs, 0);
        for (k, a) in node.attrs() {
            self.set_attr(new, *k, a.clone());
        }
        self.set_source_range(new, node.source_range().cloned());
        self.set_callstack(new, node.callstack().cloned());
        for &o in node.outputs() {
            let no = self.add_output(new, src.value(o).ty().clone());
            if let Some(name) = src.value(o).debug_name() {
                if !name.bytes().all(|b| b.is_ascii_digit()) {
                    let _ = self.set_debug_name(no, name);
                }
            }
            map.insert(o, no);
        }
        self.insert_node(new);
        for &b in node.blocks() {
            let nb = self.add_block(new);
            self.clone_block_into(src, b, nb, map)?;
        }
        Ok(new)
    }

    /// Copies node `n` of this graph (with nested blocks) to the insertion point, mapping its
    /// inputs through `map`, where a value without an entry stands for itself; the copies'
    /// outputs are recorded in `map`. Unlike `clone_node_from(&self.clone(), ..)` with an
    /// [`Graph::identity_map`], the cost is the size of the copied node, not of the graph.
    pub fn clone_node_within(&mut self, n: NodeId, map: &mut HashMap<ValueId, ValueId>) -> NodeId {
        self.revision += 1;
        let node = self.node(n);
        let kind = node.kind();
        let inputs: Vec<ValueId> = node
            .inputs()
            .iter()
            .map(|v| map.get(v).copied().unwrap_or(*v))
            .collect();
        let attrs = node.attrs().to_vec();
        let range = node.source_range().cloned();
        let outputs = node.outputs().to_vec();
        let blocks = node.blocks().to_vec();
        let new = self.create(kind, &inputs, 0);
        for (k, a) in attrs {
            self.set_attr(new, k, a);
        }
        self.set_source_range(new, range);
        for o in outputs {
            let no = self.add_output(new, self.value(o).ty().clone());
            self.copy_debug_name(o, no);
            map.insert(o, no);
        }
        self.insert_node(new);
        for b in blocks {
            let nb = self.add_block(new);
            for i in self.block_inputs(b).to_vec() {
                let ni = self.add_block_input(nb, self.value(i).ty().clone());
                self.copy_debug_name(i, ni);
                map.insert(i, ni);
            }
            let saved = self.insert_point();
            self.set_insert_point_at_end(nb);
            for m in self.block_nodes(b) {
                self.clone_node_within(m, map);
            }
            self.set_insert_point_before(saved);
            for o in self.block_outputs(b).to_vec() {
                let m = map.get(&o).copied().unwrap_or(o);
                self.add_block_output(nb, m);
            }
        }
        new
    }

    /// Gives `to` the debug name of `from` (unless it is a bare number).
    fn copy_debug_name(&mut self, from: ValueId, to: ValueId) {
        self.revision += 1;
        if let Some(name) = self.value(from).debug_name() {
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                let name = name.to_owned();
                let _ = self.set_debug_name(to, &name);
            }
        }
    }

    /// Copies the contents of `src_block` of `src` into the empty block `dst` of `self`
    /// (inputs, nodes and outputs).
    pub fn clone_block_into(
        &mut self,
        src: &Graph,
        src_block: BlockId,
        dst: BlockId,
        map: &mut HashMap<ValueId, ValueId>,
    ) -> Result<(), crate::graph::GraphError> {
        for &i in src.block_inputs(src_block) {
            let ni = self.add_block_input(dst, src.value(i).ty().clone());
            if let Some(name) = src.value(i).debug_name() {
                if !name.bytes().all(|b| b.is_ascii_digit()) {
                    let _ = self.set_debug_name(ni, name);
                }
            }
            map.insert(i, ni);
        }
        let saved = self.insert_point();
        self.set_insert_point_at_end(dst);
        for n in src.block_nodes(src_block) {
            if let Err(e) = self.clone_node_from(src, n, map) {
                self.set_insert_point_before(saved);
                return Err(e);
            }
        }
        self.set_insert_point_before(saved);
        for &o in src.block_outputs(src_block) {
            let m = map.get(&o).copied().ok_or_else(|| {
                crate::graph::GraphError::Invalid(format!(
                    "block output %{} has no mapping",
                    src.display_name(o)
                ))
            })?;
            self.add_block_output(dst, m);
        }
        Ok(())
    }

    /// Copies `callee`'s body to the insertion point with its inputs bound to `inputs`;
    /// returns the values standing for the callee's outputs.
    pub fn insert_graph(
        &mut self,
        callee: &Graph,
        inputs: &[ValueId],
    ) -> Result<Vec<ValueId>, crate::graph::GraphError> {
        if callee.inputs().len() != inputs.len() {
            return Err(crate::graph::GraphError::Invalid(format!(
                "insert_graph: callee takes {} inputs, {} given",
                callee.inputs().len(),
                inputs.len()
            )));
        }
        let mut map: HashMap<ValueId, ValueId> = callee
            .inputs()
            .iter()
            .copied()
            .zip(inputs.iter().copied())
            .collect();
        for n in callee.block_nodes(callee.block()) {
            self.clone_node_from(callee, n, &mut map)?;
        }
        callee
            .outputs()
            .iter()
            .map(|o| {
                map.get(o).copied().ok_or_else(|| {
                    crate::graph::GraphError::Invalid(format!(
                        "callee output %{} has no mapping",
                        callee.display_name(*o)
                    ))
                })
            })
            .collect()
    }
}

impl Graph {
    /// Copies node `n` of this graph (with nested blocks) to the insertion point. Inputs found
    /// in `map` are replaced by their mapping, others are kept (PyTorch's `createClone` with a
    /// value map that defaults to identity); the copy's outputs are recorded in `map`.
    pub fn clone_node_in_place(
        &mut self,
        n: NodeId,
        map: &mut HashMap<ValueId, ValueId>,
    ) -> NodeId {
        let kind = self.node(n).kind();
        let inputs: Vec<ValueId> = self
            .node(n)
            .inputs()
            .iter()
            .map(|v| map.get(v).copied().unwrap_or(*v))
            .collect();
        let attrs = self.node(n).attrs().to_vec();
        let range = self.node(n).source_range().cloned();
        let callstack = self.node(n).callstack().cloned();
        let outs = self.node(n).outputs().to_vec();
        let blocks = self.node(n).blocks().to_vec();
        let new = self.create(kind, &inputs, 0);
        for (k, a) in attrs {
            self.set_attr(new, k, a);
        }
        self.set_source_range(new, range);
        self.set_callstack(new, callstack);
        for o in outs {
            let ty = self.value(o).ty().clone();
            let no = self.add_output(new, ty);
            if let Some(name) = self.value(o).debug_name().map(str::to_string) {
                if !name.bytes().all(|b| b.is_ascii_digit()) {
                    let _ = self.set_debug_name(no, &name);
                }
            }
            map.insert(o, no);
        }
        self.insert_node(new);
        for b in blocks {
            let nb = self.add_block(new);
            self.clone_block_in_place(b, nb, map);
        }
        new
    }

    /// Copies the contents of block `src` of this graph into the empty block `dst` (inputs,
    /// nodes, outputs), mapping values as [`Graph::clone_node_in_place`] does.
    pub fn clone_block_in_place(
        &mut self,
        src: BlockId,
        dst: BlockId,
        map: &mut HashMap<ValueId, ValueId>,
    ) {
        for i in self.block_inputs(src).to_vec() {
            let ty = self.value(i).ty().clone();
            let ni = self.add_block_input(dst, ty);
            if let Some(name) = self.value(i).debug_name().map(str::to_string) {
                if !name.bytes().all(|b| b.is_ascii_digit()) {
                    let _ = self.set_debug_name(ni, &name);
                }
            }
            map.insert(i, ni);
        }
        let saved = self.insert_point();
        self.set_insert_point_at_end(dst);
        for m in self.block_nodes(src) {
            self.clone_node_in_place(m, map);
        }
        self.set_insert_point_before(saved);
        for o in self.block_outputs(src).to_vec() {
            let m = map.get(&o).copied().unwrap_or(o);
            self.add_block_output(dst, m);
        }
    }
}
