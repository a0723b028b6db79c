//! Instructions as text in LLVM's AMDGPU assembly syntax, for checking
//! the decoder against LLVM's disassembler (`tests/decode_vs_llvm.rs`)
//! and for diagnostics.
//!
//! The printer works from what the decoder extracted (`Inst`'s fields and
//! words) and the mnemonic. Operand sizes come from the mnemonic: its
//! type suffixes (`_b64`, `_f64`, `dwordx4`, ...) give the default, and the
//! table [`WIDTH_EXCEPTIONS`] lists the instructions whose operands differ
//! from it. Forms the printer does not know how to print are reported as
//! `Err(reason)`, never printed approximately.

use std::fmt::Write as _;

use super::decode::{Enc, Ext, Inst, LITERAL};
use super::Target;

/// Operand sizes in dwords: destination, sources 0, 1, 2.
type Widths = [u8; 4];

/// Instructions whose operand sizes are not what their type suffixes
/// say (destination, source 0, source 1, source 2; in dwords).
const WIDTH_EXCEPTIONS: &[(&str, Widths)] = &[
    // Scalar shifts, bit-field ops and bit tests: 32-bit second operand.
    ("s_lshl_b64", [2, 2, 1, 0]),
    ("s_lshr_b64", [2, 2, 1, 0]),
    ("s_ashr_i64", [2, 2, 1, 0]),
    ("s_bfe_u64", [2, 2, 1, 0]),
    ("s_bfe_i64", [2, 2, 1, 0]),
    ("s_bfm_b64", [2, 1, 1, 0]),
    ("s_bitcmp0_b64", [0, 2, 1, 0]),
    ("s_bitcmp1_b64", [0, 2, 1, 0]),
    ("s_bitset0_b64", [2, 1, 0, 0]),
    ("s_bitset1_b64", [2, 1, 0, 0]),
    ("s_bitreplicate_b64_b32", [2, 1, 0, 0]),
    ("s_rfe_restore_b64", [0, 2, 1, 0]),
    ("s_cbranch_join", [0, 1, 0, 0]),
    ("s_cbranch_g_fork", [0, 2, 2, 0]),
    ("s_lshl1_add_u64", [2, 2, 2, 0]),
    // Vector 64-bit shifts and scaling: a 32-bit operand.
    ("v_lshlrev_b64", [2, 1, 2, 0]),
    ("v_lshrrev_b64", [2, 1, 2, 0]),
    ("v_ashrrev_i64", [2, 1, 2, 0]),
    ("v_ldexp_f64", [2, 2, 1, 0]),
    ("v_trig_preop_f64", [2, 2, 1, 0]),
    ("v_cmp_class_f64", [2, 2, 1, 0]),
    ("v_cmpx_class_f64", [2, 2, 1, 0]),
    ("v_mad_u64_u32", [2, 1, 1, 2]),
    ("v_mad_i64_i32", [2, 1, 1, 2]),
    ("v_lshl_add_u64", [2, 2, 1, 2]),
    ("v_mqsad_pk_u16_u8", [2, 2, 1, 2]),
    ("v_qsad_pk_u16_u8", [2, 2, 1, 2]),
    ("v_mqsad_u32_u8", [4, 2, 1, 4]),
    ("v_div_fixup_legacy_f16", [1, 1, 1, 1]),
    ("v_cvt_pk_f32_fp8", [2, 1, 0, 0]),
    ("v_cvt_pk_f32_bf8", [2, 1, 0, 0]),
];

/// The size in dwords of a type suffix (`f64` -> 2); `None` if `t` is not
/// a type.
fn type_width(t: &str) -> Option<u8> {
    let (k, bits) = t.split_at(1.min(t.len()));
    if !matches!(k, "b" | "f" | "i" | "u") {
        return None;
    }
    match bits {
        "8" | "16" | "32" => Some(1),
        "64" => Some(2),
        _ => None,
    }
}

/// Operand sizes of mnemonic `name` (in dwords): the exceptions table, or
/// the type suffixes (one type: every operand; two types: destination,
/// then sources).
fn widths(name: &str) -> Widths {
    if let Some((_, w)) = WIDTH_EXCEPTIONS.iter().find(|(n, _)| *n == name) {
        return *w;
    }
    let types: Vec<u8> = name.split('_').filter_map(type_width).collect();
    match types[..] {
        [] => [1; 4],
        [t] => [t; 4],
        [d, s, ..] => [d, s, s, s],
    }
}

