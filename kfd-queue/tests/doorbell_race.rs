//! `ring_doorbell` racing context teardown: a thread rings a queue's
//! doorbell in a loop while another thread tears the queues down (as
//! kfd-context's `Inner::drop` does while callers still hold the
//! `Arc<Queues>`). The store must never reach an unmapped doorbell page:
//! before the fix this test died of SIGSEGV within a few hundred rounds.
//! Its own test binary, so that a crash is reported as this test failing.

#[path = "../../kfd-event/tests/common/mod.rs"]
mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

use common::*;
use kfd_fmm::ExecAlloc;
use kfd_queue::{QueueError, QueueKind, QueueRequest, Queues};
use kfd_sim::Sim;

const RING: u64 = 64 * 1024;
const ROUNDS: usize = 300;

fn race(preset: &str) {
    let sim = Sim::preset(preset).unwrap();
    let ctx = Ctx::primary(&sim);
    let node = ctx.gpu_node();
    let ring = ctx
        .fmm
        .alloc_exec(&ExecAlloc {
            size: RING,
            node_id: node,
            non_paged: true,
            device_local: false,
            uncached: false,
        })
        .unwrap();
    for round in 0..ROUNDS {
        let qs = Arc::new(Queues::new(
            ctx.file.clone(),
            ctx.topology.clone(),
            ctx.fmm.clone(),
        ));
        let q = qs
            .create(&QueueRequest::new(
                node,
                QueueKind::Compute,
                ring.addr(),
                RING,
            ))
            .unwrap();
        let start = Arc::new(Barrier::new(2));
        let torn_down = Arc::new(AtomicBool::new(false));
        let ringer = {
            let (qs, q, start) = (qs.clone(), q.clone(), start.clone());
            let torn_down = torn_down.clone();
            std::thread::spawn(move || {
                start.wait();
                let mut late = 0usize;
                loop {
                    let was_down = torn_down.load(Ordering::SeqCst);
                    match qs.ring_doorbell(&q, round as u64) {
                        Ok(()) => late += usize::from(was_down),
                        Err(e) => return (e, late),
                    }
                }
            })
        };
        start.wait();
        // Let the ringer get going, then pull the pages from under it.
        std::thread::yield_now();
        qs.teardown();
        torn_down.store(true, Ordering::SeqCst);
        let (err, late) = ringer.join().expect("ringer thread");
        assert_eq!(err, QueueError::UnknownQueue(q.id().raw()), "{preset}");
        // Once teardown has returned, no store may succeed.
        assert_eq!(late, 0, "{preset}: rang a torn-down queue");
        assert_eq!(qs.live_count(), 0);
        assert_eq!(qs.doorbell_page(node), None);
    }
    drop(ring);
    drop(ctx);
    assert_no_leaks(&sim);
}

/// The plain-mmap doorbell page (APU: the KFD descriptor mapped directly).
#[test]
fn ring_races_teardown_on_a_mapped_doorbell_page() {
    race("apu");
}

/// The memory manager's doorbell buffer (dGPU).
#[test]
fn ring_races_teardown_on_a_gpuvm_doorbell_page() {
    race("mi210");
}
