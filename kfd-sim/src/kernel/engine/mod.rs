//! The GPU's packet processors: a software model of the command processor
//! (AQL and PM4 queues) and the SDMA engines consuming user-mode queues.
//!
//! # Design
//!
//! One engine thread per simulated machine serves every queue of every
//! GPU (rather than a thread per device): the model is about what packets
//! do, not about throughput, so one thread bounds the CPU the simulator
//! takes on a shared 2-core runner and on the 64-GPU preset alike, and
//! queues are served in a fixed round-robin order, which keeps runs
//! reproducible. A packet that must wait (a barrier whose dependencies are
//! not met, `WAIT_REG_MEM`, `POLL_REGMEM`, a barrier-value packet) does not
//! hold the thread: its queue reports "blocked" and the thread moves on to
//! the next queue, as the hardware's queue scheduler would switch queues.
//!
//! The thread starts with the machine's first queue. Doorbell pages are
//! shared memory the model cannot trap, so the thread watches the write
//! pointer of each live queue: after work it polls again at once, then
//! backs off (the interval grows with the idle time from [`MIN_POLL`] to
//! [`MAX_POLL`], and is [`DEEP_POLL`] once the engine has been idle for
//! [`DEEP_IDLE_AFTER`]), and with no runnable queue it parks on a
//! condition variable. It is woken at once by [`Engine::kick`]: queue creation,
//! update and destroy, every `AMDKFD_IOC_WAIT_EVENTS` that goes to sleep,
//! once its waiter is registered (a thread going to sleep on an event is
//! the usual sign that work was just submitted), and
//! the explicit doorbell ring ([`crate::Sim::ring_doorbell`], the C
//! border's `kfd_sim_ring_doorbell`).
//!
//! A queue stops on destroy, on `UPDATE_QUEUE` to 0 % (or a zero ring), on
//! a debugger's suspend, after an error it raised and after a GPU memory
//! fault of its process; destroy and suspend wait until the engine is out
//! of the queue's current packet. Read pointers are written back like the
//! hardware does (AQL: the 64-bit `read_dispatch_id`; PM4: the 32-bit
//! dword offset into the ring; SDMA: the 64-bit monotonic byte offset).

mod aql;
mod gpumem;
mod pm4;
mod report;
mod sdma;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use kfd_sys::kfd::*;

use super::process::Process;
use super::{lock, Files, Trace};
pub(crate) use gpumem::{Fault, GpuVm, PageCache};

/// Shortest back-off between polls of the write pointers.
pub const MIN_POLL: Duration = Duration::from_micros(20);
/// Longest back-off between polls in the first [`DEEP_IDLE_AFTER`] of
/// idleness.
pub const MAX_POLL: Duration = Duration::from_millis(10);
/// Idle time after which the engine polls only every [`DEEP_POLL`].
pub const DEEP_IDLE_AFTER: Duration = Duration::from_secs(1);
/// The poll interval of a long-idle engine (live queues, no work, no
/// kick).
pub const DEEP_POLL: Duration = Duration::from_millis(50);
/// Packets one queue may run before the thread serves the next queue.
const BUDGET: u32 = 256;

/// What kind of packet processor serves a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The CP's AQL packet processor (`KFD_IOC_QUEUE_TYPE_COMPUTE_AQL`).
    Aql,
    /// The CP's PM4 parser (`KFD_IOC_QUEUE_TYPE_COMPUTE`).
    Pm4,
    /// An SDMA engine (`SDMA`, `SDMA_XGMI`, `SDMA_BY_ENG_ID`).
    Sdma,
}

impl Kind {
    /// The engine for a KFD queue type.
    pub fn of(queue_type: u32) -> Kind {
        match queue_type {
            KFD_IOC_QUEUE_TYPE_COMPUTE_AQL => Kind::Aql,
            KFD_IOC_QUEUE_TYPE_COMPUTE => Kind::Pm4,
            _ => Kind::Sdma,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Aql => "aql",
            Kind::Pm4 => "pm4",
            Kind::Sdma => "sdma",
        }
    }
}

/// Why a queue does not run (bits of [`HwQueue::stop`]).
pub(crate) mod stop {
    /// Destroyed.
    pub const DESTROYED: u32 = 1;
    /// Inactive: 0 % or no ring (`UPDATE_QUEUE`).
    pub const INACTIVE: u32 = 2;
    /// Suspended by the debugger.
    pub const SUSPENDED: u32 = 4;
    /// It raised a queue error.
    pub const ERROR: u32 = 8;
    /// Evicted after a GPU memory fault of its process.
    pub const EVICTED: u32 = 16;
}

