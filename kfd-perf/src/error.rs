//! The error type of kfd-perf.

use kfd_sys::Errno;

use crate::pmc::{BlockId, GfxVersion};

/// A kernel request issued by kfd-perf, for [`Error::Kernel`] (the C
/// library translates the errno of each request differently, which the
/// `hsakmt` border decides).
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

/// Why a perf operation failed: the cause, with the request and errno
/// where the kernel refused. Which C status each C function returns for
/// it is decided at the `hsakmt` border.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
    fn kernel_causes_keep_their_errno() {
        let e = Error::Kernel {
            op: KernelOp::PcSamplingStart,
            errno: Errno::EALREADY,
        };
        assert_eq!(e.errno(), Some(Errno::EALREADY));
        let none = Error::NotImplementedByKernel(KernelOp::SpmAcquire);
        assert_eq!(none.errno(), Some(Errno::ENOTTY));
        assert_eq!(Error::NullTraceId.errno(), None);
    }
}
