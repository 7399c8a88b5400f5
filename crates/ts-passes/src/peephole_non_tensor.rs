//! Peephole rewrites on non-tensor values (PyTorch's `PeepholeOptimizeNonTensor`): values of
//! type `None` become the `None` constant; `If` outputs equal to the condition (`x and True`)
//! become the condition; optional `If` outputs whose branches are not optional are refined;
//! `x is None` on values that cannot be `None` folds; unwrapping a non-optional and
//! `unchecked_cast` to a supertype disappear; `int(i)` of an int is `i`; `x == x` on
//! bools/ints/floats/None (and lists/dicts of them) folds; integer arithmetic with constants
//! `x * 1`, `x // 1`, `x + 0` simplifies and `(x + 2) - 1` merges to `x + 1`.

use ts_core::{aten, prim, IValue, Type};
use ts_ir::{BlockId, Graph, NodeId};

/// Runs the rewrites; returns whether the graph changed.
pub fn peephole_optimize_non_tensor(g: &mut Graph) -> bool {
    let top = g.block();
    let changed = optimize_block(g, top);
    crate::graph_dump!("After PeepholeOptimize: ", g);
    changed
}

fn optimize_block(g: &mut Graph, b: BlockId) -> bool {
    let mut changed = false;
    for n in g.block_nodes(b) {
        if !g.is_alive(n) {
            continue;
        }
        for sb in g.node(n).blocks().to_vec() {
            changed |= optimize_block(g, sb);
        }
        changed |= optimize_node(g, n);
    }
    changed
}

fn const_int(g: &Graph, v: ts_ir::ValueId) -> Option<i64> {
    match g.to_ivalue(v)? {
        IValue::Int(i) if g.value(v).ty().is_int() => Some(i),
        _ => None,
    }
}

fn const_bool(g: &Graph, v: ts_ir::ValueId) -> Option<bool> {
    match g.to_ivalue(v)? {
        IValue::Bool(b) => Some(b),
        _ => None,
    }
}

fn optimize_node(g: &mut Graph, n: NodeId) -> bool {
    let mut changed = false;
    let kind = g.node(n).kind();
    if kind != prim::Constant {
        for o in g.node(n).outputs().to_vec() {
            if g.value(o).ty().is_none_type() && g.value(o).has_uses() {
                let c = g.with_insert_point(n, |g| g.insert_constant(&IValue::None));
                g.replace_all_uses_with(o, c);
                changed = true;
            }
        }
    }
    if kind == prim::If {
        let (tb, fb) = (g.node(n).blocks()[0], g.node(n).blocks()[1]);
        let cond = g.node(n).input(0);
        let outs = g.node(n).outputs().to_vec();
        for (i, &o) in outs.iter().enumerate() {
            if !g.value(o).ty().is_bool() {
                continue;
            }
            let t = const_bool(g, g.block_outputs(tb)[i]).unwrap_or(false);
            let f = const_bool(g, g.block_outputs(fb)[i]).unwrap_or(true);
            if t && !f && g.value(o).has_uses() {
                crate::graph_update!(
                    "Replacing {} (True or False) with {}",
                    g.display_name(o),
                    g.display_name(cond)
                );
                g.replace_all_uses_with(o, cond);
                changed = true;
            }
        }
        for (i, &o) in outs.iter().enumerate() {
            let tt = g.value(g.block_outputs(tb)[i]).ty().clone();
            let ft = g.value(g.block_outputs(fb)[i]).ty().clone();
            let non_optional =
                !matches!(&*tt, Type::Optional(_)) && !matches!(&*ft, Type::Optional(_));
            if non_optional && matches!(&**g.value(o).ty(), Type::Optional(_)) {
                if let Some(u) = ts_core::unify_types(&tt, &ft, false) {
                    g.set_type(o, u);
                    changed = true;
                }
            }
        }
        return changed;
    }
    if kind == aten::__is__ || kind == aten::__isnot__ {
        let ins = g.node(n).inputs().to_vec();
        if ins.len() != 2 {
            return changed;
        }
        for k in [0, 1] {
            if g.must_be_none(ins[k]) && g.must_not_be_none(ins[1 - k]) {
                let out = g.node(n).output(0);
                let c = g.with_insert_point(n, |g| {
                    g.insert_constant(&IValue::Bool(kind == aten::__isnot__))
                });
                crate::graph_update!("Folding {} to {}", kind, g.display_name(c));
                g.replace_all_uses_with(out, c);
                return true;
            }
        }
        return changed;
    }
    if kind == prim::unchecked_unwrap_optional || kind == aten::_unwrap_optional {
        let i = g.node(n).input(0);
        if g.must_not_be_none(i) {
            let out = g.node(n).output(0);
            g.replace_all_uses_with(out, i);
            return true;
        }
        return changed;
    }
    if kind == prim::unchecked_cast {
        let i = g.node(n).input(0);
        let out = g.node(n).output(0);
        let it = crate::alias_analysis::unshaped(g.value(i).ty());
        let ot = crate::alias_analysis::unshaped(g.value(out).ty());
        if it.is_subtype_of(&ot) {
            crate::graph_update!("Removing unchecked_cast as input type subtypes output type");
            g.replace_all_uses_with(out, i);
            return true;
        }
        return changed;
    }
    if (kind == aten::Int || kind == aten::ceil)
        && g.node(n).inputs().len() == 1
        && g.value(g.node(n).input(0)).ty().is_int()
    {
        let i = g.node(n).input(0);
        let out = g.node(n).output(0);
        g.replace_all_uses_with(out, i);
        return true;
    }
    if kind == aten::ne || kind == aten::eq {
        let ins = g.node(n).inputs().to_vec();
        if ins.len() != 2 || ins[0] != ins[1] {
            return changed;
        }
        let immut = |t: &Type| matches!(t, Type::Bool | Type::Int | Type::Float | Type::NoneType);
        let ty = g.value(ins[0]).ty().clone();
        let ok = match &*ty {
            Type::List(e) => immut(e),
            Type::Dict(k, v) => immut(k) && immut(v),
            t => immut(t),
        };
        if ok {
            let out = g.node(n).output(0);
            let c = g.with_insert_point(n, |g| g.insert_constant(&IValue::Bool(kind == aten::eq)));
            g.replace_all_uses_with(out, c);
            return true;
        }
        return changed;
    }
    if kind == aten::mul || kind == aten::floordiv || kind == aten::div {
        return changed | simplify_mul_or_div(g, n);
    }
    if kind == aten::add || kind == aten::sub {
        return changed | simplify_add_or_sub(g, n);
    }
    changed
}

