//! Constants of `kfd_ioctl.h` (and the mmap offset encoding of
//! `kfd_priv.h`). C enums become `u32` constants named as in C.

// --- Version ---------------------------------------------------------------

/// `KFD_IOCTL_MAJOR_VERSION`.
pub const KFD_IOCTL_MAJOR_VERSION: u32 = 1;
/// `KFD_IOCTL_MINOR_VERSION` of the newest upstream header this crate
/// follows (1.22: metadata ring size in `CREATE_QUEUE`). 1.19 added
/// `AMDKFD_IOC_CREATE_PROCESS`, 1.20 expert-scheduling trap handler
/// support, 1.21 `KFD_DBG_TRAP_FLAG_LDS_OUT_OF_ADDR_RANGE`.
pub const KFD_IOCTL_MINOR_VERSION: u32 = 22;
/// First minor version with `AMDKFD_IOC_CREATE_PROCESS` (secondary contexts).
pub const KFD_IOCTL_MINOR_VERSION_CREATE_PROCESS: u32 = 19;

// --- Queues ----------------------------------------------------------------

/// `KFD_IOC_QUEUE_TYPE_COMPUTE`: PM4 compute queue.
pub const KFD_IOC_QUEUE_TYPE_COMPUTE: u32 = 0x0;
/// `KFD_IOC_QUEUE_TYPE_SDMA`: SDMA queue.
pub const KFD_IOC_QUEUE_TYPE_SDMA: u32 = 0x1;
/// `KFD_IOC_QUEUE_TYPE_COMPUTE_AQL`: AQL compute queue.
pub const KFD_IOC_QUEUE_TYPE_COMPUTE_AQL: u32 = 0x2;
/// `KFD_IOC_QUEUE_TYPE_SDMA_XGMI`: SDMA queue on an xGMI engine.
pub const KFD_IOC_QUEUE_TYPE_SDMA_XGMI: u32 = 0x3;
/// `KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID`: SDMA queue on `sdma_engine_id`.
/// Since 1.17.
pub const KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID: u32 = 0x4;

/// `KFD_MAX_QUEUE_PERCENTAGE`.
pub const KFD_MAX_QUEUE_PERCENTAGE: u32 = 100;
/// `KFD_MAX_QUEUE_PRIORITY`.
pub const KFD_MAX_QUEUE_PRIORITY: u32 = 15;
/// `KFD_MIN_QUEUE_RING_SIZE`: smaller rings are clamped up (1.11 uapi;
/// later moved into the kernel's private headers).
pub const KFD_MIN_QUEUE_RING_SIZE: u32 = 1024;

// --- Memory policy -----------------------------------------------------------

/// `KFD_IOC_CACHE_POLICY_COHERENT`.
pub const KFD_IOC_CACHE_POLICY_COHERENT: u32 = 0;
/// `KFD_IOC_CACHE_POLICY_NONCOHERENT`.
pub const KFD_IOC_CACHE_POLICY_NONCOHERENT: u32 = 1;
/// `KFD_PROC_FLAG_MFMA_HIGH_PRECISION` (`misc_process_flag`, gfx 9.5).
/// Since 1.18.
pub const KFD_PROC_FLAG_MFMA_HIGH_PRECISION: u32 = 1 << 0;

// --- Apertures, legacy debugger ----------------------------------------------

/// `NUM_OF_SUPPORTED_GPUS`: capacity of the deprecated apertures ioctl.
pub const NUM_OF_SUPPORTED_GPUS: u32 = 7;
/// `MAX_ALLOWED_NUM_POINTS` (deprecated debugger).
pub const MAX_ALLOWED_NUM_POINTS: u32 = 100;
/// `MAX_ALLOWED_AW_BUFF_SIZE` (deprecated debugger).
pub const MAX_ALLOWED_AW_BUFF_SIZE: u32 = 4096;
/// `MAX_ALLOWED_WAC_BUFF_SIZE` (deprecated debugger).
pub const MAX_ALLOWED_WAC_BUFF_SIZE: u32 = 128;
/// `KFD_INVALID_FD`.
pub const KFD_INVALID_FD: u32 = 0xffff_ffff;

// --- Events ------------------------------------------------------------------

