//! Elementwise ops, reductions, scans and sorting compared with real PyTorch 2.15 results
//! recorded in `fixtures/ops.json` (regenerate with `fixtures/gen_ops.py`). Values, dtypes,
//! shapes and error messages must all agree.

use std::collections::HashMap;

use serde_json::Value;
use ts_tensor::{DType, ErrorKind, Result, RoundingMode, Scalar, Tensor};

fn num(v: &Value) -> f64 {
    match v {
        Value::String(s) if s == "nan" => f64::NAN,
        Value::String(s) if s == "inf" => f64::INFINITY,
        Value::String(s) if s == "-inf" => f64::NEG_INFINITY,
        Value::Bool(b) => *b as i64 as f64,
        other => other.as_f64().unwrap_or(f64::NAN),
    }
}

fn decode(v: &Value) -> Tensor {
    let dtype = DType::from_name(v["dtype"].as_str().unwrap()).unwrap();
    let shape: Vec<i64> = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect();
    let vals: Vec<f64> = v["values"].as_array().unwrap().iter().map(num).collect();
    Tensor::from_vec(vals, &shape)
        .unwrap()
        .to_dtype(dtype, false)
        .unwrap()
}

fn scalar(v: &Value) -> Scalar {
    match v {
        Value::Bool(b) => Scalar::Bool(*b),
        Value::Number(n) if n.is_i64() => Scalar::Int(n.as_i64().unwrap()),
        other => Scalar::Float(num(other)),
    }
}

fn dims(v: &Value) -> Option<Vec<i64>> {
    v.as_array()
        .map(|a| a.iter().map(|x| x.as_i64().unwrap()).collect())
}

