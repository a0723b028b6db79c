//! Memory: `hsaKmtAllocMemory*`, `FreeMemory`, `Register*`,
//! `Deregister*`, `MapMemoryToGPU*`, `UnmapMemoryToGPU`, sharing,
//! `QueryPointerInfo`, `SetMemoryUserData`, `AvailableMemory`,
//! `SetMemoryPolicy`, the SVM calls and `Get/SetXNACKMode`.
//!
//! The memory manager names the situation (an unknown address is
//! `NotRegistered` for a free or deregister, `NoSuchObject` for a map or
//! share, `UnknownPointer` for a query), so one table serves the family;
//! [`map_to_gpu`] is the one function whose statuses differ by
//! generation, and [`alloc`] the one whose statuses differ by the kind
//! of memory allocated.

use kfd_fmm::{FmmError, MemoryKind};

use super::ToStatus;
use crate::border::{st, Status};
use crate::profile::Profile;

impl ToStatus for FmmError {
    fn status_in(&self, _: &Profile) -> Status {
        use FmmError::*;
        match self {
            InvalidNode(_) | NotAGpuNode(_) => st::INVALID_NODE_UNIT,
            InvalidArgument(_)
            | BadSize { .. }
            | BadAlignment(_)
            | UnalignedAddress(_)
            | ConflictingFlags(_)
            | NoSuchObject(_)
            | NotMappable(_)
            | RangeOutsideObject { .. } => st::INVALID_PARAMETER,
            // FreeMemory and DeregisterMemory of what the caller did not
            // allocate or register (an RAII buffer's memory included).
            NotRegistered(_) | OwnedByHandle(_) => st::MEMORY_NOT_REGISTERED,
            AlreadyRegistered(_) => st::MEMORY_ALREADY_REGISTERED,
            NotUserMemory(_) => st::INVALID_HANDLE,
            NotSupported(_) | KfdTooOld { .. } => st::NOT_SUPPORTED,
            NotImplemented(_) => st::NOT_IMPLEMENTED,
            // The C library reports a failed device allocation as
            // NO_MEMORY, a failed system-memory one as a plain ERROR
            // (address space a system-memory allocation found no room
            // in: see [`alloc`]). An impossible size is refused as the C
            // library's failed allocation of that kind is.
            NoAddressSpace { .. }
            | ScratchInUse { .. }
            | AllocFailed { device: true, .. }
            | VramNotHostVisible { .. }
            | TooBig {
                kind: MemoryKind::Device | MemoryKind::Scratch,
            } => st::NO_MEMORY,
            UnknownPointer(_)
            | NodeNotRegistered(_)
            | ApuSystemMemory(_)
            | NoGpu
            | NumaBind { .. }
            | TooBig {
                kind: MemoryKind::System,
            }
            | BadShareHandle(_)
            | NullAddress
            | Failed(_)
            | AllocFailed { device: false, .. }
            | StillMapped(_)
            | RenderNode { .. }
            | Ioctl { .. }
            | Mmap { .. } => st::ERROR,
        }
    }
}

/// The status table of the AllocMemory functions for memory of `kind`
/// ([`kfd_fmm::AllocPlan::kind`]): the family's, except that the C
/// library's system-memory path reports no room in the address space as
/// a failed system-memory allocation, ERROR (its VRAM and scratch paths
/// report NO_MEMORY, as the family does).
pub fn alloc(kind: MemoryKind) -> fn(&FmmError) -> Status {
    match kind {
        MemoryKind::System => system_alloc,
        MemoryKind::Device | MemoryKind::Scratch => ToStatus::to_status,
    }
}

fn system_alloc(e: &FmmError) -> Status {
    system_alloc_in(e, crate::generation::PROFILE)
}

fn system_alloc_in(e: &FmmError, p: &Profile) -> Status {
    match e {
        FmmError::NoAddressSpace { .. } => st::ERROR,
        e => e.status_in(p),
    }
}

