//! Allocating and freeing device, host and address-only memory.

use std::os::fd::AsFd;
use std::sync::Arc;

use kfd_sys::mapping::Mapping;
use kfd_sys::mman::Prot;
use kfd_sys::Errno;

use super::Fmm;
use crate::aperture::Space;
use crate::error::{AddressSpace, FmmError, MemoryKind, Result};
use crate::flags::{hsa_to_ioc, AllocMemFlags, MemFlags};
use crate::lock;
use crate::objects::{ApId, Kind, Lookup, VmObject};

/// Whether the kernel refused an operation with `EPERM` (FREE_MEMORY of
/// the buffer it uses as the event page).
fn is_eperm(e: &FmmError) -> bool {
    matches!(e, FmmError::Ioctl { errno, .. } if *errno == Errno::EPERM)
}

/// The address space of an AQL ring of memory `kind`: twice its size
/// (mapped twice).
fn aql_size(size: u64, kind: MemoryKind) -> Result<u64> {
    size.checked_mul(2).ok_or(FmmError::TooBig { kind })
}

/// An allocation request that passed the checks made before the
/// caller's address is looked at ([`Fmm::plan_alloc`]): the node and its
/// gpu_id, the size, the alignment and the flags as this generation
/// reads them. [`Fmm::alloc_planned`] carries it out without checking
/// them again; a plan belongs to the memory manager that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocPlan {
    node: u32,
    gpu_id: u32,
    size: u64,
    align: u64,
    flags: MemFlags,
    kind: MemoryKind,
}

impl AllocPlan {
    /// The flags as this generation reads them (ignored flags removed).
    pub fn flags(&self) -> MemFlags {
        self.flags
    }

    /// The kind of memory the allocation makes ([`Fmm::alloc_host_gtt`]
    /// always makes system memory, whatever the plan says).
    pub fn kind(&self) -> MemoryKind {
        self.kind
    }
}

impl Fmm {
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
    ///
    /// [`FmmRules::refuse_extended_coherent_mixes`]: crate::FmmRules::refuse_extended_coherent_mixes
    /// [`FmmRules::refuse_coarse_uncached`]: crate::FmmRules::refuse_coarse_uncached
    /// [`FmmRules::unknown_flags`]: crate::FmmRules::unknown_flags
    pub fn alloc_memory_align(
        &self,
        node: u32,
        size: u64,
        align: u64,
        flags: MemFlags,
        address: Option<u64>,
    ) -> Result<u64> {
        let plan = self.plan_alloc(node, size, align, flags)?;
        self.alloc_impl(plan, address, false)
    }

    /// Carries out an allocation [`Fmm::plan_alloc`] checked, as
    /// [`Fmm::alloc_memory_align`] does (the C border checks the caller's
    /// address pointer in between).
    pub fn alloc_planned(&self, plan: AllocPlan, address: Option<u64>) -> Result<u64> {
        self.alloc_impl(plan, address, false)
    }

    /// `hsaKmtAllocMemoryHostGtt`: `size` bytes of system memory on CPU
    /// (NUMA) node `cpu_node`, made as a GTT buffer object through the GPU
    /// of node `anchor_node` (its GPU VM holds the buffer; map it to other
    /// GPUs as any system memory). The memory is always non-paged (a GTT
    /// BO, never a userptr) and mapped for the CPU.
    ///
    /// `cpu_node` must be a CPU node and `anchor_node` a GPU node
    /// ([`FmmError::InvalidNode`] / [`FmmError::NotAGpuNode`]); `flags`
    /// are checked as [`Fmm::alloc_memory`] checks them, and must not ask
    /// for VRAM-only or address-only forms (`Scratch`, `OnlyAddress`,
    /// `NoAddress`, `FixedAddress`: [`FmmError::ConflictingFlags`]). On an
    /// APU (no GTT distinct from system memory) it is plain system memory,
    /// as [`Fmm::alloc_memory`] on the CPU node makes it.
    pub fn alloc_host_gtt(
        &self,
        cpu_node: u32,
        anchor_node: u32,
        size: u64,
        flags: MemFlags,
    ) -> Result<u64> {
        let plan = self.plan_alloc(cpu_node, size, 0, flags)?;
        self.alloc_host_gtt_planned(plan, anchor_node)
    }

    /// [`Fmm::alloc_host_gtt`] of a request [`Fmm::plan_alloc`] checked
    /// (the plan's node is the CPU node).
    pub fn alloc_host_gtt_planned(&self, plan: AllocPlan, anchor_node: u32) -> Result<u64> {
        let AllocPlan {
            node: cpu_node,
            gpu_id: cpu_gpu,
            size,
            flags,
            ..
        } = plan;
        let flags = flags | MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
        if cpu_gpu != 0 {
            return Err(FmmError::InvalidNode(cpu_node));
        }
        let anchor = self.validate_node(anchor_node)?;
        if anchor == 0 {
            return Err(FmmError::NotAGpuNode(anchor_node));
        }
        let refused = MemFlags::SCRATCH
            | MemFlags::ONLY_ADDRESS
            | MemFlags::NO_ADDRESS
            | MemFlags::FIXED_ADDRESS;
        if flags.intersects(refused) {
            return Err(FmmError::ConflictingFlags(
                "host GTT memory is memory with an address of its own",
            ));
        }
        if size > crate::MAX_ALLOC_SIZE {
            return Err(FmmError::TooBig {
                kind: MemoryKind::System,
            });
        }
        self.alloc_host(cpu_node, anchor, None, size, 0, flags, false)
            .map_err(alloc_failed(MemoryKind::System))
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
        let plan = self.plan_alloc(node, size, align, flags)?;
        self.alloc_impl(plan, None, true)
    }

