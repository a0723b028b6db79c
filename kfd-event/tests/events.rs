//! Events on kfd-sim: every type on every preset, waits across threads,
//! timeouts, event ages, exception data, bad inputs and teardown.

mod common;

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use kfd_event::{
    EventDescriptor, EventError, EventType, Events, WaitEntries, WaitMode, WaitOutcome,
    TIMEOUT_IMMEDIATE, TIMEOUT_INFINITE,
};
use kfd_sim::Sim;
use kfd_sys::testing::Cause;

/// The event sub-context of `ctx`, with its memory manager.
fn events(ctx: &Ctx) -> Events {
    Events::new(
        ctx.file.clone(),
        Some(ctx.topology.clone()),
        Some(ctx.fmm.clone()),
    )
}

fn signal(events: &Events, manual: bool) -> kfd_event::Event {
    events
        .create(&EventDescriptor {
            manual_reset: manual,
            ..EventDescriptor::new(EventType::Signal)
        })
        .expect("create signal event")
}

fn st(e: EventError) -> String {
    e.cause()
}

#[test]
fn every_event_type_on_every_preset() {
    for &preset in PRESETS {
        let sim = Sim::preset(preset).unwrap();
        let ctx = Ctx::primary(&sim);
        let events = events(&ctx);
        assert!(
            events.event_page().is_none(),
            "{preset}: page is created lazily"
        );
        let node = ctx.gpu_node();
        let mut made = Vec::new();
        for ty in EventType::ALL {
            for manual in [false, true] {
                let desc = EventDescriptor {
                    sync_var: 0x1000,
                    sync_var_size: 8,
                    manual_reset: manual,
                    ..EventDescriptor::new(ty).on_node(node)
                };
                // The kernel lets the CPU set only SIGNAL events, so a
                // DEBUG event created signaled fails like in C (the set
                // after creation fails and the event is destroyed).
                let signaled = ty != EventType::Debug;
                if ty == EventType::Debug {
                    let err = events.create(&desc.signaled()).unwrap_err();
                    assert_eq!(st(err), "Kernel");
                }
                let desc = EventDescriptor { signaled, ..desc };
                let e = events.create(&desc).unwrap();
                assert_eq!(e.event_type(), ty);
                assert_eq!(e.auto_reset(), !manual);
                assert_eq!(e.descriptor(), &desc, "{preset} {ty:?}");
                assert_eq!(e.exception(), None);
                if ty.is_system() {
                    assert_eq!(e.slot(), None);
                    assert_eq!(e.slot_address(), 0);
                    assert!(e.id() >= 4096, "non-signal ids follow the signal range");
                } else {
                    let (base, slots) = events.event_page().expect("page after a signal event");
                    let slot = e.slot().unwrap();
                    assert!(slot < slots);
                    assert_eq!(e.slot_address(), base + slot as u64 * 8);
                    // Signaled at creation: a zero wait completes.
                    let want = if signaled {
                        WaitOutcome::Signaled
                    } else {
                        WaitOutcome::TimedOut
                    };
                    assert_eq!(
                        events.wait_one(&e, TIMEOUT_IMMEDIATE).unwrap(),
                        want,
                        "{preset} {ty:?} manual={manual}"
                    );
                    // The kernel initialises the slot to "unsignaled".
                    assert_eq!(events.slot_value(&e).unwrap(), Some(u64::MAX));
                }
                events.query(&e).unwrap();
                made.push(e);
            }
        }
        assert_eq!(events.live_count(), made.len());
        for e in &made {
            events.destroy(e).unwrap();
        }
        assert_eq!(events.live_count(), 0);
        drop(events);
        drop(ctx);
        assert_no_leaks(&sim);
    }
}

