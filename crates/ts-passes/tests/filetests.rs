//! Graph-in/graph-out tests of the passes: each `filetests/*.ir` file holds an IR graph,
//! `# RUN: PassName` lines naming the registered passes to run on it in order (see
//! `ts_passes::pass_manager::registered_passes`), and FileCheck directives (`# CHECK:`,
//! `# CHECK-NEXT:`, `# CHECK-NOT:`, `# CHECK-DAG:`, `# CHECK-COUNT-N:`, ...) that the printed
//! result must satisfy. The verifier runs after every pass.

use std::path::PathBuf;

use ts_ir::{parse_ir, FileCheck};
use ts_passes::pass_manager::{pass_by_name, PassManager};

fn run_file(path: &PathBuf) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let passes: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("# RUN:"))
        .map(str::trim)
        .collect();
    if passes.is_empty() {
        return Err("no `# RUN:` line".into());
    }
    let ir: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut g = parse_ir(&ir).map_err(|e| format!("bad IR: {e}"))?;
    let checks = FileCheck::parse(&text).map_err(|e| e.to_string())?;
    if checks.checks().is_empty() {
        return Err("no CHECK directive".into());
    }
    let mut pm = PassManager::new().verify_each(true);
    for p in passes {
        let pass = pass_by_name(p).ok_or_else(|| format!("unknown pass {p}"))?;
        pm.run(p, &mut g, pass);
    }
    checks
        .run_graph(&g)
        .map_err(|e| format!("{e}\nafter the passes:\n{g}"))
}

#[test]
fn pass_filetests() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/filetests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the filetests directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "ir"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "expected a filetest per pass");
    let mut failures = Vec::new();
    for f in &files {
        if let Err(e) = run_file(f) {
            failures.push(format!("{}: {e}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_registered_pass_has_a_filetest() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/filetests");
    let mut covered = std::collections::HashSet::new();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        for l in text.lines() {
            if let Some(p) = l.trim().strip_prefix("# RUN:") {
                covered.insert(p.trim().to_string());
            }
        }
    }
    let missing: Vec<&str> = ts_passes::pass_manager::registered_passes()
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !covered.contains(*n))
        .collect();
    assert!(missing.is_empty(), "passes without a filetest: {missing:?}");
}
