//! The `Queues` sub-context: doorbells, queue registry and operations.

use std::collections::HashMap;
use std::fmt;
use std::os::fd::AsFd;
use std::sync::{Arc, Mutex, OnceLock};

use kfd_fmm::{Buffer, ExecAlloc, Fmm};
use kfd_sys::kfd::{
    kfd_ioctl_alloc_queue_gws_args, kfd_ioctl_create_queue_args, kfd_ioctl_destroy_queue_args,
    kfd_ioctl_get_version_args, kfd_ioctl_set_trap_handler_args, kfd_ioctl_update_queue_args,
    AMDKFD_IOC_ALLOC_QUEUE_GWS, AMDKFD_IOC_CREATE_QUEUE, AMDKFD_IOC_DESTROY_QUEUE,
    AMDKFD_IOC_GET_QUEUE_WAVE_STATE, AMDKFD_IOC_GET_VERSION, AMDKFD_IOC_SET_CU_MASK,
    AMDKFD_IOC_SET_TRAP_HANDLER, AMDKFD_IOC_UPDATE_QUEUE,
};
use kfd_sys::mapping::Mapping;
use kfd_sys::mman::{self, Prot};
use kfd_sys::queue as kq;
use kfd_sys::{DeviceFile, Errno};
use kfd_topology::{Node, Topology};

use crate::error::QueueError;
use crate::lock;
use crate::queue::{
    cu_mask_words, kfd_priority, page, Queue, QueueBuffers, QueueId, QueueInfo, QueueKind,
    QueueObj, QueueRequest, QueueResource, SaveArea,
};
use crate::sizes::{self, gfx, CwsrSizes, SAVE_AREA_HEADER_SIZE};

/// KFD minor version that added the metadata ring of `CreateQueueV2`.
const METADATA_MIN_MINOR: u32 = 19;
/// KFD minor version that added the SVM "always mapped" flag the newest
/// C library needs for an SVM save area.
const SVM_ALWAYS_MAPPED_MIN_MINOR: u32 = 11;

/// The places where the C libraries this crate serves choose queue
/// buffers differently (they differ in the ioctls queue creation issues),
/// each a named switch. The C border picks one value per library
/// generation; the default is the newest upstream library's choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueRules {
    /// The per-queue page (pointers of non-AQL queues, CU mask) is pinned
    /// GTT memory rather than paged system memory (a userptr BO on a dGPU
    /// primary context, a GTT BO where paged memory is not userptr).
    pub pinned_queue_page: bool,
    /// The save area is anonymous memory registered with SVM (always GPU
    /// mapped) where the context allows it ([`QueueOptions::svm_save_area`])
    /// and the KFD is 1.11 or newer; paged system memory otherwise or if
    /// that fails.
    pub svm_save_area: bool,
    /// The save area is laid out once per XCC, not once over the node.
    pub save_area_per_xcc: bool,
    /// The work-group data of the save area uses fixed SGPR, LDS and
    /// hardware-register sizes per CU (see [`crate::sizes`]) rather than
    /// each gfx version's own (the VGPR size is the node's either way).
    pub fixed_work_group_sizes: bool,
    /// AQL (and SDMA) queues on gfx94x get a 4 KiB EOP buffer too, not
    /// only PM4 compute queues.
    pub eop_for_every_queue: bool,
}

impl Default for QueueRules {
    /// The newest upstream library.
    fn default() -> Self {
        QueueRules {
            pinned_queue_page: true,
            svm_save_area: true,
            save_area_per_xcc: true,
            fixed_work_group_sizes: false,
            eop_for_every_queue: false,
        }
    }
}

/// How a [`Queues`] allocates queue buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueOptions {
    /// How the C library being served chooses buffers.
    pub rules: QueueRules,
    /// The context may put save areas in SVM memory: its SVM API is on
    /// (primary contexts where the kernel supports SVM; never secondary
    /// contexts). Used only with [`QueueRules::svm_save_area`].
    pub svm_save_area: bool,
}

/// A node's doorbell page, mapped once per context.
enum DoorbellPage {
    /// A doorbell buffer from the memory manager, GPU mapped (dGPU).
    Gpuvm { buf: Buffer },
    /// A plain mapping of the KFD descriptor (unmapped when it drops).
    Mapped { map: Mapping },
}

