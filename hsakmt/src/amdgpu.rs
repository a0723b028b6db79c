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
//!   it knows (reading through it reads zeros);
//! - a cell token of a process-global `HandleTable` (`crate::state`):
//!   the address of a small cell that is never freed, so never reused:
//!   a stale handle (its secondary context closed) is unknown forever
//!   instead of naming another context's device, and a handle of
//!   another kind is not a device handle. That is 16 bytes per render
//!   node per secondary context that asks.

use std::sync::{Mutex, MutexGuard};

use kfd_context::ContextId;
use kfd_sys::sync::lock;

use crate::state::{HandleTable, Token};

/// Whose render node a handle names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The primary context, whichever open of it is current.
    Primary,
    /// One secondary context.
    Secondary(ContextId),
}

/// What a device handle names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Device {
    owner: Owner,
    minor: u32,
}

static HANDLES: Mutex<HandleTable<Device>> = Mutex::new(HandleTable::cells());

fn handles() -> MutexGuard<'static, HandleTable<Device>> {
    lock(&HANDLES)
}

/// The handle of render node `minor` of `owner`, made on first use;
/// `None` once the process has used up its device handles (2^44 - 1).
pub fn handle(owner: Owner, minor: u32) -> Option<*mut std::ffi::c_void> {
    let d = Device { owner, minor };
    let mut h = handles();
    let token = match h.find(|e| *e == d) {
        Some((token, _)) => token,
        None => h.insert(d).ok()?,
    };
    Some(token.as_ptr())
}

/// The owner and render minor of a handle [`handle`] made, if it is one
/// whose context was not closed since.
pub fn lookup(handle: *const std::ffi::c_void) -> Option<(Owner, u32)> {
    handles()
        .get(Token::from_ptr(handle))
        .ok()
        .map(|d| (d.owner, d.minor))
}

/// Forgets the handles of a closed secondary context.
pub(crate) fn forget_context(id: ContextId) {
    handles().retain(|d| d.owner != Owner::Secondary(id));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_stable_distinct_and_forgotten_with_their_context() {
        let a = handle(Owner::Primary, 128).unwrap();
        assert_eq!(handle(Owner::Primary, 128), Some(a));
        let b = handle(Owner::Primary, 129).unwrap();
        let s = handle(Owner::Secondary(ContextId(77)), 128).unwrap();
        assert!(a != b && a != s && b != s);
        assert_eq!(lookup(s), Some((Owner::Secondary(ContextId(77)), 128)));
        forget_context(ContextId(77));
        assert_eq!(lookup(s), None);
        assert_eq!(lookup(a), Some((Owner::Primary, 128)));
        // A new handle never reuses a forgotten one's token.
        assert_ne!(handle(Owner::Secondary(ContextId(78)), 128), Some(s));
        assert_eq!(lookup(std::ptr::null()), None);
    }
}
