//! The buffers the other sub-contexts of a context get from its memory
//! manager: the dGPU event page, the queue buffers (the per-queue page,
//! EOP buffers, context save/restore areas) and the GPU-mapped doorbell
//! pages.
//!
//! Each is an RAII value the sub-context holds directly: a [`Buffer`]
//! (tracked once, in this manager's object index, and released only by
//! its holder) or an [`SvmArea`] (anonymous memory this manager does not
//! index; the kernel tracks its SVM range).

use std::sync::Arc;

use kfd_sys::mapping::Mapping;

use crate::buffer::Buffer;
use crate::error::{FmmError, MemoryKind, Result};
use crate::flags::{MemFlags, MemMapFlags, SvmAttr, SvmFlags};
use crate::fmm::Fmm;
use crate::va::checked_align_up;
use crate::PAGE_SIZE;

/// Alignment of SVM areas (the GPU's huge page).
const SVM_AREA_ALIGN: u64 = 2 << 20;

/// `size` rounded up to whole pages (a size that cannot be is more than
/// the address space has: too big for memory of `kind`).
fn whole_pages(size: u64, kind: MemoryKind) -> Result<u64> {
    checked_align_up(size, PAGE_SIZE).ok_or(FmmError::TooBig { kind })
}

/// What the C library's "executable, page-aligned GPU memory" helper
/// allocates: host-accessible unless `device_local`, executable, 4 KiB
/// pages, coarse-grained when `device_local`, mapped to the GPU of
/// `node_id` (or to every GPU when `node_id` is 0) before it is
/// returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecAlloc {
    /// Size in bytes (rounded up to whole pages).
    pub size: u64,
    /// The topology node to allocate on and map to; 0: system memory,
    /// mapped to every GPU of the context.
    pub node_id: u32,
    /// Pinned (non-paged) memory.
    pub non_paged: bool,
    /// VRAM (not host accessible) instead of system memory.
    pub device_local: bool,
    /// Uncached system memory.
    pub uncached: bool,
}

impl ExecAlloc {
    /// The allocation flags of the request.
    fn flags(&self) -> MemFlags {
        let mut flags = MemFlags::EXECUTE_ACCESS;
        if self.non_paged {
            flags |= MemFlags::NON_PAGED;
        }
        if self.device_local {
            flags |= MemFlags::COARSE_GRAIN;
        } else {
            flags |= MemFlags::HOST_ACCESS;
            if self.uncached {
                flags |= MemFlags::UNCACHED;
            }
            if self.node_id != 0 {
                // System memory allocated through the GPU it serves.
                flags |= MemFlags::GTT_ACCESS;
            }
        }
        flags
    }
}

impl Fmm {
    /// Allocates and GPU-maps a buffer as `req` describes; unmapped and
    /// freed when the returned buffer drops.
    pub fn alloc_exec(self: &Arc<Self>, req: &ExecAlloc) -> Result<Buffer> {
        let kind = if req.device_local {
            MemoryKind::Device
        } else {
            MemoryKind::System
        };
        let size = whole_pages(req.size, kind)?;
        let buf = self.alloc_buffer(req.node_id, size, 0, req.flags())?;
        if req.node_id != 0 {
            self.map_to_gpu_nodes(buf.addr(), buf.size(), &[req.node_id], MemMapFlags::empty())?;
        } else {
            buf.map()?;
        }
        Ok(buf)
    }

    /// The doorbell page(s) of the GPU `gpu_id` as a GPU-mapped buffer
    /// ([`Fmm::alloc_doorbell_buffer`] of its node, `size` bytes at the
    /// KFD mmap offset `mmap_offset`): mapped into every GPU's VM with
    /// [`crate::FmmRules::doorbells_on_all_gpus`] (5.2.3 passes no node
    /// list), else into its own GPU's.
    pub fn alloc_doorbell_page(
        self: &Arc<Self>,
        gpu_id: u32,
        size: u64,
        mmap_offset: u64,
    ) -> Result<Buffer> {
        let node = self
            .nodes()
            .iter()
            .position(|n| n.gpu_id == gpu_id && gpu_id != 0)
            .ok_or(FmmError::InvalidNode(gpu_id))? as u32;
        let buf = self.alloc_doorbell_buffer(node, size, mmap_offset)?;
        if self.options().rules.doorbells_on_all_gpus {
            buf.map()?;
        } else {
            buf.map_to_nodes(&[node])?;
        }
        Ok(buf)
    }

    /// Maps `size` bytes (rounded up to pages) of anonymous memory, 2 MiB
    /// aligned and not inherited by fork, and registers it with the
    /// kernel's SVM for node `node_id` as the newest C library does for a
    /// queue's context save/restore area: host accessible, GPU
    /// executable, always GPU mapped (KFD 1.11+), prefetched to
    /// `node_id`, preferred in system memory, accessible by `node_id`.
    /// Unmapped (and so dropped from the kernel's SVM) when the area
    /// drops.
    pub fn alloc_svm_area(&self, size: u64, node_id: u32) -> Result<SvmArea> {
        let size = whole_pages(size, MemoryKind::System)?;
        let area = SvmArea {
            memory: self.map_anonymous_aligned(size, SVM_AREA_ALIGN)?,
        };
        let flags = SvmFlags::HOST_ACCESS | SvmFlags::GPU_EXEC | SvmFlags::GPU_ALWAYS_MAPPED;
        let attrs = [
            SvmAttr::PrefetchLoc(node_id),
            SvmAttr::PreferredLoc(Some(0)),
            SvmAttr::ClrFlags(SvmFlags::from_bits_retain(!flags.bits())),
            SvmAttr::SetFlags(flags),
            SvmAttr::Access(node_id),
            SvmAttr::Granularity(0xff),
        ];
        self.svm_set_attr(area.addr(), size, &attrs)?;
        Ok(area)
    }
}

/// Anonymous read-write memory registered with the kernel's SVM
/// ([`Fmm::alloc_svm_area`]); unmapped on drop.
#[derive(Debug)]
pub struct SvmArea {
    memory: Mapping,
}

impl SvmArea {
    /// The (CPU and GPU) address.
    pub fn addr(&self) -> u64 {
        self.memory.addr()
    }

    /// The size in bytes (whole pages).
    pub fn size(&self) -> u64 {
        self.memory.len()
    }

    /// The memory, for the kernel requests that write into it.
    pub fn mapping(&self) -> &Mapping {
        &self.memory
    }

    /// Copies `data` into the area at `offset`.
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.memory
            .write(offset, data)
            .map_err(|_| FmmError::RangeOutsideObject {
                addr: self.addr().wrapping_add(offset),
                size: data.len() as u64,
            })
    }
}
