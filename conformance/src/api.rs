//! The hsakmt entry points of one library under test, loaded by path with
//! libloading (`RTLD_NOW`), typed with one ABI generation's structs.
//!
//! Every function is an `Option`: a symbol the library does not export is
//! `None`, and the scenarios record the call as `MISSING` (counted as
//! "unsupported" for ours, "reference lacks API" for the reference).

#![allow(non_snake_case)]

use std::ffi::c_void;
use std::marker::PhantomData;
use std::path::Path;

use hsakmt_sys::common::{
    HsaClockCounters, HsaCounter, HsaCounterProperties, HsaDbgWaveMessage, HsaEventDescriptor,
    HsaGpuTileConfig, HsaMemoryProperties, HsaMemoryRange, HsaPmcTraceRoot, HsaSharedMemoryHandle,
    HsaSystemProperties, HsaVersionInfo, HSAKMT_STATUS, HSA_DBG_WATCH_MODE, HSA_SVM_ATTRIBUTE,
};
use hsakmt_sys::newest::HsaKFDContext;
use hsakmt_sys::since_6_2::HsaPcSamplingInfo;
use kfd_sys::kfd::kfd_ioctl_dbg_trap_args;

use crate::abi::Abi;

/// The status type every entry point returns.
pub type St = HSAKMT_STATUS;
/// `HsaKFDContext *`.
pub type CtxPtr = *mut HsaKFDContext;

macro_rules! api_table {
    ($(
        $name:ident ( $($arg:ty),* $(,)? );
    )*) => {
        /// The entry points of one loaded library (see the module docs).
        #[allow(non_snake_case)]
        pub struct Api<A: Abi> {
            _lib: libloading::Library,
            _abi: PhantomData<A>,
            $(
                #[doc = concat!("`", stringify!($name), "`, if exported.")]
                pub $name: Option<unsafe extern "C" fn($($arg),*) -> St>,
            )*
        }

        impl<A: Abi> std::fmt::Debug for Api<A> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let n = [$(self.$name.is_some()),*].iter().filter(|x| **x).count();
                write!(f, "Api<{:?}>({n} of {} symbols)", A::KIND, Self::NAMES.len())
            }
        }

        impl<A: Abi> Api<A> {
            /// Every entry point name this table knows.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            /// Loads the library at `path` with `RTLD_NOW | RTLD_LOCAL`.
            ///
            /// # Safety
            ///
            /// Loading runs the library's constructors, and the returned
            /// function pointers are typed with generation `A`'s prototypes:
            /// the library must be a libhsakmt of generation `A`.
            pub unsafe fn load(path: &Path) -> Result<Api<A>, String> {
                let flags = libc::RTLD_NOW | libc::RTLD_LOCAL;
                // SAFETY: the caller guarantees the file is a libhsakmt
                // whose constructors may run in this process.
                let lib = unsafe { libloading::os::unix::Library::open(Some(path), flags) }
                    .map_err(|e| format!("load {}: {e}", path.display()))?;
                let lib: libloading::Library = lib.into();
                $(
                    // SAFETY: the symbol, if present, is the hsakmt entry
                    // point of that name, whose C prototype (for generation
                    // `A`) is the function type of this field; the copied
                    // pointer stays valid while `_lib` is kept in the struct.
                    let $name = unsafe {
                        lib.get::<unsafe extern "C" fn($($arg),*) -> St>(
                            concat!(stringify!($name), "\0").as_bytes(),
                        )
                    }
                    .ok()
                    .map(|s| *s);
                )*
                Ok(Api { _lib: lib, _abi: PhantomData, $($name),* })
            }

            /// Calls export `name` with arguments picked by `g` (the
            /// fuzz family): `Some(None)` when the library lacks it,
            /// `None` for a name this table does not know.
            ///
            /// # Safety
            ///
            /// Calls C with arbitrary arguments: only in a child process
            /// made for this one call ([`crate::fuzz::call_in_child`]).
            pub unsafe fn fuzz_call(&self, name: &str, g: &mut crate::fuzz::Gen) -> Option<Option<St>> {
                use crate::fuzz::FuzzCall;
                match name {
                    // SAFETY: forwarded contract.
                    $(stringify!($name) => Some(self.$name.map(|f| unsafe { f.fuzz_call(g) })),)*
                    _ => None,
                }
            }

            /// Whether the library exports `name`.
            pub fn has(&self, name: &str) -> bool {
                match name {
                    $(stringify!($name) => self.$name.is_some(),)*
                    _ => false,
                }
            }
        }
    };
}

