//! Pure floating-point helpers: half-precision conversions, correctly
//! rounded arithmetic through `f64`, and the special cases of the gfx9
//! float instructions (IEEE min/max, classes, frexp, division helpers).
//!
//! Values travel as raw bits of their type ([`Ty`]); `dec` widens them to
//! `f64` exactly and `enc` rounds an `f64` to the type (to nearest even).
//! An `f64` holds the exact result of a sum, difference or product of two
//! f32/f16 values rounded once, which rounding to the narrower type does
//! not spoil (53 >= 2 * 24 + 2), so the same `f64` closure serves all three
//! widths for add, sub, mul, div and sqrt.

use super::Ty;
use crate::shader::wave::LANES;

/// Half to `f64` (exact).
pub(super) fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = (h >> 10) & 0x1f;
    let man = f64::from(h & 0x3ff);
    match exp {
        0 => sign * man * (2f64).powi(-24),
        31 => {
            if man == 0.0 {
                sign * f64::INFINITY
            } else {
                // A quiet NaN keeping the payload.
                let bits = u64::from(h & 0x8000) << 48
                    | 0x7ff8_0000_0000_0000
                    | u64::from(h & 0x1ff) << 42;
                f64::from_bits(bits)
            }
        }
        _ => sign * (1024.0 + man) * (2f64).powi(i32::from(exp) - 25),
    }
}

/// `f64` to half, rounded to nearest even (NaNs become quiet NaNs).
pub(super) fn f64_to_f16(x: f64) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 48) & 0x8000) as u16;
    if x.is_nan() {
        return sign | 0x7e00 | ((b >> 42) & 0x1ff) as u16;
    }
    let a = x.abs();
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < (2f64).powi(-14) {
        // Subnormal (or the smallest normal after rounding up).
        return sign | (a * (2f64).powi(24)).round_ties_even() as u16;
    }
    let e = ((b >> 52) & 0x7ff) as i32 - 1023;
    let man = a * (2f64).powi(-e); // [1, 2)
    let m = (man * 1024.0).round_ties_even() as u32; // 1024..=2048
    sign | (((e + 15) as u32) << 10).wrapping_add(m - 1024) as u16
}

/// `f32` to half, rounded toward zero (`v_cvt_pkrtz_f16_f32`).
pub(super) fn f32_to_f16_rtz(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    if x.is_nan() {
        return sign | 0x7e00 | ((b >> 13) & 0x1ff) as u16;
    }
    let a = f64::from(x.abs());
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    if a >= 65504.0 {
        return sign | 0x7bff;
    }
    if a < (2f64).powi(-14) {
        return sign | (a * (2f64).powi(24)).trunc() as u16;
    }
    let e = (((b >> 23) & 0xff) as i32) - 127;
    let man = a * (2f64).powi(-e);
    let m = (man * 1024.0).trunc() as u32;
    sign | (((e + 15) as u32) << 10).wrapping_add(m - 1024) as u16
}

/// Widens bits of float type `t` to `f64` (exact).
#[inline]
pub(super) fn dec(t: Ty, v: u64) -> f64 {
    match t {
        Ty::F16 => f16_to_f64(v as u16),
        Ty::F32 => f64::from(f32::from_bits(v as u32)),
        _ => f64::from_bits(v),
    }
}

/// Rounds `x` to float type `t` (nearest even), as bits.
#[inline]
pub(super) fn enc(t: Ty, x: f64) -> u64 {
    match t {
        Ty::F16 => u64::from(f64_to_f16(x)),
        Ty::F32 => u64::from((x as f32).to_bits()),
        _ => x.to_bits(),
    }
}

