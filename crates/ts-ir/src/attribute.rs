//! Node attributes (`[value=1]`, `[name="forward"]`): typed values keyed by `attr::` symbols.

use std::sync::Arc;

use ts_core::{IValue, TypeRef};
use ts_tensor::Tensor;

use crate::graph::Graph;

/// The value of a node attribute.
#[derive(Clone, Debug)]
pub enum AttributeValue {
    Int(i64),
    Float(f64),
    String(String),
    Tensor(Tensor),
    Graph(Arc<Graph>),
    Type(TypeRef),
    /// Any other constant (`prim::Constant` of a tuple, list, device, ...).
    IValue(IValue),
    Ints(Vec<i64>),
    Floats(Vec<f64>),
    Strings(Vec<String>),
    Tensors(Vec<Tensor>),
    Graphs(Vec<Arc<Graph>>),
    Types(Vec<TypeRef>),
}

impl AttributeValue {
    /// The attribute as an `IValue` where one exists (for constants).
    pub fn to_ivalue(&self) -> Option<IValue> {
        Some(match self {
            AttributeValue::Int(i) => IValue::Int(*i),
            AttributeValue::Float(f) => IValue::Double(*f),
            AttributeValue::String(s) => IValue::str(s.clone()),
            AttributeValue::Tensor(t) => IValue::Tensor(t.clone()),
            AttributeValue::IValue(v) => v.clone(),
            AttributeValue::Ints(v) => IValue::int_list(v.iter().copied()),
            AttributeValue::Floats(v) => IValue::float_list(v.iter().copied()),
            AttributeValue::Strings(v) => IValue::list(
                ts_core::Type::string(),
                v.iter().map(|s| IValue::str(s.clone())).collect(),
            ),
            AttributeValue::Tensors(v) => IValue::tensor_list(v.iter().cloned()),
            _ => return None,
        })
    }
}
