//! Vector memory: FLAT, GLOBAL and SCRATCH instructions (per-lane
//! addresses) and MUBUF (buffer resources), plus the atomic arithmetic
//! the DS instructions share.
//!
//! # Addressing
//!
//! * FLAT: a 64-bit VGPR address plus a 12-bit unsigned offset; the
//!   address's aperture picks global memory, LDS or the lane's private
//!   memory ([`Ctx::segment`]).
//! * GLOBAL: a 64-bit VGPR address, or (SADDR not `off`) a 64-bit SGPR
//!   base plus a 32-bit VGPR offset; plus a 13-bit signed offset. Always
//!   global memory.
//! * SCRATCH: a per-lane byte offset in the private segment: VADDR (32
//!   bits) and/or SADDR (a 32-bit SGPR) plus the 13-bit signed offset. On
//!   gfx900/gfx90a VADDR is used exactly when SADDR is `off`; on gfx940
//!   the SVE bit (word 0 bit 13) says whether VADDR is used and both may
//!   be `off`. The FLAT_SCRATCH base is not added: every wave has its own
//!   private memory in this model and FLAT_SCRATCH always names its start
//!   ([`PRIVATE_WINDOW`]).
//! * MUBUF: the buffer resource's base plus SOFFSET plus the linear
//!   (`offset + stride * index`) or swizzled buffer offset of the ISA
//!   manual. The range check: with IDXEN and a non-zero stride (a
//!   structured buffer) the index is checked against NUM_RECORDS, else the
//!   offset (VADDR + instruction offset; SOFFSET is not part of the check,
//!   as LLVM's buffer intrinsics document); per dword for the
//!   `dwordx2/x3/x4` forms. Out of range, loads return zero and stores
//!   and atomics are dropped. A resource whose base lies in the private
//!   window is the private segment buffer: its addresses are byte offsets
//!   into the wave's private memory, which is laid out as the hardware
//!   swizzles scratch (dword `i` of lane `l` at byte `(i * 64 + l) * 4`),
//!   so that a buffer access with the wave-scaled stack offset in SOFFSET
//!   (`s32` on gfx90a) reaches the same bytes as a flat or scratch access
//!   with the lane's unscaled offset (`s32 >> 6`).
//!
//! The ACC bit (word 1 bit 23, gfx90a and gfx940) makes the data and
//! destination registers AccVGPRs (`Wave::vgpr[256 + n]`); on gfx900 the
//! same bit is MUBUF's TFE, which is not modelled, and FLAT's NV, which
//! changes nothing here.
//!
//! # Atomics
//!
//! Global memory atomics are atomic read-modify-writes of the host memory
//! ([`crate::mem::Tlb::update`]), so lanes, waves and worker threads
//! hitting one address give exact results; LDS and private memory belong
//! to one thread at a time. GLC (gfx940: SC0) returns the pre-op value.
//! Float atomics round to nearest even and follow the MODE register's
//! denormal controls; min/max are IEEE minNum/maxNum with -0 below +0.
//!
//! Not modelled (reported as unimplemented): loads into LDS (MUBUF LDS=1,
//! FLAT LDS bit, gfx940 `*_load_lds_*`), typed `buffer_*_format_*`
//! instructions, TFE.

use super::{unimplemented, Ctx, Exec, Flow, PRIVATE_WINDOW};
use crate::mem::{Fault, Word};
use crate::shader::isa::{Enc, Inst, Target};
use crate::shader::wave::{Wave, LANES};

// Load kinds.
const L_UBYTE: u8 = 0;
const L_SBYTE: u8 = 1;
const L_USHORT: u8 = 2;
const L_SSHORT: u8 = 3;
const L_UBYTE_D16: u8 = 4;
const L_UBYTE_D16_HI: u8 = 5;
const L_SBYTE_D16: u8 = 6;
const L_SBYTE_D16_HI: u8 = 7;
const L_SHORT_D16: u8 = 8;
const L_SHORT_D16_HI: u8 = 9;
/// `dword` .. `dwordx4`: `L_DWORD + n - 1`.
const L_DWORD: u8 = 10;

// Store kinds.
const S_BYTE: u8 = 0;
const S_SHORT: u8 = 1;
const S_BYTE_D16_HI: u8 = 2;
const S_SHORT_D16_HI: u8 = 3;
/// `dword` .. `dwordx4`: `S_DWORD + n - 1`.
const S_DWORD: u8 = 4;

/// Atomic operations (shared with the DS executors). `a` and `b` are the
/// operation's two data operands: the source (and the compare value of
/// the compare-swaps, the OR mask of MSKOR, the add value of WRAP).
pub(super) mod atom {
    /// `old = a`.
    pub const SWAP: u8 = 0;
    /// `old == b ? a : old` (integer compare).
    pub const CMPSWAP: u8 = 1;
    /// `old + a`.
    pub const ADD: u8 = 2;
    /// `old - a`.
    pub const SUB: u8 = 3;
    /// `a - old`.
    pub const RSUB: u8 = 4;
    /// Signed minimum.
    pub const SMIN: u8 = 5;
    /// Unsigned minimum.
    pub const UMIN: u8 = 6;
    /// Signed maximum.
    pub const SMAX: u8 = 7;
    /// Unsigned maximum.
    pub const UMAX: u8 = 8;
    /// `old & a`.
    pub const AND: u8 = 9;
    /// `old | a`.
    pub const OR: u8 = 10;
    /// `old ^ a`.
    pub const XOR: u8 = 11;
    /// `old >= a ? 0 : old + 1`.
    pub const INC: u8 = 12;
    /// `old == 0 || old > a ? a : old - 1`.
    pub const DEC: u8 = 13;
    /// `(old & !a) | b`.
    pub const MSKOR: u8 = 14;
    /// `old >= a ? old - a : old + b` (32-bit only).
    pub const WRAP: u8 = 15;
    /// `old == b ? a : old` (floating-point compare: -0 == +0, NaN never
    /// equal).
    pub const CMPSWAP_F: u8 = 16;
    /// Floating-point add.
    pub const ADD_F: u8 = 17;
    /// Floating-point minimum.
    pub const MIN_F: u8 = 18;
    /// Floating-point maximum.
    pub const MAX_F: u8 = 19;
    /// Two packed half-precision adds (32-bit only).
    pub const PK_ADD_F16: u8 = 20;
    /// Two packed bfloat16 adds (32-bit only).
    pub const PK_ADD_BF16: u8 = 21;
    /// `old - a`, clamped at 0 (gfx11 `csub`, 32-bit only).
    pub const CSUB: u8 = 22;
}

