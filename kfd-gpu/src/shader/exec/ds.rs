//! DS: local data share (LDS) reads, writes and atomics, and the
//! cross-lane DS instructions (`ds_swizzle_b32`, `ds_permute_b32`,
//! `ds_bpermute_b32`).
//!
//! An LDS address is the lane's ADDR VGPR plus the instruction offset
//! (16 bits, or for the two-address forms OFFSET0/OFFSET1 in elements:
//! 4 or 8 bytes, 64 times that for the `st64` forms). M0 does not clamp
//! on gfx9; the bound is the workgroup's allocation: reads beyond it
//! return zero and writes are dropped ([`Ctx::lds_load`]). Lanes run in
//! order and the workgroup's waves one at a time, so an atomic is exact
//! however many lanes hit one address. GDS (word 0 bit 16) is not
//! modelled. On gfx90a/gfx940 the ACC bit (word 0 bit 25) makes the data
//! and destination registers AccVGPRs (`Wave::vgpr[256 + n]`).

use super::vmem::{atom, rmw32, rmw64};
use super::{unimplemented, Ctx, Exec, Flow};
use crate::shader::isa::Inst;
use crate::shader::wave::{Wave, LANES};

// Read kinds.
const R_U8: u8 = 0;
const R_I8: u8 = 1;
const R_U16: u8 = 2;
const R_I16: u8 = 3;
const R_U8_D16: u8 = 4;
const R_U8_D16_HI: u8 = 5;
const R_I8_D16: u8 = 6;
const R_I8_D16_HI: u8 = 7;
const R_U16_D16: u8 = 8;
const R_U16_D16_HI: u8 = 9;
/// `b32`, `b64`, `b96`, `b128`: `R_B32 + dwords - 1`.
const R_B32: u8 = 10;

// Write kinds.
const W_B8: u8 = 0;
const W_B16: u8 = 1;
const W_B8_D16_HI: u8 = 2;
const W_B16_D16_HI: u8 = 3;
/// `b32` .. `b128`: `W_B32 + dwords - 1`.
const W_B32: u8 = 4;

/// The executor of a DS mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    let op = name.strip_prefix("ds_")?;
    Some(match op {
        "nop" => |_, _, _| Flow::Next,
        "read_u8" => read::<R_U8>,
        "read_i8" => read::<R_I8>,
        "read_u16" => read::<R_U16>,
        "read_i16" => read::<R_I16>,
        "read_u8_d16" => read::<R_U8_D16>,
        "read_u8_d16_hi" => read::<R_U8_D16_HI>,
        "read_i8_d16" => read::<R_I8_D16>,
        "read_i8_d16_hi" => read::<R_I8_D16_HI>,
        "read_u16_d16" => read::<R_U16_D16>,
        "read_u16_d16_hi" => read::<R_U16_D16_HI>,
        "read_b32" => read::<R_B32>,
        "read_b64" => read::<{ R_B32 + 1 }>,
        "read_b96" => read::<{ R_B32 + 2 }>,
        "read_b128" => read::<{ R_B32 + 3 }>,
        "write_b8" => write::<W_B8>,
        "write_b16" => write::<W_B16>,
        "write_b8_d16_hi" => write::<W_B8_D16_HI>,
        "write_b16_d16_hi" => write::<W_B16_D16_HI>,
        "write_b32" => write::<W_B32>,
        "write_b64" => write::<{ W_B32 + 1 }>,
        "write_b96" => write::<{ W_B32 + 2 }>,
        "write_b128" => write::<{ W_B32 + 3 }>,
        "read2_b32" => read2::<4, 1>,
        "read2_b64" => read2::<8, 2>,
        "read2st64_b32" => read2::<256, 1>,
        "read2st64_b64" => read2::<512, 2>,
        "write2_b32" => write2::<4, 1>,
        "write2_b64" => write2::<8, 2>,
        "write2st64_b32" => write2::<256, 1>,
        "write2st64_b64" => write2::<512, 2>,
        "wrxchg2_rtn_b32" => wrxchg2::<4, 1>,
        "wrxchg2_rtn_b64" => wrxchg2::<8, 2>,
        "wrxchg2st64_rtn_b32" => wrxchg2::<256, 1>,
        "wrxchg2st64_rtn_b64" => wrxchg2::<512, 2>,
        "append" => append::<false>,
        "consume" => append::<true>,
        "swizzle_b32" => swizzle,
        "permute_b32" => permute,
        "bpermute_b32" => bpermute,
        _ => return atomic_exec(op),
    })
}

