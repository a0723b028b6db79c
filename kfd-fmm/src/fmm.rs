//! The per-context memory manager.

use std::collections::BTreeMap;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

use kfd_sys::kfd;
use kfd_sys::mman::{self, MapFlags, Prot};
use kfd_sys::{DeviceFile, Errno};
use kfd_topology::GfxVersion;

use crate::aperture::{reserve_svm_range, reset_to_reserved, Aperture, GPU_HUGE_PAGE_SIZE};
use crate::error::{FmmError, Result};
use crate::flags::{hsa_to_ioc, ioc_to_hsa, AllocMemFlags, MemFlags, MemMapFlags};
use crate::lock;
use crate::objects::{ApId, CpuView, Kind, Lookup, NodeArrays, Shard, Slot, Span, VmObject};
use crate::share::ShareHandle;
use crate::va::{align_up, checked_align_up};
use crate::PAGE_SIZE;

/// What the memory manager needs to know about one topology node.
///
/// Node ids are positions in the slice given to [`Fmm::new`], as in the
/// hsakmt API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NodeDesc {
    /// The KFD gpu_id (0 for CPU-only nodes).
    pub gpu_id: u32,
    /// `cpu_cores_count` (0 on dGPU nodes).
    pub cpu_cores: u32,
    /// `simd_count` (0 on CPU nodes).
    pub simd_count: u32,
    /// The GFX IP version (0.0.0 for CPU nodes).
    pub gfx: GfxVersion,
    /// The PCI device id.
    pub device_id: u32,
    /// The DRM render minor (128..=255) of GPU nodes.
    pub drm_render_minor: u32,
}

impl NodeDesc {
    /// What the memory manager needs from a topology snapshot node (the
    /// GFX version is the one the thunk derives: device table, then
    /// `gfx_target_version`, then the override).
    pub fn from_topology_node(n: &kfd_topology::Node) -> Self {
        NodeDesc {
            gpu_id: n.gpu_id,
            cpu_cores: n.properties.cpu_cores_count,
            simd_count: n.properties.simd_count,
            gfx: n.derived.gfx_version.unwrap_or_default(),
            device_id: n.properties.device_id.into(),
            drm_render_minor: n.properties.drm_render_minor,
        }
    }

    /// True for nodes with a GPU.
    pub fn is_gpu(&self) -> bool {
        self.gpu_id != 0
    }
}

/// Where the per-GPU render-node files come from.
#[derive(Debug, Clone, Default)]
pub enum RenderNodes {
    /// Open each GPU's render node through the kfd file's driver; this
    /// memory manager owns them (required for secondary contexts, whose GPU
    /// VMs must not be shared with any other context).
    #[default]
    Open,
    /// Use these already open render nodes, keyed by minor (the primary
    /// context may share its files with other users in the process);
    /// minors missing from the list are opened as with `Open`.
    Shared(Vec<(u32, Arc<DeviceFile>)>),
}

/// The places where the C libraries this memory manager serves behave
/// differently, each a named switch. The C border (hsakmt) picks one value
/// per library generation and passes it in [`FmmOptions::rules`]; the
/// default is the newest upstream library's behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FmmRules {
    /// Allocation flags the library does not know (reserved bits of its
    /// `HsaMemFlags`), cleared before anything looks at them (5.2.3:
    /// ExtendedCoherent and Contiguous).
    pub unknown_flags: MemFlags,
    /// [`Fmm::alloc_memory_align`] refuses ExtendedCoherent together with
    /// CoarseGrain or Uncached (INVALID_PARAMETER); without the check,
    /// CoarseGrain drops the COHERENT allocation flag and Uncached adds
    /// UNCACHED whatever else is set. Either way the node is checked
    /// before the size.
    pub refuse_extended_coherent_mixes: bool,
    /// [`Fmm::alloc_memory_align`] refuses CoarseGrain together with
    /// Uncached too (INVALID_PARAMETER).
    pub refuse_coarse_uncached: bool,
    /// Every allocation gets `KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE`, not
    /// only those with ExecuteAccess.
    pub always_executable: bool,
    /// A GPU's MMIO remap page is mapped onto every GPU, not only onto
    /// that GPU's usable peers.
    pub mmio_on_all_gpus: bool,
    /// A queue doorbell page is mapped onto every GPU (no node list), not
    /// only onto its own GPU.
    pub doorbells_on_all_gpus: bool,
    /// With the SVM API on, unmapping an address no object covers succeeds
    /// on a dGPU too (an SVM range); without it such an unmap fails there.
    pub unmap_unknown_as_svm: bool,
    /// [`Fmm::register_memory`] and friends refuse a NULL address or a zero
    /// size themselves instead of passing it on to the kernel's userptr
    /// `ALLOC_MEMORY_OF_GPU` (which fails: EFAULT / EINVAL).
    pub refuse_empty_registration: bool,
    /// With the SVM API on, user memory no object covers is registered as
    /// an SVM range (`AMDKFD_IOC_SVM` SET_ATTR of its coherence flags; no
    /// memory object, so pointer queries do not know it), falling back to
    /// a userptr BO if that fails; otherwise always a userptr BO.
    pub register_through_svm: bool,
    /// Registering an address that belongs to memory other than a userptr
    /// (an allocation) is refused (INVALID_HANDLE) instead of adding the
    /// registration to it.
    pub register_needs_userptr: bool,
    /// [`Fmm::share_memory`] issues `AMDKFD_IOC_IPC_EXPORT_HANDLE` (0x81,
    /// a ROCm-only request) instead of exporting a dma-buf.
    pub share_via_rocm_ipc: bool,
    /// Registering a share handle that [`Fmm::share_memory`] did not make
    /// (no magic) fails with an invalid argument before any ioctl.
    pub refuse_unmarked_share_handles: bool,
    /// [`MemFlags::ONLY_ADDRESS`] sends an allocation down the system
    /// memory path, where (on a dGPU system) it reserves address space in
    /// the SVM aperture with no memory and no node; otherwise only VRAM
    /// allocations honour it and system memory ignores it (memory is
    /// really allocated).
    pub only_address_on_host_path: bool,
}

impl Default for FmmRules {
    /// The newest upstream library.
    fn default() -> Self {
        FmmRules {
            unknown_flags: MemFlags::empty(),
            refuse_extended_coherent_mixes: true,
            refuse_coarse_uncached: false,
            always_executable: false,
            mmio_on_all_gpus: false,
            doorbells_on_all_gpus: false,
            unmap_unknown_as_svm: true,
            refuse_empty_registration: true,
            register_through_svm: true,
            register_needs_userptr: true,
            share_via_rocm_ipc: false,
            refuse_unmarked_share_handles: true,
            only_address_on_host_path: true,
        }
    }
}

/// Per-context options: the environment knobs of the C library, passed in
/// as values (this crate never reads the environment).
#[derive(Debug, Clone)]
pub struct FmmOptions {
    /// The SVM API is usable in this context (`HSA_USE_SVM`, and off for
    /// secondary contexts): unknown addresses in FreeMemory /
    /// DeregisterMemory / MapMemoryToGPU fall back to SVM semantics.
    pub svm_api_enabled: bool,
    /// Paged system memory is allocated as userptr BOs
    /// (`HSA_USERPTR_FOR_PAGED_MEM`; false for secondary contexts, whose
    /// paged allocations become GTT BOs).
    pub userptr_for_paged_mem: bool,
    /// Force coherent, uncached mappings everywhere (`HSA_DISABLE_CACHE`).
    pub disable_cache: bool,
    /// Check that user memory is mapped when it is registered
    /// (`HSA_CHECK_USERPTR`).
    pub check_userptr: bool,
    /// Always reserve the SVM range instead of letting mmap manage it
    /// (`HSA_RESERVE_SVM`).
    pub reserve_svm: bool,
    /// Guard pages after each allocation (`HSA_SVM_GUARD_PAGES`, default 1).
    pub guard_pages: u32,
    /// Largest VA alignment order, in pages, for big buffers
    /// (`HSA_MAX_VA_ALIGN`, default 9 = 2 MiB).
    pub max_va_align_order: u32,
    /// Zero frame buffer: VRAM requests become system memory (`HSA_ZFB`).
    pub zero_fb: bool,
    /// Render-node policy.
    pub render_nodes: RenderNodes,
    /// How the C library being served behaves where generations differ.
    pub rules: FmmRules,
    /// The KFD interface version `(major, minor)` when the caller read it
    /// already (a context reads it once at open); `None` asks the kernel
    /// (`AMDKFD_IOC_GET_VERSION`).
    pub kfd_version: Option<(u32, u32)>,
}

impl FmmOptions {
    /// Defaults of the primary context with no environment set.
    pub fn primary() -> Self {
        FmmOptions {
            svm_api_enabled: true,
            userptr_for_paged_mem: true,
            disable_cache: false,
            check_userptr: false,
            reserve_svm: false,
            guard_pages: 1,
            max_va_align_order: 9,
            zero_fb: false,
            render_nodes: RenderNodes::Open,
            rules: FmmRules::default(),
            kfd_version: None,
        }
    }

    /// Defaults of a secondary context: no SVM API, no userptr for paged
    /// memory, its own render nodes.
    pub fn secondary() -> Self {
        FmmOptions {
            svm_api_enabled: false,
            userptr_for_paged_mem: false,
            ..FmmOptions::primary()
        }
    }
}

impl Default for FmmOptions {
    fn default() -> Self {
        FmmOptions::primary()
    }
}

/// `HSA_POINTER_TYPE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum PointerType {
    /// `HSA_POINTER_UNKNOWN`.
    Unknown = 0,
    /// `HSA_POINTER_ALLOCATED`: allocated by this context.
    Allocated = 1,
    /// `HSA_POINTER_REGISTERED_USER`: registered user memory.
    RegisteredUser = 2,
    /// `HSA_POINTER_REGISTERED_GRAPHICS`: an imported graphics buffer.
    RegisteredGraphics = 3,
    /// `HSA_POINTER_REGISTERED_SHARED`: imported through a share handle.
    RegisteredShared = 4,
    /// `HSA_POINTER_RESERVED_ADDR`: an address reservation without memory.
    ReservedAddr = 5,
}

/// A node-id list owned by a memory object, as [`Fmm::pointer_info_arrays`]
/// hands it out for C (`HsaPointerInfo::RegisteredNodes`/`MappedNodes`).
///
/// The pointer stays valid for [`NodeArray::len`] reads of `u32` for as
/// long as the object lives (until it is freed or deregistered, or the
/// [`Fmm`] drops); later queries rewrite the entries in place. An empty
/// list is a null pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeArray {
    ptr: *const u32,
    len: usize,
}

impl NodeArray {
    fn new((ptr, len): (*const u32, usize)) -> Self {
        NodeArray {
            ptr: if len == 0 { std::ptr::null() } else { ptr },
            len,
        }
    }

    /// The array as an address and a count, to keep it where raw
    /// pointers may not be (a shard must be `Send`).
    pub(crate) fn parts(&self) -> (usize, usize) {
        (self.ptr as usize, self.len)
    }

    /// [`NodeArray::parts`] back into an array.
    pub(crate) fn from_parts(addr: usize, len: usize) -> Self {
        NodeArray::new((addr as *const u32, len))
    }

    /// The first entry (null for an empty list).
    pub fn as_ptr(&self) -> *const u32 {
        self.ptr
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// What [`Fmm::pointer_info_arrays`] reports: [`PointerInfo`] with the node
/// lists as arrays held by the object, for a C `HsaPointerInfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointerInfoArrays {
    /// What the pointer points into.
    pub kind: PointerType,
    /// The node the memory belongs to.
    pub node: u32,
    /// The allocation flags.
    pub mem_flags: MemFlags,
    /// The CPU address (start of the allocation or registered range).
    pub cpu_address: u64,
    /// The GPU virtual address.
    pub gpu_address: u64,
    /// Size in bytes (of the registered range for user memory).
    pub size: u64,
    /// Nodes the memory is registered to.
    pub registered_nodes: NodeArray,
    /// Nodes the memory is mapped on.
    pub mapped_nodes: NodeArray,
    /// The value last given to [`Fmm::set_user_data`].
    pub user_data: u64,
}

/// What [`Fmm::pointer_info`] reports (the fields of `HsaPointerInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointerInfo {
    /// What the pointer points into.
    pub kind: PointerType,
    /// The node the memory belongs to.
    pub node: u32,
    /// The allocation flags.
    pub mem_flags: MemFlags,
    /// The CPU address (start of the allocation or registered range).
    pub cpu_address: u64,
    /// The GPU virtual address.
    pub gpu_address: u64,
    /// Size in bytes (of the registered range for user memory).
    pub size: u64,
    /// Nodes the memory is registered to.
    pub registered_nodes: Vec<u32>,
    /// Nodes the memory is mapped on.
    pub mapped_nodes: Vec<u32>,
    /// The value last given to [`Fmm::set_user_data`].
    pub user_data: u64,
}

/// What [`Fmm::register_graphics_handle`] returns (`HsaGraphicsResourceInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphicsResource {
    /// Where the buffer is mapped in the GPU address space.
    pub address: u64,
    /// Its size.
    pub size: u64,
    /// The driver metadata of the buffer.
    pub metadata: Vec<u8>,
    /// The node of the GPU that owns the buffer.
    pub node: u32,
}

/// An address range, inclusive limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// First address.
    pub base: u64,
    /// Last address.
    pub limit: u64,
}

/// The apertures of one GPU node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeApertures {
    /// The gpu_id.
    pub gpu_id: u32,
    /// LDS aperture.
    pub lds: Range,
    /// Scratch aperture.
    pub scratch: Range,
    /// The GPU's own GPUVM aperture (only GPUs whose VM does not cover the
    /// canonical address space).
    pub gpuvm: Option<Range>,
    /// The MMIO remap page, if it was mapped.
    pub mmio: Option<Range>,
}

#[derive(Debug)]
struct Scratch {
    base: u64,
    size: u64,
    objs: BTreeMap<u64, VmObject>,
    /// Owned by an RAII handle: address-based free refuses it.
    owned: bool,
}

#[derive(Debug)]
struct Gpu {
    gpu_id: u32,
    node_id: u32,
    device_id: u32,
    render: Arc<DeviceFile>,
    lds: Range,
    scratch_ap: Range,
    gpuvm: Option<Aperture>,
    svm_needed: bool,
    scratch: Mutex<Option<Scratch>>,
    mmio: Mutex<Option<u64>>,
}

/// The GPU memory manager of one KFD context.
///
/// It owns everything it creates: kernel buffer objects, CPU mappings,
/// address reservations and (unless shared in) the render-node files. On
/// drop it unmaps and frees all of it.
///
/// Thread safety: the object index is sharded per GPU (plus one shard for
/// host-only memory), each shard behind its own mutex; reserved apertures
/// have one mutex each for their VA allocator. No lock spans GPUs, and no
/// lock is held across an `mmap` or an allocation ioctl.
#[derive(Debug)]
pub struct Fmm {
    kfd: Arc<DeviceFile>,
    opts: FmmOptions,
    version: (u32, u32),
    nodes: Vec<NodeDesc>,
    /// Per node, the nodes its io links go to (in link order; empty when
    /// the memory manager was made without a topology).
    io_links: Vec<Vec<u32>>,
    gpus: Vec<Gpu>,
    all_gpu_ids: Vec<u32>,
    is_dgpu: bool,
    svm: Option<Aperture>,
    svm_alt: Option<Aperture>,
    svm_reservation: Option<Range>,
    mem_handle: Aperture,
    shards: Vec<Mutex<Shard>>,
    /// Where each shard's objects lie, read without its lock.
    spans: Vec<Arc<Span>>,
    warnings: Mutex<Vec<String>>,
}

