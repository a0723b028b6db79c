//! MFMA: the matrix fused multiply-add instructions of gfx90a (CDNA2) and
//! gfx940 (CDNA3), `D = A * B + C` over `blocks` independent M×K by K×N
//! products.
//!
//! # Register layouts
//!
//! As AMD's matrix instruction calculator gives them (for every shape
//! here, no broadcast modifiers):
//!
//! * A (M×K per block): lane `l` holds `kpl` consecutive elements of row
//!   `i = l % M`, packed from bit 0 of its first register up. The lane's
//!   group `g = l / M` names the block `g % blocks` and the first K
//!   index `(g / blocks) * kpl`. B (K×N) is the same with column
//!   `j = l % N` for the row.
//! * C and D, 32-bit elements: M = 32: register `r` is block `r / 16`;
//!   with `q = r % 16`, row `8 * (q / 4) + 4 * (l / 32) + q % 4`, column
//!   `l % 32`. M = 16: register `r` is block `r / 4`, row
//!   `4 * (l / 16) + r % 4`, column `l % 16`. M = 4: block `l / 4`, row
//!   `r`, column `l % 4`.
//! * C and D, f64: 16x16: register pair `p`, row `4 * p + l / 16`, column
//!   `l % 16`; 4x4 (four blocks): block `(l / 4) % 4`, row `l / 16`,
//!   column `l % 4`.
//!
//! # Operands
//!
//! The VOP3P-MAI word keeps, where the other VOP3P instructions have
//! their modifiers: ACC_CD (C and D are AccVGPRs) in the clamp bit, CBSZ
//! in `neg_hi` (word 0 [10:8]), ABID in `op_sel` plus `op_sel_hi[2]`
//! (word 0 [14:11]), the A and B ACC bits in `op_sel_hi[1:0]` (word 1
//! [28:27]) and BLGP in `neg_lo` (word 1 [31:29]; the f64 forms' negate
//! bits). AccVGPR `aN` is `Wave::vgpr[256 + N]`. C may be an inline
//! constant, every element of it that value.
//!
//! The broadcasts follow AMD's matrix instruction calculator: with CBSZ
//! and ABID, block `b` of the product takes its A from block
//! `(b >> CBSZ << CBSZ) + ABID`; with BLGP, lane `l` of B reads the
//! registers of another lane (see `blgp_lane`). Forms the calculator does
//! not document (CBSZ/ABID on single-block or f64 shapes, ABID beyond
//! 2^CBSZ - 1, BLGP on gfx940's single-block non-f32 shapes) and the f64
//! negate bits stop the wave as unimplemented. A partial EXEC does too:
//! what the matrix core does with inactive lanes is not modelled.
//!
//! # Sparse (SMFMAC, gfx940)
//!
//! `v_smfmac_*` compute `D = A * B + D` with A 4:2 sparse: per group of
//! four K positions a lane stores two A values, and the index register
//! (source 2) places them (see `smfmac`). B and D have the dense layouts
//! above. The xf32 forms have no executor.
//!
//! # Arithmetic
//!
//! Products of the f16/bf16/fp8/bf8/i8 and f32 inputs are exact in f64;
//! each result is C plus the sum of its K products, accumulated in f64
//! and rounded once to f32 (integer results wrap to 32 bits). The f64
//! forms accumulate with a fused multiply-add per K step, in K order.
//! MFMA results keep subnormals and round to nearest even whatever MODE
//! says. gfx940's fp8/bf8 are the "FNUZ" formats (E4M3 with bias 8, E5M2
//! with bias 16, 0x80 the only NaN, no infinities or negative zero).

use super::vop3p::{get, put, vdst};
use super::vop3p_half::f16_to_f64;
use super::{unimplemented, Exec, Flow};
use crate::shader::isa::{Inst, Target};
use crate::shader::wave::{reg, Wave, LANES};

/// An A/B element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    F32,
    F16,
    Bf16,
    I8,
    Fp8,
    Bf8,
    F64,
}

impl Ty {
    fn bits(self) -> usize {
        match self {
            Ty::F32 => 32,
            Ty::F16 | Ty::Bf16 => 16,
            Ty::I8 | Ty::Fp8 | Ty::Bf8 => 8,
            Ty::F64 => 64,
        }
    }

