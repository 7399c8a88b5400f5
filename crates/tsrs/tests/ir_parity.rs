//! IR parity: `tsrs graph` against the graphs PyTorch printed for the conformance programs and
//! models (../shared/corpus/ir), compared in the canonical form of ../shared/corpus/ir_canon.py
//! (source comments dropped, constants written as literals at their uses, values renamed by
//! first appearance). The counts are floors: they may only rise.

mod common;

use common::canon::canon;
use std::path::{Path, PathBuf};
use std::process::Command;

fn shared() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    d.join("corpus/ir").is_dir().then_some(d)
}

fn graph_of(program: &Path, entry: &str) -> Option<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_tsrs"))
        .args(["graph", program.to_str()?, "--entry", entry])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).to_string())
}

#[test]
fn canonical_form_matches_ir_canon() {
    let a = "graph(%x.1 : int):\n  %2 : int = prim::Constant[value=1]() # a.py:1:2\n  %y : int = aten::add(%x.1, %2) # :0:0\n  return (%y)\n";
    assert_eq!(
        canon(a),
        vec![
            "graph(%0 : int):".to_string(),
            "  %1 : int = aten::add(%0, int(1)) # :0:0".to_string(),
            "  return (%1)".to_string()
        ]
    );
}

#[test]
fn ir_parity_with_pytorch() {
    let Some(shared) = shared() else {
        eprintln!("no ../shared/corpus: skipped");
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(shared.join("corpus/ir"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    let (mut models, mut model_total, mut programs, mut program_total) = (0, 0, 0, 0);
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".ir") else {
            continue;
        };
        let Some((case, rest)) = stem.split_once('.') else {
            continue;
        };
        let dir = shared.join("conformance/cases").join(case);
        let want = canon(&std::fs::read_to_string(&f).unwrap());
        let model = dir.join("model.pt");
        let (is_model, got) = if model.exists() {
            let entry = rest.strip_prefix("root.").unwrap_or(rest);
            (true, graph_of(&model, entry))
        } else {
            (false, graph_of(&dir.join("program.py"), rest))
        };
        let ok = got.is_some_and(|g| canon(&g) == want);
        if !ok && std::env::var_os("IR_PARITY_VERBOSE").is_some() {
            eprintln!("IR differs: {name}");
        }
        if is_model {
            model_total += 1;
            models += ok as usize;
        } else {
            program_total += 1;
            programs += ok as usize;
        }
    }
    eprintln!("IR parity: models {models}/{model_total}, programs {programs}/{program_total}");
    assert!(
        models >= 119,
        "model IR parity fell to {models}/{model_total}"
    );
    assert!(
        programs >= 307,
        "program IR parity fell to {programs}/{program_total}"
    );
}
