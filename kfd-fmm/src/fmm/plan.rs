//! The allocation planner: what an allocation makes — which kind of
//! memory, through which GPU, in which aperture, backed by what, with
//! which kernel flags, mapped for the CPU or not, bound to which NUMA
//! node — and which checks refuse it, decided from the request, the
//! machine's facts and the options alone. No driver, no lock, no system
//! call: every decision is tested here without one; `alloc.rs` carries a
//! plan out.

use kfd_sys::mman::Prot;

use super::{FmmOptions, NodeDesc};
use crate::error::{AddressSpace, FmmError, MemoryKind, Result};
use crate::flags::{hsa_to_ioc, AllocMemFlags, MemFlags};
use crate::numa::NumaBinding;

/// Whether `nodes` describe a system with a discrete GPU (a GPU node
/// without CPU cores): then system memory is made through a GPU.
pub(crate) fn has_dgpu(nodes: &[NodeDesc]) -> bool {
    nodes
        .iter()
        .any(|n| n.is_gpu() && n.cpu_cores == 0 && n.simd_count > 0)
}

/// Whether the GPU of `node` places its memory in the SVM apertures
/// (every GPU of a dGPU system, gfx9+ APUs) rather than in an aperture
/// of its own.
pub(crate) fn in_svm(is_dgpu: bool, node: &NodeDesc) -> bool {
    is_dgpu || node.gfx.major >= 9
}

/// What the planner knows of the machine and the kernel.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts<'a> {
    /// The topology nodes, by node id.
    pub nodes: &'a [NodeDesc],
    /// The KFD interface's minor version.
    pub kfd_minor: u32,
    /// A discrete GPU is present ([`has_dgpu`]).
    pub is_dgpu: bool,
}

impl<'a> Facts<'a> {
    fn node(&self, node: u32) -> Result<&'a NodeDesc> {
        self.nodes
            .get(node as usize)
            .ok_or(FmmError::InvalidNode(node))
    }

    /// The gpu_id of the first GPU node, if any.
    fn first_gpu(&self) -> Option<u32> {
        self.nodes.iter().find(|n| n.is_gpu()).map(|n| n.gpu_id)
    }
}

/// The aperture an allocation is placed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// The default (non-coherent) SVM aperture.
    SvmDefault,
    /// The coherent SVM aperture.
    SvmCoherent,
    /// The GPU's own GPUVM aperture.
    Gpuvm,
    /// The handle range naming memory without an address (NoAddress).
    MemHandle,
}

/// Whether and how a new buffer object is mapped for the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CpuView {
    /// Not mapped.
    None,
    /// Mapped through its render node over its address, readable and
    /// writable when `host_access` (else without access); a host
    /// accessible AQL ring gets its mirror behind it.
    Mapped {
        /// The CPU may read and write it.
        host_access: bool,
    },
}

/// What stands behind the address range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backing {
    /// Nothing: address space only (OnlyAddress).
    AddressOnly,
    /// Anonymous pages, bound to a NUMA node and registered as a userptr
    /// BO (paged system memory).
    Userptr {
        /// The kernel's allocation flags (USERPTR among them).
        ioc: AllocMemFlags,
        /// The NUMA binding of the pages.
        numa: NumaBinding,
    },
    /// A buffer object of the kernel (GTT or VRAM).
    Bo {
        /// The kernel's allocation flags (GTT or VRAM among them).
        ioc: AllocMemFlags,
        /// The CPU mapping.
        cpu: CpuView,
        /// What a failed CPU mapping names.
        what: &'static str,
    },
}

/// Memory in an aperture, made through a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VmAlloc {
    /// The GPU whose VM holds the memory (and whose shard the object).
    pub gpu_id: u32,
    /// The aperture.
    pub place: Place,
    /// The address space taken: the size, or twice it for an AQL ring
    /// in the SVM aperture (mapped twice).
    pub va_size: u64,
    /// What stands behind the range.
    pub backing: Backing,
    /// The node the object records.
    pub node: u32,
    /// The flags the object records (zero frame buffer adds
    /// CoarseGrain).
    pub flags: MemFlags,
    /// A refused VRAM allocation is explained as VRAM the host cannot
    /// see (host-access VRAM of a node with a small BAR).
    pub small_bar: bool,
}

/// What an allocation makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// The scratch backing range of GPU `gpu_id`.
    Scratch {
        /// The GPU.
        gpu_id: u32,
    },
    /// System memory of an APU system: anonymous memory mapped with
    /// `prot`, no GPU object; the object records `flags`.
    Apu {
        /// The CPU protection.
        prot: Prot,
        /// The flags the object records.
        flags: MemFlags,
    },
    /// Memory in an aperture, made through a GPU.
    Vm(VmAlloc),
}

