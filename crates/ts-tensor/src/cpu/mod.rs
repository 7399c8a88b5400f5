//! CPU kernels: dtype dispatch, per-element arithmetic, the strided loop driver and the
//! elementwise iterator that ops build on.
//!
//! Every `unsafe` block of the crate's compute path lives under this module (plus `storage.rs`
//! and the raw reads in `tensor.rs`); the ops in `crate::ops` only call safe functions.

#[macro_use]
pub(crate) mod dispatch;
pub(crate) mod blocked_gemm;
pub(crate) mod cast;
pub(crate) mod contiguous;
pub(crate) mod conv;
pub(crate) mod conv_direct;
pub(crate) mod fastmath;
pub(crate) mod fft;
pub(crate) mod fma_peak;
pub(crate) mod gelu;
pub(crate) mod gemm;
pub(crate) mod gemv;
pub(crate) mod im2col;
pub(crate) mod iter;
pub(crate) mod linear_packed;
pub(crate) mod loops;
pub(crate) mod num;
pub(crate) mod packed_weights;
pub(crate) mod reduce;
pub(crate) mod simd;
