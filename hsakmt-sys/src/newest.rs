//! hsakmt C types as the newest upstream header declares them:
//! ROCm/rocm-systems `projects/rocr-runtime/libhsakmt/include/hsakmt/
//! hsakmttypes.h` at commit 24bf20d307bd5a346d1ab5200b4197b1dbd1ddbf (the
//! multi-context generation, with the `HsaKFDContext` forward declaration).
//!
//! Differences from [`super::rocm_5_2`]: larger `HsaNodeProperties` (396),
//! `HsaCacheProperties` (1060), `HsaIoLinkProperties` (52),
//! `HsaGraphicsResourceInfo` (40), `HsaQueueResource` (52) and
//! `HsaQueueInfo` (76); new bits in `HSA_CAPABILITY` and `HsaMemFlags`;
//! new types (`HSA_CAPABILITY2`, `HsaHwException`, PC sampling, SMI
//! events, handle import/export, ...); new enum values
//! (`HSA_QUEUE_SDMA_BY_ENG_ID`, `HSA_POINTER_RESERVED_ADDR`, two SVM
//! flags). `HsaMemMapFlags` and the IOMMUv2 and kernel-driver profiling
//! block UUIDs no longer exist in this header (use the `rocm_5_2` ones).
//!
//! No copy of this header is installed; `tests/layout_hsakmt.rs` pins
//! every size and field offset by hand from the commit above.

use core::ffi::c_void;
use core::fmt;
use core::marker::{PhantomData, PhantomPinned};

pub use super::common::*;

/// `HsaKFDContext`: opaque handle of a KFD context (primary or secondary),
/// only ever used behind a pointer (`HsaKFDContext *`). Declared, not
/// defined, by the header.
#[repr(C)]
pub struct HsaKFDContext {
    _opaque: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

impl fmt::Debug for HsaKFDContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HsaKFDContext@{:p}", self)
    }
}

hsa_capability! {
    /// `HSA_CAPABILITY` (newest): node capabilities (`ui32` over `Value`).
    ;
    /// Precise ALU operations supported for debugging (newest).
    PreciseALUOperationsSupported, set_PreciseALUOperationsSupported: 30..31;
    /// Per-queue reset supported (newest).
    PerQueueResetSupported, set_PerQueueResetSupported: 31..32;
}

bitfield! {
    /// `HSA_CAPABILITY2` (newest only): more node capabilities (`ui32` over
    /// `Value`).
    #[repr(transparent)]
    pub struct HSA_CAPABILITY2(u32) {
        /// Per-SDMA-queue reset supported.
        PerSDMAQueueResetSupported, set_PerSDMAQueueResetSupported: 0..1;
        /// The device emulates AQL with PM4 packets.
        AqlEmulationPm4_, set_AqlEmulationPm4_: 1..2;
        /// The node runs in recoverable-fault (stall on retry) mode.
        StallOnRetryFault, set_StallOnRetryFault: 2..3;
        /// Reserved.
        Reserved, set_Reserved: 3..32;
    }
}

