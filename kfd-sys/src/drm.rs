//! The DRM uapi subset used on amdgpu render nodes (`drm.h`,
//! `amdgpu_drm.h`): what libdrm/libdrm_amdgpu issue while the thunk
//! initialises devices (`amdgpu_device_initialize`, marketing-name
//! lookup), and what the thunk itself uses for graphics interop and
//! dma-buf (PRIME, GEM handles, GEM metadata/VA/op, `AMDGPU_INFO`).
//!
//! Every type here is checked against `/usr/include/libdrm/drm.h` and
//! `amdgpu_drm.h` (libdrm 2.4.114) by `tests/layout_drm.rs`. Newer
//! kernels append fields to `drm_amdgpu_info_device`; the kernel copies
//! `min(return_size, its size)` bytes, so this layout stays a valid prefix.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_ulong};

use crate::ioctl::PlainArgs;

/// `DRM_IOCTL_BASE`: `'d'`, the type byte of DRM requests.
pub const DRM_IOCTL_BASE: u8 = b'd';
/// `DRM_COMMAND_BASE`: first driver-specific command number.
pub const DRM_COMMAND_BASE: u8 = 0x40;
/// `DRM_CLOEXEC` (`O_CLOEXEC`): flag for `drm_prime_handle.flags`.
pub const DRM_CLOEXEC: u32 = libc::O_CLOEXEC as u32;
/// `DRM_RDWR` (`O_RDWR`): flag for `drm_prime_handle.flags`.
pub const DRM_RDWR: u32 = libc::O_RDWR as u32;

// ---------------------------------------------------------------------------
// DRM core
// ---------------------------------------------------------------------------

/// `struct drm_version` (`DRM_IOCTL_VERSION`). libdrm calls it twice: first
/// with null buffers to learn the lengths, then to copy the strings.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct drm_version {
    /// Driver major version (out; amdgpu: 3).
    pub version_major: c_int,
    /// Driver minor version (out).
    pub version_minor: c_int,
    /// Driver patch level (out).
    pub version_patchlevel: c_int,
    /// Capacity of `name` (in); length of the name (out).
    pub name_len: usize,
    /// User buffer for the driver name, may be null (in).
    pub name: *mut c_char,
    /// Capacity of `date` (in); length of the date (out).
    pub date_len: usize,
    /// User buffer for the driver date, may be null (in).
    pub date: *mut c_char,
    /// Capacity of `desc` (in); length of the description (out).
    pub desc_len: usize,
    /// User buffer for the description, may be null (in).
    pub desc: *mut c_char,
}

impl Default for drm_version {
    fn default() -> Self {
        drm_version {
            version_major: 0,
            version_minor: 0,
            version_patchlevel: 0,
            name_len: 0,
            name: std::ptr::null_mut(),
            date_len: 0,
            date: std::ptr::null_mut(),
            desc_len: 0,
            desc: std::ptr::null_mut(),
        }
    }
}

/// `struct drm_client` (`DRM_IOCTL_GET_CLIENT`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_client {
    /// Which client (in).
    pub idx: c_int,
    /// Authenticated, 0/1 (out).
    pub auth: c_int,
    /// Process id (out).
    pub pid: c_ulong,
    /// User id (out).
    pub uid: c_ulong,
    /// Magic (out).
    pub magic: c_ulong,
    /// Ioctl count (out).
    pub iocs: c_ulong,
}
// SAFETY: plain values.
unsafe impl PlainArgs for drm_client {}

/// `struct drm_gem_close` (`DRM_IOCTL_GEM_CLOSE`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_gem_close {
    /// GEM handle to close (in).
    pub handle: u32,
    /// Padding.
    pub pad: u32,
}
// SAFETY: a handle.
unsafe impl PlainArgs for drm_gem_close {}

/// `struct drm_prime_handle` (`DRM_IOCTL_PRIME_HANDLE_TO_FD` /
/// `DRM_IOCTL_PRIME_FD_TO_HANDLE`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_prime_handle {
    /// GEM handle (in for HANDLE_TO_FD, out for FD_TO_HANDLE).
    pub handle: u32,
    /// `DRM_CLOEXEC` / `DRM_RDWR` (HANDLE_TO_FD only).
    pub flags: u32,
    /// dma-buf descriptor (out for HANDLE_TO_FD, in for FD_TO_HANDLE).
    pub fd: i32,
}
// SAFETY: a handle, flags and a descriptor.
unsafe impl PlainArgs for drm_prime_handle {}

// ---------------------------------------------------------------------------
// amdgpu GEM
// ---------------------------------------------------------------------------

/// `struct drm_amdgpu_gem_create_in`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_gem_create_in {
    /// Size in bytes.
    pub bo_size: u64,
    /// Physical alignment in bytes.
    pub alignment: u64,
    /// `AMDGPU_GEM_DOMAIN_*`.
    pub domains: u64,
    /// `AMDGPU_GEM_CREATE_*`.
    pub domain_flags: u64,
}

/// `struct drm_amdgpu_gem_create_out`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_gem_create_out {
    /// GEM handle.
    pub handle: u32,
    /// Padding.
    pub _pad: u32,
}

/// `union drm_amdgpu_gem_create` (`DRM_IOCTL_AMDGPU_GEM_CREATE`).
#[repr(C)]
#[derive(Clone, Copy)]
pub union drm_amdgpu_gem_create {
    /// Input.
    pub r#in: drm_amdgpu_gem_create_in,
    /// Output.
    pub out: drm_amdgpu_gem_create_out,
}
crate::kfd::opaque_union_debug!(drm_amdgpu_gem_create);
impl Default for drm_amdgpu_gem_create {
    fn default() -> Self {
        // The input member is the larger (32 bytes).
        Self {
            r#in: Default::default(),
        }
    }
}
// SAFETY: plain values.
unsafe impl PlainArgs for drm_amdgpu_gem_create {}

/// `struct drm_amdgpu_gem_mmap_in`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_gem_mmap_in {
    /// GEM handle.
    pub handle: u32,
    /// Padding.
    pub _pad: u32,
}

/// `struct drm_amdgpu_gem_mmap_out`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_gem_mmap_out {
    /// Fake mmap offset on the render node.
    pub addr_ptr: u64,
}

