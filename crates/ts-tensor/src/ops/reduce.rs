//! Reductions over all or given dimensions, with `keepdim` and `dtype`: sum, mean, prod,
//! amax/amin, max/min (values and indices), argmax/argmin, all/any, var/std, norm, logsumexp,
//! count_nonzero.
//!
//! Floating reductions accumulate in f64 and integer ones in i64 (wrapping), then round once to
//! the result dtype. Dimension lists follow ATen: `None` or an empty list reduces everything.

use crate::complex::Complex64;
use crate::config::default_dtype;
use crate::cpu::iter::kernel_dtype;
use crate::cpu::num::{Elem, OpNum};
use crate::cpu::reduce::{reduce, OutPtr, ReduceShape};
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::scalar::Scalar;
use crate::shape::wrap_dims;
use crate::tensor::{Tensor, TensorMeta};

/// The bit mask of reduced dimensions (`None` or empty: all of them).
pub(crate) fn reduce_mask(ndim: usize, dims: Option<&[i64]>) -> Result<u64> {
    match dims {
        None | Some([]) => Ok(if ndim == 0 { 0 } else { (1u64 << ndim) - 1 }),
        Some(d) => {
            let (_, mask) = wrap_dims(d, ndim)?;
            // A 0-dim tensor accepts dim 0/-1 but has nothing to reduce.
            Ok(if ndim == 0 { 0 } else { mask })
        }
    }
}

/// Allocates a contiguous tensor of `shape.keep_shape` and views it with `shape.out_shape`.
fn alloc_out(rs: &ReduceShape, dtype: DType) -> Result<Tensor> {
    Tensor::zeros(&rs.keep_shape, dtype)
}

fn finish_out(out: Tensor, rs: &ReduceShape, result: DType) -> Result<Tensor> {
    let r = out.view(&rs.out_shape)?;
    r.to_dtype(result, false)
}

fn float_fold<T: Elem>(
    m: &TensorMeta,
    rs: &ReduceShape,
    init: f64,
    step: impl Fn(f64, f64) -> f64 + Sync,
    combine: impl Fn(f64, f64) -> f64 + Sync,
    finish: impl Fn(f64) -> f64 + Sync,
) -> Result<Tensor> {
    let out = alloc_out(rs, DType::Float64)?;
    let op = OutPtr(out.meta().data_ptr() as *mut f64);
    reduce::<T, f64, _, _, _>(
        m,
        rs,
        init,
        |a, x, _| step(a, x.to_f64()),
        combine,
        |k, a| {
            // SAFETY: `k` indexes the contiguous keepdim output, written once per position.
            unsafe { op.write(k, finish(a)) }
        },
    );
    Ok(out)
}

/// A complex reduction accumulated in complex128 (the result is complex128, cast by the caller).
fn complex_fold<T: Elem>(
    m: &TensorMeta,
    rs: &ReduceShape,
    init: Complex64,
    step: impl Fn(Complex64, Complex64) -> Complex64 + Sync,
    finish: impl Fn(Complex64) -> Complex64 + Sync,
) -> Result<Tensor> {
    let out = alloc_out(rs, DType::Complex128)?;
    let op = OutPtr(out.meta().data_ptr() as *mut Complex64);
    reduce::<T, Complex64, _, _, _>(
        m,
        rs,
        init,
        |a, x, _| {
            let (re, im) = crate::Element::to_c64(x);
            step(a, Complex64::new(re, im))
        },
        &step,
        |k, a| {
            // SAFETY: `k` indexes the contiguous keepdim output, written once per position.
            unsafe { op.write(k, finish(a)) }
        },
    );
    Ok(out)
}

fn int_fold<T: Elem>(
    m: &TensorMeta,
    rs: &ReduceShape,
    init: i64,
    step: impl Fn(i64, i64) -> i64 + Sync,
) -> Result<Tensor> {
    let out = alloc_out(rs, DType::Int64)?;
    let op = OutPtr(out.meta().data_ptr() as *mut i64);
    reduce::<T, i64, _, _, _>(
        m,
        rs,
        init,
        |a, x, _| step(a, x.to_i64()),
        &step,
        |k, a| {
            // SAFETY: `k` indexes the contiguous keepdim output, written once per position.
            unsafe { op.write(k, a) }
        },
    );
    Ok(out)
}

