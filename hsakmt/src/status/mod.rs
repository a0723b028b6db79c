//! The C border's status tables: which `HSAKMT_STATUS` a C function
//! returns for each cause a Rust sub-context reports.
//!
//! The subsystem crates return domain errors (what happened, the errno,
//! which kernel request); they know nothing of `HSAKMT_STATUS`. Each
//! function family has one table here, an [`ToStatus`] implementation
//! for the error type of its crate:
//!
//! | family | error | table |
//! |---|---|---|
//! | open/close, contexts | `kfd_context::ContextError` | `context.rs` |
//! | topology | `kfd_topology::TopologyError` | `topology.rs` |
//! | memory | `kfd_fmm::FmmError` | `memory.rs` |
//! | events | `kfd_event::EventError` | `events.rs` |
//! | queues | `kfd_queue::QueueError` | `queues.rs` |
//! | debugger | `kfd_debug::Error` | `debug.rs` |
//! | performance | `kfd_perf::Error` | `perf.rs` |
//!
//! A table is a function of the cause and the generation's [`Profile`]
//! (where the C libraries of two generations return different statuses
//! for the same cause, the profile's switch decides). Where one cause
//! yields different statuses in different functions of a family, the
//! family's module has a function per exception, used with
//! [`Kmt::kmt_as`].

use crate::border::{KmtResult, Status};
use crate::profile::Profile;

mod context;
mod debug;
pub mod events;
pub mod memory;
mod perf;
mod queues;
mod topology;

/// Errors of the Rust API whose C status the border decides.
pub trait ToStatus: std::fmt::Display {
    /// The status the C library of `profile`'s generation returns for
    /// this cause.
    fn status_in(&self, profile: &Profile) -> Status;

    /// [`ToStatus::status_in`] this build's generation
    /// ([`crate::generation::PROFILE`]).
    fn to_status(&self) -> Status {
        self.status_in(crate::generation::PROFILE)
    }
}

/// `Result<T, E>` of the Rust API to the border's result: the error
/// becomes its C status (and is logged at the debug level).
pub trait Kmt<T, E> {
    /// Converts with the family table of `E` ([`ToStatus::to_status`]),
    /// logging the error at `HSAKMT_DEBUG_LEVEL` 7.
    fn kmt(self) -> KmtResult<T>;

    /// Converts with `table`, a function of the family whose status for
    /// some cause differs from the family's table; logs as
    /// [`Kmt::kmt`].
    fn kmt_as(self, table: fn(&E) -> Status) -> KmtResult<T>;
}

impl<T, E: ToStatus> Kmt<T, E> for Result<T, E> {
    fn kmt(self) -> KmtResult<T> {
        self.kmt_as(ToStatus::to_status)
    }

    fn kmt_as(self, table: fn(&E) -> Status) -> KmtResult<T> {
        self.map_err(|e| {
            let s = table(&e);
            crate::log::debug(format_args!("hsakmt: {e} (status {})\n", s.0));
            s
        })
    }
}
