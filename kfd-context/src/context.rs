//! The [`Context`] aggregate root.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use kfd_debug::Debug;
use kfd_event::Events;
use kfd_fmm::Fmm;
use kfd_perf::Perf;
use kfd_queue::{QueueOptions, Queues};
use kfd_sys::kfd::{self, kfd_ioctl_create_process_args, kfd_ioctl_get_version_args};
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

/// The lazily created sub-contexts. Each takes the topology snapshot that
/// was current when it was created.
#[derive(Default)]
struct Subs {
    fmm: Option<Arc<Fmm>>,
    events: Option<Arc<Events>>,
    queues: Option<Arc<Queues>>,
    debug: Option<Arc<Debug>>,
    perf: Option<Arc<Perf>>,
    /// The memory manager's apertures were released
    /// ([`Context::release_apertures`]) and not set up again yet.
    apertures_released: bool,
}

pub(crate) struct Inner {
    id: ContextId,
    kind: ContextKind,
    options: ContextOptions,
    version: KfdVersion,
    owner_pid: u32,
    kfd: Arc<DeviceFile>,
    topology: RwLock<Option<Arc<Topology>>>,
    subs: Mutex<Subs>,
    /// The render-node files this context opened, by minor, kept for its
    /// lifetime (see [`Context::fmm_options`]).
    render_nodes: Mutex<Vec<(u32, Arc<DeviceFile>)>>,
    /// Held for writing across [`Context::acquire_properties`] and
    /// [`Context::release_properties`], for reading across
    /// [`Context::node_view`]: a node's properties are read from one
    /// state of the snapshot and the apertures, never from a half-changed
    /// one.
    properties: RwLock<()>,
}

impl Drop for Inner {
    /// Tears the sub-contexts down in dependency order: queues (they use
    /// events and buffers), events (the event page is a buffer), debug and
    /// perf, then the memory manager; the descriptor closes last.
    fn drop(&mut self) {
        let subs = std::mem::take(self.subs.get_mut().unwrap_or_else(|e| e.into_inner()));
        if let Some(q) = subs.queues {
            q.teardown();
        }
        if let Some(e) = subs.events {
            e.teardown();
        }
        drop(subs.debug);
        drop(subs.perf);
        drop(subs.fmm);
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
                ioctl: kfd::AMDKFD_IOC_GET_VERSION.name(),
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
                    ioctl: kfd::AMDKFD_IOC_CREATE_PROCESS.name(),
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
                topology: RwLock::new(None),
                subs: Mutex::new(Subs::default()),
                render_nodes: Mutex::new(Vec::new()),
                properties: RwLock::new(()),
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
        let topo = Arc::new(Topology::snapshot(&**self.driver())?);
        *self
            .inner
            .topology
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Some(topo.clone());
        Ok(topo)
    }

    /// [`Context::acquire_system_properties`] with explicit snapshot
    /// options (the `hsakmt` border picks the rules of the C library
    /// generation it serves).
    pub fn acquire_system_properties_with(
        &self,
        options: &SnapshotOptions,
    ) -> Result<Arc<Topology>, ContextError> {
        let topo = Arc::new(Topology::snapshot_with(&**self.driver(), options)?);
        *self
            .inner
            .topology
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Some(topo.clone());
        Ok(topo)
    }

    /// `hsaKmtAcquireSystemProperties` as one change for readers of
    /// [`Context::node_view`]: takes a snapshot (replacing any), creates
    /// the memory manager if needed and, with `rebuild_apertures`, sets up
    /// again what [`Context::release_properties`] released (the newest
    /// library's order). Concurrent acquires and releases of one context
    /// run one after the other.
    pub fn acquire_properties(
        &self,
        options: &SnapshotOptions,
        rebuild_apertures: bool,
    ) -> Result<Arc<Topology>, ContextError> {
        let _change = self
            .inner
            .properties
            .write()
            .unwrap_or_else(|e| e.into_inner());
        let topo = self.acquire_system_properties_with(options)?;
        self.fmm()?;
        if rebuild_apertures {
            self.reacquire_apertures()?;
        }
        Ok(topo)
    }

    /// `hsaKmtReleaseSystemProperties` as one change for readers of
    /// [`Context::node_view`]: with `release_apertures` (the newest
    /// library) first [`Context::release_apertures`], then the snapshot
    /// is dropped.
    pub fn release_properties(&self, release_apertures: bool) {
        let _change = self
            .inner
            .properties
            .write()
            .unwrap_or_else(|e| e.into_inner());
        if release_apertures {
            self.release_apertures();
        }
        self.release_system_properties();
    }

