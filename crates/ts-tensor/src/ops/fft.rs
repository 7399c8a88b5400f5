//! Discrete Fourier transforms: ATen's three primitives (`_fft_c2c`, `_fft_r2c`, `_fft_c2r`)
//! and the `torch.fft` functions built on them (`fft`/`ifft`/`rfft`/`irfft`/`hfft`/`ihfft` in
//! their 1-, 2- and n-dimensional forms, `fftfreq`/`rfftfreq`, `fftshift`/`ifftshift`).
//!
//! Transforms run along one dimension at a time over a contiguous complex128 copy of the input
//! (see [`crate::cpu::fft`]); the result is cast back to the complex (or real) dtype matching the
//! input's precision. Signal lengths, normalization modes, dtype promotion and error messages
//! follow `torch.fft`'s reference implementation.

use crate::complex::Complex64 as C;
use crate::config::default_dtype;
use crate::cpu::fft::FftPlan;
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::shape::wrap_dim;
use crate::tensor::Tensor;

/// ATen's normalization codes: 0 none, 1 by `1/√n`, 2 by `1/n`.
fn scale_for(normalization: i64, n: usize) -> Result<f64> {
    match normalization {
        0 => Ok(1.0),
        1 => Ok(1.0 / (n as f64).sqrt()),
        2 => Ok(1.0 / n as f64),
        other => Err(Error::runtime(format!(
            "Invalid normalization mode: {other}"
        ))),
    }
}

/// The normalization code of a `norm=` string for a forward or backward transform.
fn norm_code(norm: Option<&str>, forward: bool) -> Result<i64> {
    match norm {
        None | Some("backward") => Ok(if forward { 0 } else { 2 }),
        Some("forward") => Ok(if forward { 2 } else { 0 }),
        Some("ortho") => Ok(1),
        Some(other) => Err(Error::runtime(format!(
            "Invalid normalization mode: \"{other}\""
        ))),
    }
}

/// A contiguous complex128 copy of `t` with its shape.
fn to_buffer(t: &Tensor) -> (Vec<C>, Vec<usize>) {
    let shape = t.sizes().iter().map(|&s| s as usize).collect();
    (t.to_vec::<C>(), shape)
}

/// Transforms every line of `data` (row-major, `shape`) along `dim`.
fn transform_dim(data: &mut [C], shape: &[usize], dim: usize, forward: bool) {
    let n = shape[dim];
    if n == 0 || data.is_empty() {
        return;
    }
    let inner: usize = shape[dim + 1..].iter().product();
    let outer: usize = shape[..dim].iter().product();
    let plan = FftPlan::cached(n);
    let mut line = vec![C::new(0.0, 0.0); n];
    for o in 0..outer {
        for i in 0..inner {
            let base = o * n * inner + i;
            for (k, v) in line.iter_mut().enumerate() {
                *v = data[base + k * inner];
            }
            if forward {
                plan.forward(&mut line);
            } else {
                plan.inverse(&mut line);
            }
            for (k, v) in line.iter().enumerate() {
                data[base + k * inner] = *v;
            }
        }
    }
}

fn scale_all(data: &mut [C], s: f64) {
    if s != 1.0 {
        for v in data.iter_mut() {
            *v = v.scale(s);
        }
    }
}

/// Wraps and checks transform dimensions (unique, in range).
fn wrap_fft_dims(dims: &[i64], ndim: usize) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(dims.len());
    for &d in dims {
        let w = wrap_dim(d, ndim)?;
        if out.contains(&w) {
            return Err(Error::runtime("FFT dims must be unique"));
        }
        out.push(w);
    }
    Ok(out)
}

fn complex_result(data: Vec<C>, shape: &[usize], dtype: DType) -> Result<Tensor> {
    let sizes: Vec<i64> = shape.iter().map(|&s| s as i64).collect();
    Tensor::from_vec(data, &sizes)?.to_dtype(dtype, false)
}

