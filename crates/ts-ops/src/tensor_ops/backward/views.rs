//! Backward kernels of views and index selections: the gradient placed into zeros of the
//! input's shape where the forward read it (`select_backward` = `select_scatter` into zeros,
//! `index_select_backward` = `index_add`, `gather_backward` = `scatter_add`, ...).

use ts_core::IValue;
use ts_tensor::{DType, Error, Tensor};

use super::{tv, vjp, vjp_op, zeros};
use crate::autograd::ops as o;
use crate::registry::Registry;
use crate::tensor_ops::def;

/// Runs a registered operator and returns its tensor result.
fn call(name: &str, args: Vec<IValue>) -> Result<Tensor, Error> {
    o::call1(name, args)
}

/// `value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim)`.
fn value_selecting(
    g: &Tensor,
    dim: i64,
    idx: &Tensor,
    sizes: &[i64],
    keepdim: bool,
) -> Result<Tensor, Error> {
    let z = zeros(sizes, g)?;
    if sizes.is_empty() {
        return o::call1("aten::clone", vec![tv(g), IValue::None]);
    }
    let (g, idx) = if keepdim {
        (g.clone(), idx.clone())
    } else {
        (o::unsqueeze(g, dim)?, o::unsqueeze(idx, dim)?)
    };
    call(
        "aten::scatter.src",
        vec![tv(&z), IValue::Int(dim), tv(&idx), tv(&g)],
    )
}

/// `masked_scatter_backward(grad, mask, sizes)`: the gradient's selected elements, padded
/// with zeros to the source's element count.
fn masked_scatter_backward(g: &Tensor, mask: &Tensor, sizes: &[i64]) -> Result<Tensor, Error> {
    let numel: i64 = sizes.iter().product();
    let sel = call("aten::masked_select", vec![tv(g), tv(mask)])?;
    let n = sel.numel() as i64;
    if n > numel {
        return Err(Error::runtime(format!(
            "masked_scatter_backward: the mask selects {n} elements but the source has only {numel}"
        )));
    }
    let sel = if n < numel {
        call(
            "aten::cat",
            vec![
                IValue::tensor_list([sel, zeros(&[numel - n], g)?]),
                IValue::Int(0),
            ],
        )?
    } else {
        sel
    };
    o::reshape(&sel, sizes)
}

