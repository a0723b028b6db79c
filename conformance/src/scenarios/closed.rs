//! `closed`: every exported function called before the first open and
//! after the last close, with the arguments of its standard call
//! ([`super::standard::standard_call`]).

use super::standard::standard_call;
use super::{add, setup, teardown, Scenario};
use crate::abi::Abi;
use crate::abi::AbiKind;

/// Functions the `closed` table calls with KFD closed.
fn closed_list(kind: AbiKind) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = crate::api::coverage_list(kind)
        .into_iter()
        .filter(|f| !f.ends_with("Ctx") && *f != "hsaKmtOpenKFD")
        .collect();
    v.sort();
    v
}

/// Adds the scenarios of this family.
pub(super) fn add_all<A: Abi>(v: &mut Vec<Scenario<A>>) {
    for f in closed_list(A::KIND) {
        add(v, format!("closed/{f}"), move |cx| {
            standard_call(cx, f, 1);
        });
    }
    let since62: &[&'static str] = if A::KIND == AbiKind::Rocm52 {
        &[]
    } else {
        crate::api::SINCE_6_2_EXPORTS
    };
    for &f in [
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
    ]
    .iter()
    .chain(since62)
    {
        add(v, format!("closed/after-close/{f}"), move |cx| {
            if setup(cx).is_none() {
                return;
            }
            teardown(cx);
            standard_call(cx, f, 1);
        });
    }
}
