//! The thunk-private part of the interface Debian's libhsakmt 5.2.3 was
//! built with: ROCT-Thunk-Interface `rocm-5.2.3`,
//! `include/linux/kfd_ioctl.h`, KFD ioctl interface 1.8 (debug interface
//! 10.3).
//!
//! That header puts five non-upstream requests at `0x80..=0x84`. Four of
//! them have the same structs as today's ROCm header (re-exported here);
//! `AMDKFD_IOC_DBG_TRAP` at `0x82` takes the old generic 40-byte
//! [`kfd_ioctl_dbg_trap_args`], unlike upstream's `0x26`. The simulator
//! must answer all of them. The common requests (`0x01..=0x22`) use the
//! upstream structs, at their older (smaller) sizes where those grew.

use crate::ioctl::PlainArgs;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

pub use super::rocm::{
    kfd_ioctl_cross_memory_copy_args, kfd_ioctl_ipc_export_handle_args,
    kfd_ioctl_ipc_import_handle_args, kfd_ioctl_spm_args,
};

/// `KFD_IOCTL_MINOR_VERSION` of that header.
pub const KFD_IOCTL_MINOR_VERSION: u32 = 8;
/// `KFD_IOCTL_DBG_MAJOR_VERSION`: debugger interface major version.
pub const KFD_IOCTL_DBG_MAJOR_VERSION: u32 = 10;
/// `KFD_IOCTL_DBG_MINOR_VERSION`: debugger interface minor version.
pub const KFD_IOCTL_DBG_MINOR_VERSION: u32 = 3;

/// `struct kfd_ioctl_dbg_trap_args` of the 1.8 header: one generic layout
/// for every operation.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_trap_args {
    /// Exception mask (in/out, depending on `op`).
    pub exception_mask: u64,
    /// User pointer, meaning depends on `op` (in).
    pub ptr: u64,
    /// Target process (in).
    pub pid: u32,
    /// `KFD_IOC_DBG_TRAP_*` of this module (in).
    pub op: u32,
    /// First operand (in/out).
    pub data1: u32,
    /// Second operand (in/out).
    pub data2: u32,
    /// Third operand (in/out).
    pub data3: u32,
    /// Fourth operand (in/out).
    pub data4: u32,
}

/// `struct kfd_queue_snapshot_entry` of the 1.8 header (`reserved[17]`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_queue_snapshot_entry {
    /// Raised exceptions.
    pub exception_status: u64,
    /// GPU VA of the ring.
    pub ring_base_address: u64,
    /// User VA of the write pointer.
    pub write_pointer_address: u64,
    /// User VA of the read pointer.
    pub read_pointer_address: u64,
    /// GPU VA of the CWSR area.
    pub ctx_save_restore_address: u64,
    /// Queue id.
    pub queue_id: u32,
    /// Device.
    pub gpu_id: u32,
    /// Ring size.
    pub ring_size: u32,
    /// Queue type.
    pub queue_type: u32,
    /// CWSR area size.
    pub ctx_save_restore_area_size: u32,
    /// Reserved.
    pub reserved: [u32; 17],
}

/// `struct kfd_dbg_device_info_entry` of the 1.8 header (64 bytes).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_dbg_device_info_entry {
    /// Raised device exceptions.
    pub exception_status: u64,
    /// LDS aperture base.
    pub lds_base: u64,
    /// LDS aperture limit.
    pub lds_limit: u64,
    /// Scratch aperture base.
    pub scratch_base: u64,
    /// Scratch aperture limit.
    pub scratch_limit: u64,
    /// GPUVM aperture base.
    pub gpuvm_base: u64,
    /// GPUVM aperture limit.
    pub gpuvm_limit: u64,
    /// Device.
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}
// SAFETY: plain values (this is an output record, not an ioctl argument).
unsafe impl PlainArgs for kfd_dbg_device_info_entry {}

/// `KFD_IOC_DBG_TRAP_ENABLE`: data1 0/1 disable/enable, data2 fd (out),
/// data3 runtime info size, ptr runtime info buffer.
pub const KFD_IOC_DBG_TRAP_ENABLE: u32 = 0;
/// `KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE`.
pub const KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE: u32 = 1;
/// `KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE`.
pub const KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE: u32 = 2;
/// `KFD_IOC_DBG_TRAP_NODE_SUSPEND`.
pub const KFD_IOC_DBG_TRAP_NODE_SUSPEND: u32 = 3;
/// `KFD_IOC_DBG_TRAP_NODE_RESUME`.
pub const KFD_IOC_DBG_TRAP_NODE_RESUME: u32 = 4;
/// `KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT`.
pub const KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT: u32 = 5;
/// `KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT`.
pub const KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT: u32 = 6;
/// `KFD_IOC_DBG_TRAP_GET_VERSION`: data1/data2 = debug major/minor (out).
pub const KFD_IOC_DBG_TRAP_GET_VERSION: u32 = 7;
/// `KFD_IOC_DBG_TRAP_CLEAR_ADDRESS_WATCH`.
pub const KFD_IOC_DBG_TRAP_CLEAR_ADDRESS_WATCH: u32 = 8;
/// `KFD_IOC_DBG_TRAP_SET_ADDRESS_WATCH`.
pub const KFD_IOC_DBG_TRAP_SET_ADDRESS_WATCH: u32 = 9;
/// `KFD_IOC_DBG_TRAP_SET_PRECISE_MEM_OPS`.
pub const KFD_IOC_DBG_TRAP_SET_PRECISE_MEM_OPS: u32 = 10;
/// `KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO`.
pub const KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO: u32 = 11;
/// `KFD_IOC_DBG_TRAP_DEVICE_SNAPSHOT`.
pub const KFD_IOC_DBG_TRAP_DEVICE_SNAPSHOT: u32 = 12;
/// `KFD_IOC_DBG_TRAP_RUNTIME_ENABLE`: data1 enable, data2 ttmp save,
/// ptr r_debug (what hsaKmtRuntimeEnable issues in 5.2.3).
pub const KFD_IOC_DBG_TRAP_RUNTIME_ENABLE: u32 = 13;
/// `KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT`.
pub const KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT: u32 = 14;
/// `KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED`.
pub const KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED: u32 = 15;

crate::ioctls! {
    table KFD_IOCTLS_ROCM_5_2;
    /// Thunk-private `0x80`: import an IPC handle.
    AMDKFD_IOC_IPC_IMPORT_HANDLE: iowr(b'K', 0x80, kfd_ioctl_ipc_import_handle_args);
    /// Thunk-private `0x81`: export an IPC handle.
    AMDKFD_IOC_IPC_EXPORT_HANDLE: iowr(b'K', 0x81, kfd_ioctl_ipc_export_handle_args);
    /// Thunk-private `0x82`: the old generic debug trap request
    /// (`0xc0284b82`); hsaKmtRuntimeEnable/Disable issue it.
    AMDKFD_IOC_DBG_TRAP: iowr(b'K', 0x82, kfd_ioctl_dbg_trap_args);
    /// Thunk-private `0x83`: cross-process memory copy.
    AMDKFD_IOC_CROSS_MEMORY_COPY: iowr(b'K', 0x83, kfd_ioctl_cross_memory_copy_args);
    /// Thunk-private `0x84`: streaming performance monitor.
    AMDKFD_IOC_RLC_SPM: iowr(b'K', 0x84, kfd_ioctl_spm_args);
}