/// Start of the handle aperture for address-less allocations: a
/// non-canonical range no CPU or GPU address can fall into.
const MEM_HANDLE_BASE: u64 = 1 << 56;
/// Alignment of scratch backing memory.
const SCRATCH_ALIGN: u64 = 0x10000;
/// Alignment of imported graphics buffers.
const IMAGE_ALIGN: u64 = 256 * 1024;
/// First guess for the size of graphics metadata.
const GRAPHICS_METADATA_DEFAULT_SIZE: u32 = 64;
/// Kaveri, the one GPU whose memory policy can be set.
const KAVERI: GfxVersion = GfxVersion::new(7, 0, 0);

/// Whether the kernel refused an operation with `EPERM` (FREE_MEMORY of
/// the buffer it uses as the event page).
fn is_eperm(e: &FmmError) -> bool {
    matches!(e, FmmError::Ioctl { errno, .. } if *errno == Errno::EPERM)
}

/// The page-granular VM alignment of old GPUs (Tonga, Carrizo need 32 KiB).
fn vm_alignment(device_id: u32) -> u64 {
    const TONGA_PAGE_SIZE: u64 = 0x8000;
    if (0x6920..=0x6939).contains(&device_id) || (0x9870..=0x9877).contains(&device_id) {
        TONGA_PAGE_SIZE
    } else {
        PAGE_SIZE
    }
}

fn page_align_up(v: u64) -> u64 {
    align_up(v, PAGE_SIZE)
}

/// The address space of an AQL ring: twice its size (mapped twice).
fn aql_size(size: u64) -> Result<u64> {
    size.checked_mul(2).ok_or(FmmError::OutOfMemory(
        "size exceeds the virtual address space",
    ))
}

impl Fmm {
    /// Sets up the memory manager of a context: opens (or adopts) each
    /// GPU's render node, reads the process apertures, acquires each GPU's
    /// VM, reserves the SVM range, sets the memory policy and maps the MMIO
    /// remap page of each gfx9+ GPU (a failure there only records a
    /// warning), as libhsakmt's `fmm_init_process_apertures` does.
    pub fn new(kfd: Arc<DeviceFile>, nodes: Vec<NodeDesc>, opts: FmmOptions) -> Result<Fmm> {
        Fmm::with_io_links(kfd, nodes, Vec::new(), opts)
    }

    /// [`Fmm::new`] knowing, per node, the nodes its io links go to (what
    /// finding each GPU's usable peers needs, see
    /// [`FmmRules::mmio_on_all_gpus`]).
    fn with_io_links(
        kfd: Arc<DeviceFile>,
        nodes: Vec<NodeDesc>,
        io_links: Vec<Vec<u32>>,
        opts: FmmOptions,
    ) -> Result<Fmm> {
        let version = match opts.kfd_version {
            Some(v) => v,
            None => {
                let mut v = kfd::kfd_ioctl_get_version_args::default();
                kfd.ioctl_plain(kfd::AMDKFD_IOC_GET_VERSION, &mut v)
                    .map_err(FmmError::ioctl("AMDKFD_IOC_GET_VERSION"))?;
                (v.major_version, v.minor_version)
            }
        };
        let is_dgpu = nodes
            .iter()
            .any(|n| n.is_gpu() && n.cpu_cores == 0 && n.simd_count > 0);

        let mut gpus = Vec::new();
        for (node_id, n) in nodes.iter().enumerate() {
            if !n.is_gpu() {
                continue;
            }
            let shared = match &opts.render_nodes {
                RenderNodes::Shared(list) => list
                    .iter()
                    .find(|(m, _)| *m == n.drm_render_minor)
                    .map(|(_, f)| f.clone()),
                RenderNodes::Open => None,
            };
            let render = match shared {
                Some(f) => f,
                None => Arc::new(
                    DeviceFile::open_render_node(kfd.driver().clone(), n.drm_render_minor)
                        .map_err(|errno| FmmError::RenderNode {
                            minor: n.drm_render_minor,
                            errno,
                        })?,
                ),
            };
            gpus.push(Gpu {
                gpu_id: n.gpu_id,
                node_id: node_id as u32,
                device_id: n.device_id,
                render,
                lds: Range { base: 0, limit: 0 },
                scratch_ap: Range { base: 0, limit: 0 },
                gpuvm: None,
                svm_needed: is_dgpu || n.gfx.major >= 9,
                scratch: Mutex::new(None),
                mmio: Mutex::new(None),
            });
        }
        let (shards, spans) = (0..=gpus.len())
            .map(|_| {
                let (shard, span) = Shard::new();
                (Mutex::new(shard), span)
            })
            .unzip();
        let mem_handle = Aperture::reserved(
            MEM_HANDLE_BASE,
            MEM_HANDLE_BASE + (1 << 47) - 1,
            PAGE_SIZE,
            opts.guard_pages,
            false,
        );
        let mut fmm = Fmm {
            kfd,
            opts,
            version,
            nodes,
            io_links,
            gpus,
            all_gpu_ids: Vec::new(),
            is_dgpu,
            svm: None,
            svm_alt: None,
            svm_reservation: None,
            mem_handle,
            shards,
            spans,
            warnings: Mutex::new(Vec::new()),
        };
        // On failure `fmm` is dropped, which undoes whatever was set up.
        fmm.init_apertures()?;
        fmm.map_mmio_pages();
        Ok(fmm)
    }

    /// [`Fmm::new`] for the nodes of a topology snapshot (node ids are the
    /// snapshot's).
    pub fn from_topology(
        kfd: Arc<DeviceFile>,
        topology: &kfd_topology::Topology,
        opts: FmmOptions,
    ) -> Result<Fmm> {
        let nodes = topology
            .nodes
            .iter()
            .map(NodeDesc::from_topology_node)
            .collect();
        let io_links = topology
            .nodes
            .iter()
            .map(|n| n.io_links.iter().map(|l| l.node_to).collect())
            .collect();
        Fmm::with_io_links(kfd, nodes, io_links, opts)
    }

    /// GET_PROCESS_APERTURES_NEW (or, on a really old kernel, the inline
    /// form): the apertures of each GPU, in kernel order.
    fn process_apertures(&self) -> Result<Vec<kfd::kfd_process_device_apertures>> {
        let n = self.nodes.len().max(1);
        let mut aps = vec![kfd::kfd_process_device_apertures::default(); n];
        let mut args = kfd::kfd_ioctl_get_process_apertures_new_args {
            kfd_process_device_apertures_ptr: aps.as_mut_ptr() as u64,
            num_of_nodes: n as u32,
            pad: 0,
        };
        // SAFETY: the pointer addresses `aps`, valid for `num_of_nodes`
        // entries, which the kernel fills.
        let count = match unsafe {
            self.kfd
                .ioctl(kfd::AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &mut args)
        } {
            Ok(_) => (args.num_of_nodes as usize).min(n),
            Err(_) => {
                // A really old kernel: the inline form, at most 7 GPUs.
                let mut old = kfd::kfd_ioctl_get_process_apertures_args::default();
                self.kfd
                    .ioctl_plain(kfd::AMDKFD_IOC_GET_PROCESS_APERTURES, &mut old)
                    .map_err(FmmError::ioctl("AMDKFD_IOC_GET_PROCESS_APERTURES"))?;
                let c = (old.num_of_nodes as usize)
                    .min(n)
                    .min(old.process_apertures.len());
                aps[..c].copy_from_slice(&old.process_apertures[..c]);
                c
            }
        };
        aps.truncate(count);
        Ok(aps)
    }

    fn init_apertures(&mut self) -> Result<()> {
        let aps = self.process_apertures()?;
        let (mut svm_base, mut svm_limit, mut svm_align) = (0u64, 0u64, 0u64);
        let mut canonical = Vec::new();
        for ap in &aps {
            let Some(gi) = self.gpu_index(ap.gpu_id) else {
                continue;
            };
            if self.all_gpu_ids.contains(&ap.gpu_id) {
                return Err(FmmError::Failed(
                    "duplicate gpu_id in the process apertures",
                ));
            }
            self.all_gpu_ids.push(ap.gpu_id);
            let guard = self.opts.guard_pages;
            let gpu = &mut self.gpus[gi];
            gpu.lds = Range {
                base: ap.lds_base,
                limit: ap.lds_limit,
            };
            gpu.scratch_ap = Range {
                base: ap.scratch_base,
                limit: ap.scratch_limit,
            };
            let align = vm_alignment(gpu.device_id);
            if ap.gpuvm_limit < (1 << 47) {
                // The GPU VM covers (part of) the canonical range: it joins
                // the SVM apertures shared by all such GPUs.
                svm_base = svm_base.max(ap.gpuvm_base);
                svm_limit = if svm_limit == 0 {
                    ap.gpuvm_limit
                } else {
                    svm_limit.min(ap.gpuvm_limit)
                };
                svm_align = svm_align.max(align);
                canonical.push(ap.gpu_id);
            } else {
                let a = Aperture::reserved(ap.gpuvm_base, ap.gpuvm_limit, align, guard, false);
                // Keep the first page of the aperture unused, so an offset
                // from the base is never 0.
                let _ = a.allocate(None, align, align);
                gpu.gpuvm = Some(a);
            }
            self.acquire_vm(gi)?;
        }

        if svm_limit != 0 {
            self.init_svm(svm_base, svm_limit, svm_align)?;
            self.set_memory_policies(&canonical)?;
        }
        Ok(())
    }

    /// ACQUIRE_VM of GPU `gi` on its render node.
    fn acquire_vm(&self, gi: usize) -> Result<()> {
        let gpu = &self.gpus[gi];
        let mut acq = kfd::kfd_ioctl_acquire_vm_args {
            drm_fd: gpu.render.as_fd().as_raw_fd() as u32,
            gpu_id: gpu.gpu_id,
        };
        self.kfd
            .ioctl_plain(kfd::AMDKFD_IOC_ACQUIRE_VM, &mut acq)
            .map_err(FmmError::ioctl("AMDKFD_IOC_ACQUIRE_VM"))?;
        Ok(())
    }

    /// SET_MEMORY_POLICY of each GPU in `canonical` (those whose VM covers
    /// the canonical range), matching the SVM apertures.
    fn set_memory_policies(&self, canonical: &[u32]) -> Result<()> {
        let Some(alt) = self.svm_alt_aperture() else {
            return Ok(());
        };
        let (alt_base, alt_size) = (alt.base, alt.limit - alt.base + 1);
        for &gpu_id in canonical {
            let mut p = kfd::kfd_ioctl_set_memory_policy_args {
                alternate_aperture_base: alt_base,
                alternate_aperture_size: alt_size,
                gpu_id,
                default_policy: if self.opts.disable_cache {
                    kfd::KFD_IOC_CACHE_POLICY_COHERENT
                } else {
                    kfd::KFD_IOC_CACHE_POLICY_NONCOHERENT
                },
                alternate_policy: kfd::KFD_IOC_CACHE_POLICY_COHERENT,
                misc_process_flag: 0,
            };
            self.kfd
                .ioctl_plain(kfd::AMDKFD_IOC_SET_MEMORY_POLICY, &mut p)
                .map_err(FmmError::ioctl("AMDKFD_IOC_SET_MEMORY_POLICY"))?;
        }
        Ok(())
    }

    fn init_svm(&mut self, base: u64, limit: u64, align: u64) -> Result<()> {
        let base = align_up(base, GPU_HUGE_PAGE_SIZE);
        let limit = ((limit + 1) & !(GPU_HUGE_PAGE_SIZE - 1)).wrapping_sub(1);
        let guard = self.opts.guard_pages;
        if limit >= (1 << 47) - 1 && !self.opts.reserve_svm && align <= PAGE_SIZE {
            // The GPUs address the whole canonical range: let mmap place
            // allocations. Probe once; fall back to a reservation if mmap
            // cannot give us an address in range.
            let ap = Aperture::mmap(base, limit, align, guard, self.opts.max_va_align_order);
            if let Ok(probe) = ap.allocate(None, PAGE_SIZE, 0) {
                // SAFETY: the probe range was just allocated and is unused.
                unsafe { ap.release(probe, PAGE_SIZE, true) };
                self.svm = Some(ap);
                return Ok(());
            }
        }
        let (b, l) = reserve_svm_range(base, limit)?;
        self.svm_reservation = Some(Range { base: b, limit: l });
        // The first quarter (64 KiB aligned) is the coherent alternate
        // aperture, the rest the default (non-coherent) one.
        let alt_base = align_up(b, 0x10000);
        let alt_size = align_up((l - b + 1) >> 2, 0x10000);
        self.svm_alt = Some(Aperture::reserved(
            alt_base,
            alt_base + alt_size - 1,
            align,
            guard,
            true,
        ));
        self.svm = Some(Aperture::reserved(
            alt_base + alt_size,
            l,
            align,
            guard,
            true,
        ));
        Ok(())
    }

    /// Undoes what acquiring the system properties set up, as upstream
    /// `hsaKmtReleaseSystemProperties` does with
    /// `hsakmt_fmm_destroy_process_apertures`: unmaps and frees each GPU's
    /// MMIO remap page. Allocations, scratch and the SVM apertures stay.
    pub fn release_apertures(&self) {
        for gi in 0..self.gpus.len() {
            let Some(addr) = lock(&self.gpus[gi].mmio).take() else {
                continue;
            };
            let obj = lock(&self.shards[gi + 1]).remove_start(addr);
            if let Some(obj) = obj {
                self.destroy(obj);
            }
        }
    }

    /// Sets the apertures up again after [`Fmm::release_apertures`], as
    /// upstream's next `hsaKmtAcquireSystemProperties` does: reads the
    /// process apertures, acquires each GPU's VM, sets the memory policy
    /// of the GPUs sharing the (kept) SVM apertures and maps the MMIO
    /// remap pages again.
    pub fn reacquire_apertures(&self) -> Result<()> {
        let aps = self.process_apertures()?;
        let mut canonical = Vec::new();
        for ap in &aps {
            let Some(gi) = self.gpu_index(ap.gpu_id) else {
                continue;
            };
            if ap.gpuvm_limit < (1 << 47) {
                canonical.push(ap.gpu_id);
            }
            self.acquire_vm(gi)?;
        }
        if !canonical.is_empty() {
            self.set_memory_policies(&canonical)?;
        }
        self.map_mmio_pages();
        Ok(())
    }

    fn map_mmio_pages(&self) {
        for gi in 0..self.gpus.len() {
            if !self.gpus[gi].svm_needed || !self.all_gpu_ids.contains(&self.gpus[gi].gpu_id) {
                continue;
            }
            match self.map_mmio(gi) {
                Ok(addr) => *lock(&self.gpus[gi].mmio) = Some(addr),
                Err(e) => self.warn(format!(
                    "failed to map the MMIO remap page of gpu {:#x}: {e}",
                    self.gpus[gi].gpu_id
                )),
            }
        }
    }

