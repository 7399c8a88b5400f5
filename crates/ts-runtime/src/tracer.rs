//! The tracer (PyTorch's `jit/frontend/tracer`): runs a host function on example inputs and
//! records the operators it calls into a graph.
//!
//! A thread-local tracing state maps each tensor the trace knows (by identity) to the graph
//! value computing it. Inputs become graph inputs; the module's parameters and buffers become
//! `prim::GetAttr` chains from `self` on first use; every operator called through
//! [`crate::dispatch`] becomes a node whose non-tensor arguments are `prim::Constant`s
//! (int lists as `prim::ListConstruct` of constants, as PyTorch prints them); a tensor the
//! trace has never seen (captured from outside) becomes a tensor constant. Sizes are constants
//! unless [`TraceOptions::dynamic_sizes`] asks for `aten::size` + `prim::NumToTensor`; reading a
//! traced tensor's data ([`warn_data_dependent`]) records a warning because the trace bakes in
//! the branch it took. A call of a TorchScript function during the trace runs normally and
//! its graph is inlined ([`call_function`]), so control flow written in script survives.
//!
//! The result is a module whose `forward` is the recorded graph: it prints like PyTorch's
//! traced graphs (complete tensor types on inputs and outputs) and saves as an archive PyTorch
//! loads.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use ts_core::TypeRef;
use ts_core::{attr, prim, Argument, ClassType, FunctionSchema, IValue, Object, Symbol, Type};
use ts_ir::{constant_type, AttributeValue, Function, Graph, ValueId};
use ts_ops::registry::Operator;
use ts_tensor::{Error, Result, Tensor};

use crate::dispatch::Bound;

/// Choices for one trace.
#[derive(Clone, Debug, Default)]
pub struct TraceOptions {
    /// Record `x.size(d)` as `aten::size` (and `prim::NumToTensor`) so the trace follows the
    /// input's shape, instead of baking the example's size in as a constant.
    pub dynamic_sizes: bool,
}

/// The module a trace records into: its class name, tensors and submodules. Parameters and
/// buffers used by the traced code are read from `self` in the graph.
#[derive(Clone, Debug, Default)]
pub struct ModuleSpec {
    /// Qualified class name, e.g. `__torch__.MLP`.
    pub class_name: String,
    pub parameters: Vec<(String, Tensor)>,
    pub buffers: Vec<(String, Tensor)>,
    pub submodules: Vec<(String, ModuleSpec)>,
}

/// What a trace produced.
#[derive(Clone, Debug)]
pub struct TraceResult {
    /// The module object (its class has `forward`).
    pub module: Arc<Object>,
    /// The recorded `forward`.
    pub forward: Arc<Function>,
    /// Warnings about what the trace could not follow (data-dependent values).
    pub warnings: Vec<String>,
}

