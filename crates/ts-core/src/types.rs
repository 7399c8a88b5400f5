//! TorchScript's static types (`c10::Type`): what a `Value` in the IR, a schema argument or an
//! attribute holds.
//!
//! Types are immutable and shared as [`TypeRef`] (`Arc<Type>`), except class, interface and enum
//! types, which are nominal: they are compared by identity/qualified name and their member tables
//! fill in while a compilation unit is being compiled.

use std::sync::Arc;

use parking_lot::RwLock;
use ts_tensor::{DType, Device};

use crate::ivalue::IValue;
use crate::schema::FunctionSchema;

/// A shared, immutable type.
pub type TypeRef = Arc<Type>;

/// What is known statically about a tensor. `None` everywhere is the plain `Tensor` type.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TensorType {
    pub dtype: Option<DType>,
    pub device: Option<Device>,
    /// Per-dimension sizes; `Some` fixes the rank, an inner `None` is an unknown size.
    pub sizes: Option<Vec<Option<i64>>>,
    /// Per-dimension strides, like `sizes`.
    pub strides: Option<Vec<Option<i64>>>,
    pub requires_grad: Option<bool>,
    /// `Some(true)` for a tensor known to be undefined (`None` passed as a Tensor).
    pub undefined: Option<bool>,
}

/// A tuple type; named tuples carry their qualified name and field names.
#[derive(Clone, Debug)]
pub struct TupleType {
    pub elements: Vec<TypeRef>,
    pub names: Option<NamedTupleInfo>,
}

/// The nominal part of a `NamedTuple` type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NamedTupleInfo {
    /// Qualified name, e.g. `__torch__.Point` (or `torch.return_types.max`).
    pub qualified_name: String,
    pub fields: Vec<String>,
    /// Default values of trailing fields, when declared.
    pub defaults: Vec<Option<String>>,
}

/// A TorchScript type.
#[derive(Debug)]
pub enum Type {
    Any,
    Tensor(TensorType),
    Int,
    /// `SymInt` in schemas; behaves as `int` in programs.
    SymInt,
    Float,
    /// `SymFloat` in schemas; behaves as `float`.
    SymFloat,
    /// `SymBool` in schemas; behaves as `bool`.
    SymBool,
    Complex,
    Bool,
    Str,
    NoneType,
    Device,
    /// `Scalar` in schemas, `number` in annotations: int, float, complex or bool.
    Number,
    /// Schema-only aliases of `int` (printed with their own names in schemas).
    ScalarType,
    Layout,
    MemoryFormat,
    QScheme,
    Dimname,
    Generator,
    Storage,
    Stream,
    Capsule,
    /// `AnyList`, `AnyTuple`, `AnyClassType`, `AnyEnumType`: the supertypes of every list,
    /// tuple, class, enum.
    AnyList,
    AnyTuple,
    AnyClass,
    AnyEnum,
    List(TypeRef),
    Tuple(TupleType),
    Optional(TypeRef),
    Union(Vec<TypeRef>),
    Dict(TypeRef, TypeRef),
    Future(TypeRef),
    RRef(TypeRef),
    Await(TypeRef),
    Class(Arc<ClassType>),
    Interface(Arc<InterfaceType>),
    Enum(Arc<EnumType>),
    /// The type of a first-class function value (a function name used as a value).
    Function(Arc<FunctionType>),
    /// A type variable of a schema (`t`, `t1`, `tVal`).
    Var(String),
}

/// One attribute slot of a class or module.
#[derive(Clone, Debug)]
pub struct ClassAttribute {
    pub name: String,
    pub ty: TypeRef,
    pub is_parameter: bool,
    pub is_buffer: bool,
}

/// Something callable attached to a class: a method compiled by the frontend/runtime. Defined
/// here as a trait so that the core type system can list methods without depending on the
/// runtime that runs them.
pub trait ClassMethod: Send + Sync {
    /// The method name.
    fn name(&self) -> &str;
    /// Its schema (the first argument is `self`).
    fn schema(&self) -> FunctionSchema;
    /// Access to the concrete type (the runtime's `Function`).
    fn as_any(&self) -> &dyn std::any::Any;
}

/// Mutable member tables of a class type.
#[derive(Default)]
pub struct ClassMembers {
    pub attributes: Vec<ClassAttribute>,
    /// `Final` constants and module constants: name and value.
    pub constants: Vec<(String, IValue)>,
    pub methods: Vec<Arc<dyn ClassMethod>>,
    pub static_methods: Vec<Arc<dyn ClassMethod>>,
    /// Properties: name, getter method name, optional setter method name.
    pub properties: Vec<(String, String, Option<String>)>,
}

/// A TorchScript class or module type (nominal).
pub struct ClassType {
    /// Qualified name, e.g. `__torch__.MyModule` or `__torch__.torch.nn.modules.linear.Linear`.
    pub name: String,
    /// True for `nn.Module` types (whose instances are modules).
    pub is_module: bool,
    pub members: RwLock<ClassMembers>,
}

impl std::fmt::Debug for ClassType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClassType({})", self.name)
    }
}

/// An interface type: a set of method schemas; classes match it structurally.
#[derive(Debug)]
pub struct InterfaceType {
    pub name: String,
    pub is_module: bool,
    pub methods: RwLock<Vec<FunctionSchema>>,
}

/// An `Enum` class: its value type and members.
#[derive(Debug)]
pub struct EnumType {
    pub name: String,
    pub value_type: TypeRef,
    pub members: Vec<(String, IValue)>,
}

/// The type of a function used as a value.
#[derive(Debug)]
pub struct FunctionType {
    pub name: String,
    pub schema: FunctionSchema,
}
