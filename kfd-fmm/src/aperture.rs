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

use std::os::fd::BorrowedFd;
use std::sync::{Arc, Mutex};

use kfd_sys::mapping::{Mapping, Reservation, SharedReservation};
use kfd_sys::mman::Prot;
use kfd_sys::Errno;

use crate::error::{AddressSpace, FmmError, Result};
use crate::lock;
use crate::va::{align_up, checked_align_up, VaAllocator};
use crate::{MAX_ALLOC_SIZE, PAGE_SIZE};

/// Alignment above which big buffers are not aligned further (2 MiB, the
/// GPU huge page).
pub(crate) const GPU_HUGE_PAGE_SIZE: u64 = 2 << 20;

#[derive(Debug)]
enum Mode {
    Reserved {
        va: Arc<Mutex<VaAllocator>>,
        /// The reservation the aperture lies in, where the CPU can map
        /// (the SVM apertures); `None` for GPU-only ranges.
        cpu: Option<Arc<SharedReservation>>,
    },
    /// Each allocation is a reservation of its own, exactly its size: the
    /// guard pages are placed around it and given back with the alignment
    /// padding, as the C library does.
    Mmap,
}

/// Where an object's addresses come from, given back when it drops.
#[derive(Debug)]
enum Backing {
    /// A reservation of its own (mmap-managed apertures, APU scratch),
    /// no CPU mapping in it yet: held by value, so a space that is mapped
    /// whole ([`Space::map_file_whole`]) never allocates an `Arc`.
    Own(Reservation),
    /// A reservation of its own with CPU mappings in parts of it, shared
    /// with them.
    Shared(Arc<SharedReservation>),
    /// A reservation of its own that one CPU mapping took over whole
    /// ([`Space::map_file_whole`]): the mapping gives the range back.
    Mapped,
    /// A range of an aperture's allocator, returned (with its guard
    /// bytes) on drop; `cpu` is the reservation below it where the CPU
    /// can map.
    Leased {
        va: Arc<Mutex<VaAllocator>>,
        guard: u64,
        cpu: Option<Arc<SharedReservation>>,
    },
    /// Nothing to give back (the range belongs to something else: APU
    /// host memory's own mapping, a scratch aperture's sub-range).
    Borrowed,
}

/// An address range for one object, handed out by an [`Aperture`] (or
/// made for one), given back when it drops. CPU mappings inside it are
/// [`Mapping`]s made with [`Space::map_file`] / [`Space::map_anonymous`],
/// which must drop first from a leased range (a `VmObject` drops its
/// mappings before its space; see [`Space::release_own`] for a
/// reservation of its own).
#[derive(Debug)]
pub(crate) struct Space {
    pub addr: u64,
    pub size: u64,
    backing: Backing,
}

impl Space {
    /// A range that something else gives back.
    pub fn borrowed(addr: u64, size: u64) -> Space {
        Space {
            addr,
            size,
            backing: Backing::Borrowed,
        }
    }

    /// A reservation of its own.
    pub fn own(res: Reservation) -> Space {
        Space {
            addr: res.addr(),
            size: res.len(),
            backing: Backing::Own(res),
        }
    }

    /// Lets go of a reservation of its own before the object's CPU
    /// mappings drop, so that the last of them holds the only reference
    /// and the whole range goes with one munmap (a mapping re-reserves
    /// its pages only while its reservation lives on). A leased range
    /// keeps its order (mappings first, then the range goes back to the
    /// aperture's allocator, where another object may take it).
    pub fn release_own(&mut self) {
        if matches!(
            self.backing,
            Backing::Own(_) | Backing::Shared(_) | Backing::Mapped
        ) {
            self.backing = Backing::Borrowed;
        }
    }

    /// Whether `[addr, addr + len)` lies inside this space.
    fn holds(&self, addr: u64, len: u64) -> bool {
        addr >= self.addr
            && addr
                .checked_add(len)
                .is_some_and(|end| end <= self.addr + self.size)
    }

