//! Spatial transformers: `grid_sampler_2d/3d` (sampling an input at the normalized grid
//! locations, with bilinear/nearest/bicubic interpolation and zeros/border/reflection padding)
//! and `affine_grid_generator` (the grid of an affine transform), with ATen's coordinate rules.

use rayon::prelude::*;

use crate::cpu::num::FloatMath;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Interpolation of `grid_sampler` (`interpolation_mode` 0, 1, 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridInterpolation {
    Bilinear,
    Nearest,
    Bicubic,
}

/// Out-of-range handling of `grid_sampler` (`padding_mode` 0, 1, 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridPadding {
    Zeros,
    Border,
    Reflection,
}

impl GridInterpolation {
    /// From the operator's integer code.
    pub fn from_code(c: i64) -> Result<Self> {
        match c {
            0 => Ok(GridInterpolation::Bilinear),
            1 => Ok(GridInterpolation::Nearest),
            2 => Ok(GridInterpolation::Bicubic),
            _ => Err(Error::runtime(format!(
                "grid_sampler(): invalid interpolation mode {c}"
            ))),
        }
    }
}

impl GridPadding {
    /// From the operator's integer code.
    pub fn from_code(c: i64) -> Result<Self> {
        match c {
            0 => Ok(GridPadding::Zeros),
            1 => Ok(GridPadding::Border),
            2 => Ok(GridPadding::Reflection),
            _ => Err(Error::runtime(format!(
                "grid_sampler(): invalid padding mode {c}"
            ))),
        }
    }
}

/// Normalized `[-1, 1]` coordinate to pixel coordinate.
fn unnormalize<T: FloatMath>(c: T, size: i64, align_corners: bool) -> T {
    let one = T::one();
    let two = T::from_f64(2.0);
    let s = T::from_f64(size as f64);
    if align_corners {
        ((c + one) / two) * (s - one)
    } else {
        ((c + one) * s - one) / two
    }
}

fn clip<T: FloatMath>(x: T, size: i64) -> T {
    // `min(size - 1, max(x, 0))` with C++'s std::max/std::min argument order (NaN clips to the
    // upper limit).
    let hi = T::from_f64((size - 1) as f64);
    let m = if x < T::zero() { T::zero() } else { x };
    if m < hi {
        m
    } else {
        hi
    }
}

fn reflect<T: FloatMath>(x: T, twice_low: i64, twice_high: i64) -> T {
    if twice_low == twice_high {
        return T::zero();
    }
    let min = T::from_f64(twice_low as f64) / T::from_f64(2.0);
    let span = T::from_f64((twice_high - twice_low) as f64) / T::from_f64(2.0);
    let d = x - min;
    let d = if d < T::zero() { -d } else { d };
    let df = d.to_f64();
    let sf = span.to_f64();
    let extra = T::from_f64(df % sf);
    let flips = (df / sf).floor() as i64;
    if flips % 2 == 0 {
        extra + min
    } else {
        span - extra + min
    }
}

/// Applies the padding mode to a pixel coordinate.
fn pad_coord<T: FloatMath>(x: T, size: i64, pad: GridPadding, align_corners: bool) -> T {
    match pad {
        GridPadding::Zeros => x,
        GridPadding::Border => clip(x, size),
        GridPadding::Reflection => {
            let r = if align_corners {
                reflect(x, 0, 2 * (size - 1))
            } else {
                reflect(x, -1, 2 * size - 1)
            };
            clip(r, size)
        }
    }
}

fn cubic_coeffs<T: FloatMath>(t: T) -> [T; 4] {
    let a = T::from_f64(-0.75);
    let one = T::one();
    let c1 = |x: T| ((a + T::from_f64(2.0)) * x - (a + T::from_f64(3.0))) * x * x + one;
    let c2 = |x: T| {
        ((a * x - T::from_f64(5.0) * a) * x + T::from_f64(8.0) * a) * x - T::from_f64(4.0) * a
    };
    [c2(t + one), c1(t), c1(one - t), c2(one - t + one)]
}

