//! Which nodes must stay even when their outputs are unused, and which may not be reordered.

use ts_core::symbol::cuda;
use ts_core::{aten, prim, Symbol};
use ts_ir::{Graph, NodeId};

/// True when running `n` itself can be observed other than through its outputs or memory
/// writes (PyTorch's `Node::hasSideEffects`): printing, raising, attribute writes, calls,
/// `with` hooks, waits, warnings, seeding; operators of namespaces other than `aten`/`prim`
/// are opaque. Nested blocks are not looked into.
pub fn node_has_side_effects(g: &Graph, n: NodeId) -> bool {
    // `prim::fork` is not listed: as in PyTorch, a fork whose future is unused is dead code.
    let node = g.node(n);
    let k = node.kind();
    if [
        prim::Print,
        prim::RaiseException,
        prim::SetAttr,
        prim::CallFunction,
        prim::CallMethod,
        prim::Enter,
        prim::Exit,
        prim::BailoutTemplate,
        prim::BailOut,
        prim::rpc_async,
        prim::IgnoredPythonOp,
        prim::PythonOp,
        prim::AddStatValue,
        prim::TimePoint,
        aten::warn,
        aten::wait,
        cuda::_set_device,
        cuda::set_stream,
        cuda::_current_device,
        // Frontend-internal nodes that only exist before SSA conversion.
        prim::Store,
        prim::ReturnStmt,
        prim::BreakStmt,
        prim::ContinueStmt,
        prim::LoopContinuation,
    ]
    .contains(&k)
        || extra_side_effect_ops().contains(&k)
    {
        return true;
    }
    if k.is_ns("aten") || k.is_ns("prim") {
        // Without a registered overload that matches, an operator of PyTorch's that writes an
        // argument stays (so an operator we lack fails loudly when run instead of silently
        // vanishing). Matching is asked only when that rule could apply: most operators
        // write nothing in any overload, and matching every node was a cost of DCE.
        let may_write =
            schema_table_writes(k) || (k.name().ends_with('_') && !k.name().starts_with("__"));
        return may_write && ts_ops::registry().match_node(g, n).is_none();
    }
    // Operators of other namespaces are treated as opaque.
    true
}

/// `aten` operators with side effects that have no predefined symbol, interned once (this
/// runs for every node of every dead-code pass; interning per call showed in start-up).
fn extra_side_effect_ops() -> &'static [Symbol; 7] {
    static OPS: std::sync::OnceLock<[Symbol; 7]> = std::sync::OnceLock::new();
    OPS.get_or_init(|| {
        [
            Symbol::aten("manual_seed"),
            Symbol::aten("save"),
            Symbol::aten("set_grad_enabled"),
            // Autograd: `backward` writes `.grad` and frees the graph, `grad` runs the
            // engine, and grad mode is state (PyTorch registers them with conservative alias
            // analysis).
            Symbol::aten("backward"),
            Symbol::aten("_backward"),
            Symbol::aten("grad"),
            Symbol::aten("is_grad_enabled"),
        ]
    })
}

/// True when some overload of `k` in PyTorch's schema table writes an argument. The table is
/// fixed, so each symbol's answer is remembered (DCE asks for every unmatched `prim` node).
fn schema_table_writes(k: Symbol) -> bool {
    static KNOWN: std::sync::OnceLock<parking_lot::RwLock<foldhash::HashMap<Symbol, bool>>> =
        std::sync::OnceLock::new();
    let known = KNOWN.get_or_init(Default::default);
    if let Some(&w) = known.read().get(&k) {
        return w;
    }
    let w = ts_ops::schema_table::overload_lines(&k.to_string())
        .iter()
        .any(|l| l.contains("!)") || l.contains("! ->"));
    known.write().insert(k, w);
    w
}

/// True when `n` must stay without alias information (PyTorch's block-level dead code rule):
/// it has side effects, a node of its blocks does, or its schema writes an argument
/// (`Tensor(a!)`, `t[](a!)`).
pub fn has_side_effects(g: &Graph, n: NodeId) -> bool {
    if node_has_side_effects(g, n) {
        return true;
    }
    let node = g.node(n);
    if node
        .blocks()
        .iter()
        .any(|&b| g.block_nodes(b).into_iter().any(|m| has_side_effects(g, m)))
    {
        return true;
    }
    schema_is_mutable(g, n)
}

/// True when the schema `n` runs under writes one of its arguments.
pub fn schema_is_mutable(g: &Graph, n: NodeId) -> bool {
    let k = g.node(n).kind();
    if !(k.is_ns("aten") || k.is_ns("prim")) {
        return false;
    }
    match crate::node_schema::node_schema(g, n) {
        Some(s) => s.arguments.iter().any(|a| {
            a.alias_info
                .as_ref()
                .is_some_and(|ai| ai.is_write || ai.contained.iter().any(|c| c.is_write))
        }),
        None => false,
    }
}

/// True when the result of `n` may differ between runs on equal inputs (PyTorch's
/// `Node::isNondeterministic`): random sampling, and dropout unless `train` is constant False.
pub fn is_nondeterministic(g: &Graph, n: NodeId) -> bool {
    let k = g.node(n).kind();
    if !k.is_ns("aten") {
        return false;
    }
    const RANDOM: &[&str] = &[
        "dropout",
        "_fused_dropout",
        "_standard_gamma",
        "bernoulli",
        "multinomial",
        "native_dropout",
        "normal",
        "poisson",
        "binomial",
        "rrelu",
        "rrelu_with_noise",
        "rand",
        "rand_like",
        "randint",
        "randint_like",
        "randn",
        "randn_like",
        "randperm",
    ];
    if !RANDOM.contains(&k.name()) {
        return false;
    }
    if k == aten::dropout {
        if let Some(ts_core::IValue::Bool(false)) =
            crate::node_schema::constant_input(g, n, "train")
        {
            return false;
        }
    }
    true
}
