//! Kernel model: events and WAIT_EVENTS.

mod kernel_util;

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use kernel_util::*;
use kfd_sim::Sim;
use kfd_sys::kfd::*;
use kfd_sys::Errno;

const SIGNAL: u32 = KFD_IOC_EVENT_SIGNAL;

#[test]
fn cross_thread_set_wakes_waiter() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Arc::new(Proc::open(&sim));
    let ev = p.create_event(SIGNAL, true, 0).unwrap();
    assert!(ev.event_id > 0 && ev.event_id < KFD_SIGNAL_EVENT_LIMIT);
    assert_eq!(ev.event_slot_index, ev.event_id);
    assert_eq!(ev.event_trigger_data, ev.event_id);
    let id = ev.event_id;
    let q = p.clone();
    let t0 = Instant::now();
    let waiter = thread::spawn(move || q.wait(&[id], false, u32::MAX));
    thread::sleep(Duration::from_millis(100));
    p.set_event(id).unwrap();
    let (r, res) = waiter.join().unwrap();
    assert_eq!((r, res), (Ok(0), KFD_IOC_WAIT_RESULT_COMPLETE));
    assert!(t0.elapsed() >= Duration::from_millis(90));
    // The waiter consumed the auto-reset signal: a new wait times out.
    assert_eq!(
        p.wait(&[id], false, 0),
        (Ok(0), KFD_IOC_WAIT_RESULT_TIMEOUT)
    );
    p.destroy_event(id).unwrap();
    Arc::try_unwrap(p).ok().unwrap().close();
    assert!(sim.live_objects().is_empty());
}

#[test]
fn timeout_expires() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Proc::open(&sim);
    let id = p.create_event(SIGNAL, true, 0).unwrap().event_id;
    let t0 = Instant::now();
    assert_eq!(
        p.wait(&[id], false, 150),
        (Ok(0), KFD_IOC_WAIT_RESULT_TIMEOUT)
    );
    let dt = t0.elapsed();
    assert!(
        dt >= Duration::from_millis(140) && dt < Duration::from_secs(5),
        "{dt:?}"
    );
    // Immediate timeout.
    assert_eq!(
        p.wait(&[id], false, 0),
        (Ok(0), KFD_IOC_WAIT_RESULT_TIMEOUT)
    );
    // Zero events: trivially complete.
    assert_eq!(p.wait(&[], false, 0), (Ok(0), KFD_IOC_WAIT_RESULT_COMPLETE));
    // Unknown id.
    assert_eq!(
        p.wait(&[id + 77], false, 0),
        (Err(Errno::EINVAL), KFD_IOC_WAIT_RESULT_FAIL)
    );
    p.close();
}

#[test]
fn auto_and_manual_reset_semantics() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Proc::open(&sim);
    let auto = p.create_event(SIGNAL, true, 0).unwrap().event_id;
    let manual = p.create_event(SIGNAL, false, 0).unwrap().event_id;
    // Set with nobody waiting: stays signaled until a wait consumes it.
    p.set_event(auto).unwrap();
    assert_eq!(p.wait(&[auto], false, 0).1, KFD_IOC_WAIT_RESULT_COMPLETE);
    assert_eq!(p.wait(&[auto], false, 0).1, KFD_IOC_WAIT_RESULT_TIMEOUT);
    // Manual reset stays signaled until RESET.
    p.set_event(manual).unwrap();
    assert_eq!(p.wait(&[manual], false, 0).1, KFD_IOC_WAIT_RESULT_COMPLETE);
    assert_eq!(p.wait(&[manual], false, 0).1, KFD_IOC_WAIT_RESULT_COMPLETE);
    p.reset_event(manual).unwrap();
    assert_eq!(p.wait(&[manual], false, 0).1, KFD_IOC_WAIT_RESULT_TIMEOUT);
    // Pitfall 3: SET wakes every current waiter, and because somebody
    // was waiting the auto-reset event is left unsignaled.
    let p = Arc::new(p);
    let mut hs = Vec::new();
    for _ in 0..3 {
        let q = p.clone();
        hs.push(thread::spawn(move || q.wait(&[auto], false, 10_000)));
    }
    // Every waiter blocked before the one set (a late one would miss it).
    assert!(wait_until(20, || sim.live_objects().processes[0].waiters == 3));
    p.set_event(auto).unwrap();
    for h in hs {
        assert_eq!(h.join().unwrap(), (Ok(0), KFD_IOC_WAIT_RESULT_COMPLETE));
    }
    assert_eq!(p.wait(&[auto], false, 0).1, KFD_IOC_WAIT_RESULT_TIMEOUT);
    // SET/RESET only for signal events.
    let hw = p
        .create_event(KFD_IOC_EVENT_HW_EXCEPTION, false, 0)
        .unwrap()
        .event_id;
    assert!(hw >= KFD_SIGNAL_EVENT_LIMIT);
    assert_eq!(p.set_event(hw), Err(Errno::EINVAL));
    assert_eq!(p.reset_event(hw), Err(Errno::EINVAL));
    assert_eq!(p.set_event(9999), Err(Errno::EINVAL));
    assert_eq!(p.destroy_event(9999), Err(Errno::EINVAL));
    Arc::try_unwrap(p).ok().unwrap().close();
    assert!(sim.live_objects().is_empty());
}

