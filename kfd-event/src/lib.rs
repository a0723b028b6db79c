//! kfd-event: the events of one KFD context.
//!
//! # Example
//!
//! One event and two threads on a simulated MI210 (`kfd-sim`; with
//! [`kfd_sys::NixDriver`] instead, on this machine): a wait that times
//! out, then a wait that the other thread ends by setting the event.
//!
//! ```
//! use std::sync::Arc;
//! use kfd_event::{EventDescriptor, EventType, Events, WaitOutcome};
//! use kfd_fmm::{Fmm, FmmOptions};
//! use kfd_sys::{DeviceFile, Driver};
//!
//! let sim = kfd_sim::Sim::preset("mi210")?;
//! let topology = Arc::new(kfd_topology::Topology::snapshot(&sim)?);
//! let driver: Arc<dyn Driver> = Arc::new(sim.clone());
//! let kfd = Arc::new(DeviceFile::open_kfd(driver)?);
//! // On a dGPU the event page is a buffer from the memory manager.
//! let fmm = Fmm::from_topology(kfd.clone(), &topology, FmmOptions::primary())?;
//! let events = Events::new(kfd, Some(topology), Some(Arc::new(fmm)));
//!
//! let e = events.create(&EventDescriptor::new(EventType::Signal))?;
//! assert_eq!(events.wait_one(&e, 10)?, WaitOutcome::TimedOut);
//! let (waited, set) = std::thread::scope(|s| {
//!     let setter = s.spawn(|| events.set(&e));
//!     (events.wait_one(&e, 10_000), setter.join().unwrap())
//! });
//! set?;
//! assert_eq!(waited?, WaitOutcome::Signaled);
//! events.destroy(&e)?;
//! assert_eq!(events.live_count(), 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `examples/signal.rs` does the same and prints the timings.
//!
//! # Overview
//!
//! An [`Events`] is the event sub-context of a KFD context: it owns the
//! context's signal event page and a registry of its live events, and
//! implements the hsakmt event API on top of the KFD ioctls:
//!
//! - creation of every event type ([`EventType`]), manual or auto reset,
//!   optionally signaled; the event page is set up on the first creation
//!   (a library-allocated GTT buffer handed to the kernel on dGPUs, the
//!   kernel's own page mapped from the KFD descriptor otherwise);
//! - set / reset / query / destroy;
//! - waits on one or many events (any or all) with timeouts, blocking in
//!   the kernel, and the event-age form that cannot lose a set that
//!   happened before the wait;
//! - memory-fault and hardware-exception data returned by waits;
//! - the SMI events descriptor of a GPU ([`open_smi`]).
//!
//! Every failure is an [`EventError`] naming its cause (the C status it
//! becomes is decided at the `hsakmt` border). Events are
//! [`Event`] handles tied to their context: using one with another
//! context, or after it was destroyed, is an error, never undefined
//! behaviour. The crate knows nothing of the C structs: the `hsakmt` C
//! border keeps the C event struct it hands to C callers for each event,
//! filled from the [`EventRecord`] of [`Events::create_record`] (an event
//! without a handle), maps their pointers back to the records'
//! [`Waitable`] entries itself, and names the events by them
//! ([`Events::destroy_resolved`], [`Events::set_resolved`],
//! [`Events::wait_filled`]).
//!
//! The dGPU event page is a [`kfd_fmm::Buffer`] of the context's memory
//! manager, held by the [`Events`]; without a memory manager the crate
//! uses only the kernel's page.
//!
//! This crate has no `unsafe` code: the kernel's event page is a
//! [`kfd_sys::mapping::Mapping`], and the wait and SMI requests use the
//! safe forms of `kfd_sys::event` and `kfd_sys::memory`.

#![forbid(unsafe_code)]

mod error;
mod event;
mod events;
mod signal;
mod smi;
mod spare;

pub use error::EventError;
pub use event::{
    AccessFailure, Event, EventDescriptor, EventRecord, EventType, ExceptionData, HwException,
    MemoryFault, WaitList, Waitable,
};
pub use events::{Events, WaitEntries, WaitMode, WaitOutcome, TIMEOUT_IMMEDIATE, TIMEOUT_INFINITE};
pub use signal::{Condition, Signal};
pub use smi::open_smi;

pub(crate) use kfd_sys::sync::lock;
