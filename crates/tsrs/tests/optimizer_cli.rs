//! The optimizer through the command line: `tsrs graph --optimized` and `--format`,
//! `PYTORCH_JIT_LOG_LEVEL`, and `tsrs freeze` (a frozen module computes what the original does).

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::Scratch;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tsrs_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tsrs"));
    c.args(args)
        .current_dir(root())
        .env_remove("PYTORCH_JIT_LOG_LEVEL");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("tsrs runs");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "tsrs panicked: {stderr}");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        stderr,
    )
}

fn tsrs(args: &[&str]) -> (i32, String, String) {
    tsrs_env(args, &[])
}

fn temp_dir(tag: &str) -> Scratch {
    Scratch::new(&format!("opt-{tag}"))
}

fn save_inputs(dir: &Path, v: ts_core::IValue) -> PathBuf {
    let p = dir.join("in.pt");
    ts_serialize::save_torch_save(&v, &p).unwrap();
    p
}

#[test]
fn optimized_graph_is_printed_for_the_inputs() {
    let dir = temp_dir("graph");
    let inputs = save_inputs(&dir, ts_core::IValue::tuple(vec![ts_core::IValue::Int(7)]));
    let (rc, out, err) = tsrs(&[
        "graph",
        "examples/hello.py",
        "--entry",
        "main",
        "--inputs",
        inputs.to_str().unwrap(),
        "--optimized",
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.starts_with("graph("), "{out}");
    // main calls fib and normalize: the executor inlined them.
    assert!(!out.contains("prim::CallFunction"), "{out}");
    ts_ir::parse_ir(&out).unwrap_or_else(|e| panic!("{e}\n{out}"));
}

#[test]
fn graph_formats() {
    let (rc, dot, err) = tsrs(&[
        "graph",
        "examples/hello.py",
        "--entry",
        "fib",
        "--format",
        "dot",
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(dot.starts_with("digraph") && dot.contains("->"), "{dot}");
    let (rc, svg, err) = tsrs(&[
        "graph",
        "examples/hello.py",
        "--entry",
        "fib",
        "--format",
        "svg",
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(svg.contains("<svg") && svg.contains("prim::Loop"), "{svg}");
    let (rc, html, err) = tsrs(&[
        "graph",
        "examples/hello.py",
        "--entry",
        "main",
        "--format",
        "html",
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(html.contains("<html") && html.contains("Inline"), "{html}");
    assert!(html.contains("ConstantPropagation") && html.contains("<svg"));
    let (rc, _, err) = tsrs(&[
        "graph",
        "examples/hello.py",
        "--entry",
        "fib",
        "--format",
        "png",
    ]);
    assert_ne!(rc, 0);
    assert!(err.contains("png"), "{err}");
}

#[test]
fn jit_log_level_prints_the_named_pass() {
    let dir = temp_dir("log");
    let inputs = save_inputs(&dir, ts_core::IValue::tuple(vec![ts_core::IValue::Int(7)]));
    let args = [
        "run",
        "examples/hello.py",
        "--entry",
        "main",
        "--inputs",
        inputs.to_str().unwrap(),
    ];
    let (rc, quiet_out, err) = tsrs(&args);
    assert_eq!(rc, 0, "{err}");
    assert!(!err.contains("[DUMP"), "{err}");
    let (rc, out, err) = tsrs_env(
        &args,
        &[("PYTORCH_JIT_LOG_LEVEL", ">dead_code_elimination")],
    );
    assert_eq!(rc, 0, "{err}");
    assert_eq!(out, quiet_out, "logging goes to stderr only");
    assert!(err.contains("[DUMP dead_code_elimination"), "{err}");
    assert!(err.contains("graph("), "{err}");
    assert!(!err.contains("[DUMP constant_propagation"), "{err}");
    let (rc, _, err) = tsrs_env(
        &args,
        &[("PYTORCH_JIT_LOG_LEVEL", "constant_propagation.rs")],
    );
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("[DUMP constant_propagation"), "{err}");
    assert!(!err.contains("[DEBUG constant_propagation"), "{err}");
}

fn tensors_close(a: &ts_core::IValue, b: &ts_core::IValue) {
    let (a, b) = (a.as_tensor().unwrap(), b.as_tensor().unwrap());
    let (a, b) = (a.to_vec::<f32>(), b.to_vec::<f32>());
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() <= 1e-4 + 1e-4 * y.abs(), "{x} vs {y}");
    }
}

#[test]
fn frozen_module_computes_what_the_original_does() {
    let case = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/cases/modules_scripted__resnet_basic_block_downsample");
    if !case.is_dir() {
        eprintln!("no ../shared conformance cases: skipped");
        return;
    }
    let dir = temp_dir("freeze");
    let frozen = dir.join("frozen.pt");
    let model = case.join("model.pt");
    let (rc, _, err) = tsrs(&["freeze", model.to_str().unwrap(), frozen.to_str().unwrap()]);
    assert_eq!(rc, 0, "{err}");
    let (rc, code, err) = tsrs(&["code", frozen.to_str().unwrap()]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        !code.contains("batch_norm"),
        "batch norms fold into the convolutions:\n{code}"
    );
    let run = |m: &Path, out: &Path| {
        let (rc, _, err) = tsrs(&[
            "run",
            m.to_str().unwrap(),
            "--entry",
            "forward",
            "--inputs",
            case.join("inputs.pt").to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
        ]);
        assert_eq!(rc, 0, "{err}");
        ts_serialize::load_torch_save(out).unwrap()
    };
    let a = run(&model, &dir.join("a.pt"));
    let b = run(&frozen, &dir.join("b.pt"));
    tensors_close(&a, &b);
    // Freezing something that is not a module is a clear error.
    let (rc, _, err) = tsrs(&["freeze", "examples/hello.py", frozen.to_str().unwrap()]);
    assert_ne!(rc, 0);
    assert!(err.contains("not a saved module"), "{err}");
}

#[test]
fn requires_grad_inputs_show_differentiable_graphs() {
    let dir = temp_dir("autodiff");
    let prog = dir.join("layer.py");
    std::fs::write(
        &prog,
        "def f(x, w):\n    y = torch.tanh(torch.mm(x, w) + 1.0)\n    s = torch.cumsum(y, 1)\n    return torch.sigmoid(s * y).mean()\n",
    )
    .unwrap();
    let t = |r: i64, c: i64| {
        ts_core::IValue::Tensor(
            ts_tensor::Tensor::from_vec(vec![0.5f32; (r * c) as usize], &[r, c]).unwrap(),
        )
    };
    let inputs = save_inputs(&dir, ts_core::IValue::tuple(vec![t(2, 3), t(3, 4)]));
    let args = |extra: &[&'static str]| {
        let mut v = vec![
            "graph".to_string(),
            prog.to_str().unwrap().to_string(),
            "--entry".into(),
            "f".into(),
            "--inputs".into(),
            inputs.to_str().unwrap().to_string(),
            "--optimized".into(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let run = |a: Vec<String>| tsrs(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let (rc, out, err) = run(args(&["--requires-grad"]));
    assert_eq!(rc, 0, "{err}");
    for want in [
        "= prim::DifferentiableGraph_0(%x",
        "aten::cumsum",
        "= prim::DifferentiableGraph_1(",
        "with prim::DifferentiableGraph_0 = graph(",
        "aten::tanh",
        "with prim::DifferentiableGraph_1 = graph(",
        "aten::sigmoid",
    ] {
        assert!(out.contains(want), "{want} missing from\n{out}");
    }
    // The same inputs without gradients: nothing of it.
    let (rc, out, err) = run(args(&[]));
    assert_eq!(rc, 0, "{err}");
    assert!(!out.contains("DifferentiableGraph"), "{out}");
}

#[test]
fn module_parameters_that_require_grad_show_differentiable_graphs() {
    // A scripted MLP (torch.jit.save; its parameters require grad): `--requires-grad` keeps
    // grad mode on, so the plan takes the autodiff path (parameters alone trigger it: see the
    // torchscript crate's module_autodiff test); without it the graph is the inference one,
    // as PyTorch's reference graphs (taken under no_grad) show.
    let model = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../torchscript/tests/data/mlp.pt");
    let dir = temp_dir("module-autodiff");
    let x = ts_tensor::Tensor::from_vec(vec![0.25f32; 16], &[2, 8]).unwrap();
    let inputs = save_inputs(
        &dir,
        ts_core::IValue::tuple(vec![ts_core::IValue::Tensor(x)]),
    );
    let args = |extra: &[&str]| {
        let mut v = vec![
            "graph",
            model.to_str().unwrap(),
            "--entry",
            "forward",
            "--inputs",
            inputs.to_str().unwrap(),
            "--optimized",
        ];
        v.extend_from_slice(extra);
        v.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let run = |a: Vec<String>| tsrs(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let (rc, out, err) = run(args(&["--requires-grad"]));
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("prim::DifferentiableGraph"), "{out}");
    let (rc, out, err) = run(args(&[]));
    assert_eq!(rc, 0, "{err}");
    assert!(!out.contains("DifferentiableGraph"), "{out}");
}
