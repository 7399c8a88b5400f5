//! The graph: arenas of nodes, values and blocks addressed by typed ids.
//!
//! Each block's nodes form a circular doubly linked list through its `prim::Return` sentinel;
//! its inputs are the outputs of a `prim::Param` node and its outputs the inputs of the Return
//! node, as in PyTorch. Values keep use lists so that `replace_all_uses_with` is O(uses).
//! Ids are never reused within a graph; destroyed entries become tombstones.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use smallvec::SmallVec;
use ts_core::{prim, SourceRange, Symbol, Type, TypeRef};

use crate::attribute::AttributeValue;

macro_rules! id_type {
    ($name:ident, $prefix:literal) => {
        #[doc = concat!("Index of a ", $prefix, " in its graph's arena.")]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            fn idx(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id_type!(NodeId, "n");
id_type!(ValueId, "v");
id_type!(BlockId, "b");

/// One use of a value: input `offset` of node `user`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Use {
    pub user: NodeId,
    pub offset: usize,
}

/// Errors from graph mutations that would break invariants.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    #[error("cannot destroy node {kind}: output {output} still has uses")]
    HasUses { kind: String, output: String },
    #[error("invalid debug name '{0}': names may not be empty or integers")]
    InvalidName(String),
    #[error("{0}")]
    Invalid(String),
}

#[derive(Clone, Debug)]
pub(crate) struct NodeData {
    pub kind: Symbol,
    pub inputs: SmallVec<[ValueId; 4]>,
    pub outputs: SmallVec<[ValueId; 2]>,
    pub blocks: SmallVec<[BlockId; 2]>,
    pub owning_block: Option<BlockId>,
    pub prev: NodeId,
    pub next: NodeId,
    pub attrs: Vec<(Symbol, AttributeValue)>,
    pub source_range: Option<SourceRange>,
    pub callstack: Option<Arc<InlinedCallStack>>,
    pub alive: bool,
}

/// Where an inlined node came from: the chain of calls (outermost first) that the inliner
/// replaced by the callee bodies. Tracebacks expand a failing node into one frame per entry, as
/// PyTorch's `InlinedCallStack` does.
#[derive(Clone, Debug)]
pub struct InlinedCallStack {
    pub frames: Vec<InlinedFrame>,
}

/// One inlined call: the call site (in the enclosing function) and the function it called.
#[derive(Clone, Debug)]
pub struct InlinedFrame {
    /// The qualified name of the callee.
    pub callee: String,
    /// The source range of the call in its caller.
    pub call_site: Option<SourceRange>,
}

#[derive(Clone, Debug)]
pub(crate) struct ValueData {
    pub node: NodeId,
    pub offset: usize,
    pub uses: Vec<Use>,
    pub ty: TypeRef,
    pub name: Option<String>,
    pub unique: usize,
    pub alive: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct BlockData {
    pub param: NodeId,
    pub ret: NodeId,
    pub owning_node: Option<NodeId>,
    pub alive: bool,
}

/// A TorchScript graph.
#[derive(Clone)]
pub struct Graph {
    pub(crate) nodes: Vec<NodeData>,
    pub(crate) values: Vec<ValueData>,
    pub(crate) blocks: Vec<BlockData>,
    top: BlockId,
    insert_before: NodeId,
    names: HashMap<String, ValueId>,
    name_suffixes: HashMap<String, usize>,
    next_unique: usize,
    /// Advanced by every mutating method (moving the insertion point aside).
    pub(crate) revision: u64,
    /// Passes that found nothing to change, with the revision they saw.
    fixed_points: Vec<(&'static str, u64)>,
}

/// Read access to a node.
pub struct NodeRef<'g> {
    g: &'g Graph,
    id: NodeId,
}

/// Read access to a value.
pub struct ValueRef<'g> {
    g: &'g Graph,
    id: ValueId,
}

/// Read access to a block.
pub struct BlockRef<'g> {
    g: &'g Graph,
    id: BlockId,
}

impl Default for Graph {
    fn default() -> Self {
        Graph::new()
    }
}

impl Graph {
    /// An empty graph: `graph(): return ()`.
    pub fn new() -> Graph {
        let mut g = Graph {
            nodes: Vec::new(),
            values: Vec::new(),
            blocks: Vec::new(),
            top: BlockId(0),
            insert_before: NodeId(0),
            names: HashMap::new(),
            name_suffixes: HashMap::new(),
            next_unique: 0,
            revision: 0,
            fixed_points: Vec::new(),
        };
        let top = g.new_block_data(None);
        g.top = top;
        g.insert_before = g.blocks[top.idx()].ret;
        g
    }

