//! Kernel processes (`kfd_process`), per-device data (`kfd_process_device`)
//! and the simulated files.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use kfd_sys::Errno;

use super::debug::DebugState;
use super::events::EventTable;
use super::memfd::Memfd;
use super::memory::{Bo, Extents, VaIndex};
use super::queues::Queue;
use super::svm::SvmMap;
use super::{layout, lock, FileEntry, Machine, ProcessSummary};

/// An open `/dev/kfd` file.
#[derive(Debug)]
pub(crate) struct KfdFile {
    /// Backing memfd (doorbell pages, MMIO pages, event page).
    pub memfd: Arc<Memfd>,
    /// Simulated OS process that opened it.
    pub os_pid: u32,
    /// The kernel process (`filep->private_data`), replaced by
    /// CREATE_PROCESS.
    process: Mutex<Arc<Process>>,
}

impl KfdFile {
    pub fn new(memfd: Arc<Memfd>, os_pid: u32, process: Arc<Process>) -> KfdFile {
        KfdFile {
            memfd,
            os_pid,
            process: Mutex::new(process),
        }
    }

    /// The file's kernel process.
    pub fn process(&self) -> Arc<Process> {
        lock(&self.process).clone()
    }

    /// Replaces the kernel process (CREATE_PROCESS); returns the old one.
    pub fn replace_process(&self, p: Arc<Process>) -> Arc<Process> {
        std::mem::replace(&mut *lock(&self.process), p)
    }
}

/// An open render node file (`drm_file`), which carries a GPU VM.
#[derive(Debug)]
pub(crate) struct RenderFile {
    /// Backing memfd: VRAM/GTT buffer pages at their mmap offsets.
    pub memfd: Arc<Memfd>,
    /// DRM minor.
    pub minor: u32,
    /// Device index (None if the minor has no GPU).
    pub dev: Option<usize>,
    /// Allocator of mmap offsets.
    pub extents: Mutex<Extents>,
    /// Kernel process id whose VM this file carries (`vm->process_info`).
    vm_owner: Mutex<Option<u64>>,
    /// All user descriptors were closed.
    pub user_closed: AtomicBool,
    /// DRM state of the file (GEM handles), see [`crate::drm`].
    pub drm: Option<crate::drm::DrmFile>,
    /// Buffers behind this file's GEM handles (object id → pages).
    pub gem: Mutex<std::collections::HashMap<u64, Arc<super::memory::BoStorage>>>,
}

impl RenderFile {
    pub fn new(
        memfd: Memfd,
        minor: u32,
        dev: Option<usize>,
        drm: Option<crate::drm::DrmFile>,
    ) -> RenderFile {
        RenderFile {
            memfd: Arc::new(memfd),
            minor,
            dev,
            extents: Mutex::new(Extents::new(layout::RENDER_FILE_SIZE)),
            vm_owner: Mutex::new(None),
            user_closed: AtomicBool::new(false),
            drm,
            gem: Mutex::new(std::collections::HashMap::new()),
        }
    }

    pub fn vm_owner(&self) -> Option<u64> {
        *lock(&self.vm_owner)
    }

    pub fn set_vm_owner(&self, owner: Option<u64>) {
        *lock(&self.vm_owner) = owner;
    }

    /// The file is released (`drm_gem_release`): every GEM handle and GPU
    /// VA mapping goes, with the references the handles held (a buffer
    /// imported into the render file that allocated it would otherwise
    /// hold that file forever).
    pub fn release_gem_handles(&self) {
        if let Some(d) = &self.drm {
            d.release_all();
        }
        let gone: Vec<_> = lock(&self.gem).drain().collect();
        drop(gone);
    }
}

/// The BOs of one process device: an idr-like table that hands out the
/// lowest free handle (`idr_alloc(.., 0, 0, ..)`) in O(log n).
#[derive(Debug, Default)]
pub(crate) struct BoTable {
    map: BTreeMap<u32, Bo>,
    /// One past the highest handle in use.
    next: u32,
    /// Free handles below `next`.
    free: BTreeSet<u32>,
}

impl BoTable {
    /// Inserts `bo` under the lowest free handle and returns it.
    pub fn insert(&mut self, bo: Bo) -> u32 {
        let id = match self.free.pop_first() {
            Some(id) => id,
            None => {
                self.next += 1;
                self.next - 1
            }
        };
        self.map.insert(id, bo);
        id
    }

