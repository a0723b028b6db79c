//! Kernel buffer objects: node checks, BO create and free, CPU
//! mappings, and the map/unmap ioctls.

use std::os::fd::BorrowedFd;
use std::sync::Arc;

use kfd_sys::mapping::Mapping;
use kfd_sys::mman::Prot;
use kfd_sys::{kfd, memory};

use super::Fmm;
use crate::aperture::{Aperture, Space};
use crate::error::{FmmError, Result};
use crate::flags::AllocMemFlags;
use crate::objects::{ApId, GpuIds, VmObject};

/// A kernel buffer object to create.
#[derive(Debug, Clone, Copy)]
pub(super) struct BoSpec {
    /// The GPU (by index) whose VM holds it.
    pub gi: usize,
    /// The aperture its address comes from.
    pub ap: ApId,
    /// Its size.
    pub size: u64,
    /// The kernel's allocation flags.
    pub ioc: AllocMemFlags,
    /// The (page-aligned) user memory a userptr BO covers.
    pub userptr: Option<u64>,
}

/// A view of a device file to map for the CPU: `len` bytes of `fd` at
/// `offset`, readable and writable with `host_access` (else without
/// access); `what` names it when the mapping fails.
#[derive(Debug, Clone, Copy)]
pub(super) struct FileView<'a> {
    pub fd: BorrowedFd<'a>,
    pub offset: u64,
    pub len: u64,
    pub host_access: bool,
    pub what: &'static str,
}

/// Maps `view` over `[addr, addr + view.len)` of `space` (which the
/// manager reserved for the object being created), not inherited by a
/// forked child.
pub(super) fn map_file(space: &mut Space, addr: u64, view: FileView<'_>) -> Result<Arc<Mapping>> {
    let mapped = space.map_file(addr, view.len, view_prot(&view), view.fd, view.offset);
    kept_view(mapped, &view)
}

/// The protection of `view`'s mapping.
fn view_prot(view: &FileView<'_>) -> Prot {
    if view.host_access {
        Prot::READ | Prot::WRITE
    } else {
        Prot::empty()
    }
}

/// The CPU view `mapped` of `view` as an object keeps it, not inherited
/// by a forked child.
fn kept_view(
    mapped: std::result::Result<Mapping, kfd_sys::Errno>,
    view: &FileView<'_>,
) -> Result<Arc<Mapping>> {
    let map = mapped.map_err(|errno| FmmError::Mmap {
        what: view.what,
        errno,
    })?;
    // As the C library, a failure to keep the mapping from a child is
    // not an error of the allocation.
    let _ = map.dont_fork();
    Ok(Arc::new(map))
}

/// CPU-maps `view` over the start of a new BO object. An object that
/// reserved more than that (twice: an AQL ring) and is host accessible
/// gets the same pages once more right behind, so a reader can run past
/// the ring's end without wrapping. The object counts as CPU-mapped once
/// the first mapping is in place, so [`Fmm::destroy`] undoes a half-done
/// mirror too.
pub(super) fn map_bo_cpu(obj: &mut VmObject, view: FileView<'_>) -> Result<()> {
    if obj.size == view.len {
        // The usual case: one view over the whole object, which takes
        // a reservation of the object's own over.
        let mapped = obj
            .space
            .map_file_whole(view_prot(&view), view.fd, view.offset);
        obj.views.push(kept_view(mapped, &view)?);
        return Ok(());
    }
    obj.views.push(map_file(&mut obj.space, obj.start, view)?);
    if view.host_access && obj.size > view.len {
        let mirror = FileView {
            what: "AQL mirror",
            ..view
        };
        obj.views
            .push(map_file(&mut obj.space, obj.start + view.len, mirror)?);
    }
    Ok(())
}

impl Fmm {
    /// The gpu_id of `node` (0 for a CPU node), or InvalidNode.
    pub fn validate_node(&self, node: u32) -> Result<u32> {
        self.gpus.validate_node(node)
    }

    /// The gpu_ids of a node list, as `validate_nodeid_array`: an empty
    /// list is an invalid argument, a bad node an invalid node.
    pub fn gpu_ids_for_nodes(&self, nodes: &[u32]) -> Result<Vec<u32>> {
        self.gpus.ids_for_nodes(nodes)
    }

    pub(super) fn check_minor(&self, need: u32) -> Result<()> {
        if self.version.1 < need {
            return Err(FmmError::KfdTooOld {
                need,
                have: self.version.1,
            });
        }
        Ok(())
    }

