//! GPU memory as the hardware sees it: an interface the driver model
//! implements ([`GpuMemory`]), resolved spans of host memory ([`Span`])
//! that loads, stores and atomics run on without a system call, and a flat
//! buffer ([`FlatMemory`]) for tests.
//!
//! A GPU virtual address is translated once into a [`Span`]: a run of
//! bytes that lives at a host address for as long as the memory's
//! [`GpuMemory::generation`] does not change. Every access through a span
//! is an atomic (or, misaligned, byte-wise atomic) access, loads acquiring
//! and stores releasing, because the memory is shared with CPU threads and
//! other engines that run at the same time, as real GPU memory is.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// A GPU page fault: no mapping (or no write permission) for `va`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// The faulting address.
    pub va: u64,
    /// The access was a write.
    pub write: bool,
    /// The page is mapped, but read-only.
    pub read_only: bool,
}

impl Fault {
    /// A fault on an unmapped address.
    pub fn not_present(va: u64, write: bool) -> Fault {
        Fault {
            va,
            write,
            read_only: false,
        }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GPU memory fault at {:#x} ({}{})",
            self.va,
            if self.write { "write" } else { "read" },
            if self.read_only {
                ", read-only page"
            } else {
                ""
            }
        )
    }
}

/// What an access does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A load.
    Read,
    /// A store or an atomic.
    Write,
}

/// A translated run of GPU virtual addresses `[va, va + len)` at a host
/// address.
#[derive(Debug, Clone)]
pub struct Span {
    va: u64,
    len: u64,
    host: NonNull<u8>,
    writable: bool,
}

// SAFETY: a span is a pointer into memory shared between threads; every
// access through it is atomic, so sending or sharing it between threads
// is sound (`Span::new`'s contract keeps the memory valid).
unsafe impl Send for Span {}
// SAFETY: as for `Send`.
unsafe impl Sync for Span {}

/// Integer words a span loads and stores atomically.
pub trait Word: Copy + Default + std::fmt::Debug + 'static {
    /// Size in bytes.
    const SIZE: usize;
    /// Loads the word at `p` (acquire: what a producer released before it
    /// is visible after it; as cheap as a plain load on x86-64).
    ///
    /// # Safety
    /// `p` is aligned to `SIZE` and valid for reads of `SIZE` bytes.
    unsafe fn load(p: *mut u8) -> Self;
    /// Stores the word at `p` (release).
    ///
    /// # Safety
    /// `p` is aligned to `SIZE` and valid for writes of `SIZE` bytes.
    unsafe fn store(p: *mut u8, v: Self);
    /// Replaces the word at `p` with `f(old)` atomically; returns the old
    /// value.
    ///
    /// # Safety
    /// As for [`Word::store`].
    unsafe fn update(p: *mut u8, f: &mut dyn FnMut(Self) -> Self) -> Self;
    /// The word from little-endian bytes.
    fn from_bytes(b: &[u8]) -> Self;
    /// The word's little-endian bytes into `b`.
    fn to_bytes(self, b: &mut [u8]);
}

