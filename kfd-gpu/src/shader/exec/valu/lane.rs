//! Cross-lane moves with a scalar side: `v_readlane_b32`,
//! `v_readfirstlane_b32`, `v_writelane_b32`.

use super::{sdst_of_vdst, unimplemented, vdst, vreg, Exec, Flow};
use crate::shader::isa::{Enc, Ext, Inst};
use crate::shader::wave::{reg, Wave};

/// The executor of a cross-lane mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    Some(match name {
        "v_readlane_b32" => |w, i, _| readlane(w, i),
        "v_readfirstlane_b32" => |w, i, _| readfirstlane(w, i),
        "v_writelane_b32" => |w, i, _| writelane(w, i),
        _ => return None,
    })
}

fn plain_vop3(i: &Inst) -> bool {
    i.enc == Enc::Vop3
        && i.mods.abs == 0
        && i.mods.neg == 0
        && i.mods.opsel == 0
        && !i.mods.clamp
        && i.mods.omod == 0
        && !i.src[..2].contains(&reg::LITERAL)
}

/// The lane a scalar lane-select operand names (modulo the wave's lanes).
fn lane_select(w: &Wave, i: &Inst) -> Option<usize> {
    let s = i.src[1];
    if s >= reg::VGPR0 {
        return None;
    }
    Some(w.read32(s, i.lit) as usize % w.lanes())
}

/// `v_readlane_b32 sdst, vsrc, lane`.
fn readlane(w: &mut Wave, i: &Inst) -> Flow {
    let (true, Some(l)) = (plain_vop3(i), lane_select(w, i)) else {
        return unimplemented(i, "operands");
    };
    if i.src[0] < reg::VGPR0 {
        return unimplemented(i, "scalar source");
    }
    let v = vreg(w, usize::from(i.src[0] - reg::VGPR0))[l];
    w.write32(sdst_of_vdst(i), v);
    Flow::Next
}

/// `v_writelane_b32 vdst, ssrc, lane`: writes one lane whatever EXEC is.
fn writelane(w: &mut Wave, i: &Inst) -> Flow {
    let (true, Some(l)) = (plain_vop3(i), lane_select(w, i)) else {
        return unimplemented(i, "operands");
    };
    if i.src[0] >= reg::VGPR0 {
        return unimplemented(i, "vector source");
    }
    let v = w.read32(i.src[0], i.lit);
    if let Some(r) = w.vgpr.get_mut(vdst(i)) {
        r[l] = v;
    }
    Flow::Next
}

/// `v_readfirstlane_b32 sdst, vsrc`: the first active lane (lane 0 when
/// EXEC is zero).
fn readfirstlane(w: &mut Wave, i: &Inst) -> Flow {
    if i.ext != Ext::None || i.enc == Enc::Vop3 && !plain_vop3(i) {
        return unimplemented(i, "operands");
    }
    let exec = w.exec();
    let l = if exec == 0 {
        0
    } else {
        exec.trailing_zeros() as usize
    };
    let v = if i.src[0] >= reg::VGPR0 {
        vreg(w, usize::from(i.src[0] - reg::VGPR0))[l]
    } else {
        w.read32(i.src[0], i.lit)
    };
    w.write32(sdst_of_vdst(i), v);
    Flow::Next
}
