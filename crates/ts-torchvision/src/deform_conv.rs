//! `torchvision::deform_conv2d`: convolution whose kernel taps are displaced by learned
//! per-position offsets (and optionally scaled by a mask), as an im2col of bilinear samples
//! followed by one matrix product per group, like torchvision's CPU kernel.

use ts_tensor::{DType, Error, Scalar, Tensor};

use crate::real::{check, d, not_floating, r, Real};

/// The scalar arguments of `deform_conv2d`.
#[derive(Clone, Debug)]
pub struct DeformConvParams {
    /// `(stride_h, stride_w)`.
    pub stride: (i64, i64),
    /// `(pad_h, pad_w)`.
    pub padding: (i64, i64),
    /// `(dilation_h, dilation_w)`.
    pub dilation: (i64, i64),
    /// Weight groups.
    pub groups: i64,
    /// Offset groups (input channels share offsets within a group).
    pub offset_groups: i64,
    /// Whether `mask` modulates the samples (DCNv2).
    pub use_mask: bool,
}

fn expect(cond: bool, what: &str) -> Result<(), Error> {
    check(cond, || {
        format!("Expected {what} to be true, but got false.")
    })
}

/// `torchvision::deform_conv2d(input, weight, offset, mask, bias, ...)`: `[N, C_out, H_out,
/// W_out]`.
pub fn deform_conv2d(
    input: &Tensor,
    weight: &Tensor,
    offset: &Tensor,
    mask: &Tensor,
    bias: &Tensor,
    p: &DeformConvParams,
) -> Result<Tensor, Error> {
    expect(input.dim() == 4, "input_c.ndimension() == 4")?;
    expect(offset.dim() == 4, "offset_c.ndimension() == 4")?;
    expect(
        !p.use_mask || mask.dim() == 4,
        "!use_mask || mask_c.ndimension() == 4",
    )?;
    expect(weight.dim() == 4, "weight_c.ndimension() == 4")?;
    let (is, ws, os) = (input.sizes(), weight.sizes(), offset.sizes());
    let (kh, kw) = (ws[2], ws[3]);
    check(kh > 0 && kw > 0, || {
        format!("weight_h: {kh} weight_w: {kw}")
    })?;
    let ((sh, sw), (ph, pw), (dh, dw)) = (p.stride, p.padding, p.dilation);
    check(sh > 0 && sw > 0, || {
        format!("stride_h: {sh} stride_w: {sw}")
    })?;
    check(ph >= 0 && pw >= 0, || format!("pad_h: {ph} pad_w: {pw}"))?;
    check(dh > 0 && dw > 0, || {
        format!("dilation_h: {dh} dilation_w: {dw}")
    })?;
    let (g, og) = (p.groups, p.offset_groups);
    check(g > 0 && og > 0, || {
        format!("groups: {g} offset_groups: {og}")
    })?;
    expect(
        ws[1] * g == is[1],
        "weight_c.size(1) * n_weight_grps == input_c.size(1)",
    )?;
    expect(ws[0] % g == 0, "weight_c.size(0) % n_weight_grps == 0")?;
    check(os[1] == og * 2 * kh * kw, || {
        format!(
            "offset.shape[1] is not valid: got: {} expected: {}",
            os[1],
            og * 2 * kh * kw
        )
    })?;
    if p.use_mask {
        check(mask.sizes()[1] == og * kh * kw, || {
            format!(
                "mask.shape[1] is not valid: got: {} expected: {}",
                mask.sizes()[1],
                og * kh * kw
            )
        })?;
    }
    expect(is[1] % og == 0, "input_c.size(1) % n_offset_grps == 0")?;
    let out_h = (is[2] + 2 * ph - (dh * (kh - 1) + 1)) / sh + 1;
    let out_w = (is[3] + 2 * pw - (dw * (kw - 1) + 1)) / sw + 1;
    check(os[0] == is[0], || {
        "invalid batch size of offset".to_string()
    })?;
    check(os[2] == out_h && os[3] == out_w, || {
        format!(
            "offset output dims: ({}, {}) - computed output dims: ({out_h}, {out_w})",
            os[2], os[3]
        )
    })?;
    if p.use_mask {
        let ms = mask.sizes();
        check(ms[0] == is[0], || "invalid batch size of mask".to_string())?;
        check(ms[2] == out_h && ms[3] == out_w, || {
            format!(
                "mask output dims: ({}, {}) - computed output dims: ({out_h}, {out_w})",
                ms[2], ms[3]
            )
        })?;
    }
    check(out_h > 0 && out_w > 0, || {
        format!("Calculated output size too small - out_h: {out_h} out_w: {out_w}")
    })?;
    let c_out = ws[0];
    check(bias.numel() as i64 == c_out, || {
        format!("bias should have {c_out} elements, got {}", bias.numel())
    })?;
    for (name, t) in [("weight", weight), ("offset", offset), ("bias", bias)] {
        check(t.dtype() == input.dtype(), || {
            format!("{name} should have the same dtype as input")
        })?;
    }
    if p.use_mask {
        check(mask.dtype() == input.dtype(), || {
            "mask should have the same dtype as input".to_string()
        })?;
    }
    let shape = [is[0], c_out, out_h, out_w];
    if is[0] == 0 {
        return Tensor::zeros(&shape, input.dtype());
    }
    let geo = Geometry {
        channels: is[1] as usize,
        height: is[2] as usize,
        width: is[3] as usize,
        kh: kh as usize,
        kw: kw as usize,
        out_h: out_h as usize,
        out_w: out_w as usize,
        offset_groups: og as usize,
        p: p.clone(),
    };
    let per_image: Vec<Tensor> = match input.dtype() {
        DType::Float32 => columns_per_image::<f32>(input, offset, mask, &geo)?,
        DType::Float64 => columns_per_image::<f64>(input, offset, mask, &geo)?,
        _ => return Err(not_floating("deformable_im2col", input)),
    };
    // out[b] = W (grouped) @ columns[b], then + bias.
    let w = weight.reshape(&[g, c_out / g, ws[1] * kh * kw])?;
    let mut outs = Vec::with_capacity(per_image.len());
    for cols in per_image {
        let cols = cols.reshape(&[g, ws[1] * kh * kw, out_h * out_w])?;
        outs.push(w.matmul(&cols)?.reshape(&[c_out, out_h, out_w])?);
    }
    let out = ts_tensor::stack(&outs, 0)?;
    out.add(&bias.reshape(&[1, c_out, 1, 1])?, Scalar::Int(1))
}

