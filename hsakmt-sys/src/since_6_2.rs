//! Types that libhsakmt 6.2.4's header introduced and the newest header
//! still declares unchanged (hardware exception events, the debugger's
//! exception codes, SMI events, PC sampling, new pointer and SVM flag
//! values). Re-exported by [`super::rocm_6_2`] and [`super::newest`];
//! prefer those paths.

use core::ffi::c_void;

pub use super::common::*;

c_enum! {
    /// `HSA_DBG_TRAP_EXCEPTION_CODE` (6.2 and newest): debugger exception
    /// codes (bit `code - 1` of an exception mask, see [`HSA_EC_MASK`]).
    pub struct HSA_DBG_TRAP_EXCEPTION_CODE(u32) {
        /// No exception.
        HSA_DBG_EC_NONE = 0,
        /// Queue: wave abort.
        HSA_DBG_EC_QUEUE_WAVE_ABORT = 1,
        /// Queue: wave trap.
        HSA_DBG_EC_QUEUE_WAVE_TRAP = 2,
        /// Queue: wave math error.
        HSA_DBG_EC_QUEUE_WAVE_MATH_ERROR = 3,
        /// Queue: illegal instruction.
        HSA_DBG_EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION = 4,
        /// Queue: memory violation.
        HSA_DBG_EC_QUEUE_WAVE_MEMORY_VIOLATION = 5,
        /// Queue: aperture violation.
        HSA_DBG_EC_QUEUE_WAVE_APERTURE_VIOLATION = 6,
        /// Queue: invalid dispatch dimensions.
        HSA_DBG_EC_QUEUE_PACKET_DISPATCH_DIM_INVALID = 16,
        /// Queue: invalid group segment size.
        HSA_DBG_EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID = 17,
        /// Queue: invalid code object.
        HSA_DBG_EC_QUEUE_PACKET_DISPATCH_CODE_INVALID = 18,
        /// Queue: reserved packet.
        HSA_DBG_EC_QUEUE_PACKET_RESERVED = 19,
        /// Queue: unsupported packet.
        HSA_DBG_EC_QUEUE_PACKET_UNSUPPORTED = 20,
        /// Queue: invalid work-group size.
        HSA_DBG_EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID = 21,
        /// Queue: invalid register count.
        HSA_DBG_EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID = 22,
        /// Queue: unsupported vendor packet.
        HSA_DBG_EC_QUEUE_PACKET_VENDOR_UNSUPPORTED = 23,
        /// Queue: preemption error.
        HSA_DBG_EC_QUEUE_PREEMPTION_ERROR = 30,
        /// Queue: new queue.
        HSA_DBG_EC_QUEUE_NEW = 31,
        /// Device: queue deleted.
        HSA_DBG_EC_DEVICE_QUEUE_DELETE = 32,
        /// Device: memory violation.
        HSA_DBG_EC_DEVICE_MEMORY_VIOLATION = 33,
        /// Device: RAS error.
        HSA_DBG_EC_DEVICE_RAS_ERROR = 34,
        /// Device: fatal halt.
        HSA_DBG_EC_DEVICE_FATAL_HALT = 35,
        /// Device: new device.
        HSA_DBG_EC_DEVICE_NEW = 36,
        /// Process: runtime event.
        HSA_DBG_EC_PROCESS_RUNTIME = 48,
        /// Process: device removed.
        HSA_DBG_EC_PROCESS_DEVICE_REMOVE = 49,
        /// One past the last code.
        HSA_DBG_EC_MAX = 50,
    }
}

/// `HSA_EC_MASK(ecode)` (6.2 and newest): the exception-mask bit of a code,
/// `1 << (ecode - 1)`. `ecode` must be 1..=64.
pub const fn HSA_EC_MASK(ecode: u32) -> u64 {
    1u64 << (ecode - 1)
}

/// `HSA_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK` (6.2 and newest): runtime
/// capability bit for core dump support.
pub const HSA_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK: u32 = 0x8000_0000;

