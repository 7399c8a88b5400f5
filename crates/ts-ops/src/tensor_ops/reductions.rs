//! Reductions, scans, sorting and matrix products.

use ts_tensor::Scalar;

use super::{def, def_many};
use crate::registry::Registry;

fn unbiased(u: bool) -> Option<f64> {
    Some(if u { 1.0 } else { 0.0 })
}

/// Registers reductions, scans, sorts and products.
pub fn register(r: &Registry) {
    def(r, "aten::sum", |a| a.t(0)?.sum(None, false, a.dtype(1)?));
    def(r, "aten::sum.dim_IntList", |a| {
        a.t(0)?.sum(a.oints(1)?.as_deref(), a.b(2)?, a.dtype(3)?)
    });
    def(r, "aten::mean", |a| a.t(0)?.mean(None, false, a.dtype(1)?));
    def(r, "aten::mean.dim", |a| {
        a.t(0)?.mean(a.oints(1)?.as_deref(), a.b(2)?, a.dtype(3)?)
    });
    def(r, "aten::prod", |a| a.t(0)?.prod(None, false, a.dtype(1)?));
    def(r, "aten::prod.dim_int", |a| {
        a.t(0)?.prod(Some(a.int(1)?), a.b(2)?, a.dtype(3)?)
    });
    def(r, "aten::amax", |a| a.t(0)?.amax(&a.ints(1)?, a.b(2)?));
    def(r, "aten::amin", |a| a.t(0)?.amin(&a.ints(1)?, a.b(2)?));
    def(r, "aten::max", |a| a.t(0)?.max());
    def(r, "aten::min", |a| a.t(0)?.min());
    def(r, "aten::max.dim", |a| a.t(0)?.max_dim(a.int(1)?, a.b(2)?));
    def(r, "aten::min.dim", |a| a.t(0)?.min_dim(a.int(1)?, a.b(2)?));
    def(r, "aten::argmax", |a| a.t(0)?.argmax(a.oint(1)?, a.b(2)?));
    def(r, "aten::argmin", |a| a.t(0)?.argmin(a.oint(1)?, a.b(2)?));
    def(r, "aten::all", |a| a.t(0)?.all(None, false));
    def(r, "aten::any", |a| a.t(0)?.any(None, false));
    def(r, "aten::all.dim", |a| {
        a.t(0)?.all(Some(&[a.int(1)?]), a.b(2)?)
    });
    def(r, "aten::any.dim", |a| {
        a.t(0)?.any(Some(&[a.int(1)?]), a.b(2)?)
    });
    def(r, "aten::all.dims", |a| {
        a.t(0)?.all(a.oints(1)?.as_deref(), a.b(2)?)
    });
    def(r, "aten::any.dims", |a| {
        a.t(0)?.any(a.oints(1)?.as_deref(), a.b(2)?)
    });
    def(r, "aten::count_nonzero", |a| {
        let d = a.oint(1)?.map(|d| vec![d]);
        a.t(0)?.count_nonzero(d.as_deref())
    });
    def(r, "aten::count_nonzero.dim_IntList", |a| {
        a.t(0)?.count_nonzero(Some(&a.ints(1)?))
    });
    def(r, "aten::var", |a| {
        a.t(0)?.var(None, unbiased(a.b(1)?), false)
    });
    def(r, "aten::std", |a| {
        a.t(0)?.std(None, unbiased(a.b(1)?), false)
    });
    def(r, "aten::var.dim", |a| {
        a.t(0)?
            .var(a.oints(1)?.as_deref(), unbiased(a.b(2)?), a.b(3)?)
    });
    def(r, "aten::std.dim", |a| {
        a.t(0)?
            .std(a.oints(1)?.as_deref(), unbiased(a.b(2)?), a.b(3)?)
    });
    def(r, "aten::var.correction", |a| {
        let c = a.os(2)?.map(Scalar::to_f64);
        a.t(0)?.var(a.oints(1)?.as_deref(), c, a.b(3)?)
    });
    def(r, "aten::std.correction", |a| {
        let c = a.os(2)?.map(Scalar::to_f64);
        a.t(0)?.std(a.oints(1)?.as_deref(), c, a.b(3)?)
    });
    def(r, "aten::var_mean", |a| {
        a.t(0)?.var_mean(None, unbiased(a.b(1)?), false)
    });
    def(r, "aten::std_mean", |a| {
        a.t(0)?.std_mean(None, unbiased(a.b(1)?), false)
    });
    def(r, "aten::var_mean.dim", |a| {
        a.t(0)?
            .var_mean(a.oints(1)?.as_deref(), unbiased(a.b(2)?), a.b(3)?)
    });
    def(r, "aten::std_mean.dim", |a| {
        a.t(0)?
            .std_mean(a.oints(1)?.as_deref(), unbiased(a.b(2)?), a.b(3)?)
    });
    def(r, "aten::var_mean.correction", |a| {
        let c = a.os(2)?.map(Scalar::to_f64);
        a.t(0)?.var_mean(a.oints(1)?.as_deref(), c, a.b(3)?)
    });
    def(r, "aten::std_mean.correction", |a| {
        let c = a.os(2)?.map(Scalar::to_f64);
        a.t(0)?.std_mean(a.oints(1)?.as_deref(), c, a.b(3)?)
    });
    def(r, "aten::norm.Scalar", |a| {
        a.t(0)?.norm(Some(a.s(1)?), None, false, None)
    });
    def(r, "aten::norm.ScalarOpt_dim", |a| {
        a.t(0)?.norm(a.os(1)?, Some(&a.ints(2)?), a.b(3)?, None)
    });
    def(r, "aten::norm.ScalarOpt_dim_dtype", |a| {
        a.t(0)?
            .norm(a.os(1)?, Some(&a.ints(2)?), a.b(3)?, a.dtype(4)?)
    });
    def(r, "aten::linalg_vector_norm", |a| {
        a.t(0)?
            .norm(Some(a.s(1)?), a.oints(2)?.as_deref(), a.b(3)?, a.dtype(4)?)
    });
    def(r, "aten::frobenius_norm.dim", |a| {
        a.t(0)?.norm(None, Some(&a.ints(1)?), a.b(2)?, None)
    });
    def(r, "aten::logsumexp", |a| {
        a.t(0)?.logsumexp(&a.ints(1)?, a.b(2)?)
    });
    def(r, "aten::cumsum", |a| {
        a.t(0)?.cumsum(a.int(1)?, a.dtype(2)?)
    });
    def(r, "aten::cumprod", |a| {
        a.t(0)?.cumprod(a.int(1)?, a.dtype(2)?)
    });
    def(r, "aten::cumsum_", |a| {
        let t = a.t(0)?;
        t.cumsum_(a.int(1)?, a.dtype(2)?)?;
        Ok(t.clone())
    });
    def(r, "aten::cummax", |a| a.t(0)?.cummax(a.int(1)?));
    def(r, "aten::cummin", |a| a.t(0)?.cummin(a.int(1)?));
    def(r, "aten::sort", |a| a.t(0)?.sort(a.int(1)?, a.b(2)?));
    def(r, "aten::sort.stable", |a| a.t(0)?.sort(a.int(2)?, a.b(3)?));
    def(r, "aten::argsort", |a| a.t(0)?.argsort(a.int(1)?, a.b(2)?));
    def(r, "aten::argsort.stable", |a| {
        a.t(0)?.argsort(a.int(2)?, a.b(3)?)
    });
    def(r, "aten::msort", |a| a.t(0)?.msort());
    def(r, "aten::median", |a| a.t(0)?.median());
    def(r, "aten::topk", |a| {
        a.t(0)?.topk(a.int(1)?, a.int(2)?, a.b(3)?, a.b(4)?)
    });
    def(r, "aten::trace", |a| a.t(0)?.trace());
    def(r, "aten::mm", |a| a.t(0)?.mm(a.t(1)?));
    def(r, "aten::bmm", |a| a.t(0)?.bmm(a.t(1)?));
    def(r, "aten::mv", |a| a.t(0)?.mv(a.t(1)?));
    def(r, "aten::dot", |a| a.t(0)?.dot(a.t(1)?));
    def_many(r, &["aten::outer", "aten::ger"], |a| a.t(0)?.outer(a.t(1)?));
    def(r, "aten::matmul", |a| a.t(0)?.matmul(a.t(1)?));
    def(r, "aten::addmm", |a| {
        a.t(0)?.addmm(a.t(1)?, a.t(2)?, a.s(3)?, a.s(4)?)
    });
}