/// The executor of a vector-memory mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    let op = ["flat_", "global_", "scratch_", "buffer_"]
        .iter()
        .find_map(|p| name.strip_prefix(p))?;
    if name.starts_with("buffer_") {
        // Cache write-backs and invalidates: memory is coherent here (one
        // wave runs at a time per workgroup and every access completes
        // before the next instruction).
        if matches!(
            op,
            "wbinvl1" | "wbinvl1_vol" | "wbl2" | "invl2" | "inv" | "gl0_inv" | "gl1_inv"
        ) {
            return Some(|_, _, _| Flow::Next);
        }
    }
    if let Some(k) = op.strip_prefix("load_") {
        return load_exec(k);
    }
    if let Some(k) = op.strip_prefix("store_") {
        return store_exec(k);
    }
    if let Some(k) = op.strip_prefix("atomic_") {
        return atomic_exec(k);
    }
    None
}

fn load_exec(k: &str) -> Option<Exec> {
    Some(match k {
        "ubyte" => load::<L_UBYTE>,
        "sbyte" => load::<L_SBYTE>,
        "ushort" => load::<L_USHORT>,
        "sshort" => load::<L_SSHORT>,
        "ubyte_d16" => load::<L_UBYTE_D16>,
        "ubyte_d16_hi" => load::<L_UBYTE_D16_HI>,
        "sbyte_d16" => load::<L_SBYTE_D16>,
        "sbyte_d16_hi" => load::<L_SBYTE_D16_HI>,
        "short_d16" => load::<L_SHORT_D16>,
        "short_d16_hi" => load::<L_SHORT_D16_HI>,
        "dword" => load::<L_DWORD>,
        "dwordx2" => load::<{ L_DWORD + 1 }>,
        "dwordx3" => load::<{ L_DWORD + 2 }>,
        "dwordx4" => load::<{ L_DWORD + 3 }>,
        _ => return None,
    })
}

fn store_exec(k: &str) -> Option<Exec> {
    Some(match k {
        "byte" => store::<S_BYTE>,
        "short" => store::<S_SHORT>,
        "byte_d16_hi" => store::<S_BYTE_D16_HI>,
        "short_d16_hi" => store::<S_SHORT_D16_HI>,
        "dword" => store::<S_DWORD>,
        "dwordx2" => store::<{ S_DWORD + 1 }>,
        "dwordx3" => store::<{ S_DWORD + 2 }>,
        "dwordx4" => store::<{ S_DWORD + 3 }>,
        _ => return None,
    })
}

fn atomic_exec(k: &str) -> Option<Exec> {
    use atom::*;
    Some(match k {
        "swap" => atomic::<SWAP, false>,
        "cmpswap" => atomic::<CMPSWAP, false>,
        "add" => atomic::<ADD, false>,
        "sub" => atomic::<SUB, false>,
        "smin" => atomic::<SMIN, false>,
        "umin" => atomic::<UMIN, false>,
        "smax" => atomic::<SMAX, false>,
        "umax" => atomic::<UMAX, false>,
        "and" => atomic::<AND, false>,
        "or" => atomic::<OR, false>,
        "xor" => atomic::<XOR, false>,
        "inc" => atomic::<INC, false>,
        "dec" => atomic::<DEC, false>,
        "swap_x2" => atomic::<SWAP, true>,
        "cmpswap_x2" => atomic::<CMPSWAP, true>,
        "add_x2" => atomic::<ADD, true>,
        "sub_x2" => atomic::<SUB, true>,
        "smin_x2" => atomic::<SMIN, true>,
        "umin_x2" => atomic::<UMIN, true>,
        "smax_x2" => atomic::<SMAX, true>,
        "umax_x2" => atomic::<UMAX, true>,
        "and_x2" => atomic::<AND, true>,
        "or_x2" => atomic::<OR, true>,
        "xor_x2" => atomic::<XOR, true>,
        "inc_x2" => atomic::<INC, true>,
        "dec_x2" => atomic::<DEC, true>,
        "add_f32" => atomic::<ADD_F, false>,
        "cmpswap_f32" => atomic::<CMPSWAP_F, false>,
        "min_f32" => atomic::<MIN_F, false>,
        "max_f32" => atomic::<MAX_F, false>,
        "csub_u32" => atomic::<CSUB, false>,
        "pk_add_f16" => atomic::<PK_ADD_F16, false>,
        "pk_add_bf16" => atomic::<PK_ADD_BF16, false>,
        "add_f64" => atomic::<ADD_F, true>,
        "min_f64" => atomic::<MIN_F, true>,
        "max_f64" => atomic::<MAX_F, true>,
        _ => return None,
    })
}