/// Which of the arg-reductions to run.
#[derive(Clone, Copy, PartialEq)]
enum Extreme {
    Max,
    Min,
}

impl Tensor {
    fn prepare(&self, dims: Option<&[i64]>, keepdim: bool) -> Result<(TensorMeta, ReduceShape)> {
        let m = self.meta_snapshot();
        let mask = reduce_mask(m.dim(), dims)?;
        let rs = ReduceShape::new(&m.sizes, mask, keepdim);
        Ok((m, rs))
    }

    /// `sum(dim, keepdim, dtype)`: integers and bool sum as int64 unless `dtype` says otherwise.
    pub fn sum(&self, dims: Option<&[i64]>, keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
        let result = dtype.unwrap_or_else(|| {
            let d = self.dtype();
            if d.is_floating_point() || d.is_complex() {
                d
            } else {
                DType::Int64
            }
        });
        let x = self.cast_if_needed(kernel_dtype(result))?;
        let (m, rs) = x.prepare(dims, keepdim)?;
        let out = if result.is_complex() {
            dispatch_complex!(m.dtype, "sum_cpu", T => complex_fold::<T>(&m, &rs, Complex64::zero(), |a, x| a + x, |a| a)?)
        } else if result.is_floating_point() {
            dispatch_compute_float!(m.dtype, "sum_cpu", T => float_fold::<T>(&m, &rs, 0.0, |a, x| a + x, |a, b| a + b, |a| a)?)
        } else if m.dtype == DType::Bool {
            int_fold::<bool>(&m, &rs, 0, |a, x| a.wrapping_add(x))?
        } else {
            dispatch_int!(m.dtype, "sum_cpu", T => int_fold::<T>(&m, &rs, 0, |a, x| a.wrapping_add(x))?)
        };
        finish_out(out, &rs, result)
    }

    /// `mean(dim, keepdim, dtype)`: floating inputs (or an explicit floating `dtype`) only.
    pub fn mean(
        &self,
        dims: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        let result = match dtype {
            Some(d) => d,
            None => {
                let d = self.dtype();
                if !d.is_floating_point() && !d.is_complex() {
                    return Err(Error::new(
                        ErrorKind::NotImplementedError,
                        format!(
                            "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {}",
                            d.scalar_type_name()
                        ),
                    ));
                }
                d
            }
        };
        if !result.is_floating_point() && !result.is_complex() {
            return Err(Error::runtime(format!(
                "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex dtype. Got: {}",
                result.scalar_type_name()
            )));
        }
        let x = self.cast_if_needed(kernel_dtype(result))?;
        let (m, rs) = x.prepare(dims, keepdim)?;
        let n = rs.inner_numel as f64;
        if result.is_complex() {
            let out = dispatch_complex!(m.dtype, "mean_cpu", T => complex_fold::<T>(&m, &rs, Complex64::zero(), |a, x| a + x, |a| a.scale(1.0 / n))?);
            return finish_out(out, &rs, result);
        }
        let out = dispatch_compute_float!(m.dtype, "mean_cpu", T => float_fold::<T>(&m, &rs, 0.0, |a, x| a + x, |a, b| a + b, |a| a / n)?);
        finish_out(out, &rs, result)
    }

    /// `prod(dim, keepdim, dtype)` (`dim = None` multiplies everything).
    pub fn prod(&self, dim: Option<i64>, keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
        let result = dtype.unwrap_or_else(|| {
            let d = self.dtype();
            if d.is_floating_point() || d.is_complex() {
                d
            } else {
                DType::Int64
            }
        });
        let x = self.cast_if_needed(kernel_dtype(result))?;
        let dims_buf;
        let dims = match dim {
            Some(d) => {
                dims_buf = [d];
                Some(&dims_buf[..])
            }
            None => None,
        };
        let (m, rs) = x.prepare(dims, keepdim && dim.is_some())?;
        let out = if result.is_complex() {
            dispatch_complex!(m.dtype, "prod_cpu", T => complex_fold::<T>(&m, &rs, Complex64::one(), |a, x| a * x, |a| a)?)
        } else if result.is_floating_point() {
            dispatch_compute_float!(m.dtype, "prod_cpu", T => float_fold::<T>(&m, &rs, 1.0, |a, x| a * x, |a, b| a * b, |a| a)?)
        } else if m.dtype == DType::Bool {
            int_fold::<bool>(&m, &rs, 1, |a, x| a.wrapping_mul(x))?
        } else {
            dispatch_int!(m.dtype, "prod_cpu", T => int_fold::<T>(&m, &rs, 1, |a, x| a.wrapping_mul(x))?)
        };
        finish_out(out, &rs, result)
    }

