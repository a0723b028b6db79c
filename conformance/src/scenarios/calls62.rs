//! The "standard call" of each function libhsakmt 6.2.4 added (see
//! [`super::standard_call`]): ordinary, valid-looking arguments that no
//! library may crash on, for the `closed` table (before the first open,
//! after the last close).

use std::ffi::c_void;
use std::ptr::null_mut;

use hsakmt_sys::since_6_2::HsaPcSamplingInfo;
use kfd_sys::kfd::{kfd_ioctl_dbg_trap_args, KFD_IOC_DBG_TRAP_DISABLE};

use crate::abi::{memflag, Abi};
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

/// The standard call of `f`, or `None` if `f` is not one of the 22.
pub(crate) fn standard_call<A: Abi>(cx: &mut Cx<A>, f: &str, node: u32) -> Option<u32> {
    let buf = HostBuf::new(0x1000);
    let b = buf.ptr();
    let mut pa: *mut c_void = null_mut();
    let (mut u32a, mut u32b, mut u64a) = (0u32, 0u32, 0u64);
    let mut fd = -1i32;
    let s = match f {
        "hsaKmtAllocMemoryAlign" => {
            let host = A::mem_flags(memflag::HOST_ACCESS);
            let s = kmt!(
                cx,
                f,
                hsaKmtAllocMemoryAlign(0, 0x1000, 0x1000, host, &mut pa),
                "live out-pointer"
            );
            super::cleanup_free(cx, s, pa, 0x1000);
            s
        }
        "hsaKmtAvailableMemory" => kmt!(
            cx,
            f,
            hsaKmtAvailableMemory(node, &mut u64a),
            "live out word"
        ),
        "hsaKmtGetAMDGPUDeviceHandle" => kmt!(
            cx,
            f,
            hsaKmtGetAMDGPUDeviceHandle(node, &mut pa),
            "live out-pointer"
        ),
        "hsaKmtReplaceAsanHeaderPage" => kmt!(
            cx,
            f,
            hsaKmtReplaceAsanHeaderPage(b),
            "address unknown to the thunk"
        ),
        "hsaKmtReturnAsanHeaderPage" => kmt!(
            cx,
            f,
            hsaKmtReturnAsanHeaderPage(b),
            "address unknown to the thunk"
        ),
        "hsaKmtWaitOnEvent_Ext" => kmt!(
            cx,
            f,
            hsaKmtWaitOnEvent_Ext(null_mut(), 0, &mut u64a),
            "NULL event: documented check"
        ),
        "hsaKmtWaitOnMultipleEvents_Ext" => kmt!(
            cx,
            f,
            hsaKmtWaitOnMultipleEvents_Ext(null_mut(), 0, true, 0, &mut u64a),
            "NULL array, 0 events"
        ),
        "hsaKmtOpenSMI" => {
            let s = kmt!(cx, f, hsaKmtOpenSMI(node, &mut fd), "live out word");
            if s == 0 && fd >= 0 {
                // SAFETY: the descriptor was just handed to us; closed once.
                unsafe { libc::close(fd) };
            }
            s
        }
        "hsaKmtCheckRuntimeDebugSupport" => {
            kmt!(cx, f, hsaKmtCheckRuntimeDebugSupport(), "no arguments")
        }
        "hsaKmtGetRuntimeCapabilities" => kmt!(
            cx,
            f,
            hsaKmtGetRuntimeCapabilities(&mut u32a),
            "live out word"
        ),
        "hsaKmtDbgEnable" => {
            let s = kmt!(
                cx,
                f,
                hsaKmtDbgEnable(&mut pa, &mut u32a),
                "live out-pointer and word"
            );
            if s == 0 {
                // SAFETY: a successful DbgEnable hands out a malloc'ed record.
                unsafe { free_c(pa) };
                kmt!(cx, "cleanup.disable", hsaKmtDbgDisable(), "none");
            }
            s
        }
        "hsaKmtDbgDisable" => kmt!(cx, f, hsaKmtDbgDisable(), "no arguments"),
        "hsaKmtDbgGetDeviceData" => {
            let s = kmt!(
                cx,
                f,
                hsaKmtDbgGetDeviceData(&mut pa, &mut u32a, &mut u32b),
                "live outs"
            );
            if s == 0 {
                // SAFETY: a successful call hands out a malloc'ed snapshot.
                unsafe { free_c(pa) };
            }
            s
        }
        "hsaKmtDbgGetQueueData" => {
            let s = kmt!(
                cx,
                f,
                hsaKmtDbgGetQueueData(&mut pa, &mut u32a, &mut u32b, false),
                "live outs"
            );
            if s == 0 {
                // SAFETY: a successful call hands out a malloc'ed snapshot.
                unsafe { free_c(pa) };
            }
            s
        }
        "hsaKmtDebugTrapIoctl" => {
            let mut a = trap_args(KFD_IOC_DBG_TRAP_DISABLE);
            kmt!(
                cx,
                f,
                hsaKmtDebugTrapIoctl(&mut a, null_mut(), &mut u64a),
                "live DISABLE arguments for this process; no queues"
            )
        }
        "hsaKmtPcSamplingSupport" => kmt!(cx, f, hsaKmtPcSamplingSupport(), "no arguments"),
        "hsaKmtPcSamplingQueryCapabilities" => kmt!(
            cx,
            f,
            hsaKmtPcSamplingQueryCapabilities(node, null_mut(), 0, &mut u32a),
            "no buffer (size query); live out word"
        ),
        "hsaKmtPcSamplingCreate" => {
            let mut info = HsaPcSamplingInfo::default();
            kmt!(
                cx,
                f,
                hsaKmtPcSamplingCreate(node, &mut info, &mut u32a),
                "live info and out word"
            )
        }
        "hsaKmtPcSamplingDestroy" => kmt!(cx, f, hsaKmtPcSamplingDestroy(node, 1), "trace id 1"),
        "hsaKmtPcSamplingStart" => kmt!(cx, f, hsaKmtPcSamplingStart(node, 1), "trace id 1"),
        "hsaKmtPcSamplingStop" => kmt!(cx, f, hsaKmtPcSamplingStop(node, 1), "trace id 1"),
        _ => return None,
    };
    Some(s)
}
