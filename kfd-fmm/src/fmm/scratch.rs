//! Scratch backing memory, doorbell pages and the MMIO remap address.

use std::collections::BTreeMap;
use std::os::fd::AsFd;

use kfd_sys::kfd;
use kfd_sys::mapping::Reservation;

use super::bo::{map_file, BoSpec, FileView};
use super::{Fmm, Scratch};
use crate::aperture::Space;
use crate::error::{AddressSpace, FmmError, MemoryKind, Result};
use crate::flags::{AllocMemFlags, MemFlags};
use crate::lock;
use crate::objects::{ApId, Kind, ObjectDesc, VmObject};
use crate::va::align_up;
use crate::PAGE_SIZE;

/// A page the CPU reaches through the kfd file ([`Fmm::alloc_kfd_page`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct KfdPage {
    /// Its size.
    pub size: u64,
    /// The kernel's memory-type flag (DOORBELL, MMIO_REMAP).
    pub kind: AllocMemFlags,
    /// Where the kfd file maps it (`None`: the offset the allocation
    /// returns).
    pub offset: Option<u64>,
    /// What a failed CPU mapping names.
    pub what: &'static str,
    /// An RAII handle owns it.
    pub owned: bool,
}

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
        let gpu = self.gpus.get(gi);
        let mut st = lock(&gpu.scratch);
        if st.is_some() {
            return Err(FmmError::ScratchInUse { gpu_id: gpu.gpu_id });
        }
        let aligned = align_up(size, SCRATCH_ALIGN);
        let no_room = FmmError::NoAddressSpace {
            aperture: AddressSpace::Scratch,
        };
        let space = if self.gpus.is_dgpu() {
            let ap = self.apertures.svm().ok_or(FmmError::NoAddressSpace {
                aperture: AddressSpace::Svm,
            })?;
            ap.allocate(fixed, aligned, SCRATCH_ALIGN)?
        } else {
            if fixed.is_some() {
                // An APU's scratch is placed by mmap, never at a fixed
                // address.
                return Err(no_room);
            }
            let r = Reservation::new(aligned + SCRATCH_ALIGN).map_err(|_| no_room.clone())?;
            let lead = align_up(r.addr(), SCRATCH_ALIGN) - r.addr();
            Space::own(r.trim(lead, aligned).map_err(|_| no_room)?)
        };
        let addr = space.addr;
        let mut args = kfd::kfd_ioctl_set_scratch_backing_va_args {
            va_addr: addr >> 16,
            gpu_id: gpu.gpu_id,
            pad: 0,
        };
        // On failure the range goes back with `space`.
        self.kfd
            .ioctl_plain(kfd::AMDKFD_IOC_SET_SCRATCH_BACKING_VA, &mut args)
            .map_err(FmmError::ioctl(
                kfd::AMDKFD_IOC_SET_SCRATCH_BACKING_VA.info(),
            ))?;
        *st = Some(Scratch {
            base: addr,
            size: aligned,
            objs: BTreeMap::new(),
            owned,
            space,
        });
        gpu.scratch_range.write([addr, aligned]);
        Ok(addr)
    }

    /// The GPU whose scratch backing holds `addr`: a look at each GPU's
    /// range without its lock (the lock only while a writer changes it).
    pub(super) fn scratch_gpu(&self, addr: u64) -> Option<usize> {
        self.gpus.all().iter().position(|g| {
            let [base, size] = g.scratch_range.read().unwrap_or_else(|| {
                lock(&g.scratch)
                    .as_ref()
                    .map_or([0, 0], |s| [s.base, s.size])
            });
            addr >= base && addr - base < size
        })
    }

    /// Frees the scratch backing of a GPU; an owned one only for its owner
    /// (`as_owner`, or teardown).
    pub(super) fn free_scratch(&self, gi: usize, as_owner: bool) -> Result<()> {
        let st = {
            let mut g = lock(&self.gpus.get(gi).scratch);
            match g.as_ref() {
                None => return Ok(()),
                Some(st) if st.owned && !as_owner => return Err(FmmError::OwnedByHandle(st.base)),
                Some(_) => {
                    self.gpus.get(gi).scratch_range.write([0, 0]);
                    g.take().expect("checked")
                }
            }
        };
        let Scratch { objs, space, .. } = st;
        for (_, obj) in objs {
            self.destroy_scratch_object(obj);
        }
        // The backing range goes back.
        drop(space);
        Ok(())
    }

    fn destroy_scratch_object(&self, mut obj: VmObject) {
        if !obj.mapped.is_empty() {
            let ids = obj.mapped.clone();
            let _ = self.unmap_ioctl(&mut obj, &ids);
        }
        // The device mapping goes away (its part of the scratch range is
        // reserved again), then the BO.
        obj.views.clear();
        if let Some(h) = obj.handle {
            let _ = self.free_bo(h);
        }
    }

    pub(super) fn map_scratch(&self, gi: usize, addr: u64, size: u64) -> Result<u64> {
        let gpu = self.gpus.get(gi);
        if !self.gpus.is_dgpu() {
            return Ok(0);
        }
        let mut st = lock(&gpu.scratch);
        let st = st.as_mut().ok_or(FmmError::NoSuchObject(addr))?;
        // `scratch_gpu` found `addr` inside `[base, base + size)`.
        if size == 0 || size > st.size - (addr - st.base) {
            return Err(FmmError::RangeOutsideObject { addr, size });
        }
        let ap = self
            .apertures
            .svm()
            .ok_or(FmmError::NotSupported("no SVM aperture"))?;
        let bo = BoSpec {
            gi,
            ap: ApId::SvmDefault,
            size,
            ioc: AllocMemFlags::VRAM | AllocMemFlags::WRITABLE,
            userptr: None,
        };
        let (handle, offset) = self.create_bo(bo, ap, addr)?;
        let desc = ObjectDesc {
            handle: Some(handle),
            gpu_id: gpu.gpu_id,
            aperture: ApId::SvmDefault,
            flags: MemFlags::SCRATCH | MemFlags::NON_PAGED,
            node: gpu.node_id,
            kind: Kind::Allocated,
            registered: Vec::new(),
            owned: false,
        };
        // The scratch range is given back with the scratch, not with the
        // parts mapped in it.
        let mut obj = VmObject::new(Space::borrowed(addr, size), desc);
        let view = FileView {
            fd: gpu.render.as_fd(),
            offset,
            len: size,
            host_access: false,
            what: "scratch",
        };
        match map_file(&mut st.space, addr, view) {
            Ok(view) => obj.views.push(view),
            Err(e) => {
                let _ = self.free_bo(handle);
                return Err(e);
            }
        }
        if let Err(e) = self.map_ioctl(&mut obj, &[gpu.gpu_id]) {
            self.destroy_scratch_object(obj);
            return Err(e);
        }
        obj.mapping_count = 1;
        st.objs.insert(addr, obj);
        Ok(0)
    }

    pub(super) fn unmap_scratch(&self, gi: usize, addr: u64) -> Result<()> {
        if !self.gpus.is_dgpu() {
            return Ok(());
        }
        let obj = {
            let mut st = lock(&self.gpus.get(gi).scratch);
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
        let gi = self.gpus.index(gpu_id).ok_or(FmmError::NotAGpuNode(node))?;
        if size == 0 || size % PAGE_SIZE != 0 {
            return Err(FmmError::BadSize {
                size,
                page: PAGE_SIZE,
            });
        }
        if size > crate::MAX_ALLOC_SIZE {
            return Err(FmmError::TooBig {
                kind: MemoryKind::Device,
            });
        }
        let page = KfdPage {
            size,
            kind: AllocMemFlags::DOORBELL,
            offset: Some(mmap_offset),
            what: "doorbell",
            owned,
        };
        let obj = self.alloc_kfd_page(gi, page)?;
        let addr = obj.start;
        self.insert(obj);
        Ok(addr)
    }

    /// Memory of GPU `gi` in the coherent SVM aperture that the CPU
    /// reaches through the kfd file (a doorbell or MMIO remap page), as
    /// `page` says, mapped read-write for the CPU; not yet in the index.
    pub(super) fn alloc_kfd_page(&self, gi: usize, page: KfdPage) -> Result<VmObject> {
        let bo = BoSpec {
            gi,
            ap: ApId::SvmCoherent,
            size: page.size,
            ioc: page.kind | AllocMemFlags::WRITABLE | AllocMemFlags::COHERENT,
            userptr: None,
        };
        let (space, handle, offset) = self.alloc_bo(bo, None, 0)?;
        let gpu = self.gpus.get(gi);
        let desc = ObjectDesc {
            handle: Some(handle),
            gpu_id: gpu.gpu_id,
            aperture: ApId::SvmCoherent,
            flags: MemFlags::NON_PAGED | MemFlags::HOST_ACCESS,
            node: gpu.node_id,
            kind: Kind::Allocated,
            registered: Vec::new(),
            owned: page.owned,
        };
        let mut obj = VmObject::new(space, desc);
        let view = FileView {
            fd: self.kfd.as_fd(),
            offset: page.offset.unwrap_or(offset),
            len: page.size,
            host_access: true,
            what: page.what,
        };
        match map_file(&mut obj.space, obj.start, view) {
            Ok(view) => obj.views.push(view),
            Err(e) => {
                self.destroy(obj);
                return Err(e);
            }
        }
        Ok(obj)
    }

    /// The CPU address of a GPU's MMIO remap (HDP flush) page, if mapped.
    pub fn mmio_address(&self, node: u32) -> Option<u64> {
        let gi = self.gpus.index(self.validate_node(node).ok()?)?;
        *lock(&self.gpus.get(gi).mmio)
    }
}
