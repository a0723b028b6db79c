//! The amdkfd uapi (`include/uapi/linux/kfd_ioctl.h`).
//!
//! Layout follows the newest upstream header (KFD ioctl interface 1.22,
//! amd-staging-drm-next, early 2026) plus the non-upstream requests that
//! ROCm's own copy of the header adds (numbers `0x80..=0x87`, see
//! [`rocm`]). Requests and structs of the thunk-private interface 1.8 that
//! Debian's libhsakmt 5.2.3 was built with live in [`rocm_5_2`].
//!
//! Every request is declared once with [`crate::ioctls!`]; [`KFD_IOCTLS`]
//! lists them all. The kernel dispatches on the command number
//! (`_IOC_NR`) and copies `min`/`max` of the user's and its own argument
//! size, so structs that grew over time (e.g. `kfd_ioctl_create_queue_args`)
//! stay compatible in both directions.
//!
//! Types newer than the system header (linux-libc-dev 6.1, KFD 1.11) carry
//! pinned sizes and offsets in `tests/layout_kfd.rs`; everything else is
//! checked against `/usr/include/linux/kfd_ioctl.h` by the C probe.
//!
//! Every struct and union is plain data for [`zerocopy`]: `FromBytes`,
//! `Immutable` and `KnownLayout`, and `IntoBytes` wherever the derive
//! proves, at compile time, that no byte is padding. Not `IntoBytes`:
//! [`kfd_ioctl_criu_args`] (tail padding), the generic
//! [`kfd_ioctl_svm_args_n`], and the unions with the structs that hold
//! one ([`kfd_ioctl_dbg_trap_args`], [`kfd_event_data`],
//! [`kfd_ioctl_profiler_args`], [`kfd_ioctl_ais_args`]): zerocopy derives
//! `IntoBytes` for a union only behind a `--cfg` of its own, since Rust
//! has not settled which bytes of a union value are initialised. Write
//! those through their members.
#![allow(non_camel_case_types)]

use crate::ioctl::{Ioctl, PlainArgs, IOC_READ, IOC_WRITE};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

mod consts;
mod flags;
pub mod rocm;
pub mod rocm_5_2;

pub use consts::*;
pub use flags::*;
pub use rocm::{
    kfd_ais_in_args, kfd_ais_out_args, kfd_ioctl_ais_args, kfd_ioctl_ais_args_union,
    kfd_ioctl_cross_memory_copy_args, kfd_ioctl_ipc_export_handle_args,
    kfd_ioctl_ipc_import_handle_args, kfd_ioctl_pc_sample_args, kfd_ioctl_pmc_settings,
    kfd_ioctl_profiler_args, kfd_ioctl_profiler_args_union, kfd_ioctl_spm_args,
    kfd_ioctl_spm_buffer_header, kfd_memory_range, kfd_pc_sample_info,
};

/// `'K'`: the ioctl type byte of every KFD request (`AMDKFD_IOCTL_BASE`).
pub const AMDKFD_IOCTL_BASE: u8 = b'K';

/// Implements `Debug` for a C union without reading any member.
macro_rules! opaque_union_debug {
    ($($t:ident),* $(,)?) => {$(
        impl ::std::fmt::Debug for $t {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(concat!(stringify!($t), " { .. }"))
            }
        }
    )*};
}
pub(crate) use opaque_union_debug;

// ---------------------------------------------------------------------------
// Version
// ---------------------------------------------------------------------------

/// `struct kfd_ioctl_get_version_args` (`AMDKFD_IOC_GET_VERSION`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_get_version_args {
    /// Major version of the ioctl interface (out).
    pub major_version: u32,
    /// Minor version of the ioctl interface (out).
    pub minor_version: u32,
}
// SAFETY: two plain u32 fields.
unsafe impl PlainArgs for kfd_ioctl_get_version_args {}

// ---------------------------------------------------------------------------
// Queues
// ---------------------------------------------------------------------------

/// `struct kfd_ioctl_create_queue_args` (`AMDKFD_IOC_CREATE_QUEUE`).
///
/// 96 bytes since KFD 1.17 (`sdma_engine_id` and a trailing word were
/// added); the 1.1..1.16 layout is the first 88 bytes.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_create_queue_args {
    /// GPU VA of the ring buffer (in).
    pub ring_base_address: u64,
    /// User VA of the write pointer (in; the header still says "from KFD").
    pub write_pointer_address: u64,
    /// User VA of the read pointer (in; the header still says "from KFD").
    pub read_pointer_address: u64,
    /// mmap offset of the doorbell on the KFD fd (out).
    pub doorbell_offset: u64,
    /// Ring size in bytes (in).
    pub ring_size: u32,
    /// Target device (in).
    pub gpu_id: u32,
    /// `KFD_IOC_QUEUE_TYPE_*` (in).
    pub queue_type: u32,
    /// Percentage of time slice, 0..=100 (in).
    pub queue_percentage: u32,
    /// Priority 0..=15 (in).
    pub queue_priority: u32,
    /// Queue id (out).
    pub queue_id: u32,
    /// GPU VA of the end-of-pipe buffer (in).
    pub eop_buffer_address: u64,
    /// Size of the EOP buffer (in).
    pub eop_buffer_size: u64,
    /// GPU VA of the context save/restore area (in).
    pub ctx_save_restore_address: u64,
    /// Size of the context save/restore area (in).
    pub ctx_save_restore_size: u32,
    /// Control stack size inside the CWSR area (in).
    pub ctl_stack_size: u32,
    /// SDMA engine for `KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID` (in). Since 1.17.
    pub sdma_engine_id: u32,
    /// Size of the metadata ring placed after the AQL ring, a power of two
    /// or 0 (in). Since 1.22 (upstream); `pad` in 1.17..1.21.
    pub metadata_ring_size: u32,
}

/// `struct kfd_ioctl_destroy_queue_args` (`AMDKFD_IOC_DESTROY_QUEUE`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_destroy_queue_args {
    /// Queue to destroy (in).
    pub queue_id: u32,
    /// Padding.
    pub pad: u32,
}
// SAFETY: ids only.
unsafe impl PlainArgs for kfd_ioctl_destroy_queue_args {}

/// `struct kfd_ioctl_update_queue_args` (`AMDKFD_IOC_UPDATE_QUEUE`),
/// upstream layout (24 bytes). ROCm's extended 40-byte form is
/// [`rocm::kfd_ioctl_update_queue_args_ext`].
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_update_queue_args {
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
}

