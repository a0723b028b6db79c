//! The engine: the simulated CP and SDMA engines consume user-mode queues.
//! kfdtest-style scenarios (our own code) through the in-process driver:
//! PM4 compute queues, SDMA queues, AQL queues, completion signals, event
//! interrupts, queue errors and GPU memory faults.

mod kernel_util;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kernel_util::*;
use kfd_gpu::samples::{fill_descriptor, FILL};
use kfd_sim::Sim;
use std::mem::offset_of;

use kfd_sys::hsa::{
    amd_queue_t, amd_signal_t, AMD_SIGNAL_KIND_USER, HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS,
};
use kfd_sys::kfd::*;
use kfd_sys::packet::{concat, CompareFunction::Equal, Dwords};
use kfd_sys::pm4::{self, *};
use kfd_sys::sdma::{self, *};
use kfd_sys::{Errno, PAGE_SIZE};
use zerocopy::IntoBytes;

// ---- packets ---------------------------------------------------------------

/// The cache actions of the `ACQUIRE_MEM` before a dispatch: gfx9
/// `coher_cntl` (L1, L2, scalar and instruction caches)...
const ACQUIRE_GFX9: u32 = PM4_COHER_CNTL_TCL1_ACTION_ENA
    | PM4_COHER_CNTL_TC_ACTION_ENA
    | PM4_COHER_CNTL_SH_KCACHE_ACTION_ENA
    | PM4_COHER_CNTL_SH_ICACHE_ACTION_ENA;
/// ... and gfx10+ `gcr_cntl` (the same caches invalidated).
const ACQUIRE_GFX10: u32 = PM4_GCR_CNTL_GLI_INV_ALL
    | PM4_GCR_CNTL_GLK_INV
    | PM4_GCR_CNTL_GLV_INV
    | PM4_GCR_CNTL_GL1_INV
    | PM4_GCR_CNTL_GL2_INV;

mod aql {
    use kfd_sys::hsa::*;
    use kfd_sys::pm4::PM4_MEC_INDIRECT_BUFFER;
    use zerocopy::{Immutable, IntoBytes};

    pub use kfd_sys::hsa::{
        HSA_PACKET_TYPE_BARRIER_AND as BARRIER_AND, HSA_PACKET_TYPE_BARRIER_OR as BARRIER_OR,
        HSA_PACKET_TYPE_INVALID as INVALID,
    };

    /// The 64 bytes of a packet struct.
    pub fn bytes(p: &(impl IntoBytes + Immutable)) -> [u8; 64] {
        p.as_bytes().try_into().unwrap()
    }

    /// A header of type `ty` with the barrier bit.
    fn barrier_header(ty: u16) -> u16 {
        ty << HSA_PACKET_HEADER_TYPE | 1 << HSA_PACKET_HEADER_BARRIER
    }

    /// An AMD vendor packet header of `format`.
    fn vendor(format: u8) -> hsa_amd_vendor_packet_header_t {
        hsa_amd_vendor_packet_header_t {
            header: HSA_PACKET_TYPE_VENDOR_SPECIFIC,
            AmdFormat: format,
            reserved: 0,
        }
    }

    pub fn barrier(ty: u16, deps: &[u64], signal: u64) -> [u8; 64] {
        let mut p = hsa_barrier_and_packet_t {
            header: barrier_header(ty),
            completion_signal: signal,
            ..Default::default()
        };
        p.dep_signal[..deps.len()].copy_from_slice(deps);
        bytes(&p)
    }

    pub fn barrier_value(signal: u64, value: i64, mask: i64, cond: u32, done: u64) -> [u8; 64] {
        bytes(&hsa_amd_barrier_value_packet_t {
            header: vendor(HSA_AMD_PACKET_TYPE_BARRIER_VALUE),
            signal,
            value,
            mask,
            cond,
            completion_signal: done,
            ..Default::default()
        })
    }

    /// ROCr's `ExecutePM4` packet: an INDIRECT_BUFFER to `ib`, with the
    /// dword count ROCr leaves in `dw_cnt_remain`.
    pub fn pm4_ib(ib: u64, dwords: u32, signal: u64) -> [u8; 64] {
        let jump = PM4_MEC_INDIRECT_BUFFER::new(ib, dwords).unwrap();
        bytes(&amd_aql_pm4_ib_packet_t {
            header: HSA_PACKET_TYPE_VENDOR_SPECIFIC,
            ven_hdr: AMD_AQL_FORMAT_PM4_IB.into(),
            ib_jump_cmd: zerocopy::transmute!(jump),
            dw_cnt_remain: 0xA,
            completion_signal: signal,
            ..Default::default()
        })
    }

    /// A one-workgroup (64 work-items) dispatch of `kernel_object`.
    pub fn kernel_dispatch(kernel_object: u64, signal: u64) -> hsa_kernel_dispatch_packet_t {
        hsa_kernel_dispatch_packet_t {
            header: barrier_header(HSA_PACKET_TYPE_KERNEL_DISPATCH),
            workgroup_size_x: 64,
            grid_size_x: 64,
            kernel_object,
            completion_signal: signal,
            ..Default::default()
        }
    }
}

// ---- fixtures --------------------------------------------------------------

/// A simulated process with an event page, as the dGPU thunk sets it up
/// (an 8-page GTT BO handed to the first CREATE_EVENT).
struct World {
    sim: Sim,
    p: Proc,
    g: u32,
    events: GpuBuf,
    /// Scratch memory: signals, pointers, data.
    mem: GpuBuf,
}

impl World {
    fn new(preset: &str) -> World {
        World::on(Sim::preset(preset).unwrap())
    }

    /// A world on the topology of `text` (the topology file format).
    fn with_topology(text: &str) -> World {
        World::on(Sim::new(kfd_sim::topology::Topology::parse(text).unwrap()).unwrap())
    }

    fn on(sim: Sim) -> World {
        let p = Proc::open(&sim);
        let g = p.gpu();
        let events = GpuBuf::new(&p, g, 8 * PAGE_SIZE, GTT);
        let mem = GpuBuf::new(&p, g, 64 * PAGE_SIZE, GTT);
        World {
            sim,
            p,
            g,
            events,
            mem,
        }
    }

    /// A signal event; returns (id, its slot's address).
    fn event(&self) -> (u32, u64) {
        let first = self.p.live_events() == 0;
        let page = if first { self.events.handle } else { 0 };
        let e = self
            .p
            .create_event(KFD_IOC_EVENT_SIGNAL, true, page)
            .unwrap();
        (
            e.event_id,
            self.events.va + u64::from(e.event_slot_index) * 8,
        )
    }

    fn wait(&self, id: u32, ms: u32) -> u32 {
        self.p.wait(&[id], true, ms).1
    }

    /// `RUNTIME_ENABLE` (what ROCr 6+ does at start).
    fn runtime_enable(&self) {
        let mut re = kfd_ioctl_runtime_enable_args {
            r_debug: 0,
            mode_mask: KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK,
            capabilities_mask: 0,
        };
        io(&self.sim, &self.p.kfd, AMDKFD_IOC_RUNTIME_ENABLE, &mut re).unwrap();
    }