    /// The element of raw bits `v` as f64 (exact).
    #[inline]
    fn value(self, v: u64) -> f64 {
        match self {
            Ty::F32 => f64::from(f32::from_bits(v as u32)),
            Ty::F16 => f16_to_f64(v as u16),
            Ty::Bf16 => f64::from(f32::from_bits((v as u32 & 0xffff) << 16)),
            Ty::I8 => f64::from(v as u8 as i8),
            Ty::Fp8 => fnuz8(v as u8, 3, 8),
            Ty::Bf8 => fnuz8(v as u8, 2, 16),
            Ty::F64 => f64::from_bits(v),
        }
    }
}

/// An 8-bit "FNUZ" float with `man` mantissa bits and exponent bias
/// `bias`: 0x80 is NaN, no infinities.
fn fnuz8(v: u8, man: u32, bias: i32) -> f64 {
    if v == 0x80 {
        return f64::NAN;
    }
    let sign = if v & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((v & 0x7f) >> man);
    let m = f64::from(v & ((1 << man) - 1));
    let scale = f64::from(1u32 << man);
    if e == 0 {
        sign * m / scale * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + m / scale) * 2f64.powi(e - bias)
    }
}

/// The result type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Out {
    F32,
    I32,
    F64,
}

/// One MFMA shape.
#[derive(Debug, Clone, Copy)]
struct Shape {
    m: usize,
    n: usize,
    k: usize,
    blocks: usize,
    /// Elements of A (and of B) per lane.
    kpl: usize,
    /// A is 4:2 sparse (SMFMAC): each group of four K positions holds two
    /// stored values, placed by 2-bit indices; `kpl` counts B's elements.
    sparse: bool,
    /// Element type of A.
    a: Ty,
    /// Element type of B.
    b: Ty,
    out: Out,
}

const fn shape(m: usize, k: usize, blocks: usize, kpl: usize, ab: Ty, out: Out) -> Shape {
    Shape {
        m,
        n: m,
        k,
        blocks,
        kpl,
        sparse: false,
        a: ab,
        b: ab,
        out,
    }
}

const fn fp8(m: usize, k: usize, a: Ty, b: Ty) -> Shape {
    Shape {
        m,
        n: m,
        k,
        blocks: 1,
        kpl: 8,
        sparse: false,
        a,
        b,
        out: Out::F32,
    }
}

/// An SMFMAC shape (gfx940): one block, B with `kpl` elements per lane, A
/// half as many stored.
const fn sparse(m: usize, k: usize, a: Ty, b: Ty, out: Out) -> Shape {
    Shape {
        m,
        n: m,
        k,
        blocks: 1,
        kpl: k * m / LANES,
        sparse: true,
        a,
        b,
        out,
    }
}

impl Shape {
    /// 32-bit registers of C and D.
    const fn out_regs(&self) -> usize {
        let elems = self.blocks * self.m * self.n / LANES;
        match self.out {
            Out::F64 => 2 * elems,
            _ => elems,
        }
    }

    /// Where element `e` of lane `l`'s A operand (`mn` = M) or B operand
    /// (`mn` = N) belongs: (block, row of A or column of B, K index).
    #[inline]
    fn in_pos(&self, mn: usize, l: usize, e: usize) -> (usize, usize, usize) {
        let g = l / mn;
        (g % self.blocks, l % mn, (g / self.blocks) * self.kpl + e)
    }

    /// The (block, row, column) of C/D held by 32-bit register `r` (or,
    /// for f64, register pair `r`) in lane `l`.
    #[inline]
    fn out_pos(&self, r: usize, l: usize) -> (usize, usize, usize) {
        match (self.out, self.m) {
            (Out::F64, 16) => (0, 4 * r + l / 16, l % 16),
            (Out::F64, _) => ((l / 4) % 4, l / 16, l % 4),
            (_, 32) => {
                let q = r % 16;
                (r / 16, 8 * (q / 4) + 4 * (l / 32) + q % 4, l % 32)
            }
            (_, 16) => (r / 4, 4 * (l / 16) + r % 4, l % 16),
            _ => (l / 4, r % 4, l % 4),
        }
    }
}

/// Largest A or B element count (blocks × M × K) of any shape.
const MAX_IN: usize = 1024;
/// Largest C/D register count of any shape.
const MAX_OUT: usize = 32;

