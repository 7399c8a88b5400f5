//! Quantized convolution and linear products as `u8 x i8` GEMMs with `i32` accumulation on
//! AVX-512 VNNI (`vpdpbusd`), with FBGEMM's requantization fused into the store.
//!
//! The activations stay `u8` (quint8) and the weights `i8` (`w - w_zp`, which must fit), so
//! `sum_k (x - x_zp) * w = sum_k x * w - x_zp * sum_k w`: the second term is one constant per
//! output channel (the weight's row sums are kept with the packed weight). `vpdpbusd` adds
//! four `u8 * i8` products to each `i32` lane without saturation, so the accumulators are the
//! exact wrapping `i32` sums the reference loop computes, and the epilogue applies the same
//! `f32` formula as `kernels.rs` (clamp, round half to even by `1.5 * 2^23`, add the zero
//! point), so results are bit-identical.
//!
//! Two shapes of work: with many pixels per image (a convolution's plane of 16 or more) the
//! vector lanes run over pixels and each weight is broadcast, so the result lands in NCHW
//! planes directly ([`conv_pixels`]); with few (late layers, linear layers) the lanes run over
//! output channels and each input row is broadcast ([`rows_channels`]). Machines without VNNI
//! keep the exact float path of `kernels.rs`.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use rayon::prelude::*;

/// Multiply-adds under which a product runs on one thread. A VNNI instruction does 64 of
/// them, so 2M take ~20 us on one core, which splitting in two roughly halves; at 256K (a
/// few microseconds), the hand-off to a second thread cost more than it saved and a small
/// quantized CNN ran 15-70% slower on 2 threads than on 1.
pub(crate) const PARALLEL_MACS: usize = 1 << 21;

/// Whether the `u8 x i8` kernels can run on this CPU (AVX-512 F/BW with VNNI).
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        crate::cpu::simd::has_avx512()
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512vnni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A weight `[n, k]` of `i8` values packed for both kernel shapes, with its row sums.
pub(crate) struct QWeight {
    pub n: usize,
    pub k: usize,
    /// `k` rounded up to a multiple of 4 (the depth of one `vpdpbusd` step), in groups.
    pub kq: usize,
    /// `[n][kq * 4]`, zero padded: rows broadcast four bytes at a time.
    rows: Vec<i8>,
    /// `[ceil(n / 16)][kq][16][4]`, zero padded: 16 channels' groups of four in one vector.
    blocks: Vec<i8>,
    /// `sum_k w[c][k]` (wrapping).
    pub row_sum: Vec<i32>,
}

impl QWeight {
    /// Packs `ints` (`n` rows of `w - zp`); `None` when a value does not fit `i8`.
    pub fn new(ints: &[i32], n: usize) -> Option<QWeight> {
        if n == 0 || ints.iter().any(|&v| i8::try_from(v).is_err()) {
            return None;
        }
        let k = ints.len() / n;
        let kq = k.div_ceil(4);
        let mut rows = vec![0i8; n * kq * 4];
        let nb = n.div_ceil(16);
        let mut blocks = vec![0i8; nb * kq * 64];
        let mut row_sum = vec![0i32; n];
        for c in 0..n {
            for j in 0..k {
                let v = ints[c * k + j] as i8;
                rows[c * kq * 4 + j] = v;
                blocks[((c / 16) * kq + j / 4) * 64 + (c % 16) * 4 + j % 4] = v;
                row_sum[c] = row_sum[c].wrapping_add(v as i32);
            }
        }
        Some(QWeight {
            n,
            k,
            kq,
            rows,
            blocks,
            row_sum,
        })
    }
}

/// Per-channel requantization: `((acc - offset[c]) as f32 + bias[c]) * multiplier[c]`,
/// clamped to `[lo, hi]` (shifted by the zero point), rounded half to even, plus `zero_point`,
/// stored as `u8`. Arrays are padded to a multiple of 16 channels.
pub(crate) struct Epilogue {
    pub offset: Vec<i32>,
    pub bias: Vec<f32>,
    pub multiplier: Vec<f32>,
    pub lo: f32,
    pub hi: f32,
    pub zero_point: f32,
}