/// Where one access of one lane goes.
#[derive(Debug, Clone, Copy)]
enum Loc {
    /// Global memory (GLOBAL instructions and buffers).
    Global(u64),
    /// A flat address: global memory, LDS or private by aperture.
    Flat(u64),
    /// The lane's private segment at this byte offset.
    Private(u32),
    /// The wave's private memory at this (swizzled) byte offset.
    Wave(u64),
    /// Out of the buffer's range: loads read zero, stores are dropped.
    Dropped,
}

/// Which accesses of a buffer are out of range.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Range {
    /// gfx9: a structured buffer (IDXEN and a stride) checks the index
    /// against NUM_RECORDS, any other the offset.
    #[default]
    Gfx9,
    /// gfx11 OOB_SELECT 0: the index against NUM_RECORDS and the offset
    /// against the stride.
    IndexAndOffset,
    /// gfx11 OOB_SELECT 1: the index against NUM_RECORDS.
    Index,
    /// gfx11 OOB_SELECT 2: no check.
    Unchecked,
    /// gfx11 OOB_SELECT 3: the byte offset (`stride * index + offset`)
    /// against NUM_RECORDS.
    Raw,
}

/// The fields of a buffer resource (V#) an access uses.
#[derive(Debug, Clone, Copy, Default)]
struct Buffer {
    range: Range,
    base: u64,
    soffset: u64,
    stride: u64,
    num_records: u64,
    element_size: u64,
    index_stride: u64,
    swizzle: bool,
    add_tid: bool,
    offen: bool,
    idxen: bool,
    private: bool,
}

/// How an instruction addresses memory, decoded once per execution.
#[derive(Debug, Clone, Copy)]
struct Addressing {
    enc: Enc,
    /// The address VGPRs (address, or index then offset; indices into
    /// `Wave::vgpr`, wrapped into the register file once here so the
    /// lane loops do not divide).
    va: [usize; 2],
    use_vaddr: bool,
    /// GLOBAL: the 64-bit SGPR base; SCRATCH: the 32-bit SGPR offset.
    sbase: u64,
    use_saddr: bool,
    /// The instruction's immediate offset.
    offset: i64,
    /// Return the pre-op value of an atomic (GLC / SC0).
    glc: bool,
    /// The destination registers (indices into `Wave::vgpr`).
    dst: [usize; 4],
    /// The data registers.
    dat: [usize; 4],
    buf: Buffer,
}

/// A lane's address before per-dword offsets: a flat/global address, a
/// private offset, or a buffer index and offset.
#[derive(Debug, Clone, Copy)]
struct LaneAddr {
    a: u64,
    idx: u64,
}

impl Addressing {
    fn new(w: &Wave, i: &Inst, target: Target) -> Result<Addressing, Flow> {
        let (w0, w1) = (i.w[0], i.w[1]);
        let acc = target.has_mfma() && w1 >> 23 & 1 != 0;
        let bank = if acc { 256 } else { 0 };
        let n = w.vgpr.len();
        let regs = |r: usize| [0, 1, 2, 3].map(|k| (r + k) % n);
        let va = regs((w1 & 0xff) as usize);
        let mut a = Addressing {
            enc: i.enc,
            va: [va[0], va[1]],
            use_vaddr: true,
            sbase: 0,
            use_saddr: false,
            offset: 0,
            glc: false,
            dst: regs(bank + (w1 >> 24) as usize),
            dat: regs(bank + ((w1 >> 8) & 0xff) as usize),
            buf: Buffer::default(),
        };
        match i.enc {
            Enc::Mubuf => {
                if w0 >> 16 & 1 != 0 {
                    return Err(unimplemented(i, "LDS=1: loads into LDS"));
                }
                if !target.has_mfma() && w1 >> 23 & 1 != 0 {
                    return Err(unimplemented(i, "TFE"));
                }
                a.offset = i64::from(w0 & 0xfff);
                a.glc = w0 >> 14 & 1 != 0;
                a.dst = a.dat;
                let r = ((w1 >> 16) & 0x1f) as usize * 4;
                let v = [0, 1, 2, 3].map(|k| w.sgpr[(r + k) & 127]);
                if target.is_gfx11() {
                    a.buf = gfx11_buffer(w, i, v)?;
                    return Ok(a);
                }
                let data_format = u64::from((v[3] >> 15) & 0xf);
                let add_tid = v[3] >> 23 & 1 != 0;
                let mut stride = u64::from((v[1] >> 16) & 0x3fff);
                if add_tid {
                    // With ADD_TID_ENABLE the data format field holds
                    // stride bits 17:14.
                    stride |= data_format << 14;
                }
                let base = u64::from(v[0]) | u64::from(v[1] & 0xffff) << 32;
                a.buf = Buffer {
                    range: Range::Gfx9,
                    base,
                    soffset: u64::from(w.read32(((w1 >> 24) & 0xff) as u16, None)),
                    stride,
                    num_records: u64::from(v[2]),
                    element_size: 2 << ((v[3] >> 19) & 3),
                    index_stride: 8 << ((v[3] >> 21) & 3),
                    swizzle: v[1] >> 31 != 0,
                    add_tid,
                    offen: w0 >> 12 & 1 != 0,
                    idxen: w0 >> 13 & 1 != 0,
                    private: base.wrapping_sub(PRIVATE_WINDOW) < 1 << 32,
                };
            }
            _ => {
                let bit13 = w0 >> 13 & 1 != 0;
                let saddr = ((w1 >> 16) & 0x7f) as u16;
                a.glc = w0 >> 16 & 1 != 0;
                a.offset = if i.enc == Enc::Flat {
                    i64::from(w0 & 0xfff)
                } else {
                    i64::from(((w0 & 0x1fff) << 19) as i32 >> 19)
                };
                match i.enc {
                    Enc::Scratch => {
                        if target.scratch_sve() {
                            a.use_vaddr = bit13;
                        } else if bit13 {
                            return Err(unimplemented(i, "LDS=1: loads into LDS"));
                        } else {
                            a.use_vaddr = saddr == 0x7f;
                        }
                        a.use_saddr = saddr != 0x7f;
                        if a.use_saddr {
                            a.sbase = u64::from(w.read32(saddr, None));
                        }
                    }
                    _ => {
                        if bit13 {
                            return Err(unimplemented(i, "LDS=1: loads into LDS"));
                        }
                        a.use_saddr = i.enc == Enc::Global && saddr != 0x7f;
                        if a.use_saddr {
                            a.sbase = w.read64(saddr, None);
                        }
                    }
                }
            }
        }
        Ok(a)
    }

