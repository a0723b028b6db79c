//! `debug`: runtime enable, the v1 debugger, the trap version (5.2.3);
//! and (6.2.4 and newest) runtime-debug support, runtime capabilities,
//! the debugger's enable/disable, device and queue snapshots, and the raw
//! `hsaKmtDebugTrapIoctl`. The family runs each scenario in a fresh
//! child: the kernel's debug state (runtime enabled, debugger attached)
//! must not leak from one scenario into the next.

use std::ffi::c_void;
use std::ptr::null_mut;

use hsakmt_sys::common::{HsaDbgWaveMessage, HSA_DBG_WATCH_MODE};
use kfd_sys::kfd::{
    kfd_dbg_device_info_entry, kfd_ioctl_dbg_trap_args, kfd_ioctl_dbg_trap_args_union,
    kfd_ioctl_dbg_trap_enable_args, kfd_ioctl_dbg_trap_resume_queues_args,
    kfd_ioctl_dbg_trap_set_flags_args, kfd_ioctl_dbg_trap_set_wave_launch_mode_args,
    kfd_queue_snapshot_entry, kfd_runtime_info, KFD_IOC_DBG_TRAP_DISABLE, KFD_IOC_DBG_TRAP_ENABLE,
    KFD_IOC_DBG_TRAP_RESUME_QUEUES, KFD_IOC_DBG_TRAP_SET_FLAGS,
    KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE,
};

use super::Applies::{Only, Since};
use super::{queues, setup, teardown, Table};
use crate::abi::Abi;
use crate::abi::AbiKind::{Rocm52, Rocm62};
use crate::cx::{Cx, HostBuf};
use crate::kmt;

/// Frees memory a library handed out with `malloc` (debugger snapshots).
///
/// # Safety
///
/// `p` is NULL or a `malloc` pointer the library gave to the caller.
pub(crate) unsafe fn free_c(p: *mut c_void) {
    // SAFETY: caller contract; free(NULL) is a no-op.
    unsafe { libc::free(p) };
}

/// `AMDKFD_IOC_DBG_TRAP` arguments for `op` on this process.
pub(crate) fn trap_args(op: u32) -> kfd_ioctl_dbg_trap_args {
    kfd_ioctl_dbg_trap_args {
        pid: std::process::id(),
        op,
        ..Default::default()
    }
}

/// Records the runtime info a library handed out (`r_debug` by relation
/// to the r_debug stand-in the scenario passed, if any).
fn runtime_info<A: Abi>(cx: &mut Cx<A>, label: &str, info: &kfd_runtime_info, rdebug: usize) {
    let r = if info.r_debug == 0 {
        "0"
    } else if info.r_debug as usize == rdebug {
        "=rdebug"
    } else {
        "other"
    };
    cx.fields(label, info, &[("r_debug", r.into())]);
}

/// `hsaKmtDbgEnable`; on success records and frees the runtime info.
fn dbg_enable<A: Abi>(cx: &mut Cx<A>, label: &str, rdebug: usize) -> u32 {
    let mut info: *mut c_void = null_mut();
    let mut size = 0u32;
    let s = kmt!(
        cx,
        label,
        hsaKmtDbgEnable(&mut info, &mut size),
        "live out-pointer and word"
    );
    cx.rec(&format!("{label}.size"), size);
    if s == 0 && !info.is_null() {
        if size as usize >= std::mem::size_of::<kfd_runtime_info>() {
            // SAFETY: a successful DbgEnable hands out a malloc'ed record
            // of `size` bytes, at least a kfd_runtime_info (checked).
            let ri = unsafe { info.cast::<kfd_runtime_info>().read_unaligned() };
            runtime_info(cx, label, &ri, rdebug);
        }
        // SAFETY: as above; freed once.
        unsafe { free_c(info) };
    }
    s
}

