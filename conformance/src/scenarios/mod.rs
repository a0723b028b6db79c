//! The scenario table: every exported function family, run the same way
//! against the reference and against ours.
//!
//! A scenario is named `family/name`. The list depends only on the ABI
//! generation (never on the topology), so the parent and every child
//! compute the same list; topology-dependent work (which node is a GPU,
//! how many caches a node has) is discovered at run time and recorded.

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use hsakmt_sys::common::{
    HsaClockCounters, HsaCounter, HsaCounterProperties, HsaDbgWaveMessage, HsaEventDescriptor,
    HsaGpuTileConfig, HsaMemoryProperties, HsaMemoryRange, HsaPmcTraceRoot, HsaSharedMemoryHandle,
    HsaSystemProperties, HsaVersionInfo, HSA_DBG_WATCH_MODE, HSA_SVM_ATTRIBUTE,
};

use crate::abi::{memflag, Abi, NodeCounts};
use crate::cx::{Cx, HostBuf};
use crate::kmt;

mod calls62;
mod ctx;
mod debugger;
mod events;
mod exec;
mod ext62;
mod fuzz;
mod memory;
mod misc;
mod newest;
mod openclose;
mod queues;
mod topology;
mod waits;

/// A scenario body.
pub type Body<A> = Box<dyn Fn(&mut Cx<A>)>;

/// One scenario.
pub struct Scenario<A: Abi> {
    /// `family/name`.
    pub name: String,
    /// The body.
    pub run: Body<A>,
}

impl<A: Abi> std::fmt::Debug for Scenario<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scenario({})", self.name)
    }
}

impl<A: Abi> Scenario<A> {
    /// The family part of the name.
    pub fn family(&self) -> &str {
        family_of(&self.name)
    }
}

/// The family part of a scenario name.
pub fn family_of(name: &str) -> &str {
    name.split('/').next().unwrap_or(name)
}

/// How a family is run.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    /// Name.
    pub name: &'static str,
    /// Run on every simulator preset (else only on the default preset).
    pub all_presets: bool,
    /// One child process per scenario (needed when the scenario checks
    /// process-exit state such as live simulator objects, or must not
    /// inherit kernel state from an earlier scenario).
    pub isolated: bool,
    /// Check at each isolated child's exit that the simulator holds no
    /// live kernel process (libhsakmt 6.2.4 keeps /dev/kfd open after
    /// its last close, so this is only asked where the reference lacks
    /// the API or closes its descriptor).
    pub exit_check: bool,
    /// Only robustness is judged: a crash, hang or panic of ours where
    /// the reference returned a status (the `fuzz` family; status
    /// differences are counted, traces not compared).
    pub robustness: bool,
}

/// The families, in report order.
pub const FAMILIES: &[Family] = &[
    fam("openclose", false, false),
    fam("closed", false, false),
    fam("topology", true, false),
    fam("memory", false, false),
    fam("map", false, false),
    fam("register", false, false),
    fam("share", false, false),
    fam("dmabuf", false, false),
    fam("svm", false, false),
    fam("events", false, false),
    fam("wait", false, true),
    fam("queues", false, false),
    fam("exec", false, true),
    fam("debug", false, true),
    fam("perf", false, false),
    fam("clocks", false, false),
    fam("misc", false, false),
    fam_exit_checked("ctx"),
    Family {
        name: "fuzz",
        all_presets: false,
        isolated: true,
        exit_check: false,
        robustness: true,
    },
];

const fn fam(name: &'static str, all_presets: bool, isolated: bool) -> Family {
    Family {
        name,
        all_presets,
        isolated,
        exit_check: false,
        robustness: false,
    }
}

/// An isolated family whose children must leave no kernel process behind.
const fn fam_exit_checked(name: &'static str) -> Family {
    Family {
        exit_check: true,
        ..fam(name, false, true)
    }
}

/// Looks a family up by name.
pub fn family(name: &str) -> Option<Family> {
    FAMILIES.iter().copied().find(|f| f.name == name)
}

/// Adds a scenario to a list.
pub(crate) fn add<A: Abi>(
    v: &mut Vec<Scenario<A>>,
    name: impl Into<String>,
    f: impl Fn(&mut Cx<A>) + 'static,
) {
    v.push(Scenario {
        name: name.into(),
        run: Box::new(f),
    });
}

