//! Owned AQL queues on kfd-sim: barrier packets that wait on signals,
//! batches and ring wrap-around, a full ring, queue errors and GPU memory
//! faults reported by waits, bad inputs, and the release of every kernel
//! object on drop.

mod world;

use std::time::{Duration, Instant};

use kfd_event::{Condition, EventError};
use kfd_fmm::{Buffer, MemFlags};
use kfd_gpu::samples::{fill_descriptor, FILL};
use kfd_queue::{AqlPacket, AqlQueue, KernelDispatch, QueueError};
use kfd_sys::hsa::HSA_PACKET_TYPE_AGENT_DISPATCH;
use kfd_sys::kfd;
use kfd_sys::testing::Cause;
use kfd_sys::Errno;
use world::*;
use zerocopy::IntoBytes;

impl World {
    fn queue(&self, packets: u32) -> Result<AqlQueue, QueueError> {
        let node = self.ctx.gpu_node();
        AqlQueue::new(&self.queues, &self.events, &self.ctx.fmm, node, packets)
    }
}

/// A barrier-AND packet waits until every dependency is 0; the host
/// completes them one by one; then the barrier's completion signal drops
/// from 1 to 0 and its waiter wakes.
#[test]
fn barrier_and_waits_for_every_dependency() {
    let w = World::new("mi210");
    let q = w.queue(64).unwrap();
    let (a, b, done) = (w.signal(1), w.signal(1), w.signal(1));
    let index = q
        .submit(&AqlPacket::barrier_and(&[&a, &b], Some(&done)).unwrap())
        .unwrap();
    assert_eq!(index, 0);
    assert_eq!(q.write_index().unwrap(), 1);
    a.store(0).unwrap();
    let early = q.wait(&done, Condition::Eq, 0, Duration::from_millis(100));
    assert!(
        matches!(
            early,
            Err(QueueError::Event(EventError::SignalTimeout {
                value: 1,
                ..
            }))
        ),
        "one dependency is still 1: {early:?}"
    );
    b.store(0).unwrap();
    assert_eq!(q.wait(&done, Condition::Eq, 0, LONG), Ok(0));
    assert_eq!(q.read_index().unwrap(), 1, "the packet is consumed");
    q.check().unwrap();
}

/// A barrier-OR packet completes on its first satisfied dependency.
#[test]
fn barrier_or_needs_one_dependency() {
    let w = World::new("mi300x");
    let q = w.queue(16).unwrap();
    let (a, b, done) = (w.signal(1), w.signal(1), w.signal(1));
    q.submit(&AqlPacket::barrier_or(&[&a, &b], Some(&done)).unwrap())
        .unwrap();
    b.store(0).unwrap();
    assert_eq!(q.wait(&done, Condition::Lt, 1, LONG), Ok(0));
    assert_eq!(a.load().unwrap(), 1);
}

/// A barrier-value packet waits until the masked signal value meets its
/// condition: a counter must reach 3 (its low byte, under the mask).
#[test]
fn barrier_value_waits_for_a_masked_value() {
    let w = World::new("mi210");
    let q = w.queue(16).unwrap();
    let (counter, done) = (w.signal(0), w.signal(1));
    let p = AqlPacket::barrier_value(&counter, Condition::Gte, 3, 0xff, Some(&done));
    assert_eq!(p.packet_type(), 0, "a vendor-specific packet");
    q.submit(&p).unwrap();
    for v in [1, 2, 0x100] {
        counter.store(v).unwrap();
        let r = q.wait(&done, Condition::Eq, 0, Duration::from_millis(30));
        assert_eq!(r.unwrap_err().cause(), "Event", "still waiting at {v:#x}");
    }
    counter.store(0x103).unwrap();
    assert_eq!(q.wait(&done, Condition::Eq, 0, LONG), Ok(0));
}

/// Batches go into consecutive slots and wrap around a small ring; one
/// completion signal counts every packet down.
#[test]
fn batches_wrap_around_the_ring() {
    let w = World::new("mi210");
    let q = w.queue(16).unwrap();
    let done = w.signal(42);
    let p = AqlPacket::barrier_and(&[], Some(&done)).unwrap();
    let mut next = 0;
    for n in [12, 16, 5, 9] {
        let first = q.submit_batch(&vec![p; n]).unwrap();
        assert_eq!(first, next);
        next += n as u64;
        // Wait until the batch is consumed before the next fills the ring.
        let left = 42 - next as i64;
        assert_eq!(q.wait(&done, Condition::Eq, left, LONG), Ok(left));
    }
    assert_eq!(
        (q.read_index().unwrap(), q.write_index().unwrap()),
        (42, 42)
    );
    let too_many = q.submit_batch(&[p; 17]).unwrap_err();
    assert_eq!(too_many.cause(), "BatchTooLarge");
    assert_eq!(
        q.submit_batch(&[]),
        Ok(42),
        "an empty batch reserves nothing"
    );
}

