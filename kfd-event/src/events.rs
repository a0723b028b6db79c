//! The `Events` sub-context: event page, registry, create/destroy,
//! set/reset/query and waits.

use std::collections::HashMap;
use std::fmt;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use kfd_fmm::{Buffer, ExecAlloc, Fmm};
use kfd_sys::hash::OwnKeys;
use kfd_sys::ioctl::{Ioctl, PlainArgs};
use kfd_sys::kfd::{
    kfd_event_data, kfd_ioctl_create_event_args, kfd_ioctl_destroy_event_args,
    kfd_ioctl_reset_event_args, kfd_ioctl_set_event_args, AMDKFD_IOC_CREATE_EVENT,
    AMDKFD_IOC_DESTROY_EVENT, AMDKFD_IOC_RESET_EVENT, AMDKFD_IOC_SET_EVENT, AMDKFD_IOC_WAIT_EVENTS,
    KFD_IOC_WAIT_RESULT_COMPLETE, KFD_IOC_WAIT_RESULT_TIMEOUT, KFD_SIGNAL_EVENT_LIMIT,
};
use kfd_sys::mapping::Mapping;
use kfd_sys::mman::{self, Prot};
use kfd_sys::{DeviceFile, Errno};
use kfd_topology::Topology;

use crate::error::EventError;
use crate::event::{
    AccessFailure, Event, EventDescriptor, EventObj, EventRecord, EventType, ExceptionData,
    HwException, MemoryFault, Waitable,
};
use crate::lock;
use crate::spare;

/// Wait forever (`HSA_EVENTTIMEOUT_INFINITE`).
pub const TIMEOUT_INFINITE: u32 = 0xFFFF_FFFF;
/// Do not block (`HSA_EVENTTIMEOUT_IMMEDIATE`).
pub const TIMEOUT_IMMEDIATE: u32 = 0;

/// Slots of the fallback event page old kernels offer (one 4 KiB page).
const OLD_KERNEL_SLOTS: u32 = 256;

/// Whether a wait needs every event or any one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    /// Complete when any event is signaled.
    Any,
    /// Complete when all events are signaled.
    All,
}

/// How a wait ended (when it did not fail).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitOutcome {
    /// The wait condition was met.
    Signaled,
    /// The timeout expired first.
    TimedOut,
}

/// The per-context signal event page.
enum EventPage {
    /// A GTT buffer the library allocated and handed to the kernel (dGPU).
    Buffer { buf: Buffer, slots: u32 },
    /// The kernel's own page, mapped from the KFD descriptor (unmapped
    /// when it drops).
    Kernel { map: Mapping, slots: u32 },
}

impl EventPage {
    fn base(&self) -> u64 {
        match self {
            EventPage::Buffer { buf, .. } => buf.addr(),
            EventPage::Kernel { map, .. } => map.addr(),
        }
    }

    fn slots(&self) -> u32 {
        match self {
            EventPage::Buffer { slots, .. } | EventPage::Kernel { slots, .. } => *slots,
        }
    }
}

/// Every live event of a context, by kernel id (unique among a process's
/// live events): its handle's state when it was made as an [`Event`],
/// nothing when it was made as an [`EventRecord`] (whose holder names it
/// by id). Only creation, destruction and teardown use it: whether a
/// handle is live is a flag of the event.
///
/// The kernel gives signal events the ids of their event-page slots
/// (below [`KFD_SIGNAL_EVENT_LIMIT`]) and every other kind ids from
/// 2^30 up: the first are an array indexed by id, the others a map.
#[derive(Default)]
struct Registry {
    /// Ids below [`KFD_SIGNAL_EVENT_LIMIT`], by id.
    slots: Vec<Option<Option<Event>>>,
    /// Every other id.
    others: HashMap<u32, Option<Event>, OwnKeys>,
    len: usize,
}

impl Registry {
    fn len(&self) -> usize {
        self.len
    }

    /// The entry of `id`, if it is live.
    fn get(&self, id: u32) -> Option<&Option<Event>> {
        if id < KFD_SIGNAL_EVENT_LIMIT {
            self.slots.get(id as usize)?.as_ref()
        } else {
            self.others.get(&id)
        }
    }

    /// Keeps `id`'s entry (an id the kernel just gave out: never live).
    fn insert(&mut self, id: u32, e: Option<Event>) {
        if id < KFD_SIGNAL_EVENT_LIMIT {
            let i = id as usize;
            if self.slots.len() <= i {
                self.slots.resize_with(i + 1, || None);
            }
            self.slots[i] = Some(e);
        } else {
            self.others.insert(id, e);
        }
        self.len += 1;
    }

