//! A kernel dispatch: the kernel descriptor, the waves of each workgroup
//! with their initial registers, the workgroup scheduler (LDS, barriers)
//! and workgroups spread over worker threads.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use super::code::{page_base, CodeCache, CodeView, Slot};
use super::exec::{Ctx, Flow, Stop, PRIVATE_WINDOW};
use super::isa::{Enc, Target};
use super::wave::{Wave, LANES};
use crate::mem::{Fault, GpuMemoryDebug, Tlb};
use kfd_sys::sync::lock;

/// The fields of a kernel descriptor the hardware reads. The code-object
/// v3+ descriptor and the legacy `amd_kernel_code_t` keep them at the same
/// offsets: the entry offset at 16, `compute_pgm_rsrc3` at 44 (reserved,
/// zero, in the legacy form), `rsrc1` at 48, `rsrc2` at 52 and the kernel
/// code properties at 56.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelCode {
    /// Address of the first instruction (descriptor address + entry
    /// offset).
    pub entry: u64,
    /// `COMPUTE_PGM_RSRC1`.
    pub rsrc1: u32,
    /// `COMPUTE_PGM_RSRC2`.
    pub rsrc2: u32,
    /// `COMPUTE_PGM_RSRC3` (gfx90a+: AccVGPR offset).
    pub rsrc3: u32,
    /// Kernel code properties (which user SGPRs are set up).
    pub properties: u32,
    /// Kernel argument preload (gfx90a+): dword count in bits 6:0, dword
    /// offset in bits 15:7.
    pub kernarg_preload: u16,
}

impl KernelCode {
    /// Reads the descriptor at `addr`.
    pub fn read(tlb: &mut Tlb<'_>, addr: u64) -> Result<KernelCode, Fault> {
        let entry = tlb.load::<u64>(addr + 16)?;
        Ok(KernelCode {
            entry: addr.wrapping_add(entry),
            rsrc3: tlb.load(addr + 44)?,
            rsrc1: tlb.load(addr + 48)?,
            rsrc2: tlb.load(addr + 52)?,
            properties: tlb.load::<u32>(addr + 56)? & 0xffff,
            kernarg_preload: tlb.load(addr + 58)?,
        })
    }

    /// User SGPRs (`rsrc2.USER_SGPR`).
    pub fn user_sgprs(&self) -> u32 {
        (self.rsrc2 >> 1) & 0x1f
    }

    /// Work-item id components provided (`rsrc2.TIDIG_COMP_CNT`: 0 = X,
    /// 1 = X and Y, 2 = X, Y and Z).
    pub fn tid_components(&self) -> u32 {
        (self.rsrc2 >> 11) & 3
    }

    /// The first AccVGPR's index in the unified register file (gfx90a+).
    pub fn accum_offset(&self) -> usize {
        (((self.rsrc3 & 0x3f) + 1) * 4) as usize
    }
}

/// Kernel code property bits (the user SGPRs set up, in this order).
pub mod prop {
    /// Private segment buffer resource (4 SGPRs).
    pub const PRIVATE_SEGMENT_BUFFER: u32 = 1 << 0;
    /// Dispatch packet address (2).
    pub const DISPATCH_PTR: u32 = 1 << 1;
    /// `amd_queue_t` address (2).
    pub const QUEUE_PTR: u32 = 1 << 2;
    /// Kernarg segment address (2).
    pub const KERNARG_SEGMENT_PTR: u32 = 1 << 3;
    /// Dispatch id (2).
    pub const DISPATCH_ID: u32 = 1 << 4;
    /// Flat scratch init (2).
    pub const FLAT_SCRATCH_INIT: u32 = 1 << 5;
    /// Private segment size (1).
    pub const PRIVATE_SEGMENT_SIZE: u32 = 1 << 6;
    /// Legacy `amd_kernel_code_t`: grid workgroup count X (1).
    pub const GRID_WORKGROUP_COUNT_X: u32 = 1 << 7;
    /// Legacy: grid workgroup count Y (1).
    pub const GRID_WORKGROUP_COUNT_Y: u32 = 1 << 8;
    /// Legacy: grid workgroup count Z (1).
    pub const GRID_WORKGROUP_COUNT_Z: u32 = 1 << 9;
    /// gfx10+: the kernel runs in wave32 (no user SGPR).
    pub const WAVEFRONT_SIZE32: u32 = 1 << 10;
}