    fn check_nonempty(
        &self,
        name: &str,
        rs: &ReduceShape,
        m: &TensorMeta,
        dims: Option<&[i64]>,
    ) -> Result<()> {
        if m.numel() != 0 {
            return Ok(());
        }
        let full = matches!(dims, None | Some([]));
        if full {
            let tail = if name == "argmax" || name == "argmin" {
                ""
            } else {
                " Specify the reduction dim with the 'dim' argument."
            };
            let kind = if tail.is_empty() {
                ErrorKind::IndexError
            } else {
                ErrorKind::RuntimeError
            };
            return Err(Error::new(
                kind,
                format!("{name}(): Expected reduction dim to be specified for input.numel() == 0.{tail}"),
            ));
        }
        for (d, &s) in rs.inner_shape.iter().enumerate() {
            if s == 0 && rs.keep_shape[d] == 1 && m.sizes[d] == 0 {
                return Err(Error::new(
                    ErrorKind::IndexError,
                    format!("{name}(): Expected reduction dim {d} to have non-zero size."),
                ));
            }
        }
        Ok(())
    }

    fn extreme_values(
        &self,
        name: &str,
        dims: Option<&[i64]>,
        keepdim: bool,
        which: Extreme,
    ) -> Result<Tensor> {
        let result = self.dtype();
        let x = self.cast_if_needed(kernel_dtype(result))?;
        let (m, rs) = x.prepare(dims, keepdim)?;
        self.check_nonempty(name, &rs, &m, dims)?;
        let out = alloc_out(&rs, m.dtype)?;
        let optr = out.meta().data_ptr();
        dispatch_compute!(m.dtype, T => {
            let op = OutPtr(optr as *mut T);
            reduce::<T, (T, bool), _, _, _>(
                &m,
                &rs,
                (T::default(), false),
                |acc, x, _| pick(acc, x, which),
                |a, b| if b.1 { pick(a, b.0, which) } else { a },
                |k, acc| {
                    // SAFETY: `k` indexes the contiguous keepdim output.
                    unsafe { op.write(k, acc.0) }
                },
            )
        });
        finish_out(out, &rs, result)
    }

    /// `amax(dim, keepdim)`: the largest value over `dims` (NaN propagates).
    pub fn amax(&self, dims: &[i64], keepdim: bool) -> Result<Tensor> {
        self.extreme_values("amax", Some(dims), keepdim, Extreme::Max)
    }

    /// `amin(dim, keepdim)`.
    pub fn amin(&self, dims: &[i64], keepdim: bool) -> Result<Tensor> {
        self.extreme_values("amin", Some(dims), keepdim, Extreme::Min)
    }

    /// `max()`: the largest element as a 0-dim tensor (NaN propagates).
    pub fn max(&self) -> Result<Tensor> {
        self.extreme_values("max", None, false, Extreme::Max)
    }

    /// `min()`.
    pub fn min(&self) -> Result<Tensor> {
        self.extreme_values("min", None, false, Extreme::Min)
    }

    fn extreme_with_index(
        &self,
        name: &str,
        dim: Option<i64>,
        keepdim: bool,
        which: Extreme,
    ) -> Result<(Tensor, Tensor)> {
        let result = self.dtype();
        let x = self.cast_if_needed(kernel_dtype(result))?;
        let dims_buf;
        let dims = match dim {
            Some(d) => {
                dims_buf = [d];
                Some(&dims_buf[..])
            }
            None => None,
        };
        let (m, rs) = x.prepare(dims, keepdim)?;
        self.check_nonempty(name, &rs, &m, dims)?;
        let vals = alloc_out(&rs, m.dtype)?;
        let idxs = alloc_out(&rs, DType::Int64)?;
        let vptr = vals.meta().data_ptr();
        let iptr = OutPtr(idxs.meta().data_ptr() as *mut i64);
        dispatch_compute!(m.dtype, T => {
            let vp = OutPtr(vptr as *mut T);
            reduce::<T, (T, usize, bool), _, _, _>(
                &m,
                &rs,
                (T::default(), 0, false),
                |acc, x, pos| pick_index(acc, (x, pos, true), which),
                |a, b| if b.2 { pick_index(a, b, which) } else { a },
                |k, acc| {
                    // SAFETY: `k` indexes the contiguous keepdim outputs.
                    unsafe {
                        vp.write(k, acc.0);
                        iptr.write(k, acc.1 as i64);
                    }
                },
            )
        });
        Ok((
            finish_out(vals, &rs, result)?,
            finish_out(idxs, &rs, DType::Int64)?,
        ))
    }

