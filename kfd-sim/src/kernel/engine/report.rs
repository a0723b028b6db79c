//! What packets report back: completion signals, event interrupts, queue
//! errors and GPU memory faults, each delivered the way the hardware and
//! the kernel deliver it.

use kfd_sys::kfd::*;

use super::{stop, Fault, QueueCtx};
use crate::kernel::{lock, usermem, PAGE};

/// How a packet ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Executed; the read pointer moves past it.
    Done,
    /// Waits for memory to change; it is looked at again later.
    Blocked,
    /// The queue was told to stop in the middle of it (it is redone when
    /// the queue runs again).
    Interrupted,
    /// The packet cannot be executed: the queue stops with an error.
    Error(QueueError),
    /// A GPU page fault.
    Fault(Fault),
}

impl From<Fault> for Outcome {
    fn from(f: Fault) -> Outcome {
        Outcome::Fault(f)
    }
}

/// A queue error: the exception code the kernel reports (`EC_*`) and the
/// code the CP writes to an AQL queue's `queue_inactive_signal` when the
/// runtime has not enabled exception reporting (ROCr's
/// `DynamicScratchHandler` decodes it).
#[derive(Debug)]
pub(crate) struct QueueError {
    pub ec: u32,
    pub legacy: u64,
    pub what: String,
}

/// CP error code: invalid (or NULL) code object.
pub(crate) const LEGACY_INVALID_CODE: u64 = 8;
/// CP error code: invalid packet format.
pub(crate) const LEGACY_INVALID_PACKET: u64 = 32;
/// CP error code: invalid vendor-specific packet.
pub(crate) const LEGACY_INVALID_VENDOR_PACKET: u64 = 256;

impl QueueError {
    /// An unsupported packet (`EC_QUEUE_PACKET_UNSUPPORTED`).
    pub fn unsupported(what: String) -> QueueError {
        QueueError {
            ec: EC_QUEUE_PACKET_UNSUPPORTED,
            legacy: LEGACY_INVALID_PACKET,
            what,
        }
    }

    /// A dispatch the model cannot run: there is no shader ISA model, so
    /// the code object can never be executed
    /// (`EC_QUEUE_PACKET_DISPATCH_CODE_INVALID`).
    pub fn no_isa(what: String) -> QueueError {
        QueueError {
            ec: EC_QUEUE_PACKET_DISPATCH_CODE_INVALID,
            legacy: LEGACY_INVALID_CODE,
            what,
        }
    }
}

/// Byte offsets in `amd_signal_t` (amd_hsa_signal.h).
mod signal {
    pub const VALUE: u64 = 8;
    pub const MAILBOX: u64 = 16;
    pub const EVENT_ID: u64 = 24;
    pub const START_TS: u64 = 32;
    pub const END_TS: u64 = 40;
}

/// Byte offsets in `amd_queue_t` (amd_hsa_queue.h).
mod amd_queue {
    /// `read_dispatch_id`, the AQL read pointer the CP is given.
    pub const READ_DISPATCH_ID: u64 = 128;
    /// `read_dispatch_id_field_base_byte_offset`.
    pub const READ_ID_OFFSET_FIELD: u64 = 136;
    /// `queue_properties` (bit 3: ENABLE_PROFILING).
    pub const PROPERTIES: u64 = 180;
    /// `queue_inactive_signal`.
    pub const INACTIVE_SIGNAL: u64 = 192;
    pub const PROFILING: u32 = 1 << 3;
}

/// The `amd_queue_t` an AQL queue's read pointer belongs to, if the
/// structure around it says so (`read_dispatch_id_field_base_byte_offset`
/// leads back to it, as the CP finds it); kfdtest-style queues have none.
pub(crate) fn amd_queue(q: &mut QueueCtx) -> Option<u64> {
    let field =
        q.hw.rptr
            .checked_add(amd_queue::READ_ID_OFFSET_FIELD - amd_queue::READ_DISPATCH_ID)?;
    let off = q.vm.read_u32(field).ok()?;
    (u64::from(off) == amd_queue::READ_DISPATCH_ID).then(|| q.hw.rptr - amd_queue::READ_DISPATCH_ID)
}

