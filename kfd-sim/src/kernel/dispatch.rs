//! The ioctl entry point: `kfd_ioctl()` of kfd_chardev.c.

use std::fmt::Debug;
use std::sync::{Arc, MutexGuard};

use kfd_sys::ioctl::{ioc_dir, ioc_nr, ioc_size, IOC_READ, IOC_WRITE};
use kfd_sys::kfd::*;
use kfd_sys::Errno;

use super::fault::normalize_name;
use super::process::{KfdFile, ProcState, Process};
use super::usermem::{self, FromBuf, ToBuf};
use super::{debug, events, lock, memory, queues, svm, Machine};

/// Result of a handler: the ioctl's return value or an errno.
pub(crate) type R = Result<i32, Errno>;

/// What a handler sees: the machine, the file and its process.
pub(crate) struct Ctx<'a> {
    pub m: &'a Machine,
    pub file: &'a Arc<KfdFile>,
    pub proc: Arc<Process>,
    /// `_IOC_SIZE` of the user's request.
    pub usize: usize,
}

impl Ctx<'_> {
    /// Takes `p->mutex`.
    pub fn lock_state(&self) -> MutexGuard<'_, ProcState> {
        lock(&self.proc.state)
    }
}

type Handler = fn(&Ctx, &mut [u8]) -> R;
type Fmt = fn(&[u8]) -> String;

/// One row of the ioctl table.
struct Desc {
    nr: u8,
    name: &'static str,
    /// The kernel's own request (direction and size come from it).
    dir: u32,
    size: usize,
    since_minor: u32,
    func: Handler,
    fmt: Fmt,
}

fn fmt_args<T: FromBuf + Debug>(b: &[u8]) -> String {
    format!("{:?}", T::from_buf(b))
}

fn fmt_none(_: &[u8]) -> String {
    String::new()
}

macro_rules! desc {
    ($ioc:expr, $t:ty, $since:expr, $f:expr) => {
        desc!($ioc, fmt = fmt_args::<$t>, $since, $f)
    };
    ($ioc:expr, fmt = $fmt:expr, $since:expr, $f:expr) => {
        Desc {
            nr: $ioc.nr(),
            name: $ioc.name(),
            dir: ioc_dir($ioc.request()),
            size: ioc_size($ioc.request()),
            since_minor: $since,
            func: $f,
            fmt: $fmt,
        }
    };
}

/// Builds the ioctl table now (the simulator's creation does, so that a
/// fork never copies it half-built).
pub(crate) fn init_table() {
    table();
}

