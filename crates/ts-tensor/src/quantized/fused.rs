//! Quantized elementwise loops on the stored integers themselves (`u8`/`i8`/`i32`), without
//! widening whole tensors to `i64` or keeping dequantized `f32` copies: each loop dequantizes,
//! computes and requantizes an element in registers, and is compiled for AVX-512 and AVX2 + FMA
//! (see [`simd_dispatch!`]), so `mul_add` is one `vfmadd` and `round_ties_even` one `vround`.
//!
//! The arithmetic is the one `kernels.rs` documents (ATen's vectorized dequantization
//! `q * s + (-zp * s)` with one rounding, `nearbyint(v * (1 / s)) + zp` saturated), so results
//! are bit-identical to the scalar formulas; the tests compare them element by element.

use crate::cpu::simd::simd_dispatch;
use crate::element::Element;

use super::{quantize_val, QDType};

/// A stored quantized integer type: `u8` (quint8), `i8` (qint8), `i32` (qint32).
pub(crate) trait QInt: Element + Default {
    /// True for the 8-bit types, whose ranges keep every quantization step exact in `f32`.
    const NARROW: bool;
    /// The value as `f32` (rounded for large `i32`s, as `(q as f32)` in ATen).
    fn to_f32(self) -> f32;
    /// The value as `i32`.
    fn to_i32(self) -> i32;
    /// An integer-valued `f32` already inside this type's range.
    fn from_f32_int(v: f32) -> Self;
}

/// `v`, an integer-valued `f32` of magnitude below `2^22`, as `i32`: adding `1.5 * 2^23` puts
/// `v` in the low mantissa bits (exactly), which vectorizes where a saturating `as i32` is a
/// scalar conversion per element.
#[inline(always)]
fn small_int(v: f32) -> i32 {
    const MAGIC: f32 = 12_582_912.0;
    ((v + MAGIC).to_bits() as i32).wrapping_sub(MAGIC.to_bits() as i32)
}

impl QInt for u8 {
    const NARROW: bool = true;
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self as f32
    }
    #[inline(always)]
    fn to_i32(self) -> i32 {
        self as i32
    }
    #[inline(always)]
    fn from_f32_int(v: f32) -> u8 {
        small_int(v) as u8
    }
}

impl QInt for i8 {
    const NARROW: bool = true;
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self as f32
    }
    #[inline(always)]
    fn to_i32(self) -> i32 {
        self as i32
    }
    #[inline(always)]
    fn from_f32_int(v: f32) -> i8 {
        small_int(v) as i8
    }
}

impl QInt for i32 {
    const NARROW: bool = false;
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self as f32
    }
    #[inline(always)]
    fn to_i32(self) -> i32 {
        self
    }
    #[inline(always)]
    fn from_f32_int(v: f32) -> i32 {
        v as i32
    }
}

/// Runs `f` on the elements of `t` (stored as `T`) in row-major order: a view of the storage
/// when `t` is contiguous, else a copy.
pub(crate) fn with_stored<T: Element, R>(t: &crate::Tensor, f: impl FnOnce(&[T]) -> R) -> R {
    match t.data_view::<T>() {
        Ok(v) => f(&v),
        Err(_) => f(&t.to_vec::<T>()),
    }
}

/// Runs `$body` with `$T` the storage type of quantized dtype `$dtype`.
macro_rules! with_qint {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::quantized::QDType::QUInt8 => {
                type $T = u8;
                $body
            }
            $crate::quantized::QDType::QInt8 => {
                type $T = i8;
                $body
            }
            $crate::quantized::QDType::QInt32 => {
                type $T = i32;
                $body
            }
        }
    };
}
pub(crate) use with_qint;

/// How a float result is quantized: `1 / scale`, the zero point, and the output range shifted
/// by the zero point (all exact in `f32` for the 8-bit types).
#[derive(Clone, Copy)]
pub(crate) struct QuantizeTo {
    pub inv_scale: f32,
    pub zero_point: f32,
    pub lo: f32,
    pub hi: f32,
    zp_i64: i64,
    range: (i64, i64),
}

