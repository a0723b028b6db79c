//! `queues`: compute, AQL, SDMA and SDMA-XGMI queues; update, CU mask,
//! GWS, queue info; distinct resources; bad inputs.

use std::ffi::c_void;
use std::ptr::null_mut;

use super::Applies::Since;
use super::{alloc, free, setup, teardown, Table, Topo};
use crate::abi::AbiKind::{Newest, Rocm52};
use crate::abi::{memflag as mf, Abi};
use crate::cx::Cx;
use crate::kmt;

pub(super) const RING: u64 = 0x1_0000;
pub(super) const COMPUTE: u32 = 1;
const SDMA: u32 = 2;
const SDMA_XGMI: u32 = 5;
const COMPUTE_AQL: u32 = 21;

/// A GPU-mapped ring plus a page for AQL read/write pointers.
pub(super) struct Ring {
    pub(super) ring: *mut c_void,
    ptrs: *mut c_void,
}

fn ring<A: Abi>(cx: &mut Cx<A>) -> Option<Ring> {
    let ring = alloc(cx, "ring.alloc", 0, RING, mf::HOST_ACCESS | mf::EXECUTE)?;
    let mut va = 0u64;
    kmt!(
        cx,
        "ring.map",
        hsaKmtMapMemoryToGPU(ring, RING, &mut va),
        "ring allocated above"
    );
    let ptrs = alloc(cx, "ptrs.alloc", 0, 0x1000, mf::HOST_ACCESS)?;
    kmt!(
        cx,
        "ptrs.map",
        hsaKmtMapMemoryToGPU(ptrs, 0x1000, &mut va),
        "page allocated above"
    );
    Some(Ring { ring, ptrs })
}

fn unring<A: Abi>(cx: &mut Cx<A>, r: Ring) {
    kmt!(
        cx,
        "ring.unmap",
        hsaKmtUnmapMemoryToGPU(r.ring),
        "mapped by ring()"
    );
    free(cx, "ring.free", r.ring, RING);
    kmt!(
        cx,
        "ptrs.unmap",
        hsaKmtUnmapMemoryToGPU(r.ptrs),
        "mapped by ring()"
    );
    free(cx, "ptrs.free", r.ptrs, 0x1000);
}

/// Creates a queue of `ty` on `node`; records status and the resource by
/// relation. Returns `(queue id, doorbell)`.
pub(super) fn create<A: Abi>(
    cx: &mut Cx<A>,
    label: &str,
    node: u32,
    ty: u32,
    r: &Ring,
    prio: i64,
) -> Option<(u64, u64)> {
    let mut q = A::QueueResource::default();
    if ty == COMPUTE_AQL {
        let w = r.ptrs as u64;
        A::set_queue_ptrs(&mut q, w, w + 8);
    }
    let s = kmt!(
        cx,
        label,
        hsaKmtCreateQueue(node, ty, 100, prio, r.ring, RING, null_mut(), &mut q),
        "ring is a live GPU-mapped buffer of RING bytes; q a live QueueResource of this generation"
    );
    if s != 0 {
        return None;
    }
    let (id, db, wp, rp) = A::queue_view(&q);
    let rel = |p: u64| -> String {
        if p == 0 {
            "null".into()
        } else if p == r.ptrs as u64 {
            "=ptrs+0".into()
        } else if p == r.ptrs as u64 + 8 {
            "=ptrs+8".into()
        } else {
            "nonnull".into()
        }
    };
    let ov = [
        (
            "QueueId",
            if id != 0 {
                "nonzero".into()
            } else {
                "0".into()
            },
        ),
        (
            "QueueDoorBell",
            if db != 0 {
                "nonnull".into()
            } else {
                "null".into()
            },
        ),
        ("QueueWptrValue", rel(wp)),
        ("QueueRptrValue", rel(rp)),
        ("ErrorReason", "ptr".into()),
    ];
    cx.fields(label, &q, &ov);
    cx.rec(&format!("{label}.wptr!=rptr"), wp != rp);
    Some((id, db))
}

pub(super) fn destroy<A: Abi>(cx: &mut Cx<A>, label: &str, id: u64) {
    kmt!(
        cx,
        label,
        hsaKmtDestroyQueue(id),
        "queue id returned by CreateQueue"
    );
}