    /// `max(dim, keepdim)`: values and the index of the first maximum (a NaN counts as the
    /// maximum).
    pub fn max_dim(&self, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        self.extreme_with_index("max", Some(dim), keepdim, Extreme::Max)
    }

    /// `min(dim, keepdim)`: values and indices.
    pub fn min_dim(&self, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        self.extreme_with_index("min", Some(dim), keepdim, Extreme::Min)
    }

    /// `argmax(dim, keepdim)`: index of the first maximum (over the flattened tensor when `dim`
    /// is `None`).
    pub fn argmax(&self, dim: Option<i64>, keepdim: bool) -> Result<Tensor> {
        self.arg_extreme("argmax", dim, keepdim, Extreme::Max)
    }

    /// `argmin(dim, keepdim)`.
    pub fn argmin(&self, dim: Option<i64>, keepdim: bool) -> Result<Tensor> {
        self.arg_extreme("argmin", dim, keepdim, Extreme::Min)
    }

    fn arg_extreme(
        &self,
        name: &str,
        dim: Option<i64>,
        keepdim: bool,
        which: Extreme,
    ) -> Result<Tensor> {
        match dim {
            Some(_) => Ok(self.extreme_with_index(name, dim, keepdim, which)?.1),
            None => {
                let flat = self.reshape(&[-1])?;
                let (_, i) = flat.extreme_with_index(name, None, false, which)?;
                if keepdim {
                    let ones: Vec<i64> = vec![1; self.dim()];
                    return i.reshape(&ones);
                }
                Ok(i)
            }
        }
    }

    fn bool_reduce(&self, dims: Option<&[i64]>, keepdim: bool, all: bool) -> Result<Tensor> {
        let result = if self.dtype() == DType::UInt8 {
            DType::UInt8
        } else {
            DType::Bool
        };
        let x = self.cast_if_needed(DType::Bool)?;
        let (m, rs) = x.prepare(dims, keepdim)?;
        let out = alloc_out(&rs, DType::Bool)?;
        let op = OutPtr(out.meta().data_ptr() as *mut bool);
        if all {
            reduce::<bool, bool, _, _, _>(
                &m,
                &rs,
                true,
                |a, x, _| a && x,
                |a, b| a && b,
                |k, a| {
                    // SAFETY: `k` indexes the contiguous keepdim output.
                    unsafe { op.write(k, a) }
                },
            );
        } else {
            reduce::<bool, bool, _, _, _>(
                &m,
                &rs,
                false,
                |a, x, _| a || x,
                |a, b| a || b,
                |k, a| {
                    // SAFETY: `k` indexes the contiguous keepdim output.
                    unsafe { op.write(k, a) }
                },
            );
        }
        finish_out(out, &rs, result)
    }

    /// `all()` / `all(dim, keepdim)`: true when every element is nonzero (uint8 in, uint8 out).
    pub fn all(&self, dims: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
        self.bool_reduce(dims, keepdim, true)
    }

    /// `any()` / `any(dim, keepdim)`.
    pub fn any(&self, dims: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
        self.bool_reduce(dims, keepdim, false)
    }

    /// `count_nonzero(dims)`: int64 counts.
    pub fn count_nonzero(&self, dims: Option<&[i64]>) -> Result<Tensor> {
        let x = self.cast_if_needed(DType::Bool)?;
        let (m, rs) = x.prepare(dims, false)?;
        let out = int_fold::<bool>(&m, &rs, 0, |a, x| a + x)?;
        finish_out(out, &rs, DType::Int64)
    }

