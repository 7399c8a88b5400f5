//! Profiling points (PyTorch's `ProfilingRecord::instrumentGraph` and
//! `RemoveProfileNodesAndSpecializeTypes`).
//!
//! PyTorch's profiling executor puts a `prim::profile` node in front of every tensor use that
//! a later optimization may specialize (the inputs of the operators its tensor-expression
//! fuser supports and of `dim`, `size`, `dtype`, `t`, `mm`, ...; and the uses of values those
//! operators produce), runs its shape-independent optimizations with the profile nodes in
//! place, then replaces each profile node by the value it observed, typed as observed. The
//! nodes are pass-through, but they keep the optimizer from merging or rewriting across them
//! (two `t(x)` read different profile outputs, so CSE keeps both), which shapes the optimized
//! graph. torchscript-rs places the same nodes at the same points so that its optimized graphs
//! are PyTorch's; the "observed" types come from the argument spec and shape propagation
//! rather than from a profiling run. This is also where a profiling executor with guards will
//! record real observations.

use ts_core::{prim, Type};
use ts_ir::{BlockId, Graph, NodeId, ValueId};

use crate::node_schema::node_full_name;

/// Operators (overload full names) of PyTorch's tensor-expression fuser's elementwise set.
const TE_ELEMENTWISE: &[&str] = &[
    "aten::add.Scalar",
    "aten::_cast_Float",
    "aten::sub.Scalar",
    "aten::mul.Scalar",
    "aten::div.Scalar",
    "aten::eq.Scalar",
    "aten::ne.Scalar",
    "aten::ge.Scalar",
    "aten::gt.Scalar",
    "aten::le.Scalar",
    "aten::lt.Scalar",
    "aten::pow.Tensor_Scalar",
    "aten::clamp",
    "aten::to.dtype",
    "aten::to.device",
    "aten::to.dtype_layout",
    "aten::to.prim_Device",
    "aten::to.prim_dtype",
    "aten::isnan",
    "aten::lgamma",
    "aten::log10",
    "aten::log",
    "aten::log2",
    "aten::log1p",
    "aten::exp",
    "aten::erf",
    "aten::erfc",
    "aten::fmod.Scalar",
    "aten::cos",
    "aten::sin",
    "aten::tan",
    "aten::acos",
    "aten::asin",
    "aten::atan",
    "aten::cosh",
    "aten::sinh",
    "aten::tanh",
    "aten::hardtanh",
    "aten::hardsigmoid",
    "aten::hardswish",
    "aten::hardshrink",
    "aten::sqrt",
    "aten::rsqrt",
    "aten::abs",
    "aten::floor",
    "aten::ceil",
    "aten::round",
    "aten::trunc",
    "aten::threshold",
    "aten::sigmoid",
    "aten::relu",
    "aten::leaky_relu",
    "aten::softplus",
    "aten::relu6",
    "aten::gelu",
    "aten::neg",
    "aten::reciprocal",
    "aten::expm1",
    "aten::frac",
    "aten::__and__.Scalar",
    "aten::__or__.Scalar",
    "aten::__xor__.Scalar",
    "aten::__lshift__.Scalar",
    "aten::__rshift__.Scalar",
    "aten::where.Scalar",
    "aten::add.Tensor",
    "aten::where.ScalarOther",
    "aten::type_as",
    "aten::sub.Tensor",
    "aten::mul.Tensor",
    "aten::div.Tensor",
    "aten::eq.Tensor",
    "aten::ne.Tensor",
    "aten::ge.Tensor",
    "aten::gt.Tensor",
    "aten::le.Tensor",
    "aten::lt.Tensor",
    "aten::lerp.Scalar",
    "aten::fmod.Tensor",
    "aten::atan2",
    "aten::remainder.Tensor",
    "aten::__and__.Tensor",
    "aten::__or__.Tensor",
    "aten::__xor__.Tensor",
    "aten::__lshift__.Tensor",
    "aten::__rshift__.Tensor",
    "aten::min.other",
    "aten::max.other",
    "aten::lerp.Tensor",
    "aten::addcmul",
    "aten::where.self",
    "aten::where.ScalarSelf",
    // Non-elementwise operators the fuser also takes.
    "aten::batch_norm",
    "aten::conv2d",
    "aten::matmul",
    "aten::cat",
    "aten::unsqueeze",
];

/// Whether PyTorch's tensor-expression fuser would take `n` (`tensorexpr::isSupported`).
pub fn te_supported(g: &Graph, n: NodeId) -> bool {
    let k = g.node(n).kind();
    if k == prim::ConstantChunk || k == prim::ListConstruct || k == prim::TensorExprGroup {
        return true;
    }
    if !k.is_ns("aten") {
        return false;
    }
    let Some(schema) = crate::node_schema::node_schema(g, n) else {
        return false;
    };
    let full = crate::node_schema::full_name(&schema);
    if !TE_ELEMENTWISE.contains(&full.as_str()) {
        return false;
    }
    // A `Scalar` value of unknown kind decides the output type at run time.
    if g.node(n)
        .inputs()
        .iter()
        .any(|&v| matches!(&**g.value(v).ty(), Type::Number))
    {
        return false;
    }
    // A non-constant dtype or device does too.
    for (i, a) in schema.arguments.iter().enumerate() {
        if a.name == "dtype" || a.name == "device" {
            if let Some(&v) = g.node(n).inputs().get(i) {
                if g.to_ivalue(v).is_none() {
                    return false;
                }
            }
        }
    }
    true
}