/// `KFD_IOC_EVENT_SIGNAL`.
pub const KFD_IOC_EVENT_SIGNAL: u32 = 0;
/// `KFD_IOC_EVENT_NODECHANGE`.
pub const KFD_IOC_EVENT_NODECHANGE: u32 = 1;
/// `KFD_IOC_EVENT_DEVICESTATECHANGE`.
pub const KFD_IOC_EVENT_DEVICESTATECHANGE: u32 = 2;
/// `KFD_IOC_EVENT_HW_EXCEPTION`.
pub const KFD_IOC_EVENT_HW_EXCEPTION: u32 = 3;
/// `KFD_IOC_EVENT_SYSTEM_EVENT`.
pub const KFD_IOC_EVENT_SYSTEM_EVENT: u32 = 4;
/// `KFD_IOC_EVENT_DEBUG_EVENT`.
pub const KFD_IOC_EVENT_DEBUG_EVENT: u32 = 5;
/// `KFD_IOC_EVENT_PROFILE_EVENT`.
pub const KFD_IOC_EVENT_PROFILE_EVENT: u32 = 6;
/// `KFD_IOC_EVENT_QUEUE_EVENT`.
pub const KFD_IOC_EVENT_QUEUE_EVENT: u32 = 7;
/// `KFD_IOC_EVENT_MEMORY`.
pub const KFD_IOC_EVENT_MEMORY: u32 = 8;

/// `KFD_IOC_WAIT_RESULT_COMPLETE`.
pub const KFD_IOC_WAIT_RESULT_COMPLETE: u32 = 0;
/// `KFD_IOC_WAIT_RESULT_TIMEOUT`.
pub const KFD_IOC_WAIT_RESULT_TIMEOUT: u32 = 1;
/// `KFD_IOC_WAIT_RESULT_FAIL`.
pub const KFD_IOC_WAIT_RESULT_FAIL: u32 = 2;

/// `KFD_SIGNAL_EVENT_LIMIT`: signal slots in the event page.
pub const KFD_SIGNAL_EVENT_LIMIT: u32 = 4096;

/// `KFD_HW_EXCEPTION_WHOLE_GPU_RESET`.
pub const KFD_HW_EXCEPTION_WHOLE_GPU_RESET: u32 = 0;
/// `KFD_HW_EXCEPTION_PER_ENGINE_RESET`.
pub const KFD_HW_EXCEPTION_PER_ENGINE_RESET: u32 = 1;
/// `KFD_HW_EXCEPTION_GPU_HANG`.
pub const KFD_HW_EXCEPTION_GPU_HANG: u32 = 0;
/// `KFD_HW_EXCEPTION_ECC`.
pub const KFD_HW_EXCEPTION_ECC: u32 = 1;

/// `KFD_MEM_ERR_NO_RAS`.
pub const KFD_MEM_ERR_NO_RAS: u32 = 0;
/// `KFD_MEM_ERR_SRAM_ECC`.
pub const KFD_MEM_ERR_SRAM_ECC: u32 = 1;
/// `KFD_MEM_ERR_POISON_CONSUMED`.
pub const KFD_MEM_ERR_POISON_CONSUMED: u32 = 2;
/// `KFD_MEM_ERR_GPU_HANG`.
pub const KFD_MEM_ERR_GPU_HANG: u32 = 3;

// --- Allocation flags ----------------------------------------------------------

/// `KFD_IOC_ALLOC_MEM_FLAGS_VRAM`.
pub const KFD_IOC_ALLOC_MEM_FLAGS_VRAM: u32 = 1 << 0;
/// `KFD_IOC_ALLOC_MEM_FLAGS_GTT`.
pub const KFD_IOC_ALLOC_MEM_FLAGS_GTT: u32 = 1 << 1;
/// `KFD_IOC_ALLOC_MEM_FLAGS_USERPTR`.
pub const KFD_IOC_ALLOC_MEM_FLAGS_USERPTR: u32 = 1 << 2;
/// `KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL`.
pub const KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL: u32 = 1 << 3;
/// `KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP`.
pub const KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP: u32 = 1 << 4;
/// `KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE`.
pub const KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE: u32 = 1 << 31;
/// `KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE`.
pub const KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE: u32 = 1 << 30;
/// `KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC`.
pub const KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC: u32 = 1 << 29;
/// `KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE`.
pub const KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE: u32 = 1 << 28;
/// `KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM`.
pub const KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM: u32 = 1 << 27;
/// `KFD_IOC_ALLOC_MEM_FLAGS_COHERENT`.
pub const KFD_IOC_ALLOC_MEM_FLAGS_COHERENT: u32 = 1 << 26;
/// `KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED`.
pub const KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED: u32 = 1 << 25;
/// `KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT`. Since 1.14-era kernels (6.8).
pub const KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT: u32 = 1 << 24;
/// `KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS` (ROCm spells it
/// `..._CONTIGUOUS_BEST_EFFORT`). Since 1.16.
pub const KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS: u32 = 1 << 23;
/// ROCm's name for [`KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS`].
pub const KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS_BEST_EFFORT: u32 = 1 << 23;

