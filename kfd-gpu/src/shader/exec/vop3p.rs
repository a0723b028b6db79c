//! VOP3P: packed 16-bit integer and half-precision math, packed f32
//! (gfx90a+), mixed-precision FMA, dot products and the AccVGPR moves.
//! The matrix (MFMA) instructions are in `mfma`.
//!
//! # Operands
//!
//! A packed 16-bit instruction computes two lanes per work-item: the low
//! result from the half of each source that `op_sel` bit k names (0 =
//! bits [15:0], 1 = bits [31:16]) and the high result from the half
//! `op_sel_hi` bit k names. `neg_lo`/`neg_hi` negate the operand of the
//! low/high result (float instructions only). Decode keeps `neg_lo` in
//! `Mods::neg` and `neg_hi` in `Mods::abs`.
//!
//! Inline constants in packed operands (gfx9, as LLVM's
//! `getInlineEncodingV216` describes the hardware): integer codes give the
//! sign-extended 32-bit value; float codes give, for f16 instructions, the
//! half-precision value in bits [15:0] and zero in [31:16], and for
//! 16-bit integer instructions the single-precision bits. VOP3P has no
//! literal constant on gfx9.
//!
//! Packed f32 instructions read 64-bit register pairs: `op_sel`/
//! `op_sel_hi` bit k picks the pair's low (0) or high (1) dword for the
//! low/high result. An inline constant gives its 32-bit value to both
//! dwords.
//!
//! # AccVGPRs
//!
//! On gfx90a/gfx940 the wave's register file is unified: AccVGPR `aN` is
//! `Wave::vgpr[256 + N]` (the wave has 512 VGPR entries when the target
//! has MFMA). An AccVGPR operand is encoded as a VGPR operand (code 256 +
//! N) whose "acc" meaning comes from the opcode or the ACC bits, so its
//! index in `Wave::vgpr` is the operand code itself.
//!
//! # Floating point
//!
//! Results round to nearest even; an instruction run under another MODE
//! rounding mode stops as unimplemented. MODE's denormal controls (f32:
//! FP_DENORM[1:0], f16: FP_DENORM[3:2]) flush subnormal inputs and/or
//! results. `clamp` clamps a float result to [0, 1] (a NaN becomes 0 when
//! MODE.DX10_CLAMP is set) and saturates an integer result.

use super::vop3p_half::{
    directed_rounding, f16_to_f32, f16_to_f64, f64_to_f16, ftz16, ftz32, Denorm,
};
use super::{unimplemented, Exec, Flow};
use crate::shader::isa::{Enc, Ext, Inst};
use crate::shader::wave::{inline_constant, reg, Wave, Width, LANES};