fn run(op: &str, args: &[Tensor], sc: Option<Scalar>, kw: &Value) -> Result<Vec<Tensor>> {
    let a = &args[0];
    let one = |r: Result<Tensor>| r.map(|t| vec![t]);
    let kdims = dims(&kw["dims"]);
    // Without dims the fixture's torch call ignores keepdim for these (e.g. `torch.sum(t)`).
    let ignores_keep = ["sum", "mean", "var", "std", "all", "any", "prod"].contains(&op);
    let keep = kw["keepdim"].as_bool().unwrap_or(false) && !(ignores_keep && kw["dims"].is_null());
    let dim = kw["dim"].as_i64();
    let d = kdims.as_deref();
    match op {
        "abs" => one(a.abs()),
        "neg" => one(a.neg()),
        "sign" => one(a.sign()),
        "exp" => one(a.exp()),
        "exp2" => one(a.exp2()),
        "expm1" => one(a.expm1()),
        "log" => one(a.log()),
        "log2" => one(a.log2()),
        "log10" => one(a.log10()),
        "log1p" => one(a.log1p()),
        "sqrt" => one(a.sqrt()),
        "rsqrt" => one(a.rsqrt()),
        "reciprocal" => one(a.reciprocal()),
        "sin" => one(a.sin()),
        "cos" => one(a.cos()),
        "tan" => one(a.tan()),
        "asin" => one(a.asin()),
        "acos" => one(a.acos()),
        "atan" => one(a.atan()),
        "sinh" => one(a.sinh()),
        "cosh" => one(a.cosh()),
        "tanh" => one(a.tanh()),
        "asinh" => one(a.asinh()),
        "acosh" => one(a.acosh()),
        "atanh" => one(a.atanh()),
        "sigmoid" => one(a.sigmoid()),
        "relu" => one(a.relu()),
        "floor" => one(a.floor()),
        "ceil" => one(a.ceil()),
        "round" => one(a.round()),
        "trunc" => one(a.trunc()),
        "frac" => one(a.frac()),
        "erf" => one(a.erf()),
        "erfc" => one(a.erfc()),
        "erfinv" => one(a.erfinv()),
        "isnan" => one(a.isnan()),
        "isinf" => one(a.isinf()),
        "isfinite" => one(a.isfinite()),
        "logical_not" => one(a.logical_not()),
        "bitwise_not" => one(a.bitwise_not()),
        "square" => one(a.square()),
        "gelu" => one(a.gelu("none")),
        "gelu_tanh" => one(a.gelu("tanh")),
        "silu" => one(a.silu()),
        "mish" => one(a.mish()),
        "softplus" => one(a.softplus(Scalar::Int(1), Scalar::Int(20))),
        "hardsigmoid" => one(a.hardsigmoid()),
        "hardswish" => one(a.hardswish()),
        "selu" => one(a.selu()),
        "elu" => one(a.elu(Scalar::Float(1.0), Scalar::Int(1), Scalar::Int(1))),
        "leaky_relu" => one(a.leaky_relu(Scalar::Float(0.01))),
        "logsigmoid" => one(a.log_sigmoid()),
        "relu6" => one(a.relu6()),
        "hardtanh" => one(a.hardtanh(Scalar::Float(-1.0), Scalar::Float(1.0))),
        "add_alpha" => one(a.add(&args[1], scalar(&kw["alpha"]))),
        "sub_alpha" => one(a.sub(&args[1], scalar(&kw["alpha"]))),
        "div_mode" => {
            let m = RoundingMode::parse(kw["mode"].as_str()).unwrap();
            one(a.div_mode(&args[1], m))
        }
        "clamp" => {
            let s = |v: &Value| if v.is_null() { None } else { Some(scalar(v)) };
            one(a.clamp(s(&kw["min"]), s(&kw["max"])))
        }
        "sum" => one(a.sum(d, keep, None)),
        "mean" => one(a.mean(d, keep, None)),
        "prod" => one(a.prod(d.map(|x| x[0]), keep, None)),
        "amax" => one(a.amax(d.unwrap_or(&[]), keep)),
        "amin" => one(a.amin(d.unwrap_or(&[]), keep)),
        "logsumexp" => {
            let all: Vec<i64> = (0..a.dim() as i64).collect();
            one(a.logsumexp(d.unwrap_or(&all), keep))
        }
        "var" => one(a.var(d, None, keep)),
        "std" => one(a.std(d, None, keep)),
        "norm" => one(a.norm(Some(Scalar::Int(2)), d, keep, None)),
        "all" => one(a.all(d, keep)),
        "any" => one(a.any(d, keep)),
        "count_nonzero" => one(a.count_nonzero(d)),
        "argmax" => one(a.argmax(dim, false)),
        "argmin" => one(a.argmin(dim, false)),
        "max_dim" => a.max_dim(dim.unwrap(), false).map(|(v, i)| vec![v, i]),
        "min_dim" => a.min_dim(dim.unwrap(), false).map(|(v, i)| vec![v, i]),
        "cumsum" => one(a.cumsum(dim.unwrap(), None)),
        "cumprod" => one(a.cumprod(dim.unwrap(), None)),
        "softmax" => one(a.softmax(dim.unwrap(), None)),
        "log_softmax" => one(a.log_softmax(dim.unwrap(), None)),
        "sort" => a
            .sort(dim.unwrap(), kw["descending"].as_bool().unwrap())
            .map(|(v, i)| vec![v, i]),
        _ => {
            let (name, scalar_form) = match op.strip_suffix("_scalar") {
                Some(n) => (n, true),
                None => (op, false),
            };
            let b = if scalar_form { None } else { Some(&args[1]) };
            let s = sc.unwrap_or(Scalar::Int(0));
            let one_alpha = Scalar::Int(1);
            let r = match (name, b) {
                ("add", Some(b)) => a.add(b, one_alpha),
                ("add", None) => a.add_scalar(s, one_alpha),
                ("sub", Some(b)) => a.sub(b, one_alpha),
                ("sub", None) => a.sub_scalar(s, one_alpha),
                ("mul", Some(b)) => a.mul(b),
                ("mul", None) => a.mul_scalar(s),
                ("div", Some(b)) => a.div(b),
                ("div", None) => a.div_scalar(s),
                ("floor_divide", Some(b)) => a.floor_divide(b),
                ("floor_divide", None) => a.floor_divide_scalar(s),
                ("remainder", Some(b)) => a.remainder(b),
                ("remainder", None) => a.remainder_scalar(s),
                ("fmod", Some(b)) => a.fmod(b),
                ("fmod", None) => a.fmod_scalar(s),
                ("pow", Some(b)) => a.pow(b),
                ("pow", None) => a.pow_scalar(s),
                ("atan2", Some(b)) => a.atan2(b),
                ("maximum", Some(b)) => a.maximum(b),
                ("minimum", Some(b)) => a.minimum(b),
                ("eq", Some(b)) => a.eq(b),
                ("eq", None) => a.eq_scalar(s),
                ("ne", Some(b)) => a.ne(b),
                ("lt", Some(b)) => a.lt(b),
                ("lt", None) => a.lt_scalar(s),
                ("le", Some(b)) => a.le(b),
                ("gt", Some(b)) => a.gt(b),
                ("ge", Some(b)) => a.ge(b),
                ("logical_and", Some(b)) => a.logical_and(b),
                ("logical_or", Some(b)) => a.logical_or(b),
                ("logical_xor", Some(b)) => a.logical_xor(b),
                ("bitwise_and", Some(b)) => a.bitwise_and(b),
                ("bitwise_or", Some(b)) => a.bitwise_or(b),
                ("bitwise_xor", Some(b)) => a.bitwise_xor(b),
                _ => panic!("op {op} not mapped"),
            };
            one(r)
        }
    }
}

