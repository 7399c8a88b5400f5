//! The autograd engine end to end at the operator level: `backward` and `.grad`,
//! `autograd.grad` with `create_graph`, in-place ops and version counters, grad mode, and
//! gradcheck (finite differences in float64) for the derivative formulas.

use ts_core::IValue;
use ts_ops::autograd::gradcheck::{gradcheck, gradgradcheck, op_fn, Tolerance};
use ts_ops::autograd::ops::{call, call1};
use ts_tensor::autograd::GradModeGuard;
use ts_tensor::Tensor;

fn t(data: &[f64], sizes: &[i64]) -> Tensor {
    Tensor::from_vec(data.to_vec(), sizes).unwrap()
}

fn leaf(data: &[f64], sizes: &[i64]) -> Tensor {
    let x = t(data, sizes);
    x.set_requires_grad(true);
    x
}

fn tv(x: &Tensor) -> IValue {
    IValue::Tensor(x.clone())
}

fn mul(a: &Tensor, b: &Tensor) -> Tensor {
    call1("aten::mul.Tensor", vec![tv(a), tv(b)]).unwrap()
}

fn sum(a: &Tensor) -> Tensor {
    call1("aten::sum", vec![tv(a), IValue::None]).unwrap()
}

fn backward(t: &Tensor) -> Result<(), ts_tensor::Error> {
    call(
        "aten::backward",
        vec![tv(t), IValue::None, IValue::None, IValue::Bool(false)],
    )
    .map(|_| ())
}

fn grad(out: &Tensor, inputs: &[Tensor], create_graph: bool) -> Vec<Option<Tensor>> {
    let r = call(
        "aten::grad",
        vec![
            IValue::tensor_list([out.clone()]),
            IValue::tensor_list(inputs.to_vec()),
            IValue::None,
            IValue::None,
            IValue::Bool(create_graph),
            IValue::Bool(false),
        ],
    )
    .unwrap();
    r[0].list_items()
        .unwrap()
        .into_iter()
        .map(|v| v.as_tensor().cloned())
        .collect()
}

fn rand(n: usize, seed: u64) -> Vec<f64> {
    (0..n)
        .map(|i| (((i as u64 + 1) * 2654435761 + seed * 97) % 1000) as f64 / 500.0 - 1.0)
        .collect()
}

#[test]
fn backward_accumulates_into_leaves() {
    let x = leaf(&[1.0, 2.0, 3.0], &[3]);
    let y = sum(&mul(&x, &x));
    assert!(!y.is_leaf());
    assert!(y.requires_grad());
    assert_eq!(y.grad_fn().unwrap().0.name, "SumBackward0");
    backward(&y).unwrap();
    assert_eq!(x.grad().unwrap().to_vec::<f64>(), vec![2.0, 4.0, 6.0]);
    // A second pass over a fresh graph accumulates.
    let y = sum(&mul(&x, &x));
    backward(&y).unwrap();
    assert_eq!(x.grad().unwrap().to_vec::<f64>(), vec![4.0, 8.0, 12.0]);
}

#[test]
fn second_backward_without_retain_graph_fails() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = sum(&mul(&x, &x));
    backward(&y).unwrap();
    let e = backward(&y).unwrap_err();
    assert!(e
        .message
        .contains("Trying to backward through the graph a second time"));
}

#[test]
fn non_scalar_backward_needs_a_gradient() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = mul(&x, &x);
    let e = backward(&y).unwrap_err();
    assert_eq!(
        e.message,
        "grad can be implicitly created only for scalar outputs"
    );
}

#[test]
fn create_graph_gives_higher_order_gradients() {
    // d/dx x^3 = 3x^2, d2/dx2 = 6x
    let x = leaf(&[2.0], &[]);
    let y = mul(&mul(&x, &x), &x);
    let g = grad(&y, std::slice::from_ref(&x), true)[0].clone().unwrap();
    assert_eq!(g.to_vec::<f64>(), vec![12.0]);
    assert!(g.requires_grad());
    let gg = grad(&g, std::slice::from_ref(&x), false)[0]
        .clone()
        .unwrap();
    assert_eq!(gg.to_vec::<f64>(), vec![12.0]);
}