/// True if the queue's `amd_queue_t` asks for dispatch timestamps.
pub(crate) fn profiling(q: &mut QueueCtx) -> bool {
    amd_queue(q)
        .and_then(|base| q.vm.read_u32(base + amd_queue::PROPERTIES).ok())
        .is_some_and(|p| p & amd_queue::PROFILING != 0)
}

/// Raises the event interrupt for context id `id` (`valid_bits` of it are
/// meaningful), as the interrupt handler's `kfd_signal_event_interrupt`.
pub(crate) fn interrupt(q: &QueueCtx, id: u32, valid_bits: u32) {
    q.trace(|| format!("interrupt ctx_id={id} bits={valid_bits}"));
    q.proc.events.signal_interrupt(id, valid_bits);
}

/// Completes an AQL completion signal: start/end timestamps when given,
/// the value decremented, and, for a signal with an event mailbox, the
/// event id written there and the event interrupt raised (the CP's
/// end-of-pipe with the event id as context).
pub(crate) fn complete_signal(
    q: &mut QueueCtx,
    handle: u64,
    timestamps: Option<(u64, u64)>,
) -> Result<(), Fault> {
    if handle == 0 {
        return Ok(());
    }
    if let Some((start, end)) = timestamps {
        q.vm.write_u64(handle + signal::START_TS, start)?;
        q.vm.write_u64(handle + signal::END_TS, end)?;
    }
    q.vm.fetch_add_u64(handle + signal::VALUE, u64::MAX)?;
    mailbox(q, handle)
}

/// Writes the signal's event id to its mailbox and raises the interrupt,
/// if it has a mailbox.
fn mailbox(q: &mut QueueCtx, handle: u64) -> Result<(), Fault> {
    let mailbox = q.vm.read_u64(handle + signal::MAILBOX)?;
    if mailbox != 0 {
        let id = q.vm.read_u32(handle + signal::EVENT_ID)?;
        q.vm.write_u64(mailbox, u64::from(id))?;
        interrupt(q, id, 32);
    }
    Ok(())
}

/// Says once per OS process, on stderr, why a dispatch failed (the queue
/// error the runtime reports names an invalid code object, which would
/// mislead without it).
fn explain_no_isa() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"kfd-sim: a kernel dispatch was refused: the simulator has no shader ISA model, so \
              the queue stops with EC_QUEUE_PACKET_DISPATCH_CODE_INVALID (the runtime reports an \
              invalid code object)\n",
        );
    });
}

/// A queue error: the queue stops, and the error goes where the kernel
/// and the CP send it: to a debugger that enabled the exception
/// (`kfd_dbg_ev_raise`), else, when the runtime is enabled, into the
/// error payload of the queue's context save area header with its error
/// event set (`kfd_send_exception_to_runtime`), else, for an AQL queue,
/// into `queue_inactive_signal` (the CP's own report: value = error code,
/// its event raised).
pub(crate) fn queue_error(q: &mut QueueCtx, e: &QueueError) {
    q.hw.set_stop(stop::ERROR, true);
    q.trace(|| format!("queue error {} (EC {}): {}", e.legacy, e.ec, e.what));
    if e.ec == EC_QUEUE_PACKET_DISPATCH_CODE_INVALID {
        explain_no_isa();
    }
    let mask = kfd_ec_mask(e.ec);
    let (debugger, runtime) = {
        let mut st = lock(&q.proc.state);
        let debugger = st.debug.trap_enabled && st.debug.exception_enable_mask & mask != 0;
        if st.debug.trap_enabled {
            if let Some(kq) = st.queues.get_mut(&q.hw.queue_id) {
                kq.exception_status |= mask;
            }
        }
        if debugger {
            st.debug.notify_debugger();
        }
        (
            debugger,
            st.debug.runtime_state == DEBUG_RUNTIME_STATE_ENABLED,
        )
    };
    if debugger {
        return;
    }
    if runtime && q.hw.ctx_save != 0 && send_to_runtime(q, mask) {
        return;
    }
    if q.hw.kind == super::Kind::Aql {
        if let Some(base) = amd_queue(q) {
            let r =
                q.vm.read_u64(base + amd_queue::INACTIVE_SIGNAL)
                    .and_then(|sig| {
                        if sig == 0 {
                            return Ok(());
                        }
                        q.vm.write_u64(sig + signal::VALUE, e.legacy)?;
                        mailbox(q, sig)
                    });
            if let Err(f) = r {
                q.trace(|| format!("queue_inactive_signal unreachable at {:#x}", f.va));
            }
        }
    }
}