fn table() -> &'static [Desc] {
    use std::sync::OnceLock;
    static T: OnceLock<Vec<Desc>> = OnceLock::new();
    T.get_or_init(|| {
        vec![
            desc!(
                AMDKFD_IOC_GET_VERSION,
                kfd_ioctl_get_version_args,
                0,
                get_version
            ),
            desc!(
                AMDKFD_IOC_CREATE_QUEUE,
                kfd_ioctl_create_queue_args,
                0,
                queues::create
            ),
            desc!(
                AMDKFD_IOC_DESTROY_QUEUE,
                kfd_ioctl_destroy_queue_args,
                0,
                queues::destroy
            ),
            desc!(
                AMDKFD_IOC_SET_MEMORY_POLICY,
                kfd_ioctl_set_memory_policy_args,
                0,
                set_memory_policy
            ),
            desc!(
                AMDKFD_IOC_GET_CLOCK_COUNTERS,
                kfd_ioctl_get_clock_counters_args,
                0,
                get_clock_counters
            ),
            desc!(
                AMDKFD_IOC_GET_PROCESS_APERTURES,
                kfd_ioctl_get_process_apertures_args,
                0,
                get_apertures
            ),
            desc!(
                AMDKFD_IOC_UPDATE_QUEUE,
                kfd_ioctl_update_queue_args,
                0,
                queues::update
            ),
            desc!(
                AMDKFD_IOC_CREATE_EVENT,
                kfd_ioctl_create_event_args,
                0,
                events::create
            ),
            desc!(
                AMDKFD_IOC_DESTROY_EVENT,
                kfd_ioctl_destroy_event_args,
                0,
                events::destroy
            ),
            desc!(
                AMDKFD_IOC_SET_EVENT,
                kfd_ioctl_set_event_args,
                0,
                events::set
            ),
            desc!(
                AMDKFD_IOC_RESET_EVENT,
                kfd_ioctl_reset_event_args,
                0,
                events::reset
            ),
            desc!(
                AMDKFD_IOC_WAIT_EVENTS,
                kfd_ioctl_wait_events_args,
                0,
                events::wait
            ),
            desc!(
                AMDKFD_IOC_DBG_REGISTER_DEPRECATED,
                kfd_ioctl_dbg_register_args,
                0,
                eperm
            ),
            desc!(
                AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED,
                kfd_ioctl_dbg_unregister_args,
                0,
                eperm
            ),
            desc!(
                AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED,
                kfd_ioctl_dbg_address_watch_args,
                0,
                eperm
            ),
            desc!(
                AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED,
                kfd_ioctl_dbg_wave_control_args,
                0,
                eperm
            ),
            desc!(
                AMDKFD_IOC_SET_SCRATCH_BACKING_VA,
                kfd_ioctl_set_scratch_backing_va_args,
                0,
                set_scratch_backing_va
            ),
            desc!(
                AMDKFD_IOC_GET_TILE_CONFIG,
                kfd_ioctl_get_tile_config_args,
                0,
                get_tile_config
            ),
            desc!(
                AMDKFD_IOC_SET_TRAP_HANDLER,
                kfd_ioctl_set_trap_handler_args,
                0,
                set_trap_handler
            ),
            desc!(
                AMDKFD_IOC_GET_PROCESS_APERTURES_NEW,
                kfd_ioctl_get_process_apertures_new_args,
                0,
                get_apertures_new
            ),
            desc!(
                AMDKFD_IOC_ACQUIRE_VM,
                kfd_ioctl_acquire_vm_args,
                0,
                memory::acquire_vm
            ),
            desc!(
                AMDKFD_IOC_ALLOC_MEMORY_OF_GPU,
                kfd_ioctl_alloc_memory_of_gpu_args,
                0,
                memory::alloc
            ),
            desc!(
                AMDKFD_IOC_FREE_MEMORY_OF_GPU,
                kfd_ioctl_free_memory_of_gpu_args,
                0,
                memory::free
            ),
            desc!(
                AMDKFD_IOC_MAP_MEMORY_TO_GPU,
                kfd_ioctl_map_memory_to_gpu_args,
                0,
                memory::map
            ),
            desc!(
                AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU,
                kfd_ioctl_unmap_memory_from_gpu_args,
                0,
                memory::unmap
            ),
            desc!(
                AMDKFD_IOC_SET_CU_MASK,
                kfd_ioctl_set_cu_mask_args,
                0,
                queues::set_cu_mask
            ),
            desc!(
                AMDKFD_IOC_GET_QUEUE_WAVE_STATE,
                kfd_ioctl_get_queue_wave_state_args,
                0,
                queues::get_wave_state
            ),
            desc!(
                AMDKFD_IOC_GET_DMABUF_INFO,
                kfd_ioctl_get_dmabuf_info_args,
                0,
                memory::get_dmabuf_info
            ),
            desc!(
                AMDKFD_IOC_IMPORT_DMABUF,
                kfd_ioctl_import_dmabuf_args,
                0,
                memory::import_dmabuf
            ),
            desc!(
                AMDKFD_IOC_ALLOC_QUEUE_GWS,
                kfd_ioctl_alloc_queue_gws_args,
                0,
                queues::alloc_gws
            ),
            desc!(
                AMDKFD_IOC_SMI_EVENTS,
                kfd_ioctl_smi_events_args,
                0,
                smi_events
            ),
            desc!(AMDKFD_IOC_SVM, kfd_ioctl_svm_args, 0, svm::ioctl),
            desc!(
                AMDKFD_IOC_SET_XNACK_MODE,
                kfd_ioctl_set_xnack_mode_args,
                0,
                set_xnack_mode
            ),
            desc!(AMDKFD_IOC_CRIU_OP, kfd_ioctl_criu_args, 0, criu),
            desc!(
                AMDKFD_IOC_AVAILABLE_MEMORY,
                kfd_ioctl_get_available_memory_args,
                9,
                memory::available_memory
            ),
            desc!(
                AMDKFD_IOC_EXPORT_DMABUF,
                kfd_ioctl_export_dmabuf_args,
                12,
                memory::export_dmabuf
            ),
            desc!(
                AMDKFD_IOC_RUNTIME_ENABLE,
                kfd_ioctl_runtime_enable_args,
                13,
                debug::runtime_enable
            ),
            desc!(
                AMDKFD_IOC_DBG_TRAP,
                kfd_ioctl_dbg_trap_args,
                13,
                debug::dbg_trap
            ),
            Desc {
                nr: AMDKFD_IOC_CREATE_PROCESS_IO.nr(),
                name: AMDKFD_IOC_CREATE_PROCESS_IO.name(),
                dir: ioc_dir(AMDKFD_IOC_CREATE_PROCESS_IO.request()),
                size: 0,
                since_minor: KFD_IOCTL_MINOR_VERSION_CREATE_PROCESS,
                func: create_process,
                fmt: fmt_none,
            },
        ]
    })
}

