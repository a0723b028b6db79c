//! The error type of kfd-perf and its mapping to `HSAKMT_STATUS`.

use hsakmt_sys::HSAKMT_STATUS;
use kfd_sys::Errno;

use crate::pmc::{BlockId, GfxVersion};

/// A kernel request issued by kfd-perf, for [`Error::Kernel`]. The C
/// library translates the errno of each request differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelOp {
    /// `AMDKFD_IOC_GET_VERSION`.
    GetVersion,
    /// `AMDKFD_IOC_GET_CLOCK_COUNTERS`.
    GetClockCounters,
    /// `AMDKFD_IOC_RLC_SPM`, `KFD_IOCTL_SPM_OP_ACQUIRE`.
    SpmAcquire,
    /// `AMDKFD_IOC_RLC_SPM`, `KFD_IOCTL_SPM_OP_RELEASE`.
    SpmRelease,
    /// `AMDKFD_IOC_RLC_SPM`, `KFD_IOCTL_SPM_OP_SET_DEST_BUF`.
    SpmSetDestBuffer,
    /// `AMDKFD_IOC_PC_SAMPLE`, `KFD_IOCTL_PCS_OP_QUERY_CAPABILITIES`.
    PcSamplingQueryCapabilities,
    /// `AMDKFD_IOC_PC_SAMPLE`, `KFD_IOCTL_PCS_OP_CREATE`.
    PcSamplingCreate,
    /// `AMDKFD_IOC_PC_SAMPLE`, `KFD_IOCTL_PCS_OP_DESTROY`.
    PcSamplingDestroy,
    /// `AMDKFD_IOC_PC_SAMPLE`, `KFD_IOCTL_PCS_OP_START`.
    PcSamplingStart,
    /// `AMDKFD_IOC_PC_SAMPLE`, `KFD_IOCTL_PCS_OP_STOP`.
    PcSamplingStop,
}

impl KernelOp {
    /// The status the C library returns when this request fails with
    /// `errno` (the errno tables of `pc_sampling.c`; every other request
    /// maps any failure to `HSAKMT_STATUS_ERROR`).
    pub fn status_for(self, errno: Errno) -> HSAKMT_STATUS {
        use HSAKMT_STATUS as S;
        match (self, errno) {
            (KernelOp::PcSamplingQueryCapabilities, Errno::ENOSPC) => {
                S::HSAKMT_STATUS_BUFFER_TOO_SMALL
            }
            (KernelOp::PcSamplingQueryCapabilities, Errno::EOPNOTSUPP | Errno::ENOTTY) => {
                S::HSAKMT_STATUS_NOT_SUPPORTED
            }
            (
                KernelOp::PcSamplingQueryCapabilities
                | KernelOp::PcSamplingCreate
                | KernelOp::PcSamplingDestroy
                | KernelOp::PcSamplingStart
                | KernelOp::PcSamplingStop,
                Errno::EINVAL,
            ) => S::HSAKMT_STATUS_INVALID_PARAMETER,
            (
                KernelOp::PcSamplingQueryCapabilities
                | KernelOp::PcSamplingCreate
                | KernelOp::PcSamplingStart,
                Errno::EBUSY,
            ) => S::HSAKMT_STATUS_UNAVAILABLE,
            (KernelOp::PcSamplingCreate, Errno::ENOMEM) => S::HSAKMT_STATUS_NO_MEMORY,
            (KernelOp::PcSamplingStart, Errno::ENOMEM) => S::HSAKMT_STATUS_OUT_OF_RESOURCES,
            (KernelOp::PcSamplingStart | KernelOp::PcSamplingStop, Errno::EALREADY) => {
                S::HSAKMT_STATUS_KERNEL_ALREADY_OPENED
            }
            _ => S::HSAKMT_STATUS_ERROR,
        }
    }
}

