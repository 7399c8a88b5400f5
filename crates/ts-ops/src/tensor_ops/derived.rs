//! In-place and `out=` overloads derived from functional ones.
//!
//! For every PyTorch schema `foo_.overload(Tensor(a!) self, ...)` or `foo.out(..., *, Tensor(a!)
//! out)` with no binding of its own, the functional overload of `foo` with the same arguments
//! computes the result, which is then cast-checked and copied into `self` or `out`, as ATen does.

use std::sync::Arc;

use ts_core::{FunctionSchema, IValue};
use ts_tensor::{resize_out_and_copy, Error};

use crate::registry::{op, Operator, Registry};
use crate::stack::pop_n;

fn same_args(a: &[ts_core::Argument], b: &[ts_core::Argument]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.name == y.name && x.ty == y.ty && x.kwarg_only == y.kwarg_only)
}

fn find_functional(r: &Registry, name: &str, args: &[ts_core::Argument]) -> Option<Arc<Operator>> {
    r.lookup(ts_core::Symbol::new(name))
        .into_iter()
        .find(|o| same_args(&o.schema.arguments, args) && o.schema.returns.len() == 1)
}

fn run_functional(f: &Operator, args: Vec<IValue>) -> Result<ts_tensor::Tensor, Error> {
    let crate::OperatorKind::Op(run) = &f.kind else {
        return Err(Error::runtime(
            "internal error: derived from a node operator",
        ));
    };
    let mut stack = args;
    run(&mut stack)?;
    match stack.pop() {
        Some(IValue::Tensor(t)) => Ok(t),
        _ => Err(Error::runtime(
            "internal error: functional overload returned no tensor",
        )),
    }
}

/// Registers every derivable in-place and out= overload not bound directly.
pub fn register(r: &Registry) {
    for line in crate::schema_table::all_lines() {
        if !line.starts_with("aten::") {
            continue;
        }
        let Ok(s) = FunctionSchema::parse(line) else {
            continue;
        };
        let full = if s.overload_name.is_empty() {
            s.name.clone()
        } else {
            format!("{}.{}", s.name, s.overload_name)
        };
        // `detach_` drops autograd history: copying `detach(self)` into `self` would not
        // (autograd's own binding registers it).
        if r.find(&full).is_some() || s.returns.len() != 1 || full == "aten::detach_" {
            continue;
        }
        let writes = |a: &ts_core::Argument| a.alias_info.as_ref().is_some_and(|ai| ai.is_write);
        if let Some(base) = s.name.strip_suffix('_') {
            // In-place: self is written and returned.
            if s.arguments.first().is_some_and(writes) && !s.name.ends_with("__") {
                let mut fargs = s.arguments.clone();
                fargs[0].alias_info = None;
                if let Some(f) = find_functional(r, base, &fargs) {
                    let n = s.arguments.len();
                    let _ = r.register(
                        line,
                        op(move |st| {
                            let args = pop_n(st, n)?;
                            let self_t = args[0].as_tensor().cloned().ok_or_else(|| {
                                Error::runtime("in-place operator expects a tensor self")
                            })?;
                            let result = run_functional(&f, args)?;
                            ts_tensor::promote::check_can_cast(result.dtype(), self_t.dtype())?;
                            self_t.copy_(&result)?;
                            st.push(IValue::Tensor(self_t));
                            Ok(())
                        }),
                    );
                }
            }
            continue;
        }
        // out=: trailing kwarg-only written tensors.
        let outs: Vec<usize> = s
            .arguments
            .iter()
            .enumerate()
            .filter(|(_, a)| a.kwarg_only && writes(a))
            .map(|(i, _)| i)
            .collect();
        if outs.len() != 1 || outs[0] + 1 != s.arguments.len() {
            continue;
        }
        let fargs = &s.arguments[..outs[0]];
        if let Some(f) = find_functional(r, &s.name, fargs) {
            let n = s.arguments.len();
            let _ = r.register(
                line,
                op(move |st| {
                    let mut args = pop_n(st, n)?;
                    let out = match args.pop() {
                        Some(IValue::Tensor(t)) => t,
                        _ => return Err(Error::runtime("out= expects a tensor")),
                    };
                    let result = run_functional(&f, args)?;
                    st.push(IValue::Tensor(resize_out_and_copy(&out, &result)?));
                    Ok(())
                }),
            );
        }
    }
}