/// Reads the A (`is_a`) or B operand at register `r` into `out`, dense:
/// A as `[block][row][k]`, B transposed as `[block][column][k]`.
/// Lane `l` of the operand reads the registers of lane `from(l)` (BLGP).
fn gather<F: Fn(usize) -> usize>(
    w: &Wave,
    s: &Shape,
    r: usize,
    is_a: bool,
    from: F,
    out: &mut [f64; MAX_IN],
) {
    let ty = if is_a { s.a } else { s.b };
    let bits = ty.bits();
    let mut regs = [[0u32; LANES]; 4];
    let nregs = (s.kpl * bits).div_ceil(32).min(4);
    for (g, v) in regs.iter_mut().enumerate().take(nregs) {
        get(w, r + g, v);
    }
    let mn = if is_a { s.m } else { s.n };
    for l in 0..LANES {
        let src = from(l) % LANES;
        for e in 0..s.kpl {
            let x = ty.value(element(&regs, src, e, bits));
            let (blk, rc, k) = s.in_pos(mn, l, e);
            let at = (blk * mn + rc) * s.k + k;
            if let Some(slot) = out.get_mut(at) {
                *slot = x;
            }
        }
    }
}

/// Element `e` (`bits` wide, packed from bit 0 of the first register up)
/// of lane `l` of `regs`.
#[inline]
fn element(regs: &[[u32; LANES]; 4], l: usize, e: usize, bits: usize) -> u64 {
    if bits == 64 {
        return u64::from(regs[0][l]) | u64::from(regs[1][l]) << 32;
    }
    let (g, sh) = ((e * bits) / 32, (e * bits) % 32);
    let v = regs.get(g).map_or(0, |r| r[l]) >> sh;
    u64::from(v) & ((1u64 << bits) - 1)
}

/// The lane whose B registers lane `l` reads under BLGP `blgp`: 1 and 2
/// broadcast the low/high 32 lanes, 3 rotates down by 16 lanes, 4..7
/// broadcast one group of 16 lanes.
#[inline]
fn blgp_lane(l: usize, blgp: u8) -> usize {
    match blgp {
        1 => l % 32,
        2 => 32 + l % 32,
        3 => (l + 16) % 64,
        4..=7 => usize::from(blgp - 4) * 16 + l % 16,
        _ => l,
    }
}

/// `D = A * B + C` for shape `s`.
fn mfma(w: &mut Wave, i: &Inst, target: Target, s: &Shape) -> Flow {
    let m = &i.mods;
    let (cbsz, abid, blgp) = (m.abs, m.opsel | (m.opsel_hi >> 2) << 3, m.neg);
    // The broadcasts, where AMD's matrix instruction calculator documents
    // them: CBSZ/ABID on multi-block shapes (not f64), BLGP on every
    // gfx90a shape but f64 and on gfx940's multi-block and f32 ones.
    let f64s = s.a == Ty::F64;
    let cbsz_ok =
        cbsz == 0 && abid == 0 || !f64s && (1usize << cbsz) <= s.blocks && abid < 1 << cbsz;
    let blgp_ok =
        blgp == 0 || !f64s && (target != Target::Gfx940 || s.blocks > 1 || s.a == Ty::F32);
    if !cbsz_ok || !blgp_ok {
        return unimplemented(i, "CBSZ/ABID/BLGP (or f64 negate) form");
    }
    if w.vgpr.len() < 512 {
        return unimplemented(i, "no AccVGPRs");
    }
    let exec = w.exec();
    if exec != u64::MAX {
        return unimplemented(i, "EXEC not all ones");
    }
    let acc = |on: bool| if on { 256 } else { 0 };
    let (sa, sb, sc) = (i.src[0], i.src[1], i.src[2]);
    if sa < reg::VGPR0 || sb < reg::VGPR0 || sc == reg::LITERAL {
        return unimplemented(i, "operand kinds");
    }
    let ra = usize::from(sa - reg::VGPR0) + acc(m.opsel_hi & 1 != 0);
    let rb = usize::from(sb - reg::VGPR0) + acc(m.opsel_hi & 2 != 0);
    let acc_cd = acc(m.clamp);
    let mut a = [0f64; MAX_IN];
    let mut b = [0f64; MAX_IN];
    gather(w, s, ra, true, |l| l, &mut a);
    gather(w, s, rb, false, |l| blgp_lane(l, blgp), &mut b);
    // Block `blk` of the product takes its A from this block.
    let a_block = |blk: usize| (blk >> cbsz << cbsz) + usize::from(abid);
    let n = s.out_regs().min(MAX_OUT);
    let mut c = [[0u32; LANES]; MAX_OUT];
    if sc >= reg::VGPR0 {
        let rc = usize::from(sc - reg::VGPR0) + acc_cd;
        for r in 0..n {
            get(w, rc + r, &mut c[r]);
        }
    } else if s.out == Out::F64 {
        let v = w.read64_float(sc, None);
        for r in 0..n {
            c[r] = [(v >> (32 * (r % 2))) as u32; LANES];
        }
    } else {
        let v = w.read32(sc, None);
        for r in c.iter_mut().take(n) {
            *r = [v; LANES];
        }
    }
    let rd = vdst(i) + acc_cd;
    product(w, s, &a, &b, a_block, &c, n, rd, exec);
    Flow::Next
}