struct State {
    graph: Graph,
    /// Tensor identity → the value computing it.
    values: HashMap<usize, ValueId>,
    /// Tensors the map refers to, kept alive so that identities are not reused mid-trace.
    keep: Vec<Tensor>,
    /// Tensor identity → attribute path from `self` (parameters and buffers).
    attributes: HashMap<usize, Vec<String>>,
    /// Attribute path (joined by `.`) → the value already read by `prim::GetAttr`.
    read: HashMap<String, ValueId>,
    /// Module class by attribute path (`""` is the root).
    classes: HashMap<String, Arc<ClassType>>,
    self_value: ValueId,
    warnings: Vec<String>,
    options: TraceOptions,
    paused: u32,
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

/// True while a trace is being recorded on this thread (and not paused).
pub fn is_tracing() -> bool {
    STATE.with(|s| s.borrow().as_ref().is_some_and(|st| st.paused == 0))
}

/// Stops recording until the guard drops (operators called inside other operators, or the
/// interpreter running a scripted function, are not recorded twice).
pub struct PauseGuard {
    active: bool,
}

/// Pauses the trace on this thread, if there is one.
pub fn pause() -> PauseGuard {
    let active = STATE.with(|s| match s.borrow_mut().as_mut() {
        Some(st) => {
            st.paused += 1;
            true
        }
        None => false,
    });
    PauseGuard { active }
}

impl Drop for PauseGuard {
    fn drop(&mut self) {
        if self.active {
            STATE.with(|s| {
                if let Some(st) = s.borrow_mut().as_mut() {
                    st.paused = st.paused.saturating_sub(1);
                }
            });
        }
    }
}

/// Clears the state when the trace ends, however it ends.
struct Session;

impl Drop for Session {
    fn drop(&mut self) {
        STATE.with(|s| s.borrow_mut().take());
    }
}

fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> Option<R> {
    STATE.with(|s| match s.borrow_mut().as_mut() {
        Some(st) if st.paused == 0 => Some(f(st)),
        _ => None,
    })
}

/// Traces `f` on `inputs` (named `input_names` in the graph) as the `forward` of a module
/// described by `spec`.
pub fn trace(
    spec: &ModuleSpec,
    inputs: &[IValue],
    input_names: &[String],
    options: TraceOptions,
    f: impl FnOnce(&[IValue]) -> Result<IValue>,
) -> Result<TraceResult> {
    if STATE.with(|s| s.borrow().is_some()) {
        return Err(Error::runtime(
            "a trace is already being recorded on this thread (traces do not nest)",
        ));
    }
    let mut graph = Graph::new();
    let mut classes = HashMap::new();
    let mut attributes = HashMap::new();
    let root = build_class(spec, "", &mut classes, &mut attributes, &mut Vec::new())?;
    let self_value = graph.add_graph_input(Type::class(root.class.clone()));
    let _ = graph.set_debug_name(self_value, "self");
    let mut st = State {
        graph,
        values: HashMap::new(),
        keep: Vec::new(),
        attributes,
        read: HashMap::new(),
        classes,
        self_value,
        warnings: Vec::new(),
        options,
        paused: 0,
    };
    let mut arg_types = Vec::with_capacity(inputs.len());
    for (i, v) in inputs.iter().enumerate() {
        let IValue::Tensor(t) = v else {
            return Err(Error::new(
                ts_tensor::ErrorKind::TypeError,
                format!(
                    "trace: example input {i} is a {}; only tensors can be traced inputs",
                    v.type_of().annotation_str()
                ),
            ));
        };
        let gv = st.graph.add_graph_input(constant_type(v));
        let name = input_names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("input_{i}"));
        let _ = st.graph.set_debug_name(gv, &sanitize_name(&name));
        st.values.insert(t.id(), gv);
        st.keep.push(t.clone());
        arg_types.push((name, Type::tensor()));
    }
    STATE.with(|s| *s.borrow_mut() = Some(st));
    let session = Session;
    let out = f(inputs)?;
    let st = STATE
        .with(|s| s.borrow_mut().take())
        .ok_or_else(|| Error::runtime("the tracing state disappeared during the trace"))?;
    drop(session);
    finish(st, root, arg_types, &out)
}

/// Graph value names must not be bare integers or contain spaces.
fn sanitize_name(n: &str) -> String {
    let s: String = n
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.chars().all(|c| c.is_ascii_digit()) {
        format!("x{s}")
    } else {
        s
    }
}

/// Declares the class (and subclasses) of `spec` and builds its object.
fn build_class(
    spec: &ModuleSpec,
    prefix: &str,
    classes: &mut HashMap<String, Arc<ClassType>>,
    attributes: &mut HashMap<usize, Vec<String>>,
    path: &mut Vec<String>,
) -> Result<Arc<Object>> {
    let name = if spec.class_name.is_empty() {
        "__torch__.TracedModule".to_string()
    } else {
        spec.class_name.clone()
    };
    let class = ClassType::new(name, true);
    class.add_attribute("training", Type::bool(), false, false);
    let mut slots = vec![IValue::Bool(false)];
    let mut seen = std::collections::HashSet::new();
    for (n, t, is_param) in spec
        .parameters
        .iter()
        .map(|(n, t)| (n, t, true))
        .chain(spec.buffers.iter().map(|(n, t)| (n, t, false)))
    {
        check_attr_name(n, &mut seen)?;
        class.add_attribute(n, Type::tensor(), is_param, !is_param);
        slots.push(IValue::Tensor(t.clone()));
        path.push(n.clone());
        attributes.entry(t.id()).or_insert_with(|| path.clone());
        path.pop();
    }
    let mut subs = Vec::new();
    for (n, sub) in &spec.submodules {
        check_attr_name(n, &mut seen)?;
        path.push(n.clone());
        let sub_prefix = path.join(".");
        let obj = build_class(sub, &sub_prefix, classes, attributes, path)?;
        path.pop();
        class.add_attribute(n, Type::class(obj.class.clone()), false, false);
        subs.push(IValue::Object(obj));
    }
    slots.extend(subs);
    classes.insert(prefix.to_string(), class.clone());
    Ok(Arc::new(Object {
        class,
        slots: parking_lot::RwLock::new(slots),
    }))
}

