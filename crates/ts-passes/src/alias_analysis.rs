//! Alias analysis (PyTorch's `AliasDb`): which values may share memory and which nodes write to
//! it, built from the operators' schema annotations (`Tensor(a)`, `Tensor(a!)`,
//! `Tensor(a -> *)`, `t(*)`, `t[](a)`), hand-written rules for the `prim::` nodes that have no
//! schema, and the convention that graph inputs may alias anything of their type.
//!
//! The analysis builds a DAG of *elements* (one per mutable value, plus one *wildcard* element
//! per mutable type standing for "memory from outside the graph") with "may point to" edges and
//! "contains" edges (a list's elements). The leaves an element reaches are its memory locations:
//! two values may alias when their locations intersect. Writes are recorded per node as sets of
//! locations, so "does anything write to `v`", "does `n` write to what `m` reads" and the
//! topologically and mutation-safe node motions (`move_after_topologically_valid`, ...) are set
//! intersections. The database does not borrow the graph: passes mutate the graph and keep the
//! database current through the small mutation API (`replace_with_new_value`, `create_value`,
//! `erase_writes_of`), as PyTorch's passes do.

use std::borrow::Cow;
// Keyed by dense arena ids: foldhash, not SipHash (hashing was ~10% of compile time).
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::fmt::Write as _;

use ts_core::{aten, prim, AliasInfo, IValue, Symbol, Type, TypeRef};

/// Node kinds whose outputs are fresh values: they write nothing, and their outputs alias
/// nothing that exists before them.
const CREATOR_KINDS: &[Symbol] = &[
    prim::Constant,
    prim::Uninitialized,
    prim::AutogradZero,
    prim::AutogradAdd,
    prim::FusedConcat,
    prim::MMTreeReduce,
    prim::MMBatchSide,
    prim::BroadcastSizes,
    prim::ChunkSizes,
    prim::Closure,
    prim::CreateObject,
    prim::tolist,
    prim::TensorExprGroup,
    prim::StaticSubgraph,
];
use ts_ir::{BlockId, Graph, NodeId, ValueId};

use crate::memory_locations::MemoryLocations;
use crate::node_schema::node_schema;
use crate::side_effects::node_has_side_effects;

/// Options of an alias analysis.
#[derive(Clone, Copy, Debug, Default)]
pub struct AliasDbOptions {
    /// The graph belongs to a frozen module: `prim::GetAttr` of a submodule makes a fresh value
    /// and batch norm's running statistics are not written.
    pub is_frozen: bool,
}

#[derive(Clone, Debug, Default)]
struct Element {
    /// The values this element stands for; empty for wildcard elements.
    values: Vec<ValueId>,
    points_to: Vec<usize>,
    contained: Vec<usize>,
    /// The alias-type key of the values (to find their wildcard); tensors' is borrowed.
    type_key: Option<Cow<'static, str>>,
}

/// The alias database of one graph.
#[derive(Clone, Debug)]
pub struct AliasDb {
    elements: Vec<Element>,
    /// Memory locations of each element (filled when the analysis completes).
    locations: Vec<MemoryLocations>,
    element_of: HashMap<ValueId, usize>,
    /// Wildcard element per (unshaped) mutable type, keyed by the type's printed form.
    wildcard_index: HashMap<String, usize>,
    wildcard_keys: Vec<(String, usize)>,
    wildcard_values: Vec<ValueId>,
    wildcard_value_set: HashSet<ValueId>,
    /// Pending writes while analyzing: (node, value, write to everything it contains).
    pending_writes: Vec<(NodeId, ValueId, bool)>,
    pending_wildcard_writers: Vec<NodeId>,
    /// Memory locations each node writes (directly, not through its blocks).
    writes: HashMap<NodeId, MemoryLocations>,
    /// Every location some node writes.
    written: MemoryLocations,
    opts: AliasDbOptions,
}

/// Which side of the move point a node goes to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum MoveSide {
    Before,
    After,
}

impl AliasDb {
    /// Analyzes `g`.
    pub fn new(g: &Graph) -> AliasDb {
        AliasDb::with_options(g, AliasDbOptions::default())
    }

    /// Analyzes the graph of a frozen module.
    pub fn new_frozen(g: &Graph) -> AliasDb {
        AliasDb::with_options(g, AliasDbOptions { is_frozen: true })
    }

    /// Analyzes `g` with options.
    pub fn with_options(g: &Graph, opts: AliasDbOptions) -> AliasDb {
        let mut db = AliasDb {
            elements: Vec::new(),
            locations: Vec::new(),
            element_of: HashMap::new(),
            wildcard_index: HashMap::new(),
            wildcard_keys: Vec::new(),
            wildcard_values: Vec::new(),
            wildcard_value_set: HashSet::new(),
            pending_writes: Vec::new(),
            pending_wildcard_writers: Vec::new(),
            writes: HashMap::new(),
            written: MemoryLocations::new(),
            opts,
        };
        for &v in g.inputs() {
            db.set_wildcard(g, v);
        }
        db.analyze_block(g, g.block());
        db.finish();
        crate::graph_debug!("{}", db.dump(g));
        db
    }

    /// True when the analysis might record a write for node `n` itself (not its blocks): a
    /// superset of the nodes `analyze_node` registers writes for, decided without building
    /// the database. A graph none of whose nodes may write needs no alias analysis to tell
    /// which nodes write (dead code elimination asks only that).
    pub fn node_may_write(g: &Graph, n: NodeId) -> bool {
        let node = g.node(n);
        let k = node.kind();
        if k == prim::If || k == prim::Loop || k == prim::GradOf || k == prim::fork {
            return false;
        }
        if node.g(ts_core::attr::Subgraph).is_some() {
            return false;
        }
        if k == aten::wait || k == prim::SetAttr {
            return true;
        }
        if k == aten::batch_norm || k == aten::instance_norm {
            let flag = if k == aten::batch_norm {
                "training"
            } else {
                "use_input_stats"
            };
            return !matches!(
                crate::node_schema::constant_input(g, n, flag),
                Some(IValue::Bool(false))
            );
        }
        if k == prim::CallFunction || k == prim::CallMethod || k == prim::Enter || k == prim::Exit {
            return true;
        }
        if CREATOR_KINDS.contains(&k) {
            return false;
        }
        let no_writes = [
            prim::TupleConstruct,
            prim::ListConstruct,
            prim::DictConstruct,
            prim::TupleUnpack,
            prim::TupleIndex,
            prim::TupleSlice,
            prim::ListUnpack,
            prim::PythonOp,
            prim::GetAttr,
            prim::unchecked_cast,
            prim::ConstantChunk,
            prim::BroadcastingChunk,
            prim::profile,
            prim::profile_ivalue,
            prim::Guard,
            prim::TypeCheck,
            prim::RequiresGradCheck,
            prim::BailOut,
            prim::Print,
            prim::isinstance,
            prim::RaiseException,
            prim::IfThenElse,
        ];
        if no_writes.contains(&k) {
            return false;
        }
        fn writes(a: &AliasInfo) -> bool {
            a.is_write || a.contained.iter().any(writes)
        }
        match node_schema(g, n) {
            Some(schema) => schema
                .arguments
                .iter()
                .chain(&schema.returns)
                .any(|a| a.alias_info.as_ref().is_some_and(writes)),
            // Analyzed conservatively: every mutable input is written.
            None => true,
        }
    }

