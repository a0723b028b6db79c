//! The GPU's packet processors: a software model of the command processor
//! (AQL and PM4 queues) and the SDMA engines consuming user-mode queues;
//! kernel dispatches go to the shader machine ([`crate::shader`]).
//!
//! # Layering
//!
//! This is hardware: it knows the queue ABI (`kfd_sys::hsa`, the KFD
//! exception codes) and two interfaces the driver model hands each queue
//! ([`HwQueue::new`]): [`VmAccess`], the queue's GPU memory (translated
//! once per span, then accessed without system calls), and
//! [`InterruptSink`], where end-of-pipe and signal interrupts, queue
//! errors and VM faults go. What an interrupt means for events, debuggers,
//! the runtime and evictions is the driver model's business (kfd-sim's
//! `gpu_port`), as it is the kernel's interrupt handler's on hardware.
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
//! the explicit doorbell ring (kfd-sim's `Sim::ring_doorbell`, the C
//! border's `kfd_sim_ring_doorbell`).
//!
//! A queue stops on destroy, on `UPDATE_QUEUE` to 0 % (or a zero ring), on
//! a debugger's suspend, after an error it raised and after a GPU memory
//! fault of its process; destroy and suspend wait until the engine is out
//! of the queue's current packet. Read pointers are written back like the
//! hardware does (AQL: the 64-bit `read_dispatch_id`; PM4: the 32-bit
//! dword offset into the ring; SDMA: the 64-bit monotonic byte offset).

mod aql;
mod dispatch;
mod pm4;
mod report;
mod sdma;

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use kfd_sys::kfd::*;

use crate::mem::{Fault, GpuMemoryDebug, Tlb};
pub use report::QueueError;

/// Where engine trace lines go (`KFD_SIM_TRACE`): shared with the driver
/// model's ioctl trace.
pub type Trace = Arc<Mutex<Option<Box<dyn std::io::Write + Send>>>>;

use kfd_sys::sync::lock;

/// The GPU VM a queue's engine works in, as the driver model hands it to
/// the hardware: for each step of work, a view of the memory (translated
/// once per span, see [`crate::mem`]) that stays valid while the view
/// lives.
pub trait VmAccess: Send + Sync {
    /// The queue's GPU memory for one step; `None` when its process is
    /// gone.
    fn memory(&self) -> Option<Box<dyn GpuMemoryDebug + '_>>;
}

/// A hardware interrupt a queue's engine raises.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interrupt {
    /// An end-of-pipe or signal interrupt (`RELEASE_MEM` with an
    /// interrupt, SDMA `TRAP`, a completion signal with an event
    /// mailbox): context id and how many of its bits are valid.
    Signal {
        /// The context id (an event id).
        ctx_id: u32,
        /// Valid bits of `ctx_id`.
        valid_bits: u32,
    },
    /// The queue stopped on an error (`EC_*` exception code).
    QueueError {
        /// The exception code.
        ec: u32,
    },
    /// A GPU memory fault in the queue's VM.
    VmFault(Fault),
}

/// Where hardware interrupts go: the driver model's interrupt handler.
pub trait InterruptSink: Send + Sync {
    /// Handles `irq` raised by queue `queue`. For a queue error, returns
    /// true when the driver delivered the exception itself (to a debugger
    /// or the runtime); otherwise the CP writes its own report to an AQL
    /// queue's `queue_inactive_signal`. The return value means nothing for
    /// other interrupts.
    fn interrupt(&self, queue: &HwQueue, irq: Interrupt) -> bool;
}

