//! `ctx`: the context API (DESIGN.md 1.1, libhsakmt-api.md 3). Besides the
//! recorded statuses, every scenario checks the documented semantics
//! (`check.*` records), so that ours is judged even when the reference
//! lacks the Ctx symbols.

use std::ffi::c_void;
use std::ptr::null_mut;

use hsakmt_sys::common::{HsaEventDescriptor, HsaSystemProperties};

use super::Applies::Since;
use super::{require, Table};
use crate::abi::AbiKind::Rocm52;
use crate::abi::{memflag as mf, Abi};
use crate::api::CtxPtr;
use crate::cx::{Cx, HostBuf};
use crate::kmt;

const BASE: &[&str] = &[
    "hsaKmtOpenKFDCtx",
    "hsaKmtCloseKFDCtx",
    "hsaKmtOpenSecondaryKFDCtx",
    "hsaKmtCloseSecondaryKFDCtx",
    "hsaKmtAcquireSystemPropertiesCtx",
    "hsaKmtReleaseSystemPropertiesCtx",
];

fn open_primary<A: Abi>(cx: &mut Cx<A>) -> Option<CtxPtr> {
    let mut p: CtxPtr = null_mut();
    let s = kmt!(
        cx,
        "primary.open",
        hsaKmtOpenKFDCtx(&mut p),
        "live out-pointer"
    );
    cx.check(
        "primary.open-succeeds",
        s == 0 && !p.is_null(),
        format!("status {s}, ctx null={}", p.is_null()),
    );
    (s == 0 && !p.is_null()).then_some(p)
}

/// Requires [`BASE`] and `extra` (see [`require`]), then opens the primary.
fn start<A: Abi>(cx: &mut Cx<A>, extra: &[&str]) -> Option<CtxPtr> {
    let mut need = BASE.to_vec();
    need.extend_from_slice(extra);
    if !require(cx, &need) {
        return None;
    }
    open_primary(cx)
}

fn open_secondary<A: Abi>(cx: &mut Cx<A>, label: &str) -> Option<CtxPtr> {
    let mut p: CtxPtr = null_mut();
    let s = kmt!(
        cx,
        &format!("{label}.open"),
        hsaKmtOpenSecondaryKFDCtx(&mut p),
        "live out-pointer"
    );
    cx.check(
        &format!("{label}.open-succeeds"),
        s == 0 && !p.is_null(),
        format!("status {s}"),
    );
    if s != 0 || p.is_null() {
        return None;
    }
    let mut sp = HsaSystemProperties::default();
    let s = kmt!(
        cx,
        &format!("{label}.acquire"),
        hsaKmtAcquireSystemPropertiesCtx(p, &mut sp),
        "context from OpenSecondaryKFDCtx; live struct"
    );
    cx.check(
        &format!("{label}.acquire-succeeds"),
        s == 0 && sp.NumNodes > 0,
        format!("status {s}"),
    );
    Some(p)
}

fn close_secondary<A: Abi>(cx: &mut Cx<A>, label: &str, c: CtxPtr) {
    kmt!(
        cx,
        &format!("{label}.release"),
        hsaKmtReleaseSystemPropertiesCtx(c),
        "live secondary context"
    );
    let s = kmt!(
        cx,
        &format!("{label}.close"),
        hsaKmtCloseSecondaryKFDCtx(c),
        "live secondary context, closed once"
    );
    cx.check(
        &format!("{label}.close-succeeds"),
        s == 0,
        format!("status {s}"),
    );
}

fn close_primary<A: Abi>(cx: &mut Cx<A>) {
    kmt!(cx, "primary.close", hsaKmtCloseKFDCtx(), "no arguments");
}

/// Host-accessible system allocation through the Ctx form.
fn ctx_alloc<A: Abi>(cx: &mut Cx<A>, label: &str, c: CtxPtr) -> Option<*mut c_void> {
    let mut p: *mut c_void = null_mut();
    let s = kmt!(
        cx,
        label,
        hsaKmtAllocMemoryCtx(c, 0, 0x2000, A::mem_flags(mf::HOST_ACCESS), &mut p),
        "live context; live out-pointer"
    );
    cx.check(
        &format!("{label}-succeeds"),
        s == 0 && !p.is_null(),
        format!("status {s}"),
    );
    (s == 0 && !p.is_null()).then_some(p)
}

/// MapMemoryToGPUCtx of a [`ctx_alloc`] allocation `p` in `c`; the call
/// site says whether `c` owns `p` or must refuse it.
fn map_ctx<A: Abi>(cx: &mut Cx<A>, label: &str, c: CtxPtr, p: *mut c_void) -> u32 {
    let mut va = 0u64;
    kmt!(
        cx,
        label,
        hsaKmtMapMemoryToGPUCtx(c, p, 0x2000, &mut va),
        "live context; 0x2000-byte allocation of some context; live out"
    )
}