    /// The snapshot and the apertures of `node` ([`Context::gpu_apertures`])
    /// read together: never across an [`Context::acquire_properties`] or
    /// [`Context::release_properties`] of another thread.
    pub fn node_view(&self, node: u32) -> Result<(Arc<Topology>, GpuApertures), ContextError> {
        let _read = self
            .inner
            .properties
            .read()
            .unwrap_or_else(|e| e.into_inner());
        let topo = self.topology()?;
        let ap = self.apertures_in(&topo, node)?;
        Ok((topo, ap))
    }

    /// The apertures of `node` as the C library reports them in
    /// `hsaKmtGetNodeProperties`/`hsaKmtGetNodeMemoryProperties` (LDS,
    /// scratch, GPUVM, SVM, MMIO); all `None` for a CPU node. Creates the
    /// memory manager if needed.
    pub fn gpu_apertures(&self, node: u32) -> Result<GpuApertures, ContextError> {
        self.apertures_in(&*self.topology()?, node)
    }

    /// [`Context::gpu_apertures`] of a node of `topo` (an error if `topo`
    /// has no such node).
    fn apertures_in(&self, topo: &Topology, node: u32) -> Result<GpuApertures, ContextError> {
        let n = topo.node(node).ok_or(ContextError::Topology(
            kfd_topology::TopologyError::InvalidNode {
                node,
                num_nodes: topo.num_nodes(),
            },
        ))?;
        if n.gpu_id == 0 {
            return Ok(GpuApertures::default());
        }
        let fmm = self.fmm()?;
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
        *self
            .inner
            .topology
            .write()
            .unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Releases what the newest library's `hsaKmtReleaseSystemProperties`
    /// destroys along with the snapshot: the doorbell pages, then the
    /// memory manager's process apertures (its MMIO remap pages; see
    /// [`Fmm::release_apertures`]). The doorbell pages go with the queue
    /// sub-context, only when it has no live queue and nobody else holds
    /// it (upstream unmaps them even under live queues; ours keep theirs);
    /// the next queue maps them again, as upstream does. Allocations and
    /// events stay. Does nothing if the memory manager does not exist or
    /// was released already.
    pub fn release_apertures(&self) {
        let mut subs = self.subs();
        if subs.apertures_released {
            return;
        }
        if subs
            .queues
            .as_ref()
            .is_some_and(|q| Arc::strong_count(q) == 1 && q.live_count() == 0)
        {
            // The last reference: dropping it releases the doorbell pages.
            subs.queues = None;
        }
        if let Some(f) = &subs.fmm {
            f.release_apertures();
            subs.apertures_released = true;
        }
    }

    /// Sets up again what [`Context::release_apertures`] released (the
    /// newest library's next `hsaKmtAcquireSystemProperties`); does
    /// nothing otherwise.
    pub fn reacquire_apertures(&self) -> Result<(), ContextError> {
        let mut subs = self.subs();
        if !subs.apertures_released {
            return Ok(());
        }
        if let Some(f) = &subs.fmm {
            f.reacquire_apertures()?;
        }
        subs.apertures_released = false;
        Ok(())
    }

    /// The snapshot, if it can be read without waiting (in a forked
    /// child, a lock a thread of the parent held at the fork is never
    /// released).
    pub(crate) fn snapshot_unlocked(&self) -> Option<Arc<Topology>> {
        self.inner.topology.try_read().ok().and_then(|t| t.clone())
    }

    /// Makes `topo` this context's snapshot (a forked child's new primary
    /// takes its parent's).
    pub(crate) fn adopt_topology(&self, topo: Arc<Topology>) {
        *self
            .inner
            .topology
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Some(topo);
    }

    /// The current topology snapshot.
    pub fn topology(&self) -> Result<Arc<Topology>, ContextError> {
        self.inner
            .topology
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or(ContextError::NoSnapshot)
    }

    fn subs(&self) -> MutexGuard<'_, Subs> {
        self.inner.subs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The memory-manager options for a manager of `topo`'s GPUs. Unless
    /// the options name render-node files of their own, the manager uses
    /// this context's, opened on first need and kept for the context's
    /// lifetime: a manager that fails to set up (an ioctl failing after
    /// ACQUIRE_VM) leaves the GPU VMs it acquired bound to those files in
    /// the kernel, which refuses the next attempt on a new file (EBUSY)
    /// but accepts the same one again, so a retry recovers (issue 17 item
    /// 5; the C library also keeps its render-node descriptors open).
    fn fmm_options(&self, topo: &Topology) -> Result<kfd_fmm::FmmOptions, ContextError> {
        let mut o = self.inner.options.fmm.clone();
        if !matches!(o.render_nodes, kfd_fmm::RenderNodes::Open) {
            return Ok(o);
        }
        let mut files = self
            .inner
            .render_nodes
            .lock()
            .unwrap_or_else(|e| e.into_inner());
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

    fn fmm_locked(&self, subs: &mut Subs) -> Result<Arc<Fmm>, ContextError> {
        if let Some(f) = &subs.fmm {
            return Ok(f.clone());
        }
        let topo = self.topology()?;
        let fmm = Arc::new(Fmm::from_topology(
            self.inner.kfd.clone(),
            &topo,
            self.fmm_options(&topo)?,
        )?);
        subs.fmm = Some(fmm.clone());
        Ok(fmm)
    }

    /// Sets up the memory manager now, from a topology read for this
    /// purpose only (the context's snapshot is not touched: it is still
    /// taken by [`Context::acquire_system_properties`]). Does nothing when
    /// the memory manager exists.
    ///
    /// Libhsakmt 5.2.3 initialises its apertures inside `hsaKmtOpenKFD`
    /// (GET_PROCESS_APERTURES_NEW, ACQUIRE_VM, SET_MEMORY_POLICY, the MMIO
    /// remap pages); the newest library does it when the snapshot is
    /// taken. The `hsakmt` border calls this at open for the former.
    pub fn init_memory_with(&self, options: &SnapshotOptions) -> Result<(), ContextError> {
        let mut subs = self.subs();
        if subs.fmm.is_some() {
            return Ok(());
        }
        let topo = Topology::snapshot_with(&**self.driver(), options)?;
        let fmm = Arc::new(Fmm::from_topology(
            self.inner.kfd.clone(),
            &topo,
            self.fmm_options(&topo)?,
        )?);
        subs.fmm = Some(fmm);
        Ok(())
    }

    /// The memory manager, created on first use from the topology snapshot
    /// (apertures, ACQUIRE_VM on this context's own render nodes, ...).
    pub fn fmm(&self) -> Result<Arc<Fmm>, ContextError> {
        let mut subs = self.subs();
        self.fmm_locked(&mut subs)
    }

    /// The event sub-context, created on first use.
    pub fn events(&self) -> Result<Arc<Events>, ContextError> {
        let mut subs = self.subs();
        if let Some(e) = &subs.events {
            return Ok(e.clone());
        }
        let topo = self.topology()?;
        let fmm = self.fmm_locked(&mut subs)?;
        let events = Arc::new(Events::new(self.inner.kfd.clone(), Some(topo), Some(fmm)));
        subs.events = Some(events.clone());
        Ok(events)
    }

    /// The queue sub-context, created on first use.
    pub fn queues(&self) -> Result<Arc<Queues>, ContextError> {
        let mut subs = self.subs();
        if let Some(q) = &subs.queues {
            return Ok(q.clone());
        }
        let topo = self.topology()?;
        let fmm = self.fmm_locked(&mut subs)?;
        let options = self.queue_options(&topo);
        let queues = Arc::new(Queues::with_options(
            self.inner.kfd.clone(),
            topo,
            fmm,
            options,
        ));
        subs.queues = Some(queues.clone());
        Ok(queues)
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
        let mut subs = self.subs();
        if let Some(d) = &subs.debug {
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
        let debug = Arc::new(Debug::from_topology(kfd, self.is_primary(), &topo).with_rules(rules));
        subs.debug = Some(debug.clone());
        Ok(debug)
    }

    /// The perf sub-context (counters, SPM, PC sampling, clocks), created
    /// on first use.
    pub fn perf(&self) -> Result<Arc<Perf>, ContextError> {
        let mut subs = self.subs();
        if let Some(p) = &subs.perf {
            return Ok(p.clone());
        }
        let topo = self.topology()?;
        let perf = Arc::new(Perf::from_topology(self.inner.kfd.clone(), &topo));
        subs.perf = Some(perf.clone());
        Ok(perf)
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
    /// handle, every kernel object it created is released and its
    /// descriptor closed.
    pub fn close(self) {
        drop(self);
    }

    /// True when `a` and `b` are handles to the same context.
    pub fn same(a: &Context, b: &Context) -> bool {
        Arc::ptr_eq(&a.inner, &b.inner)
    }
}
