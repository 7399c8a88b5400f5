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
