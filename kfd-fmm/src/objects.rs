//! Memory objects and the address -> object index.
//!
//! Objects are kept in shards, one per GPU plus one for host-only memory,
//! each behind its own lock. Inside a shard, "which object contains this
//! address" is a page-index lookup for objects of up to 16 pages (every
//! page they cover has an entry) and a `BTreeMap` range query (O(log n))
//! over the larger ones; userptr objects are indexed a second time by
//! their CPU address. Each shard publishes the address
//! span its objects lie in ([`Span`]), so a lookup by address locks only
//! the shards that can hold it, and its last pointer-query answer
//! ([`LastAnswer`]), so the same pointer queried again takes no lock.

use std::collections::{BTreeMap, HashMap};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use kfd_sync::SeqWords;
use kfd_sys::hash::OwnKeys;
use kfd_sys::mapping::Mapping;
use smallvec::SmallVec;

use crate::aperture::Space;
use crate::flags::MemFlags;
use crate::fmm::{PointerInfo, PointerType};
use crate::PAGE_SIZE;

/// Which aperture an object's address came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ApId {
    /// The SVM aperture for coarse-grained memory.
    SvmDefault,
    /// The SVM aperture for fine-grained (coherent) memory; the same range
    /// as `SvmDefault` when the apertures are mmap-managed.
    SvmCoherent,
    /// A GPU's own non-canonical GPUVM aperture (old APUs).
    Gpuvm(usize),
    /// The handle aperture of address-less allocations.
    MemHandle,
    /// Plain CPU memory on APUs (no GPU address management).
    CpuVm,
}

/// What an object is.
#[derive(Debug)]
pub(crate) enum Kind {
    /// Allocated by this context (VRAM, GTT, userptr-backed paged memory).
    Allocated,
    /// A virtual address reservation without memory (`OnlyAddress`).
    ReservedAddr,
    /// User memory registered through RegisterMemory*.
    Userptr {
        /// The (unaligned) CPU address registered.
        addr: u64,
        /// The size registered.
        size: u64,
        /// How many registrations share the BO.
        count: u32,
    },
    /// A graphics buffer imported from a dma-buf.
    Graphics {
        /// The metadata GET_DMABUF_INFO returned (owned by the object, as
        /// the C library keeps it with the VM object).
        #[allow(dead_code)]
        metadata: Vec<u8>,
    },
    /// Imported from another context or process through a share handle.
    Shared,
}

/// gpu_ids, inline up to four GPUs (a heap list beyond).
pub(crate) type GpuIds = SmallVec<[u32; 4]>;

/// One memory object.
#[derive(Debug)]
pub(crate) struct VmObject {
    pub start: u64,
    pub size: u64,
    /// Kernel BO handle; `None` for address-only objects and APU host memory.
    pub handle: Option<u64>,
    /// The gpu_id the BO was created on (0 for none).
    pub gpu_id: u32,
    pub aperture: ApId,
    pub mflags: MemFlags,
    pub node_id: u32,
    pub kind: Kind,
    /// gpu_ids the memory is registered to (empty: all GPUs).
    pub registered: Vec<u32>,
    /// gpu_ids the memory is mapped on.
    pub mapped: GpuIds,
    /// Mapping references (userptrs may be mapped more than once).
    pub mapping_count: u32,
    pub user_data: u64,
    /// A dma-buf exported for share handles; kept open while the object lives.
    pub share_fd: Option<OwnedFd>,
    /// The kernel refused to free the BO with `EPERM`: it holds the buffer
    /// for the life of the process (the event page handed to
    /// CREATE_EVENT). Teardown gives back the address range without
    /// asking again; the BO goes with the kernel process.
    pub kernel_held: bool,
    /// An RAII handle ([`crate::Buffer`]) owns the object: address-based
    /// free, unmap and deregister refuse it; only the handle releases it.
    pub owned: bool,
    /// The CPU mappings of the object (its memory, and the mirror of an
    /// AQL ring behind it), shared with the [`crate::Buffer`] that owns
    /// it. They drop before `space` (see the `Drop` impl).
    pub views: Views,
    /// Its address range, given back when the object drops.
    pub space: Space,
}

/// The CPU mappings of an object, in the order they were made. All
/// objects but scratch have at most two (the memory, and an AQL ring's
/// mirror), so two are kept inline: an allocation makes no vector.
#[derive(Debug, Default)]
pub(crate) struct Views {
    inline: [Option<Arc<Mapping>>; 2],
    more: Vec<Arc<Mapping>>,
}

impl Views {
    /// Adds a mapping after the others.
    pub fn push(&mut self, m: Arc<Mapping>) {
        match self.inline.iter_mut().find(|v| v.is_none()) {
            Some(free) if self.more.is_empty() => *free = Some(m),
            _ => self.more.push(m),
        }
    }

    /// The first mapping made.
    pub fn first(&self) -> Option<&Arc<Mapping>> {
        self.inline[0].as_ref()
    }

    /// No mappings.
    pub fn is_empty(&self) -> bool {
        self.inline[0].is_none()
    }

    /// Drops every mapping, first made first.
    pub fn clear(&mut self) {
        for v in &mut self.inline {
            *v = None;
        }
        self.more.clear();
    }
}

