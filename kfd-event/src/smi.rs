//! The SMI events descriptor (`AMDKFD_IOC_SMI_EVENTS`, KFD 1.3+): a file
//! the kernel creates per request, from which the system management
//! interface events of one GPU (VM faults, thermal throttling, GPU
//! resets, queue evictions, ... as selected by writing an event mask to
//! it) are read as text records of `HSA_SMI_EVENT_MSG_SIZE` bytes.

use std::os::fd::{FromRawFd, OwnedFd};

use kfd_sys::kfd::{self, kfd_ioctl_smi_events_args};
use kfd_sys::DeviceFile;

use crate::EventError;

/// Opens the SMI events file of the GPU `gpu_id` on the KFD descriptor
/// `file` (`hsaKmtOpenSMI`). The kernel refuses a gpu_id that is not one
/// of the process's devices (a CPU node's 0 among them).
pub fn open_smi(file: &DeviceFile, gpu_id: u32) -> Result<OwnedFd, EventError> {
    let mut args = kfd_ioctl_smi_events_args {
        gpuid: gpu_id,
        anon_fd: 0,
    };
    file.ioctl_plain(kfd::AMDKFD_IOC_SMI_EVENTS, &mut args)
        .map_err(EventError::kernel(kfd::AMDKFD_IOC_SMI_EVENTS.info()))?;
    // SAFETY: on success the kernel installed `anon_fd` in this process
    // for the caller; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(args.anon_fd as i32) })
}