/// `a * b + c` for f32 or f16 operands (given as exact `f64`s), rounded
/// once: the product is exact in `f64`, the sum's rounding error is
/// folded into the last bit (round to odd) so that the final rounding to
/// the narrow type is correct.
#[inline]
pub(super) fn fma_narrow(a: f64, b: f64, c: f64) -> f64 {
    let p = a * b;
    let s = p + c;
    // Two-sum: the exact error of s (NaN when s or p is not finite).
    let bb = s - p;
    let e = (p - (s - bb)) + (c - bb);
    let bits = s.to_bits();
    // Round to odd: step toward zero if s was rounded away from the exact
    // sum, then set the last bit.
    let away = (e > 0.0) != (s > 0.0);
    let odd = (bits - u64::from(away)) | 1;
    // `&`, not `&&`: no branch, so a loop of these vectorises.
    let inexact = (e != 0.0) & (s != 0.0) & s.is_finite() & e.is_finite();
    f64::from_bits(if inexact { odd } else { bits })
}

/// `v_fma_f32` on every lane: `r = a * b + c` rounded once, bit for
/// bit what [`fma_narrow`] gives. Where the CPU has FMA (checked at run
/// time, the answer cached by std) lanes without a NaN operand use it,
/// eight lanes an instruction; a NaN anywhere sends the whole wave
/// through the portable form, whose NaN results are the reference.
#[inline]
pub(super) fn fma_f32_lanes(
    a: &[u32; LANES],
    b: &[u32; LANES],
    c: &[u32; LANES],
    r: &mut [u32; LANES],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("avx2")
        && !any_nan32(a, b, c)
    {
        // SAFETY: the CPU supports FMA and AVX2 (checked just above),
        // the features the function is compiled for.
        unsafe { fma_f32_lanes_fma(a, b, c, r) };
        return;
    }
    for l in 0..LANES {
        let [x, y, z] = [a[l], b[l], c[l]].map(|v| f64::from(f32::from_bits(v)));
        r[l] = (fma_narrow(x, y, z) as f32).to_bits();
    }
}

/// True if a lane of `a`, `b` or `c` holds an f32 NaN.
#[inline]
fn any_nan32(a: &[u32; LANES], b: &[u32; LANES], c: &[u32; LANES]) -> bool {
    let nan = |v: u32| (v & 0x7fff_ffff > 0x7f80_0000) as u32;
    let mut n = 0;
    for l in 0..LANES {
        n |= nan(a[l]) | nan(b[l]) | nan(c[l]);
    }
    n != 0
}

/// [`fma_f32_lanes`] compiled for the FMA instruction set (`mul_add`
/// becomes `vfmadd`: one correctly rounded operation, as the GPU's).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma,avx2")]
unsafe fn fma_f32_lanes_fma(
    a: &[u32; LANES],
    b: &[u32; LANES],
    c: &[u32; LANES],
    r: &mut [u32; LANES],
) {
    for l in 0..LANES {
        let [x, y, z] = [a[l], b[l], c[l]].map(f32::from_bits);
        r[l] = x.mul_add(y, z).to_bits();
    }
}

/// Quiets a NaN of type `t`.
#[inline]
pub(super) fn quiet(t: Ty, v: u64) -> u64 {
    v | match t {
        Ty::F16 => 0x200,
        Ty::F32 => 0x40_0000,
        _ => 0x8_0000_0000_0000,
    }
}

/// Exponent mask, mantissa mask and quiet bit of float type `t`.
#[inline]
fn parts(t: Ty) -> (u64, u64, u64) {
    match t {
        Ty::F16 => (0x7c00, 0x3ff, 0x200),
        Ty::F32 => (0x7f80_0000, 0x7f_ffff, 0x40_0000),
        _ => (
            0x7ff0_0000_0000_0000,
            0xf_ffff_ffff_ffff,
            0x8_0000_0000_0000,
        ),
    }
}

/// True if `v` is a NaN of type `t`.
#[inline]
pub(super) fn is_nan(t: Ty, v: u64) -> bool {
    let (e, m, _) = parts(t);
    v & e == e && v & m != 0
}

/// True if `v` is a signalling NaN of type `t`.
#[inline]
pub(super) fn is_snan(t: Ty, v: u64) -> bool {
    let (_, _, q) = parts(t);
    is_nan(t, v) && v & q == 0
}