impl Drop for VmObject {
    fn drop(&mut self) {
        // A reservation of its own goes first, so the views drop last and
        // the range is unmapped once (see `Space::release_own`); then the
        // views, before a leased range goes back to its allocator.
        self.space.release_own();
        self.views.clear();
    }
}

/// What an object is, all known when it is made (the rest of
/// [`VmObject`] is its state: mappings, counts, user data).
#[derive(Debug)]
pub(crate) struct ObjectDesc {
    /// Kernel BO handle; `None` for address-only objects and APU host
    /// memory.
    pub handle: Option<u64>,
    /// The gpu_id the BO was created on (0 for none).
    pub gpu_id: u32,
    /// The aperture its address came from.
    pub aperture: ApId,
    /// The allocation flags.
    pub flags: MemFlags,
    /// The node the memory belongs to.
    pub node: u32,
    /// What it is.
    pub kind: Kind,
    /// gpu_ids the memory is registered to (empty: all GPUs).
    pub registered: Vec<u32>,
    /// An RAII handle owns it from the start.
    pub owned: bool,
}

impl VmObject {
    /// The object `desc` describes over `space`, mapped nowhere.
    pub fn new(space: Space, desc: ObjectDesc) -> Self {
        let ObjectDesc {
            handle,
            gpu_id,
            aperture,
            flags,
            node,
            kind,
            registered,
            owned,
        } = desc;
        VmObject {
            start: space.addr,
            size: space.size,
            handle,
            gpu_id,
            aperture,
            mflags: flags,
            node_id: node,
            kind,
            registered,
            mapped: GpuIds::new(),
            mapping_count: 0,
            user_data: 0,
            share_fd: None,
            kernel_held: false,
            owned,
            views: Views::default(),
            space,
        }
    }

    /// Whether the CPU has a view of the object.
    pub fn cpu_mapped(&self) -> bool {
        !self.views.is_empty()
    }

    /// The address range lookups can resolve to this object: its GPU
    /// range (at least a page) and, for userptrs, the CPU range.
    fn span(&self) -> (u64, u64) {
        let mut lo = self.start;
        let mut hi = self.start.saturating_add(self.size.max(PAGE_SIZE));
        if let Some((ua, us)) = self.userptr() {
            lo = lo.min(ua);
            hi = hi.max(ua.saturating_add(us.max(1)));
        }
        (lo, hi)
    }

    pub fn userptr(&self) -> Option<(u64, u64)> {
        match self.kind {
            Kind::Userptr { addr, size, .. } => Some((addr, size)),
            _ => None,
        }
    }
}

/// How an address is looked up.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Lookup {
    /// The object starting at the address's page (userptrs: registered at
    /// exactly this address, with this size unless 0), as the C thunk's
    /// `vm_find_object(addr, size)`.
    Exact { size: u64 },
    /// Any object containing the address.
    Containing,
}

/// The addresses `[lo, hi)` a shard's objects may be found at, readable
/// without the shard's lock. It only widens while the shard holds
/// objects and is emptied with the shard; both happen under the shard's
/// lock, before the objects change, so a lookup that skips a shard whose
/// span misses the address misses nothing that was there when it began.
/// With it, the shard's [`LastAnswer`].
#[derive(Debug)]
pub(crate) struct Span {
    lo: AtomicU64,
    hi: AtomicU64,
    /// The shard's last pointer-query answer, read without the lock.
    pub last: LastAnswer,
}

impl Default for Span {
    fn default() -> Self {
        Span {
            lo: AtomicU64::new(u64::MAX),
            hi: AtomicU64::new(0),
            last: LastAnswer::default(),
        }
    }
}

impl Span {
    /// Whether an object of the shard may contain `addr`.
    #[inline]
    pub fn may_hold(&self, addr: u64) -> bool {
        addr >= self.lo.load(Ordering::Acquire) && addr < self.hi.load(Ordering::Acquire)
    }

    /// Covers `lo..hi` too. Only the shard writes its span, under its
    /// lock: a load and a store, not a read-modify-write, suffice.
    fn widen(&self, (lo, hi): (u64, u64)) {
        if lo < self.lo.load(Ordering::Relaxed) {
            self.lo.store(lo, Ordering::Release);
        }
        if hi > self.hi.load(Ordering::Relaxed) {
            self.hi.store(hi, Ordering::Release);
        }
    }

    fn clear(&self) {
        self.lo.store(u64::MAX, Ordering::Release);
        self.hi.store(0, Ordering::Release);
    }
}

/// Objects of at most this many pages are indexed by every page they
/// cover ([`Shard::pages`]); larger ones by their start in a tree.
const SMALL_PAGES: u64 = 16;

/// A pointer query's answer ([`PointerInfo`]) as a shard keeps it per
/// slot until the object changes, beside the slab: one cache line, so a
/// repeated query of an unchanged object reads the page index and this
/// line only. `registered_count == u16::MAX` means nothing is kept (the
/// object changed since, or its lists are too long to keep here).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Kept {
    gpu_address: u64,
    cpu_address: u64,
    size: u64,
    user_data: u64,
    object: u64,
    generation: u64,
    node: u32,
    mem_flags: MemFlags,
    kind: PointerType,
    registered_count: u16,
    mapped_count: u16,
}

const _: () = assert!(std::mem::size_of::<Kept>() == 64);