c_enum! {
    /// `HSA_EVENTID_HW_EXCEPTION_CAUSE` (6.2 and newest): hardware exception
    /// cause.
    pub struct HSA_EVENTID_HW_EXCEPTION_CAUSE(u32) {
        /// GPU hang.
        HSA_EVENTID_HW_EXCEPTION_GPU_HANG = 0,
        /// SRAM ECC error.
        HSA_EVENTID_HW_EXCEPTION_ECC = 1,
    }
}

/// `HsaHwException` (6.2 and newest): data of a hardware exception event.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaHwException {
    /// Node of the device.
    pub NodeId: u32,
    /// Reset type.
    pub ResetType: u32,
    /// Non-zero if memory was lost.
    pub MemoryLost: u32,
    /// Cause.
    pub ResetCause: HSA_EVENTID_HW_EXCEPTION_CAUSE,
}

hsa_pointer_type! {
    /// `HSA_POINTER_TYPE` (6.2 and newest): how memory behind a pointer was
    /// obtained.
    ;
    /// Address-only reservation (6.2 and newest).
    HSA_POINTER_RESERVED_ADDR = 5,
}

hsa_svm_flags! {
    /// `HSA_SVM_FLAGS` (6.2 and newest): SVM range flags.
    ;
    /// Keep GPU mappings valid as if XNACK were off (6.2 and newest).
    HSA_SVM_FLAG_GPU_ALWAYS_MAPPED = 0x40,
    /// Fine-grained coherence with device-scope atomics (6.2 and newest).
    HSA_SVM_FLAG_EXT_COHERENT = 0x80,
}

c_enum! {
    /// `HSA_EVENT_TYPE` (tag `_HSA_SMI_EVENT`, newest only): SMI event ids.
    pub struct HSA_EVENT_TYPE(u32) {
        /// Unused.
        HSA_SMI_EVENT_NONE = 0,
        /// VM fault.
        HSA_SMI_EVENT_VMFAULT = 1,
        /// Thermal throttling.
        HSA_SMI_EVENT_THERMAL_THROTTLE = 2,
        /// Before a GPU reset.
        HSA_SMI_EVENT_GPU_PRE_RESET = 3,
        /// After a GPU reset.
        HSA_SMI_EVENT_GPU_POST_RESET = 4,
        /// Migration start.
        HSA_SMI_EVENT_MIGRATE_START = 5,
        /// Migration end.
        HSA_SMI_EVENT_MIGRATE_END = 6,
        /// Page fault start.
        HSA_SMI_EVENT_PAGE_FAULT_START = 7,
        /// Page fault end.
        HSA_SMI_EVENT_PAGE_FAULT_END = 8,
        /// Queue eviction.
        HSA_SMI_EVENT_QUEUE_EVICTION = 9,
        /// Queue restore.
        HSA_SMI_EVENT_QUEUE_RESTORE = 10,
        /// Unmap from GPU.
        HSA_SMI_EVENT_UNMAP_FROM_GPU = 11,
        /// One past the last event index.
        HSA_SMI_EVENT_INDEX_MAX = 12,
        /// Flag: events of all processes (needs privileges).
        HSA_SMI_EVENT_ALL_PROCESS = 64,
    }
}

c_enum! {
    /// `HSA_MIGRATE_TRIGGERS` (6.2 and newest): why a migration happened.
    pub struct HSA_MIGRATE_TRIGGERS(u32) {
        /// Prefetch.
        HSA_MIGRATE_TRIGGER_PREFETCH = 0,
        /// GPU page fault.
        HSA_MIGRATE_TRIGGER_PAGEFAULT_GPU = 1,
        /// CPU page fault.
        HSA_MIGRATE_TRIGGER_PAGEFAULT_CPU = 2,
        /// TTM eviction.
        HSA_MIGRATE_TRIGGER_TTM_EVICTION = 3,
    }
}

