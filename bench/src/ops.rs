//! The operations, grouped by the child process that runs them.
//!
//! | group | operations |
//! |---|---|
//! | every child | `floor`: a bare `AMDKFD_IOC_GET_VERSION` on a `/dev/kfd` descriptor of its own, through the preload, before the library is loaded |
//! | `topology` | open + full topology read + close, and release + acquire + full read with KFD open, on the child's preset |
//! | `scaling` | alloc+free and alloc+map+unmap+free (4 KiB system, 2 MiB VRAM), pointer-info lookups of random live buffers and of one GPU-mapped buffer, at each live-allocation level |
//! | `events` | nested open+close; event create+destroy; set+wait on one thread; set→wait wake-up across threads; wait on 64 events (all, any) |
//! | `queues` | AQL queue create+destroy |
//! | `threads` | alloc+free 4 KiB system on one thread, then on two at once |
//! | `ctx` | (our `newest` build only) secondary context open+close, and what a live one costs |

use std::ffi::c_void;
use std::io::Write;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use conformance::abi::{memflag as mf, Abi, AbiKind};
use conformance::api::{Api, CtxPtr};
use hsakmt_sys::common::{HsaEventDescriptor, HsaMemoryProperties, HsaSystemProperties};
use kfd_sys::kfd::{kfd_ioctl_get_version_args, AMDKFD_IOC_GET_VERSION};
use kfd_sys::sync::lock;

use crate::call;
use crate::child::{ChildConfig, Fail, Live, Meter, Mode};

/// How an operation's values read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Nanoseconds per operation.
    Ns,
    /// Bytes.
    Bytes,
    /// A count.
    Count,
}

/// One reported operation.
#[derive(Debug, Clone, Copy)]
pub struct OpInfo {
    /// Id used in the protocol and `report.json`.
    pub id: &'static str,
    /// Table title.
    pub title: &'static str,
    /// Unit of its samples.
    pub unit: Unit,
    /// Measured with our `newest` build only (the C 5.2.3 lacks the API).
    pub ours_only: bool,
    /// The child group that measures it (see [`GROUPS`]; `floor` is
    /// measured by every child, listed as `events`).
    pub group: &'static str,
}

const fn op(group: &'static str, id: &'static str, title: &'static str) -> OpInfo {
    OpInfo {
        id,
        title,
        unit: Unit::Ns,
        ours_only: false,
        group,
    }
}

const fn ours(id: &'static str, title: &'static str, unit: Unit) -> OpInfo {
    OpInfo {
        id,
        title,
        unit,
        ours_only: true,
        group: "ctx",
    }
}

/// Every operation, in table order.
pub const OPS: &[OpInfo] = &[
    op("events", "floor", "floor: bare GET_VERSION ioctl"),
    op("topology", "topology", "open+topology read+close"),
    op("topology", "reacquire", "release+acquire+node props"),
    op("scaling", "fill", "grow live set, per 4K alloc"),
    op("scaling", "alloc-free-sys4k", "alloc+free 4K system"),
    op(
        "scaling",
        "alloc-map-free-sys4k",
        "alloc+map+unmap+free 4K sys",
    ),
    op("scaling", "alloc-free-vram2m", "alloc+free 2M VRAM"),
    op(
        "scaling",
        "alloc-map-free-vram2m",
        "alloc+map+unmap+free 2M VRAM",
    ),
    op(
        "scaling",
        "pointer-info",
        "QueryPointerInfo, random live ptr",
    ),
    op(
        "scaling",
        "pointer-info-mapped",
        "QueryPointerInfo, GPU-mapped buffer",
    ),
    op("events", "open-nested", "nested OpenKFD+CloseKFD"),
    op("events", "event-create", "event create+destroy"),
    op("events", "event-set-wait", "SetEvent+WaitOnEvent, 1 thread"),
    op("events", "event-wake", "event set->wait wake-up (1 way)"),
    op("events", "event-wait-all-64", "wait all of 64 (all set)"),
    op("events", "event-wait-any-64", "wait any of 64 (one set)"),
    op("queues", "queue", "AQL queue create+destroy"),
    op("threads", "threads-1", "alloc+free 4K sys, 1 thread"),
    op("threads", "threads-2", "alloc+free 4K sys, 2 threads"),
    ours("ctx-open-close", "secondary ctx open+close", Unit::Ns),
    ours("ctx-rss-bare", "RSS per live secondary ctx", Unit::Bytes),
    ours("ctx-rss-used", "  ... after topology+4K alloc", Unit::Bytes),
    ours("ctx-fds", "descriptors per secondary ctx", Unit::Count),
    ours("ctx-maps", "mappings per secondary ctx", Unit::Count),
];