#[test]
fn bad_inputs_give_the_c_statuses() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let events = events(&ctx);

    // EventType >= HSA_EVENTTYPE_MAXID has no EventType.
    assert_eq!(EventType::from_raw(9), None);

    // System events cannot be set or reset.
    let mem = events
        .create(&EventDescriptor::new(EventType::Memory).manual_reset())
        .unwrap();
    assert_eq!(st(events.set(&mem).unwrap_err()), "SystemEvent");
    assert_eq!(st(events.reset(&mem).unwrap_err()), "SystemEvent");

    // Destroyed events.
    let e = signal(&events, false);
    events.check(&e).unwrap();
    events.destroy(&e).unwrap();
    assert_eq!(st(events.set(&e).unwrap_err()), "UnknownEvent");
    assert_eq!(st(events.reset(&e).unwrap_err()), "UnknownEvent");
    assert_eq!(st(events.query(&e).unwrap_err()), "UnknownEvent");
    assert_eq!(st(events.destroy(&e).unwrap_err()), "UnknownEvent");
    assert_eq!(st(events.wait_one(&e, 0).unwrap_err()), "UnknownEvent");
    assert_eq!(
        st(events
            .wait(std::slice::from_ref(&e), WaitMode::Any, 0)
            .unwrap_err()),
        "UnknownEvent"
    );

    // A zero-length wait list completes at once, as the kernel does.
    assert_eq!(
        events.wait(&[], WaitMode::All, 0).unwrap(),
        WaitOutcome::Signaled
    );
    assert_eq!(
        events.wait(&[], WaitMode::Any, 0).unwrap(),
        WaitOutcome::Signaled
    );

    // An age array shorter than the event list.
    let e2 = signal(&events, false);
    let mut ages: [u64; 0] = [];
    let err = events
        .wait_with_age(std::slice::from_ref(&e2), WaitMode::Any, 0, &mut ages)
        .unwrap_err();
    assert_eq!(st(err), "AgeLengthMismatch");

    events.destroy(&mem).unwrap();
    events.destroy(&e2).unwrap();
}

#[test]
fn events_of_another_context_are_rejected() {
    let sim = Sim::preset("mi210").unwrap();
    let a = Ctx::primary(&sim);
    let b = Ctx::secondary(&sim);
    let ea = events(&a);
    let eb = events(&b);
    let e = signal(&ea, false);
    let f = signal(&eb, false);
    // Same kernel ids in the two processes, but never confused.
    assert_eq!(e.id(), f.id());
    assert_eq!(eb.set(&e).unwrap_err(), EventError::ForeignEvent);
    assert_eq!(
        eb.set_resolved(&e.waitable()).unwrap_err(),
        EventError::ForeignEvent
    );
    assert_eq!(
        eb.reset_resolved(&e.waitable()).unwrap_err(),
        EventError::ForeignEvent
    );
    assert_eq!(st(eb.destroy(&e).unwrap_err()), "ForeignEvent");
    assert_eq!(
        st(eb
            .wait(std::slice::from_ref(&e), WaitMode::Any, 0)
            .unwrap_err()),
        "ForeignEvent"
    );
    assert_eq!(
        st(eb
            .wait_resolved(&[e.waitable()], WaitMode::Any, 0, None, |_, _| ())
            .unwrap_err()),
        "ForeignEvent"
    );
    // Nothing happened to either event.
    assert_eq!(ea.wait_one(&e, 0).unwrap(), WaitOutcome::TimedOut);
    // A resolved entry outlives its event: the kernel refuses the id.
    let gone = signal(&eb, false);
    let w = gone.waitable();
    eb.destroy(&gone).unwrap();
    assert_eq!(st(eb.set_resolved(&w).unwrap_err()), "Kernel");
    eb.set_resolved(&f.waitable()).unwrap();
    eb.reset_resolved(&f.waitable()).unwrap();
    assert_eq!(eb.wait_one(&f, 0).unwrap(), WaitOutcome::TimedOut);
    eb.set(&f).unwrap();
    assert_eq!(ea.wait_one(&e, 0).unwrap(), WaitOutcome::TimedOut);
    assert_eq!(eb.wait_one(&f, 0).unwrap(), WaitOutcome::Signaled);
    drop((ea, eb, a, b));
    assert_no_leaks(&sim);
}

