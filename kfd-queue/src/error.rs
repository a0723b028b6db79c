//! Errors of the queue operations and their `HSAKMT_STATUS` codes.

use hsakmt_sys::HSAKMT_STATUS;
use kfd_sys::Errno;

use kfd_fmm::FmmError;

/// Why a queue operation failed.
///
/// [`QueueError::status`] gives the status the C library returns for the
/// same input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    /// Priority outside `HSA_QUEUE_PRIORITY_MINIMUM..=MAXIMUM`
    /// (`INVALID_PARAMETER`).
    #[error("invalid queue priority {0}")]
    InvalidPriority(i64),
    /// A queue type the library cannot create (`INVALID_PARAMETER`).
    #[error("invalid queue type {0}")]
    InvalidQueueType(u32),
    /// `HSA_QUEUE_SDMA_BY_ENG_ID` through the legacy `CreateQueue`, which
    /// has no engine argument (`ERROR`, as in C).
    #[error("SDMA-by-engine queues need CreateQueueExt/V2")]
    EngineIdNeedsExt,
    /// The node id is not in the topology, or is a CPU-only node
    /// (`INVALID_NODE_UNIT`).
    #[error("invalid node {0}")]
    InvalidNode(u32),
    /// The metadata ring size is not page aligned (`INVALID_PARAMETER`).
    #[error("metadata queue size {0:#x} is not page aligned")]
    MetadataUnaligned(u64),
    /// The KFD is too old for the request (`NOT_SUPPORTED`).
    #[error("needs KFD ioctl minor version {needed}, have {have}")]
    KfdTooOld {
        /// Minor version needed.
        needed: u32,
        /// Minor version the KFD reports.
        have: u32,
    },
    /// A queue id of 0 (`INVALID_PARAMETER`, as in C).
    #[error("NULL queue id")]
    NullQueue,
    /// The queue id is not a live queue of this context: destroyed,
    /// created by another context, or garbage. The C library dereferences
    /// such ids (undefined behaviour); we return `INVALID_PARAMETER`.
    #[error("unknown queue id {0:#x}")]
    UnknownQueue(u64),
    /// The handle belongs to another context (`INVALID_PARAMETER`).
    #[error("queue belongs to another context")]
    ForeignQueue,
    /// A CU mask with a bit count of 0 or not a multiple of 32, or shorter
    /// than its count (`INVALID_PARAMETER`).
    #[error("invalid CU mask: {count} bits in {words} words")]
    InvalidCuMask {
        /// The bit count given.
        count: u32,
        /// The mask words given.
        words: usize,
    },
    /// GetQueueInfo on a queue without a context save area (`ERROR`).
    #[error("queue has no context save/restore area")]
    NoCwsrArea,
    /// A buffer for the queue could not be allocated (`NO_MEMORY`).
    #[error("queue buffer allocation: {0}")]
    Memory(FmmError),
    /// The doorbell page could not be mapped (`ERROR`).
    #[error("doorbell mapping failed: {0}")]
    Doorbell(String),
    /// A KFD ioctl failed; the status follows the C library's errno
    /// mapping for that call.
    #[error("{op} failed: {errno}")]
    Kernel {
        /// The ioctl.
        op: &'static str,
        /// What the kernel returned.
        errno: Errno,
    },
}

impl QueueError {
    /// The `HSAKMT_STATUS` the C library returns for this failure.
    pub fn status(&self) -> HSAKMT_STATUS {
        use HSAKMT_STATUS as S;
        match self {
            QueueError::InvalidPriority(_)
            | QueueError::InvalidQueueType(_)
            | QueueError::MetadataUnaligned(_)
            | QueueError::NullQueue
            | QueueError::UnknownQueue(_)
            | QueueError::ForeignQueue
            | QueueError::InvalidCuMask { .. } => S::HSAKMT_STATUS_INVALID_PARAMETER,
            QueueError::InvalidNode(_) => S::HSAKMT_STATUS_INVALID_NODE_UNIT,
            QueueError::KfdTooOld { .. } => S::HSAKMT_STATUS_NOT_SUPPORTED,
            QueueError::Memory(_) => S::HSAKMT_STATUS_NO_MEMORY,
            QueueError::EngineIdNeedsExt | QueueError::NoCwsrArea | QueueError::Doorbell(_) => {
                S::HSAKMT_STATUS_ERROR
            }
            QueueError::Kernel { op, errno } => kernel_status(op, *errno),
        }
    }

    pub(crate) fn kernel(op: &'static str) -> impl FnOnce(Errno) -> QueueError {
        move |errno| QueueError::Kernel { op, errno }
    }
}

/// The C library's errno translation per ioctl.
fn kernel_status(op: &str, errno: Errno) -> HSAKMT_STATUS {
    use HSAKMT_STATUS as S;
    match op {
        "AMDKFD_IOC_CREATE_QUEUE" => match errno {
            Errno::ENOMEM => S::HSAKMT_STATUS_NO_MEMORY,
            Errno::EINVAL => S::HSAKMT_STATUS_INVALID_PARAMETER,
            _ => S::HSAKMT_STATUS_ERROR,
        },
        "AMDKFD_IOC_ALLOC_QUEUE_GWS" => match errno {
            Errno::EINVAL => S::HSAKMT_STATUS_INVALID_PARAMETER,
            Errno::EBUSY => S::HSAKMT_STATUS_OUT_OF_RESOURCES,
            Errno::ENODEV => S::HSAKMT_STATUS_NOT_SUPPORTED,
            _ => S::HSAKMT_STATUS_ERROR,
        },
        _ => S::HSAKMT_STATUS_ERROR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_mapping_follows_the_c_library() {
        let k = |op, errno| QueueError::Kernel { op, errno }.status().0;
        assert_eq!(k("AMDKFD_IOC_CREATE_QUEUE", Errno::ENOMEM), 6);
        assert_eq!(k("AMDKFD_IOC_CREATE_QUEUE", Errno::EINVAL), 3);
        assert_eq!(k("AMDKFD_IOC_CREATE_QUEUE", Errno::EFAULT), 1);
        assert_eq!(k("AMDKFD_IOC_ALLOC_QUEUE_GWS", Errno::EBUSY), 13);
        assert_eq!(k("AMDKFD_IOC_ALLOC_QUEUE_GWS", Errno::ENODEV), 11);
        assert_eq!(k("AMDKFD_IOC_ALLOC_QUEUE_GWS", Errno::EINVAL), 3);
        assert_eq!(k("AMDKFD_IOC_DESTROY_QUEUE", Errno::EINVAL), 1);
        assert_eq!(
            QueueError::InvalidCuMask {
                count: 33,
                words: 2
            }
            .status()
            .0,
            3
        );
        assert_eq!(QueueError::InvalidNode(9).status().0, 5);
        assert_eq!(QueueError::EngineIdNeedsExt.status().0, 1);
    }
}