/// `HsaNodeProperties` (newest, 396 bytes): one topology node (out of
/// `hsaKmtGetNodeProperties(Ctx)`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaNodeProperties {
    /// Number of CPU cores (0 on a discrete GPU node).
    pub NumCPUCores: u32,
    /// Number of GPU SIMDs (0 on a CPU-only node).
    pub NumFComputeCores: u32,
    /// Number of neural processing units (newest).
    pub NumNeuralCores: u32,
    /// Number of memory banks.
    pub NumMemoryBanks: u32,
    /// Number of caches.
    pub NumCaches: u32,
    /// Number of IO links.
    pub NumIOLinks: u32,
    /// First CPU core id.
    pub CComputeIdLo: u32,
    /// First GPU compute unit id.
    pub FComputeIdLo: u32,
    /// Capabilities.
    pub Capability: HSA_CAPABILITY,
    /// More capabilities (newest).
    pub Capability2: HSA_CAPABILITY2,
    /// Maximum waves per SIMD.
    pub MaxWavesPerSIMD: u32,
    /// LDS size in KiB.
    pub LDSSizeInKB: u32,
    /// GDS size in KiB.
    pub GDSSizeInKB: u32,
    /// Wavefront size (32 or 64).
    pub WaveFrontSize: u32,
    /// Number of shader engines.
    pub NumShaderBanks: u32,
    /// SIMD arrays per engine.
    pub NumArrays: u32,
    /// Compute units per array.
    pub NumCUPerArray: u32,
    /// SIMDs per compute unit.
    pub NumSIMDPerCU: u32,
    /// Scratch wave slots per CU (0 = unlimited).
    pub MaxSlotsScratchCU: u32,
    /// Engine / firmware identification.
    pub EngineId: HSA_ENGINE_ID,
    /// Overridden engine identification (newest).
    pub OverrideEngineId: HSA_ENGINE_ID,
    /// PCI vendor id (0 on CPU nodes).
    pub VendorId: u16,
    /// PCI device id (0 on CPU nodes).
    pub DeviceId: u16,
    /// PCI bus/device/function.
    pub LocationId: u32,
    /// Local memory size in bytes.
    pub LocalMemSize: u64,
    /// Maximum GPU engine clock (MHz).
    pub MaxEngineClockMhzFCompute: u32,
    /// Maximum CPU engine clock (MHz).
    pub MaxEngineClockMhzCCompute: u32,
    /// DRM render node minor number.
    pub DrmRenderMinor: i32,
    /// Marketing name, UTF-16, NUL-terminated.
    pub MarketingName: [u16; HSA_PUBLIC_NAME_SIZE],
    /// AMD internal name, ASCII, NUL-terminated.
    pub AMDName: [u8; HSA_PUBLIC_NAME_SIZE],
    /// SDMA microcode versions.
    pub uCodeEngineVersions: HSA_ENGINE_VERSION,
    /// Debug properties.
    pub DebugProperties: HSA_DEBUG_PROPERTIES,
    /// xGMI hive id.
    pub HiveID: u64,
    /// PCIe-optimised SDMA engines.
    pub NumSdmaEngines: u32,
    /// xGMI-optimised SDMA engines.
    pub NumSdmaXgmiEngines: u32,
    /// SDMA queues per engine.
    pub NumSdmaQueuesPerEngine: u8,
    /// Compute queues.
    pub NumCpQueues: u8,
    /// GWS barriers.
    pub NumGws: u8,
    /// 1 for an integrated GPU (APU), 0 for a discrete one (was `Reserved2`).
    pub Integrated: u8,
    /// PCI domain.
    pub Domain: u32,
    /// Unique immutable device id.
    pub UniqueID: u64,
    /// VGPR bytes per CU.
    pub VGPRSizePerCU: u32,
    /// SGPR bytes per CU.
    pub SGPRSizePerCU: u32,
    /// Number of XCCs (newest).
    pub NumXcc: u32,
    /// KFD gpu_id hash (newest).
    pub KFDGpuID: u32,
    /// GPU family id (newest).
    pub FamilyID: u32,
    /// CWSR area size (newest).
    pub CwsrSize: u32,
    /// Control stack size (newest).
    pub CtlStackSize: u32,
    /// Windows LUID, low half (newest).
    pub LuidLowPart: u32,
    /// Windows LUID, high half (newest).
    pub LuidHighPart: u32,
    /// Wall clock frequency in kHz (newest).
    pub WallClockKHz: u64,
    /// 1 if fabric handles are supported (newest).
    pub FabricHandleSupported: u32,
}

node_name_helpers!(HsaNodeProperties);

/// `HsaCacheProperties` (newest, 1060 bytes): one cache (out of
/// `hsaKmtGetNodeCacheProperties(Ctx)`, an array of `NumCaches`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaCacheProperties {
    /// Processor id the cache belongs to.
    pub ProcessorIdLow: u32,
    /// Cache level (1, 2, ...).
    pub CacheLevel: u32,
    /// Size (KiB).
    pub CacheSize: u32,
    /// Line size in bytes.
    pub CacheLineSize: u32,
    /// Lines per tag.
    pub CacheLinesPerTag: u32,
    /// Associativity.
    pub CacheAssociativity: u32,
    /// Latency (ns).
    pub CacheLatency: u32,
    /// Kind of cache.
    pub CacheType: HsaCacheType,
    /// Processors sharing the cache, one bit each.
    pub SiblingMap: [u32; HSA_CPU_SIBLINGS],
    /// Maximum persisting cache size in the L2 (newest).
    pub PersistingCacheSizeMax: u32,
}