/// An allocation request that passed the checks made before the
/// caller's address is looked at ([`crate::Fmm::plan_alloc`]), with the
/// planner's decisions: the kind of memory and what the allocation
/// makes, or why it is refused once the address is read (the C library
/// checks the caller's address pointer in between).
/// [`crate::Fmm::alloc_planned`] carries it out without deciding
/// anything again; a plan belongs to the memory manager that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocPlan {
    pub(super) node: u32,
    pub(super) size: u64,
    pub(super) align: u64,
    pub(super) flags: MemFlags,
    pub(super) kind: MemoryKind,
    pub(super) route: Result<Route>,
}

impl AllocPlan {
    /// The flags as this generation reads them (ignored flags removed).
    pub fn flags(&self) -> MemFlags {
        self.flags
    }

    /// The kind of memory the allocation makes ([`crate::Fmm::alloc_host_gtt`]
    /// always makes system memory, whatever the plan says).
    pub fn kind(&self) -> MemoryKind {
        self.kind
    }

    /// The fixed address of the allocation given the caller's `address`:
    /// `None` without [`MemFlags::FIXED_ADDRESS`]; with it, an address
    /// is required.
    pub(super) fn fixed_address(&self, address: Option<u64>) -> Result<Option<u64>> {
        if !self.flags.contains(MemFlags::FIXED_ADDRESS) {
            return Ok(None);
        }
        match address {
            Some(a) if a != 0 => Ok(Some(a)),
            _ => Err(FmmError::InvalidArgument("FixedAddress without an address")),
        }
    }
}

/// The COHERENT and UNCACHED kernel flags of `flags`, both forced by
/// [`FmmOptions::disable_cache`].
fn cache_flags(flags: MemFlags, disable_cache: bool) -> AllocMemFlags {
    let mut ioc = AllocMemFlags::empty();
    if !flags.contains(MemFlags::COARSE_GRAIN) || disable_cache {
        ioc |= AllocMemFlags::COHERENT;
    }
    if flags.contains(MemFlags::UNCACHED) || disable_cache {
        ioc |= AllocMemFlags::UNCACHED;
    }
    ioc
}

/// The kernel's allocation flags of memory allocated with `flags`:
/// access, AQL, cache and coherence flags; for VRAM (`vram`) also the
/// memory type, visibility, extended coherence and contiguity. The
/// caller adds the memory type of system memory (USERPTR or GTT).
fn kernel_flags(flags: MemFlags, opts: &FmmOptions, vram: bool) -> AllocMemFlags {
    let mut ioc =
        hsa_to_ioc(flags, opts.rules.always_executable) | cache_flags(flags, opts.disable_cache);
    if vram {
        ioc |= AllocMemFlags::VRAM;
        let extra = [
            (MemFlags::HOST_ACCESS, AllocMemFlags::PUBLIC),
            (MemFlags::EXTENDED_COHERENT, AllocMemFlags::EXT_COHERENT),
            (MemFlags::CONTIGUOUS, AllocMemFlags::CONTIGUOUS),
        ];
        for (asked, given) in extra {
            if flags.contains(asked) {
                ioc |= given;
            }
        }
    }
    ioc
}

/// An allocation request, its flags as the generation reads them.
#[derive(Debug, Clone, Copy)]
struct Request {
    node: u32,
    size: u64,
    align: u64,
    flags: MemFlags,
}

/// The checks an allocation makes before it looks at its arguments:
/// KFD 1.16 for [`MemFlags::CONTIGUOUS`] (unless the generation ignores
/// that flag), then the node. Returns the node.
pub(crate) fn check_node<'a>(
    facts: &Facts<'a>,
    opts: &FmmOptions,
    node: u32,
    flags: MemFlags,
) -> Result<&'a NodeDesc> {
    if flags
        .difference(opts.rules.unknown_flags)
        .contains(MemFlags::CONTIGUOUS)
        && facts.kfd_minor < 16
    {
        return Err(FmmError::KfdTooOld {
            need: 16,
            have: facts.kfd_minor,
        });
    }
    facts.node(node)
}

/// Plans an allocation of `size` bytes on `node` with `flags` aligned to
/// `align` (0: default). First the checks made before the caller's
/// address is looked at, in the C library's order: Contiguous needs KFD
/// 1.16 (unless the generation ignores the flag), then the node, the
/// alignment, the size. Then the decisions, with the checks made after
/// it (kept in the plan).
pub(crate) fn plan_alloc(
    facts: &Facts<'_>,
    opts: &FmmOptions,
    node: u32,
    size: u64,
    align: u64,
    mut flags: MemFlags,
) -> Result<AllocPlan> {
    let rules = &opts.rules;
    let desc = check_node(facts, opts, node, flags)?;
    flags.remove(rules.unknown_flags);
    let page = flags.page_size();
    if align != 0 && (align < page || !align.is_power_of_two()) {
        return Err(FmmError::BadAlignment(align));
    }
    if size == 0 || size % page != 0 {
        return Err(FmmError::BadSize { size, page });
    }
    let kind = if flags.contains(MemFlags::SCRATCH) {
        MemoryKind::Scratch
    } else if !desc.is_gpu()
        || !flags.contains(MemFlags::NON_PAGED)
        || opts.zero_fb
        || flags.contains(MemFlags::GTT_ACCESS)
        || (rules.only_address_on_host_path && flags.contains(MemFlags::ONLY_ADDRESS))
    {
        MemoryKind::System
    } else {
        MemoryKind::Device
    };
    let req = Request {
        node,
        size,
        align,
        flags,
    };
    let route = route(facts, opts, desc, req, kind);
    Ok(AllocPlan {
        node,
        size,
        align,
        flags,
        kind,
        route,
    })
}