    /// The checks [`Fmm::alloc_memory_align`] makes before it looks at
    /// the address: the flags' kernel version (Contiguous needs KFD 1.16),
    /// the node, the alignment, then the size (non-zero, a multiple of
    /// the flags' page size). The C border runs them before it touches
    /// the caller's address pointer, as the C library does, and hands the
    /// plan to [`Fmm::alloc_planned`] (or [`Fmm::alloc_host_gtt_planned`]).
    pub fn plan_alloc(
        &self,
        node: u32,
        size: u64,
        align: u64,
        mut flags: MemFlags,
    ) -> Result<AllocPlan> {
        let gpu_id = self.check_alloc_node(node, flags)?;
        flags.remove(self.opts.rules.unknown_flags);
        let page = flags.page_size();
        if align != 0 && (align < page || !align.is_power_of_two()) {
            return Err(FmmError::BadAlignment(align));
        }
        if size == 0 || size % page != 0 {
            return Err(FmmError::BadSize { size, page });
        }
        let kind = if flags.contains(MemFlags::SCRATCH) {
            MemoryKind::Scratch
        } else if gpu_id == 0
            || !flags.contains(MemFlags::NON_PAGED)
            || self.opts.zero_fb
            || flags.contains(MemFlags::GTT_ACCESS)
            || (self.opts.rules.only_address_on_host_path && flags.contains(MemFlags::ONLY_ADDRESS))
        {
            MemoryKind::System
        } else {
            MemoryKind::Device
        };
        Ok(AllocPlan {
            node,
            gpu_id,
            size,
            align,
            flags,
            kind,
        })
    }

