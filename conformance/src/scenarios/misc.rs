//! `misc`: tile config, XNACK, memory policy, process VM, pointer info
//! and user data; and the newest library's device descriptor, SIGBUS
//! delay, persisting cache size, ModelEnabled and the Ctx forms on the
//! primary context.

use std::ffi::c_void;
use std::ptr::null_mut;

use hsakmt_sys::common::{HsaClockCounters, HsaGpuTileConfig};

use super::dmabuf::device;
use super::standard::standard_call;
use super::Applies::Since;
use super::{alloc, close, free, pointer_info, require, setup, teardown, Table};
use crate::abi::AbiKind::{Newest, Rocm52};
use crate::abi::{memflag as mf, Abi};
use crate::api::CtxPtr;
use crate::cx::{Cx, HostBuf};
use crate::kmt;

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    t.add(Since(Rocm52), "misc/tile-config", tile_config);
    t.add(Since(Rocm52), "misc/xnack", xnack);
    t.add(Since(Rocm52), "misc/memory-policy", memory_policy);
    t.add(Since(Rocm52), "misc/process-vm", process_vm);
    t.add(Since(Rocm52), "misc/pointer-info", misc_pointer_info);
    t.add(Since(Rocm52), "misc/user-data", user_data);
    t.add(Since(Newest), "misc/amdgpu-device-fd", amdgpu_device_fd);
    t.add(Since(Newest), "misc/sigbus-delay", sigbus_delay);
    t.add(Since(Newest), "misc/persisting-cache-size", persisting_cache_size);
    t.add(Since(Newest), "misc/model-enabled", model_enabled);
    t.add(Since(Newest), "misc/ctx-forms", ctx_forms);
}

fn tile_config<A: Abi>(cx: &mut Cx<A>) {
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
}

fn xnack<A: Abi>(cx: &mut Cx<A>) {
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
}

fn memory_policy<A: Abi>(cx: &mut Cx<A>) {
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
}

fn process_vm<A: Abi>(cx: &mut Cx<A>) {
    let Some(_t) = setup(cx) else { return };
    standard_call(cx, "hsaKmtProcessVMRead", 0);
    standard_call(cx, "hsaKmtProcessVMWrite", 0);
    teardown(cx);
}

fn misc_pointer_info<A: Abi>(cx: &mut Cx<A>) {
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
}

fn user_data<A: Abi>(cx: &mut Cx<A>) {
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
}

fn amdgpu_device_fd<A: Abi>(cx: &mut Cx<A>) {
    if !require(cx, &["hsaKmtGetAmdGPUDeviceFd"]) {
        return;
    }
    let Some(t) = setup(cx) else { return };
    let dev = device(cx, t.gpu());
    let mut fd = -1i32;
    let s = kmt!(
        cx,
        "fd",
        hsaKmtGetAmdGPUDeviceFd(dev, &mut fd),
        "device handle; live out"
    );
    // The context's own render node: a character device (not ours to close).
    // SAFETY: an all-zero stat is valid to be overwritten.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes one stat into `st`.
    let chr = fd >= 0 && unsafe { libc::fstat(fd, &mut st) } == 0;
    cx.check(
        "fd.render-node",
        s == 0 && chr,
        format!("status {s}, fd {fd}"),
    );
    let buf = HostBuf::new(0x1000);
    let s = kmt!(
        cx,
        "fd-unknown",
        hsaKmtGetAmdGPUDeviceFd(buf.ptr(), &mut fd),
        "not a device handle"
    );
    cx.check("fd-unknown.4", s == 4, format!("status {s}"));
    let s = kmt!(
        cx,
        "fd-null",
        hsaKmtGetAmdGPUDeviceFd(dev, null_mut()),
        "deliberate NULL out"
    );
    cx.check("fd-null.3", s == 3, format!("status {s}"));
    teardown(cx);
}

fn sigbus_delay<A: Abi>(cx: &mut Cx<A>) {
    if !require(cx, &["hsaKmtSetSigbusDelay"]) {
        return;
    }
    let Some(t) = setup(cx) else { return };
    for (label, node, delay, want) in [
        ("gpu", t.gpu(), 250, 0),
        ("gpu-never", t.gpu(), u32::MAX, 0),
        ("cpu-node", 0, 250, 11),
        ("unknown-node", t.nodes, 250, 11),
    ] {
        let s = kmt!(cx, label, hsaKmtSetSigbusDelay(node, delay), "no pointers");
        cx.check(&format!("{label}.{want}"), s == want, format!("status {s}"));
    }
    teardown(cx);
}

fn persisting_cache_size<A: Abi>(cx: &mut Cx<A>) {
    if !require(cx, &["hsaKmtSetPersistingCacheSize"]) {
        return;
    }
    let Some(t) = setup(cx) else { return };
    for (label, node, size, want) in [
        ("gpu", t.gpu(), 1 << 20, 11),
        ("too-large", t.gpu(), 1u64 << 33, 3),
        ("cpu-node", 0, 1 << 20, 3),
        ("unknown-node", t.nodes, 1 << 20, 3),
    ] {
        let s = kmt!(
            cx,
            label,
            hsaKmtSetPersistingCacheSize(node, size),
            "no pointers"
        );
        cx.check(&format!("{label}.{want}"), s == want, format!("status {s}"));
    }
    teardown(cx);
}

