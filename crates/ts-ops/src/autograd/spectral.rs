//! Derivatives of complex views and constructors (`view_as_real`, `view_as_complex`,
//! `complex`, `polar`) and of the complex-to-complex and real-to-complex FFTs. A transform
//! `y = F x` has the gradient `F^H g`: the inverse transform with the dual normalization,
//! cropped or zero-padded back to the input's length (and, for a real input, its real part,
//! which the engine takes).

use ts_core::IValue;
use ts_tensor::{Error, Tensor};

use super::formula::{Ctx, Table};
use super::ops::{self as o, tv};

type R = Result<Vec<Option<Tensor>>, Error>;

fn one(t: Tensor) -> R {
    Ok(vec![Some(t)])
}

fn dual(norm: Option<&str>) -> IValue {
    match norm {
        Some("forward") => IValue::str("backward"),
        Some("ortho") => IValue::str("ortho"),
        _ => IValue::str("forward"),
    }
}

fn wrap(d: i64, n: usize) -> i64 {
    if d < 0 {
        d + n as i64
    } else {
        d
    }
}

/// `g` cropped or zero-padded along `d` to length `len`.
fn fit(g: &Tensor, d: i64, len: i64) -> Result<Tensor, Error> {
    let cur = g.sizes()[d as usize];
    if cur == len {
        return Ok(g.clone());
    }
    if cur > len {
        return o::call1(
            "aten::narrow",
            vec![tv(g), IValue::Int(d), IValue::Int(0), IValue::Int(len)],
        );
    }
    let mut zs: Vec<i64> = g.sizes().to_vec();
    zs[d as usize] = len - cur;
    let z = Tensor::zeros(&zs, g.dtype())?;
    o::call1(
        "aten::cat",
        vec![IValue::tensor_list([g.clone(), z]), IValue::Int(d)],
    )
}

/// The transformed dimensions and their output lengths of an n-dimensional FFT call
/// (`s`, `dim` as in `torch.fft.fftn`).
fn nd_dims(x: &Tensor, s: Option<Vec<i64>>, dim: Option<Vec<i64>>) -> (Vec<i64>, Vec<i64>) {
    let nd = x.dim();
    let dims: Vec<i64> = match (&dim, &s) {
        (Some(d), _) => d.iter().map(|&k| wrap(k, nd)).collect(),
        (None, Some(s)) => ((nd - s.len()) as i64..nd as i64).collect(),
        (None, None) => (0..nd as i64).collect(),
    };
    let lens: Vec<i64> = match s {
        Some(s) => dims
            .iter()
            .zip(s)
            .map(|(&d, l)| if l < 0 { x.sizes()[d as usize] } else { l })
            .collect(),
        None => dims.iter().map(|&d| x.sizes()[d as usize]).collect(),
    };
    (dims, lens)
}

fn c2c_grad(c: &Ctx, g: &[Tensor], inverse_op: &str, one_dim: bool) -> R {
    let x = c.t(0)?;
    let (dims, norm) = if one_dim {
        let d = wrap(c.args.int(2)?, x.dim());
        (vec![d], c.args.ostr(3)?)
    } else {
        let (dims, _) = nd_dims(x, c.args.oints(1)?, c.args.oints(2)?);
        (dims, c.args.ostr(3)?)
    };
    let mut r = o::call1(
        inverse_op,
        vec![
            tv(&g[0]),
            IValue::None,
            IValue::int_list(dims.clone()),
            dual(norm),
        ],
    )?;
    for &d in &dims {
        r = fit(&r, d, x.sizes()[d as usize])?;
    }
    one(r)
}

fn r2c_grad(c: &Ctx, g: &[Tensor], one_dim: bool) -> R {
    let x = c.t(0)?;
    let (dims, lens, norm) = if one_dim {
        let d = wrap(c.args.int(2)?, x.dim());
        let n = c.args.oint(1)?.unwrap_or(x.sizes()[d as usize]);
        (vec![d], vec![n], c.args.ostr(3)?)
    } else {
        let (dims, lens) = nd_dims(x, c.args.oints(1)?, c.args.oints(2)?);
        (dims, lens, c.args.ostr(3)?)
    };
    half_spectrum_back(x, &g[0], &dims, &lens, dual(norm))
}

/// The gradient of a real-to-half-spectrum transform over `dims` (signal lengths `lens`): the
/// half spectrum `g` padded to the full last length, inverse-transformed with normalization
/// `norm`, its real part fitted back to `x`'s sizes.
fn half_spectrum_back(x: &Tensor, g: &Tensor, dims: &[i64], lens: &[i64], norm: IValue) -> R {
    let last = *dims.last().unwrap_or(&0);
    let full = fit(g, last, *lens.last().unwrap_or(&1))?;
    let mut r = o::call1(
        "aten::fft_ifftn",
        vec![
            tv(&full),
            IValue::None,
            IValue::int_list(dims.to_vec()),
            norm,
        ],
    )?;
    r = o::real(&r)?;
    for &d in dims {
        r = fit(&r, d, x.sizes()[d as usize])?;
    }
    one(r)
}

