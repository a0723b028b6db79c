//! Integer and bit operations: 16, 32 and 64 bits.

use super::Ty::{F16, F32, U16, U32, U64};
use super::{
    carry, flag, run32, run32x, run64, unimplemented, vdst, write_sdst64, Env, Exec, Flow,
};
use crate::shader::isa::{Enc, Inst};
use crate::shader::wave::{reg, Wave, LANES};

const OPSEL: u8 = flag::OPSEL | flag::KEEP_HI;

/// The executor of an integer VALU mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    Some(match name {
        "v_nop" | "v_clrexcp" => |_, _, _| Flow::Next,
        "v_mov_b32" => |w, i, _| run32(w, i, [U32], U32, 0, |_, [a]| a),
        "v_mov_b64" => |w, i, _| run64(w, i, [U64], U64, 0, |_, [a]| a),
        "v_cndmask_b32" => |w, i, _| cndmask(w, i, F32),
        // gfx11's 16-bit moves and bit operations (VGPR halves).
        "v_mov_b16" => |w, i, _| run32(w, i, [U16], U16, 0, |_, [a]| a),
        "v_not_b16" => |w, i, _| run32(w, i, [U16], U16, 0, |_, [a]| !a),
        "v_and_b16" => |w, i, _| run32(w, i, [U16, U16], U16, 0, |_, [a, b]| a & b),
        "v_or_b16" => |w, i, _| run32(w, i, [U16, U16], U16, 0, |_, [a, b]| a | b),
        "v_xor_b16" => |w, i, _| run32(w, i, [U16, U16], U16, 0, |_, [a, b]| a ^ b),
        "v_cndmask_b16" => |w, i, _| cndmask(w, i, F16),
        "v_cvt_i32_i16" => |w, i, _| run32(w, i, [U16], U32, 0, |_, [a]| a as i16 as u32),
        "v_cvt_u32_u16" => |w, i, _| run32(w, i, [U16], U32, 0, |_, [a]| a & 0xffff),
        "v_not_b32" => |w, i, _| run32(w, i, [U32], U32, 0, |_, [a]| !a),
        "v_bfrev_b32" => |w, i, _| run32(w, i, [U32], U32, 0, |_, [a]| a.reverse_bits()),
        "v_ffbh_u32" => |w, i, _| {
            run32(w, i, [U32], U32, 0, |_, [a]| {
                if a == 0 {
                    !0
                } else {
                    a.leading_zeros()
                }
            })
        },
        "v_ffbl_b32" => |w, i, _| {
            run32(w, i, [U32], U32, 0, |_, [a]| {
                if a == 0 {
                    !0
                } else {
                    a.trailing_zeros()
                }
            })
        },
        "v_ffbh_i32" => |w, i, _| {
            run32(w, i, [U32], U32, 0, |_, [a]| {
                if a == 0 || a == !0 {
                    !0
                } else {
                    (a ^ ((a as i32 >> 31) as u32)).leading_zeros()
                }
            })
        },
        // Two sources, 32 bits.
        "v_add_u32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, flag::ICLAMP, |e, [a, b]| {
                let (r, o) = a.overflowing_add(b);
                if o && e.clamp {
                    u32::MAX
                } else {
                    r
                }
            })
        },
        "v_sub_u32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, flag::ICLAMP, |e, [a, b]| {
                sub_u32(e, a, b)
            })
        },
        "v_subrev_u32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, flag::ICLAMP, |e, [a, b]| {
                sub_u32(e, b, a)
            })
        },
        "v_add_i32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, flag::ICLAMP, |e, [a, b]| {
                let (a, b) = (a as i32, b as i32);
                (if e.clamp {
                    a.saturating_add(b)
                } else {
                    a.wrapping_add(b)
                }) as u32
            })
        },
        "v_sub_i32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, flag::ICLAMP, |e, [a, b]| {
                let (a, b) = (a as i32, b as i32);
                (if e.clamp {
                    a.saturating_sub(b)
                } else {
                    a.wrapping_sub(b)
                }) as u32
            })
        },
        "v_add_co_u32" => |w, i, _| carry(w, i, false, |a, b, _| a.overflowing_add(b)),
        "v_sub_co_u32" => |w, i, _| carry(w, i, false, |a, b, _| a.overflowing_sub(b)),
        "v_subrev_co_u32" => |w, i, _| carry(w, i, false, |a, b, _| b.overflowing_sub(a)),
        "v_addc_co_u32" => |w, i, _| {
            carry(w, i, true, |a, b, c| {
                let s = u64::from(a) + u64::from(b) + u64::from(c);
                (s as u32, s >> 32 != 0)
            })
        },
        "v_subb_co_u32" => |w, i, _| carry(w, i, true, subb),
        "v_subbrev_co_u32" => |w, i, _| carry(w, i, true, |a, b, c| subb(b, a, c)),
        "v_mul_lo_u32" => |w, i, _| run32(w, i, [U32, U32], U32, 0, |_, [a, b]| a.wrapping_mul(b)),
        "v_mul_hi_u32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, 0, |_, [a, b]| {
                ((u64::from(a) * u64::from(b)) >> 32) as u32
            })
        },
        "v_mul_hi_i32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, 0, |_, [a, b]| {
                ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32
            })
        },
        "v_mul_u32_u24" => |w, i, _| {
            run32(w, i, [U32, U32], U32, 0, |_, [a, b]| {
                (a & 0xff_ffff).wrapping_mul(b & 0xff_ffff)
            })
        },
        "v_mul_hi_u32_u24" => |w, i, _| {
            run32(w, i, [U32, U32], U32, 0, |_, [a, b]| {
                ((u64::from(a & 0xff_ffff) * u64::from(b & 0xff_ffff)) >> 32) as u32
            })
        },
        "v_mul_i32_i24" => |w, i, _| {
            run32(w, i, [U32, U32], U32, 0, |_, [a, b]| {
                (i24(a) * i24(b)) as u32
            })
        },
        "v_mul_hi_i32_i24" => |w, i, _| {
            run32(w, i, [U32, U32], U32, 0, |_, [a, b]| {
                ((i24(a) * i24(b)) >> 32) as u32
            })
        },
        "v_min_u32" => |w, i, _| run32(w, i, [U32, U32], U32, 0, |_, [a, b]| a.min(b)),
        "v_max_u32" => |w, i, _| run32(w, i, [U32, U32], U32, 0, |_, [a, b]| a.max(b)),
        "v_min_i32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, 0, |_, [a, b]| {
                (a as i32).min(b as i32) as u32
            })
        },
        "v_max_i32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, 0, |_, [a, b]| {
                (a as i32).max(b as i32) as u32
            })
        },
        "v_lshlrev_b32" => |w, i, _| run32(w, i, [U32, U32], U32, 0, |_, [a, b]| b << (a & 31)),
        "v_lshrrev_b32" => |w, i, _| run32(w, i, [U32, U32], U32, 0, |_, [a, b]| b >> (a & 31)),
        "v_ashrrev_i32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, 0, |_, [a, b]| {
                ((b as i32) >> (a & 31)) as u32
            })
        },
        "v_and_b32" => |w, i, _| run32(w, i, [U32, U32], U32, 0, |_, [a, b]| a & b),
        "v_or_b32" => |w, i, _| run32(w, i, [U32, U32], U32, 0, |_, [a, b]| a | b),
        "v_xor_b32" => |w, i, _| run32(w, i, [U32, U32], U32, 0, |_, [a, b]| a ^ b),
        "v_xnor_b32" => |w, i, _| run32(w, i, [U32, U32], U32, 0, |_, [a, b]| !(a ^ b)),
        "v_bfm_b32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, 0, |_, [a, b]| {
                (((1u64 << (a & 31)) - 1) as u32) << (b & 31)
            })
        },
        "v_bcnt_u32_b32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, 0, |_, [a, b]| {
                a.count_ones().wrapping_add(b)
            })
        },
        "v_mbcnt_lo_u32_b32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, 0, |e, [a, b]| {
                let below = (1u64 << e.lane) - 1;
                (a & below as u32).count_ones().wrapping_add(b)
            })
        },
        "v_mbcnt_hi_u32_b32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, 0, |e, [a, b]| {
                let below = (1u64 << e.lane) - 1;
                (a & (below >> 32) as u32).count_ones().wrapping_add(b)
            })
        },
        // Three sources, 32 bits.
        "v_add3_u32" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                a.wrapping_add(b).wrapping_add(c)
            })
        },
        "v_add_lshl_u32" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                a.wrapping_add(b) << (c & 31)
            })
        },
        "v_lshl_add_u32" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                (a << (b & 31)).wrapping_add(c)
            })
        },
        "v_lshl_or_b32" => {
            |w, i, _| run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| (a << (b & 31)) | c)
        }
        "v_and_or_b32" => |w, i, _| run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| (a & b) | c),
        "v_or3_b32" => |w, i, _| run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| a | b | c),
        "v_xad_u32" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                (a ^ b).wrapping_add(c)
            })
        },
        "v_mad_u32_u24" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                (a & 0xff_ffff).wrapping_mul(b & 0xff_ffff).wrapping_add(c)
            })
        },
        "v_mad_i32_i24" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                ((i24(a) * i24(b)) as u32).wrapping_add(c)
            })
        },
        "v_mad_u32_u16" => |w, i, _| {
            run32(w, i, [U16, U16, U32], U32, flag::OPSEL, |_, [a, b, c]| {
                (a & 0xffff).wrapping_mul(b & 0xffff).wrapping_add(c)
            })
        },
        "v_mad_i32_i16" => |w, i, _| {
            run32(w, i, [U16, U16, U32], U32, flag::OPSEL, |_, [a, b, c]| {
                (i32::from(a as i16) * i32::from(b as i16)).wrapping_add(c as i32) as u32
            })
        },
        "v_bfe_u32" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                ((a >> (b & 31)) as u64 & ((1u64 << (c & 31)) - 1)) as u32
            })
        },
        "v_bfe_i32" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                let width = c & 31;
                if width == 0 {
                    0
                } else {
                    let v = a >> (b & 31);
                    (((v << (32 - width)) as i32) >> (32 - width)) as u32
                }
            })
        },
        "v_bfi_b32" => |w, i, _| run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| (a & b) | (!a & c)),
        "v_alignbit_b32" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                ((u64::from(a) << 32 | u64::from(b)) >> (c & 31)) as u32
            })
        },
        "v_alignbyte_b32" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                ((u64::from(a) << 32 | u64::from(b)) >> (8 * (c & 3))) as u32
            })
        },
        "v_perm_b32" => |w, i, _| run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| perm(a, b, c)),
        "v_min3_u32" => |w, i, _| run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| a.min(b).min(c)),
        "v_max3_u32" => |w, i, _| run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| a.max(b).max(c)),
        "v_med3_u32" => |w, i, _| run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| med3(a, b, c)),
        "v_min3_i32" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                (a as i32).min(b as i32).min(c as i32) as u32
            })
        },
        "v_max3_i32" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                (a as i32).max(b as i32).max(c as i32) as u32
            })
        },
        "v_med3_i32" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                med3(a as i32, b as i32, c as i32) as u32
            })
        },
        "v_sad_u8" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                sad8(a, b).wrapping_add(c)
            })
        },
        "v_sad_hi_u8" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                (sad8(a, b) << 16).wrapping_add(c)
            })
        },
        "v_sad_u16" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                let d = |s: u32| (a >> s & 0xffff).abs_diff(b >> s & 0xffff);
                (d(0) + d(16)).wrapping_add(c)
            })
        },
        "v_msad_u8" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                let d = |k: u32| {
                    let (x, y) = (a >> (8 * k) & 0xff, b >> (8 * k) & 0xff);
                    if y == 0 {
                        0
                    } else {
                        x.abs_diff(y)
                    }
                };
                (d(0) + d(1) + d(2) + d(3)).wrapping_add(c)
            })
        },
        "v_dot2c_i32_i16" => |w, i, _| {
            acc32(w, i, |a, b| {
                let p = |s: u32| i32::from((a >> s) as i16) * i32::from((b >> s) as i16);
                p(0).wrapping_add(p(16))
            })
        },
        "v_dot4c_i32_i8" => |w, i, _| {
            acc32(w, i, |a, b| {
                (0..4).fold(0i32, |s, k| {
                    s.wrapping_add(
                        i32::from((a >> (8 * k)) as i8) * i32::from((b >> (8 * k)) as i8),
                    )
                })
            })
        },
        "v_dot8c_i32_i4" => |w, i, _| {
            acc32(w, i, |a, b| {
                (0..8).fold(0i32, |s, k| {
                    let x = ((a >> (4 * k)) << 28) as i32 >> 28;
                    let y = ((b >> (4 * k)) << 28) as i32 >> 28;
                    s.wrapping_add(x * y)
                })
            })
        },
        "v_sad_u32" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                a.abs_diff(b).wrapping_add(c)
            })
        },
        "v_lerp_u8" => |w, i, _| {
            run32(w, i, [U32; 3], U32, 0, |_, [a, b, c]| {
                let mut r = 0;
                for k in 0..4 {
                    let s = 8 * k;
                    let v = ((a >> s & 0xff) + (b >> s & 0xff) + (c >> s & 1)) >> 1;
                    r |= v << s;
                }
                r
            })
        },
        "v_cvt_pk_u16_u32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, 0, |_, [a, b]| {
                a.min(0xffff) | b.min(0xffff) << 16
            })
        },
        "v_cvt_pk_i16_i32" => |w, i, _| {
            run32(w, i, [U32, U32], U32, 0, |_, [a, b]| {
                let s = |v: u32| (v as i32).clamp(-0x8000, 0x7fff) as u32 & 0xffff;
                s(a) | s(b) << 16
            })
        },
        "v_sat_pk_u8_i16" => |w, i, _| {
            run32(w, i, [U32], U16, 0, |_, [a]| {
                let s = |v: u32| (v as u16 as i16).clamp(0, 255) as u32;
                s(a) | s(a >> 16) << 8
            })
        },
        // 16 bits.
        "v_add_u16" => |w, i, _| {
            run32(w, i, [U16, U16], U16, flag::ICLAMP, |e, [a, b]| {
                let s = (a & 0xffff) + (b & 0xffff);
                if e.clamp {
                    s.min(0xffff)
                } else {
                    s
                }
            })
        },
        "v_sub_u16" => |w, i, _| {
            run32(w, i, [U16, U16], U16, flag::ICLAMP, |e, [a, b]| {
                sub_u16(e, a, b)
            })
        },
        "v_subrev_u16" => |w, i, _| {
            run32(w, i, [U16, U16], U16, flag::ICLAMP, |e, [a, b]| {
                sub_u16(e, b, a)
            })
        },
        "v_add_i16" => |w, i, _| {
            run32(w, i, [U16, U16], U16, OPSEL | flag::ICLAMP, |e, [a, b]| {
                let (a, b) = (a as i16, b as i16);
                (if e.clamp {
                    a.saturating_add(b)
                } else {
                    a.wrapping_add(b)
                }) as u16 as u32
            })
        },
        "v_sub_i16" => |w, i, _| {
            run32(w, i, [U16, U16], U16, OPSEL | flag::ICLAMP, |e, [a, b]| {
                let (a, b) = (a as i16, b as i16);
                (if e.clamp {
                    a.saturating_sub(b)
                } else {
                    a.wrapping_sub(b)
                }) as u16 as u32
            })
        },
        "v_mul_lo_u16" => |w, i, _| {
            run32(w, i, [U16, U16], U16, 0, |_, [a, b]| {
                (a as u16).wrapping_mul(b as u16).into()
            })
        },
        "v_lshlrev_b16" => |w, i, _| {
            run32(w, i, [U16, U16], U16, 0, |_, [a, b]| {
                ((b as u16) << (a & 15)).into()
            })
        },
        "v_lshrrev_b16" => |w, i, _| {
            run32(w, i, [U16, U16], U16, 0, |_, [a, b]| {
                ((b as u16) >> (a & 15)).into()
            })
        },
        "v_ashrrev_i16" => |w, i, _| {
            run32(w, i, [U16, U16], U16, 0, |_, [a, b]| {
                ((b as i16) >> (a & 15)) as u16 as u32
            })
        },
        "v_min_u16" => |w, i, _| {
            run32(w, i, [U16, U16], U16, 0, |_, [a, b]| {
                (a as u16).min(b as u16).into()
            })
        },
        "v_max_u16" => |w, i, _| {
            run32(w, i, [U16, U16], U16, 0, |_, [a, b]| {
                (a as u16).max(b as u16).into()
            })
        },
        "v_min_i16" => |w, i, _| {
            run32(w, i, [U16, U16], U16, 0, |_, [a, b]| {
                (a as i16).min(b as i16) as u16 as u32
            })
        },
        "v_max_i16" => |w, i, _| {
            run32(w, i, [U16, U16], U16, 0, |_, [a, b]| {
                (a as i16).max(b as i16) as u16 as u32
            })
        },
        "v_mad_u16" => |w, i, _| {
            run32(w, i, [U16; 3], U16, OPSEL | flag::ICLAMP, |e, [a, b, c]| {
                mad_u16(e, a, b, c)
            })
        },
        "v_mad_i16" => |w, i, _| {
            run32(w, i, [U16; 3], U16, OPSEL | flag::ICLAMP, |e, [a, b, c]| {
                mad_i16(e, a, b, c)
            })
        },
        "v_mad_legacy_u16" => |w, i, _| {
            run32(w, i, [U16; 3], U16, flag::ICLAMP, |e, [a, b, c]| {
                mad_u16(e, a, b, c)
            })
        },
        "v_mad_legacy_i16" => |w, i, _| {
            run32(w, i, [U16; 3], U16, flag::ICLAMP, |e, [a, b, c]| {
                mad_i16(e, a, b, c)
            })
        },
        "v_min3_u16" => |w, i, _| {
            run32(w, i, [U16; 3], U16, OPSEL, |_, [a, b, c]| {
                (a as u16).min(b as u16).min(c as u16).into()
            })
        },
        "v_max3_u16" => |w, i, _| {
            run32(w, i, [U16; 3], U16, OPSEL, |_, [a, b, c]| {
                (a as u16).max(b as u16).max(c as u16).into()
            })
        },
        "v_med3_u16" => |w, i, _| {
            run32(w, i, [U16; 3], U16, OPSEL, |_, [a, b, c]| {
                med3(a as u16, b as u16, c as u16).into()
            })
        },
        "v_min3_i16" => |w, i, _| {
            run32(w, i, [U16; 3], U16, OPSEL, |_, [a, b, c]| {
                (a as i16).min(b as i16).min(c as i16) as u16 as u32
            })
        },
        "v_max3_i16" => |w, i, _| {
            run32(w, i, [U16; 3], U16, OPSEL, |_, [a, b, c]| {
                (a as i16).max(b as i16).max(c as i16) as u16 as u32
            })
        },
        "v_med3_i16" => |w, i, _| {
            run32(w, i, [U16; 3], U16, OPSEL, |_, [a, b, c]| {
                med3(a as i16, b as i16, c as i16) as u16 as u32
            })
        },
        // 64 bits.
        "v_lshlrev_b64" => |w, i, _| run64(w, i, [U32, U64], U64, 0, |_, [a, b]| b << (a & 63)),
        "v_lshrrev_b64" => |w, i, _| run64(w, i, [U32, U64], U64, 0, |_, [a, b]| b >> (a & 63)),
        "v_ashrrev_i64" => |w, i, _| {
            run64(w, i, [U32, U64], U64, 0, |_, [a, b]| {
                ((b as i64) >> (a & 63)) as u64
            })
        },
        "v_lshl_add_u64" => |w, i, _| {
            run64(w, i, [U64, U32, U64], U64, 0, |_, [a, b, c]| {
                (a << (b & 7)).wrapping_add(c)
            })
        },
        "v_mad_u64_u32" => |w, i, _| mad64(w, i, false),
        "v_mad_i64_i32" => |w, i, _| mad64(w, i, true),
        "v_swap_b32" => |w, i, _| swap(w, i),
        _ => return None,
    })
}

