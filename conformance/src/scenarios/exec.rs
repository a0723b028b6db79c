//! `exec`: kfdtest-style queue work through the thunk API, executed by
//! the simulator's CP and SDMA engines: a PM4 compute queue made with
//! `hsaKmtCreateQueue` runs WRITE_DATA and RELEASE_MEM with an interrupt
//! that `hsaKmtWaitOnEvent` sees; an SDMA queue copies, fences and traps;
//! a small CP ring wraps many times; a queue destroyed while its packet
//! waits returns at once and runs nothing after. Both libraries must
//! agree on every status and on what the GPU wrote.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::time::{Duration, Instant};

use hsakmt_sys::common::HsaEventDescriptor;

#[path = "../../../kfd-sim/tests/kernel_util/packets.rs"]
mod packets;
use packets::{pm4, sdma};

use super::queues::COMPUTE;
use super::{add, alloc, free, require, setup, teardown, Scenario, Topo};
use crate::abi::{memflag as mf, Abi};
use crate::cx::Cx;
use crate::kmt;

/// `HSA_QUEUE_SDMA`.
const SDMA: u32 = 2;
/// `HSA_EVENTTYPE_SIGNAL`.
const SIGNAL_EVENT: u32 = 0;
/// `HSA_EVENTTYPE_MEMORY`.
const MEMORY_EVENT: u32 = 8;
/// `KFD_SMI_EVENT_VMFAULT`.
const SMI_VMFAULT: u32 = 1;

/// Scratch buffer: data the GPU writes and reads.
const DATA: u64 = 1 << 20;
/// The page holding a queue's write pointer (offset 0) and read pointer
/// (offset 8).
const PTRS: u64 = 0x1000;
/// How long a wait for the GPU may take.
const LIMIT: Duration = Duration::from_secs(5);

/// A host buffer mapped to the GPUs.
struct Buf {
    p: *mut c_void,
    size: u64,
}

impl Buf {
    fn addr(&self, off: u64) -> u64 {
        self.p as u64 + off
    }

    fn word(&self, off: u64) -> *mut u32 {
        assert!(off + 4 <= self.size, "offset {off} out of the buffer");
        // In bounds (asserted); the buffer is host-accessible.
        self.p.cast::<u8>().wrapping_add(off as usize).cast()
    }

    fn u32(&self, off: u64) -> u32 {
        // SAFETY: an aligned word inside a live host-accessible mapping
        // (`word` checks the bounds); the GPU may write it concurrently,
        // hence volatile.
        unsafe { self.word(off).read_volatile() }
    }

    fn set_u32(&self, off: u64, v: u32) {
        // SAFETY: as in `u32`.
        unsafe { self.word(off).write_volatile(v) }
    }

    fn u64(&self, off: u64) -> u64 {
        u64::from(self.u32(off)) | u64::from(self.u32(off + 4)) << 32
    }

    fn bytes(&self, off: u64, len: u64) -> &[u8] {
        assert!(off + len <= self.size);
        // SAFETY: in bounds of a live host-accessible mapping; the GPU
        // has finished writing it (the caller waited for the fence).
        unsafe { std::slice::from_raw_parts(self.p.cast::<u8>().add(off as usize), len as usize) }
    }

    fn fill(&self, off: u64, len: u64, f: impl Fn(u64) -> u8) {
        assert!(off + len <= self.size);
        for i in 0..len {
            // SAFETY: in bounds (asserted) of a live host mapping.
            unsafe {
                self.p
                    .cast::<u8>()
                    .add((off + i) as usize)
                    .write_volatile(f(i))
            };
        }
    }
}

fn buf<A: Abi>(cx: &mut Cx<A>, label: &str, size: u64, flags: u32) -> Option<Buf> {
    let p = alloc(
        cx,
        &format!("{label}.alloc"),
        0,
        size,
        mf::HOST_ACCESS | flags,
    )?;
    let mut va = 0u64;
    let s = kmt!(
        cx,
        &format!("{label}.map"),
        hsaKmtMapMemoryToGPU(p, size, &mut va),
        "allocated above"
    );
    if s != 0 {
        free(cx, &format!("{label}.free"), p, size);
        return None;
    }
    Some(Buf { p, size })
}

fn unbuf<A: Abi>(cx: &mut Cx<A>, label: &str, b: Buf) {
    kmt!(
        cx,
        &format!("{label}.unmap"),
        hsaKmtUnmapMemoryToGPU(b.p),
        "mapped by buf()"
    );
    free(cx, &format!("{label}.free"), b.p, b.size);
}

