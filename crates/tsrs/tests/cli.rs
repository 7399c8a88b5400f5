//! The `tsrs` command line end to end: success paths and clear, non-panicking failures.

use std::path::PathBuf;
use std::process::Command;

mod common;
use common::Scratch;

fn tsrs(args: &[&str]) -> (i32, String, String) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(env!("CARGO_BIN_EXE_tsrs"))
        .args(args)
        .current_dir(root)
        .output()
        .expect("tsrs runs");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "tsrs panicked: {stderr}");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        stderr,
    )
}

#[test]
fn runs_the_example_program() {
    let (rc, out, err) = tsrs(&["run", "examples/hello.py", "--entry", "main"]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.starts_with("([0, 1, 1, 2, 3, 5, 8, 13, 21, 34], tensor("),
        "{out}"
    );
}

#[test]
fn runs_with_saved_inputs_and_writes_the_output() {
    let dir = Scratch::new("cli");
    let inputs = dir.join("in.pt");
    let output = dir.join("out.pt");
    ts_serialize::save_torch_save(
        &ts_core::IValue::tuple(vec![ts_core::IValue::Int(7)]),
        &inputs,
    )
    .unwrap();
    let (rc, _, err) = tsrs(&[
        "run",
        "examples/hello.py",
        "--entry",
        "fib",
        "--inputs",
        inputs.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
    ]);
    assert_eq!(rc, 0, "{err}");
    let v = ts_serialize::load_torch_save(&output).unwrap();
    assert_eq!(v.as_int(), Some(13));
    // A wrong argument type names the parameter.
    ts_serialize::save_torch_save(
        &ts_core::IValue::tuple(vec![ts_core::IValue::str("x")]),
        &inputs,
    )
    .unwrap();
    let (rc, _, err) = tsrs(&[
        "run",
        "examples/hello.py",
        "--entry",
        "fib",
        "--inputs",
        inputs.to_str().unwrap(),
    ]);
    assert_ne!(rc, 0);
    assert!(err.contains("argument 'n'"), "{err}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let cases: &[(&[&str], &str)] = &[
        (&["run", "no/such/file.py", "--entry", "f"], "cannot read"),
        (
            &["run", "examples/hello.py", "--entry", "nope"],
            "no function named 'nope'",
        ),
        (&["run", "examples/hello.py"], "--entry"),
        (&["frobnicate"], "unrecognized subcommand"),
        (&["info", "examples/hello.py"], "cannot load"),
        (
            &["run", "Cargo.toml.pt", "--entry", "forward"],
            "cannot load",
        ),
        (
            &[
                "run",
                "examples/hello.py",
                "--entry",
                "main",
                "--inputs",
                "README.md",
            ],
            "cannot load inputs",
        ),
        (
            &["save", "examples/hello.py", "/tmp/tsrs-never.pt"],
            "--entry",
        ),
    ];
    for (args, needle) in cases {
        let (rc, _, err) = tsrs(args);
        assert_ne!(rc, 0, "{args:?} should fail");
        assert!(
            err.contains(needle),
            "{args:?}: expected '{needle}' in: {err}"
        );
    }
}

