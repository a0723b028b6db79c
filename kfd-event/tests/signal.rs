//! HSA signals on kfd-sim: host stores wake sleeping waiters, timeouts
//! report the value, and a dropped signal releases its event and page.
//! (The GPU side, a packet completing a signal, is tested in kfd-queue.)

mod common;

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use kfd_event::{Condition, EventError, Events, Signal};
use kfd_sim::Sim;

fn events(ctx: &Ctx) -> Arc<Events> {
    Arc::new(Events::new(
        ctx.file.clone(),
        Some(ctx.topology.clone()),
        Some(ctx.fmm.clone()),
    ))
}

/// (buffer objects, events) of the simulated process.
fn kernel_objects(sim: &Sim) -> (usize, usize) {
    let s = sim.live_objects();
    let p = &s.processes[0];
    (p.bos, p.events)
}

/// Waits until a thread sleeps in WAIT_EVENTS (bounded).
fn until_a_waiter_sleeps(sim: &Sim) {
    let start = Instant::now();
    while sim.live_objects().processes[0].waiters == 0 {
        assert!(start.elapsed() < Duration::from_secs(10), "nobody waits");
        thread::sleep(Duration::from_millis(1));
    }
}

/// On a dGPU (the library's event page) and an APU (the kernel's page
/// mapped from the KFD file) alike, a signal has its value, a mailbox and
/// an aligned handle.
#[test]
fn a_new_signal_has_its_value_and_a_mailbox() {
    for preset in ["mi210", "apu"] {
        let sim = Sim::preset(preset).unwrap();
        let ctx = Ctx::primary(&sim);
        let events = events(&ctx);
        let s = Signal::new(&events, &ctx.fmm, 7).unwrap();
        assert_eq!(s.load().unwrap(), 7);
        assert_eq!(s.value().unwrap(), 7);
        let h = s.handle().handle;
        assert_ne!(h, 0);
        assert_eq!(h % 64, 0, "amd_signal_t is 64-byte aligned");
        assert_ne!(s.event().slot_address(), 0, "{preset}: the GPU's mailbox");
        s.store(-3).unwrap();
        assert_eq!(s.load().unwrap(), -3);
    }
}

/// A waiter sleeps in the kernel (the simulator counts it as blocked in
/// WAIT_EVENTS) until another thread stores a value that meets its
/// condition; stores that do not meet it wake it without ending the
/// wait.
#[test]
fn a_store_wakes_a_sleeping_waiter() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let events = events(&ctx);
    let s = Signal::new(&events, &ctx.fmm, 2).unwrap();
    let got = thread::scope(|scope| {
        let waiter = scope.spawn(|| s.wait_until(Condition::Eq, 0, Duration::from_secs(20)));
        until_a_waiter_sleeps(&sim);
        s.store(1).unwrap();
        until_a_waiter_sleeps(&sim);
        s.store(0).unwrap();
        waiter.join().unwrap()
    });
    assert_eq!(got, Ok(0));
}

#[test]
fn a_wait_times_out_with_the_value_it_saw() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let events = events(&ctx);
    let s = Signal::new(&events, &ctx.fmm, 3).unwrap();
    let start = Instant::now();
    let r = s.wait_until(Condition::Lt, 3, Duration::from_millis(60));
    match r {
        Err(EventError::SignalTimeout { value: 3, waited }) => {
            assert!(waited >= Duration::from_millis(60), "{waited:?}")
        }
        other => panic!("{other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(
        s.wait_until(Condition::Gte, 3, Duration::ZERO),
        Ok(3),
        "a met condition needs no time"
    );
}

/// Dropping a signal destroys its event and frees its page; an explicit
/// destroy does the same and reports success.
#[test]
fn dropping_a_signal_releases_its_event_and_memory() {
    let sim = Sim::preset("mi210").unwrap();
    let ctx = Ctx::primary(&sim);
    let events = events(&ctx);
    // The first event brings the event page: make it before counting.
    let first = Signal::new(&events, &ctx.fmm, 0).unwrap();
    let before = kernel_objects(&sim);
    let s = Signal::new(&events, &ctx.fmm, 0).unwrap();
    assert_eq!(kernel_objects(&sim), (before.0 + 1, before.1 + 1));
    drop(s);
    assert_eq!(kernel_objects(&sim), before);
    let s = Signal::new(&events, &ctx.fmm, 0).unwrap();
    assert_eq!(events.live_count(), 2);
    s.destroy().unwrap();
    assert_eq!(kernel_objects(&sim), before);
    drop(first);
    assert_eq!(events.live_count(), 0);
}