    /// Lane `l`'s address (read before any register of the instruction is
    /// written).
    #[inline]
    fn lane(&self, w: &Wave, l: usize) -> LaneAddr {
        let v = |k: usize| w.vgpr[self.va[k]][l];
        match self.enc {
            Enc::Flat | Enc::Global => {
                let base = if self.use_saddr {
                    self.sbase.wrapping_add(u64::from(v(0)))
                } else {
                    u64::from(v(0)) | u64::from(v(1)) << 32
                };
                LaneAddr {
                    a: base.wrapping_add(self.offset as u64),
                    idx: 0,
                }
            }
            Enc::Scratch => {
                let mut off = self.offset as u32;
                if self.use_vaddr {
                    off = off.wrapping_add(v(0));
                }
                if self.use_saddr {
                    off = off.wrapping_add(self.sbase as u32);
                }
                LaneAddr {
                    a: u64::from(off),
                    idx: 0,
                }
            }
            _ => {
                let b = &self.buf;
                let mut idx = if b.idxen { u64::from(v(0)) } else { 0 };
                if b.add_tid {
                    idx += l as u64;
                }
                let mut off = self.offset as u32;
                if b.offen {
                    off = off.wrapping_add(v(usize::from(b.idxen)));
                }
                LaneAddr {
                    a: u64::from(off),
                    idx,
                }
            }
        }
    }

    /// Where byte `d` past lane address `la` goes.
    #[inline]
    fn loc(&self, la: LaneAddr, d: u32) -> Loc {
        match self.enc {
            Enc::Flat => Loc::Flat(la.a.wrapping_add(u64::from(d))),
            Enc::Global => Loc::Global(la.a.wrapping_add(u64::from(d))),
            Enc::Scratch => Loc::Private((la.a as u32).wrapping_add(d)),
            _ => {
                let b = &self.buf;
                let off = u64::from((la.a as u32).wrapping_add(d));
                let out = match b.range {
                    Range::Gfx9 if b.idxen && b.stride != 0 => la.idx >= b.num_records,
                    Range::Gfx9 => off >= b.num_records,
                    Range::IndexAndOffset => la.idx >= b.num_records || off >= b.stride,
                    Range::Index => la.idx >= b.num_records,
                    Range::Unchecked => false,
                    Range::Raw => off + b.stride * la.idx >= b.num_records,
                };
                if out {
                    return Loc::Dropped;
                }
                let boff = if b.swizzle {
                    let (im, il) = (la.idx / b.index_stride, la.idx % b.index_stride);
                    let (om, ol) = (off / b.element_size, off % b.element_size);
                    (im * b.stride + om * b.element_size) * b.index_stride
                        + il * b.element_size
                        + ol
                } else {
                    off + b.stride * la.idx
                };
                let addr = b.base.wrapping_add(b.soffset).wrapping_add(boff);
                if b.private {
                    Loc::Wave(addr.wrapping_sub(PRIVATE_WINDOW))
                } else {
                    Loc::Global(addr & 0xffff_ffff_ffff)
                }
            }
        }
    }
}

/// The buffer of gfx11 resource `v` (V#: base 47:0, stride 61:48,
/// swizzle 63:62, NUM_RECORDS, then the selects and format, index
/// stride 22:21, ADD_TID 23 and OOB_SELECT 29:28 of the last dword).
/// Swizzled buffers and ADD_TID stop the wave as unimplemented.
fn gfx11_buffer(w: &Wave, i: &Inst, v: [u32; 4]) -> Result<Buffer, Flow> {
    if v[1] >> 30 != 0 {
        return Err(unimplemented(i, "swizzled buffer"));
    }
    if v[3] >> 23 & 1 != 0 {
        return Err(unimplemented(i, "ADD_TID_ENABLE"));
    }
    let base = u64::from(v[0]) | u64::from(v[1] & 0xffff) << 32;
    let w1 = i.w[1];
    Ok(Buffer {
        range: match v[3] >> 28 & 3 {
            0 => Range::IndexAndOffset,
            1 => Range::Index,
            2 => Range::Unchecked,
            _ => Range::Raw,
        },
        base,
        soffset: u64::from(w.read32(((w1 >> 24) & 0xff) as u16, None)),
        stride: u64::from((v[1] >> 16) & 0x3fff),
        num_records: u64::from(v[2]),
        element_size: 4,
        index_stride: 8 << ((v[3] >> 21) & 3),
        swizzle: false,
        add_tid: false,
        offen: i.w[0] >> 12 & 1 != 0,
        idxen: i.w[0] >> 13 & 1 != 0,
        private: base.wrapping_sub(PRIVATE_WINDOW) < 1 << 32,
    })
}

/// The lane and per-lane offset of byte `b` of the wave's swizzled
/// private memory.
#[inline]
fn unswizzle(b: u64) -> Result<(usize, u32), Fault> {
    let dw = b / 4;
    let off = (dw / LANES as u64) * 4 + b % 4;
    u32::try_from(off)
        .map(|o| ((dw % LANES as u64) as usize, o))
        .map_err(|_| Fault::not_present(PRIVATE_WINDOW.wrapping_add(b), false))
}