/// Rounds half to even (C's `nearbyint` in the default mode).
fn nearbyint(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 {
        2.0 * (x / 2.0).round()
    } else {
        r
    }
}

/// Sampler settings shared by the 2-d and 3-d kernels.
#[derive(Clone, Copy)]
struct Mode {
    interp: GridInterpolation,
    pad: GridPadding,
    align: bool,
}

/// 2-d sampling of one `[C, H, W]` batch item at the `[oh * ow, 2]` grid points into
/// `[C, oh * ow]`.
fn sample_2d<T: FloatMath>(x: &[T], c: usize, h: i64, w: i64, grid: &[T], m: Mode, out: &mut [T]) {
    let pts = grid.len() / 2;
    let plane = (h * w) as usize;
    let at = |ci: usize, y: i64, xx: i64| -> T {
        if y >= 0 && y < h && xx >= 0 && xx < w {
            x[ci * plane + (y * w + xx) as usize]
        } else {
            T::zero()
        }
    };
    for p in 0..pts {
        let (gx, gy) = (grid[2 * p], grid[2 * p + 1]);
        match m.interp {
            GridInterpolation::Bilinear | GridInterpolation::Nearest => {
                let ix = pad_coord(unnormalize(gx, w, m.align), w, m.pad, m.align);
                let iy = pad_coord(unnormalize(gy, h, m.align), h, m.pad, m.align);
                if m.interp == GridInterpolation::Nearest {
                    let (nx, ny) = (nearbyint(ix.to_f64()), nearbyint(iy.to_f64()));
                    for ci in 0..c {
                        out[ci * pts + p] = if nx.is_finite() && ny.is_finite() {
                            at(ci, ny as i64, nx as i64)
                        } else {
                            T::zero()
                        };
                    }
                    continue;
                }
                let (fx, fy) = (ix.to_f64().floor(), iy.to_f64().floor());
                if !fx.is_finite() || !fy.is_finite() {
                    for ci in 0..c {
                        out[ci * pts + p] = T::zero();
                    }
                    continue;
                }
                let (x0, y0) = (fx as i64, fy as i64);
                let (x1, y1) = (x0 + 1, y0 + 1);
                let (tx0, ty0) = (T::from_f64(fx), T::from_f64(fy));
                let (tx1, ty1) = (tx0 + T::one(), ty0 + T::one());
                let nw = (tx1 - ix) * (ty1 - iy);
                let ne = (ix - tx0) * (ty1 - iy);
                let sw = (tx1 - ix) * (iy - ty0);
                let se = (ix - tx0) * (iy - ty0);
                for ci in 0..c {
                    let mut v = T::zero();
                    for (yy, xx, wt) in [(y0, x0, nw), (y0, x1, ne), (y1, x0, sw), (y1, x1, se)] {
                        if yy >= 0 && yy < h && xx >= 0 && xx < w {
                            v = v + at(ci, yy, xx) * wt;
                        }
                    }
                    out[ci * pts + p] = v;
                }
            }
            GridInterpolation::Bicubic => {
                let ix = unnormalize(gx, w, m.align);
                let iy = unnormalize(gy, h, m.align);
                let (fx, fy) = (ix.to_f64().floor(), iy.to_f64().floor());
                if !fx.is_finite() || !fy.is_finite() {
                    for ci in 0..c {
                        out[ci * pts + p] = T::zero();
                    }
                    continue;
                }
                let cx = cubic_coeffs(ix - T::from_f64(fx));
                let cy = cubic_coeffs(iy - T::from_f64(fy));
                // A tap's value after padding its coordinate (zeros outside).
                let tap = |ci: usize, yy: f64, xx: f64| -> T {
                    let px = pad_coord(T::from_f64(xx), w, m.pad, m.align).to_f64();
                    let py = pad_coord(T::from_f64(yy), h, m.pad, m.align).to_f64();
                    at(ci, py as i64, px as i64)
                };
                for ci in 0..c {
                    let mut v = T::zero();
                    for (i, &wy) in cy.iter().enumerate() {
                        let yy = fy - 1.0 + i as f64;
                        let mut row = T::zero();
                        for (j, &wx) in cx.iter().enumerate() {
                            row = row + tap(ci, yy, fx - 1.0 + j as f64) * wx;
                        }
                        v = v + row * wy;
                    }
                    out[ci * pts + p] = v;
                }
            }
        }
    }
}