    fn new_node_data(&mut self, kind: Symbol) -> NodeId {
        self.revision += 1;
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.push(NodeData {
            kind,
            inputs: SmallVec::new(),
            outputs: SmallVec::new(),
            blocks: SmallVec::new(),
            owning_block: None,
            prev: id,
            next: id,
            attrs: Vec::new(),
            source_range: None,
            callstack: None,
            alive: true,
        });
        id
    }

    fn new_block_data(&mut self, owning_node: Option<NodeId>) -> BlockId {
        self.revision += 1;
        let id = BlockId(self.blocks.len() as u32);
        let param = self.new_node_data(prim::Param);
        let ret = self.new_node_data(prim::Return);
        self.nodes[param.idx()].owning_block = Some(id);
        self.nodes[ret.idx()].owning_block = Some(id);
        // The circular list: ret <-> param is not linked; ret.next = first node, ret.prev = last.
        self.nodes[ret.idx()].next = ret;
        self.nodes[ret.idx()].prev = ret;
        self.blocks.push(BlockData {
            param,
            ret,
            owning_node,
            alive: true,
        });
        id
    }

    // ---------------------------------------------------------------------------------------
    // Read API

    /// The top-level block.
    pub fn block(&self) -> BlockId {
        self.top
    }

    /// Read access to node `n`.
    pub fn node(&self, n: NodeId) -> NodeRef<'_> {
        NodeRef { g: self, id: n }
    }

    /// Read access to value `v`.
    pub fn value(&self, v: ValueId) -> ValueRef<'_> {
        ValueRef { g: self, id: v }
    }

    /// Read access to block `b`.
    pub fn block_ref(&self, b: BlockId) -> BlockRef<'_> {
        BlockRef { g: self, id: b }
    }

    /// The graph inputs (the top block's inputs).
    pub fn inputs(&self) -> &[ValueId] {
        self.block_inputs(self.top)
    }

    /// The graph outputs (the top block's outputs).
    pub fn outputs(&self) -> &[ValueId] {
        self.block_outputs(self.top)
    }

    /// A block's inputs.
    pub fn block_inputs(&self, b: BlockId) -> &[ValueId] {
        &self.nodes[self.blocks[b.idx()].param.idx()].outputs
    }

    /// A block's outputs.
    pub fn block_outputs(&self, b: BlockId) -> &[ValueId] {
        &self.nodes[self.blocks[b.idx()].ret.idx()].inputs
    }

    /// The `prim::Param` node of a block.
    pub fn param_node(&self, b: BlockId) -> NodeId {
        self.blocks[b.idx()].param
    }

    /// The `prim::Return` node of a block.
    pub fn return_node(&self, b: BlockId) -> NodeId {
        self.blocks[b.idx()].ret
    }

    /// The node owning a block (None for the top block).
    pub fn block_owner(&self, b: BlockId) -> Option<NodeId> {
        self.blocks[b.idx()].owning_node
    }

    /// The nodes of a block in order (a snapshot, so callers may mutate while iterating).
    pub fn block_nodes(&self, b: BlockId) -> Vec<NodeId> {
        let ret = self.blocks[b.idx()].ret;
        let mut out = Vec::new();
        let mut n = self.nodes[ret.idx()].next;
        while n != ret {
            out.push(n);
            n = self.nodes[n.idx()].next;
        }
        out
    }

    /// The first node of a block (the Return node when empty).
    pub fn first_node(&self, b: BlockId) -> NodeId {
        self.nodes[self.blocks[b.idx()].ret.idx()].next
    }

    /// The node after `n` in its block (the Return node after the last).
    pub fn next_node(&self, n: NodeId) -> NodeId {
        self.nodes[n.idx()].next
    }

    /// The node before `n` in its block (the Return node before the first).
    pub fn prev_node(&self, n: NodeId) -> NodeId {
        self.nodes[n.idx()].prev
    }

    /// All live nodes of the graph, depth first, in order.
    pub fn all_nodes(&self) -> Vec<NodeId> {
        let mut out = Vec::new();
        self.collect_nodes(self.top, &mut out);
        out
    }

    fn collect_nodes(&self, b: BlockId, out: &mut Vec<NodeId>) {
        for n in self.block_nodes(b) {
            out.push(n);
            for &sb in &self.nodes[n.idx()].blocks {
                self.collect_nodes(sb, out);
            }
        }
    }

    /// A counter every mutation advances, so equal revisions of one graph mean equal content.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Records that `pass` ran on the graph as it is now and found nothing to change.
    pub fn mark_fixed_point(&mut self, pass: &'static str) {
        let at = self.revision;
        match self.fixed_points.iter_mut().find(|(p, _)| *p == pass) {
            Some(entry) => entry.1 = at,
            None => self.fixed_points.push((pass, at)),
        }
    }

    /// True when `pass` found nothing to change and the graph has not changed since, so
    /// running it again (if it depends only on the graph) would change nothing either.
    pub fn is_fixed_point(&self, pass: &str) -> bool {
        self.fixed_points
            .iter()
            .any(|&(p, at)| p == pass && at == self.revision)
    }

    /// Number of node slots ever allocated: a checkpoint for [`Graph::rollback_to`].
    pub fn node_slots(&self) -> usize {
        self.nodes.len()
    }

    /// Destroys every live node created after checkpoint `slots` (newest first), undoing a
    /// failed attempt that inserted nodes. Nodes are destroyed even if still used by other
    /// rolled-back nodes.
    pub fn rollback_to(&mut self, slots: usize) {
        self.revision += 1;
        for i in (slots..self.nodes.len()).rev() {
            let n = NodeId(i as u32);
            if self.nodes[i].alive
                && self.nodes[i].kind != prim::Param
                && self.nodes[i].kind != prim::Return
            {
                self.force_destroy(n);
            }
        }
    }

    /// True while node `n` has not been destroyed.
    pub fn is_alive(&self, n: NodeId) -> bool {
        self.nodes.get(n.idx()).is_some_and(|d| d.alive)
    }

    /// True when `n` is (transitively) inside block `b`.
    pub fn is_in_block(&self, n: NodeId, b: BlockId) -> bool {
        let mut cur = self.nodes[n.idx()].owning_block;
        while let Some(blk) = cur {
            if blk == b {
                return true;
            }
            cur = self.blocks[blk.idx()]
                .owning_node
                .and_then(|o| self.nodes[o.idx()].owning_block);
        }
        false
    }

    /// True when `a` comes before `b`, both in the same block.
    pub fn is_before(&self, a: NodeId, b: NodeId) -> bool {
        let blk = self.nodes[a.idx()].owning_block;
        let ret = blk.map(|bl| self.blocks[bl.idx()].ret);
        let mut n = self.nodes[a.idx()].next;
        while Some(n) != ret && n != a {
            if n == b {
                return true;
            }
            n = self.nodes[n.idx()].next;
        }
        Some(b) == ret && Some(a) != ret
    }

    // ---------------------------------------------------------------------------------------
    // Creating nodes and values

    fn new_value(&mut self, node: NodeId, offset: usize, ty: TypeRef) -> ValueId {
        self.revision += 1;
        let id = ValueId(self.values.len() as u32);
        self.values.push(ValueData {
            node,
            offset,
            uses: Vec::new(),
            ty,
            name: None,
            unique: self.next_unique,
            alive: true,
        });
        self.next_unique += 1;
        id
    }

    /// Creates a node (not yet in any block) with `inputs` and `n_outputs` outputs of type
    /// `Tensor`.
    pub fn create(&mut self, kind: Symbol, inputs: &[ValueId], n_outputs: usize) -> NodeId {
        self.revision += 1;
        let n = self.new_node_data(kind);
        for &i in inputs {
            self.add_input(n, i);
        }
        for _ in 0..n_outputs {
            self.add_output(n, Type::tensor());
        }
        n
    }

    /// Appends an input to `n`.
    pub fn add_input(&mut self, n: NodeId, v: ValueId) -> usize {
        self.revision += 1;
        let off = self.nodes[n.idx()].inputs.len();
        self.nodes[n.idx()].inputs.push(v);
        self.values[v.idx()].uses.push(Use {
            user: n,
            offset: off,
        });
        off
    }

    /// Inserts an input of `n` at position `i`.
    pub fn insert_input(&mut self, n: NodeId, i: usize, v: ValueId) {
        self.revision += 1;
        // Shift the offsets of the later uses.
        let later: Vec<ValueId> = self.nodes[n.idx()].inputs[i..].to_vec();
        for (k, lv) in later.iter().enumerate() {
            for u in self.values[lv.idx()].uses.iter_mut() {
                if u.user == n && u.offset == i + k {
                    u.offset += 1;
                    break;
                }
            }
        }
        self.nodes[n.idx()].inputs.insert(i, v);
        self.values[v.idx()].uses.push(Use { user: n, offset: i });
    }

    fn drop_use(&mut self, n: NodeId, i: usize) {
        self.revision += 1;
        let v = self.nodes[n.idx()].inputs[i];
        let uses = &mut self.values[v.idx()].uses;
        if let Some(p) = uses.iter().position(|u| u.user == n && u.offset == i) {
            uses.remove(p);
        }
    }

    /// Removes input `i` of `n`.
    pub fn remove_input(&mut self, n: NodeId, i: usize) {
        self.revision += 1;
        self.drop_use(n, i);
        let later: Vec<ValueId> = self.nodes[n.idx()].inputs[i + 1..].to_vec();
        for (k, lv) in later.iter().enumerate() {
            for u in self.values[lv.idx()].uses.iter_mut() {
                if u.user == n && u.offset == i + 1 + k {
                    u.offset -= 1;
                    break;
                }
            }
        }
        self.nodes[n.idx()].inputs.remove(i);
    }

    /// Removes every input of `n`.
    pub fn remove_all_inputs(&mut self, n: NodeId) {
        self.revision += 1;
        for i in (0..self.nodes[n.idx()].inputs.len()).rev() {
            self.remove_input(n, i);
        }
    }

    /// Replaces input `i` of `n` with `v`; returns the old value.
    pub fn replace_input(&mut self, n: NodeId, i: usize, v: ValueId) -> ValueId {
        self.revision += 1;
        self.drop_use(n, i);
        let old = std::mem::replace(&mut self.nodes[n.idx()].inputs[i], v);
        self.values[v.idx()].uses.push(Use { user: n, offset: i });
        old
    }

    /// Replaces every occurrence of `from` among `n`'s inputs with `to`.
    pub fn replace_input_with(&mut self, n: NodeId, from: ValueId, to: ValueId) {
        self.revision += 1;
        for i in 0..self.nodes[n.idx()].inputs.len() {
            if self.nodes[n.idx()].inputs[i] == from {
                self.replace_input(n, i, to);
            }
        }
    }

    /// Reorders `n`'s inputs: input `i` becomes the one that was at `perm[i]`.
    pub fn permute_inputs(&mut self, n: NodeId, perm: &[usize]) {
        self.revision += 1;
        let old = self.nodes[n.idx()].inputs.to_vec();
        debug_assert_eq!(perm.len(), old.len());
        self.remove_all_inputs(n);
        for &i in perm {
            self.add_input(n, old[i]);
        }
    }

    /// Reorders `n`'s outputs: output `i` becomes the one that was at `perm[i]` (uses follow
    /// their values).
    pub fn permute_outputs(&mut self, n: NodeId, perm: &[usize]) {
        self.revision += 1;
        let old = self.nodes[n.idx()].outputs.clone();
        debug_assert_eq!(perm.len(), old.len());
        let new: SmallVec<[ValueId; 2]> = perm.iter().map(|&i| old[i]).collect();
        for (k, &v) in new.iter().enumerate() {
            self.values[v.idx()].offset = k;
        }
        self.nodes[n.idx()].outputs = new;
    }

    /// Appends an output of type `ty` to `n`.
    pub fn add_output(&mut self, n: NodeId, ty: TypeRef) -> ValueId {
        self.revision += 1;
        let off = self.nodes[n.idx()].outputs.len();
        let v = self.new_value(n, off, ty);
        self.nodes[n.idx()].outputs.push(v);
        v
    }

    /// Inserts an output at position `i`.
    pub fn insert_output(&mut self, n: NodeId, i: usize, ty: TypeRef) -> ValueId {
        self.revision += 1;
        let v = self.new_value(n, i, ty);
        self.nodes[n.idx()].outputs.insert(i, v);
        for k in i + 1..self.nodes[n.idx()].outputs.len() {
            let o = self.nodes[n.idx()].outputs[k];
            self.values[o.idx()].offset = k;
        }
        v
    }

    /// Erases output `i` of `n`; refused while it has uses.
    pub fn erase_output(&mut self, n: NodeId, i: usize) -> Result<(), GraphError> {
        self.revision += 1;
        let v = self.nodes[n.idx()].outputs[i];
        if !self.values[v.idx()].uses.is_empty() {
            return Err(GraphError::HasUses {
                kind: self.nodes[n.idx()].kind.to_string(),
                output: self.display_name(v),
            });
        }
        self.nodes[n.idx()].outputs.remove(i);
        self.forget_value(v);
        for k in i..self.nodes[n.idx()].outputs.len() {
            let o = self.nodes[n.idx()].outputs[k];
            self.values[o.idx()].offset = k;
        }
        Ok(())
    }

    fn forget_value(&mut self, v: ValueId) {
        self.revision += 1;
        if let Some(name) = self.values[v.idx()].name.take() {
            if self.names.get(&name) == Some(&v) {
                self.names.remove(&name);
            }
        }
        self.values[v.idx()].alive = false;
    }

    /// Adds a nested block to `n` (for `prim::If`, `prim::Loop`, ...).
    pub fn add_block(&mut self, n: NodeId) -> BlockId {
        self.revision += 1;
        let b = self.new_block_data(Some(n));
        self.nodes[n.idx()].blocks.push(b);
        b
    }

    /// Removes block `i` of `n` with everything in it.
    pub fn erase_block(&mut self, n: NodeId, i: usize) {
        self.revision += 1;
        let b = self.nodes[n.idx()].blocks.remove(i);
        self.destroy_block_contents(b);
    }

    fn destroy_block_contents(&mut self, b: BlockId) {
        self.revision += 1;
        // Drop the block outputs' uses first, then nodes from the end.
        let ret = self.blocks[b.idx()].ret;
        self.remove_all_inputs(ret);
        for n in self.block_nodes(b).into_iter().rev() {
            self.force_destroy(n);
        }
        let param = self.blocks[b.idx()].param;
        for v in self.nodes[param.idx()].outputs.clone() {
            self.forget_value(v);
        }
        self.nodes[param.idx()].alive = false;
        self.nodes[ret.idx()].alive = false;
        self.blocks[b.idx()].alive = false;
    }

    /// Destroys `n` even if its outputs have uses inside the same dying region.
    fn force_destroy(&mut self, n: NodeId) {
        self.revision += 1;
        for b in self.nodes[n.idx()].blocks.clone().into_iter().rev() {
            self.destroy_block_contents(b);
        }
        self.remove_all_inputs(n);
        self.unlink(n);
        for v in self.nodes[n.idx()].outputs.clone() {
            self.forget_value(v);
        }
        // A dead node keeps its slot but not its attributes (constants can be large).
        self.nodes[n.idx()].attrs = Default::default();
        self.nodes[n.idx()].alive = false;
    }

    /// Adds an input of type `ty` to block `b`.
    pub fn add_block_input(&mut self, b: BlockId, ty: TypeRef) -> ValueId {
        self.revision += 1;
        let p = self.blocks[b.idx()].param;
        self.add_output(p, ty)
    }

    /// Inserts an input of block `b` at position `i`.
    pub fn insert_block_input(&mut self, b: BlockId, i: usize, ty: TypeRef) -> ValueId {
        self.revision += 1;
        let p = self.blocks[b.idx()].param;
        self.insert_output(p, i, ty)
    }

    /// Erases input `i` of block `b`; refused while it has uses.
    pub fn erase_block_input(&mut self, b: BlockId, i: usize) -> Result<(), GraphError> {
        self.revision += 1;
        let p = self.blocks[b.idx()].param;
        self.erase_output(p, i)
    }

    /// Adds a graph input.
    pub fn add_graph_input(&mut self, ty: TypeRef) -> ValueId {
        self.revision += 1;
        self.add_block_input(self.top, ty)
    }

    /// Appends `v` to the outputs of block `b`.
    pub fn add_block_output(&mut self, b: BlockId, v: ValueId) -> usize {
        self.revision += 1;
        let r = self.blocks[b.idx()].ret;
        self.add_input(r, v)
    }

    /// Inserts `v` among the outputs of block `b` at position `i`.
    pub fn insert_block_output(&mut self, b: BlockId, i: usize, v: ValueId) {
        self.revision += 1;
        let r = self.blocks[b.idx()].ret;
        self.insert_input(r, i, v)
    }

    /// Removes output `i` of block `b`.
    pub fn erase_block_output(&mut self, b: BlockId, i: usize) {
        self.revision += 1;
        let r = self.blocks[b.idx()].ret;
        self.remove_input(r, i)
    }

    /// Registers a graph output.
    pub fn register_output(&mut self, v: ValueId) -> usize {
        self.revision += 1;
        self.add_block_output(self.top, v)
    }

    // ---------------------------------------------------------------------------------------
    // Placing nodes

    fn link_before(&mut self, n: NodeId, before: NodeId) {
        self.revision += 1;
        let prev = self.nodes[before.idx()].prev;
        let blk = self.nodes[before.idx()].owning_block;
        self.nodes[n.idx()].prev = prev;
        self.nodes[n.idx()].next = before;
        self.nodes[prev.idx()].next = n;
        self.nodes[before.idx()].prev = n;
        self.nodes[n.idx()].owning_block = blk;
    }

    fn unlink(&mut self, n: NodeId) {
        self.revision += 1;
        if self.nodes[n.idx()].owning_block.is_none() {
            return;
        }
        let (p, nx) = (self.nodes[n.idx()].prev, self.nodes[n.idx()].next);
        self.nodes[p.idx()].next = nx;
        self.nodes[nx.idx()].prev = p;
        self.nodes[n.idx()].prev = n;
        self.nodes[n.idx()].next = n;
        self.nodes[n.idx()].owning_block = None;
        if self.insert_before == n {
            self.insert_before = nx;
        }
    }

    /// Inserts a free node before `before`.
    pub fn insert_before(&mut self, n: NodeId, before: NodeId) {
        self.revision += 1;
        self.link_before(n, before);
    }

    /// Inserts a free node after `after`.
    pub fn insert_after(&mut self, n: NodeId, after: NodeId) {
        self.revision += 1;
        let next = self.nodes[after.idx()].next;
        self.link_before(n, next);
    }

    /// Appends a free node at the end of block `b`.
    pub fn append_node(&mut self, b: BlockId, n: NodeId) {
        self.revision += 1;
        let ret = self.blocks[b.idx()].ret;
        self.link_before(n, ret);
    }

    /// Prepends a free node at the start of block `b`.
    pub fn prepend_node(&mut self, b: BlockId, n: NodeId) {
        self.revision += 1;
        let first = self.first_node(b);
        self.link_before(n, first);
    }

    /// Moves a placed node before `before`.
    pub fn move_before(&mut self, n: NodeId, before: NodeId) {
        self.revision += 1;
        self.unlink(n);
        self.link_before(n, before);
    }

    /// Moves a placed node after `after`.
    pub fn move_after(&mut self, n: NodeId, after: NodeId) {
        self.revision += 1;
        self.unlink(n);
        self.insert_after(n, after);
    }

    /// Inserts a free node at the insertion point.
    pub fn insert_node(&mut self, n: NodeId) -> NodeId {
        self.revision += 1;
        let at = self.insert_before;
        self.link_before(n, at);
        n
    }

    /// Creates and inserts a node at the insertion point.
    pub fn insert(&mut self, kind: Symbol, inputs: &[ValueId], n_outputs: usize) -> NodeId {
        self.revision += 1;
        let n = self.create(kind, inputs, n_outputs);
        self.insert_node(n)
    }

    /// Sets the insertion point to just before `n`.
    pub fn set_insert_point_before(&mut self, n: NodeId) {
        self.insert_before = n;
    }

    /// Sets the insertion point to the end of block `b`.
    pub fn set_insert_point_at_end(&mut self, b: BlockId) {
        self.insert_before = self.blocks[b.idx()].ret;
    }

    /// The current insertion point (nodes go before this node).
    pub fn insert_point(&self) -> NodeId {
        self.insert_before
    }

    /// The block the insertion point is in.
    pub fn insert_block(&self) -> BlockId {
        self.nodes[self.insert_before.idx()]
            .owning_block
            .unwrap_or(self.top)
    }

    /// Runs `f` with the insertion point before `n`, then restores it.
    pub fn with_insert_point<R>(&mut self, before: NodeId, f: impl FnOnce(&mut Graph) -> R) -> R {
        let saved = self.insert_before;
        self.insert_before = before;
        let r = f(self);
        if self.nodes[saved.idx()].alive {
            self.insert_before = saved;
        }
        r
    }

    /// Destroys `n`; refused while any output has uses. Nested blocks are destroyed too.
    pub fn destroy_node(&mut self, n: NodeId) -> Result<(), GraphError> {
        self.revision += 1;
        for &v in &self.nodes[n.idx()].outputs {
            if !self.values[v.idx()].uses.is_empty() {
                return Err(GraphError::HasUses {
                    kind: self.nodes[n.idx()].kind.to_string(),
                    output: self.display_name(v),
                });
            }
        }
        if matches!(self.nodes[n.idx()].kind, k if k == prim::Param || k == prim::Return) {
            return Err(GraphError::Invalid(
                "cannot destroy a block's Param or Return node".into(),
            ));
        }
        self.force_destroy(n);
        Ok(())
    }

    // ---------------------------------------------------------------------------------------
    // Rewiring

    /// Makes every use of `from` use `to` instead.
    pub fn replace_all_uses_with(&mut self, from: ValueId, to: ValueId) {
        self.revision += 1;
        if from == to {
            return;
        }
        let uses = std::mem::take(&mut self.values[from.idx()].uses);
        for u in &uses {
            self.nodes[u.user.idx()].inputs[u.offset] = to;
        }
        self.values[to.idx()].uses.extend(uses);
    }

    /// Replaces the uses of `from` that come after node `after` (in program order, including
    /// nested blocks of later nodes) with `to`.
    pub fn replace_all_uses_after_node_with(&mut self, after: NodeId, from: ValueId, to: ValueId) {
        self.revision += 1;
        let uses = self.values[from.idx()].uses.clone();
        for u in uses {
            if self.is_after_in_program(u.user, after) {
                self.replace_input(u.user, u.offset, to);
            }
        }
    }

    /// True when `n` executes after `anchor`: `n` (or the node enclosing it at `anchor`'s
    /// level) comes later in `anchor`'s block.
    pub fn is_after_in_program(&self, n: NodeId, anchor: NodeId) -> bool {
        let ab = self.nodes[anchor.idx()].owning_block;
        let mut cur = n;
        loop {
            let cb = self.nodes[cur.idx()].owning_block;
            if cb == ab {
                return cur != anchor && self.is_before(anchor, cur);
            }
            match cb.and_then(|b| self.blocks[b.idx()].owning_node) {
                Some(owner) => cur = owner,
                None => return false,
            }
        }
    }

    /// Replaces all uses of each output of `old` with the matching output of `new`.
    pub fn replace_all_outputs_with(&mut self, old: NodeId, new: NodeId) {
        self.revision += 1;
        let (a, b) = (
            self.nodes[old.idx()].outputs.clone(),
            self.nodes[new.idx()].outputs.clone(),
        );
        for (x, y) in a.into_iter().zip(b) {
            self.replace_all_uses_with(x, y);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Values: types and names

    /// Sets the type of `v`.
    pub fn set_type(&mut self, v: ValueId, ty: TypeRef) {
        self.revision += 1;
        self.values[v.idx()].ty = ty;
    }

    /// Sets a debug name with PyTorch's uniquing: if another value has the name, that value is
    /// renamed to `name.N`. Integers and empty names are refused (empty clears the name).
    pub fn set_debug_name(&mut self, v: ValueId, name: &str) -> Result<(), GraphError> {
        self.revision += 1;
        if !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) {
            return Err(GraphError::InvalidName(name.to_string()));
        }
        self.set_name_inner(v, name);
        Ok(())
    }

    /// Sets a printed name without the integer check (the IR parser keeps `%5` as written).
    pub(crate) fn set_name_unchecked(&mut self, v: ValueId, name: &str) {
        self.revision += 1;
        self.set_name_inner(v, name);
    }

    fn set_name_inner(&mut self, v: ValueId, name: &str) {
        self.revision += 1;
        if let Some(old) = self.values[v.idx()].name.take() {
            if self.names.get(&old) == Some(&v) {
                self.names.remove(&old);
            }
        }
        if name.is_empty() {
            return;
        }
        if let Some(&owner) = self.names.get(name) {
            if owner != v {
                let mut suffix = 1usize;
                let mut base = name.to_string();
                if let Some(dot) = name.rfind('.') {
                    let tail = &name[dot + 1..];
                    if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) {
                        suffix = tail.parse().unwrap_or(1);
                        base = name[..dot].to_string();
                    }
                }
                if let Some(&s) = self.name_suffixes.get(&base) {
                    suffix = suffix.max(s + 1);
                }
                let replacement = loop {
                    let cand = format!("{base}.{suffix}");
                    suffix += 1;
                    if !self.names.contains_key(&cand) {
                        break cand;
                    }
                };
                self.name_suffixes.insert(base, suffix);
                self.set_name_inner(owner, &replacement);
            }
        }
        self.names.insert(name.to_string(), v);
        self.values[v.idx()].name = Some(name.to_string());
    }

    /// Copies the debug name of `from` to `to` (no-op when `from` has none).
    pub fn copy_metadata(&mut self, to: ValueId, from: ValueId) {
        self.revision += 1;
        if let Some(n) = self.values[from.idx()].name.clone() {
            if !n.bytes().all(|b| b.is_ascii_digit()) {
                self.set_name_inner(to, &n);
            }
        }
        let ty = self.values[from.idx()].ty.clone();
        self.values[to.idx()].ty = ty;
    }

    /// The name printed for `v`: its debug name or its unique number.
    pub fn display_name(&self, v: ValueId) -> String {
        match &self.values[v.idx()].name {
            Some(n) => n.clone(),
            None => self.values[v.idx()].unique.to_string(),
        }
    }

    // ---------------------------------------------------------------------------------------
    // Node metadata

    /// Changes a node's kind.
    pub fn set_kind(&mut self, n: NodeId, kind: Symbol) {
        self.revision += 1;
        self.nodes[n.idx()].kind = kind;
    }

    /// Sets (or replaces) an attribute.
    pub fn set_attr(&mut self, n: NodeId, name: Symbol, value: AttributeValue) {
        self.revision += 1;
        let attrs = &mut self.nodes[n.idx()].attrs;
        if let Some(e) = attrs.iter_mut().find(|(k, _)| *k == name) {
            e.1 = value;
        } else {
            attrs.push((name, value));
        }
    }

    /// Removes an attribute.
    pub fn remove_attr(&mut self, n: NodeId, name: Symbol) {
        self.revision += 1;
        self.nodes[n.idx()].attrs.retain(|(k, _)| *k != name);
    }

    /// Records where in the source a node came from.
    pub fn set_source_range(&mut self, n: NodeId, r: Option<SourceRange>) {
        self.revision += 1;
        self.nodes[n.idx()].source_range = r;
    }

    /// Records the calls an inlined node came through (None for nodes written in this graph).
    pub fn set_callstack(&mut self, n: NodeId, cs: Option<Arc<InlinedCallStack>>) {
        self.revision += 1;
        self.nodes[n.idx()].callstack = cs;
    }
}