fn require_complex(t: &Tensor, what: &str) -> Result<()> {
    if !t.dtype().is_complex() {
        return Err(Error::runtime(format!(
            "{what} expects a complex input tensor, but got {}",
            t.dtype().scalar_type_name()
        )));
    }
    Ok(())
}

fn require_real_float(t: &Tensor, what: &str) -> Result<DType> {
    match t.dtype() {
        DType::Float32 => Ok(DType::Complex64),
        DType::Float64 => Ok(DType::Complex128),
        other => Err(Error::runtime(format!(
            "{what} expects a real floating point input tensor, but got {}",
            other.scalar_type_name()
        ))),
    }
}

impl Tensor {
    /// `_fft_c2c`: the complex-to-complex transform over `dims`, forward (`e^{-2πi…}`) or
    /// backward, scaled by `normalization` (0 none, 1 `1/√n`, 2 `1/n`).
    pub fn fft_c2c(&self, dims: &[i64], normalization: i64, forward: bool) -> Result<Tensor> {
        require_complex(self, "_fft_c2c")?;
        let dims = wrap_fft_dims(dims, self.dim())?;
        let (mut data, shape) = to_buffer(self);
        for &d in &dims {
            transform_dim(&mut data, &shape, d, forward);
        }
        let n: usize = dims.iter().map(|&d| shape[d]).product();
        scale_all(&mut data, scale_for(normalization, n)?);
        complex_result(data, &shape, self.dtype())
    }

    /// `_fft_r2c`: the forward transform of a real tensor over `dims`; with `onesided` only the
    /// first `n/2+1` frequencies of the last transformed dimension are kept.
    pub fn fft_r2c(&self, dims: &[i64], normalization: i64, onesided: bool) -> Result<Tensor> {
        let cdt = require_real_float(self, "_fft_r2c")?;
        let dims = wrap_fft_dims(dims, self.dim())?;
        let (mut data, shape) = to_buffer(self);
        for &d in &dims {
            transform_dim(&mut data, &shape, d, true);
        }
        let n: usize = dims.iter().map(|&d| shape[d]).product();
        scale_all(&mut data, scale_for(normalization, n)?);
        let full = complex_result(data, &shape, cdt)?;
        match dims.last() {
            Some(&last) if onesided => {
                let keep = shape[last] / 2 + 1;
                full.narrow(last as i64, 0, keep as i64)?.contiguous()
            }
            _ => Ok(full),
        }
    }

    /// `_fft_c2r`: the backward transform of a Hermitian half spectrum to a real tensor whose
    /// last transformed dimension has `last_dim_size` elements (the other dimensions are
    /// complex-to-complex transforms).
    pub fn fft_c2r(&self, dims: &[i64], normalization: i64, last_dim_size: i64) -> Result<Tensor> {
        require_complex(self, "_fft_c2r")?;
        if last_dim_size < 1 {
            return Err(Error::runtime(format!(
                "Invalid number of data points ({last_dim_size}) specified"
            )));
        }
        let dims = wrap_fft_dims(dims, self.dim())?;
        let Some((&last, rest)) = dims.split_last() else {
            return Err(Error::runtime("_fft_c2r expects at least one dimension"));
        };
        let (mut data, shape) = to_buffer(self);
        for &d in rest {
            transform_dim(&mut data, &shape, d, false);
        }
        // Extend the last dimension to the full Hermitian spectrum of length L.
        let l = last_dim_size as usize;
        let m = shape[last];
        let inner: usize = shape[last + 1..].iter().product();
        let outer: usize = shape[..last].iter().product();
        let mut out_shape = shape.clone();
        out_shape[last] = l;
        let mut full = vec![C::new(0.0, 0.0); outer * l * inner];
        for o in 0..outer {
            for i in 0..inner {
                let src = |k: usize| {
                    if k < m {
                        data[o * m * inner + k * inner + i]
                    } else {
                        C::new(0.0, 0.0)
                    }
                };
                for k in 0..l {
                    let v = if k <= l / 2 {
                        src(k)
                    } else {
                        src(l - k).conj()
                    };
                    full[o * l * inner + k * inner + i] = v;
                }
            }
        }
        transform_dim(&mut full, &out_shape, last, false);
        let n: usize = rest.iter().map(|&d| shape[d]).product::<usize>() * l;
        let s = scale_for(normalization, n)?;
        let real: Vec<f64> = full.iter().map(|z| z.re * s).collect();
        let sizes: Vec<i64> = out_shape.iter().map(|&s| s as i64).collect();
        Tensor::from_vec(real, &sizes)?.to_dtype(self.dtype().to_real(), false)
    }