/// One kernel dispatch, as the command processor hands it to the shader
/// machine.
pub struct Dispatch<'a> {
    /// The target.
    pub target: Target,
    /// The kernel descriptor.
    pub code: KernelCode,
    /// Grid size in work-items per dimension.
    pub grid: [u32; 3],
    /// Workgroup size in work-items per dimension.
    pub workgroup: [u16; 3],
    /// LDS bytes per workgroup (static + dynamic).
    pub group_segment_size: u32,
    /// Private bytes per work-item.
    pub private_segment_size: u32,
    /// Kernarg segment address.
    pub kernarg: u64,
    /// Dispatch packet address.
    pub packet: u64,
    /// `amd_queue_t` address.
    pub queue: u64,
    /// Dispatch id.
    pub dispatch_id: u64,
    /// Flat-address aperture of LDS.
    pub shared_base: u64,
    /// Flat-address aperture of private memory.
    pub private_base: u64,
    /// GPU memory.
    pub mem: &'a dyn GpuMemoryDebug,
    /// Limits.
    pub limits: Limits,
    /// Asked between slices of work: true stops the dispatch.
    pub stop: &'a (dyn Fn() -> bool + Sync),
    /// The GPU clock (`s_memtime`).
    pub clock: &'a (dyn Fn() -> u64 + Sync),
    /// The constant-rate clock (`s_memrealtime`).
    pub realtime: &'a (dyn Fn() -> u64 + Sync),
}

impl std::fmt::Debug for Dispatch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatch")
            .field("target", &self.target)
            .field("code", &self.code)
            .field("grid", &self.grid)
            .field("workgroup", &self.workgroup)
            .finish_non_exhaustive()
    }
}

/// Bounds on a dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Instructions one wave may execute before it is reported as a
    /// runaway.
    pub wave_instructions: u64,
    /// Private bytes per wave at most (a wave that grows its stack past
    /// it faults).
    pub private_bytes: usize,
    /// Worker threads (1 runs every workgroup on the calling thread).
    pub workers: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            wave_instructions: DEFAULT_WAVE_INSTRUCTIONS,
            private_bytes: 64 << 20,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// The default runaway bound: 2^32 instructions per wave (about a minute
/// of one core).
pub const DEFAULT_WAVE_INSTRUCTIONS: u64 = 1 << 32;

/// Instructions a wave runs before the next wave of its workgroup gets a
/// turn (so waves that spin on each other's memory make progress).
const SLICE: u64 = 4096;

/// Why a dispatch did not complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DispatchError {
    /// An instruction the target does not have, or one the model does
    /// not execute.
    IllegalInstruction {
        /// Its address.
        pc: u64,
        /// Its family.
        enc: Enc,
        /// Its opcode.
        op: u16,
        /// Its mnemonic and detail (empty for an unknown opcode).
        what: String,
        /// Its first word.
        word: u32,
    },
    /// A memory access faulted.
    Fault {
        /// The faulting instruction's address.
        pc: u64,
        /// The fault.
        fault: Fault,
    },
    /// A wave ran past [`Limits::wave_instructions`].
    Runaway {
        /// Where it was.
        pc: u64,
        /// The limit.
        limit: u64,
    },
    /// `s_trap` (no trap handler is modelled).
    Trap {
        /// Its address.
        pc: u64,
        /// The trap id.
        id: u16,
    },
    /// The wave halted itself.
    Halted {
        /// Where.
        pc: u64,
    },
    /// The dispatch was stopped from outside (queue destroyed or
    /// evicted).
    Stopped,
    /// The packet or descriptor asks for something impossible.
    BadDispatch(String),
}

