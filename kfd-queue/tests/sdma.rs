//! Owned SDMA queues on kfd-sim: copies host -> VRAM -> host of several
//! sizes (beyond one packet, across the ring's end), fills, writes,
//! signals completed by the engine, a GPU fault reported by a wait, bad
//! inputs, and the release of every kernel object on drop.

mod world;

use std::sync::Arc;
use std::time::{Duration, Instant};

use kfd_event::Condition;
use kfd_fmm::{Buffer, MemFlags};
use kfd_queue::{QueueError, QueueOptions, QueueRules, Queues, SdmaEngine, SdmaQueue};
use kfd_sys::packet::{CompareFunction, Dwords, PacketError};
use kfd_sys::sdma::{SDMA_NOP_COUNT_SHIFT, SDMA_PKT_COPY_LINEAR, SDMA_PKT_POLL_REGMEM};
use kfd_sys::testing::Cause;
use world::*;

impl World {
    fn queue(&self, engine: SdmaEngine, ring_bytes: u64) -> Result<SdmaQueue, QueueError> {
        let node = self.ctx.gpu_node();
        SdmaQueue::new(
            &self.queues,
            &self.events,
            &self.ctx.fmm,
            node,
            engine,
            ring_bytes,
        )
    }

    /// Pinned host memory mapped to the GPUs (`size` rounded up to
    /// pages).
    fn host(&self, size: u64) -> Buffer {
        let flags = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
        let size = size.next_multiple_of(4096);
        let b = self.ctx.fmm.alloc_buffer(0, size, 0, flags).unwrap();
        b.map().unwrap();
        b
    }

    /// VRAM of the first GPU without host access (`size` rounded up to
    /// pages); mapped to the GPUs when `map`.
    fn vram(&self, size: u64, map: bool) -> Buffer {
        let node = self.ctx.gpu_node();
        let size = size.next_multiple_of(4096);
        let b = self
            .ctx
            .fmm
            .alloc_buffer(node, size, 0, MemFlags::NON_PAGED)
            .unwrap();
        assert!(!b.is_cpu_accessible());
        if map {
            b.map().unwrap();
        }
        b
    }
}

/// A pattern that differs at every offset of a copy piece.
fn pattern(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 13) as u8)
        .collect()
}

/// Copies `len` bytes host -> VRAM -> host through `q` and completes
/// `done` (1 -> 0); returns what came back.
fn round_trip(w: &World, q: &SdmaQueue, len: u64, seed: u32) -> (Vec<u8>, Vec<u8>) {
    let sent = pattern(len as usize, seed);
    let (src, dst) = (w.host(len), w.host(len));
    let vram = w.vram(len, true);
    src.write(0, &sent).unwrap();
    let done = w.signal(1);
    q.copy(vram.addr(), src.addr(), len).unwrap();
    q.copy(dst.addr(), vram.addr(), len).unwrap();
    q.signal(&done).unwrap();
    assert_eq!(q.wait(&done, Condition::Eq, 0, LONG), Ok(0), "{len} bytes");
    let mut back = vec![0u8; len as usize];
    dst.read(0, &mut back).unwrap();
    (sent, back)
}