/// An SGPR or special scalar register range of `n` dwords from `code`.
fn sreg(code: u16, n: u8, target: Target) -> Option<String> {
    let n = u16::from(n.max(1));
    let range = |prefix: &str, base: u16| {
        if n == 1 {
            format!("{prefix}{base}")
        } else {
            format!("{prefix}[{base}:{}]", base + n - 1)
        }
    };
    let pair = |name: &str, lo: u16| -> Option<String> {
        match (n, code - lo) {
            (1, 0) => Some(format!("{name}_lo")),
            (1, _) => Some(format!("{name}_hi")),
            (2, 0) => Some(name.to_string()),
            _ => None,
        }
    };
    let _ = target;
    // Tuples are aligned: the hardware and LLVM ignore the low bits of a
    // pair's (2) or a wider tuple's (4) register number.
    let align = |c: u16| match n {
        1 => c,
        2 => c & !1,
        _ => c & !3,
    };
    Some(match code {
        0..=101 if align(code) + n <= 102 => range("s", align(code)),
        102 | 103 => pair("flat_scratch", 102)?,
        104 | 105 => pair("xnack_mask", 104)?,
        106 | 107 => pair("vcc", 106)?,
        108..=123 if align(code - 108) + n <= 16 => range("ttmp", align(code - 108)),
        124 if n == 1 => "m0".into(),
        126 | 127 => pair("exec", 126)?,
        _ => return None,
    })
}

/// A VGPR range.
fn vreg(n: u16, w: u8) -> String {
    let w = u16::from(w.max(1));
    if w == 1 {
        format!("v{n}")
    } else {
        format!("v[{n}:{}]", n + w - 1)
    }
}

/// The text of a 9-bit source operand `code` of `w` dwords; `fp64` when
/// the operand is a 64-bit float (its inline 1/(2π) prints in double
/// precision).
fn operand(code: u16, w: u8, lit: Option<u32>, half: Half, target: Target) -> Option<String> {
    // A 16-bit integer operand's inline float constants print as the
    // half-precision bit pattern; a 16-bit operand's literal as 16 bits.
    const F16: [u16; 9] = [
        0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118,
    ];
    if half == Half::Int && (240..=248).contains(&code) {
        return Some(format!("{:#x}", F16[usize::from(code - 240)]));
    }
    if half != Half::No && code == LITERAL {
        return Some(format!("{:#x}", lit? & 0xffff));
    }
    Some(match code {
        0..=127 => sreg(code, w, target)?,
        128..=192 => (code - 128).to_string(),
        193..=208 => format!("-{}", code - 192),
        235 => "src_shared_base".into(),
        236 => "src_shared_limit".into(),
        237 => "src_private_base".into(),
        238 => "src_private_limit".into(),
        239 => "src_pops_exiting_wave_id".into(),
        240 => "0.5".into(),
        241 => "-0.5".into(),
        242 => "1.0".into(),
        243 => "-1.0".into(),
        244 => "2.0".into(),
        245 => "-2.0".into(),
        246 => "4.0".into(),
        247 => "-4.0".into(),
        248 if w == 2 => "0.15915494309189532".into(),
        248 => "0.15915494".into(),
        251 => "src_vccz".into(),
        252 => "src_execz".into(),
        253 => "src_scc".into(),
        254 => "src_lds_direct".into(),
        LITERAL => format!("{:#x}", lit?),
        256..=511 => vreg(code - 256, w),
        _ => return None,
    })
}

/// Whether an operand is 16 bits wide, and then whether a float.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Half {
    /// 32 or 64 bits.
    No,
    /// A 16-bit integer.
    Int,
    /// A half-precision float.
    Float,
}

