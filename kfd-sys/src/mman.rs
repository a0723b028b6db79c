//! Memory mapping of device descriptors (KFD and render nodes).
//!
//! Buffer objects, doorbell pages, the event page and the MMIO remap page
//! are reached by `mmap` of a device descriptor at an offset the driver
//! returned. These are the only mapping primitives the crates above use.

use std::os::fd::{AsRawFd, BorrowedFd};

use crate::Errno;

bitflags::bitflags! {
    /// Page protection for [`mmap`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Prot: i32 {
        /// Readable.
        const READ = libc::PROT_READ;
        /// Writable.
        const WRITE = libc::PROT_WRITE;
        /// Executable.
        const EXEC = libc::PROT_EXEC;
    }
}

bitflags::bitflags! {
    /// Mapping flags for [`mmap`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct MapFlags: i32 {
        /// `MAP_SHARED`.
        const SHARED = libc::MAP_SHARED;
        /// `MAP_PRIVATE`.
        const PRIVATE = libc::MAP_PRIVATE;
        /// `MAP_FIXED`: place the mapping exactly at the given address.
        const FIXED = libc::MAP_FIXED;
        /// `MAP_ANONYMOUS`.
        const ANONYMOUS = libc::MAP_ANONYMOUS;
        /// `MAP_NORESERVE`.
        const NORESERVE = libc::MAP_NORESERVE;
    }
}

/// Maps `len` bytes of `fd` (or anonymous memory when `fd` is `None`) at
/// `offset`, returning the address.
///
/// # Safety
///
/// With [`MapFlags::FIXED`], any existing mapping in `[addr, addr+len)` is
/// replaced: the caller must own that range (typically a reservation it
/// made itself) and no Rust reference may point into it.
pub unsafe fn mmap(
    addr: usize,
    len: usize,
    prot: Prot,
    flags: MapFlags,
    fd: Option<BorrowedFd<'_>>,
    offset: u64,
) -> Result<usize, Errno> {
    let raw_fd = fd.map_or(-1, |f| f.as_raw_fd());
    // Offsets past `off_t` cannot be expressed to the kernel (which would
    // answer EINVAL for the wrapped negative value anyway).
    let Ok(offset) = libc::off_t::try_from(offset) else {
        return Err(Errno::EINVAL);
    };
    // SAFETY: the caller upholds the MAP_FIXED contract; otherwise the
    // kernel picks a free range and no existing memory is affected.
    let p = unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            len,
            prot.bits(),
            flags.bits(),
            raw_fd,
            offset,
        )
    };
    if p == libc::MAP_FAILED {
        Err(Errno::last())
    } else {
        Ok(p as usize)
    }
}