impl<'g> NodeRef<'g> {
    /// The node id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    fn d(&self) -> &'g NodeData {
        &self.g.nodes[self.id.idx()]
    }

    /// The node kind (`aten::add`, `prim::If`, ...).
    pub fn kind(&self) -> Symbol {
        self.d().kind
    }

    /// Input values.
    pub fn inputs(&self) -> &'g [ValueId] {
        &self.d().inputs
    }

    /// Input `i`.
    pub fn input(&self, i: usize) -> ValueId {
        self.d().inputs[i]
    }

    /// Output values.
    pub fn outputs(&self) -> &'g [ValueId] {
        &self.d().outputs
    }

    /// Output `i`.
    pub fn output(&self, i: usize) -> ValueId {
        self.d().outputs[i]
    }

    /// Nested blocks.
    pub fn blocks(&self) -> &'g [BlockId] {
        &self.d().blocks
    }

    /// The block holding this node (None while free).
    pub fn owning_block(&self) -> Option<BlockId> {
        self.d().owning_block
    }

    /// An attribute.
    pub fn attr(&self, name: Symbol) -> Option<&'g AttributeValue> {
        self.d()
            .attrs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }

    /// All attributes in insertion order.
    pub fn attrs(&self) -> &'g [(Symbol, AttributeValue)] {
        &self.d().attrs
    }

    /// The source range recorded for this node.
    pub fn source_range(&self) -> Option<&'g SourceRange> {
        self.d().source_range.as_ref()
    }

    /// The inlined calls this node came through, if it was inlined.
    pub fn callstack(&self) -> Option<&'g Arc<InlinedCallStack>> {
        self.d().callstack.as_ref()
    }

    /// An int attribute.
    pub fn i(&self, name: Symbol) -> Option<i64> {
        match self.attr(name)? {
            AttributeValue::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// A string attribute.
    pub fn s(&self, name: Symbol) -> Option<&'g str> {
        match self.attr(name)? {
            AttributeValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// A type attribute.
    pub fn ty(&self, name: Symbol) -> Option<&'g TypeRef> {
        match self.attr(name)? {
            AttributeValue::Type(t) => Some(t),
            _ => None,
        }
    }

    /// A graph attribute.
    pub fn g(&self, name: Symbol) -> Option<&'g std::sync::Arc<Graph>> {
        match self.attr(name)? {
            AttributeValue::Graph(g) => Some(g),
            _ => None,
        }
    }
}

