//! Errors of the event operations.

use kfd_sys::ioctl::IoctlInfo;
use kfd_sys::Errno;

use kfd_fmm::FmmError;

/// Why an event operation failed: the cause, with the errno and the
/// kernel request where the kernel refused. Which C status each C
/// function returns for it is decided at the `hsakmt` border.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    /// A NULL event pointer.
    #[error("NULL event")]
    NullEvent,
    /// The event was destroyed, or the pointer never named an event of
    /// this context (the C library dereferences such pointers: undefined
    /// behaviour).
    #[error("unknown or destroyed event")]
    UnknownEvent,
    /// The event belongs to another context (the C library would issue
    /// the ioctl with the id on the wrong descriptor).
    #[error("event belongs to another context")]
    ForeignEvent,
    /// `EventType >= HSA_EVENTTYPE_MAXID`.
    #[error("invalid event type {0}")]
    InvalidEventType(u32),
    /// Set/Reset of an event that only the system signals (anything but
    /// SIGNAL and DEBUG_EVENT).
    #[error("system event types cannot be set or reset")]
    SystemEvent,
    /// A NULL event list.
    #[error("NULL event list")]
    NullEventList,
    /// The event-age array is shorter than the event list (C would read
    /// past its end).
    #[error("event age array has {ages} entries for {events} events")]
    AgeLengthMismatch {
        /// Entries in the age array.
        ages: usize,
        /// Events waited on.
        events: usize,
    },
    /// More entries were pushed into a wait's [`WaitEntries`] than the
    /// wait was made for.
    ///
    /// [`WaitEntries`]: crate::WaitEntries
    #[error("more than {capacity} entries pushed into a wait of {capacity}")]
    WaitEntriesFull {
        /// The entries the wait was made for.
        capacity: usize,
    },
    /// The event page could not be set up.
    #[error("event page: {0}")]
    EventPage(String),
    /// The memory manager failed while creating the event page.
    #[error("event page allocation: {0}")]
    Memory(FmmError),
    /// The kernel has no free event slot (`ENOSPC`).
    #[error("too many events")]
    TooManyEvents,
    /// An exception names a GPU this context's topology does not know.
    #[error("exception data names unknown gpu_id {0:#x}")]
    UnknownGpu(u32),
    /// The memory of a [`crate::Signal`] could not be allocated, mapped
    /// to the GPUs or accessed.
    #[error("signal memory: {0}")]
    SignalMemory(FmmError),
    /// A signal's event has no slot in the event page, so the GPU has no
    /// mailbox to raise it through.
    #[error("event {0} has no event page slot for a signal mailbox")]
    NoMailbox(u32),
    /// A signal wait ran out of time before the value met its condition.
    #[error("signal wait timed out after {waited:?} at value {value}")]
    SignalTimeout {
        /// The value last seen.
        value: i64,
        /// How long the wait lasted.
        waited: std::time::Duration,
    },
    /// A KFD request failed.
    #[error("{request} failed: {errno}")]
    Kernel {
        /// The request.
        request: IoctlInfo,
        /// What the kernel returned.
        errno: Errno,
    },
}

impl EventError {
    pub(crate) fn kernel(request: IoctlInfo) -> impl FnOnce(Errno) -> EventError {
        move |errno| EventError::Kernel { request, errno }
    }
}
