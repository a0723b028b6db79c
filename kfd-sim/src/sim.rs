//! The simulated machine handle: [`Sim`].

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use kfd_sys::{Driver, Errno};

use crate::kernel::fault::{normalize_name, FaultRule};
use crate::kernel::{FaultPlan, FileEntry, FileKind, Machine, Summary};
use crate::topology::Topology;

/// A private directory removed on drop.
#[derive(Debug)]
struct TempRoot(PathBuf);

impl TempRoot {
    fn create() -> io::Result<TempRoot> {
        static N: AtomicU64 = AtomicU64::new(0);
        static SWEPT: std::sync::Once = std::sync::Once::new();
        let base = std::env::var_os("KFD_SIM_TMPDIR")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        // Trees of processes that died without removing theirs (killed,
        // crashed): once per process, before adding one.
        SWEPT.call_once(|| sweep_stale(&base));
        for _ in 0..100 {
            let n = N.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let p = base.join(format!("kfd-sim-{}-{n}-{nanos:x}", std::process::id()));
            match std::fs::create_dir(&p) {
                Ok(()) => return Ok(TempRoot(p)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "no free temp dir name",
        ))
    }
}

impl Drop for TempRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Removes the `kfd-sim-<pid>-*` trees in `base` whose process is gone.
fn sweep_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("kfd-sim-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// The real file and offset behind a GEM mmap offset of a render node
/// ([`Sim::gem_mmap_target`]); the file stays open while this lives.
#[derive(Debug)]
pub struct GemMmapTarget {
    file: Arc<crate::kernel::memfd::Memfd>,
    offset: u64,
}

impl GemMmapTarget {
    /// The descriptor to map.
    pub fn fd(&self) -> BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.file.fd.as_fd()
    }

    /// The offset in it.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

#[derive(Debug)]
struct Inner {
    machine: Machine,
    root: TempRoot,
}

/// A simulated machine, seen from one simulated OS process.
///
/// Cheap to clone (an `Arc` inside); `Send + Sync`. Every handle made by
/// [`Sim::new`] or [`Sim::preset`] is the machine's first OS process;
/// [`Sim::new_os_process`] gives a view as another OS process on the same
/// machine (its own primary kfd process, its own buffers), so tests can show
/// isolation and pass dma-buf descriptors between processes.
///
/// ```
/// use kfd_sys::{ioctl::ioctl_plain, kfd, Driver};
/// use std::os::fd::AsFd;
///
/// let sim = kfd_sim::Sim::preset("mi210")?;
/// let fd = sim.open_kfd()?;
/// let mut v = kfd::kfd_ioctl_get_version_args::default();
/// ioctl_plain(&sim, fd.as_fd(), kfd::AMDKFD_IOC_GET_VERSION, &mut v)?;
/// assert_eq!(v.major_version, 1);
/// sim.close(fd);
/// assert!(sim.live_objects().is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Sim {
    inner: Arc<Inner>,
    pid: u32,
}

impl Sim {
    /// Builds a machine for `topology` and renders its sysfs tree into a
    /// private temporary directory (removed when the last handle drops).
    pub fn new(topology: Topology) -> io::Result<Sim> {
        let root = TempRoot::create()?;
        crate::sysfs::render(&topology, &root.0)?;
        let machine = Machine::new(topology);
        Ok(Sim {
            inner: Arc::new(Inner { machine, root }),
            pid: std::process::id(),
        })
    }

