//! `exec`: kfdtest-style queue work through the thunk API, executed by
//! the simulator's CP, SDMA engines and shader machine: a PM4 compute
//! queue made with `hsaKmtCreateQueue` runs WRITE_DATA and RELEASE_MEM
//! with an interrupt that `hsaKmtWaitOnEvent` sees; an SDMA queue copies,
//! fences and traps; a small CP ring wraps many times; a queue destroyed
//! while its packet waits returns at once and runs nothing after; an AQL
//! queue dispatches kernels (gfx9 machine code): one that writes its
//! work-item ids with a completion signal, one using private (scratch)
//! memory, one with an illegal instruction (the CP's error in the queue's
//! inactive signal) and one storing to unmapped memory (a GPU memory
//! fault the memory event reports). Both libraries must agree on every
//! status and on what the GPU wrote.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::time::{Duration, Instant};

use hsakmt_sys::common::HsaEventDescriptor;
use kfd_gpu::samples::{FILL, FILL_PROPERTIES, FILL_RSRC2};
use kfd_sys::hsa::{
    amd_signal_t, hsa_kernel_dispatch_packet_t, kernel_code_properties, kernel_descriptor_t,
    AMD_SIGNAL_KIND_USER, HSA_FENCE_SCOPE_SYSTEM, HSA_PACKET_HEADER_BARRIER,
    HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE, HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE,
    HSA_PACKET_HEADER_TYPE, HSA_PACKET_TYPE_INVALID, HSA_PACKET_TYPE_KERNEL_DISPATCH,
};
use kfd_sys::packet::{concat, CompareFunction, PacketError};
use kfd_sys::pm4::{
    self, ReleaseData, ReleaseInterrupt, PM4_MEC_RELEASE_MEM, PM4_MEC_WAIT_REG_MEM, PM4_NOP_FILLER,
};
use kfd_sys::sdma::{self, SDMA_COUNT_MASK_22, SDMA_PKT_COPY_LINEAR};
use zerocopy::{Immutable, IntoBytes};

use super::queues::COMPUTE;
use super::Applies::Since;
use super::{alloc, free, require, setup, teardown, Table, Topo};
use crate::abi::AbiKind::Rocm52;
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

    /// Writes the plain data `v` (a whole number of words) at `off`, word
    /// by word.
    fn set_obj(&self, off: u64, v: &(impl IntoBytes + Immutable)) {
        for (k, w) in v.as_bytes().chunks_exact(4).enumerate() {
            self.set_u32(
                off + 4 * k as u64,
                u32::from_ne_bytes([w[0], w[1], w[2], w[3]]),
            );
        }
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

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    t.add(Since(Rocm52), "exec/pm4-write-data-release-mem", pm4_release_mem);
    t.add(Since(Rocm52), "exec/sdma-copy-fence-trap", sdma_copy_fence_trap);
    t.add(Since(Rocm52), "exec/pm4-wraparound", pm4_wraparound);
    t.add(Since(Rocm52), "exec/destroy-while-busy", destroy_while_busy);
    t.add(Since(Rocm52), "exec/aql-dispatch", aql_dispatch);
    t.add(Since(Rocm52), "exec/aql-dispatch-scratch", aql_dispatch_scratch);
    t.add(Since(Rocm52), "exec/aql-illegal-instruction", aql_illegal_instruction);
    t.add(Since(Rocm52), "exec/aql-vm-fault", aql_vm_fault);
    t.add(Since(Rocm52), "exec/sdma-fault-tells-waiters", sdma_fault_tells_waiters);
}

