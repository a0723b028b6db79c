//! The gfx11 (RDNA3) decoder: instruction words to the same [`Inst`]
//! values as gfx9's, so the executors of a mnemonic serve both.
//!
//! What gfx11 shares with gfx9: the SOP*, VOP1/VOP2/VOPC words and the
//! VOP3/VOP3P field layouts (under other prefixes and opcode numbers),
//! and the DS and FLAT operand words. What it moves:
//! - scalar operand codes: `null` is 124 and M0 125 (gfx9's M0 is 124).
//!   Decoded codes are gfx9's: M0 becomes 124 and `null` becomes
//!   [`NULL`] (the inline constant 0: reads give 0, writes drop);
//! - the SMEM, DS, FLAT and MUBUF words and the FLAT "no SADDR" code:
//!   the decoder moves those fields to where gfx9 keeps them in
//!   [`Inst::w`], which is what the memory executors read;
//! - VOP3 and VOP3P take a literal constant (a third word); VOP1/VOP2/
//!   VOPC and VOP3 take DPP16 (source 250) or DPP8 (233/234) words; there
//!   is no SDWA;
//! - `v_cmpx_*` writes EXEC only: the decoder gives it no scalar
//!   destination;
//! - VOPD holds two VALU operations: X in the value's own fields, Y in
//!   [`Inst::y`], one literal shared.

use super::decode::{Dual, Enc, Ext, Illegal, Inst, Mods, DPP, LITERAL};
use super::Target;

/// The decoded code of gfx11's `null` operand: the inline constant 0.
pub const NULL: u16 = 128;

/// Source code of a DPP8 word.
const DPP8: u16 = 233;
/// Source code of a DPP8 word with fetch-inactive.
const DPP8_FI: u16 = 234;

/// The family of a gfx11 instruction whose first word is `w`.
pub fn enc_of(w: u32) -> Enc {
    if w >> 30 != 0b11 {
        // VOP1/VOP2/VOPC and the SOP families are laid out as on gfx9.
        return Enc::of(w);
    }
    match w >> 26 {
        0x3d => Enc::Smem,
        0x35 => Enc::Vop3,
        0x32 => Enc::Vopd,
        0x33 if w >> 24 == 0xcc => Enc::Vop3p,
        0x36 => Enc::Ds,
        0x37 => match (w >> 16) & 3 {
            0 => Enc::Flat,
            1 => Enc::Scratch,
            2 => Enc::Global,
            _ => Enc::Other,
        },
        0x38 => Enc::Mubuf,
        // VINTERP, LDSDIR, MTBUF, MIMG, EXP.
        _ => Enc::Other,
    }
}

/// The opcode field of gfx11 first word `w` in family `enc`.
pub fn opcode(enc: Enc, w: u32) -> u16 {
    let op = match enc {
        Enc::Smem | Enc::Ds | Enc::Mubuf => (w >> 18) & 0xff,
        Enc::Vop3 => (w >> 16) & 0x3ff,
        Enc::Vop3p => (w >> 16) & 0x7f,
        Enc::Flat | Enc::Global | Enc::Scratch => (w >> 18) & 0x7f,
        // X's opcode; Y's is in 21:17.
        Enc::Vopd => (w >> 22) & 0xf,
        _ => return enc.opcode(w),
    };
    op as u16
}

/// A gfx11 scalar operand code as the executors know it (gfx9's).
fn scalar(code: u16) -> u16 {
    match code {
        124 => NULL,
        125 => 124,
        c => c,
    }
}

/// A gfx11 source operand code (9 bits) as the executors know it.
fn source(code: u16) -> u16 {
    if code < 256 {
        scalar(code)
    } else {
        code
    }
}

/// Whether the VALU instruction `name` writes an SGPR through its vdst
/// field (compares in VOP3, lane reads).
fn sgpr_vdst(name: &str) -> bool {
    name.starts_with("v_cmp") || matches!(name, "v_readlane_b32" | "v_readfirstlane_b32")
}

/// The mnemonic of VOPD Y opcode `op`.
pub fn vopd_y(op: u16) -> Option<&'static str> {
    super::tables::gfx1100::VOPDY
        .get(usize::from(op))
        .copied()
        .filter(|n| !n.is_empty())
}

