//! Buffer objects: ACQUIRE_VM, ALLOC/FREE/MAP/UNMAP, available memory and
//! dma-buf export/import.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use kfd_sys::kfd::*;
use kfd_sys::Errno;

use super::dispatch::{Ctx, R};
use super::memfd::Memfd;
use super::process::{Pdd, ProcState, RenderFile};
use super::usermem::{self, FromBuf, ToBuf};
use super::{align_up, layout, lock, FileEntry, Machine, PAGE_SIZE};

/// 2 MiB: the granularity of amdgpu's VRAM availability accounting.
const VRAM_AVAILABILITY_ALIGN: u64 = 1 << 21;

/// `MAKE_HANDLE(gpu_id, idr_handle)`.
pub(crate) fn make_handle(gpu_id: u32, idr: u32) -> u64 {
    ((gpu_id as u64) << 32) | idr as u64
}

/// `GET_GPU_ID(handle)`.
pub(crate) fn handle_gpu_id(h: u64) -> u32 {
    (h >> 32) as u32
}

/// `GET_IDR_HANDLE(handle)`.
pub(crate) fn handle_idr(h: u64) -> u32 {
    h as u32
}

/// An allocator of mmap offsets in a render memfd: best fit over free
/// extents indexed by size, O(log n) per call.
#[derive(Debug)]
pub(crate) struct Extents {
    /// start → length.
    free: BTreeMap<u64, u64>,
    /// (length, start) of every free extent.
    by_size: BTreeSet<(u64, u64)>,
}

impl Extents {
    pub fn new(size: u64) -> Extents {
        let mut e = Extents {
            free: BTreeMap::new(),
            by_size: BTreeSet::new(),
        };
        e.add(0, size);
        e
    }

    fn add(&mut self, start: u64, len: u64) {
        self.free.insert(start, len);
        self.by_size.insert((len, start));
    }

    fn take(&mut self, start: u64, len: u64) {
        self.free.remove(&start);
        self.by_size.remove(&(len, start));
    }

    pub fn alloc(&mut self, size: u64) -> Option<u64> {
        let size = align_up(size, PAGE_SIZE);
        let &(len, start) = self.by_size.range((size, 0)..).next()?;
        self.take(start, len);
        if len > size {
            self.add(start + size, len - size);
        }
        Some(start)
    }

    pub fn free(&mut self, start: u64, size: u64) {
        let size = align_up(size, PAGE_SIZE);
        let mut start = start;
        let mut len = size;
        if let Some((&ps, &pl)) = self.free.range(..start).next_back() {
            if ps + pl == start {
                self.take(ps, pl);
                start = ps;
                len += pl;
            }
        }
        if let Some(&nl) = self.free.get(&(start + len)) {
            self.take(start + len, nl);
            len += nl;
        }
        self.add(start, len);
    }
}

/// One GPU VA mapping in a VM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VaEntry {
    /// End address (exclusive).
    pub end: u64,
    /// Device index of the pdd owning the BO.
    pub owner: usize,
    /// idr handle of the BO.
    pub idr: u32,
    /// The BO is a userptr BO.
    pub userptr: bool,
}

/// The mappings of one GPU VM (`vm->va`), keyed by start address. Entries
/// never overlap (MAP refuses conflicts), so lookups are O(log n).
#[derive(Debug, Default)]
pub(crate) struct VaIndex {
    map: BTreeMap<u64, VaEntry>,
}

impl VaIndex {
    /// A mapping other than `(owner, idr)` intersecting `[start, end)`.
    pub fn conflict(&self, start: u64, end: u64, owner: usize, idr: u32) -> bool {
        self.map
            .range(..end)
            .rev()
            .take_while(|(_, e)| e.end > start)
            .any(|(_, e)| (e.owner, e.idr) != (owner, idr))
    }

    /// Mappings intersecting `[start, end)`.
    pub fn intersecting(&self, start: u64, end: u64) -> impl Iterator<Item = (u64, &VaEntry)> {
        self.map
            .range(..end)
            .rev()
            .take_while(move |(_, e)| e.end > start)
            .map(|(s, e)| (*s, e))
    }

    /// The mapping containing `addr`, as (start, size).
    pub fn covering(&self, addr: u64) -> Option<(u64, u64)> {
        self.entry_at(addr).map(|(s, e)| (s, e.end - s))
    }

    /// The mapping containing `addr`, as (start, entry).
    pub fn entry_at(&self, addr: u64) -> Option<(u64, &VaEntry)> {
        let (s, e) = self.map.range(..=addr).next_back()?;
        (e.end > addr).then_some((*s, e))
    }

