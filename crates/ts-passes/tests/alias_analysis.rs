//! AliasDb unit tests in the spirit of PyTorch's `test_alias_analysis.cpp`: a graph as IR text,
//! then assertions about which values may alias, which nodes write what, and which node motions
//! are valid. One test (at least) per annotation form: fresh outputs, views `Tensor(a)`, writes
//! `Tensor(a!)`, `t(a -> *)` (into a wildcard), `t(*)` (out of a container), containers and
//! their contained elements, graph inputs, `prim::If`/`prim::Loop`, fork/wait.

use std::collections::HashMap;

use ts_ir::{parse_ir_with_names, Graph, NodeId, ValueId};
use ts_passes::AliasDb;

struct Fixture {
    g: Graph,
    names: HashMap<String, ValueId>,
}

impl Fixture {
    fn new(ir: &str) -> Fixture {
        let (g, names) = parse_ir_with_names(ir).unwrap_or_else(|e| panic!("bad IR: {e}\n{ir}"));
        ts_ir::verify(&g).unwrap();
        Fixture { g, names }
    }
    fn v(&self, name: &str) -> ValueId {
        *self
            .names
            .get(name)
            .unwrap_or_else(|| panic!("no value %{name}"))
    }
    fn n(&self, name: &str) -> NodeId {
        self.g.value(self.v(name)).node()
    }
    fn db(&self) -> AliasDb {
        AliasDb::new(&self.g)
    }
}

#[test]
fn fresh_outputs_do_not_alias_inputs() {
    let f = Fixture::new(
        "graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  %z : Tensor = aten::sigmoid(%y)\n  return (%z)\n",
    );
    let db = f.db();
    assert!(!db.may_alias(&f.g, f.v("x"), f.v("y")));
    assert!(!db.may_alias(&f.g, f.v("y"), f.v("z")));
    assert!(db.may_alias(&f.g, f.v("y"), f.v("y")));
    assert!(!db.has_writers(&f.g, f.v("x")));
    assert!(!db.may_alias_wildcard(&f.g, f.v("y")));
}

#[test]
fn graph_inputs_of_one_type_may_alias_each_other() {
    let f = Fixture::new(
        "graph(%a : Tensor, %b : Tensor, %i : int):\n  %c : Tensor = aten::relu(%a)\n  return (%c)\n",
    );
    let db = f.db();
    assert!(db.may_alias(&f.g, f.v("a"), f.v("b")));
    assert!(db.may_alias_wildcard(&f.g, f.v("a")));
    // Immutable values have no memory locations at all.
    assert!(!db.may_alias(&f.g, f.v("i"), f.v("i")));
    assert!(!db.may_alias(&f.g, f.v("a"), f.v("c")));
}

#[test]
fn views_alias_their_input() {
    // aten::select(Tensor(a) self, int dim, int index) -> Tensor(a)
    let f = Fixture::new(
        "graph(%x : Tensor):\n  %0 : int = prim::Constant[value=0]()\n  %v : Tensor = aten::select(%x, %0, %0)\n  %w : Tensor = aten::select(%v, %0, %0)\n  %r : Tensor = aten::relu(%x)\n  %s : Tensor = aten::select(%r, %0, %0)\n  return (%w, %s)\n",
    );
    let db = f.db();
    assert!(db.may_alias(&f.g, f.v("x"), f.v("v")));
    assert!(
        db.may_alias(&f.g, f.v("x"), f.v("w")),
        "aliasing is transitive"
    );
    assert!(db.may_alias(&f.g, f.v("r"), f.v("s")));
    assert!(!db.may_alias(&f.g, f.v("s"), f.v("w")));
    assert!(!db.may_alias(&f.g, f.v("s"), f.v("x")));
}

