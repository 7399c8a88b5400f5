//! The developer commands end to end through the binary.

use std::process::Command;

mod common;
use common::Scratch;

fn tsrs(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tsrs"))
        .args(args)
        .output()
        .expect("run tsrs")
}

#[test]
fn ir_round_trips_and_reports_errors() {
    let dir = Scratch::new("dev");
    let good = dir.write(
        "good.ir",
        "graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x)\n  return (%y)\n",
    );
    let out = tsrs(&["ir", good.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x)\n  return (%y)\n"
    );

    let bad = dir.write(
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
    let dir = Scratch::new("dev");
    let good = dir.write(
        "good.txt",
        "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n",
    );
    let out = tsrs(&["schema", good.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n"
    );
    let bad = dir.write(
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

#[test]
fn deeply_nested_input_is_an_error_not_a_stack_overflow() {
    let dir = Scratch::new("dev");
    // Found by fuzzing: every parser recursed once per nesting level with no limit.
    let n = 20_000;
    let check = |out: std::process::Output, what: &str| {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{what}");
        assert!(
            err.contains("nested too deeply"),
            "{what}: {}",
            &err[..err.len().min(300)]
        );
        assert!(
            !err.contains("overflow") && !err.contains("panicked"),
            "{what}"
        );
    };
    let schema = dir.write(
        "deep.schema",
        &format!(
            "aten::f({}int{} a) -> int\n",
            "Dict(str, ".repeat(n),
            ")".repeat(n)
        ),
    );
    check(tsrs(&["schema", schema.to_str().unwrap()]), "schema types");
    let ir = dir.write(
        "deep.ir",
        &format!(
            "graph(%x : {}int{}):\n  return (%x)\n",
            "Dict(str, ".repeat(n),
            ")".repeat(n)
        ),
    );
    check(tsrs(&["ir", ir.to_str().unwrap()]), "IR types");
    let ir = dir.write(
        "deep_attr.ir",
        &format!(
            "graph():\n  %x : int[] = prim::Constant[value={}1{}]()\n  return (%x)\n",
            "[".repeat(n),
            "]".repeat(n)
        ),
    );
    check(tsrs(&["ir", ir.to_str().unwrap()]), "IR attribute lists");
    for (name, body) in [
        (
            "parens",
            format!("return {}x{}", "(".repeat(n), ")".repeat(n)),
        ),
        ("unary", format!("return {}x", "-".repeat(n))),
        (
            "annotation",
            format!(
                "y: {}int{} = []\n    return x",
                "List[".repeat(n),
                "]".repeat(n)
            ),
        ),
    ] {
        let p = dir.write(
            &format!("deep_{name}.py"),
            &format!("def f(x: int):\n    {body}\n"),
        );
        check(tsrs(&["graph", p.to_str().unwrap(), "--entry", "f"]), name);
    }
    let mut blocks = String::from("def f(x: int):\n");
    for i in 0..500 {
        blocks.push_str(&" ".repeat(4 * (i + 1)));
        blocks.push_str("if x:\n");
    }
    blocks.push_str(&" ".repeat(4 * 501));
    blocks.push_str("return x\n    return x\n");
    let p = dir.write("deep_blocks.py", &blocks);
    check(
        tsrs(&["graph", p.to_str().unwrap(), "--entry", "f"]),
        "blocks",
    );
}
