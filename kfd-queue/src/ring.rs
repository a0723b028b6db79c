//! [`Ring`]: the producer half of a ring of dword packets, shared by the
//! queues whose engine reads a byte or dword stream (SDMA, PM4 compute).

use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Duration;

use kfd_fmm::Buffer;
use zerocopy::IntoBytes;

use crate::aql::DEFAULT_SUBMIT_TIMEOUT;
use crate::error::QueueError;
use crate::queue::{page, Queue};
use crate::queues::Queues;

/// Stores `value` into the write pointer of `queue`'s page with release
/// ordering (the packets before it are visible first), then rings the
/// doorbell with it.
pub(crate) fn publish(queues: &Queues, queue: &Queue, value: u64) -> Result<(), QueueError> {
    queue.with_page(|p| {
        p.atomic_u64(page::WPTR)
            .map(|w| w.store(value, Ordering::Release))
    })?;
    queues.ring_doorbell(queue, value)
}

/// Destroys `queue` unless it is gone already; if the kernel refuses,
/// it still reads `ring`, which then stays allocated until the memory
/// manager's teardown. What dropping a queue that owns a [`Ring`] does.
pub(crate) fn release(queues: &Queues, queue: &Queue, ring: &mut Ring) {
    if queues.check(queue).is_ok() && queues.destroy(queue).is_err() {
        let _ = ring.buffer.mark_kernel_held();
    }
}

/// What a [`Ring`] needs from the queue around it: where the engine is
/// and how to tell it about new packets.
pub(crate) trait Engine {
    /// Bytes the engine has consumed so far, as a count that only grows,
    /// given `published`, the write pointer (in bytes) last published.
    fn consumed(&self, published: u64) -> Result<u64, QueueError>;

    /// Publishes the write pointer `at` (bytes) with release ordering
    /// and rings the doorbell.
    fn publish(&self, at: u64) -> Result<(), QueueError>;

    /// [`QueueError::MemoryFault`] once a GPU fault stopped the queue.
    fn poll(&self) -> Result<(), QueueError>;
}

/// A ring of a power of two bytes in host memory mapped to the GPU, its
/// write pointer (bytes submitted, only growing) and the lock one
/// producer holds across a submission.
pub(crate) struct Ring {
    buffer: Buffer,
    bytes: u64,
    /// The dword written before a packet that would cross the ring's
    /// end, up to the end: a one-dword no-op of the engine.
    filler: u32,
    /// The published write pointer; held across a submission.
    write: Mutex<u64>,
    timeout: Duration,
}

impl Ring {
    /// The ring in `buffer`, `bytes` long, padded with `filler`; its
    /// write pointer starts at 0 ([`Ring::start_at`]).
    pub fn new(buffer: Buffer, bytes: u64, filler: u32) -> Ring {
        Ring {
            buffer,
            bytes,
            filler,
            write: Mutex::new(0),
            timeout: DEFAULT_SUBMIT_TIMEOUT,
        }
    }

    /// Sets the write pointer to `at`, where the kernel left the queue's.
    pub fn start_at(&mut self, at: u64) {
        *self.write.get_mut().unwrap_or_else(|e| e.into_inner()) = at;
    }

    /// The ring's memory.
    pub fn buffer(&self) -> &Buffer {
        &self.buffer
    }

    /// Bytes in the ring.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Sets how long a submission waits for room.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Writes `packets` (each shorter than the ring) one after the other
    /// at the write pointer; a packet that would cross the ring's end
    /// goes to its start, after filler dwords up to the end. Waits for
    /// room as [`Ring::wait_for_room`] does, publishes through `engine`
    /// once all are written; returns the write pointer after them.
    pub fn submit(&self, packets: &[&[u32]], engine: &impl Engine) -> Result<u64, QueueError> {
        let mut published = crate::lock(&self.write);
        let mut at = *published;
        for packet in packets {
            let bytes = packet.len() as u64 * 4;
            let offset = at % self.bytes;
            if offset + bytes > self.bytes {
                let pad = self.bytes - offset;
                self.wait_for_room(at + pad, at, &mut published, engine)?;
                let filler = vec![self.filler; pad as usize / 4];
                self.buffer
                    .write(offset, filler.as_bytes())
                    .map_err(QueueError::Memory)?;
                at += pad;
            }
            self.wait_for_room(at + bytes, at, &mut published, engine)?;
            self.buffer
                .write(at % self.bytes, packet.as_bytes())
                .map_err(QueueError::Memory)?;
            at += bytes;
        }
        if at != *published {
            engine.publish(at)?;
            *published = at;
        }
        Ok(at)
    }

    /// Returns once the engine has read far enough that the ring can
    /// hold everything up to `upto` (at most one byte less than the ring:
    /// a full ring would look empty to the engine). While it waits, the
    /// packets written up to `at` are published, so that the engine can
    /// get to them; a GPU fault that stopped the queue ends the wait
    /// with [`QueueError::MemoryFault`], the timeout with
    /// [`QueueError::RingFull`].
    fn wait_for_room(
        &self,
        upto: u64,
        at: u64,
        published: &mut u64,
        engine: &impl Engine,
    ) -> Result<(), QueueError> {
        crate::retry_until(self.timeout, || {
            let read = engine.consumed(*published)?;
            if upto.wrapping_sub(read) < self.bytes {
                return Ok(Some(()));
            }
            if *published != at {
                engine.publish(at)?;
                *published = at;
            }
            engine.poll()?;
            Ok(None)
        })
    }
}