/// `union drm_amdgpu_gem_mmap` (`DRM_IOCTL_AMDGPU_GEM_MMAP`).
#[repr(C)]
#[derive(Clone, Copy)]
pub union drm_amdgpu_gem_mmap {
    /// Input.
    pub r#in: drm_amdgpu_gem_mmap_in,
    /// Output.
    pub out: drm_amdgpu_gem_mmap_out,
}
crate::kfd::opaque_union_debug!(drm_amdgpu_gem_mmap);
impl Default for drm_amdgpu_gem_mmap {
    fn default() -> Self {
        // Both members are 8 bytes.
        Self {
            out: Default::default(),
        }
    }
}
// SAFETY: a handle in, an mmap offset out.
unsafe impl PlainArgs for drm_amdgpu_gem_mmap {}

/// The `data` member of [`drm_amdgpu_gem_metadata`].
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_gem_metadata_data {
    /// Metadata flags.
    pub flags: u64,
    /// Tiling information (`AMDGPU_TILING_*`).
    pub tiling_info: u64,
    /// Bytes of `data` in use.
    pub data_size_bytes: u32,
    /// Opaque UMD metadata (the thunk stores its own here for dma-buf).
    pub data: [u32; 64],
}

impl Default for drm_amdgpu_gem_metadata_data {
    fn default() -> Self {
        drm_amdgpu_gem_metadata_data {
            flags: 0,
            tiling_info: 0,
            data_size_bytes: 0,
            data: [0; 64],
        }
    }
}

/// `struct drm_amdgpu_gem_metadata` (`DRM_IOCTL_AMDGPU_GEM_METADATA`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_gem_metadata {
    /// GEM handle (in).
    pub handle: u32,
    /// `AMDGPU_GEM_METADATA_OP_*` (in).
    pub op: u32,
    /// Metadata (in for SET, out for GET).
    pub data: drm_amdgpu_gem_metadata_data,
}
// SAFETY: the metadata is inline.
unsafe impl PlainArgs for drm_amdgpu_gem_metadata {}

/// `struct drm_amdgpu_gem_op` (`DRM_IOCTL_AMDGPU_GEM_OP`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_gem_op {
    /// GEM handle (in).
    pub handle: u32,
    /// `AMDGPU_GEM_OP_*` (in).
    pub op: u32,
    /// GET_GEM_CREATE_INFO: user pointer to a `drm_amdgpu_gem_create_in`;
    /// SET_PLACEMENT: domains.
    pub value: u64,
}

/// `struct drm_amdgpu_gem_va` (`DRM_IOCTL_AMDGPU_GEM_VA`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_gem_va {
    /// GEM handle (in).
    pub handle: u32,
    /// Padding.
    pub _pad: u32,
    /// `AMDGPU_VA_OP_*` (in).
    pub operation: u32,
    /// `AMDGPU_VM_*` page and MTYPE flags (in).
    pub flags: u32,
    /// GPU VA (in).
    pub va_address: u64,
    /// Offset into the BO (in).
    pub offset_in_bo: u64,
    /// Mapping size (in).
    pub map_size: u64,
}
// SAFETY: a GPU VA; nothing in the calling process is accessed.
unsafe impl PlainArgs for drm_amdgpu_gem_va {}

// ---------------------------------------------------------------------------
// amdgpu INFO
// ---------------------------------------------------------------------------

/// `struct drm_amdgpu_query_fw`: `AMDGPU_INFO_FW_VERSION` selector.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_query_fw {
    /// `AMDGPU_INFO_FW_*`.
    pub fw_type: u32,
    /// IP instance.
    pub ip_instance: u32,
    /// Ring or engine index.
    pub index: u32,
    /// Padding.
    pub _pad: u32,
}

/// `mode_crtc` member of [`drm_amdgpu_info_union`].
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_info_mode_crtc {
    /// CRTC id.
    pub id: u32,
    /// Padding.
    pub _pad: u32,
}

/// `query_hw_ip` member of [`drm_amdgpu_info_union`].
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_info_query_hw_ip {
    /// `AMDGPU_HW_IP_*`.
    pub r#type: u32,
    /// IP instance.
    pub ip_instance: u32,
}

/// `read_mmr_reg` member of [`drm_amdgpu_info_union`].
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_info_read_mmr_reg {
    /// First register, in dwords.
    pub dword_offset: u32,
    /// Number of registers.
    pub count: u32,
    /// SE/SH index (`AMDGPU_INFO_MMR_*`).
    pub instance: u32,
    /// Flags.
    pub flags: u32,
}

/// `vbios_info` member of [`drm_amdgpu_info_union`].
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_info_vbios_info {
    /// `AMDGPU_INFO_VBIOS_*`.
    pub r#type: u32,
    /// Offset.
    pub offset: u32,
}

/// `sensor_info` / `video_cap` members of [`drm_amdgpu_info_union`].
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_info_type {
    /// `AMDGPU_INFO_SENSOR_*` or `AMDGPU_INFO_VIDEO_CAPS_*`.
    pub r#type: u32,
}

/// The anonymous union of [`drm_amdgpu_info`]: the query-specific selector.
#[repr(C)]
#[derive(Clone, Copy)]
pub union drm_amdgpu_info_union {
    /// `AMDGPU_INFO_CRTC_FROM_ID`.
    pub mode_crtc: drm_amdgpu_info_mode_crtc,
    /// `AMDGPU_INFO_HW_IP_INFO` / `_COUNT`.
    pub query_hw_ip: drm_amdgpu_info_query_hw_ip,
    /// `AMDGPU_INFO_READ_MMR_REG`.
    pub read_mmr_reg: drm_amdgpu_info_read_mmr_reg,
    /// `AMDGPU_INFO_FW_VERSION`.
    pub query_fw: drm_amdgpu_query_fw,
    /// `AMDGPU_INFO_VBIOS`.
    pub vbios_info: drm_amdgpu_info_vbios_info,
    /// `AMDGPU_INFO_SENSOR`.
    pub sensor_info: drm_amdgpu_info_type,
    /// `AMDGPU_INFO_VIDEO_CAPS`.
    pub video_cap: drm_amdgpu_info_type,
}
crate::kfd::opaque_union_debug!(drm_amdgpu_info_union);
impl Default for drm_amdgpu_info_union {
    fn default() -> Self {
        // The 16-byte members cover the whole union.
        Self {
            read_mmr_reg: Default::default(),
        }
    }
}

/// `struct drm_amdgpu_info` (`DRM_IOCTL_AMDGPU_INFO`, a write-only request
/// whose answer goes to `return_pointer`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct drm_amdgpu_info {
    /// User buffer for the answer (in).
    pub return_pointer: u64,
    /// Capacity of that buffer; the kernel writes at most this much (in).
    pub return_size: u32,
    /// `AMDGPU_INFO_*` (in).
    pub query: u32,
    /// Query-specific selector (in).
    pub u: drm_amdgpu_info_union,
}

