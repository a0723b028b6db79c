//! Events: create, set/reset/query, destroy, waits.

use std::os::fd::IntoRawFd;

use hsakmt_sys::common::HsaEventDescriptor;
use kfd_event::{Event, EventDescriptor, Events, WaitMode};

use crate::border::{check_mut, read_in, slice_in, slice_mut, st, write_out, Kmt, KmtResult};
use crate::ctx::{self, HsaKFDContext};
use crate::generation::abi;

/// Maps a C event pointer back to this context's event (never
/// dereferenced): NULL or unknown → `INVALID_HANDLE`.
fn event(events: &Events, e: *mut abi::HsaEvent) -> KmtResult<Event> {
    events
        .lookup(e as *const hsakmt_sys::newest::HsaEvent)
        .kmt()
}

/// The events of a C array.
///
/// # Safety
///
/// `list` must hold `n` pointers when non-NULL.
unsafe fn event_pointers<'a>(
    list: *mut *mut abi::HsaEvent,
    n: u32,
) -> KmtResult<&'a [*const hsakmt_sys::newest::HsaEvent]> {
    if list.is_null() {
        return Err(st::INVALID_HANDLE);
    }
    // C allocates the kernel's event-data array for `n` events before it
    // reads the caller's array, and fails with NO_MEMORY when it cannot
    // (the newest library; older ones crash): the same allocation is
    // tried first, so an absurd count is refused before a pointer is read.
    let mut probe: Vec<kfd_sys::kfd::kfd_event_data> = Vec::new();
    probe
        .try_reserve_exact(n as usize)
        .map_err(|_| st::NO_MEMORY)?;
    drop(probe);
    // SAFETY: forwarded contract. Both generations' `HsaEvent` have the
    // same layout, so the pointers are only reinterpreted, never read
    // here: kfd-event validates each against its registry.
    unsafe {
        slice_in(
            list as *const *const hsakmt_sys::newest::HsaEvent,
            n as usize,
            u32::MAX as usize,
            st::INVALID_HANDLE,
        )
    }
}

fn outcome(o: kfd_event::WaitOutcome) -> KmtResult {
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
        let desc = EventDescriptor::from_hsa(&desc).kmt()?;
        let e = events.create(&desc, ManualReset, IsSignaled).kmt()?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(out, e.as_hsa_ptr().cast::<abi::HsaEvent>(), st::INVALID_PARAMETER) }
    }

    /// `hsaKmtDestroyEventCtx`: 20 (even for NULL); NULL or unknown → 4.
    ctx fn hsaKmtDestroyEventCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent) {
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        let e = event(events, Event)?;
        events.destroy(&e).kmt()
    }

    /// `hsaKmtSetEventCtx`: 20; NULL or unknown → 4; system event → 1.
    ctx fn hsaKmtSetEventCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent) {
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        let e = event(events, Event)?;
        events.set(&e).kmt()
    }

    /// `hsaKmtResetEventCtx`: 20; NULL or unknown → 4; system event → 1.
    ctx fn hsaKmtResetEventCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent) {
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        let e = event(events, Event)?;
        events.reset(&e).kmt()
    }

    /// `hsaKmtQueryEventStateCtx`: 20; NULL or unknown → 4.
    ctx fn hsaKmtQueryEventStateCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent) {
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        let e = event(events, Event)?;
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
        let e = event(events, Event)?;
        outcome(events.wait_one(&e, Milliseconds).kmt()?)
    }

    /// `hsaKmtWaitOnEvent_ExtCtx`: as [`hsaKmtWaitOnEventCtx`] with the
    /// event age (IN/OUT; NULL: no age, as the non-Ext form).
    ctx fn hsaKmtWaitOnEvent_ExtCtx(ctx: *mut HsaKFDContext, Event: *mut abi::HsaEvent, Milliseconds: u32, event_age: *mut u64) {
        if Event.is_null() {
            return Err(st::INVALID_HANDLE);
        }
        let c = ctx::resolve(ctx)?;
        let events = c.events().kmt()?;
        let e = event(events, Event)?;
        if event_age.is_null() {
            return outcome(events.wait_one(&e, Milliseconds).kmt()?);
        }
        let age_ptr = check_mut(event_age, st::INVALID_PARAMETER)?;
        // SAFETY: checked above; IN/OUT argument.
        let mut age = unsafe { age_ptr.read() };
        let o = events.wait_one_with_age(&e, Milliseconds, &mut age).kmt()?;
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
        outcome(events.wait_pointers(list, mode, Milliseconds, None).kmt()?)
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
            return outcome(events.wait_pointers(list, mode, Milliseconds, None).kmt()?);
        }
        // SAFETY: the C contract: `event_age` holds one age per event
        // (IN/OUT), borrowed in place: nothing is allocated by the count.
        let ages = unsafe { slice_mut(event_age, NumEvents as usize, u32::MAX as usize, st::INVALID_PARAMETER) }?;
        outcome(events.wait_pointers(list, mode, Milliseconds, Some(ages)).kmt()?)
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
