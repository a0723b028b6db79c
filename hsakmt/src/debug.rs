//! Debugger: runtime enable, the debug-trap interface, the v1 debugger.

use std::ffi::c_void;

use hsakmt_sys::common::{HsaDbgWaveMessage, HSA_DBG_WATCH_MODE, HSA_DBG_WAVEMODE, HSA_DBG_WAVEOP};
use kfd_debug::AddressWatchPoint;
use kfd_sys::kfd::{kfd_dbg_device_info_entry, kfd_runtime_info};

use crate::border::{check_mut, read_in, slice_in, st, write_out, Kmt, KmtResult};
use crate::ctx::{self, HsaKFDContext};
use crate::generation::{self, abi, Generation};

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

/// The C library's `validate_nodeid`: no snapshot or a bad node → 5.
fn validate_node(c: &kfd_context::Context, node: u32) -> KmtResult {
    c.topology()
        .kmt()?
        .validate_node(node)
        .map_err(|_| st::INVALID_NODE_UNIT)?;
    Ok(())
}

export! {
    /// `hsaKmtRuntimeEnableCtx`: secondary context → 11; firmware without
    /// debugger support or KFD < 1.13 → 11; EBUSY → 12. The 5.2 build
    /// follows 5.2.3, which checks the 5.2-era debug-trap interface
    /// version first (11 without it, also when KFD is not open).
    ctx fn hsaKmtRuntimeEnableCtx(ctx: *mut HsaKFDContext, rDebug: *mut c_void, setupTtmp: bool) {
        if generation::GENERATION == Generation::Rocm52 {
            let c = ctx::resolve(ctx).map_err(|_| st::NOT_SUPPORTED)?;
            let d = c.debug().map_err(|_| st::NOT_SUPPORTED)?;
            d.kernel_debug_trap_version().map_err(|_| st::NOT_SUPPORTED)?;
            // The 5.2-era runtime-enable request is not implemented.
            return Err(st::NOT_SUPPORTED);
        }
        let c = ctx::resolve(ctx)?;
        c.debug().kmt()?.runtime_enable(rDebug as u64, setupTtmp).kmt()?;
        Ok(())
    }

    /// `hsaKmtRuntimeDisableCtx`: as [`hsaKmtRuntimeEnableCtx`].
    ctx fn hsaKmtRuntimeDisableCtx(ctx: *mut HsaKFDContext) {
        if generation::GENERATION == Generation::Rocm52 {
            let c = ctx::resolve(ctx).map_err(|_| st::NOT_SUPPORTED)?;
            let d = c.debug().map_err(|_| st::NOT_SUPPORTED)?;
            d.kernel_debug_trap_version().map_err(|_| st::NOT_SUPPORTED)?;
            return Err(st::NOT_SUPPORTED);
        }
        let c = ctx::resolve(ctx)?;
        c.debug().kmt()?.runtime_disable().kmt()
    }

    /// `hsaKmtGetRuntimeCapabilitiesCtx`: the mask of the last runtime
    /// enable (0 before one). NULL → 3.
    ctx fn hsaKmtGetRuntimeCapabilitiesCtx(ctx: *mut HsaKFDContext, caps_mask: *mut u32) {
        let c = ctx::resolve(ctx)?;
        check_mut(caps_mask, st::INVALID_PARAMETER)?;
        let caps = c.debug().kmt()?.runtime_capabilities().kmt()?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(caps_mask, caps.0, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtDbgEnableCtx`: attaches as debugger; `*runtime_info` is a
    /// `malloc`ed `struct kfd_runtime_info` the caller frees.
    ctx fn hsaKmtDbgEnableCtx(ctx: *mut HsaKFDContext, runtime_info: *mut *mut c_void, data_size: *mut u32) {
        let c = ctx::resolve(ctx)?;
        check_mut(runtime_info, st::INVALID_PARAMETER)?;
        check_mut(data_size, st::INVALID_PARAMETER)?;
        let info: kfd_runtime_info = c.debug().kmt()?.enable(u64::MAX).kmt()?;
        let p = malloc_copy(std::slice::from_ref(&info))?;
        // SAFETY: both checked above; OUT arguments.
        unsafe {
            write_out(data_size, std::mem::size_of::<kfd_runtime_info>() as u32, st::INVALID_PARAMETER)?;
            write_out(runtime_info, p, st::INVALID_PARAMETER)
        }
    }

    /// `hsaKmtDbgDisableCtx`.
    ctx fn hsaKmtDbgDisableCtx(ctx: *mut HsaKFDContext) {
        let c = ctx::resolve(ctx)?;
        c.debug().kmt()?.disable().kmt()
    }

    /// `hsaKmtDbgGetDeviceDataCtx`: a `malloc`ed device snapshot.
    ctx fn hsaKmtDbgGetDeviceDataCtx(ctx: *mut HsaKFDContext, data: *mut *mut c_void, n_entries: *mut u32, entry_size: *mut u32) {
        let c = ctx::resolve(ctx)?;
        check_mut(data, st::INVALID_PARAMETER)?;
        check_mut(n_entries, st::INVALID_PARAMETER)?;
        check_mut(entry_size, st::INVALID_PARAMETER)?;
        let v = c.debug().kmt()?.get_device_data().kmt()?;
        let p = malloc_copy(&v)?;
        // SAFETY: all checked above; OUT arguments.
        unsafe {
            write_out(n_entries, v.len() as u32, st::INVALID_PARAMETER)?;
            write_out(entry_size, std::mem::size_of::<kfd_dbg_device_info_entry>() as u32, st::INVALID_PARAMETER)?;
            write_out(data, p, st::INVALID_PARAMETER)
        }
    }

    /// `hsaKmtDbgGetQueueDataCtx`: a `malloc`ed queue snapshot.
    ctx fn hsaKmtDbgGetQueueDataCtx(ctx: *mut HsaKFDContext, data: *mut *mut c_void, n_entries: *mut u32, entry_size: *mut u32, suspend_queues: bool) {
        let c = ctx::resolve(ctx)?;
        check_mut(data, st::INVALID_PARAMETER)?;
        check_mut(n_entries, st::INVALID_PARAMETER)?;
        check_mut(entry_size, st::INVALID_PARAMETER)?;
        let v = c.debug().kmt()?.get_queue_data(suspend_queues).kmt()?;
        let size = std::mem::size_of_val(v.first().unwrap_or(&Default::default()));
        let p = malloc_copy(&v)?;
        // SAFETY: all checked above; OUT arguments.
        unsafe {
            write_out(n_entries, v.len() as u32, st::INVALID_PARAMETER)?;
            write_out(entry_size, size as u32, st::INVALID_PARAMETER)?;
            write_out(data, p, st::INVALID_PARAMETER)
        }
    }

    /// `hsaKmtCheckRuntimeDebugSupportCtx`: secondary → 11; firmware or
    /// KFD too old → 11.
    ctx fn hsaKmtCheckRuntimeDebugSupportCtx(ctx: *mut HsaKFDContext) {
        let c = ctx::resolve(ctx)?;
        c.debug().kmt()?.check_runtime_debug_support().kmt()
    }

    /// `hsaKmtDebugTrapIoctlCtx` (raw debug-trap requests for tests): not
    /// offered by the border → `NOT_SUPPORTED`.
    ctx fn hsaKmtDebugTrapIoctlCtx(ctx: *mut HsaKFDContext, args: *mut c_void, Queues: *mut u64, DebugReturn: *mut u64) {
        let _ = (args, Queues, DebugReturn);
        ctx::resolve(ctx)?;
        Err(st::NOT_SUPPORTED)
    }

    /// `hsaKmtGetCoreRuntimeInfo`: the primary context's runtime info.
    current fn hsaKmtGetCoreRuntimeInfo(runtime_info: *mut kfd_runtime_info) {
        let c = ctx::primary()?;
        let info = c.debug().kmt()?.core_runtime_info().kmt()?;
        // SAFETY: an OUT argument; checked by `write_out`.
        unsafe { write_out(runtime_info, info, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtGetCoreDeviceInfo`: the device snapshot entry of `gpu_id`
    /// (unknown → 3).
    current fn hsaKmtGetCoreDeviceInfo(gpu_id: u32, device_info: *mut kfd_dbg_device_info_entry) {
        let c = ctx::primary()?;
        check_mut(device_info, st::INVALID_PARAMETER)?;
        let v = c.debug().kmt()?.get_device_data().kmt()?;
        let e = v.into_iter().find(|e| e.gpu_id == gpu_id).ok_or(st::INVALID_PARAMETER)?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(device_info, e, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtSetSigbusDelay`: not implemented by the subsystem crates →
    /// `NOT_SUPPORTED`.
    current fn hsaKmtSetSigbusDelay(NodeId: u32, DelayMs: u32) {
        let _ = (NodeId, DelayMs);
        ctx::check_open()?;
        Err(st::NOT_SUPPORTED)
    }

    /// `hsaKmtDbgRegister` (v1 debugger, primary context).
    both fn hsaKmtDbgRegister(NodeId: u32) {
        ctx::primary()?.debug().kmt()?.dbg_register(NodeId).kmt()
    }

    /// `hsaKmtDbgUnregister` (v1 debugger, primary context).
    both fn hsaKmtDbgUnregister(NodeId: u32) {
        ctx::primary()?.debug().kmt()?.dbg_unregister(NodeId).kmt()
    }

    /// `hsaKmtDbgWavefrontControl` (v1 debugger): bad node → 5 (before
    /// the message is read, as C); a NULL message → 3.
    both fn hsaKmtDbgWavefrontControl(NodeId: u32, Operand: HSA_DBG_WAVEOP, Mode: HSA_DBG_WAVEMODE, TrapId: u32, DbgWaveMsgRing: *mut HsaDbgWaveMessage) {
        let c = ctx::primary()?;
        validate_node(&c, NodeId)?;
        // SAFETY: an IN argument; checked by `read_in`.
        let msg = unsafe { read_in(DbgWaveMsgRing as *const HsaDbgWaveMessage, st::INVALID_PARAMETER) }?;
        // SAFETY: the union has one member (Gen2), plain integers.
        let value = unsafe { msg.DbgWaveMsg.WaveMsgInfoGen2.Value };
        c.debug().kmt()?.dbg_wavefront_control(NodeId, Operand, Mode, TrapId, value, msg.MemoryVA as u64).kmt()
    }

    /// `hsaKmtDbgAddressWatch` (v1 debugger): modes and addresses are
    /// required for `NumWatchPoints > 0`; masks are optional; a non-NULL
    /// `WatchEvent` array's `NumWatchPoints` event pointers are passed to
    /// the kernel after the masks, as 5.2.3 does.
    both fn hsaKmtDbgAddressWatch(NodeId: u32, NumWatchPoints: u32, WatchMode: *mut HSA_DBG_WATCH_MODE, WatchAddress: *mut *mut c_void, WatchMask: *mut u64, WatchEvent: *mut *mut abi::HsaEvent) {
        let c = ctx::primary()?;
        let n = NumWatchPoints as usize;
        let d = c.debug().kmt()?;
        // The node, then the count, before any array is read, as in C.
        validate_node(&c, NodeId)?;
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
            .map(|i| AddressWatchPoint { mode: modes[i], address: addrs[i] as u64, mask: masks.get(i).copied().unwrap_or(0) })
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
        let c = ctx::resolve_unchecked(ctx::primary_ptr(), st::ERROR)?;
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
    both fn hsaKmtRuntimeEnable(rDebug: *mut c_void, setupTtmp: bool) => hsaKmtRuntimeEnableCtx;
    /// `hsaKmtRuntimeDisable`.
    both fn hsaKmtRuntimeDisable() => hsaKmtRuntimeDisableCtx;
    /// `hsaKmtGetRuntimeCapabilities`.
    current fn hsaKmtGetRuntimeCapabilities(caps_mask: *mut u32) => hsaKmtGetRuntimeCapabilitiesCtx;
    /// `hsaKmtDbgEnable`.
    current fn hsaKmtDbgEnable(runtime_info: *mut *mut c_void, data_size: *mut u32) => hsaKmtDbgEnableCtx;
    /// `hsaKmtDbgDisable`.
    current fn hsaKmtDbgDisable() => hsaKmtDbgDisableCtx;
    /// `hsaKmtDbgGetDeviceData`.
    current fn hsaKmtDbgGetDeviceData(data: *mut *mut c_void, n_entries: *mut u32, entry_size: *mut u32) => hsaKmtDbgGetDeviceDataCtx;
    /// `hsaKmtDbgGetQueueData`.
    current fn hsaKmtDbgGetQueueData(data: *mut *mut c_void, n_entries: *mut u32, entry_size: *mut u32, suspend_queues: bool) => hsaKmtDbgGetQueueDataCtx;
    /// `hsaKmtCheckRuntimeDebugSupport`.
    current fn hsaKmtCheckRuntimeDebugSupport() => hsaKmtCheckRuntimeDebugSupportCtx;
    /// `hsaKmtDebugTrapIoctl`.
    current fn hsaKmtDebugTrapIoctl(args: *mut c_void, Queues: *mut u64, DebugReturn: *mut u64) => hsaKmtDebugTrapIoctlCtx;
}
