//! Sugared values: what a name or expression denotes during emission when it is not (only) a
//! graph value — modules like `torch`, builtin operators, functions, methods, classes, types,
//! and the special forms (`print`, `range`, `isinstance`, ...).

use std::sync::Arc;

use ts_core::types::EnumType;
use ts_core::{ClassType, Symbol, TypeRef};
use ts_ir::{Function, ValueId};

/// A special builtin handled by the emitter itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    Print,
    Len,
    Range,
    Enumerate,
    Zip,
    Reversed,
    IsInstance,
    Annotate,
    Fork,
    Wait,
    UncheckedCast,
    GetAttr,
    HasAttr,
    Tuple,
    List,
    Dict,
    Int,
    Float,
    Bool,
    Str,
    Complex,
    Min,
    Max,
    Abs,
    Sorted,
    Sum,
    All,
    Any,
    Round,
    Divmod,
    Tensor,
    Device,
    IsScripting,
    Uninitialized,
    Unused,
    NoneCheck,
    Warn,
    Ord,
    Chr,
    Slice,
}

/// What an expression denotes during emission.
#[derive(Clone)]
pub enum Sugared {
    /// A first-class graph value.
    Simple(ValueId),
    /// A Python module of builtins (`torch`, `math`, `torch.nn.functional`, ...).
    Module(String),
    /// A builtin operator; `self_val` is bound for methods (`x.add`).
    Builtin {
        name: Symbol,
        self_val: Option<ValueId>,
    },
    /// A function of the compilation unit (or a library function written in TorchScript).
    Function(Arc<Function>),
    /// A `torch.nn.functional` function chosen by a constant boolean argument.
    BoolDispatch(Arc<super::library::BoolDispatch>),
    /// Overloaded library functions: a call goes to the first whose signature matches.
    Overloads(Vec<Arc<Function>>),
    /// A method of an object.
    Method {
        self_val: ValueId,
        class: Arc<ClassType>,
        name: String,
    },
    /// A class: calling it constructs an object.
    Class(Arc<ClassType>),
    /// `Cls.__new__`: calling it with the class allocates an uninitialized object
    /// (`prim::CreateObject`), as saved code writes object construction.
    ClassNew(Arc<ClassType>),
    /// A named tuple type: calling it builds the tuple.
    NamedTuple(TypeRef),
    /// An enum class (member access gives enum values).
    Enum(Arc<EnumType>),
    /// A type used as a value (`int`, `torch.Tensor`, `List[int]`), for casts and isinstance.
    TypeName(TypeRef),
    /// A special builtin.
    Special(Special),
    /// An iterable for `for` loops: `range(...)`, `enumerate(...)`, `zip(...)`, a list, ...
    Iterable(Arc<Iterable>),
    /// `x.float()`, `x.long()`, ...: a conversion emitted as `aten::to(x, dtype)`.
    TensorCast {
        self_val: ValueId,
        dtype: ts_core::DType,
    },
    /// `x.tolist`: its result type comes from the annotation it is called under.
    TensorToList(ValueId),
    /// A tuple of sugared values (e.g. from unpacking a tuple of modules).
    Tuple(Vec<Sugared>),
    /// `slice(start, stop, step)`: only usable as a subscript (None where not given).
    Slice {
        start: Option<ValueId>,
        end: Option<ValueId>,
        step: Option<ValueId>,
    },
}

/// Loop iterables.
pub enum Iterable {
    /// `range(start, end, step)` (values already emitted).
    Range {
        start: Option<ValueId>,
        end: ValueId,
        step: Option<ValueId>,
    },
    /// Iteration over a list, tensor, str or dict (keys) value.
    Value(ValueId),
    /// `enumerate(it, start)`.
    Enumerate(Arc<Iterable>, Option<ValueId>),
    /// `zip(a, b, ...)`.
    Zip(Vec<Arc<Iterable>>),
    /// A tuple literal/value iterated by unrolling (heterogeneous elements).
    Unrolled(Vec<Sugared>),
}
