//! Every `model.pt` of the conformance suite (written by PyTorch 2.15's `torch.jit.save`) loads:
//! its code compiles and its `data.pkl` becomes a module object of the compiled class.

use std::path::PathBuf;

fn cases_dir() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/cases");
    d.is_dir().then_some(d)
}

#[test]
fn conformance_models_load() {
    let Some(dir) = cases_dir() else {
        eprintln!("no ../shared/conformance: skipped");
        return;
    };
    let mut total = 0;
    let mut failures = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let model = e.path().join("model.pt");
        if !model.exists() {
            continue;
        }
        total += 1;
        match ts_serialize::load_script_module(&model) {
            Ok(m) => {
                assert!(m.module.class.is_module, "{}", model.display());
                assert!(m.module.class.find_method("forward").is_some());
            }
            Err(err) => failures.push(format!("{}: {err}", e.file_name().to_string_lossy())),
        }
    }
    assert!(
        total >= 31,
        "expected the 31 conformance models, found {total}"
    );
    // Custom C++ classes are the only archives that may be refused.
    assert!(
        failures.is_empty(),
        "{} of {total} models failed to load:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn archives_with_custom_classes_or_bad_code_are_clear_errors() {
    // A zip that claims to be an archive but has code that does not parse.
    let mut w = ts_serialize::ArchiveWriter::new("m").unwrap();
    w.write_record("version", b"10").unwrap();
    w.write_record("data.pkl", b"\x80\x02N.").unwrap();
    w.write_record(
        "code/__torch__.py",
        b"class M(Module):\n  def forward(self, x\n",
    )
    .unwrap();
    let bytes = w.finish().unwrap();
    let err = ts_serialize::load_script_module_bytes(bytes)
        .err()
        .expect("must fail");
    assert!(err.to_string().contains("does not compile"), "{err}");

    let mut w = ts_serialize::ArchiveWriter::new("m").unwrap();
    w.write_record("version", b"10").unwrap();
    w.write_record("data.pkl", b"\x80\x02N.").unwrap();
    w.write_record("code/__torch__/torch/classes/my.py", b"x = 1\n")
        .unwrap();
    let bytes = w.finish().unwrap();
    let err = ts_serialize::load_script_module_bytes(bytes)
        .err()
        .expect("must fail");
    assert!(err.to_string().contains("custom C++ classes"), "{err}");

    // data.pkl that is not a module object.
    let mut w = ts_serialize::ArchiveWriter::new("m").unwrap();
    w.write_record("version", b"10").unwrap();
    w.write_record("data.pkl", b"\x80\x02N.").unwrap();
    w.write_record("code/__torch__.py", b"def f(x: int) -> int:\n  return x\n")
        .unwrap();
    let bytes = w.finish().unwrap();
    let err = ts_serialize::load_script_module_bytes(bytes)
        .err()
        .expect("must fail");
    assert!(
        err.to_string().contains("expected a module object"),
        "{err}"
    );
}

#[test]
fn the_before_compile_hook_runs_once_between_parsing_and_compiling() {
    let archive = |code: &[u8]| {
        let mut w = ts_serialize::ArchiveWriter::new("m").unwrap();
        w.write_record("version", b"10").unwrap();
        w.write_record("data.pkl", b"\x80\x02N.").unwrap();
        w.write_record("code/__torch__.py", code).unwrap();
        ts_serialize::Archive::from_bytes(w.finish().unwrap()).unwrap()
    };
    // The error of loading `code` and how often the hook ran.
    let failing_load = |code: &[u8]| {
        let mut calls = 0;
        let err = ts_serialize::load_archive_with(archive(code), &mut || calls += 1)
            .err()
            .expect("must fail");
        (err.to_string(), calls)
    };
    // Code that parses but does not compile: the hook ran (compiling started after it).
    let (err, calls) = failing_load(b"def f(x: int) -> int:\n  return undefined_name\n");
    assert!(err.contains("does not compile"), "{err}");
    assert_eq!(calls, 1);
    // Code that does not parse fails before the hook.
    let (err, calls) = failing_load(b"class M(Module):\n  def forward(self, x\n");
    assert!(err.contains("does not compile"), "{err}");
    assert_eq!(calls, 0);
    // A real model: one call, and the module loads.
    let Some(dir) = cases_dir() else {
        return;
    };
    let model = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("model.pt"))
        .find(|p| p.exists())
        .expect("a conformance model");
    let mut calls = 0;
    let m = ts_serialize::load_script_module_with(&model, &mut || calls += 1).unwrap();
    assert!(m.module.class.find_method("forward").is_some());
    assert_eq!(calls, 1);
}
