//! `perf`: counter properties per node, PMC traces, SPM, and (6.2.4 and
//! newest) PC sampling.

use std::ffi::c_void;
use std::ptr::null_mut;

use hsakmt_sys::common::{HsaCounter, HsaCounterProperties, HsaPmcTraceRoot, HSA_UUID};
use hsakmt_sys::since_6_2::HsaPcSamplingInfo;

use super::Applies::Since;
use super::{setup, teardown, Table};
use crate::abi::Abi;
use crate::abi::AbiKind::{Rocm52, Rocm62};
use crate::cx::{Cx, HostBuf};
use crate::kmt;

/// Reads a trusted, possibly unaligned value out of thunk memory.
///
/// # Safety
///
/// `p` must point to a readable `T`.
unsafe fn rd<T: Copy>(p: *const u8) -> T {
    // SAFETY: caller contract.
    unsafe { p.cast::<T>().read_unaligned() }
}

/// Records the counter blocks of a node's `HsaCounterProperties`.
///
/// # Safety
///
/// `p` must be the pointer `hsaKmtPmcGetCounterProperties` returned.
unsafe fn counter_blocks<A: Abi>(
    cx: &mut Cx<A>,
    label: &str,
    p: *const HsaCounterProperties,
) -> Option<(HSA_UUID, HsaCounter)> {
    let base = p.cast::<u8>();
    // SAFETY: NumBlocks and NumConcurrent are the first two words.
    let (nb, nc): (u32, u32) = unsafe { (rd(base), rd(base.add(4))) };
    cx.rec(&format!("{label}.NumBlocks"), nb);
    cx.rec(&format!("{label}.NumConcurrent"), nc);
    let mut blk = unsafe_add(base, 8);
    let mut first = None;
    for b in 0..nb.min(64) {
        // SAFETY: each block is an HSA_UUID, NumCounters, NumConcurrent
        // and NumCounters HsaCounter entries (hsakmttypes.h), laid out
        // back to back by the thunk.
        let (id, n, conc): (HSA_UUID, u32, u32) =
            unsafe { (rd(blk), rd(blk.add(16)), rd(blk.add(20))) };
        cx.rec(
            &format!("{label}.block{b}"),
            format!("{id:?} counters={n} concurrent={conc}"),
        );
        if n > 0 {
            // SAFETY: the first counter follows the 24-byte block header.
            let c0: HsaCounter = unsafe { rd(blk.add(24)) };
            // 5.2.3 leaves HsaCounter::Flags uninitialised (heap garbage
            // that differs from run to run), so it cannot be compared.
            cx.fields(
                &format!("{label}.block{b}.counter0"),
                &c0,
                &[("Flags", "not-compared".into())],
            );
            if first.is_none() {
                first = Some((id, c0));
            }
        }
        blk = unsafe_add(blk, 24 + 32 * n.max(1) as usize);
    }
    first
}

fn unsafe_add(p: *const u8, n: usize) -> *const u8 {
    p.wrapping_add(n)
}

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    t.add(Since(Rocm52), "perf/counter-properties", counter_properties);
    t.add(Since(Rocm52), "perf/trace", trace);
    t.add(Since(Rocm52), "perf/spm", spm);
    t.add(Since(Rocm62), "perf/pc-sampling", pc_sampling);
}

fn counter_properties<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    for n in 0..t.nodes {
        let mut p: *mut HsaCounterProperties = null_mut();
        let label = format!("node{n}");
        if kmt!(
            cx,
            &label,
            hsaKmtPmcGetCounterProperties(n, &mut p),
            "live out-pointer"
        ) == 0
            && !p.is_null()
        {
            // SAFETY: p was returned by the call above.
            unsafe { counter_blocks(cx, &label, p) };
        }
    }
    let mut p: *mut HsaCounterProperties = null_mut();
    kmt!(
        cx,
        "unknown-node",
        hsaKmtPmcGetCounterProperties(t.nodes, &mut p),
        "unknown node"
    );
    kmt!(
        cx,
        "null",
        hsaKmtPmcGetCounterProperties(t.gpu(), null_mut()),
        "deliberate NULL"
    );
    teardown(cx);
}

