//! ATen's explicit `*_backward` operators called through the registry: values that follow
//! from their definitions, undefined gradients for false `output_mask` entries, empty and
//! non-contiguous inputs, and clear errors (never panics) for bad arguments. The values
//! against torch 2.15 are checked end to end by the `tests/backward` corpus
//! (`tools/backward/gen_backward_cases.py`).

use ts_core::{IValue, Type};
use ts_ops::{registry, OperatorKind};
use ts_tensor::{DType, Error, Tensor};

fn call(name: &str, args: Vec<IValue>) -> Result<Vec<IValue>, Error> {
    let op = registry()
        .find(name)
        .unwrap_or_else(|| panic!("{name} is not registered"));
    let OperatorKind::Op(run) = &op.kind else {
        panic!("{name} is a node operator")
    };
    let mut stack = args;
    run(&mut stack)?;
    Ok(stack)
}

fn call1(name: &str, args: Vec<IValue>) -> Result<Tensor, Error> {
    let r = call(name, args)?;
    Ok(r[0].as_tensor().expect("a tensor").clone())
}

fn t(x: &Tensor) -> IValue {
    IValue::Tensor(x.clone())
}

fn ints(v: &[i64]) -> IValue {
    IValue::list(Type::int(), v.iter().map(|&i| IValue::Int(i)).collect())
}

fn bools(v: &[bool]) -> IValue {
    IValue::list(Type::bool(), v.iter().map(|&b| IValue::Bool(b)).collect())
}

fn vals(x: &Tensor) -> Vec<f64> {
    x.to_dtype(DType::Float64, false).unwrap().to_vec()
}

fn tensor(v: &[f64], shape: &[i64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape).unwrap()
}

fn seq(shape: &[i64]) -> Tensor {
    let n: i64 = shape.iter().product();
    let v: Vec<f64> = (0..n).map(|i| ((i * 7 % 11) as f64 - 5.0) / 3.0).collect();
    tensor(&v, shape)
}

fn close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-9 + 1e-9 * y.abs(), "{a:?} vs {b:?}");
    }
}

fn err(name: &str, args: Vec<IValue>) -> String {
    match call(name, args) {
        Ok(v) => panic!("{name}: expected an error, got {v:?}"),
        Err(e) => e.message,
    }
}

#[test]
fn pointwise_backwards_follow_their_derivatives() {
    let g = tensor(&[1.0, 2.0], &[2]);
    let y = tensor(&[0.5, -0.2], &[2]);
    close(
        &vals(&call1("aten::tanh_backward", vec![t(&g), t(&y)]).unwrap()),
        &[0.75, 2.0 * (1.0 - 0.04)],
    );
    close(
        &vals(&call1("aten::sigmoid_backward", vec![t(&g), t(&y)]).unwrap()),
        &[0.25, 2.0 * -0.2 * 1.2],
    );
    // threshold_backward zeroes x <= threshold, hardtanh_backward the closed bounds.
    let x = tensor(&[1.0, 1.5, -1.0], &[3]);
    let g3 = tensor(&[1.0, 1.0, 1.0], &[3]);
    let th = call1(
        "aten::threshold_backward",
        vec![t(&g3), t(&x), IValue::Double(1.0)],
    )
    .unwrap();
    close(&vals(&th), &[0.0, 1.0, 0.0]);
    let ht = call1(
        "aten::hardtanh_backward",
        vec![t(&g3), t(&x), IValue::Double(-1.0), IValue::Double(1.0)],
    )
    .unwrap();
    close(&vals(&ht), &[0.0, 0.0, 0.0]);
}

#[test]
fn non_contiguous_inputs_give_the_contiguous_result() {
    let g = seq(&[3, 4]);
    let y = call1("aten::tanh", vec![t(&seq(&[3, 4]))]).unwrap();
    let gt = call1("aten::t", vec![t(&g)]).unwrap();
    let yt = call1("aten::t", vec![t(&y)]).unwrap();
    let a = call1("aten::sigmoid_backward", vec![t(&gt), t(&yt)]).unwrap();
    let b = call1("aten::sigmoid_backward", vec![t(&g), t(&y)]).unwrap();
    let bt = call1("aten::t", vec![t(&b)]).unwrap();
    close(&vals(&a), &vals(&bt));
}