/// Four threads submit to one queue at once, through a ring much
/// smaller than their packets: every packet lands in its own slot (the
/// shared completion signal counts all 220 down) and the indices handed
/// out are 0..220 without a gap or a repeat.
#[test]
fn concurrent_producers_share_the_ring() {
    let w = World::new("mi210");
    let q = w.queue(16).unwrap();
    let done = w.signal(220);
    let p = AqlPacket::barrier_and(&[], Some(&done)).unwrap();
    let mut indices: Vec<u64> = std::thread::scope(|s| {
        let producers: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    (0..50)
                        .map(|i| {
                            if i % 10 == 0 {
                                q.submit_batch(&[p; 2]).map(|first| vec![first, first + 1])
                            } else {
                                q.submit(&p).map(|first| vec![first])
                            }
                        })
                        .collect::<Result<Vec<_>, _>>()
                })
            })
            .collect();
        producers
            .into_iter()
            .flat_map(|h| h.join().unwrap().unwrap().concat())
            .collect()
    });
    assert_eq!(q.wait(&done, Condition::Eq, 0, LONG), Ok(0));
    indices.sort_unstable();
    assert_eq!(indices, (0..220).collect::<Vec<u64>>());
    assert_eq!(q.read_index().unwrap(), 220);
}

/// A ring that stays full is an error after the submit timeout, and the
/// write index is left alone; once the GPU drains the ring, submission
/// works again.
#[test]
fn a_full_ring_is_an_error_not_a_hang() {
    let w = World::new("mi210");
    let mut q = w.queue(16).unwrap();
    q.set_submit_timeout(Duration::from_millis(50));
    let gate = w.signal(1);
    let done = w.signal(17);
    let blocked = AqlPacket::barrier_and(&[&gate], Some(&done)).unwrap();
    q.submit_batch(&[blocked; 16]).unwrap();
    let start = Instant::now();
    let full = q.submit(&blocked).unwrap_err();
    assert!(matches!(full, QueueError::RingFull { waited } if waited >= Duration::from_millis(50)));
    assert!(start.elapsed() < 5 * SECOND);
    assert_eq!(q.write_index().unwrap(), 16, "nothing reserved");
    gate.store(0).unwrap();
    assert_eq!(q.wait(&done, Condition::Eq, 1, LONG), Ok(1));
    q.submit(&blocked).unwrap();
    assert_eq!(q.wait(&done, Condition::Eq, 0, LONG), Ok(0));
}

/// A packet of a type the CP does not execute (AGENT_DISPATCH) stops the
/// queue; a wait on the packet's completion signal returns the CP's
/// error well within a second instead of timing out.
#[test]
fn an_invalid_packet_ends_the_wait_with_the_queue_error() {
    let w = World::new("mi210");
    let q = w.queue(64).unwrap();
    let done = w.signal(1);
    let mut bytes = *AqlPacket::barrier_and(&[], Some(&done)).unwrap().as_bytes();
    bytes[0] = HSA_PACKET_TYPE_AGENT_DISPATCH as u8;
    q.submit(&AqlPacket::from_bytes(bytes)).unwrap();
    let start = Instant::now();
    let r = q.wait(&done, Condition::Eq, 0, LONG);
    assert!(start.elapsed() < SECOND, "took {:?}", start.elapsed());
    assert_eq!(
        r,
        Err(QueueError::QueueStopped {
            code: 0x20,
            cause: "invalid packet format"
        })
    );
    assert_eq!(done.load().unwrap(), 1, "the packet never completed");
    assert_eq!(w.sim.live_objects().processes[0].failed_queues, 1);
    assert!(q.check().is_err());
    // Work that completed before the error is still reported as done.
    let earlier = w.signal(0);
    assert_eq!(q.wait(&earlier, Condition::Eq, 0, LONG), Ok(0));
}