/// `struct drm_amdgpu_info_vram_gtt` (`AMDGPU_INFO_VRAM_GTT`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_info_vram_gtt {
    /// VRAM size.
    pub vram_size: u64,
    /// CPU-visible VRAM size.
    pub vram_cpu_accessible_size: u64,
    /// GTT size.
    pub gtt_size: u64,
}

/// `struct drm_amdgpu_heap_info`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_heap_info {
    /// Physical size.
    pub total_heap_size: u64,
    /// Size usable for allocations.
    pub usable_heap_size: u64,
    /// Bytes in use.
    pub heap_usage: u64,
    /// Largest possible single allocation.
    pub max_allocation: u64,
}

/// `struct drm_amdgpu_memory_info` (`AMDGPU_INFO_MEMORY`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_memory_info {
    /// VRAM.
    pub vram: drm_amdgpu_heap_info,
    /// CPU-visible VRAM.
    pub cpu_accessible_vram: drm_amdgpu_heap_info,
    /// GTT.
    pub gtt: drm_amdgpu_heap_info,
}

/// `struct drm_amdgpu_info_firmware` (`AMDGPU_INFO_FW_VERSION`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_info_firmware {
    /// Firmware version.
    pub ver: u32,
    /// Feature version.
    pub feature: u32,
}

/// `struct drm_amdgpu_info_hw_ip` (`AMDGPU_INFO_HW_IP_INFO`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_info_hw_ip {
    /// IP major version.
    pub hw_ip_version_major: u32,
    /// IP minor version.
    pub hw_ip_version_minor: u32,
    /// Capabilities.
    pub capabilities_flags: u64,
    /// IB start alignment.
    pub ib_start_alignment: u32,
    /// IB size alignment.
    pub ib_size_alignment: u32,
    /// Bitmask of available rings.
    pub available_rings: u32,
    /// Padding.
    pub _pad: u32,
}

/// `struct drm_amdgpu_info_device` (`AMDGPU_INFO_DEV_INFO`), libdrm
/// 2.4.114 layout (kernels since 5.x may append fields).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_info_device {
    /// PCI device id.
    pub device_id: u32,
    /// Internal chip revision.
    pub chip_rev: u32,
    /// External revision.
    pub external_rev: u32,
    /// PCI revision.
    pub pci_rev: u32,
    /// `AMDGPU_FAMILY_*`.
    pub family: u32,
    /// Shader engines.
    pub num_shader_engines: u32,
    /// Shader arrays per engine.
    pub num_shader_arrays_per_engine: u32,
    /// GPU counter frequency in kHz.
    pub gpu_counter_freq: u32,
    /// Max engine clock in kHz.
    pub max_engine_clock: u64,
    /// Max memory clock in kHz.
    pub max_memory_clock: u64,
    /// Active CUs.
    pub cu_active_number: u32,
    /// Invalid, do not use.
    pub cu_ao_mask: u32,
    /// CU bitmap per SE/SH.
    pub cu_bitmap: [[u32; 4]; 4],
    /// Enabled render backends.
    pub enabled_rb_pipes_mask: u32,
    /// Number of render backends.
    pub num_rb_pipes: u32,
    /// Hardware gfx contexts.
    pub num_hw_gfx_contexts: u32,
    /// Padding.
    pub _pad: u32,
    /// `AMDGPU_IDS_FLAGS_*`.
    pub ids_flags: u64,
    /// Start of the VA range usable by user mode.
    pub virtual_address_offset: u64,
    /// End of that VA range.
    pub virtual_address_max: u64,
    /// VA alignment.
    pub virtual_address_alignment: u32,
    /// PTE fragment size.
    pub pte_fragment_size: u32,
    /// GART page size.
    pub gart_page_size: u32,
    /// Constant engine RAM size.
    pub ce_ram_size: u32,
    /// `AMDGPU_VRAM_TYPE_*`.
    pub vram_type: u32,
    /// VRAM bus width in bits.
    pub vram_bit_width: u32,
    /// VCE harvesting.
    pub vce_harvest_config: u32,
    /// gfx double off-chip LDS buffers.
    pub gc_double_offchip_lds_buf: u32,
    /// NGG primitive buffer.
    pub prim_buf_gpu_addr: u64,
    /// NGG position buffer.
    pub pos_buf_gpu_addr: u64,
    /// NGG control sideband.
    pub cntl_sb_buf_gpu_addr: u64,
    /// NGG parameter cache.
    pub param_buf_gpu_addr: u64,
    /// NGG primitive buffer size.
    pub prim_buf_size: u32,
    /// NGG position buffer size.
    pub pos_buf_size: u32,
    /// NGG control sideband size.
    pub cntl_sb_buf_size: u32,
    /// NGG parameter cache size.
    pub param_buf_size: u32,
    /// Wavefront size.
    pub wave_front_size: u32,
    /// Shader-visible VGPRs.
    pub num_shader_visible_vgprs: u32,
    /// CUs per shader array.
    pub num_cu_per_sh: u32,
    /// TCC blocks.
    pub num_tcc_blocks: u32,
    /// GS VGT table depth.
    pub gs_vgt_table_depth: u32,
    /// GS primitive buffer depth.
    pub gs_prim_buffer_depth: u32,
    /// Max GS waves per VGT.
    pub max_gs_waves_per_vgt: u32,
    /// Padding.
    pub _pad1: u32,
    /// Always-on CU bitmap.
    pub cu_ao_bitmap: [[u32; 4]; 4],
    /// Start of the high VA range.
    pub high_va_offset: u64,
    /// End of the high VA range.
    pub high_va_max: u64,
    /// gfx10 `PA_SC_TILE_STEERING_OVERRIDE`.
    pub pa_sc_tile_steering_override: u32,
    /// Disabled TCCs.
    pub tcc_disabled_mask: u64,
}

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

/// `DRM_AMDGPU_GEM_CREATE`.
pub const DRM_AMDGPU_GEM_CREATE: u8 = 0x00;
/// `DRM_AMDGPU_GEM_MMAP`.
pub const DRM_AMDGPU_GEM_MMAP: u8 = 0x01;
/// `DRM_AMDGPU_INFO`.
pub const DRM_AMDGPU_INFO: u8 = 0x05;
/// `DRM_AMDGPU_GEM_METADATA`.
pub const DRM_AMDGPU_GEM_METADATA: u8 = 0x06;
/// `DRM_AMDGPU_GEM_VA`.
pub const DRM_AMDGPU_GEM_VA: u8 = 0x08;
/// `DRM_AMDGPU_GEM_OP`.
pub const DRM_AMDGPU_GEM_OP: u8 = 0x10;