#[test]
fn wait_all_and_any() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Arc::new(Proc::open(&sim));
    let a = p.create_event(SIGNAL, false, 0).unwrap().event_id;
    let b = p.create_event(SIGNAL, false, 0).unwrap().event_id;
    p.set_event(a).unwrap();
    assert_eq!(p.wait(&[a, b], false, 0).1, KFD_IOC_WAIT_RESULT_COMPLETE);
    assert_eq!(p.wait(&[a, b], true, 0).1, KFD_IOC_WAIT_RESULT_TIMEOUT);
    let q = p.clone();
    let h = thread::spawn(move || q.wait(&[a, b], true, 10_000));
    thread::sleep(Duration::from_millis(100));
    p.set_event(b).unwrap();
    assert_eq!(h.join().unwrap(), (Ok(0), KFD_IOC_WAIT_RESULT_COMPLETE));
    Arc::try_unwrap(p).ok().unwrap().close();
}

#[test]
fn destroy_while_waiting_fails_the_wait() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Arc::new(Proc::open(&sim));
    let id = p.create_event(SIGNAL, true, 0).unwrap().event_id;
    let q = p.clone();
    let h = thread::spawn(move || q.wait(&[id], false, u32::MAX));
    assert!(wait_until(20, || sim.live_objects().processes[0].waiters == 1));
    p.destroy_event(id).unwrap();
    assert_eq!(
        h.join().unwrap(),
        (Err(Errno::EIO), KFD_IOC_WAIT_RESULT_FAIL)
    );
    Arc::try_unwrap(p).ok().unwrap().close();
}

#[test]
fn event_age_and_memory_exception_data() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Proc::open(&sim);
    let id = p.create_event(SIGNAL, true, 0).unwrap().event_id;
    // last_event_age != current age: complete at once, age reported.
    let mut d = with_age(id, 1);
    assert_eq!(p.wait_data(&mut d, false, 0).1, KFD_IOC_WAIT_RESULT_TIMEOUT);
    p.set_event(id).unwrap();
    assert_eq!(
        p.wait_data(&mut d, false, 0).1,
        KFD_IOC_WAIT_RESULT_COMPLETE
    );
    // SAFETY: the signal member was written by the simulator.
    let age = unsafe { d[0].u.signal_event_data.last_event_age };
    assert_eq!(age, 2);

    let mem = p
        .create_event(KFD_IOC_EVENT_MEMORY, false, 0)
        .unwrap()
        .event_id;
    sim.signal_vm_fault(p.gpu(), 0xdead_b000);
    let mut d = [kfd_event_data {
        event_id: mem,
        ..Default::default()
    }];
    assert_eq!(
        p.wait_data(&mut d, false, 0).1,
        KFD_IOC_WAIT_RESULT_COMPLETE
    );
    // SAFETY: the memory member was written by the simulator.
    let m = unsafe { d[0].u.memory_exception_data };
    assert_eq!(
        (m.va, m.gpu_id, m.failure.NotPresent),
        (0xdead_b000, p.gpu(), 1)
    );
    p.close();
    assert!(sim.live_objects().is_empty());
}

#[test]
fn event_page_from_a_gtt_bo() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Proc::open(&sim);
    let g = p.gpu();
    let size = 8 * 4096;
    let (h, off) = p.alloc(g, 0x7000_0000, size, GTT).unwrap();
    // A VRAM BO cannot be the event page.
    let (hv, _) = p.alloc(g, 0x7100_0000, size, VRAM).unwrap();
    assert_eq!(p.create_event(SIGNAL, true, hv).err(), Some(Errno::EINVAL));
    let ev = p.create_event(SIGNAL, true, h).unwrap();
    // A second page is refused.
    assert_eq!(p.create_event(SIGNAL, true, h).err(), Some(Errno::EINVAL));
    // The slots are initialised to "unsignaled" (all ones).
    let page = map_fd(&p.renders[0], off, size as usize);
    // SAFETY: the mapping covers the 32 KiB event page.
    let slot = unsafe { *(page as *const u64).add(ev.event_slot_index as usize) };
    assert_eq!(slot, u64::MAX);
    unmap_fd(page, size as usize);
    // The signal BO cannot be freed while it is the event page.
    assert_eq!(p.free(h), Err(Errno::EPERM));
    p.free(hv).unwrap();
    p.close();
    assert!(sim.live_objects().is_empty());
}

