//! Constant propagation (PyTorch's `ConstantPropagation` and
//! `ConstantPropagationImmutableTypes`): nodes whose inputs are all constants are run at
//! compile time and their outputs replaced by constants; `If`s on constant conditions are
//! inlined; loops that cannot run are removed; `If`/`Loop` outputs that do not change are
//! forwarded. Dead code is removed afterwards.
//!
//! The full pass uses alias analysis: a node runs when nothing writes its inputs or outputs,
//! so tensors, lists and dicts that are never mutated fold too (a folded tensor becomes a
//! tensor constant). The immutable-types variant, run when a function is compiled, only folds
//! nodes without mutable inputs or outputs and needs no alias analysis.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ts_core::{prim, IValue, Symbol, Type};
use ts_ir::{BlockId, Graph, NodeId, ValueId};

use crate::alias_analysis::AliasDb;
use crate::dead_code_elimination::eliminate_dead_code;
use crate::side_effects::{is_nondeterministic, node_has_side_effects};

/// Runs the full pass (alias-analysis aware); returns whether the graph changed.
pub fn constant_propagation(g: &mut Graph) -> bool {
    let mut p = Propagator {
        alias_db: Some(None),
        changed: false,
    };
    let top = g.block();
    p.propagate_block(g, top);
    let changed = p.changed | eliminate_dead_code(g);
    crate::graph_dump!("After ConstantPropagation: ", g);
    changed
}

/// Runs the pass on nodes without mutable inputs or outputs only; returns whether the graph
/// changed.
pub fn constant_propagation_immutable_types(g: &mut Graph) -> bool {
    let mut p = Propagator {
        alias_db: None,
        changed: false,
    };
    let top = g.block();
    p.propagate_block(g, top);
    if p.changed {
        eliminate_dead_code(g);
    }
    crate::graph_dump!("After ConstantPropagation: ", g);
    p.changed
}

struct Propagator {
    /// `Some` when the pass uses alias analysis (built lazily, reused: folding only adds
    /// constants and rewires immutable uses, which leaves the write information valid).
    alias_db: Option<Option<AliasDb>>,
    changed: bool,
}

impl Propagator {
    fn propagate_block(&mut self, g: &mut Graph, b: BlockId) {
        for n in g.block_nodes(b) {
            if g.is_alive(n) {
                self.propagate_node(g, n);
            }
        }
    }

    fn propagate_blocks(&mut self, g: &mut Graph, n: NodeId) {
        for b in g.node(n).blocks().to_vec() {
            self.propagate_block(g, b);
        }
    }

    fn propagate_node(&mut self, g: &mut Graph, n: NodeId) {
        let kind = g.node(n).kind();
        let constant_inputs = g.node(n).inputs().iter().all(|&v| is_constant(g, v));
        if kind == prim::If {
            if constant_inputs {
                self.inline_if(g, n);
            } else {
                self.propagate_blocks(g, n);
                self.remove_extra_if_outputs(g, n);
            }
        } else if kind == prim::Loop {
            if loop_will_not_run(g, n) {
                crate::graph_update!("Removing unexecuted loop: {}", g.node(n).kind());
                remove_loop(g, n);
                self.changed = true;
            } else {
                self.propagate_blocks(g, n);
                self.remove_extra_loop_outputs(g, n);
            }
        } else if constant_inputs && self.supported_node(g, n) {
            self.fold(g, n);
        } else {
            self.propagate_blocks(g, n);
        }
    }

    /// Nodes the pass may run: nothing writes their values, deterministic, no side effects,
    /// no blocks.
    fn supported_node(&mut self, g: &Graph, n: NodeId) -> bool {
        let node = g.node(n);
        let skip = [
            prim::If,
            prim::Loop,
            prim::Closure,
            prim::Constant,
            prim::AutogradZero,
            prim::Uninitialized,
            prim::Guard,
            prim::profile,
            prim::profile_ivalue,
            prim::unchecked_unwrap_optional,
            prim::awaitable,
            Symbol::aten("dequantize"),
        ];
        if skip.contains(&node.kind()) || !node.blocks().is_empty() {
            return false;
        }
        let no_mutation = match &mut self.alias_db {
            Some(db) => {
                let db = db.get_or_insert_with(|| AliasDb::new(g));
                !db.node_has_writers(g, n)
            }
            None => !node
                .inputs()
                .iter()
                .chain(node.outputs())
                .any(|&v| AliasDb::is_mutable_type(g.value(v).ty())),
        };
        no_mutation && !is_nondeterministic(g, n) && !node_has_side_effects(g, n)
    }

