//! Post-emission canonicalization PyTorch applies: loops with both a trip count and a
//! modified condition become while loops, and aliased operator names are normalized.

use ts_core::{prim, IValue, Symbol, Type};
use ts_ir::{BlockId, Graph, NodeId};

fn is_const_true(g: &Graph, v: ts_ir::ValueId) -> bool {
    g.to_ivalue(v).and_then(|x| x.as_bool()) == Some(true)
}

/// PyTorch's `CanonicalizeModifiedLoops`.
pub fn canonicalize_modified_loops(g: &mut Graph) {
    let top = g.block();
    canonicalize_block(g, top);
}

fn canonicalize_block(g: &mut Graph, b: BlockId) {
    for n in g.block_nodes(b) {
        for blk in g.node(n).blocks().to_vec() {
            canonicalize_block(g, blk);
        }
        if g.node(n).kind() == prim::Loop {
            canonicalize_loop(g, n);
        }
    }
}

fn canonicalize_loop(g: &mut Graph, n: NodeId) {
    let body = g.node(n).blocks()[0];
    let max_trip = g.node(n).input(0);
    let input_cond = g.node(n).input(1);
    let next_cond = g.block_outputs(body)[0];
    let counter = g.block_inputs(body)[0];
    let trip_const = g.to_ivalue(max_trip).and_then(|v| v.as_int());
    let cond_always_true = is_const_true(g, input_cond) && is_const_true(g, next_cond);
    let trip_specified =
        trip_const.is_none() || trip_const != Some(i64::MAX) || g.value(counter).has_uses();
    if cond_always_true || !trip_specified {
        return;
    }
    // A modified loop: turn the trip count into part of the condition.
    let (zero, one, cond, max_c) = g.with_insert_point(n, |g| {
        let zero = g.insert_constant(&IValue::Int(0));
        let one = g.insert_constant(&IValue::Int(1));
        let gt = g.insert(Symbol::aten("gt"), &[max_trip, zero], 0);
        let cond = g.add_output(gt, Type::bool());
        let max_c = g.insert_constant(&IValue::Int(i64::MAX));
        (zero, one, cond, max_c)
    });
    g.replace_input(n, 0, max_c);
    let mut cond = cond;
    if g.to_ivalue(input_cond).and_then(|v| v.as_bool()) != Some(true) {
        cond = g.with_insert_point(n, |g| {
            let and = g.insert(Symbol::aten("__and__"), &[cond, input_cond], 0);
            g.add_output(and, Type::bool())
        });
    }
    g.replace_input(n, 1, cond);
    g.add_output(n, Type::int());
    g.add_input(n, zero);
    let new_iter = g.add_block_input(body, Type::int());
    let _ = g.set_debug_name(counter, "");
    g.replace_all_uses_with(counter, new_iter);
    let ret = g.return_node(body);
    let (inc, new_cond) = g.with_insert_point(ret, |g| {
        let add = g.insert(Symbol::aten("add"), &[new_iter, one], 0);
        let inc = g.add_output(add, Type::int());
        let lt = g.insert(Symbol::aten("lt"), &[inc, max_trip], 0);
        let lt_v = g.add_output(lt, Type::bool());
        let and = g.insert(Symbol::aten("__and__"), &[lt_v, next_cond], 0);
        (inc, g.add_output(and, Type::bool()))
    });
    g.add_block_output(body, inc);
    g.erase_block_output(body, 0);
    g.insert_block_output(body, 0, new_cond);
}

const ALIASES: &[(&str, &str)] = &[
    ("absolute", "abs"),
    ("absolute_", "abs_"),
    ("clip", "clamp"),
    ("clip_", "clamp_"),
    ("det", "linalg_det"),
    ("matrix_power", "linalg_matrix_power"),
    ("ger", "outer"),
    ("arccos", "acos"),
    ("arccos_", "acos_"),
    ("arcsin", "asin"),
    ("arcsin_", "asin_"),
    ("arctan", "atan"),
    ("arctan_", "atan_"),
    ("arctan2", "atan2"),
    ("arctan2_", "atan2_"),
    ("arccosh", "acosh"),
    ("arccosh_", "acosh_"),
    ("arcsinh", "asinh"),
    ("arcsinh_", "asinh_"),
    ("arctanh", "atanh"),
    ("arctanh_", "atanh_"),
    ("fix", "trunc"),
    ("fix_", "trunc_"),
    ("negative", "neg"),
    ("negative_", "neg_"),
    ("subtract", "sub"),
    ("subtract_", "sub_"),
    ("greater_equal", "ge"),
    ("greater_equal_", "ge_"),
    ("greater", "gt"),
    ("greater_", "gt_"),
    ("less_equal", "le"),
    ("less_equal_", "le_"),
    ("less", "lt"),
    ("less_", "lt_"),
    ("not_equal", "ne"),
    ("not_equal_", "ne_"),
    ("divide", "div"),
    ("divide_", "div_"),
    ("multiply", "mul"),
    ("multiply_", "mul_"),
    ("true_divide", "div"),
    ("true_divide_", "div_"),
    ("concatenate", "cat"),
    ("concat", "cat"),
    ("row_stack", "vstack"),
    ("swapdims", "transpose"),
    ("swapdims_", "transpose_"),
    ("swapaxes", "transpose"),
    ("swapaxes_", "transpose_"),
    ("moveaxis", "movedim"),
    ("special_expit", "sigmoid"),
    ("special_exp2", "exp2"),
    ("special_expm1", "expm1"),
    ("special_erf", "erf"),
    ("special_erfc", "erfc"),
    ("special_erfinv", "erfinv"),
    ("special_logit", "logit"),
    ("special_log1p", "log1p"),
    ("special_round", "round"),
    ("special_sinc", "sinc"),
    ("special_softmax", "softmax"),
    ("special_log_softmax", "log_softmax"),
    ("special_logsumexp", "logsumexp"),
    ("special_xlogy", "xlogy"),
    ("special_psi", "digamma"),
    ("special_digamma", "digamma"),
    ("special_gammaln", "lgamma"),
    ("linalg_matmul", "matmul"),
    ("orgqr", "linalg_householder_product"),
    ("adjoint", "mH"),
    ("inner", "inner"),
];

/// PyTorch's `NormalizeOps`: aliases become their canonical operator.
pub fn normalize_ops(g: &mut Graph) {
    for n in g.all_nodes() {
        let k = g.node(n).kind();
        if !k.is_ns("aten") {
            continue;
        }
        if let Some((_, to)) = ALIASES.iter().find(|(from, _)| *from == k.name()) {
            g.set_kind(n, Symbol::aten(to));
        }
        normalize_rsub(g, n);
    }
}

/// `aten::rsub.Tensor(a, b, alpha)` becomes `aten::sub(b, a, alpha)` (PyTorch's
/// `normalizeRSub`; only the tensor-tensor overload).
fn normalize_rsub(g: &mut Graph, n: NodeId) {
    let node = g.node(n);
    if node.kind() != Symbol::aten("rsub") || node.inputs().len() != 3 {
        return;
    }
    let (a, b) = (node.input(0), node.input(1));
    if !g.value(a).ty().is_tensor() || !g.value(b).ty().is_tensor() {
        return;
    }
    g.set_kind(n, Symbol::aten("sub"));
    g.replace_input(n, 0, b);
    g.replace_input(n, 1, a);
}
