//! Unit tests of the printer on small graphs. Expected texts marked "PyTorch 2.15" were
//! obtained by parsing the same IR with `torch._C.parse_ir` and printing
//! `torch._C._create_function_from_graph("f", g).code` (that parser drops the names of node
//! outputs, hence the numbered values here).

use std::sync::Arc;

use parking_lot::RwLock;
use ts_core::types::{EnumType, InterfaceType};
use ts_core::{ClassType, IValue, Tensor, Type};
use ts_ir::{parse_ir, Graph};

use super::{print_function, schema_from_graph, PythonPrinter};

fn print(ir: &str) -> String {
    let g = parse_ir(ir).expect("test IR parses");
    let schema = schema_from_graph("f", &g);
    print_function("__torch__.f", &g, &schema)
        .expect("prints")
        .0
}

#[test]
fn while_loop_with_carried_value() {
    let text = print(
        "graph(%n.1 : int):
  %1 : int = prim::Constant[value=9223372036854775807]()
  %2 : int = prim::Constant[value=0]()
  %3 : int = prim::Constant[value=1]()
  %4 : bool = aten::gt(%n.1, %2)
  %5 : int = prim::Loop(%1, %4, %n.1)
    block0(%it : int, %i.2 : int):
      %8 : int = aten::sub(%i.2, %3)
      %9 : bool = aten::gt(%8, %2)
      -> (%9, %8)
  return (%5)
",
    );
    // PyTorch 2.15.
    assert_eq!(
        text,
        "def f(n: int) -> int:
  _0 = n
  it = torch.gt(n, 0)
  while it:
    _1 = torch.sub(_0, 1)
    it, _0 = torch.gt(_1, 0), _1
  return _0
"
    );
}

#[test]
fn for_loop_if_and_casts() {
    let text = print(
        "graph(%xs.1 : int[], %t.1 : Tensor):
  %0 : bool = prim::Constant[value=1]()
  %1 : int = prim::Constant[value=0]()
  %2 : int = aten::len(%xs.1)
  %3 : int = prim::Loop(%2, %0, %1)
    block0(%i.1 : int, %acc.2 : int):
      %5 : int = aten::__getitem__(%xs.1, %i.1)
      %6 : bool = aten::gt(%5, %1)
      %7 : int = prim::If(%6)
        block0():
          %8 : int = aten::add(%acc.2, %5)
          -> (%8)
        block1():
          -> (%acc.2)
      -> (%0, %7)
  %9 : Tensor = aten::mul(%t.1, %3)
  %10 : int = aten::Int(%9)
  %11 : float = aten::Float(%9)
  %12 : (int, float) = prim::TupleConstruct(%10, %11)
  return (%12)
",
    );
    // PyTorch 2.15.
    assert_eq!(
        text,
        "def f(xs: List[int],
    t: Tensor) -> Tuple[int, float]:
  _0 = 0
  for i in range(torch.len(xs)):
    _1 = xs[i]
    if torch.gt(_1, 0):
      _2 = torch.add(_0, _1)
    else:
      _2 = _0
    _0 = _2
  _3 = torch.mul(t, _0)
  return (int(_3), float(_3))
"
    );
}

#[test]
fn print_long_constants_annotated_literals_and_kwargs() {
    let text = print(
        "graph(%x.1 : Tensor, %s.1 : str):
  %1 : str = prim::Constant[value=\"a very long string constant that is bound to a name\"]()
  %2 : float = prim::Constant[value=1e-10]()
   = prim::Print(%x.1, %s.1, %1, %2)
  %3 : int[] = prim::ListConstruct()
  %4 : Dict(str, Tensor) = prim::DictConstruct()
  %5 : Tensor?[] = prim::ListConstruct(%x.1)
  %6 : (Tensor?[]) = prim::TupleConstruct(%5)
  %n : NoneType = prim::Constant()
  %7 : Tensor = aten::zeros(%3, %n, %n, %n, %n)
  %8 : (int[], Dict(str, Tensor), (Tensor?[]), Tensor) = prim::TupleConstruct(%3, %4, %6, %7)
  return (%8)
",
    );
    // PyTorch 2.15.
    assert_eq!(
        text,
        "def f(x: Tensor,
    s: str) -> Tuple[List[int], Dict[str, Tensor], Tuple[List[Optional[Tensor]]], Tensor]:
  _0 = \"a very long string constant that is bound to a name\"
  print(x, s, _0, 1e-10)
  _1 = annotate(List[int], [])
  _2 = annotate(Dict[str, Tensor], {})
  _3 = (annotate(List[Optional[Tensor]], [x]),)
  return (_1, _2, _3, torch.zeros(_1))
"
    );
}

