//! [`AqlQueue`]: an AQL queue that owns its ring and `amd_queue_t`, and
//! submits packets with the AQL producer protocol.

use std::fmt;
use std::mem::offset_of;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use kfd_event::{Condition, Events, Signal};
use kfd_fmm::{Buffer, Fmm, MemFlags};
use kfd_sys::hsa::{amd_queue_t, AMD_QUEUE_PROPERTIES_IS_PTR64, HSA_PACKET_TYPE_INVALID};
use zerocopy::IntoBytes;

use crate::error::QueueError;
use crate::fault::FaultWatch;
use crate::packet::{AqlPacket, AQL_PACKET_SIZE};
use crate::queue::{Queue, QueueKind, QueueRequest};
use crate::queues::Queues;

/// Byte offsets in the control page.
mod control {
    use super::*;
    /// `amd_queue_t.write_dispatch_id`: the write index (the queue's
    /// write pointer).
    pub const WRITE_INDEX: u64 = offset_of!(amd_queue_t, write_dispatch_id) as u64;
    /// `amd_queue_t.read_dispatch_id`: the read index the CP advances
    /// (the queue's read pointer).
    pub const READ_INDEX: u64 = offset_of!(amd_queue_t, read_dispatch_id) as u64;
    /// `amd_queue_t.hsa_queue.id`: the queue id.
    pub const QUEUE_ID: u64 =
        (offset_of!(amd_queue_t, hsa_queue) + offset_of!(kfd_sys::hsa::hsa_queue_t, id)) as u64;
    /// The 64-bit exception payload after the `amd_queue_t`: the kernel
    /// ORs `KFD_EC_MASK` bits into it when the runtime is enabled (the
    /// save-area header's error reason points here).
    pub const ERROR_REASON: u64 = std::mem::size_of::<amd_queue_t>() as u64;
    /// Bytes allocated: one page.
    pub const SIZE: u64 = 4096;
}

/// The largest ring: the kernel takes the ring size in bytes as a 32-bit
/// power of two.
pub const MAX_AQL_PACKETS: u32 = 1 << 25;

/// The smallest ring: the kernel clamps smaller rings up to
/// `KFD_MIN_QUEUE_RING_SIZE` bytes, and the GPU would then read slots
/// past the ring this queue owns.
pub const MIN_AQL_PACKETS: u32 = kfd_sys::kfd::KFD_MIN_QUEUE_RING_SIZE / AQL_PACKET_SIZE as u32;

/// How long a submission waits for room in a full ring by default.
pub const DEFAULT_SUBMIT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the CP's error code in `queue_inactive_signal` means (its bits,
/// as ROCr decodes them), most specific first.
pub fn cp_error_cause(code: u64) -> &'static str {
    const CAUSES: [(u64, &str); 11] = [
        (0x401, "not enough scratch memory"),
        (0x2, "invalid dispatch dimensions"),
        (0x4, "invalid group segment size"),
        (0x8, "invalid (or NULL) code object"),
        (0x20, "invalid packet format"),
        (0x100, "invalid vendor-specific packet"),
        (0x40, "workgroup too large"),
        (0x80, "out of VGPRs"),
        (0x2000_0000, "memory violation (address beyond 48 bits)"),
        (0x4000_0000, "illegal instruction"),
        (0x8000_0000, "debug trap"),
    ];
    CAUSES
        .iter()
        .find(|(bits, _)| code & bits != 0)
        .map_or("unknown queue error", |(_, what)| what)
}

/// What the first queue exception in a `KFD_EC_MASK` set is (the
/// exception codes the kernel sends to the runtime).
pub fn queue_exception_cause(mask: u64) -> &'static str {
    use kfd_sys::kfd::*;
    const CAUSES: [(u32, &str); 15] = [
        (EC_QUEUE_WAVE_ABORT, "wave abort"),
        (EC_QUEUE_WAVE_TRAP, "wave trap"),
        (EC_QUEUE_WAVE_MATH_ERROR, "wave math error"),
        (EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION, "illegal instruction"),
        (EC_QUEUE_WAVE_MEMORY_VIOLATION, "memory violation"),
        (EC_QUEUE_WAVE_APERTURE_VIOLATION, "aperture violation"),
        (
            EC_QUEUE_PACKET_DISPATCH_DIM_INVALID,
            "invalid dispatch dimensions",
        ),
        (
            EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID,
            "invalid group segment size",
        ),
        (EC_QUEUE_PACKET_DISPATCH_CODE_INVALID, "invalid code object"),
        (EC_QUEUE_PACKET_RESERVED, "reserved packet type"),
        (EC_QUEUE_PACKET_UNSUPPORTED, "unsupported packet"),
        (
            EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID,
            "invalid workgroup size",
        ),
        (
            EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID,
            "invalid register count",
        ),
        (
            EC_QUEUE_PACKET_VENDOR_UNSUPPORTED,
            "unsupported vendor packet",
        ),
        (EC_QUEUE_PREEMPTION_ERROR, "preemption error"),
    ];
    CAUSES
        .iter()
        .find(|(ec, _)| mask & kfd_ec_mask(*ec) != 0)
        .map_or("unknown queue exception", |(_, what)| what)
}