    fn var_impl(
        &self,
        dims: Option<&[i64]>,
        correction: Option<f64>,
        keepdim: bool,
        sqrt: bool,
    ) -> Result<Tensor> {
        let dt = self.dtype();
        if !dt.is_floating_point() {
            return Err(Error::new(
                ErrorKind::NotImplementedError,
                "std and var only support floating point and complex dtypes",
            ));
        }
        let correction = correction.unwrap_or(1.0);
        let x = self.cast_if_needed(kernel_dtype(dt))?;
        let (m, rs) = x.prepare(dims, keepdim)?;
        let out = alloc_out(&rs, DType::Float64)?;
        let op = OutPtr(out.meta().data_ptr() as *mut f64);
        dispatch_compute_float!(m.dtype, "std_var_cpu", T => {
            reduce::<T, (f64, f64, f64), _, _, _>(
                &m,
                &rs,
                (0.0, 0.0, 0.0),
                |(n, mean, m2), x, _| {
                    let v = x.to_f64();
                    let n1 = n + 1.0;
                    let d = v - mean;
                    let mean1 = mean + d / n1;
                    (n1, mean1, m2 + d * (v - mean1))
                },
                |a, b| {
                    if a.0 == 0.0 {
                        return b;
                    }
                    if b.0 == 0.0 {
                        return a;
                    }
                    let n = a.0 + b.0;
                    let d = b.1 - a.1;
                    (n, a.1 + d * b.0 / n, a.2 + b.2 + d * d * a.0 * b.0 / n)
                },
                |k, (n, _, m2)| {
                    let v = m2 / (n - correction).max(0.0);
                    // SAFETY: `k` indexes the contiguous keepdim output.
                    unsafe { op.write(k, if sqrt { v.sqrt() } else { v }) }
                },
            )
        });
        finish_out(out, &rs, dt)
    }

    /// `var(dim, correction, keepdim)`: variance with `correction` (default 1, Bessel's).
    pub fn var(
        &self,
        dims: Option<&[i64]>,
        correction: Option<f64>,
        keepdim: bool,
    ) -> Result<Tensor> {
        self.var_impl(dims, correction, keepdim, false)
    }

    /// `std(dim, correction, keepdim)`.
    pub fn std(
        &self,
        dims: Option<&[i64]>,
        correction: Option<f64>,
        keepdim: bool,
    ) -> Result<Tensor> {
        self.var_impl(dims, correction, keepdim, true)
    }

    /// `var_mean(dim, correction, keepdim)`: `(var, mean)`.
    pub fn var_mean(
        &self,
        dims: Option<&[i64]>,
        correction: Option<f64>,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        Ok((
            self.var(dims, correction, keepdim)?,
            self.mean(dims, keepdim, None)?,
        ))
    }

    /// `std_mean(dim, correction, keepdim)`: `(std, mean)`.
    pub fn std_mean(
        &self,
        dims: Option<&[i64]>,
        correction: Option<f64>,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        Ok((
            self.std(dims, correction, keepdim)?,
            self.mean(dims, keepdim, None)?,
        ))
    }

    /// `linalg.vector_norm(ord, dim, keepdim, dtype)` (and `norm(p, dim, keepdim)`): `p` of 2
    /// (default), 1, ±inf, 0 (count of nonzeros) or any other power.
    pub fn norm(
        &self,
        p: Option<Scalar>,
        dims: Option<&[i64]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        let dt = self.dtype();
        if dt.is_complex() {
            // The norm of a complex vector is the norm of its magnitudes (a real result).
            return self
                .abs()?
                .norm(p, dims, keepdim, dtype.map(|d| d.to_real()));
        }
        if !dt.is_floating_point() {
            return Err(Error::new(
                ErrorKind::NotImplementedError,
                format!(
                    "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}",
                    dt.scalar_type_name()
                ),
            ));
        }
        let result = dtype.unwrap_or(dt);
        let p = p.map(|s| s.to_f64()).unwrap_or(2.0);
        let x = self.cast_if_needed(kernel_dtype(result))?;
        let (m, rs) = x.prepare(dims, keepdim)?;
        if p.is_infinite() && m.numel() == 0 {
            self.check_nonempty("linalg.vector_norm", &rs, &m, dims)?;
        }
        let out = dispatch_compute_float!(m.dtype, "linalg_vector_norm_cpu", T => {
            if p == 2.0 {
                float_fold::<T>(&m, &rs, 0.0, |a, x| a + x * x, |a, b| a + b, f64::sqrt)?
            } else if p == 1.0 {
                float_fold::<T>(&m, &rs, 0.0, |a, x| a + x.abs(), |a, b| a + b, |a| a)?
            } else if p == f64::INFINITY {
                float_fold::<T>(&m, &rs, 0.0, |a, x| nan_max(a, x.abs()), nan_max, |a| a)?
            } else if p == f64::NEG_INFINITY {
                float_fold::<T>(&m, &rs, f64::INFINITY, |a, x| nan_min(a, x.abs()), nan_min, |a| a)?
            } else if p == 0.0 {
                float_fold::<T>(&m, &rs, 0.0, |a, x| a + if x != 0.0 { 1.0 } else { 0.0 }, |a, b| a + b, |a| a)?
            } else {
                float_fold::<T>(&m, &rs, 0.0, move |a, x| a + x.abs().powf(p), |a, b| a + b, move |a| a.powf(1.0 / p))?
            }
        });
        finish_out(out, &rs, result)
    }