fn find(nr: u8) -> Option<&'static Desc> {
    table().iter().find(|d| d.nr == nr)
}

/// The C name of the KFD request with command number `nr`.
#[allow(dead_code)]
pub(crate) fn name_of(nr: u8) -> Option<&'static str> {
    find(nr).map(|d| d.name)
}

impl Machine {
    /// `kfd_ioctl()`: one ioctl on a kfd file.
    ///
    /// `arg` is the user's argument pointer; it is only accessed through
    /// the EFAULT-safe user-memory helpers.
    pub(crate) fn kfd_ioctl(
        &self,
        file: &Arc<KfdFile>,
        caller_pid: u32,
        request: u64,
        arg: u64,
    ) -> R {
        let request32 = request as u32;
        let nr = ioc_nr(request32);
        let usize = ioc_size(request32);
        let minor = self
            .minor_version
            .load(std::sync::atomic::Ordering::Relaxed);
        let desc = find(nr).filter(|d| d.since_minor <= minor);
        let tracing = self.tracing();
        let Some(desc) = desc else {
            if tracing {
                self.trace_line(&format!(
                    "[{caller_pid}] ioctl nr={nr:#04x} req={request:#010x} -> -EINVAL (no such ioctl)"
                ));
            }
            return Err(Errno::EINVAL);
        };
        self.kfd_ioctl_desc(desc, file, caller_pid, usize, arg, tracing)
    }

    fn kfd_ioctl_desc(
        &self,
        desc: &Desc,
        file: &Arc<KfdFile>,
        caller_pid: u32,
        usize: usize,
        arg: u64,
        tracing: bool,
    ) -> R {
        let short = desc.name.strip_prefix("AMDKFD_IOC_").unwrap_or(desc.name);
        // "Using KFD FD in wrong process": another (simulated or forked)
        // process uses the descriptor.
        // SAFETY: getpid has no preconditions.
        let real_pid = unsafe { libc::getpid() };
        if file.os_pid != caller_pid || real_pid != self.real_pid {
            if tracing {
                self.trace_line(&format!(
                    "[{caller_pid}] {} -> -EBADF (wrong process)",
                    desc.name
                ));
            }
            return Err(Errno::EBADF);
        }
        if let Some(e) = self.faults.check(&normalize_name(short)) {
            if tracing {
                self.trace_line(&format!(
                    "[{caller_pid}] {} -> -{} (injected)",
                    desc.name,
                    errno_name(e)
                ));
            }
            return Err(e);
        }
        let asize = usize.max(desc.size);
        let mut kdata = vec![0u8; asize];
        let dir_in = desc.dir & IOC_WRITE != 0;
        let dir_out = desc.dir & IOC_READ != 0;
        if dir_in {
            usermem::read(arg, &mut kdata[..usize])?;
        }
        let ctx = Ctx {
            m: self,
            file,
            proc: file.process(),
            usize,
        };
        let before = if tracing && dir_in {
            Some((desc.fmt)(&kdata))
        } else {
            None
        };
        let mut r = (desc.func)(&ctx, &mut kdata);
        if dir_out && usermem::write(arg, &kdata[..usize]).is_err() {
            r = Err(Errno::EFAULT);
        }
        if tracing {
            let res = match r {
                Ok(v) => format!("{v}"),
                Err(e) => format!("-{}", errno_name(e)),
            };
            let after = if dir_out {
                (desc.fmt)(&kdata)
            } else {
                String::new()
            };
            let mut line = format!("[{caller_pid}] {}", desc.name);
            if let Some(b) = before {
                if !dir_out {
                    line.push_str(&format!(" {b}"));
                }
            }
            if dir_out {
                line.push_str(&format!(" {after}"));
            }
            line.push_str(&format!(" -> {res}"));
            self.trace_line(&line);
        }
        r
    }
}

/// Symbolic errno name for traces ([`Errno::name`]), or the number.
pub(crate) fn errno_name(e: Errno) -> String {
    e.name().map_or_else(|| e.0.to_string(), str::to_string)
}

fn eperm(_: &Ctx, _: &mut [u8]) -> R {
    Err(Errno::EPERM)
}

fn get_version(c: &Ctx, buf: &mut [u8]) -> R {
    let a = kfd_ioctl_get_version_args {
        major_version: KFD_IOCTL_MAJOR_VERSION,
        minor_version: c.m.minor_version.load(std::sync::atomic::Ordering::Relaxed),
    };
    a.to_buf(buf);
    Ok(0)
}

