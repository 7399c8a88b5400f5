//! A small inference server: one loaded model shared by a pool of worker threads, fed by
//! requests on standard input (one JSON line each) and answering on standard output in request
//! order.
//!
//! A request is `{"id": 1, "shape": [1, 2], "data": [0.5, -1.0]}` (row-major float32 data) or
//! `{"id": 2, "shape": [1, 3, 224, 224], "seed": 7}` (random normal input). The answer is
//! `{"id": 1, "shape": [...], "output": [...]}` or `{"id": 1, "error": "..."}`.
//!
//! ```sh
//! printf '{"id":1,"shape":[1,2],"data":[0.5,-1.0]}\n' |
//!   cargo run -p torchscript --example serve -- crates/torchscript/tests/data/add_relu.pt 4
//! ```

use std::io::{BufRead, Write};
use std::sync::{mpsc, Arc, Mutex};

use serde_json::{json, Value};
use torchscript::{Module, Tensor};

fn answer(model: &Module, request: &str) -> Value {
    let req: Value = match serde_json::from_str(request) {
        Ok(v) => v,
        Err(e) => return json!({"error": format!("bad request: {e}")}),
    };
    let id = req.get("id").cloned().unwrap_or(Value::Null);
    match run(model, &req) {
        Ok((shape, output)) => json!({"id": id, "shape": shape, "output": output}),
        Err(e) => json!({"id": id, "error": e.to_string()}),
    }
}

fn run(model: &Module, req: &Value) -> Result<(Vec<i64>, Vec<f32>), Box<dyn std::error::Error>> {
    let shape: Vec<i64> = req
        .get("shape")
        .and_then(Value::as_array)
        .ok_or("the request has no \"shape\"")?
        .iter()
        .map(|v| v.as_i64().ok_or("shape entries must be integers"))
        .collect::<Result<_, _>>()?;
    let x = match req.get("data").and_then(Value::as_array) {
        Some(data) => {
            let data: Vec<f32> = data
                .iter()
                .map(|v| {
                    v.as_f64()
                        .map(|f| f as f32)
                        .ok_or("data entries must be numbers")
                })
                .collect::<Result<_, _>>()?;
            Tensor::from_vec(data, &shape)?
        }
        None => Tensor::randn(&shape, req.get("seed").and_then(Value::as_u64).unwrap_or(0))?,
    };
    let y: Tensor = model.forward((x,))?.try_into()?;
    Ok((y.shape(), y.to_vec::<f32>()))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: serve MODEL.pt [WORKERS]")?;
    let workers: usize = args
        .next()
        .map(|w| w.parse())
        .transpose()?
        .unwrap_or(4)
        .max(1);
    let model = Arc::new(Module::load(&path)?);

    // Requests go to the workers through one queue; answers come back tagged with their
    // sequence number so they are printed in request order.
    let (req_tx, req_rx) = mpsc::channel::<(usize, String)>();
    let req_rx = Arc::new(Mutex::new(req_rx));
    let (ans_tx, ans_rx) = mpsc::channel::<(usize, Value)>();
    let pool: Vec<_> = (0..workers)
        .map(|_| {
            let (model, req_rx, ans_tx) = (model.clone(), req_rx.clone(), ans_tx.clone());
            std::thread::spawn(move || loop {
                let next = req_rx.lock().map(|rx| rx.recv());
                let Ok(Ok((seq, line))) = next else { break };
                if ans_tx.send((seq, answer(&model, &line))).is_err() {
                    break;
                }
            })
        })
        .collect();
    drop(ans_tx);

    let mut n = 0;
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        req_tx.send((n, line))?;
        n += 1;
    }
    drop(req_tx);

    let mut pending = std::collections::BTreeMap::new();
    let mut next = 0;
    let mut out = std::io::stdout().lock();
    for (seq, v) in ans_rx {
        pending.insert(seq, v);
        while let Some(v) = pending.remove(&next) {
            writeln!(out, "{v}")?;
            next += 1;
        }
    }
    for w in pool {
        w.join().map_err(|_| "a worker panicked")?;
    }
    eprintln!("served {n} requests with {workers} workers");
    Ok(())
}
