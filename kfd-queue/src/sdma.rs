//! [`SdmaQueue`]: an SDMA queue that owns its ring, submits SDMA packets
//! and completes HSA signals as ROCr's SDMA blits do.

use std::fmt;
use std::mem::offset_of;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use kfd_event::{Condition, Events, Signal};
use kfd_fmm::{Fmm, MemFlags};
use kfd_sys::hsa::amd_signal_t;
use kfd_sys::packet::{Dwords, PacketError};
use kfd_sys::sdma::{
    self, SdmaPacket, SDMA_PKT_ATOMIC, SDMA_PKT_CONSTANT_FILL, SDMA_PKT_COPY_LINEAR,
    SDMA_PKT_FENCE, SDMA_PKT_TRAP, SDMA_WRITE_COUNT_MASK,
};

use crate::error::QueueError;
use crate::fault::FaultWatch;
use crate::queue::{page, Queue, QueueKind, QueueRequest};
use crate::queues::Queues;
use crate::ring::{self, Engine, Ring};

/// The smallest SDMA ring in bytes: the kernel's minimum ring
/// (`KFD_MIN_QUEUE_RING_SIZE`; it clamps smaller rings up, and the
/// engine would then read past the ring this queue owns).
pub const MIN_SDMA_RING_BYTES: u64 = kfd_sys::kfd::KFD_MIN_QUEUE_RING_SIZE as u64;

/// The largest SDMA ring in bytes: the kernel takes the ring size as a
/// 32-bit power of two.
pub const MAX_SDMA_RING_BYTES: u64 = 1 << 31;

/// Byte offset of the value in `amd_signal_t`.
pub(crate) const SIGNAL_VALUE: u64 = offset_of!(amd_signal_t, value) as u64;

/// Which SDMA engine a queue runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SdmaEngine {
    /// An engine the kernel picks among the PCIe-optimised ones
    /// (`HSA_QUEUE_SDMA`).
    Any,
    /// An engine the kernel picks among the xGMI ones
    /// (`HSA_QUEUE_SDMA_XGMI`), for copies between GPUs of a hive.
    Xgmi,
    /// The engine with this id (`HSA_QUEUE_SDMA_BY_ENG_ID`): the PCIe
    /// engines first, then the xGMI ones.
    Id(u32),
}

impl SdmaEngine {
    /// The queue kind that asks the kernel for this engine.
    pub fn kind(self) -> QueueKind {
        match self {
            SdmaEngine::Any => QueueKind::Sdma,
            SdmaEngine::Xgmi => QueueKind::SdmaXgmi,
            SdmaEngine::Id(id) => QueueKind::SdmaByEngine(id),
        }
    }
}

/// Pieces of at most `max` out of `total`: (offset, length) pairs; one
/// piece of length 0 when `total` is 0, so that the packet constructor
/// refuses an empty transfer with its own error.
fn pieces(total: u64, max: u64) -> impl Iterator<Item = (u64, u64)> {
    let count = total.div_ceil(max).max(1);
    (0..count).map(move |i| {
        let at = i * max;
        (at, (total - at).min(max))
    })
}

/// `Range` unless `addr + bytes` stays below 2^64.
fn check_end(
    packet: &'static str,
    field: &'static str,
    addr: u64,
    bytes: u64,
) -> Result<(), PacketError> {
    match addr.checked_add(bytes) {
        Some(_) => Ok(()),
        None => Err(PacketError::Range {
            packet,
            field,
            value: addr,
            min: 0,
            max: u64::MAX - bytes,
        }),
    }
}

/// `Misaligned` unless `value` is a multiple of 4.
fn check_dword(packet: &'static str, field: &'static str, value: u64) -> Result<(), PacketError> {
    if value % 4 == 0 {
        Ok(())
    } else {
        Err(PacketError::Misaligned {
            packet,
            field,
            value,
            align: 4,
        })
    }
}

