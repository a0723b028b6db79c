//! The CP's AQL packet processor (`KFD_IOC_QUEUE_TYPE_COMPUTE_AQL`).
//!
//! 64-byte packets in a ring of `ring_size / 64` slots; the write pointer
//! is `amd_queue_t.write_dispatch_id` (producers bump it before writing
//! the packet, so a slot is ready once its header type is not INVALID),
//! the read pointer is `read_dispatch_id`. Packets: `BARRIER_AND`,
//! `BARRIER_OR` (up to five dependency signals; a signal is satisfied at
//! value 0), `VENDOR_SPECIFIC` with AmdFormat 1 (the PM4 indirect buffer
//! ROCr's `ExecutePM4` builds) and AmdFormat 2 (barrier-value: wait until
//! `(value & mask) cond value`). The barrier bit needs nothing extra: the
//! model completes every packet before it looks at the next. After a
//! packet: the completion signal (with dispatch timestamps when the queue
//! has profiling on), the header back to INVALID, the read index past it.
//! `KERNEL_DISPATCH` runs on the shader machine (`super::shader`), to its
//! end, before the next packet; a gfx target it does not model stops the
//! queue with the error an unrunnable code object gives
//! ([`QueueError::no_isa`]). Other types
//! (`AGENT_DISPATCH`, reserved) are invalid packets.

use super::report::{self, complete_signal, Outcome, QueueError};
use super::{gpu_clock, pm4, Progress, QueueCtx};

/// `hsa_packet_type_t`.
mod ty {
    pub const VENDOR_SPECIFIC: u16 = 0;
    pub const INVALID: u16 = 1;
    pub const KERNEL_DISPATCH: u16 = 2;
    pub const BARRIER_AND: u16 = 3;
    pub const BARRIER_OR: u16 = 5;
}

/// `AMD_AQL_FORMAT_PM4_IB` and `HSA_AMD_PACKET_TYPE_BARRIER_VALUE`.
const AMD_FORMAT_PM4_IB: u8 = 1;
const AMD_FORMAT_BARRIER_VALUE: u8 = 2;

/// Bytes per packet; the completion signal sits at the same offset in
/// every packet format.
const PACKET: u64 = 64;
const COMPLETION_SIGNAL: usize = 56;

fn u64_at(p: &[u8; 64], off: usize) -> u64 {
    u64::from_ne_bytes(p[off..off + 8].try_into().unwrap_or_default())
}

fn u32_at(p: &[u8; 64], off: usize) -> u32 {
    u32::from_ne_bytes(p[off..off + 4].try_into().unwrap_or_default())
}

fn type_name(t: u16) -> &'static str {
    match t {
        ty::VENDOR_SPECIFIC => "VENDOR_SPECIFIC",
        ty::KERNEL_DISPATCH => "KERNEL_DISPATCH",
        ty::BARRIER_AND => "BARRIER_AND",
        ty::BARRIER_OR => "BARRIER_OR",
        4 => "AGENT_DISPATCH",
        _ => "reserved",
    }
}

/// The value of the signal with handle `h`.
fn signal_value(q: &mut QueueCtx, h: u64) -> Result<i64, super::Fault> {
    q.vm.read_u64(h + 8).map(|v| v as i64)
}

fn barrier(q: &mut QueueCtx, p: &[u8; 64], all: bool) -> Outcome {
    let deps: Vec<u64> = (0..5)
        .map(|i| u64_at(p, 8 + 8 * i))
        .filter(|h| *h != 0)
        .collect();
    let mut met = 0;
    for h in &deps {
        match signal_value(q, *h) {
            Ok(0) => met += 1,
            Ok(_) => {}
            Err(f) => return f.into(),
        }
    }
    q.trace_packet(|| {
        format!(
            "{} deps={} met={met}",
            if all { "BARRIER_AND" } else { "BARRIER_OR" },
            deps.len()
        )
    });
    let done = if all {
        met == deps.len()
    } else {
        deps.is_empty() || met > 0
    };
    if done {
        Outcome::Done
    } else {
        Outcome::Blocked
    }
}

fn barrier_value(q: &mut QueueCtx, p: &[u8; 64]) -> Outcome {
    let (sig, value, mask, cond) = (
        u64_at(p, 8),
        u64_at(p, 16) as i64,
        u64_at(p, 24) as i64,
        u32_at(p, 32),
    );
    q.trace_packet(|| {
        format!("BARRIER_VALUE signal={sig:#x} cond={cond} value={value} mask={mask:#x}")
    });
    // A zero handle is no signal, as in the barrier-AND/OR dependency
    // slots: nothing to wait for. HIP (ROCclr's dispatchBarrierValuePacket
    // with nothing to resolve) sends exactly that for event markers.
    if sig == 0 {
        return Outcome::Done;
    }
    let cur = match signal_value(q, sig) {
        Ok(v) => v & mask,
        Err(f) => return f.into(),
    };
    let met = match cond {
        0 => cur == value,
        1 => cur != value,
        2 => cur < value,
        3 => cur >= value,
        _ => {
            return Outcome::Error(QueueError {
                ec: kfd_sys::kfd::EC_QUEUE_PACKET_VENDOR_UNSUPPORTED,
                legacy: report::LEGACY_INVALID_VENDOR_PACKET,
                what: format!("barrier-value condition {cond}"),
            })
        }
    };
    if met {
        Outcome::Done
    } else {
        Outcome::Blocked
    }
}