    pub fn insert(&mut self, start: u64, e: VaEntry) {
        self.map.insert(start, e);
    }

    /// Removes the mapping of `(owner, idr)` at `start`.
    pub fn remove(&mut self, start: u64, owner: usize, idr: u32) {
        if self
            .map
            .get(&start)
            .is_some_and(|e| (e.owner, e.idr) == (owner, idr))
        {
            self.map.remove(&start);
        }
    }
}

/// The pages of a VRAM/GTT buffer. Shared by the allocating BO, dma-bufs
/// exported from it and BOs imported from those; freed when the last one
/// goes away.
///
/// The pages start out as a region of the allocating render memfd (what
/// `mmap(render_fd, mmap_offset)` shows). The first dma-buf export moves
/// them into a memfd of their own, which is the dma-buf (so `mmap` of the
/// dma-buf shows the buffer at offset 0, in any process the descriptor is
/// passed to); existing shared CPU mappings of the render region are
/// re-pointed at it (see [`BoStorage::dmabuf_memfd`]).
#[derive(Debug)]
pub(crate) struct BoStorage {
    /// Render file and offset the pages were allocated at (`None` for a
    /// dma-buf that came from another simulated machine).
    home: Option<(Arc<RenderFile>, u64)>,
    pub size: u64,
    pub gpu_id: u32,
    pub flags: u32,
    vram_charge: u64,
    vram_used: Option<Arc<Mutex<u64>>>,
    /// The dma-buf memfd, once exported (then the authoritative pages).
    own: Mutex<Option<Arc<Memfd>>>,
    /// What the render nodes' GEM ioctls keep on the buffer.
    gem: GemState,
}

/// The buffer's `AMDGPU_GEM_METADATA` and `AMDGPU_GEM_OP_SET_PLACEMENT`
/// state as this OS process knows it. The metadata also travels on the
/// dma-buf memfd (a user xattr), so that importers in other OS processes
/// read what the exporter wrote, as on one real GPU, where every importer
/// of a dma-buf has the same buffer object. Kernels without user xattrs
/// on shmem (before 6.6) keep it in this process only.
#[derive(Debug, Default)]
struct GemState {
    metadata: Mutex<crate::drm::GemMetadata>,
    placement: Mutex<Option<u64>>,
}

/// The xattr (`user.` + this) carrying a dma-buf's GEM metadata.
const METADATA_XATTR: &str = "kfd-sim.gem-metadata";

impl Drop for BoStorage {
    fn drop(&mut self) {
        if let Some((render, offset)) = &self.home {
            render
                .memfd
                .punch_hole(*offset, align_up(self.size, PAGE_SIZE));
            lock(&render.extents).free(*offset, self.size);
        }
        if let Some(v) = &self.vram_used {
            let mut u = lock(v);
            *u = u.saturating_sub(self.vram_charge);
        }
    }
}

/// Prefix of dma-buf memfd names: `kfd-sim:dmabuf:g<gpu_id>:f<flags hex>:<n>`.
const DMABUF_TAG: &str = "dmabuf";

impl BoStorage {
    /// The memfd that holds the pages right now and the file offset of the
    /// buffer's first byte (the render region, or the dma-buf memfd once
    /// exported).
    pub fn backing(&self) -> Option<(Arc<Memfd>, u64)> {
        let own = lock(&self.own);
        match (&*own, &self.home) {
            (Some(m), _) => Some((m.clone(), 0)),
            (None, Some((r, base))) => Some((r.memfd.clone(), *base)),
            (None, None) => None,
        }
    }

    /// Reads bytes of the buffer.
    pub fn read(&self, off: u64, buf: &mut [u8]) -> Result<(), Errno> {
        let own = lock(&self.own);
        match (&*own, &self.home) {
            (Some(m), _) => m.pread(off, buf),
            (None, Some((r, base))) => r.memfd.pread(base + off, buf),
            (None, None) => Err(Errno::EINVAL),
        }
    }

    /// Writes bytes of the buffer.
    pub fn write(&self, off: u64, data: &[u8]) -> Result<(), Errno> {
        let own = lock(&self.own);
        match (&*own, &self.home) {
            (Some(m), _) => m.pwrite(off, data),
            (None, Some((r, base))) => r.memfd.pwrite(base + off, data),
            (None, None) => Err(Errno::EINVAL),
        }
    }