/// `hsaKmtDbgGetDeviceData`; records the counts and the first entry.
fn device_data<A: Abi>(cx: &mut Cx<A>, label: &str) {
    let mut data: *mut c_void = null_mut();
    let (mut n, mut size) = (0u32, 0u32);
    let s = kmt!(
        cx,
        label,
        hsaKmtDbgGetDeviceData(&mut data, &mut n, &mut size),
        "live outs"
    );
    cx.rec(&format!("{label}.n_entries"), n);
    cx.rec(&format!("{label}.entry_size"), size);
    if s == 0 && !data.is_null() {
        let want = std::mem::size_of::<kfd_dbg_device_info_entry>();
        if n > 0 && size as usize >= want {
            // SAFETY: a successful call hands out `n` entries of `size`
            // bytes; the first is read, `want <= size` bytes of it.
            let e = unsafe { data.cast::<kfd_dbg_device_info_entry>().read_unaligned() };
            cx.fields(&format!("{label}.entry0"), &e, &[]);
        }
        // SAFETY: the snapshot is malloc'ed by the library; freed once.
        unsafe { free_c(data) };
    }
}

/// `hsaKmtDbgGetQueueData`; records the counts and each entry's fields
/// (addresses the library chose by relation only). Returns the status
/// and the kernel queue ids.
fn queue_data<A: Abi>(cx: &mut Cx<A>, label: &str, suspend: bool, ring: usize) -> Vec<u32> {
    let mut data: *mut c_void = null_mut();
    let (mut n, mut size) = (0u32, 0u32);
    let s = kmt!(
        cx,
        label,
        hsaKmtDbgGetQueueData(&mut data, &mut n, &mut size, suspend),
        "live outs"
    );
    cx.rec(&format!("{label}.n_entries"), n);
    cx.rec(&format!("{label}.entry_size"), size);
    let mut ids = Vec::new();
    if s == 0 && !data.is_null() {
        let stride = size as usize;
        if stride >= std::mem::size_of::<kfd_queue_snapshot_entry>() {
            for i in 0..n.min(16) as usize {
                // SAFETY: a successful call hands out `n` entries of `size`
                // bytes each; entry i is read within the buffer.
                let e = unsafe {
                    data.cast::<u8>()
                        .add(i * stride)
                        .cast::<kfd_queue_snapshot_entry>()
                        .read_unaligned()
                };
                ids.push(e.queue_id);
                let nz = |v: u64| if v != 0 { "nonnull" } else { "null" }.to_string();
                let ring_rel = if e.ring_base_address as usize == ring {
                    "=ring".to_string()
                } else {
                    nz(e.ring_base_address)
                };
                cx.fields(
                    &format!("{label}.entry{i}"),
                    &e,
                    &[
                        ("ring_base_address", ring_rel),
                        ("write_pointer_address", nz(e.write_pointer_address)),
                        ("read_pointer_address", nz(e.read_pointer_address)),
                        ("ctx_save_restore_address", nz(e.ctx_save_restore_address)),
                    ],
                );
            }
        }
        // SAFETY: the snapshot is malloc'ed by the library; freed once.
        unsafe { free_c(data) };
    }
    ids
}

/// `hsaKmtDebugTrapIoctl` with `args`, recording the status and
/// `*DebugReturn` (the ioctl's return value).
fn trap<A: Abi>(
    cx: &mut Cx<A>,
    label: &str,
    args: &mut kfd_ioctl_dbg_trap_args,
    queues: *mut u64,
) -> u32 {
    let mut ret = 0x5A5A_5A5Au64;
    let s = kmt!(
        cx,
        label,
        hsaKmtDebugTrapIoctl(args, queues, &mut ret),
        "live arguments whose buffers (if any) are live; queue ids from CreateQueue"
    );
    cx.rec(&format!("{label}.return"), ret as i64);
    s
}

/// `hsaKmtRuntimeEnable` with a live page as the r_debug stand-in;
/// returns the page (keep it while enabled) and the status.
fn runtime_enable<A: Abi>(cx: &mut Cx<A>) -> (HostBuf, u32) {
    let rdebug = HostBuf::new(0x1000);
    let s = kmt!(
        cx,
        "runtime-enable",
        hsaKmtRuntimeEnable(rdebug.ptr(), true),
        "r_debug stand-in: a live page"
    );
    (rdebug, s)
}

