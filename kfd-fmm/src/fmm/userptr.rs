//! Registering user memory (userptr or SVM) and deregistering it.

use kfd_sys::{kfd, mman};

use super::bo::BoSpec;
use super::{page_align_up, Fmm};
use crate::error::{FmmError, Result};
use crate::flags::{ioc_to_hsa, AllocMemFlags, MemFlags};
use crate::objects::{ApId, Kind, Lookup, ObjectDesc, VmObject};
use crate::PAGE_SIZE;

impl Fmm {
    /// `hsaKmtRegisterMemory`: makes user memory GPU-accessible (a userptr
    /// BO); a no-op on APUs.
    pub fn register_memory(&self, addr: u64, size: u64) -> Result<()> {
        if !self.gpus.is_dgpu() {
            return Ok(());
        }
        self.register(addr, size, Vec::new(), true, false)
    }

    /// `hsaKmtRegisterMemoryToNodes`: as [`Fmm::register_memory`], limited
    /// to the GPUs of `nodes` (the default mapping set of the memory).
    pub fn register_memory_to_nodes(&self, addr: u64, size: u64, nodes: &[u32]) -> Result<()> {
        if !self.gpus.is_dgpu() {
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
        if !self.gpus.is_dgpu() {
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
        let existing = self.objects.with_object(addr, Lookup::Exact { size }, |o| {
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
            && self.unknown_is_svm()
            && self.register_svm(addr, size, coarse, ext).is_ok()
        {
            return Ok(());
        }
        let obj = self.create_userptr(addr, size, ids, coarse, ext)?;
        let answer = self.describe(&obj);
        let mut s = self.objects.shard(self.gpus.shard_of(obj.gpu_id));
        if let Some(start) = s.find(addr, Lookup::Exact { size }) {
            // Another thread registered the same range meanwhile.
            if let Some(Kind::Userptr { count, .. }) = s.get_mut(start).map(|o| &mut o.kind) {
                *count += 1;
            }
            drop(s);
            self.destroy(obj);
            return Ok(());
        }
        s.insert_answered(obj, &answer);
        Ok(())
    }

    /// Registers user memory as an SVM range: `AMDKFD_IOC_SVM` SET_ATTR on
    /// the page-aligned range, setting or clearing COHERENT (by
    /// `coarse`) and EXT_COHERENT (by `ext`). No memory object is made.
    fn register_svm(&self, addr: u64, size: u64, coarse: bool, ext: bool) -> Result<()> {
        use crate::flags::svm_attr::{CLR_FLAGS, SET_FLAGS};
        if self.gpus.first().is_none() {
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

    /// A userptr object of `[addr, addr + size)` registered to `ids`,
    /// coherent unless `coarse`, extended coherent with `ext`; not yet in
    /// the index.
    fn create_userptr(
        &self,
        addr: u64,
        size: u64,
        ids: Vec<u32>,
        coarse: bool,
        ext: bool,
    ) -> Result<VmObject> {
        let Some(gpu) = self.gpus.first() else {
            return Err(FmmError::Failed("no GPU to register memory with"));
        };
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
        if self.opts.check_userptr && aligned_size != 0 && !mman::all_mapped(aligned, aligned_size)
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
            .apertures
            .get(ApId::SvmDefault)
            .ok_or(FmmError::NotSupported("aperture not available"))?;
        // An empty range (5.2.3 only) still takes a page of address space.
        let va_size = aligned_size.max(PAGE_SIZE);
        let space = aperture.allocate(None, va_size, 0)?;
        let bo = BoSpec {
            gi: 0,
            ap: ApId::SvmDefault,
            size: aligned_size,
            ioc,
            userptr: Some(aligned),
        };
        let created = self.create_bo(bo, aperture, space.addr);
        // On failure the range goes back with `space`.
        let handle = match created {
            Ok((h, _)) if aligned_size != 0 => h,
            r => {
                if let Ok((h, _)) = r {
                    // A kernel that took an empty range: nothing to keep.
                    let _ = self.free_bo(h);
                }
                return Err(r
                    .err()
                    .unwrap_or(FmmError::Failed("empty user memory range")));
            }
        };
        let desc = ObjectDesc {
            handle: Some(handle),
            gpu_id: gpu.gpu_id,
            aperture: ApId::SvmDefault,
            flags: ioc_to_hsa(ioc),
            node: gpu.node_id,
            kind: Kind::Userptr {
                addr,
                size,
                count: 1,
            },
            registered: ids,
            owned: false,
        };
        Ok(VmObject::new(space, desc))
    }

    /// `hsaKmtDeregisterMemory`: drops a registration. Userptrs, imported
    /// graphics and shared buffers are released (when their last
    /// registration goes); allocated memory loses its node list. Memory a
    /// [`crate::Buffer`] owns is refused ([`FmmError::OwnedByHandle`]).
    pub fn deregister_memory(&self, addr: u64) -> Result<()> {
        let r = self
            .objects
            .with_shard(addr, Lookup::Exact { size: 0 }, |s, start| {
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
                    Kind::Userptr { .. } | Kind::Graphics { .. } | Kind::Shared => {
                        Ok(s.remove(start))
                    }
                    _ if o.registered.is_empty() => Err(FmmError::NotRegistered(addr)),
                    _ => {
                        o.registered.clear();
                        Ok(None)
                    }
                }
            });
        match r {
            None if self.unknown_is_apu_memory() || self.unknown_is_svm() => Ok(()),
            None => Err(FmmError::NotRegistered(addr)),
            Some(Err(e)) => Err(e),
            Some(Ok(None)) => Ok(()),
            Some(Ok(Some(obj))) => {
                self.destroy(obj);
                Ok(())
            }
        }
    }
}
