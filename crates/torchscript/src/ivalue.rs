//! [`IValue`]: the values TorchScript functions take and return, with conversions from and to
//! Rust types.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use ts_core::{Type, TypeRef};

use crate::error::{Error, Result};
use crate::module::Module;
use crate::tensor::{Device, Tensor};

/// A TorchScript value: what methods and functions take and return.
///
/// Lists, tuples and dicts are plain Rust collections here (converted at the call boundary);
/// tensors and objects stay handles to shared data.
///
/// ```
/// use torchscript::IValue;
///
/// let v = IValue::from((1i64, "two", vec![3.0f64, 4.0]));
/// let (a, b, c): (i64, String, Vec<f64>) = v.try_into()?;
/// assert_eq!((a, b.as_str(), c), (1, "two", vec![3.0, 4.0]));
/// # Ok::<(), torchscript::Error>(())
/// ```
#[derive(Clone, Debug)]
pub enum IValue {
    None,
    Bool(bool),
    Int(i64),
    Double(f64),
    Complex(f64, f64),
    String(String),
    Tensor(Tensor),
    Device(Device),
    Tuple(Vec<IValue>),
    List(Vec<IValue>),
    /// Entries in insertion order (TorchScript dicts are ordered).
    Dict(Vec<(IValue, IValue)>),
    /// An object of a TorchScript class (a module is one; see [`Module::from_ivalue`]).
    Object(Object),
    /// A value with no Rust counterpart (futures, enums, capsules), kept as is.
    Other(Opaque),
}

/// An instance of a TorchScript class.
#[derive(Clone)]
pub struct Object(pub(crate) Arc<ts_core::Object>);

impl Object {
    /// The class's qualified name (`__torch__.Point`).
    pub fn class_name(&self) -> &str {
        &self.0.class.name
    }

    /// The attribute `name`.
    pub fn attribute(&self, name: &str) -> Result<IValue> {
        let i = self.0.class.attribute_index(name).ok_or_else(|| {
            Error::not_found(format!(
                "'{}' object has no attribute '{name}'",
                self.0.class.name
            ))
        })?;
        let v = self.0.slots.read()[i].clone();
        Ok(IValue::from_core(v))
    }

    /// True when the object is a module.
    pub fn is_module(&self) -> bool {
        self.0.class.is_module
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Object({})", self.0.class.name)
    }
}

/// A TorchScript value without a Rust counterpart.
#[derive(Clone)]
pub struct Opaque(pub(crate) ts_core::IValue);

impl fmt::Debug for Opaque {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Opaque({})", self.0.tag_name())
    }
}

impl IValue {
    /// Converts from the runtime's value.
    pub fn from_core(v: ts_core::IValue) -> IValue {
        use ts_core::IValue as C;
        match v {
            C::None => IValue::None,
            C::Bool(b) => IValue::Bool(b),
            C::Int(i) => IValue::Int(i),
            C::Double(d) => IValue::Double(d),
            C::Complex(c) => IValue::Complex(c.0, c.1),
            C::Tensor(t) => IValue::Tensor(Tensor(t)),
            C::String(s) => IValue::String(s.to_string()),
            C::Device(d) => IValue::Device(d),
            C::Tuple(t) => {
                IValue::Tuple(t.elements.iter().cloned().map(IValue::from_core).collect())
            }
            C::List(l) => IValue::List(
                l.items
                    .read()
                    .iter()
                    .cloned()
                    .map(IValue::from_core)
                    .collect(),
            ),
            C::Dict(d) => IValue::Dict(
                d.entries
                    .read()
                    .iter()
                    .map(|(k, v)| (IValue::from_core(k.0.clone()), IValue::from_core(v.clone())))
                    .collect(),
            ),
            C::Object(o) => IValue::Object(Object(o)),
            other => IValue::Other(Opaque(other)),
        }
    }