/// An SDMA queue that owns its ring and submits SDMA packets.
///
/// Created with [`SdmaQueue::new`] through [`Queues::create`] on the
/// engine [`SdmaEngine`] asks for: a ring of a power of two bytes in
/// pinned host memory mapped to the GPUs, as ROCr's `BlitSdma` allocates
/// it. The ring's read and write pointers are 64-bit byte offsets that
/// only grow (the engine wraps them by the ring size); they live in the
/// per-queue page that [`Queues::create`] allocates for every non-AQL
/// queue (the C library does the same: the kernel gets the library's
/// pointers, not the caller's), pinned GTT memory with the newest
/// library's rules, and go with the queue.
///
/// # Submitting
///
/// [`SdmaQueue::submit`] writes whole packets at the write pointer under
/// a lock (one producer at a time): a packet that would cross the end of
/// the ring is moved to its start and the bytes before the end are
/// filled with `NOP`s, as ROCr pads; it waits (at most the submit
/// timeout, then [`QueueError::RingFull`]) until the engine has read far
/// enough for the packets to fit, publishes the new write pointer with a
/// release store and rings the doorbell with it. The helpers build the
/// packets: [`SdmaQueue::copy`] (`COPY_LINEAR`, split by the GPU
/// generation's largest count), [`SdmaQueue::fill`] (`CONSTANT_FILL`),
/// [`SdmaQueue::write`] (`WRITE`) and [`SdmaQueue::signal`], which
/// completes an HSA [`Signal`] once the packets before it are done.
///
/// Nothing else is added: ROCr's blits also flush the HDP (when its
/// flag asks) and, on gfx10+, invalidate caches with `GCR` packets
/// around their commands; callers that need those submit them
/// ([`kfd_sys::sdma::SDMA_PKT_POLL_REGMEM::HDP_FLUSH`],
/// [`kfd_sys::sdma::SDMA_PKT_GCR`]).
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use kfd_event::{Condition, Events, Signal};
/// use kfd_fmm::{Fmm, FmmOptions, MemFlags};
/// use kfd_queue::{Queues, SdmaEngine, SdmaQueue};
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
/// let queue = SdmaQueue::new(&queues, &events, &fmm, 1, SdmaEngine::Any, 4096)?;
/// let host = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
/// let (src, dst) = (fmm.alloc_buffer(0, 4096, 0, host)?, fmm.alloc_buffer(0, 4096, 0, host)?);
/// src.map()?;
/// dst.map()?;
/// src.write(0, b"copied by the SDMA engine")?;
/// let done = Signal::new(&events, &fmm, 1)?;
/// queue.copy(dst.addr(), src.addr(), 25)?;
/// queue.signal(&done)?; // 1 -> 0 once the copy is done
/// assert_eq!(queue.wait(&done, Condition::Eq, 0, Duration::from_secs(10))?, 0);
/// let mut back = [0u8; 25];
/// dst.read(0, &mut back)?;
/// assert_eq!(&back, b"copied by the SDMA engine");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors reach the caller
///
/// A GPU memory fault on the queue's GPU stops the queue; the queue's
/// memory exception event reports it, and [`SdmaQueue::wait`] returns
/// [`QueueError::MemoryFault`] instead of waiting out its timeout, as
/// does a submission waiting for room in the stopped queue's ring.
///
/// # Dropping
///
/// Dropping the queue destroys it in the kernel, then frees the ring and
/// destroys the memory event; [`SdmaQueue::destroy`] does the same and
/// reports a failure.
pub struct SdmaQueue {
    queues: Arc<Queues>,
    queue: Queue,
    ring: Ring,
    faults: FaultWatch,
    count_mask: u32,
}

impl fmt::Debug for SdmaQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SdmaQueue")
            .field("queue", &self.queue)
            .field("ring", &format_args!("{:#x}", self.ring.buffer().addr()))
            .field("ring_bytes", &self.ring.bytes())
            .finish_non_exhaustive()
    }
}

