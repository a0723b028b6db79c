//! Scratch backing memory, doorbell pages and the MMIO remap address.

use std::collections::BTreeMap;
use std::os::fd::AsFd;

use kfd_sys::kfd;
use kfd_sys::mman;

use super::{Fmm, Scratch};
use crate::aperture::reset_to_reserved;
use crate::error::{FmmError, Result};
use crate::flags::{AllocMemFlags, MemFlags};
use crate::lock;
use crate::objects::{ApId, CpuView, VmObject};
use crate::va::align_up;
use crate::PAGE_SIZE;

/// Alignment of scratch backing memory.
const SCRATCH_ALIGN: u64 = 0x10000;

impl Fmm {
    /// Scratch backing memory: reserves 64 KiB-aligned address space and
    /// programs it as the GPU's scratch backing VA. Memory is created when
    /// (parts of) it are mapped.
    pub(super) fn alloc_scratch(
        &self,
        gi: usize,
        fixed: Option<u64>,
        size: u64,
        owned: bool,
    ) -> Result<u64> {
        let gpu = &self.gpus[gi];
        let mut st = lock(&gpu.scratch);
        if st.is_some() {
            return Err(FmmError::OutOfMemory(
                "scratch is already allocated for this GPU",
            ));
        }
        let aligned = align_up(size, SCRATCH_ALIGN);
        let addr = if self.is_dgpu {
            let ap = self
                .svm
                .as_ref()
                .ok_or(FmmError::OutOfMemory("no SVM aperture"))?;
            ap.allocate(fixed, aligned, SCRATCH_ALIGN)?
        } else {
            if fixed.is_some() {
                return Err(FmmError::OutOfMemory("fixed scratch address on an APU"));
            }
            let r = mman::reserve((aligned + SCRATCH_ALIGN) as usize)
                .map_err(|_| FmmError::OutOfMemory("scratch address space"))?
                as u64;
            let a = align_up(r, SCRATCH_ALIGN);
            // SAFETY: trimming our own fresh reservation to the aligned part.
            unsafe {
                if a > r {
                    let _ = mman::munmap(r as usize, (a - r) as usize);
                }
                let end = r + aligned + SCRATCH_ALIGN;
                if a + aligned < end {
                    let _ = mman::munmap((a + aligned) as usize, (end - a - aligned) as usize);
                }
            }
            a
        };
        let mut args = kfd::kfd_ioctl_set_scratch_backing_va_args {
            va_addr: addr >> 16,
            gpu_id: gpu.gpu_id,
            pad: 0,
        };
        if let Err(errno) = self
            .kfd
            .ioctl_plain(kfd::AMDKFD_IOC_SET_SCRATCH_BACKING_VA, &mut args)
        {
            self.release_scratch_range(addr, aligned);
            let _ = errno;
            return Err(FmmError::OutOfMemory(
                "AMDKFD_IOC_SET_SCRATCH_BACKING_VA failed",
            ));
        }
        *st = Some(Scratch {
            base: addr,
            size: aligned,
            objs: BTreeMap::new(),
            owned,
        });
        Ok(addr)
    }

    fn release_scratch_range(&self, addr: u64, size: u64) {
        if self.is_dgpu {
            if let Some(ap) = self.svm.as_ref() {
                // SAFETY: the scratch range is ours and no longer used.
                unsafe { ap.release(addr, size, true) };
            }
        } else {
            // SAFETY: as above, an APU scratch mapping we made.
            let _ = unsafe { mman::munmap(addr as usize, size as usize) };
        }
    }

    pub(super) fn scratch_gpu(&self, addr: u64) -> Option<usize> {
        self.gpus.iter().position(|g| {
            lock(&g.scratch)
                .as_ref()
                .is_some_and(|s| addr >= s.base && addr - s.base < s.size)
        })
    }

    /// Frees the scratch backing of a GPU; an owned one only for its owner
    /// (`as_owner`, or teardown).
    pub(super) fn free_scratch(&self, gi: usize, as_owner: bool) -> Result<()> {
        let st = {
            let mut g = lock(&self.gpus[gi].scratch);
            match g.as_ref() {
                None => return Ok(()),
                Some(st) if st.owned && !as_owner => return Err(FmmError::OwnedByHandle(st.base)),
                Some(_) => g.take().expect("checked"),
            }
        };
        for (_, obj) in st.objs {
            self.destroy_scratch_object(obj);
        }
        self.release_scratch_range(st.base, st.size);
        Ok(())
    }

    fn destroy_scratch_object(&self, mut obj: VmObject) {
        if !obj.mapped.is_empty() {
            let ids = obj.mapped.clone();
            let _ = self.unmap_ioctl(&mut obj, &ids);
        }
        // SAFETY: the object's range is part of our scratch reservation;
        // its device mapping goes away, the reservation stays.
        unsafe { reset_to_reserved(obj.start, obj.size) };
        if let Some(h) = obj.handle {
            let _ = self.free_bo(h);
        }
    }

