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

/// `segment_reduce(data, reduce, lengths|offsets, axis)` over 1-d lengths: each element's
/// gradient is its segment's (`sum`), divided by the segment's length (`mean`), shared evenly
/// by the elements equal to the result (`max`, `min`: none when `initial` won), or the
/// product of the others (`prod`, inputs without zeros).
fn segment_reduce_grad(c: &Ctx, g: &[Tensor]) -> R {
    let x = c.t(0)?;
    let reduce = c.args.str(1)?.to_string();
    let axis = c.args.int(5)?;
    let axis = if axis < 0 {
        axis + x.dim() as i64
    } else {
        axis
    };
    let lengths: Vec<i64> = match (c.args.ot(2)?, c.args.ot(4)?) {
        (Some(l), _) if l.dim() == 1 => o::to_dtype(l, ts_tensor::DType::Int64)?.to_vec::<i64>(),
        (None, Some(off)) if off.dim() == 1 => {
            let off = o::to_dtype(off, ts_tensor::DType::Int64)?.to_vec::<i64>();
            off.windows(2).map(|w| w[1] - w[0]).collect()
        }
        _ => {
            return Err(Error::runtime(
                "the derivative for 'aten::segment_reduce' over batched lengths or offsets is not implemented in tsrs",
            ))
        }
    };
    let mut ids = Vec::new();
    for (s, &n) in lengths.iter().enumerate() {
        ids.extend(std::iter::repeat_n(s as i64, n.max(0) as usize));
    }
    if ids.len() as i64 != x.sizes()[axis as usize] {
        return Err(Error::runtime(
            "segment_reduce backward: the segment lengths do not cover the data",
        ));
    }
    let n_ids = ids.len() as i64;
    let ids = Tensor::from_vec(ids, &[n_ids])?;
    let per_elem = |t: &Tensor| -> Result<Tensor, Error> {
        o::call1(
            "aten::index_select",
            vec![tv(t), IValue::Int(axis), tv(&ids)],
        )
    };
    let ge = per_elem(&g[0])?;
    let gx = match reduce.as_str() {
        "sum" => ge,
        "mean" => {
            let lens: Vec<f64> = lengths.iter().map(|&n| n.max(1) as f64).collect();
            let nl = lens.len() as i64;
            let lens = o::to_dtype(&Tensor::from_vec(lens, &[nl])?, ge.dtype())?;
            let mut shape = vec![1i64; x.dim()];
            shape[axis as usize] = n_ids;
            let le = o::reshape(
                &o::call1("aten::index_select", vec![tv(&lens), IValue::Int(0), tv(&ids)])?,
                &shape,
            )?;
            o::div(&ge, &le)?
        }
        "max" | "min" => {
            let out = c.out(0)?;
            let hit = o::eq(x, &per_elem(&out)?)?;
            let hitf = o::to_dtype(&hit, ge.dtype())?;
            let mut count_shape = out.sizes().to_vec();
            count_shape[axis as usize] = lengths.len() as i64;
            let z = o::zeros(&count_shape, ge.dtype())?;
            let counts = o::call1(
                "aten::index_add",
                vec![tv(&z), IValue::Int(axis), tv(&ids), tv(&hitf), IValue::Double(1.0)],
            )?;
            let ce = per_elem(&o::call1("aten::clamp_min", vec![tv(&counts), IValue::Double(1.0)])?)?;
            o::mask(&hit, &o::div(&ge, &ce)?)?
        }
        "prod" => {
            let out = c.out(0)?;
            o::div(&o::mul(&ge, &per_elem(&out)?)?, x)?
        }
        other => {
            return Err(Error::runtime(format!(
                "the derivative for 'aten::segment_reduce' with reduce='{other}' is not implemented in tsrs"
            )))
        }
    };
    Ok(vec![Some(gx)])
}

pub(super) fn register(t: &mut Table) {
    t.add("aten::segment_reduce", segment_reduce_grad);
    t.add("aten::scatter_reduce.two", scatter_reduce_grad);
    t.add("aten::index_reduce", index_reduce_grad);
}
