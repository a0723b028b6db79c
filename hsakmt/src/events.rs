//! Events: create, set/reset/query, destroy, waits — and the C
//! `HsaEvent` of each event, which lives here, not in kfd-event.
//!
//! C callers hold `HsaEvent *` values and pass them back. Each event the
//! border creates gets a `CEvent`: the kfd-event handle and the C
//! struct, filled from the handle's typed data, at a stable address (the
//! pointer handed out). The context's `Store` (part of its border
//! state, `ctx::kept`, so it dies with the context) maps those
//! addresses back to events; a pointer is only ever looked up, never
//! dereferenced, so a stale, foreign or garbage `HsaEvent *` is an
//! unknown event (`INVALID_HANDLE`), never a crash.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::os::fd::IntoRawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, MutexGuard};

use hsakmt_sys::common::{
    HsaAccessAttributeFailure, HsaEventDescriptor, HsaMemoryAccessFault, HsaSyncVar,
    HSA_EVENTID_MEMORYFLAGS,
};
use hsakmt_sys::since_6_2::HsaHwException;
use kfd_context::Context;
use kfd_event::{
    Event, EventDescriptor, EventError, EventType, Events, ExceptionData, MemoryFault, WaitList,
    WaitMode, WaitOutcome, Waitable,
};
use kfd_fmm::{PointerNodes, PointerType, SvmAttr};
use kfd_sys::sync::lock;
use std::mem::offset_of;

use crate::border::{check_mut, read_in, slice_in, slice_mut, st, write_out, Kmt, KmtResult};
use crate::ctx::{self, HsaKFDContext};
use crate::generation::{abi, PROFILE};
use crate::log;

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
struct CView {
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
    fn new(e: &Event) -> CView {
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

    fn addr(&self) -> usize {
        self.words.as_ptr() as usize
    }

    /// Stores what a wait reported into the union, as C does.
    fn write_exception(&self, x: &ExceptionData) {
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
    event: Event,
    /// The event as a wait-list entry, made once (a wait on many events
    /// reads it from the store's record instead of the event's own).
    waitable: Waitable,
    view: CView,
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
/// (the `HsaEvent *` C holds). Kept in the context's border state.
#[derive(Debug, Default)]
pub(crate) struct Store {
    map: HashMap<usize, Arc<CEvent>, BuildHasherDefault<AddrHasher>>,
}

impl Store {
    /// The event a C pointer names: NULL is [`EventError::NullEvent`],
    /// anything that is not a live event of this context (destroyed,
    /// another context's, garbage) [`EventError::UnknownEvent`].
    fn get(&self, e: *const abi::HsaEvent) -> Result<&Arc<CEvent>, EventError> {
        if e.is_null() {
            return Err(EventError::NullEvent);
        }
        self.map.get(&(e as usize)).ok_or(EventError::UnknownEvent)
    }
}

fn store(c: &Context) -> KmtResult<MutexGuard<'_, Store>> {
    Ok(lock(&ctx::kept(c)?.events))
}

/// Maps a C event pointer back to this context's event (never
/// dereferenced): NULL or unknown → `INVALID_HANDLE`.
pub(crate) fn event(c: &Context, e: *mut abi::HsaEvent) -> KmtResult<Event> {
    store(c)?.get(e).map(|ce| ce.event.clone()).kmt()
}

/// The descriptor a C caller passed; an unknown type is
/// [`EventError::InvalidEventType`].
fn descriptor(d: &HsaEventDescriptor) -> Result<EventDescriptor, EventError> {
    let raw = d.EventType.0;
    let event_type = EventType::from_raw(raw).ok_or(EventError::InvalidEventType(raw))?;
    let sv = d.SyncVar;
    Ok(EventDescriptor {
        event_type,
        node_id: d.NodeId,
        sync_var: sv.SyncVar.value(),
        sync_var_size: sv.SyncVarSize,
        manual_reset: false,
        signaled: false,
    })
}

/// The events of a C array.
///
/// # Safety
///
/// `list` must hold `n` pointers when non-NULL.
unsafe fn event_pointers<'a>(
    list: *mut *mut abi::HsaEvent,
    n: u32,
) -> KmtResult<&'a [*const abi::HsaEvent]> {
    if list.is_null() {
        return Err(st::INVALID_HANDLE);
    }
    // C allocates the kernel's event-data array for `n` events before it
    // reads the caller's array, and fails with NO_MEMORY when it cannot
    // (the newest library; older ones crash): the same allocation is
    // tried first, so an absurd count is refused before a pointer is read.
    // Counts up to a few thousand (192 KiB of event data) skip the probe:
    // what the wait allocates then cannot fail but by aborting, as any
    // small allocation.
    const PROBED_ABOVE: u32 = 4096;
    if n > PROBED_ABOVE {
        let mut probe: Vec<kfd_sys::kfd::kfd_event_data> = Vec::new();
        probe
            .try_reserve_exact(n as usize)
            .map_err(|_| st::NO_MEMORY)?;
    }
    // SAFETY: forwarded contract. The pointers are only compared with the
    // store's keys, never read through.
    unsafe {
        slice_in(
            list as *const *const abi::HsaEvent,
            n as usize,
            u32::MAX as usize,
            st::INVALID_HANDLE,
        )
    }
}

