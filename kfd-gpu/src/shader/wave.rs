//! The state of one wavefront: scalar and vector registers, EXEC, VCC,
//! SCC, M0, the program counter and the hardware registers a kernel can
//! read, plus the operand readers every executor uses.

/// Lanes of a wave64 (every gfx9 wave; a gfx11 wave32 uses the first 32
/// of the per-lane arrays).
pub const LANES: usize = 64;

/// Operand codes of the special scalar registers (gfx9).
pub mod reg {
    /// `flat_scratch_lo`/`_hi`.
    pub const FLAT_SCRATCH_LO: u16 = 102;
    /// `xnack_mask_lo`.
    pub const XNACK_MASK_LO: u16 = 104;
    /// `vcc_lo`/`vcc_hi`.
    pub const VCC_LO: u16 = 106;
    /// `vcc_hi`.
    pub const VCC_HI: u16 = 107;
    /// First trap temporary (`ttmp0`).
    pub const TTMP0: u16 = 108;
    /// `m0`.
    pub const M0: u16 = 124;
    /// `exec_lo`.
    pub const EXEC_LO: u16 = 126;
    /// `exec_hi`.
    pub const EXEC_HI: u16 = 127;
    /// `src_shared_base`.
    pub const SHARED_BASE: u16 = 235;
    /// `src_shared_limit`.
    pub const SHARED_LIMIT: u16 = 236;
    /// `src_private_base`.
    pub const PRIVATE_BASE: u16 = 237;
    /// `src_private_limit`.
    pub const PRIVATE_LIMIT: u16 = 238;
    /// `src_pops_exiting_wave_id`.
    pub const POPS_EXITING_WAVE_ID: u16 = 239;
    /// `vccz`.
    pub const VCCZ: u16 = 251;
    /// `execz`.
    pub const EXECZ: u16 = 252;
    /// `scc`.
    pub const SCC: u16 = 253;
    /// A literal constant follows.
    pub const LITERAL: u16 = 255;
    /// First VGPR.
    pub const VGPR0: u16 = 256;
}

/// How an operand's inline float constants are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// 16-bit operand: half-precision constants.
    B16,
    /// 32-bit operand: single-precision constants.
    B32,
    /// 64-bit operand: double-precision constants, integers
    /// sign-extended, literals zero-extended (integer) or the high half
    /// (float, see [`Wave::read64`]).
    B64,
}

/// The value of inline constant `code` (128..=208, 240..=248) for an
/// operand of width `w`, or `None` for any other code.
pub fn inline_constant(code: u16, w: Width) -> Option<u64> {
    let int = match code {
        128..=192 => Some(i64::from(code) - 128),
        193..=208 => Some(192 - i64::from(code)),
        _ => None,
    };
    if let Some(v) = int {
        return Some(match w {
            Width::B16 => v as u16 as u64,
            Width::B32 => v as u32 as u64,
            Width::B64 => v as u64,
        });
    }
    // 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0, 1/(2*pi).
    let (h, s, d): (u16, u32, u64) = match code {
        240 => (0x3800, 0x3f00_0000, 0x3fe0_0000_0000_0000),
        241 => (0xb800, 0xbf00_0000, 0xbfe0_0000_0000_0000),
        242 => (0x3c00, 0x3f80_0000, 0x3ff0_0000_0000_0000),
        243 => (0xbc00, 0xbf80_0000, 0xbff0_0000_0000_0000),
        244 => (0x4000, 0x4000_0000, 0x4000_0000_0000_0000),
        245 => (0xc000, 0xc000_0000, 0xc000_0000_0000_0000),
        246 => (0x4400, 0x4080_0000, 0x4010_0000_0000_0000),
        247 => (0xc400, 0xc080_0000, 0xc010_0000_0000_0000),
        248 => (0x3118, 0x3e22_f983, 0x3fc4_5f30_6dc9_c882),
        _ => return None,
    };
    Some(match w {
        Width::B16 => u64::from(h),
        Width::B32 => u64::from(s),
        Width::B64 => d,
    })
}

/// One wavefront.
#[derive(Debug, Clone)]
pub struct Wave {
    /// Scalar registers by operand code (0..=101 SGPRs, then the specials
    /// of [`reg`]: FLAT_SCRATCH, XNACK_MASK, VCC, TTMPs, M0, EXEC).
    pub sgpr: [u32; 128],
    /// Vector registers, `vgpr[n][lane]`: v0..v255, then (gfx90a+) the
    /// AccVGPRs a0..a255 at 256..511.
    pub vgpr: Vec<[u32; LANES]>,
    /// The scalar condition code.
    pub scc: bool,
    /// Program counter (byte address).
    pub pc: u64,
    /// `MODE` hardware register (rounding and denormal modes, IEEE, DX10
    /// clamp).
    pub mode: u32,
    /// `TRAPSTS` hardware register.
    pub trapsts: u32,
    /// The wave's index in its workgroup.
    pub id: u32,
    /// High 32 bits of the shared (LDS) aperture (`src_shared_base`).
    pub shared_base_hi: u32,
    /// High 32 bits of the private aperture (`src_private_base`).
    pub private_base_hi: u32,
    /// Instructions executed.
    pub executed: u64,
    /// A wave32 (gfx11): EXEC and VCC are their low halves (`exec_lo`,
    /// `vcc_lo`), lane masks written to SGPRs are 32 bits.
    pub wave32: bool,
}

