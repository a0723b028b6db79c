//! WMMA: gfx11's wave matrix multiply-accumulate, `D = A * B + C` over
//! one 16×16×16 product per wave.
//!
//! # Register layouts (wave32)
//!
//! * A (16×16): lane `l` holds row `l % 16`, its 16 K elements packed
//!   from bit 0 of its first register up (8 registers of f16/bf16, 4 of
//!   i8, 2 of i4). Lanes 16-31 hold a copy of lanes 0-15; the model reads
//!   lanes 0-15.
//! * B (16×16): the same with column `l % 16` for the row.
//! * C and D: 8 registers; register `r` of lane `l` is element
//!   `[2r + l / 16][l % 16]`. A 16-bit C/D element lives in the low half
//!   of its register, or with `op_sel[2]` the high half; D's other half
//!   keeps its bits.
//!
//! # Operands
//!
//! The integer forms take the signedness of A and B from `neg_lo[0]`
//! and `neg_lo[1]`, and saturate with clamp instead of wrapping. The
//! float forms' negate bits and clamp, wave64, a C that is not a VGPR
//! and a partial EXEC stop the wave as unimplemented.
//!
//! # Arithmetic
//!
//! The products are exact in f64; each result is C plus the sum of its
//! 16 products accumulated in f64 and rounded once (f32, f16 and bf16
//! round to nearest even; integer results wrap to 32 bits unless
//! clamped). Subnormals are kept whatever MODE says.

use super::vop3p::{get, put, vdst};
use super::vop3p_half::{f16_to_f64, f64_to_f16};
use super::{unimplemented, Exec, Flow};
use crate::shader::isa::Inst;
use crate::shader::wave::{reg, Wave, LANES};

/// An A/B element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum In {
    F16,
    Bf16,
    /// 8-bit integers (signedness from the instruction).
    I8,
    /// 4-bit integers.
    I4,
}

impl In {
    fn bits(self) -> usize {
        match self {
            In::F16 | In::Bf16 => 16,
            In::I8 => 8,
            In::I4 => 4,
        }
    }
}

/// A C/D element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Out {
    F32,
    F16,
    Bf16,
    I32,
}

/// The executor of a WMMA mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    Some(match name {
        "v_wmma_f32_16x16x16_f16" => |w, i, _| wmma(w, i, In::F16, Out::F32),
        "v_wmma_f32_16x16x16_bf16" => |w, i, _| wmma(w, i, In::Bf16, Out::F32),
        "v_wmma_f16_16x16x16_f16" => |w, i, _| wmma(w, i, In::F16, Out::F16),
        "v_wmma_bf16_16x16x16_bf16" => |w, i, _| wmma(w, i, In::Bf16, Out::Bf16),
        "v_wmma_i32_16x16x16_iu8" => |w, i, _| wmma(w, i, In::I8, Out::I32),
        "v_wmma_i32_16x16x16_iu4" => |w, i, _| wmma(w, i, In::I4, Out::I32),
        _ => return None,
    })
}

/// The 16 K elements of the row (A) or column (B) lane `l` holds in the
/// registers from `r`, as exact values.
fn elements(w: &Wave, r: usize, l: usize, t: In, signed: bool) -> [f64; 16] {
    let bits = t.bits();
    std::array::from_fn(|k| {
        let at = k * bits;
        let word = w.vgpr.get(r + at / 32).map_or(0, |v| v[l]);
        let raw = word >> (at % 32) & ((1u64 << bits) - 1) as u32;
        match t {
            In::F16 => f16_to_f64(raw as u16),
            In::Bf16 => f64::from(f32::from_bits(raw << 16)),
            In::I8 | In::I4 => {
                let shift = 32 - bits;
                if signed {
                    f64::from((raw << shift) as i32 >> shift)
                } else {
                    f64::from(raw)
                }
            }
        }
    })
}