// --- SMI events ------------------------------------------------------------

/// `KFD_SMI_EVENT_NONE` (unused).
pub const KFD_SMI_EVENT_NONE: u32 = 0;
/// `KFD_SMI_EVENT_VMFAULT`.
pub const KFD_SMI_EVENT_VMFAULT: u32 = 1;
/// `KFD_SMI_EVENT_THERMAL_THROTTLE`.
pub const KFD_SMI_EVENT_THERMAL_THROTTLE: u32 = 2;
/// `KFD_SMI_EVENT_GPU_PRE_RESET`.
pub const KFD_SMI_EVENT_GPU_PRE_RESET: u32 = 3;
/// `KFD_SMI_EVENT_GPU_POST_RESET`.
pub const KFD_SMI_EVENT_GPU_POST_RESET: u32 = 4;
/// `KFD_SMI_EVENT_MIGRATE_START`. Since 1.10.
pub const KFD_SMI_EVENT_MIGRATE_START: u32 = 5;
/// `KFD_SMI_EVENT_MIGRATE_END`.
pub const KFD_SMI_EVENT_MIGRATE_END: u32 = 6;
/// `KFD_SMI_EVENT_PAGE_FAULT_START`.
pub const KFD_SMI_EVENT_PAGE_FAULT_START: u32 = 7;
/// `KFD_SMI_EVENT_PAGE_FAULT_END`.
pub const KFD_SMI_EVENT_PAGE_FAULT_END: u32 = 8;
/// `KFD_SMI_EVENT_QUEUE_EVICTION`.
pub const KFD_SMI_EVENT_QUEUE_EVICTION: u32 = 9;
/// `KFD_SMI_EVENT_QUEUE_RESTORE`.
pub const KFD_SMI_EVENT_QUEUE_RESTORE: u32 = 10;
/// `KFD_SMI_EVENT_UNMAP_FROM_GPU`.
pub const KFD_SMI_EVENT_UNMAP_FROM_GPU: u32 = 11;
/// `KFD_SMI_EVENT_ALL_PROCESS`: as a mask bit, events of all processes
/// (privileged).
pub const KFD_SMI_EVENT_ALL_PROCESS: u32 = 64;
/// `KFD_SMI_EVENT_MSG_SIZE`: maximum size of one event message.
pub const KFD_SMI_EVENT_MSG_SIZE: u32 = 96;

/// `KFD_SMI_EVENT_MASK_FROM_INDEX(i)`: the mask bit of SMI event `i`.
pub const fn kfd_smi_event_mask_from_index(i: u32) -> u64 {
    1u64 << (i - 1)
}

/// `KFD_MIGRATE_TRIGGER_PREFETCH`.
pub const KFD_MIGRATE_TRIGGER_PREFETCH: u32 = 0;
/// `KFD_MIGRATE_TRIGGER_PAGEFAULT_GPU`.
pub const KFD_MIGRATE_TRIGGER_PAGEFAULT_GPU: u32 = 1;
/// `KFD_MIGRATE_TRIGGER_PAGEFAULT_CPU`.
pub const KFD_MIGRATE_TRIGGER_PAGEFAULT_CPU: u32 = 2;
/// `KFD_MIGRATE_TRIGGER_TTM_EVICTION`.
pub const KFD_MIGRATE_TRIGGER_TTM_EVICTION: u32 = 3;

/// `KFD_QUEUE_EVICTION_TRIGGER_SVM`.
pub const KFD_QUEUE_EVICTION_TRIGGER_SVM: u32 = 0;
/// `KFD_QUEUE_EVICTION_TRIGGER_USERPTR`.
pub const KFD_QUEUE_EVICTION_TRIGGER_USERPTR: u32 = 1;
/// `KFD_QUEUE_EVICTION_TRIGGER_TTM`.
pub const KFD_QUEUE_EVICTION_TRIGGER_TTM: u32 = 2;
/// `KFD_QUEUE_EVICTION_TRIGGER_SUSPEND`.
pub const KFD_QUEUE_EVICTION_TRIGGER_SUSPEND: u32 = 3;
/// `KFD_QUEUE_EVICTION_CRIU_CHECKPOINT`.
pub const KFD_QUEUE_EVICTION_CRIU_CHECKPOINT: u32 = 4;
/// `KFD_QUEUE_EVICTION_CRIU_RESTORE`.
pub const KFD_QUEUE_EVICTION_CRIU_RESTORE: u32 = 5;