#[test]
fn keyword_only_arguments_are_named() {
    let text = print(
        "graph(%x.1 : Tensor):
  %1 : int = prim::Constant[value=2]()
  %2 : int[] = prim::ListConstruct(%1)
  %3 : int = prim::Constant[value=6]()
  %n : NoneType = prim::Constant()
  %4 : Tensor = aten::zeros(%2, %3, %n, %n, %n)
  return (%4)
",
    );
    assert_eq!(
        text,
        "def f(x: Tensor) -> Tensor:\n  return torch.zeros([2], dtype=6)\n"
    );
}

/// A graph returning a tensor constant: `prim::Constant` of a tensor cannot be written in
/// the IR text, so it is built directly.
fn tensor_constant_graph(values: &[f32]) -> Graph {
    let mut g = Graph::new();
    let t = Tensor::from_vec(values.to_vec(), &[values.len() as i64]).expect("tensor");
    let a = g.insert_constant(&IValue::Tensor(t.clone()));
    let b = g.insert_constant(&IValue::Tensor(t));
    let n = g.insert(ts_core::Symbol::new("aten::mul"), &[a, b], 1);
    let out = g.node(n).output(0);
    g.set_type(out, Type::tensor());
    g.register_output(out);
    g
}

#[test]
fn tensors_go_to_the_constant_table() {
    let g = tensor_constant_graph(&[1.0, 2.0]);
    let schema = schema_from_graph("f", &g);
    let (text, constants) = print_function("__torch__.f", &g, &schema).expect("prints");
    // Equal tensors share one entry, as PyTorch's getOrAddConstant does.
    assert_eq!(
        text,
        "def f() -> Tensor:\n  return torch.mul(CONSTANTS.c0, CONSTANTS.c0)\n"
    );
    assert_eq!(constants.len(), 1);
    assert_eq!(
        constants[0].as_tensor().expect("a tensor").to_vec::<f32>(),
        vec![1.0, 2.0]
    );
    // A second function adds to the same table.
    let mut p = PythonPrinter::new();
    p.add_function("__torch__.f", &g, &schema).expect("prints");
    let g2 = tensor_constant_graph(&[3.0]);
    p.add_function("__torch__.g", &g2, &schema_from_graph("g", &g2))
        .expect("prints");
    assert_eq!(p.constants().len(), 2);
    assert!(p
        .file("__torch__")
        .unwrap_or_default()
        .contains("CONSTANTS.c1"));
}

#[test]
fn with_statement_from_enter_and_exit() {
    let text = print(
        "graph(%x.1 : Tensor, %c.1 : __torch__.Ctx):
  %1 : Any = prim::Enter(%c.1)
  %y.1 : Tensor = aten::neg(%x.1)
  %2 : Any = prim::Exit(%c.1)
  return (%y.1)
",
    );
    assert_eq!(
        text,
        "def f(x: Tensor,
    c: __torch__.Ctx) -> Tensor:
  with c:
    y = torch.neg(x)
  return y
"
    );
}