/// Decodes the gfx11 instruction whose words start at `words[0]`.
pub fn decode(words: &[u32; 3]) -> Result<Inst, Illegal> {
    let w0 = words[0];
    let enc = enc_of(w0);
    let op = opcode(enc, w0);
    let illegal = Illegal { enc, op, word: w0 };
    let name = Target::Gfx1100.mnemonic(enc, op).ok_or(illegal)?;
    let mut i = Inst {
        enc,
        op,
        name,
        len: 4,
        w: [w0, 0],
        lit: None,
        dst: 0,
        sdst: 0,
        src: [0; 3],
        simm16: 0,
        mods: Mods::default(),
        ext: Ext::None,
        y: None,
    };
    let f = |v: u32, lo: u32, n: u32| ((v >> lo) & ((1 << n) - 1)) as u16;
    let w1 = words[1];
    match enc {
        Enc::Sop2 | Enc::Sopk | Enc::Sop1 | Enc::Sopc | Enc::Sopp => {
            i.dst = scalar(f(w0, 16, 7));
            i.simm16 = i32::from(w0 as u16 as i16);
            i.src = match enc {
                Enc::Sop2 | Enc::Sopc => [scalar(f(w0, 0, 8)), scalar(f(w0, 8, 8)), 0],
                Enc::Sop1 => [scalar(f(w0, 0, 8)), 0, 0],
                _ => [0; 3],
            };
            if matches!(enc, Enc::Sopc | Enc::Sopp) {
                i.dst = 0;
            }
            if name == "s_setreg_imm32_b32" {
                i.lit = Some(w1);
                i.len = 8;
            }
        }
        Enc::Vop2 => {
            i.dst = 256 + f(w0, 17, 8);
            i.src = [source(f(w0, 0, 9)), 256 + f(w0, 9, 8), 0];
            if matches!(
                name,
                "v_fmamk_f32" | "v_fmaak_f32" | "v_fmamk_f16" | "v_fmaak_f16"
            ) {
                i.lit = Some(w1);
                i.len = 8;
            }
        }
        Enc::Vop1 => {
            i.dst = 256 + f(w0, 17, 8);
            if sgpr_vdst(name) {
                i.dst = scalar(f(w0, 17, 8));
            }
            i.src = [source(f(w0, 0, 9)), 0, 0];
        }
        Enc::Vopc => {
            i.dst = if name.starts_with("v_cmpx_") {
                NULL
            } else {
                106
            };
            i.src = [source(f(w0, 0, 9)), 256 + f(w0, 9, 8), 0];
        }
        Enc::Vop3 | Enc::Vop3p => {
            i.len = 8;
            i.w[1] = w1;
            i.dst = 256 + f(w0, 0, 8);
            if enc == Enc::Vop3 && sgpr_vdst(name) {
                i.dst = 256 + scalar(f(w0, 0, 8));
                if name.starts_with("v_cmpx_") {
                    i.dst = 256 + NULL;
                }
            }
            i.src = [
                source(f(w1, 0, 9)),
                source(f(w1, 9, 9)),
                source(f(w1, 18, 9)),
            ];
            i.mods.neg = f(w1, 29, 3) as u8;
            i.mods.abs = f(w0, 8, 3) as u8;
            i.mods.clamp = w0 & (1 << 15) != 0;
            if enc == Enc::Vop3 {
                i.sdst = scalar(f(w0, 8, 7));
                i.mods.opsel = f(w0, 11, 4) as u8;
                i.mods.omod = f(w1, 27, 2) as u8;
            } else {
                i.mods.opsel = f(w0, 11, 3) as u8;
                i.mods.opsel_hi = (f(w1, 27, 2) | f(w0, 14, 1) << 2) as u8;
            }
        }
        Enc::Smem => {
            // To gfx9's layout: SBASE, SDATA, GLC in 16, IMM (17) always,
            // SOE (14) when SOFFSET is not null; the offset and SOFFSET
            // stay in the second word.
            let soffset = f(w1, 25, 7);
            let soe = soffset != 124;
            i.len = 8;
            i.w = [
                0xc000_0000
                    | u32::from(op) << 18
                    | 1 << 17
                    | (w0 >> 14 & 1) << 16
                    | u32::from(soe) << 14
                    | u32::from(scalar(f(w0, 6, 7))) << 6
                    | w0 & 0x3f,
                u32::from(scalar(soffset) & 0x7f) << 25 | w1 & 0x1f_ffff,
            ];
        }
        Enc::Ds => {
            // To gfx9's layout: GDS in 16, the opcode in 24:17.
            i.len = 8;
            i.w = [
                0xd800_0000 | u32::from(op) << 17 | (w0 >> 17 & 1) << 16 | w0 & 0xffff,
                w1,
            ];
        }
        Enc::Flat | Enc::Global | Enc::Scratch => {
            // To gfx9's layout: SLC in 17, GLC in 16, the segment in
            // 15:14, SVE in 13; no SADDR is 0x7f.
            let seg = w0 >> 16 & 3;
            let saddr = match f(w1, 16, 7) {
                124 => 0x7f,
                s => scalar(s),
            };
            i.len = 8;
            i.w = [
                0xdc00_0000
                    | u32::from(op) << 18
                    | (w0 >> 15 & 1) << 17
                    | (w0 >> 14 & 1) << 16
                    | seg << 14
                    | (w1 >> 23 & 1) << 13
                    | w0 & 0x1fff,
                w1 & 0xff00_ffff | u32::from(saddr) << 16,
            ];
        }
        Enc::Mubuf => {
            // To gfx9's layout: OFFEN (second word's 22) in 12, IDXEN
            // (23) in 13, GLC stays in 14, SLC (12) in 17, TFE (21) in
            // the second word's 23; SOFFSET as the executors know it.
            i.len = 8;
            i.w = [
                0xe000_0000
                    | u32::from(op & 0x7f) << 18
                    | (w0 >> 12 & 1) << 17
                    | (w0 >> 14 & 1) << 14
                    | (w1 >> 23 & 1) << 13
                    | (w1 >> 22 & 1) << 12
                    | w0 & 0xfff,
                u32::from(scalar(f(w1, 24, 8)) & 0xff) << 24
                    | (w1 >> 21 & 1) << 23
                    | w1 & 0x1f_ffff,
            ];
        }
        Enc::Vopd => {
            // X: src0 8:0, vsrc1 16:9, vdst in the second word's 31:24.
            // Y: src0, vsrc1 in the second word's 8:0 and 16:9, vdst's
            // upper bits in 23:17 (its low bit is the opposite of X's).
            let opy = f(w0, 17, 5);
            let yname = vopd_y(opy).ok_or(illegal)?;
            i.len = 8;
            i.w[1] = w1;
            let vdstx = f(w1, 24, 8);
            i.dst = 256 + vdstx;
            i.src = [source(f(w0, 0, 9)), 256 + f(w0, 9, 8), 0];
            i.y = Some(Dual {
                op: opy,
                name: yname,
                dst: 256 + ((f(w1, 17, 7) << 1) | ((vdstx & 1) ^ 1)),
                src: [source(f(w1, 0, 9)), 256 + f(w1, 9, 8)],
            });
        }
        Enc::Other => return Err(illegal),
    }
    // Instructions with 16-bit operands address VGPR halves.
    let valu = matches!(enc, Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3);
    i.mods.t16 = valu && name.contains("16");
    // A literal, DPP16 or DPP8 word follows the instruction's own words.
    let next = usize::from(i.len / 4);
    let nsrc = match enc {
        Enc::Sop2 | Enc::Sopc => 2,
        // `s_getpc_b64` has no source; `s_sendmsg_rtn_*`'s is a message
        // id, not an operand code.
        Enc::Sop1
            if !matches!(
                name,
                "s_getpc_b64" | "s_sendmsg_rtn_b32" | "s_sendmsg_rtn_b64"
            ) =>
        {
            1
        }
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc => 1,
        Enc::Vop3 | Enc::Vop3p => 3,
        _ => 0,
    };
    let raw0 = match enc {
        Enc::Vop3 | Enc::Vop3p => f(w1, 0, 9),
        _ => f(w0, 0, 9),
    };
    let vector = matches!(enc, Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3);
    if vector && matches!(raw0, DPP | DPP8 | DPP8_FI) {
        if next >= 3 {
            return Err(illegal);
        }
        let x = words[next];
        i.len += 4;
        i.src[0] = 256 + (x & 0xff) as u16;
        i.ext = if raw0 == DPP {
            Ext::Dpp(x)
        } else {
            Ext::Dpp8(x, raw0 == DPP8_FI)
        };
    } else if let Some(y) = i.y {
        // One literal serves both operations: a source, or the K of
        // `fmaak`/`fmamk`.
        let k = |n: &str| n.starts_with("v_dual_fmaak") || n.starts_with("v_dual_fmamk");
        if i.src[0] == LITERAL || y.src[0] == LITERAL || k(name) || k(y.name) {
            i.lit = Some(words[2]);
            i.len = 12;
        }
    } else if i.lit.is_none() && i.src[..nsrc].contains(&LITERAL) {
        if next >= 3 {
            return Err(illegal);
        }
        i.lit = Some(words[next]);
        i.len += 4;
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_move_to_the_gfx9_layout() {
        // s_load_b64 s[8:9], s[8:9], 0x10
        let i = decode(&[0xf404_0204, 0xf800_0010, 0]).unwrap();
        assert_eq!((i.enc, i.name, i.len), (Enc::Smem, "s_load_b64", 8));
        assert_eq!(i.w, [0xc006_0204, 0x10]);
        // global_load_b32 v6, v[8:9], off
        let i = decode(&[0xdc52_0000, 0x067c_0408, 0]).unwrap();
        assert_eq!((i.enc, i.name), (Enc::Global, "global_load_b32"));
        assert_eq!(i.w, [0xdc50_8000, 0x067f_0408]);
        // v_add_co_u32 v6, s0, v2, v4 (VOP3 with SDST)
        let i = decode(&[0xd700_0006, 0x0002_0902, 0]).unwrap();
        assert_eq!(
            (i.name, i.dst, i.sdst, i.src[0], i.src[1]),
            ("v_add_co_u32", 262, 0, 258, 260)
        );
        // s_mov_b32 m0, null
        let i = decode(&[0xbefd_007c, 0, 0]).unwrap();
        assert_eq!((i.name, i.dst, i.src[0]), ("s_mov_b32", 124, NULL));
        // v_mov_b32 v1, 0x12345678
        let i = decode(&[0x7e02_02ff, 0x1234_5678, 0]).unwrap();
        assert_eq!((i.lit, i.len), (Some(0x1234_5678), 8));
        // ds_store_b32 v1, v2 offset:16: the opcode to 24:17.
        let i = decode(&[0xd834_0010, 0x0000_0201, 0]).unwrap();
        assert_eq!((i.name, i.w), ("ds_store_b32", [0xd81a_0010, 0x201]));
        // scratch_load_b32 v3, v4, off offset:-8: SVE to bit 13.
        let i = decode(&[0xdc51_1ff8, 0x03fc_0004, 0]).unwrap();
        assert_eq!((i.enc, i.w), (Enc::Scratch, [0xdc50_7ff8, 0x037f_0004]));
        // s_load_b32 s3, s[4:5], s6 offset:0x20: SOFFSET with SOE.
        let i = decode(&[0xf400_00c2, 0x0c00_0020, 0]).unwrap();
        assert_eq!(i.w, [0xc002_40c2, 0x0c00_0020]);
        // v_cmpx_gt_u32_e64 v1, v2 writes EXEC only.
        let i = decode(&[0xd4cc_007e, 0x0002_0501, 0]).unwrap();
        assert_eq!((i.name, i.dst), ("v_cmpx_gt_u32", 256 + NULL));
        // v_readfirstlane_b32 m0, v1
        let i = decode(&[0x7efa_0501, 0, 0]).unwrap();
        assert_eq!((i.name, i.dst), ("v_readfirstlane_b32", 124));
        // v_add_co_u32 v1, vcc_lo, 0x12345, v2: a VOP3 literal.
        let i = decode(&[0xd700_6a01, 0x0002_04ff, 0x0001_2345]).unwrap();
        assert_eq!(
            (i.len, i.lit, i.sdst, i.src[0]),
            (12, Some(0x12345), 106, LITERAL)
        );
        // v_dual_add_f32 v6, v2, v4 :: v_dual_add_nc_u32 v7, v3, v5
        let i = decode(&[0xc920_0902, 0x0606_0b03, 0]).unwrap();
        let y = i.y.unwrap();
        assert_eq!(
            (i.name, i.len, i.dst, i.src[..2].to_vec()),
            ("v_dual_add_f32", 8, 262, vec![258, 260])
        );
        assert_eq!(
            (y.name, y.dst, y.src),
            ("v_dual_add_nc_u32", 263, [259, 261])
        );
        // VINTERP is not decoded: an illegal instruction naming no
        // opcode table.
        let e = decode(&[0xcd00_0000, 0, 0]).unwrap_err();
        assert_eq!(e.enc, Enc::Other);
    }
}