    /// True when some node of block `b` or its nested blocks may write (see
    /// [`AliasDb::node_may_write`]).
    pub fn block_may_write(g: &Graph, b: BlockId) -> bool {
        g.block_nodes(b).into_iter().any(|n| {
            AliasDb::node_may_write(g, n)
                || g.node(n)
                    .blocks()
                    .iter()
                    .any(|&sb| AliasDb::block_may_write(g, sb))
        })
    }

    /// The nodes of `g` that write, when each of them certainly writes a wildcard
    /// ([`AliasDb::writes_to_wildcard`]), decided without building the database: one of the
    /// values it writes is a graph input or a `prim::GetAttr` output, which the analysis
    /// always makes wildcards. `None` when some writer is not known to. Dead code elimination
    /// then keeps exactly these nodes as untracked mutations and needs no alias analysis (a
    /// module's batch norms, which update their running statistics in place, made it build
    /// one per run, a quarter of a ResNet's optimization time).
    pub fn wildcard_writers(g: &Graph) -> Option<HashSet<NodeId>> {
        let mut writers = HashSet::new();
        AliasDb::collect_wildcard_writers(g, g.block(), &mut writers).then_some(())?;
        #[cfg(debug_assertions)]
        {
            let db = AliasDb::new(g);
            for n in g.all_nodes() {
                debug_assert_eq!(
                    db.writes_to_wildcard(n),
                    writers.contains(&n),
                    "wildcard writer classification of {}",
                    g.node(n).kind()
                );
            }
        }
        Some(writers)
    }

    /// [`AliasDb::wildcard_writers`] for block `b`: false when a writer is not known to write a
    /// wildcard.
    fn collect_wildcard_writers(g: &Graph, b: BlockId, writers: &mut HashSet<NodeId>) -> bool {
        g.block_nodes(b).into_iter().all(|n| {
            let known = !AliasDb::node_may_write(g, n)
                || match AliasDb::write_class(g, n) {
                    Some(true) => {
                        writers.insert(n);
                        true
                    }
                    Some(false) => true,
                    None => false,
                };
            known
                && g.node(n)
                    .blocks()
                    .iter()
                    .all(|&sb| AliasDb::collect_wildcard_writers(g, sb, writers))
        })
    }

    /// What `analyze_node` will register for writer `n`: `Some(true)` a write of a value that
    /// is certainly a wildcard, `Some(false)` no write at all, `None` unknown.
    fn write_class(g: &Graph, n: NodeId) -> Option<bool> {
        let node = g.node(n);
        let k = node.kind();
        // Some(true) when one of `written` is a certain wildcard, Some(false) when none can be
        // written, else unknown.
        let classify = |written: &[ValueId]| {
            let mutable: Vec<ValueId> = written
                .iter()
                .copied()
                .filter(|&v| AliasDb::is_mutable(g, v))
                .collect();
            if mutable.is_empty() {
                Some(false)
            } else if mutable.iter().any(|&v| is_certain_wildcard(g, v)) {
                Some(true)
            } else {
                None
            }
        };
        if k == aten::batch_norm || k == aten::instance_norm {
            let stats: Vec<ValueId> = ["running_mean", "running_var"]
                .iter()
                .filter_map(|name| crate::node_schema::named_input(g, n, name))
                .collect();
            classify(&stats)
        } else if k == prim::SetAttr {
            classify(&node.inputs()[..node.inputs().len().min(1)])
        } else if k == aten::wait {
            None
        } else if k == prim::CallFunction
            || k == prim::CallMethod
            || k == prim::Enter
            || k == prim::Exit
        {
            // `analyze_conservative`: every mutable input is made a wildcard and written.
            Some(node.inputs().iter().any(|&v| AliasDb::is_mutable(g, v)))
        } else if let Some(schema) = node_schema(g, n) {
            // `analyze_from_schema` binds each alias set to the first mutable input annotated
            // with it, and writes those marked `!`; a written return points to the inputs of
            // its sets (or is fresh memory, which this does not follow).
            let bound = bound_alias_inputs(g, node.inputs(), &schema);
            let mut written: Vec<ValueId> = bound
                .iter()
                .filter(|(_, _, formal)| formal.is_write)
                .map(|&(_, v, _)| v)
                .collect();
            for ret in &schema.returns {
                let Some(formal) = ret.alias_info.as_ref().map(element_annotation) else {
                    continue;
                };
                if !formal.is_write {
                    continue;
                }
                for set in &formal.before_sets {
                    match bound.iter().find(|(s, _, _)| s == set) {
                        Some(&(_, v, _)) => written.push(v),
                        None => return None,
                    }
                }
            }
            classify(&written)
        } else {
            Some(node.inputs().iter().any(|&v| AliasDb::is_mutable(g, v)))
        }
    }

    // -------------------------------------------------------------------------------------
    // Types

    /// Whether values of `ty` can alias (PyTorch's `AliasDb::isMutableType`): tensors, lists,
    /// dicts, objects, `Any`, and optionals/tuples/unions/futures holding one of those.
    pub fn is_mutable_type(ty: &TypeRef) -> bool {
        alias_types(ty).is_some()
    }

    fn is_mutable(g: &Graph, v: ValueId) -> bool {
        AliasDb::is_mutable_type(g.value(v).ty())
    }

    // -------------------------------------------------------------------------------------
    // Building the DAG

    fn new_element(&mut self, g: &Graph, value: Option<ValueId>) -> usize {
        let i = self.elements.len();
        let type_key = value.and_then(|v| type_key(g.value(v).ty()));
        self.elements.push(Element {
            values: value.into_iter().collect(),
            type_key,
            ..Element::default()
        });
        if let Some(v) = value {
            self.element_of.insert(v, i);
        }
        i
    }

    fn give_fresh_alias(&mut self, g: &Graph, v: ValueId, add_wildcard_to_contained: bool) {
        if self.element_of.contains_key(&v) {
            // Inside a loop a value may be seen twice.
            return;
        }
        if matches!(&**g.value(v).ty(), Type::Tensor(_)) {
            // Most values are tensors, which contain nothing: no type list to build.
            self.new_element(g, Some(v));
            return;
        }
        let Some(types) = alias_types(g.value(v).ty()) else {
            return;
        };
        let e = self.new_element(g, Some(v));
        if add_wildcard_to_contained {
            self.attach_contained_wildcards(g, e, &types);
        }
    }

    fn attach_contained_wildcards(&mut self, g: &Graph, e: usize, types: &[TypeRef]) {
        if types.len() > 1 {
            for t in types {
                if let Some(w) = self.get_or_create_wildcard(g, t) {
                    if w != e {
                        self.elements[e].points_to.push(w);
                    }
                }
            }
        } else if let Some(t) = types.first() {
            for c in contained_types(t) {
                if let Some(w) = self.get_or_create_wildcard(g, &c) {
                    self.elements[e].contained.push(w);
                }
            }
        }
    }

    fn get_or_create_wildcard(&mut self, g: &Graph, ty: &TypeRef) -> Option<usize> {
        if matches!(&**ty, Type::Tensor(_)) {
            // Most values are tensors: their wildcard is found without building the key.
            if let Some(&w) = self.wildcard_index.get(TENSOR_KEY) {
                return Some(w);
            }
        }
        let types = alias_types(ty)?;
        let key = alias_key(&types);
        if let Some(&w) = self.wildcard_index.get(&key) {
            return Some(w);
        }
        let w = self.new_element(g, None);
        self.wildcard_index.insert(key.clone(), w);
        self.wildcard_keys.push((key, w));
        self.attach_contained_wildcards(g, w, &types);
        Some(w)
    }

