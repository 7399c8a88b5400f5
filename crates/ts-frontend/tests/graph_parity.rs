//! Graph tests for what the frontend and the cleanup passes must emit to match PyTorch's
//! `fn.graph` (each case is a kind of IR-parity mismatch that was fixed).

use ts_core::Source;
use ts_ir::{FileCheck, Graph};

/// The cleaned-up graph of `entry` in `src`, as `tsrs graph` prints it.
fn graph(src: &str, entry: &str) -> Graph {
    let cu = ts_frontend::compile_source(&Source::new(src.to_string(), None, 1))
        .unwrap_or_else(|e| panic!("{e}"));
    let f = cu.find_function(entry).expect("entry");
    let mut g = (*f.graph().expect("graph")).clone();
    ts_passes::run_cleanup_passes(&mut g);
    ts_ir::verify(&g).unwrap_or_else(|e| panic!("{e}\n{g}"));
    g
}

fn check(fc: FileCheck, g: &Graph) {
    fc.run_graph(g).unwrap_or_else(|e| panic!("{e}\n{g}"));
}

#[test]
fn immutable_constants_are_folded() {
    let g = graph(
        "def f(a: int):\n    b = 2 & 3\n    c = str(3)\n    return (b, 2 ^ 3, 'x' + c, a + b)\n",
        "f",
    );
    check(
        FileCheck::new()
            .check_not("aten::__and__")
            .check_not("aten::__xor__")
            .check_not("aten::str")
            .check("aten::add(%a")
            .check("prim::TupleConstruct"),
        &g,
    );
    let text = g.to_string();
    assert!(text.contains("value=\"x3\""), "{text}");
}

#[test]
fn constant_tuples_become_tuple_constants() {
    let g = graph("def f():\n    return (1, (2, 3))\n", "f");
    check(
        FileCheck::new()
            .check("(int, (int, int)) = prim::Constant[value=(1, (2, 3))]")
            .check_not("prim::TupleConstruct"),
        &g,
    );
}

#[test]
fn ifs_on_constants_are_inlined_and_dead_outputs_dropped() {
    // PyTorch: `d` is not an output of the If (unused), `3 + d` is folded to 6.
    let g = graph(
        "def f(a: int, b: int):\n    d = 3\n    if bool(a > 10):\n        a = 3 + d\n    else:\n        b = 3 + d\n        d = 4\n    c = a + b\n    return c\n",
        "f",
    );
    check(
        FileCheck::new()
            .check("prim::Constant[value=6]")
            .check("%a : int, %b : int = prim::If")
            .check_not("aten::add(")
            .check("aten::add(%a, %b)"),
        &g,
    );
    let g = graph(
        "def f(x: int):\n    if True:\n        y = x\n    else:\n        y = x + 1\n    return y\n",
        "f",
    );
    check(
        FileCheck::new()
            .check_not("prim::If")
            .check_not("aten::add"),
        &g,
    );
}

#[test]
fn raising_folds_stay() {
    // A failing operation is not folded (and an assert message is folded into one string).
    let g = graph(
        "def f(x: int):\n    assert x > 3, 'need more'\n    return 1 // 0\n",
        "f",
    );
    check(
        FileCheck::new()
            .check("prim::Constant[value=\"AssertionError: need more\"]")
            .check("aten::floordiv"),
        &g,
    );
}

#[test]
fn symint_schema_arguments_read_as_int() {
    let g = graph(
        "def f(x: Tensor, w: Tensor):\n    return x.view(2, 6), torch.conv1d(x, w)\n",
        "f",
    );
    check(
        FileCheck::new()
            .check("int[] = prim::ListConstruct")
            .check("aten::view")
            .check_not("SymInt"),
        &g,
    );
    let text = g.to_string();
    assert!(!text.contains("SymInt"), "{text}");
}

#[test]
fn scalar_subscript_assignment_copies_a_tensor() {
    let g = graph(
        "def f(x: Tensor, m: Tensor):\n    x[0:2] = 0\n    x[m] = 1.5\n    return x\n",
        "f",
    );
    check(
        FileCheck::new()
            .check("aten::slice")
            .check_next("prim::dtype")
            .check_next("prim::device")
            .check_next("aten::tensor")
            .check_next("aten::copy_")
            .check_next("prim::dtype")
            .check_next("prim::device")
            .check_next("aten::tensor")
            .check_next("prim::ListConstruct")
            .check_next("aten::index_put_")
            .check_not("aten::fill_"),
        &g,
    );
}

