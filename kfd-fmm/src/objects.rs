//! Memory objects and the address -> object index.
//!
//! Objects are kept in shards, one per GPU plus one for host-only memory,
//! each behind its own lock. Inside a shard a `BTreeMap` keyed by start
//! address answers "which object contains this address" with one
//! `range(..=addr).next_back()` (O(log n)); userptr objects are indexed a
//! second time by their CPU address. Each shard publishes the address
//! span its objects lie in ([`Span`]), so a lookup by address locks only
//! the shards that can hold it.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use kfd_sys::mapping::Mapping;

use crate::aperture::Space;
use crate::flags::MemFlags;
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
    pub mapped: Vec<u32>,
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
    /// The node-id arrays pointer queries hand out (built on the first).
    pub node_arrays: Option<Box<NodeArrays>>,
    /// The CPU mappings of the object (its memory, and the mirror of an
    /// AQL ring behind it), shared with the [`crate::Buffer`] that owns
    /// it. Before `space`: they drop first.
    pub views: Vec<Arc<Mapping>>,
    /// Its address range, given back when the object drops.
    pub space: Space,
}

/// The registered and mapped node-id lists of an object as C reads them
/// through `HsaPointerInfo`: arrays owned by the object, so a pointer
/// handed out stays valid as long as the object lives, as in the C
/// library, where they belong to the VM object.
///
/// Each query rewrites them in place from the object's current lists
/// (atomic stores: a C reader of an earlier answer sees whole entries,
/// never torn ones). The mapped array has room for every GPU from the
/// start; a registered list longer than its array gets a new array and
/// the old one is kept until the object goes, so no handed-out pointer
/// ever dangles while the object lives.
#[derive(Debug)]
pub(crate) struct NodeArrays {
    registered: Box<[AtomicU32]>,
    mapped: Box<[AtomicU32]>,
    retired: Vec<Box<[AtomicU32]>>,
}

fn zeroed(n: usize) -> Box<[AtomicU32]> {
    (0..n).map(|_| AtomicU32::new(0)).collect()
}

/// Stores `nodes` at the start of `*array` (a larger array replaces it,
/// the old one moves to `retired`); returns the array and the count.
fn store_nodes(
    array: &mut Box<[AtomicU32]>,
    retired: &mut Vec<Box<[AtomicU32]>>,
    nodes: impl ExactSizeIterator<Item = u32>,
) -> (*const u32, usize) {
    let n = nodes.len();
    if n > array.len() {
        let bigger = zeroed(n.max(2 * array.len()));
        retired.push(std::mem::replace(array, bigger));
    }
    for (slot, node) in array.iter().zip(nodes) {
        slot.store(node, Ordering::Relaxed);
    }
    // `AtomicU32` has the size and alignment of `u32`.
    (array.as_ptr() as *const u32, n)
}

impl NodeArrays {
    /// Arrays sized for `gpus` GPUs.
    pub fn new(gpus: usize) -> Self {
        NodeArrays {
            registered: zeroed(gpus),
            mapped: zeroed(gpus),
            retired: Vec::new(),
        }
    }

    /// Writes the lists; returns `(registered, mapped)` as (array, count).
    pub fn store(
        &mut self,
        registered: impl ExactSizeIterator<Item = u32>,
        mapped: impl ExactSizeIterator<Item = u32>,
    ) -> ((*const u32, usize), (*const u32, usize)) {
        (
            store_nodes(&mut self.registered, &mut self.retired, registered),
            store_nodes(&mut self.mapped, &mut self.retired, mapped),
        )
    }
}

