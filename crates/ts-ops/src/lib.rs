//! `ts-ops`: the operator registry and the builtin operators (PyTorch's
//! `jit/runtime/operator` and `register_*_ops`).

pub mod autograd;
pub mod containers;
pub mod coverage;
pub mod fast;
pub mod matching;
pub mod numbers;
pub mod optimizer_ops;
pub mod prim;
pub mod quantized;
pub mod registry;
pub mod save_hook;
pub mod schema_table;
pub mod stack;
pub mod strings;
pub mod tensor_ops;
pub mod upgraders;
pub mod value_hash;

pub use fast::{Scalar, ScalarOp};
pub use registry::{
    op, registry, Build, NodeOperation, Operation, Operator, OperatorKind, Registry, Stack,
};

/// Registers every builtin operator into `r`.
pub fn register_builtins(r: &Registry) {
    numbers::register(r);
    numbers::register_prim_minmax(r);
    numbers::register_pairs(r);
    containers::register_lists(r);
    containers::register_dicts(r);
    strings::register(r);
    prim::register(r);
    optimizer_ops::register(r);
    tensor_ops::register(r);
    autograd::api::register(r);
    upgraders::register(r);
    value_hash::register(r);
    save_hook::register(r);
    quantized::register(r);
}

/// The schemas of every implemented operator (the coverage table of `tsrs ops`).
pub fn implemented_schemas() -> Vec<String> {
    registry().schemas()
}