/// What an allocation of `kind` makes, or the first check after the
/// caller's address that refuses it: flag combinations the generation
/// refuses, then per kind the path's own checks and the size.
fn route(
    facts: &Facts<'_>,
    opts: &FmmOptions,
    desc: &NodeDesc,
    req: Request,
    kind: MemoryKind,
) -> Result<Route> {
    let rules = &opts.rules;
    let Request {
        node,
        size,
        align,
        flags,
    } = req;
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
    // Nothing this big fits in the address space; refused before any
    // size arithmetic, naming the kind of memory asked for.
    let too_big = || {
        if size > crate::MAX_ALLOC_SIZE {
            Err(FmmError::TooBig { kind })
        } else {
            Ok(())
        }
    };
    match kind {
        MemoryKind::Scratch => {
            if align != 0 {
                return Err(FmmError::NotImplemented("alignment for scratch memory"));
            }
            // A CPU node has no scratch aperture.
            if !desc.is_gpu() {
                return Err(FmmError::NoAddressSpace {
                    aperture: AddressSpace::Scratch,
                });
            }
            too_big()?;
            Ok(Route::Scratch {
                gpu_id: desc.gpu_id,
            })
        }
        MemoryKind::System => {
            // A zero frame buffer makes VRAM coarse-grained system memory.
            let flags = if opts.zero_fb && desc.is_gpu() && flags.contains(MemFlags::NON_PAGED) {
                flags | MemFlags::COARSE_GRAIN
            } else {
                flags
            };
            too_big()?;
            host_route(facts, opts, Request { flags, ..req }, desc.gpu_id)
        }
        MemoryKind::Device => {
            if flags.contains(MemFlags::ONLY_ADDRESS) && flags.contains(MemFlags::NO_ADDRESS) {
                return Err(FmmError::ConflictingFlags("OnlyAddress and NoAddress"));
            }
            too_big()?;
            let svm = in_svm(facts.is_dgpu, desc);
            let (mut place, va_size) = if svm {
                let aql = flags.contains(MemFlags::AQL_QUEUE_MEMORY);
                (Place::SvmDefault, if aql { size * 2 } else { size })
            } else {
                (Place::Gpuvm, size)
            };
            let backing = if flags.contains(MemFlags::ONLY_ADDRESS) {
                Backing::AddressOnly
            } else {
                if flags.contains(MemFlags::NO_ADDRESS) {
                    place = Place::MemHandle;
                }
                let cpu = if place == Place::MemHandle {
                    CpuView::None
                } else {
                    CpuView::Mapped {
                        host_access: flags.contains(MemFlags::HOST_ACCESS),
                    }
                };
                Backing::Bo {
                    ioc: kernel_flags(flags, opts, true),
                    cpu,
                    what: "VRAM",
                }
            };
            Ok(Route::Vm(VmAlloc {
                gpu_id: desc.gpu_id,
                place,
                va_size,
                // No memory, so no node: the newest library sets an
                // address-only object's node to 0 (fmm_allocate_va);
                // 6.2.4 leaves it uninitialised.
                node: if backing == Backing::AddressOnly {
                    0
                } else {
                    node
                },
                backing,
                flags,
                small_bar: desc.small_bar && flags.contains(MemFlags::HOST_ACCESS),
            }))
        }
    }
}