impl Epilogue {
    /// The constants for `n` channels: `offset = x_zp * row_sum` (none when `row_sum` is
    /// empty), `bias` the precomputed `bias / (x_scale * w_scale)`.
    pub fn new(
        x_zp: i32,
        row_sum: &[i32],
        bias: &[f32],
        multiplier: &[f32],
        range: (f32, f32, f32),
    ) -> Epilogue {
        let n = bias.len();
        let np = n.div_ceil(16) * 16;
        let pad = |v: &[f32]| {
            let mut o = v.to_vec();
            o.resize(np, 0.0);
            o
        };
        let mut offset: Vec<i32> = row_sum.iter().map(|&s| s.wrapping_mul(x_zp)).collect();
        offset.resize(np, 0);
        Epilogue {
            offset,
            bias: pad(bias),
            multiplier: pad(multiplier),
            lo: range.0,
            hi: range.1,
            zero_point: range.2,
        }
    }

    /// The scalar formula for one accumulator of channel `c` (tests and tails).
    #[cfg(test)]
    pub fn one(&self, acc: i32, c: usize) -> u8 {
        const MAGIC: f32 = 12_582_912.0;
        let x = ((acc.wrapping_sub(self.offset[c]) as f32 + self.bias[c]) * self.multiplier[c])
            .max(self.lo)
            .min(self.hi);
        (((x + MAGIC) - MAGIC) + self.zero_point) as u8
    }
}

/// A raw output pointer shared by tasks that write disjoint elements.
#[derive(Clone, Copy)]
pub(crate) struct OutPtr(pub *mut u8);

impl OutPtr {
    /// The address (a method, so closures capture the whole `OutPtr`, which is `Sync`).
    pub fn get(self) -> *mut u8 {
        self.0
    }
}
// SAFETY: tasks given an `OutPtr` write disjoint elements of one live buffer (each caller
// splits the work by output channel or row), so sharing the address across threads is sound.
unsafe impl Send for OutPtr {}
// SAFETY: as for `Send`: the pointer is only read, the writes through it are disjoint.
unsafe impl Sync for OutPtr {}

/// Splits `0..n` into at most `parts` ranges aligned to `align`.
pub(crate) fn ranges(n: usize, parts: usize, align: usize) -> Vec<(usize, usize)> {
    let units = n.div_ceil(align);
    let parts = parts.clamp(1, units.max(1));
    (0..parts)
        .map(|i| {
            let (a, b) = (units * i / parts, units * (i + 1) / parts);
            ((a * align).min(n), (b * align).min(n))
        })
        .filter(|(a, b)| a < b)
        .collect()
}

/// Convolution (or any product whose result is planes of `p` pixels per image), lanes over
/// pixels. `a` holds, per image, the input columns packed `[kq][pp][4]` (`pp` = `p` rounded
/// up to 16, zero padded); `out` is `[images][n][p]`.
pub(crate) fn conv_pixels(
    a: &[u8],
    images: usize,
    p: usize,
    w: &QWeight,
    ep: &Epilogue,
    out: &mut [u8],
) {
    let pp = p.div_ceil(16) * 16;
    assert!(available(), "the u8 x i8 kernels need AVX-512 VNNI");
    assert!(a.len() >= images * w.kq * pp * 4 && out.len() >= images * w.n * p);
    let parts = if images * p * w.n * w.k >= PARALLEL_MACS {
        crate::threads::num_threads()
    } else {
        1
    };
    let optr = OutPtr(out.as_mut_ptr());
    let task = |(c0, c1): (usize, usize)| {
        for img in 0..images {
            let ai = &a[img * w.kq * pp * 4..(img + 1) * w.kq * pp * 4];
            // SAFETY: the asserts above bound every access: `ai` holds `kq * pp * 4` bytes,
            // channels `c0..c1` are below `n`, pixels below `p`; this CPU has AVX-512 BW/VNNI
            // (callers check `available`); tasks own disjoint channel ranges of `out`.
            unsafe {
                let o = optr.get().add(img * w.n * p);
                #[cfg(target_arch = "x86_64")]
                pixels_channels(ai, pp, p, w, ep, c0, c1, o);
            }
        }
    };
    let rs = ranges(w.n, parts, 6);
    if rs.len() > 1 {
        crate::threads::parallel_region();
        rs.into_par_iter().for_each(task);
    } else {
        rs.into_iter().for_each(task);
    }
}