/// The executor of a VOP3P (or AccVGPR move) mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    Some(match name {
        // Packed 16-bit integer.
        "v_pk_mad_i16" => |w, i, _| {
            pk_int(w, i, 3, Sat::I16, |a, b, c| {
                i64::from(a as i16) * i64::from(b as i16) + i64::from(c as i16)
            })
        },
        "v_pk_mad_u16" => |w, i, _| {
            pk_int(w, i, 3, Sat::U16, |a, b, c| {
                i64::from(a) * i64::from(b) + i64::from(c)
            })
        },
        "v_pk_mul_lo_u16" => {
            |w, i, _| pk_int(w, i, 2, Sat::Wrap, |a, b, _| i64::from(a) * i64::from(b))
        }
        "v_pk_add_i16" => |w, i, _| {
            pk_int(w, i, 2, Sat::I16, |a, b, _| {
                i64::from(a as i16) + i64::from(b as i16)
            })
        },
        "v_pk_sub_i16" => |w, i, _| {
            pk_int(w, i, 2, Sat::I16, |a, b, _| {
                i64::from(a as i16) - i64::from(b as i16)
            })
        },
        "v_pk_add_u16" => {
            |w, i, _| pk_int(w, i, 2, Sat::U16, |a, b, _| i64::from(a) + i64::from(b))
        }
        "v_pk_sub_u16" => {
            |w, i, _| pk_int(w, i, 2, Sat::U16, |a, b, _| i64::from(a) - i64::from(b))
        }
        "v_pk_lshlrev_b16" => {
            |w, i, _| pk_int(w, i, 2, Sat::Wrap, |a, b, _| i64::from(b) << (a & 15))
        }
        "v_pk_lshrrev_b16" => {
            |w, i, _| pk_int(w, i, 2, Sat::Wrap, |a, b, _| i64::from(b >> (a & 15)))
        }
        "v_pk_ashrrev_i16" => |w, i, _| {
            pk_int(w, i, 2, Sat::Wrap, |a, b, _| {
                i64::from((b as i16) >> (a & 15))
            })
        },
        "v_pk_max_i16" => |w, i, _| {
            pk_int(w, i, 2, Sat::Exact, |a, b, _| {
                i64::from((a as i16).max(b as i16))
            })
        },
        "v_pk_min_i16" => |w, i, _| {
            pk_int(w, i, 2, Sat::Exact, |a, b, _| {
                i64::from((a as i16).min(b as i16))
            })
        },
        "v_pk_max_u16" => |w, i, _| pk_int(w, i, 2, Sat::Exact, |a, b, _| i64::from(a.max(b))),
        "v_pk_min_u16" => |w, i, _| pk_int(w, i, 2, Sat::Exact, |a, b, _| i64::from(a.min(b))),
        // Packed half precision.
        "v_pk_fma_f16" => |w, i, _| {
            pk_f16(w, i, 3, |a, b, c| {
                // The product of two halves is exact in f64, and the sum
                // rounds once more: the f16 rounding of it is the fused one.
                f64_to_f16(f16_to_f64(a) * f16_to_f64(b) + f16_to_f64(c))
            })
        },
        "v_pk_add_f16" => {
            |w, i, _| pk_f16(w, i, 2, |a, b, _| f64_to_f16(f16_to_f64(a) + f16_to_f64(b)))
        }
        "v_pk_mul_f16" => {
            |w, i, _| pk_f16(w, i, 2, |a, b, _| f64_to_f16(f16_to_f64(a) * f16_to_f64(b)))
        }
        "v_pk_max_f16" => |w, i, _| {
            let ieee = ieee_mode(w);
            pk_f16(w, i, 2, move |a, b, _| minmax16(a, b, ieee, true))
        },
        "v_pk_min_f16" => |w, i, _| {
            let ieee = ieee_mode(w);
            pk_f16(w, i, 2, move |a, b, _| minmax16(a, b, ieee, false))
        },
        // Packed single precision (gfx90a+).
        "v_pk_fma_f32" => |w, i, _| pk_f32(w, i, 3, f32::mul_add),
        "v_pk_add_f32" => |w, i, _| pk_f32(w, i, 2, |a, b, _| a + b),
        "v_pk_mul_f32" => |w, i, _| pk_f32(w, i, 2, |a, b, _| a * b),
        "v_pk_mov_b32" => |w, i, _| pk_mov(w, i),
        // Mixed precision.
        "v_fma_mix_f32" => |w, i, _| mix(w, i, MixOut::F32, true),
        "v_fma_mixlo_f16" => |w, i, _| mix(w, i, MixOut::Lo, true),
        "v_fma_mixhi_f16" => |w, i, _| mix(w, i, MixOut::Hi, true),
        "v_mad_mix_f32" => |w, i, _| mix(w, i, MixOut::F32, false),
        "v_mad_mixlo_f16" => |w, i, _| mix(w, i, MixOut::Lo, false),
        "v_mad_mixhi_f16" => |w, i, _| mix(w, i, MixOut::Hi, false),
        // Dot products.
        "v_dot2_f32_f16" => |w, i, _| dot2_f32_f16(w, i),
        "v_dot2_i32_i16" => |w, i, _| dot2_16(w, i, true),
        "v_dot2_u32_u16" => |w, i, _| dot2_16(w, i, false),
        "v_dot4_i32_i8" => |w, i, _| dot_narrow(w, i, 8, true),
        "v_dot4_u32_u8" => |w, i, _| dot_narrow(w, i, 8, false),
        "v_dot8_i32_i4" => |w, i, _| dot_narrow(w, i, 4, true),
        "v_dot8_u32_u4" => |w, i, _| dot_narrow(w, i, 4, false),
        // AccVGPR moves (gfx90a+).
        "v_accvgpr_read_b32" => |w, i, _| acc_read(w, i),
        "v_accvgpr_write_b32" => |w, i, _| acc_write(w, i),
        "v_accvgpr_mov_b32" => |w, i, _| acc_mov(w, i),
        _ => return None,
    })
}

