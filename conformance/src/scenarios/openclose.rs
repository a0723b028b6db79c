//! `openclose`: open/close, reference counting, version, and what
//! survives the last close.

use std::ptr::null_mut;

use hsakmt_sys::common::{HsaSystemProperties, HsaVersionInfo};

use super::Applies::Since;
use super::{alloc, free, setup, teardown, Table};
use crate::abi::Abi;
use crate::abi::AbiKind::Rocm52;
use crate::cx::Cx;
use crate::kmt;

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    t.add(Since(Rocm52), "openclose/open-close", open_close);
    t.add(Since(Rocm52), "openclose/refcount", refcount);
    t.add(Since(Rocm52), "openclose/version", version);
    t.add(Since(Rocm52), "openclose/version-null", version_null);
    t.add(Since(Rocm52), "openclose/reopen", reopen);
    t.add(Since(Rocm52), "openclose/reopen-keeps-state", reopen_keeps_state);
    t.add(Since(Rocm52), "openclose/reopen-keeps-snapshot", reopen_keeps_snapshot);
}

fn open_close<A: Abi>(cx: &mut Cx<A>) {
    kmt!(cx, "open", hsaKmtOpenKFD(), "no arguments");
    kmt!(cx, "close", hsaKmtCloseKFD(), "no arguments");
    kmt!(cx, "close-again", hsaKmtCloseKFD(), "no arguments");
}

fn refcount<A: Abi>(cx: &mut Cx<A>) {
    let mut ver = HsaVersionInfo::default();
    for _ in 0..3 {
        kmt!(cx, "open", hsaKmtOpenKFD(), "no arguments");
    }
    for _ in 0..3 {
        kmt!(cx, "version", hsaKmtGetVersion(&mut ver), "live struct");
        kmt!(cx, "close", hsaKmtCloseKFD(), "no arguments");
    }
    kmt!(
        cx,
        "version-after",
        hsaKmtGetVersion(&mut ver),
        "live struct"
    );
    kmt!(cx, "close-below-zero", hsaKmtCloseKFD(), "no arguments");
}

fn version<A: Abi>(cx: &mut Cx<A>) {
    if kmt!(cx, "open", hsaKmtOpenKFD(), "no arguments") != 0 {
        return;
    }
    let mut ver = HsaVersionInfo::default();
    if kmt!(cx, "version", hsaKmtGetVersion(&mut ver), "live struct") == 0 {
        cx.fields("version", &ver, &[]);
    }
    kmt!(cx, "close", hsaKmtCloseKFD(), "no arguments");
}

fn version_null<A: Abi>(cx: &mut Cx<A>) {
    if kmt!(cx, "open", hsaKmtOpenKFD(), "no arguments") != 0 {
        return;
    }
    kmt!(
        cx,
        "version-null",
        hsaKmtGetVersion(null_mut()),
        "deliberate NULL out-pointer"
    );
    kmt!(cx, "close", hsaKmtCloseKFD(), "no arguments");
}

fn reopen<A: Abi>(cx: &mut Cx<A>) {
    for _ in 0..2 {
        if setup(cx).is_none() {
            return;
        }
        teardown(cx);
    }
    let mut ver = HsaVersionInfo::default();
    kmt!(
        cx,
        "version-closed",
        hsaKmtGetVersion(&mut ver),
        "live struct"
    );
}

/// What survives the last close: 5.2.3 closes /dev/kfd and frees
/// everything; 6.2.4 and the newest library keep the descriptor and
/// every kernel object, and the next open picks them up (with the
/// topology snapshot, if it was not released).
fn reopen_keeps_state<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    let p = alloc(
        cx,
        "alloc-host",
        0,
        0x4000,
        crate::abi::memflag::HOST_ACCESS,
    );
    let vram = alloc(cx, "alloc-vram", t.gpu(), 0x4000, 0);
    kmt!(cx, "close", hsaKmtCloseKFD(), "no arguments");
    kmt!(cx, "reopen", hsaKmtOpenKFD(), "no arguments");
    let mut info = A::PointerInfo::default();
    if let Some(p) = p {
        if kmt!(
            cx,
            "info-host",
            hsaKmtQueryPointerInfo(p, &mut info),
            "live struct; p was allocated before the close"
        ) == 0
        {
            cx.rec("info-host.Type", A::pointer_info(&info).ty);
        }
    }
    let mut sp = HsaSystemProperties::default();
    kmt!(
        cx,
        "reacquire",
        hsaKmtAcquireSystemProperties(&mut sp),
        "live struct"
    );
    cx.rec("reacquire.NumNodes", sp.NumNodes);
    for (label, q) in [("free-host", p), ("free-vram", vram)] {
        if let Some(q) = q {
            free(cx, label, q, 0x4000);
        }
    }
    teardown(cx);
}

fn reopen_keeps_snapshot<A: Abi>(cx: &mut Cx<A>) {
    // The snapshot outlives CloseKFD (only ReleaseSystemProperties
    // drops it, open or not).
    let mut sp = HsaSystemProperties::default();
    let mut np = A::NodeProperties::default();
    for release_while_closed in [false, true] {
        kmt!(cx, "open", hsaKmtOpenKFD(), "no arguments");
        kmt!(
            cx,
            "acquire",
            hsaKmtAcquireSystemProperties(&mut sp),
            "live struct"
        );
        kmt!(cx, "close", hsaKmtCloseKFD(), "no arguments");
        if release_while_closed {
            kmt!(
                cx,
                "release-closed",
                hsaKmtReleaseSystemProperties(),
                "no arguments"
            );
        }
        kmt!(cx, "reopen", hsaKmtOpenKFD(), "no arguments");
        let s = kmt!(
            cx,
            "node-after-reopen",
            hsaKmtGetNodeProperties(1, &mut np),
            "live struct of this generation"
        );
        if s == 0 {
            let c = A::node_counts(&np);
            cx.rec("node-after-reopen.simds", c.simds);
            cx.rec("node-after-reopen.banks", c.banks);
        }
        kmt!(
            cx,
            "release",
            hsaKmtReleaseSystemProperties(),
            "no arguments"
        );
        kmt!(
            cx,
            "node-after-release",
            hsaKmtGetNodeProperties(1, &mut np),
            "live struct of this generation"
        );
        kmt!(cx, "close-again", hsaKmtCloseKFD(), "no arguments");
    }
}