#[test]
fn unused_input_is_an_error_unless_allowed() {
    let x = leaf(&[1.0], &[1]);
    let z = leaf(&[1.0], &[1]);
    let y = sum(&mul(&x, &x));
    let e = call(
        "aten::grad",
        vec![
            IValue::tensor_list([y.clone()]),
            IValue::tensor_list([x.clone(), z.clone()]),
            IValue::None,
            IValue::Bool(true),
            IValue::Bool(false),
            IValue::Bool(false),
        ],
    )
    .unwrap_err();
    assert!(e
        .message
        .contains("appears to not have been used in the graph"));
    let r = call(
        "aten::grad",
        vec![
            IValue::tensor_list([y]),
            IValue::tensor_list([x, z]),
            IValue::None,
            IValue::None,
            IValue::Bool(false),
            IValue::Bool(true),
        ],
    )
    .unwrap();
    let items = r[0].list_items().unwrap();
    assert!(items[0].as_tensor().is_some());
    assert!(items[1].is_none());
}

#[test]
fn modifying_a_saved_tensor_in_place_is_caught() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let a = call1("aten::mul.Scalar", vec![tv(&x), IValue::Double(1.0)]).unwrap();
    let y = sum(&mul(&a, &a));
    call(
        "aten::add_.Scalar",
        vec![tv(&a), IValue::Double(1.0), IValue::Int(1)],
    )
    .unwrap();
    let e = backward(&y).unwrap_err();
    assert!(
        e.message.starts_with("one of the variables needed for gradient computation has been modified by an inplace operation: [torch.DoubleTensor [2]], which is output 0 of Add, is at version 1; expected version 0 instead."),
        "{}",
        e.message
    );
}

#[test]
fn in_place_ops_rebase_history() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let a = call1("aten::mul.Scalar", vec![tv(&x), IValue::Double(3.0)]).unwrap();
    call1("aten::mul_.Tensor", vec![tv(&a), tv(&x)]).unwrap();
    assert_eq!(a.grad_fn().unwrap().0.name, "MulBackward0");
    backward(&sum(&a)).unwrap();
    // a = 3x * x → da/dx = 6x
    assert_eq!(x.grad().unwrap().to_vec::<f64>(), vec![6.0, 12.0]);
}

#[test]
fn in_place_on_a_leaf_that_requires_grad_fails() {
    let x = leaf(&[1.0], &[1]);
    let e = call1(
        "aten::add_.Scalar",
        vec![tv(&x), IValue::Double(1.0), IValue::Int(1)],
    )
    .unwrap_err();
    assert_eq!(
        e.message,
        "a leaf Variable that requires grad is being used in an in-place operation."
    );
}

#[test]
fn no_grad_records_nothing() {
    let x = leaf(&[1.0], &[1]);
    let y = {
        let _g = GradModeGuard::no_grad();
        mul(&x, &x)
    };
    assert!(y.is_leaf());
    assert!(y.grad_fn().is_none());
}

#[test]
fn retain_grad_keeps_a_non_leaf_gradient() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let a = mul(&x, &x);
    call("aten::retain_grad", vec![tv(&a)]).unwrap();
    backward(&sum(&mul(&a, &t(&[3.0, 4.0], &[2])))).unwrap();
    assert_eq!(a.grad().unwrap().to_vec::<f64>(), vec![3.0, 4.0]);
}

#[test]
fn broadcasting_reduces_gradients_to_input_shapes() {
    let a = leaf(&[1.0, 2.0, 3.0], &[3, 1]);
    let b = leaf(&[1.0, 2.0], &[2]);
    let y = sum(&mul(&a, &b));
    let g = grad(&y, &[a.clone(), b.clone()], false);
    assert_eq!(g[0].as_ref().unwrap().sizes().as_slice(), &[3, 1]);
    assert_eq!(g[0].as_ref().unwrap().to_vec::<f64>(), vec![3.0, 3.0, 3.0]);
    assert_eq!(g[1].as_ref().unwrap().to_vec::<f64>(), vec![6.0, 6.0]);
}

fn check(name: &'static str, args: Vec<IValue>) {
    let xs: Vec<Tensor> = args
        .iter()
        .filter_map(|v| {
            v.as_tensor()
                .filter(|t| t.dtype().is_floating_point())
                .cloned()
        })
        .collect();
    let f = op_fn(name, args);
    if let Err(e) = gradcheck(&f, &xs, Tolerance::default()) {
        panic!("{name}: {e}");
    }
}