/// `KFD_SVM_UNMAP_TRIGGER_MMU_NOTIFY`.
pub const KFD_SVM_UNMAP_TRIGGER_MMU_NOTIFY: u32 = 0;
/// `KFD_SVM_UNMAP_TRIGGER_MMU_NOTIFY_MIGRATE`.
pub const KFD_SVM_UNMAP_TRIGGER_MMU_NOTIFY_MIGRATE: u32 = 1;
/// `KFD_SVM_UNMAP_TRIGGER_UNMAP_FROM_CPU`.
pub const KFD_SVM_UNMAP_TRIGGER_UNMAP_FROM_CPU: u32 = 2;

// --- CRIU -----------------------------------------------------------------------

/// `KFD_CRIU_OP_PROCESS_INFO`.
pub const KFD_CRIU_OP_PROCESS_INFO: u32 = 0;
/// `KFD_CRIU_OP_CHECKPOINT`.
pub const KFD_CRIU_OP_CHECKPOINT: u32 = 1;
/// `KFD_CRIU_OP_UNPAUSE`.
pub const KFD_CRIU_OP_UNPAUSE: u32 = 2;
/// `KFD_CRIU_OP_RESTORE`.
pub const KFD_CRIU_OP_RESTORE: u32 = 3;
/// `KFD_CRIU_OP_RESUME`.
pub const KFD_CRIU_OP_RESUME: u32 = 4;

// --- MMIO remap page -------------------------------------------------------

/// `KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL`: byte offset in the MMIO page.
pub const KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL: u32 = 0;
/// `KFD_MMIO_REMAP_HDP_REG_FLUSH_CNTL`: byte offset in the MMIO page.
pub const KFD_MMIO_REMAP_HDP_REG_FLUSH_CNTL: u32 = 4;

// --- SVM ------------------------------------------------------------------

/// `KFD_IOCTL_SVM_FLAG_HOST_ACCESS`.
pub const KFD_IOCTL_SVM_FLAG_HOST_ACCESS: u32 = 0x0000_0001;
/// `KFD_IOCTL_SVM_FLAG_COHERENT`.
pub const KFD_IOCTL_SVM_FLAG_COHERENT: u32 = 0x0000_0002;
/// `KFD_IOCTL_SVM_FLAG_HIVE_LOCAL`.
pub const KFD_IOCTL_SVM_FLAG_HIVE_LOCAL: u32 = 0x0000_0004;
/// `KFD_IOCTL_SVM_FLAG_GPU_RO`.
pub const KFD_IOCTL_SVM_FLAG_GPU_RO: u32 = 0x0000_0008;
/// `KFD_IOCTL_SVM_FLAG_GPU_EXEC`.
pub const KFD_IOCTL_SVM_FLAG_GPU_EXEC: u32 = 0x0000_0010;
/// `KFD_IOCTL_SVM_FLAG_GPU_READ_MOSTLY`.
pub const KFD_IOCTL_SVM_FLAG_GPU_READ_MOSTLY: u32 = 0x0000_0020;
/// `KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED`.
pub const KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED: u32 = 0x0000_0040;
/// `KFD_IOCTL_SVM_FLAG_EXT_COHERENT`. Newer than 1.11.
pub const KFD_IOCTL_SVM_FLAG_EXT_COHERENT: u32 = 0x0000_0080;

/// `KFD_IOCTL_SVM_OP_SET_ATTR`.
pub const KFD_IOCTL_SVM_OP_SET_ATTR: u32 = 0;
/// `KFD_IOCTL_SVM_OP_GET_ATTR`.
pub const KFD_IOCTL_SVM_OP_GET_ATTR: u32 = 1;

/// `KFD_IOCTL_SVM_LOCATION_SYSMEM`: system memory as a location.
pub const KFD_IOCTL_SVM_LOCATION_SYSMEM: u32 = 0;
/// `KFD_IOCTL_SVM_LOCATION_UNDEFINED`: no or mixed location.
pub const KFD_IOCTL_SVM_LOCATION_UNDEFINED: u32 = 0xffff_ffff;

/// `KFD_IOCTL_SVM_ATTR_PREFERRED_LOC`.
pub const KFD_IOCTL_SVM_ATTR_PREFERRED_LOC: u32 = 0;
/// `KFD_IOCTL_SVM_ATTR_PREFETCH_LOC`.
pub const KFD_IOCTL_SVM_ATTR_PREFETCH_LOC: u32 = 1;
/// `KFD_IOCTL_SVM_ATTR_ACCESS`.
pub const KFD_IOCTL_SVM_ATTR_ACCESS: u32 = 2;
/// `KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE`.
pub const KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE: u32 = 3;
/// `KFD_IOCTL_SVM_ATTR_NO_ACCESS`.
pub const KFD_IOCTL_SVM_ATTR_NO_ACCESS: u32 = 4;
/// `KFD_IOCTL_SVM_ATTR_SET_FLAGS`.
pub const KFD_IOCTL_SVM_ATTR_SET_FLAGS: u32 = 5;
/// `KFD_IOCTL_SVM_ATTR_CLR_FLAGS`.
pub const KFD_IOCTL_SVM_ATTR_CLR_FLAGS: u32 = 6;
/// `KFD_IOCTL_SVM_ATTR_GRANULARITY`: log2 of pages.
pub const KFD_IOCTL_SVM_ATTR_GRANULARITY: u32 = 7;

