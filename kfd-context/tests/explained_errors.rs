//! Issue 24: where the kernel refuses with a bare errno but the library
//! knows why, the error says so (and keeps the errno's C status at the
//! hsakmt border).

use std::sync::Arc;

use kfd_context::{primary, Context};
use kfd_fmm::{Buffer, FmmError, MemFlags};
use kfd_queue::{QueueError, QueueKind, QueueRequest, Queues};

const HOST: MemFlags = MemFlags::NON_PAGED.union(MemFlags::HOST_ACCESS);

/// A ring and a read/write pointer page in GPU-mapped system memory.
fn ring(ctx: &Context, size: u64) -> (Buffer, Buffer) {
    let fmm = ctx.fmm().unwrap();
    let ring = fmm.alloc_buffer(0, size.max(4096), 0, HOST).unwrap();
    ring.map().unwrap();
    let ptrs = fmm.alloc_buffer(0, 4096, 0, HOST).unwrap();
    ptrs.map().unwrap();
    (ring, ptrs)
}

fn request(node: u32, kind: QueueKind, ring: &Buffer, size: u64, ptrs: &Buffer) -> QueueRequest {
    let mut req = QueueRequest::new(node, kind, ring.addr(), size);
    req.read_ptr = ptrs.addr();
    req.write_ptr = ptrs.addr() + 8;
    req
}

fn gpu(ctx: &Context) -> u32 {
    let t = ctx.acquire_system_properties().unwrap();
    let id = t.gpu_nodes().next().unwrap().id;
    id
}

#[test]
fn host_visible_vram_on_a_small_bar() {
    let sim = kfd_sim::Sim::preset("navi31").unwrap();
    let ctx = Context::open_secondary(Arc::new(sim)).unwrap();
    let g = gpu(&ctx);
    let e = ctx
        .fmm()
        .unwrap()
        .alloc_buffer(g, 1 << 20, 0, HOST)
        .unwrap_err();
    assert!(
        matches!(e, FmmError::VramNotHostVisible { node, .. } if node == g),
        "{e:?}"
    );
    assert!(e.to_string().contains("small PCI BAR"), "{e}");
    // Without host access the same VRAM is fine.
    ctx.fmm()
        .unwrap()
        .alloc_buffer(g, 1 << 20, 0, MemFlags::NON_PAGED)
        .unwrap();
}

#[test]
fn freeing_mapped_memory_and_queue_refusals() {
    let sim = kfd_sim::Sim::preset("mi210").unwrap();
    let ctx = Context::open_secondary(Arc::new(sim)).unwrap();
    let g = gpu(&ctx);
    let fmm = ctx.fmm().unwrap();
    let a = fmm
        .alloc_memory(g, 1 << 20, MemFlags::NON_PAGED, None)
        .unwrap();
    fmm.map_to_gpu(a, 1 << 20).unwrap();
    let e = fmm.free_memory(a).unwrap_err();
    assert_eq!(e, FmmError::StillMapped(a));
    assert!(e.to_string().contains("unmap it before freeing"), "{e}");
    fmm.unmap_from_gpu(a).unwrap();
    fmm.free_memory(a).unwrap();

    let queues: &Arc<Queues> = ctx.queues().unwrap();
    let (r, p) = ring(&ctx, 64 << 10);
    let e = queues
        .create(&request(g, QueueKind::ComputeAql, &r, 3000, &p))
        .unwrap_err();
    assert_eq!(e, QueueError::RingSize(3000));

    // SDMA queue slots run out (the simulator has the kernel's per-engine
    // limit); the refusal names that, then one destroy makes room.
    let mut made = Vec::new();
    let e = loop {
        let (r, p) = ring(&ctx, 4096);
        match queues.create(&request(g, QueueKind::SdmaByEngine(0), &r, 4096, &p)) {
            Ok(q) => made.push((q, r, p)),
            Err(e) => break e,
        }
        assert!(made.len() < 1024, "SDMA queues never ran out");
    };
    assert_eq!(e, QueueError::NoFreeSdmaQueue { engine: Some(0) });
    assert!(e.to_string().contains("engine 0"), "{e}");
    let (q, _, _) = made.pop().unwrap();
    queues.destroy(&q).unwrap();
    let (r, p) = ring(&ctx, 4096);
    let q = queues
        .create(&request(g, QueueKind::SdmaByEngine(0), &r, 4096, &p))
        .unwrap();
    queues.destroy(&q).unwrap();
    for (q, _, _) in made {
        queues.destroy(&q).unwrap();
    }
}

#[test]
fn runtime_enable_after_a_queue() {
    let sim = kfd_sim::Sim::preset("mi210").unwrap();
    primary::set_driver(Arc::new(sim)).unwrap();
    let (ctx, _) = primary::open().unwrap();
    let g = gpu(&ctx);
    let (r, p) = ring(&ctx, 64 << 10);
    let queues = ctx.queues().unwrap();
    let q = queues
        .create(&request(g, QueueKind::ComputeAql, &r, r.size(), &p))
        .unwrap();
    let e = ctx.debug().unwrap().runtime_enable(0, false).unwrap_err();
    assert!(matches!(e, kfd_debug::Error::QueuesExist), "{e:?}");
    assert!(e.to_string().contains("before the first queue"), "{e}");
    queues.destroy(&q).unwrap();
    drop((r, p, ctx));
    primary::close().unwrap();
    primary::discard_closed();
}
