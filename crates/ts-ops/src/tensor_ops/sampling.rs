//! Resampling operators: `upsample_*` (nearest, nearest-exact, linear, bicubic, antialiased;
//! explicit and `.vec` overloads), `grid_sampler*`, `affine_grid_generator`, `im2col`/`col2im`
//! and the non-constant paddings (`reflection_pad*`, `replication_pad*`, `_pad_circular`,
//! `_pad_enum`, `pad`), bound to ts-tensor's kernels.

use ts_core::IValue;
use ts_tensor::{Error, GridInterpolation, GridPadding, PadMode, Scalar, Tensor, UpsampleMode};

use super::{def, Args};
use crate::registry::Registry;

type R<T> = Result<T, Error>;

/// An optional `float[]` argument.
fn ofloats(a: &Args, i: usize) -> R<Option<Vec<f64>>> {
    match a.v(i)? {
        IValue::None => Ok(None),
        _ => a.floats(i).map(Some),
    }
}

/// The explicit-size overloads: `(self, output_size, [align_corners,] scales...)`.
fn upsample(a: &Args, mode: UpsampleMode, k: usize, align: bool) -> R<Tensor> {
    let size = a.ints(1)?;
    let (ac, first) = if align { (a.b(2)?, 3) } else { (false, 2) };
    let scales = (0..k).map(|j| a.of(first + j)).collect::<R<Vec<_>>>()?;
    a.t(0)?.upsample(mode, &size, ac, &scales)
}

/// The `.vec` overloads: `(input, output_size?, [align_corners,] scale_factors?)`.
fn upsample_vec(a: &Args, mode: UpsampleMode, k: usize, align: bool) -> R<Tensor> {
    let x = a.t(0)?;
    let size = a.oints(1)?;
    let (ac, si) = if align { (a.b(2)?, 3) } else { (false, 2) };
    let factors = ofloats(a, si)?;
    let (size, scales) = ts_tensor::upsample_vec_sizes(x, k, size.as_deref(), factors.as_deref())?;
    x.upsample(mode, &size, ac, &scales)
}

/// `F.pad`/`aten::pad` with a mode: constant padding or one of the gathering modes, with
/// ATen's restriction of the non-constant modes to 1-3 padded dims of a batched or unbatched
/// input.
fn pad(x: &Tensor, p: &[i64], mode: &str, value: Option<f64>) -> R<Tensor> {
    if mode == "constant" {
        return super::nn::constant_pad(x, p, Scalar::Float(value.unwrap_or(0.0)));
    }
    let Some(m) = PadMode::parse(mode) else {
        return Err(Error::runtime(format!("Unrecognised padding mode {mode}")));
    };
    if value.is_some_and(|v| v != 0.0) {
        return Err(Error::runtime(format!(
            "Padding mode \"{}\" doesn't take in value argument",
            m.name()
        )));
    }
    let k = p.len() / 2;
    let nd = x.dim();
    if !p.len().is_multiple_of(2) || !(1..=3).contains(&k) || (nd != k + 1 && nd != k + 2) {
        return Err(Error::new(
            ts_tensor::ErrorKind::NotImplementedError,
            "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now",
        ));
    }
    x.pad_mode(p, m)
}

/// Registers the resampling operators.
pub fn register(r: &Registry) {
    use UpsampleMode::*;
    let families: [(&str, UpsampleMode, usize, bool); 13] = [
        ("upsample_nearest1d", Nearest, 1, false),
        ("upsample_nearest2d", Nearest, 2, false),
        ("upsample_nearest3d", Nearest, 3, false),
        ("_upsample_nearest_exact1d", NearestExact, 1, false),
        ("_upsample_nearest_exact2d", NearestExact, 2, false),
        ("_upsample_nearest_exact3d", NearestExact, 3, false),
        ("upsample_linear1d", Linear, 1, true),
        ("upsample_bilinear2d", Linear, 2, true),
        ("upsample_trilinear3d", Linear, 3, true),
        ("upsample_bicubic2d", Cubic, 2, true),
        ("_upsample_bilinear2d_aa", LinearAntialias, 2, true),
        ("_upsample_bicubic2d_aa", CubicAntialias, 2, true),
        ("_upsample_lanczos2d_aa", LanczosAntialias, 2, true),
    ];
    for (name, mode, k, align) in families {
        def(r, &format!("aten::{name}"), move |a| {
            upsample(a, mode, k, align)
        });
        def(r, &format!("aten::{name}.vec"), move |a| {
            upsample_vec(a, mode, k, align)
        });
    }
    let sampler = |a: &Args| -> R<Tensor> {
        ts_tensor::grid_sampler(
            a.t(0)?,
            a.t(1)?,
            GridInterpolation::from_code(a.int(2)?)?,
            GridPadding::from_code(a.int(3)?)?,
            a.b(4)?,
        )
    };
    def(r, "aten::grid_sampler", sampler);
    def(r, "aten::grid_sampler_2d", move |a| {
        if a.t(0)?.dim() != 4 {
            return Err(Error::runtime(format!(
                "grid_sampler(): expected 4D input and grid with same number of dimensions, but got input with sizes {:?} and grid with sizes {:?}",
                a.t(0)?.sizes().as_slice(),
                a.t(1)?.sizes().as_slice()
            )));
        }
        sampler(a)
    });
    def(r, "aten::_grid_sampler_2d_cpu_fallback", sampler);
    def(r, "aten::grid_sampler_3d", move |a| {
        if a.t(0)?.dim() != 5 {
            return Err(Error::runtime(format!(
                "grid_sampler(): expected 5D input and grid with same number of dimensions, but got input with sizes {:?} and grid with sizes {:?}",
                a.t(0)?.sizes().as_slice(),
                a.t(1)?.sizes().as_slice()
            )));
        }
        sampler(a)
    });
    def(r, "aten::affine_grid_generator", |a| {
        ts_tensor::affine_grid_generator(a.t(0)?, &a.ints(1)?, a.b(2)?)
    });
    def(r, "aten::im2col", |a| {
        a.t(0)?
            .im2col(&a.ints(1)?, &a.ints(2)?, &a.ints(3)?, &a.ints(4)?)
    });
    def(r, "aten::col2im", |a| {
        a.t(0)?.col2im(
            &a.ints(1)?,
            &a.ints(2)?,
            &a.ints(3)?,
            &a.ints(4)?,
            &a.ints(5)?,
        )
    });
    for (name, mode) in [
        ("reflection_pad", PadMode::Reflect),
        ("replication_pad", PadMode::Replicate),
    ] {
        for k in 1..=3usize {
            def(r, &format!("aten::{name}{k}d"), move |a| {
                let p = a.ints(1)?;
                if p.len() != 2 * k {
                    return Err(Error::runtime(format!(
                        "padding size is expected to be {}, but got: {}",
                        2 * k,
                        p.len()
                    )));
                }
                a.t(0)?.pad_mode(&p, mode)
            });
        }
    }
    def(r, "aten::_pad_circular", |a| {
        a.t(0)?.pad_mode(&a.ints(1)?, PadMode::Circular)
    });
    def(r, "aten::_pad_enum", |a| {
        let mode = match a.int(2)? {
            0 => "constant",
            1 => "reflect",
            2 => "replicate",
            3 => "circular",
            m => return Err(Error::runtime(format!("Unrecognised padding mode {m}"))),
        };
        pad(a.t(0)?, &a.ints(1)?, mode, a.of(3)?)
    });
    def(r, "aten::pad", |a| {
        pad(a.t(0)?, &a.ints(1)?, a.str(2)?, a.of(3)?)
    });
}
