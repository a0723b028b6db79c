//! VALU: vector ALU instructions (VOP1, VOP2, VOPC, VOP3 and the SDWA and
//! DPP forms of the 32-bit encodings).
//!
//! The operand machinery lives here, shared by every VALU executor:
//! fetching sources for all lanes (VGPRs, SGPRs, inline constants of the
//! operand's width, literals), the input modifiers (VOP3 abs/neg and
//! op_sel, SDWA selects and sign extension, DPP lane permutations), the
//! output modifiers (clamp, omod, SDWA destination selects) and the write
//! of the lanes EXEC (and DPP's row and bank masks) enable. The
//! instructions themselves are in the submodules: integer and bit
//! operations ([`int`]), floating point ([`float`], helpers in [`fp`]),
//! compares ([`cmp`]) and cross-lane moves ([`lane`]).
//!
//! Anything the model does not handle (a modifier an instruction cannot
//! take, an SDWA or DPP form of a 64-bit operation, a rounding mode other
//! than round-to-nearest-even) stops the wave with an unimplemented
//! error instead of computing something approximate.

mod cmp;
mod float;
mod fp;
mod int;
mod lane;

use super::{unimplemented, Exec, Flow};
use crate::shader::isa::{Enc, Ext, Inst, Mods};
use crate::shader::wave::{inline_constant, reg, Wave, Width, LANES};

/// The executor of a VALU mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    int::lookup(name)
        .or_else(|| float::lookup(name))
        .or_else(|| cmp::lookup(name))
        .or_else(|| lane::lookup(name))
}

/// The type of an operand: its width and whether float modifiers apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ty {
    /// 16-bit integer (or bits).
    U16,
    /// 32-bit integer (or bits).
    U32,
    /// 64-bit integer (or bits).
    U64,
    /// Half precision.
    F16,
    /// Single precision.
    F32,
    /// Double precision.
    F64,
}

impl Ty {
    fn float(self) -> bool {
        matches!(self, Ty::F16 | Ty::F32 | Ty::F64)
    }

    fn wide(self) -> bool {
        matches!(self, Ty::U64 | Ty::F64)
    }

    fn half(self) -> bool {
        matches!(self, Ty::U16 | Ty::F16)
    }

    fn width(self) -> Width {
        match self {
            Ty::U16 | Ty::F16 => Width::B16,
            Ty::U32 | Ty::F32 => Width::B32,
            Ty::U64 | Ty::F64 => Width::B64,
        }
    }

    /// The sign bit of a float of this type.
    fn sign(self) -> u64 {
        match self {
            Ty::F16 => 0x8000,
            Ty::F32 => 0x8000_0000,
            Ty::F64 => 1 << 63,
            _ => 0,
        }
    }
}

/// Instruction flags for the operand machinery.
pub(super) mod flag {
    /// VOP3 op_sel selects 16-bit halves of the sources (bits 0..2) and
    /// the destination (bit 3): the gfx9 instructions that take it.
    pub const OPSEL: u8 = 1;
    /// A 16-bit result keeps the destination's high half (gfx9's op_sel
    /// instructions and v_mac/madak/madmk_f16, as LLVM's
    /// `zeroesHigh16BitsOfDest` has it); the others (and the VI-encoded
    /// `*_legacy` 16-bit forms) zero it.
    pub const KEEP_HI: u8 = 2;
    /// VOP3b: bits 14:8 are a scalar destination, not abs modifiers.
    pub const VOP3B: u8 = 4;
    /// The operation saturates integer results itself when clamp is set
    /// (see [`super::Env::clamp`]).
    pub const ICLAMP: u8 = 8;
    /// Float sources and results are not flushed (classification,
    /// moves).
    pub const NOFLUSH: u8 = 16;
    /// Float denormals are always flushed, whatever MODE says (the
    /// unfused multiply-adds).
    pub const FTZ: u8 = 32;
}

/// What a per-lane function may know besides its operands.
#[derive(Debug, Clone, Copy)]
pub(super) struct Env {
    /// The MODE register.
    pub mode: u32,
    /// The instruction's clamp bit (integer saturation for
    /// [`flag::ICLAMP`] operations).
    pub clamp: bool,
    /// The lane.
    pub lane: usize,
    /// A per-instruction value the executor passes in (a lane mask).
    pub extra: u64,
}

impl Env {
    /// IEEE mode (MODE bit 9): signalling NaNs are quieted by min/max.
    pub fn ieee(self) -> bool {
        self.mode >> 9 & 1 != 0
    }
}

/// MODE bits: f32 denormals allowed on input (4) and output (5); f16/f64
/// on input (6) and output (7).
fn denorm_bits(t: Ty, mode: u32, flags: u8) -> (bool, bool) {
    if flags & flag::FTZ != 0 {
        return (false, false);
    }
    let shift = match t {
        Ty::F32 => 4,
        Ty::F16 | Ty::F64 => 6,
        _ => return (true, true),
    };
    (mode >> shift & 1 != 0, mode >> (shift + 1) & 1 != 0)
}

