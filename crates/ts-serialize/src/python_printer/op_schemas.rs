//! Finding the schema of an operator node, to print keyword-only arguments as `name=value`
//! the way PyTorch does (`torch.zeros([2], dtype=None, ...)`).

use std::collections::HashMap;
use std::sync::Arc;

use ts_core::{parse_schema_with, FunctionSchema, IValue, Symbol};
use ts_ir::{Graph, NodeId, ValueId};

/// Parsed overloads per operator, from PyTorch's schema table (`ts_ops::schema_table`).
#[derive(Default)]
pub struct OpSchemas {
    by_kind: HashMap<Symbol, Vec<Arc<FunctionSchema>>>,
}

impl OpSchemas {
    /// The overload whose argument types the node's inputs match, if any.
    pub fn schema_for(&mut self, g: &Graph, n: NodeId) -> Option<Arc<FunctionSchema>> {
        let kind = g.node(n).kind();
        let overloads = self.by_kind.entry(kind).or_insert_with(|| {
            ts_ops::schema_table::overload_lines(kind.qualified())
                .iter()
                .filter_map(|line| parse_schema_with(line, None).ok().map(Arc::new))
                .collect()
        });
        overloads
            .iter()
            .find(|s| ts_ops::matching::node_matches_schema(g, n, s))
            .cloned()
    }

    /// The inputs PyTorch prints for an operator call: trailing arguments equal to their
    /// schema defaults are left out (keeping trailing `out=` arguments), and keyword-only
    /// arguments carry their name. Without a schema every input is printed positionally.
    pub fn printed_arguments(&mut self, g: &Graph, n: NodeId) -> Vec<(usize, Option<String>)> {
        let inputs = g.node(n).inputs();
        let Some(schema) = self.schema_for(g, n) else {
            return (0..inputs.len()).map(|i| (i, None)).collect();
        };
        let args = &schema.arguments;
        let (necessary, outs) = necessary_arguments(g, &schema, inputs);
        let keyword = |i: usize| args.get(i).filter(|a| a.kwarg_only).map(|a| a.name.clone());
        let mut out: Vec<(usize, Option<String>)> =
            (0..necessary).map(|i| (i, keyword(i))).collect();
        let first_out = args.len() - outs;
        for (i, a) in args.iter().enumerate().skip(first_out) {
            out.push((i, Some(a.name.clone())));
        }
        out
    }
}

fn is_out_argument(a: &ts_core::Argument) -> bool {
    a.kwarg_only && a.alias_info.as_ref().is_some_and(|i| i.is_write)
}

/// How many leading inputs must be printed, and how many trailing `out` arguments the schema
/// has (PyTorch's `CalculateNecessaryArgs`): trailing inputs that are constants equal to the
/// argument's default are dropped.
fn necessary_arguments(g: &Graph, schema: &FunctionSchema, inputs: &[ValueId]) -> (usize, usize) {
    let args = &schema.arguments;
    if args.is_empty() {
        return (0, 0);
    }
    let outs = args.iter().rev().take_while(|a| is_out_argument(a)).count();
    if args.len() < inputs.len() {
        return (inputs.len(), outs);
    }
    let mut idx = args.len() - outs;
    while idx > 0 {
        let a = &args[idx - 1];
        let Some(default) = &a.default else {
            return (idx, outs);
        };
        let Some(actual) = inputs.get(idx - 1).and_then(|&v| g.to_ivalue(v)) else {
            return (idx, outs);
        };
        if !same_value(default, &actual) {
            return (idx, outs);
        }
        idx -= 1;
    }
    (0, outs)
}

/// IValue equality as the default check needs it: same kind and equal contents.
fn same_value(a: &IValue, b: &IValue) -> bool {
    match (a, b) {
        (IValue::None, IValue::None) => true,
        (IValue::Bool(x), IValue::Bool(y)) => x == y,
        (IValue::Int(x), IValue::Int(y)) => x == y,
        (IValue::Double(x), IValue::Double(y)) => x == y,
        (IValue::Int(x), IValue::Double(y)) | (IValue::Double(y), IValue::Int(x)) => {
            *x as f64 == *y
        }
        (IValue::String(x), IValue::String(y)) => x == y,
        (IValue::Device(x), IValue::Device(y)) => x == y,
        (IValue::List(x), IValue::List(y)) => {
            let (x, y) = (x.items.read(), y.items.read());
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same_value(p, q))
        }
        (IValue::Tuple(x), IValue::Tuple(y)) => {
            x.elements.len() == y.elements.len()
                && x.elements
                    .iter()
                    .zip(&y.elements)
                    .all(|(p, q)| same_value(p, q))
        }
        _ => false,
    }
}
