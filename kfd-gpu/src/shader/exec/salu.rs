//! SALU: scalar ALU instructions (SOP1, SOP2, SOPC, SOPK).
//!
//! SCC follows the Vega/CDNA ISA manuals: carry or borrow for the
//! unsigned adds and subtracts, signed overflow for the signed ones,
//! "S0 was chosen" for min/max, "result is not zero" for the bitwise,
//! shift, bit-field, count and quad-mask operations; moves, selects,
//! multiplies, bit-field masks, sign extensions, bit finds and packs
//! leave it alone.

use super::{unimplemented, Ctx, Exec, Flow};
use crate::shader::isa::{Inst, Target};
use crate::shader::wave::reg::{self, LITERAL};
use crate::shader::wave::Wave;

/// The executor of a SALU mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    sop2(name)
        .or_else(|| sop1(name))
        .or_else(|| sopc(name))
        .or_else(|| sopk(name))
}

// ---------------------------------------------------------------- SOP2

fn sop2(name: &str) -> Option<Exec> {
    Some(match name {
        "s_add_u32" => |w, i, _| {
            op2_scc(w, i, |a, b, _| {
                let (r, c) = a.overflowing_add(b);
                (r, c)
            })
        },
        "s_sub_u32" => |w, i, _| op2_scc(w, i, |a, b, _| a.overflowing_sub(b)),
        "s_add_i32" => |w, i, _| {
            op2_scc(w, i, |a, b, _| {
                let (r, o) = (a as i32).overflowing_add(b as i32);
                (r as u32, o)
            })
        },
        "s_sub_i32" => |w, i, _| {
            op2_scc(w, i, |a, b, _| {
                let (r, o) = (a as i32).overflowing_sub(b as i32);
                (r as u32, o)
            })
        },
        "s_addc_u32" => |w, i, _| {
            op2_scc(w, i, |a, b, c| {
                let s = u64::from(a) + u64::from(b) + u64::from(c);
                (s as u32, s >> 32 != 0)
            })
        },
        "s_subb_u32" => |w, i, _| {
            op2_scc(w, i, |a, b, c| {
                let d = u64::from(a)
                    .wrapping_sub(u64::from(b))
                    .wrapping_sub(u64::from(c));
                (d as u32, u64::from(b) + u64::from(c) > u64::from(a))
            })
        },
        "s_min_i32" => |w, i, _| {
            op2_scc(w, i, |a, b, _| {
                let s0 = (a as i32) < (b as i32);
                (if s0 { a } else { b }, s0)
            })
        },
        "s_min_u32" => |w, i, _| op2_scc(w, i, |a, b, _| (a.min(b), a < b)),
        "s_max_i32" => |w, i, _| {
            op2_scc(w, i, |a, b, _| {
                let s0 = (a as i32) > (b as i32);
                (if s0 { a } else { b }, s0)
            })
        },
        "s_max_u32" => |w, i, _| op2_scc(w, i, |a, b, _| (a.max(b), a > b)),
        "s_cselect_b32" => |w, i, _| op2_scc(w, i, |a, b, c| (if c { a } else { b }, c)),
        "s_cselect_b64" => |w, i, _| {
            let v = if w.scc {
                w.read64(i.src[0], i.lit)
            } else {
                w.read64(i.src[1], i.lit)
            };
            w.write64(i.dst, v);
            Flow::Next
        },
        "s_and_b32" => |w, i, _| op2_nz(w, i, |a, b| a & b),
        "s_or_b32" => |w, i, _| op2_nz(w, i, |a, b| a | b),
        "s_xor_b32" => |w, i, _| op2_nz(w, i, |a, b| a ^ b),
        "s_andn2_b32" => |w, i, _| op2_nz(w, i, |a, b| a & !b),
        "s_orn2_b32" => |w, i, _| op2_nz(w, i, |a, b| a | !b),
        "s_nand_b32" => |w, i, _| op2_nz(w, i, |a, b| !(a & b)),
        "s_nor_b32" => |w, i, _| op2_nz(w, i, |a, b| !(a | b)),
        "s_xnor_b32" => |w, i, _| op2_nz(w, i, |a, b| !(a ^ b)),
        "s_and_b64" => |w, i, _| op2_64_nz(w, i, |a, b| a & b),
        "s_or_b64" => |w, i, _| op2_64_nz(w, i, |a, b| a | b),
        "s_xor_b64" => |w, i, _| op2_64_nz(w, i, |a, b| a ^ b),
        "s_andn2_b64" => |w, i, _| op2_64_nz(w, i, |a, b| a & !b),
        "s_orn2_b64" => |w, i, _| op2_64_nz(w, i, |a, b| a | !b),
        "s_nand_b64" => |w, i, _| op2_64_nz(w, i, |a, b| !(a & b)),
        "s_nor_b64" => |w, i, _| op2_64_nz(w, i, |a, b| !(a | b)),
        "s_xnor_b64" => |w, i, _| op2_64_nz(w, i, |a, b| !(a ^ b)),
        "s_lshl_b32" => |w, i, _| op2_nz(w, i, |a, b| a << (b & 31)),
        "s_lshr_b32" => |w, i, _| op2_nz(w, i, |a, b| a >> (b & 31)),
        "s_ashr_i32" => |w, i, _| op2_nz(w, i, |a, b| ((a as i32) >> (b & 31)) as u32),
        "s_lshl_b64" => |w, i, _| op2_64x32_nz(w, i, |a, b| a << (b & 63)),
        "s_lshr_b64" => |w, i, _| op2_64x32_nz(w, i, |a, b| a >> (b & 63)),
        "s_ashr_i64" => |w, i, _| {
            let a = read64_signed(w, i, 0);
            let r = (a >> (w.read32(i.src[1], i.lit) & 63)) as u64;
            w.write64(i.dst, r);
            w.scc = r != 0;
            Flow::Next
        },
        "s_bfm_b32" => |w, i, _| op2(w, i, |a, b| (((1u64 << (a & 31)) - 1) as u32) << (b & 31)),
        "s_bfm_b64" => |w, i, _| {
            let (a, b) = (w.read32(i.src[0], i.lit), w.read32(i.src[1], i.lit));
            let r = ((1u128 << (a & 63)) - 1) as u64;
            w.write64(i.dst, r << (b & 63));
            Flow::Next
        },
        "s_mul_i32" => |w, i, _| op2(w, i, u32::wrapping_mul),
        "s_mul_hi_u32" => |w, i, _| op2(w, i, |a, b| ((u64::from(a) * u64::from(b)) >> 32) as u32),
        "s_mul_hi_i32" => |w, i, _| {
            op2(w, i, |a, b| {
                ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32
            })
        },
        "s_bfe_u32" => |w, i, _| op2_nz(w, i, bfe_u32),
        "s_bfe_i32" => |w, i, _| op2_nz(w, i, bfe_i32),
        "s_bfe_u64" => |w, i, _| op2_64x32_nz(w, i, bfe_u64),
        "s_bfe_i64" => |w, i, _| op2_64x32_nz(w, i, bfe_i64),
        "s_absdiff_i32" => |w, i, _| {
            op2_nz(w, i, |a, b| {
                (a as i32).wrapping_sub(b as i32).unsigned_abs()
            })
        },
        "s_lshl1_add_u32" => |w, i, _| op2_scc(w, i, |a, b, _| shift_add(a, b, 1)),
        "s_lshl2_add_u32" => |w, i, _| op2_scc(w, i, |a, b, _| shift_add(a, b, 2)),
        "s_lshl3_add_u32" => |w, i, _| op2_scc(w, i, |a, b, _| shift_add(a, b, 3)),
        "s_lshl4_add_u32" => |w, i, _| op2_scc(w, i, |a, b, _| shift_add(a, b, 4)),
        "s_pack_ll_b32_b16" => |w, i, _| op2(w, i, |a, b| a & 0xffff | b << 16),
        "s_pack_lh_b32_b16" => |w, i, _| op2(w, i, |a, b| a & 0xffff | b & 0xffff_0000),
        "s_pack_hh_b32_b16" => |w, i, _| op2(w, i, |a, b| a >> 16 | b & 0xffff_0000),
        _ => return None,
    })
}