/// `v_min_*`/`v_max_*` on bits of type `t`: a NaN operand yields the
/// other operand; in IEEE mode a signalling NaN yields itself quieted.
/// -0 orders below +0.
#[inline]
pub(super) fn minmax(t: Ty, a: u64, b: u64, ieee: bool, max: bool) -> u64 {
    let (na, nb) = (is_nan(t, a), is_nan(t, b));
    if na || nb {
        if ieee && is_snan(t, a) {
            return quiet(t, a);
        }
        if ieee && is_snan(t, b) {
            return quiet(t, b);
        }
        return if na && nb {
            quiet(t, a)
        } else if na {
            b
        } else {
            a
        };
    }
    let (x, y) = (dec(t, a), dec(t, b));
    if x == y {
        // Equal (or zeros of either sign): -0 is the smaller.
        let sign = match t {
            Ty::F16 => 0x8000,
            Ty::F32 => 0x8000_0000,
            _ => 1 << 63,
        };
        let a_neg = a & sign != 0;
        return if a_neg == max { b } else { a };
    }
    if (x < y) != max {
        a
    } else {
        b
    }
}

/// `v_med3_*` on floats: with a NaN operand, the minimum of the three.
#[inline]
pub(super) fn med3(t: Ty, a: u64, b: u64, c: u64, ieee: bool) -> u64 {
    if is_nan(t, a) || is_nan(t, b) || is_nan(t, c) {
        return minmax(t, minmax(t, a, b, ieee, false), c, ieee, false);
    }
    let lo = minmax(t, a, b, ieee, false);
    let hi = minmax(t, a, b, ieee, true);
    minmax(t, lo, minmax(t, hi, c, ieee, false), ieee, true)
}

/// The `v_cmp_class_*` class bits of `v`: 0 signalling NaN, 1 quiet NaN,
/// 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal,
/// 9 +inf.
#[inline]
pub(super) fn class(t: Ty, v: u64) -> u32 {
    let (e, m, q) = parts(t);
    let neg =
        v >> (match t {
            Ty::F16 => 15,
            Ty::F32 => 31,
            _ => 63,
        }) & 1
            != 0;
    let (exp, man) = (v & e, v & m);
    if exp == e {
        if man == 0 {
            return if neg { 2 } else { 9 };
        }
        return if man & q != 0 { 1 } else { 0 };
    }
    match (exp == 0, man == 0, neg) {
        (true, true, true) => 5,
        (true, true, false) => 6,
        (true, false, true) => 4,
        (true, false, false) => 7,
        (false, _, true) => 3,
        (false, _, false) => 8,
    }
}

/// `x * 2^n` rounded once (`ldexp`).
pub(super) fn ldexp(x: f64, n: i64) -> f64 {
    let mut y = x;
    let mut n = n.clamp(-4000, 4000);
    let p2 = |k: i64| f64::from_bits(((0x3ff + k) as u64) << 52);
    if n > 1023 {
        y *= p2(1023);
        n -= 1023;
        if n > 1023 {
            y *= p2(1023);
            n -= 1023;
            n = n.min(1023);
        }
    } else if n < -1022 {
        // Scale by 2^-969 (= 2^-1022 * 2^53) so that the final product
        // rounds only once.
        y *= p2(-969);
        n += 969;
        if n < -1022 {
            y *= p2(-969);
            n += 969;
            n = n.max(-1022);
        }
    }
    y * p2(n)
}

/// Mantissa (in [0.5, 1), sign kept) and exponent of a finite nonzero
/// `x`; zeros, infinities and NaNs give themselves and 0.
pub(super) fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let mut e = ((x.to_bits() >> 52) & 0x7ff) as i32;
    let mut y = x;
    if e == 0 {
        y *= (2f64).powi(64);
        e = ((y.to_bits() >> 52) & 0x7ff) as i32 - 64;
    }
    let exp = e - 1022;
    let m = f64::from_bits(y.to_bits() & !(0x7ffu64 << 52) | 0x3feu64 << 52);
    (m, exp)
}

