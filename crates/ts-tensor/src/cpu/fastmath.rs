//! Branch-free float32 `exp`, `tanh`, `log`, `erf` and `erfc` that the compiler can vectorize (libm's
//! scalar calls cannot be), 16 lanes wide in the AVX-512 copies of the kernels. Cephes-style
//! range reduction and polynomial fits; all stay within 2-3 ulp of the correctly rounded result
//! (checked against f64 in the tests, NaN/inf/subnormals included), comparable to the SLEEF
//! kernels PyTorch uses. `erf`'s polynomials were fitted for this project (relative
//! least squares on Chebyshev nodes, refined towards minimax).

// The polynomial coefficients keep the digits of their published minimax fits.
#![allow(clippy::excessive_precision)]

const LOG2E: f32 = std::f32::consts::LOG2_E;
/// ln(2) split in a part exact in few bits and a correction.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
/// Adding and subtracting this rounds an f32 of magnitude < 2^22 to the nearest integer; the
/// sum's low mantissa bits then hold that integer (no float-to-int conversion needed, which
/// keeps the loop vectorized).
const ROUND_MAGIC: f32 = 12_582_912.0;
const ROUND_MAGIC_BITS: i32 = 0x4B40_0000;

/// `2^n` for integer `n`, clamped below to 2^-126, built from the exponent bits.
#[inline(always)]
fn pow2i(n: i32) -> f32 {
    f32::from_bits(((n.max(-126) + 127) as u32) << 23)
}

/// `e^x` in float32.
#[inline(always)]
pub(crate) fn exp_f32(x: f32) -> f32 {
    // Beyond these, the result is 0 or infinity (or NaN, which the comparisons keep).
    let xc = x.clamp(-104.0, 88.8);
    let t = xc * LOG2E + ROUND_MAGIC;
    let n = t - ROUND_MAGIC;
    let ni = t.to_bits() as i32 - ROUND_MAGIC_BITS;
    let r = xc - n * LN2_HI - n * LN2_LO;
    let p = 1.987_569_1e-4_f32;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 1.666_666_5e-1;
    let p = p * r + 5.000_000_1e-1;
    let y = p * r * r + r + 1.0;
    // Scale in two steps so that results in the subnormal range are still produced.
    let n1 = (n * 0.5 + ROUND_MAGIC).to_bits() as i32 - ROUND_MAGIC_BITS;
    let n2 = ni - n1;
    let res = y * pow2i(n1) * pow2i(n2);
    let res = if x > 88.722_84 { f32::INFINITY } else { res };
    if x.is_nan() {
        x
    } else {
        res
    }
}

/// `tanh(x)` in float32.
#[inline(always)]
pub(crate) fn tanh_f32(x: f32) -> f32 {
    let a = x.abs();
    // Small |x|: odd polynomial (avoids cancellation in (1 - e^-2a) / (1 + e^-2a)).
    let z = x * x;
    let p = -5.704_988_7e-3_f32;
    let p = p * z + 2.063_908_9e-2;
    let p = p * z - 5.373_971_6e-2;
    let p = p * z + 1.333_144_2e-1;
    let p = p * z - 3.333_328_2e-1;
    let small = p * z * x + x;
    // e^-2a lies in (0, 1]: the cheap exponential without overflow or subnormal handling
    // (beyond a = 43, tanh rounds to 1 either way).
    let e = exp_nonpositive_f32((-2.0 * a).max(-87.0));
    let big = ((1.0 - e) / (1.0 + e)).copysign(x);
    let r = if a < 0.625 { small } else { big };
    if x.is_nan() {
        x
    } else {
        r
    }
}

/// `ln(x)` in float32.
#[inline(always)]
pub(crate) fn log_f32(x: f32) -> f32 {
    // Subnormals are scaled into the normal range first.
    let tiny = x < f32::MIN_POSITIVE;
    let xs = if tiny { x * 8_388_608.0 } else { x };
    let bits = xs.to_bits() as i32;
    let e = ((bits >> 23) & 0xff) - 127 - if tiny { 23 } else { 0 };
    // Mantissa in [1, 2), then folded into (sqrt(1/2), sqrt(2)].
    let m = f32::from_bits(((bits & 0x007f_ffff) | 0x3f80_0000) as u32);
    let big = m > std::f32::consts::SQRT_2;
    let m = if big { m * 0.5 } else { m };
    let fe = (e + i32::from(big)) as f32;
    let f = m - 1.0;
    let z = f * f;
    let p = 7.037_683_6e-2_f32;
    let p = p * f - 1.151_461e-1;
    let p = p * f + 1.167_699_9e-1;
    let p = p * f - 1.242_014_1e-1;
    let p = p * f + 1.424_932_3e-1;
    let p = p * f - 1.666_805_8e-1;
    let p = p * f + 2.000_071_4e-1;
    let p = p * f - 2.499_999_4e-1;
    let p = p * f + 3.333_333_1e-1;
    let y = p * f * z + fe * LN2_LO - 0.5 * z;
    let r = f + y + fe * LN2_HI;
    if x.is_nan() || x < 0.0 {
        f32::NAN
    } else if x == 0.0 {
        f32::NEG_INFINITY
    } else if x == f32::INFINITY {
        x
    } else {
        r
    }
}

