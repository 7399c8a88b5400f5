//! The legacy interpolation builtins old archives call (`aten::__interpolate`,
//! `__upsample`, `__upsample_nearest`, `__upsample_bilinear`): `F.interpolate`'s size and
//! scale resolution, dispatched to the `upsample_*` / `adaptive_avg_pool*` kernels, and
//! `torch.gradient` (second-order accurate central differences, as NumPy's `gradient`).

use ts_core::IValue;
use ts_tensor::{Error, Scalar, Tensor};

use super::{def, Args};
use crate::autograd::ops::call1;
use crate::registry::Registry;

/// An optional int or int list argument, repeated to `dims` entries.
fn sizes_arg(a: &Args, i: usize, dims: usize) -> Result<Option<Vec<i64>>, Error> {
    Ok(match a.v(i)? {
        IValue::None => None,
        IValue::Int(n) => Some(vec![*n; dims]),
        _ => Some(a.ints(i)?),
    })
}

/// An optional float (or int) or float list argument, repeated to `dims` entries.
fn scales_arg(a: &Args, i: usize, dims: usize) -> Result<Option<Vec<f64>>, Error> {
    Ok(match a.v(i)? {
        IValue::None => None,
        IValue::Int(n) => Some(vec![*n as f64; dims]),
        IValue::Double(x) => Some(vec![*x; dims]),
        _ => Some(a.floats(i)?),
    })
}

fn opt_list<T: Copy>(
    v: &Option<Vec<T>>,
    f: impl Fn(T) -> IValue,
    elem: ts_core::TypeRef,
) -> IValue {
    match v {
        None => IValue::None,
        Some(xs) => IValue::list(elem, xs.iter().map(|&x| f(x)).collect()),
    }
}

/// `F.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
/// antialias)`.
#[allow(clippy::too_many_arguments)]
fn interpolate(
    input: &Tensor,
    size: Option<Vec<i64>>,
    scale: Option<Vec<f64>>,
    mode: &str,
    align_corners: Option<bool>,
    recompute: Option<bool>,
    antialias: bool,
) -> Result<Tensor, Error> {
    let nd = input.dim();
    if !(3..=5).contains(&nd) {
        return Err(Error::runtime(format!(
            "Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got {mode})"
        )));
    }
    let dims = nd - 2;
    if size.is_some() == scale.is_some() {
        return Err(Error::runtime(if size.is_some() {
            "only one of size or scale_factor should be defined"
        } else {
            "either size or scale_factor should be defined"
        }));
    }
    for v in [size.as_ref().map(Vec::len), scale.as_ref().map(Vec::len)]
        .into_iter()
        .flatten()
    {
        if v != dims {
            return Err(Error::runtime(format!(
                "Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of {:?} and output size of {v} entries. Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.",
                &input.sizes()[2..]
            )));
        }
    }
    let interpolating = matches!(mode, "linear" | "bilinear" | "bicubic" | "trilinear");
    if align_corners.is_some() && !interpolating {
        return Err(Error::runtime(
            "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear",
        ));
    }
    let align = align_corners.unwrap_or(false);
    let spatial: Vec<i64> = input.sizes()[2..].to_vec();
    let (size, scale) = match (size, scale) {
        (None, Some(s)) if recompute == Some(true) || mode == "area" => (
            Some(
                spatial
                    .iter()
                    .zip(&s)
                    .map(|(&i, &f)| (i as f64 * f).floor() as i64)
                    .collect(),
            ),
            None,
        ),
        other => other,
    };
    let size_v = opt_list(&size, IValue::Int, ts_core::Type::int());
    let scale_v = opt_list(&scale, IValue::Double, ts_core::Type::float());
    let x = IValue::Tensor(input.clone());
    let wrong_mode = || {
        Error::runtime(format!(
            "Got {nd}D input, but {mode} mode needs {}D input",
            match mode {
                "linear" => 3,
                "bilinear" | "bicubic" => 4,
                _ => 5,
            }
        ))
    };
    match mode {
        "nearest" => call1(&format!("aten::upsample_nearest{dims}d.vec"), vec![x, size_v, scale_v]),
        "nearest-exact" => call1(
            &format!("aten::_upsample_nearest_exact{dims}d.vec"),
            vec![x, size_v, scale_v],
        ),
        "area" => call1(&format!("aten::adaptive_avg_pool{dims}d"), vec![x, size_v]),
        "linear" | "bilinear" | "trilinear" | "bicubic" => {
            let (name, need) = match mode {
                "linear" => ("upsample_linear1d", 1),
                "bilinear" if antialias => ("_upsample_bilinear2d_aa", 2),
                "bilinear" => ("upsample_bilinear2d", 2),
                "bicubic" if antialias => ("_upsample_bicubic2d_aa", 2),
                "bicubic" => ("upsample_bicubic2d", 2),
                _ => ("upsample_trilinear3d", 3),
            };
            if dims != need {
                return Err(wrong_mode());
            }
            call1(
                &format!("aten::{name}.vec"),
                vec![x, size_v, IValue::Bool(align), scale_v],
            )
        }
        m => Err(Error::runtime(format!(
            "Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got {m})"
        ))),
    }
}

