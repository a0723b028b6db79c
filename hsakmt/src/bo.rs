//! `HsaMemoryObjectHandle`: the buffer handles of the DRM-handle layer
//! (`hsaKmtHandleImport` and the calls that take its result).
//!
//! The C library hands out libdrm_amdgpu `amdgpu_bo_handle`s. kfd-rs does
//! not use libdrm_amdgpu, so a handle is an opaque token of ours for one
//! [`GemBuffer`] of one context's render node, with libdrm_amdgpu's
//! reference counting: importing a buffer the render node already has a
//! handle for gives the same token with one more reference, and each
//! `hsaKmtMemHandleFree(PreserveMetadata)` drops one; the last closes the
//! GEM handle.
//!
//! A token is one of a process-global `HandleTable` (`crate::state`):
//! never a pointer, never reused, so once its last reference is freed it
//! is unknown for good instead of naming a later buffer (the C library's
//! freed `amdgpu_bo` may be reused by the allocator; this is where ours
//! differs on purpose). [`lookup`] finds it in the table. A closed
//! secondary context's buffers are dropped with it.

use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard};

use kfd_context::ContextId;
use kfd_fmm::GemBuffer;
use kfd_sys::sync::lock;

use crate::amdgpu::Owner;
use crate::state::{HandleTable, Tag, Token};

struct Entry {
    owner: Owner,
    minor: u32,
    buf: Arc<GemBuffer>,
    refs: u32,
}

static BOS: Mutex<HandleTable<Entry>> = Mutex::new(HandleTable::tagged(Tag::MEMORY_OBJECT));

fn bos() -> MutexGuard<'static, HandleTable<Entry>> {
    lock(&BOS)
}

/// One buffer a token names.
#[derive(Debug, Clone)]
pub struct Bo {
    /// The context the buffer was imported into.
    pub owner: Owner,
    /// Its render node.
    pub minor: u32,
    /// The buffer.
    pub buf: Arc<GemBuffer>,
}

/// The token for `buf` of `owner`'s render node `minor`: an existing one
/// (one more reference) when that render node already gave the same GEM
/// handle, else a new one; `None` (the buffer dropped) once the process
/// has used up its buffer tokens (2^44 - 1).
pub fn insert(owner: Owner, minor: u32, buf: GemBuffer) -> Option<*mut c_void> {
    let mut t = bos();
    if let Some((token, e)) =
        t.find_mut(|e| e.owner == owner && e.minor == minor && e.buf.handle() == buf.handle())
    {
        e.refs += 1;
        buf.into_duplicate();
        return Some(token.as_ptr());
    }
    let e = Entry {
        owner,
        minor,
        buf: Arc::new(buf),
        refs: 1,
    };
    t.insert(e).ok().map(Token::as_ptr)
}

/// The buffer behind a token, if it is a live one.
pub fn lookup(token: *const c_void) -> Option<Bo> {
    bos().get(Token::from_ptr(token)).ok().map(|e| Bo {
        owner: e.owner,
        minor: e.minor,
        buf: e.buf.clone(),
    })
}

/// Drops one reference of a token (the last one closes the buffer, once
/// no call still uses it); false if the token is not live.
pub fn release(token: *const c_void) -> bool {
    let token = Token::from_ptr(token);
    let mut t = bos();
    let Ok(e) = t.get_mut(token) else {
        return false;
    };
    e.refs -= 1;
    if e.refs == 0 {
        let _ = t.remove(token);
    }
    true
}

/// Drops the buffers of a closed secondary context.
pub(crate) fn forget_context(id: ContextId) {
    bos().retain(|e| e.owner != Owner::Secondary(id));
}