/// The executor of a DS atomic (`op` without the `ds_` prefix).
fn atomic_exec(op: &str) -> Option<Exec> {
    use atom::*;
    let (base, rtn) = match op.split_once("_rtn") {
        Some((a, b)) => (format!("{a}{b}"), true),
        None => (op.to_string(), false),
    };
    macro_rules! pick {
        ($op:expr, $w64:expr) => {
            pick!($op, $w64, false)
        };
        ($op:expr, $w64:expr, $new_first:expr) => {
            if rtn {
                atomic::<{ $op }, { $w64 }, true, { $new_first }> as Exec
            } else {
                atomic::<{ $op }, { $w64 }, false, { $new_first }> as Exec
            }
        };
    }
    Some(match base.as_str() {
        "add_u32" => pick!(ADD, false),
        "sub_u32" => pick!(SUB, false),
        "rsub_u32" => pick!(RSUB, false),
        "inc_u32" => pick!(INC, false),
        "dec_u32" => pick!(DEC, false),
        "min_i32" => pick!(SMIN, false),
        "max_i32" => pick!(SMAX, false),
        "min_u32" => pick!(UMIN, false),
        "max_u32" => pick!(UMAX, false),
        "and_b32" => pick!(AND, false),
        "or_b32" => pick!(OR, false),
        "xor_b32" => pick!(XOR, false),
        "mskor_b32" => pick!(MSKOR, false),
        "wrxchg_b32" => pick!(SWAP, false),
        "cmpst_b32" => pick!(CMPSWAP, false),
        "cmpst_f32" => pick!(CMPSWAP_F, false),
        "min_f32" => pick!(MIN_F, false),
        "max_f32" => pick!(MAX_F, false),
        "add_f32" => pick!(ADD_F, false),
        "wrap_b32" if rtn => pick!(WRAP, false),
        "pk_add_f16" => pick!(PK_ADD_F16, false),
        "pk_add_bf16" => pick!(PK_ADD_BF16, false),
        "add_u64" => pick!(ADD, true),
        "sub_u64" => pick!(SUB, true),
        "rsub_u64" => pick!(RSUB, true),
        "inc_u64" => pick!(INC, true),
        "dec_u64" => pick!(DEC, true),
        "min_i64" => pick!(SMIN, true),
        "max_i64" => pick!(SMAX, true),
        "min_u64" => pick!(UMIN, true),
        "max_u64" => pick!(UMAX, true),
        "and_b64" => pick!(AND, true),
        "or_b64" => pick!(OR, true),
        "xor_b64" => pick!(XOR, true),
        "mskor_b64" => pick!(MSKOR, true),
        "wrxchg_b64" => pick!(SWAP, true),
        "cmpst_b64" => pick!(CMPSWAP, true),
        "cmpst_f64" => pick!(CMPSWAP_F, true),
        // gfx11's compare-stores take the new value first.
        "cmpstore_b32" => pick!(CMPSWAP, false, true),
        "cmpstore_f32" => pick!(CMPSWAP_F, false, true),
        "cmpstore_b64" => pick!(CMPSWAP, true, true),
        "cmpstore_f64" => pick!(CMPSWAP_F, true, true),
        "min_f64" => pick!(MIN_F, true),
        "max_f64" => pick!(MAX_F, true),
        "add_f64" => pick!(ADD_F, true),
        _ => return None,
    })
}

/// The fields of a DS instruction.
#[derive(Debug, Clone, Copy)]
struct Fields {
    addr: usize,
    // Register runs (indices into `Wave::vgpr`, wrapped into the register
    // file once here so the lane loops do not divide).
    data0: [usize; 4],
    data1: [usize; 4],
    vdst: [usize; 4],
    offset0: u32,
    offset1: u32,
}