impl QuantizeTo {
    /// Quantization to `scale` and `zero_point` in `dtype`'s range.
    pub fn new(scale: f64, zero_point: i64, dtype: QDType) -> QuantizeTo {
        let (lo, hi) = dtype.range();
        QuantizeTo {
            inv_scale: 1.0f32 / scale as f32,
            zero_point: zero_point as f32,
            lo: (lo - zero_point) as f32,
            hi: (hi - zero_point) as f32,
            zp_i64: zero_point,
            range: (lo, hi),
        }
    }

    /// One value, as [`quantize_val`] (NaN gives the zero point; clamping before adding the
    /// zero point gives the same integer since the bounds are integers).
    #[inline(always)]
    fn one<T: QInt>(&self, x: f32) -> T {
        if !T::NARROW {
            let (lo, hi) = self.range;
            return T::from_i64(quantize_val(x, self.inv_scale, self.zp_i64, lo, hi));
        }
        let r = (x * self.inv_scale).round_ties_even();
        let r = if r.is_nan() { 0.0 } else { r };
        T::from_f32_int(r.max(self.lo).min(self.hi) + self.zero_point)
    }
}

/// Dequantization parameters: `q * scale + premul` with `premul = scale * -zero_point`.
#[derive(Clone, Copy)]
pub(crate) struct Dequant {
    pub scale: f32,
    pub premul: f32,
}

impl Dequant {
    /// ATen's vectorized dequantization constants for `scale` and `zero_point`.
    pub fn new(scale: f64, zero_point: i64) -> Dequant {
        let s = scale as f32;
        Dequant {
            scale: s,
            premul: s * -(zero_point as f32),
        }
    }

    #[inline(always)]
    fn one<T: QInt>(&self, q: T) -> f32 {
        q.to_f32().mul_add(self.scale, self.premul)
    }
}

#[inline(always)]
fn dequantize_kernel<T: QInt>(src: &[T], d: Dequant, out: &mut [f32]) {
    for (o, &q) in out.iter_mut().zip(src) {
        *o = d.one(q);
    }
}

#[inline(always)]
fn quantize_kernel<T: QInt>(src: &[f32], qt: QuantizeTo, out: &mut [T]) {
    for (o, &x) in out.iter_mut().zip(src) {
        *o = qt.one(x);
    }
}

/// `out = quantize(relu?(dequant(a) + dequant(b)))`; `floor` is 0 with a fused ReLU, else
/// negative infinity.
#[inline(always)]
fn add_kernel<T: QInt>(
    a: &[T],
    b: &[T],
    da: Dequant,
    db: Dequant,
    floor: f32,
    qt: QuantizeTo,
    out: &mut [T],
) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = qt.one((da.one(x) + db.one(y)).max(floor));
    }
}

/// `out = quantize(x * min(max(x + 3, 0), 6) / 6)` of dequantized `x`.
#[inline(always)]
fn hardswish_kernel<T: QInt>(src: &[T], d: Dequant, qt: QuantizeTo, out: &mut [T]) {
    for (o, &q) in out.iter_mut().zip(src) {
        let v = d.one(q);
        *o = qt.one(v * (v + 3.0).clamp(0.0, 6.0) / 6.0);
    }
}

/// `out = quantize(min(max(x + 3, 0), 6) / 6)` of dequantized `x`.
#[inline(always)]
fn hardsigmoid_kernel<T: QInt>(src: &[T], d: Dequant, qt: QuantizeTo, out: &mut [T]) {
    for (o, &q) in out.iter_mut().zip(src) {
        let v = d.one(q);
        *o = qt.one((v + 3.0).clamp(0.0, 6.0) / 6.0);
    }
}

/// `q - zero_point` (wrapping `i32`) as `f32`, exact below `2^24` (the callers use it only then),
/// and `max |q - zero_point|`.
#[inline(always)]
fn shift_kernel<T: QInt>(src: &[T], zero_point: i32, out: &mut [f32]) -> u64 {
    let (mut lo, mut hi) = (i32::MAX, i32::MIN);
    for &q in src {
        lo = lo.min(q.to_i32());
        hi = hi.max(q.to_i32());
    }
    for (o, &q) in out.iter_mut().zip(src) {
        *o = q.to_i32().wrapping_sub(zero_point) as f32;
    }
    if src.is_empty() {
        return 0;
    }
    let d = |v: i32| (v as i64 - zero_point as i64).unsigned_abs();
    d(lo).max(d(hi))
}