/// Source `n` of a signed 64-bit operand (`s_ashr_i64`, `s_flbit_i32_i64`,
/// the ones LLVM types as signed): a 32-bit literal is sign-extended
/// there, where the unsigned and bitwise 64-bit operands zero-extend it.
#[inline]
fn read64_signed(w: &Wave, i: &Inst, n: usize) -> i64 {
    let code = i.src[n];
    if code == LITERAL {
        i64::from(i.lit.unwrap_or(0) as i32)
    } else {
        w.read64(code, i.lit) as i64
    }
}

/// A 32-bit SOP2 that leaves SCC alone.
#[inline]
fn op2(w: &mut Wave, i: &Inst, f: fn(u32, u32) -> u32) -> Flow {
    let r = f(w.read32(i.src[0], i.lit), w.read32(i.src[1], i.lit));
    w.write32(i.dst, r);
    Flow::Next
}

/// A 32-bit SOP2 whose SCC is "result is not zero".
#[inline]
fn op2_nz(w: &mut Wave, i: &Inst, f: fn(u32, u32) -> u32) -> Flow {
    let r = f(w.read32(i.src[0], i.lit), w.read32(i.src[1], i.lit));
    w.write32(i.dst, r);
    w.scc = r != 0;
    Flow::Next
}

/// A 32-bit SOP2 that computes its SCC (given the old one).
#[inline]
fn op2_scc(w: &mut Wave, i: &Inst, f: fn(u32, u32, bool) -> (u32, bool)) -> Flow {
    let (r, scc) = f(w.read32(i.src[0], i.lit), w.read32(i.src[1], i.lit), w.scc);
    w.write32(i.dst, r);
    w.scc = scc;
    Flow::Next
}

