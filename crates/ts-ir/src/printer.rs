//! Prints graphs in PyTorch's canonical text form (what `fn.graph` shows).

use std::fmt::{self, Write};

use ts_core::{number_format::format_double, scanner::quote_string};

use crate::attribute::AttributeValue;
use crate::graph::{BlockId, Graph, NodeId, ValueId};

/// Printing options.
#[derive(Clone, Copy, Debug, Default)]
pub struct PrintOptions {
    /// Append `# file:line:col` comments with each node's source location.
    pub source_comments: bool,
}

impl Graph {
    /// Prints the graph with options.
    pub fn to_text(&self, opts: PrintOptions) -> String {
        let mut out = String::new();
        let mut subgraphs = Vec::new();
        let mut p = Printer {
            g: self,
            out: &mut out,
            opts,
            subgraphs: &mut subgraphs,
        };
        p.graph();
        for (label, sub) in subgraphs {
            let _ = write!(out, "with {label} = {}", sub.to_text(opts));
        }
        out
    }

    fn value_ref(&self, v: ValueId) -> String {
        format!("%{}", self.display_name(v))
    }

    fn value_decl(&self, v: ValueId) -> String {
        format!("%{} : {}", self.display_name(v), self.value(v).ty())
    }
}

struct Printer<'a> {
    g: &'a Graph,
    out: &'a mut String,
    opts: PrintOptions,
    /// Nodes with a `Subgraph` attribute print as `kind_N`; their graphs follow the main one.
    subgraphs: &'a mut Vec<(String, std::sync::Arc<Graph>)>,
}

impl Printer<'_> {
    fn graph(&mut self) {
        let g = self.g;
        let inputs: Vec<String> = g.inputs().iter().map(|&v| g.value_decl(v)).collect();
        let _ = writeln!(self.out, "graph({}):", inputs.join(",\n      "));
        self.block_body(g.block(), 2);
        let outs: Vec<String> = g.outputs().iter().map(|&v| g.value_ref(v)).collect();
        let _ = writeln!(self.out, "  return ({})", outs.join(", "));
    }

    fn block_body(&mut self, b: BlockId, indent: usize) {
        for n in self.g.block_nodes(b) {
            self.node(n, indent);
        }
    }

    fn node(&mut self, n: NodeId, indent: usize) {
        let g = self.g;
        let node = g.node(n);
        let outs: Vec<String> = node.outputs().iter().map(|&v| g.value_decl(v)).collect();
        let subgraph_sym = ts_core::Symbol::attr("Subgraph");
        let _ = write!(
            self.out,
            "{}{} = {}",
            " ".repeat(indent),
            outs.join(", "),
            node.kind()
        );
        if let Some(sub) = node.g(subgraph_sym) {
            let label = format!("{}_{}", node.kind(), self.subgraphs.len());
            let _ = write!(self.out, "_{}", self.subgraphs.len());
            self.subgraphs.push((label, sub.clone()));
        }
        // As PyTorch prints it, a differentiable graph shows none of its attributes (the
        // backward graph and the capture lists).
        let differentiable = node.kind() == ts_core::prim::DifferentiableGraph;
        let attrs: Vec<_> = node
            .attrs()
            .iter()
            .filter(|(k, _)| *k != subgraph_sym && !differentiable)
            .collect();
        if !attrs.is_empty() {
            self.out.push('[');
            for (i, (k, v)) in attrs.into_iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                let _ = write!(self.out, "{}=", k.name());
                write_attribute(self.out, v);
            }
            self.out.push(']');
        }
        let ins: Vec<String> = node.inputs().iter().map(|&v| g.value_ref(v)).collect();
        let _ = write!(self.out, "({})", ins.join(", "));
        if self.opts.source_comments {
            if let Some(r) = node.source_range() {
                let (file, line, col) = r.file_line_col();
                let _ = write!(self.out, " # {file}:{line}:{col}");
            }
        }
        self.out.push('\n');
        for (i, &b) in node.blocks().iter().enumerate() {
            let ins: Vec<String> = g.block_inputs(b).iter().map(|&v| g.value_decl(v)).collect();
            let _ = writeln!(
                self.out,
                "{}block{}({}):",
                " ".repeat(indent + 2),
                i,
                ins.join(", ")
            );
            self.block_body(b, indent + 4);
            let outs: Vec<String> = g.block_outputs(b).iter().map(|&v| g.value_ref(v)).collect();
            let _ = writeln!(
                self.out,
                "{}-> ({})",
                " ".repeat(indent + 4),
                outs.join(", ")
            );
        }
    }
}

/// Writes an attribute value as the printer shows it.
pub fn write_attribute(out: &mut String, v: &AttributeValue) {
    fn list<T>(out: &mut String, items: &[T], mut f: impl FnMut(&mut String, &T)) {
        out.push('[');
        for (i, x) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            f(out, x);
        }
        out.push(']');
    }
    match v {
        AttributeValue::Int(i) => {
            let _ = write!(out, "{i}");
        }
        AttributeValue::Float(f) => out.push_str(&format_double(*f)),
        AttributeValue::String(s) => quote_string(s, out),
        AttributeValue::Tensor(t) => write_tensor_attribute(out, t),
        AttributeValue::Graph(_) => out.push_str("<Graph>"),
        AttributeValue::Type(t) => {
            let _ = write!(out, "{t}");
        }
        AttributeValue::IValue(v) => match v {
            ts_core::IValue::Tensor(t) => write_tensor_attribute(out, t),
            other => other.write(out, ts_core::StrStyle::IrConstant),
        },
        AttributeValue::Ints(v) => list(out, v, |o, x| {
            let _ = write!(o, "{x}");
        }),
        AttributeValue::Floats(v) => list(out, v, |o, x| o.push_str(&format_double(*x))),
        AttributeValue::Strings(v) => list(out, v, |o, x| quote_string(x, o)),
        AttributeValue::Tensors(v) => list(out, v, write_tensor_attribute),
        AttributeValue::Graphs(v) => list(out, v, |o, _| o.push_str("<Graph>")),
        AttributeValue::Types(v) => list(out, v, |o, t| {
            let _ = write!(o, "{t}");
        }),
    }
}

fn write_tensor_attribute(out: &mut String, t: &ts_tensor::Tensor) {
    ts_core::ivalue::write_tensor_constant(out, t)
}

impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text(PrintOptions::default()))
    }
}
