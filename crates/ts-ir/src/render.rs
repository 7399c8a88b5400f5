//! Pictures of graphs: Graphviz `dot` source and a self-contained SVG (laid out here, no
//! external tools). Constants are written inline at their uses, as in the canonical text form,
//! so the picture shows the computation; nested blocks are drawn inside their node.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use ts_core::prim;

use crate::graph::{BlockId, Graph, NodeId, ValueId};

/// How a value is shown at its uses: `%name`, or the literal of a constant.
fn value_label(g: &Graph, v: ValueId) -> String {
    let n = g.value(v).node();
    if g.node(n).kind() == prim::Constant {
        if let Some(iv) = g.constant_value(n) {
            let mut s = String::new();
            match &iv {
                ts_core::IValue::Tensor(t) => {
                    let _ = write!(s, "<Tensor {:?}>", t.sizes().as_slice());
                }
                other => other.write(&mut s, ts_core::StrStyle::IrConstant),
            }
            if s.len() > 24 {
                s.truncate(21);
                s.push_str("...");
            }
            return s;
        }
    }
    format!("%{}", g.display_name(v))
}

/// A one-line label for a node: `%out = kind[attrs](%a, 1)`.
pub fn node_label(g: &Graph, n: NodeId) -> String {
    let node = g.node(n);
    let outs: Vec<String> = node
        .outputs()
        .iter()
        .map(|&o| format!("%{}", g.display_name(o)))
        .collect();
    let ins: Vec<String> = node.inputs().iter().map(|&v| value_label(g, v)).collect();
    let mut s = String::new();
    if !outs.is_empty() {
        let _ = write!(s, "{} = ", outs.join(", "));
    }
    s.push_str(node.kind().qualified());
    let attrs: Vec<String> = node
        .attrs()
        .iter()
        .filter(|(k, _)| k.name() != "Subgraph")
        .map(|(k, v)| {
            let mut a = String::new();
            crate::printer::write_attribute(&mut a, v);
            if a.len() > 20 {
                a.truncate(17);
                a.push_str("...");
            }
            format!("{}={a}", k.name())
        })
        .collect();
    if !attrs.is_empty() {
        let _ = write!(s, "[{}]", attrs.join(", "));
    }
    let _ = write!(s, "({})", ins.join(", "));
    if s.chars().count() > 90 {
        s = s.chars().take(87).collect::<String>() + "...";
    }
    s
}