/// The engine's view of one user-mode queue (the hardware queue
/// descriptor).
#[derive(Debug)]
pub(crate) struct HwQueue {
    /// KFD queue id.
    pub queue_id: u32,
    /// Its kernel process.
    pub proc: Weak<Process>,
    /// Device index and gpu_id.
    pub dev: usize,
    pub gpu_id: u32,
    /// `gfx_target_version` of the device.
    pub gfx_version: u32,
    pub kind: Kind,
    /// Read and write pointer addresses.
    pub rptr: u64,
    pub wptr: u64,
    /// Context save area (its header names the runtime's error event).
    pub ctx_save: u64,
    stop: AtomicU32,
    exec: Mutex<Exec>,
}

/// Mutable execution state, under the queue's own lock (taken before the
/// process lock, never after it).
#[derive(Debug, Default)]
pub(crate) struct Exec {
    pub run: RunState,
    pub pages: PageCache,
}

/// Where a queue is in its ring.
#[derive(Debug, Default)]
pub(crate) struct RunState {
    pub ring_base: u64,
    pub ring_size: u64,
    /// The engine's read index (AQL packets, PM4 dwords, SDMA bytes; all
    /// monotonic). `None` until the first look, which takes it from the
    /// read pointer.
    pub read: Option<u64>,
    /// Dword position inside the indirect buffer of the current packet
    /// when it blocked there (so a `WAIT_REG_MEM` in an IB resumes instead
    /// of re-running the packets before it).
    pub ib_pos: Option<u64>,
    /// GPU clock when the current packet started (AQL profiling).
    pub started_at: Option<u64>,
    /// Packets executed.
    pub packets: u64,
    /// The last write pointer value seen.
    pub last_wptr: u64,
    /// The packet at the read index blocked on its last look (its trace
    /// line is not repeated while it keeps waiting).
    pub blocked: bool,
}

/// What one step of a queue did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Progress {
    /// Nothing to do.
    Idle,
    /// Packets were executed.
    Ran,
    /// The packet at the read pointer waits for memory to change.
    Blocked,
    /// The queue does not run.
    Stopped,
}

impl Progress {
    /// The step's result when the ring ran dry (or the budget ran out)
    /// after `ran` packets.
    pub fn after(ran: u32) -> Progress {
        if ran > 0 {
            Progress::Ran
        } else {
            Progress::Idle
        }
    }
}

impl HwQueue {
    /// A queue descriptor; `active` as the kernel computes `is_active`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        queue_id: u32,
        proc: Weak<Process>,
        dev: usize,
        gpu_id: u32,
        gfx_version: u32,
        queue_type: u32,
        ring: (u64, u64),
        rptr: u64,
        wptr: u64,
        ctx_save: u64,
        active: bool,
    ) -> HwQueue {
        HwQueue {
            queue_id,
            proc,
            dev,
            gpu_id,
            gfx_version,
            kind: Kind::of(queue_type),
            rptr,
            wptr,
            ctx_save,
            stop: AtomicU32::new(if active { 0 } else { stop::INACTIVE }),
            exec: Mutex::new(Exec {
                run: RunState {
                    ring_base: ring.0,
                    ring_size: ring.1,
                    ..RunState::default()
                },
                pages: PageCache::default(),
            }),
        }
    }

    /// True if the queue does not run.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire) != 0
    }

    /// The reasons it does not run ([`stop`] bits).
    pub fn stop_bits(&self) -> u32 {
        self.stop.load(Ordering::Acquire)
    }

    /// Sets or clears a [`stop`] reason.
    pub fn set_stop(&self, bit: u32, on: bool) {
        if on {
            self.stop.fetch_or(bit, Ordering::AcqRel);
        } else {
            self.stop.fetch_and(!bit, Ordering::AcqRel);
        }
    }

    /// Waits until the engine is out of this queue's current packet (the
    /// kernel's preemption wait). Call without holding the process lock.
    pub fn wait_idle(&self) {
        drop(lock(&self.exec));
    }

    /// `UPDATE_QUEUE`: a new ring and activity. Call without holding the
    /// process lock.
    pub fn update(&self, ring_base: u64, ring_size: u64, active: bool) {
        let mut ex = lock(&self.exec);
        ex.run.ring_base = ring_base;
        ex.run.ring_size = ring_size;
        drop(ex);
        self.set_stop(stop::INACTIVE, !active);
    }

    /// True when the queue holds packets it has not consumed (its write
    /// pointer is past the engine's read index). Reads the pointers from
    /// user memory; call without holding the process lock.
    pub fn busy(&self) -> bool {
        if self.stop_bits() & stop::DESTROYED != 0 {
            return false;
        }
        let ex = lock(&self.exec);
        let read_ptr = |addr: u64, size: usize| {
            let mut b = [0u8; 8];
            super::usermem::read(addr, &mut b[..size])
                .ok()
                .map(|()| u64::from_ne_bytes(b))
        };
        let Some(wptr) = read_ptr(self.wptr, 8) else {
            return false;
        };
        let read = match (ex.run.read, self.kind) {
            (Some(r), _) => r,
            (None, Kind::Pm4) => read_ptr(self.rptr, 4).unwrap_or(0),
            (None, _) => read_ptr(self.rptr, 8).unwrap_or(0),
        };
        wptr > read
    }
}