    fn map_mmio(&self, gi: usize) -> Result<u64> {
        let ioc = AllocMemFlags::MMIO_REMAP | AllocMemFlags::WRITABLE | AllocMemFlags::COHERENT;
        let (addr, handle, offset) =
            self.alloc_bo(gi, ApId::SvmCoherent, None, PAGE_SIZE, 0, ioc, None)?;
        let mut obj = VmObject::new(
            addr,
            PAGE_SIZE,
            Some(handle),
            self.gpus[gi].gpu_id,
            ApId::SvmCoherent,
        );
        obj.mflags = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
        obj.node_id = self.gpus[gi].node_id;
        let r = self
            .map_cpu(
                addr,
                PAGE_SIZE,
                true,
                self.kfd.as_fd(),
                offset,
                "MMIO remap page",
            )
            .and_then(|()| {
                obj.cpu = CpuView::Mapped { len: PAGE_SIZE };
                // Every C library maps it with no node list: onto every
                // GPU (5.2.3's default mapping set), or, as the object
                // belongs to a GPU node, onto that GPU's usable peers.
                let targets = if self.opts.rules.mmio_on_all_gpus {
                    self.all_gpu_ids.clone()
                } else {
                    self.usable_peers(gi)
                };
                self.map_ioctl(&mut obj, &targets)
            });
        if let Err(e) = r {
            self.destroy(obj);
            return Err(e);
        }
        obj.mapping_count = 1;
        lock(&self.shards[gi + 1]).insert(obj);
        Ok(addr)
    }

    /// The GPUs that can map memory of GPU `gi`, as upstream fmm.c builds
    /// `usable_peer_id_array`: the GPU itself, then, in aperture order,
    /// each GPU with an io link to it (once per such link).
    fn usable_peers(&self, gi: usize) -> Vec<u32> {
        let me = self.gpus[gi].node_id;
        let mut peers = vec![self.gpus[gi].gpu_id];
        for &gpu_id in &self.all_gpu_ids {
            let Some(from) = self.gpu_index(gpu_id) else {
                continue;
            };
            let links = self
                .io_links
                .get(self.gpus[from].node_id as usize)
                .map_or(&[][..], Vec::as_slice);
            for &to in links {
                if to == me {
                    peers.push(gpu_id);
                }
            }
        }
        peers
    }

    fn warn(&self, msg: String) {
        lock(&self.warnings).push(msg);
    }

    // ------------------------------------------------------------------
    // Queries
    // ------------------------------------------------------------------

    /// The kfd file this memory manager issues its ioctls on.
    pub fn kfd(&self) -> &Arc<DeviceFile> {
        &self.kfd
    }

    /// The KFD ioctl interface version `(major, minor)`.
    pub fn kfd_version(&self) -> (u32, u32) {
        self.version
    }

    /// The nodes this memory manager was created with.
    pub fn nodes(&self) -> &[NodeDesc] {
        &self.nodes
    }

    /// The gpu_ids of all GPUs with apertures, in kernel order (the default
    /// mapping set).
    pub fn gpu_ids(&self) -> &[u32] {
        &self.all_gpu_ids
    }

    /// True when the system has a discrete GPU (then everything is
    /// GPUVM-managed; APUs use plain CPU memory for system allocations).
    pub fn is_dgpu(&self) -> bool {
        self.is_dgpu
    }

    /// The options in use.
    pub fn options(&self) -> &FmmOptions {
        &self.opts
    }

    /// Non-fatal problems met so far (e.g. the MMIO page could not be mapped).
    pub fn warnings(&self) -> Vec<String> {
        lock(&self.warnings).clone()
    }

    /// The render-node file of the GPU with `gpu_id`.
    pub fn render_node(&self, gpu_id: u32) -> Option<&Arc<DeviceFile>> {
        self.gpu_index(gpu_id).map(|gi| &self.gpus[gi].render)
    }

    /// The SVM range (start of the coherent aperture to the end of the
    /// default one), if any GPU uses canonical addresses.
    pub fn svm_aperture(&self) -> Option<Range> {
        let d = self.svm.as_ref()?;
        let a = self.svm_alt_aperture()?;
        Some(Range {
            base: a.base.min(d.base),
            limit: d.limit.max(a.limit),
        })
    }

    /// The apertures of a GPU node.
    pub fn node_apertures(&self, node: u32) -> Result<NodeApertures> {
        let gpu_id = self.validate_node(node)?;
        let gi = self.gpu_index(gpu_id).ok_or(FmmError::NotAGpuNode(node))?;
        let g = &self.gpus[gi];
        Ok(NodeApertures {
            gpu_id,
            lds: g.lds,
            scratch: g.scratch_ap,
            gpuvm: g.gpuvm.as_ref().map(|a| Range {
                base: a.base,
                limit: a.limit,
            }),
            mmio: lock(&g.mmio).map(|b| Range {
                base: b,
                limit: b + PAGE_SIZE - 1,
            }),
        })
    }

    /// Number of live memory objects (for tests and diagnostics).
    pub fn object_count(&self) -> usize {
        self.shards.iter().map(|s| lock(s).len()).sum::<usize>()
            + self
                .gpus
                .iter()
                .map(|g| lock(&g.scratch).as_ref().map_or(0, |s| s.objs.len()))
                .sum::<usize>()
    }

    // ------------------------------------------------------------------
    // Helpers
    // ------------------------------------------------------------------

    /// [`FmmRules::always_executable`].
    fn always_executable(&self) -> bool {
        self.opts.rules.always_executable
    }

    fn gpu_index(&self, gpu_id: u32) -> Option<usize> {
        if gpu_id == 0 {
            return None;
        }
        self.gpus.iter().position(|g| g.gpu_id == gpu_id)
    }

    /// The gpu_id of `node` (0 for a CPU node), or InvalidNode.
    pub fn validate_node(&self, node: u32) -> Result<u32> {
        self.nodes
            .get(node as usize)
            .map(|n| n.gpu_id)
            .ok_or(FmmError::InvalidNode(node))
    }

    /// The gpu_ids of a node list, as `validate_nodeid_array`: an empty
    /// list is an invalid argument, a bad node an invalid node.
    pub fn gpu_ids_for_nodes(&self, nodes: &[u32]) -> Result<Vec<u32>> {
        if nodes.is_empty() {
            return Err(FmmError::InvalidArgument("empty node list"));
        }
        nodes.iter().map(|&n| self.validate_node(n)).collect()
    }

    fn node_of_gpu(&self, gpu_id: u32) -> u32 {
        self.gpu_index(gpu_id).map_or(0, |gi| self.gpus[gi].node_id)
    }

    fn svm_alt_aperture(&self) -> Option<&Aperture> {
        self.svm_alt.as_ref().or(self.svm.as_ref())
    }

    fn aperture(&self, id: ApId) -> Option<&Aperture> {
        match id {
            ApId::SvmDefault => self.svm.as_ref(),
            ApId::SvmCoherent => self.svm_alt_aperture(),
            ApId::Gpuvm(gi) => self.gpus.get(gi)?.gpuvm.as_ref(),
            ApId::MemHandle => Some(&self.mem_handle),
            ApId::CpuVm => None,
        }
    }

    fn check_minor(&self, need: u32) -> Result<()> {
        if self.version.1 < need {
            return Err(FmmError::KfdTooOld {
                need,
                have: self.version.1,
            });
        }
        Ok(())
    }

    /// Runs `f` on the shard holding the object `addr` resolves to. Only
    /// shards whose span covers `addr` are locked (usually one: objects of
    /// different GPUs interleave only when several GPUs allocate).
    fn with_shard<R>(
        &self,
        addr: u64,
        how: Lookup,
        f: impl FnOnce(&mut Shard, Slot) -> R,
    ) -> Option<R> {
        for (s, span) in self.shards.iter().zip(&self.spans) {
            if !span.may_hold(addr) {
                continue;
            }
            let mut g = lock(s);
            if let Some(start) = g.find(addr, how) {
                return Some(f(&mut g, start));
            }
        }
        None
    }

    fn with_object<R>(
        &self,
        addr: u64,
        how: Lookup,
        f: impl FnOnce(&mut VmObject) -> R,
    ) -> Option<R> {
        self.with_shard(addr, how, |s, start| f(s.get_mut(start).expect("found")))
    }

    fn shard_of(&self, gpu_id: u32) -> usize {
        self.gpu_index(gpu_id).map_or(0, |gi| gi + 1)
    }

    fn insert(&self, obj: VmObject) {
        lock(&self.shards[self.shard_of(obj.gpu_id)]).insert(obj);
    }