/// Why a perf operation failed.
///
/// [`Error::status`] gives the `HSAKMT_STATUS` the C library returns for
/// each cause.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The node id is not in the topology snapshot.
    #[error("node {0} does not exist")]
    InvalidNode(u32),

    /// The C library has no counter table for this node (Tonga, gfx11 and
    /// later, CPU nodes).
    #[error("no performance counter table for node {node} (gfx {}.{}.{})", gfx.major, gfx.minor, gfx.stepping)]
    NoCounterTable {
        /// The node.
        node: u32,
        /// Its GFX version.
        gfx: GfxVersion,
    },

    /// An argument is missing, zero or out of range.
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),

    /// More counters than one trace can hold (512).
    #[error("{requested} counters requested, a trace holds at most {max}")]
    TooManyCounters {
        /// How many were asked for.
        requested: usize,
        /// The limit.
        max: usize,
    },

    /// A counter names a block the node does not have.
    #[error("node has no counter block {0}")]
    UnknownBlock(u32),

    /// More counters of one block than it can count at once.
    #[error("{requested} counters of block {block:?}, at most {limit} can count at once")]
    ConcurrencyExceeded {
        /// The block.
        block: BlockId,
        /// How many were asked for.
        requested: u32,
        /// Its concurrency.
        limit: u32,
    },

    /// Trace id 0.
    #[error("trace id 0 is not a trace")]
    NullTraceId,

    /// No trace with this id exists in this context (the C library's
    /// "wrong magic").
    #[error("no trace with id {0:#x}")]
    UnknownTrace(u64),

    /// The trace was registered for another node.
    #[error("trace {trace:#x} belongs to another node than {node}")]
    TraceNodeMismatch {
        /// The trace.
        trace: u64,
        /// The node given.
        node: u32,
    },

    /// No slots of a privileged block can be reserved: only IOMMUv2 has
    /// privileged slots, and every other block's counters are programmed
    /// by the profiler on its own queues, not through the thunk.
    #[error("no privileged counter slots for block {0:?}")]
    PrivilegedSlotsUnavailable(BlockId),

    /// Start/stop/query on a trace whose access was never acquired: there
    /// are no counters open to enable or read.
    #[error("trace {0:#x} has no counters open (access not acquired)")]
    TraceNotAcquired(u64),

    /// The trace's buffer cannot hold one value per counter.
    #[error("the trace buffer holds {size} bytes, {needed} are needed")]
    TraceBufferTooSmall {
        /// Buffer size given at start (0 if never started).
        size: u64,
        /// Bytes needed.
        needed: u64,
    },

    /// The KFD ioctl interface is older than the operation needs.
    #[error("KFD ioctl interface {major}.{minor} is older than the required 1.{required_minor}")]
    KfdTooOld {
        /// Major version the kernel reported.
        major: u32,
        /// Minor version the kernel reported.
        minor: u32,
        /// Minor version (of major 1) needed.
        required_minor: u32,
    },

    /// The kernel does not implement the request at all (`ENOTTY`): SPM on
    /// kernels without ROCm's `AMDKFD_IOC_RLC_SPM`.
    #[error("the kernel does not implement {0:?}")]
    NotImplementedByKernel(KernelOp),

    /// PC-sampling capabilities do not fit the buffer.
    #[error("{needed} PC-sampling configurations do not fit the buffer")]
    BufferTooSmall {
        /// How many entries the kernel has.
        needed: u32,
    },

    /// PC-sampling trace id 0 (`INVALID_TRACE_ID`).
    #[error("PC-sampling trace id 0 is not a trace")]
    InvalidPcSamplingTrace,

    /// The kernel refused a request.
    #[error("{op:?} failed: {errno}")]
    Kernel {
        /// The request.
        op: KernelOp,
        /// What the kernel returned.
        errno: Errno,
    },
}

