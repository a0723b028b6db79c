//! Safe `AMDKFD_IOC_DBG_TRAP` (KFD 1.13+) and the older debugger requests.
//!
//! Several debug-trap operations carry user pointers the kernel follows
//! (a runtime-info record, a queue-id array, an exception-info buffer,
//! snapshot arrays). Here every operation is one variant of [`Request`],
//! which holds Rust buffers (`&mut [T]`, `&mut T`, `&[u8]`) instead of
//! addresses; [`issue`] builds `kfd_ioctl_dbg_trap_args` from it, and is the
//! one place that argues why the addresses and sizes the kernel is told fit
//! the buffers. The per-operation functions ([`enable`],
//! [`get_queue_snapshot`], ...) are thin typed forms of [`issue`].
//!
//! Nothing here checks versions, contexts or nodes, and failures come back
//! as the kernel's [`Errno`]: that is the business of the crates above.
//!
//! What the kernel does with each pointer (amdkfd `kfd_chardev.c`,
//! `kfd_debug.c`, `kfd_process_queue_manager.c`):
//!
//! | operation | pointer | kernel access |
//! |---|---|---|
//! | `ENABLE` | `rinfo_ptr` | writes `min(rinfo_size, sizeof(kfd_runtime_info))` bytes; sets `rinfo_size` to its own size |
//! | `SUSPEND_QUEUES`, `RESUME_QUEUES` | `queue_array_ptr` | reads, then writes back, `num_queues` `u32`s |
//! | `QUERY_EXCEPTION_INFO` | `info_ptr` | writes `min(info_size, size it has)` bytes; sets `info_size` to the size it has |
//! | `GET_QUEUE_SNAPSHOT`, `GET_DEVICE_SNAPSHOT` | `snapshot_buf_ptr` | writes at most `num_*` entries, each `min(entry_size, its entry size)` bytes at a stride of `entry_size`; sets `num_*` to the count it has and `entry_size` to its entry size |
//! | deprecated `DBG_WAVE_CONTROL`, `DBG_ADDRESS_WATCH` | `content_ptr` | reads `buf_size_in_bytes - 16` bytes |
//!
//! Every other operation carries plain values only.

use std::mem::size_of;

use crate::kfd::{
    self, kfd_dbg_device_info_entry, kfd_ioctl_dbg_trap_args, kfd_ioctl_dbg_trap_args_union,
    kfd_queue_snapshot_entry, kfd_runtime_info,
};
use crate::{DeviceFile, Errno};