    /// `torch.fft.fft`.
    pub fn fft_fft(&self, n: Option<i64>, dim: i64, norm: Option<&str>) -> Result<Tensor> {
        self.fft_c2c_nd(Some(&one(n)), Some(&[dim]), norm, true, "fft")
    }

    /// `torch.fft.ifft`.
    pub fn fft_ifft(&self, n: Option<i64>, dim: i64, norm: Option<&str>) -> Result<Tensor> {
        self.fft_c2c_nd(Some(&one(n)), Some(&[dim]), norm, false, "ifft")
    }

    /// `torch.fft.rfft`.
    pub fn fft_rfft(&self, n: Option<i64>, dim: i64, norm: Option<&str>) -> Result<Tensor> {
        self.fft_rfftn_impl(Some(&one(n)), Some(&[dim]), norm, "rfft")
    }

    /// `torch.fft.irfft`.
    pub fn fft_irfft(&self, n: Option<i64>, dim: i64, norm: Option<&str>) -> Result<Tensor> {
        self.fft_irfftn_impl(Some(&one(n)), Some(&[dim]), norm, false, "irfft")
    }

    /// `torch.fft.hfft`.
    pub fn fft_hfft(&self, n: Option<i64>, dim: i64, norm: Option<&str>) -> Result<Tensor> {
        self.fft_irfftn_impl(Some(&one(n)), Some(&[dim]), norm, true, "hfft")
    }

    /// `torch.fft.ihfft`.
    pub fn fft_ihfft(&self, n: Option<i64>, dim: i64, norm: Option<&str>) -> Result<Tensor> {
        self.fft_ihfftn_impl(Some(&one(n)), Some(&[dim]), norm, "ihfft")
    }

    /// `torch.fft.fftn` (and `fft2` with `dim=[-2, -1]`).
    pub fn fft_fftn(
        &self,
        s: Option<&[i64]>,
        dim: Option<&[i64]>,
        norm: Option<&str>,
    ) -> Result<Tensor> {
        self.fft_c2c_nd(s.map(opt_sizes).as_deref(), dim, norm, true, "fftn")
    }

    /// `torch.fft.ifftn` (and `ifft2`).
    pub fn fft_ifftn(
        &self,
        s: Option<&[i64]>,
        dim: Option<&[i64]>,
        norm: Option<&str>,
    ) -> Result<Tensor> {
        self.fft_c2c_nd(s.map(opt_sizes).as_deref(), dim, norm, false, "ifftn")
    }

    /// `torch.fft.rfftn` (and `rfft2`).
    pub fn fft_rfftn(
        &self,
        s: Option<&[i64]>,
        dim: Option<&[i64]>,
        norm: Option<&str>,
    ) -> Result<Tensor> {
        self.fft_rfftn_impl(s.map(opt_sizes).as_deref(), dim, norm, "rfftn")
    }

    /// `torch.fft.irfftn` (and `irfft2`).
    pub fn fft_irfftn(
        &self,
        s: Option<&[i64]>,
        dim: Option<&[i64]>,
        norm: Option<&str>,
    ) -> Result<Tensor> {
        self.fft_irfftn_impl(s.map(opt_sizes).as_deref(), dim, norm, false, "irfftn")
    }

    /// `torch.fft.hfftn` (and `hfft2`).
    pub fn fft_hfftn(
        &self,
        s: Option<&[i64]>,
        dim: Option<&[i64]>,
        norm: Option<&str>,
    ) -> Result<Tensor> {
        self.fft_irfftn_impl(s.map(opt_sizes).as_deref(), dim, norm, true, "hfftn")
    }

