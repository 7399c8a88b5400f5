//! Every conformance program parses; parse errors come with positions; s-expressions.

use ts_core::Source;
use ts_frontend::{parse_program, sexpr};

#[test]
fn parses_every_conformance_program() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/cases"
    );
    let mut n = 0;
    let mut failures = Vec::new();
    for e in std::fs::read_dir(dir).expect("cases").flatten() {
        let p = e.path().join("program.py");
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        n += 1;
        let src = Source::new(text, Some("program.py".into()), 1);
        if let Err(err) = parse_program(&src) {
            failures.push(format!("{}: {err}", p.display()));
        }
    }
    assert!(n > 200);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn sx(text: &str) -> String {
    let src = Source::new(text, None, 1);
    parse_program(&src)
        .unwrap()
        .iter()
        .map(sexpr::stmt)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn s_expressions() {
    assert_eq!(
        sx("def f(x: int, *, y=1) -> int:\n    return x\n"),
        "(def (ident f) (decl (list (param (ident x) (option (variable (ident int))) (option)) (param (ident y) (option) (option (const 1)) kwarg_only)) (option (variable (ident int)))) (list (return (option (variable (ident x))))))"
    );
    assert_eq!(sx("a = -x ** 2 + 3 * y\n"), "(assign (list (variable (ident a))) (option (+ (- (** (variable (ident x)) (const 2))) (* (const 3) (variable (ident y))))) (option))");
    assert_eq!(sx("a = not b and c or d\n"), "(assign (list (variable (ident a))) (option (or (and (not (variable (ident b))) (variable (ident c))) (variable (ident d)))) (option))");
    assert_eq!(
        sx("a < b <= c\n"),
        "(expression_stmt (<= (< (variable (ident a)) (variable (ident b))) (variable (ident c))))"
    );
    assert_eq!(sx("x[1:, ::2, None, ...]\n"), "(expression_stmt (subscript (variable (ident x)) (list (slice_expr (option (const 1)) (option) (option)) (slice_expr (option) (option) (option (const 2))) (None) (dots))))");
    assert_eq!(sx("a, b = c if d else e\n"), "(assign (list (tuple_literal (list (variable (ident a)) (variable (ident b))))) (option (if (variable (ident d)) (variable (ident c)) (variable (ident e)))) (option))");
    assert_eq!(sx("y = [i * 2 for i in x if i > 0]\n"), "(assign (list (variable (ident y))) (option (list_comp (* (variable (ident i)) (const 2)) (variable (ident i)) (variable (ident x)) (option (> (variable (ident i)) (const 0))))) (option))");
    assert_eq!(sx("x is not None and y not in z\n"), "(expression_stmt (and (is not (variable (ident x)) (None)) (not in (variable (ident y)) (variable (ident z)))))");
    assert_eq!(sx("f(a, b=2)\n"), "(expression_stmt (apply (variable (ident f)) (list (variable (ident a))) (list (attribute (ident b) (const 2)))))");
    assert_eq!(
        sx("s = 'a' \"b\"\n"),
        "(assign (list (variable (ident s))) (option (string_literal \"ab\")) (option))"
    );
}

#[test]
fn rejected_constructs_have_clear_errors() {
    for (text, needle) in [
        ("f = lambda x: x\n", "lambda"),
        ("def f():\n    global x\n", "global"),
        ("def f(*args):\n    pass\n", "*args"),
        ("g = (x for x in y)\n", "generator"),
        ("def f():\n    yield 1\n", "yield"),
        ("try:\n    pass\n", "try"),
        ("def f(:\n", "expected an identifier"),
        ("x = (1, 2\n", "expected ')'"),
        (
            "f(a=1, b)\n",
            "positional argument follows keyword argument",
        ),
    ] {
        let src = Source::new(text, None, 1);
        let e = parse_program(&src).unwrap_err();
        let shown = e.to_string();
        assert!(shown.contains(needle), "{text:?} gave {shown}");
        assert!(shown.contains("<--- HERE"), "{shown}");
    }
}
