//! SVM range attributes, aligned anonymous mappings and XNACK mode.

use std::sync::Arc;

use kfd_sys::mapping::Mapping;
use kfd_sys::mman::Prot;
use kfd_sys::{kfd, memory, DeviceFile, Errno};
use kfd_topology::Topology;

use super::Fmm;
use crate::error::{FmmError, MemoryKind, Result};
use crate::flags::MemFlags;
use crate::objects::{ApId, Lookup};
use crate::PAGE_SIZE;

impl Fmm {
    /// The checks of [`Fmm::svm_set_attr`] and [`Fmm::svm_get_attr`]
    /// that come before their attributes are looked at: KFD 1.5, a
    /// non-empty range with a page-aligned start and size.
    pub fn check_svm_range(&self, addr: u64, size: u64) -> Result<()> {
        self.check_minor(5)?;
        check_svm_range(addr, size)
    }

    /// `hsaKmtSVMSetAttr`: sets attributes of an SVM range. Location and
    /// access attributes take node ids, translated to gpu_ids with this
    /// manager's node table (see [`svm_set_attr`] for the C library's
    /// form, which translates them with the topology snapshot).
    pub fn svm_set_attr(&self, addr: u64, size: u64, attrs: &[crate::SvmAttr]) -> Result<()> {
        self.check_svm_range(addr, size)?;
        let mut raw = set_request(attrs, |n| self.validate_node(n))?;
        self.svm_ioctl(kfd::KFD_IOCTL_SVM_OP_SET_ATTR, addr, size, &mut raw)
    }

    /// Maps `size` bytes of anonymous, private, read-write memory aligned
    /// to `align` (a power of two of at least a page) that a forked child
    /// does not inherit: the memory the newest C library registers with
    /// [`Fmm::svm_set_attr`] for a queue's context save/restore area
    /// ([`Fmm::alloc_svm_area`], whose [`crate::SvmArea`] unmaps it). It
    /// is not a memory object of this manager.
    pub(crate) fn map_anonymous_aligned(&self, size: u64, align: u64) -> Result<Mapping> {
        if size == 0 || size % PAGE_SIZE != 0 {
            return Err(FmmError::BadSize {
                size,
                page: PAGE_SIZE,
            });
        }
        if align < PAGE_SIZE || !align.is_power_of_two() {
            return Err(FmmError::BadAlignment(align));
        }
        if size
            .checked_add(align)
            .map_or(true, |span| span > crate::MAX_ALLOC_SIZE)
        {
            return Err(FmmError::TooBig {
                kind: MemoryKind::System,
            });
        }
        Mapping::anonymous_aligned(size, align, Prot::READ | Prot::WRITE).map_err(|errno| {
            FmmError::Mmap {
                what: "anonymous memory",
                errno,
            }
        })
    }

    /// `hsaKmtSVMGetAttr`: reads attributes of an SVM range into `attrs`
    /// (whose types say what to read; access attributes name the node to
    /// query). Locations come back as node ids (`None`/`INVALID_NODEID`
    /// for undefined, 0 for system memory), with this manager's node
    /// table (see [`svm_get_attr`] for the C library's form).
    pub fn svm_get_attr(&self, addr: u64, size: u64, attrs: &mut [crate::SvmAttr]) -> Result<()> {
        self.check_svm_range(addr, size)?;
        let mut raw = get_request(attrs, |n| self.validate_node(n))?;
        self.svm_ioctl(kfd::KFD_IOCTL_SVM_OP_GET_ATTR, addr, size, &mut raw)?;
        get_answer(attrs, &raw, |g| self.gpus.node_with_gpu(g))
    }

