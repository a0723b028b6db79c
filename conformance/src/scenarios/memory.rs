//! `memory`: the AllocMemory flag matrix, sizes, frees and bad inputs;
//! AllocMemoryAlign, AvailableMemory, GetAMDGPUDeviceHandle and the ASAN
//! header pages (6.2.4 and newest); MapMemoryToGPUNodes of a NoAddress
//! allocation; AisReadWriteFile and AllocMemoryHostGtt (newest).

use std::ffi::c_void;
use std::ptr::null_mut;

use super::Applies::Since;
use super::{alloc, free, pattern, pointer_info, require, setup, teardown, Table, Topo};
use crate::abi::AbiKind::{Newest, Rocm52, Rocm62};
use crate::abi::{memflag as mf, Abi};
use crate::cx::{Cx, HostBuf};
use crate::kmt;

/// Flags of the allocation matrix (every subset is one scenario per node
/// kind).
const MATRIX: &[u32] = &[
    mf::HOST_ACCESS,
    mf::NON_PAGED,
    mf::COARSE_GRAIN,
    mf::UNCACHED,
    mf::NO_SUBSTITUTE,
    mf::AQL_QUEUE,
    mf::EXECUTE,
];

/// Which node a memory scenario allocates on.
#[derive(Debug, Clone, Copy)]
enum Where {
    System,
    Vram,
}

impl Where {
    fn node(self, t: &Topo) -> u32 {
        match self {
            Where::System => 0,
            Where::Vram => t.gpu(),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Where::System => "sys",
            Where::Vram => "vram",
        }
    }
}

/// Allocation, pointer info, pattern, map, unmap, free.
fn alloc_cycle<A: Abi>(cx: &mut Cx<A>, node: u32, size: u64, flags: u32) {
    let Some(p) = alloc(cx, "alloc", node, size, flags) else {
        return;
    };
    if flags & mf::HOST_ACCESS != 0 {
        // SAFETY: the library returned success for a HostAccess
        // allocation of `size` bytes at `p`.
        unsafe { pattern(cx, "host-rw", p, size) };
    }
    pointer_info(cx, "info", p);
    let mut va = 0u64;
    let s = kmt!(
        cx,
        "map",
        hsaKmtMapMemoryToGPU(p, size, &mut va),
        "allocation of this library; live out"
    );
    if s == 0 {
        let r = if va as usize == p as usize {
            "=ptr".to_string()
        } else {
            cx.rel(va as usize)
        };
        cx.rec("map.va", r);
        pointer_info(cx, "info-mapped", p);
        kmt!(cx, "unmap", hsaKmtUnmapMemoryToGPU(p), "mapped just now");
    }
    free(cx, "free", p, size);
}

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

/// `HsaMemFlags::NoAddress`.
const NO_ADDRESS: u32 = 1 << 18;

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    for w in [Where::System, Where::Vram] {
        for mask in 0u32..(1 << MATRIX.len()) {
            let flags: u32 = MATRIX
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, f)| *f)
                .fold(0, |a, b| a | b);
            let name = format!("memory/alloc-{}-{}", w.name(), mf::describe(flags));
            t.add(Since(Rocm52), name, move |cx| alloc_matrix(cx, w, flags));
        }
    }
    for (name, flags) in [
        ("memory/alloc-sys-host+ro", mf::HOST_ACCESS | mf::READ_ONLY),
        ("memory/alloc-sys-host+wc", mf::HOST_ACCESS | mf::CACHE_WC),
        (
            "memory/alloc-sys-host+nonuma",
            mf::HOST_ACCESS | mf::NO_NUMA_BIND,
        ),
    ] {
        t.add(Since(Rocm52), name, move |cx| alloc_sys(cx, flags));
    }
    for (name, size, vram) in [
        ("memory/size-4k-sys", 0x1000u64, false),
        ("memory/size-2m-vram", 0x20_0000, true),
        ("memory/size-2m-sys", 0x20_0000, false),
        ("memory/size-64m-vram", 0x400_0000, true),
    ] {
        t.add(Since(Rocm52), name, move |cx| alloc_size(cx, size, vram));
    }
    t.add(Since(Rocm52), "memory/scratch", scratch);
    t.add(Since(Rocm52), "memory/gds", gds);
    t.add(Since(Rocm52), "memory/many-distinct", many_distinct);
    t.add(Since(Rocm52), "memory/bad-input", bad_input);
    t.add(Since(Rocm52), "memory/double-free", double_free);
    t.add(Since(Rocm52), "memory/free-wrong-size", free_wrong_size);
    t.add(Since(Rocm52), "memory/free-interior", free_interior);
    for vram in [false, true] {
        for &align in ALIGNMENTS {
            let name = format!(
                "memory/align-{}-{align:#x}",
                if vram { "vram" } else { "sys" }
            );
            t.add(Since(Rocm62), name, move |cx| alloc_align_cycle(cx, vram, align));
        }
    }
    for (name, vram) in [("sys", false), ("vram", true)] {
        t.add(
            Since(Rocm62),
            format!("memory/align-{name}-only-address"),
            move |cx| align_only_address(cx, vram),
        );
    }
    t.add(Since(Rocm62), "memory/align-bad-input", align_bad_input);
    t.add(Since(Rocm62), "memory/available", memory_available);
    t.add(Since(Rocm62), "memory/available-null", available_null);
    t.add(Since(Rocm62), "memory/amdgpu-device-handle", amdgpu_device_handle);
    t.add(Since(Rocm62), "memory/amdgpu-device-handle-null", amdgpu_device_handle_null);
    t.add(Since(Rocm62), "memory/asan-header-page", asan_header_page);
    t.add(Since(Rocm62), "memory/map-nodes-no-address", map_nodes_no_address);
    t.add(Since(Newest), "memory/ais-read-write-file", ais_read_write_file);
    t.add(Since(Newest), "memory/host-gtt", host_gtt);
}

