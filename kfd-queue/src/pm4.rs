//! [`Pm4Queue`]: a PM4 compute queue that owns its ring, submits PM4
//! packets to the CP and completes HSA signals.

use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use kfd_event::{Condition, Events, Signal};
use kfd_fmm::{Fmm, MemFlags};
use kfd_sys::packet::Dwords;
use kfd_sys::pm4::{
    self, Pm4Header, Pm4Packet, ReleaseData, ReleaseInterrupt, PM4_MEC_INDIRECT_BUFFER,
    PM4_MEC_RELEASE_MEM, PM4_NOP_FILLER,
};

use crate::error::QueueError;
use crate::fault::FaultWatch;
use crate::queue::{page, Queue, QueueKind, QueueRequest};
use crate::queues::Queues;
use crate::ring::{self, Engine, Ring};
use crate::sdma::SIGNAL_VALUE;

/// The smallest PM4 ring in bytes: the kernel's minimum ring
/// (`KFD_MIN_QUEUE_RING_SIZE`), below which it would clamp the ring up
/// past the memory this queue owns.
pub const MIN_PM4_RING_BYTES: u64 = kfd_sys::kfd::KFD_MIN_QUEUE_RING_SIZE as u64;

/// The largest PM4 ring in bytes: the kernel takes the ring size as a
/// 32-bit power of two.
pub const MAX_PM4_RING_BYTES: u64 = 1 << 31;

/// A PM4 compute queue (`KFD_IOC_QUEUE_TYPE_COMPUTE`) that owns its ring
/// and submits PM4 packets.
///
/// Created with [`Pm4Queue::new`] through [`Queues::create`] with
/// [`QueueKind::Compute`]: a ring of a power of two bytes in pinned host
/// memory mapped to the GPUs, as kfdtest's `PM4Queue` allocates it; the
/// library adds the EOP buffer, the context save area and the per-queue
/// page that holds the read and write pointers. The write pointer is a
/// 64-bit count of dwords submitted that only grows; the read pointer
/// the CP writes back is the 32-bit dword offset in the ring.
///
/// # Submitting
///
/// [`Pm4Queue::submit`] checks that its dwords are whole packets that
/// [`Pm4Packet::decode`] knows, then writes them at the write pointer
/// under a lock, as [`crate::SdmaQueue::submit`] does: a packet that
/// would cross the ring's end goes to its start after one-dword `NOP`
/// fillers ([`PM4_NOP_FILLER`]) up to the end; it waits (at most the
/// submit timeout, then [`QueueError::RingFull`]) for room, publishes
/// the write pointer (in dwords) with a release store and rings the
/// doorbell with it. The helpers build packets: [`Pm4Queue::write_data`]
/// (`WRITE_DATA`), [`Pm4Queue::indirect`] (`INDIRECT_BUFFER`) and
/// [`Pm4Queue::signal`], which completes an HSA [`Signal`].
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use kfd_event::{Condition, Events, Signal};
/// use kfd_fmm::{Fmm, FmmOptions, MemFlags};
/// use kfd_queue::{Pm4Queue, Queues};
/// use kfd_sys::{DeviceFile, Driver};
///
/// let sim = kfd_sim::Sim::preset("mi210")?;
/// let topology = Arc::new(kfd_topology::Topology::snapshot(&sim)?);
/// let driver: Arc<dyn Driver> = Arc::new(sim.clone());
/// let kfd = Arc::new(DeviceFile::open_kfd(driver)?);
/// let fmm = Arc::new(Fmm::from_topology(kfd.clone(), &topology, FmmOptions::primary())?);
/// let queues = Arc::new(Queues::new(kfd.clone(), topology.clone(), fmm.clone()));
/// let events = Arc::new(Events::new(kfd, Some(topology), Some(fmm.clone())));
///
/// let queue = Pm4Queue::new(&queues, &events, &fmm, 1, 4096)?;
/// let host = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
/// let dst = fmm.alloc_buffer(0, 4096, 0, host)?;
/// dst.map()?;
/// let done = Signal::new(&events, &fmm, 1)?;
/// queue.write_data(dst.addr(), &[7, 8, 9])?;
/// queue.signal(&done, 0)?; // 1 -> 0 once the write is done
/// assert_eq!(queue.wait(&done, Condition::Eq, 0, Duration::from_secs(10))?, 0);
/// let mut back = [0u8; 12];
/// dst.read(0, &mut back)?;
/// assert_eq!(back, [7, 0, 0, 0, 8, 0, 0, 0, 9, 0, 0, 0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors reach the caller
///
/// A GPU memory fault on the queue's GPU stops the queue; the queue's
/// memory exception event reports it, and [`Pm4Queue::wait`] returns
/// [`QueueError::MemoryFault`] instead of waiting out its timeout, as
/// does a submission waiting for room in the stopped queue's ring.
///
/// # Dropping
///
/// Dropping the queue destroys it in the kernel, then frees the ring and
/// destroys the memory event; [`Pm4Queue::destroy`] does the same and
/// reports a failure.
pub struct Pm4Queue {
    queues: Arc<Queues>,
    queue: Queue,
    ring: Ring,
    faults: FaultWatch,
}