/// An AQL compute queue that owns its memory and submits packets.
///
/// Created with [`AqlQueue::new`] through [`Queues::create`]: a ring of
/// `packets` 64-byte slots (a power of two, every header INVALID) and a
/// control page holding an `amd_queue_t` whose `write_dispatch_id` and
/// `read_dispatch_id` are the queue's write and read pointers, both in
/// pinned host memory mapped to the GPUs, as ROCr allocates them.
///
/// # Errors reach the caller
///
/// The queue watches for the ways a GPU queue fails instead of leaving a
/// waiter to time out:
///
/// - the CP's error code, written into the `amd_queue_t`'s
///   `queue_inactive_signal` (a [`Signal`] of the queue) when the queue
///   stops on a packet it cannot execute: [`QueueError::QueueStopped`];
/// - the exception the kernel sends to the runtime when the process
///   enabled it (the queue's save area names the queue's exception
///   payload and that signal's event): [`QueueError::QueueException`];
/// - a GPU memory fault on the queue's GPU, through a memory exception
///   event of the queue: [`QueueError::MemoryFault`] (a fault on another
///   GPU evicts that GPU's queues, not this one).
///
/// [`AqlQueue::wait`] sleeps on a signal and on these, and returns the
/// error as soon as one of them fires; [`AqlQueue::check`] looks without
/// waiting.
///
/// # Dropping
///
/// Dropping the queue destroys it in the kernel, then frees the ring and
/// the control page and destroys its signal and event;
/// [`AqlQueue::destroy`] does the same and reports a failure.
pub struct AqlQueue {
    queues: Arc<Queues>,
    queue: Queue,
    ring: Buffer,
    control: Buffer,
    inactive: Signal,
    faults: FaultWatch,
    slots: u64,
    submit_timeout: Duration,
}

impl fmt::Debug for AqlQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AqlQueue")
            .field("queue", &self.queue)
            .field("ring", &format_args!("{:#x}", self.ring.addr()))
            .field("packets", &self.slots)
            .finish_non_exhaustive()
    }
}

impl AqlQueue {
    /// Creates an AQL queue of `packets` slots on GPU node `node_id`,
    /// with its ring, control page, inactive signal and memory event,
    /// all from one context's sub-contexts.
    ///
    /// [`QueueError::InvalidPacketCount`] unless `packets` is a power of
    /// two from [`MIN_AQL_PACKETS`] to [`MAX_AQL_PACKETS`]; otherwise as
    /// [`Queues::create`], or the allocation or event that failed.
    pub fn new(
        queues: &Arc<Queues>,
        events: &Arc<Events>,
        fmm: &Arc<Fmm>,
        node_id: u32,
        packets: u32,
    ) -> Result<AqlQueue, QueueError> {
        if !packets.is_power_of_two() || !(MIN_AQL_PACKETS..=MAX_AQL_PACKETS).contains(&packets) {
            return Err(QueueError::InvalidPacketCount(packets));
        }
        let slots = u64::from(packets);
        let host = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
        let ring_bytes = slots * AQL_PACKET_SIZE;
        // The memory manager allocates whole pages: a ring smaller than
        // a page uses the start of its page.
        let page = kfd_sys::mman::page_size() as u64;
        let ring = fmm
            .alloc_buffer(0, ring_bytes.next_multiple_of(page), 0, host)
            .map_err(QueueError::Memory)?;
        let mut empty = vec![0u8; ring_bytes as usize];
        for slot in empty.chunks_exact_mut(AQL_PACKET_SIZE as usize) {
            slot[..2].copy_from_slice(&HSA_PACKET_TYPE_INVALID.to_le_bytes());
        }
        ring.write(0, &empty).map_err(QueueError::Memory)?;
        ring.map().map_err(QueueError::Memory)?;

        let inactive = Signal::new(events, fmm, 0)?;
        let faults = FaultWatch::new(events, node_id)?;
        let control = fmm
            .alloc_buffer(0, control::SIZE, 0, host)
            .map_err(QueueError::Memory)?;
        let mut amd_queue = amd_queue_t::default();
        amd_queue.hsa_queue.base_address = ring.addr();
        amd_queue.hsa_queue.size = packets;
        amd_queue.read_dispatch_id_field_base_byte_offset = control::READ_INDEX as u32;
        amd_queue.queue_properties = AMD_QUEUE_PROPERTIES_IS_PTR64;
        amd_queue.queue_inactive_signal = inactive.handle().handle;
        control
            .write(0, amd_queue.as_bytes())
            .and_then(|()| control.map().map(|_| ()))
            .and_then(|()| control.atomic_u64(control::WRITE_INDEX).map(|_| ()))
            .map_err(QueueError::Memory)?;

        let mut req = QueueRequest::new(node_id, QueueKind::ComputeAql, ring.addr(), ring_bytes);
        req.read_ptr = control.addr() + control::READ_INDEX;
        req.write_ptr = control.addr() + control::WRITE_INDEX;
        req.error_event_id = inactive.event().id();
        req.error_reason = control.addr() + control::ERROR_REASON;
        let queue = queues.create(&req)?;
        // From here on dropping `q` releases everything.
        let q = AqlQueue {
            queues: queues.clone(),
            queue,
            ring,
            control,
            inactive,
            faults,
            slots,
            submit_timeout: DEFAULT_SUBMIT_TIMEOUT,
        };
        let id = q.queue.id().raw();
        q.control
            .write(control::QUEUE_ID, &id.to_ne_bytes())
            .map_err(QueueError::Memory)?;
        Ok(q)
    }

