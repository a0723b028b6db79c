//! The object index of a memory manager: its memory objects in shards
//! (one for host-only memory, then one per GPU), each behind its own
//! lock, and the generations that name their states.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::PointerInfo;
use crate::lock;
use crate::objects::{Lookup, Shard, Slot, Span, VmObject};

/// The memory objects of a memory manager.
///
/// Invariants: `spans[i]` is shard `i`'s span; the shard count never
/// changes; every object is in exactly one shard (the one
/// [`super::gpus::GpuSet::shard_of`] names for its gpu_id).
#[derive(Debug)]
pub(super) struct ObjectIndex {
    shards: Vec<Mutex<Shard>>,
    /// Where each shard's objects lie, read without its lock.
    spans: Vec<Arc<Span>>,
    /// The last object generation given out
    /// ([`super::PointerInfo::generation`]).
    generations: AtomicU64,
}

impl ObjectIndex {
    /// An empty index for `gpus` GPUs.
    pub fn new(gpus: usize) -> ObjectIndex {
        let (shards, spans) = (0..=gpus)
            .map(|_| {
                let (shard, span) = Shard::new();
                (Mutex::new(shard), span)
            })
            .unzip();
        ObjectIndex {
            shards,
            spans,
            generations: AtomicU64::new(0),
        }
    }

    /// Shard `shard`, locked.
    pub fn shard(&self, shard: usize) -> MutexGuard<'_, Shard> {
        lock(&self.shards[shard])
    }

    /// Adds `obj` to shard `shard`, with `answer` as its kept
    /// pointer-query answer.
    #[inline]
    pub fn insert(&self, shard: usize, obj: VmObject, answer: &PointerInfo) {
        self.shard(shard).insert_answered(obj, answer);
    }

    /// How many objects the shards hold.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(s).len()).sum()
    }

    /// Takes every object out, shard by shard.
    pub fn drain(&self) -> Vec<VmObject> {
        self.shards.iter().flat_map(|s| lock(s).drain()).collect()
    }

    /// A generation never given out before.
    pub fn next_generation(&self) -> u64 {
        // Only unique, not ordered with anything.
        self.generations.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Runs `f` on the shard holding the object `addr` resolves to. Only
    /// shards whose span covers `addr` are locked (usually one: objects of
    /// different GPUs interleave only when several GPUs allocate).
    pub fn with_shard<R>(
        &self,
        addr: u64,
        how: Lookup,
        f: impl FnOnce(&mut Shard, Slot) -> R,
    ) -> Option<R> {
        self.with_shard_or(addr, how, |_| None, f)
    }

    /// [`ObjectIndex::with_shard`], asking `quick` first, without the
    /// lock, for each shard whose span covers `addr` (in the order the
    /// shards are locked, so a quick answer is the one the locked lookup
    /// gives).
    #[inline]
    pub fn with_shard_or<R>(
        &self,
        addr: u64,
        how: Lookup,
        quick: impl Fn(&Span) -> Option<R>,
        f: impl FnOnce(&mut Shard, Slot) -> R,
    ) -> Option<R> {
        for (s, span) in self.shards.iter().zip(&self.spans) {
            if !span.may_hold(addr) {
                continue;
            }
            if let Some(r) = quick(span) {
                return Some(r);
            }
            let mut g = lock(s);
            if let Some(start) = g.find(addr, how) {
                return Some(f(&mut g, start));
            }
        }
        None
    }

    /// The lock-free part of [`ObjectIndex::with_shard_or`] alone: `quick`
    /// of the first shard whose span covers `addr`. Small enough to
    /// inline into a caller's every-call path.
    #[inline(always)]
    pub fn quick<R>(&self, addr: u64, quick: impl Fn(&Span) -> Option<R>) -> Quick<R> {
        match self.spans.iter().find(|span| span.may_hold(addr)) {
            None => Quick::NoObject,
            Some(span) => quick(span).map_or(Quick::Locked, Quick::Answer),
        }
    }

    /// Runs `f` on the object `addr` resolves to.
    pub fn with_object<R>(
        &self,
        addr: u64,
        how: Lookup,
        f: impl FnOnce(&mut VmObject) -> R,
    ) -> Option<R> {
        self.with_shard(addr, how, |s, start| f(s.get_mut(start).expect("found")))
    }
}

/// What [`ObjectIndex::quick`] found.
#[derive(Debug)]
pub(crate) enum Quick<R> {
    /// The first shard that may hold the address answered.
    Answer(R),
    /// No shard's span covers the address: no object holds it.
    NoObject,
    /// That shard has no quick answer: take the locked way (which asks
    /// again from the first shard).
    Locked,
}
