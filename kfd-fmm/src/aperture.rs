//! Apertures: the address ranges memory objects are placed in.
//!
//! Two kinds, as in the C thunk:
//! - **reserved**: a range this context reserved with `PROT_NONE` (or a
//!   non-canonical range the CPU never touches); a [`VaAllocator`] hands out
//!   addresses inside it;
//! - **mmap-managed**: on GPUs whose VM covers the whole canonical user
//!   address space (gfx9+, `gpuvm_limit >= 2^47-1`) the kernel's `mmap` is
//!   the allocator: each allocation reserves a fresh `PROT_NONE` range.
//!
//! Each aperture has its own lock (reserved kind only: the mmap kind needs
//! none), held for the duration of one B-tree operation.

use std::sync::Mutex;

use kfd_sys::mman::{self, MapFlags, Prot};
use kfd_sys::Errno;

use crate::error::{FmmError, Result};
use crate::lock;
use crate::va::{align_up, checked_align_up, VaAllocator};
use crate::{MAX_ALLOC_SIZE, PAGE_SIZE};

/// Alignment above which big buffers are not aligned further (2 MiB, the
/// GPU huge page).
pub(crate) const GPU_HUGE_PAGE_SIZE: u64 = 2 << 20;

#[derive(Debug)]
enum Mode {
    Reserved {
        va: Mutex<VaAllocator>,
    },
    /// Each allocation is a reservation of its own, exactly its size: the
    /// guard pages are placed around it and given back with the alignment
    /// padding, as the C library does.
    Mmap,
}

/// One aperture.
#[derive(Debug)]
pub(crate) struct Aperture {
    pub base: u64,
    pub limit: u64,
    /// Minimum alignment of allocations.
    pub align: u64,
    /// Guard bytes left after each allocation.
    pub guard: u64,
    /// CPU mappings exist in this aperture (SVM apertures).
    pub cpu_accessible: bool,
    /// Largest alignment big buffers are rounded to.
    pub max_align: u64,
    mode: Mode,
}

impl Aperture {
    /// A reserved aperture over `[base, limit]`.
    pub fn reserved(
        base: u64,
        limit: u64,
        align: u64,
        guard_pages: u32,
        cpu_accessible: bool,
    ) -> Self {
        Aperture {
            base,
            limit,
            align: align.max(PAGE_SIZE),
            guard: guard_pages as u64 * PAGE_SIZE,
            cpu_accessible,
            max_align: GPU_HUGE_PAGE_SIZE,
            mode: Mode::Reserved {
                va: Mutex::new(VaAllocator::new(base, limit)),
            },
        }
    }

    /// An mmap-managed aperture over `[base, limit]`.
    pub fn mmap(base: u64, limit: u64, align: u64, guard_pages: u32, align_order: u32) -> Self {
        Aperture {
            base,
            limit,
            align: align.max(PAGE_SIZE),
            guard: guard_pages as u64 * PAGE_SIZE,
            cpu_accessible: true,
            max_align: PAGE_SIZE << align_order.min(30),
            mode: Mode::Mmap,
        }
    }

    fn effective_align(&self, size: u64, align: u64) -> u64 {
        let mut align = align.max(self.align);
        // Big buffers get the next power-of-two alignment (up to the
        // aperture maximum) for the GPU's fragment optimisations.
        while align < self.max_align && size >= align << 1 {
            align <<= 1;
        }
        align
    }

