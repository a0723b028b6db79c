//! The CP's AQL packet processor (`KFD_IOC_QUEUE_TYPE_COMPUTE_AQL`).
//!
//! 64-byte packets in a ring of `ring_size / 64` slots; the write pointer
//! is `amd_queue_t.write_dispatch_id` (producers bump it before writing
//! the packet, so a slot is ready once its header type is not INVALID),
//! the read pointer is `read_dispatch_id`. Each slot is decoded into the
//! typed packet of `kfd_sys::hsa` ([`Packet`]): `KERNEL_DISPATCH` (run on
//! the shader machine, to its end, before the next packet: see
//! `super::dispatch`), `BARRIER_AND`/`BARRIER_OR` (up to five dependency
//! signals; a signal is satisfied at value 0), `VENDOR_SPECIFIC` with
//! AmdFormat 1 (the PM4 indirect buffer ROCr's `ExecutePM4` builds) and
//! AmdFormat 2 (barrier-value: wait until `(value & mask) cond value`).
//! The barrier bit needs nothing extra: the model completes every packet
//! before it looks at the next. After a packet: the completion signal
//! (with dispatch timestamps when the queue has profiling on), the header
//! back to INVALID, the read index past it. Other types
//! (`AGENT_DISPATCH`, reserved) are invalid packets.

use kfd_sys::hsa::*;
use zerocopy::FromBytes;

use super::report::{self, complete_signal, Outcome, QueueError};
use super::{pm4, Progress, QueueCtx};

/// Bytes per packet.
const PACKET: u64 = 64;

/// An AQL packet decoded from its slot.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Packet {
    /// `KERNEL_DISPATCH`.
    Dispatch(hsa_kernel_dispatch_packet_t),
    /// `BARRIER_AND` (`all`) or `BARRIER_OR`.
    Barrier {
        /// The packet.
        p: hsa_barrier_and_packet_t,
        /// AND (every dependency) rather than OR (any).
        all: bool,
    },
    /// AMD vendor packet, AmdFormat 1.
    Pm4Ib(amd_aql_pm4_ib_packet_t),
    /// AMD vendor packet, AmdFormat 2.
    BarrierValue(hsa_amd_barrier_value_packet_t),
    /// Any other vendor format.
    Vendor(u8),
    /// Any other packet type.
    Other(u16),
}

impl Packet {
    /// Decodes a slot's 64 bytes.
    fn decode(b: &[u8; 64]) -> Packet {
        let ty = u16::from_le_bytes([b[0], b[1]]) & 0xff;
        // The conversions cannot fail: every type is 64 bytes of plain
        // data and `b` is 64 bytes.
        let read = |b: &[u8; 64]| hsa_barrier_and_packet_t::read_from_bytes(b).unwrap_or_default();
        match ty {
            HSA_PACKET_TYPE_KERNEL_DISPATCH => Packet::Dispatch(
                hsa_kernel_dispatch_packet_t::read_from_bytes(b).unwrap_or_default(),
            ),
            HSA_PACKET_TYPE_BARRIER_AND => Packet::Barrier {
                p: read(b),
                all: true,
            },
            HSA_PACKET_TYPE_BARRIER_OR => Packet::Barrier {
                p: read(b),
                all: false,
            },
            HSA_PACKET_TYPE_VENDOR_SPECIFIC => match b[2] {
                AMD_AQL_FORMAT_PM4_IB => {
                    Packet::Pm4Ib(amd_aql_pm4_ib_packet_t::read_from_bytes(b).unwrap_or_default())
                }
                HSA_AMD_PACKET_TYPE_BARRIER_VALUE => Packet::BarrierValue(
                    hsa_amd_barrier_value_packet_t::read_from_bytes(b).unwrap_or_default(),
                ),
                f => Packet::Vendor(f),
            },
            t => Packet::Other(t),
        }
    }

    /// The completion signal handle (the same offset in every format).
    fn completion_signal(b: &[u8; 64]) -> u64 {
        u64::from_le_bytes(b[56..64].try_into().unwrap_or_default())
    }
}

fn type_name(t: u16) -> &'static str {
    match t {
        HSA_PACKET_TYPE_VENDOR_SPECIFIC => "VENDOR_SPECIFIC",
        HSA_PACKET_TYPE_KERNEL_DISPATCH => "KERNEL_DISPATCH",
        HSA_PACKET_TYPE_BARRIER_AND => "BARRIER_AND",
        HSA_PACKET_TYPE_BARRIER_OR => "BARRIER_OR",
        HSA_PACKET_TYPE_AGENT_DISPATCH => "AGENT_DISPATCH",
        _ => "reserved",
    }
}

