//! `torchvision::roi_pool` (Fast R-CNN's max pooling over quantized bins) and `ps_roi_pool`
//! (R-FCN's position-sensitive average pooling), with torchvision's rounding and clipping.

use ts_tensor::{DType, Error, Tensor};

use crate::real::{check, d, r, Real};

struct Quantized<T> {
    batch: usize,
    start_h: i64,
    start_w: i64,
    bin_h: T,
    bin_w: T,
}

/// The region rounded to input cells; `extra` is 1 for roi_pool's inclusive end, 0 for
/// ps_roi_pool's.
fn quantize<T: Real>(
    roi: &[T],
    scale: T,
    extra: i64,
    pooled: (i64, i64),
    batches: usize,
) -> Result<Quantized<T>, Error> {
    let batch = d(roi[0]) as i64;
    check(batch >= 0 && (batch as usize) < batches, || {
        format!("roi batch index {batch} is out of range for {batches} images")
    })?;
    let round = |v: T| d((v * scale).round()) as i64;
    let (start_w, start_h, end_w, end_h) =
        (round(roi[1]), round(roi[2]), round(roi[3]), round(roi[4]));
    let roi_w = (end_w - start_w + extra).max(1);
    let roi_h = (end_h - start_h + extra).max(1);
    Ok(Quantized {
        batch: batch as usize,
        start_h,
        start_w,
        bin_h: r::<T>(roi_h as f64) / r::<T>(pooled.0 as f64),
        bin_w: r::<T>(roi_w as f64) / r::<T>(pooled.1 as f64),
    })
}

impl<T: Real> Quantized<T> {
    /// The input cells `[h0, h1) x [w0, w1)` of bin `(ph, pw)`, clipped to `[0, limit]`.
    fn bin(&self, ph: i64, pw: i64, limit_h: i64, limit_w: i64) -> (i64, i64, i64, i64) {
        let f = |i: i64, bin: T| d((r::<T>(i as f64) * bin).floor()) as i64;
        let c = |i: i64, bin: T| d((r::<T>(i as f64) * bin).ceil()) as i64;
        let h0 = (f(ph, self.bin_h) + self.start_h).clamp(0, limit_h);
        let h1 = (c(ph + 1, self.bin_h) + self.start_h).clamp(0, limit_h);
        let w0 = (f(pw, self.bin_w) + self.start_w).clamp(0, limit_w);
        let w1 = (c(pw + 1, self.bin_w) + self.start_w).clamp(0, limit_w);
        (h0, h1, w0, w1)
    }
}

fn check_inputs(input: &Tensor, rois: &Tensor, pooled: (i64, i64)) -> Result<(), Error> {
    check(input.dim() == 4, || {
        format!("input should be a 4d tensor, got {}D", input.dim())
    })?;
    check(rois.dim() == 2 && rois.sizes()[1] == 5, || {
        "Tensor rois should have shape as Tensor[K, 5]".to_string()
    })?;
    check(input.dtype() == rois.dtype(), || {
        "input and rois must have the same dtype".to_string()
    })?;
    check(pooled.0 > 0 && pooled.1 > 0, || {
        format!(
            "pooled size must be positive, got ({}, {})",
            pooled.0, pooled.1
        )
    })
}

/// `torchvision::roi_pool(input, rois, spatial_scale, pooled_height, pooled_width)`: the
/// maximum of each bin (0 for an empty bin) and the flat `h * W + w` index it came from
/// (int32, -1 for an empty bin).
pub fn roi_pool(
    input: &Tensor,
    rois: &Tensor,
    spatial_scale: f64,
    pooled_height: i64,
    pooled_width: i64,
) -> Result<(Tensor, Tensor), Error> {
    let pooled = (pooled_height, pooled_width);
    check_inputs(input, rois, pooled)?;
    match input.dtype() {
        DType::Float32 => roi_pool_impl::<f32>(input, rois, spatial_scale, pooled),
        DType::Float64 => roi_pool_impl::<f64>(input, rois, spatial_scale, pooled),
        _ => Err(Error::runtime(
            "roi_pool only supports float and double types",
        )),
    }
}