/// Copies of several sizes, odd ones included, come back byte for byte
/// on a gfx90a and a gfx942; the read pointer catches up with the write
/// pointer.
#[test]
fn copies_round_trip_through_vram() {
    for preset in ["mi210", "mi300x"] {
        let w = World::new(preset);
        let q = w.queue(SdmaEngine::Any, 4096).unwrap();
        assert_eq!(q.max_copy_bytes(), 1 << 30, "{preset}: 30-bit count");
        for (i, len) in [1u64, 3, 4096, 65_537, 1 << 20].into_iter().enumerate() {
            let (sent, back) = round_trip(&w, &q, len, i as u32);
            assert!(sent == back, "{preset}: {len} bytes differ");
        }
        // The signal's value drops before its FENCE and TRAP are read.
        let end = q.write_pointer().unwrap();
        let start = Instant::now();
        while q.read_pointer().unwrap() != end {
            assert!(start.elapsed() < SECOND, "{preset}: read pointer stuck");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// On the APU's gfx902 one COPY_LINEAR moves at most 4 MiB: a copy of
/// two packets and a bit is split into three, and arrives whole.
#[test]
fn a_copy_beyond_one_packet_is_split() {
    let w = World::new("apu");
    let q = w.queue(SdmaEngine::Any, 4096).unwrap();
    assert_eq!(q.max_copy_bytes(), 4 << 20, "22-bit count");
    let before = q.write_pointer().unwrap();
    let len = 2 * (4 << 20) + 12_345;
    let (sent, back) = round_trip(&w, &q, len, 7);
    assert!(sent == back, "{len} bytes differ");
    // Two copies of three packets each and the signal's 14 dwords.
    let packets = 2 * 3 * SDMA_PKT_COPY_LINEAR::DWORDS as u64 * 4;
    assert_eq!(q.write_pointer().unwrap() - before, packets + 14 * 4);
}

/// Many submissions go round a 1 KiB ring several times; a packet that
/// does not fit before the ring's end starts at 0 after NOP padding, and
/// every copy still arrives.
#[test]
fn submissions_wrap_around_the_ring() {
    let w = World::new("mi210");
    let q = w.queue(SdmaEngine::Any, 1024).unwrap();
    // A NOP that leaves 16 bytes before the end: the next COPY_LINEAR
    // (28 bytes) moves to the start, after 16 bytes of padding.
    let nop_dwords = (1024 - 16) / 4;
    let nop = [
        vec![(nop_dwords - 1) << SDMA_NOP_COUNT_SHIFT],
        vec![0; nop_dwords as usize - 1],
    ]
    .concat();
    assert_eq!(q.submit(&nop).unwrap(), 1024 - 16);
    let (src, dst) = (w.host(4096), w.host(4096));
    src.write(0, &pattern(4096, 1)).unwrap();
    assert_eq!(q.copy(dst.addr(), src.addr(), 64).unwrap(), 1024 + 28);
    let done = w.signal(200);
    for i in 0..200u64 {
        q.copy(dst.addr() + 64 + i * 16, src.addr() + 64 + i * 16, 16)
            .unwrap();
        q.signal(&done).unwrap();
    }
    assert_eq!(q.wait(&done, Condition::Eq, 0, LONG), Ok(0));
    assert!(
        q.write_pointer().unwrap() > 10 * 1024,
        "went round the ring"
    );
    let mut back = vec![0u8; 64 + 200 * 16];
    dst.read(0, &mut back).unwrap();
    assert!(back == pattern(4096, 1)[..back.len()]);
}

/// Four threads submit copies and signals to one queue at once: the
/// lock keeps every packet whole while the ring wraps many times, and
/// every byte arrives.
#[test]
fn concurrent_producers_share_the_ring() {
    let w = World::new("mi300x");
    let q = Arc::new(w.queue(SdmaEngine::Any, 1024).unwrap());
    let len = 64 << 10;
    let (src, dst) = (w.host(len), w.host(len));
    src.write(0, &pattern(len as usize, 9)).unwrap();
    let done = Arc::new(w.signal(256));
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let (q, done) = (q.clone(), done.clone());
            let (src, dst) = (src.addr(), dst.addr());
            std::thread::spawn(move || {
                for i in 0..64 {
                    let at = (t * 64 + i) * 256;
                    q.copy(dst + at, src + at, 256).unwrap();
                    q.signal(&done).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(q.wait(&done, Condition::Eq, 0, LONG), Ok(0));
    assert!(q.write_pointer().unwrap() > 20 * 1024, "wrapped many times");
    let mut back = vec![0u8; len as usize];
    dst.read(0, &mut back).unwrap();
    assert!(back == pattern(len as usize, 9));
}

/// With the 5.2.3 library's rules the queue's pointer page is paged
/// system memory rather than pinned GTT; the queue works the same.
#[test]
fn a_paged_pointer_page_works_too() {
    let w = World::new("mi210");
    let rules = QueueRules {
        pinned_queue_page: false,
        ..QueueRules::default()
    };
    let options = QueueOptions {
        rules,
        ..QueueOptions::default()
    };
    let queues = Arc::new(Queues::with_options(
        w.ctx.file.clone(),
        w.ctx.topology.clone(),
        w.ctx.fmm.clone(),
        options,
    ));
    let node = w.ctx.gpu_node();
    let q = SdmaQueue::new(&queues, &w.events, &w.ctx.fmm, node, SdmaEngine::Any, 4096).unwrap();
    let (sent, back) = round_trip(&w, &q, 10_000, 3);
    assert!(sent == back);
}

/// A fill writes its dword everywhere it should and nowhere else; a
/// write lands its dwords.
#[test]
fn fill_and_write_land_in_vram() {
    for preset in ["mi210", "apu"] {
        let w = World::new(preset);
        let q = w.queue(SdmaEngine::Any, 4096).unwrap();
        let len = 64 << 10;
        let vram = w.vram(len, true);
        let back = w.host(len);
        let done = w.signal(1);
        q.fill(vram.addr(), 0, len).unwrap();
        q.fill(vram.addr() + 4096, 0xa5a5_0102, 8192).unwrap();
        // A write of more dwords than one WRITE packet holds (a quarter
        // of the ring): several packets.
        let data: Vec<u32> = (0..1000).map(|i| i * 3 + 1).collect();
        q.write(vram.addr() + (32 << 10), &data).unwrap();
        q.copy(back.addr(), vram.addr(), len).unwrap();
        q.signal(&done).unwrap();
        assert_eq!(q.wait(&done, Condition::Eq, 0, LONG), Ok(0));
        let mut got = vec![0u8; len as usize];
        back.read(0, &mut got).unwrap();
        let dword = |at: usize| u32::from_ne_bytes(got[at..at + 4].try_into().unwrap());
        for at in (0..len as usize).step_by(4) {
            let want = if (4096..12288).contains(&at) {
                0xa5a5_0102
            } else if ((32 << 10)..(32 << 10) + 4000).contains(&at) {
                data[(at - (32 << 10)) / 4]
            } else {
                0
            };
            assert_eq!(dword(at), want, "{preset}: offset {at}");
        }
    }
}

/// A waiter sleeping on a signal is woken by the engine's TRAP: the
/// queue is held by a POLL_REGMEM on a host word, the waiter sleeps, the
/// host opens the gate, and the waiter returns at once with the
/// decremented value; the event id is in the signal's mailbox path.
#[test]
fn a_completion_signal_wakes_a_sleeping_waiter() {
    let w = World::new("mi210");
    let q = Arc::new(w.queue(SdmaEngine::Id(0), 4096).unwrap());
    let gate = w.host(4096);
    let done = Arc::new(w.signal(5));
    let poll = SDMA_PKT_POLL_REGMEM::memory(gate.addr(), 1, !0, CompareFunction::Equal);
    q.submit(poll.dwords()).unwrap();
    q.signal(&done).unwrap();
    let waiter = {
        let (q, done) = (q.clone(), done.clone());
        std::thread::spawn(move || {
            let r = q.wait(&done, Condition::Lt, 5, LONG);
            (r, Instant::now())
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    assert!(!waiter.is_finished(), "the gate holds the signal");
    assert_eq!(done.load().unwrap(), 5);
    let opened = Instant::now();
    gate.write(0, &1u32.to_ne_bytes()).unwrap();
    let (r, woke) = waiter.join().unwrap();
    assert_eq!(r, Ok(4));
    assert!(
        woke - opened < SECOND,
        "woken by the interrupt, not a timeout: {:?}",
        woke - opened
    );
}

/// A copy into VRAM that is not mapped to the GPU faults; the wait on the
/// signal behind it returns the memory fault, with the page, within a
/// second.
#[test]
fn a_copy_into_unmapped_vram_ends_the_wait_with_the_fault() {
    for preset in ["mi210", "mi300x"] {
        let w = World::new(preset);
        let q = w.queue(SdmaEngine::Any, 4096).unwrap();
        let src = w.host(8192);
        let unmapped = w.vram(8192, false);
        let done = w.signal(1);
        q.copy(unmapped.addr(), src.addr(), 8192).unwrap();
        q.signal(&done).unwrap();
        let start = Instant::now();
        let r = q.wait(&done, Condition::Eq, 0, LONG);
        assert!(start.elapsed() < SECOND, "took {:?}", start.elapsed());
        assert_eq!(
            r,
            Err(QueueError::MemoryFault {
                node_id: w.ctx.gpu_node(),
                address: unmapped.addr(),
            }),
            "{preset}"
        );
        assert_eq!(done.load().unwrap(), 1, "the signal was never completed");
        assert!(q.check().is_err());
    }
}

/// Submissions into a queue a fault stopped fill its ring; the one that
/// finds no room returns the fault at once instead of waiting out the
/// submit timeout (10 s) for a ring that never drains.
#[test]
fn a_submission_into_a_faulted_queue_returns_the_fault() {
    let w = World::new("mi210");
    let q = w.queue(SdmaEngine::Any, 1024).unwrap();
    let src = w.host(4096);
    let unmapped = w.vram(4096, false);
    let start = Instant::now();
    let e = loop {
        if let Err(e) = q.copy(unmapped.addr(), src.addr(), 64) {
            break e;
        }
        assert!(start.elapsed() < 5 * SECOND, "the ring never filled");
    };
    assert!(start.elapsed() < SECOND, "took {:?}", start.elapsed());
    assert_eq!(
        e,
        QueueError::MemoryFault {
            node_id: w.ctx.gpu_node(),
            address: unmapped.addr(),
        }
    );
    assert_eq!(q.read_pointer().unwrap(), 0, "the first copy faulted");
}

/// Every engine choice makes a working queue (xGMI on the preset with
/// xGMI engines).
#[test]
fn every_engine_choice_copies() {
    let w = World::new("mi300x");
    let p = &w.ctx.topology.node(w.ctx.gpu_node()).unwrap().properties;
    assert!(p.num_sdma_xgmi_engines > 0);
    let last = p.num_sdma_engines + p.num_sdma_xgmi_engines - 1;
    for engine in [SdmaEngine::Any, SdmaEngine::Xgmi, SdmaEngine::Id(last)] {
        let q = w.queue(engine, 4096).unwrap();
        let (sent, back) = round_trip(&w, &q, 5000, last);
        assert!(sent == back, "{engine:?}");
    }
}

#[test]
fn bad_inputs_are_errors() {
    let w = World::new("mi210");
    for n in [0, 512, 3000, 4097, 1 << 32] {
        assert_eq!(
            w.queue(SdmaEngine::Any, n).unwrap_err(),
            QueueError::InvalidSdmaRingSize(n),
            "{n}"
        );
    }
    let p = &w.ctx.topology.node(w.ctx.gpu_node()).unwrap().properties;
    let engines = p.num_sdma_engines + p.num_sdma_xgmi_engines;
    assert_eq!(
        w.queue(SdmaEngine::Id(engines), 4096).unwrap_err().cause(),
        "Kernel",
        "no such engine"
    );
    let q = w.queue(SdmaEngine::Any, 1024).unwrap();
    let (host_a, host_b) = (w.host(4096), w.host(4096));
    let (a, b) = (host_a.addr(), host_b.addr());
    let range = |e: QueueError| matches!(e, QueueError::Packet(PacketError::Range { .. }));
    assert!(range(q.copy(a, b, 0).unwrap_err()), "zero-length copy");
    assert!(range(q.write(a, &[]).unwrap_err()), "empty write");
    assert!(range(q.copy(u64::MAX - 8, b, 16).unwrap_err()), "past 2^64");
    assert_eq!(
        q.fill(a + 2, 7, 64).unwrap_err(),
        QueueError::Packet(PacketError::Misaligned {
            packet: "CONST_FILL",
            field: "destination address",
            value: a + 2,
            align: 4,
        })
    );
    assert_eq!(
        q.fill(a, 7, 63).unwrap_err(),
        QueueError::Packet(PacketError::Misaligned {
            packet: "CONST_FILL",
            field: "byte count",
            value: 63,
            align: 4,
        })
    );
    assert!(matches!(
        q.write(a + 1, &[1]).unwrap_err(),
        QueueError::Packet(PacketError::Misaligned { .. })
    ));
    // Dwords that are not whole packets, or of an unknown op.
    let copy = SDMA_PKT_COPY_LINEAR::new(a, b, 16, (1 << 22) - 1).unwrap();
    assert!(matches!(
        q.submit(&copy.dwords()[..5]).unwrap_err(),
        QueueError::Packet(PacketError::Truncated {
            need: 7,
            got: 5,
            ..
        })
    ));
    assert!(matches!(
        q.submit(&[0xff]).unwrap_err(),
        QueueError::Packet(PacketError::UnknownSdma { op: 0xff, .. })
    ));
    // A packet as long as the ring.
    let nop = [vec![255 << SDMA_NOP_COUNT_SHIFT], vec![0; 255]].concat();
    assert_eq!(
        q.submit(&nop).unwrap_err(),
        QueueError::SdmaPacketTooLarge {
            bytes: 1024,
            ring: 1024
        }
    );
    assert_eq!(q.write_pointer().unwrap(), 0, "nothing was submitted");
}

/// A ring the engine cannot drain (a POLL_REGMEM that never passes) is
/// an error after the submit timeout, not a hang.
#[test]
fn a_full_ring_is_an_error_not_a_hang() {
    let w = World::new("mi210");
    let mut q = w.queue(SdmaEngine::Any, 1024).unwrap();
    q.set_submit_timeout(Duration::from_millis(50));
    let gate = w.host(4096);
    let poll = SDMA_PKT_POLL_REGMEM::memory(gate.addr(), 1, !0, CompareFunction::Equal);
    q.submit(poll.dwords()).unwrap();
    let (src, dst) = (w.host(4096), w.host(4096));
    let (a, b) = (dst.addr(), src.addr());
    let start = Instant::now();
    let full = loop {
        if let Err(e) = q.copy(a, b, 16) {
            break e;
        }
        assert!(start.elapsed() < 5 * SECOND);
    };
    assert!(matches!(full, QueueError::RingFull { waited } if waited >= Duration::from_millis(50)));
    gate.write(0, &1u32.to_ne_bytes()).unwrap();
    q.set_submit_timeout(LONG);
    let done = w.signal(1);
    q.signal(&done).unwrap();
    assert_eq!(q.wait(&done, Condition::Eq, 0, LONG), Ok(0));
}

/// Dropping a queue destroys it and frees its ring and memory event: the
/// simulator's object counts return to where they were; `destroy` does
/// the same.
#[test]
fn dropping_the_queue_releases_the_kernel_objects() {
    let w = World::new("mi210");
    // The event page and the doorbell page come with the first event and
    // queue and stay: make them before counting.
    drop(w.queue(SdmaEngine::Any, 4096).unwrap());
    let before = w.kernel_objects();
    let q = w.queue(SdmaEngine::Any, 4096).unwrap();
    let (bos, queues, events) = w.kernel_objects();
    assert_eq!(queues, before.1 + 1);
    assert_eq!(events, before.2 + 1, "the memory event");
    assert!(bos >= before.0 + 2, "ring, queue page");
    let done = w.signal(1);
    q.signal(&done).unwrap();
    assert_eq!(q.wait(&done, Condition::Eq, 0, LONG), Ok(0));
    drop(q);
    drop(done);
    assert_eq!(w.kernel_objects(), before);
    assert_eq!(w.queues.live_count(), 0);
    assert_eq!(w.events.live_count(), 0);
    let q = w.queue(SdmaEngine::Any, 4096).unwrap();
    q.destroy().unwrap();
    assert_eq!(w.kernel_objects(), before);
}

// The example, as a module: its `main` runs under `cargo run` only.
#[allow(dead_code)]
#[path = "../examples/sdma_copy.rs"]
mod sdma_copy_example;

/// The `sdma_copy` example's flow on a gfx90a and on the APU, whose
/// 16 MiB copy takes several packets: every copy comes back equal and
/// nothing is left after the drop.
#[test]
fn the_sdma_copy_example_runs() {
    for preset in ["mi210", "apu"] {
        let report = sdma_copy_example::sdma_copy_demo(preset).unwrap();
        let want: Vec<_> = sdma_copy_example::SIZES
            .iter()
            .map(|&s| (s, true))
            .collect();
        assert_eq!(report.copies, want, "{preset}");
        assert_eq!(report.left, (0, 0), "{preset}");
    }
}