/// `x` rounded to bfloat16, to nearest even, once: to f32 rounding to
/// odd (which keeps the sticky bit), then to the 8 bits of precision.
fn f64_to_bf16(x: f64) -> u16 {
    if x.is_nan() {
        return 0x7fc0 | (x.is_sign_negative() as u16) << 15;
    }
    let t = x as f32;
    let mut b = t.to_bits();
    if t.is_finite() && f64::from(t) != x && b & 1 == 0 {
        if f64::from(t).abs() > x.abs() {
            b -= 1;
        } else {
            b += 1;
        }
    }
    let lsb = b >> 16 & 1;
    ((b + 0x7fff + lsb) >> 16) as u16
}

fn wmma(w: &mut Wave, i: &Inst, a_ty: In, out: Out) -> Flow {
    if !w.wave32 {
        return unimplemented(i, "wave64");
    }
    let integer = out == Out::I32;
    let m = &i.mods;
    if !integer && (m.neg != 0 || m.abs != 0 || m.clamp) {
        return unimplemented(i, "negate or clamp on a float form");
    }
    if i.src.iter().any(|&c| c < reg::VGPR0) {
        return unimplemented(i, "source not a VGPR");
    }
    if w.exec() as u32 != u32::MAX {
        return unimplemented(i, "partial EXEC");
    }
    let reg_of = |n: usize| usize::from(i.src[n] - reg::VGPR0);
    let (ra, rb, rc, rd) = (reg_of(0), reg_of(1), reg_of(2), vdst(i));
    let (sa, sb) = (m.neg & 1 != 0, m.neg & 2 != 0);
    let high = m.opsel & 4 != 0;
    let a: Vec<[f64; 16]> = (0..16).map(|l| elements(w, ra, l, a_ty, sa)).collect();
    let b: Vec<[f64; 16]> = (0..16).map(|l| elements(w, rb, l, a_ty, sb)).collect();
    let mut d = [[0u32; LANES]; 8];
    for (r, dr) in d.iter_mut().enumerate() {
        let mut c = [0u32; LANES];
        get(w, rc + r, &mut c);
        let mut old = [0u32; LANES];
        get(w, rd + r, &mut old);
        for l in 0..32 {
            let (row, col) = (2 * r + l / 16, l % 16);
            let dot: f64 = (0..16).map(|k| a[row][k] * b[col][k]).sum();
            let c16 = if high { c[l] >> 16 } else { c[l] & 0xffff } as u16;
            let half = |v: u16| {
                if high {
                    old[l] & 0xffff | u32::from(v) << 16
                } else {
                    old[l] & 0xffff_0000 | u32::from(v)
                }
            };
            dr[l] = match out {
                Out::F32 => ((f64::from(f32::from_bits(c[l])) + dot) as f32).to_bits(),
                Out::F16 => half(f64_to_f16(f16_to_f64(c16) + dot)),
                Out::Bf16 => half(f64_to_bf16(
                    f64::from(f32::from_bits(u32::from(c16) << 16)) + dot,
                )),
                Out::I32 => {
                    // |dot| < 2^20: exact in f64 and in i64.
                    let s = i64::from(c[l] as i32) + dot as i64;
                    if m.clamp {
                        s.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
                    } else {
                        s as i32 as u32
                    }
                }
            };
        }
    }
    for (r, dr) in d.iter().enumerate() {
        put(w, rd + r, u64::from(u32::MAX), dr);
    }
    Flow::Next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bfloat16_rounds_once_to_nearest_even() {
        assert_eq!(f64_to_bf16(1.0), 0x3f80);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even (1.0).
        assert_eq!(f64_to_bf16(1.0 + 2f64.powi(-8)), 0x3f80);
        // A hair above halfway rounds up, though f32 alone would lose
        // the hair and round to even.
        assert_eq!(f64_to_bf16(1.0 + 2f64.powi(-8) + 2f64.powi(-40)), 0x3f81);
        assert_eq!(f64_to_bf16(-2.0), 0xc000);
        assert_eq!(f64_to_bf16(f64::NAN) & 0x7fc0, 0x7fc0);
    }
}
