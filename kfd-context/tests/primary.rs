//! The process-wide primary context. These tests share one global slot,
//! so they run serialized.

use std::sync::Arc;

use kfd_context::{primary, primary::Opened, Context, ContextError, ContextKind};
use kfd_sim::Sim;
use serial_test::serial;

fn with_sim(preset: &str) -> Sim {
    let sim = Sim::preset(preset).unwrap();
    primary::set_driver(Arc::new(sim.clone())).unwrap();
    sim
}

#[test]
#[serial]
fn refcounted_open_close() {
    let sim = with_sim("mi210");
    assert!(matches!(primary::close(), Err(ContextError::NotOpen)));
    let (a, first) = primary::open().unwrap();
    let (b, again) = primary::open().unwrap();
    assert_eq!((first, again), (Opened::First, Opened::Again));
    assert!(Context::same(&a, &b));
    assert_eq!(a.kind(), ContextKind::Primary);
    assert_eq!(primary::open_count(), 2);
    // The driver cannot change while the primary is open.
    assert!(matches!(
        primary::set_driver(Arc::new(sim.clone())),
        Err(ContextError::AlreadyOpen)
    ));
    drop((a, b));
    primary::close().unwrap();
    assert!(primary::get().is_ok(), "one reference left");
    primary::close().unwrap();
    assert!(matches!(primary::get(), Err(ContextError::NotOpen)));
    assert!(matches!(primary::close(), Err(ContextError::NotOpen)));
    // Kept after the last close (the default), torn down on request.
    assert!(!sim.live_objects().is_empty());
    primary::discard_closed();
    assert!(sim.live_objects().is_empty());
}

/// With `keep_after_close` (6.2.4 and newest) the last close keeps the
/// context and its kernel objects, and the next open takes it up as a
/// first open; without it (5.2.3) the last close tears everything down.
#[test]
#[serial]
fn the_last_close_keeps_the_context_when_asked() {
    use kfd_context::ContextOptions;
    let sim = with_sim("mi210");
    let (a, _) = primary::open().unwrap();
    a.acquire_system_properties().unwrap();
    let addr = a
        .fmm()
        .unwrap()
        .alloc_memory(0, 0x4000, kfd_fmm::MemFlags::HOST_ACCESS, None)
        .unwrap();
    drop(a);
    primary::close().unwrap();
    assert!(matches!(primary::get(), Err(ContextError::NotOpen)));
    assert!(!sim.live_objects().is_empty(), "kept");
    let (b, how) = primary::open().unwrap();
    assert_eq!(how, Opened::First);
    assert!(b.fmm().unwrap().pointer_info(addr).is_ok(), "same memory");
    b.fmm().unwrap().free_memory(addr).unwrap();
    drop(b);
    primary::close().unwrap();
    primary::discard_closed();
    assert!(sim.live_objects().is_empty());

    let options = ContextOptions {
        keep_after_close: false,
        ..ContextOptions::default()
    };
    let (c, _) = primary::open_with(options).unwrap();
    c.acquire_system_properties().unwrap();
    drop(c);
    primary::close().unwrap();
    assert!(sim.live_objects().is_empty(), "torn down at the last close");
}

