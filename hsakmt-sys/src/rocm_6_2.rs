//! hsakmt C types exactly as Debian 13's libhsakmt-dev 6.2.4
//! `/usr/include/hsakmt/hsakmttypes.h` declares them: the ABI of Debian's
//! libhsakmt 6.2.4 (ROCT-Thunk-Interface `rocm-6.2.4`, the last shared
//! libhsakmt ROCm released) and of the ROCr 6.1.2 built against it.
//!
//! The struct sizes are 5.2.3's: 6.2.4 named reserved fields
//! (`HsaNodeProperties::Integrated`, `NumXcc`, `KFDGpuID`, `FamilyID`;
//! `HsaGraphicsResourceInfo::NodeId`) and reserved bits of `HsaMemFlags`
//! (`NoAddress` .. `Contiguous`), and added types (see
//! [`super::since_6_2`]): hardware exception events, debugger exception
//! codes, SMI events, PC sampling. `HsaMemMapFlags` and the IOMMUv2 and
//! kernel-driver profiling block UUIDs are still declared.
//!
//! `tests/layout.rs` checks every item against that header with a C
//! probe (the header comes from Debian 13's `libhsakmt-dev` package).

pub use super::common::*;
pub use super::rocm_5_2::{
    HsaMemMapFlags, HSA_PROFILEBLOCK_AMD_IOMMUV2, HSA_PROFILEBLOCK_AMD_KERNEL_DRIVER,
};
pub use super::since_6_2::*;

hsa_capability! {
    /// `HSA_CAPABILITY` (6.2.4): node capabilities (`ui32` over `Value`);
    /// the top two bits are reserved.
    ;
    /// Reserved (6.2.4).
    Reserved, set_Reserved: 30..32;
}

node_properties_struct! {
    /// `HsaNodeProperties` (6.2.4, 356 bytes): one topology node (out of
    /// `hsaKmtGetNodeProperties`).
    after_simds {}
    after_capability {}
    after_engine_id {}
    after_gws {
        /// 1 for an integrated GPU (APU, small or app APU), 0 for a
        /// discrete one (5.2.3: `Reserved2`).
        pub Integrated: u8,
    }
    tail {
        /// Number of XCCs.
        pub NumXcc: u32,
        /// KFD gpu_id hash.
        pub KFDGpuID: u32,
        /// GPU family id.
        pub FamilyID: u32,
    }
}

cache_properties_struct! {
    /// `HsaCacheProperties` (6.2.4, 1056 bytes): one cache (out of
    /// `hsaKmtGetNodeCacheProperties`, an array of `NumCaches`).
    ;
}

io_link_properties_struct! {
    /// `HsaIoLinkProperties` (6.2.4, 48 bytes): one IO link (out of
    /// `hsaKmtGetNodeIoLinkProperties`, an array of `NumIOLinks`).
    ;
}

hsa_mem_flags! {
    /// `HsaMemFlags` (6.2.4): allocation flags (in to `hsaKmtAllocMemory`,
    /// out in `HsaPointerInfo`); bits 23..32 are reserved.
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
    /// Reserved.
    Reserved, set_Reserved: 23..32;
}

graphics_resource_info_struct! {
    /// `HsaGraphicsResourceInfo` (6.2.4, 32 bytes): an imported graphics
    /// buffer (out of `hsaKmtRegisterGraphicsHandleToNodes`).
    ;
    /// GPU node that exported the buffer (5.2.3: `Reserved`).
    pub NodeId: u32,
}

hsa_queue_type! {
    /// `HSA_QUEUE_TYPE` (6.2.4): queue kind (in to `hsaKmtCreateQueue`).
    ;
}

queue_info_struct! {
    /// `HsaQueueInfo` (6.2.4, 68 bytes): queue details (out of
    /// `hsaKmtGetQueueInfo`).
    ;
}

queue_resource_struct! {
    /// `HsaQueueResource` (6.2.4, 40 bytes): a created queue (in/out of
    /// `hsaKmtCreateQueue`).
    ;
}

zeroed_default!(
    HsaNodeProperties,
    HsaCacheProperties,
    HsaGraphicsResourceInfo,
    HsaQueueInfo,
    HsaQueueResource,
);

pointer_info_type!();