#[test]
fn too_many_signal_events() {
    // The kernel's page (APU, mapped whole by us) and a library buffer
    // (dGPU) both have 4096 slots; the kernel keeps id 0 for itself.
    for preset in ["apu", "mi210"] {
        let sim = Sim::preset(preset).unwrap();
        let ctx = Ctx::primary(&sim);
        let events = events(&ctx);
        let mut made = Vec::new();
        let err = loop {
            match events.create(&EventDescriptor::new(EventType::Signal)) {
                Ok(e) => made.push(e),
                Err(e) => break e,
            }
            assert!(made.len() <= 4096, "the event page has 4096 slots");
        };
        assert_eq!(err, EventError::TooManyEvents);
        assert_eq!(st(err), "TooManyEvents");
        assert_eq!(made.len(), 4095, "{preset}");
        assert_eq!(made.iter().map(|e| e.id()).min(), Some(1), "{preset}");
        assert!(made.iter().all(|e| e.slot_address() != 0));
        // Freeing one makes room again.
        events.destroy(&made.pop().unwrap()).unwrap();
        made.push(signal(&events, false));
        events.teardown();
        assert_eq!(events.live_count(), 0);
    }
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
    /// The ioctl names traced so far, in order.
    fn ioctls(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
            .collect()
    }
}

#[test]
fn dgpu_event_page_is_a_library_buffer_the_kernel_keeps() {
    // As the C library: on a dGPU the first event allocates an uncached
    // GTT buffer for every slot, maps it to all GPUs and passes its BO
    // handle with CREATE_EVENT; at teardown it is neither unmapped nor
    // freed (the kernel refuses while the process lives).
    let sim = Sim::preset("mi300x").unwrap();
    let ctx = Ctx::primary(&sim);
    let trace = TraceBuf::default();
    sim.set_trace(trace.clone());
    let events = events(&ctx);
    let e = signal(&events, false);
    let (base, slots) = events.event_page().unwrap();
    assert_eq!(slots, 4096);
    assert_eq!(e.slot_address(), base + e.slot().unwrap() as u64 * 8);
    assert_eq!(events.slot_value(&e).unwrap(), Some(u64::MAX));
    let fmm = ctx.fmm.clone();
    let handle = fmm.handle(base).expect("the page is a BO of ours");
    assert_eq!(
        trace.ioctls(),
        [
            "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU",
            "AMDKFD_IOC_MAP_MEMORY_TO_GPU",
            "AMDKFD_IOC_CREATE_EVENT"
        ]
    );
    // The buffer is the kernel's now, held by the events: no
    // address-based free reaches it.
    assert!(matches!(
        fmm.free_memory(base),
        Err(kfd_fmm::FmmError::OwnedByHandle(a)) if a == base
    ));
    events.destroy(&e).unwrap();
    // A later event reuses the page.
    let f = signal(&events, false);
    assert_eq!(events.event_page(), Some((base, slots)));
    events.teardown();
    drop(f);
    let before = trace.0.lock().unwrap().len();
    drop(events);
    drop(fmm);
    drop(ctx);
    let at_close = String::from_utf8_lossy(&trace.0.lock().unwrap()[before..]).to_string();
    assert!(
        at_close.contains("AMDKFD_IOC_FREE_MEMORY_OF_GPU"),
        "other buffers are freed: {at_close}"
    );
    assert!(
        !at_close.contains(&format!("handle: {handle} "))
            && !at_close.contains(&format!("handle: {handle},")),
        "teardown leaves the event page to the kernel: {at_close}"
    );
    sim.clear_trace();
    assert_no_leaks(&sim);
}

/// Waits (at most 20 s) until `n` threads are blocked in the simulator's
/// wait ioctl: a sleep instead makes a test depend on the machine's load.
fn until_waiting(sim: &Sim, n: usize) {
    let end = Instant::now() + Duration::from_secs(20);
    while sim
        .live_objects()
        .processes
        .iter()
        .map(|p| p.waiters)
        .sum::<usize>()
        < n
    {
        assert!(Instant::now() < end, "{n} waiters never blocked");
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn many_threads_wait_on_one_event() {
    let sim = Sim::preset("mi300x").unwrap();
    let ctx = Ctx::primary(&sim);
    let events = events(&ctx);
    let e = signal(&events, true);
    let waiters = 8;
    let barrier = Barrier::new(waiters + 1);
    thread::scope(|s| {
        let hs: Vec<_> = (0..waiters)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    events.wait_one(&e, 20_000)
                })
            })
            .collect();
        barrier.wait();
        thread::sleep(Duration::from_millis(50));
        events.set(&e).unwrap();
        for h in hs {
            assert_eq!(h.join().unwrap().unwrap(), WaitOutcome::Signaled);
        }
    });
    // Auto-reset: one set wakes every current waiter and is consumed.
    let a = signal(&events, false);
    let barrier = Barrier::new(3);
    thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    events.wait_one(&a, 20_000)
                })
            })
            .collect();
        barrier.wait();
        // Both must be inside the wait: a set consumed by one before the
        // other waits would leave the late one to time out.
        until_waiting(&sim, 2);
        events.set(&a).unwrap();
        for h in hs {
            assert_eq!(h.join().unwrap().unwrap(), WaitOutcome::Signaled);
        }
    });
    assert_eq!(events.wait_one(&a, 0).unwrap(), WaitOutcome::TimedOut);
}