impl std::fmt::Display for DispatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DispatchError::IllegalInstruction {
                pc,
                enc,
                op,
                what,
                word,
            } => {
                if what.is_empty() {
                    write!(
                        f,
                        "illegal instruction at {pc:#x}: {} opcode {op:#x} (word {word:#010x})",
                        enc.name()
                    )
                } else {
                    write!(
                        f,
                        "illegal instruction at {pc:#x}: {} opcode {op:#x} `{what}` is not modelled (word {word:#010x})",
                        enc.name()
                    )
                }
            }
            DispatchError::Fault { pc, fault } => {
                write!(f, "{fault} by the instruction at {pc:#x}")
            }
            DispatchError::Runaway { pc, limit } => {
                write!(f, "a wave ran past {limit} instructions (at {pc:#x})")
            }
            DispatchError::Trap { pc, id } => write!(f, "s_trap {id} at {pc:#x}"),
            DispatchError::Halted { pc } => write!(f, "a wave halted at {pc:#x}"),
            DispatchError::Stopped => write!(f, "the dispatch was stopped"),
            DispatchError::BadDispatch(s) => write!(f, "bad dispatch: {s}"),
        }
    }
}

impl std::error::Error for DispatchError {}

/// What a completed dispatch did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Workgroups run.
    pub workgroups: u64,
    /// Waves run.
    pub waves: u64,
    /// Instructions executed (per wave, summed).
    pub instructions: u64,
}