api_table! {
    // open / close / version
    hsaKmtOpenKFD();
    hsaKmtCloseKFD();
    hsaKmtGetVersion(*mut HsaVersionInfo);
    // topology
    hsaKmtAcquireSystemProperties(*mut HsaSystemProperties);
    hsaKmtReleaseSystemProperties();
    hsaKmtGetNodeProperties(u32, *mut A::NodeProperties);
    hsaKmtGetNodeMemoryProperties(u32, u32, *mut HsaMemoryProperties);
    hsaKmtGetNodeCacheProperties(u32, u32, u32, *mut A::CacheProperties);
    hsaKmtGetNodeIoLinkProperties(u32, u32, *mut A::IoLinkProperties);
    // events
    hsaKmtCreateEvent(*mut HsaEventDescriptor, bool, bool, *mut *mut A::Event);
    hsaKmtDestroyEvent(*mut A::Event);
    hsaKmtSetEvent(*mut A::Event);
    hsaKmtResetEvent(*mut A::Event);
    hsaKmtQueryEventState(*mut A::Event);
    hsaKmtWaitOnEvent(*mut A::Event, u32);
    hsaKmtWaitOnMultipleEvents(*mut *mut A::Event, u32, bool, u32);
    // queues (HSA_QUEUE_PRIORITY is 64 bits wide in the C ABI)
    hsaKmtCreateQueue(u32, u32, u32, i64, *mut c_void, u64, *mut A::Event, *mut A::QueueResource);
    hsaKmtUpdateQueue(u64, u32, i64, *mut c_void, u64, *mut A::Event);
    hsaKmtDestroyQueue(u64);
    hsaKmtSetQueueCUMask(u64, u32, *mut u32);
    hsaKmtGetQueueInfo(u64, *mut A::QueueInfo);
    hsaKmtAllocQueueGWS(u64, u32, *mut u32);
    hsaKmtSetTrapHandler(u32, *mut c_void, u64, *mut c_void, u64);
    // memory
    hsaKmtSetMemoryPolicy(u32, u32, u32, *mut c_void, u64);
    hsaKmtAllocMemory(u32, u64, A::MemFlags, *mut *mut c_void);
    hsaKmtFreeMemory(*mut c_void, u64);
    hsaKmtRegisterMemory(*mut c_void, u64);
    hsaKmtRegisterMemoryToNodes(*mut c_void, u64, u64, *mut u32);
    hsaKmtRegisterMemoryWithFlags(*mut c_void, u64, A::MemFlags);
    hsaKmtRegisterGraphicsHandleToNodes(u64, *mut A::GraphicsResourceInfo, u64, *mut u32);
    hsaKmtShareMemory(*mut c_void, u64, *mut HsaSharedMemoryHandle);
    hsaKmtRegisterSharedHandle(*const HsaSharedMemoryHandle, *mut *mut c_void, *mut u64);
    hsaKmtRegisterSharedHandleToNodes(*const HsaSharedMemoryHandle, *mut *mut c_void, *mut u64, u64, *mut u32);
    hsaKmtProcessVMRead(u32, *mut HsaMemoryRange, u64, *mut HsaMemoryRange, u64, *mut u64);
    hsaKmtProcessVMWrite(u32, *mut HsaMemoryRange, u64, *mut HsaMemoryRange, u64, *mut u64);
    hsaKmtDeregisterMemory(*mut c_void);
    hsaKmtMapMemoryToGPU(*mut c_void, u64, *mut u64);
    hsaKmtMapMemoryToGPUNodes(*mut c_void, u64, *mut u64, A::MapFlags, u64, *mut u32);
    hsaKmtUnmapMemoryToGPU(*mut c_void);
    hsaKmtMapGraphicHandle(u32, u64, u64, u64, u64, *mut u64);
    hsaKmtUnmapGraphicHandle(u32, u64, u64);
    hsaKmtGetTileConfig(u32, *mut HsaGpuTileConfig);
    hsaKmtQueryPointerInfo(*const c_void, *mut A::PointerInfo);
    hsaKmtSetMemoryUserData(*const c_void, *mut c_void);
    hsaKmtSVMSetAttr(*mut c_void, u64, u32, *mut HSA_SVM_ATTRIBUTE);
    hsaKmtSVMGetAttr(*mut c_void, u64, u32, *mut HSA_SVM_ATTRIBUTE);
    hsaKmtSetXNACKMode(i32);
    hsaKmtGetXNACKMode(*mut i32);
    // debug
    hsaKmtDbgRegister(u32);
    hsaKmtDbgUnregister(u32);
    hsaKmtDbgWavefrontControl(u32, u32, u32, u32, *mut HsaDbgWaveMessage);
    hsaKmtDbgAddressWatch(u32, u32, *mut HSA_DBG_WATCH_MODE, *mut *mut c_void, *mut u64, *mut *mut A::Event);
    hsaKmtRuntimeEnable(*mut c_void, bool);
    hsaKmtRuntimeDisable();
    hsaKmtGetKernelDebugTrapVersionInfo(*mut u32, *mut u32);
    // clocks
    hsaKmtGetClockCounters(u32, *mut HsaClockCounters);
    // performance counters
    hsaKmtPmcGetCounterProperties(u32, *mut *mut HsaCounterProperties);
    hsaKmtPmcRegisterTrace(u32, u32, *mut HsaCounter, *mut HsaPmcTraceRoot);
    hsaKmtPmcUnregisterTrace(u32, u64);
    hsaKmtPmcAcquireTraceAccess(u32, u64);
    hsaKmtPmcReleaseTraceAccess(u32, u64);
    hsaKmtPmcStartTrace(u64, *mut c_void, u64);
    hsaKmtPmcQueryTrace(u64);
    hsaKmtPmcStopTrace(u64);
    hsaKmtSPMAcquire(u32);
    hsaKmtSPMRelease(u32);
    hsaKmtSPMSetDestBuffer(u32, u32, *mut u32, *mut u32, *mut c_void, *mut bool);
    // since 6.2.4 (and newest): the first of these starts the newest
    // part of the coverage list (see `coverage_list`)
    hsaKmtExportDMABufHandle(*mut c_void, u64, *mut i32, *mut u64);
    hsaKmtAllocMemoryAlign(u32, u64, u64, A::MemFlags, *mut *mut c_void);
    hsaKmtAvailableMemory(u32, *mut u64);
    hsaKmtGetAMDGPUDeviceHandle(u32, *mut *mut c_void);
    hsaKmtReplaceAsanHeaderPage(*mut c_void);
    hsaKmtReturnAsanHeaderPage(*mut c_void);
    hsaKmtWaitOnEvent_Ext(*mut A::Event, u32, *mut u64);
    hsaKmtWaitOnMultipleEvents_Ext(*mut *mut A::Event, u32, bool, u32, *mut u64);
    hsaKmtOpenSMI(u32, *mut i32);
    hsaKmtCheckRuntimeDebugSupport();
    hsaKmtGetRuntimeCapabilities(*mut u32);
    hsaKmtDbgEnable(*mut *mut c_void, *mut u32);
    hsaKmtDbgDisable();
    hsaKmtDbgGetDeviceData(*mut *mut c_void, *mut u32, *mut u32);
    hsaKmtDbgGetQueueData(*mut *mut c_void, *mut u32, *mut u32, bool);
    hsaKmtDebugTrapIoctl(*mut kfd_ioctl_dbg_trap_args, *mut u64, *mut u64);
    hsaKmtPcSamplingSupport();
    hsaKmtPcSamplingQueryCapabilities(u32, *mut c_void, u32, *mut u32);
    hsaKmtPcSamplingCreate(u32, *mut HsaPcSamplingInfo, *mut u32);
    hsaKmtPcSamplingDestroy(u32, u32);
    hsaKmtPcSamplingStart(u32, u32);
    hsaKmtPcSamplingStop(u32, u32);
    // newest only: contexts
    hsaKmtOpenKFDCtx(*mut CtxPtr);
    hsaKmtCloseKFDCtx();
    hsaKmtOpenSecondaryKFDCtx(*mut CtxPtr);
    hsaKmtCloseSecondaryKFDCtx(CtxPtr);
    hsaKmtAcquireSystemPropertiesCtx(CtxPtr, *mut HsaSystemProperties);
    hsaKmtReleaseSystemPropertiesCtx(CtxPtr);
    hsaKmtGetNodePropertiesCtx(CtxPtr, u32, *mut A::NodeProperties);
    hsaKmtAllocMemoryCtx(CtxPtr, u32, u64, A::MemFlags, *mut *mut c_void);
    hsaKmtFreeMemoryCtx(CtxPtr, *mut c_void, u64);
    hsaKmtMapMemoryToGPUCtx(CtxPtr, *mut c_void, u64, *mut u64);
    hsaKmtUnmapMemoryToGPUCtx(CtxPtr, *mut c_void);
    hsaKmtQueryPointerInfoCtx(CtxPtr, *const c_void, *mut A::PointerInfo);
    hsaKmtRuntimeEnableCtx(CtxPtr, *mut c_void, bool);
    hsaKmtRuntimeDisableCtx(CtxPtr);
    hsaKmtCreateEventCtx(CtxPtr, *mut HsaEventDescriptor, bool, bool, *mut *mut A::Event);
    hsaKmtDestroyEventCtx(CtxPtr, *mut A::Event);
    hsaKmtSetEventCtx(CtxPtr, *mut A::Event);
    hsaKmtWaitOnEventCtx(CtxPtr, *mut A::Event, u32);
    // newest only: every other export of the newest library (for the
    // fuzz family; struct types the harness does not model are untyped)
    hsaKmtAisReadWriteFile(*mut c_void, u64, i32, i64, u32, *mut u64, *mut i32);
    hsaKmtAllocMemoryAlignCtx(CtxPtr, u32, u64, u64, A::MemFlags, *mut *mut c_void);
    hsaKmtAllocMemoryHostGtt(u32, u32, u64, A::MemFlags, *mut *mut c_void);
    hsaKmtAllocMemoryHostGttCtx(CtxPtr, u32, u32, u64, A::MemFlags, *mut *mut c_void);
    hsaKmtAllocQueueGWSCtx(CtxPtr, u64, u32, *mut u32);
    hsaKmtAvailableMemoryCtx(CtxPtr, u32, *mut u64);
    hsaKmtCheckRuntimeDebugSupportCtx(CtxPtr);
    hsaKmtCreateQueueCtx(CtxPtr, u32, u32, u32, i64, *mut c_void, u64, *mut A::Event, *mut A::QueueResource);
    hsaKmtCreateQueueExt(u32, u32, u32, i64, u32, *mut c_void, u64, *mut A::Event, *mut A::QueueResource);
    hsaKmtCreateQueueExtCtx(CtxPtr, u32, u32, u32, i64, u32, *mut c_void, u64, *mut A::Event, *mut A::QueueResource);
    hsaKmtCreateQueueV2(u32, u32, u32, i64, u32, *mut c_void, u64, u64, *mut A::Event, *mut A::QueueResource);
    hsaKmtCreateQueueV2Ctx(CtxPtr, u32, u32, u32, i64, u32, *mut c_void, u64, u64, *mut A::Event, *mut A::QueueResource);
    hsaKmtDbgDisableCtx(CtxPtr);
    hsaKmtDbgEnableCtx(CtxPtr, *mut *mut c_void, *mut u32);
    hsaKmtDbgGetDeviceDataCtx(CtxPtr, *mut *mut c_void, *mut u32, *mut u32);
    hsaKmtDbgGetQueueDataCtx(CtxPtr, *mut *mut c_void, *mut u32, *mut u32, bool);
    hsaKmtDebugTrapIoctlCtx(CtxPtr, *mut c_void, *mut u64, *mut u64);
    hsaKmtDeregisterMemoryCtx(CtxPtr, *mut c_void);
    hsaKmtDestroyExternalSemaphore(u64);
    hsaKmtDestroyQueueCtx(CtxPtr, u64);
    hsaKmtExportDMABufHandleCtx(CtxPtr, *mut c_void, u64, *mut i32, *mut u64);
    hsaKmtGetAMDGPUDeviceHandleCtx(CtxPtr, u32, *mut *mut c_void);
    hsaKmtGetAmdGPUDeviceFd(*mut c_void, *mut i32);
    hsaKmtGetClockCountersCtx(CtxPtr, u32, *mut HsaClockCounters);
    hsaKmtGetClockCountersPrecise(u32, *mut HsaClockCounters);
    hsaKmtGetClockCountersPreciseCtx(CtxPtr, u32, *mut HsaClockCounters);
    hsaKmtGetCoreDeviceInfo(u32, *mut c_void);
    hsaKmtGetCoreRuntimeInfo(*mut c_void);
    hsaKmtGetKernelQueueId(u64, *mut u32);
    hsaKmtGetNodeCachePropertiesCtx(CtxPtr, u32, u32, u32, *mut A::CacheProperties);
    hsaKmtGetNodeIoLinkPropertiesCtx(CtxPtr, u32, u32, *mut A::IoLinkProperties);
    hsaKmtGetNodeMemoryPropertiesCtx(CtxPtr, u32, u32, *mut HsaMemoryProperties);
    hsaKmtGetNodeWallclockFrequency(u32, *mut u64);
    hsaKmtGetQueueInfoCtx(CtxPtr, u64, *mut A::QueueInfo);
    hsaKmtGetRuntimeCapabilitiesCtx(CtxPtr, *mut u32);
    hsaKmtGetTileConfigCtx(CtxPtr, u32, *mut HsaGpuTileConfig);
    hsaKmtGetXNACKModeCtx(CtxPtr, *mut i32);
    hsaKmtHandleExport(*const c_void, *mut c_void, *mut c_void);
    hsaKmtHandleImport(*const c_void, *mut c_void, *mut c_void);
    hsaKmtImportExternalSemaphore(u32, *mut c_void, u32, *mut u64);
    hsaKmtMapMemoryToGPUNodesCtx(CtxPtr, *mut c_void, u64, *mut u64, A::MapFlags, u64, *mut u32);
    hsaKmtMemHandleFree(*mut c_void);
    hsaKmtMemHandleFreePreserveMetadata(*mut c_void);
    hsaKmtMemoryCpuMap(*mut c_void, *mut *mut c_void);
    hsaKmtMemoryGetCpuAddr(*mut c_void, *mut c_void, *mut u64);
    hsaKmtMemoryVaMap(*mut c_void, u64, u64, u64, u32, u32);
    hsaKmtMemoryVaUnmap(*mut c_void, u64, u64, u64, u32);
    hsaKmtModelEnabled(*mut bool);
    hsaKmtOpenSMICtx(CtxPtr, u32, *mut i32);
    hsaKmtPmcAcquireTraceAccessCtx(CtxPtr, u32, u64);
    hsaKmtPmcGetCounterPropertiesCtx(CtxPtr, u32, *mut *mut HsaCounterProperties);
    hsaKmtPmcRegisterTraceCtx(CtxPtr, u32, u32, *mut HsaCounter, *mut HsaPmcTraceRoot);
    hsaKmtPmcReleaseTraceAccessCtx(CtxPtr, u32, u64);
    hsaKmtPmcUnregisterTraceCtx(CtxPtr, u32, u64);
    hsaKmtQueryEventStateCtx(CtxPtr, *mut A::Event);
    hsaKmtQueueRingDoorbell(u64, u64);
    hsaKmtQueueSignalExternalSemaphore(u64, u64, u64);
    hsaKmtQueueWaitExternalSemaphore(u64, u64, u64);
    hsaKmtRegisterGraphicsHandleToNodesCtx(CtxPtr, u64, *mut A::GraphicsResourceInfo, u64, *mut u32);
    hsaKmtRegisterGraphicsHandleToNodesExt(u64, *mut A::GraphicsResourceInfo, u64, *mut u32, u32);
    hsaKmtRegisterGraphicsHandleToNodesExtCtx(CtxPtr, u64, *mut A::GraphicsResourceInfo, u64, *mut u32, u32);
    hsaKmtRegisterMemoryCtx(CtxPtr, *mut c_void, u64);
    hsaKmtRegisterMemoryToNodesCtx(CtxPtr, *mut c_void, u64, u64, *mut u32);
    hsaKmtRegisterMemoryWithFlagsCtx(CtxPtr, *mut c_void, u64, A::MemFlags);
    hsaKmtRegisterSharedHandleCtx(CtxPtr, *const HsaSharedMemoryHandle, *mut *mut c_void, *mut u64);
    hsaKmtRegisterSharedHandleToNodesCtx(CtxPtr, *const HsaSharedMemoryHandle, *mut *mut c_void, *mut u64, u64, *mut u32);
    hsaKmtReplaceAsanHeaderPageCtx(CtxPtr, *mut c_void);
    hsaKmtReportQueue(u64, *mut c_void);
    hsaKmtResetEventCtx(CtxPtr, *mut A::Event);
    hsaKmtReturnAsanHeaderPageCtx(CtxPtr, *mut c_void);
    hsaKmtSVMGetAttrCtx(CtxPtr, *mut c_void, u64, u32, *mut HSA_SVM_ATTRIBUTE);
    hsaKmtSVMSetAttrCtx(CtxPtr, *mut c_void, u64, u32, *mut HSA_SVM_ATTRIBUTE);
    hsaKmtSetMemoryPolicyCtx(CtxPtr, u32, u32, u32, *mut c_void, u64);
    hsaKmtSetMemoryUserDataCtx(CtxPtr, *const c_void, *mut c_void);
    hsaKmtSetQueueCUMaskCtx(CtxPtr, u64, u32, *mut u32);
    hsaKmtSetPersistingCacheSize(u32, u64);
    hsaKmtSetPersistingCacheSizeCtx(CtxPtr, u32, u64);
    hsaKmtSetSigbusDelay(u32, u32);
    hsaKmtSetTrapHandlerCtx(CtxPtr, u32, *mut c_void, u64, *mut c_void, u64);
    hsaKmtSetXNACKModeCtx(CtxPtr, i32);
    hsaKmtShareMemoryCtx(CtxPtr, *mut c_void, u64, *mut HsaSharedMemoryHandle);
    hsaKmtUnmapGraphicHandleCtx(CtxPtr, u32, u64, u64);
    hsaKmtUpdateQueueCtx(CtxPtr, u64, u32, i64, *mut c_void, u64, *mut A::Event);
    hsaKmtWaitOnEvent_ExtCtx(CtxPtr, *mut A::Event, u32, *mut u64);
    hsaKmtWaitOnMultipleEventsCtx(CtxPtr, *mut *mut A::Event, u32, bool, u32);
    hsaKmtWaitOnMultipleEvents_ExtCtx(CtxPtr, *mut *mut A::Event, u32, bool, u32, *mut u64);
}