    /// The memfd that is this buffer's dma-buf, made on first use: the
    /// pages are copied out of the render memfd (data extents only), every
    /// shared CPU mapping of them in this OS process is replaced by the same
    /// range of the new memfd, and the render region is released (its
    /// offset stays reserved until the buffer is freed).
    pub fn dmabuf_memfd(&self) -> Result<Arc<Memfd>, Errno> {
        let mut own = lock(&self.own);
        if let Some(m) = &*own {
            return Ok(m.clone());
        }
        let Some((render, base)) = &self.home else {
            return Err(Errno::EINVAL);
        };
        let len = align_up(self.size, PAGE_SIZE);
        let tag = format!("{DMABUF_TAG}:g{}:f{:x}", self.gpu_id, self.flags);
        let m = Arc::new(Memfd::create(&tag, len)?);
        super::memfd::copy_data(&render.memfd, *base, &m, len)?;
        super::memfd::remap_shared(&render.memfd, *base, len, &m)?;
        render.memfd.punch_hole(*base, len);
        *own = Some(m.clone());
        Ok(m)
    }

    /// `AMDGPU_GEM_METADATA` GET: what the dma-buf file carries, else
    /// what this OS process set.
    pub fn gem_metadata(&self) -> crate::drm::GemMetadata {
        let own = lock(&self.own).clone();
        let max = 20 + crate::drm::GEM_METADATA_MAX;
        match own.map(|m| m.xattr(METADATA_XATTR, max)) {
            Some(Ok(Some(b))) => crate::drm::GemMetadata::from_bytes(&b)
                .unwrap_or_else(|| lock(&self.gem.metadata).clone()),
            _ => lock(&self.gem.metadata).clone(),
        }
    }

    /// `AMDGPU_GEM_METADATA` SET: kept here and on the dma-buf file.
    pub fn set_gem_metadata(&self, md: crate::drm::GemMetadata) {
        if let Some(m) = lock(&self.own).clone() {
            // No user xattrs on this kernel: this process keeps it alone.
            let _ = m.set_xattr(METADATA_XATTR, &md.to_bytes());
        }
        *lock(&self.gem.metadata) = md;
    }

    /// `AMDGPU_GEM_OP_GET_GEM_CREATE_INFO` of a KFD allocation
    /// (`amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu`): VRAM with
    /// `VRAM_WIPE_ON_RELEASE` (and `CPU_ACCESS_REQUIRED` when public), GTT
    /// with no flags, userptr as CPU-domain `PREEMPTIBLE`; page alignment;
    /// the page-aligned size.
    pub fn gem_create_info(&self) -> kfd_sys::drm::drm_amdgpu_gem_create_in {
        use kfd_sys::drm::*;
        let (domains, domain_flags) = if self.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 {
            let public = self.flags & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC != 0;
            (
                AMDGPU_GEM_DOMAIN_VRAM,
                AMDGPU_GEM_CREATE_VRAM_WIPE_ON_RELEASE
                    | if public {
                        AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED
                    } else {
                        0
                    },
            )
        } else if self.flags & KFD_IOC_ALLOC_MEM_FLAGS_GTT != 0 {
            (AMDGPU_GEM_DOMAIN_GTT, 0)
        } else {
            (AMDGPU_GEM_DOMAIN_CPU, AMDGPU_GEM_CREATE_PREEMPTIBLE)
        };
        drm_amdgpu_gem_create_in {
            bo_size: align_up(self.size, PAGE_SIZE),
            alignment: PAGE_SIZE,
            domains: lock(&self.gem.placement).unwrap_or(domains),
            domain_flags,
        }
    }

    /// `AMDGPU_GEM_OP_SET_PLACEMENT` (this OS process only).
    pub fn set_gem_placement(&self, domains: u64) {
        *lock(&self.gem.placement) = Some(domains);
    }
}

/// A buffer object (`kgd_mem` + its idr entry).
#[derive(Debug)]
pub(crate) struct Bo {
    pub va: u64,
    pub size: u64,
    pub flags: u32,
    pub storage: Option<Arc<BoStorage>>,
    pub mmap_offset: u64,
    /// Devices whose VM the BO is attached to (mapped at least once).
    pub attached: BTreeSet<usize>,
    /// Devices it is currently mapped on.
    pub mapped: BTreeSet<usize>,
    pub userptr: u64,
    pub vram_charge: u64,
}

impl Bo {
    /// Frees the BO (its storage goes when the last sharer drops it).
    pub fn release(self, _m: &Machine) {
        drop(self.storage);
    }
}