struct Geometry {
    channels: usize,
    height: usize,
    width: usize,
    kh: usize,
    kw: usize,
    out_h: usize,
    out_w: usize,
    offset_groups: usize,
    p: DeformConvParams,
}

/// Bilinear sample with zero padding outside the image (torchvision's deformable variant).
fn sample<T: Real>(plane: &[T], height: usize, width: usize, h: T, w: T) -> T {
    let (hd, wd) = (d(h), d(w));
    if hd <= -1.0 || height as f64 <= hd || wd <= -1.0 || width as f64 <= wd {
        return T::zero();
    }
    let h_low = hd.floor() as i64;
    let w_low = wd.floor() as i64;
    let (h_high, w_high) = (h_low + 1, w_low + 1);
    let lh = h - r(h_low as f64);
    let lw = w - r(w_low as f64);
    let one = T::one();
    let (hh, hw) = (one - lh, one - lw);
    let (hi, wi) = (height as i64, width as i64);
    let at = |y: i64, x: i64| plane[(y * wi + x) as usize];
    let v1 = if h_low >= 0 && w_low >= 0 {
        at(h_low, w_low)
    } else {
        T::zero()
    };
    let v2 = if h_low >= 0 && w_high < wi {
        at(h_low, w_high)
    } else {
        T::zero()
    };
    let v3 = if h_high < hi && w_low >= 0 {
        at(h_high, w_low)
    } else {
        T::zero()
    };
    let v4 = if h_high < hi && w_high < wi {
        at(h_high, w_high)
    } else {
        T::zero()
    };
    hh * hw * v1 + hh * lw * v2 + lh * hw * v3 + lh * lw * v4
}

/// The `[C_in * kh * kw, out_h * out_w]` column matrix of each image.
fn columns_per_image<T: Real>(
    input: &Tensor,
    offset: &Tensor,
    mask: &Tensor,
    geo: &Geometry,
) -> Result<Vec<Tensor>, Error> {
    let data = input.to_vec::<T>();
    let offs = offset.to_vec::<T>();
    let masks = if geo.p.use_mask {
        mask.to_vec::<T>()
    } else {
        Vec::new()
    };
    let (hw, ohw) = (geo.height * geo.width, geo.out_h * geo.out_w);
    let taps = geo.kh * geo.kw;
    let per_group = geo.channels / geo.offset_groups;
    let batch = data.len() / (geo.channels * hw).max(1);
    let (sh, sw) = (geo.p.stride.0, geo.p.stride.1);
    let (ph, pw) = (geo.p.padding.0, geo.p.padding.1);
    let (dh, dw) = (geo.p.dilation.0, geo.p.dilation.1);
    let mut result = Vec::with_capacity(batch);
    for b in 0..batch {
        let mut cols = vec![T::zero(); geo.channels * taps * ohw];
        for c in 0..geo.channels {
            let grp = c / per_group;
            let plane = &data[(b * geo.channels + c) * hw..][..hw];
            let off = &offs[(b * geo.offset_groups + grp) * 2 * taps * ohw..][..2 * taps * ohw];
            let msk = if geo.p.use_mask {
                Some(&masks[(b * geo.offset_groups + grp) * taps * ohw..][..taps * ohw])
            } else {
                None
            };
            for i in 0..geo.kh {
                for j in 0..geo.kw {
                    let tap = i * geo.kw + j;
                    let row = &mut cols[(c * taps + tap) * ohw..][..ohw];
                    for oy in 0..geo.out_h {
                        for ox in 0..geo.out_w {
                            let pos = oy * geo.out_w + ox;
                            let m = msk.map_or(T::one(), |m| m[tap * ohw + pos]);
                            let off_h = off[2 * tap * ohw + pos];
                            let off_w = off[(2 * tap + 1) * ohw + pos];
                            let y = r::<T>((oy as i64 * sh - ph + i as i64 * dh) as f64) + off_h;
                            let x = r::<T>((ox as i64 * sw - pw + j as i64 * dw) as f64) + off_w;
                            row[pos] = m * sample(plane, geo.height, geo.width, y, x);
                        }
                    }
                }
            }
        }
        let sizes = [(geo.channels * taps) as i64, ohw as i64];
        result.push(Tensor::from_vec(cols, &sizes)?);
    }
    Ok(result)
}