    fn wildcard_for(&self, ty: &TypeRef) -> Option<usize> {
        let types = alias_types(ty)?;
        self.wildcard_index.get(&alias_key(&types)).copied()
    }

    fn element(&mut self, g: &Graph, v: ValueId) -> usize {
        if !self.element_of.contains_key(&v) {
            self.give_fresh_alias(g, v, true);
        }
        match self.element_of.get(&v) {
            Some(&e) => e,
            // Not a mutable type: an element anyway keeps callers simple (never queried).
            None => self.new_element(g, Some(v)),
        }
    }

    fn set_wildcard(&mut self, g: &Graph, v: ValueId) -> Option<usize> {
        let w = self.get_or_create_wildcard(g, g.value(v).ty())?;
        self.element(g, v);
        if self.wildcard_value_set.insert(v) {
            self.wildcard_values.push(v);
        }
        Some(w)
    }

    fn non_aliasing(g: &Graph, v: ValueId) -> bool {
        g.must_be_none(v) || g.node(g.value(v).node()).kind() == prim::Uninitialized
    }

    fn make_pointer_to(&mut self, g: &Graph, from: ValueId, to: ValueId) {
        if AliasDb::non_aliasing(g, from) || AliasDb::non_aliasing(g, to) {
            self.give_fresh_alias(g, from, true);
            self.give_fresh_alias(g, to, true);
            return;
        }
        let (mf, mt) = (AliasDb::is_mutable(g, from), AliasDb::is_mutable(g, to));
        if mf != mt || !mf || from == to {
            return;
        }
        let fe = self.element(g, from);
        let te = self.element(g, to);
        if fe != te && !self.elements[fe].points_to.contains(&te) {
            self.elements[fe].points_to.push(te);
        }
    }

    fn add_to_contained(&mut self, g: &Graph, inner: ValueId, container: ValueId) {
        if !AliasDb::is_mutable(g, inner) {
            return;
        }
        let ie = self.element(g, inner);
        let ce = self.element(g, container);
        self.elements[ce].contained.push(ie);
    }

    fn map_aliases(&mut self, g: &Graph, from: &[ValueId], to: &[ValueId]) {
        for (&f, &t) in from.iter().zip(to) {
            self.make_pointer_to(g, f, t);
        }
    }

    fn register_write(&mut self, g: &Graph, v: ValueId, n: NodeId, contained: bool) {
        if AliasDb::is_mutable(g, v) {
            self.pending_writes.push((n, v, contained));
        }
    }

    // -------------------------------------------------------------------------------------
    // Per-node rules

    fn analyze_block(&mut self, g: &Graph, b: BlockId) {
        for n in g.block_nodes(b) {
            self.analyze_node(g, n);
        }
    }

    fn analyze_node(&mut self, g: &Graph, n: NodeId) {
        let node = g.node(n);
        let k = node.kind();
        let ins = node.inputs().to_vec();
        let outs = node.outputs().to_vec();
        if k == prim::If {
            let (tb, fb) = (node.blocks()[0], node.blocks()[1]);
            self.analyze_block(g, tb);
            self.analyze_block(g, fb);
            for (i, &o) in outs.iter().enumerate() {
                let t = g.block_outputs(tb)[i];
                let f = g.block_outputs(fb)[i];
                self.make_pointer_to(g, o, t);
                self.make_pointer_to(g, o, f);
            }
            return;
        }
        if k == prim::Loop {
            let body = node.blocks()[0];
            let carried_in = ins[2..].to_vec();
            let block_in = g.block_inputs(body)[1..].to_vec();
            self.map_aliases(g, &block_in, &carried_in);
            self.analyze_block(g, body);
            let block_out = g.block_outputs(body)[1..].to_vec();
            self.map_aliases(g, &outs, &block_out);
            return;
        }
        if k == prim::GradOf {
            let b = node.blocks()[0];
            self.analyze_block(g, b);
            let bo = g.block_outputs(b).to_vec();
            self.map_aliases(g, &outs, &bo);
            return;
        }
        if node.g(ts_core::attr::Subgraph).is_some() && k != prim::fork {
            // Fusion groups, differentiable graphs, fallback graphs: the subgraph's values live
            // in another graph, so the node is summarized conservatively without writes: its
            // outputs may alias its inputs and anything outside.
            for &i in &ins {
                self.set_wildcard(g, i);
            }
            for &o in &outs {
                self.set_wildcard(g, o);
            }
            return;
        }
        if k == prim::fork {
            for &i in &ins {
                self.set_wildcard(g, i);
            }
            for &o in &outs {
                self.give_fresh_alias(g, o, true);
            }
            return;
        }
        if k == aten::wait {
            for &o in &outs {
                self.set_wildcard(g, o);
            }
            // The forked function may have written any of its inputs.
            self.pending_wildcard_writers.push(n);
            return;
        }
        if k == aten::batch_norm || k == aten::instance_norm {
            for &o in &outs {
                self.give_fresh_alias(g, o, true);
            }
            if k == aten::batch_norm && self.opts.is_frozen {
                return;
            }
            let flag = if k == aten::batch_norm {
                "training"
            } else {
                "use_input_stats"
            };
            let stats_updated = !matches!(
                crate::node_schema::constant_input(g, n, flag),
                Some(IValue::Bool(false))
            );
            if stats_updated {
                for name in ["running_mean", "running_var"] {
                    if let Some(v) = crate::node_schema::named_input(g, n, name) {
                        self.register_write(g, v, n, false);
                    }
                }
            }
            return;
        }
        if CREATOR_KINDS.contains(&k) {
            for &o in &outs {
                self.give_fresh_alias(g, o, true);
            }
            return;
        }
        if k == prim::TupleConstruct {
            self.analyze_tuple_construct(g, n);
            return;
        }
        if k == prim::ListConstruct || k == prim::DictConstruct {
            self.analyze_container_construct(g, n);
            return;
        }
        let extractors = [
            prim::TupleUnpack,
            prim::TupleIndex,
            prim::TupleSlice,
            prim::ListUnpack,
            prim::PythonOp,
            prim::GetAttr,
        ];
        if extractors.contains(&k) {
            if self.opts.is_frozen && k == prim::GetAttr {
                if let Some(c) = g.value(ins[0]).ty().class_type() {
                    if c.is_module {
                        for &o in &outs {
                            self.give_fresh_alias(g, o, true);
                        }
                        return;
                    }
                }
            }
            if k == prim::TupleUnpack || k == prim::TupleIndex {
                self.point_to_tuple_elements(g, ins[0], &outs);
            }
            for &o in &outs {
                self.set_wildcard(g, o);
            }
            return;
        }
        if k == prim::unchecked_cast {
            self.make_pointer_to(g, outs[0], ins[0]);
            return;
        }
        if k == prim::ConstantChunk {
            for &o in &outs {
                self.make_pointer_to(g, o, ins[0]);
            }
            return;
        }
        if k == prim::BroadcastingChunk {
            let chunks = node.i(ts_core::attr::chunks).unwrap_or(1).max(1) as usize;
            for (i, &inp) in ins.iter().enumerate() {
                for &o in outs.iter().skip(i * chunks).take(chunks) {
                    self.make_pointer_to(g, o, inp);
                }
            }
            return;
        }
        if k == prim::SetAttr {
            self.register_write(g, ins[0], n, false);
            if let Some(&v) = ins.get(1) {
                self.set_wildcard(g, v);
            }
            return;
        }
        if k == prim::profile || k == prim::profile_ivalue || k == prim::Guard {
            if let (Some(&o), Some(&i)) = (outs.first(), ins.first()) {
                self.make_pointer_to(g, o, i);
            }
            return;
        }
        if k == prim::TypeCheck || k == prim::RequiresGradCheck {
            for (&o, &i) in outs.iter().zip(&ins) {
                self.make_pointer_to(g, o, i);
            }
            return;
        }
        if k == prim::BailOut {
            if let (Some(&o), Some(&i)) = (outs.first(), ins.get(1)) {
                self.make_pointer_to(g, o, i);
            }
            return;
        }
        if k == prim::CallFunction || k == prim::CallMethod || k == prim::Enter || k == prim::Exit {
            self.analyze_conservative(g, n);
            return;
        }
        if k == prim::Print || k == prim::isinstance || k == prim::RaiseException {
            return;
        }
        if k == prim::IfThenElse {
            // A select between its two value inputs.
            for &i in &ins[1..] {
                self.make_pointer_to(g, outs[0], i);
            }
            return;
        }
        match node_schema(g, n) {
            Some(schema) => self.analyze_from_schema(g, n, &schema),
            None => self.analyze_conservative(g, n),
        }
    }

