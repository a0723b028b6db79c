//! Scaling: 100 000 live allocations, and concurrent use from threads.
//!
//! Prints timings (run with `--nocapture`); asserts only correctness.

mod common;

use std::sync::Arc;
use std::time::Instant;

use common::*;
use kfd_fmm::{FmmOptions, MemFlags, PointerType, PAGE_SIZE};

/// A small deterministic generator (no external crates).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn per_op(d: std::time::Duration, n: usize) -> String {
    format!(
        "{:>8.3} ms total, {:>7.0} ns/op",
        d.as_secs_f64() * 1e3,
        d.as_nanos() as f64 / n as f64
    )
}

/// Address reservations go through the memory manager's own VA allocator
/// (reserved SVM aperture) and object index, with no kernel object, so the
/// numbers are the manager's, not the simulator's.
fn run_reservations(n: usize) {
    let opts = FmmOptions {
        reserve_svm: true,
        ..FmmOptions::primary()
    };
    let (sim, fmm) = primary_with("mi210", opts);
    let g = gpu_node(&fmm);
    let flags = MemFlags::NON_PAGED | MemFlags::ONLY_ADDRESS;
    let base_objects = fmm.object_count();
    let mut rng = Lcg(42);

    let t = Instant::now();
    let mut addrs = Vec::with_capacity(n);
    for i in 0..n {
        let pages = 1 + (i as u64 % 4);
        addrs.push((
            fmm.alloc_memory(g, pages * PAGE_SIZE, flags, None).unwrap(),
            pages * PAGE_SIZE,
        ));
    }
    let alloc = t.elapsed();
    assert_eq!(fmm.object_count(), base_objects + n);

    let t = Instant::now();
    for _ in 0..n {
        let (a, size) = addrs[rng.next() as usize % n];
        let inside = a + rng.next() % size;
        let info = fmm.pointer_info(inside).unwrap();
        assert_eq!(info.gpu_address, a);
        assert_eq!(info.kind, PointerType::ReservedAddr);
    }
    let lookup = t.elapsed();

    // Free in a scrambled order.
    for i in (1..n).rev() {
        let j = rng.next() as usize % (i + 1);
        addrs.swap(i, j);
    }
    let t = Instant::now();
    for &(a, _) in &addrs {
        fmm.free_memory(a).unwrap();
    }
    let free = t.elapsed();
    assert_eq!(fmm.object_count(), base_objects);
    // Everything coalesced back: one huge reservation fits again.
    let big = fmm.alloc_memory(g, 1 << 36, flags, None).unwrap();
    fmm.free_memory(big).unwrap();

    println!("reservations n={n:>6}: alloc {}", per_op(alloc, n));
    println!("reservations n={n:>6}: lookup {}", per_op(lookup, n));
    println!("reservations n={n:>6}: free  {}", per_op(free, n));
    teardown(sim, fmm);
}

#[test]
fn hundred_thousand_allocations() {
    for n in [1_000, 10_000, 100_000] {
        run_reservations(n);
    }
}

/// Real buffer objects through the simulated kernel (whose own handle
/// allocation is linear, so this uses fewer objects).
#[test]
fn ten_thousand_buffer_objects() {
    let (sim, fmm) = primary("mi210");
    let n = 10_000;
    let t = Instant::now();
    let mut addrs = Vec::with_capacity(n);
    for _ in 0..n {
        addrs.push(
            fmm.alloc_memory(0, PAGE_SIZE, MemFlags::NON_PAGED, None)
                .unwrap(),
        );
    }
    let alloc = t.elapsed();
    let t = Instant::now();
    for &a in &addrs {
        assert_eq!(fmm.pointer_info(a + 8).unwrap().gpu_address, a);
    }
    let lookup = t.elapsed();
    let t = Instant::now();
    for &a in addrs.iter().rev() {
        fmm.free_memory(a).unwrap();
    }
    let free = t.elapsed();
    println!("GTT BOs      n={n:>6}: alloc {}", per_op(alloc, n));
    println!("GTT BOs      n={n:>6}: lookup {}", per_op(lookup, n));
    println!("GTT BOs      n={n:>6}: free  {}", per_op(free, n));
    teardown(sim, fmm);
}

#[test]
fn concurrent_allocations_on_several_gpus() {
    let (sim, fmm) = primary("mi300x");
    let gpus: Vec<u32> = (0..fmm.nodes().len() as u32)
        .filter(|&n| fmm.nodes()[n as usize].is_gpu())
        .collect();
    let before = fmm.object_count();
    let threads: Vec<_> = gpus
        .iter()
        .map(|&node| {
            let fmm = Arc::clone(&fmm);
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                for i in 0..300u64 {
                    let flags = if i % 2 == 0 {
                        MemFlags::NON_PAGED
                    } else {
                        MemFlags::NON_PAGED | MemFlags::HOST_ACCESS
                    };
                    let b = fmm
                        .alloc_buffer(node, PAGE_SIZE * (1 + i % 3), 0, flags)
                        .unwrap();
                    b.map_to_nodes(&[node]).unwrap();
                    if b.is_cpu_accessible() {
                        b.write(0, &i.to_le_bytes()).unwrap();
                    }
                    mine.push(b);
                }
                for (i, b) in mine.iter().enumerate() {
                    let info = fmm.pointer_nodes(b.addr()).unwrap();
                    assert_eq!(info.info.node, node);
                    assert_eq!(info.mapped, vec![node]);
                    if b.is_cpu_accessible() {
                        let mut v = [0u8; 8];
                        b.read(0, &mut v).unwrap();
                        assert_eq!(u64::from_le_bytes(v), i as u64);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(fmm.object_count(), before);
    teardown(sim, fmm);
}
