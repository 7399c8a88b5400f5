//! Language features end to end (source → frontend → runtime), each as PyTorch 2.15 behaves;
//! the expected values are the ones PyTorch gives (see the `lang_*` conformance cases).

use ts_core::{IValue, Source};
use ts_ir::FileCheck;

/// Compiles `src` (with the cleanup passes, as the CLI does) and calls `entry`.
fn run(src: &str, entry: &str, args: Vec<IValue>) -> Result<IValue, String> {
    let cu = ts_frontend::compile_source(&Source::new(src.to_string(), None, 1))
        .map_err(|e| e.to_string())?;
    let f = cu
        .find_function(entry)
        .ok_or_else(|| format!("no function {entry}"))?;
    ts_runtime::call_function(&f, args).map_err(|e| e.to_string())
}

/// `run` with no arguments, shown as TorchScript's `str()`.
fn show(src: &str, entry: &str) -> String {
    match run(src, entry, vec![]) {
        Ok(v) => v.to_display_string(),
        Err(e) => panic!("{entry} failed: {e}"),
    }
}

/// The graph of `entry` as printed.
fn graph(src: &str, entry: &str) -> String {
    let cu = ts_frontend::compile_source(&Source::new(src.to_string(), None, 1)).unwrap();
    cu.find_function(entry)
        .unwrap()
        .graph()
        .unwrap()
        .to_string()
}

#[test]
fn sorting_objects_calls_their_lt() {
    let src = r#"
class Foo(object):
    def __init__(self, x: int):
        self.x = x

    def __lt__(self, other: Foo) -> bool:
        return self.x < other.x

def f():
    li = [Foo(3), Foo(1), Foo(2)]
    a = [v.x for v in sorted(li)]
    li.sort(reverse=True)
    b = [v.x for v in li]
    return a, b
"#;
    assert_eq!(show(src, "f"), "([1, 2, 3], [3, 2, 1])");
    // An inconsistent `__lt__` (always True) still sorts without a panic.
    let src = "class W(object):\n    def __init__(self, x: int):\n        self.x = x\n\n    def __lt__(self, other: W) -> bool:\n        return True\n\ndef f():\n    li = [W(i) for i in range(50)]\n    li.sort()\n    return len(sorted(li))\n";
    assert_eq!(show(src, "f"), "50");
    // Without `__lt__` the error says what is missing.
    let src = "class Bar(object):\n    def __init__(self, x: int):\n        self.x = x\n\ndef f():\n    li = [Bar(2), Bar(1)]\n    li.sort()\n    return len(li)\n";
    let e = run(src, "f", vec![]).unwrap_err();
    assert!(e.contains("must define a __lt__ method"), "{e}");
}

#[test]
fn constant_conditions_emit_only_the_taken_branch() {
    let src =
        "def f():\n    if False:\n        c0 = 1\n    else:\n        c0 = 1.0\n    return c0\n";
    assert_eq!(show(src, "f"), "1.");
    FileCheck::new()
        .check_not("prim::If")
        .run(&graph(src, "f"))
        .unwrap();
    let src = "def f(x: int):\n    if not True:\n        y = 'a'\n    else:\n        y = x\n    return y\n";
    assert_eq!(
        run(src, "f", vec![IValue::Int(4)]).unwrap().as_int(),
        Some(4)
    );
}

#[test]
fn early_return_inside_with_still_runs_exit() {
    let src = r#"
class Context(object):
    def __init__(self, start: int):
        self.count = start

    def __enter__(self):
        self.count += 10
        return self.count

    def __exit__(self, type: Any, value: Any, tb: Any):
        self.count -= 10

def inner(x: int, c: Context) -> int:
    with c:
        y = x + c.count
        return y
    return -1

def f(x: int):
    c = Context(2)
    r = inner(x, c)
    return r, c.count
"#;
    assert_eq!(
        run(src, "f", vec![IValue::Int(1)])
            .unwrap()
            .to_display_string(),
        "(13, 2)"
    );
}

