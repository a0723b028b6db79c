//! A minimal fake KFD for kfd-perf's tests until kfd-sim models these
//! requests: GET_VERSION, GET_CLOCK_COUNTERS, and optionally ROCm's
//! RLC_SPM and PC_SAMPLE (off by default: ENOTTY, as upstream kernels).

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::Arc;

use kfd_sys::kfd;
use kfd_sys::testing::{FakeKfd, Model};
use kfd_sys::Errno;

pub use kfd_sys::testing::ANY_OP;

pub const GPU: u32 = 0x1234;

/// The perf-specific part of the fake; GET_VERSION, the call log and
/// failure injection are `kfd_sys::testing::FakeKfd`'s.
#[derive(Debug, Default)]
pub struct State {
    pub clock: u64,
    pub spm: bool,
    pub spm_owner: bool,
    pub pc_sampling: bool,
    /// trace id -> running
    pub pcs: HashMap<u32, bool>,
    pub next_pcs: u32,
}

pub type MockKfd = FakeKfd<State>;

/// A fake KFD `1.minor`.
pub fn new(minor: u32) -> Arc<MockKfd> {
    FakeKfd::new(1, minor, State::default())
}

impl Model for State {
    unsafe fn ioctl(
        &mut self,
        _version: (u32, u32),
        nr: u8,
        arg: *mut libc::c_void,
    ) -> Result<i32, Errno> {
        let s = self;
        match nr {
            0x05 => {
                // SAFETY: GET_CLOCK_COUNTERS' argument.
                let a = unsafe { &mut *(arg as *mut kfd::kfd_ioctl_get_clock_counters_args) };
                if a.gpu_id != 0 && a.gpu_id != GPU {
                    return Err(Errno::EINVAL);
                }
                s.clock += 1000;
                a.gpu_clock_counter = if a.gpu_id == 0 { 0 } else { s.clock / 10 };
                a.cpu_clock_counter = s.clock;
                a.system_clock_counter = s.clock + 7;
                a.system_clock_freq = 1_000_000_000;
                Ok(0)
            }
            0x84 if s.spm => {
                // SAFETY: RLC_SPM's argument.
                let a = unsafe { &mut *(arg as *mut kfd::kfd_ioctl_spm_args) };
                if a.gpu_id != GPU {
                    return Err(Errno::EINVAL);
                }
                match a.op {
                    kfd::rocm::KFD_IOCTL_SPM_OP_ACQUIRE if s.spm_owner => Err(Errno::EBUSY),
                    kfd::rocm::KFD_IOCTL_SPM_OP_ACQUIRE => {
                        s.spm_owner = true;
                        Ok(0)
                    }
                    kfd::rocm::KFD_IOCTL_SPM_OP_RELEASE => {
                        s.spm_owner = false;
                        Ok(0)
                    }
                    kfd::rocm::KFD_IOCTL_SPM_OP_SET_DEST_BUF if s.spm_owner => {
                        a.bytes_copied = 64;
                        a.has_data_loss = 1;
                        a.timeout = a.timeout.saturating_sub(1);
                        Ok(0)
                    }
                    _ => Err(Errno::EINVAL),
                }
            }
            // SAFETY: PC_SAMPLE's argument, pointers set by the library.
            0x85 if s.pc_sampling => unsafe { pc_sample(s, arg as *mut _) },
            _ => Err(Errno::ENOTTY),
        }
    }
}

/// # Safety
/// `args` is a valid kfd_ioctl_pc_sample_args with valid pointers.
unsafe fn pc_sample(s: &mut State, args: *mut kfd::kfd_ioctl_pc_sample_args) -> Result<i32, Errno> {
    // SAFETY: per the contract.
    let a = unsafe { &mut *args };
    if a.gpu_id != GPU {
        return Err(Errno::EINVAL);
    }
    let caps = [
        kfd::kfd_pc_sample_info {
            interval_min: 1,
            interval_max: 1 << 20,
            flags: kfd::rocm::KFD_IOCTL_PCS_FLAG_POWER_OF_2,
            method: kfd::rocm::KFD_IOCTL_PCS_METHOD_HOSTTRAP,
            r#type: kfd::rocm::KFD_IOCTL_PCS_TYPE_TIME_US,
            ..Default::default()
        },
        kfd::kfd_pc_sample_info {
            interval_min: 256,
            interval_max: 1 << 24,
            method: kfd::rocm::KFD_IOCTL_PCS_METHOD_STOCHASTIC,
            r#type: kfd::rocm::KFD_IOCTL_PCS_TYPE_CLOCK_CYCLES,
            ..Default::default()
        },
    ];
    match a.op {
        kfd::rocm::KFD_IOCTL_PCS_OP_QUERY_CAPABILITIES => {
            let have = a.num_sample_info as usize;
            a.num_sample_info = caps.len() as u32;
            if have < caps.len() {
                return Err(Errno::ENOSPC);
            }
            // SAFETY: the library passed room for `have` entries.
            let out = unsafe {
                std::slice::from_raw_parts_mut(
                    a.sample_info_ptr as *mut kfd::kfd_pc_sample_info,
                    have,
                )
            };
            out[..caps.len()].copy_from_slice(&caps);
            Ok(0)
        }
        kfd::rocm::KFD_IOCTL_PCS_OP_CREATE => {
            // SAFETY: one entry.
            let info = unsafe { &*(a.sample_info_ptr as *const kfd::kfd_pc_sample_info) };
            if info.interval == 0 {
                return Err(Errno::EINVAL);
            }
            if !s.pcs.is_empty() {
                return Err(Errno::EBUSY);
            }
            s.next_pcs += 1;
            s.pcs.insert(s.next_pcs, false);
            a.trace_id = s.next_pcs;
            Ok(0)
        }
        kfd::rocm::KFD_IOCTL_PCS_OP_DESTROY => {
            s.pcs.remove(&a.trace_id).map(drop).ok_or(Errno::EINVAL)?;
            Ok(0)
        }
        kfd::rocm::KFD_IOCTL_PCS_OP_START | kfd::rocm::KFD_IOCTL_PCS_OP_STOP => {
            let start = a.op == kfd::rocm::KFD_IOCTL_PCS_OP_START;
            let running = s.pcs.get_mut(&a.trace_id).ok_or(Errno::EINVAL)?;
            if *running == start {
                return Err(Errno::EALREADY);
            }
            *running = start;
            Ok(0)
        }
        _ => Err(Errno::EINVAL),
    }
}