    /// The queue (its id, doorbell, pointers, CWSR area).
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    /// Packet slots in the ring.
    pub fn packets(&self) -> u32 {
        self.slots as u32
    }

    /// How long [`AqlQueue::submit`] waits for room in a full ring
    /// before it fails with [`QueueError::RingFull`].
    pub fn set_submit_timeout(&mut self, timeout: Duration) {
        self.submit_timeout = timeout;
    }

    /// The write index: packets reserved so far.
    pub fn write_index(&self) -> Result<u64, QueueError> {
        self.control
            .load_u64(control::WRITE_INDEX)
            .map_err(QueueError::Memory)
    }

    /// The read index: packets the GPU has consumed.
    pub fn read_index(&self) -> Result<u64, QueueError> {
        self.control
            .load_u64(control::READ_INDEX)
            .map_err(QueueError::Memory)
    }

    /// Submits one packet; returns its index (see
    /// [`AqlQueue::submit_batch`]).
    pub fn submit(&self, packet: &AqlPacket) -> Result<u64, QueueError> {
        self.submit_batch(std::slice::from_ref(packet))
    }

    /// Submits `packets` in order, in consecutive slots; returns the index
    /// of the first.
    ///
    /// The AQL producer protocol: the slots are reserved by advancing the
    /// write index atomically (other threads may submit to the same queue)
    /// once the ring has room for all of them (read index from the read
    /// pointer), waiting for room at most the submit timeout
    /// ([`QueueError::RingFull`]; nothing is reserved then); then each
    /// packet's body is written, then its first 32 bits (header and
    /// setup) with a release store, which hands the slot to the GPU; then
    /// the doorbell is rung with the index of the last packet. A batch
    /// larger than the ring is [`QueueError::BatchTooLarge`]; a queue that
    /// stopped with an error reports it instead of waiting for room.
    pub fn submit_batch(&self, packets: &[AqlPacket]) -> Result<u64, QueueError> {
        let n = packets.len() as u64;
        if n > self.slots {
            return Err(QueueError::BatchTooLarge {
                packets: packets.len(),
                slots: self.packets(),
            });
        }
        let first = self.reserve(n)?;
        if n == 0 {
            return Ok(first);
        }
        for (i, p) in packets.iter().enumerate() {
            let at = ((first + i as u64) % self.slots) * AQL_PACKET_SIZE;
            self.ring
                .write(at + 4, &p.as_bytes()[4..])
                .and_then(|()| self.ring.store_u32(at, p.header_word()))
                .map_err(QueueError::Memory)?;
        }
        self.queues.ring_doorbell(&self.queue, first + n - 1)?;
        Ok(first)
    }