/// Records `lacks-api` and returns false when a needed symbol is absent
/// (the parent then judges ours by its `check.*` records alone). The
/// names count for coverage either way (the scenario exists for them).
pub(crate) fn require<A: Abi>(cx: &mut Cx<A>, names: &[&str]) -> bool {
    for n in names {
        cx.covers(n);
    }
    let missing: Vec<&str> = names.iter().copied().filter(|n| !cx.api.has(n)).collect();
    if missing.is_empty() {
        true
    } else {
        cx.rec("lacks-api", missing.join(","));
        false
    }
}

/// Every scenario of generation `A`.
pub fn all<A: Abi>() -> Vec<Scenario<A>> {
    let mut v = Vec::new();
    openclose::add_all(&mut v);
    topology::add_all(&mut v);
    memory::add_all(&mut v);
    events::add_all(&mut v);
    queues::add_all(&mut v);
    exec::add_all(&mut v);
    misc::add_all(&mut v);
    debugger::add_all(&mut v);
    ext62::add_all(&mut v);
    newest::add_all(&mut v);
    waits::add_all(&mut v);
    ctx::add_all(&mut v);
    fuzz::add_all(&mut v);
    v
}

/// What the setup step learnt about the topology.
#[derive(Debug, Clone, Default)]
pub struct Topo {
    /// `NumNodes`.
    pub nodes: u32,
    /// Per node counts.
    pub counts: Vec<NodeCounts>,
    /// GPU node ids.
    pub gpus: Vec<u32>,
}

impl Topo {
    /// The first GPU node (or 1 if there is none, which then fails
    /// visibly in both libraries).
    pub fn gpu(&self) -> u32 {
        self.gpus.first().copied().unwrap_or(1)
    }
}

/// `hsaKmtOpenKFD` + `hsaKmtAcquireSystemProperties` + every node's
/// properties; `None` (after recording why) if that fails.
pub(crate) fn setup<A: Abi>(cx: &mut Cx<A>) -> Option<Topo> {
    if kmt!(cx, "setup.open", hsaKmtOpenKFD(), "no arguments") != 0 {
        return None;
    }
    let mut sp = HsaSystemProperties::default();
    if kmt!(
        cx,
        "setup.acquire",
        hsaKmtAcquireSystemProperties(&mut sp),
        "sp is a live HsaSystemProperties"
    ) != 0
    {
        return None;
    }
    let mut t = Topo {
        nodes: sp.NumNodes,
        ..Topo::default()
    };
    for n in 0..sp.NumNodes {
        let mut np = A::NodeProperties::default();
        let s = kmt!(
            cx,
            "setup.node",
            hsaKmtGetNodeProperties(n, &mut np),
            "np is a live NodeProperties of this generation"
        );
        let c = if s == 0 {
            A::node_counts(&np)
        } else {
            NodeCounts::default()
        };
        if c.simds > 0 {
            t.gpus.push(n);
        }
        t.counts.push(c);
    }
    Some(t)
}

/// `hsaKmtReleaseSystemProperties` + `hsaKmtCloseKFD`.
pub(crate) fn teardown<A: Abi>(cx: &mut Cx<A>) {
    kmt!(
        cx,
        "teardown.release",
        hsaKmtReleaseSystemProperties(),
        "no arguments"
    );
    kmt!(cx, "teardown.close", hsaKmtCloseKFD(), "no arguments");
}

/// Allocates through `hsaKmtAllocMemory`, records status and pointer
/// relation, and remembers the allocation. Returns the address.
pub(crate) fn alloc<A: Abi>(
    cx: &mut Cx<A>,
    label: &str,
    node: u32,
    size: u64,
    flags: u32,
) -> Option<*mut c_void> {
    let mut p: *mut c_void = null_mut();
    let s = kmt!(
        cx,
        label,
        hsaKmtAllocMemory(node, size, A::mem_flags(flags), &mut p),
        "p is a live out-pointer"
    );
    allocated(cx, label, s, p, size)
}

/// Records the pointer an allocation call of status `s` returned (by
/// relation) and remembers the allocation; returns it if `s` succeeded.
pub(crate) fn allocated<A: Abi>(
    cx: &mut Cx<A>,
    label: &str,
    s: u32,
    p: *mut c_void,
    size: u64,
) -> Option<*mut c_void> {
    let rel = cx.rel(p as usize);
    cx.rec(&format!("{label}.ptr"), rel);
    if s == 0 && !p.is_null() {
        cx.note_alloc(p as usize, size);
        Some(p)
    } else {
        None
    }
}