fn roi_pool_impl<T: Real>(
    input: &Tensor,
    rois: &Tensor,
    spatial_scale: f64,
    pooled: (i64, i64),
) -> Result<(Tensor, Tensor), Error> {
    let s = input.sizes();
    let (k, channels, height, width) = (rois.sizes()[0], s[1], s[2], s[3]);
    let shape = [k, channels, pooled.0, pooled.1];
    if k == 0 || channels == 0 {
        return Ok((
            Tensor::zeros(&shape, input.dtype())?,
            Tensor::zeros(&shape, DType::Int32)?,
        ));
    }
    let data = input.to_vec::<T>();
    let boxes = rois.to_vec::<T>();
    let scale = r::<T>(spatial_scale);
    let n = (k * channels * pooled.0 * pooled.1) as usize;
    let mut out = vec![T::zero(); n];
    let mut argmax = vec![-1i32; n];
    let hw = (height * width) as usize;
    for (ri, roi) in boxes.chunks_exact(5).enumerate() {
        let q = quantize(roi, scale, 1, pooled, s[0] as usize)?;
        for ph in 0..pooled.0 {
            for pw in 0..pooled.1 {
                let (h0, h1, w0, w1) = q.bin(ph, pw, height, width);
                let empty = h1 <= h0 || w1 <= w0;
                for c in 0..channels {
                    let plane = &data[(q.batch * channels as usize + c as usize) * hw..][..hw];
                    let mut best = if empty {
                        T::zero()
                    } else {
                        r::<T>(-(f32::MAX as f64))
                    };
                    let mut best_at = -1i64;
                    for h in h0..h1 {
                        for w in w0..w1 {
                            let at = h * width + w;
                            if plane[at as usize] > best {
                                best = plane[at as usize];
                                best_at = at;
                            }
                        }
                    }
                    let o = (((ri as i64 * channels + c) * pooled.0 + ph) * pooled.1 + pw) as usize;
                    out[o] = best;
                    argmax[o] = best_at as i32;
                }
            }
        }
    }
    Ok((
        Tensor::from_vec(out, &shape)?,
        Tensor::from_vec(argmax, &shape)?,
    ))
}

/// `torchvision::ps_roi_pool(input, rois, spatial_scale, pooled_height, pooled_width)`: the
/// mean of each bin of the position-sensitive channel, and the channel mapping (int32).
pub fn ps_roi_pool(
    input: &Tensor,
    rois: &Tensor,
    spatial_scale: f64,
    pooled_height: i64,
    pooled_width: i64,
) -> Result<(Tensor, Tensor), Error> {
    let pooled = (pooled_height, pooled_width);
    check_inputs(input, rois, pooled)?;
    check(
        input.sizes()[1] % (pooled_height * pooled_width) == 0,
        || "input channels must be a multiple of pooling height * pooling width".to_string(),
    )?;
    match input.dtype() {
        DType::Float32 => ps_roi_pool_impl::<f32>(input, rois, spatial_scale, pooled),
        DType::Float64 => ps_roi_pool_impl::<f64>(input, rois, spatial_scale, pooled),
        _ => Err(Error::runtime(
            "ps_roi_pool only supports float and double types",
        )),
    }
}

fn ps_roi_pool_impl<T: Real>(
    input: &Tensor,
    rois: &Tensor,
    spatial_scale: f64,
    pooled: (i64, i64),
) -> Result<(Tensor, Tensor), Error> {
    let s = input.sizes();
    let (k, channels, height, width) = (rois.sizes()[0], s[1], s[2], s[3]);
    let channels_out = channels / (pooled.0 * pooled.1);
    let shape = [k, channels_out, pooled.0, pooled.1];
    if k == 0 || channels_out == 0 {
        return Ok((
            Tensor::zeros(&shape, input.dtype())?,
            Tensor::zeros(&shape, DType::Int32)?,
        ));
    }
    let data = input.to_vec::<T>();
    let boxes = rois.to_vec::<T>();
    let scale = r::<T>(spatial_scale);
    let n = (k * channels_out * pooled.0 * pooled.1) as usize;
    let mut out = Vec::with_capacity(n);
    let mut mapping = Vec::with_capacity(n);
    let hw = (height * width) as usize;
    for roi in boxes.chunks_exact(5) {
        let q = quantize(roi, scale, 0, pooled, s[0] as usize)?;
        let mut c_in = 0usize;
        for _ in 0..channels_out {
            for ph in 0..pooled.0 {
                for pw in 0..pooled.1 {
                    // torchvision's forward clips bins to the last row/column (`size - 1`).
                    let (h0, h1, w0, w1) = q.bin(ph, pw, height - 1, width - 1);
                    let empty = h1 <= h0 || w1 <= w0;
                    let plane = &data[(q.batch * channels as usize + c_in) * hw..][..hw];
                    let mut sum = T::zero();
                    for h in h0..h1 {
                        for w in w0..w1 {
                            sum += plane[(h * width + w) as usize];
                        }
                    }
                    let area = r::<T>(((h1 - h0) * (w1 - w0)) as f64);
                    out.push(if empty { T::zero() } else { sum / area });
                    mapping.push(c_in as i32);
                    c_in += 1;
                }
            }
        }
    }
    Ok((
        Tensor::from_vec(out, &shape)?,
        Tensor::from_vec(mapping, &shape)?,
    ))
}