/// A dma-buf file: the buffer's own memfd (see [`BoStorage`]).
#[derive(Debug)]
pub(crate) struct DmaBufFile {
    pub memfd: Arc<Memfd>,
    pub storage: Arc<BoStorage>,
}

fn find_pdd(st: &mut ProcState, gpu_id: u32) -> Option<&mut Pdd> {
    st.pdds.iter_mut().find(|p| p.gpu_id == gpu_id)
}

/// Doorbell page offset of device `dev` in a kfd memfd.
pub(crate) fn doorbell_offset(dev: usize) -> u64 {
    dev as u64 * layout::KFD_DEV_STRIDE
}

/// MMIO remap page offset of device `dev` in a kfd memfd.
pub(crate) fn mmio_offset(dev: usize) -> u64 {
    dev as u64 * layout::KFD_DEV_STRIDE + layout::KFD_MMIO_OFF
}

pub(crate) fn acquire_vm(c: &Ctx, buf: &mut [u8]) -> R {
    let a = kfd_ioctl_acquire_vm_args::from_buf(buf);
    let Some(render) = c.m.render_by_fd(a.drm_fd) else {
        return Err(Errno::EINVAL);
    };
    let mut st = c.lock_state();
    let Some(pdd) = find_pdd(&mut st, a.gpu_id) else {
        return Err(Errno::EINVAL);
    };
    if let Some(vm) = &pdd.vm {
        return if Arc::ptr_eq(vm, &render) {
            Ok(0)
        } else {
            Err(Errno::EBUSY)
        };
    }
    if render.dev != Some(pdd.dev) || render.vm_owner().is_some() {
        return Err(Errno::EINVAL);
    }
    render.set_vm_owner(Some(c.proc.id));
    pdd.vm = Some(render);
    Ok(0)
}

fn svm_overlaps(st: &mut ProcState, start: u64, size: u64) -> bool {
    if size == 0 {
        return false;
    }
    let (first, last) = (start / PAGE_SIZE, (start + size - 1) / PAGE_SIZE);
    if !st.svm.overlaps(first, last) {
        return false;
    }
    // Ranges whose memory user space has unmapped are gone in the kernel.
    st.svm.drop_unmapped(first, last);
    st.svm.overlaps(first, last)
}

pub(crate) fn alloc(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_alloc_memory_of_gpu_args::from_buf(buf);
    if a.size == 0 {
        return Err(Errno::EINVAL);
    }
    let flags = a.flags;
    let mut st = c.lock_state();
    let end = a.va_addr.checked_add(a.size).ok_or(Errno::EINVAL)?;
    let _ = end;
    if svm_overlaps(&mut st, a.va_addr, a.size)
        || (flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR != 0
            && svm_overlaps(&mut st, a.mmap_offset, a.size))
    {
        return Err(Errno::EADDRINUSE);
    }
    let Some(pdd) = find_pdd(&mut st, a.gpu_id) else {
        return Err(Errno::EINVAL);
    };
    let dev = &c.m.devices[pdd.dev];
    if flags & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC != 0
        && flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0
        && !dev.large_bar
        && !dev.is_apu
    {
        return Err(Errno::EINVAL);
    }
    let Some(render) = pdd.vm.clone() else {
        return Err(Errno::ENODEV);
    };
    let mut bo = Bo {
        va: a.va_addr,
        size: a.size,
        flags,
        storage: None,
        mmap_offset: 0,
        attached: BTreeSet::new(),
        mapped: BTreeSet::new(),
        userptr: 0,
        vram_charge: 0,
    };
    if flags & (KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_GTT) != 0 {
        // VRAM on a GPU without dedicated memory falls back to GTT, as on
        // APUs that prefer GTT.
        let vram = flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 && dev.vram_size > 0;
        let mut charge = 0;
        let mut vram_used = None;
        if vram {
            let needed = align_up(a.size, VRAM_AVAILABILITY_ALIGN);
            let mut used = lock(&dev.vram_used);
            if used.saturating_add(needed) > dev.vram_size {
                return Err(Errno::ENOMEM);
            }
            *used += needed;
            charge = needed;
            vram_used = Some(dev.vram_used.clone());
        } else if flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 && dev.vram_size == 0 && !dev.is_apu {
            return Err(Errno::ENOMEM);
        }
        let offset = lock(&render.extents).alloc(a.size);
        let Some(offset) = offset else {
            if let Some(v) = &vram_used {
                let mut u = lock(v);
                *u = u.saturating_sub(charge);
            }
            return Err(Errno::ENOMEM);
        };
        bo.storage = Some(Arc::new(BoStorage {
            home: Some((render, offset)),
            size: a.size,
            gpu_id: dev.gpu_id,
            flags,
            vram_charge: charge,
            vram_used,
            own: Mutex::new(None),
            gem: GemState::default(),
        }));
        bo.mmap_offset = offset;
        if vram {
            let mut usage = align_up(a.size, PAGE_SIZE);
            if flags & KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM != 0 {
                usage = align_up(a.size >> 1, PAGE_SIZE);
            }
            bo.vram_charge = usage;
        }
    } else if flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR != 0 {
        if a.mmap_offset & (PAGE_SIZE - 1) != 0 {
            return Err(Errno::EINVAL);
        }
        if !usermem::is_mapped(a.mmap_offset, a.size) {
            return Err(Errno::EFAULT);
        }
        bo.userptr = a.mmap_offset;
        bo.mmap_offset = a.mmap_offset;
    } else if flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL != 0 {
        if a.size != layout::DOORBELL_SLICE {
            return Err(Errno::EINVAL);
        }
        pdd.doorbells_allocated = true;
        bo.mmap_offset = doorbell_offset(dev.index);
    } else if flags & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP != 0 {
        if a.size != PAGE_SIZE {
            return Err(Errno::EINVAL);
        }
        bo.mmap_offset = mmio_offset(dev.index);
    } else {
        return Err(Errno::EINVAL);
    }
    pdd.vram_usage += bo.vram_charge;
    a.mmap_offset = bo.mmap_offset;
    let idr = pdd.bos.insert(bo);
    a.handle = make_handle(a.gpu_id, idr);
    a.to_buf(buf);
    Ok(0)
}

