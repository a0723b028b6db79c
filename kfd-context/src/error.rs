//! Errors of context management.

use kfd_sys::Errno;

/// Why a context operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    /// `/dev/kfd` could not be opened (the message says how to use the
    /// simulator when the device does not exist).
    #[error("cannot open the KFD device: {0}{hint}", hint = open_hint(*.0))]
    Open(Errno),
    /// The KFD reports an ioctl interface major version other than 1.
    #[error("KFD ioctl interface {major}.{minor} is not supported (major must be 1)")]
    DriverMismatch {
        /// Reported major version.
        major: u32,
        /// Reported minor version.
        minor: u32,
    },
    /// An ioctl failed.
    #[error("{request} failed: {errno}")]
    Ioctl {
        /// The request.
        request: kfd_sys::ioctl::IoctlInfo,
        /// What the kernel said.
        errno: Errno,
    },
    /// The primary context is not open (or this is a forked child that
    /// has not reopened it).
    #[error("the primary KFD context is not open")]
    NotOpen,
    /// The operation needs a topology snapshot and none is acquired.
    #[error("no topology snapshot: call acquire_system_properties first")]
    NoSnapshot,
    /// Reading the topology failed.
    #[error(transparent)]
    Topology(#[from] kfd_topology::TopologyError),
    /// The kernel is too old for this operation.
    #[error("needs KFD ioctl interface 1.{needed}, the driver has 1.{have}")]
    KernelTooOld {
        /// Minor version required.
        needed: u32,
        /// Minor version present.
        have: u32,
    },
    /// The object belongs to another context.
    #[error("object belongs to context {owner}, not to context {this}")]
    ForeignObject {
        /// The context that created the object.
        owner: u64,
        /// The context it was used with.
        this: u64,
    },
    /// The primary context is open, so its driver cannot be changed.
    #[error("the primary KFD context is already open")]
    AlreadyOpen,
    /// A secondary context was asked for something only the primary does.
    #[error("not supported on a secondary context")]
    SecondaryContext,
    /// The memory manager refused.
    #[error(transparent)]
    Fmm(#[from] kfd_fmm::FmmError),
    /// The event sub-context refused.
    #[error(transparent)]
    Event(#[from] kfd_event::EventError),
    /// The queue sub-context refused.
    #[error(transparent)]
    Queue(#[from] kfd_queue::QueueError),
    /// The debug sub-context refused.
    #[error(transparent)]
    Debug(#[from] kfd_debug::Error),
    /// The perf sub-context refused.
    #[error(transparent)]
    Perf(#[from] kfd_perf::Error),
}

/// What to add to an open failure: where no `/dev/kfd` exists, how to run
/// on kfd-sim instead.
fn open_hint(errno: Errno) -> &'static str {
    if errno == Errno::ENOENT {
        " (/dev/kfd does not exist: no AMD GPU driver is loaded; to run without \
         a GPU, open the context on kfd-sim's driver, `kfd_sim::Sim::preset(\"mi210\")`, \
         or run the program under LD_PRELOAD=libkfd_sim.so)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_device_says_how_to_use_the_simulator() {
        let missing = ContextError::Open(Errno::ENOENT).to_string();
        assert!(missing.contains("kfd_sim::Sim::preset"), "{missing}");
        let denied = ContextError::Open(Errno::EACCES).to_string();
        assert!(!denied.contains("kfd_sim"), "{denied}");
    }
}
