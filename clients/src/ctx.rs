//! The walk of `kfd-ctx-client`: a secondary KFD context of our newest
//! build, through the context API, checked against the documented
//! semantics (DESIGN.md §1.1, `hsakmtctx.h`, the statuses in the docs of
//! hsakmt's `openclose.rs`, `memory.rs`, `events.rs`, `debug.rs`). There
//! is no C library with the Ctx API to compare with, so the client's
//! transcript must equal [`EXPECTED`], which lists what those documents
//! promise; it holds nothing that depends on the topology.

use std::ffi::c_void;
use std::fmt::Write as _;
use std::ptr::null_mut;

use crate::kmt::*;

/// What the walk must print, status for status:
///
/// - a secondary context needs the primary open (else 20,
///   `KERNEL_IO_CHANNEL_NOT_OPENED`); the primary is counted (a second
///   open is 22, `KERNEL_ALREADY_OPENED`, and counted too);
/// - a secondary is a new handle with its own topology snapshot (the same
///   nodes), its own memory (allocated, mapped on each GPU, unknown to
///   the primary: pointer info → 1, `ERROR`) and its own events (a set
///   through the primary's handle → 4, `INVALID_HANDLE`; a wait times
///   out with 31, `WAIT_TIMEOUT`, until the event is set; auto-reset);
/// - it refuses debugger operations (runtime capabilities → 11,
///   `NOT_SUPPORTED`);
/// - closing it twice, using it after the close, or closing the primary
///   through `hsaKmtCloseSecondaryKFDCtx` → 3 (`INVALID_PARAMETER`);
/// - once the primary is closed as often as opened, a secondary cannot be
///   opened (20).
pub const EXPECTED: &str = "\
open secondary with no primary: 20
open primary: 0
open primary again: 22
open secondary: 0
secondary is a new handle: yes
secondary system properties: 0
same nodes as the primary: yes
every GPU: alloc 0, map 0, pointer info of the primary 1, unmap 0, free 0
event: create 0, wait 31, set through the primary 4, set 0, wait 0, wait again 31, destroy 0
runtime capabilities of the secondary: 11
release system properties: 0
close secondary: 0
close secondary again: 3
acquire on the closed secondary: 3
close the primary as a secondary: 3
close primary: 0
close primary again: 0
open secondary with the primary closed: 20
";

/// The transcript and whether it is [`EXPECTED`].
#[derive(Debug)]
pub struct Report {
    /// One line per step.
    pub text: String,
    /// `text == EXPECTED`.
    pub ok: bool,
}