#[test]
fn one_thread_waits_on_many_events() {
    let sim = Sim::preset("navi31").unwrap();
    let ctx = Ctx::primary(&sim);
    let events = Arc::new(events(&ctx));
    let list: Vec<_> = (0..4).map(|_| signal(&events, true)).collect();

    // Any: one set from another thread completes the wait.
    let (ev, l) = (events.clone(), list.clone());
    let t = thread::spawn(move || {
        thread::sleep(Duration::from_millis(30));
        ev.set(&l[2]).unwrap();
    });
    let r = events.wait(&list, WaitMode::Any, 20_000).unwrap();
    t.join().unwrap();
    assert_eq!(r, WaitOutcome::Signaled);
    events.reset(&list[2]).unwrap();

    // All: completes only once every event was set.
    let (ev, l) = (events.clone(), list.clone());
    let t = thread::spawn(move || {
        for e in &l {
            thread::sleep(Duration::from_millis(10));
            ev.set(e).unwrap();
        }
    });
    let r = events.wait(&list, WaitMode::All, 20_000).unwrap();
    t.join().unwrap();
    assert_eq!(r, WaitOutcome::Signaled);

    // All with one event never set times out.
    let lone = signal(&events, true);
    let mut some = list.clone();
    some.push(lone);
    assert_eq!(
        events.wait(&some, WaitMode::All, 50).unwrap(),
        WaitOutcome::TimedOut
    );
    assert_eq!(
        events.wait(&some, WaitMode::Any, 0).unwrap(),
        WaitOutcome::Signaled
    );
}

#[test]
fn timeouts_expire_within_a_sane_margin() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let events = events(&ctx);
    let e = signal(&events, false);
    for ms in [1u32, 20, 150] {
        let t0 = Instant::now();
        assert_eq!(events.wait_one(&e, ms).unwrap(), WaitOutcome::TimedOut);
        let took = t0.elapsed();
        assert!(
            took >= Duration::from_millis(ms as u64),
            "{ms} ms took {took:?}"
        );
        assert!(
            took < Duration::from_millis(ms as u64) + Duration::from_secs(10),
            "{took:?}"
        );
    }
    let t0 = Instant::now();
    assert_eq!(
        events.wait_one(&e, TIMEOUT_IMMEDIATE).unwrap(),
        WaitOutcome::TimedOut
    );
    assert!(t0.elapsed() < Duration::from_secs(10));
}

#[test]
fn infinite_wait_is_woken_by_destroy() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let events = events(&ctx);
    let e = signal(&events, false);
    thread::scope(|s| {
        let h = s.spawn(|| events.wait_one(&e, TIMEOUT_INFINITE));
        // Destroy only once the waiter sleeps in the kernel (a destroy
        // before the wait starts is an unknown event, status 4, instead).
        let t0 = std::time::Instant::now();
        while sim.live_objects().processes.iter().all(|p| p.waiters == 0) {
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "waiter never blocked"
            );
            thread::sleep(Duration::from_millis(1));
        }
        events.destroy(&e).unwrap();
        let err = h.join().unwrap().unwrap_err();
        assert_eq!(st(err), "Kernel", "a destroyed event fails the wait");
    });
}

