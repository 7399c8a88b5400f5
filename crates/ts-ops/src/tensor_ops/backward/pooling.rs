//! Backward kernels of pooling, padding and upsampling.
//!
//! Max pools route the gradient to the saved argmax (`indices`, flat within each plane);
//! average pools and pads take their forward operator's formula. Every upsampling mode is
//! separable: one interpolation matrix per spatial dimension (`out x in`), which the kernel
//! reads off the forward operator applied to one-hot planes, so the gradient is the
//! transpose of each matrix applied in turn, for every mode the forward supports.

use ts_core::IValue;
use ts_tensor::{DType, Error, Tensor};

use super::{ints, tv, vjp_op, zeros};
use crate::autograd::ops as o;
use crate::registry::Registry;
use crate::tensor_ops::{def, Args};

/// The gradient of a max pool over the last `nd` dimensions of `x`, scattered to `indices`.
fn scatter_to_indices(g: &Tensor, x: &Tensor, idx: &Tensor, nd: usize) -> Result<Tensor, Error> {
    if g.sizes() != idx.sizes() {
        return Err(Error::runtime(format!(
            "max pooling backward: grad_output of shape {:?} does not match indices of shape {:?}",
            g.sizes().as_slice(),
            idx.sizes().as_slice()
        )));
    }
    if idx.dtype() != DType::Int64 {
        return Err(Error::runtime(format!(
            "max pooling backward: expected indices of dtype Long, got {:?}",
            idx.dtype()
        )));
    }
    let xs = x.sizes();
    if xs.len() < nd || g.dim() != xs.len() || g.sizes()[..xs.len() - nd] != xs[..xs.len() - nd] {
        return Err(Error::runtime(format!(
            "max pooling backward: grad_output of shape {:?} does not fit an input of shape {:?}",
            g.sizes().as_slice(),
            xs.as_slice()
        )));
    }
    let plane: i64 = xs[xs.len() - nd..].iter().product();
    let planes: i64 = xs[..xs.len() - nd].iter().product();
    let gi = zeros(&[planes, plane], g)?;
    if gi.numel() == 0 || g.numel() == 0 {
        return o::reshape(&gi, &xs);
    }
    let idx = o::reshape(idx, &[planes, -1])?;
    let (lo, hi) = (o::lt_s(&idx, 0.0)?, o::ge_s(&idx, plane as f64)?);
    let bad = o::call1("aten::logical_or", vec![tv(&lo), tv(&hi)])?;
    if o::call1("aten::any", vec![tv(&bad)])?.item()?.to_bool() {
        return Err(Error::runtime(format!(
            "max pooling backward: an index is out of range for planes of {plane} elements"
        )));
    }
    let out = o::call1(
        "aten::scatter_add",
        vec![
            tv(&gi),
            IValue::Int(1),
            tv(&idx),
            tv(&o::reshape(g, &[planes, -1])?),
        ],
    )?;
    o::reshape(&out, &xs)
}

/// `(grad_output, self, args...)` → the gradient of `fwd(self, args...)` at `self`.
fn grad_of(a: &Args, fwd: &str, n_args: usize) -> Result<Tensor, Error> {
    let mut args = vec![tv(a.t(1)?)];
    args.extend(a.0[2..2 + n_args].iter().cloned());
    Ok(vjp_op(fwd, args, &[0], a.t(0)?)?.remove(0))
}

/// The interpolation matrix of spatial dimension `d` of an upsampling, as `[in_d, out_d]`:
/// the forward operator applied to `in_d` one-hot planes. Each dimension's weights depend only
/// on its own sizes and scale, so the other dimensions are given size one (their weights, which
/// sum to one in every mode, are then just 1).
fn interpolation_matrix(
    fwd: &str,
    extra: &[IValue],
    output_size: &[i64],
    spatial_in: &[i64],
    d: usize,
    dtype: DType,
) -> Result<Tensor, Error> {
    let n = spatial_in[d];
    let eye = o::call1(
        "aten::eye",
        vec![
            IValue::Int(n),
            IValue::Int(dtype.scalar_type_index()),
            IValue::None,
            IValue::None,
            IValue::None,
        ],
    )?;
    let nd = spatial_in.len();
    let mut view = vec![n, 1];
    view.extend((0..nd).map(|j| if j == d { n } else { 1 }));
    let planes = o::reshape(&eye, &view)?;
    let out: Vec<i64> = (0..nd)
        .map(|j| if j == d { output_size[d] } else { 1 })
        .collect();
    let mut args = vec![tv(&planes), ints(&out)];
    args.extend(extra.iter().cloned());
    let y = o::call1(fwd, args)?;
    o::reshape(&y, &[n, output_size[d]])
}