/// A wait list resolved from C event pointers: the kfd-event entries,
/// and the memory and hardware exception events (with their index),
/// whose C structs receive the exception data after the wait, even if
/// another thread destroys them meanwhile.
struct Resolved {
    list: WaitList,
    held: Vec<(usize, Arc<CEvent>)>,
}

/// Resolves C event pointers under one store lock, before anything else
/// the caller passed is read (as C, which fails on the events first).
fn resolve_list(c: &Context, ptrs: &[*const abi::HsaEvent]) -> KmtResult<Resolved> {
    // Sized before the lock: no allocation under it (none at all for
    // small lists).
    let mut list = WaitList::with_capacity(ptrs.len());
    let mut held = Vec::new();
    let s = store(c)?;
    for (i, &p) in ptrs.iter().enumerate() {
        let ce = s.get(p).kmt()?;
        let w = ce.waitable;
        if matches!(w.event_type(), EventType::Memory | EventType::HwException) {
            held.push((i, ce.clone()));
        }
        list.push(w);
    }
    Ok(Resolved { list, held })
}

impl Resolved {
    /// The wait; exception data goes into the held events' C structs.
    /// Each memory fault reported is then described in the log, as C
    /// does (see [`diagnose_fault`]).
    fn wait(
        &self,
        c: &Context,
        events: &Events,
        mode: WaitMode,
        timeout_ms: u32,
        ages: Option<&mut [u64]>,
    ) -> KmtResult<WaitOutcome> {
        let held = &self.held;
        // Empty (no allocation) unless a fault is reported.
        let mut faults = Vec::new();
        let o = events
            .wait_resolved(self.list.as_slice(), mode, timeout_ms, ages, |i, x| {
                if let Ok(k) = held.binary_search_by_key(&i, |(j, _)| *j) {
                    held[k].1.view.write_exception(&x);
                }
                if let ExceptionData::Memory(f) = x {
                    faults.push(f);
                }
            })
            .kmt()?;
        for f in &faults {
            diagnose_fault(c, f);
        }
        Ok(o)
    }
}