    fn fold(&mut self, g: &mut Graph, n: NodeId) {
        let Some(outs) = run_node_if_inputs_are_constant(g, n) else {
            return;
        };
        for (i, v) in outs.iter().enumerate() {
            if !insertable(v) {
                // Left for dead code elimination when unused.
                continue;
            }
            let old = g.node(n).output(i);
            let c = g.create_constant(v);
            g.insert_before(c, n);
            let new = g.node(c).output(0);
            if matches!(v, IValue::None) {
                let ty = g.value(old).ty().clone();
                g.set_type(new, ty);
            }
            crate::graph_update!("Folding %{} with {}", g.display_name(old), g.node(c).kind());
            g.replace_all_uses_with(old, new);
            self.changed = true;
        }
        if self.alias_db.is_none() {
            drop_folded(g, n);
        }
    }

    fn inline_if(&mut self, g: &mut Graph, n: NodeId) {
        let Some(IValue::Bool(cond)) = g.to_ivalue(g.node(n).input(0)) else {
            return;
        };
        crate::graph_update!("Folding if where condition = {cond}");
        let b = g.node(n).blocks()[if cond { 0 } else { 1 }];
        self.propagate_block(g, b);
        for m in g.block_nodes(b) {
            g.move_before(m, n);
        }
        let outs = g.node(n).outputs().to_vec();
        let rets = g.block_outputs(b).to_vec();
        for (o, r) in outs.into_iter().zip(rets) {
            g.replace_all_uses_with(o, r);
        }
        let _ = g.destroy_node(n);
        self.changed = true;
    }

    /// Forwards `If` outputs that are the same value in both blocks, or equal constants.
    fn remove_extra_if_outputs(&mut self, g: &mut Graph, n: NodeId) {
        let (tb, fb) = (g.node(n).blocks()[0], g.node(n).blocks()[1]);
        let mut i = 0;
        while i < g.node(n).outputs().len() {
            let t = g.block_outputs(tb)[i];
            let f = g.block_outputs(fb)[i];
            let replacement = if t == f {
                Some(t)
            } else {
                match g.to_ivalue(t) {
                    Some(a) if is_constant(g, f) && equal_constant_nodes(g, t, f) => {
                        let c = g.create_constant(&a);
                        g.insert_before(c, n);
                        let cv = g.node(c).output(0);
                        if matches!(a, IValue::None) {
                            let ty = g.value(t).ty().clone();
                            g.set_type(cv, ty);
                        }
                        Some(cv)
                    }
                    _ => None,
                }
            };
            match replacement {
                Some(r) => {
                    let out = g.node(n).output(i);
                    g.replace_all_uses_with(out, r);
                    let _ = g.erase_output(n, i);
                    g.erase_block_output(tb, i);
                    g.erase_block_output(fb, i);
                    self.changed = true;
                }
                None => i += 1,
            }
        }
    }

    /// Drops loop-carried values the body passes through unchanged.
    fn remove_extra_loop_outputs(&mut self, g: &mut Graph, n: NodeId) {
        let body = g.node(n).blocks()[0];
        for i in (0..g.node(n).outputs().len()).rev() {
            let carried = g.block_inputs(body)[1 + i];
            if carried != g.block_outputs(body)[1 + i] {
                continue;
            }
            let init = g.node(n).input(2 + i);
            let out = g.node(n).output(i);
            g.replace_all_uses_with(out, init);
            g.replace_all_uses_with(carried, init);
            let _ = g.erase_output(n, i);
            g.remove_input(n, 2 + i);
            let _ = g.erase_block_input(body, 1 + i);
            g.erase_block_output(body, 1 + i);
            self.changed = true;
        }
    }
}

/// Drops a folded node and the constants only it used right away (without alias analysis,
/// which would then describe nodes that are gone): a chain of folds (`s + 'a' + 'a' ...`)
/// would otherwise keep every intermediate value until dead-code elimination, quadratic
/// memory for a growing string.
fn drop_folded(g: &mut Graph, n: NodeId) {
    if g.node(n).outputs().iter().any(|&o| g.value(o).has_uses()) {
        return;
    }
    let inputs = g.node(n).inputs().to_vec();
    if g.destroy_node(n).is_err() {
        return;
    }
    for v in inputs {
        let producer = g.value(v).node();
        if g.is_alive(producer)
            && g.node(producer).kind() == prim::Constant
            && !g.value(v).has_uses()
        {
            let _ = g.destroy_node(producer);
        }
    }
}

fn is_constant(g: &Graph, v: ValueId) -> bool {
    g.node(g.value(v).node()).kind() == prim::Constant
}

