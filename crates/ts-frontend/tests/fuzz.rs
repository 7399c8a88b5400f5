//! Stable-Rust fuzzing in the normal test run: structured generators for source programs,
//! IR text and schemas, and a mutation harness over seed programs (the repository's examples
//! and a few built in). Whatever is generated must compile or fail with an error: never a
//! panic. The run is bounded: `TSRS_FUZZ_CASES` cases per property (default 128) and
//! `TSRS_FUZZ_SECS` seconds in all (default 20); set them higher for a longer local run.
//! Crashers found become regression tests (`regressions` below).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use ts_core::Source;

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: env_num("TSRS_FUZZ_CASES", 128) as u32,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// True once this process has fuzzed for its time budget (later cases are skipped).
fn out_of_time() -> bool {
    static START: OnceLock<Instant> = OnceLock::new();
    let start = START.get_or_init(Instant::now);
    start.elapsed() > Duration::from_secs(env_num("TSRS_FUZZ_SECS", 20))
}

fn compile(text: &str) {
    let _ = ts_frontend::compile_source(&Source::new(text.to_owned(), None, 1));
}

/// Expressions over `x: Tensor`, `n: int`, `s: str` and `l: List[int]`, nested up to a few
/// levels, well-typed or not.
fn expr() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(vec![
        "x",
        "n",
        "s",
        "l",
        "1",
        "2.5",
        "True",
        "None",
        "'a'",
        "[1, 2]",
        "(n, x)",
        "{'k': n}",
        "torch.zeros(2)",
        "l[0]",
        "x.size()",
        "len(l)",
        "s + 'b'",
    ])
    .prop_map(str::to_owned);
    leaf.prop_recursive(4, 32, 3, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec![
                    "+", "-", "*", "/", "//", "%", "**", "<", "==", "!=", "and", "or", "&", "|",
                    "in", "is", "is not", "<<",
                ]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            (
                prop::sample::select(vec![
                    "torch.add",
                    "torch.relu",
                    "len",
                    "int",
                    "float",
                    "str",
                    "hasattr",
                    "isinstance",
                    "getattr",
                    "unchecked_cast",
                    "uninitialized",
                    "range",
                    "list",
                    "tuple",
                    "min",
                    "max",
                    "abs",
                    "torch.cat",
                    "annotate",
                ]),
                prop::collection::vec(inner.clone(), 0..3)
            )
                .prop_map(|(f, args)| format!("{f}({})", args.join(", "))),
            (
                inner.clone(),
                prop::sample::select(vec!["add", "size", "append", "item", "t"])
            )
                .prop_map(|(a, m)| format!("{a}.{m}()")),
            (inner.clone(), inner.clone()).prop_map(|(a, i)| format!("{a}[{i}]")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, c, b)| format!("({a} if {c} else {b})")),
            inner
                .clone()
                .prop_map(|a| format!("[{a} for _i in range(2)]")),
            inner.prop_map(|a| format!("not {a}")),
        ]
    })
}

/// A statement (with its nested block) at `indent`.
fn stmt() -> impl Strategy<Value = Vec<String>> {
    let simple = prop_oneof![
        expr().prop_map(|e| vec![format!("y = {e}")]),
        expr().prop_map(|e| vec![format!("return {e}")]),
        expr().prop_map(|e| vec![format!("l.append({e})")]),
        expr().prop_map(|e| vec![format!("assert {e}")]),
        Just(vec!["break".to_owned()]),
        Just(vec!["continue".to_owned()]),
        Just(vec!["pass".to_owned()]),
    ];
    simple.prop_recursive(3, 16, 3, |inner| {
        (
            prop::sample::select(vec!["if", "while", "for _j in"]),
            expr(),
            prop::collection::vec(inner, 1..3),
        )
            .prop_map(|(kw, cond, body)| {
                let mut out = vec![format!("{kw} {cond}:")];
                for s in body.into_iter().flatten() {
                    out.push(format!("    {s}"));
                }
                out
            })
    })
}

fn program() -> impl Strategy<Value = String> {
    prop::collection::vec(stmt(), 1..5).prop_map(|stmts| {
        let mut s = String::from("def f(x: Tensor, n: int, s: str, l: List[int]):\n    y = n\n");
        for line in stmts.into_iter().flatten() {
            s.push_str("    ");
            s.push_str(&line);
            s.push('\n');
        }
        s.push_str("    return y\n");
        s
    })
}