/// Counters of the engine thread (for measurements and tests).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// Times the thread woke up (a poll timeout or a kick).
    pub wakeups: u64,
    /// Queue steps (one look at one queue's write pointer).
    pub polls: u64,
    /// Packets executed.
    pub packets: u64,
    /// Kicks received.
    pub kicks: u64,
}

#[derive(Debug, Default)]
struct Counters {
    wakeups: AtomicU64,
    polls: AtomicU64,
    packets: AtomicU64,
    kicks: AtomicU64,
}

struct Shared {
    queues: Mutex<Vec<Arc<HwQueue>>>,
    kicked: Mutex<bool>,
    cond: Condvar,
    quit: AtomicBool,
    trace: Trace,
    counters: Counters,
    /// The machine's open files (SMI clients).
    files: Files,
}

/// The machine's packet processors (see the module docs).
pub(crate) struct Engine {
    shared: Arc<Shared>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("queues", &lock(&self.shared.queues).len())
            .finish_non_exhaustive()
    }
}

impl Engine {
    pub fn new(trace: Trace, files: Files) -> Engine {
        Engine {
            shared: Arc::new(Shared {
                queues: Mutex::new(Vec::new()),
                kicked: Mutex::new(false),
                cond: Condvar::new(),
                quit: AtomicBool::new(false),
                trace,
                counters: Counters::default(),
                files,
            }),
            thread: Mutex::new(None),
        }
    }

    /// Starts serving `q` (starting the thread on first use).
    pub fn register(&self, q: Arc<HwQueue>) {
        lock(&self.shared.queues).push(q);
        let mut t = lock(&self.thread);
        if t.is_none() {
            let shared = self.shared.clone();
            *t = std::thread::Builder::new()
                .name("kfd-sim-engine".into())
                .spawn(move || run(shared))
                .ok();
        }
        drop(t);
        self.kick();
    }

    /// Stops serving `q`.
    pub fn unregister(&self, q: &Arc<HwQueue>) {
        lock(&self.shared.queues).retain(|x| !Arc::ptr_eq(x, q));
        self.kick();
    }

    /// Wakes the engine at once (a doorbell ring, a waiter going to sleep).
    pub fn kick(&self) {
        self.shared.counters.kicks.fetch_add(1, Ordering::Relaxed);
        *lock(&self.shared.kicked) = true;
        self.shared.cond.notify_one();
    }

