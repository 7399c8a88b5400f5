//! The neural-network kernels (GEMM family, convolution, pooling, normalization, embedding,
//! recurrent layers, attention) compared with real PyTorch 2.15 results recorded in
//! `fixtures/nn.json` (regenerate with `fixtures/gen_nn.py`). Inputs are stored in the fixture;
//! values, dtypes, shapes and error messages must agree.

use serde_json::Value;
use ts_tensor::{
    batch_norm, conv1d, conv2d, conv_transpose1d, conv_transpose2d, convolution, embedding,
    embedding_bag, group_norm, gru, gru_cell, instance_norm, layer_norm, lstm, lstm_cell, rnn_tanh,
    rnn_tanh_cell, scaled_dot_product_attention, transformer_encoder_layer_fwd, BagMode,
    ConvPadding, DType, EncoderLayerWeights, Result, RnnOptions, Scalar, Tensor,
};

fn num(v: &Value) -> f64 {
    match v {
        Value::String(s) if s == "nan" => f64::NAN,
        Value::String(s) if s == "inf" => f64::INFINITY,
        Value::String(s) if s == "-inf" => f64::NEG_INFINITY,
        Value::Bool(b) => *b as i64 as f64,
        other => other.as_f64().unwrap_or(f64::NAN),
    }
}

fn decode(v: &Value) -> Option<Tensor> {
    if v.is_null() {
        return None;
    }
    let dtype = DType::from_name(v["dtype"].as_str().unwrap()).unwrap();
    let shape: Vec<i64> = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect();
    let vals: Vec<f64> = v["values"].as_array().unwrap().iter().map(num).collect();
    Some(
        Tensor::from_vec(vals, &shape)
            .unwrap()
            .to_dtype(dtype, false)
            .unwrap(),
    )
}

fn scalar(v: &Value) -> Scalar {
    match v {
        Value::Number(n) if n.is_i64() => Scalar::Int(n.as_i64().unwrap()),
        other => Scalar::Float(num(other)),
    }
}

#[allow(dead_code)] // used by the convolution and pooling cases
fn ints(v: &Value) -> Vec<i64> {
    match v {
        Value::Array(a) => a.iter().map(|x| x.as_i64().unwrap()).collect(),
        Value::Number(n) => vec![n.as_i64().unwrap()],
        _ => vec![],
    }
}

fn one(r: Result<Tensor>) -> Result<Vec<Tensor>> {
    r.map(|t| vec![t])
}

/// Runs one fixture case; `None` when the op is not known to this harness.
fn run(op: &str, x: &[Option<Tensor>], kw: &Value) -> Option<Result<Vec<Tensor>>> {
    let t = |i: usize| x[i].as_ref().unwrap();
    let o = |i: usize| x.get(i).and_then(|v| v.as_ref());
    Some(match op {
        "mm" => one(t(0).mm(t(1))),
        "mm_tt" => one(t(0).t().unwrap().mm(&t(1).t().unwrap())),
        "bmm" => one(t(0).bmm(t(1))),
        "matmul" => one(t(0).matmul(t(1))),
        "addmm" => one(t(0).addmm(t(1), t(2), scalar(&kw["beta"]), scalar(&kw["alpha"]))),
        "baddbmm" => one(t(0).baddbmm(t(1), t(2), scalar(&kw["beta"]), scalar(&kw["alpha"]))),
        "linear" => one(t(0).linear(t(1), o(2))),
        _ => return extra(op, x, kw),
    })
}

fn padding(v: &Value) -> ConvPadding {
    match v {
        Value::String(s) => ConvPadding::parse(s).unwrap(),
        other => ConvPadding::Explicit(ints(other)),
    }
}

fn pair(r: Result<(Tensor, Tensor)>) -> Result<Vec<Tensor>> {
    r.map(|(a, b)| vec![a, b])
}