#[test]
fn fork_subgraph_inputs_keep_captured_names() {
    let g = graph(
        "def foo(x: Tensor):\n    return torch.neg(x)\n\ndef f(x: Tensor):\n    fut = torch.jit.fork(foo, x)\n    return torch.jit.wait(fut)\n",
        "f",
    );
    check(
        FileCheck::new()
            .check("prim::fork_0(%x)")
            .check("with prim::fork_0 = graph(%x : Tensor)"),
        &g,
    );
}

#[test]
fn unused_forks_are_dead_code() {
    let g = graph(
        "def foo(x: Tensor):\n    return torch.neg(x)\n\ndef f(x: Tensor):\n    a = torch.jit.fork(foo, x)\n    b = torch.jit.fork(foo, x)\n    return torch.jit.wait(a)\n",
        "f",
    );
    check(FileCheck::new().check_count("= prim::fork_", 1, true), &g);
}

#[test]
fn tuple_index_keeps_the_written_index() {
    let g = graph(
        "def f(a: bool):\n    if a:\n        b = (1, 2)\n    else:\n        b = (0, 2)\n    return b[-2]\n",
        "f",
    );
    check(
        FileCheck::new()
            .check("prim::Constant[value=-2]")
            .check("prim::TupleIndex"),
        &g,
    );
}

#[test]
fn simple_tuples_are_lowered() {
    let g = graph(
        "def f(a: Tuple[int, int], b: Tuple[int, int]):\n    return (a, b)[1][0], len(a + b)\n",
        "f",
    );
    check(
        FileCheck::new()
            .check("prim::TupleIndex(%b")
            .check("int[] = prim::ListConstruct")
            .check("aten::len"),
        &g,
    );
    assert!(!g.to_string().contains(": t[]"), "{g}");
    assert!(!g.to_string().contains("((int, int), (int, int))"), "{g}");
}

#[test]
fn rsub_of_tensors_is_sub() {
    let g = graph(
        "def f(x: Tensor, y: Tensor):\n    return torch.rsub(x, y), torch.rsub(x, 2)\n",
        "f",
    );
    check(
        FileCheck::new()
            .check("aten::sub(%y, %x")
            .check("aten::rsub(%x"),
        &g,
    );
}

#[test]
fn bools_convert_to_int_for_scalars() {
    let g = graph("def f(x: Tensor):\n    return x * True\n", "f");
    check(
        FileCheck::new()
            .check("int = prim::Constant[value=1]")
            .check("aten::mul"),
        &g,
    );
    assert!(!g.to_string().contains("bool = prim::Constant"), "{g}");
}

#[test]
fn tuple_slices_index_each_element() {
    let g = graph(
        "def f(a: bool):\n    if a:\n        b = (1, 2, 3, 4)\n    else:\n        b = (4, 3, 2, 1)\n    c = b[-4:4]\n    return c[1:-1]\n",
        "f",
    );
    check(
        FileCheck::new()
            .check("prim::TupleIndex(%b")
            .check_next("prim::TupleIndex(%b")
            .check_next("prim::TupleConstruct")
            .check_not("prim::TupleUnpack"),
        &g,
    );
}

#[test]
fn adaptive_pool_sizes_are_int_lists() {
    // torch.nn.functional declares `output_size: BroadcastingList2[int]`.
    let g = graph(
        "def f(x: Tensor):\n    F = torch.nn.functional\n    return F.adaptive_avg_pool2d(x, (2, 3)), F.adaptive_max_pool2d(x, (2, 3))\n",
        "f",
    );
    check(
        FileCheck::new()
            .check("int[] = prim::ListConstruct")
            .check("prim::CallFunction")
            .check("int[] = prim::ListConstruct")
            .check("prim::CallFunction"),
        &g,
    );
    assert!(!g.to_string().contains("int?[]"), "{g}");
}

#[test]
fn deletes_are_kept() {
    // `aten::Delete` writes its list (PyTorch's schema says `t[](a!)`), so DCE keeps it.
    let g = graph(
        "def f(x: List[int]) -> List[int]:\n    del x[0], x[1]\n    return x\n",
        "f",
    );
    check(
        FileCheck::new()
            .check("aten::Delete")
            .check_next("aten::Delete"),
        &g,
    );
}

#[test]
fn device_strings_fold_to_device_constants() {
    let g = graph(
        "def f(x: Tensor):\n    return torch.zeros([2], device=torch.device('cpu'))\n",
        "f",
    );
    check(
        FileCheck::new()
            .check("Device = prim::Constant[value=\"cpu\"]")
            .check_not("aten::device"),
        &g,
    );
}

#[test]
fn refinement_casts_have_no_source_range() {
    let g = graph(
        "def f(x: Optional[int]):\n    if x is not None:\n        return x + 1\n    return 0\n",
        "f",
    );
    let text = g.to_string();
    let cast = text
        .lines()
        .find(|l| l.contains("prim::unchecked_cast"))
        .expect("a cast");
    assert!(!cast.contains('#'), "{text}");
}

