//! Binning: `histc`, `histogram` (bin count or explicit edges), `bucketize` and `searchsorted`.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Index of the first element of the sorted `seq` that is `>= v` (`right = false`) or `> v`
/// (`right = true`), following `order` (a permutation that sorts `seq`) when given.
fn search(seq: &[f64], order: Option<&[i64]>, v: f64, right: bool) -> i64 {
    let at = |i: usize| match order {
        Some(o) => seq[o[i] as usize],
        None => seq[i],
    };
    // NaN sorts last, as in ATen's comparisons (`!(x >= v)` style).
    let (mut lo, mut hi) = (0usize, seq.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let m = at(mid);
        let go_right = if right {
            m.partial_cmp(&v) != Some(std::cmp::Ordering::Greater)
        } else {
            m < v
        };
        if go_right {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo as i64
}

fn index_result(v: Vec<i64>, sizes: &[i64], out_int32: bool) -> Result<Tensor> {
    let t = Tensor::from_vec(v, sizes)?;
    if out_int32 {
        t.to_dtype(DType::Int32, false)
    } else {
        Ok(t)
    }
}

fn check_searchable(t: &Tensor, what: &str) -> Result<()> {
    if t.dtype() == DType::Bool {
        return Err(Error::runtime(format!(
            "\"searchsorted_out_cpu\" not implemented for 'Bool' ({what})"
        )));
    }
    Ok(())
}

impl Tensor {
    /// `bucketize(boundaries, out_int32, right)`: for each element, the index of its bucket in
    /// the 1-d sorted `boundaries`.
    pub fn bucketize(&self, boundaries: &Tensor, out_int32: bool, right: bool) -> Result<Tensor> {
        if boundaries.dim() != 1 {
            return Err(Error::runtime(format!(
                "boundaries tensor must be 1 dimension, but got dim({})",
                boundaries.dim()
            )));
        }
        check_searchable(self, "input")?;
        let seq = boundaries.contiguous_vec::<f64>()?;
        let v: Vec<i64> = self
            .contiguous_vec::<f64>()?
            .into_iter()
            .map(|x| search(&seq, None, x, right))
            .collect();
        index_result(v, &self.sizes(), out_int32)
    }

    /// `searchsorted(self=sorted_sequence, values, out_int32, right, side, sorter)`: insertion
    /// points of `values` in the innermost dimension of `self` (1-d, or with leading
    /// dimensions matching `values`).
    pub fn searchsorted(
        &self,
        values: &Tensor,
        out_int32: bool,
        right: bool,
        side: Option<&str>,
        sorter: Option<&Tensor>,
    ) -> Result<Tensor> {
        let right = match side {
            None => right,
            Some("left") if !right => false,
            Some("right") => true,
            Some("left") => {
                return Err(Error::runtime(
                    "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True",
                ))
            }
            Some(other) => {
                return Err(Error::runtime(format!(
                    "torch.searchsorted(): side can only be 'left' or 'right' but got {other}"
                )))
            }
        };
        check_searchable(self, "sorted_sequence")?;
        let ss = self.sizes();
        let vs = values.sizes();
        if ss.is_empty() {
            return Err(Error::runtime(
                "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we got boundaries tensor dim(0) and input value's dim(0) numel(1)",
            ));
        }
        if ss.len() > 1 && (vs.len() != ss.len() || vs[..vs.len() - 1] != ss[..ss.len() - 1]) {
            return Err(Error::runtime(format!(
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor {ss:?} and input value tensor {vs:?}"
            )));
        }
        if let Some(s) = sorter {
            if s.sizes() != ss {
                return Err(Error::runtime(
                    "torch.searchsorted(): boundary and sorter must have the same size",
                ));
            }
        }
        let seq = self.contiguous_vec::<f64>()?;
        let order = sorter.map(|s| s.contiguous_vec::<i64>()).transpose()?;
        let row = *ss.last().unwrap_or(&1) as usize;
        if let Some(o) = &order {
            if o.iter().any(|&i| i < 0 || i as usize >= row.max(1)) {
                return Err(Error::runtime(
                    "torch.searchsorted(): sorter index out of range",
                ));
            }
        }
        let vals = values.contiguous_vec::<f64>()?;
        let inner = if vs.is_empty() {
            1
        } else {
            *vs.last().unwrap_or(&1) as usize
        };
        let v: Vec<i64> = vals
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let r = if ss.len() == 1 { 0 } else { i / inner.max(1) };
                let seg = &seq[r * row..(r + 1) * row];
                let ord = order.as_ref().map(|o| &o[r * row..(r + 1) * row]);
                search(seg, ord, x, right)
            })
            .collect();
        index_result(v, &vs, out_int32)
    }

    /// `histc(bins, min, max)`: counts of the elements in `bins` equal-width bins over
    /// `[min, max]` (the data's range when `min == max`); elements outside are ignored.
    pub fn histc(&self, bins: i64, min: f64, max: f64) -> Result<Tensor> {
        let dt = self.dtype();
        if !dt.is_floating_point() {
            return Err(Error::runtime(format!(
                "\"histogram_cpu\" not implemented for '{}'",
                dt.scalar_type_name()
            )));
        }
        if bins <= 0 {
            return Err(Error::runtime("torch.histc(): bins must be > 0"));
        }
        let data = self.contiguous_vec::<f64>()?;
        let (mut lo, mut hi) = (min, max);
        if lo == hi && !data.is_empty() {
            lo = data.iter().copied().fold(f64::INFINITY, f64::min);
            hi = data.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        }
        if lo == hi {
            lo -= 1.0;
            hi += 1.0;
        }
        if !(lo.is_finite() && hi.is_finite()) {
            return Err(Error::runtime(format!(
                "torch.histc(): range of [{lo}, {hi}] is not finite"
            )));
        }
        if lo > hi {
            return Err(Error::runtime("torch.histc(): max must be larger than min"));
        }
        let mut hist = vec![0f64; bins as usize];
        for &x in &data {
            if x >= lo && x <= hi {
                let mut pos = ((x - lo) * bins as f64 / (hi - lo)) as i64;
                if pos == bins {
                    pos -= 1;
                }
                hist[pos as usize] += 1.0;
            }
        }
        Tensor::from_vec(hist, &[bins])?.to_dtype(dt, false)
    }

    /// `histogram(bins, range, weight, density)` with a bin count: `(hist, bin_edges)` over
    /// `range` (or the data's range, widened by 0.5 each way when empty).
    pub fn histogram_bins(
        &self,
        bins: i64,
        range: Option<&[f64]>,
        weight: Option<&Tensor>,
        density: bool,
    ) -> Result<(Tensor, Tensor)> {
        if bins <= 0 {
            return Err(Error::runtime(
                "torch.histogram(): bins must be > 0, but got 0 for dimension 0",
            ));
        }
        self.check_histogram_input(weight)?;
        let data = self.contiguous_vec::<f64>()?;
        let (mut lo, mut hi) = match range {
            Some([a, b]) => (*a, *b),
            Some(_) => {
                return Err(Error::runtime(
                    "torch.histogram(): range should have 2 elements",
                ))
            }
            None if data.is_empty() => (0.0, 0.0),
            None => (
                data.iter().copied().fold(f64::INFINITY, f64::min),
                data.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            ),
        };
        if !(lo.is_finite() && hi.is_finite()) {
            return Err(Error::runtime(format!(
                "torch.histogram(): range of [{lo}, {hi}] is not finite"
            )));
        }
        if lo > hi {
            return Err(Error::runtime(format!(
                "torch.histogram(): min should not exceed max, but got min {lo} max {hi}"
            )));
        }
        if lo == hi {
            lo -= 0.5;
            hi += 0.5;
        }
        let edges = crate::ops::factory::linspace(
            crate::Scalar::Float(lo),
            crate::Scalar::Float(hi),
            bins + 1,
            Some(self.dtype()),
        )?;
        self.histogram_edges(&edges, weight, density)
    }

    fn check_histogram_input(&self, weight: Option<&Tensor>) -> Result<()> {
        let dt = self.dtype();
        if !dt.is_floating_point() {
            return Err(Error::runtime(format!(
                "\"histogram_cpu\" not implemented for '{}'",
                dt.scalar_type_name()
            )));
        }
        if let Some(w) = weight {
            if w.sizes() != self.sizes() {
                return Err(Error::runtime(
                    "torch.histogram(): if weight tensor is provided it should have the same shape as the input tensor excluding its innermost dimension",
                ));
            }
        }
        Ok(())
    }

    /// `histogram(bins=edges, weight, density)`: `(hist, bin_edges)` for explicit, increasing
    /// bin edges; the last bin includes its right edge.
    pub fn histogram_edges(
        &self,
        edges: &Tensor,
        weight: Option<&Tensor>,
        density: bool,
    ) -> Result<(Tensor, Tensor)> {
        self.check_histogram_input(weight)?;
        if edges.dim() != 1 || edges.numel() < 1 {
            return Err(Error::runtime(
                "torch.histogram(): bins tensor should have one dimension and at least 1 entry",
            ));
        }
        if edges.dtype() != self.dtype() {
            return Err(Error::runtime(
                "torch.histogram(): input tensor and bins tensors should have the same dtype",
            ));
        }
        let e = edges.contiguous_vec::<f64>()?;
        let nb = e.len() - 1;
        let data = self.contiguous_vec::<f64>()?;
        let w = weight.map(|w| w.contiguous_vec::<f64>()).transpose()?;
        let mut hist = vec![0f64; nb];
        if nb > 0 {
            let (lo, hi) = (e[0], e[nb]);
            for (i, &x) in data.iter().enumerate() {
                if !(x >= lo && x <= hi) {
                    continue;
                }
                // Last edge <= x, clamped so that x == hi falls in the last bin.
                let pos = (search(&e, None, x, true) - 1).clamp(0, nb as i64 - 1) as usize;
                hist[pos] += w.as_ref().map_or(1.0, |w| w[i]);
            }
        }
        if density {
            let total: f64 = hist.iter().sum();
            for (k, h) in hist.iter_mut().enumerate() {
                *h /= total * (e[k + 1] - e[k]);
            }
        }
        let hist = Tensor::from_vec(hist, &[nb as i64])?.to_dtype(self.dtype(), false)?;
        Ok((hist, edges.clone_tensor()?))
    }
}