    /// Allocates `size` bytes, at `fixed` if given, else aligned to `align`.
    ///
    /// Sizes above [`MAX_ALLOC_SIZE`] (no aperture is that big) fail with
    /// [`FmmError::OutOfMemory`] before any address arithmetic, so no sum
    /// of a caller's size with padding or guards can wrap.
    pub fn allocate(&self, fixed: Option<u64>, size: u64, align: u64) -> Result<u64> {
        if size == 0 {
            return Err(FmmError::InvalidArgument("zero-sized address range"));
        }
        if size > MAX_ALLOC_SIZE {
            return Err(FmmError::OutOfMemory(
                "size exceeds the virtual address space",
            ));
        }
        match &self.mode {
            Mode::Reserved { va } => {
                let align = self.effective_align(size, align);
                let va_size = size + self.guard;
                let mut va = lock(va);
                let got = match fixed {
                    Some(addr) => va.alloc_fixed(addr, va_size).then_some(addr),
                    None => va.alloc(va_size, align),
                };
                got.ok_or(FmmError::OutOfMemory(
                    "no free virtual address range in the aperture",
                ))
            }
            Mode::Mmap => match fixed {
                Some(addr) => self.mmap_fixed(addr, size),
                None => self.mmap_aligned(size, align),
            },
        }
    }

    fn mmap_fixed(&self, addr: u64, size: u64) -> Result<u64> {
        if addr % PAGE_SIZE != 0 {
            return Err(FmmError::UnalignedAddress(addr));
        }
        let in_range = addr
            .checked_add(size - 1)
            .is_some_and(|last| addr >= self.base && last <= self.limit);
        if !in_range {
            return Err(FmmError::OutOfMemory("fixed address outside the aperture"));
        }
        let flags = MapFlags::PRIVATE
            | MapFlags::ANONYMOUS
            | MapFlags::NORESERVE
            | MapFlags::from_bits_retain(libc::MAP_FIXED_NOREPLACE);
        // SAFETY: without MAP_FIXED the kernel never replaces an existing
        // mapping (MAP_FIXED_NOREPLACE fails with EEXIST instead; kernels
        // that ignore it treat the address as a hint, checked below).
        let got = unsafe { mman::mmap(addr as usize, size as usize, Prot::empty(), flags, None, 0) }
            .map_err(|_| FmmError::OutOfMemory("fixed address range is in use"))?
            as u64;
        if got != addr {
            // SAFETY: `got` is the range the kernel just created for us.
            let _ = unsafe { mman::munmap(got as usize, size as usize) };
            return Err(FmmError::OutOfMemory("fixed address range is in use"));
        }
        Ok(addr)
    }

    /// Reserves `size` bytes aligned to (at least) `align`, at least
    /// `guard` bytes away from the start of one padded `PROT_NONE`
    /// reservation, which is then trimmed to `[aligned, aligned + size)`:
    /// the padding and the guard pages on both sides are unmapped, as the
    /// C library's `mmap_aperture_allocate_aligned` does (keeping the
    /// guards reserved cost two more VMAs per live object and halved the
    /// objects a process can hold under `vm.max_map_count`).
    fn mmap_aligned(&self, size: u64, align: u64) -> Result<u64> {
        let too_big = FmmError::OutOfMemory("size exceeds the virtual address space");
        let align = self.effective_align(size, align);
        // align >= PAGE_SIZE, so the sum is at least a page.
        let padded = size
            .checked_add(align)
            .and_then(|v| v.checked_add(2 * self.guard))
            .map(|v| v - PAGE_SIZE)
            .filter(|&v| v <= MAX_ALLOC_SIZE)
            .ok_or(too_big)?;
        let raw = mman::reserve(padded as usize)
            .map_err(|_| FmmError::OutOfMemory("mmap of address space failed"))?
            as u64;
        // The kernel placed `padded` bytes at `raw`, so `raw + padded`
        // fits; `aligned` and `end + guard` lie inside (raw is page
        // aligned, so rounding up adds at most `align - PAGE_SIZE`), which
        // the checks below confirm before anything is unmapped.
        let raw_end = raw + padded;
        let aligned = checked_align_up(raw + self.guard, align).unwrap_or(u64::MAX);
        let end = aligned.saturating_add(size);
        if aligned < self.base || end > raw_end || end - 1 > self.limit {
            // SAFETY: the whole padded range is ours, just reserved.
            let _ = unsafe { mman::munmap(raw as usize, padded as usize) };
            return Err(FmmError::OutOfMemory(
                "mmap returned an address outside the aperture",
            ));
        }
        if aligned > raw {
            // SAFETY: leading alignment padding and guard of our own fresh
            // reservation, before the object.
            let _ = unsafe { mman::munmap(raw as usize, (aligned - raw) as usize) };
        }
        if raw_end > end {
            // SAFETY: trailing guard and padding of our own fresh
            // reservation, after the object.
            let _ = unsafe { mman::munmap(end as usize, (raw_end - end) as usize) };
        }
        Ok(aligned)
    }