c_enum! {
    /// `HSA_QUEUE_EVICTION_TRIGGERS` (6.2 and newest): why queues were evicted.
    pub struct HSA_QUEUE_EVICTION_TRIGGERS(u32) {
        /// SVM.
        HSA_QUEUE_EVICTION_TRIGGER_SVM = 0,
        /// Userptr.
        HSA_QUEUE_EVICTION_TRIGGER_USERPTR = 1,
        /// TTM.
        HSA_QUEUE_EVICTION_TRIGGER_TTM = 2,
        /// Suspend.
        HSA_QUEUE_EVICTION_TRIGGER_SUSPEND = 3,
        /// CRIU checkpoint.
        HSA_QUEUE_EVICTION_CRIU_CHECKPOINT = 4,
        /// CRIU restore.
        HSA_QUEUE_EVICTION_CRIU_RESTORE = 5,
    }
}

c_enum! {
    /// `HSA_SVM_UNMAP_TRIGGERS` (6.2 and newest): why an SVM range was unmapped.
    pub struct HSA_SVM_UNMAP_TRIGGERS(u32) {
        /// MMU notifier.
        HSA_SVM_UNMAP_TRIGGER_MMU_NOTIFY = 0,
        /// MMU notifier during migration.
        HSA_SVM_UNMAP_TRIGGER_MMU_NOTIFY_MIGRATE = 1,
        /// Unmapped from the CPU.
        HSA_SVM_UNMAP_TRIGGER_UNMAP_FROM_CPU = 2,
    }
}

/// `HSA_SMI_EVENT_MASK_FROM_INDEX(i)` (6.2 and newest): `1 << (i - 1)`.
/// `i` must be 1..=64.
pub const fn HSA_SMI_EVENT_MASK_FROM_INDEX(i: u32) -> u64 {
    1u64 << (i - 1)
}

/// `HSA_SMI_EVENT_MSG_SIZE` (6.2 and newest): size of one SMI event message.
pub const HSA_SMI_EVENT_MSG_SIZE: usize = 96;

/// `HsaAMDGPUDeviceHandle` (6.2 and newest): libdrm amdgpu device handle.
pub type HsaAMDGPUDeviceHandle = *mut c_void;

/// `HsaPcSamplingTraceId` (6.2 and newest): PC sampling session id.
pub type HsaPcSamplingTraceId = u32;

c_enum! {
    /// `HSA_PC_SAMPLING_METHOD_KIND` (6.2 and newest): PC sampling method.
    pub struct HSA_PC_SAMPLING_METHOD_KIND(u32) {
        /// Host trap, version 1.
        HSA_PC_SAMPLING_METHOD_KIND_HOSTTRAP_V1 = 1,
        /// Stochastic, version 1.
        HSA_PC_SAMPLING_METHOD_KIND_STOCHASTIC_V1 = 2,
    }
}

c_enum! {
    /// `HSA_PC_SAMPLING_UNIT_INTERVAL` (tag `_HSA_PC_SAMPLING_UNITS`,
    /// newest only): unit of a sampling interval.
    pub struct HSA_PC_SAMPLING_UNIT_INTERVAL(u32) {
        /// Microseconds.
        HSA_PC_SAMPLING_UNIT_INTERVAL_MICROSECONDS = 0,
        /// Cycles.
        HSA_PC_SAMPLING_UNIT_INTERVAL_CYCLES = 1,
        /// Instructions.
        HSA_PC_SAMPLING_UNIT_INTERVAL_INSTRUCTIONS = 2,
    }
}

/// `HsaPcSamplingInfo` (6.2 and newest): one PC sampling configuration (out
/// of `hsaKmtPcSamplingQueryCapabilities`, in to `hsaKmtPcSamplingCreate`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaPcSamplingInfo {
    /// Interval.
    pub value: u64,
    /// Minimum interval.
    pub value_min: u64,
    /// Maximum interval.
    pub value_max: u64,
    /// Flags.
    pub flags: u64,
    /// Method.
    pub method: HSA_PC_SAMPLING_METHOD_KIND,
    /// Interval unit.
    pub units: HSA_PC_SAMPLING_UNIT_INTERVAL,
}

event_data_union! {
    /// The C member `HsaEventData::EventData` (6.2 and newest): per-kind
    /// event data.
    ;
    /// Hardware exception events.
    pub HwException: HsaHwException,
}
