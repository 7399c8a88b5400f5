//! The graph mutation API, with the verifier run after every mutation.

use ts_core::{aten, prim, IValue, Type};
use ts_ir::{parse_ir, verify, FileCheck, Graph, GraphError};

fn ok(g: &Graph) {
    verify(g).unwrap_or_else(|e| panic!("{e}\n{g}"));
}

#[test]
fn build_print_and_rewire() {
    let mut g = Graph::new();
    let x = g.add_graph_input(Type::tensor());
    g.set_debug_name(x, "x").unwrap();
    let one = g.insert_constant(&IValue::Int(1));
    let add = g.insert(aten::add, &[x, x, one], 1);
    let y = g.node(add).output(0);
    g.register_output(y);
    ok(&g);
    FileCheck::new()
        .check("graph(%x : Tensor)")
        .check_next("%1 : int = prim::Constant[value=1]()")
        .check_next("%2 : Tensor = aten::add(%x, %x, %1)")
        .check_next("return (%2)")
        .run_graph(&g)
        .unwrap();

    // Insert a mul before the add and make the add use it.
    let mul = g.create(aten::mul, &[x, x], 1);
    g.insert_before(mul, add);
    let m = g.node(mul).output(0);
    g.replace_input(add, 0, m);
    ok(&g);
    assert_eq!(g.value(x).uses().len(), 3);
    assert_eq!(g.value(m).uses().len(), 1);
    FileCheck::new()
        .check("aten::mul")
        .check_next("aten::add(%3, %x, %1)")
        .run_graph(&g)
        .unwrap();

    // Destroying a used node is refused; after rewiring it works.
    assert!(matches!(
        g.destroy_node(mul),
        Err(GraphError::HasUses { .. })
    ));
    g.replace_all_uses_with(m, x);
    ok(&g);
    g.destroy_node(mul).unwrap();
    ok(&g);
    assert_eq!(g.value(x).uses().len(), 2);
    FileCheck::new()
        .check_not("aten::mul")
        .check("aten::add(%x, %x, %1)")
        .run_graph(&g)
        .unwrap();
}

#[test]
fn move_and_input_editing() {
    let mut g = parse_ir(
        "graph(%a : int, %b : int):\n  %c : int = aten::add(%a, %b)\n  %d : int = aten::mul(%a, %b)\n  return (%c, %d)\n",
    )
    .unwrap();
    ok(&g);
    let nodes = g.block_nodes(g.block());
    let (add, mul) = (nodes[0], nodes[1]);
    g.move_before(mul, add);
    ok(&g);
    assert_eq!(g.block_nodes(g.block()), vec![mul, add]);
    g.move_after(mul, add);
    ok(&g);
    assert_eq!(g.block_nodes(g.block()), vec![add, mul]);

    let a = g.inputs()[0];
    let b = g.inputs()[1];
    g.insert_input(add, 0, b);
    ok(&g);
    assert_eq!(g.node(add).inputs(), &[b, a, b]);
    g.remove_input(add, 0);
    ok(&g);
    assert_eq!(g.node(add).inputs(), &[a, b]);
    // Outputs in use cannot be erased; unused ones can.
    let extra = g.add_output(add, Type::int());
    assert!(g.erase_output(add, 0).is_err());
    g.erase_output(add, 1).unwrap();
    assert!(!g.value(extra).has_uses());
    ok(&g);
    // Graph outputs can be erased and re-added.
    g.erase_block_output(g.block(), 1);
    ok(&g);
    assert_eq!(g.outputs().len(), 1);
    g.destroy_node(mul).unwrap();
    ok(&g);
}

#[test]
fn unique_names_follow_pytorch() {
    let mut g = Graph::new();
    let a = g.add_graph_input(Type::int());
    let b = g.add_graph_input(Type::int());
    let c = g.add_graph_input(Type::int());
    g.set_debug_name(a, "x").unwrap();
    g.set_debug_name(b, "x").unwrap();
    // The previous owner is renamed.
    assert_eq!(g.display_name(a), "x.1");
    assert_eq!(g.display_name(b), "x");
    g.set_debug_name(c, "x").unwrap();
    // PyTorch 2.15 renames the previous owner to x.3 here (checked with torch._C.Graph).
    assert_eq!(g.display_name(b), "x.3");
    assert_eq!(g.display_name(c), "x");
    assert!(g.set_debug_name(c, "12").is_err());
    g.set_debug_name(c, "").unwrap();
    assert_eq!(g.display_name(c), g.value(c).unique().to_string());
}