/// One `AMDKFD_IOC_DBG_TRAP` operation with its arguments.
///
/// Fields marked "(out)" are overwritten by [`issue`] with what the kernel
/// answered; their value going in does not matter.
#[derive(Debug)]
pub enum Request<'a> {
    /// `KFD_IOC_DBG_TRAP_ENABLE`: attach, report `exception_mask`, copy
    /// the runtime info into `runtime_info`.
    Enable {
        /// Exceptions to report to the debugger.
        exception_mask: u64,
        /// Receives the kernel's `kfd_runtime_info`.
        runtime_info: &'a mut kfd_runtime_info,
        /// Descriptor the kernel notifies the debugger through.
        dbg_fd: u32,
        /// (out) The size of the kernel's runtime info record.
        runtime_info_size: u32,
    },
    /// `KFD_IOC_DBG_TRAP_DISABLE`: detach.
    Disable {
        /// Descriptor given at enable (the C library passes its KFD
        /// descriptor).
        dbg_fd: u32,
    },
    /// `KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT`.
    SendRuntimeEvent(kfd::kfd_ioctl_dbg_trap_send_runtime_event_args),
    /// `KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED`.
    SetExceptionsEnabled(kfd::kfd_ioctl_dbg_trap_set_exceptions_enabled_args),
    /// `KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE` (answered in place).
    SetWaveLaunchOverride(kfd::kfd_ioctl_dbg_trap_set_wave_launch_override_args),
    /// `KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE`.
    SetWaveLaunchMode(kfd::kfd_ioctl_dbg_trap_set_wave_launch_mode_args),
    /// `KFD_IOC_DBG_TRAP_SUSPEND_QUEUES`: the kernel ORs error bits into
    /// `queue_ids` and returns how many it suspended.
    SuspendQueues {
        /// Exceptions to clear on the queues.
        exception_mask: u64,
        /// Grace period in units of 1K GPU clocks.
        grace_period: u32,
        /// Kernel queue ids (in/out).
        queue_ids: &'a mut [u32],
    },
    /// `KFD_IOC_DBG_TRAP_RESUME_QUEUES`: like [`Request::SuspendQueues`].
    ResumeQueues {
        /// Kernel queue ids (in/out).
        queue_ids: &'a mut [u32],
    },
    /// `KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH` (watch id answered in place).
    SetNodeAddressWatch(kfd::kfd_ioctl_dbg_trap_set_node_address_watch_args),
    /// `KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH`.
    ClearNodeAddressWatch(kfd::kfd_ioctl_dbg_trap_clear_node_address_watch_args),
    /// `KFD_IOC_DBG_TRAP_SET_FLAGS` (previous flags answered in place).
    SetFlags(kfd::kfd_ioctl_dbg_trap_set_flags_args),
    /// `KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT` (answered in place).
    QueryDebugEvent(kfd::kfd_ioctl_dbg_trap_query_debug_event_args),
    /// `KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO`: copies a prefix of the
    /// exception's info into `info`.
    QueryExceptionInfo {
        /// gpu_id or queue id, depending on the code.
        source_id: u32,
        /// `EC_*`.
        exception_code: u32,
        /// Clear the exception.
        clear_exception: bool,
        /// Receives the info.
        info: &'a mut [u8],
        /// (out) The size of the info the kernel has.
        info_size: u32,
    },
    /// `KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT`.
    GetQueueSnapshot {
        /// Exceptions to clear on each queue.
        exception_mask: u64,
        /// Receives up to `entries.len()` entries (an empty slice asks
        /// for the count only).
        entries: &'a mut [kfd_queue_snapshot_entry],
        /// (out) How many queues exist.
        count: u32,
        /// (out) The kernel's entry size.
        entry_size: u32,
    },
    /// `KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT`. The kernel refuses an empty
    /// buffer (`EINVAL`).
    GetDeviceSnapshot {
        /// Exceptions to clear on each device.
        exception_mask: u64,
        /// Receives up to `entries.len()` entries.
        entries: &'a mut [kfd_dbg_device_info_entry],
        /// (out) How many devices exist.
        count: u32,
        /// (out) The kernel's entry size.
        entry_size: u32,
    },
}

/// The `u32` count the kernel is told for a buffer of `len` elements, or
/// `EOVERFLOW` when the count field cannot describe it.
fn count_of(len: usize) -> Result<u32, Errno> {
    u32::try_from(len).map_err(|_| Errno::EOVERFLOW)
}

/// The address of a buffer as the kernel gets it: 0 for an empty one, so
/// that no operation is handed a dangling address it might follow.
fn addr_of<T>(buf: &mut [T]) -> u64 {
    if buf.is_empty() {
        0
    } else {
        buf.as_mut_ptr() as u64
    }
}

