//! Execution behaviour on compiled source programs: values freed at their last use, fork/wait,
//! tracebacks through calls, and the graph executor's plan cache.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Once};

use ts_core::{IValue, Source};
use ts_ir::{CompilationUnit, Function};
use ts_ops::{op, registry};
use ts_runtime::{call_function, executor_of};
use ts_tensor::{DType, ErrorKind, Tensor};

thread_local! {
    /// The tensor handed to `test_exec::remember`, kept alive by this test only.
    static REMEMBERED: RefCell<Option<Tensor>> = const { RefCell::new(None) };
}

/// How many times `test_exec::bump` ran (from any thread: forked tasks may run elsewhere).
static BUMPS: AtomicUsize = AtomicUsize::new(0);

/// Registers the probe operators once:
/// - `remember(x) -> x` keeps a handle to `x`;
/// - `others_holding()` is how many handles besides ours still hold the remembered tensor
///   (0 once the interpreter has released every register, stack slot and value of it);
/// - `bump()` counts calls.
fn register_probes() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let r = registry();
        r.register(
            "test_exec::remember(Tensor(a) x) -> Tensor(a)",
            op(|s| {
                let t = s.last().and_then(|v| v.as_tensor()).cloned();
                REMEMBERED.with(|m| *m.borrow_mut() = t);
                Ok(())
            }),
        )
        .unwrap();
        r.register(
            "test_exec::others_holding() -> int",
            op(|s| {
                let n = REMEMBERED.with(|m| m.borrow().as_ref().map(|t| t.use_count() as i64 - 1));
                s.push(IValue::Int(n.unwrap_or(-1)));
                Ok(())
            }),
        )
        .unwrap();
        r.register(
            "test_exec::bump() -> ()",
            op(|_| {
                BUMPS.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }),
        )
        .unwrap();
    });
}

fn compile(src: &str) -> Arc<CompilationUnit> {
    register_probes();
    ts_frontend::compile_source(&Source::new(src.to_string(), Some("prog.py".into()), 1))
        .unwrap_or_else(|e| panic!("compile: {e}"))
}

fn func(cu: &CompilationUnit, name: &str) -> Arc<Function> {
    cu.find_function(name).unwrap()
}

fn ones(n: i64) -> IValue {
    IValue::Tensor(Tensor::from_vec(vec![1.0f32; n as usize], &[n]).unwrap())
}

#[test]
fn a_tensor_is_freed_right_after_its_last_use() {
    let cu = compile(
        "def f(x: Tensor):\n    y = ops.test_exec.remember(x * 2)\n    before = ops.test_exec.others_holding()\n    z = y + 1\n    after = ops.test_exec.others_holding()\n    w = z * 3\n    return w, before, after\n",
    );
    let out = call_function(&func(&cu, "f"), vec![ones(3)]).unwrap();
    let t = out.as_tuple().unwrap();
    // While `y` is still needed the interpreter holds it; right after `y + 1` (its last use)
    // nothing but this test holds `y`: its storage is freed with our handle.
    assert!(t.elements[1].as_int().unwrap() >= 1, "{out:?}");
    assert_eq!(t.elements[2].as_int(), Some(0), "{out:?}");
    REMEMBERED.with(|m| {
        let y = m.borrow_mut().take().unwrap();
        assert_eq!(y.use_count(), 1);
        assert_eq!(y.to_vec::<f32>(), vec![2.0; 3]);
    });
    // Same inside a loop body: each iteration's temporary is released after its last use.
    let cu = compile(
        "def g(x: Tensor, n: int):\n    acc = 0\n    for i in range(n):\n        t = ops.test_exec.remember(x + i)\n        s = t.sum()\n        acc += ops.test_exec.others_holding()\n    return acc\n",
    );
    let out = call_function(&func(&cu, "g"), vec![ones(2), IValue::Int(4)]).unwrap();
    assert_eq!(out.as_int(), Some(0));
}

#[test]
fn forked_functions_run_and_their_results_are_waited_for() {
    let cu = compile(
        "def work(x: Tensor, k: int) -> Tensor:\n    ops.test_exec.bump()\n    return x * k\n\ndef f(x: Tensor):\n    futs = [torch.jit.fork(work, x, k) for k in range(5)]\n    return [torch.jit.wait(fut).sum() for fut in futs]\n",
    );
    let before = BUMPS.load(Ordering::SeqCst);
    let out = call_function(&func(&cu, "f"), vec![ones(4)]).unwrap();
    let items = out.as_list().unwrap().items.read().clone();
    let sums: Vec<f64> = items
        .iter()
        .map(|v| v.as_tensor().unwrap().item().unwrap().to_f64())
        .collect();
    assert_eq!(sums, vec![0.0, 4.0, 8.0, 12.0, 16.0]);
    // Every forked call ran exactly once.
    assert!(BUMPS.load(Ordering::SeqCst) - before >= 5);
}

