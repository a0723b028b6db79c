//! The C `HsaEvent` of each event the border created, and the per-context
//! map from those structs' addresses back to the events ([`EventViews`]).
//! The C struct lives here, not in kfd-event, which speaks Rust types.

use std::mem::offset_of;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use hsakmt_sys::common::{
    HsaAccessAttributeFailure, HsaMemoryAccessFault, HsaSyncVar, HSA_EVENTID_MEMORYFLAGS,
};
use hsakmt_sys::since_6_2::HsaHwException;
use kfd_event::{EventError, EventRecord, ExceptionData, Waitable};

use crate::generation::abi;

/// Size of `HsaEvent` in every ABI generation.
const HSA_EVENT_SIZE: usize = 48;

// Word indices of `HsaEvent` (`#pragma pack(4)`: every field is at a
// multiple of 4 bytes), from hsakmt-sys's layout-tested declaration.
const W_EVENT_ID: usize = offset_of!(abi::HsaEvent, EventId) / 4;
const EVENT_DATA_BYTES: usize = offset_of!(abi::HsaEvent, EventData);
const W_EVENT_TYPE: usize = (EVENT_DATA_BYTES + offset_of!(abi::HsaEventData, EventType)) / 4;
const W_UNION: usize = (EVENT_DATA_BYTES + offset_of!(abi::HsaEventData, EventData)) / 4; // 5 words
const W_HWDATA1: usize = (EVENT_DATA_BYTES + offset_of!(abi::HsaEventData, HWData1)) / 4; // 2 words
const W_HWDATA2: usize = (EVENT_DATA_BYTES + offset_of!(abi::HsaEventData, HWData2)) / 4; // 2 words
const W_HWDATA3: usize = (EVENT_DATA_BYTES + offset_of!(abi::HsaEventData, HWData3)) / 4;
const WORDS: usize = HSA_EVENT_SIZE / 4;

// Word indices of the union members' fields (every member starts at the
// union's start): the sync variable, a memory fault, and a hardware
// exception (a member from 6.2 on; the words are the same in every
// generation).
const W_SYNC_VAR: usize = W_UNION + offset_of!(HsaSyncVar, SyncVar) / 4; // 2 words
const W_SYNC_VAR_SIZE: usize = W_UNION + offset_of!(HsaSyncVar, SyncVarSize) / 4; // 2 words
const W_FAULT_NODE: usize = W_UNION + offset_of!(HsaMemoryAccessFault, NodeId) / 4;
const W_FAULT_ADDRESS: usize = W_UNION + offset_of!(HsaMemoryAccessFault, VirtualAddress) / 4; // 2 words
const W_FAULT_FAILURE: usize = W_UNION + offset_of!(HsaMemoryAccessFault, Failure) / 4;
const W_FAULT_FLAGS: usize = W_UNION + offset_of!(HsaMemoryAccessFault, Flags) / 4;
const W_HW_NODE: usize = W_UNION + offset_of!(HsaHwException, NodeId) / 4;
const W_HW_RESET_TYPE: usize = W_UNION + offset_of!(HsaHwException, ResetType) / 4;
const W_HW_MEMORY_LOST: usize = W_UNION + offset_of!(HsaHwException, MemoryLost) / 4;
const W_HW_RESET_CAUSE: usize = W_UNION + offset_of!(HsaHwException, ResetCause) / 4;

/// The C `HsaEvent` of one event, as the C library's callers see it.
///
/// Stored as twelve 32-bit atomics, which have exactly the size and
/// alignment of the packed C struct: the address of this block is the
/// `HsaEvent *` handed to C, and the border updates fields (exception
/// data after a wait) with plain atomic stores while C may read them.
#[derive(Debug)]
pub(crate) struct CView {
    words: [AtomicU32; WORDS],
}

const _: () = {
    assert!(std::mem::size_of::<CView>() == HSA_EVENT_SIZE);
    assert!(std::mem::size_of::<abi::HsaEvent>() == HSA_EVENT_SIZE);
    assert!(std::mem::align_of::<CView>() == std::mem::align_of::<abi::HsaEvent>());
};

impl CView {
    /// A C struct of zeros (a slot not yet used).
    fn empty() -> CView {
        CView {
            words: std::array::from_fn(|_| AtomicU32::new(0)),
        }
    }