/// `HsaIoLinkProperties` (newest, 52 bytes): one IO link (out of
/// `hsaKmtGetNodeIoLinkProperties(Ctx)`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaIoLinkProperties {
    /// Bus type.
    pub IoLinkType: HSA_IOLINKTYPE,
    /// Bus interface major version.
    pub VersionMajor: u32,
    /// Bus interface minor version.
    pub VersionMinor: u32,
    /// Source node.
    pub NodeFrom: u32,
    /// Destination node.
    pub NodeTo: u32,
    /// Weight (relative distance).
    pub Weight: u32,
    /// Minimum latency (ns).
    pub MinimumLatency: u32,
    /// Maximum latency (ns).
    pub MaximumLatency: u32,
    /// Minimum bandwidth (MB/s).
    pub MinimumBandwidth: u32,
    /// Maximum bandwidth (MB/s).
    pub MaximumBandwidth: u32,
    /// Recommended transfer size (bytes).
    pub RecTransferSize: u32,
    /// Recommended SDMA engine id mask (newest; inserted before `Flags`).
    pub RecSdmaEngIdMask: u32,
    /// Link flags.
    pub Flags: HSA_LINKPROPERTY,
}

hsa_mem_flags! {
    /// `HsaMemFlags` (newest): allocation flags (in to
    /// `hsaKmtAllocMemory(Ctx)`, and to `hsaKmtMapMemoryToGPUNodes`, which
    /// takes `HsaMemFlags` in this header).
    ;
    /// Allocate memory only, return a handle, no virtual address.
    NoAddress, set_NoAddress: 18..19;
    /// Reserve a virtual address only, no memory.
    OnlyAddress, set_OnlyAddress: 19..20;
    /// System-scope coherence for atomics.
    ExtendedCoherent, set_ExtendedCoherent: 20..21;
    /// Memory mapped to GART for MES.
    GTTAccess, set_GTTAccess: 21..22;
    /// Contiguous VRAM.
    Contiguous, set_Contiguous: 22..23;
    /// Memory for a blit kernel object.
    ExecuteBlit, set_ExecuteBlit: 23..24;
    /// AQL queue object (Windows).
    QueueObject, set_QueueObject: 24..25;
    /// Reserved.
    Reserved, set_Reserved: 25..32;
}

/// `HsaGraphicsResourceInfo` (newest, 40 bytes): an imported graphics
/// buffer (in/out of `hsaKmtRegisterGraphicsHandleToNodes(Ext)`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaGraphicsResourceInfo {
    /// Address to use with `hsaKmtMapMemoryToGPU(Nodes)` (out).
    pub MemoryAddress: *mut c_void,
    /// Buffer size (out).
    pub SizeInBytes: u64,
    /// Metadata owned by the thunk (out).
    pub Metadata: *const c_void,
    /// Size of the metadata (out).
    pub MetadataSizeInBytes: u32,
    /// GPU node that exported the buffer (out; was `Reserved`).
    pub NodeId: u32,
    /// Size hint for foreign resources, 0 if unknown (in, newest).
    pub SizeHintInBytes: u64,
}

/// `HsaWddmSurfaceMetadata` (newest only): Windows surface metadata blob
/// that `HsaGraphicsResourceInfo::Metadata` may point to.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaWddmSurfaceMetadata {
    /// Unused.
    pub version: u32,
    /// Swizzle mode.
    pub swizzle_mode: u32,
    /// Tile swizzle (pipe-bank XOR).
    pub tile_swizzle: u32,
    /// Compression mode (0 = uncompressed).
    pub compression_mode: u32,
    /// Maximum compressed block size.
    pub max_comp_blk: u32,
    /// Maximum uncompressed block size.
    pub max_uncomp_blk: u32,
}

hsa_queue_type! {
    /// `HSA_QUEUE_TYPE` (newest): queue kind (in to `hsaKmtCreateQueue*`).
    ;
    /// Queue on an explicitly chosen SDMA engine (newest).
    HSA_QUEUE_SDMA_BY_ENG_ID = 6,
}

/// `HsaQueueInfo` (newest, 76 bytes): queue details (out of
/// `hsaKmtGetQueueInfo(Ctx)`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaQueueInfo {
    /// Hardware-specific error state.
    pub QueueDetailError: u32,
    /// Hardware-specific queue type (0 = none).
    pub QueueTypeExtended: u32,
    /// Bits in `CUMaskInfo` (multiple of 32).
    pub NumCUAssigned: u32,
    /// CU assignment bit array.
    pub CUMaskInfo: *mut u32,
    /// User context save area.
    pub UserContextSaveArea: *mut u32,
    /// Size of the save area.
    pub SaveAreaSizeInBytes: u64,
    /// Control stack top.
    pub ControlStackTop: *mut u32,
    /// Bytes of control stack in use.
    pub ControlStackUsedInBytes: u64,
    /// Save area header.
    pub SaveAreaHeader: *mut HsaUserContextSaveAreaHeader,
    /// Reserved.
    pub Reserved2: u64,
    /// Size of the whole save area per XCC (newest).
    pub SaveAreaAllocSize: u64,
}