/// An allocation cycle of 8 KiB on `w` with `flags` (one cell of the
/// matrix).
fn alloc_matrix<A: Abi>(cx: &mut Cx<A>, w: Where, flags: u32) {
    let Some(t) = setup(cx) else { return };
    alloc_cycle(cx, w.node(&t), 0x2000, flags);
    teardown(cx);
}

/// An allocation cycle of 8 KiB of system memory with `flags`.
fn alloc_sys<A: Abi>(cx: &mut Cx<A>, flags: u32) {
    let Some(_t) = setup(cx) else { return };
    alloc_cycle(cx, 0, 0x2000, flags);
    teardown(cx);
}

/// An allocation cycle of `size` bytes: VRAM, or host-accessible system
/// memory.
fn alloc_size<A: Abi>(cx: &mut Cx<A>, size: u64, vram: bool) {
    let Some(t) = setup(cx) else { return };
    let node = if vram { t.gpu() } else { 0 };
    let flags = if vram { 0 } else { mf::HOST_ACCESS };
    alloc_cycle(cx, node, size, flags);
    teardown(cx);
}

/// AllocMemoryAlign of address space only (`OnlyAddress`), 64 KiB aligned.
fn align_only_address<A: Abi>(cx: &mut Cx<A>, vram: bool) {
    let Some(t) = setup(cx) else { return };
    let (node, flags) = kind(&t, vram);
    let flags = flags | ONLY_ADDRESS;
    if let Some(p) = alloc_align(cx, "alloc", node, 0x4000, 0x1_0000, flags) {
        pointer_info(cx, "info", p);
        free(cx, "free", p, 0x4000);
    }
    teardown(cx);
}

/// AllocMemoryAlign of 16 KiB with `align` on system memory or VRAM: the
/// address, pointer info, a map and unmap, the free.
fn alloc_align_cycle<A: Abi>(cx: &mut Cx<A>, vram: bool, align: u64) {
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
}

fn scratch<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    if let Some(p) = alloc(cx, "alloc", t.gpu(), 0x10_0000, mf::SCRATCH) {
        pointer_info(cx, "info", p);
        free(cx, "free", p, 0x10_0000);
    }
    teardown(cx);
}

fn gds<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    if let Some(p) = alloc(cx, "alloc", t.gpu(), 0x1000, mf::GDS) {
        free(cx, "free", p, 0x1000);
    }
    teardown(cx);
}

fn many_distinct<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    let mut ptrs = Vec::new();
    for i in 0..32u32 {
        let node = if i % 2 == 0 { 0 } else { t.gpu() };
        let flags = if i % 2 == 0 { mf::HOST_ACCESS } else { 0 };
        let mut p: *mut c_void = null_mut();
        let s = kmt!(
            cx,
            "alloc",
            hsaKmtAllocMemory(node, 0x3000, A::mem_flags(flags), &mut p),
            "live out-pointer"
        );
        if s == 0 {
            ptrs.push(p as usize);
        }
    }
    let mut sorted = ptrs.clone();
    sorted.sort();
    let disjoint = sorted.windows(2).all(|w| w[0] + 0x3000 <= w[1]);
    cx.rec("count", ptrs.len());
    cx.rec("disjoint", disjoint);
    for p in ptrs {
        kmt!(
            cx,
            "free",
            hsaKmtFreeMemory(p as *mut c_void, 0x3000),
            "allocated above"
        );
    }
    teardown(cx);
}