#[test]
fn an_error_inside_a_fork_propagates_to_the_wait() {
    let cu = compile(
        "def bad(x: int) -> int:\n    if x > 0:\n        raise ValueError('forked failure')\n    return x\n\ndef f(x: int):\n    fut = torch.jit.fork(bad, x)\n    return torch.jit.wait(fut)\n",
    );
    let f = func(&cu, "f");
    assert_eq!(
        call_function(&f, vec![IValue::Int(0)]).unwrap().as_int(),
        Some(0)
    );
    let e = call_function(&f, vec![IValue::Int(1)]).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("forked failure"), "{text}");
    assert_eq!(e.kind(), ErrorKind::ValueError, "{text}");
}

#[test]
fn a_raise_in_a_called_function_shows_both_frames() {
    let cu = compile(
        "def inner(x: int) -> int:\n    if x > 0:\n        raise ValueError('x must not be positive')\n    return x\n\ndef outer(x: int) -> int:\n    y = inner(x)\n    return y + 1\n",
    );
    let e = call_function(&func(&cu, "outer"), vec![IValue::Int(3)]).unwrap_err();
    let text = e.to_string();
    assert_eq!(e.kind(), ErrorKind::ValueError, "{text}");
    assert!(text.contains("Traceback of TorchScript"), "{text}");
    // Most recent call last: the call in `outer` (line 7), then the raise in `inner` (line 3).
    let outer_at = text.find("line 7, in outer").expect(&text);
    let inner_at = text.find("line 3, in inner").expect(&text);
    assert!(outer_at < inner_at, "{text}");
    assert!(text.contains("y = inner(x)"), "{text}");
    assert!(
        text.contains("raise ValueError('x must not be positive')"),
        "{text}"
    );
    // A `raise` prints the class it named, qualified, as PyTorch does.
    assert!(
        text.ends_with("\nbuiltins.ValueError: x must not be positive"),
        "{text}"
    );
}

#[test]
fn traceback_context_and_classes_match_pytorch() {
    // Two lines of context before and after each frame's line; operators' failures end in
    // `RuntimeError:` (a missing key as `RuntimeError: KeyError: key`).
    let cu = compile(
        "def g(x: List[int], i: int) -> int:\n    return x[i]\n\ndef user(x: int) -> int:\n    return x\n\ndef f(n: int) -> int:\n    return g([1, 2], n) + 1\n\ndef k(d: Dict[str, int]) -> int:\n    return d['missing']\n",
    );
    let e = call_function(&func(&cu, "f"), vec![IValue::Int(5)]).unwrap_err();
    let text = e.to_string();
    let expected_f = "  File \"prog.py\", line 8, in f\n\ndef f(n: int) -> int:\n    return g([1, 2], n) + 1\n           ~ <--- HERE\n\ndef k(d: Dict[str, int]) -> int:\n";
    assert!(text.contains(expected_f), "{text}");
    assert!(
        text.ends_with("\nRuntimeError: list index out of range"),
        "{text}"
    );
    let d = IValue::dict(ts_core::Type::string(), ts_core::Type::int(), vec![]);
    let e = call_function(&func(&cu, "k"), vec![d]).unwrap_err();
    let text = e.to_string();
    assert!(
        text.ends_with("\nRuntimeError: KeyError: missing"),
        "{text}"
    );
}

#[test]
fn the_first_call_is_a_profiling_run_and_the_second_is_optimized() {
    let cu = compile(
        "def g(x: Tensor):\n    return x * 2 + 1\n\ndef f(x: Tensor):\n    return g(x) + g(x)\n",
    );
    let (f, g) = (func(&cu, "f"), func(&cu, "g"));
    let (ef, eg) = (executor_of(&f).unwrap(), executor_of(&g).unwrap());
    let run = || {
        let out = call_function(&f, vec![ones(3)]).unwrap();
        out.as_tensor().unwrap().to_vec::<f32>()
    };
    // The first call runs unoptimized, and so do both of its calls of `g` (the second of them
    // is not `g`'s second call: it is inside a profiling run).
    assert_eq!(run(), vec![6.0; 3]);
    assert_eq!((ef.plan_count(), eg.plan_count()), (0, 0));
    assert_eq!((ef.cache_stats(), eg.cache_stats()), ((0, 1), (1, 1)));
    let profiled = ts_runtime::last_executed_optimized_graph()
        .unwrap()
        .to_string();
    assert!(profiled.contains("aten::mul"), "{profiled}");
    // The second call makes the optimized plan, which inlines `g`: it is not called again.
    assert_eq!(run(), vec![6.0; 3]);
    assert_eq!((ef.plan_count(), eg.plan_count()), (1, 0));
    let optimized = ef.execution_plan(&[ones(3)]).unwrap();
    assert!(!optimized.profiling);
    assert!(
        !optimized.graph.to_string().contains("prim::CallFunction"),
        "{}",
        optimized.graph
    );
    assert_eq!(run(), vec![6.0; 3]);
    assert_eq!(ef.cache_stats(), (2, 2));
    assert_eq!(eg.cache_stats(), (1, 1));
}