// --- Debugger --------------------------------------------------------------

/// `KFD_DBG_TRAP_OVERRIDE_OR`.
pub const KFD_DBG_TRAP_OVERRIDE_OR: u32 = 0;
/// `KFD_DBG_TRAP_OVERRIDE_REPLACE`.
pub const KFD_DBG_TRAP_OVERRIDE_REPLACE: u32 = 1;

/// `KFD_DBG_TRAP_MASK_FP_INVALID`.
pub const KFD_DBG_TRAP_MASK_FP_INVALID: u32 = 1;
/// `KFD_DBG_TRAP_MASK_FP_INPUT_DENORMAL`.
pub const KFD_DBG_TRAP_MASK_FP_INPUT_DENORMAL: u32 = 2;
/// `KFD_DBG_TRAP_MASK_FP_DIVIDE_BY_ZERO`.
pub const KFD_DBG_TRAP_MASK_FP_DIVIDE_BY_ZERO: u32 = 4;
/// `KFD_DBG_TRAP_MASK_FP_OVERFLOW`.
pub const KFD_DBG_TRAP_MASK_FP_OVERFLOW: u32 = 8;
/// `KFD_DBG_TRAP_MASK_FP_UNDERFLOW`.
pub const KFD_DBG_TRAP_MASK_FP_UNDERFLOW: u32 = 16;
/// `KFD_DBG_TRAP_MASK_FP_INEXACT`.
pub const KFD_DBG_TRAP_MASK_FP_INEXACT: u32 = 32;
/// `KFD_DBG_TRAP_MASK_INT_DIVIDE_BY_ZERO`.
pub const KFD_DBG_TRAP_MASK_INT_DIVIDE_BY_ZERO: u32 = 64;
/// `KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH`.
pub const KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH: u32 = 128;
/// `KFD_DBG_TRAP_MASK_DBG_MEMORY_VIOLATION`.
pub const KFD_DBG_TRAP_MASK_DBG_MEMORY_VIOLATION: u32 = 256;
/// `KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START`.
pub const KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START: u32 = 1 << 30;
/// `KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_END`.
pub const KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_END: u32 = 1 << 31;

/// `KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL`.
pub const KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL: u32 = 0;
/// `KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT`.
pub const KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT: u32 = 1;
/// `KFD_DBG_TRAP_WAVE_LAUNCH_MODE_DEBUG`.
pub const KFD_DBG_TRAP_WAVE_LAUNCH_MODE_DEBUG: u32 = 3;

/// `KFD_DBG_TRAP_ADDRESS_WATCH_MODE_READ`.
pub const KFD_DBG_TRAP_ADDRESS_WATCH_MODE_READ: u32 = 0;
/// `KFD_DBG_TRAP_ADDRESS_WATCH_MODE_NONREAD`.
pub const KFD_DBG_TRAP_ADDRESS_WATCH_MODE_NONREAD: u32 = 1;
/// `KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ATOMIC`.
pub const KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ATOMIC: u32 = 2;
/// `KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ALL`.
pub const KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ALL: u32 = 3;

/// `KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP`: precise memory operations.
pub const KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP: u32 = 1;
/// `KFD_DBG_TRAP_FLAG_SINGLE_ALU_OP`: precise ALU operations (gfx12+).
pub const KFD_DBG_TRAP_FLAG_SINGLE_ALU_OP: u32 = 2;
/// `KFD_DBG_TRAP_FLAG_LDS_OUT_OF_ADDR_RANGE`: report out-of-range LDS
/// accesses (gfx 12.1+). Since 1.21.
pub const KFD_DBG_TRAP_FLAG_LDS_OUT_OF_ADDR_RANGE: u32 = 4;