    /// The reservation a CPU mapping at `[addr, addr + len)` goes into,
    /// with the offset of `addr` in it. A reservation of its own held by
    /// value is shared from here on (the mapping holds it too).
    fn reservation(
        &mut self,
        addr: u64,
        len: u64,
    ) -> std::result::Result<(&Arc<SharedReservation>, u64), Errno> {
        if matches!(self.backing, Backing::Own(_)) {
            let Backing::Own(res) = std::mem::replace(&mut self.backing, Backing::Borrowed) else {
                unreachable!("checked");
            };
            self.backing = Backing::Shared(Arc::new(SharedReservation::new(res)));
        }
        let res = match &self.backing {
            Backing::Shared(r) | Backing::Leased { cpu: Some(r), .. } => r,
            // The mapping that took the range over covers all of it, as a
            // live mapping of the shared reservation would: a request the
            // reservation would check and find covered is busy.
            Backing::Mapped
                if len != 0
                    && self.holds(addr, len)
                    && addr % PAGE_SIZE == 0
                    && len % PAGE_SIZE == 0 =>
            {
                return Err(Errno::EBUSY)
            }
            _ => return Err(Errno::EINVAL),
        };
        if !self.holds(addr, len) || addr < res.addr() {
            return Err(Errno::EINVAL);
        }
        Ok((res, addr - res.addr()))
    }

    /// Maps `len` bytes of `fd` at `offset` over `[addr, addr + len)`
    /// (inside this space), with `prot`.
    pub fn map_file(
        &mut self,
        addr: u64,
        len: u64,
        prot: Prot,
        fd: BorrowedFd<'_>,
        offset: u64,
    ) -> std::result::Result<Mapping, Errno> {
        let (res, off) = self.reservation(addr, len)?;
        res.map_file(off, len, prot, fd, offset)
    }

    /// Maps private anonymous memory over `[addr, addr + len)` (inside
    /// this space), with `prot`.
    pub fn map_anonymous(
        &mut self,
        addr: u64,
        len: u64,
        prot: Prot,
    ) -> std::result::Result<Mapping, Errno> {
        let (res, off) = self.reservation(addr, len)?;
        res.map_anonymous(off, len, prot)
    }

    /// [`Space::map_file`] of the whole space, for the one CPU view of an
    /// object that lives as long as the object: over a reservation of its
    /// own with nothing mapped yet, the mapping takes the reservation over
    /// (no shared reservation to allocate; the mapping unmaps the range
    /// when it drops, as the last mapping of a shared one does).
    pub fn map_file_whole(
        &mut self,
        prot: Prot,
        fd: BorrowedFd<'_>,
        offset: u64,
    ) -> std::result::Result<Mapping, Errno> {
        self.map_whole(
            |res| res.into_file_mapping(prot, fd, offset),
            |s| s.map_file(s.addr, s.size, prot, fd, offset),
        )
    }

    /// [`Space::map_anonymous`] of the whole space, taking a reservation
    /// of its own over as [`Space::map_file_whole`] does.
    pub fn map_anonymous_whole(&mut self, prot: Prot) -> std::result::Result<Mapping, Errno> {
        self.map_whole(
            |res| res.into_anonymous_mapping(prot),
            |s| s.map_anonymous(s.addr, s.size, prot),
        )
    }

    fn map_whole(
        &mut self,
        take: impl FnOnce(Reservation) -> std::result::Result<Mapping, (Reservation, Errno)>,
        part: impl FnOnce(&mut Space) -> std::result::Result<Mapping, Errno>,
    ) -> std::result::Result<Mapping, Errno> {
        if !matches!(self.backing, Backing::Own(_)) {
            return part(self);
        }
        let Backing::Own(res) = std::mem::replace(&mut self.backing, Backing::Mapped) else {
            unreachable!("checked");
        };
        take(res).map_err(|(res, e)| {
            self.backing = Backing::Own(res);
            e
        })
    }
}

impl Drop for Space {
    fn drop(&mut self) {
        if let Backing::Leased { va, guard, .. } = &self.backing {
            lock(va).free(self.addr, self.size + guard);
        }
    }
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
    /// Which address space this is (what a refusal names).
    space: AddressSpace,
    mode: Mode,
}