/// The integer `v_dot*c` forms: `D = D + dot(S0, S1)` (the destination
/// is the accumulator).
fn acc32(w: &mut Wave, i: &Inst, dot: fn(u32, u32) -> i32) -> Flow {
    if i.enc == Enc::Vop3 && (i.mods.abs | i.mods.neg) != 0 {
        return unimplemented(i, "modifiers");
    }
    let mut j = *i;
    j.src[2] = i.dst;
    run32(w, &j, [U32; 3], U32, 0, |_, [a, b, c]| {
        (c as i32).wrapping_add(dot(a, b)) as u32
    })
}

#[inline]
fn i24(v: u32) -> i64 {
    i64::from(((v << 8) as i32) >> 8)
}

#[inline]
fn sub_u32(e: Env, a: u32, b: u32) -> u32 {
    if e.clamp {
        a.saturating_sub(b)
    } else {
        a.wrapping_sub(b)
    }
}

#[inline]
fn sub_u16(e: Env, a: u32, b: u32) -> u32 {
    let (a, b) = (a as u16, b as u16);
    if e.clamp {
        a.saturating_sub(b).into()
    } else {
        a.wrapping_sub(b).into()
    }
}

#[inline]
fn subb(a: u32, b: u32, c: bool) -> (u32, bool) {
    let d = i64::from(a) - i64::from(b) - i64::from(c);
    (d as u32, d < 0)
}