/// `struct kfd_ioctl_set_cu_mask_args` (`AMDKFD_IOC_SET_CU_MASK`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_set_cu_mask_args {
    /// Queue (in).
    pub queue_id: u32,
    /// Number of mask bits (a multiple of 32) at `cu_mask_ptr` (in).
    pub num_cu_mask: u32,
    /// User pointer to the `u32` mask words (in).
    pub cu_mask_ptr: u64,
}

/// `struct kfd_ioctl_get_queue_wave_state_args`
/// (`AMDKFD_IOC_GET_QUEUE_WAVE_STATE`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_get_queue_wave_state_args {
    /// User buffer receiving the control stack (in).
    pub ctl_stack_address: u64,
    /// Bytes of control stack in use (out).
    pub ctl_stack_used_size: u32,
    /// Bytes of the save area in use (out).
    pub save_area_used_size: u32,
    /// Queue (in).
    pub queue_id: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_ioctl_get_available_memory_args`
/// (`AMDKFD_IOC_AVAILABLE_MEMORY`). Since 1.9.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_get_available_memory_args {
    /// Bytes still available for allocation (out).
    pub available: u64,
    /// Device (in).
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}
// SAFETY: plain values.
unsafe impl PlainArgs for kfd_ioctl_get_available_memory_args {}

/// `struct kfd_queue_snapshot_entry`: one entry of
/// `KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT`. Since 1.13.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_queue_snapshot_entry {
    /// Raised exceptions (`KFD_EC_MASK` bits).
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
    /// Ring size in bytes.
    pub ring_size: u32,
    /// `KFD_IOC_QUEUE_TYPE_*`.
    pub queue_type: u32,
    /// CWSR area size.
    pub ctx_save_restore_area_size: u32,
    /// Reserved.
    pub reserved: u32,
}

/// `struct kfd_dbg_device_info_entry`: one entry of
/// `KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT`. Since 1.13.
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
    /// Device id.
    pub gpu_id: u32,
    /// PCI location (topology `location_id`).
    pub location_id: u32,
    /// PCI vendor id.
    pub vendor_id: u32,
    /// PCI device id.
    pub device_id: u32,
    /// PCI revision.
    pub revision_id: u32,
    /// PCI subsystem vendor id.
    pub subsystem_vendor_id: u32,
    /// PCI subsystem device id.
    pub subsystem_device_id: u32,
    /// Firmware version.
    pub fw_version: u32,
    /// `gfx_target_version` (e.g. 90010).
    pub gfx_target_version: u32,
    /// SIMD count.
    pub simd_count: u32,
    /// Max waves per SIMD.
    pub max_waves_per_simd: u32,
    /// Shader array count.
    pub array_count: u32,
    /// SIMD arrays per engine.
    pub simd_arrays_per_engine: u32,
    /// Number of XCCs.
    pub num_xcc: u32,
    /// Topology `capability` word (`HSA_CAP_*`).
    pub capability: u32,
    /// Topology `debug_prop` word (`HSA_DBG_*`).
    pub debug_prop: u32,
}

// ---------------------------------------------------------------------------
// Memory policy, clocks, apertures
// ---------------------------------------------------------------------------

/// `struct kfd_ioctl_set_memory_policy_args` (`AMDKFD_IOC_SET_MEMORY_POLICY`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_set_memory_policy_args {
    /// Base of the alternate aperture (in).
    pub alternate_aperture_base: u64,
    /// Size of the alternate aperture (in).
    pub alternate_aperture_size: u64,
    /// Device (in).
    pub gpu_id: u32,
    /// `KFD_IOC_CACHE_POLICY_*` for the default aperture (in).
    pub default_policy: u32,
    /// `KFD_IOC_CACHE_POLICY_*` for the alternate aperture (in).
    pub alternate_policy: u32,
    /// `KFD_PROC_FLAG_*` (in). Since 1.18; `pad` before.
    pub misc_process_flag: u32,
}
// SAFETY: the aperture is recorded, never accessed by the kernel.
unsafe impl PlainArgs for kfd_ioctl_set_memory_policy_args {}

/// `struct kfd_ioctl_get_clock_counters_args`
/// (`AMDKFD_IOC_GET_CLOCK_COUNTERS`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_get_clock_counters_args {
    /// GPU clock counter (out).
    pub gpu_clock_counter: u64,
    /// CPU clock counter, `CLOCK_MONOTONIC_RAW` ns (out).
    pub cpu_clock_counter: u64,
    /// System clock counter, `CLOCK_BOOTTIME` ns (out).
    pub system_clock_counter: u64,
    /// Frequency of the system clock in Hz (out).
    pub system_clock_freq: u64,
    /// Device (in).
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}
// SAFETY: plain values.
unsafe impl PlainArgs for kfd_ioctl_get_clock_counters_args {}

/// `struct kfd_process_device_apertures`: apertures of one device.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_process_device_apertures {
    /// LDS aperture base (out).
    pub lds_base: u64,
    /// LDS aperture limit (out).
    pub lds_limit: u64,
    /// Scratch aperture base (out).
    pub scratch_base: u64,
    /// Scratch aperture limit (out).
    pub scratch_limit: u64,
    /// GPUVM aperture base (out).
    pub gpuvm_base: u64,
    /// GPUVM aperture limit (out).
    pub gpuvm_limit: u64,
    /// Device (out).
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_ioctl_get_process_apertures_args`
/// (`AMDKFD_IOC_GET_PROCESS_APERTURES`, deprecated: at most
/// [`NUM_OF_SUPPORTED_GPUS`] devices).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_get_process_apertures_args {
    /// Apertures, one per device (out).
    pub process_apertures: [kfd_process_device_apertures; NUM_OF_SUPPORTED_GPUS as usize],
    /// Number of valid entries, 1..=7 (out).
    pub num_of_nodes: u32,
    /// Padding.
    pub pad: u32,
}
// SAFETY: the apertures are inline; no pointers.
unsafe impl PlainArgs for kfd_ioctl_get_process_apertures_args {}

