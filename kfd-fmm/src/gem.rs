//! GEM buffers of a render node: what libdrm_amdgpu calls an `amdgpu_bo`,
//! and what the newest thunk's DRM-handle layer (`hsaKmtHandleImport`,
//! `hsaKmtMemoryVaMap`, ...) hands out as an `HsaMemoryObjectHandle`.
//!
//! A [`GemBuffer`] is one GEM handle on one render-node file, made by
//! importing a dma-buf (`DRM_IOCTL_PRIME_FD_TO_HANDLE`); it closes the
//! handle (`DRM_IOCTL_GEM_CLOSE`) and unmaps its CPU mapping when dropped.
//! The render node gives the same handle for the same buffer every time,
//! so a caller that imports a buffer twice must share one [`GemBuffer`]
//! (the hsakmt border counts references, as libdrm_amdgpu does).
//!
//! The CPU mapping is a shared mapping of a dma-buf of the buffer
//! (amdgpu's dma-bufs support `mmap`), not of the render node at the
//! `DRM_AMDGPU_GEM_MMAP` offset, so it needs no render-node `mmap`;
//! [`GemBuffer::mmap_offset`] still reports that offset
//! (`hsaKmtMemoryGetCpuAddr` returns it).

use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::{Arc, Mutex};

use kfd_sys::drm::*;
use kfd_sys::mapping::Mapping;
use kfd_sys::mman::Prot;
use kfd_sys::DeviceFile;

use crate::error::{FmmError, Result};
use crate::lock;

/// GPU access of a [`GemBuffer::va_map`] mapping (`AMDGPU_VM_PAGE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VaAccess {
    /// No access bits.
    None,
    /// Readable.
    Read,
    /// Writeable.
    Write,
    /// Readable and writeable.
    ReadWrite,
}

impl VaAccess {
    fn flags(self) -> u32 {
        match self {
            VaAccess::None => 0,
            VaAccess::Read => AMDGPU_VM_PAGE_READABLE,
            VaAccess::Write => AMDGPU_VM_PAGE_WRITEABLE,
            VaAccess::ReadWrite => AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_WRITEABLE,
        }
    }
}

/// One GEM handle on a render-node file (see the module docs).
#[derive(Debug)]
pub struct GemBuffer {
    file: Arc<DeviceFile>,
    handle: u32,
    size: u64,
    /// The CPU mapping, once made (unmapped on drop).
    cpu: Mutex<Option<Mapping>>,
    /// Whether dropping closes the GEM handle (not for a duplicate).
    owns_handle: bool,
}

impl GemBuffer {
    /// Imports the dma-buf `fd` on render-node file `file`
    /// (`PRIME_FD_TO_HANDLE`); its size is the dma-buf's.
    pub fn import_dmabuf(file: Arc<DeviceFile>, fd: BorrowedFd<'_>) -> Result<GemBuffer> {
        use std::os::fd::AsRawFd;
        let size = kfd_sys::process::file_size(fd)
            .map_err(|_| FmmError::BadShareHandle("not a dma-buf: its size is unknown"))?;
        let mut args = drm_prime_handle {
            fd: fd.as_raw_fd(),
            ..Default::default()
        };
        file.ioctl_plain(DRM_IOCTL_PRIME_FD_TO_HANDLE, &mut args)
            .map_err(FmmError::ioctl(DRM_IOCTL_PRIME_FD_TO_HANDLE.info()))?;
        Ok(GemBuffer {
            file,
            handle: args.handle,
            size,
            cpu: Mutex::new(None),
            owns_handle: true,
        })
    }

    /// Drops a second import of a buffer this file already has a handle
    /// for (same [`GemBuffer::handle`]) without closing that handle, which
    /// the first import still owns.
    pub fn into_duplicate(mut self) {
        self.owns_handle = false;
    }

    /// The render-node file the handle lives in.
    pub fn file(&self) -> &Arc<DeviceFile> {
        &self.file
    }

    /// The GEM handle (what `amdgpu_bo_export(.., kms, ..)` gives).
    pub fn handle(&self) -> u32 {
        self.handle
    }

    /// The buffer's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// A new dma-buf descriptor of the buffer (`PRIME_HANDLE_TO_FD`,
    /// close-on-exec, read-write).
    pub fn export_dmabuf(&self) -> Result<OwnedFd> {
        prime_handle_to_fd(&self.file, self.handle, DRM_CLOEXEC | DRM_RDWR)
            .map_err(FmmError::ioctl(DRM_IOCTL_PRIME_HANDLE_TO_FD.info()))
    }