/// The dwords of packets a scenario built. A packet that cannot be built
/// is recorded (`packet-error`) and nothing is submitted for it.
fn packets<A: Abi>(cx: &mut Cx<A>, built: Result<Vec<u32>, PacketError>) -> Vec<u32> {
    built.unwrap_or_else(|e| {
        cx.rec("packet-error", e);
        Vec::new()
    })
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
            let cmds = pm4::write_data(rig.mem.addr(DATA), &[0x11, 0x22, 0x33, 0x44])
                .and_then(|w| Ok(concat(&[&w, &PM4_MEC_RELEASE_MEM::signal_event(slot, id)?])));
            q.submit(rig, &packets(cx, cmds));
            wait(cx, "wait", e);
            let words: Vec<String> = (0..4)
                .map(|i| format!("{:#x}", rig.mem.u32(DATA + 4 * i)))
                .collect();
            cx.rec("data", words.join(" "));
            cx.rec("rptr-caught-up", q.drained());
            // Again, with 64-bit data and the event id once more.
            let cmds = PM4_MEC_RELEASE_MEM::end_of_pipe(
                rig.mem.addr(DATA + 64),
                ReleaseData::Data64,
                0x1122_3344_5566_7788,
                ReleaseInterrupt::NoInterrupt,
                0,
            )
            .and_then(|r| Ok(concat(&[&r, &PM4_MEC_RELEASE_MEM::signal_event(slot, id)?])));
            q.submit(rig, &packets(cx, cmds));
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
            let (from, to) = (rig.mem.addr(src), rig.mem.addr(dst));
            let cmds = SDMA_PKT_COPY_LINEAR::new(from, to, len, SDMA_COUNT_MASK_22)
                .and_then(|c| Ok(concat(&[&c, &sdma::signal_event(slot, id)?])));
            q.submit(rig, &packets(cx, cmds));
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
            let at = rig.mem.addr(DATA + 8 * u64::from(i % 64));
            let pkt = packets(cx, pm4::write_data(at, &[i, !i]));
            let pos = q.written % q.ring_dw;
            if pos + pkt.len() as u64 > q.ring_dw {
                q.submit(rig, &vec![PM4_NOP_FILLER; (q.ring_dw - pos) as usize]);
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
        let wait = PM4_MEC_WAIT_REG_MEM::memory(rig.mem.addr(DATA), 1, !0, CompareFunction::Equal);
        let cmds = wait.and_then(|w| {
            Ok(concat(&[
                &w,
                &pm4::write_data(rig.mem.addr(DATA + 4), &[9])?,
            ]))
        });
        q.submit(rig, &packets(cx, cmds));
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

/// `HSA_QUEUE_COMPUTE_AQL`.
const AQL: u32 = 21;

/// Where the AQL scenarios keep things in the rig's scratch memory: an
/// `amd_queue_t` image (the CP finds it from the read pointer, as ROCr
/// lays it out), signals, the kernel and its descriptor, kernel
/// arguments, and the output.
mod aql_mem {
    use kfd_sys::hsa::{amd_queue_t, amd_signal_t};
    use std::mem::offset_of;

    pub const AMDQ: u64 = 0x2000;
    pub const WRITE_ID: u64 = AMDQ + offset_of!(amd_queue_t, write_dispatch_id) as u64;
    pub const READ_ID: u64 = AMDQ + offset_of!(amd_queue_t, read_dispatch_id) as u64;
    pub const READ_ID_OFFSET: u64 =
        AMDQ + offset_of!(amd_queue_t, read_dispatch_id_field_base_byte_offset) as u64;
    pub const INACTIVE: u64 = AMDQ + offset_of!(amd_queue_t, queue_inactive_signal) as u64;
    /// The value of a signal at `at`.
    pub const fn value(at: u64) -> u64 {
        at + offset_of!(amd_signal_t, value) as u64
    }
    pub const DONE_SIGNAL: u64 = 0x3000;
    pub const INACTIVE_SIGNAL: u64 = 0x3040;
    pub const CODE: u64 = 0x4000;
    pub const DESCRIPTOR: u64 = 0x5000;
    pub const KERNARG: u64 = 0x6000;
    pub const OUT: u64 = super::DATA;
}

/// gfx90a code that writes two words per work-item to its private
/// segment through the private segment buffer (s[0:3], wave offset s7),
/// reads them back and stores their sum, `0x1234 + 2 * id + 7` (`id`
/// the work-item's id in its workgroup of 64), at `out[global id]` (kernarg pointer in s[4:5], workgroup id X in s6):
///
/// ```text
/// s_load_dwordx2 s[8:9], s[4:5], 0x0
/// v_mov_b32 v1, 0x1234
/// v_add_u32 v1, v1, v0
/// v_add_u32 v4, 7, v0
/// buffer_store_dword v1, off, s[0:3], s7 offset:16
/// buffer_store_dword v4, off, s[0:3], s7 offset:20
/// s_waitcnt vmcnt(0)
/// buffer_load_dword v2, off, s[0:3], s7 offset:16
/// buffer_load_dword v5, off, s[0:3], s7 offset:20
/// s_waitcnt vmcnt(0) lgkmcnt(0)
/// v_add_u32 v2, v2, v5
/// s_lshl_b32 s10, s6, 6
/// v_add_u32 v3, s10, v0
/// v_lshlrev_b32 v3, 2, v3
/// global_store_dword v3, v2, s[8:9]
/// s_endpgm
/// ```
const SCRATCH: &[u32] = &[
    0xc006_0202,
    0x0000_0000,
    0x7e02_02ff,
    0x0000_1234,
    0x6802_0101,
    0x6808_0087,
    0xe070_0010,
    0x0700_0100,
    0xe070_0014,
    0x0700_0400,
    0xbf8c_0f70,
    0xe050_0010,
    0x0700_0200,
    0xe050_0014,
    0x0700_0500,
    0xbf8c_0070,
    0x6804_0b02,
    0x8e0a_8606,
    0x6806_000a,
    0x2406_0682,
    0xdc70_8000,
    0x0008_0203,
    0xbf81_0000,
];

/// Of [`SCRATCH`]: private segment buffer + kernarg pointer (six user
/// SGPRs), workgroup id X, the private segment wave offset.
const SCRATCH_RSRC2: u32 = 1 | 6 << 1 | 1 << 7;
const SCRATCH_PROPS: u32 = kernel_code_properties::ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER
    | kernel_code_properties::ENABLE_SGPR_KERNARG_SEGMENT_PTR;

/// An AQL queue over the rig's ring with an `amd_queue_t` image in the
/// rig's memory.
struct AqlQueue {
    id: u64,
    doorbell: u64,
    slots: u64,
    next: u64,
}

impl AqlQueue {
    fn create<A: Abi>(cx: &mut Cx<A>, t: &Topo, rig: &Rig, ring_size: u64) -> Option<AqlQueue> {
        use aql_mem::*;
        rig.mem.set_u32(READ_ID_OFFSET, (READ_ID - AMDQ) as u32);
        for slot in 0..ring_size / 64 {
            rig.ring
                .set_u32(slot * 64, u32::from(HSA_PACKET_TYPE_INVALID));
        }
        let mut q = A::QueueResource::default();
        A::set_queue_ptrs(&mut q, rig.mem.addr(WRITE_ID), rig.mem.addr(READ_ID));
        let s =
            kmt!(
            cx,
            "queue.create",
            hsaKmtCreateQueue(t.gpu(), AQL, 100, 0, rig.ring.p, ring_size, null_mut(), &mut q),
            "ring and the amd_queue_t image are live GPU-mapped buffers; q a live QueueResource"
        );
        if s != 0 {
            return None;
        }
        let (id, doorbell, wp, rp) = A::queue_view(&q);
        cx.rec(
            "queue.pointers-are-the-callers",
            (wp, rp) == (rig.mem.addr(WRITE_ID), rig.mem.addr(READ_ID)),
        );
        Some(AqlQueue {
            id,
            doorbell,
            slots: ring_size / 64,
            next: 0,
        })
    }

    /// Writes a 64-byte packet into the next slot (body first, the header
    /// word last), bumps the write index and rings the doorbell, as an
    /// AQL producer does.
    fn submit(&mut self, rig: &Rig, p: &hsa_kernel_dispatch_packet_t) {
        let slot = (self.next % self.slots) * 64;
        let ptr = rig.mem.word(aql_mem::WRITE_ID);
        // SAFETY: the write index in the rig's live memory (a 64-bit
        // word, written as two halves, high first).
        unsafe {
            ptr.add(1).write_volatile(((self.next + 1) >> 32) as u32);
            ptr.write_volatile((self.next + 1) as u32);
        }
        let (header, body) = p.as_bytes().split_at(4);
        for (k, w) in body.chunks_exact(4).enumerate() {
            let w = u32::from_ne_bytes([w[0], w[1], w[2], w[3]]);
            rig.ring.set_u32(slot + 4 + 4 * k as u64, w);
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
        rig.ring.set_u32(
            slot,
            u32::from_ne_bytes([header[0], header[1], header[2], header[3]]),
        );
        if self.doorbell != 0 {
            // SAFETY: the queue's doorbell the library mapped; ROCr writes
            // the index of the last packet there.
            unsafe { (self.doorbell as *mut u64).write_volatile(self.next) };
        }
        self.next += 1;
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

/// Writes an `amd_signal_t` (kind USER) with `value` at `off`, its event
/// mailbox the event's slot; returns its handle.
fn aql_signal(rig: &Rig, off: u64, value: i64, event: Option<(u32, u64)>) -> u64 {
    let (event_id, event_mailbox_ptr) = event.unwrap_or_default();
    rig.mem.set_obj(
        off,
        &amd_signal_t {
            kind: AMD_SIGNAL_KIND_USER,
            value,
            event_mailbox_ptr,
            event_id,
            ..Default::default()
        },
    );
    rig.mem.addr(off)
}

/// Writes `code` and a code-object v3 kernel descriptor for it.
fn aql_kernel(rig: &Rig, code: &[u32], rsrc2: u32, props: u32) -> u64 {
    use aql_mem::*;
    for (k, w) in code.iter().enumerate() {
        rig.mem.set_u32(CODE + 4 * k as u64, *w);
    }
    let kd = kernel_descriptor_t {
        kernel_code_entry_byte_offset: CODE as i64 - DESCRIPTOR as i64,
        compute_pgm_rsrc2: rsrc2,
        kernel_code_properties: props as u16,
        ..Default::default()
    };
    rig.mem.set_obj(DESCRIPTOR, &kd);
    rig.mem.addr(DESCRIPTOR)
}

/// A one-dimensional `KERNEL_DISPATCH` packet (barrier bit, system-scope
/// fences) of `items` work-items in workgroups of `wg`.
fn dispatch_packet(
    kernel: u64,
    kernarg: u64,
    items: u32,
    wg: u16,
    private: u32,
    done: u64,
) -> hsa_kernel_dispatch_packet_t {
    let system = HSA_FENCE_SCOPE_SYSTEM;
    hsa_kernel_dispatch_packet_t {
        header: HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE
            | 1 << HSA_PACKET_HEADER_BARRIER
            | system << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE
            | system << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE,
        setup: 1,
        workgroup_size_x: wg,
        workgroup_size_y: 1,
        workgroup_size_z: 1,
        grid_size_x: items,
        grid_size_y: 1,
        grid_size_z: 1,
        private_segment_size: private,
        kernel_object: kernel,
        kernarg_address: kernarg,
        completion_signal: done,
        ..Default::default()
    }
}

/// Runs `code` over `items` work-items with `out` as its argument and a
/// completion signal that fires `e`; records the wait and the signal.
#[allow(clippy::too_many_arguments)]
fn run_kernel<A: Abi>(
    cx: &mut Cx<A>,
    t: &Topo,
    rig: &Rig,
    e: (*mut A::Event, u32, u64),
    code: (&[u32], u32, u32),
    out: u64,
    items: u32,
    private: u32,
) {
    use aql_mem::*;
    let Some(mut q) = AqlQueue::create(cx, t, rig, 0x1000) else {
        return;
    };
    let done = aql_signal(rig, DONE_SIGNAL, 1, Some((e.1, e.2)));
    let kd = aql_kernel(rig, code.0, code.1, code.2);
    rig.mem.set_u32(KERNARG, out as u32);
    rig.mem.set_u32(KERNARG + 4, (out >> 32) as u32);
    q.submit(
        rig,
        &dispatch_packet(kd, rig.mem.addr(KERNARG), items, 64, private, done),
    );
    wait(cx, "wait", e.0);
    cx.rec("signal-value", rig.mem.u64(value(DONE_SIGNAL)));
    cx.rec("read-index", rig.mem.u64(READ_ID));
    q.destroy(cx);
}

/// The id-filling kernel over 1000 work-items in workgroups of 64 (the
/// last one partial): the completion signal's event wakes the wait, the
/// signal drops to 0, every id is in place and nothing past the grid was
/// written.
fn aql_dispatch<A: Abi>(cx: &mut Cx<A>) {
    with_rig(cx, 0x1000, |cx, t, rig| {
        let Some(e) = event(cx, t) else {
            return;
        };
        rig.mem.fill(aql_mem::OUT, 4 * 1024, |_| 0xee);
        let out = rig.mem.addr(aql_mem::OUT);
        run_kernel(
            cx,
            t,
            rig,
            e,
            (FILL, FILL_RSRC2, FILL_PROPERTIES),
            out,
            1000,
            0,
        );
        let bad = (0..1000u64)
            .filter(|i| rig.mem.u32(aql_mem::OUT + 4 * i) != *i as u32)
            .count();
        cx.rec("ids-wrong", bad);
        cx.rec(
            "after-grid",
            format!("{:#x}", rig.mem.u32(aql_mem::OUT + 4000)),
        );
        destroy_event(cx, e.0);
    });
}

/// Private memory: each work-item stores two words to its private
/// segment, loads them back and stores their sum.
fn aql_dispatch_scratch<A: Abi>(cx: &mut Cx<A>) {
    with_rig(cx, 0x1000, |cx, t, rig| {
        let Some(e) = event(cx, t) else {
            return;
        };
        let out = rig.mem.addr(aql_mem::OUT);
        run_kernel(
            cx,
            t,
            rig,
            e,
            (SCRATCH, SCRATCH_RSRC2, SCRATCH_PROPS),
            out,
            256,
            32,
        );
        let bad = (0..256u64)
            .filter(|i| rig.mem.u32(aql_mem::OUT + 4 * i) != 0x1234 + 2 * (*i % 64) as u32 + 7)
            .count();
        cx.rec("sums-wrong", bad);
        destroy_event(cx, e.0);
    });
}

/// An instruction the GPU does not have (SOPP opcode 0x7f): the queue
/// stops, the CP writes its illegal-instruction code (0x40000000) into
/// the queue's inactive signal and fires that signal's event; the packet
/// stays unconsumed, its completion signal untouched.
fn aql_illegal_instruction<A: Abi>(cx: &mut Cx<A>) {
    use aql_mem::*;
    with_rig(cx, 0x1000, |cx, t, rig| {
        let Some(e) = event(cx, t) else {
            return;
        };
        let inactive = aql_signal(rig, INACTIVE_SIGNAL, 0, Some((e.1, e.2)));
        rig.mem.set_obj(INACTIVE, &inactive);
        if let Some(mut q) = AqlQueue::create(cx, t, rig, 0x1000) {
            let done = aql_signal(rig, DONE_SIGNAL, 1, None);
            let kd = aql_kernel(rig, &[0xbfff_0000], FILL_RSRC2, FILL_PROPERTIES);
            q.submit(
                rig,
                &dispatch_packet(kd, rig.mem.addr(KERNARG), 64, 64, 0, done),
            );
            wait(cx, "wait", e.0);
            cx.rec(
                "inactive-signal",
                format!("{:#x}", rig.mem.u64(value(INACTIVE_SIGNAL))),
            );
            cx.rec("signal-value", rig.mem.u64(value(DONE_SIGNAL)));
            cx.rec("read-index", rig.mem.u64(READ_ID));
            q.destroy(cx);
        }
        destroy_event(cx, e.0);
    });
}

/// The id-filling kernel told to write at address 0x1000, which no GPU
/// VM maps: a GPU memory fault. The memory event fires, the packet stays
/// unconsumed.
fn aql_vm_fault<A: Abi>(cx: &mut Cx<A>) {
    use aql_mem::*;
    with_rig(cx, 0x1000, |cx, t, rig| {
        let mut d = HsaEventDescriptor::default();
        d.EventType.0 = MEMORY_EVENT;
        d.NodeId = t.gpu();
        let mut e: *mut A::Event = null_mut();
        let s = kmt!(
            cx,
            "memory-event.create",
            hsaKmtCreateEvent(&mut d, true, false, &mut e),
            "live descriptor; live out-pointer"
        );
        if s != 0 || e.is_null() {
            return;
        }
        if let Some(mut q) = AqlQueue::create(cx, t, rig, 0x1000) {
            let done = aql_signal(rig, DONE_SIGNAL, 1, None);
            let kd = aql_kernel(rig, FILL, FILL_RSRC2, FILL_PROPERTIES);
            rig.mem.set_u32(KERNARG, 0x1000);
            rig.mem.set_u32(KERNARG + 4, 0);
            q.submit(
                rig,
                &dispatch_packet(kd, rig.mem.addr(KERNARG), 64, 64, 0, done),
            );
            wait(cx, "wait", e);
            cx.rec("signal-value", rig.mem.u64(value(DONE_SIGNAL)));
            cx.rec("read-index", rig.mem.u64(READ_ID));
            q.destroy(cx);
        }
        destroy_event(cx, e);
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
            let cmds = sdma::write(p as u64, &[1, 2])
                .and_then(|w| Ok(concat(&[&w, &sdma::signal_event(slot, id)?])));
            q.submit(rig, &packets(cx, cmds));
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