/// Attribute names are identifiers, or digits as `nn.Sequential` names its children (saved
/// code reads those with `getattr(self, "0")`).
fn check_attr_name(n: &str, seen: &mut std::collections::HashSet<String>) -> Result<()> {
    let identifier = !n.starts_with(|c: char| c.is_ascii_digit())
        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let index = n.chars().all(|c| c.is_ascii_digit());
    let ok = !n.is_empty() && (identifier || index) && n != "training";
    if !ok {
        return Err(Error::runtime(format!(
            "trace: '{n}' cannot be a module attribute name"
        )));
    }
    if !seen.insert(n.to_string()) {
        return Err(Error::runtime(format!(
            "trace: the module has two attributes named '{n}'"
        )));
    }
    Ok(())
}

/// Builds the `forward` function and module from a finished state.
fn finish(
    mut st: State,
    root: Arc<Object>,
    arg_types: Vec<(String, TypeRef)>,
    out: &IValue,
) -> Result<TraceResult> {
    let ret = output_value(&mut st, out, 0)?;
    st.graph.register_output(ret);
    ts_passes::eliminate_dead_code(&mut st.graph);
    let class = root.class.clone();
    let mut arguments = vec![arg("self", Type::class(class.clone()))];
    arguments.extend(arg_types.into_iter().map(|(n, t)| arg(&n, t)));
    let ret_ty = schema_type(st.graph.value(ret).ty());
    let schema = FunctionSchema {
        name: "forward".to_string(),
        overload_name: String::new(),
        arguments,
        returns: vec![arg("", ret_ty)],
        is_vararg: false,
        is_varret: false,
    };
    let forward = Function::new(format!("{}.forward", class.name), st.graph, schema);
    class.add_method(forward.clone());
    Ok(TraceResult {
        module: root,
        forward,
        warnings: st.warnings,
    })
}

fn arg(name: &str, ty: TypeRef) -> Argument {
    Argument {
        name: name.to_string(),
        ty,
        real_ty: None,
        n: None,
        default: None,
        kwarg_only: false,
        alias_info: None,
    }
}

/// The type a schema declares for a traced value: tensors without their example's shape.
fn schema_type(t: &TypeRef) -> TypeRef {
    match &**t {
        Type::Tensor(_) => Type::tensor(),
        Type::Tuple(tt) => Type::tuple(tt.elements.iter().map(schema_type).collect()),
        Type::List(e) => Type::list(schema_type(e)),
        _ => t.clone(),
    }
}

/// The graph value returned for the traced function's result.
fn output_value(st: &mut State, out: &IValue, depth: usize) -> Result<ValueId> {
    if depth > 64 {
        return Err(Error::runtime("trace: the output is nested too deeply"));
    }
    match out {
        IValue::Tensor(t) => Ok(tensor_value(st, t)),
        IValue::Tuple(tup) => {
            let vals = tup
                .elements
                .iter()
                .map(|e| output_value(st, e, depth + 1))
                .collect::<Result<Vec<_>>>()?;
            Ok(st.graph.insert_tuple(&vals))
        }
        IValue::List(l) => {
            let items = l.items.read().clone();
            let vals = items
                .iter()
                .map(|e| output_value(st, e, depth + 1))
                .collect::<Result<Vec<_>>>()?;
            let elem = vals
                .first()
                .map(|&v| schema_type(st.graph.value(v).ty()))
                .unwrap_or_else(Type::tensor);
            Ok(st.graph.insert_list(elem, &vals))
        }
        other => Err(Error::runtime(format!(
            "Only tensors, lists and tuples of tensors can be output from traced functions, got {}",
            other.type_of().annotation_str()
        ))),
    }
}

/// The value computing tensor `t`: traced, a module attribute read from `self`, or else a
/// constant (a tensor captured from outside the trace).
fn tensor_value(st: &mut State, t: &Tensor) -> ValueId {
    if let Some(&v) = st.values.get(&t.id()) {
        return v;
    }
    if let Some(path) = st.attributes.get(&t.id()).cloned() {
        let v = read_attribute(st, &path);
        st.values.insert(t.id(), v);
        st.keep.push(t.clone());
        return v;
    }
    let v = st.graph.insert_constant(&IValue::Tensor(t.clone()));
    st.values.insert(t.id(), v);
    st.keep.push(t.clone());
    v
}