/// Reads register `r` of the unified file (zeros past its end).
#[inline]
pub(super) fn get(w: &Wave, r: usize, out: &mut [u32; LANES]) {
    match w.vgpr.get(r) {
        Some(v) => *out = *v,
        None => *out = [0; LANES],
    }
}

/// Writes `vals` to register `r` of the unified file in the lanes of
/// `mask` (nothing past its end).
#[inline]
pub(super) fn put(w: &mut Wave, r: usize, mask: u64, vals: &[u32; LANES]) {
    let Some(d) = w.vgpr.get_mut(r) else {
        return;
    };
    if mask == u64::MAX {
        *d = *vals;
        return;
    }
    for l in 0..LANES {
        if mask >> l & 1 != 0 {
            d[l] = vals[l];
        }
    }
}

/// Source `k` as 32 bits per lane; `f16` selects the half-precision form
/// of an inline float constant (value in bits [15:0]).
fn src32(w: &Wave, i: &Inst, k: usize, f16: bool, out: &mut [u32; LANES]) -> Result<(), Flow> {
    let code = i.src[k];
    if code == reg::LITERAL {
        return Err(unimplemented(i, "literal constant"));
    }
    if code >= reg::VGPR0 {
        get(w, usize::from(code - reg::VGPR0), out);
    } else if f16 && (240..=248).contains(&code) {
        *out = [inline_constant(code, Width::B16).unwrap_or(0) as u32; LANES];
    } else {
        *out = [w.read32(code, None); LANES];
    }
    Ok(())
}

/// Source `k` as a 64-bit pair of dwords per lane (low, high). An inline
/// constant or a special register gives its 32-bit value to both.
fn src_pair(
    w: &Wave,
    i: &Inst,
    k: usize,
    lo: &mut [u32; LANES],
    hi: &mut [u32; LANES],
) -> Result<(), Flow> {
    let code = i.src[k];
    if code == reg::LITERAL {
        return Err(unimplemented(i, "literal constant"));
    }
    if code >= reg::VGPR0 {
        let r = usize::from(code - reg::VGPR0);
        get(w, r, lo);
        get(w, r + 1, hi);
    } else if code < 128 {
        *lo = [w.sgpr[usize::from(code)]; LANES];
        *hi = [w.sgpr[usize::from(code + 1) & 127]; LANES];
    } else {
        let v = w.read32(code, None);
        *lo = [v; LANES];
        *hi = [v; LANES];
    }
    Ok(())
}

/// The shift selecting each source's half for the low and the high
/// result.
fn half_shifts(i: &Inst) -> ([u32; 3], [u32; 3]) {
    let s = |bits: u8| std::array::from_fn(|k| u32::from(bits >> k & 1) * 16);
    (s(i.mods.opsel), s(i.mods.opsel_hi))
}

/// The sign masks of `neg_lo` and `neg_hi` per source.
fn neg_masks(i: &Inst) -> ([u16; 3], [u16; 3]) {
    let s = |bits: u8| std::array::from_fn(|k| u16::from(bits >> k & 1) << 15);
    (s(i.mods.neg), s(i.mods.abs))
}

fn ieee_mode(w: &Wave) -> bool {
    w.mode >> 9 & 1 != 0
}

fn dx10_clamp(w: &Wave) -> bool {
    w.mode >> 8 & 1 != 0
}

/// What an integer result does under `clamp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sat {
    /// Saturates to the signed 16-bit range.
    I16,
    /// Saturates to the unsigned 16-bit range.
    U16,
    /// Cannot overflow: clamp changes nothing.
    Exact,
    /// Wraps; clamp is not modelled.
    Wrap,
}