/// `EC_NONE`.
pub const EC_NONE: u32 = 0;
/// `EC_QUEUE_WAVE_ABORT`.
pub const EC_QUEUE_WAVE_ABORT: u32 = 1;
/// `EC_QUEUE_WAVE_TRAP`.
pub const EC_QUEUE_WAVE_TRAP: u32 = 2;
/// `EC_QUEUE_WAVE_MATH_ERROR`.
pub const EC_QUEUE_WAVE_MATH_ERROR: u32 = 3;
/// `EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION`.
pub const EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION: u32 = 4;
/// `EC_QUEUE_WAVE_MEMORY_VIOLATION`.
pub const EC_QUEUE_WAVE_MEMORY_VIOLATION: u32 = 5;
/// `EC_QUEUE_WAVE_APERTURE_VIOLATION`.
pub const EC_QUEUE_WAVE_APERTURE_VIOLATION: u32 = 6;
/// `EC_QUEUE_PACKET_DISPATCH_DIM_INVALID`.
pub const EC_QUEUE_PACKET_DISPATCH_DIM_INVALID: u32 = 16;
/// `EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID`.
pub const EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID: u32 = 17;
/// `EC_QUEUE_PACKET_DISPATCH_CODE_INVALID`.
pub const EC_QUEUE_PACKET_DISPATCH_CODE_INVALID: u32 = 18;
/// `EC_QUEUE_PACKET_RESERVED`.
pub const EC_QUEUE_PACKET_RESERVED: u32 = 19;
/// `EC_QUEUE_PACKET_UNSUPPORTED`.
pub const EC_QUEUE_PACKET_UNSUPPORTED: u32 = 20;
/// `EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID`.
pub const EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID: u32 = 21;
/// `EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID`.
pub const EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID: u32 = 22;
/// `EC_QUEUE_PACKET_VENDOR_UNSUPPORTED`.
pub const EC_QUEUE_PACKET_VENDOR_UNSUPPORTED: u32 = 23;
/// `EC_QUEUE_PREEMPTION_ERROR`.
pub const EC_QUEUE_PREEMPTION_ERROR: u32 = 30;
/// `EC_QUEUE_NEW`.
pub const EC_QUEUE_NEW: u32 = 31;
/// `EC_DEVICE_QUEUE_DELETE`.
pub const EC_DEVICE_QUEUE_DELETE: u32 = 32;
/// `EC_DEVICE_MEMORY_VIOLATION`.
pub const EC_DEVICE_MEMORY_VIOLATION: u32 = 33;
/// `EC_DEVICE_RAS_ERROR`.
pub const EC_DEVICE_RAS_ERROR: u32 = 34;
/// `EC_DEVICE_FATAL_HALT`.
pub const EC_DEVICE_FATAL_HALT: u32 = 35;
/// `EC_DEVICE_NEW`.
pub const EC_DEVICE_NEW: u32 = 36;
/// `EC_PROCESS_RUNTIME`.
pub const EC_PROCESS_RUNTIME: u32 = 48;
/// `EC_PROCESS_DEVICE_REMOVE`.
pub const EC_PROCESS_DEVICE_REMOVE: u32 = 49;
/// `EC_MAX`: one past the last exception code.
pub const EC_MAX: u32 = 50;

/// `KFD_EC_MASK(ecode)`: the exception-mask bit of `ecode` (`1 << (ecode-1)`).
pub const fn kfd_ec_mask(ecode: u32) -> u64 {
    1u64 << (ecode - 1)
}

/// `KFD_EC_MASK_QUEUE`: all per-queue exceptions (upstream definition,
/// which includes `EC_QUEUE_PACKET_RESERVED`; ROCm's header omits it).
pub const KFD_EC_MASK_QUEUE: u64 = kfd_ec_mask(EC_QUEUE_WAVE_ABORT)
    | kfd_ec_mask(EC_QUEUE_WAVE_TRAP)
    | kfd_ec_mask(EC_QUEUE_WAVE_MATH_ERROR)
    | kfd_ec_mask(EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION)
    | kfd_ec_mask(EC_QUEUE_WAVE_MEMORY_VIOLATION)
    | kfd_ec_mask(EC_QUEUE_WAVE_APERTURE_VIOLATION)
    | kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_DIM_INVALID)
    | kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID)
    | kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_CODE_INVALID)
    | kfd_ec_mask(EC_QUEUE_PACKET_RESERVED)
    | kfd_ec_mask(EC_QUEUE_PACKET_UNSUPPORTED)
    | kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID)
    | kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID)
    | kfd_ec_mask(EC_QUEUE_PACKET_VENDOR_UNSUPPORTED)
    | kfd_ec_mask(EC_QUEUE_PREEMPTION_ERROR)
    | kfd_ec_mask(EC_QUEUE_NEW);
/// `KFD_EC_MASK_DEVICE`: all per-device exceptions.
pub const KFD_EC_MASK_DEVICE: u64 = kfd_ec_mask(EC_DEVICE_QUEUE_DELETE)
    | kfd_ec_mask(EC_DEVICE_RAS_ERROR)
    | kfd_ec_mask(EC_DEVICE_FATAL_HALT)
    | kfd_ec_mask(EC_DEVICE_MEMORY_VIOLATION)
    | kfd_ec_mask(EC_DEVICE_NEW);
