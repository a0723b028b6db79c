//! The few hsakmt context-API declarations `kfd-ctx-client` uses, by hand
//! from kfd-rs's `hsakmt/include/hsakmt/hsakmtctx.h` and the type header
//! `hsakmttypes.h` (the types used here have the same layout in 5.2.3 and
//! the newest header; `tests/hsa_layout.rs` checks them against the
//! installed one). Resolved at run time from our newest build
//! (`libhsakmt.so.1` or `libdtif.so`): there is no C library with the
//! Ctx API to compare with. The fields keep the C names (which
//! `entry_points!` resolves by).
#![allow(non_snake_case)]

use std::ffi::c_void;
use std::mem::{offset_of, size_of};

/// `HSAKMT_STATUS`.
pub type KmtStatus = u32;
/// `HsaKFDContext *` (opaque).
pub type Ctx = *mut c_void;
/// `HsaEvent *` (opaque here: only passed back).
pub type Event = *mut c_void;

/// `HSAKMT_STATUS_SUCCESS`.
pub const SUCCESS: KmtStatus = 0;
/// `HSAKMT_STATUS_ERROR`.
pub const ERROR: KmtStatus = 1;
/// `HSAKMT_STATUS_INVALID_PARAMETER`.
pub const INVALID_PARAMETER: KmtStatus = 3;
/// `HSAKMT_STATUS_INVALID_HANDLE`.
pub const INVALID_HANDLE: KmtStatus = 4;
/// `HSAKMT_STATUS_NOT_SUPPORTED`.
pub const NOT_SUPPORTED: KmtStatus = 11;
/// `HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED`.
pub const NOT_OPENED: KmtStatus = 20;
/// `HSAKMT_STATUS_KERNEL_ALREADY_OPENED`.
pub const ALREADY_OPENED: KmtStatus = 22;
/// `HSAKMT_STATUS_WAIT_TIMEOUT`.
pub const WAIT_TIMEOUT: KmtStatus = 31;

/// `HSA_EVENTTYPE_SIGNAL`.
pub const EVENTTYPE_SIGNAL: u32 = 0;
/// `HsaMemFlags.ui32.NonPaged` (bit 0).
pub const MEM_NON_PAGED: u32 = 1 << 0;

/// `HsaSystemProperties`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemProperties {
    /// Nodes of the topology.
    pub num_nodes: u32,
    /// CRAT OEM id.
    pub platform_oem: u32,
    /// CRAT table id.
    pub platform_id: u32,
    /// CRAT revision.
    pub platform_rev: u32,
}

/// `HsaEventDescriptor`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct EventDescriptor {
    /// `HSA_EVENTTYPE`.
    pub event_type: u32,
    /// The node of the event source.
    pub node_id: u32,
    /// `SyncVar.SyncVar.UserData`.
    pub sync_var: *mut c_void,
    /// `SyncVar.SyncVarSize`.
    pub sync_var_size: u64,
}

/// Room for `HsaNodeProperties` of any generation (376 bytes in the
/// newest), 8-byte aligned.
pub type NodePropertiesBuf = [u64; 64];
/// Offset of `NumFComputeCores` in `HsaNodeProperties` (every layout).
pub const NODE_SIMD_COUNT_OFFSET: usize = 4;
/// Room for `HsaPointerInfo` (72 bytes), 8-byte aligned; `Type` is the
/// first `u32`.
pub type PointerInfoBuf = [u64; 16];

/// Sizes and offsets checked against `hsakmttypes.h`.
pub const LAYOUTS: &[(&str, usize)] = &[
    ("sizeof(HsaSystemProperties)", size_of::<SystemProperties>()),
    (
        "offsetof(HsaSystemProperties, PlatformRev)",
        offset_of!(SystemProperties, platform_rev),
    ),
    ("sizeof(HsaEventDescriptor)", size_of::<EventDescriptor>()),
    (
        "offsetof(HsaEventDescriptor, SyncVar)",
        offset_of!(EventDescriptor, sync_var),
    ),
    (
        "offsetof(HsaEventDescriptor, SyncVar.SyncVarSize)",
        offset_of!(EventDescriptor, sync_var_size),
    ),
    ("sizeof(HsaMemFlags)", size_of::<u32>()),
    (
        "offsetof(HsaNodeProperties, NumFComputeCores)",
        NODE_SIMD_COUNT_OFFSET,
    ),
    ("sizeof(HsaPointerInfo) <= 128", 1),
    ("sizeof(HSAKMT_STATUS)", size_of::<KmtStatus>()),
];

