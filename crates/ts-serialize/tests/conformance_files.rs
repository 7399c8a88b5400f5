//! The conformance suite's torch.save and torch.jit.save files load, and their values match
//! what the suite's own Python reader (`torchsave.py`) sees.

mod support;

use std::collections::HashMap;

use support::{case_files, cases_dir, digest, fixture};
use ts_core::IValue;
use ts_serialize::{load_torch_save, InferredClasses, ScriptArchive};

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

/// Every `model.pt` opens as a TorchScript archive; its `constants.pkl` and `data.pkl` load
/// (classes made up from the saved state), and every tensor in them is readable.
#[test]
fn every_model_archive_loads() {
    let models = case_files("model.pt");
    if cases_dir().is_none() {
        return;
    }
    assert!(!models.is_empty());
    let mut failures = Vec::new();
    let mut tensors = 0;
    for path in &models {
        let result = (|| -> ts_serialize::Result<()> {
            let mut archive = ScriptArchive::open(path)?;
            assert!((3..=5).contains(&archive.version()));
            assert!(!archive.code_files().is_empty());
            archive.load_constants()?;
            let mut classes = InferredClasses::default();
            let root = archive.load_data(&mut classes)?;
            let IValue::Object(obj) = &root else {
                panic!("{}: root is {root:?}", path.display())
            };
            assert!(obj.class.name.starts_with("__torch__."));
            tensors += count_tensors(&root);
            // The generic tree is available to an importer that builds objects itself.
            let tree = archive.pickle_tree("data")?;
            assert!(matches!(tree.root, ts_serialize::PickleValue::Object(_)));
            Ok(())
        })();
        if let Err(e) = result {
            failures.push(format!("{}: {e}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(tensors > 100, "only {tensors} tensors found");
}

fn count_tensors(v: &IValue) -> usize {
    match v {
        IValue::Tensor(t) => {
            // Reading every element proves the data is in bounds.
            let _ = t.to_vec::<f64>();
            1
        }
        IValue::Object(o) => o.slots.read().iter().map(count_tensors).sum(),
        IValue::List(l) => l.items.read().iter().map(count_tensors).sum(),
        IValue::Tuple(t) => t.elements.iter().map(count_tensors).sum(),
        IValue::Dict(d) => d.entries.read().values().map(count_tensors).sum(),
        _ => 0,
    }
}

/// The parameters and buffers of every `model.pt` equal what `torch.jit.load` gives
/// (`tests/fixtures/model_digests.txt`, from `digest_models_with_torch.py` with torch 2.15).
#[test]
fn model_tensors_match_torch_jit_load() {
    if cases_dir().is_none() {
        return;
    }
    let digests = std::fs::read_to_string(fixture("model_digests.txt")).unwrap();
    let mut by_case: HashMap<&str, Vec<(&str, &str)>> = HashMap::new();
    for line in digests.lines() {
        let mut parts = line.split('\t');
        let (Some(case), Some(name), Some(d)) = (parts.next(), parts.next(), parts.next()) else {
            panic!("bad fixture line {line}")
        };
        by_case.entry(case).or_default().push((name, d));
    }
    let mut checked = 0;
    for path in case_files("model.pt") {
        let case = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let mut archive = ScriptArchive::open(&path).unwrap();
        let root = archive.load_data(&mut InferredClasses::default()).unwrap();
        let mut ours = HashMap::new();
        collect_tensors(&root, "", &mut ours);
        for (name, want) in by_case.get(case.as_str()).into_iter().flatten() {
            let got = ours.get(*name).map(String::as_str);
            assert_eq!(got, Some(*want), "{case}: {name}");
            checked += 1;
        }
    }
    assert_eq!(checked, digests.lines().count());
}

/// Tensor attributes of an object tree by dotted path (`conv1.weight`).
fn collect_tensors(v: &IValue, path: &str, out: &mut HashMap<String, String>) {
    match v {
        IValue::Tensor(_) => {
            out.insert(path.to_owned(), digest(v));
        }
        IValue::Object(o) => {
            let members = o.class.members.read();
            for (attr, value) in members.attributes.iter().zip(o.slots.read().iter()) {
                let p = if path.is_empty() {
                    attr.name.clone()
                } else {
                    format!("{path}.{}", attr.name)
                };
                collect_tensors(value, &p, out);
            }
        }
        _ => {}
    }
}