impl Tensor {
    /// `histogramdd(bins, range, weight, density)` with a bin count per dimension: the points
    /// are the rows of `self` reshaped to `[-1, D]`; each dimension's edges span `range[2k..2k+2]`
    /// or the data's extent (widened by 0.5 each way when empty).
    pub fn histogramdd_bins(
        &self,
        bins: &[i64],
        range: Option<&[f64]>,
        weight: Option<&Tensor>,
        density: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        let d = self.histogramdd_dims()?;
        if bins.len() != d {
            return Err(Error::runtime(format!(
                "torch.histogramdd(): expected 1 bin count per dimension of the input, but got {} bin counts for {d} dimensions",
                bins.len()
            )));
        }
        if let Some(r) = range {
            if r.len() != 2 * d {
                return Err(Error::runtime(format!(
                    "torch.histogramdd(): for a {d}-dimensional histogram range should have {} elements, but got {}",
                    2 * d,
                    r.len()
                )));
            }
        }
        let pts = self.contiguous_vec::<f64>()?;
        let mut edges = Vec::with_capacity(d);
        for (k, &b) in bins.iter().enumerate() {
            if b <= 0 {
                return Err(Error::runtime(format!(
                    "torch.histogramdd(): bins must be > 0, but got {b} for dimension {k}"
                )));
            }
            let (mut lo, mut hi) = match range {
                Some(r) => (r[2 * k], r[2 * k + 1]),
                None => pts
                    .iter()
                    .skip(k)
                    .step_by(d)
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
                        (lo.min(x), hi.max(x))
                    }),
            };
            if lo > hi && range.is_none() {
                (lo, hi) = (0.0, 0.0);
            }
            if !(lo.is_finite() && hi.is_finite()) {
                return Err(Error::runtime(format!(
                    "torch.histogramdd(): range of [{lo}, {hi}] is not finite"
                )));
            }
            if lo > hi {
                return Err(Error::runtime(format!(
                    "torch.histogramdd(): min should not exceed max, but got min {lo} max {hi} for dimension {k}"
                )));
            }
            if lo == hi {
                lo -= 0.5;
                hi += 0.5;
            }
            edges.push(crate::ops::factory::linspace(
                crate::Scalar::Float(lo),
                crate::Scalar::Float(hi),
                b + 1,
                Some(self.dtype()),
            )?);
        }
        self.histogramdd_edges(&edges, weight, density)
    }

    /// The number of dimensions `D` of `histogramdd`'s points (the innermost size).
    fn histogramdd_dims(&self) -> Result<usize> {
        if self.dim() < 2 {
            return Err(Error::runtime(
                "torch.histogramdd(): input tensor should have at least 2 dimensions, but got 1",
            ));
        }
        if !self.dtype().is_floating_point() {
            return Err(Error::runtime(format!(
                "\"histogramdd\" not implemented for '{}'",
                self.dtype().scalar_type_name()
            )));
        }
        Ok(*self.sizes().last().unwrap_or(&1) as usize)
    }

    /// `histogramdd(bins=edges, weight, density)`: the `D`-dimensional histogram of the rows of
    /// `self` (`[-1, D]`) with explicit increasing edges per dimension.
    pub fn histogramdd_edges(
        &self,
        edges: &[Tensor],
        weight: Option<&Tensor>,
        density: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        let d = self.histogramdd_dims()?;
        if edges.len() != d {
            return Err(Error::runtime(format!(
                "torch.histogramdd(): expected {d} sequences of bin edges for each of the {d} dimensions of the input, but got {}",
                edges.len()
            )));
        }
        let pts = self.contiguous_vec::<f64>()?;
        let n = pts.len().checked_div(d).unwrap_or(0);
        let w = match weight {
            Some(w) if w.numel() != n => {
                return Err(Error::runtime(
                    "torch.histogramdd(): if weight tensor is provided it should have the same shape as the input tensor excluding its innermost dimension",
                ))
            }
            Some(w) => Some(w.contiguous_vec::<f64>()?),
            None => None,
        };
        let mut e = Vec::with_capacity(d);
        for t in edges {
            if t.dim() != 1 || t.numel() < 1 || t.dtype() != self.dtype() {
                return Err(Error::runtime(
                    "torch.histogramdd(): bins tensors should be 1-dimensional, non-empty and of the input's dtype",
                ));
            }
            e.push(t.contiguous_vec::<f64>()?);
        }
        let nb: Vec<usize> = e.iter().map(|v| v.len() - 1).collect();
        let total: usize = nb.iter().product();
        let mut hist = vec![0f64; total];
        'points: for i in 0..n {
            let mut flat = 0usize;
            for k in 0..d {
                let x = pts[i * d + k];
                let ek = &e[k];
                if nb[k] == 0 || !(x >= ek[0] && x <= ek[nb[k]]) {
                    continue 'points;
                }
                let pos = (search(ek, None, x, true) - 1).clamp(0, nb[k] as i64 - 1) as usize;
                flat = flat * nb[k] + pos;
            }
            hist[flat] += w.as_ref().map_or(1.0, |w| w[i]);
        }
        if density {
            let sum: f64 = hist.iter().sum();
            for (flat, h) in hist.iter_mut().enumerate() {
                let mut rest = flat;
                let mut volume = 1.0;
                for k in (0..d).rev() {
                    let pos = rest % nb[k];
                    rest /= nb[k];
                    volume *= e[k][pos + 1] - e[k][pos];
                }
                *h /= sum * volume;
            }
        }
        let shape: Vec<i64> = nb.iter().map(|&b| b as i64).collect();
        let hist = Tensor::from_vec(hist, &shape)?.to_dtype(self.dtype(), false)?;
        let edges = edges
            .iter()
            .map(Tensor::clone_tensor)
            .collect::<Result<_>>()?;
        Ok((hist, edges))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binning() {
        let b = Tensor::from_vec(vec![1i64, 3, 5, 7], &[4]).unwrap();
        let x = Tensor::from_vec(vec![3i64, 6, 9], &[3]).unwrap();
        assert_eq!(
            x.bucketize(&b, false, false).unwrap().to_vec::<i64>(),
            vec![1, 3, 4]
        );
        assert_eq!(
            x.bucketize(&b, false, true).unwrap().to_vec::<i64>(),
            vec![2, 3, 4]
        );
        let s = b
            .searchsorted(&x, true, false, Some("right"), None)
            .unwrap();
        assert_eq!(s.dtype(), DType::Int32);
        let f = Tensor::from_vec(vec![2.0f32, 2.0, 2.0], &[3]).unwrap();
        assert_eq!(
            f.histc(4, 0.0, 0.0).unwrap().to_vec::<f32>(),
            vec![0., 0., 3., 0.]
        );
        let (h, e) = f.histogram_bins(4, None, None, false).unwrap();
        assert_eq!(h.to_vec::<f32>(), vec![0., 0., 3., 0.]);
        assert_eq!(e.to_vec::<f32>(), vec![1.5, 1.75, 2.0, 2.25, 2.5]);
        assert!(x.histc(3, 0.0, 1.0).is_err());
    }
}
