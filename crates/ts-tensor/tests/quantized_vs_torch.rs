//! The quantized kernels compared with PyTorch 2.15's FBGEMM results recorded in
//! `fixtures/quantized.json` (regenerate with `fixtures/gen_quantized.py`): quantized results
//! must have the same integers and parameters, float results agree to float rounding.

use serde_json::Value;
use ts_tensor::quantized::{
    self as q, DynamicLinearWeights, DynamicLstmCell, QConvParams, QDType, QScheme, Quantizer,
};
use ts_tensor::Tensor;

fn fixtures() -> Vec<Value> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/quantized.json"
    ))
    .unwrap();
    serde_json::from_str::<Value>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn float_tensor(v: &Value) -> Tensor {
    let vals: Vec<f32> = floats(&v["values"]).iter().map(|&x| x as f32).collect();
    Tensor::from_vec(vals, &ints(&v["shape"])).unwrap()
}

fn qdtype(name: &str) -> QDType {
    match name {
        "qint8" => QDType::QInt8,
        "quint8" => QDType::QUInt8,
        "qint32" => QDType::QInt32,
        other => panic!("unknown dtype {other}"),
    }
}

fn quantizer(v: &Value) -> Quantizer {
    let dtype = qdtype(v["dtype"].as_str().unwrap());
    let scheme = if v.get("scale").is_some() {
        QScheme::PerTensorAffine {
            scale: v["scale"].as_f64().unwrap(),
            zero_point: v["zero_point"].as_i64().unwrap(),
        }
    } else {
        QScheme::PerChannelAffine {
            scales: floats(&v["scales"]),
            zero_points: ints(&v["zero_points"]),
            axis: v["axis"].as_u64().unwrap() as usize,
        }
    };
    Quantizer { dtype, scheme }
}

fn qtensor(v: &Value) -> Tensor {
    q::from_int_values(&ints(&v["ints"]), &ints(&v["shape"]), quantizer(v)).unwrap()
}

fn assert_q(got: &Tensor, want: &Value, what: &str) {
    let gq = got.quantizer().expect("a quantized result");
    let wq = quantizer(want);
    assert_eq!(gq.dtype, wq.dtype, "{what}: dtype");
    match (&gq.scheme, &wq.scheme) {
        (
            QScheme::PerTensorAffine {
                scale: a,
                zero_point: za,
            },
            QScheme::PerTensorAffine {
                scale: b,
                zero_point: zb,
            },
        ) => {
            assert!((a - b).abs() <= 1e-12 * b.abs(), "{what}: scale {a} vs {b}");
            assert_eq!(za, zb, "{what}: zero point");
        }
        (a, b) => assert_eq!(a, b, "{what}: scheme"),
    }
    assert_eq!(got.sizes().to_vec(), ints(&want["shape"]), "{what}: shape");
    assert_eq!(q::int_values(got), ints(&want["ints"]), "{what}: integers");
}

fn assert_close(got: &Tensor, want: &Value, what: &str) {
    assert_eq!(got.sizes().to_vec(), ints(&want["shape"]), "{what}: shape");
    let g = got.to_vec::<f64>();
    let w = floats(&want["values"]);
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 + 1e-4 * b.abs(),
            "{what}: element {i}: {a} vs {b}"
        );
    }
}