/// What the C library logs (`pr_err`) of a memory fault a wait reported:
/// the address, node and kind of failure, then the buffer holding the
/// address, or else (where [`crate::profile::Border::fault_asks_svm`])
/// what the kernel's SVM manager holds for its page — a request issued
/// whatever the log level, as C issues it. Nothing here changes the
/// wait's status.
fn diagnose_fault(c: &Context, f: &MemoryFault) {
    let va = f.virtual_address;
    let why = if f.failure.not_present {
        "Page not present\n"
    } else if f.failure.read_only {
        "Writing to readonly page\n"
    } else if f.failure.no_execute {
        "Execute to none-executable page\n"
    } else {
        ""
    };
    log::err(format_args!(
        "Memory exception on virtual address {va:#x}, node id {} : {why}",
        f.node_id
    ));
    let nodes = c.fmm().ok().and_then(|m| m.pointer_nodes(va).ok());
    let Some(PointerNodes {
        info,
        registered,
        mapped,
    }) = nodes
    else {
        if !(PROFILE.border.fault_asks_svm && c.require_minor(5).is_ok() && describe_svm_page(c, f))
        {
            log::err(format_args!("Address does not belong to a known buffer\n"));
        }
        return;
    };
    log::err(format_args!(
        "GPU address {:#x}, node id {}, size in byte {:#x}\n",
        info.gpu_address, info.node, info.size
    ));
    let kind = match info.kind {
        PointerType::RegisteredShared => "registered shared buffer (IPC)",
        PointerType::RegisteredGraphics => "registered graphics buffer",
        PointerType::RegisteredUser => "registered user pointer",
        PointerType::Allocated => "allocated using hsaKmtAllocMemory",
        PointerType::ReservedAddr => "allocated by OnlyAddress mode",
        PointerType::Unknown => "of an unknown type",
    };
    log::err(format_args!("Memory is {kind}\n"));
    if matches!(
        info.kind,
        PointerType::RegisteredUser | PointerType::Allocated
    ) {
        log::err(format_args!(
            "CPU address of the memory is {:#x}\n",
            info.cpu_address
        ));
    }
    for (what, nodes) in [("registered", &registered), ("mapped", &mapped)] {
        if !nodes.is_empty() {
            let list: Vec<String> = nodes.iter().map(u32::to_string).collect();
            log::err(format_args!(
                "Memory is {what} to node id: {}\n",
                list.join(" ")
            ));
        }
    }
}

/// Asks the kernel about the faulting page as an SVM range and logs the
/// answer; false when the kernel knows no range there.
fn describe_svm_page(c: &Context, f: &MemoryFault) -> bool {
    let topo = c.topology().ok();
    let gpu_id = topo
        .as_deref()
        .and_then(|t| t.nodes.get(f.node_id as usize))
        .map_or(0, |n| n.gpu_id);
    let va = f.virtual_address;
    let Ok(attrs) = kfd_fmm::svm_fault_page(c.kfd(), topo.as_deref(), va, gpu_id) else {
        return false;
    };
    log::err(format_args!("GPU address {va:#x}, is Unified memory\n"));
    let node = |n: &u32| n.to_string();
    for a in attrs {
        match a {
            SvmAttr::PreferredLoc(n) => log::err(format_args!(
                "Preferred location for address {va:#x} is node id {}\n",
                n.as_ref().map_or_else(|| "undefined".into(), node)
            )),
            SvmAttr::PrefetchLoc(n) => log::err(format_args!(
                "Prefetch location for address {va:#x} is node id {n}\n"
            )),
            SvmAttr::Access(n) => {
                log::err(format_args!("Node id {n} has access to address {va:#x}\n"))
            }
            SvmAttr::AccessInPlace(n) => log::err(format_args!(
                "Node id {n} has access in place to address {va:#x}\n"
            )),
            SvmAttr::NoAccess(n) => log::err(format_args!(
                "Node id {n} has no access to address {va:#x}\n"
            )),
            SvmAttr::SetFlags(flags) => log::err(format_args!("SVM flags set: {flags:?}\n")),
            _ => {}
        }
    }
    true
}

fn outcome(o: WaitOutcome) -> KmtResult {
    crate::border::fwd(crate::status::events::wait(o))
}