pub(super) fn register(t: &mut Table) {
    t.linear("aten::view_as_real", |_, g| {
        let gc = o::call1("aten::contiguous", vec![tv(&g[0]), IValue::Int(0)])?;
        one(o::call1("aten::view_as_complex", vec![tv(&gc)])?)
    });
    t.linear("aten::view_as_complex", |_, g| {
        one(o::call1("aten::view_as_real", vec![tv(&g[0])])?)
    });
    t.linear("aten::real", |_, g| one(g[0].clone()));
    t.linear("aten::complex", |c, g| {
        let (re, im) = (c.t(0)?, c.t(1)?);
        let gr = o::real(&g[0])?;
        let gi = o::call1("aten::imag", vec![tv(&g[0])])?;
        Ok(vec![
            Some(o::sum_to(&gr, &re.sizes())?),
            Some(o::sum_to(&gi, &im.sizes())?),
        ])
    });
    t.add("aten::polar", |c, g| {
        let (r, th) = (c.t(0)?, c.t(1)?);
        let ones = o::add_s(&o::zeros_like(r)?, 1.0)?;
        let e = o::call1("aten::polar", vec![tv(&ones), tv(th)])?;
        let z = o::call1("aten::polar", vec![tv(r), tv(th)])?;
        let gr = o::real(&o::mul(&g[0], &o::conj(&e)?)?)?;
        let gt = o::call1("aten::imag", vec![tv(&o::mul(&g[0], &o::conj(&z)?)?)])?;
        Ok(vec![
            Some(o::sum_to(&gr, &r.sizes())?),
            Some(o::sum_to(&gt, &th.sizes())?),
        ])
    });
    t.linear("aten::fft_fft", |c, g| {
        c2c_grad(c, g, "aten::fft_ifftn", true)
    });
    t.linear("aten::fft_ifft", |c, g| {
        c2c_grad(c, g, "aten::fft_fftn", true)
    });
    for name in ["aten::fft_fftn", "aten::fft_fft2"] {
        t.linear(name, |c, g| c2c_grad(c, g, "aten::fft_ifftn", false));
    }
    for name in ["aten::fft_ifftn", "aten::fft_ifft2"] {
        t.linear(name, |c, g| c2c_grad(c, g, "aten::fft_fftn", false));
    }
    t.linear("aten::fft_rfft", |c, g| r2c_grad(c, g, true));
    for name in ["aten::fft_rfftn", "aten::fft_rfft2"] {
        t.linear(name, |c, g| r2c_grad(c, g, false));
    }
}

/// Complex-to-real transforms (`irfft`, `irfftn`, `hfft`, ...): the one-sided forward
/// transform of `g` with the dual normalization, the mirrored entries doubled.
fn c2r_grad(c: &Ctx, g: &[Tensor], one_dim: bool, conj_input: bool) -> R {
    let x = c.t(0)?;
    let (dims, norm) = if one_dim {
        (vec![wrap(c.args.int(2)?, x.dim())], c.args.ostr(3)?)
    } else {
        let (dims, _) = nd_dims(x, c.args.oints(1)?, c.args.oints(2)?);
        (dims, c.args.ostr(3)?)
    };
    // hfft(x) is irfft(conj(x)) with the dual normalization.
    let norm = if conj_input {
        match norm {
            Some("forward") => None,
            Some("ortho") => Some("ortho"),
            _ => Some("forward"),
        }
    } else {
        norm
    };
    let last = *dims.last().unwrap_or(&0);
    let gi = o::call1(
        "aten::fft_rfftn",
        vec![
            tv(&g[0]),
            IValue::None,
            IValue::int_list(dims.clone()),
            dual(norm),
        ],
    )?;
    let full = g[0].sizes()[last as usize];
    let half = gi.sizes()[last as usize];
    let double = full - half;
    let gi = if double > 0 {
        let mut m = vec![1.0f64; half as usize];
        for v in m.iter_mut().skip(1).take(double as usize) {
            *v = 2.0;
        }
        let mut shape = vec![1i64; gi.dim()];
        shape[last as usize] = half;
        let m = Tensor::from_vec(m, &shape)?;
        o::mul(&gi, &m)?
    } else {
        gi
    };
    let mut r = gi;
    for &d in &dims {
        r = fit(&r, d, x.sizes()[d as usize])?;
    }
    if conj_input {
        r = o::conj(&r)?;
    }
    one(r)
}

/// `ihfft(x) = conj(rfft(x))` with the dual normalization.
fn ihfft_grad(c: &Ctx, g: &[Tensor], one_dim: bool) -> R {
    let x = c.t(0)?;
    let (dims, lens, norm) = if one_dim {
        let d = wrap(c.args.int(2)?, x.dim());
        let n = c.args.oint(1)?.unwrap_or(x.sizes()[d as usize]);
        (vec![d], vec![n], c.args.ostr(3)?)
    } else {
        let (dims, lens) = nd_dims(x, c.args.oints(1)?, c.args.oints(2)?);
        (dims, lens, c.args.ostr(3)?)
    };
    let rnorm = match norm {
        Some("forward") => None,
        Some("ortho") => Some("ortho"),
        _ => Some("forward"),
    };
    half_spectrum_back(x, &o::conj(&g[0])?, &dims, &lens, dual(rnorm))
}

/// Registers the complex-to-real and Hermitian transforms.
pub(super) fn register_c2r(t: &mut Table) {
    t.linear("aten::fft_irfft", |c, g| c2r_grad(c, g, true, false));
    for name in ["aten::fft_irfftn", "aten::fft_irfft2"] {
        t.linear(name, |c, g| c2r_grad(c, g, false, false));
    }
    t.linear("aten::fft_hfft", |c, g| c2r_grad(c, g, true, true));
    for name in ["aten::fft_hfftn", "aten::fft_hfft2"] {
        t.linear(name, |c, g| c2r_grad(c, g, false, true));
    }
    t.linear("aten::fft_ihfft", |c, g| ihfft_grad(c, g, true));
    for name in ["aten::fft_ihfftn", "aten::fft_ihfft2"] {
        t.linear(name, |c, g| ihfft_grad(c, g, false));
    }
}