#[test]
fn kernel_allocated_event_page_is_mappable() {
    let sim = Sim::preset("apu").unwrap();
    let p = Proc::open(&sim);
    let ev = p.create_event(SIGNAL, false, 0).unwrap();
    assert_ne!(ev.event_page_offset, 0);
    let page = map_fd(&p.kfd, ev.event_page_offset, 8 * 4096);
    // SAFETY: the mapping covers the event page.
    let slot = unsafe { *(page as *const u64).add(ev.event_slot_index as usize) };
    assert_eq!(slot, u64::MAX);
    unmap_fd(page, 8 * 4096);
    p.close();
}

#[test]
fn event_ids_follow_kfd_events_c() {
    // kfd_event_init_process keeps id 0, so signal events start at 1;
    // other types take ids from KFD_FIRST_NONSIGNAL_EVENT_ID
    // ((INT_MAX >> 1) + 1) up.
    let sim = Sim::preset("apu").unwrap();
    let p = Proc::open(&sim);
    let first = p.create_event(SIGNAL, true, 0).unwrap();
    assert_eq!((first.event_id, first.event_slot_index), (1, 1));
    let mem = p.create_event(KFD_IOC_EVENT_MEMORY, true, 0).unwrap();
    assert_eq!(mem.event_id, 0x4000_0000);
    assert_eq!(mem.event_page_offset, 0, "non-signal events have no slot");
    let hw = p.create_event(KFD_IOC_EVENT_HW_EXCEPTION, true, 0).unwrap();
    assert_eq!(hw.event_id, 0x4000_0001);
    // The lowest free id is reused.
    p.destroy_event(first.event_id).unwrap();
    assert_eq!(p.create_event(SIGNAL, true, 0).unwrap().event_id, 1);
    p.close();
    assert!(sim.live_objects().is_empty());
}

#[test]
fn kernel_page_has_256_slots_until_it_is_mapped() {
    let sim = Sim::preset("apu").unwrap();
    let p = Proc::open(&sim);
    // 256 slots, id 0 reserved: 255 events before the page is mapped.
    let mut ids = Vec::new();
    let err = loop {
        match p.create_event(SIGNAL, true, 0) {
            Ok(e) => ids.push(e),
            Err(e) => break e,
        }
        assert!(ids.len() < 4096);
    };
    assert_eq!(err, Errno::ENOSPC);
    assert_eq!(ids.len(), 255);
    assert_eq!(ids.last().unwrap().event_id, 255);
    // Mapping the whole page (kfd_event_mmap) makes every slot usable.
    let off = ids[0].event_page_offset;
    let page = map_fd(&p.kfd, off, 8 * 4096);
    while ids.len() < 4095 {
        ids.push(p.create_event(SIGNAL, true, 0).unwrap());
    }
    assert_eq!(p.create_event(SIGNAL, true, 0).err(), Some(Errno::ENOSPC));
    assert_eq!(ids.last().unwrap().event_id, 4095);
    // The size stays known after the mapping is gone.
    unmap_fd(page, 8 * 4096);
    p.destroy_event(ids.pop().unwrap().event_id).unwrap();
    assert_eq!(p.create_event(SIGNAL, true, 0).unwrap().event_id, 4095);
    p.close();
    assert!(sim.live_objects().is_empty());
}

#[test]
fn a_library_event_page_has_a_slot_per_eight_bytes() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Proc::open(&sim);
    // One 4 KiB GTT page: 512 slots, 511 events.
    let (h, _) = p.alloc(p.gpu(), 0x7000_0000, 4096, GTT).unwrap();
    let mut n = 1;
    p.create_event(SIGNAL, true, h).unwrap();
    while p.create_event(SIGNAL, true, 0).is_ok() {
        n += 1;
        assert!(n < 4096);
    }
    assert_eq!(n, 511);
    p.close();
    assert!(sim.live_objects().is_empty());
}

/// One waiter's signal data with `last_event_age` (0: age tracking off,
/// as libhsakmt 5.2.3 always sends).
fn with_age(id: u32, last_event_age: u64) -> [kfd_event_data; 1] {
    [kfd_event_data {
        u: kfd_event_data_union {
            signal_event_data: kfd_hsa_signal_event_data { last_event_age },
        },
        kfd_event_data_ext: 0,
        event_id: id,
        pad: 0,
    }]
}

