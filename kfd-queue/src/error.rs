//! Errors of the queue operations.

use kfd_sys::ioctl::IoctlInfo;
use kfd_sys::Errno;

use kfd_fmm::FmmError;

/// Why a queue operation failed: the cause, with the errno and the
/// kernel request where the kernel refused. Which C status each C
/// function returns for it (the C library translates some requests'
/// errnos) is decided at the `hsakmt` border.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    /// Priority outside `HSA_QUEUE_PRIORITY_MINIMUM..=MAXIMUM`.
    #[error("invalid queue priority {0}")]
    InvalidPriority(i64),
    /// A queue type the library cannot create.
    #[error("invalid queue type {0}")]
    InvalidQueueType(u32),
    /// `HSA_QUEUE_SDMA_BY_ENG_ID` through the legacy `CreateQueue`, which
    /// has no engine argument.
    #[error("SDMA-by-engine queues need CreateQueueExt/V2")]
    EngineIdNeedsExt,
    /// The node id is not in the topology, or is a CPU-only node.
    #[error("invalid node {0}")]
    InvalidNode(u32),
    /// The metadata ring size is not page aligned.
    #[error("metadata queue size {0:#x} is not page aligned")]
    MetadataUnaligned(u64),
    /// The KFD is too old for the request.
    #[error("needs KFD ioctl minor version {needed}, have {have}")]
    KfdTooOld {
        /// Minor version needed.
        needed: u32,
        /// Minor version the KFD reports.
        have: u32,
    },
    /// A queue id of 0.
    #[error("NULL queue id")]
    NullQueue,
    /// The queue id is not a live queue of this context: destroyed,
    /// created by another context, or garbage. The C library dereferences
    /// such ids (undefined behaviour).
    #[error("unknown queue id {0:#x}")]
    UnknownQueue(u64),
    /// The handle belongs to another context.
    #[error("queue belongs to another context")]
    ForeignQueue,
    /// A CU mask with a bit count of 0 or not a multiple of 32, or shorter
    /// than its count.
    #[error("invalid CU mask: {count} bits in {words} words")]
    InvalidCuMask {
        /// The bit count given.
        count: u32,
        /// The mask words given.
        words: usize,
    },
    /// GetQueueInfo on a queue without a context save area.
    #[error("queue has no context save/restore area")]
    NoCwsrArea,
    /// A buffer for the queue could not be allocated.
    #[error("queue buffer allocation: {0}")]
    Memory(FmmError),
    /// The doorbell page could not be mapped.
    #[error("doorbell mapping failed: {0}")]
    Doorbell(String),
    /// The kernel refused a queue whose ring size is not a power of two
    /// (`EINVAL` from `AMDKFD_IOC_CREATE_QUEUE`).
    #[error("ring size {0:#x} is not a power of two: the kernel refused the queue")]
    RingSize(u64),
    /// The kernel had no SDMA queue left for the request (`ENOMEM` from
    /// `AMDKFD_IOC_CREATE_QUEUE` for an SDMA queue): every queue slot of
    /// the GPU's SDMA engines (or of the engine asked for) is taken.
    #[error(
        "no free SDMA queue{}: every queue slot is taken; destroy an SDMA queue first",
        engine.map(|e| format!(" on engine {e}")).unwrap_or_default()
    )]
    NoFreeSdmaQueue {
        /// The engine asked for (`HSA_QUEUE_SDMA_BY_ENG_ID`), if any.
        engine: Option<u32>,
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

impl QueueError {
    pub(crate) fn kernel(request: IoctlInfo) -> impl FnOnce(Errno) -> QueueError {
        move |errno| QueueError::Kernel { request, errno }
    }
}