#[test]
fn blocks_if_and_loop() {
    let mut g = Graph::new();
    let cond = g.add_graph_input(Type::bool());
    let x = g.add_graph_input(Type::int());
    let n = g.insert(prim::If, &[cond], 0);
    let out = g.add_output(n, Type::int());
    let then_b = g.add_block(n);
    let else_b = g.add_block(n);
    g.add_block_output(then_b, x);
    let z = g.with_insert_point(g.return_node(else_b), |g| {
        g.insert_constant(&IValue::Int(0))
    });
    g.add_block_output(else_b, z);
    g.register_output(out);
    ok(&g);
    FileCheck::new()
        .check("prim::If(%0)")
        .check_next("block0():")
        .check_next("-> (%1)")
        .check_next("block1():")
        .check_next("prim::Constant[value=0]")
        .run_graph(&g)
        .unwrap();
    // A value from inside a block is out of scope after it.
    let bad = g.insert(aten::neg, &[z], 1);
    assert!(verify(&g).is_err());
    g.destroy_node(bad).unwrap();
    ok(&g);
    // Wrong If arity is caught.
    g.erase_block_output(else_b, 0);
    assert!(verify(&g).is_err());
    g.add_block_output(else_b, z);
    ok(&g);
    // Erasing a block removes its nodes.
    g.erase_block(n, 1);
    assert!(verify(&g).is_err());
    assert_eq!(g.node(n).blocks().len(), 1);

    let mut l = parse_ir(
        "graph(%n : int):\n  %t : bool = prim::Constant[value=1]()\n  %z : int = prim::Constant[value=0]()\n  %r : int = prim::Loop(%n, %t, %z)\n    block0(%i : int, %acc : int):\n      %s : int = aten::add(%acc, %i)\n      -> (%t, %s)\n  return (%r)\n",
    )
    .unwrap();
    ok(&l);
    let loop_n = l.block_nodes(l.block())[2];
    let body = l.node(loop_n).blocks()[0];
    l.erase_block_output(body, 1);
    assert!(verify(&l).is_err());
}

#[test]
fn inline_a_graph() {
    let callee =
        parse_ir("graph(%a : Tensor):\n  %b : Tensor = aten::neg(%a)\n  return (%b)\n").unwrap();
    let mut g =
        parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  return (%y)\n").unwrap();
    let relu = g.block_nodes(g.block())[0];
    let y = g.node(relu).output(0);
    g.set_insert_point_at_end(g.block());
    let outs = g.insert_graph(&callee, &[y]).unwrap();
    g.erase_block_output(g.block(), 0);
    g.register_output(outs[0]);
    ok(&g);
    FileCheck::new()
        .check("aten::relu")
        .check_next("%b : Tensor = aten::neg(%y)")
        .check_next("return (%b)")
        .run_graph(&g)
        .unwrap();
    assert!(g.insert_graph(&callee, &[]).is_err());
    let copy = g.copy();
    assert_eq!(copy.to_string(), g.to_string());
}

#[test]
fn constants_round_trip() {
    let mut g = Graph::new();
    for v in [
        IValue::Int(3),
        IValue::Bool(true),
        IValue::Double(0.5),
        IValue::str("hi"),
        IValue::None,
        IValue::int_list([1, 2]),
        IValue::Device(ts_tensor::Device::Cpu),
        IValue::tuple(vec![IValue::Int(1), IValue::str("a")]),
    ] {
        let c = g.insert_constant(&v);
        let back = g.to_ivalue(c).unwrap();
        assert!(back.py_eq(&v), "{v} became {back}");
        assert_eq!(back.type_of(), v.type_of());
    }
    ok(&g);
    let text = g.to_string();
    assert!(
        text.contains("%1 : bool = prim::Constant[value=1]()"),
        "{text}"
    );
    assert!(
        text.contains("%3 : str = prim::Constant[value=\"hi\"]()"),
        "{text}"
    );
    assert!(text.contains("%4 : NoneType = prim::Constant()"), "{text}");
    assert!(
        text.contains("%6 : Device = prim::Constant[value=\"cpu\"]()"),
        "{text}"
    );
}

#[test]
fn malformed_ir_is_an_error_with_position() {
    for (text, line) in [
        (
            "graph(%x : Tensor):\n  %y : Tensor = aten::neg(%z)\n  return (%y)\n",
            2,
        ),
        (
            "graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x\n  return (%y)\n",
            3,
        ),
        ("graph(%x : Blah):\n  return (%x)\n", 1),
        (
            "graph(%x : Tensor):\n  %y : Tensor = neg(%x)\n  return (%y)\n",
            2,
        ),
        ("graph(%x : Tensor):\n  return (%x)\n garbage", 3),
        ("graph(", 1),
        ("", 1),
    ] {
        let e = parse_ir(text).unwrap_err();
        assert_eq!(e.line, line, "{text:?}: {e}");
    }
}

#[test]
fn fixed_points_last_until_the_next_mutation() {
    let mut g = parse_ir(
        "graph(%x : Tensor):\n  %one : int = prim::Constant[value=1]()\n  %y : Tensor = aten::add(%x, %x, %one)\n  return (%y)\n",
    )
    .unwrap();
    assert!(!g.is_fixed_point("P"));
    g.mark_fixed_point("P");
    assert!(g.is_fixed_point("P") && !g.is_fixed_point("Q"));
    // Reads, clones and moving the insertion point keep it.
    let _ = g.to_string();
    assert!(g.clone().is_fixed_point("P"));
    let ret = g.return_node(g.block());
    g.set_insert_point_before(ret);
    assert!(g.is_fixed_point("P"));
    // Any mutation ends it, also one that puts the same value back.
    let y = g.outputs()[0];
    let before = g.revision();
    let ty = g.value(y).ty().clone();
    g.set_type(y, ty);
    assert!(g.revision() > before && !g.is_fixed_point("P"));
    g.mark_fixed_point("P");
    g.insert_constant(&IValue::Int(2));
    assert!(!g.is_fixed_point("P"));
}
