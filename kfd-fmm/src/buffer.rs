//! RAII buffers.

use std::sync::Arc;

use crate::error::{FmmError, Result};
use crate::flags::{MemFlags, MemMapFlags};
use crate::fmm::Fmm;

/// An allocation that is unmapped from GPUs and freed when dropped.
///
/// Built on the address-based calls of [`Fmm`]; holds the memory manager
/// alive through an `Arc`.
#[derive(Debug)]
pub struct Buffer {
    fmm: Arc<Fmm>,
    addr: u64,
    size: u64,
    flags: MemFlags,
    cpu: bool,
    owned: bool,
}

impl Fmm {
    /// Allocates a [`Buffer`] (see [`Fmm::alloc_memory_align`]).
    pub fn alloc_buffer(
        self: &Arc<Self>,
        node: u32,
        size: u64,
        align: u64,
        flags: MemFlags,
    ) -> Result<Buffer> {
        let addr = self.alloc_memory_align(node, size, align, flags, None)?;
        let cpu = self.cpu_accessible(addr);
        Ok(Buffer {
            fmm: self.clone(),
            addr,
            size,
            flags,
            cpu,
            owned: true,
        })
    }
}

impl Buffer {
    /// The (CPU and, except for userptrs, GPU) address.
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// The size requested.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The allocation flags.
    pub fn flags(&self) -> MemFlags {
        self.flags
    }

    /// The memory manager this buffer belongs to.
    pub fn fmm(&self) -> &Arc<Fmm> {
        &self.fmm
    }

    /// True when the CPU can read and write the buffer.
    pub fn is_cpu_accessible(&self) -> bool {
        self.cpu
    }

    /// A raw pointer to the buffer, or `None` if the CPU cannot access it.
    /// Reads and writes through it race with the GPU like any shared memory.
    pub fn as_ptr(&self) -> Option<*mut u8> {
        self.cpu.then_some(self.addr as *mut u8)
    }

    /// Maps the buffer to all GPUs (or the ones it is registered to).
    pub fn map(&self) -> Result<u64> {
        self.fmm.map_to_gpu(self.addr, self.size)
    }

    /// Maps the buffer to exactly the GPUs of `nodes`.
    pub fn map_to_nodes(&self, nodes: &[u32]) -> Result<u64> {
        self.fmm
            .map_to_gpu_nodes(self.addr, self.size, nodes, MemMapFlags::empty())
    }

    /// Unmaps the buffer from every GPU.
    pub fn unmap(&self) -> Result<()> {
        self.fmm.unmap_from_gpu(self.addr)
    }

    fn check(&self, offset: u64, len: usize) -> Result<()> {
        if !self.cpu {
            return Err(FmmError::NotSupported("the CPU cannot access this buffer"));
        }
        if offset
            .checked_add(len as u64)
            .map_or(true, |end| end > self.size)
        {
            return Err(FmmError::RangeOutsideObject {
                addr: self.addr + offset,
                size: len as u64,
            });
        }
        Ok(())
    }

    /// Copies `data` into the buffer at `offset`.
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.check(offset, data.len())?;
        // SAFETY: the range is inside a live, CPU-writable mapping this
        // buffer owns (checked above); no Rust reference aliases it.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                (self.addr + offset) as *mut u8,
                data.len(),
            )
        };
        Ok(())
    }

    /// Copies from the buffer at `offset` into `out`.
    pub fn read(&self, offset: u64, out: &mut [u8]) -> Result<()> {
        self.check(offset, out.len())?;
        // SAFETY: as in `write`, for reading.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (self.addr + offset) as *const u8,
                out.as_mut_ptr(),
                out.len(),
            )
        };
        Ok(())
    }

    /// Gives up ownership without freeing; returns the address (free it
    /// with [`Fmm::free_memory`]).
    pub fn into_raw(mut self) -> u64 {
        self.owned = false;
        self.addr
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let _ = self.fmm.unmap_from_gpu(self.addr);
        let _ = self.fmm.free_memory(self.addr);
    }
}
