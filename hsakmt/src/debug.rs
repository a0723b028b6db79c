//! Debugger: runtime enable, the debug-trap interface, the v1 debugger.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use hsakmt_sys::common::{HsaDbgWaveMessage, HSA_DBG_WATCH_MODE, HSA_DBG_WAVEMODE, HSA_DBG_WAVEOP};
use kfd_context::Context;
use kfd_debug::AddressWatchPoint;
use kfd_sys::kfd::{
    self, kfd_dbg_device_info_entry, kfd_ioctl_dbg_trap_args, kfd_queue_snapshot_entry,
    kfd_runtime_info,
};

use crate::border::{check_mut, read_in, slice_in, st, write_out, Kmt, KmtResult, ToStatus};
use crate::ctx::{self, HsaKFDContext};
use crate::generation::{self, abi};

/// Copies `items` into a `malloc`ed buffer the C caller frees with
/// `free()`, as the C library hands out its debugger snapshots.
fn malloc_copy<T: Copy>(items: &[T]) -> KmtResult<*mut c_void> {
    let bytes = std::mem::size_of_val(items).max(1);
    // SAFETY: plain allocation of `bytes` bytes; checked for NULL.
    let p = unsafe { libc::malloc(bytes) };
    if p.is_null() {
        return Err(st::NO_MEMORY);
    }
    // SAFETY: `p` holds `bytes >= size_of_val(items)` bytes and does not
    // overlap `items`; malloc memory is aligned for any plain type.
    unsafe {
        std::ptr::copy_nonoverlapping(
            items.as_ptr() as *const u8,
            p as *mut u8,
            std::mem::size_of_val(items),
        )
    };
    Ok(p)
}

/// The C library's runtime capabilities (debug.c's static
/// `runtime_capabilities_mask`): set by each successful runtime enable of
/// the primary context and never reset, so `hsaKmtGetRuntimeCapabilities`
/// returns it with no check at all, before the first open and after the
/// last close too.
static RUNTIME_CAPABILITIES: AtomicU32 = AtomicU32::new(0);

/// `hsaKmtCheckRuntimeDebugSupport` as the C library does it, which is
/// also the first step of runtime enable and disable: acquire the system
/// properties (this takes the snapshot and sets up the memory manager if
/// none is held, and stays), any failure of that, KFD closed included,
/// being ERROR; then the firmware and KFD-version checks (11). A
/// secondary context is refused (11) before anything.
fn check_runtime_debug_support(ctx: *mut HsaKFDContext) -> KmtResult<ctx::CtxRef> {
    if ctx != ctx::primary_ptr() {
        let c = ctx::resolve(ctx)?;
        c.debug().kmt()?.check_runtime_debug_support().kmt()?;
        return Ok(c);
    }
    let c = ctx::resolve(ctx).map_err(|_| st::ERROR)?;
    crate::topology::acquire(&c).map_err(|_| st::ERROR)?;
    c.debug().kmt()?.check_runtime_debug_support().kmt()?;
    Ok(c)
}

/// The debugger calls' prologue after the open check: KFD 1.13 or newer
/// (`CHECK_KFD_MINOR_VERSION`, 11), then the debug sub-context.
fn debugger(c: &Context) -> KmtResult<Arc<kfd_debug::Debug>> {
    c.require_minor(kfd_debug::KFD_MINOR_MIN_DEBUG).kmt()?;
    c.debug().kmt()
}

/// The `(num_queues, queue_array_ptr)` of a suspend or resume request;
/// `None` for every other operation.
fn queue_array(a: &kfd_ioctl_dbg_trap_args) -> Option<(u32, u64)> {
    match a.op {
        // SAFETY: a union of plain integer members; the operation's is read.
        kfd::KFD_IOC_DBG_TRAP_SUSPEND_QUEUES => Some(unsafe {
            (
                a.u.suspend_queues.num_queues,
                a.u.suspend_queues.queue_array_ptr,
            )
        }),
        // SAFETY: as above.
        kfd::KFD_IOC_DBG_TRAP_RESUME_QUEUES => Some(unsafe {
            (
                a.u.resume_queues.num_queues,
                a.u.resume_queues.queue_array_ptr,
            )
        }),
        _ => None,
    }
}

