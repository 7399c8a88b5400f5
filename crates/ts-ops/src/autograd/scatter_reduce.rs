//! Derivatives of the reducing scatters: `scatter_reduce` and `index_reduce` with `sum`,
//! `prod`, `mean`, `amax` and `amin` (ties share the gradient evenly, as in PyTorch).

use ts_core::IValue;
use ts_tensor::{Error, Tensor};

use super::formula::{Ctx, Table};
use super::ops::{self as o, tv};

type R = Result<Vec<Option<Tensor>>, Error>;

fn scatter_add(z: &Tensor, d: i64, idx: &Tensor, src: &Tensor) -> Result<Tensor, Error> {
    o::call1(
        "aten::scatter_add",
        vec![tv(z), IValue::Int(d), tv(idx), tv(src)],
    )
}

fn gather(x: &Tensor, d: i64, idx: &Tensor) -> Result<Tensor, Error> {
    o::call1(
        "aten::gather",
        vec![tv(x), IValue::Int(d), tv(idx), IValue::Bool(false)],
    )
}

/// Gradients of `self.scatter_reduce(d, idx, src, reduce, include_self)` with result `out`
/// (for `index_reduce`, `idx` is the index expanded to `src`'s shape).
#[allow(clippy::too_many_arguments)]
fn grads(
    x: &Tensor,
    d: i64,
    idx: &Tensor,
    src: &Tensor,
    reduce: &str,
    include_self: bool,
    out: &Tensor,
    g: &Tensor,
) -> R {
    let z = o::zeros_like(x)?;
    let ones_src = o::add_s(&o::zeros_like(src)?, 1.0)?;
    let (gs, gsrc) = match reduce {
        "sum" => {
            let gs = if include_self {
                g.clone()
            } else {
                o::mask(&o::eq(&scatter_add(&z, d, idx, &ones_src)?, &z)?, g)?
            };
            (gs, gather(g, d, idx)?)
        }
        "prod" => {
            let go = o::mul(g, out)?;
            let gs = if include_self {
                o::div(&go, x)?
            } else {
                o::mask(&o::eq(&scatter_add(&z, d, idx, &ones_src)?, &z)?, g)?
            };
            (gs, o::div(&gather(&go, d, idx)?, src)?)
        }
        "mean" => {
            let cnt = scatter_add(&z, d, idx, &ones_src)?;
            let n = if include_self {
                o::add_s(&cnt, 1.0)?
            } else {
                cnt.clone()
            };
            let n_safe = o::where_(&o::eq(&n, &z)?, &o::add_s(&z, 1.0)?, &n)?;
            let gn = o::div(g, &n_safe)?;
            let gs = if include_self {
                gn.clone()
            } else {
                o::mask(&o::eq(&cnt, &z)?, g)?
            };
            (gs, gather(&gn, d, idx)?)
        }
        "amax" | "amin" => {
            let self_hit = if include_self {
                o::to_dtype(&o::eq(x, out)?, x.dtype())?
            } else {
                // Without self, positions that receive nothing keep self (and its gradient).
                let cnt = scatter_add(&z, d, idx, &ones_src)?;
                o::to_dtype(&o::eq(&cnt, &z)?, x.dtype())?
            };
            let src_hit = o::to_dtype(&o::eq(src, &gather(out, d, idx)?)?, x.dtype())?;
            let ties = o::add(&self_hit, &scatter_add(&z, d, idx, &src_hit)?)?;
            let ties = o::where_(&o::eq(&ties, &z)?, &o::add_s(&z, 1.0)?, &ties)?;
            let gt = o::div(g, &ties)?;
            (
                o::mul(&gt, &self_hit)?,
                o::mul(&gather(&gt, d, idx)?, &src_hit)?,
            )
        }
        other => {
            return Err(Error::runtime(format!(
                "the derivative of scatter_reduce with reduce='{other}' is not implemented in tsrs"
            )))
        }
    };
    Ok(vec![Some(gs), None, Some(gsrc)])
}

fn scatter_reduce_grad(c: &Ctx, g: &[Tensor]) -> R {
    let (x, idx, src) = (c.t(0)?, c.t(2)?, c.t(3)?);
    let d = c.args.int(1)?;
    let d = if d < 0 { d + x.dim().max(1) as i64 } else { d };
    let reduce = c.args.str(4)?.to_string();
    grads(x, d, idx, src, &reduce, c.args.b(5)?, &c.out(0)?, &g[0])
}

fn index_reduce_grad(c: &Ctx, g: &[Tensor]) -> R {
    let (x, index, src) = (c.t(0)?, c.t(2)?, c.t(3)?);
    let d = c.args.int(1)?;
    let d = if d < 0 { d + x.dim().max(1) as i64 } else { d };
    let mut shape = vec![1i64; src.dim()];
    if !shape.is_empty() {
        shape[d as usize] = -1;
    }
    let idx = o::expand(&o::reshape(index, &shape)?, &src.sizes())?;
    let reduce = match c.args.str(4)? {
        "amax" => "amax",
        "amin" => "amin",
        "mean" => "mean",
        "prod" => "prod",
        other => other,
    }
    .to_string();
    grads(x, d, &idx, src, &reduce, c.args.b(5)?, &c.out(0)?, &g[0])
}

pub(super) fn register(t: &mut Table) {
    t.add("aten::scatter_reduce.two", scatter_reduce_grad);
    t.add("aten::index_reduce", index_reduce_grad);
}
