//! The one place where the two builds differ: which generation of the C
//! types the exports take, and the conversions into them.
//!
//! `abi` is `kfd_sys::hsakmt::current` with the `abi-current` feature and
//! `kfd_sys::hsakmt::rocm_5_2` with `abi-rocm-5-2`. Every export is
//! written once against `abi::...`; where the layouts differ, the helpers
//! below have one body per generation, selected by the same feature. A
//! few behaviours in which Debian's 5.2.3 library and the newest one
//! disagree are chosen here too ([`GENERATION`]).

#[cfg(all(feature = "abi-current", feature = "abi-rocm-5-2"))]
compile_error!("enable exactly one of the features `abi-current` and `abi-rocm-5-2`");

#[cfg(feature = "abi-current")]
pub use kfd_sys::hsakmt::current as abi;
#[cfg(feature = "abi-rocm-5-2")]
pub use kfd_sys::hsakmt::rocm_5_2 as abi;

use kfd_fmm::{GraphicsResource, MemMapFlags};
use kfd_queue::{BufferAbi, QueueInfo, QueueOptions, QueueRequest, QueueResource};
use kfd_topology::hsakmt::{ffi, GpuApertures};
use kfd_topology::{Node, Rules};

/// Which C library generation this build serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// Debian's libhsakmt 5.2.3.
    Rocm52,
    /// The newest upstream (context API).
    Current,
}

/// The generation of this build.
#[cfg(feature = "abi-current")]
pub const GENERATION: Generation = Generation::Current;
/// The generation of this build.
#[cfg(feature = "abi-rocm-5-2")]
pub const GENERATION: Generation = Generation::Rocm52;

/// The topology rules of the generation (what the C library derives).
pub fn topology_rules() -> Rules {
    match GENERATION {
        Generation::Rocm52 => Rules::Rocm52,
        Generation::Current => Rules::Current,
    }
}

/// The 4th argument of `hsaKmtMapMemoryToGPUNodes`: `HsaMemMapFlags` in
/// 5.2.3, `HsaMemFlags` in the newest header.
#[cfg(feature = "abi-rocm-5-2")]
pub type MapFlagsArg = abi::HsaMemMapFlags;
/// The 4th argument of `hsaKmtMapMemoryToGPUNodes`: `HsaMemMapFlags` in
/// 5.2.3, `HsaMemFlags` in the newest header.
#[cfg(feature = "abi-current")]
pub type MapFlagsArg = abi::HsaMemFlags;

/// Decodes the map flags argument. `HsaMemMapFlags` is taken as is; of
/// the newest header's `HsaMemFlags`, the fields at the same positions
/// (CachePolicy, ReadOnly, PageSize, HostAccess: bits 1..=6) are kept.
pub fn map_flags(f: MapFlagsArg) -> MemMapFlags {
    match GENERATION {
        Generation::Rocm52 => MemMapFlags::from_bits_retain(f.0),
        Generation::Current => MemMapFlags::from_bits_retain(f.0 & 0b111_1110),
    }
}

/// `HsaNodeProperties` of this generation.
pub fn node_properties(node: &Node, ap: &GpuApertures) -> abi::HsaNodeProperties {
    #[cfg(feature = "abi-rocm-5-2")]
    return ffi::node_properties_rocm_5_2(node, ap);
    #[cfg(feature = "abi-current")]
    return ffi::node_properties_current(node, ap);
}

/// `HsaCacheProperties` of this generation (1056 or 1060 bytes each).
pub fn cache_properties(node: &Node) -> Vec<abi::HsaCacheProperties> {
    #[cfg(feature = "abi-rocm-5-2")]
    return ffi::cache_properties_rocm_5_2(node);
    #[cfg(feature = "abi-current")]
    return ffi::cache_properties_current(node);
}

/// `HsaIoLinkProperties` of this generation (48 or 52 bytes each).
pub fn io_link_properties(node: &Node) -> Vec<abi::HsaIoLinkProperties> {
    #[cfg(feature = "abi-rocm-5-2")]
    return ffi::io_link_properties_rocm_5_2(node);
    #[cfg(feature = "abi-current")]
    return ffi::io_link_properties_current(node);
}

/// Takes the caller's inputs of an `HsaQueueResource` (40 or 52 bytes;
/// only this generation's size is read).
pub fn queue_request(req: QueueRequest, r: &abi::HsaQueueResource) -> QueueRequest {
    #[cfg(feature = "abi-rocm-5-2")]
    return req.with_resource_5_2(r);
    #[cfg(feature = "abi-current")]
    return req.with_resource_current(r);
}

/// Stores the outputs into an `HsaQueueResource` (never beyond this
/// generation's size).
pub fn store_queue_resource(res: &QueueResource, r: &mut abi::HsaQueueResource) {
    #[cfg(feature = "abi-rocm-5-2")]
    res.store_5_2(r);
    #[cfg(feature = "abi-current")]
    res.store_current(r);
}

