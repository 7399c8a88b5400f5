//! `ts-core`: the core program representation shared by every layer of torchscript-rs
//! (the counterpart of ATen/core): interned [`Symbol`]s, JIT [`Type`]s, [`IValue`],
//! [`FunctionSchema`] and source ranges.

pub mod future;
pub mod ivalue;
pub mod schema;
pub mod source;
pub mod symbol;
pub mod types;

pub use future::Future;
pub use ivalue::{Dict, DictKey, EnumValue, IValue, List, Object, Tuple};
pub use schema::{AliasInfo, Argument, FunctionSchema};
pub use source::{Source, SourceRange};
pub use symbol::{aten, attr, prim, Symbol};
pub use ts_tensor::{DType, Device, Error, ErrorKind, Scalar, Tensor};
pub use types::{ClassType, TensorType, TupleType, Type, TypeRef};
