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

/// Runs a TorchScript method from inside an operator (a class's `__lt__` while sorting a list
/// of objects, as PyTorch's `sort` kernel does); the runtime installs it.
pub type MethodInvoker = fn(&dyn ClassMethod, Vec<IValue>) -> Result<IValue, ts_tensor::Error>;

static METHOD_INVOKER: std::sync::OnceLock<MethodInvoker> = std::sync::OnceLock::new();

/// Installs the runtime's [`MethodInvoker`] (the first installation wins).
pub fn set_method_invoker(f: MethodInvoker) {
    let _ = METHOD_INVOKER.set(f);
}

/// Calls method `m` with `args` (`self` first) through the installed runtime.
pub fn invoke_method(m: &dyn ClassMethod, args: Vec<IValue>) -> Result<IValue, ts_tensor::Error> {
    match METHOD_INVOKER.get() {
        Some(f) => f(m, args),
        None => Err(ts_tensor::Error::runtime(format!(
            "cannot call method '{}' from an operator: no TorchScript runtime is installed",
            m.name()
        ))),
    }
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

/// The type of a function used as a value (`prim::Constant[name="f"]` outputs it).
pub struct FunctionType {
    pub name: String,
    /// The function, when known (a parsed graph only knows the type's name).
    pub function: Option<Arc<dyn ClassMethod>>,
}

impl std::fmt::Debug for FunctionType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FunctionType({})", self.name)
    }
}

// ---------------------------------------------------------------------------------------------
// Construction

macro_rules! singleton {
    ($($fn_name:ident => $variant:expr),* $(,)?) => {
        impl Type {
            $(
                #[doc = concat!("The shared `", stringify!($fn_name), "` type.")]
                pub fn $fn_name() -> TypeRef {
                    static T: std::sync::OnceLock<TypeRef> = std::sync::OnceLock::new();
                    T.get_or_init(|| Arc::new($variant)).clone()
                }
            )*
        }
    };
}

singleton! {
    any => Type::Any,
    tensor => Type::Tensor(TensorType::default()),
    int => Type::Int,
    sym_int => Type::SymInt,
    float => Type::Float,
    sym_float => Type::SymFloat,
    sym_bool => Type::SymBool,
    complex => Type::Complex,
    bool => Type::Bool,
    string => Type::Str,
    none => Type::NoneType,
    device => Type::Device,
    number => Type::Number,
    scalar_type => Type::ScalarType,
    layout => Type::Layout,
    memory_format => Type::MemoryFormat,
    qscheme => Type::QScheme,
    dimname => Type::Dimname,
    generator => Type::Generator,
    storage => Type::Storage,
    stream => Type::Stream,
    capsule => Type::Capsule,
    any_list => Type::AnyList,
    any_tuple => Type::AnyTuple,
    any_class => Type::AnyClass,
    any_enum => Type::AnyEnum,
    int_list => Type::List(Type::int()),
    float_list => Type::List(Type::float()),
    bool_list => Type::List(Type::bool()),
    tensor_list => Type::List(Type::tensor()),
    string_list => Type::List(Type::string()),
    optional_tensor => Type::Optional(Type::tensor()),
}

impl Type {
    /// `List[elem]`.
    pub fn list(elem: TypeRef) -> TypeRef {
        Arc::new(Type::List(elem))
    }

    /// `Optional[elem]`.
    pub fn optional(elem: TypeRef) -> TypeRef {
        Arc::new(Type::Optional(elem))
    }

    /// `Tuple[elems...]`.
    pub fn tuple(elements: Vec<TypeRef>) -> TypeRef {
        Arc::new(Type::Tuple(TupleType {
            elements,
            names: None,
        }))
    }

    /// A named tuple type.
    pub fn named_tuple(
        qualified_name: impl Into<String>,
        fields: Vec<String>,
        elements: Vec<TypeRef>,
    ) -> TypeRef {
        let defaults = vec![None; fields.len()];
        Arc::new(Type::Tuple(TupleType {
            elements,
            names: Some(NamedTupleInfo {
                qualified_name: qualified_name.into(),
                fields,
                defaults,
            }),
        }))
    }

    /// `Dict[key, value]`.
    pub fn dict(key: TypeRef, value: TypeRef) -> TypeRef {
        Arc::new(Type::Dict(key, value))
    }

    /// `Future[elem]`.
    pub fn future(elem: TypeRef) -> TypeRef {
        Arc::new(Type::Future(elem))
    }

