//! Every graph PyTorch printed for the conformance programs and models (`corpus/ir`,
//! `corpus/ir_optimized`) parses and prints back identically, ignoring source comments.

use ts_ir::parse_ir;

fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|l| match l.find(" # ") {
            // Only trailing source-location comments; string constants never contain ` # `
            // followed by a `file:line:col` tail.
            Some(i) if l[i + 3..].rsplit(':').count() >= 3 => l[..i].trim_end(),
            _ => l.trim_end(),
        })
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn check_dir(dir: &str) -> (usize, Vec<String>) {
    let path = format!(
        "{}/../../../shared/corpus/{dir}",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut entries: Vec<_> = std::fs::read_dir(&path)
        .expect("corpus dir")
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.path());
    let mut failures = Vec::new();
    let mut n = 0;
    for e in entries {
        let text = std::fs::read_to_string(e.path()).expect("read");
        n += 1;
        let want = strip_comments(&text);
        match parse_ir(&text) {
            Ok(g) => {
                if let Err(err) = ts_ir::verify(&g) {
                    failures.push(format!("{}: verify: {err}", e.path().display()));
                    continue;
                }
                let got = strip_comments(&g.to_string());
                if got != want {
                    let first = want
                        .lines()
                        .zip(got.lines())
                        .find(|(a, b)| a != b)
                        .map(|(a, b)| format!("\n  want: {a}\n  got:  {b}"))
                        .unwrap_or_default();
                    failures.push(format!("{}: differs{first}", e.path().display()));
                }
            }
            Err(err) => failures.push(format!("{}: {err}", e.path().display())),
        }
    }
    (n, failures)
}

#[test]
fn ir_corpus_round_trips() {
    let (n, failures) = check_dir("ir");
    assert!(n >= 400);
    assert!(
        failures.is_empty(),
        "{} of {n} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn optimized_ir_corpus_round_trips() {
    let (n, failures) = check_dir("ir_optimized");
    assert!(n >= 100);
    assert!(
        failures.is_empty(),
        "{} of {n} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
