//! Views, joins, indexing, copies and conversions.

use ts_tensor::Tensor;

use super::{def, def_many, Args};
use crate::registry::Registry;

fn inplace(
    a: &Args,
    f: impl FnOnce(&Tensor) -> ts_tensor::Result<()>,
) -> ts_tensor::Result<Tensor> {
    let t = a.t(0)?;
    f(t)?;
    Ok(t.clone())
}

/// `to(dtype)`, returning `self` when nothing changes and no copy is asked for.
fn to_dtype(t: &Tensor, dtype: Option<ts_tensor::DType>, copy: bool) -> ts_tensor::Result<Tensor> {
    match dtype {
        Some(d) => t.to_dtype(d, copy),
        None if copy => t.clone_tensor(),
        None => Ok(t.clone()),
    }
}

/// Registers view, join, indexing and conversion operators.
pub fn register(r: &Registry) {
    register_views(r);
    register_joins(r);
    register_indexing(r);
    register_conversions(r);
}

fn register_views(r: &Registry) {
    def(r, "aten::view", |a| a.t(0)?.view(&a.ints(1)?));
    def(r, "aten::reshape", |a| a.t(0)?.reshape(&a.ints(1)?));
    def(r, "aten::view_as", |a| a.t(0)?.view_as(a.t(1)?));
    def(r, "aten::reshape_as", |a| a.t(0)?.reshape(&a.t(1)?.sizes()));
    def(r, "aten::as_strided", |a| {
        a.t(0)?.as_strided(&a.ints(1)?, &a.ints(2)?, a.oint(3)?)
    });
    def(r, "aten::transpose.int", |a| {
        a.t(0)?.transpose(a.int(1)?, a.int(2)?)
    });
    def_many(r, &["aten::swapaxes", "aten::swapdims"], |a| {
        a.t(0)?.transpose(a.int(1)?, a.int(2)?)
    });
    def(r, "aten::t", |a| a.t(0)?.t());
    def(r, "aten::numpy_T", |a| a.t(0)?.numpy_t());
    def(r, "aten::permute", |a| a.t(0)?.permute(&a.ints(1)?));
    def(r, "aten::select.int", |a| {
        a.t(0)?.select(a.int(1)?, a.int(2)?)
    });
    def(r, "aten::slice.Tensor", |a| {
        a.t(0)?.slice(a.int(1)?, a.oint(2)?, a.oint(3)?, a.int(4)?)
    });
    def(r, "aten::narrow", |a| {
        a.t(0)?.narrow(a.int(1)?, a.int(2)?, a.int(3)?)
    });
    def(r, "aten::unsqueeze", |a| a.t(0)?.unsqueeze(a.int(1)?));
    def(r, "aten::squeeze", |a| a.t(0)?.squeeze());
    def(r, "aten::squeeze.dim", |a| a.t(0)?.squeeze_dim(a.int(1)?));
    def(r, "aten::squeeze.dims", |a| {
        a.t(0)?.squeeze_dims(&a.ints(1)?)
    });
    def(r, "aten::unsqueeze_", |a| {
        inplace(a, |t| t.unsqueeze_(a.int(1)?))
    });
    def(r, "aten::squeeze_.dim", |a| {
        inplace(a, |t| t.squeeze_dim_(a.int(1)?))
    });
    def(r, "aten::t_", |a| inplace(a, |t| t.t_()));
    def(r, "aten::transpose_", |a| {
        inplace(a, |t| t.transpose_(a.int(1)?, a.int(2)?))
    });
    def(r, "aten::expand", |a| a.t(0)?.expand(&a.ints(1)?, a.b(2)?));
    def(r, "aten::expand_as", |a| a.t(0)?.expand_as(a.t(1)?));
    def(r, "aten::flatten.using_ints", |a| {
        a.t(0)?.flatten(a.int(1)?, a.int(2)?)
    });
    def(r, "aten::unflatten.int", |a| {
        a.t(0)?.unflatten(a.int(1)?, &a.ints(2)?)
    });
    def(r, "aten::unbind.int", |a| a.t(0)?.unbind(a.int(1)?));
    def(r, "aten::chunk", |a| a.t(0)?.chunk(a.int(1)?, a.int(2)?));
    def(r, "aten::split.Tensor", |a| {
        a.t(0)?.split(a.int(1)?, a.int(2)?)
    });
    def_many(r, &["aten::split.sizes", "aten::split_with_sizes"], |a| {
        a.t(0)?.split_with_sizes(&a.ints(1)?, a.int(2)?)
    });
    def(r, "aten::diagonal", |a| {
        a.t(0)?.diagonal(a.int(1)?, a.int(2)?, a.int(3)?)
    });
    def(r, "aten::movedim.int", |a| {
        a.t(0)?.movedim(a.int(1)?, a.int(2)?)
    });
    def(r, "aten::contiguous", |a| a.t(0)?.contiguous());
    def(r, "aten::clone", |a| a.t(0)?.clone_tensor());
    def(r, "aten::detach", |a| Ok(a.t(0)?.detach()));
    def(r, "aten::alias", |a| a.t(0)?.view(&a.t(0)?.sizes()));
    def(r, "aten::repeat", |a| a.t(0)?.repeat(&a.ints(1)?));
    def(r, "aten::flip", |a| a.t(0)?.flip(&a.ints(1)?));
    def(r, "aten::roll", |a| a.t(0)?.roll(&a.ints(1)?, &a.ints(2)?));
    def(r, "aten::tril", |a| a.t(0)?.tril(a.int(1)?));
    def(r, "aten::triu", |a| a.t(0)?.triu(a.int(1)?));
    def(r, "aten::diag", |a| a.t(0)?.diag(a.int(1)?));
}

