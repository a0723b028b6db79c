//! Queues on kfd-sim: every queue type on every preset (with the kernel's
//! queue-buffer validation on), sizes, CU masks, priorities, info, GWS,
//! doorbells, cross-context isolation and teardown.

// The same context-on-the-simulator helpers as kfd-event's tests: one copy.
#[path = "../../kfd-event/tests/common/mod.rs"]
mod common;

use std::sync::Arc;

use common::*;
use kfd_fmm::{Buffer, ExecAlloc};
use kfd_queue::sizes::{self, CwsrSizes};
use kfd_queue::{QueueError, QueueKind, QueueOptions, QueueRequest, QueueRules, Queues};
use kfd_sim::Sim;
use kfd_sys::sync::lock;
use kfd_sys::testing::Cause;

/// libhsakmt 5.2.3's choice of queue buffers (the `rocm-5.2` profile).
fn rocm52() -> QueueRules {
    QueueRules {
        pinned_queue_page: false,
        svm_save_area: false,
        save_area_per_xcc: false,
        fixed_work_group_sizes: true,
        eop_for_every_queue: true,
    }
}

const RING: u64 = 64 * 1024;

fn st(e: QueueError) -> String {
    e.cause()
}

fn queues(ctx: &Ctx) -> Queues {
    Queues::new(ctx.file.clone(), ctx.topology.clone(), ctx.fmm.clone())
}

/// A GPU-mapped system-memory buffer for rings and AQL pointers.
fn buffer(ctx: &Ctx, node: u32, size: u64) -> Buffer {
    ctx.fmm
        .alloc_exec(&ExecAlloc {
            size,
            node_id: node,
            non_paged: true,
            device_local: false,
            uncached: false,
        })
        .expect("ring buffer")
}

/// A request with its own ring (and pointers for AQL); returns the buffers
/// to drop once the queue is gone.
fn request(ctx: &Ctx, node: u32, kind: QueueKind) -> (QueueRequest, Vec<Buffer>) {
    let ring = buffer(ctx, node, RING);
    let mut req = QueueRequest::new(node, kind, ring.addr(), RING);
    if kind == QueueKind::ComputeAql {
        let ptrs = buffer(ctx, node, 4096);
        req.read_ptr = ptrs.addr();
        req.write_ptr = ptrs.addr() + 8;
        return (req, vec![ring, ptrs]);
    }
    (req, vec![ring])
}

/// A signal event of `ctx`'s kernel process (the queue's error event);
/// returns its id.
fn signal_event(ctx: &Ctx) -> u32 {
    let mut a = kfd_sys::kfd::kfd_ioctl_create_event_args {
        event_type: kfd_sys::kfd::KFD_IOC_EVENT_SIGNAL,
        auto_reset: 1,
        ..Default::default()
    };
    ctx.file
        .ioctl_plain(kfd_sys::kfd::AMDKFD_IOC_CREATE_EVENT, &mut a)
        .expect("CREATE_EVENT");
    a.event_id
}

fn destroy_event(ctx: &Ctx, event_id: u32) {
    let mut a = kfd_sys::kfd::kfd_ioctl_destroy_event_args { event_id, pad: 0 };
    ctx.file
        .ioctl_plain(kfd_sys::kfd::AMDKFD_IOC_DESTROY_EVENT, &mut a)
        .expect("DESTROY_EVENT");
}

/// Whether `addr` lies in a mapping of this process (`/proc/self/maps`).
/// Runs the tests of this file one at a time: some check that a range
/// is unmapped after a queue goes, which a concurrent test mapping memory
/// at the freed address would make fail.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    lock(&SERIAL)
}

fn mapped(addr: u64) -> bool {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines().any(|l| {
        let range = l.split(' ').next().unwrap_or("");
        let mut ends = range.split('-').map(|v| u64::from_str_radix(v, 16));
        matches!((ends.next(), ends.next()), (Some(Ok(s)), Some(Ok(e))) if (s..e).contains(&addr))
    })
}

fn all_kinds(ctx: &Ctx, node: u32) -> Vec<QueueKind> {
    let p = &ctx.topology.node(node).unwrap().properties;
    let engines = p.num_sdma_engines + p.num_sdma_xgmi_engines;
    let mut kinds = vec![
        QueueKind::Compute,
        QueueKind::ComputeAql,
        QueueKind::Sdma,
        QueueKind::SdmaByEngine(0),
        QueueKind::SdmaByEngine(engines - 1),
    ];
    if p.num_sdma_xgmi_engines > 0 {
        kinds.push(QueueKind::SdmaXgmi);
    }
    kinds
}