/// Runs a dispatch to its end.
pub fn run(d: &Dispatch<'_>, cache: &CodeCache) -> Result<Stats, DispatchError> {
    let wg = d.workgroup.map(u32::from);
    if wg.contains(&0) || d.grid.contains(&0) {
        return Err(DispatchError::BadDispatch(format!(
            "grid {:?} workgroup {:?}",
            d.grid, d.workgroup
        )));
    }
    let wg_items = wg[0] * wg[1] * wg[2];
    if wg_items > 1024 {
        return Err(DispatchError::BadDispatch(format!(
            "workgroup of {wg_items} work-items (at most 1024)"
        )));
    }
    let counts: [u64; 3] = std::array::from_fn(|k| u64::from(d.grid[k].div_ceil(wg[k])));
    let total = counts[0] * counts[1] * counts[2];
    let next = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<(u64, DispatchError)>> = Mutex::new(None);
    let stats = Mutex::new(Stats::default());
    let worker = || {
        let mut w = Worker::new(d, cache);
        let mut mine = Stats::default();
        loop {
            if failed.load(Ordering::Relaxed) {
                break;
            }
            let n = next.fetch_add(1, Ordering::Relaxed);
            if n >= total {
                break;
            }
            if (d.stop)() {
                failed.store(true, Ordering::Relaxed);
                let mut e = lock(&first_error);
                e.get_or_insert((n, DispatchError::Stopped));
                break;
            }
            let id = [
                n % counts[0],
                n / counts[0] % counts[1],
                n / (counts[0] * counts[1]),
            ];
            match w.workgroup(id.map(|x| x as u32), counts) {
                Ok(s) => {
                    mine.workgroups += 1;
                    mine.waves += s.waves;
                    mine.instructions += s.instructions;
                }
                Err(err) => {
                    failed.store(true, Ordering::Relaxed);
                    let mut e = lock(&first_error);
                    // Report the error of the lowest workgroup, so a run
                    // says the same whatever the thread timing.
                    if e.as_ref().map_or(true, |(m, _)| n < *m) {
                        *e = Some((n, err));
                    }
                    break;
                }
            }
        }
        let mut s = lock(&stats);
        s.workgroups += mine.workgroups;
        s.waves += mine.waves;
        s.instructions += mine.instructions;
    };
    let threads = d.limits.workers.clamp(1, 64).min(total as usize);
    if threads <= 1 {
        worker();
    } else {
        std::thread::scope(|s| {
            for _ in 1..threads {
                s.spawn(worker);
            }
            worker();
        });
    }
    if let Some((_, e)) = first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    Ok(stats.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// Where a wave is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ready,
    AtBarrier,
    Done,
}

/// One worker thread's machinery, reused for its workgroups.
struct Worker<'d, 'c> {
    d: &'d Dispatch<'d>,
    code: CodeView<'c>,
    tlb: Tlb<'d>,
    waves: Vec<Wave>,
    privates: Vec<Vec<u8>>,
    lds: Vec<u8>,
}

impl<'d, 'c> Worker<'d, 'c> {
    fn new(d: &'d Dispatch<'d>, cache: &'c CodeCache) -> Worker<'d, 'c> {
        Worker {
            d,
            code: CodeView::new(cache, d.target),
            tlb: Tlb::new(d.mem),
            waves: Vec::new(),
            privates: Vec::new(),
            lds: Vec::new(),
        }
    }

    /// Runs workgroup `id` (of `counts` per dimension) to its end.
    fn workgroup(&mut self, id: [u32; 3], counts: [u64; 3]) -> Result<Stats, DispatchError> {
        let d = self.d;
        self.tlb.revalidate();
        // The workgroup's size: the last one in a dimension may be partial.
        let size: [u32; 3] = std::array::from_fn(|k| {
            let wg = u32::from(d.workgroup[k]);
            wg.min(d.grid[k] - id[k] * wg)
        });
        let items = (size[0] * size[1] * size[2]) as usize;
        let nwaves = items.div_ceil(wave_lanes(d));
        let vgprs = if d.target.has_mfma() { 512 } else { 256 };
        while self.waves.len() < nwaves {
            self.waves.push(Wave::new(vgprs));
            self.privates.push(Vec::new());
        }
        self.lds.clear();
        self.lds.resize(d.group_segment_size as usize, 0);
        for (k, w) in self.waves[..nwaves].iter_mut().enumerate() {
            setup(d, w, k, items, size, id, counts);
            self.privates[k].clear();
        }
        let mut state = vec![State::Ready; nwaves];
        let mut stats = Stats {
            workgroups: 1,
            waves: nwaves as u64,
            instructions: 0,
        };
        loop {
            let mut ready = 0;
            for k in 0..nwaves {
                if state[k] != State::Ready {
                    continue;
                }
                ready += 1;
                let w = &mut self.waves[k];
                let mut ctx = Ctx {
                    target: d.target,
                    tlb: &mut self.tlb,
                    lds: &mut self.lds,
                    private: &mut self.privates[k],
                    private_limit: d.limits.private_bytes,
                    shared_base: d.shared_base,
                    private_base: d.private_base,
                    clock: d.clock,
                    realtime: d.realtime,
                };
                let before = w.executed;
                let r = slice(w, &mut self.code, &mut ctx, d.limits.wave_instructions);
                stats.instructions += w.executed - before;
                match r? {
                    Some(State::AtBarrier) => state[k] = State::AtBarrier,
                    Some(State::Done) => state[k] = State::Done,
                    _ => {}
                }
            }
            let waiting = state.iter().filter(|s| **s == State::AtBarrier).count();
            let done = state.iter().filter(|s| **s == State::Done).count();
            if done == nwaves {
                return Ok(stats);
            }
            if ready == 0 && waiting + done == nwaves {
                // Every live wave reached the barrier: release them.
                for s in state.iter_mut().filter(|s| **s == State::AtBarrier) {
                    *s = State::Ready;
                }
            }
            if (d.stop)() {
                return Err(DispatchError::Stopped);
            }
        }
    }
}

/// Runs `w` for up to [`SLICE`] instructions: `Some(state)` when it
/// reached a barrier or its end, `None` when the slice ran out.
fn slice(
    w: &mut Wave,
    code: &mut CodeView<'_>,
    ctx: &mut Ctx<'_, '_>,
    limit: u64,
) -> Result<Option<State>, DispatchError> {
    let mut left = SLICE;
    let (mut page, mut base) = {
        let (p, _) = code
            .page(w.pc, ctx.tlb)
            .map_err(|fault| DispatchError::Fault { pc: w.pc, fault })?;
        (p, page_base(w.pc))
    };
    loop {
        if left == 0 {
            return Ok(None);
        }
        if w.executed >= limit {
            return Err(DispatchError::Runaway { pc: w.pc, limit });
        }
        if page_base(w.pc) != base {
            let (p, _) = code
                .page(w.pc, ctx.tlb)
                .map_err(|fault| DispatchError::Fault { pc: w.pc, fault })?;
            page = p;
            base = page_base(w.pc);
        }
        let pc = w.pc;
        let (inst, exec) = match page.slot(((pc - base) / 4) as usize) {
            Slot::Run(i, e) => (i, *e),
            Slot::Illegal(e) => {
                return Err(DispatchError::IllegalInstruction {
                    pc,
                    enc: e.enc,
                    op: e.op,
                    what: String::new(),
                    word: e.word,
                })
            }
            Slot::Missing(i) => {
                return Err(DispatchError::IllegalInstruction {
                    pc,
                    enc: i.enc,
                    op: i.op,
                    what: i.name.to_string(),
                    word: i.w[0],
                })
            }
        };
        w.executed += 1;
        left -= 1;
        match exec(w, inst, ctx) {
            Flow::Next => w.pc = pc.wrapping_add(u64::from(inst.len)),
            Flow::Jump(t) => w.pc = t,
            Flow::Barrier => {
                w.pc = pc.wrapping_add(u64::from(inst.len));
                return Ok(Some(State::AtBarrier));
            }
            Flow::End => return Ok(Some(State::Done)),
            Flow::Error(s) => {
                return Err(match s {
                    Stop::Fault(fault) => DispatchError::Fault { pc, fault },
                    Stop::Unimplemented { enc, op, what } => DispatchError::IllegalInstruction {
                        pc,
                        enc,
                        op,
                        what,
                        word: inst.w[0],
                    },
                    Stop::Trap(id) => DispatchError::Trap { pc, id },
                    Stop::Halted => DispatchError::Halted { pc },
                })
            }
        }
    }
}

/// The private segment buffer resource: base = the private window,
/// swizzled with 4-byte elements and an index stride of 64, the lane id
/// added to the index (what the hardware's scratch setup gives).
pub fn private_resource() -> [u32; 4] {
    let base = PRIVATE_WINDOW;
    [
        base as u32,
        (base >> 32) as u32 & 0xffff | 1 << 31,
        u32::MAX,
        // DST_SEL_XYZW, NUM_FORMAT/DATA_FORMAT 32, ELEMENT_SIZE 4 bytes (1),
        // INDEX_STRIDE 64 (3), ADD_TID_ENABLE.
        0x0002_7fac | 1 << 19 | 3 << 21 | 1 << 23,
    ]
}

/// Lanes per wave of dispatch `d`: 32 when a gfx11 kernel descriptor
/// asks for wave32, else 64.
fn wave_lanes(d: &Dispatch<'_>) -> usize {
    if d.target.is_gfx11() && d.code.properties & prop::WAVEFRONT_SIZE32 != 0 {
        32
    } else {
        LANES
    }
}

/// Sets up wave `k` of a workgroup: registers as the hardware's dispatch
/// does.
fn setup(
    d: &Dispatch<'_>,
    w: &mut Wave,
    k: usize,
    items: usize,
    size: [u32; 3],
    id: [u32; 3],
    counts: [u64; 3],
) {
    let c = &d.code;
    let n = wave_lanes(d);
    w.wave32 = n == 32;
    w.id = k as u32;
    w.pc = c.entry;
    w.scc = false;
    w.executed = 0;
    w.trapsts = 0;
    w.sgpr = [0; 128];
    w.shared_base_hi = (d.shared_base >> 32) as u32;
    w.private_base_hi = (d.private_base >> 32) as u32;
    // MODE: FLOAT_MODE (rsrc1 19:12) in bits 7:0, DX10_CLAMP (21) in 8,
    // IEEE_MODE (23) in 9.
    w.mode = (c.rsrc1 >> 12) & 0xff | ((c.rsrc1 >> 21) & 1) << 8 | ((c.rsrc1 >> 23) & 1) << 9;
    let lanes = (items - k * n).min(n);
    w.set_exec(if lanes == LANES {
        u64::MAX
    } else {
        (1u64 << lanes) - 1
    });
    let mut s = 0u16;
    let push = |w: &mut Wave, s: &mut u16, v: u32| {
        w.sgpr[usize::from(*s) & 127] = v;
        *s += 1;
    };
    let p = c.properties;
    let user = c.user_sgprs() as u16;
    if p & prop::PRIVATE_SEGMENT_BUFFER != 0 {
        for v in private_resource() {
            push(w, &mut s, v);
        }
    }
    for (bit, v) in [
        (prop::DISPATCH_PTR, d.packet),
        (prop::QUEUE_PTR, d.queue),
        (prop::KERNARG_SEGMENT_PTR, d.kernarg),
        (prop::DISPATCH_ID, d.dispatch_id),
        (prop::FLAT_SCRATCH_INIT, PRIVATE_WINDOW),
    ] {
        if p & bit != 0 {
            push(w, &mut s, v as u32);
            push(w, &mut s, (v >> 32) as u32);
        }
    }
    if p & prop::PRIVATE_SEGMENT_SIZE != 0 {
        push(w, &mut s, d.private_segment_size);
    }
    for (bit, n) in [
        (prop::GRID_WORKGROUP_COUNT_X, counts[0]),
        (prop::GRID_WORKGROUP_COUNT_Y, counts[1]),
        (prop::GRID_WORKGROUP_COUNT_Z, counts[2]),
    ] {
        if p & bit != 0 {
            push(w, &mut s, n as u32);
        }
    }
    // Preloaded kernel arguments fill the rest of the user SGPRs.
    let preload_off = u64::from(c.kernarg_preload >> 7) * 4;
    let mut tlb = Tlb::new(d.mem);
    let first = s;
    while s < user {
        let off = preload_off + 4 * u64::from(s - first);
        let v = tlb.load::<u32>(d.kernarg + off).unwrap_or(0);
        push(w, &mut s, v);
    }
    s = user;
    let r2 = c.rsrc2;
    for (bit, v) in [(7, id[0]), (8, id[1]), (9, id[2])] {
        if r2 >> bit & 1 != 0 {
            w.sgpr[usize::from(s)] = v;
            s += 1;
        }
    }
    if r2 >> 10 & 1 != 0 {
        // Workgroup info: the number of waves in the workgroup in bits 5:0
        // (what LLVM's `wave_id`-free code reads).
        w.sgpr[usize::from(s)] = items.div_ceil(n) as u32;
        s += 1;
    }
    if r2 & 1 != 0 && !d.target.architected_flat_scratch() {
        // The private segment wave byte offset: each wave has its own
        // private memory, so it is 0.
        w.sgpr[usize::from(s)] = 0;
    }
    if d.target.architected_flat_scratch() {
        w.sgpr[102] = PRIVATE_WINDOW as u32;
        w.sgpr[103] = (PRIVATE_WINDOW >> 32) as u32;
    }
    // Work-item ids.
    let comps = c.tid_components();
    let (v0, rest) = w.vgpr.split_at_mut(1);
    for l in 0..n {
        let lin = (k * n + l).min(items.saturating_sub(1)) as u32;
        let x = lin % size[0];
        let y = lin / size[0] % size[1];
        let z = lin / (size[0] * size[1]);
        let (y, z) = (
            if comps >= 1 { y } else { 0 },
            if comps >= 2 { z } else { 0 },
        );
        if d.target.packed_work_item_ids() {
            v0[0][l] = x | y << 10 | z << 20;
        } else {
            v0[0][l] = x;
            rest[0][l] = y;
            rest[1][l] = z;
        }
    }
}