/// `prim::GetAttr` chain for an attribute path, reusing reads already made.
fn read_attribute(st: &mut State, path: &[String]) -> ValueId {
    let mut cur = st.self_value;
    for i in 0..path.len() {
        let key = path[..=i].join(".");
        if let Some(&v) = st.read.get(&key) {
            cur = v;
            continue;
        }
        let ty = match st.classes.get(&key) {
            Some(c) => Type::class(c.clone()),
            None => Type::tensor(),
        };
        let n = st.graph.insert(prim::GetAttr, &[cur], 0);
        st.graph
            .set_attr(n, attr::name, AttributeValue::String(path[i].clone()));
        let v = st.graph.add_output(n, ty);
        let _ = st.graph.set_debug_name(v, &path[i]);
        st.read.insert(key, v);
        cur = v;
    }
    cur
}

/// The value for one bound argument of a recorded call.
fn input_value(st: &mut State, b: &Bound, depth: usize) -> ValueId {
    match (&b.value, &b.given) {
        // A one-element tensor used as a number: `aten::Int(t)` / `aten::Float(t)`.
        (IValue::Int(_) | IValue::Double(_), Some(IValue::Tensor(t))) => {
            let tv = tensor_value(st, t);
            let (kind, ty) = if matches!(b.value, IValue::Int(_)) {
                ("aten::Int", Type::int())
            } else {
                ("aten::Float", Type::float())
            };
            let n = st.graph.insert(Symbol::new(kind), &[tv], 0);
            st.graph.add_output(n, ty)
        }
        (IValue::Tensor(t), _) => tensor_value(st, t),
        (IValue::List(l), given) if depth < 8 => {
            let items = l.items.read().clone();
            let given_items = match given {
                Some(IValue::List(g)) => Some(g.items.read().clone()),
                Some(IValue::Tuple(t)) => Some(t.elements.clone()),
                _ => None,
            };
            let vals: Vec<ValueId> = items
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let g = given_items
                        .as_ref()
                        .filter(|g| g.len() == items.len())
                        .and_then(|g| g.get(i).cloned());
                    input_value(
                        st,
                        &Bound {
                            value: x.clone(),
                            given: g,
                        },
                        depth + 1,
                    )
                })
                .collect();
            let elem = match &*l.elem_type {
                Type::Tensor(_) => Type::tensor(),
                Type::Optional(e) if e.is_tensor() => Type::optional(Type::tensor()),
                _ => l.elem_type.clone(),
            };
            st.graph.insert_list(elem, &vals)
        }
        (v, _) => st.graph.insert_constant(v),
    }
}

/// The type recorded for an output value: complete for tensors, as PyTorch's tracer does.
fn output_type(v: &IValue, declared: &TypeRef) -> TypeRef {
    match v {
        IValue::Tensor(_) => constant_type(v),
        IValue::None => declared.clone(),
        _ if matches!(&**declared, Type::Any) || declared.has_free_variables() => v.type_of(),
        _ => declared.clone(),
    }
}

/// Records a call of `op` (by [`crate::dispatch::run_bound`]) with its results.
pub(crate) fn record_op(op: &Operator, bound: &[Bound], outputs: &[IValue]) -> Result<()> {
    with_state(|st| {
        let inputs: Vec<ValueId> = bound.iter().map(|b| input_value(st, b, 0)).collect();
        let n = st.graph.insert(op.symbol, &inputs, 0);
        for (i, out) in outputs.iter().enumerate() {
            let declared = op
                .schema
                .returns
                .get(i)
                .map(|r| r.ty.clone())
                .unwrap_or_else(Type::any);
            let v = st.graph.add_output(n, output_type(out, &declared));
            match out {
                IValue::Tensor(t) => {
                    st.values.insert(t.id(), v);
                    st.keep.push(t.clone());
                }
                IValue::List(l) if l.items.read().iter().any(|x| x.as_tensor().is_some()) => {
                    // `split`/`chunk`/`unbind`: unpack so each element has its own value.
                    let items = l.items.read().clone();
                    let un = st.graph.insert(prim::ListUnpack, &[v], 0);
                    for x in &items {
                        let ev = st.graph.add_output(un, output_type(x, &Type::tensor()));
                        if let IValue::Tensor(t) = x {
                            st.values.insert(t.id(), ev);
                            st.keep.push(t.clone());
                        }
                    }
                }
                _ => {}
            }
        }
    });
    Ok(())
}

