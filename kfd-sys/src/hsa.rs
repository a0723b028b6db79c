//! The user-mode queue ABI the GPU consumes: AQL packets (`hsa.h`,
//! `hsa_ext_amd.h`), `amd_queue_t` (`amd_hsa_queue.h`), `amd_signal_t`
//! (`amd_hsa_signal.h`), the legacy kernel descriptor `amd_kernel_code_t`
//! (`amd_hsa_kernel_code.h`) and the code-object v3+ kernel descriptor
//! (LLVM's `AMDHSAKernelDescriptor.h`).
//!
//! Declared once here for both sides of a queue: producers (kfd-queue,
//! runtimes) and the simulated command processor that decodes them
//! (kfd-gpu). Layouts are checked against Debian's libhsa-runtime-dev
//! headers by `tests/layout_hsa.rs`; the code-object v3 descriptor and the
//! PM4-IB vendor packet (ROCr-internal) have no C header that the probe can
//! include and are pinned by hand there.
//!
//! Every type is plain data with a byte view ([`zerocopy`]): decode a
//! 64-byte packet slot with `hsa_kernel_dispatch_packet_t::read_from_bytes`
//! and encode one with `as_bytes`.

// The C headers' names (`amd_queue_t`, `AmdFormat`).
#![allow(non_camel_case_types, non_snake_case)]

use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout};

/// `hsa_packet_type_t`: vendor specific.
pub const HSA_PACKET_TYPE_VENDOR_SPECIFIC: u16 = 0;
/// `hsa_packet_type_t`: the slot holds no packet (yet).
pub const HSA_PACKET_TYPE_INVALID: u16 = 1;
/// `hsa_packet_type_t`: kernel dispatch.
pub const HSA_PACKET_TYPE_KERNEL_DISPATCH: u16 = 2;
/// `hsa_packet_type_t`: barrier-AND.
pub const HSA_PACKET_TYPE_BARRIER_AND: u16 = 3;
/// `hsa_packet_type_t`: agent dispatch.
pub const HSA_PACKET_TYPE_AGENT_DISPATCH: u16 = 4;
/// `hsa_packet_type_t`: barrier-OR.
pub const HSA_PACKET_TYPE_BARRIER_OR: u16 = 5;

/// `hsa_packet_header_t`: bit offset of the packet type (8 bits).
pub const HSA_PACKET_HEADER_TYPE: u16 = 0;
/// `hsa_packet_header_t`: bit offset of the barrier bit.
pub const HSA_PACKET_HEADER_BARRIER: u16 = 8;
/// `hsa_packet_header_t`: bit offset of the acquire fence scope (2 bits).
pub const HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE: u16 = 9;
/// `hsa_packet_header_t`: bit offset of the release fence scope (2 bits).
pub const HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE: u16 = 11;

/// `hsa_fence_scope_t`: no fence.
pub const HSA_FENCE_SCOPE_NONE: u16 = 0;
/// `hsa_fence_scope_t`: the agent.
pub const HSA_FENCE_SCOPE_AGENT: u16 = 1;
/// `hsa_fence_scope_t`: the system.
pub const HSA_FENCE_SCOPE_SYSTEM: u16 = 2;

/// `hsa_kernel_dispatch_packet_setup_t`: bit offset of the dimension
/// count (2 bits).
pub const HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS: u16 = 0;

/// AMD vendor packet format: a PM4 indirect buffer (`AMD_AQL_FORMAT_PM4_IB`).
pub const AMD_AQL_FORMAT_PM4_IB: u8 = 1;
/// AMD vendor packet format: barrier-value
/// (`HSA_AMD_PACKET_TYPE_BARRIER_VALUE`).
pub const HSA_AMD_PACKET_TYPE_BARRIER_VALUE: u8 = 2;

/// `hsa_signal_condition_t`: equal.
pub const HSA_SIGNAL_CONDITION_EQ: u32 = 0;
/// `hsa_signal_condition_t`: not equal.
pub const HSA_SIGNAL_CONDITION_NE: u32 = 1;
/// `hsa_signal_condition_t`: less than.
pub const HSA_SIGNAL_CONDITION_LT: u32 = 2;
/// `hsa_signal_condition_t`: greater than or equal.
pub const HSA_SIGNAL_CONDITION_GTE: u32 = 3;