/// 3-d sampling of one `[C, D, H, W]` batch item at `[points, 3]` grid locations.
#[allow(clippy::too_many_arguments)]
fn sample_3d<T: FloatMath>(
    x: &[T],
    c: usize,
    d: i64,
    h: i64,
    w: i64,
    grid: &[T],
    m: Mode,
    out: &mut [T],
) {
    let pts = grid.len() / 3;
    let vol = (d * h * w) as usize;
    let at = |ci: usize, z: i64, y: i64, xx: i64| -> T {
        if z >= 0 && z < d && y >= 0 && y < h && xx >= 0 && xx < w {
            x[ci * vol + ((z * h + y) * w + xx) as usize]
        } else {
            T::zero()
        }
    };
    for p in 0..pts {
        let ix = pad_coord(unnormalize(grid[3 * p], w, m.align), w, m.pad, m.align);
        let iy = pad_coord(unnormalize(grid[3 * p + 1], h, m.align), h, m.pad, m.align);
        let iz = pad_coord(unnormalize(grid[3 * p + 2], d, m.align), d, m.pad, m.align);
        let (fx, fy, fz) = (ix.to_f64(), iy.to_f64(), iz.to_f64());
        if !(fx.is_finite() && fy.is_finite() && fz.is_finite()) {
            for ci in 0..c {
                out[ci * pts + p] = T::zero();
            }
            continue;
        }
        if m.interp == GridInterpolation::Nearest {
            let (nx, ny, nz) = (
                nearbyint(fx) as i64,
                nearbyint(fy) as i64,
                nearbyint(fz) as i64,
            );
            for ci in 0..c {
                out[ci * pts + p] = at(ci, nz, ny, nx);
            }
            continue;
        }
        let (x0, y0, z0) = (fx.floor(), fy.floor(), fz.floor());
        let (tx0, ty0, tz0) = (T::from_f64(x0), T::from_f64(y0), T::from_f64(z0));
        let one = T::one();
        let (tx1, ty1, tz1) = (tx0 + one, ty0 + one, tz0 + one);
        let (wx0, wx1) = (tx1 - ix, ix - tx0);
        let (wy0, wy1) = (ty1 - iy, iy - ty0);
        let (wz0, wz1) = (tz1 - iz, iz - tz0);
        let (x0, y0, z0) = (x0 as i64, y0 as i64, z0 as i64);
        let corners = [
            (z0, y0, x0, wx0 * wy0 * wz0),
            (z0, y0, x0 + 1, wx1 * wy0 * wz0),
            (z0, y0 + 1, x0, wx0 * wy1 * wz0),
            (z0, y0 + 1, x0 + 1, wx1 * wy1 * wz0),
            (z0 + 1, y0, x0, wx0 * wy0 * wz1),
            (z0 + 1, y0, x0 + 1, wx1 * wy0 * wz1),
            (z0 + 1, y0 + 1, x0, wx0 * wy1 * wz1),
            (z0 + 1, y0 + 1, x0 + 1, wx1 * wy1 * wz1),
        ];
        for ci in 0..c {
            let mut v = T::zero();
            for &(zz, yy, xx, wt) in &corners {
                if zz >= 0 && zz < d && yy >= 0 && yy < h && xx >= 0 && xx < w {
                    v = v + at(ci, zz, yy, xx) * wt;
                }
            }
            out[ci * pts + p] = v;
        }
    }
}