impl Aperture {
    /// A reserved aperture of `space` over `[base, limit]`, inside `cpu`
    /// where the CPU maps (`None`: the GPU only, or a non-canonical range).
    pub fn reserved(
        space: AddressSpace,
        base: u64,
        limit: u64,
        align: u64,
        guard_pages: u32,
        cpu: Option<Arc<SharedReservation>>,
    ) -> Self {
        Aperture {
            base,
            limit,
            align: align.max(PAGE_SIZE),
            guard: guard_pages as u64 * PAGE_SIZE,
            cpu_accessible: cpu.is_some(),
            max_align: GPU_HUGE_PAGE_SIZE,
            space,
            mode: Mode::Reserved {
                va: Arc::new(Mutex::new(VaAllocator::new(base, limit))),
                cpu,
            },
        }
    }

    /// An mmap-managed aperture over `[base, limit]` (always the SVM
    /// range).
    pub fn mmap(base: u64, limit: u64, align: u64, guard_pages: u32, align_order: u32) -> Self {
        Aperture {
            base,
            limit,
            align: align.max(PAGE_SIZE),
            guard: guard_pages as u64 * PAGE_SIZE,
            cpu_accessible: true,
            max_align: PAGE_SIZE << align_order.min(30),
            space: AddressSpace::Svm,
            mode: Mode::Mmap,
        }
    }