/// Applies output modifiers to bits `v` of type `t`: omod (1: *2, 2: *4,
/// 3: /2) then clamp to [0, 1] (a NaN clamps to 0 with DX10_CLAMP).
pub(super) fn out_mod(t: Ty, v: u64, omod: u32, clamp: bool, dx10: bool) -> u64 {
    let mut x = dec(t, v);
    let mut r = v;
    if omod != 0 && !x.is_nan() {
        x *= [1.0, 2.0, 4.0, 0.5][omod as usize & 3];
        r = enc(t, x);
        x = dec(t, r);
    }
    if clamp {
        if x.is_nan() {
            if dx10 {
                r = 0;
            }
        } else if x <= 0.0 {
            r = 0;
        } else if x >= 1.0 {
            r = enc(t, 1.0);
        }
    }
    r
}

/// Float to integer conversion (toward zero, saturating, NaN to 0).
#[inline]
pub(super) fn to_i32(x: f64) -> u32 {
    x as i32 as u32
}

/// Float to unsigned conversion (toward zero, saturating, NaN to 0).
#[inline]
pub(super) fn to_u32(x: f64) -> u32 {
    x as u32
}

/// `v_div_scale_*`: for source 0 (the denominator or the numerator), the
/// denominator `d` and the numerator `n`, the scaled value and the VCC
/// flag telling `v_div_fmas` to rescale; `exp_bits`, `man_bits` describe
/// the type (f32: 8, 23; f64: 11, 52).
pub(super) fn div_scale(s0: f64, d: f64, n: f64, double: bool) -> (f64, bool) {
    let (bias, man_bits, min_normal, big, scale) = if double {
        (1023, 52, f64::MIN_POSITIVE, 768, 128)
    } else {
        (127, 23, f64::from(f32::MIN_POSITIVE), 96, 64)
    };
    let exponent = |x: f64| -> i32 {
        // The biased exponent field of x in the operation's type.
        if x == 0.0 || !x.is_finite() {
            if x.is_finite() {
                0
            } else {
                2 * bias + 1
            }
        } else {
            let e = ((x.abs().to_bits() >> 52) & 0x7ff) as i32 - 1023;
            (e + bias).max(0)
        }
    };
    let denorm = |x: f64| x != 0.0 && x.is_finite() && x.abs() < min_normal;
    if n == 0.0 || d == 0.0 {
        return (f64::NAN, false);
    }
    if exponent(n) - exponent(d) >= big {
        return (if s0 == d { ldexp(s0, scale) } else { s0 }, true);
    }
    if denorm(d) {
        return (ldexp(s0, scale), false);
    }
    // The reciprocal is tested in double precision for both types (so
    // for f32 these cases never arise).
    let rcp = 1.0 / d;
    let rcp_denorm = rcp != 0.0 && rcp.abs() < f64::MIN_POSITIVE;
    let quo = n / d;
    let quo_denorm = quo != 0.0 && quo.abs() < min_normal;
    if rcp_denorm && quo_denorm {
        // A huge denominator and a tiny quotient: scale the denominator
        // down; v_div_fmas scales the (small) result back down.
        return (if s0 == d { ldexp(s0, -scale) } else { s0 }, true);
    }
    if rcp_denorm {
        return (ldexp(s0, -scale), false);
    }
    if quo_denorm {
        return (if s0 == n { ldexp(s0, scale) } else { s0 }, true);
    }
    if exponent(n) <= man_bits {
        return (ldexp(s0, scale), false);
    }
    (s0, false)
}

