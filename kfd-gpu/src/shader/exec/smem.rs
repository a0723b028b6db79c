//! SMEM: scalar loads through the constant cache.

use super::{Exec, Flow};
use crate::shader::isa::Inst;
use crate::shader::wave::Wave;

/// The executor of an SMEM mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    Some(match name {
        "s_load_dword" => |w, i, c| load(w, i, c, 1),
        "s_load_dwordx2" => |w, i, c| load(w, i, c, 2),
        "s_load_dwordx4" => |w, i, c| load(w, i, c, 4),
        "s_load_dwordx8" => |w, i, c| load(w, i, c, 8),
        "s_load_dwordx16" => |w, i, c| load(w, i, c, 16),
        "s_dcache_wb" | "s_dcache_inv" | "s_dcache_wb_vol" | "s_dcache_inv_vol" => {
            |_, _, _| Flow::Next
        }
        "s_memtime" => |w, i, c| {
            w.write64(sdata(i), (c.clock)());
            Flow::Next
        },
        "s_memrealtime" => |w, i, c| {
            w.write64(sdata(i), (c.realtime)());
            Flow::Next
        },
        _ => return None,
    })
}

/// SDATA: the first destination register.
fn sdata(i: &Inst) -> u16 {
    ((i.w[0] >> 6) & 0x7f) as u16
}

/// The address of an SMEM access: SBASE (an SGPR pair) plus the 21-bit
/// signed immediate offset (IMM) and/or the SOFFSET register (SOE), or
/// plus the register named by the offset field (neither).
pub(super) fn address(w: &Wave, i: &Inst) -> u64 {
    let w0 = i.w[0];
    let base = w.read64((w0 & 0x3f) as u16 * 2, None) & 0xffff_ffff_ffff;
    let imm = w0 & (1 << 17) != 0;
    let soe = w0 & (1 << 14) != 0;
    let off21 = ((i.w[1] & 0x1f_ffff) << 11) as i32 >> 11;
    let soff = || u64::from(w.read32(((i.w[1] >> 25) & 0x7f) as u16, None));
    let off = match (imm, soe) {
        (true, false) => off21 as i64 as u64,
        (true, true) => (off21 as i64 as u64).wrapping_add(soff()),
        (false, true) => soff(),
        (false, false) => u64::from(w.read32((i.w[1] & 0xff) as u16, None)),
    };
    base.wrapping_add(off)
}

fn load(w: &mut Wave, i: &Inst, c: &mut super::Ctx<'_, '_>, n: u16) -> Flow {
    // Scalar loads ignore the low two address bits.
    let a = address(w, i) & !3;
    let d = sdata(i);
    for k in 0..n {
        match c.tlb.load::<u32>(a + 4 * u64::from(k)) {
            Ok(v) => w.write32(d + k, v),
            Err(f) => return f.into(),
        }
    }
    Flow::Next
}
