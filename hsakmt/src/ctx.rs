//! `HsaKFDContext *` for C: a registry of live context handles.
//!
//! C callers only ever hold `HsaKFDContext *` values; the type is opaque
//! to them and the border never dereferences one. Every `Ctx` function
//! looks the pointer up here first:
//!
//! - the **primary** context has one stable handle for the life of the
//!   process ([`primary_ptr`]), as the C library's static
//!   `hsakmt_primary_kfd_ctx` has; it is valid while the primary is open;
//! - each **secondary** context gets a fresh handle when it is opened. The
//!   handle is a small leaked allocation, so its address is never reused
//!   by a later context: a stale pointer stays unknown forever instead of
//!   naming somebody else's context.
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

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::{Mutex, MutexGuard};

pub use hsakmt_sys::newest::HsaKFDContext;
use kfd_context::{primary, Context, ContextId};
use kfd_sys::sync::lock;

use crate::border::{st, KmtResult, Status};

/// The storage a handle points at (never read or written by us). Its
/// bytes sit in an `UnsafeCell`, so the static lives in writable memory:
/// a C caller that writes through the primary handle (the C library's
/// context is a writable struct) scribbles on these bytes instead of
/// faulting on read-only data.
#[repr(C, align(16))]
struct HandleCell(std::cell::UnsafeCell<[u8; 16]>);

// SAFETY: Rust code never reads or writes the bytes; only the address is
// used.
unsafe impl Sync for HandleCell {}

static PRIMARY: HandleCell = HandleCell(std::cell::UnsafeCell::new([0; 16]));

static SECONDARIES: Mutex<BTreeMap<usize, Context>> = Mutex::new(BTreeMap::new());

fn secondaries() -> MutexGuard<'static, BTreeMap<usize, Context>> {
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
#[inline]
fn open_primary(closed: Status) -> KmtResult<CtxRef> {
    primary::current().map(CtxRef::Primary).map_err(|_| closed)
}

/// The C library's `CHECK_KFD_OPEN`: the primary context must be open in
/// this process (a forked child sees it closed).
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
    match secondaries().get(&(ctx as usize)) {
        Some(c) if c.is_inherited() => Err(st::NOT_OPENED),
        Some(c) => Ok(CtxRef::Secondary(c.clone())),
        None => Err(st::INVALID_PARAMETER),
    }
}

/// The open check, then the handle lookup: the prologue of every `Ctx`
/// function that has `CHECK_KFD_OPEN` in C. For the primary handle both
/// are one look at the primary slot (it is open exactly when it is found).
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

/// Registers a new secondary context and returns its handle.
pub fn register_secondary(c: Context) -> *mut HsaKFDContext {
    let cell: &'static mut HandleCell =
        Box::leak(Box::new(HandleCell(std::cell::UnsafeCell::new([0; 16]))));
    let ptr = cell as *mut HandleCell as *mut HsaKFDContext;
    secondaries().insert(ptr as usize, c);
    ptr
}

/// The live secondary context with this identity, if any.
pub fn secondary_by_id(id: ContextId) -> Option<Context> {
    secondaries()
        .values()
        .find(|c| c.id() == id && !c.is_inherited())
        .cloned()
}

/// Removes a secondary context's handle; returns the context, or `None`
/// if the pointer is not a live secondary handle.
pub fn unregister_secondary(ctx: *mut HsaKFDContext) -> Option<Context> {
    secondaries().remove(&(ctx as usize))
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

/// What the border keeps per context for the C caller to read through
/// pointers it handed out: the metadata of imported graphics buffers,
/// the counter tables and trace buffers, and the C structs of events. It lives in the context
/// ([`Context::attached`]) and is dropped with it.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    pub memory: Mutex<crate::memory::Held>,
    pub perf: Mutex<crate::perf::Held>,
    pub events: Mutex<crate::events::Store>,
}

/// The border state of `c` ([`Kept`]). `ERROR` only if something else
/// attached a value of another type to the context first.
pub(crate) fn kept(c: &Context) -> KmtResult<&Kept> {
    c.attached::<Kept>().ok_or(st::ERROR)
}

/// Forgets what the border keeps for a closed context: its device
/// handles (a registry of ours, so a stale handle stays unknown) and, for
/// a primary context kept for the next open, its border state (the next
/// open starts without it, as a context made anew does).
pub fn forget_caches(c: &Context) {
    crate::amdgpu::forget_context(c.id());
    if let Ok(k) = kept(c) {
        *lock(&k.memory) = Default::default();
        *lock(&k.perf) = Default::default();
        *lock(&k.events) = Default::default();
    }
}
