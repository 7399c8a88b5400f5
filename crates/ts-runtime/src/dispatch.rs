//! Calling operators by name with host values, as `torch.add(x, 2)` or `x.view(2, 3)` does in
//! Python: the overload is chosen from the values (PyTorch's Python argument parser), the
//! arguments are converted to the schema's types, and the registered operation runs on a
//! stack. When a trace is being recorded on this thread ([`crate::tracer`]), the call is
//! recorded as a node.
//!
//! Overloads are tried in two passes. The strict pass takes values as they are (an int widens to
//! `float`, a single int fills an `int[]`, a string names a device); the lenient pass also
//! accepts a number for a `Tensor` (a wrapped number) and a one-element integer or float tensor
//! for an `int` or `float` (how traced sizes flow into shape arguments). Among the overloads that
//! fit, the one needing the fewest conversions wins; ties go to registration order.

use std::sync::Arc;

use ts_core::{IValue, Symbol, Type, TypeRef};
use ts_ir::Graph;
use ts_ops::registry::{Operator, OperatorKind};
use ts_tensor::{DType, Error, Result, Tensor};

/// One argument of an operator call from a host language.
#[derive(Clone, Debug)]
pub enum Arg {
    /// A value.
    Value(IValue),
    /// A dtype (`torch.float32`): only a `ScalarType` parameter takes it, so that
    /// `x.view(torch.int32)` and `x.view(6)` pick different overloads.
    DType(DType),
}

impl From<IValue> for Arg {
    fn from(v: IValue) -> Arg {
        Arg::Value(v)
    }
}

impl From<DType> for Arg {
    fn from(d: DType) -> Arg {
        Arg::DType(d)
    }
}

impl From<Tensor> for Arg {
    fn from(t: Tensor) -> Arg {
        Arg::Value(IValue::Tensor(t))
    }
}

/// A parameter bound to a value: what the operation receives, and the host value it came
/// from (for the tracer, which records `aten::Int(t)` when a tensor became an int).
#[derive(Clone, Debug)]
pub struct Bound {
    pub value: IValue,
    /// The value given by the caller, before conversion; `None` for defaults.
    pub given: Option<IValue>,
}

/// How far a value may be converted to fit a parameter.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Pass {
    Strict,
    Lenient,
}

/// Calls the operator `name` (`aten::add`, or an exact overload `aten::add.Tensor`) with
/// positional and keyword arguments; returns its outputs.
pub fn call_op(name: &str, args: Vec<Arg>, kwargs: Vec<(String, Arg)>) -> Result<Vec<IValue>> {
    let (op, bound) = resolve(name, &args, &kwargs)?;
    run_bound(&op, bound)
}

/// Calls `name` and returns its only output (several outputs come back as a tuple).
pub fn call_op_single(name: &str, args: Vec<Arg>, kwargs: Vec<(String, Arg)>) -> Result<IValue> {
    let mut outs = call_op(name, args, kwargs)?;
    Ok(if outs.len() == 1 {
        outs.pop().unwrap_or_default()
    } else {
        IValue::tuple(outs)
    })
}

/// Chooses the overload of `name` that the arguments fit and binds them to its parameters.
pub fn resolve(
    name: &str,
    args: &[Arg],
    kwargs: &[(String, Arg)],
) -> Result<(Arc<Operator>, Vec<Bound>)> {
    let reg = ts_ops::registry();
    // `aten::add.Tensor` names one overload; `aten::add` all of them (including the one
    // without an overload name).
    let exact = name.rsplit("::").next().is_some_and(|n| n.contains('.'));
    let candidates: Vec<Arc<Operator>> = match reg.find(name).filter(|_| exact) {
        Some(op) => vec![op],
        None => {
            let sym = Symbol::lookup(name).ok_or_else(|| unknown(name))?;
            let wants_out = kwargs.iter().any(|(k, _)| k == "out");
            reg.lookup(sym)
                .into_iter()
                .filter(|op| wants_out || !is_out_variant(op))
                .collect()
        }
    };
    if candidates.is_empty() {
        return Err(unknown(name));
    }
    for pass in [Pass::Strict, Pass::Lenient] {
        let mut best: Option<(u32, &Arc<Operator>, Vec<Bound>)> = None;
        for op in &candidates {
            if let Some((cost, bound)) = bind(&op.schema, args, kwargs, pass) {
                if best.as_ref().is_none_or(|(c, _, _)| cost < *c) {
                    best = Some((cost, op, bound));
                }
            }
        }
        if let Some((_, op, bound)) = best {
            return Ok((op.clone(), bound));
        }
    }
    let given: Vec<String> = args
        .iter()
        .map(describe)
        .chain(kwargs.iter().map(|(k, a)| format!("{k}={}", describe(a))))
        .collect();
    let mut msg = format!(
        "{name}() received an invalid combination of arguments - got ({}), but expected one of:",
        given.join(", ")
    );
    for op in &candidates {
        msg.push_str(&format!("\n * {}", op.schema));
    }
    Err(Error::new(ts_tensor::ErrorKind::TypeError, msg))
}

