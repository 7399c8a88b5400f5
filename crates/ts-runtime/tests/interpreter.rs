//! The interpreter end to end on graphs: control flow, calls, fork/wait, last-use release,
//! exceptions, and the executor's plan cache.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ts_core::{attr, prim, FunctionSchema, IValue, Source, SourceRange, Type};
use ts_ir::{parse_ir, Function, Graph};
use ts_ops::{op, registry};
use ts_runtime::{call_function, executor_of, run_graph, Code, Instr};
use ts_tensor::{DType, ErrorKind, Tensor};

#[test]
fn loops_and_ifs() {
    // sum of i for i in range(n) if i is even, else subtract
    let g = parse_ir(
        "graph(%n : int):\n  %t : bool = prim::Constant[value=1]()\n  %zero : int = prim::Constant[value=0]()\n  %two : int = prim::Constant[value=2]()\n  %r : int = prim::Loop(%n, %t, %zero)\n    block0(%i : int, %acc : int):\n      %m : int = aten::remainder(%i, %two)\n      %e : bool = aten::eq(%m, %zero)\n      %next : int = prim::If(%e)\n        block0():\n          %a : int = aten::add(%acc, %i)\n          -> (%a)\n        block1():\n          %b : int = aten::sub(%acc, %i)\n          -> (%b)\n      -> (%t, %next)\n  return (%r)\n",
    )
    .unwrap();
    let out = run_graph(&g, vec![IValue::Int(10)]).unwrap();
    // 0-1+2-3+4-5+6-7+8-9 = -5
    assert_eq!(out[0].as_int(), Some(-5));
    let out = run_graph(&g, vec![IValue::Int(0)]).unwrap();
    assert_eq!(out[0].as_int(), Some(0));
}

#[test]
fn while_loop_with_condition() {
    let g = parse_ir(
        "graph(%x : int):\n  %max : int = prim::Constant[value=9223372036854775807]()\n  %ten : int = prim::Constant[value=100]()\n  %two : int = prim::Constant[value=2]()\n  %c0 : bool = aten::lt(%x, %ten)\n  %r : int = prim::Loop(%max, %c0, %x)\n    block0(%i : int, %v : int):\n      %v2 : int = aten::mul(%v, %two)\n      %c : bool = aten::lt(%v2, %ten)\n      -> (%c, %v2)\n  return (%r)\n",
    )
    .unwrap();
    assert_eq!(
        run_graph(&g, vec![IValue::Int(3)]).unwrap()[0].as_int(),
        Some(192)
    );
    assert_eq!(
        run_graph(&g, vec![IValue::Int(500)]).unwrap()[0].as_int(),
        Some(500)
    );
}

static OBSERVED: AtomicUsize = AtomicUsize::new(0);

#[test]
fn values_are_released_at_their_last_use() {
    registry()
        .register(
            "test_rt::observe(Tensor x) -> Tensor",
            op(|s| {
                let t = s.last().and_then(|v| v.as_tensor()).cloned().unwrap();
                // The clone above adds one handle; subtract it.
                OBSERVED.store(t.use_count() - 1, Ordering::SeqCst);
                Ok(())
            }),
        )
        .unwrap();
    let x = Tensor::from_vec(vec![1.0f32], &[1]).unwrap();
    // Last use: the caller's handle and the stack's (moved out of the register).
    let g = parse_ir("graph(%x : Tensor):\n  %y : Tensor = test_rt::observe(%x)\n  return (%y)\n")
        .unwrap();
    run_graph(&g, vec![IValue::Tensor(x.clone())]).unwrap();
    assert_eq!(OBSERVED.load(Ordering::SeqCst), 2);
    // Not the last use: the register keeps a handle too.
    let g = parse_ir("graph(%x : Tensor):\n  %y : Tensor = test_rt::observe(%x)\n  %z : Tensor = test_rt::observe(%x)\n  return (%z)\n").unwrap();
    run_graph(&g, vec![IValue::Tensor(x.clone())]).unwrap();
    assert_eq!(OBSERVED.load(Ordering::SeqCst), 2);
    let code = Code::new(&g, "g").unwrap();
    let text = code.to_string();
    assert!(
        text.contains("LOAD(0)") && text.contains("MOVE(0)"),
        "{text}"
    );
    // A value last used inside a branch is dropped right after the If.
    let g = parse_ir("graph(%c : bool, %x : Tensor):\n  %r : Tensor = prim::If(%c)\n    block0():\n      %y : Tensor = test_rt::observe(%x)\n      -> (%y)\n    block1():\n      -> (%x)\n  return (%r)\n").unwrap();
    let text = Code::new(&g, "g").unwrap().to_string();
    assert!(text.contains("DROPR(1)"), "{text}");
    assert_eq!(x.use_count(), 1);
}

