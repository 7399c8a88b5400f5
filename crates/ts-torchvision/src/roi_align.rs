//! `torchvision::roi_align` and `ps_roi_align`: average of bilinear samples over each bin of
//! each region of interest (Mask R-CNN's RoIAlign; the position-sensitive variant of R-FCN).
//!
//! Regions are rows `(batch_index, x1, y1, x2, y2)` in input coordinates, scaled by
//! `spatial_scale`. Sample positions, weights and sums follow torchvision's CPU kernels term
//! by term in the input's dtype, so results match to the last bit in the usual cases.

use rayon::prelude::*;
use ts_tensor::{DType, Error, Tensor};

use crate::real::{check, d, not_floating, r, Real};

/// Input feature maps (`[N, C, H, W]`, contiguous copy) and regions.
struct Maps<T> {
    data: Vec<T>,
    channels: usize,
    height: usize,
    width: usize,
}

impl<T: Real> Maps<T> {
    fn plane(&self, batch: usize, c: usize) -> &[T] {
        let hw = self.height * self.width;
        let start = (batch * self.channels + c) * hw;
        &self.data[start..start + hw]
    }
}

/// The bilinear sample of `plane` at `(y, x)`; 0 outside `[-1, size]` (and for NaN).
fn bilinear<T: Real>(plane: &[T], height: usize, width: usize, y: T, x: T) -> T {
    SamplePoint::new(height, width, y, x).interpolate(plane)
}

/// Interpolation weights and corner indices of an in-range sample point.
fn weights<T: Real>(
    height: usize,
    width: usize,
    y: T,
    x: T,
) -> ([T; 4], usize, usize, usize, usize) {
    let zero = T::zero();
    let mut y = if y <= zero { zero } else { y };
    let mut x = if x <= zero { zero } else { x };
    let mut ylo = d(y) as usize;
    let mut xlo = d(x) as usize;
    let yhi;
    let xhi;
    if ylo + 1 >= height {
        ylo = height - 1;
        yhi = ylo;
        y = r(ylo as f64);
    } else {
        yhi = ylo + 1;
    }
    if xlo + 1 >= width {
        xlo = width - 1;
        xhi = xlo;
        x = r(xlo as f64);
    } else {
        xhi = xlo + 1;
    }
    let ly = y - r(ylo as f64);
    let lx = x - r(xlo as f64);
    let one = T::one();
    let (hy, hx) = (one - ly, one - lx);
    ([hy * hx, hy * lx, ly * hx, ly * lx], ylo, yhi, xlo, xhi)
}

/// A bilinear sample point resolved against a map size: its four corner offsets and
/// weights, or nothing for a point outside the map (which samples as zero).
struct SamplePoint<T> {
    corners: [usize; 4],
    weights: [T; 4],
    inside: bool,
}

impl<T: Real> SamplePoint<T> {
    fn new(height: usize, width: usize, y: T, x: T) -> SamplePoint<T> {
        let (yd, xd) = (d(y), d(x));
        if !(yd >= -1.0 && yd <= height as f64 && xd >= -1.0 && xd <= width as f64) {
            return SamplePoint {
                corners: [0; 4],
                weights: [T::zero(); 4],
                inside: false,
            };
        }
        let (weights, ylo, yhi, xlo, xhi) = weights(height, width, y, x);
        SamplePoint {
            corners: [
                ylo * width + xlo,
                ylo * width + xhi,
                yhi * width + xlo,
                yhi * width + xhi,
            ],
            weights,
            inside: true,
        }
    }

    /// The sample of `plane` (torchvision's sum of the four weighted corners, in its order).
    fn interpolate(&self, plane: &[T]) -> T {
        if !self.inside {
            return T::zero();
        }
        let (c, w) = (&self.corners, &self.weights);
        w[0] * plane[c[0]] + w[1] * plane[c[1]] + w[2] * plane[c[2]] + w[3] * plane[c[3]]
    }
}

/// A region's start and bin sizes: `(start_h, start_w, bin_h, bin_w, height, width)`.
struct Region<T> {
    batch: usize,
    start_h: T,
    start_w: T,
    bin_h: T,
    bin_w: T,
    grid_h: i64,
    grid_w: i64,
}

