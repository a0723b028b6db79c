//! hsakmt C types of the newest generation: the thunk that ROCm 7.2.4
//! links into ROCr (rocm-systems tag `rocm-7.2.4`, branch
//! `release/rocm-rel-7.2`; Debian experimental's `libhsa-runtime64-1`
//! 7.2.4+dfsg-1~exp1 is built from it), the one a third-party thunk loaded
//! through ROCr's DTIF door (`libdtif.so`) must match.
//!
//! ROCm 7.x installs no `hsakmttypes.h`, so these layouts are written by
//! hand. Where they come from:
//! - The rocm-systems header `projects/rocr-runtime/libhsakmt/include/
//!   hsakmt/hsakmttypes.h` as of develop 1b1610fc2b2a (Aug 2025, before
//!   the 7.2 branch), whose sizes gcc lays out as 368/1056/52/32/40/68
//!   bytes for `HsaNodeProperties`, `HsaCacheProperties`,
//!   `HsaIoLinkProperties`, `HsaGraphicsResourceInfo`, `HsaQueueResource`
//!   and `HsaQueueInfo`;
//! - plus `CwsrSize` and `CtlStackSize` at the end of `HsaNodeProperties`
//!   (376 bytes), which the 7.2.4 binary shows: ROCr 7.2.4 copies node
//!   properties as 0x178 bytes (`rep movsq` of 47 quadwords in its agent
//!   constructors), indexes cache arrays by 0x420 bytes, and its thunk
//!   reads `cwsr_size`, `ctl_stack_size`, `capability2` and
//!   `recommended_sdma_engine_id_mask` from sysfs, but nothing of the
//!   later Windows LUID, wall-clock, fabric-handle, persisting-cache,
//!   SDMA-epilogue or save-area-alloc fields.
//!
//! Differences from [`super::rocm_5_2`]: larger `HsaNodeProperties` (376)
//! and `HsaIoLinkProperties` (52); new bits in `HSA_CAPABILITY` and
//! `HsaMemFlags`; new types (`HSA_CAPABILITY2`, `HsaHwException`, PC
//! sampling, SMI events, ...); new enum values
//! (`HSA_QUEUE_SDMA_BY_ENG_ID`, `HSA_POINTER_RESERVED_ADDR`, two SVM
//! flags).
//!
//! Additions newer than 7.2.4, kept because functions kfd-rs exports use
//! them and none changes a 7.2.4 layout: the handle import/export types
//! (`HsaHandleImportDesc`, `HsaFabricHandle`, ...), `HsaWddmSurfaceMetadata`,
//! the external-semaphore types, `HsaStructureSizes`, and the bits
//! `HsaMemFlags::QueueObject`, `HSA_CAPABILITY2::AqlEmulationPm4_` and
//! `StallOnRetryFault` (reserved, hence 0, in 7.2.4). `HsaMemMapFlags`
//! and the IOMMUv2 and kernel-driver profiling block UUIDs are not
//! declared here (use the `rocm_5_2` ones).
//!
//! `tests/newest_pinned.rs` pins every size and field offset.

use core::ffi::c_void;
use core::fmt;
use core::marker::{PhantomData, PhantomPinned};

pub use super::common::*;
pub use super::since_6_2::*;

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

node_properties_struct! {
    /// `HsaNodeProperties` (newest, 376 bytes): one topology node (out of
    /// `hsaKmtGetNodeProperties(Ctx)`).
    after_simds {
        /// Number of neural processing units (newest).
        pub NumNeuralCores: u32,
    }
    after_capability {
        /// More capabilities (newest).
        pub Capability2: HSA_CAPABILITY2,
    }
    after_engine_id {
        /// Overridden engine identification (newest).
        pub OverrideEngineId: HSA_ENGINE_ID,
    }
    after_gws {
        /// 1 for an integrated GPU (APU), 0 for a discrete one (was `Reserved2`).
        pub Integrated: u8,
    }
    tail {
        /// Number of XCCs.
        pub NumXcc: u32,
        /// KFD gpu_id hash.
        pub KFDGpuID: u32,
        /// GPU family id.
        pub FamilyID: u32,
        /// CWSR area size from the topology (`cwsr_size`; 0 if the
        /// kernel does not report it).
        pub CwsrSize: u32,
        /// Control stack size from the topology (`ctl_stack_size`; 0 if
        /// the kernel does not report it).
        pub CtlStackSize: u32,
    }
}

cache_properties_struct! {
    /// `HsaCacheProperties` (newest, 1056 bytes, as in 5.2.3): one cache
    /// (out of `hsaKmtGetNodeCacheProperties(Ctx)`, an array of
    /// `NumCaches`).
    ;
}

io_link_properties_struct! {
    /// `HsaIoLinkProperties` (newest, 52 bytes): one IO link (out of
    /// `hsaKmtGetNodeIoLinkProperties(Ctx)`).
    ;
    /// Recommended SDMA engine id mask (newest; inserted before `Flags`).
    pub RecSdmaEngIdMask: u32,
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

graphics_resource_info_struct! {
    /// `HsaGraphicsResourceInfo` (newest, 32 bytes, as in 5.2.3): an
    /// imported graphics buffer (in/out of
    /// `hsaKmtRegisterGraphicsHandleToNodes(Ext)`).
    ;
    /// GPU node that exported the buffer (out; was `Reserved`).
    pub NodeId: u32,
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

queue_info_struct! {
    /// `HsaQueueInfo` (newest, 68 bytes, as in 5.2.3): queue details (out
    /// of `hsaKmtGetQueueInfo(Ctx)`).
    ;
}

queue_resource_struct! {
    /// `HsaQueueResource` (newest, 40 bytes, as in 5.2.3): a created
    /// queue (in/out of `hsaKmtCreateQueue*`).
    ;
}

/// `HsaFabricHandle` (newest only): a fabric memory handle.
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaFabricHandle {
    /// Opaque handle words.
    pub handle: [u64; 2],
}

pointer_info_type!();

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
    HsaHandleImportDescHandle,
    HsaHandleImportDesc,
    HsaHandleImportResult,
    HsaHandleExportDesc,
    HsaMemoryExportResult,
);