/// `e^r` for a reduced argument `|r| <= ln(2) / 2`, with fused multiply-adds.
#[inline(always)]
fn exp_reduced(r: f32) -> f32 {
    let p = 1.987_569_1e-4_f32;
    let p = p.mul_add(r, 1.398_199_9e-3);
    let p = p.mul_add(r, 8.333_452e-3);
    let p = p.mul_add(r, 4.166_579_6e-2);
    let p = p.mul_add(r, 1.666_666_5e-1);
    let p = p.mul_add(r, 5.000_000_1e-1);
    (p * r).mul_add(r, r) + 1.0
}

/// `e^x` for `x` in `[-87, 0]` (no overflow, no subnormal results, no NaN): the part of
/// [`exp_f32`] that [`erf_f32`] needs, with fused multiply-adds.
#[inline(always)]
fn exp_nonpositive_f32(x: f32) -> f32 {
    let t = x.mul_add(LOG2E, ROUND_MAGIC);
    let n = t - ROUND_MAGIC;
    let ni = t.to_bits() as i32 - ROUND_MAGIC_BITS;
    let r = n.mul_add(-LN2_LO, n.mul_add(-LN2_HI, x));
    exp_reduced(r) * f32::from_bits(((ni + 127) as u32) << 23)
}

/// `e^x` for `x <= 0` or NaN, 0 below -87 (where `e^x` is under 1.7e-38): softmax's
/// exponentials once the row maximum is subtracted, with fused multiply-adds and none of
/// [`exp_f32`]'s overflow and subnormal handling (about half its instructions per vector).
#[inline(always)]
pub(crate) fn exp_nonpositive_or_zero_f32(x: f32) -> f32 {
    // NaN passes the comparison and stays NaN through the reduction.
    let e = exp_nonpositive_f32(if x < -87.0 { -87.0 } else { x });
    if x < -87.0 {
        0.0
    } else {
        e
    }
}

/// `erf(x)` in float32: an odd polynomial below 1, `1 - exp(-x^2) * q(|x|)` up to 4 (where
/// `erf` rounds to 1). Horner steps are fused multiply-adds (`mul_add` is always fused, in
/// software where the target lacks FMA, so every code path gives the same bits); the
/// vectorized kernels that call it are compiled with FMA enabled, where it costs one
/// instruction per step, half the multiply-then-add it replaced (GELU was bound by them).
#[inline(always)]
pub(crate) fn erf_f32(x: f32) -> f32 {
    let a = x.abs().min(4.0);
    let t = x * x;
    let p = 7.477_405e-5_f32;
    let p = p.mul_add(t, -7.886_132_6e-4);
    let p = p.mul_add(t, 5.172_558_5e-3);
    let p = p.mul_add(t, -2.684_415_2e-2);
    let p = p.mul_add(t, 1.128_329_6e-1);
    let p = p.mul_add(t, -3.761_258_8e-1);
    let p = p.mul_add(t, std::f32::consts::FRAC_2_SQRT_PI);
    let small = x * p;
    let q = 1.674_315_7e-6_f32;
    let q = q.mul_add(a, -4.820_626_5e-5);
    let q = q.mul_add(a, 6.280_764e-4);
    let q = q.mul_add(a, -4.908_218_6e-3);
    let q = q.mul_add(a, 2.572_956_5e-2);
    let q = q.mul_add(a, -9.598_402e-2);
    let q = q.mul_add(a, 2.642_267_9e-1);
    let q = q.mul_add(a, -5.501_184e-1);
    let q = q.mul_add(a, 8.803_528e-1);
    let q = q.mul_add(a, -1.085_172_6);
    let q = q.mul_add(a, 9.928_76e-1);
    let big = (-q).mul_add(exp_nonpositive_f32(-(a * a)), 1.0).copysign(x);
    let r = if x.abs() < 1.0 { small } else { big };
    if x.is_nan() {
        x
    } else {
        r
    }
}

