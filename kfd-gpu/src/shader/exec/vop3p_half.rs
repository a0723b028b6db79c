//! Half-precision (IEEE binary16) and bfloat16 conversions for the packed
//! and matrix executors, and the MODE register's denormal controls.
//!
//! Conversions to f16 round to nearest even (the only rounding mode the
//! packed executors accept); NaNs stay NaNs, quieted, keeping the top of
//! their payload.

/// f16 bits to f32 (exact).
#[inline]
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from(h >> 10) & 0x1f;
    let man = u32::from(h) & 0x3ff;
    let bits = match exp {
        0 => {
            // Zero or subnormal: man * 2^-24, exact in f32.
            let v = man as f32 * (1.0 / 16_777_216.0);
            return f32::from_bits(v.to_bits() | sign);
        }
        0x1f => sign | 0x7f80_0000 | man << 13,
        _ => sign | (exp + 112) << 23 | man << 13,
    };
    f32::from_bits(bits)
}

/// f16 bits to f64 (exact).
#[inline]
pub fn f16_to_f64(h: u16) -> f64 {
    f64::from(f16_to_f32(h))
}

/// f64 to f16 bits, rounded to nearest even once.
#[inline]
pub fn f64_to_f16(x: f64) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let man = bits & ((1 << 52) - 1);
    if (1023 - 14..=1023 + 15).contains(&exp) {
        // A normal result: round the mantissa to 10 bits, to nearest even
        // (add just under half, plus the kept lowest bit); a carry out of
        // the mantissa steps the exponent, up to infinity.
        let r = (man + ((1 << 41) - 1) + ((man >> 42) & 1)) >> 42;
        let e16 = ((exp - 1008) as u16) << 10;
        return sign | (e16 + r as u16);
    }
    if exp == 0x7ff {
        return if man != 0 {
            sign | 0x7e00 | ((man >> 42) & 0x1ff) as u16
        } else {
            sign | 0x7c00
        };
    }
    if exp == 0 {
        // Zero or an f64 subnormal: far below half the f16 quantum.
        return sign;
    }
    let e = exp - 1023;
    if e > 15 {
        return sign | 0x7c00;
    }
    let m = man | 1 << 52;
    // The quantum (value of one unit in the last place) of the result.
    let q = e.max(-14) - 10;
    let s = q - e + 52;
    if s > 53 {
        return sign;
    }
    let s = s as u32;
    let mut r = m >> s;
    let rem = m & ((1u64 << s) - 1);
    let half = 1u64 << (s - 1);
    if rem > half || (rem == half && r & 1 == 1) {
        r += 1;
    }
    let out = if e >= -14 {
        ((e + 15) as u64) * 1024 + r - 1024
    } else {
        r
    };
    if out >= 0x7c00 {
        sign | 0x7c00
    } else {
        sign | out as u16
    }
}

/// Denormal handling of one precision, from MODE's FP_DENORM field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Denorm {
    /// Subnormal inputs are kept (not flushed to zero).
    pub input: bool,
    /// Subnormal results are kept.
    pub output: bool,
}

impl Denorm {
    /// The f32 control of MODE (FP_DENORM bits [5:4]).
    #[inline]
    pub fn f32(mode: u32) -> Denorm {
        Denorm::of((mode >> 4) & 3)
    }

    /// The f64/f16 control of MODE (FP_DENORM bits [7:6]).
    #[inline]
    pub fn f16(mode: u32) -> Denorm {
        Denorm::of((mode >> 6) & 3)
    }

    fn of(f: u32) -> Denorm {
        Denorm {
            input: f & 1 != 0,
            output: f & 2 != 0,
        }
    }
}

/// `h` with a subnormal flushed to a signed zero when `keep` is false.
#[inline]
pub fn ftz16(h: u16, keep: bool) -> u16 {
    if !keep && h & 0x7c00 == 0 {
        h & 0x8000
    } else {
        h
    }
}

/// `x` with a subnormal flushed to a signed zero when `keep` is false.
#[inline]
pub fn ftz32(x: f32, keep: bool) -> f32 {
    if !keep && x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

/// True if MODE rounds some precision other than to nearest even (the
/// float executors here model only that mode).
#[inline]
pub fn directed_rounding(mode: u32) -> bool {
    mode & 0xf != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_to_f16(x: f32) -> u16 {
        f64_to_f16(f64::from(x))
    }

    #[test]
    fn f16_round_trips_and_rounds_to_nearest_even() {
        for h in 0..=0xffffu16 {
            let f = f16_to_f32(h);
            if f.is_nan() {
                assert!(f16_to_f32(f32_to_f16(f)).is_nan());
            } else {
                assert_eq!(f32_to_f16(f), h, "{h:#x}");
            }
        }
        // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even is 1.
        assert_eq!(f32_to_f16(1.0 + 1.0 / 2048.0), 0x3c00);
        assert_eq!(f32_to_f16(1.0 + 3.0 / 2048.0), 0x3c02);
        assert_eq!(f32_to_f16(65520.0), 0x7c00);
        assert_eq!(f32_to_f16(65519.0), 0x7bff);
        // Half the smallest subnormal rounds to zero, more rounds up.
        assert_eq!(f64_to_f16(2f64.powi(-25)), 0);
        assert_eq!(f64_to_f16(2f64.powi(-25) * 1.5), 1);
        assert_eq!(f64_to_f16(-(2f64.powi(-14) - 2f64.powi(-26))), 0x8400);
    }
}