/// The type of source `i` of mnemonic `name`: its width in bits (8/16
/// count as 16) and whether it is a float.
fn source_type(name: &str, i: usize) -> (u8, bool) {
    let types: Vec<&str> = name
        .split('_')
        .filter(|t| type_width(t).is_some())
        .collect();
    let t = match types[..] {
        [] => "b32",
        [t] => t,
        [_, t, ..] => t,
    };
    // Exceptions: integer operands of float instructions.
    let int = matches!(
        (name, i),
        ("v_ldexp_f16" | "v_ldexp_f32" | "v_ldexp_f64", 1)
            | ("v_cmp_class_f16" | "v_cmpx_class_f16", 1)
            | ("v_cmp_class_f32" | "v_cmpx_class_f32", 1)
            | ("v_cmp_class_f64" | "v_cmpx_class_f64", 1)
            | ("v_trig_preop_f64", 1)
            | ("v_cvt_pk_u8_f32", 1 | 2)
    );
    let bits = match &t[1..] {
        "16" => 16,
        "64" => 64,
        _ => 32,
    };
    (bits, t.starts_with('f') && !int)
}

/// Why a form is not printed.
type Reason = &'static str;

impl Inst {
    /// The instruction in LLVM's assembly syntax (mnemonic without the
    /// `_e32`/`_e64`/`_sdwa`/`_dpp` encoding suffix), or why this printer
    /// cannot print its form.
    pub fn disasm(&self, target: Target) -> Result<String, Reason> {
        if target.is_gfx11() {
            return Err("gfx11 operands (not printed yet)");
        }
        let mut s = String::from(self.name);
        let ops = match self.enc {
            Enc::Sop1 | Enc::Sop2 | Enc::Sopc | Enc::Sopk | Enc::Sopp => self.salu(target)?,
            Enc::Smem => self.smem(target)?,
            Enc::Vop1 | Enc::Vop2 | Enc::Vopc => self.vop32(target)?,
            Enc::Vop3 => self.vop3(target)?,
            Enc::Vop3p => self.vop3p(target)?,
            Enc::Ds => self.ds(target)?,
            Enc::Flat | Enc::Global | Enc::Scratch => self.flat(target)?,
            Enc::Mubuf => self.mubuf(target)?,
            Enc::Vopd | Enc::Other => return Err("family not modelled"),
        };
        if !ops.is_empty() {
            s.push(' ');
            s.push_str(&ops);
        }
        Ok(s)
    }

    fn src(&self, i: usize, w: u8, target: Target) -> Result<String, Reason> {
        let half = match self.enc {
            _ if self.name.contains("dot") || self.name.contains("_pk_") => Half::No,
            Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 => match source_type(self.name, i) {
                (16, true) => Half::Float,
                (16, false) => Half::Int,
                _ => Half::No,
            },
            _ => Half::No,
        };
        operand(self.src[i], w, self.lit, half, target).ok_or("operand out of range")
    }

    fn sdst_text(&self, code: u16, w: u8, target: Target) -> Result<String, Reason> {
        sreg(code, w, target).ok_or("destination out of range")
    }

    /// Scalar ALU operands.
    fn salu(&self, target: Target) -> Result<String, Reason> {
        let n = self.name;
        let [wd, w0, w1, _] = widths(n);
        let imm = self.simm16 as u16;
        Ok(match self.enc {
            Enc::Sop2 => {
                if n == "s_cbranch_g_fork" || n == "s_rfe_restore_b64" {
                    return Ok(format!(
                        "{}, {}",
                        self.src(0, w0, target)?,
                        self.src(1, w1, target)?
                    ));
                }
                format!(
                    "{}, {}, {}",
                    self.sdst_text(self.dst, wd, target)?,
                    self.src(0, w0, target)?,
                    self.src(1, w1, target)?
                )
            }
            Enc::Sop1 => match n {
                "s_getpc_b64" => self.sdst_text(self.dst, 2, target)?,
                "s_setpc_b64" | "s_rfe_b64" | "s_set_gpr_idx_idx" | "s_cbranch_join" => {
                    self.src(0, w0, target)?
                }
                _ => format!(
                    "{}, {}",
                    self.sdst_text(self.dst, wd, target)?,
                    self.src(0, w0, target)?
                ),
            },
            Enc::Sopc => match n {
                "s_set_gpr_idx_on" => return Err("s_set_gpr_idx_on mode"),
                _ => format!("{}, {}", self.src(0, w0, target)?, self.src(1, w1, target)?),
            },
            Enc::Sopk => match n {
                "s_getreg_b32" | "s_setreg_b32" | "s_setreg_imm32_b32" => {
                    return Err("hwreg operand")
                }
                "s_cbranch_i_fork" | "s_call_b64" => return Err("SOPK branch"),
                _ => format!("{}, {imm:#x}", self.sdst_text(self.dst, wd, target)?),
            },
            _ => match n {
                "s_waitcnt" | "s_sendmsg" | "s_sendmsghalt" | "s_set_gpr_idx_mode" => {
                    return Err("symbolic SOPP operand")
                }
                "s_endpgm" => {
                    if imm == 0 {
                        String::new()
                    } else {
                        imm.to_string()
                    }
                }
                "s_endpgm_saved"
                | "s_endpgm_ordered_ps_done"
                | "s_code_end"
                | "s_barrier"
                | "s_icache_inv"
                | "s_wakeup"
                | "s_ttracedata"
                | "s_set_gpr_idx_off" => String::new(),
                _ if n == "s_branch" || n.starts_with("s_cbranch") => imm.to_string(),
                // Immediates print in decimal up to 64, else in hex.
                _ if imm <= 64 => imm.to_string(),
                _ => format!("{imm:#x}"),
            },
        })
    }

