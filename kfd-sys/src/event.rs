//! The safe form of `AMDKFD_IOC_WAIT_EVENTS` and typed access to the
//! union of its elements.

use crate::kfd::{
    self, kfd_event_data, kfd_event_data_union, kfd_hsa_hw_exception_data,
    kfd_hsa_memory_exception_data, kfd_hsa_signal_event_data,
};
use crate::{DeviceFile, Errno};

/// The members of `kfd_event_data`'s union are structs of plain integers
/// that start at offset 0, so every member may be read whatever was
/// written last: these read and write them without `unsafe`.
impl kfd_event_data {
    /// An element waiting for `event_id`, its union zeroed.
    pub fn for_event(event_id: u32) -> kfd_event_data {
        kfd_event_data {
            event_id,
            ..Default::default()
        }
    }

    /// An element waiting for `event_id` that the signal `age` was seen
    /// at (the event-age form of the wait).
    pub fn for_event_age(event_id: u32, age: u64) -> kfd_event_data {
        kfd_event_data {
            u: kfd_event_data_union {
                signal_event_data: kfd_hsa_signal_event_data {
                    last_event_age: age,
                },
            },
            ..kfd_event_data::for_event(event_id)
        }
    }

    /// The union as a signal event's data: the event age.
    pub fn last_event_age(&self) -> u64 {
        // SAFETY: a plain-integer member at offset 0 (see above).
        unsafe { self.u.signal_event_data.last_event_age }
    }

    /// The union as a memory exception's data.
    pub fn memory_exception(&self) -> kfd_hsa_memory_exception_data {
        // SAFETY: a plain-integer member at offset 0 (see above).
        unsafe { self.u.memory_exception_data }
    }

    /// The union as a hardware exception's data.
    pub fn hw_exception(&self) -> kfd_hsa_hw_exception_data {
        // SAFETY: a plain-integer member at offset 0 (see above).
        unsafe { self.u.hw_exception_data }
    }
}

/// `AMDKFD_IOC_WAIT_EVENTS` on the elements of `events` (the kernel reads
/// and writes each): every one (`all`) or any, for `timeout_ms`
/// (`0xffffffff`: forever). Returns the kernel's `KFD_IOC_WAIT_RESULT_*`.
pub fn wait_events(
    file: &DeviceFile,
    events: &mut [kfd_event_data],
    all: bool,
    timeout_ms: u32,
) -> Result<u32, Errno> {
    let mut args = kfd::kfd_ioctl_wait_events_args {
        events_ptr: events.as_mut_ptr() as u64,
        num_events: events.len() as u32,
        wait_for_all: u32::from(all),
        timeout: timeout_ms,
        wait_result: 0,
    };
    // SAFETY: `events_ptr` points to `num_events` initialised elements
    // borrowed mutably for the call; the kernel reads and writes exactly
    // those.
    unsafe { file.ioctl(kfd::AMDKFD_IOC_WAIT_EVENTS, &mut args) }?;
    Ok(args.wait_result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_members_read_what_was_written() {
        let e = kfd_event_data::for_event_age(7, 0x1234_5678_9abc);
        assert_eq!(e.event_id, 7);
        assert_eq!(e.last_event_age(), 0x1234_5678_9abc);
        // The memory-exception member overlays the same first bytes.
        assert_eq!(e.memory_exception().failure.NotPresent, 0x5678_9abc);
        assert_eq!(kfd_event_data::for_event(3).hw_exception().reset_type, 0);
    }
}