fn enable_args(rinfo: &mut kfd_runtime_info, dbg_fd: i32) -> kfd_ioctl_dbg_trap_args {
    kfd_ioctl_dbg_trap_args {
        u: kfd_ioctl_dbg_trap_args_union {
            enable: kfd_ioctl_dbg_trap_enable_args {
                exception_mask: 0,
                rinfo_ptr: rinfo as *mut kfd_runtime_info as u64,
                rinfo_size: std::mem::size_of::<kfd_runtime_info>() as u32,
                dbg_fd: dbg_fd as u32,
            },
        },
        ..trap_args(KFD_IOC_DBG_TRAP_ENABLE)
    }
}

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    t.add(Since(Rocm52), "debug/runtime-enable", debug_runtime_enable);
    t.add(Only(Rocm52), "debug/trap-version", trap_version);
    t.add(Since(Rocm52), "debug/v1-debugger", v1_debugger);
    t.add(Since(Rocm62), "debug/check-support", check_support);
    t.add(Since(Rocm62), "debug/check-support-acquires", check_support_acquires);
    t.add(Since(Rocm62), "debug/runtime-capabilities", runtime_capabilities);
    t.add(Since(Rocm62), "debug/runtime-capabilities-null", runtime_capabilities_null);
    t.add(Since(Rocm62), "debug/dbg-enable", debug_dbg_enable);
    t.add(Since(Rocm62), "debug/dbg-enable-runtime", dbg_enable_runtime);
    t.add(Since(Rocm62), "debug/dbg-before-acquire", dbg_before_acquire);
    t.add(Since(Rocm62), "debug/device-data", debug_device_data);
    t.add(Since(Rocm62), "debug/queue-data", debug_queue_data);
    t.add(Since(Rocm62), "debug/trap-ioctl", trap_ioctl);
    t.add(Since(Rocm62), "debug/trap-ioctl-null", trap_ioctl_null);
    t.add(Since(Rocm62), "debug/dbg-enable-null", dbg_enable_null);
}

fn debug_runtime_enable<A: Abi>(cx: &mut Cx<A>) {
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
}

fn trap_version<A: Abi>(cx: &mut Cx<A>) {
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
}

fn v1_debugger<A: Abi>(cx: &mut Cx<A>) {
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
}

fn check_support<A: Abi>(cx: &mut Cx<A>) {
    kmt!(
        cx,
        "before-open",
        hsaKmtCheckRuntimeDebugSupport(),
        "no arguments"
    );
    let Some(_t) = setup(cx) else { return };
    kmt!(
        cx,
        "check",
        hsaKmtCheckRuntimeDebugSupport(),
        "no arguments"
    );
    kmt!(
        cx,
        "check-again",
        hsaKmtCheckRuntimeDebugSupport(),
        "no arguments"
    );
    teardown(cx);
    kmt!(
        cx,
        "after-close",
        hsaKmtCheckRuntimeDebugSupport(),
        "no arguments"
    );
}

fn check_support_acquires<A: Abi>(cx: &mut Cx<A>) {
    // Open only: the check acquires the system properties itself.
    if kmt!(cx, "open", hsaKmtOpenKFD(), "no arguments") != 0 {
        return;
    }
    kmt!(
        cx,
        "check",
        hsaKmtCheckRuntimeDebugSupport(),
        "no arguments"
    );
    let mut np = A::NodeProperties::default();
    kmt!(
        cx,
        "node0-after-check",
        hsaKmtGetNodeProperties(0, &mut np),
        "live NodeProperties of this generation"
    );
    teardown(cx);
}

fn runtime_capabilities<A: Abi>(cx: &mut Cx<A>) {
    let mut caps = 0xFFFF_FFFFu32;
    let mut get = |cx: &mut Cx<A>, label: &str| {
        caps = 0xFFFF_FFFF;
        kmt!(
            cx,
            label,
            hsaKmtGetRuntimeCapabilities(&mut caps),
            "live out word"
        );
        cx.rec(&format!("{label}.mask"), format!("{caps:#x}"));
    };
    get(cx, "before-open");
    let Some(_t) = setup(cx) else { return };
    get(cx, "open");
    let (_rdebug, s) = runtime_enable(cx);
    get(cx, "enabled");
    if s == 0 {
        kmt!(cx, "runtime-disable", hsaKmtRuntimeDisable(), "none");
    }
    get(cx, "disabled");
    teardown(cx);
    get(cx, "after-close");
}

