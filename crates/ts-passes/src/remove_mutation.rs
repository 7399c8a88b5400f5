//! Mutation removal (PyTorch's `RemoveListMutation` and `RemoveTensorMutation`), where alias
//! analysis proves it unobservable:
//!
//! - `l = [a]; l.append(b)` becomes `l = [a, b]` when the list's creation can move next to the
//!   append;
//! - `x = op(); x.add_(y)` becomes `x0 = x.add(y)` (later uses of `x` read `x0`) when `x` is
//!   fresh memory nothing else aliases and its creation can move next to the in-place op;
//!   `fill_`/`zero_` become `full_like`/`zeros_like`. A value made by an `If` whose branches
//!   both make fresh, otherwise unused values qualifies too.

use ts_core::{aten, prim, Symbol};
use ts_ir::{BlockId, Graph, NodeId, ValueId};

use crate::alias_analysis::AliasDb;
use crate::node_schema::{node_full_name, node_schema};
use crate::side_effects::node_has_side_effects;

/// Removes list appends that follow the list's literal; returns whether anything changed.
pub fn remove_list_mutation(g: &mut Graph) -> bool {
    let mut r = Remover {
        db: AliasDb::new(g),
        filter: None,
    };
    let top = g.block();
    let changed = r.list_block(g, top);
    crate::graph_dump!("After RemoveListMutation: ", g);
    changed
}

/// Replaces in-place tensor operators by their functional forms where safe; `filter` limits
/// which nodes are considered. Returns whether anything changed.
pub fn remove_tensor_mutation(g: &mut Graph, filter: Option<&NodeFilter<'_>>) -> bool {
    let mut r = Remover {
        db: AliasDb::new(g),
        filter,
    };
    let top = g.block();
    let changed = r.tensor_block(g, top);
    crate::graph_dump!("After RemoveTensorMutation: ", g);
    changed
}

/// A predicate choosing the nodes a pass considers.
pub type NodeFilter<'a> = dyn Fn(&Graph, NodeId) -> bool + 'a;

struct Remover<'f> {
    db: AliasDb,
    filter: Option<&'f NodeFilter<'f>>,
}

