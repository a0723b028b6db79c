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
//! A token is the address of a small heap cell, freed with the last
//! reference (a stale token is unknown, or, once the allocator reuses the
//! address, another buffer's: the C library's freed `amdgpu_bo` behaves
//! the same). It is never dereferenced: [`lookup`] finds it in the table.
//! A closed secondary context's buffers are dropped with it.

use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard};

use kfd_context::ContextId;
use kfd_fmm::GemBuffer;
use kfd_sys::sync::lock;

use crate::amdgpu::Owner;

/// What a token's cell holds (never read).
#[repr(C, align(16))]
struct Cell([u8; 16]);

struct Entry {
    cell: *mut Cell,
    owner: Owner,
    minor: u32,
    buf: Arc<GemBuffer>,
    refs: u32,
}

// SAFETY: `cell` is only compared and, at removal, freed under the table's
// lock; it is never dereferenced.
unsafe impl Send for Entry {}

static BOS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn bos() -> MutexGuard<'static, Vec<Entry>> {
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
/// handle, else a new one.
pub fn insert(owner: Owner, minor: u32, buf: GemBuffer) -> *mut c_void {
    let mut t = bos();
    if let Some(e) = t
        .iter_mut()
        .find(|e| e.owner == owner && e.minor == minor && e.buf.handle() == buf.handle())
    {
        e.refs += 1;
        buf.into_duplicate();
        return e.cell.cast();
    }
    let cell = Box::into_raw(Box::new(Cell([0; 16])));
    t.push(Entry {
        cell,
        owner,
        minor,
        buf: Arc::new(buf),
        refs: 1,
    });
    cell.cast()
}

/// The buffer behind a token, if it is a live one.
pub fn lookup(token: *const c_void) -> Option<Bo> {
    bos()
        .iter()
        .find(|e| e.cell as *const c_void == token)
        .map(|e| Bo {
            owner: e.owner,
            minor: e.minor,
            buf: e.buf.clone(),
        })
}

/// Drops one reference of a token (the last one closes the buffer, once
/// no call still uses it); false if the token is not live.
pub fn release(token: *const c_void) -> bool {
    let mut t = bos();
    let Some(i) = t.iter().position(|e| e.cell as *const c_void == token) else {
        return false;
    };
    t[i].refs -= 1;
    if t[i].refs == 0 {
        let e = t.swap_remove(i);
        // SAFETY: made by `Box::into_raw` in `insert` and removed from the
        // table, under its lock, before being freed: freed exactly once.
        drop(unsafe { Box::from_raw(e.cell) });
    }
    true
}

/// Drops the buffers of a closed secondary context.
pub(crate) fn forget_context(id: ContextId) {
    let mut t = bos();
    let mut i = 0;
    while i < t.len() {
        if t[i].owner == Owner::Secondary(id) {
            let e = t.swap_remove(i);
            // SAFETY: as in `release`.
            drop(unsafe { Box::from_raw(e.cell) });
        } else {
            i += 1;
        }
    }
}