/// FreeMemoryCtx of a [`ctx_alloc`] allocation `p` in `c` (see [`map_ctx`]).
fn free_ctx<A: Abi>(cx: &mut Cx<A>, label: &str, c: CtxPtr, p: *mut c_void) -> u32 {
    kmt!(
        cx,
        label,
        hsaKmtFreeMemoryCtx(c, p, 0x2000),
        "live context; 0x2000-byte allocation of some context"
    )
}

/// QueryPointerInfoCtx of `p` in `c`: its status and whether it reports an
/// allocation.
fn query<A: Abi>(cx: &mut Cx<A>, label: &str, c: CtxPtr, p: *mut c_void) -> (u32, bool) {
    let mut pi = A::PointerInfo::default();
    let s = kmt!(
        cx,
        label,
        hsaKmtQueryPointerInfoCtx(c, p, &mut pi),
        "live context; live PointerInfo"
    );
    (s, s == 0 && A::pointer_info(&pi).ty == 1)
}

/// Whether `c` knows `p` as an allocation (QueryPointerInfoCtx).
fn knows<A: Abi>(cx: &mut Cx<A>, label: &str, c: CtxPtr, p: *mut c_void) -> bool {
    query(cx, label, c, p).1
}

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    t.add(Since(Rocm52), "ctx/primary-refcount", primary_refcount);
    t.add(Since(Rocm52), "ctx/secondary-needs-primary", secondary_needs_primary);
    t.add(Since(Rocm52), "ctx/close-secondary-bad", close_secondary_bad);
    t.add(Since(Rocm52), "ctx/secondary-isolation", secondary_isolation);
    t.add(Since(Rocm52), "ctx/secondary-runtime-enable", secondary_runtime_enable);
    t.add(Since(Rocm52), "ctx/close-one-secondary", close_one_secondary);
    t.add(Since(Rocm52), "ctx/legacy-is-primary", legacy_is_primary);
}

fn primary_refcount<A: Abi>(cx: &mut Cx<A>) {
    if !require(cx, BASE) {
        return;
    }
    let mut a: CtxPtr = null_mut();
    let mut b: CtxPtr = null_mut();
    let s1 = kmt!(cx, "open1", hsaKmtOpenKFDCtx(&mut a), "live out-pointer");
    let s2 = kmt!(cx, "open2", hsaKmtOpenKFDCtx(&mut b), "live out-pointer");
    cx.check("first-open-succeeds", s1 == 0, format!("status {s1}"));
    cx.check(
        "nested-open-already-opened",
        s2 == 22,
        format!("status {s2}, want 22"),
    );
    cx.check(
        "same-primary",
        !a.is_null() && a == b,
        "OpenKFDCtx returned different contexts",
    );
    let c1 = kmt!(cx, "close1", hsaKmtCloseKFDCtx(), "no arguments");
    let mut sp = HsaSystemProperties::default();
    let still = kmt!(
        cx,
        "acquire-after-one-close",
        hsaKmtAcquireSystemPropertiesCtx(a, &mut sp),
        "primary still open once"
    );
    kmt!(
        cx,
        "release",
        hsaKmtReleaseSystemPropertiesCtx(a),
        "primary"
    );
    let c2 = kmt!(cx, "close2", hsaKmtCloseKFDCtx(), "no arguments");
    let c3 = kmt!(cx, "close3", hsaKmtCloseKFDCtx(), "no arguments");
    cx.check("close-per-open", c1 == 0 && c2 == 0, format!("{c1} {c2}"));
    cx.check(
        "still-open-after-one-close",
        still == 0,
        format!("status {still}"),
    );
    cx.check(
        "close-below-zero-not-opened",
        c3 == 20,
        format!("status {c3}, want 20"),
    );
}

fn secondary_needs_primary<A: Abi>(cx: &mut Cx<A>) {
    if !require(cx, BASE) {
        return;
    }
    let mut p: CtxPtr = null_mut();
    let s = kmt!(
        cx,
        "open-secondary",
        hsaKmtOpenSecondaryKFDCtx(&mut p),
        "live out-pointer"
    );
    cx.check(
        "refused-without-primary",
        s == 20,
        format!("status {s}, want 20"),
    );
    if s == 0 && !p.is_null() {
        kmt!(
            cx,
            "close-secondary",
            hsaKmtCloseSecondaryKFDCtx(p),
            "opened above"
        );
    }
}