impl DoorbellPage {
    fn addr(&self) -> u64 {
        match self {
            DoorbellPage::Gpuvm { buf } => buf.addr(),
            DoorbellPage::Mapped { map } => map.addr(),
        }
    }

    /// The CPU mapping the doorbells are written through.
    fn mapping(&self) -> Result<&Mapping, QueueError> {
        match self {
            DoorbellPage::Gpuvm { buf } => buf.mapping().map_err(QueueError::Memory),
            DoorbellPage::Mapped { map } => Ok(map),
        }
    }
}

/// State shared by a [`Queues`] and the weak owner links of its queues.
pub(crate) struct Shared {
    file: Arc<DeviceFile>,
    topology: Arc<Topology>,
    fmm: Arc<Fmm>,
    options: QueueOptions,
    minor: OnceLock<u32>,
    /// Doorbell pages per node id; each node's page is mapped under this
    /// lock on the first queue of that node.
    ///
    /// Lock order: `doorbells`, then `queues`. A queue is inserted into
    /// `queues` only while this lock is held and its node's page is in the
    /// table, and teardown drains both tables under this lock before it
    /// unmaps anything; so while this lock is held, a queue found in
    /// `queues` has its doorbell page mapped.
    doorbells: Mutex<HashMap<u32, DoorbellPage>>,
    /// Live queues by `HSA_QUEUEID`.
    queues: Mutex<HashMap<u64, Queue>>,
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queues")
            .field("file", &self.file)
            .field("queues", &lock(&self.queues).len())
            .field("doorbell_pages", &lock(&self.doorbells).len())
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// Destroys every queue, frees its buffers and releases the doorbell
    /// pages. Both tables are emptied under the doorbell lock first, so a
    /// concurrent [`Queues::ring_doorbell`] either finished its store
    /// before (it holds that lock while storing) or finds its queue gone;
    /// and a concurrent [`Queues::create`] either registered its queue
    /// before (destroyed here) or maps a page of its own afterwards.
    fn teardown(&self) {
        let (queues, pages) = {
            let mut pages = lock(&self.doorbells);
            let queues: Vec<Queue> = lock(&self.queues).drain().map(|(_, q)| q).collect();
            let pages: Vec<DoorbellPage> = pages.drain().map(|(_, p)| p).collect();
            (queues, pages)
        };
        self.destroy_queues(queues);
        // The pages unmap (or go back to the memory manager) as they drop,
        // after every queue that used them is destroyed.
        drop(pages);
    }

    fn destroy_queues(&self, queues: Vec<Queue>) {
        for q in queues {
            let mut a = kfd_ioctl_destroy_queue_args {
                queue_id: q.obj.kfd_queue_id,
                pad: 0,
            };
            let _ = self.file.ioctl_plain(AMDKFD_IOC_DESTROY_QUEUE, &mut a);
            drop(lock(&q.obj.buffers).take());
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.teardown();
    }
}

/// The user-mode queues of one KFD context.
///
/// Creating a queue allocates its buffers through the context's memory
/// manager ([`Fmm::alloc_exec`]): a pinned page holding the read/write
/// pointers of non-AQL queues and the CU mask, an EOP buffer in VRAM and
/// a context save/restore area sized for the GPU generation. The node's
/// doorbell page is mapped on the first queue of that node and kept until
/// teardown. All methods take `&self` and may be called from any thread.
///
/// Dropping the `Queues` (or [`Queues::teardown`]) destroys every
/// remaining queue, frees its buffers and releases the doorbell pages.
/// A context must tear its queues down before its events (queues may
/// reference events) and before its memory manager.
pub struct Queues {
    shared: Arc<Shared>,
}

impl fmt::Debug for Queues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.shared.fmt(f)
    }
}

impl Queues {
    /// The queue sub-context of the context whose KFD descriptor is
    /// `file`, with its topology snapshot and memory manager; queue
    /// buffers as libhsakmt 5.2.3 allocates them ([`QueueOptions`]'s
    /// default).
    pub fn new(file: Arc<DeviceFile>, topology: Arc<Topology>, fmm: Arc<Fmm>) -> Queues {
        Queues::with_options(file, topology, fmm, QueueOptions::default())
    }