pub(super) fn with_ring<A: Abi>(cx: &mut Cx<A>, f: impl FnOnce(&mut Cx<A>, &Topo, &Ring)) {
    let Some(t) = setup(cx) else { return };
    if let Some(r) = ring(cx) {
        f(cx, &t, &r);
        unring(cx, r);
    }
    teardown(cx);
}
use super::require;

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    for (name, ty) in [
        ("queues/compute", COMPUTE),
        ("queues/compute-aql", COMPUTE_AQL),
        ("queues/sdma", SDMA),
        ("queues/sdma-xgmi", SDMA_XGMI),
    ] {
        t.add(Since(Rocm52), name, move |cx| queue_type(cx, ty));
    }
    t.add(Since(Rocm52), "queues/update", update);
    t.add(Since(Rocm52), "queues/cu-mask", cu_mask);
    t.add(Since(Rocm52), "queues/info", info);
    t.add(Since(Rocm52), "queues/gws", gws);
    t.add(Since(Rocm52), "queues/distinct", distinct);
    t.add(Since(Rocm52), "queues/priorities", priorities);
    t.add(Since(Rocm52), "queues/bad-input", bad_input);
    t.add(Since(Rocm52), "queues/destroy-twice", destroy_twice);
    t.add(Since(Rocm52), "queues/trap-handler", trap_handler);
    t.add(Since(Newest), "queues/create-ext", create_ext);
}

/// A queue of type `ty` on the first GPU: create and destroy.
fn queue_type<A: Abi>(cx: &mut Cx<A>, ty: u32) {
    with_ring(cx, |cx, t, r| {
        if let Some((id, _)) = create(cx, "create", t.gpu(), ty, r, 0) {
            destroy(cx, "destroy", id);
        }
    });
}

fn update<A: Abi>(cx: &mut Cx<A>) {
    with_ring(cx, |cx, t, r| {
        if let Some((id, _)) = create(cx, "create", t.gpu(), COMPUTE, r, 0) {
            kmt!(
                cx,
                "update-50",
                hsaKmtUpdateQueue(id, 50, 1, r.ring, RING, null_mut()),
                "live queue, same ring"
            );
            kmt!(
                cx,
                "update-0",
                hsaKmtUpdateQueue(id, 0, 0, r.ring, RING, null_mut()),
                "live queue, same ring"
            );
            kmt!(
                cx,
                "update-bad-priority",
                hsaKmtUpdateQueue(id, 100, 9, r.ring, RING, null_mut()),
                "priority out of range"
            );
            kmt!(
                cx,
                "update-bad-percentage",
                hsaKmtUpdateQueue(id, 101, 0, r.ring, RING, null_mut()),
                "percentage over 100"
            );
            kmt!(
                cx,
                "update-id0",
                hsaKmtUpdateQueue(0, 100, 0, r.ring, RING, null_mut()),
                "queue id 0"
            );
            destroy(cx, "destroy", id);
        }
    });
}

fn cu_mask<A: Abi>(cx: &mut Cx<A>) {
    with_ring(cx, |cx, t, r| {
        if let Some((id, _)) = create(cx, "create", t.gpu(), COMPUTE, r, 0) {
            let mut m = [u32::MAX; 4];
            kmt!(
                cx,
                "mask-32",
                hsaKmtSetQueueCUMask(id, 32, m.as_mut_ptr()),
                "mask array of 4 words"
            );
            kmt!(
                cx,
                "mask-128",
                hsaKmtSetQueueCUMask(id, 128, m.as_mut_ptr()),
                "mask array of 4 words"
            );
            let mut half = [0x5555_5555u32; 4];
            kmt!(
                cx,
                "mask-half",
                hsaKmtSetQueueCUMask(id, 64, half.as_mut_ptr()),
                "mask array of 4 words"
            );
            kmt!(
                cx,
                "mask-33",
                hsaKmtSetQueueCUMask(id, 33, m.as_mut_ptr()),
                "count not a multiple of 32"
            );
            kmt!(
                cx,
                "mask-0",
                hsaKmtSetQueueCUMask(id, 0, m.as_mut_ptr()),
                "count 0"
            );
            kmt!(
                cx,
                "mask-null",
                hsaKmtSetQueueCUMask(id, 32, null_mut()),
                "deliberate NULL"
            );
            let mut zero = [0u32; 4];
            kmt!(
                cx,
                "mask-empty",
                hsaKmtSetQueueCUMask(id, 32, zero.as_mut_ptr()),
                "all CUs off"
            );
            destroy(cx, "destroy", id);
        }
    });
}

fn info<A: Abi>(cx: &mut Cx<A>) {
    with_ring(cx, |cx, t, r| {
        if let Some((id, _)) = create(cx, "create", t.gpu(), COMPUTE_AQL, r, 0) {
            let mut qi = A::QueueInfo::default();
            if kmt!(
                cx,
                "info",
                hsaKmtGetQueueInfo(id, &mut qi),
                "live QueueInfo of this generation"
            ) == 0
            {
                let ov = [
                    ("CUMaskInfo", "ptr".to_string()),
                    ("UserContextSaveArea", "ptr".to_string()),
                    ("ControlStackTop", "ptr".to_string()),
                    ("SaveAreaHeader", "ptr".to_string()),
                ];
                cx.fields("info", &qi, &ov);
            }
            kmt!(
                cx,
                "info-null",
                hsaKmtGetQueueInfo(id, null_mut()),
                "deliberate NULL"
            );
            destroy(cx, "destroy", id);
        }
    });
}