/// `upsample_*_backward(grad_output, output_size, input_size, extra...)`.
fn upsample_backward(a: &Args, fwd: &str, nd: usize) -> Result<Tensor, Error> {
    let g = a.t(0)?;
    let output_size = a.ints(1)?;
    let input_size = a.ints(2)?;
    let extra: Vec<IValue> = a.0[3..].to_vec();
    let name = format!("{}_backward", fwd.trim_start_matches("aten::"));
    if output_size.len() != nd || input_size.len() != nd + 2 {
        return Err(Error::runtime(format!(
            "{name}: expected output_size of {nd} elements and input_size of {} elements, got {} and {}",
            nd + 2,
            output_size.len(),
            input_size.len()
        )));
    }
    if input_size.iter().any(|&s| s < 0) || output_size.iter().any(|&s| s <= 0) {
        return Err(Error::runtime(format!(
            "{name}: input and output sizes should be greater than 0, but got input size {input_size:?} and output size {output_size:?}"
        )));
    }
    let mut expected = input_size[..2].to_vec();
    expected.extend_from_slice(&output_size);
    if g.dim() != nd + 2 {
        return Err(Error::runtime(format!(
            "Expected grad_output to be a tensor of dimension {} but got: dimension {}",
            nd + 2,
            g.dim()
        )));
    }
    for (i, &e) in expected.iter().enumerate() {
        if g.sizes()[i] != e {
            return Err(Error::runtime(format!(
                "Expected grad_output to have the same shape as output; output.size({i}) = {e} but got grad_output.size({i}) = {}",
                g.sizes()[i]
            )));
        }
    }
    let dtype = g.dtype();
    if !dtype.is_floating_point() {
        return Err(Error::runtime(format!(
            "\"{name}\" not implemented for '{dtype:?}'"
        )));
    }
    let spatial_in = &input_size[2..];
    if spatial_in.contains(&0) || input_size[..2].contains(&0) {
        return zeros(&input_size, g);
    }
    let mut r = g.clone();
    for d in 0..nd {
        let m = interpolation_matrix(fwd, &extra, &output_size, spatial_in, d, dtype)?;
        // m: [in_d, out_d]; contract dimension 2 + d of r with it.
        let axis = (2 + d) as i64;
        let moved = o::call1(
            "aten::movedim.int",
            vec![tv(&r), IValue::Int(axis), IValue::Int(-1)],
        )?;
        let prod = o::matmul(&moved, &o::t(&m)?)?;
        r = o::call1(
            "aten::movedim.int",
            vec![tv(&prod), IValue::Int(-1), IValue::Int(axis)],
        )?;
    }
    o::call1("aten::contiguous", vec![tv(&r), IValue::Int(0)])
}