pub(super) fn register(r: &Registry) {
    def(r, "aten::select_backward", |a| {
        let g = a.t(0)?;
        let z = zeros(&a.ints(1)?, g)?;
        call(
            "aten::select_scatter",
            vec![
                tv(&z),
                tv(g),
                IValue::Int(a.int(2)?),
                IValue::Int(a.int(3)?),
            ],
        )
    });
    def(r, "aten::slice_backward", |a| {
        let g = a.t(0)?;
        let z = zeros(&a.ints(1)?, g)?;
        call(
            "aten::slice_scatter",
            vec![
                tv(&z),
                tv(g),
                IValue::Int(a.int(2)?),
                IValue::Int(a.int(3)?),
                IValue::Int(a.int(4)?),
                IValue::Int(a.int(5)?),
            ],
        )
    });
    def(r, "aten::diagonal_backward", |a| {
        let g = a.t(0)?;
        let z = zeros(&a.ints(1)?, g)?;
        call(
            "aten::diagonal_scatter",
            vec![
                tv(&z),
                tv(g),
                IValue::Int(a.int(2)?),
                IValue::Int(a.int(3)?),
                IValue::Int(a.int(4)?),
            ],
        )
    });
    def(r, "aten::trace_backward", |a| {
        let (g, sizes) = (a.t(0)?, a.ints(1)?);
        if sizes.len() != 2 {
            return Err(Error::runtime(format!(
                "expected matrix input of 2 dimensions, got sizes {sizes:?}"
            )));
        }
        let z = zeros(&sizes, g)?;
        let n = sizes[0].min(sizes[1]);
        let d = o::expand(g, &[n])?;
        call(
            "aten::diagonal_scatter",
            vec![
                tv(&z),
                tv(&d),
                IValue::Int(0),
                IValue::Int(0),
                IValue::Int(1),
            ],
        )
    });
    def(r, "aten::unfold_backward", |a| {
        let g = a.t(0)?;
        let sizes = a.ints(1)?;
        let base = zeros(&sizes, g)?;
        let (dim, size, step) = (a.int(2)?, a.int(3)?, a.int(4)?);
        Ok(vjp(&[&base], &[Some(g.clone())], |l| {
            Ok(vec![call(
                "aten::unfold",
                vec![
                    tv(&l[0]),
                    IValue::Int(dim),
                    IValue::Int(size),
                    IValue::Int(step),
                ],
            )?])
        })?
        .remove(0))
    });
    def(r, "aten::index_select_backward", |a| {
        let g = a.t(0)?;
        let z = zeros(&a.ints(1)?, g)?;
        let idx = a.t(3)?;
        let dim = a.int(2)?;
        let g = if g.dim() == 0 && z.dim() > 0 {
            o::reshape(g, &[1])?
        } else {
            g.clone()
        };
        let idx = o::reshape(idx, &[-1])?;
        call(
            "aten::index_add",
            vec![tv(&z), IValue::Int(dim), tv(&idx), tv(&g), IValue::Int(1)],
        )
    });
    def(r, "aten::gather_backward", |a| {
        let (g, x, dim, idx) = (a.t(0)?, a.t(1)?, a.int(2)?, a.t(3)?);
        if a.b(4)? {
            return Err(Error::runtime(
                "gather_backward with sparse_grad=True returns a sparse tensor, which torchscript-rs does not support",
            ));
        }
        let z = zeros(&x.sizes(), g)?;
        call(
            "aten::scatter_add",
            vec![tv(&z), IValue::Int(dim), tv(idx), tv(g)],
        )
    });
    def(r, "aten::cummaxmin_backward", |a| {
        let (g, x, idx, dim) = (a.t(0)?, a.t(1)?, a.t(2)?, a.int(3)?);
        let z = zeros(&x.sizes(), g)?;
        if x.numel() == 0 {
            return Ok(z);
        }
        call(
            "aten::scatter_add",
            vec![tv(&z), IValue::Int(dim), tv(idx), tv(g)],
        )
    });
    def(r, "aten::value_selecting_reduction_backward", |a| {
        value_selecting(a.t(0)?, a.int(1)?, a.t(2)?, &a.ints(3)?, a.b(4)?)
    });
    def(r, "aten::masked_select_backward", |a| {
        let (g, x, mask) = (a.t(0)?, a.t(1)?, a.t(2)?);
        if mask.dtype() != DType::Bool {
            return Err(Error::runtime(format!(
                "masked_select: expected BoolTensor for mask, got {:?}",
                mask.dtype()
            )));
        }
        let shape = ts_tensor::shape::broadcast_shapes(&x.sizes(), &mask.sizes())?;
        let z = zeros(&shape, g)?;
        call("aten::masked_scatter", vec![tv(&z), tv(mask), tv(g)])
    });
    def(r, "aten::masked_scatter_backward", |a| {
        masked_scatter_backward(a.t(0)?, a.t(1)?, &a.ints(2)?)
    });
    def(r, "aten::cumprod_backward", |a| {
        let (g, x, dim) = (a.t(0)?, a.t(1)?, a.int(2)?);
        Ok(vjp_op(
            "aten::cumprod",
            vec![tv(x), IValue::Int(dim), IValue::None],
            &[0],
            g,
        )?
        .remove(0))
    });
    def(r, "aten::_pack_padded_sequence_backward", |a| {
        let (g, sizes, batch_sizes, batch_first) = (a.t(0)?, a.ints(1)?, a.t(2)?, a.b(3)?);
        let mut sizes = sizes;
        if batch_first {
            if sizes.len() < 2 {
                return Err(Error::runtime(
                    "_pack_padded_sequence_backward: input_size needs 2 dimensions",
                ));
            }
            sizes.swap(0, 1);
        }
        let gi = zeros(&sizes, g)?;
        let bs = o::to_dtype(batch_sizes, DType::Int64)?;
        let n = bs.numel() as i64;
        if n > sizes.first().copied().unwrap_or(0) {
            return Err(Error::runtime(
                "_pack_padded_sequence_backward: more batch sizes than time steps",
            ));
        }
        let mut offset = 0;
        for i in 0..n {
            let b = bs.select(0, i)?.item()?.to_i64();
            let rows = g.narrow(0, offset, b)?;
            gi.select(0, i)?.narrow(0, 0, b)?.copy_(&rows)?;
            offset += b;
        }
        if batch_first {
            o::call1(
                "aten::transpose.int",
                vec![tv(&gi), IValue::Int(0), IValue::Int(1)],
            )
        } else {
            Ok(gi)
        }
    });
    def(r, "aten::_segment_reduce_backward", |a| {
        let (g, data) = (a.t(0)?, a.t(2)?);
        let reduce = a.str(3)?.to_string();
        let (lengths, offsets) = (a.v(4)?.clone(), a.v(5)?.clone());
        let (axis, initial) = (a.int(6)?, a.v(7)?.clone());
        Ok(vjp(&[data], &[Some(g.clone())], |l| {
            Ok(vec![call(
                "aten::segment_reduce",
                vec![
                    tv(&l[0]),
                    IValue::str(reduce),
                    lengths,
                    IValue::None,
                    offsets,
                    IValue::Int(axis),
                    IValue::Bool(false),
                    initial,
                ],
            )?])
        })?
        .remove(0))
    });
}