/// `struct kfd_ioctl_get_process_apertures_new_args`
/// (`AMDKFD_IOC_GET_PROCESS_APERTURES_NEW`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_get_process_apertures_new_args {
    /// User pointer to an array of [`kfd_process_device_apertures`] (in).
    pub kfd_process_device_apertures_ptr: u64,
    /// Capacity of the array (in); entries filled (out).
    pub num_of_nodes: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_ioctl_dbg_register_args` (deprecated `AMDKFD_IOC_DBG_REGISTER`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_register_args {
    /// Device (in).
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}
// SAFETY: ids only.
unsafe impl PlainArgs for kfd_ioctl_dbg_register_args {}

/// `struct kfd_ioctl_dbg_unregister_args` (deprecated).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_unregister_args {
    /// Device (in).
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}
// SAFETY: ids only.
unsafe impl PlainArgs for kfd_ioctl_dbg_unregister_args {}

/// `struct kfd_ioctl_dbg_address_watch_args` (deprecated).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_address_watch_args {
    /// User pointer to the watch description (in).
    pub content_ptr: u64,
    /// Device (in).
    pub gpu_id: u32,
    /// Size of the content including these two words (in).
    pub buf_size_in_bytes: u32,
}

/// `struct kfd_ioctl_dbg_wave_control_args` (deprecated).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_wave_control_args {
    /// User pointer to the wave-control description (in).
    pub content_ptr: u64,
    /// Device (in).
    pub gpu_id: u32,
    /// Size of the content including these two words (in).
    pub buf_size_in_bytes: u32,
}

// ---------------------------------------------------------------------------
// Debugger (1.13+)
// ---------------------------------------------------------------------------

/// `struct kfd_runtime_info`: what `KFD_IOC_DBG_TRAP_ENABLE` and
/// `EC_PROCESS_RUNTIME` exception info copy out. Since 1.13.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_runtime_info {
    /// The runtime's `r_debug` pointer, as given to RUNTIME_ENABLE.
    pub r_debug: u64,
    /// `DEBUG_RUNTIME_STATE_*`.
    pub runtime_state: u32,
    /// Whether trap temporaries are set up (0/1).
    pub ttmp_setup: u32,
}

/// `struct kfd_ioctl_runtime_enable_args` (`AMDKFD_IOC_RUNTIME_ENABLE`).
/// Since 1.13.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_runtime_enable_args {
    /// Pointer to the runtime's `r_debug`, only recorded for the debugger (in).
    pub r_debug: u64,
    /// `KFD_RUNTIME_ENABLE_MODE_*` (in).
    pub mode_mask: u32,
    /// Runtime capabilities (out).
    pub capabilities_mask: u32,
}
// SAFETY: `r_debug` is recorded and handed to a debugger; the kernel
// never dereferences it.
unsafe impl PlainArgs for kfd_ioctl_runtime_enable_args {}

/// The unnamed `wave_state` member of [`kfd_context_save_area_header`].
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_context_save_area_header_wave_state {
    /// Offset of the control stack.
    pub control_stack_offset: u32,
    /// Size of the control stack.
    pub control_stack_size: u32,
    /// Offset of the wave state.
    pub wave_state_offset: u32,
    /// Size of the wave state.
    pub wave_state_size: u32,
}

/// `struct kfd_context_save_area_header`: header at the start of a
/// queue's CWSR area. Since 1.13.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_context_save_area_header {
    /// Control stack and wave state placement.
    pub wave_state: kfd_context_save_area_header_wave_state,
    /// Offset of the debugger area.
    pub debug_offset: u32,
    /// Size of the debugger area.
    pub debug_size: u32,
    /// Address the kernel writes raised exceptions to.
    pub err_payload_addr: u64,
    /// Event signalled on an error.
    pub err_event_id: u32,
    /// Reserved.
    pub reserved1: u32,
}

/// `struct kfd_ioctl_dbg_trap_enable_args` (`KFD_IOC_DBG_TRAP_ENABLE`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_trap_enable_args {
    /// Exceptions to report to the debugger (in).
    pub exception_mask: u64,
    /// User pointer receiving a [`kfd_runtime_info`] (in).
    pub rinfo_ptr: u64,
    /// Size of that buffer (in/out).
    pub rinfo_size: u32,
    /// Event fd the kernel notifies the debugger through (in).
    pub dbg_fd: u32,
}

/// `struct kfd_ioctl_dbg_trap_send_runtime_event_args`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_trap_send_runtime_event_args {
    /// Exceptions to raise to the runtime (in).
    pub exception_mask: u64,
    /// Target device (in).
    pub gpu_id: u32,
    /// Target queue (in).
    pub queue_id: u32,
}

/// `struct kfd_ioctl_dbg_trap_set_exceptions_enabled_args`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_trap_set_exceptions_enabled_args {
    /// New set of exceptions reported to the debugger (in).
    pub exception_mask: u64,
}

/// `struct kfd_ioctl_dbg_trap_set_wave_launch_override_args`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_trap_set_wave_launch_override_args {
    /// `KFD_DBG_TRAP_OVERRIDE_*` (in).
    pub override_mode: u32,
    /// `KFD_DBG_TRAP_MASK_*` to enable (in); previous mask (out).
    pub enable_mask: u32,
    /// Mask to check (in); supported mask (out).
    pub support_request_mask: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_ioctl_dbg_trap_set_wave_launch_mode_args`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_trap_set_wave_launch_mode_args {
    /// `KFD_DBG_TRAP_WAVE_LAUNCH_MODE_*` (in).
    pub launch_mode: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_ioctl_dbg_trap_suspend_queues_args`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_trap_suspend_queues_args {
    /// Exceptions to clear (in).
    pub exception_mask: u64,
    /// User pointer to `u32` queue ids; error bits ORed in (in/out).
    pub queue_array_ptr: u64,
    /// Number of ids (in).
    pub num_queues: u32,
    /// Grace period in units of 1K GPU clocks (in).
    pub grace_period: u32,
}

/// `struct kfd_ioctl_dbg_trap_resume_queues_args`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_trap_resume_queues_args {
    /// User pointer to `u32` queue ids; error bits ORed in (in/out).
    pub queue_array_ptr: u64,
    /// Number of ids (in).
    pub num_queues: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_ioctl_dbg_trap_set_node_address_watch_args`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_trap_set_node_address_watch_args {
    /// Watched address (in).
    pub address: u64,
    /// `KFD_DBG_TRAP_ADDRESS_WATCH_MODE_*` (in).
    pub mode: u32,
    /// Address mask (in).
    pub mask: u32,
    /// Device (in).
    pub gpu_id: u32,
    /// Allocated watch id (out).
    pub id: u32,
}

/// `struct kfd_ioctl_dbg_trap_clear_node_address_watch_args`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_trap_clear_node_address_watch_args {
    /// Device (in).
    pub gpu_id: u32,
    /// Watch id to clear (in).
    pub id: u32,
}

