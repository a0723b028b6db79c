//! Event kinds, descriptors and the [`Event`] handle.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::spare;

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

    /// True for the kinds whose completed waits report data: memory
    /// faults and hardware exceptions.
    pub fn has_exception_data(self) -> bool {
        matches!(self, EventType::Memory | EventType::HwException)
    }
}

/// What event to create (`HsaEventDescriptor`, with the two flags that
/// `hsaKmtCreateEvent` takes beside it).
///
/// ```
/// use kfd_event::{EventDescriptor, EventType};
/// let d = EventDescriptor::new(EventType::Signal).manual_reset().signaled();
/// assert!(d.manual_reset && d.signaled);
/// assert!(!EventDescriptor::new(EventType::Memory).manual_reset);
/// ```
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
    /// A manual-reset event stays signaled until it is reset; an
    /// auto-reset one (the default) is reset by the wait it wakes.
    pub manual_reset: bool,
    /// Created signaled (ignored for system kinds, as in C).
    pub signaled: bool,
}

impl EventDescriptor {
    /// An auto-reset, unsignaled descriptor of `event_type` on node 0
    /// without a sync variable.
    pub fn new(event_type: EventType) -> Self {
        EventDescriptor {
            event_type,
            node_id: 0,
            sync_var: 0,
            sync_var_size: 0,
            manual_reset: false,
            signaled: false,
        }
    }

    /// The same descriptor, for a manual-reset event.
    pub fn manual_reset(self) -> Self {
        EventDescriptor {
            manual_reset: true,
            ..self
        }
    }

    /// The same descriptor, for an event created signaled.
    pub fn signaled(self) -> Self {
        EventDescriptor {
            signaled: true,
            ..self
        }
    }

    /// The same descriptor, for node `node_id`.
    pub fn on_node(self, node_id: u32) -> Self {
        EventDescriptor { node_id, ..self }
    }
}

/// Why a faulting GPU memory access failed (the kernel's
/// `kfd_memory_exception_failure` and RAS error type; C reports them as
/// the bits of `HsaAccessAttributeFailure`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AccessFailure {
    /// Page not present or supervisor page.
    pub not_present: bool,
    /// Write to a read-only page.
    pub read_only: bool,
    /// Execute on a no-execute page.
    pub no_execute: bool,
    /// The fault address is imprecise.
    pub imprecise: bool,
    /// RAS error kind (0 none, 1 SRAM ECC, 2 poison, 3 hang).
    pub error_type: u32,
}

impl AccessFailure {
    /// Whether the fault is an ECC failure (error types 1 and 2, as C
    /// derives its `ECC` bit).
    pub fn ecc(&self) -> bool {
        matches!(self.error_type, 1 | 2)
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
    /// Why the access failed. (The C library reports every fault as
    /// fatal to the process, `HSA_EVENTID_MEMORY_FATAL_PROCESS`.)
    pub failure: AccessFailure,
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

/// Exception data a wait stored in an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExceptionData {
    /// Of a [`EventType::Memory`] event.
    Memory(MemoryFault),
    /// Of a [`EventType::HwException`] event.
    HwException(HwException),
}

/// Identity of the [`crate::Events`] that owns an event.
pub(crate) type Owner = Weak<crate::events::Shared>;

/// What the kernel made for one event: everything about it but a handle
/// ([`crate::Events::create_record`]). A border that keeps its own record
/// per event (the C library's `HsaEvent`) holds this instead of an
/// [`Event`], and names the event to [`crate::Events`] by its
/// [`EventRecord::waitable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventRecord {
    pub(crate) waitable: Waitable,
    pub(crate) desc: EventDescriptor,
    pub(crate) slot: Option<u32>,
    pub(crate) slot_addr: u64,
    pub(crate) trigger: u32,
}

impl EventRecord {
    /// The kernel event id (C's `EventId`).
    pub fn id(&self) -> u32 {
        self.waitable.id
    }

    /// The event's kind.
    pub fn event_type(&self) -> EventType {
        self.desc.event_type
    }

    /// The descriptor the event was created with (its kind, node, user
    /// sync variable and reset and signaled flags).
    pub fn descriptor(&self) -> &EventDescriptor {
        &self.desc
    }

    /// True for auto-reset events (created with `ManualReset == false`).
    pub fn auto_reset(&self) -> bool {
        !self.desc.manual_reset
    }

