//! The kernel model: the amdkfd driver at its ABI.
//!
//! A [`Machine`] is one simulated computer: the topology, per-GPU device
//! state (VRAM accounting), the table of open simulated files and the
//! kernel processes (`kfd_process`). Ioctls are dispatched like
//! `kfd_chardev.c` does it: on `_IOC_NR` only (the type byte is not
//! checked), copying `_IOC_SIZE(cmd)` bytes in, zero-extending to the
//! model's own struct size, and copying `_IOC_SIZE(cmd)` bytes out.

mod debug;
mod dispatch;
mod events;
pub mod fault;
mod gpu_port;
pub(crate) mod memfd;
mod memory;
mod process;
mod queues;
mod smi;
mod svm;
pub(crate) mod usermem;

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use kfd_sys::sysfs::{HSA_MEM_HEAP_TYPE_FB_PRIVATE, HSA_MEM_HEAP_TYPE_FB_PUBLIC};
use kfd_sys::Errno;

use crate::topology::Topology;

pub use fault::{FaultParseError, FaultPlan, FaultRule};
pub use kfd_gpu::engine::{EngineStats, DEEP_IDLE_AFTER, DEEP_POLL, MAX_POLL, MIN_POLL};
pub use memfd::FileId;
pub(crate) use memory::ModelGem;
pub(crate) use process::{KfdFile, Process, RenderFile};
pub(crate) use smi::task_name;

pub(crate) use kfd_sys::sync::lock;
/// Page size the model assumes (the ABI's, and x86-64's).
pub(crate) use kfd_sys::PAGE_SIZE;

/// The trace writer, shared by the ioctl layer and the engine thread.
pub(crate) type Trace = kfd_gpu::engine::Trace;

/// The open-file table of a machine, shared with its engine (which raises
/// SMI events on GPU faults).
pub(crate) type Files = Arc<Mutex<HashMap<FileId, FileEntry>>>;

/// Raises SMI event `event` of process `pid` (0: of no process) on GPU
/// `gpu_id`: every SMI file of that GPU in `files` that asked for it gets
/// the line (`kfd_smi_event_add`).
pub(crate) fn smi_event(files: &Files, gpu_id: u32, pid: u32, event: u32, payload: &str) {
    let clients: Vec<Arc<smi::SmiFile>> = lock(files)
        .values()
        .filter_map(|e| match e {
            FileEntry::Smi(s) if s.gpu_id == gpu_id => Some(s.clone()),
            _ => None,
        })
        .collect();
    for c in clients {
        c.deliver(event, pid, payload);
    }
}

/// Rounds up to a multiple of `a` (a power of two).
pub(crate) fn align_up(v: u64, a: u64) -> u64 {
    v.checked_add(a - 1).map_or(!(a - 1), |x| x & !(a - 1))
}

/// What kind of simulated file a descriptor refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `/dev/kfd`.
    Kfd,
    /// `/dev/dri/renderD<minor>`.
    Render {
        /// The DRM minor (128..=255).
        minor: u32,
    },
    /// A dma-buf exported by `AMDKFD_IOC_EXPORT_DMABUF`.
    DmaBuf,
    /// An SMI events file from `AMDKFD_IOC_SMI_EVENTS`.
    SmiEvents,
}

/// Live objects of one kernel process, for leak checks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessSummary {
    /// Simulated OS process id.
    pub os_pid: u32,
    /// True for a process made by `AMDKFD_IOC_CREATE_PROCESS`.
    pub secondary: bool,
    /// Buffer objects (all devices).
    pub bos: usize,
    /// User-mode queues.
    pub queues: usize,
    /// Events.
    pub events: usize,
    /// SVM ranges.
    pub svm_ranges: usize,
    /// Threads blocked in `AMDKFD_IOC_WAIT_EVENTS` at the moment of the
    /// summary (not a leak: lets tests wait until a waiter really sleeps).
    pub waiters: usize,
    /// Queues holding packets the engine has not consumed (their write
    /// pointer is past the read index): work still in flight, or stuck.
    pub busy_queues: usize,
    /// Queues stopped by an error they raised or by a GPU memory fault.
    pub failed_queues: usize,
}

/// Live objects of the whole machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// One entry per live kernel process.
    pub processes: Vec<ProcessSummary>,
    /// Open simulated files (kfd, render, dma-buf, SMI).
    pub files: usize,
    /// VRAM in use per GPU (bytes, in topology order).
    pub vram_used: Vec<u64>,
}

