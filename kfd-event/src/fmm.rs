//! [`DeviceMemory`] on the context's `kfd-fmm` memory manager.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use hsakmt_sys::HSAKMT_STATUS;
use kfd_fmm::{Buffer, Fmm, FmmError, MemFlags, MemMapFlags, SvmAttr, SvmFlags, PAGE_SIZE};

use crate::lock;
use crate::memory::{DeviceMemory, ExecAlloc, MemoryError};

/// Alignment of SVM areas (the GPU's huge page).
const GPU_HUGE_PAGE: u64 = 2 << 20;

fn err(what: &str) -> impl FnOnce(FmmError) -> MemoryError + '_ {
    move |e| MemoryError::new(e.status(), format!("{what}: {e}"))
}

/// The event and queue buffers of a context, allocated through its
/// [`Fmm`]. Buffers are held as [`kfd_fmm::Buffer`]s until freed, so CPU
/// writes go through the memory manager's checked accessors.
pub struct FmmMemory {
    fmm: Arc<Fmm>,
    buffers: Mutex<BTreeMap<u64, Buffer>>,
    /// Doorbell pages, by address (kept apart from the exec buffers: a
    /// context maps one per GPU and keeps it until teardown).
    doorbells: Mutex<BTreeMap<u64, Buffer>>,
    /// SVM-registered anonymous areas: address → size.
    svm: Mutex<BTreeMap<u64, u64>>,
}

impl fmt::Debug for FmmMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FmmMemory")
            .field("buffers", &lock(&self.buffers).len())
            .finish_non_exhaustive()
    }
}

impl FmmMemory {
    /// Allocates through `fmm`.
    pub fn new(fmm: Arc<Fmm>) -> FmmMemory {
        FmmMemory {
            fmm,
            buffers: Mutex::new(BTreeMap::new()),
            doorbells: Mutex::new(BTreeMap::new()),
            svm: Mutex::new(BTreeMap::new()),
        }
    }

    /// The memory manager.
    pub fn fmm(&self) -> &Arc<Fmm> {
        &self.fmm
    }

    /// Number of buffers allocated through this provider and not freed
    /// (doorbell pages not counted).
    pub fn live_buffers(&self) -> usize {
        lock(&self.buffers).len()
    }

    /// Number of SVM areas ([`DeviceMemory::alloc_svm`]) not freed.
    pub fn live_svm_areas(&self) -> usize {
        lock(&self.svm).len()
    }

    fn node_of_gpu(&self, gpu_id: u32) -> Option<u32> {
        self.fmm
            .nodes()
            .iter()
            .position(|n| n.gpu_id == gpu_id && gpu_id != 0)
            .map(|i| i as u32)
    }
}

impl DeviceMemory for FmmMemory {
    fn alloc_exec(&self, req: &ExecAlloc) -> Result<u64, MemoryError> {
        let mut flags = MemFlags::EXECUTE_ACCESS;
        if req.non_paged {
            flags |= MemFlags::NON_PAGED;
        }
        if req.device_local {
            flags |= MemFlags::COARSE_GRAIN;
        } else {
            flags |= MemFlags::HOST_ACCESS;
            if req.uncached {
                flags |= MemFlags::UNCACHED;
            }
            if req.node_id != 0 {
                // System memory allocated through the queue's GPU.
                flags |= MemFlags::GTT_ACCESS;
            }
        }
        let buf = self
            .fmm
            .alloc_buffer(req.node_id, req.size, 0, flags)
            .map_err(err("allocation"))?;
        let mapped = if req.node_id != 0 {
            self.fmm
                .map_to_gpu_nodes(buf.addr(), buf.size(), &[req.node_id], MemMapFlags::empty())
                .map(drop)
        } else {
            buf.map().map(drop)
        };
        mapped.map_err(err("GPU mapping"))?;
        let addr = buf.addr();
        lock(&self.buffers).insert(addr, buf);
        Ok(addr)
    }

    fn free_exec(&self, addr: u64, _size: u64) -> Result<(), MemoryError> {
        let buf = lock(&self.buffers).remove(&addr).ok_or_else(|| {
            MemoryError::new(
                HSAKMT_STATUS::HSAKMT_STATUS_MEMORY_NOT_REGISTERED,
                format!("no buffer at {addr:#x}"),
            )
        })?;
        buf.unmap().map_err(err("GPU unmapping"))?;
        drop(buf);
        Ok(())
    }

    fn handle(&self, addr: u64) -> Option<u64> {
        self.fmm.handle(addr)
    }

    fn mark_kernel_held(&self, addr: u64) {
        if let Some(buf) = lock(&self.buffers).remove(&addr) {
            // The memory manager keeps the object (and leaves its BO to
            // the kernel at teardown); the buffer no longer frees it.
            let _ = buf.into_raw();
        }
        let _ = self.fmm.mark_kernel_held(addr);
    }

