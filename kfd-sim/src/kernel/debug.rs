//! RUNTIME_ENABLE and the DBG_TRAP operations (kfd_debug.c,
//! kfd_chardev.c kfd_ioctl_set_debug_trap).

use std::os::fd::{FromRawFd, OwnedFd};

use kfd_sys::kfd::*;
use kfd_sys::Errno;

use super::dispatch::{Ctx, R};
use super::layout;
use super::usermem::{self, FromBuf, ToBuf};
use zerocopy::IntoBytes;

/// Debugger-visible exception mask bits the model supports for wave
/// launch overrides.
const SUPPORTED_TRAP_MASK: u32 =
    0x1ff | KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START | KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_END;
/// Address watch points per device.
const MAX_WATCH_POINTS: u32 = 4;

/// Per-process debug and runtime state.
#[derive(Debug, Default)]
pub(crate) struct DebugState {
    pub runtime_state: u32,
    pub r_debug: u64,
    pub ttmp_setup: bool,
    pub trap_enabled: bool,
    pub exception_enable_mask: u64,
    /// Pending process-level exceptions.
    pub exception_status: u64,
    pub launch_override_mask: u32,
    pub launch_mode: u32,
    pub flags: u32,
    /// Write end the debugger polls (`dbg_ev_file`).
    pub event_fd: Option<OwnedFd>,
}

impl DebugState {
    fn notify(&self) {
        if let Some(fd) = &self.event_fd {
            let b = b".";
            // SAFETY: raw write of one byte from a valid buffer to a
            // descriptor we own; failures are ignored like the kernel does.
            unsafe {
                libc::syscall(
                    libc::SYS_write,
                    std::os::fd::AsRawFd::as_raw_fd(fd),
                    b.as_ptr(),
                    1usize,
                );
            }
        }
    }

    /// Tells the debugger an exception it enabled was raised (the write to
    /// `dbg_ev_file` of `kfd_dbg_ev_raise`).
    pub fn notify_debugger(&self) {
        self.notify();
    }

    /// EC_QUEUE_NEW for a debugged process.
    pub fn raise_queue_new(&mut self, _queue: u32, _gpu: u32) {
        if self.trap_enabled && self.exception_enable_mask & kfd_ec_mask(EC_QUEUE_NEW) != 0 {
            self.notify();
        }
    }
}

pub(crate) fn runtime_enable(c: &Ctx, buf: &mut [u8]) -> R {
    let a = kfd_ioctl_runtime_enable_args::from_buf(buf);
    let mut st = c.lock_state();
    if a.mode_mask & KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK != 0 {
        if st.debug.runtime_state != DEBUG_RUNTIME_STATE_DISABLED {
            return Err(Errno::EBUSY);
        }
        if !st.queues.is_empty() {
            return Err(Errno::EEXIST);
        }
        st.debug.runtime_state = DEBUG_RUNTIME_STATE_ENABLED;
        st.debug.r_debug = a.r_debug;
        st.debug.ttmp_setup = a.mode_mask & KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK != 0;
        if st.debug.trap_enabled {
            // The kernel raises EC_PROCESS_RUNTIME and waits for the
            // debugger to acknowledge; the model does not block.
            st.debug.exception_status |= kfd_ec_mask(EC_PROCESS_RUNTIME);
            st.debug.notify();
        }
    } else {
        st.debug.runtime_state = DEBUG_RUNTIME_STATE_DISABLED;
        st.debug.r_debug = 0;
        st.debug.ttmp_setup = false;
    }
    Ok(0)
}

fn runtime_info(d: &DebugState) -> kfd_runtime_info {
    kfd_runtime_info {
        r_debug: d.r_debug,
        runtime_state: d.runtime_state,
        ttmp_setup: d.ttmp_setup as u32,
    }
}

/// Writes `a` back to its argument bytes `buf`, which it was read from:
/// the union member of its operation, the only part a handler changes.
/// (`kfd_ioctl_dbg_trap_args` holds a union, so it has no byte view of
/// its own.)
fn write_back(a: &kfd_ioctl_dbg_trap_args, buf: &mut [u8]) {
    let Some(union) = buf.get_mut(std::mem::offset_of!(kfd_ioctl_dbg_trap_args, u)..) else {
        return;
    };
    // SAFETY: every member of the union is plain data (`FromBytes`) and
    // the whole union was initialised from the argument bytes, so any
    // member may be read.
    unsafe {
        match a.op {
            KFD_IOC_DBG_TRAP_ENABLE => a.u.enable.to_buf(union),
            KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE => a.u.launch_override.to_buf(union),
            KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH => a.u.set_node_address_watch.to_buf(union),
            KFD_IOC_DBG_TRAP_SET_FLAGS => a.u.set_flags.to_buf(union),
            KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT => a.u.query_debug_event.to_buf(union),
            KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO => a.u.query_exception_info.to_buf(union),
            KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT => a.u.queue_snapshot.to_buf(union),
            KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT => a.u.device_snapshot.to_buf(union),
            // The other operations change nothing they were given.
            _ => {}
        }
    }
}