/// Flushes a denormal of type `t` (bits `v`) to a zero of its sign.
#[inline]
fn flush(t: Ty, v: u64) -> u64 {
    let (exp, man) = match t {
        Ty::F16 => (0x7c00, 0x3ff),
        Ty::F32 => (0x7f80_0000, 0x7f_ffff),
        _ => (0x7ff0_0000_0000_0000, 0xf_ffff_ffff_ffff),
    };
    if v & exp == 0 && v & man != 0 {
        v & t.sign()
    } else {
        v
    }
}

/// [`flush`] of every lane of 16/32-bit float type `t`: the type is
/// matched once and the lane loop has no branch, so it vectorises (the
/// per-lane form was a quarter of a `v_fma_f32`'s cost).
#[inline]
fn flush_lanes(t: Ty, r: &mut [u32; LANES]) {
    let (exp, man) = match t {
        Ty::F16 => (0x7c00, 0x3ff),
        _ => (0x7f80_0000, 0x7f_ffff),
    };
    let sign = t.sign() as u32;
    for v in r.iter_mut() {
        let denormal = (*v & exp == 0) & (*v & man != 0);
        *v = if denormal { *v & sign } else { *v };
    }
}

static ZERO: [u32; LANES] = [0; LANES];

/// VGPR `r` (an out-of-range register reads as zero).
#[inline]
pub(super) fn vreg(w: &Wave, r: usize) -> &[u32; LANES] {
    w.vgpr.get(r).unwrap_or(&ZERO)
}