/// A 64-bit SOP2 (both sources 64-bit) whose SCC is "result is not zero".
#[inline]
fn op2_64_nz(w: &mut Wave, i: &Inst, f: fn(u64, u64) -> u64) -> Flow {
    let r = f(w.read64(i.src[0], i.lit), w.read64(i.src[1], i.lit));
    w.write64(i.dst, r);
    w.scc = r != 0;
    Flow::Next
}

/// A 64-bit SOP2 with a 32-bit second source (shift amount, bit-field
/// description) whose SCC is "result is not zero".
#[inline]
fn op2_64x32_nz(w: &mut Wave, i: &Inst, f: fn(u64, u32) -> u64) -> Flow {
    let r = f(w.read64(i.src[0], i.lit), w.read32(i.src[1], i.lit));
    w.write64(i.dst, r);
    w.scc = r != 0;
    Flow::Next
}

/// `(a << n) + b` and its carry out of 32 bits (bits shifted out of `a`
/// count, as the ISA's 64-bit intermediate says).
#[inline]
fn shift_add(a: u32, b: u32, n: u32) -> (u32, bool) {
    let t = (u64::from(a) << n) + u64::from(b);
    (t as u32, t >> 32 != 0)
}

/// The bit-field description of S_BFE: offset in bits 5:0 (masked by the
/// caller's width), width in bits 22:16.
#[inline]
fn bfe_fields(b: u32, bits: u32) -> (u32, u32) {
    (b & (bits - 1), (b >> 16) & 0x7f)
}

#[inline]
fn bfe_u32(a: u32, b: u32) -> u32 {
    let (off, width) = bfe_fields(b, 32);
    if width == 0 {
        0
    } else if off + width < 32 {
        (a << (32 - off - width)) >> (32 - width)
    } else {
        a >> off
    }
}

#[inline]
fn bfe_i32(a: u32, b: u32) -> u32 {
    let (off, width) = bfe_fields(b, 32);
    if width == 0 {
        0
    } else if off + width < 32 {
        (((a << (32 - off - width)) as i32) >> (32 - width)) as u32
    } else {
        ((a as i32) >> off) as u32
    }
}

#[inline]
fn bfe_u64(a: u64, b: u32) -> u64 {
    let (off, width) = bfe_fields(b, 64);
    if width == 0 {
        0
    } else if off + width < 64 {
        (a << (64 - off - width)) >> (64 - width)
    } else {
        a >> off
    }
}

#[inline]
fn bfe_i64(a: u64, b: u32) -> u64 {
    let (off, width) = bfe_fields(b, 64);
    if width == 0 {
        0
    } else if off + width < 64 {
        (((a << (64 - off - width)) as i64) >> (64 - width)) as u64
    } else {
        ((a as i64) >> off) as u64
    }
}

// ---------------------------------------------------------------- SOP1