/// `hsa_kernel_dispatch_packet_t`: a kernel dispatch (64 bytes).
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct hsa_kernel_dispatch_packet_t {
    /// Packet header (type, barrier, fence scopes).
    pub header: u16,
    /// Dispatch setup: dimensions in bits 1:0.
    pub setup: u16,
    /// Workgroup size, X.
    pub workgroup_size_x: u16,
    /// Workgroup size, Y (1 when unused).
    pub workgroup_size_y: u16,
    /// Workgroup size, Z (1 when unused).
    pub workgroup_size_z: u16,
    /// Reserved, 0.
    pub reserved0: u16,
    /// Grid size in work-items, X.
    pub grid_size_x: u32,
    /// Grid size, Y.
    pub grid_size_y: u32,
    /// Grid size, Z.
    pub grid_size_z: u32,
    /// Private (scratch) bytes per work-item.
    pub private_segment_size: u32,
    /// Group (LDS) bytes per workgroup, static and dynamic.
    pub group_segment_size: u32,
    /// Address of the kernel descriptor.
    pub kernel_object: u64,
    /// Address of the kernel arguments.
    pub kernarg_address: u64,
    /// Reserved, 0.
    pub reserved2: u64,
    /// Completion signal handle (0: none).
    pub completion_signal: u64,
}

/// `hsa_barrier_and_packet_t` (and `hsa_barrier_or_packet_t`, which has
/// the same layout): waits for up to five dependency signals.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct hsa_barrier_and_packet_t {
    /// Packet header.
    pub header: u16,
    /// Reserved, 0.
    pub reserved0: u16,
    /// Reserved, 0.
    pub reserved1: u32,
    /// Dependency signal handles (0: none).
    pub dep_signal: [u64; 5],
    /// Reserved, 0.
    pub reserved2: u64,
    /// Completion signal handle (0: none).
    pub completion_signal: u64,
}

/// `hsa_barrier_or_packet_t`: the same layout as barrier-AND.
pub type hsa_barrier_or_packet_t = hsa_barrier_and_packet_t;

/// `hsa_amd_vendor_packet_header_t`: the first four bytes of an AMD vendor
/// packet.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct hsa_amd_vendor_packet_header_t {
    /// Packet header (type `VENDOR_SPECIFIC`).
    pub header: u16,
    /// The AMD packet format ([`AMD_AQL_FORMAT_PM4_IB`],
    /// [`HSA_AMD_PACKET_TYPE_BARRIER_VALUE`]); the header's name.
    pub AmdFormat: u8,
    /// Reserved, 0.
    pub reserved: u8,
}

/// `hsa_amd_barrier_value_packet_t`: waits until `(value(signal) & mask)
/// cond value`.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct hsa_amd_barrier_value_packet_t {
    /// Vendor header.
    pub header: hsa_amd_vendor_packet_header_t,
    /// Reserved, 0.
    pub reserved0: u32,
    /// The signal to compare.
    pub signal: u64,
    /// The value to compare with.
    pub value: i64,
    /// Mask applied to the signal's value.
    pub mask: i64,
    /// `hsa_signal_condition_t`.
    pub cond: u32,
    /// Reserved, 0.
    pub reserved1: u32,
    /// Reserved, 0.
    pub reserved2: u64,
    /// Reserved, 0.
    pub reserved3: u64,
    /// Completion signal handle (0: none).
    pub completion_signal: u64,
}

/// The PM4-IB vendor packet ROCr's `ExecutePM4` builds (ROCr-internal
/// `amd_aql_pm4_ib_packet_t`): a PM4 `INDIRECT_BUFFER` command in four
/// dwords, run by the CP.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct amd_aql_pm4_ib_packet_t {
    /// Packet header (type `VENDOR_SPECIFIC`).
    pub header: u16,
    /// [`AMD_AQL_FORMAT_PM4_IB`].
    pub ven_hdr: u16,
    /// The PM4 `INDIRECT_BUFFER` packet (header, address lo/hi, size):
    /// the dwords of a [`crate::pm4::PM4_MEC_INDIRECT_BUFFER`].
    pub ib_jump_cmd: [u32; 4],
    /// Dwords left in the IB after the jump (ROCr writes 0xA).
    pub dw_cnt_remain: u32,
    /// Reserved, 0.
    pub reserved: [u32; 8],
    /// Completion signal handle (0: none).
    pub completion_signal: u64,
}

