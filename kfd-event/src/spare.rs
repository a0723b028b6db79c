//! Per-thread spare vectors for waits on many events.
//!
//! A wait on more events than fit on the stack needs two arrays of one
//! entry per event: the resolved wait list ([`crate::WaitList`]) and the
//! kernel's event data. For a wait on 64 events they are 1 KiB and
//! 1.5 KiB, above glibc's per-thread cache of small chunks, so each wait
//! took two trips through `malloc`'s slow path and two frees. Instead
//! each thread keeps the last of each, emptied, for its next wait: a
//! runtime waiting on the same many signals over and over allocates
//! nothing after its first wait. A vector taken while the thread's spare
//! is out (a wait inside a wait) is a new one, and a vector that grew
//! past [`KEEP_AT_MOST`] entries is freed, not kept.

use std::cell::Cell;
use std::thread::LocalKey;

/// The most entries a thread's spare vector keeps (24 KiB of event data,
/// 16 KiB of wait list).
pub(crate) const KEEP_AT_MOST: usize = 1024;

/// A per-thread spare vector (declared with `thread_local!`).
pub(crate) type Spare<T> = LocalKey<Cell<Vec<T>>>;

/// The thread's spare vector, empty and with room for `n` entries, or a
/// new one if the spare is out or the thread is exiting.
pub(crate) fn take<T: 'static>(spare: &'static Spare<T>, n: usize) -> Vec<T> {
    let mut v = spare.try_with(Cell::take).unwrap_or_default();
    v.reserve(n);
    v
}

/// Keeps `v`, emptied, as the thread's spare, unless it holds room for
/// more than [`KEEP_AT_MOST`] entries (then it is freed).
pub(crate) fn give_back<T: 'static>(spare: &'static Spare<T>, mut v: Vec<T>) {
    if v.capacity() <= KEEP_AT_MOST {
        v.clear();
        // At thread exit the spare is gone: `v` is dropped instead.
        let _ = spare.try_with(move |c| c.set(v));
    }
}

/// The capacity of the thread's spare vector (tests: is it kept?).
#[cfg(test)]
pub(crate) fn spare_capacity<T: 'static>(spare: &'static Spare<T>) -> usize {
    spare.with(|c| {
        let v = c.take();
        let cap = v.capacity();
        c.set(v);
        cap
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static NUMBERS: Cell<Vec<u64>> = const { Cell::new(Vec::new()) };
    }

    /// A vector given back comes back, empty, to the next taker on the
    /// thread; one taken while it is out is a new one; a big one is not
    /// kept.
    #[test]
    fn spares_come_back_empty_and_small() {
        let mut a = take(&NUMBERS, 20);
        a.extend(0..20);
        let first = a.as_ptr();
        give_back(&NUMBERS, a);
        let b = take(&NUMBERS, 10);
        assert_eq!((b.as_ptr(), b.len()), (first, 0), "the same vector, empty");
        let c = take(&NUMBERS, 10);
        assert_ne!(c.as_ptr(), first, "the spare was out: a new one");
        give_back(&NUMBERS, b);
        give_back(&NUMBERS, c);
        assert!(spare_capacity(&NUMBERS) >= 10);
        let big = take(&NUMBERS, KEEP_AT_MOST + 1);
        give_back(&NUMBERS, big);
        assert_eq!(spare_capacity(&NUMBERS), 0, "too big to keep");
    }
}