    fn analyze_from_schema(&mut self, g: &Graph, n: NodeId, schema: &ts_core::FunctionSchema) {
        let node = g.node(n);
        let ins = node.inputs().to_vec();
        let outs = node.outputs().to_vec();
        let mut formal_to_actual: HashMap<String, ValueId> = HashMap::new();
        for (set, actual, formal) in bound_alias_inputs(g, &ins, schema) {
            formal_to_actual.insert(set.to_string(), actual);
            if formal.is_write {
                self.register_write(g, actual, n, false);
            }
            if formal.after_sets.iter().any(|s| s == "*") {
                self.set_wildcard(g, actual);
            }
        }
        for (i, &actual) in outs.iter().enumerate() {
            let Some(ret) = schema.returns.get(i) else {
                // A vararg return list: nothing is known.
                self.set_wildcard(g, actual);
                continue;
            };
            let Some(formal) = ret.alias_info.as_ref().map(element_annotation) else {
                self.give_fresh_alias(g, actual, true);
                continue;
            };
            if !AliasDb::is_mutable(g, actual) {
                continue;
            }
            if formal.before_sets.iter().any(|s| s == "*") {
                self.set_wildcard(g, actual);
                continue;
            }
            let mut aliases_input = false;
            for set in &formal.before_sets {
                if let Some(&to) = formal_to_actual.get(set) {
                    aliases_input = true;
                    self.make_pointer_to(g, actual, to);
                }
            }
            // `foo(Tensor(a) self) -> Tensor(b)`: sets not seen in the inputs are fresh memory;
            // `Tensor(a|fresh)` conservatively aliases `a` only.
            if !aliases_input && !formal.before_sets.is_empty() {
                self.give_fresh_alias(g, actual, true);
            }
            if formal.is_write {
                self.register_write(g, actual, n, false);
            }
        }
    }

    fn analyze_conservative(&mut self, g: &Graph, n: NodeId) {
        let node = g.node(n);
        for &i in node.inputs() {
            if !AliasDb::is_mutable(g, i) {
                continue;
            }
            self.register_write(g, i, n, true);
            self.set_wildcard(g, i);
        }
        for &o in node.outputs() {
            self.set_wildcard(g, o);
        }
    }

    /// A tuple holds its elements themselves, as PyTorch's `analyzeTupleConstruct` has it
    /// (lists and dicts make theirs wildcards): a value that only went into a returned tuple
    /// does not alias every wildcard, so CSE may still merge views of the graph's inputs.
    fn analyze_tuple_construct(&mut self, g: &Graph, n: NodeId) {
        let node = g.node(n);
        let tuple = node.output(0);
        if !AliasDb::is_mutable(g, tuple) {
            return;
        }
        self.give_fresh_alias(g, tuple, false);
        for &v in node.inputs() {
            self.add_to_contained(g, v, tuple);
        }
    }

    /// What comes out of a tuple may be any element it holds (besides being a wildcard, as
    /// for every extractor): writes through it then reach those elements.
    fn point_to_tuple_elements(&mut self, g: &Graph, tuple: ValueId, outs: &[ValueId]) {
        let Some(&te) = self.element_of.get(&tuple) else {
            return;
        };
        let held = self.elements[te].contained.clone();
        for &o in outs {
            if !AliasDb::is_mutable(g, o) {
                continue;
            }
            let oe = self.element(g, o);
            for &c in &held {
                if c != oe && !self.elements[oe].points_to.contains(&c) {
                    self.elements[oe].points_to.push(c);
                }
            }
        }
    }

    fn analyze_container_construct(&mut self, g: &Graph, n: NodeId) {
        let node = g.node(n);
        let container = node.output(0);
        if !AliasDb::is_mutable(g, container) {
            return;
        }
        let uses = g.value(container).uses();
        if uses.len() == 1 && functional_non_escaping_list_use(g, uses[0].user, container) {
            self.give_fresh_alias(g, container, false);
            for &v in node.inputs() {
                self.add_to_contained(g, v, container);
            }
            return;
        }
        self.give_fresh_alias(g, container, true);
        let ce = self.element(g, container);
        for &v in node.inputs() {
            if let Some(w) = self.set_wildcard(g, v) {
                self.elements[ce].contained.push(w);
            }
        }
    }

    // -------------------------------------------------------------------------------------
    // Completing the analysis

    fn finish(&mut self) {
        let pre = self.pre_locations();
        // Values set as wildcards make their memory locations point to their type's wildcard.
        let mut edited: HashMap<usize, MemoryLocations> = HashMap::new();
        for &v in &self.wildcard_values {
            let e = self.element_of[&v];
            let Some(w) = self.wildcard_of_element(e) else {
                continue;
            };
            edited.entry(w).or_default().union_with(&pre[e]);
        }
        let mut locations = pre;
        for (e, loc) in locations.iter_mut().enumerate() {
            if self.elements[e].values.is_empty() {
                continue;
            }
            let Some(w) = self.wildcard_of_element(e) else {
                continue;
            };
            if let Some(ed) = edited.get(&w) {
                if loc.intersects(ed) {
                    loc.set(w);
                }
            }
        }
        self.locations = locations;
        let pending = std::mem::take(&mut self.pending_writes);
        for (n, v, contained) in pending {
            let e = self.element_of[&v];
            let locs = if contained {
                self.all_contained(e)
            } else {
                self.locations[e].clone()
            };
            self.writes.entry(n).or_default().union_with(&locs);
        }
        let all_wildcards: Vec<usize> = self.wildcard_keys.iter().map(|(_, w)| *w).collect();
        for n in std::mem::take(&mut self.pending_wildcard_writers) {
            let w = self.writes.entry(n).or_default();
            for &i in &all_wildcards {
                w.set(i);
            }
        }
        self.rebuild_written_index();
    }