#[test]
fn every_queue_type_on_every_preset() {
    let _serial = serial();
    for &preset in PRESETS {
        let sim = Sim::preset(preset).unwrap();
        let ctx = Ctx::primary(&sim);
        // The APU's system memory is plain CPU memory, not buffer objects,
        // so the kernel's buffer validation (6.12+) cannot apply there.
        let validate = ctx.topology.is_dgpu();
        sim.set_queue_buffer_validation(validate);
        // Kernels that validate queue buffers (6.12+) expect the newest
        // library's save-area sizes; 5.2.3 predates them (on gfx942 its
        // sizes, without the per-XCC split, are refused).
        let qs = Queues::with_options(
            ctx.file.clone(),
            ctx.topology.clone(),
            ctx.fmm.clone(),
            QueueOptions {
                rules: QueueRules::default(),
                svm_save_area: false,
            },
        );
        let err_event = signal_event(&ctx);
        let baseline = ctx.fmm.object_count();
        for node in ctx.topology.gpu_nodes().map(|n| n.id).collect::<Vec<_>>() {
            for kind in all_kinds(&ctx, node) {
                let (mut req, bufs) = request(&ctx, node, kind);
                req.error_event_id = err_event;
                let q = qs
                    .create(&req)
                    .unwrap_or_else(|e| panic!("{preset} node {node} {kind:?}: {e}"));
                let res = q.resource();
                assert_eq!(res.queue_id, q.id());
                assert_eq!(
                    qs.lookup(q.id().raw()).unwrap().kfd_queue_id(),
                    q.kfd_queue_id()
                );
                let page = qs.doorbell_page(node).expect("doorbell page mapped");
                assert!(res.doorbell >= page && res.doorbell < page + 8192);
                if kind == QueueKind::ComputeAql {
                    assert_eq!((res.read_ptr, res.write_ptr), (req.read_ptr, req.write_ptr));
                } else {
                    assert_ne!(res.read_ptr, 0);
                    assert_eq!(res.write_ptr + 8, res.read_ptr);
                }
                assert_eq!(q.cwsr().is_some(), kind.needs_queue_buffers(), "{kind:?}");
                if kind.needs_queue_buffers() {
                    // Active queues have no saved wave state (kernel
                    // EINVAL, C status ERROR); see the suspended-queue test.
                    assert_eq!(st(qs.info(&q).unwrap_err()), "Kernel");
                } else {
                    assert_eq!(qs.info(&q).unwrap_err(), QueueError::NoCwsrArea);
                }
                qs.ring_doorbell(&q, 16).unwrap();
                qs.destroy(&q).unwrap();
                drop(bufs);
            }
        }
        assert_eq!(qs.live_count(), 0);
        // Destroyed queues left only the doorbell pages that are buffers
        // of the memory manager (dGPUs); those go with the sub-context.
        let doorbell_buffers = ctx
            .topology
            .gpu_nodes()
            .filter_map(|n| qs.doorbell_page(n.id))
            .filter(|&p| ctx.fmm.pointer_info(p).is_ok())
            .count();
        assert_eq!(
            ctx.fmm.object_count(),
            baseline + doorbell_buffers,
            "{preset}: queue buffers freed with their queues"
        );
        drop(qs);
        assert_eq!(
            ctx.fmm.object_count(),
            baseline,
            "{preset}: queue buffers freed"
        );
        destroy_event(&ctx, err_event);
        drop(ctx);
        assert_no_leaks(&sim);
    }
}