fn pk_int<F: Fn(u16, u16, u16) -> i64>(w: &mut Wave, i: &Inst, n: usize, sat: Sat, f: F) -> Flow {
    if i.mods.neg != 0 || i.mods.abs != 0 {
        return unimplemented(i, "neg_lo/neg_hi on integer operands");
    }
    let clamp = i.mods.clamp;
    if clamp && sat == Sat::Wrap {
        return unimplemented(i, "clamp");
    }
    let mut s = [[0u32; LANES]; 3];
    for k in 0..n {
        if let Err(e) = src32(w, i, k, false, &mut s[k]) {
            return e;
        }
    }
    let (lo, hi) = half_shifts(i);
    let narrow = |x: i64| -> u32 {
        let v = match (clamp, sat) {
            (true, Sat::I16) => x.clamp(-0x8000, 0x7fff),
            (true, Sat::U16) => x.clamp(0, 0xffff),
            _ => x,
        };
        u32::from(v as u16)
    };
    let r: [u32; LANES] = std::array::from_fn(|l| {
        let half = |sh: &[u32; 3]| {
            narrow(f(
                (s[0][l] >> sh[0]) as u16,
                (s[1][l] >> sh[1]) as u16,
                (s[2][l] >> sh[2]) as u16,
            ))
        };
        half(&lo) | half(&hi) << 16
    });
    let exec = w.exec();
    put(w, vdst(i), exec, &r);
    Flow::Next
}

/// An f16 result clamped to [0, 1].
#[inline]
fn clamp16(h: u16, dx10: bool) -> u16 {
    if h & 0x7fff > 0x7c00 {
        if dx10 {
            0
        } else {
            h
        }
    } else if h & 0x8000 != 0 {
        0
    } else {
        h.min(0x3c00)
    }
}

/// An f32 result clamped to [0, 1].
#[inline]
fn clamp32(x: f32, dx10: bool) -> f32 {
    if x.is_nan() {
        if dx10 {
            0.0
        } else {
            x
        }
    } else if x.is_sign_negative() {
        0.0
    } else {
        x.min(1.0)
    }
}

/// IEEE-754 minNum/maxNum of two f16 values: a NaN operand gives the other
/// operand; in IEEE mode a signaling NaN gives itself, quieted. -0 is
/// below +0.
#[inline]
fn minmax16(a: u16, b: u16, ieee: bool, max: bool) -> u16 {
    let nan = |h: u16| h & 0x7fff > 0x7c00;
    let snan = |h: u16| nan(h) && h & 0x200 == 0;
    if ieee {
        if snan(a) {
            return a | 0x200;
        }
        if snan(b) {
            return b | 0x200;
        }
    }
    match (nan(a), nan(b)) {
        (true, true) => return a | 0x200,
        (true, false) => return b,
        (false, true) => return a,
        _ => {}
    }
    let (x, y) = (f16_to_f32(a), f16_to_f32(b));
    if x == y {
        // Equal values, or zeros of either sign: +0 is the larger.
        if max {
            a & b
        } else {
            a | b
        }
    } else if (x > y) == max {
        a
    } else {
        b
    }
}

fn pk_f16<F: Fn(u16, u16, u16) -> u16>(w: &mut Wave, i: &Inst, n: usize, f: F) -> Flow {
    if directed_rounding(w.mode) {
        return unimplemented(i, "rounding mode other than nearest even");
    }
    let d = Denorm::f16(w.mode);
    let (clamp, dx10) = (i.mods.clamp, dx10_clamp(w));
    let mut s = [[0u32; LANES]; 3];
    for k in 0..n {
        if let Err(e) = src32(w, i, k, true, &mut s[k]) {
            return e;
        }
    }
    let (lo, hi) = half_shifts(i);
    let (nlo, nhi) = neg_masks(i);
    let r: [u32; LANES] = std::array::from_fn(|l| {
        let half = |sh: &[u32; 3], ng: &[u16; 3]| {
            let x = |k: usize| ftz16((s[k][l] >> sh[k]) as u16 ^ ng[k], d.input);
            let mut v = ftz16(f(x(0), x(1), x(2)), d.output);
            if clamp {
                v = clamp16(v, dx10);
            }
            u32::from(v)
        };
        half(&lo, &nlo) | half(&hi, &nhi) << 16
    });
    let exec = w.exec();
    put(w, vdst(i), exec, &r);
    Flow::Next
}