fn function_constant(g: &mut Graph, f: &Arc<Function>) -> ts_ir::ValueId {
    let n = g.create(prim::Constant, &[], 0);
    g.set_attr(
        n,
        attr::name,
        ts_ir::AttributeValue::String(f.qualified_name().to_string()),
    );
    g.add_output(n, f.function_type());
    g.insert_node(n);
    g.node(n).output(0)
}

#[test]
fn calls_between_functions() {
    let callee = Function::new(
        "double",
        parse_ir("graph(%a : int):\n  %b : int = aten::add(%a, %a)\n  return (%b)\n").unwrap(),
        FunctionSchema::parse("double(int a) -> int").unwrap(),
    );
    let mut g = Graph::new();
    let x = g.add_graph_input(Type::int());
    let fv = function_constant(&mut g, &callee);
    let call = g.insert(prim::CallFunction, &[fv, x], 0);
    let y = g.add_output(call, Type::int());
    let call2 = g.insert(prim::CallFunction, &[fv, y], 0);
    let z = g.add_output(call2, Type::int());
    g.register_output(z);
    let caller = Function::new(
        "caller",
        g,
        FunctionSchema::parse("caller(int x) -> int").unwrap(),
    );
    assert_eq!(
        call_function(&caller, vec![IValue::Int(5)])
            .unwrap()
            .as_int(),
        Some(20)
    );
}

#[test]
fn fork_and_wait() {
    let g = parse_ir(
        "graph(%x : int):\n  %fut : Future[int] = prim::fork_0(%x)\n  %one : int = prim::Constant[value=1]()\n  %y : int = aten::add(%x, %one)\n  %r : int = aten::wait(%fut)\n  %s : int = aten::add(%r, %y)\n  return (%s)\nwith prim::fork_0 = graph(%a : int):\n  %b : int = aten::mul(%a, %a)\n  return (%b)\n",
    )
    .unwrap();
    for i in 0..20 {
        assert_eq!(
            run_graph(&g, vec![IValue::Int(i)]).unwrap()[0].as_int(),
            Some(i * i + i + 1)
        );
    }
    // Errors inside the forked task surface at the wait.
    let g = parse_ir(
        "graph(%x : int):\n  %fut : Future[int] = prim::fork_0(%x)\n  %r : int = aten::wait(%fut)\n  return (%r)\nwith prim::fork_0 = graph(%a : int):\n  %z : int = prim::Constant[value=0]()\n  %b : int = aten::floordiv(%a, %z)\n  return (%b)\n",
    )
    .unwrap();
    let e = run_graph(&g, vec![IValue::Int(1)]).unwrap_err();
    assert!(e.to_string().contains("division by 0"), "{e}");
}

#[test]
fn exceptions_carry_a_traceback() {
    let mut g = parse_ir("graph(%x : int):\n  %z : int = prim::Constant[value=0]()\n  %y : int = aten::floordiv(%x, %z)\n  return (%y)\n").unwrap();
    let src = Source::new("def f(x):\n    return x // 0\n", None, 1);
    let div = g.block_nodes(g.block())[1];
    g.set_source_range(div, Some(SourceRange::new(src, 21, 27)));
    let f = Function::new("f", g, FunctionSchema::parse("f(int x) -> int").unwrap());
    let e = call_function(&f, vec![IValue::Int(3)]).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("Traceback of TorchScript"), "{text}");
    assert!(text.contains("line 2, in f"), "{text}");
    assert!(text.contains("~~~~~~ <--- HERE"), "{text}");
    // PyTorch's interpreter reports an operator's failure as a RuntimeError, whatever class
    // the error has in eager mode (the kind keeps it, for the Python bindings).
    assert!(text.ends_with("\nRuntimeError: division by 0"), "{text}");
    assert_eq!(e.kind(), ErrorKind::ZeroDivisionError);
    let g = parse_ir("graph(%x : int):\n  %m : str = prim::Constant[value=\"3\"]()\n  %c : str = prim::Constant[value=\"builtins.ValueError\"]()\n   = prim::RaiseException(%m, %c)\n  return (%x)\n").unwrap();
    let e = run_graph(&g, vec![IValue::Int(1)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ValueError);
    assert_eq!(e.error.raised.as_deref(), Some("builtins.ValueError"));
}

