//! Readers on four threads borrow a published configuration while the
//! main thread replaces it (at least 1000 times, and until the readers
//! made 10000 reads); each replaced value is dropped
//! once its last reader has left, and never while one holds it; a
//! reader never sees an older value after a newer one.
//!
//! `cargo run -p kfd-sync --example publish`

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use kfd_sync::RcuCell;

/// A published value that counts its drops and knows if it was dropped.
struct Config {
    generation: usize,
    live: AtomicBool,
    drops: Arc<AtomicUsize>,
}

impl Drop for Config {
    fn drop(&mut self) {
        self.live.store(false, Ordering::SeqCst);
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

fn main() {
    const MIN_STORES: usize = 1000;
    const MIN_READS: usize = 10_000;
    let drops = Arc::new(AtomicUsize::new(0));
    let cell: RcuCell<Config> = RcuCell::new();
    let make = |generation| {
        Arc::new(Config {
            generation,
            live: AtomicBool::new(true),
            drops: drops.clone(),
        })
    };
    cell.store(Some(make(0)));
    let done = AtomicBool::new(false);
    let reads = AtomicUsize::new(0);
    let stores = std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let mut last = 0;
                while !done.load(Ordering::Relaxed) {
                    if let Some(c) = cell.read() {
                        assert!(c.live.load(Ordering::SeqCst), "read a dropped value");
                        assert!(c.generation >= last, "an older value after a newer");
                        last = c.generation;
                        reads.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
        let mut generation = 0;
        while generation < MIN_STORES || reads.load(Ordering::Relaxed) < MIN_READS {
            generation += 1;
            cell.store(Some(make(generation)));
        }
        done.store(true, Ordering::Relaxed);
        generation
    });
    cell.store(None);
    assert!(cell.wait_retired(std::time::Duration::from_secs(5)));
    let dropped = drops.load(Ordering::SeqCst);
    println!(
        "{} reads on 4 threads, {stores} replacements, {dropped} values dropped",
        reads.load(Ordering::Relaxed)
    );
    assert_eq!(dropped, stores + 1, "every value dropped exactly once");
}
