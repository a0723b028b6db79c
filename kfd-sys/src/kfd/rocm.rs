//! Non-upstream parts of ROCm's own `kfd_ioctl.h` (the copy in
//! rocm-systems `projects/rocr-runtime/libhsakmt/include/hsakmt/linux/`
//! and the ROCK kernel driver): the `0x80..=0x87` requests and their
//! structs, plus ROCm-only extensions of upstream structs.
//!
//! The requests themselves are declared in [`super::KFD_IOCTLS`]; the
//! structs are re-exported from [`super`]. None of these types exist in
//! the system header: their sizes and offsets are pinned in
//! `tests/layout_kfd.rs`.

use super::opaque_union_debug;
use crate::ioctl::PlainArgs;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `struct kfd_ioctl_ipc_export_handle_args` (`AMDKFD_IOC_IPC_EXPORT_HANDLE`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_ipc_export_handle_args {
    /// Buffer handle (in).
    pub handle: u64,
    /// 128-bit share handle (out).
    pub share_handle: [u32; 4],
    /// Device (in).
    pub gpu_id: u32,
    /// Flags (in).
    pub flags: u32,
}
// SAFETY: handles and ids only.
unsafe impl PlainArgs for kfd_ioctl_ipc_export_handle_args {}

/// `struct kfd_ioctl_ipc_import_handle_args` (`AMDKFD_IOC_IPC_IMPORT_HANDLE`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_ipc_import_handle_args {
    /// Buffer handle (out).
    pub handle: u64,
    /// GPU VA to map at (in).
    pub va_addr: u64,
    /// Render-node mmap offset (out).
    pub mmap_offset: u64,
    /// 128-bit share handle (in).
    pub share_handle: [u32; 4],
    /// Device (in).
    pub gpu_id: u32,
    /// `KFD_IOC_ALLOC_MEM_FLAGS_*` of the buffer (out).
    pub flags: u32,
}
// SAFETY: a GPU VA, handles and ids.
unsafe impl PlainArgs for kfd_ioctl_ipc_import_handle_args {}

/// `struct kfd_memory_range`: one element of the cross-memory-copy arrays.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_memory_range {
    /// GPU VA.
    pub va_addr: u64,
    /// Size in bytes.
    pub size: u64,
}

/// `struct kfd_ioctl_cross_memory_copy_args` (`AMDKFD_IOC_CROSS_MEMORY_COPY`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_cross_memory_copy_args {
    /// Remote process id (in).
    pub pid: u32,
    /// `KFD_CROSS_MEMORY_RW_BIT`: set for a write to the remote (in).
    pub flags: u32,
    /// User pointer to source [`kfd_memory_range`]s (in).
    pub src_mem_range_array: u64,
    /// Number of source ranges (in).
    pub src_mem_array_size: u64,
    /// User pointer to destination [`kfd_memory_range`]s (in).
    pub dst_mem_range_array: u64,
    /// Number of destination ranges (in).
    pub dst_mem_array_size: u64,
    /// Bytes copied (out).
    pub bytes_copied: u64,
}

/// `struct kfd_ioctl_spm_args` (`AMDKFD_IOC_RLC_SPM`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_spm_args {
    /// User destination buffer, 0 to stop (in).
    pub dest_buf: u64,
    /// Size of the buffer (in).
    pub buf_size: u32,
    /// `KFD_IOCTL_SPM_OP_*` (in).
    pub op: u32,
    /// Timeout in ms (in); time left (out).
    pub timeout: u32,
    /// Device (in).
    pub gpu_id: u32,
    /// Bytes copied to the previous buffer (out).
    pub bytes_copied: u32,
    /// Non-zero if data was lost (out).
    pub has_data_loss: u32,
}

/// `struct kfd_ioctl_spm_buffer_header`: header of an SPM destination
/// buffer.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_spm_buffer_header {
    /// SPM version: bits 0-23 minor, 24-31 major (out).
    pub version: u32,
    /// Bytes copied for this sub-block (out).
    pub bytes_copied: u32,
    /// Non-zero if data was lost (out).
    pub has_data_loss: u32,
    /// Reserved.
    pub reserved: [u32; 5],
}

/// `struct kfd_pc_sample_info`: one PC-sampling configuration.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_pc_sample_info {
    /// Sample interval in the unit of `type` (in).
    pub interval: u64,
    /// Minimum interval (out).
    pub interval_min: u64,
    /// Maximum interval (out).
    pub interval_max: u64,
    /// `KFD_IOCTL_PCS_FLAG_*` restrictions (out).
    pub flags: u64,
    /// `KFD_IOCTL_PCS_METHOD_*` (in/out).
    pub method: u32,
    /// `KFD_IOCTL_PCS_TYPE_*` (in/out).
    pub r#type: u32,
}

