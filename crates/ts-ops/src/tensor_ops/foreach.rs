//! `_foreach_*`: the list versions of pointwise operators that optimizers use.
//!
//! Every `_foreach_foo` overload of PyTorch's table is derived from a registered overload of
//! `foo` applied element by element: a `Tensor[]` argument gives its i-th tensor, a `Scalar[]`
//! (or the 1-D `Tensor scalars` of `addcmul`/`addcdiv`) its i-th number, and anything else is
//! passed unchanged (`_foreach_add.Tensor`'s single `other` broadcasts to every element). The
//! element overload is the one whose leading arguments have those types positionally, with
//! defaults for the rest (`_foreach_add.Scalar` → `add.Scalar(self, other, alpha=1)`); where
//! PyTorch's list op has no same-named element op, the mapping is explicit (`maximum` with a
//! number is `clamp_min`, `norm` is `linalg_vector_norm`). `_foreach_foo_` writes each
//! result into `self[i]` (cast-checked), `.out` into `out[i]`.

use std::sync::Arc;

use ts_core::{Argument, FunctionSchema, IValue, Type, TypeRef};
use ts_tensor::{resize_out_and_copy, Error, Scalar, Tensor};

use crate::coverage::full_name_of;
use crate::registry::{op, Operator, OperatorKind, Registry};
use crate::stack::pop_n;

/// How one foreach argument feeds the element operator.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Feed {
    /// `Tensor[]`: the i-th tensor.
    TensorList,
    /// `Scalar[]`: the i-th number.
    ScalarList,
    /// A 1-D tensor of per-element numbers.
    ScalarTensor,
    /// The same value for every element.
    Same,
}

/// The element operator's type for a foreach argument.
fn element_type(a: &Argument, base: &str) -> (Feed, TypeRef) {
    match &*a.ty {
        Type::List(e) if matches!(**e, Type::Tensor(_)) => (Feed::TensorList, Type::tensor()),
        Type::List(e) if matches!(**e, Type::Number) => (Feed::ScalarList, Type::number()),
        Type::Tensor(_) if a.name == "scalars" && matches!(base, "addcmul" | "addcdiv") => {
            (Feed::ScalarTensor, Type::number())
        }
        _ => (Feed::Same, a.ty.clone()),
    }
}

fn same_type(a: &Type, b: &Type) -> bool {
    match (a, b) {
        (Type::Tensor(_), Type::Tensor(_)) => true,
        (a, b) => a == b,
    }
}

/// The element overload of `name` taking `types` as its leading arguments (the rest
/// defaulted), with those defaults.
fn element_op(r: &Registry, name: &str, types: &[TypeRef]) -> Option<(Arc<Operator>, Vec<IValue>)> {
    r.lookup(ts_core::Symbol::new(name))
        .into_iter()
        .find_map(|o| {
            let s = &o.schema;
            if s.returns.len() != 1
                || s.arguments.len() < types.len()
                || s.arguments
                    .iter()
                    .any(|a| a.alias_info.as_ref().is_some_and(|i| i.is_write))
            {
                return None;
            }
            let lead_ok = s
                .arguments
                .iter()
                .zip(types)
                .all(|(a, t)| same_type(&a.ty, t));
            let rest: Option<Vec<IValue>> = s.arguments[types.len()..]
                .iter()
                .map(|a| a.default.clone())
                .collect();
            (lead_ok).then_some(())?;
            Some((o.clone(), rest?))
        })
}

/// A per-element computation: the element operator, or a composite of tensor methods.
#[derive(Clone)]
enum Element {
    Op(Arc<Operator>, Vec<IValue>),
    /// `_foreach_norm`: `linalg_vector_norm(x, ord, dtype=dtype)`.
    Norm(Arc<Operator>),
    /// `_foreach_powsum`: `sum(|x| ** ord)` (the norm before its root).
    PowSum,
    /// `_foreach_copy`: `self` with `src` copied in.
    Copy,
    /// `_foreach_zero`: zeros shaped like `self`.
    Zero,
}

