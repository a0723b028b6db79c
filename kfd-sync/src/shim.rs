//! What the protocols are built from: std's atomics and locks, or loom's
//! under `--cfg loom` (so the model checker sees every access).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread_local;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread_local;

/// The workspace's poison-ignoring lock (the protocols' lists stay
/// consistent across a panicking holder: each update is one push or
/// retain).
#[cfg(not(loom))]
pub(crate) use kfd_sys::sync::lock;

/// [`kfd_sys::sync::lock`] for loom's mutex.
#[cfg(loom)]
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
