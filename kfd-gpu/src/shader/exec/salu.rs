//! SALU: scalar ALU instructions (SOP1, SOP2, SOPC, SOPK).

use super::{Exec, Flow};
use crate::shader::isa::Inst;
use crate::shader::wave::Wave;

/// The executor of a SALU mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    Some(match name {
        "s_mov_b32" => |w, i, _| {
            let v = w.read32(i.src[0], i.lit);
            w.write32(i.dst, v);
            Flow::Next
        },
        "s_mov_b64" => |w, i, _| {
            let v = w.read64(i.src[0], i.lit);
            w.write64(i.dst, v);
            Flow::Next
        },
        "s_lshl_b32" => |w, i, _| sop2_32(w, i, |a, b| a << (b & 31)),
        _ => return None,
    })
}

/// A 32-bit SOP2 whose SCC is "result is not zero".
fn sop2_32(w: &mut Wave, i: &Inst, f: fn(u32, u32) -> u32) -> Flow {
    let r = f(w.read32(i.src[0], i.lit), w.read32(i.src[1], i.lit));
    w.write32(i.dst, r);
    w.scc = r != 0;
    Flow::Next
}