    pub(super) fn svm_ioctl(
        &self,
        op: u32,
        addr: u64,
        size: u64,
        attrs: &mut [(u32, u32)],
    ) -> Result<()> {
        svm_request(&self.kfd, op, addr, size, attrs)
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
                request: kfd::AMDKFD_IOC_SET_XNACK_MODE.info(),
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

    /// The CPU view of the object starting at `addr` when the CPU can
    /// read it, and whether it may write it (used by [`crate::Buffer`]).
    pub(crate) fn cpu_access(&self, addr: u64) -> (Option<Arc<Mapping>>, bool) {
        self.objects
            .with_object(addr, Lookup::Exact { size: 0 }, |o| {
                let readable = o.cpu_mapped()
                    && (o.mflags.contains(MemFlags::HOST_ACCESS)
                        || o.aperture == ApId::CpuVm
                        || (o.userptr().is_none() && !o.mflags.contains(MemFlags::NON_PAGED)));
                // Only APU system memory is mapped read-only (ReadOnly flag);
                // every other CPU view is read-write.
                let writable = readable
                    && !(o.aperture == ApId::CpuVm && o.mflags.contains(MemFlags::READ_ONLY));
                let view = o.views.first().filter(|_| readable).cloned();
                (view, writable)
            })
            .unwrap_or((None, false))
    }
}

/// The range checks of both SVM calls, after the KFD version: a
/// non-empty range with a page-aligned start and size.
pub fn check_svm_range(addr: u64, size: u64) -> Result<()> {
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

/// The gpu_id of node `node` in `topology`, the C library's
/// `hsakmt_validate_nodeid`: without a snapshot, or past its last node,
/// an invalid node.
fn snapshot_gpu_id(topology: Option<&Topology>, node: u32) -> Result<u32> {
    topology
        .and_then(|t| t.node(node))
        .map(|n| n.gpu_id)
        .ok_or(FmmError::InvalidNode(node))
}

/// `hsaKmtSVMSetAttr` as the C library issues it: the range checks (the
/// caller checked the KFD version), then each location or access
/// attribute translated from a node id with the topology snapshot
/// (`None`: none taken, or released: such an attribute is an invalid
/// node), then one `AMDKFD_IOC_SVM` request on `kfd`. Attributes without
/// a node (flags, granularity) need neither a snapshot nor a memory
/// manager, so they reach the kernel before `AcquireSystemProperties`
/// as they do in the C library.
pub fn svm_set_attr(
    kfd: &DeviceFile,
    topology: Option<&Topology>,
    addr: u64,
    size: u64,
    attrs: &[crate::SvmAttr],
) -> Result<()> {
    check_svm_range(addr, size)?;
    let mut raw = set_request(attrs, |n| snapshot_gpu_id(topology, n))?;
    svm_request(kfd, kfd::KFD_IOCTL_SVM_OP_SET_ATTR, addr, size, &mut raw)
}

/// `hsaKmtSVMGetAttr` as the C library issues it (see [`svm_set_attr`]):
/// access attributes name the node to query, translated with the
/// snapshot; locations come back as node ids of the snapshot (a gpu_id it
/// does not hold, or one returned without a snapshot, where the C
/// library dereferences its missing node table: an invalid node).
pub fn svm_get_attr(
    kfd: &DeviceFile,
    topology: Option<&Topology>,
    addr: u64,
    size: u64,
    attrs: &mut [crate::SvmAttr],
) -> Result<()> {
    check_svm_range(addr, size)?;
    let mut raw = get_request(attrs, |n| snapshot_gpu_id(topology, n))?;
    svm_request(kfd, kfd::KFD_IOCTL_SVM_OP_GET_ATTR, addr, size, &mut raw)?;
    get_answer(attrs, &raw, |g| {
        topology?
            .nodes
            .iter()
            .position(|n| n.gpu_id == g)
            .map(|i| i as u32)
    })
}

/// What the kernel's SVM manager holds for the page at `addr`, asked the
/// way the C library (6.2 and later) asks when GPU `gpu_id` faulted there
/// and the address belongs to no buffer it knows: the preferred and
/// prefetch locations, `gpu_id`'s access and the flags set, in that
/// order. `addr` is passed as the kernel reported it, unchecked (the
/// kernel judges it: an address outside every SVM range is `EFAULT`);
/// locations come back as node ids of `topology`.
pub fn svm_fault_page(
    kfd: &DeviceFile,
    topology: Option<&Topology>,
    addr: u64,
    gpu_id: u32,
) -> Result<[crate::SvmAttr; 4]> {
    use crate::flags::svm_attr::*;
    let mut raw = [
        (PREFERRED_LOC, 0),
        (PREFETCH_LOC, 0),
        (ACCESS, gpu_id),
        (SET_FLAGS, 0),
    ];
    svm_request(
        kfd,
        kfd::KFD_IOCTL_SVM_OP_GET_ATTR,
        addr,
        PAGE_SIZE,
        &mut raw,
    )?;
    let mut attrs = [crate::SvmAttr::Granularity(0); 4];
    get_answer(&mut attrs, &raw, |g| {
        topology?
            .nodes
            .iter()
            .position(|n| n.gpu_id == g)
            .map(|i| i as u32)
    })?;
    Ok(attrs)
}

/// The raw attributes of a SET_ATTR request, in order: location and
/// access attributes translated with `gpu_id_of` (a preferred location
/// of `INVALID_NODEID` is "undefined"; an access attribute needs a GPU).
fn set_request(
    attrs: &[crate::SvmAttr],
    gpu_id_of: impl Fn(u32) -> Result<u32>,
) -> Result<Vec<(u32, u32)>> {
    use crate::flags::svm_attr::*;
    attrs
        .iter()
        .map(|a| {
            let (t, v) = a.to_raw();
            let v = match t {
                PREFERRED_LOC if v == crate::INVALID_NODEID => {
                    kfd::KFD_IOCTL_SVM_LOCATION_UNDEFINED
                }
                PREFERRED_LOC | PREFETCH_LOC | ACCESS | ACCESS_IN_PLACE | NO_ACCESS => {
                    let g = gpu_id_of(v)?;
                    if g == 0 && t != PREFERRED_LOC && t != PREFETCH_LOC {
                        return Err(FmmError::NotAGpuNode(v));
                    }
                    g
                }
                _ => v,
            };
            Ok((t, v))
        })
        .collect()
}

/// The raw attributes of a GET_ATTR request: access attributes name a
/// GPU, translated with `gpu_id_of`.
fn get_request(
    attrs: &[crate::SvmAttr],
    gpu_id_of: impl Fn(u32) -> Result<u32>,
) -> Result<Vec<(u32, u32)>> {
    use crate::flags::svm_attr::*;
    attrs
        .iter()
        .map(|a| {
            let (t, v) = a.to_raw();
            let v = match t {
                ACCESS | ACCESS_IN_PLACE | NO_ACCESS => {
                    let g = gpu_id_of(v)?;
                    if g == 0 {
                        return Err(FmmError::NotAGpuNode(v));
                    }
                    g
                }
                _ => v,
            };
            Ok((t, v))
        })
        .collect()
}

/// Writes the kernel's GET_ATTR answer `raw` into `attrs`, locations as
/// node ids (`node_of` a gpu_id's node; an unknown one is an invalid
/// node, the C library's `hsakmt_gpuid_to_nodeid`).
fn get_answer(
    attrs: &mut [crate::SvmAttr],
    raw: &[(u32, u32)],
    node_of: impl Fn(u32) -> Option<u32>,
) -> Result<()> {
    use crate::flags::svm_attr::*;
    for (a, &(t, v)) in attrs.iter_mut().zip(raw) {
        let v = match t {
            PREFERRED_LOC | PREFETCH_LOC | ACCESS | ACCESS_IN_PLACE | NO_ACCESS => match v {
                kfd::KFD_IOCTL_SVM_LOCATION_SYSMEM => 0,
                kfd::KFD_IOCTL_SVM_LOCATION_UNDEFINED => crate::INVALID_NODEID,
                g => node_of(g).ok_or(FmmError::InvalidNode(g))?,
            },
            _ => v,
        };
        // The kernel reports access per GPU with the type telling which
        // of the three applies.
        *a = crate::SvmAttr::from_raw(t, v);
    }
    Ok(())
}

/// One `AMDKFD_IOC_SVM` request of operation `op` carrying `attrs`.
fn svm_request(
    kfd: &DeviceFile,
    op: u32,
    addr: u64,
    size: u64,
    attrs: &mut [(u32, u32)],
) -> Result<()> {
    if attrs.len() > kfd::SVM_MAX_ATTRS {
        return Err(FmmError::Failed(
            "too many SVM attributes for one AMDKFD_IOC_SVM request",
        ));
    }
    memory::svm(kfd, op, addr, size, attrs).map_err(|errno| FmmError::Ioctl {
        request: memory::svm_request(attrs.len()),
        errno,
    })
}
