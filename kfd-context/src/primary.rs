//! The process-wide primary context: one per process, reference counted.
//!
//! This is the only global mutable state of kfd-rs. Opening increments the
//! count (the first open creates the context), closing decrements it (the
//! last close tears the context down). After `fork()`, the child sees the
//! primary as closed and must open it again, as with the C library.

use std::sync::{Arc, Mutex, MutexGuard};

use kfd_sys::{Driver, NixDriver};

use crate::context::{Context, ContextKind};
use crate::ContextError;
use crate::ContextOptions;

/// Whether [`open`] created the primary context or referenced it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// This open created the context (count went 0 → 1).
    First,
    /// The context was already open; the count was incremented (the C
    /// library returns `HSAKMT_STATUS_KERNEL_ALREADY_OPENED` here).
    Again,
}

struct Slot {
    ctx: Option<Context>,
    count: u64,
    /// References a forked child inherited from its parent (see
    /// [`release_inherited`]).
    inherited: u64,
    pid: u32,
    driver: Option<Arc<dyn Driver>>,
}

static SLOT: Mutex<Slot> = Mutex::new(Slot {
    ctx: None,
    count: 0,
    inherited: 0,
    pid: 0,
    driver: None,
});

fn slot() -> MutexGuard<'static, Slot> {
    let mut s = SLOT.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    if s.count > 0 && s.pid != pid {
        // A forked child: the inherited context belongs to the parent's
        // kernel process. Its descriptor must not be used (the kernel
        // answers EBADF) and tearing it down here would issue ioctls on the
        // parent's behalf, so it is left alone; the child starts closed.
        if let Some(inherited) = s.ctx.take() {
            std::mem::forget(inherited);
        }
        s.inherited = s.count;
        s.count = 0;
    }
    s
}

/// Sets the driver the primary context is opened with (default: the real
/// `/dev/kfd` through [`NixDriver`]). Fails when the primary is open.
pub fn set_driver(driver: Arc<dyn Driver>) -> Result<(), ContextError> {
    let mut s = slot();
    if s.count > 0 {
        return Err(ContextError::AlreadyOpen);
    }
    s.driver = Some(driver);
    Ok(())
}

/// Opens the primary context, or references it again if it is open.
pub fn open() -> Result<(Context, Opened), ContextError> {
    open_with(ContextOptions::from_env())
}

/// [`open`] with explicit options (used only when this open creates it).
pub fn open_with(options: ContextOptions) -> Result<(Context, Opened), ContextError> {
    let mut s = slot();
    if s.count > 0 {
        if let Some(ctx) = s.ctx.clone() {
            s.count += 1;
            return Ok((ctx, Opened::Again));
        }
    }
    let driver = s
        .driver
        .clone()
        .unwrap_or_else(|| Arc::new(NixDriver::new()) as Arc<dyn Driver>);
    let ctx = Context::open(driver, ContextKind::Primary, options)?;
    s.ctx = Some(ctx.clone());
    s.count = 1;
    s.inherited = 0;
    s.pid = std::process::id();
    Ok((ctx, Opened::First))
}

/// Drops one reference to the primary context; the last one tears it down.
pub fn close() -> Result<(), ContextError> {
    let mut s = slot();
    if s.count == 0 {
        return Err(ContextError::NotOpen);
    }
    s.count -= 1;
    if s.count == 0 {
        let ctx = s.ctx.take();
        drop(s);
        drop(ctx);
    }
    Ok(())
}

/// In a forked child that has not reopened the primary: drops one of the
/// references inherited from the parent and returns true (the C
/// library's close succeeds there, decrementing the inherited count);
/// false when there is none left. Nothing is torn down: the inherited
/// context belongs to the parent.
pub fn release_inherited() -> bool {
    let mut s = slot();
    if s.count == 0 && s.inherited > 0 {
        s.inherited -= 1;
        true
    } else {
        false
    }
}

/// The primary context, if it is open in this process.
pub fn get() -> Result<Context, ContextError> {
    let s = slot();
    match (&s.ctx, s.count) {
        (Some(ctx), n) if n > 0 => Ok(ctx.clone()),
        _ => Err(ContextError::NotOpen),
    }
}

/// How many times the primary context is open.
pub fn open_count() -> u64 {
    slot().count
}
