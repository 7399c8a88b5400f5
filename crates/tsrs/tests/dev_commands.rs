//! The developer commands end to end through the binary.

use std::process::Command;

fn tsrs(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tsrs"))
        .args(args)
        .output()
        .expect("run tsrs")
}

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tsrs-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn ir_round_trips_and_reports_errors() {
    let good = temp_file(
        "good.ir",
        "graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x)\n  return (%y)\n",
    );
    let out = tsrs(&["ir", good.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x)\n  return (%y)\n"
    );

    let bad = temp_file(
        "bad.ir",
        "graph(%x : Tensor):\n  %y : Tensor = aten::neg(%q)\n  return (%y)\n",
    );
    let out = tsrs(&["ir", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(":2:"), "{err}");
    assert!(err.contains("undefined value %q"), "{err}");
    assert!(!err.contains("panicked"));
}

#[test]
fn schema_round_trips_and_reports_errors() {
    let good = temp_file(
        "good.txt",
        "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n",
    );
    let out = tsrs(&["schema", good.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n"
    );
    let bad = temp_file(
        "bad.txt",
        "aten::ok() -> int\naten::add(Tensor self -> Tensor\n",
    );
    let out = tsrs(&["schema", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains(":2:"));
}

#[test]
fn bad_arguments_fail_cleanly() {
    let out = tsrs(&["nonsense"]);
    assert!(!out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).is_empty());
    let out = tsrs(&["ir", "/nonexistent/file.ir"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
}
