//! The one place where the two builds differ: which generation of the C
//! types the exports take, and the conversions into them.
//!
//! `abi` is `hsakmt_sys::newest` with the `newest` feature and
//! `hsakmt_sys::rocm_5_2` with `rocm-5.2`. Every export is
//! written once against `abi::...`; where the layouts differ, the helpers
//! below have one body per generation, selected by the same feature. A
//! few behaviours in which Debian's 5.2.3 library and the newest one
//! disagree are chosen here too ([`GENERATION`]).

#[cfg(all(feature = "newest", feature = "rocm-5.2"))]
compile_error!("enable exactly one of the features `newest` and `rocm-5.2`");

#[cfg(feature = "newest")]
pub use hsakmt_sys::newest as abi;
#[cfg(feature = "rocm-5.2")]
pub use hsakmt_sys::rocm_5_2 as abi;

/// The conversions into this build's C structs (`node_properties`,
/// `store_queue_info`, `map_flags`, ...).
#[cfg(feature = "newest")]
pub use crate::convert::newest::*;
/// The conversions into this build's C structs (`node_properties`,
/// `store_queue_info`, `map_flags`, ...).
#[cfg(feature = "rocm-5.2")]
pub use crate::convert::rocm_5_2::*;

use kfd_queue::{BufferAbi, QueueOptions};
use kfd_topology::Rules;

/// Which C library generation this build serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// Debian's libhsakmt 5.2.3.
    Rocm52,
    /// The newest upstream (context API).
    Current,
}

/// The generation of this build.
#[cfg(feature = "newest")]
pub const GENERATION: Generation = Generation::Current;
/// The generation of this build.
#[cfg(feature = "rocm-5.2")]
pub const GENERATION: Generation = Generation::Rocm52;

/// The topology rules of the generation (what the C library derives).
pub fn topology_rules() -> Rules {
    match GENERATION {
        Generation::Rocm52 => Rules::Rocm52,
        Generation::Current => Rules::Current,
    }
}

/// `hsaKmtProcessVMRead`/`Write`: 5.2.3 returns `ERROR`, the newest
/// library `NOT_IMPLEMENTED`.
pub fn process_vm_status() -> hsakmt_sys::HSAKMT_STATUS {
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
