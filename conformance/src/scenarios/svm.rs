//! `svm`: SVMSetAttr and SVMGetAttr on host ranges, fresh mappings and
//! without a topology snapshot; bad inputs.

use std::ffi::c_void;
use std::ptr::null_mut;

use hsakmt_sys::common::HSA_SVM_ATTRIBUTE;

use super::Applies::Since;
use super::{setup, teardown, Table};
use crate::abi::Abi;
use crate::abi::AbiKind::Rocm52;
use crate::cx::{AnonMap, Cx, HostBuf};
use crate::kmt;

/// One SVM attribute.
fn attr(r#type: u32, value: u32) -> HSA_SVM_ATTRIBUTE {
    HSA_SVM_ATTRIBUTE { r#type, value }
}

/// `hsaKmtSVMSetAttr` over `attrs`; the call site says why `start` and
/// `size` are what they are (a live range or a deliberate bad input).
fn svm_set<A: Abi>(
    cx: &mut Cx<A>,
    label: &str,
    start: *mut c_void,
    size: u64,
    attrs: &mut [HSA_SVM_ATTRIBUTE],
) -> u32 {
    kmt!(
        cx,
        label,
        hsaKmtSVMSetAttr(start, size, attrs.len() as u32, attrs.as_mut_ptr()),
        "live attribute array of that length; range as the call site says"
    )
}

/// `hsaKmtSVMGetAttr` into `attrs` (see [`svm_set`]).
fn svm_get<A: Abi>(
    cx: &mut Cx<A>,
    label: &str,
    start: *mut c_void,
    size: u64,
    attrs: &mut [HSA_SVM_ATTRIBUTE],
) -> u32 {
    kmt!(
        cx,
        label,
        hsaKmtSVMGetAttr(start, size, attrs.len() as u32, attrs.as_mut_ptr()),
        "live attribute array of that length; range as the call site says"
    )
}

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    t.add(Since(Rocm52), "svm/set-get", set_get);
    t.add(Since(Rocm52), "svm/fresh-mmap", svm_fresh_mmap);
    t.add(Since(Rocm52), "svm/no-snapshot", svm_no_snapshot);
    t.add(Since(Rocm52), "svm/bad-input", bad_input);
}

fn set_get<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    let buf = HostBuf::new(0x20000);
    let g = t.gpu();
    let mut set = [attr(0, g), attr(2, g), attr(5, 0x1), attr(7, 4)];
    // live page-aligned 128 KiB range; 4 attributes
    svm_set(cx, "set", buf.ptr(), 0x20000, &mut set);
    let mut get = [attr(0, 0), attr(1, 0), attr(2, g), attr(5, 0), attr(7, 0)];
    // same range; 5 attributes
    if svm_get(cx, "get", buf.ptr(), 0x20000, &mut get) == 0 {
        for (i, a) in get.iter().enumerate() {
            cx.rec(&format!("get{i}"), format!("{:?}", a));
        }
    }
    // first half of the range
    svm_set(cx, "clear-flags", buf.ptr(), 0x10000, &mut [attr(6, 0x1)]);
    let mut get2 = [attr(5, 0)];
    // whole range after a split
    svm_get(cx, "get-split", buf.ptr(), 0x20000, &mut get2);
    cx.rec("get-split.value", format!("{:?}", get2[0]));
    // whole range
    let mut pl = [attr(0, 0xFFFF_FFFF)];
    svm_set(cx, "reset-preferred", buf.ptr(), 0x20000, &mut pl);
    teardown(cx);
}

fn bad_input<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    let buf = HostBuf::new(0x4000);
    let b = buf.ptr();
    let mut a = [attr(0, t.gpu())];
    // deliberate NULL start, size 0, unaligned start, unaligned size
    svm_set(cx, "null-start", null_mut(), 0x1000, &mut a);
    svm_set(cx, "size-zero", b, 0, &mut a);
    svm_set(
        cx,
        "start-unaligned",
        b.wrapping_byte_add(16),
        0x1000,
        &mut a,
    );
    svm_set(cx, "size-unaligned", b, 0x1001, &mut a);
    // attribute / ACCESS naming an unknown node
    svm_set(cx, "node-unknown", b, 0x4000, &mut [attr(0, t.nodes + 2)]);
    svm_set(cx, "access-unknown", b, 0x4000, &mut [attr(2, t.nodes + 2)]);
    let mut get = [attr(0, 0)];
    // deliberate NULL start, unaligned start
    svm_get(cx, "get-null-start", null_mut(), 0x1000, &mut get);
    svm_get(
        cx,
        "get-unaligned",
        b.wrapping_byte_add(16),
        0x1000,
        &mut get,
    );
    teardown(cx);
}

