//! `istft`: the inverse of [`Tensor::stft`] — each frame inverse-transformed, windowed,
//! overlap-added at the hop length and divided by the overlap-added squared window (the
//! least-squares inverse of Griffin and Lim, as ATen computes it), then trimmed of the
//! centre padding or to the requested length.

use crate::complex::Complex64 as C;
use crate::cpu::fft::FftPlan;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// The arguments of `aten::istft` after the input.
pub struct IstftOptions<'a> {
    pub n_fft: i64,
    pub hop_length: Option<i64>,
    pub win_length: Option<i64>,
    pub window: Option<&'a Tensor>,
    pub center: bool,
    pub normalized: bool,
    pub onesided: Option<bool>,
    pub length: Option<i64>,
    pub return_complex: bool,
}

impl Tensor {
    /// `istft`: `[batch?, freqs, frames]` complex spectra back to `[batch?, samples]` signals
    /// (real, or complex with `return_complex=True`).
    pub fn istft(&self, o: &IstftOptions) -> Result<Tensor> {
        let cdt = self.dtype();
        if !cdt.is_complex() {
            return Err(Error::runtime(
                "istft requires a complex-valued input tensor matching the output from stft with return_complex=True.",
            ));
        }
        let nd = self.dim();
        if nd != 2 && nd != 3 {
            return Err(Error::runtime(format!(
                "istft: expected a tensor with 2 or 3 dimensions of complex dtype, but got {nd}"
            )));
        }
        let x = if nd == 2 {
            self.unsqueeze(0)?
        } else {
            self.clone()
        };
        let (batch, fft_size, n_frames) = (x.sizes()[0], x.sizes()[1], x.sizes()[2]);
        let n_fft = o.n_fft;
        let hop = o.hop_length.unwrap_or(n_fft >> 2);
        let win_length = o.win_length.unwrap_or(n_fft);
        let window_complex = o.window.is_some_and(|w| w.dtype().is_complex());
        let onesided = o.onesided.unwrap_or(fft_size != n_fft);
        if onesided {
            if n_fft / 2 + 1 != fft_size {
                return Err(Error::runtime(format!(
                    "istft expected the frequency dimension (3rd to the last) of the input tensor to match n_fft / 2 + 1 when onesided=True, but got {fft_size}"
                )));
            }
        } else if n_fft != fft_size {
            return Err(Error::runtime(format!(
                "istft expected the frequency dimension (3rd to the last) of the input tensor to match n_fft when onesided=False, but got {fft_size}"
            )));
        }
        if !(0 < hop && hop <= win_length) {
            return Err(Error::runtime(
                "istft expected 0 < hop_length <= win_length",
            ));
        }
        if !(0 < win_length && win_length <= n_fft) {
            return Err(Error::runtime("istft expected 0 < win_length <= n_fft"));
        }
        if n_frames <= 0 {
            return Err(Error::runtime(
                "istft: input tensor cannot be empty (it has no frames)",
            ));
        }
        if o.return_complex && onesided {
            return Err(Error::runtime(
                "cannot have onesided output if window or input is complex",
            ));
        }
        if !o.return_complex && window_complex {
            return Err(Error::runtime(
                "Complex windows are incompatible with return_complex=False",
            ));
        }
        let n = n_fft as usize;
        let mut win = vec![C::new(0.0, 0.0); n];
        let left = ((n_fft - win_length) / 2) as usize;
        match o.window {
            Some(w) => {
                if w.dim() != 1 || w.sizes()[0] != win_length {
                    return Err(Error::runtime(
                        "istft: Invalid window shape. window has to be 1D and length of `win_length`",
                    ));
                }
                for (i, v) in w.to_vec::<C>().into_iter().enumerate() {
                    win[left + i] = v;
                }
            }
            None => {
                for v in &mut win[left..left + win_length as usize] {
                    *v = C::new(1.0, 0.0);
                }
            }
        }
        let scale = if o.normalized {
            1.0 / (n as f64).sqrt()
        } else {
            1.0 / n as f64
        };
        let (nf, nt) = (fft_size as usize, n_frames as usize);
        let total = n + hop as usize * (nt - 1);
        let data = x.to_vec::<C>();
        let plan = FftPlan::cached(n);
        let mut buf = vec![C::new(0.0, 0.0); n];
        let mut y = vec![C::new(0.0, 0.0); batch as usize * total];
        let mut env = vec![C::new(0.0, 0.0); total];
        for t in 0..nt {
            for (k, w) in win.iter().enumerate() {
                env[t * hop as usize + k] = env[t * hop as usize + k] + *w * *w;
            }
        }
        for b in 0..batch as usize {
            let spec = &data[b * nf * nt..(b + 1) * nf * nt];
            for t in 0..nt {
                if o.return_complex {
                    for (k, v) in buf.iter_mut().enumerate() {
                        *v = spec[k * nt + t];
                    }
                } else {
                    // A real inverse (`c2r`) reads the first n/2 + 1 bins as a Hermitian
                    // spectrum; the imaginary parts of DC (and Nyquist) do not contribute.
                    let half = n / 2;
                    for k in 0..=half {
                        let mut v = spec[k * nt + t];
                        if k == 0 || (n.is_multiple_of(2) && k == half) {
                            v = C::new(v.re, 0.0);
                        }
                        buf[k] = v;
                        if k > 0 && k < n - k {
                            buf[n - k] = v.conj();
                        }
                    }
                }
                plan.inverse(&mut buf);
                let row = &mut y[b * total..(b + 1) * total];
                for (k, v) in buf.iter().enumerate() {
                    let mut s = v.scale(scale);
                    if !o.return_complex {
                        s = C::new(s.re, 0.0);
                    }
                    row[t * hop as usize + k] = row[t * hop as usize + k] + s * win[k];
                }
            }
        }
        let start = if o.center { n / 2 } else { 0 };
        let end: i64 = match o.length {
            Some(l) => start as i64 + l,
            None if o.center => total as i64 - (n / 2) as i64,
            None => total as i64,
        };
        let stop = (end.max(0) as usize).min(total).max(start.min(total));
        let start = start.min(stop);
        if env[start..stop].iter().any(|e| e.abs() < 1e-11) {
            return Err(Error::runtime(
                "istft: window overlap add min is below 1e-11 (the window violates the nonzero overlap-add condition)",
            ));
        }
        let out_len = (end - start as i64).max(0) as usize;
        let mut out = vec![C::new(0.0, 0.0); batch as usize * out_len];
        for b in 0..batch as usize {
            for i in start..stop {
                out[b * out_len + (i - start)] = y[b * total + i] / env[i];
            }
        }
        let mut sizes = vec![batch, out_len as i64];
        if nd == 2 {
            sizes.remove(0);
        }
        let res = Tensor::from_vec(out, &sizes)?.to_dtype(cdt, false)?;
        if o.return_complex {
            Ok(res)
        } else {
            let real = match cdt {
                DType::Complex64 => DType::Float32,
                _ => DType::Float64,
            };
            res.real()?.to_dtype(real, false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::stft::StftOptions;

    #[test]
    fn inverts_stft() {
        let x = Tensor::from_vec(
            (0..20).map(|i| ((i * 7 % 11) as f32) - 5.0).collect(),
            &[20],
        )
        .unwrap();
        let w = Tensor::from_vec(vec![0.1f32, 0.5, 1.0, 1.0, 0.5, 0.3, 0.9, 0.2], &[8]).unwrap();
        let s = x
            .stft(&StftOptions {
                n_fft: 8,
                hop_length: Some(2),
                win_length: None,
                window: Some(&w),
                center: true,
                pad_mode: "reflect",
                normalized: false,
                onesided: None,
                return_complex: Some(true),
            })
            .unwrap();
        let o = IstftOptions {
            n_fft: 8,
            hop_length: Some(2),
            win_length: None,
            window: Some(&w),
            center: true,
            normalized: false,
            onesided: None,
            length: Some(20),
            return_complex: false,
        };
        let y = s.istft(&o).unwrap();
        assert_eq!(y.dtype(), DType::Float32);
        for (a, b) in x.to_vec::<f32>().iter().zip(y.to_vec::<f32>()) {
            assert!((a - b).abs() < 1e-4, "{a} vs {b}");
        }
        let no_len = IstftOptions { length: None, ..o };
        assert_eq!(s.istft(&no_len).unwrap().sizes().as_slice(), &[20]);
        assert!(x.istft(&no_len).is_err());
    }
}
