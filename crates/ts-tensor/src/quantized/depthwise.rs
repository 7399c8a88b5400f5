//! Depthwise quantized convolution (`groups == in == out channels`) directly on the stored
//! `u8` integers: the input goes once to channels-last `i16` (`x - x_zp`, zero in the padding),
//! each output pixel accumulates its taps over all channels in vector lanes in exact `i32`,
//! and the accumulators are requantized with FBGEMM's formula (see `qgemm.rs`'s
//! [`Epilogue`]) into NCHW planes. Late MobileNet layers have planes of a few pixels and
//! hundreds of channels, which per-plane kernels cannot vectorize. Compiled for AVX-512, AVX2
//! and baseline (`simd_dispatch!`); the arithmetic is the same on every path.

use rayon::prelude::*;

use super::qgemm::{ranges, Epilogue, OutPtr, PARALLEL_MACS};
use crate::cpu::simd::simd_dispatch;

/// A depthwise weight `[c, 1, kh, kw]` as `[kh * kw][c]` `i16` (`w - w_zp`, which fits).
pub(crate) struct DwWeight {
    taps: usize,
    c: usize,
    w: Vec<i16>,
}

impl DwWeight {
    /// Repacks `ints` (`c` channels of `taps` values).
    pub fn new(ints: &[i32], c: usize) -> Option<DwWeight> {
        if c == 0
            || ints
                .iter()
                .any(|&v| v < i16::MIN as i32 || v > i16::MAX as i32)
        {
            return None;
        }
        let taps = ints.len() / c;
        let mut w = vec![0i16; taps * c];
        for ch in 0..c {
            for t in 0..taps {
                w[t * c + ch] = ints[ch * taps + t] as i16;
            }
        }
        Some(DwWeight { taps, c, w })
    }
}

/// Sizes of a depthwise convolution: input `[nb, c, h, w]`, kernel `kh x kw`, output
/// `oh x ow`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DwShape {
    pub nb: usize,
    pub c: usize,
    pub h: usize,
    pub w: usize,
    pub kh: usize,
    pub kw: usize,
    pub stride: [usize; 2],
    pub padding: [usize; 2],
    pub dilation: [usize; 2],
    pub oh: usize,
    pub ow: usize,
}

/// The depthwise convolution of `x` (`[nb, c, h, w]` stored `u8`, zero point `x_zp`) into
/// `out` (`[nb, c, oh, ow]`), requantized by `ep` (whose offsets must be zero).
pub(crate) fn depthwise(
    x: &[u8],
    x_zp: i32,
    s: &DwShape,
    wt: &DwWeight,
    ep: &Epilogue,
    out: &mut [u8],
) {
    let (c, hp, wp) = (s.c, s.h + 2 * s.padding[0], s.w + 2 * s.padding[1]);
    assert!(
        wt.c == c
            && wt.taps == s.kh * s.kw
            && x.len() == s.nb * c * s.h * s.w
            && out.len() == s.nb * c * s.oh * s.ow
            && ep.bias.len() >= c
    );
    assert!(
        s.oh == 0
            || s.ow == 0
            || ((s.oh - 1) * s.stride[0] + (s.kh - 1) * s.dilation[0] < hp
                && (s.ow - 1) * s.stride[1] + (s.kw - 1) * s.dilation[1] < wp)
    );
    let img = hp * wp * c;
    let mut xt = vec![0i16; s.nb * img];
    for n in 0..s.nb {
        for ch in 0..c {
            let plane = &x[(n * c + ch) * s.h * s.w..][..s.h * s.w];
            for y in 0..s.h {
                let dst = n * img + ((y + s.padding[0]) * wp + s.padding[1]) * c + ch;
                for (xx, &v) in plane[y * s.w..(y + 1) * s.w].iter().enumerate() {
                    xt[dst + xx * c] = (v as i32 - x_zp) as i16;
                }
            }
        }
    }
    let rows = s.nb * s.oh;
    let parts = if rows * s.ow * c * wt.taps >= PARALLEL_MACS {
        crate::threads::num_threads()
    } else {
        1
    };
    let optr = OutPtr(out.as_mut_ptr());
    let task = |(r0, r1): (usize, usize)| {
        let mut acc = vec![0i32; c];
        let mut buf = vec![0u8; s.ow * c];
        for r in r0..r1 {
            let (n, oy) = (r / s.oh, r % s.oh);
            row(
                &xt[n * img..(n + 1) * img],
                s,
                wt,
                ep,
                oy,
                &mut acc,
                &mut buf,
            );
            for ch in 0..c {
                let base = ((n * c + ch) * s.oh + oy) * s.ow;
                for ox in 0..s.ow {
                    // SAFETY: `base + ox < nb * c * oh * ow = out.len()` (asserted); tasks
                    // own disjoint output rows `(n, oy)`.
                    unsafe { *optr.get().add(base + ox) = buf[ox * c + ch] };
                }
            }
        }
    };
    let rs = ranges(rows, parts, 1);
    if rs.len() > 1 {
        crate::threads::parallel_region();
        rs.into_par_iter().for_each(task);
    } else {
        rs.into_iter().for_each(task);
    }
}