    fn alloc_impl(&self, plan: AllocPlan, address: Option<u64>, owned: bool) -> Result<u64> {
        let rules = self.opts.rules;
        let AllocPlan {
            node,
            gpu_id,
            size,
            align,
            mut flags,
            kind,
        } = plan;
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
                let gi = self.gpus.index(gpu_id).ok_or(FmmError::NoAddressSpace {
                    aperture: AddressSpace::Scratch,
                })?;
                too_big()?;
                self.alloc_scratch(gi, fixed, size, owned)
                    .map_err(alloc_failed(MemoryKind::Scratch))
            }
            MemoryKind::System => {
                if self.opts.zero_fb && gpu_id != 0 && flags.contains(MemFlags::NON_PAGED) {
                    flags |= MemFlags::COARSE_GRAIN;
                }
                too_big()?;
                self.alloc_host(node, gpu_id, fixed, size, align, flags, owned)
                    .map_err(alloc_failed(MemoryKind::System))
            }
            MemoryKind::Device => {
                if flags.contains(MemFlags::ONLY_ADDRESS) && flags.contains(MemFlags::NO_ADDRESS) {
                    return Err(FmmError::ConflictingFlags("OnlyAddress and NoAddress"));
                }
                let gi = self.gpus.index(gpu_id).ok_or(FmmError::NotAGpuNode(node))?;
                too_big()?;
                let small_bar = self
                    .gpus
                    .nodes()
                    .get(node as usize)
                    .is_some_and(|n| n.small_bar);
                self.alloc_device(gi, fixed, size, align, flags, owned)
                    .map_err(|e| match e {
                        FmmError::Ioctl { errno, .. }
                            if small_bar && flags.contains(MemFlags::HOST_ACCESS) =>
                        {
                            FmmError::VramNotHostVisible { node, errno }
                        }
                        e => alloc_failed(MemoryKind::Device)(e),
                    })
            }
        }
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
        let gpu = self.gpus.get(gi);
        let mut ioc = AllocMemFlags::VRAM | hsa_to_ioc(flags, self.always_executable());
        if flags.contains(MemFlags::HOST_ACCESS) {
            ioc |= AllocMemFlags::PUBLIC;
        }
        let aql = flags.contains(MemFlags::AQL_QUEUE_MEMORY);
        let (mut ap, va_size) = if gpu.svm_needed {
            let va_size = if aql {
                aql_size(size, MemoryKind::Device)?
            } else {
                size
            };
            (ApId::SvmDefault, va_size)
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
        let (space, handle, offset) = self.alloc_bo(gi, ap, fixed, va_size, align, ioc, None)?;
        let addr = space.addr;
        let mut obj = VmObject::new(space, Some(handle), gpu.gpu_id, ap);
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
            .apertures
            .get(ap)
            .ok_or(FmmError::NotSupported("aperture not available"))?;
        let space = aperture.allocate(fixed, size, align)?;
        let addr = space.addr;
        let mut obj = VmObject::new(space, None, self.gpus.get(gi).gpu_id, ap);
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
        if !self.gpus.is_dgpu() {
            if align != 0 {
                return Err(FmmError::ApuSystemMemory("an alignment"));
            }
            return self.alloc_host_cpu(fixed, size, flags, owned);
        }
        let gi = if gpu_id != 0 {
            self.gpus.index(gpu_id)
        } else {
            None
        };
        let gi = match gi {
            Some(gi) => gi,
            None if self.gpus.first().is_some() => 0,
            None => return Err(FmmError::NoGpu),
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
        let va_size = if aql {
            aql_size(size, MemoryKind::System)?
        } else {
            size
        };
        if self.opts.rules.only_address_on_host_path && flags.contains(MemFlags::ONLY_ADDRESS) {
            return self.alloc_va_only(gi, ap, 0, fixed, va_size, align, flags, owned);
        }
        let gpu = self.gpus.get(gi);
        let mut obj;
        if !flags.contains(MemFlags::NON_PAGED) && self.opts.userptr_for_paged_mem {
            // Paged memory: anonymous pages, registered as a userptr BO at
            // the same address.
            let aperture = self
                .apertures
                .get(ap)
                .ok_or(FmmError::NotSupported("no SVM aperture"))?;
            let space = aperture.allocate(fixed, va_size, align)?;
            let addr = space.addr;
            let memory = space
                .map_anonymous(addr, va_size, Prot::READ | Prot::WRITE)
                .map_err(|errno| FmmError::Mmap {
                    what: "system memory",
                    errno,
                })?;
            // Dropping `memory` and `space` undoes the mapping and the
            // reservation if the binding fails.
            self.numa
                .bind(addr, size, node, flags, self.opts.rules.numa_bind_strict)?;
            // As the C library, a failure to keep the memory from a child
            // is not an error of the allocation.
            let _ = memory.dont_fork();
            let (handle, _) = self.create_bo(
                gi,
                ap,
                aperture,
                addr,
                va_size,
                ioc | AllocMemFlags::USERPTR,
                Some(addr),
            )?;
            obj = VmObject::new(space, Some(handle), gpu.gpu_id, ap);
            obj.views.push(Arc::new(memory));
        } else {
            let ioc = ioc | AllocMemFlags::GTT;
            let (space, handle, offset) =
                self.alloc_bo(gi, ap, fixed, va_size, align, ioc, None)?;
            obj = VmObject::new(space, Some(handle), gpu.gpu_id, ap);
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
            return Err(FmmError::ApuSystemMemory("a fixed address"));
        }
        let mut prot = Prot::READ;
        if flags.contains(MemFlags::EXECUTE_ACCESS) {
            prot |= Prot::EXEC;
        }
        if !flags.contains(MemFlags::READ_ONLY) {
            prot |= Prot::WRITE;
        }
        let memory = Mapping::anonymous(size, prot).map_err(|errno| FmmError::Mmap {
            what: "APU system memory",
            errno,
        })?;
        let addr = memory.addr();
        // The mapping owns the address space.
        let mut obj = VmObject::new(Space::borrowed(addr, size), None, 0, ApId::CpuVm);
        obj.mflags = flags;
        obj.owned = owned;
        obj.views.push(Arc::new(memory));
        self.insert(obj);
        Ok(addr)
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
        let taken = self
            .objects
            .with_shard(addr, Lookup::Exact { size: 0 }, |s, start| {
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
            None if self.unknown_is_svm() => Ok(()),
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
            if let Some(st) = lock(&self.gpus.get(gi).scratch).as_mut() {
                st.owned = owned;
            }
            return;
        }
        let _ = self
            .objects
            .with_object(addr, Lookup::Exact { size: 0 }, |o| o.owned = owned);
    }

    /// Frees the BO of an object already removed from its shard; on
    /// failure the object goes back (marked kernel-held if the kernel
    /// refused with `EPERM`).
    fn release_object(&self, mut obj: VmObject) -> Result<()> {
        if let Some(h) = obj.handle {
            if let Err(e) = self.free_bo(h) {
                obj.kernel_held |= is_eperm(&e);
                let still_mapped = matches!(
                    e,
                    FmmError::Ioctl {
                        errno: Errno::EBUSY,
                        ..
                    }
                );
                let start = obj.start;
                self.insert(obj);
                return Err(if still_mapped {
                    FmmError::StillMapped(start)
                } else {
                    e
                });
            }
        }
        // Dropping the object gives back its CPU views and address range.
        drop(obj);
        Ok(())
    }
}

/// A failure of an allocation of memory `kind` as the allocation reports
/// it: a refused kernel request or mapping is a failed allocation of that
/// kind; other causes stay as they are.
fn alloc_failed(kind: MemoryKind) -> impl Fn(FmmError) -> FmmError {
    move |e| match e {
        FmmError::Ioctl { errno, .. } | FmmError::Mmap { errno, .. } => FmmError::AllocFailed {
            device: kind != MemoryKind::System,
            errno,
        },
        e => e,
    }
}