#[test]
fn cwsr_sizes_per_generation() {
    let _serial = serial();
    let expect = [
        // gfx90a: 104 CUs, 8 SEs: 4096 waves.
        (
            "mi210",
            CwsrSizes {
                waves: 4096,
                ctl_stack_size: 0x9000,
                ctx_save_restore_size: 0x9000 + 104 * 0x95000,
                debug_memory_size: 4096 * 32,
                num_xcc: 1,
                total_size: 0x9000 + 104 * 0x95000 + 4096 * 32,
            },
        ),
        // gfx942: 304 CUs over 8 XCCs: 38 CUs and 1520 waves per XCC.
        (
            "mi300x",
            CwsrSizes {
                waves: 1520,
                ctl_stack_size: 0x3000,
                ctx_save_restore_size: 0x3000 + 38 * 0x95000,
                debug_memory_size: 1520 * 32,
                num_xcc: 8,
                total_size: (0x3000 + 38 * 0x95000 + 1520 * 32) * 8,
            },
        ),
        // gfx1100: 96 CUs, 32 waves each, 12-byte control stack entries,
        // 384 KiB of VGPRs.
        (
            "navi31",
            CwsrSizes {
                waves: 3072,
                ctl_stack_size: 0xA000,
                ctx_save_restore_size: 0xA000 + 96 * 0x75000,
                debug_memory_size: 3072 * 32,
                num_xcc: 1,
                total_size: 0xA000 + 96 * 0x75000 + 3072 * 32,
            },
        ),
        // gfx902 APU: 11 CUs, one SE: 440 waves, 256 KiB of VGPRs.
        (
            "apu",
            CwsrSizes {
                waves: 440,
                ctl_stack_size: 0x1000,
                ctx_save_restore_size: 0x1000 + 11 * 0x55000,
                debug_memory_size: 440 * 32,
                num_xcc: 1,
                total_size: 0x1000 + 11 * 0x55000 + 440 * 32,
            },
        ),
    ];
    for (preset, want) in expect {
        let sim = Sim::preset(preset).unwrap();
        let t = kfd_topology::Topology::snapshot(&sim).unwrap();
        let node = t.gpu_nodes().next().unwrap();
        assert_eq!(
            sizes::cwsr_sizes(node, &QueueRules::default()),
            Some(want),
            "{preset}"
        );
        let gfxv = sizes::gfx_of(node);
        assert_eq!(sizes::doorbell_page_size(gfxv), 8192);
        let eop_compute =
            sizes::eop_buffer_size(gfxv, QueueKind::Compute.hsa_type(), &QueueRules::default());
        let eop_aql = sizes::eop_buffer_size(
            gfxv,
            QueueKind::ComputeAql.hsa_type(),
            &QueueRules::default(),
        );
        assert_eq!(eop_compute, 4096, "{preset}");
        assert_eq!(
            eop_aql,
            if preset == "mi300x" { 0 } else { 4096 },
            "{preset}"
        );
    }
}

/// libhsakmt 5.2.3's sizes: fixed per-CU work-group data, no XCC split,
/// and a 4 KiB EOP buffer for every gfx8+ queue. The totals are what the
/// 5.2.3 C library allocates on the same simulated nodes (seen in the
/// conformance ioctl traces).
#[test]
fn cwsr_sizes_of_libhsakmt_5_2() {
    let _serial = serial();
    for (preset, waves, total) in [
        // 96 CUs x (256 KiB + 16 KiB + 64 KiB + 4 KiB), 3072 waves.
        ("navi31", 3072, 33_562_624u32),
        // All 304 CUs as one area: min(304 x 40, 32 SEs x 512) waves.
        ("mi300x", 12_160, 106_328_064),
        // gfx90a: 512 KiB of VGPRs per CU, as the newest library.
        ("mi210", 4096, 0x9000 + 104 * 0x95000 + 4096 * 32),
    ] {
        let sim = Sim::preset(preset).unwrap();
        // 5.2.3's VGPR sizes come with its topology rules.
        let rules = kfd_topology::Rules {
            vgpr_table: kfd_topology::VgprTable::Gfx908And90aLarge,
            ..kfd_topology::Rules::default()
        };
        let t = kfd_topology::Topology::snapshot_with(
            &sim,
            &kfd_topology::SnapshotOptions::from_env(rules),
        )
        .unwrap();
        let node = t.gpu_nodes().next().unwrap();
        let sz = sizes::cwsr_sizes(node, &rocm52()).unwrap();
        assert_eq!(
            (sz.waves, sz.total_size, sz.num_xcc),
            (waves, total, 1),
            "{preset}"
        );
        let gfxv = sizes::gfx_of(node);
        for kind in [QueueKind::Compute, QueueKind::ComputeAql] {
            assert_eq!(
                sizes::eop_buffer_size(gfxv, kind.hsa_type(), &rocm52()),
                4096,
                "{preset} {kind:?}"
            );
        }
    }
}

#[test]
fn cu_masks_of_odd_lengths() {
    let _serial = serial();
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let qs = queues(&ctx);
    let node = ctx.gpu_node();
    let (req, bufs) = request(&ctx, node, QueueKind::ComputeAql);
    let q = qs.create(&req).unwrap();
    // 104 CUs: 128 mask bits, all CUs on.
    let (count, words) = q.cu_mask();
    assert_eq!(count, 128);
    assert_eq!(words, vec![u32::MAX, u32::MAX, u32::MAX, 0xff]);
    for bad in [0u32, 1, 31, 33, 63, 100, 127] {
        let err = qs.set_cu_mask(&q, bad, &[u32::MAX; 8]).unwrap_err();
        assert_eq!(st(err), "InvalidCuMask", "count {bad}");
    }
    // A count longer than the mask given.
    assert_eq!(
        st(qs.set_cu_mask(&q, 96, &[1, 2]).unwrap_err()),
        "InvalidCuMask"
    );
    // Odd numbers of words are fine as long as the bit count is a
    // multiple of 32.
    for (count, mask) in [
        (32u32, vec![0x5555_5555u32]),
        (96, vec![1, 2, 3]),
        (160, vec![7; 5]),
    ] {
        qs.set_cu_mask(&q, count, &mask).unwrap();
        assert_eq!(q.cu_mask(), (count, mask.clone()));
    }
    qs.destroy(&q).unwrap();
    assert_eq!(
        st(qs.set_cu_mask(&q, 32, &[1]).unwrap_err()),
        "UnknownQueue",
        "destroyed queue"
    );
    drop(bufs);
}