/// The clocks the engines read.
#[derive(Debug, Clone, Copy)]
pub struct Clocks {
    /// The GPU's 100 MHz reference counter (`RELEASE_MEM`, `COPY_DATA`,
    /// SDMA `TIMESTAMP`, AQL profiling, `s_memtime`): what
    /// `GET_CLOCK_COUNTERS` reports.
    pub gpu: fn() -> u64,
    /// The system clock in nanoseconds (`COPY_DATA` source 10).
    pub system: fn() -> u64,
}

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
pub enum Kind {
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

/// Why a queue does not run (the bits of [`HwQueue::stop_bits`]).
pub mod stop {
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

/// What the hardware knows of a queue when it is mapped (the MQD's
/// fields the engines use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueDesc {
    /// KFD queue id.
    pub queue_id: u32,
    /// gpu_id of its device (for trace lines).
    pub gpu_id: u32,
    /// `gfx_target_version` of the device.
    pub gfx_version: u32,
    /// The packet processor.
    pub kind: Kind,
    /// Ring address and size in bytes.
    pub ring: (u64, u64),
    /// Read pointer address.
    pub rptr: u64,
    /// Write pointer address.
    pub wptr: u64,
    /// Flat-address apertures of LDS and private memory (kernel
    /// dispatches).
    pub apertures: (u64, u64),
    /// Whether it runs from the start (the kernel's `is_active`).
    pub active: bool,
}

/// The engine's view of one user-mode queue (the hardware queue
/// descriptor).
pub struct HwQueue {
    /// KFD queue id.
    pub queue_id: u32,
    /// gpu_id of its device.
    pub gpu_id: u32,
    /// `gfx_target_version` of the device.
    pub gfx_version: u32,
    /// The packet processor.
    pub kind: Kind,
    /// Read pointer address.
    pub rptr: u64,
    /// Write pointer address.
    pub wptr: u64,
    /// LDS and private apertures.
    pub apertures: (u64, u64),
    vm: Arc<dyn VmAccess>,
    irq: Arc<dyn InterruptSink>,
    stop: AtomicU32,
    exec: Mutex<RunState>,
}

impl std::fmt::Debug for HwQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HwQueue")
            .field("queue_id", &self.queue_id)
            .field("gpu_id", &self.gpu_id)
            .field("kind", &self.kind)
            .field("stop", &self.stop_bits())
            .finish_non_exhaustive()
    }
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
    /// The hardware queue for `d`, working in the memory `vm` gives and
    /// raising its interrupts to `irq`.
    pub fn new(d: QueueDesc, vm: Arc<dyn VmAccess>, irq: Arc<dyn InterruptSink>) -> HwQueue {
        HwQueue {
            queue_id: d.queue_id,
            gpu_id: d.gpu_id,
            gfx_version: d.gfx_version,
            kind: d.kind,
            rptr: d.rptr,
            wptr: d.wptr,
            apertures: d.apertures,
            vm,
            irq,
            stop: AtomicU32::new(if d.active { 0 } else { stop::INACTIVE }),
            exec: Mutex::new(RunState {
                ring_base: d.ring.0,
                ring_size: d.ring.1,
                ..RunState::default()
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
        let mut run = lock(&self.exec);
        run.ring_base = ring_base;
        run.ring_size = ring_size;
        drop(run);
        self.set_stop(stop::INACTIVE, !active);
    }

    /// True when the queue holds packets it has not consumed (its write
    /// pointer is past the engine's read index). Reads the pointers
    /// through the queue's memory; call without holding locks the memory
    /// takes.
    pub fn busy(&self) -> bool {
        if self.stop_bits() & stop::DESTROYED != 0 {
            return false;
        }
        let run = lock(&self.exec);
        let Some(mem) = self.vm.memory() else {
            return false;
        };
        let mut tlb = Tlb::new(&*mem);
        let Ok(wptr) = tlb.load::<u64>(self.wptr) else {
            return false;
        };
        let read = match (run.read, self.kind) {
            (Some(r), _) => r,
            (None, Kind::Pm4) => tlb.load::<u32>(self.rptr).map_or(0, u64::from),
            (None, _) => tlb.load::<u64>(self.rptr).unwrap_or(0),
        };
        wptr > read
    }

    /// Raises `irq` to the driver model (see [`InterruptSink`]).
    pub(crate) fn raise(&self, irq: Interrupt) -> bool {
        self.irq.interrupt(self, irq)
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
    clocks: Clocks,
    on_thread_start: fn(),
    code: crate::shader::CodeCache,
}

/// The machine's packet processors (see the module docs).
pub struct Engine {
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
    /// An engine writing trace lines to `trace`, reading `clocks`; its
    /// thread calls `on_thread_start` first (the LD_PRELOAD layer marks
    /// the thread as the simulator's own there).
    pub fn new(trace: Trace, clocks: Clocks, on_thread_start: fn()) -> Engine {
        Engine {
            shared: Arc::new(Shared {
                queues: Mutex::new(Vec::new()),
                kicked: Mutex::new(false),
                cond: Condvar::new(),
                quit: AtomicBool::new(false),
                trace,
                counters: Counters::default(),
                clocks,
                on_thread_start,
                code: crate::shader::CodeCache::new(),
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
    (shared.on_thread_start)();
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
pub(crate) struct QueueCtx<'a, 'm> {
    pub hw: &'a HwQueue,
    pub mem: &'m dyn GpuMemoryDebug,
    pub vm: Tlb<'m>,
    pub run: &'a mut RunState,
    pub clocks: Clocks,
    pub code: &'a crate::shader::CodeCache,
    trace: &'a Trace,
    packets: &'a AtomicU64,
}

impl QueueCtx<'_, '_> {
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
            None if kind == Kind::Pm4 => self.vm.load::<u32>(self.hw.rptr).map(u64::from),
            None => self.vm.load::<u64>(self.hw.rptr),
        };
        match self
            .vm
            .load::<u64>(self.hw.wptr)
            .and_then(|w| Ok((w, read?)))
        {
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

fn step(shared: &Shared, hw: &HwQueue) -> Progress {
    if hw.stopped() {
        return Progress::Stopped;
    }
    let mut run = lock(&hw.exec);
    if hw.stopped() {
        return Progress::Stopped;
    }
    let Some(mem) = hw.vm.memory() else {
        return Progress::Stopped;
    };
    let mut q = QueueCtx {
        hw,
        mem: &*mem,
        vm: Tlb::new(&*mem),
        run: &mut run,
        clocks: shared.clocks,
        code: &shared.code,
        trace: &shared.trace,
        packets: &shared.counters.packets,
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