/// `torch.meshgrid`: every 0-d or 1-d input spread over the grid of all their lengths, as
/// broadcast views. `xy` indexing swaps the roles of the first two inputs (a Cartesian grid).
fn meshgrid(tensors: &[Tensor], indexing: &str) -> ts_tensor::Result<Vec<Tensor>> {
    use ts_tensor::Error;
    if tensors.is_empty() {
        return Err(Error::runtime("meshgrid expects a non-empty TensorList"));
    }
    let xy = match indexing {
        "ij" => false,
        "xy" => true,
        other => {
            return Err(Error::runtime(format!(
                "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {other}"
            )))
        }
    };
    for t in tensors {
        if t.dim() > 1 {
            return Err(Error::runtime(format!(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {}",
                t.dim()
            )));
        }
        if t.dtype() != tensors[0].dtype() {
            return Err(Error::runtime(
                "meshgrid expects all tensors to have the same dtype",
            ));
        }
    }
    let mut order: Vec<usize> = (0..tensors.len()).collect();
    if xy && order.len() >= 2 {
        order.swap(0, 1);
    }
    let shape: Vec<i64> = order.iter().map(|&i| tensors[i].numel() as i64).collect();
    let mut grids = Vec::with_capacity(order.len());
    for (d, &i) in order.iter().enumerate() {
        let mut view = vec![1i64; order.len()];
        view[d] = -1;
        grids.push(tensors[i].reshape(&view)?.expand(&shape, false)?);
    }
    if xy && grids.len() >= 2 {
        grids.swap(0, 1);
    }
    Ok(grids)
}

fn register_joins(r: &Registry) {
    def(r, "aten::meshgrid", |a| meshgrid(&a.tensors(0)?, "ij"));
    def(r, "aten::meshgrid.indexing", |a| {
        meshgrid(&a.tensors(0)?, a.str(1)?)
    });
    def_many(
        r,
        &["aten::cat", "aten::concat", "aten::concatenate"],
        |a| ts_tensor::cat(&a.tensors(0)?, a.int(1)?),
    );
    def(r, "aten::stack", |a| {
        ts_tensor::stack(&a.tensors(0)?, a.int(1)?)
    });
    def(r, "aten::hstack", |a| {
        ts_tensor::ops::join::hstack(&a.tensors(0)?)
    });
    def(r, "aten::vstack", |a| {
        ts_tensor::ops::join::vstack(&a.tensors(0)?)
    });
}