crate::ioctls! {
    table DRM_IOCTLS;
    /// Driver name, date, description and version.
    DRM_IOCTL_VERSION: iowr(b'd', 0x00, drm_version);
    /// Client information (libdrm's authentication fallback).
    DRM_IOCTL_GET_CLIENT: iowr(b'd', 0x05, drm_client);
    /// Close a GEM handle.
    DRM_IOCTL_GEM_CLOSE: iow(b'd', 0x09, drm_gem_close);
    /// Export a GEM handle as a dma-buf descriptor.
    DRM_IOCTL_PRIME_HANDLE_TO_FD: iowr(b'd', 0x2d, drm_prime_handle);
    /// Import a dma-buf descriptor as a GEM handle.
    DRM_IOCTL_PRIME_FD_TO_HANDLE: iowr(b'd', 0x2e, drm_prime_handle);
    /// Create a GEM buffer.
    DRM_IOCTL_AMDGPU_GEM_CREATE: iowr(b'd', DRM_COMMAND_BASE + DRM_AMDGPU_GEM_CREATE, drm_amdgpu_gem_create);
    /// Get the render-node mmap offset of a GEM buffer.
    DRM_IOCTL_AMDGPU_GEM_MMAP: iowr(b'd', DRM_COMMAND_BASE + DRM_AMDGPU_GEM_MMAP, drm_amdgpu_gem_mmap);
    /// Query device information.
    DRM_IOCTL_AMDGPU_INFO: iow(b'd', DRM_COMMAND_BASE + DRM_AMDGPU_INFO, drm_amdgpu_info);
    /// Set or get buffer metadata.
    DRM_IOCTL_AMDGPU_GEM_METADATA: iowr(b'd', DRM_COMMAND_BASE + DRM_AMDGPU_GEM_METADATA, drm_amdgpu_gem_metadata);
    /// Map or unmap a buffer in the render node's GPU VM (KFD 1.15+ for
    /// compute VMs).
    DRM_IOCTL_AMDGPU_GEM_VA: iow(b'd', DRM_COMMAND_BASE + DRM_AMDGPU_GEM_VA, drm_amdgpu_gem_va);
    /// Query creation info or change the placement of a buffer.
    DRM_IOCTL_AMDGPU_GEM_OP: iowr(b'd', DRM_COMMAND_BASE + DRM_AMDGPU_GEM_OP, drm_amdgpu_gem_op);
}

/// `DRM_AMDGPU_PROC_OPTIONS` (2025 kernels; not in Debian's libdrm
/// headers, so pinned by hand and kept out of [`DRM_IOCTLS`], which is
/// checked against those headers).
pub const DRM_AMDGPU_PROC_OPTIONS: u8 = 0x1A;

/// `struct drm_amdgpu_proc_options` (`DRM_IOCTL_AMDGPU_PROC_OPTIONS`): one
/// per-process option of the render node's process. For
/// [`AMDGPU_PROC_OPTIONS_OP_KFD_SIGBUS_DELAY`] `value` is the C union's
/// `kfd_sigbus_delay.value`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct drm_amdgpu_proc_options {
    /// `AMDGPU_PROC_OPTIONS_OP_*` (in).
    pub op: u32,
    /// The option's value (in).
    pub value: u32,
}
// SAFETY: two integers.
unsafe impl PlainArgs for drm_amdgpu_proc_options {}

/// `AMDGPU_PROC_OPTIONS_OP_KFD_SIGBUS_DELAY`: how long KFD waits before it
/// raises SIGBUS for a poison (RAS) event of this process, in
/// milliseconds; 0 = at once, [`AMDGPU_PROC_OPTIONS_KFD_SIGBUS_DELAY_DISABLED`]
/// = never.
pub const AMDGPU_PROC_OPTIONS_OP_KFD_SIGBUS_DELAY: u32 = 0;
/// `AMDGPU_PROC_OPTIONS_KFD_SIGBUS_DELAY_DISABLED`.
pub const AMDGPU_PROC_OPTIONS_KFD_SIGBUS_DELAY_DISABLED: u32 = 0xFFFF_FFFF;

/// Set a per-process option on a render node.
pub const DRM_IOCTL_AMDGPU_PROC_OPTIONS: crate::ioctl::Ioctl<drm_amdgpu_proc_options> =
    crate::ioctl::Ioctl::new(
        crate::ioctl::IOC_READ | crate::ioctl::IOC_WRITE,
        b'd',
        DRM_COMMAND_BASE + DRM_AMDGPU_PROC_OPTIONS,
        "DRM_IOCTL_AMDGPU_PROC_OPTIONS",
    );

// ---------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------

/// `AMDGPU_GEM_DOMAIN_CPU`.
pub const AMDGPU_GEM_DOMAIN_CPU: u64 = 0x1;
/// `AMDGPU_GEM_DOMAIN_GTT`.
pub const AMDGPU_GEM_DOMAIN_GTT: u64 = 0x2;
/// `AMDGPU_GEM_DOMAIN_VRAM`.
pub const AMDGPU_GEM_DOMAIN_VRAM: u64 = 0x4;
/// `AMDGPU_GEM_DOMAIN_GDS`.
pub const AMDGPU_GEM_DOMAIN_GDS: u64 = 0x8;
/// `AMDGPU_GEM_DOMAIN_GWS`.
pub const AMDGPU_GEM_DOMAIN_GWS: u64 = 0x10;
/// `AMDGPU_GEM_DOMAIN_OA`.
pub const AMDGPU_GEM_DOMAIN_OA: u64 = 0x20;
/// `AMDGPU_GEM_DOMAIN_MASK`.
pub const AMDGPU_GEM_DOMAIN_MASK: u64 = 0x3f;