/// `struct kfd_ioctl_dbg_trap_set_flags_args`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_trap_set_flags_args {
    /// `KFD_DBG_TRAP_FLAG_*` to set (in); previous flags (out).
    pub flags: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_ioctl_dbg_trap_query_debug_event_args`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_trap_query_debug_event_args {
    /// Exceptions to clear (in); raised exceptions (out).
    pub exception_mask: u64,
    /// Source device (out).
    pub gpu_id: u32,
    /// Source queue (out).
    pub queue_id: u32,
}

/// `struct kfd_ioctl_dbg_trap_query_exception_info_args`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_trap_query_exception_info_args {
    /// User buffer receiving the info (in).
    pub info_ptr: u64,
    /// Buffer size (in); needed size (out).
    pub info_size: u32,
    /// gpu_id or queue_id (in).
    pub source_id: u32,
    /// `EC_*` (in).
    pub exception_code: u32,
    /// Clear the exception, 0/1 (in).
    pub clear_exception: u32,
}

/// `struct kfd_ioctl_dbg_trap_queue_snapshot_args`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_trap_queue_snapshot_args {
    /// Exceptions to clear (in).
    pub exception_mask: u64,
    /// User buffer of [`kfd_queue_snapshot_entry`] (in).
    pub snapshot_buf_ptr: u64,
    /// Capacity (in); queues that exist (out).
    pub num_queues: u32,
    /// Entry stride (in); bytes filled per entry (out).
    pub entry_size: u32,
}

/// `struct kfd_ioctl_dbg_trap_device_snapshot_args`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_dbg_trap_device_snapshot_args {
    /// Exceptions to clear (in).
    pub exception_mask: u64,
    /// User buffer of [`kfd_dbg_device_info_entry`] (in).
    pub snapshot_buf_ptr: u64,
    /// Capacity (in); devices that exist (out).
    pub num_devices: u32,
    /// Entry stride (in); bytes filled per entry (out).
    pub entry_size: u32,
}

/// The anonymous union of [`kfd_ioctl_dbg_trap_args`]; `op` selects the
/// member.
#[repr(C)]
#[derive(Clone, Copy, FromBytes, Immutable, KnownLayout)]
pub union kfd_ioctl_dbg_trap_args_union {
    /// `KFD_IOC_DBG_TRAP_ENABLE`.
    pub enable: kfd_ioctl_dbg_trap_enable_args,
    /// `KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT`.
    pub send_runtime_event: kfd_ioctl_dbg_trap_send_runtime_event_args,
    /// `KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED`.
    pub set_exceptions_enabled: kfd_ioctl_dbg_trap_set_exceptions_enabled_args,
    /// `KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE`.
    pub launch_override: kfd_ioctl_dbg_trap_set_wave_launch_override_args,
    /// `KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE`.
    pub launch_mode: kfd_ioctl_dbg_trap_set_wave_launch_mode_args,
    /// `KFD_IOC_DBG_TRAP_SUSPEND_QUEUES`.
    pub suspend_queues: kfd_ioctl_dbg_trap_suspend_queues_args,
    /// `KFD_IOC_DBG_TRAP_RESUME_QUEUES`.
    pub resume_queues: kfd_ioctl_dbg_trap_resume_queues_args,
    /// `KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH`.
    pub set_node_address_watch: kfd_ioctl_dbg_trap_set_node_address_watch_args,
    /// `KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH`.
    pub clear_node_address_watch: kfd_ioctl_dbg_trap_clear_node_address_watch_args,
    /// `KFD_IOC_DBG_TRAP_SET_FLAGS`.
    pub set_flags: kfd_ioctl_dbg_trap_set_flags_args,
    /// `KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT`.
    pub query_debug_event: kfd_ioctl_dbg_trap_query_debug_event_args,
    /// `KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO`.
    pub query_exception_info: kfd_ioctl_dbg_trap_query_exception_info_args,
    /// `KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT`.
    pub queue_snapshot: kfd_ioctl_dbg_trap_queue_snapshot_args,
    /// `KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT`.
    pub device_snapshot: kfd_ioctl_dbg_trap_device_snapshot_args,
}
opaque_union_debug!(kfd_ioctl_dbg_trap_args_union);
impl Default for kfd_ioctl_dbg_trap_args_union {
    fn default() -> Self {
        // A 24-byte member covers the whole union.
        Self {
            query_exception_info: Default::default(),
        }
    }
}

/// `struct kfd_ioctl_dbg_trap_args` (`AMDKFD_IOC_DBG_TRAP`). Since 1.13.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, FromBytes, Immutable, KnownLayout)]
pub struct kfd_ioctl_dbg_trap_args {
    /// Target process (in).
    pub pid: u32,
    /// `KFD_IOC_DBG_TRAP_*` operation (in).
    pub op: u32,
    /// Operation arguments.
    pub u: kfd_ioctl_dbg_trap_args_union,
}

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

/// `struct kfd_ioctl_create_event_args` (`AMDKFD_IOC_CREATE_EVENT`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_create_event_args {
    /// In: handle of a user-allocated event page BO (dGPU, first call);
    /// out: mmap offset of the event page on the KFD fd.
    pub event_page_offset: u64,
    /// Trigger data for signal events (out).
    pub event_trigger_data: u32,
    /// `KFD_IOC_EVENT_*` (in).
    pub event_type: u32,
    /// Auto-reset, 0/1 (in).
    pub auto_reset: u32,
    /// Node for node-specific event types (in).
    pub node_id: u32,
    /// Event id (out).
    pub event_id: u32,
    /// Slot in the event page (out).
    pub event_slot_index: u32,
}
// SAFETY: the page is named by a BO handle, not a pointer.
unsafe impl PlainArgs for kfd_ioctl_create_event_args {}

/// `struct kfd_ioctl_destroy_event_args` (`AMDKFD_IOC_DESTROY_EVENT`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_destroy_event_args {
    /// Event (in).
    pub event_id: u32,
    /// Padding.
    pub pad: u32,
}
// SAFETY: ids only.
unsafe impl PlainArgs for kfd_ioctl_destroy_event_args {}

/// `struct kfd_ioctl_set_event_args` (`AMDKFD_IOC_SET_EVENT`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_set_event_args {
    /// Event (in).
    pub event_id: u32,
    /// Padding.
    pub pad: u32,
}
// SAFETY: ids only.
unsafe impl PlainArgs for kfd_ioctl_set_event_args {}

/// `struct kfd_ioctl_reset_event_args` (`AMDKFD_IOC_RESET_EVENT`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_reset_event_args {
    /// Event (in).
    pub event_id: u32,
    /// Padding.
    pub pad: u32,
}
// SAFETY: ids only.
unsafe impl PlainArgs for kfd_ioctl_reset_event_args {}

/// `struct kfd_memory_exception_failure`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[allow(non_snake_case)]
pub struct kfd_memory_exception_failure {
    /// Page not present or supervisor privilege.
    pub NotPresent: u32,
    /// Write to a read-only page.
    pub ReadOnly: u32,
    /// Execute on a no-execute page.
    pub NoExecute: u32,
    /// Fault address is imprecise.
    pub imprecise: u32,
}

/// `struct kfd_hsa_memory_exception_data`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[allow(non_snake_case)]
pub struct kfd_hsa_memory_exception_data {
    /// Failure kind.
    pub failure: kfd_memory_exception_failure,
    /// Faulting virtual address.
    pub va: u64,
    /// Device.
    pub gpu_id: u32,
    /// `KFD_MEM_ERR_*` (was `pad` before 1.4).
    pub ErrorType: u32,
}

/// `struct kfd_hsa_hw_exception_data`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_hsa_hw_exception_data {
    /// `KFD_HW_EXCEPTION_WHOLE_GPU_RESET` or `_PER_ENGINE_RESET`.
    pub reset_type: u32,
    /// `KFD_HW_EXCEPTION_GPU_HANG` or `_ECC`.
    pub reset_cause: u32,
    /// VRAM contents were lost, 0/1.
    pub memory_lost: u32,
    /// Device.
    pub gpu_id: u32,
}

/// `struct kfd_hsa_signal_event_data`. Since 1.14.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_hsa_signal_event_data {
    /// Age of the last signal seen (in/out).
    pub last_event_age: u64,
}

/// The anonymous union of [`kfd_event_data`].
#[repr(C)]
#[derive(Clone, Copy, FromBytes, Immutable, KnownLayout)]
pub union kfd_event_data_union {
    /// Memory exception details (out, `KFD_IOC_EVENT_MEMORY`).
    pub memory_exception_data: kfd_hsa_memory_exception_data,
    /// Hardware exception details (out, `KFD_IOC_EVENT_HW_EXCEPTION`).
    pub hw_exception_data: kfd_hsa_hw_exception_data,
    /// Signal age (in/out, signal events). Since 1.14.
    pub signal_event_data: kfd_hsa_signal_event_data,
}
opaque_union_debug!(kfd_event_data_union);
impl Default for kfd_event_data_union {
    fn default() -> Self {
        // The memory exception member is the largest (32 bytes).
        Self {
            memory_exception_data: Default::default(),
        }
    }
}

/// `struct kfd_event_data`: one element of the `WAIT_EVENTS` array.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, FromBytes, Immutable, KnownLayout)]
pub struct kfd_event_data {
    /// Event-type specific data.
    pub u: kfd_event_data_union,
    /// Pointer to an extension structure (reserved).
    pub kfd_event_data_ext: u64,
    /// Event to wait for (in).
    pub event_id: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_ioctl_wait_events_args` (`AMDKFD_IOC_WAIT_EVENTS`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_wait_events_args {
    /// User pointer to an array of [`kfd_event_data`] (in).
    pub events_ptr: u64,
    /// Number of elements (in).
    pub num_events: u32,
    /// Wait for all (1) or any (0) (in).
    pub wait_for_all: u32,
    /// Timeout in ms, `0xffffffff` = infinite (in).
    pub timeout: u32,
    /// `KFD_IOC_WAIT_RESULT_*` (out).
    pub wait_result: u32,
}

/// `struct kfd_ioctl_set_scratch_backing_va_args`
/// (`AMDKFD_IOC_SET_SCRATCH_BACKING_VA`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_set_scratch_backing_va_args {
    /// GPU VA of the scratch backing memory (in).
    pub va_addr: u64,
    /// Device (in).
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}
// SAFETY: a GPU VA that is only programmed into the device.
unsafe impl PlainArgs for kfd_ioctl_set_scratch_backing_va_args {}