impl<'g> ValueRef<'g> {
    fn d(&self) -> &'g ValueData {
        &self.g.values[self.id.idx()]
    }

    /// The value id.
    pub fn id(&self) -> ValueId {
        self.id
    }

    /// The static type.
    pub fn ty(&self) -> &'g TypeRef {
        &self.d().ty
    }

    /// The defining node (a `prim::Param` for block inputs).
    pub fn node(&self) -> NodeId {
        self.d().node
    }

    /// Position among the defining node's outputs.
    pub fn offset(&self) -> usize {
        self.d().offset
    }

    /// The uses, in the order they were added.
    pub fn uses(&self) -> &'g [Use] {
        &self.d().uses
    }

    /// True when something uses the value.
    pub fn has_uses(&self) -> bool {
        !self.d().uses.is_empty()
    }

    /// The debug name, if any.
    pub fn debug_name(&self) -> Option<&'g str> {
        self.d().name.as_deref()
    }

    /// The unique number printed when there is no debug name.
    pub fn unique(&self) -> usize {
        self.d().unique
    }
}

impl BlockRef<'_> {
    /// The block id.
    pub fn id(&self) -> BlockId {
        self.id
    }

    /// Inputs.
    pub fn inputs(&self) -> &[ValueId] {
        self.g.block_inputs(self.id)
    }

    /// Outputs.
    pub fn outputs(&self) -> &[ValueId] {
        self.g.block_outputs(self.id)
    }

    /// Nodes in order.
    pub fn nodes(&self) -> Vec<NodeId> {
        self.g.block_nodes(self.id)
    }

    /// The owning node, None for the graph's top block.
    pub fn owning_node(&self) -> Option<NodeId> {
        self.g.block_owner(self.id)
    }
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}
