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
//! kernel refuses in another process (`EBADF`). Opening and closing (rare,
//! and the only calls that change the slot) also compare the pid recorded
//! at open with `getpid`, as the C library's `hsaKmtOpenKFD` does, so
//! such a child reopens a context of its own and its closes release only
//! the inherited references. If the handler cannot be registered, every
//! lookup compares pids (one `getpid` each).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once};

use kfd_sys::{Driver, NixDriver};
use kfd_topology::Topology;

use crate::context::{Context, ContextKind};
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

struct Slot {
    /// The context: open while `count > 0`; kept after the last close
    /// with [`ContextOptions::keep_after_close`].
    ctx: Option<Context>,
    count: u64,
    /// References a forked child inherited from its parent (see
    /// [`release_inherited`]).
    inherited: u64,
    /// The topology snapshot the next first open adopts (see
    /// [`open_with`]): the last context's when it was closed, or, in a
    /// forked child, the one of the context inherited from the parent.
    /// The C library's snapshot is process-global and outlives both a
    /// close and a fork; only ReleaseSystemProperties drops it
    /// ([`forget_snapshot`]).
    kept_topology: Option<Arc<Topology>>,
    /// The process and the fork generation the context was opened in.
    pid: u32,
    generation: u64,
    driver: Option<Arc<dyn Driver>>,
}

static SLOT: Mutex<Slot> = Mutex::new(Slot {
    ctx: None,
    count: 0,
    inherited: 0,
    kept_topology: None,
    pid: 0,
    generation: 0,
    driver: None,
});

/// Forks this process went through (counted in each child by the
/// `pthread_atfork` child handler; a child inherits its parent's count).
static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);
/// The child handler is registered.
static ATFORK_REGISTERED: AtomicBool = AtomicBool::new(false);
static ATFORK: Once = Once::new();

/// Runs in the child after `fork()`: one atomic add, async-signal-safe.
extern "C" fn after_fork_in_child() {
    FORK_GENERATION.fetch_add(1, Ordering::Relaxed);
}

