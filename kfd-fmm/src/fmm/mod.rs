//! The per-context memory manager.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use kfd_sys::DeviceFile;
use kfd_topology::GfxVersion;

use crate::aperture::Space;
use crate::error::FmmError;
use crate::flags::MemFlags;
use crate::lock;
use crate::objects::VmObject;
use crate::va::align_up;
use crate::PAGE_SIZE;
use apertures::Apertures;
use gpus::GpuSet;
use index::ObjectIndex;

mod alloc;
mod apertures;
mod bo;
mod gpus;
mod index;
mod info;
mod map;
mod plan;
mod scratch;
mod setup;
mod sharing;
pub(crate) mod svm;
mod userptr;

pub use plan::AllocPlan;

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
    /// The node has VRAM the topology reports as not host-visible (a small
    /// PCI BAR): used only to explain a refused host-access VRAM
    /// allocation.
    pub small_bar: bool,
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
            small_bar: n.vram_size() != 0 && !n.is_large_bar(),
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
    /// Memory mapped without a node list goes onto every GPU: a GPU's MMIO
    /// remap page, and an object [`Fmm::map_to_gpu`] maps that is
    /// registered to no nodes in particular. Otherwise such memory of a
    /// GPU node (not a userptr) goes onto that GPU's usable peers (itself
    /// and the GPUs with an io link to it), the rest onto every GPU.
    pub default_map_all_gpus: bool,
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
    /// How [`Fmm::share_memory`] makes a handle.
    pub share: ShareVia,
    /// Registering a share handle that [`Fmm::share_memory`] did not make
    /// (no magic) fails with an invalid argument before any ioctl.
    pub refuse_unmarked_share_handles: bool,
    /// [`MemFlags::ONLY_ADDRESS`] sends an allocation down the system
    /// memory path, where (on a dGPU system) it reserves address space in
    /// the SVM aperture with no memory and no node; otherwise only VRAM
    /// allocations honour it and system memory ignores it (memory is
    /// really allocated).
    pub only_address_on_host_path: bool,
    /// Paged system memory with [`MemFlags::NO_SUBSTITUTE`] that cannot be
    /// bound to its NUMA node (`NoNUMABind`, no NUMA support, one node, a
    /// node beyond the last) fails; otherwise the binding is skipped.
    /// Bindings the kernel refuses fail `NoSubstitute` memory either way
    /// (see the `numa` module).
    pub numa_bind_strict: bool,
    /// [`Fmm::map_to_gpu_nodes`] refuses address space without memory
    /// (OnlyAddress) and memory without address space (NoAddress) with an
    /// invalid argument before it checks the aperture (which fails a
    /// NoAddress allocation with ERROR); otherwise the aperture comes
    /// first.
    pub map_nodes_refuses_unbacked_first: bool,
}

/// How [`Fmm::share_memory`] makes a share handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShareVia {
    /// `AMDKFD_IOC_IPC_EXPORT_HANDLE` (0x81, a ROCm-only request of AMD's
    /// amdgpu-dkms kernels); ERROR where the kernel refuses it (upstream
    /// kernels and kfd-sim lack it).
    RocmIpc,
    /// A dma-buf of the BO (`AMDKFD_IOC_EXPORT_DMABUF`, KFD 1.12+).
    DmaBuf,
    /// The IPC export first; when the kernel refuses it, a dma-buf.
    RocmIpcThenDmaBuf,
}

impl Default for FmmRules {
    /// The newest upstream library.
    fn default() -> Self {
        FmmRules {
            unknown_flags: MemFlags::empty(),
            refuse_extended_coherent_mixes: true,
            refuse_coarse_uncached: false,
            always_executable: false,
            default_map_all_gpus: false,
            doorbells_on_all_gpus: false,
            unmap_unknown_as_svm: true,
            refuse_empty_registration: false,
            register_through_svm: true,
            register_needs_userptr: true,
            share: ShareVia::RocmIpcThenDmaBuf,
            refuse_unmarked_share_handles: true,
            only_address_on_host_path: true,
            numa_bind_strict: true,
            map_nodes_refuses_unbacked_first: true,
        }
    }
}

/// Per-context options: the environment knobs of the C library, passed in
/// as values (this crate never reads the environment).
#[derive(Debug, Clone)]
pub struct FmmOptions {
    /// The SVM API is usable in this context (`HSA_USE_SVM`, and off for
    /// secondary contexts). With [`FmmOptions::accept_unknown_addresses`],
    /// unknown addresses in FreeMemory / DeregisterMemory / MapMemoryToGPU
    /// fall back to SVM semantics.
    pub svm_api_enabled: bool,
    /// Treat an address that no memory object covers as the C library
    /// does (false by default; the C ABI turns it on): with the SVM API it
    /// is taken for SVM memory (a free or deregistration succeeds doing
    /// nothing, a map sets the range's `ACCESS_IN_PLACE`, an unmap
    /// succeeds, user memory is registered as an SVM range), and on an APU
    /// a map or unmap of it succeeds doing nothing. Off, each of these is
    /// an error naming the address, so a double free or an unmap after a
    /// free does not pass unnoticed, and registered user memory is always
    /// a userptr object.
    pub accept_unknown_addresses: bool,
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
            accept_unknown_addresses: false,
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

/// What a pointer points into (the C API's `HSA_POINTER_TYPE`; its
/// numbers are the C border's business).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum PointerType {
    /// Nothing this context knows.
    Unknown,
    /// Memory allocated by this context.
    Allocated,
    /// Registered user memory.
    RegisteredUser,
    /// An imported graphics buffer.
    RegisteredGraphics,
    /// Memory imported through a share handle.
    RegisteredShared,
    /// An address reservation without memory.
    ReservedAddr,
}