/// Runs `n` on its constant inputs (PyTorch's `runNodeIfInputsAreConstant`); `None` when an
/// input is not constant, the node cannot run or raises, or a result cannot be a constant
/// (a tensor requiring grad, an object).
pub fn run_node_if_inputs_are_constant(g: &Graph, n: NodeId) -> Option<Vec<IValue>> {
    let node = g.node(n);
    let mut stack = Vec::with_capacity(node.inputs().len());
    for &v in node.inputs() {
        if !is_constant(g, v) {
            return None;
        }
        stack.push(g.to_ivalue(v)?);
    }
    let kind = node.kind();
    let out_ty = node.outputs().first().map(|&o| g.value(o).ty().clone());
    let results = if kind == prim::TupleConstruct {
        let ty = out_ty?;
        let named = matches!(&*ty, Type::Tuple(t) if t.names.is_some());
        vec![if named {
            IValue::named_tuple(ty, stack)
        } else {
            IValue::tuple(stack)
        }]
    } else if kind == prim::TupleUnpack {
        let t = stack.pop()?;
        let elems = t.as_tuple()?.elements.clone();
        if elems.len() != node.outputs().len() {
            return None;
        }
        elems
    } else if kind == prim::ListUnpack {
        let l = stack.pop()?;
        let items = l.list_items()?;
        if items.len() != node.outputs().len() {
            return None;
        }
        items
    } else if kind == prim::ListConstruct {
        let elem = out_ty?.list_elem()?.clone();
        vec![IValue::list(elem, stack)]
    } else if kind == prim::DictConstruct {
        let ty = out_ty?;
        let Type::Dict(k, v) = &*ty else {
            return None;
        };
        let mut entries = Vec::new();
        let mut it = stack.into_iter();
        while let (Some(key), Some(val)) = (it.next(), it.next()) {
            entries.push((key, val));
        }
        vec![IValue::dict(k.clone(), v.clone(), entries)]
    } else if kind == prim::unchecked_cast {
        // A cast on a branch that never runs may see a constant of another type (a `bool`
        // cast to `str` under `isinstance(x, str)`): folding it would give the users an input
        // no overload accepts, so only values of the target type are folded.
        let ty = out_ty?;
        if !stack.iter().all(|v| v.is_instance_of(&ty)) {
            return None;
        }
        stack
    } else if kind == prim::isinstance {
        let types = match node.attr(Symbol::attr("types")) {
            Some(ts_ir::AttributeValue::Types(t)) => t.clone(),
            Some(ts_ir::AttributeValue::Type(t)) => vec![t.clone()],
            _ => return None,
        };
        let v = stack.pop()?;
        vec![IValue::Bool(types.iter().any(|t| v.is_instance_of(t)))]
    } else {
        let op = ts_ops::registry().match_node(g, n)?;
        if op.schema.is_vararg {
            // Vararg operators need their argument count on the stack; not folded (PyTorch
            // does not either).
            return None;
        }
        let operation = op.operation_for(g, n).ok()?;
        let ok = catch_unwind(AssertUnwindSafe(|| operation(&mut stack))).ok()?;
        ok.ok()?;
        if stack.len() != node.outputs().len() {
            return None;
        }
        stack
    };
    for v in &results {
        if let IValue::Tensor(t) = v {
            if t.requires_grad() {
                return None;
            }
        }
        if matches!(v, IValue::Object(_)) {
            return None;
        }
    }
    Some(results)
}

/// Whether `v` can be written as a `prim::Constant` (PyTorch's `insertableIValue`).
pub fn insertable(v: &IValue) -> bool {
    match v {
        IValue::None
        | IValue::Int(_)
        | IValue::Double(_)
        | IValue::Bool(_)
        | IValue::String(_)
        | IValue::Device(_)
        | IValue::Complex(..)
        | IValue::Enum(_) => true,
        IValue::Tensor(t) => !t.requires_grad(),
        IValue::Tuple(t) => t.elements.iter().all(insertable),
        IValue::List(l) => l.items.read().iter().all(insertable),
        IValue::Dict(d) => d
            .entries
            .read()
            .iter()
            .all(|(k, v)| insertable(&k.0) && insertable(v)),
        _ => false,
    }
}

/// Two constant nodes with equal attributes (PyTorch's `EqualNode` on constants; tensor
/// constants are only equal to themselves).
fn equal_constant_nodes(g: &Graph, a: ValueId, b: ValueId) -> bool {
    let (na, nb) = (g.node(g.value(a).node()), g.node(g.value(b).node()));
    if na.kind() != prim::Constant || nb.kind() != prim::Constant {
        return false;
    }
    if g.value(a).ty() != g.value(b).ty() {
        return false;
    }
    crate::node_hashing::attributes_equal(na.attrs(), nb.attrs())
}

