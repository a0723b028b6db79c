//! Events: create, set/reset/query, destroy, waits.
//!
//! C callers hold `HsaEvent *` values and pass them back. Each event the
//! border creates gets a slot in the context's `EventViews`
//! (`crate::state::events`; part of its border state, `state::kept`, so
//! it dies with the context): the C struct, filled from the kfd-event
//! handle's typed data at a stable address (the pointer handed out), and
//! the handle. A pointer goes back to its event by arithmetic on the
//! slot arena, never dereferenced, so a foreign or garbage `HsaEvent *`
//! is an unknown event (`INVALID_HANDLE`), never a crash.

use std::os::fd::IntoRawFd;
use std::sync::MutexGuard;

use hsakmt_sys::common::HsaEventDescriptor;
use kfd_context::Context;
use kfd_event::{
    EventDescriptor, EventError, EventType, Events, ExceptionData, MemoryFault, WaitEntries,
    WaitList, WaitMode, WaitOutcome, Waitable,
};
use kfd_fmm::{PointerNodes, PointerType, SvmAttr};
use kfd_sys::sync::lock;

use crate::border::{check_mut, read_in, slice_in, slice_mut, st, write_out, Kmt, KmtResult};
use crate::ctx::{self, HsaKFDContext};
use crate::generation::{abi, PROFILE};
use crate::log;
use crate::state;
use crate::state::events::{EventViews, ViewRef};

/// The C events of this context ([`EventViews`]).
#[inline(always)]
fn store(c: &Context) -> KmtResult<MutexGuard<'_, EventViews>> {
    Ok(lock(&state::kept(c)?.events))
}

/// Maps a C event pointer back to this context's event (never
/// dereferenced), as its wait entry copied out under the store's lock
/// (which names the event to kfd-event): NULL or unknown →
/// `INVALID_HANDLE`.
#[inline(always)]
pub(crate) fn waitable(c: &Context, e: *mut abi::HsaEvent) -> KmtResult<Waitable> {
    store(c)?.resolve(e).map(|(w, _)| w).kmt()
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

/// Waits on C event pointers without event ages: each pointer resolved
/// under one store lock, before anything else the caller passed is read
/// (as C, which fails on the events first), straight into the wait's
/// event data; the lock goes before the wait blocks. Exception data
/// reported for memory and hardware exception events goes into their C
/// structs (kept alive by their arena chunk, even if another thread
/// destroys the events meanwhile), and each memory fault is then
/// described in the log, as C does (see [`diagnose_fault`]).
fn wait_direct(
    c: &Context,
    events: &Events,
    ptrs: &[*const abi::HsaEvent],
    mode: WaitMode,
    timeout_ms: u32,
) -> KmtResult<WaitOutcome> {
    // Empty (no allocation) unless the list has exception events.
    let mut held = Vec::new();
    let s = store(c)?;
    let fill = |entries: &mut WaitEntries<'_>| -> KmtResult {
        // Owned here: the store's lock ends when the entries are in.
        let s = s;
        let table = s.entries();
        if let Err(e) = entries.extend(ptrs.iter().map(|&p| table.get(p))) {
            return match ptrs.get(entries.len()) {
                Some(&p) if e == EventError::UnknownEvent => unresolved(&s, p),
                _ => Err(e).kmt(),
            };
        }
        // Rare: a second pass, so that the common loop stays short.
        if entries.has_exception_events() {
            hold_exceptional(&s, ptrs, &mut held);
        }
        Ok(())
    };
    // Empty (no allocation) unless an exception is reported.
    let mut reported = Vec::new();
    let o = events
        .wait_filled(ptrs.len(), mode, timeout_ms, None, fill, |i, x| {
            reported.push((i, x))
        })?
        .kmt()?;
    report(c, &held, reported);
    Ok(o)
}

/// The status of a C event pointer that names no event of the store
/// (NULL or unknown: `INVALID_HANDLE`).
#[cold]
fn unresolved(s: &EventViews, p: *const abi::HsaEvent) -> KmtResult {
    s.resolve(p).kmt()?;
    Err(st::INVALID_HANDLE)
}

/// Puts into `held` the C struct of each memory or hardware exception
/// event among `ptrs` (resolved already), with its index, to receive what
/// the wait reports ([`report`]).
#[cold]
fn hold_exceptional(
    s: &EventViews,
    ptrs: &[*const abi::HsaEvent],
    held: &mut Vec<(usize, ViewRef)>,
) {
    for (i, &p) in ptrs.iter().enumerate() {
        if let Ok((w, slot)) = s.resolve(p) {
            if w.event_type().has_exception_data() {
                held.push((i, s.view(slot)));
            }
        }
    }
}

/// Puts what a wait reported into the C structs of the `held` events (by
/// index), then describes each memory fault in the log, as C does (see
/// [`diagnose_fault`]).
#[inline(always)]
fn report(c: &Context, held: &[(usize, ViewRef)], reported: Vec<(usize, ExceptionData)>) {
    if !reported.is_empty() {
        report_all(c, held, reported);
    }
}