fn check_common(input: &Tensor, grid: &Tensor, k: usize) -> Result<()> {
    let (is, gs) = (input.sizes(), grid.sizes());
    if input.dim() != k + 2 || grid.dim() != k + 2 {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected {}D input and grid with same number of dimensions, but got input with sizes {:?} and grid with sizes {:?}",
            k + 2,
            is.as_slice(),
            gs.as_slice()
        )));
    }
    if is[0] != gs[0] {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected grid and input to have same batch size, but got input with sizes {:?} and grid with sizes {:?}",
            is.as_slice(),
            gs.as_slice()
        )));
    }
    if gs[k + 1] != k as i64 {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected grid to have size {k} in last dimension, but got grid with sizes {:?}",
            gs.as_slice()
        )));
    }
    for i in 2..is.len() {
        if is[i] <= 0 {
            return Err(Error::runtime(format!(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes {:?} with dimension {i} being empty",
                is.as_slice()
            )));
        }
    }
    if !input.dtype().is_floating_point() {
        return Err(crate::cpu::dispatch::not_implemented(
            &format!("grid_sampler_{k}d_cpu"),
            input.dtype(),
        ));
    }
    if grid.dtype() != input.dtype() {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected input and grid to have the same dtype, but input has {} and grid has {}",
            input.dtype().scalar_type_name(),
            grid.dtype().scalar_type_name()
        )));
    }
    Ok(())
}

/// Runs the per-batch sampler on `T` data.
fn run_sampler<T: FloatMath + crate::Element>(
    input: &Tensor,
    grid: &Tensor,
    k: usize,
    m: Mode,
    out_shape: &[i64],
) -> Result<Vec<T>> {
    let is = input.sizes();
    let x = input.contiguous_vec::<T>()?;
    let g = grid.contiguous_vec::<T>()?;
    let n = is[0] as usize;
    let c = is[1] as usize;
    let in_item = x.len() / n.max(1);
    let pts = out_shape[2..].iter().product::<i64>() as usize;
    let mut out = vec![T::zero(); n * c * pts];
    if pts == 0 || c == 0 {
        return Ok(out);
    }
    let out_len = out.len();
    out.par_chunks_mut(c * pts)
        .enumerate()
        .with_min_len(crate::threads::min_piece_for(x.len() + out_len))
        .for_each(|(b, o)| {
            let xs = &x[b * in_item..(b + 1) * in_item];
            let gs = &g[b * pts * k..(b + 1) * pts * k];
            if k == 2 {
                sample_2d(xs, c, is[2], is[3], gs, m, o);
            } else {
                sample_3d(xs, c, is[2], is[3], is[4], gs, m, o);
            }
        });
    Ok(out)
}

/// `grid_sampler_2d` / `grid_sampler_3d`: samples `input` (`[N, C, (D,) H, W]`) at `grid`
/// (`[N, (D_out,) H_out, W_out, k]`, x first, normalized to `[-1, 1]`).
pub fn grid_sampler(
    input: &Tensor,
    grid: &Tensor,
    interp: GridInterpolation,
    pad: GridPadding,
    align_corners: bool,
) -> Result<Tensor> {
    let k = input.dim().saturating_sub(2);
    if k != 2 && k != 3 {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got input with sizes {:?} and grid with sizes {:?}",
            input.sizes().as_slice(),
            grid.sizes().as_slice()
        )));
    }
    check_common(input, grid, k)?;
    if k == 3 && interp == GridInterpolation::Bicubic {
        return Err(Error::new(
            crate::error::ErrorKind::NotImplementedError,
            "grid_sampler(): bicubic interpolation with 5D input is not implemented for cpu",
        ));
    }
    let (is, gs) = (input.sizes(), grid.sizes());
    let mut out_shape = vec![is[0], is[1]];
    out_shape.extend_from_slice(&gs[1..=k]);
    let m = Mode {
        interp,
        pad,
        align: align_corners,
    };
    let dt = input.dtype();
    if dt == DType::Float64 {
        Tensor::from_vec(
            run_sampler::<f64>(input, grid, k, m, &out_shape)?,
            &out_shape,
        )
    } else {
        Tensor::from_vec(
            run_sampler::<f32>(input, grid, k, m, &out_shape)?,
            &out_shape,
        )?
        .to_dtype(dt, false)
    }
}

