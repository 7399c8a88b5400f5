//! The operator registry: schemas with the operations that run them.
//!
//! Registration is open: anything may register a schema string with an [`Operation`] (a
//! function on the interpreter's stack) or, for node-dependent primitives, a function from the
//! node to an operation. Operators are found by kind (all overloads of a `Symbol`), by
//! `name.overload`, or by matching a graph node's input types against the schemas.
//!
//! Most builtins are *defined* rather than registered: [`Registry::define`] records PyTorch's
//! schema line and a builder, and the schema is parsed and the operation built the first time
//! anything looks up that operator's name. A process that loads one model touches a few
//! hundred of the ~4000 builtins, so start-up no longer parses every schema (that was most of
//! the registry's 20 ms and 10 MiB). Lookups see the same operators, in the same order, as if
//! everything had been registered eagerly.

// foldhash: every node match and lookup hashes a symbol or name (SipHash showed in start-up).
use foldhash::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, ReentrantMutex, RwLock};
use ts_core::{FunctionSchema, IValue, Symbol};
use ts_ir::{Graph, NodeId};
use ts_tensor::Error;

use crate::fast::ScalarOp;
use crate::matching::node_matches_schema;

/// The interpreter's value stack.
pub type Stack = Vec<IValue>;

/// An operation: pops its arguments from the stack and pushes its results.
pub type Operation = Arc<dyn Fn(&mut Stack) -> Result<(), Error> + Send + Sync>;

/// Builds an operation for a particular node (for primitives whose behaviour depends on the
/// node: the number of outputs, attributes, types).
pub type NodeOperation = Arc<dyn Fn(&Graph, NodeId) -> Result<Operation, Error> + Send + Sync>;

/// How an operator runs.
#[derive(Clone)]
pub enum OperatorKind {
    Op(Operation),
    NodeOp(NodeOperation),
}

/// A registered operator.
#[derive(Clone)]
pub struct Operator {
    pub schema: Arc<FunctionSchema>,
    pub symbol: Symbol,
    pub kind: OperatorKind,
}

impl Operator {
    /// The operation for `node` (node-dependent operators are specialised to it).
    pub fn operation_for(&self, g: &Graph, node: NodeId) -> Result<Operation, Error> {
        match &self.kind {
            OperatorKind::Op(op) => Ok(op.clone()),
            OperatorKind::NodeOp(f) => f(g, node),
        }
    }

    /// `name.overload` of the schema.
    pub fn full_name(&self) -> String {
        if self.schema.overload_name.is_empty() {
            self.schema.name.clone()
        } else {
            format!("{}.{}", self.schema.name, self.schema.overload_name)
        }
    }
}

impl std::fmt::Debug for Operator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Operator({})", self.schema)
    }
}

/// Builds a lazily defined operator from its parsed schema; `None` leaves the name undefined
/// (the definition found, once it could look, that it does not apply: no functional overload
/// to derive an `out=` form from, an alias target of another arity, ...).
pub type Build = Box<dyn FnOnce(&Registry, &FunctionSchema) -> Option<OperatorKind> + Send + Sync>;

/// A definition not yet built.
struct Deferred {
    line: &'static str,
    build: Build,
}

/// Definitions waiting for the first lookup of their name.
#[derive(Default)]
struct Pending {
    by_symbol: HashMap<Symbol, Vec<Deferred>>,
    full_names: HashSet<&'static str>,
    /// Names defined only by fallbacks ([`Registry::define_fallback`]).
    fallbacks: HashSet<&'static str>,
}

/// All registered operators, by kind.
#[derive(Default)]
pub struct Registry {
    by_symbol: RwLock<HashMap<Symbol, Vec<Arc<Operator>>>>,
    by_full_name: RwLock<HashMap<String, Arc<Operator>>>,
    /// Overloads the interpreter may run inline (see [`crate::fast`]), by full name.
    scalar_ops: RwLock<HashMap<String, ScalarOp>>,
    /// PyTorch schemas without a kernel that a graph used, by full name: operators whose
    /// operation raises when run (see [`Registry::resolve_node`]); not listed as registered.
    unimplemented: RwLock<HashMap<String, Arc<Operator>>>,
    pending: Mutex<Pending>,
    /// False once nothing is pending, so lookups skip materialisation entirely.
    any_pending: AtomicBool,
    /// Serialises building definitions, so no reader sees a name half built; reentrant
    /// because a builder looks up other operators (an `out=` form finds its functional one).
    building: ReentrantMutex<()>,
    /// Definitions whose schema line did not parse (see [`Registry::definition_errors`]).
    errors: Mutex<Vec<String>>,
}