/// [`report`] of a wait that reported something (rare: out of line).
#[cold]
fn report_all(c: &Context, held: &[(usize, ViewRef)], reported: Vec<(usize, ExceptionData)>) {
    for (i, x) in reported {
        if let Ok(k) = held.binary_search_by_key(&i, |(j, _)| *j) {
            held[k].1.view().write_exception(&x);
        }
        if let ExceptionData::Memory(f) = x {
            diagnose_fault(c, &f);
        }
    }
}

/// A wait list resolved from C event pointers: the kfd-event entries,
/// and the memory and hardware exception events (with their index),
/// whose C structs receive the exception data after the wait, even if
/// another thread destroys them meanwhile.
struct Resolved {
    list: WaitList,
    held: Vec<(usize, ViewRef)>,
}

/// Resolves C event pointers under one store lock, before anything else
/// the caller passed is read (as C, which fails on the events first).
#[inline(always)]
fn resolve_list(c: &Context, ptrs: &[*const abi::HsaEvent]) -> KmtResult<Resolved> {
    // Sized before the lock: no allocation under it (none at all for
    // small lists).
    let mut list = WaitList::with_capacity(ptrs.len());
    let mut held = Vec::new();
    let s = store(c)?;
    let mut exceptional = false;
    for &p in ptrs {
        let w = s.resolve(p).kmt()?.0;
        exceptional |= w.event_type().has_exception_data();
        list.push(w);
    }
    if exceptional {
        hold_exceptional(&s, ptrs, &mut held);
    }
    Ok(Resolved { list, held })
}

impl Resolved {
    /// The wait; what it reports goes to the held events ([`report`]).
    fn wait(
        &self,
        c: &Context,
        events: &Events,
        mode: WaitMode,
        timeout_ms: u32,
        ages: Option<&mut [u64]>,
    ) -> KmtResult<WaitOutcome> {
        // Empty (no allocation) unless an exception is reported.
        let mut reported = Vec::new();
        let o = events
            .wait_resolved(self.list.as_slice(), mode, timeout_ms, ages, |i, x| {
                reported.push((i, x))
            })
            .kmt()?;
        report(c, &self.held, reported);
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
        let kept = state::kept(&c)?;
        let e = events.create_record(&desc).kmt()?;
        let ptr = lock(&kept.events).insert(&e);
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(out, ptr, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtDestroyEventCtx`: 20 (even for NULL); NULL or unknown → 4.
    ctx fn hsaKmtDestroyEventCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent) {
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        // The store stays locked over the kernel request, so that two
        // destroys of one pointer are one success and one unknown event.
        let mut s = store(&c)?;
        let r = events.destroy_resolved(&s.resolve(Event).kmt()?.0);
        if r.is_ok() || r == Err(EventError::UnknownEvent) {
            s.remove(Event);
        }
        r.kmt()
    }

    /// `hsaKmtSetEventCtx`: 20; NULL or unknown → 4; system event → 1.
    ctx fn hsaKmtSetEventCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent) {
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        events.set_resolved(&waitable(&c, Event)?).kmt()
    }

    /// `hsaKmtResetEventCtx`: 20; NULL or unknown → 4; system event → 1.
    ctx fn hsaKmtResetEventCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent) {
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        events.reset_resolved(&waitable(&c, Event)?).kmt()
    }

    /// `hsaKmtQueryEventStateCtx`: 20; NULL or unknown → 4.
    ctx fn hsaKmtQueryEventStateCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent) {
        let c = ctx::resolve(ctx)?;
        c.events().kmt()?;
        // Resolved under the store's lock: a live event of this context.
        waitable(&c, Event).map(drop)
    }

    /// `hsaKmtWaitOnEventCtx`: NULL → 4 (before the open check); 20;
    /// timeout → 31.
    ctx fn hsaKmtWaitOnEventCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent, Milliseconds: u32) {
        if Event.is_null() {
            return Err(st::INVALID_HANDLE);
        }
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        outcome(wait_direct(&c, events, &[Event as *const _], WaitMode::All, Milliseconds)?)
    }

    /// `hsaKmtWaitOnEvent_ExtCtx`: as [`hsaKmtWaitOnEventCtx`] with the
    /// event age (IN/OUT; NULL: no age, as the non-Ext form).
    ctx fn hsaKmtWaitOnEvent_ExtCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent, Milliseconds: u32, event_age: *mut u64) {
        if Event.is_null() {
            return Err(st::INVALID_HANDLE);
        }
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        if event_age.is_null() {
            return outcome(wait_direct(&c, events, &[Event as *const _], WaitMode::All, Milliseconds)?);
        }
        let r = resolve_list(&c, &[Event as *const _])?;
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
        outcome(wait_direct(&c, events, list, mode, Milliseconds)?)
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
            return outcome(wait_direct(&c, events, list, mode, Milliseconds)?);
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
