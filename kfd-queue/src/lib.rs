//! kfd-queue: the user-mode queues of one KFD context.
//!
//! # Example
//!
//! Create an AQL queue on a simulated MI210 (`kfd-sim`; with
//! [`kfd_sys::NixDriver`] instead, on this machine's GPU). The caller
//! supplies the ring and the read/write pointers, as ROCr does; the
//! library adds the EOP buffer, the context save area and the doorbell.
//!
//! ```
//! use std::sync::Arc;
//! use kfd_fmm::{Fmm, FmmOptions, MemFlags};
//! use kfd_queue::{QueueKind, QueueRequest, Queues};
//! use kfd_sys::{DeviceFile, Driver};
//!
//! let sim = kfd_sim::Sim::preset("mi210")?;
//! let topology = Arc::new(kfd_topology::Topology::snapshot(&sim)?);
//! let driver: Arc<dyn Driver> = Arc::new(sim.clone());
//! let kfd = Arc::new(DeviceFile::open_kfd(driver)?);
//! let fmm = Arc::new(Fmm::from_topology(kfd.clone(), &topology, FmmOptions::primary())?);
//! let queues = Queues::new(kfd, topology, fmm.clone());
//!
//! let host = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
//! let ring = fmm.alloc_buffer(0, 64 << 10, 0, host)?;
//! let pointers = fmm.alloc_buffer(0, 4096, 0, host)?;
//! ring.map()?; // the GPU reads the packets and updates the pointers
//! pointers.map()?;
//! let mut request = QueueRequest::new(1, QueueKind::ComputeAql, ring.addr(), ring.size());
//! request.read_ptr = pointers.addr();
//! request.write_ptr = pointers.addr() + 8;
//! let queue = queues.create(&request)?;
//!
//! let res = queue.resource();
//! assert_eq!((res.read_ptr, res.write_ptr), (request.read_ptr, request.write_ptr));
//! assert_ne!(res.doorbell, 0);
//! let (_, cwsr) = queue.cwsr().expect("gfx90a saves waves");
//! println!("queue {:#x}: doorbell {:#x}, {} waves", res.queue_id.raw(), res.doorbell, cwsr.waves);
//! queues.destroy(&queue)?;
//! assert_eq!(queues.live_count(), 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Submitting work
//!
//! An [`AqlQueue`] owns its ring and pointers and submits typed packets;
//! [`kfd_event::Signal`]s are the dependencies and completions. A
//! barrier-AND packet that waits until the host completes its dependency:
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use kfd_event::{Condition, Events, Signal};
//! use kfd_fmm::{Fmm, FmmOptions};
//! use kfd_queue::{AqlPacket, AqlQueue, Queues};
//! use kfd_sys::{DeviceFile, Driver};
//!
//! let sim = kfd_sim::Sim::preset("mi210")?;
//! let topology = Arc::new(kfd_topology::Topology::snapshot(&sim)?);
//! let driver: Arc<dyn Driver> = Arc::new(sim.clone());
//! let kfd = Arc::new(DeviceFile::open_kfd(driver)?);
//! let fmm = Arc::new(Fmm::from_topology(kfd.clone(), &topology, FmmOptions::primary())?);
//! let queues = Arc::new(Queues::new(kfd.clone(), topology.clone(), fmm.clone()));
//! let events = Arc::new(Events::new(kfd, Some(topology), Some(fmm.clone())));
//!
//! let queue = AqlQueue::new(&queues, &events, &fmm, 1, 64)?;
//! let (dependency, done) = (Signal::new(&events, &fmm, 1)?, Signal::new(&events, &fmm, 1)?);
//! queue.submit(&AqlPacket::barrier_and(&[&dependency], Some(&done))?)?;
//! dependency.store(0)?;
//! assert_eq!(queue.wait(&done, Condition::Eq, 0, Duration::from_secs(10))?, 0);
//! drop(queue); // destroys the queue, frees its ring
//! assert_eq!(queues.live_count(), 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `examples/aql.rs` prints every resource of an AQL queue;
//! `examples/barrier.rs` walks through the barrier step by step;
//! `examples/sdma_copy.rs` copies host -> VRAM -> host with an
//! [`SdmaQueue`].
//!
//! # Overview
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
//! - owned AQL queues ([`AqlQueue`]) that submit typed packets
//!   ([`AqlPacket`], [`KernelDispatch`]) with the AQL producer protocol
//!   and report queue errors and GPU memory faults to waiters;
//! - owned SDMA queues ([`SdmaQueue`]) that copy, fill and write memory
//!   and complete [`kfd_event::Signal`]s the way ROCr's SDMA blits do;
//! - owned PM4 compute queues ([`Pm4Queue`]) that submit checked PM4
//!   packets, write memory, run indirect buffers and complete
//!   [`kfd_event::Signal`]s with `RELEASE_MEM`;
//! - update, destroy, CU masks, queue info / wave state, GWS allocation,
//!   trap handlers; priorities map from `HSA_QUEUE_PRIORITY` to the KFD's
//!   0..=15 with [`kfd_priority`].
//!
//! Every failure is a [`QueueError`] naming its cause (the C status it
//! becomes is decided at the `hsakmt` border). A [`QueueId`] is owned by the
//! context that created the queue: [`Queues::lookup`] in another context
//! fails instead of touching the queue.
//!
//! This crate has no `unsafe` code: doorbell pages are
//! [`kfd_sys::mapping::Mapping`]s (or memory-manager buffers) written
//! through their checked accessors, and the queue requests that carry
//! user pointers use the safe forms of `kfd_sys::queue`.

#![forbid(unsafe_code)]

mod aql;
mod error;
mod fault;
mod packet;
mod pm4;
mod queue;
mod queues;
mod ring;
mod sdma;
pub mod sizes;

pub use aql::{
    cp_error_cause, queue_exception_cause, AqlQueue, DEFAULT_SUBMIT_TIMEOUT, MAX_AQL_PACKETS,
    MIN_AQL_PACKETS,
};
pub use error::QueueError;
pub use packet::{AqlPacket, KernelDispatch, AQL_PACKET_SIZE, BARRIER_DEPENDENCIES};
pub use pm4::{Pm4Queue, MAX_PM4_RING_BYTES, MIN_PM4_RING_BYTES};
pub use queue::{
    cu_mask_words, hsa_type, kfd_priority, Queue, QueueId, QueueInfo, QueueKind, QueueRequest,
    QueueResource, MAX_CU_MASK_BITS,
};
pub use queues::{QueueOptions, QueueRules, Queues};
pub use sdma::{SdmaEngine, SdmaQueue, MAX_SDMA_RING_BYTES, MIN_SDMA_RING_BYTES};

pub(crate) use kfd_sys::sync::lock;

/// Calls `attempt` until it returns a value, sleeping between calls
/// (from 1 µs, doubling up to 1 ms); [`QueueError::RingFull`] once
/// `timeout` has passed, or the error `attempt` returns. How a producer
/// waits for room in a ring.
pub(crate) fn retry_until<T>(
    timeout: std::time::Duration,
    mut attempt: impl FnMut() -> Result<Option<T>, QueueError>,
) -> Result<T, QueueError> {
    let start = std::time::Instant::now();
    let mut pause = std::time::Duration::from_micros(1);
    loop {
        if let Some(v) = attempt()? {
            return Ok(v);
        }
        let waited = start.elapsed();
        if waited >= timeout {
            return Err(QueueError::RingFull { waited });
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(1));
    }
}