    /// Scalar memory operands.
    fn smem(&self, target: Target) -> Result<String, Reason> {
        let w0 = self.w[0];
        let w1 = self.w[1];
        let n = self.name;
        let sbase = ((w0 & 0x3f) << 1) as u16;
        let sdata = ((w0 >> 6) & 0x7f) as u16;
        let soe = w0 & (1 << 14) != 0;
        let imm = w0 & (1 << 17) != 0;
        let glc = w0 & (1 << 16) != 0;
        if soe {
            return Err("SMEM SOE offset");
        }
        let data_w = smem_data_width(n);
        let base_w = if n.starts_with("s_buffer_") { 4 } else { 2 };
        let mut s = String::new();
        match n {
            "s_memtime" | "s_memrealtime" => {
                return self.sdst_text(sdata, 2, target);
            }
            "s_dcache_inv" | "s_dcache_wb" | "s_dcache_inv_vol" | "s_dcache_wb_vol" => {
                return Ok(String::new());
            }
            _ if n.starts_with("s_atc_probe") => return Err("s_atc_probe"),
            _ => {}
        }
        if !n.starts_with("s_dcache_discard") {
            let _ = write!(s, "{}, ", self.sdst_text(sdata, data_w, target)?);
        }
        let _ = write!(s, "{}, ", self.sdst_text(sbase, base_w, target)?);
        if imm {
            let _ = write!(s, "{:#x}", w1 & 0xf_ffff);
        } else {
            s.push_str(&self.sdst_text((w1 & 0x7f) as u16, 1, target)?);
        }
        if glc && !n.starts_with("s_dcache_discard") {
            s.push_str(" glc");
        }
        Ok(s)
    }

    /// VOP1/VOP2/VOPC in their 32-bit encodings.
    fn vop32(&self, target: Target) -> Result<String, Reason> {
        match self.ext {
            Ext::Sdwa(_) => return Err("SDWA"),
            Ext::Dpp(_) => return Err("DPP"),
            Ext::Dpp8(..) => return Err("DPP8"),
            Ext::None => {}
        }
        let n = self.name;
        let [wd, w0, w1, _] = widths(n);
        let vdst = vreg(self.dst.wrapping_sub(256) & 0xff, wd);
        let s0 = self.src(0, w0, target)?;
        let s1 = vreg(self.src[1].wrapping_sub(256) & 0xff, w1);
        Ok(match self.enc {
            Enc::Vop1 => match n {
                "v_nop" | "v_clrexcp" => String::new(),
                "v_accvgpr_mov_b32" => format!(
                    "a{}, a{}",
                    self.dst.wrapping_sub(256) & 0xff,
                    self.src[0].wrapping_sub(256) & 0xff
                ),
                "v_readfirstlane_b32" => {
                    format!("{}, {s0}", self.sdst_text(self.dst - 256, 1, target)?)
                }
                _ => format!("{vdst}, {s0}"),
            },
            Enc::Vopc => format!("vcc, {s0}, {s1}"),
            _ => {
                let k = format!("{:#x}", self.lit.unwrap_or(0));
                match n {
                    "v_cndmask_b32" => format!("{vdst}, {s0}, {s1}, vcc"),
                    "v_add_co_u32" | "v_sub_co_u32" | "v_subrev_co_u32" => {
                        format!("{vdst}, vcc, {s0}, {s1}")
                    }
                    "v_addc_co_u32" | "v_subb_co_u32" | "v_subbrev_co_u32" => {
                        format!("{vdst}, vcc, {s0}, {s1}, vcc")
                    }
                    "v_madmk_f32" | "v_madmk_f16" | "v_fmamk_f32" => {
                        format!("{vdst}, {s0}, {k}, {s1}")
                    }
                    "v_madak_f32" | "v_madak_f16" | "v_fmaak_f32" => {
                        format!("{vdst}, {s0}, {s1}, {k}")
                    }
                    _ => format!("{vdst}, {s0}, {s1}"),
                }
            }
        })
    }