/// The route of system memory of `node` with `flags` (zero frame buffer
/// applied), made through the GPU `gpu_id` when it is one, else the
/// first GPU: anonymous memory on an APU system; on a dGPU system,
/// address space only (OnlyAddress, where the generation sends it here),
/// a userptr BO over anonymous pages (paged memory, unless the options
/// make it GTT) or a GTT BO, in the coherent SVM aperture unless
/// CoarseGrain.
fn host_route(facts: &Facts<'_>, opts: &FmmOptions, req: Request, gpu_id: u32) -> Result<Route> {
    let Request {
        node,
        size,
        align,
        flags,
    } = req;
    if !facts.is_dgpu {
        if align != 0 {
            return Err(FmmError::ApuSystemMemory("an alignment"));
        }
        if flags.contains(MemFlags::FIXED_ADDRESS) {
            return Err(FmmError::ApuSystemMemory("a fixed address"));
        }
        let mut prot = Prot::READ;
        if flags.contains(MemFlags::EXECUTE_ACCESS) {
            prot |= Prot::EXEC;
        }
        if !flags.contains(MemFlags::READ_ONLY) {
            prot |= Prot::WRITE;
        }
        return Ok(Route::Apu { prot, flags });
    }
    let through = if gpu_id != 0 {
        gpu_id
    } else {
        facts.first_gpu().ok_or(FmmError::NoGpu)?
    };
    let place = if flags.contains(MemFlags::COARSE_GRAIN) {
        Place::SvmDefault
    } else {
        Place::SvmCoherent
    };
    let va_size = if flags.contains(MemFlags::AQL_QUEUE_MEMORY) {
        size * 2
    } else {
        size
    };
    let ioc = kernel_flags(flags, opts, false);
    let only_address =
        opts.rules.only_address_on_host_path && flags.contains(MemFlags::ONLY_ADDRESS);
    let backing = if only_address {
        Backing::AddressOnly
    } else if !flags.contains(MemFlags::NON_PAGED) && opts.userptr_for_paged_mem {
        Backing::Userptr {
            ioc: ioc | AllocMemFlags::USERPTR,
            numa: NumaBinding::new(node, flags, opts.rules.numa_bind_strict),
        }
    } else {
        let cpu = if flags.contains(MemFlags::HOST_ACCESS) {
            CpuView::Mapped { host_access: true }
        } else {
            CpuView::None
        };
        Backing::Bo {
            ioc: ioc | AllocMemFlags::GTT,
            cpu,
            what: "GTT",
        }
    };
    Ok(Route::Vm(VmAlloc {
        gpu_id: through,
        place,
        va_size,
        node: if only_address { 0 } else { node },
        backing,
        flags,
        small_bar: false,
    }))
}

/// Plans [`crate::Fmm::alloc_host_gtt`] from the plan of its CPU node
/// `plan.node`: system memory made as a GTT BO through the GPU of
/// `anchor_node`, non-paged and host accessible. The node must be a CPU
/// node and the anchor a GPU node; VRAM-only and address-only flags are
/// refused, and so is a size beyond the address space.
pub(crate) fn plan_host_gtt(
    plan: &AllocPlan,
    facts: &Facts<'_>,
    opts: &FmmOptions,
    anchor_node: u32,
) -> Result<AllocPlan> {
    let flags = plan.flags | MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
    if facts.node(plan.node)?.is_gpu() {
        return Err(FmmError::InvalidNode(plan.node));
    }
    let anchor = facts.node(anchor_node)?.gpu_id;
    if anchor == 0 {
        return Err(FmmError::NotAGpuNode(anchor_node));
    }
    let refused =
        MemFlags::SCRATCH | MemFlags::ONLY_ADDRESS | MemFlags::NO_ADDRESS | MemFlags::FIXED_ADDRESS;
    if flags.intersects(refused) {
        return Err(FmmError::ConflictingFlags(
            "host GTT memory is memory with an address of its own",
        ));
    }
    let kind = MemoryKind::System;
    if plan.size > crate::MAX_ALLOC_SIZE {
        return Err(FmmError::TooBig { kind });
    }
    let req = Request {
        node: plan.node,
        size: plan.size,
        align: 0,
        flags,
    };
    Ok(AllocPlan {
        node: plan.node,
        size: plan.size,
        align: 0,
        flags,
        kind,
        route: Ok(host_route(facts, opts, req, anchor)?),
    })
}

#[cfg(test)]
mod tests {
    use kfd_topology::GfxVersion;

    use super::*;
    use crate::fmm::FmmRules;

    const GPU: u32 = 0x1111;
    const GPU2: u32 = 0x2222;
    const NP: MemFlags = MemFlags::NON_PAGED;
    const MIB: u64 = 1 << 20;

    fn cpu() -> NodeDesc {
        NodeDesc {
            cpu_cores: 8,
            ..NodeDesc::default()
        }
    }

    fn dgpu(gpu_id: u32, major: u8) -> NodeDesc {
        NodeDesc {
            gpu_id,
            simd_count: 64,
            gfx: GfxVersion::new(major, 0, 0),
            ..NodeDesc::default()
        }
    }

    fn apu(major: u8) -> NodeDesc {
        NodeDesc {
            cpu_cores: 4,
            ..dgpu(GPU, major)
        }
    }

    /// A CPU node and two gfx9 dGPUs.
    fn dgpu_system() -> Vec<NodeDesc> {
        vec![cpu(), dgpu(GPU, 9), dgpu(GPU2, 9)]
    }