impl Wave {
    /// A wave with every register zero and `vgprs` vector registers.
    pub fn new(vgprs: usize) -> Wave {
        Wave {
            sgpr: [0; 128],
            vgpr: vec![[0; LANES]; vgprs.max(1)],
            scc: false,
            pc: 0,
            mode: 0,
            trapsts: 0,
            id: 0,
            shared_base_hi: 0,
            private_base_hi: 0,
            executed: 0,
            wave32: false,
        }
    }

    /// Lanes the wave has (32 or 64).
    #[inline]
    pub fn lanes(&self) -> usize {
        if self.wave32 {
            32
        } else {
            LANES
        }
    }

    /// The 64-bit lane mask whose low half is SGPR `lo` and high half
    /// `lo + 1` (a wave32 has only the low half).
    #[inline]
    fn mask_at(&self, lo: usize) -> u64 {
        let hi = if self.wave32 { 0 } else { self.sgpr[lo + 1] };
        u64::from(self.sgpr[lo]) | u64::from(hi) << 32
    }

    /// EXEC.
    #[inline]
    pub fn exec(&self) -> u64 {
        self.mask_at(usize::from(reg::EXEC_LO))
    }

    /// Sets EXEC (a wave32's `exec_lo`; its `exec_hi` stays 0).
    #[inline]
    pub fn set_exec(&mut self, v: u64) {
        self.sgpr[126] = v as u32;
        self.sgpr[127] = if self.wave32 { 0 } else { (v >> 32) as u32 };
    }

    /// VCC.
    #[inline]
    pub fn vcc(&self) -> u64 {
        self.mask_at(usize::from(reg::VCC_LO))
    }

    /// Sets VCC.
    #[inline]
    pub fn set_vcc(&mut self, v: u64) {
        self.write_mask(reg::VCC_LO, v);
    }

    /// Writes a lane mask to the scalar destination `code`: an SGPR pair
    /// (VCC, EXEC, TTMPs) in a wave64, one SGPR in a wave32.
    #[inline]
    pub fn write_mask(&mut self, code: u16, v: u64) {
        if self.wave32 {
            self.write32(code, v as u32);
            if code == reg::EXEC_LO {
                self.sgpr[127] = 0;
            }
        } else {
            self.write64(code, v);
        }
    }

    /// M0.
    #[inline]
    pub fn m0(&self) -> u32 {
        self.sgpr[usize::from(reg::M0)]
    }

    /// Reads scalar source `code` as 32 bits (constants in their 32-bit
    /// form; `lit` is the instruction's literal).
    #[inline]
    pub fn read32(&self, code: u16, lit: Option<u32>) -> u32 {
        self.read(code, lit, Width::B32) as u32
    }

    /// Reads scalar source `code` as 16 bits (half-precision constants).
    #[inline]
    pub fn read16(&self, code: u16, lit: Option<u32>) -> u16 {
        self.read(code, lit, Width::B16) as u16
    }

    /// Reads scalar source `code` as 64 bits: an SGPR pair, a constant in
    /// its 64-bit form, or a literal (zero-extended; for a float operand
    /// call [`Wave::read64_float`]).
    #[inline]
    pub fn read64(&self, code: u16, lit: Option<u32>) -> u64 {
        self.read(code, lit, Width::B64)
    }

    /// As [`Wave::read64`], for a double-precision operand: a literal is
    /// the high 32 bits of the double.
    #[inline]
    pub fn read64_float(&self, code: u16, lit: Option<u32>) -> u64 {
        if code == reg::LITERAL {
            return u64::from(lit.unwrap_or(0)) << 32;
        }
        self.read(code, lit, Width::B64)
    }