/// AmdFormat 1: the packet carries a PM4 command (an `INDIRECT_BUFFER`
/// to the IB holding the real commands) in dwords 1..5.
fn pm4_ib(q: &mut QueueCtx, p: &[u8; 64]) -> Outcome {
    let cmd: Vec<u32> = (1..5).map(|i| u32_at(p, 4 * i)).collect();
    let Some(len) = pm4::packet_len(cmd[0]).filter(|l| *l <= 4) else {
        return Outcome::Error(QueueError {
            ec: kfd_sys::kfd::EC_QUEUE_PACKET_VENDOR_UNSUPPORTED,
            legacy: report::LEGACY_INVALID_VENDOR_PACKET,
            what: format!("PM4-IB packet with header {:#010x}", cmd[0]),
        });
    };
    q.trace_packet(|| "VENDOR_SPECIFIC PM4-IB".into());
    match pm4::execute(q, cmd[0], &cmd[1..len as usize], false) {
        // PM4 errors inside a vendor packet are vendor packet errors for
        // the CP's report; a refused dispatch stays what it is.
        Outcome::Error(e) if e.ec == kfd_sys::kfd::EC_QUEUE_PACKET_UNSUPPORTED => {
            Outcome::Error(QueueError {
                ec: kfd_sys::kfd::EC_QUEUE_PACKET_VENDOR_UNSUPPORTED,
                legacy: report::LEGACY_INVALID_VENDOR_PACKET,
                what: e.what,
            })
        }
        o => o,
    }
}

fn packet(q: &mut QueueCtx, header: u16, p: &[u8; 64], index: u64) -> Outcome {
    match header & 0xFF {
        ty::BARRIER_AND => barrier(q, p, true),
        ty::BARRIER_OR => barrier(q, p, false),
        ty::VENDOR_SPECIFIC => match p[2] {
            AMD_FORMAT_PM4_IB => pm4_ib(q, p),
            AMD_FORMAT_BARRIER_VALUE => barrier_value(q, p),
            f => Outcome::Error(QueueError {
                ec: kfd_sys::kfd::EC_QUEUE_PACKET_VENDOR_UNSUPPORTED,
                legacy: report::LEGACY_INVALID_VENDOR_PACKET,
                what: format!("vendor packet AmdFormat {f}"),
            }),
        },
        ty::KERNEL_DISPATCH => super::shader::dispatch(q, p, index),
        t => Outcome::Error(QueueError::unsupported(format!(
            "{} packet (type {t})",
            type_name(t)
        ))),
    }
}

/// One step of an AQL queue.
pub(crate) fn step(q: &mut QueueCtx, budget: u32) -> Progress {
    let (base, slots) = (q.run.ring_base, q.run.ring_size / PACKET);
    if base == 0 || slots == 0 {
        return Progress::Stopped;
    }
    let Some((wptr, mut read)) = q.ring_pointers() else {
        return Progress::Stopped;
    };
    let mut ran = 0;
    while read < wptr && ran < budget {
        let slot = base + (read % slots) * PACKET;
        let header = match q.vm.read_u16(slot) {
            Ok(h) => h,
            Err(f) => {
                report::vm_fault(q, f);
                return Progress::Stopped;
            }
        };
        if header & 0xFF == ty::INVALID {
            // Reserved but not written yet.
            break;
        }
        let mut p = [0u8; 64];
        if let Err(f) = q.vm.read(slot, &mut p) {
            report::vm_fault(q, f);
            return Progress::Stopped;
        }
        let start = *q.run.started_at.get_or_insert_with(gpu_clock);
        q.trace_packet(|| {
            format!(
                "#{read} {} barrier={} signal={:#x}",
                type_name(header & 0xFF),
                (header >> 8) & 1,
                u64_at(&p, COMPLETION_SIGNAL)
            )
        });
        let o = packet(q, header, &p, read);
        if let Err(progress) = q.settle(o, ran) {
            return progress;
        }
        // The slot is released (header INVALID, read index past it)
        // before the end-of-pipe signal, as the CP does.
        let ts = report::profiling(q).then(|| (start, gpu_clock()));
        let done =
            q.vm.write_u16(slot, ty::INVALID)
                .and_then(|()| q.vm.write_u64(q.hw.rptr, read + 1))
                .and_then(|()| complete_signal(q, u64_at(&p, COMPLETION_SIGNAL), ts));
        if let Err(f) = done {
            report::vm_fault(q, f);
            return Progress::Stopped;
        }
        read += 1;
        q.run.started_at = None;
        q.packet_done(read);
        ran += 1;
    }
    Progress::after(ran)
}
