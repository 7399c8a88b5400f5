//! Derivatives of operators written here as their decomposition into recorded operators, as
//! ATen composes them: `quantile`/`nanquantile` (sort, gather, interpolate) and the CPU
//! flash-attention kernel (`softmax(Q K^T * scale) V` with its log-sum-exp) and `stft`
//! (pad, frame with `unfold`, window, real or complex FFT) and bilinear `grid_sampler_2d`
//! (four gathered corners weighted by the fractional coordinates).

use ts_core::IValue;
use ts_tensor::{DType, Error, Tensor};

use super::formula::Table;
use super::nn::via_decomposition;
use super::ops::{self as o, tv};

fn t_of(a: &[IValue], i: usize) -> Result<Tensor, Error> {
    a.get(i)
        .and_then(|v| v.as_tensor().cloned())
        .ok_or_else(|| Error::runtime("autograd: expected a tensor argument"))
}

fn gather(x: &Tensor, d: i64, idx: &Tensor) -> Result<Tensor, Error> {
    o::call1(
        "aten::gather",
        vec![tv(x), IValue::Int(d), tv(idx), IValue::Bool(false)],
    )
}

/// Fills the positions where `cond` holds with NaN.
fn nan_where(cond: &Tensor, v: &Tensor) -> Result<Tensor, Error> {
    let nan = o::add_s(&o::zeros_like(v)?, f64::NAN)?;
    o::where_(cond, &nan, v)
}

/// One quantile `q` of `x` along `d` (kept as a size-1 dimension).
fn quantile_along(
    x: &Tensor,
    sorted: &Tensor,
    d: i64,
    q: f64,
    ignore_nan: bool,
    interpolation: &str,
) -> Result<Tensor, Error> {
    let isnan = o::isnan(x)?;
    let nan_count = o::sum_dims(&o::to_dtype(&isnan, DType::Float64)?, &[d], true)?;
    let len = x.sizes()[d as usize] as f64;
    // The number of values ranked (NaNs sort last and are skipped by nanquantile).
    let valid = if ignore_nan {
        o::rsub_s(&nan_count, len)?
    } else {
        o::add_s(&o::zeros_like(&nan_count)?, len)?
    };
    let last = o::call1(
        "aten::clamp_min",
        vec![tv(&o::add_s(&valid, -1.0)?), IValue::Double(0.0)],
    )?;
    let pos = o::mul_s(&last, q)?;
    let lo = o::call1("aten::floor", vec![tv(&pos)])?;
    let hi = o::call1("aten::ceil", vec![tv(&pos)])?;
    let at =
        |p: &Tensor| -> Result<Tensor, Error> { gather(sorted, d, &o::to_dtype(p, DType::Int64)?) };
    let v = match interpolation {
        "lower" => at(&lo)?,
        "higher" => at(&hi)?,
        "nearest" => at(&o::call1("aten::round", vec![tv(&pos)])?)?,
        "midpoint" => o::mul_s(&o::add(&at(&lo)?, &at(&hi)?)?, 0.5)?,
        "linear" => {
            let (vl, vh) = (at(&lo)?, at(&hi)?);
            let w = o::to_dtype(&o::sub(&pos, &lo)?, vl.dtype())?;
            o::add(&vl, &o::mul(&o::sub(&vh, &vl)?, &w)?)?
        }
        other => {
            return Err(Error::runtime(format!(
                "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest. Got {other}"
            )))
        }
    };
    let undefined = if ignore_nan {
        o::le_s(&valid, 0.0)?
    } else {
        o::gt_s(&nan_count, 0.0)?
    };
    nan_where(&undefined, &v)
}

/// `quantile`/`nanquantile` (`q` a float or a 0-d/1-d tensor) from `sort` and `gather`.
/// The decomposition treats the quantile levels as constants: a `q` tensor that requires grad
/// is an error rather than a silently missing gradient.
fn q_needs_no_grad(c: &super::formula::Ctx) -> Result<(), Error> {
    match c.args.0.get(1) {
        Some(IValue::Tensor(q)) if q.requires_grad() => Err(Error::runtime(
            "the derivative of quantile with respect to q is not implemented in tsrs",
        )),
        _ => Ok(()),
    }
}

