//! [`Graph`]: a function's IR as a value to print — PyTorch's text, Graphviz `dot`, SVG — and
//! the graphs the executor optimizes for given arguments, with an HTML report of every pass.

use std::fmt;

use crate::error::{Error, ErrorKind, Result};

/// How a [`Graph`] renders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphFormat {
    /// PyTorch's textual IR, with source-location comments.
    Text,
    /// Graphviz `dot` source.
    Dot,
    /// A standalone SVG picture.
    Svg,
    /// An HTML page showing the graph (a one-pass report).
    Html,
}

/// A copy of one function's graph: as stored (what PyTorch's `fn.graph` shows) or as the graph
/// executor optimized it for some arguments (what `torch.jit.last_executed_optimized_graph()`
/// shows).
#[derive(Clone)]
pub struct Graph {
    graph: ts_ir::Graph,
    name: String,
}

impl Graph {
    /// The graph in `format`.
    pub fn render(&self, format: GraphFormat) -> String {
        match format {
            GraphFormat::Text => self.graph.to_text(ts_ir::PrintOptions {
                source_comments: true,
            }),
            GraphFormat::Dot => ts_ir::render::to_dot(&self.graph, &self.name),
            GraphFormat::Svg => ts_ir::render::to_svg(&self.graph, &[]),
            GraphFormat::Html => ts_passes::pass_report::html_report(
                &self.name,
                &[ts_passes::PassSnapshot {
                    pass: "Graph".into(),
                    changed: true,
                    graph: self.graph.clone(),
                }],
            ),
        }
    }

    /// The interpreter instructions this graph compiles to.
    pub fn interpreter_code(&self) -> Result<String> {
        let c = ts_runtime::Code::new(&self.graph, &self.name).map_err(Error::from)?;
        Ok(c.to_string())
    }
}

impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(GraphFormat::Text))
    }
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Graph({})", self.name)
    }
}

/// `fib` for `__torch__.fib`: graphs are named as the user calls the function.
fn short_name(name: &str) -> String {
    name.rsplit('.').next().unwrap_or(name).to_string()
}

/// The stored graph of `f`.
pub(crate) fn stored(f: &ts_ir::Function, name: &str) -> Result<Graph> {
    let g = f
        .graph()
        .ok_or_else(|| Error::new(ErrorKind::Unsupported, format!("'{name}' has no graph")))?;
    Ok(Graph {
        graph: (*g).clone(),
        name: short_name(name),
    })
}

/// The graph the executor runs for `f` called on `args` (already bound; `self` first for a
/// method).
pub(crate) fn optimized(
    f: &ts_ir::Function,
    name: &str,
    args: &[ts_core::IValue],
) -> Result<Graph> {
    let ex = ts_runtime::executor_of(f)?;
    let plan = ex.execution_plan(args)?;
    Ok(Graph {
        graph: (*plan.graph).clone(),
        name: short_name(name),
    })
}

/// An HTML page with the graph after every optimization pass the executor runs for `args`,
/// what each pass changed highlighted.
pub(crate) fn pass_report(
    f: &ts_ir::Function,
    title: &str,
    args: &[ts_core::IValue],
) -> Result<String> {
    let ex = ts_runtime::executor_of(f)?;
    let mut pm = ts_passes::PassManager::new().record(true);
    ex.optimized_graph(
        args,
        ts_passes::executor_pipeline::executor_options(),
        &mut pm,
    );
    Ok(ts_passes::pass_report::html_report(title, pm.snapshots()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_format_and_specializes_for_arguments() {
        let cu = crate::compile("def f(x: Tensor, n: int):\n    return x * n + 1\n").unwrap();
        let f = cu.function("f").unwrap();
        let g = f.ir_graph().unwrap();
        assert!(g.render(GraphFormat::Text).contains("aten::mul"));
        assert!(g.render(GraphFormat::Dot).starts_with("digraph"));
        assert!(g.render(GraphFormat::Svg).contains("<svg"));
        assert!(g.render(GraphFormat::Html).contains("<html"));
        assert!(g.interpreter_code().unwrap().contains("aten::add"));
        let x = crate::Tensor::from_data(&[1.0f32, 2.0], &[2]).unwrap();
        let opt = f.optimized_graph((x.clone(), 3i64)).unwrap();
        assert!(opt.to_string().contains("aten::mul(%x, %n)"), "{opt}");
        assert!(opt.interpreter_code().unwrap().contains("aten::mul"));
        let report = f.pass_report((x, 3i64), "f").unwrap();
        assert!(report.contains("<html"));
        let err = f.optimized_graph(("no",)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Argument);
    }
}