/// `aten::add.Tensor` of a schema line `aten::add.Tensor(Tensor self, ...) -> Tensor`.
fn full_name_of(line: &str) -> &str {
    &line[..line.find('(').unwrap_or(line.len())]
}

/// The operator name (`aten::add`) of a full name (`aten::add.Tensor`): what precedes the
/// first `.` after the namespace.
pub(crate) fn operator_name_of(full: &str) -> &str {
    let name_start = full.find("::").map(|p| p + 2).unwrap_or(0);
    match full[name_start..].find('.') {
        Some(d) => &full[..name_start + d],
        None => full,
    }
}

/// Registration failures (a malformed schema is a programming error surfaced at startup).
fn bad_schema(schema: &str, e: impl std::fmt::Display) -> Error {
    Error::runtime(format!("invalid operator schema '{schema}': {e}"))
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Registers `op` now, after building whatever was defined earlier under its name, so
    /// that overloads keep their registration order.
    fn insert(&self, op: Operator) -> Arc<Operator> {
        self.materialize(op.symbol);
        // A new registration replaces the operation, so any inline version no longer applies.
        self.scalar_ops.write().remove(&op.full_name());
        self.insert_built(op)
    }

    fn insert_built(&self, op: Operator) -> Arc<Operator> {
        let op = Arc::new(op);
        let full = op.full_name();
        let mut by_name = self.by_full_name.write();
        let mut by_sym = self.by_symbol.write();
        let list = by_sym.entry(op.symbol).or_default();
        if let Some(old) = by_name.get(&full) {
            list.retain(|o| !Arc::ptr_eq(o, old));
        }
        list.push(op.clone());
        by_name.insert(full, op.clone());
        op
    }

    /// Registers `schema` (a full schema string) with an operation.
    pub fn register(&self, schema: &str, op: Operation) -> Result<Arc<Operator>, Error> {
        let s = FunctionSchema::parse(schema).map_err(|e| bad_schema(schema, e))?;
        Ok(self.register_schema(s, op))
    }

    /// Registers an already parsed schema with an operation (registration paths that parsed
    /// the schema to inspect it do not parse it twice).
    pub fn register_schema(&self, s: FunctionSchema, op: Operation) -> Arc<Operator> {
        // Autograd records here, where every operator is registered (see `autograd::record`).
        let op = crate::autograd::record::wrap(&s, op);
        self.insert(Operator {
            symbol: Symbol::new(&s.name),
            schema: Arc::new(s),
            kind: OperatorKind::Op(op),
        })
    }

    /// Registers a node-dependent operator.
    pub fn register_node_op(&self, schema: &str, f: NodeOperation) -> Result<Arc<Operator>, Error> {
        let s = FunctionSchema::parse(schema).map_err(|e| bad_schema(schema, e))?;
        Ok(self.insert(Operator {
            symbol: Symbol::new(&s.name),
            schema: Arc::new(s),
            kind: OperatorKind::NodeOp(f),
        }))
    }

    /// Registers PyTorch's own schema for `name.overload` (looked up in the embedded table),
    /// parsed when the name is first looked up.
    pub fn register_pt(&self, full_name: &str, op: Operation) -> Result<(), Error> {
        let line = crate::schema_table::schema_line(full_name)
            .ok_or_else(|| Error::runtime(format!("no PyTorch schema named '{full_name}'")))?;
        self.define_op(line, op);
        Ok(())
    }

    /// Defines PyTorch schema line `line` with an operation that does not depend on the
    /// parsed schema (parsed when the name is first looked up).
    pub fn define_op(&self, line: &'static str, op: Operation) {
        self.define(line, Box::new(move |_, _| Some(OperatorKind::Op(op))));
    }

    /// Defines the operator of PyTorch schema line `line`: `build` makes its operation from
    /// the parsed schema when the operator's name is first looked up. Like registering, a
    /// definition replaces an earlier one of the same `name.overload`.
    pub fn define(&self, line: &'static str, build: Build) {
        self.define_as(line, build, false);
    }

    /// Defines `line` as a fallback: like [`Registry::define`], but [`Registry::is_defined`]
    /// does not count it, so registration code that binds a name only when nothing else does
    /// still binds it (derived `out=`/in-place forms, which often find nothing to derive from).
    pub fn define_fallback(&self, line: &'static str, build: Build) {
        self.define_as(line, build, true);
    }

    fn define_as(&self, line: &'static str, build: Build, fallback: bool) {
        let full = full_name_of(line);
        self.scalar_ops.write().remove(full);
        let symbol = Symbol::new(operator_name_of(full));
        let mut pending = self.pending.lock();
        pending
            .by_symbol
            .entry(symbol)
            .or_default()
            .push(Deferred { line, build });
        pending.full_names.insert(full);
        if fallback {
            pending.fallbacks.insert(full);
        } else {
            pending.fallbacks.remove(full);
        }
        self.any_pending.store(true, Ordering::Release);
    }

    /// True when `name.overload` is registered or defined, without building anything (how
    /// registration code asks "is this bound already?").
    pub fn is_defined(&self, full_name: &str) -> bool {
        self.by_full_name.read().contains_key(full_name)
            || (self.any_pending.load(Ordering::Acquire) && {
                let pending = self.pending.lock();
                pending.full_names.contains(full_name) && !pending.fallbacks.contains(full_name)
            })
    }

    /// True when `name.overload` is registered or has any pending definition, fallbacks
    /// included (looking it up may still find nothing, when its builders decline).
    pub fn might_define(&self, full_name: &str) -> bool {
        self.by_full_name.read().contains_key(full_name)
            || (self.any_pending.load(Ordering::Acquire)
                && self.pending.lock().full_names.contains(full_name))
    }

    /// Builds every definition of operator `symbol` still pending, in definition order.
    fn materialize(&self, symbol: Symbol) {
        if !self.any_pending.load(Ordering::Acquire) {
            return;
        }
        let _building = self.building.lock();
        let Some(list) = self.pending.lock().by_symbol.remove(&symbol) else {
            return;
        };
        let built: Vec<&'static str> = list.iter().map(|d| full_name_of(d.line)).collect();
        for Deferred { line, build } in list {
            match FunctionSchema::parse(line) {
                Ok(s) => {
                    if let Some(kind) = build(self, &s) {
                        self.insert_built(Operator {
                            symbol,
                            kind: match kind {
                                // Autograd records here, as for eager registration.
                                OperatorKind::Op(f) => {
                                    OperatorKind::Op(crate::autograd::record::wrap(&s, f))
                                }
                                node_op => node_op,
                            },
                            schema: Arc::new(s),
                        });
                    }
                }
                Err(e) => self
                    .errors
                    .lock()
                    .push(format!("{}: {e}", full_name_of(line))),
            }
        }
        let mut pending = self.pending.lock();
        // These names are built (or dropped) now.
        for full in built {
            pending.full_names.remove(full);
            pending.fallbacks.remove(full);
        }
        if pending.by_symbol.is_empty() {
            self.any_pending.store(false, Ordering::Release);
        }
    }

    /// Builds every pending definition (for listings of all operators).
    fn materialize_all(&self) {
        loop {
            let next = self.pending.lock().by_symbol.keys().next().copied();
            match next {
                Some(symbol) => self.materialize(symbol),
                None => return,
            }
        }
    }

    /// Definitions whose PyTorch schema line failed to parse, after building every one (a test
    /// asserts there are none).
    pub fn definition_errors(&self) -> Vec<String> {
        self.materialize_all();
        self.errors.lock().clone()
    }

    /// Records that the operator registered as `full_name` has the inline version `fast`.
    pub fn set_scalar_op(&self, full_name: &str, fast: ScalarOp) {
        if self.is_defined(full_name) {
            self.scalar_ops.write().insert(full_name.to_string(), fast);
        }
    }

    /// The inline version of the operator registered as `full_name`, if it has one.
    pub fn scalar_op(&self, full_name: &str) -> Option<ScalarOp> {
        self.scalar_ops.read().get(full_name).copied()
    }

    /// All overloads registered for a kind.
    pub fn lookup(&self, sym: Symbol) -> Vec<Arc<Operator>> {
        self.materialize(sym);
        self.by_symbol.read().get(&sym).cloned().unwrap_or_default()
    }

    /// The operator registered as `name.overload`.
    pub fn find(&self, full_name: &str) -> Option<Arc<Operator>> {
        if let Some(op) = self.by_full_name.read().get(full_name) {
            return Some(op.clone());
        }
        if !self.might_define(full_name) {
            return None;
        }
        self.materialize(Symbol::new(operator_name_of(full_name)));
        self.by_full_name.read().get(full_name).cloned()
    }

    /// The overload whose schema the node's input and output types match.
    pub fn match_node(&self, g: &Graph, n: NodeId) -> Option<Arc<Operator>> {
        let kind = g.node(n).kind();
        self.materialize(kind);
        let by = self.by_symbol.read();
        let cands = by.get(&kind)?;
        cands
            .iter()
            .find(|op| node_matches_schema(g, n, &op.schema))
            .cloned()
    }

    /// The operator that runs node `n`: the registered overload that matches it, or else the
    /// PyTorch schema (of `schemas.txt`) that matches it, bound to an operation that raises
    /// "operator ns::name.overload has no implementation in tsrs" when run.
    ///
    /// This is how PyTorch treats code that never runs: a graph compiles against schemas, and
    /// only running a node needs a kernel (StochasticDepth's `bernoulli_` on the training
    /// branch must not stop an inference model from loading). The schema still drives alias
    /// and side-effect analysis.
    pub fn resolve_node(&self, g: &Graph, n: NodeId) -> Option<Arc<Operator>> {
        if let Some(op) = self.match_node(g, n) {
            return Some(op);
        }
        let kind = g.node(n).kind();
        for line in crate::schema_table::overload_lines(&kind.to_string()) {
            let Ok(schema) = FunctionSchema::parse(line) else {
                continue;
            };
            if !node_matches_schema(g, n, &schema) {
                continue;
            }
            let full = if schema.overload_name.is_empty() {
                schema.name.clone()
            } else {
                format!("{}.{}", schema.name, schema.overload_name)
            };
            if let Some(op) = self.unimplemented.read().get(&full) {
                return Some(op.clone());
            }
            let reason = crate::coverage::missing_reason(&full);
            let message = if reason == crate::coverage::NOT_YET_IMPLEMENTED {
                format!("operator {full} has no implementation in tsrs")
            } else {
                format!("operator {full} has no implementation in tsrs ({reason})")
            };
            let op = Arc::new(Operator {
                symbol: kind,
                schema: Arc::new(schema),
                kind: OperatorKind::Op(Arc::new(move |_: &mut Stack| {
                    Err(Error::runtime(message.clone()))
                })),
            });
            self.unimplemented.write().insert(full, op.clone());
            return Some(op);
        }
        None
    }

    /// True when `op` is a registered operator (not a schema without a kernel that
    /// [`Registry::resolve_node`] stood in for).
    pub fn is_implemented(&self, op: &Operator) -> bool {
        self.materialize(op.symbol);
        self.by_full_name
            .read()
            .get(&op.full_name())
            .is_some_and(|o| std::ptr::eq(&**o, op))
    }

    /// Every registered schema, sorted (the coverage table of `tsrs ops`).
    pub fn schemas(&self) -> Vec<String> {
        self.materialize_all();
        let mut v: Vec<String> = self
            .by_full_name
            .read()
            .values()
            .map(|o| o.schema.to_string())
            .collect();
        v.sort();
        v
    }

    /// Number of registered operators.
    pub fn len(&self) -> usize {
        self.materialize_all();
        self.by_full_name.read().len()
    }

    /// True when nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The global registry with every builtin operator.
pub fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(|| {
        let r = Registry::new();
        crate::register_builtins(&r);
        r
    })
}

/// Wraps a closure as an [`Operation`].
pub fn op(f: impl Fn(&mut Stack) -> Result<(), Error> + Send + Sync + 'static) -> Operation {
    Arc::new(f)
}