fn loop_will_not_run(g: &Graph, n: NodeId) -> bool {
    let node = g.node(n);
    let trip = match g.to_ivalue(node.input(0)) {
        Some(IValue::Int(i)) => i,
        _ => 1,
    };
    let cond = match g.to_ivalue(node.input(1)) {
        Some(IValue::Bool(b)) => b,
        _ => true,
    };
    !(cond && trip > 0)
}

fn remove_loop(g: &mut Graph, n: NodeId) {
    let outs = g.node(n).outputs().to_vec();
    for (i, o) in outs.into_iter().enumerate() {
        let init = g.node(n).input(2 + i);
        g.replace_all_uses_with(o, init);
    }
    let _ = g.destroy_node(n);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn folds_unmutated_lists_and_tensors_but_not_mutated_ones() {
        let mut g = parse_ir(
            "graph(%x : Tensor):\n  %none : NoneType = prim::Constant()\n  %one : int = prim::Constant[value=1]()\n  %two : int = prim::Constant[value=2]()\n  %l : int[] = prim::ListConstruct(%one, %two)\n  %z : Tensor = aten::zeros(%l, %none, %none, %none, %none)\n  %m : int[] = prim::ListConstruct(%one)\n  %a : int[] = aten::append(%m, %two)\n  %n : int = aten::len(%m)\n  %r : (Tensor, int[], int) = prim::TupleConstruct(%z, %l, %n)\n  return (%r)\n",
        )
        .unwrap();
        assert!(constant_propagation(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check_dag("Float(1, 2, strides=[2, 1], requires_grad=0, device=cpu) = prim::Constant")
            .check_dag("int[] = prim::Constant[value=[1, 2]]")
            .check("aten::append")
            .check("aten::len")
            .check_not("aten::zeros")
            .run_graph(&g)
            .unwrap();
    }

    #[test]
    fn immutable_variant_leaves_tensors_alone() {
        let mut g = parse_ir(
            "graph():\n  %none : NoneType = prim::Constant()\n  %one : int = prim::Constant[value=1]()\n  %l : int[] = prim::ListConstruct(%one)\n  %z : Tensor = aten::zeros(%l, %none, %none, %none, %none)\n  %s : int = aten::add(%one, %one)\n  %r : (Tensor, int) = prim::TupleConstruct(%z, %s)\n  return (%r)\n",
        )
        .unwrap();
        assert!(constant_propagation_immutable_types(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("aten::zeros")
            .check_not("aten::add")
            .run_graph(&g)
            .unwrap();
    }

    #[test]
    fn folds_isinstance_before_casting_a_constant_of_another_type() {
        // `isinstance(x, str)` on a bool constant: the `str` branch is dead, and its cast must
        // not hand a bool to `__contains__(str[], str)`.
        let mut g = parse_ir(
            "graph():\n  %b : bool = prim::Constant[value=0]()\n  %a : str = prim::Constant[value=\"a\"]()\n  %l : str[] = prim::ListConstruct(%a)\n  %i : bool = prim::isinstance[types=[str]](%b)\n  %r : bool = prim::If(%i)\n    block0():\n      %s : str = prim::unchecked_cast(%b)\n      %c : bool = aten::__contains__(%l, %s)\n      -> (%c)\n    block1():\n      -> (%b)\n  return (%r)\n",
        )
        .unwrap();
        assert!(constant_propagation(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check_not("prim::isinstance")
            .check_not("aten::__contains__")
            .run_graph(&g)
            .unwrap();
    }

    #[test]
    fn inlines_constant_ifs_and_removes_dead_loops() {
        let mut g = parse_ir(
            "graph(%x : int):\n  %f : bool = prim::Constant[value=0]()\n  %zero : int = prim::Constant[value=0]()\n  %y : int = prim::If(%f)\n    block0():\n      -> (%x)\n    block1():\n      %z : int = aten::mul(%x, %x)\n      -> (%z)\n  %w : int = prim::Loop(%zero, %f, %y)\n    block0(%i : int, %c : int):\n      %d : int = aten::add(%c, %x)\n      -> (%f, %d)\n  return (%w)\n",
        )
        .unwrap();
        assert!(constant_propagation(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check_not("prim::If")
            .check("aten::mul")
            .check_not("prim::Loop")
            .run_graph(&g)
            .unwrap();
    }
}
