//! `events`: every event type, set/reset/query, waits on one and many
//! events with timeouts, bad inputs.

use std::ptr::null_mut;

use hsakmt_sys::common::{HsaEventDescriptor, HSA_SVM_ATTRIBUTE};

use super::Applies::Since;
use super::{close, setup, teardown, Table};
use crate::abi::Abi;
use crate::abi::AbiKind::{Rocm52, Rocm62};
use crate::cx::{AnonMap, Cx, HostBuf};
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

/// `KFD_SMI_EVENT_MIGRATE_START` and `_END`.
const SMI_MIGRATE_START: u32 = 5;
const SMI_MIGRATE_END: u32 = 6;
/// `HSA_SVM_ATTR_PREFETCH_LOC`.
const SVM_PREFETCH_LOC: u32 = 1;

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    for ty in 0u32..9 {
        for manual in [true, false] {
            let name = format!("events/type{ty}-{}", if manual { "manual" } else { "auto" });
            t.add(Since(Rocm52), name, move |cx| event_type(cx, ty, manual));
        }
    }
    t.add(Since(Rocm52), "events/signal-manual", signal_manual);
    t.add(Since(Rocm52), "events/signal-auto", signal_auto);
    t.add(Since(Rocm52), "events/initially-signaled", initially_signaled);
    t.add(Since(Rocm52), "events/wait-multiple", wait_multiple);
    t.add(Since(Rocm52), "events/bad-input", bad_input);
    t.add(Since(Rocm52), "events/destroy-twice", destroy_twice);
    t.add(Since(Rocm62), "events/smi", smi);
    t.add(Since(Rocm62), "events/smi-null", smi_null);
    t.add(Since(Rocm62), "events/smi-delivery", smi_delivery);
    t.add(Since(Rocm62), "events/smi-every-gpu", smi_every_gpu);
}

/// An event of type `ty`: create, query, set, wait 0 ms, destroy.
fn event_type<A: Abi>(cx: &mut Cx<A>, ty: u32, manual: bool) {
    let Some(t) = setup(cx) else { return };
    if let Some(e) = create(cx, "create", ty, t.gpu(), manual, false) {
        kmt!(cx, "query", hsaKmtQueryEventState(e), "live event");
        kmt!(cx, "set", hsaKmtSetEvent(e), "live event");
        kmt!(cx, "wait0", hsaKmtWaitOnEvent(e, 0), "live event");
        kmt!(cx, "destroy", hsaKmtDestroyEvent(e), "live event");
    }
    teardown(cx);
}

fn signal_manual<A: Abi>(cx: &mut Cx<A>) {
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
}

fn signal_auto<A: Abi>(cx: &mut Cx<A>) {
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
}

fn initially_signaled<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    for manual in [true, false] {
        if let Some(e) = create(cx, "create", 0, t.gpu(), manual, true) {
            kmt!(cx, "wait", hsaKmtWaitOnEvent(e, 0), "live event");
            kmt!(cx, "wait-again", hsaKmtWaitOnEvent(e, 0), "live event");
            kmt!(cx, "destroy", hsaKmtDestroyEvent(e), "live event");
        }
    }
    teardown(cx);
}

fn wait_multiple<A: Abi>(cx: &mut Cx<A>) {
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
}

fn bad_input<A: Abi>(cx: &mut Cx<A>) {
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
}

fn destroy_twice<A: Abi>(cx: &mut Cx<A>) {
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
}

fn smi<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    for n in [t.gpu(), 0, t.nodes] {
        let label = format!("node{n}");
        let mut fd = -1i32;
        let s = kmt!(cx, &label, hsaKmtOpenSMI(n, &mut fd), "live out word");
        cx.rec(&format!("{label}.fd-valid"), fd >= 0);
        if s == 0 && fd >= 0 {
            // SAFETY: the descriptor is ours now; closed once.
            unsafe { libc::close(fd) };
        }
    }
    teardown(cx);
}

fn smi_null<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    kmt!(
        cx,
        "null",
        hsaKmtOpenSMI(t.gpu(), null_mut()),
        "deliberate NULL out-pointer"
    );
    teardown(cx);
}

