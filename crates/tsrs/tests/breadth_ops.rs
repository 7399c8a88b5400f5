//! Operators added for breadth (derived `out=`/in-place overloads, `_foreach_*`, fused
//! optimizers, windows, einsum, number theory) end to end, against PyTorch 2.15: every case of
//! `data/breadth/expected.json` is a TorchScript program whose result (or error message)
//! PyTorch recorded; `data/breadth/gen_expected.py` regenerates it (needs torch; CI does not).

use ts_core::{IValue, Source};

const HEADER: &str = "
def L(t: Tensor) -> List[float]:
    r: List[float] = t.flatten().double().tolist()
    return r
";

/// Compiles and runs `f()` of `src`: its list of floats, or the error message.
fn run(src: &str) -> Result<Vec<f64>, String> {
    let cu = ts_frontend::compile_source(&Source::new(format!("{HEADER}{src}"), None, 1))
        .map_err(|e| format!("compile: {e}"))?;
    let f = cu.find_function("f").ok_or("no function f")?;
    match ts_runtime::call_function(&f, vec![]).map_err(|e| e.to_string())? {
        IValue::List(l) => Ok(l
            .items
            .read()
            .iter()
            .map(|x| x.as_double().unwrap_or(f64::NAN))
            .collect()),
        other => Err(format!(
            "expected a list, got {}",
            other.to_display_string()
        )),
    }
}

#[test]
fn breadth_programs_match_pytorch() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/breadth/expected.json"
    ))
    .expect("expected.json");
    let cases: serde_json::Value = serde_json::from_str(&text).expect("valid json");
    let cases = cases.as_object().expect("an object of cases");
    assert!(cases.len() >= 15, "too few cases");
    let mut failures = Vec::new();
    for (name, case) in cases {
        let src = case["source"].as_str().expect("source");
        let got = run(src);
        match (case.get("error").and_then(|e| e.as_str()), got) {
            (Some(want), Err(msg)) => {
                if !msg.contains(want) {
                    failures.push(format!("{name}: error '{msg}' lacks '{want}'"));
                }
            }
            (Some(want), Ok(v)) => {
                failures.push(format!("{name}: expected error '{want}', got {v:?}"))
            }
            (None, Err(msg)) => failures.push(format!("{name}: {msg}")),
            (None, Ok(v)) => {
                let want: Vec<f64> = case["values"]
                    .as_array()
                    .expect("values")
                    .iter()
                    .map(|x| x.as_f64().unwrap_or(f64::NAN))
                    .collect();
                let close = v.len() == want.len()
                    && v.iter().zip(&want).all(|(g, w)| {
                        (g - w).abs() <= 1e-5 + 1e-5 * w.abs() || (g.is_nan() && w.is_nan())
                    });
                if !close {
                    failures.push(format!("{name}: got {v:?}, want {want:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