/// `hsaKmtMapMemoryToGPU`: the family's status, except that 5.2.3 turns
/// every failure of its `fmm_map_to_gpu` into ERROR
/// ([`crate::profile::Border::map_failures_are_errors`]).
pub fn map_to_gpu(e: &FmmError) -> Status {
    map_to_gpu_in(e, crate::generation::PROFILE)
}

fn map_to_gpu_in(e: &FmmError, p: &Profile) -> Status {
    if p.border.map_failures_are_errors {
        st::ERROR
    } else {
        e.status_in(p)
    }
}

#[cfg(test)]
mod tests {
    use kfd_fmm::AddressSpace;
    use kfd_sys::Errno;

    use super::*;
    use crate::profile::{ALL, NEWEST, ROCM_5_2};

    #[test]
    fn one_situation_one_status() {
        for p in ALL {
            let s = |e: FmmError| e.status_in(p);
            assert_eq!(s(FmmError::InvalidNode(9)), st::INVALID_NODE_UNIT);
            assert_eq!(
                s(FmmError::NotRegistered(0x1000)),
                st::MEMORY_NOT_REGISTERED
            );
            assert_eq!(
                s(FmmError::OwnedByHandle(0x1000)),
                st::MEMORY_NOT_REGISTERED
            );
            assert_eq!(s(FmmError::NoSuchObject(0x1000)), st::INVALID_PARAMETER);
            assert_eq!(s(FmmError::UnknownPointer(0x1000)), st::ERROR);
            assert_eq!(
                s(FmmError::KfdTooOld { need: 12, have: 8 }),
                st::NOT_SUPPORTED
            );
            let no_room = FmmError::NoAddressSpace {
                aperture: AddressSpace::Svm,
            };
            assert_eq!(s(no_room.clone()), st::NO_MEMORY);
            assert_eq!(system_alloc_in(&no_room, p), st::ERROR);
            assert_eq!(
                system_alloc_in(&FmmError::InvalidNode(9), p),
                st::INVALID_NODE_UNIT
            );
            assert_eq!(s(FmmError::ScratchInUse { gpu_id: 1 }), st::NO_MEMORY);
            assert_eq!(s(FmmError::ApuSystemMemory("x")), st::ERROR);
            assert_eq!(s(FmmError::NoGpu), st::ERROR);
            assert_eq!(s(FmmError::NumaBind { node: 1 }), st::ERROR);
            // Too big for the address space: C's status for a failed
            // allocation of that kind.
            let too_big = |kind| FmmError::TooBig { kind };
            assert_eq!(s(too_big(MemoryKind::Device)), st::NO_MEMORY);
            assert_eq!(s(too_big(MemoryKind::Scratch)), st::NO_MEMORY);
            assert_eq!(s(too_big(MemoryKind::System)), st::ERROR);
            assert_eq!(
                s(FmmError::AlreadyRegistered(1)),
                st::MEMORY_ALREADY_REGISTERED
            );
            let alloc = |device| FmmError::AllocFailed {
                device,
                errno: Errno::ENOMEM,
            };
            assert_eq!(s(alloc(true)), st::NO_MEMORY);
            assert_eq!(s(alloc(false)), st::ERROR);
            // Explained kernel refusals keep the unexplained ones' status.
            let small_bar = FmmError::VramNotHostVisible {
                node: 1,
                errno: Errno::EINVAL,
            };
            assert_eq!(s(small_bar), s(alloc(true)));
            assert_eq!(s(FmmError::StillMapped(0x1000)), st::ERROR);
        }
    }

    #[test]
    fn map_to_gpu_follows_the_generation() {
        let e = FmmError::NoSuchObject(0x1000);
        assert_eq!(map_to_gpu_in(&e, &ROCM_5_2), st::ERROR);
        assert_eq!(map_to_gpu_in(&e, &NEWEST), st::INVALID_PARAMETER);
    }
}
