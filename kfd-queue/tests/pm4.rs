//! Owned PM4 compute queues on kfd-sim: WRITE_DATA lands, a signal
//! completed by the CP wakes a waiter, the ring wraps with NOP fillers,
//! an indirect buffer runs, bad inputs are errors, a GPU fault ends a
//! wait, and dropping releases every kernel object.

mod world;

use std::sync::Arc;
use std::time::{Duration, Instant};

use kfd_event::Condition;
use kfd_fmm::{Buffer, MemFlags};
use kfd_queue::{Pm4Queue, QueueError};
use kfd_sys::packet::{CompareFunction, Dwords, PacketError};
use kfd_sys::pm4::{self, PM4_MEC_WAIT_REG_MEM, PM4_NOP_FILLER};
use world::*;

impl World {
    fn queue(&self, ring_bytes: u64) -> Result<Pm4Queue, QueueError> {
        let node = self.ctx.gpu_node();
        Pm4Queue::new(&self.queues, &self.events, &self.ctx.fmm, node, ring_bytes)
    }

    /// A page of pinned host memory mapped to the GPUs.
    fn host(&self) -> Buffer {
        let flags = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
        let b = self.ctx.fmm.alloc_buffer(0, 4096, 0, flags).unwrap();
        b.map().unwrap();
        b
    }
}