fn gws<A: Abi>(cx: &mut Cx<A>) {
    with_ring(cx, |cx, t, r| {
        cx.rec(
            "node.NumGws",
            t.counts.get(t.gpu() as usize).map(|c| c.gws).unwrap_or(0),
        );
        if let Some((id, _)) = create(cx, "create", t.gpu(), COMPUTE_AQL, r, 0) {
            let mut first = u32::MAX;
            if kmt!(
                cx,
                "gws",
                hsaKmtAllocQueueGWS(id, 1, &mut first),
                "live out word"
            ) == 0
            {
                cx.rec("gws.first", first);
            }
            destroy(cx, "destroy", id);
        }
    });
}

fn distinct<A: Abi>(cx: &mut Cx<A>) {
    with_ring(cx, |cx, t, r| {
        let mut made = Vec::new();
        for ty in [COMPUTE, COMPUTE, COMPUTE_AQL, SDMA] {
            if let Some(q) = create(cx, "create", t.gpu(), ty, r, 0) {
                made.push(q);
            }
        }
        let mut ids: Vec<u64> = made.iter().map(|q| q.0).collect();
        let mut dbs: Vec<u64> = made.iter().map(|q| q.1).collect();
        ids.sort();
        ids.dedup();
        dbs.sort();
        dbs.dedup();
        cx.rec("count", made.len());
        cx.rec("ids-distinct", ids.len() == made.len());
        cx.rec("doorbells-distinct", dbs.len() == made.len());
        for (id, _) in made {
            destroy(cx, "destroy", id);
        }
    });
}

fn priorities<A: Abi>(cx: &mut Cx<A>) {
    with_ring(cx, |cx, t, r| {
        for p in [-3i64, 3, -4, 4] {
            if let Some((id, _)) = create(cx, &format!("prio{p}"), t.gpu(), COMPUTE, r, p) {
                destroy(cx, "destroy", id);
            }
        }
    });
}

fn bad_input<A: Abi>(cx: &mut Cx<A>) {
    with_ring(cx, |cx, t, r| {
        let mut q = A::QueueResource::default();
        kmt!(
            cx,
            "node-unknown",
            hsaKmtCreateQueue(
                t.nodes + 1,
                COMPUTE,
                100,
                0,
                r.ring,
                RING,
                null_mut(),
                &mut q
            ),
            "unknown node"
        );
        kmt!(
            cx,
            "node-cpu",
            hsaKmtCreateQueue(0, COMPUTE, 100, 0, r.ring, RING, null_mut(), &mut q),
            "CPU node"
        );
        kmt!(
            cx,
            "type-unknown",
            hsaKmtCreateQueue(t.gpu(), 99, 100, 0, r.ring, RING, null_mut(), &mut q),
            "unknown queue type"
        );
        kmt!(cx, "destroy-id0", hsaKmtDestroyQueue(0), "queue id 0");
    });
}

fn destroy_twice<A: Abi>(cx: &mut Cx<A>) {
    with_ring(cx, |cx, t, r| {
        if let Some((id, _)) = create(cx, "create", t.gpu(), COMPUTE, r, 0) {
            destroy(cx, "destroy", id);
            destroy(cx, "destroy-again", id);
        }
    });
}

fn trap_handler<A: Abi>(cx: &mut Cx<A>) {
    with_ring(cx, |cx, t, r| {
        let half = r.ring.wrapping_byte_add(0x8000);
        kmt!(
            cx,
            "set",
            hsaKmtSetTrapHandler(t.gpu(), r.ring, 0x8000, half, 0x8000),
            "two halves of the GPU-mapped ring buffer"
        );
        kmt!(
            cx,
            "node-unknown",
            hsaKmtSetTrapHandler(t.nodes + 1, r.ring, 0x8000, half, 0x8000),
            "unknown node"
        );
        kmt!(
            cx,
            "node-cpu",
            hsaKmtSetTrapHandler(0, r.ring, 0x8000, half, 0x8000),
            "CPU node"
        );
    });
}

fn create_ext<A: Abi>(cx: &mut Cx<A>) {
    if !require(cx, &["hsaKmtCreateQueueExt"]) {
        return;
    }
    with_ring(cx, |cx, t, r| {
        let mut q = A::QueueResource::default();
        let s = kmt!(
            cx,
            "create-ext",
            hsaKmtCreateQueueExt(
                t.gpu(),
                COMPUTE,
                100,
                0,
                0,
                r.ring,
                RING,
                null_mut(),
                &mut q
            ),
            "ring is a live GPU-mapped buffer of RING bytes; q a live QueueResource"
        );
        if s == 0 {
            let (id, ..) = A::queue_view(&q);
            destroy(cx, "destroy", id);
        }
    });
}
