//! Instruction words to [`Inst`] values.
//!
//! The family is told by the first word's top bits (here the gfx9
//! encodings; gfx11 words go to their own decoder, `super::gfx11`), the
//! opcode by the family's opcode field, the mnemonic by the target's
//! table. A literal constant (source code 255 in a SALU or 32-bit VALU
//! encoding, or the `madmk`/`madak`/`fmamk`/`fmaak` forms) and the SDWA
//! or DPP word (source 0 = 249/250 in VOP1/VOP2/VOPC) are read here, so an
//! executor finds every operand in the value.

use super::Target;

/// An encoding family of the gfx9 and gfx11 ISAs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Enc {
    /// Scalar ALU, two sources.
    Sop2,
    /// Scalar ALU with a 16-bit immediate.
    Sopk,
    /// Scalar ALU, one source.
    Sop1,
    /// Scalar compare.
    Sopc,
    /// Scalar program control (branches, waits, `s_endpgm`).
    Sopp,
    /// Scalar memory.
    Smem,
    /// Vector ALU, two sources (32-bit encoding).
    Vop2,
    /// Vector ALU, one source (32-bit encoding).
    Vop1,
    /// Vector compare (32-bit encoding).
    Vopc,
    /// Vector ALU, 64-bit encoding (VOP3a/VOP3b; also VOP1/VOP2/VOPC
    /// opcodes promoted).
    Vop3,
    /// Packed vector ALU and the matrix (MFMA) instructions.
    Vop3p,
    /// Local data share.
    Ds,
    /// Flat memory (generic addresses).
    Flat,
    /// Global memory.
    Global,
    /// Scratch (private) memory.
    Scratch,
    /// Untyped buffer memory.
    Mubuf,
    /// gfx11 dual issue: two VALU operations (X and Y) in one
    /// instruction ([`Inst::y`] holds Y).
    Vopd,
    /// Any other family (typed buffers, images, exports, interpolation):
    /// the shader machine does not model graphics.
    Other,
}

impl Enc {
    /// The family's name as the ISA manual writes it.
    pub fn name(self) -> &'static str {
        match self {
            Enc::Sop2 => "SOP2",
            Enc::Sopk => "SOPK",
            Enc::Sop1 => "SOP1",
            Enc::Sopc => "SOPC",
            Enc::Sopp => "SOPP",
            Enc::Smem => "SMEM",
            Enc::Vop2 => "VOP2",
            Enc::Vop1 => "VOP1",
            Enc::Vopc => "VOPC",
            Enc::Vop3 => "VOP3",
            Enc::Vop3p => "VOP3P",
            Enc::Ds => "DS",
            Enc::Flat => "FLAT",
            Enc::Global => "GLOBAL",
            Enc::Scratch => "SCRATCH",
            Enc::Mubuf => "MUBUF",
            Enc::Vopd => "VOPD",
            Enc::Other => "other",
        }
    }

    /// The family of a `target` instruction whose first word is `w`.
    pub fn on(target: Target, w: u32) -> Enc {
        if target.is_gfx11() {
            super::gfx11::enc_of(w)
        } else {
            Enc::of(w)
        }
    }

    /// The family of a gfx9 instruction whose first word is `w`.
    pub fn of(w: u32) -> Enc {
        if w >> 31 == 0 {
            return match w >> 25 {
                0x3e => Enc::Vopc,
                0x3f => Enc::Vop1,
                _ => Enc::Vop2,
            };
        }
        match w >> 30 {
            0b10 => {
                if w >> 28 == 0b1011 {
                    match w >> 23 {
                        0x17d => Enc::Sop1,
                        0x17e => Enc::Sopc,
                        0x17f => Enc::Sopp,
                        0x17c => Enc::Other,
                        _ => Enc::Sopk,
                    }
                } else {
                    Enc::Sop2
                }
            }
            _ => match w >> 26 {
                0x30 => Enc::Smem,
                0x34 => {
                    if w >> 23 == 0x1a7 {
                        Enc::Vop3p
                    } else {
                        Enc::Vop3
                    }
                }
                0x36 => Enc::Ds,
                0x37 => match (w >> 14) & 3 {
                    0 => Enc::Flat,
                    1 => Enc::Scratch,
                    2 => Enc::Global,
                    _ => Enc::Other,
                },
                0x38 => Enc::Mubuf,
                _ => Enc::Other,
            },
        }
    }

    /// The opcode field of gfx9 first word `w` in this family.
    pub fn opcode(self, w: u32) -> u16 {
        let op = match self {
            Enc::Sop2 => (w >> 23) & 0x7f,
            Enc::Sopk => (w >> 23) & 0x1f,
            Enc::Sop1 => (w >> 8) & 0xff,
            Enc::Sopc => (w >> 16) & 0x7f,
            Enc::Sopp => (w >> 16) & 0x7f,
            Enc::Smem => (w >> 18) & 0xff,
            Enc::Vop2 => (w >> 25) & 0x3f,
            Enc::Vop1 => (w >> 9) & 0xff,
            Enc::Vopc => (w >> 17) & 0xff,
            Enc::Vop3 => (w >> 16) & 0x3ff,
            Enc::Vop3p => (w >> 16) & 0x7f,
            Enc::Ds => (w >> 17) & 0xff,
            Enc::Flat | Enc::Global | Enc::Scratch => (w >> 18) & 0x7f,
            Enc::Mubuf => (w >> 18) & 0x7f,
            Enc::Vopd | Enc::Other => 0,
        };
        op as u16
    }
}