/// The 67 functions Debian's libhsakmt 5.2.3 exports (libhsakmt-api.md
/// 1.2): the coverage table counts scenarios against this list for the
/// `rocm-5.2` generation.
pub const ROCM_5_2_EXPORTS: &[&str] = &[
    "hsaKmtAcquireSystemProperties",
    "hsaKmtAllocMemory",
    "hsaKmtAllocQueueGWS",
    "hsaKmtCloseKFD",
    "hsaKmtCreateEvent",
    "hsaKmtCreateQueue",
    "hsaKmtDbgAddressWatch",
    "hsaKmtDbgRegister",
    "hsaKmtDbgUnregister",
    "hsaKmtDbgWavefrontControl",
    "hsaKmtDeregisterMemory",
    "hsaKmtDestroyEvent",
    "hsaKmtDestroyQueue",
    "hsaKmtFreeMemory",
    "hsaKmtGetClockCounters",
    "hsaKmtGetKernelDebugTrapVersionInfo",
    "hsaKmtGetNodeCacheProperties",
    "hsaKmtGetNodeIoLinkProperties",
    "hsaKmtGetNodeMemoryProperties",
    "hsaKmtGetNodeProperties",
    "hsaKmtGetQueueInfo",
    "hsaKmtGetTileConfig",
    "hsaKmtGetVersion",
    "hsaKmtGetXNACKMode",
    "hsaKmtMapGraphicHandle",
    "hsaKmtMapMemoryToGPU",
    "hsaKmtMapMemoryToGPUNodes",
    "hsaKmtOpenKFD",
    "hsaKmtPmcAcquireTraceAccess",
    "hsaKmtPmcGetCounterProperties",
    "hsaKmtPmcQueryTrace",
    "hsaKmtPmcRegisterTrace",
    "hsaKmtPmcReleaseTraceAccess",
    "hsaKmtPmcStartTrace",
    "hsaKmtPmcStopTrace",
    "hsaKmtPmcUnregisterTrace",
    "hsaKmtProcessVMRead",
    "hsaKmtProcessVMWrite",
    "hsaKmtQueryEventState",
    "hsaKmtQueryPointerInfo",
    "hsaKmtRegisterGraphicsHandleToNodes",
    "hsaKmtRegisterMemory",
    "hsaKmtRegisterMemoryToNodes",
    "hsaKmtRegisterMemoryWithFlags",
    "hsaKmtRegisterSharedHandle",
    "hsaKmtRegisterSharedHandleToNodes",
    "hsaKmtReleaseSystemProperties",
    "hsaKmtResetEvent",
    "hsaKmtRuntimeDisable",
    "hsaKmtRuntimeEnable",
    "hsaKmtSPMAcquire",
    "hsaKmtSPMRelease",
    "hsaKmtSPMSetDestBuffer",
    "hsaKmtSVMGetAttr",
    "hsaKmtSVMSetAttr",
    "hsaKmtSetEvent",
    "hsaKmtSetMemoryPolicy",
    "hsaKmtSetMemoryUserData",
    "hsaKmtSetQueueCUMask",
    "hsaKmtSetTrapHandler",
    "hsaKmtSetXNACKMode",
    "hsaKmtShareMemory",
    "hsaKmtUnmapGraphicHandle",
    "hsaKmtUnmapMemoryToGPU",
    "hsaKmtUpdateQueue",
    "hsaKmtWaitOnEvent",
    "hsaKmtWaitOnMultipleEvents",
];