#[test]
fn bad_inputs_give_the_c_statuses() {
    let _serial = serial();
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let qs = queues(&ctx);
    let node = ctx.gpu_node();
    let (req, bufs) = request(&ctx, node, QueueKind::Compute);

    for p in [-4i64, 4, 0xFFFF_FFFF] {
        let r = QueueRequest { priority: p, ..req };
        assert_eq!(
            st(qs.create(&r).unwrap_err()),
            "InvalidPriority",
            "priority {p}"
        );
    }
    assert_eq!(
        st(qs.create(&QueueRequest { node_id: 0, ..req }).unwrap_err()),
        "InvalidNode",
        "CPU node"
    );
    assert_eq!(
        st(qs.create(&QueueRequest { node_id: 99, ..req }).unwrap_err()),
        "InvalidNode"
    );
    // Bad node is reported before a bad priority? No: priority first, as in C.
    let both = QueueRequest {
        node_id: 99,
        priority: 9,
        ..req
    };
    assert_eq!(st(qs.create(&both).unwrap_err()), "InvalidPriority");
    assert_eq!(
        st(QueueKind::from_hsa(3, 0).unwrap_err()),
        "InvalidQueueType"
    );
    assert_eq!(
        st(QueueKind::from_hsa_legacy(6).unwrap_err()),
        "EngineIdNeedsExt"
    );
    // Non-power-of-two ring sizes: the kernel's EINVAL, explained.
    let odd = QueueRequest {
        ring_size: 3000,
        ..req
    };
    assert_eq!(st(qs.create(&odd).unwrap_err()), "RingSize");
    // An SDMA engine that does not exist.
    let p = &ctx.topology.node(node).unwrap().properties;
    let bad_engine = QueueRequest {
        kind: QueueKind::SdmaByEngine(p.num_sdma_engines + p.num_sdma_xgmi_engines),
        ..req
    };
    assert_eq!(st(qs.create(&bad_engine).unwrap_err()), "Kernel");
    // Metadata rings: page aligned, and KFD 1.19+.
    let meta = QueueRequest {
        kind: QueueKind::ComputeAql,
        metadata_size: 100,
        ..req
    };
    assert_eq!(st(qs.create(&meta).unwrap_err()), "MetadataUnaligned");
    // Null and unknown queue ids.
    assert_eq!(st(qs.lookup(0).unwrap_err()), "NullQueue");
    assert_eq!(st(qs.lookup(0xdead_0000).unwrap_err()), "UnknownQueue");

    let q = qs.create(&req).unwrap();
    assert_eq!(
        st(qs.update(&q, 50, 4, req.ring_address, RING).unwrap_err()),
        "InvalidPriority"
    );
    qs.update(&q, 50, 3, req.ring_address, RING).unwrap();
    qs.update(&q, 100, -3, req.ring_address, RING).unwrap();
    assert_eq!(qs.alloc_gws(&q, 1).unwrap(), 0);
    assert_eq!(
        st(qs.set_trap_handler(99, 0x1000, 0x2000).unwrap_err()),
        "InvalidNode"
    );
    qs.set_trap_handler(node, 0x1000, 0x2000).unwrap();
    let raw = q.id().raw();
    qs.destroy(&q).unwrap();
    assert_eq!(st(qs.destroy(&q).unwrap_err()), "UnknownQueue");
    assert_eq!(st(qs.lookup(raw).unwrap_err()), "UnknownQueue");
    assert_eq!(st(qs.info(&q).unwrap_err()), "UnknownQueue");
    assert_eq!(st(qs.update(&q, 1, 0, 0, 0).unwrap_err()), "UnknownQueue");
    drop(bufs);
}

#[test]
fn metadata_queue_needs_a_new_kfd() {
    let _serial = serial();
    let sim = Sim::preset("mi300x").unwrap();
    let ctx = Ctx::primary(&sim);
    let node = ctx.gpu_node();
    let (req, bufs) = request(&ctx, node, QueueKind::ComputeAql);
    let meta = QueueRequest {
        metadata_size: 4096,
        ..req
    };
    let qs = queues(&ctx);
    let q = qs.create(&meta).unwrap();
    qs.destroy(&q).unwrap();
    sim.set_version_minor(18);
    let old = queues(&ctx);
    assert_eq!(st(old.create(&meta).unwrap_err()), "KfdTooOld");
    // Without a metadata ring the version does not matter.
    let q = old.create(&req).unwrap();
    old.destroy(&q).unwrap();
    drop(bufs);
}