impl Request<'_> {
    /// The `KFD_IOC_DBG_TRAP_*` operation number.
    pub fn op(&self) -> u32 {
        match self {
            Request::Enable { .. } => kfd::KFD_IOC_DBG_TRAP_ENABLE,
            Request::Disable { .. } => kfd::KFD_IOC_DBG_TRAP_DISABLE,
            Request::SendRuntimeEvent(_) => kfd::KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT,
            Request::SetExceptionsEnabled(_) => kfd::KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED,
            Request::SetWaveLaunchOverride(_) => kfd::KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE,
            Request::SetWaveLaunchMode(_) => kfd::KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE,
            Request::SuspendQueues { .. } => kfd::KFD_IOC_DBG_TRAP_SUSPEND_QUEUES,
            Request::ResumeQueues { .. } => kfd::KFD_IOC_DBG_TRAP_RESUME_QUEUES,
            Request::SetNodeAddressWatch(_) => kfd::KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH,
            Request::ClearNodeAddressWatch(_) => kfd::KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH,
            Request::SetFlags(_) => kfd::KFD_IOC_DBG_TRAP_SET_FLAGS,
            Request::QueryDebugEvent(_) => kfd::KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT,
            Request::QueryExceptionInfo { .. } => kfd::KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO,
            Request::GetQueueSnapshot { .. } => kfd::KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT,
            Request::GetDeviceSnapshot { .. } => kfd::KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT,
        }
    }

    /// The C name of the operation, e.g. `DBG_TRAP_SUSPEND_QUEUES`.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Enable { .. } => "DBG_TRAP_ENABLE",
            Request::Disable { .. } => "DBG_TRAP_DISABLE",
            Request::SendRuntimeEvent(_) => "DBG_TRAP_SEND_RUNTIME_EVENT",
            Request::SetExceptionsEnabled(_) => "DBG_TRAP_SET_EXCEPTIONS_ENABLED",
            Request::SetWaveLaunchOverride(_) => "DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE",
            Request::SetWaveLaunchMode(_) => "DBG_TRAP_SET_WAVE_LAUNCH_MODE",
            Request::SuspendQueues { .. } => "DBG_TRAP_SUSPEND_QUEUES",
            Request::ResumeQueues { .. } => "DBG_TRAP_RESUME_QUEUES",
            Request::SetNodeAddressWatch(_) => "DBG_TRAP_SET_NODE_ADDRESS_WATCH",
            Request::ClearNodeAddressWatch(_) => "DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH",
            Request::SetFlags(_) => "DBG_TRAP_SET_FLAGS",
            Request::QueryDebugEvent(_) => "DBG_TRAP_QUERY_DEBUG_EVENT",
            Request::QueryExceptionInfo { .. } => "DBG_TRAP_QUERY_EXCEPTION_INFO",
            Request::GetQueueSnapshot { .. } => "DBG_TRAP_GET_QUEUE_SNAPSHOT",
            Request::GetDeviceSnapshot { .. } => "DBG_TRAP_GET_DEVICE_SNAPSHOT",
        }
    }

    /// For suspend/resume, the number of queue ids (the most the kernel
    /// may return); `None` for every other operation.
    pub fn queue_count(&self) -> Option<usize> {
        match self {
            Request::SuspendQueues { queue_ids, .. } | Request::ResumeQueues { queue_ids } => {
                Some(queue_ids.len())
            }
            _ => None,
        }
    }

    /// The union member for this operation, with every address pointing
    /// into a buffer of `self` and every size/count describing exactly
    /// that buffer (see the SAFETY argument in [`issue`]).
    fn build_union(&mut self) -> Result<kfd_ioctl_dbg_trap_args_union, Errno> {
        Ok(match self {
            Request::Enable {
                exception_mask,
                runtime_info,
                dbg_fd,
                ..
            } => kfd_ioctl_dbg_trap_args_union {
                enable: kfd::kfd_ioctl_dbg_trap_enable_args {
                    exception_mask: *exception_mask,
                    rinfo_ptr: &mut **runtime_info as *mut kfd_runtime_info as u64,
                    rinfo_size: size_of::<kfd_runtime_info>() as u32,
                    dbg_fd: *dbg_fd,
                },
            },
            Request::Disable { dbg_fd } => kfd_ioctl_dbg_trap_args_union {
                enable: kfd::kfd_ioctl_dbg_trap_enable_args {
                    dbg_fd: *dbg_fd,
                    ..Default::default()
                },
            },
            Request::SendRuntimeEvent(a) => kfd_ioctl_dbg_trap_args_union {
                send_runtime_event: *a,
            },
            Request::SetExceptionsEnabled(a) => kfd_ioctl_dbg_trap_args_union {
                set_exceptions_enabled: *a,
            },
            Request::SetWaveLaunchOverride(a) => kfd_ioctl_dbg_trap_args_union {
                launch_override: *a,
            },
            Request::SetWaveLaunchMode(a) => kfd_ioctl_dbg_trap_args_union { launch_mode: *a },
            Request::SuspendQueues {
                exception_mask,
                grace_period,
                queue_ids,
            } => kfd_ioctl_dbg_trap_args_union {
                suspend_queues: kfd::kfd_ioctl_dbg_trap_suspend_queues_args {
                    exception_mask: *exception_mask,
                    num_queues: count_of(queue_ids.len())?,
                    queue_array_ptr: addr_of(queue_ids),
                    grace_period: *grace_period,
                },
            },
            Request::ResumeQueues { queue_ids } => kfd_ioctl_dbg_trap_args_union {
                resume_queues: kfd::kfd_ioctl_dbg_trap_resume_queues_args {
                    num_queues: count_of(queue_ids.len())?,
                    queue_array_ptr: addr_of(queue_ids),
                    pad: 0,
                },
            },
            Request::SetNodeAddressWatch(a) => kfd_ioctl_dbg_trap_args_union {
                set_node_address_watch: *a,
            },
            Request::ClearNodeAddressWatch(a) => kfd_ioctl_dbg_trap_args_union {
                clear_node_address_watch: *a,
            },
            Request::SetFlags(a) => kfd_ioctl_dbg_trap_args_union { set_flags: *a },
            Request::QueryDebugEvent(a) => kfd_ioctl_dbg_trap_args_union {
                query_debug_event: *a,
            },
            Request::QueryExceptionInfo {
                source_id,
                exception_code,
                clear_exception,
                info,
                ..
            } => kfd_ioctl_dbg_trap_args_union {
                query_exception_info: kfd::kfd_ioctl_dbg_trap_query_exception_info_args {
                    info_size: count_of(info.len())?,
                    info_ptr: addr_of(info),
                    source_id: *source_id,
                    exception_code: *exception_code,
                    clear_exception: u32::from(*clear_exception),
                },
            },
            Request::GetQueueSnapshot {
                exception_mask,
                entries,
                ..
            } => kfd_ioctl_dbg_trap_args_union {
                queue_snapshot: kfd::kfd_ioctl_dbg_trap_queue_snapshot_args {
                    exception_mask: *exception_mask,
                    num_queues: count_of(entries.len())?,
                    snapshot_buf_ptr: addr_of(entries),
                    entry_size: size_of::<kfd_queue_snapshot_entry>() as u32,
                },
            },
            Request::GetDeviceSnapshot {
                exception_mask,
                entries,
                ..
            } => kfd_ioctl_dbg_trap_args_union {
                device_snapshot: kfd::kfd_ioctl_dbg_trap_device_snapshot_args {
                    exception_mask: *exception_mask,
                    num_devices: count_of(entries.len())?,
                    snapshot_buf_ptr: addr_of(entries),
                    entry_size: size_of::<kfd_dbg_device_info_entry>() as u32,
                },
            },
        })
    }

    /// Copies the kernel's answer from `u` into the "(out)" fields and the
    /// in-place argument structs of `self`.
    fn take_reply(&mut self, u: &kfd_ioctl_dbg_trap_args_union) {
        // Each union read below is of the member `build_union` wrote for this
        // variant, and every member is made of plain integers, so whatever
        // bits the kernel left in it are a valid value.
        match self {
            Request::Enable {
                runtime_info_size, ..
            } => {
                // SAFETY: see above (ENABLE uses `enable`).
                *runtime_info_size = unsafe { u.enable }.rinfo_size;
            }
            // SAFETY: see above.
            Request::SetWaveLaunchOverride(a) => *a = unsafe { u.launch_override },
            // SAFETY: see above.
            Request::SetNodeAddressWatch(a) => *a = unsafe { u.set_node_address_watch },
            // SAFETY: see above.
            Request::SetFlags(a) => *a = unsafe { u.set_flags },
            // SAFETY: see above.
            Request::QueryDebugEvent(a) => *a = unsafe { u.query_debug_event },
            Request::QueryExceptionInfo { info_size, .. } => {
                // SAFETY: see above.
                *info_size = unsafe { u.query_exception_info }.info_size;
            }
            Request::GetQueueSnapshot {
                count, entry_size, ..
            } => {
                // SAFETY: see above.
                let q = unsafe { u.queue_snapshot };
                (*count, *entry_size) = (q.num_queues, q.entry_size);
            }
            Request::GetDeviceSnapshot {
                count, entry_size, ..
            } => {
                // SAFETY: see above.
                let d = unsafe { u.device_snapshot };
                (*count, *entry_size) = (d.num_devices, d.entry_size);
            }
            _ => {}
        }
    }
}