    /// Converts to the runtime's value. List and dict element types are inferred from the
    /// elements (a call converts them to the declared types).
    pub fn into_core(self) -> ts_core::IValue {
        use ts_core::IValue as C;
        match self {
            IValue::None => C::None,
            IValue::Bool(b) => C::Bool(b),
            IValue::Int(i) => C::Int(i),
            IValue::Double(d) => C::Double(d),
            IValue::Complex(re, im) => C::complex(re, im),
            IValue::String(s) => C::str(s),
            IValue::Tensor(t) => C::Tensor(t.0),
            IValue::Device(d) => C::Device(d),
            IValue::Tuple(v) => C::tuple(v.into_iter().map(IValue::into_core).collect()),
            IValue::List(v) => {
                let items: Vec<C> = v.into_iter().map(IValue::into_core).collect();
                let elem = common_type(items.iter());
                C::list(elem, items)
            }
            IValue::Dict(entries) => {
                let entries: Vec<(C, C)> = entries
                    .into_iter()
                    .map(|(k, v)| (k.into_core(), v.into_core()))
                    .collect();
                let kt = common_type(entries.iter().map(|(k, _)| k));
                let vt = common_type(entries.iter().map(|(_, v)| v));
                C::dict(kt, vt, entries)
            }
            IValue::Object(o) => C::Object(o.0),
            IValue::Other(o) => o.0,
        }
    }

    /// True for `None`.
    pub fn is_none(&self) -> bool {
        matches!(self, IValue::None)
    }

    /// The tensor, if this is one.
    pub fn as_tensor(&self) -> Option<&Tensor> {
        match self {
            IValue::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// The TorchScript type name of the value (`Tensor`, `int`, `List[int]`, ...).
    pub fn type_name(&self) -> String {
        self.clone().into_core().type_of().annotation_str()
    }
}

/// The element type shared by `values` (`Any` when they differ or there are none, which a
/// call then converts to the declared type).
fn common_type<'a>(mut values: impl Iterator<Item = &'a ts_core::IValue>) -> TypeRef {
    let Some(first) = values.next() else {
        return Type::any();
    };
    let t = match first {
        ts_core::IValue::Tensor(_) => Type::tensor(),
        v => v.type_of(),
    };
    for v in values {
        let u = match v {
            ts_core::IValue::Tensor(_) => Type::tensor(),
            v => v.type_of(),
        };
        if *u != *t {
            return Type::any();
        }
    }
    t
}

impl fmt::Display for IValue {
    /// Prints as Python's `str(value)` (tensors as `print(tensor)`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.clone().into_core().to_display_string())
    }
}

macro_rules! from_number {
    ($($t:ty => $variant:ident as $as:ty),*) => {$(
        impl From<$t> for IValue {
            fn from(v: $t) -> IValue {
                IValue::$variant(v as $as)
            }
        }
    )*};
}

from_number!(i64 => Int as i64, i32 => Int as i64, usize => Int as i64, f64 => Double as f64, f32 => Double as f64);

impl From<bool> for IValue {
    fn from(v: bool) -> IValue {
        IValue::Bool(v)
    }
}

impl From<&str> for IValue {
    fn from(v: &str) -> IValue {
        IValue::String(v.to_string())
    }
}

impl From<String> for IValue {
    fn from(v: String) -> IValue {
        IValue::String(v)
    }
}

impl From<Tensor> for IValue {
    fn from(v: Tensor) -> IValue {
        IValue::Tensor(v)
    }
}

impl From<&Tensor> for IValue {
    fn from(v: &Tensor) -> IValue {
        IValue::Tensor(v.clone())
    }
}

impl From<Device> for IValue {
    fn from(v: Device) -> IValue {
        IValue::Device(v)
    }
}

impl From<Module> for IValue {
    fn from(m: Module) -> IValue {
        IValue::Object(Object(m.object().clone()))
    }
}

impl From<()> for IValue {
    fn from(_: ()) -> IValue {
        IValue::None
    }
}

impl<T: Into<IValue>> From<Option<T>> for IValue {
    fn from(v: Option<T>) -> IValue {
        v.map_or(IValue::None, Into::into)
    }
}

