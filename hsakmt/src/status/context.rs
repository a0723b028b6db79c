//! Contexts: `hsaKmtOpenKFD`, `hsaKmtCloseKFD`, the `Ctx` look-ups and
//! every sub-context's creation; a sub-context's own error goes to the
//! table of its family.

use kfd_context::ContextError;

use super::ToStatus;
use crate::border::{st, Status};
use crate::profile::Profile;

impl ToStatus for ContextError {
    fn status_in(&self, p: &Profile) -> Status {
        match self {
            ContextError::Open(_) | ContextError::NotOpen => st::NOT_OPENED,
            ContextError::AlreadyOpen => st::ALREADY_OPENED,
            ContextError::DriverMismatch { .. } => st::DRIVER_MISMATCH,
            ContextError::Ioctl { .. } => st::ERROR,
            // The C library checks the node against the (absent)
            // snapshot: no node is valid.
            ContextError::NoSnapshot => st::INVALID_NODE_UNIT,
            ContextError::KernelTooOld { .. } | ContextError::SecondaryContext => st::NOT_SUPPORTED,
            ContextError::ForeignObject { .. } => st::INVALID_HANDLE,
            ContextError::Topology(e) => e.status_in(p),
            ContextError::Fmm(e) => e.status_in(p),
            ContextError::Event(e) => e.status_in(p),
            ContextError::Queue(e) => e.status_in(p),
            ContextError::Debug(e) => e.status_in(p),
            ContextError::Perf(e) => e.status_in(p),
        }
    }
}

#[cfg(test)]
mod tests {
    use kfd_sys::Errno;

    use super::*;

    #[test]
    fn context_causes() {
        let p = crate::generation::PROFILE;
        let s = |e: ContextError| e.status_in(p);
        assert_eq!(s(ContextError::Open(Errno::ENOENT)), st::NOT_OPENED);
        assert_eq!(s(ContextError::NotOpen), st::NOT_OPENED);
        assert_eq!(s(ContextError::AlreadyOpen), st::ALREADY_OPENED);
        assert_eq!(
            s(ContextError::DriverMismatch { major: 2, minor: 0 }),
            st::DRIVER_MISMATCH
        );
        assert_eq!(s(ContextError::NoSnapshot), st::INVALID_NODE_UNIT);
        assert_eq!(s(ContextError::SecondaryContext), st::NOT_SUPPORTED);
        assert_eq!(
            s(ContextError::ForeignObject { owner: 1, this: 2 }),
            st::INVALID_HANDLE
        );
        let topo = kfd_topology::TopologyError::InvalidNode {
            node: 3,
            num_nodes: 1,
        };
        assert_eq!(s(ContextError::Topology(topo)), st::INVALID_NODE_UNIT);
    }
}