impl Summary {
    /// True when nothing at all is left: no kernel process, no simulated
    /// file with an open descriptor (kfd, render node, dma-buf, SMI) and no
    /// VRAM accounted as used. A program that still holds a render-node or
    /// dma-buf descriptor is not "empty" by this measure; see
    /// [`Summary::kernel_objects_empty`].
    pub fn is_empty(&self) -> bool {
        self.processes.is_empty() && self.files == 0 && self.vram_used.iter().all(|v| *v == 0)
    }

    /// True when no kernel object is live: no buffer object, queue, event
    /// or SVM range in any kernel process, and no VRAM accounted as used.
    /// Open files (and kernel processes that own nothing) are not counted,
    /// so a leak check at the exit of a program that still holds its
    /// render-node descriptor, or before `/dev/kfd` is closed, passes.
    pub fn kernel_objects_empty(&self) -> bool {
        self.processes
            .iter()
            .all(|p| p.bos == 0 && p.queues == 0 && p.events == 0 && p.svm_ranges == 0)
            && self.vram_used.iter().all(|v| *v == 0)
    }

    /// Buffer objects over all kernel processes.
    pub fn bos(&self) -> usize {
        self.processes.iter().map(|p| p.bos).sum()
    }
}

/// Per-GPU device state derived from the topology.
#[derive(Debug)]
pub(crate) struct Device {
    /// Index among the GPUs (0..n).
    pub index: usize,
    /// gpu_id from sysfs.
    pub gpu_id: u32,
    /// DRM render minor.
    pub minor: u32,
    /// VRAM size in bytes (frame-buffer banks).
    pub vram_size: u64,
    /// VRAM accounted as used (aligned like amdgpu's vram_used_aligned).
    pub vram_used: Arc<Mutex<u64>>,
    /// Host-visible VRAM (large BAR).
    pub large_bar: bool,
    /// `gfx_target_version` (e.g. 90010).
    pub gfx_version: u32,
    /// Node properties used by the model.
    pub simd_count: u32,
    /// SIMDs per CU.
    pub simd_per_cu: u32,
    /// Shader engines.
    pub array_count: u32,
    /// Shader arrays per engine.
    pub simd_arrays_per_engine: u32,
    /// LDS size in KiB.
    pub lds_size_in_kb: u32,
    /// XCCs (partitions) of the node.
    pub num_xcc: u32,
    /// SDMA engines.
    pub num_sdma_engines: u32,
    /// xGMI SDMA engines.
    pub num_sdma_xgmi_engines: u32,
    /// SDMA queues per engine.
    pub num_sdma_queues_per_engine: u32,
    /// Global wave syncs.
    pub num_gws: u32,
    /// Integrated GPU (shares system memory).
    pub is_apu: bool,
    /// Node `capability` word.
    pub capability: u32,
    /// `reset_seq_num`: GPU resets so far.
    pub reset_seq: AtomicU32,
}

/// Address-space layout constants of the model (gfx9+, x86-64).
pub(crate) mod layout {
    /// LDS aperture base (gfx9+).
    pub const LDS_BASE: u64 = 1 << 48;
    /// Scratch aperture base (gfx9+).
    pub const SCRATCH_BASE: u64 = 2 << 48;
    /// First user address of the GPUVM (SVM) aperture: `SVM_USER_BASE` of
    /// the newest kfd_flat_memory.c (CWSR TBA/TMA size + 2 pages).
    pub const GPUVM_BASE: u64 = 4 * 4096;
    /// gpuvm_size: the start of the canonical-address hole.
    pub const GPUVM_SIZE: u64 = 1 << 47;
    /// One process doorbell slice per device (1024 64-bit doorbells).
    pub const DOORBELL_SLICE: u64 = 8192;
    /// Stride between devices in the kfd memfd.
    pub const KFD_DEV_STRIDE: u64 = 0x10000;
    /// Offset of the MMIO remap page within a device's kfd memfd window.
    pub const KFD_MMIO_OFF: u64 = 0x8000;
    /// Offset of the kernel-allocated event page in the kfd memfd.
    pub const KFD_EVENTS_OFF: u64 = 0x1000_0000;
    /// Size of a kfd memfd.
    pub const KFD_FILE_SIZE: u64 = 0x2000_0000;
    /// Size of a render-node memfd (sparse).
    pub const RENDER_FILE_SIZE: u64 = 1 << 42;
    /// Highest GPU VA + 1 of a GPU VM (48-bit).
    pub const VM_LIMIT: u64 = 1 << 48;
}