/// Channels `c0..c1` of one image for [`conv_pixels`], in tiles of up to 6 channels x 64
/// pixels.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni")]
#[allow(clippy::too_many_arguments)]
unsafe fn pixels_channels(
    a: &[u8],
    pp: usize,
    p: usize,
    w: &QWeight,
    ep: &Epilogue,
    c0: usize,
    c1: usize,
    out: *mut u8,
) {
    let mut c = c0;
    while c < c1 {
        let nr = (c1 - c).min(6);
        let mut p0 = 0;
        while p0 < p {
            let pv = (p - p0).div_ceil(16).min(4);
            macro_rules! go {
                ($($nr:literal),*; $pv:literal) => {
                    match nr {
                        $($nr => tile_pixels::<$nr, $pv>(a, pp, p, p0, w, ep, c, out),)*
                        _ => unreachable!("at most 6 channels per tile"),
                    }
                };
            }
            // SAFETY: as the caller's; `c + nr <= c1 <= n` and `p0 + 16 * pv <= pp`.
            unsafe {
                match pv {
                    4 => go!(1, 2, 3, 4, 5, 6; 4),
                    3 => go!(1, 2, 3, 4, 5, 6; 3),
                    2 => go!(1, 2, 3, 4, 5, 6; 2),
                    _ => go!(1, 2, 3, 4, 5, 6; 1),
                }
            }
            p0 += pv * 16;
        }
        c += nr;
    }
}

/// One tile: channels `c..c + NR`, pixels `p0..p0 + 16 * PV` (masked beyond `p`).
///
/// # Safety
/// AVX-512 F/BW/VNNI; `a` holds `w.kq * pp * 4` bytes, `p0 + 16 * PV <= pp`, `c + NR <= n`,
/// `out` has `n * p` bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni")]
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn tile_pixels<const NR: usize, const PV: usize>(
    a: &[u8],
    pp: usize,
    p: usize,
    p0: usize,
    w: &QWeight,
    ep: &Epilogue,
    c: usize,
    out: *mut u8,
) {
    // SAFETY: the caller's contract bounds every pointer below.
    unsafe {
        let mut acc = [[_mm512_setzero_si512(); PV]; NR];
        let wrow = w.rows.as_ptr().add(c * w.kq * 4);
        let stride = w.kq * 4;
        let mut ap = a.as_ptr().add(p0 * 4);
        for q in 0..w.kq {
            let mut av = [_mm512_setzero_si512(); PV];
            for (v, x) in av.iter_mut().enumerate() {
                *x = _mm512_loadu_si512(ap.add(v * 64) as *const __m512i);
            }
            for (r, row) in acc.iter_mut().enumerate() {
                let wb = _mm512_set1_epi32(
                    (wrow.add(r * stride + q * 4) as *const i32).read_unaligned(),
                );
                for (v, x) in row.iter_mut().enumerate() {
                    *x = _mm512_dpbusd_epi32(*x, av[v], wb);
                }
            }
            ap = ap.add(pp * 4);
        }
        for (r, row) in acc.iter().enumerate() {
            let ch = c + r;
            let o = out.add(ch * p + p0);
            let e = EpilogueVec::broadcast(ep, ch);
            for (v, &x) in row.iter().enumerate() {
                let left = p - p0 - (v * 16).min(p - p0);
                if left == 0 {
                    break;
                }
                let mask: __mmask16 = if left >= 16 {
                    0xffff
                } else {
                    (1u16 << left) - 1
                };
                _mm_mask_storeu_epi8(o.add(v * 16) as *mut i8, mask, e.apply(x));
            }
        }
    }
}

/// The epilogue constants in vectors: one channel broadcast, or 16 channels.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct EpilogueVec {
    offset: __m512i,
    bias: __m512,
    multiplier: __m512,
    lo: __m512,
    hi: __m512,
    zero_point: __m512,
}