fn region<T: Real>(
    roi: &[T],
    scale: T,
    offset: T,
    clamp_to_one: bool,
    pooled: (i64, i64),
    sampling_ratio: i64,
    batches: usize,
) -> Result<Region<T>, Error> {
    let batch = d(roi[0]) as i64;
    check(batch >= 0 && (batch as usize) < batches, || {
        format!("roi batch index {batch} is out of range for {batches} images")
    })?;
    let start_w = roi[1] * scale - offset;
    let start_h = roi[2] * scale - offset;
    let end_w = roi[3] * scale - offset;
    let end_h = roi[4] * scale - offset;
    let mut roi_w = end_w - start_w;
    let mut roi_h = end_h - start_h;
    if clamp_to_one {
        let one = T::one();
        roi_w = if roi_w < one { one } else { roi_w };
        roi_h = if roi_h < one { one } else { roi_h };
    }
    let (ph, pw) = (r::<T>(pooled.0 as f64), r::<T>(pooled.1 as f64));
    let grid = |size: T, pooled: T| -> i64 {
        if sampling_ratio > 0 {
            sampling_ratio
        } else {
            d((size / pooled).ceil()) as i64
        }
    };
    Ok(Region {
        batch: batch as usize,
        start_h,
        start_w,
        bin_h: roi_h / ph,
        bin_w: roi_w / pw,
        grid_h: grid(roi_h, ph),
        grid_w: grid(roi_w, pw),
    })
}

impl<T: Real> Region<T> {
    /// The sample point `(iy, ix)` of bin `(ph, pw)`.
    fn sample(&self, ph: i64, pw: i64, iy: i64, ix: i64) -> (T, T) {
        let y = self.start_h
            + r::<T>(ph as f64) * self.bin_h
            + r::<T>(iy as f64 + 0.5) * self.bin_h / r::<T>(self.grid_h as f64);
        let x = self.start_w
            + r::<T>(pw as f64) * self.bin_w
            + r::<T>(ix as f64 + 0.5) * self.bin_w / r::<T>(self.grid_w as f64);
        (y, x)
    }

    /// How many sample points a bin has (none for a negative grid, which an inverted
    /// region with `aligned` gives).
    fn samples_per_bin(&self) -> usize {
        (self.grid_h.max(0) * self.grid_w.max(0)) as usize
    }

    /// Every bin's sample points, bin by bin (row-major), `grid_h * grid_w` per bin.
    fn sample_points(&self, maps: &Maps<T>, pooled: (i64, i64)) -> Vec<SamplePoint<T>> {
        let mut points =
            Vec::with_capacity((pooled.0 * pooled.1) as usize * self.samples_per_bin());
        for ph in 0..pooled.0 {
            for pw in 0..pooled.1 {
                for iy in 0..self.grid_h {
                    for ix in 0..self.grid_w {
                        let (y, x) = self.sample(ph, pw, iy, ix);
                        points.push(SamplePoint::new(maps.height, maps.width, y, x));
                    }
                }
            }
        }
        points
    }

    /// The average of the bin's samples in `plane`, divided by `count`.
    fn bin_average(&self, maps: &Maps<T>, plane: &[T], ph: i64, pw: i64, count: T) -> T {
        let mut sum = T::zero();
        for iy in 0..self.grid_h {
            for ix in 0..self.grid_w {
                let (y, x) = self.sample(ph, pw, iy, ix);
                sum += bilinear(plane, maps.height, maps.width, y, x);
            }
        }
        sum / count
    }
}

fn check_inputs(input: &Tensor, rois: &Tensor, rois_message: &str) -> Result<(), Error> {
    check(input.dim() == 4, || {
        format!("input should be a 4d tensor, got {}D", input.dim())
    })?;
    check(rois.dim() == 2 && rois.sizes()[1] == 5, || {
        rois_message.to_string()
    })?;
    check(input.dtype() == rois.dtype(), || {
        "input should have the same type as rois".to_string()
    })
}

fn maps<T: Real>(input: &Tensor) -> Maps<T> {
    let s = input.sizes();
    Maps {
        data: input.to_vec::<T>(),
        channels: s[1] as usize,
        height: s[2] as usize,
        width: s[3] as usize,
    }
}

/// `torchvision::roi_align(input, rois, spatial_scale, pooled_height, pooled_width,
/// sampling_ratio, aligned)`: `[K, C, pooled_height, pooled_width]`.
pub fn roi_align(
    input: &Tensor,
    rois: &Tensor,
    spatial_scale: f64,
    pooled_height: i64,
    pooled_width: i64,
    sampling_ratio: i64,
    aligned: bool,
) -> Result<Tensor, Error> {
    check_inputs(input, rois, "rois must have shape as Tensor[K, 5]")?;
    check(pooled_height > 0 && pooled_width > 0, || {
        format!("pooled size must be positive, got ({pooled_height}, {pooled_width})")
    })?;
    match input.dtype() {
        DType::Float32 => roi_align_impl::<f32>(
            input,
            rois,
            spatial_scale,
            (pooled_height, pooled_width),
            sampling_ratio,
            aligned,
        ),
        DType::Float64 => roi_align_impl::<f64>(
            input,
            rois,
            spatial_scale,
            (pooled_height, pooled_width),
            sampling_ratio,
            aligned,
        ),
        _ => Err(not_floating("roi_align_forward_kernel", input)),
    }
}

