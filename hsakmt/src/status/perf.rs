//! Performance: `hsaKmtPmc*`, `hsaKmtSPM*`, `hsaKmtPcSampling*`,
//! `hsaKmtGetClockCounters`.

use kfd_perf::{Error, KernelOp};
use kfd_sys::Errno;

use super::ToStatus;
use crate::border::{st, Status};
use crate::profile::Profile;

impl ToStatus for Error {
    fn status_in(&self, p: &Profile) -> Status {
        match self {
            Error::InvalidNode(_) | Error::TraceNodeMismatch { .. } => st::INVALID_NODE_UNIT,
            Error::NoCounterTable { .. }
            | Error::InvalidArgument(_)
            | Error::UnknownBlock(_)
            | Error::ConcurrencyExceeded { .. }
            | Error::NullTraceId => st::INVALID_PARAMETER,
            Error::TooManyCounters { .. } | Error::TraceBufferTooSmall { .. } => st::NO_MEMORY,
            Error::UnknownTrace(_) | Error::InvalidPcSamplingTrace => st::INVALID_HANDLE,
            Error::PrivilegedSlotsUnavailable(_) => st::UNAVAILABLE,
            Error::TraceNotAcquired(_) => st::ERROR,
            Error::KfdTooOld { .. } | Error::NotImplementedByKernel(_) => st::NOT_SUPPORTED,
            Error::BufferTooSmall { .. } => st::BUFFER_TOO_SMALL,
            Error::Kernel { op, errno } => kernel(*op, *errno, p),
        }
    }
}

/// The errno tables of the C library's `pc_sampling.c`; every other
/// request maps any failure to ERROR. A kernel without the PC-sampling
/// request (ENOTTY) is NOT_SUPPORTED for a capability query where the
/// generation says so
/// ([`crate::profile::Border::pc_sampling_enotty_not_supported`]; 6.2.4
/// has no ENOTTY entry: ERROR).
fn kernel(op: KernelOp, errno: Errno, p: &Profile) -> Status {
    use KernelOp::*;
    match (op, errno) {
        (PcSamplingQueryCapabilities, Errno::ENOSPC) => st::BUFFER_TOO_SMALL,
        (PcSamplingQueryCapabilities, Errno::EOPNOTSUPP) => st::NOT_SUPPORTED,
        (PcSamplingQueryCapabilities, Errno::ENOTTY)
            if p.border.pc_sampling_enotty_not_supported =>
        {
            st::NOT_SUPPORTED
        }
        (
            PcSamplingQueryCapabilities
            | PcSamplingCreate
            | PcSamplingDestroy
            | PcSamplingStart
            | PcSamplingStop,
            Errno::EINVAL,
        ) => st::INVALID_PARAMETER,
        (PcSamplingQueryCapabilities | PcSamplingCreate | PcSamplingStart, Errno::EBUSY) => {
            st::UNAVAILABLE
        }
        (PcSamplingCreate, Errno::ENOMEM) => st::NO_MEMORY,
        (PcSamplingStart, Errno::ENOMEM) => st::OUT_OF_RESOURCES,
        (PcSamplingStart | PcSamplingStop, Errno::EALREADY) => st::ALREADY_OPENED,
        _ => st::ERROR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{NEWEST, ROCM_6_2};

    #[test]
    fn pc_sampling_errno_table() {
        use KernelOp::*;
        let s = |op: KernelOp, e: Errno| Error::Kernel { op, errno: e }.status_in(&NEWEST).0;
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
        // 6.2.4 has no ENOTTY entry for the capability query.
        let enotty = Error::Kernel {
            op: PcSamplingQueryCapabilities,
            errno: Errno::ENOTTY,
        };
        assert_eq!(enotty.status_in(&ROCM_6_2), st::ERROR);
    }
}
