//! Compiling TorchScript source: [`compile`] → [`CompilationUnit`] → [`Function`].

use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};
use crate::graph_view::Graph;
use crate::ivalue::{IValue, IntoArgs};
use crate::module::{Module, PreparedCall};

/// Compiles TorchScript source (the Python subset `torch.jit.script` accepts) into a unit of
/// functions.
///
/// ```
/// let cu = torchscript::compile(r#"
/// def clamp_sum(xs: List[int], hi: int) -> int:
///     total = 0
///     for x in xs:
///         total += min(x, hi)
///     return total
/// "#)?;
/// let r = cu.function("clamp_sum")?.call((vec![1i64, 5, 9], 4i64))?;
/// assert_eq!(i64::try_from(r)?, 9);
/// # Ok::<(), torchscript::Error>(())
/// ```
pub fn compile(source: &str) -> Result<CompilationUnit> {
    compile_named(source, "<string>")
}

/// Like [`compile`], naming the source file in error messages and graph comments.
pub fn compile_named(source: &str, file_name: &str) -> Result<CompilationUnit> {
    compile_with(source, file_name, true)
}

/// Compiles; `clean` runs PyTorch's cleanup passes on every graph once (as `torch.jit.script`
/// does), otherwise graphs stay as the emitter made them.
pub fn compile_with(source: &str, file_name: &str, clean: bool) -> Result<CompilationUnit> {
    crate::libraries::ensure_registered();
    let src = ts_core::Source::new(source.to_string(), Some(file_name.to_string()), 1);
    let cu = ts_frontend::compile_source(&src)?;
    for f in cu.functions().into_iter().filter(|_| clean) {
        if let Some(g) = f.graph() {
            let mut g = (*g).clone();
            ts_passes::run_cleanup_passes(&mut g);
            f.set_graph(g);
        }
    }
    Ok(CompilationUnit { cu })
}

/// Compiled functions (and classes) of one source.
#[derive(Clone)]
pub struct CompilationUnit {
    cu: Arc<ts_ir::CompilationUnit>,
}

impl CompilationUnit {
    /// The function `name`.
    pub fn function(&self, name: &str) -> Result<Function> {
        self.cu
            .find_function(name)
            .map(|f| Function { f })
            .ok_or_else(|| Error::not_found(format!("no function named '{name}'")))
    }

    /// The names of the unit's functions.
    pub fn function_names(&self) -> Vec<String> {
        self.cu
            .functions()
            .iter()
            .map(|f| f.qualified_name().to_string())
            .collect()
    }
}

impl std::fmt::Debug for CompilationUnit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.function_names()).finish()
    }
}

/// A compiled TorchScript function.
#[derive(Clone)]
pub struct Function {
    f: Arc<ts_ir::Function>,
}

impl Function {
    /// The function's name.
    pub fn name(&self) -> &str {
        self.f.qualified_name()
    }

    /// Calls the function with positional arguments. Inside a trace, the call runs and its
    /// graph is inlined into the trace (control flow included).
    pub fn call(&self, args: impl IntoArgs) -> Result<IValue> {
        self.call_with_kwargs(args, &[])
    }

    /// Calls the function with positional and keyword arguments.
    pub fn call_with_kwargs(
        &self,
        args: impl IntoArgs,
        kwargs: &[(&str, IValue)],
    ) -> Result<IValue> {
        let schema = self.schema_ref()?;
        let bound = crate::calling::bind(&schema, args.into_args(), kwargs, false)?;
        if crate::trace::is_tracing() {
            return Ok(IValue::from_core(ts_runtime::tracer::call_function(
                &self.f, bound,
            )?));
        }
        Ok(IValue::from_core(ts_runtime::call_function(
            &self.f, bound,
        )?))
    }

    /// Binds arguments once for repeated calls ([`PreparedCall::run`]): what benchmarks time.
    pub fn prepare(&self, args: impl IntoArgs) -> Result<PreparedCall> {
        let bound = crate::calling::bind(&self.schema_ref()?, args.into_args(), &[], false)?;
        Ok(PreparedCall::new(self.f.clone(), bound))
    }

    fn schema_ref(&self) -> Result<ts_core::FunctionSchema> {
        self.f.try_schema().ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported,
                format!("function '{}' has no schema", self.name()),
            )
        })
    }

    /// The signature, as PyTorch prints a schema.
    pub fn schema(&self) -> Result<String> {
        Ok(self.schema_ref()?.to_string())
    }

    /// The graph as PyTorch prints `fn.graph` (with source comments).
    pub fn graph(&self) -> Result<String> {
        let g = self.f.graph().ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported,
                format!("'{}' has no graph", self.name()),
            )
        })?;
        Ok(g.to_text(ts_ir::PrintOptions {
            source_comments: true,
        }))
    }

    /// The code as PyTorch's `fn.code` shows it.
    pub fn code(&self) -> Result<String> {
        let g = self.f.graph().ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported,
                format!("'{}' has no graph", self.name()),
            )
        })?;
        let mut p = ts_serialize::PythonPrinter::new();
        let name = format!("__torch__.{}", self.name());
        p.add_function(&name, &g, &self.schema_ref()?)
            .map_err(|e| {
                Error::new(
                    ErrorKind::Unsupported,
                    format!("cannot print the code: {e}"),
                )
            })?;
        Ok(p.files()
            .into_iter()
            .map(|(_, t)| t.to_string())
            .collect::<Vec<_>>()
            .join(""))
    }

    /// The stored graph as a value ([`Graph`]: text, `dot`, SVG, interpreter code).
    pub fn ir_graph(&self) -> Result<Graph> {
        crate::graph_view::stored(&self.f, self.name())
    }

    /// The graph the executor runs for these arguments, after its optimization passes
    /// (PyTorch's `torch.jit.last_executed_optimized_graph()` after such a call).
    pub fn optimized_graph(&self, args: impl IntoArgs) -> Result<Graph> {
        let bound = crate::calling::bind(&self.schema_ref()?, args.into_args(), &[], false)?;
        crate::graph_view::optimized(&self.f, self.name(), &bound)
    }

    /// An HTML page with the graph after every optimization pass run for these arguments.
    pub fn pass_report(&self, args: impl IntoArgs, title: &str) -> Result<String> {
        let bound = crate::calling::bind(&self.schema_ref()?, args.into_args(), &[], false)?;
        crate::graph_view::pass_report(&self.f, title, &bound)
    }

    /// The interpreter instructions the function runs (`tsrs graph --code`).
    pub fn interpreter_code(&self) -> Result<String> {
        interpreter_code(&self.f, self.name())
    }

    /// A module whose `forward` is this function (what `torch.jit.save` of a scripted
    /// function writes), with class `__torch__.<class_name>`.
    pub fn to_module(&self, class_name: &str) -> Result<Module> {
        let obj = ts_serialize::module_from_function(&self.f, class_name)?;
        Ok(Module::from_object(obj))
    }

    /// The function of the lower crates (for code that uses them).
    pub fn inner(&self) -> &Arc<ts_ir::Function> {
        &self.f
    }
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Function({})", self.name())
    }
}

/// The interpreter code of a function's graph.
pub(crate) fn interpreter_code(f: &ts_ir::Function, name: &str) -> Result<String> {
    let g = f
        .graph()
        .ok_or_else(|| Error::new(ErrorKind::Unsupported, format!("'{name}' has no graph")))?;
    let c = ts_runtime::Code::new(&g, name).map_err(Error::from)?;
    Ok(c.to_string())
}