#[test]
fn fork_subgraphs_number_values_as_lifted_closures() {
    // PyTorch: %0 is the (removed) context tuple, %1 the function, the captured values are
    // unpacked next, then the call.
    let g = graph(
        "def foo(x: Tensor, y: Tensor):\n    return x + y\n\ndef f(x: Tensor, y: Tensor):\n    fut = torch.jit.fork(foo, x, y)\n    return torch.jit.wait(fut)\n",
        "f",
    );
    check(
        FileCheck::new()
            .check("with prim::fork_0 = graph(%x : Tensor,")
            .check_next("%y : Tensor):")
            .check_next("%1 : Function = prim::Constant[name=\"foo\"]()")
            .check_next("%4 : Tensor = prim::CallFunction(%1, %x, %y)")
            .check_next("return (%4)"),
        &g,
    );
}

#[test]
fn divmod_and_frexp_of_constants_fold() {
    let g = graph(
        "def f(a: int):\n    return divmod(7.5, 2.0), math.frexp(8.0), divmod(-7, 2), divmod(a, 3)\n",
        "f",
    );
    let text = g.to_string();
    for c in [
        "(float, float) = prim::Constant[value=(3., 1.5)]",
        "(float, int) = prim::Constant[value=(0.5, 4)]",
        "(int, int) = prim::Constant[value=(-4, 1)]",
        "aten::divmod(%a",
    ] {
        assert!(text.contains(c), "{c}\n{text}");
    }
}

#[test]
fn trailing_numbers_pack_into_list_arguments_first() {
    let g = graph("def f(x: Tensor):\n    return x.view(-1)\n", "f");
    check(
        FileCheck::new()
            .check("int[] = prim::ListConstruct")
            .check_next("aten::view(%x"),
        &g,
    );
}

/// The output types of every `prim::If` in `g`, in order.
fn if_output_types(g: &Graph) -> Vec<Vec<String>> {
    g.to_string()
        .lines()
        .filter_map(|l| l.split_once(" = prim::If("))
        .map(|(lhs, _)| {
            lhs.split(", ")
                .filter_map(|d| d.split_once(" : ").map(|(_, t)| t.trim().to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn merged_exit_ifs_list_the_second_ifs_outputs_first() {
    // A return in a loop: the loop-condition if merged into the returning if comes first
    // (PyTorch: `%cond : bool, %did_return : bool, %value : int = prim::If(...)`).
    let g = graph(
        "def f(xs: List[str], key: str) -> Optional[int]:\n    for i, x in enumerate(xs):\n        if x == key:\n            return i\n    return None\n",
        "f",
    );
    let types = if_output_types(&g);
    assert!(
        types.contains(&vec!["bool".to_string(), "bool".into(), "int".into()]),
        "{g}"
    );
    // break/continue: exit flag and value before the guarded block's own outputs.
    let g = graph(
        "def f(n: int) -> List[int]:\n    out: List[int] = []\n    for i in range(n):\n        for j in range(n):\n            if j > i:\n                break\n            if (i + j) % 3 == 0:\n                continue\n            out.append(i * 10 + j)\n    return out\n",
        "f",
    );
    let text = g.to_string();
    let line = text
        .lines()
        .find(|l| l.contains("= prim::If(") && l.matches(": bool").count() == 3)
        .unwrap_or_else(|| panic!("{text}"));
    let idx = text.find(line).expect("line");
    let then_out = text[idx..]
        .lines()
        .find(|l| l.trim_start().starts_with("-> ("))
        .expect("then outputs");
    // then (break taken): exited = true, exit value = false, block output uninitialized.
    let consts: Vec<&str> = then_out
        .trim()
        .trim_start_matches("-> (")
        .trim_end_matches(')')
        .split(", ")
        .collect();
    let value_of = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} : ")))
            .unwrap_or("")
            .to_string()
    };
    assert!(value_of(consts[0]).contains("value=1"), "{text}");
    assert!(value_of(consts[1]).contains("value=0"), "{text}");
    assert!(
        value_of(consts[2]).contains("prim::Uninitialized"),
        "{text}"
    );
}

#[test]
fn tuple_index_has_no_source_range() {
    let g = graph("def f(t: Tuple[int, Tensor]):\n    return t[1]\n", "f");
    let text = g.to_string();
    let line = text
        .lines()
        .find(|l| l.contains("prim::TupleIndex"))
        .expect("an index");
    assert!(!line.contains('#'), "{text}");
}