/// gfx9+ apertures of the model for one process device.
fn apertures(gpu_id: u32) -> kfd_process_device_apertures {
    use super::layout::*;
    kfd_process_device_apertures {
        lds_base: LDS_BASE,
        lds_limit: LDS_BASE | 0xffff_ffff,
        scratch_base: SCRATCH_BASE,
        scratch_limit: SCRATCH_BASE | 0xffff_ffff,
        gpuvm_base: GPUVM_BASE,
        gpuvm_limit: GPUVM_SIZE - 1,
        gpu_id,
        pad: 0,
    }
}

fn get_apertures(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_get_process_apertures_args::from_buf(buf);
    let st = c.lock_state();
    a.num_of_nodes = 0;
    for pdd in &st.pdds {
        a.process_apertures[a.num_of_nodes as usize] = apertures(pdd.gpu_id);
        a.num_of_nodes += 1;
        if a.num_of_nodes >= NUM_OF_SUPPORTED_GPUS {
            break;
        }
    }
    a.to_buf(buf);
    Ok(0)
}

fn get_apertures_new(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_get_process_apertures_new_args::from_buf(buf);
    let st = c.lock_state();
    if a.num_of_nodes == 0 {
        a.num_of_nodes = st.pdds.len() as u32;
        a.to_buf(buf);
        return Ok(0);
    }
    let n = st.pdds.len().min(a.num_of_nodes as usize);
    let list: Vec<kfd_process_device_apertures> =
        st.pdds[..n].iter().map(|p| apertures(p.gpu_id)).collect();
    drop(st);
    a.num_of_nodes = n as u32;
    a.to_buf(buf);
    usermem::write_array(a.kfd_process_device_apertures_ptr, &list)?;
    Ok(0)
}

/// Looks up a pdd and requires its VM (`kfd_bind_process_to_device`).
fn bound_pdd(st: &mut ProcState, gpu_id: u32) -> Result<&mut super::process::Pdd, Option<Errno>> {
    let pdd = st
        .pdds
        .iter_mut()
        .find(|p| p.gpu_id == gpu_id)
        .ok_or(None)?;
    if pdd.vm.is_none() {
        return Err(Some(Errno::ENODEV));
    }
    Ok(pdd)
}

fn set_memory_policy(c: &Ctx, buf: &mut [u8]) -> R {
    let a = kfd_ioctl_set_memory_policy_args::from_buf(buf);
    let ok = |p| p == KFD_IOC_CACHE_POLICY_COHERENT || p == KFD_IOC_CACHE_POLICY_NONCOHERENT;
    if !ok(a.default_policy) || !ok(a.alternate_policy) {
        return Err(Errno::EINVAL);
    }
    let mut st = c.lock_state();
    match bound_pdd(&mut st, a.gpu_id) {
        Err(None) => Err(Errno::EINVAL),
        Err(Some(_)) => Err(Errno::ESRCH),
        Ok(pdd) => {
            pdd.policy = Some((
                a.default_policy,
                a.alternate_policy,
                a.alternate_aperture_base,
                a.alternate_aperture_size,
                a.misc_process_flag,
            ));
            Ok(0)
        }
    }
}

fn set_trap_handler(c: &Ctx, buf: &mut [u8]) -> R {
    let a = kfd_ioctl_set_trap_handler_args::from_buf(buf);
    let mut st = c.lock_state();
    match bound_pdd(&mut st, a.gpu_id) {
        Err(None) => Err(Errno::EINVAL),
        Err(Some(_)) => Err(Errno::ESRCH),
        Ok(pdd) => {
            pdd.trap_handler = Some((a.tba_addr, a.tma_addr));
            Ok(0)
        }
    }
}

fn set_scratch_backing_va(c: &Ctx, buf: &mut [u8]) -> R {
    let a = kfd_ioctl_set_scratch_backing_va_args::from_buf(buf);
    let mut st = c.lock_state();
    match bound_pdd(&mut st, a.gpu_id) {
        Err(None) => Err(Errno::EINVAL),
        Err(Some(e)) => Err(e),
        Ok(pdd) => {
            pdd.scratch_va = a.va_addr;
            Ok(0)
        }
    }
}

/// A clock's reading in nanoseconds.
/// The GPU's 100 MHz reference clock (what `GET_CLOCK_COUNTERS` reports):
/// the timestamp source of the engines.
pub(crate) fn gpu_clock() -> u64 {
    now_ns(libc::CLOCK_MONOTONIC_RAW) / 10
}

