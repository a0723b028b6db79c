//! hsakmt C types exactly as Debian's libhsakmt-dev 5.2.3
//! `/usr/include/hsakmttypes.h` declares them: the ABI of Debian's
//! libhsakmt 5.2.3 and of the ROCr 5.2.3 built against it.
//!
//! Every item of that header is here (this module plus the re-exported
//! [`super::common`]); `tests/layout_hsakmt.rs` checks each size, field
//! offset, enum value, constant and bit-field position against the header
//! with a C probe.

pub use super::common::*;

hsa_capability! {
    /// `HSA_CAPABILITY` (5.2.3): node capabilities (`ui32` over `Value`);
    /// the top two bits are reserved.
    ;
    /// Reserved (5.2.3).
    Reserved, set_Reserved: 30..32;
}

node_properties_struct! {
    /// `HsaNodeProperties` (5.2.3, 356 bytes): one topology node (out of
    /// `hsaKmtGetNodeProperties`).
    after_simds {}
    after_capability {}
    after_engine_id {}
    after_gws {
        /// Reserved (became `Integrated` in later headers).
        pub Reserved2: u8,
    }
    tail {
        /// Reserved (later headers put NumXcc, KFDGpuID, FamilyID here).
        pub Reserved: [u8; 12],
    }
}

cache_properties_struct! {
    /// `HsaCacheProperties` (5.2.3, 1056 bytes): one cache (out of
    /// `hsaKmtGetNodeCacheProperties`, an array of `NumCaches`).
    ;
}

io_link_properties_struct! {
    /// `HsaIoLinkProperties` (5.2.3, 48 bytes): one IO link (out of
    /// `hsaKmtGetNodeIoLinkProperties`, an array of `NumIOLinks`).
    ;
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

graphics_resource_info_struct! {
    /// `HsaGraphicsResourceInfo` (5.2.3, 32 bytes): an imported graphics
    /// buffer (out of `hsaKmtRegisterGraphicsHandleToNodes`).
    ;
    /// Reserved, set to 0 (later headers: `NodeId`).
    pub Reserved: u32,
}

hsa_queue_type! {
    /// `HSA_QUEUE_TYPE` (5.2.3): queue kind (in to `hsaKmtCreateQueue`).
    ;
}

queue_info_struct! {
    /// `HsaQueueInfo` (5.2.3, 68 bytes): queue details (out of
    /// `hsaKmtGetQueueInfo`).
    ;
}

queue_resource_struct! {
    /// `HsaQueueResource` (5.2.3, 40 bytes): a created queue (in/out of
    /// `hsaKmtCreateQueue`: the thunk fills `QueueId`, the doorbell and,
    /// for AQL queues, keeps the caller's read/write pointers).
    ;
}

event_data_union! {
    /// The C member `HsaEventData::EventData` (5.2.3): per-kind event data.
    ;
}

zeroed_default!(
    HsaNodeProperties,
    HsaCacheProperties,
    HsaGraphicsResourceInfo,
    HsaQueueInfo,
    HsaQueueResource,
);

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