fn runtime_capabilities_null<A: Abi>(cx: &mut Cx<A>) {
    let Some(_t) = setup(cx) else { return };
    kmt!(
        cx,
        "null",
        hsaKmtGetRuntimeCapabilities(null_mut()),
        "deliberate NULL"
    );
    teardown(cx);
}

fn debug_dbg_enable<A: Abi>(cx: &mut Cx<A>) {
    let Some(_t) = setup(cx) else { return };
    let s = dbg_enable(cx, "enable", 0);
    dbg_enable(cx, "enable-again", 0);
    if s == 0 {
        kmt!(cx, "disable", hsaKmtDbgDisable(), "none");
    }
    kmt!(cx, "disable-again", hsaKmtDbgDisable(), "none");
    teardown(cx);
}

fn dbg_enable_runtime<A: Abi>(cx: &mut Cx<A>) {
    let Some(_t) = setup(cx) else { return };
    let (rdebug, r) = runtime_enable(cx);
    let s = dbg_enable(cx, "enable", rdebug.ptr() as usize);
    if s == 0 {
        kmt!(cx, "disable", hsaKmtDbgDisable(), "none");
    }
    if r == 0 {
        kmt!(cx, "runtime-disable", hsaKmtRuntimeDisable(), "none");
    }
    teardown(cx);
}

fn dbg_before_acquire<A: Abi>(cx: &mut Cx<A>) {
    // The debugger requests name no node: they work right after the
    // open, before any AcquireSystemProperties.
    if kmt!(cx, "open", hsaKmtOpenKFD(), "no arguments") != 0 {
        return;
    }
    let s = dbg_enable(cx, "enable", 0);
    device_data(cx, "device-data");
    queue_data(cx, "queue-data", false, 0);
    if s == 0 {
        kmt!(cx, "disable", hsaKmtDbgDisable(), "none");
    }
    kmt!(cx, "close", hsaKmtCloseKFD(), "no arguments");
}

fn debug_device_data<A: Abi>(cx: &mut Cx<A>) {
    let Some(_t) = setup(cx) else { return };
    device_data(cx, "not-enabled");
    let s = dbg_enable(cx, "enable", 0);
    device_data(cx, "enabled");
    if s == 0 {
        kmt!(cx, "disable", hsaKmtDbgDisable(), "none");
    }
    teardown(cx);
}

fn debug_queue_data<A: Abi>(cx: &mut Cx<A>) {
    queues::with_ring(cx, |cx, t, r| {
        let ring = r.ring as usize;
        queue_data(cx, "not-enabled", false, ring);
        let (rdebug, re) = runtime_enable(cx);
        let de = dbg_enable(cx, "enable", rdebug.ptr() as usize);
        queue_data(cx, "no-queues", false, ring);
        queue_data(cx, "no-queues-suspend", true, ring);
        if let Some((id, _)) = queues::create(cx, "create", t.gpu(), queues::COMPUTE, r, 0) {
            queue_data(cx, "one-queue", false, ring);
            let ids = queue_data(cx, "suspend", true, ring);
            // Resume it through the raw interface, converting our
            // queue id as the library does.
            let mut kernel_ids = vec![0u32; 1];
            let mut qids = [id];
            let mut a = kfd_ioctl_dbg_trap_args {
                u: kfd_ioctl_dbg_trap_args_union {
                    resume_queues: kfd_ioctl_dbg_trap_resume_queues_args {
                        queue_array_ptr: kernel_ids.as_mut_ptr() as u64,
                        num_queues: 1,
                        pad: 0,
                    },
                },
                ..trap_args(KFD_IOC_DBG_TRAP_RESUME_QUEUES)
            };
            trap(cx, "resume", &mut a, qids.as_mut_ptr());
            cx.rec(
                "resume.kernel-id-matches-snapshot",
                ids.first() == Some(&(kernel_ids[0] & 0x3fff_ffff)),
            );
            queues::destroy(cx, "destroy", id);
        }
        if de == 0 {
            kmt!(cx, "disable", hsaKmtDbgDisable(), "none");
        }
        if re == 0 {
            kmt!(cx, "runtime-disable", hsaKmtRuntimeDisable(), "none");
        }
    });
}