/// `HsaQueueResource` (newest, 52 bytes): a created queue (in/out of
/// `hsaKmtCreateQueue*`). The anonymous pointer/value unions are stored
/// as their 64-bit members; the pointer members are methods.
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaQueueResource {
    /// Queue id.
    pub QueueId: HSA_QUEUEID,
    /// Doorbell address (union with `Queue_DoorBell(_aql)`).
    pub QueueDoorBell: u64,
    /// Write pointer address (union with `Queue_write_ptr(_aql)`).
    pub QueueWptrValue: u64,
    /// Read pointer address (union with `Queue_read_ptr(_aql)`).
    pub QueueRptrValue: u64,
    /// Exception bits signal payload.
    pub ErrorReason: *mut i64,
    /// SDMA progress fence GPU address (Windows only, else 0; newest).
    pub SdmaProgressFenceVA: u64,
    /// SDMA epilogue bytes per doorbell (Windows only, else 0; newest).
    pub SdmaHwQueueEpilogueBytes: u32,
}

queue_resource_accessors!(HsaQueueResource);

c_enum! {
    /// `HSA_DBG_TRAP_EXCEPTION_CODE` (newest only): debugger exception
    /// codes (bit `code - 1` of an exception mask, see [`HSA_EC_MASK`]).
    pub struct HSA_DBG_TRAP_EXCEPTION_CODE(u32) {
        /// No exception.
        HSA_DBG_EC_NONE = 0,
        /// Queue: wave abort.
        HSA_DBG_EC_QUEUE_WAVE_ABORT = 1,
        /// Queue: wave trap.
        HSA_DBG_EC_QUEUE_WAVE_TRAP = 2,
        /// Queue: wave math error.
        HSA_DBG_EC_QUEUE_WAVE_MATH_ERROR = 3,
        /// Queue: illegal instruction.
        HSA_DBG_EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION = 4,
        /// Queue: memory violation.
        HSA_DBG_EC_QUEUE_WAVE_MEMORY_VIOLATION = 5,
        /// Queue: aperture violation.
        HSA_DBG_EC_QUEUE_WAVE_APERTURE_VIOLATION = 6,
        /// Queue: invalid dispatch dimensions.
        HSA_DBG_EC_QUEUE_PACKET_DISPATCH_DIM_INVALID = 16,
        /// Queue: invalid group segment size.
        HSA_DBG_EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID = 17,
        /// Queue: invalid code object.
        HSA_DBG_EC_QUEUE_PACKET_DISPATCH_CODE_INVALID = 18,
        /// Queue: reserved packet.
        HSA_DBG_EC_QUEUE_PACKET_RESERVED = 19,
        /// Queue: unsupported packet.
        HSA_DBG_EC_QUEUE_PACKET_UNSUPPORTED = 20,
        /// Queue: invalid work-group size.
        HSA_DBG_EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID = 21,
        /// Queue: invalid register count.
        HSA_DBG_EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID = 22,
        /// Queue: unsupported vendor packet.
        HSA_DBG_EC_QUEUE_PACKET_VENDOR_UNSUPPORTED = 23,
        /// Queue: preemption error.
        HSA_DBG_EC_QUEUE_PREEMPTION_ERROR = 30,
        /// Queue: new queue.
        HSA_DBG_EC_QUEUE_NEW = 31,
        /// Device: queue deleted.
        HSA_DBG_EC_DEVICE_QUEUE_DELETE = 32,
        /// Device: memory violation.
        HSA_DBG_EC_DEVICE_MEMORY_VIOLATION = 33,
        /// Device: RAS error.
        HSA_DBG_EC_DEVICE_RAS_ERROR = 34,
        /// Device: fatal halt.
        HSA_DBG_EC_DEVICE_FATAL_HALT = 35,
        /// Device: new device.
        HSA_DBG_EC_DEVICE_NEW = 36,
        /// Process: runtime event.
        HSA_DBG_EC_PROCESS_RUNTIME = 48,
        /// Process: device removed.
        HSA_DBG_EC_PROCESS_DEVICE_REMOVE = 49,
        /// One past the last code.
        HSA_DBG_EC_MAX = 50,
    }
}

