//! Optimized IR parity: `tsrs graph --optimized` (the graph the executor runs for a case's
//! inputs) against the graphs PyTorch's executor ran for the conformance programs and models
//! (../shared/corpus/ir_optimized, `torch.jit.last_executed_optimized_graph()`), compared in
//! the canonical form of ../shared/corpus/ir_canon.py. The count is a floor: it may only rise.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Graphs known to match PyTorch's; raise it when more do.
const PARITY_FLOOR: usize = 114;

fn shared() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    d.join("corpus/ir_optimized").is_dir().then_some(d)
}

fn optimized_graph_of(program: &Path, entry: &str, inputs: &Path) -> Option<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_tsrs"))
        .args([
            "graph",
            program.to_str()?,
            "--entry",
            entry,
            "--inputs",
            inputs.to_str()?,
            "--optimized",
        ])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).to_string())
}

#[test]
fn optimized_ir_parity_with_pytorch() {
    let Some(shared) = shared() else {
        eprintln!("no ../shared/corpus/ir_optimized: skipped");
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(shared.join("corpus/ir_optimized"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "ir"))
        .collect();
    files.sort();
    let (mut equal, mut total) = (0usize, 0usize);
    let mut differing = Vec::new();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let stem = name.trim_end_matches(".ir");
        let Some((case, entry)) = stem.split_once('.') else {
            continue;
        };
        let dir = shared.join("conformance/cases").join(case);
        let model = dir.join("model.pt");
        let program = if model.exists() {
            model
        } else {
            dir.join("program.py")
        };
        let want = common::canon::canon(&std::fs::read_to_string(&f).unwrap());
        let got = optimized_graph_of(&program, entry, &dir.join("inputs.pt"));
        total += 1;
        if got.is_some_and(|g| common::canon::canon(&g) == want) {
            equal += 1;
        } else {
            differing.push(stem.to_string());
        }
    }
    eprintln!("optimized IR parity: {equal}/{total}; differing: {differing:?}");
    assert!(total > 0);
    // 114/123 when the floor was set (the remaining differences: ARCHITECTURE.md, "Optimized IR
    // parity").
    assert!(
        equal >= PARITY_FLOOR,
        "optimized IR parity fell to {equal}/{total}"
    );
}
