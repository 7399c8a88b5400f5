//! In-place and `out=` overloads derived from functional ones.
//!
//! For every PyTorch schema `foo_.overload(Tensor(a!) self, ...)` (or `__ifoo__`) or
//! `foo.out(..., *, Tensor(a!) out)` with no binding of its own, a registered functional
//! overload of `foo` computes the result, which is then checked and copied into `self` or the
//! `out` tensors, as ATen's structured kernels behave:
//!
//! - arguments are matched by name and type; functional arguments the derived overload lacks
//!   take their defaults, except a factory's `dtype`, which is the `out` tensor's dtype
//!   (`torch.zeros(2, out=long_tensor)` fills longs);
//! - a single `out` may be of any dtype the result can be cast to ("result type Float can't be
//!   cast to the desired output type Long"), and is resized when its shape differs (PyTorch
//!   warns first unless it was empty; there are no warnings here);
//! - several outputs (`values`/`indices`) must have exactly the result's dtypes ("Expected out
//!   tensor to have dtype long int, but got float instead");
//! - a list `out` (`Tensor(a!)[] out`, returning nothing) must have one tensor per result.
//!
//! In-place overloads check that the result can be cast to `self`'s dtype and that it
//! broadcasts to `self`'s shape, then copy it in.

use std::sync::Arc;

use ts_core::{Argument, FunctionSchema, IValue, Type};
use ts_tensor::{resize_out_and_copy, DType, Error, Tensor};

use crate::registry::{op, Operator, OperatorKind, Registry};
use crate::stack::pop_n;

/// Where one argument of the functional overload comes from.
#[derive(Clone, Debug)]
enum Source {
    /// The derived overload's argument at this index.
    Arg(usize),
    /// The functional argument's default value.
    Default(IValue),
    /// The dtype of the (first) `out` tensor.
    OutDType,
}

fn writes(a: &Argument) -> bool {
    a.alias_info.as_ref().is_some_and(|ai| ai.is_write)
}

fn strip_optional(t: &Type) -> &Type {
    match t {
        Type::Optional(e) => e,
        t => t,
    }
}

/// How to call `target` with the arguments `given` (of a derived overload), by name and type;
/// `out_dtype` allows taking an unmatched `ScalarType? dtype` from the out tensor.
fn plan(
    given: &[(usize, &Argument)],
    target: &FunctionSchema,
    out_dtype: bool,
) -> Option<Vec<Source>> {
    let mut used = vec![false; given.len()];
    let mut plan = Vec::with_capacity(target.arguments.len());
    for ta in &target.arguments {
        if writes(ta) {
            return None;
        }
        if let Some(k) = given
            .iter()
            .position(|(_, g)| g.name == ta.name && g.ty == ta.ty)
        {
            used[k] = true;
            plan.push(Source::Arg(given[k].0));
        } else if out_dtype
            && ta.name == "dtype"
            && matches!(strip_optional(&ta.ty), Type::ScalarType | Type::Int)
        {
            plan.push(Source::OutDType);
        } else if let Some(d) = &ta.default {
            plan.push(Source::Default(d.clone()));
        } else {
            return None;
        }
    }
    used.iter().all(|u| *u).then_some(plan)
}

/// The registered functional overload of `name` callable with `given`, returning `n_returns`
/// values; overloads named like `preferred` win, then those needing fewest defaults.
fn find_functional(
    r: &Registry,
    name: &str,
    given: &[(usize, &Argument)],
    n_returns: usize,
    out_dtype: bool,
    preferred: &str,
) -> Option<(Arc<Operator>, Vec<Source>)> {
    let mut best: Option<(usize, Arc<Operator>, Vec<Source>)> = None;
    for o in r.lookup(ts_core::Symbol::new(name)) {
        let s = &o.schema;
        if s.returns.len() != n_returns || s.is_vararg || s.returns.iter().any(writes) {
            continue;
        }
        let Some(p) = plan(given, s, out_dtype) else {
            continue;
        };
        let defaults = p.iter().filter(|x| !matches!(x, Source::Arg(_))).count();
        let score = if s.overload_name == preferred {
            0
        } else {
            1 + defaults
        };
        if best.as_ref().is_none_or(|(b, _, _)| score < *b) {
            best = Some((score, o, p));
        }
    }
    best.map(|(_, o, p)| (o, p))
}

