//! In-place writes through views of tensors in the backward graph (PyTorch's `CopySlices`):
//! the base's history is rewritten, so gradients match torch's (values generated with
//! PyTorch 2.15, float64).

use ts_core::{IValue, Type};
use ts_ops::autograd::ops::{call, call1};
use ts_tensor::Tensor;

fn tv(x: &Tensor) -> IValue {
    IValue::Tensor(x.clone())
}

fn leaf(data: &[f64], sizes: &[i64]) -> Tensor {
    let x = Tensor::from_vec(data.to_vec(), sizes).unwrap();
    x.set_requires_grad(true);
    x
}

/// `(arange(6) / 6 + 0.1).reshape(2, 3)`, requiring grad.
fn x0() -> Tensor {
    let d: Vec<f64> = (0..6).map(|i| i as f64 / 6.0 + 0.1).collect();
    leaf(&d, &[2, 3])
}

/// `(arange(6) + 1).reshape(2, 3) * 0.1`.
fn w() -> Tensor {
    let d: Vec<f64> = (0..6).map(|i| (i as f64 + 1.0) * 0.1).collect();
    Tensor::from_vec(d, &[2, 3]).unwrap()
}

fn op(name: &str, args: Vec<IValue>) -> Tensor {
    call1(name, args).unwrap_or_else(|e| panic!("{name}: {}", e.message))
}

fn mul_s(a: &Tensor, s: f64) -> Tensor {
    op("aten::mul.Scalar", vec![tv(a), IValue::Double(s)])
}

fn mul(a: &Tensor, b: &Tensor) -> Tensor {
    op("aten::mul.Tensor", vec![tv(a), tv(b)])
}

fn select(a: &Tensor, dim: i64, i: i64) -> Tensor {
    op(
        "aten::select.int",
        vec![tv(a), IValue::Int(dim), IValue::Int(i)],
    )
}

fn slice(a: &Tensor, dim: i64, start: i64, end: i64) -> Tensor {
    op(
        "aten::slice.Tensor",
        vec![
            tv(a),
            IValue::Int(dim),
            IValue::Int(start),
            IValue::Int(end),
            IValue::Int(1),
        ],
    )
}

/// `(y * w).sum().backward()`.
fn backward_weighted(y: &Tensor, w: &Tensor) -> Result<(), String> {
    let l = op("aten::sum", vec![tv(&mul(y, w)), IValue::None]);
    call(
        "aten::backward",
        vec![tv(&l), IValue::None, IValue::None, IValue::Bool(false)],
    )
    .map(|_| ())
    .map_err(|e| e.message.clone())
}

fn assert_grad(t: &Tensor, expected: &[f64]) {
    let g = t.grad().expect("no gradient").to_vec::<f64>();
    assert_eq!(g.len(), expected.len(), "{g:?} vs {expected:?}");
    for (a, b) in g.iter().zip(expected) {
        assert!((a - b).abs() < 1e-12, "{g:?} vs {expected:?}");
    }
}

#[test]
fn mul_on_a_selected_row() {
    let x = x0();
    let y = mul_s(&x, 2.0);
    call(
        "aten::mul_.Scalar",
        vec![tv(&select(&y, 0, 0)), IValue::Double(3.0)],
    )
    .unwrap();
    assert_eq!(y.grad_fn().unwrap().0.name, "CopySlices");
    backward_weighted(&y, &w()).unwrap();
    assert_grad(&x, &[0.6, 1.2, 1.8, 0.8, 1.0, 1.2]);
}

#[test]
fn copy_into_a_column() {
    // y[:, 1] = z
    let x = x0();
    let z = leaf(&[0.5, -0.7], &[2]);
    let y = mul_s(&x, 2.0);
    let col = select(&slice(&y, 1, 0, 3), 1, 1);
    call("aten::copy_", vec![tv(&col), tv(&z), IValue::Bool(false)]).unwrap();
    backward_weighted(&y, &w()).unwrap();
    assert_grad(&x, &[0.2, 0.0, 0.6, 0.8, 0.0, 1.2]);
    assert_grad(&z, &[0.2, 0.5]);
}

