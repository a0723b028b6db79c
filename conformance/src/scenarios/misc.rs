//! `debug` (runtime enable, v1 debugger, trap version), `perf` (counter
//! properties per node, traces, SPM), `clocks` (plausibility),
//! `misc` (tile config, XNACK, memory policy, process VM, pointer info and
//! user data).

use std::ffi::c_void;
use std::ptr::null_mut;

use hsakmt_sys::common::{
    HsaClockCounters, HsaCounter, HsaCounterProperties, HsaDbgWaveMessage, HsaGpuTileConfig,
    HsaPmcTraceRoot, HSA_DBG_WATCH_MODE, HSA_UUID,
};

use super::{add, alloc, free, pointer_info, setup, standard_call, teardown, Scenario};
use crate::abi::{memflag as mf, Abi, AbiKind};
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

pub(super) fn add_all<A: Abi>(v: &mut Vec<Scenario<A>>) {
    // --- debug
    add(v, "debug/runtime-enable", |cx| {
        let Some(_t) = setup(cx) else { return };
        let rdebug = HostBuf::new(0x1000);
        let s = kmt!(
            cx,
            "enable",
            hsaKmtRuntimeEnable(rdebug.ptr(), true),
            "r_debug stand-in: a live page"
        );
        kmt!(
            cx,
            "enable-again",
            hsaKmtRuntimeEnable(rdebug.ptr(), true),
            "r_debug stand-in: a live page"
        );
        if s == 0 {
            kmt!(cx, "disable", hsaKmtRuntimeDisable(), "none");
        }
        kmt!(cx, "disable-again", hsaKmtRuntimeDisable(), "none");
        teardown(cx);
    });
    if A::KIND == AbiKind::Rocm52 {
        add(v, "debug/trap-version", |cx| {
            let Some(_t) = setup(cx) else { return };
            let (mut a, mut b) = (0u32, 0u32);
            if kmt!(
                cx,
                "version",
                hsaKmtGetKernelDebugTrapVersionInfo(&mut a, &mut b),
                "live outs"
            ) == 0
            {
                cx.rec("version.major", a);
                cx.rec("version.minor", b);
            }
            teardown(cx);
        });
    }
    add(v, "debug/v1-debugger", |cx| {
        let Some(t) = setup(cx) else { return };
        let g = t.gpu();
        kmt!(cx, "register", hsaKmtDbgRegister(g), "no pointers");
        let mut m = HsaDbgWaveMessage::default();
        kmt!(
            cx,
            "wavefront-control",
            hsaKmtDbgWavefrontControl(g, 0, 0, 0, &mut m),
            "live message"
        );
        let buf = HostBuf::new(0x1000);
        let mut mode = [HSA_DBG_WATCH_MODE(0)];
        let mut addr = [buf.ptr()];
        let mut mask = [u64::MAX];
        let mut ev: [*mut A::Event; 1] = [null_mut()];
        kmt!(
            cx,
            "address-watch",
            hsaKmtDbgAddressWatch(
                g,
                1,
                mode.as_mut_ptr(),
                addr.as_mut_ptr(),
                mask.as_mut_ptr(),
                ev.as_mut_ptr()
            ),
            "arrays of one watch point"
        );
        kmt!(cx, "unregister", hsaKmtDbgUnregister(g), "no pointers");
        kmt!(
            cx,
            "register-unknown",
            hsaKmtDbgRegister(t.nodes + 1),
            "unknown node"
        );
        kmt!(
            cx,
            "unregister-unknown",
            hsaKmtDbgUnregister(t.nodes + 1),
            "unknown node"
        );
        teardown(cx);
    });

    // --- perf
    add(v, "perf/counter-properties", |cx| {
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
    });
    add(v, "perf/trace", |cx| {
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
    });
    add(v, "perf/spm", |cx| {
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
    });

    // --- clocks
    add(v, "clocks/plausible", |cx| {
        let Some(t) = setup(cx) else { return };
        for n in 0..t.nodes {
            let mut a = HsaClockCounters::default();
            let mut b = HsaClockCounters::default();
            let label = format!("node{n}");
            let s1 = kmt!(cx, &label, hsaKmtGetClockCounters(n, &mut a), "live struct");
            std::thread::sleep(std::time::Duration::from_millis(2));
            let s2 = kmt!(cx, &label, hsaKmtGetClockCounters(n, &mut b), "live struct");
            if s1 == 0 && s2 == 0 {
                let gpu = t.gpus.contains(&n);
                cx.rec(
                    &format!("{label}.gpu-counter-nonzero"),
                    !gpu || a.GPUClockCounter != 0,
                );
                cx.rec(
                    &format!("{label}.cpu-counter-nonzero"),
                    a.CPUClockCounter != 0,
                );
                cx.rec(
                    &format!("{label}.system-counter-nonzero"),
                    a.SystemClockCounter != 0,
                );
                cx.rec(
                    &format!("{label}.frequency-nonzero"),
                    a.SystemClockFrequencyHz != 0,
                );
                cx.rec(
                    &format!("{label}.gpu-monotonic"),
                    b.GPUClockCounter >= a.GPUClockCounter,
                );
                cx.rec(
                    &format!("{label}.cpu-advances"),
                    b.CPUClockCounter > a.CPUClockCounter,
                );
                cx.rec(
                    &format!("{label}.system-advances"),
                    b.SystemClockCounter > a.SystemClockCounter,
                );
                cx.rec(
                    &format!("{label}.frequency-stable"),
                    b.SystemClockFrequencyHz == a.SystemClockFrequencyHz,
                );
            }
        }
        let mut c = HsaClockCounters::default();
        kmt!(
            cx,
            "unknown-node",
            hsaKmtGetClockCounters(t.nodes, &mut c),
            "unknown node"
        );
        teardown(cx);
    });

    // --- misc
    add(v, "misc/tile-config", |cx| {
        let Some(t) = setup(cx) else { return };
        for n in [t.gpu(), 0, t.nodes] {
            let mut tiles = [0u32; 64];
            let mut macros = [0u32; 32];
            let mut tc = HsaGpuTileConfig {
                TileConfig: tiles.as_mut_ptr(),
                MacroTileConfig: macros.as_mut_ptr(),
                NumTileConfigs: 64,
                NumMacroTileConfigs: 32,
                GbAddrConfig: 0,
                NumBanks: 0,
                NumRanks: 0,
                Reserved: [0; 7],
            };
            let label = format!("node{n}");
            if kmt!(
                cx,
                &label,
                hsaKmtGetTileConfig(n, &mut tc),
                "arrays of the advertised capacities"
            ) == 0
            {
                let nt = tc.NumTileConfigs.min(64) as usize;
                let nm = tc.NumMacroTileConfigs.min(32) as usize;
                cx.fields(
                    &label,
                    &tc,
                    &[
                        ("TileConfig", "caller-array".into()),
                        ("MacroTileConfig", "caller-array".into()),
                    ],
                );
                cx.rec(&format!("{label}.tiles"), format!("{:?}", &tiles[..nt]));
                cx.rec(&format!("{label}.macros"), format!("{:?}", &macros[..nm]));
            }
        }
        teardown(cx);
    });
    add(v, "misc/xnack", |cx| {
        let Some(_t) = setup(cx) else { return };
        let mut x = -1i32;
        if kmt!(cx, "get", hsaKmtGetXNACKMode(&mut x), "live out") == 0 {
            cx.rec("get.value", x);
            kmt!(cx, "set-same", hsaKmtSetXNACKMode(x), "no pointers");
            kmt!(
                cx,
                "set-other",
                hsaKmtSetXNACKMode(i32::from(x == 0)),
                "no pointers"
            );
            let mut y = -1i32;
            kmt!(cx, "get-after", hsaKmtGetXNACKMode(&mut y), "live out");
            cx.rec("get-after.value", y);
            kmt!(cx, "restore", hsaKmtSetXNACKMode(x), "no pointers");
        }
        teardown(cx);
    });
    add(v, "misc/memory-policy", |cx| {
        let Some(t) = setup(cx) else { return };
        kmt!(
            cx,
            "default",
            hsaKmtSetMemoryPolicy(t.gpu(), 0, 0, null_mut(), 0),
            "no alternate aperture"
        );
        kmt!(
            cx,
            "noncoherent",
            hsaKmtSetMemoryPolicy(t.gpu(), 1, 1, null_mut(), 0),
            "no alternate aperture"
        );
        kmt!(
            cx,
            "unknown-node",
            hsaKmtSetMemoryPolicy(t.nodes, 0, 0, null_mut(), 0),
            "unknown node"
        );
        let buf = HostBuf::new(0x2000);
        kmt!(
            cx,
            "alternate-unaligned",
            hsaKmtSetMemoryPolicy(t.gpu(), 0, 0, buf.ptr().wrapping_byte_add(8), 0x1000),
            "unaligned alternate aperture"
        );
        teardown(cx);
    });
    add(v, "misc/process-vm", |cx| {
        let Some(_t) = setup(cx) else { return };
        standard_call(cx, "hsaKmtProcessVMRead", 0);
        standard_call(cx, "hsaKmtProcessVMWrite", 0);
        teardown(cx);
    });
    add(v, "misc/pointer-info", |cx| {
        let Some(t) = setup(cx) else { return };
        let buf = HostBuf::new(0x1000);
        pointer_info(cx, "unknown", buf.ptr());
        if let Some(p) = alloc(cx, "alloc", t.gpu(), 0x2000, 0) {
            pointer_info(cx, "vram", p);
            pointer_info(cx, "vram-interior", p.wrapping_byte_add(0x1800));
            let mut pi = A::PointerInfo::default();
            kmt!(
                cx,
                "null-info",
                hsaKmtQueryPointerInfo(p, null_mut()),
                "deliberate NULL"
            );
            kmt!(
                cx,
                "null-pointer",
                hsaKmtQueryPointerInfo(null_mut::<c_void>(), &mut pi),
                "NULL address"
            );
            free(cx, "free", p, 0x2000);
            pointer_info(cx, "after-free", p);
        }
        teardown(cx);
    });
    add(v, "misc/user-data", |cx| {
        let Some(_t) = setup(cx) else { return };
        let tag = HostBuf::new(0x1000);
        cx.note_alloc(tag.ptr() as usize, 0x1000);
        if let Some(p) = alloc(cx, "alloc", 0, 0x1000, mf::HOST_ACCESS) {
            kmt!(
                cx,
                "set",
                hsaKmtSetMemoryUserData(p, tag.ptr()),
                "allocation; user data is a live page"
            );
            pointer_info(cx, "info", p);
            free(cx, "free", p, 0x1000);
        }
        let buf = HostBuf::new(0x1000);
        kmt!(
            cx,
            "set-unknown",
            hsaKmtSetMemoryUserData(buf.ptr(), tag.ptr()),
            "address unknown to the thunk"
        );
        teardown(cx);
    });
}
