//! A few words that one writer at a time changes and any thread reads
//! without a lock or a read-modify-write: a sequence lock over atomics.
//!
//! The writer makes the sequence odd, stores the words, and makes it even
//! again; a reader loads the sequence, the words, and the sequence once
//! more, and keeps the words only if the sequence was even and did not
//! move. Every word is an atomic, so a reader racing a writer reads a mix
//! of old and new words at worst, which the second look at the sequence
//! throws away: no torn read is ever returned and nothing is undefined
//! behaviour. The fences are the ones of Boehm's "Can seqlocks get along
//! with programming language memory models?" (MSPC 2012): a release fence
//! after the writer's odd store, an acquire fence before the reader's
//! second load.
//!
//! Writers must not overlap (the caller holds a lock of its own around
//! [`SeqWords::write`]); overlapping writers can make a reader accept a
//! mix of their two writes, still without undefined behaviour.
//!
//! Used for answers that are expensive to make and asked again and
//! again (the last pointer query of each index shard, the C node arrays
//! of the last object asked about): the reader compares a key word with
//! what it asks for and falls back to the locked way on any miss.

use crate::shim::{fence, AtomicU64, Ordering};

/// `N` words under a sequence lock (see the module docs).
#[derive(Debug)]
pub struct SeqWords<const N: usize> {
    /// Even while the words are stable; odd during a write.
    seq: AtomicU64,
    words: [AtomicU64; N],
}

impl<const N: usize> Default for SeqWords<N> {
    /// All words 0.
    fn default() -> Self {
        SeqWords {
            seq: AtomicU64::new(0),
            words: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl<const N: usize> SeqWords<N> {
    /// The words, if no write was in progress or completed while they
    /// were read (then the caller takes its locked way).
    #[inline]
    pub fn read(&self) -> Option<[u64; N]> {
        let before = self.seq.load(Ordering::Acquire);
        if before & 1 != 0 {
            return None;
        }
        let words = std::array::from_fn(|i| self.words[i].load(Ordering::Relaxed));
        // The word loads above happen before the second look: a word
        // stored after a writer's odd store makes that store visible here.
        fence(Ordering::Acquire);
        (self.seq.load(Ordering::Relaxed) == before).then_some(words)
    }

    /// The words if `first` (the key word, `words[0]`) is `key`, read as
    /// [`SeqWords::read`] does; the key is looked at before the other
    /// words are loaded, so a miss costs two loads.
    #[inline]
    pub fn read_if(&self, key: u64) -> Option<[u64; N]> {
        let before = self.seq.load(Ordering::Acquire);
        if before & 1 != 0 || N == 0 || self.words[0].load(Ordering::Relaxed) != key {
            return None;
        }
        let words = std::array::from_fn(|i| self.words[i].load(Ordering::Relaxed));
        fence(Ordering::Acquire);
        (self.seq.load(Ordering::Relaxed) == before).then_some(words)
    }

    /// Replaces the words. Writers must be serialised by the caller (see
    /// the module docs).
    pub fn write(&self, words: [u64; N]) {
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        // A reader that loads any word stored below also sees the odd
        // sequence in its second look.
        fence(Ordering::Release);
        for (slot, w) in self.words.iter().zip(words) {
            slot.store(w, Ordering::Relaxed);
        }
        self.seq.store(seq.wrapping_add(2), Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn reads_what_was_written_and_matches_keys() {
        let s = SeqWords::<3>::default();
        assert_eq!(s.read(), Some([0, 0, 0]));
        s.write([7, 8, 9]);
        assert_eq!(s.read(), Some([7, 8, 9]));
        assert_eq!(s.read_if(7), Some([7, 8, 9]));
        assert_eq!(s.read_if(8), None, "another key");
    }

    #[test]
    fn a_read_during_a_write_is_refused() {
        let s = SeqWords::<2>::default();
        // What a reader sees between the writer's odd store and its
        // even one.
        s.seq.store(1, Ordering::Relaxed);
        assert_eq!(s.read(), None);
        assert_eq!(s.read_if(0), None);
    }

    /// Two threads: a writer storing arrays whose words are all equal,
    /// readers that must never accept a mix.
    #[test]
    fn readers_never_accept_a_torn_write() {
        let s = SeqWords::<4>::default();
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|t| {
            t.spawn(|| {
                for k in 1..200_000u64 {
                    s.write([k; 4]);
                }
                stop.store(true, Ordering::Relaxed);
            });
            let mut accepted = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if let Some(w) = s.read() {
                    assert!(w.iter().all(|&x| x == w[0]), "torn: {w:?}");
                    accepted += 1;
                }
            }
            assert!(accepted > 0);
        });
    }
}