pub(crate) fn dbg_trap(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_dbg_trap_args::from_buf(buf);
    // The target is the primary process of `pid`; a simulated process is
    // never ptraced, so only a process debugging itself is allowed.
    let target = {
        let procs = super::lock(&c.m.processes);
        procs
            .iter()
            .find(|p| p.os_pid == a.pid && !p.secondary)
            .cloned()
    };
    let Some(target) = target else {
        return Err(Errno::ESRCH);
    };
    if !std::sync::Arc::ptr_eq(&target, &c.proc) && a.op != KFD_IOC_DBG_TRAP_DISABLE {
        return Err(Errno::EPERM);
    }
    let mut st = super::lock(&target.state);
    if a.op != KFD_IOC_DBG_TRAP_ENABLE && !st.debug.trap_enabled {
        return Err(Errno::EINVAL);
    }
    let needs_runtime = matches!(
        a.op,
        KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE
            | KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE
            | KFD_IOC_DBG_TRAP_SUSPEND_QUEUES
            | KFD_IOC_DBG_TRAP_RESUME_QUEUES
            | KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH
            | KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH
            | KFD_IOC_DBG_TRAP_SET_FLAGS
    );
    if needs_runtime && st.debug.runtime_state != DEBUG_RUNTIME_STATE_ENABLED {
        return Err(Errno::EPERM);
    }
    // SAFETY (union reads below): every member of the union is a plain
    // integer struct and the whole union was initialised from user bytes.
    let r = match a.op {
        KFD_IOC_DBG_TRAP_ENABLE => {
            // SAFETY: see above.
            let mut e = unsafe { a.u.enable };
            if st.debug.trap_enabled {
                return Err(Errno::EALREADY);
            }
            // SAFETY: F_DUPFD_CLOEXEC through the raw syscall; no memory
            // effects, EBADF for a bad descriptor.
            let dup = unsafe {
                libc::syscall(libc::SYS_fcntl, e.dbg_fd as i32, libc::F_DUPFD_CLOEXEC, 3)
            };
            if dup < 0 {
                return Err(Errno::EBADF);
            }
            // SAFETY: a fresh descriptor we own.
            st.debug.event_fd = Some(unsafe { OwnedFd::from_raw_fd(dup as i32) });
            st.debug.trap_enabled = true;
            let info = runtime_info(&st.debug);
            let n = (e.rinfo_size as usize).min(std::mem::size_of::<kfd_runtime_info>());
            let res = usermem::write(e.rinfo_ptr, &info.as_bytes()[..n]);
            e.rinfo_size = std::mem::size_of::<kfd_runtime_info>() as u32;
            if res.is_err() {
                st.debug.trap_enabled = false;
                st.debug.event_fd = None;
                return Err(Errno::EFAULT);
            }
            st.debug.exception_enable_mask = e.exception_mask;
            a.u.enable = e;
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_DISABLE => {
            st.debug.trap_enabled = false;
            st.debug.event_fd = None;
            st.debug.exception_enable_mask = 0;
            st.debug.launch_mode = 0;
            st.debug.launch_override_mask = 0;
            st.debug.flags = 0;
            for q in st.queues.values_mut() {
                q.set_suspended(false);
            }
            c.m.engine.kick();
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT => {
            // SAFETY: see above.
            let e = unsafe { a.u.send_runtime_event };
            let mut mask = e.exception_mask & !kfd_ec_mask(EC_PROCESS_RUNTIME);
            if mask != 0 {
                match st.queues.get_mut(&e.queue_id) {
                    Some(q) => {
                        q.exception_status |= mask;
                        mask = 0;
                    }
                    None => return Err(Errno::EINVAL),
                }
            }
            let _ = mask;
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED => {
            // SAFETY: see above.
            st.debug.exception_enable_mask = unsafe { a.u.set_exceptions_enabled }.exception_mask;
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE => {
            // SAFETY: see above.
            let mut o = unsafe { a.u.launch_override };
            if o.override_mode != KFD_DBG_TRAP_OVERRIDE_OR
                && o.override_mode != KFD_DBG_TRAP_OVERRIDE_REPLACE
            {
                return Err(Errno::EPERM);
            }
            if o.enable_mask & !SUPPORTED_TRAP_MASK != 0
                || o.support_request_mask & !SUPPORTED_TRAP_MASK != 0
            {
                o.support_request_mask = SUPPORTED_TRAP_MASK;
                a.u.launch_override = o;
                write_back(&a, buf);
                return Err(Errno::EACCES);
            }
            let prev = st.debug.launch_override_mask;
            st.debug.launch_override_mask = if o.override_mode == KFD_DBG_TRAP_OVERRIDE_OR {
                prev | o.enable_mask
            } else {
                (prev & !o.support_request_mask) | (o.enable_mask & o.support_request_mask)
            };
            o.enable_mask = prev;
            o.support_request_mask = SUPPORTED_TRAP_MASK;
            a.u.launch_override = o;
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE => {
            // SAFETY: see above.
            let m = unsafe { a.u.launch_mode }.launch_mode;
            if !matches!(
                m,
                KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL
                    | KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT
                    | KFD_DBG_TRAP_WAVE_LAUNCH_MODE_DEBUG
            ) {
                return Err(Errno::EINVAL);
            }
            st.debug.launch_mode = m;
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_SUSPEND_QUEUES | KFD_IOC_DBG_TRAP_RESUME_QUEUES => {
            let suspend = a.op == KFD_IOC_DBG_TRAP_SUSPEND_QUEUES;
            let (ptr, n) = if suspend {
                // SAFETY: see above.
                let s = unsafe { a.u.suspend_queues };
                (s.queue_array_ptr, s.num_queues)
            } else {
                // SAFETY: see above.
                let s = unsafe { a.u.resume_queues };
                (s.queue_array_ptr, s.num_queues)
            };
            let mut ids: Vec<u32> = usermem::read_array(ptr, n as usize)?;
            let mut count = 0;
            let mut stopped = Vec::new();
            for id in ids.iter_mut() {
                let qid = *id & !(KFD_DBG_QUEUE_ERROR_MASK | KFD_DBG_QUEUE_INVALID_MASK);
                match st.queues.get_mut(&qid) {
                    Some(q) if q.suspended != suspend => {
                        q.set_suspended(suspend);
                        if suspend {
                            stopped.push(q.hw.clone());
                        }
                        count += 1;
                        *id = qid;
                    }
                    Some(_) => *id = qid | KFD_DBG_QUEUE_ERROR_MASK,
                    None => *id = qid | KFD_DBG_QUEUE_INVALID_MASK,
                }
            }
            usermem::write_array(ptr, &ids)?;
            // The kernel preempts before it answers: once the call
            // returns, a suspended queue runs nothing more, even a packet
            // the engine had started to look at before the stop bit.
            drop(st);
            for hw in &stopped {
                hw.wait_idle();
            }
            // A resumed queue may hold work already.
            c.m.engine.kick();
            Ok(count)
        }
        KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH => {
            // SAFETY: see above.
            let mut w = unsafe { a.u.set_node_address_watch };
            let Some(pdd) = st.pdds.iter_mut().find(|p| p.gpu_id == w.gpu_id) else {
                return Err(Errno::ENODEV);
            };
            let Some(id) = (0..MAX_WATCH_POINTS).find(|i| !pdd.watch_points.contains_key(i)) else {
                return Err(Errno::ENOMEM);
            };
            pdd.watch_points.insert(id, (w.address, w.mask, w.mode));
            w.id = id;
            a.u.set_node_address_watch = w;
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH => {
            // SAFETY: see above.
            let w = unsafe { a.u.clear_node_address_watch };
            let Some(pdd) = st.pdds.iter_mut().find(|p| p.gpu_id == w.gpu_id) else {
                return Err(Errno::ENODEV);
            };
            if pdd.watch_points.remove(&w.id).is_none() {
                return Err(Errno::EINVAL);
            }
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_SET_FLAGS => {
            // SAFETY: see above.
            let mut f = unsafe { a.u.set_flags };
            let supported = KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP;
            if f.flags & !supported != 0 {
                f.flags = st.debug.flags;
                a.u.set_flags = f;
                write_back(&a, buf);
                return Err(Errno::EACCES);
            }
            std::mem::swap(&mut st.debug.flags, &mut f.flags);
            a.u.set_flags = f;
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT => {
            // SAFETY: see above.
            let mut q = unsafe { a.u.query_debug_event };
            let clear = q.exception_mask;
            let hit = st.queues.iter_mut().find(|(_, q)| q.exception_status != 0);
            if let Some((id, qu)) = hit {
                q.queue_id = *id;
                q.gpu_id = qu.gpu_id;
                q.exception_mask = qu.exception_status;
                qu.exception_status &= !clear;
            } else if st.debug.exception_status != 0 {
                q.queue_id = u32::MAX;
                q.gpu_id = 0;
                q.exception_mask = st.debug.exception_status;
                st.debug.exception_status &= !clear;
            } else {
                // The kernel answers EAGAIN (nothing pending); the model
                // never returns EAGAIN (the thunk would retry forever).
                return Err(Errno::ENODATA);
            }
            a.u.query_debug_event = q;
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO => {
            // SAFETY: see above.
            let mut q = unsafe { a.u.query_exception_info };
            if q.exception_code != EC_PROCESS_RUNTIME {
                return Err(Errno::EINVAL);
            }
            let info = runtime_info(&st.debug);
            let n = (q.info_size as usize).min(std::mem::size_of::<kfd_runtime_info>());
            usermem::write(q.info_ptr, &info.as_bytes()[..n])?;
            if q.clear_exception != 0 {
                st.debug.exception_status &= !kfd_ec_mask(EC_PROCESS_RUNTIME);
            }
            q.info_size = std::mem::size_of::<kfd_runtime_info>() as u32;
            a.u.query_exception_info = q;
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT => {
            // SAFETY: see above.
            let mut s = unsafe { a.u.queue_snapshot };
            let esz = std::mem::size_of::<kfd_queue_snapshot_entry>();
            let entry = (s.entry_size as usize).min(esz);
            let clear = s.exception_mask;
            let total = st.queues.len() as u32;
            for (i, (id, q)) in st.queues.iter_mut().enumerate() {
                if i as u32 >= s.num_queues {
                    break;
                }
                let e = kfd_queue_snapshot_entry {
                    exception_status: q.exception_status,
                    ring_base_address: q.ring_base,
                    write_pointer_address: q.wptr,
                    read_pointer_address: q.rptr,
                    ctx_save_restore_address: q.ctx_save,
                    queue_id: *id,
                    gpu_id: q.gpu_id,
                    ring_size: q.ring_size,
                    queue_type: q.queue_type,
                    ctx_save_restore_area_size: q.ctx_save_size,
                    reserved: 0,
                };
                usermem::write(
                    s.snapshot_buf_ptr + i as u64 * s.entry_size as u64,
                    &e.as_bytes()[..entry],
                )?;
                q.exception_status &= !clear;
            }
            s.num_queues = total;
            s.entry_size = entry as u32;
            a.u.queue_snapshot = s;
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT => {
            // SAFETY: see above.
            let mut s = unsafe { a.u.device_snapshot };
            let esz = std::mem::size_of::<kfd_dbg_device_info_entry>();
            if s.num_devices == 0 || s.entry_size == 0 {
                return Err(Errno::EINVAL);
            }
            let entry = (s.entry_size as usize).min(esz);
            let n = (s.num_devices as usize).min(st.pdds.len());
            for (i, pdd) in st.pdds.iter().take(n).enumerate() {
                let d = &c.m.devices[pdd.dev];
                let node = c.m.topology.node_by_gpu_id(d.gpu_id).map(|(_, n)| n);
                let prop = |k: &str| node.map_or(0, |n| n.properties.get_or_zero(k) as u32);
                let e = kfd_dbg_device_info_entry {
                    exception_status: 0,
                    lds_base: layout::LDS_BASE,
                    lds_limit: layout::LDS_BASE | 0xffff_ffff,
                    scratch_base: layout::SCRATCH_BASE,
                    scratch_limit: layout::SCRATCH_BASE | 0xffff_ffff,
                    gpuvm_base: layout::GPUVM_BASE,
                    gpuvm_limit: layout::GPUVM_SIZE - 1,
                    gpu_id: d.gpu_id,
                    location_id: prop("location_id"),
                    vendor_id: prop("vendor_id"),
                    device_id: prop("device_id"),
                    revision_id: node.and_then(|n| n.gpu.as_ref()).map_or(0, |g| g.pci_rev),
                    subsystem_vendor_id: prop("vendor_id"),
                    subsystem_device_id: prop("device_id"),
                    fw_version: prop("fw_version"),
                    gfx_target_version: d.gfx_version,
                    simd_count: d.simd_count,
                    max_waves_per_simd: prop("max_waves_per_simd"),
                    array_count: d.array_count,
                    simd_arrays_per_engine: d.simd_arrays_per_engine,
                    num_xcc: d.num_xcc,
                    capability: d.capability,
                    debug_prop: prop("debug_prop"),
                };
                usermem::write(
                    s.snapshot_buf_ptr + i as u64 * s.entry_size as u64,
                    &e.as_bytes()[..entry],
                )?;
            }
            s.num_devices = st.pdds.len() as u32;
            s.entry_size = entry as u32;
            a.u.device_snapshot = s;
            Ok(0)
        }
        _ => Err(Errno::EINVAL),
    };
    if r.is_ok() {
        write_back(&a, buf);
    }
    r
}