macro_rules! word {
    ($($t:ty, $at:ty;)*) => {$(
        impl Word for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            unsafe fn load(p: *mut u8) -> Self {
                // SAFETY: the caller guarantees alignment and validity;
                // every access to this memory is atomic.
                unsafe { <$at>::from_ptr(p.cast()) }.load(Ordering::Acquire)
            }
            unsafe fn store(p: *mut u8, v: Self) {
                // SAFETY: as in `load`.
                unsafe { <$at>::from_ptr(p.cast()) }.store(v, Ordering::Release)
            }
            unsafe fn update(p: *mut u8, f: &mut dyn FnMut(Self) -> Self) -> Self {
                // SAFETY: as in `load`.
                let a = unsafe { <$at>::from_ptr(p.cast()) };
                let mut old = a.load(Ordering::Relaxed);
                loop {
                    match a.compare_exchange_weak(old, f(old), Ordering::AcqRel, Ordering::Relaxed) {
                        Ok(v) => return v,
                        Err(v) => old = v,
                    }
                }
            }
            fn from_bytes(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..Self::SIZE]);
                <$t>::from_le_bytes(a)
            }
            fn to_bytes(self, b: &mut [u8]) {
                b[..Self::SIZE].copy_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

word! {
    u8, AtomicU8;
    u16, AtomicU16;
    u32, AtomicU32;
    u64, AtomicU64;
}

impl Span {
    /// A span of `len` bytes of GPU addresses from `va`, at `host`.
    ///
    /// # Safety
    /// `host..host + len` must stay valid for reads (and, when `writable`,
    /// for writes) until the [`GpuMemory`] that returned the span changes
    /// its [`generation`](GpuMemory::generation), and every other access to
    /// that memory from Rust must be atomic (or volatile from outside Rust).
    pub unsafe fn new(va: u64, len: u64, host: NonNull<u8>, writable: bool) -> Span {
        Span {
            va,
            len,
            host,
            writable,
        }
    }

    /// The first GPU address of the span.
    pub fn va(&self) -> u64 {
        self.va
    }

    /// Bytes in the span.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for an empty span.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether stores are allowed.
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// True if `[va, va + size)` lies in the span.
    #[inline]
    pub fn contains(&self, va: u64, size: u64) -> bool {
        va >= self.va && va.wrapping_sub(self.va).wrapping_add(size) <= self.len
    }

    #[inline]
    fn at(&self, va: u64) -> *mut u8 {
        debug_assert!(self.contains(va, 1));
        // SAFETY: `va` lies in the span (checked by every caller), so the
        // offset stays inside the host allocation `new` was given.
        unsafe { self.host.as_ptr().add((va - self.va) as usize) }
    }

    /// Loads the word at `va`, which must lie in the span.
    #[inline]
    pub fn load<T: Word>(&self, va: u64) -> T {
        assert!(self.contains(va, T::SIZE as u64));
        let p = self.at(va);
        if (p as usize) % T::SIZE == 0 {
            // SAFETY: inside the span and aligned.
            unsafe { T::load(p) }
        } else {
            let mut b = [0u8; 8];
            for (i, x) in b[..T::SIZE].iter_mut().enumerate() {
                // SAFETY: each byte is inside the span.
                *x = unsafe { u8::load(p.add(i)) };
            }
            T::from_bytes(&b)
        }
    }

    /// Stores the word at `va`, which must lie in a writable span.
    #[inline]
    pub fn store<T: Word>(&self, va: u64, v: T) {
        assert!(self.writable && self.contains(va, T::SIZE as u64));
        let p = self.at(va);
        if (p as usize) % T::SIZE == 0 {
            // SAFETY: inside a writable span and aligned.
            unsafe { T::store(p, v) }
        } else {
            let mut b = [0u8; 8];
            v.to_bytes(&mut b);
            for (i, x) in b[..T::SIZE].iter().enumerate() {
                // SAFETY: each byte is inside the writable span.
                unsafe { u8::store(p.add(i), *x) };
            }
        }
    }

    /// Replaces the word at `va` with `f(old)`, atomically when `va` is
    /// naturally aligned (a read-modify-write otherwise, as a misaligned
    /// atomic is not atomic on the hardware either); returns the old value.
    #[inline]
    pub fn update<T: Word>(&self, va: u64, f: &mut dyn FnMut(T) -> T) -> T {
        assert!(self.writable && self.contains(va, T::SIZE as u64));
        let p = self.at(va);
        if (p as usize) % T::SIZE == 0 {
            // SAFETY: inside a writable span and aligned.
            unsafe { T::update(p, f) }
        } else {
            let old = self.load::<T>(va);
            self.store(va, f(old));
            old
        }
    }

    /// Copies bytes from `va` into `out` (the whole range must lie in the
    /// span).
    pub fn read_bytes(&self, va: u64, out: &mut [u8]) {
        assert!(self.contains(va, out.len() as u64));
        let p = self.at(va);
        for (i, x) in out.iter_mut().enumerate() {
            // SAFETY: each byte is inside the span.
            *x = unsafe { u8::load(p.add(i)) };
        }
    }

    /// Copies `len` bytes from `src` in this span to `dst` in span `to`
    /// (both ranges must lie in their spans; `to` writable). Word by word
    /// with atomic loads and stores when both addresses share their
    /// alignment, byte by byte otherwise; not atomic as a whole, as a DMA
    /// copy is not. Overlapping ranges copy as `memmove` does.
    pub fn copy_to(&self, src: u64, to: &Span, dst: u64, len: u64) {
        assert!(self.contains(src, len) && to.writable && to.contains(dst, len));
        if len == 0 {
            return;
        }
        let (s, d) = (self.at(src), to.at(dst));
        let n = len as usize;
        let backward = (d as usize) > (s as usize) && (d as usize) < (s as usize) + n;
        let idx = |i: usize| if backward { n - 1 - i } else { i };
        let same_phase = (s as usize) % 8 == (d as usize) % 8;
        if !same_phase || backward {
            for i in 0..n {
                let k = idx(i);
                // SAFETY: `k < len`, inside both spans.
                unsafe { u8::store(d.add(k), u8::load(s.add(k))) };
            }
            return;
        }
        let head = ((8 - (s as usize) % 8) % 8).min(n);
        let words = (n - head) / 8;
        for k in 0..head {
            // SAFETY: inside both spans.
            unsafe { u8::store(d.add(k), u8::load(s.add(k))) };
        }
        for w in 0..words {
            let k = head + 8 * w;
            // SAFETY: inside both spans and 8-byte aligned (same phase).
            unsafe { u64::store(d.add(k), u64::load(s.add(k))) };
        }
        for k in head + 8 * words..n {
            // SAFETY: inside both spans.
            unsafe { u8::store(d.add(k), u8::load(s.add(k))) };
        }
    }

    /// Fills `len` bytes at `dst` with `pattern` repeated, the pattern's
    /// first byte at `dst` (the range must lie in this writable span).
    pub fn fill(&self, dst: u64, pattern: &[u8], len: u64) {
        assert!(self.writable && self.contains(dst, len) && !pattern.is_empty());
        let d = self.at(dst);
        let n = len as usize;
        let p = pattern.len();
        let mut k = 0;
        // Bytes up to 8-byte alignment, then whole words when the pattern
        // repeats within 8 bytes.
        if 8 % p == 0 {
            while k < n && (d as usize + k) % 8 != 0 {
                // SAFETY: inside the span.
                unsafe { u8::store(d.add(k), pattern[k % p]) };
                k += 1;
            }
            let mut w = [0u8; 8];
            for (i, b) in w.iter_mut().enumerate() {
                *b = pattern[(k + i) % p];
            }
            let word = u64::from_le_bytes(w);
            while k + 8 <= n {
                // SAFETY: inside the span and 8-byte aligned.
                unsafe { u64::store(d.add(k), word) };
                k += 8;
            }
        }
        while k < n {
            // SAFETY: inside the span.
            unsafe { u8::store(d.add(k), pattern[k % p]) };
            k += 1;
        }
    }

    /// Copies `data` to `va` (the whole range must lie in a writable span).
    pub fn write_bytes(&self, va: u64, data: &[u8]) {
        assert!(self.writable && self.contains(va, data.len() as u64));
        let p = self.at(va);
        for (i, x) in data.iter().enumerate() {
            // SAFETY: each byte is inside the writable span.
            unsafe { u8::store(p.add(i), *x) };
        }
    }
}

/// GPU memory of one GPU VM, as the driver model hands it to the hardware.
pub trait GpuMemory: Sync {
    /// Translates `va` for `access`: the span of contiguous memory that
    /// holds it (it may start before `va`), or the fault the access raises.
    fn translate(&self, va: u64, access: Access) -> Result<Span, Fault>;

    /// A number that changes whenever a span given out before may no
    /// longer be valid (memory freed, unmapped or moved). Spans are cached
    /// only while it stays the same.
    fn generation(&self) -> u64 {
        0
    }
}

/// A small cache of translated spans in front of a [`GpuMemory`]: the
/// hardware's TLB. Accesses that straddle two spans are split.
#[derive(Debug)]
pub struct Tlb<'m> {
    mem: &'m dyn GpuMemoryDebug,
    generation: u64,
    spans: Vec<Span>,
}

/// [`GpuMemory`] with `Debug` (what [`Tlb`] holds).
pub trait GpuMemoryDebug: GpuMemory + std::fmt::Debug {}
impl<T: GpuMemory + std::fmt::Debug> GpuMemoryDebug for T {}

/// Bytes a [`Tlb::copy`] or [`Tlb::fill`] moves between two looks at its
/// stop condition (a long copy notices that its queue was stopped).
pub const CHUNK: u64 = 1 << 20;

/// Spans a [`Tlb`] keeps.
const TLB_ENTRIES: usize = 16;

impl<'m> Tlb<'m> {
    /// An empty cache in front of `mem`.
    pub fn new(mem: &'m dyn GpuMemoryDebug) -> Tlb<'m> {
        Tlb {
            generation: mem.generation(),
            mem,
            spans: Vec::with_capacity(TLB_ENTRIES),
        }
    }

    /// Drops every cached span if the memory's generation moved.
    pub fn revalidate(&mut self) {
        let g = self.mem.generation();
        if g != self.generation {
            self.generation = g;
            self.spans.clear();
        }
    }

    /// The span holding `[va, va + size)` for `access`.
    #[inline]
    pub fn span(&mut self, va: u64, size: u64, access: Access) -> Result<&Span, Fault> {
        let write = access == Access::Write;
        if let Some(i) = self
            .spans
            .iter()
            .position(|s| s.contains(va, size) && (!write || s.writable))
        {
            return Ok(&self.spans[i]);
        }
        let s = self.mem.translate(va, access)?;
        if write && !s.writable {
            return Err(Fault {
                va,
                write,
                read_only: true,
            });
        }
        if !s.contains(va, size) {
            return Err(Fault::not_present(va, write));
        }
        if self.spans.len() == TLB_ENTRIES {
            self.spans.pop();
        }
        self.spans.insert(0, s);
        Ok(&self.spans[0])
    }

    /// Loads the word at `va`.
    #[inline]
    pub fn load<T: Word>(&mut self, va: u64) -> Result<T, Fault> {
        let n = T::SIZE as u64;
        let f = match self.span(va, n, Access::Read) {
            Ok(s) => return Ok(s.load(va)),
            Err(f) => f,
        };
        if f.va == va && !self.straddles(va, n) {
            return Err(f);
        }
        let mut b = [0u8; 8];
        self.read(va, &mut b[..T::SIZE])?;
        Ok(T::from_bytes(&b))
    }

    /// Stores the word at `va`.
    #[inline]
    pub fn store<T: Word>(&mut self, va: u64, v: T) -> Result<(), Fault> {
        let n = T::SIZE as u64;
        let f = match self.span(va, n, Access::Write) {
            Ok(s) => {
                s.store(va, v);
                return Ok(());
            }
            Err(f) => f,
        };
        if f.va == va && !self.straddles(va, n) {
            return Err(f);
        }
        let mut b = [0u8; 8];
        v.to_bytes(&mut b);
        self.write(va, &b[..T::SIZE])
    }

    /// Atomically replaces the word at `va` with `f(old)`; returns `old`.
    #[inline]
    pub fn update<T: Word>(&mut self, va: u64, f: &mut dyn FnMut(T) -> T) -> Result<T, Fault> {
        let s = self.span(va, T::SIZE as u64, Access::Write)?;
        Ok(s.update(va, f))
    }

    /// True if `[va, va + size)` crosses into another translation.
    fn straddles(&self, va: u64, size: u64) -> bool {
        match self.mem.translate(va, Access::Read) {
            Ok(s) => !s.contains(va, size),
            Err(_) => false,
        }
    }

    /// Copies `len` bytes from `src` to `dst` (as a DMA engine: not
    /// atomic as a whole) in steps of at most [`CHUNK`] bytes, asking
    /// `stop` before each; `Ok(false)` when it said stop (the copy is then
    /// incomplete).
    pub fn copy(
        &mut self,
        dst: u64,
        src: u64,
        len: u64,
        stop: &dyn Fn() -> bool,
    ) -> Result<bool, Fault> {
        let mut done = 0u64;
        while done < len {
            if done % CHUNK == 0 && stop() {
                return Ok(false);
            }
            let (s, d) = (src + done, dst + done);
            let from = self.span(s, 1, Access::Read)?.clone();
            let to = self.span(d, 1, Access::Write)?.clone();
            let n = (len - done)
                .min(from.va() + from.len() - s)
                .min(to.va() + to.len() - d)
                .min(CHUNK - done % CHUNK);
            from.copy_to(s, &to, d, n);
            done += n;
        }
        Ok(true)
    }

    /// Fills `len` bytes at `dst` with `pattern` repeated, in steps of at
    /// most [`CHUNK`] bytes asking `stop` before each; `Ok(false)` when it
    /// said stop.
    pub fn fill(
        &mut self,
        dst: u64,
        pattern: &[u8],
        len: u64,
        stop: &dyn Fn() -> bool,
    ) -> Result<bool, Fault> {
        let mut done = 0u64;
        while done < len {
            if done % CHUNK == 0 && stop() {
                return Ok(false);
            }
            let d = dst + done;
            let to = self.span(d, 1, Access::Write)?.clone();
            let n = (len - done)
                .min(to.va() + to.len() - d)
                .min(CHUNK - done % CHUNK);
            // Keep the pattern's phase across steps.
            let phase = (done % pattern.len() as u64) as usize;
            let rotated: Vec<u8> = pattern[phase..]
                .iter()
                .chain(&pattern[..phase])
                .copied()
                .collect();
            to.fill(d, &rotated, n);
            done += n;
        }
        Ok(true)
    }

    /// Reads `out.len()` bytes at `va`, across spans.
    pub fn read(&mut self, va: u64, out: &mut [u8]) -> Result<(), Fault> {
        let mut done = 0usize;
        while done < out.len() {
            let at = va + done as u64;
            let s = self.span(at, 1, Access::Read)?;
            let n = ((s.va() + s.len() - at) as usize).min(out.len() - done);
            s.read_bytes(at, &mut out[done..done + n]);
            done += n;
        }
        Ok(())
    }

    /// Writes `data` at `va`, across spans.
    pub fn write(&mut self, va: u64, data: &[u8]) -> Result<(), Fault> {
        let mut done = 0usize;
        while done < data.len() {
            let at = va + done as u64;
            let s = self.span(at, 1, Access::Write)?;
            let n = ((s.va() + s.len() - at) as usize).min(data.len() - done);
            s.write_bytes(at, &data[done..done + n]);
            done += n;
        }
        Ok(())
    }
}

/// A flat run of GPU memory at `[base, base + size)` owned by the value:
/// the GPU memory of unit tests and examples.
#[derive(Debug)]
pub struct FlatMemory {
    base: u64,
    words: Box<[AtomicU64]>,
    size: u64,
}

impl FlatMemory {
    /// `size` zeroed bytes at GPU address `base`.
    pub fn new(base: u64, size: u64) -> FlatMemory {
        FlatMemory {
            base,
            words: (0..size.div_ceil(8)).map(|_| AtomicU64::new(0)).collect(),
            size,
        }
    }

    /// The first address.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Bytes of memory.
    pub fn size(&self) -> u64 {
        self.size
    }

    fn span(&self) -> Span {
        let host = NonNull::new(self.words.as_ptr() as *mut u8).unwrap_or(NonNull::dangling());
        // SAFETY: the words live as long as `self`, every access to them is
        // atomic, and the generation never changes.
        unsafe { Span::new(self.base, self.size, host, true) }
    }

    /// Copies `data` to `va`.
    pub fn write(&self, va: u64, data: &[u8]) {
        self.span().write_bytes(va, data);
    }

    /// Reads `out.len()` bytes from `va`.
    pub fn read(&self, va: u64, out: &mut [u8]) {
        self.span().read_bytes(va, out);
    }

    /// Loads a word.
    pub fn load<T: Word>(&self, va: u64) -> T {
        self.span().load(va)
    }

    /// Stores a word.
    pub fn store<T: Word>(&self, va: u64, v: T) {
        self.span().store(va, v);
    }
}

impl GpuMemory for FlatMemory {
    fn translate(&self, va: u64, access: Access) -> Result<Span, Fault> {
        if va >= self.base && va - self.base < self.size {
            Ok(self.span())
        } else {
            Err(Fault::not_present(va, access == Access::Write))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_memory_loads_stores_and_faults() {
        let m = FlatMemory::new(0x1000, 64);
        let mut tlb = Tlb::new(&m);
        tlb.store::<u32>(0x1004, 0xdead_beef).unwrap();
        assert_eq!(tlb.load::<u32>(0x1004), Ok(0xdead_beef));
        assert_eq!(tlb.load::<u16>(0x1006), Ok(0xdead));
        // Misaligned.
        tlb.store::<u64>(0x1011, 0x0102_0304_0506_0708).unwrap();
        assert_eq!(tlb.load::<u64>(0x1011), Ok(0x0102_0304_0506_0708));
        assert_eq!(tlb.load::<u8>(0x1011), Ok(0x08));
        assert_eq!(
            tlb.load::<u32>(0x1040),
            Err(Fault::not_present(0x1040, false))
        );
        // Straddles the end: the fault names the first missing byte.
        assert_eq!(
            tlb.load::<u32>(0x103e),
            Err(Fault::not_present(0x1040, false))
        );
        let old = tlb
            .update::<u32>(0x1004, &mut |v| v.wrapping_add(1))
            .unwrap();
        assert_eq!(old, 0xdead_beef);
        assert_eq!(m.load::<u32>(0x1004), 0xdead_bef0);
    }
}
