//! Shape and dtype propagation (PyTorch's `PropagateInputShapes`): starting from the graph's
//! input types (refined by the executor from the argument spec: dtype, rank, device,
//! requires_grad), every tensor output whose properties follow from its inputs gets a refined
//! type: `Float(*, *, device=cpu)`, with sizes (and contiguous strides) when the inputs' sizes
//! are known, as for tensor constants. Branch outputs take what both branches agree on; loop
//! bodies are propagated to a fixed point.
//!
//! The rules are conservative: a property is only stated when it holds for every run the
//! input types allow (unknown operators keep plain `Tensor`), because the peephole pass turns
//! refined types into constants.

use std::sync::Arc;

use ts_core::{prim, IValue, TensorType, Type, TypeRef};
use ts_ir::{BlockId, Graph, NodeId, ValueId};
use ts_tensor::promote::ResultTypeState;
use ts_tensor::{DType, Scalar};

use crate::node_schema::node_full_name;

/// Propagates tensor types through `g`; returns whether any type changed.
pub fn propagate_input_shapes(g: &mut Graph) -> bool {
    let top = g.block();
    let changed = propagate_block(g, top);
    crate::graph_dump!("After PropagateInputShapes: ", g);
    changed
}

/// `g`'s tensor inputs typed as `types` says (`None` keeps an input's type).
pub fn specialize_input_types(g: &mut Graph, types: &[Option<TensorType>]) {
    let inputs = g.inputs().to_vec();
    for (v, t) in inputs.into_iter().zip(types) {
        if let Some(t) = t {
            if g.value(v).ty().is_tensor() {
                g.set_type(v, Arc::new(Type::Tensor(t.clone())));
            }
        }
    }
}

/// Types the tensor read by each `prim::GetAttr` chain from the graph's first input (a
/// method's `self`) as `resolve` says for that attribute path (`["fc1", "weight"]`), as a
/// profiling run would observe them; the executor keys its plans on those types. Nothing is
/// typed when the graph assigns an attribute or still calls a method (an attribute could then
/// change while the graph runs).
pub fn specialize_attribute_types(
    g: &mut Graph,
    resolve: &dyn Fn(&[String]) -> Option<TensorType>,
) {
    let Some(&this) = g.inputs().first() else {
        return;
    };
    let nodes = g.all_nodes();
    if nodes.iter().any(|&n| {
        let k = g.node(n).kind();
        k == prim::SetAttr || k == prim::CallMethod
    }) {
        return;
    }
    let mut paths: std::collections::HashMap<ValueId, Vec<String>> =
        std::collections::HashMap::from([(this, Vec::new())]);
    // `all_nodes` lists a node after the nodes that define its inputs.
    for n in nodes {
        let node = g.node(n);
        if node.kind() != prim::GetAttr || node.inputs().len() != 1 {
            continue;
        }
        let Some(base) = paths.get(&node.inputs()[0]) else {
            continue;
        };
        let Some(name) = node.s(ts_core::attr::name) else {
            continue;
        };
        let mut path = base.clone();
        path.push(name.to_string());
        let out = node.output(0);
        if g.value(out).ty().is_tensor() {
            if let Some(t) = resolve(&path) {
                g.set_type(out, Arc::new(Type::Tensor(t)));
            }
        } else {
            paths.insert(out, path);
        }
    }
}

/// Resets every tensor type refinement except on constants (PyTorch's
/// `RemoveTensorTypeSpecializations`): what the graph was specialized to stays in the plan's
/// key, not in the printed graph.
pub fn remove_tensor_type_specializations(g: &mut Graph) {
    let top = g.block();
    remove_in_block(g, top);
}

fn remove_in_block(g: &mut Graph, b: BlockId) {
    for v in g.block_inputs(b).to_vec() {
        reset(g, v);
    }
    for n in g.block_nodes(b) {
        for sb in g.node(n).blocks().to_vec() {
            remove_in_block(g, sb);
        }
        let k = g.node(n).kind();
        if k == prim::Constant || k == prim::TypeCheck || k == prim::TensorExprGroup {
            continue;
        }
        for v in g.node(n).outputs().to_vec() {
            reset(g, v);
        }
    }
}

