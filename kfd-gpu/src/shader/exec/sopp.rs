//! SOPP: program control (`s_endpgm`, branches, waits, barriers, traps,
//! messages).

use super::{unimplemented, Ctx, Exec, Flow, Stop};
use crate::shader::isa::{Inst, Target};
use crate::shader::wave::Wave;

/// The executor of a SOPP mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    Some(match name {
        "s_endpgm" | "s_endpgm_saved" | "s_endpgm_ordered_ps_done" => |_, _, _| Flow::End,
        // One wave runs at a time in its workgroup and memory operations
        // complete before the next instruction: waits, wake-ups, hints,
        // priorities, cache invalidations and trace data change nothing.
        // `s_setkill` only matters to pixel shaders.
        "s_nop" | "s_waitcnt" | "s_setprio" | "s_sleep" | "s_wakeup" | "s_setkill"
        | "s_icache_inv" | "s_incperflevel" | "s_decperflevel" | "s_ttracedata" => {
            |_, _, _| Flow::Next
        }
        // gfx11's waits (the SOPK counter waits too), instruction clauses,
        // ALU dependency and prefetch hints, and the version marker:
        // nothing to wait for or schedule here.
        "s_waitcnt_vscnt"
        | "s_waitcnt_vmcnt"
        | "s_waitcnt_expcnt"
        | "s_waitcnt_lgkmcnt"
        | "s_waitcnt_depctr"
        | "s_wait_idle"
        | "s_clause"
        | "s_delay_alu"
        | "s_set_inst_prefetch_distance"
        | "s_version" => |_, _, _| Flow::Next,
        // No debugger is attached: the conditional-debug status bits are
        // clear, so these never branch.
        "s_cbranch_cdbgsys"
        | "s_cbranch_cdbguser"
        | "s_cbranch_cdbgsys_or_user"
        | "s_cbranch_cdbgsys_and_user" => |_, _, _| Flow::Next,
        "s_set_gpr_idx_off" => |w, _, _| {
            w.mode &= !(1 << 27);
            Flow::Next
        },
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
        "s_sendmsg" => |_, i, c| sendmsg(i, false, c.target),
        "s_sendmsghalt" => |_, i, c| sendmsg(i, true, c.target),
        "s_sendmsg_rtn_b32" => |w, i, c| sendmsg_rtn(w, i, c, false),
        "s_sendmsg_rtn_b64" => |w, i, c| sendmsg_rtn(w, i, c, true),
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

/// gfx11's `s_sendmsg_rtn_b32/b64`: a message whose answer goes to
/// SDST; the id is in the source field. MSG_RTN_GET_REALTIME (131, what
/// HIP's `wall_clock64` sends) answers the constant-rate clock; the other
/// answers (doorbell, trap handler addresses, wave save) are not
/// modelled.
fn sendmsg_rtn(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>, wide: bool) -> Flow {
    if i.src[0] != 131 {
        return unimplemented(i, "message");
    }
    let t = (c.realtime)();
    if wide {
        w.write64(i.dst, t);
    } else {
        w.write32(i.dst, t as u32);
    }
    Flow::Next
}

/// `s_sendmsg` / `s_sendmsghalt`: the message id is SIMM16[3:0]. The
/// messages a compute wave may send have no effect the model shows
/// (no host interrupt handler, no context save, no system messages
/// consumer); the geometry-shader, pixel-shader and privileged ones are
/// not modelled. On gfx11 message 3 is MSG_DEALLOC_VGPRS, which a wave
/// sends just before its end: nothing to release here.
fn sendmsg(i: &Inst, halt: bool, target: Target) -> Flow {
    let id = i.simm16 & 0xf;
    if target.is_gfx11() && id == 3 && !halt {
        return Flow::Next;
    }
    let detail = match id {
        // MSG_INTERRUPT, MSG_SAVEWAVE, MSG_SYSMSG.
        1 | 4 | 15 => {
            return if halt {
                Flow::Error(Stop::Halted)
            } else {
                Flow::Next
            }
        }
        2 | 3 | 9 => "geometry-shader message",
        7 | 8 => "graphics message",
        5 | 6 => "MSG_STALL_WAVE_GEN/MSG_HALT_WAVES",
        10 => "MSG_GET_DOORBELL",
        _ => "reserved message id",
    };
    unimplemented(i, detail)
}
