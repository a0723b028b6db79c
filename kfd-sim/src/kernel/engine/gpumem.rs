//! GPU memory as the engines see it: one GPU VM of one kernel process.
//!
//! In the model a GPU virtual address equals the CPU virtual address of
//! the same memory (what the thunk arranges on real systems too). An
//! address is resolved the way the GPU's page tables would: a buffer
//! object mapped on this device's VM (its memfd pages for VRAM/GTT, the
//! user's pages for userptr memory, the kfd file's page for doorbell and
//! MMIO buffers), else an SVM range of the process (the user's pages),
//! else it is a GPU page fault ([`Fault`]). User pages are read and written
//! with `process_vm_readv`/`writev` ([`usermem`]); memfd pages with
//! `pread`/`pwrite`, and 16/32/64-bit accesses through a page the model
//! maps itself ([`PageMap`]), so they are atomic against the CPU's own
//! atomics on the same page.

use std::sync::Arc;

use kfd_sys::kfd::{
    KFD_IOCTL_SVM_FLAG_GPU_RO, KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL,
    KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP, KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
};

use crate::kernel::memfd::{FileId, Memfd, PageMap};
use crate::kernel::process::Process;
use crate::kernel::{lock, usermem, PAGE};

/// A GPU page fault: no mapping (or no write permission) for `va`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fault {
    /// The faulting address.
    pub va: u64,
    /// The access was a write.
    pub write: bool,
    /// The page is mapped, but read-only.
    pub read_only: bool,
}

/// Where a run of bytes lives.
#[derive(Debug, Clone)]
pub(crate) enum Backing {
    /// A memfd at this file offset.
    File(Arc<Memfd>, u64),
    /// The user's memory at this CPU address.
    User(u64),
}

/// A contiguous run of translated bytes starting at the requested address.
#[derive(Debug)]
pub(crate) struct Span {
    pub at: Backing,
    /// Bytes available from the address on.
    pub len: u64,
}

/// Pages the model mapped for atomic accesses, most recent first.
#[derive(Debug, Default)]
pub(crate) struct PageCache {
    maps: Vec<(FileId, u64, PageMap)>,
}

/// Entries a queue keeps mapped (signals, the ring's first page, pointers).
const PAGE_CACHE_SIZE: usize = 16;

impl PageCache {
    fn page(&mut self, file: &Arc<Memfd>, off: u64) -> Option<(&PageMap, usize)> {
        let page = off & !(PAGE - 1);
        let pos = self
            .maps
            .iter()
            .position(|(id, p, _)| *id == file.id && *p == page);
        let entry = match pos {
            Some(i) => self.maps.remove(i),
            None => (file.id, page, PageMap::new(file.clone(), page).ok()?),
        };
        self.maps.insert(0, entry);
        self.maps.truncate(PAGE_CACHE_SIZE);
        Some((&self.maps[0].2, (off - page) as usize))
    }
}

/// The GPU VM of device `dev` of one kernel process, with the page cache
/// of the queue that is using it.
#[derive(Debug)]
pub(crate) struct GpuVm<'a> {
    pub proc: &'a Process,
    pub dev: usize,
    pub pages: &'a mut PageCache,
}

/// Translates `va` (a `write` access) in the GPU VM of device `dev` of
/// `proc` to its backing and the number of bytes contiguous from there,
/// the way the GPU's page tables would.
pub(crate) fn resolve(proc: &Process, dev: usize, va: u64, write: bool) -> Result<Span, Fault> {
    let fault = |read_only| Fault {
        va,
        write,
        read_only,
    };
    let st = lock(&proc.state);
    if let Some((start, e)) = st.vm_va.get(dev).and_then(|v| v.entry_at(va)) {
        let end = e.end;
        let Some(bo) = st.pdds.get(e.owner).and_then(|p| p.bos.get(&e.idr)) else {
            return Err(fault(false));
        };
        if write && bo.flags & KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE == 0 {
            return Err(fault(true));
        }
        let off = va - start;
        let len = end - va;
        let at = if let Some(s) = &bo.storage {
            let (memfd, base) = s.backing().ok_or(fault(false))?;
            // Stay inside the buffer's own pages.
            let len = len.min(s.size.saturating_sub(off));
            if len == 0 {
                return Err(fault(false));
            }
            return Ok(Span {
                at: Backing::File(memfd, base + off),
                len,
            });
        } else if bo.userptr != 0 {
            Backing::User(bo.userptr + off)
        } else if bo.flags & (KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL | KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)
            != 0
        {
            Backing::File(proc.home.clone(), bo.mmap_offset + off)
        } else {
            return Err(fault(false));
        };
        return Ok(Span { at, len });
    }
    let page = va / PAGE;
    if let Some((last, attrs)) = st.svm.range_of(page) {
        if write && attrs.flags & KFD_IOCTL_SVM_FLAG_GPU_RO != 0 {
            return Err(fault(true));
        }
        return Ok(Span {
            at: Backing::User(va),
            len: (last + 1) * PAGE - va,
        });
    }
    Err(fault(false))
}

/// Bytes copied per step of a copy or fill (bounds the buffer and lets a
/// long copy notice that its queue was stopped).
pub(crate) const CHUNK: u64 = 1 << 20;