    fn read(&self, code: u16, lit: Option<u32>, w: Width) -> u64 {
        let pair = |i: usize| u64::from(self.sgpr[i]) | u64::from(self.sgpr[(i + 1) & 127]) << 32;
        match code {
            0..=127 => {
                if w == Width::B64 {
                    pair(usize::from(code))
                } else {
                    u64::from(self.sgpr[usize::from(code)])
                }
            }
            reg::SHARED_BASE => {
                u64::from(self.shared_base_hi) << if w == Width::B64 { 32 } else { 0 }
            }
            reg::PRIVATE_BASE => {
                u64::from(self.private_base_hi) << if w == Width::B64 { 32 } else { 0 }
            }
            reg::SHARED_LIMIT | reg::PRIVATE_LIMIT => {
                let hi = if code == reg::SHARED_LIMIT {
                    self.shared_base_hi
                } else {
                    self.private_base_hi
                };
                if w == Width::B64 {
                    u64::from(hi) << 32 | 0xffff_ffff
                } else {
                    u64::from(hi)
                }
            }
            reg::VCCZ => u64::from(self.vcc() == 0),
            reg::EXECZ => u64::from(self.exec() == 0),
            reg::SCC => u64::from(self.scc),
            reg::LITERAL => u64::from(lit.unwrap_or(0)),
            256..=511 => {
                // A VGPR read as a scalar: lane 0 (only executors that
                // know better call this with a VGPR).
                u64::from(self.vgpr[usize::from(code - 256)][0])
            }
            _ => inline_constant(code, w).unwrap_or(0),
        }
    }

    /// Writes scalar destination `code` (32 bits). Writes to constants
    /// are dropped.
    #[inline]
    pub fn write32(&mut self, code: u16, v: u32) {
        if code < 128 {
            self.sgpr[usize::from(code)] = v;
        }
    }

    /// Writes the scalar pair at `code` (64 bits).
    #[inline]
    pub fn write64(&mut self, code: u16, v: u64) {
        if code < 127 {
            self.sgpr[usize::from(code)] = v as u32;
            self.sgpr[usize::from(code) + 1] = (v >> 32) as u32;
        }
    }

    /// Reads vector source `code` for every lane (a scalar or constant is
    /// the same in every lane) as 32 bits.
    #[inline]
    pub fn fetch32(&self, code: u16, lit: Option<u32>, out: &mut [u32; LANES]) {
        if code >= 256 {
            *out = self.vgpr[usize::from(code - 256)];
        } else {
            *out = [self.read32(code, lit); LANES];
        }
    }

    /// Reads vector source `code` for every lane as 64 bits (a VGPR pair).
    #[inline]
    pub fn fetch64(&self, code: u16, lit: Option<u32>, float: bool, out: &mut [u64; LANES]) {
        if code >= 256 {
            let r = usize::from(code - 256);
            let (lo, hi) = (&self.vgpr[r], &self.vgpr[(r + 1).min(self.vgpr.len() - 1)]);
            for l in 0..LANES {
                out[l] = u64::from(lo[l]) | u64::from(hi[l]) << 32;
            }
        } else {
            let v = if float {
                self.read64_float(code, lit)
            } else {
                self.read64(code, lit)
            };
            *out = [v; LANES];
        }
    }

    /// Writes `vals` to VGPR `code - 256` in the lanes set in `mask`.
    #[inline]
    pub fn store32(&mut self, code: u16, mask: u64, vals: &[u32; LANES]) {
        let r = &mut self.vgpr[usize::from(code.saturating_sub(256))];
        if mask == u64::MAX {
            *r = *vals;
            return;
        }
        for l in 0..LANES {
            if mask >> l & 1 != 0 {
                r[l] = vals[l];
            }
        }
    }

    /// Writes 64-bit `vals` to the VGPR pair at `code - 256` in the lanes
    /// set in `mask`.
    #[inline]
    pub fn store64(&mut self, code: u16, mask: u64, vals: &[u64; LANES]) {
        let r = usize::from(code.saturating_sub(256));
        let hi = (r + 1).min(self.vgpr.len() - 1);
        for l in 0..LANES {
            if mask >> l & 1 != 0 {
                self.vgpr[r][l] = vals[l] as u32;
                self.vgpr[hi][l] = (vals[l] >> 32) as u32;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_constants_per_width() {
        assert_eq!(inline_constant(128, Width::B32), Some(0));
        assert_eq!(inline_constant(192, Width::B32), Some(64));
        assert_eq!(inline_constant(193, Width::B32), Some(0xffff_ffff));
        assert_eq!(inline_constant(208, Width::B64), Some((-16i64) as u64));
        assert_eq!(
            inline_constant(242, Width::B32),
            Some(u64::from(1.0f32.to_bits()))
        );
        assert_eq!(inline_constant(242, Width::B64), Some(1.0f64.to_bits()));
        assert_eq!(
            inline_constant(248, Width::B32),
            Some(u64::from((0.5 / std::f32::consts::PI).to_bits()))
        );
        // LLVM's double 1/(2*pi) is truncated, one ulp below the rounded one.
        assert_eq!(
            inline_constant(248, Width::B64),
            Some(0x3fc4_5f30_6dc9_c882)
        );
        assert_eq!(inline_constant(245, Width::B16), Some(0xc000));
        assert_eq!(inline_constant(100, Width::B32), None);
    }

    #[test]
    fn literals_widen_as_the_operand_says() {
        let w = Wave::new(1);
        assert_eq!(w.read64(255, Some(0xffff_ffff)), 0xffff_ffff);
        assert_eq!(w.read64_float(255, Some(0x4000_0000)), 2.0f64.to_bits());
    }
}
