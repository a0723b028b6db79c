//! Queues: `hsaKmtCreateQueue*`, `UpdateQueue`, `DestroyQueue`,
//! `SetQueueCUMask`, `GetQueueInfo`, `AllocQueueGWS`, `SetTrapHandler`,
//! `QueueRingDoorbell`.

use kfd_queue::QueueError;
use kfd_sys::ioctl::IoctlInfo;
use kfd_sys::{kfd, Errno};

use super::ToStatus;
use crate::border::{st, Status};
use crate::profile::Profile;

impl ToStatus for QueueError {
    fn status_in(&self, p: &Profile) -> Status {
        match self {
            QueueError::InvalidPriority(_)
            | QueueError::InvalidQueueType(_)
            | QueueError::MetadataUnaligned(_)
            | QueueError::NullQueue
            | QueueError::UnknownQueue(_)
            | QueueError::ForeignQueue
            | QueueError::InvalidCuMask { .. } => st::INVALID_PARAMETER,
            QueueError::InvalidNode(_) => st::INVALID_NODE_UNIT,
            QueueError::KfdTooOld { .. } => st::NOT_SUPPORTED,
            // A queue buffer the memory manager could not provide.
            QueueError::Memory(_) => st::NO_MEMORY,
            QueueError::EngineIdNeedsExt | QueueError::NoCwsrArea | QueueError::Doorbell(_) => {
                st::ERROR
            }
            QueueError::Kernel { request, errno } => kernel(*request, *errno, p),
            // Refusals the library explains keep the C library's status
            // for the errno they came with.
            QueueError::RingSize(_) => {
                kernel(kfd::AMDKFD_IOC_CREATE_QUEUE.info(), Errno::EINVAL, p)
            }
            QueueError::NoFreeSdmaQueue { .. } => {
                kernel(kfd::AMDKFD_IOC_CREATE_QUEUE.info(), Errno::ENOMEM, p)
            }
            // The owned AQL, PM4 and SDMA queues of the Rust API; no C function
            // reaches these: bad arguments, and failures of submitted work.
            QueueError::InvalidPacketCount(_)
            | QueueError::InvalidSdmaRingSize(_)
            | QueueError::SdmaPacketTooLarge { .. }
            | QueueError::InvalidPm4RingSize(_)
            | QueueError::Pm4PacketTooLarge { .. }
            | QueueError::UnknownPm4Opcode(_)
            | QueueError::Packet(_)
            | QueueError::TooManyDependencies(_)
            | QueueError::BadKernelObject(_)
            | QueueError::BadDispatchSize { .. }
            | QueueError::BatchTooLarge { .. } => st::INVALID_PARAMETER,
            QueueError::RingFull { .. }
            | QueueError::QueueStopped { .. }
            | QueueError::QueueException { .. }
            | QueueError::MemoryFault { .. } => st::ERROR,
            QueueError::Event(e) => e.status_in(p),
        }
    }
}

/// The C library's translation of a failed request's errno: its own
/// table for CREATE_QUEUE (newest library only; 5.2.3 and 6.2.4 return
/// ERROR for every failure,
/// [`crate::profile::Border::queue_failures_are_errors`]) and for
/// ALLOC_QUEUE_GWS; ERROR for every other request.
fn kernel(request: IoctlInfo, errno: Errno, p: &Profile) -> Status {
    if request == kfd::AMDKFD_IOC_CREATE_QUEUE.info() {
        match errno {
            _ if p.border.queue_failures_are_errors => st::ERROR,
            Errno::ENOMEM => st::NO_MEMORY,
            Errno::EINVAL => st::INVALID_PARAMETER,
            _ => st::ERROR,
        }
    } else if request == kfd::AMDKFD_IOC_ALLOC_QUEUE_GWS.info() {
        match errno {
            Errno::EINVAL => st::INVALID_PARAMETER,
            Errno::EBUSY => st::OUT_OF_RESOURCES,
            Errno::ENODEV => st::NOT_SUPPORTED,
            _ => st::ERROR,
        }
    } else {
        st::ERROR
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{NEWEST, ROCM_5_2, ROCM_6_2};

    fn k(request: IoctlInfo, errno: Errno, p: &Profile) -> Status {
        QueueError::Kernel { request, errno }.status_in(p)
    }

    #[test]
    fn errno_tables_per_request_and_generation() {
        let create = kfd::AMDKFD_IOC_CREATE_QUEUE.info();
        assert_eq!(k(create, Errno::ENOMEM, &NEWEST), st::NO_MEMORY);
        assert_eq!(k(create, Errno::EINVAL, &NEWEST), st::INVALID_PARAMETER);
        assert_eq!(k(create, Errno::EFAULT, &NEWEST), st::ERROR);
        for old in [&ROCM_5_2, &ROCM_6_2] {
            assert_eq!(k(create, Errno::ENOMEM, old), st::ERROR);
            assert_eq!(k(create, Errno::EINVAL, old), st::ERROR);
        }
        let gws = kfd::AMDKFD_IOC_ALLOC_QUEUE_GWS.info();
        for p in [&ROCM_5_2, &NEWEST] {
            assert_eq!(k(gws, Errno::EBUSY, p), st::OUT_OF_RESOURCES);
            assert_eq!(k(gws, Errno::ENODEV, p), st::NOT_SUPPORTED);
            assert_eq!(k(gws, Errno::EINVAL, p), st::INVALID_PARAMETER);
        }
        let destroy = kfd::AMDKFD_IOC_DESTROY_QUEUE.info();
        assert_eq!(k(destroy, Errno::EINVAL, &NEWEST), st::ERROR);
        let p = &NEWEST;
        let cu = QueueError::InvalidCuMask {
            count: 33,
            words: 2,
        };
        assert_eq!(cu.status_in(p), st::INVALID_PARAMETER);
        assert_eq!(
            QueueError::InvalidNode(9).status_in(p),
            st::INVALID_NODE_UNIT
        );
        assert_eq!(QueueError::EngineIdNeedsExt.status_in(p), st::ERROR);
        // Explained refusals keep the status of the errno they came with.
        for p in [&ROCM_5_2, &ROCM_6_2, &NEWEST] {
            assert_eq!(
                QueueError::RingSize(3000).status_in(p),
                k(create, Errno::EINVAL, p)
            );
            assert_eq!(
                QueueError::NoFreeSdmaQueue { engine: None }.status_in(p),
                k(create, Errno::ENOMEM, p)
            );
        }
    }
}