/// Frees through `hsaKmtFreeMemory` and forgets the allocation.
pub(crate) fn free<A: Abi>(cx: &mut Cx<A>, label: &str, p: *mut c_void, size: u64) {
    kmt!(
        cx,
        label,
        hsaKmtFreeMemory(p, size),
        "p came from hsaKmtAllocMemory of this library"
    );
    cx.forget_alloc(p as usize);
}

/// Frees what a standard call's successful allocation (status `s`)
/// returned.
pub(crate) fn cleanup_free<A: Abi>(cx: &mut Cx<A>, s: u32, p: *mut c_void, size: u64) {
    if s == 0 && !p.is_null() {
        kmt!(
            cx,
            "cleanup.free",
            hsaKmtFreeMemory(p, size),
            "allocation just made"
        );
    }
}

/// Writes a pattern into the first and last words of `[p, p + size)`
/// and reads it back; records `ok` or what was read.
///
/// # Safety
///
/// `p` must be a host-accessible mapping of at least `size` bytes (the
/// library said so by succeeding an allocation with `HostAccess`).
pub(crate) unsafe fn pattern<A: Abi>(cx: &mut Cx<A>, label: &str, p: *mut c_void, size: u64) {
    let words = (size / 4) as usize;
    let base = p.cast::<u32>();
    let idx = [0usize, words / 2, words.saturating_sub(1)];
    for (k, i) in idx.iter().enumerate() {
        // SAFETY: i < size / 4, inside the mapping (caller contract).
        unsafe { base.add(*i).write_volatile(0xC0DE_0000 | k as u32) };
    }
    let mut ok = true;
    for (k, i) in idx.iter().enumerate() {
        // SAFETY: as above.
        let v = unsafe { base.add(*i).read_volatile() };
        ok &= v == 0xC0DE_0000 | k as u32;
    }
    cx.rec(label, if ok { "pattern-ok" } else { "pattern-mismatch" });
}

/// Records an `HsaPointerInfo` field by field, pointers by relation.
pub(crate) fn pointer_info<A: Abi>(
    cx: &mut Cx<A>,
    label: &str,
    p: *const c_void,
) -> Option<crate::abi::PointerInfoView> {
    let mut pi = A::PointerInfo::default();
    let s = kmt!(
        cx,
        label,
        hsaKmtQueryPointerInfo(p, &mut pi),
        "pi is a live PointerInfo of this generation"
    );
    if s != 0 {
        return None;
    }
    let v = A::pointer_info(&pi);
    let gpu_rel = if v.gpu as usize == v.cpu && v.gpu != 0 {
        "=CPUAddress".to_string()
    } else if v.gpu == 0 {
        "0".to_string()
    } else {
        cx.rel(v.gpu as usize)
    };
    let ov = [
        ("CPUAddress", cx.rel(v.cpu)),
        ("GPUAddress", gpu_rel),
        ("RegisteredNodes", node_list(v.registered, v.n_registered)),
        ("MappedNodes", node_list(v.mapped, v.n_mapped)),
        ("UserData", cx.rel(v.user_data)),
    ];
    cx.fields(label, &pi, &ov);
    Some(v)
}

/// Reads a node-id array the thunk returned, as `[a, b]` (or `null`).
fn node_list(p: usize, n: u32) -> String {
    // With a count of 0 the pointer is not an array the caller may read,
    // so NULL and a dangling/empty allocation are the same answer.
    if n == 0 {
        return "[]".into();
    }
    if p == 0 {
        return "null".into();
    }
    let n = n.min(256) as usize;
    // SAFETY: the thunk returned `p` as an array of `n` node ids that it
    // keeps alive while the allocation exists (hsakmttypes.h).
    let s = unsafe { std::slice::from_raw_parts(p as *const u32, n) };
    format!("{s:?}")
}

