//! `stft`: the short-time Fourier transform of a 1-D signal or a batch of them, framed with a
//! hop length, windowed, and transformed frame by frame (see [`crate::cpu::fft`]).

use crate::complex::Complex64 as C;
use crate::cpu::fft::FftPlan;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// The arguments of `aten::stft.center` after the input.
pub struct StftOptions<'a> {
    pub n_fft: i64,
    pub hop_length: Option<i64>,
    pub win_length: Option<i64>,
    pub window: Option<&'a Tensor>,
    pub center: bool,
    pub pad_mode: &'a str,
    pub normalized: bool,
    pub onesided: Option<bool>,
    pub return_complex: Option<bool>,
}

/// Maps a padded position `i` (may be out of `0..len`) to a source index, or `None` for zero.
fn pad_index(i: i64, len: i64, mode: &str) -> Option<i64> {
    if (0..len).contains(&i) {
        return Some(i);
    }
    match mode {
        "reflect" => Some(if i < 0 { -i } else { 2 * (len - 1) - i }),
        "replicate" => Some(i.clamp(0, len - 1)),
        "circular" => Some(i.rem_euclid(len)),
        _ => None,
    }
}

impl Tensor {
    /// `stft`: returns `[batch?, freqs, frames]` complex (or `[..., 2]` real with
    /// `return_complex=False`).
    pub fn stft(&self, o: &StftOptions) -> Result<Tensor> {
        let dt = self.dtype();
        let cdt = match dt {
            DType::Float32 | DType::Complex64 => DType::Complex64,
            DType::Float64 | DType::Complex128 => DType::Complex128,
            other => {
                return Err(Error::runtime(format!(
                    "stft: expected a tensor of floating point or complex values, got {}",
                    other.scalar_type_name()
                )))
            }
        };
        let window_complex = o.window.is_some_and(|w| w.dtype().is_complex());
        let return_complex = match o.return_complex {
            Some(b) => b,
            None if dt.is_complex() || window_complex => true,
            None => {
                return Err(Error::runtime(
                    "stft requires the return_complex parameter be given for real inputs, and will further require that return_complex=True in a future PyTorch release.",
                ))
            }
        };
        let nd = self.dim();
        if nd != 1 && nd != 2 {
            return Err(Error::runtime(format!(
                "stft: expected a 1D or 2D tensor, but got {nd}D tensor"
            )));
        }
        let x = if nd == 1 {
            self.unsqueeze(0)?
        } else {
            self.clone()
        };
        let batch = x.sizes()[0];
        let len = x.sizes()[1];
        let n_fft = o.n_fft;
        let hop = o.hop_length.unwrap_or(n_fft / 4);
        let win_length = o.win_length.unwrap_or(n_fft);
        let pad = if o.center { n_fft / 2 } else { 0 };
        if o.center {
            if !matches!(
                o.pad_mode,
                "reflect" | "constant" | "replicate" | "circular"
            ) {
                return Err(Error::runtime(format!(
                    "stft: unsupported pad_mode '{}'",
                    o.pad_mode
                )));
            }
            if o.pad_mode == "reflect" && pad >= len.max(1) {
                return Err(Error::runtime(format!(
                    "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding ({pad}, {pad}) at dimension 1 of input [{batch}, {len}]"
                )));
            }
        }
        let padded_len = len + 2 * pad;
        if n_fft <= 0 || n_fft > padded_len {
            return Err(Error::runtime(format!(
                "stft: expected 0 < n_fft < {padded_len}, but got n_fft={n_fft}"
            )));
        }
        if hop <= 0 {
            return Err(Error::runtime(format!(
                "stft: expected hop_length > 0, but got hop_length={hop}"
            )));
        }
        if win_length <= 0 || win_length > n_fft {
            return Err(Error::runtime(format!(
                "stft: expected 0 < win_length <= n_fft, but got win_length={win_length}"
            )));
        }
        // The window, zero-padded on both sides to n_fft.
        let mut win = vec![C::new(0.0, 0.0); n_fft as usize];
        let left = ((n_fft - win_length) / 2) as usize;
        match o.window {
            Some(w) => {
                if w.dim() != 1 || w.sizes()[0] != win_length {
                    return Err(Error::runtime(format!(
                        "stft: expected a 1D window tensor of size equal to win_length={win_length}, but got window with size {:?}",
                        w.sizes().as_slice()
                    )));
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
        let onesided = o.onesided.unwrap_or(!(dt.is_complex() || window_complex));
        if onesided && (dt.is_complex() || window_complex) {
            return Err(Error::runtime(
                "Cannot have onesided output if window or input is complex",
            ));
        }
        let frames = 1 + (padded_len - n_fft) / hop;
        let freqs = if onesided { n_fft / 2 + 1 } else { n_fft };
        let data = x.to_vec::<C>();
        let plan = FftPlan::new(n_fft as usize);
        let scale = if o.normalized {
            1.0 / (n_fft as f64).sqrt()
        } else {
            1.0
        };
        let (nf, nt) = (freqs as usize, frames as usize);
        let mut out = vec![C::new(0.0, 0.0); batch as usize * nf * nt];
        let mut buf = vec![C::new(0.0, 0.0); n_fft as usize];
        for b in 0..batch as usize {
            let row = &data[b * len as usize..(b + 1) * len as usize];
            for t in 0..nt {
                for (k, v) in buf.iter_mut().enumerate() {
                    let pos = t as i64 * hop + k as i64 - pad;
                    let s = pad_index(pos, len, o.pad_mode)
                        .map_or(C::new(0.0, 0.0), |i| row[i as usize]);
                    *v = s * win[k];
                }
                plan.forward(&mut buf);
                for f in 0..nf {
                    out[(b * nf + f) * nt + t] = buf[f].scale(scale);
                }
            }
        }
        let mut sizes = vec![batch, freqs, frames];
        if nd == 1 {
            sizes.remove(0);
        }
        let res = Tensor::from_vec(out, &sizes)?.to_dtype(cdt, false)?;
        if return_complex {
            Ok(res)
        } else {
            res.view_as_real()?.contiguous()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_and_values_match_torch() {
        // torch.stft(arange(8.), n_fft=4, hop_length=2, center=False, return_complex=True):
        // shape [3, 3]; frame 0 = fft([0,1,2,3])[:3] = [6, -2+2j, -2].
        let x = Tensor::from_vec((0..8).map(|i| i as f32).collect::<Vec<_>>(), &[8]).unwrap();
        let o = StftOptions {
            n_fft: 4,
            hop_length: Some(2),
            win_length: None,
            window: None,
            center: false,
            pad_mode: "reflect",
            normalized: false,
            onesided: None,
            return_complex: Some(true),
        };
        let s = x.stft(&o).unwrap();
        assert_eq!(s.sizes().as_slice(), &[3, 3]);
        let v: Vec<(f64, f64)> = s.to_vec::<C>().iter().map(|z| (z.re, z.im)).collect();
        assert_eq!(v[0], (6.0, 0.0));
        assert_eq!(v[3], (-2.0, 2.0));
        assert_eq!(v[6], (-2.0, 0.0));
        // center=True with reflect padding: 1 + 8/2 = 5 frames; real view adds a trailing 2.
        let o2 = StftOptions {
            center: true,
            return_complex: Some(false),
            ..o
        };
        assert_eq!(x.stft(&o2).unwrap().sizes().as_slice(), &[3, 5, 2]);
        let o3 = StftOptions {
            return_complex: None,
            ..o2
        };
        assert!(x.stft(&o3).is_err());
    }
}