impl SdmaQueue {
    /// Creates an SDMA queue with a ring of `ring_bytes` bytes on GPU node
    /// `node_id`, on `engine`, with its ring and memory event, all from
    /// one context's sub-contexts.
    ///
    /// [`QueueError::InvalidSdmaRingSize`] unless `ring_bytes` is a power
    /// of two from [`MIN_SDMA_RING_BYTES`] to [`MAX_SDMA_RING_BYTES`];
    /// [`QueueError::InvalidNode`] unless the node is a GPU; otherwise as
    /// [`Queues::create`] ([`QueueError::NoFreeSdmaQueue`] when the
    /// engines have no queue left), or the allocation or event that
    /// failed.
    pub fn new(
        queues: &Arc<Queues>,
        events: &Arc<Events>,
        fmm: &Arc<Fmm>,
        node_id: u32,
        engine: SdmaEngine,
        ring_bytes: u64,
    ) -> Result<SdmaQueue, QueueError> {
        if !ring_bytes.is_power_of_two()
            || !(MIN_SDMA_RING_BYTES..=MAX_SDMA_RING_BYTES).contains(&ring_bytes)
        {
            return Err(QueueError::InvalidSdmaRingSize(ring_bytes));
        }
        // The engine's count width is the hardware's: the kernel's
        // gfx_target_version, not an override of the ISA.
        let gfx = queues.gpu_node(node_id)?.properties.gfx_target_version;
        let count_mask = sdma::copy_count_mask(gfx);
        let page = kfd_sys::mman::page_size() as u64;
        let host = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
        let ring = fmm
            .alloc_buffer(0, ring_bytes.next_multiple_of(page), 0, host)
            .map_err(QueueError::Memory)?;
        ring.map().map_err(QueueError::Memory)?;
        let faults = FaultWatch::new(events, node_id)?;
        let req = QueueRequest::new(node_id, engine.kind(), ring.addr(), ring_bytes);
        let queue = queues.create(&req)?;
        // From here on dropping `q` releases everything.
        let mut q = SdmaQueue {
            queues: queues.clone(),
            queue,
            ring: Ring::new(ring, ring_bytes, 0),
            faults,
            count_mask,
        };
        let start = q.write_pointer()?;
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

    /// The most bytes one `COPY_LINEAR` (or `CONSTANT_FILL`) packet moves
    /// on this queue's GPU ([`kfd_sys::sdma::copy_count_mask`] + 1): 1 GiB
    /// on gfx90a, gfx94x, gfx10.3 and later; 4 MiB on the other gfx9 and
    /// gfx10.1 parts.
    pub fn max_copy_bytes(&self) -> u64 {
        u64::from(self.count_mask) + 1
    }

    /// How long a submission waits for room in a full ring before it
    /// fails with [`QueueError::RingFull`].
    pub fn set_submit_timeout(&mut self, timeout: Duration) {
        self.ring.set_timeout(timeout);
    }

    /// The write pointer the engine sees: bytes submitted so far.
    pub fn write_pointer(&self) -> Result<u64, QueueError> {
        self.queue
            .with_page(|p| p.atomic_u64(page::WPTR).map(|w| w.load(Ordering::Acquire)))
    }

    /// The read pointer: bytes the engine has consumed.
    pub fn read_pointer(&self) -> Result<u64, QueueError> {
        self.queue
            .with_page(|p| p.atomic_u64(page::RPTR).map(|r| r.load(Ordering::Acquire)))
    }

    /// Submits `dwords`, whole SDMA packets one after the other (the
    /// constructors and dword views of [`kfd_sys::sdma`]); returns the
    /// write pointer after them.
    ///
    /// The packets are checked first, and nothing is written if one is
    /// not whole or of a format [`kfd_sys::sdma::packet_dwords`] does not
    /// know ([`QueueError::Packet`]) or is as long as the ring
    /// ([`QueueError::SdmaPacketTooLarge`]). Then each packet is written
    /// where it fits without crossing the ring's end (see the type's
    /// notes), waiting for room; the write pointer is published and the
    /// doorbell rung once all are written, or earlier when the ring must
    /// drain before the next packet fits. On [`QueueError::RingFull`] (or
    /// a memory fault seen while waiting) the packets published before
    /// it still run; the rest are not submitted.
    pub fn submit(&self, dwords: &[u32]) -> Result<u64, QueueError> {
        let mut packets = Vec::new();
        let mut rest = dwords;
        while !rest.is_empty() {
            let (_, len) = SdmaPacket::decode(rest)?;
            let bytes = len as u64 * 4;
            if bytes >= self.ring.bytes() {
                return Err(QueueError::SdmaPacketTooLarge {
                    bytes,
                    ring: self.ring.bytes(),
                });
            }
            let (packet, after) = rest.split_at(len);
            packets.push(packet);
            rest = after;
        }
        self.ring.submit(&packets, self)
    }

    /// Copies `bytes` bytes from `src` to `dst` (GPU addresses): one
    /// `COPY_LINEAR` per [`SdmaQueue::max_copy_bytes`]. Returns the write
    /// pointer after the packets.
    ///
    /// [`QueueError::Packet`] for a copy of 0 bytes or one that runs past
    /// the end of the address space.
    pub fn copy(&self, dst: u64, src: u64, bytes: u64) -> Result<u64, QueueError> {
        check_end("COPY_LINEAR", "source address", src, bytes)?;
        check_end("COPY_LINEAR", "destination address", dst, bytes)?;
        let mut dwords = Vec::new();
        for (at, n) in pieces(bytes, self.max_copy_bytes()) {
            let p = SDMA_PKT_COPY_LINEAR::new(src + at, dst + at, n, self.count_mask)?;
            dwords.extend_from_slice(p.dwords());
        }
        self.submit(&dwords)
    }

    /// Fills `bytes` bytes at `dst` with the dword `value` (`CONSTANT_FILL`
    /// packets, split as copies are). Returns the write pointer after the
    /// packets.
    ///
    /// [`QueueError::Packet`] unless `dst` and `bytes` are multiples of 4
    /// and `bytes` is not 0, or if the fill runs past the end of the
    /// address space.
    pub fn fill(&self, dst: u64, value: u32, bytes: u64) -> Result<u64, QueueError> {
        check_dword("CONST_FILL", "destination address", dst)?;
        check_dword("CONST_FILL", "byte count", bytes)?;
        check_end("CONST_FILL", "destination address", dst, bytes)?;
        let mut dwords = Vec::new();
        for (at, n) in pieces(bytes, self.max_copy_bytes()) {
            let p = SDMA_PKT_CONSTANT_FILL::new(dst + at, value, n, self.count_mask)?;
            dwords.extend_from_slice(p.dwords());
        }
        self.submit(&dwords)
    }

    /// Writes `data` to `dst` (`WRITE` packets carrying the data; each
    /// holds at most a quarter of the ring, so that the ring keeps room
    /// for the engine to work ahead). Returns the write pointer after the
    /// packets.
    ///
    /// [`QueueError::Packet`] if `data` is empty, `dst` is not a multiple
    /// of 4 or the write runs past the end of the address space.
    pub fn write(&self, dst: u64, data: &[u32]) -> Result<u64, QueueError> {
        check_dword("WRITE", "destination address", dst)?;
        check_end("WRITE", "destination address", dst, data.len() as u64 * 4)?;
        let most = (self.ring.bytes() / 16).min(u64::from(SDMA_WRITE_COUNT_MASK) + 1);
        let mut dwords = Vec::new();
        for (at, n) in pieces(data.len() as u64, most) {
            let (at, n) = (at as usize, n as usize);
            dwords.extend(sdma::write(dst + at as u64 * 4, &data[at..at + n])?);
        }
        self.submit(&dwords)
    }

    /// Completes `signal` once the packets submitted before are done, as
    /// ROCr's `BlitSdma` completes an interrupt signal: an `ATOMIC`
    /// (`ADD64` of −1) decrements the signal's value, a `FENCE` writes its
    /// event id into its event mailbox, and a `TRAP` with the event id
    /// raises the interrupt that wakes the signal's waiters. Returns the
    /// write pointer after the packets.
    ///
    /// The queue's GPU must reach the signal's memory with 64-bit atomics
    /// (ROCr writes the value with `FENCE` packets on platforms whose
    /// link has none; this queue does not).
    pub fn signal(&self, signal: &Signal) -> Result<u64, QueueError> {
        let value = signal.handle().handle + SIGNAL_VALUE;
        let event = signal.event();
        let decrement = SDMA_PKT_ATOMIC::add64(value, u64::MAX);
        let mailbox = SDMA_PKT_FENCE::new(event.slot_address(), event.id());
        let trap = SDMA_PKT_TRAP::new(event.id())?;
        self.submit(&[decrement.dwords(), mailbox.dwords(), trap.dwords()].concat())
    }

    /// The queue's error, if it has one: the GPU memory fault a wait saw
    /// on the queue's memory event.
    pub fn check(&self) -> Result<(), QueueError> {
        self.faults.check()
    }

    /// Sleeps until `signal` meets `condition` against `compare` and
    /// returns its value, as [`Signal::wait_until`] does, but wakes also
    /// when a GPU memory fault stops this queue and returns it
    /// ([`SdmaQueue::check`]); [`kfd_event::EventError::SignalTimeout`]
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

impl Engine for SdmaQueue {
    /// The read pointer: a byte count that only grows.
    fn consumed(&self, _published: u64) -> Result<u64, QueueError> {
        self.read_pointer()
    }

    /// The write pointer is the byte count.
    fn publish(&self, at: u64) -> Result<(), QueueError> {
        ring::publish(&self.queues, &self.queue, at)
    }

    fn poll(&self) -> Result<(), QueueError> {
        self.faults.poll()
    }
}

impl Drop for SdmaQueue {
    fn drop(&mut self) {
        ring::release(&self.queues, &self.queue, &mut self.ring);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_total() {
        let got: Vec<_> = pieces(10, 4).collect();
        assert_eq!(got, [(0, 4), (4, 4), (8, 2)]);
        assert_eq!(pieces(8, 4).collect::<Vec<_>>(), [(0, 4), (4, 4)]);
        assert_eq!(pieces(0, 4).collect::<Vec<_>>(), [(0, 0)]);
        assert_eq!(pieces(3, 4).collect::<Vec<_>>(), [(0, 3)]);
    }

    #[test]
    fn engines_map_to_queue_kinds() {
        assert_eq!(SdmaEngine::Any.kind(), QueueKind::Sdma);
        assert_eq!(SdmaEngine::Xgmi.kind(), QueueKind::SdmaXgmi);
        assert_eq!(SdmaEngine::Id(3).kind(), QueueKind::SdmaByEngine(3));
    }
}