fn register_indexing(r: &Registry) {
    def(r, "aten::index_select", |a| {
        a.t(0)?.index_select(a.int(1)?, a.t(2)?)
    });
    def(r, "aten::gather", |a| a.t(0)?.gather(a.int(1)?, a.t(2)?));
    def(r, "aten::scatter.src", |a| {
        a.t(0)?.scatter(a.int(1)?, a.t(2)?, a.t(3)?)
    });
    def(r, "aten::scatter.value", |a| {
        a.t(0)?.scatter_value(a.int(1)?, a.t(2)?, a.s(3)?)
    });
    def(r, "aten::scatter_add", |a| {
        a.t(0)?.scatter_add(a.int(1)?, a.t(2)?, a.t(3)?)
    });
    def(r, "aten::scatter_.src", |a| {
        inplace(a, |t| t.scatter_(a.int(1)?, a.t(2)?, a.t(3)?))
    });
    def(r, "aten::scatter_.value", |a| {
        inplace(a, |t| t.scatter_value_(a.int(1)?, a.t(2)?, a.s(3)?))
    });
    def(r, "aten::scatter_add_", |a| {
        inplace(a, |t| t.scatter_add_(a.int(1)?, a.t(2)?, a.t(3)?))
    });
    def(r, "aten::index_fill.int_Scalar", |a| {
        a.t(0)?.index_fill(a.int(1)?, a.t(2)?, a.s(3)?)
    });
    def(r, "aten::index_fill_.int_Scalar", |a| {
        inplace(a, |t| t.index_fill_(a.int(1)?, a.t(2)?, a.s(3)?))
    });
    def(r, "aten::masked_fill.Scalar", |a| {
        a.t(0)?.masked_fill(a.t(1)?, a.s(2)?)
    });
    def(r, "aten::masked_fill.Tensor", |a| {
        a.t(0)?.masked_fill_tensor(a.t(1)?, a.t(2)?)
    });
    def(r, "aten::masked_fill_.Scalar", |a| {
        inplace(a, |t| t.masked_fill_(a.t(1)?, a.s(2)?))
    });
    def(r, "aten::masked_fill_.Tensor", |a| {
        inplace(a, |t| t.masked_fill_tensor_(a.t(1)?, a.t(2)?))
    });
    def(r, "aten::masked_select", |a| a.t(0)?.masked_select(a.t(1)?));
    def(r, "aten::nonzero", |a| a.t(0)?.nonzero());
    def(r, "aten::nonzero_numpy", |a| a.t(0)?.nonzero_tuple());
    def(r, "aten::index.Tensor", |a| {
        a.t(0)?.index_tensors(&a.opt_tensors(1)?)
    });
    def(r, "aten::index.Tensor_hacked_twin", |a| {
        let idx: Vec<Option<Tensor>> = a.tensors(1)?.into_iter().map(Some).collect();
        a.t(0)?.index_tensors(&idx)
    });
    def(r, "aten::index_put_", |a| {
        inplace(a, |t| {
            t.index_put_tensors_(&a.opt_tensors(1)?, a.t(2)?, a.b(3)?)
        })
    });
    def(r, "aten::index_put", |a| {
        let t = a.t(0)?.clone_tensor()?;
        t.index_put_tensors_(&a.opt_tensors(1)?, a.t(2)?, a.b(3)?)?;
        Ok(t)
    });
    def(r, "aten::one_hot", |a| a.t(0)?.one_hot(a.int(1)?));
    // `x[i] = v` and `x[a:b] = v` on tensors are lowered to copy_/fill_ on views.
    def(r, "aten::copy_", |a| inplace(a, |t| t.copy_(a.t(1)?)));
    def(r, "aten::fill_.Scalar", |a| {
        inplace(a, |t| t.fill_(a.s(1)?))
    });
    def(r, "aten::fill_.Tensor", |a| {
        inplace(a, |t| t.fill_tensor_(a.t(1)?))
    });
    def(r, "aten::zero_", |a| inplace(a, |t| t.zero_()));
}

fn register_conversions(r: &Registry) {
    def(r, "aten::to.dtype", |a| {
        to_dtype(a.t(0)?, a.dtype(1)?, a.b(3)?)
    });
    def(r, "aten::to.device", |a| {
        a.check_device(1)?;
        to_dtype(a.t(0)?, a.dtype(2)?, a.b(4)?)
    });
    def(r, "aten::to.other", |a| {
        to_dtype(a.t(0)?, Some(a.t(1)?.dtype()), a.b(3)?)
    });
    def(r, "aten::to.dtype_layout", |a| {
        a.check_device(3)?;
        to_dtype(a.t(0)?, a.dtype(1)?, a.b(6)?)
    });
    def(r, "aten::to.prim_Device", |a| {
        a.check_device(1)?;
        to_dtype(a.t(0)?, a.dtype(2)?, a.b(4)?)
    });
    def(r, "aten::to.prim_dtype", |a| {
        to_dtype(a.t(0)?, a.dtype(1)?, a.b(3)?)
    });
    def(r, "aten::to.prim_other", |a| {
        to_dtype(a.t(0)?, None, a.b(2)?)
    });
    def(r, "aten::type_as", |a| {
        a.t(0)?.to_dtype(a.t(1)?.dtype(), false)
    });
    def(r, "aten::cpu", |a| Ok(a.t(0)?.clone()));
}