    fn close(self) {
        self.mem.free(&self.p);
        // The event page BO cannot be freed (EPERM, as in the kernel): it
        // goes with the process.
        self.events.forget();
        self.p.close();
        assert!(self.sim.live_objects().is_empty());
    }
}

impl Proc {
    fn live_events(&self) -> usize {
        self.sim.live_objects().processes[0].events
    }
}

/// A queue with its ring and pointers.
struct Q {
    id: u32,
    ring: GpuBuf,
    /// Where the write pointer is.
    wptr: u64,
    /// Next write position in the queue's units.
    next: u64,
    kind: u32,
    /// The ring size the queue was created with (bytes).
    ring_size: u64,
}

impl Q {
    fn create(w: &World, kind: u32, ring_size: u64, rptr: u64, wptr: u64) -> Q {
        Q::create_with(w, kind, ring_size, rptr, wptr, 0)
    }

    fn create_with(w: &World, kind: u32, ring_size: u64, rptr: u64, wptr: u64, ctx_save: u64) -> Q {
        let ring = GpuBuf::new(&w.p, w.g, ring_size.max(PAGE_SIZE), GTT);
        let mut a = kfd_ioctl_create_queue_args {
            ring_base_address: ring.va,
            write_pointer_address: wptr,
            read_pointer_address: rptr,
            ring_size: ring_size as u32,
            gpu_id: w.g,
            queue_type: kind,
            queue_percentage: 100,
            queue_priority: 7,
            ctx_save_restore_address: ctx_save,
            ..Default::default()
        };
        io(&w.sim, &w.p.kfd, AMDKFD_IOC_CREATE_QUEUE, &mut a).expect("create queue");
        Q {
            id: a.queue_id,
            ring,
            wptr,
            next: 0,
            kind,
            ring_size,
        }
    }

    /// Appends PM4 or SDMA dwords (wrapping) and publishes the write
    /// pointer; rings the doorbell through the hook when `ring`.
    fn submit(&mut self, w: &World, dws: &[u32], ring: bool) {
        let size_dw = self.ring_size / 4;
        let unit = if self.kind == KFD_IOC_QUEUE_TYPE_COMPUTE {
            1
        } else {
            4
        };
        let mut pos = self.next / unit;
        for d in dws {
            self.ring.set_u32((pos % size_dw) * 4, *d);
            pos += 1;
        }
        self.next = pos * unit;
        w.mem.set_u64(self.wptr - w.mem.va, self.next);
        if ring {
            w.sim.ring_doorbell(raw_fd(&w.p.kfd), self.id).unwrap();
        }
    }

    fn destroy(self, w: &World) {
        let mut d = kfd_ioctl_destroy_queue_args {
            queue_id: self.id,
            pad: 0,
        };
        io(&w.sim, &w.p.kfd, AMDKFD_IOC_DESTROY_QUEUE, &mut d).unwrap();
        self.ring.free(&w.p);
    }
}

fn raw_fd(fd: &impl std::os::fd::AsRawFd) -> i32 {
    fd.as_raw_fd()
}

/// Offsets in the scratch buffer.
const RPTR: u64 = 0;
const WPTR: u64 = 64;
const DATA: u64 = 8 * PAGE_SIZE;

// ---- PM4 -------------------------------------------------------------------

/// kfdtest's basic compute-queue pattern: WRITE_DATA, then RELEASE_MEM
/// writing the event id to the event's slot and raising the end-of-pipe
/// interrupt; WAIT_EVENTS wakes up, the data is there, the read pointer
/// (32-bit dwords into the ring) equals the write pointer.
#[test]
fn pm4_write_data_and_release_mem_with_interrupt() {
    let w = World::new("mi210");
    let (ev, slot) = w.event();
    let mut q = compute_queue(&w);
    let dst = w.mem.va + DATA;
    let cmds = concat(&[
        &pm4::write_data(dst, &[0x11, 0x22, 0x33, 0x44]).unwrap(),
        &PM4_MEC_RELEASE_MEM::signal_event(slot, ev).unwrap(),
    ]);
    q.submit(&w, &cmds, true);
    assert_eq!(w.wait(ev, 5000), KFD_IOC_WAIT_RESULT_COMPLETE);
    assert_eq!(
        [
            w.mem.u32(DATA),
            w.mem.u32(DATA + 4),
            w.mem.u32(DATA + 8),
            w.mem.u32(DATA + 12)
        ],
        [0x11, 0x22, 0x33, 0x44]
    );
    assert!(wait_until(5, || u64::from(w.mem.u32(RPTR)) == q.next));
    // The interrupt reset the slot ("acknowledged"), as the kernel does.
    assert_eq!(w.events.u64(slot - w.events.va), u64::MAX);
    // 64-bit data and the GPU clock.
    let before = w.sim.engine_stats().packets;
    let release = |addr, data_sel, data| {
        PM4_MEC_RELEASE_MEM::end_of_pipe(addr, data_sel, data, ReleaseInterrupt::NoInterrupt, 0)
            .unwrap()
    };
    let cmds = concat(&[
        &release(dst + 64, ReleaseData::Data64, 0x1122_3344_5566_7788),
        &release(dst + 72, ReleaseData::GpuClock, 0),
        &PM4_COPY_DATA::wide(CopySource::Immediate(0xdead_beef_0bad_cafe), dst + 80).unwrap(),
        &PM4_COPY_DATA::wide(CopySource::GpuClock, dst + 88).unwrap(),
        &PM4_ACQUIRE_MEM::all(ACQUIRE_GFX9),
        &PM4_EVENT_WRITE::cs_partial_flush(),
        &PM4_MEC_RELEASE_MEM::signal_event(slot, ev).unwrap(),
    ]);
    q.submit(&w, &cmds, false);
    assert_eq!(w.wait(ev, 5000), KFD_IOC_WAIT_RESULT_COMPLETE);
    assert_eq!(w.mem.u64(DATA + 64), 0x1122_3344_5566_7788);
    assert_eq!(w.mem.u64(DATA + 80), 0xdead_beef_0bad_cafe);
    let (t1, t2) = (w.mem.u64(DATA + 72), w.mem.u64(DATA + 88));
    assert!(t1 > 0 && t2 >= t1, "GPU clock {t1} then {t2}");
    assert!(wait_until(5, || w.sim.engine_stats().packets >= before + 7));
    q.destroy(&w);
    w.close();
}

/// A ring of 1 KiB (256 dwords) filled many times over: packets never
/// straddle the end (kfdtest pads with one-dword NOPs), and the read
/// pointer wraps with the ring.
#[test]
fn pm4_queue_wraparound() {
    let w = World::new("mi210");
    let size_dw = 256;
    let mut q = Q::create(
        &w,
        KFD_IOC_QUEUE_TYPE_COMPUTE,
        size_dw * 4,
        w.mem.va + RPTR,
        w.mem.va + WPTR,
    );
    let dst = w.mem.va + DATA;
    let mut wrapped = 0;
    for i in 0..400u32 {
        let pkt = pm4::write_data(dst + 8 * u64::from(i % 64), &[i, !i]).unwrap();
        let pos = q.next % size_dw;
        if pos + pkt.len() as u64 > size_dw {
            let pad = vec![PM4_NOP_FILLER; (size_dw - pos) as usize];
            q.submit(&w, &pad, false);
            wrapped += 1;
        }
        q.submit(&w, &pkt, i % 7 == 0);
        // Keep at most half the ring in flight.
        if i % 8 == 7 {
            let want = q.next;
            assert!(
                wait_until(5, || u64::from(w.mem.u32(RPTR)) == want % size_dw),
                "packet {i}: rptr {} want {}",
                w.mem.u32(RPTR),
                want % size_dw
            );
        }
    }
    assert!(wait_until(5, || u64::from(w.mem.u32(RPTR)) == q.next % size_dw));
    assert!(wrapped >= 9, "wrapped {wrapped} times");
    for i in 336..400u32 {
        let at = DATA + 8 * u64::from(i % 64);
        assert_eq!((w.mem.u32(at), w.mem.u32(at + 4)), (i, !i));
    }
    q.destroy(&w);
    w.close();
}

