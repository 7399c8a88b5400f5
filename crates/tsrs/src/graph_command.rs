//! `tsrs graph`: print a function's graph — as stored (what PyTorch's `fn.graph` shows), or as
//! the graph executor optimizes it for given inputs (`--optimized`, what
//! `torch.jit.last_executed_optimized_graph()` shows) — as text, Graphviz `dot`, SVG, or an
//! HTML page with the graph after every optimization pass and what each pass changed.

use std::path::Path;

use crate::cli::{emit, CliError};
use crate::program::Program;

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

impl From<GraphFormat> for torchscript::GraphFormat {
    fn from(f: GraphFormat) -> Self {
        match f {
            GraphFormat::Text => torchscript::GraphFormat::Text,
            GraphFormat::Dot => torchscript::GraphFormat::Dot,
            GraphFormat::Svg => torchscript::GraphFormat::Svg,
            GraphFormat::Html => torchscript::GraphFormat::Html,
        }
    }
}

/// What `tsrs graph` was asked.
pub struct GraphRequest<'a> {
    pub program: &'a Path,
    pub entry: &'a str,
    pub code: bool,
    pub raw: bool,
    pub inputs: Option<&'a Path>,
    pub optimized: bool,
    /// Floating-point tensor inputs require grad.
    pub requires_grad: bool,
    pub format: GraphFormat,
}

/// `tsrs graph`.
pub fn graph(req: GraphRequest<'_>) -> Result<(), CliError> {
    let wants_pipeline = req.optimized
        || req.requires_grad
        || req.inputs.is_some()
        || req.format == GraphFormat::Html;
    let entry = Program::open(req.program, !req.raw)?.entry(req.entry, req.program)?;
    // Without `--requires-grad` the plan is the inference one (PyTorch's reference graphs are
    // taken under no_grad); with it, inputs and the module's parameters that require grad put
    // the plan on the autodiff path.
    let _mode = (!req.requires_grad).then(torchscript::autograd::no_grad);
    let g = if wants_pipeline {
        let args = crate::run_command::read_optional_inputs(req.inputs)?;
        if req.requires_grad {
            for t in args.iter().filter_map(|v| v.as_tensor()) {
                if t.dtype().is_floating_point() || t.dtype().is_complex() {
                    t.set_requires_grad(true)
                        .map_err(|e| CliError(format!("error: --requires-grad: {e}")))?;
                }
            }
        }
        if req.format == GraphFormat::Html && !req.code {
            let title = format!("{} — {}", req.program.display(), req.entry);
            emit(&entry.pass_report(args, &title)?);
            return Ok(());
        }
        entry.optimized_graph(args)?
    } else {
        entry.ir_graph()?
    };
    if req.code {
        emit(&g.interpreter_code()?);
    } else {
        emit(&g.render(req.format.into()));
    }
    Ok(())
}
