//! `IValue`: the 16-byte tagged union holding any TorchScript value at run time.
//!
//! Ints, floats, bools and tuples are values; tensors, lists, dicts, objects and futures are
//! shared mutable references (cloning an `IValue` of those kinds aliases, as Python does).

use std::sync::Arc;

use indexmap::IndexMap;
use parking_lot::RwLock;
use ts_tensor::{Device, Tensor};

use crate::future::Future;
use crate::types::{ClassType, EnumType, TypeRef};

/// Any TorchScript value.
#[derive(Clone, Debug, Default)]
pub enum IValue {
    #[default]
    None,
    Bool(bool),
    Int(i64),
    Double(f64),
    /// A complex number (boxed to keep `IValue` at 16 bytes).
    Complex(Arc<(f64, f64)>),
    Tensor(Tensor),
    String(Arc<String>),
    Device(Device),
    Tuple(Arc<Tuple>),
    List(Arc<List>),
    Dict(Arc<Dict>),
    Object(Arc<Object>),
    Future(Arc<Future>),
    Enum(Arc<EnumValue>),
    /// The value of a variable that is not yet assigned on some path (`prim::Uninitialized`).
    Uninitialized,
    /// An opaque host object (custom classes, generators); compared by identity.
    Capsule(Arc<Capsule>),
}

const _: () = assert!(std::mem::size_of::<IValue>() == 16);

/// An immutable tuple; named tuples keep their type.
#[derive(Debug)]
pub struct Tuple {
    pub elements: Vec<IValue>,
    /// The named-tuple type, when the tuple is one.
    pub named_type: Option<TypeRef>,
}

/// A mutable list shared by reference, tagged with its element type.
#[derive(Debug)]
pub struct List {
    pub elem_type: TypeRef,
    pub items: RwLock<Vec<IValue>>,
}

/// A dict key: an `IValue` with Python's hashing/equality for the key types TorchScript allows
/// (str, int, float, bool, complex, Tensor by identity, device).
#[derive(Clone, Debug)]
pub struct DictKey(pub IValue);

/// A mutable, insertion-ordered dict shared by reference, tagged with key and value types.
#[derive(Debug)]
pub struct Dict {
    pub key_type: TypeRef,
    pub value_type: TypeRef,
    pub entries: RwLock<IndexMap<DictKey, IValue>>,
}

/// An instance of a TorchScript class or module: attribute slots in the class's order.
#[derive(Debug)]
pub struct Object {
    pub class: Arc<ClassType>,
    pub slots: RwLock<Vec<IValue>>,
}

/// A member of an `Enum` class.
#[derive(Debug)]
pub struct EnumValue {
    pub enum_type: Arc<EnumType>,
    pub name: String,
    pub value: IValue,
}

/// An opaque host object held by an `IValue` (boxed so `IValue` stays 16 bytes).
pub struct Capsule(pub Box<dyn std::any::Any + Send + Sync>);

impl std::fmt::Debug for Capsule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Capsule")
    }
}