fn needs_profiled_inputs(g: &Graph, n: NodeId) -> bool {
    if te_supported(g, n) {
        return true;
    }
    let k = g.node(n).kind();
    if [
        prim::AutogradAdd,
        prim::AutogradAnyNonZero,
        prim::AutogradAllNonZero,
        prim::AutogradAllZero,
        prim::AutogradZero,
        prim::dtype,
        prim::device,
        prim::is_cuda,
        prim::DifferentiableGraph,
    ]
    .contains(&k)
    {
        return true;
    }
    matches!(
        node_full_name(g, n).as_deref(),
        Some(
            "aten::dim"
                | "aten::size"
                | "aten::size.int"
                | "aten::expand"
                | "aten::is_floating_point"
                | "aten::type_as"
                | "aten::t"
                | "aten::mm"
        )
    )
}

fn needs_profiled_output(g: &Graph, n: NodeId) -> bool {
    let k = g.node(n).kind();
    k != prim::Param && (te_supported(g, n) || k == prim::AutogradAdd || k == prim::AutogradZero)
}

/// Inserts the profiling points PyTorch's profiling executor would; returns how many.
pub fn insert_profile_nodes(g: &mut Graph) -> usize {
    let top = g.block();
    instrument_block(g, top)
}

fn is_plain_tensor(g: &Graph, v: ValueId) -> bool {
    matches!(&**g.value(v).ty(), Type::Tensor(_))
}

fn insert_profile(g: &mut Graph, user: NodeId, offset: usize) {
    let v = g.node(user).input(offset);
    let ty = g.value(v).ty().clone();
    let p = g.create(prim::profile, &[v], 0);
    g.add_output(p, ty.clone());
    g.set_attr(
        p,
        ts_core::attr::profiled_type,
        ts_ir::AttributeValue::Type(ty),
    );
    g.insert_before(p, user);
    let out = g.node(p).output(0);
    g.replace_input(user, offset, out);
}

fn instrument_block(g: &mut Graph, b: BlockId) -> usize {
    let mut count = 0;
    for n in g.block_nodes(b) {
        for i in 0..g.node(n).inputs().len() {
            let v = g.node(n).input(i);
            if is_plain_tensor(g, v)
                && (needs_profiled_inputs(g, n) || needs_profiled_output(g, g.value(v).node()))
            {
                insert_profile(g, n, i);
                count += 1;
            }
        }
        for sb in g.node(n).blocks().to_vec() {
            count += instrument_block(g, sb);
        }
    }
    let ret = g.return_node(b);
    for i in 0..g.node(ret).inputs().len() {
        let v = g.node(ret).input(i);
        if g.value(v).ty().is_tensor() && needs_profiled_output(g, g.value(v).node()) {
            insert_profile(g, ret, i);
            count += 1;
        }
    }
    count
}

/// Removes every profiling point, giving each profiled value what its profile recorded (merged
/// with its own type).
pub fn remove_profile_nodes_and_specialize_types(g: &mut Graph) {
    for n in g.all_nodes() {
        if !g.is_alive(n) || g.node(n).kind() != prim::profile {
            continue;
        }
        let input = g.node(n).input(0);
        let out = g.node(n).output(0);
        g.replace_all_uses_with(out, input);
        let observed = g.node(n).ty(ts_core::attr::profiled_type).cloned();
        if let (Some(obs), Some(cur)) = (
            observed.as_ref().and_then(|t| t.tensor_type().cloned()),
            g.value(input).ty().tensor_type().cloned(),
        ) {
            if !obs.is_unspecialized() {
                let merged = if cur.is_unspecialized() {
                    obs
                } else {
                    cur.merge(&obs)
                };
                g.set_type(input, std::sync::Arc::new(Type::Tensor(merged)));
            }
        }
        let _ = g.destroy_node(n);
    }
}

/// Records on each profiling point the type its value has now (after shape propagation): what
/// a profiling run would have observed, as far as the argument spec determines it.
pub fn record_profiled_types(g: &mut Graph) {
    for n in g.all_nodes() {
        if g.node(n).kind() == prim::profile {
            let ty = g.value(g.node(n).input(0)).ty().clone();
            g.set_attr(
                n,
                ts_core::attr::profiled_type,
                ts_ir::AttributeValue::Type(ty),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    #[test]
    fn profiles_fuser_and_shape_dependent_uses() {
        let mut g = parse_ir(
            "graph(%x : Tensor, %w : Tensor):\n  %none : NoneType = prim::Constant()\n  %one : int = prim::Constant[value=1]()\n  %t : Tensor = aten::t(%w)\n  %m : Tensor = aten::mm(%x, %t)\n  %r : Tensor = aten::relu(%m)\n  %s : Tensor = aten::softmax(%r, %one, %none)\n  return (%s)\n",
        )
        .unwrap();
        // t(w): 1, mm(x, t): 2, relu(m): 1, softmax(relu output): 1.
        assert_eq!(insert_profile_nodes(&mut g), 5);
        verify(&g).unwrap();
        FileCheck::new()
            .check("prim::profile[")
            .check_same("(%w)")
            .check("aten::t(")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
        remove_profile_nodes_and_specialize_types(&mut g);
        verify(&g).unwrap();
        assert!(!g.to_string().contains("prim::profile"), "{g}");
        FileCheck::new()
            .check("aten::t(%w)")
            .check("aten::mm(%x, %t)")
            .run_graph(&g)
            .unwrap();
    }
}