/// `v_div_fixup_*`: the quotient `q` of `n / d` with the special cases
/// (NaNs, zeros, infinities) settled; a NaN quotient from finite
/// operands is an overflow.
pub(super) fn div_fixup(q: f64, d: f64, n: f64, t: Ty) -> f64 {
    let neg = (d.is_sign_negative()) != (n.is_sign_negative());
    let signed = |x: f64| if neg { -x } else { x };
    if n.is_nan() {
        return n;
    }
    if d.is_nan() {
        return d;
    }
    if d == 0.0 && n == 0.0 || d.is_infinite() && n.is_infinite() {
        return f64::NAN;
    }
    if d == 0.0 || n.is_infinite() {
        return signed(f64::INFINITY);
    }
    if d.is_infinite() || n == 0.0 {
        return signed(0.0);
    }
    // Biased exponents in the operation's type: a quotient below the
    // smallest denormal's half is a zero (the scaling may not reach it).
    let (bias, limit) = match t {
        Ty::F64 => (1023, -1075),
        Ty::F32 => (127, -150),
        _ => (15, -25),
    };
    let exponent = |x: f64| (((x.abs().to_bits() >> 52) & 0x7ff) as i32 - 1023 + bias).max(0);
    if exponent(n) - exponent(d) < limit {
        return signed(0.0);
    }
    if q.is_nan() {
        // The scaled Newton steps overflowed (inf - inf): the quotient is
        // beyond the type's range.
        return signed(f64::INFINITY);
    }
    signed(q.abs())
}

/// The bits of 2/pi after the binary point, 24 to an entry (the first
/// 1584; the hardware keeps 1201).
#[rustfmt::skip]
const TWO_OVER_PI: [u32; 66] = [
    0xa2f983, 0x6e4e44, 0x1529fc, 0x2757d1, 0xf534dd, 0xc0db62, 0x95993c, 0x439041, 0xfe5163,
    0xabdebb, 0xc561b7, 0x246e3a, 0x424dd2, 0xe00649, 0x2eea09, 0xd1921c, 0xfe1deb, 0x1cb129,
    0xa73ee8, 0x8235f5, 0x2ebb44, 0x84e99c, 0x7026b4, 0x5f7e41, 0x3991d6, 0x398353, 0x39f49c,
    0x845f8b, 0xbdf928, 0x3b1ff8, 0x97ffde, 0x05980f, 0xef2f11, 0x8b5a0a, 0x6d1f6d, 0x367ecf,
    0x27cb09, 0xb74f46, 0x3f669e, 0x5fea2d, 0x7527ba, 0xc7ebe5, 0xf17b3d, 0x0739f7, 0x8a5292,
    0xea6bfb, 0x5fb11f, 0x8d5d08, 0x560330, 0x46fc7b, 0x6babf0, 0xcfbc20, 0x9af436, 0x1da9e3,
    0x91615e, 0xe61b08, 0x659985, 0x5f14a0, 0x68408d, 0xffd880, 0x4d7327, 0x310606, 0x1556ca,
    0x73a8c9, 0x60e27b, 0xc08c6b,
];

/// Bit `k` (1 = first after the binary point) of 2/pi, zero past the
/// 1200 bits the hardware holds.
fn two_over_pi_bit(k: usize) -> u64 {
    if k == 0 || k > 1200 {
        return 0;
    }
    let k = k - 1;
    u64::from(TWO_OVER_PI[k / 24] >> (23 - k % 24) & 1)
}

/// `v_trig_preop_f64`: the 53 bits of 2/pi starting `53 * segment` bits
/// after the binary point (further for large `x`, whose biased exponent
/// is `exp`), scaled to their place (up by 2^128 for huge `x`).
pub(super) fn trig_preop(exp: u32, segment: u32) -> f64 {
    let mut shift = (segment & 31) as usize * 53;
    if exp > 1077 {
        shift += exp as usize - 1077;
    }
    let mut m = 0u64;
    for k in 1..=53 {
        m = m << 1 | two_over_pi_bit(shift + k);
    }
    let mut scale = -53 - shift as i64;
    if exp >= 1968 {
        scale += 128;
    }
    ldexp(m as f64, scale)
}