/// `HSA_SVM_ATTR_*` types.
mod svm_ty {
    pub const PREFERRED_LOC: u32 = 0;
    pub const PREFETCH_LOC: u32 = 1;
    pub const ACCESS: u32 = 2;
    pub const ACCESS_IN_PLACE: u32 = 3;
    pub const NO_ACCESS: u32 = 4;
    pub const SET_FLAGS: u32 = 5;
    pub const GRANULARITY: u32 = 7;
}

/// `HSA_SVM_FLAG_*` bits.
mod svm_flag {
    pub const HOST_ACCESS: u32 = 0x1;
    pub const COHERENT: u32 = 0x2;
    pub const GPU_RO: u32 = 0x8;
    pub const GPU_EXEC: u32 = 0x10;
}

/// SetAttr on fresh anonymous memory straight from `mmap` (issue 27:
/// kfdtest's `RegisterSVMRange` sets PREFETCH_LOC and PREFERRED_LOC to the
/// GPU, SET_FLAGS HOST_ACCESS|COHERENT and ACCESS for the GPU, and the
/// newest upstream sends that to the kernel and succeeds), and the
/// combinations next to it: the CPU or no preferred location, a CPU
/// prefetch, the three access types, other flag sets, another order, a
/// granularity; then the CPU node or an unknown node where a GPU is
/// needed. Each case gets its own 16 KiB mapping (kept to the end, so no
/// address is reused) and, where the set succeeded, a GetAttr of every
/// attribute. The valid cases are also `check.*` records: they must
/// succeed whatever the reference does.
fn svm_fresh_mmap<A: Abi>(cx: &mut Cx<A>) {
    use svm_flag::*;
    use svm_ty::*;
    let Some(t) = setup(cx) else { return };
    let (g, bad) = (t.gpu(), t.nodes + 1);
    let flags = HOST_ACCESS | COHERENT;
    let none = 0xFFFF_FFFF;
    let four = |prefetch, preferred, flags, access_ty, access| {
        vec![
            attr(PREFETCH_LOC, prefetch),
            attr(PREFERRED_LOC, preferred),
            attr(SET_FLAGS, flags),
            attr(access_ty, access),
        ]
    };
    let mut cases: Vec<(&str, bool, Vec<HSA_SVM_ATTRIBUTE>)> = vec![
        ("gpu-four", true, four(g, g, flags, ACCESS, g)),
        ("prefetch-cpu", true, four(0, g, flags, ACCESS, g)),
        ("preferred-cpu", true, four(g, 0, flags, ACCESS, g)),
        ("preferred-undefined", true, four(g, none, flags, ACCESS, g)),
        (
            "access-in-place",
            true,
            four(g, g, flags, ACCESS_IN_PLACE, g),
        ),
        ("no-access", true, four(0, 0, flags, NO_ACCESS, g)),
        ("host-access-only", true, four(g, g, HOST_ACCESS, ACCESS, g)),
        (
            "ro-exec",
            true,
            four(g, g, flags | GPU_RO | GPU_EXEC, ACCESS, g),
        ),
        ("cpu-everything", true, four(0, 0, flags, ACCESS, g)),
        ("access-cpu-node", false, four(g, g, flags, ACCESS, 0)),
        (
            "prefetch-unknown-node",
            false,
            four(bad, g, flags, ACCESS, g),
        ),
    ];
    let mut reversed = four(g, g, flags, ACCESS, g);
    reversed.reverse();
    cases.push(("gpu-four-reversed", true, reversed));
    let mut granular = four(g, g, flags, ACCESS, g);
    granular.push(attr(GRANULARITY, 2));
    cases.push(("gpu-four-granularity", true, granular));
    let mut maps = Vec::new();
    for (label, valid, mut set) in cases {
        let m = AnonMap::new(0x4000);
        // a fresh, untouched 16 KiB mapping; the case's attributes
        let s = svm_set(cx, &format!("{label}.set"), m.ptr(), 0x4000, &mut set);
        if valid {
            cx.check(&format!("svm.{label}"), s == 0, format!("status {s}"));
        }
        if s == 0 {
            // The kernel answers an ACCESS query with the type that
            // applies (it refuses to be asked with the other two).
            let mut get = [
                attr(PREFERRED_LOC, 0),
                attr(PREFETCH_LOC, 0),
                attr(ACCESS, g),
                attr(SET_FLAGS, 0),
                attr(GRANULARITY, 0),
            ];
            // the same range; five attributes
            if svm_get(cx, &format!("{label}.get"), m.ptr(), 0x4000, &mut get) == 0 {
                // What was set, read back. Flags are ORed into those the
                // range had and the granularity is kept: a range an earlier
                // scenario left at this address (freed heap memory the
                // simulator never saw unmapped) shows through those, so
                // only the requested bits and a requested granularity count.
                let want = |ty: u32| set.iter().find(|a| a.r#type == ty).map(|a| a.value);
                let mut got = vec![
                    format!("preferred={:#x}", get[0].value),
                    format!("prefetch={:#x}", get[1].value),
                    format!("access={}:{:#x}", get[2].r#type, get[2].value),
                ];
                if let Some(f) = want(SET_FLAGS) {
                    got.push(format!("flags-set={}", get[3].value & f == f));
                }
                if want(GRANULARITY).is_some() {
                    got.push(format!("granularity={}", get[4].value));
                }
                cx.rec(&format!("{label}.got"), got.join(" "));
            }
        }
        maps.push(m);
    }
    teardown(cx);
    drop(maps);
}

/// The SVM calls without a topology snapshot: before the first
/// AcquireSystemProperties and after ReleaseSystemProperties. The C
/// library needs the snapshot only to translate node ids: attributes
/// without a node (flags, granularity) reach the kernel and succeed,
/// attributes naming a node are an invalid node (5) before any request.
/// A first open, snapshot and close only find the GPU node.
fn svm_no_snapshot<A: Abi>(cx: &mut Cx<A>) {
    use svm_flag::*;
    use svm_ty::*;
    let Some(t) = setup(cx) else { return };
    teardown(cx);
    let g = t.gpu();
    if kmt!(cx, "open", hsaKmtOpenKFD(), "no arguments") != 0 {
        return;
    }
    let flags = HOST_ACCESS | COHERENT;
    let four = |n| {
        [
            attr(PREFETCH_LOC, n),
            attr(PREFERRED_LOC, n),
            attr(SET_FLAGS, flags),
            attr(ACCESS, n),
        ]
    };
    let m = AnonMap::new(0x4000);
    // a fresh 16 KiB mapping; no snapshot yet
    let s = svm_set(
        cx,
        "before.flags",
        m.ptr(),
        0x4000,
        &mut [attr(SET_FLAGS, flags)],
    );
    cx.check("svm.before-acquire.flags", s == 0, format!("status {s}"));
    let s = svm_set(
        cx,
        "before.granularity",
        m.ptr(),
        0x4000,
        &mut [attr(GRANULARITY, 3)],
    );
    cx.check(
        "svm.before-acquire.granularity",
        s == 0,
        format!("status {s}"),
    );
    let s = svm_set(cx, "before.four", m.ptr(), 0x4000, &mut four(g));
    cx.check(
        "svm.before-acquire.node-refused",
        s == 5,
        format!("status {s}"),
    );
    let mut get = [attr(GRANULARITY, 0), attr(SET_FLAGS, 0)];
    // same range; two attributes without a node
    if svm_get(cx, "before.get", m.ptr(), 0x4000, &mut get) == 0 {
        cx.rec(
            "before.got",
            format!("{:#x} {}", get[0].value, get[1].value & flags == flags),
        );
    }
    let mut sys = hsakmt_sys::common::HsaSystemProperties::default();
    if kmt!(
        cx,
        "acquire",
        hsaKmtAcquireSystemProperties(&mut sys),
        "live out struct"
    ) == 0
    {
        let s = svm_set(cx, "acquired.four", m.ptr(), 0x4000, &mut four(g));
        cx.check("svm.acquired.four", s == 0, format!("status {s}"));
        kmt!(
            cx,
            "release",
            hsaKmtReleaseSystemProperties(),
            "no arguments"
        );
        let s = svm_set(cx, "released.four", m.ptr(), 0x4000, &mut four(g));
        cx.check("svm.released.node-refused", s == 5, format!("status {s}"));
        let s = svm_set(
            cx,
            "released.flags",
            m.ptr(),
            0x4000,
            &mut [attr(SET_FLAGS, flags)],
        );
        cx.check("svm.released.flags", s == 0, format!("status {s}"));
    }
    kmt!(cx, "close", hsaKmtCloseKFD(), "no arguments");
    drop(m);
}