/// Runs a resolved operator on bound arguments (recording it when tracing).
pub fn run_bound(op: &Operator, bound: Vec<Bound>) -> Result<Vec<IValue>> {
    let mut stack: Vec<IValue> = bound.iter().map(|b| b.value.clone()).collect();
    // The tracer must not see the operators this one might call internally.
    let pause = crate::tracer::pause();
    match &op.kind {
        OperatorKind::Op(f) => f(&mut stack)?,
        OperatorKind::NodeOp(_) => {
            let (g, node) = node_for(op, &stack);
            let f = op.operation_for(&g, node)?;
            f(&mut stack)?;
        }
    }
    drop(pause);
    let n = op.schema.returns.len();
    if !op.schema.is_varret && stack.len() != n {
        return Err(Error::runtime(format!(
            "operator {} left {} values on the stack, its schema returns {n}",
            op.full_name(),
            stack.len()
        )));
    }
    crate::tracer::record_op(op, &bound, &stack)?;
    Ok(stack)
}

/// A one-node graph for a node-dependent operator, with inputs typed by the values.
fn node_for(op: &Operator, values: &[IValue]) -> (Graph, ts_ir::NodeId) {
    let mut g = Graph::new();
    let inputs: Vec<_> = values
        .iter()
        .map(|v| g.add_graph_input(ts_ir::constant_type(v)))
        .collect();
    let n = g.insert(op.symbol, &inputs, 0);
    for r in &op.schema.returns {
        g.add_output(n, r.ty.clone());
    }
    (g, n)
}

fn unknown(name: &str) -> Error {
    Error::runtime(format!("unknown operator '{name}'"))
}

/// True for `out=` overloads (a keyword-only argument the operator writes).
fn is_out_variant(op: &Operator) -> bool {
    op.schema.overload_name.starts_with("out")
        || op
            .schema
            .arguments
            .iter()
            .any(|a| a.kwarg_only && a.alias_info.as_ref().is_some_and(|i| i.is_write))
}

fn describe(a: &Arg) -> String {
    match a {
        Arg::DType(_) => "dtype".to_string(),
        Arg::Value(v) => v.type_of().annotation_str(),
    }
}

/// Binds `args`/`kwargs` to `schema`'s parameters; the total conversion cost and the bound
/// values, or `None` when they do not fit.
fn bind(
    schema: &ts_core::FunctionSchema,
    args: &[Arg],
    kwargs: &[(String, Arg)],
    pass: Pass,
) -> Option<(u32, Vec<Bound>)> {
    let params = &schema.arguments;
    let n_positional = params.iter().take_while(|p| !p.kwarg_only).count();
    let mut slots: Vec<Option<&Arg>> = vec![None; params.len()];
    let mut packed: Option<(usize, Arg)> = None;
    let mut cost = 0;
    if args.len() > n_positional {
        // `x.view(2, 3)`: trailing ints fill an int-list parameter whose successors have defaults.
        let p = (0..n_positional).find(|&i| {
            is_int_list(&params[i].ty)
                && i < args.len()
                && params[i + 1..n_positional]
                    .iter()
                    .all(|q| q.default.is_some())
                && args[i..].iter().all(is_int_like)
        })?;
        let items: Vec<IValue> = args[p..]
            .iter()
            .filter_map(|a| match a {
                Arg::Value(v) => Some(v.clone()),
                Arg::DType(_) => None,
            })
            .collect();
        packed = Some((p, Arg::Value(IValue::list(Type::any(), items))));
        for (i, a) in args[..p].iter().enumerate() {
            slots[i] = Some(a);
        }
        cost += 1;
    } else {
        for (i, a) in args.iter().enumerate() {
            slots[i] = Some(a);
        }
    }
    if let Some((p, a)) = &packed {
        slots[*p] = Some(a);
    }
    for (k, a) in kwargs {
        let i = params
            .iter()
            .position(|p| p.name == *k)
            .or_else(|| (k == "input").then(|| params.iter().position(|p| p.name == "self"))?)?;
        if slots[i].is_some() {
            return None;
        }
        slots[i] = Some(a);
    }
    let mut out = Vec::with_capacity(params.len());
    for (p, slot) in params.iter().zip(slots) {
        match slot {
            Some(a) => {
                let ty = p.real_ty.as_ref().unwrap_or(&p.ty);
                let (v, c) = fit(a, ty, p.n, pass)?;
                cost += c;
                let given = match a {
                    Arg::Value(v) => Some(v.clone()),
                    Arg::DType(d) => Some(IValue::Int(d.scalar_type_index())),
                };
                out.push(Bound { value: v, given });
            }
            None => out.push(Bound {
                value: p.default.clone()?,
                given: None,
            }),
        }
    }
    Some((cost, out))
}

