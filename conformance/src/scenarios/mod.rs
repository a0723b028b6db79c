//! The scenario table: every exported function family, run the same way
//! against the reference and against ours.
//!
//! A scenario is named `family/name`. The list depends only on the ABI
//! generation (never on the topology), so the parent and every child
//! compute the same list; topology-dependent work (which node is a GPU,
//! how many caches a node has) is discovered at run time and recorded.
//!
//! Each family of [`FAMILIES`] has its own module, whose `register`
//! function is the family's table: one line per scenario with the
//! generations it applies to ([`Applies`]: since which generation, or
//! that one only), its name and the named function that runs it.
//! The `standard` module holds the standard call of every export, which the
//! `closed` and `misc` families use.

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use hsakmt_sys::common::HsaSystemProperties;

use crate::abi::{Abi, AbiKind, NodeCounts};
use crate::cx::Cx;
use crate::kmt;

mod clocks;
mod closed;
mod ctx;
mod debug;
mod dmabuf;
mod events;
mod exec;
mod fuzz;
mod map;
mod memory;
mod misc;
mod openclose;
mod perf;
mod queues;
mod register;
mod share;
mod standard;
mod svm;
mod topology;
mod wait;

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

/// The ABI generations a scenario applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    /// This generation and every later one (the generation whose library
    /// first exported what the scenario calls, or first behaved as it
    /// checks).
    Since(AbiKind),
    /// This generation alone (a function later generations dropped, or a
    /// scenario per export of the generation's own export list).
    Only(AbiKind),
}

impl Applies {
    /// Whether a scenario registered so runs for generation `kind`.
    pub fn includes(self, kind: AbiKind) -> bool {
        match self {
            Applies::Since(first) => kind >= first,
            Applies::Only(only) => kind == only,
        }
    }
}

/// The scenario list of generation `A` being built: each family module
/// registers its scenarios, each a named function with the generations
/// it applies to, and the table keeps those of `A`.
pub(crate) struct Table<A: Abi> {
    list: Vec<Scenario<A>>,
}

impl<A: Abi> Table<A> {
    /// Registers `body` as scenario `name` (`family/name`) for the
    /// generations `applies` names.
    pub(crate) fn add(
        &mut self,
        applies: Applies,
        name: impl Into<String>,
        body: impl Fn(&mut Cx<A>) + 'static,
    ) {
        if applies.includes(A::KIND) {
            self.list.push(Scenario {
                name: name.into(),
                run: Box::new(body),
            });
        }
    }
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

/// Every scenario of generation `A`, family by family in [`FAMILIES`]
/// order.
pub fn all<A: Abi>() -> Vec<Scenario<A>> {
    let mut t = Table { list: Vec::new() };
    openclose::register(&mut t);
    closed::register(&mut t);
    topology::register(&mut t);
    memory::register(&mut t);
    map::register(&mut t);
    register::register(&mut t);
    share::register(&mut t);
    dmabuf::register(&mut t);
    svm::register(&mut t);
    events::register(&mut t);
    wait::register(&mut t);
    queues::register(&mut t);
    exec::register(&mut t);
    debug::register(&mut t);
    perf::register(&mut t);
    clocks::register(&mut t);
    misc::register(&mut t);
    ctx::register(&mut t);
    fuzz::register(&mut t);
    t.list
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

/// Closes a descriptor a library handed out (ignored when negative).
pub(crate) fn close(fd: i32) {
    if fd >= 0 {
        // SAFETY: the descriptor was handed to us and is closed once.
        unsafe { libc::close(fd) };
    }
}

/// A NULL `*const` of any type (readability helper).
pub(crate) fn cnull<T>() -> *const T {
    null()
}

#[cfg(test)]
mod tests {
    use super::Applies::{Only, Since};
    use crate::abi::AbiKind::{Newest, Rocm52, Rocm62};

    #[test]
    fn since_includes_later_generations_only() {
        assert!(!Since(Rocm62).includes(Rocm52));
        assert!(Since(Rocm62).includes(Rocm62));
        assert!(Since(Rocm62).includes(Newest));
        assert!(!Since(Newest).includes(Rocm62));
        assert!(Since(Rocm52).includes(Newest));
    }

    #[test]
    fn only_includes_one_generation() {
        assert!(Only(Rocm52).includes(Rocm52));
        assert!(!Only(Rocm52).includes(Rocm62));
        assert!(!Only(Rocm52).includes(Newest));
    }
}