/// Computes `D = A * B + C` from dense A (`[block][row][k]`, block `blk` of
/// the product reading block `a_block(blk)`) and B (`[block][column][k]`)
/// and the C registers, and writes the `n` D registers from `rd` on.
#[allow(clippy::too_many_arguments)]
fn product<F: Fn(usize) -> usize>(
    w: &mut Wave,
    s: &Shape,
    a: &[f64; MAX_IN],
    b: &[f64; MAX_IN],
    a_block: F,
    c: &[[u32; LANES]; MAX_OUT],
    n: usize,
    rd: usize,
    exec: u64,
) {
    let mut d = [[0u32; LANES]; MAX_OUT];
    // Row `row` of A and column `col` of B for block `blk`, K long each.
    let vectors = |blk: usize, row: usize, col: usize| {
        let ia = (a_block(blk) * s.m + row) * s.k;
        let ib = (blk * s.n + col) * s.k;
        (
            a.get(ia..ia + s.k).unwrap_or(&[]),
            b.get(ib..ib + s.k).unwrap_or(&[]),
        )
    };
    match s.out {
        Out::F32 | Out::I32 => {
            for r in 0..n {
                for l in 0..LANES {
                    let (blk, row, col) = s.out_pos(r, l);
                    let (x, y) = vectors(blk, row, col);
                    let sum: f64 = x.iter().zip(y).map(|(p, q)| p * q).sum();
                    d[r][l] = if s.out == Out::F32 {
                        ((sum + f64::from(f32::from_bits(c[r][l]))) as f32).to_bits()
                    } else {
                        (sum as i64).wrapping_add(i64::from(c[r][l] as i32)) as u32
                    };
                }
            }
        }
        Out::F64 => {
            for p in 0..n / 2 {
                for l in 0..LANES {
                    let (blk, row, col) = s.out_pos(p, l);
                    let mut x =
                        f64::from_bits(u64::from(c[2 * p][l]) | u64::from(c[2 * p + 1][l]) << 32);
                    let (u, v) = vectors(blk, row, col);
                    for (p0, p1) in u.iter().zip(v) {
                        x = p0.mul_add(*p1, x);
                    }
                    d[2 * p][l] = x.to_bits() as u32;
                    d[2 * p + 1][l] = (x.to_bits() >> 32) as u32;
                }
            }
        }
    }
    for r in 0..n {
        put(w, rd + r, exec, &d[r]);
    }
}

