//! `tsrs graph`: print a function's graph — as stored (what PyTorch's `fn.graph` shows), or as
//! the graph executor optimizes it for given inputs (`--optimized`, what
//! `torch.jit.last_executed_optimized_graph()` shows) — as text, Graphviz `dot`, SVG, or an
//! HTML page with the graph after every optimization pass and what each pass changed.

use std::path::Path;
use ts_core::IValue;
use ts_passes::PassManager;

use crate::cli::CliError;

/// How `tsrs graph` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    /// PyTorch's textual IR.
    Text,
    /// Graphviz `dot` source.
    Dot,
    /// A standalone SVG picture.
    Svg,
    /// An HTML page: every pass's graph in order, changes highlighted.
    Html,
}

/// What `tsrs graph` was asked.
pub struct GraphRequest<'a> {
    pub program: &'a Path,
    pub entry: &'a str,
    pub code: bool,
    pub raw: bool,
    pub inputs: Option<&'a Path>,
    pub optimized: bool,
    pub format: GraphFormat,
}

/// Runs `with` on the function `entry` names and the arguments to call it with (`self` first
/// for a method of a saved module, which stays loaded meanwhile).
fn with_function<R>(
    program: &Path,
    entry: &str,
    inputs: Option<&Path>,
    with: impl FnOnce(&ts_ir::Function, Vec<IValue>) -> Result<R, CliError>,
) -> Result<R, CliError> {
    let args = match inputs {
        Some(p) => crate::run_command::read_inputs(p)?,
        None => Vec::new(),
    };
    let bind = |f: &ts_ir::Function, args: Vec<IValue>, method: bool| {
        let schema = f
            .try_schema()
            .ok_or_else(|| CliError(format!("error: '{entry}' has no schema")))?;
        ts_runtime::bind_arguments(&schema, args, method)
            .map_err(|e| CliError(format!("{}: {}", e.kind.name(), e.message)))
    };
    if crate::model::is_archive(program) {
        let m = crate::model::load(program)?;
        let (obj, method) = crate::model::resolve_method_path(&m.module, entry)?;
        let mm = obj.class.find_method(&method).ok_or_else(|| {
            CliError(format!(
                "error: '{}' has no method '{method}'",
                obj.class.name
            ))
        })?;
        let f = ts_ir::as_function(&mm)
            .ok_or_else(|| CliError(format!("error: '{method}' is not a TorchScript method")))?;
        let mut args = bind(f, args, true)?;
        args.insert(0, IValue::Object(obj.clone()));
        return with(f, args);
    }
    let f = crate::program::find_entry(program, entry)?;
    let args = bind(&f, args, false)?;
    with(&f, args)
}

/// `tsrs graph`.
pub fn graph(req: GraphRequest<'_>) -> Result<(), CliError> {
    let wants_pipeline = req.optimized || req.inputs.is_some() || req.format == GraphFormat::Html;
    if !wants_pipeline {
        let g = crate::program::entry_graph(req.program, req.entry, req.raw)?;
        return print_graph(&g, req.entry, req.code, req.format);
    }
    with_function(req.program, req.entry, req.inputs, |f, args| {
        let ex = ts_runtime::executor_of(f).map_err(|e| CliError(format!("error: {e}")))?;
        if req.format == GraphFormat::Html {
            let mut pm = PassManager::new().record(true);
            let opts = ts_passes::executor_pipeline::executor_options();
            ex.optimized_graph(&args, opts, &mut pm);
            let title = format!("{} — {}", req.program.display(), req.entry);
            crate::cli::emit(&ts_passes::pass_report::html_report(&title, pm.snapshots()));
            return Ok(());
        }
        let plan = ex
            .execution_plan(&args)
            .map_err(|e| CliError(format!("error: {e}")))?;
        print_graph(&plan.graph, req.entry, req.code, req.format)
    })
}

fn print_graph(
    g: &ts_ir::Graph,
    entry: &str,
    code: bool,
    format: GraphFormat,
) -> Result<(), CliError> {
    if code {
        let c = ts_runtime::Code::new(g, entry).map_err(|e| CliError(format!("error: {e}")))?;
        crate::cli::emit(&c.to_string());
        return Ok(());
    }
    let text = match format {
        GraphFormat::Text => g.to_text(ts_ir::PrintOptions {
            source_comments: true,
        }),
        GraphFormat::Dot => ts_ir::render::to_dot(g, entry),
        GraphFormat::Svg => ts_ir::render::to_svg(g, &[]),
        GraphFormat::Html => ts_passes::pass_report::html_report(
            entry,
            &[ts_passes::PassSnapshot {
                pass: "Graph".into(),
                changed: true,
                graph: g.clone(),
            }],
        ),
    };
    crate::cli::emit(&text);
    Ok(())
}
