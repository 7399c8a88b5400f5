//! `ts-torchvision`: torchvision's operator library for torchscript-rs.
//!
//! Scripted torchvision models call the C++ operators that torchvision registers in the
//! `torchvision` namespace (`ops.torchvision.nms(...)` in saved code). This crate registers the
//! same operators, with torchvision 0.29's schemas and CPU semantics (argument checks, the
//! float arithmetic order of its kernels), into an operator [`Registry`] at run time: the
//! registry is open, so nothing below this crate knows about torchvision. Callers (the `tsrs`
//! CLI) call [`register`] once before loading models.

mod box_iou_rotated;
mod deform_conv;
mod nms;
mod real;
mod roi_align;
mod roi_pool;

use std::sync::Once;

use ts_ops::tensor_ops::def_schema;
use ts_ops::Registry;
use ts_tensor::Error;

pub use box_iou_rotated::box_iou_rotated;
pub use deform_conv::{deform_conv2d, DeformConvParams};
pub use nms::nms;
pub use roi_align::{ps_roi_align, roi_align};
pub use roi_pool::{ps_roi_pool, roi_pool};

/// torchvision's operator schemas (as `torch.ops.torchvision.X` prints them in 0.29).
pub const SCHEMAS: &[&str] = &[
    "torchvision::nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "torchvision::roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor",
    "torchvision::ps_roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, int sampling_ratio) -> (Tensor, Tensor)",
    "torchvision::roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) -> (Tensor, Tensor)",
    "torchvision::ps_roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) -> (Tensor, Tensor)",
    "torchvision::deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, SymInt dilation_w, SymInt groups, SymInt offset_groups, bool use_mask) -> Tensor",
    "torchvision::box_iou_rotated(Tensor boxes1, Tensor boxes2) -> Tensor",
    "torchvision::_cuda_version() -> int",
];

/// Registers torchvision's operators into `r`.
pub fn register(r: &Registry) -> Result<(), Error> {
    def_schema(r, SCHEMAS[0], |a| nms(a.t(0)?, a.t(1)?, a.f(2)?))?;
    def_schema(r, SCHEMAS[1], |a| {
        roi_align(
            a.t(0)?,
            a.t(1)?,
            a.f(2)?,
            a.int(3)?,
            a.int(4)?,
            a.int(5)?,
            a.b(6)?,
        )
    })?;
    def_schema(r, SCHEMAS[2], |a| {
        ps_roi_align(a.t(0)?, a.t(1)?, a.f(2)?, a.int(3)?, a.int(4)?, a.int(5)?)
    })?;
    def_schema(r, SCHEMAS[3], |a| {
        roi_pool(a.t(0)?, a.t(1)?, a.f(2)?, a.int(3)?, a.int(4)?)
    })?;
    def_schema(r, SCHEMAS[4], |a| {
        ps_roi_pool(a.t(0)?, a.t(1)?, a.f(2)?, a.int(3)?, a.int(4)?)
    })?;
    def_schema(r, SCHEMAS[5], |a| {
        let p = DeformConvParams {
            stride: (a.int(5)?, a.int(6)?),
            padding: (a.int(7)?, a.int(8)?),
            dilation: (a.int(9)?, a.int(10)?),
            groups: a.int(11)?,
            offset_groups: a.int(12)?,
            use_mask: a.b(13)?,
        };
        deform_conv2d(a.t(0)?, a.t(1)?, a.t(2)?, a.t(3)?, a.t(4)?, &p)
    })?;
    def_schema(r, SCHEMAS[6], |a| box_iou_rotated(a.t(0)?, a.t(1)?))?;
    // A CPU-only build: torchvision reports -1 when it was built without CUDA.
    def_schema(r, SCHEMAS[7], |_| Ok(-1i64))?;
    Ok(())
}

/// Registers torchvision's operators into the global registry, once.
pub fn register_global() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        register(ts_ops::registry()).expect("torchvision's schemas parse");
    });
}
