//! `bitflags` views of the flag words in `kfd_ioctl.h`. Each bit equals
//! the raw constant of the same name in [`super`] (checked by a unit test).

use bitflags::bitflags;

use super::consts::*;

bitflags! {
    /// `KFD_IOC_ALLOC_MEM_FLAGS_*` (`kfd_ioctl_alloc_memory_of_gpu_args.flags`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct AllocMemFlags: u32 {
        /// VRAM.
        const VRAM = KFD_IOC_ALLOC_MEM_FLAGS_VRAM;
        /// GTT (system memory through the GART).
        const GTT = KFD_IOC_ALLOC_MEM_FLAGS_GTT;
        /// Pinned user pages; `mmap_offset` carries the CPU address.
        const USERPTR = KFD_IOC_ALLOC_MEM_FLAGS_USERPTR;
        /// The device's doorbell page.
        const DOORBELL = KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL;
        /// The MMIO remap (HDP flush) page.
        const MMIO_REMAP = KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP;
        /// GPU-writable.
        const WRITABLE = KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
        /// GPU-executable.
        const EXECUTABLE = KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE;
        /// CPU-visible VRAM.
        const PUBLIC = KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC;
        /// Do not fall back to another memory type.
        const NO_SUBSTITUTE = KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE;
        /// AQL queue memory (mapped twice, back to back).
        const AQL_QUEUE_MEM = KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM;
        /// Fine-grained coherent.
        const COHERENT = KFD_IOC_ALLOC_MEM_FLAGS_COHERENT;
        /// Uncached.
        const UNCACHED = KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED;
        /// Coherent including device-scope atomics.
        const EXT_COHERENT = KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT;
        /// Physically contiguous VRAM, best effort. Since 1.16.
        const CONTIGUOUS = KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS;
    }
}

bitflags! {
    /// `KFD_IOCTL_SVM_FLAG_*` (values of `SET_FLAGS` / `CLR_FLAGS`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct SvmFlags: u32 {
        /// Guarantee host access.
        const HOST_ACCESS = KFD_IOCTL_SVM_FLAG_HOST_ACCESS;
        /// Fine-grained coherence between all devices with access.
        const COHERENT = KFD_IOCTL_SVM_FLAG_COHERENT;
        /// Any GPU of the hive may serve as the preferred device.
        const HIVE_LOCAL = KFD_IOCTL_SVM_FLAG_HIVE_LOCAL;
        /// GPUs only read.
        const GPU_RO = KFD_IOCTL_SVM_FLAG_GPU_RO;
        /// GPUs may execute.
        const GPU_EXEC = KFD_IOCTL_SVM_FLAG_GPU_EXEC;
        /// GPUs mostly read.
        const GPU_READ_MOSTLY = KFD_IOCTL_SVM_FLAG_GPU_READ_MOSTLY;
        /// Keep GPU mappings valid as if XNACK were off.
        const GPU_ALWAYS_MAPPED = KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED;
        /// Coherent including device-scope atomics.
        const EXT_COHERENT = KFD_IOCTL_SVM_FLAG_EXT_COHERENT;
    }
}

bitflags! {
    /// `KFD_RUNTIME_ENABLE_MODE_*` (`kfd_ioctl_runtime_enable_args.mode_mask`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct RuntimeEnableMode: u32 {
        /// Enable (else disable) the runtime for debugging.
        const ENABLE = KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK;
        /// Set up trap temporaries.
        const TTMP_SAVE = KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK;
    }
}

bitflags! {
    /// `KFD_DBG_TRAP_MASK_*` (wave launch override masks).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct DbgTrapMask: u32 {
        /// FP invalid operation.
        const FP_INVALID = KFD_DBG_TRAP_MASK_FP_INVALID;
        /// FP denormal input.
        const FP_INPUT_DENORMAL = KFD_DBG_TRAP_MASK_FP_INPUT_DENORMAL;
        /// FP divide by zero.
        const FP_DIVIDE_BY_ZERO = KFD_DBG_TRAP_MASK_FP_DIVIDE_BY_ZERO;
        /// FP overflow.
        const FP_OVERFLOW = KFD_DBG_TRAP_MASK_FP_OVERFLOW;
        /// FP underflow.
        const FP_UNDERFLOW = KFD_DBG_TRAP_MASK_FP_UNDERFLOW;
        /// FP inexact.
        const FP_INEXACT = KFD_DBG_TRAP_MASK_FP_INEXACT;
        /// Integer divide by zero.
        const INT_DIVIDE_BY_ZERO = KFD_DBG_TRAP_MASK_INT_DIVIDE_BY_ZERO;
        /// Address watch hit.
        const DBG_ADDRESS_WATCH = KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH;
        /// Memory violation.
        const DBG_MEMORY_VIOLATION = KFD_DBG_TRAP_MASK_DBG_MEMORY_VIOLATION;
        /// Trap when a wave starts.
        const TRAP_ON_WAVE_START = KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START;
        /// Trap when a wave ends.
        const TRAP_ON_WAVE_END = KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_END;
    }
}