    /// Takes `id`'s entry out.
    fn remove(&mut self, id: u32) -> Option<Option<Event>> {
        let e = if id < KFD_SIGNAL_EVENT_LIMIT {
            self.slots.get_mut(id as usize)?.take()
        } else {
            self.others.remove(&id)
        }?;
        self.len -= 1;
        Some(e)
    }

    /// Takes every entry out.
    fn drain(&mut self) -> Vec<(u32, Option<Event>)> {
        self.len = 0;
        let slots = std::mem::take(&mut self.slots).into_iter().enumerate();
        slots
            .filter_map(|(i, e)| Some((i as u32, e?)))
            .chain(self.others.drain())
            .collect()
    }
}

/// The event page and the registry, under one lock: it serialises
/// CREATE_EVENT (as the C library's global mutex does) and DESTROY_EVENT.
#[derive(Default)]
struct State {
    page: PageState,
    registry: Registry,
}

#[derive(Default)]
struct PageState {
    page: Option<EventPage>,
    /// A buffer allocated for the page, with its BO handle, that the
    /// kernel has not accepted yet (its CREATE_EVENT failed): offered
    /// again on the next create.
    pending: Option<(Buffer, u64)>,
    /// The memory manager could not provide a page buffer once; the
    /// kernel's page is used from then on.
    no_buffer: bool,
}

/// State shared by an [`Events`] and the weak owner links of its events.
pub(crate) struct Shared {
    file: Arc<DeviceFile>,
    topology: Option<Arc<Topology>>,
    fmm: Option<Arc<Fmm>>,
    /// Any dGPU in the topology (the event page is then a buffer of ours).
    dgpu: bool,
    /// The event page and every live event.
    state: Mutex<State>,
}

impl Shared {
    fn destroy_all(&self) {
        let events: Vec<(u32, Option<Event>)> = lock(&self.state).registry.drain();
        for (id, e) in events {
            if let Some(e) = e {
                e.obj.live.store(false, Ordering::Release);
            }
            let mut a = kfd_ioctl_destroy_event_args {
                event_id: id,
                pad: 0,
            };
            let _ = self.file.ioctl_plain(AMDKFD_IOC_DESTROY_EVENT, &mut a);
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.destroy_all();
    }
}

/// The events of one KFD context.
///
/// Owns the context's event page (set up on the first event creation) and
/// a registry of every live event. All methods take `&self` and may be
/// called from any thread; waits block in the kernel's `WAIT_EVENTS` and
/// hold no lock while blocked, so other threads can set, reset, create or
/// destroy events (and wait on the same events) meanwhile.
///
/// Dropping the `Events` (or calling [`Events::teardown`]) destroys every
/// remaining event.
pub struct Events {
    shared: Arc<Shared>,
}

impl fmt::Debug for Events {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Events")
            .field("file", &self.shared.file)
            .field("live", &self.live_count())
            .finish_non_exhaustive()
    }
}

impl Events {
    /// The events sub-context of the context whose KFD descriptor is
    /// `file`.
    ///
    /// `topology` decides whether the event page is a library-allocated
    /// buffer (any dGPU in the snapshot) or the kernel's page, and maps
    /// exception `gpu_id`s to node ids; without it, the kernel's page is
    /// used and exception data cannot be translated. `fmm`, the context's
    /// memory manager, allocates the page on dGPUs (without it the
    /// kernel's page is used there too).
    pub fn new(
        file: Arc<DeviceFile>,
        topology: Option<Arc<Topology>>,
        fmm: Option<Arc<Fmm>>,
    ) -> Events {
        Events {
            shared: Arc::new(Shared {
                file,
                dgpu: topology.as_ref().is_some_and(|t| t.is_dgpu()),
                topology,
                fmm,
                state: Mutex::new(State::default()),
            }),
        }
    }

    /// The KFD descriptor the events live on.
    pub fn file(&self) -> &Arc<DeviceFile> {
        &self.shared.file
    }

    /// Number of live events.
    pub fn live_count(&self) -> usize {
        lock(&self.shared.state).registry.len()
    }

    /// The address of the event page and its number of slots, once it has
    /// been set up.
    pub fn event_page(&self) -> Option<(u64, u32)> {
        lock(&self.shared.state)
            .page
            .page
            .as_ref()
            .map(|p| (p.base(), p.slots()))
    }

    /// Creates an event (`hsaKmtCreateEvent`): auto- or manual-reset and
    /// initially signaled or not as `desc` says.
    pub fn create(&self, desc: &EventDescriptor) -> Result<Event, EventError> {
        self.create_with(desc, |record| {
            let event = Event {
                obj: Arc::new(EventObj {
                    owner: Arc::downgrade(&self.shared),
                    record,
                    live: AtomicBool::new(true),
                    exception: Mutex::new(None),
                }),
            };
            (Some(event.clone()), event)
        })
    }

