//! `wait` (6.2.4 and newest): `hsaKmtWaitOnEvent_Ext` and
//! `hsaKmtWaitOnMultipleEvents_Ext`, waits that carry the caller's event
//! ages. Each scenario runs in a fresh child, so that its first event
//! allocates the event page in both libraries (6.2.4 keeps the page of an
//! earlier session across CloseKFD, ours does not; see
//! intended-differences.txt).

use std::ptr::null_mut;

use super::events::create;
use super::Applies::Since;
use super::{setup, teardown, Table};
use crate::abi::Abi;
use crate::abi::AbiKind::Rocm62;
use crate::cx::Cx;
use crate::kmt;

/// `HSA_EVENTTYPE_SIGNAL`.
const SIGNAL: u32 = 0;
/// `HSA_EVENTTYPE_MEMORY`.
const MEMORY: u32 = 8;

/// `hsaKmtWaitOnEvent_Ext` with `*age`; records status and the age after.
fn wait_ext<A: Abi>(cx: &mut Cx<A>, label: &str, e: *mut A::Event, ms: u32, age: &mut u64) -> u32 {
    let s = kmt!(
        cx,
        label,
        hsaKmtWaitOnEvent_Ext(e, ms, std::ptr::from_mut(age)),
        "live event; live age word"
    );
    cx.rec(&format!("{label}.age"), *age);
    s
}

/// `hsaKmtWaitOnMultipleEvents_Ext` over `evs` with `ages`; records
/// status and every age after.
fn wait_many<A: Abi>(
    cx: &mut Cx<A>,
    label: &str,
    evs: &mut [*mut A::Event],
    all: bool,
    ms: u32,
    ages: &mut [u64],
) -> u32 {
    let n = evs.len() as u32;
    let s = kmt!(
        cx,
        label,
        hsaKmtWaitOnMultipleEvents_Ext(evs.as_mut_ptr(), n, all, ms, ages.as_mut_ptr()),
        "array of live events; one age per event"
    );
    cx.rec(&format!("{label}.ages"), format!("{ages:?}"));
    s
}

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    t.add(Since(Rocm62), "wait/event-ext", event_ext);
    t.add(Since(Rocm62), "wait/multiple-ext", multiple_ext);
}

fn event_ext<A: Abi>(cx: &mut Cx<A>) {
    let mut age = 0u64;
    wait_ext(cx, "before-open-null", null_mut(), 0, &mut age);
    let Some(t) = setup(cx) else { return };
    if let Some(e) = create(cx, "create", SIGNAL, t.gpu(), true, false) {
        wait_ext(cx, "unset", e, 0, &mut age);
        kmt!(cx, "set", hsaKmtSetEvent(e), "live event");
        age = 0;
        wait_ext(cx, "set-no-age", e, 0, &mut age);
        let seen = age;
        wait_ext(cx, "still-set-same-age", e, 0, &mut age);
        kmt!(cx, "reset", hsaKmtResetEvent(e), "live event");
        age = seen;
        wait_ext(cx, "reset-same-age", e, 5, &mut age);
        kmt!(cx, "set-again", hsaKmtSetEvent(e), "live event");
        kmt!(cx, "reset-again", hsaKmtResetEvent(e), "live event");
        age = seen;
        wait_ext(cx, "reset-stale-age", e, 5, &mut age);
        kmt!(
            cx,
            "null-age",
            hsaKmtWaitOnEvent_Ext(e, 0, null_mut()),
            "live event; no age (allowed)"
        );
        kmt!(cx, "destroy", hsaKmtDestroyEvent(e), "live event");
    }
    wait_ext(cx, "null-event", null_mut(), 0, &mut age);
    teardown(cx);
}

fn multiple_ext<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    let g = t.gpu();
    let mut evs = Vec::new();
    for (label, ty) in [
        ("create0", SIGNAL),
        ("create1", SIGNAL),
        ("create-memory", MEMORY),
    ] {
        if let Some(e) = create(cx, label, ty, g, true, false) {
            evs.push(e);
        }
    }
    if evs.len() == 3 {
        // The memory event's age is a marker: only signal events'
        // ages are read and written.
        let mut ages = [0u64, 0, 0xDEAD];
        wait_many(cx, "any-none-set", &mut evs, false, 0, &mut ages);
        kmt!(cx, "set0", hsaKmtSetEvent(evs[0]), "live event");
        wait_many(cx, "any-one-set", &mut evs, false, 0, &mut ages);
        wait_many(cx, "all-one-set", &mut evs[..2], true, 5, &mut ages[..2]);
        kmt!(cx, "set1", hsaKmtSetEvent(evs[1]), "live event");
        wait_many(cx, "all-set", &mut evs[..2], true, 0, &mut ages[..2]);
        kmt!(cx, "reset0", hsaKmtResetEvent(evs[0]), "live event");
        kmt!(cx, "reset1", hsaKmtResetEvent(evs[1]), "live event");
        wait_many(
            cx,
            "all-reset-same-ages",
            &mut evs[..2],
            true,
            5,
            &mut ages[..2],
        );
        let n = evs.len() as u32;
        kmt!(
            cx,
            "null-ages",
            hsaKmtWaitOnMultipleEvents_Ext(evs.as_mut_ptr(), n, false, 0, null_mut()),
            "array of live events; no ages (allowed)"
        );
        let mut one = [0u64];
        kmt!(
            cx,
            "zero-events",
            hsaKmtWaitOnMultipleEvents_Ext(evs.as_mut_ptr(), 0, true, 0, one.as_mut_ptr()),
            "count 0"
        );
        kmt!(
            cx,
            "null-array",
            hsaKmtWaitOnMultipleEvents_Ext(null_mut(), 3, true, 0, ages.as_mut_ptr()),
            "deliberate NULL array"
        );
    }
    for e in evs {
        kmt!(cx, "destroy", hsaKmtDestroyEvent(e), "live event");
    }
    teardown(cx);
}