#[test]
fn quantized_kernels_match_fbgemm() {
    let cases = fixtures();
    assert!(cases.len() >= 20);
    for (i, c) in cases.iter().enumerate() {
        let op = c["op"].as_str().unwrap();
        let what = format!("case {i} ({op})");
        match op {
            "quantize_per_tensor" => {
                let out = &c["out"];
                let y = q::quantize_per_tensor(
                    &float_tensor(&c["x"]),
                    c["scale"].as_f64().unwrap(),
                    c["zero_point"].as_i64().unwrap(),
                    qdtype(out["dtype"].as_str().unwrap()),
                )
                .unwrap();
                assert_q(&y, out, &what);
                assert_close(&q::dequantize(&y).unwrap(), &c["dequant"], &what);
            }
            "quantize_per_channel" => {
                let out = &c["out"];
                let y = q::quantize_per_channel(
                    &float_tensor(&c["x"]),
                    floats(&out["scales"]),
                    ints(&out["zero_points"]),
                    0,
                    QDType::QInt8,
                )
                .unwrap();
                assert_q(&y, out, &what);
            }
            "conv2d" => {
                let p = QConvParams {
                    stride: [c["stride"].as_u64().unwrap() as usize; 2],
                    padding: [c["padding"].as_u64().unwrap() as usize; 2],
                    dilation: [c["dilation"].as_u64().unwrap() as usize; 2],
                    groups: c["groups"].as_u64().unwrap() as usize,
                };
                let y = q::qconv2d(
                    &qtensor(&c["x"]),
                    &qtensor(&c["w"]),
                    Some(&float_tensor(&c["bias"])),
                    &p,
                    c["scale"].as_f64().unwrap(),
                    c["zero_point"].as_i64().unwrap(),
                    c["relu"].as_bool().unwrap(),
                )
                .unwrap();
                assert_q(&y, &c["out"], &what);
            }
            "linear" => {
                let y = q::qlinear(
                    &qtensor(&c["x"]),
                    &qtensor(&c["w"]),
                    Some(&float_tensor(&c["bias"])),
                    c["scale"].as_f64().unwrap(),
                    c["zero_point"].as_i64().unwrap(),
                    c["relu"].as_bool().unwrap(),
                )
                .unwrap();
                assert_q(&y, &c["out"], &what);
            }
            "linear_dynamic" => {
                let y = q::qlinear_dynamic(
                    &float_tensor(&c["x"]),
                    &qtensor(&c["w"]),
                    Some(&float_tensor(&c["bias"])),
                    c["reduce_range"].as_bool().unwrap(),
                    false,
                )
                .unwrap();
                assert_close(&y, &c["out"], &what);
            }
            "add" | "mul" => {
                let f = if op == "add" { q::qadd } else { q::qmul };
                let y = f(
                    &qtensor(&c["a"]),
                    &qtensor(&c["b"]),
                    c["scale"].as_f64().unwrap(),
                    c["zero_point"].as_i64().unwrap(),
                    c["relu"].as_bool().unwrap(),
                )
                .unwrap();
                assert_q(&y, &c["out"], &what);
            }
            "hardswish" => {
                let y = q::qhardswish(
                    &qtensor(&c["x"]),
                    c["scale"].as_f64().unwrap(),
                    c["zero_point"].as_i64().unwrap(),
                )
                .unwrap();
                assert_q(&y, &c["out"], &what);
            }
            "hardsigmoid" => assert_q(
                &q::qhardsigmoid(&qtensor(&c["x"])).unwrap(),
                &c["out"],
                &what,
            ),
            "relu" => assert_q(&q::qrelu(&qtensor(&c["x"])).unwrap(), &c["out"], &what),
            "adaptive_avg_pool2d" => {
                let s = ints(&c["output_size"]);
                let y = q::qadaptive_avg_pool2d(&qtensor(&c["x"]), [s[0] as usize, s[1] as usize])
                    .unwrap();
                assert_q(&y, &c["out"], &what);
            }
            "max_pool2d" => {
                let k = c["kernel"].as_u64().unwrap() as usize;
                let s = c["stride"].as_u64().unwrap() as usize;
                let p = c["padding"].as_u64().unwrap() as usize;
                let y = q::qmax_pool2d(
                    &qtensor(&c["x"]),
                    [k; 2],
                    [s; 2],
                    [p; 2],
                    [1; 2],
                    c["ceil_mode"].as_bool().unwrap(),
                )
                .unwrap();
                assert_q(&y, &c["out"], &what);
            }
            "lstm" => {
                let cells: Vec<DynamicLstmCell> = c["cells"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|pair| {
                        let lin = |v: &Value| DynamicLinearWeights {
                            weight: qtensor(&v["w"]),
                            bias: Some(float_tensor(&v["bias"])),
                        };
                        DynamicLstmCell {
                            ih: lin(&pair[0]),
                            hh: lin(&pair[1]),
                            reduce_range: true,
                        }
                    })
                    .collect();
                let zeros = Tensor::zeros(&[4, 2, 4], ts_tensor::DType::Float32).unwrap();
                let (y, hn, cn) = q::quantized_lstm_dynamic(
                    &float_tensor(&c["x"]),
                    &zeros,
                    &zeros,
                    &cells,
                    2,
                    true,
                    true,
                )
                .unwrap();
                assert_close(&y, &c["out"], &what);
                assert_close(&hn, &c["hn"], &what);
                assert_close(&cn, &c["cn"], &what);
            }
            other => panic!("unknown fixture op {other}"),
        }
    }
}

#[test]
fn bad_quantized_inputs_are_errors() {
    let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    assert!(q::quantize_per_tensor(&x, 0.0, 0, QDType::QUInt8).is_err());
    assert!(q::quantize_per_tensor(&x, 0.1, 300, QDType::QUInt8).is_err());
    assert!(q::dequantize(&x).is_err());
    let qx = q::quantize_per_tensor(&x, 0.1, 0, QDType::QUInt8).unwrap();
    assert!(q::quantize_per_tensor(&qx, 0.1, 0, QDType::QUInt8).is_err());
    let w3 = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[1, 3]).unwrap();
    let w = q::quantize_per_tensor(&w3, 0.1, 0, QDType::QInt8).unwrap();
    // Inner dimensions that do not match (2 against 3), and a float tensor where a quantized
    // one is needed.
    assert!(q::qlinear(&qx, &w, None, 0.1, 0, false).is_err());
    assert!(q::qlinear_dynamic(&x.reshape(&[1, 2]).unwrap(), &x, None, false, false).is_err());
    let a = q::quantize_per_tensor(
        &Tensor::zeros(&[3], ts_tensor::DType::Float32).unwrap(),
        0.1,
        0,
        QDType::QUInt8,
    )
    .unwrap();
    assert!(q::qadd(&qx, &a, 0.1, 0, false).is_err());
    assert!(q::qadaptive_avg_pool2d(&qx, [1, 1]).is_err());
}