/// `AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED`.
pub const AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED: u64 = 1 << 0;
/// `AMDGPU_GEM_CREATE_NO_CPU_ACCESS`.
pub const AMDGPU_GEM_CREATE_NO_CPU_ACCESS: u64 = 1 << 1;
/// `AMDGPU_GEM_CREATE_CPU_GTT_USWC`.
pub const AMDGPU_GEM_CREATE_CPU_GTT_USWC: u64 = 1 << 2;
/// `AMDGPU_GEM_CREATE_VRAM_CLEARED`.
pub const AMDGPU_GEM_CREATE_VRAM_CLEARED: u64 = 1 << 3;
/// `AMDGPU_GEM_CREATE_VRAM_CONTIGUOUS`.
pub const AMDGPU_GEM_CREATE_VRAM_CONTIGUOUS: u64 = 1 << 5;
/// `AMDGPU_GEM_CREATE_VM_ALWAYS_VALID`.
pub const AMDGPU_GEM_CREATE_VM_ALWAYS_VALID: u64 = 1 << 6;
/// `AMDGPU_GEM_CREATE_EXPLICIT_SYNC`.
pub const AMDGPU_GEM_CREATE_EXPLICIT_SYNC: u64 = 1 << 7;
/// `AMDGPU_GEM_CREATE_CP_MQD_GFX9`.
pub const AMDGPU_GEM_CREATE_CP_MQD_GFX9: u64 = 1 << 8;
/// `AMDGPU_GEM_CREATE_VRAM_WIPE_ON_RELEASE`.
pub const AMDGPU_GEM_CREATE_VRAM_WIPE_ON_RELEASE: u64 = 1 << 9;
/// `AMDGPU_GEM_CREATE_ENCRYPTED`.
pub const AMDGPU_GEM_CREATE_ENCRYPTED: u64 = 1 << 10;
/// `AMDGPU_GEM_CREATE_PREEMPTIBLE`.
pub const AMDGPU_GEM_CREATE_PREEMPTIBLE: u64 = 1 << 11;

/// `AMDGPU_GEM_METADATA_OP_SET_METADATA`.
pub const AMDGPU_GEM_METADATA_OP_SET_METADATA: u32 = 1;
/// `AMDGPU_GEM_METADATA_OP_GET_METADATA`.
pub const AMDGPU_GEM_METADATA_OP_GET_METADATA: u32 = 2;

/// `AMDGPU_GEM_OP_GET_GEM_CREATE_INFO`.
pub const AMDGPU_GEM_OP_GET_GEM_CREATE_INFO: u32 = 0;
/// `AMDGPU_GEM_OP_SET_PLACEMENT`.
pub const AMDGPU_GEM_OP_SET_PLACEMENT: u32 = 1;

/// `AMDGPU_VA_OP_MAP`.
pub const AMDGPU_VA_OP_MAP: u32 = 1;
/// `AMDGPU_VA_OP_UNMAP`.
pub const AMDGPU_VA_OP_UNMAP: u32 = 2;
/// `AMDGPU_VA_OP_CLEAR`.
pub const AMDGPU_VA_OP_CLEAR: u32 = 3;
/// `AMDGPU_VA_OP_REPLACE`.
pub const AMDGPU_VA_OP_REPLACE: u32 = 4;

/// `AMDGPU_VM_DELAY_UPDATE`.
pub const AMDGPU_VM_DELAY_UPDATE: u32 = 1 << 0;
/// `AMDGPU_VM_PAGE_READABLE`.
pub const AMDGPU_VM_PAGE_READABLE: u32 = 1 << 1;
/// `AMDGPU_VM_PAGE_WRITEABLE`.
pub const AMDGPU_VM_PAGE_WRITEABLE: u32 = 1 << 2;
/// `AMDGPU_VM_PAGE_EXECUTABLE`.
pub const AMDGPU_VM_PAGE_EXECUTABLE: u32 = 1 << 3;
/// `AMDGPU_VM_PAGE_PRT`.
pub const AMDGPU_VM_PAGE_PRT: u32 = 1 << 4;
/// `AMDGPU_VM_MTYPE_MASK`.
pub const AMDGPU_VM_MTYPE_MASK: u32 = 0xf << 5;
/// `AMDGPU_VM_MTYPE_DEFAULT`.
pub const AMDGPU_VM_MTYPE_DEFAULT: u32 = 0 << 5;
/// `AMDGPU_VM_MTYPE_NC`.
pub const AMDGPU_VM_MTYPE_NC: u32 = 1 << 5;
/// `AMDGPU_VM_MTYPE_WC`.
pub const AMDGPU_VM_MTYPE_WC: u32 = 2 << 5;
/// `AMDGPU_VM_MTYPE_CC`.
pub const AMDGPU_VM_MTYPE_CC: u32 = 3 << 5;
/// `AMDGPU_VM_MTYPE_UC`.
pub const AMDGPU_VM_MTYPE_UC: u32 = 4 << 5;
/// `AMDGPU_VM_MTYPE_RW`.
pub const AMDGPU_VM_MTYPE_RW: u32 = 5 << 5;

/// `AMDGPU_HW_IP_GFX`.
pub const AMDGPU_HW_IP_GFX: u32 = 0;
/// `AMDGPU_HW_IP_COMPUTE`.
pub const AMDGPU_HW_IP_COMPUTE: u32 = 1;
/// `AMDGPU_HW_IP_DMA`.
pub const AMDGPU_HW_IP_DMA: u32 = 2;
/// `AMDGPU_HW_IP_UVD`.
pub const AMDGPU_HW_IP_UVD: u32 = 3;
/// `AMDGPU_HW_IP_VCE`.
pub const AMDGPU_HW_IP_VCE: u32 = 4;
/// `AMDGPU_HW_IP_UVD_ENC`.
pub const AMDGPU_HW_IP_UVD_ENC: u32 = 5;
/// `AMDGPU_HW_IP_VCN_DEC`.
pub const AMDGPU_HW_IP_VCN_DEC: u32 = 6;
/// `AMDGPU_HW_IP_VCN_ENC`.
pub const AMDGPU_HW_IP_VCN_ENC: u32 = 7;
/// `AMDGPU_HW_IP_VCN_JPEG`.
pub const AMDGPU_HW_IP_VCN_JPEG: u32 = 8;
/// `AMDGPU_HW_IP_NUM` (libdrm 2.4.114).
pub const AMDGPU_HW_IP_NUM: u32 = 9;
/// `AMDGPU_HW_IP_INSTANCE_MAX_COUNT`.
pub const AMDGPU_HW_IP_INSTANCE_MAX_COUNT: u32 = 1;

/// `AMDGPU_IDS_FLAGS_FUSION`: APU.
pub const AMDGPU_IDS_FLAGS_FUSION: u64 = 0x1;
/// `AMDGPU_IDS_FLAGS_PREEMPTION`.
pub const AMDGPU_IDS_FLAGS_PREEMPTION: u64 = 0x2;
/// `AMDGPU_IDS_FLAGS_TMZ`.
pub const AMDGPU_IDS_FLAGS_TMZ: u64 = 0x4;