    pub(super) fn map_scratch(&self, gi: usize, addr: u64, size: u64) -> Result<u64> {
        let gpu = &self.gpus[gi];
        if !self.is_dgpu {
            return Ok(0);
        }
        let mut st = lock(&gpu.scratch);
        let st = st.as_mut().ok_or(FmmError::NoSuchObject(addr))?;
        // `scratch_gpu` found `addr` inside `[base, base + size)`.
        if size == 0 || size > st.size - (addr - st.base) {
            return Err(FmmError::RangeOutsideObject { addr, size });
        }
        let ap = self
            .svm
            .as_ref()
            .ok_or(FmmError::NotSupported("no SVM aperture"))?;
        let ioc = AllocMemFlags::VRAM | AllocMemFlags::WRITABLE;
        let (handle, offset) = self.create_bo(gi, ApId::SvmDefault, ap, addr, size, ioc, None)?;
        let mut obj = VmObject::new(addr, size, Some(handle), gpu.gpu_id, ApId::SvmDefault);
        obj.node_id = gpu.node_id;
        obj.mflags = MemFlags::SCRATCH | MemFlags::NON_PAGED;
        if let Err(e) = self.map_cpu(addr, size, false, gpu.render.as_fd(), offset, "scratch") {
            let _ = self.free_bo(handle);
            return Err(e);
        }
        obj.cpu = CpuView::Mapped { len: size };
        if let Err(e) = self.map_ioctl(&mut obj, &[gpu.gpu_id]) {
            self.destroy_scratch_object(obj);
            return Err(e);
        }
        obj.mapping_count = 1;
        st.objs.insert(addr, obj);
        Ok(0)
    }

    pub(super) fn unmap_scratch(&self, gi: usize, addr: u64) -> Result<()> {
        if !self.is_dgpu {
            return Ok(());
        }
        let obj = {
            let mut st = lock(&self.gpus[gi].scratch);
            let st = st
                .as_mut()
                .ok_or(FmmError::Failed("no scratch on this GPU"))?;
            st.objs
                .remove(&addr)
                .ok_or(FmmError::Failed("no scratch mapping at this address"))?
        };
        self.destroy_scratch_object(obj);
        Ok(())
    }

    /// Allocates the doorbell page(s) of a GPU at a GPU-visible address and
    /// maps them for the CPU from the kfd file at `mmap_offset` (what
    /// CREATE_QUEUE returned, aligned down to the doorbell page).
    ///
    /// The address is released with [`Fmm::unmap_from_gpu`] and
    /// [`Fmm::free_memory`], which anyone holding the manager can call;
    /// [`Fmm::alloc_doorbell_buffer`] gives a handle only its holder can
    /// release.
    pub fn alloc_doorbell(&self, node: u32, size: u64, mmap_offset: u64) -> Result<u64> {
        self.doorbell_impl(node, size, mmap_offset, false)
    }

    pub(crate) fn doorbell_impl(
        &self,
        node: u32,
        size: u64,
        mmap_offset: u64,
        owned: bool,
    ) -> Result<u64> {
        let gpu_id = self.validate_node(node)?;
        let gi = self.gpu_index(gpu_id).ok_or(FmmError::NotAGpuNode(node))?;
        if size == 0 || size % PAGE_SIZE != 0 {
            return Err(FmmError::BadSize {
                size,
                page: PAGE_SIZE,
            });
        }
        if size > crate::MAX_ALLOC_SIZE {
            return Err(FmmError::OutOfMemory(
                "size exceeds the virtual address space",
            ));
        }
        let ioc = AllocMemFlags::DOORBELL | AllocMemFlags::WRITABLE | AllocMemFlags::COHERENT;
        let (addr, handle, _) = self.alloc_bo(gi, ApId::SvmCoherent, None, size, 0, ioc, None)?;
        let mut obj = VmObject::new(addr, size, Some(handle), gpu_id, ApId::SvmCoherent);
        obj.mflags = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
        obj.node_id = self.gpus[gi].node_id;
        if let Err(e) = self.map_cpu(addr, size, true, self.kfd.as_fd(), mmap_offset, "doorbell") {
            self.destroy(obj);
            return Err(e);
        }
        obj.cpu = CpuView::Mapped { len: size };
        obj.owned = owned;
        self.insert(obj);
        Ok(addr)
    }

    /// The CPU address of a GPU's MMIO remap (HDP flush) page, if mapped.
    pub fn mmio_address(&self, node: u32) -> Option<u64> {
        let gi = self.gpu_index(self.validate_node(node).ok()?)?;
        *lock(&self.gpus[gi].mmio)
    }
}