pub(super) fn register(r: &Registry) {
    for (name, nd) in [
        ("aten::max_pool2d_with_indices_backward", 2),
        ("aten::max_pool3d_with_indices_backward", 3),
    ] {
        def(r, name, move |a| {
            scatter_to_indices(a.t(0)?, a.t(1)?, a.t(7)?, nd)
        });
    }
    for (name, nd) in [
        ("aten::adaptive_max_pool2d_backward", 2),
        ("aten::adaptive_max_pool3d_backward", 3),
    ] {
        def(r, name, move |a| {
            scatter_to_indices(a.t(0)?, a.t(1)?, a.t(2)?, nd)
        });
    }
    for (name, nd) in [
        ("aten::fractional_max_pool2d_backward", 2),
        ("aten::fractional_max_pool3d_backward", 3),
    ] {
        def(r, name, move |a| {
            scatter_to_indices(a.t(0)?, a.t(1)?, a.t(4)?, nd)
        });
    }
    def(r, "aten::avg_pool2d_backward", |a| {
        grad_of(a, "aten::avg_pool2d", 6)
    });
    def(r, "aten::avg_pool3d_backward", |a| {
        grad_of(a, "aten::avg_pool3d", 6)
    });
    for (name, fwd, nd) in [
        (
            "aten::_adaptive_avg_pool2d_backward",
            "aten::_adaptive_avg_pool2d",
            2,
        ),
        (
            "aten::_adaptive_avg_pool3d_backward",
            "aten::_adaptive_avg_pool3d",
            3,
        ),
    ] {
        def(r, name, move |a| {
            let (g, x) = (a.t(0)?, a.t(1)?);
            if g.dim() < nd || g.dim() != x.dim() {
                return Err(Error::runtime(format!(
                    "{}: grad_output of shape {:?} does not fit an input of shape {:?}",
                    name.trim_start_matches("aten::"),
                    g.sizes().as_slice(),
                    x.sizes().as_slice()
                )));
            }
            let out = g.sizes()[g.dim() - nd..].to_vec();
            Ok(vjp_op(fwd, vec![tv(x), ints(&out)], &[0], g)?.remove(0))
        });
    }
    // The legacy name of the 3-D kernel's `out=` form.
    def(r, "aten::adaptive_avg_pool3d_backward.grad_input", |a| {
        let gi = o::call1(
            "aten::_adaptive_avg_pool3d_backward",
            vec![tv(a.t(0)?), tv(a.t(1)?)],
        )?;
        ts_tensor::resize_out_and_copy(a.t(2)?, &gi)
    });
    for (name, fwd) in [
        ("aten::reflection_pad1d_backward", "aten::reflection_pad1d"),
        ("aten::reflection_pad2d_backward", "aten::reflection_pad2d"),
        ("aten::reflection_pad3d_backward", "aten::reflection_pad3d"),
        (
            "aten::replication_pad1d_backward",
            "aten::replication_pad1d",
        ),
        (
            "aten::replication_pad2d_backward",
            "aten::replication_pad2d",
        ),
        (
            "aten::replication_pad3d_backward",
            "aten::replication_pad3d",
        ),
    ] {
        def(r, name, move |a| grad_of(a, fwd, 1));
    }
    for (name, fwd, nd) in [
        (
            "aten::upsample_nearest1d_backward",
            "aten::upsample_nearest1d",
            1,
        ),
        (
            "aten::upsample_nearest2d_backward",
            "aten::upsample_nearest2d",
            2,
        ),
        (
            "aten::upsample_nearest3d_backward",
            "aten::upsample_nearest3d",
            3,
        ),
        (
            "aten::_upsample_nearest_exact1d_backward",
            "aten::_upsample_nearest_exact1d",
            1,
        ),
        (
            "aten::_upsample_nearest_exact2d_backward",
            "aten::_upsample_nearest_exact2d",
            2,
        ),
        (
            "aten::_upsample_nearest_exact3d_backward",
            "aten::_upsample_nearest_exact3d",
            3,
        ),
        (
            "aten::upsample_linear1d_backward",
            "aten::upsample_linear1d",
            1,
        ),
        (
            "aten::upsample_bilinear2d_backward",
            "aten::upsample_bilinear2d",
            2,
        ),
        (
            "aten::upsample_bicubic2d_backward",
            "aten::upsample_bicubic2d",
            2,
        ),
        (
            "aten::upsample_trilinear3d_backward",
            "aten::upsample_trilinear3d",
            3,
        ),
        (
            "aten::_upsample_bilinear2d_aa_backward",
            "aten::_upsample_bilinear2d_aa",
            2,
        ),
        (
            "aten::_upsample_bicubic2d_aa_backward",
            "aten::_upsample_bicubic2d_aa",
            2,
        ),
        (
            "aten::_upsample_lanczos2d_aa_backward",
            "aten::_upsample_lanczos2d_aa",
            2,
        ),
    ] {
        def(r, name, move |a| upsample_backward(a, fwd, nd));
    }
}
