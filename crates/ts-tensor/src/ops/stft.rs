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

/// Cuts windowed frames out of the (padded) signal rows; frame `i` is row `i / nt`, time `i % nt`.
struct Framer<'a> {
    data: &'a [C],
    len: i64,
    hop: i64,
    pad: i64,
    pad_mode: &'a str,
    win: &'a [C],
    nt: usize,
}

impl Framer<'_> {
    /// Writes frame `frame` times the window into `buf` (`n_fft` samples).
    fn fill(&self, frame: usize, buf: &mut [C]) {
        let (b, t) = (frame / self.nt, (frame % self.nt) as i64);
        let row = &self.data[b * self.len as usize..(b + 1) * self.len as usize];
        let first = t * self.hop - self.pad;
        let n = buf.len() as i64;
        if first >= 0 && first + n <= self.len {
            let src = &row[first as usize..(first + n) as usize];
            for ((v, &s), &w) in buf.iter_mut().zip(src).zip(self.win) {
                *v = s * w;
            }
            return;
        }
        for (k, v) in buf.iter_mut().enumerate() {
            let s = pad_index(first + k as i64, self.len, self.pad_mode)
                .map_or(C::new(0.0, 0.0), |i| row[i as usize]);
            *v = s * self.win[k];
        }
    }

    /// Where frequency `f` of frame `frame` goes in the `[batch, nf, nt]` output.
    fn out_index(&self, frame: usize, f: usize, nf: usize) -> usize {
        let (b, t) = (frame / self.nt, frame % self.nt);
        (b * nf + f) * self.nt + t
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
        let plan = FftPlan::cached(n_fft as usize);
        let scale = if o.normalized {
            1.0 / (n_fft as f64).sqrt()
        } else {
            1.0
        };
        let (nf, nt) = (freqs as usize, frames as usize);
        let mut out = vec![C::new(0.0, 0.0); batch as usize * nf * nt];
        let framer = Framer {
            data: &data,
            len,
            hop,
            pad,
            pad_mode: o.pad_mode,
            win: &win,
            nt,
        };
        let mut buf = vec![C::new(0.0, 0.0); n_fft as usize];
        let total = batch as usize * nt;
        if !dt.is_complex() && !window_complex {
            // Real frames two at a time: one complex transform of `a + i·b` gives both spectra
            // through the symmetry `A[f] = (Z[f] + conj Z[n-f]) / 2`, `B[f] = (Z[f] - conj Z[n-f]) / 2i`.
            let n = n_fft as usize;
            let mut second = vec![C::new(0.0, 0.0); n];
            for first in (0..total).step_by(2) {
                framer.fill(first, &mut buf);
                if first + 1 < total {
                    framer.fill(first + 1, &mut second);
                } else {
                    second.fill(C::new(0.0, 0.0));
                }
                for (z, b) in buf.iter_mut().zip(&second) {
                    z.im = b.re;
                }
                plan.forward(&mut buf);
                for f in 0..nf {
                    let z = buf[f];
                    let w = buf[(n - f) % n].conj();
                    let half = 0.5 * scale;
                    out[framer.out_index(first, f, nf)] = (z + w).scale(half);
                    if first + 1 < total {
                        let d = z - w;
                        out[framer.out_index(first + 1, f, nf)] = C::new(d.im, -d.re).scale(half);
                    }
                }
            }
        } else {
            for frame in 0..total {
                framer.fill(frame, &mut buf);
                plan.forward(&mut buf);
                for (f, v) in buf.iter().take(nf).enumerate() {
                    out[framer.out_index(frame, f, nf)] = v.scale(scale);
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

    #[test]
    fn paired_real_frames_match_the_complex_transform() {
        // Real input takes the two-frames-per-transform path; the same signal as complex input
        // takes the one-frame path. Odd frame counts, batches, padding modes, windows and
        // non-power-of-two lengths must agree.
        let signal: Vec<f64> = (0..2 * 37)
            .map(|i| ((i * 7919) % 113) as f64 / 17.0 - 3.0)
            .collect();
        let real = Tensor::from_vec(signal.clone(), &[2, 37]).unwrap();
        let complex = real.to_dtype(DType::Complex128, false).unwrap();
        let window = Tensor::from_vec(
            (0..9).map(|i| 1.0 + i as f64 / 9.0).collect::<Vec<_>>(),
            &[9],
        )
        .unwrap();
        for (n_fft, hop, center, mode, win) in [
            (8, 3, false, "reflect", None),
            (16, 4, true, "reflect", None),
            (12, 5, true, "constant", Some(&window)),
            (10, 1, true, "replicate", Some(&window)),
        ] {
            let o = StftOptions {
                n_fft,
                hop_length: Some(hop),
                win_length: win.map(|w: &Tensor| w.sizes()[0]),
                window: win,
                center,
                pad_mode: mode,
                normalized: true,
                onesided: Some(false),
                return_complex: Some(true),
            };
            let a = real.stft(&o).unwrap();
            let b = complex.stft(&o).unwrap();
            assert_eq!(a.sizes(), b.sizes());
            for (x, y) in a.to_vec::<C>().iter().zip(b.to_vec::<C>()) {
                assert!(
                    (x.re - y.re).abs() < 1e-12 && (x.im - y.im).abs() < 1e-12,
                    "{n_fft}: {x:?} {y:?}"
                );
            }
        }
    }
}