    /// As [`Queues::new`], with the buffer choices of `options`.
    pub fn with_options(
        file: Arc<DeviceFile>,
        topology: Arc<Topology>,
        fmm: Arc<Fmm>,
        options: QueueOptions,
    ) -> Queues {
        Queues {
            shared: Arc::new(Shared {
                file,
                topology,
                fmm,
                options,
                minor: OnceLock::new(),
                doorbells: Mutex::new(HashMap::new()),
                queues: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The buffer choices this sub-context makes.
    pub fn options(&self) -> QueueOptions {
        self.shared.options
    }

    /// Number of live queues.
    pub fn live_count(&self) -> usize {
        lock(&self.shared.queues).len()
    }

    /// Releases the doorbell pages if no queue is live (the newest
    /// library's `hsaKmtReleaseSystemProperties` unmaps them); the next
    /// queue of a node maps its page again. Returns whether they were
    /// released (false: a queue is live and keeps them).
    pub fn release_idle_doorbells(&self) -> bool {
        let pages = {
            let mut pages = lock(&self.shared.doorbells);
            if !lock(&self.shared.queues).is_empty() {
                return false;
            }
            pages.drain().map(|(_, p)| p).collect::<Vec<DoorbellPage>>()
        };
        // Unmapped (or given back to the memory manager) as they drop.
        drop(pages);
        true
    }

    /// The address of a node's doorbell page, once mapped.
    pub fn doorbell_page(&self, node_id: u32) -> Option<u64> {
        lock(&self.shared.doorbells).get(&node_id).map(|p| p.addr())
    }

    fn kfd_minor(&self) -> u32 {
        *self.shared.minor.get_or_init(|| {
            let mut v = kfd_ioctl_get_version_args::default();
            match self.shared.file.ioctl_plain(AMDKFD_IOC_GET_VERSION, &mut v) {
                Ok(_) => v.minor_version,
                Err(_) => 0,
            }
        })
    }

    /// The topology node `node_id` if it is a GPU, else
    /// [`QueueError::InvalidNode`].
    pub(crate) fn gpu_node(&self, node_id: u32) -> Result<&Node, QueueError> {
        match self.shared.topology.node(node_id) {
            Some(n) if n.is_gpu() => Ok(n),
            _ => Err(QueueError::InvalidNode(node_id)),
        }
    }

    /// Creates a queue (`hsaKmtCreateQueueV2`; `CreateQueue` and
    /// `CreateQueueExt` are this with no metadata ring).
    ///
    /// Checks, in the C library's order: the metadata ring (KFD minor 19,
    /// page aligned), the priority, the node, the kind.
    pub fn create(&self, req: &QueueRequest) -> Result<Queue, QueueError> {
        let sh = &self.shared;
        if req.metadata_size != 0 {
            let have = self.kfd_minor();
            if have < METADATA_MIN_MINOR {
                return Err(QueueError::KfdTooOld {
                    needed: METADATA_MIN_MINOR,
                    have,
                });
            }
            if req.metadata_size % mman::page_size() as u64 != 0 {
                return Err(QueueError::MetadataUnaligned(req.metadata_size));
            }
        }
        let priority =
            kfd_priority(req.priority).ok_or(QueueError::InvalidPriority(req.priority))?;
        let node = self.gpu_node(req.node_id)?;
        let gpu_id = node.gpu_id;
        let gfxv = sizes::gfx_of(node);

        // The per-queue page: pointers of non-AQL queues and the CU mask
        // (paged memory in 5.2.3, pinned GTT in the newest library).
        let page = self.alloc(&ExecAlloc {
            size: sizes::PAGE as u64,
            node_id: req.node_id,
            non_paged: sh.options.rules.pinned_queue_page,
            device_local: false,
            uncached: true,
        })?;
        let (cu_count, cu_words) = default_cu_mask(node);
        let mut init = vec![0u8; page::CU_MASK as usize];
        init.extend(cu_words.iter().flat_map(|w| w.to_ne_bytes()));
        page.write(0, &init).map_err(QueueError::Memory)?;
        let page_addr = page.addr();
        // Every early return from here on releases what is in `bufs`.
        let mut bufs = QueueBuffers {
            eop: None,
            cwsr: None,
            page,
        };

        let (read_ptr, write_ptr) = if req.kind == crate::QueueKind::ComputeAql {
            (req.read_ptr, req.write_ptr)
        } else {
            (page_addr + page::RPTR, page_addr + page::WPTR)
        };

        let mut args = kfd_ioctl_create_queue_args {
            gpu_id,
            queue_type: req.kind.kfd_type(),
            ..Default::default()
        };

        // EOP buffer and context save/restore area.
        let mut eop = None;
        let mut cwsr = None;
        if req.kind.needs_queue_buffers() {
            let eop_size = sizes::eop_buffer_size(gfxv, req.kind.hsa_type(), &sh.options.rules);
            if eop_size > 0 {
                let b = self.alloc(&ExecAlloc {
                    size: eop_size as u64,
                    node_id: req.node_id,
                    non_paged: true,
                    device_local: true,
                    uncached: false,
                })?;
                args.eop_buffer_address = b.addr();
                args.eop_buffer_size = eop_size as u64;
                eop = Some((b.addr(), b.size()));
                bufs.eop = Some(b);
            }
            if let Some(sz) = sizes::cwsr_sizes(node, &sh.options.rules) {
                let area = self.alloc_cwsr(req, &sz)?;
                args.ctx_save_restore_address = area.addr();
                args.ctx_save_restore_size = sz.ctx_save_restore_size;
                args.ctl_stack_size = sz.ctl_stack_size;
                cwsr = Some((area.addr(), sz));
                bufs.cwsr = Some(area);
            }
        }

        args.read_pointer_address = read_ptr;
        args.write_pointer_address = write_ptr;
        args.ring_base_address = req.ring_address;
        args.ring_size = req.ring_size as u32;
        args.queue_percentage = req.percentage;
        args.queue_priority = priority;
        args.sdma_engine_id = req.kind.sdma_engine_id();
        args.metadata_ring_size = req.metadata_size as u32;

        let slot = match kq::create_queue(&sh.file, &mut args) {
            Ok(slot) => slot,
            Err(errno) => {
                drop(bufs);
                return Err(create_refused(req, errno));
            }
        };

        // Doorbell: SOC15 returns the doorbell's byte offset inside the
        // page together with the page's mmap offset.
        let db_page_size = sizes::doorbell_page_size(gfxv) as u64;
        let (mmap_offset, in_page) = if gfxv >= gfx::VEGA10 {
            let mask = sizes::doorbell_page_size(gfxv) as u64 - 1;
            (args.doorbell_offset & !mask, args.doorbell_offset & mask)
        } else {
            (
                args.doorbell_offset,
                args.queue_id as u64 * sizes::doorbell_size(gfxv) as u64,
            )
        };
        // Held until the queue is registered: teardown cannot release the
        // page in between (see `Shared::doorbells`).
        let mut pages = lock(&sh.doorbells);
        let db_base = match self.map_doorbell(&mut pages, node, mmap_offset, db_page_size) {
            Ok(a) => a,
            Err(e) => {
                drop(pages);
                let mut d = kfd_ioctl_destroy_queue_args {
                    queue_id: args.queue_id,
                    pad: 0,
                };
                let _ = sh.file.ioctl_plain(AMDKFD_IOC_DESTROY_QUEUE, &mut d);
                drop(bufs);
                return Err(e);
            }
        };

        let id = QueueId(page_addr);
        let resource = QueueResource {
            queue_id: id,
            doorbell: db_base + in_page,
            write_ptr,
            read_ptr,
        };
        let obj = QueueObj {
            owner: Arc::downgrade(sh),
            id,
            kfd_queue_id: args.queue_id,
            slot,
            node_id: req.node_id,
            gpu_id,
            kind: req.kind,
            page: page_addr,
            eop,
            cwsr,
            buffers: Mutex::new(Some(bufs)),
            doorbell: resource.doorbell,
            doorbell_size: sizes::doorbell_size(gfxv),
            resource,
            cu_mask: Mutex::new((cu_count, cu_words)),
        };
        let q = Queue { obj: Arc::new(obj) };
        lock(&sh.queues).insert(id.0, q.clone());
        drop(pages);
        Ok(q)
    }

    fn alloc(&self, req: &ExecAlloc) -> Result<Buffer, QueueError> {
        self.shared.fmm.alloc_exec(req).map_err(QueueError::Memory)
    }

    /// The save area in SVM memory, if the options and the KFD allow it
    /// and registration works (else the caller falls back to paged
    /// memory, as the C library does).
    fn alloc_svm_cwsr(&self, node_id: u32, size: u64) -> Option<SaveArea> {
        let opts = self.shared.options;
        if !opts.rules.svm_save_area
            || !opts.svm_save_area
            || self.kfd_minor() < SVM_ALWAYS_MAPPED_MIN_MINOR
        {
            return None;
        }
        let area = self.shared.fmm.alloc_svm_area(size, node_id).ok()?;
        Some(SaveArea::Svm(area))
    }

    /// Allocates the CWSR area (SVM-registered or paged system memory,
    /// GPU mapped) and writes one save-area header per XCC.
    fn alloc_cwsr(&self, req: &QueueRequest, sz: &CwsrSizes) -> Result<SaveArea, QueueError> {
        let area = match self.alloc_svm_cwsr(req.node_id, sz.total_size as u64) {
            Some(a) => a,
            None => SaveArea::Buffer(self.alloc(&ExecAlloc {
                size: sz.total_size as u64,
                node_id: req.node_id,
                non_paged: false,
                device_local: false,
                uncached: false,
            })?),
        };
        for i in 0..sz.num_xcc {
            let header = save_area_header(sz, i, req.error_event_id, req.error_reason);
            let at = i as u64 * sz.ctx_save_restore_size as u64;
            area.write(at, &header).map_err(QueueError::Memory)?;
        }
        Ok(area)
    }

    /// Maps `node`'s doorbell page once: through the memory manager on
    /// dGPUs (falling back to a plain mapping), else by `mmap` of the KFD
    /// descriptor. Returns the page address. `pages` is the locked
    /// doorbell table.
    fn map_doorbell(
        &self,
        pages: &mut HashMap<u32, DoorbellPage>,
        node: &Node,
        mmap_offset: u64,
        size: u64,
    ) -> Result<u64, QueueError> {
        let sh = &self.shared;
        if let Some(p) = pages.get(&node.id) {
            return Ok(p.addr());
        }
        let gfxv = sizes::gfx_of(node);
        let use_gpuvm = sh.topology.is_dgpu() && gfxv != gfx::TONGA;
        let mut page = None;
        if use_gpuvm {
            if let Ok(buf) = sh.fmm.alloc_doorbell_page(node.gpu_id, size, mmap_offset) {
                page = Some(DoorbellPage::Gpuvm { buf });
            }
        }
        let page = match page {
            Some(p) => p,
            None => {
                let fd = sh.file.as_fd();
                let map = Mapping::file(fd, size, Prot::READ | Prot::WRITE, mmap_offset)
                    .map_err(|e| QueueError::Doorbell(e.to_string()))?;
                DoorbellPage::Mapped { map }
            }
        };
        let addr = page.addr();
        pages.insert(node.id, page);
        Ok(addr)
    }

    /// Checks that `q` is a live queue of this context.
    pub fn check(&self, q: &Queue) -> Result<(), QueueError> {
        self.check_owner(q)?;
        Self::check_live(&lock(&self.shared.queues), q)
    }

    fn check_owner(&self, q: &Queue) -> Result<(), QueueError> {
        if !std::ptr::eq(q.obj.owner.as_ptr(), Arc::as_ptr(&self.shared)) {
            return Err(QueueError::ForeignQueue);
        }
        Ok(())
    }

    fn check_live(queues: &HashMap<u64, Queue>, q: &Queue) -> Result<(), QueueError> {
        match queues.get(&q.obj.id.0) {
            Some(live) if live.same(q) => Ok(()),
            _ => Err(QueueError::UnknownQueue(q.obj.id.0)),
        }
    }

    /// Maps an `HSA_QUEUEID` a C caller passed back to its queue: 0 is
    /// [`QueueError::NullQueue`], anything that is not a live queue of
    /// this context (destroyed, another context's, garbage) is
    /// [`QueueError::UnknownQueue`].
    pub fn lookup(&self, raw: u64) -> Result<Queue, QueueError> {
        if raw == 0 {
            return Err(QueueError::NullQueue);
        }
        lock(&self.shared.queues)
            .get(&raw)
            .cloned()
            .ok_or(QueueError::UnknownQueue(raw))
    }

    /// Changes ring, percentage and priority (`hsaKmtUpdateQueue`).
    pub fn update(
        &self,
        q: &Queue,
        percentage: u32,
        priority: i64,
        ring_address: u64,
        ring_size: u64,
    ) -> Result<(), QueueError> {
        let priority = kfd_priority(priority).ok_or(QueueError::InvalidPriority(priority))?;
        self.check(q)?;
        let mut a = kfd_ioctl_update_queue_args {
            ring_base_address: ring_address,
            queue_id: q.obj.kfd_queue_id,
            ring_size: ring_size as u32,
            queue_percentage: percentage,
            queue_priority: priority,
        };
        kq::update_queue(&self.shared.file, &mut a)
            .map_err(QueueError::kernel(AMDKFD_IOC_UPDATE_QUEUE.info()))?;
        Ok(())
    }

    /// Destroys a queue and frees its buffers (`hsaKmtDestroyQueue`).
    pub fn destroy(&self, q: &Queue) -> Result<(), QueueError> {
        self.check(q)?;
        let sh = &self.shared;
        let mut queues = lock(&sh.queues);
        if !queues.get(&q.obj.id.0).is_some_and(|x| x.same(q)) {
            return Err(QueueError::UnknownQueue(q.obj.id.0));
        }
        let mut a = kfd_ioctl_destroy_queue_args {
            queue_id: q.obj.kfd_queue_id,
            pad: 0,
        };
        sh.file
            .ioctl_plain(AMDKFD_IOC_DESTROY_QUEUE, &mut a)
            .map_err(QueueError::kernel(AMDKFD_IOC_DESTROY_QUEUE.info()))?;
        queues.remove(&q.obj.id.0);
        drop(queues);
        drop(lock(&q.obj.buffers).take());
        Ok(())
    }

    /// Restricts the queue to the CUs set in `mask` (`hsaKmtSetQueueCUMask`).
    ///
    /// `count` is the number of mask bits: it must be a non-zero multiple
    /// of 32 and `mask` must hold the [`cu_mask_words`]`(count)` words the
    /// kernel reads (`count / 32`, at most 32: the kernel ignores the bits
    /// of a longer mask past [`crate::MAX_CU_MASK_BITS`]).
    pub fn set_cu_mask(&self, q: &Queue, count: u32, mask: &[u32]) -> Result<(), QueueError> {
        let words = cu_mask_words(count);
        if count == 0 || count % 32 != 0 || mask.len() < words {
            return Err(QueueError::InvalidCuMask {
                count,
                words: mask.len(),
            });
        }
        self.check(q)?;
        let mask = &mask[..words];
        kq::set_cu_mask(&self.shared.file, q.obj.kfd_queue_id, mask)
            .map_err(QueueError::kernel(AMDKFD_IOC_SET_CU_MASK.info()))?;
        let keep = words.min(page::CU_MASK_WORDS);
        let bytes: Vec<u8> = mask[..keep].iter().flat_map(|w| w.to_ne_bytes()).collect();
        if let Some(b) = lock(&q.obj.buffers).as_ref() {
            let _ = b.page.write(page::CU_MASK, &bytes);
        }
        *lock(&q.obj.cu_mask) = (count, mask.to_vec());
        Ok(())
    }

    /// Queue details and wave state (`hsaKmtGetQueueInfo`). Needs a queue
    /// with a context save area ([`QueueError::NoCwsrArea`] otherwise).
    pub fn info(&self, q: &Queue) -> Result<QueueInfo, QueueError> {
        self.check_owner(q)?;
        // Held across the ioctl: `destroy` and teardown free a queue's
        // buffers only after taking it out of the registry under this lock.
        let queues = lock(&self.shared.queues);
        Self::check_live(&queues, q)?;
        let Some((area, sz)) = q.obj.cwsr else {
            return Err(QueueError::NoCwsrArea);
        };
        // The kernel copies the control stack into the save area, held
        // (with the queue's other buffers) for the call.
        let bufs = lock(&q.obj.buffers);
        let save = bufs
            .as_ref()
            .and_then(|b| b.cwsr.as_ref())
            .ok_or(QueueError::NoCwsrArea)?
            .mapping()?;
        let r = kq::get_queue_wave_state(&self.shared.file, &q.obj.slot, save);
        drop(bufs);
        drop(queues);
        let a = r.map_err(QueueError::kernel(AMDKFD_IOC_GET_QUEUE_WAVE_STATE.info()))?;
        let (count, _) = *lock(&q.obj.cu_mask);
        let ctl = sz.ctl_stack_size as u64;
        // The control stack grows down from the end of its part of the
        // area: a used size larger than that part is a kernel answer we
        // cannot turn into an address inside the area; report it as the
        // failed query it is (ERROR, as for any failure of this ioctl).
        let bad_reply = QueueError::Kernel {
            request: AMDKFD_IOC_GET_QUEUE_WAVE_STATE.info(),
            errno: Errno::EOVERFLOW,
        };
        let user_context_save_area = area.checked_add(ctl).ok_or(bad_reply.clone())?;
        let control_stack_top = ctl
            .checked_sub(a.ctl_stack_used_size as u64)
            .map(|free| area + free)
            .ok_or(bad_reply)?;
        Ok(QueueInfo {
            control_stack_top,
            user_context_save_area,
            save_area_size: a.save_area_used_size as u64,
            control_stack_used: a.ctl_stack_used_size as u64,
            num_cu_assigned: count,
            cu_mask_info: q.obj.page + page::CU_MASK,
            save_area_header: area,
            save_area_alloc_size: sz.ctx_save_restore_size as u64,
        })
    }

    /// Allocates `count` global wave syncs for the queue
    /// (`hsaKmtAllocQueueGWS`); returns the first GWS index.
    pub fn alloc_gws(&self, q: &Queue, count: u32) -> Result<u32, QueueError> {
        self.check(q)?;
        let mut a = kfd_ioctl_alloc_queue_gws_args {
            queue_id: q.obj.kfd_queue_id,
            num_gws: count,
            ..Default::default()
        };
        self.shared
            .file
            .ioctl_plain(AMDKFD_IOC_ALLOC_QUEUE_GWS, &mut a)
            .map_err(QueueError::kernel(AMDKFD_IOC_ALLOC_QUEUE_GWS.info()))?;
        Ok(a.first_gws)
    }

    /// Installs a trap handler on a node's GPU (`hsaKmtSetTrapHandler`).
    pub fn set_trap_handler(&self, node_id: u32, tba: u64, tma: u64) -> Result<(), QueueError> {
        let gpu_id = self
            .shared
            .topology
            .validate_node(node_id)
            .map_err(|_| QueueError::InvalidNode(node_id))?;
        let mut a = kfd_ioctl_set_trap_handler_args {
            tba_addr: tba,
            tma_addr: tma,
            gpu_id,
            pad: 0,
        };
        self.shared
            .file
            .ioctl_plain(AMDKFD_IOC_SET_TRAP_HANDLER, &mut a)
            .map_err(QueueError::kernel(AMDKFD_IOC_SET_TRAP_HANDLER.info()))?;
        Ok(())
    }

    /// Writes `value` to the queue's doorbell (`hsaKmtQueueRingDoorbell`):
    /// 64 bits on SOC15 GPUs, the low 32 bits before.
    ///
    /// The queue is checked under the doorbell lock, which is held across
    /// the store: a concurrent [`Queues::teardown`] cannot unmap the page
    /// in between (the call fails with [`QueueError::UnknownQueue`] once
    /// teardown has begun).
    pub fn ring_doorbell(&self, q: &Queue, value: u64) -> Result<(), QueueError> {
        self.check_owner(q)?;
        let doorbells = lock(&self.shared.doorbells);
        Self::check_live(&lock(&self.shared.queues), q)?;
        // A registered queue's node has its page in the table (see
        // `Shared::doorbells`); the lock is held across the store.
        let page = doorbells
            .get(&q.obj.node_id)
            .ok_or(QueueError::UnknownQueue(q.obj.id.0))?
            .mapping()?;
        let at = q.obj.doorbell.wrapping_sub(page.addr());
        let r = if q.obj.doorbell_size == 8 {
            page.store_u64(at, value)
        } else {
            page.store_u32(at, value as u32)
        };
        drop(doorbells);
        r.map_err(|e| QueueError::Doorbell(format!("doorbell at {:#x}: {e}", q.obj.doorbell)))
    }

    /// Destroys every remaining queue, frees its buffers and releases the
    /// doorbell pages (context teardown; also done on drop). Call before
    /// tearing down the context's events and memory manager. Safe to call
    /// while other threads still use this `Queues`: their queues are gone
    /// afterwards ([`QueueError::UnknownQueue`]).
    pub fn teardown(&self) {
        self.shared.teardown();
    }
}

/// All CUs of the node enabled: (bit count rounded up to 32, words).
fn default_cu_mask(node: &Node) -> (u32, Vec<u32>) {
    let cu_num = node.compute_units();
    let count = cu_num.div_ceil(32) * 32;
    let mut words = vec![0u32; (count / 32) as usize];
    for i in 0..cu_num {
        words[(i / 32) as usize] |= 1 << (i % 32);
    }
    (count, words)
}

/// The 40-byte `HsaUserContextSaveAreaHeader` of XCC `xcc`.
fn save_area_header(sz: &CwsrSizes, xcc: u32, event_id: u32, error_reason: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(SAVE_AREA_HEADER_SIZE as usize);
    let debug_offset = (sz.num_xcc - xcc) * sz.ctx_save_restore_size;
    let debug_size = sz.debug_memory_size * sz.num_xcc;
    // ControlStackOffset, ControlStackSize, WaveStateOffset, WaveStateSize.
    for v in [0u32, 0, 0, 0, debug_offset, debug_size] {
        h.extend_from_slice(&v.to_ne_bytes());
    }
    h.extend_from_slice(&error_reason.to_ne_bytes());
    h.extend_from_slice(&event_id.to_ne_bytes());
    h.extend_from_slice(&0u32.to_ne_bytes());
    h
}

/// What a refused `AMDKFD_IOC_CREATE_QUEUE` means, where the request
/// tells: a ring size that is not a power of two (the kernel's
/// `set_queue_properties_from_user` check), or an SDMA queue with no free
/// slot (its `allocate_sdma_queue`); else the bare errno.
fn create_refused(req: &QueueRequest, errno: Errno) -> QueueError {
    let sdma = match req.kind {
        QueueKind::Sdma | QueueKind::SdmaXgmi => Some(None),
        QueueKind::SdmaByEngine(e) => Some(Some(e)),
        QueueKind::Compute | QueueKind::ComputeAql => None,
    };
    match (errno, sdma) {
        (Errno::EINVAL, _) if req.ring_size != 0 && !req.ring_size.is_power_of_two() => {
            QueueError::RingSize(req.ring_size)
        }
        (Errno::ENOMEM, Some(engine)) => QueueError::NoFreeSdmaQueue { engine },
        _ => QueueError::Kernel {
            request: AMDKFD_IOC_CREATE_QUEUE.info(),
            errno,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_layout() {
        let sz = CwsrSizes {
            waves: 1,
            ctl_stack_size: 0x1000,
            ctx_save_restore_size: 0x3000,
            debug_memory_size: 0x40,
            num_xcc: 2,
            total_size: 0,
        };
        let h = save_area_header(&sz, 1, 9, 0xabcd);
        assert_eq!(h.len(), 40);
        let word = |i: usize| u32::from_ne_bytes(h[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!(word(4), 0x3000);
        assert_eq!(word(5), 0x80);
        assert_eq!(u64::from_ne_bytes(h[24..32].try_into().unwrap()), 0xabcd);
        assert_eq!(word(8), 9);
    }
}