/// Seed programs for the mutation harness.
fn seeds() -> Vec<String> {
    let mut v = vec![
        "def f(x: Tensor, n: int) -> Tensor:\n    for i in range(n):\n        if i % 2 == 0:\n            x = x + i\n        else:\n            x = x * 2\n    return x\n".to_owned(),
        "class C:\n    def __init__(self, a: int):\n        self.a = a\n\n    def get(self) -> int:\n        return self.a\n\ndef f(n: int) -> int:\n    c = C(n)\n    d = {'k': [c.get()]}\n    return d['k'][0] if n > 0 else -1\n".to_owned(),
        "def g(s: str) -> List[str]:\n    out: List[str] = []\n    for c in s:\n        out.append(c.upper())\n    with torch.no_grad():\n        pass\n    return [f'{c}!' for c in out]\n".to_owned(),
    ];
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
    if let Ok(dir) = std::fs::read_dir(examples) {
        for e in dir.flatten() {
            if let Ok(t) = std::fs::read_to_string(e.path()) {
                v.push(t);
            }
        }
    }
    v
}

/// Applies byte edits (replace, insert, delete, duplicate a span) to `text`, keeping UTF-8.
fn mutate(text: &str, edits: &[(usize, u8, u8)]) -> String {
    let mut b = text.as_bytes().to_vec();
    for &(at, op, byte) in edits {
        if b.is_empty() {
            break;
        }
        let i = at % b.len();
        const CHARS: &[u8] =
            b" ():[],.+-*/%<>=!'\"\n\t#x0:if else return def for in and or not @\\{}";
        let ch = CHARS[byte as usize % CHARS.len()];
        match op % 5 {
            0 => b[i] = ch,
            1 => b.insert(i, ch),
            2 => {
                b.remove(i);
            }
            3 => {
                let end = (i + byte as usize % 40).min(b.len());
                let span = b[i..end].to_vec();
                b.splice(i..i, span);
            }
            _ => b.truncate(i),
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn generated_programs_never_panic(p in program()) {
        if !out_of_time() {
            compile(&p);
        }
    }

    #[test]
    fn mutated_seed_programs_never_panic(
        seed in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..8),
    ) {
        if !out_of_time() {
            let seeds = seeds();
            compile(&mutate(&seeds[seed.index(seeds.len())], &edits));
        }
    }

    #[test]
    fn mutated_ir_text_never_panics(
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..8),
    ) {
        if !out_of_time() {
            let ir = "graph(%x.1 : Tensor, %n : int):\n  %2 : int = prim::Constant[value=1]()\n  %3 : Tensor = aten::add(%x.1, %n, %2)\n  %4 : bool = aten::gt(%n, %2)\n  %5 : Tensor = prim::If(%4)\n    block0():\n      -> (%3)\n    block1():\n      -> (%x.1)\n  %6 : (Tensor, int) = prim::TupleConstruct(%5, %n)\n  return (%6)\n";
            if let Ok(g) = ts_ir::parse_ir(&mutate(ir, &edits)) {
                let _ = ts_ir::verify(&g);
                let _ = g.to_string();
            }
        }
    }

    #[test]
    fn mutated_schemas_never_panic(
        which in 0usize..4,
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..8),
    ) {
        if !out_of_time() {
            let schemas = [
                "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
                "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor",
                "prim::foo(Dict(str, List[Optional[int]]) d, (int, str)? t=None) -> ...",
            ];
            let _ = ts_core::FunctionSchema::parse(&mutate(schemas[which], &edits));
        }
    }
}

/// Crashers the harness found, kept as regression tests.
#[test]
fn regressions() {
    for src in [
        // Wrong arities of special forms used to recurse forever or index out of bounds.
        "def f(x: Tensor):\n    return hasattr(x)\n",
        "def f(x: Tensor):\n    return unchecked_cast(Tensor, )\n",
        "def f(x: Tensor):\n    return unchecked_cast()\n",
        "def f(x: Tensor):\n    return uninitialized()\n",
        "def f(x: Tensor):\n    return isinstance(x, int, str)\n",
    ] {
        let r = ts_frontend::compile_source(&Source::new(src.to_owned(), None, 1));
        assert!(r.is_err(), "{src}");
    }
}