    /// The wildcard element of the type of the (first) value of element `e`.
    fn wildcard_of_element(&self, e: usize) -> Option<usize> {
        let key = self.elements[e].type_key.as_deref()?;
        self.wildcard_index.get(key).copied()
    }

    /// Memory locations ignoring the wildcard pointers: the leaves each element reaches.
    fn pre_locations(&self) -> Vec<MemoryLocations> {
        let n = self.elements.len();
        let mut out: Vec<Option<MemoryLocations>> = vec![None; n];
        for start in 0..n {
            if out[start].is_some() {
                continue;
            }
            // Iterative post-order over points-to edges.
            let mut stack = vec![(start, false)];
            let mut on_stack = HashSet::new();
            while let Some((e, expanded)) = stack.pop() {
                if out[e].is_some() {
                    continue;
                }
                if expanded {
                    on_stack.remove(&e);
                    let mut m = MemoryLocations::new();
                    if self.elements[e].points_to.is_empty() {
                        m.set(e);
                    } else {
                        for &p in &self.elements[e].points_to {
                            if let Some(pl) = &out[p] {
                                m.union_with(pl);
                            }
                        }
                    }
                    out[e] = Some(m);
                    continue;
                }
                on_stack.insert(e);
                stack.push((e, true));
                for &p in &self.elements[e].points_to {
                    if out[p].is_none() && !on_stack.contains(&p) {
                        stack.push((p, false));
                    }
                }
            }
        }
        out.into_iter().map(|m| m.unwrap_or_default()).collect()
    }

    /// Every location `e` may point to or contain, transitively, with `e` itself.
    fn all_contained(&self, e: usize) -> MemoryLocations {
        let mut out = MemoryLocations::new();
        self.collect_all_contained(e, &mut out);
        out
    }