/// The returned expression reaches 40 columns with its indentation, so it is bound to a name
/// (PyTorch's long-line rule).
#[test]
fn attributes_objects_and_unchecked_casts() {
    let text = print(
        "graph(%self.1 : __torch__.M, %x.1 : Tensor?):
  %1 : Tensor = prim::GetAttr[name=\"weight\"](%self.1)
  %2 : Tensor = prim::GetAttr[name=\"0\"](%self.1)
   = prim::SetAttr[name=\"weight\"](%self.1, %2)
  %3 : __torch__.P = prim::CreateObject()
  %4 : Tensor = prim::unchecked_cast(%x.1)
  %5 : Tensor = aten::mul(%1, %4)
  return (%5)
",
    );
    assert_eq!(
        text,
        "def f(self: __torch__.M,
    x: Optional[Tensor]) -> Tensor:
  _0 = self.weight
  self.weight = getattr(self, \"0\")
  _1 = __torch__.P.__new__(__torch__.P)
  _2 = torch.mul(_0, unchecked_cast(Tensor, x))
  return _2
"
    );
}

#[test]
fn unprintable_graphs_are_errors_and_leave_the_file_unchanged() {
    let g = parse_ir("graph(%x.1 : Tensor):\n  return (%x.1)\n").expect("parses");
    let mut schema = schema_from_graph("f", &g);
    let mut p = PythonPrinter::new();
    p.add_function("__torch__.f", &g, &schema).expect("prints");
    let before = p.file("__torch__").unwrap_or_default().to_string();
    schema.arguments.clear();
    let err = p
        .add_function("__torch__.g", &g, &schema)
        .expect_err("arity mismatch");
    assert!(err.message.contains("1 inputs"), "{err}");
    assert_eq!(p.file("__torch__").unwrap_or_default(), before);

    // A loop that is neither a `for` nor a `while` (a trip count and a real condition).
    let g = parse_ir(
        "graph(%n.1 : int, %c.1 : bool):
  %1 : int = prim::Loop(%n.1, %c.1, %n.1)
    block0(%i.1 : int, %v.1 : int):
      -> (%c.1, %v.1)
  return (%1)
",
    )
    .expect("parses");
    let err = p
        .add_function("__torch__.h", &g, &schema_from_graph("h", &g))
        .expect_err("modified loop");
    assert!(err.message.contains("loop cannot be printed"), "{err}");
    assert_eq!(p.file("__torch__").unwrap_or_default(), before);
}

#[test]
fn module_class_header() {
    let class = ClassType::new("__torch__.a.M", true);
    class.add_attribute(
        "0",
        Type::class(ClassType::new("__torch__.a.Sub", true)),
        false,
        false,
    );
    class.add_attribute("training", Type::bool(), false, false);
    class.add_attribute("weight", Type::tensor(), true, false);
    class.add_attribute("stats", Type::optional(Type::tensor()), false, true);
    class.add_constant(
        "k",
        IValue::tuple(vec![IValue::Int(1), IValue::Double(0.5)]),
    );
    let mut p = PythonPrinter::new();
    p.add_class(&class, &[]).expect("prints");
    assert_eq!(
        p.file("__torch__.a").unwrap_or_default(),
        "class M(Module):
  __parameters__ = [\"weight\", ]
  __buffers__ = [\"stats\", ]
  __annotations__ = []
  __annotations__[\"0\"] = __torch__.a.Sub
  training : bool
  weight : Tensor
  stats : Optional[Tensor]
  k : Final[Tuple[int, float]] = (1, 0.5)
"
    );
    assert_eq!(p.files()[0].0, "code/__torch__/a.py");
    assert_eq!(p.dependencies().names(), ["__torch__.a.Sub"]);
}

#[test]
fn enums_interfaces_and_named_tuples() {
    let mut p = PythonPrinter::new();
    p.add_enum(&EnumType {
        name: "__torch__.Color".to_string(),
        value_type: Type::string(),
        members: vec![
            ("RED".to_string(), IValue::str("red")),
            ("GREEN".to_string(), IValue::str("green")),
        ],
    })
    .expect("prints");
    let self_arg = |ty| ts_core::Argument {
        name: "self".to_string(),
        ty,
        real_ty: None,
        n: None,
        default: None,
        kwarg_only: false,
        alias_info: None,
    };
    let mut x = self_arg(Type::tensor());
    x.name = "x".to_string();
    let iface = InterfaceType {
        name: "__torch__.Proto".to_string(),
        is_module: false,
        methods: RwLock::new(vec![ts_core::FunctionSchema {
            name: "run".to_string(),
            overload_name: String::new(),
            arguments: vec![self_arg(Type::any()), x],
            returns: vec![self_arg(Type::int())],
            is_vararg: false,
            is_varret: false,
        }]),
    };
    p.add_interface(&iface).expect("prints");
    let nt = Type::named_tuple(
        "__torch__.Pair",
        vec!["a".to_string(), "b".to_string()],
        vec![Type::int(), Type::optional(Type::tensor())],
    );
    p.add_named_tuple(&nt).expect("prints");
    assert_eq!(
        p.file("__torch__").unwrap_or_default(),
        "class Color(Enum):
  RED = \"red\"
  GREEN = \"green\"
class Proto(Interface):
  def run(self, x: Tensor) -> int:
    pass
class Pair(NamedTuple):
  a : int
  b : Optional[Tensor]
"
    );
    assert!(p.add_named_tuple(&Type::int()).is_err());
}

#[test]
fn method_code_omits_the_type_of_self() {
    let g = parse_ir(
        "graph(%self.1 : __torch__.M, %x.1 : Tensor):
  %1 : Tensor = aten::neg(%x.1)
  return (%1)
",
    )
    .expect("parses");
    let schema = schema_from_graph("forward", &g);
    let (text, _) = super::print_method_code("forward", &g, &schema).expect("prints");
    assert_eq!(
        text,
        "def forward(self,\n    x: Tensor) -> Tensor:\n  return torch.neg(x)\n"
    );
}

#[test]
fn type_trees_print_dependencies_once_in_reference_order() {
    // A module whose method calls a free function and a method of a submodule.
    let sub = ClassType::new("__torch__.lib.Sub", true);
    sub.add_attribute("training", Type::bool(), false, false);
    let root = ClassType::new("__torch__.Root", true);
    root.add_attribute("sub", Type::class(sub.clone()), false, false);
    let helper_graph = parse_ir("graph(%x.1 : Tensor):\n  return (%x.1)\n").expect("parses");
    let helper = ts_ir::Function::new(
        "__torch__.lib.helper",
        helper_graph.clone(),
        schema_from_graph("helper", &helper_graph),
    );
    let mut g = parse_ir(
        "graph(%self.1 : __torch__.Root, %x.1 : Tensor):
  %f : Function = prim::Constant[name=\"helper\"]()
  %1 : Tensor = prim::CallFunction(%f, %x.1)
  return (%1)
",
    )
    .expect("parses");
    let root_ty = Type::class(root.clone());
    g.set_type(g.inputs()[0], root_ty.clone());
    for n in g.all_nodes() {
        if g.node(n).kind() == ts_core::prim::Constant {
            let out = g.node(n).output(0);
            g.set_type(out, helper.function_type());
        }
    }
    let schema = schema_from_graph("forward", &g);
    root.add_method(ts_ir::Function::new("__torch__.Root.forward", g, schema));
    let sub_graph = parse_ir(
        "graph(%self.1 : __torch__.lib.Sub):\n  %0 : NoneType = prim::Constant()\n  return (%0)\n",
    )
    .expect("parses");
    let mut sub_graph = sub_graph;
    sub_graph.set_type(sub_graph.inputs()[0], Type::class(sub.clone()));
    let sub_schema = schema_from_graph("forward", &sub_graph);
    sub.add_method(ts_ir::Function::new(
        "__torch__.lib.Sub.forward",
        sub_graph,
        sub_schema,
    ));

    let mut p = PythonPrinter::new();
    p.add_type_tree(&root_ty).expect("prints");
    p.add_type_tree(&root_ty)
        .expect("a second time prints nothing");
    let files = p.files();
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["code/__torch__.py", "code/__torch__/lib.py"]);
    assert_eq!(
        files[0].1,
        "class Root(Module):
  __parameters__ = []
  __buffers__ = []
  sub : __torch__.lib.Sub
  def forward(self: __torch__.Root,
    x: Tensor) -> Tensor:
    return __torch__.lib.helper(x, )
"
    );
    // The submodule's class was referenced first (by the attribute), then the function.
    assert_eq!(
        files[1].1,
        "class Sub(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  def forward(self: __torch__.lib.Sub) -> NoneType:
    return None
def helper(x: Tensor) -> Tensor:
  return x
"
    );

    // A function type without a body cannot be printed.
    let bodiless = Arc::new(Type::Function(Arc::new(ts_core::types::FunctionType {
        name: "__torch__.nowhere".to_string(),
        function: None,
    })));
    let err = PythonPrinter::new()
        .add_type_tree(&bodiless)
        .expect_err("no body");
    assert!(err.message.contains("has no body"), "{err}");
}