pub(crate) fn free(c: &Ctx, buf: &mut [u8]) -> R {
    let a = kfd_ioctl_free_memory_of_gpu_args::from_buf(buf);
    if c.proc.events.signal_handle() == Some(a.handle) {
        return Err(Errno::EPERM);
    }
    let mut st = c.lock_state();
    let Some(pdd) = find_pdd(&mut st, handle_gpu_id(a.handle)) else {
        return Err(Errno::EINVAL);
    };
    let idr = handle_idr(a.handle);
    let Some(bo) = pdd.bos.get(&idr) else {
        return Err(Errno::EINVAL);
    };
    if !bo.mapped.is_empty() {
        return Err(Errno::EBUSY);
    }
    if let Some(bo) = pdd.bos.remove(idr) {
        pdd.vram_usage = pdd.vram_usage.saturating_sub(bo.vram_charge);
        bo.release(c.m);
    }
    Ok(0)
}

fn read_device_ids(ptr: u64, n: u32) -> Result<Vec<u32>, Errno> {
    usermem::read_array::<u32>(ptr, n as usize)
}

pub(crate) fn map(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_map_memory_to_gpu_args::from_buf(buf);
    if a.n_devices == 0 || a.n_success > a.n_devices {
        return Err(Errno::EINVAL);
    }
    let ids = read_device_ids(a.device_ids_array_ptr, a.n_devices)?;
    let mut st = c.lock_state();
    let gpu = handle_gpu_id(a.handle);
    let Some(pdd) = st.pdds.iter().find(|p| p.gpu_id == gpu) else {
        return Err(Errno::EINVAL);
    };
    if pdd.vm.is_none() {
        return Err(Errno::ENODEV);
    }
    let owner = pdd.dev;
    let idr = handle_idr(a.handle);
    let Some((va, size, userptr)) = st.pdds[owner]
        .bos
        .get(&idr)
        .map(|b| (b.va, b.size, b.userptr != 0))
    else {
        return Err(Errno::ENOMEM);
    };
    let mut result = Ok(0);
    for i in a.n_success..a.n_devices {
        let peer = ids[i as usize];
        let Some(pi) = st.pdds.iter().position(|p| p.gpu_id == peer) else {
            result = Err(Errno::EINVAL);
            break;
        };
        if st.pdds[pi].vm.is_none() {
            result = Err(Errno::ENODEV);
            break;
        }
        let end = va.checked_add(size);
        let Some(end) = end.filter(|e| va >= PAGE_SIZE && *e <= layout::VM_LIMIT) else {
            result = Err(Errno::EINVAL);
            break;
        };
        let already = st.pdds[owner]
            .bos
            .get(&idr)
            .is_some_and(|b| b.mapped.contains(&pi));
        if !already {
            // amdgpu_vm_bo_map: a GPU VM cannot map two BOs over the same
            // range.
            if st.vm_va[pi].conflict(va, end, owner, idr) {
                result = Err(Errno::EINVAL);
                break;
            }
            st.vm_va[pi].insert(
                va,
                VaEntry {
                    end,
                    owner,
                    idr,
                    userptr,
                },
            );
        }
        if let Some(b) = st.pdds[owner].bos.get_mut(&idr) {
            b.attached.insert(pi);
            b.mapped.insert(pi);
        }
        a.n_success = i + 1;
    }
    a.to_buf(buf);
    result
}