fn pk_f32<F: Fn(f32, f32, f32) -> f32>(w: &mut Wave, i: &Inst, n: usize, f: F) -> Flow {
    if directed_rounding(w.mode) {
        return unimplemented(i, "rounding mode other than nearest even");
    }
    let d = Denorm::f32(w.mode);
    let (clamp, dx10) = (i.mods.clamp, dx10_clamp(w));
    let mut s = [[[0u32; LANES]; 2]; 3];
    for k in 0..n {
        let [lo, hi] = &mut s[k];
        if let Err(e) = src_pair(w, i, k, lo, hi) {
            return e;
        }
    }
    let sel = |bits: u8| -> [usize; 3] { std::array::from_fn(|k| usize::from(bits >> k & 1)) };
    let (slo, shi) = (sel(i.mods.opsel), sel(i.mods.opsel_hi));
    let neg = |bits: u8| -> [u32; 3] { std::array::from_fn(|k| u32::from(bits >> k & 1) << 31) };
    let (nlo, nhi) = (neg(i.mods.neg), neg(i.mods.abs));
    let mut out = [[0u32; LANES]; 2];
    for (h, (sl, ng)) in [(slo, nlo), (shi, nhi)].into_iter().enumerate() {
        for l in 0..LANES {
            let x = |k: usize| ftz32(f32::from_bits(s[k][sl[k]][l] ^ ng[k]), d.input);
            let mut v = ftz32(f(x(0), x(1), x(2)), d.output);
            if clamp {
                v = clamp32(v, dx10);
            }
            out[h][l] = v.to_bits();
        }
    }
    let exec = w.exec();
    let r = vdst(i);
    put(w, r, exec, &out[0]);
    put(w, r + 1, exec, &out[1]);
    Flow::Next
}

/// `v_pk_mov_b32`: the low dword from source 0 (its dword `op_sel[0]`),
/// the high dword from source 1 (its dword `op_sel[1]`).
fn pk_mov(w: &mut Wave, i: &Inst) -> Flow {
    if i.mods.neg != 0 || i.mods.abs != 0 || i.mods.clamp {
        return unimplemented(i, "modifiers");
    }
    let mut s = [[[0u32; LANES]; 2]; 2];
    for k in 0..2 {
        let [lo, hi] = &mut s[k];
        if let Err(e) = src_pair(w, i, k, lo, hi) {
            return e;
        }
    }
    let exec = w.exec();
    let r = vdst(i);
    let lo = s[0][usize::from(i.mods.opsel & 1)];
    let hi = s[1][usize::from(i.mods.opsel >> 1 & 1)];
    put(w, r, exec, &lo);
    put(w, r + 1, exec, &hi);
    Flow::Next
}

/// Where a mixed-precision result goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MixOut {
    /// The whole register, f32.
    F32,
    /// Bits [15:0], f16 (bits [31:16] kept).
    Lo,
    /// Bits [31:16], f16 (bits [15:0] kept).
    Hi,
}

/// `v_fma_mix*` (fused) and gfx900's `v_mad_mix*` (product rounded to f32,
/// subnormals flushed): source k is f16 (the half `op_sel` bit k names)
/// when `op_sel_hi` bit k is set, else f32; `neg_hi` is the absolute-value
/// modifier here, applied before `neg_lo`.
fn mix(w: &mut Wave, i: &Inst, out: MixOut, fused: bool) -> Flow {
    if directed_rounding(w.mode) {
        return unimplemented(i, "rounding mode other than nearest even");
    }
    let (d32, d16) = if fused {
        (Denorm::f32(w.mode), Denorm::f16(w.mode))
    } else {
        let flush = Denorm {
            input: false,
            output: false,
        };
        (flush, flush)
    };
    let (clamp, dx10) = (i.mods.clamp, dx10_clamp(w));
    let mut s = [[0f32; LANES]; 3];
    let mut raw = [0u32; LANES];
    for k in 0..3 {
        let f16 = i.mods.opsel_hi >> k & 1 != 0;
        if let Err(e) = src32(w, i, k, f16, &mut raw) {
            return e;
        }
        let sh = u32::from(i.mods.opsel >> k & 1) * 16;
        let abs = i.mods.abs >> k & 1 != 0;
        let neg = i.mods.neg >> k & 1 != 0;
        for l in 0..LANES {
            let mut x = if f16 {
                f16_to_f32(ftz16((raw[l] >> sh) as u16, d16.input))
            } else {
                ftz32(f32::from_bits(raw[l]), d32.input)
            };
            if abs {
                x = x.abs();
            }
            if neg {
                x = -x;
            }
            s[k][l] = x;
        }
    }
    let r = vdst(i);
    let mut old = [0u32; LANES];
    get(w, r, &mut old);
    let v: [u32; LANES] = std::array::from_fn(|l| {
        let (a, b, c) = (s[0][l], s[1][l], s[2][l]);
        if out == MixOut::F32 {
            let mut x = if fused { a.mul_add(b, c) } else { a * b + c };
            x = ftz32(x, d32.output);
            if clamp {
                x = clamp32(x, dx10);
            }
            return x.to_bits();
        }
        let x = if fused {
            // A product of f32 values is exact in f64: one rounding to f64
            // of the sum, then to f16.
            f64::from(a) * f64::from(b) + f64::from(c)
        } else {
            f64::from(ftz32(a * b, false) + c)
        };
        let mut h = ftz16(f64_to_f16(x), d16.output);
        if clamp {
            h = clamp16(h, dx10);
        }
        if out == MixOut::Lo {
            old[l] & 0xffff_0000 | u32::from(h)
        } else {
            old[l] & 0xffff | u32::from(h) << 16
        }
    });
    let exec = w.exec();
    put(w, r, exec, &v);
    Flow::Next
}