    /// Makes this the C struct of `e`: its id and type, the descriptor's
    /// sync variable in the union, then id, slot address and trigger data
    /// in `HWData1..3`, as the C library fills it (every other word 0).
    pub(crate) fn fill(&self, e: &EventRecord) {
        for w in &self.words {
            w.store(0, Ordering::Relaxed);
        }
        let d = e.descriptor();
        self.set(W_EVENT_ID, e.id());
        self.set(W_EVENT_TYPE, e.event_type().raw());
        self.set64(W_SYNC_VAR, d.sync_var);
        self.set64(W_SYNC_VAR_SIZE, d.sync_var_size);
        self.set64(W_HWDATA1, u64::from(e.id()));
        self.set64(W_HWDATA2, e.slot_address());
        self.set(W_HWDATA3, e.trigger_data());
    }

    fn set(&self, w: usize, v: u32) {
        self.words[w].store(v, Ordering::Release);
    }

    fn set64(&self, w: usize, v: u64) {
        self.set(w, v as u32);
        self.set(w + 1, (v >> 32) as u32);
    }

    pub(crate) fn addr(&self) -> usize {
        self.words.as_ptr() as usize
    }

    /// Stores what a wait reported into the union, as C does.
    pub(crate) fn write_exception(&self, x: &ExceptionData) {
        match x {
            ExceptionData::Memory(f) => {
                let mut failure = HsaAccessAttributeFailure::default();
                failure.set_NotPresent(f.failure.not_present.into());
                failure.set_ReadOnly(f.failure.read_only.into());
                failure.set_NoExecute(f.failure.no_execute.into());
                failure.set_Imprecise(f.failure.imprecise.into());
                failure.set_ErrorType(f.failure.error_type);
                failure.set_ECC(f.failure.ecc().into());
                self.set(W_FAULT_NODE, f.node_id);
                self.set64(W_FAULT_ADDRESS, f.virtual_address);
                self.set(W_FAULT_FAILURE, failure.0);
                // The only severity the C library reports.
                self.set(
                    W_FAULT_FLAGS,
                    HSA_EVENTID_MEMORYFLAGS::HSA_EVENTID_MEMORY_FATAL_PROCESS.0,
                );
            }
            ExceptionData::HwException(h) => {
                self.set(W_HW_NODE, h.node_id);
                self.set(W_HW_RESET_TYPE, h.reset_type);
                self.set(W_HW_MEMORY_LOST, h.memory_lost);
                self.set(W_HW_RESET_CAUSE, h.reset_cause);
            }
        }
    }
}

/// A C struct in the store's arena: 64 bytes, so that a pointer into a
/// chunk becomes a slot number with a subtraction and a shift.
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) struct Slot(CView);

/// Bytes per [`Slot`].
const SLOT_BYTES: usize = std::mem::size_of::<Slot>();
const _: () = assert!(SLOT_BYTES == 64);

/// Slots in the first chunk of the arena (64 KiB): most processes never
/// need a second, so a lookup is one range check. Each further chunk
/// doubles the last, so `n` events take about `log2(n / 1024)` chunks.
const FIRST_CHUNK: usize = 1024;

/// The first slot number of chunk `k`.
fn chunk_start(k: usize) -> usize {
    FIRST_CHUNK * ((1 << k) - 1)
}

/// A C struct of the arena, kept alive apart from the store (a wait
/// writes exception data into it after the store's lock is gone).
#[derive(Debug, Clone)]
pub(crate) struct ViewRef {
    chunk: Arc<[Slot]>,
    index: usize,
}

impl ViewRef {
    /// The C struct.
    pub(crate) fn view(&self) -> &CView {
        &self.chunk[self.index].0
    }
}

/// The C events of one context: their C structs in an arena of slots
/// that are never freed while the store lives (a slot is reused after
/// its event is destroyed), and per slot the event it holds, as its wait
/// entry (which names it to kfd-event).
///
/// Not a [`HandleTable`](super::handles::HandleTable): C reads the
/// struct an `HsaEvent *` points at (ROCr takes the event id and the
/// mailbox address from it), so the pointer must be the struct's address
/// and cannot be a token. A pointer is resolved by arithmetic (which
/// chunk holds it, then its slot), never dereferenced, so a foreign or
/// garbage pointer is an unknown event. The price of reuse: once an
/// event is destroyed, a later event may take its slot, and a stale
/// pointer then names that one (the C library's freed `HsaEvent` is
/// reused the same way by its allocator).
#[derive(Debug, Default)]
pub(crate) struct EventViews {
    /// The arena: chunk `k` holds slots `chunk_start(k)..` and is
    /// `FIRST_CHUNK << k` slots long.
    chunks: Vec<Arc<[Slot]>>,
    /// Per slot number, the live event it holds as a wait entry (16 bytes
    /// each, so that a wait, set or reset reads one compact array).
    waits: Vec<Option<Waitable>>,
    /// Slot numbers free for the next event, lowest last.
    free: Vec<u32>,
}