/// What [`Fmm::pointer_info`] reports: the facts of the memory object a
/// pointer points into (the scalar fields of `HsaPointerInfo`), the
/// lengths of its node lists ([`Fmm::pointer_nodes`] has the lists), and
/// which state of which object the answer describes.
///
/// `(object, generation)` names the answer: a later answer with the same
/// pair has the same facts and the same node lists, so a caller that
/// keeps something per object state (the C border keeps the node arrays
/// of `HsaPointerInfo`) rebuilds it only when the generation changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// The value last given to [`Fmm::set_user_data`].
    pub user_data: u64,
    /// How many nodes the memory is registered to.
    pub registered_count: u32,
    /// How many nodes the memory is mapped on.
    pub mapped_count: u32,
    /// The object: its start address, unique among the live objects of
    /// this memory manager.
    pub object: u64,
    /// The object's state: a new value, never given before by this memory
    /// manager, after every change of the object (and for a new object).
    pub generation: u64,
}

/// What [`Fmm::pointer_nodes`] reports: a pointer's info and the node
/// lists of the same object state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointerNodes {
    /// The pointer's info.
    pub info: PointerInfo,
    /// Nodes the memory is registered to (`info.registered_count` of them).
    pub registered: Vec<u32>,
    /// Nodes the memory is mapped on (`info.mapped_count` of them).
    pub mapped: Vec<u32>,
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
    /// The mapped parts, by address. Before `space`: they drop first.
    objs: BTreeMap<u64, VmObject>,
    /// Owned by an RAII handle: address-based free refuses it.
    owned: bool,
    /// The backing range, given back when the scratch goes.
    space: Space,
}

/// The GPU memory manager of one KFD context.
///
/// It owns everything it creates: kernel buffer objects, CPU mappings,
/// address reservations and (unless shared in) the render-node files. On
/// drop it unmaps and frees all of it.
///
/// It is made of parts, each with its own state and invariants: the GPU
/// set (nodes, GPUs, render nodes), the aperture set, the object index,
/// the NUMA facts and the notes (warnings, failed drops); what an
/// allocation makes is decided by the allocation planner (`plan.rs`)
/// from facts of these parts alone.
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
    gpus: GpuSet,
    apertures: Apertures,
    objects: ObjectIndex,
    /// The machine's NUMA facts, read on the first binding.
    numa: crate::numa::Numa,
    notes: Notes,
}

/// A [`crate::Buffer`] the memory manager could not release when it was
/// dropped: its address and why. The memory stays allocated and belongs
/// to the address-based API again ([`Fmm::free_memory`] can retry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DropFailure {
    /// The buffer's address.
    pub addr: u64,
    /// What the release returned.
    pub error: FmmError,
}

/// The failures of buffer drops: how many, and the last few.
#[derive(Debug, Default)]
struct DropFailures {
    count: u64,
    recent: std::collections::VecDeque<DropFailure>,
}

/// How many drop failures [`Fmm::take_drop_failures`] keeps.
const KEPT_DROP_FAILURES: usize = 64;

/// What a memory manager noted on its way: non-fatal problems and the
/// buffers whose drop could not release them.
#[derive(Debug, Default)]
struct Notes {
    warnings: Mutex<Vec<String>>,
    drop_failures: Mutex<DropFailures>,
}

impl Notes {
    fn warn(&self, msg: String) {
        lock(&self.warnings).push(msg);
    }

    fn warnings(&self) -> Vec<String> {
        lock(&self.warnings).clone()
    }

    fn drop_failed(&self, addr: u64, error: FmmError) {
        let mut f = lock(&self.drop_failures);
        f.count += 1;
        if f.recent.len() == KEPT_DROP_FAILURES {
            f.recent.pop_front();
        }
        f.recent.push_back(DropFailure { addr, error });
    }
}

impl Fmm {
    /// Records that dropping the buffer at `addr` failed with `error`.
    pub(crate) fn note_drop_failure(&self, addr: u64, error: FmmError) {
        self.notes.drop_failed(addr, error);
    }

    /// How many buffer drops failed over this manager's life.
    pub fn drop_failure_count(&self) -> u64 {
        lock(&self.notes.drop_failures).count
    }

    /// The last buffer drops that failed (at most 64, oldest first), taken
    /// out: a later call returns only newer ones.
    pub fn take_drop_failures(&self) -> Vec<DropFailure> {
        lock(&self.notes.drop_failures).recent.drain(..).collect()
    }

    /// Records a non-fatal problem ([`Fmm::warnings`]).
    fn warn(&self, msg: String) {
        self.notes.warn(msg);
    }

    /// Adds `obj` to the index, in the shard of the GPU it was made
    /// through.
    #[inline]
    fn insert(&self, obj: VmObject) {
        self.insert_in(self.gpus.shard_of(obj.gpu_id), obj);
    }

    /// Adds `obj` to shard `shard` with its pointer-query answer made now,
    /// while the object is in the cache: the first query of a new buffer
    /// then reads the page index and the kept answer only, as every later
    /// one does, instead of the object itself.
    #[inline]
    fn insert_in(&self, shard: usize, obj: VmObject) {
        let answer = self.describe(&obj);
        self.objects.insert(shard, obj, &answer);
    }
}

fn page_align_up(v: u64) -> u64 {
    align_up(v, PAGE_SIZE)
}

impl Drop for Fmm {
    fn drop(&mut self) {
        for gi in 0..self.gpus.all().len() {
            let _ = self.free_scratch(gi, true);
        }
        for obj in self.objects.drain() {
            self.destroy(obj);
        }
        // The SVM reservation goes when its last mapping and aperture do.
    }
}
