//! Kernel buffer objects and the object index: lookup, BO create and free,
//! CPU mappings, and the map/unmap ioctls.

use std::os::fd::BorrowedFd;
use std::sync::Arc;

use kfd_sys::mapping::Mapping;
use kfd_sys::mman::Prot;
use kfd_sys::{kfd, memory};

use super::Fmm;
use crate::aperture::{Aperture, Space};
use crate::error::{FmmError, Result};
use crate::flags::AllocMemFlags;
use crate::lock;
use crate::objects::{ApId, Lookup, Shard, Slot, Span, VmObject};

impl Fmm {
    /// [`FmmRules::always_executable`].
    pub(super) fn always_executable(&self) -> bool {
        self.opts.rules.always_executable
    }

    pub(super) fn gpu_index(&self, gpu_id: u32) -> Option<usize> {
        if gpu_id == 0 {
            return None;
        }
        self.gpus.iter().position(|g| g.gpu_id == gpu_id)
    }

    /// The gpu_id of `node` (0 for a CPU node), or InvalidNode.
    pub fn validate_node(&self, node: u32) -> Result<u32> {
        self.nodes
            .get(node as usize)
            .map(|n| n.gpu_id)
            .ok_or(FmmError::InvalidNode(node))
    }

    /// The gpu_ids of a node list, as `validate_nodeid_array`: an empty
    /// list is an invalid argument, a bad node an invalid node.
    pub fn gpu_ids_for_nodes(&self, nodes: &[u32]) -> Result<Vec<u32>> {
        if nodes.is_empty() {
            return Err(FmmError::InvalidArgument("empty node list"));
        }
        nodes.iter().map(|&n| self.validate_node(n)).collect()
    }

    pub(super) fn node_of_gpu(&self, gpu_id: u32) -> u32 {
        self.gpu_index(gpu_id).map_or(0, |gi| self.gpus[gi].node_id)
    }

    pub(super) fn svm_alt_aperture(&self) -> Option<&Aperture> {
        self.svm_alt.as_ref().or(self.svm.as_ref())
    }

    pub(super) fn aperture(&self, id: ApId) -> Option<&Aperture> {
        match id {
            ApId::SvmDefault => self.svm.as_ref(),
            ApId::SvmCoherent => self.svm_alt_aperture(),
            ApId::Gpuvm(gi) => self.gpus.get(gi)?.gpuvm.as_ref(),
            ApId::MemHandle => Some(&self.mem_handle),
            ApId::CpuVm => None,
        }
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

    /// Runs `f` on the shard holding the object `addr` resolves to. Only
    /// shards whose span covers `addr` are locked (usually one: objects of
    /// different GPUs interleave only when several GPUs allocate).
    pub(super) fn with_shard<R>(
        &self,
        addr: u64,
        how: Lookup,
        f: impl FnOnce(&mut Shard, Slot) -> R,
    ) -> Option<R> {
        self.with_shard_or(addr, how, |_| None, f)
    }

    /// [`Fmm::with_shard`], asking `quick` first, without the lock, for
    /// each shard whose span covers `addr` (in the order the shards are
    /// locked, so a quick answer is the one the locked lookup gives).
    #[inline]
    pub(super) fn with_shard_or<R>(
        &self,
        addr: u64,
        how: Lookup,
        quick: impl Fn(&Span) -> Option<R>,
        f: impl FnOnce(&mut Shard, Slot) -> R,
    ) -> Option<R> {
        for (s, span) in self.shards.iter().zip(&self.spans) {
            if !span.may_hold(addr) {
                continue;
            }
            if let Some(r) = quick(span) {
                return Some(r);
            }
            let mut g = lock(s);
            if let Some(start) = g.find(addr, how) {
                return Some(f(&mut g, start));
            }
        }
        None
    }

    pub(super) fn with_object<R>(
        &self,
        addr: u64,
        how: Lookup,
        f: impl FnOnce(&mut VmObject) -> R,
    ) -> Option<R> {
        self.with_shard(addr, how, |s, start| f(s.get_mut(start).expect("found")))
    }

    pub(super) fn shard_of(&self, gpu_id: u32) -> usize {
        self.gpu_index(gpu_id).map_or(0, |gi| gi + 1)
    }

    pub(super) fn insert(&self, obj: VmObject) {
        lock(&self.shards[self.shard_of(obj.gpu_id)]).insert(obj);
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
            .aperture(ap)
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
        } else if !self.is_dgpu && matches!(ap, ApId::Gpuvm(_)) && ioc.contains(AllocMemFlags::VRAM)
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
            gpu_id: self.gpus[gi].gpu_id,
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
