//! A published value that readers borrow without an atomic
//! read-modify-write: read-copy-update with an asymmetric fence.
//!
//! [`RcuCell`] holds an `Option<Arc<T>>` that changes rarely (the open
//! primary context: at a first open and a last close) and is read on
//! every call of the C border. A reader marks its thread as inside a read
//! with plain stores to a record of its own, then loads the pointer; a
//! writer swaps the pointer, makes every thread's marks visible with one
//! `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` (a full memory barrier
//! on every CPU running a thread of this process), and frees the old
//! value once every thread that was inside a read then has left it. This
//! is the scheme of liburcu's "memb" flavour.
//!
//! Why it is sound: a reader stores `depth = 1`, then loads the pointer.
//! Its CPU may let the load pass the store, but the writer's membarrier
//! runs a full barrier on that CPU somewhere between the writer's swap
//! and its scan of the records. If the barrier ran before the reader's
//! load, the load sees the new pointer (the swap came first); if after,
//! the reader's store is visible to the scan, which keeps the old value.
//! Where `membarrier` is not available (before Linux 4.14, or a seccomp
//! filter) readers take a `SeqCst` fence instead, which makes the same
//! argument with the writer's own `SeqCst` fence.
//!
//! The old value is dropped by the writer if no thread was inside a read,
//! otherwise by the last of those threads when it leaves (or by the next
//! writer), outside any lock. A second fence pair (the writer's after it
//! flags the value retired, the reader's as it leaves) makes sure one of
//! them sees the other. Two readers leaving at the same moment under
//! `membarrier` (no reader fence) can each miss the other's leave; the
//! value then goes at the next outermost read of the cell, its next store
//! or [`RcuCell::wait_retired`]. The loom models (`tests/loom.rs`) check
//! the fenced protocol: no value dropped under a reader, and every value
//! dropped once all readers left. The thread records are shared by every
//! cell, so a value also waits for threads that were inside a read of
//! another cell; those do not drop it when they leave (it goes at the
//! next read or store of its own cell). The library has one cell.

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr;
use std::sync::Arc;

use crate::shim::Ordering;
use crate::shim::{
    lock, thread_local, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Mutex, MutexGuard,
};

/// One thread's read record: how deeply it is inside reads, and how many
/// outermost reads it has finished. Records are never freed: a thread
/// that exits gives its record back for the next thread to take, so the
/// records are as many as the most threads that ever read at once, and a
/// reference to one is valid for the life of the process.
///
/// Each record has its cache lines to itself (128 bytes: the pair of
/// lines x86 prefetches together), so threads marking their reads do not
/// write to one line.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Reader {
    depth: AtomicU64,
    left: AtomicU64,
    taken: AtomicBool,
    /// [`Call`]s the thread is inside (only the owning thread touches it).
    calls: AtomicU32,
}

/// Every record (a thread takes one on its first read).
#[cfg(not(loom))]
static READERS: Mutex<Vec<&'static Reader>> = Mutex::new(Vec::new());
#[cfg(loom)]
loom::lazy_static! {
    /// Every record (a thread takes one on its first read).
    static ref READERS: Mutex<Vec<&'static Reader>> = Mutex::new(Vec::new());
}

fn readers() -> MutexGuard<'static, Vec<&'static Reader>> {
    lock(&READERS)
}

/// The calling thread's record, given back when the thread exits.
struct Local(&'static Reader);

impl Local {
    fn register() -> Local {
        let mut all = readers();
        if let Some(r) = all.iter().find(|r| !r.taken.load(Ordering::Relaxed)) {
            r.taken.store(true, Ordering::Relaxed);
            return Local(r);
        }
        let r: &'static Reader = Box::leak(Box::new(Reader {
            taken: AtomicBool::new(true),
            ..Reader::default()
        }));
        all.push(r);
        Local(r)
    }
}