    fn collect_all_contained(&self, e: usize, out: &mut MemoryLocations) {
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            if out.test(x) {
                continue;
            }
            out.set(x);
            for l in self.locs(x).iter() {
                if !out.test(l) {
                    stack.push(l);
                }
            }
            for &c in &self.elements[x].contained {
                if !out.test(c) {
                    stack.push(c);
                }
            }
        }
    }

    /// The locations element `e` may point to, borrowed where they are recorded (a clone per
    /// query dominated DCE on large graphs).
    fn locs(&self, e: usize) -> Cow<'_, MemoryLocations> {
        match self.locations.get(e) {
            Some(l) => Cow::Borrowed(l),
            None => Cow::Owned(MemoryLocations::single(e)),
        }
    }

    /// Adds the locations `v` may point to into `out` (nothing for a value alias analysis does
    /// not track); DCE folds its live values into one set with it.
    pub fn add_value_locations(&self, v: ValueId, out: &mut MemoryLocations) {
        if let Some(&e) = self.element_of.get(&v) {
            match self.locations.get(e) {
                Some(l) => out.union_with(l),
                None => out.set(e),
            }
        }
    }

    fn rebuild_written_index(&mut self) {
        let mut w = MemoryLocations::new();
        for locs in self.writes.values() {
            w.union_with(locs);
        }
        self.written = w;
    }

    // -------------------------------------------------------------------------------------
    // Queries

    fn elem(&self, g: &Graph, v: ValueId) -> Option<usize> {
        if !AliasDb::is_mutable(g, v) {
            return None;
        }
        self.element_of.get(&v).copied()
    }

    /// True when `a` and `b` may point to the same memory.
    pub fn may_alias(&self, g: &Graph, a: ValueId, b: ValueId) -> bool {
        match (self.elem(g, a), self.elem(g, b)) {
            (Some(x), Some(y)) => self.locs(x).intersects(&self.locs(y)),
            _ => false,
        }
    }

    /// True when some value of `a` may alias some value of `b`.
    pub fn may_alias_any(&self, g: &Graph, a: &[ValueId], b: &[ValueId]) -> bool {
        if a.is_empty() || b.is_empty() {
            return false;
        }
        let mut la = MemoryLocations::new();
        for &v in a {
            if let Some(e) = self.elem(g, v) {
                la.union_with(&self.locs(e));
            }
        }
        b.iter().any(|&v| {
            self.elem(g, v)
                .is_some_and(|e| la.intersects(&self.locs(e)))
        })
    }

    /// True when `a` and `b`, or anything they contain, may alias.
    pub fn may_contain_alias(&self, g: &Graph, a: ValueId, b: ValueId) -> bool {
        self.may_contain_alias_any(g, &[a], &[b])
    }

    /// True when anything reachable from the values of `a` may alias anything reachable from
    /// the values of `b` (PyTorch's `mayContainAlias` on value lists).
    pub fn may_contain_alias_any(&self, g: &Graph, a: &[ValueId], b: &[ValueId]) -> bool {
        let ea: Vec<usize> = a.iter().filter_map(|&v| self.elem(g, v)).collect();
        if ea.is_empty() {
            return false;
        }
        let eb: Vec<usize> = b.iter().filter_map(|&v| self.elem(g, v)).collect();
        if eb.is_empty() {
            return false;
        }
        let mut la = MemoryLocations::new();
        for e in ea {
            self.collect_all_contained(e, &mut la);
        }
        let mut lb = MemoryLocations::new();
        for e in eb {
            self.collect_all_contained(e, &mut lb);
        }
        la.intersects(&lb)
    }

    /// True when some node writes memory `v` may point to.
    pub fn has_writers(&self, g: &Graph, v: ValueId) -> bool {
        if g.must_be_none(v) {
            return false;
        }
        match self.element_of.get(&v) {
            Some(&e) => self.written.intersects(&self.locs(e)),
            None => false,
        }
    }

    /// True when any of `vs` has writers.
    pub fn has_writers_any(&self, g: &Graph, vs: &[ValueId]) -> bool {
        vs.iter().any(|&v| self.has_writers(g, v))
    }

    /// True when an input of `n` has writers.
    pub fn has_input_writers(&self, g: &Graph, n: NodeId) -> bool {
        g.node(n).inputs().iter().any(|&v| self.has_writers(g, v))
    }

    /// True when an output of `n` has writers.
    pub fn has_output_writers(&self, g: &Graph, n: NodeId) -> bool {
        g.node(n).outputs().iter().any(|&v| self.has_writers(g, v))
    }

    /// True when an input or output of `n` has writers.
    pub fn node_has_writers(&self, g: &Graph, n: NodeId) -> bool {
        self.has_input_writers(g, n) || self.has_output_writers(g, n)
    }

    /// The locations `n` (and the nodes of its blocks) writes.
    pub fn get_writes(&self, g: &Graph, n: NodeId) -> MemoryLocations {
        let mut out = MemoryLocations::new();
        self.collect_writes(g, n, &mut out);
        out
    }

    fn collect_writes(&self, g: &Graph, n: NodeId, out: &mut MemoryLocations) {
        if let Some(w) = self.writes.get(&n) {
            out.union_with(w);
        }
        for &b in g.node(n).blocks() {
            for m in g.block_nodes(b) {
                self.collect_writes(g, m, out);
            }
        }
    }

    /// The locations `n` (and the nodes of its blocks) reads: everything its inputs may point
    /// to or contain.
    pub fn get_reads(&self, g: &Graph, n: NodeId) -> MemoryLocations {
        let mut out = MemoryLocations::new();
        self.collect_reads(g, n, &mut out);
        out
    }

    fn collect_reads(&self, g: &Graph, n: NodeId, out: &mut MemoryLocations) {
        for &v in g.node(n).inputs() {
            if let Some(&e) = self.element_of.get(&v) {
                self.collect_all_contained(e, out);
            }
        }
        for &b in g.node(n).blocks() {
            for m in g.block_nodes(b) {
                self.collect_reads(g, m, out);
            }
        }
    }

    /// True when `n` writes memory one of `vs` may point to.
    pub fn writes_to_alias(&self, g: &Graph, n: NodeId, vs: &[ValueId]) -> bool {
        let written = self.get_writes(g, n);
        if written.is_empty() {
            return false;
        }
        vs.iter().any(|&v| {
            self.element_of
                .get(&v)
                .is_some_and(|&e| written.intersects(&self.locs(e)))
        })
    }

    /// True when `n` writes one of its own inputs.
    pub fn writes_to_own_input(&self, g: &Graph, n: NodeId) -> bool {
        let ins = g.node(n).inputs().to_vec();
        self.writes_to_alias(g, n, &ins)
    }

    /// True when `n` itself writes memory from outside the graph (a wildcard).
    pub fn writes_to_wildcard(&self, n: NodeId) -> bool {
        let Some(w) = self.writes.get(&n) else {
            return false;
        };
        self.wildcard_keys.iter().any(|(_, e)| w.test(*e))
    }

    /// True when `v` may alias memory from outside the graph.
    pub fn may_alias_wildcard(&self, g: &Graph, v: ValueId) -> bool {
        let Some(w) = self.wildcard_for(g.value(v).ty()) else {
            return false;
        };
        match self.element_of.get(&v) {
            Some(&e) => self.locs(e).intersects(&self.locs(w)),
            None => false,
        }
    }

    /// True when one of `vs` may alias a graph input or output or outside memory.
    pub fn escapes_scope(&self, g: &Graph, vs: &[ValueId]) -> bool {
        self.may_contain_alias_any(g, g.inputs(), vs)
            || self.may_contain_alias_any(g, g.outputs(), vs)
            || vs.iter().any(|&v| self.may_alias_wildcard(g, v))
    }

    /// Whether making `a` and `b` alias (replacing one by the other) is unobservable: neither
    /// is written, and they do not both escape the graph.
    pub fn safe_to_change_aliasing_relationship(
        &self,
        g: &Graph,
        a: &[ValueId],
        b: &[ValueId],
    ) -> bool {
        if self.has_writers_any(g, a) || self.has_writers_any(g, b) {
            return false;
        }
        !(self.escapes_scope(g, a) && self.escapes_scope(g, b))
    }

    // -------------------------------------------------------------------------------------
    // Keeping the database current while a pass mutates the graph

    /// `new` takes over the element of `existing` (which then has none).
    pub fn replace_with_new_value(&mut self, existing: ValueId, new: ValueId) {
        if let Some(e) = self.element_of.remove(&existing) {
            self.element_of.insert(new, e);
            self.elements[e].values = vec![new];
        }
    }

    /// `to` shares the element of `from`.
    pub fn copy_value(&mut self, from: ValueId, to: ValueId) {
        if let Some(&e) = self.element_of.get(&from) {
            self.element_of.insert(to, e);
            self.elements[e].values.push(to);
        }
    }

    /// Gives a new value of a mutable type a fresh element (memory nothing else points to).
    pub fn create_value(&mut self, g: &Graph, v: ValueId) {
        if !AliasDb::is_mutable(g, v) {
            return;
        }
        let e = self.new_element(g, Some(v));
        self.locations.push(MemoryLocations::single(e));
    }

    /// Forgets the writes of a node a pass removed.
    pub fn erase_writes_of(&mut self, n: NodeId) {
        if self.writes.remove(&n).is_some() {
            self.rebuild_written_index();
        }
    }

    // -------------------------------------------------------------------------------------
    // Mutation-safe motion

    /// Moves `n` just after `move_point` (same block) if that keeps data and memory
    /// dependencies; nodes in between that depend on `n` move with it.
    pub fn move_after_topologically_valid(
        &self,
        g: &mut Graph,
        n: NodeId,
        move_point: NodeId,
    ) -> bool {
        self.try_move(g, n, move_point, MoveSide::After, false)
    }

    /// Whether [`AliasDb::move_after_topologically_valid`] would succeed.
    pub fn could_move_after_topologically(
        &self,
        g: &mut Graph,
        n: NodeId,
        move_point: NodeId,
    ) -> bool {
        self.try_move(g, n, move_point, MoveSide::After, true)
    }

    /// Moves `n` just before `move_point` (same block) if that keeps data and memory
    /// dependencies.
    pub fn move_before_topologically_valid(
        &self,
        g: &mut Graph,
        n: NodeId,
        move_point: NodeId,
    ) -> bool {
        self.try_move(g, n, move_point, MoveSide::Before, false)
    }

    /// Whether [`AliasDb::move_before_topologically_valid`] would succeed.
    pub fn could_move_before_topologically(
        &self,
        g: &mut Graph,
        n: NodeId,
        move_point: NodeId,
    ) -> bool {
        self.try_move(g, n, move_point, MoveSide::Before, true)
    }

    fn try_move(
        &self,
        g: &mut Graph,
        to_move: NodeId,
        move_point: NodeId,
        side: MoveSide,
        dry_run: bool,
    ) -> bool {
        if g.node(to_move).owning_block() != g.node(move_point).owning_block() {
            return false;
        }
        if to_move == move_point {
            return true;
        }
        let mut ws = WorkingSet::new(self, g, to_move);
        let forward = g.is_before(to_move, move_point);
        let step = |g: &Graph, n: NodeId| {
            if forward {
                g.next_node(n)
            } else {
                g.prev_node(n)
            }
        };
        let mut cur = step(g, to_move);
        let on_move_side =
            (side == MoveSide::Before && forward) || (side == MoveSide::After && !forward);
        if on_move_side && cur == move_point {
            return true;
        }
        if node_has_side_effects(g, to_move)
            || (!on_move_side && node_has_side_effects(g, move_point))
        {
            return false;
        }
        while cur != move_point {
            if node_has_side_effects(g, cur) {
                return false;
            }
            if ws.depends_on(self, g, cur) {
                ws.add(self, g, cur);
            }
            cur = step(g, cur);
        }
        let split = on_move_side;
        if split {
            ws.erase_mover();
        }
        if ws.depends_on(self, g, move_point) {
            return false;
        }
        if dry_run {
            return true;
        }
        let place = |g: &mut Graph, n: NodeId, at: NodeId, s: MoveSide| match s {
            MoveSide::Before => g.move_before(n, at),
            MoveSide::After => g.move_after(n, at),
        };
        if split {
            place(g, to_move, move_point, side);
            let reversed = match side {
                MoveSide::Before => MoveSide::After,
                MoveSide::After => MoveSide::Before,
            };
            let mut at = move_point;
            for &n in &ws.nodes {
                place(g, n, at, reversed);
                at = n;
            }
        } else {
            place(g, to_move, move_point, side);
            let mut at = to_move;
            for &n in &ws.nodes {
                place(g, n, at, side);
                at = n;
            }
        }
        true
    }

    // -------------------------------------------------------------------------------------
    // Debugging

    fn element_name(&self, g: &Graph, e: usize) -> String {
        let el = &self.elements[e];
        if el.values.is_empty() {
            return match self.wildcard_keys.iter().find(|(_, w)| *w == e) {
                Some((k, _)) => format!("WILDCARD for type {k}"),
                None => "WILDCARD".into(),
            };
        }
        let names: Vec<String> = el
            .values
            .iter()
            .map(|&v| format!("%{}", g.display_name(v)))
            .collect();
        if names.len() == 1 {
            names[0].clone()
        } else {
            format!("({})", names.join(", "))
        }
    }

    /// A text dump: the points-to and contains edges and each node's writes.
    pub fn dump(&self, g: &Graph) -> String {
        let mut s = String::from("\n===1. GRAPH===\n");
        s.push_str(&g.to_string());
        s.push_str("\n===2. ALIAS DB===\n");
        for (e, el) in self.elements.iter().enumerate() {
            if !el.points_to.is_empty() {
                let to: Vec<String> = el
                    .points_to
                    .iter()
                    .map(|&p| self.element_name(g, p))
                    .collect();
                let _ = writeln!(
                    s,
                    "{} points to: {}",
                    self.element_name(g, e),
                    to.join(", ")
                );
            }
            if !el.contained.is_empty() {
                let c: Vec<String> = el
                    .contained
                    .iter()
                    .map(|&p| self.element_name(g, p))
                    .collect();
                let _ = writeln!(s, "{} contains: {}", self.element_name(g, e), c.join(", "));
            }
        }
        s.push_str("\n===3. Writes===\n");
        let mut ws: Vec<_> = self.writes.iter().collect();
        ws.sort_by_key(|(n, _)| n.0);
        for (n, locs) in ws {
            let names: Vec<String> = locs.iter().map(|e| self.element_name(g, e)).collect();
            let _ = writeln!(s, "{}  {}", g.node(*n).kind(), names.join(", "));
        }
        s
    }

    /// The DAG in Graphviz `dot` form (points-to edges solid, contains edges dashed).
    pub fn to_graphviz(&self, g: &Graph) -> String {
        let mut s = String::from(
            "digraph alias_db {\n  rankdir=LR\n  node [shape=rect, color=gray];\n  edge [color=black];\n",
        );
        let q = |x: String| format!("\"{}\"", x.replace('"', "\\\""));
        for (e, el) in self.elements.iter().enumerate() {
            for &p in &el.points_to {
                let _ = writeln!(
                    s,
                    "  {} -> {}",
                    q(self.element_name(g, e)),
                    q(self.element_name(g, p))
                );
            }
            for &c in &el.contained {
                let _ = writeln!(
                    s,
                    "  {} -> {} [style=dashed, color=blue]",
                    q(self.element_name(g, e)),
                    q(self.element_name(g, c))
                );
            }
        }
        s.push_str("}\n");
        s
    }
}

