//! Measures the engine thread: its CPU cost while queues sit idle, and how
//! long a submitted packet waits before it runs (wake-up latency), with the
//! explicit doorbell ring, with a thread going to sleep in WAIT_EVENTS,
//! and with polling alone.
//!
//! ```sh
//! cargo bench -p kfd-sim --bench engine_cost
//! ```
//!
//! CPU time is the engine thread's own (`/proc/self/task/<tid>/schedstat`,
//! nanoseconds on a CPU). Latency is from the write-pointer update to the
//! moment the engine executed the packet: the packet is a `COPY_DATA` of
//! the GPU clock (the 100 MHz counter the simulator derives from
//! `CLOCK_MONOTONIC_RAW`), compared with the same clock read just before
//! the submission, so the submitting thread can sleep while it waits and
//! does not compete with the engine for a CPU. Each sample is taken after
//! the engine has been idle for the given time.

#[path = "../tests/kernel_util/mod.rs"]
mod kernel_util;

use std::time::{Duration, Instant};

use kernel_util::*;
use kfd_sim::Sim;
use kfd_sys::kfd::*;
use kfd_sys::packet::Dwords;
use kfd_sys::pm4::{CopySource, PM4_COPY_DATA, PM4_MEC_RELEASE_MEM};
use kfd_sys::PAGE_SIZE;

/// CPU nanoseconds of the thread named `kfd-sim-engine`.
fn engine_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    for t in tasks.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim() == "kfd-sim-engine" {
            let s = std::fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
            return s
                .split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
        }
    }
    0
}

/// COPY_DATA of the 64-bit GPU clock to `dst`.
fn clock_to(dst: u64) -> PM4_COPY_DATA {
    PM4_COPY_DATA::wide(CopySource::GpuClock, dst).unwrap()
}

/// The GPU clock as the simulator computes it (10 ns ticks).
fn gpu_clock() -> u64 {
    // SAFETY: an all-zero timespec is valid; clock_gettime writes one.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: `ts` is valid and exclusively borrowed.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    (ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64) / 10
}

struct Setup {
    sim: Sim,
    p: Proc,
    mem: GpuBuf,
    ring: GpuBuf,
    events: GpuBuf,
    queue: u32,
    next: u64,
}

impl Setup {
    fn new(idle_queues: usize) -> Setup {
        let sim = Sim::preset("mi210").unwrap();
        let p = Proc::open(&sim);
        let g = p.gpu();
        let mem = GpuBuf::new(&p, g, 16 * PAGE_SIZE, GTT);
        let ring = GpuBuf::new(&p, g, 16 * PAGE_SIZE, GTT);
        let events = GpuBuf::new(&p, g, 8 * PAGE_SIZE, GTT);
        let mut queue = 0;
        for i in 0..=idle_queues as u64 {
            let mut a = kfd_ioctl_create_queue_args {
                ring_base_address: ring.va + i * PAGE_SIZE,
                write_pointer_address: mem.va + 64 + i * 128,
                read_pointer_address: mem.va + i * 128,
                ring_size: PAGE_SIZE as u32,
                gpu_id: g,
                queue_type: KFD_IOC_QUEUE_TYPE_COMPUTE,
                queue_percentage: 100,
                ..Default::default()
            };
            io(&sim, &p.kfd, AMDKFD_IOC_CREATE_QUEUE, &mut a).unwrap();
            if i == 0 {
                queue = a.queue_id;
            }
        }
        Setup {
            sim,
            p,
            mem,
            ring,
            events,
            queue,
            next: 0,
        }
    }

    fn submit(&mut self, dws: &[u32]) {
        for d in dws {
            self.ring.set_u32((self.next % 1024) * 4, *d);
            self.next += 1;
        }
        self.mem.set_u64(64, self.next);
    }
}

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn report(name: &str, mut v: Vec<Duration>) {
    let (p50, p99, max) = (
        percentile(&mut v, 0.5),
        percentile(&mut v, 0.99),
        *v.last().unwrap(),
    );
    println!("  {name:<34} median {p50:>9.1?}  p99 {p99:>9.1?}  max {max:>9.1?}");
}

fn main() {
    println!(
        "engine back-off: {:?} .. {:?}, {:?} after {:?} idle",
        kfd_sim::kernel::MIN_POLL,
        kfd_sim::kernel::MAX_POLL,
        kfd_sim::kernel::DEEP_POLL,
        kfd_sim::kernel::DEEP_IDLE_AFTER
    );

    // Idle cost: 1 and 8 live queues with nothing to do, measured over 5 s
    // once the engine is in deep idle.
    for queues in [1, 8] {
        let s = Setup::new(queues - 1);
        std::thread::sleep(kfd_sim::kernel::DEEP_IDLE_AFTER + Duration::from_millis(500));
        let (c0, w0, t0) = (engine_cpu_ns(), s.sim.engine_stats(), Instant::now());
        std::thread::sleep(Duration::from_secs(5));
        let (c1, w1, dt) = (engine_cpu_ns(), s.sim.engine_stats(), t0.elapsed());
        let cpu = (c1 - c0) as f64 / dt.as_nanos() as f64 * 100.0;
        println!(
            "idle, {queues} queue(s): engine CPU {cpu:.3} % of one core, {:.0} wake-ups/s, {:.0} queue polls/s",
            (w1.wakeups - w0.wakeups) as f64 / dt.as_secs_f64(),
            (w1.polls - w0.polls) as f64 / dt.as_secs_f64()
        );
    }

    // Latency after 50 ms idle (back-off at ~3 ms) and after 1.2 s
    // (deep idle: polls every DEEP_POLL).
    println!("wake-up latency (write pointer -> packet executed):");
    for (name, idle_ms, samples) in [
        ("after 50 ms idle", 50, 100),
        ("after 1.2 s idle (deep idle)", 1200, 15),
    ] {
        println!(" {name}:");
        let mut s = Setup::new(0);
        let fd = std::os::fd::AsRawFd::as_raw_fd(&s.p.kfd);
        let (mut rung, mut polled, mut waited) = (Vec::new(), Vec::new(), Vec::new());
        let first =
            s.p.create_event(KFD_IOC_EVENT_SIGNAL, true, s.events.handle)
                .unwrap();
        let slot = s.events.va + u64::from(first.event_slot_index) * 8;
        let stamp = s.mem.va + 4096;
        for _ in 0..samples {
            for mode in 0..3 {
                std::thread::sleep(Duration::from_millis(idle_ms));
                s.mem.set_u64(4096, 0);
                let t0 = gpu_clock();
                s.submit(clock_to(stamp).dwords());
                match mode {
                    0 => s.sim.ring_doorbell(fd, s.queue).unwrap(),
                    1 => {}
                    _ => {
                        let signal =
                            PM4_MEC_RELEASE_MEM::signal_event(slot, first.event_id).unwrap();
                        s.submit(signal.dwords());
                        let (_, r) = s.p.wait(&[first.event_id], true, 10_000);
                        assert_eq!(r, KFD_IOC_WAIT_RESULT_COMPLETE);
                    }
                }
                while s.mem.u64(4096) == 0 {
                    std::thread::sleep(Duration::from_micros(200));
                }
                let ran = Duration::from_nanos((s.mem.u64(4096) - t0) * 10);
                [&mut rung, &mut polled, &mut waited][mode].push(ran);
            }
        }
        report("doorbell hook (ring_doorbell)", rung);
        report("WAIT_EVENTS kick", waited);
        report("polling only", polled);
    }
}
