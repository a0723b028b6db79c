//! The process-wide primary context: one per process, reference counted.
//!
//! This is the only global mutable state of kfd-rs. Opening increments the
//! count (the first open creates the context), closing decrements it (the
//! last close tears the context down, or, with
//! [`ContextOptions::keep_after_close`], keeps it closed for the next open
//! to take up). After `fork()`, the child sees the primary as closed and
//! must open it again, as with the C library; its first open keeps the
//! parent's topology snapshot (the C library keeps its topology across
//! fork), so the child may use nodes without acquiring the system
//! properties again. So does the open after a last close that tore the
//! context down: the C library's snapshot outlives CloseKFD.
//!
//! A last close while other threads are inside calls on the context (or
//! hold it, or one of its sub-contexts) unpublishes it at once; the last
//! of those references tears it down when it goes. A first open meanwhile
//! waits (up to two seconds) until the old context's `/dev/kfd`
//! descriptor is closed before it makes the next context: in the real
//! kernel as in the simulator a process has one KFD process per address
//! space, which lives while any of its descriptors is open, and the new
//! context's `ACQUIRE_VM` is refused (`EBUSY`) while the old one still
//! holds the GPU's VM.
//!
//! # Fork detection
//!
//! Every call of the C border looks the primary up, so the check must not
//! cost a system call (`getpid` is one: glibc no longer caches the pid).
//! The first open registers a `pthread_atfork` child handler that bumps a
//! fork generation; the slot remembers the generation it was opened in and
//! each lookup compares it with one atomic load, as the C library's
//! `hsakmt_forked` flag set by its own atfork handler.
//!
//! Trade-off: a child created without the atfork handlers (a raw
//! `clone`/`syscall(SYS_fork)`; `vfork` children may only exec or exit)
//! keeps the parent's generation, so lookups there still return the
//! inherited context; its ioctls go to the parent's descriptor, which the
//! kernel refuses in another process (`EBADF`). A first open and the
//! last close (the calls that create or tear down) also compare the pid
//! recorded at open with `getpid`, as the C library's `hsaKmtOpenKFD`
//! does on every open, so such a child's last close releases only the
//! inherited references and its next open makes a context of its own.
//! Nested opens and closes only count, with one atomic operation and no
//! lock (C takes its mutex and calls `getpid` for those too), so in such
//! a child they count on the inherited context. If the handler cannot be
//! registered, every lookup and every open and close compares pids (one
//! `getpid` each).

use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once};

use kfd_sync::{OpenCount, RcuCell, ReadGuard};
use kfd_sys::sync::lock;
use kfd_sys::{CloseWatch, Driver, NixDriver};
use kfd_topology::Topology;

use crate::context::{Context, ContextKind, KeptRead};
use crate::ContextError;
use crate::ContextOptions;

/// Whether [`open`] created the primary context or referenced it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// This open created the context (count went 0 → 1).
    First,
    /// The context was already open; the count was incremented (the C
    /// library returns `KERNEL_ALREADY_OPENED` here).
    Again,
}

/// The primary context of this process: all of its state, in one value
/// ([`PRIMARY`]).
///
/// The state machine is [`Phase`], changed only under the `slot` lock:
///
/// ```text
///            first open                 last close
///   Closed ─────────────► Open ◄──────► (nested opens and closes:
///     ▲  ▲                 │  │          `count` only, no lock)
///     │  │   last close    │  │ last close with keep_after_close
///     │  └─────────────────┘  ▼
///     │   discard_closed,   Kept ── first open ──► Open
///     │   set_driver         │
///     └──────────────────────┘
///   Open or Kept ── fork (seen by the next look at the slot) ──► Closed
///                   (inherited references counted, context forgotten)
/// ```
///
/// Beside the phase, readable without the lock: `count` (the C
/// library's `kfd_open_count`; above 0 exactly while the phase is
/// `Open`, moved between 1 and more by nested opens and closes without
/// the lock), `published` (the open context for every call's lookup, set
/// after each change of the phase), `open_generation` (the fork
/// generation of the open context) and the fork watch.
struct PrimaryState {
    slot: Mutex<Slot>,
    published: RcuCell<Published>,
    count: OpenCount,
    open_generation: AtomicU64,
    fork: ForkWatch,
}

