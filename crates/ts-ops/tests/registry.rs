//! The registry as a whole: registration, lookup by kind and name, and node matching.

use std::sync::Arc;

use ts_core::{IValue, Symbol, Type};
use ts_ir::parse_ir;
use ts_ops::{op, registry, OperatorKind, Registry};

#[test]
fn builtins_are_registered_under_pytorch_schemas() {
    let r = registry();
    assert!(r.len() > 300, "only {} operators", r.len());
    let add_int = r.find("aten::add.int").expect("aten::add.int");
    assert_eq!(
        add_int.schema.to_string(),
        "aten::add.int(int a, int b) -> int"
    );
    assert!(r.lookup(Symbol::new("aten::add")).len() >= 5);
    for s in ts_ops::implemented_schemas() {
        // The upgraders (old operator meanings for old archives) are PyTorch TorchScript
        // functions, not registered schemas; they have a namespace of their own.
        if s.starts_with("upgraders::") {
            continue;
        }
        assert!(
            ts_ops::schema_table::schema_line(&s[..s.find('(').unwrap()]).is_some(),
            "{s} is not a PyTorch schema"
        );
    }
}

#[test]
fn matches_nodes_by_input_types() {
    let g = parse_ir(
        "graph(%a : int, %b : float, %l : int[], %s : str):\n  %c : float = aten::add(%a, %b)\n  %d : int = aten::add(%a, %a)\n  %e : int = aten::len(%l)\n  %f : int = aten::len(%s)\n  %g : int = aten::__getitem__(%l, %a)\n  return (%c)\n",
    )
    .unwrap();
    let nodes = g.block_nodes(g.block());
    let r = registry();
    let names: Vec<String> = nodes
        .iter()
        .map(|&n| r.match_node(&g, n).expect("matched").full_name())
        .collect();
    assert_eq!(
        names,
        vec![
            "aten::add.int_float",
            "aten::add.int",
            "aten::len.t",
            "aten::len.str",
            "aten::__getitem__.t"
        ]
    );
}

#[test]
fn open_registration_and_replacement() {
    let r = Registry::new();
    r.register(
        "my_ns::double(int x) -> int",
        op(|s| {
            let v = s.pop().and_then(|v| v.as_int()).unwrap_or(0);
            s.push(IValue::Int(v * 2));
            Ok(())
        }),
    )
    .unwrap();
    let o = r.find("my_ns::double").unwrap();
    let OperatorKind::Op(f) = &o.kind else {
        panic!()
    };
    let mut stack = vec![IValue::Int(21)];
    f(&mut stack).unwrap();
    assert_eq!(stack[0].as_int(), Some(42));
    // Registering the same name again replaces it.
    r.register("my_ns::double(int x) -> int", Arc::new(|_s| Ok(())))
        .unwrap();
    assert_eq!(r.lookup(Symbol::new("my_ns::double")).len(), 1);
    assert!(r.register("not a schema", Arc::new(|_s| Ok(()))).is_err());
    assert!(r
        .register_pt("aten::nonexistent.thing", Arc::new(|_s| Ok(())))
        .is_err());
    let _ = Type::int();
}

#[test]
fn list_and_dict_semantics() {
    let r = registry();
    let run = |name: &str, mut stack: Vec<IValue>| -> Result<Vec<IValue>, ts_tensor::Error> {
        let o = r.find(name).unwrap_or_else(|| panic!("{name}"));
        let OperatorKind::Op(f) = &o.kind else {
            panic!()
        };
        f(&mut stack)?;
        Ok(stack)
    };
    let l = IValue::int_list([3, 1, 2]);
    run("aten::append.t", vec![l.clone(), IValue::Int(0)]).unwrap();
    assert_eq!(l.as_int_list().unwrap(), vec![3, 1, 2, 0]);
    run("aten::sort.int", vec![l.clone(), IValue::Bool(false)]).unwrap();
    assert_eq!(l.as_int_list().unwrap(), vec![0, 1, 2, 3]);
    let v = run("aten::__getitem__.t", vec![l.clone(), IValue::Int(-1)]).unwrap();
    assert_eq!(v[0].as_int(), Some(3));
    let e = run("aten::__getitem__.t", vec![l.clone(), IValue::Int(9)]).unwrap_err();
    assert_eq!(e.message, "list index out of range");
    let e = run("aten::pop.t", vec![IValue::int_list([]), IValue::Int(-1)]).unwrap_err();
    assert_eq!(e.message, "pop from empty list");
    let d = IValue::dict(
        Type::string(),
        Type::int(),
        vec![(IValue::str("a"), IValue::Int(1))],
    );
    let e = run(
        "aten::__getitem__.Dict_str",
        vec![d.clone(), IValue::str("dne")],
    )
    .unwrap_err();
    assert_eq!(e.message, "dne");
    assert_eq!(e.kind, ts_tensor::ErrorKind::KeyError);
    let v = run(
        "aten::get.default_str",
        vec![d.clone(), IValue::str("z"), IValue::Int(7)],
    )
    .unwrap();
    assert_eq!(v[0].as_int(), Some(7));
    let v = run("aten::items.str", vec![d]).unwrap();
    assert_eq!(v[0].to_display_string(), "[(a, 1)]");
    let v = run(
        "aten::slice.t",
        vec![
            IValue::int_list([0, 1, 2, 3, 4]),
            IValue::Int(1),
            IValue::None,
            IValue::Int(2),
        ],
    )
    .unwrap();
    assert_eq!(v[0].as_int_list().unwrap(), vec![1, 3]);
}