#[test]
fn plan_cache_is_keyed_by_argument_spec() {
    let f = Function::new(
        "ident",
        parse_ir("graph(%x : Tensor):\n  return (%x)\n").unwrap(),
        FunctionSchema::parse("ident(Tensor x) -> Tensor").unwrap(),
    );
    let a = IValue::Tensor(Tensor::zeros(&[2], DType::Float32).unwrap());
    let b = IValue::Tensor(Tensor::zeros(&[3], DType::Float32).unwrap());
    let c = IValue::Tensor(Tensor::zeros(&[2, 2], DType::Float32).unwrap());
    let d = IValue::Tensor(Tensor::zeros(&[2], DType::Int64).unwrap());
    for v in [&a, &b, &c, &d, &a] {
        call_function(&f, vec![v.clone()]).unwrap();
    }
    // Same dtype and rank share a plan (sizes are not part of the spec): `a` makes a profiling
    // plan, `b` (the spec's second call) the optimized one, `c` and `d` profiling plans of
    // their own, and `a` again finds the optimized plan.
    assert_eq!(executor_of(&f).unwrap().cache_stats(), (1, 4));
    assert_eq!(executor_of(&f).unwrap().plan_count(), 1);
}

#[test]
fn unknown_operators_are_reported() {
    let g = parse_ir("graph(%x : int):\n  %y : int = nowhere::thing(%x)\n  return (%y)\n").unwrap();
    let e = run_graph(&g, vec![IValue::Int(1)]).unwrap_err();
    assert!(
        e.to_string().contains("Unknown builtin op: nowhere::thing"),
        "{e}"
    );
    let e = run_graph(
        &parse_ir("graph(%x : int):\n  return (%x)\n").unwrap(),
        vec![],
    )
    .unwrap_err();
    assert!(e.to_string().contains("expected 1 arguments"), "{e}");
}

// ---- Peephole fusion: graph in, code out ----

const SCALAR_LOOP_IR: &str = "graph(%n : int):\n  %t : bool = prim::Constant[value=1]()\n  %zero : int = prim::Constant[value=0]()\n  %one : int = prim::Constant[value=1]()\n  %three : int = prim::Constant[value=3]()\n  %r : int = prim::Loop(%n, %t, %zero)\n    block0(%i : int, %acc : int):\n      %m : int = aten::remainder(%i, %three)\n      %e : bool = aten::eq(%m, %zero)\n      %next : int = prim::If(%e)\n        block0():\n          %a : int = aten::add(%acc, %i)\n          -> (%a)\n        block1():\n          %b : int = aten::sub(%acc, %one)\n          -> (%b)\n      -> (%t, %next)\n  return (%r)\n";

/// The instructions between a loop's guard and its back edge.
fn loop_body(code: &Code) -> Vec<String> {
    let text = code.to_string();
    let lines: Vec<String> = text.lines().skip(1).map(|l| l[5..].to_string()).collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("LOOPGUARD"))
        .unwrap();
    let end = lines
        .iter()
        .position(|l| l.starts_with("LOOPNEXT"))
        .unwrap();
    lines[start + 1..end].to_vec()
}

#[test]
fn scalar_ops_fuse_into_register_instructions() {
    let g = parse_ir(SCALAR_LOOP_IR).unwrap();
    let plain = Code::unoptimized(&g, "f").unwrap();
    let code = Code::new(&g, "f").unwrap();
    let body = loop_body(&code);
    assert!(loop_body(&plain).len() > 3 * body.len(), "{code}");
    // Remainder of the loop counter (read in place, not copied) into a register, a
    // compare-and-jump, and the add of the taken branch straight into the carried register,
    // which closes the body with the back edge itself instead of a jump to it.
    let text = body.join("\n");
    assert_eq!(body.len(), 3, "{code}");
    for want in [
        "FASTOP aten::remainder.int(LOAD(",
        "FASTOP aten::eq.int(MOVE(",
        "-> JF(",
        "FASTOP aten::add.int(",
    ] {
        assert!(text.contains(want), "missing {want}:\n{code}");
    }
    let all = code.to_string();
    assert_eq!(all.matches("LOOPNEXT").count(), 2, "{code}");
    assert!(!all.contains("JMP"), "{code}");
    // Both branches write the carried accumulator's own register.
    let acc_out = |op: &str| {
        let line = all.lines().find(|l| l.contains(op)).unwrap();
        line.rsplit("STORE(").next().unwrap().to_string()
    };
    assert_eq!(acc_out("aten::add.int"), acc_out("aten::sub.int"), "{code}");
    for n in [0, 1, 10, 11] {
        let want: i64 = (0..n).map(|i| if i % 3 == 0 { i } else { -1 }).sum();
        assert_eq!(
            run_graph(&g, vec![IValue::Int(n)]).unwrap()[0].as_int(),
            Some(want)
        );
    }
}

