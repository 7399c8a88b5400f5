//! Peephole optimizations (PyTorch's `PeepholeOptimize`): small local rewrites, then the list,
//! dict, alias-sensitive and non-tensor idioms and concat combining, then dead code removal.
//!
//! The tensor rewrites use what the value types know: `x.dim()`, `x.size()`, `x.size(i)`,
//! `x.dtype`, `x.device`, `x.is_cuda`, `x.is_floating_point()`, `x.is_complex()`, `len(x.size())`
//! become constants, `x.expand(x.size())` and `x.type_as(y)` become `x` when the types prove
//! it ("shape peepholes", off when the types are only speculative). Always on: `x.t().t()` is
//! `x`, `int(NumToTensor(n))` is `n`.

use ts_core::{aten, prim, IValue, Type};
use ts_ir::{BlockId, Graph, NodeId, ValueId};

use crate::node_schema::node_full_name;

/// Runs the peephole passes; `disable_shape_peepholes` turns off the rewrites that trust tensor
/// types. Returns whether the graph changed.
pub fn peephole_optimize(g: &mut Graph, disable_shape_peepholes: bool) -> bool {
    let shape = !disable_shape_peepholes;
    let top = g.block();
    let mut changed = optimize_block(g, top, shape);
    changed |= crate::peephole_list_idioms::peephole_optimize_list_idioms(g);
    changed |= crate::peephole_dict_idioms::peephole_optimize_dict_idioms(g);
    changed |= crate::peephole_alias_sensitive::peephole_optimize_alias_sensitive(g, shape);
    changed |= crate::peephole_non_tensor::peephole_optimize_non_tensor(g);
    changed |= crate::concat_opt::combine_concats(g);
    crate::graph_dump!("After PeepholeOptimize: ", g);
    if changed {
        crate::dead_code_elimination::eliminate_dead_code(g);
    }
    changed
}

/// The tensor type of `v`, when it has one.
pub(crate) fn tensor_type(g: &Graph, v: ValueId) -> Option<&ts_core::TensorType> {
    g.value(v).ty().tensor_type()
}

fn replace_with_constant(g: &mut Graph, n: NodeId, out: ValueId, v: &IValue) {
    let c = g.with_insert_point(n, |g| g.insert_constant(v));
    g.replace_all_uses_with(out, c);
}

fn optimize_block(g: &mut Graph, b: BlockId, shape: bool) -> bool {
    let mut changed = false;
    for n in g.block_nodes(b) {
        if !g.is_alive(n) {
            continue;
        }
        for sb in g.node(n).blocks().to_vec() {
            changed |= optimize_block(g, sb, shape);
        }
        changed |= optimize_node(g, n, shape);
    }
    changed
}