    /// Reserves address space for `bo` in its aperture (at `fixed`, or
    /// aligned to `align`) and creates the BO there. Returns the space
    /// (given back on drop), the handle and the mmap offset.
    pub(super) fn alloc_bo(
        &self,
        bo: BoSpec,
        fixed: Option<u64>,
        align: u64,
    ) -> Result<(Space, u64, u64)> {
        let aperture = self
            .apertures
            .get(bo.ap)
            .ok_or(FmmError::NotSupported("aperture not available"))?;
        let space = aperture.allocate(fixed, bo.size, align)?;
        let (handle, offset) = self.create_bo(bo, aperture, space.addr)?;
        Ok((space, handle, offset))
    }

    /// Creates `bo` at `addr` of `aperture` (its aperture). Returns the
    /// handle and the mmap offset.
    pub(super) fn create_bo(
        &self,
        bo: BoSpec,
        aperture: &Aperture,
        addr: u64,
    ) -> Result<(u64, u64)> {
        let va_addr = if bo.ap == ApId::MemHandle {
            // Memory without a GPU address (NoAddress): the kernel gets an
            // invalid VA, as in C; the handle-aperture address is the
            // thunk's own.
            0
        } else if !self.gpus.is_dgpu()
            && matches!(bo.ap, ApId::Gpuvm(_))
            && bo.ioc.contains(AllocMemFlags::VRAM)
        {
            addr - aperture.base
        } else {
            addr
        };
        let mut args = kfd::kfd_ioctl_alloc_memory_of_gpu_args {
            va_addr,
            size: bo.size,
            handle: 0,
            mmap_offset: bo.userptr.unwrap_or(0),
            gpu_id: self.gpus.get(bo.gi).gpu_id,
            flags: (bo.ioc | AllocMemFlags::NO_SUBSTITUTE).bits(),
        };
        memory::alloc_memory_of_gpu(&self.kfd, &mut args)
            .map_err(FmmError::ioctl(kfd::AMDKFD_IOC_ALLOC_MEMORY_OF_GPU.info()))?;
        Ok((args.handle, args.mmap_offset))
    }

    pub(super) fn free_bo(&self, handle: u64) -> Result<()> {
        let mut f = kfd::kfd_ioctl_free_memory_of_gpu_args { handle };
        self.kfd
            .ioctl_plain(kfd::AMDKFD_IOC_FREE_MEMORY_OF_GPU, &mut f)
            .map(|_| ())
            .map_err(FmmError::ioctl(kfd::AMDKFD_IOC_FREE_MEMORY_OF_GPU.info()))
    }

    /// Undoes an object that is in no shard: unmaps it from GPUs, frees
    /// the BO and gives back its address range. Errors are ignored
    /// (teardown and failure paths); in particular the kernel's `EPERM`
    /// for the event-page buffer, which it keeps until the process ends,
    /// is expected, and a buffer it already refused is not offered again.
    pub(super) fn destroy(&self, mut obj: VmObject) {
        if obj.kernel_held {
            return;
        }
        if obj.handle.is_some() && !obj.mapped.is_empty() {
            let ids = obj.mapped.clone();
            let _ = self.unmap_ioctl(&mut obj, &ids);
        }
        if let Some(h) = obj.handle {
            let _ = self.free_bo(h);
        }
        // Dropping the object unmaps its CPU views and gives back its
        // address range.
    }

    /// MAP_MEMORY_TO_GPU on `targets`, resuming after the devices the
    /// object is already mapped on (passed first, counted in `n_success`).
    pub(super) fn map_ioctl(&self, obj: &mut VmObject, targets: &[u32]) -> Result<()> {
        let handle = obj.handle.ok_or(FmmError::NotMappable(obj.start))?;
        let mut ids: GpuIds = targets
            .iter()
            .copied()
            .filter(|t| obj.mapped.contains(t))
            .collect();
        let done = ids.len();
        ids.extend(targets.iter().copied().filter(|t| !obj.mapped.contains(t)));
        ids.dedup();
        let r = memory::map_memory_to_gpu(&self.kfd, handle, &ids, done);
        for id in &ids[..r.done] {
            if !obj.mapped.contains(id) {
                obj.mapped.push(*id);
            }
        }
        r.result
            .map_err(FmmError::ioctl(kfd::AMDKFD_IOC_MAP_MEMORY_TO_GPU.info()))
    }

    pub(super) fn unmap_ioctl(&self, obj: &mut VmObject, ids: &[u32]) -> Result<()> {
        let handle = obj.handle.ok_or(FmmError::NotMappable(obj.start))?;
        let r = memory::unmap_memory_from_gpu(&self.kfd, handle, ids);
        obj.mapped.retain(|m| !ids[..r.done].contains(m));
        r.result.map_err(FmmError::ioctl(
            kfd::AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU.info(),
        ))
    }
}
