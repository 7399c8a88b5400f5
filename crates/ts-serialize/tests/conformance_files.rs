//! The conformance suite's torch.save and torch.jit.save files load, and their values match
//! what the suite's own Python reader (`torchsave.py`) sees.

mod support;

use std::collections::HashMap;

use support::{case_files, cases_dir, digest, fixture};
use ts_serialize::load_torch_save;

/// Every `inputs.pt` and `expected.pt` of the 272 cases loads, and its digest equals the one
/// `tests/fixtures/digest_torch_save.py` computed from `torchsave.py`'s reading of the same file
/// (`conformance_digests.txt`, generated with
/// `python3 digest_torch_save.py /work/shared/conformance/cases`).
#[test]
fn every_inputs_and_expected_file_matches_the_python_reader() {
    if cases_dir().is_none() {
        eprintln!("conformance cases not found; skipped");
        return;
    }
    let digests = std::fs::read_to_string(fixture("conformance_digests.txt")).unwrap();
    let expected: HashMap<&str, &str> =
        digests.lines().filter_map(|l| l.split_once('\t')).collect();
    let mut n = 0;
    let mut failures = Vec::new();
    for name in ["inputs.pt", "expected.pt"] {
        for path in case_files(name) {
            n += 1;
            let case = path
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy();
            let key = format!("{case}/{name}");
            match load_torch_save(&path) {
                Err(e) => failures.push(format!("{key}: {e}")),
                Ok(v) => {
                    let got = digest(&v);
                    if expected.get(key.as_str()) != Some(&got.as_str()) {
                        failures.push(format!(
                            "{key}: digest {got} differs from {:?}",
                            expected.get(key.as_str())
                        ));
                    }
                }
            }
        }
    }
    assert_eq!(
        n,
        expected.len(),
        "a different number of files than the fixture"
    );
    assert!(
        failures.is_empty(),
        "{} of {n} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