/// A packet in an indirect buffer, and a WAIT_REG_MEM inside it that
/// blocks: the IB resumes at the waiting packet (the write before it is
/// not repeated), then finishes.
#[test]
fn pm4_indirect_buffer_with_a_blocking_wait() {
    let w = World::new("navi31");
    let ib = GpuBuf::new(&w.p, w.g, PAGE_SIZE, GTT);
    let flag = w.mem.va + DATA;
    let counter = w.mem.va + DATA + 64;
    let dws = concat(&[
        &pm4::write_data(counter, &[1]).unwrap(),
        &PM4_MEC_WAIT_REG_MEM::memory(flag, 7, 0xff, Equal).unwrap(),
        &PM4_ACQUIRE_MEM_GFX10::all(ACQUIRE_GFX10),
        &pm4::write_data(counter + 4, &[2]).unwrap(),
    ]);
    let bytes: Vec<u8> = dws.iter().flat_map(|d| d.to_ne_bytes()).collect();
    ib.write(0, &bytes);
    let mut q = compute_queue(&w);
    let jump = PM4_MEC_INDIRECT_BUFFER::new(ib.va, dws.len() as u32).unwrap();
    q.submit(&w, jump.dwords(), true);
    assert!(wait_until(5, || w.mem.u32(DATA + 64) == 1));
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(w.mem.u32(DATA + 68), 0, "behind the wait");
    assert_eq!(w.mem.u32(RPTR), 0, "the IB packet is not consumed");
    assert!(w.sim.live_objects().processes[0].busy_queues == 1);
    // Reset the counter: if the IB restarted, the first write would
    // come again.
    w.mem.set_u32(DATA + 64, 0);
    w.mem.set_u32(DATA, 0x107);
    assert!(wait_until(5, || w.mem.u32(DATA + 68) == 2));
    assert_eq!(w.mem.u32(DATA + 64), 0, "the IB resumed at the wait");
    assert!(wait_until(5, || u64::from(w.mem.u32(RPTR)) == q.next));
    q.destroy(&w);
    ib.free(&w.p);
    w.close();
}

fn trace_buffer(sim: &Sim) -> Arc<Mutex<Vec<u8>>> {
    #[derive(Clone)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let b = Arc::new(Mutex::new(Vec::new()));
    sim.set_trace(Buf(b.clone()));
    b
}

fn text(b: &Arc<Mutex<Vec<u8>>>) -> String {
    String::from_utf8_lossy(&b.lock().unwrap()).into_owned()
}

/// An unknown opcode is a queue error: the queue stops in front of it
/// (nothing after it runs, the read pointer stays), a trace line says why,
/// and the live-object summary counts the failed queue.
#[test]
fn pm4_unknown_opcode_stops_the_queue() {
    let w = World::new("mi210");
    let trace = trace_buffer(&w.sim);
    let mut q = compute_queue(&w);
    let cmds = concat(&[
        &pm4::write_data(w.mem.va + DATA, &[5]).unwrap(),
        &[Pm4Header::type3(0xEE, 3).unwrap().0, 0, 0],
        &pm4::write_data(w.mem.va + DATA + 4, &[6]).unwrap(),
    ]);
    q.submit(&w, &cmds, true);
    assert!(wait_until(5, || w.sim.live_objects().processes[0]
        .failed_queues
        == 1));
    assert_eq!(w.mem.u32(DATA), 5);
    assert_eq!(w.mem.u32(DATA + 4), 0);
    assert_eq!(w.mem.u32(RPTR), 5, "stopped in front of the bad packet");
    let t = text(&trace);
    assert!(
        t.contains("queue error") && t.contains("opcode 0xee not supported"),
        "{t}"
    );
    // A dispatch is refused the same way (no shader ISA model).
    let mut q2 = Q::create(
        &w,
        KFD_IOC_QUEUE_TYPE_COMPUTE,
        PAGE_SIZE,
        w.mem.va + RPTR + 8,
        w.mem.va + WPTR + 8,
    );
    q2.submit(&w, PM4_DISPATCH_DIRECT::new([1, 1, 1], 1).dwords(), true);
    assert!(wait_until(5, || w.sim.live_objects().processes[0]
        .failed_queues
        == 2));
    assert!(text(&trace).contains("DISPATCH_DIRECT refused"));
    w.sim.clear_trace();
    q2.destroy(&w);
    q.destroy(&w);
    w.close();
}

/// A packet whose header counts fewer dwords than its format has is a
/// queue error naming both counts: here an INDIRECT_BUFFER of 3 dwords
/// (header and address, no size word), which the CP used to run as an
/// empty indirect buffer.
#[test]
fn pm4_short_packet_stops_the_queue() {
    let w = World::new("mi210");
    let trace = trace_buffer(&w.sim);
    let mut q = compute_queue(&w);
    let cmds = concat(&[
        &[
            Pm4Header::type3(IT_INDIRECT_BUFFER, 3).unwrap().0,
            0x1000,
            0,
        ],
        &pm4::write_data(w.mem.va + DATA, &[6]).unwrap(),
    ]);
    q.submit(&w, &cmds, true);
    assert!(wait_until(5, || w.sim.live_objects().processes[0]
        .failed_queues
        == 1));
    assert_eq!(w.mem.u32(DATA), 0, "nothing after it ran");
    assert_eq!(w.mem.u32(RPTR), 0, "stopped in front of the short packet");
    let t = text(&trace);
    assert!(
        t.contains("queue error") && t.contains("short INDIRECT_BUFFER: 3 of 4 dwords"),
        "{t}"
    );
    w.sim.clear_trace();
    q.destroy(&w);
    w.close();
}

/// Destroying a queue whose packet waits (WAIT_REG_MEM on memory nobody
/// writes) returns at once; the summary showed it busy before.
#[test]
fn queue_destroy_while_busy() {
    let w = World::new("mi210");
    let mut q = compute_queue(&w);
    let cmds = concat(&[
        &PM4_MEC_WAIT_REG_MEM::memory(w.mem.va + DATA, 1, !0, Equal).unwrap(),
        &pm4::write_data(w.mem.va + DATA + 4, &[9]).unwrap(),
    ]);
    q.submit(&w, &cmds, true);
    // Busy once the engine has picked the wait up (on a loaded machine
    // that may take more than a few milliseconds).
    assert!(wait_until(5, || {
        let s = w.sim.live_objects();
        (s.processes[0].queues, s.processes[0].busy_queues) == (1, 1)
    }));
    let t = Instant::now();
    q.destroy(&w);
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    // Gone: satisfying the wait now does nothing.
    w.mem.set_u32(DATA, 1);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(w.mem.u32(DATA + 4), 0);
    let s = w.sim.live_objects();
    assert_eq!((s.processes[0].queues, s.processes[0].busy_queues), (0, 0));
    w.close();
}