/// Converts the caller's HSA queue ids into the kernel's, into the
/// array a suspend or resume request names (the C library's
/// `convert_queue_ids` and its `memcpy`). Another operation → 3: the C
/// library reads the resume member of its arguments and copies ids
/// wherever that points.
///
/// # Safety
///
/// `queues` must hold as many ids as the request names, and the
/// request's `queue_array_ptr` (checked non-NULL and aligned) room for
/// as many `u32`s.
unsafe fn store_kernel_queue_ids(
    c: &Context,
    a: &kfd_ioctl_dbg_trap_args,
    queues: *const u64,
) -> KmtResult {
    let (n, ptr) = queue_array(a).ok_or(st::INVALID_PARAMETER)?;
    // SAFETY: forwarded contract: `queues` holds `n` ids.
    let ids = unsafe { slice_in(queues, n as usize, u32::MAX as usize, st::INVALID_PARAMETER) }?;
    let q = c.queues().kmt()?;
    let kernel: Vec<u32> = ids
        .iter()
        .map(|&id| {
            q.lookup(id)
                .map(|q| q.kfd_queue_id())
                .map_err(|_| st::INVALID_PARAMETER)
        })
        .collect::<KmtResult<_>>()?;
    // SAFETY: forwarded contract: the request's array holds `n` u32s.
    unsafe { crate::border::write_array(ptr as *mut u32, &kernel, st::INVALID_PARAMETER) }
}