/// A queue's ring, its pointer page and scratch memory, all mapped.
struct Rig {
    ring: Buf,
    mem: Buf,
}

/// Sets up, makes a rig with a ring of `ring_size` bytes, runs `f`, and
/// tears everything down.
fn with_rig<A: Abi>(cx: &mut Cx<A>, ring_size: u64, f: impl FnOnce(&mut Cx<A>, &Topo, &Rig)) {
    let Some(t) = setup(cx) else { return };
    if let Some(ring) = buf(cx, "ring", ring_size.max(0x1000), mf::EXECUTE) {
        if let Some(mem) = buf(cx, "mem", 2 << 20, 0) {
            let rig = Rig { ring, mem };
            f(cx, &t, &rig);
            let Rig { ring, mem } = rig;
            unbuf(cx, "mem", mem);
            unbuf(cx, "ring", ring);
        } else {
            unbuf(cx, "ring", ring);
        }
    }
    teardown(cx);
}

/// A queue made by `hsaKmtCreateQueue` with the rig's pointers; writes to
/// the ring go through [`Queue::submit`].
struct Queue {
    id: u64,
    doorbell: u64,
    /// The write and read pointers the library settled on (libhsakmt
    /// puts those of a CP queue in memory of its own on gfx9+).
    wptr_at: *mut u32,
    rptr_at: *mut u32,
    /// `HSA_QUEUE_COMPUTE` (write pointer in dwords) or `HSA_QUEUE_SDMA`
    /// (in bytes).
    ty: u32,
    ring_dw: u64,
    /// Dwords written so far.
    written: u64,
}

impl Queue {
    fn create<A: Abi>(
        cx: &mut Cx<A>,
        t: &Topo,
        rig: &Rig,
        ty: u32,
        ring_size: u64,
    ) -> Option<Queue> {
        let mut q = A::QueueResource::default();
        A::set_queue_ptrs(&mut q, rig.mem.addr(PTRS), rig.mem.addr(PTRS + 8));
        let s = kmt!(
            cx,
            "queue.create",
            hsaKmtCreateQueue(
                t.gpu(),
                ty,
                100,
                0,
                rig.ring.p,
                ring_size,
                null_mut(),
                &mut q
            ),
            "ring and pointer page are live GPU-mapped buffers; q a live QueueResource"
        );
        if s != 0 {
            return None;
        }
        let (id, doorbell, wp, rp) = A::queue_view(&q);
        let mine = |p: u64| {
            if p == rig.mem.addr(PTRS) || p == rig.mem.addr(PTRS + 8) {
                "caller's"
            } else {
                "library's"
            }
        };
        cx.rec("queue.doorbell-nonnull", doorbell != 0);
        cx.rec("queue.wptr", mine(wp));
        cx.rec("queue.rptr", mine(rp));
        if wp == 0 || rp == 0 {
            return None;
        }
        Some(Queue {
            id,
            doorbell,
            wptr_at: wp as *mut u32,
            rptr_at: rp as *mut u32,
            ty,
            ring_dw: ring_size / 4,
            written: 0,
        })
    }

    /// The write pointer in the queue's unit.
    fn wptr(&self) -> u64 {
        if self.ty == SDMA {
            self.written * 4
        } else {
            self.written
        }
    }

    /// Appends `dws` (wrapping at the ring's end), publishes the write
    /// pointer and rings the doorbell, as kfdtest's queues do.
    fn submit(&mut self, rig: &Rig, dws: &[u32]) {
        for d in dws {
            rig.ring.set_u32((self.written % self.ring_dw) * 4, *d);
            self.written += 1;
        }
        let w = self.wptr();
        // SAFETY: the write pointer the library returned: a live,
        // host-accessible 64-bit word (ours or the library's page). High
        // half first, so the engine never reads a value ahead of the ring.
        unsafe {
            self.wptr_at.add(1).write_volatile((w >> 32) as u32);
            self.wptr_at.write_volatile(w as u32);
        }
        if self.doorbell != 0 {
            // SAFETY: the library mapped the queue's doorbell (a 64-bit
            // slot of the doorbell page) and returned its address; a
            // write there is how a user-mode queue is rung.
            unsafe { (self.doorbell as *mut u64).write_volatile(self.wptr()) };
        }
    }