#[test]
fn plans_are_cached_per_argument_spec() {
    let cu = compile("def f(x: Tensor, n: int):\n    return x + n\n");
    let f = func(&cu, "f");
    let t = |sizes: &[i64], dtype: DType| IValue::Tensor(Tensor::zeros(sizes, dtype).unwrap());
    let ex = executor_of(&f).unwrap();
    let args = |x: IValue| vec![x, IValue::Int(1)];
    // The first call makes a plan; the same spec (dtype, rank, requires_grad; not sizes, not
    // the int's value) reuses it.
    let p1 = ex.plan(&args(t(&[2], DType::Float32))).unwrap();
    let p2 = ex.plan(&args(t(&[7], DType::Float32))).unwrap();
    assert!(Arc::ptr_eq(&p1, &p2));
    assert_eq!((ex.cache_stats(), ex.plan_count()), ((1, 1), 1));
    call_function(&f, vec![t(&[5], DType::Float32), IValue::Int(9)]).unwrap();
    assert_eq!((ex.cache_stats(), ex.plan_count()), ((2, 1), 1));
    // A different dtype, rank or requires_grad each makes a new plan.
    let p3 = ex.plan(&args(t(&[2], DType::Int64))).unwrap();
    assert!(!Arc::ptr_eq(&p1, &p3));
    ex.plan(&args(t(&[2, 2], DType::Float32))).unwrap();
    let g = Tensor::zeros(&[2], DType::Float32).unwrap();
    g.set_requires_grad(true);
    ex.plan(&args(IValue::Tensor(g.clone()))).unwrap();
    assert_eq!((ex.cache_stats(), ex.plan_count()), ((2, 4), 4));
    // ...and each of those is reused afterwards.
    ex.plan(&args(IValue::Tensor(g))).unwrap();
    ex.plan(&args(t(&[3, 1], DType::Float32))).unwrap();
    assert_eq!((ex.cache_stats(), ex.plan_count()), ((4, 4), 4));
    // The plan for a tensor that requires grad is typed so.
    let with_grad = Tensor::zeros(&[2], DType::Float32).unwrap();
    with_grad.set_requires_grad(true);
    let spec = ts_runtime::ArgumentSpec::of(&args(IValue::Tensor(with_grad)));
    let text = ex.specialized_graph(&spec).to_string();
    assert!(text.contains("requires_grad=1"), "{text}");
}

// ---- Fused scalar instructions: the inline int/float/bool paths keep PyTorch's semantics ----

/// Calls `name` and returns its tuple result's elements.
fn call_tuple(cu: &CompilationUnit, name: &str, args: Vec<IValue>) -> Vec<IValue> {
    let out = call_function(&func(cu, name), args).unwrap_or_else(|e| panic!("{e}"));
    out.as_tuple().expect("a tuple").elements.clone()
}

const INT_OPS: &str = "from typing import Tuple\n\ndef ints(a: int, b: int) -> Tuple[int, int, int, int, int, bool, bool, bool, bool, bool, bool, int]:\n    return a + b, a - b, a * b, a // b, a % b, a == b, a != b, a < b, a <= b, a > b, a >= b, -a\n";

#[test]
fn fused_int_ops_floor_negatives_and_wrap_on_overflow() {
    let cu = compile(INT_OPS);
    let ints = |v: &[IValue]| -> Vec<i64> {
        v.iter()
            .map(|x| match x {
                IValue::Int(i) => *i,
                IValue::Bool(b) => *b as i64,
                other => panic!("{other:?}"),
            })
            .collect()
    };
    let r = call_tuple(&cu, "ints", vec![IValue::Int(-7), IValue::Int(2)]);
    assert_eq!(ints(&r), vec![-5, -9, -14, -4, 1, 0, 1, 1, 1, 0, 0, 7]);
    let r = call_tuple(&cu, "ints", vec![IValue::Int(7), IValue::Int(-2)]);
    assert_eq!(ints(&r), vec![5, 9, -14, -4, -1, 0, 1, 0, 0, 1, 1, -7]);
    let r = call_tuple(&cu, "ints", vec![IValue::Int(i64::MAX), IValue::Int(1)]);
    assert_eq!(r[0].as_int(), Some(i64::MIN));
    let r = call_tuple(&cu, "ints", vec![IValue::Int(i64::MIN), IValue::Int(-1)]);
    assert_eq!(r[2].as_int(), Some(i64::MIN));
    assert_eq!(r[3].as_int(), Some(i64::MIN));
    assert_eq!(r[4].as_int(), Some(0));
    assert_eq!(r[11].as_int(), Some(i64::MIN));
}