/// As [`check`], differentiating only the first output (the others are not differentiable,
/// as `native_layer_norm`'s statistics or flash attention's log-sum-exp).
fn check_first(name: &'static str, args: Vec<IValue>) {
    let xs: Vec<Tensor> = args
        .iter()
        .filter_map(|v| {
            v.as_tensor()
                .filter(|t| t.dtype().is_floating_point())
                .cloned()
        })
        .collect();
    let f = op_fn(name, args);
    let first = |xs: &[Tensor]| f(xs).map(|mut v| v.drain(..1).collect::<Vec<IValue>>());
    if let Err(e) = gradcheck(&first, &xs, Tolerance::default()) {
        panic!("{name}: {e}");
    }
}

fn pos(n: usize, seed: u64) -> Vec<f64> {
    rand(n, seed).iter().map(|v| v.abs() + 0.5).collect()
}

#[test]
fn gradcheck_pointwise() {
    let a = t(&rand(6, 1), &[2, 3]);
    let b = t(&rand(3, 2), &[3]);
    let p = t(&pos(6, 3), &[2, 3]);
    // Unary ops on any value, then those needing a positive argument.
    let unary: [(&[&'static str], &Tensor); 2] = [
        (
            &[
                "aten::neg",
                "aten::exp",
                "aten::sin",
                "aten::cos",
                "aten::tanh",
                "aten::sigmoid",
                "aten::atan",
                "aten::sinh",
                "aten::cosh",
                "aten::square",
                "aten::erf",
                "aten::asinh",
                "aten::expm1",
                "aten::abs",
                "aten::relu",
                "aten::silu",
                "aten::log_sigmoid",
            ],
            &a,
        ),
        (
            &[
                "aten::log",
                "aten::sqrt",
                "aten::rsqrt",
                "aten::reciprocal",
                "aten::log1p",
                "aten::lgamma",
                "aten::digamma",
                "aten::log2",
                "aten::log10",
            ],
            &p,
        ),
    ];
    for (ops, x) in unary {
        for &op in ops {
            check(op, vec![tv(x)]);
        }
    }
    for op in [
        "aten::mul.Tensor",
        "aten::atan2",
        "aten::maximum",
        "aten::minimum",
        "aten::hypot",
        "aten::logaddexp",
    ] {
        check(op, vec![tv(&a), tv(&b)]);
    }
    check(
        "aten::add.Tensor",
        vec![tv(&a), tv(&b), IValue::Double(2.0)],
    );
    check(
        "aten::sub.Tensor",
        vec![tv(&a), tv(&b), IValue::Double(0.5)],
    );
    check("aten::div.Tensor", vec![tv(&a), tv(&p)]);
    check("aten::pow.Tensor_Scalar", vec![tv(&a), IValue::Double(3.0)]);
    check("aten::pow.Tensor_Tensor", vec![tv(&p), tv(&a)]);
    check(
        "aten::clamp",
        vec![tv(&a), IValue::Double(-0.3), IValue::Double(0.4)],
    );
    check(
        "aten::where.self",
        vec![
            tv(&call1("aten::gt.Scalar", vec![tv(&a), IValue::Double(0.0)]).unwrap()),
            tv(&a),
            tv(&p),
        ],
    );
    check(
        "aten::addcmul",
        vec![tv(&a), tv(&p), tv(&b), IValue::Double(0.5)],
    );
    check(
        "aten::addcdiv",
        vec![tv(&a), tv(&b), tv(&p), IValue::Double(0.5)],
    );
    check("aten::lerp.Tensor", vec![tv(&a), tv(&p), tv(&b)]);
}

#[test]
fn gradcheck_reductions() {
    let a = t(&rand(12, 4), &[3, 4]);
    let p = t(&pos(12, 5), &[3, 4]);
    check("aten::sum", vec![tv(&a), IValue::None]);
    check(
        "aten::sum.dim_IntList",
        vec![
            tv(&a),
            IValue::int_list([1]),
            IValue::Bool(false),
            IValue::None,
        ],
    );
    check(
        "aten::mean.dim",
        vec![
            tv(&a),
            IValue::int_list([0]),
            IValue::Bool(true),
            IValue::None,
        ],
    );
    check("aten::prod", vec![tv(&a), IValue::None]);
    check(
        "aten::prod.dim_int",
        vec![tv(&a), IValue::Int(1), IValue::Bool(false), IValue::None],
    );
    check(
        "aten::amax",
        vec![tv(&a), IValue::int_list([1]), IValue::Bool(false)],
    );
    check(
        "aten::max.dim",
        vec![tv(&a), IValue::Int(0), IValue::Bool(false)],
    );
    check(
        "aten::logsumexp",
        vec![tv(&a), IValue::int_list([1]), IValue::Bool(false)],
    );
    check(
        "aten::var.correction",
        vec![
            tv(&a),
            IValue::int_list([1]),
            IValue::Int(1),
            IValue::Bool(false),
        ],
    );
    check(
        "aten::std.correction",
        vec![tv(&p), IValue::None, IValue::Int(1), IValue::Bool(true)],
    );
    check(
        "aten::linalg_vector_norm",
        vec![
            tv(&a),
            IValue::Double(2.0),
            IValue::None,
            IValue::Bool(false),
            IValue::None,
        ],
    );
    check(
        "aten::linalg_vector_norm",
        vec![
            tv(&p),
            IValue::Double(3.0),
            IValue::int_list([0]),
            IValue::Bool(false),
            IValue::None,
        ],
    );
    check("aten::cumsum", vec![tv(&a), IValue::Int(1), IValue::None]);
    check("aten::cumprod", vec![tv(&a), IValue::Int(1), IValue::None]);
    check(
        "aten::softmax.int",
        vec![tv(&a), IValue::Int(1), IValue::None],
    );
    check(
        "aten::log_softmax.int",
        vec![tv(&a), IValue::Int(0), IValue::None],
    );
}

#[test]
fn gradcheck_shapes_and_indexing() {
    let a = t(&rand(12, 6), &[3, 4]);
    let b = t(&rand(8, 7), &[2, 4]);
    let idx = Tensor::from_vec(vec![2i64, 0, 2], &[3]).unwrap();
    check("aten::reshape", vec![tv(&a), IValue::int_list([4, 3])]);
    check("aten::permute", vec![tv(&a), IValue::int_list([1, 0])]);
    check(
        "aten::transpose.int",
        vec![tv(&a), IValue::Int(0), IValue::Int(1)],
    );
    check(
        "aten::expand",
        vec![
            tv(&t(&rand(4, 8), &[1, 4])),
            IValue::int_list([3, 4]),
            IValue::Bool(false),
        ],
    );
    check(
        "aten::select.int",
        vec![tv(&a), IValue::Int(1), IValue::Int(2)],
    );
    check(
        "aten::slice.Tensor",
        vec![
            tv(&a),
            IValue::Int(1),
            IValue::Int(1),
            IValue::Int(4),
            IValue::Int(2),
        ],
    );
    check(
        "aten::narrow",
        vec![tv(&a), IValue::Int(0), IValue::Int(1), IValue::Int(2)],
    );
    check("aten::index_select", vec![tv(&a), IValue::Int(0), tv(&idx)]);
    check(
        "aten::cat",
        vec![IValue::tensor_list([a.clone(), b.clone()]), IValue::Int(0)],
    );
    check(
        "aten::stack",
        vec![IValue::tensor_list([b.clone(), b.clone()]), IValue::Int(1)],
    );
    check("aten::flip", vec![tv(&a), IValue::int_list([0, 1])]);
    check("aten::repeat", vec![tv(&b), IValue::int_list([2, 1, 2])]);
    check(
        "aten::diagonal",
        vec![tv(&a), IValue::Int(0), IValue::Int(0), IValue::Int(1)],
    );
    check("aten::tril", vec![tv(&a), IValue::Int(0)]);
    let gi = Tensor::from_vec(vec![0i64, 2, 1, 1, 3, 0], &[3, 2]).unwrap();
    check(
        "aten::gather",
        vec![tv(&a), IValue::Int(1), tv(&gi), IValue::Bool(false)],
    );
    let ii = IValue::list(
        ts_core::Type::optional(ts_core::Type::tensor()),
        vec![tv(&idx)],
    );
    check("aten::index.Tensor", vec![tv(&a), ii]);
    check(
        "aten::constant_pad_nd",
        vec![tv(&a), IValue::int_list([1, 2]), IValue::Int(0)],
    );
}

#[test]
fn gradcheck_matmul_family() {
    let a = t(&rand(6, 9), &[2, 3]);
    let b = t(&rand(12, 10), &[3, 4]);
    let v = t(&rand(3, 11), &[3]);
    let c = t(&rand(8, 12), &[2, 4]);
    check("aten::mm", vec![tv(&a), tv(&b)]);
    check("aten::matmul", vec![tv(&a), tv(&v)]);
    check("aten::matmul", vec![tv(&v), tv(&b)]);
    check(
        "aten::matmul",
        vec![tv(&t(&rand(12, 13), &[2, 2, 3])), tv(&b)],
    );
    check(
        "aten::addmm",
        vec![
            tv(&c),
            tv(&a),
            tv(&b),
            IValue::Double(0.5),
            IValue::Double(2.0),
        ],
    );
    check(
        "aten::linear",
        vec![
            tv(&a),
            tv(&t(&rand(12, 14), &[4, 3])),
            tv(&t(&rand(4, 15), &[4])),
        ],
    );
    check("aten::dot", vec![tv(&v), tv(&v)]);
    let m = t(&[2.0, 0.5, 0.3, 0.1, 3.0, 0.2, 0.4, 0.1, 1.5], &[3, 3]);
    check("aten::linalg_inv", vec![tv(&m)]);
    check("aten::linalg_det", vec![tv(&m)]);
}

#[test]
fn gradcheck_nn() {
    let x = t(&rand(2 * 2 * 5 * 5, 16), &[2, 2, 5, 5]);
    let w = t(&rand(3 * 2 * 3 * 3, 17), &[3, 2, 3, 3]);
    let bias = t(&rand(3, 18), &[3]);
    check(
        "aten::conv2d",
        vec![
            tv(&x),
            tv(&w),
            tv(&bias),
            IValue::int_list([2, 1]),
            IValue::int_list([1, 0]),
            IValue::int_list([1, 2]),
            IValue::Int(1),
        ],
    );
    let wg = t(&rand(4 * 3, 19), &[4, 1, 3]);
    let x1 = t(&rand(2 * 2 * 6, 20), &[2, 2, 6]);
    check(
        "aten::conv1d",
        vec![
            tv(&x1),
            tv(&wg),
            IValue::None,
            IValue::int_list([1]),
            IValue::int_list([1]),
            IValue::int_list([1]),
            IValue::Int(2),
        ],
    );
    let wt = t(&rand(2 * 3 * 2 * 2, 21), &[2, 3, 2, 2]);
    check(
        "aten::conv_transpose2d.input",
        vec![
            tv(&x),
            tv(&wt),
            IValue::None,
            IValue::int_list([2, 2]),
            IValue::int_list([0, 1]),
            IValue::int_list([1, 0]),
            IValue::Int(1),
            IValue::int_list([1, 1]),
        ],
    );
    check(
        "aten::max_pool2d",
        vec![
            tv(&x),
            IValue::int_list([2, 2]),
            IValue::int_list([2, 2]),
            IValue::int_list([0, 0]),
            IValue::int_list([1, 1]),
            IValue::Bool(false),
        ],
    );
    let ln_w = t(&rand(5, 22), &[5]);
    check(
        "aten::layer_norm",
        vec![
            tv(&x),
            IValue::int_list([5]),
            tv(&ln_w),
            tv(&ln_w),
            IValue::Double(1e-5),
            IValue::Bool(true),
        ],
    );
    check("aten::gelu", vec![tv(&x), IValue::str("none")]);
    check(
        "aten::elu",
        vec![
            tv(&x),
            IValue::Double(1.0),
            IValue::Double(1.0),
            IValue::Double(1.0),
        ],
    );
    check("aten::leaky_relu", vec![tv(&x), IValue::Double(0.1)]);
    let y = t(&rand(2 * 2 * 5 * 5, 23), &[2, 2, 5, 5]);
    check("aten::mse_loss", vec![tv(&x), tv(&y), IValue::Int(1)]);
    check(
        "aten::smooth_l1_loss",
        vec![tv(&x), tv(&y), IValue::Int(2), IValue::Double(0.5)],
    );
    let logits = t(&rand(12, 24), &[4, 3]);
    let target = Tensor::from_vec(vec![0i64, 2, 1, 2], &[4]).unwrap();
    check(
        "aten::cross_entropy_loss",
        vec![
            tv(&logits),
            tv(&target),
            IValue::None,
            IValue::Int(1),
            IValue::Int(-100),
            IValue::Double(0.0),
        ],
    );
    check(
        "aten::nll_loss",
        vec![
            tv(&logits),
            tv(&target),
            IValue::None,
            IValue::Int(1),
            IValue::Int(-100),
        ],
    );
    check(
        "aten::pixel_shuffle",
        vec![tv(&t(&rand(16, 25), &[1, 4, 2, 2])), IValue::Int(2)],
    );
}

#[test]
fn gradgradcheck_composes() {
    let a = t(&rand(6, 30), &[2, 3]);
    let b = t(&pos(6, 31), &[2, 3]);
    for (name, args) in [
        ("aten::mul.Tensor", vec![tv(&a), tv(&b)]),
        ("aten::tanh", vec![tv(&a)]),
        ("aten::div.Tensor", vec![tv(&a), tv(&b)]),
        (
            "aten::log_softmax.int",
            vec![tv(&a), IValue::Int(1), IValue::None],
        ),
        ("aten::mm", vec![tv(&a), tv(&t(&rand(6, 32), &[3, 2]))]),
    ] {
        let xs: Vec<Tensor> = args.iter().filter_map(|v| v.as_tensor().cloned()).collect();
        let f = op_fn(name, args);
        if let Err(e) = gradgradcheck(&f, &xs, Tolerance::default()) {
            panic!("{name}: {e}");
        }
    }
}

#[test]
fn gradcheck_factorizations() {
    let sq = t(&[2.0, 0.5, 0.3, 0.1, 3.0, 0.2, 0.4, 0.1, 1.5], &[3, 3]);
    let wide = t(&[2.0, 0.5, 0.3, 0.7, 0.1, 3.0, 0.2, -0.4], &[2, 4]);
    let tall = t(&[2.0, 0.5, 0.1, 3.0, 0.4, 0.1, -0.3, 0.6], &[4, 2]);
    for m in [&sq, &wide, &tall] {
        check("aten::linalg_lu", vec![tv(m), IValue::Bool(true)]);
        check("aten::linalg_lu_factor", vec![tv(m), IValue::Bool(true)]);
        check("aten::linalg_qr", vec![tv(m), IValue::str("reduced")]);
        let piv = call("aten::linalg_lu_factor", vec![tv(m), IValue::Bool(true)]).unwrap()[1]
            .as_tensor()
            .cloned()
            .unwrap();
        check(
            "aten::lu_unpack",
            vec![tv(m), tv(&piv), IValue::Bool(true), IValue::Bool(true)],
        );
        check(
            "aten::linalg_pinv.atol_rtol_float",
            vec![tv(m), IValue::None, IValue::None, IValue::Bool(false)],
        );
    }
    let r = call("aten::linalg_lu_factor", vec![tv(&sq), IValue::Bool(true)]).unwrap();
    let (lu, piv) = (r[0].as_tensor().unwrap(), r[1].as_tensor().unwrap());
    let b = t(&rand(6, 40), &[3, 2]);
    for (left, adjoint) in [(true, false), (true, true)] {
        check(
            "aten::linalg_lu_solve",
            vec![
                tv(lu),
                tv(piv),
                tv(&b),
                IValue::Bool(left),
                IValue::Bool(adjoint),
            ],
        );
    }
    let bt = t(&rand(6, 41), &[2, 3]);
    for adjoint in [false, true] {
        check(
            "aten::linalg_lu_solve",
            vec![
                tv(lu),
                tv(piv),
                tv(&bt),
                IValue::Bool(false),
                IValue::Bool(adjoint),
            ],
        );
    }
    check("aten::lu_solve", vec![tv(&b), tv(lu), tv(piv)]);
    // Symmetric positive definite: matrix_sqrth; polar of a full-rank tall matrix.
    let spd = t(&[4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0], &[3, 3]);
    // Only the lower triangle is read: differentiate through a symmetric input (as torch's
    // gradcheck of the eigh family does).
    let sym = |xs: &[Tensor]| {
        let s = call1(
            "aten::add.Tensor",
            vec![
                tv(&xs[0]),
                tv(&call1("aten::t", vec![tv(&xs[0])])?),
                IValue::Int(1),
            ],
        )?;
        call("aten::linalg_matrix_sqrth", vec![tv(&s)])
    };
    gradcheck(&sym, std::slice::from_ref(&spd), Tolerance::default()).unwrap();
    check("aten::linalg_polar", vec![tv(&tall)]);
}

#[test]
fn gradcheck_sorted_and_segmented() {
    let x = t(&[0.3, -1.2, 2.5, 0.7, -0.1, 1.9], &[6]);
    let lengths = Tensor::from_vec(vec![2i64, 3, 1], &[3]).unwrap();
    for reduce in ["sum", "mean", "max", "min", "prod"] {
        check(
            "aten::segment_reduce",
            vec![
                tv(&x),
                IValue::str(reduce),
                tv(&lengths),
                IValue::None,
                IValue::None,
                IValue::Int(0),
                IValue::Bool(false),
                IValue::None,
            ],
        );
    }
    let m = t(&[0.3, -1.2, 2.5, 0.7, -0.1, 1.9, 0.4, -0.6], &[2, 4]);
    for interp in ["linear", "lower", "higher", "midpoint", "nearest"] {
        for name in ["aten::quantile.scalar", "aten::nanquantile.scalar"] {
            check(
                name,
                vec![
                    tv(&m),
                    IValue::Double(0.4),
                    IValue::Int(1),
                    IValue::Bool(false),
                    IValue::str(interp),
                ],
            );
        }
    }
    let q = t(&[0.25, 0.8], &[2]);
    let f = op_fn(
        "aten::nanquantile",
        vec![
            tv(&m),
            tv(&q),
            IValue::None,
            IValue::Bool(true),
            IValue::str("linear"),
        ],
    );
    gradcheck(&f, std::slice::from_ref(&m), Tolerance::default()).unwrap();
    let (qh, kh, vh) = (
        t(&rand(12, 42), &[1, 2, 2, 3]),
        t(&rand(18, 43), &[1, 2, 3, 3]),
        t(&rand(18, 44), &[1, 2, 3, 3]),
    );
    check_first(
        "aten::_scaled_dot_product_flash_attention_for_cpu",
        vec![
            tv(&qh),
            tv(&kh),
            tv(&vh),
            IValue::Double(0.0),
            IValue::Bool(true),
            IValue::None,
            IValue::None,
        ],
    );
}

#[test]
fn an_absent_optional_tensor_keeps_its_gradient_slot() {
    // native_layer_norm(x, shape, weight=None, bias): the bias gradient must not land in the
    // weight's slot.
    let x = t(&rand(6, 50), &[2, 3]);
    let bias = t(&rand(3, 51), &[3]);
    check_first(
        "aten::native_layer_norm",
        vec![
            tv(&x),
            IValue::int_list([3]),
            IValue::None,
            tv(&bias),
            IValue::Double(1e-5),
        ],
    );
}

#[test]
fn relu_in_place_saves_its_result() {
    // relu_ needs no copy of its input: its formula reads the result, so a later in-place
    // write to that result is caught.
    let x = leaf(&[1.0, -2.0, 3.0], &[3]);
    let y = mul(&x, &t(&[1.0, 1.0, 1.0], &[3]));
    call1("aten::relu_", vec![tv(&y)]).unwrap();
    let g = grad(&sum(&y), std::slice::from_ref(&x), false);
    assert_eq!(g[0].as_ref().unwrap().to_vec::<f64>(), vec![1.0, 0.0, 1.0]);
    let z = mul(&x, &t(&[1.0, 1.0, 1.0], &[3]));
    let r = call1("aten::relu", vec![tv(&z)]).unwrap();
    call1("aten::mul_.Scalar", vec![tv(&r), IValue::Double(2.0)]).unwrap();
    let Err(err) = call(
        "aten::backward",
        vec![
            tv(&sum(&r)),
            IValue::None,
            IValue::None,
            IValue::Bool(false),
        ],
    ) else {
        panic!("the saved result was modified");
    };
    assert!(err.to_string().contains("modified by an inplace operation"));
}

#[test]
fn modifying_a_saved_result_names_its_node() {
    // exp, tanh, sigmoid and relu read their result; PyTorch's message names the node that
    // saved it (`Exp`), not the write's.
    for (op, node) in [
        ("aten::exp", "Exp"),
        ("aten::tanh", "Tanh"),
        ("aten::sigmoid", "Sigmoid"),
        ("aten::relu", "Relu"),
    ] {
        let x = leaf(&[1.0, -2.0, 3.0], &[3]);
        let y = call1(op, vec![tv(&mul(&x, &t(&[1.0, 1.0, 1.0], &[3])))]).unwrap();
        call1("aten::mul_.Scalar", vec![tv(&y), IValue::Double(2.0)]).unwrap();
        let e = backward(&sum(&y)).unwrap_err();
        assert_eq!(
            e.message,
            format!("one of the variables needed for gradient computation has been modified by an inplace operation: [torch.DoubleTensor [3]], which is output 0 of {node}, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
        );
    }
    // Modifying exp's input afterwards is fine: the formula does not read it.
    let x = leaf(&[1.0, -2.0], &[2]);
    let a = mul(&x, &t(&[1.0, 1.0], &[2]));
    let y = call1("aten::exp", vec![tv(&a)]).unwrap();
    call1("aten::mul_.Scalar", vec![tv(&a), IValue::Double(2.0)]).unwrap();
    backward(&sum(&y)).unwrap();
    let e1 = 1f64.exp();
    let e2 = (-2f64).exp();
    assert_eq!(x.grad().unwrap().to_vec::<f64>(), vec![e1, e2]);
}

#[test]
fn in_place_on_a_view_of_a_leaf_fails() {
    let x = leaf(&[1.0, 2.0, 3.0], &[3]);
    let v = call1(
        "aten::select.int",
        vec![tv(&x), IValue::Int(0), IValue::Int(1)],
    )
    .unwrap();
    let Err(err) = call1("aten::mul_.Scalar", vec![tv(&v), IValue::Double(2.0)]) else {
        panic!("in-place on a view of a leaf must fail");
    };
    assert!(err.to_string().contains(
        "a view of a leaf Variable that requires grad is being used in an in-place operation."
    ));
    // A view of a non-leaf may be written; without grad mode the leaf's view may be too.
    let y = mul(&x, &t(&[1.0, 1.0, 1.0], &[3]));
    let w = call1(
        "aten::select.int",
        vec![tv(&y), IValue::Int(0), IValue::Int(1)],
    )
    .unwrap();
    call1("aten::mul_.Scalar", vec![tv(&w), IValue::Double(2.0)]).unwrap();
    let _g = GradModeGuard::no_grad();
    call1("aten::mul_.Scalar", vec![tv(&v), IValue::Double(2.0)]).unwrap();
    assert_eq!(x.to_vec::<f64>(), vec![1.0, 4.0, 3.0]);
}

#[test]
fn gradcheck_sampling_and_spectrogram() {
    let input = t(&rand(24, 60), &[1, 2, 3, 4]);
    let grid = t(
        &[0.13, -0.41, 0.77, 0.22, -0.58, 0.61, 0.34, -0.93],
        &[1, 2, 2, 2],
    );
    for (padding, align) in [(0, false), (0, true), (1, false)] {
        check(
            "aten::grid_sampler_2d",
            vec![
                tv(&input),
                tv(&grid),
                IValue::Int(0),
                IValue::Int(padding),
                IValue::Bool(align),
            ],
        );
    }
    let x = t(&rand(16, 61), &[16]);
    for (center, mode, normalized) in [(true, "reflect", false), (false, "constant", true)] {
        check(
            "aten::stft.center",
            vec![
                tv(&x),
                IValue::Int(4),
                IValue::Int(2),
                IValue::None,
                IValue::None,
                IValue::Bool(center),
                IValue::str(mode),
                IValue::Bool(normalized),
                IValue::None,
                IValue::Bool(false),
                IValue::None,
            ],
        );
    }
}

#[test]
fn gradcheck_householder_products() {
    let a = t(&rand(12, 70), &[4, 3]);
    let tau = t(&[0.7, 1.2, 0.4], &[3]);
    check("aten::linalg_householder_product", vec![tv(&a), tv(&tau)]);
    let sq = t(&rand(9, 71), &[3, 3]);
    let tau3 = t(&[1.1, 0.6, 0.0], &[3]);
    let other = t(&rand(6, 72), &[3, 2]);
    for transpose in [false, true] {
        check(
            "aten::ormqr",
            vec![
                tv(&sq),
                tv(&tau3),
                tv(&other),
                IValue::Bool(true),
                IValue::Bool(transpose),
            ],
        );
    }
    let right = t(&rand(6, 73), &[2, 3]);
    check(
        "aten::ormqr",
        vec![
            tv(&sq),
            tv(&tau3),
            tv(&right),
            IValue::Bool(false),
            IValue::Bool(false),
        ],
    );
}

#[test]
fn loss_class_weights_are_not_differentiable() {
    // PyTorch refuses a weight that requires grad rather than dropping its gradient.
    let x = leaf(&rand(6, 3), &[2, 3]);
    let w = leaf(&[0.5, 1.0, 2.0], &[3]);
    let target = Tensor::from_vec(vec![2i64, 0], &[2]).unwrap();
    let l = call1(
        "aten::nll_loss",
        vec![
            tv(&x),
            tv(&target),
            tv(&w),
            IValue::Int(1),
            IValue::Int(-100),
        ],
    )
    .unwrap();
    let e = backward(&l).unwrap_err();
    assert_eq!(
        e.message,
        "The function 'nll_loss_forward' is not differentiable with respect to argument 'weight'. This input cannot have requires_grad True."
    );
}