    /// Whether the read pointer caught up with the write pointer (the CP
    /// writes the 32-bit dword offset into the ring, SDMA the 64-bit byte
    /// offset) within [`LIMIT`].
    fn drained(&self) -> bool {
        let want = if self.ty == SDMA {
            self.wptr()
        } else {
            self.written % self.ring_dw
        };
        until(|| {
            // SAFETY: the read pointer the library returned (a live
            // host-accessible word pair the GPU writes, hence volatile).
            let (lo, hi) = unsafe {
                (
                    self.rptr_at.read_volatile(),
                    self.rptr_at.add(1).read_volatile(),
                )
            };
            let r = if self.ty == SDMA {
                u64::from(lo) | u64::from(hi) << 32
            } else {
                u64::from(lo)
            };
            r == want
        })
    }

    fn destroy<A: Abi>(self, cx: &mut Cx<A>) {
        let id = self.id;
        kmt!(
            cx,
            "queue.destroy",
            hsaKmtDestroyQueue(id),
            "queue id returned by CreateQueue"
        );
    }
}

/// Polls `f` until it holds or [`LIMIT`] passes.
fn until(f: impl Fn() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < LIMIT {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    f()
}

/// An auto-reset signal event on the GPU node: `(event, id, slot)`.
fn event<A: Abi>(cx: &mut Cx<A>, t: &Topo) -> Option<(*mut A::Event, u32, u64)> {
    let mut d = HsaEventDescriptor::default();
    d.EventType.0 = SIGNAL_EVENT;
    d.NodeId = t.gpu();
    let mut e: *mut A::Event = null_mut();
    let s = kmt!(
        cx,
        "event.create",
        hsaKmtCreateEvent(&mut d, false, false, &mut e),
        "live descriptor; live out-pointer"
    );
    if s != 0 || e.is_null() {
        return None;
    }
    // SAFETY: the library returned a pointer to an HsaEvent it allocated,
    // valid until hsaKmtDestroyEvent.
    let view = A::event_view(&unsafe { e.read_unaligned() });
    cx.rec("event.slot-nonnull", view.hw2 != 0);
    Some((e, view.id, view.hw2))
}

fn destroy_event<A: Abi>(cx: &mut Cx<A>, e: *mut A::Event) {
    kmt!(cx, "event.destroy", hsaKmtDestroyEvent(e), "live event");
}

fn wait<A: Abi>(cx: &mut Cx<A>, label: &str, e: *mut A::Event) -> u32 {
    kmt!(
        cx,
        label,
        hsaKmtWaitOnEvent(e, 5000),
        "live event; 5 s, far more than the work takes"
    )
}

pub(super) fn add_all<A: Abi>(v: &mut Vec<Scenario<A>>) {
    add(v, "exec/pm4-write-data-release-mem", pm4_release_mem::<A>);
    add(v, "exec/sdma-copy-fence-trap", sdma_copy_fence_trap::<A>);
    add(v, "exec/pm4-wraparound", pm4_wraparound::<A>);
    add(v, "exec/destroy-while-busy", destroy_while_busy::<A>);
    add(
        v,
        "exec/sdma-fault-tells-waiters",
        sdma_fault_tells_waiters::<A>,
    );
}

/// WRITE_DATA of four words, then RELEASE_MEM writing the event id into
/// the event's slot with an end-of-pipe interrupt for it: the wait
/// returns, the words are there, the read pointer caught up.
fn pm4_release_mem<A: Abi>(cx: &mut Cx<A>) {
    with_rig(cx, 0x1000, |cx, t, rig| {
        let Some((e, id, slot)) = event(cx, t) else {
            return;
        };
        if let Some(mut q) = Queue::create(cx, t, rig, COMPUTE, 0x1000) {
            let mut cmds = pm4::write_data(rig.mem.addr(DATA), &[0x11, 0x22, 0x33, 0x44]);
            cmds.extend(pm4::release_mem(slot, u64::from(id), id, 1, 2));
            q.submit(rig, &cmds);
            wait(cx, "wait", e);
            let words: Vec<String> = (0..4)
                .map(|i| format!("{:#x}", rig.mem.u32(DATA + 4 * i)))
                .collect();
            cx.rec("data", words.join(" "));
            cx.rec("rptr-caught-up", q.drained());
            // Again, with 64-bit data and the event id once more.
            let mut cmds =
                pm4::release_mem(rig.mem.addr(DATA + 64), 0x1122_3344_5566_7788, 0, 2, 0);
            cmds.extend(pm4::release_mem(slot, u64::from(id), id, 1, 2));
            q.submit(rig, &cmds);
            wait(cx, "wait-again", e);
            cx.rec("data64", format!("{:#x}", rig.mem.u64(DATA + 64)));
            q.destroy(cx);
        }
        destroy_event(cx, e);
    });
}

/// COPY_LINEAR of 512 KiB + 4 KiB + 3 bytes between host buffers, FENCE
/// (the event id into its slot) and TRAP (the event id as interrupt
/// context): the wait returns, every byte arrived, the 64-bit byte read
/// pointer equals the write pointer.
fn sdma_copy_fence_trap<A: Abi>(cx: &mut Cx<A>) {
    with_rig(cx, 0x4000, |cx, t, rig| {
        let Some((e, id, slot)) = event(cx, t) else {
            return;
        };
        if let Some(mut q) = Queue::create(cx, t, rig, SDMA, 0x4000) {
            let len = (1 << 19) + 4096 + 3;
            let (src, dst) = (0x10000, DATA);
            let byte = |i: u64| (i * 7 + i / 4096) as u8;
            rig.mem.fill(src, len, byte);
            rig.mem.fill(dst, len + 1, |_| 0);
            let mut cmds = sdma::copy(rig.mem.addr(src), rig.mem.addr(dst), len);
            cmds.extend(sdma::fence(slot, id));
            cmds.extend(sdma::trap(id));
            q.submit(rig, &cmds);
            wait(cx, "wait", e);
            let copied = rig.mem.bytes(dst, len);
            let bad = (0..len).filter(|i| copied[*i as usize] != byte(*i)).count();
            cx.rec("bytes-differing", bad);
            cx.rec("byte-after-copy", rig.mem.bytes(dst + len, 1)[0]);
            cx.rec("rptr-caught-up", q.drained());
            cx.rec("wptr-bytes", q.wptr());
            q.destroy(cx);
        }
        destroy_event(cx, e);
    });
}

/// A 1 KiB ring (256 dwords) filled about twelve times over with
/// WRITE_DATA packets; a packet that would straddle the end is preceded by
/// one-dword fillers to the end, as kfdtest pads. Every packet ran (the
/// last of each slot holds its value), the read pointer wrapped with the
/// ring.
fn pm4_wraparound<A: Abi>(cx: &mut Cx<A>) {
    let ring = 1024;
    with_rig(cx, ring, |cx, t, rig| {
        let Some(mut q) = Queue::create(cx, t, rig, COMPUTE, ring) else {
            return;
        };
        let mut pads = 0;
        let mut kept_up = true;
        for i in 0..500u32 {
            let pkt = pm4::write_data(rig.mem.addr(DATA + 8 * u64::from(i % 64)), &[i, !i]);
            let pos = q.written % q.ring_dw;
            if pos + pkt.len() as u64 > q.ring_dw {
                q.submit(rig, &vec![pm4::FILLER; (q.ring_dw - pos) as usize]);
                pads += 1;
            }
            q.submit(rig, &pkt);
            // At most half the ring in flight; give up at the first stall
            // (each wait may take LIMIT).
            if i % 8 == 7 && !q.drained() {
                kept_up = false;
                break;
            }
        }
        kept_up &= q.drained();
        cx.rec("kept-up", kept_up);
        cx.rec("wrapped-times", pads);
        let last_ok = (436..500u32).all(|i| {
            let at = DATA + 8 * u64::from(i % 64);
            (rig.mem.u32(at), rig.mem.u32(at + 4)) == (i, !i)
        });
        cx.rec("last-round-written", last_ok);
        q.destroy(cx);
    });
}

/// A WAIT_REG_MEM on a word nobody writes, then a WRITE_DATA: destroying
/// the queue returns within a second, and satisfying the wait afterwards
/// runs nothing.
fn destroy_while_busy<A: Abi>(cx: &mut Cx<A>) {
    with_rig(cx, 0x1000, |cx, t, rig| {
        let Some(mut q) = Queue::create(cx, t, rig, COMPUTE, 0x1000) else {
            return;
        };
        let mut cmds = pm4::wait_reg_mem(rig.mem.addr(DATA), 1, !0, 3);
        cmds.extend(pm4::write_data(rig.mem.addr(DATA + 4), &[9]));
        q.submit(rig, &cmds);
        std::thread::sleep(Duration::from_millis(20));
        cx.rec("write-before-destroy", rig.mem.u32(DATA + 4));
        let t0 = Instant::now();
        q.destroy(cx);
        cx.rec("destroy-within-1s", t0.elapsed() < Duration::from_secs(1));
        rig.mem.set_u32(DATA, 1);
        std::thread::sleep(Duration::from_millis(20));
        cx.rec("write-after-destroy", rig.mem.u32(DATA + 4));
    });
}

/// An SDMA WRITE into VRAM allocated but not mapped to the GPU is a GPU
/// memory fault (issue 27: what an import the simulator took for
/// read-only did; a buffer of the library's, so that the C library's
/// diagnostic of the fault finds it without a request of its own): the
/// process's waiters are told through a memory-exception event — a wait
/// on the fence event and that event together returns, bounded, with the
/// memory event set and the fence not — the queue's read pointer stays,
/// destroying the evicted queue returns, and (6.2.4 and newest) the SMI
/// descriptor of the GPU reports `VMFAULT`.
fn sdma_fault_tells_waiters<A: Abi>(cx: &mut Cx<A>) {
    with_rig(cx, 0x1000, |cx, t, rig| {
        let Some((done, id, slot)) = event(cx, t) else {
            return;
        };
        let mut d = HsaEventDescriptor::default();
        d.EventType.0 = MEMORY_EVENT;
        d.NodeId = t.gpu();
        let mut fault: *mut A::Event = null_mut();
        let s = kmt!(
            cx,
            "fault-event.create",
            hsaKmtCreateEvent(&mut d, true, false, &mut fault),
            "live descriptor; live out-pointer; manual reset"
        );
        if s != 0 || fault.is_null() {
            destroy_event(cx, done);
            return;
        }
        let smi = if require(cx, &["hsaKmtOpenSMI"]) {
            let mut fd = -1i32;
            let s = kmt!(
                cx,
                "smi.open",
                hsaKmtOpenSMI(t.gpu(), &mut fd),
                "the GPU node; live out word"
            );
            let mask: u64 = 1 << (SMI_VMFAULT - 1);
            // SAFETY: writes the 8-byte mask from a local to the SMI
            // descriptor the library handed out (or to -1: EBADF).
            let w = unsafe { libc::write(fd, (&mask as *const u64).cast(), 8) };
            cx.rec("smi.mask-written", w);
            (s == 0).then_some(fd)
        } else {
            None
        };
        let target = alloc(cx, "target.alloc", t.gpu(), 0x1000, mf::NON_PAGED);
        if let (Some(p), Some(mut q)) = (target, Queue::create(cx, t, rig, SDMA, 0x1000)) {
            let mut cmds = sdma::write(p as u64, &[1, 2]);
            cmds.extend(sdma::fence(slot, id));
            cmds.extend(sdma::trap(id));
            q.submit(rig, &cmds);
            let mut both = [done, fault];
            kmt!(
                cx,
                "wait-either",
                hsaKmtWaitOnMultipleEvents(both.as_mut_ptr(), 2, false, 5000),
                "two live events; 5 s"
            );
            let told = kmt!(
                cx,
                "fault-event.set",
                hsaKmtWaitOnEvent(fault, 0),
                "live manual-reset event; no wait"
            );
            cx.check("exec.fault-told", told == 0, format!("status {told}"));
            kmt!(
                cx,
                "fence.not-signalled",
                hsaKmtWaitOnEvent(done, 0),
                "live event; no wait"
            );
            cx.rec("rptr-caught-up", q.drained());
            if let Some(fd) = smi {
                let mut b = [0u8; 512];
                // SAFETY: reads into `b` from the SMI descriptor (non-
                // blocking; the fault's event is queued by now).
                let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), b.len()) };
                let text = String::from_utf8_lossy(&b[..n.max(0) as usize]).into_owned();
                // The event numbers, not pids or task names.
                let evs: Vec<&str> = text
                    .lines()
                    .map(|l| l.split(' ').next().unwrap_or(""))
                    .collect();
                cx.rec("smi.events", evs.join(" "));
                cx.check("exec.smi-vmfault", evs == ["1"], &text);
            }
            q.destroy(cx);
        }
        if let Some(p) = target {
            free(cx, "target.free", p, 0x1000);
        }
        if let Some(fd) = smi {
            // SAFETY: the descriptor the library handed out, closed once.
            unsafe { libc::close(fd) };
        }
        destroy_event(cx, fault);
        destroy_event(cx, done);
    });
}
