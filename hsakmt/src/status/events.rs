//! Events: `hsaKmtCreateEvent`, `DestroyEvent`, `SetEvent`,
//! `ResetEvent`, `QueryEventState`, `WaitOnEvent*`,
//! `WaitOnMultipleEvents*`, `OpenSMI`.

use kfd_event::{EventError, WaitOutcome};

use super::ToStatus;
use crate::border::{st, Status};
use crate::profile::Profile;

impl ToStatus for EventError {
    fn status_in(&self, _: &Profile) -> Status {
        match self {
            // The C library takes a NULL event (or list) for an invalid
            // handle; ours also unknown, destroyed and foreign ones,
            // which C would dereference.
            EventError::NullEvent
            | EventError::UnknownEvent
            | EventError::ForeignEvent
            | EventError::NullEventList => st::INVALID_HANDLE,
            // A wait's entries pushed past its count: the border pushes
            // exactly the caller's count, so only a bug of ours lands here.
            EventError::InvalidEventType(_)
            | EventError::AgeLengthMismatch { .. }
            | EventError::WaitEntriesFull { .. } => st::INVALID_PARAMETER,
            EventError::UnknownGpu(_) => st::INVALID_NODE_UNIT,
            // Set/Reset of a system event, the event page, the kernel
            // (ENOSPC included) and the memory manager: plain ERROR.
            EventError::SystemEvent
            | EventError::EventPage(_)
            | EventError::Memory(_)
            | EventError::TooManyEvents
            | EventError::Kernel { .. } => st::ERROR,
            // Signals of the Rust API; no C function reaches these.
            EventError::SignalMemory(_) => st::NO_MEMORY,
            EventError::NoMailbox(_) => st::ERROR,
            EventError::SignalTimeout { .. } => st::WAIT_TIMEOUT,
        }
    }
}

/// What a wait that did not fail returns: SUCCESS, or WAIT_TIMEOUT.
pub fn wait(outcome: WaitOutcome) -> Status {
    match outcome {
        WaitOutcome::Signaled => st::SUCCESS,
        WaitOutcome::TimedOut => st::WAIT_TIMEOUT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_causes() {
        let p = crate::generation::PROFILE;
        assert_eq!(EventError::NullEvent.status_in(p), st::INVALID_HANDLE);
        assert_eq!(EventError::ForeignEvent.status_in(p), st::INVALID_HANDLE);
        assert_eq!(
            EventError::InvalidEventType(9).status_in(p),
            st::INVALID_PARAMETER
        );
        assert_eq!(EventError::SystemEvent.status_in(p), st::ERROR);
        assert_eq!(EventError::TooManyEvents.status_in(p), st::ERROR);
        assert_eq!(
            EventError::UnknownGpu(7).status_in(p),
            st::INVALID_NODE_UNIT
        );
        assert_eq!(wait(WaitOutcome::Signaled), st::SUCCESS);
        assert_eq!(wait(WaitOutcome::TimedOut), st::WAIT_TIMEOUT);
    }
}