/// Runs `f` on the arguments `plan` builds from `args`, returning what it pushed.
fn run_functional(
    f: &Operator,
    plan: &[Source],
    args: &[IValue],
    out_dtype: Option<DType>,
) -> Result<Vec<IValue>, Error> {
    let crate::OperatorKind::Op(run) = &f.kind else {
        return Err(Error::runtime(
            "internal error: derived from a node operator",
        ));
    };
    let mut stack: Vec<IValue> = plan
        .iter()
        .map(|p| match p {
            Source::Arg(i) => args[*i].clone(),
            Source::Default(v) => v.clone(),
            Source::OutDType => {
                out_dtype.map_or(IValue::None, |d| IValue::Int(d.scalar_type_index()))
            }
        })
        .collect();
    run(&mut stack)?;
    Ok(stack)
}

fn tensor_of(v: IValue, what: &str) -> Result<Tensor, Error> {
    match v {
        IValue::Tensor(t) => Ok(t),
        v => Err(Error::runtime(format!(
            "{what}: expected a tensor, got {}",
            v.tag_name()
        ))),
    }
}

fn tensors_of(v: &IValue, what: &str) -> Result<Vec<Tensor>, Error> {
    v.list_items()
        .ok_or_else(|| Error::runtime(format!("{what}: expected a list of tensors")))?
        .into_iter()
        .map(|x| tensor_of(x, what))
        .collect()
}

/// Writes one of several results into its `out` tensor: dtypes must agree exactly.
fn copy_exact(out: &Tensor, result: &Tensor) -> Result<Tensor, Error> {
    if out.dtype() != result.dtype() {
        return Err(Error::runtime(format!(
            "Expected out tensor to have dtype {}, but got {} instead",
            result.dtype().cpp_name(),
            out.dtype().cpp_name()
        )));
    }
    resize_out_and_copy(out, result)
}

/// `foo` for `foo_` or `__foo__` for `__ifoo__`: the functional name of an in-place operator.
fn functional_name_of_in_place(name: &str) -> Option<String> {
    let short = name.strip_prefix("aten::")?;
    if let Some(inner) = short.strip_prefix("__i").and_then(|x| x.strip_suffix("__")) {
        return Some(format!("aten::__{inner}__"));
    }
    if short.ends_with("__") {
        return None;
    }
    short.strip_suffix('_').map(|b| format!("aten::{b}"))
}

/// The functional overload name an out overload is most likely derived from (`low_out` →
/// `low`, `out` → ``).
fn preferred_overload(ov: &str) -> String {
    for suffix in ["_out", "out"] {
        if let Some(b) = ov.strip_suffix(suffix) {
            return b.to_string();
        }
    }
    ov.to_string()
}

/// The in-place operation of `s` computed by its functional overload, if it has one.
fn in_place_op(r: &Registry, s: &FunctionSchema) -> Option<OperatorKind> {
    let base = functional_name_of_in_place(&s.name)?;
    let written: Vec<usize> = (0..s.arguments.len())
        .filter(|&i| writes(&s.arguments[i]))
        .collect();
    if written != [0] || s.returns.len() != 1 || !matches!(*s.arguments[0].ty, Type::Tensor(_)) {
        return None;
    }
    let given: Vec<(usize, &Argument)> = s.arguments.iter().enumerate().collect();
    let (f, plan) = find_functional(r, &base, &given, 1, false, &s.overload_name)?;
    let n = s.arguments.len();
    Some(OperatorKind::Op(op(move |st| {
        let args = pop_n(st, n)?;
        let self_t = args[0]
            .as_tensor()
            .cloned()
            .ok_or_else(|| Error::runtime("in-place operator expects a tensor self"))?;
        let mut res = run_functional(&f, &plan, &args, None)?;
        let result = tensor_of(res.pop().unwrap_or(IValue::None), "in-place operator")?;
        ts_tensor::promote::check_can_cast(result.dtype(), self_t.dtype())?;
        self_t.copy_(&result)?;
        st.push(IValue::Tensor(self_t));
        Ok(())
    })))
}