impl Kept {
    const NONE: Kept = Kept {
        gpu_address: 0,
        cpu_address: 0,
        size: 0,
        user_data: 0,
        object: 0,
        generation: 0,
        node: 0,
        mem_flags: MemFlags::empty(),
        kind: PointerType::Unknown,
        registered_count: u16::MAX,
        mapped_count: 0,
    };

    /// `a` as kept, or nothing when a list is too long for 16 bits.
    fn of(a: &PointerInfo) -> Kept {
        let count = |n: u32| u16::try_from(n).ok().filter(|&n| n != u16::MAX);
        match (count(a.registered_count), count(a.mapped_count)) {
            (Some(registered_count), Some(mapped_count)) => Kept {
                gpu_address: a.gpu_address,
                cpu_address: a.cpu_address,
                size: a.size,
                user_data: a.user_data,
                object: a.object,
                generation: a.generation,
                node: a.node,
                mem_flags: a.mem_flags,
                kind: a.kind,
                registered_count,
                mapped_count,
            },
            _ => Kept::NONE,
        }
    }

    /// The record as eight words ([`LastAnswer`]).
    fn words(&self) -> [u64; 8] {
        [
            self.gpu_address,
            self.cpu_address,
            self.size,
            self.user_data,
            self.object,
            self.generation,
            u64::from(self.node) | u64::from(self.mem_flags.bits()) << 32,
            self.kind as u64
                | u64::from(self.registered_count) << 32
                | u64::from(self.mapped_count) << 48,
        ]
    }

    /// [`Kept::words`] back into a record ([`Kept::NONE`] for words that
    /// no record gives).
    #[inline(always)]
    fn from_words(w: [u64; 8]) -> Kept {
        // The discriminants `words` stores.
        let kind = match w[7] as u32 {
            0 => PointerType::Unknown,
            1 => PointerType::Allocated,
            2 => PointerType::RegisteredUser,
            3 => PointerType::RegisteredGraphics,
            4 => PointerType::RegisteredShared,
            5 => PointerType::ReservedAddr,
            _ => return Kept::NONE,
        };
        Kept {
            gpu_address: w[0],
            cpu_address: w[1],
            size: w[2],
            user_data: w[3],
            object: w[4],
            generation: w[5],
            node: w[6] as u32,
            mem_flags: MemFlags::from_bits_retain((w[6] >> 32) as u32),
            kind,
            registered_count: (w[7] >> 32) as u16,
            mapped_count: (w[7] >> 48) as u16,
        }
    }

    #[inline(always)]
    fn answer(&self) -> Option<PointerInfo> {
        (self.registered_count != u16::MAX).then_some(PointerInfo {
            kind: self.kind,
            node: self.node,
            mem_flags: self.mem_flags,
            cpu_address: self.cpu_address,
            gpu_address: self.gpu_address,
            size: self.size,
            user_data: self.user_data,
            registered_count: u32::from(self.registered_count),
            mapped_count: u32::from(self.mapped_count),
            object: self.object,
            generation: self.generation,
        })
    }
}

/// The last pointer query a shard answered, readable without the shard's
/// lock: the address asked (plus 1; 0 while empty) and the [`Kept`]
/// answer, under a sequence lock ([`kfd_sync::SeqWords`]). Written only
/// under the shard's lock: by the query that made the answer, and emptied
/// by every change of the shard (an object added, changed or removed)
/// before the change, so a reader that finds the address here gets what
/// the locked lookup would have answered at the moment it read the
/// sequence. A query repeated for the same address (the same buffer
/// asked about again and again) then costs a few loads instead of the
/// lock's two read-modify-writes and the index.
#[derive(Debug, Default)]
pub(crate) struct LastAnswer(SeqWords<9>);

impl LastAnswer {
    /// The kept answer for `addr`, if it is the last address answered and
    /// nothing changed since.
    #[inline(always)]
    pub fn get(&self, addr: u64) -> Option<PointerInfo> {
        let w = self.0.read_if(addr.checked_add(1)?)?;
        Kept::from_words(std::array::from_fn(|i| w[i + 1])).answer()
    }

    /// Keeps `kept` as the answer for `addr` (under the shard's lock).
    fn set(&self, addr: u64, kept: &Kept) {
        match addr.checked_add(1) {
            Some(key) if kept.registered_count != u16::MAX => {
                let words = kept.words();
                self.0.write(std::array::from_fn(
                    |i| if i == 0 { key } else { words[i - 1] },
                ));
            }
            _ => self.clear(),
        }
    }

    /// Forgets the answer (under the shard's lock, before a change).
    fn clear(&self) {
        if self.0.read_if(0).is_none() {
            self.0.write([0; 9]);
        }
    }
}

/// Where an object sits in its shard: what [`Shard::find`] returns and
/// [`Shard::get_mut`]/[`Shard::remove`] take. Valid until the object is
/// removed (slots are reused after that).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot(u32);

/// Pages per leaf of the [`PageIndex`].
const LEAF_PAGES: u64 = 64;

/// A [`Leaf`] entry's bit saying that the object covers the whole page
/// (so any address in the page is inside it, without reading the object).
const WHOLE_PAGE: u32 = 1 << 31;

/// The slots of [`LEAF_PAGES`] consecutive pages (slot + 1, with
/// [`WHOLE_PAGE`]; 0: none).
#[derive(Debug)]
struct Leaf {
    used: u32,
    slots: [u32; LEAF_PAGES as usize],
}

