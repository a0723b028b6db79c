//! What packets report back: completion signals, event interrupts, queue
//! errors and GPU memory faults, each delivered the way the hardware and
//! the kernel deliver it.

use std::mem::offset_of;

use kfd_sys::hsa::{amd_queue_t, amd_signal_t, AMD_QUEUE_PROPERTIES_ENABLE_PROFILING};
use kfd_sys::kfd::*;

use super::{stop, Interrupt, QueueCtx};
use crate::mem::Fault;

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueError {
    /// The exception code (`EC_*`).
    pub ec: u32,
    /// The CP's own error code.
    pub legacy: u64,
    /// What went wrong, for the trace and stderr.
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

    /// A dispatch the model cannot run: the shader machine does not model
    /// the GPU's ISA, so the code object can never be executed
    /// (`EC_QUEUE_PACKET_DISPATCH_CODE_INVALID`).
    pub fn no_isa(what: String) -> QueueError {
        QueueError {
            ec: EC_QUEUE_PACKET_DISPATCH_CODE_INVALID,
            legacy: LEGACY_INVALID_CODE,
            what,
        }
    }
}

/// Byte offsets in `amd_signal_t`.
mod signal {
    use super::*;
    pub const VALUE: u64 = offset_of!(amd_signal_t, value) as u64;
    pub const MAILBOX: u64 = offset_of!(amd_signal_t, event_mailbox_ptr) as u64;
    pub const EVENT_ID: u64 = offset_of!(amd_signal_t, event_id) as u64;
    pub const START_TS: u64 = offset_of!(amd_signal_t, start_ts) as u64;
    pub const END_TS: u64 = offset_of!(amd_signal_t, end_ts) as u64;
}

/// Byte offsets in `amd_queue_t`.
mod amd_queue {
    use super::*;
    /// `read_dispatch_id`, the AQL read pointer the CP is given.
    pub const READ_DISPATCH_ID: u64 = offset_of!(amd_queue_t, read_dispatch_id) as u64;
    /// `read_dispatch_id_field_base_byte_offset`.
    pub const READ_ID_OFFSET_FIELD: u64 =
        offset_of!(amd_queue_t, read_dispatch_id_field_base_byte_offset) as u64;
    /// `queue_properties`.
    pub const PROPERTIES: u64 = offset_of!(amd_queue_t, queue_properties) as u64;
    /// `queue_inactive_signal`.
    pub const INACTIVE_SIGNAL: u64 = offset_of!(amd_queue_t, queue_inactive_signal) as u64;
}

/// The `amd_queue_t` an AQL queue's read pointer belongs to, if the
/// structure around it says so (`read_dispatch_id_field_base_byte_offset`
/// leads back to it, as the CP finds it); kfdtest-style queues have none.
pub(crate) fn amd_queue(q: &mut QueueCtx) -> Option<u64> {
    let field =
        q.hw.rptr
            .checked_add(amd_queue::READ_ID_OFFSET_FIELD - amd_queue::READ_DISPATCH_ID)?;
    let off = q.vm.load::<u32>(field).ok()?;
    (u64::from(off) == amd_queue::READ_DISPATCH_ID).then(|| q.hw.rptr - amd_queue::READ_DISPATCH_ID)
}

/// True if the queue's `amd_queue_t` asks for dispatch timestamps.
pub(crate) fn profiling(q: &mut QueueCtx) -> bool {
    amd_queue(q)
        .and_then(|base| q.vm.load::<u32>(base + amd_queue::PROPERTIES).ok())
        .is_some_and(|p| p & AMD_QUEUE_PROPERTIES_ENABLE_PROFILING != 0)
}

/// Raises the event interrupt for context id `id` (`valid_bits` of it are
/// meaningful), as the interrupt handler's `kfd_signal_event_interrupt`.
pub(crate) fn interrupt(q: &QueueCtx, id: u32, valid_bits: u32) {
    q.trace(|| format!("interrupt ctx_id={id} bits={valid_bits}"));
    q.hw.raise(Interrupt::Signal {
        ctx_id: id,
        valid_bits,
    });
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
        q.vm.store::<u64>(handle + signal::START_TS, start)?;
        q.vm.store::<u64>(handle + signal::END_TS, end)?;
    }
    q.vm.update::<u64>(handle + signal::VALUE, &mut |v| v.wrapping_sub(1))?;
    mailbox(q, handle)
}

/// Writes the signal's event id to its mailbox and raises the interrupt,
/// if it has a mailbox.
fn mailbox(q: &mut QueueCtx, handle: u64) -> Result<(), Fault> {
    let mailbox = q.vm.load::<u64>(handle + signal::MAILBOX)?;
    if mailbox != 0 {
        let id = q.vm.load::<u32>(handle + signal::EVENT_ID)?;
        q.vm.store::<u64>(mailbox, u64::from(id))?;
        interrupt(q, id, 32);
    }
    Ok(())
}

/// Says once per OS process, on stderr, why a dispatch failed (the queue
/// error the runtime reports names an invalid code object, which would
/// mislead without it).
fn explain_no_isa(what: &str) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!(
                "kfd-sim: a kernel dispatch was refused: {what}; the queue stops with \
                 EC_QUEUE_PACKET_DISPATCH_CODE_INVALID (the runtime reports an invalid code \
                 object)\n"
            )
            .as_bytes(),
        );
    });
}

/// A queue error: the queue stops, and the error goes where the kernel
/// and the CP send it: the driver model delivers it to a debugger that
/// enabled the exception or to the runtime (see [`super::InterruptSink`]);
/// otherwise, for an AQL queue, the CP writes its own code into
/// `queue_inactive_signal` and raises that signal's event.
pub(crate) fn queue_error(q: &mut QueueCtx, e: &QueueError) {
    q.hw.set_stop(stop::ERROR, true);
    q.trace(|| format!("queue error {} (EC {}): {}", e.legacy, e.ec, e.what));
    if e.ec == EC_QUEUE_PACKET_DISPATCH_CODE_INVALID {
        explain_no_isa(&e.what);
    }
    if q.hw.raise(Interrupt::QueueError { ec: e.ec }) {
        return;
    }
    if q.hw.kind == super::Kind::Aql {
        if let Some(base) = amd_queue(q) {
            let r =
                q.vm.load::<u64>(base + amd_queue::INACTIVE_SIGNAL)
                    .and_then(|sig| {
                        if sig == 0 {
                            return Ok(());
                        }
                        q.vm.store::<u64>(sig + signal::VALUE, e.legacy)?;
                        mailbox(q, sig)
                    });
            if let Err(f) = r {
                q.trace(|| format!("queue_inactive_signal unreachable at {:#x}", f.va));
            }
        }
    }
}

/// A GPU memory fault: the queue stops (evicted) and the driver model's
/// interrupt handler does the rest (`kfd_signal_vm_fault_event`: every
/// queue of the process on this GPU evicted, memory exception events
/// set).
pub(crate) fn vm_fault(q: &mut QueueCtx, f: Fault) {
    q.trace(|| {
        format!(
            "GPU memory fault at {:#x} ({}{}): queues of the process on this GPU evicted",
            f.va,
            if f.write { "write" } else { "read" },
            if f.read_only { ", read-only page" } else { "" }
        )
    });
    q.hw.set_stop(stop::EVICTED, true);
    q.hw.raise(Interrupt::VmFault(f));
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
