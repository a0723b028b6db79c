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
use crate::objects::{ApId, VmObject};

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

    /// Reserves address space in `ap` and creates a kernel BO there.
    /// Returns the space (given back on drop), the handle and the mmap
    /// offset.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn alloc_bo(
        &self,
        gi: usize,
        ap: ApId,
        fixed: Option<u64>,
        size: u64,
        align: u64,
        ioc: AllocMemFlags,
        userptr: Option<u64>,
    ) -> Result<(Space, u64, u64)> {
        let aperture = self
            .apertures
            .get(ap)
            .ok_or(FmmError::NotSupported("aperture not available"))?;
        let space = aperture.allocate(fixed, size, align)?;
        let (handle, offset) = self.create_bo(gi, ap, aperture, space.addr, size, ioc, userptr)?;
        Ok((space, handle, offset))
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn create_bo(
        &self,
        gi: usize,
        ap: ApId,
        aperture: &Aperture,
        addr: u64,
        size: u64,
        ioc: AllocMemFlags,
        userptr: Option<u64>,
    ) -> Result<(u64, u64)> {
        let va_addr = if ap == ApId::MemHandle {
            // Memory without a GPU address (NoAddress): the kernel gets an
            // invalid VA, as in C; the handle-aperture address is the
            // thunk's own.
            0
        } else if !self.gpus.is_dgpu()
            && matches!(ap, ApId::Gpuvm(_))
            && ioc.contains(AllocMemFlags::VRAM)
        {
            addr - aperture.base
        } else {
            addr
        };
        let mut args = kfd::kfd_ioctl_alloc_memory_of_gpu_args {
            va_addr,
            size,
            handle: 0,
            mmap_offset: userptr.unwrap_or(0),
            gpu_id: self.gpus.get(gi).gpu_id,
            flags: (ioc | AllocMemFlags::NO_SUBSTITUTE).bits(),
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

    /// Maps a device file over `[addr, addr+len)` of `space` (which this
    /// manager reserved for the object being created), not inherited by
    /// a forked child.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn map_cpu(
        &self,
        space: &Space,
        addr: u64,
        len: u64,
        host_access: bool,
        fd: BorrowedFd<'_>,
        offset: u64,
        what: &'static str,
    ) -> Result<Arc<Mapping>> {
        let prot = if host_access {
            Prot::READ | Prot::WRITE
        } else {
            Prot::empty()
        };
        let map = space
            .map_file(addr, len, prot, fd, offset)
            .map_err(|errno| FmmError::Mmap { what, errno })?;
        // As the C library, a failure to keep the mapping from a child is
        // not an error of the allocation.
        let _ = map.dont_fork();
        Ok(Arc::new(map))
    }

    /// CPU-maps the first `size` bytes of a new BO object at its address.
    /// An object that reserved more than that (twice `size`: an AQL ring)
    /// and is host accessible gets the same pages once more right behind,
    /// so a reader can run past the ring's end without wrapping. The object
    /// counts as CPU-mapped once the first mapping is in place, so
    /// [`Fmm::destroy`] undoes a half-done mirror too.
    pub(super) fn map_bo_cpu(
        &self,
        obj: &mut VmObject,
        size: u64,
        host_access: bool,
        fd: BorrowedFd<'_>,
        offset: u64,
        what: &'static str,
    ) -> Result<()> {
        let view = self.map_cpu(&obj.space, obj.start, size, host_access, fd, offset, what)?;
        obj.views.push(view);
        if host_access && obj.size > size {
            let mirror = self.map_cpu(
                &obj.space,
                obj.start + size,
                size,
                true,
                fd,
                offset,
                "AQL mirror",
            )?;
            obj.views.push(mirror);
        }
        Ok(())
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
        let mut ids: Vec<u32> = targets
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