    /// The event's slot in the event page, if it has one (signal and debug
    /// events).
    pub fn slot(&self) -> Option<u32> {
        self.slot
    }

    /// The address of the event's 64-bit slot in the event page (C's
    /// `EventData.HWData2`), 0 if it has none.
    pub fn slot_address(&self) -> u64 {
        self.slot_addr
    }

    /// The kernel's trigger data for the event (C's
    /// `EventData.HWData3`).
    pub fn trigger_data(&self) -> u32 {
        self.trigger
    }

    /// The event as an entry of a wait list, and as the name of the event
    /// for [`crate::Events::set_resolved`] and the other `_resolved` calls.
    pub fn waitable(&self) -> Waitable {
        self.waitable
    }
}

/// The state of one event.
pub(crate) struct EventObj {
    pub(crate) owner: Owner,
    pub(crate) record: EventRecord,
    /// Until the event is destroyed (set under the registry lock).
    pub(crate) live: AtomicBool,
    /// What the last completed wait reported for it.
    pub(crate) exception: Mutex<Option<ExceptionData>>,
}

impl EventObj {
    pub(crate) fn is_live(&self) -> bool {
        self.live.load(Ordering::Acquire)
    }

    pub(crate) fn store_exception(&self, x: ExceptionData) {
        *crate::lock(&self.exception) = Some(x);
    }
}

/// A handle to an event of one context.
///
/// Cheap to clone; all clones name the same event. The event lives until
/// [`crate::Events::destroy`] (or the context's teardown); using a handle
/// after that, or with another context's [`crate::Events`], is an error
/// ([`crate::EventError::UnknownEvent`] / [`crate::EventError::ForeignEvent`]), never
/// undefined behaviour.
#[derive(Clone)]
pub struct Event {
    pub(crate) obj: Arc<EventObj>,
}

impl Event {
    /// The kernel event id (C's `EventId`).
    pub fn id(&self) -> u32 {
        self.obj.record.id()
    }

    /// The event's kind.
    pub fn event_type(&self) -> EventType {
        self.obj.record.event_type()
    }

    /// The descriptor the event was created with (its kind, node and
    /// user sync variable).
    pub fn descriptor(&self) -> &EventDescriptor {
        self.obj.record.descriptor()
    }

    /// True for auto-reset events (created with `ManualReset == false`).
    pub fn auto_reset(&self) -> bool {
        self.obj.record.auto_reset()
    }

    /// The event's slot in the event page, if it has one (signal and debug
    /// events).
    pub fn slot(&self) -> Option<u32> {
        self.obj.record.slot()
    }

    /// The address of the event's 64-bit slot in the event page (C's
    /// `EventData.HWData2`), 0 if it has none.
    pub fn slot_address(&self) -> u64 {
        self.obj.record.slot_address()
    }

    /// The kernel's trigger data for the event (C's
    /// `EventData.HWData3`).
    pub fn trigger_data(&self) -> u32 {
        self.obj.record.trigger_data()
    }

    /// The exception data the last completed wait stored in the event,
    /// if any (memory and hardware exception events only).
    pub fn exception(&self) -> Option<ExceptionData> {
        *crate::lock(&self.obj.exception)
    }

    /// The memory fault data the last completed wait stored in the event
    /// (meaningful for [`EventType::Memory`] events; all zeros if none).
    pub fn memory_fault(&self) -> MemoryFault {
        match self.exception() {
            Some(ExceptionData::Memory(m)) => m,
            _ => MemoryFault::default(),
        }
    }

    /// The hardware exception data the last completed wait stored in the
    /// event (meaningful for [`EventType::HwException`] events; all zeros
    /// if none).
    pub fn hw_exception(&self) -> HwException {
        match self.exception() {
            Some(ExceptionData::HwException(h)) => h,
            _ => HwException::default(),
        }
    }

    /// The event as an entry of a wait list resolved ahead of the wait
    /// ([`crate::Events::wait_resolved`]).
    pub fn waitable(&self) -> Waitable {
        self.obj.record.waitable
    }

    /// True if both handles name the same event.
    pub fn same(&self, other: &Event) -> bool {
        Arc::ptr_eq(&self.obj, &other.obj)
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("id", &self.id())
            .field("type", &self.event_type())
            .field("auto_reset", &self.auto_reset())
            .field("slot", &self.slot())
            .finish()
    }
}