/// `linspace(-1, 1, steps)`, scaled by `(steps - 1) / steps` without `align_corners`; a single
/// step is `[0]`.
fn base_coords(steps: i64, align_corners: bool) -> Vec<f64> {
    if steps <= 1 {
        return vec![0.0; steps.max(0) as usize];
    }
    let step = 2.0 / (steps - 1) as f64;
    let half = steps / 2;
    (0..steps)
        .map(|i| {
            // ATen's linspace fills from both ends for symmetry.
            let v = if i < half {
                -1.0 + step * i as f64
            } else {
                1.0 - step * (steps - 1 - i) as f64
            };
            if align_corners {
                v
            } else {
                v * (steps - 1) as f64 / steps as f64
            }
        })
        .collect()
}

/// `affine_grid_generator(theta, size, align_corners)`: the `[N, (D,) H, W, k]` sampling grid
/// of the affine maps `theta` (`[N, k, k + 1]`) over an output of `size`.
pub fn affine_grid_generator(theta: &Tensor, size: &[i64], align_corners: bool) -> Result<Tensor> {
    let k = match size.len() {
        4 => 2,
        5 => 3,
        _ => {
            return Err(Error::runtime(format!(
            "AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs, got size {size:?}"
        )))
        }
    };
    let ts = theta.sizes();
    if theta.dim() != 3 || ts[1] != k as i64 || ts[2] != k as i64 + 1 || ts[0] != size[0] {
        return Err(Error::runtime(format!(
            "Expected a batch of {k}D affine matrices of shape Nx{k}x{} for size {size:?}. Got {:?}.",
            k + 1,
            ts.as_slice()
        )));
    }
    let spatial = &size[2..];
    let axes: Vec<Vec<f64>> = spatial
        .iter()
        .map(|&s| base_coords(s, align_corners))
        .collect();
    let pts = spatial.iter().product::<i64>() as usize;
    // Homogeneous base coordinates, x (the last axis) first.
    let mut base = Vec::with_capacity(pts * (k + 1));
    for p in 0..pts {
        let mut rem = p;
        let mut idx = vec![0usize; k];
        for a in (0..k).rev() {
            let s = spatial[a] as usize;
            idx[a] = rem % s;
            rem /= s;
        }
        for a in (0..k).rev() {
            base.push(axes[a][idx[a]]);
        }
        base.push(1.0);
    }
    let dt = theta.dtype();
    let base = Tensor::from_vec(base, &[1, pts as i64, k as i64 + 1])?.to_dtype(dt, false)?;
    let n = size[0];
    let base = base.expand(&[n, pts as i64, k as i64 + 1], false)?;
    let out = base.bmm(&theta.transpose(1, 2)?)?;
    let mut shape = vec![n];
    shape.extend_from_slice(spatial);
    shape.push(k as i64);
    out.reshape(&shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_grid_reproduces_the_input() {
        let x = Tensor::from_vec((0..12).map(|v| v as f32).collect(), &[1, 1, 3, 4]).unwrap();
        let theta = Tensor::from_vec(vec![1f32, 0., 0., 0., 1., 0.], &[1, 2, 3]).unwrap();
        for align in [false, true] {
            let g = affine_grid_generator(&theta, &[1, 1, 3, 4], align).unwrap();
            for interp in [GridInterpolation::Bilinear, GridInterpolation::Nearest] {
                let y = grid_sampler(&x, &g, interp, GridPadding::Zeros, align).unwrap();
                let (a, b) = (x.to_vec::<f32>(), y.to_vec::<f32>());
                for (p, q) in a.iter().zip(&b) {
                    assert!((p - q).abs() < 1e-5, "{a:?} {b:?}");
                }
            }
        }
    }

    #[test]
    fn mismatched_shapes_are_errors() {
        let x = Tensor::zeros(&[1, 1, 3, 4], DType::Float32).unwrap();
        let g = Tensor::zeros(&[2, 3, 4, 2], DType::Float32).unwrap();
        assert!(grid_sampler(
            &x,
            &g,
            GridInterpolation::Bilinear,
            GridPadding::Zeros,
            false
        )
        .is_err());
        let g = Tensor::zeros(&[1, 3, 4, 3], DType::Float32).unwrap();
        assert!(grid_sampler(
            &x,
            &g,
            GridInterpolation::Bilinear,
            GridPadding::Zeros,
            false
        )
        .is_err());
    }
}