/// With the runtime enabled (as ROCr 6+ does), the kernel sends a queue
/// error to the runtime instead: the exception bit in the payload the
/// queue's save area names, and that event set; the wait reports it.
#[test]
fn with_the_runtime_enabled_the_wait_reports_the_exception() {
    let w = World::new("mi210");
    let mut enable = kfd::kfd_ioctl_runtime_enable_args {
        mode_mask: kfd::KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK,
        ..Default::default()
    };
    w.ctx
        .file
        .ioctl_plain(kfd::AMDKFD_IOC_RUNTIME_ENABLE, &mut enable)
        .unwrap();
    let q = w.queue(64).unwrap();
    let done = w.signal(1);
    let mut bytes = *AqlPacket::barrier_and(&[], Some(&done)).unwrap().as_bytes();
    bytes[0] = HSA_PACKET_TYPE_AGENT_DISPATCH as u8;
    q.submit(&AqlPacket::from_bytes(bytes)).unwrap();
    let start = Instant::now();
    let r = q.wait(&done, Condition::Eq, 0, LONG);
    assert!(start.elapsed() < SECOND, "took {:?}", start.elapsed());
    assert_eq!(
        r,
        Err(QueueError::QueueException {
            mask: kfd::kfd_ec_mask(kfd::EC_QUEUE_PACKET_UNSUPPORTED),
            cause: "unsupported packet",
        })
    );
}

/// Offset of the kernel descriptor in the code buffer (the code is at 0).
const DESCRIPTOR: u64 = 256;

/// A host buffer mapped to the GPUs.
fn gpu_buffer(w: &World, size: u64) -> Buffer {
    let flags = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
    let b = w.ctx.fmm.alloc_buffer(0, size, 0, flags).unwrap();
    b.map().unwrap();
    b
}

/// A code buffer holding kfd-gpu's [`FILL`] sample and, at
/// [`DESCRIPTOR`], its code-object v3 kernel descriptor.
fn fill_kernel(w: &World) -> Buffer {
    let b = gpu_buffer(w, 4096);
    let words: Vec<u8> = FILL.iter().flat_map(|c| c.to_le_bytes()).collect();
    b.write(0, &words).unwrap();
    b.write(DESCRIPTOR, fill_descriptor(-(DESCRIPTOR as i64)).as_bytes())
        .unwrap();
    b
}

/// A dispatch runs its kernel: every work-item's id lands in the output
/// buffer, then the completion signal drops to 0.
#[test]
fn a_kernel_dispatch_runs_and_completes() {
    let w = World::new("mi210");
    let q = w.queue(64).unwrap();
    let code = fill_kernel(&w);
    let (args, out) = (gpu_buffer(&w, 4096), gpu_buffer(&w, 4096));
    args.write(0, &out.addr().to_le_bytes()).unwrap();
    let done = w.signal(1);
    let p = KernelDispatch::new(&code, DESCRIPTOR)
        .unwrap()
        .size(&[256], &[64])
        .unwrap()
        .kernargs(&args)
        .completion(&done)
        .build();
    q.submit(&p).unwrap();
    assert_eq!(q.wait(&done, Condition::Eq, 0, LONG), Ok(0));
    let mut got = [0u8; 256 * 4];
    out.read(0, &mut got).unwrap();
    for (i, v) in got.chunks_exact(4).enumerate() {
        assert_eq!(u32::from_le_bytes(v.try_into().unwrap()), i as u32);
    }
}

/// A kernel that stores through a pointer to unmapped memory faults on
/// the GPU: the wait returns the memory fault, with the page, within a
/// second.
#[test]
fn a_faulting_dispatch_ends_the_wait_with_the_memory_fault() {
    let w = World::new("mi210");
    let q = w.queue(64).unwrap();
    let code = fill_kernel(&w);
    let args = gpu_buffer(&w, 4096);
    // Memory the GPU has not mapped: a buffer freed again.
    let gone = gpu_buffer(&w, 1 << 20);
    let nowhere = gone.addr() + 0x1000;
    drop(gone);
    args.write(0, &nowhere.to_le_bytes()).unwrap();
    let done = w.signal(1);
    let p = KernelDispatch::new(&code, DESCRIPTOR)
        .unwrap()
        .size(&[64], &[64])
        .unwrap()
        .kernargs(&args)
        .completion(&done)
        .build();
    q.submit(&p).unwrap();
    let start = Instant::now();
    let r = q.wait(&done, Condition::Eq, 0, LONG);
    assert!(start.elapsed() < SECOND, "took {:?}", start.elapsed());
    assert_eq!(
        r,
        Err(QueueError::MemoryFault {
            node_id: w.ctx.gpu_node(),
            address: nowhere,
        })
    );
}

