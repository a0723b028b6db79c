//! Loom models of [`kfd_sync::RcuCell`], [`kfd_sync::SeqWords`] and
//! [`kfd_sync::OpenCount`]:
//! every interleaving of a few threads, under every reordering the C++11
//! memory model allows.
//!
//! Run with `cargo xtask loom` (`RUSTFLAGS="--cfg loom" cargo test -p
//! kfd-sync --test loom --release`); without `--cfg loom` this file is
//! empty. A value records its drop in a flag owned by the model, so a
//! reader can tell that its value was dropped under it without touching
//! the value's memory.

#![cfg(loom)]

use std::sync::Arc;

use kfd_sync::{OpenCount, RcuCell, SeqWords};
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

/// A published value: counts its drops in model-owned atomics.
struct Value {
    id: usize,
    dropped: Arc<AtomicBool>,
    drops: Arc<AtomicUsize>,
}

impl Drop for Value {
    fn drop(&mut self) {
        self.dropped.store(true, SeqCst);
        self.drops.fetch_add(1, SeqCst);
    }
}

/// One value with its flags.
fn value(id: usize, drops: &Arc<AtomicUsize>) -> (Arc<Value>, Arc<AtomicBool>) {
    let dropped = Arc::new(AtomicBool::new(false));
    let v = Arc::new(Value {
        id,
        dropped: dropped.clone(),
        drops: drops.clone(),
    });
    (v, dropped)
}

/// Bounded preemptions keep each model to seconds; three cover the
/// reader's mark/load and the writer's swap/scan against each other.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

/// A reader that finds a value keeps it alive until its guard drops,
/// while a writer unpublishes it; afterwards the value is dropped once,
/// by whichever of the two finished last.
#[test]
fn a_read_value_is_not_dropped_under_its_reader() {
    model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let cell = Arc::new(RcuCell::new());
        let (v, dropped) = value(1, &drops);
        cell.store(Some(v));
        let reader = {
            let cell = cell.clone();
            loom::thread::spawn(move || {
                if let Some(g) = cell.read() {
                    assert!(!dropped.load(SeqCst), "value dropped under its reader");
                    assert_eq!(g.id, 1);
                }
            })
        };
        cell.store(None);
        reader.join().unwrap();
        assert_eq!(drops.load(SeqCst), 1, "dropped exactly once");
    });
}

/// A replaced value: a reader sees the old value (alive) or the new one,
/// never a dropped one; every value is dropped once in the end.
#[test]
fn a_reader_sees_the_old_or_the_new_value_alive() {
    model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let cell = Arc::new(RcuCell::new());
        let (old, old_dropped) = value(1, &drops);
        let (new, new_dropped) = value(2, &drops);
        cell.store(Some(old));
        let reader = {
            let cell = cell.clone();
            loom::thread::spawn(move || {
                let g = cell.read().expect("a value is always published");
                let dropped = if g.id == 1 {
                    &old_dropped
                } else {
                    &new_dropped
                };
                assert!(
                    !dropped.load(SeqCst),
                    "value {} dropped under its reader",
                    g.id
                );
            })
        };
        cell.store(Some(new));
        reader.join().unwrap();
        assert_eq!(drops.load(SeqCst), 1, "the old value is dropped");
        drop(cell);
        assert_eq!(drops.load(SeqCst), 2, "the cell drops the new value");
    });
}

/// Two readers, one nested in a second read, against a writer: each
/// keeps its value alive, and the value is dropped once.
#[test]
fn nested_and_concurrent_reads_keep_the_value() {
    model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let cell = Arc::new(RcuCell::new());
        let (v, dropped) = value(1, &drops);
        cell.store(Some(v));
        let readers: Vec<_> = (0..2)
            .map(|i| {
                let cell = cell.clone();
                let dropped = dropped.clone();
                loom::thread::spawn(move || {
                    let Some(outer) = cell.read() else { return };
                    if i == 0 {
                        let inner = cell.read();
                        drop(inner);
                    }
                    assert!(!dropped.load(SeqCst), "value dropped under reader {i}");
                    drop(outer);
                })
            })
            .collect();
        cell.store(None);
        for r in readers {
            r.join().unwrap();
        }
        assert_eq!(drops.load(SeqCst), 1, "dropped exactly once");
    });
}

/// A reader of a sequence lock racing two writes (each writes words that
/// are all equal) accepts only whole writes: the initial zeros, the
/// first write or the second, never a mix, and after the writer is done
/// a read gives the last write.
#[test]
fn a_sequence_lock_reader_accepts_only_whole_writes() {
    model(|| {
        let s = Arc::new(SeqWords::<2>::default());
        let writer = {
            let s = s.clone();
            loom::thread::spawn(move || {
                s.write([1, 1]);
                s.write([2, 2]);
            })
        };
        if let Some([a, b]) = s.read() {
            assert_eq!(a, b, "a torn read was accepted");
        }
        if let Some([a, b]) = s.read_if(1) {
            assert_eq!((a, b), (1, 1), "a torn keyed read was accepted");
        }
        writer.join().unwrap();
        assert_eq!(s.read(), Some([2, 2]));
    });
}

/// The open count's protocol, as kfd-context's primary uses it: the last
/// close (under the lock) tears the resource down when its decrement
/// reaches 0, while another thread opens and closes nested without the
/// lock, falling back to the lock for what would be a last close. A
/// nested open that succeeds never finds the resource torn down (nor is
/// it torn down while that open is held), the resource is torn down
/// exactly once, and the count ends at 0.
#[test]
fn a_nested_open_never_sees_the_resource_torn_down() {
    model(|| {
        let lock = Arc::new(loom::sync::Mutex::new(()));
        let count = Arc::new(OpenCount::default());
        let torn = Arc::new(AtomicUsize::new(0));
        count.open_first_locked();
        // The lock's way to close: the last one tears down.
        let close = |lock: &loom::sync::Mutex<()>, count: &OpenCount, torn: &AtomicUsize| {
            if count.close_nested().is_none() {
                let _held = lock.lock().unwrap();
                if count.close_locked() == 0 {
                    torn.fetch_add(1, SeqCst);
                }
            }
        };
        let nested = {
            let (lock, count, torn) = (lock.clone(), count.clone(), torn.clone());
            loom::thread::spawn(move || {
                if count.open_nested() {
                    assert_eq!(torn.load(SeqCst), 0, "opened a torn-down resource");
                    loom::thread::yield_now();
                    assert_eq!(torn.load(SeqCst), 0, "torn down under a nested open");
                    close(&lock, &count, &torn);
                }
            })
        };
        close(&lock, &count, &torn);
        nested.join().unwrap();
        assert_eq!(torn.load(SeqCst), 1, "torn down once");
        assert_eq!(count.get(), 0);
    });
}