#[test]
fn index_put_on_a_row() {
    let x = x0();
    let v = leaf(&[0.3, 0.9], &[2]);
    let y = mul_s(&x, 2.0);
    let idx = Tensor::from_vec(vec![2i64, 0], &[2]).unwrap();
    let indices = IValue::list(Type::optional(Type::tensor()), vec![tv(&idx)]);
    call(
        "aten::index_put_",
        vec![tv(&select(&y, 0, 1)), indices, tv(&v), IValue::Bool(false)],
    )
    .unwrap();
    backward_weighted(&y, &w()).unwrap();
    assert_grad(&x, &[0.2, 0.4, 0.6, 0.0, 1.0, 0.0]);
    assert_grad(&v, &[0.6, 0.4]);
}

#[test]
fn masked_fill_on_a_slice() {
    let x = x0();
    let y = mul(&x, &x);
    let mask = Tensor::from_vec(vec![true, false, false, true], &[2, 2]).unwrap();
    call(
        "aten::masked_fill_.Scalar",
        vec![tv(&slice(&y, 1, 0, 2)), tv(&mask), IValue::Double(0.0)],
    )
    .unwrap();
    backward_weighted(&y, &w()).unwrap();
    assert_grad(
        &x,
        &[
            0.0,
            0.10666666666666667,
            0.26000000000000006,
            0.48,
            0.0,
            1.12,
        ],
    );
}

#[test]
fn chain_of_views_written_with_a_tensor_that_requires_grad() {
    // y.t()[1].mul_(z); ((y * y) * w).sum()
    let x = x0();
    let z = leaf(&[1.5, -2.0], &[2]);
    let y = mul_s(&x, 2.0);
    let yt = op("aten::t", vec![tv(&y)]);
    call("aten::mul_.Tensor", vec![tv(&select(&yt, 0, 1)), tv(&z)]).unwrap();
    backward_weighted(&mul(&y, &y), &w()).unwrap();
    assert_grad(
        &x,
        &[
            0.08000000000000002,
            0.9600000000000002,
            1.0400000000000003,
            1.92,
            12.266666666666666,
            4.48,
        ],
    );
    assert_grad(&z, &[0.1706666666666667, -4.702222222222222]);
}

#[test]
fn view_of_a_leaf_without_grad_written_with_one() {
    let a = Tensor::zeros(&[2, 3], ts_tensor::DType::Float64).unwrap();
    let z = leaf(&[0.5, -0.7, 0.2], &[3]);
    call(
        "aten::copy_",
        vec![tv(&select(&a, 0, 1)), tv(&mul(&z, &z)), IValue::Bool(false)],
    )
    .unwrap();
    assert!(a.requires_grad());
    assert!(!a.is_leaf());
    backward_weighted(&a, &w()).unwrap();
    assert_grad(&z, &[0.4, -0.7, 0.24000000000000005]);
}

#[test]
fn a_view_made_before_the_write_follows_the_base() {
    let x = x0();
    let y = mul_s(&x, 2.0);
    let v2 = slice(&y, 0, 0, 1);
    call(
        "aten::mul_.Scalar",
        vec![tv(&select(&y, 0, 0)), IValue::Double(3.0)],
    )
    .unwrap();
    backward_weighted(&v2, &slice(&w(), 0, 0, 1)).unwrap();
    assert_grad(&x, &[0.6, 1.2, 1.8, 0.0, 0.0, 0.0]);
}

#[test]
fn a_view_used_after_a_write_to_its_base() {
    let x = x0();
    let y = mul_s(&x, 2.0);
    let v = select(&y, 1, 2);
    call("aten::mul_.Scalar", vec![tv(&y), IValue::Double(3.0)]).unwrap();
    let wv = Tensor::from_vec(vec![1.0, 2.0], &[2]).unwrap();
    backward_weighted(&v, &wv).unwrap();
    assert_grad(&x, &[0.0, 0.0, 6.0, 0.0, 0.0, 12.0]);
}

#[test]
fn a_view_of_a_leaf_that_requires_grad_cannot_be_written() {
    let x = x0();
    let e = call(
        "aten::mul_.Scalar",
        vec![tv(&select(&x, 0, 0)), IValue::Double(3.0)],
    )
    .unwrap_err();
    assert_eq!(
        e.message,
        "a view of a leaf Variable that requires grad is being used in an in-place operation."
    );
}