/// The legacy entry points' shared call: `(input, size, scale_factor, ...)` with the size and
/// scale at positions 1 and 2, the rest fixed by the entry point.
fn legacy(
    a: &Args,
    mode: &str,
    align_corners: Option<bool>,
    recompute: Option<bool>,
    antialias: bool,
) -> Result<Tensor, Error> {
    let x = a.t(0)?;
    let dims = x.dim().saturating_sub(2);
    interpolate(
        x,
        sizes_arg(a, 1, dims)?,
        scales_arg(a, 2, dims)?,
        mode,
        align_corners,
        recompute,
        antialias,
    )
}

fn register_interpolate(r: &Registry) {
    for name in [
        "aten::__interpolate",
        "aten::__interpolate.size_list",
        "aten::__interpolate.scale_list",
        "aten::__interpolate.size_list_scale_list",
    ] {
        def(r, name, |a| {
            legacy(a, a.str(3)?, a.ob(4)?, a.ob(5)?, a.b(6)?)
        });
    }
    for name in ["aten::__upsample", "aten::__upsample.size_list"] {
        def(r, name, |a| legacy(a, a.str(3)?, a.ob(4)?, None, false));
    }
    for name in [
        "aten::__upsample_nearest",
        "aten::__upsample_nearest.size_list",
    ] {
        def(r, name, |a| legacy(a, "nearest", None, None, false));
    }
    for name in [
        "aten::__upsample_bilinear",
        "aten::__upsample_bilinear.size_list",
        "aten::__upsample_bilinear.scale_list",
        "aten::__upsample_bilinear.size_list_scale_list",
    ] {
        // nn.UpsamplingBilinear2d: align_corners=True.
        def(r, name, |a| legacy(a, "bilinear", Some(true), None, false));
    }
}

/// How the sample positions along one dimension are given.
enum Spacing {
    Uniform(f64),
    Coordinates(Vec<f64>),
}

/// The derivative of `f` along `dim` (NumPy's `gradient`: central differences inside, one-
/// or two-sided differences of `edge_order` at the ends).
fn gradient_along(
    f: &Tensor,
    dim: i64,
    spacing: &Spacing,
    edge_order: i64,
) -> Result<Tensor, Error> {
    let nd = f.dim() as i64;
    let d = if dim < 0 { dim + nd } else { dim };
    if d < 0 || d >= nd {
        return Err(Error::new(
            ts_tensor::ErrorKind::IndexError,
            format!(
                "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
                -nd,
                nd - 1
            ),
        ));
    }
    let n = f.sizes()[d as usize];
    if n < edge_order + 1 {
        return Err(Error::runtime(
            "torch.gradient expected each dimension size to be at least edge_order+1",
        ));
    }
    let f = if f.dtype().is_floating_point() || f.dtype().is_complex() {
        f.clone()
    } else {
        f.to_dtype(ts_tensor::default_dtype(), false)?
    };
    let at = |i: i64| f.narrow(d, i, 1);
    let coords: Vec<f64> = match spacing {
        Spacing::Uniform(h) => (0..n).map(|i| i as f64 * h).collect(),
        Spacing::Coordinates(c) => {
            if c.len() as i64 != n {
                return Err(Error::runtime(format!(
                    "torch.gradient expected each tensor to be on the same device and of size {n}, got {}",
                    c.len()
                )));
            }
            c.clone()
        }
    };
    let s = |x: f64| Scalar::Float(x);
    let mut parts = Vec::with_capacity(n as usize);
    // Three-point combination a*f[i0] + b*f[i1] + c*f[i2].
    let comb = |i: [i64; 3], w: [f64; 3]| -> Result<Tensor, Error> {
        at(i[0])?
            .mul_scalar(s(w[0]))?
            .add(&at(i[1])?, s(w[1]))?
            .add(&at(i[2])?, s(w[2]))
    };
    // First point.
    if edge_order == 1 {
        let h = coords[1] - coords[0];
        parts.push(at(1)?.sub(&at(0)?, Scalar::Int(1))?.div_scalar(s(h))?);
    } else {
        let (h1, h2) = (coords[1] - coords[0], coords[2] - coords[1]);
        let a = -(2.0 * h1 + h2) / (h1 * (h1 + h2));
        let b = (h1 + h2) / (h1 * h2);
        let c = -h1 / (h2 * (h1 + h2));
        parts.push(comb([0, 1, 2], [a, b, c])?);
    }
    for i in 1..n - 1 {
        let (hl, hr) = (
            coords[i as usize] - coords[i as usize - 1],
            coords[i as usize + 1] - coords[i as usize],
        );
        let a = -hr / (hl * (hl + hr));
        let b = (hr - hl) / (hl * hr);
        let c = hl / (hr * (hl + hr));
        parts.push(comb([i - 1, i, i + 1], [a, b, c])?);
    }
    let k = n as usize - 1;
    if edge_order == 1 {
        let h = coords[k] - coords[k - 1];
        parts.push(
            at(n - 1)?
                .sub(&at(n - 2)?, Scalar::Int(1))?
                .div_scalar(s(h))?,
        );
    } else {
        let (h1, h2) = (coords[k - 1] - coords[k - 2], coords[k] - coords[k - 1]);
        let a = h2 / (h1 * (h1 + h2));
        let b = -(h2 + h1) / (h1 * h2);
        let c = (2.0 * h2 + h1) / (h2 * (h1 + h2));
        parts.push(comb([n - 3, n - 2, n - 1], [a, b, c])?);
    }
    call1(
        "aten::cat",
        vec![IValue::tensor_list(parts), IValue::Int(d)],
    )
}