/// A queue stopped by a GPU fault consumes nothing more: a producer
/// waiting for room in its full ring gets the fault within a second, not
/// `RingFull` after the submit timeout.
#[test]
fn a_submission_into_a_faulted_queue_returns_the_fault() {
    let w = World::new("mi210");
    let q = w.queue(16).unwrap();
    let code = fill_kernel(&w);
    let args = gpu_buffer(&w, 4096);
    let gone = gpu_buffer(&w, 1 << 20);
    let nowhere = gone.addr() + 0x1000;
    drop(gone);
    args.write(0, &nowhere.to_le_bytes()).unwrap();
    let faulting = KernelDispatch::new(&code, DESCRIPTOR)
        .unwrap()
        .size(&[64], &[64])
        .unwrap()
        .kernargs(&args)
        .build();
    let start = Instant::now();
    let e = loop {
        if let Err(e) = q.submit(&faulting) {
            break e;
        }
        assert!(start.elapsed() < 5 * SECOND, "the ring never filled");
    };
    assert!(start.elapsed() < SECOND, "took {:?}", start.elapsed());
    assert_eq!(
        e,
        QueueError::MemoryFault {
            node_id: w.ctx.gpu_node(),
            address: nowhere,
        }
    );
}

/// A fault on one GPU stops that GPU's queue; a queue of another GPU of
/// the process keeps working and its waits report nothing.
#[test]
fn a_memory_fault_stops_only_the_queues_of_its_gpu() {
    let w = World::new("mi300x");
    let gpus: Vec<u32> = w.ctx.topology.gpu_nodes().map(|n| n.id).collect();
    assert!(gpus.len() >= 2, "mi300x has several GPUs");
    let on = |node| AqlQueue::new(&w.queues, &w.events, &w.ctx.fmm, node, 64).unwrap();
    let (faulting, other) = (on(gpus[0]), on(gpus[1]));
    let code = fill_kernel(&w);
    let args = gpu_buffer(&w, 4096);
    let gone = gpu_buffer(&w, 1 << 20);
    let nowhere = gone.addr();
    drop(gone);
    args.write(0, &nowhere.to_le_bytes()).unwrap();
    let done = w.signal(1);
    let p = KernelDispatch::new(&code, DESCRIPTOR)
        .unwrap()
        .size(&[64], &[64])
        .unwrap()
        .kernargs(&args)
        .completion(&done)
        .build();
    faulting.submit(&p).unwrap();
    let r = faulting.wait(&done, Condition::Eq, 0, LONG);
    assert_eq!(r.unwrap_err().cause(), "MemoryFault");
    // The other GPU's queue saw the same memory event fire, and ignores it.
    let (gate, passed) = (w.signal(1), w.signal(1));
    other
        .submit(&AqlPacket::barrier_and(&[&gate], Some(&passed)).unwrap())
        .unwrap();
    let early = other.wait(&passed, Condition::Eq, 0, Duration::from_millis(50));
    assert_eq!(early.unwrap_err().cause(), "Event", "a timeout");
    gate.store(0).unwrap();
    assert_eq!(other.wait(&passed, Condition::Eq, 0, LONG), Ok(0));
    other.check().unwrap();
}

#[test]
fn bad_inputs_are_errors() {
    let w = World::new("mi210");
    for n in [0, 3, 8, 100, 1 << 26] {
        assert_eq!(
            w.queue(n).unwrap_err(),
            QueueError::InvalidPacketCount(n),
            "{n}"
        );
    }
    let s = w.signal(1);
    let six = [&s, &s, &s, &s, &s, &s];
    assert_eq!(
        AqlPacket::barrier_and(&six, None).unwrap_err(),
        QueueError::TooManyDependencies(6)
    );
    assert!(AqlPacket::barrier_or(&six[..5], None).is_ok());
    let code = gpu_buffer(&w, 4096);
    for off in [8, 4096 - 32, u64::MAX - 8] {
        assert_eq!(
            KernelDispatch::new(&code, off).unwrap_err().cause(),
            "BadKernelObject",
            "{off:#x}"
        );
    }
    let d = KernelDispatch::new(&code, 0).unwrap();
    for (grid, wg) in [
        (&[][..], &[][..]),
        (&[64, 1][..], &[64][..]),
        (&[0][..], &[1][..]),
        (&[64][..], &[0][..]),
        (&[64, 64][..], &[64, 32][..]),
        (&[1, 1, 1, 1][..], &[1, 1, 1, 1][..]),
    ] {
        assert_eq!(
            d.size(grid, wg).unwrap_err().cause(),
            "BadDispatchSize",
            "{grid:?} {wg:?}"
        );
    }
    let p = d.size(&[64, 4, 2], &[16, 4, 2]).unwrap().build();
    assert_eq!(p.packet_type(), 2);
    assert_eq!(p.header_word() >> 16, 3, "three dimensions in the setup");
    assert_eq!(p.with_barrier(true).header() >> 8 & 1, 1);
    assert_eq!(p.with_barrier(true).with_barrier(false), p);
}