fn trap_ioctl<A: Abi>(cx: &mut Cx<A>) {
    let Some(_t) = setup(cx) else { return };
    let (rdebug, re) = runtime_enable(cx);
    // The notification descriptor the kernel keeps: a pipe's write end.
    let mut pipe = [-1i32; 2];
    // SAFETY: pipe(2) into a live two-element array.
    let piped = unsafe { libc::pipe(pipe.as_mut_ptr()) } == 0;
    let mut rinfo = kfd_runtime_info::default();
    let mut a = enable_args(&mut rinfo, pipe[1]);
    let en = trap(cx, "enable", &mut a, null_mut());
    runtime_info(cx, "enable.info", &rinfo, rdebug.ptr() as usize);
    // SAFETY: a union of plain integer members; ENABLE's is read.
    let rinfo_size = unsafe { a.u.enable }.rinfo_size;
    cx.rec("enable.rinfo_size", rinfo_size);
    trap(
        cx,
        "enable-again",
        &mut enable_args(&mut rinfo, pipe[1]),
        null_mut(),
    );
    let mut f = kfd_ioctl_dbg_trap_args {
        u: kfd_ioctl_dbg_trap_args_union {
            set_flags: kfd_ioctl_dbg_trap_set_flags_args { flags: 0, pad: 0 },
        },
        ..trap_args(KFD_IOC_DBG_TRAP_SET_FLAGS)
    };
    trap(cx, "set-flags", &mut f, null_mut());
    // SAFETY: a union of plain integer members; SET_FLAGS's is read.
    let previous = unsafe { f.u.set_flags }.flags;
    cx.rec("set-flags.previous", previous);
    let mut m = kfd_ioctl_dbg_trap_args {
        u: kfd_ioctl_dbg_trap_args_union {
            launch_mode: kfd_ioctl_dbg_trap_set_wave_launch_mode_args {
                launch_mode: 99,
                pad: 0,
            },
        },
        ..trap_args(KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE)
    };
    trap(cx, "launch-mode-bad", &mut m, null_mut());
    let mut other = trap_args(KFD_IOC_DBG_TRAP_DISABLE);
    other.pid = 0x7fff_fff0;
    trap(cx, "unknown-pid", &mut other, null_mut());
    let mut bad = trap_args(99);
    trap(cx, "unknown-op", &mut bad, null_mut());
    let mut ret_null = trap_args(KFD_IOC_DBG_TRAP_SET_FLAGS);
    kmt!(
        cx,
        "null-return",
        hsaKmtDebugTrapIoctl(&mut ret_null, null_mut(), null_mut()),
        "live arguments; DebugReturn may be NULL"
    );
    if en == 0 {
        trap(
            cx,
            "disable",
            &mut trap_args(KFD_IOC_DBG_TRAP_DISABLE),
            null_mut(),
        );
    }
    if piped {
        for fd in pipe {
            // SAFETY: both ends were opened above; closed once each.
            unsafe { libc::close(fd) };
        }
    }
    if re == 0 {
        kmt!(cx, "runtime-disable", hsaKmtRuntimeDisable(), "none");
    }
    teardown(cx);
}

fn trap_ioctl_null<A: Abi>(cx: &mut Cx<A>) {
    let Some(_t) = setup(cx) else { return };
    let mut ret = 0u64;
    kmt!(
        cx,
        "null-args",
        hsaKmtDebugTrapIoctl(null_mut(), null_mut(), &mut ret),
        "deliberate NULL arguments"
    );
    teardown(cx);
}

fn dbg_enable_null<A: Abi>(cx: &mut Cx<A>) {
    let Some(_t) = setup(cx) else { return };
    let mut info: *mut c_void = null_mut();
    let s = kmt!(
        cx,
        "null-size",
        hsaKmtDbgEnable(&mut info, null_mut()),
        "deliberate NULL size"
    );
    if s == 0 {
        // SAFETY: a successful DbgEnable hands out a malloc'ed record.
        unsafe { free_c(info) };
        kmt!(cx, "disable", hsaKmtDbgDisable(), "none");
    }
    teardown(cx);
}
