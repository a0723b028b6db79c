//! A minimal fake KFD for the tests that kfd-sim cannot serve yet: it
//! answers GET_VERSION, RUNTIME_ENABLE and DBG_TRAP the way amdkfd does
//! for a debugged process, refuses the deprecated v1 requests with EPERM
//! (as current kernels do) and fails everything else with ENOTTY.
//!
//! Failures can be injected per request/operation.

#![allow(dead_code)]

use std::sync::Arc;

use kfd_sys::kfd::{
    self, kfd_dbg_device_info_entry, kfd_ioctl_dbg_trap_args, kfd_queue_snapshot_entry,
};
use kfd_sys::testing::{FakeKfd, Model};
use kfd_sys::Errno;

pub use kfd_sys::testing::ANY_OP;

/// The debug-specific part of the fake; GET_VERSION, the call log and
/// failure injection are `kfd_sys::testing::FakeKfd`'s.
#[derive(Debug, Default)]
pub struct State {
    pub runtime_caps: u32,
    pub runtime: Option<(u64, u32)>,
    pub debugger_attached: bool,
    pub queues: Vec<u32>,
    pub suspended: Vec<u32>,
    pub devices: Vec<u32>,
    pub watches: Vec<(u32, u32, u64)>,
    pub flags: u32,
    pub exceptions: u64,
    pub launch_mode: u32,
    /// `buf_size_in_bytes` of every v1 address-watch request seen.
    pub v1_watch_sizes: Vec<u32>,
}

pub type MockKfd = FakeKfd<State>;

/// A fake KFD `major.minor` with one GPU (0x1234) and core-dump support.
pub fn new(major: u32, minor: u32) -> Arc<MockKfd> {
    FakeKfd::new(
        major,
        minor,
        State {
            runtime_caps: kfd::rocm::KFD_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK,
            devices: vec![0x1234],
            ..Default::default()
        },
    )
}

impl Model for State {
    unsafe fn ioctl(
        &mut self,
        version: (u32, u32),
        nr: u8,
        arg: *mut libc::c_void,
    ) -> Result<i32, Errno> {
        let s = self;
        match nr {
            0x0F => {
                // SAFETY: DBG_ADDRESS_WATCH's argument.
                let a = unsafe { &*(arg as *const kfd::kfd_ioctl_dbg_address_watch_args) };
                s.v1_watch_sizes.push(a.buf_size_in_bytes);
                Err(Errno::EPERM)
            }
            0x0D..=0x10 => Err(Errno::EPERM),
            0x25 if version.1 >= 13 => {
                // SAFETY: RUNTIME_ENABLE's argument.
                let a = unsafe { &mut *(arg as *mut kfd::kfd_ioctl_runtime_enable_args) };
                if a.mode_mask & kfd::KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK != 0 {
                    if s.runtime.is_some() {
                        return Err(Errno::EBUSY);
                    }
                    s.runtime = Some((a.r_debug, a.mode_mask));
                    a.capabilities_mask = s.runtime_caps;
                } else {
                    s.runtime = None;
                }
                Ok(0)
            }
            // SAFETY: DBG_TRAP's argument, with pointers the library set up.
            0x26 if version.1 >= 13 => unsafe { dbg_trap(s, arg as *mut _) },
            _ => Err(Errno::ENOTTY),
        }
    }
}