/// `HSA_EC_MASK(ecode)` (newest only): the exception-mask bit of a code,
/// `1 << (ecode - 1)`. `ecode` must be 1..=64.
pub const fn HSA_EC_MASK(ecode: u32) -> u64 {
    1u64 << (ecode - 1)
}

/// `HSA_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK` (newest only): runtime
/// capability bit for core dump support.
pub const HSA_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK: u32 = 0x8000_0000;

c_enum! {
    /// `HSA_EVENTID_HW_EXCEPTION_CAUSE` (newest only): hardware exception
    /// cause.
    pub struct HSA_EVENTID_HW_EXCEPTION_CAUSE(u32) {
        /// GPU hang.
        HSA_EVENTID_HW_EXCEPTION_GPU_HANG = 0,
        /// SRAM ECC error.
        HSA_EVENTID_HW_EXCEPTION_ECC = 1,
    }
}

/// `HsaHwException` (newest only): data of a hardware exception event.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaHwException {
    /// Node of the device.
    pub NodeId: u32,
    /// Reset type.
    pub ResetType: u32,
    /// Non-zero if memory was lost.
    pub MemoryLost: u32,
    /// Cause.
    pub ResetCause: HSA_EVENTID_HW_EXCEPTION_CAUSE,
}

/// The C member `HsaEventData::EventData` (newest): per-kind event data.
#[repr(C, packed(4))]
#[derive(Clone, Copy)]
pub union HsaEventDataUnion {
    /// Signal and other events: the sync variable.
    pub SyncVar: HsaSyncVar,
    /// Node change events.
    pub NodeChangeState: HsaNodeChange,
    /// Device state change events.
    pub DeviceState: HsaDeviceStateChange,
    /// Memory fault events.
    pub MemoryAccessFault: HsaMemoryAccessFault,
    /// Hardware exception events (newest).
    pub HwException: HsaHwException,
}

impl HsaEventDataUnion {
    /// The 20 raw bytes of the union.
    pub fn bytes(&self) -> [u8; 20] {
        // SAFETY: the union is 20 bytes of plain integer data (checked by
        // the layout test); any bit pattern is a valid byte array.
        unsafe { core::mem::transmute::<HsaEventDataUnion, [u8; 20]>(*self) }
    }
}

impl fmt::Debug for HsaEventDataUnion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HsaEventDataUnion({:02x?})", self.bytes())
    }
}

event_data_types!();

/// `HsaFabricHandle` (newest only): a fabric memory handle.
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaFabricHandle {
    /// Opaque handle words.
    pub handle: [u64; 2],
}

hsa_pointer_type! {
    /// `HSA_POINTER_TYPE` (newest): how memory behind a pointer was
    /// obtained.
    ;
    /// Address-only reservation (newest).
    HSA_POINTER_RESERVED_ADDR = 5,
}

pointer_info_type!();

hsa_svm_flags! {
    /// `HSA_SVM_FLAGS` (newest): SVM range flags.
    ;
    /// Keep GPU mappings valid as if XNACK were off (newest).
    HSA_SVM_FLAG_GPU_ALWAYS_MAPPED = 0x40,
    /// Fine-grained coherence with device-scope atomics (newest).
    HSA_SVM_FLAG_EXT_COHERENT = 0x80,
}

c_enum! {
    /// `HSA_EVENT_TYPE` (tag `_HSA_SMI_EVENT`, newest only): SMI event ids.
    pub struct HSA_EVENT_TYPE(u32) {
        /// Unused.
        HSA_SMI_EVENT_NONE = 0,
        /// VM fault.
        HSA_SMI_EVENT_VMFAULT = 1,
        /// Thermal throttling.
        HSA_SMI_EVENT_THERMAL_THROTTLE = 2,
        /// Before a GPU reset.
        HSA_SMI_EVENT_GPU_PRE_RESET = 3,
        /// After a GPU reset.
        HSA_SMI_EVENT_GPU_POST_RESET = 4,
        /// Migration start.
        HSA_SMI_EVENT_MIGRATE_START = 5,
        /// Migration end.
        HSA_SMI_EVENT_MIGRATE_END = 6,
        /// Page fault start.
        HSA_SMI_EVENT_PAGE_FAULT_START = 7,
        /// Page fault end.
        HSA_SMI_EVENT_PAGE_FAULT_END = 8,
        /// Queue eviction.
        HSA_SMI_EVENT_QUEUE_EVICTION = 9,
        /// Queue restore.
        HSA_SMI_EVENT_QUEUE_RESTORE = 10,
        /// Unmap from GPU.
        HSA_SMI_EVENT_UNMAP_FROM_GPU = 11,
        /// One past the last event index.
        HSA_SMI_EVENT_INDEX_MAX = 12,
        /// Flag: events of all processes (needs privileges).
        HSA_SMI_EVENT_ALL_PROCESS = 64,
    }
}