/// Where the primary context is in its life (see [`PrimaryState`]).
enum Phase {
    /// No context in this process: never opened, torn down by its last
    /// close, or, in a forked child, the parent's left behind.
    Closed {
        /// References the child inherited from its parent (see
        /// [`release_inherited`]).
        inherited: u64,
        /// The descriptor of the last context torn down (or being torn
        /// down by whoever holds it last): the next first open waits for
        /// its close.
        retiring: Option<CloseWatch>,
    },
    /// Open (count above 0) in the process and fork generation it was
    /// opened in.
    Open(Owned),
    /// Closed by its last close but kept for the next open
    /// ([`ContextOptions::keep_after_close`]).
    Kept(Owned),
}

/// A context of the slot, with the process and fork generation it was
/// opened in.
struct Owned {
    ctx: Context,
    pid: u32,
    generation: u64,
}

struct Slot {
    phase: Phase,
    /// The topology snapshot the next first open adopts (see
    /// [`open_with`]): the last context's when it was closed, or, in a
    /// forked child, the one of the context inherited from the parent.
    /// The C library's snapshot is process-global and outlives both a
    /// close and a fork; only ReleaseSystemProperties drops it
    /// ([`forget_snapshot`]).
    kept_topology: Option<Arc<Topology>>,
    /// The topology reads the last context kept, with their options: the
    /// next first open reads the tree again only if the kernel's topology
    /// changed since (`Context::read_topology`).
    kept_read: Vec<KeptRead>,
    driver: Option<Arc<dyn Driver>>,
}

/// Forks this process went through, and the handler that counts them.
struct ForkWatch {
    /// Forks seen (counted in each child by the `pthread_atfork` child
    /// handler; a child inherits its parent's count).
    generation: AtomicU64,
    /// The child handler is registered.
    registered: AtomicBool,
    once: Once,
}

/// The primary context of this process (see [`PrimaryState`]).
static PRIMARY: PrimaryState = PrimaryState {
    slot: Mutex::new(Slot {
        phase: Phase::CLOSED,
        kept_topology: None,
        kept_read: Vec::new(),
        driver: None,
    }),
    published: RcuCell::new(),
    count: OpenCount::new(),
    open_generation: AtomicU64::new(0),
    fork: ForkWatch {
        generation: AtomicU64::new(0),
        registered: AtomicBool::new(false),
        once: Once::new(),
    },
};

/// The open primary context as lookups see it, with the fork generation
/// it was opened in.
struct Published {
    ctx: Context,
    generation: u64,
}

/// How long a first open waits for the teardown of a context whose last
/// close found it still referenced ([`open_counted`]).
const RETIRED_TEARDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

fn count() -> u64 {
    PRIMARY.count.get()
}

impl Phase {
    /// Closed, with nothing inherited and nothing retiring.
    const CLOSED: Phase = Phase::Closed {
        inherited: 0,
        retiring: None,
    };

    /// Closed after `ctx`, whose descriptor the next first open waits
    /// for.
    fn retiring(ctx: &Context) -> Phase {
        Phase::Closed {
            inherited: 0,
            retiring: Some(ctx.close_watch()),
        }
    }

    /// The phase, leaving [`Phase::CLOSED`] in its place.
    fn take(&mut self) -> Phase {
        std::mem::replace(self, Phase::CLOSED)
    }

    /// The context, open or kept.
    fn owned(&self) -> Option<&Owned> {
        match self {
            Phase::Open(o) | Phase::Kept(o) => Some(o),
            Phase::Closed { .. } => None,
        }
    }

    /// Leaves for `Closed`, the context taken out (to drop outside the
    /// lock), its descriptor watched by the next first open.
    fn close(&mut self) -> Option<Context> {
        if let Phase::Closed { .. } = self {
            return None;
        }
        let (Phase::Open(o) | Phase::Kept(o)) = self.take() else {
            unreachable!("not closed")
        };
        *self = Phase::retiring(&o.ctx);
        Some(o.ctx)
    }
}