/// Records that the trace read a tensor's data as a host value (`bool(t)`, `t.item()`,
/// `t.tolist()`): the trace keeps the branch this example took. No-op outside traces and for
/// tensors the trace does not compute.
pub fn warn_data_dependent(t: &Tensor, what: &str) {
    with_state(|st| {
        if st.values.contains_key(&t.id()) || st.attributes.contains_key(&t.id()) {
            st.warnings.push(format!(
                "TracerWarning: converting a tensor to a Python {what} might cause the trace to be \
                 incorrect: the value is treated as a constant, so the trace might not generalize \
                 to other inputs"
            ));
        }
    });
}

/// Records a warning of the caller's own (for example Python code the trace cannot see into).
pub fn warn(message: impl Into<String>) {
    let m = message.into();
    with_state(|st| st.warnings.push(m));
}

/// `t.size(dim)` during a trace: a host int normally; with dynamic sizes, a 0-dim int64 tensor
/// computed by `aten::size` + `prim::NumToTensor` (which later int arguments read back with
/// `aten::Int`), as PyTorch's tracer records shapes.
pub fn size(t: &Tensor, dim: i64) -> Result<IValue> {
    let nd = t.dim() as i64;
    let d = if dim < 0 { dim + nd } else { dim };
    if d < 0 || d >= nd.max(1) || nd == 0 {
        return Err(Error::new(
            ts_tensor::ErrorKind::IndexError,
            format!(
                "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
                -nd.max(1),
                nd.max(1) - 1
            ),
        ));
    }
    let s = t.sizes()[d as usize];
    let dynamic = with_state(|st| st.options.dynamic_sizes).unwrap_or(false);
    if !dynamic {
        return Ok(IValue::Int(s));
    }
    let out = Tensor::from_vec(vec![s], &[])?;
    with_state(|st| {
        let tv = tensor_value(st, t);
        let dv = st.graph.insert_constant(&IValue::Int(dim));
        let n = st.graph.insert(Symbol::aten("size"), &[tv, dv], 0);
        let sv = st.graph.add_output(n, Type::int());
        let n2 = st.graph.insert(Symbol::prim("NumToTensor"), &[sv], 0);
        let ov = st
            .graph
            .add_output(n2, constant_type(&IValue::Tensor(out.clone())));
        st.values.insert(out.id(), ov);
        st.keep.push(out.clone());
    });
    Ok(IValue::Tensor(out))
}

/// Calls a TorchScript function; inside a trace, runs it untraced and inlines its graph into
/// the trace, so that its control flow is kept (PyTorch's behaviour for script called from
/// traced code).
pub fn call_function(f: &Function, args: Vec<IValue>) -> Result<IValue> {
    let tracing = is_tracing();
    let result = {
        let _pause = pause();
        crate::run::call_function(f, args.clone()).map_err(crate::ExecutionError::into_error)?
    };
    if !tracing {
        return Ok(result);
    }
    let graph = f
        .graph()
        .ok_or_else(|| Error::runtime(format!("function '{}' has no graph", f.qualified_name())))?;
    with_state(|st| -> Result<()> {
        let inputs: Vec<ValueId> = args
            .iter()
            .map(|a| {
                input_value(
                    st,
                    &Bound {
                        value: a.clone(),
                        given: None,
                    },
                    0,
                )
            })
            .collect();
        let outs = st.graph.insert_graph(&graph, &inputs).map_err(|e| {
            Error::runtime(format!("trace: cannot inline {}: {e}", f.qualified_name()))
        })?;
        if let [o] = outs[..] {
            bind_result(st, &result, o);
        }
        Ok(())
    })
    .unwrap_or(Ok(()))?;
    Ok(result)
}

