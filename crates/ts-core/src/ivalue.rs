//! `IValue`: the 16-byte tagged union holding any TorchScript value at run time.
//!
//! Ints, floats, bools and tuples are values; tensors, lists, dicts, objects and futures are
//! shared mutable references (cloning an `IValue` of those kinds aliases, as Python does).

use std::sync::Arc;

use indexmap::IndexMap;
use parking_lot::RwLock;
use ts_tensor::{Device, Tensor};

use crate::future::Future;
use crate::types::{ClassType, EnumType, Type, TypeRef};
use ts_tensor::Scalar;

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

// ---------------------------------------------------------------------------------------------
// Construction

impl IValue {
    /// A string value.
    pub fn str(s: impl Into<String>) -> IValue {
        IValue::String(Arc::new(s.into()))
    }

    /// A new list with the given element type.
    pub fn list(elem_type: TypeRef, items: Vec<IValue>) -> IValue {
        IValue::List(Arc::new(List {
            elem_type,
            items: RwLock::new(items),
        }))
    }

    /// A tuple.
    pub fn tuple(elements: Vec<IValue>) -> IValue {
        IValue::Tuple(Arc::new(Tuple {
            elements,
            named_type: None,
        }))
    }

    /// A named tuple of type `ty`.
    pub fn named_tuple(ty: TypeRef, elements: Vec<IValue>) -> IValue {
        IValue::Tuple(Arc::new(Tuple {
            elements,
            named_type: Some(ty),
        }))
    }

    /// A new dict with the given key and value types.
    pub fn dict(key_type: TypeRef, value_type: TypeRef, entries: Vec<(IValue, IValue)>) -> IValue {
        IValue::Dict(Arc::new(Dict {
            key_type,
            value_type,
            entries: RwLock::new(entries.into_iter().map(|(k, v)| (DictKey(k), v)).collect()),
        }))
    }

    /// A new object of `class` with the given slot values.
    pub fn object(class: Arc<ClassType>, slots: Vec<IValue>) -> IValue {
        IValue::Object(Arc::new(Object {
            class,
            slots: RwLock::new(slots),
        }))
    }

    /// A complex number.
    pub fn complex(re: f64, im: f64) -> IValue {
        IValue::Complex(Arc::new((re, im)))
    }

    /// A list of ints (`int[]`).
    pub fn int_list(v: impl IntoIterator<Item = i64>) -> IValue {
        IValue::list(Type::int(), v.into_iter().map(IValue::Int).collect())
    }

    /// A list of floats (`float[]`).
    pub fn float_list(v: impl IntoIterator<Item = f64>) -> IValue {
        IValue::list(Type::float(), v.into_iter().map(IValue::Double).collect())
    }

    /// A list of bools (`bool[]`).
    pub fn bool_list(v: impl IntoIterator<Item = bool>) -> IValue {
        IValue::list(Type::bool(), v.into_iter().map(IValue::Bool).collect())
    }

    /// A list of tensors (`Tensor[]`).
    pub fn tensor_list(v: impl IntoIterator<Item = Tensor>) -> IValue {
        IValue::list(Type::tensor(), v.into_iter().map(IValue::Tensor).collect())
    }

    /// A Python number as an IValue.
    pub fn from_scalar(s: Scalar) -> IValue {
        match s {
            Scalar::Bool(b) => IValue::Bool(b),
            Scalar::Int(i) => IValue::Int(i),
            Scalar::Float(f) => IValue::Double(f),
        }
    }
}

impl From<i64> for IValue {
    fn from(v: i64) -> Self {
        IValue::Int(v)
    }
}

impl From<f64> for IValue {
    fn from(v: f64) -> Self {
        IValue::Double(v)
    }
}

impl From<bool> for IValue {
    fn from(v: bool) -> Self {
        IValue::Bool(v)
    }
}

impl From<Tensor> for IValue {
    fn from(v: Tensor) -> Self {
        IValue::Tensor(v)
    }
}