impl fmt::Debug for Pm4Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pm4Queue")
            .field("queue", &self.queue)
            .field("ring", &format_args!("{:#x}", self.ring.buffer().addr()))
            .field("ring_bytes", &self.ring.bytes())
            .finish_non_exhaustive()
    }
}

impl Pm4Queue {
    /// Creates a PM4 compute queue with a ring of `ring_bytes` bytes on
    /// GPU node `node_id`, with its ring and memory event, all from one
    /// context's sub-contexts.
    ///
    /// [`QueueError::InvalidPm4RingSize`] unless `ring_bytes` is a power
    /// of two from [`MIN_PM4_RING_BYTES`] to [`MAX_PM4_RING_BYTES`];
    /// otherwise as [`Queues::create`] ([`QueueError::InvalidNode`] unless
    /// the node is a GPU), or the allocation or event that failed.
    pub fn new(
        queues: &Arc<Queues>,
        events: &Arc<Events>,
        fmm: &Arc<Fmm>,
        node_id: u32,
        ring_bytes: u64,
    ) -> Result<Pm4Queue, QueueError> {
        if !ring_bytes.is_power_of_two()
            || !(MIN_PM4_RING_BYTES..=MAX_PM4_RING_BYTES).contains(&ring_bytes)
        {
            return Err(QueueError::InvalidPm4RingSize(ring_bytes));
        }
        let page = kfd_sys::mman::page_size() as u64;
        let host = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
        let ring = fmm
            .alloc_buffer(0, ring_bytes.next_multiple_of(page), 0, host)
            .map_err(QueueError::Memory)?;
        ring.map().map_err(QueueError::Memory)?;
        let faults = FaultWatch::new(events, node_id)?;
        let req = QueueRequest::new(node_id, QueueKind::Compute, ring.addr(), ring_bytes);
        let queue = queues.create(&req)?;
        // From here on dropping `q` releases everything.
        let mut q = Pm4Queue {
            queues: queues.clone(),
            queue,
            ring: Ring::new(ring, ring_bytes, PM4_NOP_FILLER),
            faults,
        };
        let start = q.write_pointer()? * 4;
        q.ring.start_at(start);
        Ok(q)
    }

    /// The queue (its id, doorbell, pointers).
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    /// Bytes in the ring.
    pub fn ring_bytes(&self) -> u64 {
        self.ring.bytes()
    }

    /// How long a submission waits for room in a full ring before it
    /// fails with [`QueueError::RingFull`].
    pub fn set_submit_timeout(&mut self, timeout: Duration) {
        self.ring.set_timeout(timeout);
    }

    /// The write pointer the CP sees: dwords submitted so far.
    pub fn write_pointer(&self) -> Result<u64, QueueError> {
        self.queue
            .with_page(|p| p.atomic_u64(page::WPTR).map(|w| w.load(Ordering::Acquire)))
    }

    /// The read pointer the CP writes back: the dword offset in the ring
    /// of the next packet it reads.
    pub fn read_pointer(&self) -> Result<u32, QueueError> {
        self.queue
            .with_page(|p| p.atomic_u64(page::RPTR).map(|r| r.load(Ordering::Acquire)))
            // The CP writes 32 bits, the low half of the 64-bit slot.
            .map(|r| r as u32)
    }

    /// Submits `dwords`, whole PM4 packets one after the other (the
    /// constructors and dword views of [`kfd_sys::pm4`]); returns the
    /// write pointer (dwords) after them.
    ///
    /// The packets are checked first, and nothing is written if one is
    /// not whole or not type 2 or 3 ([`QueueError::Packet`]), has an
    /// opcode [`kfd_sys::pm4`] does not declare
    /// ([`QueueError::UnknownPm4Opcode`]) or is as long as the ring
    /// ([`QueueError::Pm4PacketTooLarge`]). On [`QueueError::RingFull`]
    /// (or a memory fault seen while waiting) the packets published
    /// before it still run; the rest are not submitted.
    pub fn submit(&self, dwords: &[u32]) -> Result<u64, QueueError> {
        let mut packets = Vec::new();
        let mut rest = dwords;
        while let Some(&header) = rest.first() {
            if let Pm4Packet::Other(opcode) = Pm4Packet::decode(rest)? {
                return Err(QueueError::UnknownPm4Opcode(opcode));
            }
            let len = Pm4Header(header).packet_dwords()?;
            let bytes = len as u64 * 4;
            if bytes >= self.ring.bytes() {
                return Err(QueueError::Pm4PacketTooLarge {
                    bytes,
                    ring: self.ring.bytes(),
                });
            }
            let (packet, after) = rest.split_at(len);
            packets.push(packet);
            rest = after;
        }
        Ok(self.ring.submit(&packets, self)? / 4)
    }