/// `e^(hi + lo)` for `hi` in `[-104, 0]` and `|lo|` below an ulp of `hi` (a value carried in
/// two parts, so that large arguments keep their low bits): [`exp_nonpositive_f32`] with the
/// low part added after range reduction and subnormal results (scaled in two steps).
#[inline(always)]
fn exp_split_nonpositive_f32(hi: f32, lo: f32) -> f32 {
    let x = hi.max(-104.0);
    let t = x.mul_add(LOG2E, ROUND_MAGIC);
    let n = t - ROUND_MAGIC;
    let ni = t.to_bits() as i32 - ROUND_MAGIC_BITS;
    let r = n.mul_add(-LN2_LO, n.mul_add(-LN2_HI, x)) + lo;
    let y = exp_reduced(r);
    let n1 = (n * 0.5 + ROUND_MAGIC).to_bits() as i32 - ROUND_MAGIC_BITS;
    y * pow2i(n1) * pow2i(ni - n1)
}

/// `erfc(x)` in float32, one formula for every `x`: `t e^(g(t) - a^2)` for `a = |x|` with
/// `t = 1 / (1 + a / 2)` (`2 - ` that for negative `x`), where `g` is a degree-9 polynomial in
/// `t - 1/2` (fitted for this project: absolute error below 1.6e-7 in float32 for `a` up to
/// 9.4). The exponent is carried in two parts (`a^2` exactly, by a fused multiply-add), so the
/// result stays within 5 ulp (checked against f64) down to the subnormal tail. Unlike `1 - erf(x)` it
/// keeps its precision where `erfc` is tiny, and it vectorizes (one division, no branches),
/// which GELU needs: `gelu(x) = x erfc(-x / sqrt 2) / 2`.
#[inline(always)]
pub(crate) fn erfc_f32(x: f32) -> f32 {
    // Past 10.5, erfc is below 2^-149 (and `a^2` below stays finite).
    let a = x.abs().min(11.0);
    let t = 1.0 / a.mul_add(0.5, 1.0);
    let u = t - 0.5;
    let g = 1.395_468_3e-1_f32;
    let g = g.mul_add(u, -2.338_073_8e-2);
    let g = g.mul_add(u, -2.625_357_5e-1);
    let g = g.mul_add(u, 1.073_624_3e-1);
    let g = g.mul_add(u, 2.795_236_4e-1);
    let g = g.mul_add(u, -1.575_741_5e-1);
    let g = g.mul_add(u, -3.750_745e-1);
    let g = g.mul_add(u, 1.893_647_2e-1);
    let g = g.mul_add(u, 1.345_285_7);
    let g = g.mul_add(u, -6.717_940_6e-1);
    // g - a^2 as hi + lo: a^2 = sq + sq_lo exactly, then the rounding error of g - sq (exact
    // when |sq| >= |g|; below a = 1.2 the error left is below an ulp of the result anyway).
    let sq = a * a;
    let sq_lo = a.mul_add(a, -sq);
    let hi = g - sq;
    let lo = (g - (hi + sq)) - sq_lo;
    let e = t * exp_split_nonpositive_f32(hi, lo);
    let r = if x < 0.0 { 2.0 - e } else { e };
    if x.is_nan() {
        x
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(a: f32, b: f32) -> u32 {
        if a == b {
            return 0;
        }
        let (ia, ib) = (a.to_bits() as i32, b.to_bits() as i32);
        (ia.wrapping_sub(ib)).unsigned_abs()
    }

    #[test]
    fn softmax_exp_is_within_two_ulp_and_zero_below_the_normal_range() {
        let mut x = -87.0f32;
        let mut worst = 0;
        while x <= 0.0 {
            let want = (x as f64).exp() as f32;
            worst = worst.max(ulps(exp_nonpositive_or_zero_f32(x), want));
            x += 0.0071;
        }
        assert!(worst <= 2, "worst {worst} ulp");
        assert_eq!(exp_nonpositive_or_zero_f32(0.0), 1.0);
        assert_eq!(exp_nonpositive_or_zero_f32(-0.0), 1.0);
        assert_eq!(exp_nonpositive_or_zero_f32(-87.5), 0.0);
        assert_eq!(exp_nonpositive_or_zero_f32(f32::NEG_INFINITY), 0.0);
        assert!(exp_nonpositive_or_zero_f32(f32::NAN).is_nan());
    }

    #[test]
    fn exp_is_within_two_ulp() {
        let mut x = -103.0f32;
        let mut worst = 0;
        while x < 88.7 {
            let want = (x as f64).exp() as f32;
            let got = exp_f32(x);
            if want.is_normal() {
                worst = worst.max(ulps(got, want));
            } else {
                assert!(
                    (got - want).abs() <= f32::MIN_POSITIVE * 2f32.powi(-20),
                    "{x}"
                );
            }
            x += 0.0137;
        }
        assert!(worst <= 2, "worst {worst} ulp");
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(100.0), f32::INFINITY);
        assert_eq!(exp_f32(-200.0), 0.0);
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
    }

    #[test]
    fn log_is_within_two_ulp() {
        let mut worst = 0;
        // Subnormals, [tiny, huge] geometrically, and densely around 1.
        let mut x = f32::from_bits(1);
        while x < 3e38 {
            let want = (x as f64).ln() as f32;
            worst = worst.max(ulps(log_f32(x), want));
            x *= 1.000_37;
            x = f32::from_bits(x.to_bits() + 1);
        }
        let mut x = 0.5f32;
        while x < 2.0 {
            worst = worst.max(ulps(log_f32(x), (x as f64).ln() as f32));
            x += 1.3e-5;
        }
        assert!(worst <= 2, "worst {worst} ulp");
        assert_eq!(log_f32(1.0), 0.0);
        assert_eq!(log_f32(0.0), f32::NEG_INFINITY);
        assert_eq!(log_f32(-0.0), f32::NEG_INFINITY);
        assert_eq!(log_f32(f32::INFINITY), f32::INFINITY);
        assert!(log_f32(-1.0).is_nan());
        assert!(log_f32(f32::NEG_INFINITY).is_nan());
        assert!(log_f32(f32::NAN).is_nan());
    }

    #[test]
    fn erf_is_within_three_ulp() {
        let mut worst = 0;
        let mut x = -5.0f32;
        while x < 5.0 {
            let want = libm::erf(x as f64) as f32;
            worst = worst.max(ulps(erf_f32(x), want));
            x += 1.7e-5;
        }
        // Tiny and subnormal inputs: erf(x) = 2x/sqrt(pi) to f32 precision.
        for &x in &[1e-30f32, -3e-20, f32::from_bits(5), 1e-6] {
            let want = libm::erf(x as f64) as f32;
            worst = worst.max(ulps(erf_f32(x), want));
        }
        assert!(worst <= 3, "worst {worst} ulp");
        assert_eq!(erf_f32(0.0), 0.0);
        assert_eq!(erf_f32(f32::INFINITY), 1.0);
        assert_eq!(erf_f32(f32::NEG_INFINITY), -1.0);
        assert_eq!(erf_f32(10.0), 1.0);
        assert!(erf_f32(f32::NAN).is_nan());
    }

    #[test]
    fn tanh_is_within_two_ulp() {
        let mut x = -12.0f32;
        let mut worst = 0;
        while x < 12.0 {
            let want = (x as f64).tanh() as f32;
            worst = worst.max(ulps(tanh_f32(x), want));
            x += 0.000_731;
        }
        assert!(worst <= 2, "worst {worst} ulp");
        assert_eq!(tanh_f32(0.0), 0.0);
        assert_eq!(tanh_f32(50.0), 1.0);
        assert_eq!(tanh_f32(-50.0), -1.0);
        assert!(tanh_f32(f32::NAN).is_nan());
        assert_eq!(tanh_f32(1e-30), 1e-30);
    }

    #[test]
    fn erfc_is_within_five_ulp() {
        let mut worst = 0;
        let mut x = -6.0f32;
        while x < 10.0 {
            let want = libm::erfc(x as f64) as f32;
            if want.is_normal() {
                worst = worst.max(ulps(erfc_f32(x), want));
            } else {
                assert!((erfc_f32(x) - want).abs() <= f32::MIN_POSITIVE, "{x}");
            }
            x += 2.3e-5;
        }
        for &x in &[1e-30f32, -3e-20, f32::from_bits(5), 1e-6, -1e-6] {
            worst = worst.max(ulps(erfc_f32(x), libm::erfc(x as f64) as f32));
        }
        assert!(worst <= 5, "worst {worst} ulp");
        assert_eq!(erfc_f32(0.0), 1.0);
        assert_eq!(erfc_f32(f32::INFINITY), 0.0);
        assert_eq!(erfc_f32(f32::NEG_INFINITY), 2.0);
        assert_eq!(erfc_f32(30.0), 0.0);
        assert_eq!(erfc_f32(-30.0), 2.0);
        assert!(erfc_f32(f32::NAN).is_nan());
    }
}