    /// `torch.fft.ihfftn` (and `ihfft2`).
    pub fn fft_ihfftn(
        &self,
        s: Option<&[i64]>,
        dim: Option<&[i64]>,
        norm: Option<&str>,
    ) -> Result<Tensor> {
        self.fft_ihfftn_impl(s.map(opt_sizes).as_deref(), dim, norm, "ihfftn")
    }

    /// `torch.fft.fftshift`: rolls each of `dim` (default all) by half its size, moving the
    /// zero frequency to the centre.
    pub fn fft_fftshift(&self, dim: Option<&[i64]>) -> Result<Tensor> {
        self.fft_shift(dim, false)
    }

    /// `torch.fft.ifftshift`: the inverse of [`Tensor::fft_fftshift`].
    pub fn fft_ifftshift(&self, dim: Option<&[i64]>) -> Result<Tensor> {
        self.fft_shift(dim, true)
    }

    fn fft_shift(&self, dim: Option<&[i64]>, inverse: bool) -> Result<Tensor> {
        if self.dim() == 0 {
            return Ok(self.clone());
        }
        let sizes = self.sizes();
        let dims: Vec<i64> = match dim {
            Some(d) => d.to_vec(),
            None => (0..self.dim() as i64).collect(),
        };
        if dims.is_empty() {
            return Ok(self.clone());
        }
        let mut shifts = Vec::with_capacity(dims.len());
        for &d in &dims {
            let n = sizes[wrap_dim(d, self.dim())?];
            shifts.push(if inverse { (n + 1) / 2 } else { n / 2 });
        }
        self.roll(&shifts, &dims)
    }

    /// Integer and bool inputs compute in the default dtype; half precision is rejected (as
    /// PyTorch's CPU FFT does); complex inputs are kept, real ones made complex when
    /// `to_complex`.
    fn fft_promote(&self, to_complex: bool) -> Result<Tensor> {
        let dt = self.dtype();
        let x = match dt {
            DType::Float16 | DType::BFloat16 => {
                return Err(Error::runtime(format!(
                    "Unsupported dtype {}",
                    dt.scalar_type_name()
                )))
            }
            d if d.is_complex() || d == DType::Float32 || d == DType::Float64 => self.clone(),
            _ => self.to_dtype(default_dtype(), false)?,
        };
        if to_complex && !x.dtype().is_complex() {
            let cdt = x.dtype().to_complex().unwrap_or(DType::Complex64);
            return x.to_dtype(cdt, false);
        }
        Ok(x)
    }

    /// Zero-pads or trims each of `dims` to `sizes`.
    fn fft_resize(&self, dims: &[usize], sizes: &[i64]) -> Result<Tensor> {
        let mut x = self.clone();
        for (&d, &n) in dims.iter().zip(sizes) {
            let cur = x.sizes()[d];
            if n < cur {
                x = x.narrow(d as i64, 0, n)?;
            } else if n > cur {
                let mut shape = x.sizes().to_vec();
                shape[d] = n;
                let z = Tensor::zeros(&shape, x.dtype())?;
                z.narrow(d as i64, 0, cur)?.copy_(&x)?;
                x = z;
            }
        }
        Ok(x)
    }