bitflags! {
    /// `KFD_DBG_TRAP_FLAG_*` (`KFD_IOC_DBG_TRAP_SET_FLAGS`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct DbgTrapFlags: u32 {
        /// Precise memory operations.
        const SINGLE_MEM_OP = KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP;
        /// Precise ALU operations.
        const SINGLE_ALU_OP = KFD_DBG_TRAP_FLAG_SINGLE_ALU_OP;
        /// Report out-of-range LDS accesses. Since 1.21.
        const LDS_OUT_OF_ADDR_RANGE = KFD_DBG_TRAP_FLAG_LDS_OUT_OF_ADDR_RANGE;
    }
}

bitflags! {
    /// Exception masks: bit `ecode - 1` for each `EC_*` code
    /// (`KFD_EC_MASK`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct ExceptionMask: u64 {
        /// `EC_QUEUE_WAVE_ABORT`.
        const QUEUE_WAVE_ABORT = kfd_ec_mask(EC_QUEUE_WAVE_ABORT);
        /// `EC_QUEUE_WAVE_TRAP`.
        const QUEUE_WAVE_TRAP = kfd_ec_mask(EC_QUEUE_WAVE_TRAP);
        /// `EC_QUEUE_WAVE_MATH_ERROR`.
        const QUEUE_WAVE_MATH_ERROR = kfd_ec_mask(EC_QUEUE_WAVE_MATH_ERROR);
        /// `EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION`.
        const QUEUE_WAVE_ILLEGAL_INSTRUCTION = kfd_ec_mask(EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION);
        /// `EC_QUEUE_WAVE_MEMORY_VIOLATION`.
        const QUEUE_WAVE_MEMORY_VIOLATION = kfd_ec_mask(EC_QUEUE_WAVE_MEMORY_VIOLATION);
        /// `EC_QUEUE_WAVE_APERTURE_VIOLATION`.
        const QUEUE_WAVE_APERTURE_VIOLATION = kfd_ec_mask(EC_QUEUE_WAVE_APERTURE_VIOLATION);
        /// `EC_QUEUE_PACKET_DISPATCH_DIM_INVALID`.
        const QUEUE_PACKET_DISPATCH_DIM_INVALID = kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_DIM_INVALID);
        /// `EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID`.
        const QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID =
            kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID);
        /// `EC_QUEUE_PACKET_DISPATCH_CODE_INVALID`.
        const QUEUE_PACKET_DISPATCH_CODE_INVALID = kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_CODE_INVALID);
        /// `EC_QUEUE_PACKET_RESERVED`.
        const QUEUE_PACKET_RESERVED = kfd_ec_mask(EC_QUEUE_PACKET_RESERVED);
        /// `EC_QUEUE_PACKET_UNSUPPORTED`.
        const QUEUE_PACKET_UNSUPPORTED = kfd_ec_mask(EC_QUEUE_PACKET_UNSUPPORTED);
        /// `EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID`.
        const QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID =
            kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID);
        /// `EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID`.
        const QUEUE_PACKET_DISPATCH_REGISTER_INVALID =
            kfd_ec_mask(EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID);
        /// `EC_QUEUE_PACKET_VENDOR_UNSUPPORTED`.
        const QUEUE_PACKET_VENDOR_UNSUPPORTED = kfd_ec_mask(EC_QUEUE_PACKET_VENDOR_UNSUPPORTED);
        /// `EC_QUEUE_PREEMPTION_ERROR`.
        const QUEUE_PREEMPTION_ERROR = kfd_ec_mask(EC_QUEUE_PREEMPTION_ERROR);
        /// `EC_QUEUE_NEW`.
        const QUEUE_NEW = kfd_ec_mask(EC_QUEUE_NEW);
        /// `EC_DEVICE_QUEUE_DELETE`.
        const DEVICE_QUEUE_DELETE = kfd_ec_mask(EC_DEVICE_QUEUE_DELETE);
        /// `EC_DEVICE_MEMORY_VIOLATION`.
        const DEVICE_MEMORY_VIOLATION = kfd_ec_mask(EC_DEVICE_MEMORY_VIOLATION);
        /// `EC_DEVICE_RAS_ERROR`.
        const DEVICE_RAS_ERROR = kfd_ec_mask(EC_DEVICE_RAS_ERROR);
        /// `EC_DEVICE_FATAL_HALT`.
        const DEVICE_FATAL_HALT = kfd_ec_mask(EC_DEVICE_FATAL_HALT);
        /// `EC_DEVICE_NEW`.
        const DEVICE_NEW = kfd_ec_mask(EC_DEVICE_NEW);
        /// `EC_PROCESS_RUNTIME`.
        const PROCESS_RUNTIME = kfd_ec_mask(EC_PROCESS_RUNTIME);
        /// `EC_PROCESS_DEVICE_REMOVE`.
        const PROCESS_DEVICE_REMOVE = kfd_ec_mask(EC_PROCESS_DEVICE_REMOVE);
    }
}