pub(crate) fn unmap(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_unmap_memory_from_gpu_args::from_buf(buf);
    if a.n_devices == 0 || a.n_success > a.n_devices {
        return Err(Errno::EINVAL);
    }
    let ids = read_device_ids(a.device_ids_array_ptr, a.n_devices)?;
    let mut st = c.lock_state();
    let gpu = handle_gpu_id(a.handle);
    let Some(owner) = st.pdds.iter().position(|p| p.gpu_id == gpu) else {
        return Err(Errno::EINVAL);
    };
    let idr = handle_idr(a.handle);
    if !st.pdds[owner].bos.contains_key(&idr) {
        return Err(Errno::ENOMEM);
    }
    let mut result = Ok(0);
    for i in a.n_success..a.n_devices {
        let peer = ids[i as usize];
        let Some(pi) = st.pdds.iter().position(|p| p.gpu_id == peer) else {
            result = Err(Errno::EINVAL);
            break;
        };
        let Some(b) = st.pdds[owner].bos.get_mut(&idr) else {
            result = Err(Errno::ENOMEM);
            break;
        };
        if !b.attached.contains(&pi) {
            result = Err(Errno::EINVAL);
            break;
        }
        let va = b.va;
        if b.mapped.remove(&pi) {
            st.vm_va[pi].remove(va, owner, idr);
        }
        a.n_success = i + 1;
    }
    a.to_buf(buf);
    result
}

pub(crate) fn available_memory(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_get_available_memory_args::from_buf(buf);
    let st = c.lock_state();
    let Some(pdd) = st.pdds.iter().find(|p| p.gpu_id == a.gpu_id) else {
        return Err(Errno::EINVAL);
    };
    let dev = &c.m.devices[pdd.dev];
    let used = *lock(&dev.vram_used);
    let avail = dev.vram_size.saturating_sub(used);
    a.available = avail & !(VRAM_AVAILABILITY_ALIGN - 1);
    a.to_buf(buf);
    Ok(0)
}

pub(crate) fn export_dmabuf(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_export_dmabuf_args::from_buf(buf);
    if c.m.device_by_id(handle_gpu_id(a.handle)).is_none() {
        return Err(Errno::EINVAL);
    }
    let storage = {
        let st = c.lock_state();
        let Some(pdd) = st.pdds.iter().find(|p| p.gpu_id == handle_gpu_id(a.handle)) else {
            return Err(Errno::EINVAL);
        };
        let Some(bo) = pdd.bos.get(&handle_idr(a.handle)) else {
            return Err(Errno::EINVAL);
        };
        if bo.flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR != 0 {
            return Err(Errno::EPERM);
        }
        match &bo.storage {
            Some(s) => s.clone(),
            None => return Err(Errno::EINVAL),
        }
    };
    if a.flags & !((libc::O_CLOEXEC | libc::O_RDWR | libc::O_ACCMODE) as u32) != 0 {
        return Err(Errno::EINVAL);
    }
    let cloexec = a.flags & libc::O_CLOEXEC as u32 != 0;
    a.dmabuf_fd = new_dmabuf(c.m, storage, cloexec)? as u32;
    a.to_buf(buf);
    Ok(0)
}

/// The dma-buf behind descriptor `fd`: one of this machine's, or one a
/// simulated machine of another OS process (or another in-process
/// [`crate::Sim`]) exported, recognised by its memfd name and registered
/// here on first use. Foreign dma-bufs share the pages; their VRAM stays
/// accounted on the exporting machine only.
fn dmabuf_by_fd(m: &Machine, fd: u32) -> Option<Arc<DmaBufFile>> {
    match m.lookup_fd(fd as i32) {
        Some(FileEntry::DmaBuf(d)) => Some(d),
        Some(_) => None,
        None => foreign_dmabuf(m, fd as i32),
    }
}