fn sop1(name: &str) -> Option<Exec> {
    Some(match name {
        "s_mov_b32" => |w, i, _| op1(w, i, |a| a),
        "s_mov_b64" => |w, i, _| op1_64(w, i, |a| a),
        "s_cmov_b32" => |w, i, _| {
            if w.scc {
                let v = w.read32(i.src[0], i.lit);
                w.write32(i.dst, v);
            }
            Flow::Next
        },
        "s_cmov_b64" => |w, i, _| {
            if w.scc {
                let v = w.read64(i.src[0], i.lit);
                w.write64(i.dst, v);
            }
            Flow::Next
        },
        "s_not_b32" => |w, i, _| op1_nz(w, i, |a| !a),
        "s_not_b64" => |w, i, _| op1_64_nz(w, i, |a| !a),
        "s_wqm_b32" => |w, i, _| op1_nz(w, i, |a| wqm(u64::from(a)) as u32),
        "s_wqm_b64" => |w, i, _| op1_64_nz(w, i, wqm),
        "s_brev_b32" => |w, i, _| op1(w, i, u32::reverse_bits),
        "s_brev_b64" => |w, i, _| op1_64(w, i, u64::reverse_bits),
        "s_bcnt0_i32_b32" => |w, i, _| op1_nz(w, i, u32::count_zeros),
        "s_bcnt0_i32_b64" => |w, i, _| op1_from64_nz(w, i, u64::count_zeros),
        "s_bcnt1_i32_b32" => |w, i, _| op1_nz(w, i, u32::count_ones),
        "s_bcnt1_i32_b64" => |w, i, _| op1_from64_nz(w, i, u64::count_ones),
        "s_ff0_i32_b32" => |w, i, _| op1(w, i, |a| find(a != u32::MAX, (!a).trailing_zeros())),
        "s_ff0_i32_b64" => {
            |w, i, _| op1_from64(w, i, |a| find(a != u64::MAX, (!a).trailing_zeros()))
        }
        "s_ff1_i32_b32" => |w, i, _| op1(w, i, |a| find(a != 0, a.trailing_zeros())),
        "s_ff1_i32_b64" => |w, i, _| op1_from64(w, i, |a| find(a != 0, a.trailing_zeros())),
        "s_flbit_i32_b32" => |w, i, _| op1(w, i, |a| find(a != 0, a.leading_zeros())),
        "s_flbit_i32_b64" => |w, i, _| op1_from64(w, i, |a| find(a != 0, a.leading_zeros())),
        "s_flbit_i32" => |w, i, _| {
            op1(w, i, |a| {
                let m = if (a as i32) < 0 { !a } else { a };
                find(m != 0, m.leading_zeros())
            })
        },
        "s_flbit_i32_i64" => |w, i, _| {
            let a = read64_signed(w, i, 0) as u64;
            let m = if (a as i64) < 0 { !a } else { a };
            w.write32(i.dst, find(m != 0, m.leading_zeros()));
            Flow::Next
        },
        "s_sext_i32_i8" => |w, i, _| op1(w, i, |a| a as i8 as i32 as u32),
        "s_sext_i32_i16" => |w, i, _| op1(w, i, |a| a as i16 as i32 as u32),
        "s_bitset0_b32" => |w, i, _| {
            let (b, d) = (w.read32(i.src[0], i.lit), w.read32(i.dst, None));
            w.write32(i.dst, d & !(1 << (b & 31)));
            Flow::Next
        },
        "s_bitset1_b32" => |w, i, _| {
            let (b, d) = (w.read32(i.src[0], i.lit), w.read32(i.dst, None));
            w.write32(i.dst, d | 1 << (b & 31));
            Flow::Next
        },
        "s_bitset0_b64" => |w, i, _| {
            let (b, d) = (w.read32(i.src[0], i.lit), w.read64(i.dst, None));
            w.write64(i.dst, d & !(1 << (b & 63)));
            Flow::Next
        },
        "s_bitset1_b64" => |w, i, _| {
            let (b, d) = (w.read32(i.src[0], i.lit), w.read64(i.dst, None));
            w.write64(i.dst, d | 1 << (b & 63));
            Flow::Next
        },
        "s_getpc_b64" => |w, i, _| {
            let next = w.pc.wrapping_add(u64::from(i.len));
            w.write64(i.dst, next);
            Flow::Next
        },
        "s_setpc_b64" => |w, i, _| Flow::Jump(w.read64(i.src[0], i.lit)),
        "s_swappc_b64" => |w, i, _| {
            let to = w.read64(i.src[0], i.lit);
            let next = w.pc.wrapping_add(u64::from(i.len));
            w.write64(i.dst, next);
            Flow::Jump(to)
        },
        "s_and_saveexec_b64" => |w, i, _| saveexec(w, i, |s, e| s & e),
        "s_or_saveexec_b64" => |w, i, _| saveexec(w, i, |s, e| s | e),
        "s_xor_saveexec_b64" => |w, i, _| saveexec(w, i, |s, e| s ^ e),
        "s_andn2_saveexec_b64" => |w, i, _| saveexec(w, i, |s, e| s & !e),
        "s_orn2_saveexec_b64" => |w, i, _| saveexec(w, i, |s, e| s | !e),
        "s_nand_saveexec_b64" => |w, i, _| saveexec(w, i, |s, e| !(s & e)),
        "s_nor_saveexec_b64" => |w, i, _| saveexec(w, i, |s, e| !(s | e)),
        "s_xnor_saveexec_b64" => |w, i, _| saveexec(w, i, |s, e| !(s ^ e)),
        "s_andn1_saveexec_b64" => |w, i, _| saveexec(w, i, |s, e| !s & e),
        "s_orn1_saveexec_b64" => |w, i, _| saveexec(w, i, |s, e| !s | e),
        "s_andn1_wrexec_b64" => |w, i, _| wrexec(w, i, |s, e| !s & e),
        "s_andn2_wrexec_b64" => |w, i, _| wrexec(w, i, |s, e| s & !e),
        // gfx11's 32-bit forms (a wave32's EXEC), by gfx11's names.
        "s_and_saveexec_b32" => |w, i, _| saveexec32(w, i, |s, e| s & e),
        "s_or_saveexec_b32" => |w, i, _| saveexec32(w, i, |s, e| s | e),
        "s_xor_saveexec_b32" => |w, i, _| saveexec32(w, i, |s, e| s ^ e),
        "s_and_not1_saveexec_b32" => |w, i, _| saveexec32(w, i, |s, e| s & !e),
        "s_or_not1_saveexec_b32" => |w, i, _| saveexec32(w, i, |s, e| s | !e),
        "s_nand_saveexec_b32" => |w, i, _| saveexec32(w, i, |s, e| !(s & e)),
        "s_nor_saveexec_b32" => |w, i, _| saveexec32(w, i, |s, e| !(s | e)),
        "s_xnor_saveexec_b32" => |w, i, _| saveexec32(w, i, |s, e| !(s ^ e)),
        "s_and_not0_saveexec_b32" => |w, i, _| saveexec32(w, i, |s, e| !s & e),
        "s_or_not0_saveexec_b32" => |w, i, _| saveexec32(w, i, |s, e| !s | e),
        "s_and_not0_wrexec_b32" => |w, i, _| wrexec32(w, i, |s, e| !s & e),
        "s_and_not1_wrexec_b32" => |w, i, _| wrexec32(w, i, |s, e| s & !e),
        "s_quadmask_b32" => |w, i, _| op1_nz(w, i, |a| quadmask(u64::from(a)) as u32),
        "s_quadmask_b64" => |w, i, _| op1_64_nz(w, i, quadmask),
        "s_movrels_b32" => |w, i, _| movrel(w, i, false, 1),
        "s_movrels_b64" => |w, i, _| movrel(w, i, false, 2),
        "s_movreld_b32" => |w, i, _| movrel(w, i, true, 1),
        "s_movreld_b64" => |w, i, _| movrel(w, i, true, 2),
        "s_abs_i32" => |w, i, _| op1_nz(w, i, |a| (a as i32).unsigned_abs()),
        "s_bitreplicate_b64_b32" => |w, i, _| {
            let a = w.read32(i.src[0], i.lit);
            let mut r = 0u64;
            for k in 0..32 {
                r |= (u64::from(a >> k & 1) * 3) << (2 * k);
            }
            w.write64(i.dst, r);
            Flow::Next
        },
        _ => return None,
    })
}

