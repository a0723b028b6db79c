//! `HsaKFDContext *` for C: a registry of live context handles.
//!
//! C callers only ever hold `HsaKFDContext *` values; the type is opaque
//! to them and the border never dereferences one. Every `Ctx` function
//! looks the pointer up here first:
//!
//! - the **primary** context has one stable handle for the life of the
//!   process ([`primary_ptr`]), as the C library's static
//!   `hsakmt_primary_kfd_ctx` has; it is valid while the primary is open;
//! - each **secondary** context gets a fresh handle when it is opened: a
//!   cell token of a process-global `HandleTable` (`crate::state`): the
//!   address of a small zeroed cell that is never freed (C may read or
//!   write through it, as through the C library's context struct), so
//!   it is never reused and a stale pointer stays unknown forever
//!   instead of naming somebody else's context.
//!
//! Statuses (the C library has no defined behaviour for bad context
//! pointers; these are our choices):
//!
//! - the KFD open check comes first, and it is process-global as the C
//!   library's `CHECK_KFD_OPEN`: while the primary is closed (or in a
//!   forked child before it reopens), every `Ctx` call, on any context,
//!   returns `KERNEL_IO_CHANNEL_NOT_OPENED` (20);
//! - then NULL, unknown or closed context pointers give
//!   `INVALID_PARAMETER` (3), the status `hsaKmtCloseSecondaryKFDCtx`
//!   returns for them in C;
//! - a secondary context inherited across `fork()` gives 20: its
//!   descriptor belongs to the parent's kernel process.

use std::ops::Deref;
use std::sync::{Mutex, MutexGuard};

pub use hsakmt_sys::newest::HsaKFDContext;
use kfd_context::{primary, Context, ContextId};
use kfd_sys::sync::lock;

use crate::border::{st, KmtResult, Status};
use crate::state::{HandleTable, Token};

/// The storage the primary's handle points at (never read or written by
/// us). Its bytes sit in an `UnsafeCell`, so the static lives in
/// writable memory: a C caller that writes through the primary handle
/// (the C library's context is a writable struct) scribbles on these
/// bytes instead of faulting on read-only data.
#[repr(C, align(16))]
struct HandleCell(std::cell::UnsafeCell<[u8; 16]>);

// SAFETY: Rust code never reads or writes the bytes; only the address is
// used.
unsafe impl Sync for HandleCell {}

static PRIMARY: HandleCell = HandleCell(std::cell::UnsafeCell::new([0; 16]));

static SECONDARIES: Mutex<HandleTable<Context>> = Mutex::new(HandleTable::cells());

fn secondaries() -> MutexGuard<'static, HandleTable<Context>> {
    lock(&SECONDARIES)
}

/// The primary context's handle (stable for the process lifetime).
pub fn primary_ptr() -> *mut HsaKFDContext {
    std::ptr::addr_of!(PRIMARY) as *mut HsaKFDContext
}

/// The context an export body works on: the primary, borrowed (no lock,
/// no reference-count change: [`primary::current`]), or a secondary's own
/// reference. Held for the call only.
#[derive(Debug)]
pub enum CtxRef {
    /// The primary context.
    Primary(primary::Primary),
    /// A secondary context.
    Secondary(Context),
}

impl Deref for CtxRef {
    type Target = Context;

    fn deref(&self) -> &Context {
        match self {
            CtxRef::Primary(p) => p,
            CtxRef::Secondary(c) => c,
        }
    }
}

/// The open primary, borrowed; `closed` when it is not open here.
#[inline(always)]
fn open_primary(closed: Status) -> KmtResult<CtxRef> {
    primary::current().map(CtxRef::Primary).map_err(|_| closed)
}

/// The C library's `CHECK_KFD_OPEN`: the primary context must be open in
/// this process (a forked child sees it closed).
#[inline]
pub fn check_open() -> KmtResult {
    if !primary::is_open() {
        Err(st::NOT_OPENED)
    } else {
        Ok(())
    }
}

/// Looks a handle up without the open check.
pub fn lookup(ctx: *mut HsaKFDContext) -> KmtResult<CtxRef> {
    if ctx == primary_ptr() {
        return open_primary(st::NOT_OPENED);
    }
    if ctx.is_null() {
        return Err(st::INVALID_PARAMETER);
    }
    match secondaries().get(Token::from_ptr(ctx)) {
        Ok(c) if c.is_inherited() => Err(st::NOT_OPENED),
        Ok(c) => Ok(CtxRef::Secondary(c.clone())),
        Err(_) => Err(st::INVALID_PARAMETER),
    }
}

/// The open check, then the handle lookup: the prologue of every `Ctx`
/// function that has `CHECK_KFD_OPEN` in C. For the primary handle both
/// are one look at the primary slot (it is open exactly when it is found).
#[inline(always)]
pub fn resolve(ctx: *mut HsaKFDContext) -> KmtResult<CtxRef> {
    if ctx == primary_ptr() {
        return open_primary(st::NOT_OPENED);
    }
    check_open()?;
    lookup(ctx)
}

/// [`resolve`] for the functions the C library may export without
/// `CHECK_KFD_OPEN`: when `unchecked` (a switch of the profile's
/// [`crate::profile::Unchecked`]), the primary context while KFD is
/// closed gives `closed` (what the C library ends up returning with no
/// open descriptor and no topology snapshot) instead of 20.
#[inline(always)]
pub fn resolve_unless(
    ctx: *mut HsaKFDContext,
    unchecked: bool,
    closed: Status,
) -> KmtResult<CtxRef> {
    if unchecked && ctx == primary_ptr() {
        return open_primary(closed);
    }
    resolve(ctx)
}

/// The primary context for legacy functions that have no `Ctx` form.
pub fn primary() -> KmtResult<CtxRef> {
    resolve(primary_ptr())
}

/// Registers a new secondary context and returns its handle; the
/// context back once the process has used up its handles (2^44 - 1).
pub fn register_secondary(c: Context) -> Result<*mut HsaKFDContext, Context> {
    secondaries().insert(c).map(Token::as_ptr)
}

/// The live secondary context with this identity, if any.
pub fn secondary_by_id(id: ContextId) -> Option<Context> {
    secondaries()
        .find(|c| c.id() == id && !c.is_inherited())
        .map(|(_, c)| c.clone())
}

/// Removes a secondary context's handle; returns the context, or `None`
/// if the pointer is not a live secondary handle.
pub fn unregister_secondary(ctx: *mut HsaKFDContext) -> Option<Context> {
    secondaries().remove(Token::from_ptr(ctx)).ok()
}

/// Closes a context removed from the registry: teardown, unless it was
/// inherited from a fork parent (its kernel objects are the parent's;
/// they are left alone, as for the primary).
pub fn teardown(c: Context) {
    crate::amdgpu::forget_context(c.id());
    #[cfg(feature = "newest")]
    crate::bo::forget_context(c.id());
    if c.is_inherited() {
        std::mem::forget(c);
    } else {
        c.close();
    }
}
