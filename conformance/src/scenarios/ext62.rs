//! Scenarios for the functions libhsakmt 6.2.4 added outside the debugger
//! and the event waits (6.2.4 and newest): `memory` (AllocMemoryAlign,
//! AvailableMemory, GetAMDGPUDeviceHandle, the ASAN header pages),
//! `dmabuf` (unchecked outputs), `perf` (PC sampling) and `events` (the
//! SMI events descriptor).

use std::ffi::c_void;
use std::ptr::null_mut;

use hsakmt_sys::since_6_2::HsaPcSamplingInfo;

use super::{add, free, pointer_info, setup, teardown, Scenario, Topo};
use crate::abi::{memflag as mf, Abi, AbiKind};
use crate::cx::{Cx, HostBuf};
use crate::kmt;

/// `HsaMemFlags::OnlyAddress` (6.2.4 and newest): address space only.
const ONLY_ADDRESS: u32 = 1 << 19;

/// Alignments of the AllocMemoryAlign matrix (0 = the default).
const ALIGNMENTS: &[u64] = &[0, 0x1000, 0x2000, 0x10000, 0x20_0000];

/// `hsaKmtAllocMemoryAlign`; records status, pointer relation and
/// whether the address honours the alignment; returns the address.
fn alloc_align<A: Abi>(
    cx: &mut Cx<A>,
    label: &str,
    node: u32,
    size: u64,
    align: u64,
    flags: u32,
) -> Option<*mut c_void> {
    let mut p: *mut c_void = null_mut();
    let s = kmt!(
        cx,
        label,
        hsaKmtAllocMemoryAlign(node, size, align, A::mem_flags(flags), &mut p),
        "p is a live out-pointer"
    );
    let p = super::allocated(cx, label, s, p, size)?;
    cx.rec(
        &format!("{label}.aligned"),
        align == 0 || (p as u64) % align == 0,
    );
    Some(p)
}

/// The node and flags of one AllocMemoryAlign memory kind.
fn kind(t: &Topo, vram: bool) -> (u32, u32) {
    if vram {
        (t.gpu(), mf::NON_PAGED)
    } else {
        (0, mf::HOST_ACCESS)
    }
}

/// `hsaKmtGetAMDGPUDeviceHandle`: status and whether a handle came back.
fn device_handle<A: Abi>(cx: &mut Cx<A>, label: &str, node: u32) -> *mut c_void {
    let mut h: *mut c_void = null_mut();
    kmt!(
        cx,
        label,
        hsaKmtGetAMDGPUDeviceHandle(node, &mut h),
        "live out-pointer"
    );
    cx.rec(&format!("{label}.nonnull"), !h.is_null());
    h
}

/// `hsaKmtAvailableMemory`: status; the value only by the caller.
fn available<A: Abi>(cx: &mut Cx<A>, label: &str, node: u32) -> (u32, u64) {
    let mut n = u64::MAX;
    let s = kmt!(
        cx,
        label,
        hsaKmtAvailableMemory(node, &mut n),
        "live out word"
    );
    (s, n)
}

