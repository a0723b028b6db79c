//! `closed`: every exported function called before the first open and
//! after the last close, with the arguments of its standard call
//! ([`super::standard::standard_call`]).

use super::standard::standard_call;
use super::Applies::{Only, Since};
use super::{setup, teardown, Table};
use crate::abi::Abi;
use crate::abi::AbiKind::{self, Rocm52, Rocm62};
use crate::cx::Cx;

/// Functions the `closed` table calls with KFD closed.
fn closed_list(kind: AbiKind) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = crate::api::coverage_list(kind)
        .into_iter()
        .filter(|f| !f.ends_with("Ctx") && *f != "hsaKmtOpenKFD")
        .collect();
    v.sort();
    v
}

/// Functions called again after a full open, snapshot and close, in
/// every generation (the exports 6.2.4 added follow from 6.2.4 on).
const AFTER_CLOSE: &[&str] = &[
    "hsaKmtAllocMemory",
    "hsaKmtCreateEvent",
    "hsaKmtGetNodeProperties",
    "hsaKmtCreateQueue",
    "hsaKmtMapMemoryToGPU",
    "hsaKmtQueryPointerInfo",
    "hsaKmtGetClockCounters",
    "hsaKmtPmcGetCounterProperties",
    "hsaKmtSVMSetAttr",
    "hsaKmtGetTileConfig",
];

/// Registers the scenarios of this family. `closed/<export>` comes from
/// the generation's own export list, so each applies to that generation
/// only.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    for f in closed_list(A::KIND) {
        t.add(Only(A::KIND), format!("closed/{f}"), move |cx| call_closed(cx, f));
    }
    for &f in AFTER_CLOSE {
        t.add(Since(Rocm52), format!("closed/after-close/{f}"), move |cx| after_close(cx, f));
    }
    for &f in crate::api::SINCE_6_2_EXPORTS {
        t.add(Since(Rocm62), format!("closed/after-close/{f}"), move |cx| after_close(cx, f));
    }
}

/// The standard call of `f` while KFD is closed (the family's child
/// never opens it outside a scenario).
fn call_closed<A: Abi>(cx: &mut Cx<A>, f: &str) {
    standard_call(cx, f, 1);
}

/// The standard call of `f` after an open, a topology snapshot and the
/// last close.
fn after_close<A: Abi>(cx: &mut Cx<A>, f: &str) {
    if setup(cx).is_none() {
        return;
    }
    teardown(cx);
    standard_call(cx, f, 1);
}