    /// [`Events::create`] without a handle: the kernel's event as a record,
    /// for a border that keeps one of its own per event (the C library's
    /// `HsaEvent`) and names the event by [`EventRecord::waitable`] to
    /// [`Events::destroy_resolved`], [`Events::set_resolved`] and the
    /// waits. Allocates nothing (but the event page, on the first event).
    pub fn create_record(&self, desc: &EventDescriptor) -> Result<EventRecord, EventError> {
        self.create_with(desc, |record| (None, record))
    }

    /// CREATE_EVENT (and SET_EVENT for a signaled one) under the state's
    /// lock; `make` turns the record into what the registry keeps and what
    /// the caller gets.
    fn create_with<R>(
        &self,
        desc: &EventDescriptor,
        make: impl FnOnce(EventRecord) -> (Option<Event>, R),
    ) -> Result<R, EventError> {
        let sh = &self.shared;
        let mut args = kfd_ioctl_create_event_args {
            event_type: desc.event_type.raw(),
            node_id: desc.node_id,
            auto_reset: (!desc.manual_reset) as u32,
            ..Default::default()
        };
        let mut st = lock(&sh.state);
        let page = &mut st.page;
        let mut offered = None;
        if sh.dgpu && page.page.is_none() && !page.no_buffer {
            if page.pending.is_none() {
                page.pending = self.alloc_page_buffer()?;
                page.no_buffer = page.pending.is_none();
            }
            if let Some((_, handle)) = page.pending {
                args.event_page_offset = handle;
                offered = page.pending.take();
            }
        }
        if let Err(errno) = sh.file.ioctl_plain(AMDKFD_IOC_CREATE_EVENT, &mut args) {
            page.pending = offered;
            return Err(if errno == Errno::ENOSPC {
                EventError::TooManyEvents
            } else {
                EventError::Kernel {
                    request: AMDKFD_IOC_CREATE_EVENT.info(),
                    errno,
                }
            });
        }
        if let Some((mut buf, _)) = offered {
            // The kernel now owns the buffer until the process ends.
            let _ = buf.mark_kernel_held();
            page.page = Some(EventPage::Buffer {
                buf,
                slots: KFD_SIGNAL_EVENT_LIMIT,
            });
        }
        if page.page.is_none() && args.event_page_offset > 0 {
            match self.map_kernel_page(args.event_page_offset) {
                Ok(p) => page.page = Some(p),
                Err(e) => {
                    drop(st);
                    self.destroy_id(args.event_id);
                    return Err(e);
                }
            }
        }
        let mut slot_addr = 0;
        if let Some(p) = &page.page {
            if args.event_page_offset > 0 && args.event_slot_index < p.slots() {
                slot_addr = p.base() + args.event_slot_index as u64 * 8;
            }
        }
        if desc.signaled && !desc.event_type.is_system() {
            let mut s = kfd_ioctl_set_event_args {
                event_id: args.event_id,
                pad: 0,
            };
            if let Err(errno) = sh.file.ioctl_plain(AMDKFD_IOC_SET_EVENT, &mut s) {
                drop(st);
                self.destroy_id(args.event_id);
                return Err(EventError::Kernel {
                    request: AMDKFD_IOC_SET_EVENT.info(),
                    errno,
                });
            }
        }
        let record = EventRecord {
            waitable: Waitable {
                owner: self.owner(),
                id: args.event_id,
                ty: desc.event_type,
            },
            desc: *desc,
            slot: (!desc.event_type.is_system()).then_some(args.event_slot_index),
            slot_addr,
            trigger: args.event_trigger_data,
        };
        let (kept, made) = make(record);
        st.registry.insert(args.event_id, kept);
        Ok(made)
    }

    /// Allocates the dGPU event page: uncached, pinned system memory for
    /// every slot, mapped to all GPUs; returns it with its BO handle, or
    /// `None` when there is no memory manager or its buffer has no handle
    /// (the kernel then allocates the page itself, which every KFD
    /// supports).
    fn alloc_page_buffer(&self) -> Result<Option<(Buffer, u64)>, EventError> {
        let Some(fmm) = &self.shared.fmm else {
            return Ok(None);
        };
        let req = ExecAlloc {
            size: KFD_SIGNAL_EVENT_LIMIT as u64 * 8,
            node_id: 0,
            non_paged: true,
            device_local: false,
            uncached: true,
        };
        let buf = fmm.alloc_exec(&req).map_err(EventError::Memory)?;
        // Without a handle the buffer is of no use: it is freed on drop.
        Ok(fmm.handle(buf.addr()).map(|h| (buf, h)))
    }