/// `KFD_EC_MASK_PROCESS`: all per-process exceptions.
pub const KFD_EC_MASK_PROCESS: u64 =
    kfd_ec_mask(EC_PROCESS_RUNTIME) | kfd_ec_mask(EC_PROCESS_DEVICE_REMOVE);
/// `KFD_EC_MASK_PACKET`: the packet exceptions (upstream only).
pub const KFD_EC_MASK_PACKET: u64 = kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_DIM_INVALID)
    | kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID)
    | kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_CODE_INVALID)
    | kfd_ec_mask(EC_QUEUE_PACKET_RESERVED)
    | kfd_ec_mask(EC_QUEUE_PACKET_UNSUPPORTED)
    | kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID)
    | kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID)
    | kfd_ec_mask(EC_QUEUE_PACKET_VENDOR_UNSUPPORTED);

/// `KFD_DBG_EC_IS_VALID(ecode)`.
pub const fn kfd_dbg_ec_is_valid(ecode: u32) -> bool {
    ecode > EC_NONE && ecode < EC_MAX
}
/// `KFD_DBG_EC_TYPE_IS_QUEUE(ecode)`.
pub const fn kfd_dbg_ec_type_is_queue(ecode: u32) -> bool {
    kfd_dbg_ec_is_valid(ecode) && kfd_ec_mask(ecode) & KFD_EC_MASK_QUEUE != 0
}
/// `KFD_DBG_EC_TYPE_IS_DEVICE(ecode)`.
pub const fn kfd_dbg_ec_type_is_device(ecode: u32) -> bool {
    kfd_dbg_ec_is_valid(ecode) && kfd_ec_mask(ecode) & KFD_EC_MASK_DEVICE != 0
}
/// `KFD_DBG_EC_TYPE_IS_PROCESS(ecode)`.
pub const fn kfd_dbg_ec_type_is_process(ecode: u32) -> bool {
    kfd_dbg_ec_is_valid(ecode) && kfd_ec_mask(ecode) & KFD_EC_MASK_PROCESS != 0
}
/// `KFD_DBG_EC_TYPE_IS_PACKET(ecode)`.
pub const fn kfd_dbg_ec_type_is_packet(ecode: u32) -> bool {
    kfd_dbg_ec_is_valid(ecode) && kfd_ec_mask(ecode) & KFD_EC_MASK_PACKET != 0
}

/// `DEBUG_RUNTIME_STATE_DISABLED`.
pub const DEBUG_RUNTIME_STATE_DISABLED: u32 = 0;
/// `DEBUG_RUNTIME_STATE_ENABLED`.
pub const DEBUG_RUNTIME_STATE_ENABLED: u32 = 1;
/// `DEBUG_RUNTIME_STATE_ENABLED_BUSY`.
pub const DEBUG_RUNTIME_STATE_ENABLED_BUSY: u32 = 2;
/// `DEBUG_RUNTIME_STATE_ENABLED_ERROR`.
pub const DEBUG_RUNTIME_STATE_ENABLED_ERROR: u32 = 3;

/// `KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK`: enable (else disable).
pub const KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK: u32 = 1;
/// `KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK`: set up trap temporaries.
pub const KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK: u32 = 2;

/// `KFD_DBG_QUEUE_ERROR_BIT`.
pub const KFD_DBG_QUEUE_ERROR_BIT: u32 = 30;
/// `KFD_DBG_QUEUE_INVALID_BIT`.
pub const KFD_DBG_QUEUE_INVALID_BIT: u32 = 31;
/// `KFD_DBG_QUEUE_ERROR_MASK`: suspend/resume failed on this queue.
pub const KFD_DBG_QUEUE_ERROR_MASK: u32 = 1 << KFD_DBG_QUEUE_ERROR_BIT;
/// `KFD_DBG_QUEUE_INVALID_MASK`: no such queue (or new/being destroyed).
pub const KFD_DBG_QUEUE_INVALID_MASK: u32 = 1 << KFD_DBG_QUEUE_INVALID_BIT;