/// A bit position, or -1 when `found` is false.
#[inline]
fn find(found: bool, pos: u32) -> u32 {
    if found {
        pos
    } else {
        u32::MAX
    }
}

/// Whole-quad mode: every nibble with a bit set becomes 0xf.
fn wqm(a: u64) -> u64 {
    let mut r = 0u64;
    for k in 0..16 {
        if a >> (4 * k) & 0xf != 0 {
            r |= 0xf << (4 * k);
        }
    }
    r
}

/// Bit k of the result is set if nibble k of `a` has a bit set.
fn quadmask(a: u64) -> u64 {
    let mut r = 0u64;
    for k in 0..16 {
        if a >> (4 * k) & 0xf != 0 {
            r |= 1 << k;
        }
    }
    r
}

#[inline]
fn op1(w: &mut Wave, i: &Inst, f: fn(u32) -> u32) -> Flow {
    let r = f(w.read32(i.src[0], i.lit));
    w.write32(i.dst, r);
    Flow::Next
}

#[inline]
fn op1_nz(w: &mut Wave, i: &Inst, f: fn(u32) -> u32) -> Flow {
    let r = f(w.read32(i.src[0], i.lit));
    w.write32(i.dst, r);
    w.scc = r != 0;
    Flow::Next
}

#[inline]
fn op1_64(w: &mut Wave, i: &Inst, f: fn(u64) -> u64) -> Flow {
    let r = f(w.read64(i.src[0], i.lit));
    w.write64(i.dst, r);
    Flow::Next
}

#[inline]
fn op1_64_nz(w: &mut Wave, i: &Inst, f: fn(u64) -> u64) -> Flow {
    let r = f(w.read64(i.src[0], i.lit));
    w.write64(i.dst, r);
    w.scc = r != 0;
    Flow::Next
}

/// A 64-bit source, a 32-bit result; SCC alone.
#[inline]
fn op1_from64(w: &mut Wave, i: &Inst, f: fn(u64) -> u32) -> Flow {
    let r = f(w.read64(i.src[0], i.lit));
    w.write32(i.dst, r);
    Flow::Next
}

/// A 64-bit source, a 32-bit result; SCC = result is not zero.
#[inline]
fn op1_from64_nz(w: &mut Wave, i: &Inst, f: fn(u64) -> u32) -> Flow {
    let r = f(w.read64(i.src[0], i.lit));
    w.write32(i.dst, r);
    w.scc = r != 0;
    Flow::Next
}

/// `s_*_saveexec_b64`: SDST = EXEC, EXEC = f(S0, EXEC), SCC = EXEC != 0.
#[inline]
fn saveexec(w: &mut Wave, i: &Inst, f: fn(u64, u64) -> u64) -> Flow {
    let s = w.read64(i.src[0], i.lit);
    let e = w.exec();
    w.write64(i.dst, e);
    let n = f(s, e);
    w.set_exec(n);
    w.scc = n != 0;
    Flow::Next
}