#[test]
fn every_tensor_binding_names_a_real_pytorch_schema() {
    let r = ts_ops::registry();
    assert!(r.len() > 500, "only {} operators registered", r.len());
    assert_eq!(
        ts_ops::tensor_ops::registration_errors(),
        Vec::<String>::new()
    );
    // Derived variants exist for kernels without a dedicated in-place/out binding.
    assert!(r.find("aten::atan2_").is_some());
    assert!(r.find("aten::add.out").is_some());
}

/// An operation pushing `v` (tells overloads apart in the tests below).
fn pushes(v: i64) -> ts_ops::Operation {
    op(move |s| {
        s.push(IValue::Int(v));
        Ok(())
    })
}

fn run_op(o: &ts_ops::Operator) -> i64 {
    let OperatorKind::Op(f) = &o.kind else {
        panic!("not a plain operation")
    };
    let mut stack = vec![];
    f(&mut stack).unwrap();
    stack[0].as_int().unwrap()
}

#[test]
fn definitions_are_built_on_first_lookup_in_definition_order() {
    let r = Registry::new();
    let built = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = built.clone();
    r.define(
        "my_ns::f.a(int x) -> int",
        Box::new(move |_, s| {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            assert_eq!(s.overload_name, "a");
            Some(OperatorKind::Op(pushes(1)))
        }),
    );
    // An eager registration of the same operator keeps its place after the definition.
    r.register("my_ns::f.b(float x) -> int", pushes(2)).unwrap();
    r.define_op("my_ns::f.c(str x) -> int", pushes(3));
    assert!(r.is_defined("my_ns::f.c"));
    assert!(!r.is_defined("my_ns::f.d"));
    let names: Vec<String> = r
        .lookup(Symbol::new("my_ns::f"))
        .iter()
        .map(|o| o.full_name())
        .collect();
    assert_eq!(names, vec!["my_ns::f.a", "my_ns::f.b", "my_ns::f.c"]);
    // Built once, however often it is looked up.
    assert!(r.find("my_ns::f.a").is_some());
    assert_eq!(built.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(r.len(), 3);
}

#[test]
fn a_definition_replaces_and_may_decline() {
    let r = Registry::new();
    r.define_op("my_ns::g(int x) -> int", pushes(1));
    r.define_op("my_ns::g(int x) -> int", pushes(2));
    let g = r.find("my_ns::g").expect("defined");
    assert_eq!(run_op(&g), 2);
    assert_eq!(r.lookup(Symbol::new("my_ns::g")).len(), 1);
    // A builder that finds it does not apply leaves the name undefined.
    r.define("my_ns::h(int x) -> int", Box::new(|_, _| None));
    assert!(r.is_defined("my_ns::h"));
    assert!(r.find("my_ns::h").is_none());
    assert!(!r.is_defined("my_ns::h"));
    // A builder may look up other operators (an out= form finds its functional one).
    r.define(
        "my_ns::k(int x) -> int",
        Box::new(|r, _| r.find("my_ns::g").map(|g| g.kind.clone())),
    );
    assert_eq!(run_op(&r.find("my_ns::k").expect("built from g")), 2);
    // A malformed line is reported, not a panic.
    r.define_op("my_ns::bad(int x -> int", pushes(0));
    assert!(r.find("my_ns::bad").is_none());
    assert_eq!(r.definition_errors().len(), 1);
}

#[test]
fn concurrent_first_lookups_see_every_overload() {
    let r = Arc::new(Registry::new());
    const LINES: [&str; 3] = [
        "my_ns::m.a(int x) -> int",
        "my_ns::m.b(float x) -> int",
        "my_ns::m.c(str x) -> int",
    ];
    for line in LINES {
        r.define(
            line,
            Box::new(|_, _| {
                // Slow builds widen the window in which another thread could see a partial list.
                std::thread::sleep(std::time::Duration::from_millis(5));
                Some(OperatorKind::Op(pushes(0)))
            }),
        );
    }
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let r = r.clone();
            std::thread::spawn(move || r.lookup(Symbol::new("my_ns::m")).len())
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap(), 3);
    }
}

#[test]
fn a_fallback_yields_to_a_later_definition() {
    let r = Registry::new();
    r.define_fallback("my_ns::p_(int x) -> int", Box::new(|_, _| None));
    // Registration code binding a name "only when nothing else does" still binds it.
    assert!(!r.is_defined("my_ns::p_"));
    r.define_op("my_ns::p_(int x) -> int", pushes(7));
    assert!(r.is_defined("my_ns::p_"));
    assert_eq!(run_op(&r.find("my_ns::p_").expect("defined")), 7);
    // A fallback alone is still found when it builds.
    r.define_fallback(
        "my_ns::q_(int x) -> int",
        Box::new(|_, _| Some(OperatorKind::Op(pushes(8)))),
    );
    assert_eq!(run_op(&r.find("my_ns::q_").expect("built")), 8);
}