    /// `logsumexp(dim, keepdim)`: `log(sum(exp(x)))` computed stably; integers promote to the
    /// default dtype.
    pub fn logsumexp(&self, dims: &[i64], keepdim: bool) -> Result<Tensor> {
        let x = if self.dtype().is_floating_point() {
            self.clone()
        } else {
            self.to_dtype(default_dtype(), false)?
        };
        if x.numel() == 0 {
            return x.exp()?.sum(Some(dims), keepdim, None)?.log();
        }
        let maxes = x.amax(dims, true)?;
        let finite = maxes.isinf()?.logical_not()?;
        let zeros = maxes.mul_scalar(Scalar::Int(0))?;
        let safe = crate::ops::ternary::where_(
            &finite,
            crate::promote::Operand::Tensor(&maxes),
            crate::promote::Operand::Tensor(&zeros.nan_to_num(Some(0.0), None, None)?),
        )?;
        let s = x
            .sub(&safe, Scalar::Int(1))?
            .exp()?
            .sum(Some(dims), true, None)?
            .log()?;
        let r = s.add(&safe, Scalar::Int(1))?;
        if keepdim {
            Ok(r)
        } else {
            let (_, mask) = wrap_dims(dims, self.dim())?;
            let shape: Vec<i64> = r
                .sizes()
                .iter()
                .enumerate()
                .filter(|(d, _)| mask & (1 << d) == 0)
                .map(|(_, &s)| s)
                .collect();
            r.reshape(&shape)
        }
    }
}

fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

#[inline(always)]
fn better<T: Elem>(x: T, cur: T, which: Extreme) -> bool {
    let (a, b) = (x.op(), cur.op());
    if b.is_nan() {
        return false;
    }
    if a.is_nan() {
        return true;
    }
    match which {
        Extreme::Max => a > b,
        Extreme::Min => a < b,
    }
}

#[inline(always)]
fn pick<T: Elem>(acc: (T, bool), x: T, which: Extreme) -> (T, bool) {
    if !acc.1 || better(x, acc.0, which) {
        (x, true)
    } else {
        acc
    }
}

