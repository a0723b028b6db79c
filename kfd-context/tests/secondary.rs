//! Secondary contexts on per-test simulators (no process-wide state).

use std::sync::Arc;

use kfd_context::{Context, ContextError, ContextKind};
use kfd_sim::Sim;

#[test]
fn secondary_opens_its_own_kernel_process() {
    let sim = Sim::preset("mi210").unwrap();
    let a = Context::open_secondary(Arc::new(sim.clone())).unwrap();
    let b = Context::open_secondary(Arc::new(sim.clone())).unwrap();
    assert_eq!(a.kind(), ContextKind::Secondary);
    assert!(!a.svm_api(), "secondaries never use the SVM API");
    assert_ne!(a.id(), b.id());
    assert!(a.version().minor >= 19);
    // Two kernel processes exist for this simulated OS process.
    assert_eq!(sim.live_objects().processes.len(), 2);
    drop(a);
    assert_eq!(sim.live_objects().processes.len(), 1);
    b.close();
    assert!(sim.live_objects().processes.is_empty());
}

#[test]
fn topology_needs_a_snapshot() {
    let sim = Sim::preset("mi300x").unwrap();
    let ctx = Context::open_secondary(Arc::new(sim)).unwrap();
    let err = ctx.topology().unwrap_err();
    assert!(matches!(err, ContextError::NoSnapshot));
    let topo = ctx.acquire_system_properties().unwrap();
    assert_eq!(topo.gpu_nodes().count(), 8);
    ctx.release_system_properties();
    assert!(ctx.topology().is_err());
}

#[test]
fn old_kernel_cannot_make_secondaries() {
    let sim = Sim::preset("mi210").unwrap();
    sim.set_version_minor(18);
    let err = Context::open_secondary(Arc::new(sim)).unwrap_err();
    assert!(matches!(err, ContextError::Ioctl { .. }), "{err:?}");
}

#[test]
fn foreign_objects_are_refused() {
    let sim = Arc::new(Sim::preset("mi210").unwrap());
    let a = Context::open_secondary(sim.clone()).unwrap();
    let b = Context::open_secondary(sim).unwrap();
    assert!(a.check_owner(a.id()).is_ok());
    let err = b.check_owner(a.id()).unwrap_err();
    assert!(
        matches!(err, ContextError::ForeignObject { owner, this } if owner == a.id().0 && this == b.id().0)
    );
}

/// Releasing the apertures (the newest library's
/// `hsaKmtReleaseSystemProperties`) unmaps and frees the MMIO remap pages;
/// reacquiring maps them again. Nothing leaks.
#[test]
fn apertures_are_released_and_reacquired() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Context::open_secondary(Arc::new(sim.clone())).unwrap();
    let topo = ctx.acquire_system_properties().unwrap();
    let gpu = topo.gpu_nodes().next().unwrap().id;
    let fmm = ctx.fmm().unwrap().clone();
    let bos = |sim: &Sim| sim.live_objects().processes[0].bos;
    let first = fmm.mmio_address(gpu).expect("MMIO page mapped");
    let with_mmio = bos(&sim);
    ctx.release_apertures();
    ctx.release_system_properties();
    assert_eq!(fmm.mmio_address(gpu), None);
    assert_eq!(bos(&sim), with_mmio - 1, "MMIO page freed");
    ctx.release_apertures(); // a second release does nothing
    assert_eq!(bos(&sim), with_mmio - 1);
    ctx.acquire_system_properties().unwrap();
    ctx.reacquire_apertures().unwrap();
    assert_ne!(fmm.mmio_address(gpu), None, "{first:#x} mapped again");
    assert_eq!(bos(&sim), with_mmio);
    ctx.reacquire_apertures().unwrap(); // nothing to do
    assert_eq!(bos(&sim), with_mmio);
    drop(fmm);
    ctx.close();
    assert!(sim.live_objects().processes.is_empty());
}