    fn alloc_doorbell(&self, gpu_id: u32, size: u64, mmap_offset: u64) -> Result<u64, MemoryError> {
        let node = self.node_of_gpu(gpu_id).ok_or_else(|| {
            MemoryError::new(
                HSAKMT_STATUS::HSAKMT_STATUS_INVALID_NODE_UNIT,
                format!("no node for gpu_id {gpu_id:#x}"),
            )
        })?;
        // Held as a Buffer: the doorbell page can then only be released
        // here, never by an address-based free from elsewhere while a
        // queue may still ring it.
        let buf = self
            .fmm
            .alloc_doorbell_buffer(node, size, mmap_offset)
            .map_err(err("doorbell allocation"))?;
        // With no node list (5.2.3) the page goes into every GPU's VM;
        // the newest library maps it for its own GPU (and the peers that
        // may ring it, which this adapter does not model).
        let mapped = if self.fmm.options().rules.doorbells_on_all_gpus {
            buf.map().map(drop)
        } else {
            buf.map_to_nodes(&[node]).map(drop)
        };
        mapped.map_err(err("doorbell GPU mapping"))?;
        let addr = buf.addr();
        lock(&self.doorbells).insert(addr, buf);
        Ok(addr)
    }

    fn free_doorbell(&self, addr: u64) -> Result<(), MemoryError> {
        let buf = lock(&self.doorbells).remove(&addr).ok_or_else(|| {
            MemoryError::new(
                HSAKMT_STATUS::HSAKMT_STATUS_MEMORY_NOT_REGISTERED,
                format!("no doorbell page at {addr:#x}"),
            )
        })?;
        buf.unmap().map_err(err("doorbell unmapping"))?;
        drop(buf);
        Ok(())
    }

    fn alloc_svm(&self, size: u64, node_id: u32) -> Result<u64, MemoryError> {
        let size = size.div_ceil(PAGE_SIZE) * PAGE_SIZE;
        let addr = self
            .fmm
            .map_anonymous_aligned(size, GPU_HUGE_PAGE)
            .map_err(err("SVM area"))?;
        let flags = SvmFlags::HOST_ACCESS | SvmFlags::GPU_EXEC | SvmFlags::GPU_ALWAYS_MAPPED;
        let attrs = [
            SvmAttr::PrefetchLoc(node_id),
            SvmAttr::PreferredLoc(Some(0)),
            SvmAttr::ClrFlags(SvmFlags::from_bits_retain(!flags.bits())),
            SvmAttr::SetFlags(flags),
            SvmAttr::Access(node_id),
            SvmAttr::Granularity(0xff),
        ];
        if let Err(e) = self.fmm.svm_set_attr(addr, size, &attrs) {
            // SAFETY: the area was mapped above and never handed out.
            let _ = unsafe { self.fmm.unmap_anonymous(addr, size) };
            return Err(err("SVM registration")(e));
        }
        lock(&self.svm).insert(addr, size);
        Ok(addr)
    }

    fn free_svm(&self, addr: u64) -> Result<(), MemoryError> {
        let size = lock(&self.svm).remove(&addr).ok_or_else(|| {
            MemoryError::new(
                HSAKMT_STATUS::HSAKMT_STATUS_MEMORY_NOT_REGISTERED,
                format!("no SVM area at {addr:#x}"),
            )
        })?;
        // SAFETY: the area came from `alloc_svm` and was just removed from
        // the table, so `write` can no longer reach it; its user (a queue)
        // is gone.
        unsafe { self.fmm.unmap_anonymous(addr, size) }.map_err(err("SVM area unmap"))
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemoryError> {
        {
            let svm = lock(&self.svm);
            if let Some((&start, &size)) = svm.range(..=addr).next_back() {
                if addr < start + size {
                    if (addr - start) + data.len() as u64 > size {
                        return Err(MemoryError::new(
                            HSAKMT_STATUS::HSAKMT_STATUS_INVALID_PARAMETER,
                            format!("write at {addr:#x} runs past its SVM area"),
                        ));
                    }
                    // SAFETY: `[addr, addr + len)` lies inside a private
                    // read-write anonymous mapping of ours that stays
                    // mapped while the table (locked here) lists it; no
                    // Rust reference points into it.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            data.as_ptr(),
                            addr as usize as *mut u8,
                            data.len(),
                        );
                    }
                    return Ok(());
                }
            }
        }
        let buffers = lock(&self.buffers);
        let (start, buf) = buffers.range(..=addr).next_back().ok_or_else(|| {
            MemoryError::new(
                HSAKMT_STATUS::HSAKMT_STATUS_INVALID_PARAMETER,
                format!("{addr:#x} is in no buffer"),
            )
        })?;
        buf.write(addr - start, data).map_err(err("CPU write"))
    }
}