/// Calls exported function `f` with ordinary, valid-looking arguments
/// (buffers sized for generation `A`, node `node`): the "calls before
/// open / after close" table and the coverage of rarely used functions.
pub(crate) fn standard_call<A: Abi>(cx: &mut Cx<A>, f: &str, node: u32) -> u32 {
    let buf = HostBuf::new(0x4000);
    let b = buf.ptr();
    let mut node_arr = [node];
    let mut u32a = 0u32;
    let mut u32b = 0u32;
    let mut u64a = 0u64;
    let mut pa: *mut c_void = null_mut();
    let host = A::mem_flags(memflag::HOST_ACCESS);
    match f {
        "hsaKmtOpenKFD" => kmt!(cx, f, hsaKmtOpenKFD(), "no arguments"),
        "hsaKmtCloseKFD" => kmt!(cx, f, hsaKmtCloseKFD(), "no arguments"),
        "hsaKmtGetVersion" => {
            let mut v = HsaVersionInfo::default();
            kmt!(cx, f, hsaKmtGetVersion(&mut v), "live HsaVersionInfo")
        }
        "hsaKmtAcquireSystemProperties" => {
            let mut v = HsaSystemProperties::default();
            kmt!(cx, f, hsaKmtAcquireSystemProperties(&mut v), "live struct")
        }
        "hsaKmtReleaseSystemProperties" => kmt!(cx, f, hsaKmtReleaseSystemProperties(), "none"),
        "hsaKmtGetNodeProperties" => {
            let mut v = A::NodeProperties::default();
            kmt!(
                cx,
                f,
                hsaKmtGetNodeProperties(node, &mut v),
                "live struct of this generation"
            )
        }
        "hsaKmtGetNodeMemoryProperties" => {
            let mut v = [HsaMemoryProperties::default(); 4];
            kmt!(
                cx,
                f,
                hsaKmtGetNodeMemoryProperties(node, 1, v.as_mut_ptr()),
                "array of 4 >= 1 requested"
            )
        }
        "hsaKmtGetNodeCacheProperties" => {
            let mut v = [A::CacheProperties::default(); 2];
            kmt!(
                cx,
                f,
                hsaKmtGetNodeCacheProperties(node, 0, 1, v.as_mut_ptr()),
                "array of 2 >= 1 requested"
            )
        }
        "hsaKmtGetNodeIoLinkProperties" => {
            let mut v = [A::IoLinkProperties::default(); 2];
            kmt!(
                cx,
                f,
                hsaKmtGetNodeIoLinkProperties(node, 1, v.as_mut_ptr()),
                "array of 2 >= 1 requested"
            )
        }
        "hsaKmtCreateEvent" => {
            let mut d = HsaEventDescriptor::default();
            let mut e: *mut A::Event = null_mut();
            let s = kmt!(
                cx,
                f,
                hsaKmtCreateEvent(&mut d, true, false, &mut e),
                "live descriptor and out-pointer"
            );
            if s == 0 && !e.is_null() {
                kmt!(
                    cx,
                    "cleanup.destroy",
                    hsaKmtDestroyEvent(e),
                    "event just created"
                );
            }
            s
        }
        "hsaKmtDestroyEvent" => kmt!(
            cx,
            f,
            hsaKmtDestroyEvent(null_mut()),
            "NULL event: documented check"
        ),
        "hsaKmtSetEvent" => kmt!(
            cx,
            f,
            hsaKmtSetEvent(null_mut()),
            "NULL event: documented check"
        ),
        "hsaKmtResetEvent" => kmt!(
            cx,
            f,
            hsaKmtResetEvent(null_mut()),
            "NULL event: documented check"
        ),
        "hsaKmtQueryEventState" => kmt!(
            cx,
            f,
            hsaKmtQueryEventState(null_mut()),
            "NULL event: documented check"
        ),
        "hsaKmtWaitOnEvent" => kmt!(
            cx,
            f,
            hsaKmtWaitOnEvent(null_mut(), 0),
            "NULL event: documented check"
        ),
        "hsaKmtWaitOnMultipleEvents" => {
            kmt!(
                cx,
                f,
                hsaKmtWaitOnMultipleEvents(null_mut(), 0, true, 0),
                "NULL array, 0 events"
            )
        }
        "hsaKmtCreateQueue" => {
            let mut q = A::QueueResource::default();
            kmt!(
                cx,
                f,
                hsaKmtCreateQueue(node, 1, 100, 0, b, 0x1000, null_mut(), &mut q),
                "ring is a live 16 KiB buffer; q a live QueueResource"
            )
        }
        "hsaKmtUpdateQueue" => kmt!(
            cx,
            f,
            hsaKmtUpdateQueue(0, 100, 0, b, 0x1000, null_mut()),
            "queue id 0: documented check"
        ),
        "hsaKmtDestroyQueue" => kmt!(cx, f, hsaKmtDestroyQueue(0), "queue id 0: documented check"),
        "hsaKmtSetQueueCUMask" => {
            let mut m = [u32::MAX; 1];
            kmt!(
                cx,
                f,
                hsaKmtSetQueueCUMask(0, 32, m.as_mut_ptr()),
                "queue id 0; mask of 32 bits"
            )
        }
        "hsaKmtGetQueueInfo" => {
            let mut qi = A::QueueInfo::default();
            kmt!(
                cx,
                f,
                hsaKmtGetQueueInfo(0, &mut qi),
                "queue id 0; live QueueInfo"
            )
        }
        "hsaKmtAllocQueueGWS" => kmt!(
            cx,
            f,
            hsaKmtAllocQueueGWS(0, 1, &mut u32a),
            "queue id 0; live out word"
        ),
        "hsaKmtSetTrapHandler" => kmt!(
            cx,
            f,
            hsaKmtSetTrapHandler(node, b, 0x1000, b.wrapping_byte_add(0x1000), 0x1000),
            "two halves of a live buffer"
        ),
        "hsaKmtSetMemoryPolicy" => kmt!(
            cx,
            f,
            hsaKmtSetMemoryPolicy(node, 0, 0, null_mut(), 0),
            "no alternate aperture"
        ),
        "hsaKmtAllocMemory" => {
            let s = kmt!(
                cx,
                f,
                hsaKmtAllocMemory(0, 0x1000, host, &mut pa),
                "live out-pointer"
            );
            cleanup_free(cx, s, pa, 0x1000);
            s
        }
        "hsaKmtFreeMemory" => kmt!(
            cx,
            f,
            hsaKmtFreeMemory(b, 0x1000),
            "address unknown to the thunk"
        ),
        "hsaKmtRegisterMemory" => {
            let s = kmt!(
                cx,
                f,
                hsaKmtRegisterMemory(b, 0x4000),
                "live page-aligned host buffer"
            );
            if s == 0 {
                kmt!(
                    cx,
                    "cleanup.deregister",
                    hsaKmtDeregisterMemory(b),
                    "registered just now"
                );
            }
            s
        }
        "hsaKmtRegisterMemoryToNodes" => {
            let s = kmt!(
                cx,
                f,
                hsaKmtRegisterMemoryToNodes(b, 0x4000, 1, node_arr.as_mut_ptr()),
                "live buffer and node array of 1"
            );
            if s == 0 {
                kmt!(
                    cx,
                    "cleanup.deregister",
                    hsaKmtDeregisterMemory(b),
                    "registered just now"
                );
            }
            s
        }
        "hsaKmtRegisterMemoryWithFlags" => {
            let s = kmt!(
                cx,
                f,
                hsaKmtRegisterMemoryWithFlags(b, 0x4000, host),
                "live buffer"
            );
            if s == 0 {
                kmt!(
                    cx,
                    "cleanup.deregister",
                    hsaKmtDeregisterMemory(b),
                    "registered just now"
                );
            }
            s
        }
        "hsaKmtRegisterGraphicsHandleToNodes" => {
            let mut gi = A::GraphicsResourceInfo::default();
            kmt!(
                cx,
                f,
                hsaKmtRegisterGraphicsHandleToNodes(u64::MAX, &mut gi, 1, node_arr.as_mut_ptr()),
                "invalid dma-buf fd; live info and node array"
            )
        }
        "hsaKmtShareMemory" => {
            let mut h: HsaSharedMemoryHandle = [0; 8];
            kmt!(
                cx,
                f,
                hsaKmtShareMemory(b, 0x1000, &mut h),
                "address unknown; live handle"
            )
        }
        "hsaKmtRegisterSharedHandle" => {
            let h: HsaSharedMemoryHandle = [0; 8];
            kmt!(
                cx,
                f,
                hsaKmtRegisterSharedHandle(&h, &mut pa, &mut u64a),
                "zero handle; live outs"
            )
        }
        "hsaKmtRegisterSharedHandleToNodes" => {
            let h: HsaSharedMemoryHandle = [0; 8];
            kmt!(
                cx,
                f,
                hsaKmtRegisterSharedHandleToNodes(&h, &mut pa, &mut u64a, 1, node_arr.as_mut_ptr()),
                "zero handle; live outs"
            )
        }
        "hsaKmtProcessVMRead" | "hsaKmtProcessVMWrite" => {
            let mut l = HsaMemoryRange {
                MemoryAddress: b,
                SizeInBytes: 0x1000,
            };
            let mut r = HsaMemoryRange {
                MemoryAddress: b.wrapping_byte_add(0x1000),
                SizeInBytes: 0x1000,
            };
            let pid = std::process::id();
            if f == "hsaKmtProcessVMRead" {
                kmt!(
                    cx,
                    f,
                    hsaKmtProcessVMRead(pid, &mut l, 1, &mut r, 1, &mut u64a),
                    "ranges inside a live buffer of this process"
                )
            } else {
                kmt!(
                    cx,
                    f,
                    hsaKmtProcessVMWrite(pid, &mut l, 1, &mut r, 1, &mut u64a),
                    "ranges inside a live buffer of this process"
                )
            }
        }
        "hsaKmtDeregisterMemory" => {
            kmt!(cx, f, hsaKmtDeregisterMemory(b), "address never registered")
        }
        "hsaKmtMapMemoryToGPU" => kmt!(
            cx,
            f,
            hsaKmtMapMemoryToGPU(b, 0x1000, &mut u64a),
            "address unknown; live out"
        ),
        "hsaKmtMapMemoryToGPUNodes" => {
            kmt!(
                cx,
                f,
                hsaKmtMapMemoryToGPUNodes(
                    b,
                    0x1000,
                    &mut u64a,
                    A::map_flags(0),
                    1,
                    node_arr.as_mut_ptr()
                ),
                "address unknown; live out and node array"
            )
        }
        "hsaKmtUnmapMemoryToGPU" => kmt!(cx, f, hsaKmtUnmapMemoryToGPU(b), "address never mapped"),
        "hsaKmtMapGraphicHandle" => kmt!(
            cx,
            f,
            hsaKmtMapGraphicHandle(node, 0, 0, 0, 0x1000, &mut u64a),
            "live out"
        ),
        "hsaKmtUnmapGraphicHandle" => kmt!(
            cx,
            f,
            hsaKmtUnmapGraphicHandle(node, b as u64, 0x1000),
            "address never mapped"
        ),
        "hsaKmtGetTileConfig" => {
            let mut t = [0u32; 64];
            let mut m = [0u32; 32];
            let mut tc = HsaGpuTileConfig {
                TileConfig: t.as_mut_ptr(),
                MacroTileConfig: m.as_mut_ptr(),
                NumTileConfigs: 64,
                NumMacroTileConfigs: 32,
                GbAddrConfig: 0,
                NumBanks: 0,
                NumRanks: 0,
                Reserved: [0; 7],
            };
            kmt!(
                cx,
                f,
                hsaKmtGetTileConfig(node, &mut tc),
                "arrays of the advertised capacities"
            )
        }
        "hsaKmtQueryPointerInfo" => {
            let mut pi = A::PointerInfo::default();
            kmt!(
                cx,
                f,
                hsaKmtQueryPointerInfo(b, &mut pi),
                "live PointerInfo"
            )
        }
        "hsaKmtSetMemoryUserData" => kmt!(
            cx,
            f,
            hsaKmtSetMemoryUserData(b, b),
            "address unknown to the thunk"
        ),
        "hsaKmtSVMSetAttr" | "hsaKmtSVMGetAttr" => {
            let mut a = [HSA_SVM_ATTRIBUTE {
                r#type: 0,
                value: 0,
            }];
            if f == "hsaKmtSVMSetAttr" {
                kmt!(
                    cx,
                    f,
                    hsaKmtSVMSetAttr(b, 0x4000, 1, a.as_mut_ptr()),
                    "live page-aligned range, 1 attribute"
                )
            } else {
                kmt!(
                    cx,
                    f,
                    hsaKmtSVMGetAttr(b, 0x4000, 1, a.as_mut_ptr()),
                    "live page-aligned range, 1 attribute"
                )
            }
        }
        "hsaKmtSetXNACKMode" => kmt!(cx, f, hsaKmtSetXNACKMode(0), "no pointers"),
        "hsaKmtGetXNACKMode" => {
            let mut x = 0i32;
            kmt!(cx, f, hsaKmtGetXNACKMode(&mut x), "live out")
        }
        "hsaKmtDbgRegister" => kmt!(cx, f, hsaKmtDbgRegister(node), "no pointers"),
        "hsaKmtDbgUnregister" => kmt!(cx, f, hsaKmtDbgUnregister(node), "no pointers"),
        "hsaKmtDbgWavefrontControl" => {
            let mut m = HsaDbgWaveMessage::default();
            kmt!(
                cx,
                f,
                hsaKmtDbgWavefrontControl(node, 0, 0, 0, &mut m),
                "live message"
            )
        }
        "hsaKmtDbgAddressWatch" => {
            let mut mode = [HSA_DBG_WATCH_MODE(0)];
            let mut addr = [b];
            let mut mask = [u64::MAX];
            let mut ev: [*mut A::Event; 1] = [null_mut()];
            kmt!(
                cx,
                f,
                hsaKmtDbgAddressWatch(
                    node,
                    1,
                    mode.as_mut_ptr(),
                    addr.as_mut_ptr(),
                    mask.as_mut_ptr(),
                    ev.as_mut_ptr()
                ),
                "arrays of one watch point"
            )
        }
        "hsaKmtRuntimeEnable" => {
            let s = kmt!(
                cx,
                f,
                hsaKmtRuntimeEnable(b, true),
                "r_debug stand-in is a live buffer"
            );
            if s == 0 {
                kmt!(cx, "cleanup.disable", hsaKmtRuntimeDisable(), "none");
            }
            s
        }
        "hsaKmtRuntimeDisable" => kmt!(cx, f, hsaKmtRuntimeDisable(), "none"),
        "hsaKmtGetKernelDebugTrapVersionInfo" => {
            kmt!(
                cx,
                f,
                hsaKmtGetKernelDebugTrapVersionInfo(&mut u32a, &mut u32b),
                "live outs"
            )
        }
        "hsaKmtGetClockCounters" => {
            let mut c = HsaClockCounters::default();
            kmt!(cx, f, hsaKmtGetClockCounters(node, &mut c), "live struct")
        }
        "hsaKmtPmcGetCounterProperties" => {
            let mut p: *mut HsaCounterProperties = null_mut();
            kmt!(
                cx,
                f,
                hsaKmtPmcGetCounterProperties(node, &mut p),
                "live out-pointer"
            )
        }
        "hsaKmtPmcRegisterTrace" => {
            let mut c = [HsaCounter::default()];
            let mut root = HsaPmcTraceRoot::default();
            kmt!(
                cx,
                f,
                hsaKmtPmcRegisterTrace(node, 1, c.as_mut_ptr(), &mut root),
                "one counter; live root"
            )
        }
        "hsaKmtPmcUnregisterTrace" => kmt!(cx, f, hsaKmtPmcUnregisterTrace(node, 0), "trace id 0"),
        "hsaKmtPmcAcquireTraceAccess" => {
            kmt!(cx, f, hsaKmtPmcAcquireTraceAccess(node, 0), "trace id 0")
        }
        "hsaKmtPmcReleaseTraceAccess" => {
            kmt!(cx, f, hsaKmtPmcReleaseTraceAccess(node, 0), "trace id 0")
        }
        "hsaKmtPmcStartTrace" => kmt!(
            cx,
            f,
            hsaKmtPmcStartTrace(0, b, 0x1000),
            "trace id 0; live buffer"
        ),
        "hsaKmtPmcQueryTrace" => kmt!(cx, f, hsaKmtPmcQueryTrace(0), "trace id 0"),
        "hsaKmtPmcStopTrace" => kmt!(cx, f, hsaKmtPmcStopTrace(0), "trace id 0"),
        "hsaKmtSPMAcquire" => kmt!(cx, f, hsaKmtSPMAcquire(node), "no pointers"),
        "hsaKmtSPMRelease" => kmt!(cx, f, hsaKmtSPMRelease(node), "no pointers"),
        "hsaKmtSPMSetDestBuffer" => {
            let mut timeout = 0u32;
            let mut lost = false;
            kmt!(
                cx,
                f,
                hsaKmtSPMSetDestBuffer(node, 0x1000, &mut timeout, &mut u32a, b, &mut lost),
                "live outs and buffer"
            )
        }
        "hsaKmtExportDMABufHandle" => {
            let mut fd = -1i32;
            kmt!(
                cx,
                f,
                hsaKmtExportDMABufHandle(b, 0x1000, &mut fd, &mut u64a),
                "address unknown; live outs"
            )
        }
        _ => calls62::standard_call(cx, f, node).unwrap_or_else(|| {
            cx.rec("harness-error", format!("no standard call for {f}"));
            u32::MAX
        }),
    }
}

/// A NULL `*const` of any type (readability helper).
pub(crate) fn cnull<T>() -> *const T {
    null()
}