/// The value of the signal with handle `h`.
fn signal_value(q: &mut QueueCtx, h: u64) -> Result<i64, crate::mem::Fault> {
    q.vm.load::<u64>(h + 8).map(|v| v as i64)
}

fn barrier(q: &mut QueueCtx, p: &hsa_barrier_and_packet_t, all: bool) -> Outcome {
    let deps: Vec<u64> = p.dep_signal.iter().copied().filter(|h| *h != 0).collect();
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

fn barrier_value(q: &mut QueueCtx, p: &hsa_amd_barrier_value_packet_t) -> Outcome {
    let (sig, value, mask, cond) = (p.signal, p.value, p.mask, p.cond);
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
        HSA_SIGNAL_CONDITION_EQ => cur == value,
        HSA_SIGNAL_CONDITION_NE => cur != value,
        HSA_SIGNAL_CONDITION_LT => cur < value,
        HSA_SIGNAL_CONDITION_GTE => cur >= value,
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
/// to the IB holding the real commands).
fn pm4_ib(q: &mut QueueCtx, p: &amd_aql_pm4_ib_packet_t) -> Outcome {
    let cmd = p.ib_jump_cmd;
    let Some(len) = pm4::packet_len(cmd[0])
        .ok()
        .filter(|l| *l <= cmd.len() as u64)
    else {
        return Outcome::Error(QueueError {
            ec: kfd_sys::kfd::EC_QUEUE_PACKET_VENDOR_UNSUPPORTED,
            legacy: report::LEGACY_INVALID_VENDOR_PACKET,
            what: format!("PM4-IB packet with header {:#010x}", cmd[0]),
        });
    };
    q.trace_packet(|| "VENDOR_SPECIFIC PM4-IB".into());
    match pm4::execute(q, &cmd[..len as usize], false) {
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

fn packet(q: &mut QueueCtx, p: &Packet, index: u64) -> Outcome {
    match p {
        Packet::Dispatch(d) => super::dispatch::dispatch(q, d, index),
        Packet::Barrier { p, all } => barrier(q, p, *all),
        Packet::Pm4Ib(p) => pm4_ib(q, p),
        Packet::BarrierValue(p) => barrier_value(q, p),
        Packet::Vendor(f) => Outcome::Error(QueueError {
            ec: kfd_sys::kfd::EC_QUEUE_PACKET_VENDOR_UNSUPPORTED,
            legacy: report::LEGACY_INVALID_VENDOR_PACKET,
            what: format!("vendor packet AmdFormat {f}"),
        }),
        Packet::Other(t) => Outcome::Error(QueueError::unsupported(format!(
            "{} packet (type {t})",
            type_name(*t)
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
        let header = match q.vm.load::<u16>(slot) {
            Ok(h) => h,
            Err(f) => {
                report::vm_fault(q, f);
                return Progress::Stopped;
            }
        };
        if header & 0xFF == HSA_PACKET_TYPE_INVALID {
            // Reserved but not written yet.
            break;
        }
        let mut b = [0u8; 64];
        if let Err(f) = q.vm.read(slot, &mut b) {
            report::vm_fault(q, f);
            return Progress::Stopped;
        }
        let p = Packet::decode(&b);
        let signal = Packet::completion_signal(&b);
        let start = *q.run.started_at.get_or_insert_with(q.clocks.gpu);
        q.trace_packet(|| {
            format!(
                "#{read} {} barrier={} signal={signal:#x}",
                type_name(header & 0xFF),
                (header >> 8) & 1,
            )
        });
        let o = packet(q, &p, read);
        if let Err(progress) = q.settle(o, ran) {
            return progress;
        }
        // The slot is released (header INVALID, read index past it)
        // before the end-of-pipe signal, as the CP does.
        let ts = report::profiling(q).then(|| (start, (q.clocks.gpu)()));
        let done =
            q.vm.store::<u16>(slot, HSA_PACKET_TYPE_INVALID)
                .and_then(|()| q.vm.store::<u64>(q.hw.rptr, read + 1))
                .and_then(|()| complete_signal(q, signal, ts));
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