/// Issues `AMDKFD_IOC_DBG_TRAP` with `request` on behalf of process `pid`
/// and returns what the kernel returned (the number of queues handled for
/// suspend/resume, 0 otherwise). The answer is written into `request`.
///
/// A buffer longer than its `u32` count field can describe fails with
/// `EOVERFLOW` before reaching the kernel.
pub fn issue(file: &DeviceFile, pid: u32, request: &mut Request<'_>) -> Result<i32, Errno> {
    let mut args = kfd_ioctl_dbg_trap_args {
        pid,
        op: request.op(),
        u: request.build_union()?,
    };
    // SAFETY: `args` is the struct AMDKFD_IOC_DBG_TRAP is declared with and
    // `op` selects the member `build_union` filled in. The only addresses in
    // it point into buffers that `request` borrows exclusively (`&mut`)
    // for this whole call, and the size or count next to each is taken
    // from that same buffer:
    // - ENABLE: `rinfo_ptr` = the `&mut kfd_runtime_info`, `rinfo_size` =
    //   its size; the kernel writes at most `rinfo_size` bytes.
    // - SUSPEND/RESUME_QUEUES: `queue_array_ptr` = `queue_ids`,
    //   `num_queues` = its length; the kernel reads and writes that many
    //   u32s.
    // - QUERY_EXCEPTION_INFO: `info_ptr` = `info`, `info_size` = its length
    //   in bytes; the kernel writes at most `info_size` bytes.
    // - GET_QUEUE/DEVICE_SNAPSHOT: `snapshot_buf_ptr` = `entries`, count =
    //   its length, `entry_size` = the Rust entry size (`#[repr(C)]`, the
    //   header's layout); the kernel writes at most count entries of at
    //   most `entry_size` bytes at a stride of `entry_size`, i.e. inside
    //   the slice.
    // Empty buffers go as address 0 with a count of 0, so nothing is
    // written through them. Every other member holds plain values, and
    // the element types are plain integers, valid for any bits written.
    let r = unsafe { file.ioctl(kfd::AMDKFD_IOC_DBG_TRAP, &mut args) }?;
    request.take_reply(&args.u);
    Ok(r)
}

