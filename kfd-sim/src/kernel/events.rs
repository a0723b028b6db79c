//! Events (kfd_events.c): the signal page, create/destroy/set/reset and
//! WAIT_EVENTS, which blocks on a condition variable without holding the
//! process lock.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use kfd_sys::kfd::*;
use kfd_sys::Errno;

use super::dispatch::{Ctx, R};
use super::memfd::{shared_mappings, Memfd};
use super::memory::{event_page_storage, BoStorage};
use super::usermem::{self, FromBuf, ToBuf};
use super::{layout, lock};
use zerocopy::IntoBytes;

/// First id of non-signal events (`KFD_FIRST_NONSIGNAL_EVENT_ID`,
/// `(INT_MAX >> 1) + 1` in `kfd_events.h`: the upper half of the id space,
/// far above any signal slot).
const FIRST_NONSIGNAL_ID: u32 = (i32::MAX as u32 >> 1) + 1;
/// Signal slots of the kernel-allocated page until user space maps it
/// ("oldest user mode expects 256 event slots").
const UNMAPPED_PAGE_SLOTS: u64 = 256;
/// Slot value of an unsignaled event.
const UNSIGNALED: u64 = u64::MAX;
/// Where the event-type data of a `kfd_event_data` starts: the union,
/// every member of which starts there.
const EVENT_DATA: usize = std::mem::offset_of!(kfd_event_data, u);
/// Where the signal member's `last_event_age` is in a `kfd_event_data`.
const LAST_EVENT_AGE: usize =
    EVENT_DATA + std::mem::offset_of!(kfd_hsa_signal_event_data, last_event_age);

/// Where the signal slots live.
#[derive(Debug, Clone)]
enum SignalPage {
    /// Allocated by the kernel: a page of a kfd memfd.
    Kernel(Arc<Memfd>),
    /// A user GTT BO whose handle came with the first CREATE_EVENT.
    Bo(Arc<BoStorage>),
}

impl SignalPage {
    fn write_slot(&self, id: u32, v: u64) {
        let off = id as u64 * 8;
        let _ = match self {
            SignalPage::Kernel(m) => m.pwrite(layout::KFD_EVENTS_OFF + off, &v.to_ne_bytes()),
            SignalPage::Bo(b) => b.write(off, &v.to_ne_bytes()),
        };
    }

    fn read_slot(&self, id: u32) -> u64 {
        let mut b = [0u8; 8];
        let off = id as u64 * 8;
        let r = match self {
            SignalPage::Kernel(m) => m.pread(layout::KFD_EVENTS_OFF + off, &mut b),
            SignalPage::Bo(s) if off + 8 <= s.size => s.read(off, &mut b),
            SignalPage::Bo(_) => Err(Errno::EINVAL),
        };
        r.map_or(UNSIGNALED, |()| u64::from_ne_bytes(b))
    }

    fn fill_unsignaled(&self, slots: u64) {
        let bytes = vec![0xffu8; (slots * 8) as usize];
        let _ = match self {
            SignalPage::Kernel(m) => m.pwrite(layout::KFD_EVENTS_OFF, &bytes),
            SignalPage::Bo(b) => b.write(0, &bytes[..bytes.len().min(b.size as usize)]),
        };
    }
}

#[derive(Debug)]
struct Event {
    ty: u32,
    auto_reset: bool,
    signaled: bool,
    age: u64,
    /// Waiters registered on this event: waiter id → index in its list.
    waiters: Vec<(u64, usize)>,
    memory_exception: kfd_hsa_memory_exception_data,
    hw_exception: kfd_hsa_hw_exception_data,
}

#[derive(Debug)]
struct Waiter {
    /// Event ids waited on.
    ids: Vec<u32>,
    activated: Vec<bool>,
    destroyed: Vec<bool>,
    age_enabled: Vec<bool>,
}

#[derive(Debug, Default)]
struct Inner {
    events: BTreeMap<u32, Event>,
    page: Option<SignalPage>,
    /// Number of signal slots usable (signal_mapped_size / 8).
    mapped_slots: u64,
    /// The kernel-allocated page was seen mapped by user space
    /// (`kfd_event_mmap` set `mapped_slots` from the mapping's size).
    page_mmapped: bool,
    signal_count: u64,
    signal_handle: Option<u64>,
    waiters: HashMap<u64, Waiter>,
    next_waiter: u64,
}