    /// Maps the kernel's event page at `offset` on the KFD descriptor:
    /// every slot, or one page (256 slots) for old kernels.
    fn map_kernel_page(&self, offset: u64) -> Result<EventPage, EventError> {
        let fd = self.shared.file.as_fd();
        let full = KFD_SIGNAL_EVENT_LIMIT as u64 * 8;
        let page = mman::page_size() as u64;
        let mut last = Errno::EINVAL;
        for (len, slots) in [(full, KFD_SIGNAL_EVENT_LIMIT), (page, OLD_KERNEL_SLOTS)] {
            match Mapping::file(fd, len, Prot::READ | Prot::WRITE, offset) {
                Ok(map) => return Ok(EventPage::Kernel { map, slots }),
                Err(e) => last = e,
            }
        }
        Err(EventError::EventPage(format!(
            "mmap of the event page failed: {last}"
        )))
    }

    fn destroy_id(&self, id: u32) {
        let mut a = kfd_ioctl_destroy_event_args {
            event_id: id,
            pad: 0,
        };
        let _ = self
            .shared
            .file
            .ioctl_plain(AMDKFD_IOC_DESTROY_EVENT, &mut a);
    }

    /// This context's mark in the entries it makes ([`Waitable`]).
    fn owner(&self) -> usize {
        Arc::as_ptr(&self.shared) as usize
    }

    /// [`EventError::ForeignEvent`] unless `w` is an entry of this
    /// context.
    fn check_owner(&self, w: &Waitable) -> Result<(), EventError> {
        if w.owner == self.owner() {
            Ok(())
        } else {
            Err(EventError::ForeignEvent)
        }
    }

    /// Checks that `e` is a live event of this context.
    pub fn check(&self, e: &Event) -> Result<(), EventError> {
        if !std::ptr::eq(e.obj.owner.as_ptr(), Arc::as_ptr(&self.shared)) {
            return Err(EventError::ForeignEvent);
        }
        if !e.obj.is_live() {
            return Err(EventError::UnknownEvent);
        }
        Ok(())
    }

    /// Destroys an event (`hsaKmtDestroyEvent`). Threads waiting on it
    /// return with an error.
    pub fn destroy(&self, e: &Event) -> Result<(), EventError> {
        self.check(e)?;
        let mut st = lock(&self.shared.state);
        match st.registry.get(e.id()) {
            Some(Some(h)) if h.same(e) && e.obj.is_live() => {}
            _ => return Err(EventError::UnknownEvent),
        }
        self.destroy_locked(&mut st, e.id())
    }

    /// [`Events::destroy`] of an event named by its entry
    /// ([`EventRecord::waitable`], [`Event::waitable`]): another context's
    /// is [`EventError::ForeignEvent`], an id no live event has
    /// [`EventError::UnknownEvent`]. A stale entry whose id the kernel has
    /// given to a newer event names that one, as a C caller's stale
    /// `HsaEvent` does.
    pub fn destroy_resolved(&self, w: &Waitable) -> Result<(), EventError> {
        self.check_owner(w)?;
        let mut st = lock(&self.shared.state);
        if st.registry.get(w.id).is_none() {
            return Err(EventError::UnknownEvent);
        }
        self.destroy_locked(&mut st, w.id)
    }

    /// DESTROY_EVENT of `id`, a live event; on success it leaves the
    /// registry and its handles, if any, are dead.
    fn destroy_locked(&self, st: &mut State, id: u32) -> Result<(), EventError> {
        let mut a = kfd_ioctl_destroy_event_args {
            event_id: id,
            pad: 0,
        };
        self.shared
            .file
            .ioctl_plain(AMDKFD_IOC_DESTROY_EVENT, &mut a)
            .map_err(EventError::kernel(AMDKFD_IOC_DESTROY_EVENT.info()))?;
        if let Some(Some(e)) = st.registry.remove(id) {
            e.obj.live.store(false, Ordering::Release);
        }
        Ok(())
    }

    /// Signals an event (`hsaKmtSetEvent`): wakes every thread waiting on
    /// it. System event types cannot be set ([`EventError::SystemEvent`]).
    pub fn set(&self, e: &Event) -> Result<(), EventError> {
        self.check(e)?;
        self.set_resolved(&e.waitable())
    }

    /// Resets an event to unsignaled (`hsaKmtResetEvent`). System event
    /// types cannot be reset ([`EventError::SystemEvent`]).
    pub fn reset(&self, e: &Event) -> Result<(), EventError> {
        self.check(e)?;
        self.reset_resolved(&e.waitable())
    }