fn wave_load<T: Word>(c: &mut Ctx<'_, '_>, b: u64) -> Result<T, Fault> {
    if (b % 4) as usize + T::SIZE <= 4 {
        let (l, o) = unswizzle(b)?;
        return c.private_load(l, o);
    }
    let mut x = [0u8; 8];
    for (j, y) in x[..T::SIZE].iter_mut().enumerate() {
        let (l, o) = unswizzle(b.wrapping_add(j as u64))?;
        *y = c.private_load(l, o)?;
    }
    Ok(T::from_bytes(&x))
}

fn wave_store<T: Word>(c: &mut Ctx<'_, '_>, b: u64, v: T) -> Result<(), Fault> {
    if (b % 4) as usize + T::SIZE <= 4 {
        let (l, o) = unswizzle(b)?;
        return c.private_store(l, o, v);
    }
    let mut x = [0u8; 8];
    v.to_bytes(&mut x);
    for (j, y) in x[..T::SIZE].iter().enumerate() {
        let (l, o) = unswizzle(b.wrapping_add(j as u64))?;
        c.private_store(l, o, *y)?;
    }
    Ok(())
}

#[inline]
fn ld<T: Word>(c: &mut Ctx<'_, '_>, lane: usize, loc: Loc) -> Result<T, Fault> {
    match loc {
        Loc::Global(a) => c.tlb.load(a),
        Loc::Flat(a) => c.flat_load(lane, a),
        Loc::Private(o) => c.private_load(lane, o),
        Loc::Wave(b) => wave_load(c, b),
        Loc::Dropped => Ok(T::default()),
    }
}

#[inline]
fn st<T: Word>(c: &mut Ctx<'_, '_>, lane: usize, loc: Loc, v: T) -> Result<(), Fault> {
    match loc {
        Loc::Global(a) => c.tlb.store(a, v),
        Loc::Flat(a) => c.flat_store(lane, a, v),
        Loc::Private(o) => c.private_store(lane, o, v),
        Loc::Wave(b) => wave_store(c, b, v),
        Loc::Dropped => Ok(()),
    }
}

#[inline]
fn update<T: Word>(
    c: &mut Ctx<'_, '_>,
    lane: usize,
    loc: Loc,
    f: &mut dyn FnMut(T) -> T,
) -> Result<T, Fault> {
    match loc {
        Loc::Global(a) => c.tlb.update(a, f),
        Loc::Flat(a) => c.flat_update(lane, a, f),
        // Private memory belongs to the running wave: a read-modify-write
        // is atomic.
        Loc::Private(o) => {
            let old = c.private_load::<T>(lane, o)?;
            c.private_store(lane, o, f(old))?;
            Ok(old)
        }
        Loc::Wave(b) => {
            let old = wave_load::<T>(c, b)?;
            wave_store(c, b, f(old))?;
            Ok(old)
        }
        Loc::Dropped => Ok(T::default()),
    }
}

/// Runs `f` for every lane in EXEC, stopping at the first fault. A
/// 64-bit atomic (`qword_atomic`) on a swizzled buffer in global memory
/// whose elements are smaller than 8 bytes would be split by the
/// hardware into two non-atomic halves: not modelled.
#[inline]
fn lanes(
    w: &mut Wave,
    i: &Inst,
    c: &mut Ctx<'_, '_>,
    qword_atomic: bool,
    mut f: impl FnMut(&mut Wave, &Addressing, &mut Ctx<'_, '_>, usize) -> Result<(), Fault>,
) -> Flow {
    let a = match Addressing::new(w, i, c.target) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let b = &a.buf;
    if qword_atomic && a.enc == Enc::Mubuf && b.swizzle && !b.private && b.element_size < 8 {
        return unimplemented(
            i,
            "64-bit atomic on a swizzled buffer with elements below 8 bytes",
        );
    }
    let exec = w.exec();
    for l in 0..LANES {
        if exec >> l & 1 != 0 {
            if let Err(e) = f(w, &a, c, l) {
                return e.into();
            }
        }
    }
    Flow::Next
}

fn load<const K: u8>(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>) -> Flow {
    lanes(w, i, c, false, |w, a, c, l| {
        let la = a.lane(w, l);
        let at = a.loc(la, 0);
        let r = a.dst[0];
        let cur = w.vgpr[r][l];
        let v = match K {
            L_UBYTE => u32::from(ld::<u8>(c, l, at)?),
            L_SBYTE => ld::<u8>(c, l, at)? as i8 as u32,
            L_USHORT => u32::from(ld::<u16>(c, l, at)?),
            L_SSHORT => ld::<u16>(c, l, at)? as i16 as u32,
            L_UBYTE_D16 => cur & 0xffff_0000 | u32::from(ld::<u8>(c, l, at)?),
            L_UBYTE_D16_HI => cur & 0xffff | u32::from(ld::<u8>(c, l, at)?) << 16,
            L_SBYTE_D16 => cur & 0xffff_0000 | u32::from(ld::<u8>(c, l, at)? as i8 as i16 as u16),
            L_SBYTE_D16_HI => {
                cur & 0xffff | u32::from(ld::<u8>(c, l, at)? as i8 as i16 as u16) << 16
            }
            L_SHORT_D16 => cur & 0xffff_0000 | u32::from(ld::<u16>(c, l, at)?),
            L_SHORT_D16_HI => cur & 0xffff | u32::from(ld::<u16>(c, l, at)?) << 16,
            _ => {
                let cnt = usize::from(K - L_DWORD + 1).min(4);
                let mut v = [0u32; 4];
                for (k, x) in v[..cnt].iter_mut().enumerate() {
                    *x = ld::<u32>(c, l, a.loc(la, 4 * k as u32))?;
                }
                for (k, x) in v[..cnt].iter().enumerate() {
                    w.vgpr[a.dst[k]][l] = *x;
                }
                return Ok(());
            }
        };
        w.vgpr[r][l] = v;
        Ok(())
    })
}