/// UPDATE_QUEUE to 0 % stops the queue; back to 100 % it runs again.
#[test]
fn update_queue_to_zero_percent_pauses_it() {
    let w = World::new("mi210");
    let mut q = compute_queue(&w);
    let (ring_va, qid) = (q.ring.va, q.id);
    let update = |percent: u32| {
        let mut u = kfd_ioctl_update_queue_args {
            ring_base_address: ring_va,
            queue_id: qid,
            ring_size: PAGE_SIZE as u32,
            queue_percentage: percent,
            queue_priority: 7,
        };
        io(&w.sim, &w.p.kfd, AMDKFD_IOC_UPDATE_QUEUE, &mut u).unwrap();
    };
    update(0);
    q.submit(&w, &pm4::write_data(w.mem.va + DATA, &[3]).unwrap(), true);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(w.mem.u32(DATA), 0);
    update(100);
    assert!(wait_until(5, || w.mem.u32(DATA) == 3));
    q.destroy(&w);
    w.close();
}

/// The debugger's SUSPEND_QUEUES stops a queue; RESUME_QUEUES lets it run.
#[test]
fn debugger_suspend_stops_the_queue() {
    let w = World::new("mi210");
    w.runtime_enable();
    let (_rd, wr) = pipe();
    let mut rinfo = kfd_runtime_info::default();
    let mut d = dbg_trap_enable(w.sim.os_pid(), 0, &mut rinfo, &wr);
    io(&w.sim, &w.p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d).unwrap();
    let mut q = compute_queue(&w);
    let mut ids = [q.id];
    let mut susp = |op: u32| {
        d.op = op;
        let ptr = ids.as_mut_ptr() as u64;
        if op == KFD_IOC_DBG_TRAP_SUSPEND_QUEUES {
            d.u.suspend_queues = kfd_ioctl_dbg_trap_suspend_queues_args {
                exception_mask: 0,
                queue_array_ptr: ptr,
                num_queues: 1,
                grace_period: 0,
            };
        } else {
            d.u.resume_queues = kfd_ioctl_dbg_trap_resume_queues_args {
                queue_array_ptr: ptr,
                num_queues: 1,
                pad: 0,
            };
        }
        assert_eq!(io(&w.sim, &w.p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d), Ok(1));
    };
    susp(KFD_IOC_DBG_TRAP_SUSPEND_QUEUES);
    q.submit(&w, &pm4::write_data(w.mem.va + DATA, &[4]).unwrap(), true);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(w.mem.u32(DATA), 0);
    susp(KFD_IOC_DBG_TRAP_RESUME_QUEUES);
    assert!(wait_until(5, || w.mem.u32(DATA) == 4));
    q.destroy(&w);
    w.close();
}

// ---- SDMA ------------------------------------------------------------------

/// kfdtest's SDMA pattern: COPY_LINEAR from VRAM to GTT, then FENCE (the
/// event id into the event's slot) and TRAP (the event id as interrupt
/// context); the read pointer is the 64-bit byte offset, equal to the
/// write pointer once consumed.
#[test]
fn sdma_copy_fence_trap() {
    let w = World::new("mi210");
    let (ev, slot) = w.event();
    let size = 3 * (1 << 20) + 12_345;
    let src = GpuBuf::new(&w.p, w.g, 4 << 20, VRAM | KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC);
    let dst = GpuBuf::new(&w.p, w.g, 4 << 20, GTT);
    let data: Vec<u8> = (0..size).map(|i| (i * 7 + i / 4096) as u8).collect();
    src.write(0, &data);
    let mut q = Q::create(
        &w,
        KFD_IOC_QUEUE_TYPE_SDMA,
        64 * 1024,
        w.mem.va + RPTR,
        w.mem.va + WPTR,
    );
    let copy = SDMA_PKT_COPY_LINEAR::new(src.va, dst.va, size, SDMA_COUNT_MASK_22).unwrap();
    let cmds = concat(&[&copy, &sdma::signal_event(slot, ev).unwrap()]);
    q.submit(&w, &cmds, true);
    assert_eq!(w.wait(ev, 5000), KFD_IOC_WAIT_RESULT_COMPLETE);
    assert!(dst.read(0, size as usize) == data, "copied bytes differ");
    assert!(wait_until(5, || w.mem.u64(RPTR) == q.next));
    // The rest of ROCr's SDMA vocabulary.
    let d = w.mem.va + DATA;
    w.mem.set_u64(DATA + 64, 5);
    let cmds = concat(&[
        &sdma::write(d, &[0xa, 0xb, 0xc]).unwrap(),
        &SDMA_PKT_CONSTANT_FILL::new(d + 256, 0x5a5a_5a5a, 1024, SDMA_COUNT_MASK_22).unwrap(),
        &SDMA_PKT_ATOMIC::add64(d + 64, u64::MAX),
        &SDMA_PKT_TIMESTAMP::get_global(d + 128),
        &SDMA_PKT_POLL_REGMEM::HDP_FLUSH,
        &SDMA_PKT_GCR::empty(),
        &SDMA_PKT_NOP::new(),
        &SDMA_PKT_POLL_REGMEM::memory(d + 2048, 0, !0, Equal),
        &sdma::signal_event(slot, ev).unwrap(),
    ]);
    q.submit(&w, &cmds, false);
    assert_eq!(w.wait(ev, 5000), KFD_IOC_WAIT_RESULT_COMPLETE);
    assert_eq!(
        [w.mem.u32(DATA), w.mem.u32(DATA + 4), w.mem.u32(DATA + 8)],
        [0xa, 0xb, 0xc]
    );
    assert!(w.mem.read(DATA + 256, 1024).iter().all(|b| *b == 0x5a));
    assert_eq!(w.mem.u32(DATA + 256 + 1024), 0);
    assert_eq!(w.mem.u64(DATA + 64), 4, "ATOMIC ADD64 of -1");
    assert!(w.mem.u64(DATA + 128) > 0);
    q.destroy(&w);
    src.free(&w.p);
    dst.free(&w.p);
    w.close();
}

/// ROCr's dependency wait: POLL_REGMEM on both halves of a signal value.
#[test]
fn sdma_poll_waits_for_memory() {
    let w = World::new("mi300x");
    let mut q = Q::create(
        &w,
        KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID,
        PAGE_SIZE,
        w.mem.va + RPTR,
        w.mem.va + WPTR,
    );
    let sig = w.mem.va + DATA;
    w.mem.set_u64(DATA, 1);
    let cmds = concat(&[
        &SDMA_PKT_POLL_REGMEM::memory(sig + 4, 0, !0, Equal),
        &SDMA_PKT_POLL_REGMEM::memory(sig, 0, !0, Equal),
        &sdma::write(sig + 64, &[77]).unwrap(),
    ]);
    q.submit(&w, &cmds, true);
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(w.mem.u32(DATA + 64), 0);
    w.mem.set_u64(DATA, 0);
    assert!(wait_until(5, || w.mem.u32(DATA + 64) == 77));
    q.destroy(&w);
    w.close();
}