#[cfg(target_arch = "x86_64")]
impl EpilogueVec {
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    #[inline]
    fn broadcast(ep: &Epilogue, c: usize) -> EpilogueVec {
        EpilogueVec {
            offset: _mm512_set1_epi32(ep.offset[c]),
            bias: _mm512_set1_ps(ep.bias[c]),
            multiplier: _mm512_set1_ps(ep.multiplier[c]),
            lo: _mm512_set1_ps(ep.lo),
            hi: _mm512_set1_ps(ep.hi),
            zero_point: _mm512_set1_ps(ep.zero_point),
        }
    }

    /// Channels `c..c + 16` (the arrays are padded to a multiple of 16).
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    #[inline]
    unsafe fn channels(ep: &Epilogue, c: usize) -> EpilogueVec {
        // SAFETY: `c + 16 <= ep.offset.len()` (padded), the loads are unaligned.
        unsafe {
            EpilogueVec {
                offset: _mm512_loadu_si512(ep.offset.as_ptr().add(c) as *const __m512i),
                bias: _mm512_loadu_ps(ep.bias.as_ptr().add(c)),
                multiplier: _mm512_loadu_ps(ep.multiplier.as_ptr().add(c)),
                lo: _mm512_set1_ps(ep.lo),
                hi: _mm512_set1_ps(ep.hi),
                zero_point: _mm512_set1_ps(ep.zero_point),
            }
        }
    }

    /// Requantizes 16 accumulators to 16 bytes (the formula of [`Epilogue`]; `max(x, lo)`
    /// returns `lo` for NaN, as `f32::max` does).
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    #[inline]
    fn apply(&self, acc: __m512i) -> __m128i {
        let magic = _mm512_set1_ps(12_582_912.0);
        let x = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc, self.offset));
        let x = _mm512_mul_ps(_mm512_add_ps(x, self.bias), self.multiplier);
        let x = _mm512_min_ps(_mm512_max_ps(x, self.lo), self.hi);
        let x = _mm512_add_ps(
            _mm512_sub_ps(_mm512_add_ps(x, magic), magic),
            self.zero_point,
        );
        _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(x))
    }
}

/// Where [`rows_channels`] stores row `m`, channel `c`: `out[m * row + c * col]` within image
/// blocks of `per_image` rows that start `image` bytes apart.
#[derive(Clone, Copy)]
pub(crate) struct RowLayout {
    pub per_image: usize,
    pub image: usize,
    pub row: usize,
    pub col: usize,
}

/// `m` rows of `a` (`[m][kq * 4]` bytes, zero padded) times the weight, lanes over output
/// channels, requantized into `out` at `layout`.
pub(crate) fn rows_channels(
    a: &[u8],
    m: usize,
    w: &QWeight,
    ep: &Epilogue,
    layout: RowLayout,
    out: &mut [u8],
) {
    assert!(available(), "the u8 x i8 kernels need AVX-512 VNNI");
    assert!(a.len() >= m * w.kq * 4 && layout.per_image > 0);
    let last = if m == 0 || w.n == 0 {
        0
    } else {
        let (i, r) = ((m - 1) / layout.per_image, (m - 1) % layout.per_image);
        i * layout.image + r * layout.row + (w.n - 1) * layout.col + 1
    };
    assert!(out.len() >= last);
    let parts = if m * w.n * w.k >= PARALLEL_MACS {
        crate::threads::num_threads()
    } else {
        1
    };
    let optr = OutPtr(out.as_mut_ptr());
    let task = |(b0, b1): (usize, usize)| {
        // SAFETY: bounded by the asserts above (blocks `b0..b1` are below `ceil(n / 16)`, the
        // last stored element is below `last`); this CPU has AVX-512 BW/VNNI (callers check
        // `available`); tasks own disjoint channel blocks.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            rows_blocks(a, m, w, ep, layout, b0, b1, optr.get())
        };
    };
    let rs = ranges(w.n.div_ceil(16), parts, 1);
    if rs.len() > 1 {
        crate::threads::parallel_region();
        rs.into_par_iter().for_each(task);
    } else {
        rs.into_iter().for_each(task);
    }
}

