//! Order statistics and NaN-skipping reductions: `median(dim)`, `nanmedian`, `kthvalue`,
//! `mode`, `quantile`/`nanquantile`, `nansum`, `nanmean`, `aminmax`, and binning (`histc`,
//! `histogram`, `bucketize`, `searchsorted`), and `unique` in its forms.

use ts_tensor::ops::order_statistics::QuantileInterpolation;
use ts_tensor::promote::scalar_tensor_dtype;
use ts_tensor::{Scalar, Tensor};

use super::{def, Args};
use crate::registry::Registry;

/// `quantile`/`nanquantile` with `q` a tensor (`scalar_q = false`) or a float.
fn quantile(a: &Args, scalar_q: bool, ignore_nan: bool) -> ts_tensor::Result<Tensor> {
    let t = a.t(0)?;
    let q = if scalar_q {
        Tensor::scalar_tensor(Scalar::Float(a.f(1)?), t.dtype())?
    } else {
        a.t(1)?.clone()
    };
    let mode = QuantileInterpolation::parse(a.str(4)?)?;
    t.quantile(&q, a.oint(2)?, a.b(3)?, mode, ignore_nan)
}

/// Registers the order-statistics operators.
pub fn register(r: &Registry) {
    def(r, "aten::median.dim", |a| {
        a.t(0)?.median_dim(a.int(1)?, a.b(2)?)
    });
    def(r, "aten::nanmedian", |a| a.t(0)?.nanmedian());
    def(r, "aten::nanmedian.dim", |a| {
        a.t(0)?.nanmedian_dim(a.int(1)?, a.b(2)?)
    });
    def(r, "aten::kthvalue", |a| {
        a.t(0)?.kthvalue(a.int(1)?, a.int(2)?, a.b(3)?)
    });
    def(r, "aten::mode", |a| a.t(0)?.mode(a.int(1)?, a.b(2)?));
    def(r, "aten::quantile", |a| quantile(a, false, false));
    def(r, "aten::quantile.scalar", |a| quantile(a, true, false));
    def(r, "aten::nanquantile", |a| quantile(a, false, true));
    def(r, "aten::nanquantile.scalar", |a| quantile(a, true, true));
    def(r, "aten::nansum", |a| {
        a.t(0)?.nansum(a.oints(1)?.as_deref(), a.b(2)?, a.dtype(3)?)
    });
    def(r, "aten::nanmean", |a| {
        a.t(0)?
            .nanmean(a.oints(1)?.as_deref(), a.b(2)?, a.dtype(3)?)
    });
    def(r, "aten::aminmax", |a| a.t(0)?.aminmax(a.oint(1)?, a.b(2)?));
    register_binning(r);
    def(r, "aten::cov", |a| {
        a.t(0)?.cov(a.int(1)?, a.ot(2)?, a.ot(3)?)
    });
    def(r, "aten::corrcoef", |a| a.t(0)?.corrcoef());
    def(r, "aten::_unique2", |a| a.t(0)?.unique2(a.b(2)?, a.b(3)?));
    def(r, "aten::_unique", |a| {
        let (v, inv, _) = a.t(0)?.unique2(a.b(2)?, false)?;
        Ok((v, inv))
    });
    def(r, "aten::unique_dim", |a| {
        a.t(0)?.unique_dim(a.int(1)?, a.b(3)?, a.b(4)?)
    });
    def(r, "aten::unique_consecutive", |a| {
        a.t(0)?.unique_consecutive(a.b(1)?, a.b(2)?, a.oint(3)?)
    });
    def(r, "aten::unique_dim_consecutive", |a| {
        a.t(0)?
            .unique_consecutive(a.b(2)?, a.b(3)?, Some(a.int(1)?))
    });
}

/// A Python number as a 0-d tensor of its natural dtype.
fn number_tensor(s: Scalar) -> ts_tensor::Result<Tensor> {
    Tensor::scalar_tensor(s, scalar_tensor_dtype(s))
}

/// An optional `float[]` argument.
fn opt_floats(a: &Args, i: usize) -> ts_tensor::Result<Option<Vec<f64>>> {
    if a.v(i)?.is_none() {
        Ok(None)
    } else {
        a.floats(i).map(Some)
    }
}

fn register_binning(r: &Registry) {
    def(r, "aten::histc", |a| {
        a.t(0)?.histc(a.int(1)?, a.s(2)?.to_f64(), a.s(3)?.to_f64())
    });
    def(r, "aten::histogram.bin_ct", |a| {
        let range = opt_floats(a, 2)?;
        a.t(0)?
            .histogram_bins(a.int(1)?, range.as_deref(), a.ot(3)?, a.b(4)?)
    });
    def(r, "aten::histogram.bins_tensor", |a| {
        a.t(0)?.histogram_edges(a.t(1)?, a.ot(2)?, a.b(3)?)
    });
    def(r, "aten::histogramdd", |a| {
        a.t(0)?
            .histogramdd_bins(&a.ints(1)?, opt_floats(a, 2)?.as_deref(), a.ot(3)?, a.b(4)?)
    });
    def(r, "aten::histogramdd.int_bins", |a| {
        let t = a.t(0)?;
        let d = t.sizes().last().copied().unwrap_or(1).max(0) as usize;
        t.histogramdd_bins(
            &vec![a.int(1)?; d],
            opt_floats(a, 2)?.as_deref(),
            a.ot(3)?,
            a.b(4)?,
        )
    });
    def(r, "aten::histogramdd.TensorList_bins", |a| {
        a.t(0)?.histogramdd_edges(&a.tensors(1)?, a.ot(3)?, a.b(4)?)
    });
    // The pieces `torch.histogramdd` decomposes into: the edges alone, and the counts from
    // bin counts or from explicit edges.
    def(r, "aten::_histogramdd_bin_edges", |a| {
        let (_, edges) = a.t(0)?.histogramdd_bins(
            &a.ints(1)?,
            opt_floats(a, 2)?.as_deref(),
            a.ot(3)?,
            a.b(4)?,
        )?;
        Ok(edges)
    });
    def(r, "aten::_histogramdd_from_bin_cts", |a| {
        let (hist, _) = a.t(0)?.histogramdd_bins(
            &a.ints(1)?,
            opt_floats(a, 2)?.as_deref(),
            a.ot(3)?,
            a.b(4)?,
        )?;
        Ok(hist)
    });
    def(r, "aten::_histogramdd_from_bin_tensors", |a| {
        let (hist, _) = a
            .t(0)?
            .histogramdd_edges(&a.tensors(1)?, a.ot(2)?, a.b(3)?)?;
        Ok(hist)
    });
    def(r, "aten::bucketize.Tensor", |a| {
        a.t(0)?.bucketize(a.t(1)?, a.b(2)?, a.b(3)?)
    });
    def(r, "aten::bucketize.Scalar", |a| {
        number_tensor(a.s(0)?)?.bucketize(a.t(1)?, a.b(2)?, a.b(3)?)
    });
    def(r, "aten::searchsorted.Tensor", |a| {
        a.t(0)?
            .searchsorted(a.t(1)?, a.b(2)?, a.b(3)?, a.ostr(4)?, a.ot(5)?)
    });
    def(r, "aten::searchsorted.Scalar", |a| {
        let v = number_tensor(a.s(1)?)?;
        a.t(0)?
            .searchsorted(&v, a.b(2)?, a.b(3)?, a.ostr(4)?, a.ot(5)?)
    });
}
