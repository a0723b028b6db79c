//! Safe forms of the queue requests whose arguments carry user pointers.
//!
//! `CREATE_QUEUE` and `UPDATE_QUEUE` hand the kernel addresses it records
//! for the GPU (ring, pointers, EOP buffer, save area); it reads the
//! pointer words with `copy_from_user` at most, never writes through them
//! during the call. `SET_CU_MASK` reads a borrowed array.
//! `GET_QUEUE_WAVE_STATE` is the one that writes user memory: the
//! control stack, into the queue's save area, at most the control-stack
//! size the queue was created with. So it takes the [`QueueSlot`] that
//! [`create_queue`] returned (which remembers that size) and the save
//! area as a [`Mapping`] at least that large.

use crate::kfd;
use crate::mapping::Mapping;
use crate::{DeviceFile, Errno};

/// A queue [`create_queue`] made: its id and the control-stack size the
/// kernel was given for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSlot {
    queue_id: u32,
    ctl_stack_size: u32,
}

impl QueueSlot {
    /// The kernel's queue id.
    pub fn queue_id(&self) -> u32 {
        self.queue_id
    }
}

/// `AMDKFD_IOC_CREATE_QUEUE` with `args` (the kernel fills in the queue
/// id and the doorbell offset).
pub fn create_queue(
    file: &DeviceFile,
    args: &mut kfd::kfd_ioctl_create_queue_args,
) -> Result<QueueSlot, Errno> {
    // SAFETY: the addresses in `args` are recorded for the GPU; the kernel
    // reads at most the pointer words through them and writes nothing
    // but `args` during the call (see the module docs).
    unsafe { file.ioctl(kfd::AMDKFD_IOC_CREATE_QUEUE, args) }?;
    Ok(QueueSlot {
        queue_id: args.queue_id,
        ctl_stack_size: args.ctl_stack_size,
    })
}

/// `AMDKFD_IOC_UPDATE_QUEUE` with `args` (a new ring, percentage and
/// priority).
pub fn update_queue(
    file: &DeviceFile,
    args: &mut kfd::kfd_ioctl_update_queue_args,
) -> Result<(), Errno> {
    // SAFETY: the ring address is recorded for the GPU, not accessed
    // during the call.
    unsafe { file.ioctl(kfd::AMDKFD_IOC_UPDATE_QUEUE, args) }.map(drop)
}

/// `AMDKFD_IOC_SET_CU_MASK` of queue `queue_id` to `mask` (32 CUs per
/// word; the kernel reads `mask.len()` words).
pub fn set_cu_mask(file: &DeviceFile, queue_id: u32, mask: &[u32]) -> Result<(), Errno> {
    let mut args = kfd::kfd_ioctl_set_cu_mask_args {
        queue_id,
        num_cu_mask: (mask.len() as u32).saturating_mul(32),
        cu_mask_ptr: mask.as_ptr() as u64,
    };
    // SAFETY: `cu_mask_ptr` points to `mask`, `num_cu_mask / 32` words
    // borrowed for the call; the kernel only reads them.
    unsafe { file.ioctl(kfd::AMDKFD_IOC_SET_CU_MASK, &mut args) }.map(drop)
}

/// What [`get_queue_wave_state`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WaveState {
    /// Bytes of control stack in use.
    pub ctl_stack_used_size: u32,
    /// Bytes of the save area in use.
    pub save_area_used_size: u32,
}

/// `AMDKFD_IOC_GET_QUEUE_WAVE_STATE` of the queue `slot`: the kernel
/// copies the control stack to the start of `save_area`. `EINVAL` when
/// the mapping is smaller than the control stack the queue was created
/// with or not writable, before any request.
pub fn get_queue_wave_state(
    file: &DeviceFile,
    slot: &QueueSlot,
    save_area: &Mapping,
) -> Result<WaveState, Errno> {
    let writable = save_area.prot().contains(crate::mman::Prot::WRITE);
    if !writable || save_area.len() < u64::from(slot.ctl_stack_size) {
        return Err(Errno::EINVAL);
    }
    let mut args = kfd::kfd_ioctl_get_queue_wave_state_args {
        ctl_stack_address: save_area.addr(),
        queue_id: slot.queue_id,
        ..Default::default()
    };
    // SAFETY: the kernel writes at most the queue's control-stack size
    // (`slot.ctl_stack_size`, given at creation) at `ctl_stack_address`,
    // the start of a writable mapping at least that large that is borrowed
    // for the call; Rust only ever reaches a mapping's memory through its
    // atomic accessors, so the kernel's writes invalidate no reference.
    unsafe { file.ioctl(kfd::AMDKFD_IOC_GET_QUEUE_WAVE_STATE, &mut args) }?;
    Ok(WaveState {
        ctl_stack_used_size: args.ctl_stack_used_size,
        save_area_used_size: args.save_area_used_size,
    })
}