fn smi_delivery<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    let g = t.gpu();
    let mut fd = -1i32;
    if kmt!(cx, "open", hsaKmtOpenSMI(g, &mut fd), "live out word") != 0 {
        teardown(cx);
        return;
    }
    let read = |fd: i32| -> Result<String, i32> {
        let mut b = [0u8; 1024];
        // SAFETY: reads into `b` from the SMI descriptor.
        let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), b.len()) };
        if n < 0 {
            return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
        Ok(String::from_utf8_lossy(&b[..n as usize]).into_owned())
    };
    cx.rec("empty-read", format!("{:?}", read(fd).map(|s| s.len())));
    let mask: u64 = (1 << (SMI_MIGRATE_START - 1)) | (1 << (SMI_MIGRATE_END - 1));
    // SAFETY: writes the 8-byte mask from a local.
    let w = unsafe { libc::write(fd, (&mask as *const u64).cast(), 8) };
    cx.rec("mask-written", w);
    let buf = HostBuf::new(0x4000);
    let mut a = [HSA_SVM_ATTRIBUTE {
        r#type: SVM_PREFETCH_LOC,
        value: g,
    }];
    kmt!(
        cx,
        "prefetch",
        hsaKmtSVMSetAttr(buf.ptr(), 0x4000, 1, a.as_mut_ptr()),
        "live page-aligned 16 KiB range; one attribute"
    );
    // Event numbers and shapes, not timestamps or pids.
    let lines = read(fd).unwrap_or_default();
    let events: Vec<String> = lines
        .lines()
        .map(|l| {
            // "<event> <ns> -<pid> @<start>(<pages>) <from>-><to> ...":
            // the event, the page count and the move.
            let mut w = l.split_whitespace();
            let ev = w.next().unwrap_or("");
            let pages = w.nth(2).and_then(|r| r.split('(').nth(1)).unwrap_or("");
            let moves = w.next().unwrap_or("");
            format!("{ev} ({pages} {moves}")
        })
        .collect();
    cx.rec("events", events.join(" | "));
    cx.check(
        "events.migrate-start-end",
        events.len() == 2 && events[0].starts_with("5 ") && events[1].starts_with("6 "),
        &lines,
    );
    close(fd);
    teardown(cx);
}

/// OpenSMI on every GPU node (issue 27: a GPU node's request must carry
/// its gpu_id), each with an event actually read: a prefetch of fresh
/// anonymous memory to that GPU migrates it, and the kernel reports the
/// migration's start and end (`MIGRATE_START`, `MIGRATE_END`) to that
/// GPU's SMI clients of the process.
fn smi_every_gpu<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    cx.rec("gpus", t.gpus.len());
    for (i, &g) in t.gpus.iter().enumerate() {
        let mut fd = -1i32;
        let s = kmt!(
            cx,
            &format!("gpu{i}.open"),
            hsaKmtOpenSMI(g, &mut fd),
            "a GPU node; live out word"
        );
        cx.check(
            &format!("smi.gpu{i}.open"),
            s == 0 && fd >= 0,
            format!("status {s}"),
        );
        if s != 0 {
            continue;
        }
        let mask: u64 = (1 << (SMI_MIGRATE_START - 1)) | (1 << (SMI_MIGRATE_END - 1));
        // SAFETY: writes the 8-byte mask from a local to the SMI
        // descriptor the library handed out.
        let w = unsafe { libc::write(fd, (&mask as *const u64).cast(), 8) };
        cx.rec(&format!("gpu{i}.mask-written"), w);
        let m = AnonMap::new(0x4000);
        let mut a = [HSA_SVM_ATTRIBUTE {
            r#type: SVM_PREFETCH_LOC,
            value: g,
        }];
        kmt!(
            cx,
            &format!("gpu{i}.prefetch"),
            hsaKmtSVMSetAttr(m.ptr(), 0x4000, 1, a.as_mut_ptr()),
            "fresh page-aligned 16 KiB mapping; one attribute"
        );
        let mut b = [0u8; 1024];
        // SAFETY: reads into `b` from the SMI descriptor (non-blocking:
        // the events of the request above are already queued).
        let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), b.len()) };
        let text = String::from_utf8_lossy(&b[..n.max(0) as usize]).into_owned();
        // The event numbers and page counts, not times, pids or addresses.
        let events: Vec<String> = text
            .lines()
            .map(|l| {
                let mut w = l.split_whitespace();
                let ev = w.next().unwrap_or("");
                let pages = w.nth(2).and_then(|r| r.split('(').nth(1)).unwrap_or("");
                format!("{ev} ({pages}")
            })
            .collect();
        cx.rec(&format!("gpu{i}.events"), events.join(" | "));
        cx.check(
            &format!("smi.gpu{i}.event-read"),
            events.len() == 2 && events[0].starts_with("5 ") && events[1].starts_with("6 "),
            &text,
        );
        close(fd);
    }
    teardown(cx);
}