/// `KFD_IOC_DBG_TRAP_ENABLE`: attaches the debugger to `pid`, reporting
/// `exception_mask` through `dbg_fd`, and copies the runtime info into
/// `runtime_info`. Returns the size of the kernel's runtime info record.
pub fn enable(
    file: &DeviceFile,
    pid: u32,
    exception_mask: u64,
    dbg_fd: u32,
    runtime_info: &mut kfd_runtime_info,
) -> Result<u32, Errno> {
    let mut r = Request::Enable {
        exception_mask,
        runtime_info,
        dbg_fd,
        runtime_info_size: 0,
    };
    issue(file, pid, &mut r)?;
    match r {
        Request::Enable {
            runtime_info_size, ..
        } => Ok(runtime_info_size),
        _ => unreachable!("the variant does not change"),
    }
}

/// `KFD_IOC_DBG_TRAP_SUSPEND_QUEUES`: suspends `queue_ids` (error bits are
/// ORed into the ids the kernel could not handle). Returns the kernel's
/// result: how many it suspended.
pub fn suspend_queues(
    file: &DeviceFile,
    pid: u32,
    exception_mask: u64,
    grace_period: u32,
    queue_ids: &mut [u32],
) -> Result<i32, Errno> {
    issue(
        file,
        pid,
        &mut Request::SuspendQueues {
            exception_mask,
            grace_period,
            queue_ids,
        },
    )
}

/// `KFD_IOC_DBG_TRAP_RESUME_QUEUES`: as [`suspend_queues`], resuming.
pub fn resume_queues(file: &DeviceFile, pid: u32, queue_ids: &mut [u32]) -> Result<i32, Errno> {
    issue(file, pid, &mut Request::ResumeQueues { queue_ids })
}

