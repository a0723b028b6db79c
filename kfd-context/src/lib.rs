//! kfd-context: the aggregate root of kfd-rs.
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
//!
//! ```
//! use std::sync::Arc;
//! use kfd_context::Context;
//!
//! let sim = kfd_sim::Sim::preset("mi210")?;
//! let tenant = Context::open_secondary(Arc::new(sim))?;
//! let topo = tenant.acquire_system_properties()?;
//! assert_eq!(topo.gpu_nodes().count(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

mod context;
mod error;
mod options;
pub mod primary;

pub use context::{Context, ContextId, ContextKind, KfdVersion};
pub use error::ContextError;
pub use options::{ContextOptions, EnvSource, ProcessEnv};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
