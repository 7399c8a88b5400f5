//! Every schema PyTorch 2.15 registers (`corpus/schemas.txt`) parses and prints back identically.

use ts_core::FunctionSchema;

#[test]
fn all_corpus_schemas_round_trip() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus/schemas.txt"
    );
    let text =
        std::fs::read_to_string(path).expect("../shared/corpus/schemas.txt next to the repo");
    let mut failures = Vec::new();
    let mut count = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        count += 1;
        match FunctionSchema::parse(line) {
            Ok(s) => {
                let printed = s.to_string();
                if printed != line {
                    failures.push(format!("printed differently:\n  {line}\n  {printed}"));
                }
            }
            Err(e) => failures.push(format!("failed to parse: {line}\n{e}")),
        }
    }
    assert_eq!(count, 4415);
    assert!(
        failures.is_empty(),
        "{} of {count} failed:\n{}",
        failures.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