    /// Writes `data` to `dst` (GPU address) with one `WRITE_DATA`.
    /// Returns the write pointer after it.
    ///
    /// [`QueueError::Packet`] if `data` is empty or `dst` is not a
    /// multiple of 4; [`QueueError::Pm4PacketTooLarge`] if the packet
    /// does not fit the ring.
    pub fn write_data(&self, dst: u64, data: &[u32]) -> Result<u64, QueueError> {
        self.submit(&pm4::write_data(dst, data)?)
    }

    /// Runs the `dwords` dwords of PM4 packets at `ib` (GPU address) with
    /// an `INDIRECT_BUFFER`. Returns the write pointer after it.
    ///
    /// [`QueueError::Packet`] unless `ib` is a multiple of 4 below 2^48
    /// and `dwords` is from 1 to [`kfd_sys::pm4::PM4_IB_SIZE_MASK`].
    pub fn indirect(&self, ib: u64, dwords: u32) -> Result<u64, QueueError> {
        self.submit(PM4_MEC_INDIRECT_BUFFER::new(ib, dwords)?.dwords())
    }

    /// Completes `signal` with `value` once the packets submitted before
    /// are done: a `RELEASE_MEM` at the end of the pipe writes `value`
    /// into the signal's value, a second writes the signal's event id
    /// into its event mailbox and raises the interrupt that wakes the
    /// signal's waiters ([`PM4_MEC_RELEASE_MEM::signal_event`]). Returns
    /// the write pointer after them.
    pub fn signal(&self, signal: &Signal, value: i64) -> Result<u64, QueueError> {
        let event = signal.event();
        let store = PM4_MEC_RELEASE_MEM::end_of_pipe(
            signal.handle().handle + SIGNAL_VALUE,
            ReleaseData::Data64,
            value as u64,
            ReleaseInterrupt::NoInterrupt,
            0,
        )?;
        let wake = PM4_MEC_RELEASE_MEM::signal_event(event.slot_address(), event.id())?;
        self.submit(&[store.dwords(), wake.dwords()].concat())
    }

    /// The queue's error, if it has one: the GPU memory fault a wait saw
    /// on the queue's memory event.
    pub fn check(&self) -> Result<(), QueueError> {
        self.faults.check()
    }

    /// Sleeps until `signal` meets `condition` against `compare` and
    /// returns its value, as [`Signal::wait_until`] does, but wakes also
    /// when a GPU memory fault stops this queue and returns it
    /// ([`Pm4Queue::check`]); [`kfd_event::EventError::SignalTimeout`]
    /// (as [`QueueError::Event`]) after `timeout`.
    pub fn wait(
        &self,
        signal: &Signal,
        condition: Condition,
        compare: i64,
        timeout: Duration,
    ) -> Result<i64, QueueError> {
        self.faults.wait(signal, condition, compare, timeout)
    }

    /// Destroys the queue, then frees its ring and destroys its event;
    /// reports a failure to destroy the queue. (If the kernel refuses,
    /// the queue stays with the [`Queues`] until its teardown, and the
    /// ring stays allocated until the memory manager's.)
    pub fn destroy(self) -> Result<(), QueueError> {
        self.queues.destroy(&self.queue)
    }
}

impl Engine for Pm4Queue {
    /// The read pointer is an offset in the ring: the CP is at most a
    /// ring behind what was published.
    fn consumed(&self, published: u64) -> Result<u64, QueueError> {
        let read = u64::from(self.read_pointer()?) * 4;
        Ok(consumed(published, read, self.ring.bytes()))
    }

    /// The write pointer counts dwords.
    fn publish(&self, at: u64) -> Result<(), QueueError> {
        ring::publish(&self.queues, &self.queue, at / 4)
    }

    fn poll(&self) -> Result<(), QueueError> {
        self.faults.poll()
    }
}

/// Bytes consumed, as a count that only grows, of a CP whose read offset
/// in a ring of `ring_bytes` (a power of two) is `read`, `published`
/// bytes having been published: the CP is less than a ring behind.
fn consumed(published: u64, read: u64, ring_bytes: u64) -> u64 {
    published - (published.wrapping_sub(read) & (ring_bytes - 1))
}

impl Drop for Pm4Queue {
    fn drop(&mut self) {
        ring::release(&self.queues, &self.queue, &mut self.ring);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_offset_becomes_a_growing_count() {
        // Caught up, at the start and after wrapping twice.
        assert_eq!(consumed(0, 0, 1024), 0);
        assert_eq!(consumed(2048, 0, 1024), 2048);
        // Behind within the same lap and across the ring's end.
        assert_eq!(consumed(2048 + 100, 40, 1024), 2048 + 40);
        assert_eq!(consumed(2048 + 100, 1000, 1024), 1024 + 1000);
        // A CP that has not moved yet sees everything as outstanding.
        assert_eq!(consumed(1020, 0, 1024), 0);
    }
}