/// Stores queue details into an `HsaQueueInfo` (68 or 76 bytes).
pub fn store_queue_info(info: &QueueInfo, q: &mut abi::HsaQueueInfo) {
    #[cfg(feature = "abi-rocm-5-2")]
    info.store_5_2(q);
    #[cfg(feature = "abi-current")]
    info.store_current(q);
}

/// Stores an imported graphics buffer into `HsaGraphicsResourceInfo`
/// (32 bytes in 5.2.3, where offset 28 is `Reserved` and left alone;
/// 40 in the newest header, which adds `NodeId` and reads
/// `SizeHintInBytes`).
pub fn store_graphics_info(
    g: &GraphicsResource,
    metadata: *const u8,
    info: &mut abi::HsaGraphicsResourceInfo,
) {
    info.MemoryAddress = g.address as usize as *mut core::ffi::c_void;
    info.SizeInBytes = g.size;
    info.Metadata = metadata as *const core::ffi::c_void;
    info.MetadataSizeInBytes = g.metadata.len() as u32;
    #[cfg(feature = "abi-current")]
    {
        info.NodeId = g.node;
    }
}

/// `hsaKmtProcessVMRead`/`Write`: 5.2.3 returns `ERROR`, the newest
/// library `NOT_IMPLEMENTED`.
pub fn process_vm_status() -> kfd_sys::hsakmt::HSAKMT_STATUS {
    match GENERATION {
        Generation::Rocm52 => crate::border::st::ERROR,
        Generation::Current => crate::border::st::NOT_IMPLEMENTED,
    }
}

/// The options the primary context is opened with (secondary contexts
/// start from them too; kfd-context turns off what a secondary may not
/// use). The newest library reads `HSA_USE_SVM` and, with the SVM API
/// on, treats unknown addresses in FreeMemory/DeregisterMemory/
/// MapMemoryToGPU as SVM ranges; 5.2.3 has neither the variable nor the
/// fallback (its `fmm_release` returns `MEMORY_NOT_REGISTERED` for any
/// unknown address), so the 5.2 build opens with the SVM API off.
///
/// The memory manager follows the generation too (kfd-fmm's
/// [`kfd_fmm::Generation`]): 5.2.3 checks no allocation flag
/// combination, passes NULL/zero registrations on to the kernel and
/// shares memory through `AMDKFD_IOC_IPC_EXPORT_HANDLE`.
///
/// Queue buffers follow the generation: 5.2.3's paged pointer page and
/// save area, or the newest library's pinned GTT pointer page and a save
/// area in SVM memory (used by kfd-context only on a primary context with
/// the SVM API on a kernel with SVM support).
pub fn primary_options() -> kfd_context::ContextOptions {
    let mut o = kfd_context::ContextOptions::from_env();
    match GENERATION {
        Generation::Rocm52 => {
            o.svm_api = false;
            o.fmm.svm_api_enabled = false;
            o.fmm.generation = kfd_fmm::Generation::Rocm52;
            o.queues = QueueOptions {
                abi: BufferAbi::Rocm52,
                svm_save_area: false,
            };
        }
        Generation::Current => {
            o.fmm.generation = kfd_fmm::Generation::Current;
            o.queues = QueueOptions {
                abi: BufferAbi::Current,
                svm_save_area: true,
            };
        }
    }
    o
}

/// Whether the memory manager (apertures, ACQUIRE_VM, memory policy,
/// MMIO remap pages) is set up inside `hsaKmtOpenKFD`, as 5.2.3's
/// `fmm_init_process_apertures` is; the newest library does it when the
/// topology snapshot is taken.
pub fn memory_at_open() -> bool {
    GENERATION == Generation::Rocm52
}

/// Whether the functions 5.2.3 exports without `CHECK_KFD_OPEN`
/// (GetTileConfig, QueryPointerInfo, SetMemoryUserData, the SPM calls,
/// GetKernelDebugTrapVersionInfo) skip the open check in this build; the
/// newest library checks first and returns 20.
pub fn lax_open_check() -> bool {
    GENERATION == Generation::Rocm52
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primary_options_follow_the_generation() {
        let o = primary_options();
        match GENERATION {
            Generation::Rocm52 => {
                assert!(!o.svm_api && !o.fmm.svm_api_enabled);
                assert_eq!(o.fmm.generation, kfd_fmm::Generation::Rocm52);
                assert_eq!(o.queues.abi, BufferAbi::Rocm52);
                assert!(!o.queues.svm_save_area);
            }
            Generation::Current => {
                assert_eq!(o.fmm.generation, kfd_fmm::Generation::Current);
                assert_eq!(o.queues.abi, BufferAbi::Current);
                assert!(o.queues.svm_save_area);
            }
        }
    }
}