/// Page number -> slot of the small object covering that page: leaves of
/// 64 consecutive pages (256 KiB of address space each) kept side by side
/// in one vector and found through a small hash, so objects that the
/// allocators pack together share leaves and a lookup is a probe of a
/// small table, then one read of a dense array.
#[derive(Debug, Default)]
struct PageIndex {
    /// Leaf number (page / [`LEAF_PAGES`]) -> index in `leaves`.
    dir: HashMap<u64, u32, OwnKeys>,
    leaves: Vec<Leaf>,
    /// Indexes of emptied leaves, reused first.
    spare: Vec<u32>,
}

impl PageIndex {
    /// The slot covering `page`, and whether it covers all of it.
    #[inline]
    fn get(&self, page: u64) -> Option<(Slot, bool)> {
        let &leaf = self.dir.get(&(page / LEAF_PAGES))?;
        match self.leaves[leaf as usize].slots[(page % LEAF_PAGES) as usize] {
            0 => None,
            n => Some((Slot((n & !WHOLE_PAGE) - 1), n & WHOLE_PAGE != 0)),
        }
    }

    /// Puts `slot`, the object of `start` and `size`, on each of the
    /// pages `first..=last` if none of them has an object yet; `false`
    /// (nothing changed) otherwise. An object of one page (the common
    /// case) costs one look at its leaf.
    fn insert_free(
        &mut self,
        (first, last): (u64, u64),
        start: u64,
        size: u64,
        slot: Slot,
    ) -> bool {
        let end = start.saturating_add(size);
        let whole = |p: u64| start <= p * PAGE_SIZE && end >= (p + 1) * PAGE_SIZE;
        if first == last {
            let leaf = self.leaf_for(first / LEAF_PAGES);
            let leaf = &mut self.leaves[leaf as usize];
            let entry = &mut leaf.slots[(first % LEAF_PAGES) as usize];
            if *entry != 0 {
                return false;
            }
            leaf.used += 1;
            *entry = Self::entry(slot, whole(first));
            return true;
        }
        if !(first..=last).all(|p| self.get(p).is_none()) {
            return false;
        }
        for p in first..=last {
            self.insert(p, slot, whole(p));
        }
        true
    }

    /// The entry of `slot` in a leaf.
    fn entry(slot: Slot, whole: bool) -> u32 {
        (slot.0 + 1) | if whole { WHOLE_PAGE } else { 0 }
    }

    fn insert(&mut self, page: u64, slot: Slot, whole: bool) {
        let leaf = self.leaf_for(page / LEAF_PAGES);
        let leaf = &mut self.leaves[leaf as usize];
        let entry = &mut leaf.slots[(page % LEAF_PAGES) as usize];
        if *entry == 0 {
            leaf.used += 1;
        }
        *entry = Self::entry(slot, whole);
    }

    /// The index of leaf `key` in `leaves`, made (empty) if it has none.
    fn leaf_for(&mut self, key: u64) -> u32 {
        match self.dir.get(&key) {
            Some(&i) => i,
            None => {
                let empty = Leaf {
                    used: 0,
                    slots: [0; LEAF_PAGES as usize],
                };
                let i = match self.spare.pop() {
                    Some(i) => {
                        self.leaves[i as usize] = empty;
                        i
                    }
                    None => {
                        self.leaves.push(empty);
                        (self.leaves.len() - 1) as u32
                    }
                };
                self.dir.insert(key, i);
                i
            }
        }
    }

    fn remove(&mut self, page: u64) {
        let key = page / LEAF_PAGES;
        let Some(&i) = self.dir.get(&key) else {
            return;
        };
        let leaf = &mut self.leaves[i as usize];
        let entry = &mut leaf.slots[(page % LEAF_PAGES) as usize];
        if *entry != 0 {
            *entry = 0;
            leaf.used -= 1;
            if leaf.used == 0 {
                self.dir.remove(&key);
                self.spare.push(i);
            }
        }
    }

    fn clear(&mut self) {
        self.dir.clear();
        self.leaves.clear();
        self.spare.clear();
    }
}

/// The pages `[first, last]` an object of `start` and `size` covers (at
/// least one), or `None` when it has more than [`SMALL_PAGES`].
fn small_pages(start: u64, size: u64) -> Option<(u64, u64)> {
    let first = start / PAGE_SIZE;
    let last = start.saturating_add(size.max(1) - 1) / PAGE_SIZE;
    (last - first < SMALL_PAGES).then_some((first, last))
}

/// One shard: the objects of one GPU (or of the host).
///
/// The objects sit in a slab; an address finds its object through one of
/// two indexes, both keyed by GPU address: a page index of the small
/// objects ([`PageIndex`]: a constant number of reads, whatever the
/// number of objects: the lookup of `hsaKmtQueryPointerInfo` on the
/// buffers runtimes allocate by the thousand) and a tree of the larger
/// ones by start. Beside the slab, each slot keeps the last pointer-query
/// answer of its object ([`Kept`]). Objects of one
/// shard never overlap (the aperture allocators hand out disjoint
/// ranges); an object that would share a page with another goes to the
/// tree, so no entry is ever overwritten.
#[derive(Debug, Default)]
pub(crate) struct Shard {
    slab: Vec<Option<VmObject>>,
    /// Per slot: the object's kept pointer-query answer.
    kept: Vec<Kept>,
    /// Slots of removed objects, reused first.
    vacant: Vec<Slot>,
    /// Page number -> the small object covering it.
    pages: PageIndex,
    /// Start -> the objects not in `pages`.
    large: BTreeMap<u64, Slot>,
    /// CPU address -> the userptr object registered there.
    userptrs: BTreeMap<u64, Slot>,
    /// Where the objects are (shared with the memory manager).
    span: Arc<Span>,
}

