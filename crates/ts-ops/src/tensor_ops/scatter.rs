//! Reducing scatters and index-driven writes and reads: `scatter(reduce=)`, `scatter_reduce`,
//! `index_reduce`/`index_add`/`index_copy`/`index_fill(Tensor)`, `put`, `take`,
//! `take_along_dim`, `masked_scatter`, `argwhere`, `nonzero_static`, `segment_reduce`.

use ts_tensor::ops::scatter_reduce::ReduceOp;
use ts_tensor::{Error, Tensor};

use super::{def, Args};
use crate::registry::Registry;

fn inplace(
    a: &Args,
    f: impl FnOnce(&Tensor) -> ts_tensor::Result<()>,
) -> ts_tensor::Result<Tensor> {
    let t = a.t(0)?;
    f(t)?;
    Ok(t.clone())
}

/// Registers the scatter, put and take operators.
pub fn register(r: &Registry) {
    def(r, "aten::scatter.reduce", |a| {
        let op = ReduceOp::parse_scatter(a.str(4)?)?;
        a.t(0)?.scatter_src_reduce(a.int(1)?, a.t(2)?, a.t(3)?, op)
    });
    def(r, "aten::scatter.value_reduce", |a| {
        let op = ReduceOp::parse_scatter(a.str(4)?)?;
        a.t(0)?
            .scatter_value_reduce(a.int(1)?, a.t(2)?, a.s(3)?, op)
    });
    def(r, "aten::scatter_reduce.two", |a| {
        let op = ReduceOp::parse(a.str(4)?, "scatter_reduce")?;
        a.t(0)?
            .scatter_reduce(a.int(1)?, a.t(2)?, a.t(3)?, op, a.b(5)?)
    });
    def(r, "aten::index_reduce", |a| {
        let op = ReduceOp::parse(a.str(4)?, "index_reduce")?;
        a.t(0)?
            .index_reduce(a.int(1)?, a.t(2)?, a.t(3)?, op, a.b(5)?)
    });
    def(r, "aten::index_add", |a| {
        a.t(0)?.index_add(a.int(1)?, a.t(2)?, a.t(3)?, a.s(4)?)
    });
    def(r, "aten::index_copy", |a| {
        a.t(0)?.index_copy(a.int(1)?, a.t(2)?, a.t(3)?)
    });
    def(r, "aten::index_fill.int_Tensor", |a| {
        a.t(0)?.index_fill(a.int(1)?, a.t(2)?, fill_value(a.t(3)?)?)
    });
    def(r, "aten::index_fill_.int_Tensor", |a| {
        inplace(a, |t| {
            t.index_fill_(a.int(1)?, a.t(2)?, fill_value(a.t(3)?)?)
        })
    });
    def(r, "aten::put", |a| a.t(0)?.put(a.t(1)?, a.t(2)?, a.b(3)?));
    def(r, "aten::put_", |a| {
        inplace(a, |t| t.put_(a.t(1)?, a.t(2)?, a.b(3)?))
    });
    def(r, "aten::take", |a| a.t(0)?.take(a.t(1)?));
    def(r, "aten::take_along_dim", |a| {
        a.t(0)?.take_along_dim(a.t(1)?, a.oint(2)?)
    });
    def(r, "aten::masked_scatter", |a| {
        a.t(0)?.masked_scatter(a.t(1)?, a.t(2)?)
    });
    def(r, "aten::masked_scatter_", |a| {
        inplace(a, |t| t.masked_scatter_(a.t(1)?, a.t(2)?))
    });
    def(r, "aten::argwhere", |a| a.t(0)?.nonzero());
    def(r, "aten::nonzero_static", |a| {
        a.t(0)?.nonzero_static(a.int(1)?, a.int(2)?)
    });
    def(r, "aten::segment_reduce", |a| {
        if a.ot(3)?.is_some() {
            return Err(Error::runtime(
                "segment_reduce(): indices are not supported; pass lengths or offsets",
            ));
        }
        a.t(0)?
            .segment_reduce(a.str(1)?, a.ot(2)?, a.ot(4)?, a.int(5)?, a.os(7)?)
    });
}

/// The value of `index_fill`'s 0-d tensor overload.
fn fill_value(v: &Tensor) -> ts_tensor::Result<ts_tensor::Scalar> {
    if v.dim() != 0 {
        return Err(Error::runtime(format!(
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
            v.dim()
        )));
    }
    v.item()
}