/// `hsa_queue_t`: the HSA part of a queue (little-endian large model).
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct hsa_queue_t {
    /// `hsa_queue_type32_t`.
    pub r#type: u32,
    /// `hsa_queue_feature_t` bits.
    pub features: u32,
    /// Ring address.
    pub base_address: u64,
    /// Doorbell signal handle.
    pub doorbell_signal: u64,
    /// Ring size in packets.
    pub size: u32,
    /// Reserved.
    pub reserved1: u32,
    /// Queue id.
    pub id: u64,
}

/// `amd_queue_properties_t`: the trap handler is enabled.
pub const AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER: u32 = 1 << 0;
/// `amd_queue_properties_t`: 64-bit pointers.
pub const AMD_QUEUE_PROPERTIES_IS_PTR64: u32 = 1 << 1;
/// `amd_queue_properties_t`: debug SGPRs for the trap handler.
pub const AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER_DEBUG_SGPRS: u32 = 1 << 2;
/// `amd_queue_properties_t`: dispatch timestamps into completion signals.
pub const AMD_QUEUE_PROPERTIES_ENABLE_PROFILING: u32 = 1 << 3;
/// `amd_queue_properties_t`: scratch is used once.
pub const AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE: u32 = 1 << 4;

/// `amd_queue_t`: ROCr's queue structure around `hsa_queue_t`, which the
/// CP reads and writes (256 bytes, 64-byte aligned).
#[repr(C, align(64))]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct amd_queue_t {
    /// The HSA queue.
    pub hsa_queue: hsa_queue_t,
    /// Reserved.
    pub reserved1: [u32; 4],
    /// The write index (producers bump it before writing a packet).
    pub write_dispatch_id: u64,
    /// High 32 bits of the group segment aperture base.
    pub group_segment_aperture_base_hi: u32,
    /// High 32 bits of the private segment aperture base.
    pub private_segment_aperture_base_hi: u32,
    /// Highest CU id.
    pub max_cu_id: u32,
    /// Highest wave id.
    pub max_wave_id: u32,
    /// Legacy doorbell bookkeeping.
    pub max_legacy_doorbell_dispatch_id_plus_1: u64,
    /// Legacy doorbell lock.
    pub legacy_doorbell_lock: u32,
    /// Reserved.
    pub reserved2: [u32; 9],
    /// The read index the CP advances.
    pub read_dispatch_id: u64,
    /// Byte offset of `read_dispatch_id` from the structure's start (the
    /// CP finds the structure from its read pointer with it).
    pub read_dispatch_id_field_base_byte_offset: u32,
    /// `COMPUTE_TMPRING_SIZE` for the queue's scratch.
    pub compute_tmpring_size: u32,
    /// Scratch buffer resource.
    pub scratch_resource_descriptor: [u32; 4],
    /// Scratch backing memory address.
    pub scratch_backing_memory_location: u64,
    /// Scratch backing memory size.
    pub scratch_backing_memory_byte_size: u64,
    /// Scratch bytes per lane of a wave64.
    pub scratch_wave64_lane_byte_size: u32,
    /// `AMD_QUEUE_PROPERTIES_*` bits.
    pub queue_properties: u32,
    /// Reserved.
    pub reserved3: [u32; 2],
    /// Signal the CP writes an error code into when the queue stops.
    pub queue_inactive_signal: u64,
    /// Reserved.
    pub reserved4: [u32; 14],
}

/// `amd_signal_kind_t`: invalid.
pub const AMD_SIGNAL_KIND_INVALID: i64 = 0;
/// `amd_signal_kind_t`: a user signal (memory value).
pub const AMD_SIGNAL_KIND_USER: i64 = 1;
/// `amd_signal_kind_t`: a doorbell.
pub const AMD_SIGNAL_KIND_DOORBELL: i64 = -1;
/// `amd_signal_kind_t`: a legacy doorbell.
pub const AMD_SIGNAL_KIND_LEGACY_DOORBELL: i64 = -2;