/// `s_*_wrexec_b64`: EXEC = f(S0, EXEC), SDST = the new EXEC, SCC =
/// EXEC != 0.
#[inline]
fn wrexec(w: &mut Wave, i: &Inst, f: fn(u64, u64) -> u64) -> Flow {
    let n = f(w.read64(i.src[0], i.lit), w.exec());
    w.set_exec(n);
    w.write64(i.dst, n);
    w.scc = n != 0;
    Flow::Next
}

/// `s_*_saveexec_b32`: SDST = EXEC_LO, EXEC_LO = f(S0, EXEC_LO), SCC =
/// EXEC_LO != 0.
#[inline]
fn saveexec32(w: &mut Wave, i: &Inst, f: fn(u32, u32) -> u32) -> Flow {
    let s = w.read32(i.src[0], i.lit);
    let e = w.sgpr[usize::from(reg::EXEC_LO)];
    w.write32(i.dst, e);
    let n = f(s, e);
    w.write32(reg::EXEC_LO, n);
    w.scc = n != 0;
    Flow::Next
}

/// `s_*_wrexec_b32`: EXEC_LO = f(S0, EXEC_LO), SDST = the new EXEC_LO,
/// SCC = EXEC_LO != 0.
#[inline]
fn wrexec32(w: &mut Wave, i: &Inst, f: fn(u32, u32) -> u32) -> Flow {
    let n = f(w.read32(i.src[0], i.lit), w.sgpr[usize::from(reg::EXEC_LO)]);
    w.write32(reg::EXEC_LO, n);
    w.write32(i.dst, n);
    w.scc = n != 0;
    Flow::Next
}

/// Highest SGPR number `s_movrel*` may reach (s0..s101).
const MOVREL_SGPRS: u32 = 102;

/// `s_movrels` (read SGPR[S0 + M0] into SDST) and `s_movreld` (write S0
/// to SGPR[SDST + M0]), `n` dwords. The indexed register must be an SGPR
/// the wave has (s0..s101).
fn movrel(w: &mut Wave, i: &Inst, dst_indexed: bool, n: u32) -> Flow {
    let base = u32::from(if dst_indexed { i.dst } else { i.src[0] });
    if base >= MOVREL_SGPRS {
        return unimplemented(i, "indexed operand is not an SGPR");
    }
    let at = u64::from(base) + u64::from(w.m0());
    if at + u64::from(n) > u64::from(MOVREL_SGPRS) {
        return unimplemented(i, "SGPR index out of range");
    }
    let at = at as u16;
    if dst_indexed {
        if n == 1 {
            let v = w.read32(i.src[0], i.lit);
            w.write32(at, v);
        } else {
            let v = w.read64(i.src[0], i.lit);
            w.write64(at, v);
        }
    } else if n == 1 {
        let v = w.read32(at, None);
        w.write32(i.dst, v);
    } else {
        let v = w.read64(at, None);
        w.write64(i.dst, v);
    }
    Flow::Next
}

// ---------------------------------------------------------------- SOPC

fn sopc(name: &str) -> Option<Exec> {
    Some(match name {
        "s_cmp_eq_i32" | "s_cmp_eq_u32" => |w, i, _| cmp(w, i, |a, b| a == b),
        "s_cmp_lg_i32" | "s_cmp_lg_u32" => |w, i, _| cmp(w, i, |a, b| a != b),
        "s_cmp_gt_i32" => |w, i, _| cmp(w, i, |a, b| (a as i32) > (b as i32)),
        "s_cmp_ge_i32" => |w, i, _| cmp(w, i, |a, b| (a as i32) >= (b as i32)),
        "s_cmp_lt_i32" => |w, i, _| cmp(w, i, |a, b| (a as i32) < (b as i32)),
        "s_cmp_le_i32" => |w, i, _| cmp(w, i, |a, b| (a as i32) <= (b as i32)),
        "s_cmp_gt_u32" => |w, i, _| cmp(w, i, |a, b| a > b),
        "s_cmp_ge_u32" => |w, i, _| cmp(w, i, |a, b| a >= b),
        "s_cmp_lt_u32" => |w, i, _| cmp(w, i, |a, b| a < b),
        "s_cmp_le_u32" => |w, i, _| cmp(w, i, |a, b| a <= b),
        "s_cmp_eq_u64" => |w, i, _| {
            w.scc = w.read64(i.src[0], i.lit) == w.read64(i.src[1], i.lit);
            Flow::Next
        },
        "s_cmp_lg_u64" => |w, i, _| {
            w.scc = w.read64(i.src[0], i.lit) != w.read64(i.src[1], i.lit);
            Flow::Next
        },
        "s_bitcmp0_b32" => |w, i, _| cmp(w, i, |a, b| a >> (b & 31) & 1 == 0),
        "s_bitcmp1_b32" => |w, i, _| cmp(w, i, |a, b| a >> (b & 31) & 1 == 1),
        "s_bitcmp0_b64" => |w, i, _| {
            let (a, b) = (w.read64(i.src[0], i.lit), w.read32(i.src[1], i.lit));
            w.scc = a >> (b & 63) & 1 == 0;
            Flow::Next
        },
        "s_bitcmp1_b64" => |w, i, _| {
            let (a, b) = (w.read64(i.src[0], i.lit), w.read32(i.src[1], i.lit));
            w.scc = a >> (b & 63) & 1 == 1;
            Flow::Next
        },
        _ => return None,
    })
}