// Under loom a model's thread-locals are destroyed after its execution,
// when its locks can no longer be taken; records belong to one execution
// anyway, so there a thread keeps its record.
#[cfg(not(loom))]
impl Drop for Local {
    fn drop(&mut self) {
        // Out of every read (no guard outlives its thread's reads).
        let _all = readers();
        self.0.taken.store(false, Ordering::Relaxed);
    }
}

thread_local! {
    static LOCAL: Local = Local::register();
}

/// One call of an embedding library's entry point on this thread, counted
/// while the value lives (a C border marks its calls so that its panic
/// hook knows a panic is its own). The count sits in the thread's read
/// record, so an entry point that also reads an [`RcuCell`] looks up one
/// thread-local, not two, once both are inlined into it.
#[derive(Debug)]
pub struct Call {
    reader: &'static Reader,
    /// Counted on this thread: not sendable.
    not_send: PhantomData<*const ()>,
}

impl Call {
    /// Counts a call on this thread; `None` once the thread's record is
    /// gone (a call from a thread-local destructor at thread exit), which
    /// then goes uncounted.
    #[inline]
    pub fn enter() -> Option<Call> {
        let reader = LOCAL.try_with(|l| l.0).ok()?;
        let n = reader.calls.load(Ordering::Relaxed);
        reader.calls.store(n + 1, Ordering::Relaxed);
        Some(Call {
            reader,
            not_send: PhantomData,
        })
    }

    /// Whether this thread is inside a counted call.
    pub fn inside() -> bool {
        LOCAL
            .try_with(|l| l.0.calls.load(Ordering::Relaxed) > 0)
            .unwrap_or(false)
    }
}

impl Drop for Call {
    #[inline]
    fn drop(&mut self) {
        let n = self.reader.calls.load(Ordering::Relaxed);
        self.reader
            .calls
            .store(n.saturating_sub(1), Ordering::Relaxed);
    }
}

/// The fence pair between readers and writers: `membarrier` where the
/// kernel has it (readers then need only a compiler fence), `SeqCst`
/// fences on both sides otherwise.
#[cfg(not(loom))]
mod barrier {
    use std::sync::atomic::{compiler_fence, fence, AtomicBool, Ordering};
    use std::sync::Once;

    /// `membarrier` commands (`linux/membarrier.h`).
    const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
    const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

    /// Whether this process is registered for private expedited
    /// membarriers (readers then need no fence).
    static MEMBARRIER: AtomicBool = AtomicBool::new(false);
    static REGISTER: Once = Once::new();

    fn membarrier(cmd: libc::c_int) -> bool {
        // SAFETY: membarrier takes no pointers; an unknown command fails
        // with EINVAL.
        unsafe { libc::syscall(libc::SYS_membarrier, cmd, 0u32, 0i32) == 0 }
    }

    /// Registers for expedited membarriers once; false where the kernel
    /// refuses (readers keep their fences).
    pub(super) fn register() -> bool {
        REGISTER.call_once(|| {
            if membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) {
                MEMBARRIER.store(true, Ordering::SeqCst);
            }
        });
        MEMBARRIER.load(Ordering::SeqCst)
    }

    /// The reader's side, between marking itself and loading the value.
    #[inline]
    pub(super) fn reader() {
        if MEMBARRIER.load(Ordering::Relaxed) {
            compiler_fence(Ordering::SeqCst);
        } else {
            fence(Ordering::SeqCst);
        }
    }

    /// The writer's side: after it, every reader that marked itself
    /// before is seen marked.
    pub(super) fn writer() {
        if !(register() && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)) {
            fence(Ordering::SeqCst);
        }
    }
}

/// Under loom: the fallback pair, a `SeqCst` fence on each side (loom
/// cannot model `membarrier`, which acts on other threads' CPUs).
#[cfg(loom)]
mod barrier {
    use crate::shim::{fence, Ordering};

    pub(super) fn register() -> bool {
        false
    }