fn is_int_list(ty: &TypeRef) -> bool {
    match &**ty {
        Type::List(e) => matches!(**e, Type::Int | Type::SymInt),
        Type::Optional(e) => is_int_list(e),
        _ => false,
    }
}

fn is_int_like(a: &Arg) -> bool {
    match a {
        Arg::Value(IValue::Int(_)) => true,
        Arg::Value(IValue::Tensor(t)) => t.numel() == 1 && t.dim() == 0 && is_integral(t.dtype()),
        _ => false,
    }
}

fn is_integral(d: DType) -> bool {
    !d.is_floating_point() && d != DType::Bool
}

/// A one-element tensor standing for a number (lenient pass only).
fn tensor_number(t: &Tensor, want_int: bool) -> Option<IValue> {
    if t.numel() != 1 || t.dim() != 0 {
        return None;
    }
    let d = t.dtype();
    if want_int {
        is_integral(d).then(|| IValue::Int(t.to_vec::<i64>()[0]))
    } else if d == DType::Bool {
        None
    } else {
        Some(IValue::Double(t.to_vec::<f64>()[0]))
    }
}

/// Converts one argument to a parameter type: the value and its cost.
fn fit(a: &Arg, ty: &TypeRef, n: Option<usize>, pass: Pass) -> Option<(IValue, u32)> {
    let v = match a {
        Arg::DType(d) => {
            return match &**ty {
                Type::ScalarType => Some((IValue::Int(d.scalar_type_index()), 0)),
                Type::Optional(e) if matches!(**e, Type::ScalarType) => {
                    Some((IValue::Int(d.scalar_type_index()), 0))
                }
                Type::Int | Type::Any if pass == Pass::Lenient => {
                    Some((IValue::Int(d.scalar_type_index()), 2))
                }
                _ => None,
            };
        }
        Arg::Value(v) => v,
    };
    match (&**ty, v) {
        (Type::Optional(_), IValue::None) => Some((IValue::None, 0)),
        (Type::Optional(e), _) => fit(a, e, n, pass),
        (Type::Any, _) => Some((v.clone(), 0)),
        (Type::Tensor(_), IValue::Tensor(_)) => Some((v.clone(), 0)),
        (Type::Tensor(_), IValue::Int(_) | IValue::Double(_) | IValue::Bool(_))
            if pass == Pass::Lenient =>
        {
            let t = match v {
                IValue::Int(i) => Tensor::from_vec(vec![*i], &[]),
                IValue::Bool(b) => Tensor::from_vec(vec![*b], &[]),
                IValue::Double(d) => Tensor::from_vec(vec![*d], &[])
                    .and_then(|t| t.to_dtype(ts_tensor::default_dtype(), false)),
                _ => return None,
            }
            .ok()?;
            Some((IValue::Tensor(t), 5))
        }
        (Type::Int | Type::SymInt, IValue::Int(_)) => Some((v.clone(), 0)),
        (Type::Int | Type::SymInt, IValue::Tensor(t)) if pass == Pass::Lenient => {
            Some((tensor_number(t, true)?, 3))
        }
        (Type::Float | Type::SymFloat, IValue::Double(_)) => Some((v.clone(), 0)),
        (Type::Float | Type::SymFloat, IValue::Int(i)) => Some((IValue::Double(*i as f64), 1)),
        (Type::Float | Type::SymFloat, IValue::Tensor(t)) if pass == Pass::Lenient => {
            Some((tensor_number(t, false)?, 3))
        }
        (Type::Bool | Type::SymBool, IValue::Bool(_)) => Some((v.clone(), 0)),
        (
            Type::Number,
            IValue::Int(_) | IValue::Double(_) | IValue::Bool(_) | IValue::Complex(_),
        ) => Some((v.clone(), 0)),
        (Type::Str, IValue::String(_)) => Some((v.clone(), 0)),
        (Type::Device, IValue::Device(_)) => Some((v.clone(), 0)),
        (Type::Device, IValue::String(s)) => {
            Some((IValue::Device(ts_tensor::Device::parse(s)?), 1))
        }
        (Type::ScalarType, IValue::Int(_)) if pass == Pass::Lenient => Some((v.clone(), 2)),
        (Type::Layout | Type::MemoryFormat | Type::QScheme, IValue::Int(_)) => Some((v.clone(), 0)),
        (Type::List(e), IValue::Int(_) | IValue::Tensor(_))
            if matches!(**e, Type::Int | Type::SymInt) && is_int_like(a) =>
        {
            let (x, c) = fit(a, e, None, pass)?;
            Some((IValue::list(e.clone(), vec![x; n.unwrap_or(1)]), c + 1))
        }
        (Type::List(e), IValue::List(_) | IValue::Tuple(_)) => {
            let items = match v {
                IValue::List(l) => l.items.read().clone(),
                IValue::Tuple(t) => t.elements.clone(),
                _ => return None,
            };
            if let Some(n) = n {
                // A fixed-size list also takes one value (repeated) or none (`stride=[]`).
                if items.len() > 1 && items.len() != n {
                    return None;
                }
            }
            let mut cost = 0;
            let mut out = Vec::with_capacity(items.len());
            for x in items {
                let (y, c) = fit(&Arg::Value(x), e, None, pass)?;
                cost += c;
                out.push(y);
            }
            if let (Some(n), 1) = (n, out.len()) {
                out = vec![out[0].clone(); n];
            }
            Some((IValue::list(e.clone(), out), cost))
        }
        (Type::Dimname | Type::Generator, _) => None,
        (Type::Tensor(_) | Type::Int | Type::SymInt | Type::Float | Type::SymFloat, _)
        | (Type::Bool | Type::SymBool | Type::Number | Type::Str | Type::Device, _)
        | (Type::ScalarType | Type::Layout | Type::MemoryFormat | Type::QScheme, _)
        | (Type::List(_), _) => None,
        _ => Some((crate::arguments::coerce(v.clone(), ty)?, 0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: Vec<f32>, s: &[i64]) -> Arg {
        Arg::Value(IValue::Tensor(Tensor::from_vec(v, s).unwrap()))
    }

    fn full_name(name: &str, args: &[Arg]) -> String {
        resolve(name, args, &[]).unwrap().0.full_name()
    }

    #[test]
    fn overloads_follow_the_values() {
        let x = t(vec![1.0, 2.0], &[2]);
        assert_eq!(
            full_name("aten::add", &[x.clone(), x.clone()]),
            "aten::add.Tensor"
        );
        assert_eq!(
            full_name("aten::add", &[x.clone(), Arg::Value(IValue::Int(2))]),
            "aten::add.Scalar"
        );
        assert_eq!(
            full_name(
                "aten::add",
                &[Arg::Value(IValue::Int(1)), Arg::Value(IValue::Int(2))]
            ),
            "aten::add.int"
        );
        assert_eq!(
            full_name("aten::view", &[x.clone(), Arg::Value(IValue::Int(2))]),
            "aten::view"
        );
        // Only a dtype fits a `ScalarType` parameter in the strict pass.
        assert_eq!(
            full_name("aten::to", &[x.clone(), Arg::DType(DType::Int32)]),
            "aten::to.dtype"
        );
        assert_eq!(
            full_name("aten::sum", &[x.clone(), Arg::Value(IValue::Int(0))]),
            "aten::sum.dim_IntList"
        );
    }

    #[test]
    fn trailing_ints_pack_into_a_size_list_and_keywords_bind_by_name() {
        let x = t((0..6).map(|i| i as f32).collect(), &[6]);
        let out = call_op_single(
            "aten::view",
            vec![x, Arg::Value(IValue::Int(2)), Arg::Value(IValue::Int(3))],
            vec![],
        )
        .unwrap();
        assert_eq!(out.as_tensor().unwrap().sizes().as_slice(), &[2, 3]);
        let y = t(vec![1.0, 2.0, 3.0, 4.0], &[2, 2]);
        let s = call_op_single(
            "aten::sum",
            vec![y],
            vec![("dim".into(), Arg::Value(IValue::Int(1)))],
        )
        .unwrap();
        assert_eq!(s.as_tensor().unwrap().to_vec::<f32>(), vec![3.0, 7.0]);
    }

    #[test]
    fn bad_arguments_name_the_candidates() {
        let x = t(vec![1.0], &[1]);
        let e = call_op("aten::add", vec![x, Arg::Value(IValue::str("a"))], vec![]).unwrap_err();
        assert!(e.message.contains("aten::add.Tensor"), "{}", e.message);
        assert!(call_op("aten::no_such_op", vec![], vec![]).is_err());
        let x = t(vec![1.0, 2.0], &[2]);
        let y = t(vec![1.0, 2.0, 3.0], &[3]);
        assert!(call_op("aten::add", vec![x, y], vec![]).is_err());
    }
}
