//! The debugger: `hsaKmtRuntimeEnable/Disable`, `hsaKmtDbg*`,
//! `hsaKmtDebugTrapIoctl`, `hsaKmtCheckRuntimeDebugSupport`,
//! `hsaKmtGetRuntimeCapabilities` and the address watch calls.

use kfd_debug::Error;

use super::ToStatus;
use crate::border::{st, Status};
use crate::profile::Profile;

/// | cause | status |
/// |---|---|
/// | secondary context, debugger firmware missing, KFD < 1.13, version query failed | `NOT_SUPPORTED` |
/// | `EBUSY` on runtime enable | `UNAVAILABLE` |
/// | no topology snapshot, unknown node, CPU node where a GPU is needed | `INVALID_NODE_UNIT` |
/// | too many watch points, bad argument | `INVALID_PARAMETER` |
/// | queues exist on runtime enable (`EEXIST`), any other kernel error | `ERROR` |
impl ToStatus for Error {
    fn status_in(&self, _: &Profile) -> Status {
        match self {
            Error::SecondaryContext
            | Error::FirmwareUnsupported { .. }
            | Error::KfdTooOld { .. }
            | Error::VersionQuery(_) => st::NOT_SUPPORTED,
            Error::RuntimeBusy => st::UNAVAILABLE,
            Error::NoTopology | Error::InvalidNode(_) | Error::NotAGpu(_) => st::INVALID_NODE_UNIT,
            Error::TooManyWatchPoints { .. } | Error::InvalidArgument(_) => st::INVALID_PARAMETER,
            Error::Kernel { .. } | Error::UnexpectedReturn { .. } | Error::QueuesExist => st::ERROR,
        }
    }
}

#[cfg(test)]
mod tests {
    use kfd_sys::Errno;

    use super::*;

    #[test]
    fn debug_causes() {
        let s = |e: Error| e.status_in(crate::generation::PROFILE);
        assert_eq!(s(Error::SecondaryContext), st::NOT_SUPPORTED);
        assert_eq!(s(Error::FirmwareUnsupported { node: 1 }), st::NOT_SUPPORTED);
        assert_eq!(
            s(Error::KfdTooOld {
                major: 1,
                minor: 12,
                required_minor: 13
            }),
            st::NOT_SUPPORTED
        );
        assert_eq!(s(Error::RuntimeBusy), st::UNAVAILABLE);
        assert_eq!(s(Error::QueuesExist), st::ERROR);
        assert_eq!(s(Error::InvalidNode(9)), st::INVALID_NODE_UNIT);
        assert_eq!(
            s(Error::TooManyWatchPoints {
                requested: 101,
                max: 100
            }),
            st::INVALID_PARAMETER
        );
        assert_eq!(
            s(Error::Kernel {
                op: "DBG_TRAP",
                errno: Errno::EPERM
            }),
            st::ERROR
        );
    }
}