    pub(super) fn reader() {
        fence(Ordering::SeqCst);
    }

    pub(super) fn writer() {
        fence(Ordering::SeqCst);
    }
}

/// A value some threads may still be reading: the readers that were
/// inside a read when it was unpublished, with their `left` counts then.
struct Retired<T> {
    value: *const T,
    waits: Vec<(&'static Reader, u64)>,
}

impl<T> Retired<T> {
    /// Every reader it waits for has left the read it was in.
    fn free_to_drop(&self) -> bool {
        self.waits.iter().all(|(r, left)| {
            r.depth.load(Ordering::Acquire) == 0 || r.left.load(Ordering::Acquire) != *left
        })
    }
}

/// A published `Option<Arc<T>>`, read without read-modify-writes (see the
/// module docs). `const`-constructible, for statics.
pub struct RcuCell<T> {
    value: AtomicPtr<T>,
    retired: Mutex<Vec<Retired<T>>>,
    /// Something is retired: leaving readers try to drop it.
    pending: AtomicBool,
    /// Retired values taken out of the list and being dropped now.
    dropping: AtomicU64,
}

// SAFETY: the cell hands out `&T` to any thread and drops `T` on any
// thread, as `Arc<T>` does: it is `Send + Sync` when `T` is.
unsafe impl<T: Send + Sync> Send for RcuCell<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for RcuCell<T> {}

impl<T> Default for RcuCell<T> {
    fn default() -> Self {
        RcuCell::new()
    }
}

impl<T> std::fmt::Debug for RcuCell<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RcuCell")
            .field("published", &!self.value.load(Ordering::Relaxed).is_null())
            .finish()
    }
}

/// An empty cell's fields.
macro_rules! empty_cell {
    () => {
        RcuCell {
            value: AtomicPtr::new(ptr::null_mut()),
            retired: Mutex::new(Vec::new()),
            pending: AtomicBool::new(false),
            dropping: AtomicU64::new(0),
        }
    };
}

impl<T> RcuCell<T> {
    /// An empty cell.
    #[cfg(not(loom))]
    pub const fn new() -> RcuCell<T> {
        empty_cell!()
    }

    /// An empty cell (loom's atomics cannot be made in a `const`).
    #[cfg(loom)]
    pub fn new() -> RcuCell<T> {
        empty_cell!()
    }