fn call(f: &Operator, mut st: Vec<IValue>) -> Result<Tensor, Error> {
    let crate::OperatorKind::Op(run) = &f.kind else {
        return Err(Error::runtime(
            "internal error: foreach over a node operator",
        ));
    };
    run(&mut st)?;
    match st.pop() {
        Some(IValue::Tensor(t)) => Ok(t),
        _ => Err(Error::runtime(
            "internal error: element operator returned no tensor",
        )),
    }
}

fn run_element(e: &Element, args: Vec<IValue>) -> Result<Tensor, Error> {
    let t0 = || match &args[0] {
        IValue::Tensor(t) => Ok(t.clone()),
        v => Err(Error::runtime(format!(
            "expected a tensor, got {}",
            v.tag_name()
        ))),
    };
    let scalar = |i: usize| -> Result<Scalar, Error> {
        args[i]
            .as_scalar()
            .ok_or_else(|| Error::runtime("expected a number"))
    };
    let dtype = |i: usize| -> Result<Option<ts_tensor::DType>, Error> {
        match &args[i] {
            IValue::None => Ok(None),
            IValue::Int(x) => Ok(ts_tensor::DType::from_scalar_type_index(*x)),
            v => Err(Error::runtime(format!(
                "expected a dtype, got {}",
                v.tag_name()
            ))),
        }
    };
    match e {
        Element::Op(f, defaults) => {
            let mut st = args.clone();
            st.extend(defaults.iter().cloned());
            call(f, st)
        }
        Element::Norm(f) => {
            let st = vec![
                args[0].clone(),
                args[1].clone(),
                IValue::None,
                IValue::Bool(false),
                args[2].clone(),
            ];
            call(f, st)
        }
        Element::PowSum => {
            let x = t0()?;
            let x = match dtype(2)? {
                Some(d) => x.to_dtype(d, false)?,
                None => x,
            };
            x.abs()?.pow_scalar(scalar(1)?)?.sum(None, false, None)
        }
        Element::Copy => {
            let out = t0()?.clone_tensor()?;
            match &args[1] {
                IValue::Tensor(src) => out.copy_(src)?,
                v => {
                    return Err(Error::runtime(format!(
                        "expected a tensor, got {}",
                        v.tag_name()
                    )))
                }
            }
            Ok(out)
        }
        Element::Zero => ts_tensor::ops::factory::zeros_like(&t0()?, None),
    }
}

/// The number of elements and the per-element argument lists of one call.
fn element_args(feeds: &[Feed], args: &[IValue]) -> Result<Vec<Vec<IValue>>, Error> {
    let mut n: Option<usize> = None;
    let mut lists: Vec<Option<Vec<IValue>>> = Vec::with_capacity(feeds.len());
    for (f, v) in feeds.iter().zip(args) {
        let items =
            match f {
                Feed::TensorList | Feed::ScalarList => Some(v.list_items().ok_or_else(|| {
                    Error::runtime(format!("expected a list, got {}", v.tag_name()))
                })?),
                Feed::ScalarTensor => {
                    let t = v
                        .as_tensor()
                        .ok_or_else(|| Error::runtime("expected a tensor of scalars"))?;
                    if t.dim() != 1 {
                        return Err(Error::runtime(format!(
                            "Expected scalars to be a 1-D tensor, got {}-D",
                            t.dim()
                        )));
                    }
                    let flat = t.to_dtype(ts_tensor::DType::Float64, false)?;
                    let mut items = Vec::new();
                    for i in 0..t.sizes()[0] {
                        items.push(IValue::Double(flat.select(0, i)?.item()?.to_f64()));
                    }
                    Some(items)
                }
                Feed::Same => None,
            };
        if let Some(items) = &items {
            match n {
                None => n = Some(items.len()),
                Some(k) if k != items.len() => {
                    return Err(Error::runtime(format!(
                        "Tensor lists must have the same number of tensors, got {k} and {}",
                        items.len()
                    )))
                }
                _ => {}
            }
        }
        lists.push(items);
    }
    let n = n.unwrap_or(0);
    if n == 0 {
        return Err(Error::runtime("Tensor list must have at least one tensor."));
    }
    Ok((0..n)
        .map(|i| {
            lists
                .iter()
                .zip(args)
                .map(|(l, v)| match l {
                    Some(items) => items[i].clone(),
                    None => v.clone(),
                })
                .collect()
        })
        .collect())
}