/// `acc += i + 2` in a loop: the body's constant `2`, and the constant the body returns as
/// its carried value on one branch.
const LOOP_CONSTANTS_IR: &str = "graph(%n : int):\n  %t : bool = prim::Constant[value=1]()\n  %zero : int = prim::Constant[value=0]()\n  %r : int = prim::Loop(%n, %t, %zero)\n    block0(%i : int, %acc : int):\n      %two : int = prim::Constant[value=2]()\n      %j : int = aten::add(%i, %two)\n      %a : int = aten::add(%acc, %j)\n      %big : bool = aten::gt(%a, %two)\n      %seven : int = prim::Constant[value=7]()\n      %next : int = prim::If(%big)\n        block0():\n          -> (%a)\n        block1():\n          -> (%seven)\n      -> (%t, %next)\n  return (%r)\n";

#[test]
fn loop_body_constants_are_set_once_before_the_loop() {
    let g = parse_ir(LOOP_CONSTANTS_IR).unwrap();
    let code = Code::new(&g, "f").unwrap();
    let body = loop_body(&code).join("\n");
    // `2` is read from a register set before the loop; `7`, returned by a block, stays.
    assert!(!body.contains(", 2)"), "{code}");
    assert!(body.contains(", 7)"), "{code}");
    let text = code.to_string();
    let guard = text.find("LOOPGUARD").unwrap();
    assert!(
        text[..guard].contains("SETINT") && text[..guard].contains(", 2)"),
        "{code}"
    );
    // Same results as the reference (and as the unfused code) for several trip counts.
    let reference = |n: i64| {
        let mut acc = 0i64;
        for i in 0..n {
            let a = acc + i + 2;
            acc = if a > 2 { a } else { 7 };
        }
        acc
    };
    for n in [0i64, 1, 2, 5, 17] {
        let out = run_graph(&g, vec![IValue::Int(n)]).unwrap();
        assert_eq!(out[0].as_int(), Some(reference(n)), "n = {n}");
    }
}

#[test]
fn a_carried_value_keeps_its_own_register_while_its_old_value_is_read() {
    // `%a` is made while `%acc` is still read by the next node, so `%a` may not take
    // `%acc`'s register; `%s2`, made after the last read of `%s`, may take `%s`'s.
    let g = parse_ir(
        "graph(%n : int):\n  %t : bool = prim::Constant[value=1]()\n  %zero : int = prim::Constant[value=0]()\n  %one : int = prim::Constant[value=1]()\n  %r1 : int, %r2 : int = prim::Loop(%n, %t, %one, %zero)\n    block0(%i : int, %acc : int, %s : int):\n      %a : int = aten::add(%acc, %one)\n      %s2 : int = aten::add(%s, %acc)\n      -> (%t, %a, %s2)\n  %d : int = aten::mul(%r1, %r2)\n  return (%d)\n",
    )
    .unwrap();
    for n in [0i64, 1, 2, 5] {
        // acc runs 1, 2, ..., n + 1; s sums the acc values before each step.
        let s: i64 = (1..=n).sum();
        let want = (n + 1) * s;
        assert_eq!(
            run_graph(&g, vec![IValue::Int(n)]).unwrap()[0].as_int(),
            Some(want),
            "n = {n}"
        );
    }
}

#[test]
fn the_loop_counter_read_in_place_survives_being_carried_out() {
    // The body carries its iteration number out (a read of the pinned counter register,
    // never a move) and also compares it, so both the loop and the result see it intact.
    let g = parse_ir(
        "graph(%n : int):\n  %t : bool = prim::Constant[value=1]()\n  %zero : int = prim::Constant[value=0]()\n  %last : int = prim::Loop(%n, %t, %zero)\n    block0(%i : int, %prev : int):\n      %c : bool = aten::lt(%i, %n)\n      -> (%c, %i)\n  return (%last)\n",
    )
    .unwrap();
    for n in [0i64, 1, 4] {
        let want = if n == 0 { 0 } else { n - 1 };
        assert_eq!(
            run_graph(&g, vec![IValue::Int(n)]).unwrap()[0].as_int(),
            Some(want)
        );
    }
}