    /// Removes the BO with handle `id`.
    pub fn remove(&mut self, id: u32) -> Option<Bo> {
        let bo = self.map.remove(&id)?;
        if id + 1 == self.next {
            self.next = id;
            while let Some(&last) = self.free.last() {
                if last + 1 != self.next {
                    break;
                }
                self.free.pop_last();
                self.next = last;
            }
        } else {
            self.free.insert(id);
        }
        Some(bo)
    }

    pub fn get(&self, id: &u32) -> Option<&Bo> {
        self.map.get(id)
    }

    pub fn get_mut(&mut self, id: &u32) -> Option<&mut Bo> {
        self.map.get_mut(id)
    }

    pub fn contains_key(&self, id: &u32) -> bool {
        self.map.contains_key(id)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    #[allow(dead_code)]
    pub fn values(&self) -> impl Iterator<Item = &Bo> {
        self.map.values()
    }

    /// All BOs, emptying the table.
    pub fn into_values(self) -> impl Iterator<Item = Bo> {
        self.map.into_values()
    }
}

/// Per-process per-device data.
#[derive(Debug)]
pub(crate) struct Pdd {
    /// Device index.
    pub dev: usize,
    /// gpu_id.
    pub gpu_id: u32,
    /// The render file whose VM was acquired (`pdd->drm_file`).
    pub vm: Option<Arc<RenderFile>>,
    /// Buffer objects by idr handle.
    pub bos: BoTable,
    /// Doorbell indices in use.
    pub doorbells: BTreeSet<u32>,
    /// The process doorbell slice was allocated.
    pub doorbells_allocated: bool,
    /// VRAM usage of this process on this device.
    pub vram_usage: u64,
    /// Cache policies (SET_MEMORY_POLICY).
    pub policy: Option<(u32, u32, u64, u64, u32)>,
    /// Trap handler (tba, tma).
    pub trap_handler: Option<(u64, u64)>,
    /// Scratch backing VA.
    pub scratch_va: u64,
    /// Address watch points (id → (address, mask, mode)).
    pub watch_points: BTreeMap<u32, (u64, u32, u32)>,
}

/// Mutable state of a kernel process, under one lock (`p->mutex`).
#[derive(Debug)]
pub(crate) struct ProcState {
    pub pdds: Vec<Pdd>,
    /// GPU VA mappings per device VM (index = device index), for O(log n)
    /// conflict checks.
    pub vm_va: Vec<VaIndex>,
    pub xnack: bool,
    pub queues: BTreeMap<u32, Queue>,
    pub svm: SvmMap,
    pub debug: DebugState,
    pub dead: bool,
}

/// A kernel process.
#[derive(Debug)]
pub(crate) struct Process {
    /// Unique id.
    pub id: u64,
    /// Simulated OS process.
    pub os_pid: u32,
    /// Made by CREATE_PROCESS.
    pub secondary: bool,
    /// The kfd memfd of the file that created it (home of the
    /// kernel-allocated event page).
    pub home: Arc<Memfd>,
    /// `p->mutex`.
    pub state: Mutex<ProcState>,
    /// Events (own lock; waits do not hold `state`).
    pub events: Arc<EventTable>,
    /// kfd files referring to it.
    pub file_refs: AtomicUsize,
}

impl Process {
    fn new(m: &Machine, os_pid: u32, secondary: bool, home: Arc<Memfd>) -> Process {
        let pdds = m
            .devices
            .iter()
            .map(|d| Pdd {
                dev: d.index,
                gpu_id: d.gpu_id,
                vm: None,
                bos: BoTable::default(),
                doorbells: BTreeSet::new(),
                doorbells_allocated: false,
                vram_usage: 0,
                policy: None,
                trap_handler: None,
                scratch_va: 0,
                watch_points: BTreeMap::new(),
            })
            .collect();
        // XNACK default: on only where the hardware and the kernel default
        // enable it (gfx90a/gfx942 with noretry=0 is off by default).
        Process {
            id: m.next_process.fetch_add(1, Ordering::Relaxed),
            os_pid,
            secondary,
            home,
            state: Mutex::new(ProcState {
                vm_va: m.devices.iter().map(|_| VaIndex::default()).collect(),
                pdds,
                xnack: false,
                queues: BTreeMap::new(),
                svm: SvmMap::default(),
                debug: DebugState::default(),
                dead: false,
            }),
            events: Arc::new(EventTable::new()),
            file_refs: AtomicUsize::new(1),
        }
    }