impl Shard {
    /// A shard and its span.
    pub fn new() -> (Self, Arc<Span>) {
        let s = Shard::default();
        let span = s.span.clone();
        (s, span)
    }

    pub fn len(&self) -> usize {
        self.slab.len() - self.vacant.len()
    }

    fn obj(&self, slot: Slot) -> Option<&VmObject> {
        self.slab.get(slot.0 as usize)?.as_ref()
    }

    /// Adds `obj`; its pointer-query answer is made by the first query.
    #[cfg(test)]
    pub fn insert(&mut self, obj: VmObject) {
        self.place(obj, Kept::NONE);
    }

    /// Adds `obj`, with `answer` (its pointer-query answer) kept.
    pub fn insert_answered(&mut self, obj: VmObject, answer: &PointerInfo) {
        self.place(obj, Kept::of(answer));
    }

    fn place(&mut self, obj: VmObject, kept: Kept) {
        self.span.last.clear();
        self.span.widen(obj.span());
        let (start, size, userptr) = (obj.start, obj.size, obj.userptr());
        let slot = match self.vacant.pop() {
            Some(slot) => {
                self.slab[slot.0 as usize] = Some(obj);
                self.kept[slot.0 as usize] = kept;
                slot
            }
            None => {
                // 2^31 objects would need hundreds of GiB of VmObjects.
                let slot = Slot(self.slab.len() as u32);
                self.slab.push(Some(obj));
                self.kept.push(kept);
                slot
            }
        };
        if let Some((addr, _)) = userptr {
            self.userptrs.insert(addr, slot);
        }
        let paged = small_pages(start, size)
            .is_some_and(|pages| self.pages.insert_free(pages, start, size, slot));
        if !paged {
            self.large.insert(start, slot);
        }
    }

    /// The object that starts at `start` (a GPU address), if any.
    fn starting_at(&self, start: u64) -> Option<Slot> {
        match self.pages.get(start / PAGE_SIZE) {
            Some((slot, _)) if self.obj(slot).is_some_and(|o| o.start == start) => Some(slot),
            _ => self.large.get(&start).copied(),
        }
    }

    /// The object whose GPU range contains `addr`, if any.
    #[inline]
    fn containing(&self, addr: u64) -> Option<Slot> {
        let inside = |slot: Slot| {
            self.obj(slot)
                .is_some_and(|o| addr >= o.start && addr < o.start.saturating_add(o.size))
        };
        if let Some((slot, whole)) = self.pages.get(addr / PAGE_SIZE) {
            if whole || inside(slot) {
                return Some(slot);
            }
        }
        let (_, &slot) = self.large.range(..=addr).next_back()?;
        inside(slot).then_some(slot)
    }

    /// The slot of the object `addr` resolves to.
    #[inline]
    pub fn find(&self, addr: u64, how: Lookup) -> Option<Slot> {
        match how {
            Lookup::Exact { size } => {
                if let Some(&slot) = self.userptrs.get(&addr) {
                    let registered = self.obj(slot).and_then(VmObject::userptr);
                    if size == 0 || registered.is_some_and(|(_, s)| s == size) {
                        return Some(slot);
                    }
                }
                let page_off = addr & (PAGE_SIZE - 1);
                let slot = self.starting_at(addr - page_off)?;
                if let Some((ua, us)) = self.obj(slot).and_then(VmObject::userptr) {
                    // A userptr found by GPU address must match the page
                    // offset (and the size, if given) of the registration.
                    if ua & (PAGE_SIZE - 1) != page_off || (size != 0 && size != us) {
                        return None;
                    }
                }
                Some(slot)
            }
            Lookup::Containing => {
                if let Some((_, &slot)) = self.userptrs.range(..=addr).next_back() {
                    if let Some((ua, us)) = self.obj(slot).and_then(VmObject::userptr) {
                        if addr < ua.saturating_add(us.max(1)) {
                            return Some(slot);
                        }
                    }
                }
                self.containing(addr)
            }
        }
    }

    /// The object, to read.
    pub fn get(&self, slot: Slot) -> Option<&VmObject> {
        self.obj(slot)
    }

    /// The object, to change: its kept pointer-query answer is dropped.
    pub fn get_mut(&mut self, slot: Slot) -> Option<&mut VmObject> {
        self.span.last.clear();
        let o = self.slab.get_mut(slot.0 as usize)?.as_mut()?;
        self.kept[slot.0 as usize] = Kept::NONE;
        Some(o)
    }

    /// The pointer-query answer of the object: the one kept since it last
    /// changed, or `make`'s (given the object), which is kept.
    #[inline]
    pub fn answer(
        &mut self,
        slot: Slot,
        make: impl FnOnce(&VmObject) -> PointerInfo,
    ) -> Option<PointerInfo> {
        let kept = self.kept.get_mut(slot.0 as usize)?;
        if let Some(a) = kept.answer() {
            return Some(a);
        }
        let a = make(self.slab.get(slot.0 as usize)?.as_ref()?);
        *kept = Kept::of(&a);
        Some(a)
    }