/// `v_dot2_f32_f16`: a0*b0 + a1*b1 + c, the halves negated by
/// `neg_lo`/`neg_hi` as in the packed instructions; c is f32 (negated by `neg_lo[2]`). Products of halves
/// are exact; the sum rounds once (through f64) to f32.
fn dot2_f32_f16(w: &mut Wave, i: &Inst) -> Flow {
    if directed_rounding(w.mode) {
        return unimplemented(i, "rounding mode other than nearest even");
    }
    if i.mods.abs & 4 != 0 || !default_op_sel(i) {
        return unimplemented(i, "op_sel or neg_hi on source 2");
    }
    let (d16, d32) = (Denorm::f16(w.mode), Denorm::f32(w.mode));
    let (clamp, dx10) = (i.mods.clamp, dx10_clamp(w));
    let mut s = [[0u32; LANES]; 3];
    for k in 0..3 {
        if let Err(e) = src32(w, i, k, k < 2, &mut s[k]) {
            return e;
        }
    }
    let (lo, hi) = half_shifts(i);
    let (nlo, nhi) = neg_masks(i);
    let negc = u32::from(i.mods.neg >> 2 & 1) << 31;
    let r: [u32; LANES] = std::array::from_fn(|l| {
        let h = |k: usize, sh: &[u32; 3], ng: &[u16; 3]| {
            f16_to_f64(ftz16((s[k][l] >> sh[k]) as u16 ^ ng[k], d16.input))
        };
        let c = ftz32(f32::from_bits(s[2][l] ^ negc), d32.input);
        let sum = h(0, &lo, &nlo) * h(1, &lo, &nlo) + h(0, &hi, &nhi) * h(1, &hi, &nhi);
        let mut x = ftz32((sum + f64::from(c)) as f32, d32.output);
        if clamp {
            x = clamp32(x, dx10);
        }
        x.to_bits()
    });
    let exec = w.exec();
    put(w, vdst(i), exec, &r);
    Flow::Next
}

/// True if `op_sel`/`op_sel_hi` are the defaults (low halves for the low
/// products, high halves for the high ones). LLVM accepts no other
/// `op_sel` for the dot instructions (and gfx940 no other `op_sel_hi`), so
/// the hardware's reading of them is not modelled.
fn default_op_sel(i: &Inst) -> bool {
    i.mods.opsel == 0 && i.mods.opsel_hi == 7
}

/// Narrows an exact 64-bit integer dot product to 32 bits: wrapping, or
/// saturating under `clamp`.
#[inline]
fn dot_result(x: i64, clamp: bool, signed: bool) -> u32 {
    match (clamp, signed) {
        (false, _) => x as u32,
        (true, true) => x.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32,
        (true, false) => x.clamp(0, i64::from(u32::MAX)) as u32,
    }
}