#[test]
fn gws_needs_gws_hardware() {
    let _serial = serial();
    let sim = Sim::preset("apu").unwrap();
    let ctx = Ctx::primary(&sim);
    let qs = queues(&ctx);
    let (req, bufs) = request(&ctx, ctx.gpu_node(), QueueKind::ComputeAql);
    let q = qs.create(&req).unwrap();
    assert_eq!(
        st(qs.alloc_gws(&q, 1).unwrap_err()),
        "Kernel",
        "ENODEV → NOT_SUPPORTED"
    );
    qs.destroy(&q).unwrap();
    drop(bufs);
}

#[test]
fn doorbell_page_is_mapped_once_per_node() {
    let _serial = serial();
    let sim = Sim::preset("large64").unwrap();
    let ctx = Ctx::primary(&sim);
    let qs = queues(&ctx);
    let nodes: Vec<u32> = ctx.topology.gpu_nodes().map(|n| n.id).take(3).collect();
    let mut made = Vec::new();
    for &node in &nodes {
        for _ in 0..3 {
            let (req, bufs) = request(&ctx, node, QueueKind::ComputeAql);
            made.push((qs.create(&req).unwrap(), bufs));
        }
    }
    for &node in &nodes {
        let page = qs.doorbell_page(node).unwrap();
        let mut dbs: Vec<u64> = made
            .iter()
            .filter(|(q, _)| q.node_id() == node)
            .map(|(q, _)| q.resource().doorbell)
            .collect();
        assert!(dbs.iter().all(|d| (page..page + 8192).contains(d)));
        dbs.sort();
        dbs.dedup();
        assert_eq!(dbs.len(), 3, "distinct doorbells on node {node}");
        // On a dGPU the page is a GPU-mapped doorbell buffer of the memory
        // manager.
        let info = ctx
            .fmm
            .pointer_nodes(page)
            .expect("doorbell is an fmm object");
        assert_eq!(info.mapped, vec![node]);
    }
    let pages: std::collections::HashSet<u64> = nodes
        .iter()
        .map(|n| qs.doorbell_page(*n).unwrap())
        .collect();
    assert_eq!(pages.len(), nodes.len());
    for (q, bufs) in made {
        qs.destroy(&q).unwrap();
        drop(bufs);
    }
}

#[test]
fn queue_of_one_context_cannot_be_destroyed_through_another() {
    let _serial = serial();
    let sim = Sim::preset("mi210").unwrap();
    let a = Ctx::primary(&sim);
    let b = Ctx::secondary(&sim);
    let qa = queues(&a);
    let qb = queues(&b);
    let node = a.gpu_node();
    let (req_a, bufs_a) = request(&a, node, QueueKind::Compute);
    let (req_b, bufs_b) = request(&b, node, QueueKind::Compute);
    let q = qa.create(&req_a).unwrap();
    let r = qb.create(&req_b).unwrap();
    // The kernel gave both the same queue id in their own processes.
    assert_eq!(q.kfd_queue_id(), r.kfd_queue_id());
    assert_eq!(qb.destroy(&q).unwrap_err(), QueueError::ForeignQueue);
    assert_eq!(st(qb.destroy(&q).unwrap_err()), "ForeignQueue");
    assert_eq!(st(qb.lookup(q.id().raw()).unwrap_err()), "UnknownQueue");
    assert_eq!(
        st(qb.set_cu_mask(&q, 32, &[1]).unwrap_err()),
        "ForeignQueue"
    );
    assert_eq!(st(qb.update(&q, 1, 0, 0, 0).unwrap_err()), "ForeignQueue");
    assert_eq!(st(qb.info(&q).unwrap_err()), "ForeignQueue");
    // Both queues are intact.
    qa.update(&q, 100, 0, req_a.ring_address, RING).unwrap();
    qb.update(&r, 100, 0, req_b.ring_address, RING).unwrap();
    qa.destroy(&q).unwrap();
    qb.destroy(&r).unwrap();
    drop(bufs_a);
    drop(bufs_b);
    drop((qa, qb, a, b));
    assert_no_leaks(&sim);
}