    /// `Union[...]`, flattened and deduplicated; a single member is returned as is, and a union
    /// of `T` and `None` is `Optional[T]`.
    pub fn union(members: Vec<TypeRef>) -> TypeRef {
        let mut flat: Vec<TypeRef> = Vec::new();
        fn push(flat: &mut Vec<TypeRef>, t: TypeRef) {
            match &*t {
                Type::Union(ms) => ms.iter().for_each(|m| push(flat, m.clone())),
                Type::Optional(e) => {
                    push(flat, e.clone());
                    push(flat, Type::none());
                }
                _ => {
                    if !flat.iter().any(|f| **f == *t) {
                        flat.push(t)
                    }
                }
            }
        }
        for m in members {
            push(&mut flat, m);
        }
        match flat.len() {
            0 => Type::none(),
            1 => flat.pop().unwrap_or_else(Type::none),
            2 if flat.iter().any(|t| t.is_none_type()) => {
                let other = flat
                    .iter()
                    .find(|t| !t.is_none_type())
                    .cloned()
                    .unwrap_or_else(Type::none);
                Type::optional(other)
            }
            _ => Arc::new(Type::Union(flat)),
        }
    }

    /// A tensor type with a known dtype and nothing else.
    pub fn tensor_of(dtype: DType) -> TypeRef {
        Arc::new(Type::Tensor(TensorType {
            dtype: Some(dtype),
            ..Default::default()
        }))
    }

    /// A class type reference.
    pub fn class(c: Arc<ClassType>) -> TypeRef {
        Arc::new(Type::Class(c))
    }
}

// ---------------------------------------------------------------------------------------------
// Queries

impl Type {
    /// True for `NoneType`.
    pub fn is_none_type(&self) -> bool {
        matches!(self, Type::NoneType)
    }

    /// True for any `Tensor` type.
    pub fn is_tensor(&self) -> bool {
        matches!(self, Type::Tensor(_))
    }

    /// True for `int` and `SymInt`.
    pub fn is_int(&self) -> bool {
        matches!(self, Type::Int | Type::SymInt)
    }

    /// True for `float` and `SymFloat`.
    pub fn is_float(&self) -> bool {
        matches!(self, Type::Float | Type::SymFloat)
    }

    /// True for `bool` and `SymBool`.
    pub fn is_bool(&self) -> bool {
        matches!(self, Type::Bool | Type::SymBool)
    }

    /// The element type of `Optional[T]`.
    pub fn optional_elem(&self) -> Option<&TypeRef> {
        match self {
            Type::Optional(e) => Some(e),
            _ => None,
        }
    }

    /// The element type of `List[T]`.
    pub fn list_elem(&self) -> Option<&TypeRef> {
        match self {
            Type::List(e) => Some(e),
            _ => None,
        }
    }

    /// The element types of a tuple.
    pub fn tuple_elems(&self) -> Option<&[TypeRef]> {
        match self {
            Type::Tuple(t) => Some(&t.elements),
            _ => None,
        }
    }