/// Channel blocks `b0..b1` (16 channels each) of [`rows_channels`], in tiles of up to 4 rows x
/// 4 blocks.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni")]
#[allow(clippy::too_many_arguments)]
unsafe fn rows_blocks(
    a: &[u8],
    m: usize,
    w: &QWeight,
    ep: &Epilogue,
    layout: RowLayout,
    b0: usize,
    b1: usize,
    out: *mut u8,
) {
    let mut b = b0;
    while b < b1 {
        let nb = (b1 - b).min(4);
        let mut r0 = 0;
        while r0 < m {
            let mr = (m - r0).min(4);
            macro_rules! go {
                ($($mr:literal),*; $nb:literal) => {
                    match mr {
                        $($mr => tile_rows::<$mr, $nb>(a, r0, w, ep, layout, b, out),)*
                        _ => unreachable!("at most 4 rows per tile"),
                    }
                };
            }
            // SAFETY: as the caller's; `r0 + mr <= m`, `b + nb <= b1`.
            unsafe {
                match nb {
                    4 => go!(1, 2, 3, 4; 4),
                    3 => go!(1, 2, 3, 4; 3),
                    2 => go!(1, 2, 3, 4; 2),
                    _ => go!(1, 2, 3, 4; 1),
                }
            }
            r0 += mr;
        }
        b += nb;
    }
}

/// One tile: rows `r0..r0 + MR`, channel blocks `b..b + NB`.
///
/// # Safety
/// AVX-512 F/BW/VNNI; rows and blocks in range; `out` covers every stored element.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vnni")]
#[inline]
unsafe fn tile_rows<const MR: usize, const NB: usize>(
    a: &[u8],
    r0: usize,
    w: &QWeight,
    ep: &Epilogue,
    layout: RowLayout,
    b: usize,
    out: *mut u8,
) {
    // SAFETY: the caller's contract bounds every pointer below.
    unsafe {
        let lda = w.kq * 4;
        let mut acc = [[_mm512_setzero_si512(); NB]; MR];
        let ap = a.as_ptr().add(r0 * lda);
        let wp = w.blocks.as_ptr().add(b * w.kq * 64);
        for q in 0..w.kq {
            let mut wv = [_mm512_setzero_si512(); NB];
            for (j, x) in wv.iter_mut().enumerate() {
                *x = _mm512_loadu_si512(wp.add((j * w.kq + q) * 64) as *const __m512i);
            }
            for (r, row) in acc.iter_mut().enumerate() {
                let xb =
                    _mm512_set1_epi32((ap.add(r * lda + q * 4) as *const i32).read_unaligned());
                for (j, x) in row.iter_mut().enumerate() {
                    *x = _mm512_dpbusd_epi32(*x, xb, wv[j]);
                }
            }
        }
        for j in 0..NB {
            let c0 = (b + j) * 16;
            let e = EpilogueVec::channels(ep, c0);
            let valid = (w.n - c0).min(16);
            for (r, row) in acc.iter().enumerate() {
                let m = r0 + r;
                let base =
                    (m / layout.per_image) * layout.image + (m % layout.per_image) * layout.row;
                let bytes = e.apply(row[j]);
                if layout.col == 1 {
                    let mask: __mmask16 = if valid == 16 {
                        0xffff
                    } else {
                        (1u16 << valid) - 1
                    };
                    _mm_mask_storeu_epi8(out.add(base + c0) as *mut i8, mask, bytes);
                } else {
                    let mut tmp = [0u8; 16];
                    _mm_storeu_si128(tmp.as_mut_ptr() as *mut __m128i, bytes);
                    for (i, &t) in tmp.iter().enumerate().take(valid) {
                        *out.add(base + (c0 + i) * layout.col) = t;
                    }
                }
            }
        }
    }
}