impl Slot {
    /// Publishes what [`get`] answers now: the context while it is open
    /// in this process, nothing otherwise. Called under the slot's lock
    /// after every change of the phase (a first open, a last close, a
    /// fork), not on nested opens and closes.
    fn publish(&self) {
        let open = match &self.phase {
            Phase::Open(o) => Some(Arc::new(Published {
                ctx: o.ctx.clone(),
                generation: o.generation,
            })),
            _ => None,
        };
        PRIMARY.published.store(open);
    }
}

/// Runs in the child after `fork()`: one atomic add, async-signal-safe.
extern "C" fn after_fork_in_child() {
    PRIMARY.fork.generation.fetch_add(1, Ordering::Relaxed);
}

fn register_fork_handler() {
    let fork = &PRIMARY.fork;
    fork.once.call_once(|| {
        // The handler only does an atomic add: allowed in the child of a
        // multithreaded fork.
        let ok = kfd_sys::process::on_fork_child(after_fork_in_child).is_ok();
        fork.registered.store(ok, Ordering::Relaxed);
    });
}

/// How [`slot`] checks whether the context was opened by this process.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ForkCheck {
    /// The fork generation only (one atomic load): every lookup.
    Generation,
    /// The generation and the pid (`getpid`): opening and closing, so
    /// children made without the atfork handlers are caught there.
    Pid,
}

/// The slot, locked, after the fork check: a context opened before a
/// fork (in the parent) moves the phase to `Closed`.
fn slot(check: ForkCheck) -> MutexGuard<'static, Slot> {
    let mut s = lock(&PRIMARY.slot);
    let fork = &PRIMARY.fork;
    let forked = s.phase.owned().is_some_and(|o| {
        o.generation != fork.generation.load(Ordering::Relaxed)
            || ((check == ForkCheck::Pid || !fork.registered.load(Ordering::Relaxed))
                && o.pid != std::process::id())
    });
    if forked {
        // A forked child: the inherited context belongs to the parent's
        // kernel process. Its descriptor must not be used (the kernel
        // answers EBADF) and tearing it down here would issue ioctls on
        // the parent's behalf, so it is left alone; the child starts
        // closed. So is a context the parent was tearing down (never in
        // the phase a child sees as open): the child's copies of its
        // references are never dropped, and the child's own kernel
        // process is a new one anyway.
        let inherited = PRIMARY.count.take_locked();
        let old = std::mem::replace(
            &mut s.phase,
            Phase::Closed {
                inherited,
                retiring: None,
            },
        );
        if let Phase::Open(o) | Phase::Kept(o) = old {
            // The snapshot is plain memory, valid in the child: it is
            // kept, as the C library keeps its topology across fork.
            (s.kept_topology, s.kept_read) = o.ctx.topology_unlocked();
            std::mem::forget(o.ctx);
        }
        // The published copy is the parent's too: never dropped here.
        PRIMARY.published.forget();
    }
    s
}

/// Sets the driver the primary context is opened with (default: the real
/// `/dev/kfd` through [`NixDriver`]). Fails when the primary is open.
pub fn set_driver(driver: Arc<dyn Driver>) -> Result<(), ContextError> {
    let mut s = slot(ForkCheck::Pid);
    if matches!(s.phase, Phase::Open(_)) {
        return Err(ContextError::AlreadyOpen);
    }
    // A context kept by its last close belongs to the old driver, and so
    // does what it read.
    let kept = s.phase.close();
    s.kept_read.clear();
    s.driver = Some(driver);
    drop(s);
    drop(kept);
    Ok(())
}

/// Opens the primary context, or references it again if it is open.
pub fn open() -> Result<(Context, Opened), ContextError> {
    open_with(ContextOptions::from_env())
}

/// [`open`] with explicit options (used only when this open creates the
/// context: a context kept by the last close is taken up with its own).
pub fn open_with(options: ContextOptions) -> Result<(Context, Opened), ContextError> {
    open_with_lazy(|| options)
}