/// Source operand code of a literal constant.
pub const LITERAL: u16 = 255;
/// Source operand code announcing an SDWA word.
pub const SDWA: u16 = 249;
/// Source operand code announcing a DPP word.
pub const DPP: u16 = 250;

/// VOP3/VOP3P input and output modifiers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mods {
    /// Negate source i (bit i).
    pub neg: u8,
    /// Absolute value of source i (VOP3), or negate the high half of
    /// source i (VOP3P).
    pub abs: u8,
    /// Operand select (VOP3 16-bit halves; VOP3P low-half select; bit 3 =
    /// destination half).
    pub opsel: u8,
    /// VOP3P high-half select of sources 0..2.
    pub opsel_hi: u8,
    /// Clamp the result.
    pub clamp: bool,
    /// Output modifier: 0 none, 1 ×2, 2 ×4, 3 ÷2.
    pub omod: u8,
    /// gfx11 16-bit operands name halves of VGPRs (LLVM's true16): in
    /// VOP3 op_sel picks a 16-bit source's half (bits 0..2) and the
    /// result's (bit 3) for every instruction; in VOP1/VOP2/VOPC bit 7 of
    /// a 16-bit operand's VGPR field is its half (`v1.h` is field 129).
    /// A 16-bit result keeps the other half of its VGPR.
    pub t16: bool,
}

/// The extra word of a VOP1/VOP2/VOPC instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ext {
    /// None.
    None,
    /// An SDWA word (sub-dword selects, sign extension, modifiers).
    Sdwa(u32),
    /// A DPP word (lane permutation, row/bank masks; gfx11's DPP16).
    Dpp(u32),
    /// A gfx11 DPP8 word (eight 3-bit lane selects) and its
    /// fetch-inactive flag (source code 234 rather than 233).
    Dpp8(u32, bool),
}

/// A decoded instruction.
#[derive(Debug, Clone, Copy)]
pub struct Inst {
    /// Its family.
    pub enc: Enc,
    /// Opcode in the family.
    pub op: u16,
    /// The mnemonic (LLVM's, without the `_e32`/`_e64` suffix).
    pub name: &'static str,
    /// Length in bytes (4, 8 or 12).
    pub len: u8,
    /// The instruction words (the second is 0 for one-word instructions);
    /// for gfx11 memory instructions (SMEM, DS, FLAT/GLOBAL/SCRATCH),
    /// their fields moved to where gfx9 keeps them (see the gfx11
    /// decoder), which is what the memory executors read.
    pub w: [u32; 2],
    /// The literal constant, if the instruction has one.
    pub lit: Option<u32>,
    /// Destination operand code (SGPR code, or 256 + VGPR for a VALU
    /// destination; VOPC writes VCC = 106).
    pub dst: u16,
    /// The scalar destination of VOP3b forms (carry out, compare result).
    pub sdst: u16,
    /// Source operand codes (9-bit: SGPRs and constants below 256, VGPRs
    /// 256 + n; for an SDWA/DPP instruction source 0 is the extra word's
    /// VGPR).
    pub src: [u16; 3],
    /// A 16-bit immediate (SOPK/SOPP, sign-extended).
    pub simm16: i32,
    /// VOP3/VOP3P modifiers.
    pub mods: Mods,
    /// SDWA or DPP word.
    pub ext: Ext,
    /// VOPD's second operation (X is the rest of the value).
    pub y: Option<Dual>,
}