impl Fields {
    fn new(w: &Wave, i: &Inst, c: &Ctx<'_, '_>) -> Result<Fields, Flow> {
        let (w0, w1) = (i.w[0], i.w[1]);
        if w0 >> 16 & 1 != 0 {
            return Err(unimplemented(i, "GDS"));
        }
        let bank = if c.target.has_mfma() && w0 >> 25 & 1 != 0 {
            256
        } else {
            0
        };
        let n = w.vgpr.len();
        let regs = |r: usize| [0, 1, 2, 3].map(|k| (bank + r + k) % n);
        Ok(Fields {
            addr: (w1 & 0xff) as usize % n,
            data0: regs(((w1 >> 8) & 0xff) as usize),
            data1: regs(((w1 >> 16) & 0xff) as usize),
            vdst: regs((w1 >> 24) as usize),
            offset0: w0 & 0xff,
            offset1: (w0 >> 8) & 0xff,
        })
    }

    /// The 16-bit offset of the single-address forms.
    fn offset(&self) -> u32 {
        self.offset0 | self.offset1 << 8
    }
}

/// Register `k` of the run `r`, lane `l`.
#[inline]
fn reg(w: &Wave, r: [usize; 4], k: usize, l: usize) -> u32 {
    w.vgpr[r[k & 3]][l]
}

#[inline]
fn set(w: &mut Wave, r: [usize; 4], k: usize, l: usize, v: u32) {
    w.vgpr[r[k & 3]][l] = v;
}

fn read<const K: u8>(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>) -> Flow {
    let f = match Fields::new(w, i, c) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let exec = w.exec();
    let off = f.offset();
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let a = w.vgpr[f.addr][l].wrapping_add(off);
        let cur = reg(w, f.vdst, 0, l);
        let v = match K {
            R_U8 => u32::from(c.lds_load::<u8>(a)),
            R_I8 => c.lds_load::<u8>(a) as i8 as u32,
            R_U16 => u32::from(c.lds_load::<u16>(a)),
            R_I16 => c.lds_load::<u16>(a) as i16 as u32,
            R_U8_D16 => cur & 0xffff_0000 | u32::from(c.lds_load::<u8>(a)),
            R_U8_D16_HI => cur & 0xffff | u32::from(c.lds_load::<u8>(a)) << 16,
            R_I8_D16 => cur & 0xffff_0000 | u32::from(c.lds_load::<u8>(a) as i8 as i16 as u16),
            R_I8_D16_HI => cur & 0xffff | u32::from(c.lds_load::<u8>(a) as i8 as i16 as u16) << 16,
            R_U16_D16 => cur & 0xffff_0000 | u32::from(c.lds_load::<u16>(a)),
            R_U16_D16_HI => cur & 0xffff | u32::from(c.lds_load::<u16>(a)) << 16,
            _ => {
                let n = usize::from(K - R_B32 + 1).min(4);
                for k in 0..n {
                    let v = c.lds_load::<u32>(a.wrapping_add(4 * k as u32));
                    set(w, f.vdst, k, l, v);
                }
                continue;
            }
        };
        set(w, f.vdst, 0, l, v);
    }
    Flow::Next
}

fn write<const K: u8>(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>) -> Flow {
    let f = match Fields::new(w, i, c) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let exec = w.exec();
    let off = f.offset();
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let a = w.vgpr[f.addr][l].wrapping_add(off);
        let d = reg(w, f.data0, 0, l);
        match K {
            W_B8 => c.lds_store(a, d as u8),
            W_B16 => c.lds_store(a, d as u16),
            W_B8_D16_HI => c.lds_store(a, (d >> 16) as u8),
            W_B16_D16_HI => c.lds_store(a, (d >> 16) as u16),
            _ => {
                let n = usize::from(K - W_B32 + 1).min(4);
                for k in 0..n {
                    c.lds_store(a.wrapping_add(4 * k as u32), reg(w, f.data0, k, l));
                }
            }
        }
    }
    Flow::Next
}

