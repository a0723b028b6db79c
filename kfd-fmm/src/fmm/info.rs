//! Queries: the manager's nodes and apertures, pointer info, available
//! memory, and the memory policy.

use std::sync::Arc;

use kfd_sys::kfd;
use kfd_sys::DeviceFile;
use kfd_topology::GfxVersion;

use super::index::Quick;
use super::{
    Fmm, FmmOptions, NodeApertures, NodeDesc, PointerInfo, PointerNodes, PointerType, Range,
};
use crate::error::{FmmError, Result};
use crate::lock;
use crate::objects::{Kind, Lookup, Span, VmObject};
use crate::PAGE_SIZE;

/// Kaveri, the one GPU whose memory policy can be set.
const KAVERI: GfxVersion = GfxVersion::new(7, 0, 0);

impl Fmm {
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
        self.gpus.nodes()
    }

    /// The gpu_ids of all GPUs with apertures, in kernel order (the default
    /// mapping set).
    pub fn gpu_ids(&self) -> &[u32] {
        self.gpus.order()
    }

    /// True when the system has a discrete GPU (then everything is
    /// GPUVM-managed; APUs use plain CPU memory for system allocations).
    pub fn is_dgpu(&self) -> bool {
        self.gpus.is_dgpu()
    }

    /// The options in use.
    pub fn options(&self) -> &FmmOptions {
        &self.opts
    }

    /// Non-fatal problems met so far (e.g. the MMIO page could not be mapped).
    pub fn warnings(&self) -> Vec<String> {
        self.notes.warnings()
    }

    /// The render-node file of the GPU with `gpu_id`.
    pub fn render_node(&self, gpu_id: u32) -> Option<&Arc<DeviceFile>> {
        self.gpus.index(gpu_id).map(|gi| &self.gpus.get(gi).render)
    }

    /// The SVM range (start of the coherent aperture to the end of the
    /// default one), if any GPU uses canonical addresses.
    pub fn svm_aperture(&self) -> Option<Range> {
        self.apertures.svm_range()
    }

    /// The apertures of a GPU node.
    pub fn node_apertures(&self, node: u32) -> Result<NodeApertures> {
        let gpu_id = self.validate_node(node)?;
        let gi = self.gpus.index(gpu_id).ok_or(FmmError::NotAGpuNode(node))?;
        let g = self.gpus.get(gi);
        let aps = self.apertures.gpu(gi);
        Ok(NodeApertures {
            gpu_id,
            lds: aps.lds,
            scratch: aps.scratch,
            gpuvm: aps.gpuvm.as_ref().map(|a| Range {
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
        self.objects.len()
            + self
                .gpus
                .all()
                .iter()
                .map(|g| lock(&g.scratch).as_ref().map_or(0, |s| s.objs.len()))
                .sum::<usize>()
    }

    /// `hsaKmtQueryPointerInfo`: what `addr` (anywhere inside an object)
    /// points into, without the node lists ([`Fmm::pointer_nodes`]).
    /// Allocates nothing; one shard lock. The answer is kept with the
    /// object's index entry until the object changes, and the last one of
    /// each shard is read without the lock, so a repeated query of an
    /// unchanged object is a few loads however many objects live.
    #[inline(always)]
    pub fn pointer_info(&self, addr: u64) -> Result<PointerInfo> {
        // An unchanged shard's last answer, if it was to this address
        // (the same buffer queried again), or no shard near `addr`:
        // without the lock, inlined into the caller.
        match self.objects.quick(addr, |span| span.last.get(addr)) {
            Quick::Answer(info) => Ok(info),
            Quick::NoObject => Err(FmmError::UnknownPointer(addr)),
            Quick::Locked => self.pointer_info_locked(addr),
        }
    }

    /// [`Fmm::pointer_info`] through the shards' locks (out of line).
    #[inline(never)]
    fn pointer_info_locked(&self, addr: u64) -> Result<PointerInfo> {
        let quick = |span: &Span| span.last.get(addr).map(Some);
        self.objects
            .with_shard_or(addr, Lookup::Containing, quick, |s, slot| {
                s.answer_for(addr, slot, |o| self.describe(o))
            })
            .flatten()
            .ok_or(FmmError::UnknownPointer(addr))
    }

    /// [`Fmm::pointer_info`] with the node lists, both from one look at
    /// the object (under its shard's lock).
    pub fn pointer_nodes(&self, addr: u64) -> Result<PointerNodes> {
        self.objects
            .with_shard(addr, Lookup::Containing, |s, slot| {
                let info = s.answer(slot, |o| self.describe(o))?;
                let o = s.get(slot)?;
                let nodes = |ids: &[u32]| ids.iter().map(|&g| self.gpus.node_of(g)).collect();
                Some(PointerNodes {
                    info,
                    registered: nodes(&o.registered),
                    mapped: nodes(&o.mapped),
                })
            })
            .flatten()
            .ok_or(FmmError::UnknownPointer(addr))
    }

    /// The pointer info of `o`, as a new generation of it.
    pub(super) fn describe(&self, o: &VmObject) -> PointerInfo {
        let kind = match o.kind {
            Kind::Shared => PointerType::RegisteredShared,
            Kind::Graphics { .. } => PointerType::RegisteredGraphics,
            Kind::Userptr { .. } => PointerType::RegisteredUser,
            Kind::ReservedAddr => PointerType::ReservedAddr,
            Kind::Allocated => PointerType::Allocated,
        };
        let mut info = PointerInfo {
            kind,
            node: o.node_id,
            mem_flags: o.mflags,
            cpu_address: 0,
            gpu_address: o.start,
            size: o.size,
            user_data: o.user_data,
            // Node lists come from the C API's 32-bit counts (and GPUs).
            registered_count: o.registered.len() as u32,
            mapped_count: o.mapped.len() as u32,
            object: o.start,
            // Only unique, not ordered with anything.
            generation: self.objects.next_generation(),
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
        self.objects
            .with_object(addr, Lookup::Exact { size: 0 }, |o| {
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
        self.objects
            .with_object(addr, Lookup::Exact { size: 0 }, |o| {
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
        self.objects
            .with_object(addr, Lookup::Exact { size: 0 }, |o| o.user_data = user_data)
            .ok_or(FmmError::UnknownPointer(addr))
    }

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
            .map_err(FmmError::ioctl(kfd::AMDKFD_IOC_AVAILABLE_MEMORY.info()))?;
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
        let gfx = self.gpus.nodes()[node as usize].gfx;
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
            .map_err(FmmError::ioctl(kfd::AMDKFD_IOC_SET_MEMORY_POLICY.info()))
    }
}