/// The nodes that must move together with a node being moved (PyTorch's `WorkingSet`).
struct WorkingSet {
    mover: Option<NodeId>,
    mover_users: HashSet<NodeId>,
    mover_writes: MemoryLocations,
    mover_reads: MemoryLocations,
    nodes: Vec<NodeId>,
    node_set: HashSet<NodeId>,
    users: HashSet<NodeId>,
    writes: MemoryLocations,
    reads: MemoryLocations,
}

impl WorkingSet {
    fn new(db: &AliasDb, g: &Graph, mover: NodeId) -> WorkingSet {
        WorkingSet {
            mover: Some(mover),
            mover_users: users_same_block(g, mover),
            mover_writes: db.get_writes(g, mover),
            mover_reads: db.get_reads(g, mover),
            nodes: Vec::new(),
            node_set: HashSet::new(),
            users: HashSet::new(),
            writes: MemoryLocations::new(),
            reads: MemoryLocations::new(),
        }
    }

    fn add(&mut self, db: &AliasDb, g: &Graph, n: NodeId) {
        self.nodes.push(n);
        self.node_set.insert(n);
        self.users.extend(users_same_block(g, n));
        self.writes.union_with(&db.get_writes(g, n));
        self.reads.union_with(&db.get_reads(g, n));
    }

    fn erase_mover(&mut self) {
        self.mover = None;
        self.mover_writes.clear();
        self.mover_reads.clear();
        self.mover_users.clear();
    }

    fn depends_on(&self, db: &AliasDb, g: &Graph, n: NodeId) -> bool {
        if self.mover.is_none() && self.nodes.is_empty() {
            return false;
        }
        self.has_data_dependency(g, n) || self.has_mutability_dependency(db, g, n)
    }

    fn has_data_dependency(&self, g: &Graph, n: NodeId) -> bool {
        let pivot = match self.mover {
            Some(m) => m,
            None => self.nodes[0],
        };
        if g.is_before(pivot, n) {
            self.mover.is_some() && self.mover_users.contains(&n) || self.users.contains(&n)
        } else {
            let users = users_same_block(g, n);
            self.mover.is_some_and(|m| users.contains(&m))
                || users.iter().any(|u| self.node_set.contains(u))
        }
    }

    fn has_mutability_dependency(&self, db: &AliasDb, g: &Graph, n: NodeId) -> bool {
        let n_writes = db.get_writes(g, n);
        if self.reads.intersects(&n_writes)
            || (self.mover.is_some() && self.mover_reads.intersects(&n_writes))
        {
            return true;
        }
        let n_reads = db.get_reads(g, n);
        self.writes.intersects(&n_reads)
            || (self.mover.is_some() && self.mover_writes.intersects(&n_reads))
    }
}

/// The users of `n`'s outputs, each lifted to the node of `n`'s block that contains it.
fn users_same_block(g: &Graph, n: NodeId) -> HashSet<NodeId> {
    let block = g.node(n).owning_block();
    let mut out = HashSet::new();
    for &o in g.node(n).outputs() {
        for u in g.value(o).uses() {
            let mut cur = u.user;
            loop {
                let cb = g.node(cur).owning_block();
                if cb == block {
                    out.insert(cur);
                    break;
                }
                match cb.and_then(|b| g.block_owner(b)) {
                    Some(owner) => cur = owner,
                    None => break,
                }
            }
        }
    }
    out
}

/// The annotation that counts for an argument: a list's element annotation when the list
/// itself has none (`Tensor(a)[]` binds `a`).
/// The inputs `analyze_from_schema` binds to the schema's alias sets: for each set, the first
/// mutable input whose argument is annotated with it, with that annotation.
fn bound_alias_inputs<'s>(
    g: &Graph,
    ins: &[ValueId],
    schema: &'s ts_core::FunctionSchema,
) -> Vec<(&'s str, ValueId, &'s AliasInfo)> {
    let mut bound: Vec<(&str, ValueId, &AliasInfo)> = Vec::new();
    for (i, arg) in schema.arguments.iter().enumerate() {
        let Some(formal) = arg.alias_info.as_ref().map(element_annotation) else {
            continue;
        };
        let Some(&actual) = ins.get(i) else {
            continue;
        };
        if !AliasDb::is_mutable(g, actual) {
            continue;
        }
        let Some(set) = formal.before_sets.first() else {
            continue;
        };
        if bound.iter().all(|(s, _, _)| *s != set.as_str()) {
            bound.push((set, actual, formal));
        }
    }
    bound
}

fn element_annotation(a: &AliasInfo) -> &AliasInfo {
    if a.before_sets.is_empty() && a.contained.len() == 1 {
        &a.contained[0]
    } else {
        a
    }
}

