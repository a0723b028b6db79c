//! What the owned-queue tests share: a context's queue and event
//! sub-contexts over the simulator, signals, and the process's kernel
//! objects.

#[path = "../../../kfd-event/tests/common/mod.rs"]
pub mod common;

use std::sync::Arc;
use std::time::Duration;

use common::Ctx;
use kfd_event::{Events, Signal};
use kfd_queue::Queues;
use kfd_sim::Sim;

/// A second: what a wake by interrupt must beat.
pub const SECOND: Duration = Duration::from_secs(1);
/// A timeout no passing test comes near.
pub const LONG: Duration = Duration::from_secs(20);

/// A context's queue and event sub-contexts over the simulator.
pub struct World {
    pub sim: Sim,
    pub ctx: Ctx,
    pub queues: Arc<Queues>,
    pub events: Arc<Events>,
}

impl World {
    pub fn new(preset: &str) -> World {
        let sim = Sim::preset(preset).unwrap();
        let ctx = Ctx::primary(&sim);
        let queues = Arc::new(Queues::new(
            ctx.file.clone(),
            ctx.topology.clone(),
            ctx.fmm.clone(),
        ));
        let events = Arc::new(Events::new(
            ctx.file.clone(),
            Some(ctx.topology.clone()),
            Some(ctx.fmm.clone()),
        ));
        World {
            sim,
            ctx,
            queues,
            events,
        }
    }

    pub fn signal(&self, value: i64) -> Signal {
        Signal::new(&self.events, &self.ctx.fmm, value).unwrap()
    }

    /// (buffer objects, queues, events) of the simulated process.
    pub fn kernel_objects(&self) -> (usize, usize, usize) {
        let s = self.sim.live_objects();
        let p = &s.processes[0];
        (p.bos, p.queues, p.events)
    }
}
