//! `ts-tensor`: the tensor library under torchscript-rs (the counterpart of ATen).
//!
//! A [`Tensor`] is a reference type: cloning the handle aliases. Views share a [`Storage`];
//! in-place operations write through views and are visible through every alias.

pub(crate) mod buffer_cache;
#[macro_use]
pub(crate) mod cpu;
pub mod aten_format;
pub mod autograd;
pub mod complex;
pub mod config;
pub mod device;
pub mod dtype;
pub mod element;
pub mod error;
pub mod generator;
pub mod host_data;
pub mod list;
pub mod mapped_file;
pub mod ops;
pub mod overlap;
pub mod print;
pub mod promote;
pub mod quantized;
pub mod scalar;
pub mod shape;
pub mod storage;
pub mod tensor;
pub mod threads;

pub use buffer_cache::set_keep_freed_buffers;
pub use complex::{Complex, Complex32, Complex64};
pub use config::{default_dtype, set_default_dtype};
pub use cpu::fma_peak::{fma_peak, FmaPeak};
pub use device::Device;
pub use dtype::DType;
pub use element::Element;
pub use error::{Error, ErrorKind, Result};
pub use generator::{manual_seed, Generator};
pub use host_data::DataView;
pub use list::ListValue;
pub use ops::attention::{
    native_multi_head_attention, scaled_dot_product_attention, transformer_encoder_layer_fwd,
    EncoderLayerWeights,
};
pub use ops::binary::RoundingMode;
pub use ops::complex_ops::{complex, polar};
pub use ops::conv::{
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, convolution,
    ConvPadding,
};
pub use ops::copy::resize_out_and_copy;
pub use ops::ctc::{ctc_loss, ctc_loss_forward};
pub use ops::embedding::{embedding, embedding_bag, BagMode};
pub use ops::factory;
pub use ops::grid_sample::{affine_grid_generator, grid_sampler, GridInterpolation, GridPadding};
pub use ops::index::TensorIndex;
pub use ops::join::{cat, stack};
pub use ops::linalg::{linalg_check_errors, linalg_multi_dot, parse_str_ord, MatrixNormOrd};
pub use ops::nested::{nested_mask_left_aligned, nested_tensor_from_mask};
pub use ops::norm::{
    batch_norm, dropout, group_norm, instance_norm, layer_norm, native_batch_norm,
};
pub use ops::padding::PadMode;
pub use ops::rnn::{
    gru, gru_cell, lstm, lstm_cell, rnn_relu, rnn_relu_cell, rnn_tanh, rnn_tanh_cell, RnnOptions,
};
pub use ops::ternary::where_;
pub use ops::upsample::{upsample_vec_sizes, UpsampleMode};
pub use promote::Operand;
pub use scalar::Scalar;
pub use storage::Storage;
pub use tensor::{Dims, Tensor, TensorMeta};
pub use threads::{init_pool_on_current_thread, num_threads, set_num_threads};