/// `struct kfd_ioctl_get_tile_config_args` (`AMDKFD_IOC_GET_TILE_CONFIG`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_get_tile_config_args {
    /// User pointer to a `u32` tile-mode array (in).
    pub tile_config_ptr: u64,
    /// User pointer to a `u32` macro-tile array (in).
    pub macro_tile_config_ptr: u64,
    /// Capacity (in); entries filled (out).
    pub num_tile_configs: u32,
    /// Capacity (in); entries filled (out).
    pub num_macro_tile_configs: u32,
    /// Device (in).
    pub gpu_id: u32,
    /// `GB_ADDR_CONFIG` (out).
    pub gb_addr_config: u32,
    /// Number of banks (out).
    pub num_banks: u32,
    /// Number of ranks (out).
    pub num_ranks: u32,
}

/// `struct kfd_ioctl_set_trap_handler_args` (`AMDKFD_IOC_SET_TRAP_HANDLER`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_set_trap_handler_args {
    /// GPU VA of the trap base address (in).
    pub tba_addr: u64,
    /// GPU VA of the trap memory address (in).
    pub tma_addr: u64,
    /// Device (in).
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}
// SAFETY: GPU VAs that are only programmed into the device.
unsafe impl PlainArgs for kfd_ioctl_set_trap_handler_args {}

/// `struct kfd_ioctl_acquire_vm_args` (`AMDKFD_IOC_ACQUIRE_VM`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_acquire_vm_args {
    /// Render-node file descriptor whose VM to adopt (in).
    pub drm_fd: u32,
    /// Device (in).
    pub gpu_id: u32,
}
// SAFETY: a descriptor number and an id.
unsafe impl PlainArgs for kfd_ioctl_acquire_vm_args {}

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

/// `struct kfd_ioctl_alloc_memory_of_gpu_args`
/// (`AMDKFD_IOC_ALLOC_MEMORY_OF_GPU`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_alloc_memory_of_gpu_args {
    /// GPU VA the allocation will be mapped at (in).
    pub va_addr: u64,
    /// Size in bytes (in).
    pub size: u64,
    /// Buffer handle (out).
    pub handle: u64,
    /// For USERPTR: the CPU address (in); otherwise the render-node mmap
    /// offset (out).
    pub mmap_offset: u64,
    /// Device (in).
    pub gpu_id: u32,
    /// `KFD_IOC_ALLOC_MEM_FLAGS_*` (in).
    pub flags: u32,
}

/// `struct kfd_ioctl_free_memory_of_gpu_args` (`AMDKFD_IOC_FREE_MEMORY_OF_GPU`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_free_memory_of_gpu_args {
    /// Buffer handle (in).
    pub handle: u64,
}
// SAFETY: a handle only.
unsafe impl PlainArgs for kfd_ioctl_free_memory_of_gpu_args {}

/// `struct kfd_ioctl_map_memory_to_gpu_args` (`AMDKFD_IOC_MAP_MEMORY_TO_GPU`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_map_memory_to_gpu_args {
    /// Buffer handle (in).
    pub handle: u64,
    /// User pointer to `u32` gpu_ids (in).
    pub device_ids_array_ptr: u64,
    /// Number of gpu_ids (in).
    pub n_devices: u32,
    /// Devices already mapped (in/out).
    pub n_success: u32,
}

