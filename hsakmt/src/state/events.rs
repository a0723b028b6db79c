//! The C `HsaEvent` of each event the border created, and the per-context
//! map from those structs' addresses back to the events ([`EventViews`]).
//! The C struct lives here, not in kfd-event, which speaks Rust types.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::mem::offset_of;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use hsakmt_sys::common::{
    HsaAccessAttributeFailure, HsaMemoryAccessFault, HsaSyncVar, HSA_EVENTID_MEMORYFLAGS,
};
use hsakmt_sys::since_6_2::HsaHwException;
use kfd_event::{Event, EventError, ExceptionData, Waitable};

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
    /// The C struct of `e`: its id and type, the descriptor's sync
    /// variable in the union, then id, slot address and trigger data in
    /// `HWData1..3`, as the C library fills it.
    pub(crate) fn new(e: &Event) -> CView {
        let c = CView {
            words: std::array::from_fn(|_| AtomicU32::new(0)),
        };
        let d = e.descriptor();
        c.set(W_EVENT_ID, e.id());
        c.set(W_EVENT_TYPE, e.event_type().raw());
        c.set64(W_SYNC_VAR, d.sync_var);
        c.set64(W_SYNC_VAR_SIZE, d.sync_var_size);
        c.set64(W_HWDATA1, u64::from(e.id()));
        c.set64(W_HWDATA2, e.slot_address());
        c.set(W_HWDATA3, e.trigger_data());
        c
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

/// One event the border handed to C: the handle and its C struct.
#[derive(Debug)]
pub(crate) struct CEvent {
    /// The kfd-event handle.
    pub(crate) event: Event,
    /// The event as a wait-list entry, made once (a wait on many events
    /// reads it from the store's record instead of the event's own).
    pub(crate) waitable: Waitable,
    /// The C struct; its address is the `HsaEvent *` C holds.
    pub(crate) view: CView,
}

/// Hashes the store's keys: addresses of C views this module allocated
/// (callers only probe with theirs), so one multiplication spreads them
/// well enough; SipHash costs ~20 ns per lookup, on every event call.
#[derive(Debug, Default)]
struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        let h = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// The C events of one context, keyed by the address of their C struct
/// (the `HsaEvent *` C holds).
///
/// Not a [`HandleTable`](super::handles::HandleTable): C reads the
/// struct an `HsaEvent *` points at (ROCr takes the event id and the
/// mailbox address from it), so the pointer must be the struct's address
/// and cannot be a token. The price: once an event is destroyed and its
/// struct freed, the allocator may give the address to a later event,
/// and a stale pointer then names that one (the C library's freed
/// `HsaEvent` is reused the same way); telling them apart would need the
/// structs never to be freed.
#[derive(Debug, Default)]
pub(crate) struct EventViews {
    map: HashMap<usize, Arc<CEvent>, BuildHasherDefault<AddrHasher>>,
}

impl EventViews {
    /// The event a C pointer names: NULL is [`EventError::NullEvent`],
    /// anything that is not a live event of this context (destroyed,
    /// another context's, garbage) [`EventError::UnknownEvent`].
    pub(crate) fn get(&self, e: *const abi::HsaEvent) -> Result<&Arc<CEvent>, EventError> {
        if e.is_null() {
            return Err(EventError::NullEvent);
        }
        self.map.get(&(e as usize)).ok_or(EventError::UnknownEvent)
    }

    /// Keeps `ce`; returns the `HsaEvent *` that names it.
    pub(crate) fn insert(&mut self, ce: Arc<CEvent>) -> *mut abi::HsaEvent {
        let ptr = ce.view.addr();
        self.map.insert(ptr, ce);
        ptr as *mut abi::HsaEvent
    }

    /// Forgets the event `e` names (nothing if none).
    pub(crate) fn remove(&mut self, e: *const abi::HsaEvent) {
        self.map.remove(&(e as usize));
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
        let e = events.create(&desc).unwrap();
        let v = CView::new(&e);
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
        events.destroy(&e).unwrap();
    }
}
