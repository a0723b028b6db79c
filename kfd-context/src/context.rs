//! The [`Context`] aggregate root.

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

use kfd_debug::Debug;
use kfd_event::Events;
use kfd_fmm::Fmm;
use kfd_perf::Perf;
use kfd_queue::{QueueOptions, Queues};
use kfd_sys::kfd::{self, kfd_ioctl_create_process_args, kfd_ioctl_get_version_args};
use kfd_sys::sync::lock;
use kfd_sys::{DeviceFile, Driver};
use kfd_topology::{Aperture, GpuApertures};
use kfd_topology::{SnapshotOptions, Topology};

use crate::{ContextError, ContextOptions};

/// Whether a context is the process's primary context or a secondary one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextKind {
    /// The refcounted, process-wide context: all features (debugger, SVM,
    /// userptr for paged memory).
    Primary,
    /// An isolated context with its own `/dev/kfd` descriptor and kernel
    /// process (CREATE_PROCESS): no debugger, no SVM API, no userptr for
    /// paged memory; closing it tears everything down.
    Secondary,
}

/// A process-unique context identity; objects remember the id of the
/// context that created them so that using them elsewhere is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContextId(pub u64);

impl fmt::Display for ContextId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The KFD ioctl interface version (`AMDKFD_IOC_GET_VERSION`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct KfdVersion {
    /// Major version (always 1 for a supported driver).
    pub major: u32,
    /// Minor version: which ioctls and fields exist.
    pub minor: u32,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// How many topology reads (with different options) a context keeps for
/// reuse: the snapshot's and the memory manager's at a 5.2.3-style open.
const KEPT_READS: usize = 2;

/// A topology read a context keeps for reuse, with the options it was
/// read with.
pub(crate) type KeptRead = (Arc<Topology>, SnapshotOptions);

/// What a context knows of the topology, changed as one: a reader sees
/// the snapshot and the state of the apertures from one change, never
/// from half of one ([`Context::node_view`]).
#[derive(Default)]
struct TopologyState {
    /// The snapshot `hsaKmtAcquireSystemProperties` took; `None` before
    /// it and after the release.
    snapshot: Option<Arc<Topology>>,
    /// The last reads ([`KEPT_READS`] at most, the newest first), also
    /// after they were released: the next read with the same options
    /// takes one again while the kernel's `generation_id` is unchanged.
    reads: Vec<KeptRead>,
    /// True while the memory manager's apertures are released
    /// ([`Context::release_apertures`]).
    apertures_released: bool,
}

impl TopologyState {
    /// Keeps `topo`, read with `options`, as the newest read (in place of
    /// an older one with the same options).
    fn remember(&mut self, topo: &Arc<Topology>, options: &SnapshotOptions) {
        self.reads.retain(|(_, with)| with != options);
        self.reads.insert(0, (topo.clone(), options.clone()));
        self.reads.truncate(KEPT_READS);
    }
}

/// What the creation lock guards: the render-node files the memory
/// manager is made with ([`Context::fmm_options`]), opened on first need
/// and kept for the context's lifetime.
#[derive(Default)]
struct Creation {
    /// The files, by render-node minor.
    render_nodes: Vec<(u32, Arc<DeviceFile>)>,
}

/// A context's state.
///
/// Two locks, always taken in this order: `creation`, then `topology`
/// (no path takes `creation` while it holds `topology`). The
/// sub-contexts' own locks come after both; the sub-contexts never call
/// back into the context.
pub(crate) struct Inner {
    id: ContextId,
    kind: ContextKind,
    options: ContextOptions,
    version: KfdVersion,
    owner_pid: u32,
    kfd: Arc<DeviceFile>,
    /// The snapshot, the kept reads and whether the apertures are
    /// released: read by every lookup (a read lock, no system call),
    /// written in short sections that never read the topology tree.
    topology: RwLock<TopologyState>,
    // The sub-contexts, each made once on first use (from the topology
    // snapshot current then) and borrowed by every call after that.
    fmm: OnceLock<Arc<Fmm>>,
    events: OnceLock<Arc<Events>>,
    queues: OnceLock<Arc<Queues>>,
    debug: OnceLock<Arc<Debug>>,
    perf: OnceLock<Arc<Perf>>,
    /// The creation lock: held while a sub-context is made (so each is
    /// made once) and across [`Context::acquire_properties`],
    /// [`Context::release_properties`], [`Context::release_apertures`]
    /// and [`Context::reacquire_apertures`] (so the memory manager's
    /// apertures never change while a sub-context is being made from
    /// it). Not taken once the sub-contexts a call needs exist.
    creation: Mutex<Creation>,
    /// What the layer above keeps per context ([`Context::attached`]).
    attached: OnceLock<Box<dyn Any + Send + Sync>>,
}

impl Drop for Inner {
    /// Tears the sub-contexts down in dependency order: queues (they use
    /// events and buffers), events (the event page is a buffer), debug and
    /// perf, then the memory manager; what the layer above attached goes
    /// before the descriptor, which closes last.
    fn drop(&mut self) {
        if let Some(q) = self.queues.take() {
            q.teardown();
        }
        if let Some(e) = self.events.take() {
            e.teardown();
        }
        drop(self.debug.take());
        drop(self.perf.take());
        drop(self.fmm.take());
        drop(self.attached.take());
    }
}

/// A KFD context: one `/dev/kfd` descriptor (hence one kernel process),
/// its topology snapshot, and its sub-contexts, each created on first use.
///
/// `Context` is a cheap handle (`Clone` shares the same context). Two
/// different contexts never share kernel objects: a buffer, queue or event
/// carries the [`ContextId`] of the context that made it.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<Inner>,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("id", &self.inner.id)
            .field("kind", &self.inner.kind)
            .field("version", &self.inner.version)
            .field("svm_api", &self.inner.options.svm_api)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// Opens `/dev/kfd` through `driver` and checks the interface version.
    /// With [`ContextKind::Secondary`] the descriptor is first turned into
    /// a new kernel process with `AMDKFD_IOC_CREATE_PROCESS`.
    pub(crate) fn open(
        driver: Arc<dyn Driver>,
        kind: ContextKind,
        options: ContextOptions,
    ) -> Result<Context, ContextError> {
        let kfd = DeviceFile::open_kfd(driver).map_err(ContextError::Open)?;
        let mut v = kfd_ioctl_get_version_args::default();
        kfd.ioctl_plain(kfd::AMDKFD_IOC_GET_VERSION, &mut v)
            .map_err(|errno| ContextError::Ioctl {
                request: kfd::AMDKFD_IOC_GET_VERSION.info(),
                errno,
            })?;
        let version = KfdVersion {
            major: v.major_version,
            minor: v.minor_version,
        };
        if version.major != kfd::KFD_IOCTL_MAJOR_VERSION {
            return Err(ContextError::DriverMismatch {
                major: version.major,
                minor: version.minor,
            });
        }
        if kind == ContextKind::Secondary {
            let mut args = kfd_ioctl_create_process_args::default();
            kfd.ioctl_plain(kfd::AMDKFD_IOC_CREATE_PROCESS, &mut args)
                .map_err(|errno| ContextError::Ioctl {
                    request: kfd::AMDKFD_IOC_CREATE_PROCESS.info(),
                    errno,
                })?;
        }
        let options = match kind {
            ContextKind::Primary => options,
            ContextKind::Secondary => options.for_secondary(),
        };
        Ok(Context {
            inner: Arc::new(Inner {
                id: ContextId(NEXT_ID.fetch_add(1, Ordering::Relaxed)),
                kind,
                options,
                version,
                owner_pid: std::process::id(),
                kfd: Arc::new(kfd),
                topology: RwLock::new(TopologyState::default()),
                fmm: OnceLock::new(),
                events: OnceLock::new(),
                queues: OnceLock::new(),
                debug: OnceLock::new(),
                perf: OnceLock::new(),
                creation: Mutex::new(Creation::default()),
                attached: OnceLock::new(),
            }),
        })
    }

    /// Opens a new secondary context on `driver`: its own descriptor, its
    /// own kernel process, its own render-node handles. Secondary contexts
    /// are not reference counted; the context is torn down when the last
    /// handle to it is dropped (or [`Context::close`] is called).
    pub fn open_secondary(driver: Arc<dyn Driver>) -> Result<Context, ContextError> {
        Context::open_secondary_with(driver, ContextOptions::from_env())
    }

    /// [`Context::open_secondary`] with explicit options (the SVM API and
    /// userptr-for-paged-memory are forced off for secondaries).
    pub fn open_secondary_with(
        driver: Arc<dyn Driver>,
        options: ContextOptions,
    ) -> Result<Context, ContextError> {
        Context::open(driver, ContextKind::Secondary, options)
    }

    /// This context's identity.
    pub fn id(&self) -> ContextId {
        self.inner.id
    }

    /// Primary or secondary.
    pub fn kind(&self) -> ContextKind {
        self.inner.kind
    }

    /// True for the primary context.
    pub fn is_primary(&self) -> bool {
        self.inner.kind == ContextKind::Primary
    }

    /// Whether the SVM API is used by this context.
    pub fn svm_api(&self) -> bool {
        self.inner.options.svm_api
    }

    /// The options the context was opened with.
    pub fn options(&self) -> &ContextOptions {
        &self.inner.options
    }

    /// The KFD ioctl interface version.
    pub fn version(&self) -> KfdVersion {
        self.inner.version
    }

    /// The context's `/dev/kfd` descriptor.
    pub fn kfd(&self) -> &Arc<DeviceFile> {
        &self.inner.kfd
    }

    /// The driver the context talks through.
    pub fn driver(&self) -> &Arc<dyn Driver> {
        self.inner.kfd.driver()
    }

    /// True when this handle was created by another process (a `fork()`
    /// parent): the kernel refuses its descriptor in this process.
    pub fn is_inherited(&self) -> bool {
        self.inner.owner_pid != std::process::id()
    }

    /// Fails with [`ContextError::KernelTooOld`] unless the driver has at
    /// least interface version 1.`minor`.
    pub fn require_minor(&self, minor: u32) -> Result<(), ContextError> {
        if self.inner.version.minor < minor {
            Err(ContextError::KernelTooOld {
                needed: minor,
                have: self.inner.version.minor,
            })
        } else {
            Ok(())
        }
    }

    /// Takes a topology snapshot for this context (replacing any earlier
    /// one) and returns it.
    pub fn acquire_system_properties(&self) -> Result<Arc<Topology>, ContextError> {
        self.acquire_system_properties_with(&SnapshotOptions::from_env(Default::default()))
    }

    /// [`Context::acquire_system_properties`] with explicit snapshot
    /// options (the `hsakmt` border picks the rules of the C library
    /// generation it serves).
    ///
    /// While the kernel's topology `generation_id` is the one of the last
    /// snapshot this context read with the same options (also one it
    /// released since), that snapshot is taken again: one read of
    /// `generation_id` instead of the whole tree. The C library re-reads
    /// the tree after a release, and reads it again while the generation
    /// changes under it; so does this when the generation differs.
    pub fn acquire_system_properties_with(
        &self,
        options: &SnapshotOptions,
    ) -> Result<Arc<Topology>, ContextError> {
        let topo = self.read_topology(options)?;
        let mut state = self.topology_mut();
        state.remember(&topo, options);
        state.snapshot = Some(topo.clone());
        Ok(topo)
    }

    /// The topology with `options`: one this context read with the same
    /// options while the kernel's `generation_id` is still its own (one
    /// read of `generation_id`), a new read otherwise. The tree is read
    /// without the topology lock; the caller keeps the read
    /// ([`TopologyState::remember`]).
    fn read_topology(&self, options: &SnapshotOptions) -> Result<Arc<Topology>, ContextError> {
        let kept = self
            .topology_state()
            .reads
            .iter()
            .find(|(_, with)| with == options)
            .map(|(topo, _)| topo.clone());
        if let Some(topo) = kept {
            if Topology::kernel_generation(&**self.driver())? == topo.generation_id {
                return Ok(topo);
            }
        }
        Ok(Arc::new(Topology::snapshot_with(
            &**self.driver(),
            options,
        )?))
    }

    /// A watch on this context's `/dev/kfd` descriptor: closed once the
    /// last reference to the context (or to a sub-context) is gone and the
    /// kernel process is released.
    pub(crate) fn close_watch(&self) -> kfd_sys::CloseWatch {
        self.inner.kfd.close_watch()
    }

    /// The snapshot and the topology reads kept for reuse, if they can be
    /// had without waiting (in a forked child, a lock a thread of the
    /// parent held at the fork is never released).
    pub(crate) fn topology_unlocked(&self) -> (Option<Arc<Topology>>, Vec<KeptRead>) {
        match self.inner.topology.try_read() {
            Ok(state) => (state.snapshot.clone(), state.reads.clone()),
            Err(_) => (None, Vec::new()),
        }
    }

    /// Takes `snapshot` and `reads` as the topology of this new context
    /// (a primary opened after the last close of another, or a forked
    /// child's new primary, takes the last one's: it re-reads the tree
    /// only when the kernel's topology changed since).
    pub(crate) fn adopt_topology(&self, snapshot: Option<Arc<Topology>>, reads: Vec<KeptRead>) {
        let mut state = self.topology_mut();
        state.snapshot = snapshot;
        state.reads = reads;
    }

    /// `hsaKmtAcquireSystemProperties` as one change for readers of
    /// [`Context::node_view`]: takes a snapshot (replacing any), creates
    /// the memory manager if needed and, with `rebuild_apertures`, sets up
    /// again what [`Context::release_properties`] released (the newest
    /// library's order). Concurrent acquires and releases of one context
    /// take effect one after the other.
    pub fn acquire_properties(
        &self,
        options: &SnapshotOptions,
        rebuild_apertures: bool,
    ) -> Result<Arc<Topology>, ContextError> {
        let topo = self.read_topology(options)?;
        let mut creation = self.creation();
        let mut state = self.topology_mut();
        state.remember(&topo, options);
        state.snapshot = Some(topo.clone());
        self.memory_in(&mut creation, &topo)?;
        if rebuild_apertures {
            self.reacquire_apertures_in(&mut state)?;
        }
        Ok(topo)
    }

    /// `hsaKmtReleaseSystemProperties` as one change for readers of
    /// [`Context::node_view`]: with `release_apertures` (the newest
    /// library) first [`Context::release_apertures`], then the snapshot
    /// is dropped.
    pub fn release_properties(&self, release_apertures: bool) {
        let _creation = self.creation();
        let mut state = self.topology_mut();
        if release_apertures {
            self.release_apertures_in(&mut state);
        }
        state.snapshot = None;
    }

    /// The snapshot and the apertures of `node` ([`Context::gpu_apertures`])
    /// read together: never across an [`Context::acquire_properties`] or
    /// [`Context::release_properties`] of another thread. One read lock
    /// once the memory manager exists.
    pub fn node_view(&self, node: u32) -> Result<(Arc<Topology>, GpuApertures), ContextError> {
        // Without a memory manager yet, this may make one, under the
        // creation lock, which comes before the topology lock.
        let mut creation = self.inner.fmm.get().is_none().then(|| self.creation());
        let state = self.topology_state();
        let topo = state.snapshot.clone().ok_or(ContextError::NoSnapshot)?;
        let ap = self.apertures_in(&topo, node, || match creation.as_deref_mut() {
            Some(creation) => self.memory_in(creation, &topo),
            // It existed above, so it is one load: no lock is taken.
            None => self.fmm(),
        })?;
        Ok((topo, ap))
    }

    /// The apertures of `node` as the C library reports them in
    /// `hsaKmtGetNodeProperties`/`hsaKmtGetNodeMemoryProperties` (LDS,
    /// scratch, GPUVM, SVM, MMIO); all `None` for a CPU node. Creates the
    /// memory manager if needed.
    pub fn gpu_apertures(&self, node: u32) -> Result<GpuApertures, ContextError> {
        let topo = self.topology()?;
        self.apertures_in(&topo, node, || self.fmm())
    }

    /// [`Context::gpu_apertures`] of a node of `topo` (an error if `topo`
    /// has no such node), asking `memory` for the memory manager of a GPU
    /// node.
    fn apertures_in<'a>(
        &'a self,
        topo: &Topology,
        node: u32,
        memory: impl FnOnce() -> Result<&'a Arc<Fmm>, ContextError>,
    ) -> Result<GpuApertures, ContextError> {
        let n = topo.node(node).ok_or(ContextError::Topology(
            kfd_topology::TopologyError::InvalidNode {
                node,
                num_nodes: topo.num_nodes(),
            },
        ))?;
        if n.gpu_id == 0 {
            return Ok(GpuApertures::default());
        }
        let fmm = memory()?;
        let valid =
            |base: u64, limit: u64| (base != 0 && limit > base).then_some(Aperture { base, limit });
        let ap = fmm.node_apertures(node)?;
        Ok(GpuApertures {
            lds: valid(ap.lds.base, ap.lds.limit),
            gpuvm: ap.gpuvm.and_then(|r| valid(r.base, r.limit)),
            scratch: valid(ap.scratch.base, ap.scratch.limit),
            svm: fmm.svm_aperture().and_then(|r| valid(r.base, r.limit)),
            mmio: ap.mmio.and_then(|r| valid(r.base, r.limit)),
        })
    }

    /// Drops the topology snapshot.
    pub fn release_system_properties(&self) {
        self.topology_mut().snapshot = None;
    }

    /// Releases what the newest library's `hsaKmtReleaseSystemProperties`
    /// destroys along with the snapshot: the doorbell pages, then the
    /// memory manager's process apertures (its MMIO remap pages; see
    /// [`Fmm::release_apertures`]). The doorbell pages go only while no
    /// queue is live ([`Queues::release_idle_doorbells`]; upstream unmaps
    /// them even under live queues, ours keep theirs); the next queue maps
    /// them again, as upstream does. Allocations and
    /// events stay. Does nothing if the memory manager does not exist or
    /// was released already.
    pub fn release_apertures(&self) {
        let _creation = self.creation();
        self.release_apertures_in(&mut self.topology_mut());
    }

    /// [`Context::release_apertures`] under the caller's locks.
    fn release_apertures_in(&self, state: &mut TopologyState) {
        if state.apertures_released {
            return;
        }
        if let Some(q) = self.inner.queues.get() {
            q.release_idle_doorbells();
        }
        if let Some(m) = self.inner.fmm.get() {
            m.release_apertures();
            state.apertures_released = true;
        }
    }

    /// Sets up again what [`Context::release_apertures`] released (the
    /// newest library's next `hsaKmtAcquireSystemProperties`); does
    /// nothing otherwise.
    pub fn reacquire_apertures(&self) -> Result<(), ContextError> {
        let _creation = self.creation();
        self.reacquire_apertures_in(&mut self.topology_mut())
    }

    /// [`Context::reacquire_apertures`] under the caller's locks.
    fn reacquire_apertures_in(&self, state: &mut TopologyState) -> Result<(), ContextError> {
        if !state.apertures_released {
            return Ok(());
        }
        if let Some(m) = self.inner.fmm.get() {
            m.reacquire_apertures()?;
        }
        state.apertures_released = false;
        Ok(())
    }

    /// The current topology snapshot.
    pub fn topology(&self) -> Result<Arc<Topology>, ContextError> {
        self.topology_state()
            .snapshot
            .clone()
            .ok_or(ContextError::NoSnapshot)
    }

    /// The topology state, for reading (see [`Inner::topology`]).
    fn topology_state(&self) -> RwLockReadGuard<'_, TopologyState> {
        self.inner
            .topology
            .read()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The topology state, for one change (see [`Inner::topology`]).
    fn topology_mut(&self) -> RwLockWriteGuard<'_, TopologyState> {
        self.inner
            .topology
            .write()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The creation lock (see [`Inner::creation`]); taken before the
    /// topology lock, never while holding it.
    fn creation(&self) -> MutexGuard<'_, Creation> {
        lock(&self.inner.creation)
    }

    /// The memory-manager options for a manager of `topo`'s GPUs. Unless
    /// the options name render-node files of their own, the manager uses
    /// this context's ([`Creation::render_nodes`]), opened on first need
    /// and kept for the context's lifetime: a manager that fails to set
    /// up (an ioctl failing after ACQUIRE_VM) leaves the GPU VMs it
    /// acquired bound to those files in the kernel, which refuses the
    /// next attempt on a new file (EBUSY) but accepts the same one again,
    /// so a retry recovers (issue 17 item 5; the C library also keeps its
    /// render-node descriptors open).
    fn fmm_options(
        &self,
        creation: &mut Creation,
        topo: &Topology,
    ) -> Result<kfd_fmm::FmmOptions, ContextError> {
        let mut o = self.inner.options.fmm.clone();
        if !matches!(o.render_nodes, kfd_fmm::RenderNodes::Open) {
            return Ok(o);
        }
        let files = &mut creation.render_nodes;
        for n in topo.nodes.iter().filter(|n| n.gpu_id != 0) {
            let minor = n.properties.drm_render_minor;
            if files.iter().any(|(m, _)| *m == minor) {
                continue;
            }
            let f = DeviceFile::open_render_node(self.driver().clone(), minor)
                .map_err(|errno| kfd_fmm::FmmError::RenderNode { minor, errno })?;
            files.push((minor, Arc::new(f)));
        }
        o.render_nodes = kfd_fmm::RenderNodes::Shared(files.clone());
        Ok(o)
    }

    /// The memory manager; made from `topo` and kept if there is none.
    /// The caller holds the creation lock.
    fn memory_in(
        &self,
        creation: &mut Creation,
        topo: &Topology,
    ) -> Result<&Arc<Fmm>, ContextError> {
        if let Some(m) = self.inner.fmm.get() {
            return Ok(m);
        }
        let mut options = self.fmm_options(creation, topo)?;
        options.kfd_version = Some((self.inner.version.major, self.inner.version.minor));
        let fmm = Arc::new(Fmm::from_topology(self.inner.kfd.clone(), topo, options)?);
        Ok(self.inner.fmm.get_or_init(|| fmm))
    }

    /// Sets up the memory manager now, from a topology read for this
    /// purpose (the context's snapshot is not touched: it is still taken
    /// by [`Context::acquire_system_properties`], which reuses this read
    /// while the kernel's `generation_id` holds). Does nothing when
    /// the memory manager exists.
    ///
    /// Libhsakmt 5.2.3 initialises its apertures inside `hsaKmtOpenKFD`
    /// (GET_PROCESS_APERTURES_NEW, ACQUIRE_VM, SET_MEMORY_POLICY, the MMIO
    /// remap pages); the newest library does it when the snapshot is
    /// taken. The `hsakmt` border calls this at open for the former.
    pub fn init_memory_with(&self, options: &SnapshotOptions) -> Result<(), ContextError> {
        let mut creation = self.creation();
        if self.inner.fmm.get().is_none() {
            let topo = self.read_topology(options)?;
            self.topology_mut().remember(&topo, options);
            self.memory_in(&mut creation, &topo)?;
        }
        Ok(())
    }

    /// The memory manager, created on first use from the topology snapshot
    /// (apertures, ACQUIRE_VM on this context's own render nodes, ...).
    /// Once it exists this is one atomic load: the manager is borrowed,
    /// not cloned.
    #[inline]
    pub fn fmm(&self) -> Result<&Arc<Fmm>, ContextError> {
        match self.inner.fmm.get() {
            Some(m) => Ok(m),
            None => self.fmm_first(),
        }
    }

    /// [`Context::fmm`] when it was not made yet (once per context: kept
    /// out of line, so the every-call part inlines into the caller).
    #[cold]
    #[inline(never)]
    fn fmm_first(&self) -> Result<&Arc<Fmm>, ContextError> {
        let mut creation = self.creation();
        match self.inner.fmm.get() {
            Some(m) => Ok(m),
            None => self.memory_in(&mut creation, &*self.topology()?),
        }
    }

    /// Makes a sub-context once: `cell`'s value if it has one, else, under
    /// the creation lock, `make`'s (from the snapshot and the memory
    /// manager, which events and queues allocate their buffers from).
    #[inline(always)]
    fn sub<'a, T>(
        &'a self,
        cell: &'a OnceLock<T>,
        make: impl FnOnce(Arc<Topology>, &Arc<Fmm>) -> T,
    ) -> Result<&'a T, ContextError> {
        match cell.get() {
            Some(v) => Ok(v),
            None => self.sub_first(cell, make),
        }
    }

    /// [`Context::sub`] when the sub-context was not made yet (once per
    /// context: out of line, so the every-call part inlines).
    #[cold]
    #[inline(never)]
    fn sub_first<'a, T>(
        &'a self,
        cell: &'a OnceLock<T>,
        make: impl FnOnce(Arc<Topology>, &Arc<Fmm>) -> T,
    ) -> Result<&'a T, ContextError> {
        if let Some(v) = cell.get() {
            return Ok(v);
        }
        let mut creation = self.creation();
        if let Some(v) = cell.get() {
            return Ok(v);
        }
        let topo = self.topology()?;
        let memory = self.memory_in(&mut creation, &topo)?;
        Ok(cell.get_or_init(|| make(topo, memory)))
    }

    /// The event sub-context, created on first use (borrowed after that).
    #[inline]
    pub fn events(&self) -> Result<&Arc<Events>, ContextError> {
        self.sub(&self.inner.events, |topo, m| {
            Arc::new(Events::new(
                self.inner.kfd.clone(),
                Some(topo),
                Some(m.clone()),
            ))
        })
    }

    /// The queue sub-context, created on first use (borrowed after that).
    #[inline]
    pub fn queues(&self) -> Result<&Arc<Queues>, ContextError> {
        self.sub(&self.inner.queues, |topo, m| {
            let options = self.queue_options(&topo);
            Arc::new(Queues::with_options(
                self.inner.kfd.clone(),
                topo,
                m.clone(),
                options,
            ))
        })
    }

    /// The queue options of [`ContextOptions::queues`] as this context
    /// may use them: SVM save areas only on a primary context with the
    /// SVM API on whose GPU nodes all report `SVMAPISupported`.
    fn queue_options(&self, topo: &Topology) -> QueueOptions {
        let mut o = self.inner.options.queues;
        let kernel_svm = topo
            .nodes
            .iter()
            .filter(|n| n.is_gpu())
            .all(|n| n.properties.capability.svm_api_supported() != 0);
        o.svm_save_area &= self.is_primary() && self.inner.options.svm_api && kernel_svm;
        o
    }

    /// The debug sub-context, created on first use from the topology
    /// snapshot. On a secondary context every debug operation is refused
    /// with `NOT_SUPPORTED`.
    ///
    /// Without a snapshot this is a sub-context that knows no node and is
    /// not kept: the debugger requests that name no node (attach, detach,
    /// snapshots, the raw debug-trap interface) need none, as in the C
    /// library, which issues them before any `AcquireSystemProperties`;
    /// runtime enable and everything that names a node fail (no node is
    /// known) until a snapshot exists, and the sub-context made then is
    /// kept.
    pub fn debug(&self) -> Result<Arc<Debug>, ContextError> {
        if let Some(d) = self.inner.debug.get() {
            return Ok(d.clone());
        }
        let _creation = self.creation();
        if let Some(d) = self.inner.debug.get() {
            return Ok(d.clone());
        }
        let kfd = self.inner.kfd.clone();
        let rules = self.inner.options.debug;
        let topo = match self.topology() {
            Ok(t) => t,
            Err(ContextError::NoSnapshot) => {
                return Ok(Arc::new(
                    Debug::new(kfd, self.is_primary(), Vec::new()).with_rules(rules),
                ))
            }
            Err(e) => return Err(e),
        };
        let debug = Debug::from_topology(kfd, self.is_primary(), &topo).with_rules(rules);
        Ok(self.inner.debug.get_or_init(|| Arc::new(debug)).clone())
    }

    /// The perf sub-context (counters, SPM, PC sampling, clocks), created
    /// on first use (borrowed after that).
    pub fn perf(&self) -> Result<&Arc<Perf>, ContextError> {
        if let Some(p) = self.inner.perf.get() {
            return Ok(p);
        }
        let _creation = self.creation();
        if let Some(p) = self.inner.perf.get() {
            return Ok(p);
        }
        let perf = Perf::from_topology(self.inner.kfd.clone(), &*self.topology()?);
        Ok(self.inner.perf.get_or_init(|| Arc::new(perf)))
    }

    /// What the layer above keeps for this context (the C border's
    /// handed-out buffers, for instance): a `T` made on first use, which
    /// lives exactly as long as the context and is dropped with it
    /// (before its descriptor closes). Each context holds one such value;
    /// `None` when a value of another type was attached first.
    #[inline]
    pub fn attached<T: Any + Send + Sync + Default>(&self) -> Option<&T> {
        self.inner
            .attached
            .get_or_init(|| Box::new(T::default()))
            .downcast_ref()
    }

    /// Checks that an object created by context `owner` may be used here.
    pub fn check_owner(&self, owner: ContextId) -> Result<(), ContextError> {
        if owner == self.inner.id {
            Ok(())
        } else {
            Err(ContextError::ForeignObject {
                owner: owner.0,
                this: self.inner.id.0,
            })
        }
    }

    /// Closes this handle. For a secondary context, when this was the last
    /// handle, the context's sub-contexts are released in dependency order
    /// and, with them, every kernel object nothing else holds.
    ///
    /// # What outlives it
    ///
    /// Objects made through the context keep what they need alive, so
    /// closing can never leave them dangling: a [`kfd_fmm::Buffer`] holds
    /// the memory manager, a [`kfd_queue::AqlQueue`] its queue, event and
    /// memory sub-contexts, a [`kfd_event::Signal`] its events and memory.
    /// Each stays usable after the close, and the kernel process (its
    /// descriptor and every object in it) ends only when the last of them
    /// is dropped. Drop them (or call their `destroy`/`free`, to see
    /// errors) to end the process at the close. A bare
    /// [`kfd_event::Event`] holds its events sub-context only weakly and
    /// does not keep the process.
    pub fn close(self) {
        drop(self);
    }

    /// True when `a` and `b` are handles to the same context.
    pub fn same(a: &Context, b: &Context) -> bool {
        Arc::ptr_eq(&a.inner, &b.inner)
    }
}