/// `amd_signal_t`: the memory behind an HSA signal handle (64 bytes,
/// 64-byte aligned).
#[repr(C, align(64))]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct amd_signal_t {
    /// `amd_signal_kind_t`.
    pub kind: i64,
    /// The signal's value (user signals; a doorbell pointer for doorbell
    /// signals).
    pub value: i64,
    /// Where the CP writes the event id when the signal completes (0: no
    /// event).
    pub event_mailbox_ptr: u64,
    /// The event id written to the mailbox.
    pub event_id: u32,
    /// Reserved.
    pub reserved1: u32,
    /// Dispatch start timestamp (profiling).
    pub start_ts: u64,
    /// Dispatch end timestamp (profiling).
    pub end_ts: u64,
    /// The queue (doorbell signals).
    pub queue_ptr: u64,
    /// Reserved.
    pub reserved3: [u32; 2],
}

/// `hsa_signal_t`: the handle of an HSA signal, as packets carry it (the
/// GPU address of the signal's [`amd_signal_t`]; 0 is no signal).
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct hsa_signal_t {
    /// The address of the `amd_signal_t`.
    pub handle: u64,
}

/// `amd_kernel_code_properties_t` bits of both descriptor formats: the
/// user SGPRs set up, in this order.
pub mod kernel_code_properties {
    /// Private segment buffer resource (4 SGPRs).
    pub const ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER: u32 = 1 << 0;
    /// Dispatch packet address (2).
    pub const ENABLE_SGPR_DISPATCH_PTR: u32 = 1 << 1;
    /// `amd_queue_t` address (2).
    pub const ENABLE_SGPR_QUEUE_PTR: u32 = 1 << 2;
    /// Kernel argument address (2).
    pub const ENABLE_SGPR_KERNARG_SEGMENT_PTR: u32 = 1 << 3;
    /// Dispatch id (2).
    pub const ENABLE_SGPR_DISPATCH_ID: u32 = 1 << 4;
    /// Flat scratch init (2).
    pub const ENABLE_SGPR_FLAT_SCRATCH_INIT: u32 = 1 << 5;
    /// Private segment size (1).
    pub const ENABLE_SGPR_PRIVATE_SEGMENT_SIZE: u32 = 1 << 6;
    /// `amd_kernel_code_t` only: grid workgroup count X (1).
    pub const ENABLE_SGPR_GRID_WORKGROUP_COUNT_X: u32 = 1 << 7;
    /// `amd_kernel_code_t` only: grid workgroup count Y (1).
    pub const ENABLE_SGPR_GRID_WORKGROUP_COUNT_Y: u32 = 1 << 8;
    /// `amd_kernel_code_t` only: grid workgroup count Z (1).
    pub const ENABLE_SGPR_GRID_WORKGROUP_COUNT_Z: u32 = 1 << 9;
    /// Code object v3+: wave32 (gfx10+).
    pub const ENABLE_WAVEFRONT_SIZE32: u32 = 1 << 10;
    /// Code object v3+: the kernel uses a dynamic stack.
    pub const USES_DYNAMIC_STACK: u32 = 1 << 11;
}

/// `amd_control_directives_t`: the control directives of an
/// `amd_kernel_code_t` (128 bytes, 64-byte aligned).
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct amd_control_directives_t {
    /// Which directives are enabled.
    pub enabled_control_directives: u64,
    /// Exceptions that break.
    pub enable_break_exceptions: u16,
    /// Exceptions detected.
    pub enable_detect_exceptions: u16,
    /// Largest dynamic group segment.
    pub max_dynamic_group_size: u32,
    /// Largest grid.
    pub max_flat_grid_size: u64,
    /// Largest workgroup.
    pub max_flat_workgroup_size: u32,
    /// Required dimensions.
    pub required_dim: u8,
    /// Reserved.
    pub reserved1: [u8; 3],
    /// Required grid size.
    pub required_grid_size: [u64; 3],
    /// Required workgroup size.
    pub required_workgroup_size: [u32; 3],
    /// Reserved.
    pub reserved2: [u8; 60],
}

impl Default for amd_control_directives_t {
    fn default() -> Self {
        Self::new_zeroed()
    }
}

