//! Convolutions and pooling, bound to ts-tensor's im2col/GEMM and pooling kernels.

use ts_tensor::{ConvPadding, Error, Tensor};

use super::{def, def_many, Args};
use crate::registry::Registry;

type R<T> = Result<T, Error>;

/// ts-tensor's forward convolutions (`conv1d`, `conv2d`, `conv3d`).
type ConvFn = fn(&Tensor, &Tensor, Option<&Tensor>, &[i64], &ConvPadding, &[i64], i64) -> R<Tensor>;

/// ts-tensor's transposed convolutions (`conv_transpose1d/2d/3d`).
type ConvTransposeFn =
    fn(&Tensor, &Tensor, Option<&Tensor>, &[i64], &[i64], &[i64], i64, &[i64]) -> R<Tensor>;

/// The explicit-padding convolutions: `(input, weight, bias, stride, padding, dilation, groups)`.
fn conv_explicit(a: &Args, f: ConvFn) -> R<Tensor> {
    f(
        a.t(0)?,
        a.t(1)?,
        a.ot(2)?,
        &a.ints(3)?,
        &ConvPadding::Explicit(a.ints(4)?),
        &a.ints(5)?,
        a.int(6)?,
    )
}

/// The `.padding` overloads, whose padding is the string `"same"` or `"valid"`.
fn conv_str(a: &Args, f: ConvFn) -> R<Tensor> {
    f(
        a.t(0)?,
        a.t(1)?,
        a.ot(2)?,
        &a.ints(3)?,
        &ConvPadding::parse(a.str(4)?)?,
        &a.ints(5)?,
        a.int(6)?,
    )
}

/// `convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
/// groups)`; `_convolution` adds backend flags that do not change CPU results.
fn convolution(a: &Args) -> R<Tensor> {
    ts_tensor::convolution(
        a.t(0)?,
        a.t(1)?,
        a.ot(2)?,
        &a.ints(3)?,
        &ConvPadding::Explicit(a.ints(4)?),
        &a.ints(5)?,
        a.b(6)?,
        &a.ints(7)?,
        a.int(8)?,
    )
}

/// `conv_transpose{1,2}d(input, weight, bias, stride, padding, output_padding, groups, dilation)`.
fn conv_transpose(a: &Args, f: ConvTransposeFn) -> R<Tensor> {
    f(
        a.t(0)?,
        a.t(1)?,
        a.ot(2)?,
        &a.ints(3)?,
        &a.ints(4)?,
        &a.ints(5)?,
        a.int(6)?,
        &a.ints(7)?,
    )
}

/// `adaptive_max_pool1d(self, output_size)` through the 2-d kernel on a unit height.
fn adaptive_max_pool1d(x: &Tensor, output_size: &[i64]) -> R<(Tensor, Tensor)> {
    if x.dim() != 2 && x.dim() != 3 {
        return Err(Error::runtime(format!(
            "adaptive_max_pool1d() argument 'input' (position 1) must be 2D or 3D, but got {:?}",
            x.sizes().as_slice()
        )));
    }
    if output_size.len() != 1 {
        return Err(Error::runtime("adaptive_max_pool1d: output_size must be 1"));
    }
    let (v, i) = x.unsqueeze(-2)?.adaptive_max_pool2d(&[1, output_size[0]])?;
    Ok((v.squeeze_dim(-2)?, i.squeeze_dim(-2)?))
}

