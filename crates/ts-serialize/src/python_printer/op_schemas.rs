//! Finding the schema of an operator node, to print keyword-only arguments as `name=value`
//! the way PyTorch does (`torch.zeros([2], dtype=None, ...)`).

use std::collections::HashMap;
use std::sync::Arc;

use ts_core::{parse_schema_with, FunctionSchema, Symbol};
use ts_ir::{Graph, NodeId};

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

    /// For each input of the node, the argument name when that argument is keyword-only.
    pub fn keyword_names(&mut self, g: &Graph, n: NodeId) -> Vec<Option<String>> {
        let count = g.node(n).inputs().len();
        let Some(schema) = self.schema_for(g, n) else {
            return vec![None; count];
        };
        (0..count)
            .map(|i| {
                schema
                    .arguments
                    .get(i)
                    .filter(|a| a.kwarg_only)
                    .map(|a| a.name.clone())
            })
            .collect()
    }
}