/// The operation named `id`.
pub fn info(id: &str) -> Option<&'static OpInfo> {
    OPS.iter().find(|o| o.id == id)
}

/// The child groups, in run order.
pub const GROUPS: &[&str] = &["topology", "scaling", "events", "queues", "threads", "ctx"];

/// The operations measured per live-allocation level.
pub const SCALING_OPS: &[&str] = &[
    "alloc-free-sys4k",
    "alloc-map-free-sys4k",
    "alloc-free-vram2m",
    "alloc-map-free-vram2m",
    "pointer-info",
    "pointer-info-mapped",
];

/// Flags of the 4 KiB system buffers: GTT, CPU-visible.
pub const SYS_FLAGS: u32 = mf::HOST_ACCESS | mf::NON_PAGED;
/// Flags of VRAM buffers (measured and live set): device-local, coarse.
pub const VRAM_FLAGS: u32 = mf::NON_PAGED | mf::COARSE_GRAIN;
const K4: u64 = 0x1000;
const M2: u64 = 0x20_0000;
const RING: u64 = 0x1_0000;
const COMPUTE_AQL: u32 = 21;
/// Live secondary contexts opened to measure what one costs.
pub const CTX_LIVE: usize = 32;

/// Measures the floor: GET_VERSION on a fresh `/dev/kfd` descriptor.
pub fn floor<W: Write>(m: &mut Meter<W>) {
    // SAFETY: a NUL-terminated path literal; the preload (or the kernel)
    // opens the device, nothing else is touched.
    let fd = unsafe { libc::open(c"/dev/kfd".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        m.out.error("floor", "", &format!("open /dev/kfd: {e}"));
        return;
    }
    let req = AMDKFD_IOC_GET_VERSION.request() as libc::c_ulong;
    m.measure("floor", "", Mode::Batch, 1.0, || {
        let mut v = kfd_ioctl_get_version_args::default();
        // SAFETY: `fd` is an open KFD descriptor and GET_VERSION writes
        // exactly one `kfd_ioctl_get_version_args`, which `v` is.
        let r = unsafe { libc::ioctl(fd, req, &mut v as *mut kfd_ioctl_get_version_args) };
        if r == 0 {
            Ok(Duration::ZERO)
        } else {
            Err(Fail::Error(format!(
                "GET_VERSION: {}",
                std::io::Error::last_os_error()
            )))
        }
    });
    // SAFETY: `fd` was opened above and is closed once.
    unsafe { libc::close(fd) };
}

/// Runs the group `cfg.group`.
pub fn run_group<A: Abi + Sync, W: Write>(
    api: &Api<A>,
    cfg: &ChildConfig,
    m: &mut Meter<W>,
) -> Result<(), String> {
    match cfg.group.as_str() {
        "topology" => topology(api, cfg, m),
        "scaling" => scaling(api, cfg, m),
        "events" => events(api, m),
        "queues" => queues(api, m),
        "threads" => threads(api, m),
        "ctx" => ctx(api, m),
        g => return Err(format!("unknown group `{g}`")),
    }
    Ok(())
}

/// Reusable output buffers of a topology read.
struct Scratch<A: Abi> {
    mem: Vec<HsaMemoryProperties>,
    caches: Vec<A::CacheProperties>,
    links: Vec<A::IoLinkProperties>,
}

fn sized<T: Default + Clone>(v: &mut Vec<T>, n: u32) -> *mut T {
    if v.len() < n as usize {
        v.resize(n as usize, T::default());
    }
    v.as_mut_ptr()
}

/// Acquire + every node's properties, memory banks, caches and io links.
/// Returns the node count and the GPU nodes.
fn read_nodes<A: Abi>(api: &Api<A>, s: &mut Scratch<A>) -> Result<(u32, Vec<u32>), Fail> {
    let mut sp = HsaSystemProperties::default();
    call!(api, hsaKmtAcquireSystemProperties(&mut sp))?;
    let mut gpus = Vec::new();
    for n in 0..sp.NumNodes {
        let mut np = A::NodeProperties::default();
        call!(api, hsaKmtGetNodeProperties(n, &mut np))?;
        let c = A::node_counts(&np);
        if c.simds > 0 {
            gpus.push(n);
        }
        if c.banks > 0 {
            let p = sized(&mut s.mem, c.banks);
            call!(api, hsaKmtGetNodeMemoryProperties(n, c.banks, p))?;
        }
        if c.caches > 0 {
            let pid = if c.simds > 0 {
                c.fcompute_id_lo
            } else {
                c.ccompute_id_lo
            };
            let p = sized(&mut s.caches, c.caches);
            call!(api, hsaKmtGetNodeCacheProperties(n, pid, c.caches, p))?;
        }
        if c.links > 0 {
            let p = sized(&mut s.links, c.links);
            call!(api, hsaKmtGetNodeIoLinkProperties(n, c.links, p))?;
        }
    }
    Ok((sp.NumNodes, gpus))
}

fn topology<A: Abi, W: Write>(api: &Api<A>, cfg: &ChildConfig, m: &mut Meter<W>) {
    let mut s = Scratch::<A> {
        mem: Vec::new(),
        caches: Vec::new(),
        links: Vec::new(),
    };
    let mut nodes = 0;
    m.measure("topology", &cfg.preset, Mode::Batch, 1.0, || {
        call!(api, hsaKmtOpenKFD())?;
        let r = read_nodes(api, &mut s);
        let rel = call!(api, hsaKmtReleaseSystemProperties());
        let close = call!(api, hsaKmtCloseKFD());
        nodes = r?.0;
        rel?;
        close?;
        Ok(Duration::ZERO)
    });
    if nodes > 0 {
        m.out
            .note("topology", &cfg.preset, &format!("nodes={nodes}"));
    }
    // KFD stays open: what a runtime re-reading the topology pays.
    if let Err(e) = call!(api, hsaKmtOpenKFD()) {
        return m.fail("reacquire", &cfg.preset, &e);
    }
    m.measure("reacquire", &cfg.preset, Mode::Batch, 1.0, || {
        call!(api, hsaKmtReleaseSystemProperties())?;
        read_nodes(api, &mut s)?;
        Ok(Duration::ZERO)
    });
    let _ = call!(api, hsaKmtCloseKFD());
}

/// Opens the primary context and reads the topology; returns the GPU
/// nodes (at least one). Left open for the rest of the child.
fn open_all<A: Abi>(api: &Api<A>) -> Result<Vec<u32>, Fail> {
    call!(api, hsaKmtOpenKFD())?;
    let mut s = Scratch::<A> {
        mem: Vec::new(),
        caches: Vec::new(),
        links: Vec::new(),
    };
    let (_, gpus) = read_nodes(api, &mut s)?;
    if gpus.is_empty() {
        return Err(Fail::Error("the topology has no GPU node".into()));
    }
    Ok(gpus)
}

/// [`open_all`], returning the first GPU node.
fn open<A: Abi>(api: &Api<A>) -> Result<u32, Fail> {
    open_all(api).map(|g| g[0])
}

fn alloc<A: Abi>(api: &Api<A>, node: u32, size: u64, flags: u32) -> Result<*mut c_void, Fail> {
    let mut p: *mut c_void = null_mut();
    call!(
        api,
        hsaKmtAllocMemory(node, size, A::mem_flags(flags), &mut p)
    )?;
    if p.is_null() {
        return Err(Fail::Error("hsaKmtAllocMemory: SUCCESS with NULL".into()));
    }
    Ok(p)
}

fn free<A: Abi>(api: &Api<A>, p: *mut c_void, size: u64) -> Result<(), Fail> {
    call!(api, hsaKmtFreeMemory(p, size))
}

fn map<A: Abi>(api: &Api<A>, p: *mut c_void, size: u64) -> Result<(), Fail> {
    let mut va = 0u64;
    call!(api, hsaKmtMapMemoryToGPU(p, size, &mut va))
}

fn unmap<A: Abi>(api: &Api<A>, p: *mut c_void) -> Result<(), Fail> {
    call!(api, hsaKmtUnmapMemoryToGPU(p))
}

/// xorshift64*, for picking live pointers.
fn next(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    x.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

fn scaling<A: Abi, W: Write>(api: &Api<A>, cfg: &ChildConfig, m: &mut Meter<W>) {
    let all = |m: &mut Meter<W>, e: &Fail| {
        for l in &cfg.levels {
            for op in SCALING_OPS {
                m.fail(op, &format!("live={l}"), e);
            }
        }
    };
    let gpus = match open_all(api) {
        Ok(g) => g,
        Err(e) => return all(m, &e),
    };
    let gpu = gpus[0];
    let (live_size, live_flags) = match cfg.live {
        Live::Vram => (K4, VRAM_FLAGS),
        Live::Sys => (K4, SYS_FLAGS),
    };
    let live_node = |i: usize| match cfg.live {
        Live::Vram => gpus[i % gpus.len()],
        Live::Sys => 0,
    };
    let probe = match alloc(api, gpu, K4, VRAM_FLAGS) {
        Ok(p) => p,
        Err(e) => return all(m, &e),
    };
    // A buffer mapped to the GPU: its answer has node lists (the arrays
    // the C caller reads through the answer's pointers).
    let mapped = match alloc(api, gpu, K4, VRAM_FLAGS).and_then(|p| map(api, p, K4).map(|_| p)) {
        Ok(p) => p,
        Err(e) => return all(m, &e),
    };
    let mut live: Vec<usize> = Vec::new();
    let mut stuck: Option<String> = None;
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    // Both libraries give every allocation its own CPU mapping (VMA), so
    // the live set cannot outgrow vm.max_map_count: a level above what the
    // mappings left allow is replaced by the largest multiple of 5000 that
    // fits, once, with a note.
    let max_maps = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .unwrap_or(usize::MAX);
    let room = max_maps.saturating_sub(count_maps() + 3000);
    let cap = room / 5000 * 5000;
    let mut levels: Vec<(usize, Option<String>)> = Vec::new();
    for &l in &cfg.levels {
        if l <= cap {
            levels.push((l, None));
        } else if !matches!(levels.last(), Some(x) if x.0 >= cap) && cap > 0 {
            levels.push((
                cap,
                Some(format!(
                    "{l} live allocations need {l} CPU mappings, but \
                     vm.max_map_count is {max_maps}: measured at {cap} instead \
                     (`sysctl -w vm.max_map_count=262144` to measure {l})"
                )),
            ));
        }
    }
    for (level, why) in levels {
        let param = format!("live={level}");
        if let Some(w) = why {
            m.out.note("fill", &param, &w);
        }
        if stuck.is_none() && live.len() < level {
            let (start, t0) = (live.len(), Instant::now());
            live.reserve(level - start);
            while live.len() < level {
                match alloc(api, live_node(live.len()), live_size, live_flags) {
                    Ok(p) => live.push(p as usize),
                    Err(e) => {
                        let d = match e {
                            Fail::Unsupported(d) | Fail::Error(d) => d,
                        };
                        stuck = Some(format!(
                            "the live set stopped growing at {} allocations: {d}",
                            live.len()
                        ));
                        break;
                    }
                }
            }
            if stuck.is_none() && m.trace.is_none() {
                let ns = t0.elapsed().as_nanos() as f64 / (level - start) as f64;
                m.out.sample("fill", &param, ns);
            }
        }
        if let Some(why) = &stuck {
            m.out.note("fill", &param, why);
            for op in SCALING_OPS {
                m.out.error(op, &param, why);
            }
            continue;
        }
        m.measure("alloc-free-sys4k", &param, Mode::Batch, 1.0, || {
            let p = alloc(api, 0, K4, SYS_FLAGS)?;
            free(api, p, K4)?;
            Ok(Duration::ZERO)
        });
        m.measure("alloc-map-free-sys4k", &param, Mode::Batch, 1.0, || {
            let p = alloc(api, 0, K4, SYS_FLAGS)?;
            let r = map(api, p, K4).and_then(|_| unmap(api, p));
            free(api, p, K4)?;
            r.map(|_| Duration::ZERO)
        });
        m.measure("alloc-free-vram2m", &param, Mode::Batch, 1.0, || {
            let p = alloc(api, gpu, M2, VRAM_FLAGS)?;
            free(api, p, M2)?;
            Ok(Duration::ZERO)
        });
        m.measure("alloc-map-free-vram2m", &param, Mode::Batch, 1.0, || {
            let p = alloc(api, gpu, M2, VRAM_FLAGS)?;
            let r = map(api, p, M2).and_then(|_| unmap(api, p));
            free(api, p, M2)?;
            r.map(|_| Duration::ZERO)
        });
        m.measure("pointer-info", &param, Mode::Batch, 1.0, || {
            let p = if live.is_empty() {
                probe
            } else {
                live[(next(&mut rng) % live.len() as u64) as usize] as *mut c_void
            };
            let mut info = A::PointerInfo::default();
            call!(api, hsaKmtQueryPointerInfo(p, &mut info))?;
            Ok(Duration::ZERO)
        });
        m.measure("pointer-info-mapped", &param, Mode::Batch, 1.0, || {
            let mut info = A::PointerInfo::default();
            call!(api, hsaKmtQueryPointerInfo(mapped, &mut info))?;
            Ok(Duration::ZERO)
        });
    }
    // The live set is left to process exit: freeing 50k buffers one by
    // one would only add minutes of teardown to the run.
}

fn event<A: Abi>(api: &Api<A>, node: u32) -> Result<*mut A::Event, Fail> {
    let mut d = HsaEventDescriptor::default();
    d.EventType.0 = 0; // HSA_EVENTTYPE_SIGNAL
    d.NodeId = node;
    let mut e: *mut A::Event = null_mut();
    call!(api, hsaKmtCreateEvent(&mut d, false, false, &mut e))?;
    if e.is_null() {
        return Err(Fail::Error("hsaKmtCreateEvent: SUCCESS with NULL".into()));
    }
    Ok(e)
}

fn events<A: Abi + Sync, W: Write>(api: &Api<A>, m: &mut Meter<W>) {
    const OPS: [&str; 6] = [
        "open-nested",
        "event-create",
        "event-set-wait",
        "event-wake",
        "event-wait-all-64",
        "event-wait-any-64",
    ];
    let made = open(api).and_then(|gpu| {
        let pair = (event(api, gpu)?, event(api, gpu)?);
        let many = (0..64)
            .map(|_| event(api, gpu))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((gpu, pair, many))
    });
    let (gpu, (e1, e2), mut many) = match made {
        Ok(x) => x,
        Err(e) => {
            for op in OPS {
                m.fail(op, "", &e);
            }
            return;
        }
    };
    m.measure("open-nested", "", Mode::Batch, 1.0, || {
        // KERNEL_ALREADY_OPENED (22): the open is counted.
        call!(expect 22, api, hsaKmtOpenKFD())?;
        call!(api, hsaKmtCloseKFD())?;
        Ok(Duration::ZERO)
    });
    m.measure("event-create", "", Mode::Batch, 1.0, || {
        let e = event(api, gpu)?;
        call!(api, hsaKmtDestroyEvent(e))?;
        Ok(Duration::ZERO)
    });
    // Auto-reset: the wait finds the event set and resets it.
    m.measure("event-set-wait", "", Mode::Batch, 1.0, || {
        call!(api, hsaKmtSetEvent(e1))?;
        call!(api, hsaKmtWaitOnEvent(e1, 1000))?;
        Ok(Duration::ZERO)
    });
    // Ping-pong: this thread sets e1 and waits on e2; the peer waits on e1
    // and sets e2. One sample is a round trip divided by two.
    let stop = AtomicBool::new(false);
    let (a, b) = (e1 as usize, e2 as usize);
    std::thread::scope(|s| {
        s.spawn(|| {
            let (e1, e2) = (a as *mut A::Event, b as *mut A::Event);
            loop {
                let r = call!(api, hsaKmtWaitOnEvent(e1, 1000));
                if stop.load(Ordering::Acquire) {
                    break;
                }
                if r.is_ok() {
                    let _ = call!(api, hsaKmtSetEvent(e2));
                } else {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        });
        m.measure("event-wake", "", Mode::Batch, 2.0, || {
            call!(api, hsaKmtSetEvent(e1))?;
            call!(api, hsaKmtWaitOnEvent(e2, 2000))?;
            Ok(Duration::ZERO)
        });
        stop.store(true, Ordering::Release);
        let _ = call!(api, hsaKmtSetEvent(e1));
    });
    let n = many.len() as u32;
    let list = many.as_mut_ptr();
    m.measure("event-wait-all-64", "", Mode::Own, 1.0, || {
        for &e in many.iter() {
            call!(api, hsaKmtSetEvent(e))?;
        }
        let t = Instant::now();
        call!(api, hsaKmtWaitOnMultipleEvents(list, n, true, 1000))?;
        Ok(t.elapsed())
    });
    let last = many[63];
    m.measure("event-wait-any-64", "", Mode::Own, 1.0, || {
        call!(api, hsaKmtSetEvent(last))?;
        let t = Instant::now();
        call!(api, hsaKmtWaitOnMultipleEvents(list, n, false, 1000))?;
        Ok(t.elapsed())
    });
}

fn queues<A: Abi, W: Write>(api: &Api<A>, m: &mut Meter<W>) {
    let made = open(api).and_then(|gpu| {
        let ring = alloc(api, 0, RING, mf::HOST_ACCESS | mf::EXECUTE)?;
        map(api, ring, RING)?;
        let ptrs = alloc(api, 0, K4, mf::HOST_ACCESS)?;
        map(api, ptrs, K4)?;
        Ok((gpu, ring, ptrs))
    });
    let (gpu, ring, ptrs) = match made {
        Ok(x) => x,
        Err(e) => return m.fail("queue", "", &e),
    };
    m.measure("queue", "", Mode::Batch, 1.0, || {
        let mut q = A::QueueResource::default();
        A::set_queue_ptrs(&mut q, ptrs as u64, ptrs as u64 + 8);
        call!(
            api,
            hsaKmtCreateQueue(gpu, COMPUTE_AQL, 100, 0, ring, RING, null_mut(), &mut q)
        )?;
        call!(api, hsaKmtDestroyQueue(A::queue_view(&q).0))?;
        Ok(Duration::ZERO)
    });
}

fn alloc_free<A: Abi + Sync>(api: &Api<A>) -> Result<(), Fail> {
    let p = alloc(api, 0, K4, SYS_FLAGS)?;
    free(api, p, K4)
}

fn threads<A: Abi + Sync, W: Write>(api: &Api<A>, m: &mut Meter<W>) {
    if let Err(e) = open(api) {
        m.fail("threads-1", "", &e);
        m.fail("threads-2", "", &e);
        return;
    }
    let one = m.measure("threads-1", "", Mode::Batch, 1.0, || {
        alloc_free(api).map(|_| Duration::ZERO)
    });
    let Some(one) = one else {
        return m.out.error("threads-2", "", "the one-thread run failed");
    };
    if m.trace.is_some() {
        return; // the counting pass: same calls as threads-1
    }
    // Two workers run `batch` alloc+free pairs each between two barriers;
    // a sample is the wall time of a round divided by `batch`: the cost of
    // one operation on each thread while the other allocates too.
    let budget = m.budget;
    let target = budget.per_op.as_nanos() as f64 / budget.max_samples.max(1) as f64;
    let batch = ((target / one.max(1.0)) as usize).max(1);
    let barrier = Barrier::new(3);
    let stop = AtomicBool::new(false);
    let failed: Mutex<Option<Fail>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                barrier.wait();
                if stop.load(Ordering::Acquire) {
                    break;
                }
                for _ in 0..batch {
                    if let Err(e) = alloc_free(api) {
                        *lock(&failed) = Some(e);
                        break;
                    }
                }
                barrier.wait();
            });
        }
        let start = Instant::now();
        let mut rounds = 0usize;
        loop {
            barrier.wait();
            let t = Instant::now();
            barrier.wait();
            let wall = t.elapsed();
            if let Some(e) = lock(&failed).take() {
                m.fail("threads-2", "", &e);
                break;
            }
            // Round 0 is the warm-up.
            if rounds > 0 {
                m.out
                    .sample("threads-2", "", wall.as_nanos() as f64 / batch as f64);
            }
            rounds += 1;
            let el = start.elapsed();
            if rounds > budget.max_samples
                || (el > budget.per_op && rounds > budget.min_samples)
                || el > budget.per_op * 5
            {
                break;
            }
        }
        stop.store(true, Ordering::Release);
        barrier.wait();
    });
}