/// `n` dwords of `b` from byte `at`.
fn dwords(b: &Buffer, at: u64, n: usize) -> Vec<u32> {
    let mut raw = vec![0u8; n * 4];
    b.read(at, &mut raw).unwrap();
    raw.chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// WRITE_DATA lands on a gfx90a and a gfx942; the signal behind it
/// completes with the value asked for, and the write pointer counts
/// dwords.
#[test]
fn write_data_lands() {
    for preset in ["mi210", "mi300x"] {
        let w = World::new(preset);
        let q = w.queue(4096).unwrap();
        let dst = w.host();
        let done = w.signal(1);
        let after = q.write_data(dst.addr() + 8, &[0xA, 0xB, 0xC]).unwrap();
        assert_eq!(after, 4 + 3, "{preset}: header, control, address, data");
        q.signal(&done, -7).unwrap();
        assert_eq!(q.wait(&done, Condition::Eq, -7, LONG), Ok(-7), "{preset}");
        assert_eq!(dwords(&dst, 0, 5), [0, 0, 0xA, 0xB, 0xC], "{preset}");
        assert_eq!(q.write_pointer().unwrap(), 7 + 2 * 8, "{preset}");
        assert_eq!(q.read_pointer().unwrap(), 7 + 2 * 8, "{preset}");
    }
}

/// The CP blocks on a WAIT_REG_MEM until the host opens the gate; the
/// waiter sleeping on the signal behind it wakes at once.
#[test]
fn a_completion_signal_wakes_a_sleeping_waiter() {
    let w = World::new("mi210");
    let q = Arc::new(w.queue(4096).unwrap());
    let gate = w.host();
    let done = Arc::new(w.signal(5));
    let poll = PM4_MEC_WAIT_REG_MEM::memory(gate.addr(), 1, !0, CompareFunction::Equal).unwrap();
    q.submit(poll.dwords()).unwrap();
    q.signal(&done, 4).unwrap();
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
    assert!(woke - opened < SECOND, "woken late: {:?}", woke - opened);
}

/// A packet that would cross the ring's end moves to its start after
/// one-dword NOP fillers; many submissions go round the ring and every
/// write lands.
#[test]
fn submissions_wrap_around_the_ring_with_fillers() {
    let w = World::new("mi210");
    let q = w.queue(1024).unwrap();
    // A NOP that leaves 4 dwords before the end: the next WRITE_DATA
    // (5 dwords) goes to the start after 4 fillers.
    let nop = pm4::Pm4Header::type3(pm4::IT_NOP, 256 - 4).unwrap();
    let mut packet = vec![0; 256 - 4];
    packet[0] = nop.0;
    assert_eq!(q.submit(&packet).unwrap(), 252);
    let dst = w.host();
    assert_eq!(q.write_data(dst.addr(), &[1]).unwrap(), 256 + 5);
    let done = w.signal(0);
    for i in 1..200u32 {
        q.write_data(dst.addr() + 4 * u64::from(i), &[i + 1])
            .unwrap();
        q.signal(&done, i64::from(i)).unwrap();
    }
    assert_eq!(q.wait(&done, Condition::Eq, 199, LONG), Ok(199));
    assert!(q.write_pointer().unwrap() > 10 * 256, "went round the ring");
    let want: Vec<u32> = (1..=200).collect();
    assert_eq!(dwords(&dst, 0, 200), want);
}

/// An INDIRECT_BUFFER runs the packets it points at.
#[test]
fn an_indirect_buffer_runs() {
    let w = World::new("mi300x");
    let q = w.queue(4096).unwrap();
    let (ib, dst) = (w.host(), w.host());
    let packets = pm4::write_data(dst.addr(), &[0x1234, 0x5678]).unwrap();
    let raw: Vec<u8> = packets.iter().flat_map(|d| d.to_ne_bytes()).collect();
    ib.write(0, &raw).unwrap();
    let done = w.signal(1);
    q.indirect(ib.addr(), packets.len() as u32).unwrap();
    q.signal(&done, 0).unwrap();
    assert_eq!(q.wait(&done, Condition::Eq, 0, LONG), Ok(0));
    assert_eq!(dwords(&dst, 0, 2), [0x1234, 0x5678]);
}

/// Bad ring sizes, unknown opcodes, cut-off packets, packets as long as
/// the ring and bad helper arguments are errors, and nothing is written.
#[test]
fn bad_inputs_are_errors() {
    let w = World::new("mi210");
    for n in [0, 512, 1000, 3 << 20, 1 << 32] {
        assert_eq!(
            w.queue(n).unwrap_err(),
            QueueError::InvalidPm4RingSize(n),
            "{n}"
        );
    }
    let q = w.queue(1024).unwrap();
    let unknown = pm4::Pm4Header::type3(0x7F, 2).unwrap().0;
    assert_eq!(
        q.submit(&[PM4_NOP_FILLER, unknown, 0]),
        Err(QueueError::UnknownPm4Opcode(0x7F))
    );
    let write = pm4::write_data(0x1000, &[1, 2]).unwrap();
    assert!(matches!(
        q.submit(&write[..4]),
        Err(QueueError::Packet(PacketError::Truncated { .. }))
    ));
    assert!(matches!(
        q.submit(&[0x0000_0001]),
        Err(QueueError::Packet(PacketError::Pm4Type { .. }))
    ));
    assert_eq!(
        q.write_data(0x1000, &[0; 256]),
        Err(QueueError::Pm4PacketTooLarge {
            bytes: (256 + 4) * 4,
            ring: 1024
        })
    );
    assert!(matches!(
        q.write_data(0x1002, &[1]),
        Err(QueueError::Packet(PacketError::Misaligned { .. }))
    ));
    assert!(matches!(
        q.indirect(0x1000, 0),
        Err(QueueError::Packet(PacketError::Range { .. }))
    ));
    assert_eq!(q.write_pointer().unwrap(), 0, "nothing was submitted");
}

/// A WRITE_DATA into VRAM that is not mapped to the GPU faults; the wait
/// on the signal behind it returns the fault within a second.
#[test]
fn a_write_into_unmapped_memory_ends_the_wait_with_the_fault() {
    let w = World::new("mi210");
    let q = w.queue(4096).unwrap();
    let node = w.ctx.gpu_node();
    let unmapped = w
        .ctx
        .fmm
        .alloc_buffer(node, 4096, 0, MemFlags::NON_PAGED)
        .unwrap();
    let done = w.signal(1);
    q.write_data(unmapped.addr(), &[1]).unwrap();
    q.signal(&done, 0).unwrap();
    let start = Instant::now();
    let r = q.wait(&done, Condition::Eq, 0, LONG);
    assert!(start.elapsed() < SECOND, "took {:?}", start.elapsed());
    assert_eq!(
        r,
        Err(QueueError::MemoryFault {
            node_id: node,
            address: unmapped.addr(),
        })
    );
    assert_eq!(done.load().unwrap(), 1, "the signal was never completed");
    assert!(q.check().is_err());
}

/// Dropping a queue destroys it and frees its ring and memory event;
/// `destroy` does the same.
#[test]
fn dropping_the_queue_releases_the_kernel_objects() {
    let w = World::new("mi210");
    drop(w.queue(4096).unwrap());
    let before = w.kernel_objects();
    let q = w.queue(4096).unwrap();
    let (bos, queues, events) = w.kernel_objects();
    assert_eq!(queues, before.1 + 1);
    assert_eq!(events, before.2 + 1, "the memory event");
    assert!(bos >= before.0 + 2, "ring, queue page");
    drop(q);
    assert_eq!(w.kernel_objects(), before);
    assert_eq!(w.queues.live_count(), 0);
    let q = w.queue(4096).unwrap();
    q.destroy().unwrap();
    assert_eq!(w.kernel_objects(), before);
}

/// A CP held on a WAIT_REG_MEM lets the ring fill; the submission that
/// finds no room fails with RingFull after the submit timeout, and the
/// queue carries on once the gate opens.
#[test]
fn a_full_ring_is_an_error_not_a_hang() {
    let w = World::new("mi210");
    let mut q = w.queue(1024).unwrap();
    q.set_submit_timeout(Duration::from_millis(50));
    let (gate, dst) = (w.host(), w.host());
    let poll = PM4_MEC_WAIT_REG_MEM::memory(gate.addr(), 1, !0, CompareFunction::Equal).unwrap();
    q.submit(poll.dwords()).unwrap();
    let start = Instant::now();
    let full = loop {
        if let Err(e) = q.write_data(dst.addr(), &[1]) {
            break e;
        }
        assert!(start.elapsed() < 5 * SECOND);
    };
    assert!(matches!(full, QueueError::RingFull { waited } if waited >= Duration::from_millis(50)));
    gate.write(0, &1u32.to_ne_bytes()).unwrap();
    q.set_submit_timeout(LONG);
    let done = w.signal(1);
    q.signal(&done, 0).unwrap();
    assert_eq!(q.wait(&done, Condition::Eq, 0, LONG), Ok(0));
}

/// Submissions into a queue a fault stopped fill its ring; the one that
/// finds no room returns the fault at once instead of waiting out the
/// submit timeout (10 s) for a ring that never drains.
#[test]
fn a_submission_into_a_faulted_queue_returns_the_fault() {
    let w = World::new("mi300x");
    let q = w.queue(1024).unwrap();
    let node = w.ctx.gpu_node();
    let unmapped = w
        .ctx
        .fmm
        .alloc_buffer(node, 4096, 0, MemFlags::NON_PAGED)
        .unwrap();
    let start = Instant::now();
    let e = loop {
        if let Err(e) = q.write_data(unmapped.addr(), &[1, 2, 3, 4]) {
            break e;
        }
        assert!(start.elapsed() < 5 * SECOND, "the ring never filled");
    };
    assert!(start.elapsed() < SECOND, "took {:?}", start.elapsed());
    assert_eq!(
        e,
        QueueError::MemoryFault {
            node_id: node,
            address: unmapped.addr(),
        }
    );
    assert_eq!(q.read_pointer().unwrap(), 0, "the first write faulted");
}

/// Four threads submit WRITE_DATA to one queue at once: the lock keeps
/// every packet whole while the 1 KiB ring wraps many times, and every
/// write lands.
#[test]
fn concurrent_producers_share_the_ring() {
    let w = World::new("mi210");
    let q = Arc::new(w.queue(1024).unwrap());
    let dst = w.host();
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            let (q, dst) = (q.clone(), dst.addr());
            std::thread::spawn(move || {
                for i in 0..128 {
                    let slot = t * 128 + i;
                    q.write_data(dst + 8 * u64::from(slot), &[slot, !slot])
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let done = w.signal(1);
    q.signal(&done, 0).unwrap();
    assert_eq!(q.wait(&done, Condition::Eq, 0, LONG), Ok(0));
    let written = q.write_pointer().unwrap();
    assert!(written >= 512 * 6 + 16, "every packet, then fillers");
    assert!(written > 10 * 256, "wrapped many times");
    let want: Vec<u32> = (0..512).flat_map(|s| [s, !s]).collect();
    assert_eq!(dwords(&dst, 0, 1024), want);
}