#[test]
fn teardown_destroys_the_queues_only_and_leaks_nothing() {
    let _serial = serial();
    for &preset in PRESETS {
        let sim = Sim::preset(preset).unwrap();
        let ctx = Ctx::primary(&sim);
        let qs = Arc::new(queues(&ctx));
        let node = ctx.gpu_node();
        let mut rings = Vec::new();
        for kind in [QueueKind::Compute, QueueKind::ComputeAql, QueueKind::Sdma] {
            let (req, bufs) = request(&ctx, node, kind);
            qs.create(&req).unwrap();
            rings.extend(bufs);
        }
        let event = signal_event(&ctx);
        let live = &sim.live_objects().processes[0];
        assert_eq!((live.queues, live.events), (3, 1), "{preset}");
        // The context's order: queues, then events, then memory. The
        // queues' teardown leaves the events (and the callers' rings).
        qs.teardown();
        let live = &sim.live_objects().processes[0];
        assert_eq!((live.queues, live.events), (0, 1), "{preset}");
        assert!(qs.doorbell_page(node).is_none());
        destroy_event(&ctx, event);
        drop(rings);
        drop((qs, ctx));
        assert_no_leaks(&sim);
    }
}

/// Enables the debugger runtime on the context (before any queue exists),
/// as ROCr does, and attaches the process to itself as its debugger.
fn enable_debugging(sim: &Sim, ctx: &Ctx) {
    use kfd_sys::kfd::*;
    use std::os::fd::{AsFd, AsRawFd};
    let mut re = kfd_ioctl_runtime_enable_args {
        mode_mask: KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK,
        ..Default::default()
    };
    ctx.file
        .ioctl_plain(AMDKFD_IOC_RUNTIME_ENABLE, &mut re)
        .unwrap();
    let mut info = kfd_runtime_info::default();
    let mut a = kfd_ioctl_dbg_trap_args {
        pid: sim.os_pid(),
        op: KFD_IOC_DBG_TRAP_ENABLE,
        u: kfd_ioctl_dbg_trap_args_union {
            enable: kfd_ioctl_dbg_trap_enable_args {
                exception_mask: 0,
                rinfo_ptr: &mut info as *mut _ as u64,
                rinfo_size: std::mem::size_of::<kfd_runtime_info>() as u32,
                dbg_fd: ctx.file.as_fd().as_raw_fd() as u32,
            },
        },
    };
    // SAFETY: `rinfo_ptr` points to a live `kfd_runtime_info` of
    // `rinfo_size` bytes; `dbg_fd` is an open descriptor.
    unsafe { ctx.file.ioctl(AMDKFD_IOC_DBG_TRAP, &mut a) }.unwrap();
}

/// Suspends (or resumes) one queue through the debugger interface.
fn suspend(sim: &Sim, ctx: &Ctx, kfd_queue_id: u32, on: bool) {
    use kfd_sys::kfd::*;
    let mut ids = [kfd_queue_id];
    let u = if on {
        kfd_ioctl_dbg_trap_args_union {
            suspend_queues: kfd_ioctl_dbg_trap_suspend_queues_args {
                exception_mask: 0,
                queue_array_ptr: ids.as_mut_ptr() as u64,
                num_queues: 1,
                grace_period: 0,
            },
        }
    } else {
        kfd_ioctl_dbg_trap_args_union {
            resume_queues: kfd_ioctl_dbg_trap_resume_queues_args {
                queue_array_ptr: ids.as_mut_ptr() as u64,
                num_queues: 1,
                pad: 0,
            },
        }
    };
    let mut a = kfd_ioctl_dbg_trap_args {
        pid: sim.os_pid(),
        op: if on {
            KFD_IOC_DBG_TRAP_SUSPEND_QUEUES
        } else {
            KFD_IOC_DBG_TRAP_RESUME_QUEUES
        },
        u,
    };
    // SAFETY: `queue_array_ptr` points to one live u32 the kernel reads
    // and writes.
    let n = unsafe { ctx.file.ioctl(AMDKFD_IOC_DBG_TRAP, &mut a) }.unwrap();
    assert_eq!(n, 1);
}

#[test]
fn queue_info_reports_the_wave_state_of_a_suspended_queue() {
    let _serial = serial();
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    sim.set_queue_buffer_validation(true);
    enable_debugging(&sim, &ctx);
    let qs = queues(&ctx);
    let (req, bufs) = request(&ctx, ctx.gpu_node(), QueueKind::ComputeAql);
    let q = qs.create(&req).unwrap();
    // An active queue has no saved wave state: the kernel refuses and the
    // C library returns ERROR.
    assert_eq!(st(qs.info(&q).unwrap_err()), "Kernel");
    suspend(&sim, &ctx, q.kfd_queue_id(), true);
    let info = qs.info(&q).unwrap();
    let (area, sz) = q.cwsr().unwrap();
    assert_eq!(info.save_area_header, area);
    assert_eq!(info.user_context_save_area, area + sz.ctl_stack_size as u64);
    assert_eq!(info.control_stack_top, area + sz.ctl_stack_size as u64);
    assert_eq!(info.control_stack_used, 0);
    assert_eq!(info.save_area_alloc_size, sz.ctx_save_restore_size as u64);
    assert_eq!(info.num_cu_assigned, 128);
    assert_ne!(info.cu_mask_info, 0);
    suspend(&sim, &ctx, q.kfd_queue_id(), false);
    qs.destroy(&q).unwrap();
    drop(bufs);
}