/// Maps the tensors of an inlined call's result to the values computing them.
fn bind_result(st: &mut State, result: &IValue, v: ValueId) {
    match result {
        IValue::Tensor(t) => {
            st.values.insert(t.id(), v);
            st.keep.push(t.clone());
        }
        IValue::Tuple(tup) if st.graph.value(v).ty().tuple_elems().is_some() => {
            let parts = st.graph.insert_tuple_unpack(v);
            for (x, pv) in tup.elements.iter().zip(parts) {
                bind_result(st, x, pv);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::{call_op_single, Arg};

    fn tensor(v: Vec<f32>, s: &[i64]) -> Tensor {
        Tensor::from_vec(v, s).unwrap()
    }

    #[test]
    fn records_operators_constants_and_parameters() {
        let w = tensor(vec![1.0, 2.0, 3.0, 4.0], &[2, 2]);
        let spec = ModuleSpec {
            class_name: "__torch__.Lin".into(),
            parameters: vec![("weight".into(), w.clone())],
            ..Default::default()
        };
        let x = tensor(vec![1.0, 1.0], &[1, 2]);
        let r = trace(
            &spec,
            &[IValue::Tensor(x.clone())],
            &["x".into()],
            TraceOptions::default(),
            |ins| {
                let y = call_op_single(
                    "aten::matmul",
                    vec![Arg::from(ins[0].clone()), Arg::from(w.clone())],
                    vec![],
                )?;
                call_op_single("aten::mul", vec![y.into(), IValue::Int(2).into()], vec![])
            },
        )
        .unwrap();
        let text = r.forward.graph().unwrap().to_string();
        assert!(
            text.contains("%x : Float(1, 2, strides=[2, 1], requires_grad=0, device=cpu)"),
            "{text}"
        );
        assert!(
            text.contains("prim::GetAttr[name=\"weight\"](%self)"),
            "{text}"
        );
        assert!(text.contains("aten::matmul(%x, %weight)"), "{text}");
        assert!(text.contains("prim::Constant[value=2]()"), "{text}");
        // The traced module runs on other inputs.
        let x2 = tensor(vec![1.0, 0.0], &[1, 2]);
        let out = crate::call_method(&r.module, "forward", vec![IValue::Tensor(x2)]).unwrap();
        assert_eq!(out.as_tensor().unwrap().to_vec::<f32>(), vec![2.0, 4.0]);
        assert!(!is_tracing());
    }

    #[test]
    fn attribute_names_are_identifiers_or_indices() {
        let mut seen = std::collections::HashSet::new();
        assert!(check_attr_name("fc1", &mut seen).is_ok());
        assert!(check_attr_name("0", &mut seen).is_ok());
        for bad in ["", "1a", "a.b", "training", "fc1", "0"] {
            assert!(check_attr_name(bad, &mut seen).is_err(), "{bad}");
        }
    }

    #[test]
    fn dynamic_sizes_and_data_dependent_reads() {
        let x = tensor((0..6).map(|i| i as f32).collect(), &[2, 3]);
        let opts = TraceOptions {
            dynamic_sizes: true,
        };
        let r = trace(
            &ModuleSpec::default(),
            &[IValue::Tensor(x)],
            &["x".into()],
            opts,
            |ins| {
                let t = ins[0].as_tensor().unwrap();
                let n = size(t, 0)?;
                warn_data_dependent(t, "boolean");
                call_op_single(
                    "aten::view",
                    vec![ins[0].clone().into(), n.into(), IValue::Int(-1).into()],
                    vec![],
                )
            },
        )
        .unwrap();
        let text = r.forward.graph().unwrap().to_string();
        assert!(text.contains("aten::size(%x, "), "{text}");
        assert!(text.contains("prim::NumToTensor"), "{text}");
        assert!(text.contains("aten::Int("), "{text}");
        assert_eq!(r.warnings.len(), 1);
        let y = tensor((0..8).map(|i| i as f32).collect(), &[4, 2]);
        let out = crate::call_method(&r.module, "forward", vec![IValue::Tensor(y)]).unwrap();
        assert_eq!(out.as_tensor().unwrap().sizes().as_slice(), &[4, 2]);
    }

    #[test]
    fn errors_end_the_trace_and_bad_outputs_are_refused() {
        let x = IValue::Tensor(tensor(vec![1.0], &[1]));
        let e = trace(
            &ModuleSpec::default(),
            std::slice::from_ref(&x),
            &[],
            TraceOptions::default(),
            |_| Err(Error::runtime("boom")),
        );
        assert!(e.is_err());
        assert!(!is_tracing());
        let e = trace(
            &ModuleSpec::default(),
            std::slice::from_ref(&x),
            &[],
            TraceOptions::default(),
            |_| Ok(IValue::Int(3)),
        )
        .unwrap_err();
        assert!(e.message.contains("Only tensors"), "{}", e.message);
        let e = trace(
            &ModuleSpec::default(),
            &[IValue::Int(1)],
            &[],
            TraceOptions::default(),
            |_| Ok(IValue::None),
        );
        assert!(e.is_err());
    }
}
