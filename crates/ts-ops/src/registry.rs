//! The operator registry: schemas with the operations that run them.
//!
//! Registration is open: anything may register a schema string with an [`Operation`] (a
//! function on the interpreter's stack) or, for node-dependent primitives, a function from the
//! node to an operation. Operators are found by kind (all overloads of a `Symbol`), by
//! `name.overload`, or by matching a graph node's input types against the schemas.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;
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

    fn insert(&self, op: Operator) -> Arc<Operator> {
        let op = Arc::new(op);
        let full = op.full_name();
        // A new registration replaces the operation, so any inline version no longer applies.
        self.scalar_ops.write().remove(&full);
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

    /// Registers PyTorch's own schema for `name.overload` (looked up in the embedded table).
    pub fn register_pt(&self, full_name: &str, op: Operation) -> Result<Arc<Operator>, Error> {
        let line = crate::schema_table::schema_line(full_name)
            .ok_or_else(|| Error::runtime(format!("no PyTorch schema named '{full_name}'")))?;
        self.register(line, op)
    }

    /// Records that the operator registered as `full_name` has the inline version `fast`.
    pub fn set_scalar_op(&self, full_name: &str, fast: ScalarOp) {
        if self.by_full_name.read().contains_key(full_name) {
            self.scalar_ops.write().insert(full_name.to_string(), fast);
        }
    }

    /// The inline version of the operator registered as `full_name`, if it has one.
    pub fn scalar_op(&self, full_name: &str) -> Option<ScalarOp> {
        self.scalar_ops.read().get(full_name).copied()
    }

    /// All overloads registered for a kind.
    pub fn lookup(&self, sym: Symbol) -> Vec<Arc<Operator>> {
        self.by_symbol.read().get(&sym).cloned().unwrap_or_default()
    }

    /// The operator registered as `name.overload`.
    pub fn find(&self, full_name: &str) -> Option<Arc<Operator>> {
        self.by_full_name.read().get(full_name).cloned()
    }

    /// The overload whose schema the node's input and output types match.
    pub fn match_node(&self, g: &Graph, n: NodeId) -> Option<Arc<Operator>> {
        let kind = g.node(n).kind();
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
        self.by_full_name
            .read()
            .get(&op.full_name())
            .is_some_and(|o| std::ptr::eq(&**o, op))
    }

    /// Every registered schema, sorted (the coverage table of `tsrs ops`).
    pub fn schemas(&self) -> Vec<String> {
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
