//! IR parity: `tsrs graph` against the graphs PyTorch printed for the conformance programs and
//! models (../shared/corpus/ir), compared in the canonical form of ../shared/corpus/ir_canon.py
//! (source comments dropped, constants written as literals at their uses, values renamed by
//! first appearance). The counts are floors: they may only rise.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The canonical form of a printed graph, as ir_canon.py defines it.
fn canon(text: &str) -> Vec<String> {
    let strip_loc = |l: &str| -> String {
        // A trailing `# file:line:col` with a non-empty file.
        if let Some(p) = l.rfind(" # ") {
            let c = &l[p + 3..];
            let parts: Vec<&str> = c.rsplitn(3, ':').collect();
            if parts.len() == 3
                && !parts[2].is_empty()
                && !parts[2].contains(char::is_whitespace)
                && parts[0].chars().all(|x| x.is_ascii_digit())
                && parts[1].chars().all(|x| x.is_ascii_digit())
                && !parts[0].is_empty()
                && !parts[1].is_empty()
            {
                return l[..p].trim_end().to_string();
            }
        }
        l.trim_end().to_string()
    };
    let mut consts: HashMap<String, String> = HashMap::new();
    let mut kept = Vec::new();
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        let l = strip_loc(l);
        let t = l.trim_start();
        if let Some((lhs, rhs)) = t.split_once(" = prim::Constant") {
            if let Some((name, ty)) = lhs.split_once(" : ") {
                if name.starts_with('%') && !name.contains(',') {
                    let rest = rhs;
                    if rest == "()" {
                        consts.insert(name.to_string(), "None".into());
                        continue;
                    }
                    if let Some(v) = rest
                        .strip_prefix("[value=")
                        .and_then(|r| r.strip_suffix("]()"))
                    {
                        consts.insert(name.to_string(), format!("{}({v})", ty.trim()));
                        continue;
                    }
                }
            }
        }
        kept.push(l);
    }
    let mut names: HashMap<String, String> = HashMap::new();
    kept.iter()
        .map(|l| {
            let mut out = String::new();
            let b = l.as_bytes();
            let mut i = 0;
            while i < b.len() {
                if b[i] == b'%' {
                    let mut j = i + 1;
                    while j < b.len()
                        && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b'.')
                    {
                        j += 1;
                    }
                    if j > i + 1 {
                        let v = &l[i..j];
                        if let Some(c) = consts.get(v) {
                            out.push_str(c);
                        } else {
                            let n = names.len();
                            out.push_str(
                                names
                                    .entry(v.to_string())
                                    .or_insert_with(|| format!("%{n}")),
                            );
                        }
                        i = j;
                        continue;
                    }
                }
                let ch = l[i..].chars().next().unwrap_or(' ');
                out.push(ch);
                i += ch.len_utf8();
            }
            out
        })
        .collect()
}

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
        programs >= 301,
        "program IR parity fell to {programs}/{program_total}"
    );
}