/// FBGEMM's requantization of one channel's accumulators (given as the `f32` of their `i32`):
/// `((acc + bias) * multiplier)` clamped to `[lo, hi]` (shifted by the zero point, at most
/// `2^22` in magnitude), rounded half to even by adding and subtracting `1.5 * 2^23`, plus the
/// zero point.
#[inline(always)]
fn requant_channel_kernel<T: QInt>(acc: &[f32], r: RequantChannel, out: &mut [T]) {
    const ROUND_MAGIC: f32 = 12_582_912.0;
    for (o, &a) in out.iter_mut().zip(acc) {
        let x = ((a + r.bias) * r.multiplier).max(r.lo).min(r.hi);
        *o = T::from_f32_int(((x + ROUND_MAGIC) - ROUND_MAGIC) + r.zero_point);
    }
}

/// One output channel's requantization constants for [`requant_channel`].
#[derive(Clone, Copy)]
pub(crate) struct RequantChannel {
    pub bias: f32,
    pub multiplier: f32,
    pub lo: f32,
    pub hi: f32,
    pub zero_point: f32,
}

/// `quantized::mul`'s constants: operand zero points, `a_scale * b_scale / scale`, and the
/// output's zero point and range (shifted by it).
#[derive(Clone, Copy)]
pub(crate) struct MulParams {
    pub a_zero_point: i32,
    pub b_zero_point: i32,
    pub multiplier: f32,
    zero_point: i64,
    range: (i64, i64),
}

impl MulParams {
    /// The constants for operands with zero points `za`, `zb`, the requantization
    /// `multiplier`, and output `zero_point` with range `[lo, hi]` (raised to the zero point
    /// by a fused ReLU).
    pub fn new(za: i64, zb: i64, multiplier: f32, zero_point: i64, lo: i64, hi: i64) -> MulParams {
        MulParams {
            a_zero_point: za as i32,
            b_zero_point: zb as i32,
            multiplier,
            zero_point,
            range: (lo, hi),
        }
    }
}

/// `out = nearbyint((a - za) * (b - zb) * multiplier) + zp`, saturated, with the product in
/// wrapping `i32` (ATen's `qmul` kernel).
#[inline(always)]
fn mul_kernel<T: QInt>(a: &[T], b: &[T], p: MulParams, out: &mut [T]) {
    let (lo, hi) = p.range;
    let (flo, fhi, fzp) = (
        (lo - p.zero_point) as f32,
        (hi - p.zero_point) as f32,
        p.zero_point as f32,
    );
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        let c = x
            .to_i32()
            .wrapping_sub(p.a_zero_point)
            .wrapping_mul(y.to_i32().wrapping_sub(p.b_zero_point));
        let r = (c as f32 * p.multiplier).round_ties_even();
        *o = if T::NARROW {
            T::from_f32_int(r.max(flo).min(fhi) + fzp)
        } else {
            let v = (r as f64).clamp((i64::MIN / 2) as f64, (i64::MAX / 2) as f64) as i64;
            T::from_i64((v + p.zero_point).clamp(lo, hi))
        };
    }
}

