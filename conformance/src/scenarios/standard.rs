//! The standard call of every exported function: ordinary, valid-looking
//! arguments that no library may crash on, for the `closed` table (before
//! the first open, after the last close) and the coverage of rarely used
//! functions.

use std::ffi::c_void;
use std::ptr::null_mut;

use hsakmt_sys::common::{
    HsaClockCounters, HsaCounter, HsaCounterProperties, HsaDbgWaveMessage, HsaEventDescriptor,
    HsaGpuTileConfig, HsaMemoryProperties, HsaMemoryRange, HsaPmcTraceRoot, HsaSharedMemoryHandle,
    HsaSystemProperties, HsaVersionInfo, HSA_DBG_WATCH_MODE, HSA_SVM_ATTRIBUTE,
};
use hsakmt_sys::since_6_2::HsaPcSamplingInfo;
use kfd_sys::kfd::KFD_IOC_DBG_TRAP_DISABLE;

use super::debug::{free_c, trap_args};
use crate::abi::{memflag, Abi};
use crate::cx::{Cx, HostBuf};
use crate::kmt;

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
    let mut fd = -1i32;
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
        "hsaKmtAllocMemoryAlign" => {
            let host = A::mem_flags(memflag::HOST_ACCESS);
            let s = kmt!(
                cx,
                f,
                hsaKmtAllocMemoryAlign(0, 0x1000, 0x1000, host, &mut pa),
                "live out-pointer"
            );
            cleanup_free(cx, s, pa, 0x1000);
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
        _ => {
            cx.rec("harness-error", format!("no standard call for {f}"));
            u32::MAX
        }
    }
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