/// For int-int arithmetic: the constant operand (moved to the second input of a commutative
/// op when it was the first).
fn check_arith_node(g: &mut Graph, n: NodeId) -> Option<i64> {
    let ins = g.node(n).inputs().to_vec();
    if ins.len() != 2 || !g.value(ins[0]).ty().is_int() || !g.value(ins[1]).ty().is_int() {
        return None;
    }
    let k = g.node(n).kind();
    if k == aten::mul || k == aten::add {
        if let Some(i) = const_int(g, ins[0]) {
            g.replace_input(n, 0, ins[1]);
            g.replace_input(n, 1, ins[0]);
            return Some(i);
        }
    }
    const_int(g, ins[1])
}

fn simplify_mul_or_div(g: &mut Graph, n: NodeId) -> bool {
    if check_arith_node(g, n) != Some(1) {
        return false;
    }
    let out = g.node(n).output(0);
    let i = g.node(n).input(0);
    g.replace_all_uses_with(out, i);
    true
}

fn simplify_add_or_sub(g: &mut Graph, n: NodeId) -> bool {
    let Some(c) = check_arith_node(g, n) else {
        return false;
    };
    let out = g.node(n).output(0);
    if c == 0 {
        let i = g.node(n).input(0);
        g.replace_all_uses_with(out, i);
        return true;
    }
    let dep = g.value(g.node(n).input(0)).node();
    let dk = g.node(dep).kind();
    if dk != aten::add && dk != aten::sub {
        return false;
    }
    let Some(delta) = check_arith_node(g, dep) else {
        return false;
    };
    let merged = if dk == g.node(n).kind() {
        c.wrapping_add(delta)
    } else {
        c.wrapping_sub(delta)
    };
    let base = g.node(dep).input(0);
    if merged == 0 {
        g.replace_all_uses_with(out, base);
    } else {
        let k = g.with_insert_point(n, |g| g.insert_constant(&IValue::Int(merged)));
        g.replace_input(n, 0, base);
        g.replace_input(n, 1, k);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn folds_none_checks_and_int_arithmetic() {
        let mut g = parse_ir(
            "graph(%x : Tensor, %i : int):\n  %none : NoneType = prim::Constant()\n  %one : int = prim::Constant[value=1]()\n  %two : int = prim::Constant[value=2]()\n  %b : bool = aten::__is__(%x, %none)\n  %c : bool = aten::__isnot__(%none, %x)\n  %a : int = aten::add(%two, %i)\n  %s : int = aten::sub(%a, %one)\n  %m : int = aten::mul(%s, %one)\n  %e : bool = aten::eq(%i, %i)\n  %r : (bool, bool, int, bool) = prim::TupleConstruct(%b, %c, %m, %e)\n  return (%r)\n",
        )
        .unwrap();
        assert!(peephole_optimize_non_tensor(&mut g));
        crate::dead_code_elimination::eliminate_dead_code(&mut g);
        verify(&g).unwrap();
        FileCheck::new()
            .check_not("aten::__is")
            // (2 + i) - 1 is i - (-1)
            .check("int = prim::Constant[value=-1]")
            .check("aten::sub(%i, %")
            .check_not("aten::mul")
            .check_not("aten::eq")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
    }
}
