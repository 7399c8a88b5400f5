//! Entry points: call a function, a method of an object, or a bare graph.

use std::sync::Arc;

use ts_core::{IValue, Object};
use ts_ir::{Function, Graph};

use crate::code::Code;
use crate::error::ExecutionError;
use crate::executor::{executor_of, ProfilingRun};
use crate::interpreter::{run_to_completion, InterpreterState};

fn single(mut outs: Vec<IValue>) -> IValue {
    if outs.len() == 1 {
        outs.pop().unwrap_or_default()
    } else {
        IValue::tuple(outs)
    }
}

/// Installs the hook that lets operators call TorchScript methods (sorting objects by
/// `__lt__`); idempotent, done whenever an interpreter starts.
pub fn install_method_invoker() {
    ts_core::types::set_method_invoker(invoke_class_method);
}

fn invoke_class_method(
    m: &dyn ts_core::types::ClassMethod,
    args: Vec<IValue>,
) -> Result<IValue, ts_tensor::Error> {
    let f = m.as_any().downcast_ref::<Function>().ok_or_else(|| {
        ts_tensor::Error::runtime(format!(
            "method '{}' is not a TorchScript function",
            m.name()
        ))
    })?;
    call_function(f, args).map_err(ExecutionError::into_error)
}

/// Calls `f` with `args`; returns its result (a tuple when it has several outputs).
pub fn call_function(f: &Function, args: Vec<IValue>) -> Result<IValue, ExecutionError> {
    let plan = executor_of(f)?.plan_for_call(&args)?;
    // The calls a profiling run makes are profiling runs too.
    let _run = ProfilingRun::enter(&plan);
    let st = InterpreterState::new(plan.code.clone(), args)?;
    run_to_completion(st).map(single)
}

/// Calls method `name` of `obj` (with `self` prepended to `args`).
pub fn call_method(
    obj: &Arc<Object>,
    name: &str,
    mut args: Vec<IValue>,
) -> Result<IValue, ExecutionError> {
    let m = obj.class.find_method(name).ok_or_else(|| {
        ExecutionError::plain(ts_tensor::Error::runtime(format!(
            "'{}' object has no attribute or method '{name}'",
            obj.class.name
        )))
    })?;
    let f = m.as_any().downcast_ref::<Function>().ok_or_else(|| {
        ExecutionError::plain(ts_tensor::Error::runtime(format!(
            "method '{name}' is not a TorchScript function"
        )))
    })?;
    args.insert(0, IValue::Object(obj.clone()));
    call_function(f, args)
}

/// Runs a graph once (no plan cache): useful for tests and tools.
pub fn run_graph(g: &Graph, args: Vec<IValue>) -> Result<Vec<IValue>, ExecutionError> {
    let code = Arc::new(Code::new(g, "graph")?);
    run_to_completion(InterpreterState::new(code, args)?)
}