/// Stores input row `r` (one `(channel, ky, kx)` of the window, its value at each of the
/// image's output pixels) into the layout [`conv_pixels`] reads: `dst[(r / 4) * pp + p][r % 4]`
/// with `pp` = `row.len()` rounded up to 16.
#[cfg(test)]
pub(crate) fn interleave_row(r: usize, row: &[u8], dst: &mut [u8]) {
    let pp = row.len().div_ceil(16) * 16;
    let dst = &mut dst[(r / 4) * pp * 4..][..pp * 4];
    for (d, &v) in dst.chunks_exact_mut(4).zip(row) {
        d[r % 4] = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic values in `[lo, hi]`.
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

    fn epilogue(n: usize, xz: i32, w: &QWeight, relu: bool) -> Epilogue {
        let bias: Vec<f32> = vals(n, -300, 300, 9)
            .iter()
            .map(|&v| v as f32 * 0.5)
            .collect();
        let mult: Vec<f32> = vals(n, 1, 40, 7)
            .iter()
            .map(|&v| v as f32 / 4096.0)
            .collect();
        let zp = 100.0;
        let lo = if relu { 0.0 } else { -zp };
        Epilogue::new(xz, &w.row_sum, &bias, &mult, (lo, 255.0 - zp, zp))
    }

    /// `sum_k (x[m][k] - xz) * w[c][k]`, wrapping.
    fn reference(x: &[i32], m: usize, k: usize, xz: i32, w: &[i32], n: usize) -> Vec<i32> {
        let mut out = vec![0i32; m * n];
        for i in 0..m {
            for c in 0..n {
                out[i * n + c] = (0..k).fold(0i32, |s, j| {
                    s.wrapping_add((x[i * k + j] - xz).wrapping_mul(w[c * k + j]))
                });
            }
        }
        out
    }

    #[test]
    fn both_kernel_shapes_match_the_integer_reference() {
        if !available() {
            return;
        }
        // Remainders of every tile size: pixels 1..=16 and past 64, channels not multiple of
        // 6 or 16, depths not multiple of 4; zero points 0, 128, 255; saturating weights.
        for (m, k, n) in [
            (1, 1, 1),
            (3, 5, 17),
            (16, 4, 6),
            (17, 9, 7),
            (70, 27, 33),
            (5, 130, 65),
            (130, 64, 13),
        ] {
            for (xz, span) in [(0, (-128, 127)), (128, (-128, -120)), (255, (120, 127))] {
                let x = vals(m * k, 0, 255, 1);
                let wi = vals(n * k, span.0, span.1, 2);
                let w = QWeight::new(&wi, n).unwrap();
                let want = reference(&x, m, k, xz, &wi, n);
                for relu in [false, true] {
                    let ep = epilogue(n, xz, &w, relu);
                    let expect: Vec<u8> = (0..m * n)
                        .map(|i| {
                            let acc = want[i].wrapping_add(ep.offset[i % n]);
                            ep.one(acc, i % n)
                        })
                        .collect();
                    // Lanes over channels, rows `[m][n]`.
                    let mut a = vec![0u8; m * w.kq * 4];
                    for i in 0..m {
                        for j in 0..k {
                            a[i * w.kq * 4 + j] = x[i * k + j] as u8;
                        }
                    }
                    let mut out = vec![0u8; m * n];
                    let layout = RowLayout {
                        per_image: m,
                        image: 0,
                        row: n,
                        col: 1,
                    };
                    rows_channels(&a, m, &w, &ep, layout, &mut out);
                    assert_eq!(out, expect, "rows {m}x{k}x{n} zp {xz}");
                    // Lanes over pixels, planes `[n][m]` (one image), and the transposed
                    // store of the row kernel.
                    let pp = m.div_ceil(16) * 16;
                    let mut packed = vec![0u8; w.kq * pp * 4];
                    for r in 0..k {
                        let row: Vec<u8> = (0..m).map(|p| x[p * k + r] as u8).collect();
                        interleave_row(r, &row, &mut packed);
                    }
                    let mut planes = vec![0u8; n * m];
                    conv_pixels(&packed, 1, m, &w, &ep, &mut planes);
                    let mut rows_t = vec![0u8; n * m];
                    let layout = RowLayout {
                        per_image: m,
                        image: 0,
                        row: 1,
                        col: m,
                    };
                    rows_channels(&a, m, &w, &ep, layout, &mut rows_t);
                    for i in 0..m {
                        for c in 0..n {
                            assert_eq!(planes[c * m + i], expect[i * n + c], "pixels {m}x{k}x{n}");
                            assert_eq!(rows_t[c * m + i], expect[i * n + c]);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn weights_outside_i8_are_not_packed() {
        assert!(QWeight::new(&[1, 128, 3, 4], 2).is_none());
        assert!(QWeight::new(&[1, -129], 1).is_none());
        let w = QWeight::new(&[1, -128, 127, 4, 5], 1).unwrap();
        assert_eq!((w.k, w.kq, w.row_sum[0]), (5, 2, 9));
    }
}
