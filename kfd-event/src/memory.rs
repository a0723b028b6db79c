//! What events and queues need from the context's memory manager.
//!
//! The event page (on dGPUs), queue EOP buffers, context save/restore
//! areas, the per-queue pointer page and GPU-mapped doorbell pages are all
//! buffers the memory manager (`kfd-fmm`) owns: it picks the virtual
//! address, allocates the buffer object, maps it for the CPU and into the
//! GPU VMs, and frees it. [`DeviceMemory`] is the narrow slice of that
//! manager this crate and `kfd-queue` call, so that both can be used (and
//! tested) independently of how the context wires its memory manager in.

use std::fmt;

use hsakmt_sys::HSAKMT_STATUS;

/// An allocation request with the meaning of the C library's
/// "executable, page-aligned GPU memory" helper: host-accessible unless
/// `device_local`, executable, 4 KiB pages, coarse-grained when
/// `device_local`, mapped to the GPU of `node_id` (or to every GPU when
/// `node_id` is 0) before it is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecAlloc {
    /// Size in bytes (the provider rounds it up to whole pages).
    pub size: u64,
    /// The GPU the buffer belongs to (0: system memory, no owning GPU).
    pub gpu_id: u32,
    /// The topology node to map to; 0 maps to every GPU of the context.
    pub node_id: u32,
    /// Pinned (non-paged) memory.
    pub non_paged: bool,
    /// VRAM (not host accessible) instead of system memory.
    pub device_local: bool,
    /// Uncached system memory.
    pub uncached: bool,
}

/// A failed memory operation: the status the C library would return and
/// what failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} ({status})")]
pub struct MemoryError {
    /// The `HSAKMT_STATUS` of the failure.
    pub status: HSAKMT_STATUS,
    /// A short description.
    pub message: String,
}

impl MemoryError {
    /// A failure with `status` and `message`.
    pub fn new(status: HSAKMT_STATUS, message: impl Into<String>) -> Self {
        MemoryError {
            status,
            message: message.into(),
        }
    }

    /// The provider does not offer this service.
    pub fn unsupported(what: &str) -> Self {
        MemoryError::new(
            HSAKMT_STATUS::HSAKMT_STATUS_NOT_SUPPORTED,
            format!("{what}: no device memory provider"),
        )
    }
}

/// The memory-manager services events and queues use.
///
/// Addresses are the CPU virtual address of a buffer, which is also its
/// GPU virtual address (the thunk's SVM apertures make them equal).
pub trait DeviceMemory: Send + Sync + fmt::Debug {
    /// Allocates and GPU-maps a buffer as described by `req`; returns its
    /// address.
    fn alloc_exec(&self, req: &ExecAlloc) -> Result<u64, MemoryError>;

    /// Unmaps from the GPUs and frees a buffer from
    /// [`DeviceMemory::alloc_exec`].
    fn free_exec(&self, addr: u64, size: u64) -> Result<(), MemoryError>;

    /// The kernel buffer-object handle of the buffer at `addr`
    /// (`fmm_get_handle`), used to hand the event page to the kernel.
    fn handle(&self, addr: u64) -> Option<u64>;

    /// The kernel took the buffer at `addr` (from
    /// [`DeviceMemory::alloc_exec`]) for the rest of its process: the dGPU
    /// event page, which it refuses to free while the process lives. The
    /// provider must not free it (nor unmap it) at teardown; it goes with
    /// the kernel process. The default does nothing.
    fn mark_kernel_held(&self, addr: u64) {
        let _ = addr;
    }

    /// Allocates `size` bytes of anonymous system memory (2 MiB aligned,
    /// not inherited by fork) and registers it with the kernel's SVM for
    /// node `node_id` as the newest C library does for a queue's context
    /// save/restore area: host accessible, GPU executable, always GPU
    /// mapped (KFD 1.11+), prefetched to `node_id`, preferred in system
    /// memory, accessible by `node_id`. Returns the address, writable
    /// through [`DeviceMemory::write`] until [`DeviceMemory::free_svm`].
    /// The default: not supported.
    fn alloc_svm(&self, size: u64, node_id: u32) -> Result<u64, MemoryError> {
        let _ = (size, node_id);
        Err(MemoryError::unsupported("alloc_svm"))
    }

    /// Unmaps memory from [`DeviceMemory::alloc_svm`] (the kernel drops its
    /// SVM range with the mapping). The default: not supported.
    fn free_svm(&self, addr: u64) -> Result<(), MemoryError> {
        let _ = addr;
        Err(MemoryError::unsupported("free_svm"))
    }

    /// Allocates a doorbell buffer object of `size` bytes for `gpu_id`,
    /// maps it for the CPU at a fresh address by `mmap` of the KFD
    /// descriptor at `mmap_offset`, and maps it into that GPU's VM.
    /// Returns the address.
    fn alloc_doorbell(&self, gpu_id: u32, size: u64, mmap_offset: u64) -> Result<u64, MemoryError>;

    /// Unmaps and frees a doorbell buffer from
    /// [`DeviceMemory::alloc_doorbell`].
    fn free_doorbell(&self, addr: u64) -> Result<(), MemoryError>;

    /// Copies `data` into host-accessible memory at `addr`, which must lie
    /// inside one buffer from [`DeviceMemory::alloc_exec`].
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemoryError>;
}

/// A provider with no memory at all: every request fails with
/// `NOT_SUPPORTED`.
///
/// With it, [`crate::Events`] falls back to the kernel-allocated event page
/// (the APU path, which works on every KFD) and queue creation fails
/// unless the queue needs no buffers.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoDeviceMemory;

impl DeviceMemory for NoDeviceMemory {
    fn alloc_exec(&self, _req: &ExecAlloc) -> Result<u64, MemoryError> {
        Err(MemoryError::unsupported("alloc_exec"))
    }

    fn free_exec(&self, _addr: u64, _size: u64) -> Result<(), MemoryError> {
        Err(MemoryError::unsupported("free_exec"))
    }

    fn handle(&self, _addr: u64) -> Option<u64> {
        None
    }

    fn alloc_doorbell(&self, _gpu_id: u32, _size: u64, _off: u64) -> Result<u64, MemoryError> {
        Err(MemoryError::unsupported("alloc_doorbell"))
    }

    fn free_doorbell(&self, _addr: u64) -> Result<(), MemoryError> {
        Err(MemoryError::unsupported("free_doorbell"))
    }

    fn write(&self, _addr: u64, _data: &[u8]) -> Result<(), MemoryError> {
        Err(MemoryError::unsupported("write"))
    }
}