#[test]
fn event_age_wait_does_not_miss_an_earlier_set() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let events = events(&ctx);
    let e = signal(&events, true);
    // The age a waiter starts from (the kernel's initial age).
    let mut age = 1u64;
    // A set the waiter has not seen, followed by a reset: a plain wait
    // misses it...
    events.set(&e).unwrap();
    events.reset(&e).unwrap();
    assert_eq!(events.wait_one(&e, 30).unwrap(), WaitOutcome::TimedOut);
    // ...the age form does not, and reports the new age.
    let t0 = Instant::now();
    assert_eq!(
        events.wait_one_with_age(&e, 20_000, &mut age).unwrap(),
        WaitOutcome::Signaled
    );
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert!(age > 1, "the kernel reports the new age: {age}");
    // With the current age, nothing new happened: the wait times out and
    // keeps the age.
    let seen = age;
    assert_eq!(
        events.wait_one_with_age(&e, 30, &mut age).unwrap(),
        WaitOutcome::TimedOut
    );
    assert_eq!(age, seen);
    // A set from another thread wakes it and advances the age again.
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(Duration::from_millis(30));
            events.set(&e).unwrap();
        });
        assert_eq!(
            events.wait_one_with_age(&e, 20_000, &mut age).unwrap(),
            WaitOutcome::Signaled
        );
    });
    assert!(age > seen);

    // Many events: ages are per element; non-signal events keep theirs.
    let e2 = signal(&events, true);
    let q = events
        .create(&EventDescriptor::new(EventType::Queue).manual_reset())
        .unwrap();
    let mut ages = [age, 1, 77];
    events.set(&e2).unwrap();
    events.reset(&e2).unwrap();
    let list = [e.clone(), e2.clone(), q];
    assert_eq!(
        events
            .wait_with_age(&list, WaitMode::Any, 20_000, &mut ages)
            .unwrap(),
        WaitOutcome::Signaled
    );
    assert_eq!(ages[0], age);
    assert!(ages[1] > 1);
    assert_eq!(ages[2], 77);
}

#[test]
fn memory_fault_data_is_returned_by_the_wait() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let events = events(&ctx);
    let node = ctx.gpu_node();
    let gpu_id = ctx.topology.node(node).unwrap().gpu_id;
    let desc = EventDescriptor {
        node_id: node,
        ..EventDescriptor::new(EventType::Memory)
    };
    let e = events.create(&desc.manual_reset()).unwrap();
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(Duration::from_millis(30));
            sim.signal_vm_fault(gpu_id, 0x7f00_1234_5000);
        });
        assert_eq!(events.wait_one(&e, 20_000).unwrap(), WaitOutcome::Signaled);
    });
    let f = e.memory_fault();
    assert_eq!(f.node_id, node);
    assert_eq!(f.virtual_address, 0x7f00_1234_5000);
    assert!(f.failure.not_present);
    assert!(!f.failure.ecc());
    assert_eq!(e.exception(), Some(kfd_event::ExceptionData::Memory(f)));
    assert_eq!(e.hw_exception(), kfd_event::HwException::default());
}

#[test]
fn kernel_page_without_a_memory_manager() {
    // With no device memory at all the kernel's page is mapped from the
    // kfd file, on dGPUs too.
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let events = Events::new(ctx.file.clone(), Some(ctx.topology.clone()), None);
    let e = signal(&events, false);
    let (base, slots) = events.event_page().unwrap();
    assert_eq!(slots, 4096);
    assert_eq!(e.slot_address(), base + e.slot().unwrap() as u64 * 8);
    assert_eq!(events.slot_value(&e).unwrap(), Some(u64::MAX));
    let none = Events::new(ctx.file.clone(), None, None);
    let f = signal(&none, false);
    assert!(f.slot_address() != 0);
}

#[test]
fn teardown_destroys_every_event_and_leaks_nothing() {
    for &preset in PRESETS {
        let sim = Sim::preset(preset).unwrap();
        let ctx = Ctx::primary(&sim);
        let events = events(&ctx);
        for ty in EventType::ALL {
            events.create(&EventDescriptor::new(ty)).unwrap();
        }
        let live: usize = sim.live_objects().processes.iter().map(|p| p.events).sum();
        assert_eq!(live, EventType::ALL.len());
        events.teardown();
        let live: usize = sim.live_objects().processes.iter().map(|p| p.events).sum();
        assert_eq!(live, 0, "{preset}");
        drop(events);
        drop(ctx);
        assert_no_leaks(&sim);
    }
}