/// A released snapshot is taken again while the kernel's topology
/// generation is unchanged (no re-read of the tree), and re-read once it
/// changes; other snapshot options always read anew.
#[test]
fn reacquire_keeps_the_snapshot_while_the_generation_holds() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Context::open_secondary(Arc::new(sim.clone())).unwrap();
    let first = ctx.acquire_system_properties().unwrap();
    ctx.release_system_properties();
    assert!(matches!(ctx.topology(), Err(ContextError::NoSnapshot)));
    let again = ctx.acquire_system_properties().unwrap();
    assert!(Arc::ptr_eq(&first, &again), "generation unchanged: kept");
    assert!(Arc::ptr_eq(&ctx.topology().unwrap(), &first));

    let gen = sim
        .root()
        .join("sys/devices/virtual/kfd/kfd/topology/generation_id");
    let now: u32 = std::fs::read_to_string(&gen)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    std::fs::write(&gen, format!("{}\n", now + 1)).unwrap();
    ctx.release_system_properties();
    let changed = ctx.acquire_system_properties().unwrap();
    assert!(
        !Arc::ptr_eq(&first, &changed),
        "generation changed: re-read"
    );
    assert_eq!(changed.generation_id, now + 1);

    let other = kfd_topology::SnapshotOptions {
        svm_api_supported: false,
        ..kfd_topology::SnapshotOptions::default()
    };
    let with_other = ctx.acquire_system_properties_with(&other).unwrap();
    assert!(
        !Arc::ptr_eq(&changed, &with_other),
        "other options: re-read"
    );
    ctx.close();
}

#[test]
fn tile_config_of_a_gpu_and_of_an_unknown_id() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Context::open_secondary(Arc::new(sim)).unwrap();
    let topo = ctx.acquire_system_properties().unwrap();
    let gpu_id = topo.gpu_nodes().next().unwrap().gpu_id;
    let (mut tiles, mut macros) = ([7u32; 4], [7u32; 2]);
    let got = ctx.tile_config(gpu_id, &mut tiles, &mut macros).unwrap();
    // gfx9 has no tile mode tables, only GB_ADDR_CONFIG.
    assert_eq!((got.num_tile_configs, got.num_macro_tile_configs), (0, 0));
    assert_ne!(got.gb_addr_config, 0);
    let err = ctx.tile_config(0xdead, &mut [], &mut []).unwrap_err();
    assert!(
        matches!(
            err,
            ContextError::Ioctl {
                request,
                errno: kfd_sys::Errno::EINVAL,
            } if request == kfd_sys::kfd::AMDKFD_IOC_GET_TILE_CONFIG.info()
        ),
        "{err:?}"
    );
}

/// Issue 24: what outlives `close`. Objects made through a context hold
/// the sub-context that made them: they stay usable after the context's
/// last handle is closed, and the kernel process (its buffers, queues,
/// events, and the descriptor) goes only when the last of them is
/// dropped.
#[test]
fn objects_outlive_close_and_keep_the_process() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Context::open_secondary(Arc::new(sim.clone())).unwrap();
    let gpu = ctx
        .acquire_system_properties()
        .unwrap()
        .gpu_nodes()
        .next()
        .unwrap()
        .id;
    let flags = kfd_fmm::MemFlags::NON_PAGED | kfd_fmm::MemFlags::HOST_ACCESS;
    let buf = ctx
        .fmm()
        .unwrap()
        .alloc_buffer(gpu, 1 << 20, 0, flags)
        .unwrap();
    let event = ctx
        .events()
        .unwrap()
        .create(&kfd_event::EventDescriptor::new(
            kfd_event::EventType::Signal,
        ))
        .unwrap();
    ctx.close();
    buf.write(0, b"after close").unwrap();
    let mut back = [0u8; 11];
    buf.read(0, &mut back).unwrap();
    assert_eq!(&back, b"after close");
    assert!(
        !sim.live_objects().is_empty(),
        "the buffer keeps the process"
    );
    drop(buf);
    drop(event);
    assert!(sim.live_objects().is_empty(), "{:?}", sim.live_objects());
}