fn close_secondary_bad<A: Abi>(cx: &mut Cx<A>) {
    let Some(primary) = start(cx, &[]) else {
        return;
    };
    let s = kmt!(
        cx,
        "close-null",
        hsaKmtCloseSecondaryKFDCtx(null_mut()),
        "deliberate NULL"
    );
    cx.check("close-null-invalid", s == 3, format!("status {s}, want 3"));
    let s = kmt!(
        cx,
        "close-primary",
        hsaKmtCloseSecondaryKFDCtx(primary),
        "the primary context"
    );
    cx.check(
        "close-primary-invalid",
        s == 3,
        format!("status {s}, want 3"),
    );
    close_primary(cx);
}

fn secondary_isolation<A: Abi>(cx: &mut Cx<A>) {
    let Some(primary) = start(
        cx,
        &[
            "hsaKmtAllocMemoryCtx",
            "hsaKmtFreeMemoryCtx",
            "hsaKmtQueryPointerInfoCtx",
            "hsaKmtGetNodePropertiesCtx",
            "hsaKmtMapMemoryToGPUCtx",
            "hsaKmtUnmapMemoryToGPUCtx",
        ],
    ) else {
        return;
    };
    let mut sp = HsaSystemProperties::default();
    kmt!(
        cx,
        "primary.acquire",
        hsaKmtAcquireSystemPropertiesCtx(primary, &mut sp),
        "primary; live struct"
    );
    let s1 = open_secondary(cx, "s1");
    let s2 = open_secondary(cx, "s2");
    if let (Some(s1), Some(s2)) = (s1, s2) {
        cx.check(
            "distinct-contexts",
            s1 != s2 && s1 != primary && s2 != primary,
            "context pointers repeat",
        );
        let mut np = A::NodeProperties::default();
        let s = kmt!(
            cx,
            "s1.node0",
            hsaKmtGetNodePropertiesCtx(s1, 0, &mut np),
            "secondary; live NodeProperties of this generation"
        );
        cx.check("secondary-reads-topology", s == 0, format!("status {s}"));
        if let Some(p) = ctx_alloc(cx, "s1.alloc", s1) {
            let m = map_ctx(cx, "s1.map", s1, p);
            cx.check("owner-maps", m == 0, format!("status {m}"));
            // The primary does not map or free s1's address here: with
            // the SVM API on, a primary follows upstream's SVM fallback
            // (map/free of an address it does not know are SVM
            // operations on its own page tables, as the C library does),
            // which is SVM by design, not an isolation breach. That SVM
            // range would also make a later primary allocation at the
            // same VA fail with EADDRINUSE. Secondaries have no SVM API:
            // they must refuse a foreign address.
            let sm = map_ctx(cx, "s2.map-foreign", s2, p);
            cx.check(
                "secondary-cannot-map-foreign",
                sm != 0,
                "a secondary mapped another secondary's allocation",
            );
            kmt!(
                cx,
                "s1.unmap",
                hsaKmtUnmapMemoryToGPUCtx(s1, p),
                "mapped in s1 above"
            );
            let own = query(cx, "s1.query", s1, p);
            let prim = query(cx, "primary.query", primary, p);
            let other = query(cx, "s2.query", s2, p);
            cx.check(
                "owner-knows-allocation",
                own == (0, true),
                format!("status {}, known {}", own.0, own.1),
            );
            cx.check(
                "primary-query-foreign-fails",
                prim.0 != 0 && !prim.1,
                format!(
                    "the primary sees a secondary's allocation (status {})",
                    prim.0
                ),
            );
            cx.check(
                "secondary-query-foreign-fails",
                other.0 != 0 && !other.1,
                format!("another secondary sees it (status {})", other.0),
            );
            let f = free_ctx(cx, "s2.free-foreign", s2, p);
            cx.check(
                "secondary-cannot-free-foreign",
                f != 0,
                "a secondary freed another secondary's allocation",
            );
            // SAFETY: HostAccess allocation of 0x2000 bytes that
            // survived the refused free above.
            unsafe { super::pattern(cx, "s1.host-rw", p, 0x2000) };
            let f = free_ctx(cx, "s1.free", s1, p);
            cx.check("owner-frees", f == 0, format!("status {f}"));
        }
        if let Some(p) = ctx_alloc(cx, "primary.alloc", primary) {
            let sec = query(cx, "s1.query-primary-alloc", s1, p);
            cx.check(
                "secondary-query-primary-fails",
                sec.0 != 0 && !sec.1,
                format!(
                    "a secondary sees the primary's allocation (status {})",
                    sec.0
                ),
            );
            let m = map_ctx(cx, "s1.map-primary-alloc", s1, p);
            cx.check(
                "secondary-cannot-map-primary-alloc",
                m != 0,
                "a secondary mapped the primary's allocation",
            );
            let f = free_ctx(cx, "s1.free-primary-alloc", s1, p);
            cx.check(
                "secondary-cannot-free-primary-alloc",
                f != 0,
                "a secondary freed the primary's allocation",
            );
            free_ctx(cx, "primary.free-own", primary, p);
        }
        close_secondary(cx, "s1", s1);
        close_secondary(cx, "s2", s2);
    }
    kmt!(
        cx,
        "primary.release",
        hsaKmtReleaseSystemPropertiesCtx(primary),
        "primary"
    );
    close_primary(cx);
}