    /// Borrows the published value, if any, for as long as the guard
    /// lives (on this thread: the guard cannot be sent). `None` also when
    /// the thread's registration is already destroyed (a read from a
    /// thread-local destructor at thread exit): the caller then takes its
    /// slow way.
    pub fn read(&self) -> Option<ReadGuard<'_, T>> {
        let reader = LOCAL.try_with(|l| l.0).ok()?;
        let depth = reader.depth.load(Ordering::Relaxed);
        reader.depth.store(depth + 1, Ordering::Relaxed);
        barrier::reader();
        let p = self.value.load(Ordering::Acquire);
        let guard = ReadGuard {
            cell: self,
            reader,
            value: p,
            not_send: PhantomData,
        };
        if p.is_null() {
            drop(guard);
            return None;
        }
        Some(guard)
    }

    /// Whether nothing is published (one load, no read marked: a hint for
    /// a caller whose [`RcuCell::read`] gave `None`, which also means
    /// "cannot read here", at thread exit).
    pub fn is_empty(&self) -> bool {
        self.value.load(Ordering::Acquire).is_null()
    }

    /// Publishes `value` (or nothing); the previous value is dropped once
    /// no thread can be reading it any more.
    pub fn store(&self, value: Option<Arc<T>>) {
        let new = value.map_or(ptr::null_mut(), |v| Arc::into_raw(v) as *mut T);
        // A first publication registers for membarriers before any reader
        // can find a value (readers that saw no registration fence).
        barrier::register();
        let old = self.value.swap(new, Ordering::SeqCst);
        if !old.is_null() {
            barrier::writer();
            let waits: Vec<(&'static Reader, u64)> = readers()
                .iter()
                .filter(|r| r.depth.load(Ordering::Acquire) > 0)
                .map(|r| (*r, r.left.load(Ordering::Acquire)))
                .collect();
            self.lock_retired().push(Retired { value: old, waits });
            self.pending.store(true, Ordering::Release);
            // The second fence pair: a reader leaving now either sees
            // `pending` (and reclaims) or has its leave seen by the
            // reclaim below. Without it both can miss, and the value waits
            // for a later read, store or `wait_retired` (the loom model
            // `a_read_value_is_not_dropped_under_its_reader` found this).
            barrier::writer();
        }
        self.reclaim();
    }

    /// Whether a value unpublished by [`RcuCell::store`] is not dropped
    /// yet: it waits for readers to leave, or its drop is running.
    pub fn has_retired(&self) -> bool {
        self.pending.load(Ordering::Acquire) || self.dropping.load(Ordering::Acquire) > 0
    }

    /// Waits until every value unpublished so far is dropped (each reader
    /// that could hold one has left its read), dropping them here if the
    /// readers left without doing so; gives up after `limit`. Returns
    /// whether none is left. A thread that is itself inside a read (of
    /// any cell: the records are shared) cannot wait for itself: it gets
    /// `false` at once if something is retired.
    pub fn wait_retired(&self, limit: std::time::Duration) -> bool {
        if !self.has_retired() {
            return true;
        }
        let inside = LOCAL
            .try_with(|l| l.0.depth.load(Ordering::Relaxed) > 0)
            .unwrap_or(false);
        let start = std::time::Instant::now();
        loop {
            self.reclaim();
            if !self.has_retired() {
                return true;
            }
            if inside || start.elapsed() >= limit {
                return false;
            }
            #[cfg(not(loom))]
            std::thread::sleep(std::time::Duration::from_micros(50));
            #[cfg(loom)]
            loom::thread::yield_now();
        }
    }

    /// Unpublishes the value without ever dropping it (a forked child's
    /// copy of its parent's: dropping it would act for the parent).
    pub fn forget(&self) {
        self.value.swap(ptr::null_mut(), Ordering::SeqCst);
    }

    fn lock_retired(&self) -> MutexGuard<'_, Vec<Retired<T>>> {
        lock(&self.retired)
    }

    /// Drops the retired values no reader can hold any more (outside the
    /// lock: a drop may be long, and may read the cell again).
    #[cold]
    #[inline(never)]
    fn reclaim(&self) {
        let free: Vec<*const T> = {
            let mut retired = self.lock_retired();
            let mut free = Vec::new();
            retired.retain(|r| {
                let done = r.free_to_drop();
                if done {
                    free.push(r.value);
                }
                !done
            });
            // Counted before the list lets go of them, so a waiter never
            // sees neither (`has_retired`).
            self.dropping.fetch_add(free.len() as u64, Ordering::AcqRel);
            if retired.is_empty() {
                self.pending.store(false, Ordering::Release);
            }
            free
        };
        for value in free {
            // SAFETY: made by `Arc::into_raw` in `store`, unpublished, and
            // no reader that could have loaded it is still reading (the
            // retired record's waits); taken out of the list once.
            drop(unsafe { Arc::from_raw(value) });
            self.dropping.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl<T> Drop for RcuCell<T> {
    fn drop(&mut self) {
        // `&mut self`: no reader can hold a guard of this cell.
        let p = self.value.swap(ptr::null_mut(), Ordering::Relaxed);
        if !p.is_null() {
            // SAFETY: made by `Arc::into_raw`, owned by the cell.
            drop(unsafe { Arc::from_raw(p) });
        }
        for r in lock(&self.retired).drain(..) {
            // SAFETY: as above; no guard of this cell is alive.
            drop(unsafe { Arc::from_raw(r.value) });
        }
    }
}

/// A borrow of an [`RcuCell`]'s value; not `Send` (it marks the thread
/// that made it as reading).
pub struct ReadGuard<'a, T> {
    cell: &'a RcuCell<T>,
    reader: &'static Reader,
    value: *const T,
    not_send: PhantomData<Cell<*const ()>>,
}

impl<T> std::ops::Deref for ReadGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: non-NULL (checked in `read`), published when it was
        // loaded, and not dropped while this thread's read is marked.
        unsafe { &*self.value }
    }
}

