//! Kernel model scaling: 100 000 live buffer objects through the
//! in-process driver (issue #9 benchmarks need them). Handles, GPU VA
//! conflict checks and mmap offsets are O(log n); the test prints its time
//! and checks correctness only.

mod kernel_util;

use std::collections::HashSet;
use std::time::Instant;

use kernel_util::*;
use kfd_sim::Sim;
use kfd_sys::kfd::*;
use kfd_sys::Errno;

const N: u64 = 100_000;
const BASE: u64 = 0x10_0000_0000;

#[test]
fn hundred_thousand_gtt_bos() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Proc::open(&sim);
    let g = p.gpu();
    let t = Instant::now();
    let mut handles = Vec::with_capacity(N as usize);
    let mut offsets = HashSet::with_capacity(N as usize);
    for i in 0..N {
        let (h, off) = p.alloc(g, BASE + i * 8192, 4096, GTT).unwrap();
        assert_eq!(h & 0xffff_ffff, i, "lowest free handle");
        assert!(offsets.insert(off), "mmap offsets are unique");
        assert_eq!(p.map(h, &[g], 0), (Ok(0), 1));
        handles.push(h);
    }
    let alloc_map = t.elapsed();
    assert_eq!(sim.live_objects().bos(), N as usize);
    // VA conflicts are still found among 100k mappings (at both ends).
    for va in [BASE + 4096 - 4096, BASE + (N - 1) * 8192] {
        let (h, _) = p.alloc(g, va, 4096, GTT).unwrap();
        assert_eq!(p.map(h, &[g], 0), (Err(Errno::EINVAL), 0));
        p.free(h).unwrap();
    }
    // Gaps between the mappings are free.
    let (h, _) = p.alloc(g, BASE + 4096, 4096, GTT).unwrap();
    assert_eq!(p.map(h, &[g], 0), (Ok(0), 1));
    assert_eq!(p.unmap(h, &[g], 0), (Ok(0), 1));
    p.free(h).unwrap();
    // Free every other BO; the freed handles are handed out again,
    // lowest first.
    let t2 = Instant::now();
    for h in handles.iter().step_by(2) {
        assert_eq!(p.unmap(*h, &[g], 0), (Ok(0), 1));
        p.free(*h).unwrap();
    }
    let (h, _) = p.alloc(g, 0x1000_0000, 4096, GTT).unwrap();
    assert_eq!(h & 0xffff_ffff, 0);
    let (h2, _) = p.alloc(g, 0x1000_2000, 4096, GTT).unwrap();
    assert_eq!(h2 & 0xffff_ffff, 2);
    p.free(h).unwrap();
    p.free(h2).unwrap();
    for h in handles.iter().skip(1).step_by(2) {
        assert_eq!(p.unmap(*h, &[g], 0), (Ok(0), 1));
        p.free(*h).unwrap();
    }
    let free = t2.elapsed();
    eprintln!(
        "{N} GTT BOs: alloc+map {:.2?} ({:.1} us/BO), unmap+free {:.2?}",
        alloc_map,
        alloc_map.as_secs_f64() * 1e6 / N as f64,
        free
    );
    // The handle space shrank back: the next BO gets handle 0.
    let (h, _) = p.alloc(g, BASE, 4096, GTT).unwrap();
    assert_eq!(h & 0xffff_ffff, 0);
    p.free(h).unwrap();
    assert!(sim.live_objects().kernel_objects_empty());
    p.close();
    assert!(sim.live_objects().is_empty());
    let _ = KFD_IOC_ALLOC_MEM_FLAGS_GTT;
}