#[test]
fn unfused_ops_pass_values_on_the_stack() {
    // `STORE(r) MOVE(r)` of a value used once disappears: the result stays on the stack.
    let g = parse_ir(
        "graph(%x : Tensor):\n  %two : int = prim::Constant[value=2]()\n  %y : Tensor = aten::mul(%x, %two)\n  %z : Tensor = aten::neg(%y)\n  return (%z)\n",
    )
    .unwrap();
    let code = Code::new(&g, "f").unwrap();
    let ops: Vec<&Instr> = code.instructions.iter().collect();
    let mul = ops
        .iter()
        .position(|i| matches!(i, Instr::Op(_)))
        .unwrap_or_else(|| panic!("{code}"));
    assert!(matches!(ops[mul + 1], Instr::Op(_)), "{code}");
    let x = Tensor::from_vec(vec![1.5f32], &[1]).unwrap();
    let out = run_graph(&g, vec![IValue::Tensor(x)]).unwrap();
    assert_eq!(out[0].as_tensor().unwrap().to_vec::<f32>(), vec![-3.0]);
}

#[test]
fn fused_ops_fall_back_on_unexpected_operand_tags() {
    // `aten::add.int` / `aten::lt.int` given a bool operand: the inline path declines and the
    // generic operator (which reads bools as ints) runs, in a plain op and in a compare+jump.
    let g = parse_ir(
        "graph(%a : int, %b : int):\n  %s : int = aten::add(%a, %b)\n  %c : bool = aten::lt(%a, %b)\n  %r : int = prim::If(%c)\n    block0():\n      -> (%s)\n    block1():\n      %n : int = aten::neg(%s)\n      -> (%n)\n  return (%r)\n",
    )
    .unwrap();
    let code = Code::new(&g, "f").unwrap();
    let text = code.to_string();
    assert!(text.contains("FASTOP aten::add.int("), "{text}");
    assert!(text.contains("FASTOP aten::lt.int("), "{text}");
    assert!(text.contains("FASTOP aten::neg.int("), "{text}");
    let out = run_graph(&g, vec![IValue::Bool(true), IValue::Int(2)]).unwrap();
    assert_eq!(out[0].as_int(), Some(3));
    let out = run_graph(&g, vec![IValue::Int(5), IValue::Bool(true)]).unwrap();
    assert_eq!(out[0].as_int(), Some(-6));
}

#[test]
fn parallel_assignments_become_register_copies_only_when_safe() {
    // A loop swapping its two carried values: the back edge's stores read each other's
    // registers, so they must stay a stack-mediated parallel assignment.
    let g = parse_ir(
        "graph(%n : int, %a0 : int, %b0 : int):\n  %t : bool = prim::Constant[value=1]()\n  %r1 : int, %r2 : int = prim::Loop(%n, %t, %a0, %b0)\n    block0(%i : int, %a : int, %b : int):\n      -> (%t, %b, %a)\n  %d : int = aten::sub(%r1, %r2)\n  return (%d)\n",
    )
    .unwrap();
    for n in 0..4 {
        let out = run_graph(&g, vec![IValue::Int(n), IValue::Int(10), IValue::Int(3)]).unwrap();
        let want = if n % 2 == 0 { 7 } else { -7 };
        assert_eq!(out[0].as_int(), Some(want), "n = {n}");
    }
}