#[inline]
fn cmp(w: &mut Wave, i: &Inst, f: fn(u32, u32) -> bool) -> Flow {
    w.scc = f(w.read32(i.src[0], i.lit), w.read32(i.src[1], i.lit));
    Flow::Next
}

// ---------------------------------------------------------------- SOPK

fn sopk(name: &str) -> Option<Exec> {
    Some(match name {
        "s_movk_i32" => |w, i, _| {
            w.write32(i.dst, i.simm16 as u32);
            Flow::Next
        },
        "s_cmovk_i32" => |w, i, _| {
            if w.scc {
                w.write32(i.dst, i.simm16 as u32);
            }
            Flow::Next
        },
        "s_cmpk_eq_i32" => |w, i, _| cmpk(w, i, true, |a, b| a == b),
        "s_cmpk_lg_i32" => |w, i, _| cmpk(w, i, true, |a, b| a != b),
        "s_cmpk_gt_i32" => |w, i, _| cmpk(w, i, true, |a, b| (a as i32) > (b as i32)),
        "s_cmpk_ge_i32" => |w, i, _| cmpk(w, i, true, |a, b| (a as i32) >= (b as i32)),
        "s_cmpk_lt_i32" => |w, i, _| cmpk(w, i, true, |a, b| (a as i32) < (b as i32)),
        "s_cmpk_le_i32" => |w, i, _| cmpk(w, i, true, |a, b| (a as i32) <= (b as i32)),
        "s_cmpk_eq_u32" => |w, i, _| cmpk(w, i, false, |a, b| a == b),
        "s_cmpk_lg_u32" => |w, i, _| cmpk(w, i, false, |a, b| a != b),
        "s_cmpk_gt_u32" => |w, i, _| cmpk(w, i, false, |a, b| a > b),
        "s_cmpk_ge_u32" => |w, i, _| cmpk(w, i, false, |a, b| a >= b),
        "s_cmpk_lt_u32" => |w, i, _| cmpk(w, i, false, |a, b| a < b),
        "s_cmpk_le_u32" => |w, i, _| cmpk(w, i, false, |a, b| a <= b),
        "s_addk_i32" => |w, i, _| {
            let d = w.read32(i.dst, None) as i32;
            let (r, o) = d.overflowing_add(i.simm16);
            w.write32(i.dst, r as u32);
            w.scc = o;
            Flow::Next
        },
        "s_mulk_i32" => |w, i, _| {
            let d = w.read32(i.dst, None) as i32;
            w.write32(i.dst, d.wrapping_mul(i.simm16) as u32);
            Flow::Next
        },
        "s_call_b64" => |w, i, _| {
            let next = w.pc.wrapping_add(4);
            w.write64(i.dst, next);
            Flow::Jump(next.wrapping_add((i64::from(i.simm16) * 4) as u64))
        },
        "s_getreg_b32" => |w, i, c| {
            let (id, off, size) = hwreg_fields(i.simm16);
            match hwreg_read(w, c, id) {
                Some(v) => {
                    let mask = field_mask(size);
                    w.write32(i.dst, (v >> off) & mask);
                    Flow::Next
                }
                None => unimplemented(i, "hardware register"),
            }
        },
        "s_setreg_b32" => |w, i, c| {
            let v = w.read32(i.dst, None);
            setreg(w, i, v, c.target)
        },
        "s_setreg_imm32_b32" => |w, i, c| setreg(w, i, i.lit.unwrap_or(0), c.target),
        _ => return None,
    })
}

/// SOPK compares: the SGPR in the SDST field against SIMM16
/// (sign-extended for the signed compares, zero-extended otherwise).
#[inline]
fn cmpk(w: &mut Wave, i: &Inst, signed: bool, f: fn(u32, u32) -> bool) -> Flow {
    let k = if signed {
        i.simm16 as u32
    } else {
        u32::from(i.simm16 as u16)
    };
    w.scc = f(w.read32(i.dst, None), k);
    Flow::Next
}

/// Hardware register ids (gfx9).
mod hwreg {
    pub const MODE: u32 = 1;
    pub const STATUS: u32 = 2;
    pub const TRAPSTS: u32 = 3;
    pub const HW_ID: u32 = 4;
    pub const IB_STS: u32 = 7;
    pub const SH_MEM_BASES: u32 = 15;
    /// gfx940 only.
    pub const XCC_ID: u32 = 20;
    /// gfx11: the flat scratch base the kernel sets up (low half).
    pub const FLAT_SCR_LO: u32 = 20;
    /// gfx11: the flat scratch base (high half).
    pub const FLAT_SCR_HI: u32 = 21;
    /// gfx11: a 20-bit cycle counter.
    pub const SHADER_CYCLES: u32 = 29;
}