fn memory<A: Abi>(v: &mut Vec<Scenario<A>>) {
    for vram in [false, true] {
        for &align in ALIGNMENTS {
            let name = format!(
                "memory/align-{}-{align:#x}",
                if vram { "vram" } else { "sys" }
            );
            add(v, name, move |cx| {
                let Some(t) = setup(cx) else { return };
                let (node, flags) = kind(&t, vram);
                if let Some(p) = alloc_align(cx, "alloc", node, 0x4000, align, flags) {
                    pointer_info(cx, "info", p);
                    let mut va = 0u64;
                    kmt!(
                        cx,
                        "map",
                        hsaKmtMapMemoryToGPU(p, 0x4000, &mut va),
                        "allocation above; live out"
                    );
                    kmt!(cx, "unmap", hsaKmtUnmapMemoryToGPU(p), "mapped above");
                    free(cx, "free", p, 0x4000);
                }
                teardown(cx);
            });
        }
    }
    for (name, vram) in [("sys", false), ("vram", true)] {
        add(v, format!("memory/align-{name}-only-address"), move |cx| {
            let Some(t) = setup(cx) else { return };
            let (node, flags) = kind(&t, vram);
            let flags = flags | ONLY_ADDRESS;
            if let Some(p) = alloc_align(cx, "alloc", node, 0x4000, 0x1_0000, flags) {
                pointer_info(cx, "info", p);
                free(cx, "free", p, 0x4000);
            }
            teardown(cx);
        });
    }
    add(v, "memory/align-bad-input", |cx| {
        let Some(t) = setup(cx) else { return };
        let (g, host) = (t.gpu(), mf::HOST_ACCESS);
        let cases: &[(&str, u32, u64, u64, u32)] = &[
            ("below-page", 0, 0x1000, 0x800, host),
            ("not-power-of-two", 0, 0x3000, 0x3000, host),
            ("one", 0, 0x1000, 1, host),
            ("bad-node-bad-align", t.nodes + 1, 0x1000, 0x3000, host),
            ("bad-align-size-zero", 0, 0, 0x3000, host),
            ("size-not-page", 0, 0x1800, 0x1000, host),
            ("scratch-aligned", g, 0x10000, 0x10000, mf::SCRATCH),
            (
                "vram-coarse-uncached",
                g,
                0x1000,
                0x1000,
                mf::NON_PAGED | mf::COARSE_GRAIN | mf::UNCACHED,
            ),
            ("sys-huge-align", 0, 0x1000, 1 << 62, host),
            ("vram-huge-align", g, 0x1000, 1 << 62, mf::NON_PAGED),
        ];
        for &(label, node, size, align, flags) in cases {
            if let Some(p) = alloc_align(cx, label, node, size, align, flags) {
                free(cx, "free", p, size);
            }
        }
        kmt!(
            cx,
            "out-null",
            hsaKmtAllocMemoryAlign(0, 0x1000, 0x1000, A::mem_flags(host), null_mut()),
            "deliberate NULL out-pointer"
        );
        kmt!(
            cx,
            "out-null-bad-node",
            hsaKmtAllocMemoryAlign(t.nodes + 1, 0x1000, 0x1000, A::mem_flags(host), null_mut()),
            "deliberate NULL out-pointer, unknown node"
        );
        teardown(cx);
    });
    add(v, "memory/available", |cx| {
        let Some(t) = setup(cx) else { return };
        for n in 0..t.nodes {
            let (s, bytes) = available(cx, &format!("node{n}"), n);
            if s == 0 {
                cx.rec(&format!("node{n}.nonzero"), bytes != 0);
            }
        }
        available(cx, "unknown-node", t.nodes);
        let g = t.gpu();
        let (s0, before) = available(cx, "before-alloc", g);
        let size = 0x20_0000u64;
        let p = super::alloc(cx, "alloc", g, size, mf::NON_PAGED);
        let (s1, after) = available(cx, "after-alloc", g);
        if s0 == 0 && s1 == 0 {
            cx.rec("alloc.used", before.saturating_sub(after));
        }
        if let Some(p) = p {
            free(cx, "free", p, size);
        }
        let (s2, freed) = available(cx, "after-free", g);
        if s0 == 0 && s2 == 0 {
            cx.rec("free.back", freed == before);
        }
        kmt!(
            cx,
            "release",
            hsaKmtReleaseSystemProperties(),
            "no arguments"
        );
        available(cx, "after-release", g);
        kmt!(cx, "close", hsaKmtCloseKFD(), "no arguments");
    });
    add(v, "memory/available-null", |cx| {
        let Some(t) = setup(cx) else { return };
        kmt!(
            cx,
            "null",
            hsaKmtAvailableMemory(t.gpu(), null_mut()),
            "deliberate NULL out-pointer"
        );
        teardown(cx);
    });
    add(v, "memory/amdgpu-device-handle", |cx| {
        if kmt!(cx, "open", hsaKmtOpenKFD(), "no arguments") != 0 {
            return;
        }
        device_handle(cx, "before-acquire", 1);
        kmt!(cx, "close-unacquired", hsaKmtCloseKFD(), "no arguments");
        let Some(t) = setup(cx) else { return };
        let mut seen: Vec<*mut c_void> = Vec::new();
        for n in 0..t.nodes {
            let h = device_handle(cx, &format!("node{n}"), n);
            if !h.is_null() {
                let again = device_handle(cx, &format!("node{n}-again"), n);
                cx.rec(&format!("node{n}.stable"), again == h);
                cx.rec(&format!("node{n}.distinct"), !seen.contains(&h));
                seen.push(h);
            }
        }
        device_handle(cx, "unknown-node", t.nodes);
        let g = t.gpu();
        let first = device_handle(cx, "gpu", g);
        kmt!(
            cx,
            "release",
            hsaKmtReleaseSystemProperties(),
            "no arguments"
        );
        device_handle(cx, "after-release", g);
        let mut sp = hsakmt_sys::common::HsaSystemProperties::default();
        kmt!(
            cx,
            "reacquire",
            hsaKmtAcquireSystemProperties(&mut sp),
            "live struct"
        );
        let h = device_handle(cx, "after-reacquire", g);
        cx.rec("after-reacquire.same", h == first);
        teardown(cx);
    });
    add(v, "memory/amdgpu-device-handle-null", |cx| {
        let Some(t) = setup(cx) else { return };
        kmt!(
            cx,
            "null",
            hsaKmtGetAMDGPUDeviceHandle(t.gpu(), null_mut()),
            "deliberate NULL out-pointer"
        );
        teardown(cx);
    });
    add(v, "memory/asan-header-page", |cx| {
        let Some(t) = setup(cx) else { return };
        let buf = HostBuf::new(0x1000);
        let p = super::alloc(
            cx,
            "alloc",
            t.gpu(),
            0x4000,
            mf::NON_PAGED | mf::HOST_ACCESS,
        );
        for (label, addr) in [
            ("allocation", p.unwrap_or(null_mut())),
            ("unknown", buf.ptr()),
            ("null", null_mut()),
        ] {
            kmt!(
                cx,
                &format!("replace-{label}"),
                hsaKmtReplaceAsanHeaderPage(addr),
                "any address: only ASAN builds look at it"
            );
            kmt!(
                cx,
                &format!("return-{label}"),
                hsaKmtReturnAsanHeaderPage(addr),
                "any address: only ASAN builds look at it"
            );
        }
        if let Some(p) = p {
            free(cx, "free", p, 0x4000);
        }
        teardown(cx);
    });
}