/// The 22 functions libhsakmt 6.2.4 exports that 5.2.3 does not (its
/// other 66 are 5.2.3's, without `hsaKmtGetKernelDebugTrapVersionInfo`).
pub const SINCE_6_2_EXPORTS: &[&str] = &[
    "hsaKmtAllocMemoryAlign",
    "hsaKmtAvailableMemory",
    "hsaKmtCheckRuntimeDebugSupport",
    "hsaKmtDbgDisable",
    "hsaKmtDbgEnable",
    "hsaKmtDbgGetDeviceData",
    "hsaKmtDbgGetQueueData",
    "hsaKmtDebugTrapIoctl",
    "hsaKmtExportDMABufHandle",
    "hsaKmtGetAMDGPUDeviceHandle",
    "hsaKmtGetRuntimeCapabilities",
    "hsaKmtOpenSMI",
    "hsaKmtPcSamplingCreate",
    "hsaKmtPcSamplingDestroy",
    "hsaKmtPcSamplingQueryCapabilities",
    "hsaKmtPcSamplingStart",
    "hsaKmtPcSamplingStop",
    "hsaKmtPcSamplingSupport",
    "hsaKmtReplaceAsanHeaderPage",
    "hsaKmtReturnAsanHeaderPage",
    "hsaKmtWaitOnEvent_Ext",
    "hsaKmtWaitOnMultipleEvents_Ext",
];