fn foreign_dmabuf(m: &Machine, fd: i32) -> Option<Arc<DmaBufFile>> {
    let link = super::memfd::fd_link(fd)?;
    let name = link.strip_prefix("/memfd:")?.strip_suffix(" (deleted)")?;
    let rest = name.strip_prefix("kfd-sim:")?.strip_prefix(DMABUF_TAG)?;
    let mut parts = rest.strip_prefix(':')?.split(':');
    let gpu_id: u32 = parts.next()?.strip_prefix('g')?.parse().ok()?;
    let flags = u32::from_str_radix(parts.next()?.strip_prefix('f')?, 16).ok()?;
    m.device_by_id(gpu_id)?;
    let memfd = Arc::new(Memfd::adopt(fd, name)?);
    let size = memfd.size().ok()?;
    let storage = Arc::new(BoStorage {
        home: None,
        size,
        gpu_id,
        flags,
        vram_charge: 0,
        vram_used: None,
        own: Mutex::new(Some(memfd.clone())),
        gem: GemState::default(),
    });
    let d = Arc::new(DmaBufFile { memfd, storage });
    let mut files = lock(&m.files);
    let e = files
        .entry(d.memfd.id)
        .or_insert_with(|| FileEntry::DmaBuf(d.clone()));
    match e {
        FileEntry::DmaBuf(d) => Some(d.clone()),
        _ => None,
    }
}

pub(crate) fn get_dmabuf_info(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_get_dmabuf_info_args::from_buf(buf);
    if c.m.devices.is_empty() {
        return Err(Errno::EINVAL);
    }
    let Some(d) = dmabuf_by_fd(c.m, a.dmabuf_fd) else {
        return Err(Errno::EINVAL);
    };
    a.size = d.storage.size;
    a.gpu_id = d.storage.gpu_id;
    let mut flags = if d.storage.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 {
        KFD_IOC_ALLOC_MEM_FLAGS_VRAM
    } else {
        KFD_IOC_ALLOC_MEM_FLAGS_GTT
    };
    flags |= d.storage.flags & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC;
    a.flags = flags;
    a.metadata_size = 0;
    a.to_buf(buf);
    Ok(0)
}

pub(crate) fn import_dmabuf(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_import_dmabuf_args::from_buf(buf);
    let mut st = c.lock_state();
    let Some(pdd) = find_pdd(&mut st, a.gpu_id) else {
        return Err(Errno::EINVAL);
    };
    if pdd.vm.is_none() {
        return Err(Errno::ENODEV);
    }
    let Some(d) = dmabuf_by_fd(c.m, a.dmabuf_fd) else {
        return Err(Errno::EINVAL);
    };
    let bo = Bo {
        va: a.va_addr,
        size: d.storage.size,
        flags: imported_flags(d.storage.flags),
        storage: Some(d.storage.clone()),
        mmap_offset: 0,
        attached: BTreeSet::new(),
        mapped: BTreeSet::new(),
        userptr: 0,
        vram_charge: 0,
    };
    let idr = pdd.bos.insert(bo);
    a.handle = make_handle(a.gpu_id, idr);
    a.to_buf(buf);
    Ok(0)
}

/// The allocation flags of a BO made by `AMDKFD_IOC_IMPORT_DMABUF`, as
/// the kernel's `import_obj_create` sets them: the domain of the buffer
/// (VRAM when the exporter placed it there, else GTT), always writable
/// and executable. The exporter's own access flags do not travel with a
/// dma-buf, so the importer's GPU mappings are read-write whatever they
/// were.
fn imported_flags(exported: u32) -> u32 {
    let domain = if exported & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 {
        KFD_IOC_ALLOC_MEM_FLAGS_VRAM
    } else {
        KFD_IOC_ALLOC_MEM_FLAGS_GTT
    };
    domain | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE
}

/// Finds a GTT BO by handle for the event page.
pub(crate) fn event_page_storage(
    st: &ProcState,
    handle: u64,
) -> Result<(Arc<BoStorage>, u64), Errno> {
    let Some(pdd) = st.pdds.iter().find(|p| p.gpu_id == handle_gpu_id(handle)) else {
        return Err(Errno::EINVAL);
    };
    if pdd.vm.is_none() {
        return Err(Errno::ENODEV);
    }
    let Some(bo) = pdd.bos.get(&handle_idr(handle)) else {
        return Err(Errno::EINVAL);
    };
    match &bo.storage {
        Some(s) if bo.flags & KFD_IOC_ALLOC_MEM_FLAGS_GTT != 0 => Ok((s.clone(), bo.size)),
        _ => Err(Errno::EINVAL),
    }
}