/// `v_dot2_i32_i16` / `v_dot2_u32_u16`: the products of the halves of
/// sources 0 and 1, plus the 32-bit source 2.
fn dot2_16(w: &mut Wave, i: &Inst, signed: bool) -> Flow {
    if i.mods.neg != 0 || i.mods.abs != 0 || !default_op_sel(i) {
        return unimplemented(i, "op_sel or neg modifiers");
    }
    let mut s = [[0u32; LANES]; 3];
    for k in 0..3 {
        if let Err(e) = src32(w, i, k, false, &mut s[k]) {
            return e;
        }
    }
    let (lo, hi) = half_shifts(i);
    let clamp = i.mods.clamp;
    let r: [u32; LANES] = std::array::from_fn(|l| {
        let h = |k: usize, sh: &[u32; 3]| {
            let v = (s[k][l] >> sh[k]) as u16;
            if signed {
                i64::from(v as i16)
            } else {
                i64::from(v)
            }
        };
        let c = if signed {
            i64::from(s[2][l] as i32)
        } else {
            i64::from(s[2][l])
        };
        dot_result(
            h(0, &lo) * h(1, &lo) + h(0, &hi) * h(1, &hi) + c,
            clamp,
            signed,
        )
    });
    let exec = w.exec();
    put(w, vdst(i), exec, &r);
    Flow::Next
}

/// `v_dot4_*_8` / `v_dot8_*_4`: the sum of the products of the `bits`-wide
/// fields of sources 0 and 1, plus source 2.
fn dot_narrow(w: &mut Wave, i: &Inst, bits: u32, signed: bool) -> Flow {
    if i.mods.neg != 0 || i.mods.abs != 0 || !default_op_sel(i) {
        return unimplemented(i, "op_sel or neg modifiers");
    }
    let mut s = [[0u32; LANES]; 3];
    for k in 0..3 {
        if let Err(e) = src32(w, i, k, false, &mut s[k]) {
            return e;
        }
    }
    let clamp = i.mods.clamp;
    let fields = 32 / bits;
    let r: [u32; LANES] = std::array::from_fn(|l| {
        let field = |v: u32, n: u32| -> i64 {
            let x = v << (32 - bits * (n + 1));
            if signed {
                i64::from((x as i32) >> (32 - bits))
            } else {
                i64::from(x >> (32 - bits))
            }
        };
        let c = if signed {
            i64::from(s[2][l] as i32)
        } else {
            i64::from(s[2][l])
        };
        let sum: i64 = (0..fields)
            .map(|n| field(s[0][l], n) * field(s[1][l], n))
            .sum();
        dot_result(sum + c, clamp, signed)
    });
    let exec = w.exec();
    put(w, vdst(i), exec, &r);
    Flow::Next
}

/// True if the wave has AccVGPRs (a 512-entry register file).
fn has_acc(w: &Wave) -> bool {
    w.vgpr.len() >= 512
}

/// `v_accvgpr_read_b32 vD, aS`.
fn acc_read(w: &mut Wave, i: &Inst) -> Flow {
    let src = i.src[0];
    if !has_acc(w) || src < reg::VGPR0 || i.mods.neg != 0 || i.mods.abs != 0 || i.mods.clamp {
        return unimplemented(i, "operands");
    }
    let mut v = [0u32; LANES];
    get(w, usize::from(src), &mut v);
    let exec = w.exec();
    put(w, vdst(i), exec, &v);
    Flow::Next
}

/// `v_accvgpr_write_b32 aD, src` (a VGPR, SGPR or inline constant).
fn acc_write(w: &mut Wave, i: &Inst) -> Flow {
    if !has_acc(w) || i.mods.neg != 0 || i.mods.abs != 0 || i.mods.clamp {
        return unimplemented(i, "operands");
    }
    let mut v = [0u32; LANES];
    if let Err(e) = src32(w, i, 0, false, &mut v) {
        return e;
    }
    let exec = w.exec();
    put(w, usize::from(i.dst), exec, &v);
    Flow::Next
}

/// `v_accvgpr_mov_b32 aD, aS` (VOP1).
fn acc_mov(w: &mut Wave, i: &Inst) -> Flow {
    let src = i.src[0];
    if !has_acc(w) || i.enc != Enc::Vop1 || i.ext != Ext::None || src < reg::VGPR0 {
        return unimplemented(i, "operands");
    }
    let mut v = [0u32; LANES];
    get(w, usize::from(src), &mut v);
    let exec = w.exec();
    put(w, usize::from(i.dst), exec, &v);
    Flow::Next
}

/// The destination VGPR's index in `Wave::vgpr`.
#[inline]
pub(super) fn vdst(i: &Inst) -> usize {
    usize::from(i.dst.saturating_sub(reg::VGPR0))
}
