//! `HsaAMDGPUDeviceHandle`: what `hsaKmtGetAMDGPUDeviceHandle` hands out.
//!
//! The C library returns the `amdgpu_device_handle` that libdrm_amdgpu
//! made when the memory manager opened the GPU's render node, so that the
//! runtime can call libdrm_amdgpu on the same device. kfd-rs does not use
//! libdrm_amdgpu: its memory manager opens the render nodes itself. The
//! handle is therefore an opaque token of ours:
//!
//! - one per context and render node, the same for every call; for the
//!   primary context also across close and reopen, as the C library's
//!   per-render-minor handle array (which outlives its close);
//! - never dereferenced, by us or (the API's contract) by the caller
//!   except through libdrm_amdgpu entry points, which only our own shims
//!   may serve: [`lookup`] turns a handle back into its context and render
//!   minor (`hsaKmtGetAmdGPUDeviceFd` uses it), and nothing else accepts
//!   it. A handle given to the system's libdrm_amdgpu is not a device
//!   it knows;
//! - the address of a small cell that is never freed, so that a later
//!   handle can never have the address of an earlier one: a stale handle
//!   (its secondary context closed) is unknown forever instead of naming
//!   another context's device. That is 16 bytes per render node per
//!   secondary context that asks, the price ctx.rs pays for context
//!   handles too.

use std::sync::{Mutex, MutexGuard};

use kfd_context::ContextId;
use kfd_sys::sync::lock;

/// Whose render node a handle names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The primary context, whichever open of it is current.
    Primary,
    /// One secondary context.
    Secondary(ContextId),
}

/// The storage a handle points at (never read or written).
#[repr(C, align(16))]
struct HandleCell([u8; 16]);

struct Entry {
    owner: Owner,
    minor: u32,
    cell: usize,
}

static HANDLES: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn handles() -> MutexGuard<'static, Vec<Entry>> {
    lock(&HANDLES)
}

/// The handle of render node `minor` of `owner`, made on first use.
pub fn handle(owner: Owner, minor: u32) -> *mut std::ffi::c_void {
    let mut h = handles();
    if let Some(e) = h.iter().find(|e| e.owner == owner && e.minor == minor) {
        return e.cell as *mut std::ffi::c_void;
    }
    let cell: &'static mut HandleCell = Box::leak(Box::new(HandleCell([0; 16])));
    let cell = cell as *mut HandleCell as usize;
    h.push(Entry { owner, minor, cell });
    cell as *mut std::ffi::c_void
}

/// The owner and render minor of a handle [`handle`] made, if it is one
/// whose context was not closed since.
pub fn lookup(handle: *const std::ffi::c_void) -> Option<(Owner, u32)> {
    handles()
        .iter()
        .find(|e| e.cell == handle as usize)
        .map(|e| (e.owner, e.minor))
}

/// Forgets the handles of a closed secondary context.
pub(crate) fn forget_context(id: ContextId) {
    handles().retain(|e| e.owner != Owner::Secondary(id));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_stable_distinct_and_forgotten_with_their_context() {
        let a = handle(Owner::Primary, 128);
        assert_eq!(handle(Owner::Primary, 128), a);
        let b = handle(Owner::Primary, 129);
        let s = handle(Owner::Secondary(ContextId(77)), 128);
        assert!(a != b && a != s && b != s);
        assert_eq!(lookup(s), Some((Owner::Secondary(ContextId(77)), 128)));
        forget_context(ContextId(77));
        assert_eq!(lookup(s), None);
        assert_eq!(lookup(a), Some((Owner::Primary, 128)));
        // A new handle never reuses a forgotten one's address.
        assert_ne!(handle(Owner::Secondary(ContextId(78)), 128), s);
        assert_eq!(lookup(std::ptr::null()), None);
    }
}
