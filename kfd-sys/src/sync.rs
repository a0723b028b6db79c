//! Locking as every crate of the workspace does it.
//!
//! One fact, declared once: a lock whose holder panicked is still taken.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, ignoring poisoning.
///
/// A thread that panics while holding a lock must not make the library
/// unusable for every other thread (a C caller cannot catch the panic and
/// would see each later call fail). Each critical section that takes a
/// lock keeps the guarded state consistent at every point where it could
/// panic, so the state a poisoned lock hands over is as good as any.
///
/// # Example
///
/// ```
/// use std::sync::{Arc, Mutex};
///
/// let m = Arc::new(Mutex::new(1));
/// let held = m.clone();
/// let _ = std::thread::spawn(move || {
///     let _g = held.lock().unwrap();
///     panic!("poisons the lock");
/// })
/// .join();
/// assert!(m.is_poisoned());
/// *kfd_sys::sync::lock(&m) += 1;
/// assert_eq!(*kfd_sys::sync::lock(&m), 2);
/// ```
pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