/// A simulated machine.
pub struct Machine {
    /// The topology it was built from.
    pub topology: Topology,
    pub(crate) devices: Vec<Device>,
    pub(crate) files: Files,
    pub(crate) processes: Mutex<Vec<Arc<Process>>>,
    pub(crate) next_process: AtomicU64,
    pub(crate) faults: fault::Faults,
    trace: Trace,
    /// The GPU's packet processors (`kfd_gpu::engine`).
    pub(crate) engine: kfd_gpu::engine::Engine,
    pub(crate) minor_version: AtomicU32,
    pub(crate) validate_queue_buffers: AtomicBool,
    pub(crate) real_pid: i32,
    pub(crate) next_os_pid: AtomicU32,
}

impl std::fmt::Debug for Machine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Machine")
            .field("topology", &self.topology.name)
            .field("gpus", &self.devices.len())
            .finish_non_exhaustive()
    }
}

/// One entry of the open-file table.
#[derive(Debug, Clone)]
pub(crate) enum FileEntry {
    Kfd(Arc<KfdFile>),
    Render(Arc<RenderFile>),
    DmaBuf(Arc<memory::DmaBufFile>),
    Smi(Arc<smi::SmiFile>),
}

impl FileEntry {
    fn kind(&self) -> FileKind {
        match self {
            FileEntry::Kfd(_) => FileKind::Kfd,
            FileEntry::Render(r) => FileKind::Render { minor: r.minor },
            FileEntry::DmaBuf(_) => FileKind::DmaBuf,
            FileEntry::Smi(_) => FileKind::SmiEvents,
        }
    }

    /// The file's identity (that of the user's descriptors).
    fn id(&self) -> FileId {
        match self {
            FileEntry::Kfd(k) => k.memfd.id,
            FileEntry::Render(r) => r.memfd.id,
            FileEntry::DmaBuf(d) => d.memfd.id,
            FileEntry::Smi(s) => s.id,
        }
    }

    /// The `/proc/self/fd` link of the user's descriptors and the model's
    /// own descriptor of the file (never counted as a user's).
    fn link_and_own(&self) -> (String, std::os::fd::RawFd) {
        use std::os::fd::AsRawFd;
        let m = match self {
            FileEntry::Kfd(k) => &k.memfd,
            FileEntry::Render(r) => &r.memfd,
            FileEntry::DmaBuf(d) => &d.memfd,
            FileEntry::Smi(s) => return (s.link_text(), s.own.as_raw_fd()),
        };
        (m.link_text(), m.fd.as_raw_fd())
    }
}

fn prop_u32(p: &crate::topology::Props, key: &str, default: u32) -> u32 {
    p.get(key).map_or(default, |v| v as u32)
}

impl Machine {
    /// Builds the machine model for `topology`.
    pub fn new(topology: Topology) -> Machine {
        dispatch::init_table();
        let trace: Trace = Arc::new(Mutex::new(None));
        let mut devices = Vec::new();
        for (index, (_, node)) in topology.gpus().enumerate() {
            let p = &node.properties;
            let mut vram = 0u64;
            let mut large_bar = false;
            for bank in &node.mem_banks {
                // kfd_crat.c reports all VRAM as one FB_PUBLIC bank when
                // none of it is private (a large BAR), else as one
                // FB_PRIVATE bank of the whole size.
                let heap = bank.get_or_zero("heap_type");
                if heap == u64::from(HSA_MEM_HEAP_TYPE_FB_PUBLIC) {
                    vram += bank.get_or_zero("size_in_bytes");
                    large_bar = true;
                } else if heap == u64::from(HSA_MEM_HEAP_TYPE_FB_PRIVATE) {
                    vram += bank.get_or_zero("size_in_bytes");
                }
            }
            if vram == 0 {
                vram = p.get_or_zero("local_mem_size");
            }
            devices.push(Device {
                index,
                gpu_id: node.gpu_id,
                minor: prop_u32(p, "drm_render_minor", 128 + index as u32),
                vram_size: vram,
                vram_used: Arc::new(Mutex::new(0)),
                large_bar,
                gfx_version: prop_u32(p, "gfx_target_version", 90010),
                simd_count: prop_u32(p, "simd_count", 0),
                simd_per_cu: prop_u32(p, "simd_per_cu", 4).max(1),
                array_count: prop_u32(p, "array_count", 1).max(1),
                simd_arrays_per_engine: prop_u32(p, "simd_arrays_per_engine", 1).max(1),
                lds_size_in_kb: prop_u32(p, "lds_size_in_kb", 64),
                num_xcc: prop_u32(p, "num_xcc", 1).max(1),
                num_sdma_engines: prop_u32(p, "num_sdma_engines", 2),
                num_sdma_xgmi_engines: prop_u32(p, "num_sdma_xgmi_engines", 0),
                num_sdma_queues_per_engine: prop_u32(p, "num_sdma_queues_per_engine", 8),
                num_gws: prop_u32(p, "num_gws", 0),
                is_apu: p.get_or_zero("cpu_cores_count") > 0,
                capability: prop_u32(p, "capability", 0),
                reset_seq: AtomicU32::new(0),
            });
        }
        let files: Files = Arc::new(Mutex::new(HashMap::new()));
        Machine {
            topology,
            devices,
            files: files.clone(),
            processes: Mutex::new(Vec::new()),
            next_process: AtomicU64::new(1),
            faults: fault::Faults::default(),
            trace: trace.clone(),
            engine: kfd_gpu::engine::Engine::new(
                trace,
                kfd_gpu::engine::Clocks {
                    gpu: dispatch::gpu_clock,
                    system: || dispatch::now_ns(libc::CLOCK_BOOTTIME),
                },
                crate::preload::enter_sim_thread,
            ),
            minor_version: AtomicU32::new(kfd_sys::kfd::KFD_IOCTL_MINOR_VERSION),
            validate_queue_buffers: AtomicBool::new(false),
            // SAFETY: getpid has no preconditions.
            real_pid: unsafe { libc::getpid() },
            next_os_pid: AtomicU32::new(1000),
        }
    }

