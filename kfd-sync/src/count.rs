//! An open count whose nested opens and closes take no lock: the count of
//! a reference-counted resource (the primary KFD context) that a lock
//! creates and tears down.
//!
//! The protocol: the count goes from 0 to 1 (the first open, which
//! creates the resource) and from 1 to 0 (the last close, which tears it
//! down) only while the owner's lock is held. Between those, a nested
//! open moves it from `n >= 1` to `n + 1` and a nested close from
//! `n >= 2` to `n - 1`, each with one compare-exchange and no lock; a
//! close that would reach 0 is refused there and taken under the lock.
//! So a lock holder that sees the count at 1 knows no nested open can
//! sneak in between its look and its tear-down: a nested open that
//! succeeded made the count at least 2, and the lock holder's decrement
//! then leaves it at 1 or more. The loom model
//! `a_nested_open_never_sees_the_resource_torn_down` checks this.
//!
//! The `_locked` methods are for the lock holder only; the type cannot
//! check that (it does not own the lock), so each says so.

use crate::shim::{AtomicU64, Ordering};

/// The open count (see the module docs).
#[derive(Debug)]
pub struct OpenCount(AtomicU64);

impl Default for OpenCount {
    fn default() -> Self {
        OpenCount(AtomicU64::new(0))
    }
}

impl OpenCount {
    /// A count of 0 (closed), for statics.
    #[cfg(not(loom))]
    pub const fn new() -> OpenCount {
        OpenCount(AtomicU64::new(0))
    }

    /// The count now. Without the lock it can change at once, but never
    /// to or from 0.
    #[inline]
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    /// A nested open without the lock: counts one more open if the count
    /// is at least 1, and returns whether it did (else the caller takes
    /// the lock: this would be a first open).
    #[inline]
    pub fn open_nested(&self) -> bool {
        self.step(1, |n| n + 1).is_some()
    }

    /// A nested close without the lock: counts one open fewer if at
    /// least two are counted, and returns how many are left; `None` when
    /// this would be the last close (the caller takes the lock).
    #[inline]
    pub fn close_nested(&self) -> Option<u64> {
        self.step(2, |n| n - 1)
    }

    /// Moves the count from `n` to `step(n)` if `n >= least`, with one
    /// compare-exchange per try; returns the new count.
    fn step(&self, least: u64, step: impl Fn(u64) -> u64) -> Option<u64> {
        let mut n = self.0.load(Ordering::Acquire);
        while n >= least {
            match self
                .0
                .compare_exchange_weak(n, step(n), Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Some(step(n)),
                Err(now) => n = now,
            }
        }
        None
    }

    /// The first open, by the lock holder: the count becomes 1.
    pub fn open_first_locked(&self) {
        self.0.store(1, Ordering::Release);
    }

    /// One more open, by the lock holder, of a resource that is open.
    pub fn open_again_locked(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }

    /// One open fewer, by the lock holder, of a resource that is open;
    /// returns how many are left (0: the caller tears it down, still
    /// holding the lock or after letting go of the resource).
    pub fn close_locked(&self) -> u64 {
        self.0.fetch_sub(1, Ordering::AcqRel) - 1
    }

    /// Sets the count to 0, by the lock holder, and returns what it was
    /// (a forked child's view of its parent's opens).
    pub fn take_locked(&self) -> u64 {
        self.0.swap(0, Ordering::AcqRel)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn nested_steps_never_cross_zero() {
        let c = OpenCount::new();
        assert!(!c.open_nested(), "closed: a first open takes the lock");
        assert_eq!(c.close_nested(), None);
        c.open_first_locked();
        assert!(c.open_nested());
        assert_eq!(c.get(), 2);
        assert_eq!(c.close_nested(), Some(1));
        assert_eq!(c.close_nested(), None, "the last close takes the lock");
        c.open_again_locked();
        assert_eq!(c.close_locked(), 1);
        assert_eq!(c.close_locked(), 0);
        c.open_first_locked();
        assert_eq!(c.take_locked(), 1);
        assert_eq!(c.get(), 0);
    }

    /// Two threads open and close nested 20k times each against a held
    /// first open: every step is counted once.
    #[test]
    fn concurrent_nested_steps_are_each_counted() {
        let c = OpenCount::new();
        c.open_first_locked();
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..20_000 {
                        assert!(c.open_nested());
                        assert!(c.close_nested().is_some_and(|n| n >= 1));
                    }
                });
            }
        });
        assert_eq!(c.get(), 1);
    }
}