/// `v_smfmac_*` (gfx940): `D = A * B + D` with a 4:2 sparse A. Lane `l`
/// holds, for each of its groups of four K positions (from
/// `(l / M) * kpl` on), two stored A values; the group's 4-bit field of
/// the index register (source 2, a VGPR) gives their positions in the
/// group, bits [1:0] for the first and [3:2] for the second. ABID picks
/// the set of fields (bit `ABID * kpl` on). Two values placed at one
/// position stop the wave as unimplemented (not modelled).
fn smfmac(w: &mut Wave, i: &Inst, s: &Shape) -> Flow {
    let m = &i.mods;
    let abid = usize::from(m.opsel | (m.opsel_hi >> 2) << 3);
    if m.abs != 0 || m.neg != 0 || abid * s.kpl >= 32 {
        return unimplemented(i, "CBSZ/BLGP or ABID form");
    }
    if w.vgpr.len() < 512 {
        return unimplemented(i, "no AccVGPRs");
    }
    let exec = w.exec();
    if exec != u64::MAX {
        return unimplemented(i, "EXEC not all ones");
    }
    let acc = |on: bool| if on { 256 } else { 0 };
    let (sa, sb, sx) = (i.src[0], i.src[1], i.src[2]);
    if sa < reg::VGPR0 || sb < reg::VGPR0 || sx < reg::VGPR0 {
        return unimplemented(i, "operand kinds");
    }
    let ra = usize::from(sa - reg::VGPR0) + acc(m.opsel_hi & 1 != 0);
    let rb = usize::from(sb - reg::VGPR0) + acc(m.opsel_hi & 2 != 0);
    let rd = vdst(i) + acc(m.clamp);
    let mut b = [0f64; MAX_IN];
    gather(w, s, rb, false, |l| l, &mut b);
    let mut regs = [[0u32; LANES]; 4];
    get(w, ra, &mut regs[0]);
    get(w, ra + 1, &mut regs[1]);
    let mut index = [0u32; LANES];
    get(w, usize::from(sx - reg::VGPR0), &mut index);
    let bits = s.a.bits();
    let mut a = [0f64; MAX_IN];
    for l in 0..LANES {
        let (row, base) = (l % s.m, (l / s.m) * s.kpl);
        for q in 0..s.kpl / 4 {
            let field = index[l] >> (abid * s.kpl + 4 * q);
            let (i0, i1) = ((field & 3) as usize, (field >> 2 & 3) as usize);
            if i0 == i1 {
                return unimplemented(i, "two values at one sparse position");
            }
            for (t, at) in [(0, i0), (1, i1)] {
                let x = s.a.value(element(&regs, l, 2 * q + t, bits));
                if let Some(slot) = a.get_mut(row * s.k + base + 4 * q + at) {
                    *slot = x;
                }
            }
        }
    }
    let n = s.out_regs().min(MAX_OUT);
    let mut c = [[0u32; LANES]; MAX_OUT];
    for r in 0..n {
        get(w, rd + r, &mut c[r]);
    }
    product(w, s, &a, &b, |blk| blk, &c, n, rd, exec);
    Flow::Next
}

/// Declares the shapes by mnemonic: `shape_of` and `lookup`, whose
/// executors each see their shape as a constant.
macro_rules! shapes {
    ($($($name:literal)|+ => $shape:expr,)*) => {
        /// The shape of MFMA mnemonic `name` (gfx90a and gfx940 spellings).
        #[cfg(test)]
        fn shape_of(name: &str) -> Option<Shape> {
            match name {
                $($($name)|+ => Some($shape),)*
                _ => None,
            }
        }

        /// The executor of an MFMA mnemonic.
        pub(super) fn lookup(name: &str) -> Option<Exec> {
            Some(match name {
                $($($name)|+ => |w, i, c| {
                    const S: Shape = $shape;
                    if S.sparse {
                        smfmac(w, i, &S)
                    } else {
                        mfma(w, i, c.target, &S)
                    }
                },)*
                _ => return None,
            })
        }
    };
}

use Out::{F32 as OF32, F64 as OF64, I32};
use Ty::*;

