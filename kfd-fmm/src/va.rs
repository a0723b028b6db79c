//! Virtual-address allocation inside a reserved aperture.
//!
//! [`VaAllocator`] keeps the *free* ranges of an aperture twice: by start
//! address (to place fixed requests and to coalesce on release) and by
//! (length, start) (to find a fitting hole). Every operation is a
//! constant number of B-tree lookups, so it is O(log n) in the number of
//! free ranges, which is at most one more than the number of live
//! allocations.

use std::collections::{BTreeMap, BTreeSet};

/// Rounds `v` up to a multiple of `align` (a power of two).
pub(crate) const fn align_up(v: u64, align: u64) -> u64 {
    (v + align - 1) & !(align - 1)
}

/// [`align_up`] for values that come from callers: `None` when the
/// rounded value does not fit in 64 bits.
pub(crate) const fn checked_align_up(v: u64, align: u64) -> Option<u64> {
    match v.checked_add(align - 1) {
        Some(x) => Some(x & !(align - 1)),
        None => None,
    }
}

/// A free-list allocator over `[base, limit]`.
#[derive(Debug, Clone)]
pub struct VaAllocator {
    base: u64,
    limit: u64,
    /// Free ranges: start -> end (exclusive).
    by_addr: BTreeMap<u64, u64>,
    /// Free ranges: (length, start).
    by_size: BTreeSet<(u64, u64)>,
    free_bytes: u64,
}

/// How many best-fit candidates are tried before falling back to a hole
/// that fits whatever its alignment.
const FIT_PROBES: usize = 16;

impl VaAllocator {
    /// An allocator managing `[base, limit]` (inclusive limit), all free.
    pub fn new(base: u64, limit: u64) -> Self {
        let mut a = VaAllocator {
            base,
            limit,
            by_addr: BTreeMap::new(),
            by_size: BTreeSet::new(),
            free_bytes: 0,
        };
        if limit >= base {
            a.insert_free(base, limit + 1);
        }
        a
    }

    /// First address of the managed range.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Last address (inclusive) of the managed range.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Total free bytes.
    pub fn free_bytes(&self) -> u64 {
        self.free_bytes
    }

    /// Number of free ranges (for tests and diagnostics).
    pub fn free_ranges(&self) -> usize {
        self.by_addr.len()
    }

    fn insert_free(&mut self, start: u64, end: u64) {
        self.by_addr.insert(start, end);
        self.by_size.insert((end - start, start));
        self.free_bytes += end - start;
    }

    fn remove_free(&mut self, start: u64) -> u64 {
        let end = self.by_addr.remove(&start).expect("free range present");
        self.by_size.remove(&(end - start, start));
        self.free_bytes -= end - start;
        end
    }

    /// Takes `[at, at+size)` out of the free range starting at `start`.
    fn carve(&mut self, start: u64, at: u64, size: u64) {
        let end = self.remove_free(start);
        debug_assert!(start <= at && at + size <= end);
        if at > start {
            self.insert_free(start, at);
        }
        if at + size < end {
            self.insert_free(at + size, end);
        }
    }

    /// Allocates `size` bytes aligned to `align` (a power of two).
    pub fn alloc(&mut self, size: u64, align: u64) -> Option<u64> {
        if size == 0 || !align.is_power_of_two() {
            return None;
        }
        // Best fit: the smallest holes that are at least `size` long, as
        // long as alignment padding does not push the end out.
        let mut found = None;
        for &(len, start) in self.by_size.range((size, 0)..).take(FIT_PROBES) {
            let Some(at) = checked_align_up(start, align) else {
                continue;
            };
            if at.checked_add(size)? <= start + len {
                found = Some((start, at));
                break;
            }
        }
        if found.is_none() {
            // Any hole this long fits whatever its alignment.
            let need = size.checked_add(align - 1)?;
            if let Some(&(_, start)) = self.by_size.range((need, 0)..).next() {
                found = Some((start, checked_align_up(start, align)?));
            }
        }
        let (start, at) = found?;
        self.carve(start, at, size);
        Some(at)
    }