bitflags! {
    /// SMI event subscription mask: bit `i - 1` for `KFD_SMI_EVENT_*` `i`
    /// (`KFD_SMI_EVENT_MASK_FROM_INDEX`), written to the SMI descriptor.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct SmiEventMask: u64 {
        /// VM fault.
        const VMFAULT = kfd_smi_event_mask_from_index(KFD_SMI_EVENT_VMFAULT);
        /// Thermal throttling.
        const THERMAL_THROTTLE = kfd_smi_event_mask_from_index(KFD_SMI_EVENT_THERMAL_THROTTLE);
        /// Before a GPU reset.
        const GPU_PRE_RESET = kfd_smi_event_mask_from_index(KFD_SMI_EVENT_GPU_PRE_RESET);
        /// After a GPU reset.
        const GPU_POST_RESET = kfd_smi_event_mask_from_index(KFD_SMI_EVENT_GPU_POST_RESET);
        /// Migration started.
        const MIGRATE_START = kfd_smi_event_mask_from_index(KFD_SMI_EVENT_MIGRATE_START);
        /// Migration ended.
        const MIGRATE_END = kfd_smi_event_mask_from_index(KFD_SMI_EVENT_MIGRATE_END);
        /// Page fault started.
        const PAGE_FAULT_START = kfd_smi_event_mask_from_index(KFD_SMI_EVENT_PAGE_FAULT_START);
        /// Page fault ended.
        const PAGE_FAULT_END = kfd_smi_event_mask_from_index(KFD_SMI_EVENT_PAGE_FAULT_END);
        /// Queues evicted.
        const QUEUE_EVICTION = kfd_smi_event_mask_from_index(KFD_SMI_EVENT_QUEUE_EVICTION);
        /// Queues restored.
        const QUEUE_RESTORE = kfd_smi_event_mask_from_index(KFD_SMI_EVENT_QUEUE_RESTORE);
        /// Range unmapped from a GPU.
        const UNMAP_FROM_GPU = kfd_smi_event_mask_from_index(KFD_SMI_EVENT_UNMAP_FROM_GPU);
        /// Events of all processes (privileged).
        const ALL_PROCESS = kfd_smi_event_mask_from_index(KFD_SMI_EVENT_ALL_PROCESS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_match_raw_constants() {
        assert_eq!(
            ExceptionMask::all().bits() & KFD_EC_MASK_DEVICE,
            KFD_EC_MASK_DEVICE
        );
        assert_eq!(
            ExceptionMask::all().bits(),
            KFD_EC_MASK_QUEUE | KFD_EC_MASK_DEVICE | KFD_EC_MASK_PROCESS
        );
        assert_eq!(AllocMemFlags::all().bits(), 0xff80_001f);
        assert_eq!(SvmFlags::all().bits(), 0xff);
        assert_eq!(SmiEventMask::ALL_PROCESS.bits(), 1 << 63);
    }
}