    /// Reserves address space in `ap` and creates a kernel BO there.
    /// Returns `(address, handle, mmap_offset)`.
    #[allow(clippy::too_many_arguments)]
    fn alloc_bo(
        &self,
        gi: usize,
        ap: ApId,
        fixed: Option<u64>,
        size: u64,
        align: u64,
        ioc: AllocMemFlags,
        userptr: Option<u64>,
    ) -> Result<(u64, u64, u64)> {
        let aperture = self
            .aperture(ap)
            .ok_or(FmmError::NotSupported("aperture not available"))?;
        let addr = aperture.allocate(fixed, size, align)?;
        match self.create_bo(gi, ap, aperture, addr, size, ioc, userptr) {
            Ok((handle, offset)) => Ok((addr, handle, offset)),
            Err(e) => {
                // SAFETY: the range was allocated above and nothing uses it.
                unsafe { aperture.release(addr, size, true) };
                Err(e)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn create_bo(
        &self,
        gi: usize,
        ap: ApId,
        aperture: &Aperture,
        addr: u64,
        size: u64,
        ioc: AllocMemFlags,
        userptr: Option<u64>,
    ) -> Result<(u64, u64)> {
        let va_addr =
            if !self.is_dgpu && matches!(ap, ApId::Gpuvm(_)) && ioc.contains(AllocMemFlags::VRAM) {
                addr - aperture.base
            } else {
                addr
            };
        let mut args = kfd::kfd_ioctl_alloc_memory_of_gpu_args {
            va_addr,
            size,
            handle: 0,
            mmap_offset: userptr.unwrap_or(0),
            gpu_id: self.gpus[gi].gpu_id,
            flags: (ioc | AllocMemFlags::NO_SUBSTITUTE).bits(),
        };
        // SAFETY: the only user address in the arguments is the userptr
        // range, which the caller mapped (allocation) or the API caller
        // registered; the kernel pins those pages and reads nothing else.
        unsafe {
            self.kfd
                .ioctl(kfd::AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut args)
        }
        .map_err(FmmError::ioctl("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU"))?;
        Ok((args.handle, args.mmap_offset))
    }

    fn free_bo(&self, handle: u64) -> Result<()> {
        let mut f = kfd::kfd_ioctl_free_memory_of_gpu_args { handle };
        self.kfd
            .ioctl_plain(kfd::AMDKFD_IOC_FREE_MEMORY_OF_GPU, &mut f)
            .map(|_| ())
            .map_err(FmmError::ioctl("AMDKFD_IOC_FREE_MEMORY_OF_GPU"))
    }

    /// Maps a device file over `[addr, addr+len)` (which this manager
    /// reserved for the object being created).
    fn map_cpu(
        &self,
        addr: u64,
        len: u64,
        host_access: bool,
        fd: BorrowedFd<'_>,
        offset: u64,
        what: &'static str,
    ) -> Result<()> {
        let prot = if host_access {
            Prot::READ | Prot::WRITE
        } else {
            Prot::empty()
        };
        // SAFETY: the range lies in an address reservation this manager
        // made for the object being created; no Rust reference points
        // into it.
        unsafe {
            mman::mmap(
                addr as usize,
                len as usize,
                prot,
                MapFlags::SHARED | MapFlags::FIXED,
                Some(fd),
                offset,
            )
        }
        .map_err(|errno| FmmError::Mmap { what, errno })?;
        dont_fork(addr, len);
        Ok(())
    }

    /// CPU-maps the first `size` bytes of a new BO object at its address.
    /// An object that reserved more than that (twice `size`: an AQL ring)
    /// and is host accessible gets the same pages once more right behind,
    /// so a reader can run past the ring's end without wrapping. The object
    /// counts as CPU-mapped once the first mapping is in place, so
    /// [`Fmm::destroy`] undoes a half-done mirror too.
    fn map_bo_cpu(
        &self,
        obj: &mut VmObject,
        size: u64,
        host_access: bool,
        fd: BorrowedFd<'_>,
        offset: u64,
        what: &'static str,
    ) -> Result<()> {
        self.map_cpu(obj.start, size, host_access, fd, offset, what)?;
        obj.cpu = CpuView::Mapped { len: obj.size };
        if host_access && obj.size > size {
            self.map_cpu(obj.start + size, size, true, fd, offset, "AQL mirror")?;
        }
        Ok(())
    }

    /// Undoes an object that is in no shard: unmaps it from GPUs, frees
    /// the BO and gives back its address range. Errors are ignored
    /// (teardown and failure paths); in particular the kernel's `EPERM`
    /// for the event-page buffer, which it keeps until the process ends,
    /// is expected, and a buffer it already refused is not offered again.
    fn destroy(&self, mut obj: VmObject) {
        if obj.kernel_held {
            self.release_range(&obj);
            return;
        }
        if obj.handle.is_some() && !obj.mapped.is_empty() {
            let ids = obj.mapped.clone();
            let _ = self.unmap_ioctl(&mut obj, &ids);
        }
        if let Some(h) = obj.handle {
            let _ = self.free_bo(h);
        }
        self.release_range(&obj);
    }

    fn release_range(&self, obj: &VmObject) {
        match self.aperture(obj.aperture) {
            // SAFETY: the object is gone from every index, so its range is
            // no longer handed out or referenced by us.
            Some(ap) => unsafe { ap.release(obj.start, obj.size, obj.cpu != CpuView::None) },
            None => {
                if let ApId::CpuVm = obj.aperture {
                    // SAFETY: APU host memory this manager mapped; the
                    // object is gone, so nothing refers to it any more.
                    let _ = unsafe { mman::munmap(obj.start as usize, obj.size as usize) };
                }
            }
        }
    }

    /// MAP_MEMORY_TO_GPU on `targets`, resuming after the devices the
    /// object is already mapped on (passed first, counted in `n_success`).
    fn map_ioctl(&self, obj: &mut VmObject, targets: &[u32]) -> Result<()> {
        let handle = obj.handle.ok_or(FmmError::NotMappable(obj.start))?;
        let mut ids: Vec<u32> = targets
            .iter()
            .copied()
            .filter(|t| obj.mapped.contains(t))
            .collect();
        let done = ids.len();
        ids.extend(targets.iter().copied().filter(|t| !obj.mapped.contains(t)));
        ids.dedup();
        let mut args = kfd::kfd_ioctl_map_memory_to_gpu_args {
            handle,
            device_ids_array_ptr: ids.as_ptr() as u64,
            n_devices: ids.len() as u32,
            n_success: done as u32,
        };
        // SAFETY: `device_ids_array_ptr` points to `ids`, `n_devices` u32s
        // that stay alive across the call; the kernel only reads them.
        let r = unsafe { self.kfd.ioctl(kfd::AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut args) };
        let n = (args.n_success as usize).min(ids.len());
        for id in &ids[..n] {
            if !obj.mapped.contains(id) {
                obj.mapped.push(*id);
            }
        }
        r.map(|_| ())
            .map_err(FmmError::ioctl("AMDKFD_IOC_MAP_MEMORY_TO_GPU"))
    }

    fn unmap_ioctl(&self, obj: &mut VmObject, ids: &[u32]) -> Result<()> {
        let handle = obj.handle.ok_or(FmmError::NotMappable(obj.start))?;
        let mut args = kfd::kfd_ioctl_unmap_memory_from_gpu_args {
            handle,
            device_ids_array_ptr: ids.as_ptr() as u64,
            n_devices: ids.len() as u32,
            n_success: 0,
        };
        // SAFETY: as for map: the id array outlives the call and is only read.
        let r = unsafe {
            self.kfd
                .ioctl(kfd::AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &mut args)
        };
        let n = (args.n_success as usize).min(ids.len());
        obj.mapped.retain(|m| !ids[..n].contains(m));
        r.map(|_| ())
            .map_err(FmmError::ioctl("AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU"))
    }

    // ------------------------------------------------------------------
    // Allocation
    // ------------------------------------------------------------------

    /// `hsaKmtAllocMemory`: allocates `size` bytes on `node` with `flags`.
    /// `address` is used only with [`MemFlags::FIXED_ADDRESS`].
    pub fn alloc_memory(
        &self,
        node: u32,
        size: u64,
        flags: MemFlags,
        address: Option<u64>,
    ) -> Result<u64> {
        self.alloc_memory_align(node, size, 0, flags, address)
    }

    /// `hsaKmtAllocMemoryAlign`: as [`Fmm::alloc_memory`] with an explicit
    /// alignment (0: default; else a power of two of at least the page size).
    ///
    /// A size above [`crate::MAX_ALLOC_SIZE`] cannot be had: it fails with
    /// the status the C library reports for a failed allocation of that
    /// kind, NO_MEMORY for VRAM and scratch, ERROR for system memory.
    ///
    /// Flag combinations follow [`FmmRules::refuse_extended_coherent_mixes`]
    /// and [`FmmRules::refuse_coarse_uncached`], and the flags in
    /// [`FmmRules::unknown_flags`] are ignored.
    pub fn alloc_memory_align(
        &self,
        node: u32,
        size: u64,
        align: u64,
        flags: MemFlags,
        address: Option<u64>,
    ) -> Result<u64> {
        self.alloc_impl(node, size, align, flags, address, false)
    }

    /// The checks an allocation makes before it looks at its arguments:
    /// KFD 1.16 for [`MemFlags::CONTIGUOUS`] (unless the generation
    /// ignores that flag), then the node. Returns the node's gpu_id (0 for
    /// a CPU node). `hsaKmtAllocMemory` runs these before refusing a NULL
    /// output pointer, as the C library does.
    pub fn check_alloc_node(&self, node: u32, flags: MemFlags) -> Result<u32> {
        if flags
            .difference(self.opts.rules.unknown_flags)
            .contains(MemFlags::CONTIGUOUS)
        {
            self.check_minor(16)?;
        }
        self.validate_node(node)
    }

    /// [`Fmm::alloc_memory_align`] for an RAII handle: the object is
    /// marked owned from the moment it is in the index, so no address-based
    /// call can release it under its owner.
    pub(crate) fn alloc_owned(
        &self,
        node: u32,
        size: u64,
        align: u64,
        flags: MemFlags,
    ) -> Result<u64> {
        self.alloc_impl(node, size, align, flags, None, true)
    }

    /// The checks [`Fmm::alloc_memory_align`] makes before it looks at
    /// the address: the flags' kernel version (Contiguous needs KFD 1.16),
    /// the node, the alignment, then the size (non-zero, a multiple of
    /// the flags' page size). The C border runs them before it touches
    /// the caller's address pointer, as the C library does. Returns the
    /// node's gpu_id (0 for a CPU node) and the flags as this generation
    /// reads them.
    pub fn check_alloc(
        &self,
        node: u32,
        size: u64,
        align: u64,
        mut flags: MemFlags,
    ) -> Result<(u32, MemFlags)> {
        let gpu_id = self.check_alloc_node(node, flags)?;
        flags.remove(self.opts.rules.unknown_flags);
        let page = flags.page_size();
        if align != 0 && (align < page || !align.is_power_of_two()) {
            return Err(FmmError::BadAlignment(align));
        }
        if size == 0 || size % page != 0 {
            return Err(FmmError::BadSize { size, page });
        }
        Ok((gpu_id, flags))
    }

    fn alloc_impl(
        &self,
        node: u32,
        size: u64,
        align: u64,
        flags: MemFlags,
        address: Option<u64>,
        owned: bool,
    ) -> Result<u64> {
        let rules = self.opts.rules;
        let (gpu_id, mut flags) = self.check_alloc(node, size, align, flags)?;
        let fixed = if flags.contains(MemFlags::FIXED_ADDRESS) {
            match address {
                Some(a) if a != 0 => Some(a),
                _ => return Err(FmmError::InvalidArgument("FixedAddress without an address")),
            }
        } else {
            None
        };
        let coarse = flags.contains(MemFlags::COARSE_GRAIN);
        let ext = flags.contains(MemFlags::EXTENDED_COHERENT);
        let unc = flags.contains(MemFlags::UNCACHED);
        if rules.refuse_extended_coherent_mixes && ext && (coarse || unc) {
            return Err(FmmError::ConflictingFlags(
                "ExtendedCoherent with CoarseGrain or Uncached",
            ));
        }
        if rules.refuse_coarse_uncached && coarse && unc {
            return Err(FmmError::ConflictingFlags("CoarseGrain with Uncached"));
        }
        // Nothing this big fits in the address space; refused here, before
        // any size arithmetic, with the status of the path's failure.
        let too_big = size > crate::MAX_ALLOC_SIZE;
        const TOO_BIG: &str = "size exceeds the virtual address space";
        if flags.contains(MemFlags::SCRATCH) {
            if align != 0 {
                return Err(FmmError::NotImplemented("alignment for scratch memory"));
            }
            let gi = self
                .gpu_index(gpu_id)
                .ok_or(FmmError::OutOfMemory("scratch needs a GPU node"))?;
            if too_big {
                return Err(FmmError::OutOfMemory(TOO_BIG));
            }
            return self.alloc_scratch(gi, fixed, size, owned);
        }
        let non_paged = flags.contains(MemFlags::NON_PAGED);
        let va_only_host =
            rules.only_address_on_host_path && flags.contains(MemFlags::ONLY_ADDRESS);
        if gpu_id == 0
            || !non_paged
            || self.opts.zero_fb
            || flags.contains(MemFlags::GTT_ACCESS)
            || va_only_host
        {
            if self.opts.zero_fb && gpu_id != 0 && non_paged {
                flags |= MemFlags::COARSE_GRAIN;
            }
            if too_big {
                return Err(FmmError::HostAllocFailed(TOO_BIG));
            }
            return self
                .alloc_host(node, gpu_id, fixed, size, align, flags, owned)
                .map_err(|e| match e {
                    FmmError::Ioctl { errno, .. } | FmmError::Mmap { errno, .. } => {
                        FmmError::AllocFailed {
                            device: false,
                            errno,
                        }
                    }
                    FmmError::OutOfMemory(what) => FmmError::HostAllocFailed(what),
                    e => e,
                });
        }
        if flags.contains(MemFlags::ONLY_ADDRESS) && flags.contains(MemFlags::NO_ADDRESS) {
            return Err(FmmError::ConflictingFlags("OnlyAddress and NoAddress"));
        }
        let gi = self.gpu_index(gpu_id).ok_or(FmmError::NotAGpuNode(node))?;
        if too_big {
            return Err(FmmError::OutOfMemory(TOO_BIG));
        }
        self.alloc_device(gi, fixed, size, align, flags, owned)
            .map_err(|e| match e {
                FmmError::Ioctl { errno, .. } | FmmError::Mmap { errno, .. } => {
                    FmmError::AllocFailed {
                        device: true,
                        errno,
                    }
                }
                e => e,
            })
    }

    fn alloc_device(
        &self,
        gi: usize,
        fixed: Option<u64>,
        size: u64,
        align: u64,
        flags: MemFlags,
        owned: bool,
    ) -> Result<u64> {
        let gpu = &self.gpus[gi];
        let mut ioc = AllocMemFlags::VRAM | hsa_to_ioc(flags, self.always_executable());
        if flags.contains(MemFlags::HOST_ACCESS) {
            ioc |= AllocMemFlags::PUBLIC;
        }
        let aql = flags.contains(MemFlags::AQL_QUEUE_MEMORY);
        let (mut ap, va_size) = if gpu.svm_needed {
            (ApId::SvmDefault, if aql { aql_size(size)? } else { size })
        } else {
            (ApId::Gpuvm(gi), size)
        };
        if flags.contains(MemFlags::ONLY_ADDRESS) {
            // No memory, so no node: the newest library sets the object's
            // node to 0 (fmm_allocate_va); 6.2.4 leaves it uninitialised.
            return self.alloc_va_only(gi, ap, 0, fixed, va_size, align, flags, owned);
        }
        if flags.contains(MemFlags::NO_ADDRESS) {
            ap = ApId::MemHandle;
        }
        if !flags.contains(MemFlags::COARSE_GRAIN) || self.opts.disable_cache {
            ioc |= AllocMemFlags::COHERENT;
        }
        if flags.contains(MemFlags::UNCACHED) || self.opts.disable_cache {
            ioc |= AllocMemFlags::UNCACHED;
        }
        if flags.contains(MemFlags::EXTENDED_COHERENT) {
            ioc |= AllocMemFlags::EXT_COHERENT;
        }
        if flags.contains(MemFlags::CONTIGUOUS) {
            ioc |= AllocMemFlags::CONTIGUOUS;
        }
        let (addr, handle, offset) = self.alloc_bo(gi, ap, fixed, va_size, align, ioc, None)?;
        let mut obj = VmObject::new(addr, va_size, Some(handle), gpu.gpu_id, ap);
        obj.mflags = flags;
        obj.node_id = gpu.node_id;
        obj.owned = owned;
        if ap != ApId::MemHandle {
            let host = flags.contains(MemFlags::HOST_ACCESS);
            let fd = gpu.render.as_fd();
            if let Err(e) = self.map_bo_cpu(&mut obj, size, host, fd, offset, "VRAM") {
                self.destroy(obj);
                return Err(e);
            }
        }
        self.insert(obj);
        Ok(addr)
    }

    /// Address space in aperture `ap` with no memory behind it (no
    /// handle), recorded for GPU `gi` and node `node_id`.
    #[allow(clippy::too_many_arguments)]
    fn alloc_va_only(
        &self,
        gi: usize,
        ap: ApId,
        node_id: u32,
        fixed: Option<u64>,
        size: u64,
        align: u64,
        flags: MemFlags,
        owned: bool,
    ) -> Result<u64> {
        let aperture = self
            .aperture(ap)
            .ok_or(FmmError::NotSupported("aperture not available"))?;
        let addr = aperture.allocate(fixed, size, align)?;
        let mut obj = VmObject::new(addr, size, None, self.gpus[gi].gpu_id, ap);
        obj.mflags = flags;
        obj.node_id = node_id;
        obj.kind = Kind::ReservedAddr;
        obj.owned = owned;
        self.insert(obj);
        Ok(addr)
    }

    #[allow(clippy::too_many_arguments)]
    fn alloc_host(
        &self,
        node: u32,
        gpu_id: u32,
        fixed: Option<u64>,
        size: u64,
        align: u64,
        flags: MemFlags,
        owned: bool,
    ) -> Result<u64> {
        if !self.is_dgpu {
            if align != 0 {
                return Err(FmmError::HostAllocFailed(
                    "an alignment is not supported for APU system memory",
                ));
            }
            return self.alloc_host_cpu(fixed, size, flags, owned);
        }
        let gi = if gpu_id != 0 {
            self.gpu_index(gpu_id)
        } else {
            None
        };
        let gi = match gi {
            Some(gi) => gi,
            None if !self.gpus.is_empty() => 0,
            None => {
                return Err(FmmError::HostAllocFailed(
                    "no GPU to allocate system memory through",
                ))
            }
        };
        let coarse = flags.contains(MemFlags::COARSE_GRAIN);
        let ap = if coarse {
            ApId::SvmDefault
        } else {
            ApId::SvmCoherent
        };
        let mut ioc = hsa_to_ioc(flags, self.always_executable());
        if !coarse || self.opts.disable_cache {
            ioc |= AllocMemFlags::COHERENT;
        }
        if flags.contains(MemFlags::UNCACHED) || self.opts.disable_cache {
            ioc |= AllocMemFlags::UNCACHED;
        }
        let aql = flags.contains(MemFlags::AQL_QUEUE_MEMORY);
        let va_size = if aql { aql_size(size)? } else { size };
        if self.opts.rules.only_address_on_host_path && flags.contains(MemFlags::ONLY_ADDRESS) {
            return self.alloc_va_only(gi, ap, 0, fixed, va_size, align, flags, owned);
        }
        let gpu = &self.gpus[gi];
        let mut obj;
        if !flags.contains(MemFlags::NON_PAGED) && self.opts.userptr_for_paged_mem {
            // Paged memory: anonymous pages, registered as a userptr BO at
            // the same address.
            let aperture = self
                .aperture(ap)
                .ok_or(FmmError::NotSupported("no SVM aperture"))?;
            let addr = aperture.allocate(fixed, va_size, align)?;
            let flags_map = MapFlags::PRIVATE | MapFlags::ANONYMOUS | MapFlags::FIXED;
            // SAFETY: the range was just reserved for this object; nothing
            // references it.
            let mapped = unsafe {
                mman::mmap(
                    addr as usize,
                    va_size as usize,
                    Prot::READ | Prot::WRITE,
                    flags_map,
                    None,
                    0,
                )
            };
            if let Err(errno) = mapped {
                // SAFETY: our fresh, unused range.
                unsafe { aperture.release(addr, va_size, true) };
                return Err(FmmError::Mmap {
                    what: "system memory",
                    errno,
                });
            }
            dont_fork(addr, va_size);
            let handle = match self.create_bo(
                gi,
                ap,
                aperture,
                addr,
                va_size,
                ioc | AllocMemFlags::USERPTR,
                Some(addr),
            ) {
                Ok((h, _)) => h,
                Err(e) => {
                    // SAFETY: as above.
                    unsafe { aperture.release(addr, va_size, true) };
                    return Err(e);
                }
            };
            obj = VmObject::new(addr, va_size, Some(handle), gpu.gpu_id, ap);
            obj.cpu = CpuView::Mapped { len: va_size };
        } else {
            let ioc = ioc | AllocMemFlags::GTT;
            let (addr, handle, offset) = self.alloc_bo(gi, ap, fixed, va_size, align, ioc, None)?;
            obj = VmObject::new(addr, va_size, Some(handle), gpu.gpu_id, ap);
            if flags.contains(MemFlags::HOST_ACCESS) {
                let fd = gpu.render.as_fd();
                if let Err(e) = self.map_bo_cpu(&mut obj, size, true, fd, offset, "GTT") {
                    self.destroy(obj);
                    return Err(e);
                }
            }
        }
        obj.mflags = flags;
        obj.node_id = node;
        obj.owned = owned;
        let addr = obj.start;
        self.insert(obj);
        Ok(addr)
    }

    /// System memory on an APU: plain anonymous memory, no GPU object.
    fn alloc_host_cpu(
        &self,
        fixed: Option<u64>,
        size: u64,
        flags: MemFlags,
        owned: bool,
    ) -> Result<u64> {
        if fixed.is_some() {
            return Err(FmmError::HostAllocFailed(
                "fixed addresses are not supported for APU system memory",
            ));
        }
        let mut prot = Prot::READ;
        if flags.contains(MemFlags::EXECUTE_ACCESS) {
            prot |= Prot::EXEC;
        }
        if !flags.contains(MemFlags::READ_ONLY) {
            prot |= Prot::WRITE;
        }
        // SAFETY: no MAP_FIXED: the kernel picks a fresh range.
        let addr = unsafe {
            mman::mmap(
                0,
                size as usize,
                prot,
                MapFlags::PRIVATE | MapFlags::ANONYMOUS,
                None,
                0,
            )
        }
        .map_err(|errno| FmmError::Mmap {
            what: "APU system memory",
            errno,
        })? as u64;
        let mut obj = VmObject::new(addr, size, None, 0, ApId::CpuVm);
        obj.mflags = flags;
        obj.owned = owned;
        obj.cpu = CpuView::Mapped { len: size };
        self.insert(obj);
        Ok(addr)
    }

    /// Scratch backing memory: reserves 64 KiB-aligned address space and
    /// programs it as the GPU's scratch backing VA. Memory is created when
    /// (parts of) it are mapped.
    fn alloc_scratch(&self, gi: usize, fixed: Option<u64>, size: u64, owned: bool) -> Result<u64> {
        let gpu = &self.gpus[gi];
        let mut st = lock(&gpu.scratch);
        if st.is_some() {
            return Err(FmmError::OutOfMemory(
                "scratch is already allocated for this GPU",
            ));
        }
        let aligned = align_up(size, SCRATCH_ALIGN);
        let addr = if self.is_dgpu {
            let ap = self
                .svm
                .as_ref()
                .ok_or(FmmError::OutOfMemory("no SVM aperture"))?;
            ap.allocate(fixed, aligned, SCRATCH_ALIGN)?
        } else {
            if fixed.is_some() {
                return Err(FmmError::OutOfMemory("fixed scratch address on an APU"));
            }
            let r = mman::reserve((aligned + SCRATCH_ALIGN) as usize)
                .map_err(|_| FmmError::OutOfMemory("scratch address space"))?
                as u64;
            let a = align_up(r, SCRATCH_ALIGN);
            // SAFETY: trimming our own fresh reservation to the aligned part.
            unsafe {
                if a > r {
                    let _ = mman::munmap(r as usize, (a - r) as usize);
                }
                let end = r + aligned + SCRATCH_ALIGN;
                if a + aligned < end {
                    let _ = mman::munmap((a + aligned) as usize, (end - a - aligned) as usize);
                }
            }
            a
        };
        let mut args = kfd::kfd_ioctl_set_scratch_backing_va_args {
            va_addr: addr >> 16,
            gpu_id: gpu.gpu_id,
            pad: 0,
        };
        if let Err(errno) = self
            .kfd
            .ioctl_plain(kfd::AMDKFD_IOC_SET_SCRATCH_BACKING_VA, &mut args)
        {
            self.release_scratch_range(addr, aligned);
            let _ = errno;
            return Err(FmmError::OutOfMemory(
                "AMDKFD_IOC_SET_SCRATCH_BACKING_VA failed",
            ));
        }
        *st = Some(Scratch {
            base: addr,
            size: aligned,
            objs: BTreeMap::new(),
            owned,
        });
        Ok(addr)
    }

    fn release_scratch_range(&self, addr: u64, size: u64) {
        if self.is_dgpu {
            if let Some(ap) = self.svm.as_ref() {
                // SAFETY: the scratch range is ours and no longer used.
                unsafe { ap.release(addr, size, true) };
            }
        } else {
            // SAFETY: as above, an APU scratch mapping we made.
            let _ = unsafe { mman::munmap(addr as usize, size as usize) };
        }
    }

    fn scratch_gpu(&self, addr: u64) -> Option<usize> {
        self.gpus.iter().position(|g| {
            lock(&g.scratch)
                .as_ref()
                .is_some_and(|s| addr >= s.base && addr - s.base < s.size)
        })
    }

    /// Frees the scratch backing of a GPU; an owned one only for its owner
    /// (`as_owner`, or teardown).
    fn free_scratch(&self, gi: usize, as_owner: bool) -> Result<()> {
        let st = {
            let mut g = lock(&self.gpus[gi].scratch);
            match g.as_ref() {
                None => return Ok(()),
                Some(st) if st.owned && !as_owner => return Err(FmmError::OwnedByHandle(st.base)),
                Some(_) => g.take().expect("checked"),
            }
        };
        for (_, obj) in st.objs {
            self.destroy_scratch_object(obj);
        }
        self.release_scratch_range(st.base, st.size);
        Ok(())
    }

    fn destroy_scratch_object(&self, mut obj: VmObject) {
        if !obj.mapped.is_empty() {
            let ids = obj.mapped.clone();
            let _ = self.unmap_ioctl(&mut obj, &ids);
        }
        // SAFETY: the object's range is part of our scratch reservation;
        // its device mapping goes away, the reservation stays.
        unsafe { reset_to_reserved(obj.start, obj.size) };
        if let Some(h) = obj.handle {
            let _ = self.free_bo(h);
        }
    }

    fn map_scratch(&self, gi: usize, addr: u64, size: u64) -> Result<u64> {
        let gpu = &self.gpus[gi];
        if !self.is_dgpu {
            return Ok(0);
        }
        let mut st = lock(&gpu.scratch);
        let st = st.as_mut().ok_or(FmmError::NoSuchObject(addr))?;
        // `scratch_gpu` found `addr` inside `[base, base + size)`.
        if size == 0 || size > st.size - (addr - st.base) {
            return Err(FmmError::RangeOutsideObject { addr, size });
        }
        let ap = self
            .svm
            .as_ref()
            .ok_or(FmmError::NotSupported("no SVM aperture"))?;
        let ioc = AllocMemFlags::VRAM | AllocMemFlags::WRITABLE;
        let (handle, offset) = self.create_bo(gi, ApId::SvmDefault, ap, addr, size, ioc, None)?;
        let mut obj = VmObject::new(addr, size, Some(handle), gpu.gpu_id, ApId::SvmDefault);
        obj.node_id = gpu.node_id;
        obj.mflags = MemFlags::SCRATCH | MemFlags::NON_PAGED;
        if let Err(e) = self.map_cpu(addr, size, false, gpu.render.as_fd(), offset, "scratch") {
            let _ = self.free_bo(handle);
            return Err(e);
        }
        obj.cpu = CpuView::Mapped { len: size };
        if let Err(e) = self.map_ioctl(&mut obj, &[gpu.gpu_id]) {
            self.destroy_scratch_object(obj);
            return Err(e);
        }
        obj.mapping_count = 1;
        st.objs.insert(addr, obj);
        Ok(0)
    }

    fn unmap_scratch(&self, gi: usize, addr: u64) -> Result<()> {
        if !self.is_dgpu {
            return Ok(());
        }
        let obj = {
            let mut st = lock(&self.gpus[gi].scratch);
            let st = st
                .as_mut()
                .ok_or(FmmError::Failed("no scratch on this GPU"))?;
            st.objs
                .remove(&addr)
                .ok_or(FmmError::Failed("no scratch mapping at this address"))?
        };
        self.destroy_scratch_object(obj);
        Ok(())
    }

    /// Allocates the doorbell page(s) of a GPU at a GPU-visible address and
    /// maps them for the CPU from the kfd file at `mmap_offset` (what
    /// CREATE_QUEUE returned, aligned down to the doorbell page).
    ///
    /// The address is released with [`Fmm::unmap_from_gpu`] and
    /// [`Fmm::free_memory`], which anyone holding the manager can call;
    /// [`Fmm::alloc_doorbell_buffer`] gives a handle only its holder can
    /// release.
    pub fn alloc_doorbell(&self, node: u32, size: u64, mmap_offset: u64) -> Result<u64> {
        self.doorbell_impl(node, size, mmap_offset, false)
    }

    pub(crate) fn doorbell_impl(
        &self,
        node: u32,
        size: u64,
        mmap_offset: u64,
        owned: bool,
    ) -> Result<u64> {
        let gpu_id = self.validate_node(node)?;
        let gi = self.gpu_index(gpu_id).ok_or(FmmError::NotAGpuNode(node))?;
        if size == 0 || size % PAGE_SIZE != 0 {
            return Err(FmmError::BadSize {
                size,
                page: PAGE_SIZE,
            });
        }
        if size > crate::MAX_ALLOC_SIZE {
            return Err(FmmError::OutOfMemory(
                "size exceeds the virtual address space",
            ));
        }
        let ioc = AllocMemFlags::DOORBELL | AllocMemFlags::WRITABLE | AllocMemFlags::COHERENT;
        let (addr, handle, _) = self.alloc_bo(gi, ApId::SvmCoherent, None, size, 0, ioc, None)?;
        let mut obj = VmObject::new(addr, size, Some(handle), gpu_id, ApId::SvmCoherent);
        obj.mflags = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
        obj.node_id = self.gpus[gi].node_id;
        if let Err(e) = self.map_cpu(addr, size, true, self.kfd.as_fd(), mmap_offset, "doorbell") {
            self.destroy(obj);
            return Err(e);
        }
        obj.cpu = CpuView::Mapped { len: size };
        obj.owned = owned;
        self.insert(obj);
        Ok(addr)
    }

    /// The CPU address of a GPU's MMIO remap (HDP flush) page, if mapped.
    pub fn mmio_address(&self, node: u32) -> Option<u64> {
        let gi = self.gpu_index(self.validate_node(node).ok()?)?;
        *lock(&self.gpus[gi].mmio)
    }

    /// `hsaKmtFreeMemory`: frees what an allocation at `addr` created.
    ///
    /// Like the C library this does not unmap the memory from GPUs first;
    /// a kernel refuses to free a mapped buffer.
    ///
    /// Memory a [`crate::Buffer`] owns is refused with
    /// [`FmmError::OwnedByHandle`]: the buffer still points to it.
    pub fn free_memory(&self, addr: u64) -> Result<()> {
        self.free_impl(addr, false)
    }

    /// [`Fmm::free_memory`] by the RAII handle that owns the memory.
    pub(crate) fn free_as_owner(&self, addr: u64) -> Result<()> {
        self.free_impl(addr, true)
    }

    fn free_impl(&self, addr: u64, as_owner: bool) -> Result<()> {
        if addr == 0 {
            return Err(FmmError::NullAddress);
        }
        if let Some(gi) = self.scratch_gpu(addr) {
            return self.free_scratch(gi, as_owner);
        }
        let taken = self.with_shard(addr, Lookup::Exact { size: 0 }, |s, start| {
            let o = s.get_mut(start).expect("found");
            if o.owned && !as_owner {
                return Err(FmmError::OwnedByHandle(addr));
            }
            if let Kind::Userptr { count, .. } = &mut o.kind {
                if *count > 1 {
                    *count -= 1;
                    return Ok(None);
                }
            }
            Ok(s.remove(start))
        });
        match taken {
            None if self.opts.svm_api_enabled => Ok(()),
            None => Err(FmmError::NotRegistered(addr)),
            Some(Err(e)) => Err(e),
            Some(Ok(None)) => Ok(()),
            Some(Ok(Some(obj))) => self.release_object(obj),
        }
    }

    /// Marks the object starting at `addr` as owned (`true`) by an RAII
    /// handle, or gives the ownership up (`false`).
    pub(crate) fn set_owned(&self, addr: u64, owned: bool) {
        if let Some(gi) = self.scratch_gpu(addr) {
            if let Some(st) = lock(&self.gpus[gi].scratch).as_mut() {
                st.owned = owned;
            }
            return;
        }
        let _ = self.with_object(addr, Lookup::Exact { size: 0 }, |o| o.owned = owned);
    }

    /// Frees the BO of an object already removed from its shard; on
    /// failure the object goes back (marked kernel-held if the kernel
    /// refused with `EPERM`).
    fn release_object(&self, mut obj: VmObject) -> Result<()> {
        if let Some(h) = obj.handle {
            if let Err(e) = self.free_bo(h) {
                obj.kernel_held |= is_eperm(&e);
                self.insert(obj);
                return Err(e);
            }
        }
        self.release_range(&obj);
        Ok(())
    }

    // ------------------------------------------------------------------
    // GPU mapping
    // ------------------------------------------------------------------

    /// `hsaKmtMapMemoryToGPU`: maps the object at `addr` to every GPU it is
    /// registered to (all GPUs if not registered). Returns the alternate
    /// GPU VA the C API reports (0 when the GPU uses the CPU address; the
    /// GPU address of a userptr otherwise).
    pub fn map_to_gpu(&self, addr: u64, size: u64) -> Result<u64> {
        if addr == 0 {
            return Err(FmmError::NullAddress);
        }
        if let Some(gi) = self.scratch_gpu(addr) {
            return self.map_scratch(gi, addr, size);
        }
        let r = self.with_object(addr, Lookup::Exact { size }, |o| self.map_object(o, addr));
        match r {
            Some(r) => r,
            None if self.opts.svm_api_enabled && self.is_dgpu => {
                self.map_svm_range(addr, size, &self.all_gpu_ids)
            }
            None if !self.is_dgpu => Ok(0),
            None => Err(FmmError::NoSuchObject(addr)),
        }
    }

    /// Maps memory no object covers as an SVM range (the SVM API's
    /// fallback): `ACCESS_IN_PLACE` for each of `gpu_ids` on the
    /// page-aligned range. The GPU address is the CPU address.
    fn map_svm_range(&self, addr: u64, size: u64, gpu_ids: &[u32]) -> Result<u64> {
        let start = addr & !(PAGE_SIZE - 1);
        let end = addr
            .checked_add(size.max(1))
            .and_then(|e| checked_align_up(e, PAGE_SIZE))
            .ok_or(FmmError::InvalidArgument(
                "range runs past the end of the address space",
            ))?;
        let mut attrs: Vec<(u32, u32)> = gpu_ids
            .iter()
            .map(|&g| (crate::flags::svm_attr::ACCESS_IN_PLACE, g))
            .collect();
        self.svm_ioctl(
            kfd::KFD_IOCTL_SVM_OP_SET_ATTR,
            start,
            end - start,
            &mut attrs,
        )?;
        Ok(addr)
    }

    /// The GPUs an object may be mapped to: those it is registered to,
    /// or every GPU if it is registered to none in particular.
    fn allowed_gpus<'a>(&'a self, o: &'a VmObject) -> &'a [u32] {
        if o.registered.is_empty() {
            &self.all_gpu_ids
        } else {
            &o.registered
        }
    }

    /// First mapping of an object: onto every GPU it may be mapped to.
    fn map_to_allowed(&self, o: &mut VmObject) -> Result<()> {
        let targets = self.allowed_gpus(o).to_vec();
        self.map_ioctl(o, &targets)?;
        o.mapping_count = 1;
        Ok(())
    }

    fn map_object(&self, o: &mut VmObject, addr: u64) -> Result<u64> {
        if o.aperture == ApId::CpuVm {
            return Ok(0);
        }
        if o.handle.is_none() || o.aperture == ApId::MemHandle {
            return Err(FmmError::NotMappable(addr));
        }
        if let Some((ua, _)) = o.userptr() {
            let gpu_va = o.start + (ua & (PAGE_SIZE - 1));
            if o.mapping_count > 0 {
                o.mapping_count += 1;
                return Ok(gpu_va);
            }
            self.map_to_allowed(o)?;
            return Ok(gpu_va);
        }
        self.map_to_allowed(o)?;
        let ap = self.aperture(o.aperture).expect("object aperture");
        Ok(if ap.cpu_accessible {
            0
        } else {
            o.start - ap.base
        })
    }

    /// `hsaKmtMapMemoryToGPUNodes`: maps the object at `addr` to exactly
    /// the GPUs of `nodes` (unmapping it from others). The map flags are
    /// accepted and, as in the C library, ignored.
    ///
    /// Returns the alternate GPU VA where the C library writes one
    /// (`AlternateVAGPU`): on an APU with one node (it maps as
    /// [`Fmm::map_to_gpu`]), for a userptr and for an SVM range (memory
    /// registered through the SVM API); `None` otherwise (the caller's
    /// variable is left alone).
    pub fn map_to_gpu_nodes(
        &self,
        addr: u64,
        size: u64,
        nodes: &[u32],
        _flags: MemMapFlags,
    ) -> Result<Option<u64>> {
        if addr == 0 {
            return Err(FmmError::NullAddress);
        }
        if !self.is_dgpu && nodes.len() == 1 {
            return self.map_to_gpu(addr, size).map(Some);
        }
        let ids = self.gpu_ids_for_nodes(nodes)?;
        self.with_object(addr, Lookup::Exact { size }, |o| {
            let cpu_accessible = self.aperture(o.aperture).is_some_and(|a| a.cpu_accessible);
            if o.aperture == ApId::CpuVm || !cpu_accessible {
                return Err(FmmError::Failed(
                    "memory in this aperture cannot be mapped to a node list",
                ));
            }
            if o.userptr().is_some() {
                // As upstream: userptrs map to all their registered nodes.
                return self.map_object(o, addr).map(Some);
            }
            if o.handle.is_none() {
                return Err(FmmError::NotMappable(addr));
            }
            let allowed = self.allowed_gpus(o);
            if let Some(bad) = ids.iter().find(|id| !allowed.contains(id)) {
                return Err(FmmError::NodeNotRegistered(*bad));
            }
            let stale: Vec<u32> = o
                .mapped
                .iter()
                .copied()
                .filter(|m| !ids.contains(m))
                .collect();
            if !stale.is_empty() {
                self.unmap_ioctl(o, &stale)?;
            }
            if ids.iter().any(|id| !o.mapped.contains(id)) {
                self.map_ioctl(o, &ids)?;
                o.mapping_count = 1;
            }
            Ok(None)
        })
        .unwrap_or_else(|| {
            if self.opts.svm_api_enabled {
                // An SVM range: the C library reports its GPU address.
                self.map_svm_range(addr, size, &ids).map(Some)
            } else {
                Err(FmmError::UnknownPointer(addr))
            }
        })
    }

    /// `hsaKmtUnmapMemoryToGPU`: unmaps the object at `addr` from all GPUs
    /// it is mapped on. A null address, and memory that is not mapped,
    /// succeed without doing anything (as in the C library). Memory a
    /// [`crate::Buffer`] owns is refused ([`FmmError::OwnedByHandle`]).
    pub fn unmap_from_gpu(&self, addr: u64) -> Result<()> {
        self.unmap_impl(addr, false)
    }

    /// [`Fmm::unmap_from_gpu`] by the RAII handle that owns the memory.
    pub(crate) fn unmap_as_owner(&self, addr: u64) -> Result<()> {
        self.unmap_impl(addr, true)
    }

    fn unmap_impl(&self, addr: u64, as_owner: bool) -> Result<()> {
        if addr == 0 {
            return Ok(());
        }
        if let Some(gi) = self.scratch_gpu(addr) {
            return self.unmap_scratch(gi, addr);
        }
        self.with_object(addr, Lookup::Exact { size: 0 }, |o| {
            if o.owned && !as_owner {
                return Err(FmmError::OwnedByHandle(addr));
            }
            if o.aperture == ApId::CpuVm {
                return Ok(());
            }
            if o.userptr().is_some() && o.mapping_count > 1 {
                o.mapping_count -= 1;
                return Ok(());
            }
            if o.mapped.is_empty() {
                return Ok(());
            }
            let ids = o.mapped.clone();
            let r = self.unmap_ioctl(o, &ids);
            o.mapping_count = 0;
            r
        })
        // Unknown address: a no-op on APUs; on dGPUs too with the SVM API
        // under the newest library (5.2.3 refuses it on dGPUs).
        .unwrap_or(
            if !self.is_dgpu || (self.opts.svm_api_enabled && self.opts.rules.unmap_unknown_as_svm)
            {
                Ok(())
            } else {
                Err(FmmError::UnknownPointer(addr))
            },
        )
    }

    // ------------------------------------------------------------------
    // Registration
    // ------------------------------------------------------------------

    /// `hsaKmtRegisterMemory`: makes user memory GPU-accessible (a userptr
    /// BO); a no-op on APUs.
    pub fn register_memory(&self, addr: u64, size: u64) -> Result<()> {
        if !self.is_dgpu {
            return Ok(());
        }
        self.register(addr, size, Vec::new(), true, false)
    }

    /// `hsaKmtRegisterMemoryToNodes`: as [`Fmm::register_memory`], limited
    /// to the GPUs of `nodes` (the default mapping set of the memory).
    pub fn register_memory_to_nodes(&self, addr: u64, size: u64, nodes: &[u32]) -> Result<()> {
        if !self.is_dgpu {
            return Err(FmmError::NotSupported("RegisterMemoryToNodes on an APU"));
        }
        let ids = self.gpu_ids_for_nodes(nodes)?;
        self.register(addr, size, ids, true, false)
    }

    /// `hsaKmtRegisterMemoryWithFlags`: registers ordinary paged host
    /// memory (HostAccess set, NonPaged clear); CoarseGrain selects a
    /// non-coherent userptr.
    pub fn register_memory_with_flags(&self, addr: u64, size: u64, flags: MemFlags) -> Result<()> {
        let flags = flags.difference(self.opts.rules.unknown_flags);
        if flags.contains(MemFlags::EXTENDED_COHERENT) && flags.contains(MemFlags::COARSE_GRAIN) {
            return Err(FmmError::ConflictingFlags(
                "ExtendedCoherent and CoarseGrain",
            ));
        }
        if !flags.contains(MemFlags::HOST_ACCESS) || flags.contains(MemFlags::NON_PAGED) {
            return Err(FmmError::NotSupported(
                "registered memory must be paged host memory",
            ));
        }
        if !self.is_dgpu {
            return Err(FmmError::NotSupported("RegisterMemoryWithFlags on an APU"));
        }
        self.register(
            addr,
            size,
            Vec::new(),
            flags.contains(MemFlags::COARSE_GRAIN),
            flags.contains(MemFlags::EXTENDED_COHERENT),
        )
    }

    fn register(&self, addr: u64, size: u64, ids: Vec<u32>, coarse: bool, ext: bool) -> Result<()> {
        let rules = self.opts.rules;
        let existing = self.with_object(addr, Lookup::Exact { size }, |o| {
            if rules.register_needs_userptr && !matches!(o.kind, Kind::Userptr { .. }) {
                return Err(FmmError::NotUserMemory(addr));
            }
            if !o.registered.is_empty() {
                return if o.registered == ids {
                    if let Kind::Userptr { count, .. } = &mut o.kind {
                        *count += 1;
                    }
                    Ok(())
                } else {
                    Err(FmmError::AlreadyRegistered(addr))
                };
            }
            if let Kind::Userptr { count, .. } = &mut o.kind {
                *count += 1;
            }
            if !ids.is_empty() {
                o.registered = ids.clone();
            }
            Ok(())
        });
        if let Some(r) = existing {
            return r;
        }
        if rules.register_through_svm
            && self.opts.svm_api_enabled
            && self.register_svm(addr, size, coarse, ext).is_ok()
        {
            return Ok(());
        }
        let obj = self.create_userptr(addr, size, coarse, ext)?;
        let shard = self.shard_of(obj.gpu_id);
        let mut s = lock(&self.shards[shard]);
        if let Some(start) = s.find(addr, Lookup::Exact { size }) {
            // Another thread registered the same range meanwhile.
            if let Some(Kind::Userptr { count, .. }) = s.get_mut(start).map(|o| &mut o.kind) {
                *count += 1;
            }
            drop(s);
            self.destroy(obj);
            return Ok(());
        }
        let mut obj = obj;
        obj.registered = ids;
        s.insert(obj);
        Ok(())
    }

    /// Registers user memory as an SVM range: `AMDKFD_IOC_SVM` SET_ATTR on
    /// the page-aligned range, setting or clearing COHERENT (by
    /// `coarse`) and EXT_COHERENT (by `ext`). No memory object is made.
    fn register_svm(&self, addr: u64, size: u64, coarse: bool, ext: bool) -> Result<()> {
        use crate::flags::svm_attr::{CLR_FLAGS, SET_FLAGS};
        if self.gpus.is_empty() {
            return Err(FmmError::Failed("no GPU to register memory with"));
        }
        let off = addr & (PAGE_SIZE - 1);
        let size = size
            .checked_add(off)
            .filter(|s| *s <= crate::MAX_ALLOC_SIZE)
            .ok_or(FmmError::Failed("size exceeds the virtual address space"))?;
        let mut attrs = [
            (
                if coarse { CLR_FLAGS } else { SET_FLAGS },
                kfd::SvmFlags::COHERENT.bits(),
            ),
            (
                if ext { SET_FLAGS } else { CLR_FLAGS },
                kfd::SvmFlags::EXT_COHERENT.bits(),
            ),
        ];
        self.svm_ioctl(
            kfd::KFD_IOCTL_SVM_OP_SET_ATTR,
            addr - off,
            page_align_up(size),
            &mut attrs,
        )
    }

    fn create_userptr(&self, addr: u64, size: u64, coarse: bool, ext: bool) -> Result<VmObject> {
        if self.gpus.is_empty() {
            return Err(FmmError::Failed("no GPU to register memory with"));
        }
        // Without the check the kernel refuses an empty range (EFAULT /
        // EINVAL from the userptr allocation, status ERROR as here).
        if self.opts.rules.refuse_empty_registration && (addr == 0 || size == 0) {
            return Err(FmmError::Failed("empty user memory range"));
        }
        if size > crate::MAX_ALLOC_SIZE {
            return Err(FmmError::Failed("size exceeds the virtual address space"));
        }
        let off = addr & (PAGE_SIZE - 1);
        let aligned = addr - off;
        // At most 2^47 + 2 pages: no overflow.
        let aligned_size = page_align_up(off + size);
        if aligned.checked_add(aligned_size).is_none() {
            // No user memory wraps around the address space; the kernel
            // would refuse it too (status ERROR either way).
            return Err(FmmError::Failed("user memory range wraps around"));
        }
        if self.opts.check_userptr && aligned_size != 0 && !user_range_mapped(aligned, aligned_size)
        {
            return Err(FmmError::Failed("user memory range is not mapped"));
        }
        let mut ioc = AllocMemFlags::USERPTR | AllocMemFlags::WRITABLE | AllocMemFlags::EXECUTABLE;
        if !coarse {
            ioc |= AllocMemFlags::COHERENT;
        }
        if ext {
            ioc |= AllocMemFlags::EXT_COHERENT;
        }
        let aperture = self
            .aperture(ApId::SvmDefault)
            .ok_or(FmmError::NotSupported("aperture not available"))?;
        // An empty range (5.2.3 only) still takes a page of address space.
        let va_size = aligned_size.max(PAGE_SIZE);
        let svm_addr = aperture.allocate(None, va_size, 0)?;
        let created = self.create_bo(
            0,
            ApId::SvmDefault,
            aperture,
            svm_addr,
            aligned_size,
            ioc,
            Some(aligned),
        );
        let handle = match created {
            Ok((h, _)) if aligned_size != 0 => h,
            r => {
                if let Ok((h, _)) = r {
                    // A kernel that took an empty range: nothing to keep.
                    let _ = self.free_bo(h);
                }
                // SAFETY: the range was allocated above and nothing uses it.
                unsafe { aperture.release(svm_addr, va_size, true) };
                return Err(r
                    .err()
                    .unwrap_or(FmmError::Failed("empty user memory range")));
            }
        };
        let mut obj = VmObject::new(
            svm_addr,
            aligned_size,
            Some(handle),
            self.gpus[0].gpu_id,
            ApId::SvmDefault,
        );
        obj.kind = Kind::Userptr {
            addr,
            size,
            count: 1,
        };
        obj.node_id = self.gpus[0].node_id;
        obj.mflags = ioc_to_hsa(ioc);
        Ok(obj)
    }

    /// `hsaKmtDeregisterMemory`: drops a registration. Userptrs, imported
    /// graphics and shared buffers are released (when their last
    /// registration goes); allocated memory loses its node list. Memory a
    /// [`crate::Buffer`] owns is refused ([`FmmError::OwnedByHandle`]).
    pub fn deregister_memory(&self, addr: u64) -> Result<()> {
        let r = self.with_shard(addr, Lookup::Exact { size: 0 }, |s, start| {
            let o = s.get_mut(start).expect("found");
            if o.owned {
                return Err(FmmError::OwnedByHandle(addr));
            }
            if o.aperture == ApId::CpuVm {
                return Ok(None);
            }
            match &mut o.kind {
                Kind::Userptr { count, .. } if *count > 1 => {
                    *count -= 1;
                    Ok(None)
                }
                Kind::Userptr { .. } | Kind::Graphics { .. } | Kind::Shared => Ok(s.remove(start)),
                _ if o.registered.is_empty() => Err(FmmError::NotRegistered(addr)),
                _ => {
                    o.registered.clear();
                    Ok(None)
                }
            }
        });
        match r {
            None if !self.is_dgpu || self.opts.svm_api_enabled => Ok(()),
            None => Err(FmmError::NotRegistered(addr)),
            Some(Err(e)) => Err(e),
            Some(Ok(None)) => Ok(()),
            Some(Ok(Some(obj))) => {
                self.destroy(obj);
                Ok(())
            }
        }
    }

    /// `hsaKmtRegisterGraphicsHandleToNodes`: imports a dma-buf exported by
    /// a graphics driver into this context's GPU address space.
    pub fn register_graphics_handle(
        &self,
        dmabuf: BorrowedFd<'_>,
        nodes: &[u32],
    ) -> Result<GraphicsResource> {
        let ids = if nodes.is_empty() {
            Vec::new()
        } else {
            self.gpu_ids_for_nodes(nodes)?
        };
        let mut metadata = vec![0u8; GRAPHICS_METADATA_DEFAULT_SIZE as usize];
        let mut info = kfd::kfd_ioctl_get_dmabuf_info_args {
            metadata_ptr: metadata.as_mut_ptr() as u64,
            metadata_size: GRAPHICS_METADATA_DEFAULT_SIZE,
            dmabuf_fd: dmabuf.as_raw_fd() as u32,
            ..Default::default()
        };
        // SAFETY: `metadata_ptr` addresses `metadata`, writable for
        // `metadata_size` bytes, alive across the call.
        let mut r = unsafe { self.kfd.ioctl(kfd::AMDKFD_IOC_GET_DMABUF_INFO, &mut info) };
        if r.is_err() && info.metadata_size > GRAPHICS_METADATA_DEFAULT_SIZE {
            metadata = vec![0u8; info.metadata_size as usize];
            info.metadata_ptr = metadata.as_mut_ptr() as u64;
            // SAFETY: as above, with the bigger buffer.
            r = unsafe { self.kfd.ioctl(kfd::AMDKFD_IOC_GET_DMABUF_INFO, &mut info) };
        }
        r.map_err(FmmError::ioctl("AMDKFD_IOC_GET_DMABUF_INFO"))?;
        metadata.truncate(info.metadata_size as usize);
        let gi = self
            .gpu_index(info.gpu_id)
            .ok_or(FmmError::Failed("dma-buf belongs to an unknown GPU"))?;
        let ap = if self.gpus[gi].svm_needed {
            ApId::SvmDefault
        } else {
            ApId::Gpuvm(gi)
        };
        let aperture = self
            .aperture(ap)
            .ok_or(FmmError::Failed("no aperture for the buffer"))?;
        let size = page_align_up(info.size);
        let addr = aperture.allocate(None, size, IMAGE_ALIGN)?;
        let va = if matches!(ap, ApId::Gpuvm(_)) {
            addr - aperture.base
        } else {
            addr
        };
        let handle = match self.import_dmabuf_at(info.gpu_id, va, dmabuf) {
            Ok(h) => h,
            Err(e) => {
                // SAFETY: our fresh, unused range.
                unsafe { aperture.release(addr, size, true) };
                return Err(e);
            }
        };
        let mut obj = VmObject::new(addr, size, Some(handle), info.gpu_id, ap);
        obj.mflags =
            ioc_to_hsa(AllocMemFlags::from_bits_retain(info.flags)) | MemFlags::COARSE_GRAIN;
        obj.node_id = self.gpus[gi].node_id;
        obj.kind = Kind::Graphics {
            metadata: metadata.clone(),
        };
        obj.registered = ids;
        let node = obj.node_id;
        self.insert(obj);
        Ok(GraphicsResource {
            address: addr,
            size: info.size,
            metadata,
            node,
        })
    }

    fn import_dmabuf_at(&self, gpu_id: u32, va: u64, fd: BorrowedFd<'_>) -> Result<u64> {
        let mut args = kfd::kfd_ioctl_import_dmabuf_args {
            va_addr: va,
            handle: 0,
            gpu_id,
            dmabuf_fd: fd.as_raw_fd() as u32,
        };
        self.kfd
            .ioctl_plain(kfd::AMDKFD_IOC_IMPORT_DMABUF, &mut args)
            .map_err(FmmError::ioctl("AMDKFD_IOC_IMPORT_DMABUF"))?;
        Ok(args.handle)
    }

    // ------------------------------------------------------------------
    // Sharing
    // ------------------------------------------------------------------

    /// `hsaKmtExportDMABufHandle`: exports `[addr, addr+size)` (inside one
    /// object) as a dma-buf. Returns the descriptor and the offset of
    /// `addr` in the exported buffer.
    pub fn export_dmabuf(&self, addr: u64, size: u64) -> Result<(OwnedFd, u64)> {
        self.check_minor(12)?;
        let (handle, offset) = self
            .with_object(addr, Lookup::Containing, |o| {
                let offset = addr - o.start;
                if offset.saturating_add(size) > o.size {
                    return Err(FmmError::RangeOutsideObject { addr, size });
                }
                o.handle
                    .map(|h| (h, offset))
                    .ok_or(FmmError::NoSuchObject(addr))
            })
            .unwrap_or(Err(FmmError::NoSuchObject(addr)))?;
        let fd = self.export_handle(handle, libc::O_CLOEXEC as u32)?;
        Ok((fd, offset))
    }

    fn export_handle(&self, handle: u64, flags: u32) -> Result<OwnedFd> {
        let mut args = kfd::kfd_ioctl_export_dmabuf_args {
            handle,
            flags,
            dmabuf_fd: 0,
        };
        self.kfd
            .ioctl_plain(kfd::AMDKFD_IOC_EXPORT_DMABUF, &mut args)
            .map_err(FmmError::ioctl("AMDKFD_IOC_EXPORT_DMABUF"))?;
        // SAFETY: the kernel just installed this descriptor for us; nothing
        // else owns it.
        Ok(unsafe { OwnedFd::from_raw_fd(args.dmabuf_fd as i32) })
    }

    /// `hsaKmtShareMemory`: creates a handle another context or process
    /// can pass to [`Fmm::register_shared_handle`]. See [`ShareHandle`]
    /// for the format (a dma-buf kept open by this context while the
    /// memory lives).
    ///
    /// With [`FmmRules::share_via_rocm_ipc`] this is 5.2.3's ROCm-only IPC export
    /// instead: `AMDKFD_IOC_IPC_EXPORT_HANDLE` for the object's BO on the
    /// GPU of its node (the first GPU for system memory), and ERROR when
    /// the kernel refuses it (upstream kernels and kfd-sim do not have
    /// it: EINVAL). If it succeeds, the handle is 5.2.3's
    /// `HsaSharedMemoryStruct`: the kernel's four share-handle words, the
    /// aperture type and index, the size in pages and the exporting
    /// gpu_id (importing such a handle is not implemented).
    pub fn share_memory(&self, addr: u64, size: u64) -> Result<ShareHandle> {
        if size >= 1u64 << (32 + 12) {
            return Err(FmmError::InvalidArgument("size too large to share"));
        }
        if self.opts.rules.share_via_rocm_ipc {
            return self.ipc_export(addr, size);
        }
        self.check_minor(12)?;
        self.with_object(addr, Lookup::Exact { size: 0 }, |o| {
            let handle = o.handle.ok_or(FmmError::NoSuchObject(addr))?;
            if o.share_fd.is_none() {
                o.share_fd =
                    Some(self.export_handle(handle, (libc::O_CLOEXEC | libc::O_RDWR) as u32)?);
            }
            let fd = o.share_fd.as_ref().expect("exported");
            Ok(ShareHandle::new(
                fd.as_fd(),
                (size.min(o.size) / PAGE_SIZE) as u32,
                o.mflags,
                if o.gpu_id != 0 {
                    o.gpu_id
                } else {
                    self.gpus.first().map_or(0, |g| g.gpu_id)
                },
            ))
        })
        .unwrap_or(Err(FmmError::NoSuchObject(addr)))
    }

    fn ipc_export(&self, addr: u64, size: u64) -> Result<ShareHandle> {
        use kfd_sys::kfd::rocm_5_2;
        // 5.2.3's HSA_APERTURE values.
        const DGPU: u32 = 1;
        const DGPU_ALT: u32 = 2;
        const GPUVM: u32 = 3;
        const CPUVM: u32 = 4;
        let (handle, node, mflags, ape) = self
            .with_object(addr, Lookup::Exact { size: 0 }, |o| {
                let ape = match o.aperture {
                    ApId::SvmCoherent if self.svm_alt.is_some() => (DGPU_ALT, 0),
                    ApId::Gpuvm(i) => (GPUVM, i as u32),
                    ApId::CpuVm => (CPUVM, 0),
                    _ => (DGPU, 0),
                };
                (o.handle.unwrap_or(0), o.node_id, o.mflags, ape)
            })
            .ok_or(FmmError::NoSuchObject(addr))?;
        let mut gpu_id = self.validate_node(node)?;
        if gpu_id == 0 && self.is_dgpu {
            gpu_id = self
                .gpus
                .first()
                .map(|g| g.gpu_id)
                .ok_or(FmmError::Failed("no GPU to share memory through"))?;
        }
        let mut args = kfd::kfd_ioctl_ipc_export_handle_args {
            handle,
            gpu_id,
            flags: mflags.bits(),
            ..Default::default()
        };
        self.kfd
            .ioctl_plain(rocm_5_2::AMDKFD_IOC_IPC_EXPORT_HANDLE, &mut args)
            .map_err(FmmError::ioctl("AMDKFD_IOC_IPC_EXPORT_HANDLE"))?;
        let h = args.share_handle;
        Ok(ShareHandle([
            h[0],
            h[1],
            h[2],
            h[3],
            ape.0,
            ape.1,
            (size >> 12) as u32,
            gpu_id,
        ]))
    }

    /// `hsaKmtRegisterSharedHandle(ToNodes)`: imports memory shared with
    /// [`Fmm::share_memory`] (by this or another context, in this or
    /// another process). Returns `(address, size)`.
    pub fn register_shared_handle(
        &self,
        handle: &ShareHandle,
        nodes: &[u32],
    ) -> Result<(u64, u64)> {
        let ids = if nodes.is_empty() {
            Vec::new()
        } else {
            self.gpu_ids_for_nodes(nodes)?
        };
        // Upstream refuses a handle whose aperture type is invalid with
        // INVALID_PARAMETER before any ioctl; ours is one without the magic.
        // 5.2.3 crashes on such a handle (without the rule: ERROR).
        if !handle.has_magic() && self.opts.rules.refuse_unmarked_share_handles {
            return Err(FmmError::InvalidArgument(
                "share handle not made by ShareMemory",
            ));
        }
        let fd = handle.open()?;
        let size = handle.size_in_pages() as u64 * PAGE_SIZE;
        if size == 0 {
            return Err(FmmError::BadShareHandle("empty range"));
        }
        let mflags = handle.mem_flags();
        let gpu_id = if self.gpu_index(handle.gpu_id()).is_some() {
            handle.gpu_id()
        } else {
            self.gpus
                .first()
                .map(|g| g.gpu_id)
                .ok_or(FmmError::Failed("no GPU"))?
        };
        let gi = self.gpu_index(gpu_id).expect("known gpu");
        let ap = if mflags.contains(MemFlags::COARSE_GRAIN) || !self.gpus[gi].svm_needed {
            if self.gpus[gi].svm_needed {
                ApId::SvmDefault
            } else {
                ApId::Gpuvm(gi)
            }
        } else {
            ApId::SvmCoherent
        };
        let aperture = self.aperture(ap).ok_or(FmmError::Failed("no aperture"))?;
        let addr = aperture
            .allocate(None, size, 0)
            .map_err(|_| FmmError::OutOfMemory("share import"))?;
        let bo = match self.import_dmabuf_at(gpu_id, addr, fd.as_fd()) {
            Ok(h) => h,
            Err(e) => {
                // SAFETY: our fresh, unused range.
                unsafe { aperture.release(addr, size, true) };
                return Err(e);
            }
        };
        let mut obj = VmObject::new(addr, size, Some(bo), gpu_id, ap);
        obj.kind = Kind::Shared;
        obj.mflags = mflags;
        obj.node_id = self.gpus[gi].node_id;
        obj.registered = ids;
        if mflags.contains(MemFlags::HOST_ACCESS) && aperture.cpu_accessible {
            match self.map_cpu(addr, size, true, fd.as_fd(), 0, "shared memory") {
                Ok(()) => obj.cpu = CpuView::Mapped { len: size },
                Err(e) => self.warn(format!("shared memory at {addr:#x} has no CPU view: {e}")),
            }
        }
        self.insert(obj);
        Ok((addr, size))
    }

    // ------------------------------------------------------------------
    // Pointer info
    // ------------------------------------------------------------------

    /// `hsaKmtQueryPointerInfo`: what `addr` (anywhere inside an object)
    /// points into.
    pub fn pointer_info(&self, addr: u64) -> Result<PointerInfo> {
        self.with_object(addr, Lookup::Containing, |o| {
            let a = self.describe(o, (std::ptr::null(), 0), (std::ptr::null(), 0));
            PointerInfo {
                kind: a.kind,
                node: a.node,
                mem_flags: a.mem_flags,
                cpu_address: a.cpu_address,
                gpu_address: a.gpu_address,
                size: a.size,
                registered_nodes: o.registered.iter().map(|&g| self.node_of_gpu(g)).collect(),
                mapped_nodes: o.mapped.iter().map(|&g| self.node_of_gpu(g)).collect(),
                user_data: a.user_data,
            }
        })
        .ok_or(FmmError::UnknownPointer(addr))
    }

    /// [`Fmm::pointer_info`] for a C `HsaPointerInfo`: the node lists are
    /// arrays the object owns (see [`NodeArray`]), valid as long as the
    /// object lives, so the caller needs to keep nothing. No allocation
    /// after the first query of an object; one shard lock. The answer is
    /// kept with the object's index entry until the object changes, so a
    /// repeated query of a small object is one page-hash probe and one
    /// record read, however many objects live.
    pub fn pointer_info_arrays(&self, addr: u64) -> Result<PointerInfoArrays> {
        self.with_shard(addr, Lookup::Containing, |s, slot| {
            s.answer(slot, |o| {
                let gpus = self.gpus.len();
                let arrays = o
                    .node_arrays
                    .get_or_insert_with(|| Box::new(NodeArrays::new(gpus)));
                let (registered, mapped) = arrays.store(
                    o.registered.iter().map(|&g| self.node_of_gpu(g)),
                    o.mapped.iter().map(|&g| self.node_of_gpu(g)),
                );
                self.describe(o, registered, mapped)
            })
        })
        .flatten()
        .ok_or(FmmError::UnknownPointer(addr))
    }

    /// The pointer info of `o` with the given node arrays.
    fn describe(
        &self,
        o: &VmObject,
        registered: (*const u32, usize),
        mapped: (*const u32, usize),
    ) -> PointerInfoArrays {
        let kind = match o.kind {
            Kind::Shared => PointerType::RegisteredShared,
            Kind::Graphics { .. } => PointerType::RegisteredGraphics,
            Kind::Userptr { .. } => PointerType::RegisteredUser,
            Kind::ReservedAddr => PointerType::ReservedAddr,
            Kind::Allocated => PointerType::Allocated,
        };
        let mut info = PointerInfoArrays {
            kind,
            node: o.node_id,
            mem_flags: o.mflags,
            cpu_address: 0,
            gpu_address: o.start,
            size: o.size,
            registered_nodes: NodeArray::new(registered),
            mapped_nodes: NodeArray::new(mapped),
            user_data: o.user_data,
        };
        match o.kind {
            Kind::Userptr { addr: ua, size, .. } => {
                info.cpu_address = ua;
                info.size = size;
                info.gpu_address += ua & (PAGE_SIZE - 1);
            }
            Kind::Allocated => info.cpu_address = o.start,
            _ => {}
        }
        info
    }

    /// The kernel buffer-object handle of the object that starts at `addr`
    /// (the C library's `fmm_get_handle`), or `None` if no object starts
    /// there or the object has no BO (address-only reservations, APU
    /// system memory). A lookup in the address index: O(log n).
    ///
    /// The handle is what `AMDKFD_IOC_CREATE_EVENT` takes as
    /// `event_page_offset` to use a library-allocated buffer as the event
    /// page. The kernel keeps such a buffer for the life of its process
    /// and refuses to free it before (`EPERM`).
    pub fn handle(&self, addr: u64) -> Option<u64> {
        if addr == 0 {
            return None;
        }
        self.with_object(addr, Lookup::Exact { size: 0 }, |o| {
            if o.start == addr {
                o.handle
            } else {
                None
            }
        })
        .flatten()
    }

    /// Records that the kernel keeps the buffer starting at `addr` for the
    /// rest of its process: the event page handed to `CREATE_EVENT`, which
    /// the kernel refuses to free (`EPERM`) while the process lives.
    /// Teardown then gives back only its address range, with no unmap or
    /// free, as the C library leaves it to go with the process. Fails with
    /// [`FmmError::NoSuchObject`] if no object with a BO starts at `addr`.
    pub fn mark_kernel_held(&self, addr: u64) -> Result<()> {
        self.with_object(addr, Lookup::Exact { size: 0 }, |o| {
            if o.start == addr && o.handle.is_some() {
                o.kernel_held = true;
                true
            } else {
                false
            }
        })
        .filter(|&found| found)
        .map(|_| ())
        .ok_or(FmmError::NoSuchObject(addr))
    }

    /// `hsaKmtSetMemoryUserData`: attaches a value to the object at `addr`.
    pub fn set_user_data(&self, addr: u64, user_data: u64) -> Result<()> {
        self.with_object(addr, Lookup::Exact { size: 0 }, |o| o.user_data = user_data)
            .ok_or(FmmError::UnknownPointer(addr))
    }

    // ------------------------------------------------------------------
    // Device queries and policy
    // ------------------------------------------------------------------

    /// `hsaKmtAvailableMemory`: VRAM still available to this process on `node`.
    pub fn available_memory(&self, node: u32) -> Result<u64> {
        self.check_minor(9)?;
        let gpu_id = self.validate_node(node)?;
        let mut args = kfd::kfd_ioctl_get_available_memory_args {
            available: 0,
            gpu_id,
            pad: 0,
        };
        self.kfd
            .ioctl_plain(kfd::AMDKFD_IOC_AVAILABLE_MEMORY, &mut args)
            .map_err(FmmError::ioctl("AMDKFD_IOC_AVAILABLE_MEMORY"))?;
        Ok(args.available)
    }

    /// `hsaKmtSetMemoryPolicy`: only meaningful on Kaveri (gfx 7.0.0); other
    /// devices report NotImplemented, as in the C library.
    pub fn set_memory_policy(
        &self,
        node: u32,
        default_policy: u32,
        alternate_policy: u32,
        alternate_base: u64,
        alternate_size: u64,
    ) -> Result<()> {
        let gpu_id = self.validate_node(node)?;
        let gfx = self.nodes[node as usize].gfx;
        if gpu_id == 0 || gfx != KAVERI {
            return Err(FmmError::NotImplemented(
                "memory policy is a Kaveri-only API",
            ));
        }
        const CACHED: u32 = 0;
        const NONCACHED: u32 = 1;
        if ![CACHED, NONCACHED].contains(&default_policy)
            || ![CACHED, NONCACHED].contains(&alternate_policy)
        {
            return Err(FmmError::InvalidArgument(
                "cache policy must be cached or noncached",
            ));
        }
        if alternate_base % PAGE_SIZE != 0 {
            return Err(FmmError::UnalignedAddress(alternate_base));
        }
        if alternate_size % PAGE_SIZE != 0 {
            return Err(FmmError::BadSize {
                size: alternate_size,
                page: PAGE_SIZE,
            });
        }
        let pol = |p| {
            if p == CACHED {
                kfd::KFD_IOC_CACHE_POLICY_COHERENT
            } else {
                kfd::KFD_IOC_CACHE_POLICY_NONCOHERENT
            }
        };
        let mut args = kfd::kfd_ioctl_set_memory_policy_args {
            alternate_aperture_base: alternate_base,
            alternate_aperture_size: alternate_size,
            gpu_id,
            default_policy: pol(default_policy),
            alternate_policy: pol(alternate_policy),
            misc_process_flag: 0,
        };
        self.kfd
            .ioctl_plain(kfd::AMDKFD_IOC_SET_MEMORY_POLICY, &mut args)
            .map(|_| ())
            .map_err(FmmError::ioctl("AMDKFD_IOC_SET_MEMORY_POLICY"))
    }

    // ------------------------------------------------------------------
    // SVM and XNACK
    // ------------------------------------------------------------------

    /// The checks of [`Fmm::svm_set_attr`] and [`Fmm::svm_get_attr`]
    /// that come before their attributes are looked at: KFD 1.5, a
    /// non-empty range with a page-aligned start and size.
    pub fn check_svm_range(&self, addr: u64, size: u64) -> Result<()> {
        self.check_minor(5)?;
        if addr == 0 || size == 0 {
            return Err(FmmError::InvalidArgument("SVM range is empty"));
        }
        if addr % PAGE_SIZE != 0 {
            return Err(FmmError::UnalignedAddress(addr));
        }
        if size % PAGE_SIZE != 0 {
            return Err(FmmError::BadSize {
                size,
                page: PAGE_SIZE,
            });
        }
        Ok(())
    }

    /// `hsaKmtSVMSetAttr`: sets attributes of an SVM range. Location and
    /// access attributes take node ids, translated to gpu_ids.
    pub fn svm_set_attr(&self, addr: u64, size: u64, attrs: &[crate::SvmAttr]) -> Result<()> {
        use crate::flags::svm_attr::*;
        self.check_svm_range(addr, size)?;
        let mut raw = Vec::with_capacity(attrs.len());
        for a in attrs {
            let (t, v) = a.to_raw();
            let v = match t {
                PREFERRED_LOC if v == crate::INVALID_NODEID => {
                    kfd::KFD_IOCTL_SVM_LOCATION_UNDEFINED
                }
                PREFERRED_LOC | PREFETCH_LOC | ACCESS | ACCESS_IN_PLACE | NO_ACCESS => {
                    let g = self.validate_node(v)?;
                    if g == 0 && t != PREFERRED_LOC && t != PREFETCH_LOC {
                        return Err(FmmError::NotAGpuNode(v));
                    }
                    g
                }
                _ => v,
            };
            raw.push((t, v));
        }
        self.svm_ioctl(kfd::KFD_IOCTL_SVM_OP_SET_ATTR, addr, size, &mut raw)
    }

    /// Maps `size` bytes of anonymous, private, read-write memory aligned
    /// to `align` (a power of two of at least a page) that a forked child
    /// does not inherit: the memory the newest C library registers with
    /// [`Fmm::svm_set_attr`] for a queue's context save/restore area. It
    /// is not a memory object of this manager; give it back with
    /// [`Fmm::unmap_anonymous`].
    pub fn map_anonymous_aligned(&self, size: u64, align: u64) -> Result<u64> {
        if size == 0 || size % PAGE_SIZE != 0 {
            return Err(FmmError::BadSize {
                size,
                page: PAGE_SIZE,
            });
        }
        if align < PAGE_SIZE || !align.is_power_of_two() {
            return Err(FmmError::BadAlignment(align));
        }
        let span = size
            .checked_add(align)
            .filter(|&v| v <= crate::MAX_ALLOC_SIZE)
            .ok_or(FmmError::OutOfMemory(
                "size exceeds the virtual address space",
            ))?;
        // SAFETY: no MAP_FIXED: the kernel picks an unused range, which
        // nothing references yet.
        let base = unsafe {
            mman::mmap(
                0,
                span as usize,
                Prot::READ | Prot::WRITE,
                MapFlags::PRIVATE | MapFlags::ANONYMOUS,
                None,
                0,
            )
        }
        .map_err(|errno| FmmError::Mmap {
            what: "anonymous memory",
            errno,
        })? as u64;
        let addr = align_up(base, align);
        // SAFETY: both trimmed pieces lie inside the span just mapped and
        // outside `[addr, addr + size)`; nothing refers to them.
        unsafe {
            if addr > base {
                let _ = mman::munmap(base as usize, (addr - base) as usize);
            }
            let end = addr + size;
            if base + span > end {
                let _ = mman::munmap(end as usize, (base + span - end) as usize);
            }
        }
        dont_fork(addr, size);
        Ok(addr)
    }

    /// Unmaps memory from [`Fmm::map_anonymous_aligned`]. The kernel drops
    /// SVM attributes of the range with the mapping.
    ///
    /// # Safety
    ///
    /// `[addr, addr + size)` must be (part of) memory this manager mapped
    /// with [`Fmm::map_anonymous_aligned`] that nothing refers to any more.
    pub unsafe fn unmap_anonymous(&self, addr: u64, size: u64) -> Result<()> {
        // SAFETY: the caller hands back an anonymous range of ours that is
        // no longer referenced.
        unsafe { mman::munmap(addr as usize, size as usize) }.map_err(|errno| FmmError::Mmap {
            what: "anonymous memory",
            errno,
        })
    }

    /// `hsaKmtSVMGetAttr`: reads attributes of an SVM range into `attrs`
    /// (whose types say what to read; access attributes name the node to
    /// query). Locations come back as node ids (`None`/`INVALID_NODEID`
    /// for undefined, 0 for system memory).
    pub fn svm_get_attr(&self, addr: u64, size: u64, attrs: &mut [crate::SvmAttr]) -> Result<()> {
        use crate::flags::svm_attr::*;
        self.check_svm_range(addr, size)?;
        let mut raw = Vec::with_capacity(attrs.len());
        for a in attrs.iter() {
            let (t, v) = a.to_raw();
            let v = match t {
                ACCESS | ACCESS_IN_PLACE | NO_ACCESS => {
                    let g = self.validate_node(v)?;
                    if g == 0 {
                        return Err(FmmError::NotAGpuNode(v));
                    }
                    g
                }
                _ => v,
            };
            raw.push((t, v));
        }
        self.svm_ioctl(kfd::KFD_IOCTL_SVM_OP_GET_ATTR, addr, size, &mut raw)?;
        for (a, &(t, v)) in attrs.iter_mut().zip(&raw) {
            let v = match t {
                PREFERRED_LOC | PREFETCH_LOC | ACCESS | ACCESS_IN_PLACE | NO_ACCESS => match v {
                    kfd::KFD_IOCTL_SVM_LOCATION_SYSMEM => 0,
                    kfd::KFD_IOCTL_SVM_LOCATION_UNDEFINED => crate::INVALID_NODEID,
                    g => self
                        .nodes
                        .iter()
                        .position(|n| n.gpu_id == g)
                        .ok_or(FmmError::Failed("kernel returned an unknown gpu_id"))?
                        as u32,
                },
                _ => v,
            };
            // The kernel reports access per GPU with the type telling which
            // of the three applies.
            *a = crate::SvmAttr::from_raw(t, v);
        }
        Ok(())
    }

    fn svm_ioctl(&self, op: u32, addr: u64, size: u64, attrs: &mut [(u32, u32)]) -> Result<()> {
        // struct kfd_ioctl_svm_args followed by its attributes, built in a
        // u64 buffer (8-byte aligned; every field pair packs into one u64,
        // low half first, as the structs lie in memory on little-endian).
        if attrs.len() > kfd::SVM_MAX_ATTRS {
            return Err(FmmError::Failed(
                "too many SVM attributes for one AMDKFD_IOC_SVM request",
            ));
        }
        let mut buf = Vec::with_capacity(3 + attrs.len());
        buf.push(addr);
        buf.push(size);
        buf.push(op as u64 | (attrs.len() as u64) << 32);
        buf.extend(attrs.iter().map(|&(t, v)| t as u64 | (v as u64) << 32));
        let request = kfd::svm_request(attrs.len());
        loop {
            // SAFETY: `buf` holds the header and `attrs.len()` attributes,
            // exactly the size encoded in `request`; the range is only
            // recorded by the kernel.
            let r = unsafe {
                self.kfd.driver().ioctl(
                    self.kfd.as_fd(),
                    request as libc::c_ulong,
                    buf.as_mut_ptr().cast(),
                )
            };
            match r {
                Err(Errno::EINTR) | Err(Errno::EAGAIN) => continue,
                Err(errno) => {
                    return Err(FmmError::Ioctl {
                        name: "AMDKFD_IOC_SVM",
                        errno,
                    })
                }
                Ok(_) => break,
            }
        }
        for (a, w) in attrs.iter_mut().zip(&buf[3..]) {
            *a = (*w as u32, (*w >> 32) as u32);
        }
        Ok(())
    }

    fn xnack_ioctl(&self, value: i32) -> Result<bool> {
        self.check_minor(5)?;
        let mut args = kfd::kfd_ioctl_set_xnack_mode_args {
            xnack_enabled: value,
        };
        match self
            .kfd
            .ioctl_plain(kfd::AMDKFD_IOC_SET_XNACK_MODE, &mut args)
        {
            Ok(_) => Ok(args.xnack_enabled > 0),
            Err(Errno::EPERM) => Err(FmmError::NotSupported("XNACK mode cannot be changed")),
            Err(errno) => Err(FmmError::Ioctl {
                name: "AMDKFD_IOC_SET_XNACK_MODE",
                errno,
            }),
        }
    }

    /// `hsaKmtGetXNACKMode`: whether retry (XNACK) is enabled for this process.
    pub fn xnack_mode(&self) -> Result<bool> {
        self.xnack_ioctl(-1)
    }

    /// `hsaKmtSetXNACKMode`: enables or disables XNACK (fails while queues exist).
    pub fn set_xnack_mode(&self, enable: bool) -> Result<()> {
        self.xnack_ioctl(enable as i32).map(|_| ())
    }

    /// Whether the CPU can read the object starting at `addr`, and write
    /// it (used by [`crate::Buffer`]).
    pub(crate) fn cpu_access(&self, addr: u64) -> (bool, bool) {
        self.with_object(addr, Lookup::Exact { size: 0 }, |o| {
            let readable = o.cpu != CpuView::None
                && (o.mflags.contains(MemFlags::HOST_ACCESS)
                    || o.aperture == ApId::CpuVm
                    || (o.userptr().is_none() && !o.mflags.contains(MemFlags::NON_PAGED)));
            // Only APU system memory is mapped read-only (ReadOnly flag);
            // every other CPU view is read-write.
            let writable =
                readable && !(o.aperture == ApId::CpuVm && o.mflags.contains(MemFlags::READ_ONLY));
            (readable, writable)
        })
        .unwrap_or((false, false))
    }
}

/// Keeps a child process from inheriting device mappings (they would pin
/// the buffers after the parent frees them).
fn dont_fork(addr: u64, len: u64) {
    // SAFETY: madvise only changes fork behaviour of our own mapping.
    unsafe {
        libc::madvise(addr as *mut libc::c_void, len as usize, libc::MADV_DONTFORK);
    }
}

/// True if every page of the range is mapped (mincore fails with ENOMEM
/// on holes), so registering it cannot fault.
fn user_range_mapped(addr: u64, len: u64) -> bool {
    let pages = len.div_ceil(PAGE_SIZE) as usize;
    let mut vec = vec![0u8; pages];
    // SAFETY: mincore only reads the page tables of the range and writes
    // one byte per page into `vec`, which has room for all of them.
    unsafe { libc::mincore(addr as *mut libc::c_void, len as usize, vec.as_mut_ptr()) == 0 }
}

impl Drop for Fmm {
    fn drop(&mut self) {
        for gi in 0..self.gpus.len() {
            let _ = self.free_scratch(gi, true);
        }
        for s in &self.shards {
            let objs = lock(s).drain();
            for obj in objs {
                self.destroy(obj);
            }
        }
        if let Some(r) = self.svm_reservation {
            // SAFETY: every object in the range was destroyed above; the
            // reservation is ours and unused now.
            let _ = unsafe { mman::munmap(r.base as usize, (r.limit - r.base + 1) as usize) };
        }
    }
}