/// `AMDGPU_INFO_ACCEL_WORKING`: u32, non-zero if acceleration works.
pub const AMDGPU_INFO_ACCEL_WORKING: u32 = 0x00;
/// `AMDGPU_INFO_CRTC_FROM_ID`.
pub const AMDGPU_INFO_CRTC_FROM_ID: u32 = 0x01;
/// `AMDGPU_INFO_HW_IP_INFO`: [`drm_amdgpu_info_hw_ip`].
pub const AMDGPU_INFO_HW_IP_INFO: u32 = 0x02;
/// `AMDGPU_INFO_HW_IP_COUNT`: u32.
pub const AMDGPU_INFO_HW_IP_COUNT: u32 = 0x03;
/// `AMDGPU_INFO_TIMESTAMP`: u64.
pub const AMDGPU_INFO_TIMESTAMP: u32 = 0x05;
/// `AMDGPU_INFO_FW_VERSION`: [`drm_amdgpu_info_firmware`].
pub const AMDGPU_INFO_FW_VERSION: u32 = 0x0e;
/// `AMDGPU_INFO_NUM_BYTES_MOVED`.
pub const AMDGPU_INFO_NUM_BYTES_MOVED: u32 = 0x0f;
/// `AMDGPU_INFO_VRAM_USAGE`.
pub const AMDGPU_INFO_VRAM_USAGE: u32 = 0x10;
/// `AMDGPU_INFO_GTT_USAGE`.
pub const AMDGPU_INFO_GTT_USAGE: u32 = 0x11;
/// `AMDGPU_INFO_GDS_CONFIG`.
pub const AMDGPU_INFO_GDS_CONFIG: u32 = 0x13;
/// `AMDGPU_INFO_VRAM_GTT`: [`drm_amdgpu_info_vram_gtt`].
pub const AMDGPU_INFO_VRAM_GTT: u32 = 0x14;
/// `AMDGPU_INFO_READ_MMR_REG`: `count` u32 register values.
pub const AMDGPU_INFO_READ_MMR_REG: u32 = 0x15;
/// `AMDGPU_INFO_DEV_INFO`: [`drm_amdgpu_info_device`].
pub const AMDGPU_INFO_DEV_INFO: u32 = 0x16;
/// `AMDGPU_INFO_VIS_VRAM_USAGE`.
pub const AMDGPU_INFO_VIS_VRAM_USAGE: u32 = 0x17;
/// `AMDGPU_INFO_NUM_EVICTIONS`.
pub const AMDGPU_INFO_NUM_EVICTIONS: u32 = 0x18;
/// `AMDGPU_INFO_MEMORY`: [`drm_amdgpu_memory_info`].
pub const AMDGPU_INFO_MEMORY: u32 = 0x19;
/// `AMDGPU_INFO_VCE_CLOCK_TABLE`.
pub const AMDGPU_INFO_VCE_CLOCK_TABLE: u32 = 0x1A;
/// `AMDGPU_INFO_VBIOS`.
pub const AMDGPU_INFO_VBIOS: u32 = 0x1B;
/// `AMDGPU_INFO_NUM_HANDLES`.
pub const AMDGPU_INFO_NUM_HANDLES: u32 = 0x1C;
/// `AMDGPU_INFO_SENSOR`.
pub const AMDGPU_INFO_SENSOR: u32 = 0x1D;
/// `AMDGPU_INFO_VRAM_LOST_COUNTER`.
pub const AMDGPU_INFO_VRAM_LOST_COUNTER: u32 = 0x1F;
/// `AMDGPU_INFO_RAS_ENABLED_FEATURES`.
pub const AMDGPU_INFO_RAS_ENABLED_FEATURES: u32 = 0x20;
/// `AMDGPU_INFO_VIDEO_CAPS`.
pub const AMDGPU_INFO_VIDEO_CAPS: u32 = 0x21;

/// `AMDGPU_INFO_FW_VCE`.
pub const AMDGPU_INFO_FW_VCE: u32 = 0x1;
/// `AMDGPU_INFO_FW_UVD`.
pub const AMDGPU_INFO_FW_UVD: u32 = 0x2;
/// `AMDGPU_INFO_FW_GMC`.
pub const AMDGPU_INFO_FW_GMC: u32 = 0x03;
/// `AMDGPU_INFO_FW_GFX_ME`.
pub const AMDGPU_INFO_FW_GFX_ME: u32 = 0x04;
/// `AMDGPU_INFO_FW_GFX_PFP`.
pub const AMDGPU_INFO_FW_GFX_PFP: u32 = 0x05;
/// `AMDGPU_INFO_FW_GFX_CE`.
pub const AMDGPU_INFO_FW_GFX_CE: u32 = 0x06;
/// `AMDGPU_INFO_FW_GFX_RLC`.
pub const AMDGPU_INFO_FW_GFX_RLC: u32 = 0x07;
/// `AMDGPU_INFO_FW_GFX_MEC`: the MEC firmware (KFD's `fw_version`).
pub const AMDGPU_INFO_FW_GFX_MEC: u32 = 0x08;
/// `AMDGPU_INFO_FW_SMC`.
pub const AMDGPU_INFO_FW_SMC: u32 = 0x0a;
/// `AMDGPU_INFO_FW_SDMA`.
pub const AMDGPU_INFO_FW_SDMA: u32 = 0x0b;
/// `AMDGPU_INFO_FW_SOS`.
pub const AMDGPU_INFO_FW_SOS: u32 = 0x0c;
/// `AMDGPU_INFO_FW_ASD`.
pub const AMDGPU_INFO_FW_ASD: u32 = 0x0d;
/// `AMDGPU_INFO_FW_VCN`.
pub const AMDGPU_INFO_FW_VCN: u32 = 0x0e;
/// `AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_CNTL`.
pub const AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_CNTL: u32 = 0x0f;
/// `AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_GPM_MEM`.
pub const AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_GPM_MEM: u32 = 0x10;
/// `AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_SRM_MEM`.
pub const AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_SRM_MEM: u32 = 0x11;
/// `AMDGPU_INFO_FW_DMCU`.
pub const AMDGPU_INFO_FW_DMCU: u32 = 0x12;
/// `AMDGPU_INFO_FW_TA`.
pub const AMDGPU_INFO_FW_TA: u32 = 0x13;
/// `AMDGPU_INFO_FW_DMCUB`.
pub const AMDGPU_INFO_FW_DMCUB: u32 = 0x14;
/// `AMDGPU_INFO_FW_TOC`.
pub const AMDGPU_INFO_FW_TOC: u32 = 0x15;