    /// PyTorch's `canonicalize_fft_shape_and_dim_args`: the transformed dimensions and the
    /// signal size along each (`-1` in `s` keeps the input's size).
    fn fft_shape_and_dims(
        &self,
        s: Option<&[Option<i64>]>,
        dim: Option<&[i64]>,
    ) -> Result<(Vec<i64>, Vec<usize>)> {
        let nd = self.dim();
        let sizes = self.sizes();
        if nd == 0 && (dim.is_some() || s.is_some()) {
            return Err(Error::new(
                ErrorKind::IndexError,
                "Dimension specified as -1 but tensor has no dimensions",
            ));
        }
        let dims = match (dim, s) {
            (Some(d), _) => {
                let dims = wrap_fft_dims(d, nd)?;
                if let Some(s) = s {
                    if s.len() != dims.len() {
                        return Err(Error::runtime(
                            "When given, dim and shape arguments must have the same length",
                        ));
                    }
                }
                dims
            }
            (None, Some(s)) => {
                if s.len() > nd {
                    return Err(Error::runtime(format!(
                        "Got shape with {} values but input tensor only has {nd} dimensions.",
                        s.len()
                    )));
                }
                (nd - s.len()..nd).collect()
            }
            (None, None) => (0..nd).collect(),
        };
        let mut shape = Vec::with_capacity(dims.len());
        for (i, &d) in dims.iter().enumerate() {
            let n = match s.map(|s| s[i]) {
                Some(Some(n)) if n != -1 => n,
                _ => sizes[d],
            };
            if n <= 0 {
                return Err(Error::runtime(format!(
                    "Invalid number of data points ({n}) specified"
                )));
            }
            shape.push(n);
        }
        Ok((shape, dims))
    }

    fn fft_c2c_nd(
        &self,
        s: Option<&[Option<i64>]>,
        dim: Option<&[i64]>,
        norm: Option<&str>,
        forward: bool,
        _name: &str,
    ) -> Result<Tensor> {
        let x = self.fft_promote(true)?;
        let (shape, dims) = x.fft_shape_and_dims(s, dim)?;
        let x = x.fft_resize(&dims, &shape)?;
        let d: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        x.fft_c2c(&d, norm_code(norm, forward)?, forward)
    }

    fn fft_rfftn_impl(
        &self,
        s: Option<&[Option<i64>]>,
        dim: Option<&[i64]>,
        norm: Option<&str>,
        name: &str,
    ) -> Result<Tensor> {
        if self.dtype().is_complex() {
            return Err(Error::runtime(format!(
                "{name} expects a real input tensor, but got {}",
                self.dtype().scalar_type_name()
            )));
        }
        let x = self.fft_promote(false)?;
        let (shape, dims) = x.fft_shape_and_dims(s, dim)?;
        if dims.is_empty() {
            return Err(Error::runtime(format!(
                "{name} must transform at least one axis"
            )));
        }
        let x = x.fft_resize(&dims, &shape)?;
        let d: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        x.fft_r2c(&d, norm_code(norm, true)?, true)
    }

    /// `irfftn` (`hermitian == false`) and `hfftn` (`true`: the conjugate input, forward
    /// normalization).
    fn fft_irfftn_impl(
        &self,
        s: Option<&[Option<i64>]>,
        dim: Option<&[i64]>,
        norm: Option<&str>,
        hermitian: bool,
        name: &str,
    ) -> Result<Tensor> {
        let x = self.fft_promote(true)?;
        let (mut shape, dims) = x.fft_shape_and_dims(s, dim)?;
        let Some(&last) = dims.last() else {
            return Err(Error::runtime(format!(
                "{name} must transform at least one axis"
            )));
        };
        let given_last = s
            .and_then(|s| s.last().copied().flatten())
            .filter(|&n| n != -1);
        let last_dim_size = match given_last {
            Some(n) => n,
            None => 2 * (x.sizes()[last] - 1),
        };
        if last_dim_size < 1 {
            return Err(Error::runtime(format!(
                "Invalid number of data points ({last_dim_size}) specified"
            )));
        }
        if let Some(l) = shape.last_mut() {
            *l = last_dim_size / 2 + 1;
        }
        let x = x.fft_resize(&dims, &shape)?;
        let d: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        if !hermitian {
            return x.fft_c2r(&d, norm_code(norm, false)?, last_dim_size);
        }
        let (rest, last_d) = d.split_at(d.len() - 1);
        let tmp = if rest.is_empty() {
            x
        } else {
            x.fft_c2c(rest, 0, true)?
        };
        let out = tmp.conj_physical()?.fft_c2r(last_d, 0, last_dim_size)?;
        let n: i64 = shape[..shape.len() - 1].iter().product::<i64>() * last_dim_size;
        let scale = scale_for(norm_code(norm, true)?, n as usize)?;
        if scale == 1.0 {
            Ok(out)
        } else {
            out.mul_scalar(crate::Scalar::Float(scale))
        }
    }