    fn facts(nodes: &[NodeDesc]) -> Facts<'_> {
        Facts {
            nodes,
            kfd_minor: 16,
            is_dgpu: has_dgpu(nodes),
        }
    }

    fn plan_with(nodes: &[NodeDesc], opts: &FmmOptions, node: u32, flags: MemFlags) -> AllocPlan {
        plan_alloc(&facts(nodes), opts, node, MIB, 0, flags).unwrap()
    }

    /// The route of a 1 MiB allocation, which must be admitted.
    fn route_of(nodes: &[NodeDesc], opts: &FmmOptions, node: u32, flags: MemFlags) -> Route {
        plan_with(nodes, opts, node, flags).route.unwrap()
    }

    fn vm(r: Route) -> VmAlloc {
        match r {
            Route::Vm(vm) => vm,
            r => panic!("not memory in an aperture: {r:?}"),
        }
    }

    fn ioc(r: Route) -> AllocMemFlags {
        match vm(r).backing {
            Backing::Userptr { ioc, .. } | Backing::Bo { ioc, .. } => ioc,
            Backing::AddressOnly => panic!("no kernel flags for address space"),
        }
    }

    #[test]
    fn vram_of_a_dgpu_is_a_coherent_bo_in_the_svm_aperture() {
        let nodes = dgpu_system();
        let opts = FmmOptions::primary();
        let p = plan_with(&nodes, &opts, 1, NP);
        assert_eq!(p.kind(), MemoryKind::Device);
        assert_eq!(
            vm(p.route.unwrap()),
            VmAlloc {
                gpu_id: GPU,
                place: Place::SvmDefault,
                va_size: MIB,
                backing: Backing::Bo {
                    ioc: AllocMemFlags::VRAM | AllocMemFlags::WRITABLE | AllocMemFlags::COHERENT,
                    cpu: CpuView::Mapped { host_access: false },
                    what: "VRAM",
                },
                node: 1,
                flags: NP,
                small_bar: false,
            }
        );
        // NoAddress names the memory in the handle range, not mapped.
        let r = vm(route_of(&nodes, &opts, 2, NP | MemFlags::NO_ADDRESS));
        assert_eq!((r.gpu_id, r.place), (GPU2, Place::MemHandle));
        assert!(matches!(
            r.backing,
            Backing::Bo {
                cpu: CpuView::None,
                ..
            }
        ));
        // An AQL ring takes twice its size (mapped twice).
        let aql = NP | MemFlags::AQL_QUEUE_MEMORY;
        let r = vm(route_of(&nodes, &opts, 1, aql));
        assert_eq!(r.va_size, 2 * MIB);
        assert!(ioc(Route::Vm(r)).contains(AllocMemFlags::AQL_QUEUE_MEM | AllocMemFlags::UNCACHED));
    }

    #[test]
    fn host_visible_vram_is_public_and_mapped_read_write() {
        let mut nodes = dgpu_system();
        let opts = FmmOptions::primary();
        let flags = NP | MemFlags::HOST_ACCESS | MemFlags::COARSE_GRAIN;
        let r = vm(route_of(&nodes, &opts, 1, flags));
        assert_eq!(
            r.backing,
            Backing::Bo {
                // CoarseGrain drops COHERENT.
                ioc: AllocMemFlags::VRAM | AllocMemFlags::WRITABLE | AllocMemFlags::PUBLIC,
                cpu: CpuView::Mapped { host_access: true },
                what: "VRAM",
            }
        );
        assert!(!r.small_bar);
        // A small BAR explains a refusal of host-access VRAM only.
        nodes[1].small_bar = true;
        assert!(vm(route_of(&nodes, &opts, 1, flags)).small_bar);
        assert!(!vm(route_of(&nodes, &opts, 1, NP)).small_bar);
    }

    #[test]
    fn kernel_flags_follow_the_memory_flags_and_options() {
        let nodes = dgpu_system();
        let mut opts = FmmOptions::primary();
        opts.rules.refuse_extended_coherent_mixes = false;
        let flags = NP
            | MemFlags::READ_ONLY
            | MemFlags::EXECUTE_ACCESS
            | MemFlags::EXTENDED_COHERENT
            | MemFlags::CONTIGUOUS
            | MemFlags::UNCACHED;
        assert_eq!(
            ioc(route_of(&nodes, &opts, 1, flags)),
            AllocMemFlags::VRAM
                | AllocMemFlags::EXECUTABLE
                | AllocMemFlags::COHERENT
                | AllocMemFlags::UNCACHED
                | AllocMemFlags::EXT_COHERENT
                | AllocMemFlags::CONTIGUOUS
        );
        // System memory gets neither EXT_COHERENT nor CONTIGUOUS.
        let host = ioc(route_of(&nodes, &opts, 0, flags));
        assert_eq!(
            host,
            AllocMemFlags::GTT
                | AllocMemFlags::EXECUTABLE
                | AllocMemFlags::COHERENT
                | AllocMemFlags::UNCACHED
        );
        // HSA_DISABLE_CACHE: coherent and uncached whatever is asked.
        opts.disable_cache = true;
        let both = AllocMemFlags::COHERENT | AllocMemFlags::UNCACHED;
        assert!(ioc(route_of(&nodes, &opts, 1, NP | MemFlags::COARSE_GRAIN)).contains(both));
        assert!(ioc(route_of(&nodes, &opts, 0, MemFlags::COARSE_GRAIN)).contains(both));
        // 5.2.3: every allocation executable.
        opts.rules.always_executable = true;
        assert!(ioc(route_of(&nodes, &opts, 1, NP)).contains(AllocMemFlags::EXECUTABLE));
        assert!(ioc(route_of(&nodes, &opts, 0, NP)).contains(AllocMemFlags::EXECUTABLE));
    }

    #[test]
    fn paged_system_memory_is_userptr_unless_the_options_say_gtt() {
        let nodes = dgpu_system();
        let opts = FmmOptions::primary();
        let p = plan_with(&nodes, &opts, 0, MemFlags::HOST_ACCESS);
        assert_eq!(p.kind(), MemoryKind::System);
        let r = vm(p.route.unwrap());
        assert_eq!((r.gpu_id, r.place, r.node), (GPU, Place::SvmCoherent, 0));
        assert_eq!(
            r.backing,
            Backing::Userptr {
                ioc: AllocMemFlags::USERPTR | AllocMemFlags::WRITABLE | AllocMemFlags::COHERENT,
                numa: NumaBinding {
                    node: 0,
                    must: false,
                    skip: false,
                    strict: true,
                },
            }
        );
        // A secondary context makes paged memory as GTT, mapped for the
        // CPU when host accessible.
        let r = vm(route_of(
            &nodes,
            &FmmOptions::secondary(),
            0,
            MemFlags::HOST_ACCESS,
        ));
        assert_eq!(
            r.backing,
            Backing::Bo {
                ioc: AllocMemFlags::GTT | AllocMemFlags::WRITABLE | AllocMemFlags::COHERENT,
                cpu: CpuView::Mapped { host_access: true },
                what: "GTT",
            }
        );
        // Non-paged memory is GTT; coarse grain in the default aperture;
        // without host access not mapped.
        let r = vm(route_of(&nodes, &opts, 0, NP | MemFlags::COARSE_GRAIN));
        assert_eq!(r.place, Place::SvmDefault);
        assert_eq!(
            r.backing,
            Backing::Bo {
                ioc: AllocMemFlags::GTT | AllocMemFlags::WRITABLE,
                cpu: CpuView::None,
                what: "GTT",
            }
        );
        // An AQL ring of system memory takes twice its size.
        let aql = MemFlags::HOST_ACCESS | MemFlags::AQL_QUEUE_MEMORY;
        assert_eq!(vm(route_of(&nodes, &opts, 0, aql)).va_size, 2 * MIB);
    }

    #[test]
    fn system_memory_of_a_gpu_node_goes_through_that_gpu() {
        let nodes = dgpu_system();
        let opts = FmmOptions::primary();
        for flags in [MemFlags::HOST_ACCESS, NP | MemFlags::GTT_ACCESS] {
            let p = plan_with(&nodes, &opts, 2, flags);
            assert_eq!(p.kind(), MemoryKind::System);
            let r = vm(p.route.unwrap());
            assert_eq!((r.gpu_id, r.node), (GPU2, 2));
        }
        // A machine of CPU nodes only has no GPU to make it through.
        let cpus = [cpu(), cpu()];
        let f = Facts {
            is_dgpu: true,
            ..facts(&cpus)
        };
        let p = plan_alloc(&f, &opts, 1, MIB, 0, NP).unwrap();
        assert_eq!(p.route, Err(FmmError::NoGpu));
    }

    #[test]
    fn paged_memory_is_bound_to_its_numa_node_as_the_flags_and_rule_say() {
        let nodes = dgpu_system();
        let mut opts = FmmOptions::primary();
        let numa = |opts: &FmmOptions, flags| match vm(route_of(&nodes, opts, 0, flags)).backing {
            Backing::Userptr { numa, .. } => numa,
            b => panic!("not a userptr: {b:?}"),
        };
        let ns = MemFlags::NO_SUBSTITUTE;
        assert_eq!(
            numa(&opts, ns | MemFlags::NO_NUMA_BIND),
            NumaBinding {
                node: 0,
                must: true,
                skip: true,
                strict: true,
            }
        );
        opts.rules.numa_bind_strict = false;
        let b = numa(&opts, ns);
        assert!(b.must && !b.skip && !b.strict);
        // Non-paged memory is a GTT BO: nothing to bind.
        assert!(matches!(
            vm(route_of(&nodes, &opts, 0, NP | ns)).backing,
            Backing::Bo { .. }
        ));
    }

    #[test]
    fn only_address_follows_the_generation_rule() {
        let nodes = dgpu_system();
        let mut opts = FmmOptions::primary();
        let flags = NP | MemFlags::ONLY_ADDRESS;
        let p = plan_with(&nodes, &opts, 1, flags);
        assert_eq!(p.kind(), MemoryKind::System);
        let r = vm(p.route.unwrap());
        assert_eq!(
            (r.backing, r.place, r.node),
            (Backing::AddressOnly, Place::SvmCoherent, 0)
        );
        opts.rules = FmmRules {
            only_address_on_host_path: false,
            ..FmmRules::default()
        };
        let p = plan_with(&nodes, &opts, 1, flags);
        assert_eq!(p.kind(), MemoryKind::Device);
        let r = vm(p.route.unwrap());
        assert_eq!(
            (r.backing, r.place, r.node),
            (Backing::AddressOnly, Place::SvmDefault, 0)
        );
        // With NoAddress too, refused after the address is read.
        let p = plan_with(&nodes, &opts, 1, flags | MemFlags::NO_ADDRESS);
        assert!(matches!(p.route, Err(FmmError::ConflictingFlags(_))));
    }

    #[test]
    fn apu_system_memory_is_anonymous_memory_and_old_apus_have_gpuvm() {
        let nodes = vec![apu(8)];
        let opts = FmmOptions::primary();
        assert!(!facts(&nodes).is_dgpu);
        let p = plan_with(&nodes, &opts, 0, MemFlags::HOST_ACCESS);
        assert_eq!(p.kind(), MemoryKind::System);
        assert_eq!(
            p.route,
            Ok(Route::Apu {
                prot: Prot::READ | Prot::WRITE,
                flags: MemFlags::HOST_ACCESS,
            })
        );
        let ro = MemFlags::READ_ONLY | MemFlags::EXECUTE_ACCESS;
        assert!(matches!(
            route_of(&nodes, &opts, 0, ro),
            Route::Apu { prot, .. } if prot == Prot::READ | Prot::EXEC
        ));
        // No alignment and no fixed address for APU system memory.
        let f = facts(&nodes);
        let aligned = plan_alloc(&f, &opts, 0, MIB, MIB, MemFlags::empty()).unwrap();
        assert_eq!(
            aligned.route,
            Err(FmmError::ApuSystemMemory("an alignment"))
        );
        let fixed = plan_with(&nodes, &opts, 0, MemFlags::FIXED_ADDRESS);
        assert_eq!(
            fixed.route,
            Err(FmmError::ApuSystemMemory("a fixed address"))
        );
        // A gfx8 APU's VRAM lies in its own GPUVM aperture (an AQL ring
        // there takes its size once), a gfx9 one's in the SVM aperture.
        let aql = NP | MemFlags::AQL_QUEUE_MEMORY;
        let r = vm(route_of(&nodes, &opts, 0, aql));
        assert_eq!((r.place, r.va_size), (Place::Gpuvm, MIB));
        let r = vm(route_of(&[apu(9)], &opts, 0, aql));
        assert_eq!((r.place, r.va_size), (Place::SvmDefault, 2 * MIB));
    }

    #[test]
    fn zero_frame_buffer_turns_vram_into_coarse_system_memory() {
        let nodes = dgpu_system();
        let opts = FmmOptions {
            zero_fb: true,
            ..FmmOptions::primary()
        };
        let p = plan_with(&nodes, &opts, 1, NP);
        assert_eq!((p.kind(), p.flags()), (MemoryKind::System, NP));
        let r = vm(p.route.unwrap());
        assert_eq!(r.flags, NP | MemFlags::COARSE_GRAIN);
        assert_eq!((r.gpu_id, r.place), (GPU, Place::SvmDefault));
        assert_eq!(
            ioc(Route::Vm(r)),
            AllocMemFlags::GTT | AllocMemFlags::WRITABLE
        );
    }

    #[test]
    fn scratch_is_the_gpus_scratch_and_refused_elsewhere() {
        let nodes = dgpu_system();
        let opts = FmmOptions::primary();
        let f = facts(&nodes);
        let p = plan_with(&nodes, &opts, 1, MemFlags::SCRATCH | NP);
        assert_eq!(p.kind(), MemoryKind::Scratch);
        assert_eq!(p.route, Ok(Route::Scratch { gpu_id: GPU }));
        let cpu = plan_with(&nodes, &opts, 0, MemFlags::SCRATCH);
        assert_eq!(
            cpu.route,
            Err(FmmError::NoAddressSpace {
                aperture: AddressSpace::Scratch
            })
        );
        let aligned = plan_alloc(&f, &opts, 1, MIB, MIB, MemFlags::SCRATCH).unwrap();
        assert!(matches!(aligned.route, Err(FmmError::NotImplemented(_))));
    }

    #[test]
    fn too_big_is_refused_after_the_address_naming_the_kind() {
        let nodes = dgpu_system();
        let opts = FmmOptions::primary();
        let f = facts(&nodes);
        let size = crate::MAX_ALLOC_SIZE + 4096;
        for (node, flags, kind) in [
            (1, NP, MemoryKind::Device),
            (0, MemFlags::HOST_ACCESS, MemoryKind::System),
            (1, MemFlags::SCRATCH, MemoryKind::Scratch),
        ] {
            let p = plan_alloc(&f, &opts, node, size, 0, flags).unwrap();
            assert_eq!((p.kind(), p.route), (kind, Err(FmmError::TooBig { kind })));
        }
        // Flag conflicts come first.
        let mixed = NP | MemFlags::EXTENDED_COHERENT | MemFlags::UNCACHED;
        let p = plan_alloc(&f, &opts, 1, size, 0, mixed).unwrap();
        assert!(matches!(p.route, Err(FmmError::ConflictingFlags(_))));
    }

    #[test]
    fn checks_run_in_the_c_order() {
        let nodes = dgpu_system();
        let opts = FmmOptions::primary();
        let mut f = facts(&nodes);
        let refused = |f: &Facts<'_>, opts: &FmmOptions, node, size, align, flags| {
            plan_alloc(f, opts, node, size, align, flags).unwrap_err()
        };
        // The node before the alignment, the alignment before the size.
        assert_eq!(refused(&f, &opts, 9, 0, 3, NP), FmmError::InvalidNode(9));
        assert_eq!(refused(&f, &opts, 1, 0, 3, NP), FmmError::BadAlignment(3));
        assert_eq!(
            refused(&f, &opts, 1, 4097, 0, NP),
            FmmError::BadSize {
                size: 4097,
                page: 4096
            }
        );
        // A 2 MiB page size needs 2 MiB multiples.
        let huge = NP | MemFlags::from_bits_retain(2 << 4);
        assert!(matches!(
            refused(&f, &opts, 1, MIB, 0, huge),
            FmmError::BadSize { .. }
        ));
        // Contiguous needs KFD 1.16, checked before the node...
        f.kfd_minor = 15;
        let contiguous = NP | MemFlags::CONTIGUOUS;
        assert_eq!(
            refused(&f, &opts, 9, 4096, 0, contiguous),
            FmmError::KfdTooOld { need: 16, have: 15 }
        );
        // ...unless the generation does not know the flag, which it then
        // ignores.
        let opts = FmmOptions {
            rules: FmmRules {
                unknown_flags: MemFlags::CONTIGUOUS,
                ..FmmRules::default()
            },
            ..FmmOptions::primary()
        };
        let p = plan_alloc(&f, &opts, 1, 4096, 0, contiguous).unwrap();
        assert_eq!(p.flags(), NP);
        assert!(!ioc(p.route.unwrap()).contains(AllocMemFlags::CONTIGUOUS));
    }

    #[test]
    fn a_fixed_address_needs_an_address() {
        let nodes = dgpu_system();
        let opts = FmmOptions::primary();
        let p = plan_with(&nodes, &opts, 1, NP);
        assert_eq!(p.fixed_address(Some(0x1000)), Ok(None));
        let p = plan_with(&nodes, &opts, 1, NP | MemFlags::FIXED_ADDRESS);
        assert_eq!(p.fixed_address(Some(0x1000)), Ok(Some(0x1000)));
        for none in [None, Some(0)] {
            assert!(matches!(
                p.fixed_address(none),
                Err(FmmError::InvalidArgument(_))
            ));
        }
    }

    #[test]
    fn host_gtt_is_gtt_through_the_anchor() {
        let nodes = dgpu_system();
        let opts = FmmOptions::primary();
        let f = facts(&nodes);
        let cpu_plan = plan_with(&nodes, &opts, 0, MemFlags::empty());
        let p = plan_host_gtt(&cpu_plan, &f, &opts, 2).unwrap();
        assert_eq!(p.kind(), MemoryKind::System);
        assert!(p.flags().contains(NP | MemFlags::HOST_ACCESS));
        let r = vm(p.route.unwrap());
        assert_eq!((r.gpu_id, r.place, r.node), (GPU2, Place::SvmCoherent, 0));
        assert!(matches!(
            r.backing,
            Backing::Bo {
                cpu: CpuView::Mapped { host_access: true },
                what: "GTT",
                ..
            }
        ));
        // The node must be a CPU, the anchor a GPU, the flags addressable
        // memory.
        let gpu_plan = plan_with(&nodes, &opts, 1, MemFlags::empty());
        assert_eq!(
            plan_host_gtt(&gpu_plan, &f, &opts, 2),
            Err(FmmError::InvalidNode(1))
        );
        assert_eq!(
            plan_host_gtt(&cpu_plan, &f, &opts, 0),
            Err(FmmError::NotAGpuNode(0))
        );
        assert_eq!(
            plan_host_gtt(&cpu_plan, &f, &opts, 7),
            Err(FmmError::InvalidNode(7))
        );
        let only = plan_with(&nodes, &opts, 0, MemFlags::ONLY_ADDRESS);
        assert!(matches!(
            plan_host_gtt(&only, &f, &opts, 1),
            Err(FmmError::ConflictingFlags(_))
        ));
        // On an APU it is plain system memory.
        let apus = [cpu(), apu(9)];
        let fa = facts(&apus);
        let p = plan_alloc(&fa, &opts, 0, MIB, 0, MemFlags::empty()).unwrap();
        let p = plan_host_gtt(&p, &fa, &opts, 1).unwrap();
        assert!(matches!(p.route, Ok(Route::Apu { .. })));
    }
}