/// Unmaps `[addr, addr+len)`.
///
/// # Safety
///
/// The caller must own the range and no Rust reference may point into it.
pub unsafe fn munmap(addr: usize, len: usize) -> Result<(), Errno> {
    // SAFETY: the caller owns the range.
    let r = unsafe { libc::munmap(addr as *mut libc::c_void, len) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// Reserves `len` bytes of address space with no access (PROT_NONE,
/// private, anonymous, no swap reservation) at a kernel-chosen address.
pub fn reserve(len: usize) -> Result<usize, Errno> {
    // SAFETY: no MAP_FIXED: the kernel picks an unused range.
    unsafe {
        mmap(
            0,
            len,
            Prot::empty(),
            MapFlags::PRIVATE | MapFlags::ANONYMOUS | MapFlags::NORESERVE,
            None,
            0,
        )
    }
}

/// `MPOL_PREFERRED`: allocate on the given node when it has memory.
pub const MPOL_PREFERRED: i32 = 1;
/// `MPOL_BIND`: allocate only on the given nodes.
pub const MPOL_BIND: i32 = 2;
/// `MPOL_F_STATIC_NODES`: the node mask is not remapped when the task's
/// allowed nodes change.
pub const MPOL_F_STATIC_NODES: i32 = 1 << 15;

/// `mbind(addr, len, mode, nodemask, maxnode, 0)`: sets the NUMA policy
/// of the pages in `[addr, addr+len)`. `nodemask` holds at least
/// `maxnode` bits (`EINVAL` otherwise, without a system call). It
/// changes where future pages of the range come from, never their
/// contents, so it is safe for any range.
pub fn mbind(
    addr: usize,
    len: usize,
    mode: i32,
    nodemask: &[u64],
    maxnode: u64,
) -> Result<(), Errno> {
    if (nodemask.len() as u64) * 64 < maxnode {
        return Err(Errno::EINVAL);
    }
    // SAFETY: the kernel reads at most `maxnode` bits of `nodemask`, which
    // the check above keeps inside the slice; no memory of ours is written.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr,
            len,
            mode,
            nodemask.as_ptr(),
            maxnode,
            0u32,
        )
    };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// Keeps a forked child from inheriting `[addr, addr + len)`
/// (`madvise(MADV_DONTFORK)`): device mappings would pin their buffers
/// in the child after the parent frees them. Only the fork behaviour of
/// the range changes; its contents are not touched.
pub fn dont_fork(addr: u64, len: u64) -> Result<(), Errno> {
    let len = usize::try_from(len).map_err(|_| Errno::EINVAL)?;
    // SAFETY: MADV_DONTFORK only marks the range's mappings; no memory is
    // read or written, whatever the range.
    let r = unsafe { libc::madvise(addr as usize as *mut libc::c_void, len, libc::MADV_DONTFORK) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// Whether the kernel has NUMA policies (libnuma's `numa_available`: a
/// `get_mempolicy` of the task's policy succeeds).
pub fn numa_available() -> bool {
    // SAFETY: with NULL mode and mask pointers the kernel writes nothing.
    let r = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            std::ptr::null_mut::<i32>(),
            std::ptr::null_mut::<u64>(),
            0u64,
            0usize,
            0u64,
        )
    };
    r >= 0
}

/// True if every page of `[addr, addr + len)` is mapped
/// (`mincore(2)`, which fails with `ENOMEM` on a hole); false for a hole,
/// an unaligned start or a range that wraps.
pub fn all_mapped(addr: u64, len: u64) -> bool {
    /// Pages asked about per call (one byte of answer each).
    const CHUNK: usize = 4096;
    let page = page_size() as u64;
    if addr % page != 0 || addr.checked_add(len).is_none() {
        return false;
    }
    let mut vec = [0u8; CHUNK];
    let (mut at, end) = (addr, addr + len);
    while at < end {
        let n = (end - at).min(CHUNK as u64 * page);
        // SAFETY: mincore only reads the page tables of the range and
        // writes one byte per page of it (at most CHUNK) into `vec`.
        let r = unsafe {
            libc::mincore(
                at as usize as *mut libc::c_void,
                n as usize,
                vec.as_mut_ptr(),
            )
        };
        if r != 0 {
            return false;
        }
        at += n;
    }
    true
}

/// The page the KFD ABI is written in: 4 KiB.
///
/// Buffer sizes, GPU virtual addresses, mmap offsets and queue areas the
/// driver accepts are multiples of it, and so is the GPUs' page table
/// granule; it is also the x86-64 CPU page. It is a constant of the ABI,
/// not of the running system: [`page_size`] asks the kernel for that one.
pub const PAGE_SIZE: u64 = 4096;

/// The system page size (asked once: every mapping checks its
/// alignment against it, and `sysconf` is a call into libc each time).
pub fn page_size() -> usize {
    static PAGE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let known = PAGE.load(std::sync::atomic::Ordering::Relaxed);
    if known != 0 {
        return known;
    }
    // SAFETY: sysconf has no memory effects.
    let r = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let page = if r <= 0 {
        PAGE_SIZE as usize
    } else {
        r as usize
    };
    PAGE.store(page, std::sync::atomic::Ordering::Relaxed);
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_past_off_t_are_einval() {
        // SAFETY: no MAP_FIXED; the call fails before reaching the kernel.
        let r = unsafe {
            mmap(
                0,
                page_size(),
                Prot::READ,
                MapFlags::PRIVATE | MapFlags::ANONYMOUS,
                None,
                1 << 63,
            )
        };
        assert_eq!(r, Err(Errno::EINVAL));
    }

    #[test]
    fn mapped_ranges_and_holes() {
        let page = page_size() as u64;
        let base = reserve(3 * page as usize).unwrap() as u64;
        assert!(all_mapped(base, 3 * page));
        // SAFETY: the middle page of our own reservation.
        unsafe { munmap((base + page) as usize, page as usize) }.unwrap();
        assert!(all_mapped(base, page));
        assert!(!all_mapped(base, 3 * page), "a hole in the middle");
        assert!(!all_mapped(base + 1, page), "unaligned");
        assert!(!all_mapped(u64::MAX - page, 2 * page), "wraps");
        assert_eq!(dont_fork(base, page), Ok(()));
        assert_eq!(dont_fork(base + page, page), Err(Errno::ENOMEM));
        // SAFETY: the rest of our own reservation.
        unsafe { munmap(base as usize, 3 * page as usize) }.unwrap();
    }

    #[test]
    fn reserve_and_replace() {
        let len = 4 * page_size();
        let base = reserve(len).unwrap();
        assert_eq!(base % page_size(), 0);
        // SAFETY: we own the reservation we just made.
        let p = unsafe {
            mmap(
                base,
                page_size(),
                Prot::READ | Prot::WRITE,
                MapFlags::PRIVATE | MapFlags::ANONYMOUS | MapFlags::FIXED,
                None,
                0,
            )
        }
        .unwrap();
        assert_eq!(p, base);
        // SAFETY: we own the whole reservation.
        unsafe { munmap(base, len) }.unwrap();
    }
}
