//! The SMI events descriptor (`AMDKFD_IOC_SMI_EVENTS`, KFD 1.3+): a file
//! the kernel creates per request, from which the system management
//! interface events of one GPU (VM faults, thermal throttling, GPU
//! resets, queue evictions, ... as selected by writing an event mask to
//! it) are read as text records of `HSA_SMI_EVENT_MSG_SIZE` bytes.

use std::os::fd::OwnedFd;

use kfd_sys::kfd;
use kfd_sys::DeviceFile;

use crate::EventError;

/// Opens the SMI events file of the GPU `gpu_id` on the KFD descriptor
/// `file` (`hsaKmtOpenSMI`). The kernel refuses a gpu_id that is not one
/// of the process's devices (a CPU node's 0 among them).
pub fn open_smi(file: &DeviceFile, gpu_id: u32) -> Result<OwnedFd, EventError> {
    kfd_sys::memory::smi_events(file, gpu_id)
        .map_err(EventError::kernel(kfd::AMDKFD_IOC_SMI_EVENTS.info()))
}