fn bad_input<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    let host = A::mem_flags(mf::HOST_ACCESS);
    let mut p: *mut c_void = null_mut();
    kmt!(
        cx,
        "size-zero",
        hsaKmtAllocMemory(0, 0, host, &mut p),
        "live out; size 0"
    );
    cx.rec("size-zero.ptr", cx.rel(p as usize));
    p = null_mut();
    let s = kmt!(
        cx,
        "size-unaligned",
        hsaKmtAllocMemory(0, 0x1001, host, &mut p),
        "live out; unaligned size"
    );
    if s == 0 {
        kmt!(
            cx,
            "size-unaligned.free",
            hsaKmtFreeMemory(p, 0x1001),
            "allocated above"
        );
    }
    p = null_mut();
    kmt!(
        cx,
        "node-unknown",
        hsaKmtAllocMemory(t.nodes, 0x1000, host, &mut p),
        "live out; node out of range"
    );
    kmt!(
        cx,
        "out-null",
        hsaKmtAllocMemory(0, 0x1000, host, null_mut()),
        "deliberate NULL out-pointer"
    );
    p = null_mut();
    kmt!(
        cx,
        "fixed-null",
        hsaKmtAllocMemory(
            0,
            0x1000,
            A::mem_flags(mf::HOST_ACCESS | mf::FIXED_ADDRESS),
            &mut p
        ),
        "FixedAddress with *p == NULL"
    );
    let buf = HostBuf::new(0x1000);
    kmt!(
        cx,
        "free-null",
        hsaKmtFreeMemory(null_mut(), 0x1000),
        "deliberate NULL"
    );
    kmt!(
        cx,
        "free-unknown",
        hsaKmtFreeMemory(buf.ptr(), 0x1000),
        "address unknown to the thunk"
    );
    teardown(cx);
}

fn double_free<A: Abi>(cx: &mut Cx<A>) {
    let Some(_t) = setup(cx) else { return };
    if let Some(p) = alloc(cx, "alloc", 0, 0x1000, mf::HOST_ACCESS) {
        free(cx, "free", p, 0x1000);
        free(cx, "free-again", p, 0x1000);
    }
    teardown(cx);
}

fn free_wrong_size<A: Abi>(cx: &mut Cx<A>) {
    let Some(_t) = setup(cx) else { return };
    if let Some(p) = alloc(cx, "alloc", 0, 0x4000, mf::HOST_ACCESS) {
        free(cx, "free", p, 0x1000);
        pointer_info(cx, "info-after", p);
    }
    teardown(cx);
}

fn free_interior<A: Abi>(cx: &mut Cx<A>) {
    let Some(_t) = setup(cx) else { return };
    if let Some(p) = alloc(cx, "alloc", 0, 0x4000, mf::HOST_ACCESS) {
        kmt!(
            cx,
            "free-interior",
            hsaKmtFreeMemory(p.wrapping_byte_add(0x1000), 0x1000),
            "address inside an allocation"
        );
        pointer_info(cx, "info-interior", p.wrapping_byte_add(0x1000));
        free(cx, "free", p, 0x4000);
    }
    teardown(cx);
}

fn align_bad_input<A: Abi>(cx: &mut Cx<A>) {
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
}

fn memory_available<A: Abi>(cx: &mut Cx<A>) {
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
}

fn available_null<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    kmt!(
        cx,
        "null",
        hsaKmtAvailableMemory(t.gpu(), null_mut()),
        "deliberate NULL out-pointer"
    );
    teardown(cx);
}

fn amdgpu_device_handle<A: Abi>(cx: &mut Cx<A>) {
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
}

fn amdgpu_device_handle_null<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    kmt!(
        cx,
        "null",
        hsaKmtGetAMDGPUDeviceHandle(t.gpu(), null_mut()),
        "deliberate NULL out-pointer"
    );
    teardown(cx);
}

fn asan_header_page<A: Abi>(cx: &mut Cx<A>) {
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
}

/// MapMemoryToGPUNodes of NoAddress VRAM (6.2.4 and newest).
fn map_nodes_no_address<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    let g = t.gpu();
    if let Some(p) = alloc(cx, "alloc", g, 0x4000, mf::NON_PAGED | NO_ADDRESS) {
        let mut va = 0u64;
        let mut one = [g];
        kmt!(
            cx,
            "map-nodes",
            hsaKmtMapMemoryToGPUNodes(p, 0x4000, &mut va, A::map_flags(0), 1, one.as_mut_ptr()),
            "a NoAddress allocation; live out and node array"
        );
        free(cx, "free", p, 0x4000);
    }
    teardown(cx);
}

fn ais_read_write_file<A: Abi>(cx: &mut Cx<A>) {
    if !require(cx, &["hsaKmtAisReadWriteFile"]) {
        return;
    }
    let Some(_) = setup(cx) else { return };
    let (mut copied, mut status) = (0u64, 0i32);
    let buf = HostBuf::new(0x1000);
    kmt!(
        cx,
        "read",
        hsaKmtAisReadWriteFile(buf.ptr(), 0x1000, 0, 0, 1, &mut copied, &mut status),
        "an address unknown to the thunk; stdin"
    );
    teardown(cx);
}

fn host_gtt<A: Abi>(cx: &mut Cx<A>) {
    if !require(cx, &["hsaKmtAllocMemoryHostGtt"]) {
        return;
    }
    let Some(t) = setup(cx) else { return };
    let mut p: *mut c_void = null_mut();
    let s = kmt!(
        cx,
        "alloc",
        hsaKmtAllocMemoryHostGtt(
            0,
            t.gpu(),
            0x4000,
            A::mem_flags(mf::HOST_ACCESS | mf::NON_PAGED),
            &mut p
        ),
        "live out-pointer"
    );
    if s == 0 {
        free(cx, "free", p, 0x4000);
    }
    teardown(cx);
}