/// `AMDGPU_INFO_MMR_SE_INDEX_SHIFT`.
pub const AMDGPU_INFO_MMR_SE_INDEX_SHIFT: u32 = 0;
/// `AMDGPU_INFO_MMR_SE_INDEX_MASK`.
pub const AMDGPU_INFO_MMR_SE_INDEX_MASK: u32 = 0xff;
/// `AMDGPU_INFO_MMR_SH_INDEX_SHIFT`.
pub const AMDGPU_INFO_MMR_SH_INDEX_SHIFT: u32 = 8;
/// `AMDGPU_INFO_MMR_SH_INDEX_MASK`.
pub const AMDGPU_INFO_MMR_SH_INDEX_MASK: u32 = 0xff;

/// `AMDGPU_VRAM_TYPE_UNKNOWN`.
pub const AMDGPU_VRAM_TYPE_UNKNOWN: u32 = 0;
/// `AMDGPU_VRAM_TYPE_GDDR1`.
pub const AMDGPU_VRAM_TYPE_GDDR1: u32 = 1;
/// `AMDGPU_VRAM_TYPE_DDR2`.
pub const AMDGPU_VRAM_TYPE_DDR2: u32 = 2;
/// `AMDGPU_VRAM_TYPE_GDDR3`.
pub const AMDGPU_VRAM_TYPE_GDDR3: u32 = 3;
/// `AMDGPU_VRAM_TYPE_GDDR4`.
pub const AMDGPU_VRAM_TYPE_GDDR4: u32 = 4;
/// `AMDGPU_VRAM_TYPE_GDDR5`.
pub const AMDGPU_VRAM_TYPE_GDDR5: u32 = 5;
/// `AMDGPU_VRAM_TYPE_HBM`.
pub const AMDGPU_VRAM_TYPE_HBM: u32 = 6;
/// `AMDGPU_VRAM_TYPE_DDR3`.
pub const AMDGPU_VRAM_TYPE_DDR3: u32 = 7;
/// `AMDGPU_VRAM_TYPE_DDR4`.
pub const AMDGPU_VRAM_TYPE_DDR4: u32 = 8;
/// `AMDGPU_VRAM_TYPE_GDDR6`.
pub const AMDGPU_VRAM_TYPE_GDDR6: u32 = 9;
/// `AMDGPU_VRAM_TYPE_DDR5`.
pub const AMDGPU_VRAM_TYPE_DDR5: u32 = 10;

/// `AMDGPU_FAMILY_UNKNOWN`.
pub const AMDGPU_FAMILY_UNKNOWN: u32 = 0;
/// `AMDGPU_FAMILY_SI`: Southern Islands.
pub const AMDGPU_FAMILY_SI: u32 = 110;
/// `AMDGPU_FAMILY_CI`: Sea Islands.
pub const AMDGPU_FAMILY_CI: u32 = 120;
/// `AMDGPU_FAMILY_KV`: Kaveri/Kabini.
pub const AMDGPU_FAMILY_KV: u32 = 125;
/// `AMDGPU_FAMILY_VI`: Volcanic Islands.
pub const AMDGPU_FAMILY_VI: u32 = 130;
/// `AMDGPU_FAMILY_CZ`: Carrizo/Stoney.
pub const AMDGPU_FAMILY_CZ: u32 = 135;
/// `AMDGPU_FAMILY_AI`: Vega and gfx9 compute parts (gfx90a, gfx942).
pub const AMDGPU_FAMILY_AI: u32 = 141;
/// `AMDGPU_FAMILY_RV`: Raven.
pub const AMDGPU_FAMILY_RV: u32 = 142;
/// `AMDGPU_FAMILY_NV`: Navi.
pub const AMDGPU_FAMILY_NV: u32 = 143;
/// `AMDGPU_FAMILY_VGH`: Van Gogh.
pub const AMDGPU_FAMILY_VGH: u32 = 144;
/// `AMDGPU_FAMILY_GC_11_0_0` (newer than libdrm 2.4.114; pinned).
pub const AMDGPU_FAMILY_GC_11_0_0: u32 = 145;
/// `AMDGPU_FAMILY_YC`: Yellow Carp.
pub const AMDGPU_FAMILY_YC: u32 = 146;
/// `AMDGPU_FAMILY_GC_11_0_1` (pinned).
pub const AMDGPU_FAMILY_GC_11_0_1: u32 = 148;
/// `AMDGPU_FAMILY_GC_10_3_6` (pinned).
pub const AMDGPU_FAMILY_GC_10_3_6: u32 = 149;
/// `AMDGPU_FAMILY_GC_11_5_0` (pinned).
pub const AMDGPU_FAMILY_GC_11_5_0: u32 = 150;
/// `AMDGPU_FAMILY_GC_10_3_7` (pinned).
pub const AMDGPU_FAMILY_GC_10_3_7: u32 = 151;
/// `AMDGPU_FAMILY_GC_12_0_0` (pinned).
pub const AMDGPU_FAMILY_GC_12_0_0: u32 = 152;
/// `AMDGPU_FAMILY_GC_11_5_4` (pinned, 2025 kernels).
pub const AMDGPU_FAMILY_GC_11_5_4: u32 = 154;

// ---------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------

/// `AMDGPU_INFO_DEV_INFO` on a render node: the device information libdrm's
/// `amdgpu_device_initialize` reads (PCI device id and revision, family,
/// `ids_flags`, clocks, CU counts, ...).
///
/// The answer buffer is a whole [`drm_amdgpu_info_device`]; the kernel
/// copies `min(return_size, its size)` bytes, so an older kernel leaves the
/// fields it does not know zero. Needs a render-node [`DeviceFile`]
/// (`/dev/kfd` answers `ENOTTY`); any errno of the ioctl is returned as is.
///
/// [`DeviceFile`]: crate::DeviceFile
pub fn query_device_info(file: &crate::DeviceFile) -> Result<drm_amdgpu_info_device, crate::Errno> {
    use std::os::fd::AsFd;
    query_device_info_on(&**file.driver(), file.as_fd())
}