c_enum! {
    /// `HSA_MIGRATE_TRIGGERS` (newest only): why a migration happened.
    pub struct HSA_MIGRATE_TRIGGERS(u32) {
        /// Prefetch.
        HSA_MIGRATE_TRIGGER_PREFETCH = 0,
        /// GPU page fault.
        HSA_MIGRATE_TRIGGER_PAGEFAULT_GPU = 1,
        /// CPU page fault.
        HSA_MIGRATE_TRIGGER_PAGEFAULT_CPU = 2,
        /// TTM eviction.
        HSA_MIGRATE_TRIGGER_TTM_EVICTION = 3,
    }
}

c_enum! {
    /// `HSA_QUEUE_EVICTION_TRIGGERS` (newest only): why queues were evicted.
    pub struct HSA_QUEUE_EVICTION_TRIGGERS(u32) {
        /// SVM.
        HSA_QUEUE_EVICTION_TRIGGER_SVM = 0,
        /// Userptr.
        HSA_QUEUE_EVICTION_TRIGGER_USERPTR = 1,
        /// TTM.
        HSA_QUEUE_EVICTION_TRIGGER_TTM = 2,
        /// Suspend.
        HSA_QUEUE_EVICTION_TRIGGER_SUSPEND = 3,
        /// CRIU checkpoint.
        HSA_QUEUE_EVICTION_CRIU_CHECKPOINT = 4,
        /// CRIU restore.
        HSA_QUEUE_EVICTION_CRIU_RESTORE = 5,
    }
}

c_enum! {
    /// `HSA_SVM_UNMAP_TRIGGERS` (newest only): why an SVM range was unmapped.
    pub struct HSA_SVM_UNMAP_TRIGGERS(u32) {
        /// MMU notifier.
        HSA_SVM_UNMAP_TRIGGER_MMU_NOTIFY = 0,
        /// MMU notifier during migration.
        HSA_SVM_UNMAP_TRIGGER_MMU_NOTIFY_MIGRATE = 1,
        /// Unmapped from the CPU.
        HSA_SVM_UNMAP_TRIGGER_UNMAP_FROM_CPU = 2,
    }
}

/// `HSA_SMI_EVENT_MASK_FROM_INDEX(i)` (newest only): `1 << (i - 1)`.
/// `i` must be 1..=64.
pub const fn HSA_SMI_EVENT_MASK_FROM_INDEX(i: u32) -> u64 {
    1u64 << (i - 1)
}

/// `HSA_SMI_EVENT_MSG_SIZE` (newest only): size of one SMI event message.
pub const HSA_SMI_EVENT_MSG_SIZE: usize = 96;

/// `HsaAMDGPUDeviceHandle` (newest only): libdrm amdgpu device handle.
pub type HsaAMDGPUDeviceHandle = *mut c_void;

/// `HsaPcSamplingTraceId` (newest only): PC sampling session id.
pub type HsaPcSamplingTraceId = u32;

c_enum! {
    /// `HSA_PC_SAMPLING_METHOD_KIND` (newest only): PC sampling method.
    pub struct HSA_PC_SAMPLING_METHOD_KIND(u32) {
        /// Host trap, version 1.
        HSA_PC_SAMPLING_METHOD_KIND_HOSTTRAP_V1 = 1,
        /// Stochastic, version 1.
        HSA_PC_SAMPLING_METHOD_KIND_STOCHASTIC_V1 = 2,
    }
}

c_enum! {
    /// `HSA_PC_SAMPLING_UNIT_INTERVAL` (tag `_HSA_PC_SAMPLING_UNITS`,
    /// newest only): unit of a sampling interval.
    pub struct HSA_PC_SAMPLING_UNIT_INTERVAL(u32) {
        /// Microseconds.
        HSA_PC_SAMPLING_UNIT_INTERVAL_MICROSECONDS = 0,
        /// Cycles.
        HSA_PC_SAMPLING_UNIT_INTERVAL_CYCLES = 1,
        /// Instructions.
        HSA_PC_SAMPLING_UNIT_INTERVAL_INSTRUCTIONS = 2,
    }
}