    /// Returns `[addr, addr+size)` (as allocated) to the aperture. With
    /// `had_cpu_view`, a CPU mapping made in the range is replaced by an
    /// inaccessible reservation first (reserved kind; the mmap kind always
    /// unmaps).
    ///
    /// # Safety
    ///
    /// The range must have been returned by [`Aperture::allocate`] with
    /// this size and no longer be used; no Rust reference may point into it.
    pub unsafe fn release(&self, addr: u64, size: u64, had_cpu_view: bool) {
        match &self.mode {
            Mode::Reserved { va } => {
                if self.cpu_accessible && had_cpu_view {
                    // SAFETY: the caller hands the range back; replacing it
                    // with PROT_NONE keeps it reserved but inaccessible.
                    unsafe { reset_to_reserved(addr, size) };
                }
                lock(va).free(addr, size + self.guard);
            }
            Mode::Mmap => {
                // SAFETY: the caller owns the range (exactly what
                // `allocate` left reserved: no guards) and gives it up.
                let _ = unsafe { mman::munmap(addr as usize, size as usize) };
            }
        }
    }

    /// Free bytes (reserved kind only; the mmap kind reports 0).
    #[allow(dead_code)]
    pub fn free_bytes(&self) -> u64 {
        match &self.mode {
            Mode::Reserved { va } => lock(va).free_bytes(),
            Mode::Mmap => 0,
        }
    }
}

/// Replaces `[addr, addr+size)` with an inaccessible reservation.
///
/// # Safety
///
/// The caller must own the range; no Rust reference may point into it.
pub(crate) unsafe fn reset_to_reserved(addr: u64, size: u64) {
    let flags = MapFlags::PRIVATE | MapFlags::ANONYMOUS | MapFlags::NORESERVE | MapFlags::FIXED;
    // SAFETY: forwarded contract: the range is the caller's.
    let r = unsafe { mman::mmap(addr as usize, size as usize, Prot::empty(), flags, None, 0) };
    if r == Err(Errno::ENOMEM) {
        // At the map-count limit a replacing mmap can fail; unmapping first
        // lowers the count, as the C thunk does.
        // SAFETY: as above.
        unsafe {
            let _ = mman::munmap(addr as usize, size as usize);
            let _ = mman::mmap(addr as usize, size as usize, Prot::empty(), flags, None, 0);
        }
    }
}