#[test]
fn errors_in_fused_ops_point_at_the_op() {
    let g = parse_ir(
        "graph(%a : int, %b : int):\n  %one : int = prim::Constant[value=1]()\n  %c : int = aten::add(%a, %one)\n  %d : int = aten::floordiv(%c, %b)\n  return (%d)\n",
    )
    .unwrap();
    let e = run_graph(&g, vec![IValue::Int(1), IValue::Int(0)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ZeroDivisionError);
    assert!(e.to_string().ends_with("division by 0"), "{e}");
}

#[test]
fn fused_results_of_every_plain_kind_land_in_their_registers() {
    // Int, float and bool results written by fused instructions (stored field by field) are
    // read back by later fused instructions, overwriting the previous iteration's values;
    // int arithmetic wraps on overflow as PyTorch's does.
    let g = parse_ir(
        "graph(%n : int, %x : float, %big : int):\n  %t : bool = prim::Constant[value=1]()\n  %one : int = prim::Constant[value=1]()\n  %half : float = prim::Constant[value=0.5]()\n  %f0 : bool = prim::Constant[value=0]()\n  %r : float, %k : int, %b : bool, %w : int = prim::Loop(%n, %t, %x, %one, %f0, %big)\n    block0(%i : int, %acc : float, %m : int, %flag : bool, %v : int):\n      %a2 : float = aten::mul(%acc, %half)\n      %m2 : int = aten::mul(%m, %one)\n      %m3 : int = aten::add(%m2, %i)\n      %g : bool = aten::gt(%a2, %half)\n      %nf : bool = aten::ne(%g, %flag)\n      %v2 : int = aten::add(%v, %one)\n      -> (%t, %a2, %m3, %nf, %v2)\n  %s : float = aten::add(%r, %r)\n  return (%s, %k, %b, %w)\n",
    )
    .unwrap();
    let out = run_graph(
        &g,
        vec![
            IValue::Int(4),
            IValue::Double(8.0),
            IValue::Int(i64::MAX - 1),
        ],
    )
    .unwrap();
    // acc: 8 -> 4 -> 2 -> 1 -> 0.5; s = 1.0
    assert_eq!(out[0].as_double(), Some(1.0));
    // m: 1 + 0 + 1 + 2 + 3
    assert_eq!(out[1].as_int(), Some(7));
    // g per iteration: 4>.5, 2>.5, 1>.5, .5>.5 = T,T,T,F; flag: F^T=T, T^T=F, F^T=T, T^F=T
    assert_eq!(out[2].as_bool(), Some(true));
    // MAX-1 + 4 wraps around
    assert_eq!(out[3].as_int(), Some((i64::MAX - 1).wrapping_add(4)));
}

#[test]
fn fused_int_division_by_zero_raises_like_the_generic_operator() {
    let g = parse_ir(
        "graph(%a : int, %b : int):\n  %q : int = aten::floordiv(%a, %b)\n  %r : int = aten::remainder(%a, %b)\n  %s : int = aten::add(%q, %r)\n  return (%s)\n",
    )
    .unwrap();
    let code = Code::new(&g, "f").unwrap();
    assert!(
        code.to_string().contains("FASTOP aten::floordiv.int("),
        "{code}"
    );
    assert_eq!(
        run_graph(&g, vec![IValue::Int(-7), IValue::Int(2)]).unwrap()[0].as_int(),
        Some(-4 + 1)
    );
    let e = run_graph(&g, vec![IValue::Int(7), IValue::Int(0)]).unwrap_err();
    assert!(e.to_string().contains("ZeroDivisionError"), "{e}");
}

#[test]
fn int_constants_stored_in_a_loop_become_set_int() {
    // An unrolled loop's index offsets: `LOADC; STORE` of an int becomes one `SETINT`, set
    // once before the loop (see `loop_body_constants_are_set_once_before_the_loop`), and the
    // fused adds read its register.
    let g = parse_ir(
        "graph(%n : int):\n  %t : bool = prim::Constant[value=1]()\n  %zero : int = prim::Constant[value=0]()\n  %r : int = prim::Loop(%n, %t, %zero)\n    block0(%i : int, %acc : int):\n      %c : int = prim::Constant[value=3]()\n      %a : int = aten::add(%acc, %c)\n      %b : int = aten::sub(%a, %c)\n      %d : int = aten::add(%b, %c)\n      -> (%t, %d)\n  return (%r)\n",
    )
    .unwrap();
    let code = Code::new(&g, "f").unwrap();
    let body = loop_body(&code).join("\n");
    assert!(code.to_string().contains("SETINT(1, 3)"), "{code}");
    assert!(
        !body.contains("SETINT(") && !body.contains("LOADC"),
        "{code}"
    );
    for n in [0, 1, 5] {
        assert_eq!(
            run_graph(&g, vec![IValue::Int(n)]).unwrap()[0].as_int(),
            Some(3 * n)
        );
    }
}

#[test]
fn plain_values_are_not_dropped_early() {
    // Ints, floats and bools own nothing, so a branch's last use of one emits no `DROPR`;
    // a tensor's still does (`values_are_released_at_their_last_use`).
    let g = parse_ir(SCALAR_LOOP_IR).unwrap();
    let code = Code::new(&g, "f").unwrap();
    assert!(
        !loop_body(&code).iter().any(|l| l.starts_with("DROPR")),
        "{code}"
    );
}