    /// Allocates exactly `[addr, addr+size)` if it is entirely free.
    pub fn alloc_fixed(&mut self, addr: u64, size: u64) -> bool {
        if size == 0 {
            return false;
        }
        let Some(end) = addr.checked_add(size) else {
            return false;
        };
        let Some((&start, &free_end)) = self.by_addr.range(..=addr).next_back() else {
            return false;
        };
        if end > free_end {
            return false;
        }
        self.carve(start, addr, size);
        true
    }

    /// Returns `[addr, addr+size)` to the free list, merging neighbours.
    ///
    /// Releasing a range that is (partly) free already is ignored, so a
    /// bookkeeping bug can never hand one range out twice.
    pub fn free(&mut self, addr: u64, size: u64) {
        let Some(last) = addr.checked_add(size).and_then(|e| e.checked_sub(1)) else {
            return;
        };
        if size == 0 || addr < self.base || last > self.limit {
            return;
        }
        let mut start = addr;
        let mut end = addr + size;
        if let Some((&ps, &pe)) = self.by_addr.range(..=addr).next_back() {
            if pe > addr {
                return; // overlaps a free range: not allocated
            }
            if pe == addr {
                self.remove_free(ps);
                start = ps;
            }
        }
        if let Some((&ns, &ne)) = self.by_addr.range(addr..).next() {
            if ns < end {
                // Overlaps the next free range; undo the merge above.
                if start != addr {
                    self.insert_free(start, addr);
                }
                return;
            }
            if ns == end {
                self.remove_free(ns);
                end = ne;
            }
        }
        self.insert_free(start, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: u64 = crate::PAGE_SIZE;

    #[test]
    fn alloc_free_coalesce() {
        let mut a = VaAllocator::new(0x10_0000, 0x10_0000 + 64 * P - 1);
        assert_eq!(a.free_bytes(), 64 * P);
        let x = a.alloc(P, P).unwrap();
        let y = a.alloc(2 * P, P).unwrap();
        let z = a.alloc(P, P).unwrap();
        assert!(x != y && y != z);
        assert_eq!(a.free_bytes(), 60 * P);
        a.free(y, 2 * P);
        a.free(x, P);
        a.free(z, P);
        assert_eq!(a.free_bytes(), 64 * P);
        assert_eq!(a.free_ranges(), 1);
        // double free is ignored
        a.free(x, P);
        assert_eq!(a.free_bytes(), 64 * P);
    }

    #[test]
    fn alignment_and_exhaustion() {
        let mut a = VaAllocator::new(P, 1024 * P - 1);
        let x = a.alloc(P, P).unwrap();
        let big = a.alloc(16 * P, 64 * P).unwrap();
        assert_eq!(big % (64 * P), 0);
        assert!(big != x);
        assert!(a.alloc(2000 * P, P).is_none());
        assert!(
            a.alloc(P, 3 * P).is_none(),
            "alignment must be a power of two"
        );
        assert!(a.alloc(0, P).is_none());
    }

    #[test]
    fn fixed() {
        let mut a = VaAllocator::new(0, 100 * P - 1);
        assert!(a.alloc_fixed(10 * P, 5 * P));
        assert!(!a.alloc_fixed(12 * P, P), "overlap");
        assert!(!a.alloc_fixed(99 * P, 2 * P), "past the limit");
        assert!(a.alloc_fixed(15 * P, P), "adjacent");
        a.free(10 * P, 5 * P);
        assert!(a.alloc_fixed(12 * P, P));
        assert_eq!(a.free_bytes(), 98 * P);
    }

    #[test]
    fn many_allocations_stay_consistent() {
        let mut a = VaAllocator::new(0, (1 << 40) - 1);
        let mut v = Vec::new();
        for i in 0..10_000u64 {
            v.push((a.alloc(P * (1 + i % 7), P).unwrap(), P * (1 + i % 7)));
        }
        for (i, &(addr, size)) in v.iter().enumerate() {
            if i % 2 == 0 {
                a.free(addr, size);
            }
        }
        for (i, &(addr, size)) in v.iter().enumerate() {
            if i % 2 == 1 {
                a.free(addr, size);
            }
        }
        assert_eq!(a.free_ranges(), 1);
        assert_eq!(a.free_bytes(), 1 << 40);
    }
}