fn model_enabled<A: Abi>(cx: &mut Cx<A>) {
    if !require(cx, &["hsaKmtModelEnabled"]) {
        return;
    }
    let mut on = true;
    let s = kmt!(cx, "closed", hsaKmtModelEnabled(&mut on), "live out");
    cx.rec("closed.enabled", on);
    let Some(_) = setup(cx) else { return };
    on = true;
    let s2 = kmt!(cx, "open", hsaKmtModelEnabled(&mut on), "live out");
    cx.rec("open.enabled", on);
    cx.check(
        "no-model",
        s == 0 && s2 == 0 && !on,
        format!("status {s}/{s2}"),
    );
    kmt!(
        cx,
        "null",
        hsaKmtModelEnabled(null_mut()),
        "deliberate NULL out"
    );
    teardown(cx);
}

/// The Ctx forms answer on the primary context what the legacy forms do.
fn ctx_forms<A: Abi>(cx: &mut Cx<A>) {
    if !require(
        cx,
        &[
            "hsaKmtOpenKFDCtx",
            "hsaKmtCloseKFDCtx",
            "hsaKmtAvailableMemoryCtx",
            "hsaKmtGetAMDGPUDeviceHandleCtx",
            "hsaKmtGetRuntimeCapabilitiesCtx",
            "hsaKmtGetClockCountersPrecise",
            "hsaKmtGetClockCountersPreciseCtx",
            "hsaKmtSetPersistingCacheSize",
            "hsaKmtSetPersistingCacheSizeCtx",
            "hsaKmtOpenSMICtx",
        ],
    ) {
        return;
    }
    let Some(t) = setup(cx) else { return };
    let mut ctx: CtxPtr = null_mut();
    kmt!(
        cx,
        "open-ctx",
        hsaKmtOpenKFDCtx(&mut ctx),
        "live out-pointer"
    );
    let g = t.gpu();
    let pairs: [(&str, u32, u32); 5] = [
        {
            let (mut a, mut b) = (0u64, 0u64);
            let l = kmt!(
                cx,
                "available",
                hsaKmtAvailableMemory(g, &mut a),
                "live out"
            );
            let c = kmt!(
                cx,
                "available-ctx",
                hsaKmtAvailableMemoryCtx(ctx, g, &mut b),
                "live out"
            );
            ("available", l, c)
        },
        {
            let (mut a, mut b) = (null_mut(), null_mut());
            let l = kmt!(
                cx,
                "device",
                hsaKmtGetAMDGPUDeviceHandle(g, &mut a),
                "live out"
            );
            let c = kmt!(
                cx,
                "device-ctx",
                hsaKmtGetAMDGPUDeviceHandleCtx(ctx, g, &mut b),
                "live out"
            );
            cx.check("device-ctx.same-handle", a == b, "");
            ("device", l, c)
        },
        {
            let (mut a, mut b) = (0u32, 0u32);
            let l = kmt!(cx, "caps", hsaKmtGetRuntimeCapabilities(&mut a), "live out");
            let c = kmt!(
                cx,
                "caps-ctx",
                hsaKmtGetRuntimeCapabilitiesCtx(ctx, &mut b),
                "live out"
            );
            ("caps", l, c)
        },
        {
            let (mut a, mut b) = (HsaClockCounters::default(), HsaClockCounters::default());
            let l = kmt!(
                cx,
                "precise",
                hsaKmtGetClockCountersPrecise(g, &mut a),
                "live out"
            );
            let c = kmt!(
                cx,
                "precise-ctx",
                hsaKmtGetClockCountersPreciseCtx(ctx, g, &mut b),
                "live out"
            );
            ("precise", l, c)
        },
        {
            let l = kmt!(
                cx,
                "persisting",
                hsaKmtSetPersistingCacheSize(g, 1 << 20),
                "no pointers"
            );
            let c = kmt!(
                cx,
                "persisting-ctx",
                hsaKmtSetPersistingCacheSizeCtx(ctx, g, 1 << 20),
                "no pointers"
            );
            ("persisting", l, c)
        },
    ];
    for (name, l, c) in pairs {
        cx.check(
            &format!("{name}.ctx-equals-legacy"),
            l == c,
            format!("{l} vs {c}"),
        );
    }
    let (mut fd1, mut fd2) = (-1i32, -1i32);
    let l = kmt!(cx, "smi", hsaKmtOpenSMI(g, &mut fd1), "live out");
    let c = kmt!(
        cx,
        "smi-ctx",
        hsaKmtOpenSMICtx(ctx, g, &mut fd2),
        "live out"
    );
    cx.check("smi.ctx-equals-legacy", l == c, format!("{l} vs {c}"));
    close(fd1);
    close(fd2);
    kmt!(cx, "close-ctx", hsaKmtCloseKFDCtx(), "opened above");
    teardown(cx);
}