simd_dispatch!(pub(crate) fn dequantize<T: QInt>(src: &[T], d: Dequant, out: &mut [f32]) = dequantize_kernel;);
simd_dispatch!(pub(crate) fn quantize<T: QInt>(src: &[f32], qt: QuantizeTo, out: &mut [T]) = quantize_kernel;);
simd_dispatch!(pub(crate) fn add<T: QInt>(a: &[T], b: &[T], da: Dequant, db: Dequant, floor: f32, qt: QuantizeTo, out: &mut [T]) = add_kernel;);
simd_dispatch!(pub(crate) fn hardswish<T: QInt>(src: &[T], d: Dequant, qt: QuantizeTo, out: &mut [T]) = hardswish_kernel;);
simd_dispatch!(pub(crate) fn hardsigmoid<T: QInt>(src: &[T], d: Dequant, qt: QuantizeTo, out: &mut [T]) = hardsigmoid_kernel;);
simd_dispatch!(pub(crate) fn mul<T: QInt>(a: &[T], b: &[T], p: MulParams, out: &mut [T]) = mul_kernel;);
simd_dispatch!(pub(crate) fn shift<T: QInt>(src: &[T], zero_point: i32, out: &mut [f32]) -> u64 = shift_kernel;);
simd_dispatch!(pub(crate) fn requant_channel<T: QInt>(acc: &[f32], r: RequantChannel, out: &mut [T]) = requant_channel_kernel;);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::simd::with_avx2_only;

    /// Every `u8`/`i8` value, repeated to lengths around every vector width.
    fn all_values<T: QInt>(len: usize) -> Vec<T> {
        (0..len)
            .map(|i| T::from_i64((i * 37 + 11) as i64))
            .collect()
    }

    /// Runs `check` on the widest path and with AVX2 only.
    fn both_paths(check: impl Fn()) {
        check();
        with_avx2_only(&check);
    }

    fn quantize_reference(x: f32, scale: f64, zp: i64, dtype: QDType) -> i64 {
        let (lo, hi) = dtype.range();
        quantize_val(x, 1.0 / scale as f32, zp, lo, hi)
    }

    fn check_dtype<T: QInt>(dtype: QDType, zps: &[i64]) {
        for len in [0, 1, 7, 15, 16, 17, 31, 33, 63, 64, 65, 300] {
            let a: Vec<T> = all_values(len);
            let b: Vec<T> = a.iter().rev().copied().collect();
            for &zp in zps {
                for (scale, oscale) in [(0.05, 0.1), (0.5, 0.03), (1.0, 1.0), (0.01, 2.5)] {
                    let d = Dequant::new(scale, zp);
                    let deq = |q: T| {
                        q.to_f32()
                            .mul_add(scale as f32, scale as f32 * -(zp as f32))
                    };
                    let qt = QuantizeTo::new(oscale, zp, dtype);
                    let mut f = vec![0.0f32; len];
                    dequantize(&a, d, &mut f);
                    for (i, &q) in a.iter().enumerate() {
                        assert_eq!(f[i].to_bits(), deq(q).to_bits());
                    }
                    let mut q = vec![T::default(); len];
                    quantize(&f, qt, &mut q);
                    for (i, &x) in f.iter().enumerate() {
                        assert_eq!(q[i].to_i64(), quantize_reference(x, oscale, zp, dtype));
                    }
                    for (floor, relu) in [(f32::NEG_INFINITY, false), (0.0, true)] {
                        let db = Dequant::new(oscale, 255 - zp.abs());
                        let mut out = vec![T::default(); len];
                        add(&a, &b, d, db, floor, qt, &mut out);
                        for (i, (&x, &y)) in a.iter().zip(&b).enumerate() {
                            let y = y.to_f32().mul_add(db.scale, db.premul);
                            let mut v = deq(x) + y;
                            if relu {
                                v = v.max(0.0);
                            }
                            assert_eq!(out[i].to_i64(), quantize_reference(v, oscale, zp, dtype));
                        }
                    }
                    let mut hs = vec![T::default(); len];
                    hardswish(&a, d, qt, &mut hs);
                    let mut hg = vec![T::default(); len];
                    hardsigmoid(&a, d, qt, &mut hg);
                    for (i, &x) in a.iter().enumerate() {
                        let v = deq(x);
                        let want = quantize_reference(
                            v * (v + 3.0).clamp(0.0, 6.0) / 6.0,
                            oscale,
                            zp,
                            dtype,
                        );
                        assert_eq!(hs[i].to_i64(), want);
                        let want =
                            quantize_reference((v + 3.0).clamp(0.0, 6.0) / 6.0, oscale, zp, dtype);
                        assert_eq!(hg[i].to_i64(), want);
                    }
                    let mut sf = vec![0.0f32; len];
                    let m = shift(&a, zp as i32, &mut sf);
                    let want_m = a
                        .iter()
                        .map(|q| (q.to_i64() - zp).unsigned_abs())
                        .max()
                        .unwrap_or(0);
                    assert_eq!(m, want_m);
                    for (&f, &x) in sf.iter().zip(&a) {
                        assert_eq!(f, (x.to_i64() - zp) as f32);
                    }
                    // mul: wrapping integer product, requantized, saturated (ReLU raises lo).
                    let (lo, hi) = dtype.range();
                    for lo in [lo, zp] {
                        let mult = (scale * scale / oscale) as f32;
                        let p = MulParams::new(zp, 7, mult, zp, lo, hi);
                        let mut out = vec![T::default(); len];
                        mul(&a, &b, p, &mut out);
                        for (i, (&x, &y)) in a.iter().zip(&b).enumerate() {
                            let c = ((x.to_i64() - zp) * (y.to_i64() - 7)) as i32;
                            let r = (c as f32 * mult).round_ties_even() as i64;
                            assert_eq!(out[i].to_i64(), (r + zp).clamp(lo, hi));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn fused_loops_match_the_scalar_formulas() {
        both_paths(|| {
            check_dtype::<u8>(QDType::QUInt8, &[0, 3, 128, 255]);
            check_dtype::<i8>(QDType::QInt8, &[-128, -5, 0, 127]);
        });
    }

    #[test]
    fn quantize_saturates_and_sends_nan_to_the_zero_point() {
        both_paths(|| {
            let xs = [
                f32::NAN,
                f32::INFINITY,
                f32::NEG_INFINITY,
                1e30,
                -1e30,
                0.5,
                1.5,
                2.5,
                -0.5,
            ];
            for (zp, dtype) in [
                (0, QDType::QUInt8),
                (128, QDType::QUInt8),
                (255, QDType::QUInt8),
                (-128, QDType::QInt8),
            ] {
                let qt = QuantizeTo::new(1.0, zp, dtype);
                with_qint!(dtype, T => {
                    let mut out = vec![T::default(); xs.len()];
                    quantize(&xs, qt, &mut out);
                    for (i, &x) in xs.iter().enumerate() {
                        assert_eq!(out[i].to_i64(), quantize_reference(x, 1.0, zp, dtype), "{x} {zp}");
                    }
                });
            }
            // qint32 takes the scalar formula; 2^24 + 7 has no exact f32.
            let xs = [xs.as_slice(), &[16_777_216.0, -16_777_216.0, 3e9]].concat();
            let qt = QuantizeTo::new(1.0, 7, QDType::QInt32);
            let mut out = vec![0i32; xs.len()];
            quantize(&xs, qt, &mut out);
            for (i, &x) in xs.iter().enumerate() {
                assert_eq!(out[i] as i64, quantize_reference(x, 1.0, 7, QDType::QInt32));
            }
            assert_eq!(out[xs.len() - 3], 16_777_223);
        });
    }

    #[test]
    fn small_int_is_the_exact_integer() {
        for v in [
            -4_194_303i32,
            -129,
            -128,
            -1,
            0,
            1,
            127,
            128,
            255,
            256,
            4_194_303,
        ] {
            assert_eq!(small_int(v as f32), v);
        }
        for v in 0..=255u8 {
            assert_eq!(u8::from_f32_int(v as f32), v);
        }
        for v in -128..=127i8 {
            assert_eq!(i8::from_f32_int(v as f32), v);
        }
    }

    #[test]
    fn channel_requantization_rounds_half_to_even() {
        both_paths(|| {
            let acc: Vec<f32> = (-700..700).map(|v| v as f32).collect();
            for (zp, lo, hi) in [(3i64, 0i64, 255i64), (128, 128, 255), (-5, -128, 127)] {
                let r = RequantChannel {
                    bias: 0.5,
                    multiplier: 0.5,
                    lo: (lo - zp) as f32,
                    hi: (hi - zp) as f32,
                    zero_point: zp as f32,
                };
                let mut out = vec![0i32; acc.len()];
                requant_channel(&acc, r, &mut out);
                for (i, &a) in acc.iter().enumerate() {
                    let want = (((a + 0.5) * 0.5).round_ties_even() as i64 + zp).clamp(lo, hi);
                    assert_eq!(out[i] as i64, want);
                }
            }
        });
    }
}