export! {
    /// `hsaKmtCreateEventCtx`: 20; type ≥ MAXID → 3 (read before the rest
    /// of the descriptor, as C); a NULL descriptor or out-pointer → 3 (C
    /// dereferences them).
    ctx fn hsaKmtCreateEventCtx(ctx: *mut HsaKFDContext, EventDesc: *mut HsaEventDescriptor, ManualReset: bool, IsSignaled: bool, Event: *mut *mut abi::HsaEvent) {
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        let desc = check_mut(EventDesc, st::INVALID_PARAMETER)?;
        // SAFETY: checked non-NULL and aligned; `EventType` is the
        // descriptor's first field, a 32-bit word.
        let ty = unsafe { read_in(desc as *const u32, st::INVALID_PARAMETER) }?;
        kfd_event::EventType::from_raw(ty).ok_or(kfd_event::EventError::InvalidEventType(ty)).kmt()?;
        // SAFETY: an IN argument; checked by `read_in`.
        let desc = unsafe { read_in(desc as *const HsaEventDescriptor, st::INVALID_PARAMETER) }?;
        let out = check_mut(Event, st::INVALID_PARAMETER)?;
        let desc = EventDescriptor { manual_reset: ManualReset, signaled: IsSignaled, ..descriptor(&desc).kmt()? };
        let kept = ctx::kept(&c)?;
        let e = events.create(&desc).kmt()?;
        let ce = Arc::new(CEvent { view: CView::new(&e), waitable: e.waitable(), event: e });
        let ptr = ce.view.addr();
        lock(&kept.events).map.insert(ptr, ce);
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(out, ptr as *mut abi::HsaEvent, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtDestroyEventCtx`: 20 (even for NULL); NULL or unknown → 4.
    ctx fn hsaKmtDestroyEventCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent) {
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        // The store stays locked over the kernel request, so that two
        // destroys of one pointer are one success and one unknown event.
        let mut s = store(&c)?;
        let ce = s.get(Event).kmt()?.clone();
        let r = events.destroy(&ce.event);
        if r.is_ok() || r == Err(EventError::UnknownEvent) {
            s.map.remove(&(Event as usize));
        }
        r.kmt()
    }

    /// `hsaKmtSetEventCtx`: 20; NULL or unknown → 4; system event → 1.
    ctx fn hsaKmtSetEventCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent) {
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        let e = event(&c, Event)?;
        events.set(&e).kmt()
    }

    /// `hsaKmtResetEventCtx`: 20; NULL or unknown → 4; system event → 1.
    ctx fn hsaKmtResetEventCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent) {
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        let e = event(&c, Event)?;
        events.reset(&e).kmt()
    }

    /// `hsaKmtQueryEventStateCtx`: 20; NULL or unknown → 4.
    ctx fn hsaKmtQueryEventStateCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent) {
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        let e = event(&c, Event)?;
        events.query(&e).kmt()
    }

    /// `hsaKmtWaitOnEventCtx`: NULL → 4 (before the open check); 20;
    /// timeout → 31.
    ctx fn hsaKmtWaitOnEventCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent, Milliseconds: u32) {
        if Event.is_null() {
            return Err(st::INVALID_HANDLE);
        }
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        outcome(resolve_list(&c, &[Event as *const _])?.wait(&c, events, WaitMode::All, Milliseconds, None)?)
    }

    /// `hsaKmtWaitOnEvent_ExtCtx`: as [`hsaKmtWaitOnEventCtx`] with the
    /// event age (IN/OUT; NULL: no age, as the non-Ext form).
    ctx fn hsaKmtWaitOnEvent_ExtCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent, Milliseconds: u32, event_age: *mut u64) {
        if Event.is_null() {
            return Err(st::INVALID_HANDLE);
        }
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        let r = resolve_list(&c, &[Event as *const _])?;
        if event_age.is_null() {
            return outcome(r.wait(&c, events, WaitMode::All, Milliseconds, None)?);
        }
        let age_ptr = check_mut(event_age, st::INVALID_PARAMETER)?;
        // SAFETY: checked above; IN/OUT argument.
        let mut age = unsafe { age_ptr.read() };
        let o = r.wait(&c, events, WaitMode::All, Milliseconds, Some(std::slice::from_mut(&mut age)))?;
        // SAFETY: as above.
        unsafe { write_out(age_ptr, age, st::INVALID_PARAMETER)? };
        outcome(o)
    }

    /// `hsaKmtWaitOnMultipleEventsCtx`: 20; NULL list or element → 4;
    /// timeout → 31.
    ctx fn hsaKmtWaitOnMultipleEventsCtx(ctx: *mut HsaKFDContext, Events: *mut *mut abi::HsaEvent, NumEvents: u32, WaitOnAll: bool, Milliseconds: u32) {
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        // SAFETY: the C contract: `Events` holds `NumEvents` pointers.
        let list = unsafe { event_pointers(Events, NumEvents) }?;
        let mode = if WaitOnAll { WaitMode::All } else { WaitMode::Any };
        outcome(resolve_list(&c, list)?.wait(&c, events, mode, Milliseconds, None)?)
    }

    /// `hsaKmtWaitOnMultipleEvents_ExtCtx`: with one age per event
    /// (IN/OUT, read and written for signal events only; NULL: no ages,
    /// as the non-Ext form).
    ctx fn hsaKmtWaitOnMultipleEvents_ExtCtx(ctx: *mut HsaKFDContext, Events: *mut *mut abi::HsaEvent, NumEvents: u32, WaitOnAll: bool, Milliseconds: u32, event_age: *mut u64) {
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        // SAFETY: the C contract: `Events` holds `NumEvents` pointers.
        let list = unsafe { event_pointers(Events, NumEvents) }?;
        let mode = if WaitOnAll { WaitMode::All } else { WaitMode::Any };
        if event_age.is_null() {
            return outcome(resolve_list(&c, list)?.wait(&c, events, mode, Milliseconds, None)?);
        }
        // SAFETY: the C contract: `event_age` holds one age per event
        // (IN/OUT), borrowed in place: nothing is allocated by the count.
        let ages = unsafe { slice_mut(event_age, NumEvents as usize, u32::MAX as usize, st::INVALID_PARAMETER) }?;
        outcome(resolve_list(&c, list)?.wait(&c, events, mode, Milliseconds, Some(ages))?)
    }

    /// `hsaKmtOpenSMICtx`: the SMI events descriptor of a GPU node,
    /// which the caller owns. 20; no snapshot or unknown node → 5; the
    /// kernel refusing (a CPU node) → 1. A NULL `fd` → 3 before the
    /// request (C writes through it after the request, leaking the file).
    ctx fn hsaKmtOpenSMICtx(ctx: *mut HsaKFDContext, NodeId: u32, fd: *mut i32) {
        let c = ctx::resolve(ctx)?;
        let gpu_id = crate::topology::validate_node(&c, NodeId)?;
        check_mut(fd, st::INVALID_PARAMETER)?;
        let smi = kfd_event::open_smi(c.kfd(), gpu_id).kmt()?;
        // SAFETY: checked above; an OUT argument. The descriptor is
        // handed to the caller, who closes it.
        unsafe { write_out(fd, smi.into_raw_fd(), st::INVALID_PARAMETER) }
    }
}

forward! {
    /// `hsaKmtCreateEvent`.
    all fn hsaKmtCreateEvent(EventDesc: *mut HsaEventDescriptor, ManualReset: bool, IsSignaled: bool, Event: *mut *mut abi::HsaEvent) => hsaKmtCreateEventCtx;
    /// `hsaKmtDestroyEvent`.
    all fn hsaKmtDestroyEvent(Event: *mut abi::HsaEvent) => hsaKmtDestroyEventCtx;
    /// `hsaKmtSetEvent`.
    all fn hsaKmtSetEvent(Event: *mut abi::HsaEvent) => hsaKmtSetEventCtx;
    /// `hsaKmtResetEvent`.
    all fn hsaKmtResetEvent(Event: *mut abi::HsaEvent) => hsaKmtResetEventCtx;
    /// `hsaKmtQueryEventState`.
    all fn hsaKmtQueryEventState(Event: *mut abi::HsaEvent) => hsaKmtQueryEventStateCtx;
    /// `hsaKmtWaitOnEvent`.
    all fn hsaKmtWaitOnEvent(Event: *mut abi::HsaEvent, Milliseconds: u32) => hsaKmtWaitOnEventCtx;
    /// `hsaKmtWaitOnEvent_Ext`.
    since62 fn hsaKmtWaitOnEvent_Ext(Event: *mut abi::HsaEvent, Milliseconds: u32, event_age: *mut u64) => hsaKmtWaitOnEvent_ExtCtx;
    /// `hsaKmtWaitOnMultipleEvents`.
    all fn hsaKmtWaitOnMultipleEvents(Events: *mut *mut abi::HsaEvent, NumEvents: u32, WaitOnAll: bool, Milliseconds: u32) => hsaKmtWaitOnMultipleEventsCtx;
    /// `hsaKmtWaitOnMultipleEvents_Ext`.
    since62 fn hsaKmtWaitOnMultipleEvents_Ext(Events: *mut *mut abi::HsaEvent, NumEvents: u32, WaitOnAll: bool, Milliseconds: u32, event_age: *mut u64) => hsaKmtWaitOnMultipleEvents_ExtCtx;
    /// `hsaKmtOpenSMI`.
    since62 fn hsaKmtOpenSMI(NodeId: u32, fd: *mut i32) => hsaKmtOpenSMICtx;
}

#[cfg(test)]
mod tests {
    use super::*;
    use kfd_event::{AccessFailure, MemoryFault};

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