    /// The refusal of a request this aperture has no room for.
    fn no_room(&self) -> FmmError {
        FmmError::NoAddressSpace {
            aperture: self.space,
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
    /// [`FmmError::NoAddressSpace`] before any address arithmetic, so no sum
    /// of a caller's size with padding or guards can wrap.
    pub fn allocate(&self, fixed: Option<u64>, size: u64, align: u64) -> Result<Space> {
        if size == 0 {
            return Err(FmmError::InvalidArgument("zero-sized address range"));
        }
        if size > MAX_ALLOC_SIZE {
            return Err(self.no_room());
        }
        match &self.mode {
            Mode::Reserved { va, cpu } => {
                let align = self.effective_align(size, align);
                let va_size = size + self.guard;
                let mut alloc = lock(va);
                let got = match fixed {
                    Some(addr) => alloc.alloc_fixed(addr, va_size).then_some(addr),
                    None => alloc.alloc(va_size, align),
                };
                let addr = got.ok_or_else(|| self.no_room())?;
                Ok(Space {
                    addr,
                    size,
                    backing: Backing::Leased {
                        va: va.clone(),
                        guard: self.guard,
                        cpu: cpu.clone(),
                    },
                })
            }
            Mode::Mmap => match fixed {
                Some(addr) => self.mmap_fixed(addr, size),
                None => self.mmap_aligned(size, align),
            },
        }
    }

    fn mmap_fixed(&self, addr: u64, size: u64) -> Result<Space> {
        if addr % PAGE_SIZE != 0 {
            return Err(FmmError::UnalignedAddress(addr));
        }
        let in_range = addr
            .checked_add(size - 1)
            .is_some_and(|last| addr >= self.base && last <= self.limit);
        if !in_range {
            return Err(self.no_room());
        }
        let res = Reservation::at(addr, size).map_err(|_| self.no_room())?;
        Ok(Space::own(res))
    }

    /// Reserves `size` bytes aligned to (at least) `align`, at least
    /// `guard` bytes away from the start of one padded `PROT_NONE`
    /// reservation, which is then trimmed to `[aligned, aligned + size)`:
    /// the padding and the guard pages on both sides are unmapped, as the
    /// C library's `mmap_aperture_allocate_aligned` does (keeping the
    /// guards reserved cost two more VMAs per live object and halved the
    /// objects a process can hold under `vm.max_map_count`).
    fn mmap_aligned(&self, size: u64, align: u64) -> Result<Space> {
        let align = self.effective_align(size, align);
        // align >= PAGE_SIZE, so the sum is at least a page.
        let padded = size
            .checked_add(align)
            .and_then(|v| v.checked_add(2 * self.guard))
            .map(|v| v - PAGE_SIZE)
            .filter(|&v| v <= MAX_ALLOC_SIZE)
            .ok_or_else(|| self.no_room())?;
        let res = Reservation::new(padded).map_err(|_| self.no_room())?;
        // The kernel placed `padded` bytes at `raw`, so `raw + padded`
        // fits; `aligned` and `end + guard` lie inside (raw is page
        // aligned, so rounding up adds at most `align - PAGE_SIZE`), which
        // the checks below confirm before anything is trimmed.
        let raw = res.addr();
        let aligned = checked_align_up(raw + self.guard, align).unwrap_or(u64::MAX);
        let end = aligned.saturating_add(size);
        if aligned < self.base || end > raw + padded || end - 1 > self.limit {
            return Err(self.no_room());
        }
        let res = res.trim(aligned - raw, size).map_err(|_| self.no_room())?;
        Ok(Space::own(res))
    }

    /// Takes `size` bytes at the start of a reserved aperture for good
    /// (nothing is ever placed there); the mmap kind has nothing to hold.
    pub fn hold(&self, size: u64) {
        if let Mode::Reserved { va, .. } = &self.mode {
            let _ = lock(va).alloc_fixed(self.base, size);
        }
    }

    /// Free bytes (reserved kind only; the mmap kind reports 0).
    #[allow(dead_code)]
    pub fn free_bytes(&self) -> u64 {
        match &self.mode {
            Mode::Reserved { va, .. } => lock(va).free_bytes(),
            Mode::Mmap => 0,
        }
    }
}

/// Tries to reserve the SVM range the way the C thunk does when the GPU VM
/// does not cover the whole CPU address space: walk candidate start
/// addresses in 2 MiB steps, halving the length, until at least half of
/// the reservation is GPU-addressable. Returns the reservation, whose
/// last byte is at most `limit`.
pub(crate) fn reserve_svm_range(base: u64, limit: u64) -> Result<Reservation> {
    const SVM_RESERVATION_LIMIT: u64 = (1 << 40) - 1;
    const SVM_MIN_VM_SIZE: u64 = 4 << 30;
    let base = align_up(base, GPU_HUGE_PAGE_SIZE);
    let limit = limit.min(SVM_RESERVATION_LIMIT);
    let no_room = FmmError::NoAddressSpace {
        aperture: AddressSpace::Svm,
    };
    if base >= limit {
        return Err(no_room);
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
            let Ok(res) = Reservation::near(addr, map_size) else {
                break;
            };
            let got = res.addr();
            if got + half - 1 <= limit && got + SVM_MIN_VM_SIZE - 1 <= limit {
                let end = got + map_size - 1;
                if end > limit {
                    // The part past `limit` is given back.
                    return res.trim(0, limit + 1 - got).map_err(|_| no_room);
                }
                return Ok(res);
            }
            // Not usable: dropped (unmapped) here.
            drop(res);
            addr += GPU_HUGE_PAGE_SIZE;
        }
        len = half;
    }
    Err(no_room)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mmap_aperture_allocates_aligned_ranges() {
        let ap = Aperture::mmap(0x20_0000, (1 << 47) - 1, PAGE_SIZE, 1, 9);
        let mut a = ap.allocate(None, 4 << 20, 0).unwrap();
        assert_eq!(a.addr % (2 << 20), 0, "big buffers are 2 MiB aligned");
        let b = ap.allocate(None, PAGE_SIZE, 0).unwrap();
        assert!(a.addr >= ap.base && b.addr >= ap.base && a.addr < ap.limit && b.addr < ap.limit);
        let m = a
            .map_anonymous(a.addr + PAGE_SIZE, PAGE_SIZE, Prot::READ | Prot::WRITE)
            .unwrap();
        m.write(0, b"x").unwrap();
        assert!(
            a.map_anonymous(b.addr, PAGE_SIZE, Prot::READ).is_err(),
            "outside the space"
        );
    }

    /// A space of its own mapped whole: the mapping owns the range (it
    /// goes with the mapping, not with the space), and nothing more can
    /// be mapped in it; mapped in parts, the parts share it.
    #[test]
    fn a_space_of_its_own_mapped_whole_or_in_parts() {
        let rw = Prot::READ | Prot::WRITE;
        let ap = Aperture::mmap(0x20_0000, (1 << 47) - 1, PAGE_SIZE, 0, 9);
        let mut a = ap.allocate(None, 2 * PAGE_SIZE, 0).unwrap();
        let at = a.addr;
        let m = a.map_anonymous_whole(rw).unwrap();
        assert_eq!((m.addr(), m.len()), (at, 2 * PAGE_SIZE));
        assert_eq!(
            a.map_anonymous(at, PAGE_SIZE, rw).unwrap_err(),
            Errno::EBUSY
        );
        assert_eq!(
            a.map_anonymous(at + 1, PAGE_SIZE, rw).unwrap_err(),
            Errno::EINVAL
        );
        drop(a);
        m.write(0, b"still mapped").unwrap();
        assert!(
            ap.allocate(Some(at), PAGE_SIZE, 0).is_err(),
            "the mapping holds it"
        );
        drop(m);
        assert_eq!(ap.allocate(Some(at), PAGE_SIZE, 0).unwrap().addr, at);
        let mut b = ap.allocate(None, 2 * PAGE_SIZE, 0).unwrap();
        let first = b.map_anonymous(b.addr, PAGE_SIZE, rw).unwrap();
        let whole = b.map_anonymous_whole(rw);
        assert_eq!(whole.unwrap_err(), Errno::EBUSY, "a part is mapped");
        let second = b.map_anonymous(b.addr + PAGE_SIZE, PAGE_SIZE, rw).unwrap();
        b.release_own();
        drop((first, b));
        second.write(0, b"x").unwrap();
    }

    #[test]
    fn mmap_aperture_fixed_address() {
        let ap = Aperture::mmap(0x20_0000, (1 << 47) - 1, PAGE_SIZE, 0, 9);
        let a = ap.allocate(None, 4 * PAGE_SIZE, 0).unwrap();
        let at = a.addr;
        // The range is taken, so a fixed request on it fails.
        assert!(ap.allocate(Some(at), PAGE_SIZE, 0).is_err());
        drop(a);
        assert_eq!(ap.allocate(Some(at), PAGE_SIZE, 0).unwrap().addr, at);
    }

    #[test]
    fn reserved_aperture_with_guard_pages() {
        let res = Arc::new(SharedReservation::new(
            Reservation::new(64 * PAGE_SIZE).unwrap(),
        ));
        let base = res.addr();
        let ap = Aperture::reserved(
            AddressSpace::Svm,
            base,
            base + 64 * PAGE_SIZE - 1,
            PAGE_SIZE,
            1,
            Some(res),
        );
        let mut a = ap.allocate(None, PAGE_SIZE, 0).unwrap();
        let b = ap.allocate(None, PAGE_SIZE, 0).unwrap();
        assert!(
            a.addr.abs_diff(b.addr) >= 2 * PAGE_SIZE,
            "one guard page between objects"
        );
        assert_eq!(ap.free_bytes(), 60 * PAGE_SIZE);
        let m = a.map_anonymous(a.addr, PAGE_SIZE, Prot::READ).unwrap();
        assert_eq!(m.load_u64(0), Ok(0));
        drop((m, a, b));
        assert_eq!(ap.free_bytes(), 64 * PAGE_SIZE);
        // A GPU-only aperture has no CPU mappings.
        let gpu = Aperture::reserved(
            AddressSpace::Gpuvm,
            1 << 56,
            (1 << 56) + (1 << 30) - 1,
            PAGE_SIZE,
            0,
            None,
        );
        let mut g = gpu.allocate(None, PAGE_SIZE, 0).unwrap();
        assert!(g.map_anonymous(g.addr, PAGE_SIZE, Prot::READ).is_err());
    }
}
