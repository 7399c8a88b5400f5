//! A minimal evaluator of straight-line graphs for tests (passes must not change results);
//! the interpreter lives in a crate above this one.

use std::collections::HashMap;

use ts_core::{prim, IValue};
use ts_ir::{Graph, ValueId};

/// Runs a graph without blocks on `args`; returns its single output.
pub fn run(g: &Graph, args: Vec<IValue>) -> IValue {
    let mut env: HashMap<ValueId, IValue> = g.inputs().iter().copied().zip(args).collect();
    for n in g.block_nodes(g.block()) {
        assert!(
            g.node(n).blocks().is_empty(),
            "test_eval runs straight-line graphs only"
        );
        if g.node(n).kind() == prim::Constant {
            let v = g.constant_value(n).expect("a readable constant");
            env.insert(g.node(n).output(0), v);
            continue;
        }
        let mut stack: Vec<IValue> = g.node(n).inputs().iter().map(|v| env[v].clone()).collect();
        if g.node(n).kind() == prim::ListConstruct {
            let elem = g
                .value(g.node(n).output(0))
                .ty()
                .list_elem()
                .cloned()
                .expect("a list");
            env.insert(g.node(n).output(0), IValue::list(elem, stack));
            continue;
        }
        let op = ts_ops::registry()
            .match_node(g, n)
            .unwrap_or_else(|| panic!("no operator for {}", g.node(n).kind()));
        (op.operation_for(g, n).expect("an operation"))(&mut stack).expect("the operator runs");
        for (o, v) in g.node(n).outputs().iter().zip(stack) {
            env.insert(*o, v);
        }
    }
    env[&g.outputs()[0]].clone()
}