impl VmObject {
    pub fn new(space: Space, handle: Option<u64>, gpu_id: u32, aperture: ApId) -> Self {
        VmObject {
            start: space.addr,
            size: space.size,
            handle,
            gpu_id,
            aperture,
            mflags: MemFlags::empty(),
            node_id: 0,
            kind: Kind::Allocated,
            registered: Vec::new(),
            mapped: Vec::new(),
            mapping_count: 0,
            user_data: 0,
            share_fd: None,
            kernel_held: false,
            owned: false,
            node_arrays: None,
            views: Vec::new(),
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
#[derive(Debug)]
pub(crate) struct Span {
    lo: AtomicU64,
    hi: AtomicU64,
}

impl Default for Span {
    fn default() -> Self {
        Span {
            lo: AtomicU64::new(u64::MAX),
            hi: AtomicU64::new(0),
        }
    }
}

impl Span {
    /// Whether an object of the shard may contain `addr`.
    pub fn may_hold(&self, addr: u64) -> bool {
        addr >= self.lo.load(Ordering::Acquire) && addr < self.hi.load(Ordering::Acquire)
    }

    fn widen(&self, (lo, hi): (u64, u64)) {
        self.lo.fetch_min(lo, Ordering::AcqRel);
        self.hi.fetch_max(hi, Ordering::AcqRel);
    }

    fn clear(&self) {
        self.lo.store(u64::MAX, Ordering::Release);
        self.hi.store(0, Ordering::Release);
    }
}

/// One shard: the objects of one GPU (or of the host).
#[derive(Debug, Default)]
pub(crate) struct Shard {
    objs: BTreeMap<u64, VmObject>,
    /// CPU address -> start of the userptr object registered there.
    userptrs: BTreeMap<u64, u64>,
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
        self.objs.len()
    }

    pub fn insert(&mut self, obj: VmObject) {
        self.span.widen(obj.span());
        if let Some((addr, _)) = obj.userptr() {
            self.userptrs.insert(addr, obj.start);
        }
        self.objs.insert(obj.start, obj);
    }

    /// The start key of the object `addr` resolves to.
    pub fn find(&self, addr: u64, how: Lookup) -> Option<u64> {
        match how {
            Lookup::Exact { size } => {
                if let Some(&start) = self.userptrs.get(&addr) {
                    let o = &self.objs[&start];
                    if size == 0 || o.userptr().is_some_and(|(_, s)| s == size) {
                        return Some(start);
                    }
                }
                let page_off = addr & (PAGE_SIZE - 1);
                let o = self.objs.get(&(addr - page_off))?;
                if let Some((ua, us)) = o.userptr() {
                    // A userptr found by GPU address must match the page
                    // offset (and the size, if given) of the registration.
                    if ua & (PAGE_SIZE - 1) != page_off || (size != 0 && size != us) {
                        return None;
                    }
                }
                Some(o.start)
            }
            Lookup::Containing => {
                if let Some((_, &start)) = self.userptrs.range(..=addr).next_back() {
                    let (ua, us) = self.objs[&start].userptr().expect("indexed userptr");
                    if addr < ua.saturating_add(us.max(1)) {
                        return Some(start);
                    }
                }
                let (_, o) = self.objs.range(..=addr).next_back()?;
                (addr < o.start.saturating_add(o.size)).then_some(o.start)
            }
        }
    }

    pub fn get_mut(&mut self, start: u64) -> Option<&mut VmObject> {
        self.objs.get_mut(&start)
    }

    pub fn remove(&mut self, start: u64) -> Option<VmObject> {
        let o = self.objs.remove(&start)?;
        if let Some((addr, _)) = o.userptr() {
            self.userptrs.remove(&addr);
        }
        if self.objs.is_empty() {
            self.span.clear();
        }
        Some(o)
    }

    /// Removes and returns every object.
    pub fn drain(&mut self) -> Vec<VmObject> {
        self.userptrs.clear();
        self.span.clear();
        std::mem::take(&mut self.objs).into_values().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(start: u64, size: u64) -> VmObject {
        VmObject::new(
            Space::borrowed(start, size),
            Some(start),
            1,
            ApId::SvmDefault,
        )
    }

    #[test]
    fn containing_and_exact() {
        let mut s = Shard::default();
        s.insert(obj(0x10000, 0x2000));
        s.insert(obj(0x20000, 0x1000));
        assert_eq!(s.find(0x10000, Lookup::Containing), Some(0x10000));
        assert_eq!(s.find(0x11fff, Lookup::Containing), Some(0x10000));
        assert_eq!(s.find(0x12000, Lookup::Containing), None);
        assert_eq!(s.find(0xffff, Lookup::Containing), None);
        assert_eq!(s.find(0x10000, Lookup::Exact { size: 0 }), Some(0x10000));
        assert_eq!(s.find(0x11000, Lookup::Exact { size: 0 }), None);
        assert!(s.remove(0x10000).is_some());
        assert_eq!(s.find(0x10000, Lookup::Containing), None);
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
        s.remove(0x10000).unwrap();
        assert!(span.may_hold(0x5555_0010), "one object left");
        s.remove(0x7000_0000).unwrap();
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
            s.find(0x5555_0010, Lookup::Exact { size: 0 }),
            Some(0x7000_0000)
        );
        assert_eq!(
            s.find(0x5555_0010, Lookup::Exact { size: 0x1000 }),
            Some(0x7000_0000)
        );
        assert_eq!(s.find(0x5555_0010, Lookup::Exact { size: 0x2000 }), None);
        assert_eq!(s.find(0x5555_0500, Lookup::Containing), Some(0x7000_0000));
        // GPU address with the right page offset also resolves.
        assert_eq!(
            s.find(0x7000_0010, Lookup::Exact { size: 0 }),
            Some(0x7000_0000)
        );
        assert_eq!(s.find(0x7000_0020, Lookup::Exact { size: 0 }), None);
        assert_eq!(s.drain().len(), 1);
        assert_eq!(s.find(0x5555_0010, Lookup::Containing), None);
    }
}