/// A copy from an address no BO or SVM range covers is a GPU memory fault:
/// the memory exception event fires with the faulting page, and the
/// process's queues on that GPU stop.
#[test]
fn sdma_copy_from_unmapped_memory_is_a_gpu_fault() {
    let w = World::new("mi210");
    let fault_ev = w.p.create_event(KFD_IOC_EVENT_MEMORY, false, 0).unwrap();
    let (_, _) = w.event();
    let mut other = Q::create(
        &w,
        KFD_IOC_QUEUE_TYPE_COMPUTE,
        PAGE_SIZE,
        w.mem.va + RPTR + 8,
        w.mem.va + WPTR + 8,
    );
    let mut q = Q::create(
        &w,
        KFD_IOC_QUEUE_TYPE_SDMA,
        PAGE_SIZE,
        w.mem.va + RPTR,
        w.mem.va + WPTR,
    );
    let bad = 0x7100_0000_1234u64;
    let copy = SDMA_PKT_COPY_LINEAR::new(bad, w.mem.va + DATA, 256, SDMA_COUNT_MASK_22).unwrap();
    q.submit(&w, copy.dwords(), true);
    let mut data = [kfd_event_data {
        event_id: fault_ev.event_id,
        ..Default::default()
    }];
    let (r, res) = w.p.wait_data(&mut data, true, 5000);
    assert_eq!((r, res), (Ok(0), KFD_IOC_WAIT_RESULT_COMPLETE));
    // SAFETY: the memory-exception member, written for a MEMORY event.
    let m = unsafe { data[0].u.memory_exception_data };
    assert_eq!(
        (m.va, m.gpu_id, m.failure.NotPresent),
        (bad & !4095, w.g, 1)
    );
    assert_eq!(w.mem.u64(RPTR), 0, "the faulting packet is not consumed");
    assert!(wait_until(5, || w.sim.live_objects().processes[0]
        .failed_queues
        == 2));
    // The other queue of the process on that GPU was evicted with it.
    other.submit(
        &w,
        &pm4::write_data(w.mem.va + DATA + 8, &[1]).unwrap(),
        true,
    );
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(w.mem.u32(DATA + 8), 0);
    other.destroy(&w);
    q.destroy(&w);
    w.close();
}

/// A write into a BO allocated without WRITABLE is a read-only fault.
#[test]
fn gpu_write_to_a_read_only_buffer_faults() {
    let w = World::new("mi210");
    let fault_ev = w.p.create_event(KFD_IOC_EVENT_MEMORY, false, 0).unwrap();
    let ro = GpuBuf::new(&w.p, w.g, PAGE_SIZE, KFD_IOC_ALLOC_MEM_FLAGS_GTT);
    let mut q = Q::create(
        &w,
        KFD_IOC_QUEUE_TYPE_SDMA,
        PAGE_SIZE,
        w.mem.va + RPTR,
        w.mem.va + WPTR,
    );
    q.submit(&w, &sdma::write(ro.va + 16, &[1]).unwrap(), true);
    let mut data = [kfd_event_data {
        event_id: fault_ev.event_id,
        ..Default::default()
    }];
    assert_eq!(
        w.p.wait_data(&mut data, true, 5000).1,
        KFD_IOC_WAIT_RESULT_COMPLETE
    );
    // SAFETY: as above.
    let m = unsafe { data[0].u.memory_exception_data };
    assert_eq!(
        (m.va, m.failure.ReadOnly, m.failure.NotPresent),
        (ro.va, 1, 0)
    );
    q.destroy(&w);
    ro.free(&w.p);
    w.close();
}

/// A GPU memory fault of a queue raises the SMI `VMFAULT` event
/// (`pid:task`, as `kfd_smi_event_update_vmfault`) to the process's SMI
/// clients of that GPU that asked for it, before the memory exception.
#[test]
fn gpu_fault_raises_the_smi_vmfault_event() {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let w = World::new("mi210");
    let fault_ev = w.p.create_event(KFD_IOC_EVENT_MEMORY, false, 0).unwrap();
    let mut smi = kfd_ioctl_smi_events_args {
        gpuid: w.g,
        anon_fd: 0,
    };
    io(&w.sim, &w.p.kfd, AMDKFD_IOC_SMI_EVENTS, &mut smi).unwrap();
    // SAFETY: the descriptor the ioctl just handed us.
    let smi_fd = unsafe { OwnedFd::from_raw_fd(smi.anon_fd as i32) };
    let read = || {
        let mut b = [0u8; 512];
        // SAFETY: reads into `b` from our SMI descriptor (non-blocking).
        let n = unsafe { libc::read(smi_fd.as_raw_fd(), b.as_mut_ptr().cast(), b.len()) };
        String::from_utf8_lossy(&b[..n.max(0) as usize]).into_owned()
    };
    let mask = 1u64 << (KFD_SMI_EVENT_VMFAULT - 1);
    // SAFETY: writes the 8-byte mask from a local.
    let n = unsafe { libc::write(smi_fd.as_raw_fd(), (&mask as *const u64).cast(), 8) };
    assert_eq!(n, 8);
    let ro = GpuBuf::new(&w.p, w.g, PAGE_SIZE, KFD_IOC_ALLOC_MEM_FLAGS_GTT);
    let mut q = Q::create(
        &w,
        KFD_IOC_QUEUE_TYPE_SDMA,
        PAGE_SIZE,
        w.mem.va + RPTR,
        w.mem.va + WPTR,
    );
    q.submit(&w, &sdma::write(ro.va, &[1]).unwrap(), true);
    assert_eq!(
        w.wait(fault_ev.event_id, 5000),
        KFD_IOC_WAIT_RESULT_COMPLETE
    );
    let line = read();
    let comm = std::fs::read_to_string("/proc/self/comm").unwrap();
    let pid = w.sim.live_objects().processes[0].os_pid;
    assert_eq!(line, format!("1 {pid:x}:{}\n", comm.trim_end()));
    assert_eq!(read(), "", "one event");
    q.destroy(&w);
    ro.free(&w.p);
    kfd_sys::Driver::close(&w.sim, smi_fd);
    w.close();
}