#[test]
fn upsample_backward_conserves_the_gradient_sum() {
    // Every output's interpolation weights sum to one, so the input gradient sums to the
    // output gradient's sum.
    for (op, extra) in [
        (
            "aten::upsample_bilinear2d_backward",
            vec![IValue::Bool(false), IValue::None, IValue::None],
        ),
        (
            "aten::upsample_bicubic2d_backward",
            vec![IValue::Bool(true), IValue::Double(1.5), IValue::None],
        ),
        (
            "aten::upsample_nearest2d_backward",
            vec![IValue::None, IValue::None],
        ),
    ] {
        let g = seq(&[1, 2, 5, 7]);
        let mut args = vec![t(&g), ints(&[5, 7]), ints(&[1, 2, 3, 4])];
        args.extend(extra);
        let gi = call1(op, args).unwrap();
        assert_eq!(gi.sizes().as_slice(), &[1, 2, 3, 4]);
        let s: f64 = vals(&gi).iter().sum();
        let w: f64 = vals(&g).iter().sum();
        assert!((s - w).abs() < 1e-9, "{op}: {s} vs {w}");
    }
}

#[test]
fn empty_shapes() {
    let g = Tensor::zeros(&[0, 3, 4, 4], DType::Float32).unwrap();
    let gi = call1(
        "aten::upsample_nearest2d_backward",
        vec![
            t(&g),
            ints(&[4, 4]),
            ints(&[0, 3, 2, 2]),
            IValue::None,
            IValue::None,
        ],
    )
    .unwrap();
    assert_eq!(gi.sizes().as_slice(), &[0, 3, 2, 2]);
    let g = Tensor::zeros(&[0, 5], DType::Float32).unwrap();
    let idx = Tensor::zeros(&[0], DType::Int64).unwrap();
    let gi = call1(
        "aten::index_select_backward",
        vec![t(&g), ints(&[4, 5]), IValue::Int(0), t(&idx)],
    )
    .unwrap();
    assert_eq!(gi.sizes().as_slice(), &[4, 5]);
    assert!(vals(&gi).iter().all(|&v| v == 0.0));
}

#[test]
fn false_output_mask_entries_are_undefined() {
    let x = seq(&[1, 2, 5]);
    let w = seq(&[3, 2, 2]);
    let y = call1(
        "aten::convolution",
        vec![
            t(&x),
            t(&w),
            IValue::None,
            ints(&[1]),
            ints(&[0]),
            ints(&[1]),
            IValue::Bool(false),
            ints(&[0]),
            IValue::Int(1),
        ],
    )
    .unwrap();
    let r = call(
        "aten::convolution_backward",
        vec![
            t(&y),
            t(&x),
            t(&w),
            IValue::None,
            ints(&[1]),
            ints(&[0]),
            ints(&[1]),
            IValue::Bool(false),
            ints(&[0]),
            IValue::Int(1),
            bools(&[true, false, true]),
        ],
    )
    .unwrap();
    assert_eq!(r.len(), 3);
    assert_eq!(r[0].as_tensor().unwrap().sizes().as_slice(), &[1, 2, 5]);
    assert!(r[1].is_none());
    assert_eq!(r[2].as_tensor().unwrap().sizes().as_slice(), &[3]);
}