    fn fft_ihfftn_impl(
        &self,
        s: Option<&[Option<i64>]>,
        dim: Option<&[i64]>,
        norm: Option<&str>,
        name: &str,
    ) -> Result<Tensor> {
        if self.dtype().is_complex() {
            return Err(Error::runtime(format!(
                "{name} expects a real input tensor, but got {}",
                self.dtype().scalar_type_name()
            )));
        }
        let x = self.fft_promote(false)?;
        let (shape, dims) = x.fft_shape_and_dims(s, dim)?;
        if dims.is_empty() {
            return Err(Error::runtime(format!(
                "{name} must transform at least one axis"
            )));
        }
        let x = x.fft_resize(&dims, &shape)?;
        let d: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        x.fft_r2c(&d, norm_code(norm, false)?, true)?
            .conj_physical()
    }
}

fn one(n: Option<i64>) -> Vec<Option<i64>> {
    vec![n]
}

fn opt_sizes(s: &[i64]) -> Vec<Option<i64>> {
    s.iter().map(|&n| Some(n)).collect()
}

/// `torch.fft.fftfreq(n, d)`: `[0, 1, …, ⌈n/2⌉-1, -⌊n/2⌋, …, -1] / (d·n)`.
pub fn fftfreq(n: i64, d: f64, dtype: Option<DType>) -> Result<Tensor> {
    freqs(n, d, dtype, false)
}

/// `torch.fft.rfftfreq(n, d)`: `[0, 1, …, ⌊n/2⌋] / (d·n)`.
pub fn rfftfreq(n: i64, d: f64, dtype: Option<DType>) -> Result<Tensor> {
    freqs(n, d, dtype, true)
}

