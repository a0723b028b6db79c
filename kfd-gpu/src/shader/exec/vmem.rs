//! Vector memory: FLAT, GLOBAL and SCRATCH instructions (per-lane
//! addresses) and MUBUF (buffer resources).

use super::{Ctx, Exec, Flow};
use crate::shader::isa::{Enc, Inst};
use crate::shader::wave::{Wave, LANES};

/// The executor of a vector-memory mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    Some(match name {
        "global_load_dword" | "flat_load_dword" => |w, i, c| load32(w, i, c),
        "global_store_dword" | "flat_store_dword" => |w, i, c| store32(w, i, c),
        _ => return None,
    })
}

/// FLAT-family fields.
struct FlatFields {
    vdst: usize,
    data: usize,
    addr: usize,
    saddr: u16,
    offset: i64,
}

fn fields(i: &Inst) -> FlatFields {
    let (w0, w1) = (i.w[0], i.w[1]);
    // A 13-bit signed offset for GLOBAL/SCRATCH, 12-bit unsigned for FLAT
    // (gfx9).
    let offset = if i.enc == Enc::Flat {
        i64::from(w0 & 0xfff)
    } else {
        i64::from(((w0 & 0x1fff) << 19) as i32 >> 19)
    };
    FlatFields {
        vdst: (w1 >> 24) as usize,
        data: ((w1 >> 8) & 0xff) as usize,
        addr: (w1 & 0xff) as usize,
        saddr: ((w1 >> 16) & 0x7f) as u16,
        offset,
    }
}

/// The address of lane `l`: a 64-bit VGPR address, or (GLOBAL with SADDR)
/// an SGPR base plus a 32-bit VGPR offset; plus the instruction offset.
fn lane_address(w: &Wave, i: &Inst, f: &FlatFields, l: usize) -> u64 {
    let base = if i.enc == Enc::Global && f.saddr != 0x7f {
        w.read64(f.saddr, None)
            .wrapping_add(u64::from(w.vgpr[f.addr][l]))
    } else {
        u64::from(w.vgpr[f.addr][l]) | u64::from(w.vgpr[(f.addr + 1) & 0x1ff][l]) << 32
    };
    base.wrapping_add(f.offset as u64)
}

fn load32(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>) -> Flow {
    let f = fields(i);
    let exec = w.exec();
    for l in 0..LANES {
        if exec >> l & 1 != 0 {
            let a = lane_address(w, i, &f, l);
            match c.flat_load::<u32>(l, a) {
                Ok(v) => w.vgpr[f.vdst][l] = v,
                Err(e) => return e.into(),
            }
        }
    }
    Flow::Next
}

fn store32(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>) -> Flow {
    let f = fields(i);
    let exec = w.exec();
    for l in 0..LANES {
        if exec >> l & 1 != 0 {
            let a = lane_address(w, i, &f, l);
            if let Err(e) = c.flat_store::<u32>(l, a, w.vgpr[f.data][l]) {
                return e.into();
            }
        }
    }
    Flow::Next
}