impl Remover<'_> {
    /// `v` is memory made here that nothing it was made from may alias.
    fn new_memory_location(&self, g: &Graph, v: ValueId) -> bool {
        let n = g.value(v).node();
        let unhandled = !g.node(n).blocks().is_empty()
            || g.node(n).attr(ts_core::attr::Subgraph).is_some()
            || node_has_side_effects(g, n)
            || g.node(n).kind() == prim::Param;
        !unhandled && !self.db.may_contain_alias_any(g, g.node(n).inputs(), &[v])
    }

    fn try_make_creation_and_mutation_atomic(
        &self,
        g: &mut Graph,
        mutated: ValueId,
        op: NodeId,
    ) -> bool {
        if !self.new_memory_location(g, mutated) {
            return false;
        }
        let creator = g.value(mutated).node();
        self.db.move_before_topologically_valid(g, creator, op)
    }

    fn try_make_unaliased_if_output_and_mutation_atomic(
        &self,
        g: &mut Graph,
        mutated: ValueId,
        op: NodeId,
    ) -> bool {
        let if_node = g.value(mutated).node();
        if g.node(if_node).kind() != prim::If {
            return false;
        }
        let off = g.value(mutated).offset();
        let blocks = g.node(if_node).blocks().to_vec();
        let t = g.block_outputs(blocks[0])[off];
        let f = g.block_outputs(blocks[1])[off];
        if g.value(t).uses().len() > 1 || g.value(f).uses().len() > 1 {
            return false;
        }
        if !self.new_memory_location(g, t) || !self.new_memory_location(g, f) {
            return false;
        }
        self.db.move_before_topologically_valid(g, if_node, op)
    }

    fn list_block(&mut self, g: &mut Graph, b: BlockId) -> bool {
        let mut changed = false;
        for n in g.block_nodes(b) {
            if !g.is_alive(n) {
                continue;
            }
            for sb in g.node(n).blocks().to_vec() {
                changed |= self.list_block(g, sb);
            }
            if g.node(n).kind() != aten::append || g.node(n).inputs().len() != 2 {
                continue;
            }
            let list = g.node(n).input(0);
            let creator = g.value(list).node();
            if g.node(creator).kind() != prim::ListConstruct {
                continue;
            }
            if !self.try_make_creation_and_mutation_atomic(g, list, n) {
                continue;
            }
            // x = [v0]; x.append(v1)  ->  x = [v0, v1]
            let elem = g.node(n).input(1);
            g.add_input(creator, elem);
            let out = g.node(n).output(0);
            g.replace_all_uses_with(out, list);
            crate::graph_update!(
                "Folded an append into its list literal %{}",
                g.display_name(list)
            );
            self.db.erase_writes_of(n);
            let _ = g.destroy_node(n);
            changed = true;
        }
        changed
    }

    /// `n` is an in-place operator with a functional twin that writes exactly its first input
    /// and returns it.
    fn inplace_op_variant(&self, g: &Graph, n: NodeId) -> Option<Symbol> {
        let k = g.node(n).kind();
        if !k.is_ns("aten") {
            return None;
        }
        let name = node_full_name(g, n)?;
        if name == "aten::zero_" || name == "aten::fill_.Scalar" {
            return Some(if name == "aten::zero_" {
                aten::zeros_like
            } else {
                aten::full_like
            });
        }
        let base = k.name();
        if !base.ends_with('_') || base.starts_with("__") {
            return None;
        }
        node_schema(g, n)?;
        let ins = g.node(n).inputs();
        if g.node(n).outputs().len() != 1 || ins.is_empty() {
            return None;
        }
        if !self.db.writes_to_alias(g, n, &ins[..1]) || self.db.writes_to_alias(g, n, &ins[1..]) {
            return None;
        }
        let functional = Symbol::aten(&base[..base.len() - 1]);
        (!ts_ops::registry().lookup(functional).is_empty()).then_some(functional)
    }

    fn tensor_block(&mut self, g: &mut Graph, b: BlockId) -> bool {
        let mut changed = false;
        for n in g.block_nodes(b) {
            if !g.is_alive(n) {
                continue;
            }
            for sb in g.node(n).blocks().to_vec() {
                changed |= self.tensor_block(g, sb);
            }
            if let Some(f) = self.filter {
                if !f(g, n) {
                    continue;
                }
            }
            let Some(functional) = self.inplace_op_variant(g, n) else {
                continue;
            };
            let mutated = g.node(n).input(0);
            if !self.try_make_creation_and_mutation_atomic(g, mutated, n)
                && !self.try_make_unaliased_if_output_and_mutation_atomic(g, mutated, n)
            {
                continue;
            }
            let inputs: Vec<ValueId> = if functional == aten::zeros_like {
                vec![mutated]
            } else {
                g.node(n).inputs().to_vec()
            };
            let out = g.node(n).output(0);
            let ty = g.value(out).ty().clone();
            let new_out = g.with_insert_point(n, |g| {
                let m = g.insert(functional, &inputs, 0);
                g.add_output(m, ty)
            });
            let new_node = g.value(new_out).node();
            let range = g.node(n).source_range().cloned();
            g.set_source_range(new_node, range);
            let cs = g.node(n).callstack().cloned();
            g.set_callstack(new_node, cs);
            // x = zeros(); x.add_(1); x.add_(2)  ->  x0 = x.add(1); x0.add_(2)
            g.replace_all_uses_after_node_with(n, mutated, new_out);
            g.replace_all_uses_with(out, new_out);
            self.db.replace_with_new_value(mutated, new_out);
            self.db.create_value(g, mutated);
            self.db.erase_writes_of(n);
            crate::graph_update!(
                "Replaced an in-place {} with its functional form",
                g.node(n).kind()
            );
            let _ = g.destroy_node(n);
            changed = true;
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn folds_appends_into_literals() {
        let mut g = parse_ir(
            "graph(%a : int, %b : int):\n  %l : int[] = prim::ListConstruct(%a)\n  %x : int[] = aten::append(%l, %b)\n  %y : int[] = aten::append(%l, %a)\n  return (%l)\n",
        )
        .unwrap();
        assert!(remove_list_mutation(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("prim::ListConstruct(%a, %b, %a)")
            .check_not("aten::append")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }

    #[test]
    fn makes_fresh_tensor_updates_functional() {
        let mut g = parse_ir(
            "graph(%x : Tensor):\n  %one : int = prim::Constant[value=1]()\n  %y : Tensor = aten::mul(%x, %one)\n  %z : Tensor = aten::add_(%y, %one, %one)\n  %w : Tensor = aten::relu(%y)\n  %v : Tensor = aten::add_(%x, %one, %one)\n  %r : (Tensor, Tensor) = prim::TupleConstruct(%w, %v)\n  return (%r)\n",
        )
        .unwrap();
        assert!(remove_tensor_mutation(&mut g, None));
        verify(&g).unwrap();
        // y is fresh: its update becomes functional and relu reads the new value; x is a graph
        // input: its update stays.
        FileCheck::new()
            .check("aten::add(%y")
            .check("aten::relu(%")
            .check_not("aten::relu(%y)")
            .check("aten::add_(%x")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }
}
