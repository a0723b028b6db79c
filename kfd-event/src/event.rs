//! Event kinds, descriptors, the [`Event`] handle and its C view.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Weak};

use hsakmt_sys::common::{
    HsaAccessAttributeFailure, HsaEventDescriptor, HsaMemoryAccessFault, HsaSyncVar,
    HsaSyncVarData, HSA_EVENTID_MEMORYFLAGS, HSA_EVENTTYPE,
};
use hsakmt_sys::newest;

use crate::error::EventError;

/// `HSA_EVENTTYPE`: what signals an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// User-mode signal (set by the CPU or by GPU code through the slot).
    Signal,
    /// A node was added or removed.
    NodeChange,
    /// A device started or stopped.
    DeviceStateChange,
    /// GPU hardware exception (reset); waits return [`HwException`] data.
    HwException,
    /// GPU system call.
    System,
    /// Debugger signal (behaves like [`EventType::Signal`]).
    Debug,
    /// Profiling signal.
    Profile,
    /// Queue idle.
    Queue,
    /// GPU memory fault; waits return [`MemoryFault`] data.
    Memory,
}

impl EventType {
    /// Every type, in `HSA_EVENTTYPE` order.
    pub const ALL: [EventType; 9] = [
        EventType::Signal,
        EventType::NodeChange,
        EventType::DeviceStateChange,
        EventType::HwException,
        EventType::System,
        EventType::Debug,
        EventType::Profile,
        EventType::Queue,
        EventType::Memory,
    ];

    /// From the C value; `None` for values `>= HSA_EVENTTYPE_MAXID`.
    pub fn from_raw(v: u32) -> Option<EventType> {
        Self::ALL.get(v as usize).copied()
    }

    /// The C value (also the `KFD_IOC_EVENT_*` value).
    pub fn raw(self) -> u32 {
        self as u32
    }

    /// Events the system signals: everything except SIGNAL and
    /// DEBUG_EVENT. They cannot be set or reset from user mode, and only
    /// SIGNAL/DEBUG events get a slot in the event page.
    pub fn is_system(self) -> bool {
        !matches!(self, EventType::Signal | EventType::Debug)
    }
}

/// What event to create (`HsaEventDescriptor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventDescriptor {
    /// The kind of event.
    pub event_type: EventType,
    /// The node of the source device (for node-specific kinds).
    pub node_id: u32,
    /// Address of the user sync variable (copied into the event data).
    pub sync_var: u64,
    /// Size of the user sync variable.
    pub sync_var_size: u64,
}

impl EventDescriptor {
    /// A descriptor of `event_type` on node 0 without a sync variable.
    pub fn new(event_type: EventType) -> Self {
        EventDescriptor {
            event_type,
            node_id: 0,
            sync_var: 0,
            sync_var_size: 0,
        }
    }

    /// Converts the C descriptor; an unknown type is
    /// [`EventError::InvalidEventType`].
    pub fn from_hsa(d: &HsaEventDescriptor) -> Result<Self, EventError> {
        let raw = d.EventType;
        let event_type = EventType::from_raw(raw.0).ok_or(EventError::InvalidEventType(raw.0))?;
        let sv = d.SyncVar;
        Ok(EventDescriptor {
            event_type,
            node_id: d.NodeId,
            sync_var: sv.SyncVar.value(),
            sync_var_size: sv.SyncVarSize,
        })
    }
}

/// Memory fault data a wait returns for a [`EventType::Memory`] event
/// (`HsaMemoryAccessFault`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryFault {
    /// Node of the faulting GPU.
    pub node_id: u32,
    /// Faulting virtual address.
    pub virtual_address: u64,
    /// Why the access failed.
    pub failure: HsaAccessAttributeFailure,
    /// Severity (always `HSA_EVENTID_MEMORY_FATAL_PROCESS`, as in C).
    pub flags: HSA_EVENTID_MEMORYFLAGS,
}

/// Hardware exception data a wait returns for a
/// [`EventType::HwException`] event (`HsaHwException`, newest ABI).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HwException {
    /// Node of the GPU.
    pub node_id: u32,
    /// Reset type.
    pub reset_type: u32,
    /// Non-zero if VRAM contents were lost.
    pub memory_lost: u32,
    /// Cause (`HSA_EVENTID_HW_EXCEPTION_CAUSE`).
    pub reset_cause: u32,
}

/// Size of `HsaEvent` in both ABI generations.
pub const HSA_EVENT_SIZE: usize = 48;

// Word indices of `HsaEvent` (`#pragma pack(4)`: every field is at a
// multiple of 4 bytes).
const W_EVENT_ID: usize = 0;
const W_EVENT_TYPE: usize = 1;
const W_UNION: usize = 2; // 5 words
const W_HWDATA1: usize = 7; // 2 words
const W_HWDATA2: usize = 9; // 2 words
const W_HWDATA3: usize = 11;
const WORDS: usize = HSA_EVENT_SIZE / 4;

