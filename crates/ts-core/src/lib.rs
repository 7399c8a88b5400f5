//! `ts-core`: the core program representation shared by every layer of torchscript-rs
//! (the counterpart of ATen/core): interned [`Symbol`]s, JIT [`Type`]s, [`IValue`],
//! [`FunctionSchema`] and source ranges.

pub mod future;
pub mod ivalue;
pub mod number_format;
pub mod parse_error;
pub mod scanner;
pub mod schema;
pub mod schema_parser;
pub mod source;
pub mod subtyping;
pub mod symbol;
pub mod type_parser;
pub mod type_printer;
pub mod types;

pub use future::Future;
pub use ivalue::{Dict, DictKey, EnumValue, IValue, List, Object, StrStyle, Tuple};
pub use parse_error::ParseError;
pub use schema::{AliasInfo, Argument, FunctionSchema};
pub use schema_parser::{parse_schema_or_name, parse_schema_with, SchemaOrName};
pub use source::{DebugSegment, Source, SourceRange};
pub use subtyping::{unify_type_list, unify_types};
pub use symbol::{aten, attr, prim, Symbol};
pub use ts_tensor::{DType, Device, Error, ErrorKind, Scalar, Tensor};
pub use type_parser::{
    parse_annotation, parse_annotation_prefix, parse_type, parse_type_prefix, parse_type_with,
    TypeResolver,
};
pub use types::{ClassType, TensorType, TupleType, Type, TypeRef};