    /// The doorbell of queue `queue_id` of the kfd file behind `fd` was
    /// rung: the engine looks at the queues at once.
    pub fn ring_doorbell(&self, fd: i32, queue_id: u32) -> Result<(), Errno> {
        let Some(FileEntry::Kfd(k)) = self.lookup_fd(fd) else {
            return Err(Errno::EBADF);
        };
        if !lock(&k.process().state).queues.contains_key(&queue_id) {
            return Err(Errno::EINVAL);
        }
        self.engine.kick();
        Ok(())
    }

    /// Counters of the engine thread.
    pub fn engine_stats(&self) -> EngineStats {
        self.engine.stats()
    }

    /// The device with `gpu_id`.
    pub(crate) fn device_by_id(&self, gpu_id: u32) -> Option<&Device> {
        self.devices.iter().find(|d| d.gpu_id == gpu_id)
    }

    /// Raises SMI event `event` of process `pid` (0: of no process) on GPU
    /// `gpu_id`: every SMI file of that GPU that asked for it gets the line.
    pub(crate) fn smi_event(&self, gpu_id: u32, pid: u32, event: u32, payload: &str) {
        smi_event(&self.files, gpu_id, pid, event, payload);
    }

    /// A GPU reset as the SMI clients see it (`kfd_smi_event_update_gpu_reset`):
    /// `GPU_PRE_RESET` with the next reset sequence number, then
    /// `GPU_POST_RESET`, both to every client of the GPU. Nothing else of
    /// a reset (queue loss, VRAM loss) is modelled. Unknown GPU → `EINVAL`.
    pub fn gpu_reset(&self, gpu_id: u32, cause: &str) -> Result<(), Errno> {
        use kfd_sys::kfd::{KFD_SMI_EVENT_GPU_POST_RESET, KFD_SMI_EVENT_GPU_PRE_RESET};
        let dev = self.device_by_id(gpu_id).ok_or(Errno::EINVAL)?;
        let seq = dev.reset_seq.fetch_add(1, Ordering::SeqCst) + 1;
        self.smi_event(
            gpu_id,
            0,
            KFD_SMI_EVENT_GPU_PRE_RESET,
            &format!("{seq:x} {cause}\n"),
        );
        self.smi_event(
            gpu_id,
            0,
            KFD_SMI_EVENT_GPU_POST_RESET,
            &format!("{seq:x} {cause}\n"),
        );
        Ok(())
    }

    /// Sets the trace writer (None turns tracing off).
    pub fn set_trace(&self, w: Option<Box<dyn Write + Send>>) {
        *lock(&self.trace) = w;
    }

    pub(crate) fn tracing(&self) -> bool {
        lock(&self.trace).is_some()
    }

    pub(crate) fn trace_line(&self, line: &str) {
        if let Some(w) = lock(&self.trace).as_mut() {
            let _ = writeln!(w, "{line}");
            let _ = w.flush();
        }
    }