/// Writes `vals` to VGPR `r` in the lanes of `mask` (an out-of-range
/// register is not written).
#[inline]
pub(super) fn vstore(w: &mut Wave, r: usize, mask: u64, vals: &[u32; LANES]) {
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

/// Writes 64-bit `vals` to the VGPR pair at `r` in the lanes of `mask`.
#[inline]
pub(super) fn vstore64(w: &mut Wave, r: usize, mask: u64, vals: &[u64; LANES]) {
    let lo: [u32; LANES] = std::array::from_fn(|l| vals[l] as u32);
    let hi: [u32; LANES] = std::array::from_fn(|l| (vals[l] >> 32) as u32);
    vstore(w, r, mask, &lo);
    vstore(w, r + 1, mask, &hi);
}

/// The VGPR number of a destination code (decode gives 256 + n).
#[inline]
pub(super) fn vdst(i: &Inst) -> usize {
    usize::from(i.dst.saturating_sub(reg::VGPR0))
}

/// A scalar (non-VGPR) source read as 32 bits for an operand of type `t`:
/// inline constants take the operand's width.
fn scalar32(w: &Wave, i: &Inst, code: u16, t: Ty) -> u32 {
    match inline_constant(code, t.width()) {
        Some(v) => v as u32,
        None => w.read32(code, i.lit),
    }
}

/// Checks the modifiers of `i` against what an operation with sources
/// `src`, result `dst` and `flags` accepts, before anything is written.
fn check(i: &Inst, src: &[Ty], dst: Option<Ty>, flags: u8) -> Result<(), Flow> {
    // The common case: no modifiers, no extra word.
    if i.ext == Ext::None && i.mods == Mods::default() {
        let vop3 = match i.enc {
            Enc::Vop3 => true,
            Enc::Vop1 | Enc::Vop2 | Enc::Vopc => false,
            _ => return Err(unimplemented(i, "encoding")),
        };
        for &c in &i.src[..src.len().min(3)] {
            if reserved(c) || vop3 && c == reg::LITERAL && i.lit.is_none() {
                return Err(unimplemented(
                    i,
                    "source operand (literal, LDS direct or reserved)",
                ));
            }
        }
        return Ok(());
    }
    let m = &i.mods;
    let any_float = src.iter().any(|t| t.float());
    for n in 0..src.len() {
        if reserved(i.src[n]) {
            return Err(unimplemented(i, "source operand (LDS direct or reserved)"));
        }
    }
    match i.enc {
        Enc::Vop3 => {
            for (n, t) in src.iter().enumerate() {
                if i.src[n] == reg::LITERAL && i.lit.is_none() {
                    return Err(unimplemented(i, "literal in VOP3"));
                }
                let mods = m.neg >> n & 1 != 0 || flags & flag::VOP3B == 0 && m.abs >> n & 1 != 0;
                if mods && !t.float() {
                    return Err(unimplemented(i, "abs/neg on an integer operand"));
                }
            }
            if flags & flag::VOP3B == 0 && (m.abs | m.neg) >> src.len() != 0 {
                return Err(unimplemented(i, "modifier on a missing operand"));
            }
            if flags & flag::VOP3B == 0 && m.opsel != 0 && flags & flag::OPSEL == 0 && !m.t16 {
                return Err(unimplemented(i, "op_sel"));
            }
            match dst {
                Some(d) if d.float() => {}
                Some(_) => {
                    if m.omod != 0 {
                        return Err(unimplemented(i, "omod on an integer result"));
                    }
                    if m.clamp && flags & flag::ICLAMP == 0 {
                        return Err(unimplemented(i, "clamp on an integer result"));
                    }
                }
                None => {
                    if m.omod != 0 || m.clamp {
                        return Err(unimplemented(i, "clamp/omod on a compare"));
                    }
                }
            }
        }
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc => match i.ext {
            Ext::None => {}
            Ext::Sdwa(x) => {
                if src.iter().any(|t| t.wide()) || dst.is_some_and(|t| t.wide()) {
                    return Err(unimplemented(i, "SDWA on a 64-bit operation"));
                }
                for (n, t) in src.iter().enumerate().take(2) {
                    let s = x >> (16 + 8 * n);
                    if s & 7 == 7 {
                        return Err(unimplemented(i, "SDWA select 7"));
                    }
                    if t.float() && s & 8 != 0 || !t.float() && s & 0x30 != 0 {
                        return Err(unimplemented(i, "SDWA modifier for the operand type"));
                    }
                }
                if i.enc != Enc::Vopc {
                    let (clamp, omod) = (x >> 13 & 1 != 0, x >> 14 & 3);
                    let float = dst.is_some_and(|t| t.float());
                    if omod != 0 && !float || clamp && !float && flags & flag::ICLAMP == 0 {
                        return Err(unimplemented(i, "SDWA clamp/omod on an integer result"));
                    }
                    if x >> 8 & 7 == 7 || x >> 11 & 3 == 3 {
                        return Err(unimplemented(i, "SDWA destination select"));
                    }
                }
            }
            Ext::Dpp8(..) => {
                if src.iter().any(|t| t.wide()) || dst.is_some_and(|t| t.wide()) {
                    return Err(unimplemented(i, "DPP8 on a 64-bit operation"));
                }
            }
            Ext::Dpp(x) => {
                if src.iter().any(|t| t.wide()) || dst.is_some_and(|t| t.wide()) {
                    return Err(unimplemented(i, "DPP on a 64-bit operation"));
                }
                if x >> 20 & 0xf != 0 && !any_float {
                    return Err(unimplemented(i, "DPP abs/neg on an integer operation"));
                }
                if !dpp_known(x >> 8 & 0x1ff) {
                    return Err(unimplemented(i, "DPP control"));
                }
            }
        },
        _ => return Err(unimplemented(i, "encoding")),
    }
    Ok(())
}

/// True for source codes the model does not read: LDS direct (254), the
/// reserved codes and the SDWA/DPP markers outside their 32-bit place.
fn reserved(code: u16) -> bool {
    matches!(code, 209..=234 | 249 | 250 | 254)
}

/// True for the DPP controls the model implements.
fn dpp_known(ctrl: u32) -> bool {
    matches!(ctrl, 0..=0xff | 0x101..=0x10f | 0x111..=0x11f | 0x121..=0x12f)
        || matches!(ctrl, 0x130 | 0x134 | 0x138 | 0x13c | 0x140..=0x143)
}

/// The lane DPP control `ctrl` makes lane `l` read, or `None` when the
/// source is out of range (or the control unknown).
fn dpp_source(ctrl: u32, l: usize) -> Option<usize> {
    let c = ctrl as usize;
    let row = l & !15;
    let r = l & 15;
    match ctrl {
        0..=0xff => Some((l & !3) | (c >> (2 * (l & 3))) & 3),
        0x101..=0x10f => {
            let n = c & 15;
            (r + n < 16).then_some(l + n)
        }
        0x111..=0x11f => {
            let n = c & 15;
            (r >= n).then(|| l - n)
        }
        0x121..=0x12f => Some(row | (r + 16 - (c & 15)) & 15),
        0x130 => (l < 63).then_some(l + 1),
        0x134 => Some((l + 1) & 63),
        0x138 => (l > 0).then(|| l - 1),
        0x13c => Some((l + 63) & 63),
        0x140 => Some(row | (15 - r)),
        0x141 => Some((l & !7) | (7 - (l & 7))),
        0x142 => (l >= 16).then(|| row - 1),
        0x143 => (l >= 32).then_some(31),
        _ => None,
    }
}

/// Applies DPP word `x` to `v` (source 0, already read from its VGPR):
/// returns the lanes that may be written.
fn dpp(x: u32, exec: u64, v: &mut [u32; LANES]) -> u64 {
    let ctrl = x >> 8 & 0x1ff;
    let bound_ctrl = x >> 19 & 1 != 0;
    let (bank_mask, row_mask) = (x >> 24 & 0xf, x >> 28 & 0xf);
    // Lanes the row and bank masks enable.
    let mut enabled = 0u64;
    for r in 0..4 {
        if row_mask >> r & 1 != 0 {
            enabled |= 0xffff << (16 * r);
        }
    }
    let mut banks = 0u64;
    for b in 0..4 {
        if bank_mask >> b & 1 != 0 {
            banks |= 0x000f_000f_000f_000f << (4 * b);
        }
    }
    enabled &= banks;
    let c = ctrl as usize;
    let n = c & 15;
    // One monomorphic loop per control family.
    match ctrl {
        0..=0xff => permute(exec, enabled, bound_ctrl, v, |l| {
            Some((l & !3) | (c >> (2 * (l & 3))) & 3)
        }),
        0x101..=0x10f => permute(exec, enabled, bound_ctrl, v, |l| {
            ((l & 15) + n < 16).then_some(l + n)
        }),
        0x111..=0x11f => permute(exec, enabled, bound_ctrl, v, |l| {
            (l & 15 >= n).then(|| l - n)
        }),
        _ => permute(exec, enabled, bound_ctrl, v, |l| dpp_source(ctrl, l)),
    }
}

/// gfx11 DPP8 word `x` applied to `v`: lane `l` reads lane
/// `(l & !7) | sel[l & 7]` (3-bit selects from bit 8 up); an inactive
/// source reads 0 unless `fi` (fetch inactive). Every lane writes.
fn dpp8(x: u32, fi: bool, exec: u64, v: &mut [u32; LANES]) -> u64 {
    let exec = if fi { u64::MAX } else { exec };
    permute(exec, u64::MAX, true, v, |l| {
        Some((l & !7) | (x >> (8 + 3 * (l & 7))) as usize & 7)
    })
}

/// Moves `v[src(l)]` to lane `l` for the `enabled` lanes: an invalid
/// (out of range or inactive) source gives 0 with `bound_ctrl`, else
/// leaves the lane unwritten. Returns the lanes to write.
#[inline(always)]
fn permute(
    exec: u64,
    enabled: u64,
    bound_ctrl: bool,
    v: &mut [u32; LANES],
    src: impl Fn(usize) -> Option<usize>,
) -> u64 {
    let old = *v;
    let mut mask = 0u64;
    for l in 0..LANES {
        let (val, ok) = match src(l) {
            Some(s) if exec >> (s & 63) & 1 != 0 => (old[s & 63], true),
            _ => (0, bound_ctrl),
        };
        v[l] = val;
        mask |= u64::from(ok) << l;
    }
    mask & enabled
}

/// SDWA source select `sel` (with sign extension `sext`) of `v`.
#[inline]
fn sdwa_sel(v: u32, sel: u32, sext: bool) -> u32 {
    match sel {
        0..=3 => {
            let b = v >> (8 * sel) & 0xff;
            if sext {
                b as u8 as i8 as i32 as u32
            } else {
                b
            }
        }
        4 | 5 => {
            let h = v >> (16 * (sel - 4)) & 0xffff;
            if sext {
                h as u16 as i16 as i32 as u32
            } else {
                h
            }
        }
        _ => v,
    }
}

/// Reads source `n` of type `t` (16 or 32 bits) of `i` for every lane,
/// with its input modifiers; narrows `mask` to the lanes DPP lets write.
fn fetch32(w: &Wave, i: &Inst, n: usize, t: Ty, flags: u8, mask: &mut u64, out: &mut [u32; LANES]) {
    let (code, high) = half_of(i, i.src[n], t);
    if code >= reg::VGPR0 {
        *out = *vreg(w, usize::from(code - reg::VGPR0));
    } else {
        *out = [scalar32(w, i, code, t); LANES];
    }
    if high {
        for v in out.iter_mut() {
            *v >>= 16;
        }
    }
    let sign = t.sign() as u32;
    let (mut abs, mut neg) = (false, false);
    match (i.enc, i.ext) {
        (Enc::Vop3, _) => {
            if opsel_on(i, t, flags) && i.mods.opsel >> n & 1 != 0 {
                for v in out.iter_mut() {
                    *v >>= 16;
                }
            }
            abs = flags & flag::VOP3B == 0 && i.mods.abs >> n & 1 != 0;
            neg = i.mods.neg >> n & 1 != 0;
        }
        (_, Ext::Sdwa(x)) if n < 2 => {
            let s = x >> (16 + 8 * n);
            let (sel, sext) = (s & 7, s & 8 != 0);
            if sel != 6 || sext {
                for v in out.iter_mut() {
                    *v = sdwa_sel(*v, sel, sext);
                }
            }
            neg = s & 0x10 != 0;
            abs = s & 0x20 != 0;
        }
        (_, Ext::Dpp8(x, fi)) if n == 0 => {
            *mask &= dpp8(x, fi, w.exec(), out);
        }
        (_, Ext::Dpp(x)) if n < 2 => {
            if n == 0 {
                *mask &= dpp(x, w.exec(), out);
            }
            neg = x >> (20 + 2 * n) & 1 != 0;
            abs = x >> (21 + 2 * n) & 1 != 0;
        }
        _ => {}
    }
    if t.float() {
        if abs {
            for v in out.iter_mut() {
                *v &= !sign;
            }
        }
        if neg {
            for v in out.iter_mut() {
                *v ^= sign;
            }
        }
        if flags & flag::NOFLUSH == 0 && !denorm_bits(t, w.mode, flags).0 {
            flush_lanes(t, out);
        }
    }
}

/// Whether VOP3 op_sel picks the halves of operands of type `t`: in the
/// gfx9 instructions that take it, and for every 16-bit operand on gfx11.
#[inline]
fn opsel_on(i: &Inst, t: Ty, flags: u8) -> bool {
    flags & flag::OPSEL != 0 || i.mods.t16 && t.half()
}

/// The register code a 16-bit operand `code` of type `t` reads or writes
/// in a gfx11 VOP1/VOP2/VOPC instruction, and whether it is the high
/// half (bit 7 of the VGPR field); other operands as they are.
#[inline]
fn half_of(i: &Inst, code: u16, t: Ty) -> (u16, bool) {
    if i.mods.t16 && t.half() && i.enc != Enc::Vop3 && code >= reg::VGPR0 {
        let v = code - reg::VGPR0;
        (reg::VGPR0 + (v & 0x7f), v & 0x80 != 0)
    } else {
        (code, false)
    }
}

/// True if source `n` reads its VGPR `v` unchanged: no modifier, select
/// or permutation applies, and no lane holds a denormal the mode would
/// flush (a scan that vectorises, cheaper than a flushed copy).
#[inline]
fn untouched(w: &Wave, i: &Inst, n: usize, t: Ty, flags: u8, v: &[u32; LANES]) -> bool {
    if n < 2 && i.ext != Ext::None || i.mods.t16 && t.half() {
        return false;
    }
    if i.enc == Enc::Vop3 {
        let m = &i.mods;
        if m.neg >> n & 1 != 0
            || flags & flag::VOP3B == 0 && m.abs >> n & 1 != 0
            || flags & flag::OPSEL != 0 && m.opsel >> n & 1 != 0
        {
            return false;
        }
    }
    let flushes = t.float() && flags & flag::NOFLUSH == 0 && !denorm_bits(t, w.mode, flags).0;
    !flushes || !any_denormal(t, v)
}

/// True if a lane of `v` holds a denormal of 16/32-bit float type `t`.
#[inline]
fn any_denormal(t: Ty, v: &[u32; LANES]) -> bool {
    let (exp, man) = match t {
        Ty::F16 => (0x7c00, 0x3ff),
        _ => (0x7f80_0000, 0x7f_ffff),
    };
    let mut any = 0u32;
    for x in v {
        any |= u32::from(*x & exp == 0) & u32::from(*x & man != 0);
    }
    any != 0
}

/// Source `n` (of at most three) of `src` for every lane: the VGPR itself
/// when nothing changes it, else the values [`fetch32`] reads into the
/// (deferred-initialised) buffer `b`; a source past `N` reads zeros.
macro_rules! sources {
    ($w:expr, $i:expr, $src:expr, $flags:expr, $mask:expr, $n:expr, $b:ident) => {{
        if $n >= $src.len() {
            &ZERO
        } else {
            let code = $i.src[$n];
            let direct = (code >= reg::VGPR0)
                .then(|| vreg($w, usize::from(code - reg::VGPR0)))
                .filter(|v| untouched($w, $i, $n, $src[$n], $flags, v));
            if let Some(v) = direct {
                v
            } else {
                let mut v = [0u32; LANES];
                fetch32($w, $i, $n, $src[$n], $flags, &mut $mask, &mut v);
                $b = v;
                &$b
            }
        }
    }};
}

/// Reads source `n` of type `t` as 64 bits per lane: a VGPR pair, an
/// SGPR pair, a constant in its 64-bit form or a literal; 32-bit types
/// go through [`fetch32`] and are zero-extended.
fn fetch64(w: &Wave, i: &Inst, n: usize, t: Ty, flags: u8, out: &mut [u64; LANES]) {
    if !t.wide() {
        let mut m = u64::MAX;
        let mut v = [0u32; LANES];
        fetch32(w, i, n, t, flags, &mut m, &mut v);
        *out = std::array::from_fn(|l| u64::from(v[l]));
        return;
    }
    let code = i.src[n];
    if code >= reg::VGPR0 {
        let r = usize::from(code - reg::VGPR0);
        let (lo, hi) = (vreg(w, r), vreg(w, r + 1));
        *out = std::array::from_fn(|l| u64::from(lo[l]) | u64::from(hi[l]) << 32);
    } else {
        let v = if t == Ty::F64 {
            w.read64_float(code, i.lit)
        } else {
            w.read64(code, i.lit)
        };
        *out = [v; LANES];
    }
    if t == Ty::F64 {
        let sign = 1u64 << 63;
        if i.enc == Enc::Vop3 {
            if flags & flag::VOP3B == 0 && i.mods.abs >> n & 1 != 0 {
                for v in out.iter_mut() {
                    *v &= !sign;
                }
            }
            if i.mods.neg >> n & 1 != 0 {
                for v in out.iter_mut() {
                    *v ^= sign;
                }
            }
        }
        if flags & flag::NOFLUSH == 0 && !denorm_bits(t, w.mode, flags).0 {
            for v in out.iter_mut() {
                *v = flush(t, *v);
            }
        }
    }
}

/// The clamp and omod output modifiers of `i`.
fn out_mods(i: &Inst) -> (bool, u32) {
    match (i.enc, i.ext) {
        (Enc::Vop3, _) => (i.mods.clamp, u32::from(i.mods.omod)),
        (Enc::Vop1 | Enc::Vop2, Ext::Sdwa(x)) => (x >> 13 & 1 != 0, x >> 14 & 3),
        _ => (false, 0),
    }
}

/// Applies omod, clamp and the output denormal flush to float results.
fn float_out(t: Ty, mode: u32, flags: u8, clamp: bool, omod: u32, r: &mut [u64; LANES], n: usize) {
    // The hardware ignores omod in IEEE mode.
    let omod = if mode >> 9 & 1 != 0 { 0 } else { omod };
    let dx10 = mode >> 8 & 1 != 0;
    if omod != 0 || clamp {
        for v in r[..n].iter_mut() {
            *v = fp::out_mod(t, *v, omod, clamp, dx10);
        }
    }
    if flags & flag::NOFLUSH == 0 && !denorm_bits(t, mode, flags).1 {
        for v in r[..n].iter_mut() {
            *v = flush(t, *v);
        }
    }
}

/// Applies omod/clamp/flush to 32-bit float results in place.
fn float_out32(t: Ty, mode: u32, flags: u8, clamp: bool, omod: u32, r: &mut [u32; LANES]) {
    let omod = if mode >> 9 & 1 != 0 { 0 } else { omod };
    let dx10 = mode >> 8 & 1 != 0;
    if omod != 0 || clamp {
        for v in r.iter_mut() {
            *v = fp::out_mod(t, u64::from(*v), omod, clamp, dx10) as u32;
        }
    }
    if flags & flag::NOFLUSH == 0 && !denorm_bits(t, mode, flags).1 {
        flush_lanes(t, r);
    }
}

/// Writes 16/32-bit results `r` of type `t` to the destination VGPR of
/// `i` in the lanes of `mask`: output modifiers, the 16-bit placement
/// (op_sel, zeroed or kept high half) and SDWA destination selects.
fn put32(w: &mut Wave, i: &Inst, t: Ty, flags: u8, mask: u64, r: &mut [u32; LANES]) {
    let (clamp, omod) = out_mods(i);
    if t.float() {
        float_out32(t, w.mode, flags, clamp, omod, r);
    }
    let d = vdst(i);
    if let Ext::Sdwa(x) = i.ext {
        let (sel, unused) = (x >> 8 & 7, x >> 11 & 3);
        if sel != 6 {
            let old = vreg(w, d);
            let (shift, bits) = match sel {
                0..=3 => (8 * sel, 8),
                _ => (16 * (sel - 4), 16),
            };
            let field = ((1u64 << bits) - 1) as u32;
            for l in 0..LANES {
                let v = (r[l] & field) << shift;
                let fmask = field << shift;
                r[l] = match unused {
                    0 => v,
                    1 => {
                        // Sign-extend into the bits above the field.
                        let top = shift + bits;
                        let neg = r[l] >> (bits - 1) & 1 != 0;
                        if neg && top < 32 {
                            v | !0u32 << top
                        } else {
                            v
                        }
                    }
                    _ => old[l] & !fmask | v,
                };
            }
        } else if t.half() {
            for v in r.iter_mut() {
                *v &= 0xffff;
            }
        }
    } else if t.half() && i.mods.t16 {
        // gfx11: the result goes to one half, the other one stays.
        let (code, high) = half_of(i, i.dst, t);
        let high = high || i.enc == Enc::Vop3 && i.mods.opsel & 8 != 0;
        let d = usize::from(code.saturating_sub(reg::VGPR0));
        let old = vreg(w, d);
        for l in 0..LANES {
            r[l] = if high {
                old[l] & 0xffff | r[l] << 16
            } else {
                old[l] & 0xffff_0000 | r[l] & 0xffff
            };
        }
        vstore(w, d, mask, r);
        return;
    } else if t.half() {
        let old = vreg(w, d);
        let hi = flags & flag::OPSEL != 0 && i.enc == Enc::Vop3 && i.mods.opsel & 8 != 0;
        if hi {
            for l in 0..LANES {
                r[l] = old[l] & 0xffff | r[l] << 16;
            }
        } else if flags & flag::KEEP_HI != 0 {
            for l in 0..LANES {
                r[l] = old[l] & 0xffff_0000 | r[l] & 0xffff;
            }
        } else {
            for v in r.iter_mut() {
                *v &= 0xffff;
            }
        }
    }
    vstore(w, d, mask, r);
}

/// Runs a 16/32-bit operation with `N` sources of types `src` and a
/// result of type `dst`: `f` maps one lane's sources (16-bit values in
/// the low bits) to its result.
#[inline]
pub(super) fn run32<const N: usize, F>(
    w: &mut Wave,
    i: &Inst,
    src: [Ty; N],
    dst: Ty,
    flags: u8,
    f: F,
) -> Flow
where
    F: Fn(Env, [u32; N]) -> u32,
{
    run32x(w, i, src, dst, flags, 0, f)
}

/// [`run32`] with a value every lane's [`Env::extra`] carries.
#[inline]
pub(super) fn run32x<const N: usize, F>(
    w: &mut Wave,
    i: &Inst,
    src: [Ty; N],
    dst: Ty,
    flags: u8,
    extra: u64,
    f: F,
) -> Flow
where
    F: Fn(Env, [u32; N]) -> u32,
{
    run32_lanes(w, i, src, dst, flags, extra, |env, s, r| {
        for (l, x) in r.iter_mut().enumerate() {
            *x = f(Env { lane: l, ..env }, std::array::from_fn(|n| s[n][l]));
        }
    })
}

/// [`run32x`] with `f` given every lane at once: the sources after
/// their modifiers and the results to fill (what an operation with a
/// whole-wave fast path, such as [`fp::fma_f32_lanes`], takes).
#[inline]
pub(super) fn run32_lanes<const N: usize, F>(
    w: &mut Wave,
    i: &Inst,
    src: [Ty; N],
    dst: Ty,
    flags: u8,
    extra: u64,
    f: F,
) -> Flow
where
    F: FnOnce(Env, [&[u32; LANES]; N], &mut [u32; LANES]),
{
    if let Err(e) = check(i, &src, Some(dst), flags) {
        return e;
    }
    if w.mode & 0xf != 0 && (dst.float() || src.iter().any(|t| t.float())) {
        return unimplemented(i, "rounding mode");
    }
    let mut mask = w.exec();
    let (b0, b1, b2);
    let s0 = sources!(w, i, src, flags, mask, 0, b0);
    let s1 = sources!(w, i, src, flags, mask, 1, b1);
    let s2 = sources!(w, i, src, flags, mask, 2, b2);
    let all = [s0, s1, s2];
    let s: [&[u32; LANES]; N] = std::array::from_fn(|n| all[n.min(2)]);
    let env = Env {
        mode: w.mode,
        clamp: out_mods(i).0,
        lane: 0,
        extra,
    };
    let mut r = [0u32; LANES];
    f(env, s, &mut r);
    put32(w, i, dst, flags, mask, &mut r);
    Flow::Next
}

/// Runs an operation with a 64-bit source or result (VOP1/VOP3 without
/// SDWA or DPP): sources of 32-bit types are zero-extended, a result of a
/// 32-bit type is its low half.
#[inline]
pub(super) fn run64<const N: usize, F>(
    w: &mut Wave,
    i: &Inst,
    src: [Ty; N],
    dst: Ty,
    flags: u8,
    f: F,
) -> Flow
where
    F: Fn(Env, [u64; N]) -> u64,
{
    if let Err(e) = check(i, &src, Some(dst), flags) {
        return e;
    }
    if w.mode & 0xf != 0 && (dst.float() || src.iter().any(|t| t.float())) {
        return unimplemented(i, "rounding mode");
    }
    if i.ext != Ext::None {
        return unimplemented(i, "SDWA/DPP on a 64-bit operation");
    }
    let mask = w.exec();
    let mut s = [[0u64; LANES]; N];
    for n in 0..N {
        fetch64(w, i, n, src[n], flags, &mut s[n]);
    }
    let (clamp, omod) = out_mods(i);
    let env = Env {
        mode: w.mode,
        clamp,
        lane: 0,
        extra: 0,
    };
    if dst.wide() {
        let mut r: [u64; LANES] =
            std::array::from_fn(|l| f(Env { lane: l, ..env }, std::array::from_fn(|n| s[n][l])));
        if dst.float() {
            float_out(dst, w.mode, flags, clamp, omod, &mut r, LANES);
        }
        vstore64(w, vdst(i), mask, &r);
    } else {
        let mut r: [u32; LANES] = std::array::from_fn(|l| {
            f(Env { lane: l, ..env }, std::array::from_fn(|n| s[n][l])) as u32
        });
        put32(w, i, dst, flags, mask, &mut r);
    }
    Flow::Next
}

/// The scalar destination of a VOP3 instruction whose vdst field names
/// an SGPR (compares, `v_readlane_b32`).
#[inline]
pub(super) fn sdst_of_vdst(i: &Inst) -> u16 {
    i.dst.wrapping_sub(reg::VGPR0) & 0xff
}

/// Runs a compare with `N` sources: `f` gives one lane's result; the
/// mask (inactive lanes 0) goes to VCC (VOPC), the SDWA scalar
/// destination, or the VOP3 destination SGPR pair; `x` (`v_cmpx`) also
/// writes EXEC.
#[inline]
pub(super) fn compare<const N: usize, F>(
    w: &mut Wave,
    i: &Inst,
    src: [Ty; N],
    flags: u8,
    x: bool,
    f: F,
) -> Flow
where
    F: Fn(Env, [u64; N]) -> bool,
{
    if let Err(e) = check(i, &src, None, flags) {
        return e;
    }
    if w.mode & 0xf != 0 && src.iter().any(|t| t.float()) {
        return unimplemented(i, "rounding mode");
    }
    let mut mask = w.exec();
    let env = Env {
        mode: w.mode,
        clamp: false,
        lane: 0,
        extra: 0,
    };
    let r: [bool; LANES] = if src.iter().any(|t| t.wide()) {
        if i.ext != Ext::None {
            return unimplemented(i, "SDWA/DPP on a 64-bit compare");
        }
        let mut s = [[0u64; LANES]; N];
        for n in 0..N {
            fetch64(w, i, n, src[n], flags, &mut s[n]);
        }
        std::array::from_fn(|l| f(Env { lane: l, ..env }, std::array::from_fn(|n| s[n][l])))
    } else {
        let (b0, b1, b2);
        let s0 = sources!(w, i, src, flags, mask, 0, b0);
        let s1 = sources!(w, i, src, flags, mask, 1, b1);
        let s2 = sources!(w, i, src, flags, mask, 2, b2);
        let all = [s0, s1, s2];
        let s: [&[u32; LANES]; N] = std::array::from_fn(|n| all[n.min(2)]);
        std::array::from_fn(|l| {
            f(
                Env { lane: l, ..env },
                std::array::from_fn(|n| u64::from(s[n][l])),
            )
        })
    };
    let mut bits = 0u64;
    for (l, b) in r.iter().enumerate() {
        bits |= u64::from(*b) << l;
    }
    bits &= mask;
    let dst = match i.enc {
        Enc::Vop3 => sdst_of_vdst(i),
        _ => i.dst,
    };
    write_sdst64(w, dst, bits);
    if x {
        w.set_exec(bits);
    }
    Flow::Next
}

/// Writes a lane mask to the scalar destination at `code` (an SGPR pair
/// in a wave64, one SGPR in a wave32; SGPRs, VCC, TTMPs, EXEC; other
/// codes are dropped).
#[inline]
pub(super) fn write_sdst64(w: &mut Wave, code: u16, v: u64) {
    w.write_mask(code, v);
}

/// Runs a VOP2 instruction whose VOP3 form is VOP3b with a carry: `f`
/// maps (a, b, carry-in) to (result, carry-out). The carry-in is VCC in
/// the 32-bit encoding and the SGPR pair in source 2 in VOP3; the
/// carry-out goes to VCC or the VOP3b scalar destination.
#[inline]
pub(super) fn carry<F>(w: &mut Wave, i: &Inst, uses_cin: bool, f: F) -> Flow
where
    F: Fn(u32, u32, bool) -> (u32, bool),
{
    let src = [Ty::U32, Ty::U32];
    if let Err(e) = check(i, &src, Some(Ty::U32), flag::VOP3B) {
        return e;
    }
    let (cin, cout_reg) = match i.enc {
        Enc::Vop3 => {
            let c = if uses_cin {
                if i.src[2] >= reg::VGPR0 || i.src[2] == reg::LITERAL {
                    return unimplemented(i, "carry-in not an SGPR pair");
                }
                w.read64(i.src[2], None)
            } else {
                0
            };
            (c, i.sdst)
        }
        _ => (w.vcc(), reg::VCC_LO),
    };
    let mut mask = w.exec();
    let (mut a, mut b) = ([0u32; LANES], [0u32; LANES]);
    fetch32(w, i, 0, Ty::U32, flag::VOP3B, &mut mask, &mut a);
    fetch32(w, i, 1, Ty::U32, flag::VOP3B, &mut mask, &mut b);
    let mut cout = 0u64;
    let mut r = [0u32; LANES];
    for l in 0..LANES {
        let (v, c) = f(a[l], b[l], uses_cin && cin >> l & 1 != 0);
        r[l] = v;
        cout |= u64::from(c) << l;
    }
    put32(w, i, Ty::U32, 0, mask, &mut r);
    write_sdst64(w, cout_reg, cout & mask);
    Flow::Next
}
