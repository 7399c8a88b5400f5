//! Derivatives of reductions: sums and means, products, extrema (by value and by index),
//! norms, variance and standard deviation, log-sum-exp, cumulative ops.

use ts_core::IValue;
use ts_tensor::{Error, Tensor};

use super::formula::{Ctx, Table};
use super::ops as o;

type R = Result<Vec<Option<Tensor>>, Error>;

fn one(t: Tensor) -> R {
    Ok(vec![Some(t)])
}

/// The reduced dimensions, wrapped and sorted; `None` or `[]` means all of them.
fn dims_of(v: Option<Vec<i64>>, ndim: usize) -> Vec<i64> {
    match v {
        Some(d) if !d.is_empty() => {
            let n = ndim.max(1) as i64;
            let mut d: Vec<i64> = d.iter().map(|&x| if x < 0 { x + n } else { x }).collect();
            d.sort_unstable();
            d.dedup();
            d
        }
        _ => (0..ndim as i64).collect(),
    }
}

/// `g` of a reduction over `dims` brought back to `x`'s shape (unsqueezed, then expanded).
fn unreduce(g: &Tensor, x: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor, Error> {
    let mut g = g.clone();
    if !keepdim && x.dim() > 0 {
        for &d in dims {
            g = o::unsqueeze(&g, d)?;
        }
    }
    o::expand(&g, &x.sizes())
}

/// Same as [`unreduce`] without expanding (for multiplying with a full-size tensor).
fn keep(g: &Tensor, x: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor, Error> {
    let mut g = g.clone();
    if !keepdim && x.dim() > 0 {
        for &d in dims {
            g = o::unsqueeze(&g, d)?;
        }
    }
    Ok(g)
}

fn count(x: &Tensor, dims: &[i64]) -> f64 {
    let s = x.sizes();
    if x.dim() == 0 {
        return 1.0;
    }
    dims.iter().map(|&d| s[d as usize] as f64).product()
}

fn cast_like(g: Tensor, x: &Tensor) -> Result<Tensor, Error> {
    if g.dtype() != x.dtype() && (!g.dtype().is_complex() || x.dtype().is_complex()) {
        o::to_dtype(&g, x.dtype())
    } else {
        Ok(g)
    }
}

pub(super) fn register(t: &mut Table) {
    t.linear("aten::sum", |c, g| {
        let x = c.t(0)?;
        one(cast_like(o::expand(&g[0], &x.sizes())?, x)?)
    });
    t.linear("aten::sum.dim_IntList", |c, g| {
        let x = c.t(0)?;
        let dims = dims_of(c.args.oints(1)?, x.dim());
        one(cast_like(unreduce(&g[0], x, &dims, c.args.b(2)?)?, x)?)
    });
    t.add("aten::nansum", |c, g| {
        let x = c.t(0)?;
        let dims = dims_of(c.args.oints(1)?, x.dim());
        let e = unreduce(&g[0], x, &dims, c.args.b(2)?)?;
        one(o::mask(&o::logical_not(&o::isnan(x)?)?, &e)?)
    });
    t.linear("aten::mean", |c, g| {
        let x = c.t(0)?;
        let n = x.numel() as f64;
        one(o::div_s(&o::expand(&g[0], &x.sizes())?, n)?)
    });
    t.linear("aten::mean.dim", |c, g| {
        let x = c.t(0)?;
        let dims = dims_of(c.args.oints(1)?, x.dim());
        let n = count(x, &dims);
        one(o::div_s(&unreduce(&g[0], x, &dims, c.args.b(2)?)?, n)?)
    });
    t.add("aten::prod", |c, g| {
        let x = c.t(0)?;
        let flat = o::reshape(x, &[-1])?;
        let gi = prod_grad_1d(&flat, &o::reshape(&g[0], &[1])?)?;
        one(o::reshape(&gi, &x.sizes())?)
    });
    t.add("aten::prod.dim_int", |c, g| {
        let x = c.t(0)?;
        if x.dim() == 0 {
            return one(g[0].clone());
        }
        let d = dims_of(Some(vec![c.args.int(1)?]), x.dim())[0];
        let gk = keep(&g[0], x, &[d], c.args.b(2)?)?;
        // Move `d` last, flatten the rest, and use the 1-D rule row by row.
        let last = x.dim() as i64 - 1;
        let xt = o::transpose(x, d, last)?;
        let gt = o::transpose(&gk, d, last)?;
        let rows = prod_grad_rows(&xt, &gt)?;
        one(o::transpose(&rows, d, last)?)
    });
    for name in ["aten::amax", "aten::amin"] {
        t.add(name, |c, g| {
            let x = c.t(0)?;
            let dims = dims_of(c.args.oints(1)?, x.dim());
            let kd = c.args.b(2)?;
            let out = keep(&c.out(0)?, x, &dims, kd)?;
            let hit = o::eq(x, &out)?;
            let hitf = o::to_dtype(&hit, x.dtype())?;
            let cnt = o::sum_dims(&hitf, &dims, true)?;
            let gk = keep(&g[0], x, &dims, kd)?;
            one(o::mul(&o::div(&gk, &cnt)?, &hitf)?)
        });
    }
    for name in ["aten::max", "aten::min", "aten::median", "aten::nanmedian"] {
        t.add(name, |c, g| {
            let x = c.t(0)?;
            let out = c.out(0)?;
            let hit = o::eq(x, &out)?;
            let hitf = o::to_dtype(&hit, x.dtype())?;
            let cnt = o::sum(&hitf)?;
            one(o::mul(&o::div(&g[0], &cnt)?, &hitf)?)
        });
    }
    for name in [
        "aten::max.dim",
        "aten::min.dim",
        "aten::median.dim",
        "aten::nanmedian.dim",
        "aten::mode",
        "aten::kthvalue",
    ] {
        t.linear(name, |c, g| {
            let x = c.t(0)?;
            let (di, ki) = if c.args.0.len() == 4 { (2, 3) } else { (1, 2) };
            let d = dims_of(Some(vec![c.args.int(di)?]), x.dim())[0];
            let kd = c.args.b(ki)?;
            let idx = keep(&c.out(1)?, x, &[d], kd)?;
            let gk = keep(&g[0], x, &[d], kd)?;
            one(scatter(x, d, &idx, &gk)?)
        });
    }
    for name in ["aten::sort", "aten::topk", "aten::sort.stable"] {
        t.linear(name, |c, g| {
            let x = c.t(0)?;
            let d = match c.args.0.len() {
                5 => c.args.int(2)?,
                4 => c.args.int(2)?,
                _ => c.args.int(1)?,
            };
            let d = dims_of(Some(vec![d]), x.dim())[0];
            one(scatter(x, d, &c.out(1)?, &g[0])?)
        });
    }
    for name in ["aten::cummax", "aten::cummin"] {
        t.linear(name, |c, g| {
            let x = c.t(0)?;
            let d = dims_of(Some(vec![c.args.int(1)?]), x.dim())[0];
            let z = o::zeros_like(x)?;
            one(o::call1(
                "aten::scatter_add",
                vec![o::tv(&z), IValue::Int(d), o::tv(&c.out(1)?), o::tv(&g[0])],
            )?)
        });
    }
    t.linear("aten::cumsum", |c, g| {
        let x = c.t(0)?;
        let d = c.args.int(1)?;
        let r = rev_cumsum(&g[0], d)?;
        one(cast_like(r, x)?)
    });
    t.add("aten::cumprod", |c, g| {
        let x = c.t(0)?;
        let d = c.args.int(1)?;
        // For inputs without zeros: rev_cumsum(g * out) / x; zeros use the product rule.
        let out = c.out_diff(0, || c.rerun(0))?;
        let r = o::div(&rev_cumsum(&o::mul(&g[0], &out)?, d)?, x)?;
        let nz = o::ne(x, &o::zeros_like(x)?)?;
        let all_nz = o::call1("aten::all", vec![o::tv(&nz)])?;
        if all_nz.to_vec::<bool>()[0] {
            return one(r);
        }
        one(cumprod_grad_slow(x, &g[0], d)?)
    });
    t.add("aten::logsumexp", |c, g| {
        let x = c.t(0)?;
        let dims = dims_of(c.args.oints(1)?, x.dim());
        let kd = c.args.b(2)?;
        let out = keep(&c.out_diff(0, || c.rerun(0))?, x, &dims, kd)?;
        let gk = keep(&g[0], x, &dims, kd)?;
        one(o::mul(&gk, &o::exp(&o::sub(x, &out)?)?)?)
    });
    t.add("aten::var", |c, g| {
        let x = c.t(0)?;
        let corr = if c.args.b(1)? { 1.0 } else { 0.0 };
        var_std(x, g, &dims_of(None, x.dim()), corr, false, None)
    });
    t.add("aten::var.dim", |c, g| {
        let x = c.t(0)?;
        let corr = if c.args.b(2)? { 1.0 } else { 0.0 };
        var_std(
            x,
            g,
            &dims_of(c.args.oints(1)?, x.dim()),
            corr,
            c.args.b(3)?,
            None,
        )
    });
    t.add("aten::var.correction", |c, g| {
        let x = c.t(0)?;
        let corr = c.args.os(2)?.map(|s| s.to_f64()).unwrap_or(1.0);
        var_std(
            x,
            g,
            &dims_of(c.args.oints(1)?, x.dim()),
            corr,
            c.args.b(3)?,
            None,
        )
    });
    t.add("aten::std", |c, g| {
        let x = c.t(0)?;
        let corr = if c.args.b(1)? { 1.0 } else { 0.0 };
        var_std(
            x,
            g,
            &dims_of(None, x.dim()),
            corr,
            false,
            Some(c.out_diff(0, || c.rerun(0))?),
        )
    });
    t.add("aten::std.dim", |c, g| {
        let x = c.t(0)?;
        let corr = if c.args.b(2)? { 1.0 } else { 0.0 };
        let kd = c.args.b(3)?;
        var_std(
            x,
            g,
            &dims_of(c.args.oints(1)?, x.dim()),
            corr,
            kd,
            Some(c.out_diff(0, || c.rerun(0))?),
        )
    });
    t.add("aten::std.correction", |c, g| {
        let x = c.t(0)?;
        let corr = c.args.os(2)?.map(|s| s.to_f64()).unwrap_or(1.0);
        let kd = c.args.b(3)?;
        var_std(
            x,
            g,
            &dims_of(c.args.oints(1)?, x.dim()),
            corr,
            kd,
            Some(c.out_diff(0, || c.rerun(0))?),
        )
    });
    t.add("aten::var_mean.correction", |c, g| {
        moments_mean(c, g, false)
    });
    t.add("aten::std_mean.correction", |c, g| moments_mean(c, g, true));
    t.add("aten::var_mean", |c, g| {
        moments_mean_unbiased(c, g, false, false)
    });
    t.add("aten::std_mean", |c, g| {
        moments_mean_unbiased(c, g, true, false)
    });
    t.add("aten::var_mean.dim", |c, g| {
        moments_mean_unbiased(c, g, false, true)
    });
    t.add("aten::std_mean.dim", |c, g| {
        moments_mean_unbiased(c, g, true, true)
    });
    t.add("aten::msort", |c, g| {
        let x = c.t(0)?;
        let r = o::call(
            "aten::sort",
            vec![o::tv(&x.detach()), IValue::Int(0), IValue::Bool(false)],
        )?;
        let idx = r[1]
            .as_tensor()
            .cloned()
            .ok_or_else(|| Error::runtime("sort"))?;
        one(scatter(x, 0, &idx, &g[0])?)
    });
    t.add("aten::linalg_vector_norm", |c, g| {
        let x = c.t(0)?;
        let p = c.args.s(1)?.to_f64();
        let dims = dims_of(c.args.oints(2)?, x.dim());
        let kd = c.args.b(3)?;
        norm_grad(x, &g[0], &c.out_diff(0, || c.rerun(0))?, p, &dims, kd)
    });
    t.add("aten::norm.Scalar", |c, g| {
        let x = c.t(0)?;
        let p = c.args.s(1)?.to_f64();
        let dims = dims_of(None, x.dim());
        norm_grad(x, &g[0], &c.out_diff(0, || c.rerun(0))?, p, &dims, false)
    });
    t.add("aten::norm.ScalarOpt_dim", |c, g| {
        let x = c.t(0)?;
        let p = c.args.os(1)?.map(|s| s.to_f64()).unwrap_or(2.0);
        let dims = dims_of(Some(c.args.ints(2)?), x.dim());
        norm_grad(
            x,
            &g[0],
            &c.out_diff(0, || c.rerun(0))?,
            p,
            &dims,
            c.args.b(3)?,
        )
    });
    t.add("aten::dist", |c, g| {
        let (a, b) = (c.t(0)?, c.t(1)?);
        let p = c.args.s(2)?.to_f64();
        let diff = o::sub(a, b)?;
        let dims = dims_of(None, diff.dim());
        let gd = norm_grad(&diff, &g[0], &c.out(0)?, p, &dims, false)?[0]
            .clone()
            .unwrap();
        Ok(vec![
            Some(o::sum_to(&gd, &a.sizes())?),
            Some(o::sum_to(&o::neg(&gd)?, &b.sizes())?),
        ])
    });
}

/// `var_mean`/`std_mean` with `unbiased` (whole tensor, or `dim` overloads).
fn moments_mean_unbiased(c: &Ctx, g: &[Tensor], is_std: bool, with_dim: bool) -> R {
    let x = c.t(0)?;
    let (dims, corr, kd) = if with_dim {
        (
            dims_of(c.args.oints(1)?, x.dim()),
            if c.args.b(2)? { 1.0 } else { 0.0 },
            c.args.b(3)?,
        )
    } else {
        (
            dims_of(None, x.dim()),
            if c.args.b(1)? { 1.0 } else { 0.0 },
            false,
        )
    };
    let sd = if is_std { Some(c.out(0)?) } else { None };
    let g0 = var_std(x, &g[..1], &dims, corr, kd, sd)?
        .pop()
        .flatten()
        .ok_or_else(|| Error::runtime("autograd: var/std gradient missing"))?;
    let n = count(x, &dims);
    let g1 = o::div_s(&unreduce(&g[1], x, &dims, kd)?, n)?;
    one(o::add(&g0, &g1)?)
}

/// `var_mean`/`std_mean` (correction overloads): both results' gradients.
fn moments_mean(c: &Ctx, g: &[Tensor], is_std: bool) -> R {
    let x = c.t(0)?;
    let dims = dims_of(c.args.oints(1)?, x.dim());
    let corr = c.args.os(2)?.map(|s| s.to_f64()).unwrap_or(1.0);
    let kd = c.args.b(3)?;
    let sd = if is_std {
        Some(c.out_diff(0, || c.rerun(0))?)
    } else {
        None
    };
    let g0 = var_std(x, &g[..1], &dims, corr, kd, sd)?
        .pop()
        .flatten()
        .ok_or_else(|| Error::runtime("autograd: var/std gradient missing"))?;
    let n = count(x, &dims);
    let g1 = o::div_s(&unreduce(&g[1], x, &dims, kd)?, n)?;
    one(o::add(&g0, &g1)?)
}

/// `zeros_like(x).scatter(d, idx, g)`.
fn scatter(x: &Tensor, d: i64, idx: &Tensor, g: &Tensor) -> Result<Tensor, Error> {
    let z = o::zeros_like(x)?;
    if x.dim() == 0 {
        return Ok(g.clone());
    }
    o::call1(
        "aten::scatter.src",
        vec![o::tv(&z), IValue::Int(d), o::tv(idx), o::tv(g)],
    )
}

/// Reverse cumulative sum along `d`.
fn rev_cumsum(g: &Tensor, d: i64) -> Result<Tensor, Error> {
    if g.dim() == 0 {
        return Ok(g.clone());
    }
    let f = o::call1("aten::flip", vec![o::tv(g), IValue::int_list([d])])?;
    let c = o::call1(
        "aten::cumsum",
        vec![o::tv(&f), IValue::Int(d), IValue::None],
    )?;
    o::call1("aten::flip", vec![o::tv(&c), IValue::int_list([d])])
}

/// cumprod's gradient by the definition (handles zeros): for each k, sum_{j>=k} g_j *
/// prod_{i<=j, i!=k} x_i.
fn cumprod_grad_slow(x: &Tensor, g: &Tensor, d: i64) -> Result<Tensor, Error> {
    let n = if x.dim() == 0 {
        1
    } else {
        x.sizes()[dims_of(Some(vec![d]), x.dim())[0] as usize]
    };
    let mut parts = Vec::new();
    for k in 0..n {
        // x with position k replaced by 1, cumulative product, masked to j >= k.
        let idx = o::call1(
            "aten::arange",
            vec![
                IValue::Int(n),
                IValue::None,
                IValue::None,
                IValue::None,
                IValue::None,
            ],
        )?;
        let is_k = o::call1("aten::eq.Scalar", vec![o::tv(&idx), IValue::Int(k)])?;
        let mut shape = vec![1i64; x.dim()];
        let dd = dims_of(Some(vec![d]), x.dim())[0] as usize;
        shape[dd] = n;
        let is_k = o::reshape(&is_k, &shape)?;
        let ones = o::add_s(&o::zeros_like(x)?, 1.0)?;
        let xk = o::where_(&is_k, &ones, x)?;
        let cp = o::call1(
            "aten::cumprod",
            vec![o::tv(&xk), IValue::Int(d), IValue::None],
        )?;
        let ge = o::call1("aten::ge.Scalar", vec![o::tv(&idx), IValue::Int(k)])?;
        let ge = o::reshape(&ge, &shape)?;
        let term = o::mask(&ge, &o::mul(&cp, g)?)?;
        parts.push(o::sum_dims(&term, &[dd as i64], true)?);
    }
    o::call1(
        "aten::cat",
        vec![IValue::tensor_list(parts), IValue::Int(dd_of(x, d))],
    )
}

fn dd_of(x: &Tensor, d: i64) -> i64 {
    dims_of(Some(vec![d]), x.dim())[0]
}

/// prod's gradient over a 1-D tensor `x` with scalar gradient `g` (zeros handled).
fn prod_grad_1d(x: &Tensor, g: &Tensor) -> Result<Tensor, Error> {
    let xr = o::reshape(x, &[1, -1])?;
    let gr = o::reshape(g, &[1, 1])?;
    let r = prod_grad_rows(&xr, &gr)?;
    o::reshape(&r, &[-1])
}

/// prod's gradient along the last dimension: the product of the other elements, times g.
fn prod_grad_rows(x: &Tensor, g: &Tensor) -> Result<Tensor, Error> {
    let last = x.dim() as i64 - 1;
    if x.dim() == 0 {
        return Ok(g.clone());
    }
    let n = x.sizes()[last as usize];
    if n == 0 {
        return o::zeros_like(x);
    }
    // exclusive products from the left and from the right
    let ones_shape: Vec<i64> = {
        let mut s: Vec<i64> = x.sizes().to_vec();
        s[last as usize] = 1;
        s
    };
    let one = o::add_s(&o::zeros(&ones_shape, x.dtype())?, 1.0)?;
    let left = if n > 1 {
        let head = o::call1(
            "aten::narrow",
            vec![
                o::tv(x),
                IValue::Int(last),
                IValue::Int(0),
                IValue::Int(n - 1),
            ],
        )?;
        let cp = o::call1(
            "aten::cumprod",
            vec![o::tv(&head), IValue::Int(last), IValue::None],
        )?;
        o::call1(
            "aten::cat",
            vec![IValue::tensor_list([one.clone(), cp]), IValue::Int(last)],
        )?
    } else {
        one.clone()
    };
    let flipped = o::call1("aten::flip", vec![o::tv(x), IValue::int_list([last])])?;
    let right = if n > 1 {
        let head = o::call1(
            "aten::narrow",
            vec![
                o::tv(&flipped),
                IValue::Int(last),
                IValue::Int(0),
                IValue::Int(n - 1),
            ],
        )?;
        let cp = o::call1(
            "aten::cumprod",
            vec![o::tv(&head), IValue::Int(last), IValue::None],
        )?;
        let r = o::call1(
            "aten::cat",
            vec![IValue::tensor_list([one, cp]), IValue::Int(last)],
        )?;
        o::call1("aten::flip", vec![o::tv(&r), IValue::int_list([last])])?
    } else {
        one
    };
    o::mul(&o::mul(&left, &right)?, g)
}

/// var (sd = None) or std (sd = the result) gradient.
fn var_std(
    x: &Tensor,
    g: &[Tensor],
    dims: &[i64],
    corr: f64,
    keepdim: bool,
    sd: Option<Tensor>,
) -> R {
    let n = count(x, dims);
    let mean = o::sum_dims(x, dims, true)?;
    let mean = o::div_s(&mean, n)?;
    let centered = o::sub(x, &mean)?;
    let gk = keep(&g[0], x, dims, keepdim)?;
    let denom = (n - corr).max(0.0);
    let r = match sd {
        None => o::mul(&gk, &o::mul_s(&centered, 2.0 / denom)?)?,
        Some(sd) => {
            let sdk = keep(&sd, x, dims, keepdim)?;
            o::div(&o::mul(&gk, &o::div_s(&centered, denom)?)?, &sdk)?
        }
    };
    one(r)
}

/// Gradient of a p-norm over `dims` with result `out`.
fn norm_grad(x: &Tensor, g: &Tensor, out: &Tensor, p: f64, dims: &[i64], kd: bool) -> R {
    if p == 0.0 {
        // The 0-"norm" counts non-zeros: PyTorch gives no gradient at all (undefined, which
        // `autograd.grad` reports as None), not a zero one.
        return Ok(vec![None]);
    }
    let gk = keep(g, x, dims, kd)?;
    let nk = keep(out, x, dims, kd)?;
    let xa = o::abs(x)?;
    let sgn = o::sgn(x)?;
    let r = if p == 0.0 {
        o::zeros_like(x)?
    } else if p == 1.0 {
        o::mul(&sgn, &gk)?
    } else if p == 2.0 {
        let q = o::div(x, &nk)?;
        let q = o::mask(&o::ne(&nk, &o::zeros_like(&nk)?)?, &q)?;
        o::mul(&q, &gk)?
    } else if p.is_infinite() {
        let hit = o::to_dtype(&o::eq(&xa, &nk)?, x.dtype())?;
        let cnt = o::sum_dims(&hit, dims, true)?;
        o::mul(&o::mul(&sgn, &o::div(&hit, &cnt)?)?, &gk)?
    } else {
        // sgn(x) |x|^(p-1) / n^(p-1)
        let num = o::mul(&sgn, &o::pow_s(&xa, p - 1.0)?)?;
        let den = o::pow_s(&nk, p - 1.0)?;
        let q = o::div(&num, &den)?;
        let q = o::mask(&o::ne(&nk, &o::zeros_like(&nk)?)?, &q)?;
        o::mul(&q, &gk)?
    };
    one(r)
}