/// `wait_resolved`, the C border's wait: the list resolved ahead of the
/// wait, ages per element, exception data handed back by index (and not
/// stored in the events).
#[test]
fn wait_on_a_resolved_list() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let events = events(&ctx);
    let list: Vec<_> = (0..4).map(|_| signal(&events, true)).collect();
    let resolved: Vec<_> = list.iter().map(|e| e.waitable()).collect();
    assert_eq!(resolved[2].id(), list[2].id());
    assert_eq!(resolved[2].event_type(), EventType::Signal);
    let none = |_: usize, _: kfd_event::ExceptionData| panic!("no exception data");
    events.set(&list[1]).unwrap();
    assert_eq!(
        events
            .wait_resolved(&resolved, WaitMode::Any, 20_000, None, none)
            .unwrap(),
        WaitOutcome::Signaled
    );
    assert_eq!(
        events
            .wait_resolved(&resolved, WaitMode::All, 30, None, none)
            .unwrap(),
        WaitOutcome::TimedOut
    );
    // Ages: the set is reported through the age of its element only.
    let mut ages = [1u64; 4];
    assert_eq!(
        events
            .wait_resolved(&resolved, WaitMode::Any, 20_000, Some(&mut ages), none)
            .unwrap(),
        WaitOutcome::Signaled
    );
    assert!(ages[1] > 1, "{ages:?}");
    let mut short = [1u64; 3];
    assert!(matches!(
        events.wait_resolved(&resolved, WaitMode::Any, 0, Some(&mut short), none),
        Err(EventError::AgeLengthMismatch { ages: 3, events: 4 })
    ));
    // An entry of a destroyed event: the kernel no longer knows the id.
    let gone = signal(&events, true);
    let mut bad = resolved.clone();
    bad.push(gone.waitable());
    events.destroy(&gone).unwrap();
    assert_eq!(
        st(events
            .wait_resolved(&bad, WaitMode::All, 0, None, none)
            .unwrap_err()),
        "Kernel"
    );
    assert_eq!(
        events
            .wait_resolved(&[], WaitMode::All, 0, None, none)
            .unwrap(),
        events.wait(&[], WaitMode::All, 0).unwrap(),
        "an empty list completes at once"
    );
    // A memory fault between signal events is handed back for the memory
    // event's index.
    let node = ctx.gpu_node();
    let gpu_id = ctx.topology.node(node).unwrap().gpu_id;
    let desc = EventDescriptor {
        node_id: node,
        ..EventDescriptor::new(EventType::Memory)
    };
    let m = events.create(&desc.manual_reset()).unwrap();
    let mixed = [resolved[0], m.waitable(), resolved[2]];
    sim.signal_vm_fault(gpu_id, 0x7f00_1234_5000);
    let mut got = Vec::new();
    assert_eq!(
        events
            .wait_resolved(&mixed, WaitMode::Any, 20_000, None, |i, x| got.push((i, x)))
            .unwrap(),
        WaitOutcome::Signaled
    );
    let [(1, kfd_event::ExceptionData::Memory(f))] = got[..] else {
        panic!("{got:?}");
    };
    assert_eq!(f.virtual_address, 0x7f00_1234_5000);
    assert_eq!(f.node_id, node);
    assert_eq!(m.exception(), None, "not stored in the event");
}

/// `wait_filled`: entries pushed straight into the wait; the wait covers
/// what was pushed, pushing past the count is an error, a fill error
/// ends the call before any wait, and another context's entry is
/// refused.
#[test]
fn wait_on_filled_entries() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let events = events(&ctx);
    let list: Vec<_> = (0..3).map(|_| signal(&events, true)).collect();
    let none = |_: usize, _: kfd_event::ExceptionData| panic!("no exception data");
    let all =
        |entries: &mut WaitEntries<'_>| list.iter().try_for_each(|e| entries.push(&e.waitable()));
    events.set(&list[0]).unwrap();
    events.set(&list[1]).unwrap();
    // Only the first two pushed (and set): the wait for all completes.
    let first_two = |entries: &mut WaitEntries<'_>| {
        assert!(entries.is_empty());
        entries.push(&list[0].waitable())?;
        entries.push(&list[1].waitable())?;
        assert_eq!(entries.len(), 2);
        Ok::<(), EventError>(())
    };
    assert_eq!(
        events
            .wait_filled(3, WaitMode::All, 20_000, None, first_two, none)
            .unwrap(),
        Ok(WaitOutcome::Signaled)
    );
    // All three: the third was never set.
    assert_eq!(
        events
            .wait_filled(3, WaitMode::All, 30, None, all, none)
            .unwrap(),
        Ok(WaitOutcome::TimedOut)
    );
    // One entry more than the count.
    assert_eq!(
        events
            .wait_filled(2, WaitMode::Any, 0, None, all, none)
            .unwrap_err(),
        EventError::WaitEntriesFull { capacity: 2 }
    );
    // The fill's own error, before any wait (the set event stays set).
    events.set(&list[2]).unwrap();
    let refuse = |_: &mut WaitEntries<'_>| Err("refused");
    assert_eq!(
        events.wait_filled(1, WaitMode::Any, 0, None, refuse, none),
        Err("refused")
    );
    let third = |entries: &mut WaitEntries<'_>| entries.push(&list[2].waitable());
    assert_eq!(
        events
            .wait_filled(1, WaitMode::Any, 0, None, third, none)
            .unwrap(),
        Ok(WaitOutcome::Signaled)
    );
    // Another context's event.
    let other = Ctx::secondary(&sim);
    let eb = self::events(&other);
    let theirs = signal(&eb, true);
    let foreign = |entries: &mut WaitEntries<'_>| entries.push(&theirs.waitable());
    assert_eq!(
        events
            .wait_filled(1, WaitMode::Any, 0, None, foreign, none)
            .unwrap(),
        Err(EventError::ForeignEvent)
    );
}