/// Constants checked against `hsakmttypes.h` (C name, value).
pub const CONSTANTS: &[(&str, u32)] = &[
    ("HSAKMT_STATUS_SUCCESS", SUCCESS),
    ("HSAKMT_STATUS_ERROR", ERROR),
    ("HSAKMT_STATUS_INVALID_PARAMETER", INVALID_PARAMETER),
    ("HSAKMT_STATUS_INVALID_HANDLE", INVALID_HANDLE),
    ("HSAKMT_STATUS_NOT_SUPPORTED", NOT_SUPPORTED),
    ("HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED", NOT_OPENED),
    ("HSAKMT_STATUS_KERNEL_ALREADY_OPENED", ALREADY_OPENED),
    ("HSAKMT_STATUS_WAIT_TIMEOUT", WAIT_TIMEOUT),
    ("HSA_EVENTTYPE_SIGNAL", EVENTTYPE_SIGNAL),
];

entry_points! {
    /// The context-API entry points of our newest build this client calls.
    Thunk;
    /// `hsaKmtOpenKFDCtx`.
    hsaKmtOpenKFDCtx: fn(*mut Ctx) -> KmtStatus;
    /// `hsaKmtCloseKFDCtx`.
    hsaKmtCloseKFDCtx: fn() -> KmtStatus;
    /// `hsaKmtOpenSecondaryKFDCtx`.
    hsaKmtOpenSecondaryKFDCtx: fn(*mut Ctx) -> KmtStatus;
    /// `hsaKmtCloseSecondaryKFDCtx`.
    hsaKmtCloseSecondaryKFDCtx: fn(Ctx) -> KmtStatus;
    /// `hsaKmtAcquireSystemPropertiesCtx`.
    hsaKmtAcquireSystemPropertiesCtx: fn(Ctx, *mut SystemProperties) -> KmtStatus;
    /// `hsaKmtReleaseSystemPropertiesCtx`.
    hsaKmtReleaseSystemPropertiesCtx: fn(Ctx) -> KmtStatus;
    /// `hsaKmtGetNodePropertiesCtx`.
    hsaKmtGetNodePropertiesCtx: fn(Ctx, u32, *mut NodePropertiesBuf) -> KmtStatus;
    /// `hsaKmtAllocMemoryCtx` (`HsaMemFlags` by value: its `u32`).
    hsaKmtAllocMemoryCtx: fn(Ctx, u32, u64, u32, *mut *mut c_void) -> KmtStatus;
    /// `hsaKmtFreeMemoryCtx`.
    hsaKmtFreeMemoryCtx: fn(Ctx, *mut c_void, u64) -> KmtStatus;
    /// `hsaKmtMapMemoryToGPUCtx`.
    hsaKmtMapMemoryToGPUCtx: fn(Ctx, *mut c_void, u64, *mut u64) -> KmtStatus;
    /// `hsaKmtUnmapMemoryToGPUCtx`.
    hsaKmtUnmapMemoryToGPUCtx: fn(Ctx, *mut c_void) -> KmtStatus;
    /// `hsaKmtQueryPointerInfoCtx`.
    hsaKmtQueryPointerInfoCtx: fn(Ctx, *const c_void, *mut PointerInfoBuf) -> KmtStatus;
    /// `hsaKmtCreateEventCtx`.
    hsaKmtCreateEventCtx: fn(Ctx, *mut EventDescriptor, bool, bool, *mut Event) -> KmtStatus;
    /// `hsaKmtDestroyEventCtx`.
    hsaKmtDestroyEventCtx: fn(Ctx, Event) -> KmtStatus;
    /// `hsaKmtSetEventCtx`.
    hsaKmtSetEventCtx: fn(Ctx, Event) -> KmtStatus;
    /// `hsaKmtWaitOnEventCtx`.
    hsaKmtWaitOnEventCtx: fn(Ctx, Event, u32) -> KmtStatus;
    /// `hsaKmtGetRuntimeCapabilitiesCtx`.
    hsaKmtGetRuntimeCapabilitiesCtx: fn(Ctx, *mut u32) -> KmtStatus;
}