impl EventViews {
    /// The slot number of the C struct at `e`, if `e` is the start of
    /// one of the arena's slots: one range check for the first chunk.
    #[inline(always)]
    fn slot_of(&self, e: *const abi::HsaEvent) -> Option<usize> {
        let p = e as usize;
        let first = self.chunks.first()?;
        let off = p.wrapping_sub(first.as_ptr() as usize);
        if off < FIRST_CHUNK * SLOT_BYTES {
            return (off % SLOT_BYTES == 0).then_some(off / SLOT_BYTES);
        }
        self.slot_in_later_chunk(p)
    }

    /// [`EventViews::slot_of`] past the first chunk.
    #[cold]
    fn slot_in_later_chunk(&self, p: usize) -> Option<usize> {
        for (k, chunk) in self.chunks.iter().enumerate().skip(1) {
            let off = p.wrapping_sub(chunk.as_ptr() as usize);
            if off < chunk.len() * SLOT_BYTES {
                return (off % SLOT_BYTES == 0).then(|| chunk_start(k) + off / SLOT_BYTES);
            }
        }
        None
    }

    /// The chunk and index of slot `n`.
    fn locate(&self, n: usize) -> (&Arc<[Slot]>, usize) {
        let k = (usize::BITS - 1 - (n / FIRST_CHUNK + 1).leading_zeros()) as usize;
        (&self.chunks[k], n - chunk_start(k))
    }

    /// The wait entry of the event a C pointer names, with its slot
    /// number (for [`EventViews::view`]): NULL is
    /// [`EventError::NullEvent`], anything that is not a live event of
    /// this context (destroyed, another context's, garbage)
    /// [`EventError::UnknownEvent`]. Reads only the arena's first chunk
    /// address and the compact entry array.
    #[inline(always)]
    pub(crate) fn resolve(&self, e: *const abi::HsaEvent) -> Result<(Waitable, usize), EventError> {
        if e.is_null() {
            return Err(EventError::NullEvent);
        }
        let n = self.slot_of(e).ok_or(EventError::UnknownEvent)?;
        match self.waits.get(n) {
            Some(&Some(w)) => Ok((w, n)),
            _ => Err(EventError::UnknownEvent),
        }
    }

    /// The stored wait entries of the live events C pointers name, by
    /// reference (a wait pushes them from here, with no copy in between):
    /// what a lookup reads of the store, copied out once, so that a long
    /// wait list resolves with every value in registers.
    #[inline(always)]
    pub(crate) fn entries(&self) -> Entries<'_> {
        Entries {
            base: self.chunks.first().map_or(0, |c| c.as_ptr() as usize),
            first: &self.waits[..self.waits.len().min(FIRST_CHUNK)],
            views: self,
        }
    }

    /// The C struct of slot `n`, to keep past the store's lock.
    pub(crate) fn view(&self, n: usize) -> ViewRef {
        let (chunk, index) = self.locate(n);
        ViewRef {
            chunk: chunk.clone(),
            index,
        }
    }

    /// Keeps `e` in a free slot, its C struct filled; returns the
    /// `HsaEvent *` that names it.
    pub(crate) fn insert(&mut self, e: &EventRecord) -> *mut abi::HsaEvent {
        let n = match self.free.pop() {
            Some(n) => n as usize,
            None => self.grow(),
        };
        let (chunk, index) = self.locate(n);
        let view = &chunk[index].0;
        view.fill(e);
        let ptr = view.addr() as *mut abi::HsaEvent;
        self.waits[n] = Some(e.waitable());
        ptr
    }

    /// Adds a chunk twice the last one; returns its first slot (the
    /// others go to the free list).
    #[cold]
    fn grow(&mut self) -> usize {
        let k = self.chunks.len();
        let len = FIRST_CHUNK << k;
        let chunk: Arc<[Slot]> = (0..len).map(|_| Slot(CView::empty())).collect();
        self.chunks.push(chunk);
        let first = chunk_start(k);
        self.waits.resize(first + len, None);
        self.free
            .extend((first + 1..first + len).rev().map(|n| n as u32));
        first
    }

    /// Forgets the event `e` names (nothing if none); its slot is free
    /// for a later event.
    pub(crate) fn remove(&mut self, e: *const abi::HsaEvent) {
        if let Ok((_, n)) = self.resolve(e) {
            self.waits[n] = None;
            self.free.push(n as u32);
        }
    }
}

