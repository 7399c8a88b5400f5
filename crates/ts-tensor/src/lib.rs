//! `ts-tensor`: the tensor library under torchscript-rs (the counterpart of ATen).
//!
//! A [`Tensor`] is a reference type: cloning the handle aliases. Views share a [`Storage`];
//! in-place operations write through views and are visible through every alias. Elementwise
//! operations promote types as `torch.result_type` and broadcast as PyTorch does.

pub mod compute;
pub mod copy;
pub mod device;
pub mod dispatch;
pub mod dtype;
pub mod element;
pub mod elementwise;
pub mod error;
pub mod factory;
pub mod float;
pub mod iter;
pub mod print;
pub mod promotion;
pub mod random;
pub mod scalar;
pub mod shape;
pub mod storage;
pub mod tensor;
pub mod views;

pub use device::Device;
pub use dtype::DType;
pub use element::Element;
pub use error::{Error, ErrorKind, Result};
pub use promotion::{default_dtype, result_type, set_default_dtype, Operand};
pub use random::manual_seed;
pub use scalar::Scalar;
pub use storage::Storage;
pub use tensor::{Dims, Tensor, TensorMeta};