fn secondary_runtime_enable<A: Abi>(cx: &mut Cx<A>) {
    let Some(_primary) = start(cx, &["hsaKmtRuntimeEnableCtx", "hsaKmtRuntimeDisableCtx"]) else {
        return;
    };
    if let Some(s) = open_secondary(cx, "s") {
        let rdebug = HostBuf::new(0x1000);
        let r = kmt!(
            cx,
            "runtime-enable",
            hsaKmtRuntimeEnableCtx(s, rdebug.ptr(), true),
            "secondary; r_debug stand-in page"
        );
        cx.check(
            "secondary-refuses-runtime-enable",
            r == 11,
            format!("status {r}, want 11"),
        );
        close_secondary(cx, "s", s);
    }
    close_primary(cx);
}

fn close_one_secondary<A: Abi>(cx: &mut Cx<A>) {
    let Some(_primary) = start(
        cx,
        &[
            "hsaKmtAllocMemoryCtx",
            "hsaKmtFreeMemoryCtx",
            "hsaKmtCreateEventCtx",
            "hsaKmtSetEventCtx",
            "hsaKmtWaitOnEventCtx",
            "hsaKmtDestroyEventCtx",
        ],
    ) else {
        return;
    };
    let s1 = open_secondary(cx, "s1");
    let s2 = open_secondary(cx, "s2");
    if let (Some(s1), Some(s2)) = (s1, s2) {
        close_secondary(cx, "s1", s1);
        let p = ctx_alloc(cx, "s2.alloc-after", s2);
        if let Some(p) = p {
            let f = free_ctx(cx, "s2.free", s2, p);
            cx.check("s2-free-works", f == 0, format!("status {f}"));
        }
        let mut d = HsaEventDescriptor::default();
        let mut e: *mut A::Event = null_mut();
        let s = kmt!(
            cx,
            "s2.event",
            hsaKmtCreateEventCtx(s2, &mut d, false, false, &mut e),
            "live descriptor; live out-pointer"
        );
        cx.check("s2-event-create-works", s == 0, format!("status {s}"));
        if s == 0 && !e.is_null() {
            let a = kmt!(cx, "s2.set", hsaKmtSetEventCtx(s2, e), "event of s2");
            let b = kmt!(cx, "s2.wait", hsaKmtWaitOnEventCtx(s2, e, 0), "event of s2");
            cx.check(
                "s2-event-signals",
                a == 0 && b == 0,
                format!("set {a} wait {b}"),
            );
            kmt!(
                cx,
                "s2.destroy",
                hsaKmtDestroyEventCtx(s2, e),
                "event of s2"
            );
        }
        close_secondary(cx, "s2", s2);
    }
    close_primary(cx);
}

fn legacy_is_primary<A: Abi>(cx: &mut Cx<A>) {
    let Some(primary) = start(
        cx,
        &[
            "hsaKmtQueryPointerInfoCtx",
            "hsaKmtAllocMemory",
            "hsaKmtFreeMemory",
        ],
    ) else {
        return;
    };
    let mut sp = HsaSystemProperties::default();
    kmt!(
        cx,
        "legacy.acquire",
        hsaKmtAcquireSystemProperties(&mut sp),
        "live struct"
    );
    let mut p: *mut c_void = null_mut();
    let s = kmt!(
        cx,
        "legacy.alloc",
        hsaKmtAllocMemory(0, 0x1000, A::mem_flags(mf::HOST_ACCESS), &mut p),
        "live out-pointer"
    );
    if s == 0 {
        let k = knows(cx, "primary.query", primary, p);
        cx.check(
            "legacy-allocates-in-primary",
            k,
            "the primary does not know a legacy allocation",
        );
        kmt!(
            cx,
            "legacy.free",
            hsaKmtFreeMemory(p, 0x1000),
            "allocated above"
        );
    }
    kmt!(
        cx,
        "legacy.release",
        hsaKmtReleaseSystemProperties(),
        "none"
    );
    kmt!(
        cx,
        "legacy.close",
        hsaKmtCloseKFD(),
        "closes the primary opened by OpenKFDCtx"
    );
    let mut q: CtxPtr = null_mut();
    let s = kmt!(
        cx,
        "secondary-after-close",
        hsaKmtOpenSecondaryKFDCtx(&mut q),
        "live out-pointer"
    );
    cx.check(
        "secondary-refused-after-primary-closed",
        s == 20,
        format!("status {s}, want 20"),
    );
}
