//! Tensor operations, as methods on [`Tensor`](crate::Tensor) named after ATen, grouped by
//! family. Free functions (`cat`, `stack`, `where_`, the factories) live in their modules and are
//! re-exported at the crate root.

pub mod attention;
pub mod binary;
pub mod complex_ops;
pub mod conv;
pub mod copy;
pub mod embedding;
pub mod factory;
pub mod fft;
pub mod gather;
pub mod hash;
pub mod index;
pub mod join;
pub mod linalg;
pub mod norm;
pub mod pool;
pub mod random;
pub mod rearrange;
pub mod reduce;
pub mod rnn;
pub mod scan;
pub mod sort;
pub mod stft;
pub mod ternary;
pub mod unary;
pub mod view;