fn gradient(
    f: &Tensor,
    spacing: Vec<Spacing>,
    dims: Vec<i64>,
    edge_order: i64,
) -> Result<Vec<Tensor>, Error> {
    if !(1..=2).contains(&edge_order) {
        return Err(Error::runtime(
            "torch.gradient only supports edge_order=1 and edge_order=2.",
        ));
    }
    if spacing.len() != dims.len() {
        return Err(Error::runtime(format!(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to have the same length, but got a spacing argument of length {} and a dim argument of length {}.",
            spacing.len(),
            dims.len()
        )));
    }
    dims.iter()
        .zip(&spacing)
        .map(|(&d, s)| gradient_along(f, d, s, edge_order))
        .collect()
}

fn all_dims(f: &Tensor) -> Vec<i64> {
    (0..f.dim() as i64).collect()
}

fn register_gradient(r: &Registry) {
    // gradient.scalarint(self, *, Scalar? spacing=None, int? dim=None, int edge_order=1)
    def(r, "aten::gradient.scalarint", |a| {
        let f = a.t(0)?;
        let h = a.os(1)?.map_or(1.0, |s| s.to_f64());
        let dims = a.oint(2)?.map_or_else(|| all_dims(f), |d| vec![d]);
        gradient(
            f,
            dims.iter().map(|_| Spacing::Uniform(h)).collect(),
            dims,
            a.int(3)?,
        )
    });
    def(r, "aten::gradient.scalararray", |a| {
        let f = a.t(0)?;
        let h = a.s(1)?.to_f64();
        let dims = a.ints(2)?;
        gradient(
            f,
            dims.iter().map(|_| Spacing::Uniform(h)).collect(),
            dims,
            a.int(3)?,
        )
    });
    def(r, "aten::gradient.array", |a| {
        let f = a.t(0)?;
        let dims = a.ints(1)?;
        gradient(
            f,
            dims.iter().map(|_| Spacing::Uniform(1.0)).collect(),
            dims,
            a.int(2)?,
        )
    });
    def(r, "aten::gradient.scalarrayint", |a| {
        let f = a.t(0)?;
        let hs = a.floats(1)?;
        let dims = a.oint(2)?.map_or_else(|| all_dims(f), |d| vec![d]);
        gradient(
            f,
            hs.into_iter().map(Spacing::Uniform).collect(),
            dims,
            a.int(3)?,
        )
    });
    def(r, "aten::gradient.scalarrayarray", |a| {
        let hs = a.floats(1)?;
        gradient(
            a.t(0)?,
            hs.into_iter().map(Spacing::Uniform).collect(),
            a.ints(2)?,
            a.int(3)?,
        )
    });
    let coords = |a: &Args, i: usize| -> Result<Vec<Spacing>, Error> {
        a.tensors(i)?
            .iter()
            .map(|t| {
                if t.dim() == 0 {
                    Ok(Spacing::Uniform(t.item()?.to_f64()))
                } else {
                    Ok(Spacing::Coordinates(t.to_vec::<f64>()))
                }
            })
            .collect()
    };
    def(r, "aten::gradient.tensorarrayint", move |a| {
        let f = a.t(0)?;
        let dims = a.oint(2)?.map_or_else(|| all_dims(f), |d| vec![d]);
        gradient(f, coords(a, 1)?, dims, a.int(3)?)
    });
    def(r, "aten::gradient.tensorarray", move |a| {
        gradient(a.t(0)?, coords(a, 1)?, a.ints(2)?, a.int(3)?)
    });
}

/// Registers the operators of this module.
pub fn register(r: &Registry) {
    register_interpolate(r);
    register_gradient(r);
}
