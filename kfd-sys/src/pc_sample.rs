//! Safe ROCm `AMDKFD_IOC_PC_SAMPLE` (PC sampling, KFD 1.16+).
//!
//! `sample_info_ptr` is followed by two operations (ROCm's
//! `kfd_pc_sampling.c`):
//!
//! - `QUERY_CAPABILITIES` writes `num_sample_info` entries when they fit,
//!   and, while a session exists, one entry whenever the address is not 0
//!   (whatever the count). So an empty slice goes as address 0.
//! - `CREATE` reads exactly one entry and may write one back.
//!
//! The other operations carry plain values. Nothing here maps errors or
//! checks versions.

use crate::kfd::{self, kfd_ioctl_pc_sample_args, kfd_pc_sample_info};
use crate::{DeviceFile, Errno};

/// Issues `AMDKFD_IOC_PC_SAMPLE`.
///
/// # Safety
///
/// `args.sample_info_ptr` is 0 or points at `args.num_sample_info`
/// (at least 1) entries, exclusively borrowed for the call.
unsafe fn pc_sample(file: &DeviceFile, args: &mut kfd_ioctl_pc_sample_args) -> Result<(), Errno> {
    // SAFETY: forwarded contract; `args` is the declared argument struct.
    unsafe { file.ioctl(kfd::AMDKFD_IOC_PC_SAMPLE, args) }.map(drop)
}

/// `KFD_IOCTL_PCS_OP_QUERY_CAPABILITIES` into `sample_info_ptr`,
/// announcing `num_sample_info` entries; returns the result and the
/// `num_sample_info` the kernel left.
///
/// # Safety
///
/// As [`pc_sample`]: the address is 0 or points at `num_sample_info`
/// entries, exclusively borrowed for the call.
unsafe fn query(
    file: &DeviceFile,
    gpu_id: u32,
    flags: u32,
    sample_info_ptr: u64,
    num_sample_info: u32,
) -> (Result<(), Errno>, u32) {
    let mut args = kfd_ioctl_pc_sample_args {
        sample_info_ptr,
        num_sample_info,
        op: kfd::rocm::KFD_IOCTL_PCS_OP_QUERY_CAPABILITIES,
        gpu_id,
        flags,
        ..Default::default()
    };
    // SAFETY: forwarded contract.
    let r = unsafe { pc_sample(file, &mut args) };
    (r, args.num_sample_info)
}

/// `KFD_IOCTL_PCS_OP_QUERY_CAPABILITIES`: fills `infos` with the
/// configurations `gpu_id` supports (`flags`: `KFD_IOCTL_PCS_QUERY_TYPE_*`).
///
/// Returns the call's result together with the `num_sample_info` the
/// kernel left, which is meaningful on failure too: with `ENOSPC` it is
/// the number of entries needed.
pub fn query_capabilities(
    file: &DeviceFile,
    gpu_id: u32,
    flags: u32,
    infos: &mut [kfd_pc_sample_info],
) -> (Result<(), Errno>, u32) {
    let Ok(n) = u32::try_from(infos.len()) else {
        return (Err(Errno::EOVERFLOW), 0);
    };
    let ptr = if infos.is_empty() {
        0
    } else {
        infos.as_mut_ptr() as u64
    };
    // SAFETY: the address is 0 for an empty slice, else `infos`,
    // exclusively borrowed, `n` >= 1 entries of the header's `#[repr(C)]`
    // layout; the kernel writes at most that many (one, or all when they
    // fit).
    unsafe { query(file, gpu_id, flags, ptr, n) }
}

/// `KFD_IOCTL_PCS_OP_QUERY_CAPABILITIES` without a buffer (address 0,
/// which the kernel never writes through) announcing `num_sample_info`
/// entries, as a caller passing a NULL buffer with a count does. Returns
/// as [`query_capabilities`].
pub fn query_capabilities_count(
    file: &DeviceFile,
    gpu_id: u32,
    flags: u32,
    num_sample_info: u32,
) -> (Result<(), Errno>, u32) {
    // SAFETY: no sample info address (0): the kernel writes nothing.
    unsafe { query(file, gpu_id, flags, 0, num_sample_info) }
}

/// `KFD_IOCTL_PCS_OP_CREATE`: creates a session on `gpu_id` with
/// configuration `info` (which the kernel may overwrite with the one in
/// use). Returns the trace id.
pub fn create(file: &DeviceFile, gpu_id: u32, info: &mut kfd_pc_sample_info) -> Result<u32, Errno> {
    let mut args = kfd_ioctl_pc_sample_args {
        sample_info_ptr: info as *mut kfd_pc_sample_info as u64,
        num_sample_info: 1,
        op: kfd::rocm::KFD_IOCTL_PCS_OP_CREATE,
        gpu_id,
        ..Default::default()
    };
    // SAFETY: the address is `info`, one entry, exclusively borrowed.
    unsafe { pc_sample(file, &mut args) }?;
    Ok(args.trace_id)
}

/// `KFD_IOCTL_PCS_OP_DESTROY`, `_START` or `_STOP` (`op`) of session
/// `trace_id` on `gpu_id`.
pub fn trace_op(file: &DeviceFile, gpu_id: u32, op: u32, trace_id: u32) -> Result<(), Errno> {
    let mut args = kfd_ioctl_pc_sample_args {
        op,
        gpu_id,
        trace_id,
        ..Default::default()
    };
    // SAFETY: no sample info address (0).
    unsafe { pc_sample(file, &mut args) }
}