    /// Registers a new file.
    pub(crate) fn insert_file(&self, entry: FileEntry) {
        let id = entry.id();
        lock(&self.files).insert(id, entry);
    }

    /// Looks up the file a descriptor refers to.
    pub(crate) fn lookup_fd(&self, fd: i32) -> Option<FileEntry> {
        let id = memfd::file_id(fd).ok()?;
        lock(&self.files).get(&id).cloned()
    }

    /// The kind of the simulated file behind `fd`, if any.
    pub fn file_kind(&self, fd: i32) -> Option<FileKind> {
        self.lookup_fd(fd).map(|e| e.kind())
    }

    /// Called before `fd` is closed: when no other descriptor of this
    /// process refers to the same file, the file is released.
    pub fn on_close(&self, fd: i32) {
        let Ok(id) = memfd::file_id(fd) else {
            return;
        };
        let entry = match lock(&self.files).get(&id) {
            Some(e) => e.clone(),
            None => return,
        };
        let (link, own) = entry.link_and_own();
        let others = memfd::descriptors_with_link(&link, &[fd, own]);
        if others.is_empty() {
            self.release_file(id);
        }
    }

    /// Releases every file no descriptor refers to any more (descriptors
    /// dropped without `on_close`).
    pub fn sweep(&self) {
        let entries: Vec<(FileId, FileEntry)> = lock(&self.files)
            .iter()
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        for (id, e) in entries {
            let (link, own) = e.link_and_own();
            if memfd::descriptors_with_link(&link, &[own]).is_empty() {
                self.release_file(id);
            }
        }
    }

    /// The last descriptor of a file went away: `release()` of the file.
    fn release_file(&self, id: FileId) {
        let entry = lock(&self.files).remove(&id);
        match entry {
            Some(FileEntry::Kfd(k)) => {
                let p = k.process();
                p.unref_file(self);
            }
            Some(FileEntry::Render(r)) => {
                // A render file whose VM is held by a kfd process stays
                // alive (the process holds a reference) until that process
                // goes away.
                r.user_closed.store(true, Ordering::SeqCst);
                if r.vm_owner().is_some() {
                    lock(&self.files).insert(id, FileEntry::Render(r));
                } else {
                    r.release_gem_handles();
                }
            }
            Some(FileEntry::DmaBuf(_)) | Some(FileEntry::Smi(_)) | None => {}
        }
    }

    /// Drops a render file kept alive only by a process that has ended.
    pub(crate) fn release_render_if_closed(&self, r: &Arc<RenderFile>) {
        if r.user_closed.load(Ordering::SeqCst) && r.vm_owner().is_none() {
            lock(&self.files).remove(&r.memfd.id);
            r.release_gem_handles();
        }
    }

    /// A summary of live objects.
    pub fn live_objects(&self) -> Summary {
        self.sweep();
        let procs = lock(&self.processes).clone();
        let processes = procs.iter().map(|p| p.summary()).collect();
        Summary {
            processes,
            files: lock(&self.files).len(),
            vram_used: self.devices.iter().map(|d| *lock(&d.vram_used)).collect(),
        }
    }

    /// Opens a new simulated `/dev/kfd` for simulated OS process `os_pid`.
    pub fn open_kfd(&self, os_pid: u32) -> Result<std::os::fd::OwnedFd, Errno> {
        let memfd = Arc::new(memfd::Memfd::create("kfd", layout::KFD_FILE_SIZE)?);
        let user_fd = memfd.dup()?;
        let process = self.primary_process(os_pid, &memfd)?;
        let file = Arc::new(KfdFile::new(memfd, os_pid, process));
        self.insert_file(FileEntry::Kfd(file));
        Ok(user_fd)
    }

    /// Opens a new simulated render node.
    pub fn open_render(&self, minor: u32, _os_pid: u32) -> Result<std::os::fd::OwnedFd, Errno> {
        if !(128..=255).contains(&minor) {
            return Err(Errno::ENODEV);
        }
        let dev = self.devices.iter().position(|d| d.minor == minor);
        if dev.is_none() {
            return Err(Errno::ENOENT);
        }
        let memfd = memfd::Memfd::create(&format!("renderD{minor}"), layout::RENDER_FILE_SIZE)?;
        let user_fd = memfd.dup()?;
        let file = Arc::new(RenderFile::new(
            memfd,
            minor,
            dev,
            crate::drm::DrmFile::new(&self.topology, minor),
        ));
        self.insert_file(FileEntry::Render(file));
        Ok(user_fd)
    }
}