    /// The thread's counters.
    pub fn stats(&self) -> EngineStats {
        let c = &self.shared.counters;
        EngineStats {
            wakeups: c.wakeups.load(Ordering::Relaxed),
            polls: c.polls.load(Ordering::Relaxed),
            packets: c.packets.load(Ordering::Relaxed),
            kicks: c.kicks.load(Ordering::Relaxed),
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shared.quit.store(true, Ordering::Release);
        self.kick();
        if let Some(t) = lock(&self.thread).take() {
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }
}

/// The back-off after `idle` without any packet executed.
fn poll_interval(idle: Duration) -> Duration {
    if idle >= DEEP_IDLE_AFTER {
        DEEP_POLL
    } else {
        (idle / 16).clamp(MIN_POLL, MAX_POLL)
    }
}

fn run(shared: Arc<Shared>) {
    crate::preload::enter_sim_thread();
    let mut idle_since = Instant::now();
    while !shared.quit.load(Ordering::Acquire) {
        let queues = lock(&shared.queues).clone();
        let mut ran = false;
        let mut live = false;
        for q in &queues {
            shared.counters.polls.fetch_add(1, Ordering::Relaxed);
            match step(&shared, q) {
                Progress::Ran => ran = true,
                Progress::Idle | Progress::Blocked => live = true,
                Progress::Stopped => {}
            }
        }
        drop(queues);
        if ran {
            idle_since = Instant::now();
            continue;
        }
        let mut kicked = lock(&shared.kicked);
        if !*kicked {
            let timeout = live.then(|| poll_interval(idle_since.elapsed()));
            kicked = match timeout {
                Some(t) => {
                    shared
                        .cond
                        .wait_timeout(kicked, t)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
                None => shared.cond.wait(kicked).unwrap_or_else(|e| e.into_inner()),
            };
        }
        if *kicked {
            idle_since = Instant::now();
        }
        *kicked = false;
        drop(kicked);
        shared.counters.wakeups.fetch_add(1, Ordering::Relaxed);
    }
}

/// Everything a packet processor works with.
pub(crate) struct QueueCtx<'a> {
    pub hw: &'a HwQueue,
    pub proc: &'a Arc<Process>,
    pub vm: GpuVm<'a>,
    pub run: &'a mut RunState,
    trace: &'a Trace,
    packets: &'a AtomicU64,
    /// The machine's open files, for SMI events.
    pub files: &'a Files,
}

impl QueueCtx<'_> {
    /// Writes one engine trace line (`KFD_SIM_TRACE`).
    pub fn trace(&self, text: impl FnOnce() -> String) {
        if let Some(w) = lock(self.trace).as_mut() {
            let _ = writeln!(
                w,
                "[engine] gpu={:#x} q={} {} {}",
                self.hw.gpu_id,
                self.hw.queue_id,
                self.hw.kind.name(),
                text()
            );
            let _ = w.flush();
        }
    }

    /// Writes a trace line about the packet at the read index, once: not
    /// again while that packet keeps waiting.
    pub fn trace_packet(&self, text: impl FnOnce() -> String) {
        if !self.run.blocked {
            self.trace(text);
        }
    }

    /// The write pointer and the read position at the start of a step:
    /// the position the engine kept, else the read pointer in memory (a
    /// dword index in 32 bits for PM4, a dword-aligned byte offset for
    /// SDMA, a packet index for AQL). A PM4 or SDMA write pointer behind
    /// the read position (a ring reset) restarts there. A fault is
    /// reported and gives `None`.
    pub fn ring_pointers(&mut self) -> Option<(u64, u64)> {
        let kind = self.hw.kind;
        let mask = if kind == Kind::Sdma { !3 } else { !0 };
        let read = match self.run.read {
            Some(r) => Ok(r),
            None if kind == Kind::Pm4 => self.vm.read_u32(self.hw.rptr).map(u64::from),
            None => self.vm.read_u64(self.hw.rptr),
        };
        match self.vm.read_u64(self.hw.wptr).and_then(|w| Ok((w, read?))) {
            Ok((w, r)) => {
                let (wptr, mut read) = (w & mask, r & mask);
                if wptr < read && kind != Kind::Aql {
                    read = wptr;
                }
                self.run.last_wptr = wptr;
                self.run.read = Some(read);
                Some((wptr, read))
            }
            Err(f) => {
                report::vm_fault(self, f);
                None
            }
        }
    }

    /// Records the packet before `read` as executed: the read position
    /// moves past it, the queue no longer waits, and it is counted.
    pub fn packet_done(&mut self, read: u64) {
        self.run.read = Some(read);
        self.run.blocked = false;
        self.run.packets += 1;
        self.packets.fetch_add(1, Ordering::Relaxed);
    }

    /// Applies a packet's outcome inside a step loop ([`report::settle`]):
    /// `Ok` when it completed, else the step's result after `ran`
    /// packets (the packet waits for memory, or the queue stopped).
    pub fn settle(&mut self, o: report::Outcome, ran: u32) -> Result<(), Progress> {
        match report::settle(self, o) {
            report::Outcome::Done => Ok(()),
            report::Outcome::Blocked => {
                self.run.blocked = true;
                Err(if ran > 0 {
                    Progress::Ran
                } else {
                    Progress::Blocked
                })
            }
            _ => Err(Progress::Stopped),
        }
    }
}

use std::io::Write as _;

fn step(shared: &Shared, hw: &HwQueue) -> Progress {
    if hw.stopped() {
        return Progress::Stopped;
    }
    let Some(proc) = hw.proc.upgrade() else {
        return Progress::Stopped;
    };
    let mut ex = lock(&hw.exec);
    if hw.stopped() {
        return Progress::Stopped;
    }
    let Exec { run, pages } = &mut *ex;
    let mut q = QueueCtx {
        hw,
        proc: &proc,
        vm: GpuVm {
            proc: &proc,
            dev: hw.dev,
            pages,
        },
        run,
        trace: &shared.trace,
        packets: &shared.counters.packets,
        files: &shared.files,
    };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match hw.kind {
        Kind::Aql => aql::step(&mut q, BUDGET),
        Kind::Pm4 => pm4::step(&mut q, BUDGET),
        Kind::Sdma => sdma::step(&mut q, BUDGET),
    }));
    match r {
        Ok(p) => p,
        Err(_) => {
            q.trace(|| "engine panic: queue stopped".into());
            hw.set_stop(stop::ERROR, true);
            Progress::Stopped
        }
    }
}

/// The GPU's 100 MHz reference clock (what `GET_CLOCK_COUNTERS` reports):
/// the timestamp source of `RELEASE_MEM`, `COPY_DATA`, SDMA `TIMESTAMP`
/// and AQL profiling.
pub(crate) fn gpu_clock() -> u64 {
    super::dispatch::now_ns(libc::CLOCK_MONOTONIC_RAW) / 10
}
