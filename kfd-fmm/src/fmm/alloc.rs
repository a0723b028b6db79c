//! Allocating and freeing device, host and address-only memory.

use std::os::fd::AsFd;
use std::sync::Arc;

use kfd_sys::mapping::Mapping;
use kfd_sys::mman::Prot;
use kfd_sys::Errno;

use super::bo::{map_bo_cpu, BoSpec, FileView};
use super::plan::{self, AllocPlan, Backing, CpuView, Facts, Place, Route, VmAlloc};
use super::Fmm;
use crate::aperture::Space;
use crate::error::{FmmError, MemoryKind, Result};
use crate::flags::MemFlags;
use crate::lock;
use crate::objects::{ApId, Kind, Lookup, ObjectDesc, VmObject};

/// Whether the kernel refused an operation with `EPERM` (FREE_MEMORY of
/// the buffer it uses as the event page).
fn is_eperm(e: &FmmError) -> bool {
    matches!(e, FmmError::Ioctl { errno, .. } if *errno == Errno::EPERM)
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
        self.alloc_impl(&plan, address, false)
    }

    /// Carries out an allocation [`Fmm::plan_alloc`] checked, as
    /// [`Fmm::alloc_memory_align`] does (the C border checks the caller's
    /// address pointer in between).
    pub fn alloc_planned(&self, plan: &AllocPlan, address: Option<u64>) -> Result<u64> {
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
        self.alloc_host_gtt_planned(&plan, anchor_node)
    }

    /// [`Fmm::alloc_host_gtt`] of a request [`Fmm::plan_alloc`] checked
    /// (the plan's node is the CPU node).
    pub fn alloc_host_gtt_planned(&self, plan: &AllocPlan, anchor_node: u32) -> Result<u64> {
        let plan = plan::plan_host_gtt(plan, &self.facts(), &self.opts, anchor_node)?;
        self.alloc_impl(&plan, None, false)
    }

    /// What the allocation planner knows of this manager's machine.
    fn facts(&self) -> Facts<'_> {
        Facts {
            nodes: self.gpus.nodes(),
            kfd_minor: self.version.1,
            is_dgpu: self.gpus.is_dgpu(),
        }
    }

    /// The checks an allocation makes before it looks at its arguments:
    /// KFD 1.16 for [`MemFlags::CONTIGUOUS`] (unless the generation
    /// ignores that flag), then the node. Returns the node's gpu_id (0 for
    /// a CPU node). `hsaKmtAllocMemory` runs these before refusing a NULL
    /// output pointer, as the C library does.
    pub fn check_alloc_node(&self, node: u32, flags: MemFlags) -> Result<u32> {
        plan::check_node(&self.facts(), &self.opts, node, flags).map(|n| n.gpu_id)
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
        self.alloc_impl(&plan, None, true)
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
        flags: MemFlags,
    ) -> Result<AllocPlan> {
        plan::plan_alloc(&self.facts(), &self.opts, node, size, align, flags)
    }

    /// Carries out `plan` at the caller's `address` (used with
    /// FixedAddress), the object owned by an RAII handle if `owned`: the
    /// checks the plan kept for after the address, then what it decided.
    /// A refused kernel request or mapping is a failed allocation of the
    /// plan's kind.
    fn alloc_impl(&self, plan: &AllocPlan, address: Option<u64>, owned: bool) -> Result<u64> {
        let fixed = plan.fixed_address(address)?;
        let failed = alloc_failed(plan.kind);
        match plan.route.clone()? {
            Route::Scratch { gpu_id } => {
                let gi = self.gpu_of(gpu_id, plan.node)?;
                self.alloc_scratch(gi, fixed, plan.size, owned)
                    .map_err(failed)
            }
            Route::Apu { prot, flags } => self
                .alloc_host_cpu(plan.size, prot, flags, owned)
                .map_err(failed),
            Route::Vm(vm) => self.alloc_vm(&vm, plan, fixed, owned).map_err(|e| match e {
                FmmError::Ioctl { errno, .. } if vm.small_bar => FmmError::VramNotHostVisible {
                    node: plan.node,
                    errno,
                },
                e => failed(e),
            }),
        }
    }

    /// The index of the GPU with `gpu_id`, which a plan for `node` named.
    fn gpu_of(&self, gpu_id: u32, node: u32) -> Result<usize> {
        self.gpus.index(gpu_id).ok_or(FmmError::NotAGpuNode(node))
    }

    /// Memory in an aperture, made through a GPU, as `vm` says: address
    /// space only, a userptr BO over anonymous pages or a BO (mapped for
    /// the CPU or not).
    fn alloc_vm(
        &self,
        vm: &VmAlloc,
        plan: &AllocPlan,
        fixed: Option<u64>,
        owned: bool,
    ) -> Result<u64> {
        let gi = self.gpu_of(vm.gpu_id, plan.node)?;
        let gpu = self.gpus.get(gi);
        let ap = match vm.place {
            Place::SvmDefault => ApId::SvmDefault,
            Place::SvmCoherent => ApId::SvmCoherent,
            Place::Gpuvm => ApId::Gpuvm(gi),
            Place::MemHandle => ApId::MemHandle,
        };
        let (size, va_size, align) = (plan.size, vm.va_size, plan.align);
        let desc = |handle, kind| ObjectDesc {
            handle,
            gpu_id: gpu.gpu_id,
            aperture: ap,
            flags: vm.flags,
            node: vm.node,
            kind,
            registered: Vec::new(),
            owned,
        };
        let obj = match vm.backing {
            Backing::AddressOnly => {
                let aperture = self
                    .apertures
                    .get(ap)
                    .ok_or(FmmError::NotSupported("aperture not available"))?;
                let space = aperture.allocate(fixed, va_size, align)?;
                VmObject::new(space, desc(None, Kind::ReservedAddr))
            }
            Backing::Userptr { ioc, numa } => {
                // Paged memory: anonymous pages, registered as a userptr
                // BO at the same address.
                let aperture = self
                    .apertures
                    .get(ap)
                    .ok_or(FmmError::NotSupported("no SVM aperture"))?;
                let mut space = aperture.allocate(fixed, va_size, align)?;
                let addr = space.addr;
                let memory = space
                    .map_anonymous_whole(Prot::READ | Prot::WRITE)
                    .map_err(|errno| FmmError::Mmap {
                        what: "system memory",
                        errno,
                    })?;
                // Dropping `memory` and `space` undoes the mapping and the
                // reservation if the binding fails.
                self.numa.bind(addr, size, numa)?;
                // As the C library, a failure to keep the memory from a
                // child is not an error of the allocation.
                let _ = memory.dont_fork();
                let bo = BoSpec {
                    gi,
                    ap,
                    size: va_size,
                    ioc,
                    userptr: Some(addr),
                };
                let (handle, _) = self.create_bo(bo, aperture, addr)?;
                let mut obj = VmObject::new(space, desc(Some(handle), Kind::Allocated));
                obj.views.push(Arc::new(memory));
                obj
            }
            Backing::Bo { ioc, cpu, what } => {
                let bo = BoSpec {
                    gi,
                    ap,
                    size: va_size,
                    ioc,
                    userptr: None,
                };
                let (space, handle, offset) = self.alloc_bo(bo, fixed, align)?;
                let mut obj = VmObject::new(space, desc(Some(handle), Kind::Allocated));
                if let CpuView::Mapped { host_access } = cpu {
                    let view = FileView {
                        fd: gpu.render.as_fd(),
                        offset,
                        len: size,
                        host_access,
                        what,
                    };
                    if let Err(e) = map_bo_cpu(&mut obj, view) {
                        self.destroy(obj);
                        return Err(e);
                    }
                }
                obj
            }
        };
        let addr = obj.start;
        self.insert(obj);
        Ok(addr)
    }

    /// System memory on an APU: plain anonymous memory, no GPU object.
    fn alloc_host_cpu(&self, size: u64, prot: Prot, flags: MemFlags, owned: bool) -> Result<u64> {
        let memory = Mapping::anonymous(size, prot).map_err(|errno| FmmError::Mmap {
            what: "APU system memory",
            errno,
        })?;
        let addr = memory.addr();
        // The mapping owns the address space.
        let desc = ObjectDesc {
            handle: None,
            gpu_id: 0,
            aperture: ApId::CpuVm,
            flags,
            node: 0,
            kind: Kind::Allocated,
            registered: Vec::new(),
            owned,
        };
        let mut obj = VmObject::new(Space::borrowed(addr, size), desc);
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
        // The object taken out lands here, moved once (see `Shard::remove`).
        let mut taken = None;
        let found = self
            .objects
            .with_shard(addr, Lookup::Exact { size: 0 }, |s, slot| {
                let o = s.get(slot).expect("found");
                if o.owned && !as_owner {
                    return Err(FmmError::OwnedByHandle(addr));
                }
                if matches!(o.kind, Kind::Userptr { count, .. } if count > 1) {
                    if let Some(Kind::Userptr { count, .. }) = s.get_mut(slot).map(|o| &mut o.kind)
                    {
                        *count -= 1;
                    }
                    return Ok(());
                }
                taken = s.remove(slot);
                Ok(())
            });
        match found {
            None if self.unknown_is_svm() => Ok(()),
            None => Err(FmmError::NotRegistered(addr)),
            Some(Err(e)) => Err(e),
            Some(Ok(())) => self.release_object(&mut taken),
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

    /// Frees the BO of the object `taken` from its shard, if any; on
    /// failure the object goes back (marked kernel-held if the kernel
    /// refused with `EPERM`). Otherwise the caller drops it, in place:
    /// its CPU views and address range go.
    fn release_object(&self, taken: &mut Option<VmObject>) -> Result<()> {
        let Some(obj) = taken else {
            return Ok(());
        };
        let Some(h) = obj.handle else {
            return Ok(());
        };
        let Err(e) = self.free_bo(h) else {
            return Ok(());
        };
        obj.kernel_held |= is_eperm(&e);
        let still_mapped = matches!(
            e,
            FmmError::Ioctl {
                errno: Errno::EBUSY,
                ..
            }
        );
        let start = obj.start;
        if let Some(obj) = taken.take() {
            self.insert(obj);
        }
        Err(if still_mapped {
            FmmError::StillMapped(start)
        } else {
            e
        })
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