#[test]
fn two_result_number_builtins() {
    let src = "def f():\n    return divmod(7, 3), divmod(-7, 3), divmod(7.5, 2.0), math.modf(2.5), math.frexp(8.0)\n";
    assert_eq!(
        show(src, "f"),
        "((2, 1), (-3, 2), (3., 1.5), (0.5, 2.), (0.5, 4))"
    );
    let e = run(
        "def f(a: int):\n    return divmod(a, 0)\n",
        "f",
        vec![IValue::Int(1)],
    )
    .unwrap_err();
    assert!(e.contains("RuntimeError:"), "{e}");
}

#[test]
fn list_count_of_tensors_compares_values() {
    let src = "def f():\n    a = [torch.tensor(4), torch.tensor(1), torch.tensor(4), torch.tensor(4)]\n    return a.count(torch.tensor(4))\n";
    assert_eq!(show(src, "f"), "3");
}

#[test]
fn tensor_list_sort_sorted_and_remove() {
    let src = "def f():\n    a = [torch.tensor(3), torch.tensor(1), torch.tensor(2)]\n    b = sorted(a)\n    a.sort(reverse=True)\n    a.remove(torch.tensor(2))\n    return [int(t) for t in a], [int(t) for t in b]\n";
    assert_eq!(show(src, "f"), "([3, 1], [1, 2, 3])");
}

#[test]
fn del_deletes_each_list_and_dict_target() {
    let src = "def f(x: List[int], d: Dict[str, int]):\n    del x[0], x[1]\n    del d['hi'], d['there']\n    del x[-1]\n    return x, d\n";
    let x = IValue::list(ts_core::Type::int(), (0..4).map(IValue::Int).collect());
    let d = run(
        "def mk() -> Dict[str, int]:\n    return {'hi': 5, 'there': 6, 'x': 7}\n",
        "mk",
        vec![],
    )
    .unwrap();
    let out = run(src, "f", vec![x, d]).unwrap();
    assert_eq!(out.to_display_string(), "([1], {x: 7})");
    let e = run(
        "def f(x: List[int]):\n    del x[5]\n    return x\n",
        "f",
        vec![IValue::list(ts_core::Type::int(), vec![])],
    )
    .unwrap_err();
    assert!(
        e.contains("RuntimeError:") && e.contains("out of range"),
        "{e}"
    );
    let e = run(
        "def f(x: List[int]):\n    del x[0:1]\n    return x\n",
        "f",
        vec![],
    )
    .unwrap_err();
    assert!(e.contains("slicing is not supported"), "{e}");
}

#[test]
fn dict_builtin_forms() {
    let src = r#"
def f():
    a = dict(foo=1, bar=2)
    b = dict([("foo", 1), ("bar", 2)])
    c = dict(zip(["foo", "baz"], [1, 2]))
    d = dict({"foo": 1}, baz=3)
    e = dict({chr(65 + i): i for i in range(2)}, foo=2)
    return a, b, c, d, e
"#;
    assert_eq!(
        show(src, "f"),
        "({foo: 1, bar: 2}, {foo: 1, bar: 2}, {foo: 1, baz: 2}, {foo: 1, baz: 3}, {A: 0, B: 1, foo: 2})"
    );
}

#[test]
fn list_builtin_of_iterables() {
    let src = "def f():\n    return list([1, 2]), list(('a', 'b')), list(range(3)), list('abc'), list(enumerate([5]))\n";
    assert_eq!(
        show(src, "f"),
        "([1, 2], [a, b], [0, 1, 2], [a, b, c], [(0, 5)])"
    );
}