/// A `Write` into a shared buffer, for the simulator's ioctl trace.
#[derive(Clone, Default)]
struct TraceBuf(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for TraceBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl TraceBuf {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    /// The `flags` of the traced ALLOC_MEMORY_OF_GPU of `size` bytes.
    fn alloc_flags(&self, size: u64) -> Option<u32> {
        self.text()
            .lines()
            .filter(|l| l.contains("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU"))
            .find(|l| l.contains(&format!(" size: {size},")))
            .and_then(|l| l.split("flags: ").nth(1))
            .and_then(|f| f.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|f| f.parse().ok())
    }
}

/// Creates one compute queue with `options` while tracing; returns the
/// queue's save-area address and the trace of its creation.
fn traced_compute_queue(
    sim: &Sim,
    ctx: &Ctx,
    options: QueueOptions,
) -> (Queues, kfd_queue::Queue, Vec<Buffer>, TraceBuf) {
    let qs = Queues::with_options(
        ctx.file.clone(),
        ctx.topology.clone(),
        ctx.fmm.clone(),
        options,
    );
    assert_eq!(qs.options(), options);
    let (req, bufs) = request(ctx, ctx.gpu_node(), QueueKind::Compute);
    let trace = TraceBuf::default();
    sim.set_trace(trace.clone());
    let q = qs
        .create(&req)
        .unwrap_or_else(|e| panic!("{e:?}\n{}", trace.text()));
    sim.clear_trace();
    (qs, q, bufs, trace)
}

#[test]
fn save_area_memory_follows_the_rules() {
    let _serial = serial();
    use kfd_sys::kfd::{
        KFD_IOC_ALLOC_MEM_FLAGS_GTT as GTT, KFD_IOC_ALLOC_MEM_FLAGS_USERPTR as USERPTR,
    };
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let node = ctx.topology.node(ctx.gpu_node()).unwrap();
    let total = sizes::cwsr_sizes(node, &rocm52()).unwrap().total_size as u64;

    // 5.2.3: page and save area are paged memory, userptr BOs on a dGPU
    // primary context; no SVM.
    let r52 = QueueOptions {
        rules: rocm52(),
        svm_save_area: true,
    };
    let (qs, q, bufs, trace) = traced_compute_queue(&sim, &ctx, r52);
    assert_eq!(
        trace.alloc_flags(4096).map(|f| f & (USERPTR | GTT)),
        Some(USERPTR)
    );
    assert_eq!(
        trace.alloc_flags(total).map(|f| f & (USERPTR | GTT)),
        Some(USERPTR)
    );
    assert!(!trace.text().contains("AMDKFD_IOC_SVM"));
    qs.destroy(&q).unwrap();
    drop(bufs);
    drop(qs);

    // Newest library, SVM off: paged memory as in 5.2.3, pinned page.
    let no_svm = QueueOptions {
        rules: QueueRules::default(),
        svm_save_area: false,
    };
    let (qs, q, bufs, trace) = traced_compute_queue(&sim, &ctx, no_svm);
    assert_eq!(
        trace.alloc_flags(4096).map(|f| f & (USERPTR | GTT)),
        Some(GTT)
    );
    assert_eq!(
        trace.alloc_flags(total).map(|f| f & (USERPTR | GTT)),
        Some(USERPTR)
    );
    qs.destroy(&q).unwrap();
    drop(bufs);
    drop(qs);

    // Newest library, SVM on: the save area is anonymous memory
    // registered with SVM (no BO), 2 MiB aligned. (Last on this process:
    // the model does not see the munmap that ends the SVM range, so a
    // later userptr at the same address would clash with it.)
    let current = QueueOptions {
        rules: QueueRules::default(),
        svm_save_area: true,
    };
    let (qs, q, bufs, trace) = traced_compute_queue(&sim, &ctx, current);
    assert_eq!(
        trace.alloc_flags(4096).map(|f| f & (USERPTR | GTT)),
        Some(GTT)
    );
    assert_eq!(trace.alloc_flags(total), None);
    assert!(trace.text().contains("AMDKFD_IOC_SVM"), "{}", trace.text());
    let (cwsr, sz) = q.cwsr().unwrap();
    assert_eq!(cwsr % (2 << 20), 0);
    assert!(mapped(cwsr));
    assert_eq!(sz.total_size as u64, total);
    qs.destroy(&q).unwrap();
    assert!(!mapped(cwsr), "the SVM save area goes with its queue");
    drop(bufs);
    drop((qs, ctx));
    assert_no_leaks(&sim);

    // A secondary context (no SVM, paged memory is GTT): GTT save area.
    let ctx = Ctx::secondary(&sim);
    let (qs, q, bufs, trace) = traced_compute_queue(&sim, &ctx, no_svm);
    assert_eq!(
        trace.alloc_flags(total).map(|f| f & (USERPTR | GTT)),
        Some(GTT)
    );
    qs.destroy(&q).unwrap();
    drop(bufs);
    drop((qs, ctx));
    assert_no_leaks(&sim);
}

/// The simulator, except that `GET_QUEUE_WAVE_STATE` succeeds with a
/// control-stack use of `ctl_stack_used` bytes (a kernel reporting more
/// than the control stack holds).
#[derive(Debug)]
struct OversizedWaveState {
    sim: Sim,
    ctl_stack_used: u32,
}

impl kfd_sys::Driver for OversizedWaveState {
    fn open_kfd(&self) -> Result<std::os::fd::OwnedFd, kfd_sys::Errno> {
        kfd_sys::Driver::open_kfd(&self.sim)
    }

    fn open_render_node(&self, minor: u32) -> Result<std::os::fd::OwnedFd, kfd_sys::Errno> {
        kfd_sys::Driver::open_render_node(&self.sim, minor)
    }

    unsafe fn ioctl(
        &self,
        fd: std::os::fd::BorrowedFd<'_>,
        request: std::ffi::c_ulong,
        arg: *mut std::ffi::c_void,
    ) -> Result<i32, kfd_sys::Errno> {
        use kfd_sys::kfd::{kfd_ioctl_get_queue_wave_state_args, AMDKFD_IOC_GET_QUEUE_WAVE_STATE};
        if request as u32 == AMDKFD_IOC_GET_QUEUE_WAVE_STATE.request() {
            let a = arg.cast::<kfd_ioctl_get_queue_wave_state_args>();
            // SAFETY: for this request the caller passes a valid, exclusive
            // `kfd_ioctl_get_queue_wave_state_args` (Driver::ioctl contract).
            unsafe {
                (*a).ctl_stack_used_size = self.ctl_stack_used;
                (*a).save_area_used_size = 0;
            }
            return Ok(0);
        }
        // SAFETY: forwarded contract.
        unsafe { kfd_sys::Driver::ioctl(&self.sim, fd, request, arg) }
    }

    fn close(&self, fd: std::os::fd::OwnedFd) {
        kfd_sys::Driver::close(&self.sim, fd)
    }

    fn root(&self) -> &std::path::Path {
        self.sim.root()
    }
}

#[test]
fn queue_info_refuses_a_control_stack_larger_than_the_area() {
    let _serial = serial();
    use kfd_fmm::{Fmm, FmmOptions};
    use kfd_sys::{DeviceFile, Driver};
    let sim = Sim::preset("mi210").unwrap();
    for used_past_end in [1u32, 0x1000, u32::MAX] {
        let probe = Ctx::primary(&sim);
        let ctl = sizes::cwsr_sizes(probe.topology.node(probe.gpu_node()).unwrap(), &rocm52())
            .unwrap()
            .ctl_stack_size;
        drop(probe);
        let used = ctl.saturating_add(used_past_end);
        let d: Arc<dyn Driver> = Arc::new(OversizedWaveState {
            sim: sim.clone(),
            ctl_stack_used: used,
        });
        let file = Arc::new(DeviceFile::open_kfd(d.clone()).unwrap());
        let topology = Arc::new(kfd_topology::Topology::snapshot(&*d).unwrap());
        let fmm = Fmm::new(file.clone(), nodes_of(&topology), FmmOptions::primary()).unwrap();
        let ctx = Ctx {
            file,
            topology,
            fmm: Arc::new(fmm),
        };
        let qs = queues(&ctx);
        let (req, bufs) = request(&ctx, ctx.gpu_node(), QueueKind::ComputeAql);
        let q = qs.create(&req).unwrap();
        // The kernel's answer does not fit the queue's control stack: the
        // status of a failed wave-state query, not a wrapped address.
        let e = qs.info(&q).unwrap_err();
        assert!(matches!(e, QueueError::Kernel { .. }), "{used:#x}: {e:?}");
        assert_eq!(st(e), "Kernel");
        qs.destroy(&q).unwrap();
        drop(bufs);
        drop(qs);
        drop(ctx);
    }
    assert_no_leaks(&sim);
}
