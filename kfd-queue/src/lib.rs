//! kfd-queue: the user-mode queues of one KFD context.
//!
//! A [`Queues`] is the queue sub-context of a KFD context. It implements
//! the hsakmt queue API on top of the KFD ioctls:
//!
//! - creation of compute, AQL compute, SDMA, SDMA-by-engine and SDMA xGMI
//!   queues ([`QueueKind`]), with the metadata-ring form of
//!   `CreateQueueV2`; the library allocates the EOP buffer and the context
//!   save/restore area with the sizes the GPU generation needs
//!   ([`sizes`]) and frees them with the queue;
//! - the per-node doorbell page, mapped once per context on the first
//!   queue of the node; creation returns the doorbell, read and write
//!   pointers and queue id ([`QueueResource`], storable into both ABI
//!   generations of `HsaQueueResource`);
//! - update, destroy, CU masks, queue info / wave state, GWS allocation,
//!   trap handlers; priorities map from `HSA_QUEUE_PRIORITY` to the KFD's
//!   0..=15 with [`kfd_priority`].
//!
//! Every failure is a [`QueueError`] whose [`QueueError::status`] is the
//! `HSAKMT_STATUS` the C library returns. A [`QueueId`] is owned by the
//! context that created the queue: [`Queues::lookup`] in another context
//! fails instead of touching the queue.
//!
//! # Example
//!
//! ```no_run
//! use std::sync::Arc;
//! use kfd_queue::{QueueKind, QueueRequest, Queues};
//! # fn demo(file: Arc<kfd_sys::DeviceFile>, topology: Arc<kfd_topology::Topology>,
//! #         memory: Arc<dyn kfd_event::DeviceMemory>, ring: u64) -> Result<(), kfd_queue::QueueError> {
//! let queues = Queues::new(file, topology, memory);
//! let q = queues.create(&QueueRequest::new(1, QueueKind::Compute, ring, 4096))?;
//! let res = q.resource();
//! println!("queue {:#x}: doorbell at {:#x}", res.queue_id.raw(), res.doorbell);
//! queues.set_cu_mask(&q, 32, &[0x0000_ffff])?;
//! queues.destroy(&q)?;
//! # Ok(()) }
//! ```

mod error;
mod queue;
mod queues;
pub mod sizes;

pub use error::QueueError;
pub use queue::{
    cu_mask_words, hsa_type, kfd_priority, Queue, QueueId, QueueInfo, QueueKind, QueueRequest,
    QueueResource, MAX_CU_MASK_BITS,
};
pub use queues::{BufferAbi, QueueOptions, Queues};

/// Locks `m`, carrying on through poisoning: every critical section in
/// this crate leaves its data consistent before anything that can panic.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