#[test]
fn fused_int_division_by_zero_raises_with_the_source_line() {
    let cu = compile(
        "def fdiv(a: int, b: int) -> int:\n    c = a + 1\n    return c // b\n\ndef fmod(a: int, b: int) -> int:\n    c = a + 1\n    return c % b\n",
    );
    let e = call_function(&func(&cu, "fdiv"), vec![IValue::Int(1), IValue::Int(0)]).unwrap_err();
    let text = e.to_string();
    assert_eq!(e.kind(), ErrorKind::ZeroDivisionError, "{text}");
    assert!(text.ends_with("division by 0"), "{text}");
    assert!(text.contains("line 3, in fdiv"), "{text}");
    assert!(text.contains("return c // b"), "{text}");
    let e = call_function(&func(&cu, "fmod"), vec![IValue::Int(1), IValue::Int(0)]).unwrap_err();
    let text = e.to_string();
    assert_eq!(e.kind(), ErrorKind::ZeroDivisionError, "{text}");
    assert!(
        text.ends_with("integer division or modulo by zero"),
        "{text}"
    );
    assert!(text.contains("line 7, in fmod"), "{text}");
}

#[test]
fn fused_float_ops_follow_python() {
    let cu = compile(
        "from typing import Tuple\n\ndef floats(a: float, b: float) -> Tuple[float, float, float, float, float, float, bool, bool]:\n    return a + b, a - b, a * b, a / b, a // b, a % b, a < b, a == b\n",
    );
    let r = call_tuple(
        &cu,
        "floats",
        vec![IValue::Double(-7.5), IValue::Double(2.0)],
    );
    let f: Vec<f64> = r[..6].iter().map(|v| v.as_double().unwrap()).collect();
    assert_eq!(f, vec![-5.5, -9.5, -15.0, -3.75, -4.0, 0.5]);
    assert_eq!(r[6].as_bool(), Some(true));
    assert_eq!(r[7].as_bool(), Some(false));
    // A zero divisor gives inf/nan as in PyTorch; NaN compares false.
    let r = call_tuple(
        &cu,
        "floats",
        vec![IValue::Double(1.0), IValue::Double(0.0)],
    );
    assert_eq!(r[3].as_double(), Some(f64::INFINITY));
    assert_eq!(r[4].as_double(), Some(f64::INFINITY));
    assert!(r[5].as_double().unwrap().is_nan());
    let r = call_tuple(
        &cu,
        "floats",
        vec![IValue::Double(f64::NAN), IValue::Double(1.0)],
    );
    assert_eq!(r[6].as_bool(), Some(false));
    assert_eq!(r[7].as_bool(), Some(false));
}

#[test]
fn mixed_int_and_float_operands_use_the_generic_operators() {
    let cu = compile(
        "from typing import Tuple\n\ndef mixed(a: int, x: float) -> Tuple[float, float, bool, float]:\n    return a + x, x * a, a < x, a / 2\n",
    );
    let r = call_tuple(&cu, "mixed", vec![IValue::Int(3), IValue::Double(0.5)]);
    assert_eq!(r[0].as_double(), Some(3.5));
    assert_eq!(r[1].as_double(), Some(1.5));
    assert_eq!(r[2].as_bool(), Some(false));
    assert_eq!(r[3].as_double(), Some(1.5));
}

#[test]
fn fused_loops_with_branches_compute_the_same_as_python() {
    let cu = compile(
        "def scalar_loop(n: int) -> int:\n    acc = 0\n    for i in range(n):\n        if i % 3 == 0:\n            acc += i\n        else:\n            acc -= 1\n    return acc\n\ndef collatz(n: int) -> int:\n    steps = 0\n    while n != 1:\n        if n % 2 == 0:\n            n = n // 2\n        else:\n            n = 3 * n + 1\n        steps += 1\n    return steps\n\ndef flag(n: int) -> int:\n    c = 0\n    b = False\n    for i in range(n):\n        b = not b\n        if b:\n            c += 1\n    return c\n",
    );
    let run = |name: &str, n: i64| {
        call_function(&func(&cu, name), vec![IValue::Int(n)])
            .unwrap()
            .as_int()
            .unwrap()
    };
    let expect: i64 = (0..1000).map(|i| if i % 3 == 0 { i } else { -1 }).sum();
    assert_eq!(run("scalar_loop", 1000), expect);
    assert_eq!(run("scalar_loop", 0), 0);
    assert_eq!(run("collatz", 27), 111);
    assert_eq!(run("flag", 7), 4);
}