fn quantile_decomposed(a: &[IValue], ignore_nan: bool) -> Result<Tensor, Error> {
    let x0 = t_of(a, 0)?;
    let dim = a.get(2).and_then(|v| v.as_int());
    let keepdim = a.get(3).and_then(|v| v.as_bool()).unwrap_or(false);
    let interpolation = a
        .get(4)
        .and_then(|v| v.as_str().map(|s| s.to_string()))
        .unwrap_or_else(|| "linear".to_string());
    let (qs, q_is_vec): (Vec<f64>, bool) = match a.get(1) {
        Some(IValue::Tensor(q)) => (o::to_dtype(q, DType::Float64)?.to_vec::<f64>(), q.dim() > 0),
        Some(v) => (
            vec![v.as_scalar().map(|s| s.to_f64()).unwrap_or(0.5)],
            false,
        ),
        None => return Err(Error::runtime("quantile: missing q")),
    };
    let nd = x0.dim() as i64;
    let (x, d) = match dim {
        None => (o::reshape(&x0, &[-1])?, 0),
        Some(d) if nd == 0 => {
            let _ = d;
            (o::reshape(&x0, &[1])?, 0)
        }
        Some(d) => (x0.clone(), if d < 0 { d + nd } else { d }),
    };
    let sorted = o::call1(
        "aten::sort",
        vec![tv(&x), IValue::Int(d), IValue::Bool(false)],
    )?;
    let mut outs = Vec::new();
    for q in &qs {
        let v = quantile_along(&x, &sorted, d, *q, ignore_nan, &interpolation)?;
        // Back to the reduced shape.
        let v = match (dim, keepdim) {
            (None, true) => o::reshape(&v, &vec![1; nd as usize])?,
            (None, false) => o::reshape(&v, &[])?,
            (Some(_), _) if nd == 0 => o::reshape(&v, &[])?,
            (Some(_), true) => v,
            (Some(_), false) => o::call1("aten::squeeze.dim", vec![tv(&v), IValue::Int(d)])?,
        };
        outs.push(v);
    }
    if q_is_vec {
        o::call1(
            "aten::stack",
            vec![IValue::tensor_list(outs), IValue::Int(0)],
        )
    } else {
        outs.pop()
            .ok_or_else(|| Error::runtime("quantile: no quantile"))
    }
}

/// `_scaled_dot_product_flash_attention_for_cpu` as `softmax(Q K^T * scale + mask) V` (its
/// second output, the scores' log-sum-exp, is not differentiable).
fn flash_attention_decomposed(a: &[IValue]) -> Result<Vec<Tensor>, Error> {
    let (q, k, v) = (t_of(a, 0)?, t_of(a, 1)?, t_of(a, 2)?);
    let dropout = a
        .get(3)
        .and_then(|x| x.as_scalar())
        .map(|s| s.to_f64())
        .unwrap_or(0.0);
    if dropout > 0.0 {
        return Err(Error::runtime(
            "the derivative of scaled dot product attention with dropout is not implemented in tsrs",
        ));
    }
    let causal = a.get(4).and_then(|x| x.as_bool()).unwrap_or(false);
    let e = q.sizes()[q.dim() - 1] as f64;
    let scale = a
        .get(6)
        .and_then(|x| x.as_scalar())
        .map(|s| s.to_f64())
        .unwrap_or(1.0 / e.sqrt());
    let mut s = o::mul_s(&o::matmul(&q, &o::mt(&k)?)?, scale)?;
    if let Some(m) = a.get(5).and_then(|x| x.as_tensor()) {
        s = if m.dtype() == DType::Bool {
            let ninf = o::add_s(&o::zeros_like(&s)?, f64::NEG_INFINITY)?;
            o::where_(m, &s, &ninf)?
        } else {
            o::add(&s, m)?
        };
    }
    if causal {
        let (l, sl) = (q.sizes()[q.dim() - 2], k.sizes()[k.dim() - 2]);
        let ones = o::add_s(&o::zeros(&[l, sl], DType::Float64)?, 1.0)?;
        let keep = o::gt_s(
            &o::call1("aten::tril", vec![tv(&ones), IValue::Int(0)])?,
            0.5,
        )?;
        let ninf = o::add_s(&o::zeros_like(&s)?, f64::NEG_INFINITY)?;
        s = o::where_(&keep, &s, &ninf)?;
    }
    let lse = o::call1(
        "aten::logsumexp",
        vec![tv(&s), IValue::int_list([-1]), IValue::Bool(false)],
    )?;
    let p = o::exp(&o::sub(&s, &o::unsqueeze(&lse, -1)?)?)?;
    // Only the attention output is differentiable; PyTorch gives the log-sum-exp none.
    Ok(vec![o::matmul(&p, &v)?])
}