    /// The tensor details of a tensor type.
    pub fn tensor_type(&self) -> Option<&TensorType> {
        match self {
            Type::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// The class of a class type.
    pub fn class_type(&self) -> Option<&Arc<ClassType>> {
        match self {
            Type::Class(c) => Some(c),
            _ => None,
        }
    }

    /// True when the type mentions a type variable (so it must be resolved by matching).
    pub fn has_free_variables(&self) -> bool {
        match self {
            Type::Var(_) => true,
            Type::List(e)
            | Type::Optional(e)
            | Type::Future(e)
            | Type::RRef(e)
            | Type::Await(e) => e.has_free_variables(),
            Type::Dict(k, v) => k.has_free_variables() || v.has_free_variables(),
            Type::Tuple(t) => t.elements.iter().any(|e| e.has_free_variables()),
            Type::Union(ms) => ms.iter().any(|e| e.has_free_variables()),
            _ => false,
        }
    }

    /// The contained types (elements of containers), for generic traversals.
    pub fn contained_types(&self) -> Vec<TypeRef> {
        match self {
            Type::List(e)
            | Type::Optional(e)
            | Type::Future(e)
            | Type::RRef(e)
            | Type::Await(e) => {
                vec![e.clone()]
            }
            Type::Dict(k, v) => vec![k.clone(), v.clone()],
            Type::Tuple(t) => t.elements.clone(),
            Type::Union(ms) => ms.clone(),
            _ => vec![],
        }
    }

    /// Whether values of this type can hold mutable data that may alias (tensors, lists,
    /// dicts, objects, and containers or optionals of those).
    pub fn is_mutable_type(&self) -> bool {
        match self {
            Type::Tensor(_)
            | Type::List(_)
            | Type::Dict(_, _)
            | Type::Class(_)
            | Type::Interface(_)
            | Type::AnyList
            | Type::AnyClass
            | Type::Any
            | Type::Future(_)
            | Type::Var(_)
            | Type::Capsule
            | Type::Generator
            | Type::Storage => true,
            Type::Optional(e) => e.is_mutable_type(),
            Type::Tuple(t) => t.elements.iter().any(|e| e.is_mutable_type()),
            Type::Union(ms) => ms.iter().any(|e| e.is_mutable_type()),
            _ => false,
        }
    }
}

impl ClassType {
    /// A new class type with no members.
    pub fn new(name: impl Into<String>, is_module: bool) -> Arc<ClassType> {
        Arc::new(ClassType {
            name: name.into(),
            is_module,
            members: RwLock::new(ClassMembers::default()),
        })
    }

    /// The unqualified name (last component).
    pub fn base_name(&self) -> &str {
        self.name.rsplit('.').next().unwrap_or(&self.name)
    }

    /// Index of attribute `name`.
    pub fn attribute_index(&self, name: &str) -> Option<usize> {
        self.members
            .read()
            .attributes
            .iter()
            .position(|a| a.name == name)
    }

    /// Type of attribute `name`.
    pub fn attribute_type(&self, name: &str) -> Option<TypeRef> {
        self.members
            .read()
            .attributes
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.ty.clone())
    }

    /// Adds an attribute and returns its slot index (replacing the type if it exists).
    pub fn add_attribute(
        &self,
        name: &str,
        ty: TypeRef,
        is_parameter: bool,
        is_buffer: bool,
    ) -> usize {
        let mut m = self.members.write();
        if let Some(i) = m.attributes.iter().position(|a| a.name == name) {
            m.attributes[i].ty = ty;
            m.attributes[i].is_parameter = is_parameter;
            m.attributes[i].is_buffer = is_buffer;
            return i;
        }
        m.attributes.push(ClassAttribute {
            name: name.to_string(),
            ty,
            is_parameter,
            is_buffer,
        });
        m.attributes.len() - 1
    }

    /// Number of attribute slots.
    pub fn num_attributes(&self) -> usize {
        self.members.read().attributes.len()
    }

    /// A copy of the attribute table.
    pub fn attributes(&self) -> Vec<ClassAttribute> {
        self.members.read().attributes.clone()
    }

    /// The method named `name`.
    pub fn find_method(&self, name: &str) -> Option<Arc<dyn ClassMethod>> {
        self.members
            .read()
            .methods
            .iter()
            .find(|m| m.name() == name)
            .cloned()
    }

    /// The static method named `name`.
    pub fn find_static_method(&self, name: &str) -> Option<Arc<dyn ClassMethod>> {
        self.members
            .read()
            .static_methods
            .iter()
            .find(|m| m.name() == name)
            .cloned()
    }

    /// Adds (or replaces) a method.
    pub fn add_method(&self, m: Arc<dyn ClassMethod>) {
        let mut w = self.members.write();
        if let Some(i) = w.methods.iter().position(|x| x.name() == m.name()) {
            w.methods[i] = m;
        } else {
            w.methods.push(m);
        }
    }

    /// The methods, in definition order.
    pub fn methods(&self) -> Vec<Arc<dyn ClassMethod>> {
        self.members.read().methods.clone()
    }

    /// The constant named `name`.
    pub fn find_constant(&self, name: &str) -> Option<IValue> {
        self.members
            .read()
            .constants
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }

    /// Adds a constant.
    pub fn add_constant(&self, name: &str, value: IValue) {
        let mut w = self.members.write();
        if let Some(e) = w.constants.iter_mut().find(|(n, _)| n == name) {
            e.1 = value;
        } else {
            w.constants.push((name.to_string(), value));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Equality: structural, nominal types by qualified name.

impl PartialEq for Type {
    fn eq(&self, other: &Type) -> bool {
        use Type::*;
        match (self, other) {
            (Tensor(a), Tensor(b)) => a == b,
            (List(a), List(b))
            | (Optional(a), Optional(b))
            | (Future(a), Future(b))
            | (RRef(a), RRef(b))
            | (Await(a), Await(b)) => a == b,
            (Dict(ak, av), Dict(bk, bv)) => ak == bk && av == bv,
            (Tuple(a), Tuple(b)) => {
                a.elements == b.elements
                    && a.names.as_ref().map(|n| (&n.qualified_name, &n.fields))
                        == b.names.as_ref().map(|n| (&n.qualified_name, &n.fields))
            }
            (Union(a), Union(b)) => {
                a.len() == b.len() && a.iter().all(|x| b.iter().any(|y| x == y))
            }
            (Class(a), Class(b)) => Arc::ptr_eq(a, b) || a.name == b.name,
            (Interface(a), Interface(b)) => Arc::ptr_eq(a, b) || a.name == b.name,
            (Enum(a), Enum(b)) => Arc::ptr_eq(a, b) || a.name == b.name,
            (Function(a), Function(b)) => a.name == b.name,
            (Var(a), Var(b)) => a == b,
            // SymInt/SymFloat/SymBool are the same types as int/float/bool in programs.
            (Int | SymInt, Int | SymInt) => true,
            (Float | SymFloat, Float | SymFloat) => true,
            (Bool | SymBool, Bool | SymBool) => true,
            _ => std::mem::discriminant(self) == std::mem::discriminant(other),
        }
    }
}

impl Eq for Type {}

impl std::hash::Hash for Type {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        use Type::*;
        match self {
            SymInt => std::mem::discriminant(&Int).hash(state),
            SymFloat => std::mem::discriminant(&Float).hash(state),
            SymBool => std::mem::discriminant(&Bool).hash(state),
            _ => std::mem::discriminant(self).hash(state),
        }
        match self {
            Tensor(t) => t.hash(state),
            List(e) | Optional(e) | Future(e) | RRef(e) | Await(e) => e.hash(state),
            Dict(k, v) => {
                k.hash(state);
                v.hash(state)
            }
            Tuple(t) => t.elements.hash(state),
            Union(ms) => ms.len().hash(state),
            Class(c) => c.name.hash(state),
            Interface(c) => c.name.hash(state),
            Enum(c) => c.name.hash(state),
            Function(f) => f.name.hash(state),
            Var(v) => v.hash(state),
            _ => {}
        }
    }
}

impl TensorType {
    /// True when nothing beyond "a tensor" is known.
    pub fn is_unspecialized(&self) -> bool {
        *self == TensorType::default()
    }

    /// The rank, when known.
    pub fn rank(&self) -> Option<usize> {
        self.sizes.as_ref().map(|s| s.len())
    }

    /// The common knowledge of two tensor types (fields that agree are kept).
    pub fn merge(&self, other: &TensorType) -> TensorType {
        fn keep<T: PartialEq + Clone>(a: &Option<T>, b: &Option<T>) -> Option<T> {
            if a == b {
                a.clone()
            } else {
                None
            }
        }
        fn dims(
            a: &Option<Vec<Option<i64>>>,
            b: &Option<Vec<Option<i64>>>,
        ) -> Option<Vec<Option<i64>>> {
            match (a, b) {
                (Some(a), Some(b)) if a.len() == b.len() => Some(
                    a.iter()
                        .zip(b)
                        .map(|(x, y)| if x == y { *x } else { None })
                        .collect(),
                ),
                _ => None,
            }
        }
        TensorType {
            dtype: keep(&self.dtype, &other.dtype),
            device: keep(&self.device, &other.device),
            sizes: dims(&self.sizes, &other.sizes),
            strides: dims(&self.strides, &other.strides),
            requires_grad: keep(&self.requires_grad, &other.requires_grad),
            undefined: keep(&self.undefined, &other.undefined),
        }
    }

    /// True when every fact `other` states also holds here (`self` is at least as specific).
    pub fn refines(&self, other: &TensorType) -> bool {
        fn ok<T: PartialEq>(a: &Option<T>, b: &Option<T>) -> bool {
            b.is_none() || a == b
        }
        fn dims_ok(a: &Option<Vec<Option<i64>>>, b: &Option<Vec<Option<i64>>>) -> bool {
            match (a, b) {
                (_, None) => true,
                (None, Some(_)) => false,
                (Some(a), Some(b)) => {
                    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| y.is_none() || x == y)
                }
            }
        }
        ok(&self.dtype, &other.dtype)
            && ok(&self.device, &other.device)
            && dims_ok(&self.sizes, &other.sizes)
            && dims_ok(&self.strides, &other.strides)
            && ok(&self.requires_grad, &other.requires_grad)
            && ok(&self.undefined, &other.undefined)
    }
}