/// Layout of an 8-bit float (gfx940's FNUZ formats: no infinities, no
/// negative zero, 0x80 is the NaN): exponent bias and mantissa bits.
#[derive(Debug, Clone, Copy)]
pub(super) struct Fp8 {
    bias: i32,
    man: u32,
}

/// E4M3 with bias 8 (`fp8`).
pub(super) const FP8: Fp8 = Fp8 { bias: 8, man: 3 };
/// E5M2 with bias 16 (`bf8`).
pub(super) const BF8: Fp8 = Fp8 { bias: 16, man: 2 };

impl Fp8 {
    /// The value of byte `b`.
    pub(super) fn decode(self, b: u32) -> f64 {
        let b = b & 0xff;
        if b == 0x80 {
            return f64::NAN;
        }
        let exp = (b & 0x7f) >> self.man;
        let man = f64::from(b & ((1 << self.man) - 1));
        let scale = f64::from(1u32 << self.man);
        let v = if exp == 0 {
            man / scale * (2f64).powi(1 - self.bias)
        } else {
            (1.0 + man / scale) * (2f64).powi(exp as i32 - self.bias)
        };
        if b & 0x80 != 0 {
            -v
        } else {
            v
        }
    }

    /// `x` rounded to nearest even; NaN, infinities and overflow give
    /// the NaN (0x80), or with `clamp` the largest finite value of the
    /// sign (NaN stays NaN).
    pub(super) fn encode(self, x: f64, clamp: bool) -> u32 {
        if x.is_nan() {
            return 0x80;
        }
        let sign = if x < 0.0 { 0x80 } else { 0 };
        let a = x.abs();
        let overflow = if clamp { sign | 0x7f } else { 0x80 };
        if a.is_infinite() {
            return overflow;
        }
        let min_normal = (2f64).powi(1 - self.bias);
        let code = if a < min_normal {
            (a / min_normal * f64::from(1u32 << self.man)).round_ties_even() as u32
        } else {
            let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
            let m = a * (2f64).powi(-e);
            let r = ((m - 1.0) * f64::from(1u32 << self.man)).round_ties_even() as u32;
            (((e + self.bias) as u32) << self.man) + r
        };
        if code > 0x7f {
            overflow
        } else if code == 0 {
            0
        } else {
            sign | code
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Independent f32 -> f16 (nearest even) on integer bits.
    fn f16_of_f32_bits(x: u32) -> u16 {
        let sign = ((x >> 16) & 0x8000) as u16;
        let exp = ((x >> 23) & 0xff) as i32;
        let man = x & 0x7f_ffff;
        if exp == 0xff {
            return sign
                | if man == 0 {
                    0x7c00
                } else {
                    0x7e00 | (man >> 13) as u16
                };
        }
        // Value = (1.man) * 2^(exp-127) as an integer significand with
        // 24 bits, shifted to f16's grid.
        let (sig, e) = if exp == 0 {
            (man, -126)
        } else {
            (man | 0x80_0000, exp - 127)
        };
        if sig == 0 {
            return sign;
        }
        // f16 unit in the last place at exponent e: 2^(max(e, -14) - 10).
        let ulp_exp = e.max(-14) - 10;
        // sig * 2^(e - 23) / 2^ulp_exp = sig >> (ulp_exp - e + 23).
        let shift = ulp_exp - e + 23;
        let q = if shift >= 32 {
            0
        } else {
            let q = sig >> shift;
            let rem = sig & ((1u32 << shift) - 1);
            let half = 1u32 << (shift - 1);
            if rem > half || rem == half && q & 1 == 1 {
                q + 1
            } else {
                q
            }
        };
        // q counts ulps at ulp_exp: rebuild the f16 bits.
        let bits = if e < -14 {
            q // subnormal (q may reach 0x400, the smallest normal)
        } else {
            (((e + 15) as u32) << 10) + q - 0x400
        };
        if bits >= 0x7c00 {
            sign | 0x7c00
        } else {
            sign | bits as u16
        }
    }

    #[test]
    fn f16_round_trips() {
        for h in 0..=u16::MAX {
            let x = f16_to_f64(h);
            let back = f64_to_f16(x);
            if x.is_nan() {
                assert_eq!(back & 0x7e00, 0x7e00);
            } else {
                assert_eq!(back, h, "{h:#x}");
            }
        }
    }

    #[test]
    fn f32_to_f16_rounds_to_nearest_even() {
        let mut s = 0x1234_5678u32;
        for k in 0..200_000u32 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            // Bias toward f16's range.
            let x = if k % 2 == 0 {
                s
            } else {
                s & 0x8fff_ffff | 0x3000_0000
            };
            let f = f32::from_bits(x);
            assert_eq!(f64_to_f16(f64::from(f)), f16_of_f32_bits(x), "{x:#x} {f}");
        }
    }

    #[test]
    fn wave_fma_matches_the_portable_form_bit_for_bit() {
        // Edge values (zeros of both signs, denormals, the largest
        // finite, infinities) mixed with pseudo-random bit patterns
        // (non-NaN, so the CPU's FMA is used where it exists), then the
        // same with one NaN lane (the portable form for the whole wave).
        let edge = [
            0,
            0x8000_0000,
            1,
            0x807f_ffff,
            0x7f7f_ffff,
            0x7f80_0000,
            0xff80_0000,
            0x3f80_0000,
            0xbf80_0001,
            0x3380_0000,
        ];
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = (x >> 32) as u32;
            if v & 0x7fff_ffff > 0x7f80_0000 {
                v & 0xbfff_ffff
            } else {
                v
            }
        };
        for round in 0..200 {
            let mut ops = [[0u32; LANES]; 3];
            for (k, op) in ops.iter_mut().enumerate() {
                for (l, v) in op.iter_mut().enumerate() {
                    *v = if (l + k + round) % 5 == 0 {
                        edge[(l * 7 + k * 3 + round) % edge.len()]
                    } else {
                        next()
                    };
                }
            }
            if round % 50 == 49 {
                ops[1][round % LANES] = 0x7fc0_1234;
            }
            let [a, b, c] = &ops;
            let mut wave = [0u32; LANES];
            fma_f32_lanes(a, b, c, &mut wave);
            for l in 0..LANES {
                let [p, q, r] = [a[l], b[l], c[l]].map(|v| f64::from(f32::from_bits(v)));
                let want = (fma_narrow(p, q, r) as f32).to_bits();
                assert_eq!(
                    wave[l], want,
                    "round {round} lane {l}: {:#x} {:#x} {:#x}",
                    a[l], b[l], c[l]
                );
            }
        }
    }

