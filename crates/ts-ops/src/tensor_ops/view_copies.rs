//! The functional (`*_copy`) forms of the view operators, and the internal view aliases
//! (`_reshape_alias`, `_unsafe_view`, `lift`, ...) that traced and functionalized graphs save.
//!
//! A `*_copy` operator is its view followed by a contiguous copy, so it never aliases `self`.

use ts_tensor::{Result, Tensor};

use super::{def, def_many, Args};
use crate::registry::Registry;

fn copied(t: Result<Tensor>) -> Result<Tensor> {
    let t = t?;
    let c = t.contiguous()?;
    if Tensor::is_same(&c, &t) {
        t.clone_tensor()
    } else {
        Ok(c)
    }
}

fn copied_all(ts: Result<Vec<Tensor>>) -> Result<Vec<Tensor>> {
    ts?.into_iter().map(|t| copied(Ok(t))).collect()
}

fn reshape_alias(a: &Args) -> Result<Tensor> {
    let t = a.t(0)?;
    t.as_strided(&a.ints(1)?, &a.ints(2)?, Some(t.storage_offset() as i64))
}

/// Registers the `*_copy` operators and view aliases.
pub fn register(r: &Registry) {
    def_many(r, &["aten::alias_copy", "aten::detach_copy"], |a| {
        a.t(0)?.clone_tensor()
    });
    def(r, "aten::lift_fresh_copy", |a| a.t(0)?.clone_tensor());
    def_many(r, &["aten::lift", "aten::lift_fresh"], |a| {
        Ok(a.t(0)?.clone())
    });
    def(r, "aten::as_strided_copy", |a| {
        copied(a.t(0)?.as_strided(&a.ints(1)?, &a.ints(2)?, a.oint(3)?))
    });
    def(r, "aten::diagonal_copy", |a| {
        copied(a.t(0)?.diagonal(a.int(1)?, a.int(2)?, a.int(3)?))
    });
    def(r, "aten::expand_copy", |a| {
        copied(a.t(0)?.expand(&a.ints(1)?, a.b(2)?))
    });
    def(r, "aten::permute_copy", |a| {
        copied(a.t(0)?.permute(&a.ints(1)?))
    });
    def(r, "aten::select_copy.int", |a| {
        copied(a.t(0)?.select(a.int(1)?, a.int(2)?))
    });
    def(r, "aten::slice_copy.Tensor", |a| {
        copied(a.t(0)?.slice(a.int(1)?, a.oint(2)?, a.oint(3)?, a.int(4)?))
    });
    def(r, "aten::split_copy.Tensor", |a| {
        copied_all(a.t(0)?.split(a.int(1)?, a.int(2)?))
    });
    def(r, "aten::split_with_sizes_copy", |a| {
        copied_all(a.t(0)?.split_with_sizes(&a.ints(1)?, a.int(2)?))
    });
    def(r, "aten::squeeze_copy", |a| copied(a.t(0)?.squeeze()));
    def(r, "aten::squeeze_copy.dim", |a| {
        copied(a.t(0)?.squeeze_dim(a.int(1)?))
    });
    def(r, "aten::squeeze_copy.dims", |a| {
        copied(a.t(0)?.squeeze_dims(&a.ints(1)?))
    });
    def(r, "aten::t_copy", |a| copied(a.t(0)?.t()));
    def(r, "aten::transpose_copy.int", |a| {
        copied(a.t(0)?.transpose(a.int(1)?, a.int(2)?))
    });
    def(r, "aten::unbind_copy.int", |a| {
        copied_all(a.t(0)?.unbind(a.int(1)?))
    });
    def(r, "aten::unfold_copy", |a| {
        copied(a.t(0)?.unfold(a.int(1)?, a.int(2)?, a.int(3)?))
    });
    def(r, "aten::unsqueeze_copy", |a| {
        copied(a.t(0)?.unsqueeze(a.int(1)?))
    });
    def(r, "aten::view_copy", |a| {
        copied(a.t(0)?.reshape(&a.ints(1)?))
    });
    def(r, "aten::view_copy.dtype", |a| {
        let dt = a
            .dtype(1)?
            .ok_or_else(|| ts_tensor::Error::runtime("view_copy: dtype must not be None"))?;
        copied(a.t(0)?.view_dtype(dt))
    });
    def(r, "aten::narrow_copy", |a| {
        copied(a.t(0)?.narrow(a.int(1)?, a.int(2)?, a.int(3)?))
    });
    def(r, "aten::_reshape_copy", |a| {
        copied(a.t(0)?.reshape(&a.ints(1)?))
    });
    def(r, "aten::_reshape_alias_copy", |a| copied(reshape_alias(a)));
    def(r, "aten::_reshape_alias", reshape_alias);
    def(r, "aten::_unsafe_view", |a| a.t(0)?.reshape(&a.ints(1)?));
    def(r, "aten::_neg_view", |a| a.t(0)?.neg());
    def(r, "aten::_neg_view_copy", |a| a.t(0)?.neg());
    def(r, "aten::_fw_primal", |a| Ok(a.t(0)?.clone()));
    def(r, "aten::_fw_primal_copy", |a| a.t(0)?.clone_tensor());
    def(r, "aten::unfold", |a| {
        a.t(0)?.unfold(a.int(1)?, a.int(2)?, a.int(3)?)
    });
    def(r, "aten::view.dtype", |a| {
        let dt = a
            .dtype(1)?
            .ok_or_else(|| ts_tensor::Error::runtime("view: dtype must not be None"))?;
        a.t(0)?.view_dtype(dt)
    });
    def(r, "aten::narrow.Tensor", |a| {
        a.t(0)?.narrow_tensor(a.int(1)?, a.t(2)?, a.int(3)?)
    });
    def(r, "aten::ravel", |a| a.t(0)?.reshape(&[-1]));
}