#[test]
fn writes_are_recorded_on_the_written_memory_and_its_aliases() {
    // aten::add_(Tensor(a!) self, Scalar other, Scalar alpha) -> Tensor(a!)
    let f = Fixture::new(
        "graph(%x : Tensor):\n  %1 : int = prim::Constant[value=1]()\n  %0 : int = prim::Constant[value=0]()\n  %y : Tensor = aten::relu(%x)\n  %v : Tensor = aten::select(%y, %0, %0)\n  %a : Tensor = aten::add_(%v, %1, %1)\n  %z : Tensor = aten::sigmoid(%x)\n  return (%y, %z)\n",
    );
    let db = f.db();
    let add = f.n("a");
    assert!(db.has_writers(&f.g, f.v("v")));
    assert!(
        db.has_writers(&f.g, f.v("y")),
        "a write through a view writes the base"
    );
    assert!(db.has_writers(&f.g, f.v("a")));
    assert!(!db.has_writers(&f.g, f.v("x")));
    assert!(!db.has_writers(&f.g, f.v("z")));
    assert!(db.writes_to_alias(&f.g, add, &[f.v("y")]));
    assert!(!db.writes_to_alias(&f.g, add, &[f.v("x")]));
    assert!(db.writes_to_own_input(&f.g, add));
    assert!(!db.writes_to_wildcard(add));
    assert!(
        db.may_alias(&f.g, f.v("a"), f.v("y")),
        "add_ returns its (aliased) self"
    );
    assert!(!db.get_writes(&f.g, add).is_empty());
    assert!(db.get_writes(&f.g, f.n("z")).is_empty());
}

#[test]
fn writing_a_graph_input_writes_the_wildcard() {
    let f = Fixture::new(
        "graph(%x : Tensor, %y : Tensor):\n  %1 : int = prim::Constant[value=1]()\n  %a : Tensor = aten::add_(%x, %1, %1)\n  return (%a)\n",
    );
    let db = f.db();
    assert!(db.writes_to_wildcard(f.n("a")));
    assert!(db.has_writers(&f.g, f.v("y")), "y may be x");
}

#[test]
fn containers_contain_their_elements() {
    let f = Fixture::new(
        "graph(%x : Tensor):\n  %0 : int = prim::Constant[value=0]()\n  %y : Tensor = aten::relu(%x)\n  %l : Tensor[] = prim::ListConstruct(%y)\n  %c : Tensor = aten::cat(%l, %0)\n  %m : Tensor[] = prim::ListConstruct(%x)\n  %t : (Tensor, Tensor[]) = prim::TupleConstruct(%y, %m)\n  return (%c, %t)\n",
    );
    let db = f.db();
    // A list is not its element, but it contains it.
    assert!(!db.may_alias(&f.g, f.v("l"), f.v("y")));
    assert!(db.may_contain_alias(&f.g, f.v("l"), f.v("y")));
    assert!(db.may_contain_alias(&f.g, f.v("t"), f.v("m")));
    assert!(db.may_contain_alias(&f.g, f.v("t"), f.v("x")));
    assert!(!db.may_contain_alias(&f.g, f.v("c"), f.v("y")));
}

#[test]
fn getitem_of_a_list_returns_a_wildcard() {
    // aten::__getitem__.t(t[](a) list, int idx) -> t(*)
    let f = Fixture::new(
        "graph(%l : Tensor[], %x : Tensor):\n  %0 : int = prim::Constant[value=0]()\n  %e : Tensor = aten::__getitem__(%l, %0)\n  %r : Tensor = aten::relu(%x)\n  return (%e, %r)\n",
    );
    let db = f.db();
    assert!(db.may_alias_wildcard(&f.g, f.v("e")));
    assert!(db.may_alias(&f.g, f.v("e"), f.v("x")));
    assert!(!db.may_alias(&f.g, f.v("e"), f.v("r")));
}

#[test]
fn append_puts_its_element_into_the_wildcard() {
    // aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)
    let f = Fixture::new(
        "graph(%l : Tensor[], %x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  %z : Tensor = aten::sigmoid(%x)\n  %a : Tensor[] = aten::append(%l, %y)\n  return (%a, %z)\n",
    );
    let db = f.db();
    assert!(
        db.may_alias_wildcard(&f.g, f.v("y")),
        "y escaped into the list"
    );
    assert!(db.may_alias(&f.g, f.v("y"), f.v("x")));
    assert!(!db.may_alias_wildcard(&f.g, f.v("z")));
    assert!(db.has_writers(&f.g, f.v("l")));
    assert!(db.may_alias(&f.g, f.v("a"), f.v("l")));
}

#[test]
fn if_outputs_alias_both_branches() {
    let f = Fixture::new(
        "graph(%c : bool, %x : Tensor):\n  %r : Tensor = aten::relu(%x)\n  %s : Tensor = aten::sigmoid(%x)\n  %o : Tensor = prim::If(%c)\n    block0():\n      -> (%r)\n    block1():\n      -> (%s)\n  %u : Tensor = aten::tanh(%x)\n  return (%o, %u)\n",
    );
    let db = f.db();
    assert!(db.may_alias(&f.g, f.v("o"), f.v("r")));
    assert!(db.may_alias(&f.g, f.v("o"), f.v("s")));
    assert!(!db.may_alias(&f.g, f.v("r"), f.v("s")));
    assert!(!db.may_alias(&f.g, f.v("o"), f.v("u")));
}