/// [`open_with`], the options made only when this open creates the
/// context (reading them from the environment costs more than a nested
/// open).
pub fn open_with_lazy(
    options: impl FnOnce() -> ContextOptions,
) -> Result<(Context, Opened), ContextError> {
    open_counted(options, Context::clone, |c| c)
}

/// [`open_with_lazy`] for a caller that needs the context only from the
/// open that makes it current (`Some`, with [`Opened::First`]): a nested
/// open only counts, takes no reference and gives `None`
/// ([`Opened::Again`]), as cheap as the C library's nested open.
pub fn open_first_with_lazy(
    options: impl FnOnce() -> ContextOptions,
) -> Result<(Option<Context>, Opened), ContextError> {
    if open_nested() {
        return Ok((None, Opened::Again));
    }
    open_counted(options, |_| None, Some)
}

/// Whether the nested fast paths may count: the primary was opened in
/// this fork generation and the fork handler is registered (else a fork
/// could have happened unseen, and only the slot's checks tell).
fn nested_ok() -> bool {
    let fork = &PRIMARY.fork;
    fork.registered.load(Ordering::Relaxed)
        && PRIMARY.open_generation.load(Ordering::Relaxed)
            == fork.generation.load(Ordering::Relaxed)
}

/// A nested open without the slot's lock and without `getpid`: counts
/// one more open of a primary that is open (at least once) in this fork
/// generation; false (nothing counted) when it is not, for the slot's
/// way to decide. The C library's nested open takes its lock and calls
/// `getpid`; the trade-off is the one of every lookup (module docs): a
/// child made without the fork handlers counts its nested opens on the
/// context it inherited (its first open and last close still compare
/// pids).
fn open_nested() -> bool {
    nested_ok() && PRIMARY.count.open_nested()
}

/// A nested close the same way: counts one open fewer when more than one
/// is left, and returns how many are; `None` for the slot's way (the last
/// close, or a fork the slot has not seen yet).
fn close_nested() -> Option<u64> {
    if nested_ok() {
        PRIMARY.count.close_nested()
    } else {
        None
    }
}

/// The open of [`open_with_lazy`]: what a nested open gives is
/// `nested`'s of the open context, what a first open gives `first`'s.
fn open_counted<T>(
    options: impl FnOnce() -> ContextOptions,
    nested: impl FnOnce(&Context) -> T,
    first: impl FnOnce(Context) -> T,
) -> Result<(T, Opened), ContextError> {
    register_fork_handler();
    let mut s = slot(ForkCheck::Pid);
    let waited = match &mut s.phase {
        Phase::Closed { retiring, .. } => retiring.take().filter(|w| !w.is_closed()),
        _ => None,
    };
    if let Some(old) = waited {
        // The last close found the context still referenced (a caller
        // inside a call, a lookup's own reference, a sub-context kept by
        // the layer above): the last of them tears it down when it lets
        // go. A new context made before then would have its ACQUIRE_VM
        // refused (EBUSY: the old one still holds the GPU's VM; see the
        // module docs), so wait for that close, without the lock (the
        // teardown may take it), for a bounded time (a caller may sit in
        // an infinite wait): after that the open is tried anyway.
        drop(s);
        wait_closed(&old, RETIRED_TEARDOWN_WAIT);
        s = slot(ForkCheck::Pid);
    }
    match &s.phase {
        Phase::Open(o) => {
            // Open, and it stays open while the lock is held.
            let again = nested(&o.ctx);
            PRIMARY.count.open_again_locked();
            return Ok((again, Opened::Again));
        }
        Phase::Kept(_) => {
            // Kept by the last close: taken up again, as a first open,
            // and published from now on (a nested open changes nothing
            // lookups see).
            let Phase::Kept(o) = s.phase.take() else {
                unreachable!("matched above")
            };
            let ctx = o.ctx.clone();
            PRIMARY
                .open_generation
                .store(o.generation, Ordering::Relaxed);
            s.phase = Phase::Open(o);
            PRIMARY.count.open_first_locked();
            s.publish();
            return Ok((first(ctx), Opened::First));
        }
        Phase::Closed { .. } => {}
    }
    let driver = s
        .driver
        .clone()
        .unwrap_or_else(|| Arc::new(NixDriver::new()) as Arc<dyn Driver>);
    let ctx = Context::open(driver, ContextKind::Primary, options())?;
    // The snapshot of the last context (5.2.3 and the newest library
    // keep theirs across CloseKFD), or a forked child's copy of its
    // parent's (openclose.c: the duplicated topology "is valid in the
    // child process so it is not cleared"), and the reads kept with it.
    ctx.adopt_topology(s.kept_topology.take(), std::mem::take(&mut s.kept_read));
    let generation = PRIMARY.fork.generation.load(Ordering::Relaxed);
    // A reopen ends the inherited count.
    s.phase = Phase::Open(Owned {
        ctx: ctx.clone(),
        pid: std::process::id(),
        generation,
    });
    PRIMARY.open_generation.store(generation, Ordering::Relaxed);
    PRIMARY.count.open_first_locked();
    s.publish();
    Ok((first(ctx), Opened::First))
}