/// `struct kfd_ioctl_pc_sample_args` (`AMDKFD_IOC_PC_SAMPLE`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_pc_sample_args {
    /// User pointer to [`kfd_pc_sample_info`]s (in).
    pub sample_info_ptr: u64,
    /// Number of infos (in/out).
    pub num_sample_info: u32,
    /// `KFD_IOCTL_PCS_OP_*` (in).
    pub op: u32,
    /// Device (in).
    pub gpu_id: u32,
    /// Sampler instance (in/out).
    pub trace_id: u32,
    /// `KFD_IOCTL_PCS_QUERY_TYPE_*` (in).
    pub flags: u32,
    /// Reserved.
    pub reserved: u32,
}

/// `struct kfd_ioctl_pmc_settings`: per-GPU profiler settings.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_pmc_settings {
    /// User gpu_id (in).
    pub gpu_id: u32,
    /// Lock the GPU for profiling, 0/1 (in).
    pub lock: u32,
    /// Force perf counters on for the GPU's queues, 0/1 (in).
    pub perfcount_enable: u32,
}
// SAFETY: plain values.
unsafe impl PlainArgs for kfd_ioctl_pmc_settings {}

/// The anonymous union of [`kfd_ioctl_profiler_args`].
#[repr(C)]
#[derive(Clone, Copy, FromBytes, Immutable, KnownLayout)]
pub union kfd_ioctl_profiler_args_union {
    /// `KFD_IOC_PROFILER_PC_SAMPLE`.
    pub pc_sample: kfd_ioctl_pc_sample_args,
    /// `KFD_IOC_PROFILER_PMC`.
    pub pmc: kfd_ioctl_pmc_settings,
    /// `KFD_IOC_PROFILER_VERSION` (out).
    pub version: u32,
}
opaque_union_debug!(kfd_ioctl_profiler_args_union);
impl Default for kfd_ioctl_profiler_args_union {
    fn default() -> Self {
        // The PC-sampling member is the largest (32 bytes).
        Self {
            pc_sample: Default::default(),
        }
    }
}

/// `struct kfd_ioctl_profiler_args` (`AMDKFD_IOC_PROFILER`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, FromBytes, Immutable, KnownLayout)]
pub struct kfd_ioctl_profiler_args {
    /// `KFD_IOC_PROFILER_*` (in).
    pub op: u32,
    /// Operation arguments.
    pub u: kfd_ioctl_profiler_args_union,
}

/// `struct kfd_ais_in_args`: input of `AMDKFD_IOC_AIS_OP`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ais_in_args {
    /// Buffer handle, mapped to the GPU (in).
    pub handle: u64,
    /// Offset into the buffer (in).
    pub handle_offset: u64,
    /// Offset into the file (in).
    pub file_offset: i64,
    /// Bytes to transfer (in).
    pub size: u64,
    /// `KFD_IOC_AIS_READ` or `KFD_IOC_AIS_WRITE` (in).
    pub op: u32,
    /// File descriptor (in).
    pub fd: i32,
}

/// `struct kfd_ais_out_args`: output of `AMDKFD_IOC_AIS_OP`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ais_out_args {
    /// Bytes transferred (out).
    pub size_copied: u64,
    /// 0 or a negative errno (out).
    pub status: i32,
    /// Unused.
    pub pad: i32,
}

/// The anonymous union of [`kfd_ioctl_ais_args`].
#[repr(C)]
#[derive(Clone, Copy, FromBytes, Immutable, KnownLayout)]
pub union kfd_ioctl_ais_args_union {
    /// Input.
    pub r#in: kfd_ais_in_args,
    /// Output.
    pub out: kfd_ais_out_args,
}
opaque_union_debug!(kfd_ioctl_ais_args_union);
impl Default for kfd_ioctl_ais_args_union {
    fn default() -> Self {
        // The input member is the largest (40 bytes).
        Self {
            r#in: Default::default(),
        }
    }
}

/// `struct kfd_ioctl_ais_args` (`AMDKFD_IOC_AIS_OP`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, FromBytes, Immutable, KnownLayout)]
pub struct kfd_ioctl_ais_args {
    /// Input, overwritten by the output.
    pub u: kfd_ioctl_ais_args_union,
}

/// ROCm's extended `struct kfd_ioctl_update_queue_args` (40 bytes; ROCm's
/// own interface numbering calls it 1.22, which differs from upstream's
/// 1.22). Send it with [`AMDKFD_IOC_UPDATE_QUEUE_EXT`]; kernels without the
/// extension read only the first 24 bytes.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_update_queue_args_ext {
    /// New GPU VA of the ring (in).
    pub ring_base_address: u64,
    /// Queue to update (in).
    pub queue_id: u32,
    /// New ring size in bytes (in).
    pub ring_size: u32,
    /// New time-slice percentage (in).
    pub queue_percentage: u32,
    /// New priority (in).
    pub queue_priority: u32,
    /// GPU VA of the MEC dispatch-record ring, 0 to disable (in).
    pub dispatch_record_buffer_addr: u64,
    /// Capacity of that ring in records (in).
    pub dispatch_record_buffer_size: u32,
    /// Padding.
    pub pad: u32,
}