/// `HsaPcSamplingInfo` (newest only): one PC sampling configuration (out
/// of `hsaKmtPcSamplingQueryCapabilities`, in to `hsaKmtPcSamplingCreate`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaPcSamplingInfo {
    /// Interval.
    pub value: u64,
    /// Minimum interval.
    pub value_min: u64,
    /// Maximum interval.
    pub value_max: u64,
    /// Flags.
    pub flags: u64,
    /// Method.
    pub method: HSA_PC_SAMPLING_METHOD_KIND,
    /// Interval unit.
    pub units: HSA_PC_SAMPLING_UNIT_INTERVAL,
}

bitfield! {
    /// `HSA_REGISTER_MEM_FLAGS` (newest only): flags of
    /// `hsaKmtRegisterMemoryWithFlags` (`ui32` over `Value`; the header
    /// names no reserved bits).
    #[repr(transparent)]
    pub struct HSA_REGISTER_MEM_FLAGS(u32) {
        /// A virtual address is required.
        requiresVAddr, set_requiresVAddr: 0..1;
        /// The handle is a KMT handle.
        kmtHandle, set_kmtHandle: 1..2;
    }
}

c_enum! {
    /// `HsaAisFlags` (newest only): AIS file access direction.
    pub struct HsaAisFlags(u32) {
        /// Read.
        HSA_AIS_READ = 0x1,
        /// Write.
        HSA_AIS_WRITE = 0x2,
    }
}

/// Target of `HsaMemoryObjectHandle` (C `struct _HsaMemoryObjectHandle`,
/// never defined).
#[repr(C)]
pub struct _HsaMemoryObjectHandle {
    _opaque: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

impl fmt::Debug for _HsaMemoryObjectHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "_HsaMemoryObjectHandle@{:p}", self)
    }
}

/// `HsaMemoryObjectHandle` (newest only): opaque driver buffer object
/// handle.
pub type HsaMemoryObjectHandle = *mut _HsaMemoryObjectHandle;

c_enum! {
    /// `HsaMemoryMapFlags` (newest only): CPU access permission of a
    /// mapping.
    pub struct HsaMemoryMapFlags(u32) {
        /// No access.
        HSA_MEMORY_ACCESS_NONE = 0,
        /// Read-only.
        HSA_MEMORY_ACCESS_RO = 1,
        /// Write-only.
        HSA_MEMORY_ACCESS_WO = 2,
        /// Read-write.
        HSA_MEMORY_ACCESS_RW = 3,
    }
}

c_enum! {
    /// `HsaExternalHandleType` (newest only): kind of an imported or
    /// exported handle.
    pub struct HsaExternalHandleType(u32) {
        /// GEM flink name.
        HSA_EXTERNAL_HANDLE_GEM_FLINK_NAME = 0,
        /// KMS handle.
        HSA_EXTERNAL_HANDLE_KMS = 1,
        /// DMA-buf file descriptor.
        HSA_EXTERNAL_HANDLE_DMA_BUF = 2,
        /// Fabric handle.
        HSA_EXTERNAL_HANDLE_FABRIC = 3,
    }
}

/// The anonymous union of `HsaHandleImportDesc` (newest only).
#[repr(C, packed(4))]
#[derive(Clone, Copy)]
pub union HsaHandleImportDescHandle {
    /// DMA-buf file descriptor.
    pub dmabuf_fd: i64,
    /// Driver buffer handle.
    pub buf_handle: HsaMemoryObjectHandle,
    /// Fabric handle.
    pub fabric: HsaFabricHandle,
}

impl HsaHandleImportDescHandle {
    /// The 16 raw bytes of the union.
    pub fn bytes(&self) -> [u8; 16] {
        // SAFETY: 16 bytes of plain data (size checked by the pinned layout
        // test); any bit pattern is a valid byte array.
        unsafe { core::mem::transmute::<HsaHandleImportDescHandle, [u8; 16]>(*self) }
    }
}

impl fmt::Debug for HsaHandleImportDescHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HsaHandleImportDescHandle({:02x?})", self.bytes())
    }
}

/// `HsaHandleImportDesc` (newest only, 40 bytes): what to import (in to
/// `hsaKmtHandleImport`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug)]
pub struct HsaHandleImportDesc {
    /// GPU device handle.
    pub device_handle: HsaAMDGPUDeviceHandle,
    /// Handle kind.
    pub r#type: HsaExternalHandleType,
    /// The handle (C anonymous union: `dmabuf_fd`, `buf_handle`, `fabric`).
    pub handle: HsaHandleImportDescHandle,
    /// Existing buffer address (Windows and WSL only).
    pub mem: *mut c_void,
    /// IPC metadata.
    pub metadata: u32,
}