/// Registers the convolution and pooling operators.
pub fn register(r: &Registry) {
    def(r, "aten::conv1d", |a| conv_explicit(a, ts_tensor::conv1d));
    def(r, "aten::conv2d", |a| conv_explicit(a, ts_tensor::conv2d));
    def(r, "aten::conv1d.padding", |a| {
        conv_str(a, ts_tensor::conv1d)
    });
    def(r, "aten::conv2d.padding", |a| {
        conv_str(a, ts_tensor::conv2d)
    });
    def(r, "aten::conv_transpose1d", |a| {
        conv_transpose(a, ts_tensor::conv_transpose1d)
    });
    def(r, "aten::conv_transpose2d.input", |a| {
        conv_transpose(a, ts_tensor::conv_transpose2d)
    });
    def_many(
        r,
        &[
            "aten::convolution",
            "aten::_convolution",
            "aten::_convolution.deprecated",
        ],
        convolution,
    );

    def(r, "aten::max_pool1d", |a| {
        a.t(0)?
            .max_pool1d(&a.ints(1)?, &a.ints(2)?, &a.ints(3)?, &a.ints(4)?, a.b(5)?)
    });
    def(r, "aten::max_pool1d_with_indices", |a| {
        a.t(0)?
            .max_pool1d_with_indices(&a.ints(1)?, &a.ints(2)?, &a.ints(3)?, &a.ints(4)?, a.b(5)?)
    });
    def(r, "aten::max_pool2d", |a| {
        a.t(0)?
            .max_pool2d(&a.ints(1)?, &a.ints(2)?, &a.ints(3)?, &a.ints(4)?, a.b(5)?)
    });
    def(r, "aten::max_pool2d_with_indices", |a| {
        a.t(0)?
            .max_pool2d_with_indices(&a.ints(1)?, &a.ints(2)?, &a.ints(3)?, &a.ints(4)?, a.b(5)?)
    });
    def(r, "aten::avg_pool1d", |a| {
        a.t(0)?
            .avg_pool1d(&a.ints(1)?, &a.ints(2)?, &a.ints(3)?, a.b(4)?, a.b(5)?)
    });
    def(r, "aten::avg_pool2d", |a| {
        a.t(0)?.avg_pool2d(
            &a.ints(1)?,
            &a.ints(2)?,
            &a.ints(3)?,
            a.b(4)?,
            a.b(5)?,
            a.oint(6)?,
        )
    });
    def(r, "aten::adaptive_avg_pool1d", |a| {
        a.t(0)?.adaptive_avg_pool1d(&a.ints(1)?)
    });
    def(r, "aten::adaptive_avg_pool2d", |a| {
        a.t(0)?.adaptive_avg_pool2d(&a.ints(1)?)
    });
    def(r, "aten::adaptive_max_pool1d", |a| {
        adaptive_max_pool1d(a.t(0)?, &a.ints(1)?)
    });
    def(r, "aten::adaptive_max_pool2d", |a| {
        a.t(0)?.adaptive_max_pool2d(&a.ints(1)?)
    });
    register_volumetric(r);
}

/// `max_unpool3d`'s extra checks on `stride` and `padding` (the scatter itself only needs the
/// output size).
fn check_unpool3d(stride: &[i64], padding: &[i64]) -> R<()> {
    if stride.len() != 3 || padding.len() != 3 {
        return Err(Error::runtime(format!(
            "There should be exactly three elements (depth, height, width) in stride, but got: {} and padding, but got: {}",
            stride.len(),
            padding.len()
        )));
    }
    if stride.iter().any(|&s| s <= 0) {
        return Err(Error::runtime(format!(
            "strides should be greater than zero, but got stride: {stride:?}"
        )));
    }
    Ok(())
}

/// The 3-d convolutions and pools, unpooling and fractional max pooling.
fn register_volumetric(r: &Registry) {
    def(r, "aten::conv3d", |a| conv_explicit(a, ts_tensor::conv3d));
    def(r, "aten::conv3d.padding", |a| {
        conv_str(a, ts_tensor::conv3d)
    });
    def(r, "aten::conv_transpose3d.input", |a| {
        conv_transpose(a, ts_tensor::conv_transpose3d)
    });
    def(r, "aten::max_pool3d", |a| {
        Ok(a.t(0)?
            .max_pool3d_with_indices(&a.ints(1)?, &a.ints(2)?, &a.ints(3)?, &a.ints(4)?, a.b(5)?)?
            .0)
    });
    def(r, "aten::max_pool3d_with_indices", |a| {
        a.t(0)?
            .max_pool3d_with_indices(&a.ints(1)?, &a.ints(2)?, &a.ints(3)?, &a.ints(4)?, a.b(5)?)
    });
    def(r, "aten::avg_pool3d", |a| {
        a.t(0)?.avg_pool3d(
            &a.ints(1)?,
            &a.ints(2)?,
            &a.ints(3)?,
            a.b(4)?,
            a.b(5)?,
            a.oint(6)?,
        )
    });
    def(r, "aten::adaptive_avg_pool3d", |a| {
        a.t(0)?.adaptive_avg_pool3d(&a.ints(1)?)
    });
    def(r, "aten::adaptive_max_pool3d", |a| {
        a.t(0)?.adaptive_max_pool3d(&a.ints(1)?)
    });
    def(r, "aten::max_unpool2d", |a| {
        a.t(0)?.max_unpool(a.t(1)?, &a.ints(2)?)
    });
    def(r, "aten::max_unpool3d", |a| {
        check_unpool3d(&a.ints(3)?, &a.ints(4)?)?;
        a.t(0)?.max_unpool(a.t(1)?, &a.ints(2)?)
    });
    def(r, "aten::fractional_max_pool2d", |a| {
        a.t(0)?
            .fractional_max_pool(&a.ints(1)?, &a.ints(2)?, a.t(3)?)
    });
    def(r, "aten::fractional_max_pool3d", |a| {
        a.t(0)?
            .fractional_max_pool(&a.ints(1)?, &a.ints(2)?, a.t(3)?)
    });
}