/// The kernel model's GEM objects as the DRM layer of one render file sees
/// them: dma-bufs (exported by `AMDKFD_IOC_EXPORT_DMABUF` or
/// `PRIME_HANDLE_TO_FD`, possibly by another simulated machine) can be
/// imported as GEM handles and exported again. A handle holds a reference
/// on the buffer, like a GEM handle on its object.
#[derive(Debug)]
pub(crate) struct ModelGem<'a> {
    pub m: &'a Machine,
    pub render: &'a RenderFile,
}

/// Creates (or reuses) the dma-buf file of `storage` and returns a new
/// descriptor of it: exporting a buffer twice gives two descriptors of the
/// same dma-buf, as in the kernel.
fn new_dmabuf(m: &Machine, storage: Arc<BoStorage>, cloexec: bool) -> Result<i32, Errno> {
    let memfd = storage.dmabuf_memfd()?;
    let user = memfd.dup_flags(cloexec)?;
    lock(&m.files).entry(memfd.id).or_insert_with(|| {
        FileEntry::DmaBuf(Arc::new(DmaBufFile {
            memfd: memfd.clone(),
            storage,
        }))
    });
    Ok(std::os::fd::IntoRawFd::into_raw_fd(user))
}

impl ModelGem<'_> {
    /// The buffer behind GEM object `object` of this render file.
    pub(crate) fn storage(&self, object: u64) -> Result<Arc<BoStorage>, Errno> {
        lock(&self.render.gem)
            .get(&object)
            .cloned()
            .ok_or(Errno::ENOENT)
    }
}

impl crate::drm::GemObjects for ModelGem<'_> {
    fn import_dmabuf(&self, fd: i32) -> Result<u64, Errno> {
        let d = dmabuf_by_fd(self.m, fd as u32).ok_or(Errno::EBADF)?;
        let id = Arc::as_ptr(&d.storage) as usize as u64;
        lock(&self.render.gem).insert(id, d.storage.clone());
        Ok(id)
    }

    fn export_dmabuf(&self, object: u64, flags: u32) -> Result<i32, Errno> {
        let s = self.storage(object)?;
        new_dmabuf(self.m, s, flags & kfd_sys::drm::DRM_CLOEXEC != 0)
    }

    fn release(&self, object: u64) {
        lock(&self.render.gem).remove(&object);
    }

    fn create_info(&self, object: u64) -> Result<kfd_sys::drm::drm_amdgpu_gem_create_in, Errno> {
        Ok(self.storage(object)?.gem_create_info())
    }

    fn set_placement(&self, object: u64, domains: u64) -> Result<(), Errno> {
        self.storage(object)?.set_gem_placement(domains);
        Ok(())
    }

    fn metadata(&self, object: u64) -> Result<crate::drm::GemMetadata, Errno> {
        Ok(self.storage(object)?.gem_metadata())
    }

    fn set_metadata(&self, object: u64, md: crate::drm::GemMetadata) -> Result<(), Errno> {
        self.storage(object)?.set_gem_metadata(md);
        Ok(())
    }

    fn vram_used(&self) -> u64 {
        self.render
            .dev
            .map_or(0, |d| *lock(&self.m.devices[d].vram_used))
    }
}

impl Machine {
    /// What an `mmap` of `len` bytes of descriptor `fd` at `offset`
    /// really maps when `fd` is a simulated render node and `offset` a GEM
    /// mmap offset of it (`AMDGPU_GEM_MMAP`): the file holding the object's
    /// pages and the offset there. `None` when it is not such a call (the
    /// mmap goes on unchanged); `EINVAL` for an offset of no live handle or
    /// a range past the object, as `drm_gem_mmap`.
    pub(crate) fn gem_mmap_target(
        &self,
        fd: i32,
        offset: u64,
        len: u64,
    ) -> Option<Result<(Arc<Memfd>, u64), Errno>> {
        if offset < crate::drm::GEM_MMAP_BASE {
            return None;
        }
        let Some(FileEntry::Render(r)) = self.lookup_fd(fd) else {
            return None;
        };
        let drm = r.drm.as_ref()?;
        let found = drm.gem_mmap_handle(offset).and_then(|(handle, inner)| {
            let object = drm.object(handle)?;
            let storage = lock(&r.gem).get(&object).cloned()?;
            Some((storage, inner))
        });
        let Some((storage, inner)) = found else {
            return Some(Err(Errno::EINVAL));
        };
        let fits = inner
            .checked_add(len)
            .is_some_and(|end| end <= align_up(storage.size, PAGE_SIZE));
        Some(match storage.backing() {
            Some((file, base)) if fits => Ok((file, base + inner)),
            _ => Err(Errno::EINVAL),
        })
    }
}