#[test]
#[serial]
fn concurrent_open_close_keeps_count_consistent() {
    let sim = with_sim("mi210");
    let threads: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(|| {
                for _ in 0..20 {
                    let (_ctx, _) = primary::open().unwrap();
                    primary::close().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(primary::open_count(), 0);
    primary::discard_closed();
    assert!(sim.live_objects().is_empty());
}

#[test]
#[serial]
fn primary_and_secondaries_are_isolated_and_torn_down() {
    let sim = with_sim("mi300x");
    let (host, _) = primary::open().unwrap();
    host.acquire_system_properties().unwrap();
    let tenant = Context::open_secondary(Arc::new(sim.clone())).unwrap();
    let topo = tenant.acquire_system_properties().unwrap();
    let gpu = topo.gpu_nodes().next().unwrap().id;

    // Memory: each context has its own address space bookkeeping.
    let flags = kfd_fmm::MemFlags::NON_PAGED | kfd_fmm::MemFlags::HOST_ACCESS;
    let tb = tenant
        .fmm()
        .unwrap()
        .alloc_buffer(gpu, 1 << 20, 0, flags)
        .unwrap();
    tb.map().unwrap();
    assert!(host.fmm().unwrap().pointer_info(tb.addr()).is_err());

    // Events and queues come up lazily and go away with the context.
    let events = tenant.events().unwrap();
    let ev = events
        .create(&kfd_event::EventDescriptor::new(
            kfd_event::EventType::Signal,
        ))
        .unwrap();
    events.set(&ev).unwrap();
    assert_eq!(
        events.wait_one(&ev, 0).unwrap(),
        kfd_event::WaitOutcome::Signaled
    );
    let ring = tenant
        .fmm()
        .unwrap()
        .alloc_buffer(gpu, 64 << 10, 0, kfd_fmm::MemFlags::HOST_ACCESS)
        .unwrap();
    ring.map().unwrap();
    let queues = tenant.queues().unwrap();
    let q = queues
        .create(&kfd_queue::QueueRequest::new(
            gpu,
            kfd_queue::QueueKind::ComputeAql,
            ring.addr(),
            ring.size(),
        ))
        .unwrap();
    // The primary's queue sub-context does not know the tenant's queue.
    assert!(host.queues().unwrap().check(&q).is_err());
    let before = sim.live_objects();
    assert!(before.processes.len() >= 2);

    drop((ev, q, events, queues, ring, tb));
    tenant.close();
    assert_eq!(
        sim.live_objects().processes.len(),
        1,
        "only the primary is left"
    );
    drop(host);
    primary::close().unwrap();
    primary::discard_closed();
    let live = sim.live_objects();
    assert!(live.is_empty(), "{live:?}");
}

#[test]
#[serial]
fn queue_options_follow_the_context() {
    use kfd_context::ContextOptions;
    use kfd_queue::{QueueOptions, QueueRules};

    let sim = with_sim("mi210");
    let mut options = ContextOptions {
        queues: QueueOptions {
            rules: QueueRules::default(),
            svm_save_area: true,
        },
        ..ContextOptions::default()
    };
    // A primary with the SVM API on a kernel whose GPUs support it: SVM
    // save areas allowed.
    let (host, _) = primary::open_with(options.clone()).unwrap();
    host.acquire_system_properties().unwrap();
    assert_eq!(host.queues().unwrap().options(), options.queues);
    // A secondary keeps the rules but never uses SVM save areas.
    let tenant = Context::open_secondary_with(Arc::new(sim.clone()), options.clone()).unwrap();
    tenant.acquire_system_properties().unwrap();
    let q = tenant.queues().unwrap().options();
    assert_eq!((q.rules, q.svm_save_area), (QueueRules::default(), false));
    drop(tenant);
    drop(host);
    primary::close().unwrap();

    // Without the SVM API the primary does not use them either (a new
    // context: the kept one would be taken up with its own options).
    primary::discard_closed();
    options.svm_api = false;
    options.fmm.svm_api_enabled = false;
    let (host, _) = primary::open_with(options).unwrap();
    host.acquire_system_properties().unwrap();
    assert!(!host.queues().unwrap().options().svm_save_area);
    drop(host);
    primary::close().unwrap();
    primary::discard_closed();
    assert!(sim.live_objects().is_empty());

    // The default is the newest library's buffers.
    assert_eq!(ContextOptions::default().queues, QueueOptions::default());
}

/// The primary opened, used and closed over and over (each last close
/// tears it down) while other threads look it up and call on it: they
/// make its sub-contexts and read node views on whichever context is
/// open, beside its teardown, and never see a half-made or half-gone one.
#[test]
#[serial]
fn callers_make_sub_contexts_while_the_primary_comes_and_goes() {
    use kfd_context::ContextOptions;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let sim = with_sim("mi210");
    let options = ContextOptions {
        keep_after_close: false,
        ..ContextOptions::default()
    };
    let done = AtomicBool::new(false);
    let used = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    let Ok(p) = primary::current() else { continue };
                    // Made from a snapshot, or refused without one.
                    match p.node_view(1) {
                        Ok((_, ap)) => assert!(ap.mmio.is_some()),
                        Err(ContextError::NoSnapshot) => continue,
                        Err(e) => panic!("node_view: {e:?}"),
                    }
                    for made in [p.events().err(), p.queues().err(), p.perf().err()] {
                        assert!(
                            matches!(made, None | Some(ContextError::NoSnapshot)),
                            "{made:?}"
                        );
                    }
                    used.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        let start = std::time::Instant::now();
        let mut cycles = 0;
        while cycles < 50
            || (used.load(Ordering::Relaxed) == 0
                && start.elapsed() < std::time::Duration::from_secs(10))
        {
            let (ctx, _) = primary::open_with(options.clone()).unwrap();
            ctx.acquire_properties(&Default::default(), true).unwrap();
            drop(ctx);
            primary::close().unwrap();
            cycles += 1;
        }
        done.store(true, Ordering::Relaxed);
    });
    assert!(used.into_inner() > 0, "no caller found the primary open");
    assert_eq!(primary::open_count(), 0);
    primary::discard_closed();
    // The last of the callers tore the last context down.
    assert!(sim.live_objects().is_empty(), "{:?}", sim.live_objects());
}