fn optimize_node(g: &mut Graph, n: NodeId, shape: bool) -> bool {
    let kind = g.node(n).kind();
    let ns_ok = kind.is_ns("aten") || kind.is_ns("prim");
    if !ns_ok || kind == prim::Constant || g.node(n).outputs().len() != 1 {
        return false;
    }
    let out = g.node(n).output(0);
    let ins = g.node(n).inputs().to_vec();
    // Conversions of a number wrapped in a tensor give back the number.
    if [
        aten::Float,
        aten::Int,
        aten::FloatImplicit,
        aten::IntImplicit,
        aten::ScalarImplicit,
    ]
    .contains(&kind)
    {
        if ins.len() == 1 && g.node(g.value(ins[0]).node()).kind() == prim::NumToTensor {
            let inner = g.node(g.value(ins[0]).node()).input(0);
            crate::graph_update!(
                "(x.NumToTensor() == x) is replaced with {}",
                g.display_name(inner)
            );
            g.replace_all_uses_with(out, inner);
            return true;
        }
        return false;
    }
    let Some(name) = node_full_name(g, n) else {
        return false;
    };
    match name.as_str() {
        "aten::_grad_sum_to_size" => {
            if g.must_be_none(ins[1]) {
                g.replace_all_uses_with(out, ins[0]);
                return true;
            }
            let mut changed = false;
            for u in g.value(out).uses().to_vec() {
                if node_full_name(g, u.user).as_deref() == Some("aten::_grad_sum_to_size")
                    && matches!(&**g.value(g.node(u.user).input(1)).ty(), Type::List(_))
                {
                    g.replace_input(u.user, 0, ins[0]);
                    changed = true;
                }
            }
            changed
        }
        "aten::expand" if shape => {
            let (Some(IValue::List(l)), Some(t)) = (g.to_ivalue(ins[1]), tensor_type(g, ins[0]))
            else {
                return false;
            };
            let Some(sizes) = concrete_sizes(t) else {
                return false;
            };
            let want: Vec<i64> = l.items.read().iter().filter_map(|v| v.as_int()).collect();
            if want == sizes {
                crate::graph_update!(
                    "(x.expand(x.size()) == x) is replaced with {}",
                    g.display_name(ins[0])
                );
                g.replace_all_uses_with(out, ins[0]);
                return true;
            }
            false
        }
        "aten::t" => {
            let inner = g.value(ins[0]).node();
            if node_full_name(g, inner).as_deref() == Some("aten::t") {
                let x = g.node(inner).input(0);
                crate::graph_update!("(x.t().t() == x) is replaced with {}", g.display_name(x));
                g.replace_all_uses_with(out, x);
                return true;
            }
            false
        }
        "aten::type_as" if shape => {
            let (Some(a), Some(b)) = (tensor_type(g, ins[0]), tensor_type(g, ins[1])) else {
                return false;
            };
            if a.dtype.is_some() && a.dtype == b.dtype && a.device.is_some() && a.device == b.device
            {
                g.replace_all_uses_with(out, ins[0]);
                return true;
            }
            false
        }
        "aten::size" if shape => {
            let Some(sizes) = tensor_type(g, ins[0]).and_then(concrete_sizes) else {
                return false;
            };
            replace_with_constant(g, n, out, &IValue::int_list(sizes));
            true
        }
        "aten::len.t" if shape => {
            let src = g.value(ins[0]).node();
            if node_full_name(g, src).as_deref() != Some("aten::size")
                || g.value(ins[0]).uses().len() != 1
            {
                return false;
            }
            let Some(rank) = tensor_type(g, g.node(src).input(0)).and_then(|t| t.rank()) else {
                return false;
            };
            replace_with_constant(g, n, out, &IValue::Int(rank as i64));
            true
        }
        "aten::size.int" if shape => {
            let Some(t) = tensor_type(g, ins[0]) else {
                return false;
            };
            let (Some(sizes), Some(IValue::Int(i))) = (t.sizes.clone(), g.to_ivalue(ins[1])) else {
                return false;
            };
            let nd = sizes.len() as i64;
            let k = if i < 0 { nd + i } else { i };
            match (k >= 0 && k < nd).then(|| sizes[k as usize]).flatten() {
                Some(s) => {
                    replace_with_constant(g, n, out, &IValue::Int(s));
                    true
                }
                None => false,
            }
        }
        "aten::is_floating_point" | "aten::is_complex" if shape => {
            let Some(dt) = tensor_type(g, ins[0]).and_then(|t| t.dtype) else {
                return false;
            };
            // ts-tensor has no complex dtypes: a known dtype is never complex.
            let v = name == "aten::is_floating_point" && dt.is_floating_point();
            replace_with_constant(g, n, out, &IValue::Bool(v));
            true
        }
        "prim::dtype" if shape => {
            let Some(dt) = tensor_type(g, ins[0]).and_then(|t| t.dtype) else {
                return false;
            };
            replace_with_constant(g, n, out, &IValue::Int(dt.scalar_type_index()));
            true
        }
        "prim::device" if shape => {
            let Some(d) = tensor_type(g, ins[0]).and_then(|t| t.device) else {
                return false;
            };
            replace_with_constant(g, n, out, &IValue::Device(d));
            true
        }
        "aten::device.with_index" if shape => {
            let (Some(IValue::String(ty)), idx) = (g.to_ivalue(ins[0]), g.to_ivalue(ins[1])) else {
                return false;
            };
            let index = idx.and_then(|v| v.as_int()).unwrap_or(0);
            let Some(d) = ts_tensor::Device::parse(&format!("{ty}:{index}")) else {
                return false;
            };
            replace_with_constant(g, n, out, &IValue::Device(d));
            true
        }
        "aten::dim" if shape => {
            let Some(rank) = tensor_type(g, ins[0]).and_then(|t| t.rank()) else {
                return false;
            };
            replace_with_constant(g, n, out, &IValue::Int(rank as i64));
            true
        }
        "prim::is_cuda" if shape => {
            let Some(d) = tensor_type(g, ins[0]).and_then(|t| t.device) else {
                return false;
            };
            replace_with_constant(g, n, out, &IValue::Bool(d != ts_tensor::Device::Cpu));
            true
        }
        _ => false,
    }
}

fn concrete_sizes(t: &ts_core::TensorType) -> Option<Vec<i64>> {
    t.sizes.as_ref()?.iter().copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn shape_peepholes_follow_the_types() {
        let src = "graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):\n  %one : int = prim::Constant[value=1]()\n  %d : int = aten::dim(%x)\n  %s : int[] = aten::size(%x)\n  %k : int = aten::size(%x, %one)\n  %f : bool = aten::is_floating_point(%x)\n  %t : int = prim::dtype(%x)\n  %a : Tensor = aten::t(%x)\n  %b : Tensor = aten::t(%a)\n  %r : (int, int[], int, bool, int, Tensor) = prim::TupleConstruct(%d, %s, %k, %f, %t, %b)\n  return (%r)\n";
        let mut g = parse_ir(src).unwrap();
        assert!(peephole_optimize(&mut g, false));
        verify(&g).unwrap();
        FileCheck::new()
            .check_dag("int[] = prim::Constant[value=[2, 3]]()")
            .check_dag("int = prim::Constant[value=6]()")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
        FileCheck::new()
            .check_not("aten::dim")
            .check_not("aten::size")
            .check_not("aten::is_floating_point")
            .check_not("prim::dtype")
            .check_not("aten::t(")
            .check("prim::TupleConstruct(")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
        // Without shape peepholes only x.t().t() goes.
        let mut g = parse_ir(src).unwrap();
        peephole_optimize(&mut g, true);
        FileCheck::new()
            .check("aten::dim")
            .check("aten::size")
            .check_not("aten::t(")
            .run_graph(&g)
            .unwrap();
    }
}