/// An SDMA write into a BO imported from a dma-buf (issue 27): the kernel
/// imports every dma-buf writable and executable (`import_obj_create`),
/// whatever the exporter's flags, so the write lands and no memory
/// exception is raised. Exporters: another OS process of the same
/// machine, and another machine (what a second preloaded OS process is),
/// each with a writable VRAM buffer and a GTT buffer allocated without
/// WRITABLE.
#[test]
fn sdma_write_into_an_imported_dmabuf_lands() {
    for (cross_machine, flags) in [
        (false, VRAM),
        (true, VRAM),
        (true, KFD_IOC_ALLOC_MEM_FLAGS_GTT),
    ] {
        let w = World::new("mi210");
        // The first event brings the event page.
        let (ev, slot) = w.event();
        let fault_ev = w.p.create_event(KFD_IOC_EVENT_MEMORY, false, 0).unwrap();
        let other = if cross_machine {
            Sim::preset("mi210").unwrap()
        } else {
            w.sim.new_os_process()
        };
        let exporter = Proc::open(&other);
        let len = 4 * PAGE_SIZE;
        let (h, _) = exporter.alloc(w.g, 0x2000_0000, len, flags).unwrap();
        let mut ex = kfd_ioctl_export_dmabuf_args {
            handle: h,
            flags: libc::O_CLOEXEC as u32,
            dmabuf_fd: 0,
        };
        io(&other, &exporter.kfd, AMDKFD_IOC_EXPORT_DMABUF, &mut ex).unwrap();
        // SAFETY: the ioctl handed us this descriptor.
        let fd = unsafe { std::os::fd::FromRawFd::from_raw_fd(ex.dmabuf_fd as i32) };
        let fd: std::os::fd::OwnedFd = fd;
        let va = 0x3000_0000u64;
        let mut im = kfd_ioctl_import_dmabuf_args {
            va_addr: va,
            handle: 0,
            gpu_id: w.g,
            dmabuf_fd: raw_fd(&fd) as u32,
        };
        io(&w.sim, &w.p.kfd, AMDKFD_IOC_IMPORT_DMABUF, &mut im).unwrap();
        assert_eq!(w.p.map(im.handle, &[w.g], 0), (Ok(0), 1));
        let mut q = Q::create(
            &w,
            KFD_IOC_QUEUE_TYPE_SDMA,
            PAGE_SIZE,
            w.mem.va + RPTR,
            w.mem.va + WPTR,
        );
        let cmds = concat(&[
            &sdma::write(va + 64, &[0xfeed_f00d, 27]).unwrap(),
            &SDMA_PKT_CONSTANT_FILL::new(va + PAGE_SIZE, 0x2727_2727, 256, SDMA_COUNT_MASK_22)
                .unwrap(),
            &sdma::signal_event(slot, ev).unwrap(),
        ]);
        q.submit(&w, &cmds, true);
        // Bounded: a read-only fault sets the memory event instead.
        let (r, res) = w.p.wait(&[ev, fault_ev.event_id], false, 5000);
        assert_eq!(r, Ok(0));
        assert_eq!(
            res, KFD_IOC_WAIT_RESULT_COMPLETE,
            "{cross_machine} {flags:#x}"
        );
        assert_eq!(
            w.wait(fault_ev.event_id, 0),
            KFD_IOC_WAIT_RESULT_TIMEOUT,
            "a memory exception was raised ({cross_machine} {flags:#x})"
        );
        let m = map_fd(&fd, 0, len as usize);
        // SAFETY: a live mapping of `len` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(m, len as usize) };
        assert_eq!(&bytes[64..72], &[0x0d, 0xf0, 0xed, 0xfe, 27, 0, 0, 0]);
        assert!(bytes[PAGE_SIZE as usize..PAGE_SIZE as usize + 256]
            .iter()
            .all(|b| *b == 0x27));
        unmap_fd(m, len as usize);
        q.destroy(&w);
        assert_eq!(w.p.unmap(im.handle, &[w.g], 0).0, Ok(0));
        w.p.free(im.handle).unwrap();
        kfd_sys::Driver::close(&w.sim, fd);
        exporter.free(h).unwrap();
        exporter.close();
        w.close();
    }
}

// ---- AQL -------------------------------------------------------------------

/// Where the AQL tests keep their `amd_queue_t` and `amd_signal_t`s.
const AMDQ: u64 = 4 * PAGE_SIZE;
const SIGNALS: u64 = 5 * PAGE_SIZE;

/// The address of an `amd_queue_t` field in the scratch buffer.
macro_rules! amdq {
    ($field:ident) => {
        AMDQ + std::mem::offset_of!(amd_queue_t, $field) as u64
    };
}

/// A one-page PM4 compute queue with its pointers in the scratch buffer.
fn compute_queue(w: &World) -> Q {
    Q::create(
        w,
        KFD_IOC_QUEUE_TYPE_COMPUTE,
        PAGE_SIZE,
        w.mem.va + RPTR,
        w.mem.va + WPTR,
    )
}

/// An AQL queue whose pointers live in an `amd_queue_t` image, as ROCr
/// lays it out (the CP finds the structure from the read pointer).
fn aql_queue(w: &World) -> Q {
    w.mem.set_u32(
        amdq!(read_dispatch_id_field_base_byte_offset),
        amdq!(read_dispatch_id) as u32 - AMDQ as u32,
    );
    let mut q = Q::create(
        w,
        KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
        64 * 64,
        w.mem.va + amdq!(read_dispatch_id),
        w.mem.va + amdq!(write_dispatch_id),
    );
    for i in 0..64 {
        q.ring.write(i * 64, &aql::INVALID.to_ne_bytes());
    }
    q.next = 0;
    q
}

/// Writes an `amd_signal_t` (kind USER) with `value`, optionally with an
/// event mailbox; returns its handle.
fn signal(w: &World, n: u64, value: i64, event: Option<(u32, u64)>) -> u64 {
    let off = SIGNALS + n * 64;
    let (event_id, event_mailbox_ptr) = event.unwrap_or_default();
    let s = amd_signal_t {
        kind: AMD_SIGNAL_KIND_USER,
        value,
        event_mailbox_ptr,
        event_id,
        ..Default::default()
    };
    w.mem.write(off, s.as_bytes());
    w.mem.va + off
}

fn value(w: &World, handle: u64) -> i64 {
    w.mem
        .u64(handle - w.mem.va + offset_of!(amd_signal_t, value) as u64) as i64
}

fn set_value(w: &World, handle: u64, v: i64) {
    w.mem.set_u64(
        handle - w.mem.va + offset_of!(amd_signal_t, value) as u64,
        v as u64,
    )
}

/// Writes packet `p` at the next slot (header last) and bumps the write
/// index, as an AQL producer does.
fn aql_submit(w: &World, q: &mut Q, p: &[u8; 64], ring: bool) -> u64 {
    let idx = q.next;
    let slot = (idx % 64) * 64;
    w.mem.set_u64(amdq!(write_dispatch_id), idx + 1);
    q.ring.write(slot + 2, &p[2..]);
    q.ring.write(slot, &p[..2]);
    q.next += 1;
    if ring {
        w.sim.ring_doorbell(raw_fd(&w.p.kfd), q.id).unwrap();
    }
    idx
}

fn read_index(w: &World) -> u64 {
    w.mem.u64(amdq!(read_dispatch_id))
}