/// The events of one kernel process.
#[derive(Debug)]
pub(crate) struct EventTable {
    inner: Mutex<Inner>,
    cond: Condvar,
}

impl EventTable {
    /// As `kfd_event_init_process`: id 0 is taken up front (the CP's
    /// interrupts without a context id name it), so signal events are
    /// numbered from 1 and the count of signal slots in use starts at 1.
    pub fn new() -> EventTable {
        EventTable {
            inner: Mutex::new(Inner {
                signal_count: 1,
                ..Default::default()
            }),
            cond: Condvar::new(),
        }
    }

    pub fn count(&self) -> usize {
        lock(&self.inner).events.len()
    }

    /// Threads blocked in WAIT_EVENTS on this process right now.
    pub fn waiter_count(&self) -> usize {
        lock(&self.inner).waiters.len()
    }

    pub fn signal_handle(&self) -> Option<u64> {
        lock(&self.inner).signal_handle
    }

    /// Process teardown: destroy every event, waking waiters.
    pub fn destroy_all(&self) {
        let mut g = lock(&self.inner);
        let ids: Vec<u32> = g.events.keys().copied().collect();
        for id in ids {
            destroy_locked(&mut g, id);
        }
        g.page = None;
        g.signal_handle = None;
        drop(g);
        self.cond.notify_all();
    }

    /// `kfd_signal_event_interrupt`: the GPU raised an event interrupt whose
    /// context id carries `valid_bits` bits of an event id (32 from the CP's
    /// end-of-pipe, 28 from an SDMA trap). A signal event is found by its
    /// id when its slot was written (the mailbox), else every event whose
    /// slot is signaled is; each found one has its slot reset to
    /// "unsignaled" and is set, waking its waiters.
    pub fn signal_interrupt(&self, partial_id: u32, valid_bits: u32) {
        let mut g = lock(&self.inner);
        let Some(page) = g.page.clone() else {
            return;
        };
        let mut found = Vec::new();
        let direct = valid_bits > 31 || (1u64 << valid_bits) >= KFD_SIGNAL_EVENT_LIMIT as u64;
        if valid_bits != 0
            && direct
            && page.read_slot(partial_id) != UNSIGNALED
            && g.events.contains_key(&partial_id)
        {
            found.push(partial_id);
        }
        if found.is_empty() {
            // The partial id lookup failed: search the signaled slots.
            found = g
                .events
                .keys()
                .copied()
                .filter(|id| *id < KFD_SIGNAL_EVENT_LIMIT && page.read_slot(*id) != UNSIGNALED)
                .collect();
        }
        let mut any = false;
        for id in found {
            let gpu_signaled = g
                .events
                .get(&id)
                .is_some_and(|e| e.ty == KFD_IOC_EVENT_SIGNAL || e.ty == KFD_IOC_EVENT_DEBUG_EVENT);
            if gpu_signaled {
                page.write_slot(id, UNSIGNALED);
                set_locked(&mut g, id);
                any = true;
            }
        }
        drop(g);
        if any {
            self.cond.notify_all();
        }
    }

    /// `kfd_set_event` from the kernel itself (the runtime's queue error
    /// event): sets signal event `id`; false if there is none.
    pub fn set_signal_event(&self, id: u32) -> bool {
        let mut g = lock(&self.inner);
        if !g
            .events
            .get(&id)
            .is_some_and(|e| e.ty == KFD_IOC_EVENT_SIGNAL)
        {
            return false;
        }
        set_locked(&mut g, id);
        drop(g);
        self.cond.notify_all();
        true
    }

