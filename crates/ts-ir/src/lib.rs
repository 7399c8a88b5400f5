//! `ts-ir`: the TorchScript graph IR (PyTorch's `jit/ir`): [`Graph`] with nodes, values and
//! nested blocks, the canonical printer, the IR text parser, the verifier and FileCheck.

pub mod attribute;
pub mod clone;
pub mod constants;
pub mod filecheck;
pub mod function;
pub mod graph;
pub mod parser;
pub mod printer;
pub mod render;
pub mod verifier;

pub use attribute::AttributeValue;
pub use constants::constant_type;
pub use filecheck::FileCheck;
pub use function::{as_function, CompilationUnit, Function};
pub use graph::{BlockId, Graph, GraphError, InlinedCallStack, InlinedFrame, NodeId, Use, ValueId};
pub use parser::{parse_ir, parse_ir_with_names};
pub use printer::PrintOptions;
pub use verifier::{verify, VerifyError};
