//! Derivatives of views and shape operators: reshapes, expands, permutations, slicing and
//! indexing, joining and splitting, gathers and scatters, padding, dtype conversions.

use ts_core::IValue;
use ts_tensor::{Error, Tensor};

use super::formula::{Ctx, Table};
use super::ops::{self as o, tv};

type R = Result<Vec<Option<Tensor>>, Error>;

fn one(t: Tensor) -> R {
    Ok(vec![Some(t)])
}

fn wrap(d: i64, n: usize) -> i64 {
    let n = n.max(1) as i64;
    if d < 0 {
        d + n
    } else {
        d
    }
}

fn zeros_of(x: &Tensor, g: &Tensor) -> Result<Tensor, Error> {
    o::zeros(&x.sizes(), g.dtype())
}

/// The gradient of a list result: one per element (zero-filled by the engine), joined along
/// `dim` (`cat`) or stacked (`stack`).
fn join(g: &[Tensor], dim: i64, stack: bool) -> Result<Tensor, Error> {
    o::call1(
        if stack { "aten::stack" } else { "aten::cat" },
        vec![IValue::tensor_list(g.to_vec()), IValue::Int(dim)],
    )
}

/// The gradient of a view that `scatter_op` undoes: `g` written into zeros shaped like
/// `self`, with the view's own arguments (1 to `n_args`) passed on.
fn scatter_back(c: &Ctx, g: &Tensor, scatter_op: &str, n_args: usize) -> R {
    let x = c.t(0)?;
    let mut args = vec![tv(&zeros_of(x, g)?), tv(g)];
    args.extend(c.args.0[1..=n_args].iter().cloned());
    one(o::call1(scatter_op, args)?)
}