    /// [`Events::set`] of an event resolved ahead ([`Event::waitable`]),
    /// as the C border does: without a reference to the event, so a
    /// border that maps its caller's pointers under a lock of its own
    /// copies the entry out and drops the lock before the kernel request.
    /// Another context's entry is [`EventError::ForeignEvent`]; an entry
    /// of an event destroyed since it was resolved makes the kernel fail
    /// the request (or, if the kernel has reused the id, signal the event
    /// that now has it, as a C caller racing a destroy does).
    pub fn set_resolved(&self, w: &Waitable) -> Result<(), EventError> {
        let mut a = kfd_ioctl_set_event_args {
            event_id: w.id,
            pad: 0,
        };
        self.user_signal(w, AMDKFD_IOC_SET_EVENT, &mut a)
    }

    /// [`Events::reset`] of an event resolved ahead, as
    /// [`Events::set_resolved`].
    pub fn reset_resolved(&self, w: &Waitable) -> Result<(), EventError> {
        let mut a = kfd_ioctl_reset_event_args {
            event_id: w.id,
            pad: 0,
        };
        self.user_signal(w, AMDKFD_IOC_RESET_EVENT, &mut a)
    }

    /// Set and reset: checks that `w` is this context's, of a type user
    /// space may signal, then issues `request`.
    fn user_signal<A: PlainArgs>(
        &self,
        w: &Waitable,
        request: Ioctl<A>,
        args: &mut A,
    ) -> Result<(), EventError> {
        self.check_owner(w)?;
        if w.ty.is_system() {
            return Err(EventError::SystemEvent);
        }
        self.shared
            .file
            .ioctl_plain(request, args)
            .map_err(EventError::kernel(request.info()))?;
        Ok(())
    }

    /// `hsaKmtQueryEventState`: succeeds for any live event of this
    /// context. (The C library checks only for NULL and queries nothing;
    /// use a zero-timeout wait to test the state.)
    pub fn query(&self, e: &Event) -> Result<(), EventError> {
        self.check(e)
    }

    /// The 64-bit value in the event's slot of the event page (written by
    /// GPU signals; the kernel initialises it to all ones), or `None` if
    /// the event has no slot.
    pub fn slot_value(&self, e: &Event) -> Result<Option<u64>, EventError> {
        self.check(e)?;
        let st = lock(&self.shared.state);
        let (Some(p), Some(slot)) = (st.page.page.as_ref(), e.slot()) else {
            return Ok(None);
        };
        if slot >= p.slots() {
            return Ok(None);
        }
        let offset = slot as u64 * 8;
        let v = match p {
            EventPage::Buffer { buf, .. } => buf.load_u64(offset).map_err(EventError::Memory)?,
            EventPage::Kernel { map, .. } => map
                .load_u64(offset)
                .map_err(|e| EventError::EventPage(format!("event slot {slot}: {e}")))?,
        };
        Ok(Some(v))
    }

    /// Waits for one event (`hsaKmtWaitOnEvent`).
    pub fn wait_one(&self, e: &Event, timeout_ms: u32) -> Result<WaitOutcome, EventError> {
        self.wait_inner(std::slice::from_ref(e), WaitMode::All, timeout_ms, None)
    }

    /// Waits for one event with its event age (`hsaKmtWaitOnEvent_Ext`):
    /// see [`Events::wait_with_age`].
    pub fn wait_one_with_age(
        &self,
        e: &Event,
        timeout_ms: u32,
        age: &mut u64,
    ) -> Result<WaitOutcome, EventError> {
        self.wait_inner(
            std::slice::from_ref(e),
            WaitMode::All,
            timeout_ms,
            Some(std::slice::from_mut(age)),
        )
    }

    /// Waits for any or all of `events` (`hsaKmtWaitOnMultipleEvents`).
    ///
    /// Blocks in the kernel for at most `timeout_ms` milliseconds
    /// ([`TIMEOUT_INFINITE`]: forever). An empty list completes at once,
    /// as the kernel does. For memory and hardware exception events that
    /// the wait reports, the exception data is stored in the event (see
    /// [`Event::memory_fault`], [`Event::hw_exception`]).
    pub fn wait(
        &self,
        events: &[Event],
        mode: WaitMode,
        timeout_ms: u32,
    ) -> Result<WaitOutcome, EventError> {
        self.wait_inner(events, mode, timeout_ms, None)
    }

    /// Waits with event ages (`hsaKmtWaitOnMultipleEvents_Ext`).
    ///
    /// `ages[i]` is the age of `events[i]` the caller last saw (0: none);
    /// for signal events whose age differs, the wait completes at once
    /// even if the event was reset since, so a set that happened before
    /// the wait is never lost. On return each signal event's entry holds
    /// the age the kernel reported. `ages` must be as long as `events`.
    pub fn wait_with_age(
        &self,
        events: &[Event],
        mode: WaitMode,
        timeout_ms: u32,
        ages: &mut [u64],
    ) -> Result<WaitOutcome, EventError> {
        ages_cover(ages, events.len())?;
        self.wait_inner(events, mode, timeout_ms, Some(ages))
    }

