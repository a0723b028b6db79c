//! Submits GPU work from safe Rust on a simulated GPU: an AQL barrier-AND
//! packet that depends on a signal. The barrier waits on the GPU until
//! the host completes the dependency; the host then sleeps on the
//! barrier's completion signal until the GPU completes it.
//!
//! ```text
//! cargo run -p kfd-queue --example barrier            # simulated MI210 (gfx90a)
//! cargo run -p kfd-queue --example barrier -- mi300x  # gfx942
//! ```
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use kfd_event::{Condition, EventError, Events, Signal};
use kfd_fmm::{Fmm, FmmOptions};
use kfd_queue::{AqlPacket, AqlQueue, QueueError, Queues};
use kfd_sys::{DeviceFile, Driver};
use kfd_topology::Topology;

/// What happened, for the test that runs the same flow.
#[derive(Debug, PartialEq, Eq)]
pub struct Report {
    /// The completion signal's value while the dependency was pending.
    pub while_blocked: i64,
    /// Its value once the wait returned.
    pub completed: i64,
    /// Packets the GPU consumed.
    pub consumed: u64,
    /// Queues and events left once everything was dropped.
    pub left: (usize, usize),
}

/// The whole flow on simulator preset `preset`, printing each step.
pub fn barrier_demo(preset: &str) -> Result<Report, Box<dyn std::error::Error>> {
    let sim = kfd_sim::Sim::preset(preset)?;
    let topology = Arc::new(Topology::snapshot(&sim)?);
    let driver: Arc<dyn Driver> = Arc::new(sim.clone());
    let kfd = Arc::new(DeviceFile::open_kfd(driver)?);
    let fmm = Arc::new(Fmm::from_topology(
        kfd.clone(),
        &topology,
        FmmOptions::primary(),
    )?);
    let queues = Arc::new(Queues::new(kfd.clone(), topology.clone(), fmm.clone()));
    let events = Arc::new(Events::new(kfd, Some(topology.clone()), Some(fmm.clone())));

    let gpu = topology.gpu_nodes().next().ok_or("preset has no GPU")?;
    let isa = gpu.isa_version().map(|v| v.name()).unwrap_or_default();
    println!("kfd-sim {preset}: node {} ({isa})", gpu.id);

    let queue = AqlQueue::new(&queues, &events, &fmm, gpu.id, 64)?;
    let dependency = Signal::new(&events, &fmm, 1)?;
    let done = Signal::new(&events, &fmm, 1)?;
    println!(
        "AQL queue {:#x}: {} packets; signals: dependency = 1, done = 1",
        queue.queue().id().raw(),
        queue.packets()
    );

    let barrier = AqlPacket::barrier_and(&[&dependency], Some(&done))?;
    let index = queue.submit(&barrier)?;
    println!("submitted barrier-AND #{index} (waits for dependency == 0, then decrements done)");

    // The GPU cannot complete the barrier yet: a short wait times out.
    let while_blocked = match queue.wait(&done, Condition::Eq, 0, Duration::from_millis(100)) {
        Err(QueueError::Event(EventError::SignalTimeout { value, waited })) => {
            println!(
                "after {waited:?}: done = {value}, read index {}: the barrier waits",
                queue.read_index()?
            );
            value
        }
        other => return Err(format!("the barrier did not wait: {other:?}").into()),
    };

    let start = Instant::now();
    dependency.store(0)?;
    println!("host: dependency = 0");
    let completed = queue.wait(&done, Condition::Eq, 0, Duration::from_secs(10))?;
    let consumed = queue.read_index()?;
    println!(
        "done = {completed} after {:?}: the GPU completed the barrier (read index {consumed})",
        start.elapsed()
    );

    drop((queue, dependency, done));
    let left = (queues.live_count(), events.live_count());
    println!("dropped: {} queues, {} events left", left.0, left.1);
    Ok(Report {
        while_blocked,
        completed,
        consumed,
        left,
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let preset = std::env::args().nth(1).unwrap_or_else(|| "mi210".into());
    barrier_demo(&preset).map(|_| ())
}