    /// A VOP3 source with its neg/abs modifiers.
    /// LLVM prints them for float operands only (and ignores the bits of
    /// other operands); a negated constant prints as `neg(c)`.
    fn mod_src(&self, i: usize, w: u8, abs: bool, target: Target) -> Result<String, Reason> {
        let mut s = self.src(i, w, target)?;
        if !source_type(self.name, i).1 && !FP_MODS.contains(&self.name) {
            if self.mods.neg & (1 << i) != 0 {
                return Err("sext modifier");
            }
            return Ok(s);
        }
        let has_abs = abs && self.mods.abs & (1 << i) != 0;
        if has_abs {
            s = format!("|{s}|");
        }
        if self.mods.neg & (1 << i) != 0 {
            let c = self.src[i];
            s = if !has_abs && (128..=254).contains(&c) && !(235..=239).contains(&c) && c < 249
                || c == LITERAL
            {
                format!("neg({s})")
            } else {
                format!("-{s}")
            };
        }
        Ok(s)
    }

    /// VOP3 (VOP3a and VOP3b).
    fn vop3(&self, target: Target) -> Result<String, Reason> {
        let n = self.name;
        let op = self.op;
        let [wd, w0, w1, w2] = widths(n);
        if (0x270..0x280).contains(&op) {
            return Err("v_interp");
        }
        if n.starts_with("v_cvt_sr_")
            || n.starts_with("v_cvt_pk_bf8")
            || n.starts_with("v_cvt_pk_fp8")
        {
            return Err("fp8 conversion op_sel");
        }
        let vop3b = matches!(
            n,
            "v_add_co_u32"
                | "v_sub_co_u32"
                | "v_subrev_co_u32"
                | "v_addc_co_u32"
                | "v_subb_co_u32"
                | "v_subbrev_co_u32"
                | "v_div_scale_f32"
                | "v_div_scale_f64"
                | "v_mad_u64_u32"
                | "v_mad_i64_i32"
        );
        let nsrc = vop3_sources(n, op);
        let mut srcs = Vec::new();
        let ws = [w0, w1, w2];
        for (i, &w) in ws.iter().enumerate().take(nsrc) {
            let w = if i == 2
                && matches!(
                    n,
                    "v_cndmask_b32" | "v_addc_co_u32" | "v_subb_co_u32" | "v_subbrev_co_u32"
                ) {
                2
            } else {
                w
            };
            srcs.push(self.mod_src(i, w, !vop3b, target)?);
        }
        let vd = self.dst - 256;
        let mut s = if op < 0x100 {
            // VOPC: the destination is an SGPR pair.
            self.sdst_text(vd, 2, target)?
        } else if matches!(n, "v_readlane_b32" | "v_readfirstlane_b32") {
            self.sdst_text(vd, 1, target)?
        } else if matches!(n, "v_nop" | "v_clrexcp") {
            String::new()
        } else {
            vreg(vd, wd)
        };
        if vop3b {
            let _ = write!(s, ", {}", self.sdst_text(self.sdst, 2, target)?);
        }
        for x in &srcs {
            if !s.is_empty() {
                s.push_str(", ");
            }
            s.push_str(x);
        }
        if !vop3b && self.mods.opsel != 0 && has_op_sel(n, op) {
            let b = |i: u8| (self.mods.opsel >> i) & 1;
            s.push_str(" op_sel:[");
            for i in 0..nsrc as u8 {
                let _ = write!(s, "{},", b(i));
            }
            let _ = write!(s, "{}]", b(3));
        }
        if self.mods.clamp {
            s.push_str(" clamp");
        }
        match self.mods.omod {
            1 => s.push_str(" mul:2"),
            2 => s.push_str(" mul:4"),
            3 => s.push_str(" div:2"),
            _ => {}
        }
        Ok(s)
    }