/// Convolution and pooling.
fn extra(op: &str, x: &[Option<Tensor>], kw: &Value) -> Option<Result<Vec<Tensor>>> {
    let t = |i: usize| x[i].as_ref().unwrap();
    let o = |i: usize| x.get(i).and_then(|v| v.as_ref());
    let k = |n: &str| ints(&kw[n]);
    let b = |n: &str| kw[n].as_bool().unwrap_or(false);
    Some(match op {
        "conv2d" | "conv1d" => {
            let f = if op == "conv2d" { conv2d } else { conv1d };
            one(f(
                t(0),
                t(1),
                o(2),
                &k("stride"),
                &padding(&kw["padding"]),
                &k("dilation"),
                kw["groups"].as_i64().unwrap(),
            ))
        }
        "conv_transpose2d" | "conv_transpose1d" => {
            let f = if op == "conv_transpose2d" {
                conv_transpose2d
            } else {
                conv_transpose1d
            };
            one(f(
                t(0),
                t(1),
                o(2),
                &k("stride"),
                &k("padding"),
                &k("output_padding"),
                kw["groups"].as_i64().unwrap(),
                &k("dilation"),
            ))
        }
        "convolution" => one(convolution(
            t(0),
            t(1),
            o(2),
            &k("stride"),
            &padding(&kw["padding"]),
            &k("dilation"),
            b("transposed"),
            &k("output_padding"),
            kw["groups"].as_i64().unwrap(),
        )),
        "max_pool2d_with_indices" => pair(t(0).max_pool2d_with_indices(
            &k("kernel_size"),
            &k("stride"),
            &k("padding"),
            &k("dilation"),
            b("ceil_mode"),
        )),
        "max_pool1d_with_indices" => pair(t(0).max_pool1d_with_indices(
            &k("kernel_size"),
            &k("stride"),
            &k("padding"),
            &k("dilation"),
            b("ceil_mode"),
        )),
        "avg_pool2d" => one(t(0).avg_pool2d(
            &k("kernel_size"),
            &k("stride"),
            &k("padding"),
            b("ceil_mode"),
            b("count_include_pad"),
            kw["divisor_override"].as_i64(),
        )),
        "avg_pool1d" => one(t(0).avg_pool1d(
            &k("kernel_size"),
            &k("stride"),
            &k("padding"),
            b("ceil_mode"),
            b("count_include_pad"),
        )),
        "adaptive_avg_pool2d" => one(t(0).adaptive_avg_pool2d(&k("output_size"))),
        "adaptive_avg_pool1d" => one(t(0).adaptive_avg_pool1d(&k("output_size"))),
        "adaptive_max_pool2d" => pair(t(0).adaptive_max_pool2d(&k("output_size"))),
        _ => return layers(op, x, kw),
    })
}

fn f(kw: &Value, n: &str) -> f64 {
    kw[n].as_f64().unwrap()
}

fn rnn_opts(kw: &Value) -> RnnOptions {
    RnnOptions {
        has_biases: kw["has_biases"].as_bool().unwrap(),
        num_layers: kw["num_layers"].as_i64().unwrap(),
        dropout: f(kw, "dropout"),
        train: kw["train"].as_bool().unwrap(),
        bidirectional: kw["bidirectional"].as_bool().unwrap(),
        batch_first: kw["batch_first"].as_bool().unwrap(),
    }
}

/// Normalization, embedding, recurrent layers and attention.
fn layers(op: &str, x: &[Option<Tensor>], kw: &Value) -> Option<Result<Vec<Tensor>>> {
    let t = |i: usize| x[i].as_ref().unwrap();
    let o = |i: usize| x.get(i).and_then(|v| v.as_ref());
    let b = |n: &str| kw[n].as_bool().unwrap_or(false);
    let all: Vec<Tensor> = x.iter().flatten().cloned().collect();
    // In-place updated running statistics are returned after the output, as the fixture does.
    let with_stats = |r: Result<Tensor>| -> Result<Vec<Tensor>> {
        let mut v = vec![r?];
        v.extend([o(3), o(4)].into_iter().flatten().cloned());
        Ok(v)
    };
    Some(match op {
        "batch_norm" => {
            // Run on copies: the fixture inputs are shared with nothing, but keep the case pure.
            let rm = o(3).map(|t| t.clone_tensor().unwrap());
            let rv = o(4).map(|t| t.clone_tensor().unwrap());
            let r = batch_norm(
                t(0),
                o(1),
                o(2),
                rm.as_ref(),
                rv.as_ref(),
                b("training"),
                f(kw, "momentum"),
                f(kw, "eps"),
            );
            r.map(|out| {
                let mut v = vec![out];
                v.extend(rm.into_iter().chain(rv));
                v
            })
        }
        "instance_norm" => with_stats(instance_norm(
            t(0),
            o(1),
            o(2),
            o(3),
            o(4),
            b("use_input_stats"),
            f(kw, "momentum"),
            f(kw, "eps"),
        )),
        "layer_norm" => one(layer_norm(
            t(0),
            &ints(&kw["normalized_shape"]),
            o(1),
            o(2),
            f(kw, "eps"),
        )),
        "group_norm" => one(group_norm(
            t(0),
            kw["num_groups"].as_i64().unwrap(),
            o(1),
            o(2),
            f(kw, "eps"),
        )),
        "embedding" => one(embedding(t(0), t(1))),
        "embedding_bag" => embedding_bag(
            t(0),
            t(1),
            o(2),
            BagMode::parse(kw["mode"].as_str().unwrap()).unwrap(),
            o(3),
            b("include_last_offset"),
            kw["padding_idx"].as_i64(),
        )
        .map(|r| vec![r.0]),
        "lstm" => lstm(t(0), &all[1..3], &all[3..], rnn_opts(kw)).map(|(a, b, c)| vec![a, b, c]),
        "gru" => gru(t(0), t(1), &all[2..], rnn_opts(kw)).map(|(a, b)| vec![a, b]),
        "rnn_tanh" => rnn_tanh(t(0), t(1), &all[2..], rnn_opts(kw)).map(|(a, b)| vec![a, b]),
        "lstm_cell" => lstm_cell(t(0), &all[1..3], t(3), t(4), o(5), o(6)).map(|(a, b)| vec![a, b]),
        "gru_cell" => one(gru_cell(t(0), t(1), t(2), t(3), o(4), o(5))),
        "rnn_tanh_cell" => one(rnn_tanh_cell(t(0), t(1), t(2), t(3), o(4), o(5))),
        "sdpa" => one(scaled_dot_product_attention(
            t(0),
            t(1),
            t(2),
            o(3),
            0.0,
            b("is_causal"),
            kw["scale"].as_f64(),
        )),
        "transformer_encoder_layer_fwd" => {
            let w = EncoderLayerWeights {
                qkv_weight: t(2),
                qkv_bias: o(3),
                proj_weight: t(4),
                proj_bias: o(5),
                norm_weight_1: o(6),
                norm_bias_1: o(7),
                norm_weight_2: o(8),
                norm_bias_2: o(9),
                ffn_weight_1: t(10),
                ffn_bias_1: o(11),
                ffn_weight_2: t(12),
                ffn_bias_2: o(13),
            };
            one(transformer_encoder_layer_fwd(
                t(0),
                8,
                2,
                &w,
                b("use_gelu"),
                b("norm_first"),
                1e-5,
                o(1),
                kw["mask_type"].as_i64(),
            ))
        }
        _ => return None,
    })
}