    /// Object counts.
    pub fn summary(&self) -> ProcessSummary {
        let st = lock(&self.state);
        let hws: Vec<_> = st.queues.values().map(|q| q.hw.clone()).collect();
        let mut s = ProcessSummary {
            os_pid: self.os_pid,
            secondary: self.secondary,
            bos: st.pdds.iter().map(|p| p.bos.len()).sum(),
            queues: st.queues.len(),
            events: self.events.count(),
            svm_ranges: st.svm.len(),
            waiters: self.events.waiter_count(),
            busy_queues: 0,
            failed_queues: 0,
        };
        // Queue execution state has its own lock, taken without this one.
        drop(st);
        let failed = kfd_gpu::engine::stop::ERROR | kfd_gpu::engine::stop::EVICTED;
        s.busy_queues = hws.iter().filter(|h| h.busy()).count();
        s.failed_queues = hws.iter().filter(|h| h.stop_bits() & failed != 0).count();
        s
    }

    /// One kfd file stopped referring to this process.
    pub fn unref_file(self: &Arc<Self>, m: &Machine) {
        let procs = lock(&m.processes);
        let prev = self.file_refs.fetch_sub(1, Ordering::SeqCst);
        drop(procs);
        if prev == 1 {
            self.destroy(m);
        }
    }

    /// `kfd_process_destroy`: tears everything down.
    pub fn destroy(self: &Arc<Self>, m: &Machine) {
        lock(&m.processes).retain(|p| !Arc::ptr_eq(p, self));
        let mut renders = Vec::new();
        let queues = {
            let mut st = lock(&self.state);
            std::mem::take(&mut st.queues)
        };
        for q in queues.values() {
            super::queues::retire(m, &q.hw);
        }
        self.events.destroy_all();
        {
            let mut st = lock(&self.state);
            st.dead = true;
            st.svm = SvmMap::default();
            st.debug = DebugState::default();
            for v in st.vm_va.iter_mut() {
                *v = VaIndex::default();
            }
            for pdd in st.pdds.iter_mut() {
                let bos = std::mem::take(&mut pdd.bos);
                for bo in bos.into_values() {
                    bo.release(m);
                }
                pdd.vram_usage = 0;
                if let Some(r) = pdd.vm.take() {
                    r.set_vm_owner(None);
                    renders.push(r);
                }
            }
        }
        for r in renders {
            m.release_render_if_closed(&r);
        }
    }
}

impl Machine {
    /// `kfd_create_process`: the primary process of `os_pid`, created on
    /// first open.
    pub(crate) fn primary_process(
        &self,
        os_pid: u32,
        home: &Arc<Memfd>,
    ) -> Result<Arc<Process>, Errno> {
        let mut procs = lock(&self.processes);
        if let Some(p) = procs.iter().find(|p| p.os_pid == os_pid && !p.secondary) {
            p.file_refs.fetch_add(1, Ordering::SeqCst);
            return Ok(p.clone());
        }
        let p = Arc::new(Process::new(self, os_pid, false, home.clone()));
        procs.push(p.clone());
        Ok(p)
    }

    /// A new secondary process for CREATE_PROCESS.
    pub(crate) fn secondary_process(&self, os_pid: u32, home: Arc<Memfd>) -> Arc<Process> {
        let p = Arc::new(Process::new(self, os_pid, true, home));
        lock(&self.processes).push(p.clone());
        p
    }

    /// The render file behind a descriptor number.
    pub(crate) fn render_by_fd(&self, fd: u32) -> Option<Arc<RenderFile>> {
        match self.lookup_fd(fd as i32)? {
            FileEntry::Render(r) => Some(r),
            _ => None,
        }
    }
}

impl Machine {
    /// Live kernel processes of a simulated OS process.
    pub(crate) fn processes_of(&self, os_pid: u32) -> Vec<Arc<Process>> {
        lock(&self.processes)
            .iter()
            .filter(|p| p.os_pid == os_pid)
            .cloned()
            .collect()
    }
}