#[test]
fn optional_of_union_accepts_the_flat_union() {
    let src = "def f(flag: bool) -> Tuple[Union[str, int, None], Union[str, int, None]]:\n    y: Union[int, str, None] = 'foo'\n    if flag:\n        x: Optional[Union[int, str]] = y\n    else:\n        x: Optional[Union[int, str]] = 'bar'\n    return x, y\n";
    assert_eq!(
        run(src, "f", vec![IValue::Bool(true)])
            .unwrap()
            .to_display_string(),
        "(foo, foo)"
    );
}

#[test]
fn slice_objects_as_subscripts() {
    let src = r#"
def f(x: List[int], s: str):
    a = slice(1)
    return x[slice(None, None, None)], x[slice(0, 6, 2)], s[slice(None, 3, 1)], x[a], x[slice(1000)], (1, 2, 3, 4)[slice(1, None, 2)]
"#;
    let x = IValue::list(ts_core::Type::int(), (0..8).map(IValue::Int).collect());
    assert_eq!(
        run(src, "f", vec![x, IValue::str("foo_bar")])
            .unwrap()
            .to_display_string(),
        "([0, 1, 2, 3, 4, 5, 6, 7], [0, 2, 4], foo, [0], [0, 1, 2, 3, 4, 5, 6, 7], (2, 4))"
    );
}

#[test]
fn str_of_negative_zero_has_no_sign() {
    let src = "def f(z: float):\n    return str(-0.0), str(z), str(2.0), str(0.1)\n";
    assert_eq!(
        run(src, "f", vec![IValue::Double(-0.0)])
            .unwrap()
            .to_display_string(),
        "(0., 0., 2., 0.10000000000000001)"
    );
}

#[test]
fn tuple_slices_with_steps() {
    let src = "def func(x):\n    # type: (Tuple[int, int, int, int, int, int, int])\n    return x[::-1], x[7:5:2], x[5:7:-2], x[::-2], x[:4:-3], x[3::-2], x[-3:3:2], x[1:6:2]\n";
    let x = IValue::tuple((0..7).map(IValue::Int).collect());
    assert_eq!(
        run(src, "func", vec![x]).unwrap().to_display_string(),
        "((6, 5, 4, 3, 2, 1, 0), (), (), (6, 4, 2, 0), (6,), (3, 1), (), (1, 3, 5))"
    );
    let e = run(
        "def f(x: Tuple[int, int]):\n    return x[::0]\n",
        "f",
        vec![],
    )
    .unwrap_err();
    assert!(e.contains("slice step cannot be zero"), "{e}");
}

#[test]
fn builtin_forms_emit_the_graphs_pytorch_emits() {
    // Slice objects fill missing bounds with 0 and INT64_MAX.
    let g = graph(
        "def f(x: List[int]):\n    return x[slice(None, None, None)]\n",
        "f",
    );
    FileCheck::new()
        .check("prim::Constant[value=0]")
        .check("prim::Constant[value=9223372036854775807]")
        .check("aten::slice")
        .run(&g)
        .unwrap();
    // Tuple slices index each picked element (PyTorch's createTupleSlice).
    let g = graph("def f(x: Tuple[int, int, int]):\n    return x[::-2]\n", "f");
    FileCheck::new()
        .check_count("prim::TupleIndex", 2, true)
        .check("prim::TupleConstruct")
        .check_not("prim::TupleUnpack")
        .run(&g)
        .unwrap();
    // dict(k=v) is a comprehension over a list of pairs; dict(d, k=v) copies then sets.
    let g = graph("def f():\n    return dict(foo=1, bar=2)\n", "f");
    FileCheck::new()
        .check("prim::ListConstruct")
        .check("prim::DictConstruct()")
        .check("prim::Loop")
        .check("aten::_set_item")
        .run(&g)
        .unwrap();
    let g = graph(
        "def f(d: Dict[str, int]):\n    return dict(d, baz=3)\n",
        "f",
    );
    FileCheck::new()
        .check("aten::dict")
        .check("aten::_set_item")
        .check_not("prim::Loop")
        .run(&g)
        .unwrap();
}
