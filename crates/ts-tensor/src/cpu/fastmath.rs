//! Branch-free float32 `exp` and `tanh` that the compiler can vectorize (libm's scalar calls
//! cannot be). Cephes-style range reduction and minimax polynomials; both stay within 2 ulp of
//! the correctly rounded result (checked against f64 in the tests), comparable to the SLEEF
//! kernels PyTorch uses.

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
    // Small |x|: odd polynomial (avoids cancellation in 1 - 2/(e^2x + 1)).
    let z = x * x;
    let p = -5.704_988_7e-3_f32;
    let p = p * z + 2.063_908_9e-2;
    let p = p * z - 5.373_971_6e-2;
    let p = p * z + 1.333_144_2e-1;
    let p = p * z - 3.333_328_2e-1;
    let small = p * z * x + x;
    let e = exp_f32(2.0 * a.min(20.0));
    let big = (1.0 - 2.0 / (e + 1.0)).copysign(x);
    let r = if a < 0.625 { small } else { big };
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
}