shapes! {
    "v_mfma_f32_32x32x1f32" | "v_mfma_f32_32x32x1_2b_f32" => shape(32, 1, 2, 1, F32, OF32),
    "v_mfma_f32_16x16x1f32" | "v_mfma_f32_16x16x1_4b_f32" => shape(16, 1, 4, 1, F32, OF32),
    "v_mfma_f32_4x4x1f32" | "v_mfma_f32_4x4x1_16b_f32" => shape(4, 1, 16, 1, F32, OF32),
    "v_mfma_f32_32x32x2f32" | "v_mfma_f32_32x32x2_f32" => shape(32, 2, 1, 1, F32, OF32),
    "v_mfma_f32_16x16x4f32" | "v_mfma_f32_16x16x4_f32" => shape(16, 4, 1, 1, F32, OF32),
    "v_mfma_f32_32x32x4f16" | "v_mfma_f32_32x32x4_2b_f16" => shape(32, 4, 2, 4, F16, OF32),
    "v_mfma_f32_16x16x4f16" | "v_mfma_f32_16x16x4_4b_f16" => shape(16, 4, 4, 4, F16, OF32),
    "v_mfma_f32_4x4x4f16" | "v_mfma_f32_4x4x4_16b_f16" => shape(4, 4, 16, 4, F16, OF32),
    "v_mfma_f32_32x32x8f16" | "v_mfma_f32_32x32x8_f16" => shape(32, 8, 1, 4, F16, OF32),
    "v_mfma_f32_16x16x16f16" | "v_mfma_f32_16x16x16_f16" => shape(16, 16, 1, 4, F16, OF32),
    "v_mfma_i32_32x32x4i8" | "v_mfma_i32_32x32x4_2b_i8" => shape(32, 4, 2, 4, I8, I32),
    "v_mfma_i32_16x16x4i8" | "v_mfma_i32_16x16x4_4b_i8" => shape(16, 4, 4, 4, I8, I32),
    "v_mfma_i32_4x4x4i8" | "v_mfma_i32_4x4x4_16b_i8" => shape(4, 4, 16, 4, I8, I32),
    "v_mfma_i32_32x32x8i8" => shape(32, 8, 1, 4, I8, I32),
    "v_mfma_i32_16x16x16i8" => shape(16, 16, 1, 4, I8, I32),
    "v_mfma_i32_32x32x16_i8" => shape(32, 16, 1, 8, I8, I32),
    "v_mfma_i32_16x16x32_i8" => shape(16, 32, 1, 8, I8, I32),
    "v_mfma_f32_32x32x4bf16_1k" | "v_mfma_f32_32x32x4_2b_bf16" => shape(32, 4, 2, 4, Bf16, OF32),
    "v_mfma_f32_16x16x4bf16_1k" | "v_mfma_f32_16x16x4_4b_bf16" => shape(16, 4, 4, 4, Bf16, OF32),
    "v_mfma_f32_4x4x4bf16_1k" | "v_mfma_f32_4x4x4_16b_bf16" => shape(4, 4, 16, 4, Bf16, OF32),
    "v_mfma_f32_32x32x8bf16_1k" | "v_mfma_f32_32x32x8_bf16" => shape(32, 8, 1, 4, Bf16, OF32),
    "v_mfma_f32_16x16x16bf16_1k" | "v_mfma_f32_16x16x16_bf16" => shape(16, 16, 1, 4, Bf16, OF32),
    "v_mfma_f32_32x32x2bf16" => shape(32, 2, 2, 2, Bf16, OF32),
    "v_mfma_f32_16x16x2bf16" => shape(16, 2, 4, 2, Bf16, OF32),
    "v_mfma_f32_4x4x2bf16" => shape(4, 2, 16, 2, Bf16, OF32),
    "v_mfma_f32_32x32x4bf16" => shape(32, 4, 1, 2, Bf16, OF32),
    "v_mfma_f32_16x16x8bf16" => shape(16, 8, 1, 2, Bf16, OF32),
    "v_mfma_f64_16x16x4f64" | "v_mfma_f64_16x16x4_f64" => shape(16, 4, 1, 1, F64, OF64),
    "v_mfma_f64_4x4x4f64" | "v_mfma_f64_4x4x4_4b_f64" => shape(4, 4, 4, 1, F64, OF64),
    "v_mfma_f32_16x16x32_fp8_fp8" => fp8(16, 32, Fp8, Fp8),
    "v_mfma_f32_16x16x32_fp8_bf8" => fp8(16, 32, Fp8, Bf8),
    "v_mfma_f32_16x16x32_bf8_fp8" => fp8(16, 32, Bf8, Fp8),
    "v_mfma_f32_16x16x32_bf8_bf8" => fp8(16, 32, Bf8, Bf8),
    "v_mfma_f32_32x32x16_fp8_fp8" => fp8(32, 16, Fp8, Fp8),
    "v_mfma_f32_32x32x16_fp8_bf8" => fp8(32, 16, Fp8, Bf8),
    "v_mfma_f32_32x32x16_bf8_fp8" => fp8(32, 16, Bf8, Fp8),
    "v_mfma_f32_32x32x16_bf8_bf8" => fp8(32, 16, Bf8, Bf8),
    "v_smfmac_f32_16x16x32_f16" => sparse(16, 32, F16, F16, OF32),
    "v_smfmac_f32_32x32x16_f16" => sparse(32, 16, F16, F16, OF32),
    "v_smfmac_f32_16x16x32_bf16" => sparse(16, 32, Bf16, Bf16, OF32),
    "v_smfmac_f32_32x32x16_bf16" => sparse(32, 16, Bf16, Bf16, OF32),
    "v_smfmac_i32_16x16x64_i8" => sparse(16, 64, I8, I8, I32),
    "v_smfmac_i32_32x32x32_i8" => sparse(32, 32, I8, I8, I32),
    "v_smfmac_f32_16x16x64_bf8_bf8" => sparse(16, 64, Bf8, Bf8, OF32),
    "v_smfmac_f32_16x16x64_bf8_fp8" => sparse(16, 64, Bf8, Fp8, OF32),
    "v_smfmac_f32_16x16x64_fp8_bf8" => sparse(16, 64, Fp8, Bf8, OF32),
    "v_smfmac_f32_16x16x64_fp8_fp8" => sparse(16, 64, Fp8, Fp8, OF32),
    "v_smfmac_f32_32x32x32_bf8_bf8" => sparse(32, 32, Bf8, Bf8, OF32),
    "v_smfmac_f32_32x32x32_bf8_fp8" => sparse(32, 32, Bf8, Fp8, OF32),
    "v_smfmac_f32_32x32x32_fp8_bf8" => sparse(32, 32, Fp8, Bf8, OF32),
    "v_smfmac_f32_32x32x32_fp8_fp8" => sparse(32, 32, Fp8, Fp8, OF32),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_covers_its_matrices_once() {
        let names = [
            "v_mfma_f32_32x32x1f32",
            "v_mfma_f32_16x16x1f32",
            "v_mfma_f32_4x4x1f32",
            "v_mfma_f32_32x32x2f32",
            "v_mfma_f32_16x16x4f32",
            "v_mfma_f32_32x32x4f16",
            "v_mfma_f32_16x16x4f16",
            "v_mfma_f32_4x4x4f16",
            "v_mfma_f32_32x32x8f16",
            "v_mfma_f32_16x16x16f16",
            "v_mfma_i32_32x32x16_i8",
            "v_mfma_i32_16x16x32_i8",
            "v_mfma_f32_32x32x2bf16",
            "v_mfma_f32_16x16x2bf16",
            "v_mfma_f32_4x4x2bf16",
            "v_mfma_f32_32x32x4bf16",
            "v_mfma_f32_16x16x8bf16",
            "v_mfma_f64_16x16x4f64",
            "v_mfma_f64_4x4x4f64",
            "v_mfma_f32_32x32x16_fp8_bf8",
        ];
        for name in names {
            let s = shape_of(name).unwrap();
            assert_eq!(LANES / s.m / s.blocks * s.kpl, s.k, "{name}");
            assert!(s.blocks * s.m * s.k <= MAX_IN && s.out_regs() <= MAX_OUT);
            let mut seen = vec![0u32; s.blocks * s.m * s.k];
            for l in 0..LANES {
                for e in 0..s.kpl {
                    let (b, i, k) = s.in_pos(s.m, l, e);
                    seen[(b * s.m + i) * s.k + k] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "{name} A");
            let per = if s.out == Out::F64 { 2 } else { 1 };
            let mut seen = vec![0u32; s.blocks * s.m * s.n];
            for r in 0..s.out_regs() / per {
                for l in 0..LANES {
                    let (b, i, j) = s.out_pos(r, l);
                    seen[(b * s.m + i) * s.n + j] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "{name} D");
        }
    }

    #[test]
    fn fnuz8_formats() {
        assert_eq!(Ty::Fp8.value(0x40), 1.0); // exponent 8 = bias
        assert_eq!(Ty::Fp8.value(0x7f), 240.0);
        assert_eq!(Ty::Fp8.value(0x01), 2f64.powi(-10));
        assert_eq!(Ty::Bf8.value(0x40), 1.0);
        assert_eq!(Ty::Bf8.value(0x7f), 57344.0);
        assert_eq!(Ty::Bf8.value(0xc1), -1.25);
        assert_eq!(Ty::Bf8.value(0x81), -(0.25 * 2f64.powi(-15)));
        assert!(Ty::Fp8.value(0x80).is_nan());
        assert_eq!(Ty::Fp8.value(0x00), 0.0);
    }
}
