//! A minimal fake KFD for kfd-perf's tests until kfd-sim models these
//! requests: GET_VERSION, GET_CLOCK_COUNTERS, and optionally ROCm's
//! RLC_SPM and PC_SAMPLE (off by default: ENOTTY, as upstream kernels).

#![allow(dead_code)]

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::{Arc, Mutex};

use kfd_sys::ioctl::ioc_nr;
use kfd_sys::kfd;
use kfd_sys::{DeviceFile, Driver, Errno};

pub const GPU: u32 = 0x1234;

#[derive(Debug, Default)]
pub struct State {
    pub version: (u32, u32),
    pub fail: HashMap<u8, Errno>,
    pub calls: Vec<u8>,
    pub clock: u64,
    pub spm: bool,
    pub spm_owner: bool,
    pub pc_sampling: bool,
    /// trace id -> running
    pub pcs: HashMap<u32, bool>,
    pub next_pcs: u32,
}

#[derive(Debug, Default)]
pub struct MockKfd {
    pub state: Mutex<State>,
}

impl MockKfd {
    pub fn new(minor: u32) -> Arc<MockKfd> {
        let m = MockKfd::default();
        m.state.lock().unwrap().version = (1, minor);
        Arc::new(m)
    }

    pub fn open(self: &Arc<Self>) -> Arc<DeviceFile> {
        Arc::new(DeviceFile::open_kfd(self.clone()).unwrap())
    }

    pub fn calls(&self) -> Vec<u8> {
        self.state.lock().unwrap().calls.clone()
    }
}

impl Driver for MockKfd {
    fn open_kfd(&self) -> Result<OwnedFd, Errno> {
        Ok(std::fs::File::open("/dev/null")
            .map_err(|_| Errno::ENOENT)?
            .into())
    }

    fn open_render_node(&self, _minor: u32) -> Result<OwnedFd, Errno> {
        Err(Errno::ENOENT)
    }

    unsafe fn ioctl(
        &self,
        _fd: std::os::fd::BorrowedFd<'_>,
        request: libc::c_ulong,
        arg: *mut libc::c_void,
    ) -> Result<i32, Errno> {
        let nr = ioc_nr(request as u32);
        let mut s = self.state.lock().unwrap();
        s.calls.push(nr);
        if let Some(e) = s.fail.get(&nr) {
            return Err(*e);
        }
        match nr {
            0x01 => {
                // SAFETY: GET_VERSION's argument.
                let a = unsafe { &mut *(arg as *mut kfd::kfd_ioctl_get_version_args) };
                a.major_version = s.version.0;
                a.minor_version = s.version.1;
                Ok(0)
            }
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
            0x85 if s.pc_sampling => unsafe { pc_sample(&mut s, arg as *mut _) },
            _ => Err(Errno::ENOTTY),
        }
    }

    fn root(&self) -> &Path {
        Path::new("/")
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