    /// VOP3P: packed math and dot products (not the matrix instructions).
    fn vop3p(&self, target: Target) -> Result<String, Reason> {
        let n = self.name;
        if n.contains("mfma") || n.contains("smfmac") {
            return Err("MFMA");
        }
        if n.starts_with("v_accvgpr") {
            return Err("AccVGPR move");
        }
        let w = if n.ends_with("_f32") && n.starts_with("v_pk_") || n == "v_pk_mov_b32" {
            2
        } else {
            1
        };
        let nsrc = if n.starts_with("v_pk_fma")
            || n.starts_with("v_pk_mad")
            || n.starts_with("v_dot")
            || n.starts_with("v_fma_mix")
            || n.starts_with("v_mad_mix")
        {
            3
        } else {
            2
        };
        let mix = n.contains("_mix");
        let mut s = vreg(self.dst - 256, w);
        for i in 0..nsrc {
            // The mix instructions take abs/neg like VOP3 (their neg_hi
            // bits are abs).
            let x = if mix {
                self.mod_src(i, w, true, target)?
            } else {
                self.src(i, w, target)?
            };
            let _ = write!(s, ", {x}");
        }
        let list = |s: &mut String, name: &str, bits: u8, default: u8| {
            let all = (1u8 << nsrc) - 1;
            if bits & all != default & all {
                let _ = write!(s, " {name}:[");
                for i in 0..nsrc {
                    let _ = write!(s, "{}", (bits >> i) & 1);
                    s.push(if i + 1 == nsrc { ']' } else { ',' });
                }
            }
        };
        list(&mut s, "op_sel", self.mods.opsel, 0);
        list(
            &mut s,
            "op_sel_hi",
            self.mods.opsel_hi,
            if mix { 0 } else { 7 },
        );
        if !mix {
            list(&mut s, "neg_lo", self.mods.neg, 0);
            list(&mut s, "neg_hi", self.mods.abs, 0);
        }
        if self.mods.clamp {
            s.push_str(" clamp");
        }
        Ok(s)
    }

    /// Local data share.
    fn ds(&self, target: Target) -> Result<String, Reason> {
        let (w0, w1) = (self.w[0], self.w[1]);
        let n = self.name;
        if w0 & (1 << 25) != 0 {
            return Err("DS AccVGPR data");
        }
        let off0 = w0 & 0xff;
        let off1 = (w0 >> 8) & 0xff;
        let gds = w0 & (1 << 16) != 0;
        let addr = (w1 & 0xff) as u16;
        let d0 = ((w1 >> 8) & 0xff) as u16;
        let d1 = ((w1 >> 16) & 0xff) as u16;
        let vdst = ((w1 >> 24) & 0xff) as u16;
        if n.starts_with("ds_gws") || n == "ds_swizzle_b32" || n == "ds_nop" {
            return Err("DS gws/swizzle");
        }
        let dw = ds_data_width(n);
        let two = n.contains("2st64")
            || n.contains("write2")
            || n.contains("read2")
            || n.contains("wrxchg2");
        let rtn = n.contains("_rtn")
            || n.contains("read")
            || n.starts_with("ds_permute")
            || n.starts_with("ds_bpermute")
            || n == "ds_append"
            || n == "ds_consume";
        let ndata = if n.contains("read") || n == "ds_append" || n == "ds_consume" {
            0
        } else if n.contains("cmpst")
            || n.contains("mskor")
            || n.contains("2st64")
            || n.contains("write2")
            || n.contains("wrxchg2")
            || n.contains("wrap")
        {
            2
        } else if n.contains("_src2_") {
            0
        } else {
            1
        };
        let mut ops: Vec<String> = Vec::new();
        if rtn {
            let rw = if n.contains("read2") || n.contains("wrxchg2") {
                dw * 2
            } else {
                dw
            };
            ops.push(vreg(vdst, rw));
        }
        if !(n.contains("addtid") || n == "ds_append" || n == "ds_consume") {
            ops.push(vreg(addr, 1));
        }
        let data_w = if n.starts_with("ds_condxchg32") {
            2
        } else {
            dw
        };
        if ndata >= 1 {
            ops.push(vreg(d0, data_w));
        }
        if ndata >= 2 {
            ops.push(vreg(d1, data_w));
        }
        let mut s = ops.join(", ");
        if two {
            if off0 != 0 {
                let _ = write!(s, " offset0:{off0}");
            }
            if off1 != 0 {
                let _ = write!(s, " offset1:{off1}");
            }
        } else if off0 | off1 << 8 != 0 {
            let _ = write!(s, " offset:{}", off0 | off1 << 8);
        }
        // gfx90a and gfx940 have no GDS: LLVM ignores the bit there.
        if gds && target == Target::Gfx900 {
            s.push_str(" gds");
        }
        Ok(s)
    }