/// The `out=` operation of `s` computed by its functional overload, if it has one.
fn out_op(r: &Registry, s: &FunctionSchema) -> Option<OperatorKind> {
    let written: Vec<usize> = (0..s.arguments.len())
        .filter(|&i| writes(&s.arguments[i]))
        .collect();
    let &first_out = written.first()?;
    // The outs are the trailing keyword-only arguments that are written, and nothing else is.
    let n = s.arguments.len();
    let tail_ok = written.iter().enumerate().all(|(k, &i)| i == first_out + k)
        && *written.last().unwrap_or(&0) + 1 == n
        && written.iter().all(|&i| s.arguments[i].kwarg_only);
    if !tail_ok {
        return None;
    }
    let list_out = written.len() == 1 && matches!(*s.arguments[first_out].ty, Type::List(_));
    let n_returns = if list_out {
        if !s.returns.is_empty() {
            return None;
        }
        1
    } else {
        if s.returns.len() != written.len() {
            return None;
        }
        written.len()
    };
    let given: Vec<(usize, &Argument)> = s.arguments[..first_out].iter().enumerate().collect();
    let preferred = preferred_overload(&s.overload_name);
    let (f, plan) = find_functional(r, &s.name, &given, n_returns, true, &preferred)?;
    if list_out && !matches!(*f.schema.returns[0].ty, Type::List(_)) {
        return None;
    }
    let n_out = written.len();
    Some(OperatorKind::Op(op(move |st| {
        let args = pop_n(st, n)?;
        let (inputs, outs) = args.split_at(first_out);
        if list_out {
            let outs = tensors_of(&outs[0], "out=")?;
            let dtype = outs.first().map(|t| t.dtype());
            let res = run_functional(&f, &plan, inputs, dtype)?;
            let results = tensors_of(res.last().unwrap_or(&IValue::None), "out=")?;
            if results.len() != outs.len() {
                return Err(Error::runtime(format!(
                    "Expected an out list of {} tensors, but got {}",
                    results.len(),
                    outs.len()
                )));
            }
            for (o, t) in outs.iter().zip(&results) {
                resize_out_and_copy(o, t)?;
            }
            return Ok(());
        }
        let outs: Vec<Tensor> = outs
            .iter()
            .map(|v| tensor_of(v.clone(), "out="))
            .collect::<Result<_, _>>()?;
        let res = run_functional(&f, &plan, inputs, Some(outs[0].dtype()))?;
        if res.len() != n_out {
            return Err(Error::runtime(
                "internal error: functional overload returned the wrong number of values",
            ));
        }
        for (o, v) in outs.iter().zip(res) {
            let t = tensor_of(v, "out=")?;
            let written = if n_out == 1 {
                resize_out_and_copy(o, &t)?
            } else {
                copy_exact(o, &t)?
            };
            st.push(IValue::Tensor(written));
        }
        Ok(())
    })))
}

