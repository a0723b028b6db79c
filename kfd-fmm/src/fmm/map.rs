//! Mapping memory to GPUs and unmapping it.

use kfd_sys::kfd;

use super::Fmm;
use crate::error::{FmmError, Result};
use crate::flags::MemMapFlags;
use crate::objects::{ApId, GpuIds, Lookup, VmObject};
use crate::va::checked_align_up;
use crate::PAGE_SIZE;

impl Fmm {
    /// An address no object covers is SVM memory (the C library's rule,
    /// see [`crate::FmmOptions::accept_unknown_addresses`]).
    pub(super) fn unknown_is_svm(&self) -> bool {
        self.opts.accept_unknown_addresses && self.opts.svm_api_enabled
    }

    /// An address no object covers is APU system memory the GPU reaches
    /// without a mapping (the C library's rule).
    pub(super) fn unknown_is_apu_memory(&self) -> bool {
        self.opts.accept_unknown_addresses && !self.gpus.is_dgpu()
    }

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
        let r = self
            .objects
            .with_object(addr, Lookup::Exact { size }, |o| self.map_object(o, addr));
        match r {
            Some(r) => r,
            None if self.unknown_is_svm() && self.gpus.is_dgpu() => {
                self.map_svm_range(addr, size, self.gpus.order())
            }
            None if self.unknown_is_apu_memory() => Ok(0),
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
            self.gpus.order()
        } else {
            &o.registered
        }
    }

    /// First mapping of an object: onto the GPUs it is registered to, else
    /// (see [`FmmRules::default_map_all_gpus`]) onto the usable peers of
    /// the GPU node it belongs to, or every GPU.
    ///
    /// [`FmmRules::default_map_all_gpus`]: crate::FmmRules::default_map_all_gpus
    fn map_to_allowed(&self, o: &mut VmObject) -> Result<()> {
        let own_gpu = self.gpus.of_node(o.node_id);
        let targets = match own_gpu {
            Some(gi)
                if o.registered.is_empty()
                    && o.userptr().is_none()
                    && !self.opts.rules.default_map_all_gpus =>
            {
                self.gpus.usable_peers(gi)
            }
            _ => GpuIds::from_slice(self.allowed_gpus(o)),
        };
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
        let ap = self.apertures.get(o.aperture).expect("object aperture");
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
        if !self.gpus.is_dgpu() && nodes.len() == 1 {
            return self.map_to_gpu(addr, size).map(Some);
        }
        let ids = self.gpu_ids_for_nodes(nodes)?;
        self.objects
            .with_object(addr, Lookup::Exact { size }, |o| {
                if self.opts.rules.map_nodes_refuses_unbacked_first {
                    // Address space without memory, and memory without address
                    // space (NoAddress: for the GEM API), before the aperture
                    // check.
                    let va_only = o.handle.is_none() && o.userptr().is_none();
                    if va_only || o.aperture == ApId::MemHandle {
                        return Err(FmmError::NotMappable(addr));
                    }
                }
                let cpu_accessible = self
                    .apertures
                    .get(o.aperture)
                    .is_some_and(|a| a.cpu_accessible);
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
                if self.unknown_is_svm() {
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
        self.objects
            .with_object(addr, Lookup::Exact { size: 0 }, |o| {
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
                if self.unknown_is_apu_memory()
                    || (self.unknown_is_svm() && self.opts.rules.unmap_unknown_as_svm)
                {
                    Ok(())
                } else {
                    Err(FmmError::UnknownPointer(addr))
                },
            )
    }
}