#[test]
fn graph_and_ops_commands() {
    let (rc, out, err) = tsrs(&["graph", "examples/hello.py", "--entry", "fib"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.starts_with("graph(%n : int):"), "{out}");
    assert!(out.contains("prim::Loop"));
    let (rc, out, _) = tsrs(&["ops", "--filter", "aten::add.Tensor"]);
    assert_eq!(rc, 0);
    assert!(
        out.contains("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    );
}

#[test]
fn graph_code_prints_the_interpreter_instructions() {
    let (rc, out, err) = tsrs(&["graph", "examples/hello.py", "--entry", "fib", "--code"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.starts_with("fib ("), "{out}");
    assert!(out.contains(" registers, 1 inputs)"), "{out}");
    // The loop is linearized into guard/next jumps; operators run by their overload name.
    for instr in ["LOOPGUARD", "LOOPNEXT", "OP aten::add.int", "RET"] {
        assert!(out.contains(instr), "missing {instr}: {out}");
    }
    assert!(!out.contains("prim::Loop"), "{out}");
    let (rc, _, err) = tsrs(&["graph", "examples/hello.py", "--entry", "nope", "--code"]);
    assert_eq!(rc, 1);
    assert!(err.contains("no function named 'nope'"), "{err}");
}

#[test]
fn saves_a_program_function_as_a_module() {
    let dir = Scratch::new("save");
    let out = dir.join("saved.pt");
    let (rc, _, err) = tsrs(&[
        "save",
        "examples/hello.py",
        out.to_str().unwrap(),
        "--entry",
        "main",
    ]);
    assert_eq!(rc, 0, "{err}");
    let (rc, stdout, err) = tsrs(&["run", out.to_str().unwrap(), "--entry", "forward"]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        stdout.starts_with("([0, 1, 1, 2, 3, 5, 8, 13, 21, 34], tensor("),
        "{stdout}"
    );
    let _ = std::fs::remove_file(&out);
}

#[test]
fn bench_prints_one_json_object() {
    let (rc, out, err) = tsrs(&[
        "bench",
        "examples/hello.py",
        "--entry",
        "main",
        "--iters",
        "3",
        "--warmup",
        "1",
        "--json",
    ]);
    assert_eq!(rc, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    for k in ["median_ns", "min_ns", "max_ns", "iters", "warmup"] {
        assert!(v.get(k).is_some(), "missing {k} in {out}");
    }
    assert_eq!(v["iters"], 3);
    let (rc, _, err) = tsrs(&[
        "bench",
        "examples/hello.py",
        "--entry",
        "main",
        "--iters",
        "0",
    ]);
    assert_ne!(rc, 0);
    assert!(err.contains("--iters"), "{err}");
}

#[test]
fn numpy_and_random_inputs_and_npy_output() {
    let dir = Scratch::new("cli-npy");
    let program = dir.join("prog.py");
    std::fs::write(
        &program,
        "def f(x: Tensor, y: Tensor) -> Tensor:\n    return x * 2.0 + y.sum()\n",
    )
    .unwrap();
    let x = torchscript::Tensor::from_data(&[1.0f32, -2.0, 3.0], &[3]).unwrap();
    let y = torchscript::Tensor::from_data(&[0.5f32, 0.25], &[2]).unwrap();
    let npz = dir.join("in.npz");
    torchscript::npy::save_npz(&npz, &[("x".into(), x.clone()), ("y".into(), y)]).unwrap();
    let out = dir.join("out.npy");
    let (p, n, o) = (
        program.to_str().unwrap(),
        npz.to_str().unwrap(),
        out.to_str().unwrap(),
    );
    let (rc, _, err) = tsrs(&["run", p, "--entry", "f", "--inputs", n, "--output", o]);
    assert_eq!(rc, 0, "{err}");
    let r = torchscript::npy::load_npy(&out).unwrap();
    assert_eq!(r.to_vec::<f32>(), vec![2.75, -3.25, 6.75]);
    // One .npy input plus a random one of a given shape.
    let npy = dir.join("x.npy");
    torchscript::npy::save_npy(&npy, &x).unwrap();
    let npy = npy.to_str().unwrap();
    let args = ["run", p, "--entry", "f", "--inputs", npy, "--random", "2x3"];
    let (rc, _, err) = tsrs(&[&args[..], &["--output", o]].concat());
    assert_eq!(rc, 0, "{err}");
    let first = torchscript::npy::load_npy(&out).unwrap().to_vec::<f32>();
    let (rc, _, _) = tsrs(&[&args[..], &["--output", o]].concat());
    assert_eq!(rc, 0);
    assert_eq!(
        torchscript::npy::load_npy(&out).unwrap().to_vec::<f32>(),
        first
    );
    // Bad shapes, unreadable files and non-tensor results in .npy are clear errors.
    let (rc, _, err) = tsrs(&["run", p, "--entry", "f", "--random", "2xq"]);
    assert_ne!(rc, 0);
    assert!(err.contains("bad shape"), "{err}");
    std::fs::write(dir.join("bad.npy"), b"not numpy").unwrap();
    let bad = dir.join("bad.npy");
    let (rc, _, err) = tsrs(&["run", p, "--entry", "f", "--inputs", bad.to_str().unwrap()]);
    assert_ne!(rc, 0);
    assert!(err.contains("cannot load inputs"), "{err}");
    let (rc, _, err) = tsrs(&["run", "examples/hello.py", "--entry", "main", "--output", o]);
    assert_ne!(rc, 0);
    assert!(err.contains("tensors only"), "{err}");
}

/// Writes `values` as a saved inputs tuple in a fresh temporary folder.
fn saved_inputs(tag: &str, values: Vec<ts_core::IValue>) -> (Scratch, PathBuf) {
    let dir = Scratch::new(&format!("cli-{tag}"));
    let inputs = dir.join("in.pt");
    ts_serialize::save_torch_save(&ts_core::IValue::tuple(values), &inputs).unwrap();
    (dir, inputs)
}

#[test]
fn operators_without_kernels_fail_only_when_run() {
    // `cudnn_is_acceptable` has a PyTorch schema but no kernel here: the program and the
    // archive (saved by torch) compile; the untaken branch runs; the taken one names it.
    let (dir, _) = saved_inputs("untaken", vec![]);
    let program = dir.join("untaken.py");
    std::fs::write(
        &program,
        "def f(x: Tensor, take: bool) -> bool:\n    if take:\n        return torch.cudnn_is_acceptable(x)\n    return False\n",
    )
    .unwrap();
    let x =
        ts_core::IValue::Tensor(ts_tensor::Tensor::zeros(&[2], ts_tensor::DType::Float32).unwrap());
    for (file, entry) in [
        (program.to_str().unwrap().to_string(), "f"),
        (
            "crates/tsrs/tests/data/untaken_unimplemented.pt".to_string(),
            "forward",
        ),
    ] {
        for take in [false, true] {
            let (_dir, inputs) = saved_inputs(
                &format!("untaken-{take}"),
                vec![x.clone(), ts_core::IValue::Bool(take)],
            );
            let (rc, out, err) = tsrs(&[
                "run",
                &file,
                "--entry",
                entry,
                "--inputs",
                inputs.to_str().unwrap(),
            ]);
            if take {
                assert_ne!(rc, 0, "{file}: {out}");
                assert!(
                    err.contains(
                        "operator aten::cudnn_is_acceptable has no implementation in tsrs"
                    ),
                    "{file}: {err}"
                );
            } else {
                assert_eq!(rc, 0, "{file}: {err}");
                assert_eq!(out.trim(), "False", "{file}");
            }
        }
    }
}

#[test]
fn torchvision_operators_resolve_from_source() {
    let (dir, inputs) = saved_inputs(
        "nms",
        vec![
            ts_core::IValue::Tensor(
                ts_tensor::Tensor::from_vec(
                    vec![0f32, 0., 1., 1., 0., 0., 1., 1., 5., 5., 6., 6.],
                    &[3, 4],
                )
                .unwrap(),
            ),
            ts_core::IValue::Tensor(
                ts_tensor::Tensor::from_vec(vec![0.1f32, 0.9, 0.5], &[3]).unwrap(),
            ),
        ],
    );
    let program = dir.join("nms.py");
    std::fs::write(
        &program,
        "def f(b: Tensor, s: Tensor) -> List[int]:\n    return torch.ops.torchvision.nms(b, s, 0.5).tolist()\n",
    )
    .unwrap();
    let (rc, out, err) = tsrs(&[
        "run",
        program.to_str().unwrap(),
        "--entry",
        "f",
        "--inputs",
        inputs.to_str().unwrap(),
    ]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(out.trim(), "[1, 2]");
}

#[test]
fn ops_missing_lists_reasons() {
    let (rc, out, err) = tsrs(&["ops", "--missing"]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.contains("MISSING [cuda-only] aten::_cudnn_rnn"),
        "{out}"
    );
    assert!(out.contains("MISSING [distributed] c10d::"), "{out}");
    let summary = out.lines().last().unwrap();
    assert!(summary.contains("not yet implemented"), "{summary}");
    // Every listed schema has a category, and the per-category counts add up.
    let listed = out.lines().filter(|l| l.starts_with("MISSING [")).count();
    let counted: usize = out
        .lines()
        .filter(|l| {
            !l.starts_with("MISSING")
                && l.trim_start()
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_digit())
        })
        .filter(|l| !l.contains("operators implemented"))
        .map(|l| {
            l.split_whitespace()
                .next()
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!(listed, counted);
}

#[test]
fn peak_prints_the_measured_fma_rate() {
    let (rc, out, err) = tsrs(&["peak", "--json"]);
    #[cfg(target_arch = "x86_64")]
    let has_fma =
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma");
    #[cfg(not(target_arch = "x86_64"))]
    let has_fma = false;
    if !has_fma {
        assert_ne!(rc, 0);
        assert!(err.contains("FMA"), "{err}");
        return;
    }
    assert_eq!(rc, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    assert!(v["gflops"].as_f64().is_some_and(|g| g > 0.0), "{out}");
    assert!(v["threads"].as_u64().is_some_and(|t| t >= 1), "{out}");
    assert!(
        ["avx512", "avx2"].contains(&v["isa"].as_str().unwrap_or("")),
        "{out}"
    );
}