impl<T> ReadGuard<'_, T> {
    /// A shared reference to the value (the guard keeps it alive).
    pub fn clone_arc(&self) -> Arc<T> {
        // SAFETY: the pointer came from `Arc::into_raw` and the count it
        // stands for is alive (see `deref`); one more reference is taken.
        unsafe {
            Arc::increment_strong_count(self.value);
            Arc::from_raw(self.value)
        }
    }
}

impl<T> Drop for ReadGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        let depth = self.reader.depth.load(Ordering::Relaxed) - 1;
        if depth == 0 {
            let left = self.reader.left.load(Ordering::Relaxed);
            self.reader.left.store(left + 1, Ordering::Release);
        }
        // Release: the reads through this guard come before a writer sees
        // the thread out.
        self.reader.depth.store(depth, Ordering::Release);
        if depth == 0 {
            // Pairs with the writer's fence after it sets `pending` (a
            // compiler fence only, where membarrier serves).
            barrier::reader();
            if self.cell.pending.load(Ordering::Acquire) {
                self.cell.reclaim();
            }
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for ReadGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Barrier;
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    /// Counts drops; `alive` turns false when it drops.
    struct Tracked {
        alive: AtomicBool,
        drops: Arc<AtomicUsize>,
    }

    impl Tracked {
        fn new(drops: &Arc<AtomicUsize>) -> Arc<Tracked> {
            Arc::new(Tracked {
                alive: AtomicBool::new(true),
                drops: drops.clone(),
            })
        }
    }

    impl Drop for Tracked {
        fn drop(&mut self) {
            self.alive.store(false, Ordering::SeqCst);
            self.drops.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// The tests share the thread records (see the module docs): one at
    /// a time, so that one's readers do not hold the other's values.
    static SERIAL: Mutex<()> = Mutex::new(());

    #[test]
    fn a_value_lives_until_its_last_reader_leaves() {
        let _serial = lock(&SERIAL);
        let drops = Arc::new(AtomicUsize::new(0));
        let cell = RcuCell::new();
        assert!(cell.read().is_none());
        cell.store(Some(Tracked::new(&drops)));
        let outer = cell.read().expect("published");
        let inner = cell.read().expect("nested read");
        drop(inner);
        // Unpublished while this thread is inside a read: kept.
        std::thread::scope(|s| {
            s.spawn(|| cell.store(None));
        });
        assert!(cell.read().is_none(), "new readers see nothing");
        assert!(outer.alive.load(Ordering::SeqCst));
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        drop(outer);
        assert_eq!(
            drops.load(Ordering::SeqCst),
            1,
            "dropped by its last reader"
        );
        // Without readers a store drops the old value at once.
        cell.store(Some(Tracked::new(&drops)));
        cell.store(None);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
        // A clone outlives the cell's reference.
        cell.store(Some(Tracked::new(&drops)));
        let kept = cell.read().unwrap().clone_arc();
        cell.store(None);
        assert!(kept.alive.load(Ordering::SeqCst));
        drop(kept);
        assert_eq!(drops.load(Ordering::SeqCst), 3);
    }

    /// `wait_retired` waits for the readers of an unpublished value: it
    /// gives up after its limit while one stays, returns at once for a
    /// thread inside a read, and returns true once the reader has left.
    #[test]
    fn waiting_for_retired_values() {
        let _serial = lock(&SERIAL);
        let drops = Arc::new(AtomicUsize::new(0));
        let cell = RcuCell::new();
        assert!(cell.wait_retired(Duration::ZERO), "nothing retired");
        cell.store(Some(Tracked::new(&drops)));
        let (entered, leave) = (Barrier::new(2), Barrier::new(2));
        std::thread::scope(|s| {
            s.spawn(|| {
                let held = cell.read().expect("published");
                entered.wait();
                leave.wait();
                drop(held);
            });
            entered.wait();
            cell.store(None);
            assert!(cell.has_retired());
            let t = Instant::now();
            assert!(!cell.wait_retired(Duration::from_millis(30)));
            assert!(t.elapsed() >= Duration::from_millis(30));
            {
                // Inside a read of its own: no waiting for itself.
                cell.store(Some(Tracked::new(&drops)));
                let _mine = cell.read().expect("published");
                let t = Instant::now();
                assert!(!cell.wait_retired(Duration::from_secs(60)));
                assert!(t.elapsed() < Duration::from_secs(30));
                cell.store(None);
            }
            // Both wait for the other thread, still inside its read.
            assert_eq!(drops.load(Ordering::SeqCst), 0);
            leave.wait();
            assert!(cell.wait_retired(Duration::from_secs(60)));
        });
        assert!(!cell.has_retired());
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }

    /// At thread exit, after the thread's record is given back, a read
    /// gives `None` while the value is still published: `is_empty` tells
    /// the two apart (calls from exit handlers).
    #[test]
    fn reads_after_the_record_is_gone_say_so() {
        let _serial = lock(&SERIAL);
        static CELL: RcuCell<u32> = RcuCell::new();
        static SEEN: Mutex<Option<(bool, bool)>> = Mutex::new(None);
        struct Late;
        impl Drop for Late {
            fn drop(&mut self) {
                let read = CELL.read().map(|v| *v == 7);
                *SEEN.lock().unwrap() = Some((read.is_none(), CELL.is_empty()));
            }
        }
        thread_local! {
            static LATE: Late = const { Late };
        }
        CELL.store(Some(Arc::new(7)));
        std::thread::spawn(|| {
            // LATE is registered first, so it is destroyed after LOCAL
            // (thread-local destructors run last registered, first run).
            LATE.with(|_| {});
            assert_eq!(CELL.read().map(|v| *v), Some(7));
        })
        .join()
        .unwrap();
        let (no_read, empty) = SEEN.lock().unwrap().take().expect("LATE dropped");
        assert!(no_read, "the record went first, so the read gave None");
        assert!(!empty, "still published");
        CELL.store(None);
        assert!(CELL.is_empty());
    }

    /// Readers on three threads never see a dropped value while a writer
    /// publishes and unpublishes as fast as it can.
    #[test]
    fn readers_never_see_a_dropped_value() {
        let _serial = lock(&SERIAL);
        let drops = Arc::new(AtomicUsize::new(0));
        let cell: RcuCell<Tracked> = RcuCell::new();
        let stop = AtomicBool::new(false);
        let seen = AtomicU64::new(0);
        let stores = 2000;
        let mut published = 0;
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        if let Some(v) = cell.read() {
                            assert!(v.alive.load(Ordering::SeqCst), "use after drop");
                            seen.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
            // On a loaded machine the readers may not have started when
            // the first `stores` stores are done: go on until they have
            // seen values, so the test cannot pass without readers.
            let mut i = 0;
            while i < stores || seen.load(Ordering::Relaxed) < 1000 {
                if i % 2 == 0 {
                    published += 1;
                }
                cell.store((i % 2 == 0).then(|| Tracked::new(&drops)));
                i += 1;
            }
            stop.store(true, Ordering::Relaxed);
        });
        cell.store(None);
        assert_eq!(
            drops.load(Ordering::SeqCst),
            published,
            "every value dropped once"
        );
        assert!(seen.load(Ordering::Relaxed) >= 1000);
    }
}
