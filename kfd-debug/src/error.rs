//! The error type of kfd-debug and its mapping to `HSAKMT_STATUS`.

use hsakmt_sys::HSAKMT_STATUS;
use kfd_sys::Errno;

/// Why a debug operation failed.
///
/// Every variant names one cause; [`Error::status`] gives the
/// `HSAKMT_STATUS` the C library returns for that cause, so the `hsakmt`
/// border can translate without knowing the details.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
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
    /// The `HSAKMT_STATUS` the C library returns for this cause.
    ///
    /// | cause | status |
    /// |---|---|
    /// | secondary context, debugger firmware missing, KFD < 1.13, version query failed | `NOT_SUPPORTED` |
    /// | `EBUSY` on runtime enable | `UNAVAILABLE` |
    /// | no topology snapshot, unknown node, CPU node where a GPU is needed | `INVALID_NODE_UNIT` |
    /// | too many watch points, bad argument | `INVALID_PARAMETER` |
    /// | any other kernel error | `ERROR` |
    pub fn status(&self) -> HSAKMT_STATUS {
        match self {
            Error::SecondaryContext
            | Error::FirmwareUnsupported { .. }
            | Error::KfdTooOld { .. }
            | Error::VersionQuery(_) => HSAKMT_STATUS::HSAKMT_STATUS_NOT_SUPPORTED,
            Error::RuntimeBusy => HSAKMT_STATUS::HSAKMT_STATUS_UNAVAILABLE,
            Error::NoTopology | Error::InvalidNode(_) | Error::NotAGpu(_) => {
                HSAKMT_STATUS::HSAKMT_STATUS_INVALID_NODE_UNIT
            }
            Error::TooManyWatchPoints { .. } | Error::InvalidArgument(_) => {
                HSAKMT_STATUS::HSAKMT_STATUS_INVALID_PARAMETER
            }
            Error::Kernel { .. } | Error::UnexpectedReturn { .. } => {
                HSAKMT_STATUS::HSAKMT_STATUS_ERROR
            }
        }
    }

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
    fn statuses_match_the_c_library() {
        let s = |e: Error| e.status().0;
        assert_eq!(s(Error::SecondaryContext), 11);
        assert_eq!(s(Error::FirmwareUnsupported { node: 1 }), 11);
        assert_eq!(
            s(Error::KfdTooOld {
                major: 1,
                minor: 12,
                required_minor: 13
            }),
            11
        );
        assert_eq!(s(Error::RuntimeBusy), 12);
        assert_eq!(s(Error::InvalidNode(9)), 5);
        assert_eq!(
            s(Error::TooManyWatchPoints {
                requested: 101,
                max: 100
            }),
            3
        );
        assert_eq!(
            s(Error::Kernel {
                op: "DBG_TRAP",
                errno: Errno::EPERM
            }),
            1
        );
        assert_eq!(Error::RuntimeBusy.errno(), Some(Errno::EBUSY));
    }
}