impl<T: Into<IValue>> From<Vec<T>> for IValue {
    fn from(v: Vec<T>) -> IValue {
        IValue::List(v.into_iter().map(Into::into).collect())
    }
}

impl<T: Into<IValue> + Clone> From<&[T]> for IValue {
    fn from(v: &[T]) -> IValue {
        IValue::List(v.iter().cloned().map(Into::into).collect())
    }
}

impl<K: Into<IValue>, V: Into<IValue>> From<HashMap<K, V>> for IValue {
    /// A dict (in the map's iteration order; use `IValue::Dict` for a chosen order).
    fn from(m: HashMap<K, V>) -> IValue {
        IValue::Dict(m.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

macro_rules! tuple_impls {
    ($(($($name:ident),+)),*) => {$(
        impl<$($name: Into<IValue>),+> From<($($name,)+)> for IValue {
            #[allow(non_snake_case)]
            fn from(($($name,)+): ($($name,)+)) -> IValue {
                IValue::Tuple(vec![$($name.into()),+])
            }
        }

        impl<$($name: TryFrom<IValue, Error = Error>),+> TryFrom<IValue> for ($($name,)+) {
            type Error = Error;
            #[allow(non_snake_case)]
            fn try_from(v: IValue) -> Result<Self> {
                let items = match v {
                    IValue::Tuple(items) | IValue::List(items) => items,
                    other => return Err(mismatch("a tuple", &other)),
                };
                let n = [$(stringify!($name)),+].len();
                if items.len() != n {
                    return Err(Error::conversion(format!(
                        "expected a tuple of {n} elements, got {}",
                        items.len()
                    )));
                }
                let mut it = items.into_iter();
                $(let $name = $name::try_from(it.next().unwrap_or(IValue::None))?;)+
                Ok(($($name,)+))
            }
        }
    )*};
}

tuple_impls!((A), (A, B), (A, B, C), (A, B, C, D), (A, B, C, D, E));

fn mismatch(expected: &str, got: &IValue) -> Error {
    Error::conversion(format!(
        "expected {expected}, got a value of type {}",
        got.type_name()
    ))
}

impl TryFrom<IValue> for i64 {
    type Error = Error;
    fn try_from(v: IValue) -> Result<i64> {
        match v {
            IValue::Int(i) => Ok(i),
            other => Err(mismatch("an int", &other)),
        }
    }
}

impl TryFrom<IValue> for f64 {
    type Error = Error;
    fn try_from(v: IValue) -> Result<f64> {
        match v {
            IValue::Double(d) => Ok(d),
            IValue::Int(i) => Ok(i as f64),
            other => Err(mismatch("a float", &other)),
        }
    }
}

impl TryFrom<IValue> for bool {
    type Error = Error;
    fn try_from(v: IValue) -> Result<bool> {
        match v {
            IValue::Bool(b) => Ok(b),
            other => Err(mismatch("a bool", &other)),
        }
    }
}

impl TryFrom<IValue> for String {
    type Error = Error;
    fn try_from(v: IValue) -> Result<String> {
        match v {
            IValue::String(s) => Ok(s),
            other => Err(mismatch("a string", &other)),
        }
    }
}

impl TryFrom<IValue> for Tensor {
    type Error = Error;
    fn try_from(v: IValue) -> Result<Tensor> {
        match v {
            IValue::Tensor(t) => Ok(t),
            other => Err(mismatch("a Tensor", &other)),
        }
    }
}

impl TryFrom<IValue> for Module {
    type Error = Error;
    fn try_from(v: IValue) -> Result<Module> {
        Module::from_ivalue(v)
    }
}

impl<T: TryFrom<IValue, Error = Error>> TryFrom<IValue> for Vec<T> {
    type Error = Error;
    fn try_from(v: IValue) -> Result<Vec<T>> {
        match v {
            IValue::List(items) | IValue::Tuple(items) => {
                items.into_iter().map(T::try_from).collect()
            }
            other => Err(mismatch("a list", &other)),
        }
    }
}

impl<T: TryFrom<IValue, Error = Error>> TryFrom<IValue> for Option<T> {
    type Error = Error;
    fn try_from(v: IValue) -> Result<Option<T>> {
        match v {
            IValue::None => Ok(None),
            other => T::try_from(other).map(Some),
        }
    }
}

impl<K, V> TryFrom<IValue> for HashMap<K, V>
where
    K: TryFrom<IValue, Error = Error> + std::hash::Hash + Eq,
    V: TryFrom<IValue, Error = Error>,
{
    type Error = Error;
    fn try_from(v: IValue) -> Result<HashMap<K, V>> {
        match v {
            IValue::Dict(entries) => entries
                .into_iter()
                .map(|(k, v)| Ok((K::try_from(k)?, V::try_from(v)?)))
                .collect(),
            other => Err(mismatch("a dict", &other)),
        }
    }
}

/// Positional arguments of a call: `()`, a tuple of values, an array, a `Vec` or a slice.
///
/// ```
/// # use torchscript::{IntoArgs, IValue, Tensor};
/// let x = Tensor::from_slice(&[1.0f32]);
/// assert_eq!((x.clone(), 2i64).into_args().len(), 2);
/// assert_eq!([x.clone(), x].into_args().len(), 2);
/// assert!(().into_args().is_empty());
/// ```
pub trait IntoArgs {
    /// The arguments as values.
    fn into_args(self) -> Vec<IValue>;
}

impl IntoArgs for () {
    fn into_args(self) -> Vec<IValue> {
        Vec::new()
    }
}

impl<T: Into<IValue>> IntoArgs for Vec<T> {
    fn into_args(self) -> Vec<IValue> {
        self.into_iter().map(Into::into).collect()
    }
}

impl<T: Into<IValue> + Clone> IntoArgs for &[T] {
    fn into_args(self) -> Vec<IValue> {
        self.iter().cloned().map(Into::into).collect()
    }
}

impl<T: Into<IValue>, const N: usize> IntoArgs for [T; N] {
    fn into_args(self) -> Vec<IValue> {
        self.into_iter().map(Into::into).collect()
    }
}

macro_rules! tuple_args {
    ($(($($name:ident),+)),*) => {$(
        impl<$($name: Into<IValue>),+> IntoArgs for ($($name,)+) {
            #[allow(non_snake_case)]
            fn into_args(self) -> Vec<IValue> {
                let ($($name,)+) = self;
                vec![$($name.into()),+]
            }
        }
    )*};
}

tuple_args!(
    (A),
    (A, B),
    (A, B, C),
    (A, B, C, D),
    (A, B, C, D, E),
    (A, B, C, D, E, F)
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_runtime_value() {
        let v = IValue::from(vec![(1i64, 2.5f64), (3, 4.0)]);
        let core = v.clone().into_core();
        assert_eq!(core.type_of().annotation_str(), "List[Tuple[int, float]]");
        let back: Vec<(i64, f64)> = IValue::from_core(core).try_into().unwrap();
        assert_eq!(back, vec![(1, 2.5), (3, 4.0)]);
        let d = IValue::Dict(vec![("a".into(), 1i64.into())]).into_core();
        assert_eq!(d.type_of().annotation_str(), "Dict[str, int]");
        let m: HashMap<String, i64> = IValue::from_core(d).try_into().unwrap();
        assert_eq!(m["a"], 1);
        let mixed = IValue::List(vec![1i64.into(), "x".into()]).into_core();
        assert_eq!(mixed.type_of().annotation_str(), "List[Any]");
    }

    #[test]
    fn conversions_refuse_other_types() {
        let e = i64::try_from(IValue::from("x")).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Conversion);
        assert!(<(i64, i64)>::try_from(IValue::from((1i64,))).is_err());
        assert_eq!(Option::<i64>::try_from(IValue::None).unwrap(), None);
        assert_eq!(f64::try_from(IValue::Int(2)).unwrap(), 2.0);
        assert!(Tensor::try_from(IValue::Int(2)).is_err());
    }
}
