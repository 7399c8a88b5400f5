//! Channel rearrangements: `pixel_shuffle`, `pixel_unshuffle`, `channel_shuffle` and
//! `native_channel_shuffle`, as views and one copy, with ATen's checks.

use ts_tensor::{Error, Tensor};

use super::def;
use crate::registry::Registry;

type R<T> = Result<T, Error>;

/// `[*, C * r * r, H, W]` to `[*, C, H * r, W * r]`.
fn pixel_shuffle(x: &Tensor, r: i64) -> R<Tensor> {
    let nd = x.dim();
    if nd < 3 {
        return Err(Error::runtime(format!(
            "pixel_shuffle expects input to have at least 3 dimensions, but got input with {nd} dimension(s)"
        )));
    }
    if r <= 0 {
        return Err(Error::runtime(format!(
            "pixel_shuffle expects a positive upscale_factor, but got {r}"
        )));
    }
    let sz = x.sizes();
    let (c, h, w) = (sz[nd - 3], sz[nd - 2], sz[nd - 1]);
    if c % (r * r) != 0 {
        return Err(Error::runtime(format!(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)={c} is not divisible by {}",
            r * r
        )));
    }
    let batch = &sz[..nd - 3];
    let b = batch.len() as i64;
    let mut shape = batch.to_vec();
    shape.extend([c / (r * r), r, r, h, w]);
    let mut perm: Vec<i64> = (0..b).collect();
    perm.extend([b, b + 3, b + 1, b + 4, b + 2]);
    let mut out = batch.to_vec();
    out.extend([c / (r * r), h * r, w * r]);
    x.reshape(&shape)?
        .permute(&perm)?
        .contiguous()?
        .reshape(&out)
}

/// `[*, C, H * r, W * r]` to `[*, C * r * r, H, W]`.
fn pixel_unshuffle(x: &Tensor, r: i64) -> R<Tensor> {
    let nd = x.dim();
    if nd < 3 {
        return Err(Error::runtime(format!(
            "pixel_unshuffle expects input to have at least 3 dimensions, but got input with {nd} dimension(s)"
        )));
    }
    if r <= 0 {
        return Err(Error::runtime(format!(
            "pixel_unshuffle expects a positive downscale_factor, but got {r}"
        )));
    }
    let sz = x.sizes();
    let (c, h, w) = (sz[nd - 3], sz[nd - 2], sz[nd - 1]);
    if h % r != 0 {
        return Err(Error::runtime(format!(
            "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={h} is not divisible by {r}"
        )));
    }
    if w % r != 0 {
        return Err(Error::runtime(format!(
            "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={w} is not divisible by {r}"
        )));
    }
    let batch = &sz[..nd - 3];
    let b = batch.len() as i64;
    let mut shape = batch.to_vec();
    shape.extend([c, h / r, r, w / r, r]);
    let mut perm: Vec<i64> = (0..b).collect();
    perm.extend([b, b + 2, b + 4, b + 1, b + 3]);
    let mut out = batch.to_vec();
    out.extend([c * r * r, h / r, w / r]);
    x.reshape(&shape)?
        .permute(&perm)?
        .contiguous()?
        .reshape(&out)
}

/// `[N, C, *]` with channels regrouped: `[N, g, C / g, *]` transposed to `[N, C / g, g, *]`.
fn channel_shuffle(x: &Tensor, groups: i64) -> R<Tensor> {
    let nd = x.dim();
    if nd < 3 {
        return Err(Error::runtime(format!(
            "channel_shuffle expects input to have at least 3 dimensions, but got input with {nd} dimension(s)"
        )));
    }
    if groups <= 0 {
        return Err(Error::runtime(format!(
            "Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )));
    }
    let sz = x.sizes();
    let c = sz[1];
    if c % groups != 0 {
        return Err(Error::runtime(format!(
            "Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )));
    }
    let mut shape = vec![sz[0], groups, c / groups];
    shape.extend_from_slice(&sz[2..]);
    x.reshape(&shape)?
        .transpose(1, 2)?
        .contiguous()?
        .reshape(&sz)
}

/// Registers the channel rearrangements.
pub fn register(r: &Registry) {
    def(r, "aten::pixel_shuffle", |a| {
        pixel_shuffle(a.t(0)?, a.int(1)?)
    });
    def(r, "aten::pixel_unshuffle", |a| {
        pixel_unshuffle(a.t(0)?, a.int(1)?)
    });
    def(r, "aten::channel_shuffle", |a| {
        channel_shuffle(a.t(0)?, a.int(1)?)
    });
    def(r, "aten::native_channel_shuffle", |a| {
        channel_shuffle(a.t(0)?, a.int(1)?)
    });
}