/// # Safety
/// `args` points at a valid kfd_ioctl_dbg_trap_args whose pointers are valid.
unsafe fn dbg_trap(s: &mut State, args: *mut kfd_ioctl_dbg_trap_args) -> Result<i32, Errno> {
    // SAFETY: per the function contract.
    let a = unsafe { &mut *args };
    if a.pid != std::process::id() {
        return Err(Errno::ESRCH);
    }
    if a.op != kfd::KFD_IOC_DBG_TRAP_ENABLE && !s.debugger_attached {
        return Err(Errno::EINVAL);
    }
    // SAFETY: every union member read below matches `op` and is plain
    // integers; the pointers in it come from the library under test, which
    // sized them as the fields say.
    unsafe {
        match a.op {
            kfd::KFD_IOC_DBG_TRAP_ENABLE => {
                if s.debugger_attached {
                    return Err(Errno::EALREADY);
                }
                s.debugger_attached = true;
                s.exceptions = a.u.enable.exception_mask;
                let e = a.u.enable;
                if e.rinfo_size as usize >= std::mem::size_of::<kfd::kfd_runtime_info>() {
                    let info = &mut *(e.rinfo_ptr as *mut kfd::kfd_runtime_info);
                    let (r_debug, mode) = s.runtime.unwrap_or((0, 0));
                    info.r_debug = r_debug;
                    info.runtime_state = u32::from(s.runtime.is_some());
                    info.ttmp_setup = u32::from(mode & 2 != 0);
                }
                Ok(0)
            }
            kfd::KFD_IOC_DBG_TRAP_DISABLE => {
                s.debugger_attached = false;
                Ok(0)
            }
            kfd::KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT => {
                let e = a.u.send_runtime_event;
                if !s.devices.contains(&e.gpu_id) {
                    return Err(Errno::EINVAL);
                }
                Ok(0)
            }
            kfd::KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED => {
                s.exceptions = a.u.set_exceptions_enabled.exception_mask;
                Ok(0)
            }
            kfd::KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE => {
                let o = &mut a.u.launch_override;
                o.enable_mask = 0;
                o.support_request_mask &= 0x1ff;
                Ok(0)
            }
            kfd::KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE => {
                if a.u.launch_mode.launch_mode > 3 {
                    return Err(Errno::EINVAL);
                }
                s.launch_mode = a.u.launch_mode.launch_mode;
                Ok(0)
            }
            kfd::KFD_IOC_DBG_TRAP_SUSPEND_QUEUES | kfd::KFD_IOC_DBG_TRAP_RESUME_QUEUES => {
                let suspend = a.op == kfd::KFD_IOC_DBG_TRAP_SUSPEND_QUEUES;
                let (ptr, n) = if suspend {
                    (
                        a.u.suspend_queues.queue_array_ptr,
                        a.u.suspend_queues.num_queues,
                    )
                } else {
                    (
                        a.u.resume_queues.queue_array_ptr,
                        a.u.resume_queues.num_queues,
                    )
                };
                let ids = std::slice::from_raw_parts_mut(ptr as *mut u32, n as usize);
                let mut done = 0;
                for id in ids.iter_mut() {
                    if !s.queues.contains(id) {
                        *id |= kfd::KFD_DBG_QUEUE_INVALID_MASK;
                    } else if suspend {
                        s.suspended.push(*id);
                        done += 1;
                    } else {
                        s.suspended.retain(|q| q != id);
                        done += 1;
                    }
                }
                Ok(done)
            }
            kfd::KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH => {
                let w = &mut a.u.set_node_address_watch;
                if !s.devices.contains(&w.gpu_id) || w.mode > 3 {
                    return Err(Errno::EINVAL);
                }
                let id = s.watches.len() as u32;
                s.watches.push((w.gpu_id, id, w.address));
                w.id = id;
                Ok(0)
            }
            kfd::KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH => {
                let c = a.u.clear_node_address_watch;
                let before = s.watches.len();
                s.watches
                    .retain(|(g, i, _)| !(*g == c.gpu_id && *i == c.id));
                if s.watches.len() == before {
                    return Err(Errno::EINVAL);
                }
                Ok(0)
            }
            kfd::KFD_IOC_DBG_TRAP_SET_FLAGS => {
                let f = &mut a.u.set_flags;
                std::mem::swap(&mut s.flags, &mut f.flags);
                Ok(0)
            }
            kfd::KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT => {
                let q = &mut a.u.query_debug_event;
                q.exception_mask = 0;
                q.gpu_id = kfd::rocm::KFD_INVALID_GPUID;
                q.queue_id = kfd::rocm::KFD_INVALID_QUEUEID;
                Ok(0)
            }
            kfd::KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO => {
                let q = &mut a.u.query_exception_info;
                let data = [0xabu8; 16];
                let n = (q.info_size as usize).min(data.len());
                std::ptr::copy_nonoverlapping(data.as_ptr(), q.info_ptr as *mut u8, n);
                q.info_size = data.len() as u32;
                Ok(0)
            }
            kfd::KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT => {
                let q = &mut a.u.queue_snapshot;
                let n = (q.num_queues as usize).min(s.queues.len());
                let out: &mut [kfd_queue_snapshot_entry] = if n == 0 {
                    &mut []
                } else {
                    std::slice::from_raw_parts_mut(
                        q.snapshot_buf_ptr as *mut kfd_queue_snapshot_entry,
                        n,
                    )
                };
                for (e, id) in out.iter_mut().zip(&s.queues) {
                    *e = kfd_queue_snapshot_entry {
                        queue_id: *id,
                        gpu_id: s.devices[0],
                        ..Default::default()
                    };
                }
                q.num_queues = s.queues.len() as u32;
                q.entry_size = std::mem::size_of::<kfd_queue_snapshot_entry>() as u32;
                Ok(0)
            }
            kfd::KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT => {
                let q = &mut a.u.device_snapshot;
                let n = (q.num_devices as usize).min(s.devices.len());
                let out: &mut [kfd_dbg_device_info_entry] = if n == 0 {
                    &mut []
                } else {
                    std::slice::from_raw_parts_mut(
                        q.snapshot_buf_ptr as *mut kfd_dbg_device_info_entry,
                        n,
                    )
                };
                for (e, id) in out.iter_mut().zip(&s.devices) {
                    *e = kfd_dbg_device_info_entry {
                        gpu_id: *id,
                        gfx_target_version: 90010,
                        ..Default::default()
                    };
                }
                q.num_devices = s.devices.len() as u32;
                q.entry_size = std::mem::size_of::<kfd_dbg_device_info_entry>() as u32;
                Ok(0)
            }
            _ => Err(Errno::EINVAL),
        }
    }
}