pub(super) fn register(t: &mut Table) {
    // Reshapes: the gradient takes the input's shape back.
    for name in [
        "aten::view",
        "aten::reshape",
        "aten::_unsafe_view",
        "aten::view_as",
        "aten::reshape_as",
        "aten::flatten.using_ints",
        "aten::unflatten.int",
        "aten::squeeze",
        "aten::squeeze.dim",
        "aten::squeeze.dims",
        "aten::squeeze_copy",
        "aten::squeeze_copy.dim",
        "aten::squeeze_copy.dims",
        "aten::unsqueeze",
        "aten::unsqueeze_copy",
        "aten::view_copy",
        "aten::ravel",
        "aten::atleast_1d",
        "aten::atleast_2d",
        "aten::atleast_3d",
    ] {
        t.linear(name, |c, g| one(o::reshape(&g[0], &c.t(0)?.sizes())?));
    }
    for name in [
        "aten::to.dtype",
        "aten::to.device",
        "aten::to.other",
        "aten::to.dtype_layout",
        "aten::to.prim_Device",
        "aten::to.prim_dtype",
        "aten::to.prim_other",
        "aten::type_as",
        "aten::_to_copy",
        "aten::lift_fresh",
        "aten::contiguous",
    ] {
        // The engine casts the gradient back to the input's dtype.
        t.linear(name, |_, g| {
            let mut v = vec![Some(g[0].clone())];
            v.push(None);
            Ok(v)
        });
    }
    for name in [
        "aten::expand",
        "aten::expand_as",
        "aten::broadcast_to",
        "aten::expand_copy",
    ] {
        t.linear(name, |c, g| one(o::sum_to(&g[0], &c.t(0)?.sizes())?));
    }
    t.linear("aten::broadcast_tensors", |c, g| {
        let xs = c.args.tensors(0)?;
        xs.iter()
            .zip(g)
            .map(|(x, g)| o::sum_to(g, &x.sizes()).map(Some))
            .collect()
    });
    for name in ["aten::permute", "aten::permute_copy"] {
        t.linear(name, |c, g| {
            let x = c.t(0)?;
            let dims = c.args.ints(1)?;
            let n = x.dim();
            let mut inv = vec![0i64; n];
            for (i, &d) in dims.iter().enumerate() {
                inv[wrap(d, n) as usize] = i as i64;
            }
            one(o::permute(&g[0], &inv)?)
        });
    }
    for name in [
        "aten::transpose.int",
        "aten::swapaxes",
        "aten::swapdims",
        "aten::transpose_copy.int",
    ] {
        t.linear(name, |c, g| {
            one(o::transpose(&g[0], c.args.int(1)?, c.args.int(2)?)?)
        });
    }
    for name in ["aten::t", "aten::t_copy"] {
        t.linear(name, |c, g| {
            if c.t(0)?.dim() < 2 {
                return one(g[0].clone());
            }
            one(o::t(&g[0])?)
        });
    }
    t.linear("aten::mT", |_, g| one(o::mt(&g[0])?));
    t.linear("aten::mH", |_, g| one(o::mh(&g[0])?));
    t.linear("aten::adjoint", |_, g| one(o::mh(&g[0])?));
    t.linear("aten::numpy_T", |c, g| {
        let n = c.t(0)?.dim() as i64;
        let rev: Vec<i64> = (0..n).rev().collect();
        one(o::permute(&g[0], &rev)?)
    });
    t.linear("aten::movedim.int", |c, g| {
        one(o::call1(
            "aten::movedim.int",
            vec![
                tv(&g[0]),
                IValue::Int(c.args.int(2)?),
                IValue::Int(c.args.int(1)?),
            ],
        )?)
    });
    t.linear("aten::movedim.intlist", |c, g| {
        one(o::call1(
            "aten::movedim.intlist",
            vec![tv(&g[0]), c.args.0[2].clone(), c.args.0[1].clone()],
        )?)
    });
    t.linear("aten::moveaxis.intlist", |c, g| {
        one(o::call1(
            "aten::movedim.intlist",
            vec![tv(&g[0]), c.args.0[2].clone(), c.args.0[1].clone()],
        )?)
    });

    // Slicing and indexing.
    for name in ["aten::select.int", "aten::select_copy.int"] {
        t.linear(name, |c, g| {
            scatter_back(c, &g[0], "aten::select_scatter", 2)
        });
    }
    for name in ["aten::slice.Tensor", "aten::slice_copy.Tensor"] {
        t.linear(name, |c, g| {
            scatter_back(c, &g[0], "aten::slice_scatter", 4)
        });
    }
    for name in ["aten::narrow", "aten::narrow_copy"] {
        t.linear(name, |c, g| {
            let x = c.t(0)?;
            let d = wrap(c.args.int(1)?, x.dim());
            let mut s = c.args.int(2)?;
            if s < 0 {
                s += x.sizes()[d as usize];
            }
            let len = c.args.int(3)?;
            one(o::call1(
                "aten::slice_scatter",
                vec![
                    tv(&zeros_of(x, &g[0])?),
                    tv(&g[0]),
                    IValue::Int(d),
                    IValue::Int(s),
                    IValue::Int(s + len),
                    IValue::Int(1),
                ],
            )?)
        });
    }
    for name in [
        "aten::diagonal",
        "aten::diagonal_copy",
        "aten::linalg_diagonal",
    ] {
        t.linear(name, |c, g| {
            let x = c.t(0)?;
            one(o::call1(
                "aten::diagonal_scatter",
                vec![
                    tv(&zeros_of(x, &g[0])?),
                    tv(&g[0]),
                    c.args.0[1].clone(),
                    c.args.0[2].clone(),
                    c.args.0[3].clone(),
                ],
            )?)
        });
    }
    t.linear("aten::diag_embed", |c, g| {
        one(o::call1(
            "aten::diagonal",
            vec![
                tv(&g[0]),
                c.args.0[1].clone(),
                c.args.0[2].clone(),
                c.args.0[3].clone(),
            ],
        )?)
    });
    t.linear("aten::diag", |c, g| {
        let x = c.t(0)?;
        let k = c.args.int(1)?;
        if x.dim() == 1 {
            one(o::call1(
                "aten::diagonal",
                vec![tv(&g[0]), IValue::Int(k), IValue::Int(0), IValue::Int(1)],
            )?)
        } else {
            one(o::call1(
                "aten::diagonal_scatter",
                vec![
                    tv(&zeros_of(x, &g[0])?),
                    tv(&g[0]),
                    IValue::Int(k),
                    IValue::Int(0),
                    IValue::Int(1),
                ],
            )?)
        }
    });
    t.linear("aten::tril", |c, g| {
        one(o::call1(
            "aten::tril",
            vec![tv(&g[0]), c.args.0[1].clone()],
        )?)
    });
    t.linear("aten::triu", |c, g| {
        one(o::call1(
            "aten::triu",
            vec![tv(&g[0]), c.args.0[1].clone()],
        )?)
    });
    for name in ["aten::index.Tensor", "aten::index.Tensor_hacked_twin"] {
        t.linear(name, |c, g| {
            let x = c.t(0)?;
            let z = zeros_of(x, &g[0])?;
            one(o::call1(
                "aten::index_put",
                vec![tv(&z), c.args.0[1].clone(), tv(&g[0]), IValue::Bool(true)],
            )?)
        });
    }
    for name in ["aten::index_put", "aten::index_put.hacked_twin"] {
        t.linear(name, |c, g| {
            let v = c.t(2)?;
            let acc = c.args.b(3)?;
            let gself = if acc {
                g[0].clone()
            } else {
                o::call1(
                    "aten::index_put",
                    vec![
                        tv(&g[0]),
                        c.args.0[1].clone(),
                        tv(&o::zeros(&[], g[0].dtype())?),
                        IValue::Bool(false),
                    ],
                )?
            };
            let gv = o::call1("aten::index.Tensor", vec![tv(&g[0]), c.args.0[1].clone()])?;
            let n_idx = c.args.0[1].list_items().map(|v| v.len()).unwrap_or(0);
            let mut r = vec![Some(gself)];
            r.extend(std::iter::repeat_n(None, n_idx));
            r.push(Some(o::sum_to(&gv, &v.sizes())?));
            Ok(r)
        });
    }
    t.linear("aten::index_select", |c, g| {
        let x = c.t(0)?;
        let z = zeros_of(x, &g[0])?;
        if x.dim() == 0 {
            return one(o::reshape(&o::sum(&g[0])?, &[])?);
        }
        one(o::call1(
            "aten::index_add",
            vec![
                tv(&z),
                c.args.0[1].clone(),
                c.args.0[2].clone(),
                tv(&g[0]),
                IValue::Int(1),
            ],
        )?)
    });
    t.linear("aten::gather", |c, g| {
        let x = c.t(0)?;
        let z = zeros_of(x, &g[0])?;
        one(o::call1(
            "aten::scatter_add",
            vec![tv(&z), c.args.0[1].clone(), c.args.0[2].clone(), tv(&g[0])],
        )?)
    });
    t.linear("aten::take_along_dim", |c, g| {
        let x = c.t(0)?;
        let idx = c.t(1)?;
        match c.args.oint(2)? {
            None => {
                let z = o::zeros(&[x.numel() as i64], g[0].dtype())?;
                let r = o::call1(
                    "aten::index_add",
                    vec![
                        tv(&z),
                        IValue::Int(0),
                        tv(&o::reshape(idx, &[-1])?),
                        tv(&o::reshape(&g[0], &[-1])?),
                        IValue::Int(1),
                    ],
                )?;
                one(o::reshape(&r, &x.sizes())?)
            }
            Some(d) => {
                // Broadcast x and the indices against each other (except along d), as the op does.
                let d = wrap(d, x.dim());
                let mut xs: Vec<i64> = x.sizes().to_vec();
                let is: Vec<i64> = idx.sizes().to_vec();
                for (k, s) in xs.iter_mut().enumerate() {
                    if k as i64 != d {
                        *s = (*s).max(is[k]);
                    }
                }
                let mut ish = xs.clone();
                ish[d as usize] = is[d as usize];
                let idx_b = o::expand(idx, &ish)?;
                let z = o::zeros(&xs, g[0].dtype())?;
                let r = o::call1(
                    "aten::scatter_add",
                    vec![tv(&z), IValue::Int(d), tv(&idx_b), tv(&g[0])],
                )?;
                one(o::sum_to(&r, &x.sizes())?)
            }
        }
    });
    t.linear("aten::take", |c, g| {
        let x = c.t(0)?;
        let z = o::zeros(&[x.numel() as i64], g[0].dtype())?;
        let r = o::call1(
            "aten::put",
            vec![
                tv(&o::reshape(&z, &x.sizes())?),
                c.args.0[1].clone(),
                tv(&g[0]),
                IValue::Bool(true),
            ],
        )?;
        one(r)
    });
    t.linear("aten::masked_select", |c, g| {
        let (x, m) = (c.t(0)?, c.t(1)?);
        let shape = broadcast_shape(&x.sizes(), &m.sizes());
        let z = o::zeros(&shape, g[0].dtype())?;
        let mb = o::expand(m, &shape)?;
        let r = o::call1("aten::masked_scatter", vec![tv(&z), tv(&mb), tv(&g[0])])?;
        Ok(vec![Some(o::sum_to(&r, &x.sizes())?), None])
    });
    t.linear("aten::masked_fill.Scalar", |c, g| {
        let m = c.t(1)?;
        let z = o::zeros_like(&g[0])?;
        Ok(vec![Some(o::where_(m, &z, &g[0])?), None])
    });
    t.linear("aten::masked_fill.Tensor", |c, g| {
        let m = c.t(1)?;
        let z = o::zeros_like(&g[0])?;
        let gv = o::sum(&o::where_(m, &g[0], &z)?)?;
        Ok(vec![Some(o::where_(m, &z, &g[0])?), None, Some(gv)])
    });
    t.linear("aten::masked_scatter", |c, g| {
        let (m, src) = (c.t(1)?, c.t(2)?);
        let z = o::zeros_like(&g[0])?;
        let mb = o::expand(m, &g[0].sizes())?;
        let sel = o::call1("aten::masked_select", vec![tv(&g[0]), tv(&mb)])?;
        let n = src.numel() as i64;
        let k = sel.numel() as i64;
        let flat = if k < n {
            o::call1(
                "aten::constant_pad_nd",
                vec![tv(&sel), IValue::int_list([0, n - k]), IValue::Int(0)],
            )?
        } else {
            sel
        };
        Ok(vec![
            Some(o::sum_to(&o::where_(&mb, &z, &g[0])?, &c.t(0)?.sizes())?),
            None,
            Some(o::reshape(&flat, &src.sizes())?),
        ])
    });
    t.linear("aten::scatter.src", |c, g| {
        let idx = c.t(2)?;
        let gs = o::call1(
            "aten::scatter.value",
            vec![tv(&g[0]), c.args.0[1].clone(), tv(idx), IValue::Int(0)],
        )?;
        let gsrc = o::call1(
            "aten::gather",
            vec![tv(&g[0]), c.args.0[1].clone(), tv(idx), IValue::Bool(false)],
        )?;
        Ok(vec![Some(gs), None, Some(gsrc)])
    });
    t.linear("aten::scatter.value", |c, g| {
        let gs = o::call1(
            "aten::scatter.value",
            vec![
                tv(&g[0]),
                c.args.0[1].clone(),
                c.args.0[2].clone(),
                IValue::Int(0),
            ],
        )?;
        Ok(vec![Some(gs), None])
    });
    t.linear("aten::scatter_add", |c, g| {
        let gsrc = o::call1(
            "aten::gather",
            vec![
                tv(&g[0]),
                c.args.0[1].clone(),
                c.args.0[2].clone(),
                IValue::Bool(false),
            ],
        )?;
        Ok(vec![Some(g[0].clone()), None, Some(gsrc)])
    });
    t.linear("aten::index_add", |c, g| {
        let alpha = c.args.s(4)?.to_f64();
        let src = c.t(3)?;
        let gsrc = if src.dim() == 0 {
            o::reshape(
                &o::call1(
                    "aten::index_select",
                    vec![tv(&g[0]), c.args.0[1].clone(), c.args.0[2].clone()],
                )?,
                &[],
            )?
        } else {
            o::call1(
                "aten::index_select",
                vec![tv(&g[0]), c.args.0[1].clone(), c.args.0[2].clone()],
            )?
        };
        Ok(vec![
            Some(g[0].clone()),
            None,
            Some(o::mul_s(&gsrc, alpha)?),
        ])
    });
    t.linear("aten::index_copy", |c, g| {
        let src = c.t(3)?;
        let gs = o::call1(
            "aten::index_fill.int_Scalar",
            vec![
                tv(&g[0]),
                c.args.0[1].clone(),
                c.args.0[2].clone(),
                IValue::Int(0),
            ],
        )?;
        let gsrc = o::call1(
            "aten::index_select",
            vec![tv(&g[0]), c.args.0[1].clone(), c.args.0[2].clone()],
        )?;
        Ok(vec![Some(gs), None, Some(o::reshape(&gsrc, &src.sizes())?)])
    });
    t.linear("aten::index_fill.int_Scalar", |c, g| {
        let gs = o::call1(
            "aten::index_fill.int_Scalar",
            vec![
                tv(&g[0]),
                c.args.0[1].clone(),
                c.args.0[2].clone(),
                IValue::Int(0),
            ],
        )?;
        Ok(vec![Some(gs), None])
    });
    t.linear("aten::index_fill.int_Tensor", |c, g| {
        let gs = o::call1(
            "aten::index_fill.int_Scalar",
            vec![
                tv(&g[0]),
                c.args.0[1].clone(),
                c.args.0[2].clone(),
                IValue::Int(0),
            ],
        )?;
        let sel = o::call1(
            "aten::index_select",
            vec![tv(&g[0]), c.args.0[1].clone(), c.args.0[2].clone()],
        )?;
        Ok(vec![Some(gs), None, Some(o::sum(&sel)?)])
    });
    t.linear("aten::put", |c, g| {
        let acc = c.args.b(3)?;
        let src = c.t(2)?;
        let gs = if acc {
            g[0].clone()
        } else {
            o::call1(
                "aten::put",
                vec![
                    tv(&g[0]),
                    c.args.0[1].clone(),
                    tv(&o::zeros_like(src)?),
                    IValue::Bool(false),
                ],
            )?
        };
        let gsrc = o::call1("aten::take", vec![tv(&g[0]), c.args.0[1].clone()])?;
        Ok(vec![Some(gs), None, Some(o::reshape(&gsrc, &src.sizes())?)])
    });
    for name in [
        "aten::select_scatter",
        "aten::slice_scatter",
        "aten::diagonal_scatter",
    ] {
        t.linear(name, |c, g| {
            let src = c.t(1)?;
            let zs = o::zeros_like(src)?;
            let mut a: Vec<IValue> = c.args.0.clone();
            a[0] = tv(&g[0]);
            a[1] = tv(&zs);
            let full = scatter_name(c);
            let gs = o::call1(full, a.clone())?;
            // The source's gradient is the scattered window of g.
            let view = match full {
                "aten::select_scatter" => o::call1(
                    "aten::select.int",
                    vec![tv(&g[0]), a[2].clone(), a[3].clone()],
                )?,
                "aten::slice_scatter" => o::call1(
                    "aten::slice.Tensor",
                    vec![
                        tv(&g[0]),
                        a[2].clone(),
                        a[3].clone(),
                        a[4].clone(),
                        a[5].clone(),
                    ],
                )?,
                _ => o::call1(
                    "aten::diagonal",
                    vec![tv(&g[0]), a[2].clone(), a[3].clone(), a[4].clone()],
                )?,
            };
            Ok(vec![
                Some(gs),
                Some(o::call1("aten::clone", vec![tv(&view), IValue::None])?),
            ])
        });
    }

    // Joining and splitting.
    t.linear("aten::cat", |c, g| {
        let xs = c.args.tensors(0)?;
        let nd = xs.iter().map(|x| x.dim()).max().unwrap_or(1);
        let d = wrap(c.args.int(1)?, nd);
        let mut off = 0;
        let mut r = Vec::new();
        for x in &xs {
            if x.dim() == 1 && x.numel() == 0 && nd > 1 {
                r.push(Some(o::zeros_like(x)?));
                continue;
            }
            let n = x.sizes()[d as usize];
            r.push(Some(o::call1(
                "aten::narrow",
                vec![tv(&g[0]), IValue::Int(d), IValue::Int(off), IValue::Int(n)],
            )?));
            off += n;
        }
        Ok(r)
    });
    t.linear("aten::stack", |c, g| {
        let xs = c.args.tensors(0)?;
        let d = wrap(c.args.int(1)?, xs.first().map(|x| x.dim() + 1).unwrap_or(1));
        (0..xs.len())
            .map(|i| {
                o::call1(
                    "aten::select.int",
                    vec![tv(&g[0]), IValue::Int(d), IValue::Int(i as i64)],
                )
                .map(Some)
            })
            .collect()
    });
    for name in [
        "aten::split.Tensor",
        "aten::split.sizes",
        "aten::split",
        "aten::split_with_sizes",
        "aten::unsafe_split.Tensor",
        "aten::unsafe_split_with_sizes",
        "aten::chunk",
        "aten::unsafe_chunk",
        "aten::tensor_split.sections",
        "aten::tensor_split.indices",
        "aten::split_copy.Tensor",
    ] {
        t.linear(name, |c, g| {
            let x = c.t(0)?;
            let d = wrap(
                if c.args.0.len() > 2 {
                    c.args.int(2)?
                } else {
                    0
                },
                x.dim(),
            );
            one(join(g, d, false)?)
        });
    }
    for name in ["aten::unbind.int", "aten::unbind_copy.int"] {
        t.linear(name, |c, g| {
            let x = c.t(0)?;
            one(join(g, wrap(c.args.int(1)?, x.dim()), true)?)
        });
    }
    for name in ["aten::hsplit.int", "aten::hsplit.array"] {
        t.linear(name, |c, g| {
            let d = if c.t(0)?.dim() == 1 { 0 } else { 1 };
            one(join(g, d, false)?)
        });
    }
    for name in ["aten::vsplit.int", "aten::vsplit.array"] {
        t.linear(name, |_, g| one(join(g, 0, false)?));
    }
    for name in ["aten::dsplit.int", "aten::dsplit.array"] {
        t.linear(name, |_, g| one(join(g, 2, false)?));
    }

    // Rearrangements.
    t.linear("aten::flip", |c, g| {
        one(o::call1(
            "aten::flip",
            vec![tv(&g[0]), c.args.0[1].clone()],
        )?)
    });
    t.linear("aten::fliplr", |_, g| {
        one(o::call1(
            "aten::flip",
            vec![tv(&g[0]), IValue::int_list([1])],
        )?)
    });
    t.linear("aten::flipud", |_, g| {
        one(o::call1(
            "aten::flip",
            vec![tv(&g[0]), IValue::int_list([0])],
        )?)
    });
    t.linear("aten::roll", |c, g| {
        let shifts: Vec<i64> = c.args.ints(1)?.iter().map(|s| -s).collect();
        one(o::call1(
            "aten::roll",
            vec![tv(&g[0]), IValue::int_list(shifts), c.args.0[2].clone()],
        )?)
    });
    t.linear("aten::rot90", |c, g| {
        one(o::call1(
            "aten::rot90",
            vec![tv(&g[0]), IValue::Int(-c.args.int(1)?), c.args.0[2].clone()],
        )?)
    });
    t.linear("aten::repeat", |c, g| {
        let x = c.t(0)?;
        let reps = c.args.ints(1)?;
        one(repeat_back(&g[0], &x.sizes(), &reps)?)
    });
    t.linear("aten::tile", |c, g| {
        let x = c.t(0)?;
        let mut reps = c.args.ints(1)?;
        while reps.len() < x.dim() {
            reps.insert(0, 1);
        }
        one(repeat_back(&g[0], &x.sizes(), &reps)?)
    });
    t.linear("aten::constant_pad_nd", |c, g| {
        let pad: Vec<i64> = c.args.ints(1)?.iter().map(|p| -p).collect();
        one(o::call1(
            "aten::constant_pad_nd",
            vec![tv(&g[0]), IValue::int_list(pad), IValue::Int(0)],
        )?)
    });
}