/// The Y operation of a VOPD instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dual {
    /// Its opcode.
    pub op: u16,
    /// Its mnemonic (`v_dual_*`).
    pub name: &'static str,
    /// Destination operand code (256 + VGPR).
    pub dst: u16,
    /// Source 0 (any 9-bit code) and source 1 (256 + VGPR).
    pub src: [u16; 2],
}

/// Why words could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Illegal {
    /// The family the first word belongs to.
    pub enc: Enc,
    /// Its opcode.
    pub op: u16,
    /// The first word.
    pub word: u32,
}

impl std::fmt::Display for Illegal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "illegal instruction: {} opcode {:#x} (word {:#010x})",
            self.enc.name(),
            self.op,
            self.word
        )
    }
}

/// True if the VOP2 opcode named `name` carries an inline literal
/// (K constant) after its word.
fn has_k_constant(name: &str) -> bool {
    matches!(
        name,
        "v_madmk_f32"
            | "v_madak_f32"
            | "v_madmk_f16"
            | "v_madak_f16"
            | "v_fmamk_f32"
            | "v_fmaak_f32"
    )
}

/// Decodes the instruction whose words start at `words[0]` (at least three
/// words must be given; the ones past its end are ignored).
pub fn decode(target: Target, words: &[u32; 3]) -> Result<Inst, Illegal> {
    if target.is_gfx11() {
        return super::gfx11::decode(words);
    }
    let w0 = words[0];
    let enc = Enc::of(w0);
    let op = enc.opcode(w0);
    let illegal = Illegal { enc, op, word: w0 };
    let name = target.mnemonic(enc, op).ok_or(illegal)?;
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
    match enc {
        Enc::Sop2 => {
            i.dst = f(w0, 16, 7);
            i.src = [f(w0, 0, 8), f(w0, 8, 8), 0];
        }
        Enc::Sopk => {
            i.dst = f(w0, 16, 7);
            i.simm16 = i32::from(w0 as u16 as i16);
            if name == "s_setreg_imm32_b32" {
                i.lit = Some(words[1]);
                i.len = 8;
            }
        }
        Enc::Sop1 => {
            i.dst = f(w0, 16, 7);
            i.src = [f(w0, 0, 8), 0, 0];
        }
        Enc::Sopc => {
            i.src = [f(w0, 0, 8), f(w0, 8, 8), 0];
        }
        Enc::Sopp => {
            i.simm16 = i32::from(w0 as u16 as i16);
        }
        Enc::Vop2 => {
            i.dst = 256 + f(w0, 17, 8);
            i.src = [f(w0, 0, 9), 256 + f(w0, 9, 8), 0];
            if has_k_constant(name) {
                i.lit = Some(words[1]);
                i.len = 8;
            }
        }
        Enc::Vop1 => {
            i.dst = 256 + f(w0, 17, 8);
            i.src = [f(w0, 0, 9), 0, 0];
        }
        Enc::Vopc => {
            i.dst = 106;
            i.src = [f(w0, 0, 9), 256 + f(w0, 9, 8), 0];
        }
        Enc::Vop3 | Enc::Vop3p => {
            let w1 = words[1];
            i.len = 8;
            i.w[1] = w1;
            i.dst = 256 + f(w0, 0, 8);
            i.src = [f(w1, 0, 9), f(w1, 9, 9), f(w1, 18, 9)];
            i.mods.neg = f(w1, 29, 3) as u8;
            if enc == Enc::Vop3 {
                i.sdst = f(w0, 8, 7);
                i.mods.abs = f(w0, 8, 3) as u8;
                i.mods.opsel = f(w0, 11, 4) as u8;
                i.mods.clamp = w0 & (1 << 15) != 0;
                i.mods.omod = f(w1, 27, 2) as u8;
            } else {
                // VOP3P: neg_hi in [10:8], op_sel [13:11], op_sel_hi[2]
                // in [14], op_sel_hi[1:0] in the second word's [28:27].
                i.mods.abs = f(w0, 8, 3) as u8;
                i.mods.opsel = f(w0, 11, 3) as u8;
                i.mods.opsel_hi = (f(w1, 27, 2) | f(w0, 14, 1) << 2) as u8;
                i.mods.clamp = w0 & (1 << 15) != 0;
            }
        }
        Enc::Smem | Enc::Ds | Enc::Flat | Enc::Global | Enc::Scratch | Enc::Mubuf => {
            i.len = 8;
            i.w[1] = words[1];
        }
        Enc::Vopd | Enc::Other => return Err(illegal),
    }
    // Literals and SDWA/DPP words follow the instruction's own words.
    let next = usize::from(i.len / 4);
    let scalar = matches!(enc, Enc::Sop2 | Enc::Sop1 | Enc::Sopc);
    let vector32 = matches!(enc, Enc::Vop1 | Enc::Vop2 | Enc::Vopc);
    // `s_getpc_b64` has no source and the second source of
    // `s_set_gpr_idx_on` is a 4-bit mode: neither reads a literal. The K
    // constant of `madmk`/`madak`/`fmamk`/`fmaak` is also their literal
    // source 0.
    let lit_src = match name {
        "s_getpc_b64" => false,
        "s_set_gpr_idx_on" => i.src[0] == LITERAL,
        _ => i.src[..2].contains(&LITERAL),
    };
    if i.lit.is_none() && (scalar && lit_src || vector32 && i.src[0] == LITERAL) {
        if next >= 3 {
            return Err(illegal);
        }
        i.lit = Some(words[next]);
        i.len += 4;
    } else if vector32 && (i.src[0] == SDWA || i.src[0] == DPP) {
        let x = words[next];
        i.len += 4;
        if i.src[0] == SDWA {
            // The SDWA word's source 0 is a VGPR, or an SGPR/constant when
            // its S0 bit is set (gfx9).
            i.src[0] = if x & (1 << 23) != 0 {
                (x & 0xff) as u16
            } else {
                256 + (x & 0xff) as u16
            };
            if enc == Enc::Vopc && x & (1 << 15) != 0 {
                i.dst = ((x >> 8) & 0x7f) as u16;
            }
            if matches!(enc, Enc::Vop2 | Enc::Vopc) && x & (1 << 31) != 0 {
                i.src[1] = f(w0, 9, 8);
            }
            i.ext = Ext::Sdwa(x);
        } else {
            i.src[0] = 256 + (x & 0xff) as u16;
            i.ext = Ext::Dpp(x);
        }
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_and_fields() {
        // s_add_u32 s0, s1, s2
        let i = decode(Target::Gfx90a, &[0x8000_0201, 0, 0]).unwrap();
        assert_eq!(
            (i.enc, i.name, i.dst, i.src[0], i.src[1], i.len),
            (Enc::Sop2, "s_add_u32", 0, 1, 2, 4)
        );
        // v_add_f32_e32 v0, v1, v2
        let i = decode(Target::Gfx90a, &[0x0200_0501, 0, 0]).unwrap();
        assert_eq!(
            (i.enc, i.name, i.dst, i.src[0], i.src[1]),
            (Enc::Vop2, "v_add_f32", 256, 257, 258)
        );
        // global_load_dword v1, v[2:3], off
        let i = decode(Target::Gfx90a, &[0xdc50_8000, 0x017f_0002, 0]).unwrap();
        assert_eq!(
            (i.enc, i.name, i.len),
            (Enc::Global, "global_load_dword", 8)
        );
        // s_mov_b32 s0, 0x12345678 (literal)
        let i = decode(Target::Gfx90a, &[0xbe80_00ff, 0x1234_5678, 0]).unwrap();
        assert_eq!((i.name, i.lit, i.len), ("s_mov_b32", Some(0x1234_5678), 8));
        // An unknown SOPP opcode is illegal, naming family and opcode.
        let e = decode(Target::Gfx90a, &[0xbfff_0000, 0, 0]).unwrap_err();
        assert_eq!((e.enc, e.op), (Enc::Sopp, 0x7f));
    }
}