fn is_drawn(g: &Graph, n: NodeId) -> bool {
    g.node(n).kind() != prim::Constant
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The graph as Graphviz `dot` source (blocks as clusters, data edges labelled with values).
pub fn to_dot(g: &Graph, name: &str) -> String {
    let mut out = format!(
        "digraph \"{}\" {{\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"monospace\", fontsize=9];\n",
        dot_escape(name)
    );
    let inputs: Vec<String> = g
        .inputs()
        .iter()
        .map(|&v| format!("%{} : {}", g.display_name(v), g.value(v).ty()))
        .collect();
    let _ = writeln!(
        out,
        "  input [shape=invhouse, label=\"{}\"];",
        dot_escape(&format!("graph({})", inputs.join(", ")))
    );
    let mut cluster = 0;
    dot_block(g, g.block(), 1, &mut out, &mut cluster);
    let _ = writeln!(out, "  output [shape=house, label=\"return\"];");
    // Edges.
    let source = |v: ValueId| -> Option<String> {
        let p = g.value(v).node();
        let k = g.node(p).kind();
        if k == prim::Constant {
            None
        } else if k == prim::Param {
            let b = g.node(p).owning_block()?;
            Some(if b == g.block() {
                "input".to_string()
            } else {
                format!("n{}", g.block_owner(b)?.0)
            })
        } else {
            Some(format!("n{}", p.0))
        }
    };
    for n in g.all_nodes() {
        if !is_drawn(g, n) {
            continue;
        }
        for &v in g.node(n).inputs() {
            if let Some(src) = source(v) {
                if src != format!("n{}", n.0) {
                    let _ = writeln!(
                        out,
                        "  {src} -> n{} [label=\"%{}\"];",
                        n.0,
                        dot_escape(&g.display_name(v))
                    );
                }
            }
        }
    }
    for &v in g.outputs() {
        if let Some(src) = source(v) {
            let _ = writeln!(
                out,
                "  {src} -> output [label=\"%{}\"];",
                dot_escape(&g.display_name(v))
            );
        }
    }
    out.push_str("}\n");
    out
}

fn dot_block(g: &Graph, b: BlockId, depth: usize, out: &mut String, cluster: &mut usize) {
    let pad = "  ".repeat(depth);
    for n in g.block_nodes(b) {
        if !is_drawn(g, n) {
            continue;
        }
        let label = dot_escape(&node_label(g, n));
        if g.node(n).blocks().is_empty() {
            let _ = writeln!(out, "{pad}n{} [label=\"{label}\"];", n.0);
            continue;
        }
        let _ = writeln!(out, "{pad}n{} [label=\"{label}\", style=bold];", n.0);
        for (i, &sb) in g.node(n).blocks().iter().enumerate() {
            *cluster += 1;
            let _ = writeln!(
                out,
                "{pad}subgraph cluster_{} {{\n{pad}  label=\"block{i} of %{}\"; style=dashed;",
                *cluster,
                g.node(n)
                    .outputs()
                    .first()
                    .map(|&o| g.display_name(o))
                    .unwrap_or_else(|| g.node(n).kind().name().to_string())
            );
            dot_block(g, sb, depth + 1, out, cluster);
            let _ = writeln!(out, "{pad}}}");
        }
    }
}

// -----------------------------------------------------------------------------------------
// SVG

const CHAR_W: f64 = 7.0;
const LINE_H: f64 = 22.0;
const GAP_X: f64 = 18.0;
const GAP_Y: f64 = 26.0;
const PAD: f64 = 10.0;

#[derive(Clone, Debug)]
struct Boxed {
    node: NodeId,
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

struct BlockLayout {
    w: f64,
    h: f64,
    /// Boxes relative to the block's origin (nested blocks' boxes included, offset).
    boxes: Vec<Boxed>,
}

fn text_w(s: &str) -> f64 {
    s.chars().count() as f64 * CHAR_W + 2.0 * PAD
}

/// Values used inside `n` (its inputs and those of its nested nodes) defined outside it.
fn free_inputs(g: &Graph, n: NodeId, out: &mut Vec<ValueId>) {
    out.extend_from_slice(g.node(n).inputs());
    for &b in g.node(n).blocks() {
        for m in g.block_nodes(b) {
            free_inputs(g, m, out);
        }
        out.extend_from_slice(g.block_outputs(b));
    }
}

fn layout_block(g: &Graph, b: BlockId) -> BlockLayout {
    let nodes: Vec<NodeId> = g
        .block_nodes(b)
        .into_iter()
        .filter(|&n| is_drawn(g, n))
        .collect();
    let here: HashSet<NodeId> = nodes.iter().copied().collect();
    let mut layer: HashMap<NodeId, usize> = HashMap::new();
    for &n in &nodes {
        let mut ins = Vec::new();
        free_inputs(g, n, &mut ins);
        let l = ins
            .iter()
            .filter_map(|&v| {
                let p = g.value(v).node();
                here.contains(&p)
                    .then(|| layer.get(&p).copied().unwrap_or(0) + 1)
            })
            .max()
            .unwrap_or(0);
        layer.insert(n, l);
    }
    let layers = layer.values().copied().max().map_or(0, |m| m + 1);
    let mut boxes = Vec::new();
    let mut y = PAD;
    let mut width: f64 = 0.0;
    for l in 0..layers {
        let mut x = PAD;
        let mut row_h: f64 = 0.0;
        for &n in nodes.iter().filter(|n| layer[*n] == l) {
            let label_w = text_w(&node_label(g, n));
            if g.node(n).blocks().is_empty() {
                boxes.push(Boxed {
                    node: n,
                    x,
                    y,
                    w: label_w,
                    h: LINE_H,
                });
                x += label_w + GAP_X;
                row_h = row_h.max(LINE_H);
                continue;
            }
            // A node with blocks: its label, then its blocks side by side.
            let mut inner_x = PAD;
            let mut inner_h: f64 = 0.0;
            let mut inner = Vec::new();
            for &sb in g.node(n).blocks() {
                let bl = layout_block(g, sb);
                for bx in bl.boxes {
                    inner.push(Boxed {
                        x: x + inner_x + bx.x,
                        y: y + LINE_H + bx.y,
                        ..bx
                    });
                }
                inner_x += bl.w + GAP_X;
                inner_h = inner_h.max(bl.h);
            }
            let w = label_w.max(inner_x + PAD - GAP_X);
            let h = LINE_H + inner_h + PAD;
            boxes.push(Boxed {
                node: n,
                x,
                y,
                w,
                h,
            });
            boxes.extend(inner);
            x += w + GAP_X;
            row_h = row_h.max(h);
        }
        width = width.max(x - GAP_X + PAD);
        y += row_h + GAP_Y;
    }
    BlockLayout {
        w: width.max(2.0 * PAD + 40.0),
        h: (y - GAP_Y + PAD).max(2.0 * PAD),
        boxes,
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The graph as a standalone SVG picture: data flows top to bottom, nodes of a layer side by
/// side, nested blocks inside their node; `highlight` nodes are drawn in a different color.
pub fn to_svg(g: &Graph, highlight: &[NodeId]) -> String {
    let hl: HashSet<NodeId> = highlight.iter().copied().collect();
    let inputs: Vec<String> = g
        .inputs()
        .iter()
        .map(|&v| format!("%{}", g.display_name(v)))
        .collect();
    let head = format!("graph({})", inputs.join(", "));
    let head_w = text_w(&head);
    let body = layout_block(g, g.block());
    let outputs: Vec<String> = g.outputs().iter().map(|&v| value_label(g, v)).collect();
    let tail = format!("return ({})", outputs.join(", "));
    let tail_w = text_w(&tail);
    let top = LINE_H + GAP_Y;
    let width = body.w.max(head_w + 2.0 * PAD).max(tail_w + 2.0 * PAD);
    let tail_y = top + body.h + GAP_Y / 2.0;
    let height = tail_y + LINE_H + PAD;
    let mut pos: HashMap<NodeId, Boxed> = HashMap::new();
    for b in &body.boxes {
        pos.insert(
            b.node,
            Boxed {
                y: b.y + top,
                ..b.clone()
            },
        );
    }
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"monospace\" font-size=\"12\">\n<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#666\"/></marker></defs>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    let _ = writeln!(
        s,
        "<rect x=\"{PAD}\" y=\"{PAD}\" width=\"{head_w:.1}\" height=\"{:.1}\" rx=\"4\" fill=\"#e8eefc\" stroke=\"#4a6fd0\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
        LINE_H - 4.0,
        PAD * 2.0,
        PAD + 13.0,
        xml_escape(&head)
    );
    // Edges first, under the boxes.
    let anchor_out = |v: ValueId| -> Option<(f64, f64)> {
        let p = g.value(v).node();
        if g.node(p).kind() == prim::Param {
            let b = g.node(p).owning_block()?;
            if b == g.block() {
                return Some((PAD + head_w / 2.0, PAD + LINE_H - 4.0));
            }
            let owner = pos.get(&g.block_owner(b)?)?;
            return Some((owner.x + 12.0, owner.y + LINE_H));
        }
        let bx = pos.get(&p)?;
        Some((
            bx.x + bx.w / 2.0,
            bx.y + if g.node(p).blocks().is_empty() {
                bx.h
            } else {
                LINE_H
            },
        ))
    };
    let edge = |s: &mut String, from: (f64, f64), to: (f64, f64)| {
        let my = (from.1 + to.1) / 2.0;
        let _ = writeln!(
            s,
            "<path d=\"M {:.1} {:.1} C {:.1} {my:.1}, {:.1} {my:.1}, {:.1} {:.1}\" fill=\"none\" stroke=\"#888\" stroke-width=\"1\" marker-end=\"url(#arrow)\"/>",
            from.0, from.1, from.0, to.0, to.0, to.1
        );
    };
    for b in &body.boxes {
        let mut seen = HashSet::new();
        for &v in g.node(b.node).inputs() {
            if !seen.insert(v) {
                continue;
            }
            if let Some(from) = anchor_out(v) {
                if from.1 < b.y + top {
                    edge(&mut s, from, (b.x + b.w / 2.0, b.y + top));
                }
            }
        }
    }
    for &v in g.outputs() {
        if let Some(from) = anchor_out(v) {
            edge(&mut s, from, (PAD + tail_w / 2.0, tail_y));
        }
    }
    for b in &body.boxes {
        let (fill, stroke) = if hl.contains(&b.node) {
            ("#fff1c2", "#d08a00")
        } else if g.node(b.node).blocks().is_empty() {
            ("#f7f7f7", "#999")
        } else {
            ("#fbfbff", "#6a6aa0")
        };
        let _ = writeln!(
            s,
            "<g><title>{}</title><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"4\" fill=\"{fill}\" stroke=\"{stroke}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
            xml_escape(&node_label(g, b.node)),
            b.x,
            b.y + top,
            b.w,
            b.h,
            b.x + PAD,
            b.y + top + 15.0,
            xml_escape(&node_label(g, b.node))
        );
    }
    let _ = writeln!(
        s,
        "<rect x=\"{PAD}\" y=\"{tail_y:.1}\" width=\"{tail_w:.1}\" height=\"{:.1}\" rx=\"4\" fill=\"#e8fce9\" stroke=\"#3a9a4a\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
        LINE_H - 4.0,
        PAD * 2.0,
        tail_y + 13.0,
        xml_escape(&tail)
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_ir;

    const SRC: &str = "graph(%x : Tensor, %c : bool):\n  %one : int = prim::Constant[value=1]()\n  %a : Tensor = aten::relu(%x)\n  %y : Tensor = prim::If(%c)\n    block0():\n      %b : Tensor = aten::add(%a, %x, %one)\n      -> (%b)\n    block1():\n      -> (%a)\n  return (%y)\n";

    #[test]
    fn dot_has_nodes_clusters_and_edges() {
        let g = parse_ir(SRC).unwrap();
        let d = to_dot(&g, "f");
        assert!(d.starts_with("digraph \"f\""), "{d}");
        assert!(d.contains("aten::add(%a, %x, 1)"), "{d}");
        assert!(d.contains("subgraph cluster_1"), "{d}");
        assert!(d.contains("input -> n"), "{d}");
        assert!(d.contains("-> output"), "{d}");
        assert!(!d.contains("prim::Constant"), "{d}");
    }

    #[test]
    fn svg_is_well_formed_and_shows_every_node() {
        let g = parse_ir(SRC).unwrap();
        let s = to_svg(&g, &[]);
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(
            s.contains("aten::relu(%x)") && s.contains("prim::If(%c)"),
            "{s}"
        );
        assert!(s.contains("aten::add(%a, %x, 1)"), "{s}");
        // Balanced groups.
        assert_eq!(s.matches("<g>").count(), s.matches("</g>").count());
    }
}