fn store<const K: u8>(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>) -> Flow {
    lanes(w, i, c, false, |w, a, c, l| {
        let la = a.lane(w, l);
        let at = a.loc(la, 0);
        let d = w.vgpr[a.dat[0]][l];
        match K {
            S_BYTE => st(c, l, at, d as u8),
            S_SHORT => st(c, l, at, d as u16),
            S_BYTE_D16_HI => st(c, l, at, (d >> 16) as u8),
            S_SHORT_D16_HI => st(c, l, at, (d >> 16) as u16),
            _ => {
                let cnt = usize::from(K - S_DWORD + 1).min(4);
                for k in 0..cnt {
                    let v = w.vgpr[a.dat[k]][l];
                    st(c, l, a.loc(la, 4 * k as u32), v)?;
                }
                Ok(())
            }
        }
    })
}

/// A FLAT/GLOBAL/MUBUF atomic: `OP` on a dword, or on a qword when `X2`.
/// The data register holds the source; the compare-swaps hold the
/// compare value after it. GLC returns the old value (into VDST for
/// FLAT/GLOBAL, into VDATA for MUBUF).
fn atomic<const OP: u8, const X2: bool>(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>) -> Flow {
    let mode = w.mode;
    lanes(w, i, c, X2, |w, a, c, l| {
        let la = a.lane(w, l);
        let at = a.loc(la, 0);
        let v = |w: &Wave, k: usize| w.vgpr[a.dat[k]][l];
        if X2 {
            let pair = |w: &Wave, k: usize| u64::from(v(w, k)) | u64::from(v(w, k + 1)) << 32;
            let src = pair(w, 0);
            let cmp = if matches!(OP, atom::CMPSWAP | atom::CMPSWAP_F) {
                pair(w, 2)
            } else {
                0
            };
            let old = if let Loc::Wave(_) = at {
                // The private buffer swizzles dwords: the halves lie
                // apart. The wave's private memory is its own, so two
                // accesses are atomic.
                let hi = a.loc(la, 4);
                let old = u64::from(ld::<u32>(c, l, at)?) | u64::from(ld::<u32>(c, l, hi)?) << 32;
                let new = rmw64(OP, old, src, cmp, mode);
                st(c, l, at, new as u32)?;
                st(c, l, hi, (new >> 32) as u32)?;
                old
            } else {
                update::<u64>(c, l, at, &mut |o| rmw64(OP, o, src, cmp, mode))?
            };
            if a.glc {
                w.vgpr[a.dst[0]][l] = old as u32;
                w.vgpr[a.dst[1]][l] = (old >> 32) as u32;
            }
        } else {
            let src = v(w, 0);
            let cmp = if matches!(OP, atom::CMPSWAP | atom::CMPSWAP_F) {
                v(w, 1)
            } else {
                0
            };
            let old = update::<u32>(c, l, at, &mut |o| rmw32(OP, o, src, cmp, mode))?;
            if a.glc {
                w.vgpr[a.dst[0]][l] = old;
            }
        }
        Ok(())
    })
}

// Floating-point helpers for the atomics. The MODE register's denormal
// controls apply (bits 5:4 single precision, 7:6 double and half: bit 0
// of a field allows input denormals, bit 1 output denormals); the
// rounding is round-to-nearest-even, as LLVM documents for the memory FP
// atomics.

fn flush32(x: f32, keep: bool) -> f32 {
    if !keep && x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

fn flush64(x: f64, keep: bool) -> f64 {
    if !keep && x.is_subnormal() {
        0.0f64.copysign(x)
    } else {
        x
    }
}

/// The minimum (`max == false`) or maximum of `a` and `b` as IEEE-754
/// minNum/maxNum: a NaN operand gives the other one (a quiet NaN when
/// both are NaN), and -0 orders below +0.
fn minmax64(a: f64, b: f64, max: bool) -> f64 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => f64::from_bits(a.to_bits() | 1 << 51),
        (true, false) => b,
        (false, true) => a,
        _ => {
            let key = |x: f64| {
                let b = x.to_bits() as i64;
                b ^ ((b >> 63) as u64 >> 1) as i64
            };
            if (key(a) < key(b)) != max {
                a
            } else {
                b
            }
        }
    }
}

fn minmax32(a: f32, b: f32, max: bool) -> f32 {
    minmax64(f64::from(a), f64::from(b), max) as f32
}

/// Half-precision bits to a double (exact).
pub(super) fn f16_to_f64(h: u16) -> f64 {
    let sign = if h >> 15 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((h >> 10) & 0x1f);
    let m = f64::from(h & 0x3ff);
    if e == 0x1f {
        if m == 0.0 {
            return sign * f64::INFINITY;
        }
        // Keep the payload (quiet bit included) in the double's top bits.
        let bits = u64::from(h >> 15) << 63 | 0x7ff << 52 | u64::from(h & 0x3ff) << 42;
        return f64::from_bits(bits);
    }
    if e == 0 {
        sign * m * 2f64.powi(-24)
    } else {
        sign * (1024.0 + m) * 2f64.powi(e - 25)
    }
}

