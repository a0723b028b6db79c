//! kfd-context: the aggregate root of kfd-rs.
//!
//! # Example
//!
//! The primary context and a secondary one on a simulated MI300X
//! (`kfd-sim`; without [`primary::set_driver`], the primary opens this
//! machine's `/dev/kfd`). Each has its own kernel process and GPU address
//! space: a buffer of one is unknown to the other.
//!
//! ```
//! use std::sync::Arc;
//! use kfd_context::{primary, Context};
//! use kfd_fmm::MemFlags;
//!
//! let sim = kfd_sim::Sim::preset("mi300x")?;
//! primary::set_driver(Arc::new(sim.clone()))?;
//! let (host, _) = primary::open()?;
//! let tenant = Context::open_secondary(Arc::new(sim.clone()))?;
//!
//! let topology = tenant.acquire_system_properties()?;
//! assert_eq!(topology.gpu_nodes().count(), 8);
//! let gpu = topology.gpu_nodes().next().unwrap().id;
//! let buf = tenant.fmm()?.alloc_buffer(gpu, 2 << 20, 0, MemFlags::NON_PAGED | MemFlags::HOST_ACCESS)?;
//! buf.map()?;
//! buf.write(0, b"tenant data")?;
//!
//! host.acquire_system_properties()?;
//! assert!(host.fmm()?.pointer_info(buf.addr()).is_err()); // not the primary's
//! drop(buf);
//! drop((host, tenant));
//! primary::close()?;
//! // As the C library, the last close keeps the primary for the next
//! // open (ContextOptions::keep_after_close); discard it to end here.
//! primary::discard_closed();
//! assert!(sim.live_objects().is_empty()); // every kernel object is gone
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `examples/tenants.rs` does this with four tenants and tries every
//! cross-tenant access.
//!
//! # Overview
//!
//! A [`Context`] owns one `/dev/kfd` descriptor (one kernel process), its
//! topology snapshot and its sub-contexts (topology, fmm, event, queue,
//! debug, perf), each created on first use and torn down in order.
//!
//! - The **primary** context is process-wide and reference counted:
//!   [`primary::open`] / [`primary::close`]. It is the only global state in
//!   kfd-rs. After `fork()` the child sees it closed.
//! - **Secondary** contexts ([`Context::open_secondary`]) are independent:
//!   each opens its own descriptor and issues `AMDKFD_IOC_CREATE_PROCESS`,
//!   so it has its own GPU address spaces; no debugger, no SVM API.

#![forbid(unsafe_code)]

mod context;
mod device;
mod error;
mod options;
pub mod primary;

pub use context::{Context, ContextId, ContextKind, KfdVersion};
pub use error::ContextError;
pub use options::{ContextOptions, EnvSource, ProcessEnv};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