/// `HsaHandleImportResult` (newest only, 24 bytes): an imported buffer
/// (out of `hsaKmtHandleImport`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaHandleImportResult {
    /// Buffer object handle.
    pub buf_handle: HsaMemoryObjectHandle,
    /// DMA-buf file descriptor.
    pub dmabuf_fd: i32,
    /// Allocation size.
    pub alloc_size: u64,
    /// IPC metadata.
    pub metadata: u32,
}

bitfield! {
    /// `HsaHandleImportFlags` (newest only): import flags (a struct holding
    /// a `ui32` bit-field struct; no `Value` member in C).
    #[repr(transparent)]
    pub struct HsaHandleImportFlags(u32) {
        /// The handle is an IPC handle.
        IPCHandle, set_IPCHandle: 0..1;
        /// The memory is system memory.
        SysMem, set_SysMem: 1..2;
        /// Update the metadata with the IPC handle.
        UpdateMetadata, set_UpdateMetadata: 2..3;
        /// Reserved.
        Reserved, set_Reserved: 3..32;
    }
}

/// `HsaStructureSizes` (newest only): struct sizes a caller was built
/// with, for size negotiation.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaStructureSizes {
    /// `sizeof(HsaStructureSizes)`.
    pub StructureSizes: u16,
    /// `sizeof(HsaNodeProperties)`.
    pub SizeOfHsaNodeProperties: u16,
    /// `sizeof(HsaHandleImportDesc)` (historical name).
    pub SizeOfHsaExternalHandleDesc: u16,
    /// Reserved.
    pub Reserved: [u16; 5],
}

c_enum! {
    /// `HSA_EXTERNAL_SEMAPHORE_HANDLE_TYPE` (newest only).
    pub struct HSA_EXTERNAL_SEMAPHORE_HANDLE_TYPE(u32) {
        /// Win32 handle.
        HSA_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32 = 0,
        /// Win32 KMT handle.
        HSA_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32_KMT = 1,
        /// File descriptor (Linux).
        HSA_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD = 2,
    }
}

/// `HSA_EXTERNAL_SEMAPHORE_HANDLE` (newest only): an external semaphore.
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HSA_EXTERNAL_SEMAPHORE_HANDLE {
    /// Opaque handle.
    pub handle: u64,
}

/// `HsaHandleExportDesc` (newest only, 28 bytes): what to export (in to
/// `hsaKmtHandleExport`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaHandleExportDesc {
    /// GPU device handle.
    pub device_handle: HsaAMDGPUDeviceHandle,
    /// Handle kind wanted.
    pub r#type: HsaExternalHandleType,
    /// Thunk buffer object.
    pub buf_handle: HsaMemoryObjectHandle,
    /// Size.
    pub size: u64,
}

/// `HsaMemoryExportResult` (newest only, 16 bytes): an exported handle
/// (out of `hsaKmtHandleExport`). A struct holding one anonymous union in
/// C, so it is the union here.
#[repr(C, packed(4))]
#[derive(Clone, Copy)]
pub union HsaMemoryExportResult {
    /// DMA-buf file descriptor.
    pub dmabuf_fd: i32,
    /// Fabric handle.
    pub fabric: HsaFabricHandle,
}

impl HsaMemoryExportResult {
    /// The 16 raw bytes of the union.
    pub fn bytes(&self) -> [u8; 16] {
        // SAFETY: 16 bytes of plain data (size checked by the pinned layout
        // test); any bit pattern is a valid byte array.
        unsafe { core::mem::transmute::<HsaMemoryExportResult, [u8; 16]>(*self) }
    }
}

impl fmt::Debug for HsaMemoryExportResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HsaMemoryExportResult({:02x?})", self.bytes())
    }
}

bitfield! {
    /// `HsaHandleExportFlags` (newest only): export flags (all reserved).
    #[repr(transparent)]
    pub struct HsaHandleExportFlags(u32) {
        /// Reserved.
        Reserved, set_Reserved: 0..32;
    }
}

zeroed_default!(
    HsaNodeProperties,
    HsaCacheProperties,
    HsaGraphicsResourceInfo,
    HsaQueueInfo,
    HsaQueueResource,
    HsaEventDataUnion,
    HsaHandleImportDescHandle,
    HsaHandleImportDesc,
    HsaHandleImportResult,
    HsaHandleExportDesc,
    HsaMemoryExportResult,
);