fn reset(g: &mut Graph, v: ValueId) {
    if let Some(t) = g.value(v).ty().tensor_type() {
        if !t.is_unspecialized() {
            g.set_type(v, Type::tensor());
        }
    }
}

fn tensor(t: TensorType) -> TypeRef {
    Arc::new(Type::Tensor(t))
}

fn tt(g: &Graph, v: ValueId) -> Option<TensorType> {
    g.value(v).ty().tensor_type().cloned()
}

fn contiguous(sizes: &[i64]) -> Vec<Option<i64>> {
    let mut strides = vec![Some(1); sizes.len()];
    let mut acc = 1i64;
    for i in (0..sizes.len()).rev() {
        strides[i] = Some(acc);
        acc = acc.saturating_mul(sizes[i].max(1));
    }
    strides
}

/// A fresh result: given dtype/device/requires_grad and either full sizes or only a rank.
fn fresh(
    dtype: Option<DType>,
    device: Option<ts_tensor::Device>,
    rg: Option<bool>,
    shape: Shape,
) -> TensorType {
    let (sizes, strides) = match shape {
        Shape::Unknown => (None, None),
        Shape::Rank(r) => (Some(vec![None; r]), None),
        Shape::Sizes(s) => {
            let st = contiguous(&s);
            (Some(s.into_iter().map(Some).collect()), Some(st))
        }
    };
    TensorType {
        dtype,
        device,
        sizes,
        strides,
        requires_grad: rg,
        undefined: None,
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Shape {
    Unknown,
    Rank(usize),
    Sizes(Vec<i64>),
}

fn shape_of(t: &TensorType) -> Shape {
    match &t.sizes {
        None => Shape::Unknown,
        Some(s) => match s.iter().copied().collect::<Option<Vec<i64>>>() {
            Some(full) => Shape::Sizes(full),
            None => Shape::Rank(s.len()),
        },
    }
}

fn rank_of(s: &Shape) -> Option<usize> {
    match s {
        Shape::Unknown => None,
        Shape::Rank(r) => Some(*r),
        Shape::Sizes(v) => Some(v.len()),
    }
}

fn broadcast(a: &Shape, b: &Shape) -> Shape {
    match (a, b) {
        (Shape::Sizes(x), Shape::Sizes(y)) => {
            let n = x.len().max(y.len());
            let mut out = vec![0; n];
            for i in 0..n {
                let xi = if i + x.len() >= n {
                    x[i + x.len() - n]
                } else {
                    1
                };
                let yi = if i + y.len() >= n {
                    y[i + y.len() - n]
                } else {
                    1
                };
                out[i] = if xi == 1 {
                    yi
                } else if yi == 1 || xi == yi {
                    xi
                } else {
                    // A mismatch fails at run time; say nothing.
                    return Shape::Unknown;
                };
            }
            Shape::Sizes(out)
        }
        _ => match (rank_of(a), rank_of(b)) {
            (Some(x), Some(y)) => Shape::Rank(x.max(y)),
            _ => Shape::Unknown,
        },
    }
}

fn same<T: PartialEq + Clone>(a: &Option<T>, b: &Option<T>) -> Option<T> {
    if a == b {
        a.clone()
    } else {
        None
    }
}

fn any_grad(ts: &[&TensorType]) -> Option<bool> {
    let mut all_known = true;
    for t in ts {
        match t.requires_grad {
            Some(true) => return Some(true),
            Some(false) => {}
            None => all_known = false,
        }
    }
    all_known.then_some(false)
}

fn scalar_of(ty: &Type) -> Option<Scalar> {
    match ty {
        Type::Int => Some(Scalar::Int(0)),
        Type::Bool => Some(Scalar::Bool(false)),
        // A Python float takes the default dtype: left unknown unless the tensor is floating.
        Type::Float => Some(Scalar::Float(0.0)),
        _ => None,
    }
}

/// The dtype of an arithmetic result of tensors (with known rank and dtype) and scalars.
fn promoted(tensors: &[&TensorType], scalars: &[Scalar], true_div: bool) -> Option<DType> {
    let mut st = ResultTypeState::default();
    let mut any_float = false;
    for t in tensors {
        let d = t.dtype?;
        any_float |= d.is_floating_point();
        st.add_tensor_parts(t.rank()?, d);
    }
    for s in scalars {
        if matches!(s, Scalar::Float(_)) && !any_float {
            return None;
        }
        st.add_scalar(*s);
    }
    let r = st.result();
    if true_div && !r.is_floating_point() {
        return None;
    }
    Some(r)
}

fn propagate_block(g: &mut Graph, b: BlockId) -> bool {
    let mut changed = false;
    for n in g.block_nodes(b) {
        changed |= propagate_node(g, n);
    }
    changed
}

fn set_output(g: &mut Graph, n: NodeId, i: usize, t: TensorType) -> bool {
    let o = g.node(n).output(i);
    if !g.value(o).ty().is_tensor() {
        return false;
    }
    let new = tensor(t);
    if **g.value(o).ty() == *new {
        return false;
    }
    g.set_type(o, new);
    true
}

fn merge_into(g: &mut Graph, v: ValueId, t: &TypeRef) -> bool {
    let cur = g.value(v).ty().clone();
    let (Some(a), Some(b)) = (cur.tensor_type(), t.tensor_type()) else {
        return false;
    };
    let m = a.merge(b);
    if m == *a {
        return false;
    }
    g.set_type(v, tensor(m));
    true
}

fn propagate_node(g: &mut Graph, n: NodeId) -> bool {
    let kind = g.node(n).kind();
    if kind == prim::If {
        let blocks = g.node(n).blocks().to_vec();
        let mut changed = false;
        for &b in &blocks {
            changed |= propagate_block(g, b);
        }
        for i in 0..g.node(n).outputs().len() {
            let o = g.node(n).output(i);
            let (t, f) = (
                g.value(g.block_outputs(blocks[0])[i]).ty().clone(),
                g.value(g.block_outputs(blocks[1])[i]).ty().clone(),
            );
            if let (Some(a), Some(b)) = (t.tensor_type(), f.tensor_type()) {
                if g.value(o).ty().is_tensor() {
                    changed |= set_output(g, n, i, a.merge(b));
                }
            }
        }
        return changed;
    }
    if kind == prim::Loop {
        return propagate_loop(g, n);
    }
    if g.node(n).outputs().is_empty() || !g.node(n).blocks().is_empty() {
        return false;
    }
    if !g
        .node(n)
        .outputs()
        .iter()
        .any(|&o| g.value(o).ty().is_tensor())
    {
        return false;
    }
    if kind == prim::ConstantChunk {
        let Some(t) = tt(g, g.node(n).input(0)) else {
            return false;
        };
        let r = fresh(
            t.dtype,
            t.device,
            t.requires_grad,
            match shape_of(&t) {
                Shape::Unknown => Shape::Unknown,
                s => Shape::Rank(rank_of(&s).unwrap_or(0)),
            },
        );
        let mut changed = false;
        for i in 0..g.node(n).outputs().len() {
            changed |= set_output(g, n, i, r.clone());
        }
        return changed;
    }
    match infer(g, n) {
        Some(t) => set_output(g, n, 0, t),
        None => false,
    }
}

fn propagate_loop(g: &mut Graph, n: NodeId) -> bool {
    let body = g.node(n).blocks()[0];
    let mut changed = false;
    // Body inputs start as the loop inputs; widen by the body outputs until stable.
    for i in 0..g.node(n).outputs().len() {
        let init = g.value(g.node(n).input(2 + i)).ty().clone();
        let bi = g.block_inputs(body)[1 + i];
        if g.value(bi).ty().is_tensor() && init.is_tensor() {
            g.set_type(bi, init);
        }
    }
    for _ in 0..8 {
        changed |= propagate_block(g, body);
        let mut widened = false;
        for i in 0..g.node(n).outputs().len() {
            let bo = g.value(g.block_outputs(body)[1 + i]).ty().clone();
            let bi = g.block_inputs(body)[1 + i];
            widened |= merge_into(g, bi, &bo);
        }
        if !widened {
            break;
        }
    }
    for i in 0..g.node(n).outputs().len() {
        let bi = g.value(g.block_inputs(body)[1 + i]).ty().clone();
        if let Some(t) = bi.tensor_type() {
            changed |= set_output(g, n, i, t.clone());
        }
    }
    changed
}

fn const_int(g: &Graph, v: ValueId) -> Option<i64> {
    g.to_ivalue(v).and_then(|x| x.as_int())
}

fn const_ints(g: &Graph, v: ValueId) -> Option<Vec<i64>> {
    match g.to_ivalue(v)? {
        IValue::List(l) => l.items.read().iter().map(|x| x.as_int()).collect(),
        IValue::Int(i) => Some(vec![i]),
        _ => {
            // A list literal of constants.
            let n = g.value(v).node();
            if g.node(n).kind() == prim::ListConstruct {
                g.node(n)
                    .inputs()
                    .iter()
                    .map(|&x| const_int(g, x))
                    .collect()
            } else {
                None
            }
        }
    }
}

/// The type of output 0 of `n`, when the rules know it.
fn infer(g: &Graph, n: NodeId) -> Option<TensorType> {
    let name = node_full_name(g, n)?;
    let ins = g.node(n).inputs().to_vec();
    let base = name
        .split('.')
        .next()
        .unwrap_or(&name)
        .trim_start_matches("aten::");
    let t0 = ins.first().and_then(|&v| tt(g, v));
    // Unary operators keeping the input's dtype and shape (for floating inputs).
    const SAME_TYPE: &[&str] = &[
        "relu",
        "relu_",
        "neg",
        "abs",
        "clone",
        "contiguous",
        "detach",
        "dropout",
        "dropout_",
        "alpha_dropout",
        "feature_dropout",
        "hardtanh",
        "hardtanh_",
        "leaky_relu",
        "gelu",
        "silu",
        "elu",
        "selu",
        "celu",
        "relu6",
        "hardswish",
        "hardsigmoid",
        "sigmoid",
        "tanh",
        "exp",
        "log",
        "log2",
        "log10",
        "log1p",
        "expm1",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "sinh",
        "cosh",
        "sqrt",
        "rsqrt",
        "erf",
        "erfc",
        "reciprocal",
        "softplus",
        "floor",
        "ceil",
        "round",
        "trunc",
        "frac",
        "softmax",
        "log_softmax",
        "batch_norm",
        "layer_norm",
        "group_norm",
        "instance_norm",
        "clamp",
        "clamp_min",
        "clamp_max",
        "zeros_like",
        "ones_like",
        "mish",
        "logsigmoid",
        "threshold",
        "sign",
    ];
    if SAME_TYPE.contains(&base) && name != "aten::softmax.Dimname" {
        let t = t0?;
        let floating = t.dtype.is_some_and(|d| d.is_floating_point());
        let keeps_ints = matches!(
            base,
            "relu"
                | "relu_"
                | "neg"
                | "abs"
                | "clone"
                | "contiguous"
                | "detach"
                | "zeros_like"
                | "ones_like"
                | "sign"
        );
        // softmax/clamp/... with extra dtype-changing arguments: only the plain forms.
        if (base == "softmax" || base == "log_softmax") && !g.must_be_none(*ins.get(2)?) {
            return None;
        }
        if (base == "zeros_like" || base == "ones_like")
            && ins.iter().skip(1).any(|&v| !g.must_be_none(v))
        {
            return None;
        }
        let dtype = if floating || keeps_ints {
            t.dtype
        } else {
            None
        };
        return Some(fresh(dtype, t.device, t.requires_grad, shape_of(&t)));
    }
    match name.as_str() {
        "aten::add.Tensor"
        | "aten::sub.Tensor"
        | "aten::mul.Tensor"
        | "aten::div.Tensor"
        | "aten::eq.Tensor"
        | "aten::ne.Tensor"
        | "aten::lt.Tensor"
        | "aten::le.Tensor"
        | "aten::gt.Tensor"
        | "aten::ge.Tensor"
        | "aten::where.self"
        | "aten::maximum"
        | "aten::minimum"
        | "aten::pow.Tensor_Tensor"
        | "aten::atan2" => {
            let (a, b) = if name == "aten::where.self" {
                (tt(g, ins[1])?, tt(g, ins[2])?)
            } else {
                (tt(g, ins[0])?, tt(g, ins[1])?)
            };
            let mut shape = broadcast(&shape_of(&a), &shape_of(&b));
            if name == "aten::where.self" {
                shape = broadcast(&shape, &shape_of(&tt(g, ins[0])?));
            }
            let cmp = ["eq", "ne", "lt", "le", "gt", "ge"].contains(&base);
            let dtype = if cmp {
                Some(DType::Bool)
            } else {
                promoted(&[&a, &b], &[], base == "div")
            };
            let rg = if cmp {
                Some(false)
            } else {
                any_grad(&[&a, &b])
            };
            Some(fresh(dtype, same(&a.device, &b.device), rg, shape))
        }
        "aten::add.Scalar"
        | "aten::sub.Scalar"
        | "aten::mul.Scalar"
        | "aten::div.Scalar"
        | "aten::eq.Scalar"
        | "aten::ne.Scalar"
        | "aten::lt.Scalar"
        | "aten::le.Scalar"
        | "aten::gt.Scalar"
        | "aten::ge.Scalar"
        | "aten::pow.Tensor_Scalar"
        | "aten::remainder.Scalar"
        | "aten::fmod.Scalar" => {
            let a = t0?;
            let s = scalar_of(g.value(ins[1]).ty())?;
            let cmp = ["eq", "ne", "lt", "le", "gt", "ge"].contains(&base);
            let dtype = if cmp {
                Some(DType::Bool)
            } else {
                promoted(&[&a], &[s], base == "div")
            };
            let rg = if cmp { Some(false) } else { a.requires_grad };
            Some(fresh(dtype, a.device, rg, shape_of(&a)))
        }
        "aten::mm" => {
            let (a, b) = (t0?, tt(g, ins[1])?);
            let shape = match (shape_of(&a), shape_of(&b)) {
                (Shape::Sizes(x), Shape::Sizes(y)) if x.len() == 2 && y.len() == 2 => {
                    Shape::Sizes(vec![x[0], y[1]])
                }
                _ => Shape::Rank(2),
            };
            Some(fresh(
                same(&a.dtype, &b.dtype),
                same(&a.device, &b.device),
                any_grad(&[&a, &b]),
                shape,
            ))
        }
        "aten::addmm" => {
            let (a, b, c) = (t0?, tt(g, ins[1])?, tt(g, ins[2])?);
            let dtype = same(&same(&a.dtype, &b.dtype), &c.dtype);
            Some(fresh(
                dtype,
                same(&b.device, &c.device),
                any_grad(&[&a, &b, &c]),
                Shape::Rank(2),
            ))
        }
        "aten::matmul" => {
            let (a, b) = (t0?, tt(g, ins[1])?);
            let (ra, rb) = (a.rank()?, b.rank()?);
            let r = match (ra, rb) {
                (1, 1) => 0,
                (2, 1) | (1, 2) => 1,
                (2, 2) => 2,
                (x, 1) | (1, x) => x - 1,
                (x, y) => x.max(y),
            };
            Some(fresh(
                same(&a.dtype, &b.dtype),
                same(&a.device, &b.device),
                any_grad(&[&a, &b]),
                Shape::Rank(r),
            ))
        }
        "aten::linear" => {
            let (a, w) = (t0?, tt(g, ins[1])?);
            let shape = match shape_of(&a) {
                Shape::Unknown => Shape::Unknown,
                s => Shape::Rank(rank_of(&s)?),
            };
            Some(fresh(
                same(&a.dtype, &w.dtype),
                same(&a.device, &w.device),
                any_grad(&[&a, &w]),
                shape,
            ))
        }
        "aten::t" => {
            let a = t0?;
            let shape = match shape_of(&a) {
                Shape::Sizes(mut s) => {
                    s.reverse();
                    Shape::Sizes(s)
                }
                s => s,
            };
            // A view: its strides follow the input's, not contiguity.
            let mut r = fresh(a.dtype, a.device, a.requires_grad, shape);
            r.strides = None;
            Some(r)
        }
        "aten::transpose.int"
        | "aten::permute"
        | "aten::slice.Tensor"
        | "aten::expand_as"
        | "aten::type_as"
        | "aten::masked_fill.Scalar"
        | "aten::masked_fill.Tensor"
        | "aten::conv1d"
        | "aten::conv2d"
        | "aten::conv3d"
        | "aten::max_pool1d"
        | "aten::max_pool2d"
        | "aten::max_pool3d"
        | "aten::avg_pool1d"
        | "aten::avg_pool2d"
        | "aten::avg_pool3d"
        | "aten::adaptive_avg_pool1d"
        | "aten::adaptive_avg_pool2d"
        | "aten::adaptive_avg_pool3d"
        | "aten::adaptive_max_pool2d"
        | "aten::pad"
        | "aten::constant_pad_nd"
        | "aten::_convolution"
        | "aten::cumsum" => {
            let a = t0?;
            let mut dtype = a.dtype;
            if name == "aten::type_as" {
                dtype = tt(g, ins[1])?.dtype;
            }
            if name == "aten::cumsum"
                && (!g.must_be_none(*ins.get(2)?) || !a.dtype?.is_floating_point())
            {
                return None;
            }
            if name.starts_with("aten::conv") || name == "aten::_convolution" {
                let w = tt(g, ins[1])?;
                dtype = same(&a.dtype, &w.dtype);
            }
            let rank = rank_of(&shape_of(&a));
            Some(fresh(
                dtype,
                a.device,
                a.requires_grad,
                rank.map_or(Shape::Unknown, Shape::Rank),
            ))
        }
        "aten::unsqueeze"
        | "aten::select.int"
        | "aten::squeeze.dim"
        | "aten::flatten.using_ints"
        | "aten::view"
        | "aten::reshape"
        | "aten::sum.dim_IntList"
        | "aten::mean.dim"
        | "aten::sum"
        | "aten::mean"
        | "aten::embedding"
        | "aten::stack"
        | "aten::cat"
        | "aten::to.dtype"
        | "aten::argmax"
        | "aten::argmin" => infer_rank_changing(g, n, &name, &ins),
        _ => None,
    }
}

fn infer_rank_changing(g: &Graph, _n: NodeId, name: &str, ins: &[ValueId]) -> Option<TensorType> {
    let list_elems = |v: ValueId| -> Option<Vec<TensorType>> {
        let ln = g.value(v).node();
        if g.node(ln).kind() != prim::ListConstruct {
            return None;
        }
        g.node(ln).inputs().iter().map(|&x| tt(g, x)).collect()
    };
    if name == "aten::cat" || name == "aten::stack" {
        let elems = list_elems(ins[0])?;
        let first = elems.first()?;
        let mut dtype = first.dtype;
        let mut device = first.device;
        let mut rank = first.rank();
        for e in &elems[1..] {
            dtype = same(&dtype, &e.dtype);
            device = same(&device, &e.device);
            rank = same(&rank, &e.rank());
        }
        let refs: Vec<&TensorType> = elems.iter().collect();
        let r = rank? + usize::from(name == "aten::stack");
        return Some(fresh(dtype, device, any_grad(&refs), Shape::Rank(r)));
    }
    let a = tt(g, ins[0])?;
    let r = a.rank();
    let keep = |shape: Shape| Some(fresh(a.dtype, a.device, a.requires_grad, shape));
    match name {
        "aten::unsqueeze" => keep(Shape::Rank(r? + 1)),
        "aten::select.int" => keep(Shape::Rank(r?.checked_sub(1)?)),
        "aten::squeeze.dim" => {
            // The dim goes only when its size is 1.
            let d = const_int(g, ins[1])?;
            let sizes = a.sizes.as_ref()?;
            let k = if d < 0 { d + sizes.len() as i64 } else { d };
            match sizes.get(usize::try_from(k).ok()?)? {
                Some(1) => keep(Shape::Rank(sizes.len() - 1)),
                Some(_) => keep(Shape::Rank(sizes.len())),
                None => None,
            }
        }
        "aten::flatten.using_ints" => {
            let r = r? as i64;
            if r == 0 {
                return keep(Shape::Rank(1));
            }
            let norm = |d: i64| if d < 0 { d + r } else { d };
            let (s, e) = (norm(const_int(g, ins[1])?), norm(const_int(g, ins[2])?));
            if s < 0 || e >= r || s > e {
                return None;
            }
            keep(Shape::Rank((r - (e - s)) as usize))
        }
        "aten::view" | "aten::reshape" => {
            let sizes = const_ints(g, ins[1])?;
            match shape_of(&a) {
                Shape::Sizes(src) if sizes.iter().filter(|&&s| s == -1).count() <= 1 => {
                    let total: i64 = src.iter().product();
                    let known: i64 = sizes.iter().filter(|&&s| s != -1).product();
                    let out: Vec<i64> = sizes
                        .iter()
                        .map(|&s| {
                            if s == -1 && known != 0 {
                                total / known
                            } else {
                                s
                            }
                        })
                        .collect();
                    if out.iter().product::<i64>() != total {
                        return None;
                    }
                    let mut t = fresh(a.dtype, a.device, a.requires_grad, Shape::Sizes(out));
                    if name == "aten::view" {
                        t.strides = None;
                    }
                    Some(t)
                }
                _ => {
                    let mut t = fresh(a.dtype, a.device, a.requires_grad, Shape::Rank(sizes.len()));
                    t.strides = None;
                    Some(t)
                }
            }
        }
        "aten::sum" | "aten::mean" => {
            if !g.must_be_none(*ins.get(1)?) {
                return None;
            }
            let dtype = match a.dtype? {
                d if d.is_floating_point() => d,
                _ if name == "aten::sum" => DType::Int64,
                _ => return None,
            };
            Some(fresh(
                Some(dtype),
                a.device,
                a.requires_grad,
                Shape::Sizes(vec![]),
            ))
        }
        "aten::sum.dim_IntList" | "aten::mean.dim" => {
            if !g.must_be_none(*ins.get(3)?) {
                return None;
            }
            let dims = const_ints(g, ins[1])?;
            let keepdim = matches!(g.to_ivalue(ins[2])?, IValue::Bool(true));
            let dtype = match a.dtype? {
                d if d.is_floating_point() => d,
                _ if name == "aten::sum.dim_IntList" => DType::Int64,
                _ => return None,
            };
            let r = r?;
            // An empty dim list reduces everything.
            let out = if keepdim {
                r
            } else if dims.is_empty() {
                0
            } else {
                r.checked_sub(dims.len())?
            };
            Some(fresh(
                Some(dtype),
                a.device,
                a.requires_grad,
                Shape::Rank(out),
            ))
        }
        "aten::argmax" | "aten::argmin" => {
            let keepdim = matches!(g.to_ivalue(*ins.get(2)?)?, IValue::Bool(true));
            let rank = if g.must_be_none(ins[1]) {
                if keepdim {
                    r?
                } else {
                    0
                }
            } else if keepdim {
                r?
            } else {
                r?.checked_sub(1)?
            };
            Some(fresh(
                Some(DType::Int64),
                a.device,
                Some(false),
                Shape::Rank(rank),
            ))
        }
        "aten::embedding" => {
            let idx = tt(g, ins[1])?;
            Some(fresh(
                a.dtype,
                a.device,
                a.requires_grad,
                Shape::Rank(idx.rank()? + 1),
            ))
        }
        "aten::to.dtype" => {
            let d = DType::from_scalar_type_index(const_int(g, ins[1])?)?;
            let rank = rank_of(&shape_of(&a));
            let mut t = fresh(
                Some(d),
                a.device,
                None,
                rank.map_or(Shape::Unknown, Shape::Rank),
            );
            if !d.is_floating_point() {
                t.requires_grad = Some(false);
            }
            Some(t)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_ir::{parse_ir, verify, FileCheck};

    fn weight_type(path: &[String]) -> Option<TensorType> {
        (path == ["fc", "weight"]).then(|| TensorType {
            dtype: Some(DType::Float32),
            sizes: Some(vec![None, None]),
            requires_grad: Some(true),
            ..TensorType::default()
        })
    }

    const MODULE_GRAPH: &str = "graph(%self : __torch__.M, %x : Tensor):\n  %fc : __torch__.L = prim::GetAttr[name=\"fc\"](%self)\n  %w : Tensor = prim::GetAttr[name=\"weight\"](%fc)\n  %b : Tensor = prim::GetAttr[name=\"bias\"](%fc)\n  %y : Tensor = aten::add(%w, %b, %b)\n  return (%y)\n";

    #[test]
    fn attribute_reads_take_the_observed_types() {
        let mut g = parse_ir(MODULE_GRAPH).unwrap();
        specialize_attribute_types(&mut g, &weight_type);
        FileCheck::new()
            .check("Float(*, *, requires_grad=1")
            .check("prim::GetAttr[name=\"weight\"]")
            .check_next("%b : Tensor = prim::GetAttr")
            .run(&g.to_string())
            .unwrap();
    }

    #[test]
    fn attribute_types_stay_unknown_when_the_graph_assigns_attributes() {
        let src = MODULE_GRAPH.replace(
            "  return (%y)",
            "   = prim::SetAttr[name=\"weight\"](%fc, %y)\n  return (%y)",
        );
        let mut g = parse_ir(&src).unwrap();
        specialize_attribute_types(&mut g, &weight_type);
        assert!(!g.to_string().contains("Float("), "{g}");
    }

    #[test]
    fn propagates_dtype_and_rank() {
        let mut g = parse_ir(
            "graph(%x : Float(*, *, requires_grad=0, device=cpu), %w : Float(*, *, requires_grad=0, device=cpu), %i : Long(*, requires_grad=0, device=cpu)):\n  %one : int = prim::Constant[value=1]()\n  %a : Tensor = aten::mm(%x, %w)\n  %b : Tensor = aten::relu(%a)\n  %c : Tensor = aten::add(%b, %one, %one)\n  %d : Tensor = aten::gt(%c, %one)\n  %e : Tensor = aten::unsqueeze(%c, %one)\n  %f : Tensor = aten::mul(%i, %one)\n  %r : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%c, %d, %e, %f)\n  return (%r)\n",
        )
        .unwrap();
        assert!(propagate_input_shapes(&mut g));
        verify(&g).unwrap();
        FileCheck::new()
            .check("%a : Float(*, *, requires_grad=0, device=cpu) = aten::mm")
            .check("%c : Float(*, *, requires_grad=0, device=cpu) = aten::add")
            .check("%d : Bool(*, *, requires_grad=0, device=cpu) = aten::gt")
            .check("%e : Float(*, *, *, requires_grad=0, device=cpu) = aten::unsqueeze")
            .check("%f : Long(*, requires_grad=0, device=cpu) = aten::mul")
            .run_graph(&g)
            .unwrap_or_else(|e| panic!("{e}\n{g}"));
        remove_tensor_type_specializations(&mut g);
        assert!(!g.to_string().contains("Float("), "{g}");
    }
}