    /// The buffer's UMD metadata words (`GEM_METADATA` GET; empty when
    /// none was set).
    pub fn metadata(&self) -> Result<Vec<u32>> {
        let mut args = drm_amdgpu_gem_metadata {
            handle: self.handle,
            op: AMDGPU_GEM_METADATA_OP_GET_METADATA,
            ..Default::default()
        };
        self.file
            .ioctl_plain(DRM_IOCTL_AMDGPU_GEM_METADATA, &mut args)
            .map_err(FmmError::ioctl(DRM_IOCTL_AMDGPU_GEM_METADATA.info()))?;
        let words = (args.data.data_size_bytes as usize / 4).min(args.data.data.len());
        Ok(args.data.data[..words].to_vec())
    }

    /// Replaces the buffer's UMD metadata (`GEM_METADATA` SET; at most 64
    /// words, more → `InvalidArgument`).
    pub fn set_metadata(&self, words: &[u32]) -> Result<()> {
        let mut args = drm_amdgpu_gem_metadata {
            handle: self.handle,
            op: AMDGPU_GEM_METADATA_OP_SET_METADATA,
            ..Default::default()
        };
        let slot = args
            .data
            .data
            .get_mut(..words.len())
            .ok_or(FmmError::InvalidArgument("more than 64 metadata words"))?;
        slot.copy_from_slice(words);
        args.data.data_size_bytes = (words.len() * 4) as u32;
        self.file
            .ioctl_plain(DRM_IOCTL_AMDGPU_GEM_METADATA, &mut args)
            .map_err(FmmError::ioctl(DRM_IOCTL_AMDGPU_GEM_METADATA.info()))?;
        Ok(())
    }

    fn va(&self, operation: u32, offset: u64, size: u64, addr: u64, flags: u32) -> Result<()> {
        let mut args = drm_amdgpu_gem_va {
            handle: self.handle,
            operation,
            flags,
            va_address: addr,
            offset_in_bo: offset,
            map_size: size,
            ..Default::default()
        };
        self.file
            .ioctl_plain(DRM_IOCTL_AMDGPU_GEM_VA, &mut args)
            .map_err(FmmError::ioctl(DRM_IOCTL_AMDGPU_GEM_VA.info()))?;
        Ok(())
    }

    /// Maps `[offset, offset+size)` of the buffer at GPU address `addr`
    /// of the render node's VM (`GEM_VA` MAP). The kernel checks the
    /// range and alignment.
    pub fn va_map(&self, offset: u64, size: u64, addr: u64, access: VaAccess) -> Result<()> {
        self.va(AMDGPU_VA_OP_MAP, offset, size, addr, access.flags())
    }

    /// Undoes a [`GemBuffer::va_map`] (`GEM_VA` UNMAP).
    pub fn va_unmap(&self, offset: u64, size: u64, addr: u64) -> Result<()> {
        self.va(AMDGPU_VA_OP_UNMAP, offset, size, addr, 0)
    }

    /// The render node's mmap offset of the buffer (`GEM_MMAP`).
    pub fn mmap_offset(&self) -> Result<u64> {
        gem_mmap_offset(&self.file, self.handle)
            .map_err(FmmError::ioctl(DRM_IOCTL_AMDGPU_GEM_MMAP.info()))
    }

    /// The CPU address of the whole buffer, mapped read-write and shared
    /// on first use (the same address afterwards) and unmapped on drop.
    pub fn cpu_map(&self) -> Result<usize> {
        use std::os::fd::AsFd;
        let mut cpu = lock(&self.cpu);
        if let Some(m) = &*cpu {
            return Ok(m.addr() as usize);
        }
        if self.size == 0 {
            return Err(FmmError::InvalidArgument("empty buffer"));
        }
        let dmabuf = self.export_dmabuf()?;
        let m = Mapping::file(dmabuf.as_fd(), self.size, Prot::READ | Prot::WRITE, 0).map_err(
            |errno| FmmError::Mmap {
                what: "dma-buf",
                errno,
            },
        )?;
        let addr = m.addr() as usize;
        *cpu = Some(m);
        Ok(addr)
    }
}

impl Drop for GemBuffer {
    fn drop(&mut self) {
        // The C caller was told the CPU mapping dies with the handle.
        drop(lock(&self.cpu).take());
        if !self.owns_handle {
            return;
        }
        let mut args = drm_gem_close {
            handle: self.handle,
            ..Default::default()
        };
        let _ = self.file.ioctl_plain(DRM_IOCTL_GEM_CLOSE, &mut args);
    }
}
