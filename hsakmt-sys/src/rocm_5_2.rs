//! hsakmt C types exactly as Debian's libhsakmt-dev 5.2.3
//! `/usr/include/hsakmttypes.h` declares them: the ABI of Debian's
//! libhsakmt 5.2.3 and of the ROCr 5.2.3 built against it.
//!
//! Every item of that header is here (this module plus the re-exported
//! [`super::common`]); `tests/layout_hsakmt.rs` checks each size, field
//! offset, enum value, constant and bit-field position against the header
//! with a C probe.

use core::ffi::c_void;
use core::fmt;

pub use super::common::*;

hsa_capability! {
    /// `HSA_CAPABILITY` (5.2.3): node capabilities (`ui32` over `Value`);
    /// the top two bits are reserved.
    ;
    /// Reserved (5.2.3).
    Reserved, set_Reserved: 30..32;
}

/// `HsaNodeProperties` (5.2.3, 356 bytes): one topology node (out of
/// `hsaKmtGetNodeProperties`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaNodeProperties {
    /// Number of CPU cores (0 on a discrete GPU node).
    pub NumCPUCores: u32,
    /// Number of GPU SIMDs (0 on a CPU-only node).
    pub NumFComputeCores: u32,
    /// Number of memory banks (`hsaKmtGetNodeMemoryProperties`).
    pub NumMemoryBanks: u32,
    /// Number of caches (`hsaKmtGetNodeCacheProperties`).
    pub NumCaches: u32,
    /// Number of IO links (`hsaKmtGetNodeIoLinkProperties`).
    pub NumIOLinks: u32,
    /// First CPU core id.
    pub CComputeIdLo: u32,
    /// First GPU compute unit id.
    pub FComputeIdLo: u32,
    /// Capabilities.
    pub Capability: HSA_CAPABILITY,
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
    /// Reserved (became `Integrated` in later headers).
    pub Reserved2: u8,
    /// PCI domain.
    pub Domain: u32,
    /// Unique immutable device id.
    pub UniqueID: u64,
    /// VGPR bytes per CU.
    pub VGPRSizePerCU: u32,
    /// SGPR bytes per CU.
    pub SGPRSizePerCU: u32,
    /// Reserved (later headers put NumXcc, KFDGpuID, FamilyID here).
    pub Reserved: [u8; 12],
}

node_name_helpers!(HsaNodeProperties);

/// `HsaCacheProperties` (5.2.3, 1056 bytes): one cache (out of
/// `hsaKmtGetNodeCacheProperties`, an array of `NumCaches`).
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
}

/// `HsaIoLinkProperties` (5.2.3, 48 bytes): one IO link (out of
/// `hsaKmtGetNodeIoLinkProperties`, an array of `NumIOLinks`).
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
    /// Link flags.
    pub Flags: HSA_LINKPROPERTY,
}

hsa_mem_flags! {
    /// `HsaMemFlags` (5.2.3): allocation flags (in to `hsaKmtAllocMemory`,
    /// out in `HsaPointerInfo`); bits 18..32 are reserved.
    ;
    /// Reserved (5.2.3).
    Reserved, set_Reserved: 18..32;
}

bitfield! {
    /// `HsaMemMapFlags` (5.2.3 only; gone from the newest header): GPU
    /// mapping flags (in to `hsaKmtMapMemoryToGPUNodes`). The bits do not
    /// line up with `HsaMemFlags`.
    #[repr(transparent)]
    pub struct HsaMemMapFlags(u32) {
        /// Reserved.
        Reserved1, set_Reserved1: 0..1;
        /// Caching (`HSA_CACHING_TYPE`).
        CachePolicy, set_CachePolicy: 1..3;
        /// Not modified while mapped.
        ReadOnly, set_ReadOnly: 3..4;
        /// Page size hint (`HSA_PAGE_SIZE`).
        PageSize, set_PageSize: 4..6;
        /// The host may access the mapping.
        HostAccess, set_HostAccess: 6..7;
        /// Hint: allow migration to the mapping GPUs' memory.
        Migrate, set_Migrate: 7..8;
        /// Hint: the range will be mapped soon.
        Probe, set_Probe: 8..9;
        /// Reserved.
        Reserved, set_Reserved: 9..32;
    }
}

/// `HsaGraphicsResourceInfo` (5.2.3, 32 bytes): an imported graphics
/// buffer (out of `hsaKmtRegisterGraphicsHandleToNodes`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaGraphicsResourceInfo {
    /// Address to use with `hsaKmtMapMemoryToGPU(Nodes)`.
    pub MemoryAddress: *mut c_void,
    /// Buffer size.
    pub SizeInBytes: u64,
    /// Metadata owned by the thunk.
    pub Metadata: *const c_void,
    /// Size of the metadata.
    pub MetadataSizeInBytes: u32,
    /// Reserved, set to 0 (later headers: `NodeId`).
    pub Reserved: u32,
}

hsa_queue_type! {
    /// `HSA_QUEUE_TYPE` (5.2.3): queue kind (in to `hsaKmtCreateQueue`).
    ;
}

/// `HsaQueueInfo` (5.2.3, 68 bytes): queue details (out of
/// `hsaKmtGetQueueInfo`).
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
}

/// `HsaQueueResource` (5.2.3, 40 bytes): a created queue (in/out of
/// `hsaKmtCreateQueue`: the thunk fills `QueueId`, the doorbell and,
/// for AQL queues, keeps the caller's read/write pointers).
///
/// The three C anonymous unions (pointer or 64-bit value) are stored as
/// their 64-bit members; the pointer members are methods.
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
}

queue_resource_accessors!(HsaQueueResource);

/// The C member `HsaEventData::EventData` (5.2.3): per-kind event data.
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

zeroed_default!(
    HsaNodeProperties,
    HsaCacheProperties,
    HsaGraphicsResourceInfo,
    HsaQueueInfo,
    HsaQueueResource,
    HsaEventDataUnion,
);

event_data_types!();

hsa_pointer_type! {
    /// `HSA_POINTER_TYPE` (5.2.3): how memory behind a pointer was
    /// obtained.
    ;
}

pointer_info_type!();

hsa_svm_flags! {
    /// `HSA_SVM_FLAGS` (5.2.3): SVM range flags (values of the SET/CLR
    /// flag attributes).
    ;
}

/// Profiling block: IOMMUv2 (5.2.3 only).
pub const HSA_PROFILEBLOCK_AMD_IOMMUV2: HSA_UUID = HSA_UUID::new(
    0x8096_9879,
    0xb0f6,
    0x4be6,
    [0x97, 0xf6, 0x6a, 0x63, 0x00, 0xf5, 0x10, 0x1d],
);

/// Profiling block: the KFD itself (5.2.3 only).
pub const HSA_PROFILEBLOCK_AMD_KERNEL_DRIVER: HSA_UUID = HSA_UUID::new(
    0xea9b_5ae1,
    0x6c3f,
    0x44b3,
    [0x89, 0x54, 0xda, 0xf0, 0x75, 0x65, 0xa9, 0x0a],
);