/// [`EventViews::entries`]: the first chunk's address and its entries.
/// [`Entries::get`] is `None` where [`EventViews::resolve`] fails.
pub(crate) struct Entries<'a> {
    base: usize,
    first: &'a [Option<Waitable>],
    views: &'a EventViews,
}

impl<'a> Entries<'a> {
    /// The entry of the event `e` names, if live. The first chunk's
    /// range check is [`EventViews::slot_of`]'s, repeated on purpose: built
    /// on `slot_of` (an `Option` of the slot, then a second bound check)
    /// a 64-event wait ran ~260 instructions more.
    #[inline(always)]
    pub(crate) fn get(&self, e: *const abi::HsaEvent) -> Option<&'a Waitable> {
        let off = (e as usize).wrapping_sub(self.base);
        if off < FIRST_CHUNK * SLOT_BYTES {
            if off % SLOT_BYTES != 0 {
                return None;
            }
            return self.first.get(off / SLOT_BYTES)?.as_ref();
        }
        let n = self.views.slot_in_later_chunk(e as usize)?;
        self.views.waits.get(n)?.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kfd_event::{AccessFailure, EventDescriptor, EventType, Events, MemoryFault};

    /// The C struct as C reads it.
    fn read(v: &CView) -> abi::HsaEvent {
        // SAFETY: `CView` has the size and alignment of `HsaEvent`
        // (checked at compile time), every bit pattern is a valid
        // `HsaEvent`, and nothing writes the view meanwhile.
        unsafe { std::ptr::read(v.addr() as *const abi::HsaEvent) }
    }

    #[test]
    fn c_view_word_indices_match_the_c_layout() {
        // The literals these indices replaced: a wrong offset_of! fails here.
        assert_eq!(
            [
                W_EVENT_ID,
                W_EVENT_TYPE,
                W_UNION,
                W_HWDATA1,
                W_HWDATA2,
                W_HWDATA3
            ],
            [0, 1, 2, 7, 9, 11]
        );
        // Inside the union: the literals (2 + n) these replaced.
        assert_eq!(
            [W_SYNC_VAR, W_SYNC_VAR_SIZE],
            [W_UNION, W_UNION + 2],
            "sync variable"
        );
        assert_eq!(
            [
                W_FAULT_NODE,
                W_FAULT_ADDRESS,
                W_FAULT_FAILURE,
                W_FAULT_FLAGS
            ],
            [W_UNION, W_UNION + 1, W_UNION + 3, W_UNION + 4],
            "memory fault"
        );
        assert_eq!(
            [
                W_HW_NODE,
                W_HW_RESET_TYPE,
                W_HW_MEMORY_LOST,
                W_HW_RESET_CAUSE
            ],
            [W_UNION, W_UNION + 1, W_UNION + 2, W_UNION + 3],
            "hardware exception"
        );
    }