/// Dropping a queue destroys it and frees its ring and control page, its
/// inactive signal and memory event; dropping signals releases their
/// events and pages: the simulator's object counts return to where they
/// were.
#[test]
fn dropping_queues_and_signals_releases_the_kernel_objects() {
    let w = World::new("mi210");
    // The event page and the doorbell page come with the first event and
    // queue and stay: make them before counting.
    drop(w.queue(16).unwrap());
    let before = w.kernel_objects();
    let q = w.queue(16).unwrap();
    let (dep, done) = (w.signal(0), w.signal(1));
    let (bos, queues, events) = w.kernel_objects();
    assert_eq!(queues, before.1 + 1);
    assert_eq!(
        events,
        before.2 + 4,
        "inactive signal, memory event, two signals"
    );
    assert!(
        bos > before.0 + 2,
        "ring, control page, signals, queue buffers"
    );
    q.submit(&AqlPacket::barrier_and(&[&dep], Some(&done)).unwrap())
        .unwrap();
    assert_eq!(q.wait(&done, Condition::Eq, 0, LONG), Ok(0));
    drop(q);
    drop((dep, done));
    assert_eq!(w.kernel_objects(), before);
    assert_eq!(w.queues.live_count(), 0);
    assert_eq!(w.events.live_count(), 0);
    // The explicit form reports success and releases the same.
    let q = w.queue(16).unwrap();
    q.destroy().unwrap();
    assert_eq!(w.kernel_objects(), before);
}

// The example, as a module: its `main` runs under `cargo run` only.
#[allow(dead_code)]
#[path = "../examples/barrier.rs"]
mod barrier_example;

/// The `barrier` example's flow on two dGPU generations, an APU and a
/// gfx11 GPU: the barrier
/// holds while its dependency is 1, completes once the host sets it to
/// 0, and nothing is left after the drop.
#[test]
fn the_barrier_example_runs() {
    for preset in ["mi210", "mi300x", "apu", "navi31"] {
        let report = barrier_example::barrier_demo(preset).unwrap();
        assert_eq!(
            report,
            barrier_example::Report {
                while_blocked: 1,
                completed: 0,
                consumed: 1,
                left: (0, 0),
            },
            "{preset}"
        );
    }
}

/// A destroy the kernel refuses is reported by `destroy`; the drop that
/// follows tries again. When the drop is refused too, the queue stays
/// with the kernel and the ring and control page stay allocated (the
/// GPU may still read them) until the sub-contexts' teardown.
#[test]
fn a_refused_destroy_is_reported_and_keeps_the_queue_memory() {
    let w = World::new("mi210");
    drop(w.queue(16).unwrap());
    let before = w.kernel_objects();
    let q = w.queue(16).unwrap();
    let with_queue = w.kernel_objects();
    w.sim.inject_fault("DESTROY_QUEUE", 1, Errno::EBUSY);
    let e = q.destroy().unwrap_err();
    assert!(
        matches!(
            e,
            QueueError::Kernel {
                errno: Errno::EBUSY,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(w.kernel_objects(), before, "the drop destroyed it");

    let q = w.queue(16).unwrap();
    w.sim.inject_fault("DESTROY_QUEUE", 3, Errno::EBUSY);
    drop(q);
    let (bos, queues, events) = w.kernel_objects();
    assert_eq!(queues, with_queue.1, "the kernel keeps the queue");
    assert!(bos > before.0, "its buffers stay");
    assert_eq!(events, before.2, "its signal and event are gone");
    // The teardown destroys the queue and frees the buffers the queue
    // sub-context allocated, and the doorbell page (-1); the ring and the
    // control page are held until the memory manager's teardown (+2).
    w.queues.teardown();
    let (bos, queues, _) = w.kernel_objects();
    assert_eq!((bos, queues), (before.0 - 1 + 2, before.1));
}
