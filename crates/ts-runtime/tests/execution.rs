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
    assert!(text.ends_with("x must not be positive"), "{text}");
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