/// The first status of `statuses` that is not `SUCCESS` (else `SUCCESS`):
/// one number for a step done on every GPU.
fn first_failure(statuses: impl IntoIterator<Item = KmtStatus>) -> KmtStatus {
    statuses
        .into_iter()
        .find(|s| *s != SUCCESS)
        .unwrap_or(SUCCESS)
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The GPU nodes of a context's snapshot (nodes with SIMDs).
fn gpu_nodes(t: &Thunk, ctx: Ctx, nodes: u32) -> Vec<u32> {
    (0..nodes)
        .filter(|n| {
            let mut p: NodePropertiesBuf = [0; 64];
            // SAFETY: `p` has room for any generation's HsaNodeProperties.
            let s = unsafe { (t.hsaKmtGetNodePropertiesCtx)(ctx, *n, &mut p) };
            let b = p.as_ptr().cast::<u8>();
            // SAFETY: the offset is inside `p`; an unaligned u32 read.
            let simds = unsafe { b.add(NODE_SIMD_COUNT_OFFSET).cast::<u32>().read_unaligned() };
            s == SUCCESS && simds > 0
        })
        .collect()
}

/// Alloc (1 MiB of VRAM without CPU access: a small-BAR GPU such as
/// navi31 refuses CPU-visible VRAM with 6, `NO_MEMORY`), map, the
/// primary's pointer info, unmap and free on one GPU node: the five
/// statuses.
fn memory_on(t: &Thunk, primary: Ctx, s: Ctx, node: u32) -> [KmtStatus; 5] {
    const LEN: u64 = 1 << 20;
    let mut p: *mut c_void = null_mut();
    // SAFETY: `p` is a valid out-pointer; flags by value.
    let alloc = unsafe { (t.hsaKmtAllocMemoryCtx)(s, node, LEN, MEM_NON_PAGED, &mut p) };
    if alloc != SUCCESS {
        return [alloc, SUCCESS, ERROR, SUCCESS, SUCCESS];
    }
    // SAFETY: memory of this context; NULL alternate address.
    let map = unsafe { (t.hsaKmtMapMemoryToGPUCtx)(s, p, LEN, null_mut()) };
    let mut info: PointerInfoBuf = [0; 16];
    // SAFETY: `info` has room for HsaPointerInfo; the pointer is only
    // looked up.
    let seen = unsafe { (t.hsaKmtQueryPointerInfoCtx)(primary, p, &mut info) };
    // SAFETY: as above.
    let unmap = unsafe { (t.hsaKmtUnmapMemoryToGPUCtx)(s, p) };
    // SAFETY: the allocation made above, freed once.
    let free = unsafe { (t.hsaKmtFreeMemoryCtx)(s, p, LEN) };
    [alloc, map, seen, unmap, free]
}

/// A signal event of the secondary: wait (times out), a set through the
/// primary's handle (unknown there), set, wait, wait again (auto-reset),
/// destroy.
fn events(t: &Thunk, primary: Ctx, s: Ctx) -> String {
    let mut desc = EventDescriptor {
        event_type: EVENTTYPE_SIGNAL,
        node_id: 0,
        sync_var: null_mut(),
        sync_var_size: 0,
    };
    let mut ev: Event = null_mut();
    // SAFETY: a live descriptor and out-pointer; auto-reset, not signaled.
    let create = unsafe { (t.hsaKmtCreateEventCtx)(s, &mut desc, false, false, &mut ev) };
    if create != SUCCESS {
        return format!("create {create}");
    }
    // SAFETY: `ev` is a live event of `s` until the destroy below; the
    // primary only looks it up.
    let (w1, foreign, set, w2, w3, destroy) = unsafe {
        (
            (t.hsaKmtWaitOnEventCtx)(s, ev, 10),
            (t.hsaKmtSetEventCtx)(primary, ev),
            (t.hsaKmtSetEventCtx)(s, ev),
            (t.hsaKmtWaitOnEventCtx)(s, ev, 1000),
            (t.hsaKmtWaitOnEventCtx)(s, ev, 10),
            (t.hsaKmtDestroyEventCtx)(s, ev),
        )
    };
    format!(
        "create {create}, wait {w1}, set through the primary {foreign}, set {set}, wait {w2}, \
         wait again {w3}, destroy {destroy}"
    )
}

/// Runs the walk on `t` (which nobody else in the process uses).
pub fn run(t: &Thunk) -> Report {
    let mut out = String::new();
    let mut line = |s: String| {
        let _ = writeln!(out, "{s}");
    };
    let mut s: Ctx = null_mut();
    let mut primary: Ctx = null_mut();
    let mut again: Ctx = null_mut();
    // SAFETY: every pointer passed here and below is a live local or a
    // handle the library returned; handles are used only as the documents
    // allow (closed handles only to check the refusal).
    unsafe {
        line(format!(
            "open secondary with no primary: {}",
            (t.hsaKmtOpenSecondaryKFDCtx)(&mut s)
        ));
        line(format!(
            "open primary: {}",
            (t.hsaKmtOpenKFDCtx)(&mut primary)
        ));
        line(format!(
            "open primary again: {}",
            (t.hsaKmtOpenKFDCtx)(&mut again)
        ));
        line(format!(
            "open secondary: {}",
            (t.hsaKmtOpenSecondaryKFDCtx)(&mut s)
        ));
    }
    line(format!(
        "secondary is a new handle: {}",
        yes(!s.is_null() && s != primary && again == primary)
    ));
    let (mut ps, mut ss) = (SystemProperties::default(), SystemProperties::default());
    // SAFETY: as above.
    let (pa, sa) = unsafe {
        (
            (t.hsaKmtAcquireSystemPropertiesCtx)(primary, &mut ps),
            (t.hsaKmtAcquireSystemPropertiesCtx)(s, &mut ss),
        )
    };
    line(format!("secondary system properties: {sa}"));
    let gpus = gpu_nodes(t, s, ss.num_nodes);
    line(format!(
        "same nodes as the primary: {}",
        yes(pa == SUCCESS
            && ps.num_nodes == ss.num_nodes
            && gpus == gpu_nodes(t, primary, ps.num_nodes))
    ));
    let results: Vec<[KmtStatus; 5]> = gpus.iter().map(|g| memory_on(t, primary, s, *g)).collect();
    let col = |i: usize| first_failure(results.iter().map(|r| r[i]));
    // The primary must refuse every lookup: the first answer that is not
    // ERROR, else ERROR.
    let seen = results
        .iter()
        .map(|r| r[2])
        .find(|v| *v != ERROR)
        .unwrap_or(ERROR);
    line(format!(
        "every GPU: alloc {}, map {}, pointer info of the primary {seen}, unmap {}, free {}",
        col(0),
        col(1),
        col(3),
        col(4)
    ));
    line(format!("event: {}", events(t, primary, s)));
    let mut caps = 0u32;
    // SAFETY: as above.
    unsafe {
        line(format!(
            "runtime capabilities of the secondary: {}",
            (t.hsaKmtGetRuntimeCapabilitiesCtx)(s, &mut caps)
        ));
        line(format!(
            "release system properties: {}",
            (t.hsaKmtReleaseSystemPropertiesCtx)(s)
        ));
        line(format!(
            "close secondary: {}",
            (t.hsaKmtCloseSecondaryKFDCtx)(s)
        ));
        line(format!(
            "close secondary again: {}",
            (t.hsaKmtCloseSecondaryKFDCtx)(s)
        ));
        line(format!(
            "acquire on the closed secondary: {}",
            (t.hsaKmtAcquireSystemPropertiesCtx)(s, &mut ss)
        ));
        line(format!(
            "close the primary as a secondary: {}",
            (t.hsaKmtCloseSecondaryKFDCtx)(primary)
        ));
        line(format!("close primary: {}", (t.hsaKmtCloseKFDCtx)()));
        line(format!("close primary again: {}", (t.hsaKmtCloseKFDCtx)()));
        let mut late: Ctx = null_mut();
        line(format!(
            "open secondary with the primary closed: {}",
            (t.hsaKmtOpenSecondaryKFDCtx)(&mut late)
        ));
    }
    let ok = out == EXPECTED;
    Report { text: out, ok }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_status_per_step() {
        assert_eq!(first_failure([0, 0, 3, 5]), 3);
        assert_eq!(first_failure([]), 0);
        assert_eq!(EXPECTED.lines().count(), 18);
        assert!(EXPECTED.ends_with('\n'));
    }
}
