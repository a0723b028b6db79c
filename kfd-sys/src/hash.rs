//! Hashing as the workspace's internal maps do it.
//!
//! One fact, declared once: maps keyed by addresses or numbers the
//! library chose itself (page numbers of its own allocations, addresses
//! of its own `Arc`s) hash with a multiplication, not SipHash. The keys
//! are not chosen by an adversary, and SipHash costs about a hundred
//! instructions a lookup, more than the rest of the lookup.

use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-and-fold hasher for keys the library chose itself (see the
/// module docs). Not for keys a caller controls.
///
/// # Example
///
/// ```
/// use std::collections::HashMap;
/// use kfd_sys::hash::OwnKeys;
///
/// let mut m: HashMap<u64, &str, OwnKeys> = HashMap::default();
/// m.insert(0x7f00_0000_1000, "a buffer");
/// assert_eq!(m.get(&0x7f00_0000_1000), Some(&"a buffer"));
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct OwnKeyHasher(u64);

/// The `BuildHasher` of [`OwnKeyHasher`], for `HashMap<K, V, OwnKeys>`.
pub type OwnKeys = BuildHasherDefault<OwnKeyHasher>;

impl Hasher for OwnKeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b) ^ self.0.rotate_left(8));
        }
    }

    fn write_u64(&mut self, x: u64) {
        let h = (self.0 ^ x ^ (x >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }

    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    /// Page numbers and 16-byte-aligned addresses spread over the low
    /// bits (what hashbrown's buckets use).
    #[test]
    fn aligned_keys_spread() {
        let b = OwnKeys::default();
        for step in [1u64, 16, 4096] {
            let low: std::collections::HashSet<u64> =
                (0..256u64).map(|i| b.hash_one(i * step) & 0xff).collect();
            assert!(low.len() > 150, "step {step}: {} distinct", low.len());
        }
    }
}