/// `KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO`: copies (a prefix of) the info
/// of exception `exception_code` of `source_id` into `info`. Returns the
/// size of the info the kernel has, which may exceed `info.len()`.
pub fn query_exception_info(
    file: &DeviceFile,
    pid: u32,
    source_id: u32,
    exception_code: u32,
    clear_exception: bool,
    info: &mut [u8],
) -> Result<u32, Errno> {
    let mut r = Request::QueryExceptionInfo {
        source_id,
        exception_code,
        clear_exception,
        info,
        info_size: 0,
    };
    issue(file, pid, &mut r)?;
    match r {
        Request::QueryExceptionInfo { info_size, .. } => Ok(info_size),
        _ => unreachable!("the variant does not change"),
    }
}

/// Issues a snapshot request and returns its `(count, entry_size)`.
fn snapshot(file: &DeviceFile, pid: u32, mut r: Request<'_>) -> Result<(u32, u32), Errno> {
    issue(file, pid, &mut r)?;
    match r {
        Request::GetQueueSnapshot {
            count, entry_size, ..
        }
        | Request::GetDeviceSnapshot {
            count, entry_size, ..
        } => Ok((count, entry_size)),
        _ => unreachable!("only snapshot requests come here"),
    }
}

/// `KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT`: fills up to `entries.len()`
/// entries, clearing `exception_mask` on each queue. Returns `(number of
/// queues that exist, the kernel's entry size)`.
pub fn get_queue_snapshot(
    file: &DeviceFile,
    pid: u32,
    exception_mask: u64,
    entries: &mut [kfd_queue_snapshot_entry],
) -> Result<(u32, u32), Errno> {
    let (count, entry_size) = (0, 0);
    let r = Request::GetQueueSnapshot {
        exception_mask,
        entries,
        count,
        entry_size,
    };
    snapshot(file, pid, r)
}

/// `KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT`: as [`get_queue_snapshot`], for
/// devices. The kernel refuses an empty `entries` with `EINVAL`.
pub fn get_device_snapshot(
    file: &DeviceFile,
    pid: u32,
    exception_mask: u64,
    entries: &mut [kfd_dbg_device_info_entry],
) -> Result<(u32, u32), Errno> {
    let (count, entry_size) = (0, 0);
    let r = Request::GetDeviceSnapshot {
        exception_mask,
        entries,
        count,
        entry_size,
    };
    snapshot(file, pid, r)
}

// ---------------------------------------------------------------------------
// Older interfaces
// ---------------------------------------------------------------------------

/// Size of the fixed part (`content_ptr`, `gpu_id`, `buf_size_in_bytes`)
/// that the deprecated v1 requests count in `buf_size_in_bytes`.
const V1_FIXED: usize = size_of::<kfd::kfd_ioctl_dbg_wave_control_args>();

/// `buf_size_in_bytes` of a v1 request whose variable part is `payload`.
fn v1_size(payload: &[u8]) -> Result<u32, Errno> {
    count_of(payload.len() + V1_FIXED)
}

/// The deprecated `AMDKFD_IOC_DBG_WAVE_CONTROL`: `payload` is the part
/// after the fixed fields (operand, mode, trap id, wave message, VA).
/// Current kernels refuse it with `EPERM`.
pub fn v1_wave_control(file: &DeviceFile, gpu_id: u32, payload: &[u8]) -> Result<(), Errno> {
    let mut args = kfd::kfd_ioctl_dbg_wave_control_args {
        content_ptr: payload.as_ptr() as u64,
        gpu_id,
        buf_size_in_bytes: v1_size(payload)?,
    };
    // SAFETY: the v1 kernel copies `buf_size_in_bytes - 16` bytes from
    // `content_ptr`, which is `payload.len()` bytes of `payload`, borrowed
    // for the call; it never writes through the pointer.
    unsafe { file.ioctl(kfd::AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED, &mut args) }.map(drop)
}

/// The deprecated `AMDKFD_IOC_DBG_ADDRESS_WATCH`: `payload` is the watch
/// description after the fixed fields. Current kernels refuse it with
/// `EPERM`.
pub fn v1_address_watch(file: &DeviceFile, gpu_id: u32, payload: &[u8]) -> Result<(), Errno> {
    let mut args = kfd::kfd_ioctl_dbg_address_watch_args {
        content_ptr: payload.as_ptr() as u64,
        gpu_id,
        buf_size_in_bytes: v1_size(payload)?,
    };
    // SAFETY: as in `v1_wave_control`: the kernel only reads
    // `buf_size_in_bytes - 16` = `payload.len()` bytes from `content_ptr`.
    unsafe { file.ioctl(kfd::AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED, &mut args) }.map(drop)
}