#[test]
fn bad_arguments_are_errors() {
    let g = seq(&[1, 1, 3, 3]);
    let m = err(
        "aten::upsample_bilinear2d_backward",
        vec![
            t(&g),
            ints(&[4, 4]),
            ints(&[1, 1, 2, 2]),
            IValue::Bool(false),
            IValue::None,
            IValue::None,
        ],
    );
    assert!(
        m.contains("Expected grad_output to have the same shape"),
        "{m}"
    );
    let m = err(
        "aten::upsample_bilinear2d_backward",
        vec![
            t(&g),
            ints(&[3]),
            ints(&[1, 1, 2, 2]),
            IValue::Bool(false),
            IValue::None,
            IValue::None,
        ],
    );
    assert!(m.contains("output_size"), "{m}");
    // Indices outside the plane.
    let x = seq(&[1, 1, 2, 2]);
    let gi = seq(&[1, 1, 1, 1]);
    let idx = call1(
        "aten::mul.Scalar",
        vec![
            t(&Tensor::zeros(&[1, 1, 1, 1], DType::Int64).unwrap()),
            IValue::Int(1),
        ],
    )
    .unwrap();
    let idx = call1(
        "aten::add.Scalar",
        vec![t(&idx), IValue::Int(9), IValue::Int(1)],
    )
    .unwrap();
    let m = err(
        "aten::max_pool2d_with_indices_backward",
        vec![
            t(&gi),
            t(&x),
            ints(&[2, 2]),
            ints(&[2, 2]),
            ints(&[0, 0]),
            ints(&[1, 1]),
            IValue::Bool(false),
            t(&idx),
        ],
    );
    assert!(m.contains("out of range"), "{m}");
    let m = err(
        "aten::native_layer_norm_backward",
        vec![
            t(&seq(&[2, 4])),
            t(&seq(&[2, 4])),
            ints(&[5]),
            t(&seq(&[2, 1])),
            t(&seq(&[2, 1])),
            IValue::None,
            IValue::None,
            bools(&[true, false, false]),
        ],
    );
    assert!(m.contains("normalized_shape"), "{m}");
    let m = err(
        "aten::convolution_backward",
        vec![
            t(&seq(&[1, 3, 3])),
            t(&seq(&[1, 2, 5])),
            t(&seq(&[3, 2, 3])),
            IValue::None,
            ints(&[1]),
            ints(&[0]),
            ints(&[1]),
            IValue::Bool(false),
            ints(&[0]),
            IValue::Int(1),
            bools(&[true, true]),
        ],
    );
    assert!(m.contains("3 bools"), "{m}");
    let m = err(
        "aten::embedding_dense_backward",
        vec![
            t(&seq(&[2, 3])),
            t(&seq(&[2])),
            IValue::Int(4),
            IValue::Int(-1),
            IValue::Bool(false),
        ],
    );
    assert!(m.contains("'indices'"), "{m}");
    let m = err(
        "aten::select_backward",
        vec![t(&seq(&[3])), ints(&[3, 4]), IValue::Int(1), IValue::Int(7)],
    );
    assert!(m.contains("out of range"), "{m}");
    let m = err(
        "aten::_make_dual",
        vec![t(&seq(&[3])), t(&seq(&[3])), IValue::Int(0)],
    );
    assert!(m.contains("forward AD level"), "{m}");
    let m = err(
        "aten::_batch_norm_impl_index_backward",
        vec![
            IValue::Int(1),
            t(&seq(&[2, 3])),
            t(&seq(&[2, 3])),
            IValue::None,
            IValue::None,
            IValue::None,
            IValue::None,
            IValue::None,
            IValue::Bool(true),
            IValue::Double(1e-5),
            bools(&[true, true, true]),
            t(&seq(&[0])),
        ],
    );
    assert!(m.contains("cuDNN"), "{m}");
    // A CTC target length longer than the saved alphas allow.
    let lp = seq(&[4, 1, 3]);
    let m = err(
        "aten::_ctc_loss_backward",
        vec![
            t(&seq(&[1])),
            t(&lp),
            t(&Tensor::zeros(&[1, 5], DType::Int64).unwrap()),
            ints(&[4]),
            ints(&[5]),
            t(&seq(&[1])),
            t(&seq(&[1, 4, 3])),
            IValue::Int(0),
            IValue::Bool(false),
        ],
    );
    assert!(m.contains("do not fit"), "{m}");
}