/// True for values the analysis makes wildcards whatever the rest of the graph holds: the
/// graph's own inputs and `prim::GetAttr` outputs (the database is not built for a frozen
/// module here), of types that can alias, and profiling records and casts of them (which
/// point to their input).
fn is_certain_wildcard(g: &Graph, mut v: ValueId) -> bool {
    loop {
        if !AliasDb::is_mutable(g, v) {
            return false;
        }
        if g.inputs().contains(&v) {
            return true;
        }
        let node = g.node(g.value(v).node());
        let k = node.kind();
        if k == prim::GetAttr {
            return true;
        }
        match node.inputs().first() {
            Some(&i) if k == prim::profile || k == prim::unchecked_cast => v = i,
            _ => return false,
        }
    }
}

/// A list used once, by an operator that neither returns it nor keeps its elements: its
/// elements can be tracked precisely instead of going to the wildcard set.
fn functional_non_escaping_list_use(g: &Graph, user: NodeId, container: ValueId) -> bool {
    if !matches!(&**g.value(container).ty(), Type::List(_)) {
        return false;
    }
    // Compared by name: interning each candidate per call showed in start-up profiles.
    let k = g.node(user).kind();
    k.is_ns("aten")
        && [
            "cat",
            "broadcast_tensors",
            "stack",
            "vstack",
            "hstack",
            "dstack",
        ]
        .contains(&k.name())
}

// -----------------------------------------------------------------------------------------
// Alias types

/// The mutable types values of `ty` may alias through, with tensor refinements removed
/// (PyTorch's `mapTypeToAliasTypeSet`); `None` for immutable types.
pub fn alias_types(ty: &TypeRef) -> Option<Vec<TypeRef>> {
    match &**ty {
        Type::List(_) | Type::Dict(..) | Type::Class(_) | Type::Tensor(_) => {
            Some(vec![unshaped(ty)])
        }
        Type::Union(ms) => {
            let mut out: Vec<TypeRef> = Vec::new();
            for m in ms {
                if let Some(inner) = alias_types(m) {
                    for t in inner {
                        if !out.contains(&t) {
                            out.push(t);
                        }
                    }
                }
            }
            (!out.is_empty()).then_some(out)
        }
        Type::Optional(e) => alias_types(e),
        Type::Any => Some(vec![ty.clone()]),
        Type::Future(e) => {
            let inner = alias_types(e)?;
            Some(vec![Type::future(single_type(inner))])
        }
        Type::Tuple(t) => {
            let mut elems = Vec::new();
            for e in &t.elements {
                if let Some(inner) = alias_types(e) {
                    elems.extend(inner);
                }
            }
            (!elems.is_empty()).then(|| vec![Type::tuple(elems)])
        }
        _ => None,
    }
}

fn single_type(mut ts: Vec<TypeRef>) -> TypeRef {
    if ts.len() == 1 {
        ts.pop().unwrap_or_else(Type::tensor)
    } else {
        Type::union(ts)
    }
}

/// The alias key of every tensor type (`alias_key(&alias_types(Tensor))`).
const TENSOR_KEY: &str = "Tensor";

/// The alias key of values of type `ty`, if it is an alias type (tensors without the
/// general path's allocations: alias analysis keys every value it meets).
fn type_key(ty: &TypeRef) -> Option<Cow<'static, str>> {
    if matches!(&**ty, Type::Tensor(_)) {
        return Some(Cow::Borrowed(TENSOR_KEY));
    }
    alias_types(ty).map(|t| Cow::Owned(alias_key(&t)))
}

fn alias_key(types: &[TypeRef]) -> String {
    let mut keys: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    keys.sort();
    keys.join("|")
}

/// `ty` with every tensor type replaced by plain `Tensor`.
pub fn unshaped(ty: &TypeRef) -> TypeRef {
    match &**ty {
        Type::Tensor(_) => Type::tensor(),
        Type::List(e) => Type::list(unshaped(e)),
        Type::Optional(e) => Type::optional(unshaped(e)),
        Type::Future(e) => Type::future(unshaped(e)),
        Type::Dict(k, v) => Type::dict(unshaped(k), unshaped(v)),
        Type::Tuple(t) if t.names.is_none() => {
            Type::tuple(t.elements.iter().map(unshaped).collect())
        }
        Type::Union(ms) => Type::union(ms.iter().map(unshaped).collect()),
        _ => ty.clone(),
    }
}

/// The types held by values of an alias type (list elements, dict keys and values, tuple
/// elements, object attributes, a future's value).
fn contained_types(ty: &TypeRef) -> Vec<TypeRef> {
    match &**ty {
        Type::Class(c) => c.attributes().into_iter().map(|a| a.ty).collect(),
        _ => ty.contained_types(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_fast_path_keys_like_the_general_path() {
        let shaped = Type::tensor_of(ts_tensor::DType::Float32);
        for ty in [Type::tensor(), shaped] {
            let general = alias_types(&ty).map(|t| alias_key(&t));
            assert_eq!(type_key(&ty).as_deref(), general.as_deref());
            assert_eq!(general.as_deref(), Some(TENSOR_KEY));
        }
        assert_eq!(type_key(&Type::int()), None);
    }

    /// Every node the database records a write for is one `node_may_write` admits.
    #[test]
    fn node_may_write_covers_every_recorded_write() {
        let g = ts_ir::parse_ir(
            "graph(%x : Tensor, %l : int[], %rm : Tensor, %t : bool):\n  %one : int = prim::Constant[value=1]()\n  %f : bool = prim::Constant[value=0]()\n  %e : float = prim::Constant[value=0.1]()\n  %a : Tensor = aten::add(%x, %x, %one)\n  %c : int[] = aten::append(%l, %one)\n  %d : Tensor = aten::add_(%x, %x, %one)\n  %b1 : Tensor = aten::batch_norm(%x, %rm, %rm, %rm, %rm, %t, %e, %e, %t)\n  %b2 : Tensor = aten::batch_norm(%x, %rm, %rm, %rm, %rm, %f, %e, %e, %t)\n  %r : Tensor = prim::If(%t)\n    block0():\n      %z : Tensor = aten::mul_(%a, %x)\n      -> (%z)\n    block1():\n      -> (%a)\n  %w : Tensor = aten::relu(%r)\n  return (%w)\n",
        )
        .unwrap();
        let db = AliasDb::new(&g);
        let mut writers = 0;
        fn walk(g: &Graph, b: BlockId, f: &mut dyn FnMut(NodeId)) {
            for n in g.block_nodes(b) {
                for &sb in g.node(n).blocks() {
                    walk(g, sb, f);
                }
                f(n);
            }
        }
        walk(&g, g.block(), &mut |n| {
            let k = g.node(n).kind();
            if k == prim::If {
                return;
            }
            let recorded = !db.get_writes(&g, n).is_empty();
            if recorded {
                writers += 1;
                assert!(AliasDb::node_may_write(&g, n), "{k} writes");
            }
            // The batch norm whose `training` is the constant False updates no statistics.
            let eval_batch_norm = k == aten::batch_norm && g.node(n).input(5) != g.inputs()[3];
            let pure = [aten::add, aten::relu, prim::Constant].contains(&k) || eval_batch_norm;
            assert_eq!(AliasDb::node_may_write(&g, n), !pure, "{k}");
        });
        // append, add_, the training batch_norm, mul_ in the branch.
        assert_eq!(writers, 4);
        assert!(AliasDb::block_may_write(&g, g.block()));
    }
}