    /// Signals all events of `ty` with memory exception data (a simulated
    /// GPU VM fault).
    pub fn signal_type(&self, ty: u32, mem: Option<kfd_hsa_memory_exception_data>) {
        let mut g = lock(&self.inner);
        let ids: Vec<u32> = g
            .events
            .iter()
            .filter(|(_, e)| e.ty == ty)
            .map(|(k, _)| *k)
            .collect();
        for id in ids {
            if let (Some(d), Some(e)) = (mem, g.events.get_mut(&id)) {
                e.memory_exception = d;
            }
            set_locked(&mut g, id);
        }
        drop(g);
        self.cond.notify_all();
    }
}

fn destroy_locked(g: &mut Inner, id: u32) {
    if let Some(ev) = g.events.remove(&id) {
        for (w, idx) in &ev.waiters {
            if let Some(wt) = g.waiters.get_mut(w) {
                wt.destroyed[*idx] = true;
            }
        }
        if ev.ty == KFD_IOC_EVENT_SIGNAL || ev.ty == KFD_IOC_EVENT_DEBUG_EVENT {
            g.signal_count -= 1;
        }
    }
}

/// `set_event`: auto-reset events stay signaled only if nobody waits.
fn set_locked(g: &mut Inner, id: u32) {
    let Some(ev) = g.events.get_mut(&id) else {
        return;
    };
    ev.signaled = !ev.auto_reset || ev.waiters.is_empty();
    ev.age = ev.age.wrapping_add(1);
    if ev.age == 0 {
        ev.age = 2;
    }
    let ws = ev.waiters.clone();
    for (w, idx) in ws {
        if let Some(wt) = g.waiters.get_mut(&w) {
            wt.activated[idx] = true;
        }
    }
}

/// `kfd_event_mmap`: mapping the kernel's page sets the usable slots to
/// the mapping's size. The model does not see the `mmap` itself (it goes
/// straight to the process's memfd), so it looks for the mapping when the
/// 256 slots of an unmapped page run out, which is the only time the
/// size matters. Id 0 is never handed out (see `EventTable::new`).
fn note_event_page_mmap(g: &mut Inner, home: &Memfd) {
    if g.page_mmapped || !matches!(g.page, Some(SignalPage::Kernel(_))) {
        return;
    }
    let Ok(maps) = shared_mappings(home) else {
        return;
    };
    let len = maps
        .iter()
        .filter(|m| m.file_off == layout::KFD_EVENTS_OFF)
        .map(|m| m.len)
        .max();
    if let Some(len) = len {
        // The kernel refuses a mapping larger than the page.
        g.mapped_slots = (len / 8).min(u64::from(KFD_SIGNAL_EVENT_LIMIT));
        g.page_mmapped = true;
    }
}

pub(crate) fn create(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_create_event_args::from_buf(buf);
    let table = c.proc.events.clone();
    if a.event_page_offset != 0 {
        let st = c.lock_state();
        let mut g = lock(&table.inner);
        if g.page.is_some() {
            return Err(Errno::EINVAL);
        }
        let (storage, size) = event_page_storage(&st, a.event_page_offset)?;
        let page = SignalPage::Bo(storage);
        page.fill_unsignaled(KFD_SIGNAL_EVENT_LIMIT as u64);
        g.page = Some(page);
        g.mapped_slots = size / 8;
        g.signal_handle = Some(a.event_page_offset);
    }
    let mut g = lock(&table.inner);
    a.event_page_offset = 0;
    let ty = a.event_type;
    let id;
    if ty == KFD_IOC_EVENT_SIGNAL || ty == KFD_IOC_EVENT_DEBUG_EVENT {
        if g.mapped_slots != 0 && g.signal_count == g.mapped_slots {
            note_event_page_mmap(&mut g, &c.proc.home);
        }
        if g.mapped_slots != 0 && g.signal_count == g.mapped_slots {
            return Err(Errno::ENOSPC);
        }
        if g.page.is_none() {
            let page = SignalPage::Kernel(c.proc.home.clone());
            page.fill_unsignaled(KFD_SIGNAL_EVENT_LIMIT as u64);
            g.page = Some(page);
            g.mapped_slots = UNMAPPED_PAGE_SLOTS;
        }
        let limit = (g.mapped_slots as u32).min(KFD_SIGNAL_EVENT_LIMIT);
        let Some(free) = (1..limit).find(|i| !g.events.contains_key(i)) else {
            return Err(Errno::ENOSPC);
        };
        id = free;
        if let Some(p) = &g.page {
            p.write_slot(id, UNSIGNALED);
        }
        g.signal_count += 1;
        a.event_page_offset = layout::KFD_EVENTS_OFF;
        a.event_slot_index = id;
    } else {
        let mut i = FIRST_NONSIGNAL_ID;
        while g.events.contains_key(&i) {
            i = i.checked_add(1).ok_or(Errno::ENOSPC)?;
        }
        id = i;
    }
    g.events.insert(
        id,
        Event {
            ty,
            auto_reset: a.auto_reset != 0,
            signaled: false,
            age: 1,
            waiters: Vec::new(),
            memory_exception: Default::default(),
            hw_exception: Default::default(),
        },
    );
    a.event_id = id;
    a.event_trigger_data = id;
    a.to_buf(buf);
    Ok(0)
}