impl Error {
    /// The `HSAKMT_STATUS` the C library returns for this cause.
    pub fn status(&self) -> HSAKMT_STATUS {
        use HSAKMT_STATUS as S;
        match self {
            Error::InvalidNode(_) | Error::TraceNodeMismatch { .. } => {
                S::HSAKMT_STATUS_INVALID_NODE_UNIT
            }
            Error::NoCounterTable { .. }
            | Error::InvalidArgument(_)
            | Error::UnknownBlock(_)
            | Error::ConcurrencyExceeded { .. }
            | Error::NullTraceId => S::HSAKMT_STATUS_INVALID_PARAMETER,
            Error::TooManyCounters { .. } | Error::TraceBufferTooSmall { .. } => {
                S::HSAKMT_STATUS_NO_MEMORY
            }
            Error::UnknownTrace(_) | Error::InvalidPcSamplingTrace => {
                S::HSAKMT_STATUS_INVALID_HANDLE
            }
            Error::PrivilegedSlotsUnavailable(_) => S::HSAKMT_STATUS_UNAVAILABLE,
            Error::TraceNotAcquired(_) => S::HSAKMT_STATUS_ERROR,
            Error::KfdTooOld { .. } | Error::NotImplementedByKernel(_) => {
                S::HSAKMT_STATUS_NOT_SUPPORTED
            }
            Error::BufferTooSmall { .. } => S::HSAKMT_STATUS_BUFFER_TOO_SMALL,
            Error::Kernel { op, errno } => op.status_for(*errno),
        }
    }

    /// The errno the kernel returned, if the kernel caused this error.
    pub fn errno(&self) -> Option<Errno> {
        match self {
            Error::Kernel { errno, .. } => Some(*errno),
            Error::NotImplementedByKernel(_) => Some(Errno::ENOTTY),
            Error::BufferTooSmall { .. } => Some(Errno::ENOSPC),
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
    fn pc_sampling_errno_table() {
        use KernelOp::*;
        let s = |op: KernelOp, e: Errno| Error::Kernel { op, errno: e }.status().0;
        // QueryCapabilities: ENOSPC 7, EINVAL 3, EOPNOTSUPP 11, EBUSY 12.
        assert_eq!(s(PcSamplingQueryCapabilities, Errno::ENOSPC), 7);
        assert_eq!(s(PcSamplingQueryCapabilities, Errno::EINVAL), 3);
        assert_eq!(s(PcSamplingQueryCapabilities, Errno::EOPNOTSUPP), 11);
        assert_eq!(s(PcSamplingQueryCapabilities, Errno::ENOTTY), 11);
        assert_eq!(s(PcSamplingQueryCapabilities, Errno::EBUSY), 12);
        assert_eq!(s(PcSamplingQueryCapabilities, Errno::EIO), 1);
        // Create: EINVAL 3, ENOMEM 6, EBUSY 12.
        assert_eq!(s(PcSamplingCreate, Errno::EINVAL), 3);
        assert_eq!(s(PcSamplingCreate, Errno::ENOMEM), 6);
        assert_eq!(s(PcSamplingCreate, Errno::EBUSY), 12);
        assert_eq!(s(PcSamplingCreate, Errno::ENOTTY), 1);
        // Destroy: EINVAL 3, else 1.
        assert_eq!(s(PcSamplingDestroy, Errno::EINVAL), 3);
        assert_eq!(s(PcSamplingDestroy, Errno::EBUSY), 1);
        // Start: EINVAL 3, ENOMEM 13, EBUSY 12, EALREADY 22.
        assert_eq!(s(PcSamplingStart, Errno::EINVAL), 3);
        assert_eq!(s(PcSamplingStart, Errno::ENOMEM), 13);
        assert_eq!(s(PcSamplingStart, Errno::EBUSY), 12);
        assert_eq!(s(PcSamplingStart, Errno::EALREADY), 22);
        // Stop: EINVAL 3, EALREADY 22, else 1.
        assert_eq!(s(PcSamplingStop, Errno::EINVAL), 3);
        assert_eq!(s(PcSamplingStop, Errno::EALREADY), 22);
        assert_eq!(s(PcSamplingStop, Errno::EBUSY), 1);
        // Everything else: ERROR.
        assert_eq!(s(GetClockCounters, Errno::EINVAL), 1);
        assert_eq!(s(SpmAcquire, Errno::EBUSY), 1);
    }
}