#[inline(always)]
fn pick_index<T: Elem>(
    acc: (T, usize, bool),
    x: (T, usize, bool),
    which: Extreme,
) -> (T, usize, bool) {
    if !acc.2 || better(x.0, acc.0, which) {
        x
    } else {
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32], s: &[i64]) -> Tensor {
        Tensor::from_vec(v.to_vec(), s).unwrap()
    }
    fn i64s(v: &[i64], s: &[i64]) -> Tensor {
        Tensor::from_vec(v.to_vec(), s).unwrap()
    }

    #[test]
    fn sums_and_means() {
        let x = f32s(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
        assert_eq!(x.sum(None, false, None).unwrap().to_vec::<f32>(), vec![21.]);
        assert_eq!(
            x.sum(Some(&[0]), false, None).unwrap().to_vec::<f32>(),
            vec![5., 7., 9.]
        );
        let k = x.sum(Some(&[1]), true, None).unwrap();
        assert_eq!(k.sizes().as_slice(), &[2, 1]);
        assert_eq!(k.to_vec::<f32>(), vec![6., 15.]);
        assert_eq!(
            x.mean(Some(&[-1]), false, None).unwrap().to_vec::<f32>(),
            vec![2., 5.]
        );
        // Transposed input: the reduction follows the logical layout.
        assert_eq!(
            x.t()
                .unwrap()
                .sum(Some(&[1]), false, None)
                .unwrap()
                .to_vec::<f32>(),
            vec![5., 7., 9.]
        );
        let i = i64s(&[1, 2, 3, 4], &[2, 2]);
        // torch: int sum -> int64; mean(int) -> NotImplementedError; sum(dtype=float32) -> 10.
        assert_eq!(i.sum(None, false, None).unwrap().dtype(), DType::Int64);
        assert_eq!(
            i.mean(None, false, None).unwrap_err().kind,
            ErrorKind::NotImplementedError
        );
        assert_eq!(
            i.sum(None, false, Some(DType::Float32))
                .unwrap()
                .to_vec::<f32>(),
            vec![10.]
        );
        assert_eq!(
            i.mean(None, false, Some(DType::Float64))
                .unwrap()
                .to_vec::<f64>(),
            vec![2.5]
        );
        let b = Tensor::from_vec(vec![true, true], &[2]).unwrap();
        assert_eq!(b.sum(None, false, None).unwrap().to_vec::<i64>(), vec![2]);
        // torch: zeros(0,3).sum(0) -> zeros(3); prod -> 1.; mean -> nan
        let e = Tensor::zeros(&[0, 3], DType::Float32).unwrap();
        assert_eq!(
            e.sum(Some(&[0]), false, None).unwrap().to_vec::<f32>(),
            vec![0.; 3]
        );
        assert_eq!(e.prod(None, false, None).unwrap().to_vec::<f32>(), vec![1.]);
        assert!(e.mean(None, false, None).unwrap().to_vec::<f32>()[0].is_nan());
        assert_eq!(
            i.prod(Some(1), false, None).unwrap().to_vec::<i64>(),
            vec![2, 12]
        );
        let z = Tensor::scalar_tensor(Scalar::Float(3.0), DType::Float32).unwrap();
        assert_eq!(z.sum(Some(&[0]), false, None).unwrap().dim(), 0);
        assert!(x.sum(Some(&[2]), false, None).is_err());
        assert!(x.sum(Some(&[0, 0]), false, None).is_err());
    }

    #[test]
    fn large_reduction_is_parallel_and_exact() {
        let n = 300_000usize;
        let x = Tensor::from_vec(vec![1.0f32; n], &[n as i64]).unwrap();
        assert_eq!(
            x.sum(None, false, None).unwrap().to_vec::<f32>(),
            vec![n as f32]
        );
        let y = x.reshape(&[3, 100_000]).unwrap();
        assert_eq!(
            y.sum(Some(&[1]), false, None).unwrap().to_vec::<f32>(),
            vec![100_000.0; 3]
        );
    }

    #[test]
    fn extremes_and_arg_extremes() {
        let x = f32s(&[1., f32::NAN, 3., f32::NAN], &[4]);
        assert!(x.max().unwrap().to_vec::<f32>()[0].is_nan());
        // torch: argmax([1, nan, 3, nan]) -> 1 (first NaN)
        assert_eq!(x.argmax(None, false).unwrap().to_vec::<i64>(), vec![1]);
        let t = i64s(&[3, 1, 3], &[1, 3]);
        let (v, i) = t.max_dim(1, false).unwrap();
        assert_eq!((v.to_vec::<i64>(), i.to_vec::<i64>()), (vec![3], vec![0]));
        assert_eq!(
            i64s(&[1, 1, 3], &[3])
                .argmin(None, false)
                .unwrap()
                .to_vec::<i64>(),
            vec![0]
        );
        let m = f32s(&[1., 5., 2., 4., 0., 9.], &[2, 3]);
        assert_eq!(
            m.amax(&[0], false).unwrap().to_vec::<f32>(),
            vec![4., 5., 9.]
        );
        assert_eq!(m.amin(&[1], true).unwrap().sizes().as_slice(), &[2, 1]);
        let (v, i) = m.min_dim(0, true).unwrap();
        assert_eq!(v.to_vec::<f32>(), vec![1., 0., 2.]);
        assert_eq!(i.to_vec::<i64>(), vec![0, 1, 0]);
        assert_eq!(m.argmax(None, true).unwrap().sizes().as_slice(), &[1, 1]);
        let e = Tensor::zeros(&[0, 3], DType::Float32).unwrap();
        assert_eq!(
            e.max().unwrap_err().message,
            "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
        );
        assert_eq!(
            e.max_dim(0, false).unwrap_err().message,
            "max(): Expected reduction dim 0 to have non-zero size."
        );
        assert_eq!(e.amax(&[1], false).unwrap().sizes().as_slice(), &[0]);
        assert_eq!(
            e.argmax(None, false).unwrap_err().kind,
            ErrorKind::IndexError
        );
    }

    #[test]
    fn boolean_and_statistics() {
        let x = f32s(&[1., 0.], &[2]);
        assert_eq!(x.all(None, false).unwrap().to_vec::<bool>(), vec![false]);
        assert_eq!(x.any(None, false).unwrap().to_vec::<bool>(), vec![true]);
        let u = Tensor::from_vec(vec![1u8, 2], &[2]).unwrap();
        assert_eq!(u.all(None, false).unwrap().dtype(), DType::UInt8);
        assert_eq!(
            Tensor::zeros(&[0], DType::Float32)
                .unwrap()
                .all(None, false)
                .unwrap()
                .to_vec::<bool>(),
            vec![true]
        );
        // torch: var([1,2,4], correction=2) -> 4.6667; std_mean -> (1.5275, 2.3333)
        let v = f32s(&[1., 2., 4.], &[3]);
        assert!(
            (v.var(None, Some(2.0), false).unwrap().to_vec::<f32>()[0] - 4.666_667).abs() < 1e-5
        );
        let (s, m) = v.std_mean(None, None, false).unwrap();
        assert!((s.to_vec::<f32>()[0] - 1.527_525).abs() < 1e-5);
        assert!((m.to_vec::<f32>()[0] - 2.333_333).abs() < 1e-5);
        assert!(f32s(&[1.], &[1])
            .var(None, None, false)
            .unwrap()
            .to_vec::<f32>()[0]
            .is_nan());
        assert!(i64s(&[1], &[1]).var(None, None, false).is_err());
        // torch: norm([1,0,-2], p) for 0, inf, 3 -> 2, 2, 2.0801; p=-1 on [1,.5,-2] -> 0.2857
        let n = f32s(&[1., 0., -2.], &[3]);
        assert_eq!(
            n.norm(Some(Scalar::Int(0)), None, false, None)
                .unwrap()
                .to_vec::<f32>(),
            vec![2.]
        );
        assert_eq!(
            n.norm(Some(Scalar::Float(f64::INFINITY)), None, false, None)
                .unwrap()
                .to_vec::<f32>(),
            vec![2.]
        );
        assert!(
            (n.norm(Some(Scalar::Int(3)), None, false, None)
                .unwrap()
                .to_vec::<f32>()[0]
                - 2.080_084)
                .abs()
                < 1e-5
        );
        assert!(
            (f32s(&[1., 0.5, -2.], &[3])
                .norm(Some(Scalar::Int(-1)), None, false, None)
                .unwrap()
                .to_vec::<f32>()[0]
                - 0.285_714)
                .abs()
                < 1e-5
        );
        assert!(
            (n.norm(None, None, false, None).unwrap().to_vec::<f32>()[0] - 5f32.sqrt()).abs()
                < 1e-6
        );
        assert_eq!(
            i64s(&[0, 1, 2, 3], &[2, 2])
                .count_nonzero(Some(&[0]))
                .unwrap()
                .to_vec::<i64>(),
            vec![1, 2]
        );
    }

    #[test]
    fn logsumexp_cases() {
        // torch: tensor([[1,2],[3,4]]).logsumexp(1) -> [2.3133, 4.3133]
        let i = i64s(&[1, 2, 3, 4], &[2, 2]);
        let r = i.logsumexp(&[1], false).unwrap().to_vec::<f32>();
        assert!((r[0] - 2.313_262).abs() < 1e-5 && (r[1] - 4.313_262).abs() < 1e-5);
        assert_eq!(
            f32s(&[f32::INFINITY, 1.], &[2])
                .logsumexp(&[0], false)
                .unwrap()
                .to_vec::<f32>(),
            vec![f32::INFINITY]
        );
        assert_eq!(
            f32s(&[f32::NEG_INFINITY, f32::NEG_INFINITY], &[2])
                .logsumexp(&[0], false)
                .unwrap()
                .to_vec::<f32>(),
            vec![f32::NEG_INFINITY]
        );
    }
}