/// A double rounded (to nearest even) to half-precision bits.
pub(super) fn f64_to_f16(x: f64) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    if x.is_nan() {
        return sign | 0x7e00 | ((bits >> 42) & 0x3ff) as u16;
    }
    let a = x.abs();
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a == 0.0 {
        return sign;
    }
    let e = (((bits >> 52) & 0x7ff) as i32 - 1023).max(-14);
    // The value in units of the result's last place (exact scaling).
    let r = (a * 2f64.powi(10 - e)).round_ties_even() as u16;
    sign | ((((e + 14) as u16) << 10) + r)
}

fn add_f16(a: u16, b: u16, mode: u32) -> u16 {
    let (inp, out) = (mode >> 6 & 1 != 0, mode >> 7 & 1 != 0);
    let f = |h: u16| {
        if !inp && h & 0x7c00 == 0 {
            h & 0x8000
        } else {
            h
        }
    };
    // The sum of two halves is exact in a double; one rounding follows.
    let r = f64_to_f16(f16_to_f64(f(a)) + f16_to_f64(f(b)));
    if !out && r & 0x7c00 == 0 {
        r & 0x8000
    } else {
        r
    }
}

fn add_bf16(a: u16, b: u16) -> u16 {
    let (x, y) = (
        f32::from_bits(u32::from(a) << 16),
        f32::from_bits(u32::from(b) << 16),
    );
    let s = x + y;
    let mut bits = s.to_bits();
    if s.is_nan() {
        return ((bits >> 16) | 0x40) as u16;
    }
    if s.is_finite() {
        // Round to odd at single precision (exact error by TwoSum), then
        // to nearest even at bfloat16: one correct rounding of x + y.
        let bb = s - x;
        let err = (x - (s - bb)) + (y - bb);
        if err != 0.0 {
            if (err > 0.0) != (s > 0.0) {
                bits -= 1;
            }
            bits |= 1;
        }
    }
    ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16
}

/// True for the integer operations [`int_rmw32`]/[`int_rmw64`] apply
/// (every `atom` code up to `MSKOR`).
#[inline]
fn is_integer(op: u8) -> bool {
    op <= atom::MSKOR
}

/// The integer atomics of one width: `$name(op, old, a, b)` is the new
/// value (the old one for a code that is not an integer operation).
macro_rules! int_rmw {
    ($name:ident, $u:ty, $i:ty) => {
        #[doc = concat!("The new value of the integer atomic `op` on a `", stringify!($u), "`.")]
        #[inline]
        fn $name(op: u8, old: $u, a: $u, b: $u) -> $u {
            use atom::*;
            match op {
                SWAP => a,
                CMPSWAP if old == b => a,
                ADD => old.wrapping_add(a),
                SUB => old.wrapping_sub(a),
                RSUB => a.wrapping_sub(old),
                SMIN => (old as $i).min(a as $i) as $u,
                UMIN => old.min(a),
                SMAX => (old as $i).max(a as $i) as $u,
                UMAX => old.max(a),
                AND => old & a,
                OR => old | a,
                XOR => old ^ a,
                INC if old >= a => 0,
                INC => old + 1,
                DEC if old == 0 || old > a => a,
                DEC => old - 1,
                MSKOR => (old & !a) | b,
                _ => old,
            }
        }
    };
}
int_rmw!(int_rmw32, u32, i32);
int_rmw!(int_rmw64, u64, i64);

/// The new value of a 32-bit atomic `op` on `old` with data `a` and `b`.
#[inline]
pub(super) fn rmw32(op: u8, old: u32, a: u32, b: u32, mode: u32) -> u32 {
    use atom::*;
    let (inp, out) = (mode >> 4 & 1 != 0, mode >> 5 & 1 != 0);
    let f = |x: u32| flush32(f32::from_bits(x), inp);
    match op {
        _ if is_integer(op) => int_rmw32(op, old, a, b),
        WRAP => {
            if old >= a {
                old - a
            } else {
                old.wrapping_add(b)
            }
        }
        CMPSWAP_F => {
            if f(old) == f(b) {
                a
            } else {
                old
            }
        }
        ADD_F => flush32(f(old) + f(a), out).to_bits(),
        MIN_F => flush32(minmax32(f(old), f(a), false), out).to_bits(),
        MAX_F => flush32(minmax32(f(old), f(a), true), out).to_bits(),
        PK_ADD_F16 => {
            let lo = add_f16(old as u16, a as u16, mode);
            let hi = add_f16((old >> 16) as u16, (a >> 16) as u16, mode);
            u32::from(lo) | u32::from(hi) << 16
        }
        PK_ADD_BF16 => {
            let lo = add_bf16(old as u16, a as u16);
            let hi = add_bf16((old >> 16) as u16, (a >> 16) as u16);
            u32::from(lo) | u32::from(hi) << 16
        }
        CSUB => old.saturating_sub(a),
        _ => old,
    }
}