/// The thunk-private `AMDKFD_IOC_DBG_TRAP` (`0x82`) of KFD 1.8 with
/// operation `GET_VERSION`: the debugger interface `(major, minor)`.
/// Current kernels do not have this request.
pub fn rocm_5_2_get_version(file: &DeviceFile, pid: u32) -> Result<(u32, u32), Errno> {
    let mut args = kfd::rocm_5_2::kfd_ioctl_dbg_trap_args {
        pid,
        op: kfd::rocm_5_2::KFD_IOC_DBG_TRAP_GET_VERSION,
        ..Default::default()
    };
    // SAFETY: GET_VERSION follows no pointer (`ptr` is 0); the kernel
    // writes `data1`/`data2` of the argument struct only.
    unsafe { file.ioctl(kfd::rocm_5_2::AMDKFD_IOC_DBG_TRAP, &mut args) }?;
    Ok((args.data1, args.data2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{FakeKfd, Model};

    /// Records the union of every DBG_TRAP call and answers snapshots
    /// with 3 entries of the Rust size.
    #[derive(Debug, Default)]
    struct Trap {
        seen: Vec<kfd_ioctl_dbg_trap_args>,
    }

    impl Model for Trap {
        unsafe fn ioctl(
            &mut self,
            _: (u32, u32),
            nr: u8,
            arg: *mut libc::c_void,
        ) -> Result<i32, Errno> {
            assert_eq!(nr, kfd::AMDKFD_IOC_DBG_TRAP.nr());
            // SAFETY: DBG_TRAP's argument.
            let a = unsafe { &mut *(arg as *mut kfd_ioctl_dbg_trap_args) };
            self.seen.push(*a);
            if a.op == kfd::KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT {
                // SAFETY: the member of this op; plain integers.
                let q = unsafe { &mut a.u.queue_snapshot };
                q.num_queues = 3;
            }
            Ok(0)
        }
    }

    #[test]
    fn addresses_and_sizes_describe_the_buffers() {
        let fake = FakeKfd::new(1, 17, Trap::default());
        let file = fake.open();
        let mut ids = [1u32, 2, 3];
        let ids_addr = ids.as_ptr() as u64;
        suspend_queues(&file, 9, 0, 0, &mut ids).unwrap();
        resume_queues(&file, 9, &mut []).unwrap();
        let mut entries = vec![kfd_queue_snapshot_entry::default(); 2];
        let (n, size) = get_queue_snapshot(&file, 9, 0, &mut entries).unwrap();
        assert_eq!(n, 3);
        assert_eq!(size, size_of::<kfd_queue_snapshot_entry>() as u32);
        let mut info = [0u8; 5];
        query_exception_info(&file, 9, 1, 2, true, &mut info).unwrap();
        let seen = &fake.lock().seen;
        // SAFETY: each member read below is the one of its op.
        let s = unsafe { seen[0].u.suspend_queues };
        assert_eq!(
            (seen[0].pid, s.queue_array_ptr, s.num_queues),
            (9, ids_addr, 3)
        );
        // SAFETY: as above.
        let r = unsafe { seen[1].u.resume_queues };
        assert_eq!((r.queue_array_ptr, r.num_queues), (0, 0), "empty goes as 0");
        // SAFETY: as above.
        let q = unsafe { seen[2].u.queue_snapshot };
        assert_eq!(
            (q.snapshot_buf_ptr, q.num_queues),
            (entries.as_ptr() as u64, 2)
        );
        // SAFETY: as above.
        let e = unsafe { seen[3].u.query_exception_info };
        assert_eq!(
            (e.info_ptr, e.info_size, e.clear_exception),
            (info.as_ptr() as u64, 5, 1)
        );
        assert_eq!(
            Request::ResumeQueues { queue_ids: &mut [] }.queue_count(),
            Some(0)
        );
    }
}