/// MODE.GPR_IDX_EN: VGPR indexing (not modelled).
const MODE_GPR_IDX_EN: u32 = 1 << 27;

/// The fields of a `hwreg(id, offset, size)` operand: id in bits 5:0,
/// offset in 10:6, size - 1 in 15:11.
fn hwreg_fields(simm16: i32) -> (u32, u32, u32) {
    let s = simm16 as u32 & 0xffff;
    (s & 0x3f, (s >> 6) & 0x1f, ((s >> 11) & 0x1f) + 1)
}

/// The low `size` bits set (size 1..=32).
fn field_mask(size: u32) -> u32 {
    ((1u64 << size) - 1) as u32
}

/// The value of hardware register `id` as `s_getreg_b32` reads it; `None`
/// for one the model does not have.
fn hwreg_read(w: &Wave, c: &Ctx<'_, '_>, id: u32) -> Option<u32> {
    Some(match id {
        hwreg::MODE => w.mode,
        // SCC, EXECZ, VCCZ and VALID; no priority, privilege, trap
        // handler, halt or debug bits are ever set in the model.
        hwreg::STATUS => {
            u32::from(w.scc)
                | u32::from(w.exec() == 0) << 9
                | u32::from(w.vcc() == 0) << 10
                | 1 << 16
        }
        hwreg::TRAPSTS => w.trapsts,
        // WAVE_ID (3:0) and SIMD_ID (5:4) from the wave's index in its
        // workgroup; CU, SE, queue and pipe ids 0.
        hwreg::HW_ID if !c.target.is_gfx11() => (w.id & 3) << 4 | (w.id >> 2) & 0xf,
        // No outstanding memory operations: every counter is 0.
        hwreg::IB_STS => 0,
        hwreg::SH_MEM_BASES => (w.private_base_hi >> 16) | (w.shared_base_hi >> 16) << 16,
        hwreg::XCC_ID if c.target == Target::Gfx940 => 0,
        // gfx11: the clock in its low 20 bits (what `clock64` reads).
        hwreg::SHADER_CYCLES if c.target.is_gfx11() => (c.clock)() as u32 & 0xf_ffff,
        _ => return None,
    })
}

/// `s_setreg_b32` / `s_setreg_imm32_b32` of value `v`.
fn setreg(w: &mut Wave, i: &Inst, v: u32, target: Target) -> Flow {
    let (id, off, size) = hwreg_fields(i.simm16);
    let mask = field_mask(size) << off;
    let put = |old: u32| (old & !mask) | ((v << off) & mask);
    match id {
        hwreg::MODE => {
            let m = put(w.mode);
            if m & MODE_GPR_IDX_EN != 0 {
                return unimplemented(i, "MODE.GPR_IDX_EN");
            }
            w.mode = m;
        }
        hwreg::TRAPSTS => w.trapsts = put(w.trapsts),
        // A gfx11 kernel's prologue points flat scratch at its private
        // segment; each wave's private memory is the model's own, at no
        // address (SCRATCH instructions address it by offset).
        hwreg::FLAT_SCR_LO | hwreg::FLAT_SCR_HI if target.is_gfx11() => {}
        _ => return unimplemented(i, "hardware register"),
    }
    Flow::Next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_field_extracts() {
        // Offset 4, width 8.
        let d = 4 | 8 << 16;
        assert_eq!(bfe_u32(0x1234_5678, d), 0x67);
        assert_eq!(bfe_i32(0x0000_0f80, d), 0xffff_fff8);
        assert_eq!(bfe_i32(0x1234_5678, 0), 0);
        // Past bit 31: a plain shift (arithmetic for the signed form).
        assert_eq!(bfe_u32(0x8000_0000, 28 | 8 << 16), 8);
        assert_eq!(bfe_i32(0x8000_0000, 28 | 8 << 16), 0xffff_fff8);
        assert_eq!(bfe_u64(0xf0_0000_0000, 36 | 4 << 16), 0xf);
        assert_eq!(bfe_i64(0xf0_0000_0000, 36 | 4 << 16), u64::MAX);
    }

    #[test]
    fn hwreg_operand_fields() {
        // hwreg(HW_REG_MODE, 4, 4) = 1 | 4 << 6 | 3 << 11.
        assert_eq!(hwreg_fields(0x1901), (1, 4, 4));
        assert_eq!(field_mask(32), u32::MAX);
        assert_eq!(wqm(0x0100_0010), 0x0f00_00f0);
        assert_eq!(quadmask(0x0100_0010), 0b100_0010);
    }
}