    /// Cache-policy bits of a memory instruction.
    fn cache_bits(s: &mut String, target: Target, glc: bool, slc: bool, scc: bool) {
        if target == Target::Gfx940 {
            if glc {
                s.push_str(" sc0");
            }
            if scc {
                s.push_str(" sc1");
            }
            if slc {
                s.push_str(" nt");
            }
        } else {
            if glc {
                s.push_str(" glc");
            }
            if slc {
                s.push_str(" slc");
            }
            if scc {
                s.push_str(" scc");
            }
        }
    }

    /// FLAT, GLOBAL and SCRATCH.
    fn flat(&self, target: Target) -> Result<String, Reason> {
        let (w0, w1) = (self.w[0], self.w[1]);
        let n = self.name;
        let addr = (w1 & 0xff) as u16;
        let data = ((w1 >> 8) & 0xff) as u16;
        let saddr = ((w1 >> 16) & 0x7f) as u16;
        let vdst = ((w1 >> 24) & 0xff) as u16;
        let glc = w0 & (1 << 16) != 0;
        let slc = w0 & (1 << 17) != 0;
        let scc = w0 & (1 << 25) != 0;
        if w1 & (1 << 23) != 0 {
            return Err("FLAT AccVGPR data");
        }
        if n.contains("_lds_") {
            return Err("load to LDS");
        }
        let raw = w0 & 0x1fff;
        let off = if self.enc == Enc::Flat {
            raw as i32
        } else {
            ((raw << 19) as i32) >> 19
        };
        let dw = mem_data_width(n);
        let atomic = n.contains("atomic");
        let store = n.contains("store");
        let rtn = if atomic { glc } else { !store };
        let use_saddr = saddr != 0x7f;
        if self.enc == Enc::Scratch && target == Target::Gfx940 {
            return Err("gfx940 scratch SVE");
        }
        let (addr_text, saddr_text) = match self.enc {
            Enc::Flat => (vreg(addr, 2), None),
            Enc::Global => {
                if use_saddr {
                    (vreg(addr, 1), Some(self.sdst_text(saddr, 2, target)?))
                } else {
                    (vreg(addr, 2), Some("off".to_string()))
                }
            }
            _ => {
                if use_saddr {
                    ("off".to_string(), Some(self.sdst_text(saddr, 1, target)?))
                } else {
                    (vreg(addr, 1), Some("off".to_string()))
                }
            }
        };
        let mut ops = Vec::new();
        if rtn {
            ops.push(vreg(vdst, if n.contains("cmpswap") { dw / 2 } else { dw }));
        }
        ops.push(addr_text);
        if store || atomic {
            ops.push(vreg(data, dw));
        }
        if let Some(s) = saddr_text {
            ops.push(s);
        }
        let mut s = ops.join(", ");
        if off != 0 {
            let _ = write!(s, " offset:{off}");
        }
        Self::cache_bits(&mut s, target, glc, slc, scc);
        Ok(s)
    }