export! {
    /// `hsaKmtRuntimeEnableCtx`: the checks of
    /// [`hsaKmtCheckRuntimeDebugSupportCtx`] first (KFD closed → 1, as
    /// the C library's inner acquire fails), then
    /// RUNTIME_ENABLE: EBUSY → 12, any other failure → 1. The 5.2 build
    /// follows 5.2.3, which checks the 5.2-era debug-trap interface
    /// version first (11 without it, also when KFD is not open).
    ctx fn hsaKmtRuntimeEnableCtx(ctx: *mut HsaKFDContext, rDebug: *mut c_void, setupTtmp: bool) {
        if generation::PROFILE.border.legacy_runtime_enable {
            let c = ctx::resolve(ctx).map_err(|_| st::NOT_SUPPORTED)?;
            let d = c.debug().map_err(|_| st::NOT_SUPPORTED)?;
            d.kernel_debug_trap_version().map_err(|_| st::NOT_SUPPORTED)?;
            // The 5.2-era runtime-enable request is not implemented.
            return Err(st::NOT_SUPPORTED);
        }
        let c = check_runtime_debug_support(ctx)?;
        let caps = c.debug().kmt()?.runtime_enable(rDebug as u64, setupTtmp).kmt()?;
        if c.is_primary() {
            RUNTIME_CAPABILITIES.store(caps.0, Ordering::Relaxed);
        }
        Ok(())
    }

    /// `hsaKmtRuntimeDisableCtx`: as [`hsaKmtRuntimeEnableCtx`]; the
    /// capabilities stay.
    ctx fn hsaKmtRuntimeDisableCtx(ctx: *mut HsaKFDContext) {
        if generation::PROFILE.border.legacy_runtime_enable {
            let c = ctx::resolve(ctx).map_err(|_| st::NOT_SUPPORTED)?;
            let d = c.debug().map_err(|_| st::NOT_SUPPORTED)?;
            d.kernel_debug_trap_version().map_err(|_| st::NOT_SUPPORTED)?;
            return Err(st::NOT_SUPPORTED);
        }
        let c = check_runtime_debug_support(ctx)?;
        c.debug().kmt()?.runtime_disable().kmt()
    }

    /// `hsaKmtGetRuntimeCapabilitiesCtx`: the primary's capabilities of
    /// its last runtime enable (0 before one), with no check at all, as C
    /// (which writes through NULL; ours: 3). A secondary context → 11.
    ctx fn hsaKmtGetRuntimeCapabilitiesCtx(ctx: *mut HsaKFDContext, caps_mask: *mut u32) {
        let caps = if ctx == ctx::primary_ptr() {
            RUNTIME_CAPABILITIES.load(Ordering::Relaxed)
        } else {
            let c = ctx::resolve(ctx)?;
            c.debug().kmt()?.runtime_capabilities().kmt()?.0
        };
        // SAFETY: an OUT argument; checked by `write_out`.
        unsafe { write_out(caps_mask, caps, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtDbgEnableCtx`: 20; KFD < 1.13 → 11; attaches as debugger
    /// (no exceptions reported, the context's KFD descriptor notified).
    /// `*data_size` is set to the record size first, as C; `*runtime_info`
    /// is a `malloc`ed `struct kfd_runtime_info` the caller frees. NULL
    /// outputs → 3 (C writes through them).
    ctx fn hsaKmtDbgEnableCtx(ctx: *mut HsaKFDContext, runtime_info: *mut *mut c_void, data_size: *mut u32) {
        let c = ctx::resolve(ctx)?;
        let d = debugger(&c)?;
        check_mut(runtime_info, st::INVALID_PARAMETER)?;
        // SAFETY: OUT arguments; checked by `write_out`.
        unsafe { write_out(data_size, std::mem::size_of::<kfd_runtime_info>() as u32, st::INVALID_PARAMETER)? };
        let info: kfd_runtime_info = d.enable(0).kmt()?;
        let p = malloc_copy(std::slice::from_ref(&info))?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(runtime_info, p, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtDbgDisableCtx`: 20; KFD < 1.13 → 11; refused → 1.
    ctx fn hsaKmtDbgDisableCtx(ctx: *mut HsaKFDContext) {
        let c = ctx::resolve(ctx)?;
        debugger(&c)?.disable().kmt()
    }

    /// `hsaKmtDbgGetDeviceDataCtx`: 20; KFD < 1.13 → 11; a `malloc`ed
    /// device snapshot. As C, `*n_entries` and `*entry_size` are set to
    /// `UINT32_MAX` and the entry size before the request; unlike C
    /// (which allocates `120 * UINT32_MAX` bytes, computed in 32 bits, and
    /// offers the kernel that many entries) the buffer has room for the
    /// context's GPUs and grows if the kernel has more.
    ctx fn hsaKmtDbgGetDeviceDataCtx(ctx: *mut HsaKFDContext, data: *mut *mut c_void, n_entries: *mut u32, entry_size: *mut u32) {
        let c = ctx::resolve(ctx)?;
        let d = debugger(&c)?;
        check_mut(data, st::INVALID_PARAMETER)?;
        check_mut(n_entries, st::INVALID_PARAMETER)?;
        // SAFETY: OUT arguments; checked by `write_out`.
        unsafe {
            write_out(n_entries, u32::MAX, st::INVALID_PARAMETER)?;
            write_out(entry_size, std::mem::size_of::<kfd_dbg_device_info_entry>() as u32, st::INVALID_PARAMETER)?;
        }
        let v = d.get_device_data().kmt()?;
        let p = malloc_copy(&v)?;
        // SAFETY: checked above; OUT arguments.
        unsafe {
            write_out(n_entries, v.len() as u32, st::INVALID_PARAMETER)?;
            write_out(data, p, st::INVALID_PARAMETER)
        }
    }

    /// `hsaKmtDbgGetQueueDataCtx`: 20; KFD < 1.13 → 11; a `malloc`ed
    /// queue snapshot (see `kfd_debug::Debug::get_queue_data`: unlike C,
    /// which returns 1 unless it suspended queues, the snapshot is also
    /// returned without `suspend_queues` or without queues). `*entry_size`
    /// and `*n_entries` are set first, as C.
    ctx fn hsaKmtDbgGetQueueDataCtx(ctx: *mut HsaKFDContext, data: *mut *mut c_void, n_entries: *mut u32, entry_size: *mut u32, suspend_queues: bool) {
        let c = ctx::resolve(ctx)?;
        let d = debugger(&c)?;
        check_mut(data, st::INVALID_PARAMETER)?;
        check_mut(n_entries, st::INVALID_PARAMETER)?;
        // SAFETY: OUT arguments; checked by `write_out`.
        unsafe {
            write_out(entry_size, std::mem::size_of::<kfd_queue_snapshot_entry>() as u32, st::INVALID_PARAMETER)?;
            write_out(n_entries, 0, st::INVALID_PARAMETER)?;
        }
        let v = d.get_queue_data(suspend_queues).kmt()?;
        let p = malloc_copy(&v)?;
        // SAFETY: checked above; OUT arguments.
        unsafe {
            write_out(n_entries, v.len() as u32, st::INVALID_PARAMETER)?;
            write_out(data, p, st::INVALID_PARAMETER)
        }
    }

    /// `hsaKmtCheckRuntimeDebugSupportCtx`, as the C library does it: a
    /// secondary context → 11; otherwise acquire the system properties
    /// (this takes the snapshot and sets up the memory manager if none is
    /// held, and both stay), any failure of that, KFD closed included,
    /// being ERROR (1); then the firmware check of every GPU node and KFD
    /// 1.13 or newer (11).
    ctx fn hsaKmtCheckRuntimeDebugSupportCtx(ctx: *mut HsaKFDContext) {
        check_runtime_debug_support(ctx).map(drop)
    }

    /// `hsaKmtDebugTrapIoctlCtx`: the caller's `AMDKFD_IOC_DBG_TRAP`
    /// arguments passed to the kernel as they are (the kernel's answer
    /// lands in `*args`). 20; NULL `args` → 3 (C dereferences it); a
    /// secondary context → 11. With `Queues`, a suspend or resume
    /// request's queue-id array first receives the kernel ids of those
    /// HSA queue ids (unknown ids, or `Queues` with another operation → 3;
    /// C follows the pointers). `*DebugReturn` (optional) receives the
    /// ioctl's return value (-1 on failure). Suspend/resume succeed with a
    /// count of 0..=num_queues, everything else with 0; otherwise 1.
    ctx fn hsaKmtDebugTrapIoctlCtx(ctx: *mut HsaKFDContext, args: *mut kfd_ioctl_dbg_trap_args, Queues: *mut u64, DebugReturn: *mut u64) {
        let c = ctx::resolve(ctx)?;
        // SAFETY: an IN/OUT argument; checked by `read_in`.
        let mut a = unsafe { read_in(args as *const kfd_ioctl_dbg_trap_args, st::INVALID_PARAMETER) }?;
        if !DebugReturn.is_null() {
            check_mut(DebugReturn, st::INVALID_PARAMETER)?;
        }
        if !c.is_primary() {
            return Err(kfd_debug::Error::SecondaryContext.to_status());
        }
        if !Queues.is_null() {
            // SAFETY: the API's contract for `Queues` and the request's
            // queue-id array.
            unsafe { store_kernel_queue_ids(&c, &a, Queues) }?;
        }
        let queue_count = queue_array(&a).map(|(n, _)| n as usize);
        // SAFETY: the caller's request, as the C library passes it on:
        // the API's contract is that every address in it is valid for
        // what the kernel does with it for `op` (kfd_sys::dbg_trap's
        // table); `a` is a copy of `*args`, answered back below.
        let answer = unsafe { c.kfd().ioctl(kfd::AMDKFD_IOC_DBG_TRAP, &mut a) };
        // SAFETY: checked above; IN/OUT and OUT arguments.
        unsafe {
            args.write(a);
            if !DebugReturn.is_null() {
                write_out(DebugReturn, answer.map_or(-1i64, i64::from) as u64, st::INVALID_PARAMETER)?;
            }
        }
        kfd_debug::debug_trap_outcome(queue_count, answer).kmt().map(drop)
    }

    /// `hsaKmtGetCoreRuntimeInfo`: the primary context's runtime info.
    newest fn hsaKmtGetCoreRuntimeInfo(runtime_info: *mut kfd_runtime_info) {
        let c = ctx::primary()?;
        let info = c.debug().kmt()?.core_runtime_info().kmt()?;
        // SAFETY: an OUT argument; checked by `write_out`.
        unsafe { write_out(runtime_info, info, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtGetCoreDeviceInfo`: the device snapshot entry of `gpu_id`
    /// (unknown → 3).
    newest fn hsaKmtGetCoreDeviceInfo(gpu_id: u32, device_info: *mut kfd_dbg_device_info_entry) {
        let c = ctx::primary()?;
        check_mut(device_info, st::INVALID_PARAMETER)?;
        let v = c.debug().kmt()?.get_device_data().kmt()?;
        let e = v.into_iter().find(|e| e.gpu_id == gpu_id).ok_or(st::INVALID_PARAMETER)?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(device_info, e, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtDbgRegister` (v1 debugger, primary context).
    all fn hsaKmtDbgRegister(NodeId: u32) {
        ctx::primary()?.debug().kmt()?.dbg_register(NodeId).kmt()
    }

    /// `hsaKmtDbgUnregister` (v1 debugger, primary context).
    all fn hsaKmtDbgUnregister(NodeId: u32) {
        ctx::primary()?.debug().kmt()?.dbg_unregister(NodeId).kmt()
    }

    /// `hsaKmtDbgWavefrontControl` (v1 debugger): bad node → 5 (before
    /// the message is read, as C); a NULL message → 3.
    all fn hsaKmtDbgWavefrontControl(NodeId: u32, Operand: HSA_DBG_WAVEOP, Mode: HSA_DBG_WAVEMODE, TrapId: u32, DbgWaveMsgRing: *mut HsaDbgWaveMessage) {
        let c = ctx::primary()?;
        crate::topology::validate_node(&c, NodeId)?;
        // SAFETY: an IN argument; checked by `read_in`.
        let msg = unsafe { read_in(DbgWaveMsgRing as *const HsaDbgWaveMessage, st::INVALID_PARAMETER) }?;
        // SAFETY: the union has one member (Gen2), plain integers.
        let value = unsafe { msg.DbgWaveMsg.WaveMsgInfoGen2.Value };
        c.debug().kmt()?.dbg_wavefront_control(NodeId, Operand.0, Mode.0, TrapId, value, msg.MemoryVA as u64).kmt()
    }

    /// `hsaKmtDbgAddressWatch` (v1 debugger): modes and addresses are
    /// required for `NumWatchPoints > 0`; masks are optional; a non-NULL
    /// `WatchEvent` array's `NumWatchPoints` event pointers are passed to
    /// the kernel after the masks, as 5.2.3 does.
    all fn hsaKmtDbgAddressWatch(NodeId: u32, NumWatchPoints: u32, WatchMode: *mut HSA_DBG_WATCH_MODE, WatchAddress: *mut *mut c_void, WatchMask: *mut u64, WatchEvent: *mut *mut abi::HsaEvent) {
        let c = ctx::primary()?;
        let n = NumWatchPoints as usize;
        let d = c.debug().kmt()?;
        // The node, then the count, before any array is read, as in C.
        crate::topology::validate_node(&c, NodeId)?;
        if n > kfd_debug::MAX_ALLOWED_NUM_POINTS {
            return Err(st::INVALID_PARAMETER);
        }
        let max = kfd_debug::MAX_ALLOWED_NUM_POINTS;
        // SAFETY: the C contract: `NumWatchPoints` entries each.
        let modes = unsafe { slice_in(WatchMode as *const HSA_DBG_WATCH_MODE, n, max, st::INVALID_PARAMETER) }?;
        // SAFETY: as above.
        let addrs = unsafe { slice_in(WatchAddress as *const *mut c_void, n, max, st::INVALID_PARAMETER) }?;
        let masks: &[u64] = if WatchMask.is_null() {
            &[]
        } else {
            // SAFETY: as above (the mask array is optional).
            unsafe { slice_in(WatchMask as *const u64, n, max, st::INVALID_PARAMETER) }?
        };
        let points: Vec<AddressWatchPoint> = (0..n)
            .map(|i| AddressWatchPoint { mode: modes[i].0, address: addrs[i] as u64, mask: masks.get(i).copied().unwrap_or(0) })
            .collect();
        let events: Option<Vec<u64>> = if WatchEvent.is_null() {
            None
        } else {
            // SAFETY: as above (the event array is optional); the pointers
            // are only passed on, never followed.
            let e = unsafe { slice_in(WatchEvent as *const *mut abi::HsaEvent, n, max, st::INVALID_PARAMETER) }?;
            Some(e.iter().map(|&p| p as u64).collect())
        };
        d.dbg_address_watch(NodeId, &points, events.as_deref()).kmt()
    }

    /// `hsaKmtGetKernelDebugTrapVersionInfo` (5.2.3 only): the 5.2-era
    /// debug-trap interface version. NULL outputs → 3. 5.2.3 has no open
    /// check: with KFD closed its ioctl fails (on descriptor 0) → 1.
    rocm52 fn hsaKmtGetKernelDebugTrapVersionInfo(Major: *mut u32, Minor: *mut u32) {
        let c = ctx::resolve_unless(ctx::primary_ptr(), true, st::ERROR)?;
        check_mut(Major, st::INVALID_PARAMETER)?;
        check_mut(Minor, st::INVALID_PARAMETER)?;
        let (ma, mi) = c.debug().kmt()?.kernel_debug_trap_version().kmt()?;
        // SAFETY: both checked above; OUT arguments.
        unsafe {
            write_out(Major, ma, st::INVALID_PARAMETER)?;
            write_out(Minor, mi, st::INVALID_PARAMETER)
        }
    }
}

forward! {
    /// `hsaKmtRuntimeEnable`.
    all fn hsaKmtRuntimeEnable(rDebug: *mut c_void, setupTtmp: bool) => hsaKmtRuntimeEnableCtx;
    /// `hsaKmtRuntimeDisable`.
    all fn hsaKmtRuntimeDisable() => hsaKmtRuntimeDisableCtx;
    /// `hsaKmtGetRuntimeCapabilities`.
    since62 fn hsaKmtGetRuntimeCapabilities(caps_mask: *mut u32) => hsaKmtGetRuntimeCapabilitiesCtx;
    /// `hsaKmtDbgEnable`.
    since62 fn hsaKmtDbgEnable(runtime_info: *mut *mut c_void, data_size: *mut u32) => hsaKmtDbgEnableCtx;
    /// `hsaKmtDbgDisable`.
    since62 fn hsaKmtDbgDisable() => hsaKmtDbgDisableCtx;
    /// `hsaKmtDbgGetDeviceData`.
    since62 fn hsaKmtDbgGetDeviceData(data: *mut *mut c_void, n_entries: *mut u32, entry_size: *mut u32) => hsaKmtDbgGetDeviceDataCtx;
    /// `hsaKmtDbgGetQueueData`.
    since62 fn hsaKmtDbgGetQueueData(data: *mut *mut c_void, n_entries: *mut u32, entry_size: *mut u32, suspend_queues: bool) => hsaKmtDbgGetQueueDataCtx;
    /// `hsaKmtCheckRuntimeDebugSupport`.
    since62 fn hsaKmtCheckRuntimeDebugSupport() => hsaKmtCheckRuntimeDebugSupportCtx;
    /// `hsaKmtDebugTrapIoctl`.
    since62 fn hsaKmtDebugTrapIoctl(args: *mut kfd_ioctl_dbg_trap_args, Queues: *mut u64, DebugReturn: *mut u64) => hsaKmtDebugTrapIoctlCtx;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_capabilities_need_no_open_but_an_output() {
        RUNTIME_CAPABILITIES.store(0x5, Ordering::Relaxed);
        let mut caps = 0u32;
        // SAFETY: a live out word; NULL is the deliberate bad input.
        let (s, null) = unsafe {
            (
                hsaKmtGetRuntimeCapabilitiesCtx(ctx::primary_ptr(), &mut caps),
                hsaKmtGetRuntimeCapabilitiesCtx(ctx::primary_ptr(), std::ptr::null_mut()),
            )
        };
        assert_eq!(
            (s, caps),
            (st::SUCCESS, 0x5),
            "no open check, the last mask"
        );
        assert_eq!(null, st::INVALID_PARAMETER);
        RUNTIME_CAPABILITIES.store(0, Ordering::Relaxed);
    }

    #[test]
    fn debug_trap_ioctl_checks_open_then_args() {
        let mut ret = 7u64;
        // SAFETY: NULL arguments are the deliberate bad input.
        let s = unsafe {
            hsaKmtDebugTrapIoctlCtx(
                ctx::primary_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut ret,
            )
        };
        // KFD is not open in unit tests.
        assert_eq!(s, st::NOT_OPENED);
        assert_eq!(ret, 7, "nothing written");
    }
}
