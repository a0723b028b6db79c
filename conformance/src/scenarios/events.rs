//! `events`: every event type, set/reset/query, waits on one and many
//! events with timeouts, bad inputs.

use std::ptr::null_mut;

use hsakmt_sys::common::HsaEventDescriptor;

use super::{add, setup, teardown, Scenario};
use crate::abi::Abi;
use crate::cx::Cx;
use crate::kmt;

/// Creates an event, records status and fields (the slot address by
/// relation); returns it.
pub(super) fn create<A: Abi>(
    cx: &mut Cx<A>,
    label: &str,
    ty: u32,
    node: u32,
    manual: bool,
    signaled: bool,
) -> Option<*mut A::Event> {
    let mut d = HsaEventDescriptor::default();
    d.EventType.0 = ty;
    d.NodeId = node;
    let mut e: *mut A::Event = null_mut();
    let s = kmt!(
        cx,
        label,
        hsaKmtCreateEvent(&mut d, manual, signaled, &mut e),
        "live descriptor; live out-pointer"
    );
    if s != 0 || e.is_null() {
        return None;
    }
    // SAFETY: the library returned a pointer to an HsaEvent it allocated,
    // valid until hsaKmtDestroyEvent.
    let ev = unsafe { e.read_unaligned() };
    let view = A::event_view(&ev);
    cx.rec(&format!("{label}.id-nonzero"), view.id != 0);
    cx.rec(&format!("{label}.type"), view.ty);
    cx.rec(&format!("{label}.slot-address"), cx.rel(view.hw2 as usize));
    Some(e)
}