/// `amd_kernel_code_t`: the legacy 256-byte kernel descriptor (code
/// object v2, ROCr's blit kernels). The fields the CP reads share their
/// offsets with [`kernel_descriptor_t`]: the entry offset at 16, `rsrc1` at
/// 48, `rsrc2` at 52, the properties at 56 (bytes 44..48, `rsrc3` in the
/// v3 format, are the high half of `max_scratch_backing_memory_byte_size`
/// here, 0). 64-byte aligned, as the header declares it.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct amd_kernel_code_t {
    /// Format version, major (1).
    pub amd_kernel_code_version_major: u32,
    /// Format version, minor.
    pub amd_kernel_code_version_minor: u32,
    /// Machine kind (1: AMDGPU).
    pub amd_machine_kind: u16,
    /// GFX version, major.
    pub amd_machine_version_major: u16,
    /// GFX version, minor.
    pub amd_machine_version_minor: u16,
    /// GFX version, stepping.
    pub amd_machine_version_stepping: u16,
    /// Byte offset of the first instruction from this descriptor.
    pub kernel_code_entry_byte_offset: i64,
    /// Prefetch start offset.
    pub kernel_code_prefetch_byte_offset: i64,
    /// Prefetch size.
    pub kernel_code_prefetch_byte_size: u64,
    /// Scratch backing memory the kernel may use at most.
    pub max_scratch_backing_memory_byte_size: u64,
    /// `COMPUTE_PGM_RSRC1`.
    pub compute_pgm_rsrc1: u32,
    /// `COMPUTE_PGM_RSRC2`.
    pub compute_pgm_rsrc2: u32,
    /// [`kernel_code_properties`] bits (and legacy fields above bit 15).
    pub kernel_code_properties: u32,
    /// Private bytes per work-item.
    pub workitem_private_segment_byte_size: u32,
    /// Group bytes per workgroup.
    pub workgroup_group_segment_byte_size: u32,
    /// GDS bytes.
    pub gds_segment_byte_size: u32,
    /// Kernel argument bytes.
    pub kernarg_segment_byte_size: u64,
    /// Fbarriers.
    pub workgroup_fbarrier_count: u32,
    /// SGPRs per wave.
    pub wavefront_sgpr_count: u16,
    /// VGPRs per work-item.
    pub workitem_vgpr_count: u16,
    /// First reserved VGPR.
    pub reserved_vgpr_first: u16,
    /// Reserved VGPRs.
    pub reserved_vgpr_count: u16,
    /// First reserved SGPR.
    pub reserved_sgpr_first: u16,
    /// Reserved SGPRs.
    pub reserved_sgpr_count: u16,
    /// Debugger SGPR.
    pub debug_wavefront_private_segment_offset_sgpr: u16,
    /// Debugger SGPR.
    pub debug_private_segment_buffer_sgpr: u16,
    /// Kernarg alignment (power of two).
    pub kernarg_segment_alignment: u8,
    /// Group segment alignment.
    pub group_segment_alignment: u8,
    /// Private segment alignment.
    pub private_segment_alignment: u8,
    /// Wave size (log2).
    pub wavefront_size: u8,
    /// Calling convention.
    pub call_convention: i32,
    /// Reserved.
    pub reserved1: [u8; 12],
    /// Loader symbol.
    pub runtime_loader_kernel_symbol: u64,
    /// Control directives.
    pub control_directives: amd_control_directives_t,
}

impl Default for amd_kernel_code_t {
    fn default() -> Self {
        Self::new_zeroed()
    }
}

/// The code-object v3+ kernel descriptor (`llvm::amdhsa::kernel_descriptor_t`,
/// 64 bytes, 64-byte aligned in the code object).
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kernel_descriptor_t {
    /// Static group (LDS) bytes.
    pub group_segment_fixed_size: u32,
    /// Static private bytes per work-item.
    pub private_segment_fixed_size: u32,
    /// Kernel argument bytes.
    pub kernarg_size: u32,
    /// Reserved.
    pub reserved0: [u8; 4],
    /// Byte offset of the first instruction from this descriptor.
    pub kernel_code_entry_byte_offset: i64,
    /// Reserved.
    pub reserved1: [u8; 20],
    /// `COMPUTE_PGM_RSRC3` (gfx90a+: AccVGPR offset, TG split).
    pub compute_pgm_rsrc3: u32,
    /// `COMPUTE_PGM_RSRC1`.
    pub compute_pgm_rsrc1: u32,
    /// `COMPUTE_PGM_RSRC2`.
    pub compute_pgm_rsrc2: u32,
    /// [`kernel_code_properties`] bits.
    pub kernel_code_properties: u16,
    /// Kernel argument preload (gfx90a+): dword count in bits 6:0, dword
    /// offset in bits 15:7.
    pub kernarg_preload: u16,
    /// Reserved.
    pub reserved3: [u8; 4],
}
