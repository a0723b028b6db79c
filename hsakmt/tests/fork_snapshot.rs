//! fork(): a child that only reopens the primary keeps the parent's
//! topology snapshot, as the C library does (5.2.3's openclose.c: the
//! duplicated topology "is valid in the child process so it is not
//! cleared"; the newest library is the same). AMD's kfdtest exception
//! tests and its IPC test's child rely on it: without an acquire they
//! query nodes, create events on a GPU node and queues (issue 17 item 9).
//!
//! In-process on `kfd_sim::Sim`, as tests/fork.rs: the child gives the
//! primary a simulator of its own (the same preset, so the same gpu_ids)
//! before it reopens. tests/c_api.rs diffs the preload case against the
//! C library. One test per binary (see `support::in_forked_child`).

mod support;

use support::kmt;

use std::ffi::c_void;
use std::ptr::null_mut;

use hsakmt::generation::abi;
use hsakmt_sys::common::{HsaClockCounters, HsaEventDescriptor, HsaSystemProperties};

fn check(what: &str, got: hsakmt::border::Status) -> Result<(), String> {
    if got.0 == 0 {
        Ok(())
    } else {
        Err(format!("{what}: status {} (want 0)", got.0))
    }
}

/// The child: reopen only, then use GPU node 1.
fn child() -> Result<(), String> {
    kmt::sim_on("mi210");
    let mut np = abi::HsaNodeProperties::default();
    let mut cc = HsaClockCounters::default();
    let mut desc = HsaEventDescriptor {
        EventType: hsakmt_sys::common::HSA_EVENTTYPE::HSA_EVENTTYPE_SIGNAL,
        NodeId: 1,
        ..Default::default()
    };
    let mut event: *mut abi::HsaEvent = null_mut();
    let flags = kmt::host_flags();
    let mut ring: *mut c_void = null_mut();
    let mut q = abi::HsaQueueResource::default();
    // SAFETY: valid out-pointers and buffers; the event, ring and queue
    // come from the library and are released before the close.
    unsafe {
        check("reopen", hsakmt::openclose::hsaKmtOpenKFD())?;
        check(
            "node properties",
            hsakmt::topology::hsaKmtGetNodeProperties(1, &mut np),
        )?;
        if np.NumFComputeCores == 0 {
            return Err("node 1 reads as no GPU".into());
        }
        check(
            "clock counters",
            hsakmt::perf::hsaKmtGetClockCounters(1, &mut cc),
        )?;
        check(
            "create event",
            hsakmt::events::hsaKmtCreateEvent(&mut desc, true, false, &mut event),
        )?;
        check(
            "alloc ring",
            hsakmt::memory::hsaKmtAllocMemory(0, 0x1000, flags, &mut ring),
        )?;
        check(
            "create queue",
            kmt::create_queue(1, 1, 0, ring, event, &mut q),
        )?;
        check(
            "destroy queue",
            hsakmt::queues::hsaKmtDestroyQueue(q.QueueId),
        )?;
        check("destroy event", hsakmt::events::hsaKmtDestroyEvent(event))?;
        check("free ring", hsakmt::memory::hsaKmtFreeMemory(ring, 0x1000))?;
        check("close", hsakmt::openclose::hsaKmtCloseKFD())?;
    }
    Ok(())
}

#[test]
fn forked_child_keeps_the_parents_snapshot() {
    let sim = kmt::sim_on("mi210");
    let mut sys = HsaSystemProperties::default();
    // SAFETY: valid out-pointer.
    unsafe {
        assert_eq!(hsakmt::openclose::hsaKmtOpenKFD().0, 0);
        assert_eq!(
            hsakmt::topology::hsaKmtAcquireSystemProperties(&mut sys).0,
            0
        );
    }
    assert!(support::in_forked_child(child), "the child failed");
    // SAFETY: no arguments.
    unsafe {
        hsakmt::topology::hsaKmtReleaseSystemProperties();
        assert_eq!(hsakmt::openclose::hsaKmtCloseKFD().0, 0);
    }
    kmt::remove_sysfs(&sim);
}