/// The C `HsaEvent` of one event, as the C library's callers see it.
///
/// Stored as twelve 32-bit atomics, which have exactly the size and
/// alignment of the packed C struct: the address of this block is the
/// `HsaEvent *` handed to C, and the library updates fields (exception
/// data after a wait) with plain atomic stores, without `unsafe`.
pub(crate) struct CView {
    words: [AtomicU32; WORDS],
}

impl CView {
    fn new() -> Self {
        CView {
            words: std::array::from_fn(|_| AtomicU32::new(0)),
        }
    }

    fn set(&self, w: usize, v: u32) {
        self.words[w].store(v, Ordering::Release);
    }

    fn set64(&self, w: usize, v: u64) {
        self.set(w, v as u32);
        self.set(w + 1, (v >> 32) as u32);
    }

    fn get(&self, w: usize) -> u32 {
        self.words[w].load(Ordering::Acquire)
    }

    fn get64(&self, w: usize) -> u64 {
        self.get(w) as u64 | (self.get(w + 1) as u64) << 32
    }

    pub(crate) fn addr(&self) -> usize {
        self.words.as_ptr() as usize
    }

    pub(crate) fn write_memory_fault(&self, f: &MemoryFault) {
        self.set(W_UNION, f.node_id);
        self.set64(W_UNION + 1, f.virtual_address);
        self.set(W_UNION + 3, f.failure.0);
        self.set(W_UNION + 4, f.flags.0);
    }

    pub(crate) fn write_hw_exception(&self, h: &HwException) {
        self.set(W_UNION, h.node_id);
        self.set(W_UNION + 1, h.reset_type);
        self.set(W_UNION + 2, h.memory_lost);
        self.set(W_UNION + 3, h.reset_cause);
    }

    fn snapshot(&self) -> newest::HsaEvent {
        let u = newest::HsaEventDataUnion {
            MemoryAccessFault: HsaMemoryAccessFault {
                NodeId: self.get(W_UNION),
                VirtualAddress: self.get64(W_UNION + 1),
                Failure: HsaAccessAttributeFailure(self.get(W_UNION + 3)),
                Flags: HSA_EVENTID_MEMORYFLAGS(self.get(W_UNION + 4)),
            },
        };
        newest::HsaEvent {
            EventId: self.get(W_EVENT_ID),
            EventData: newest::HsaEventData {
                EventType: HSA_EVENTTYPE(self.get(W_EVENT_TYPE)),
                EventData: u,
                HWData1: self.get64(W_HWDATA1),
                HWData2: self.get64(W_HWDATA2),
                HWData3: self.get(W_HWDATA3),
            },
        }
    }
}

/// Identity of the [`crate::Events`] that owns an event.
pub(crate) type Owner = Weak<crate::events::Shared>;

/// The state of one live event.
pub(crate) struct EventObj {
    pub(crate) owner: Owner,
    pub(crate) id: u32,
    pub(crate) ty: EventType,
    pub(crate) auto_reset: bool,
    pub(crate) slot: Option<u32>,
    pub(crate) c: Box<CView>,
}

impl EventObj {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        owner: Owner,
        desc: &EventDescriptor,
        id: u32,
        auto_reset: bool,
        slot: Option<u32>,
        slot_addr: u64,
        trigger: u32,
    ) -> EventObj {
        let c = Box::new(CView::new());
        c.set(W_EVENT_ID, id);
        c.set(W_EVENT_TYPE, desc.event_type.raw());
        // The sync variable goes into the union's SyncVar member.
        c.set64(W_UNION, desc.sync_var);
        c.set64(W_UNION + 2, desc.sync_var_size);
        c.set64(W_HWDATA1, id as u64);
        c.set64(W_HWDATA2, slot_addr);
        c.set(W_HWDATA3, trigger);
        EventObj {
            owner,
            id,
            ty: desc.event_type,
            auto_reset,
            slot,
            c,
        }
    }
}

/// A handle to an event of one context.
///
/// Cheap to clone; all clones name the same event. The event lives until
/// [`crate::Events::destroy`] (or the context's teardown); using a handle
/// after that, or with another context's [`crate::Events`], is an error
/// ([`EventError::UnknownEvent`] / [`EventError::ForeignEvent`]), never
/// undefined behaviour.
#[derive(Clone)]
pub struct Event {
    pub(crate) obj: Arc<EventObj>,
}

impl Event {
    /// The kernel event id (`HsaEvent::EventId`).
    pub fn id(&self) -> u32 {
        self.obj.id
    }

    /// The event's kind.
    pub fn event_type(&self) -> EventType {
        self.obj.ty
    }

    /// True for auto-reset events (created with `ManualReset == false`).
    pub fn auto_reset(&self) -> bool {
        self.obj.auto_reset
    }