/// `ds_read2*`: `D` dwords from each of two addresses `S` bytes per
/// offset unit apart.
fn read2<const S: u32, const D: usize>(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>) -> Flow {
    let f = match Fields::new(w, i, c) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let exec = w.exec();
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let base = w.vgpr[f.addr][l];
        let mut v = [0u32; 4];
        for (h, o) in [f.offset0, f.offset1].into_iter().enumerate() {
            let a = base.wrapping_add(o * S);
            for k in 0..D {
                v[h * D + k] = c.lds_load(a.wrapping_add(4 * k as u32));
            }
        }
        for (k, x) in v[..2 * D].iter().enumerate() {
            set(w, f.vdst, k, l, *x);
        }
    }
    Flow::Next
}

/// `ds_write2*`: DATA0 and DATA1 (`D` dwords each) to two addresses.
fn write2<const S: u32, const D: usize>(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>) -> Flow {
    let f = match Fields::new(w, i, c) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let exec = w.exec();
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let base = w.vgpr[f.addr][l];
        for (o, r) in [(f.offset0, f.data0), (f.offset1, f.data1)] {
            let a = base.wrapping_add(o * S);
            for k in 0..D {
                c.lds_store(a.wrapping_add(4 * k as u32), reg(w, r, k, l));
            }
        }
    }
    Flow::Next
}

/// `ds_wrxchg2*_rtn`: two exchanges; the old values return in order.
fn wrxchg2<const S: u32, const D: usize>(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>) -> Flow {
    let f = match Fields::new(w, i, c) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let exec = w.exec();
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let base = w.vgpr[f.addr][l];
        let mut v = [0u32; 4];
        for (h, (o, r)) in [(f.offset0, f.data0), (f.offset1, f.data1)]
            .into_iter()
            .enumerate()
        {
            let a = base.wrapping_add(o * S);
            for k in 0..D {
                let at = a.wrapping_add(4 * k as u32);
                v[h * D + k] = c.lds_load(at);
                c.lds_store(at, reg(w, r, k, l));
            }
        }
        for (k, x) in v[..2 * D].iter().enumerate() {
            set(w, f.vdst, k, l, *x);
        }
    }
    Flow::Next
}

/// A DS atomic: `OP` on a dword (a qword when `W64`) with DATA0 (and
/// DATA1: the new value of gfx9's compare-stores, whose compare value is
/// DATA0, or with `NEW_FIRST` (gfx11's `ds_cmpstore_*`) the compare value
/// after the new one in DATA0; MSKOR's OR mask; WRAP's add value); `RTN`
/// returns the old value.
fn atomic<const OP: u8, const W64: bool, const RTN: bool, const NEW_FIRST: bool>(
    w: &mut Wave,
    i: &Inst,
    c: &mut Ctx<'_, '_>,
) -> Flow {
    let f = match Fields::new(w, i, c) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let exec = w.exec();
    let off = f.offset();
    let mode = w.mode;
    // The compare-stores take the compare value first: swap the operands
    // into the (new value, compare) order the shared arithmetic uses.
    let cmp = (OP == atom::CMPSWAP || OP == atom::CMPSWAP_F) && !NEW_FIRST;
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let a = w.vgpr[f.addr][l].wrapping_add(off);
        if W64 {
            let q = |w: &Wave, r: [usize; 4]| {
                u64::from(reg(w, r, 0, l)) | u64::from(reg(w, r, 1, l)) << 32
            };
            let (d0, d1) = (q(w, f.data0), q(w, f.data1));
            let (x, y) = if cmp { (d1, d0) } else { (d0, d1) };
            let old = c.lds_load::<u64>(a);
            c.lds_store(a, rmw64(OP, old, x, y, mode));
            if RTN {
                set(w, f.vdst, 0, l, old as u32);
                set(w, f.vdst, 1, l, (old >> 32) as u32);
            }
        } else {
            let (d0, d1) = (reg(w, f.data0, 0, l), reg(w, f.data1, 0, l));
            let (x, y) = if cmp { (d1, d0) } else { (d0, d1) };
            let old = c.lds_load::<u32>(a);
            c.lds_store(a, rmw32(OP, old, x, y, mode));
            if RTN {
                set(w, f.vdst, 0, l, old);
            }
        }
    }
    Flow::Next
}