/// Drops one reference to the primary context; the last one tears it
/// down, unless the context was opened with
/// [`ContextOptions::keep_after_close`] (then it stays, closed, for the
/// next [`open`]). Returns how many references are left.
pub fn close() -> Result<u64, ContextError> {
    if let Some(left) = close_nested() {
        return Ok(left);
    }
    let mut s = slot(ForkCheck::Generation);
    if count() <= 1 {
        // Only the last close tears anything down: a child made without
        // the fork handlers is caught here, by pid, before it could touch
        // its parent's context (a nested close only counts, as C's).
        drop(s);
        s = slot(ForkCheck::Pid);
    }
    if !matches!(s.phase, Phase::Open(_)) {
        return Err(ContextError::NotOpen);
    }
    // Nested opens may come and go meanwhile, but only this lock's
    // holder takes the count to 0.
    let left = PRIMARY.count.close_locked();
    if left > 0 {
        return Ok(left);
    }
    let Phase::Open(o) = s.phase.take() else {
        unreachable!("matched above")
    };
    if o.ctx.options().keep_after_close {
        s.phase = Phase::Kept(o);
        s.publish();
        return Ok(0);
    }
    s.phase = Phase::retiring(&o.ctx);
    s.publish();
    (s.kept_topology, s.kept_read) = o.ctx.topology_unlocked();
    drop(s);
    drop(o);
    Ok(0)
}

