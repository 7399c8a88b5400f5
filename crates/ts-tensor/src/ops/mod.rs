//! Tensor operations, as methods on [`Tensor`](crate::Tensor) named after ATen, grouped by
//! family. Free functions (`cat`, `stack`, `where_`, the factories) live in their modules and are
//! re-exported at the crate root.

pub mod attention;
pub mod binary;
pub mod conv;
pub mod copy;
pub mod covariance;
pub mod ctc;
pub mod embedding;
pub mod factory;
pub mod finite_difference;
pub mod fold;
pub mod gather;
pub mod grid_sample;
pub mod histogram;
pub mod index;
pub mod join;
pub mod linalg;
pub mod nan_reduce;
pub mod nested;
pub mod norm;
pub mod order_statistics;
pub mod padding;
pub mod pool;
pub mod pool_nd;
pub mod random;
pub mod rearrange;
pub mod reduce;
pub mod renorm;
pub mod repeat_rotate;
pub mod rnn;
pub mod scan;
pub mod scatter_reduce;
pub mod sort;
pub mod special;
pub mod split_join;
pub mod take_put;
pub mod ternary;
pub mod unary;
pub mod unique;
pub mod upsample;
pub mod view;
pub mod view_scatter;