pub(crate) fn destroy(c: &Ctx, buf: &mut [u8]) -> R {
    let a = kfd_ioctl_destroy_event_args::from_buf(buf);
    let t = &c.proc.events;
    let mut g = lock(&t.inner);
    if !g.events.contains_key(&a.event_id) {
        return Err(Errno::EINVAL);
    }
    destroy_locked(&mut g, a.event_id);
    drop(g);
    t.cond.notify_all();
    Ok(0)
}

pub(crate) fn set(c: &Ctx, buf: &mut [u8]) -> R {
    let a = kfd_ioctl_set_event_args::from_buf(buf);
    let t = &c.proc.events;
    let mut g = lock(&t.inner);
    match g.events.get(&a.event_id) {
        Some(e) if e.ty == KFD_IOC_EVENT_SIGNAL => {}
        _ => return Err(Errno::EINVAL),
    }
    set_locked(&mut g, a.event_id);
    drop(g);
    t.cond.notify_all();
    Ok(0)
}

pub(crate) fn reset(c: &Ctx, buf: &mut [u8]) -> R {
    let a = kfd_ioctl_reset_event_args::from_buf(buf);
    let mut g = lock(&c.proc.events.inner);
    match g.events.get_mut(&a.event_id) {
        Some(e) if e.ty == KFD_IOC_EVENT_SIGNAL => {
            e.signaled = false;
            Ok(0)
        }
        _ => Err(Errno::EINVAL),
    }
}

fn condition(w: &Waiter, all: bool) -> u32 {
    if w.destroyed.iter().any(|d| *d) {
        return KFD_IOC_WAIT_RESULT_FAIL;
    }
    let n = w.activated.iter().filter(|a| **a).count();
    if (!all && n > 0) || n == w.ids.len() {
        KFD_IOC_WAIT_RESULT_COMPLETE
    } else {
        KFD_IOC_WAIT_RESULT_TIMEOUT
    }
}

fn unregister(g: &mut Inner, wid: u64) -> Option<Waiter> {
    let w = g.waiters.remove(&wid)?;
    for id in &w.ids {
        if let Some(ev) = g.events.get_mut(id) {
            ev.waiters.retain(|(x, _)| *x != wid);
        }
    }
    Some(w)
}

fn copy_out(g: &Inner, w: &Waiter, events_ptr: u64) -> Result<(), Errno> {
    let stride = std::mem::size_of::<kfd_event_data>() as u64;
    for (i, id) in w.ids.iter().enumerate() {
        if !w.activated[i] {
            continue;
        }
        let Some(ev) = g.events.get(id) else {
            return Err(Errno::EINVAL);
        };
        let base = events_ptr + i as u64 * stride;
        if ev.ty == KFD_IOC_EVENT_MEMORY {
            usermem::write(base + EVENT_DATA as u64, ev.memory_exception.as_bytes())?;
        } else if ev.ty == KFD_IOC_EVENT_HW_EXCEPTION {
            usermem::write(base + EVENT_DATA as u64, ev.hw_exception.as_bytes())?;
        } else if ev.ty == KFD_IOC_EVENT_SIGNAL && w.age_enabled[i] {
            usermem::write(base + LAST_EVENT_AGE as u64, ev.age.as_bytes())?;
        }
    }
    Ok(())
}

