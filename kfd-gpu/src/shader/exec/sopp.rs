//! SOPP: program control (`s_endpgm`, branches, waits, barriers, traps).

use super::{Exec, Flow, Stop};
use crate::shader::isa::Inst;
use crate::shader::wave::Wave;

/// The executor of a SOPP mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    Some(match name {
        "s_endpgm" => |_, _, _| Flow::End,
        // One wave runs at a time in its workgroup and memory operations
        // complete before the next instruction: waits, hints and
        // priorities change nothing.
        "s_nop"
        | "s_waitcnt"
        | "s_setprio"
        | "s_sleep"
        | "s_icache_inv"
        | "s_incperflevel"
        | "s_decperflevel"
        | "s_ttracedata"
        | "s_set_gpr_idx_off"
        | "s_endpgm_ordered_ps_done" => |_, _, _| Flow::Next,
        "s_barrier" => |_, _, _| Flow::Barrier,
        "s_branch" => |w, i, _| Flow::Jump(target(w, i)),
        "s_cbranch_scc0" => |w, i, _| branch(w, i, !w.scc),
        "s_cbranch_scc1" => |w, i, _| branch(w, i, w.scc),
        "s_cbranch_vccz" => |w, i, _| branch(w, i, w.vcc() == 0),
        "s_cbranch_vccnz" => |w, i, _| branch(w, i, w.vcc() != 0),
        "s_cbranch_execz" => |w, i, _| branch(w, i, w.exec() == 0),
        "s_cbranch_execnz" => |w, i, _| branch(w, i, w.exec() != 0),
        "s_trap" => |_, i, _| Flow::Error(Stop::Trap((i.simm16 & 0xff) as u16)),
        "s_sethalt" => |_, i, _| {
            if i.simm16 & 1 != 0 {
                Flow::Error(Stop::Halted)
            } else {
                Flow::Next
            }
        },
        _ => return None,
    })
}

/// The target of a relative branch: the next instruction plus `simm16`
/// dwords.
fn target(w: &Wave, i: &Inst) -> u64 {
    w.pc.wrapping_add(4)
        .wrapping_add((i64::from(i.simm16) * 4) as u64)
}

fn branch(w: &Wave, i: &Inst, taken: bool) -> Flow {
    if taken {
        Flow::Jump(target(w, i))
    } else {
        Flow::Next
    }
}