pub(crate) fn now_ns(clock: libc::clockid_t) -> u64 {
    // SAFETY: an all-zero timespec is valid; clock_gettime writes one.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: `ts` is a valid, exclusively borrowed timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn get_clock_counters(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_get_clock_counters_args::from_buf(buf);
    let has = c.lock_state().pdds.iter().any(|p| p.gpu_id == a.gpu_id);
    // The GPU counter runs at the 100 MHz reference clock.
    a.gpu_clock_counter = if has {
        now_ns(libc::CLOCK_MONOTONIC_RAW) / 10
    } else {
        0
    };
    a.cpu_clock_counter = now_ns(libc::CLOCK_MONOTONIC_RAW);
    a.system_clock_counter = now_ns(libc::CLOCK_BOOTTIME);
    a.system_clock_freq = 1_000_000_000;
    a.to_buf(buf);
    Ok(0)
}

fn get_tile_config(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_get_tile_config_args::from_buf(buf);
    let gfx = {
        let st = c.lock_state();
        let Some(p) = st.pdds.iter().find(|p| p.gpu_id == a.gpu_id) else {
            return Err(Errno::EINVAL);
        };
        c.m.devices[p.dev].gfx_version
    };
    // gfx9+ exposes GB_ADDR_CONFIG only; no tile mode tables.
    a.gb_addr_config = if gfx >= 100000 {
        0x0000_0444
    } else {
        0x2a11_4042
    };
    a.num_banks = 0;
    a.num_ranks = 0;
    a.num_tile_configs = 0;
    a.num_macro_tile_configs = 0;
    a.to_buf(buf);
    Ok(0)
}

fn set_xnack_mode(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_set_xnack_mode_args::from_buf(buf);
    let mut st = c.lock_state();
    if a.xnack_enabled >= 0 {
        if !st.queues.is_empty() {
            return Err(Errno::EBUSY);
        }
        let want = a.xnack_enabled != 0;
        if st.xnack == want {
            return Ok(0);
        }
        // XNACK needs every GPU of the process to support retry faults
        // (gfx90a, gfx942 and later in the model).
        if want
            && !st.pdds.iter().all(|p| {
                matches!(
                    c.m.devices[p.dev].gfx_version,
                    90010 | 90400..=90499 | 90500
                )
            })
        {
            return Err(Errno::EPERM);
        }
        st.xnack = want;
    } else {
        a.xnack_enabled = st.xnack as i32;
        a.to_buf(buf);
    }
    Ok(0)
}

fn smi_events(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_smi_events_args::from_buf(buf);
    if !c.lock_state().pdds.iter().any(|p| p.gpu_id == a.gpuid) {
        return Err(Errno::EINVAL);
    }
    let (file, user) = super::smi::SmiFile::open(a.gpuid, c.proc.os_pid)?;
    c.m.insert_file(super::FileEntry::Smi(Arc::new(file)));
    a.anon_fd = std::os::fd::IntoRawFd::into_raw_fd(user) as u32;
    a.to_buf(buf);
    Ok(0)
}

fn criu(c: &Ctx, buf: &mut [u8]) -> R {
    let _ = (c, buf);
    // KFD_IOC_FLAG_CHECKPOINT_RESTORE: needs CAP_CHECKPOINT_RESTORE or
    // CAP_SYS_ADMIN, which a simulated process never has.
    Err(Errno::EACCES)
}

fn create_process(c: &Ctx, _buf: &mut [u8]) -> R {
    let old = c.file.process();
    if old.secondary {
        return Err(Errno::EINVAL);
    }
    let p = c.m.secondary_process(c.file.os_pid, c.file.memfd.clone());
    let old = c.file.replace_process(p);
    old.unref_file(c.m);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `kfd_ioctl_criu_args` has tail padding: it is traced from its
    /// bytes all the same (`FromBytes` needs no padding-free layout).
    #[test]
    fn criu_args_trace_field_by_field() {
        let fmt_criu = fmt_args::<kfd_ioctl_criu_args>;
        let mut b = vec![0xffu8; ioc_size(AMDKFD_IOC_CRIU_OP.request())];
        assert_eq!(b.len(), 56);
        b[..8].copy_from_slice(&0x1000u64.to_ne_bytes());
        b[44..48].copy_from_slice(&7u32.to_ne_bytes());
        b[48..52].copy_from_slice(&2u32.to_ne_bytes());
        let s = fmt_criu(&b);
        assert!(s.contains("devices: 4096"), "{s}");
        assert!(s.contains("pid: 7, op: 2"), "{s}");
        // A short user request: the missing fields read as zero.
        assert!(fmt_criu(&b[..8]).contains("op: 0"));
    }
}