/// Waits until `file` is closed or `limit` has passed.
fn wait_closed(file: &CloseWatch, limit: std::time::Duration) {
    let start = std::time::Instant::now();
    while !file.is_closed() && start.elapsed() < limit {
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
}

/// Tears down a primary context kept by its last close (nothing happens
/// if it is open or was not kept). For tests and for callers that want
/// the kernel objects gone before the process ends.
pub fn discard_closed() {
    let mut s = slot(ForkCheck::Pid);
    if matches!(s.phase, Phase::Kept(_)) {
        let ctx = s.phase.close();
        drop(s);
        drop(ctx);
    }
}

/// The primary context while it is closed but kept by its last close
/// ([`ContextOptions::keep_after_close`]): what a call that needs no open
/// KFD (ReleaseSystemProperties) still acts on, as the C library does.
pub fn kept() -> Option<Context> {
    match &slot(ForkCheck::Generation).phase {
        Phase::Kept(o) => Some(o.ctx.clone()),
        _ => None,
    }
}

/// Drops the snapshot kept for the next open (ReleaseSystemProperties
/// while the primary is closed: the C library drops its snapshot then).
pub fn forget_snapshot() {
    slot(ForkCheck::Generation).kept_topology = None;
}

/// In a forked child that has not reopened the primary: drops one of the
/// references inherited from the parent and returns true (the C
/// library's close succeeds there, decrementing the inherited count);
/// false when there is none left. Nothing is torn down: the inherited
/// context belongs to the parent.
pub fn release_inherited() -> bool {
    match &mut slot(ForkCheck::Pid).phase {
        Phase::Closed { inherited, .. } if *inherited > 0 => {
            *inherited -= 1;
            true
        }
        _ => false,
    }
}

/// The primary context, if it is open in this process
/// ([`ContextError::NotOpen`] otherwise, also in a forked child that has
/// not reopened it). One lock and no system call: the open check and the
/// lookup of every call.
pub fn get() -> Result<Context, ContextError> {
    match &slot(ForkCheck::Generation).phase {
        Phase::Open(o) => Ok(o.ctx.clone()),
        _ => Err(ContextError::NotOpen),
    }
}

/// How many times the primary context is open (0 in a forked child that
/// has not reopened it). No system call.
pub fn open_count() -> u64 {
    let _fork_checked = slot(ForkCheck::Generation);
    count()
}

/// The open primary context, borrowed: what [`current`] returns.
/// It keeps the context alive while it lives (a close meanwhile tears
/// the context down only when the last `Primary` of it is dropped), so
/// hold it for one call, not across calls.
pub struct Primary(Held);

enum Held {
    /// Borrowed from the published pointer.
    Published(ReadGuard<'static, Published>),
    /// A reference of its own (the slow path: no fork handler).
    Owned(Context),
}

impl Deref for Primary {
    type Target = Context;

    fn deref(&self) -> &Context {
        match &self.0 {
            Held::Published(g) => &g.ctx,
            Held::Owned(c) => c,
        }
    }
}

impl fmt::Debug for Primary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Primary").field(&**self).finish()
    }
}

/// Whether the published primary is this process's: opened in the
/// current fork generation, with the fork handler registered.
#[inline]
fn valid(p: &Published) -> bool {
    let fork = &PRIMARY.fork;
    p.generation == fork.generation.load(Ordering::Relaxed)
        && fork.registered.load(Ordering::Relaxed)
}

/// [`get`] without the slot's lock and without a reference-count change
/// while the primary is open in this process: one load of the published
/// pointer and one of the fork generation. In a forked child, or without
/// the fork handler, this takes [`get`]'s way.
#[inline(always)]
pub fn current() -> Result<Primary, ContextError> {
    match PRIMARY.published.read() {
        Some(g) if valid(&g) => return Ok(Primary(Held::Published(g))),
        None if closed_for_sure() => return Err(ContextError::NotOpen),
        _ => {}
    }
    get().map(|c| Primary(Held::Owned(c)))
}

/// Nothing is published and the fork handler is registered: the primary
/// is closed in this process (every open publishes before it returns, and
/// a forked child's first look at the slot finds it closed too), so
/// calls on a closed primary take no lock, as C's `CHECK_KFD_OPEN` reads
/// its count without one. (Threads calling in a loop on a closed primary
/// kept the slot's lock so busy that an open on another thread could
/// wait on it for minutes.)
/// `read` also gives `None` where the thread cannot mark itself (its
/// thread-locals are gone: calls from exit handlers, as ROCr's teardown
/// makes), so the cell itself must be empty too.
fn closed_for_sure() -> bool {
    PRIMARY.fork.registered.load(Ordering::Relaxed) && PRIMARY.published.is_empty()
}