fn tensor_items(v: &IValue, what: &str) -> Result<Vec<Tensor>, Error> {
    v.list_items()
        .ok_or_else(|| Error::runtime(format!("{what}: expected a list of tensors")))?
        .into_iter()
        .map(|x| match x {
            IValue::Tensor(t) => Ok(t),
            v => Err(Error::runtime(format!(
                "{what}: expected a tensor, got {}",
                v.tag_name()
            ))),
        })
        .collect()
}

/// The element computation for `_foreach_{base}` with these element argument types.
fn element_for(r: &Registry, base: &str, types: &[TypeRef]) -> Option<Element> {
    match base {
        "norm" => return r.find("aten::linalg_vector_norm").map(Element::Norm),
        "powsum" => return Some(Element::PowSum),
        "copy" => return Some(Element::Copy),
        "zero" => return Some(Element::Zero),
        _ => {}
    }
    let scalar_second = types.get(1).is_some_and(|t| matches!(**t, Type::Number));
    let name = match base {
        "maximum" if scalar_second => "clamp_min",
        "minimum" if scalar_second => "clamp_max",
        b => b,
    };
    let (f, d) = element_op(r, &format!("aten::{name}"), types)?;
    Some(Element::Op(f, d))
}

/// Registers every `_foreach_*` schema whose element operator exists.
pub fn register(r: &Registry) {
    for line in crate::schema_table::all_lines() {
        if !line.starts_with("aten::_foreach_") || r.is_defined(full_name_of(line)) {
            continue;
        }
        r.define(line, Box::new(foreach_op));
    }
}

/// The operation of `_foreach_` schema `s`, when its element operator exists.
fn foreach_op(r: &Registry, s: &FunctionSchema) -> Option<OperatorKind> {
    let raw = s.name.trim_start_matches("aten::_foreach_");
    let in_place = raw.ends_with('_');
    let base = raw.trim_end_matches('_').to_string();
    let out_idx = s
        .arguments
        .iter()
        .position(|a| a.kwarg_only && a.alias_info.as_ref().is_some_and(|i| i.is_write));
    let n_in = out_idx.unwrap_or(s.arguments.len());
    let (feeds, types): (Vec<Feed>, Vec<TypeRef>) = s.arguments[..n_in]
        .iter()
        .map(|a| element_type(a, &base))
        .unzip();
    let elem = element_for(r, &base, &types)?;
    let n = s.arguments.len();
    Some(OperatorKind::Op(op(move |st| {
        let args = pop_n(st, n)?;
        let per = element_args(&feeds, &args[..n_in])?;
        if in_place {
            let selves = tensor_items(&args[0], "self")?;
            for (t, a) in selves.iter().zip(per) {
                let res = run_element(&elem, a)?;
                ts_tensor::promote::check_can_cast(res.dtype(), t.dtype())?;
                t.copy_(&res)?;
            }
            return Ok(());
        }
        let results: Vec<Tensor> = per
            .into_iter()
            .map(|a| run_element(&elem, a))
            .collect::<Result<_, _>>()?;
        if out_idx.is_some() {
            let outs = tensor_items(&args[n_in], "out")?;
            if outs.len() != results.len() {
                return Err(Error::runtime(format!(
                    "Tensor lists must have the same number of tensors, got {} and {}",
                    results.len(),
                    outs.len()
                )));
            }
            for (o, t) in outs.iter().zip(&results) {
                resize_out_and_copy(o, t)?;
            }
            return Ok(());
        }
        st.push(IValue::tensor_list(results));
        Ok(())
    })))
}