/// `KFD_IOC_DBG_TRAP_ENABLE`.
pub const KFD_IOC_DBG_TRAP_ENABLE: u32 = 0;
/// `KFD_IOC_DBG_TRAP_DISABLE`.
pub const KFD_IOC_DBG_TRAP_DISABLE: u32 = 1;
/// `KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT`.
pub const KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT: u32 = 2;
/// `KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED`.
pub const KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED: u32 = 3;
/// `KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE`.
pub const KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE: u32 = 4;
/// `KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE`.
pub const KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE: u32 = 5;
/// `KFD_IOC_DBG_TRAP_SUSPEND_QUEUES`.
pub const KFD_IOC_DBG_TRAP_SUSPEND_QUEUES: u32 = 6;
/// `KFD_IOC_DBG_TRAP_RESUME_QUEUES`.
pub const KFD_IOC_DBG_TRAP_RESUME_QUEUES: u32 = 7;
/// `KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH`.
pub const KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH: u32 = 8;
/// `KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH`.
pub const KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH: u32 = 9;
/// `KFD_IOC_DBG_TRAP_SET_FLAGS`.
pub const KFD_IOC_DBG_TRAP_SET_FLAGS: u32 = 10;
/// `KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT`.
pub const KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT: u32 = 11;
/// `KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO`.
pub const KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO: u32 = 12;
/// `KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT`.
pub const KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT: u32 = 13;
/// `KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT`.
pub const KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT: u32 = 14;

// --- Command ranges ----------------------------------------------------------

/// `AMDKFD_COMMAND_START`: first upstream command number.
pub const AMDKFD_COMMAND_START: u8 = 0x01;
/// `AMDKFD_COMMAND_END`: one past the last upstream command number (1.19+).
pub const AMDKFD_COMMAND_END: u8 = 0x28;

// --- mmap offsets (kernel-private) -------------------------------------------
//
// Not uapi: these come from drivers/gpu/drm/amd/amdkfd/kfd_priv.h
// (KFD_MMAP_TYPE_*, KFD_MMAP_GPU_ID_*, KFD_GPU_ID_HASH_WIDTH; byte offsets
// since Linux 5.x, when the shifts stopped subtracting PAGE_SHIFT). Offsets
// on the KFD fd are: bits 63..62 type, 61..46 gpu_id, 45..0 value.

/// `KFD_GPU_ID_HASH_WIDTH`: bits in a gpu_id.
pub const KFD_GPU_ID_HASH_WIDTH: u32 = 16;
/// `KFD_MMAP_TYPE_SHIFT`.
pub const KFD_MMAP_TYPE_SHIFT: u32 = 62;
/// `KFD_MMAP_TYPE_MASK`.
pub const KFD_MMAP_TYPE_MASK: u64 = 0x3 << KFD_MMAP_TYPE_SHIFT;
/// `KFD_MMAP_TYPE_DOORBELL`: doorbell page of a device.
pub const KFD_MMAP_TYPE_DOORBELL: u64 = 0x3 << KFD_MMAP_TYPE_SHIFT;
/// `KFD_MMAP_TYPE_EVENTS`: the event page.
pub const KFD_MMAP_TYPE_EVENTS: u64 = 0x2 << KFD_MMAP_TYPE_SHIFT;
/// `KFD_MMAP_TYPE_RESERVED_MEM`: reserved memory (CWSR trap handler).
pub const KFD_MMAP_TYPE_RESERVED_MEM: u64 = 0x1 << KFD_MMAP_TYPE_SHIFT;
/// `KFD_MMAP_TYPE_MMIO`: the MMIO remap (HDP flush) page.
pub const KFD_MMAP_TYPE_MMIO: u64 = 0x0 << KFD_MMAP_TYPE_SHIFT;
/// `KFD_MMAP_GPU_ID_SHIFT`.
pub const KFD_MMAP_GPU_ID_SHIFT: u32 = 46;
/// `KFD_MMAP_GPU_ID_MASK`.
pub const KFD_MMAP_GPU_ID_MASK: u64 =
    ((1u64 << KFD_GPU_ID_HASH_WIDTH) - 1) << KFD_MMAP_GPU_ID_SHIFT;
/// `KFD_MMAP_OFFSET_VALUE_MASK`: the value bits below the gpu_id.
pub const KFD_MMAP_OFFSET_VALUE_MASK: u64 = 0x3FFF_FFFF_FFFF;

/// `KFD_MMAP_GPU_ID(gpu_id)`: the gpu_id field of an mmap offset.
pub const fn kfd_mmap_gpu_id(gpu_id: u32) -> u64 {
    ((gpu_id as u64) << KFD_MMAP_GPU_ID_SHIFT) & KFD_MMAP_GPU_ID_MASK
}
/// `KFD_MMAP_GET_GPU_ID(offset)`.
pub const fn kfd_mmap_get_gpu_id(offset: u64) -> u32 {
    ((offset & KFD_MMAP_GPU_ID_MASK) >> KFD_MMAP_GPU_ID_SHIFT) as u32
}