    /// Advances the write index by `n` once the ring has room for `n`
    /// more packets; returns the old index.
    fn reserve(&self, n: u64) -> Result<u64, QueueError> {
        let write = self
            .control
            .atomic_u64(control::WRITE_INDEX)
            .map_err(QueueError::Memory)?;
        crate::retry_until(self.submit_timeout, || {
            let mut index = write.load(Ordering::Relaxed);
            loop {
                let read = self.read_index()?;
                if index.wrapping_sub(read) + n > self.slots {
                    // A ring that stays full may belong to a queue a GPU
                    // fault stopped: no signal wait looks at the fault
                    // event here, so look at it without sleeping.
                    self.check()?;
                    self.faults.poll()?;
                    return Ok(None);
                }
                match write.compare_exchange_weak(
                    index,
                    index + n,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return Ok(Some(index)),
                    Err(now) => index = now,
                }
            }
        })
    }

    /// The queue's error, if it has one: the CP's code in the inactive
    /// signal, the exception the kernel sent to the runtime, or the memory
    /// fault a wait saw on the queue's memory event.
    pub fn check(&self) -> Result<(), QueueError> {
        let code = self.inactive.load()?;
        if code != 0 {
            let code = code as u64;
            return Err(QueueError::QueueStopped {
                code,
                cause: cp_error_cause(code),
            });
        }
        let mask = self
            .control
            .load_u64(control::ERROR_REASON)
            .map_err(QueueError::Memory)?;
        if mask != 0 {
            return Err(QueueError::QueueException {
                mask,
                cause: queue_exception_cause(mask),
            });
        }
        self.faults.check()
    }

    /// Sleeps until `signal` meets `condition` against `compare` and
    /// returns its value, as [`Signal::wait_until`] does, but wakes also
    /// when this queue fails and returns its error ([`AqlQueue::check`]);
    /// [`kfd_event::EventError::SignalTimeout`] (as
    /// [`QueueError::Event`]) after `timeout`.
    pub fn wait(
        &self,
        signal: &Signal,
        condition: Condition,
        compare: i64,
        timeout: Duration,
    ) -> Result<i64, QueueError> {
        let also = [self.inactive.event().clone(), self.faults.event().clone()];
        signal.wait_until_or(condition, compare, timeout, &also, || self.check())
    }

    /// Destroys the queue, then frees its memory and destroys its signal
    /// and event; reports a failure to destroy the queue. (If the kernel
    /// refuses, the queue stays with the [`Queues`] until its teardown,
    /// and the ring and control page stay allocated until the memory
    /// manager's.)
    pub fn destroy(self) -> Result<(), QueueError> {
        self.queues.destroy(&self.queue)
    }
}

impl Drop for AqlQueue {
    fn drop(&mut self) {
        if self.queues.check(&self.queue).is_ok() && self.queues.destroy(&self.queue).is_err() {
            // The kernel still runs the queue, which reads the ring and
            // the control page: they stay allocated until the memory
            // manager's teardown rather than being reused under it.
            let _ = self.ring.mark_kernel_held();
            let _ = self.control.mark_kernel_held();
        }
        // The fields drop after this: the signal and the memory event go
        // once the queue no longer uses them.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kfd_sys::kfd::{kfd_ec_mask, EC_QUEUE_PACKET_VENDOR_UNSUPPORTED, EC_QUEUE_WAVE_TRAP};

    #[test]
    fn cp_error_codes_name_their_cause() {
        let cases = [
            (0x20, "invalid packet format"),
            (0x100, "invalid vendor-specific packet"),
            (0x8, "invalid (or NULL) code object"),
            (0x400, "not enough scratch memory"),
            (0x4000_0000, "illegal instruction"),
            (0x8000_0000, "debug trap"),
            (0x8 | 0x4000_0000, "invalid (or NULL) code object"),
            (0x1, "not enough scratch memory"),
            (0x10, "unknown queue error"),
        ];
        for (code, cause) in cases {
            assert_eq!(cp_error_cause(code), cause, "{code:#x}");
        }
    }

    #[test]
    fn exception_masks_name_their_first_exception() {
        let trap = kfd_ec_mask(EC_QUEUE_WAVE_TRAP);
        let vendor = kfd_ec_mask(EC_QUEUE_PACKET_VENDOR_UNSUPPORTED);
        assert_eq!(queue_exception_cause(trap | vendor), "wave trap");
        assert_eq!(queue_exception_cause(vendor), "unsupported vendor packet");
        assert_eq!(queue_exception_cause(0), "unknown queue exception");
        assert_eq!(queue_exception_cause(1 << 40), "unknown queue exception");
    }
}