/// Whether the primary context is open in this process (`open_count() >
/// 0`), without the slot's lock while it is or while nothing is
/// published.
pub fn is_open() -> bool {
    match PRIMARY.published.read() {
        Some(p) if valid(&p) => return true,
        None if closed_for_sure() => return false,
        _ => {}
    }
    open_count() > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a child sees after the atfork handler ran: the primary is
    /// closed without a system call, the parent's references count as
    /// inherited, and a reopen creates a context of its own.
    /// The tests share the process's primary: one at a time.
    static SERIAL: Mutex<()> = Mutex::new(());

    /// Nested opens and closes on two threads, racing each other without
    /// the lock: every one is counted once, and the last close still
    /// tears the context down.
    #[test]
    fn nested_opens_and_closes_count_without_the_lock() {
        let _serial = lock(&SERIAL);
        let sim = kfd_sim::Sim::preset("mi210").unwrap();
        set_driver(Arc::new(sim)).unwrap();
        let (first, how) = open_first_with_lazy(ContextOptions::default).unwrap();
        assert_eq!(how, Opened::First);
        let first = first.expect("a first open hands out the context");
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..20_000 {
                        let (none, how) = open_first_with_lazy(|| unreachable!("nested")).unwrap();
                        assert!(none.is_none() && how == Opened::Again);
                        assert!(close().unwrap() >= 1, "never the last close");
                    }
                });
            }
        });
        assert_eq!(open_count(), 1);
        let published = current().unwrap();
        assert!(Context::same(&published, &first));
        drop((published, first));
        assert_eq!(close().unwrap(), 0);
        assert!(matches!(current(), Err(ContextError::NotOpen)));
        assert!(matches!(close(), Err(ContextError::NotOpen)));
        assert_eq!(open_count(), 0);
    }

    #[test]
    fn a_fork_generation_change_closes_the_primary() {
        let _serial = lock(&SERIAL);
        let sim = kfd_sim::Sim::preset("mi210").unwrap();
        set_driver(Arc::new(sim)).unwrap();
        let (parent, first) = open().unwrap();
        assert_eq!(first, Opened::First);
        let snapshot = parent.acquire_system_properties().unwrap();
        open().unwrap();
        assert_eq!(open_count(), 2);
        // A nested open that wants no context: counted, no reference
        // taken, no options made.
        let strong = Arc::strong_count(&parent.inner);
        let (none, again) =
            open_first_with_lazy(|| unreachable!("a nested open makes no options")).unwrap();
        assert!(none.is_none());
        assert_eq!(again, Opened::Again);
        assert_eq!(open_count(), 3);
        assert_eq!(Arc::strong_count(&parent.inner), strong, "no reference");
        assert_eq!(close().unwrap(), 2);
        let borrowed = current().unwrap();
        assert!(
            matches!(borrowed.0, Held::Published(_)),
            "the lock-free way"
        );
        assert!(Context::same(&borrowed, &parent));
        drop(borrowed);
        assert!(is_open());
        after_fork_in_child();
        // The published context is the parent's: the generation check
        // refuses it before the slot is even looked at.
        assert!(matches!(current(), Err(ContextError::NotOpen)));
        assert!(!is_open());
        assert_eq!(open_count(), 0);
        assert!(matches!(get(), Err(ContextError::NotOpen)));
        // The parent's context is left alone (its kernel process is the
        // parent's): forget our handle on it too.
        std::mem::forget(parent);
        assert!(release_inherited());
        let (child, again) = open().unwrap();
        assert_eq!(again, Opened::First, "the child opens its own");
        assert!(Context::same(&current().unwrap(), &child));
        // ... with the parent's snapshot (issue 17 item 9).
        assert!(Arc::ptr_eq(&child.topology().unwrap(), &snapshot));
        assert_eq!(open_count(), 1);
        assert!(!release_inherited(), "a reopen ends the inherited count");
        drop(child);
        close().unwrap();
        assert_eq!(open_count(), 0);
        assert!(matches!(current(), Err(ContextError::NotOpen)), "closed");
        // The snapshot outlives the last close, until it is forgotten.
        let (again, _) = open().unwrap();
        assert!(Arc::ptr_eq(&again.topology().unwrap(), &snapshot));
        drop(again);
        close().unwrap();
        // Release while closed: the kept context drops its snapshot, and
        // so does the slot.
        kept()
            .expect("kept by the close")
            .release_system_properties();
        forget_snapshot();
        let (last, _) = open().unwrap();
        assert!(last.topology().is_err());
        // The tree is not read again: the kernel's topology is the one
        // the parent's context read.
        let reread = last.acquire_system_properties().unwrap();
        assert!(Arc::ptr_eq(&reread, &snapshot));
        drop(last);
        close().unwrap();
    }
}
