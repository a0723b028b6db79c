//! The error type of kfd-debug.

use kfd_sys::Errno;

/// Why a debug operation failed.
///
/// Every variant names one cause (with the errno and request where the
/// kernel refused); which C status each C function returns for it is
/// decided at the `hsakmt` border.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The operation was asked of a secondary context. Only the primary
    /// context of a process may use the debugger interfaces.
    #[error("debugger operations are refused on a secondary KFD context")]
    SecondaryContext,

    /// A GPU node's firmware does not support the debugger (its
    /// `DebugSupportedFirmware` capability bit is clear).
    #[error("the firmware of node {node} does not support the debugger")]
    FirmwareUnsupported {
        /// The first GPU node found without debugger firmware.
        node: u32,
    },

    /// The KFD ioctl interface is older than the operation needs.
    #[error("KFD ioctl interface {major}.{minor} is older than the required 1.{required_minor}")]
    KfdTooOld {
        /// Major version the kernel reported.
        major: u32,
        /// Minor version the kernel reported.
        minor: u32,
        /// Minor version (of major 1) the operation needs.
        required_minor: u32,
    },

    /// `AMDKFD_IOC_GET_VERSION` failed, so debugger support could not be
    /// established.
    #[error("querying the KFD version failed: {0}")]
    VersionQuery(Errno),

    /// `AMDKFD_IOC_RUNTIME_ENABLE` failed with `EBUSY`: a debugger already
    /// owns the runtime-enable state, or the runtime is already enabled.
    #[error("the runtime is busy (already enabled or owned by a debugger)")]
    RuntimeBusy,

    /// `AMDKFD_IOC_RUNTIME_ENABLE` failed with `EEXIST`: the process
    /// already has queues, and the runtime must be enabled before the
    /// first one is created.
    #[error("runtime enable must come before the first queue: this process has queues")]
    QueuesExist,

    /// The sub-context was made without a topology snapshot, so it knows
    /// no node to check (see `kfd_context::Context::debug`).
    #[error("no topology snapshot: the debugger-support check needs the nodes")]
    NoTopology,

    /// The node id is not in the topology snapshot of this context.
    #[error("node {0} does not exist")]
    InvalidNode(u32),

    /// The node exists but has no GPU, and the operation needs one.
    #[error("node {0} is not a GPU node")]
    NotAGpu(u32),

    /// More address watch points than the v1 interface accepts.
    #[error("{requested} watch points requested, at most {max} are allowed")]
    TooManyWatchPoints {
        /// How many were asked for.
        requested: usize,
        /// The limit (`MAX_ALLOWED_NUM_POINTS`).
        max: usize,
    },

    /// An argument is out of range or inconsistent.
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),

    /// The kernel returned a success value the operation does not allow
    /// (e.g. more queues suspended than were asked for).
    #[error("{op} returned the unexpected value {value}")]
    UnexpectedReturn {
        /// The request.
        op: &'static str,
        /// What it returned.
        value: i32,
    },

    /// The kernel refused the request.
    #[error("{op} failed: {errno}")]
    Kernel {
        /// The request (ioctl name, or `DBG_TRAP` operation name).
        op: &'static str,
        /// What the kernel returned.
        errno: Errno,
    },
}

impl Error {
    /// The errno the kernel returned, if the kernel caused this error.
    pub fn errno(&self) -> Option<Errno> {
        match self {
            Error::Kernel { errno, .. } | Error::VersionQuery(errno) => Some(*errno),
            Error::RuntimeBusy => Some(Errno::EBUSY),
            _ => None,
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_causes_keep_their_errno() {
        assert_eq!(Error::RuntimeBusy.errno(), Some(Errno::EBUSY));
        let e = Error::Kernel {
            op: "DBG_TRAP",
            errno: Errno::EPERM,
        };
        assert_eq!(e.errno(), Some(Errno::EPERM));
        assert_eq!(Error::InvalidNode(9).errno(), None);
    }
}