/// Every sub-context asked for by many threads at once, on a context that
/// has none yet: each is made once (every thread borrows the same one),
/// and the memory manager they are all made from is one.
#[test]
fn sub_contexts_are_made_once_under_contention() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Context::open_secondary(Arc::new(sim.clone())).unwrap();
    let gpu = ctx
        .acquire_system_properties()
        .unwrap()
        .gpu_nodes()
        .next()
        .unwrap()
        .id;
    let barrier = std::sync::Barrier::new(8);
    let made: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..8)
            .map(|i| {
                let (ctx, barrier) = (&ctx, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    // Each thread starts with another sub-context, so
                    // each one's first maker races the others.
                    let mut views = None;
                    for k in 0..5 {
                        match (i + k) % 5 {
                            0 => drop(ctx.events().unwrap()),
                            1 => drop(ctx.queues().unwrap()),
                            2 => drop(ctx.perf().unwrap()),
                            3 => drop(ctx.debug().unwrap()),
                            _ => views = Some(ctx.node_view(gpu).unwrap()),
                        }
                    }
                    (
                        ctx.fmm().unwrap().clone(),
                        ctx.events().unwrap().clone(),
                        ctx.queues().unwrap().clone(),
                        ctx.perf().unwrap().clone(),
                        ctx.debug().unwrap(),
                        views.unwrap().1.mmio.is_some(),
                    )
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let first = &made[0];
    for m in &made {
        assert!(Arc::ptr_eq(&m.0, &first.0), "one memory manager");
        assert!(Arc::ptr_eq(&m.1, &first.1), "one events sub-context");
        assert!(Arc::ptr_eq(&m.2, &first.2), "one queues sub-context");
        assert!(Arc::ptr_eq(&m.3, &first.3), "one perf sub-context");
        assert!(Arc::ptr_eq(&m.4, &first.4), "one debug sub-context");
        assert!(m.5, "the view saw the MMIO aperture");
    }
    drop(made);
    assert_eq!(sim.live_objects().processes.len(), 1);
    ctx.close();
    assert!(sim.live_objects().is_empty(), "{:?}", sim.live_objects());
}

/// Threads releasing and acquiring the properties (apertures with them)
/// while others read node views and make sub-contexts, on a context whose
/// memory manager the first of them makes: a view sees a snapshot with
/// its apertures set up, or no snapshot, never one with its MMIO page
/// released; nobody deadlocks; the last acquire stands.
#[test]
fn views_never_see_half_a_release() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Context::open_secondary(Arc::new(sim.clone())).unwrap();
    let gpu = kfd_topology::Topology::snapshot(&sim)
        .unwrap()
        .gpu_nodes()
        .next()
        .unwrap()
        .id;
    let options = kfd_topology::SnapshotOptions::default();
    let done = AtomicBool::new(false);
    let seen = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for i in 0..4 {
            let (ctx, done, seen) = (&ctx, &done, &seen);
            s.spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    match ctx.node_view(gpu) {
                        Ok((topo, ap)) => {
                            assert!(ap.mmio.is_some(), "a snapshot without its MMIO page");
                            assert!(topo.node(gpu).is_some());
                            seen.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(ContextError::NoSnapshot) => {}
                        Err(e) => panic!("node_view: {e:?}"),
                    }
                    if i == 0 {
                        // Sub-contexts made beside the churn (once each).
                        let _ = ctx.events();
                        let _ = ctx.queues();
                    }
                }
            });
        }
        let churners: Vec<_> = (0..2)
            .map(|_| {
                let (ctx, options) = (&ctx, &options);
                s.spawn(move || {
                    for _ in 0..200 {
                        ctx.acquire_properties(options, true).unwrap();
                        ctx.release_properties(true);
                    }
                    ctx.acquire_properties(options, true).unwrap();
                })
            })
            .collect();
        for c in churners {
            c.join().unwrap();
        }
        // On until a reader saw a snapshot.
        while seen.load(Ordering::Relaxed) == 0 {
            std::thread::yield_now();
        }
        done.store(true, Ordering::Relaxed);
    });
    let (_, ap) = ctx.node_view(gpu).unwrap();
    assert!(ap.mmio.is_some(), "the last acquire set the apertures up");
    ctx.close();
    assert!(sim.live_objects().is_empty(), "{:?}", sim.live_objects());
}