    /// [`Shard::answer`] to a query of `addr`, also kept as the shard's
    /// [`LastAnswer`].
    #[inline]
    pub fn answer_for(
        &mut self,
        addr: u64,
        slot: Slot,
        make: impl FnOnce(&VmObject) -> PointerInfo,
    ) -> Option<PointerInfo> {
        let a = self.answer(slot, make)?;
        self.span.last.set(addr, &self.kept[slot.0 as usize]);
        Some(a)
    }

    /// Takes the object in `slot` out of the shard.
    ///
    /// The object is read in place and moved once, as the last step, so a
    /// caller that inlines this writes it straight where it wants it.
    #[inline]
    pub fn remove(&mut self, slot: Slot) -> Option<VmObject> {
        let i = slot.0 as usize;
        let o = self.slab.get(i)?.as_ref()?;
        let (start, size, userptr) = (o.start, o.size, o.userptr());
        self.span.last.clear();
        self.kept[i] = Kept::NONE;
        self.vacant.push(slot);
        if let Some((addr, _)) = userptr {
            self.userptrs.remove(&addr);
        }
        if self.large.get(&start) == Some(&slot) {
            self.large.remove(&start);
        } else if let Some((first, last)) = small_pages(start, size) {
            for p in first..=last {
                self.pages.remove(p);
            }
        }
        if self.len() == 0 {
            return self.remove_last(i);
        }
        self.slab[i].take()
    }

    /// [`Shard::remove`] of the last object (in slot `i`): the shard is
    /// emptied, its vectors too.
    #[cold]
    fn remove_last(&mut self, i: usize) -> Option<VmObject> {
        let o = self.slab[i].take();
        self.span.clear();
        self.slab.clear();
        self.kept.clear();
        self.vacant.clear();
        o
    }

    /// Removes the object that starts at `start` (a GPU address).
    pub fn remove_start(&mut self, start: u64) -> Option<VmObject> {
        let slot = self.starting_at(start)?;
        self.remove(slot)
    }