pub(super) fn add_all<A: Abi>(v: &mut Vec<Scenario<A>>) {
    for ty in 0u32..9 {
        for manual in [true, false] {
            let name = format!("events/type{ty}-{}", if manual { "manual" } else { "auto" });
            add(v, name, move |cx| {
                let Some(t) = setup(cx) else { return };
                if let Some(e) = create(cx, "create", ty, t.gpu(), manual, false) {
                    kmt!(cx, "query", hsaKmtQueryEventState(e), "live event");
                    kmt!(cx, "set", hsaKmtSetEvent(e), "live event");
                    kmt!(cx, "wait0", hsaKmtWaitOnEvent(e, 0), "live event");
                    kmt!(cx, "destroy", hsaKmtDestroyEvent(e), "live event");
                }
                teardown(cx);
            });
        }
    }
    add(v, "events/signal-manual", |cx| {
        let Some(t) = setup(cx) else { return };
        if let Some(e) = create(cx, "create", 0, t.gpu(), true, false) {
            kmt!(cx, "query-unset", hsaKmtQueryEventState(e), "live event");
            kmt!(cx, "wait-unset", hsaKmtWaitOnEvent(e, 0), "live event");
            kmt!(cx, "set", hsaKmtSetEvent(e), "live event");
            kmt!(cx, "query-set", hsaKmtQueryEventState(e), "live event");
            kmt!(cx, "wait-set", hsaKmtWaitOnEvent(e, 0), "live event");
            kmt!(cx, "wait-still-set", hsaKmtWaitOnEvent(e, 0), "live event");
            kmt!(cx, "reset", hsaKmtResetEvent(e), "live event");
            kmt!(
                cx,
                "wait-after-reset",
                hsaKmtWaitOnEvent(e, 5),
                "live event; 5 ms"
            );
            kmt!(cx, "destroy", hsaKmtDestroyEvent(e), "live event");
        }
        teardown(cx);
    });
    add(v, "events/signal-auto", |cx| {
        let Some(t) = setup(cx) else { return };
        if let Some(e) = create(cx, "create", 0, t.gpu(), false, false) {
            kmt!(cx, "set", hsaKmtSetEvent(e), "live event");
            kmt!(cx, "wait-set", hsaKmtWaitOnEvent(e, 0), "live event");
            kmt!(cx, "wait-consumed", hsaKmtWaitOnEvent(e, 0), "live event");
            kmt!(
                cx,
                "wait-timeout",
                hsaKmtWaitOnEvent(e, 10),
                "live event; 10 ms"
            );
            kmt!(cx, "destroy", hsaKmtDestroyEvent(e), "live event");
        }
        teardown(cx);
    });
    add(v, "events/initially-signaled", |cx| {
        let Some(t) = setup(cx) else { return };
        for manual in [true, false] {
            if let Some(e) = create(cx, "create", 0, t.gpu(), manual, true) {
                kmt!(cx, "wait", hsaKmtWaitOnEvent(e, 0), "live event");
                kmt!(cx, "wait-again", hsaKmtWaitOnEvent(e, 0), "live event");
                kmt!(cx, "destroy", hsaKmtDestroyEvent(e), "live event");
            }
        }
        teardown(cx);
    });
    add(v, "events/wait-multiple", |cx| {
        let Some(t) = setup(cx) else { return };
        let mut evs: Vec<*mut A::Event> = Vec::new();
        for _ in 0..3 {
            if let Some(e) = create(cx, "create", 0, t.gpu(), true, false) {
                evs.push(e);
            }
        }
        if evs.len() == 3 {
            let n = evs.len() as u32;
            kmt!(
                cx,
                "any-none-set",
                hsaKmtWaitOnMultipleEvents(evs.as_mut_ptr(), n, false, 0),
                "array of 3 live events"
            );
            kmt!(cx, "set1", hsaKmtSetEvent(evs[1]), "live event");
            kmt!(
                cx,
                "any-one-set",
                hsaKmtWaitOnMultipleEvents(evs.as_mut_ptr(), n, false, 0),
                "array of 3 live events"
            );
            kmt!(
                cx,
                "all-one-set",
                hsaKmtWaitOnMultipleEvents(evs.as_mut_ptr(), n, true, 10),
                "array of 3 live events; 10 ms"
            );
            kmt!(cx, "set0", hsaKmtSetEvent(evs[0]), "live event");
            kmt!(cx, "set2", hsaKmtSetEvent(evs[2]), "live event");
            kmt!(
                cx,
                "all-set",
                hsaKmtWaitOnMultipleEvents(evs.as_mut_ptr(), n, true, 0),
                "array of 3 live events"
            );
            kmt!(
                cx,
                "zero-events",
                hsaKmtWaitOnMultipleEvents(evs.as_mut_ptr(), 0, true, 0),
                "count 0"
            );
            kmt!(
                cx,
                "null-array",
                hsaKmtWaitOnMultipleEvents(null_mut(), 3, true, 0),
                "deliberate NULL array"
            );
        }
        for e in evs {
            kmt!(cx, "destroy", hsaKmtDestroyEvent(e), "live event");
        }
        teardown(cx);
    });
    add(v, "events/bad-input", |cx| {
        let Some(t) = setup(cx) else { return };
        let mut d = HsaEventDescriptor::default();
        d.EventType.0 = 9;
        d.NodeId = t.gpu();
        let mut e: *mut A::Event = null_mut();
        kmt!(
            cx,
            "type-maxid",
            hsaKmtCreateEvent(&mut d, true, false, &mut e),
            "event type out of range"
        );
        d.EventType.0 = 0;
        d.NodeId = t.nodes + 5;
        let s = kmt!(
            cx,
            "node-unknown",
            hsaKmtCreateEvent(&mut d, true, false, &mut e),
            "unknown node"
        );
        if s == 0 && !e.is_null() {
            kmt!(
                cx,
                "node-unknown.destroy",
                hsaKmtDestroyEvent(e),
                "created above"
            );
        }
        kmt!(
            cx,
            "set-null",
            hsaKmtSetEvent(null_mut()),
            "deliberate NULL"
        );
        kmt!(
            cx,
            "reset-null",
            hsaKmtResetEvent(null_mut()),
            "deliberate NULL"
        );
        kmt!(
            cx,
            "query-null",
            hsaKmtQueryEventState(null_mut()),
            "deliberate NULL"
        );
        kmt!(
            cx,
            "wait-null",
            hsaKmtWaitOnEvent(null_mut(), 0),
            "deliberate NULL"
        );
        kmt!(
            cx,
            "destroy-null",
            hsaKmtDestroyEvent(null_mut()),
            "deliberate NULL"
        );
        if let Some(e) = create(cx, "create-nodechange", 1, t.gpu(), true, false) {
            kmt!(
                cx,
                "set-system-event",
                hsaKmtSetEvent(e),
                "live non-signal event"
            );
            kmt!(
                cx,
                "reset-system-event",
                hsaKmtResetEvent(e),
                "live non-signal event"
            );
            kmt!(cx, "destroy", hsaKmtDestroyEvent(e), "live event");
        }
        teardown(cx);
    });
    add(v, "events/destroy-twice", |cx| {
        let Some(t) = setup(cx) else { return };
        if let Some(e) = create(cx, "create", 0, t.gpu(), true, false) {
            kmt!(cx, "destroy", hsaKmtDestroyEvent(e), "live event");
            kmt!(
                cx,
                "destroy-again",
                hsaKmtDestroyEvent(e),
                "deliberate stale event pointer (double destroy)"
            );
        }
        teardown(cx);
    });
}