/// `struct kfd_ioctl_unmap_memory_from_gpu_args`
/// (`AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_unmap_memory_from_gpu_args {
    /// Buffer handle (in).
    pub handle: u64,
    /// User pointer to `u32` gpu_ids (in).
    pub device_ids_array_ptr: u64,
    /// Number of gpu_ids (in).
    pub n_devices: u32,
    /// Devices already unmapped (in/out).
    pub n_success: u32,
}

/// `struct kfd_ioctl_alloc_queue_gws_args` (`AMDKFD_IOC_ALLOC_QUEUE_GWS`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_alloc_queue_gws_args {
    /// Queue (in).
    pub queue_id: u32,
    /// Number of global wave syncs (in).
    pub num_gws: u32,
    /// First GWS index (out).
    pub first_gws: u32,
    /// Padding.
    pub pad: u32,
}
// SAFETY: ids and counts.
unsafe impl PlainArgs for kfd_ioctl_alloc_queue_gws_args {}

/// `struct kfd_ioctl_get_dmabuf_info_args` (`AMDKFD_IOC_GET_DMABUF_INFO`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_get_dmabuf_info_args {
    /// Buffer size (out).
    pub size: u64,
    /// User buffer receiving the metadata (in).
    pub metadata_ptr: u64,
    /// Buffer capacity (in); metadata size (out).
    pub metadata_size: u32,
    /// Device owning the buffer (out).
    pub gpu_id: u32,
    /// `KFD_IOC_ALLOC_MEM_FLAGS_*` (out).
    pub flags: u32,
    /// dma-buf descriptor (in).
    pub dmabuf_fd: u32,
}

/// `struct kfd_ioctl_import_dmabuf_args` (`AMDKFD_IOC_IMPORT_DMABUF`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_import_dmabuf_args {
    /// GPU VA to map at (in).
    pub va_addr: u64,
    /// Buffer handle (out).
    pub handle: u64,
    /// Device (in).
    pub gpu_id: u32,
    /// dma-buf descriptor (in).
    pub dmabuf_fd: u32,
}
// SAFETY: a GPU VA, a descriptor and ids.
unsafe impl PlainArgs for kfd_ioctl_import_dmabuf_args {}

/// `struct kfd_ioctl_export_dmabuf_args` (`AMDKFD_IOC_EXPORT_DMABUF`).
/// Since 1.12.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_export_dmabuf_args {
    /// Buffer handle (in).
    pub handle: u64,
    /// `O_*` flags for the new descriptor (in).
    pub flags: u32,
    /// dma-buf descriptor (out).
    pub dmabuf_fd: u32,
}
// SAFETY: a handle, flags and a descriptor.
unsafe impl PlainArgs for kfd_ioctl_export_dmabuf_args {}

/// `struct kfd_ioctl_smi_events_args` (`AMDKFD_IOC_SMI_EVENTS`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_smi_events_args {
    /// Device (in).
    pub gpuid: u32,
    /// Descriptor to read events from (out).
    pub anon_fd: u32,
}
// SAFETY: ids and a descriptor.
unsafe impl PlainArgs for kfd_ioctl_smi_events_args {}

// ---------------------------------------------------------------------------
// CRIU (1.7+)
// ---------------------------------------------------------------------------

/// `struct kfd_ioctl_criu_args` (`AMDKFD_IOC_CRIU_OP`).
///
/// No `IntoBytes`: four bytes of tail padding (52 bytes of fields in
/// 56, in the kernel's layout too).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, Immutable, KnownLayout)]
pub struct kfd_ioctl_criu_args {
    /// User pointer to [`kfd_criu_device_bucket`]s (CHECKPOINT, RESTORE).
    pub devices: u64,
    /// User pointer to [`kfd_criu_bo_bucket`]s (CHECKPOINT, RESTORE).
    pub bos: u64,
    /// User pointer to private data (CHECKPOINT, RESTORE).
    pub priv_data: u64,
    /// Size of the private data (PROCESS_INFO, RESTORE).
    pub priv_data_size: u64,
    /// Number of devices (PROCESS_INFO, RESTORE).
    pub num_devices: u32,
    /// Number of BOs (PROCESS_INFO, RESTORE).
    pub num_bos: u32,
    /// Number of opaque objects (PROCESS_INFO, RESTORE).
    pub num_objects: u32,
    /// Process id (PROCESS_INFO, RESUME).
    pub pid: u32,
    /// `KFD_CRIU_OP_*`.
    pub op: u32,
}

