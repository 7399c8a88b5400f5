//! `ts-runtime`: runs TorchScript (PyTorch's `jit/runtime` and `jit/api`): [`Code`], the
//! interpreter with fork/wait, the graph executor, calling functions and methods, calling
//! operators by name ([`dispatch`]) and the tracer ([`tracer`]).

pub mod arguments;
pub mod code;
mod differentiable_graph;
pub mod dispatch;
pub mod error;
pub mod executor;
pub mod interpreter;
pub mod peephole;
pub mod run;
pub mod tracer;

pub use arguments::{bind_arguments, coerce};
pub use code::{Code, Instr};
pub use error::{ExecutionError, TraceFrame};
pub use executor::{
    code_for_call, executor_of, last_executed_optimized_graph, ArgumentSpec, ExecutionPlan,
    GraphExecutor, ProfilingRun,
};
pub use interpreter::{run_to_completion, InterpreterState, Step};
pub use run::{call_function, call_method, run_graph};