    #[test]
    fn narrow_fma_is_correctly_rounded() {
        // a*b + c near a rounding boundary of f32: the f64 sum rounds,
        // round-to-odd keeps the final rounding right.
        let a = 1.0 + f64::from(f32::EPSILON);
        let b = 1.0 - f64::from(f32::EPSILON) / 2.0;
        let c = -1.0;
        let exact = (a * b + c) as f32;
        assert_eq!(fma_narrow(a, b, c) as f32, exact);
        let (x, y, z) = (1.000_000_1f32, 3.0e-8f32, 1.0f32);
        assert_eq!(
            fma_narrow(x.into(), y.into(), z.into()) as f32,
            x.mul_add(y, z)
        );
    }

    #[test]
    fn ldexp_and_frexp() {
        assert_eq!(ldexp(1.0, -1074), f64::from_bits(1));
        assert_eq!(ldexp(1.0, -1075), 0.0);
        assert_eq!(ldexp(1.5, -1075), f64::from_bits(1));
        assert_eq!(ldexp(f64::MIN_POSITIVE, 2045), (2f64).powi(1023));
        assert_eq!(ldexp(1.0, 5000), f64::INFINITY);
        assert_eq!(frexp(f64::from_bits(1)), (0.5, -1073));
        assert_eq!(frexp(-12.0), (-0.75, 4));
    }
}