/// `stft` (`center` overload when `center_args`) as pad, frames, window and FFT.
fn stft_decomposed(a: &[IValue], center_args: bool) -> Result<Vec<Tensor>, Error> {
    let x0 = t_of(a, 0)?;
    let int = |i: usize| a.get(i).and_then(|v| v.as_int());
    let flag = |i: usize| a.get(i).and_then(|v| v.as_bool());
    let n_fft = int(1).ok_or_else(|| Error::runtime("stft: missing n_fft"))?;
    let hop = int(2).unwrap_or(n_fft / 4);
    let win_length = int(3).unwrap_or(n_fft);
    let window = a.get(4).and_then(|v| v.as_tensor().cloned());
    let (center, pad_mode, rest) = if center_args {
        let mode = a
            .get(6)
            .and_then(|v| v.as_str().map(|s| s.to_string()))
            .unwrap_or_else(|| "reflect".to_string());
        (flag(5).unwrap_or(true), mode, 7)
    } else {
        (false, "constant".to_string(), 5)
    };
    let normalized = flag(rest).unwrap_or(false);
    let complex_in =
        x0.dtype().is_complex() || window.as_ref().is_some_and(|w| w.dtype().is_complex());
    let onesided = flag(rest + 1).unwrap_or(!complex_in);
    let return_complex = flag(rest + 2).unwrap_or(true);
    let one_d = x0.dim() == 1;
    let mut x = if one_d {
        o::unsqueeze(&x0, 0)?
    } else {
        x0.clone()
    };
    if center {
        let p = n_fft / 2;
        x = o::call1(
            "aten::pad",
            vec![
                tv(&x),
                IValue::int_list([p, p]),
                IValue::str(pad_mode),
                IValue::None,
            ],
        )?;
    }
    let frames = o::call1(
        "aten::unfold",
        vec![
            tv(&x),
            IValue::Int(-1),
            IValue::Int(n_fft),
            IValue::Int(hop),
        ],
    )?;
    let window = match window {
        Some(w) => w,
        None => o::add_s(&o::zeros(&[win_length], x.dtype().to_real())?, 1.0)?,
    };
    let window = if win_length < n_fft {
        let left = (n_fft - win_length) / 2;
        o::call1(
            "aten::constant_pad_nd",
            vec![
                tv(&window),
                IValue::int_list([left, n_fft - win_length - left]),
                IValue::Double(0.0),
            ],
        )?
    } else {
        window
    };
    let frames = o::mul(&frames, &window)?;
    let norm = if normalized {
        IValue::str("ortho")
    } else {
        IValue::None
    };
    let op = if onesided {
        "aten::fft_rfft"
    } else {
        "aten::fft_fft"
    };
    let spec = o::call1(op, vec![tv(&frames), IValue::None, IValue::Int(-1), norm])?;
    let mut spec = o::transpose(&spec, -1, -2)?;
    if one_d {
        spec = o::call1("aten::squeeze.dim", vec![tv(&spec), IValue::Int(0)])?;
    }
    if !return_complex {
        spec = o::call1("aten::view_as_real", vec![tv(&spec)])?;
    }
    Ok(vec![spec])
}