    /// A machine from a named preset (`mi210`, `mi300x`, `apu`, `navi31`, ...).
    pub fn preset(name: &str) -> io::Result<Sim> {
        let t = crate::presets::preset(name).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "no preset {name:?}; presets: {}",
                    crate::presets::NAMES.join(", ")
                ),
            )
        })?;
        Sim::new(t)
    }

    /// Another simulated OS process on the same machine.
    pub fn new_os_process(&self) -> Sim {
        Sim {
            inner: self.inner.clone(),
            pid: self
                .inner
                .machine
                .next_os_pid
                .fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The simulated OS process id of this handle (the real pid for the
    /// first handle).
    pub fn os_pid(&self) -> u32 {
        self.pid
    }

    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.inner.machine.topology
    }

    /// The directory holding the rendered `sys/...` tree.
    pub fn root(&self) -> &Path {
        &self.inner.root.0
    }

    /// The kernel model.
    pub fn machine(&self) -> &Machine {
        &self.inner.machine
    }

    /// Opens a simulated `/dev/kfd` (a memfd named `kfd-sim:kfd:<n>`).
    pub fn open_kfd_raw(&self) -> Result<OwnedFd, Errno> {
        self.inner.machine.open_kfd(self.pid)
    }

    /// Opens a simulated `/dev/dri/renderD<minor>`.
    pub fn open_render_raw(&self, minor: u32) -> Result<OwnedFd, Errno> {
        self.inner.machine.open_render(minor, self.pid)
    }

    /// Issues an ioctl on `fd` if it is a simulated file; `None` if it is
    /// not (the caller passes the call through to the real kernel).
    ///
    /// # Safety
    ///
    /// As for `ioctl(2)`: `arg` and every pointer embedded in it must be
    /// valid for what the request does. Pointers to unmapped memory are
    /// detected (EFAULT), but writes to mapped memory the caller does not
    /// own cannot be.
    pub unsafe fn ioctl_fd(
        &self,
        fd: RawFd,
        request: libc::c_ulong,
        arg: *mut libc::c_void,
    ) -> Option<Result<i32, Errno>> {
        let m = &self.inner.machine;
        let entry = m.lookup_fd(fd)?;
        Some(match entry {
            FileEntry::Kfd(k) => m.kfd_ioctl(&k, self.pid, request, arg as u64),
            FileEntry::Render(r) => match &r.drm {
                Some(d) => {
                    let gem = crate::kernel::ModelGem { m, render: &r };
                    // SAFETY: forwarded contract of this function.
                    unsafe { d.ioctl(&m.topology, &gem, request, arg) }
                }
                None => Err(Errno::ENODEV),
            },
            FileEntry::DmaBuf(_) | FileEntry::Smi(_) => Err(Errno::ENOTTY),
        })
    }

    /// Where an `mmap(addr, len, prot, flags, fd, offset)` must really
    /// map when `fd` is a simulated render node and `offset` a GEM mmap
    /// offset of it (from `AMDGPU_GEM_MMAP`): the pages of GEM objects live
    /// in their dma-buf file, not in the render node's, so the mapping is
    /// of [`GemMmapTarget::fd`] at [`GemMmapTarget::offset`]. `None`: not
    /// such a call; `EINVAL`: no live handle at `offset`, or `len` past the
    /// object (what the kernel's mmap answers).
    pub fn gem_mmap_target(
        &self,
        fd: RawFd,
        offset: u64,
        len: u64,
    ) -> Option<Result<GemMmapTarget, Errno>> {
        let t = self.inner.machine.gem_mmap_target(fd, offset, len)?;
        Some(t.map(|(file, offset)| GemMmapTarget { file, offset }))
    }

    /// The `AMDGPU_GEM_VA` mappings of the simulated render node `fd`
    /// (start address and mapping), `None` if `fd` is not one.
    pub fn drm_file_va(&self, fd: RawFd) -> Option<Vec<(u64, crate::drm::VaMapping)>> {
        match self.inner.machine.lookup_fd(fd)? {
            FileEntry::Render(r) => r.drm.as_ref().map(|d| d.va_mappings()),
            _ => None,
        }
    }

    /// The kind of simulated file behind `fd`.
    pub fn file_kind(&self, fd: RawFd) -> Option<FileKind> {
        self.inner.machine.file_kind(fd)
    }

    /// Must be called before a simulated descriptor is closed: releases the
    /// file when no other descriptor of this process refers to it.
    pub fn on_close(&self, fd: RawFd) {
        self.inner.machine.on_close(fd);
    }

    /// Live objects per kernel process (after releasing files whose
    /// descriptors are all gone).
    pub fn live_objects(&self) -> Summary {
        self.inner.machine.live_objects()
    }

    /// Writes one decoded line per ioctl to `w`.
    pub fn set_trace(&self, w: impl io::Write + Send + 'static) {
        self.inner.machine.set_trace(Some(Box::new(w)));
    }

    /// Stops tracing.
    pub fn clear_trace(&self) {
        self.inner.machine.set_trace(None);
    }

    /// Makes the `nth` (1-based) call of ioctl `name` (with or without the
    /// `AMDKFD_IOC_` prefix) fail with `errno`.
    pub fn inject_fault(&self, name: &str, nth: u64, errno: Errno) {
        self.inject_faults(FaultPlan {
            rules: vec![FaultRule {
                name: normalize_name(name),
                nth,
                errno,
            }],
        });
    }

    /// Adds a whole fault plan (see [`FaultPlan::parse`]).
    pub fn inject_faults(&self, plan: FaultPlan) {
        self.inner.machine.faults.add(plan);
    }

    /// The KFD ioctl minor version GET_VERSION reports (default: the newest
    /// modelled). Ioctls newer than `minor` then fail like on an old kernel.
    pub fn set_version_minor(&self, minor: u32) {
        self.inner
            .machine
            .minor_version
            .store(minor, Ordering::Relaxed);
    }

    /// Turns on the queue-buffer validation of Linux 6.12+
    /// (`kfd_queue_acquire_buffers`): ring, read/write pointers, EOP and
    /// CWSR areas must be GPU-mapped BOs of the exact sizes. Off by default,
    /// like older kernels.
    pub fn set_queue_buffer_validation(&self, on: bool) {
        self.inner
            .machine
            .validate_queue_buffers
            .store(on, Ordering::Relaxed);
    }

    /// The explicit doorbell ring: queue `queue_id` of the simulated
    /// `/dev/kfd` behind `fd` has new work, so the engine looks at it now
    /// instead of at its next poll. This is what `hsaKmtQueueRingDoorbell`
    /// should call on the simulator (the LD_PRELOAD library exports it to
    /// C as `kfd_sim_ring_doorbell`); writing the doorbell alone also works,
    /// with the engine's polling latency. `EBADF` if `fd` is not a
    /// simulated kfd file, `EINVAL` if it has no such queue.
    pub fn ring_doorbell(&self, fd: RawFd, queue_id: u32) -> Result<(), Errno> {
        self.inner.machine.ring_doorbell(fd, queue_id)
    }

    /// Counters of the machine's engine thread (wake-ups, polls, packets).
    pub fn engine_stats(&self) -> crate::kernel::EngineStats {
        self.inner.machine.engine_stats()
    }

    /// Simulates a reset of GPU `gpu_id` as SMI clients see it
    /// ([`Machine::gpu_reset`]): `GPU_PRE_RESET` and `GPU_POST_RESET` lines
    /// with the reset sequence number and `cause` (amdgpu's reset
    /// description, e.g. `MODE1`).
    pub fn gpu_reset(&self, gpu_id: u32, cause: &str) -> Result<(), Errno> {
        self.inner.machine.gpu_reset(gpu_id, cause)
    }

    /// The kernel's MMU notifier: call after this simulated OS process
    /// unmapped `[addr, addr + len)` (`munmap`, or `mmap` with `MAP_FIXED`
    /// over it). SVM ranges lose those pages at once, as in the kernel; the
    /// LD_PRELOAD library calls this from its `munmap`/`mmap` interposers.
    /// Returns the number of SVM pages removed.
    pub fn cpu_unmapped(&self, addr: u64, len: u64) -> u64 {
        self.inner.machine.cpu_unmapped(self.pid, addr, len)
    }

    /// Simulates a GPU VM fault: signals every MEMORY event of every
    /// process of this OS process with the given exception data, and
    /// raises the SMI `VMFAULT` event (`pid:task`, to every client of the
    /// GPU, as `kfd_smi_event_update_vmfault` does).
    pub fn signal_vm_fault(&self, gpu_id: u32, va: u64) {
        self.inner.machine.smi_event(
            gpu_id,
            0,
            kfd_sys::kfd::KFD_SMI_EVENT_VMFAULT,
            &format!("{:x}:{}\n", self.pid, crate::kernel::task_name()),
        );
        let procs = self.inner.machine.processes_of(self.pid);
        for p in procs {
            let data = kfd_sys::kfd::kfd_hsa_memory_exception_data {
                failure: kfd_sys::kfd::kfd_memory_exception_failure {
                    NotPresent: 1,
                    ReadOnly: 0,
                    NoExecute: 0,
                    imprecise: 0,
                },
                va,
                gpu_id,
                ErrorType: 0,
            };
            p.events
                .signal_type(kfd_sys::kfd::KFD_IOC_EVENT_MEMORY, Some(data));
        }
    }
}

impl Driver for Sim {
    fn open_kfd(&self) -> Result<OwnedFd, Errno> {
        self.open_kfd_raw()
    }

    fn open_render_node(&self, minor: u32) -> Result<OwnedFd, Errno> {
        if !(128..=255).contains(&minor) {
            return Err(Errno::EINVAL);
        }
        self.open_render_raw(minor)
    }

    unsafe fn ioctl(
        &self,
        fd: BorrowedFd<'_>,
        request: libc::c_ulong,
        arg: *mut libc::c_void,
    ) -> Result<i32, Errno> {
        // SAFETY: forwarded contract of Driver::ioctl.
        match unsafe { self.ioctl_fd(fd.as_raw_fd(), request, arg) } {
            Some(r) => r,
            None => {
                // Not a simulated file: what the real kernel does with it.
                // SAFETY: raw ioctl with the caller's guarantees.
                let r = unsafe { libc::syscall(libc::SYS_ioctl, fd.as_raw_fd(), request, arg) };
                if r < 0 {
                    Err(Errno::last())
                } else {
                    Ok(r as i32)
                }
            }
        }
    }

    fn close(&self, fd: OwnedFd) {
        self.on_close(fd.as_raw_fd());
        drop(fd);
    }

    fn root(&self) -> &Path {
        self.root()
    }
}
