//! `map`: MapMemoryToGPU, MapMemoryToGPUNodes and UnmapMemoryToGPU.

use std::ptr::null_mut;

use super::Applies::Since;
use super::{alloc, free, pointer_info, setup, teardown, Table};
use crate::abi::AbiKind::Rocm52;
use crate::abi::{memflag as mf, Abi};
use crate::cx::{Cx, HostBuf};
use crate::kmt;

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    t.add(Since(Rocm52), "map/to-gpu-nodes", to_gpu_nodes);
    t.add(Since(Rocm52), "map/bad-input", bad_input);
}

fn to_gpu_nodes<A: Abi>(cx: &mut Cx<A>) {
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
                hsaKmtMapMemoryToGPUNodes(p, 0x4000, &mut va, A::map_flags(0), 1, one.as_mut_ptr()),
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
}

fn bad_input<A: Abi>(cx: &mut Cx<A>) {
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
}