/// Registers every derivable in-place and out= overload not bound directly.
pub fn register(r: &Registry) {
    for line in crate::schema_table::all_lines() {
        // Only schemas that write an argument are derived, and only those not registered:
        // both are read off the text, so most lines are never parsed (and those that are, only
        // when first looked up).
        if !line.starts_with("aten::") || !line.contains('!') {
            continue;
        }
        let head = &line[..line.find('(').unwrap_or(line.len())];
        // `detach_` drops autograd history: copying `detach(self)` into `self` would not
        // (autograd's own binding registers it).
        if r.is_defined(head) || head == "aten::detach_" {
            continue;
        }
        r.define_fallback(
            line,
            Box::new(|r, s| {
                if s.is_vararg {
                    None
                } else if s.arguments.iter().any(|a| writes(a) && a.kwarg_only) {
                    out_op(r, s)
                } else if s.arguments.first().is_some_and(writes) {
                    in_place_op(r, s)
                } else {
                    None
                }
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::autograd::ops::call;

    fn t(v: &[f64], shape: &[i64]) -> Tensor {
        Tensor::from_vec(v.to_vec(), shape).unwrap()
    }

    fn tv(x: &Tensor) -> IValue {
        IValue::Tensor(x.clone())
    }

    #[test]
    fn out_resizes_a_wrong_sized_out_and_returns_it() {
        let out = ts_tensor::factory::zeros(&[5], Some(DType::Float64)).unwrap();
        let a = t(&[1.0, 2.0], &[2]);
        let b = t(&[2.0, 0.0], &[2]);
        // nextafter.out has no binding of its own: it is derived from nextafter.
        let r = call("aten::nextafter.out", vec![tv(&a), tv(&b), tv(&out)]).unwrap();
        let IValue::Tensor(ret) = &r[0] else {
            panic!("no tensor")
        };
        assert!(Tensor::is_same(ret, &out));
        assert_eq!(out.sizes().as_slice(), &[2]);
        assert_eq!(
            out.to_vec::<f64>(),
            vec![1.0f64.next_up(), 2.0f64.next_down()]
        );
    }

    #[test]
    fn out_checks_that_the_result_can_be_cast() {
        let out = ts_tensor::factory::zeros(&[2], Some(DType::Int64)).unwrap();
        let a = t(&[1.0, 2.0], &[2]);
        let e = call("aten::nextafter.out", vec![tv(&a), tv(&a), tv(&out)]).unwrap_err();
        assert_eq!(
            e.message,
            "result type Double can't be cast to the desired output type Long"
        );
    }

    #[test]
    fn multi_output_outs_need_the_exact_dtypes() {
        let x = t(&[1.0, 5.0, 3.0, 4.0, 2.0, 6.0], &[2, 3]);
        let v = ts_tensor::factory::empty(&[0], Some(DType::Float64)).unwrap();
        let i = ts_tensor::factory::empty(&[0], Some(DType::Int64)).unwrap();
        let args = |i: &Tensor| vec![tv(&x), IValue::Int(1), IValue::Bool(false), tv(&v), tv(i)];
        let r = call("aten::max.dim_max", args(&i)).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(v.to_vec::<f64>(), vec![5.0, 6.0]);
        assert_eq!(i.to_vec::<i64>(), vec![1, 2]);
        let wrong = ts_tensor::factory::empty(&[0], Some(DType::Float32)).unwrap();
        let e = call("aten::max.dim_max", args(&wrong)).unwrap_err();
        assert_eq!(
            e.message,
            "Expected out tensor to have dtype long int, but got float instead"
        );
    }

    #[test]
    fn list_outs_get_one_tensor_per_result() {
        let x = t(&[1.0, 2.0, 3.0, 4.0], &[4]);
        let outs: Vec<Tensor> = (0..2)
            .map(|_| ts_tensor::factory::empty(&[0], Some(DType::Float64)).unwrap())
            .collect();
        let list = IValue::tensor_list(outs.clone());
        call(
            "aten::split_copy.Tensor_out",
            vec![tv(&x), IValue::Int(2), IValue::Int(0), list],
        )
        .unwrap();
        assert_eq!(outs[1].to_vec::<f64>(), vec![3.0, 4.0]);
        let short = IValue::tensor_list(outs[..1].to_vec());
        let e = call(
            "aten::split_copy.Tensor_out",
            vec![tv(&x), IValue::Int(2), IValue::Int(0), short],
        )
        .unwrap_err();
        assert!(e.message.contains("out list of 2 tensors"), "{}", e.message);
    }

    #[test]
    fn factories_take_the_out_dtype() {
        let out = ts_tensor::factory::empty(&[0], Some(DType::Int64)).unwrap();
        call(
            "aten::full.out",
            vec![IValue::int_list([2]), IValue::Double(1.5), tv(&out)],
        )
        .unwrap();
        assert_eq!(out.dtype(), DType::Int64);
        assert_eq!(out.to_vec::<i64>(), vec![1, 1]);
    }

    #[test]
    fn in_place_checks_the_cast_and_the_shape() {
        let a = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
        let e = call("aten::polygamma_", vec![tv(&a), IValue::Int(1)]).unwrap_err();
        assert_eq!(
            e.message,
            "result type Float can't be cast to the desired output type Long"
        );
        let x = Tensor::from_vec(vec![4i64, 6], &[2]).unwrap();
        let r = call(
            "aten::lcm_",
            vec![tv(&x), tv(&Tensor::from_vec(vec![6i64, 4], &[2]).unwrap())],
        )
        .unwrap();
        assert!(matches!(&r[0], IValue::Tensor(t) if Tensor::is_same(t, &x)));
        assert_eq!(x.to_vec::<i64>(), vec![12, 12]);
        let small = Tensor::from_vec(vec![4i64], &[1]).unwrap();
        let e = call("aten::lcm_", vec![tv(&small), tv(&x)]).unwrap_err();
        assert!(
            e.message.contains("doesn't match the broadcast shape"),
            "{}",
            e.message
        );
    }

    #[test]
    fn out_refuses_arguments_that_require_grad() {
        let a = t(&[1.0, 2.0], &[2]);
        a.set_requires_grad(true);
        let out = ts_tensor::factory::empty(&[0], Some(DType::Float64)).unwrap();
        let e = call("aten::nextafter.out", vec![tv(&a), tv(&a), tv(&out)]).unwrap_err();
        assert_eq!(
            e.message,
            "nextafter(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad."
        );
        let _no_grad = ts_tensor::autograd::GradModeGuard::new(false);
        assert!(call("aten::nextafter.out", vec![tv(&a), tv(&a), tv(&out)]).is_ok());
    }

    #[test]
    fn in_place_names() {
        assert_eq!(
            functional_name_of_in_place("aten::add_").as_deref(),
            Some("aten::add")
        );
        assert_eq!(
            functional_name_of_in_place("aten::__iand__").as_deref(),
            Some("aten::__and__")
        );
        assert_eq!(functional_name_of_in_place("aten::__and__"), None);
        assert_eq!(functional_name_of_in_place("aten::add"), None);
        assert_eq!(preferred_overload("low_generator_out"), "low_generator");
        assert_eq!(preferred_overload("out"), "");
        assert_eq!(preferred_overload("values"), "values");
    }
}