/// `AMDKFD_IOC_UPDATE_QUEUE` with ROCm's 40-byte argument.
pub const AMDKFD_IOC_UPDATE_QUEUE_EXT: crate::ioctl::Ioctl<kfd_ioctl_update_queue_args_ext> =
    crate::ioctl::Ioctl::new(
        crate::ioctl::IOC_WRITE,
        super::AMDKFD_IOCTL_BASE,
        0x07,
        "AMDKFD_IOC_UPDATE_QUEUE",
    );

/// `KFD_DBG_EV_FLAG_CLEAR_STATUS`: clear the status when querying a debug
/// event (ROCm header only).
pub const KFD_DBG_EV_FLAG_CLEAR_STATUS: u32 = 1;
/// `KFD_INVALID_GPUID` (ROCm header only).
pub const KFD_INVALID_GPUID: u32 = 0xffff_ffff;
/// `KFD_INVALID_QUEUEID` (ROCm header only).
pub const KFD_INVALID_QUEUEID: u32 = 0xffff_ffff;
/// `KFD_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK`: runtime capability
/// bit (ROCm header only).
pub const KFD_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK: u32 = 0x8000_0000;

/// `KFD_IOCTL_SPM_OP_ACQUIRE`: take exclusive use of SPM on a device.
pub const KFD_IOCTL_SPM_OP_ACQUIRE: u32 = 0;
/// `KFD_IOCTL_SPM_OP_RELEASE`: give SPM back.
pub const KFD_IOCTL_SPM_OP_RELEASE: u32 = 1;
/// `KFD_IOCTL_SPM_OP_SET_DEST_BUF`: set or clear the destination buffer.
pub const KFD_IOCTL_SPM_OP_SET_DEST_BUF: u32 = 2;

/// `KFD_CROSS_MEMORY_RW_BIT`: in `flags`, set = write to the remote process.
pub const KFD_CROSS_MEMORY_RW_BIT: u32 = 1 << 0;

/// `KFD_IOCTL_PCS_OP_QUERY_CAPABILITIES`.
pub const KFD_IOCTL_PCS_OP_QUERY_CAPABILITIES: u32 = 0;
/// `KFD_IOCTL_PCS_OP_CREATE`.
pub const KFD_IOCTL_PCS_OP_CREATE: u32 = 1;
/// `KFD_IOCTL_PCS_OP_DESTROY`.
pub const KFD_IOCTL_PCS_OP_DESTROY: u32 = 2;
/// `KFD_IOCTL_PCS_OP_START`.
pub const KFD_IOCTL_PCS_OP_START: u32 = 3;
/// `KFD_IOCTL_PCS_OP_STOP`.
pub const KFD_IOCTL_PCS_OP_STOP: u32 = 4;
/// `KFD_IOCTL_PCS_FLAG_POWER_OF_2`: intervals must be powers of two.
pub const KFD_IOCTL_PCS_FLAG_POWER_OF_2: u64 = 0x1;
/// `KFD_IOCTL_PCS_METHOD_HOSTTRAP`.
pub const KFD_IOCTL_PCS_METHOD_HOSTTRAP: u32 = 1;
/// `KFD_IOCTL_PCS_METHOD_STOCHASTIC`.
pub const KFD_IOCTL_PCS_METHOD_STOCHASTIC: u32 = 2;
/// `KFD_IOCTL_PCS_TYPE_TIME_US`.
pub const KFD_IOCTL_PCS_TYPE_TIME_US: u32 = 0;
/// `KFD_IOCTL_PCS_TYPE_CLOCK_CYCLES`.
pub const KFD_IOCTL_PCS_TYPE_CLOCK_CYCLES: u32 = 1;
/// `KFD_IOCTL_PCS_TYPE_INSTRUCTIONS`.
pub const KFD_IOCTL_PCS_TYPE_INSTRUCTIONS: u32 = 2;
/// `KFD_IOCTL_PCS_QUERY_TYPE_FULL`: list every configuration, not only the
/// current one.
pub const KFD_IOCTL_PCS_QUERY_TYPE_FULL: u32 = 1 << 0;

/// `KFD_IOC_PROFILER_VERSION_NUM`: profiler interface version.
pub const KFD_IOC_PROFILER_VERSION_NUM: u32 = 1;
/// `KFD_IOC_PROFILER_PMC`.
pub const KFD_IOC_PROFILER_PMC: u32 = 0;
/// `KFD_IOC_PROFILER_PC_SAMPLE`.
pub const KFD_IOC_PROFILER_PC_SAMPLE: u32 = 1;
/// `KFD_IOC_PROFILER_VERSION`.
pub const KFD_IOC_PROFILER_VERSION: u32 = 2;

/// `KFD_IOC_AIS_READ`: file to VRAM.
pub const KFD_IOC_AIS_READ: u32 = 1;
/// `KFD_IOC_AIS_WRITE`: VRAM to file.
pub const KFD_IOC_AIS_WRITE: u32 = 2;

/// `AMDKFD_COMMAND_START_2`: first non-upstream command number.
pub const AMDKFD_COMMAND_START_2: u8 = 0x80;
/// `AMDKFD_COMMAND_END_2`: one past the last non-upstream command number.
pub const AMDKFD_COMMAND_END_2: u8 = 0x88;