/// Tries to reserve the SVM range the way the C thunk does when the GPU VM
/// does not cover the whole CPU address space: walk candidate start
/// addresses in 2 MiB steps, halving the length, until at least half of
/// the reservation is GPU-addressable. Returns `(base, limit)`.
pub(crate) fn reserve_svm_range(base: u64, limit: u64) -> Result<(u64, u64)> {
    const SVM_RESERVATION_LIMIT: u64 = (1 << 40) - 1;
    const SVM_MIN_VM_SIZE: u64 = 4 << 30;
    let base = align_up(base, GPU_HUGE_PAGE_SIZE);
    let limit = limit.min(SVM_RESERVATION_LIMIT);
    if base >= limit {
        return Err(FmmError::OutOfMemory(
            "no SVM range fits the GPU constraints",
        ));
    }
    let mut len = limit - base + 1;
    while len >= SVM_MIN_VM_SIZE {
        let half = len.div_ceil(2);
        let mut addr = base;
        while addr + half - 1 <= limit {
            let top = (addr + len).min(limit + 1);
            let map_size = (top - addr) & !(PAGE_SIZE - 1);
            if map_size < SVM_MIN_VM_SIZE {
                break;
            }
            let flags = MapFlags::PRIVATE | MapFlags::ANONYMOUS | MapFlags::NORESERVE;
            // SAFETY: no MAP_FIXED: the address is only a hint.
            let Ok(got) = (unsafe {
                mman::mmap(
                    addr as usize,
                    map_size as usize,
                    Prot::empty(),
                    flags,
                    None,
                    0,
                )
            }) else {
                break;
            };
            let got = got as u64;
            if got + half - 1 <= limit && got + SVM_MIN_VM_SIZE - 1 <= limit {
                let end = got + map_size - 1;
                if end > limit {
                    // SAFETY: trimming the tail of our own reservation.
                    let _ = unsafe { mman::munmap((limit + 1) as usize, (end - limit) as usize) };
                    return Ok((got, limit));
                }
                return Ok((got, end));
            }
            // SAFETY: our own reservation, not usable.
            let _ = unsafe { mman::munmap(got as usize, map_size as usize) };
            addr += GPU_HUGE_PAGE_SIZE;
        }
        len = half;
    }
    Err(FmmError::OutOfMemory(
        "failed to reserve an SVM address range",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mmap_aperture_allocates_aligned_ranges() {
        let ap = Aperture::mmap(0x20_0000, (1 << 47) - 1, PAGE_SIZE, 1, 9);
        let a = ap.allocate(None, 4 << 20, 0).unwrap();
        assert_eq!(a % (2 << 20), 0, "big buffers are 2 MiB aligned");
        let b = ap.allocate(None, PAGE_SIZE, 0).unwrap();
        assert!(a >= ap.base && b >= ap.base && a < ap.limit && b < ap.limit);
        // SAFETY: both ranges came from this aperture and are unused.
        unsafe {
            ap.release(a, 4 << 20, true);
            ap.release(b, PAGE_SIZE, true);
        }
    }

    #[test]
    fn mmap_aperture_fixed_address() {
        let ap = Aperture::mmap(0x20_0000, (1 << 47) - 1, PAGE_SIZE, 0, 9);
        let a = ap.allocate(None, 4 * PAGE_SIZE, 0).unwrap();
        // The range is taken, so a fixed request on it fails.
        assert!(ap.allocate(Some(a), PAGE_SIZE, 0).is_err());
        // SAFETY: `a` came from this aperture.
        unsafe { ap.release(a, 4 * PAGE_SIZE, true) };
        assert_eq!(ap.allocate(Some(a), PAGE_SIZE, 0).unwrap(), a);
        // SAFETY: as above.
        unsafe { ap.release(a, PAGE_SIZE, true) };
    }

    #[test]
    fn reserved_aperture_with_guard_pages() {
        let base = mman::reserve((64 * PAGE_SIZE) as usize).unwrap() as u64;
        let ap = Aperture::reserved(base, base + 64 * PAGE_SIZE - 1, PAGE_SIZE, 1, true);
        let a = ap.allocate(None, PAGE_SIZE, 0).unwrap();
        let b = ap.allocate(None, PAGE_SIZE, 0).unwrap();
        assert!(
            a.abs_diff(b) >= 2 * PAGE_SIZE,
            "one guard page between objects"
        );
        assert_eq!(ap.free_bytes(), 60 * PAGE_SIZE);
        // SAFETY: ranges from this aperture, then the whole aperture.
        unsafe {
            ap.release(a, PAGE_SIZE, true);
            ap.release(b, PAGE_SIZE, true);
            assert_eq!(ap.free_bytes(), 64 * PAGE_SIZE);
            mman::munmap(base as usize, (64 * PAGE_SIZE) as usize).unwrap();
        }
    }
}
