//! Each conformance model loaded, saved with the Python printer and pickler, and loaded again
//! gives the same outputs on its inputs (compared exactly, as both runs use the same kernels).

use std::path::PathBuf;
use std::sync::Arc;

use ts_core::{IValue, Object};

fn cases_dir() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/cases");
    d.is_dir().then_some(d)
}

fn run_forward(m: &Arc<Object>, inputs: &[IValue]) -> Result<IValue, String> {
    let method = m.class.find_method("forward").ok_or("no forward")?;
    let f = ts_ir::as_function(&method).ok_or("not a function")?;
    let schema = f.try_schema().ok_or("no schema")?;
    let args = ts_runtime::bind_arguments(&schema, inputs.to_vec(), true).map_err(|e| e.message)?;
    ts_runtime::call_method(m, "forward", args).map_err(|e| e.to_string())
}

fn same(a: &IValue, b: &IValue) -> bool {
    match (a, b) {
        (IValue::Tensor(x), IValue::Tensor(y)) => {
            let values = |t: &ts_tensor::Tensor| {
                t.contiguous()
                    .and_then(|c| c.to_dtype(ts_tensor::DType::Float64, false))
                    .map(|c| c.to_vec::<f64>())
            };
            match (values(x), values(y)) {
                (Ok(a), Ok(b)) => {
                    x.sizes() == y.sizes()
                        && x.dtype() == y.dtype()
                        && a.iter()
                            .zip(&b)
                            .all(|(p, q)| p == q || (p.is_nan() && q.is_nan()))
                }
                _ => false,
            }
        }
        (IValue::Tuple(x), IValue::Tuple(y)) => {
            x.elements.len() == y.elements.len()
                && x.elements.iter().zip(&y.elements).all(|(a, b)| same(a, b))
        }
        (IValue::List(x), IValue::List(y)) => {
            let (x, y) = (x.items.read(), y.items.read());
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| same(a, b))
        }
        _ => a.py_eq(b),
    }
}

#[test]
fn conformance_models_round_trip() {
    let Some(dir) = cases_dir() else {
        eprintln!("no ../shared/conformance: skipped");
        return;
    };
    let mut saved = 0;
    let mut compared = 0;
    let mut failures = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let model = e.path().join("model.pt");
        if !model.exists() {
            continue;
        }
        let name = e.file_name().to_string_lossy().to_string();
        let first = ts_serialize::load_script_module(&model).expect("conformance models load");
        let bytes = match ts_serialize::save_script_module_bytes(&first.module, "model") {
            Ok(b) => b,
            Err(err) => {
                failures.push(format!("{name}: save: {err}"));
                continue;
            }
        };
        let second = match ts_serialize::load_script_module_bytes(bytes) {
            Ok(m) => m,
            Err(err) => {
                failures.push(format!("{name}: reload: {err}"));
                continue;
            }
        };
        saved += 1;
        let inputs = match ts_serialize::load_torch_save(&e.path().join("inputs.pt")) {
            Ok(IValue::Tuple(t)) => t.elements.clone(),
            _ => continue,
        };
        // Models whose operators are not implemented yet cannot be compared.
        let (Ok(a), Ok(b)) = (
            run_forward(&first.module, &inputs),
            run_forward(&second.module, &inputs),
        ) else {
            continue;
        };
        compared += 1;
        if !same(&a, &b) {
            failures.push(format!("{name}: outputs differ after the round trip"));
        }
    }
    eprintln!("round trip: {saved} saved and reloaded, {compared} compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(saved >= 31, "only {saved} models round-tripped");
    assert!(compared >= 15, "only {compared} models could be compared");
}