/// The new value of a 64-bit atomic `op` on `old` with data `a` and `b`.
#[inline]
pub(super) fn rmw64(op: u8, old: u64, a: u64, b: u64, mode: u32) -> u64 {
    use atom::*;
    let (inp, out) = (mode >> 6 & 1 != 0, mode >> 7 & 1 != 0);
    let f = |x: u64| flush64(f64::from_bits(x), inp);
    match op {
        _ if is_integer(op) => int_rmw64(op, old, a, b),
        CMPSWAP_F => {
            if f(old) == f(b) {
                a
            } else {
                old
            }
        }
        ADD_F => flush64(f(old) + f(a), out).to_bits(),
        MIN_F => flush64(minmax64(f(old), f(a), false), out).to_bits(),
        MAX_F => flush64(minmax64(f(old), f(a), true), out).to_bits(),
        _ => old,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_conversions_round_to_nearest_even() {
        for h in [
            0u16, 0x8000, 0x0001, 0x03ff, 0x0400, 0x3c00, 0x7bff, 0xfbff, 0x7c00,
        ] {
            assert_eq!(f64_to_f16(f16_to_f64(h)), h);
        }
        assert_eq!(f64_to_f16(65519.0), 0x7bff);
        assert_eq!(f64_to_f16(65520.0), 0x7c00);
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even.
        assert_eq!(f64_to_f16(1.0 + 2f64.powi(-11)), 0x3c00);
        assert_eq!(f64_to_f16(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02);
        // Half the smallest subnormal rounds to zero, a bit more to it.
        assert_eq!(f64_to_f16(2f64.powi(-25)), 0);
        assert_eq!(f64_to_f16(2f64.powi(-25) * 1.5), 1);
        assert_eq!(f64_to_f16(-(2f64.powi(-14) - 2f64.powi(-25))), 0x8400);
    }

    #[test]
    fn bfloat16_add_rounds_once() {
        // 1 + 2^-8 is halfway: ties to even (1.0); with a tiny extra the
        // sum rounds up.
        let one = 0x3f80u16;
        let half_ulp = (2f32.powi(-8).to_bits() >> 16) as u16;
        assert_eq!(add_bf16(one, half_ulp), one);
        let more = ((2f32.powi(-8) + 2f32.powi(-15)).to_bits() >> 16) as u16;
        assert_eq!(add_bf16(one, more), one + 1);
        // (1 + 2^-7) - 2^-8 and (1 + 3 * 2^-7) - 2^-8 are halfway cases.
        let m = (((-2f32.powi(-8)).to_bits()) >> 16) as u16;
        assert_eq!(add_bf16(0x3f81, m), 0x3f80);
        assert_eq!(add_bf16(0x3f83, m), 0x3f82);
        assert!(add_bf16(0x7f80, 0xff80) & 0x7fc0 == 0x7fc0);
    }

    #[test]
    fn integer_atomic_arithmetic() {
        use atom::*;
        assert_eq!(rmw32(SMIN, 5, (-3i32) as u32, 0, 0), (-3i32) as u32);
        assert_eq!(rmw32(UMIN, 5, (-3i32) as u32, 0, 0), 5);
        assert_eq!(
            rmw32(SMAX, (-7i32) as u32, (-3i32) as u32, 0, 0),
            (-3i32) as u32
        );
        assert_eq!(rmw32(INC, 7, 7, 0, 0), 0);
        assert_eq!(rmw32(INC, 6, 7, 0, 0), 7);
        assert_eq!(rmw32(DEC, 0, 9, 0, 0), 9);
        assert_eq!(rmw32(DEC, 10, 9, 0, 0), 9);
        assert_eq!(rmw32(DEC, 9, 9, 0, 0), 8);
        assert_eq!(rmw32(ADD, u32::MAX, 2, 0, 0), 1);
        assert_eq!(rmw32(RSUB, 3, 1, 0, 0), u32::MAX - 1);
        assert_eq!(rmw32(MSKOR, 0xff, 0x0f, 0x100, 0), 0x1f0);
        assert_eq!(rmw32(WRAP, 10, 4, 100, 0), 6);
        assert_eq!(rmw32(WRAP, 3, 4, 100, 0), 103);
        assert_eq!(rmw64(SMIN, 1, u64::MAX, 0, 0), u64::MAX);
        assert_eq!(rmw64(UMAX, 1, u64::MAX, 0, 0), u64::MAX);
        assert_eq!(rmw64(CMPSWAP, 5, 9, 5, 0), 9);
        assert_eq!(rmw64(CMPSWAP, 5, 9, 6, 0), 5);
        assert_eq!(rmw64(DEC, 0, 1 << 40, 0, 0), 1 << 40);
    }

    #[test]
    fn float_atomic_arithmetic_follows_the_denormal_mode() {
        use atom::*;
        let bits = f32::to_bits;
        // -0 compares equal to +0; NaN never equals.
        assert_eq!(rmw32(CMPSWAP_F, bits(0.0), 7, bits(-0.0), 0), 7);
        assert_eq!(
            rmw32(CMPSWAP_F, bits(f32::NAN), 7, bits(f32::NAN), 0),
            bits(f32::NAN)
        );
        let tiny = f32::from_bits(1);
        // Denormals kept (FP_DENORM single = 3) or flushed (0).
        assert_eq!(rmw32(ADD_F, bits(tiny), bits(tiny), 0, 0x30), 2);
        assert_eq!(rmw32(ADD_F, bits(tiny), bits(tiny), 0, 0), 0);
        assert_eq!(rmw32(ADD_F, bits(1.5), bits(2.25), 0, 0), bits(3.75));
        let d = f64::to_bits;
        assert_eq!(rmw64(MIN_F, d(2.0), d(f64::NAN), 0, 0), d(2.0));
        assert_eq!(rmw64(MAX_F, d(f64::NAN), d(-1.0), 0, 0), d(-1.0));
        assert_eq!(rmw64(ADD_F, d(0.1), d(0.2), 0, 0), d(0.1 + 0.2));
        // Packed halves: (1.0 + 0.5, 65504 + 65504 = inf).
        assert_eq!(
            rmw32(PK_ADD_F16, 0x7bff_3c00, 0x7bff_3800, 0, 0),
            0x7c00_3e00
        );
    }

    #[test]
    fn min_max_order_zeros_and_skip_nans() {
        assert_eq!(minmax64(-0.0, 0.0, false).to_bits(), (-0.0f64).to_bits());
        assert_eq!(minmax64(-0.0, 0.0, true).to_bits(), 0.0f64.to_bits());
        assert_eq!(minmax64(f64::NAN, 2.0, false), 2.0);
        assert_eq!(minmax64(-3.0, -2.0, false), -3.0);
        assert_eq!(minmax64(-3.0, -2.0, true), -2.0);
    }
}