/// Defines `read_uN`/`write_uN` on [`GpuVm`]: an atomic load or store
/// (acquire/release) when the naturally aligned word lies in a memfd page,
/// else a copy through [`GpuVm::read`] / [`GpuVm::write`].
macro_rules! word_access {
    ($($read:ident, $write:ident, $t:ty, $at:ident, $size:literal;)*) => {$(
        #[doc = concat!("Loads the `", stringify!($t), "` at `va`.")]
        pub fn $read(&mut self, va: u64) -> Result<$t, Fault> {
            if let Some((p, off)) = self.mapped_word(va, $size, false)? {
                return Ok(p.$at(off).load(std::sync::atomic::Ordering::Acquire));
            }
            let mut b = [0u8; $size];
            self.read(va, &mut b)?;
            Ok(<$t>::from_ne_bytes(b))
        }

        #[doc = concat!("Stores the `", stringify!($t), "` `v` at `va`.")]
        pub fn $write(&mut self, va: u64, v: $t) -> Result<(), Fault> {
            if let Some((p, off)) = self.mapped_word(va, $size, true)? {
                p.$at(off).store(v, std::sync::atomic::Ordering::Release);
                return Ok(());
            }
            self.write(va, &v.to_ne_bytes())
        }
    )*};
}

impl GpuVm<'_> {
    /// Translates `va` (a `write` access) to its backing and the number of
    /// bytes contiguous from there.
    fn span(&self, va: u64, write: bool) -> Result<Span, Fault> {
        resolve(self.proc, self.dev, va, write)
    }

    /// Reads `buf.len()` bytes at `va`.
    pub fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), Fault> {
        let mut done = 0usize;
        while done < buf.len() {
            let at = va + done as u64;
            let span = self.span(at, false)?;
            let n = (buf.len() - done).min(span.len as usize);
            let chunk = &mut buf[done..done + n];
            let ok = match &span.at {
                Backing::File(m, off) => m.pread(*off, chunk).is_ok(),
                Backing::User(a) => usermem::read(*a, chunk).is_ok(),
            };
            if !ok {
                return Err(Fault {
                    va: at,
                    write: false,
                    read_only: false,
                });
            }
            done += n;
        }
        Ok(())
    }

    /// Writes `data` at `va`.
    pub fn write(&mut self, va: u64, data: &[u8]) -> Result<(), Fault> {
        let mut done = 0usize;
        while done < data.len() {
            let at = va + done as u64;
            let span = self.span(at, true)?;
            let n = (data.len() - done).min(span.len as usize);
            let chunk = &data[done..done + n];
            let ok = match &span.at {
                Backing::File(m, off) => m.pwrite(*off, chunk).is_ok(),
                Backing::User(a) => usermem::write(*a, chunk).is_ok(),
            };
            if !ok {
                return Err(Fault {
                    va: at,
                    write: true,
                    read_only: false,
                });
            }
            done += n;
        }
        Ok(())
    }

    /// A naturally aligned word of `size` bytes at `va` in a memfd page the
    /// model can map, as (page, offset in the page); `None` for user
    /// memory or a misaligned address (the caller then uses plain reads
    /// and writes).
    fn mapped_word(
        &mut self,
        va: u64,
        size: u64,
        write: bool,
    ) -> Result<Option<(&PageMap, usize)>, Fault> {
        let span = self.span(va, write)?;
        if va % size != 0 || span.len < size {
            return Ok(None);
        }
        match span.at {
            Backing::File(m, off) => Ok(self.pages.page(&m, off)),
            Backing::User(_) => Ok(None),
        }
    }

    word_access! {
        read_u64, write_u64, u64, u64_at, 8;
        read_u32, write_u32, u32, u32_at, 4;
        read_u16, write_u16, u16, u16_at, 2;
    }

    /// Adds `delta` (wrapping) to the 64-bit value at `va` and returns the
    /// old value: atomic in memfd pages, a read-modify-write in user
    /// memory (a concurrent CPU update of the same word can be lost there).
    pub fn fetch_add_u64(&mut self, va: u64, delta: u64) -> Result<u64, Fault> {
        if let Some((p, off)) = self.mapped_word(va, 8, true)? {
            return Ok(p
                .u64_at(off)
                .fetch_add(delta, std::sync::atomic::Ordering::AcqRel));
        }
        let old = self.read_u64(va)?;
        self.write(va, &old.wrapping_add(delta).to_ne_bytes())?;
        Ok(old)
    }

    /// Copies `len` bytes from `src` to `dst` in chunks of [`CHUNK`],
    /// asking `stop` between chunks; returns `Ok(false)` when it did (the
    /// copy is then incomplete and will be redone).
    pub fn copy(
        &mut self,
        dst: u64,
        src: u64,
        len: u64,
        stop: &dyn Fn() -> bool,
    ) -> Result<bool, Fault> {
        let mut buf = vec![0u8; len.min(CHUNK) as usize];
        let mut done = 0u64;
        while done < len {
            if stop() {
                return Ok(false);
            }
            let n = (len - done).min(CHUNK) as usize;
            self.read(src + done, &mut buf[..n])?;
            self.write(dst + done, &buf[..n])?;
            done += n as u64;
        }
        Ok(true)
    }

    /// Fills `len` bytes at `dst` with `pattern` repeated (`len` need not
    /// be a multiple of its length).
    pub fn fill(
        &mut self,
        dst: u64,
        pattern: &[u8],
        len: u64,
        stop: &dyn Fn() -> bool,
    ) -> Result<bool, Fault> {
        let chunk: Vec<u8> = pattern
            .iter()
            .copied()
            .cycle()
            .take(len.min(CHUNK) as usize)
            .collect();
        let mut done = 0u64;
        while done < len {
            if stop() {
                return Ok(false);
            }
            let n = (len - done).min(CHUNK) as usize;
            self.write(dst + done, &chunk[..n])?;
            done += n as u64;
        }
        Ok(true)
    }
}