/// Bilinear `grid_sampler_2d(input, grid, 0, padding, align_corners)` with zeros or border
/// padding: the four neighbours of each sampling point, gathered and weighted by the
/// fractional parts of its coordinates (through which the grid's gradient flows).
fn grid_sample_decomposed(a: &[IValue]) -> Result<Vec<Tensor>, Error> {
    let (input, grid) = (t_of(a, 0)?, t_of(a, 1)?);
    let mode = a.get(2).and_then(|v| v.as_int()).unwrap_or(0);
    let padding = a.get(3).and_then(|v| v.as_int()).unwrap_or(0);
    let align = a.get(4).and_then(|v| v.as_bool()).unwrap_or(false);
    if mode != 0 || padding > 1 {
        return Err(Error::runtime(format!(
            "the derivative for 'aten::grid_sampler_2d' with interpolation mode {mode} and padding mode {padding} is not implemented in tsrs"
        )));
    }
    let s = input.sizes();
    let (n, ch, h, w) = (s[0], s[1], s[2], s[3]);
    let gs = grid.sizes();
    let (ho, wo) = (gs[1], gs[2]);
    let coord = |k: i64, size: i64| -> Result<Tensor, Error> {
        let g = o::call1(
            "aten::select.int",
            vec![tv(&grid), IValue::Int(3), IValue::Int(k)],
        )?;
        let c = if align {
            o::mul_s(&o::add_s(&g, 1.0)?, (size - 1) as f64 / 2.0)?
        } else {
            o::div_s(
                &o::add_s(&o::mul_s(&o::add_s(&g, 1.0)?, size as f64)?, -1.0)?,
                2.0,
            )?
        };
        if padding == 1 {
            o::call1(
                "aten::clamp",
                vec![
                    tv(&c),
                    IValue::Double(0.0),
                    IValue::Double((size - 1) as f64),
                ],
            )
        } else {
            Ok(c)
        }
    };
    let (ix, iy) = (coord(0, w)?, coord(1, h)?);
    let (x0, y0) = (
        o::call1("aten::floor", vec![tv(&ix.detach())])?,
        o::call1("aten::floor", vec![tv(&iy.detach())])?,
    );
    let (fx, fy) = (o::sub(&ix, &x0)?, o::sub(&iy, &y0)?);
    let flat = o::reshape(&input, &[n, ch, h * w])?;
    let mut out: Option<Tensor> = None;
    for (dx, dy) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)] {
        let (xc, yc) = (o::add_s(&x0, dx)?, o::add_s(&y0, dy)?);
        let wx = if dx == 0.0 {
            o::rsub_s(&fx, 1.0)?
        } else {
            fx.clone()
        };
        let wy = if dy == 0.0 {
            o::rsub_s(&fy, 1.0)?
        } else {
            fy.clone()
        };
        let inside = |c: &Tensor, size: i64| -> Result<Tensor, Error> {
            o::call1(
                "aten::logical_and",
                vec![tv(&o::ge_s(c, 0.0)?), tv(&o::le_s(c, (size - 1) as f64)?)],
            )
        };
        let valid = o::call1(
            "aten::logical_and",
            vec![tv(&inside(&xc, w)?), tv(&inside(&yc, h)?)],
        )?;
        let clamped = |c: &Tensor, size: i64| -> Result<Tensor, Error> {
            o::call1(
                "aten::clamp",
                vec![
                    tv(c),
                    IValue::Double(0.0),
                    IValue::Double((size - 1) as f64),
                ],
            )
        };
        let idx = o::add(&o::mul_s(&clamped(&yc, h)?, w as f64)?, &clamped(&xc, w)?)?;
        let idx = o::to_dtype(&idx, DType::Int64)?;
        let idx = o::expand(&o::reshape(&idx, &[n, 1, ho * wo])?, &[n, ch, ho * wo])?;
        let vals = o::reshape(&gather(&flat, 2, &idx)?, &[n, ch, ho, wo])?;
        let wgt = o::mask(&valid, &o::mul(&wx, &wy)?)?;
        let term = o::mul(&vals, &o::unsqueeze(&wgt, 1)?)?;
        out = Some(match out {
            None => term,
            Some(acc) => o::add(&acc, &term)?,
        });
    }
    Ok(vec![out.ok_or_else(|| {
        Error::runtime("grid_sampler_2d: no corner")
    })?])
}

pub(super) fn register(t: &mut Table) {
    t.add("aten::grid_sampler_2d", |c, g| {
        via_decomposition(c, g, grid_sample_decomposed)
    });
    t.add("aten::stft", |c, g| {
        via_decomposition(c, g, |a| stft_decomposed(a, false))
    });
    t.add("aten::stft.center", |c, g| {
        via_decomposition(c, g, |a| stft_decomposed(a, true))
    });
    for name in ["aten::quantile", "aten::quantile.scalar"] {
        t.add(name, |c, g| {
            q_needs_no_grad(c)?;
            via_decomposition(c, g, |a| Ok(vec![quantile_decomposed(a, false)?]))
        });
    }
    for name in ["aten::nanquantile", "aten::nanquantile.scalar"] {
        t.add(name, |c, g| {
            q_needs_no_grad(c)?;
            via_decomposition(c, g, |a| Ok(vec![quantile_decomposed(a, true)?]))
        });
    }
    t.add(
        "aten::_scaled_dot_product_flash_attention_for_cpu",
        |c, g| via_decomposition(c, g, flash_attention_decomposed),
    );
}