fn freqs(n: i64, d: f64, dtype: Option<DType>, half: bool) -> Result<Tensor> {
    if n < 0 {
        return Err(Error::runtime(format!(
            "Trying to create tensor with negative dimension {n}: [{n}]"
        )));
    }
    let dt = dtype.unwrap_or_else(default_dtype);
    if !dt.is_floating_point() && !dt.is_complex() {
        return Err(Error::new(
            ErrorKind::RuntimeError,
            format!(
                "{} requires a floating point dtype",
                if half { "rfftfreq" } else { "fftfreq" }
            ),
        ));
    }
    let count = if half { n / 2 + 1 } else { n };
    let idx = |i: i64| if half || i < (n + 1) / 2 { i } else { i - n };
    let step = 1.0 / (n as f64 * d);
    let t = if dt == DType::Float64 || dt == DType::Complex128 {
        Tensor::from_vec(
            (0..count)
                .map(|i| idx(i) as f64 * step)
                .collect::<Vec<f64>>(),
            &[count],
        )?
    } else {
        let s32 = step as f32;
        Tensor::from_vec(
            (0..count)
                .map(|i| idx(i) as f32 * s32)
                .collect::<Vec<f32>>(),
            &[count],
        )?
    };
    t.to_dtype(dt, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(t: &Tensor) -> Vec<(f64, f64)> {
        t.to_vec::<C>().iter().map(|z| (z.re, z.im)).collect()
    }

    fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-5, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn one_dimensional_transforms_match_torch() {
        let x = Tensor::from_vec(vec![1f32, 2.0, 3.0, 4.0, 5.0], &[5]).unwrap();
        // torch.fft.fft(x): [15+0j, -2.5+3.4410j, -2.5+0.8123j, -2.5-0.8123j, -2.5-3.4410j]
        let f = x.fft_fft(None, -1, None).unwrap();
        assert_eq!(f.dtype(), DType::Complex64);
        let p = parts(&f);
        close(
            &[p[0].0, p[0].1, p[1].0, p[1].1, p[2].1],
            &[15.0, 0.0, -2.5, 3.440955, 0.812299],
        );
        // rfft keeps n/2+1 = 3; irfft(rfft(x), n=5) gives x back.
        let r = x.fft_rfft(None, -1, None).unwrap();
        assert_eq!(r.sizes().as_slice(), &[3]);
        let back = r.fft_irfft(Some(5), -1, None).unwrap();
        assert_eq!(back.dtype(), DType::Float32);
        close(&back.to_vec::<f64>(), &[1.0, 2.0, 3.0, 4.0, 5.0]);
        // ortho ifft of fft is the identity up to 1/n vs sqrt scaling.
        let o = x.fft_fft(None, 0, Some("ortho")).unwrap();
        close(&[parts(&o)[0].0], &[15.0 / 5f64.sqrt()]);
        // hfft(ihfft(x), n=5) == x.
        let h = x
            .fft_ihfft(None, -1, None)
            .unwrap()
            .fft_hfft(Some(5), -1, None)
            .unwrap();
        close(&h.to_vec::<f64>(), &[1.0, 2.0, 3.0, 4.0, 5.0]);
        // Padding with n: fft([1,2], n=4) = [3, 1-2j, -1, 1+2j].
        let p = parts(
            &Tensor::from_vec(vec![1i64, 2], &[2])
                .unwrap()
                .fft_fft(Some(4), 0, None)
                .unwrap(),
        );
        assert_eq!(p, vec![(3.0, 0.0), (1.0, -2.0), (-1.0, 0.0), (1.0, 2.0)]);
    }

    #[test]
    fn multi_dimensional_transforms_invert() {
        let data: Vec<f64> = (0..24).map(|i| ((i * 7) % 11) as f64 - 3.0).collect();
        let x = Tensor::from_vec(data.clone(), &[2, 3, 4]).unwrap();
        let f = x.fft_fftn(None, None, None).unwrap();
        assert_eq!(f.dtype(), DType::Complex128);
        // The DC term is the sum.
        close(&[parts(&f)[0].0], &[data.iter().sum()]);
        let back = f.fft_ifftn(None, None, None).unwrap().real().unwrap();
        close(&back.to_vec::<f64>(), &data);
        let r = x.fft_rfftn(None, Some(&[0, 2]), Some("forward")).unwrap();
        assert_eq!(r.sizes().as_slice(), &[2, 3, 3]);
        let back = r
            .fft_irfftn(Some(&[2, 4]), Some(&[0, 2]), Some("forward"))
            .unwrap();
        close(&back.to_vec::<f64>(), &data);
        let h = x.fft_ihfftn(None, Some(&[1, 2]), None).unwrap();
        let back = h.fft_hfftn(Some(&[3, 4]), Some(&[1, 2]), None).unwrap();
        close(&back.to_vec::<f64>(), &data);
    }

    #[test]
    fn errors_and_helpers() {
        let x = Tensor::from_vec(vec![1f32, 2.0], &[2]).unwrap();
        assert_eq!(
            x.fft_fft(Some(0), 0, None).unwrap_err().message,
            "Invalid number of data points (0) specified"
        );
        assert!(x.fft_fft(None, 0, Some("bogus")).is_err());
        let c = x.fft_fft(None, 0, None).unwrap();
        assert!(c.fft_rfft(None, 0, None).is_err());
        assert_eq!(
            fftfreq(5, 1.0, None).unwrap().to_vec::<f32>(),
            vec![0.0, 0.2, 0.4, -0.4, -0.2]
        );
        assert_eq!(
            rfftfreq(4, 0.5, None).unwrap().to_vec::<f32>(),
            vec![0.0, 0.5, 1.0]
        );
        let s = Tensor::from_vec(vec![0i64, 1, 2, 3, 4], &[5]).unwrap();
        assert_eq!(
            s.fft_fftshift(None).unwrap().to_vec::<i64>(),
            vec![3, 4, 0, 1, 2]
        );
        assert_eq!(
            s.fft_fftshift(None)
                .unwrap()
                .fft_ifftshift(None)
                .unwrap()
                .to_vec::<i64>(),
            vec![0, 1, 2, 3, 4]
        );
    }
}