/// Resident set size of this process, bytes.
fn rss() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * page.max(1) as u64
}

fn count_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count())
        .unwrap_or(0)
}

fn count_maps() -> usize {
    std::fs::read_to_string("/proc/self/maps")
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

fn ctx<A: Abi, W: Write>(api: &Api<A>, m: &mut Meter<W>) {
    const MEM: [&str; 4] = ["ctx-rss-bare", "ctx-rss-used", "ctx-fds", "ctx-maps"];
    if A::KIND != AbiKind::Newest {
        for op in ["ctx-open-close"].iter().chain(MEM.iter()) {
            m.out
                .unsupported(op, "", "the rocm-5.2 ABI has no context API");
        }
        return;
    }
    if let Err(e) = call!(api, hsaKmtOpenKFD()) {
        for op in ["ctx-open-close"].iter().chain(MEM.iter()) {
            m.fail(op, "", &e);
        }
        return;
    }
    m.measure("ctx-open-close", "", Mode::Batch, 1.0, || {
        let mut c: CtxPtr = null_mut();
        call!(api, hsaKmtOpenSecondaryKFDCtx(&mut c))?;
        call!(api, hsaKmtCloseSecondaryKFDCtx(c))?;
        Ok(Duration::ZERO)
    });
    if m.trace.is_some() {
        return; // the counting pass: nothing more to count
    }
    let (rss0, fds0, maps0) = (rss(), count_fds(), count_maps());
    let mut ctxs: Vec<CtxPtr> = Vec::with_capacity(CTX_LIVE);
    let opened = (0..CTX_LIVE).try_for_each(|_| {
        let mut c: CtxPtr = null_mut();
        call!(api, hsaKmtOpenSecondaryKFDCtx(&mut c))?;
        ctxs.push(c);
        Ok(())
    });
    let k = CTX_LIVE as f64;
    let result = opened.and_then(|_| {
        let (rss1, fds1, maps1) = (rss(), count_fds(), count_maps());
        m.out
            .sample("ctx-rss-bare", "", (rss1 as f64 - rss0 as f64) / k);
        m.out.sample("ctx-fds", "", (fds1 as f64 - fds0 as f64) / k);
        let mut maps_bare = (maps1 as f64 - maps0 as f64) / k;
        for &c in &ctxs {
            let mut sp = HsaSystemProperties::default();
            call!(api, hsaKmtAcquireSystemPropertiesCtx(c, &mut sp))?;
            let mut p: *mut c_void = null_mut();
            call!(
                api,
                hsaKmtAllocMemoryCtx(c, 0, K4, A::mem_flags(SYS_FLAGS), &mut p)
            )?;
        }
        let (rss2, maps2) = (rss(), count_maps());
        m.out
            .sample("ctx-rss-used", "", (rss2 as f64 - rss0 as f64) / k);
        m.out.note(
            "ctx-maps",
            "",
            &format!(
                "opened: {maps_bare:.1}, after topology+alloc: {:.1}",
                (maps2 as f64 - maps0 as f64) / k
            ),
        );
        maps_bare = (maps2 as f64 - maps0 as f64) / k;
        m.out.sample("ctx-maps", "", maps_bare);
        Ok(())
    });
    if let Err(e) = result {
        for op in MEM {
            m.fail(op, "", &e);
        }
    }
    for c in ctxs {
        let _ = call!(api, hsaKmtCloseSecondaryKFDCtx(c));
    }
    if let Some(s) = sim_objects() {
        m.out.note("ctx-rss-used", "", &s);
    }
}

/// The simulator's view of the live secondaries at their most numerous
/// (the `close-kfd` summary line written before the first one closed).
fn sim_objects() -> Option<String> {
    let path = std::env::var_os("KFD_SIM_SUMMARY")?;
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().max_by_key(|l| {
        l.split_whitespace()
            .find_map(|w| w.strip_prefix("processes="))
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0)
    })?;
    let mut secondaries = 0usize;
    let mut sums = [0usize; 4];
    for p in line.split('[').skip(1) {
        if !p.contains("secondary=true") {
            continue;
        }
        secondaries += 1;
        for (i, key) in ["bos=", "queues=", "events=", "svm_ranges="]
            .iter()
            .enumerate()
        {
            sums[i] += p
                .split_whitespace()
                .find_map(|w| w.strip_prefix(key))
                .and_then(|n| n.trim_end_matches(']').parse::<usize>().ok())
                .unwrap_or(0);
        }
    }
    if secondaries == 0 {
        return None;
    }
    let per = |x: usize| x as f64 / secondaries as f64;
    Some(format!(
        "sim, per live secondary context (after topology+4K alloc): 1 kernel process, \
         {:.1} BOs, {:.1} queues, {:.1} events, {:.1} SVM ranges",
        per(sums[0]),
        per(sums[1]),
        per(sums[2]),
        per(sums[3])
    ))
}