/// BARRIER_AND waits for all its dependencies, BARRIER_OR for one; with
/// no dependency both complete at once. A completed packet's header goes
/// back to INVALID, the read index moves past it, the completion signal
/// drops to 0 and its event fires.
#[test]
fn aql_barrier_and_or() {
    let w = World::new("mi210");
    let (ev, slot) = w.event();
    let mut q = aql_queue(&w);
    let (d1, d2) = (signal(&w, 1, 1, None), signal(&w, 2, 1, None));
    let done = signal(&w, 0, 1, Some((ev, slot)));
    let idx = aql_submit(
        &w,
        &mut q,
        &aql::barrier(aql::BARRIER_AND, &[d1, 0, d2], done),
        true,
    );
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!((value(&w, done), read_index(&w)), (1, 0));
    set_value(&w, d1, 0);
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(value(&w, done), 1, "one of two dependencies");
    set_value(&w, d2, 0);
    assert_eq!(w.wait(ev, 5000), KFD_IOC_WAIT_RESULT_COMPLETE);
    assert_eq!(value(&w, done), 0);
    assert_eq!(read_index(&w), 1);
    assert_eq!(q.ring.read(idx * 64, 2), aql::INVALID.to_ne_bytes());
    // OR: one of two.
    let (d3, d4) = (signal(&w, 3, 1, None), signal(&w, 4, 1, None));
    set_value(&w, done, 1);
    aql_submit(
        &w,
        &mut q,
        &aql::barrier(aql::BARRIER_OR, &[d3, d4], done),
        true,
    );
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(value(&w, done), 1);
    set_value(&w, d4, 0);
    assert_eq!(w.wait(ev, 5000), KFD_IOC_WAIT_RESULT_COMPLETE);
    // No dependencies: at once, in order.
    set_value(&w, done, 2);
    aql_submit(
        &w,
        &mut q,
        &aql::barrier(aql::BARRIER_AND, &[], done),
        false,
    );
    aql_submit(&w, &mut q, &aql::barrier(aql::BARRIER_OR, &[], done), true);
    assert!(wait_until(5, || value(&w, done) == 0 && read_index(&w) == 4));
    q.destroy(&w);
    w.close();
}

/// A thread waiting with an infinite timeout is woken by the completion.
#[test]
fn aql_signal_wait_with_infinite_timeout_wakes_on_completion() {
    let w = World::new("mi210");
    let (ev, slot) = w.event();
    let mut q = aql_queue(&w);
    let dep = signal(&w, 1, 1, None);
    let done = signal(&w, 0, 1, Some((ev, slot)));
    aql_submit(
        &w,
        &mut q,
        &aql::barrier(aql::BARRIER_AND, &[dep], done),
        true,
    );
    let depv = dep;
    let mem_va = w.mem.va;
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        // SAFETY: the dependency signal's value word, inside `mem`.
        unsafe { std::ptr::write_volatile((depv + 8) as *mut u64, 0) };
        let _ = mem_va;
    });
    let t = Instant::now();
    assert_eq!(w.wait(ev, u32::MAX), KFD_IOC_WAIT_RESULT_COMPLETE);
    assert!(t.elapsed() >= Duration::from_millis(90));
    setter.join().unwrap();
    assert_eq!(value(&w, done), 0);
    q.destroy(&w);
    w.close();
}

/// Barrier-value (AmdFormat 2): wait until `(value & mask) cond value`.
#[test]
fn aql_barrier_value() {
    let w = World::new("mi210");
    let mut q = aql_queue(&w);
    let s = signal(&w, 1, 5, None);
    let done = signal(&w, 0, 1, None);
    aql_submit(
        &w,
        &mut q,
        &aql::barrier_value(s, 0x70, 0xf0, 0, done),
        true,
    );
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(value(&w, done), 1);
    set_value(&w, s, 0x7f);
    assert!(wait_until(5, || value(&w, done) == 0));
    // GTE.
    set_value(&w, done, 1);
    aql_submit(&w, &mut q, &aql::barrier_value(s, 0x100, -1, 3, done), true);
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(value(&w, done), 1);
    set_value(&w, s, 0x200);
    assert!(wait_until(5, || value(&w, done) == 0 && read_index(&w) == 2));
    // No signal (handle 0, mask 0), as HIP's event markers send it: met
    // at once, no memory read at address 8, no fault.
    set_value(&w, done, 1);
    aql_submit(&w, &mut q, &aql::barrier_value(0, 0, 0, 0, done), true);
    assert!(wait_until(5, || value(&w, done) == 0 && read_index(&w) == 3));
    q.destroy(&w);
    w.close();
}

/// ROCr's ExecutePM4: a vendor packet (AmdFormat 1) jumping to a PM4 IB
/// (here an ACQUIRE_MEM cache invalidation and a WRITE_DATA); the read
/// index moves past it once the IB ran.
#[test]
fn aql_pm4_ib_vendor_packet() {
    let w = World::new("mi210");
    let ib = GpuBuf::new(&w.p, w.g, PAGE_SIZE, GTT);
    let dws = concat(&[
        &PM4_ACQUIRE_MEM::all(ACQUIRE_GFX9),
        &pm4::write_data(w.mem.va + DATA, &[0xabc]).unwrap(),
    ]);
    let bytes: Vec<u8> = dws.iter().flat_map(|d| d.to_ne_bytes()).collect();
    ib.write(0, &bytes);
    let mut q = aql_queue(&w);
    aql_submit(&w, &mut q, &aql::pm4_ib(ib.va, dws.len() as u32, 0), true);
    assert!(wait_until(5, || read_index(&w) == 1));
    assert_eq!(w.mem.u32(DATA), 0xabc);
    q.destroy(&w);
    ib.free(&w.p);
    w.close();
}

/// Where the dispatch tests keep their kernel.
const CODE: u64 = 16 * PAGE_SIZE;
const DESCRIPTOR: u64 = 17 * PAGE_SIZE;
const KERNARG: u64 = 18 * PAGE_SIZE;
const OUT: u64 = 20 * PAGE_SIZE;

/// Writes `code` and a code-object v3 kernel descriptor for it (kernarg
/// pointer in s[0:1], workgroup id X in s2); returns the descriptor's
/// address.
fn kernel(w: &World, code: &[u32]) -> u64 {
    for (k, word) in code.iter().enumerate() {
        w.mem.set_u32(CODE + 4 * k as u64, *word);
    }
    let kd = fill_descriptor(CODE as i64 - DESCRIPTOR as i64);
    w.mem.write(DESCRIPTOR, kd.as_bytes());
    w.mem.va + DESCRIPTOR
}

/// A kernel dispatch packet over `items` work-items in workgroups of 64.
fn dispatch_packet(descriptor: u64, items: u32, signal: u64) -> [u8; 64] {
    let mut p = aql::kernel_dispatch(descriptor, signal);
    p.setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
    p.grid_size_x = items;
    p.kernarg_address = descriptor - DESCRIPTOR + KERNARG;
    aql::bytes(&p)
}

/// A kernel dispatch runs on the shader machine: four workgroups store
/// their work-items' ids, then the completion signal drops to 0 and its
/// event fires, and the packet is consumed.
#[test]
fn aql_kernel_dispatch_runs_its_kernel() {
    let w = World::new("mi210");
    let (ev, slot) = w.event();
    let mut q = aql_queue(&w);
    let done = signal(&w, 0, 1, Some((ev, slot)));
    let kd = kernel(&w, FILL);
    let trace = trace_buffer(&w.sim);
    w.mem.set_u64(KERNARG, w.mem.va + OUT);
    aql_submit(&w, &mut q, &dispatch_packet(kd, 256, done), true);
    assert_eq!(
        w.wait(ev, 5000),
        KFD_IOC_WAIT_RESULT_COMPLETE,
        "{}",
        text(&trace)
    );
    assert_eq!((value(&w, done), read_index(&w)), (0, 1));
    for i in 0..256 {
        assert_eq!(w.mem.u32(OUT + 4 * i), i as u32, "out[{i}]");
    }
    // Nothing past the grid was written.
    assert_eq!(w.mem.u32(OUT + 4 * 256), 0);
    q.destroy(&w);
    w.close();
}