fn register_fork_handler() {
    ATFORK.call_once(|| {
        // The handler only does an atomic add: allowed in the child of a
        // multithreaded fork.
        let ok = kfd_sys::process::on_fork_child(after_fork_in_child).is_ok();
        ATFORK_REGISTERED.store(ok, Ordering::Relaxed);
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

fn slot(check: ForkCheck) -> MutexGuard<'static, Slot> {
    let mut s = SLOT.lock().unwrap_or_else(|e| e.into_inner());
    if s.count > 0 || s.ctx.is_some() {
        let forked = s.generation != FORK_GENERATION.load(Ordering::Relaxed)
            || ((check == ForkCheck::Pid || !ATFORK_REGISTERED.load(Ordering::Relaxed))
                && s.pid != std::process::id());
        if forked {
            // A forked child: the inherited context belongs to the
            // parent's kernel process. Its descriptor must not be used (the
            // kernel answers EBADF) and tearing it down here would issue
            // ioctls on the parent's behalf, so it is left alone; the child
            // starts closed.
            if let Some(inherited) = s.ctx.take() {
                // The snapshot is plain memory, valid in the child: it is
                // kept, as the C library keeps its topology across fork.
                s.kept_topology = inherited.snapshot_unlocked();
                std::mem::forget(inherited);
            }
            s.inherited = s.count;
            s.count = 0;
        }
    }
    s
}

/// Sets the driver the primary context is opened with (default: the real
/// `/dev/kfd` through [`NixDriver`]). Fails when the primary is open.
pub fn set_driver(driver: Arc<dyn Driver>) -> Result<(), ContextError> {
    let mut s = slot(ForkCheck::Pid);
    if s.count > 0 {
        return Err(ContextError::AlreadyOpen);
    }
    // A context kept by its last close belongs to the old driver.
    let kept = s.ctx.take();
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
    register_fork_handler();
    let mut s = slot(ForkCheck::Pid);
    if let Some(ctx) = s.ctx.clone() {
        let how = if s.count > 0 {
            Opened::Again
        } else {
            // Kept by the last close: taken up again, as a first open.
            Opened::First
        };
        s.count += 1;
        return Ok((ctx, how));
    }
    let driver = s
        .driver
        .clone()
        .unwrap_or_else(|| Arc::new(NixDriver::new()) as Arc<dyn Driver>);
    let ctx = Context::open(driver, ContextKind::Primary, options)?;
    if let Some(topo) = s.kept_topology.take() {
        // The snapshot of the last context (5.2.3 and the newest library
        // keep theirs across CloseKFD), or a forked child's copy of its
        // parent's (openclose.c: the duplicated topology "is valid in the
        // child process so it is not cleared").
        ctx.adopt_topology(topo);
    }
    s.ctx = Some(ctx.clone());
    s.count = 1;
    s.inherited = 0;
    s.pid = std::process::id();
    s.generation = FORK_GENERATION.load(Ordering::Relaxed);
    Ok((ctx, Opened::First))
}

/// Drops one reference to the primary context; the last one tears it
/// down, unless the context was opened with
/// [`ContextOptions::keep_after_close`] (then it stays, closed, for the
/// next [`open`]).
pub fn close() -> Result<(), ContextError> {
    let mut s = slot(ForkCheck::Pid);
    if s.count == 0 {
        return Err(ContextError::NotOpen);
    }
    s.count -= 1;
    let keep = s.ctx.as_ref().is_some_and(|c| c.options().keep_after_close);
    if s.count == 0 && !keep {
        let ctx = s.ctx.take();
        s.kept_topology = ctx.as_ref().and_then(Context::snapshot_unlocked);
        drop(s);
        drop(ctx);
    }
    Ok(())
}

/// Tears down a primary context kept by its last close (nothing happens
/// if it is open or was not kept). For tests and for callers that want
/// the kernel objects gone before the process ends.
pub fn discard_closed() {
    let mut s = slot(ForkCheck::Pid);
    if s.count == 0 {
        let ctx = s.ctx.take();
        drop(s);
        drop(ctx);
    }
}

/// The primary context while it is closed but kept by its last close
/// ([`ContextOptions::keep_after_close`]): what a call that needs no open
/// KFD (ReleaseSystemProperties) still acts on, as the C library does.
pub fn kept() -> Option<Context> {
    let s = slot(ForkCheck::Generation);
    match (&s.ctx, s.count) {
        (Some(ctx), 0) => Some(ctx.clone()),
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
    let mut s = slot(ForkCheck::Pid);
    if s.count == 0 && s.inherited > 0 {
        s.inherited -= 1;
        true
    } else {
        false
    }
}

/// The primary context, if it is open in this process
/// ([`ContextError::NotOpen`] otherwise, also in a forked child that has
/// not reopened it). One lock and no system call: the open check and the
/// lookup of every call.
pub fn get() -> Result<Context, ContextError> {
    let s = slot(ForkCheck::Generation);
    match (&s.ctx, s.count) {
        (Some(ctx), n) if n > 0 => Ok(ctx.clone()),
        _ => Err(ContextError::NotOpen),
    }
}

/// How many times the primary context is open (0 in a forked child that
/// has not reopened it). No system call.
pub fn open_count() -> u64 {
    slot(ForkCheck::Generation).count
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a child sees after the atfork handler ran: the primary is
    /// closed without a system call, the parent's references count as
    /// inherited, and a reopen creates a context of its own.
    #[test]
    fn a_fork_generation_change_closes_the_primary() {
        let sim = kfd_sim::Sim::preset("mi210").unwrap();
        set_driver(Arc::new(sim)).unwrap();
        let (parent, first) = open().unwrap();
        assert_eq!(first, Opened::First);
        let snapshot = parent.acquire_system_properties().unwrap();
        open().unwrap();
        assert_eq!(open_count(), 2);
        after_fork_in_child();
        assert_eq!(open_count(), 0);
        assert!(matches!(get(), Err(ContextError::NotOpen)));
        // The parent's context is left alone (its kernel process is the
        // parent's): forget our handle on it too.
        std::mem::forget(parent);
        assert!(release_inherited());
        let (child, again) = open().unwrap();
        assert_eq!(again, Opened::First, "the child opens its own");
        // ... with the parent's snapshot (issue 17 item 9).
        assert!(Arc::ptr_eq(&child.topology().unwrap(), &snapshot));
        assert_eq!(open_count(), 1);
        assert!(!release_inherited(), "a reopen ends the inherited count");
        drop(child);
        close().unwrap();
        assert_eq!(open_count(), 0);
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
        drop(last);
        close().unwrap();
    }
}