#[inline]
fn mad_u16(e: Env, a: u32, b: u32, c: u32) -> u32 {
    let v = (a & 0xffff) * (b & 0xffff) + (c & 0xffff);
    if e.clamp {
        v.min(0xffff)
    } else {
        v & 0xffff
    }
}

#[inline]
fn mad_i16(e: Env, a: u32, b: u32, c: u32) -> u32 {
    let v = i32::from(a as i16) * i32::from(b as i16) + i32::from(c as i16);
    if e.clamp {
        v.clamp(-0x8000, 0x7fff) as u32 & 0xffff
    } else {
        v as u32 & 0xffff
    }
}

#[inline]
fn med3<T: Ord + Copy>(a: T, b: T, c: T) -> T {
    a.min(b).max(a.max(b).min(c))
}

#[inline]
fn sad8(a: u32, b: u32) -> u32 {
    (0..4)
        .map(|k| (a >> (8 * k) & 0xff).abs_diff(b >> (8 * k) & 0xff))
        .sum()
}

/// `v_perm_b32`: each result byte picks a byte of {S0, S1} (or a sign
/// fill or a constant) by the matching selector byte of S2.
fn perm(a: u32, b: u32, c: u32) -> u32 {
    let data = u64::from(a) << 32 | u64::from(b);
    let mut r = 0;
    for k in 0..4 {
        let sel = c >> (8 * k) & 0xff;
        let byte = match sel {
            0..=7 => (data >> (8 * sel) & 0xff) as u32,
            8..=11 => {
                let bit = 16 * (sel - 8) + 15;
                if data >> bit & 1 != 0 {
                    0xff
                } else {
                    0
                }
            }
            12 => 0,
            _ => 0xff,
        };
        r |= byte << (8 * k);
    }
    r
}