fn tolerance(dt: DType) -> f64 {
    match dt {
        DType::Float16 | DType::BFloat16 => 2e-2,
        DType::Float32 => 2e-4,
        _ => 1e-9,
    }
}

fn check(name: &str, got: &Tensor, want: &Value) -> std::result::Result<(), String> {
    let w = decode(want).unwrap();
    if got.dtype() != w.dtype() {
        return Err(format!("{name}: dtype {} vs {}", got.dtype(), w.dtype()));
    }
    if got.sizes() != w.sizes() {
        return Err(format!(
            "{name}: shape {:?} vs {:?}",
            got.sizes(),
            w.sizes()
        ));
    }
    let tol = tolerance(w.dtype());
    let (g, e) = (got.to_vec::<f64>(), w.to_vec::<f64>());
    for (i, (a, b)) in g.iter().zip(&e).enumerate() {
        let ok = (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * (1.0 + b.abs());
        if !ok {
            return Err(format!("{name}: element {i}: {a} vs {b}"));
        }
    }
    Ok(())
}

#[test]
fn nn_kernels_match_torch() {
    let text = include_str!("fixtures/nn.json");
    let root: Value = serde_json::from_str(text).unwrap();
    let mut failures = Vec::new();
    let mut ran = 0;
    for (n, c) in root["cases"].as_array().unwrap().iter().enumerate() {
        let op = c["op"].as_str().unwrap();
        let inputs: Vec<Option<Tensor>> =
            c["inputs"].as_array().unwrap().iter().map(decode).collect();
        let name = format!("#{n} {op} {}", c["kw"]);
        let Some(res) = run(op, &inputs, &c["kw"]) else {
            failures.push(format!("{name}: op not covered by the harness"));
            continue;
        };
        ran += 1;
        match (res, c.get("error")) {
            (Ok(_), Some(e)) => failures.push(format!("{name}: expected error {e}")),
            (Err(e), None) => failures.push(format!("{name}: unexpected error {}", e.message)),
            (Err(e), Some(want)) => {
                if e.message != want.as_str().unwrap() {
                    failures.push(format!("{name}: message {:?} vs {want}", e.message));
                }
            }
            (Ok(outs), None) => {
                let want = c["outs"].as_array().unwrap();
                if outs.len() != want.len() {
                    failures.push(format!("{name}: {} outputs vs {}", outs.len(), want.len()));
                    continue;
                }
                for (k, (g, w)) in outs.iter().zip(want).enumerate() {
                    if let Err(msg) = check(&format!("{name} out{k}"), g, w) {
                        failures.push(msg);
                    }
                }
            }
        }
    }
    assert!(ran > 0);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
