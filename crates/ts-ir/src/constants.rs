//! Constants: inserting `prim::Constant` nodes for values and reading them back.

use std::sync::Arc;

use ts_core::{attr, prim, IValue, TensorType, Type, TypeRef};

use crate::attribute::AttributeValue;
use crate::graph::{Graph, NodeId, ValueId};

/// The static type PyTorch gives a constant of this value (complete for tensors).
pub fn constant_type(v: &IValue) -> TypeRef {
    match v {
        IValue::Tensor(t) => {
            let m = t.meta();
            Arc::new(Type::Tensor(TensorType {
                dtype: Some(m.dtype),
                device: Some(m.storage.device()),
                sizes: Some(m.sizes.iter().map(|&s| Some(s)).collect()),
                strides: Some(m.strides.iter().map(|&s| Some(s)).collect()),
                requires_grad: Some(m.requires_grad),
                undefined: None,
            }))
        }
        other => other.type_of(),
    }
}

impl Graph {
    /// Creates (unplaced) a `prim::Constant` node for `v`, attribute kinds as PyTorch chooses
    /// them: ints and bools as `value=1`, floats, strings and devices as their own kinds, None
    /// without attribute, other values (lists, tuples, tensors) as IValues.
    pub fn create_constant(&mut self, v: &IValue) -> NodeId {
        self.revision += 1;
        let n = self.create(prim::Constant, &[], 0);
        let attr_value = match v {
            IValue::None => None,
            IValue::Int(i) => Some(AttributeValue::Int(*i)),
            IValue::Bool(b) => Some(AttributeValue::Int(*b as i64)),
            IValue::Double(d) => Some(AttributeValue::Float(*d)),
            IValue::String(s) => Some(AttributeValue::String(s.to_string())),
            IValue::Device(d) => Some(AttributeValue::String(d.to_string())),
            IValue::Tensor(t) => Some(AttributeValue::Tensor(t.clone())),
            other => Some(AttributeValue::IValue(other.clone())),
        };
        if let Some(a) = attr_value {
            self.set_attr(n, attr::value, a);
        }
        self.add_output(n, constant_type(v));
        n
    }

    /// Inserts a constant at the insertion point and returns its value.
    pub fn insert_constant(&mut self, v: &IValue) -> ValueId {
        self.revision += 1;
        let n = self.create_constant(v);
        self.insert_node(n);
        self.node(n).output(0)
    }

    /// The value of a `prim::Constant` node, read back through its output type. `None` for
    /// other nodes and for function constants (`prim::Constant[name="f"]`).
    pub fn constant_value(&self, n: NodeId) -> Option<IValue> {
        let node = self.node(n);
        if node.kind() != prim::Constant || node.outputs().len() != 1 {
            return None;
        }
        let ty = self.value(node.output(0)).ty();
        let Some(a) = node.attr(attr::value) else {
            return match &**ty {
                Type::Function(_) => None,
                _ => Some(IValue::None),
            };
        };
        Some(match (&**ty, a) {
            (Type::Bool, AttributeValue::Int(i)) => IValue::Bool(*i != 0),
            (Type::Device, AttributeValue::String(s)) => {
                IValue::Device(ts_tensor::Device::parse(s)?)
            }
            (Type::Float, AttributeValue::Int(i)) => IValue::Double(*i as f64),
            (Type::List(e), AttributeValue::Ints(v)) if e.is_bool() => {
                IValue::bool_list(v.iter().map(|&x| x != 0))
            }
            (Type::List(e), AttributeValue::IValue(IValue::List(l))) if **e != *l.elem_type => {
                IValue::list(e.clone(), l.items.read().clone())
            }
            (_, a) => a.to_ivalue()?,
        })
    }

    /// The constant value of `v` when it is the output of a `prim::Constant`.
    pub fn to_ivalue(&self, v: ValueId) -> Option<IValue> {
        self.constant_value(self.value(v).node())
    }

    /// Creates a `prim::TupleConstruct` of `vals` at the insertion point.
    pub fn insert_tuple(&mut self, vals: &[ValueId]) -> ValueId {
        self.revision += 1;
        let ty = Type::tuple(vals.iter().map(|&v| self.value(v).ty().clone()).collect());
        let n = self.insert(prim::TupleConstruct, vals, 0);
        self.add_output(n, ty)
    }

    /// Creates a `prim::ListConstruct` with element type `elem` at the insertion point.
    pub fn insert_list(&mut self, elem: TypeRef, vals: &[ValueId]) -> ValueId {
        self.revision += 1;
        let n = self.insert(prim::ListConstruct, vals, 0);
        self.add_output(n, Type::list(elem))
    }

    /// Creates a `prim::TupleUnpack` of a tuple value at the insertion point.
    pub fn insert_tuple_unpack(&mut self, tup: ValueId) -> Vec<ValueId> {
        self.revision += 1;
        let elems: Vec<TypeRef> = self
            .value(tup)
            .ty()
            .tuple_elems()
            .map(|e| e.to_vec())
            .unwrap_or_default();
        let n = self.insert(prim::TupleUnpack, &[tup], 0);
        elems.into_iter().map(|t| self.add_output(n, t)).collect()
    }
}

impl Graph {
    /// True when `v` is statically `None` (PyTorch's `Value::mustBeNone`): typed `NoneType`, or an
    /// attribute-less constant of an optional type.
    pub fn must_be_none(&self, v: ValueId) -> bool {
        let ty = self.value(v).ty();
        if ty.is_none_type() {
            return true;
        }
        let n = self.node(self.value(v).node());
        (n.kind() == prim::Constant && n.attrs().is_empty() && matches!(&**ty, Type::Optional(_)))
            || n.kind() == prim::AutogradZero
    }

    /// True when `v` can never be `None` (PyTorch's `Value::mustNotBeNone`): its type admits no
    /// `None` (not `NoneType`, `Optional`, a union holding `None`, or `Any`).
    pub fn must_not_be_none(&self, v: ValueId) -> bool {
        let ty = self.value(v).ty();
        match &**ty {
            Type::NoneType | Type::Optional(_) | Type::Any => false,
            Type::Union(ms) => !ms
                .iter()
                .any(|m| m.is_none_type() || matches!(&**m, Type::Optional(_) | Type::Any)),
            _ => true,
        }
    }
}