impl From<&str> for IValue {
    fn from(v: &str) -> Self {
        IValue::str(v)
    }
}

impl From<String> for IValue {
    fn from(v: String) -> Self {
        IValue::String(Arc::new(v))
    }
}

impl From<Device> for IValue {
    fn from(v: Device) -> Self {
        IValue::Device(v)
    }
}

impl From<Scalar> for IValue {
    fn from(v: Scalar) -> Self {
        IValue::from_scalar(v)
    }
}

// ---------------------------------------------------------------------------------------------
// Access

impl IValue {
    /// The variant name, for error messages (`Tensor`, `int`, `List`, ...).
    pub fn tag_name(&self) -> &'static str {
        match self {
            IValue::None => "None",
            IValue::Bool(_) => "bool",
            IValue::Int(_) => "int",
            IValue::Double(_) => "float",
            IValue::Complex(_) => "complex",
            IValue::Tensor(_) => "Tensor",
            IValue::String(_) => "str",
            IValue::Device(_) => "Device",
            IValue::Tuple(_) => "Tuple",
            IValue::List(_) => "List",
            IValue::Dict(_) => "Dict",
            IValue::Object(_) => "Object",
            IValue::Future(_) => "Future",
            IValue::Enum(_) => "Enum",
            IValue::Uninitialized => "Uninitialized",
            IValue::Capsule(_) => "Capsule",
        }
    }

    /// True for `None`.
    pub fn is_none(&self) -> bool {
        matches!(self, IValue::None)
    }

    /// The int, if this is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            IValue::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The float, if this is one.
    pub fn as_double(&self) -> Option<f64> {
        match self {
            IValue::Double(d) => Some(*d),
            _ => None,
        }
    }

    /// The bool, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            IValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The tensor, if this is one.
    pub fn as_tensor(&self) -> Option<&Tensor> {
        match self {
            IValue::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            IValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The list, if this is one.
    pub fn as_list(&self) -> Option<&Arc<List>> {
        match self {
            IValue::List(l) => Some(l),
            _ => None,
        }
    }

    /// The tuple, if this is one.
    pub fn as_tuple(&self) -> Option<&Arc<Tuple>> {
        match self {
            IValue::Tuple(t) => Some(t),
            _ => None,
        }
    }

    /// The dict, if this is one.
    pub fn as_dict(&self) -> Option<&Arc<Dict>> {
        match self {
            IValue::Dict(d) => Some(d),
            _ => None,
        }
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Arc<Object>> {
        match self {
            IValue::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The future, if this is one.
    pub fn as_future(&self) -> Option<&Arc<Future>> {
        match self {
            IValue::Future(f) => Some(f),
            _ => None,
        }
    }

    /// The device, if this is one.
    pub fn as_device(&self) -> Option<Device> {
        match self {
            IValue::Device(d) => Some(*d),
            _ => None,
        }
    }

    /// A Python number (bool, int or float) as a `Scalar`.
    pub fn as_scalar(&self) -> Option<Scalar> {
        match self {
            IValue::Bool(b) => Some(Scalar::Bool(*b)),
            IValue::Int(i) => Some(Scalar::Int(*i)),
            IValue::Double(d) => Some(Scalar::Float(*d)),
            _ => None,
        }
    }

    /// A snapshot of the list's items (cloning aliases reference elements).
    pub fn list_items(&self) -> Option<Vec<IValue>> {
        self.as_list().map(|l| l.items.read().clone())
    }

    /// The elements of an `int[]` list.
    pub fn as_int_list(&self) -> Option<Vec<i64>> {
        let l = self.as_list()?;
        l.items.read().iter().map(|v| v.as_int()).collect()
    }

    /// True when both are the same object (Python `is`): identity for reference types, value
    /// equality for None/bools/ints (as TorchScript's `is` on primitives).
    pub fn is_same(&self, other: &IValue) -> bool {
        use IValue::*;
        match (self, other) {
            (None, None) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Double(a), Double(b)) => a.to_bits() == b.to_bits(),
            (Tensor(a), Tensor(b)) => ts_tensor::Tensor::is_same(a, b),
            (String(a), String(b)) => Arc::ptr_eq(a, b),
            (Device(a), Device(b)) => a == b,
            (Tuple(a), Tuple(b)) => Arc::ptr_eq(a, b),
            (List(a), List(b)) => Arc::ptr_eq(a, b),
            (Dict(a), Dict(b)) => Arc::ptr_eq(a, b),
            (Object(a), Object(b)) => Arc::ptr_eq(a, b),
            (Future(a), Future(b)) => Arc::ptr_eq(a, b),
            (Enum(a), Enum(b)) => {
                Arc::ptr_eq(a, b) || (a.enum_type.name == b.enum_type.name && a.name == b.name)
            }
            (Capsule(a), Capsule(b)) => Arc::ptr_eq(a, b),
            (Uninitialized, Uninitialized) => true,
            _ => false,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Dynamic types

impl IValue {
    /// The dynamic type of the value (what `isinstance` checks and what a list's contents must
    /// be a subtype of).
    pub fn type_of(&self) -> TypeRef {
        match self {
            IValue::None => Type::none(),
            IValue::Bool(_) => Type::bool(),
            IValue::Int(_) => Type::int(),
            IValue::Double(_) => Type::float(),
            IValue::Complex(_) => Type::complex(),
            IValue::Tensor(t) => {
                let m = t.meta();
                Arc::new(Type::Tensor(crate::types::TensorType {
                    dtype: Some(m.dtype),
                    device: Some(m.storage.device()),
                    sizes: Some(m.sizes.iter().map(|&s| Some(s)).collect()),
                    strides: Some(m.strides.iter().map(|&s| Some(s)).collect()),
                    requires_grad: Some(m.requires_grad),
                    undefined: Some(false),
                }))
            }
            IValue::String(_) => Type::string(),
            IValue::Device(_) => Type::device(),
            IValue::Tuple(t) => match &t.named_type {
                Some(nt) => nt.clone(),
                None => Type::tuple(t.elements.iter().map(|e| e.type_of()).collect()),
            },
            IValue::List(l) => Type::list(l.elem_type.clone()),
            IValue::Dict(d) => Type::dict(d.key_type.clone(), d.value_type.clone()),
            IValue::Object(o) => Type::class(o.class.clone()),
            IValue::Future(f) => Type::future(f.elem_type.clone()),
            IValue::Enum(e) => Arc::new(Type::Enum(e.enum_type.clone())),
            IValue::Uninitialized => Type::any(),
            // A `torch.Generator` (ts-ops keeps the RNG state in a capsule).
            IValue::Capsule(c) if c.0.is::<ts_tensor::Generator>() => Type::generator(),
            IValue::Capsule(_) => Type::capsule(),
        }
    }

    /// True when the value is an instance of `ty` (TorchScript's `isinstance`).
    pub fn is_instance_of(&self, ty: &Type) -> bool {
        match (self, ty) {
            (_, Type::Any) => true,
            (IValue::Tensor(_), Type::Tensor(_)) => true,
            (IValue::None, Type::Optional(_)) => true,
            (_, Type::Optional(e)) => self.is_instance_of(e),
            (_, Type::Union(ms)) => ms.iter().any(|m| self.is_instance_of(m)),
            (IValue::List(l), Type::List(e)) => l.elem_type.is_subtype_of(e) || **e == *l.elem_type,
            (IValue::Tuple(t), Type::Tuple(tt)) => {
                t.elements.len() == tt.elements.len()
                    && t.elements
                        .iter()
                        .zip(&tt.elements)
                        .all(|(v, e)| v.is_instance_of(e))
            }
            _ => self.type_of().is_subtype_of(ty),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Equality (Python `==` for the values TorchScript compares structurally)

impl IValue {
    /// Python-style equality: numbers by value (int, float and bool compare across kinds),
    /// strings, tuples, lists and dicts elementwise, tensors by identity or equal shape and
    /// values, objects and futures by identity.
    pub fn py_eq(&self, other: &IValue) -> bool {
        use IValue::*;
        if let (Some(a), Some(b)) = (self.as_scalar(), other.as_scalar()) {
            return match (a, b) {
                (Scalar::Float(_), _) | (_, Scalar::Float(_)) => a.to_f64() == b.to_f64(),
                _ => a.to_i64() == b.to_i64(),
            };
        }
        match (self, other) {
            (None, None) => true,
            (Complex(a), Complex(b)) => a == b,
            (String(a), String(b)) => a == b,
            (Device(a), Device(b)) => a == b,
            (Tensor(a), Tensor(b)) => {
                ts_tensor::Tensor::is_same(a, b)
                    || (a.sizes() == b.sizes() && a.to_vec::<f64>() == b.to_vec::<f64>())
            }
            (Tuple(a), Tuple(b)) => {
                a.elements.len() == b.elements.len()
                    && a.elements.iter().zip(&b.elements).all(|(x, y)| x.py_eq(y))
            }
            (List(a), List(b)) => {
                if Arc::ptr_eq(a, b) {
                    return true;
                }
                let (x, y) = (a.items.read().clone(), b.items.read().clone());
                x.len() == y.len() && x.iter().zip(&y).all(|(p, q)| p.is_same(q) || p.py_eq(q))
            }
            (Dict(a), Dict(b)) => {
                if Arc::ptr_eq(a, b) {
                    return true;
                }
                let (x, y) = (a.entries.read(), b.entries.read());
                x.len() == y.len()
                    && x.iter()
                        .all(|(k, v)| y.get(k).is_some_and(|w| v.is_same(w) || v.py_eq(w)))
            }
            (Enum(a), Enum(b)) => a.enum_type.name == b.enum_type.name && a.name == b.name,
            _ => self.is_same(other),
        }
    }
}

impl PartialEq for DictKey {
    fn eq(&self, other: &DictKey) -> bool {
        match (&self.0, &other.0) {
            (IValue::Tensor(a), IValue::Tensor(b)) => Tensor::is_same(a, b),
            (a, b) => a.py_eq(b),
        }
    }
}

impl Eq for DictKey {}

impl std::hash::Hash for DictKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match &self.0 {
            // Python hashes equal numbers equally: hash(1) == hash(1.0) == hash(True).
            IValue::Int(i) => i.hash(state),
            IValue::Bool(b) => (*b as i64).hash(state),
            IValue::Double(d) => {
                if d.fract() == 0.0 && d.abs() < 9.2e18 {
                    (*d as i64).hash(state)
                } else {
                    d.to_bits().hash(state)
                }
            }
            IValue::String(s) => s.hash(state),
            IValue::Tensor(t) => t.id().hash(state),
            IValue::Device(d) => d.hash(state),
            IValue::Complex(c) => (c.0.to_bits(), c.1.to_bits()).hash(state),
            IValue::None => 0u8.hash(state),
            IValue::Tuple(t) => {
                for e in &t.elements {
                    DictKey(e.clone()).hash(state)
                }
            }
            IValue::Enum(e) => e.name.hash(state),
            other => other.tag_name().hash(state),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Printing

/// How strings are written when printing a value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StrStyle {
    /// As TorchScript's `print`/`str()` shows them: raw, even inside containers (`[a, b]`).
    Raw,
    /// Double-quoted with escapes, as schema defaults show them.
    Quoted,
    /// As graph constants show them (PyTorch's `IValue::repr`): quoted strings, empty or
    /// ambiguous lists and dicts as `annotate(List[int], [])`, tensors as `{1}`, ATen's
    /// printing on one line, or `<Tensor>` when large.
    IrConstant,
}

/// Whether a list/dict element type is recoverable from the printed elements.
fn elem_type_inferable(t: &Type) -> bool {
    !matches!(
        t,
        Type::Optional(_) | Type::Union(_) | Type::Number | Type::Interface(_) | Type::Any
    )
}

/// Writes a tensor the way graph constants show it.
pub fn write_tensor_constant(out: &mut String, t: &Tensor) {
    use std::fmt::Write;
    let n = t.numel();
    if n == 1 {
        out.push('{');
        if t.dtype().is_floating_point() {
            out.push_str(&crate::number_format::format_g(t.to_vec::<f64>()[0], 6));
        } else {
            let _ = write!(out, "{}", t.to_vec::<i64>()[0]);
        }
        out.push('}');
    } else if n <= 10 {
        out.push_str(&ts_tensor::aten_format::aten_string(t).replace('\n', " "));
    } else {
        out.push_str("<Tensor>");
    }
}

impl IValue {
    /// Writes the value as TorchScript prints it.
    pub fn write(&self, out: &mut String, style: StrStyle) {
        use std::fmt::Write;
        match self {
            IValue::None => out.push_str("None"),
            IValue::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
            IValue::Int(i) => {
                let _ = write!(out, "{i}");
            }
            // PyTorch's IValue printer writes integral doubles through `int64_t`, which drops
            // the sign of -0.0 (`str(-0.0) == "0."`).
            IValue::Double(d) if *d == 0.0 => out.push_str("0."),
            IValue::Double(d) => out.push_str(&crate::number_format::format_double(*d)),
            IValue::Complex(c) => {
                let (re, im) = **c;
                if re == 0.0 && !re.is_sign_negative() {
                    let _ = write!(out, "{}j", crate::number_format::format_g(im, 17));
                } else {
                    let sign = if im >= 0.0 || im.is_nan() { "+" } else { "-" };
                    let _ = write!(
                        out,
                        "({}{sign}{}j)",
                        crate::number_format::format_g(re, 17),
                        crate::number_format::format_g(im.abs(), 17)
                    );
                }
            }
            IValue::Tensor(t) => {
                if style == StrStyle::IrConstant {
                    write_tensor_constant(out, t);
                } else {
                    let _ = write!(out, "{t}");
                }
            }
            IValue::String(s) => match style {
                StrStyle::Raw => out.push_str(s),
                StrStyle::Quoted | StrStyle::IrConstant => crate::scanner::quote_string(s, out),
            },
            IValue::Device(d) => {
                let _ = write!(out, "{d}");
            }
            IValue::Tuple(t) => {
                out.push('(');
                for (i, e) in t.elements.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    e.write(out, style);
                }
                if t.elements.len() == 1 {
                    out.push(',');
                }
                out.push(')');
            }
            IValue::List(l)
                if style == StrStyle::IrConstant
                    && (l.items.read().is_empty() || !elem_type_inferable(&l.elem_type)) =>
            {
                let _ = write!(
                    out,
                    "annotate({}, [",
                    Type::list(l.elem_type.clone()).annotation_str()
                );
                for (i, e) in l.items.read().iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    e.write(out, style);
                }
                out.push_str("])");
            }
            IValue::Dict(d)
                if style == StrStyle::IrConstant
                    && (d.entries.read().is_empty()
                        || !elem_type_inferable(&d.key_type)
                        || !elem_type_inferable(&d.value_type)) =>
            {
                let _ = write!(
                    out,
                    "annotate({}, ",
                    Type::dict(d.key_type.clone(), d.value_type.clone()).annotation_str()
                );
                out.push('{');
                for (i, (k, v)) in d.entries.read().iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    k.0.write(out, style);
                    out.push_str(": ");
                    v.write(out, style);
                }
                out.push_str("})");
            }
            IValue::List(l) => {
                out.push('[');
                for (i, e) in l.items.read().iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    e.write(out, style);
                }
                out.push(']');
            }
            IValue::Dict(d) => {
                out.push('{');
                for (i, (k, v)) in d.entries.read().iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    k.0.write(out, style);
                    out.push_str(": ");
                    v.write(out, style);
                }
                out.push('}');
            }
            IValue::Object(o) => {
                let _ = write!(out, "<{} object at {:p}>", o.class.name, Arc::as_ptr(o));
            }
            IValue::Future(_) => out.push_str("Future"),
            IValue::Enum(e) => {
                let _ = write!(
                    out,
                    "{}.{}",
                    e.enum_type.name.rsplit('.').next().unwrap_or(""),
                    e.name
                );
            }
            IValue::Uninitialized => out.push_str("Uninitialized"),
            IValue::Capsule(_) => out.push_str("Capsule"),
        }
    }

    /// The value as TorchScript's `str()`/`print` shows it.
    pub fn to_display_string(&self) -> String {
        let mut s = String::new();
        self.write(&mut s, StrStyle::Raw);
        s
    }

    /// The value as graph constants show it (strings quoted).
    pub fn to_quoted_string(&self) -> String {
        let mut s = String::new();
        self.write(&mut s, StrStyle::Quoted);
        s
    }
}

impl std::fmt::Display for IValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_display_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<IValue>(), 16);
    }

    #[test]
    fn prints_like_torchscript() {
        // Expected strings printed by `print(...)` in a scripted function under PyTorch 2.15.
        let l = IValue::list(Type::string(), vec![IValue::str("a"), IValue::str("b'c")]);
        assert_eq!(l.to_display_string(), "[a, b'c]");
        assert_eq!(l.to_quoted_string(), "[\"a\", \"b\\'c\"]");
        let t = IValue::tuple(vec![
            IValue::Int(1),
            IValue::Double(2.0),
            IValue::str("s"),
            IValue::None,
            IValue::Bool(true),
        ]);
        assert_eq!(t.to_display_string(), "(1, 2., s, None, True)");
        assert_eq!(t.to_quoted_string(), "(1, 2., \"s\", None, True)");
        assert_eq!(
            IValue::tuple(vec![IValue::Int(1)]).to_display_string(),
            "(1,)"
        );
        let d = IValue::dict(
            Type::int(),
            Type::float_list(),
            vec![(IValue::Int(1), IValue::float_list([1.0]))],
        );
        assert_eq!(d.to_display_string(), "{1: [1.]}");
        assert_eq!(IValue::int_list(Vec::new()).to_display_string(), "[]");
    }

    #[test]
    fn equality_and_identity() {
        let a = IValue::int_list([1, 2]);
        let b = IValue::int_list([1, 2]);
        assert!(a.py_eq(&b));
        assert!(!a.is_same(&b));
        assert!(a.is_same(&a.clone()));
        assert!(IValue::Int(1).py_eq(&IValue::Double(1.0)));
        assert!(IValue::Bool(true).py_eq(&IValue::Int(1)));
        assert!(!IValue::str("a").py_eq(&IValue::str("b")));
        let d = IValue::dict(
            Type::string(),
            Type::int(),
            vec![(IValue::str("x"), IValue::Int(1))],
        );
        let dd = d.as_dict().unwrap();
        assert_eq!(
            dd.entries
                .read()
                .get(&DictKey(IValue::str("x")))
                .and_then(|v| v.as_int()),
            Some(1)
        );
    }

    #[test]
    fn dynamic_types() {
        assert_eq!(IValue::int_list([1]).type_of().to_string(), "int[]");
        assert_eq!(
            IValue::tuple(vec![IValue::Int(1), IValue::str("a")])
                .type_of()
                .to_string(),
            "(int, str)"
        );
        assert!(IValue::None.is_instance_of(&Type::optional(Type::int())));
        assert!(IValue::Int(3).is_instance_of(&Type::optional(Type::int())));
        assert!(!IValue::Double(3.0).is_instance_of(&Type::int()));
    }
}