/// An event of a wait list, resolved ahead of the wait: its context, id
/// and kind, without a reference to the event (see
/// [`crate::Events::wait_resolved`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waitable {
    pub(crate) owner: usize,
    pub(crate) id: u32,
    pub(crate) ty: EventType,
}

/// A wait list being resolved: [`Waitable`]s in order, kept inline up to
/// [`WaitList::INLINE`] entries, so that a border resolving a caller's
/// list makes no allocation for single and small waits; a longer list
/// takes the thread's spare vector and gives it back when dropped, so a
/// thread's repeated long waits allocate once.
#[derive(Debug, Clone)]
pub struct WaitList {
    inline: [Waitable; WaitList::INLINE],
    len: usize,
    /// The entries, when the list was made for more than fit inline.
    heap: Option<Vec<Waitable>>,
}

impl WaitList {
    /// Entries kept without an allocation.
    pub const INLINE: usize = 8;

    /// An empty list for `n` entries (allocated only above
    /// [`WaitList::INLINE`]).
    pub fn with_capacity(n: usize) -> WaitList {
        const UNUSED: Waitable = Waitable {
            owner: 0,
            id: 0,
            ty: EventType::Signal,
        };
        WaitList {
            inline: [UNUSED; WaitList::INLINE],
            len: 0,
            heap: (n > WaitList::INLINE).then(|| spare::take(&WAITABLES, n)),
        }
    }

    /// Appends an entry.
    #[inline(always)]
    pub fn push(&mut self, w: Waitable) {
        match &mut self.heap {
            // Room reserved by `with_capacity`: a store and a count.
            Some(v) if v.len() < v.capacity() => v.push(w),
            None if self.len < WaitList::INLINE => {
                self.inline[self.len] = w;
                self.len += 1;
            }
            _ => self.push_grow(w),
        }
    }

    /// [`WaitList::push`] past the room made so far (out of line).
    #[cold]
    #[inline(never)]
    fn push_grow(&mut self, w: Waitable) {
        match &mut self.heap {
            Some(v) => v.push(w),
            None => {
                let mut v = spare::take(&WAITABLES, 2 * WaitList::INLINE);
                v.extend_from_slice(&self.inline);
                v.push(w);
                self.heap = Some(v);
            }
        }
    }

    /// The entries, in order.
    pub fn as_slice(&self) -> &[Waitable] {
        match &self.heap {
            Some(v) => v,
            None => &self.inline[..self.len],
        }
    }
}

impl Drop for WaitList {
    fn drop(&mut self) {
        if let Some(v) = self.heap.take() {
            spare::give_back(&WAITABLES, v);
        }
    }
}

thread_local! {
    /// The entries of this thread's last wait list beyond
    /// [`WaitList::INLINE`], kept for its next ([`spare`]).
    static WAITABLES: std::cell::Cell<Vec<Waitable>> =
        const { std::cell::Cell::new(Vec::new()) };
}

impl Waitable {
    /// The kernel event id.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The event's kind.
    pub fn event_type(&self) -> EventType {
        self.ty
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long list's entries go back to the thread when it drops: the
    /// next long list on the thread reuses them.
    #[test]
    fn long_wait_lists_reuse_the_threads_entries() {
        let w = Waitable {
            owner: 1,
            id: 9,
            ty: EventType::Signal,
        };
        let mut a = WaitList::with_capacity(64);
        (0..64).for_each(|_| a.push(w));
        let first = a.as_slice().as_ptr();
        drop(a);
        assert!(crate::spare::spare_capacity(&WAITABLES) >= 64);
        let mut b = WaitList::with_capacity(40);
        b.push(w);
        assert_eq!(b.as_slice().as_ptr(), first, "the same entries");
        assert_eq!(b.as_slice().len(), 1, "emptied");
    }

    #[test]
    fn wait_lists_spill_past_their_inline_entries() {
        let w = |id| Waitable {
            owner: 1,
            id,
            ty: EventType::Signal,
        };
        for (capacity, n) in [(0, 3), (2, WaitList::INLINE), (1, 20), (20, 20)] {
            let mut l = WaitList::with_capacity(capacity);
            for id in 0..n as u32 {
                l.push(w(id));
            }
            let ids: Vec<u32> = l.as_slice().iter().map(Waitable::id).collect();
            assert_eq!(
                ids,
                (0..n as u32).collect::<Vec<_>>(),
                "capacity {capacity}, {n} pushed"
            );
        }
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