/// ROCr 5.2.3's `hsa_queue_destroy` hang, replayed ioctl by ioctl as the
/// traces of the hung runs show it. The queue's `queue_inactive_signal`
/// and every other queue signal share one auto-reset event (ROCr's
/// `AqlQueue::queue_event_`). The destroying thread stores 0x8000… and
/// spins on the signal; ROCr's async-events thread runs the queue's
/// handler, which stores -1 and sets the event while the destroying
/// thread is still between its last look at the value and its
/// WAIT_EVENTS. Nobody waits in the kernel, so the event stays signaled
/// (`set_event`), and the async thread's own next wait on the same
/// event consumes it (`init_event_waiter`); the destroying thread then
/// sleeps with nothing left to wake it. amdkfd does the same, so the
/// model must too; ROCr 6.1+ passes `last_event_age`, which closes it.
#[test]
fn rocr_5_2_queue_destroy_race() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Proc::open(&sim);
    let queue_event = p.create_event(SIGNAL, true, 0).unwrap().event_id;
    let wake = p.create_event(SIGNAL, true, 0).unwrap().event_id;
    // The async thread's handler: store -1, SET_EVENT, nobody in a wait.
    p.set_event(queue_event).unwrap();
    // The async thread waits again on all its events: it takes the set
    // meant for the destroying thread, then sleeps for real.
    assert_eq!(
        p.wait(&[wake, queue_event], false, u32::MAX - 1),
        (Ok(0), KFD_IOC_WAIT_RESULT_COMPLETE)
    );
    assert_eq!(
        p.wait(&[wake, queue_event], false, 0),
        (Ok(0), KFD_IOC_WAIT_RESULT_TIMEOUT)
    );
    // The destroying thread's hsaKmtWaitOnEvent (5.2.3: no event age):
    // nothing wakes it; ROCr asks for 0xFFFFFFFE ms.
    let mut d = with_age(queue_event, 0);
    assert_eq!(
        p.wait_data(&mut d, false, 100),
        (Ok(0), KFD_IOC_WAIT_RESULT_TIMEOUT)
    );

    // ROCr 6.1+: the destroying thread's first wait passes age 1, the
    // async thread's waits pass theirs. The set moved the age past 1, so
    // the late waiter completes although the set was consumed.
    p.set_event(queue_event).unwrap();
    let mut theirs = with_age(queue_event, 1);
    assert_eq!(
        p.wait_data(&mut theirs, false, 0),
        (Ok(0), KFD_IOC_WAIT_RESULT_COMPLETE)
    );
    let mut mine = with_age(queue_event, 1);
    assert_eq!(
        p.wait_data(&mut mine, false, 100),
        (Ok(0), KFD_IOC_WAIT_RESULT_COMPLETE)
    );
    // SAFETY: the signal member was written by the simulator.
    let age = unsafe { mine[0].u.signal_event_data.last_event_age };
    assert_eq!(age, 3, "two sets since creation");
    // With the age it saw, the next wait sleeps until a new set.
    assert_eq!(
        p.wait_data(&mut mine, false, 0),
        (Ok(0), KFD_IOC_WAIT_RESULT_TIMEOUT)
    );
    p.close();
    assert!(sim.live_objects().is_empty());
}

/// WAIT_EVENTS kicks the engine only when it is about to sleep, after its
/// waiter is registered: a wait that is satisfied at once does not wake
/// the engine thread (whose wake-up could preempt the caller), one that
/// sleeps kicks once, and by the time the kick is seen the waiter can be
/// found.
#[test]
fn wait_kicks_the_engine_once_registered() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Arc::new(Proc::open(&sim));
    let id = p.create_event(SIGNAL, true, 0).unwrap().event_id;
    let k0 = sim.engine_stats().kicks;
    p.set_event(id).unwrap();
    assert_eq!(p.wait(&[id], false, 10_000).1, KFD_IOC_WAIT_RESULT_COMPLETE);
    assert_eq!(p.wait(&[id], false, 0).1, KFD_IOC_WAIT_RESULT_TIMEOUT);
    assert_eq!(sim.engine_stats().kicks, k0, "no kick without a sleep");
    let q = p.clone();
    let waiter = thread::spawn(move || q.wait(&[id], false, 10_000));
    let waiters = || sim.live_objects().processes[0].waiters;
    assert!(wait_until(5, || sim.engine_stats().kicks > k0));
    assert_eq!(waiters(), 1, "kicked before the waiter was registered");
    p.set_event(id).unwrap();
    assert_eq!(
        waiter.join().unwrap(),
        (Ok(0), KFD_IOC_WAIT_RESULT_COMPLETE)
    );
    assert_eq!(sim.engine_stats().kicks, k0 + 1);
    assert_eq!(waiters(), 0);
    Arc::try_unwrap(p).ok().unwrap().close();
}