/// `struct kfd_criu_device_bucket`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_criu_device_bucket {
    /// gpu_id as the checkpointed process knew it.
    pub user_gpu_id: u32,
    /// gpu_id on the restoring system.
    pub actual_gpu_id: u32,
    /// Render-node descriptor.
    pub drm_fd: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_criu_bo_bucket`.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_criu_bo_bucket {
    /// GPU VA.
    pub addr: u64,
    /// Size.
    pub size: u64,
    /// mmap offset.
    pub offset: u64,
    /// mmap offset after restore.
    pub restored_offset: u64,
    /// User gpu_id.
    pub gpu_id: u32,
    /// `KFD_IOC_ALLOC_MEM_FLAGS_*`.
    pub alloc_flags: u32,
    /// dma-buf descriptor.
    pub dmabuf_fd: u32,
    /// Padding.
    pub pad: u32,
}

// ---------------------------------------------------------------------------
// SVM (1.5+)
// ---------------------------------------------------------------------------

/// `struct kfd_ioctl_svm_attribute`: one (type, value) pair.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_svm_attribute {
    /// `KFD_IOCTL_SVM_ATTR_*`.
    pub r#type: u32,
    /// Attribute value (gpu_id, flags, granularity, ...).
    pub value: u32,
}

/// `struct kfd_ioctl_svm_args` without its flexible `attrs[]` tail
/// (24 bytes): the type of [`AMDKFD_IOC_SVM`] as the header declares it.
///
/// The real request carries `nattr` attributes right after this header and
/// encodes their size in the request number: use
/// [`kfd_ioctl_svm_args_n`] with [`svm_ioctl`] for a count known at
/// compile time, or [`svm_request`] for a dynamic one.
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_svm_args {
    /// Start of the range (page aligned).
    pub start_addr: u64,
    /// Size of the range (page aligned).
    pub size: u64,
    /// `KFD_IOCTL_SVM_OP_*`.
    pub op: u32,
    /// Number of attributes that follow.
    pub nattr: u32,
    /// The flexible array member (zero-sized here).
    pub attrs: [kfd_ioctl_svm_attribute; 0],
}

/// `struct kfd_ioctl_svm_args` with exactly `N` attributes inline.
///
/// No `IntoBytes`: zerocopy cannot prove a generic `repr(C)` struct
/// free of padding (it is, for every `N`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromBytes, Immutable, KnownLayout)]
pub struct kfd_ioctl_svm_args_n<const N: usize> {
    /// Start of the range (page aligned).
    pub start_addr: u64,
    /// Size of the range (page aligned).
    pub size: u64,
    /// `KFD_IOCTL_SVM_OP_*`.
    pub op: u32,
    /// Number of attributes; must be `N`.
    pub nattr: u32,
    /// The attributes.
    pub attrs: [kfd_ioctl_svm_attribute; N],
}

impl<const N: usize> Default for kfd_ioctl_svm_args_n<N> {
    fn default() -> Self {
        Self {
            start_addr: 0,
            size: 0,
            op: 0,
            nattr: N as u32,
            attrs: [kfd_ioctl_svm_attribute::default(); N],
        }
    }
}

// SAFETY: the range is only recorded (pages are managed through the
// process's own mm by the kernel, as for any mapping), and the attributes
// are inline; the request size covers all `N` of them.
unsafe impl<const N: usize> PlainArgs for kfd_ioctl_svm_args_n<N> {}

/// The `AMDKFD_IOC_SVM` request for exactly `N` attributes.
pub const fn svm_ioctl<const N: usize>() -> Ioctl<kfd_ioctl_svm_args_n<N>> {
    Ioctl::new(
        IOC_READ | IOC_WRITE,
        AMDKFD_IOCTL_BASE,
        0x20,
        "AMDKFD_IOC_SVM",
    )
}

/// The most attributes one `AMDKFD_IOC_SVM` request can carry: the size
/// field of an ioctl number has 14 bits, and the header takes 24 bytes.
pub const SVM_MAX_ATTRS: usize = ((1 << 14) - 1 - std::mem::size_of::<kfd_ioctl_svm_args>())
    / std::mem::size_of::<kfd_ioctl_svm_attribute>();

/// The `AMDKFD_IOC_SVM` request number for `nattr` attributes: the header
/// size plus `nattr * 8` in the size field, as libhsakmt computes it.
/// Callers keep `nattr` at or below [`SVM_MAX_ATTRS`]; beyond it the size
/// would spill into the direction bits.
pub const fn svm_request(nattr: usize) -> u32 {
    crate::ioctl::ioc(
        IOC_READ | IOC_WRITE,
        AMDKFD_IOCTL_BASE,
        0x20,
        std::mem::size_of::<kfd_ioctl_svm_args>()
            + nattr * std::mem::size_of::<kfd_ioctl_svm_attribute>(),
    )
}

/// `struct kfd_ioctl_set_xnack_mode_args` (`AMDKFD_IOC_SET_XNACK_MODE`).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_set_xnack_mode_args {
    /// 0 disable, >0 enable, <0 query (in); current mode (out).
    pub xnack_enabled: i32,
}
// SAFETY: one integer.
unsafe impl PlainArgs for kfd_ioctl_set_xnack_mode_args {}

// ---------------------------------------------------------------------------
// Secondary contexts (1.19+)
// ---------------------------------------------------------------------------

/// `struct kfd_ioctl_create_process_args`: the argument ROCm's libhsakmt
/// passes with `AMDKFD_IOC_CREATE_PROCESS` (its header declares the request
/// as `AMDKFD_IOWR(0x27, ...)`; upstream declares `AMDKFD_IO(0x27)`, see
/// [`AMDKFD_IOC_CREATE_PROCESS_IO`]).
#[repr(C)]
#[derive(
    Debug, Default, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct kfd_ioctl_create_process_args {
    /// Unused, must be 0 (in).
    pub flags: u32,
    /// Padding.
    pub pad: u32,
}
// SAFETY: plain values.
unsafe impl PlainArgs for kfd_ioctl_create_process_args {}

// SAFETY: a zero-sized argument: the request carries no data at all.
unsafe impl PlainArgs for () {}

/// `AMDKFD_IOC_CREATE_PROCESS` exactly as upstream declares it:
/// `AMDKFD_IO(0x27)`, no argument (request `0x00004b27`). The kernel
/// dispatches on the number, so this and [`AMDKFD_IOC_CREATE_PROCESS`]
/// reach the same handler. Since 1.19.
pub const AMDKFD_IOC_CREATE_PROCESS_IO: Ioctl<()> = Ioctl::new(
    crate::ioctl::IOC_NONE,
    AMDKFD_IOCTL_BASE,
    0x27,
    "AMDKFD_IOC_CREATE_PROCESS",
);

crate::ioctls! {
    table KFD_IOCTLS;
    /// Query the ioctl interface version. Any KFD version.
    AMDKFD_IOC_GET_VERSION: ior(b'K', 0x01, kfd_ioctl_get_version_args);
    /// Create a user-mode queue. Needs the gpu_id's VM acquired.
    AMDKFD_IOC_CREATE_QUEUE: iowr(b'K', 0x02, kfd_ioctl_create_queue_args);
    /// Destroy a queue.
    AMDKFD_IOC_DESTROY_QUEUE: iowr(b'K', 0x03, kfd_ioctl_destroy_queue_args);
    /// Set the cache policy of the default and alternate apertures.
    AMDKFD_IOC_SET_MEMORY_POLICY: iow(b'K', 0x04, kfd_ioctl_set_memory_policy_args);
    /// Read GPU, CPU and system clock counters of a device.
    AMDKFD_IOC_GET_CLOCK_COUNTERS: iowr(b'K', 0x05, kfd_ioctl_get_clock_counters_args);
    /// Deprecated: apertures of at most 7 devices, inline.
    AMDKFD_IOC_GET_PROCESS_APERTURES: ior(b'K', 0x06, kfd_ioctl_get_process_apertures_args);
    /// Change ring, percentage and priority of a queue.
    AMDKFD_IOC_UPDATE_QUEUE: iow(b'K', 0x07, kfd_ioctl_update_queue_args);
    /// Create an event.
    AMDKFD_IOC_CREATE_EVENT: iowr(b'K', 0x08, kfd_ioctl_create_event_args);
    /// Destroy an event.
    AMDKFD_IOC_DESTROY_EVENT: iow(b'K', 0x09, kfd_ioctl_destroy_event_args);
    /// Signal an event.
    AMDKFD_IOC_SET_EVENT: iow(b'K', 0x0A, kfd_ioctl_set_event_args);
    /// Reset an event.
    AMDKFD_IOC_RESET_EVENT: iow(b'K', 0x0B, kfd_ioctl_reset_event_args);
    /// Wait for any or all of a set of events.
    AMDKFD_IOC_WAIT_EVENTS: iowr(b'K', 0x0C, kfd_ioctl_wait_events_args);
    /// Deprecated debugger registration (removed from the kernel; EINVAL).
    AMDKFD_IOC_DBG_REGISTER_DEPRECATED: iow(b'K', 0x0D, kfd_ioctl_dbg_register_args);
    /// Deprecated debugger unregistration.
    AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED: iow(b'K', 0x0E, kfd_ioctl_dbg_unregister_args);
    /// Deprecated address watch.
    AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED: iow(b'K', 0x0F, kfd_ioctl_dbg_address_watch_args);
    /// Deprecated wave control.
    AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED: iow(b'K', 0x10, kfd_ioctl_dbg_wave_control_args);
    /// Set the scratch backing VA of a device (no-HWS mode only).
    AMDKFD_IOC_SET_SCRATCH_BACKING_VA: iowr(b'K', 0x11, kfd_ioctl_set_scratch_backing_va_args);
    /// Read the tiling configuration of a device.
    AMDKFD_IOC_GET_TILE_CONFIG: iowr(b'K', 0x12, kfd_ioctl_get_tile_config_args);
    /// Install a trap handler (TBA/TMA) for a device.
    AMDKFD_IOC_SET_TRAP_HANDLER: iow(b'K', 0x13, kfd_ioctl_set_trap_handler_args);
    /// Apertures of all devices, into a user array.
    AMDKFD_IOC_GET_PROCESS_APERTURES_NEW: iowr(b'K', 0x14, kfd_ioctl_get_process_apertures_new_args);
    /// Adopt the GPU VM of a render-node descriptor for a device.
    AMDKFD_IOC_ACQUIRE_VM: iow(b'K', 0x15, kfd_ioctl_acquire_vm_args);
    /// Allocate a buffer (VRAM, GTT, userptr, doorbell, MMIO remap).
    AMDKFD_IOC_ALLOC_MEMORY_OF_GPU: iowr(b'K', 0x16, kfd_ioctl_alloc_memory_of_gpu_args);
    /// Free a buffer.
    AMDKFD_IOC_FREE_MEMORY_OF_GPU: iow(b'K', 0x17, kfd_ioctl_free_memory_of_gpu_args);
    /// Map a buffer into the VMs of several devices.
    AMDKFD_IOC_MAP_MEMORY_TO_GPU: iowr(b'K', 0x18, kfd_ioctl_map_memory_to_gpu_args);
    /// Unmap a buffer from several devices.
    AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU: iowr(b'K', 0x19, kfd_ioctl_unmap_memory_from_gpu_args);
    /// Restrict a queue to a CU mask.
    AMDKFD_IOC_SET_CU_MASK: iow(b'K', 0x1A, kfd_ioctl_set_cu_mask_args);
    /// Copy out a queue's control stack and save-area usage.
    AMDKFD_IOC_GET_QUEUE_WAVE_STATE: iowr(b'K', 0x1B, kfd_ioctl_get_queue_wave_state_args);
    /// Describe a dma-buf (size, device, flags, metadata).
    AMDKFD_IOC_GET_DMABUF_INFO: iowr(b'K', 0x1C, kfd_ioctl_get_dmabuf_info_args);
    /// Import a dma-buf as a buffer.
    AMDKFD_IOC_IMPORT_DMABUF: iowr(b'K', 0x1D, kfd_ioctl_import_dmabuf_args);
    /// Allocate global wave sync entries for a queue.
    AMDKFD_IOC_ALLOC_QUEUE_GWS: iowr(b'K', 0x1E, kfd_ioctl_alloc_queue_gws_args);
    /// Open an SMI event descriptor for a device. Since 1.3.
    AMDKFD_IOC_SMI_EVENTS: iowr(b'K', 0x1F, kfd_ioctl_smi_events_args);
    /// Set or get SVM attributes (header only; see [`svm_request`]). Since 1.5.
    AMDKFD_IOC_SVM: iowr(b'K', 0x20, kfd_ioctl_svm_args);
    /// Set or query the XNACK mode of the process. Since 1.5.
    AMDKFD_IOC_SET_XNACK_MODE: iowr(b'K', 0x21, kfd_ioctl_set_xnack_mode_args);
    /// Checkpoint/restore operations. Since 1.7.
    AMDKFD_IOC_CRIU_OP: iowr(b'K', 0x22, kfd_ioctl_criu_args);
    /// Memory still available on a device. Since 1.9.
    AMDKFD_IOC_AVAILABLE_MEMORY: iowr(b'K', 0x23, kfd_ioctl_get_available_memory_args);
    /// Export a buffer as a dma-buf. Since 1.12.
    AMDKFD_IOC_EXPORT_DMABUF: iowr(b'K', 0x24, kfd_ioctl_export_dmabuf_args);
    /// Enable/disable the runtime for debugging. Since 1.13.
    AMDKFD_IOC_RUNTIME_ENABLE: iowr(b'K', 0x25, kfd_ioctl_runtime_enable_args);
    /// Debugger operations on a target process. Since 1.13. Primary context only.
    AMDKFD_IOC_DBG_TRAP: iowr(b'K', 0x26, kfd_ioctl_dbg_trap_args);
    /// Replace this descriptor's process with a new secondary KFD process,
    /// in the form ROCm's libhsakmt issues (8-byte argument). Since 1.19.
    AMDKFD_IOC_CREATE_PROCESS: iowr(b'K', 0x27, kfd_ioctl_create_process_args);
    /// ROCm only: import an IPC handle.
    AMDKFD_IOC_IPC_IMPORT_HANDLE: iowr(b'K', 0x80, kfd_ioctl_ipc_import_handle_args);
    /// ROCm only: export a buffer as an IPC handle.
    AMDKFD_IOC_IPC_EXPORT_HANDLE: iowr(b'K', 0x81, kfd_ioctl_ipc_export_handle_args);
    /// ROCm only: copy between the GPU memory of two processes.
    AMDKFD_IOC_CROSS_MEMORY_COPY: iowr(b'K', 0x83, kfd_ioctl_cross_memory_copy_args);
    /// ROCm only: streaming performance monitor control.
    AMDKFD_IOC_RLC_SPM: iowr(b'K', 0x84, kfd_ioctl_spm_args);
    /// ROCm only: PC sampling.
    AMDKFD_IOC_PC_SAMPLE: iowr(b'K', 0x85, kfd_ioctl_pc_sample_args);
    /// ROCm only: profiler control (PMC lock, PC sampling, version).
    AMDKFD_IOC_PROFILER: iowr(b'K', 0x86, kfd_ioctl_profiler_args);
    /// ROCm only: AMD Infinity Storage direct file I/O into VRAM.
    AMDKFD_IOC_AIS_OP: iowr(b'K', 0x87, kfd_ioctl_ais_args);
}