/// An instruction the shader machine does not know stops the queue with
/// the CP's illegal-instruction error in `queue_inactive_signal`
/// (0x40000000, which ROCr reports as HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION);
/// the packet stays unconsumed and its completion signal never moves.
#[test]
fn aql_illegal_instruction_stops_the_queue_visibly() {
    let w = World::new("mi210");
    let (ev, slot) = w.event();
    let inactive = signal(&w, 5, 0, Some((ev, slot)));
    w.mem.set_u64(amdq!(queue_inactive_signal), inactive);
    let mut q = aql_queue(&w);
    let done = signal(&w, 0, 1, None);
    // SOPP opcode 0x7f: not an instruction of gfx90a.
    let kd = kernel(&w, &[0xbfff_0000]);
    aql_submit(&w, &mut q, &dispatch_packet(kd, 64, done), true);
    assert_eq!(w.wait(ev, 5000), KFD_IOC_WAIT_RESULT_COMPLETE);
    assert_eq!(value(&w, inactive), 0x4000_0000);
    assert_eq!((value(&w, done), read_index(&w)), (1, 0));
    assert_eq!(w.sim.live_objects().processes[0].failed_queues, 1);
    q.destroy(&w);
    w.close();
}

/// navi31's GPU is a gfx1100: its kernels run on the shader machine
/// (here `s_endpgm` in the gfx11 encoding), the completion signal drops.
#[test]
fn aql_kernel_dispatch_on_gfx11_runs() {
    let w = World::new("navi31");
    let (ev, slot) = w.event();
    let mut q = aql_queue(&w);
    let done = signal(&w, 0, 1, Some((ev, slot)));
    let kd = kernel(&w, &[0xbfb0_0000]);
    aql_submit(&w, &mut q, &dispatch_packet(kd, 64, done), true);
    assert_eq!(w.wait(ev, 5000), KFD_IOC_WAIT_RESULT_COMPLETE);
    assert_eq!((value(&w, done), read_index(&w)), (0, 1));
    q.destroy(&w);
    w.close();
}

/// A GPU whose ISA the shader machine does not model (navi31 said to be
/// a gfx1030).
const UNMODELLED_ISA: &str = "base navi31\n[node 1 properties]\ngfx_target_version 100300\n";

/// A dispatch on a GPU whose ISA the shader machine does not model
/// stops the queue with the CP's "invalid code" error in
/// `queue_inactive_signal` (value 8, its event raised), which ROCr turns
/// into HSA_STATUS_ERROR_INVALID_CODE_OBJECT. The packet is not consumed
/// and its completion signal never moves.
#[test]
fn aql_kernel_dispatch_of_an_unmodelled_isa_is_refused_visibly() {
    let w = World::with_topology(UNMODELLED_ISA);
    let (ev, slot) = w.event();
    let inactive = signal(&w, 5, 0, Some((ev, slot)));
    w.mem.set_u64(amdq!(queue_inactive_signal), inactive);
    let mut q = aql_queue(&w);
    let done = signal(&w, 0, 1, None);
    aql_submit(
        &w,
        &mut q,
        &aql::bytes(&aql::kernel_dispatch(0x7f00_0000_1000, done)),
        true,
    );
    assert_eq!(w.wait(ev, 5000), KFD_IOC_WAIT_RESULT_COMPLETE);
    assert_eq!(value(&w, inactive), 8);
    assert_eq!((value(&w, done), read_index(&w)), (1, 0));
    assert_eq!(w.sim.live_objects().processes[0].failed_queues, 1);
    q.destroy(&w);
    w.close();
}

/// With the runtime enabled (ROCr 6+), a queue error goes to the runtime
/// as the kernel sends it: the exception bit ORed into the payload the
/// context save area header names, and the header's error event set.
#[test]
fn aql_queue_error_reaches_an_enabled_runtime() {
    let w = World::with_topology(UNMODELLED_ISA);
    w.runtime_enable();
    let (ev, _) = w.event();
    let (hdr, payload) = (6 * PAGE_SIZE, 7 * PAGE_SIZE);
    w.mem.set_u64(hdr + 24, w.mem.va + payload);
    w.mem.set_u32(hdr + 32, ev);
    w.mem.set_u32(
        amdq!(read_dispatch_id_field_base_byte_offset),
        amdq!(read_dispatch_id) as u32 - AMDQ as u32,
    );
    let mut q = Q::create_with(
        &w,
        KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
        64 * 64,
        w.mem.va + amdq!(read_dispatch_id),
        w.mem.va + amdq!(write_dispatch_id),
        w.mem.va + hdr,
    );
    for i in 0..64 {
        q.ring.write(i * 64, &aql::INVALID.to_ne_bytes());
    }
    aql_submit(
        &w,
        &mut q,
        &aql::bytes(&aql::kernel_dispatch(0x1000, 0)),
        true,
    );
    assert_eq!(w.wait(ev, 5000), KFD_IOC_WAIT_RESULT_COMPLETE);
    assert_eq!(
        w.mem.u64(payload),
        kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_CODE_INVALID)
    );
    q.destroy(&w);
    w.close();
}

/// The doorbell hook's errors.
#[test]
fn ring_doorbell_checks_its_arguments() {
    let w = World::new("mi210");
    assert_eq!(w.sim.ring_doorbell(raw_fd(&w.p.kfd), 3), Err(Errno::EINVAL));
    assert_eq!(
        w.sim.ring_doorbell(raw_fd(&w.p.renders[0]), 0),
        Err(Errno::EBADF)
    );
    assert_eq!(w.sim.ring_doorbell(-1, 0), Err(Errno::EBADF));
    let q = aql_queue(&w);
    assert_eq!(w.sim.ring_doorbell(raw_fd(&w.p.kfd), q.id), Ok(()));
    q.destroy(&w);
    w.close();
}

/// Without the hook the engine still finds the work by polling the write
/// pointer; with nothing to do its thread sleeps (few wake-ups).
#[test]
fn engine_polls_write_pointers_and_backs_off() {
    let w = World::new("mi210");
    let mut q = compute_queue(&w);
    q.submit(&w, &pm4::write_data(w.mem.va + DATA, &[1]).unwrap(), false);
    assert!(wait_until(5, || w.mem.u32(DATA) == 1));
    // Idle for a while: the back-off reaches its deep-idle interval.
    std::thread::sleep(kfd_sim::kernel::DEEP_IDLE_AFTER + Duration::from_millis(100));
    let a = w.sim.engine_stats();
    std::thread::sleep(Duration::from_millis(500));
    let b = w.sim.engine_stats();
    let wakeups = b.wakeups - a.wakeups;
    assert!(wakeups <= 500 / 50 + 5, "{wakeups} wake-ups in 500 ms idle");
    // Work is still found without a kick.
    q.submit(&w, &pm4::write_data(w.mem.va + DATA, &[2]).unwrap(), false);
    assert!(wait_until(5, || w.mem.u32(DATA) == 2));
    q.destroy(&w);
    w.close();
}
