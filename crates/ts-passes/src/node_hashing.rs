//! Structural node equality for common subexpression elimination (PyTorch's `HashNode` and
//! `EqualNode`): same kind, same inputs (by identity), same output types, equal attributes
//! (tensors by dtype, shape and contents). Nodes with blocks or with graph or type attributes
//! are never equal to another node.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use ts_core::{IValue, Symbol};
use ts_ir::{AttributeValue, Graph, NodeId, ValueId};
use ts_tensor::Tensor;

/// A hashable summary of a node; equal keys mean equal nodes (up to hash collisions in tensor
/// contents, which [`nodes_equal`] rules out).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct NodeKey {
    kind: Symbol,
    inputs: Vec<ValueId>,
    output_types: Vec<String>,
    attrs: Vec<(Symbol, String)>,
}

/// The key of node `n`, or `None` when it can never equal another node.
pub fn node_key(g: &Graph, n: NodeId) -> Option<NodeKey> {
    let node = g.node(n);
    if !node.blocks().is_empty() {
        return None;
    }
    let mut attrs = Vec::with_capacity(node.attrs().len());
    for (k, v) in node.attrs() {
        attrs.push((*k, attribute_key(v)?));
    }
    attrs.sort_by_key(|(k, _)| k.qualified());
    Some(NodeKey {
        kind: node.kind(),
        inputs: node.inputs().to_vec(),
        output_types: node
            .outputs()
            .iter()
            .map(|&o| g.value(o).ty().to_string())
            .collect(),
        attrs,
    })
}

/// True when `a` and `b` compute the same thing (PyTorch's `EqualNode`).
pub fn nodes_equal(g: &Graph, a: NodeId, b: NodeId) -> bool {
    match (node_key(g, a), node_key(g, b)) {
        (Some(x), Some(y)) => x == y && attributes_equal(g.node(a).attrs(), g.node(b).attrs()),
        _ => false,
    }
}

/// Attribute lists with the same names and equal values (order does not matter).
pub fn attributes_equal(a: &[(Symbol, AttributeValue)], b: &[(Symbol, AttributeValue)]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().all(|(k, va)| {
        b.iter()
            .find(|(kb, _)| kb == k)
            .is_some_and(|(_, vb)| attribute_equal(va, vb))
    })
}

fn attribute_equal(a: &AttributeValue, b: &AttributeValue) -> bool {
    use AttributeValue as A;
    match (a, b) {
        (A::Tensor(x), A::Tensor(y)) => tensors_equal(x, y),
        (A::Tensors(x), A::Tensors(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| tensors_equal(p, q))
        }
        (A::IValue(x), A::IValue(y)) => ivalues_equal(x, y),
        (A::Graph(_), _) | (A::Graphs(_), _) | (A::Type(_), _) | (A::Types(_), _) => false,
        _ => match (attribute_key(a), attribute_key(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}

/// A string that is equal exactly for equal attribute values (tensors by a content hash).
fn attribute_key(v: &AttributeValue) -> Option<String> {
    use AttributeValue as A;
    Some(match v {
        A::Graph(_) | A::Graphs(_) | A::Type(_) | A::Types(_) => return None,
        A::Tensor(t) => format!("T{}", tensor_key(t)),
        A::Tensors(ts) => {
            let parts: Vec<String> = ts.iter().map(tensor_key).collect();
            format!("Ts[{}]", parts.join(","))
        }
        A::IValue(iv) => format!("V{}", ivalue_key(iv)?),
        other => {
            let mut s = String::new();
            ts_ir::printer::write_attribute(&mut s, other);
            let tag = match other {
                A::Int(_) => "i",
                A::Float(_) => "f",
                A::String(_) => "s",
                A::Ints(_) => "is",
                A::Floats(_) => "fs",
                A::Strings(_) => "ss",
                _ => "?",
            };
            format!("{tag}{s}")
        }
    })
}

fn ivalue_key(v: &IValue) -> Option<String> {
    Some(match v {
        IValue::Tensor(t) => format!("T{}", tensor_key(t)),
        IValue::List(l) => {
            let items = l.items.read();
            let parts: Option<Vec<String>> = items.iter().map(ivalue_key).collect();
            format!("L{}[{}]", l.elem_type, parts?.join(","))
        }
        IValue::Tuple(t) => {
            let parts: Option<Vec<String>> = t.elements.iter().map(ivalue_key).collect();
            format!("U({})", parts?.join(","))
        }
        IValue::Dict(d) => {
            let entries = d.entries.read();
            let parts: Option<Vec<String>> = entries
                .iter()
                .map(|(k, v)| Some(format!("{}:{}", ivalue_key(&k.0)?, ivalue_key(v)?)))
                .collect();
            format!("D{{{}}}", parts?.join(","))
        }
        IValue::Object(_) | IValue::Future(_) | IValue::Capsule(_) => return None,
        other => {
            let mut s = String::new();
            other.write(&mut s, ts_core::StrStyle::IrConstant);
            format!("{}:{s}", other.tag_name())
        }
    })
}

fn ivalues_equal(a: &IValue, b: &IValue) -> bool {
    match (a, b) {
        (IValue::Tensor(x), IValue::Tensor(y)) => tensors_equal(x, y),
        (IValue::List(x), IValue::List(y)) => {
            let (xi, yi) = (x.items.read(), y.items.read());
            x.elem_type == y.elem_type
                && xi.len() == yi.len()
                && xi.iter().zip(yi.iter()).all(|(p, q)| ivalues_equal(p, q))
        }
        (IValue::Tuple(x), IValue::Tuple(y)) => {
            x.elements.len() == y.elements.len()
                && x.elements
                    .iter()
                    .zip(&y.elements)
                    .all(|(p, q)| ivalues_equal(p, q))
        }
        _ => match (ivalue_key(a), ivalue_key(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}

fn tensor_key(t: &Tensor) -> String {
    let mut h = DefaultHasher::new();
    element_bytes(t).hash(&mut h);
    format!("{:?}{:?}{:x}", t.dtype(), t.sizes(), h.finish())
}

/// The elements of `t` in row-major order as raw bytes (`None` when it cannot be read).
fn element_bytes(t: &Tensor) -> Option<Vec<u8>> {
    let c = t.contiguous().ok()?;
    let isz = c.dtype().size();
    let start = c.storage_offset() * isz;
    let end = start + c.numel() * isz;
    c.storage().to_bytes().get(start..end).map(<[u8]>::to_vec)
}

/// Same dtype, device, shape and elements.
pub fn tensors_equal(a: &Tensor, b: &Tensor) -> bool {
    a.dtype() == b.dtype()
        && a.device() == b.device()
        && a.sizes() == b.sizes()
        && element_bytes(a).is_some_and(|x| Some(x) == element_bytes(b))
}