fn roi_align_impl<T: Real>(
    input: &Tensor,
    rois: &Tensor,
    spatial_scale: f64,
    pooled: (i64, i64),
    sampling_ratio: i64,
    aligned: bool,
) -> Result<Tensor, Error> {
    let k = rois.sizes()[0];
    let c = input.sizes()[1];
    let shape = [k, c, pooled.0, pooled.1];
    if k == 0 || input.numel() == 0 {
        return Tensor::zeros(&shape, input.dtype());
    }
    let maps = maps::<T>(input);
    let batches = input.sizes()[0] as usize;
    let boxes = rois.to_vec::<T>();
    let offset = if aligned { r::<T>(0.5) } else { T::zero() };
    let scale = r::<T>(spatial_scale);
    let regions = boxes
        .chunks_exact(5)
        .map(|roi| {
            region(
                roi,
                scale,
                offset,
                !aligned,
                pooled,
                sampling_ratio,
                batches,
            )
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let bins = (pooled.0 * pooled.1) as usize;
    let mut out = vec![T::zero(); k as usize * maps.channels * bins];
    // Regions in parallel; within one, the sample points and weights are computed once and
    // reused for every channel (they do not depend on it).
    out.par_chunks_mut(maps.channels * bins)
        .zip(regions.par_iter())
        .with_min_len(ts_tensor::threads::min_piece(true))
        .for_each(|(o, reg)| {
            // An empty sampling grid averages to zero.
            let count = r::<T>((reg.grid_h * reg.grid_w).max(1) as f64);
            let points = reg.sample_points(&maps, pooled);
            let per_bin = reg.samples_per_bin();
            for (ch, oc) in o.chunks_exact_mut(bins).enumerate() {
                let plane = maps.plane(reg.batch, ch);
                for (bin, v) in oc.iter_mut().enumerate() {
                    let mut sum = T::zero();
                    for p in &points[bin * per_bin..(bin + 1) * per_bin] {
                        sum += p.interpolate(plane);
                    }
                    *v = sum / count;
                }
            }
        });
    Tensor::from_vec(out, &shape)
}

/// `torchvision::ps_roi_align(input, rois, spatial_scale, pooled_height, pooled_width,
/// sampling_ratio)`: position-sensitive RoIAlign, where output channel `c` of bin `(i, j)`
/// reads input channel `(c * pooled_height + i) * pooled_width + j`. Returns the output and
/// that channel mapping (int32).
pub fn ps_roi_align(
    input: &Tensor,
    rois: &Tensor,
    spatial_scale: f64,
    pooled_height: i64,
    pooled_width: i64,
    sampling_ratio: i64,
) -> Result<(Tensor, Tensor), Error> {
    check_inputs(input, rois, "Tensor rois should have shape as Tensor[K, 5]")?;
    check(pooled_height > 0 && pooled_width > 0, || {
        format!("pooled size must be positive, got ({pooled_height}, {pooled_width})")
    })?;
    let channels = input.sizes()[1];
    check(channels % (pooled_height * pooled_width) == 0, || {
        "input channels must be a multiple of pooling height * pooling width".to_string()
    })?;
    let pooled = (pooled_height, pooled_width);
    match input.dtype() {
        DType::Float32 => {
            ps_roi_align_impl::<f32>(input, rois, spatial_scale, pooled, sampling_ratio)
        }
        DType::Float64 => {
            ps_roi_align_impl::<f64>(input, rois, spatial_scale, pooled, sampling_ratio)
        }
        _ => Err(not_floating("ps_roi_align_forward_kernel", input)),
    }
}

fn ps_roi_align_impl<T: Real>(
    input: &Tensor,
    rois: &Tensor,
    spatial_scale: f64,
    pooled: (i64, i64),
    sampling_ratio: i64,
) -> Result<(Tensor, Tensor), Error> {
    let k = rois.sizes()[0];
    let channels_out = input.sizes()[1] / (pooled.0 * pooled.1);
    let shape = [k, channels_out, pooled.0, pooled.1];
    if k == 0 || channels_out == 0 {
        return Ok((
            Tensor::zeros(&shape, input.dtype())?,
            Tensor::zeros(&shape, DType::Int32)?,
        ));
    }
    let maps = maps::<T>(input);
    let batches = input.sizes()[0] as usize;
    let boxes = rois.to_vec::<T>();
    let scale = r::<T>(spatial_scale);
    let half = r::<T>(0.5);
    let n = (k * channels_out * pooled.0 * pooled.1) as usize;
    let mut out = Vec::with_capacity(n);
    let mut mapping = Vec::with_capacity(n);
    for roi in boxes.chunks_exact(5) {
        let reg = region(roi, scale, half, false, pooled, sampling_ratio, batches)?;
        // torchvision divides by the grid size as is (an empty grid gives NaN).
        let count = r::<T>((reg.grid_h * reg.grid_w) as f64);
        let mut c_in = 0usize;
        for _ in 0..channels_out {
            for ph in 0..pooled.0 {
                for pw in 0..pooled.1 {
                    let plane = maps.plane(reg.batch, c_in);
                    out.push(reg.bin_average(&maps, plane, ph, pw, count));
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