/// `ds_append` / `ds_consume` (`CONSUME`) on LDS: the dword at M0 plus
/// the offset grows (shrinks) by the number of active lanes; every active
/// lane gets its old value (lanes find their own slots from it with
/// `v_mbcnt`). The GDS form is not modelled.
fn append<const CONSUME: bool>(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>) -> Flow {
    let f = match Fields::new(w, i, c) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let exec = w.exec();
    if exec == 0 {
        return Flow::Next;
    }
    let a = w.m0().wrapping_add(f.offset());
    let old = c.lds_load::<u32>(a);
    let n = exec.count_ones();
    c.lds_store(
        a,
        if CONSUME {
            old.wrapping_sub(n)
        } else {
            old.wrapping_add(n)
        },
    );
    w.store32((256 + f.vdst[0]) as u16, exec, &[old; LANES]);
    Flow::Next
}

/// `ds_swizzle_b32`: lanes read the ADDR VGPR (the instruction's one
/// source) of another lane picked by the 16-bit offset: bit 15 set,
/// quad-permute mode (lane `4q + i` reads lane `4q + offset[2i+1:2i]`);
/// clear, bit-mask mode within each half of 32 lanes (`((lane & and) | or) ^ xor` with the masks in offset bits 4:0,
/// 9:5 and 14:10). An inactive source lane reads as zero.
fn swizzle(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>) -> Flow {
    let f = match Fields::new(w, i, c) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let exec = w.exec();
    let p = f.offset();
    let data = w.vgpr[f.addr];
    let src = |l: usize| -> usize {
        if p & 0x8000 != 0 {
            (l & !3) + ((p >> (2 * (l & 3))) & 3) as usize
        } else {
            let (and, or, xor) = (p & 0x1f, (p >> 5) & 0x1f, (p >> 10) & 0x1f);
            (l & 0x20) | ((((l as u32 & and) | or) ^ xor) & 0x1f) as usize
        }
    };
    let r: [u32; LANES] = std::array::from_fn(|l| {
        let s = src(l);
        if exec >> s & 1 != 0 {
            data[s]
        } else {
            0
        }
    });
    w.store32((256 + f.vdst[0]) as u16, exec, &r);
    Flow::Next
}

/// `ds_permute_b32` (forward): each active lane sends DATA0 to lane
/// `((ADDR + offset) / 4) mod lanes` (64, or 32 in a wave32); the higher
/// lane wins a collision, and an active lane nobody sends to reads zero.
fn permute(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>) -> Flow {
    let f = match Fields::new(w, i, c) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let exec = w.exec();
    let off = f.offset();
    let data = w.vgpr[f.data0[0]];
    let addr = w.vgpr[f.addr];
    let n = w.lanes();
    let mut r = [0u32; LANES];
    for l in 0..LANES {
        if exec >> l & 1 != 0 {
            r[(addr[l].wrapping_add(off) / 4) as usize % n] = data[l];
        }
    }
    w.store32((256 + f.vdst[0]) as u16, exec, &r);
    Flow::Next
}

/// `ds_bpermute_b32` (backward): each active lane reads DATA0 of lane
/// `((ADDR + offset) / 4) mod lanes` (64, or 32 in a wave32), zero if
/// that lane is inactive.
fn bpermute(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>) -> Flow {
    let f = match Fields::new(w, i, c) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let exec = w.exec();
    let off = f.offset();
    let data = w.vgpr[f.data0[0]];
    let addr = w.vgpr[f.addr];
    let n = w.lanes();
    let r: [u32; LANES] = std::array::from_fn(|l| {
        let s = (addr[l].wrapping_add(off) / 4) as usize % n;
        if exec >> s & 1 != 0 {
            data[s]
        } else {
            0
        }
    });
    w.store32((256 + f.vdst[0]) as u16, exec, &r);
    Flow::Next
}