#[test]
fn loop_carried_values_alias_their_initial_and_body_values() {
    let f = Fixture::new(
        "graph(%n : int, %x : Tensor):\n  %t : bool = prim::Constant[value=1]()\n  %y : Tensor = aten::relu(%x)\n  %o : Tensor = prim::Loop(%n, %t, %y)\n    block0(%i : int, %c : Tensor):\n      %d : Tensor = aten::sigmoid(%c)\n      -> (%t, %d)\n  return (%o)\n",
    );
    let db = f.db();
    assert!(db.may_alias(&f.g, f.v("c"), f.v("y")));
    assert!(db.may_alias(&f.g, f.v("o"), f.v("d")));
    assert!(!db.may_alias(&f.g, f.v("o"), f.v("x")));
}

#[test]
fn wait_may_write_anything_the_fork_saw() {
    let f = Fixture::new(
        "graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  %f : Future[Tensor] = prim::fork(%y)\n  %w : Tensor = aten::wait(%f)\n  return (%w)\n",
    );
    let db = f.db();
    assert!(db.may_alias_wildcard(&f.g, f.v("y")), "fork inputs escape");
    assert!(db.may_alias_wildcard(&f.g, f.v("w")));
    assert!(db.writes_to_wildcard(f.n("w")));
    assert!(db.has_writers(&f.g, f.v("y")));
}

#[test]
fn motion_respects_data_and_memory_dependencies() {
    let f = Fixture::new(
        "graph(%x : Tensor):\n  %1 : int = prim::Constant[value=1]()\n  %y : Tensor = aten::relu(%x)\n  %r : Tensor = aten::sigmoid(%y)\n  %a : Tensor = aten::add_(%y, %1, %1)\n  %u : Tensor = aten::tanh(%x)\n  %z : Tensor = aten::mul(%y, %u)\n  return (%r, %z, %a)\n",
    );
    let mut g = f.g.clone();
    let db = AliasDb::new(&g);
    let (r, a, u, z) = (f.n("r"), f.n("a"), f.n("u"), f.n("z"));
    // sigmoid reads y before add_ writes it: it may not move past the write.
    assert!(!db.could_move_after_topologically(&mut g, r, a));
    // mul uses tanh's output: it may not move before it.
    assert!(!db.could_move_before_topologically(&mut g, z, u));
    // tanh depends on neither: it may move before the write and before sigmoid.
    assert!(db.could_move_before_topologically(&mut g, u, r));
    // The queries do not move anything; the motion does.
    let before = g.to_string();
    assert!(db.move_before_topologically_valid(&mut g, u, r));
    assert_ne!(before, g.to_string());
    ts_ir::verify(&g).unwrap();
    let order: Vec<NodeId> = g.block_nodes(g.block());
    let pos = |n: NodeId| order.iter().position(|&m| m == n).unwrap();
    assert!(pos(u) < pos(r) && pos(r) < pos(a) && pos(a) < pos(z));
    // A failed motion leaves the graph as it was.
    let before = g.to_string();
    assert!(!db.move_after_topologically_valid(&mut g, r, a));
    assert_eq!(before, g.to_string());
}

#[test]
fn safe_to_change_aliasing_needs_no_writers() {
    let f = Fixture::new(
        "graph(%x : Tensor):\n  %1 : int = prim::Constant[value=1]()\n  %y : Tensor = aten::relu(%x)\n  %z : Tensor = aten::relu(%x)\n  %w : Tensor = aten::relu(%x)\n  %a : Tensor = aten::add_(%w, %1, %1)\n  %s : Tensor = aten::mul(%y, %z)\n  return (%s, %a, %x)\n",
    );
    let db = f.db();
    // y and z stay inside the graph: making them one value is unobservable.
    assert!(db.safe_to_change_aliasing_relationship(&f.g, &[f.v("y")], &[f.v("z")]));
    // Only one of y and x escapes.
    assert!(db.safe_to_change_aliasing_relationship(&f.g, &[f.v("y")], &[f.v("x")]));
    // s and x both escape (an output and an input): the caller could tell.
    assert!(!db.safe_to_change_aliasing_relationship(&f.g, &[f.v("s")], &[f.v("x")]));
    // w is written.
    assert!(!db.safe_to_change_aliasing_relationship(&f.g, &[f.v("w")], &[f.v("y")]));
}