/// Output row `oy` of one image: `buf[ox][c]`, the requantized bytes.
#[inline(always)]
fn row_kernel(
    xt: &[i16],
    s: &DwShape,
    wt: &DwWeight,
    ep: &Epilogue,
    oy: usize,
    acc: &mut [i32],
    buf: &mut [u8],
) {
    const MAGIC: f32 = 12_582_912.0;
    let c = s.c;
    let wp = s.w + 2 * s.padding[1];
    let (bias, mult) = (&ep.bias[..c], &ep.multiplier[..c]);
    for ox in 0..s.ow {
        acc.fill(0);
        for ky in 0..s.kh {
            let iy = oy * s.stride[0] + ky * s.dilation[0];
            for kx in 0..s.kw {
                let ix = ox * s.stride[1] + kx * s.dilation[1];
                let xr = &xt[(iy * wp + ix) * c..][..c];
                let wr = &wt.w[(ky * s.kw + kx) * c..][..c];
                for ((a, &xv), &wv) in acc.iter_mut().zip(xr).zip(wr) {
                    *a = a.wrapping_add((xv as i32).wrapping_mul(wv as i32));
                }
            }
        }
        let o = &mut buf[ox * c..(ox + 1) * c];
        for (((o, &a), &b), &m) in o.iter_mut().zip(acc.iter()).zip(bias).zip(mult) {
            let v = ((a as f32 + b) * m).max(ep.lo).min(ep.hi);
            let v = ((v + MAGIC) - MAGIC) + ep.zero_point;
            *o = ((v + MAGIC).to_bits() as i32).wrapping_sub(MAGIC.to_bits() as i32) as u8;
        }
    }
}

simd_dispatch!(fn row<>(xt: &[i16], s: &DwShape, wt: &DwWeight, ep: &Epilogue, oy: usize, acc: &mut [i32], buf: &mut [u8]) = row_kernel;);

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(len: usize, lo: i32, hi: i32, seed: u64) -> Vec<i32> {
        let mut s = seed;
        (0..len)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                lo + ((s >> 33) % (hi - lo + 1) as u64) as i32
            })
            .collect()
    }

    fn out_size(i: usize, k: usize, s: usize, p: usize, d: usize) -> usize {
        (i + 2 * p - d * (k - 1) - 1) / s + 1
    }

    fn check(s0: DwShape, x_zp: i32, wspan: (i32, i32)) {
        let s = DwShape {
            oh: out_size(s0.h, s0.kh, s0.stride[0], s0.padding[0], s0.dilation[0]),
            ow: out_size(s0.w, s0.kw, s0.stride[1], s0.padding[1], s0.dilation[1]),
            ..s0
        };
        let c = s.c;
        let x: Vec<i32> = vals(s.nb * c * s.h * s.w, 0, 255, 3);
        let wi = vals(c * s.kh * s.kw, wspan.0, wspan.1, 4);
        let wt = DwWeight::new(&wi, c).unwrap();
        let bias: Vec<f32> = vals(c, -200, 200, 5)
            .iter()
            .map(|&v| v as f32 * 0.25)
            .collect();
        let mult: Vec<f32> = vals(c, 1, 50, 6)
            .iter()
            .map(|&v| v as f32 / 2048.0)
            .collect();
        let zp = 77.0;
        let ep = Epilogue::new(0, &[], &bias, &mult, (0.0 - zp, 255.0 - zp, zp));
        let xb: Vec<u8> = x.iter().map(|&v| v as u8).collect();
        let mut out = vec![0u8; s.nb * c * s.oh * s.ow];
        depthwise(&xb, x_zp, &s, &wt, &ep, &mut out);
        for n in 0..s.nb {
            for ch in 0..c {
                for oy in 0..s.oh {
                    for ox in 0..s.ow {
                        let mut acc = 0i32;
                        for ky in 0..s.kh {
                            for kx in 0..s.kw {
                                let iy = (oy * s.stride[0] + ky * s.dilation[0]) as isize
                                    - s.padding[0] as isize;
                                let ix = (ox * s.stride[1] + kx * s.dilation[1]) as isize
                                    - s.padding[1] as isize;
                                if iy < 0 || ix < 0 || iy as usize >= s.h || ix as usize >= s.w {
                                    continue;
                                }
                                let xv = x[((n * c + ch) * s.h + iy as usize) * s.w + ix as usize];
                                acc += (xv - x_zp) * wi[(ch * s.kh + ky) * s.kw + kx];
                            }
                        }
                        let got = out[((n * c + ch) * s.oh + oy) * s.ow + ox];
                        assert_eq!(got, ep.one(acc, ch), "{s:?} at {n} {ch} {oy} {ox}");
                    }
                }
            }
        }
    }

    #[test]
    fn depthwise_matches_the_direct_loop() {
        let base = DwShape {
            nb: 2,
            c: 5,
            h: 7,
            w: 9,
            kh: 3,
            kw: 3,
            stride: [1, 1],
            padding: [1, 1],
            dilation: [1, 1],
            oh: 0,
            ow: 0,
        };
        let cases = [
            base,
            DwShape {
                c: 33,
                stride: [2, 2],
                ..base
            },
            DwShape {
                c: 17,
                h: 1,
                w: 1,
                ..base
            },
            DwShape {
                c: 64,
                kh: 5,
                kw: 5,
                padding: [2, 2],
                h: 4,
                w: 3,
                ..base
            },
            DwShape {
                c: 3,
                dilation: [2, 2],
                padding: [2, 1],
                ..base
            },
            DwShape {
                c: 16,
                padding: [0, 0],
                stride: [1, 2],
                nb: 1,
                ..base
            },
        ];
        for s in cases {
            for (zp, span) in [(0, (-128, 127)), (128, (-255, 255)), (255, (120, 127))] {
                check(s, zp, span);
                crate::cpu::simd::with_avx2_only(|| check(s, zp, span));
            }
        }
        // Wide enough to split across threads.
        check(
            DwShape {
                nb: 2,
                c: 96,
                h: 40,
                w: 40,
                ..base
            },
            3,
            (-128, 127),
        );
    }
}