fn scatter_name(c: &Ctx) -> &'static str {
    match c.args.0.len() {
        4 => "aten::select_scatter",
        6 => "aten::slice_scatter",
        _ => "aten::diagonal_scatter",
    }
}

fn broadcast_shape(a: &[i64], b: &[i64]) -> Vec<i64> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = if i + a.len() >= n {
                a[i + a.len() - n]
            } else {
                1
            };
            let y = if i + b.len() >= n {
                b[i + b.len() - n]
            } else {
                1
            };
            x.max(y)
        })
        .collect()
}

/// The gradient of `repeat`: fold each repeated dimension into (reps, size) and sum the reps.
fn repeat_back(g: &Tensor, sizes: &[i64], reps: &[i64]) -> Result<Tensor, Error> {
    let lead = reps.len() - sizes.len();
    let mut shape = Vec::new();
    let mut sum_dims = Vec::new();
    for (i, &r) in reps.iter().enumerate() {
        if i < lead {
            sum_dims.push(shape.len() as i64);
            shape.push(r);
        } else {
            sum_dims.push(shape.len() as i64);
            shape.push(r);
            shape.push(sizes[i - lead]);
        }
    }
    let gr = o::reshape(g, &shape)?;
    let s = o::sum_dims(&gr, &sum_dims, false)?;
    o::reshape(&s, sizes)
}