/// `v_cndmask_b32` (`t` F32) and gfx11's `v_cndmask_b16` (F16): source 1
/// where the lane's mask bit (VCC, or the VOP3 SGPR pair in source 2) is
/// set, else source 0. Abs/neg are float modifiers on the moved bits.
fn cndmask(w: &mut Wave, i: &Inst, t: super::Ty) -> Flow {
    let mask = if i.enc == Enc::Vop3 {
        if i.src[2] >= reg::VGPR0
            || i.src[2] == reg::LITERAL
            || i.mods.abs & 4 != 0
            || i.mods.neg & 4 != 0
        {
            return unimplemented(i, "mask not an SGPR pair");
        }
        w.read64(i.src[2], None)
    } else {
        w.vcc()
    };
    let (clamp, omod) = super::out_mods(i);
    if clamp || omod != 0 {
        return unimplemented(i, "clamp/omod");
    }
    run32x(w, i, [t, t], t, flag::NOFLUSH, mask, |e, [a, b]| {
        if e.extra >> e.lane & 1 != 0 {
            b
        } else {
            a
        }
    })
}

/// `v_mad_u64_u32` / `v_mad_i64_i32` (VOP3b): the 64-bit `S0 * S1 + S2`
/// and its carry (unsigned) or overflow (signed) in the scalar
/// destination.
fn mad64(w: &mut Wave, i: &Inst, signed: bool) -> Flow {
    if i.mods.neg != 0 || i.mods.omod != 0 || i.mods.clamp {
        return unimplemented(i, "modifiers");
    }
    // A literal is a gfx11 VOP3 operand (the decoder read it).
    let bad_literal = i.src.contains(&reg::LITERAL) && i.lit.is_none();
    if bad_literal || i.src.iter().any(|&c| super::reserved(c)) {
        return unimplemented(i, "source operand");
    }
    let mut over = 0u64;
    let exec = w.exec();
    let (a, b) = (fetch_u32(w, i, 0), fetch_u32(w, i, 1));
    let c: [u64; LANES] = {
        let mut m = [0u64; LANES];
        super::fetch64(w, i, 2, U64, flag::VOP3B, &mut m);
        m
    };
    let mut r = [0u64; LANES];
    for l in 0..LANES {
        let (v, o) = if signed {
            let p = i128::from(a[l] as i32) * i128::from(b[l] as i32) + i128::from(c[l] as i64);
            (p as u64, p != i128::from(p as i64))
        } else {
            let p = u128::from(a[l]) * u128::from(b[l]) + u128::from(c[l]);
            (p as u64, p >> 64 != 0)
        };
        r[l] = v;
        over |= u64::from(o) << l;
    }
    super::vstore64(w, vdst(i), exec, &r);
    write_sdst64(w, i.sdst, over & exec);
    Flow::Next
}

/// Source `n` of `i` as a plain 32-bit value (no modifiers) for every
/// lane.
fn fetch_u32(w: &Wave, i: &Inst, n: usize) -> [u32; LANES] {
    let code = i.src[n];
    if code >= reg::VGPR0 {
        *super::vreg(w, usize::from(code - reg::VGPR0))
    } else {
        [w.read32(code, i.lit); LANES]
    }
}

/// `v_swap_b32`: exchanges the destination and source VGPRs in the
/// active lanes.
fn swap(w: &mut Wave, i: &Inst) -> Flow {
    if i.src[0] < reg::VGPR0 || i.ext != super::Ext::None {
        return unimplemented(i, "operands");
    }
    let exec = w.exec();
    let (d, s) = (vdst(i), usize::from(i.src[0] - reg::VGPR0));
    let (vd, vs) = (*super::vreg(w, d), *super::vreg(w, s));
    super::vstore(w, d, exec, &vs);
    super::vstore(w, s, exec, &vd);
    Flow::Next
}