/// Every export of a generation: what the coverage table counts and the
/// `fuzz` family calls. The 5.2.3 list; for `rocm-6.2` that list without
/// the 5.2.3-only `hsaKmtGetKernelDebugTrapVersionInfo` plus
/// [`SINCE_6_2_EXPORTS`]; for `newest` the 5.2.3 list without that
/// function plus the newest-only entry points of the table (all of them:
/// a test compares the list with our newest build's exports).
pub fn coverage_list(kind: crate::abi::AbiKind) -> Vec<&'static str> {
    match kind {
        crate::abi::AbiKind::Rocm52 => ROCM_5_2_EXPORTS.to_vec(),
        crate::abi::AbiKind::Rocm62 => {
            let mut v: Vec<&str> = ROCM_5_2_EXPORTS
                .iter()
                .copied()
                .filter(|n| *n != "hsaKmtGetKernelDebugTrapVersionInfo")
                .collect();
            v.extend_from_slice(SINCE_6_2_EXPORTS);
            v.sort_unstable();
            v
        }
        crate::abi::AbiKind::Newest => {
            let mut v: Vec<&str> = ROCM_5_2_EXPORTS
                .iter()
                .copied()
                .filter(|n| *n != "hsaKmtGetKernelDebugTrapVersionInfo")
                .collect();
            let start = Api::<crate::abi::Newest>::NAMES
                .iter()
                .position(|n| *n == "hsaKmtExportDMABufHandle")
                .unwrap_or(0);
            v.extend_from_slice(&Api::<crate::abi::Newest>::NAMES[start..]);
            v
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::AbiKind;

    /// The newest generation's list (what the fuzz family calls and the
    /// coverage table counts) is every export of our newest build.
    #[test]
    fn the_newest_list_is_every_export() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../hsakmt/tests/data/newest_exports.txt"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let mut exports: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        exports.sort_unstable();
        let mut list = coverage_list(AbiKind::Newest);
        list.sort_unstable();
        assert_eq!(list, exports);
        assert_eq!(coverage_list(AbiKind::Rocm52).len(), 67);
    }
}
