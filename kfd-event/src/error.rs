//! Errors of the event operations and their `HSAKMT_STATUS` codes.

use hsakmt_sys::HSAKMT_STATUS;
use kfd_sys::Errno;

use kfd_fmm::FmmError;

/// Why an event operation failed.
///
/// [`EventError::status`] gives the status the C library returns for the
/// same input (see the conformance notes on each variant where the C
/// library has no defined behaviour).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    /// A NULL event pointer (`INVALID_HANDLE`, as in C).
    #[error("NULL event")]
    NullEvent,
    /// The event was destroyed, or the pointer never named an event of
    /// this context. The C library dereferences such pointers (undefined
    /// behaviour); we return `INVALID_HANDLE`.
    #[error("unknown or destroyed event")]
    UnknownEvent,
    /// The event belongs to another context (`INVALID_HANDLE`; the C
    /// library would issue the ioctl with the id on the wrong descriptor).
    #[error("event belongs to another context")]
    ForeignEvent,
    /// `EventType >= HSA_EVENTTYPE_MAXID` (`INVALID_PARAMETER`).
    #[error("invalid event type {0}")]
    InvalidEventType(u32),
    /// Set/Reset of an event that only the system signals (anything but
    /// SIGNAL and DEBUG_EVENT) (`ERROR`, as in C).
    #[error("system event types cannot be set or reset")]
    SystemEvent,
    /// A NULL event list (`INVALID_HANDLE`).
    #[error("NULL event list")]
    NullEventList,
    /// The event-age array is shorter than the event list
    /// (`INVALID_PARAMETER`; C would read past its end).
    #[error("event age array has {ages} entries for {events} events")]
    AgeLengthMismatch {
        /// Entries in the age array.
        ages: usize,
        /// Events waited on.
        events: usize,
    },
    /// The event page could not be set up (`ERROR`).
    #[error("event page: {0}")]
    EventPage(String),
    /// The memory manager failed while creating the event page (`ERROR`).
    #[error("event page allocation: {0}")]
    Memory(FmmError),
    /// The kernel has no free event slot (`ENOSPC`; `ERROR`).
    #[error("too many events")]
    TooManyEvents,
    /// An exception names a GPU this context's topology does not know
    /// (`INVALID_NODE_UNIT`).
    #[error("exception data names unknown gpu_id {0:#x}")]
    UnknownGpu(u32),
    /// A KFD ioctl failed (`ERROR`).
    #[error("{op} failed: {errno}")]
    Kernel {
        /// The ioctl.
        op: &'static str,
        /// What the kernel returned.
        errno: Errno,
    },
}

impl EventError {
    /// The `HSAKMT_STATUS` the C library returns for this failure.
    pub fn status(&self) -> HSAKMT_STATUS {
        use HSAKMT_STATUS as S;
        match self {
            EventError::NullEvent
            | EventError::UnknownEvent
            | EventError::ForeignEvent
            | EventError::NullEventList => S::HSAKMT_STATUS_INVALID_HANDLE,
            EventError::InvalidEventType(_) | EventError::AgeLengthMismatch { .. } => {
                S::HSAKMT_STATUS_INVALID_PARAMETER
            }
            EventError::UnknownGpu(_) => S::HSAKMT_STATUS_INVALID_NODE_UNIT,
            EventError::SystemEvent
            | EventError::EventPage(_)
            | EventError::Memory(_)
            | EventError::TooManyEvents
            | EventError::Kernel { .. } => S::HSAKMT_STATUS_ERROR,
        }
    }

    pub(crate) fn kernel(op: &'static str) -> impl FnOnce(Errno) -> EventError {
        move |errno| EventError::Kernel { op, errno }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_match_the_c_library() {
        assert_eq!(EventError::NullEvent.status().0, 4);
        assert_eq!(EventError::InvalidEventType(9).status().0, 3);
        assert_eq!(EventError::SystemEvent.status().0, 1);
        assert_eq!(EventError::TooManyEvents.status().0, 1);
        assert_eq!(EventError::UnknownGpu(7).status().0, 5);
    }
}