fn trace<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    let g = t.gpu();
    let mut p: *mut HsaCounterProperties = null_mut();
    kmt!(
        cx,
        "props",
        hsaKmtPmcGetCounterProperties(g, &mut p),
        "live out-pointer"
    );
    let first = if p.is_null() {
        None
    } else {
        // SAFETY: p was returned by the call above.
        unsafe { counter_blocks(cx, "props", p) }
    };
    let mut counters = [first.map(|f| f.1).unwrap_or_default()];
    let mut root = HsaPmcTraceRoot::default();
    if kmt!(
        cx,
        "register",
        hsaKmtPmcRegisterTrace(g, 1, counters.as_mut_ptr(), &mut root),
        "one counter; live root"
    ) == 0
    {
        let id = root.TraceId;
        cx.fields(
            "root",
            &root,
            &[(
                "TraceId",
                if id != 0 {
                    "nonzero".into()
                } else {
                    "0".into()
                },
            )],
        );
        kmt!(
            cx,
            "acquire",
            hsaKmtPmcAcquireTraceAccess(g, id),
            "trace id from RegisterTrace"
        );
        let buf = HostBuf::new(0x10000);
        kmt!(
            cx,
            "start",
            hsaKmtPmcStartTrace(id, buf.ptr(), 0x10000),
            "live 64 KiB buffer"
        );
        kmt!(cx, "query", hsaKmtPmcQueryTrace(id), "trace id");
        kmt!(cx, "stop", hsaKmtPmcStopTrace(id), "trace id");
        kmt!(
            cx,
            "start-null",
            hsaKmtPmcStartTrace(id, null_mut(), 0x10000),
            "deliberate NULL buffer"
        );
        kmt!(
            cx,
            "release",
            hsaKmtPmcReleaseTraceAccess(g, id),
            "trace id"
        );
        kmt!(
            cx,
            "unregister",
            hsaKmtPmcUnregisterTrace(g, id),
            "trace id"
        );
    }
    kmt!(
        cx,
        "register-zero",
        hsaKmtPmcRegisterTrace(g, 0, counters.as_mut_ptr(), &mut root),
        "0 counters"
    );
    kmt!(
        cx,
        "register-null",
        hsaKmtPmcRegisterTrace(g, 1, null_mut(), &mut root),
        "deliberate NULL counters"
    );
    kmt!(
        cx,
        "register-unknown-node",
        hsaKmtPmcRegisterTrace(t.nodes, 1, counters.as_mut_ptr(), &mut root),
        "unknown node"
    );
    kmt!(cx, "query-id0", hsaKmtPmcQueryTrace(0), "trace id 0");
    kmt!(
        cx,
        "release-id0",
        hsaKmtPmcReleaseTraceAccess(g, 0),
        "trace id 0"
    );
    teardown(cx);
}

fn spm<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    let g = t.gpu();
    kmt!(cx, "acquire", hsaKmtSPMAcquire(g), "no pointers");
    let buf = HostBuf::new(0x10000);
    let (mut timeout, mut copied, mut lost) = (10u32, 0u32, false);
    kmt!(
        cx,
        "set-dest",
        hsaKmtSPMSetDestBuffer(g, 0x10000, &mut timeout, &mut copied, buf.ptr(), &mut lost),
        "live outs; 64 KiB buffer"
    );
    kmt!(
        cx,
        "set-dest-null",
        hsaKmtSPMSetDestBuffer(g, 0, &mut timeout, &mut copied, null_mut(), &mut lost),
        "NULL buffer stops SPM"
    );
    kmt!(cx, "release", hsaKmtSPMRelease(g), "no pointers");
    kmt!(
        cx,
        "acquire-unknown",
        hsaKmtSPMAcquire(t.nodes + 1),
        "unknown node"
    );
    teardown(cx);
}

fn pc_sampling<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    let g = t.gpu();
    kmt!(cx, "support", hsaKmtPcSamplingSupport(), "no arguments");
    let mut infos = [HsaPcSamplingInfo::default(); 4];
    let query = |cx: &mut Cx<A>, label: &str, node: u32, buf: *mut c_void, n: u32| {
        let mut size = 0xABCDu32;
        kmt!(
            cx,
            label,
            hsaKmtPcSamplingQueryCapabilities(node, buf, n, &mut size),
            "buffer of n infos or NULL; live out word"
        );
        cx.rec(&format!("{label}.size"), size);
    };
    query(cx, "query-count", g, null_mut(), 0);
    query(cx, "query-buffer", g, infos.as_mut_ptr().cast(), 4);
    query(cx, "query-cpu-node", 0, null_mut(), 0);
    query(cx, "query-unknown-node", t.nodes, null_mut(), 0);
    kmt!(
        cx,
        "query-null-size",
        hsaKmtPcSamplingQueryCapabilities(g, null_mut(), 0, null_mut()),
        "deliberate NULL size"
    );
    let create = |cx: &mut Cx<A>, label: &str, node: u32| {
        let mut info = HsaPcSamplingInfo {
            value: 1000,
            ..Default::default()
        };
        let mut id = 0x7777u32;
        kmt!(
            cx,
            label,
            hsaKmtPcSamplingCreate(node, &mut info, &mut id),
            "live info and out word"
        );
        cx.rec(&format!("{label}.trace"), id);
    };
    create(cx, "create", g);
    create(cx, "create-unknown-node", t.nodes);
    let mut id = 0u32;
    kmt!(
        cx,
        "create-null-info",
        hsaKmtPcSamplingCreate(g, null_mut(), &mut id),
        "deliberate NULL info"
    );
    let mut info = HsaPcSamplingInfo::default();
    kmt!(
        cx,
        "create-null-trace",
        hsaKmtPcSamplingCreate(g, &mut info, null_mut()),
        "deliberate NULL trace id"
    );
    for (label, node, trace) in [
        ("id0", g, 0u32),
        ("unknown-trace", g, 7),
        ("unknown-node", t.nodes, 7),
    ] {
        kmt!(
            cx,
            &format!("start-{label}"),
            hsaKmtPcSamplingStart(node, trace),
            "no pointers"
        );
        kmt!(
            cx,
            &format!("stop-{label}"),
            hsaKmtPcSamplingStop(node, trace),
            "no pointers"
        );
        kmt!(
            cx,
            &format!("destroy-{label}"),
            hsaKmtPcSamplingDestroy(node, trace),
            "no pointers"
        );
    }
    teardown(cx);
}
