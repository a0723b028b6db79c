//! Two threads and one event on a simulated GPU: a wait that times out,
//! then a wait that another thread ends by setting the event.
//!
//! ```text
//! cargo run -p kfd-event --example signal            # simulated MI210
//! cargo run -p kfd-event --example signal -- navi31  # another preset
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use kfd_event::{EventDescriptor, EventType, Events, WaitOutcome};
use kfd_fmm::{Fmm, FmmOptions};
use kfd_sys::{DeviceFile, Driver};
use kfd_topology::Topology;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let preset = std::env::args().nth(1).unwrap_or_else(|| "mi210".into());
    let sim = kfd_sim::Sim::preset(&preset)?;
    let topology = Arc::new(Topology::snapshot(&sim)?);
    let driver: Arc<dyn Driver> = Arc::new(sim.clone());
    let kfd = Arc::new(DeviceFile::open_kfd(driver)?);
    // On a dGPU the event page is a GTT buffer from the memory manager.
    let fmm = Arc::new(Fmm::from_topology(
        kfd.clone(),
        &topology,
        FmmOptions::primary(),
    )?);
    let events = Events::new(kfd, Some(topology), Some(fmm));

    // A signal event, auto-reset (a successful wait consumes the set).
    let event = events.create(&EventDescriptor::new(EventType::Signal))?;
    let (page, slots) = events.event_page().ok_or("no event page")?;
    println!(
        "kfd-sim {preset}: event {} in slot {:?} of the event page at {page:#x} ({slots} slots)",
        event.id(),
        event.slot()
    );

    let t = Instant::now();
    let outcome = events.wait_one(&event, 20)?;
    println!(
        "wait with 20 ms timeout, nobody sets it: {outcome:?} after {:?}",
        ms(t)
    );
    assert_eq!(outcome, WaitOutcome::TimedOut);

    let t = Instant::now();
    let (outcome, set) = std::thread::scope(|s| {
        let setter = s.spawn(|| {
            std::thread::sleep(Duration::from_millis(50));
            println!("  setter thread: set after {:?}", ms(t));
            events.set(&event)
        });
        (events.wait_one(&event, 5000), setter.join())
    });
    set.map_err(|_| "setter thread panicked")??;
    let outcome = outcome?;
    println!(
        "wait with 5 s timeout, set by the other thread: {outcome:?} after {:?}",
        ms(t)
    );
    assert_eq!(outcome, WaitOutcome::Signaled);

    // Auto-reset: the set was consumed by the wait.
    assert_eq!(events.wait_one(&event, 0)?, WaitOutcome::TimedOut);
    events.destroy(&event)?;
    println!("destroyed; live events: {}", events.live_count());
    Ok(())
}

/// Elapsed time since `t`, rounded to milliseconds.
fn ms(t: Instant) -> Duration {
    Duration::from_millis(t.elapsed().as_millis() as u64)
}