pub(crate) fn wait(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_wait_events_args::from_buf(buf);
    let r = wait_inner(c, &mut a);
    if r.is_err() {
        a.wait_result = KFD_IOC_WAIT_RESULT_FAIL;
    }
    a.to_buf(buf);
    r
}

fn wait_inner(c: &Ctx, a: &mut kfd_ioctl_wait_events_args) -> R {
    let t = c.proc.events.clone();
    // Read as bytes: `kfd_event_data` holds a union, whose signal member
    // is read from its bytes below.
    let size = size_of::<kfd_event_data>();
    let raw = usermem::read_records(a.events_ptr, a.num_events as usize, size)?;
    let data: Vec<&[u8]> = raw.chunks_exact(size).collect();
    let all = a.wait_for_all != 0;
    let deadline = match a.timeout {
        0 => Some(Instant::now()),
        u32::MAX => None,
        ms => Some(Instant::now() + Duration::from_millis(ms.min(0x7fff_ffff) as u64)),
    };
    let mut g = lock(&t.inner);
    let wid = g.next_waiter;
    g.next_waiter += 1;
    let n = data.len();
    let mut w = Waiter {
        ids: Vec::with_capacity(n),
        activated: vec![false; n],
        destroyed: vec![false; n],
        age_enabled: vec![false; n],
    };
    // init_event_waiter for each event, undoing on failure.
    let mut registered: Vec<u32> = Vec::new();
    for (i, d) in data.iter().enumerate() {
        let id = kfd_event_data::from_buf(d).event_id;
        let Some(ev) = g.events.get_mut(&id) else {
            for rid in &registered {
                if let Some(e) = g.events.get_mut(rid) {
                    e.waiters.retain(|(x, _)| *x != wid);
                }
            }
            return Err(Errno::EINVAL);
        };
        w.ids.push(id);
        w.activated[i] = ev.signaled;
        ev.signaled = ev.signaled && !ev.auto_reset;
        let last_age = u64::from_buf(&d[LAST_EVENT_AGE..]);
        if ev.ty == KFD_IOC_EVENT_SIGNAL && last_age != 0 {
            w.age_enabled[i] = true;
            if ev.age != last_age {
                w.activated[i] = true;
            }
        }
        if !w.activated[i] {
            ev.waiters.push((wid, i));
            registered.push(id);
        }
    }
    g.waiters.insert(wid, w);
    let mut result;
    let mut kicked = false;
    loop {
        let Some(wt) = g.waiters.get(&wid) else {
            result = KFD_IOC_WAIT_RESULT_FAIL;
            break;
        };
        result = condition(wt, all);
        if result != KFD_IOC_WAIT_RESULT_TIMEOUT {
            break;
        }
        let left = match deadline {
            None => None,
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => Some(left),
                _ => break,
            },
        };
        if !kicked {
            // A thread going to sleep on an event usually just submitted
            // the work that will signal it: look at the queues now, not at
            // the next poll. Only once the waiter is registered (and
            // without the lock): waking the engine thread may preempt this
            // one, and the kernel's window between entering WAIT_EVENTS and
            // init_event_waiter is a few instructions, in which a set of
            // an auto-reset event would go to whichever thread waits
            // first. ROCr 5.2.3's queue destroy loses its wakeup exactly
            // so (kernel_events.rs: `rocr_5_2_queue_destroy_race`).
            kicked = true;
            drop(g);
            c.m.engine.kick();
            g = lock(&t.inner);
            continue;
        }
        g = match left {
            None => t.cond.wait(g).unwrap_or_else(|e| e.into_inner()),
            Some(left) => {
                t.cond
                    .wait_timeout(g, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
        };
    }
    let w = unregister(&mut g, wid);
    a.wait_result = result;
    if result == KFD_IOC_WAIT_RESULT_FAIL {
        return Err(Errno::EIO);
    }
    if result == KFD_IOC_WAIT_RESULT_COMPLETE {
        if let Some(w) = &w {
            copy_out(&g, w, a.events_ptr)?;
        }
    }
    Ok(0)
}