    /// The event's slot in the event page, if it has one (signal and debug
    /// events).
    pub fn slot(&self) -> Option<u32> {
        self.obj.slot
    }

    /// The address of the event's 64-bit slot in the event page
    /// (`HsaEvent::EventData.HWData2`), 0 if it has none.
    pub fn slot_address(&self) -> u64 {
        self.obj.c.get64(W_HWDATA2)
    }

    /// The C struct the `hsakmt` border hands out: its address is the
    /// `HsaEvent *` C callers hold. Stable for the event's lifetime;
    /// [`crate::Events::lookup`] maps it back to this handle.
    pub fn as_hsa_ptr(&self) -> *mut newest::HsaEvent {
        self.obj.c.addr() as *mut newest::HsaEvent
    }

    /// A copy of the C struct (both ABI generations share this layout; the
    /// union is returned as its memory-fault member, which covers all 20
    /// bytes).
    pub fn hsa_event(&self) -> newest::HsaEvent {
        self.obj.c.snapshot()
    }

    /// The memory fault data the last completed wait stored in the event
    /// (meaningful for [`EventType::Memory`] events).
    pub fn memory_fault(&self) -> MemoryFault {
        let c = &self.obj.c;
        MemoryFault {
            node_id: c.get(W_UNION),
            virtual_address: c.get64(W_UNION + 1),
            failure: HsaAccessAttributeFailure(c.get(W_UNION + 3)),
            flags: HSA_EVENTID_MEMORYFLAGS(c.get(W_UNION + 4)),
        }
    }

    /// The hardware exception data the last completed wait stored in the
    /// event (meaningful for [`EventType::HwException`] events).
    pub fn hw_exception(&self) -> HwException {
        let c = &self.obj.c;
        HwException {
            node_id: c.get(W_UNION),
            reset_type: c.get(W_UNION + 1),
            memory_lost: c.get(W_UNION + 2),
            reset_cause: c.get(W_UNION + 3),
        }
    }

    /// The sync variable given at creation.
    pub fn sync_var(&self) -> HsaSyncVar {
        HsaSyncVar {
            SyncVar: HsaSyncVarData {
                UserDataPtrValue: self.obj.c.get64(W_UNION),
            },
            SyncVarSize: self.obj.c.get64(W_UNION + 2),
        }
    }

    /// True if both handles name the same event.
    pub fn same(&self, other: &Event) -> bool {
        Arc::ptr_eq(&self.obj, &other.obj)
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("id", &self.obj.id)
            .field("type", &self.obj.ty)
            .field("auto_reset", &self.obj.auto_reset)
            .field("slot", &self.obj.slot)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_view_has_the_c_layout() {
        assert_eq!(std::mem::size_of::<CView>(), HSA_EVENT_SIZE);
        assert_eq!(std::mem::size_of::<newest::HsaEvent>(), HSA_EVENT_SIZE);
        assert_eq!(
            std::mem::align_of::<CView>(),
            std::mem::align_of::<newest::HsaEvent>()
        );
        let desc = EventDescriptor {
            event_type: EventType::Memory,
            node_id: 1,
            sync_var: 0x1234_5678_9abc,
            sync_var_size: 8,
        };
        let obj = EventObj::new(Weak::new(), &desc, 4097, false, None, 0xdead_0000, 77);
        let e = obj.c.snapshot();
        assert_eq!({ e.EventId }, 4097);
        let d = e.EventData;
        assert_eq!(d.EventType, HSA_EVENTTYPE::HSA_EVENTTYPE_MEMORY);
        assert_eq!({ d.HWData1 }, 4097);
        assert_eq!({ d.HWData2 }, 0xdead_0000);
        assert_eq!({ d.HWData3 }, 77);
        // The union's SyncVar member: the variable, then its size.
        let raw = { d.EventData }.bytes();
        let word = |at: usize| u64::from_ne_bytes(raw[at..at + 8].try_into().unwrap());
        assert_eq!(word(0), 0x1234_5678_9abc);
        assert_eq!(word(8), 8);
        obj.c.write_memory_fault(&MemoryFault {
            node_id: 2,
            virtual_address: 0x7000_1000,
            failure: HsaAccessAttributeFailure(1),
            flags: HSA_EVENTID_MEMORYFLAGS::HSA_EVENTID_MEMORY_FATAL_PROCESS,
        });
        let ev = Event { obj: Arc::new(obj) };
        let f = ev.memory_fault();
        assert_eq!(f.node_id, 2);
        assert_eq!(f.virtual_address, 0x7000_1000);
        assert_eq!(f.failure.NotPresent(), 1);
    }

    #[test]
    fn event_type_round_trip() {
        for t in EventType::ALL {
            assert_eq!(EventType::from_raw(t.raw()), Some(t));
        }
        assert_eq!(EventType::from_raw(9), None);
        assert!(!EventType::Signal.is_system());
        assert!(!EventType::Debug.is_system());
        assert!(EventType::Memory.is_system());
    }
}
