//! Share handles (`HsaSharedMemoryHandle`, 8 × u32).
//!
//! The C library fills the handle from the ROCm-only KFD IPC ioctls
//! (0x80/0x81), which upstream kernels (and kfd-sim) do not have. This crate
//! shares memory through dma-bufs instead (`AMDKFD_IOC_EXPORT_DMABUF` /
//! `AMDKFD_IOC_IMPORT_DMABUF`, KFD 1.12+), with a handle of its own design:
//!
//! | word | content |
//! |------|---------|
//! | 0 | magic `0x4b46_4453` ("SDFK") |
//! | 1 | exporter process id |
//! | 2 | dma-buf descriptor number in the exporter |
//! | 3 | low 32 bits of the dma-buf inode (detects a reused descriptor) |
//! | 4 | size in pages |
//! | 5 | `HsaMemFlags` of the exported memory |
//! | 6 | gpu_id the memory lives on |
//! | 7 | checksum: xor of words 0..=6, rotated |
//!
//! The exporting context keeps the dma-buf open for as long as the shared
//! memory lives. An importer in the same process duplicates the
//! descriptor; one in another process fetches it with `pidfd_getfd(2)`
//! (which needs ptrace permission over the exporter, as any cross-process
//! descriptor grab does).

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use kfd_sys::process;

use crate::error::{FmmError, Result};
use crate::flags::MemFlags;

const MAGIC: u32 = 0x4b46_4453;

/// A handle for [`crate::Fmm::share_memory`] /
/// [`crate::Fmm::register_shared_handle`]; the words are what the C ABI
/// passes as `HsaSharedMemoryHandle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ShareHandle(pub [u32; 8]);

fn checksum(w: &[u32; 8]) -> u32 {
    w[..7]
        .iter()
        .fold(0x9e37_79b9u32, |acc, &x| (acc ^ x).rotate_left(5))
}

impl ShareHandle {
    pub(crate) fn new(fd: BorrowedFd<'_>, pages: u32, flags: MemFlags, gpu_id: u32) -> Self {
        let mut w = [
            MAGIC,
            std::process::id(),
            fd.as_raw_fd() as u32,
            process::inode(fd).unwrap_or(0) as u32,
            pages,
            flags.bits(),
            gpu_id,
            0,
        ];
        w[7] = checksum(&w);
        ShareHandle(w)
    }

    /// Whether the first word is this format's magic: a handle without it
    /// was not made by [`crate::Fmm::share_memory`] at all (the newest C
    /// library's analogue: an invalid aperture type in the handle).
    pub fn has_magic(&self) -> bool {
        self.0[0] == MAGIC
    }

    /// Checks the magic and checksum.
    pub fn is_valid(&self) -> bool {
        self.0[0] == MAGIC && self.0[7] == checksum(&self.0)
    }

    /// Size of the shared memory in pages.
    pub fn size_in_pages(&self) -> u32 {
        self.0[4]
    }

    /// Flags of the shared memory.
    pub fn mem_flags(&self) -> MemFlags {
        MemFlags::from_bits_retain(self.0[5])
    }

    /// The gpu_id the memory lives on.
    pub fn gpu_id(&self) -> u32 {
        self.0[6]
    }

    /// The exporting process.
    pub fn pid(&self) -> u32 {
        self.0[1]
    }

    /// Opens (a duplicate of) the exporter's dma-buf.
    pub(crate) fn open(&self) -> Result<OwnedFd> {
        if !self.is_valid() {
            return Err(FmmError::BadShareHandle("bad magic or checksum"));
        }
        let (pid, fd) = (self.0[1], self.0[2] as i32);
        let dup = if pid == std::process::id() {
            process::dup_number(fd)
        } else {
            let pidfd = process::pidfd_open(pid)
                .map_err(|_| FmmError::BadShareHandle("exporting process is gone"))?;
            process::pidfd_getfd(pidfd.as_fd(), fd)
        };
        let owned = dup.map_err(|_| FmmError::BadShareHandle("exported dma-buf is closed"))?;
        if process::inode(owned.as_fd()).ok().map(|i| i as u32) != Some(self.0[3]) {
            return Err(FmmError::BadShareHandle(
                "descriptor no longer refers to the shared buffer",
            ));
        }
        Ok(owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn round_trip_and_tamper() {
        let f = std::fs::File::open("/dev/null").unwrap();
        let h = ShareHandle::new(f.as_fd(), 4, MemFlags::HOST_ACCESS, 0x1234);
        assert!(h.is_valid());
        assert_eq!(h.size_in_pages(), 4);
        assert_eq!(h.gpu_id(), 0x1234);
        assert_eq!(h.mem_flags(), MemFlags::HOST_ACCESS);
        let dup = h.open().unwrap();
        assert_ne!(dup.as_raw_fd(), f.as_raw_fd());
        let mut bad = h;
        bad.0[4] = 5;
        assert!(!bad.is_valid());
        assert!(matches!(bad.open(), Err(FmmError::BadShareHandle(_))));
        drop(f);
        drop(dup);
        assert!(h.open().is_err(), "closed exporter descriptor");
    }
}