/// `send_exception_work_handler`: ORs the exception into the payload the
/// context save area header points at and sets the header's error event.
/// The header is user memory the kernel reaches with get_user/put_user.
fn send_to_runtime(q: &mut QueueCtx, mask: u64) -> bool {
    let hdr = q.hw.ctx_save;
    let read = |addr: u64| {
        let mut b = [0u8; 8];
        usermem::read(addr, &mut b)
            .ok()
            .map(|()| u64::from_ne_bytes(b))
    };
    let (Some(payload), Some(ev)) = (read(hdr + 24), read(hdr + 32)) else {
        return false;
    };
    if payload == 0 {
        return false;
    }
    let Some(cur) = read(payload) else {
        return false;
    };
    if usermem::write(payload, &(cur | mask).to_ne_bytes()).is_err() {
        return false;
    }
    q.proc.events.set_signal_event(ev as u32);
    true
}

/// A GPU memory fault, handled as the kernel's interrupt handler does
/// (`event_interrupt_wq_v9`): the SMI `VMFAULT` event (`pid:task`, to the
/// process's SMI clients of this GPU), the eviction of every queue of the
/// process on this GPU, and `kfd_signal_vm_fault_event`: every memory
/// exception event of the process is set with the faulting page, GPU and
/// reason.
pub(crate) fn vm_fault(q: &mut QueueCtx, f: Fault) {
    let pid = q.proc.os_pid;
    crate::kernel::smi_event(
        q.files,
        q.hw.gpu_id,
        pid,
        KFD_SMI_EVENT_VMFAULT,
        &format!("{pid:x}:{}\n", crate::kernel::task_name()),
    );
    q.trace(|| {
        format!(
            "GPU memory fault at {:#x} ({}{}): queues of the process on this GPU evicted",
            f.va,
            if f.write { "write" } else { "read" },
            if f.read_only { ", read-only page" } else { "" }
        )
    });
    {
        let st = lock(&q.proc.state);
        for kq in st.queues.values().filter(|kq| kq.dev == q.hw.dev) {
            kq.hw.set_stop(stop::EVICTED, true);
        }
    }
    q.hw.set_stop(stop::EVICTED, true);
    let data = kfd_hsa_memory_exception_data {
        failure: kfd_memory_exception_failure {
            NotPresent: u32::from(!f.read_only),
            ReadOnly: u32::from(f.read_only),
            NoExecute: 0,
            imprecise: 0,
        },
        va: f.va & !(PAGE - 1),
        gpu_id: q.hw.gpu_id,
        ErrorType: 0,
    };
    q.proc.events.signal_type(KFD_IOC_EVENT_MEMORY, Some(data));
}

/// Applies a packet's outcome to the queue: errors and faults are
/// reported (and stop it).
pub(crate) fn settle(q: &mut QueueCtx, o: Outcome) -> Outcome {
    match o {
        Outcome::Error(e) => {
            queue_error(q, &e);
            Outcome::Error(e)
        }
        Outcome::Fault(f) => {
            vm_fault(q, f);
            Outcome::Fault(f)
        }
        o => o,
    }
}
