//! torchvision's operators against values torchvision 0.29 computed
//! (tools/models/gen_torchvision_fixtures.py writes tests/data/fixtures.json).

use serde_json::Value;
use ts_tensor::{DType, Tensor};
use ts_torchvision::{DeformConvParams, *};

fn tensor(v: &Value) -> Tensor {
    let shape: Vec<i64> = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect();
    let data: Vec<f64> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    match v["dtype"].as_str().unwrap() {
        "float32" => Tensor::from_vec(data.iter().map(|&x| x as f32).collect(), &shape),
        "float64" => Tensor::from_vec(data, &shape),
        "int64" => Tensor::from_vec(data.iter().map(|&x| x as i64).collect(), &shape),
        "int32" => Tensor::from_vec(data.iter().map(|&x| x as i32).collect(), &shape),
        d => panic!("fixture dtype {d}"),
    }
    .unwrap()
}

fn run(op: &str, a: &[Value]) -> Vec<Tensor> {
    let t = |i: usize| tensor(&a[i]);
    let f = |i: usize| a[i].as_f64().unwrap();
    let i = |i: usize| a[i].as_i64().unwrap();
    let b = |i: usize| a[i].as_bool().unwrap();
    match op {
        "nms" => vec![nms(&t(0), &t(1), f(2)).unwrap()],
        "roi_align" => vec![roi_align(&t(0), &t(1), f(2), i(3), i(4), i(5), b(6)).unwrap()],
        "ps_roi_align" => {
            let (o, m) = ps_roi_align(&t(0), &t(1), f(2), i(3), i(4), i(5)).unwrap();
            vec![o, m]
        }
        "roi_pool" => {
            let (o, m) = roi_pool(&t(0), &t(1), f(2), i(3), i(4)).unwrap();
            vec![o, m]
        }
        "ps_roi_pool" => {
            let (o, m) = ps_roi_pool(&t(0), &t(1), f(2), i(3), i(4)).unwrap();
            vec![o, m]
        }
        "deform_conv2d" => {
            let p = DeformConvParams {
                stride: (i(5), i(6)),
                padding: (i(7), i(8)),
                dilation: (i(9), i(10)),
                groups: i(11),
                offset_groups: i(12),
                use_mask: b(13),
            };
            vec![deform_conv2d(&t(0), &t(1), &t(2), &t(3), &t(4), &p).unwrap()]
        }
        "box_iou_rotated" => vec![box_iou_rotated(&t(0), &t(1)).unwrap()],
        _ => panic!("unknown op {op}"),
    }
}

fn close(op: &str, got: &Tensor, want: &Tensor) {
    assert_eq!(got.sizes(), want.sizes(), "{op}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{op}: dtype");
    let (g, w) = (got.to_vec::<f64>(), want.to_vec::<f64>());
    // Every kernel but deform_conv2d (a matrix product) follows torchvision's arithmetic order.
    let (rtol, atol) = match (op, got.dtype()) {
        ("deform_conv2d", DType::Float32) => (1e-5, 1e-5),
        ("deform_conv2d", _) => (1e-12, 1e-12),
        (_, DType::Float32) => (1e-6, 1e-6),
        _ => (1e-12, 1e-12),
    };
    for (k, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            (a - b).abs() <= atol + rtol * b.abs() || (a.is_nan() && b.is_nan()),
            "{op}: element {k}: got {a}, torchvision {b}"
        );
    }
}

#[test]
fn operators_match_torchvision() {
    let text = include_str!("data/fixtures.json");
    let fixtures: Value = serde_json::from_str(text).unwrap();
    let cases = fixtures["cases"].as_array().unwrap();
    assert!(cases.len() > 30);
    for c in cases {
        let op = c["op"].as_str().unwrap();
        let got = run(op, c["args"].as_array().unwrap());
        let want: Vec<Tensor> = c["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(tensor)
            .collect();
        assert_eq!(got.len(), want.len(), "{op}: outputs");
        for (g, w) in got.iter().zip(&want) {
            close(op, g, w);
        }
    }
}

#[test]
fn registered_under_torchvision_namespace() {
    let r = ts_ops::Registry::new();
    register(&r).unwrap();
    for name in [
        "nms",
        "roi_align",
        "ps_roi_align",
        "roi_pool",
        "ps_roi_pool",
        "deform_conv2d",
        "box_iou_rotated",
        "_cuda_version",
    ] {
        assert!(r.find(&format!("torchvision::{name}")).is_some(), "{name}");
    }
    let op = r.find("torchvision::_cuda_version").unwrap();
    let ts_ops::OperatorKind::Op(f) = &op.kind else {
        panic!("plain operation")
    };
    let mut stack = Vec::new();
    f(&mut stack).unwrap();
    assert_eq!(stack[0].as_int(), Some(-1));
}

fn f32s(v: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape).unwrap()
}

#[test]
fn nms_edge_cases() {
    let empty = Tensor::zeros(&[0, 4], DType::Float32).unwrap();
    let none = nms(&empty, &Tensor::zeros(&[0], DType::Float32).unwrap(), 0.5).unwrap();
    assert_eq!(none.sizes().to_vec(), vec![0]);
    assert_eq!(none.dtype(), DType::Int64);
    // Identical boxes: the higher score wins; a disjoint box survives.
    let b = f32s(&[0., 0., 1., 1., 0., 0., 1., 1., 5., 5., 6., 6.], &[3, 4]);
    let s = f32s(&[0.1, 0.9, 0.5], &[3]);
    assert_eq!(nms(&b, &s, 0.5).unwrap().to_vec::<i64>(), vec![1, 2]);
}

#[test]
fn bad_arguments_are_errors() {
    let b = f32s(&[0., 0., 1., 1.], &[1, 4]);
    let e = nms(&f32s(&[0., 0., 1.], &[1, 3]), &f32s(&[1.], &[1]), 0.5).unwrap_err();
    assert!(e.message.contains("4 elements in dimension 1"), "{e}");
    let e = nms(&b, &f32s(&[1., 2.], &[2]), 0.5).unwrap_err();
    assert!(e.message.contains("same number of elements"), "{e}");
    let e = nms(&b, &Tensor::from_vec(vec![1.0f64], &[1]).unwrap(), 0.5).unwrap_err();
    assert!(e.message.contains("same type"), "{e}");
    let ints = Tensor::from_vec(vec![0i64, 0, 1, 1], &[1, 4]).unwrap();
    let e = nms(&ints, &Tensor::from_vec(vec![1i64], &[1]).unwrap(), 0.5).unwrap_err();
    assert!(e.message.contains("not implemented for 'Long'"), "{e}");
    let x = Tensor::zeros(&[1, 4, 4, 4], DType::Float32).unwrap();
    let e = roi_align(&x, &f32s(&[0., 0., 0., 1.], &[1, 4]), 1.0, 2, 2, 1, false).unwrap_err();
    assert!(e.message.contains("Tensor[K, 5]"), "{e}");
    let far = f32s(&[3., 0., 0., 1., 1.], &[1, 5]);
    let e = roi_align(&x, &far, 1.0, 2, 2, 1, false).unwrap_err();
    assert!(e.message.contains("batch index"), "{e}");
    let e = ps_roi_align(&x, &f32s(&[0., 0., 0., 1., 1.], &[1, 5]), 1.0, 3, 3, 1).unwrap_err();
    assert!(e.message.contains("multiple of pooling"), "{e}");
    let e = box_iou_rotated(&b, &b).unwrap_err();
    assert!(e.message.contains("shape (N, 5)"), "{e}");
}