fn close(got: &Tensor, want: &Tensor) -> std::result::Result<(), String> {
    if got.dtype() != want.dtype() {
        return Err(format!("dtype {} vs {}", got.dtype(), want.dtype()));
    }
    if got.sizes() != want.sizes() {
        return Err(format!(
            "shape {:?} vs {:?}",
            got.sizes().as_slice(),
            want.sizes().as_slice()
        ));
    }
    let (g, w) = (got.to_vec::<f64>(), want.to_vec::<f64>());
    let rtol = match want.dtype() {
        DType::Float16 | DType::BFloat16 => 2e-3,
        DType::Float32 => 2e-6,
        DType::Float64 => 1e-12,
        _ => 0.0,
    };
    for (k, (a, b)) in g.iter().zip(&w).enumerate() {
        let ok = (a.is_nan() && b.is_nan())
            || a == b
            || (a - b).abs() <= rtol * b.abs().max(1e-30) + rtol * 1e-3;
        if !ok {
            return Err(format!(
                "element {k}: {a} vs {b}\n  got  {got}\n  want {want}"
            ));
        }
    }
    Ok(())
}

#[test]
fn ops_match_torch() {
    let data: Value = serde_json::from_str(include_str!("fixtures/ops.json")).unwrap();
    let inputs: HashMap<String, Tensor> = data["inputs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), decode(v)))
        .collect();
    let mut failures = Vec::new();
    let cases = data["cases"].as_array().unwrap();
    for c in cases {
        let op = c["op"].as_str().unwrap();
        let mut args = Vec::new();
        let mut sc = None;
        for a in c["args"].as_array().unwrap() {
            match a {
                Value::String(name) => args.push(inputs[name].clone()),
                other => sc = Some(scalar(&other["scalar"])),
            }
        }
        let label = format!("{op}({}) {}", c["args"], c["kw"]);
        let got = run(op, &args, sc, &c["kw"]);
        match (got, c.get("error")) {
            (Ok(outs), None) => {
                for (o, w) in outs.iter().zip(c["outs"].as_array().unwrap()) {
                    if let Err(e) = close(o, &decode(w)) {
                        failures.push(format!("{label}: {e}"));
                    }
                }
            }
            (Err(e), Some(want)) => {
                let want = want.as_str().unwrap();
                if want == "skip" {
                    continue;
                }
                let kind_ok = match c["kind"].as_str().unwrap() {
                    "NotImplementedError" => e.kind == ErrorKind::NotImplementedError,
                    "IndexError" => e.kind == ErrorKind::IndexError,
                    "TypeError" => true,
                    _ => e.kind == ErrorKind::RuntimeError,
                };
                if e.message != want || !kind_ok {
                    failures.push(format!(
                        "{label}: error {:?} {:?}, torch {} {:?}",
                        e.kind, e.message, c["kind"], want
                    ));
                }
            }
            (Ok(outs), Some(want)) => {
                if want.as_str() != Some("skip") {
                    failures.push(format!("{label}: expected error {want}, got {}", outs[0]));
                }
            }
            (Err(e), None) => failures.push(format!("{label}: unexpected error {e}")),
        }
    }
    for f in &failures {
        eprintln!("{f}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from torch",
        failures.len(),
        cases.len()
    );
}