fn dmabuf<A: Abi>(v: &mut Vec<Scenario<A>>) {
    add(v, "dmabuf/export-null-outputs", |cx| {
        let Some(t) = setup(cx) else { return };
        if let Some(p) = super::alloc(cx, "alloc", t.gpu(), 0x4000, mf::NON_PAGED) {
            let mut off = 0u64;
            kmt!(
                cx,
                "null-fd",
                hsaKmtExportDMABufHandle(p, 0x4000, null_mut(), &mut off),
                "deliberate NULL descriptor out-pointer"
            );
            free(cx, "free", p, 0x4000);
        }
        teardown(cx);
    });
}

fn pc_sampling<A: Abi>(v: &mut Vec<Scenario<A>>) {
    add(v, "perf/pc-sampling", |cx| {
        let Some(t) = setup(cx) else { return };
        let g = t.gpu();
        kmt!(cx, "support", hsaKmtPcSamplingSupport(), "no arguments");
        let mut infos = [HsaPcSamplingInfo::default(); 4];
        let query = |cx: &mut Cx<A>, label: &str, node: u32, buf: *mut c_void, n: u32| {
            let mut size = 0xABCDu32;
            kmt!(
                cx,
                label,
                hsaKmtPcSamplingQueryCapabilities(node, buf, n, &mut size),
                "buffer of n infos or NULL; live out word"
            );
            cx.rec(&format!("{label}.size"), size);
        };
        query(cx, "query-count", g, null_mut(), 0);
        query(cx, "query-buffer", g, infos.as_mut_ptr().cast(), 4);
        query(cx, "query-cpu-node", 0, null_mut(), 0);
        query(cx, "query-unknown-node", t.nodes, null_mut(), 0);
        kmt!(
            cx,
            "query-null-size",
            hsaKmtPcSamplingQueryCapabilities(g, null_mut(), 0, null_mut()),
            "deliberate NULL size"
        );
        let create = |cx: &mut Cx<A>, label: &str, node: u32| {
            let mut info = HsaPcSamplingInfo {
                value: 1000,
                ..Default::default()
            };
            let mut id = 0x7777u32;
            kmt!(
                cx,
                label,
                hsaKmtPcSamplingCreate(node, &mut info, &mut id),
                "live info and out word"
            );
            cx.rec(&format!("{label}.trace"), id);
        };
        create(cx, "create", g);
        create(cx, "create-unknown-node", t.nodes);
        let mut id = 0u32;
        kmt!(
            cx,
            "create-null-info",
            hsaKmtPcSamplingCreate(g, null_mut(), &mut id),
            "deliberate NULL info"
        );
        let mut info = HsaPcSamplingInfo::default();
        kmt!(
            cx,
            "create-null-trace",
            hsaKmtPcSamplingCreate(g, &mut info, null_mut()),
            "deliberate NULL trace id"
        );
        for (label, node, trace) in [
            ("id0", g, 0u32),
            ("unknown-trace", g, 7),
            ("unknown-node", t.nodes, 7),
        ] {
            kmt!(
                cx,
                &format!("start-{label}"),
                hsaKmtPcSamplingStart(node, trace),
                "no pointers"
            );
            kmt!(
                cx,
                &format!("stop-{label}"),
                hsaKmtPcSamplingStop(node, trace),
                "no pointers"
            );
            kmt!(
                cx,
                &format!("destroy-{label}"),
                hsaKmtPcSamplingDestroy(node, trace),
                "no pointers"
            );
        }
        teardown(cx);
    });
}

fn smi<A: Abi>(v: &mut Vec<Scenario<A>>) {
    add(v, "events/smi", |cx| {
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
    });
    add(v, "events/smi-null", |cx| {
        let Some(t) = setup(cx) else { return };
        kmt!(
            cx,
            "null",
            hsaKmtOpenSMI(t.gpu(), null_mut()),
            "deliberate NULL out-pointer"
        );
        teardown(cx);
    });
}

pub(super) fn add_all<A: Abi>(v: &mut Vec<Scenario<A>>) {
    if A::KIND == AbiKind::Rocm52 {
        return;
    }
    memory(v);
    dmabuf(v);
    pc_sampling(v);
    smi(v);
}