    #[test]
    fn c_view_is_filled_from_the_typed_event() {
        let sim = kfd_sim::Sim::preset("mi210").unwrap();
        let topology = Arc::new(kfd_topology::Topology::snapshot(&sim).unwrap());
        let driver: Arc<dyn kfd_sys::Driver> = Arc::new(sim.clone());
        let kfd = Arc::new(kfd_sys::DeviceFile::open_kfd(driver).unwrap());
        let events = Events::new(kfd, Some(topology), None);
        let desc = EventDescriptor {
            sync_var: 0x1234_5678_9abc,
            sync_var_size: 8,
            ..EventDescriptor::new(EventType::Signal)
        };
        let e = events.create_record(&desc).unwrap();
        let v = CView::empty();
        v.fill(&e);
        let c = read(&v);
        assert_eq!({ c.EventId }, e.id());
        let d = c.EventData;
        assert_eq!(d.EventType.0, EventType::Signal.raw());
        assert_eq!({ d.HWData1 }, u64::from(e.id()));
        assert_ne!(e.slot_address(), 0);
        assert_eq!({ d.HWData2 }, e.slot_address());
        assert_eq!({ d.HWData3 }, e.trigger_data());
        // The union's SyncVar member: the variable, then its size.
        // SAFETY: plain-integer union member.
        let sv = unsafe { d.EventData.SyncVar };
        assert_eq!(sv.SyncVar.value(), 0x1234_5678_9abc);
        assert_eq!({ sv.SyncVarSize }, 8);

        v.write_exception(&ExceptionData::Memory(MemoryFault {
            node_id: 2,
            virtual_address: 0x7000_1000,
            failure: AccessFailure {
                not_present: true,
                error_type: 2,
                ..Default::default()
            },
        }));
        // SAFETY: plain-integer union member.
        let m = unsafe { read(&v).EventData.EventData.MemoryAccessFault };
        assert_eq!({ m.NodeId }, 2);
        assert_eq!({ m.VirtualAddress }, 0x7000_1000);
        let f = m.Failure;
        assert_eq!(
            (f.NotPresent(), f.ReadOnly(), f.ECC(), f.ErrorType()),
            (1, 0, 1, 2)
        );
        assert_eq!(
            m.Flags,
            HSA_EVENTID_MEMORYFLAGS::HSA_EVENTID_MEMORY_FATAL_PROCESS
        );
        events.destroy_resolved(&e.waitable()).unwrap();
    }

    /// Pointers go back to their events across chunks; anything else
    /// (inside a slot, before or past the arena, a freed slot) is an
    /// unknown event; a freed slot is taken again, its C struct refilled.
    #[test]
    fn arena_resolves_its_pointers_and_nothing_else() {
        let sim = kfd_sim::Sim::preset("mi210").unwrap();
        let topology = Arc::new(kfd_topology::Topology::snapshot(&sim).unwrap());
        let driver: Arc<dyn kfd_sys::Driver> = Arc::new(sim.clone());
        let kfd = Arc::new(kfd_sys::DeviceFile::open_kfd(driver).unwrap());
        let events = Events::new(kfd, Some(topology), None);
        let mut views = EventViews::default();
        // Two chunks: 1024 + some of 2048.
        let made: Vec<(*mut abi::HsaEvent, u32)> = (0..1100)
            .map(|_| {
                let e = events
                    .create_record(&EventDescriptor::new(EventType::Signal))
                    .unwrap();
                (views.insert(&e), e.id())
            })
            .collect();
        assert_eq!(views.chunks.len(), 2);
        for &(p, id) in &made {
            let (w, _) = views.resolve(p).unwrap();
            assert_eq!(w.id(), id);
            assert_eq!(views.entries().get(p), Some(&w));
            // SAFETY: a live slot's C struct, as C reads it.
            assert_eq!(unsafe { (*p).EventId }, id);
        }
        let (p0, _) = made[0];
        let inside = (p0 as usize + 4) as *const abi::HsaEvent;
        let before = (p0 as usize - SLOT_BYTES) as *const abi::HsaEvent;
        let last = views.chunks.last().unwrap();
        let past = (last.as_ptr() as usize + last.len() * SLOT_BYTES) as *const abi::HsaEvent;
        for bad in [inside, before, past] {
            assert_eq!(views.resolve(bad).unwrap_err(), EventError::UnknownEvent);
            assert_eq!(views.entries().get(bad), None);
        }
        assert_eq!(
            views.resolve(std::ptr::null()).unwrap_err(),
            EventError::NullEvent
        );
        let (second, _) = made[1070];
        let (gone, _) = views.resolve(second).unwrap();
        events.destroy_resolved(&gone).unwrap();
        views.remove(second);
        assert_eq!(
            views.entries().get(second),
            None,
            "a freed slot has no entry"
        );
        assert_eq!(views.resolve(second).unwrap_err(), EventError::UnknownEvent);
        let e = events
            .create_record(&EventDescriptor::new(EventType::Signal))
            .unwrap();
        let id = e.id();
        assert_eq!(views.insert(&e), second, "the freed slot is taken first");
        // SAFETY: as above.
        assert_eq!(unsafe { (*second).EventId }, id);
        for (p, _) in made {
            let (w, _) = views.resolve(p).unwrap();
            events.destroy_resolved(&w).unwrap();
            views.remove(p);
        }
        assert_eq!(events.live_count(), 0);
    }
}