#[test]
fn smi_descriptors_for_gpus_only() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let gpu = ctx.topology.node(ctx.gpu_node()).unwrap().gpu_id;
    let fd = kfd_event::open_smi(&ctx.file, gpu).unwrap();
    let other = kfd_event::open_smi(&ctx.file, gpu).unwrap();
    assert_ne!(
        std::os::fd::AsRawFd::as_raw_fd(&fd),
        std::os::fd::AsRawFd::as_raw_fd(&other),
        "one file per request"
    );
    // A CPU node's gpu_id (0) is no device of the process: ERROR.
    assert_eq!(st(kfd_event::open_smi(&ctx.file, 0).unwrap_err()), "Kernel");
}

/// Events made as records (the C border's way) are named by their entries:
/// set, waited on and destroyed without a handle; a destroyed record's
/// entry is an unknown event, another context's a foreign one, and
/// teardown destroys the records still live as it does handles.
#[test]
fn records_are_named_by_their_entries() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let ev = events(&ctx);
    let desc = EventDescriptor::new(EventType::Signal);
    let r = ev.create_record(&desc).unwrap();
    assert!(r.auto_reset());
    assert_eq!(r.event_type(), EventType::Signal);
    assert_ne!(r.slot_address(), 0, "a signal event has a slot");
    let handle = signal(&ev, false);
    assert_ne!(r.id(), handle.id());
    assert_eq!(ev.live_count(), 2);

    let w = r.waitable();
    ev.set_resolved(&w).unwrap();
    assert_eq!(
        ev.wait_resolved(&[w], WaitMode::All, 0, None, |_, _| ())
            .unwrap(),
        WaitOutcome::Signaled
    );
    ev.destroy_resolved(&w).unwrap();
    assert_eq!(
        ev.destroy_resolved(&w).unwrap_err(),
        EventError::UnknownEvent
    );
    assert_eq!(ev.live_count(), 1);

    // A handle's entry destroys it too, and the handle is then dead.
    ev.destroy_resolved(&handle.waitable()).unwrap();
    assert_eq!(ev.set(&handle).unwrap_err(), EventError::UnknownEvent);
    assert_eq!(ev.destroy(&handle).unwrap_err(), EventError::UnknownEvent);

    let other = Ctx::secondary(&sim);
    let theirs = events(&other);
    let r2 = theirs
        .create_record(&desc.manual_reset().signaled())
        .unwrap();
    assert!(!r2.auto_reset());
    assert_eq!(
        ev.destroy_resolved(&r2.waitable()).unwrap_err(),
        EventError::ForeignEvent
    );
    assert_eq!(
        theirs
            .wait_resolved(&[r2.waitable()], WaitMode::Any, 0, None, |_, _| ())
            .unwrap(),
        WaitOutcome::Signaled,
        "created signaled"
    );
    let _kept = theirs.create_record(&desc).unwrap();
    assert_eq!(theirs.live_count(), 2);
    drop((ev, theirs, ctx, other));
    assert_no_leaks(&sim);
}
