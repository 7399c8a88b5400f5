//! `ts-frontend`: TorchScript source to graphs (PyTorch's `jit/frontend`): the lexer, the
//! parser and AST, the IR emitter, SSA conversion and the exit transform, with diagnostics
//! printed as PyTorch prints them.

pub mod ast;
pub mod canonicalize;
pub mod convert_to_ssa;
pub mod emitter;
pub mod error;
pub mod exit_transform;
pub mod lexer;
pub mod parser;
pub mod sexpr;
pub mod stdhash;
pub mod token;

pub use emitter::{
    compile_archive_code, compile_into, compile_parsed_archive_code, compile_source, parse_files,
    ParsedFiles,
};
pub use error::{CResult, CompileError};
pub use parser::{parse_expression, parse_program};
