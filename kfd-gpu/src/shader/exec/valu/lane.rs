//! Cross-lane moves with a scalar side: `v_readlane_b32`,
//! `v_readfirstlane_b32`, `v_writelane_b32`, and gfx11's
//! `v_permlane16_b32` / `v_permlanex16_b32` (lane selects in SGPRs).

use super::{sdst_of_vdst, unimplemented, vdst, vreg, vstore, Exec, Flow};
use crate::shader::isa::{Enc, Ext, Inst};
use crate::shader::wave::{reg, Wave};

/// The executor of a cross-lane mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    Some(match name {
        "v_readlane_b32" => |w, i, _| readlane(w, i),
        "v_readfirstlane_b32" => |w, i, _| readfirstlane(w, i),
        "v_writelane_b32" => |w, i, _| writelane(w, i),
        "v_permlane16_b32" => |w, i, _| permlane16(w, i, false),
        "v_permlanex16_b32" => |w, i, _| permlane16(w, i, true),
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

/// `v_permlane16_b32` / `v_permlanex16_b32` (`cross`) `vdst, vsrc, sel_lo,
/// sel_hi`: lane `l` of each row of 16 reads the lane the 4-bit select
/// `l % 16` names (selects 0-7 in source 1, 8-15 in source 2) of its own
/// row, or with `cross` of the neighbouring row (rows 0/1 and 2/3
/// swap). op_sel[0] is fetch-inactive: without it an inactive source
/// lane gives 0 with op_sel[1] (bound control), else leaves the lane.
fn permlane16(w: &mut Wave, i: &Inst, cross: bool) -> Flow {
    let m = &i.mods;
    let plain = m.abs == 0 && m.neg == 0 && !m.clamp && m.omod == 0 && m.opsel >> 2 == 0;
    if i.enc != Enc::Vop3 || !plain || i.ext != Ext::None {
        return unimplemented(i, "modifiers");
    }
    if i.src[0] < reg::VGPR0 || i.src[1] >= reg::VGPR0 || i.src[2] >= reg::VGPR0 {
        return unimplemented(i, "operands");
    }
    let (fi, bound) = (m.opsel & 1 != 0, m.opsel & 2 != 0);
    let sel = u64::from(w.read32(i.src[1], i.lit)) | u64::from(w.read32(i.src[2], i.lit)) << 32;
    let src = *vreg(w, usize::from(i.src[0] - reg::VGPR0));
    let d = vdst(i);
    let mut out = *vreg(w, d);
    let exec = w.exec();
    for (l, o) in out.iter_mut().enumerate().take(w.lanes()) {
        let row = if cross { (l / 16) ^ 1 } else { l / 16 };
        let s = row * 16 + (sel >> (4 * (l % 16)) & 15) as usize;
        if fi || exec >> s & 1 != 0 {
            *o = src[s];
        } else if bound {
            *o = 0;
        }
    }
    vstore(w, d, exec, &out);
    Flow::Next
}
