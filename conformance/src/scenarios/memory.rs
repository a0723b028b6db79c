//! `memory` (AllocMemory flag matrix, sizes, frees), `map`
//! (MapMemoryToGPU / ...Nodes / Unmap), `register` (userptr),
//! `share` (IPC handles, graphics handles), `dmabuf` (6.2.4 and newest) and
//! `svm` (SVM attributes).

use std::ffi::c_void;
use std::ptr::null_mut;

use hsakmt_sys::common::{HsaSharedMemoryHandle, HSA_SVM_ATTRIBUTE};

use super::{add, alloc, cnull, free, pattern, pointer_info, setup, teardown, Scenario, Topo};
use crate::abi::{memflag as mf, Abi, AbiKind};
use crate::cx::{AnonMap, Cx, HostBuf};
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

pub(super) fn add_all<A: Abi>(v: &mut Vec<Scenario<A>>) {
    // --- memory: the flag matrix on system and VRAM nodes
    for w in [Where::System, Where::Vram] {
        for mask in 0u32..(1 << MATRIX.len()) {
            let flags: u32 = MATRIX
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, f)| *f)
                .fold(0, |a, b| a | b);
            let name = format!("memory/alloc-{}-{}", w.name(), mf::describe(flags));
            add(v, name, move |cx| {
                let Some(t) = setup(cx) else { return };
                alloc_cycle(cx, w.node(&t), 0x2000, flags);
                teardown(cx);
            });
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
        add(v, name, move |cx| {
            let Some(_t) = setup(cx) else { return };
            alloc_cycle(cx, 0, 0x2000, flags);
            teardown(cx);
        });
    }
    for (name, size, vram) in [
        ("memory/size-4k-sys", 0x1000u64, false),
        ("memory/size-2m-vram", 0x20_0000, true),
        ("memory/size-2m-sys", 0x20_0000, false),
        ("memory/size-64m-vram", 0x400_0000, true),
    ] {
        add(v, name, move |cx| {
            let Some(t) = setup(cx) else { return };
            let node = if vram { t.gpu() } else { 0 };
            let flags = if vram { 0 } else { mf::HOST_ACCESS };
            alloc_cycle(cx, node, size, flags);
            teardown(cx);
        });
    }
    add(v, "memory/scratch", |cx| {
        let Some(t) = setup(cx) else { return };
        if let Some(p) = alloc(cx, "alloc", t.gpu(), 0x10_0000, mf::SCRATCH) {
            pointer_info(cx, "info", p);
            free(cx, "free", p, 0x10_0000);
        }
        teardown(cx);
    });
    add(v, "memory/gds", |cx| {
        let Some(t) = setup(cx) else { return };
        if let Some(p) = alloc(cx, "alloc", t.gpu(), 0x1000, mf::GDS) {
            free(cx, "free", p, 0x1000);
        }
        teardown(cx);
    });
    add(v, "memory/many-distinct", |cx| {
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
    });
    add(v, "memory/bad-input", |cx| {
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
    });
    add(v, "memory/double-free", |cx| {
        let Some(_t) = setup(cx) else { return };
        if let Some(p) = alloc(cx, "alloc", 0, 0x1000, mf::HOST_ACCESS) {
            free(cx, "free", p, 0x1000);
            free(cx, "free-again", p, 0x1000);
        }
        teardown(cx);
    });
    add(v, "memory/free-wrong-size", |cx| {
        let Some(_t) = setup(cx) else { return };
        if let Some(p) = alloc(cx, "alloc", 0, 0x4000, mf::HOST_ACCESS) {
            free(cx, "free", p, 0x1000);
            pointer_info(cx, "info-after", p);
        }
        teardown(cx);
    });
    add(v, "memory/free-interior", |cx| {
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
    });

    // --- map
    add(v, "map/to-gpu-nodes", |cx| {
        let Some(t) = setup(cx) else { return };
        for (label, node, flags) in [("sys", 0u32, mf::HOST_ACCESS), ("vram", t.gpu(), 0)] {
            if let Some(p) = alloc(cx, &format!("{label}.alloc"), node, 0x4000, flags) {
                let mut nodes = t.gpus.clone();
                let mut va = 0u64;
                kmt!(
                    cx,
                    &format!("{label}.map-nodes-all"),
                    hsaKmtMapMemoryToGPUNodes(
                        p,
                        0x4000,
                        &mut va,
                        A::map_flags(0),
                        nodes.len() as u64,
                        nodes.as_mut_ptr()
                    ),
                    "node array of the given length"
                );
                pointer_info(cx, &format!("{label}.info"), p);
                kmt!(
                    cx,
                    &format!("{label}.unmap"),
                    hsaKmtUnmapMemoryToGPU(p),
                    "mapped above"
                );
                let mut one = [t.gpu()];
                kmt!(
                    cx,
                    &format!("{label}.map-nodes-one"),
                    hsaKmtMapMemoryToGPUNodes(
                        p,
                        0x4000,
                        &mut va,
                        A::map_flags(0),
                        1,
                        one.as_mut_ptr()
                    ),
                    "node array of 1"
                );
                pointer_info(cx, &format!("{label}.info-one"), p);
                kmt!(
                    cx,
                    &format!("{label}.unmap-one"),
                    hsaKmtUnmapMemoryToGPU(p),
                    "mapped above"
                );
                free(cx, &format!("{label}.free"), p, 0x4000);
            }
        }
        teardown(cx);
    });
    add(v, "map/bad-input", |cx| {
        let Some(t) = setup(cx) else { return };
        let mut va = 0u64;
        kmt!(
            cx,
            "map-null",
            hsaKmtMapMemoryToGPU(null_mut(), 0x1000, &mut va),
            "deliberate NULL"
        );
        let buf = HostBuf::new(0x1000);
        kmt!(
            cx,
            "map-unknown",
            hsaKmtMapMemoryToGPU(buf.ptr(), 0x1000, &mut va),
            "address unknown to the thunk"
        );
        kmt!(
            cx,
            "unmap-null",
            hsaKmtUnmapMemoryToGPU(null_mut()),
            "deliberate NULL"
        );
        kmt!(
            cx,
            "unmap-unknown",
            hsaKmtUnmapMemoryToGPU(buf.ptr()),
            "address unknown to the thunk"
        );
        if let Some(p) = alloc(cx, "alloc", 0, 0x1000, mf::HOST_ACCESS) {
            let mut bad = [t.nodes + 3];
            kmt!(
                cx,
                "nodes-unknown",
                hsaKmtMapMemoryToGPUNodes(p, 0x1000, &mut va, A::map_flags(0), 1, bad.as_mut_ptr()),
                "node array of 1 with an unknown node"
            );
            let mut one = [t.gpu()];
            kmt!(
                cx,
                "nodes-zero-count",
                hsaKmtMapMemoryToGPUNodes(p, 0x1000, &mut va, A::map_flags(0), 0, one.as_mut_ptr()),
                "count 0"
            );
            kmt!(
                cx,
                "nodes-null-array",
                hsaKmtMapMemoryToGPUNodes(p, 0x1000, &mut va, A::map_flags(0), 1, null_mut()),
                "deliberate NULL array"
            );
            kmt!(
                cx,
                "nodes-null-ptr",
                hsaKmtMapMemoryToGPUNodes(
                    null_mut(),
                    0x1000,
                    &mut va,
                    A::map_flags(0),
                    1,
                    one.as_mut_ptr()
                ),
                "deliberate NULL address"
            );
            let mut cpu = [0u32];
            kmt!(
                cx,
                "nodes-cpu",
                hsaKmtMapMemoryToGPUNodes(p, 0x1000, &mut va, A::map_flags(0), 1, cpu.as_mut_ptr()),
                "node array naming the CPU node"
            );
            kmt!(
                cx,
                "unmap-maybe",
                hsaKmtUnmapMemoryToGPU(p),
                "allocation of this library"
            );
            kmt!(
                cx,
                "map",
                hsaKmtMapMemoryToGPU(p, 0x1000, &mut va),
                "allocation; live out"
            );
            kmt!(
                cx,
                "map-twice",
                hsaKmtMapMemoryToGPU(p, 0x1000, &mut va),
                "allocation; live out"
            );
            kmt!(cx, "unmap", hsaKmtUnmapMemoryToGPU(p), "mapped above");
            kmt!(cx, "unmap-twice", hsaKmtUnmapMemoryToGPU(p), "mapped above");
            free(cx, "free", p, 0x1000);
            kmt!(
                cx,
                "map-after-free",
                hsaKmtMapMemoryToGPU(p, 0x1000, &mut va),
                "freed address (no longer known)"
            );
        }
        teardown(cx);
    });

    // --- register (userptr)
    add(v, "register/memory", |cx| {
        let Some(_t) = setup(cx) else { return };
        let buf = HostBuf::new(0x10000);
        cx.note_alloc(buf.ptr() as usize, 0x10000);
        if kmt!(
            cx,
            "register",
            hsaKmtRegisterMemory(buf.ptr(), 0x10000),
            "live page-aligned 64 KiB buffer"
        ) == 0
        {
            pointer_info(cx, "info", buf.ptr());
            let mut va = 0u64;
            if kmt!(
                cx,
                "map",
                hsaKmtMapMemoryToGPU(buf.ptr(), 0x10000, &mut va),
                "registered buffer"
            ) == 0
            {
                cx.rec("map.va", cx.rel(va as usize));
                pointer_info(cx, "info-mapped", buf.ptr());
                kmt!(
                    cx,
                    "unmap",
                    hsaKmtUnmapMemoryToGPU(buf.ptr()),
                    "mapped above"
                );
            }
            kmt!(
                cx,
                "register-twice",
                hsaKmtRegisterMemory(buf.ptr(), 0x10000),
                "already registered"
            );
            kmt!(
                cx,
                "deregister",
                hsaKmtDeregisterMemory(buf.ptr()),
                "registered above"
            );
            kmt!(
                cx,
                "deregister-again",
                hsaKmtDeregisterMemory(buf.ptr()),
                "no longer registered"
            );
        }
        teardown(cx);
    });
    add(v, "register/to-nodes", |cx| {
        let Some(t) = setup(cx) else { return };
        let buf = HostBuf::new(0x10000);
        cx.note_alloc(buf.ptr() as usize, 0x10000);
        let mut nodes = t.gpus.clone();
        if kmt!(
            cx,
            "register",
            hsaKmtRegisterMemoryToNodes(buf.ptr(), 0x10000, nodes.len() as u64, nodes.as_mut_ptr()),
            "live buffer; node array of the given length"
        ) == 0
        {
            pointer_info(cx, "info", buf.ptr());
            let mut va = 0u64;
            let mut one = [t.gpu()];
            kmt!(
                cx,
                "map-nodes",
                hsaKmtMapMemoryToGPUNodes(
                    buf.ptr(),
                    0x10000,
                    &mut va,
                    A::map_flags(0),
                    1,
                    one.as_mut_ptr()
                ),
                "registered buffer; node array of 1"
            );
            kmt!(
                cx,
                "unmap",
                hsaKmtUnmapMemoryToGPU(buf.ptr()),
                "mapped above"
            );
            kmt!(
                cx,
                "deregister",
                hsaKmtDeregisterMemory(buf.ptr()),
                "registered above"
            );
        }
        let mut bad = [t.nodes + 1];
        kmt!(
            cx,
            "unknown-node",
            hsaKmtRegisterMemoryToNodes(buf.ptr(), 0x10000, 1, bad.as_mut_ptr()),
            "node array with an unknown node"
        );
        kmt!(
            cx,
            "zero-nodes",
            hsaKmtRegisterMemoryToNodes(buf.ptr(), 0x10000, 0, nodes.as_mut_ptr()),
            "count 0"
        );
        kmt!(
            cx,
            "null-array",
            hsaKmtRegisterMemoryToNodes(buf.ptr(), 0x10000, 1, null_mut()),
            "deliberate NULL array"
        );
        teardown(cx);
    });
    for (name, flags) in [
        ("register/with-flags-host", mf::HOST_ACCESS),
        (
            "register/with-flags-host+coarse",
            mf::HOST_ACCESS | mf::COARSE_GRAIN,
        ),
        ("register/with-flags-none", 0),
        (
            "register/with-flags-nonpaged",
            mf::HOST_ACCESS | mf::NON_PAGED,
        ),
    ] {
        add(v, name, move |cx| {
            let Some(_t) = setup(cx) else { return };
            let buf = HostBuf::new(0x10000);
            cx.note_alloc(buf.ptr() as usize, 0x10000);
            if kmt!(
                cx,
                "register",
                hsaKmtRegisterMemoryWithFlags(buf.ptr(), 0x10000, A::mem_flags(flags)),
                "live page-aligned buffer"
            ) == 0
            {
                pointer_info(cx, "info", buf.ptr());
                kmt!(
                    cx,
                    "deregister",
                    hsaKmtDeregisterMemory(buf.ptr()),
                    "registered above"
                );
            }
            teardown(cx);
        });
    }
    add(v, "register/bad-input", |cx| {
        let Some(_t) = setup(cx) else { return };
        let buf = HostBuf::new(0x10000);
        kmt!(
            cx,
            "null",
            hsaKmtRegisterMemory(null_mut(), 0x1000),
            "deliberate NULL"
        );
        kmt!(
            cx,
            "size-zero",
            hsaKmtRegisterMemory(buf.ptr(), 0),
            "size 0"
        );
        let s = kmt!(
            cx,
            "unaligned",
            hsaKmtRegisterMemory(buf.ptr().wrapping_byte_add(8), 0x1000),
            "unaligned start inside a live buffer"
        );
        if s == 0 {
            kmt!(
                cx,
                "unaligned.deregister",
                hsaKmtDeregisterMemory(buf.ptr().wrapping_byte_add(8)),
                "registered above"
            );
        }
        kmt!(
            cx,
            "deregister-unknown",
            hsaKmtDeregisterMemory(buf.ptr()),
            "never registered"
        );
        kmt!(
            cx,
            "deregister-null",
            hsaKmtDeregisterMemory(null_mut()),
            "deliberate NULL"
        );
        teardown(cx);
    });

    // --- share (IPC) and graphics handles
    for (name, vram) in [("share/ipc-sys", false), ("share/ipc-vram", true)] {
        add(v, name, move |cx| {
            let Some(t) = setup(cx) else { return };
            let (node, flags) = if vram {
                (t.gpu(), 0)
            } else {
                (0, mf::HOST_ACCESS)
            };
            let Some(p) = alloc(cx, "alloc", node, 0x4000, flags) else {
                teardown(cx);
                return;
            };
            let mut h: HsaSharedMemoryHandle = [0; 8];
            if kmt!(
                cx,
                "share",
                hsaKmtShareMemory(p, 0x4000, &mut h),
                "allocation; live handle"
            ) == 0
            {
                cx.rec("share.handle-nonzero", h.iter().any(|w| *w != 0));
                let mut p2: *mut c_void = null_mut();
                let mut size = 0u64;
                if kmt!(
                    cx,
                    "import",
                    hsaKmtRegisterSharedHandle(&h, &mut p2, &mut size),
                    "handle from ShareMemory; live outs"
                ) == 0
                {
                    cx.rec(
                        "import.ptr",
                        if p2 == p {
                            "=original".into()
                        } else {
                            cx.rel(p2 as usize)
                        },
                    );
                    cx.rec("import.size", size);
                    cx.note_alloc(p2 as usize, size);
                    pointer_info(cx, "import.info", p2);
                    let mut va = 0u64;
                    kmt!(
                        cx,
                        "import.map",
                        hsaKmtMapMemoryToGPU(p2, size, &mut va),
                        "imported range"
                    );
                    kmt!(
                        cx,
                        "import.unmap",
                        hsaKmtUnmapMemoryToGPU(p2),
                        "mapped above"
                    );
                    kmt!(
                        cx,
                        "import.deregister",
                        hsaKmtDeregisterMemory(p2),
                        "imported above"
                    );
                }
                let mut one = [t.gpu()];
                let mut p3: *mut c_void = null_mut();
                if kmt!(
                    cx,
                    "import-nodes",
                    hsaKmtRegisterSharedHandleToNodes(&h, &mut p3, &mut size, 1, one.as_mut_ptr()),
                    "handle; live outs; node array of 1"
                ) == 0
                {
                    cx.note_alloc(p3 as usize, size);
                    pointer_info(cx, "import-nodes.info", p3);
                    kmt!(
                        cx,
                        "import-nodes.deregister",
                        hsaKmtDeregisterMemory(p3),
                        "imported above"
                    );
                }
            }
            free(cx, "free", p, 0x4000);
            teardown(cx);
        });
    }
    add(v, "share/bad-input", |cx| {
        let Some(_t) = setup(cx) else { return };
        let buf = HostBuf::new(0x1000);
        let mut h: HsaSharedMemoryHandle = [0; 8];
        kmt!(
            cx,
            "share-unknown",
            hsaKmtShareMemory(buf.ptr(), 0x1000, &mut h),
            "address unknown to the thunk"
        );
        if let Some(p) = alloc(cx, "alloc", 0, 0x1000, mf::HOST_ACCESS) {
            kmt!(
                cx,
                "share-null-handle",
                hsaKmtShareMemory(p, 0x1000, null_mut()),
                "deliberate NULL"
            );
            free(cx, "free", p, 0x1000);
        }
        let mut p2: *mut c_void = null_mut();
        let mut size = 0u64;
        kmt!(
            cx,
            "import-null",
            hsaKmtRegisterSharedHandle(cnull(), &mut p2, &mut size),
            "deliberate NULL handle"
        );
        let garbage: HsaSharedMemoryHandle = [0xdead_beef; 8];
        kmt!(
            cx,
            "import-garbage",
            hsaKmtRegisterSharedHandle(&garbage, &mut p2, &mut size),
            "handle not produced by ShareMemory"
        );
        teardown(cx);
    });
    add(v, "share/graphics", |cx| {
        let Some(t) = setup(cx) else { return };
        let mut gi = A::GraphicsResourceInfo::default();
        let mut one = [t.gpu()];
        kmt!(
            cx,
            "register-bad-fd",
            hsaKmtRegisterGraphicsHandleToNodes(u32::MAX as u64, &mut gi, 1, one.as_mut_ptr()),
            "invalid fd; live info and node array"
        );
        let mut va = 0u64;
        kmt!(
            cx,
            "map-graphic",
            hsaKmtMapGraphicHandle(t.gpu(), 0, 0, 0, 0x1000, &mut va),
            "live out"
        );
        kmt!(
            cx,
            "unmap-graphic-unknown",
            hsaKmtUnmapGraphicHandle(t.gpu(), 0x1000_0000, 0x1000),
            "address never mapped"
        );
        teardown(cx);
    });

    // --- dma-buf (6.2.4 and newest)
    if A::KIND != AbiKind::Rocm52 {
        add(v, "dmabuf/export", |cx| {
            let Some(t) = setup(cx) else { return };
            if let Some(p) = alloc(cx, "alloc", t.gpu(), 0x4000, 0) {
                let mut fd = -1i32;
                let mut off = u64::MAX;
                if kmt!(
                    cx,
                    "export",
                    hsaKmtExportDMABufHandle(p, 0x4000, &mut fd, &mut off),
                    "allocation; live outs"
                ) == 0
                {
                    cx.rec("export.fd-valid", fd >= 0);
                    cx.rec("export.offset", off);
                    if fd >= 0 {
                        // SAFETY: the fd was just returned to us and is
                        // closed once.
                        unsafe { libc::close(fd) };
                    }
                }
                kmt!(
                    cx,
                    "export-past-end",
                    hsaKmtExportDMABufHandle(p, 0x8000, &mut fd, &mut off),
                    "range past the allocation"
                );
                free(cx, "free", p, 0x4000);
            }
            let buf = HostBuf::new(0x1000);
            let mut fd = -1i32;
            let mut off = 0u64;
            kmt!(
                cx,
                "export-unknown",
                hsaKmtExportDMABufHandle(buf.ptr(), 0x1000, &mut fd, &mut off),
                "address unknown to the thunk"
            );
            teardown(cx);
        });
    }

    // --- svm
    add(v, "svm/set-get", |cx| {
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
    });
    add(v, "svm/fresh-mmap", svm_fresh_mmap::<A>);
    add(v, "svm/no-snapshot", svm_no_snapshot::<A>);
    add(v, "svm/bad-input", |cx| {
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
    });
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