    /// Waits on a list resolved ahead of the wait ([`Event::waitable`]),
    /// as the C border does: it maps the caller's C event pointers to
    /// events under its own lock, and waits without holding a reference
    /// to each event. Another context's entry is
    /// [`EventError::ForeignEvent`]; an entry of an event destroyed since
    /// it was resolved makes the kernel fail the wait (or, if the kernel
    /// has reused the id, wait on the event that now has it, as a C
    /// caller racing a destroy does). `ages` as in
    /// [`Events::wait_with_age`]. For each memory or hardware exception
    /// event the completed wait reports, `exception` is called with the
    /// entry's index and the data (nothing is stored in the events).
    pub fn wait_resolved(
        &self,
        list: &[Waitable],
        mode: WaitMode,
        timeout_ms: u32,
        ages: Option<&mut [u64]>,
        exception: impl FnMut(usize, ExceptionData),
    ) -> Result<WaitOutcome, EventError> {
        let fill = |entries: &mut WaitEntries<'_>| list.iter().try_for_each(|w| entries.push(w));
        self.wait_filled(list.len(), mode, timeout_ms, ages, fill, exception)?
    }

    /// [`Events::wait_resolved`] with the entries pushed by `fill` straight
    /// into the kernel's event data of the wait (on the stack up to 64
    /// events): a C border resolving pointers under its own lock pushes
    /// each [`Waitable`] as it finds it, with no list in between, and
    /// releases its lock when `fill` returns (`fill` may own the guard).
    /// The wait covers the entries pushed (at most `n`); `fill`'s error
    /// ends the call before any wait, as the outer `Err`.
    pub fn wait_filled<E>(
        &self,
        n: usize,
        mode: WaitMode,
        timeout_ms: u32,
        ages: Option<&mut [u64]>,
        fill: impl FnOnce(&mut WaitEntries<'_>) -> Result<(), E>,
        exception: impl FnMut(usize, ExceptionData),
    ) -> Result<Result<WaitOutcome, EventError>, E> {
        if let Some(a) = ages.as_deref() {
            if let Err(e) = ages_cover(a, n) {
                return Ok(Err(e));
            }
        }
        let owner = self.owner();
        with_wait_arrays(n, |data, types| {
            let mut entries = WaitEntries {
                data,
                types,
                len: 0,
                owner,
                foreign: false,
                exceptions: false,
            };
            fill(&mut entries)?;
            let (len, foreign, exceptions) = (entries.len, entries.foreign, entries.exceptions);
            if foreign {
                return Ok(Err(EventError::ForeignEvent));
            }
            let (data, types) = (&mut data[..len], &types[..len]);
            if let Some(a) = ages.as_deref() {
                for ((d, t), &age) in data.iter_mut().zip(types).zip(a) {
                    if *t == EventType::Signal {
                        *d = kfd_event_data::for_event_age(d.event_id, age);
                    }
                }
            }
            let result = self.wait_data(data, types, mode, timeout_ms, ages);
            if result == Ok(WaitOutcome::Signaled) && exceptions {
                if let Err(e) = self.exceptions(types, data, exception) {
                    return Ok(Err(e));
                }
            }
            Ok(result)
        })
    }

    fn wait_inner(
        &self,
        events: &[Event],
        mode: WaitMode,
        timeout_ms: u32,
        ages: Option<&mut [u64]>,
    ) -> Result<WaitOutcome, EventError> {
        let list = events
            .iter()
            .map(|e| self.check(e).map(|()| e.waitable()))
            .collect::<Result<Vec<_>, _>>()?;
        // Every entry is this context's (checked above): the wait
        // below finds no foreign one.
        self.wait_resolved(&list, mode, timeout_ms, ages, |i, x| {
            events[i].obj.store_exception(x)
        })
    }

    /// The `WAIT_EVENTS` ioctl on `data` (filled, one entry per event of
    /// type `types[i]`); returns the outcome (ages of signal events
    /// written back to `ages`).
    fn wait_data(
        &self,
        data: &mut [kfd_event_data],
        types: &[EventType],
        mode: WaitMode,
        timeout_ms: u32,
        ages: Option<&mut [u64]>,
    ) -> Result<WaitOutcome, EventError> {
        let all = mode == WaitMode::All;
        let r = kfd_sys::event::wait_events(&self.shared.file, data, all, timeout_ms);
        let result = match r {
            Err(errno) => Err(EventError::Kernel {
                request: AMDKFD_IOC_WAIT_EVENTS.info(),
                errno,
            }),
            Ok(KFD_IOC_WAIT_RESULT_TIMEOUT) => Ok(WaitOutcome::TimedOut),
            Ok(KFD_IOC_WAIT_RESULT_COMPLETE) => Ok(WaitOutcome::Signaled),
            Ok(_) => Err(EventError::Kernel {
                request: AMDKFD_IOC_WAIT_EVENTS.info(),
                errno: Errno::EIO,
            }),
        };
        if let Some(a) = ages {
            for (i, ty) in types.iter().enumerate() {
                if *ty == EventType::Signal {
                    a[i] = data[i].last_event_age();
                }
            }
        }
        result
    }

    fn node_of(&self, gpu_id: u32) -> Result<u32, EventError> {
        self.shared
            .topology
            .as_ref()
            .and_then(|t| t.node_by_gpu_id(gpu_id))
            .map(|n| n.id)
            .ok_or(EventError::UnknownGpu(gpu_id))
    }

    /// Hands the exception data the kernel returned for the memory and
    /// hardware exception events among `types` to `store`, with the node ids
    /// translated; entries without data (`gpu_id` 0) are skipped.
    fn exceptions(
        &self,
        types: &[EventType],
        data: &[kfd_event_data],
        mut store: impl FnMut(usize, ExceptionData),
    ) -> Result<(), EventError> {
        for (i, (ty, d)) in types.iter().zip(data).enumerate() {
            match ty {
                EventType::Memory => {
                    let m = d.memory_exception();
                    if m.gpu_id == 0 {
                        continue;
                    }
                    // The low bit of each flag, as C's 1-bit fields keep.
                    let failure = AccessFailure {
                        not_present: m.failure.NotPresent & 1 != 0,
                        read_only: m.failure.ReadOnly & 1 != 0,
                        no_execute: m.failure.NoExecute & 1 != 0,
                        imprecise: m.failure.imprecise & 1 != 0,
                        error_type: m.ErrorType,
                    };
                    store(
                        i,
                        ExceptionData::Memory(MemoryFault {
                            node_id: self.node_of(m.gpu_id)?,
                            virtual_address: m.va,
                            failure,
                        }),
                    );
                }
                EventType::HwException => {
                    let h = d.hw_exception();
                    if h.gpu_id == 0 {
                        continue;
                    }
                    store(
                        i,
                        ExceptionData::HwException(HwException {
                            node_id: self.node_of(h.gpu_id)?,
                            reset_type: h.reset_type,
                            memory_lost: h.memory_lost,
                            reset_cause: h.reset_cause,
                        }),
                    );
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Destroys every remaining event (context teardown). The kernel's
    /// page mapping is released when the `Events` drops; a dGPU page
    /// buffer stays allocated because the kernel refuses to free the
    /// signal buffer while its process lives (it goes with the process:
    /// see [`Buffer::mark_kernel_held`]).
    pub fn teardown(&self) {
        self.shared.destroy_all();
    }
}

/// Waits on up to this many events keep the kernel's event data on the
/// stack (2.5 KiB): no allocation and no look at the thread's spare
/// (two thread-local look-ups) for single, small and 64-signal waits.
const EVENT_DATA_ON_STACK: usize = 64;

/// Waits on up to this many events get a smaller stack array, so the
/// common single-event wait zeroes little.
const SMALL_WAIT: usize = 8;

/// `ages` has an entry for each of `events` events.
fn ages_cover(ages: &[u64], events: usize) -> Result<(), EventError> {
    if ages.len() < events {
        return Err(EventError::AgeLengthMismatch {
            ages: ages.len(),
            events,
        });
    }
    Ok(())
}

/// The entries of a wait as its caller pushes them
/// ([`Events::wait_filled`]): each [`Waitable`] goes straight into the
/// kernel's event data of the wait.
#[derive(Debug)]
pub struct WaitEntries<'a> {
    data: &'a mut [kfd_event_data],
    types: &'a mut [EventType],
    len: usize,
    owner: usize,
    foreign: bool,
    exceptions: bool,
}

impl WaitEntries<'_> {
    /// Adds the next entry of the wait;
    /// [`EventError::WaitEntriesFull`] past the count the wait was made
    /// for.
    #[inline(always)]
    pub fn push(&mut self, w: &Waitable) -> Result<(), EventError> {
        self.extend([Some(w)])
    }

    /// Adds each entry `items` yields, in one loop
    /// that keeps the arrays and the count in registers (a border
    /// resolving a long list of C pointers); a `None` item ends it with
    /// [`EventError::UnknownEvent`], the entries before it pushed (so
    /// [`WaitEntries::len`] is the failing item's index).
    #[inline(always)]
    pub fn extend<'w>(
        &mut self,
        items: impl IntoIterator<Item = Option<&'w Waitable>>,
    ) -> Result<(), EventError> {
        let (data, types, owner) = (&mut *self.data, &mut *self.types, self.owner);
        let (mut len, mut foreign, mut exceptions) = (self.len, false, false);
        let mut r = Ok(());
        for item in items {
            let Some(w) = item else {
                r = Err(EventError::UnknownEvent);
                break;
            };
            let (Some(d), Some(t)) = (data.get_mut(len), types.get_mut(len)) else {
                r = Err(EventError::WaitEntriesFull {
                    capacity: data.len(),
                });
                break;
            };
            d.event_id = w.id;
            *t = w.ty;
            foreign |= w.owner != owner;
            exceptions |= w.ty.has_exception_data();
            len += 1;
        }
        self.len = len;
        self.foreign |= foreign;
        self.exceptions |= exceptions;
        r
    }

    /// True if an entry pushed so far has exception data to report
    /// ([`EventType::has_exception_data`]).
    pub fn has_exception_events(&self) -> bool {
        self.exceptions
    }

    /// Entries pushed so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Nothing pushed yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Runs `f` on the arrays of an `n`-event wait: the kernel's event data
/// (zeroed) and the events' types. On the stack for up to
/// [`EVENT_DATA_ON_STACK`] events (8-entry arrays for small waits, so a
/// single wait zeroes 320 bytes, not 2.5 KiB); beyond, the data is the
/// thread's spare vector (allocated by its first such wait).
fn with_wait_arrays<R>(
    n: usize,
    f: impl FnOnce(&mut [kfd_event_data], &mut [EventType]) -> R,
) -> R {
    if n <= SMALL_WAIT {
        let mut data = [kfd_event_data::default(); SMALL_WAIT];
        let mut types = [EventType::Signal; SMALL_WAIT];
        f(&mut data[..n], &mut types[..n])
    } else if n <= EVENT_DATA_ON_STACK {
        let mut data = [kfd_event_data::default(); EVENT_DATA_ON_STACK];
        let mut types = [EventType::Signal; EVENT_DATA_ON_STACK];
        f(&mut data[..n], &mut types[..n])
    } else {
        let mut data = spare::take(&EVENT_DATA, n);
        data.resize(n, kfd_event_data::default());
        let r = f(&mut data, &mut vec![EventType::Signal; n]);
        spare::give_back(&EVENT_DATA, data);
        r
    }
}

thread_local! {
    /// The event data of this thread's last wait beyond
    /// [`EVENT_DATA_ON_STACK`] events, kept for its next ([`spare`]).
    static EVENT_DATA: std::cell::Cell<Vec<kfd_event_data>> =
        const { std::cell::Cell::new(Vec::new()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Signal-slot ids and the others are kept apart, counted together,
    /// and each is found, removed and drained once.
    #[test]
    fn registry_keeps_slot_ids_and_others() {
        let mut r = Registry::default();
        let high = 1 << 30;
        r.insert(5, None);
        r.insert(high, None);
        r.insert(KFD_SIGNAL_EVENT_LIMIT - 1, None);
        assert_eq!(r.len(), 3);
        assert!(r.get(5).is_some() && r.get(high).is_some());
        assert!(r.get(4).is_none() && r.get(6).is_none() && r.get(high + 1).is_none());
        assert!(r.get(KFD_SIGNAL_EVENT_LIMIT).is_none());
        assert!(matches!(r.remove(5), Some(None)));
        assert!(r.remove(5).is_none(), "once");
        assert!(r.get(5).is_none());
        assert_eq!(r.len(), 2);
        let mut ids: Vec<u32> = r.drain().into_iter().map(|(id, _)| id).collect();
        ids.sort_unstable();
        assert_eq!(ids, [KFD_SIGNAL_EVENT_LIMIT - 1, high]);
        assert_eq!(r.len(), 0);
        assert!(r.get(high).is_none());
    }

    /// A long wait's event data is the thread's spare array, zeroed again
    /// for each wait; a small wait's is on the stack.
    #[test]
    fn long_waits_reuse_zeroed_event_data() {
        let first = with_wait_arrays(200, |d, _| {
            for e in d.iter_mut() {
                e.event_id = 7;
                e.kfd_event_data_ext = 9;
            }
            d.as_ptr()
        });
        with_wait_arrays(100, |d, _| {
            assert_eq!(d.len(), 100);
            assert_eq!(d.as_ptr(), first, "the same array");
            assert!(
                d.iter()
                    .all(|e| e.event_id == 0 && e.kfd_event_data_ext == 0),
                "zeroed"
            );
        });
        with_wait_arrays(3, |d, _| assert_ne!(d.as_ptr(), first, "on the stack"));
        with_wait_arrays(EVENT_DATA_ON_STACK, |d, _| {
            assert_ne!(d.as_ptr(), first, "64 events: on the stack")
        });
    }
}