    /// Untyped buffer memory.
    fn mubuf(&self, target: Target) -> Result<String, Reason> {
        let (w0, w1) = (self.w[0], self.w[1]);
        let n = self.name;
        let off = w0 & 0xfff;
        let offen = w0 & (1 << 12) != 0;
        let idxen = w0 & (1 << 13) != 0;
        let glc = w0 & (1 << 14) != 0;
        let lds = w0 & (1 << 16) != 0;
        let slc = w0 & (1 << 17) != 0;
        let scc = w0 & (1 << 15) != 0;
        let vaddr = (w1 & 0xff) as u16;
        let vdata = ((w1 >> 8) & 0xff) as u16;
        let srsrc = ((w1 >> 16) & 0x1f) as u16 * 4;
        let tfe = w1 & (1 << 23) != 0;
        let soff = ((w1 >> 24) & 0xff) as u16;
        if matches!(
            n,
            "buffer_wbinvl1" | "buffer_wbinvl1_vol" | "buffer_wbl2" | "buffer_invl2" | "buffer_inv"
        ) {
            let mut s = String::new();
            if target == Target::Gfx940 {
                Self::cache_bits(&mut s, target, glc, slc, scc);
            }
            return Ok(s.trim_start().to_string());
        }
        if lds || n.contains("_lds_") {
            return Err("load to LDS");
        }
        if tfe {
            return Err("tfe");
        }
        let dw = mem_data_width(n);
        let mut s = format!("{}, ", vreg(vdata, dw));
        s.push_str(&match (offen, idxen) {
            (false, false) => "off".to_string(),
            (true, true) => vreg(vaddr, 2),
            _ => vreg(vaddr, 1),
        });
        let _ = write!(
            s,
            ", {}, {}",
            self.sdst_text(srsrc, 4, target)?,
            operand(soff, 1, None, Half::No, target).ok_or("soffset out of range")?
        );
        if idxen {
            s.push_str(" idxen");
        }
        if offen {
            s.push_str(" offen");
        }
        if off != 0 {
            let _ = write!(s, " offset:{off}");
        }
        Self::cache_bits(&mut s, target, glc, slc, scc);
        Ok(s)
    }
}

/// Instructions with float source modifiers although their sources are
/// not typed as floats.
const FP_MODS: &[&str] = &["v_cndmask_b32"];

/// VOP3 instructions with `op_sel` (the 16-bit three-source ones; LLVM
/// ignores the bits of the others).
fn has_op_sel(name: &str, op: u16) -> bool {
    name == "v_pack_b32_f16"
        || (0x1c0..0x270).contains(&op)
            && name.contains("16")
            && !name.contains("legacy")
            && !name.starts_with("v_cvt_pk")
}

/// Sources of a VOP3 opcode.
fn vop3_sources(name: &str, op: u16) -> usize {
    const TWO: &[&str] = &[
        "v_add_co_u32",
        "v_sub_co_u32",
        "v_subrev_co_u32",
        "v_cvt_pkaccum_u8_f32",
    ];
    const ONE_OR_NONE: &[&str] = &["v_nop", "v_clrexcp"];
    if ONE_OR_NONE.contains(&name) {
        return 0;
    }
    if TWO.contains(&name) {
        return 2;
    }
    match op {
        0..=0xff => 2,
        0x100..=0x13f
            if matches!(
                name,
                "v_cndmask_b32" | "v_addc_co_u32" | "v_subb_co_u32" | "v_subbrev_co_u32"
            ) =>
        {
            3
        }
        0x100..=0x13f => 2,
        0x140..=0x1bf => 1,
        0x1c0..=0x27f => 3,
        _ => 2,
    }
}

/// Data size of a scalar memory instruction.
fn smem_data_width(n: &str) -> u8 {
    let x = if n.contains("cmpswap") { 2 } else { 1 };
    let base = if n.ends_with("dwordx16") {
        16
    } else if n.ends_with("dwordx8") {
        8
    } else if n.ends_with("dwordx4") {
        4
    } else if n.ends_with("dwordx2") || n.ends_with("_x2") {
        2
    } else {
        1
    };
    base * x
}

/// Data size of a vector memory instruction (FLAT/GLOBAL/SCRATCH/MUBUF).
fn mem_data_width(n: &str) -> u8 {
    let x = if n.contains("cmpswap") { 2 } else { 1 };
    let base = if n.ends_with("dwordx4") || n.ends_with("_format_xyzw") {
        4
    } else if n.ends_with("dwordx3") || n.ends_with("_format_xyz") {
        3
    } else if n.ends_with("dwordx2")
        || n.ends_with("_x2")
        || n.ends_with("_format_xy")
        || n.ends_with("_f64")
        || n.ends_with("d16_xyzw")
        || n.ends_with("d16_xyz")
    {
        2
    } else {
        1
    };
    base * x
}

/// Data size of a DS instruction.
fn ds_data_width(n: &str) -> u8 {
    if n.ends_with("b128") {
        4
    } else if n.ends_with("b96") {
        3
    } else if n.ends_with("64") {
        2
    } else {
        1
    }
}