    /// Removes and returns every object.
    pub fn drain(&mut self) -> Vec<VmObject> {
        self.span.last.clear();
        self.userptrs.clear();
        self.pages.clear();
        self.large.clear();
        self.vacant.clear();
        self.span.clear();
        std::mem::take(&mut self.slab)
            .into_iter()
            .flatten()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(start: u64, size: u64) -> VmObject {
        let desc = ObjectDesc {
            handle: Some(start),
            gpu_id: 1,
            aperture: ApId::SvmDefault,
            flags: MemFlags::empty(),
            node: 0,
            kind: Kind::Allocated,
            registered: Vec::new(),
            owned: false,
        };
        VmObject::new(Space::borrowed(start, size), desc)
    }

    /// The start of the object `addr` resolves to.
    fn at(s: &Shard, addr: u64, how: Lookup) -> Option<u64> {
        s.find(addr, how).and_then(|k| s.obj(k)).map(|o| o.start)
    }

    #[test]
    fn views_keep_order_past_the_inline_two() {
        use kfd_sys::mman::Prot;
        let maps: Vec<Arc<Mapping>> = (0..3)
            .map(|_| Arc::new(Mapping::anonymous(4096, Prot::READ).unwrap()))
            .collect();
        let mut v = Views::default();
        assert!(v.is_empty() && v.first().is_none());
        for m in &maps {
            v.push(m.clone());
        }
        assert!(Arc::ptr_eq(v.first().unwrap(), &maps[0]));
        assert_eq!(Arc::strong_count(&maps[2]), 2, "the third spilled, held");
        v.clear();
        assert!(v.is_empty());
        assert!(
            maps.iter().all(|m| Arc::strong_count(m) == 1),
            "all dropped"
        );
    }

    #[test]
    fn small_and_large_objects_are_found_inside_and_not_past_their_end() {
        let mut s = Shard::default();
        // Small ones back to back (hashed by page), a 16-page one (the
        // most the page index takes), a 17-page and a 2 MiB one (tree).
        for i in 0..64u64 {
            s.insert(obj(0x100_0000 + i * 0x1000, 0x1000));
        }
        s.insert(obj(0x200_0000, 16 * 0x1000));
        s.insert(obj(0x300_0000, 17 * 0x1000));
        s.insert(obj(0x400_0000, 0x20_0000));
        assert_eq!(s.len(), 67);
        assert_eq!(s.large.len(), 2);
        for i in 0..64u64 {
            let start = 0x100_0000 + i * 0x1000;
            assert_eq!(at(&s, start + 0xfff, Lookup::Containing), Some(start));
            assert_eq!(at(&s, start, Lookup::Exact { size: 0 }), Some(start));
            assert_eq!(at(&s, start + 8, Lookup::Exact { size: 0 }), Some(start));
        }
        assert_eq!(at(&s, 0x104_0000, Lookup::Containing), None);
        for (start, size) in [
            (0x200_0000, 0x10000),
            (0x300_0000, 0x11000),
            (0x400_0000, 0x20_0000),
        ] {
            assert_eq!(at(&s, start, Lookup::Containing), Some(start));
            assert_eq!(at(&s, start + size - 1, Lookup::Containing), Some(start));
            assert_eq!(at(&s, start + size, Lookup::Containing), None);
            assert_eq!(at(&s, start + 0x1000, Lookup::Exact { size: 0 }), None);
        }
        // Removing frees the pages and reuses the slot.
        let gone = s.find(0x100_5000, Lookup::Containing).unwrap();
        assert_eq!(s.remove(gone).map(|o| o.start), Some(0x100_5000));
        assert_eq!(at(&s, 0x100_5000, Lookup::Containing), None);
        assert!(s.remove(gone).is_none(), "a removed slot is empty");
        s.insert(obj(0x900_0000, 0x1000));
        assert_eq!(s.find(0x900_0000, Lookup::Containing), Some(gone));
        assert_eq!(s.remove_start(0x400_0000).map(|o| o.size), Some(0x20_0000));
        assert_eq!(at(&s, 0x400_0000, Lookup::Containing), None);
        assert_eq!(s.drain().len(), 66);
        assert_eq!(s.len(), 0);
        assert_eq!(at(&s, 0x200_0000, Lookup::Containing), None);
    }

    #[test]
    fn a_kept_answer_lasts_until_the_object_changes() {
        let mut s = Shard::default();
        s.insert(obj(0x10000, 0x1000));
        let slot = s.find(0x10000, Lookup::Containing).unwrap();
        let made = std::cell::Cell::new(0);
        let make = |o: &VmObject| {
            made.set(made.get() + 1);
            PointerInfo {
                user_data: o.user_data,
                generation: made.get(),
                ..info_at(o.start, 0)
            }
        };
        assert_eq!(s.answer(slot, make).unwrap().user_data, 0);
        assert_eq!(s.answer(slot, make).unwrap().generation, 1, "kept");
        assert_eq!(made.get(), 1, "kept");
        s.get_mut(slot).unwrap().user_data = 7;
        assert_eq!(s.answer(slot, make).unwrap().user_data, 7, "made again");
        assert_eq!(s.answer(slot, make).unwrap().generation, 2);
        assert_eq!(made.get(), 2);
        s.remove(slot).unwrap();
        assert!(s.answer(slot, make).is_none(), "no object, no answer");
    }

    fn info_at(addr: u64, user_data: u64) -> PointerInfo {
        PointerInfo {
            kind: PointerType::RegisteredGraphics,
            node: 1,
            mem_flags: MemFlags::from_bits_retain(0x2a),
            cpu_address: addr,
            gpu_address: addr,
            size: 0x1000,
            user_data,
            registered_count: 2,
            mapped_count: 1,
            object: addr,
            generation: user_data + 1,
        }
    }

    /// The last answer is read back whole for its own address only, and
    /// every change of the shard (added, changed, removed) forgets it.
    #[test]
    fn the_last_answer_lasts_until_the_shard_changes() {
        let (mut s, span) = Shard::new();
        s.insert(obj(0x10000, 0x1000));
        let slot = s.find(0x10000, Lookup::Containing).unwrap();
        let make = |o: &VmObject| info_at(o.start, o.user_data);
        let ask = |s: &mut Shard, addr| s.answer_for(addr, slot, make).unwrap();
        assert_eq!(span.last.get(0x10010), None, "nothing asked yet");
        let a = ask(&mut s, 0x10010);
        assert_eq!(span.last.get(0x10010), Some(a), "the whole answer");
        assert_eq!(span.last.get(0x10000), None, "another address");
        s.get_mut(slot).unwrap().user_data = 7;
        assert_eq!(span.last.get(0x10010), None, "changed");
        assert_eq!(ask(&mut s, 0x10010).user_data, 7);
        assert_eq!(span.last.get(0x10010).map(|a| a.user_data), Some(7));
        s.insert(obj(0x20000, 0x1000));
        assert_eq!(span.last.get(0x10010), None, "another object added");
        ask(&mut s, 0x10010);
        s.remove_start(0x20000).unwrap();
        assert_eq!(span.last.get(0x10010), None, "another object removed");
        ask(&mut s, 0x10010);
        s.drain();
        assert_eq!(span.last.get(0x10010), None, "drained");
        // The one address that has no key is never kept.
        span.last.set(u64::MAX, &Kept::of(&a));
        assert_eq!(span.last.get(u64::MAX), None);
    }

    /// Readers racing a writer that keeps rewriting the answer never see
    /// a torn one: every field of an answer read comes from one write.
    #[test]
    fn a_last_answer_is_never_torn() {
        let last = LastAnswer::default();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let hits = AtomicU64::new(0);
        std::thread::scope(|sc| {
            for _ in 0..2 {
                sc.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        if let Some(a) = last.get(0x5000) {
                            let v = a.user_data;
                            assert_eq!(a, info_at(v << 12, v), "torn");
                            hits.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
            let mut v = 0u64;
            // On until the readers have seen answers (a loaded machine
            // may not run them at first), unless they stopped (a reader
            // that saw a torn answer panicked).
            while v < 20_000 || (hits.load(Ordering::Relaxed) < 1000 && v < 50_000_000) {
                v += 1;
                last.set(0x5000, &Kept::of(&info_at(v << 12, v)));
                if v % 7 == 0 {
                    last.clear();
                }
            }
            stop.store(true, Ordering::Relaxed);
        });
        assert!(hits.load(Ordering::Relaxed) >= 1000);
    }

    #[test]
    fn an_object_sharing_a_page_goes_to_the_tree() {
        let mut s = Shard::default();
        s.insert(obj(0x10000, 0x800));
        // Overlaps nothing of the first but its page: indexed by start.
        s.insert(obj(0x10800, 0x800));
        assert_eq!(s.large.len(), 1);
        assert_eq!(at(&s, 0x107ff, Lookup::Containing), Some(0x10000));
        assert_eq!(at(&s, 0x10800, Lookup::Containing), Some(0x10800));
        assert_eq!(s.remove_start(0x10800).map(|o| o.start), Some(0x10800));
        assert_eq!(
            at(&s, 0x10000, Lookup::Containing),
            Some(0x10000),
            "page kept"
        );
    }

    #[test]
    fn containing_and_exact() {
        let mut s = Shard::default();
        s.insert(obj(0x10000, 0x2000));
        s.insert(obj(0x20000, 0x1000));
        assert_eq!(at(&s, 0x10000, Lookup::Containing), Some(0x10000));
        assert_eq!(at(&s, 0x11fff, Lookup::Containing), Some(0x10000));
        assert_eq!(at(&s, 0x12000, Lookup::Containing), None);
        assert_eq!(at(&s, 0xffff, Lookup::Containing), None);
        assert_eq!(at(&s, 0x10000, Lookup::Exact { size: 0 }), Some(0x10000));
        assert_eq!(at(&s, 0x11000, Lookup::Exact { size: 0 }), None);
        assert!(s.remove_start(0x10000).is_some());
        assert_eq!(at(&s, 0x10000, Lookup::Containing), None);
    }

    #[test]
    fn span_covers_objects_and_userptrs_until_empty() {
        let (mut s, span) = Shard::new();
        assert!(!span.may_hold(0x10000));
        s.insert(obj(0x10000, 0x2000));
        let mut u = obj(0x7000_0000, 0x1000);
        u.kind = Kind::Userptr {
            addr: 0x5555_0010,
            size: 0x10,
            count: 1,
        };
        s.insert(u);
        for a in [0x10000, 0x11fff, 0x5555_0010, 0x5555_001f, 0x7000_0fff] {
            assert!(span.may_hold(a), "{a:#x}");
        }
        assert!(!span.may_hold(0xffff));
        assert!(!span.may_hold(0x7000_1000));
        s.remove_start(0x10000).unwrap();
        assert!(span.may_hold(0x5555_0010), "one object left");
        s.remove_start(0x7000_0000).unwrap();
        assert!(!span.may_hold(0x5555_0010), "empty shard");
        s.insert(obj(0x20000, 0x1000));
        assert!(span.may_hold(0x20000) && !span.may_hold(0x10000));
        s.drain();
        assert!(!span.may_hold(0x20000));
    }

    #[test]
    fn userptr_lookup() {
        let mut s = Shard::default();
        let mut o = obj(0x7000_0000, 0x2000);
        o.kind = Kind::Userptr {
            addr: 0x5555_0010,
            size: 0x1000,
            count: 1,
        };
        s.insert(o);
        assert_eq!(
            at(&s, 0x5555_0010, Lookup::Exact { size: 0 }),
            Some(0x7000_0000)
        );
        assert_eq!(
            at(&s, 0x5555_0010, Lookup::Exact { size: 0x1000 }),
            Some(0x7000_0000)
        );
        assert_eq!(at(&s, 0x5555_0010, Lookup::Exact { size: 0x2000 }), None);
        assert_eq!(at(&s, 0x5555_0500, Lookup::Containing), Some(0x7000_0000));
        // GPU address with the right page offset also resolves.
        assert_eq!(
            at(&s, 0x7000_0010, Lookup::Exact { size: 0 }),
            Some(0x7000_0000)
        );
        assert_eq!(at(&s, 0x7000_0020, Lookup::Exact { size: 0 }), None);
        assert_eq!(s.drain().len(), 1);
        assert_eq!(at(&s, 0x5555_0010, Lookup::Containing), None);
    }

    /// An object added with its answer is answered without being read
    /// (the first query of a new buffer); a change forgets the answer, and
    /// the next query makes a new one.
    #[test]
    fn an_answer_given_at_insert_is_kept_until_a_change() {
        let mut s = Shard::default();
        let given = PointerInfo {
            kind: PointerType::Allocated,
            node: 3,
            mem_flags: MemFlags::empty(),
            cpu_address: 0x10000,
            gpu_address: 0x10000,
            size: 0x1000,
            user_data: 7,
            registered_count: 0,
            mapped_count: 0,
            object: 0x10000,
            generation: 41,
        };
        s.insert_answered(obj(0x10000, 0x1000), &given);
        let slot = s.find(0x10800, Lookup::Containing).unwrap();
        let never = |_: &VmObject| -> PointerInfo { panic!("the kept answer was not used") };
        assert_eq!(s.answer_for(0x10800, slot, never), Some(given));
        s.get_mut(slot).unwrap().user_data = 9;
        let remade = PointerInfo {
            user_data: 9,
            generation: 42,
            ..given
        };
        assert_eq!(
            s.answer(slot, |o| PointerInfo {
                user_data: o.user_data,
                ..remade
            }),
            Some(remade)
        );
        assert_eq!(s.answer(slot, never), Some(remade), "kept again");
    }
}