/// [`query_device_info`] on a descriptor `driver` opened (for callers that
/// hold a [`Driver`](crate::Driver) and a bare render-node descriptor
/// rather than a [`DeviceFile`](crate::DeviceFile)).
pub fn query_device_info_on(
    driver: &dyn crate::Driver,
    fd: std::os::fd::BorrowedFd<'_>,
) -> Result<drm_amdgpu_info_device, crate::Errno> {
    let mut dev = drm_amdgpu_info_device::default();
    let mut req = drm_amdgpu_info {
        return_pointer: std::ptr::addr_of_mut!(dev) as u64,
        return_size: std::mem::size_of::<drm_amdgpu_info_device>() as u32,
        query: AMDGPU_INFO_DEV_INFO,
        u: drm_amdgpu_info_union::default(),
    };
    // SAFETY: `return_pointer` is the address of `dev`, a live, writable
    // `drm_amdgpu_info_device` of exactly `return_size` bytes that outlives
    // the call; the kernel writes at most `return_size` bytes there, and
    // every bit pattern is a valid value of that all-integer struct.
    unsafe { crate::ioctl::ioctl(driver, fd, DRM_IOCTL_AMDGPU_INFO, &mut req)? };
    Ok(dev)
}

/// `AMDGPU_PROC_OPTIONS_OP_KFD_SIGBUS_DELAY` on a render node: KFD's
/// SIGBUS delay for poison events of this process (`delay_ms`, see
/// [`AMDGPU_PROC_OPTIONS_OP_KFD_SIGBUS_DELAY`]). Kernels before 2025 lack
/// the request (`EINVAL` from the DRM core); any errno is returned as is.
pub fn set_kfd_sigbus_delay(file: &crate::DeviceFile, delay_ms: u32) -> Result<(), crate::Errno> {
    let mut args = drm_amdgpu_proc_options {
        op: AMDGPU_PROC_OPTIONS_OP_KFD_SIGBUS_DELAY,
        value: delay_ms,
    };
    file.ioctl_plain(DRM_IOCTL_AMDGPU_PROC_OPTIONS, &mut args)?;
    Ok(())
}

/// `DRM_IOCTL_PRIME_HANDLE_TO_FD` of GEM `handle` on a render node with
/// `flags` (`DRM_CLOEXEC`, `DRM_RDWR`): a new dma-buf descriptor, owned by
/// the caller.
pub fn prime_handle_to_fd(
    file: &crate::DeviceFile,
    handle: u32,
    flags: u32,
) -> Result<std::os::fd::OwnedFd, crate::Errno> {
    use std::os::fd::FromRawFd;
    let mut args = drm_prime_handle {
        handle,
        flags,
        ..Default::default()
    };
    file.ioctl_plain(DRM_IOCTL_PRIME_HANDLE_TO_FD, &mut args)?;
    // SAFETY: on success the kernel installed `args.fd` in this process
    // for the caller; nothing else owns it.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(args.fd) })
}

/// `DRM_IOCTL_AMDGPU_GEM_MMAP` of GEM `handle`: the render node's fake
/// mmap offset of the buffer.
pub fn gem_mmap_offset(file: &crate::DeviceFile, handle: u32) -> Result<u64, crate::Errno> {
    let mut args = drm_amdgpu_gem_mmap {
        r#in: drm_amdgpu_gem_mmap_in { handle, _pad: 0 },
    };
    file.ioctl_plain(DRM_IOCTL_AMDGPU_GEM_MMAP, &mut args)?;
    // SAFETY: both union members are plain integers, so any bit pattern
    // is a valid `out`; on success it is what the kernel wrote.
    Ok(unsafe { args.out.addr_ptr })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DeviceFile, Driver, Errno, NixDriver};
    use std::os::fd::{BorrowedFd, OwnedFd};
    use std::path::Path;
    use std::sync::Arc;

    #[test]
    fn proc_options_request_is_pinned() {
        // _IOWR('d', DRM_COMMAND_BASE + 0x1A, 8 bytes).
        assert_eq!(std::mem::size_of::<drm_amdgpu_proc_options>(), 8);
        assert_eq!(DRM_IOCTL_AMDGPU_PROC_OPTIONS.request(), 0xC008_645A);
    }

    /// Answers `AMDGPU_INFO_DEV_INFO` like the kernel: copies at most
    /// `return_size` bytes of a device record to `return_pointer`.
    #[derive(Debug)]
    struct DevInfoDriver;

    impl Driver for DevInfoDriver {
        fn open_kfd(&self) -> Result<OwnedFd, Errno> {
            Err(Errno::ENOENT)
        }

        fn open_render_node(&self, _minor: u32) -> Result<OwnedFd, Errno> {
            Ok(OwnedFd::from(
                std::fs::File::open("/dev/null").map_err(|_| Errno::EIO)?,
            ))
        }

        unsafe fn ioctl(
            &self,
            _fd: BorrowedFd<'_>,
            request: libc::c_ulong,
            arg: *mut libc::c_void,
        ) -> Result<i32, Errno> {
            if request != libc::c_ulong::from(DRM_IOCTL_AMDGPU_INFO.request()) {
                return Err(Errno::ENOTTY);
            }
            // SAFETY: the request says `arg` is a `drm_amdgpu_info`.
            let q = unsafe { &*(arg as *const drm_amdgpu_info) };
            if q.query != AMDGPU_INFO_DEV_INFO {
                return Err(Errno::EINVAL);
            }
            let answer = drm_amdgpu_info_device {
                device_id: 0x740f,
                pci_rev: 0x02,
                family: AMDGPU_FAMILY_AI,
                ..Default::default()
            };
            let n = (q.return_size as usize).min(std::mem::size_of_val(&answer));
            // SAFETY: the caller guarantees `return_pointer` is writable for
            // `return_size` bytes; `n` is at most that.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    std::ptr::addr_of!(answer).cast::<u8>(),
                    q.return_pointer as *mut u8,
                    n,
                )
            };
            Ok(0)
        }

        fn root(&self) -> &Path {
            Path::new("/")
        }
    }

    #[test]
    fn device_info_is_read_into_a_whole_record() {
        let f = DeviceFile::open_render_node(Arc::new(DevInfoDriver), 128).unwrap();
        let info = query_device_info(&f).unwrap();
        assert_eq!((info.device_id, info.pci_rev), (0x740f, 0x02));
        assert_eq!(info.family, AMDGPU_FAMILY_AI);
        assert_eq!(info.tcc_disabled_mask, 0);
    }

    #[test]
    fn device_info_errno_is_returned() {
        // /dev/null stands in for a render node: the real kernel answers
        // ENOTTY.
        let d: Arc<dyn Driver> = Arc::new(NixDriver::with_paths("/", "/dev/null"));
        let f = DeviceFile::open_kfd(d).unwrap();
        assert_eq!(query_device_info(&f).unwrap_err(), Errno::ENOTTY);
    }
}
