//! Queue kinds, requests, results and the [`Queue`] handle.

use std::fmt;
use std::sync::{Arc, Mutex, Weak};

use kfd_sys::kfd::{
    KFD_IOC_QUEUE_TYPE_COMPUTE, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, KFD_IOC_QUEUE_TYPE_SDMA,
    KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID, KFD_IOC_QUEUE_TYPE_SDMA_XGMI,
};

use kfd_fmm::{Buffer, FmmError, SvmArea};

use crate::error::QueueError;
use crate::sizes::CwsrSizes;

/// `HSA_QUEUE_TYPE` values the library creates.
pub mod hsa_type {
    /// `HSA_QUEUE_COMPUTE`.
    pub const COMPUTE: u32 = 1;
    /// `HSA_QUEUE_SDMA`.
    pub const SDMA: u32 = 2;
    /// `HSA_QUEUE_SDMA_XGMI`.
    pub const SDMA_XGMI: u32 = 5;
    /// `HSA_QUEUE_SDMA_BY_ENG_ID` (newest ABI).
    pub const SDMA_BY_ENG_ID: u32 = 6;
    /// `HSA_QUEUE_COMPUTE_AQL`.
    pub const COMPUTE_AQL: u32 = 21;
}

/// What kind of queue to create.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QueueKind {
    /// PM4 compute queue (`HSA_QUEUE_COMPUTE`).
    Compute,
    /// AQL compute queue (`HSA_QUEUE_COMPUTE_AQL`); the caller supplies
    /// the read and write pointers.
    ComputeAql,
    /// SDMA queue on a PCIe-optimised engine (`HSA_QUEUE_SDMA`).
    Sdma,
    /// SDMA queue on an xGMI engine (`HSA_QUEUE_SDMA_XGMI`).
    SdmaXgmi,
    /// SDMA queue on the given engine (`HSA_QUEUE_SDMA_BY_ENG_ID`).
    SdmaByEngine(u32),
}

impl QueueKind {
    /// From the C `HSA_QUEUE_TYPE` and the `SdmaEngineId` argument of
    /// `CreateQueueExt`/`V2` (ignored except for `SDMA_BY_ENG_ID`).
    pub fn from_hsa(ty: u32, sdma_engine_id: u32) -> Result<QueueKind, QueueError> {
        Ok(match ty {
            hsa_type::COMPUTE => QueueKind::Compute,
            hsa_type::COMPUTE_AQL => QueueKind::ComputeAql,
            hsa_type::SDMA => QueueKind::Sdma,
            hsa_type::SDMA_XGMI => QueueKind::SdmaXgmi,
            hsa_type::SDMA_BY_ENG_ID => QueueKind::SdmaByEngine(sdma_engine_id),
            _ => return Err(QueueError::InvalidQueueType(ty)),
        })
    }

    /// As [`QueueKind::from_hsa`] for the legacy `CreateQueue`, which has
    /// no engine argument: `SDMA_BY_ENG_ID` is
    /// [`QueueError::EngineIdNeedsExt`].
    pub fn from_hsa_legacy(ty: u32) -> Result<QueueKind, QueueError> {
        if ty == hsa_type::SDMA_BY_ENG_ID {
            return Err(QueueError::EngineIdNeedsExt);
        }
        QueueKind::from_hsa(ty, 0)
    }

    /// The C `HSA_QUEUE_TYPE` value.
    pub fn hsa_type(self) -> u32 {
        match self {
            QueueKind::Compute => hsa_type::COMPUTE,
            QueueKind::ComputeAql => hsa_type::COMPUTE_AQL,
            QueueKind::Sdma => hsa_type::SDMA,
            QueueKind::SdmaXgmi => hsa_type::SDMA_XGMI,
            QueueKind::SdmaByEngine(_) => hsa_type::SDMA_BY_ENG_ID,
        }
    }

    /// The `KFD_IOC_QUEUE_TYPE_*` value.
    pub fn kfd_type(self) -> u32 {
        match self {
            QueueKind::Compute => KFD_IOC_QUEUE_TYPE_COMPUTE,
            QueueKind::ComputeAql => KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
            QueueKind::Sdma => KFD_IOC_QUEUE_TYPE_SDMA,
            QueueKind::SdmaXgmi => KFD_IOC_QUEUE_TYPE_SDMA_XGMI,
            QueueKind::SdmaByEngine(_) => KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID,
        }
    }

    /// The SDMA engine for [`QueueKind::SdmaByEngine`], else 0.
    pub fn sdma_engine_id(self) -> u32 {
        match self {
            QueueKind::SdmaByEngine(e) => e,
            _ => 0,
        }
    }

    /// True for the two compute kinds.
    pub fn is_compute(self) -> bool {
        matches!(self, QueueKind::Compute | QueueKind::ComputeAql)
    }

    /// True if the C library gives the queue an EOP buffer and a CWSR
    /// area: every kind except plain SDMA and SDMA xGMI (the C library
    /// also allocates them for SDMA-by-engine queues; we match it).
    pub fn needs_queue_buffers(self) -> bool {
        !matches!(self, QueueKind::Sdma | QueueKind::SdmaXgmi)
    }
}

/// Maps an `HSA_QUEUE_PRIORITY` (-3..=3) to the KFD priority (0..=15):
/// 0, 3, 5, 7, 9, 11, 15. `None` outside the range.
pub fn kfd_priority(priority: i64) -> Option<u32> {
    const MAP: [u32; 7] = [0, 3, 5, 7, 9, 11, 15];
    let i = priority.checked_add(3)?;
    usize::try_from(i).ok().and_then(|i| MAP.get(i)).copied()
}

/// The kernel's limit on a CU mask: it uses (and copies in) at most the
/// first 1024 bits of a longer one (`kfd_ioctl_set_cu_mask`).
pub const MAX_CU_MASK_BITS: u32 = 1024;

/// How many 32-bit words of a `count`-bit CU mask the kernel reads:
/// `count / 32`, at most [`MAX_CU_MASK_BITS`]` / 32`.
pub fn cu_mask_words(count: u32) -> usize {
    (count.min(MAX_CU_MASK_BITS) / 32) as usize
}

/// The opaque `HSA_QUEUEID` of a queue: unique among the live queues of
/// the process, owned by the context that created the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QueueId(pub(crate) u64);

impl QueueId {
    /// The value handed to C.
    pub fn raw(self) -> u64 {
        self.0
    }

    /// The id with this C value (lookups validate it; a made-up id
    /// names no queue).
    pub fn from_raw(raw: u64) -> Self {
        QueueId(raw)
    }
}

/// A queue creation request (`hsaKmtCreateQueueV2` arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueRequest {
    /// Topology node of the GPU.
    pub node_id: u32,
    /// Kind of queue.
    pub kind: QueueKind,
    /// Time-slice percentage (0..=100).
    pub percentage: u32,
    /// `HSA_QUEUE_PRIORITY` (-3..=3).
    pub priority: i64,
    /// GPU address of the ring buffer.
    pub ring_address: u64,
    /// Ring size in bytes.
    pub ring_size: u64,
    /// Size of the metadata ring behind an AQL ring (0: none; needs KFD
    /// 1.19 and page alignment).
    pub metadata_size: u64,
    /// Event id reported in the save-area header on queue errors (0: none).
    pub error_event_id: u32,
    /// Address of the 64-bit error-reason payload (`ErrorReason`, in).
    pub error_reason: u64,
    /// Read pointer address for AQL queues (in; ignored otherwise).
    pub read_ptr: u64,
    /// Write pointer address for AQL queues (in; ignored otherwise).
    pub write_ptr: u64,
}

impl QueueRequest {
    /// A request for a `kind` queue on `node_id` with a ring at
    /// `ring_address` of `ring_size` bytes, 100 %, normal priority.
    pub fn new(node_id: u32, kind: QueueKind, ring_address: u64, ring_size: u64) -> Self {
        QueueRequest {
            node_id,
            kind,
            percentage: 100,
            priority: 0,
            ring_address,
            ring_size,
            metadata_size: 0,
            error_event_id: 0,
            error_reason: 0,
            read_ptr: 0,
            write_ptr: 0,
        }
    }
}

/// What queue creation returns (the output fields of `HsaQueueResource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueResource {
    /// The queue's `HSA_QUEUEID`.
    pub queue_id: QueueId,
    /// Address of the queue's doorbell.
    pub doorbell: u64,
    /// Write pointer address (library-provided for non-AQL queues).
    pub write_ptr: u64,
    /// Read pointer address (library-provided for non-AQL queues).
    pub read_ptr: u64,
}

/// What `hsaKmtGetQueueInfo` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueInfo {
    /// Top of the saved control stack.
    pub control_stack_top: u64,
    /// Start of the user context save area (after the control stack).
    pub user_context_save_area: u64,
    /// Bytes of the save area in use.
    pub save_area_size: u64,
    /// Bytes of control stack in use.
    pub control_stack_used: u64,
    /// Bits in the CU mask.
    pub num_cu_assigned: u32,
    /// Address of the CU mask words.
    pub cu_mask_info: u64,
    /// Address of the save-area header (the start of the CWSR area).
    pub save_area_header: u64,
    /// `ctx_save_restore_size` (newest ABI only).
    pub save_area_alloc_size: u64,
}

/// Offsets inside the per-queue page (system memory, GPU mapped).
pub(crate) mod page {
    /// Write pointer of non-AQL queues.
    pub const WPTR: u64 = 8;
    /// Read pointer of non-AQL queues.
    pub const RPTR: u64 = 16;
    /// First CU mask word.
    pub const CU_MASK: u64 = 64;
    /// CU mask words that fit.
    pub const CU_MASK_WORDS: usize = (4096 - CU_MASK as usize) / 4;
}

/// A queue's context save/restore area: SVM-registered anonymous memory
/// or a memory-manager buffer.
#[derive(Debug)]
pub(crate) enum SaveArea {
    Svm(SvmArea),
    Buffer(Buffer),
}

impl SaveArea {
    pub fn addr(&self) -> u64 {
        match self {
            SaveArea::Svm(a) => a.addr(),
            SaveArea::Buffer(b) => b.addr(),
        }
    }

    pub fn write(&self, offset: u64, data: &[u8]) -> Result<(), FmmError> {
        match self {
            SaveArea::Svm(a) => a.write(offset, data),
            SaveArea::Buffer(b) => b.write(offset, data),
        }
    }

    /// The CPU mapping of the area (the kernel writes the control stack
    /// into it).
    pub fn mapping(&self) -> Result<&kfd_sys::mapping::Mapping, QueueError> {
        match self {
            SaveArea::Svm(a) => Ok(a.mapping()),
            SaveArea::Buffer(b) => b.mapping().map_err(QueueError::Memory),
        }
    }
}

/// The buffers a queue owns. They are released when this value drops,
/// field by field in declaration order: the EOP buffer, the save area,
/// then the per-queue page, the order of the C library's frees.
#[derive(Debug)]
pub(crate) struct QueueBuffers {
    pub eop: Option<Buffer>,
    pub cwsr: Option<SaveArea>,
    pub page: Buffer,
}

/// The state of one live queue.
#[derive(Debug)]
pub(crate) struct QueueObj {
    pub owner: Weak<crate::queues::Shared>,
    pub id: QueueId,
    pub kfd_queue_id: u32,
    /// What the kernel's wave-state query needs of the queue.
    pub slot: kfd_sys::queue::QueueSlot,
    pub node_id: u32,
    pub gpu_id: u32,
    pub kind: QueueKind,
    /// Address of the per-queue page (pointers, CU mask).
    pub page: u64,
    /// Address and size of the EOP buffer.
    pub eop: Option<(u64, u64)>,
    /// Address of the save area and its sizes.
    pub cwsr: Option<(u64, CwsrSizes)>,
    /// The buffers, until the queue is destroyed (handles may outlive
    /// the queue; its memory goes when it is destroyed).
    pub buffers: Mutex<Option<QueueBuffers>>,
    pub doorbell: u64,
    pub doorbell_size: u32,
    pub resource: QueueResource,
    /// (bit count, words) of the current CU mask.
    pub cu_mask: Mutex<(u32, Vec<u32>)>,
}

/// A handle to a queue of one context. Cheap to clone; all clones name
/// the same queue. Valid until [`crate::Queues::destroy`] (or teardown);
/// using it after that, or with another context, is an error.
#[derive(Clone)]
pub struct Queue {
    pub(crate) obj: Arc<QueueObj>,
}

impl Queue {
    /// The opaque `HSA_QUEUEID`.
    pub fn id(&self) -> QueueId {
        self.obj.id
    }

    /// The queue id the kernel assigned.
    pub fn kfd_queue_id(&self) -> u32 {
        self.obj.kfd_queue_id
    }

    /// The queue's kind.
    pub fn kind(&self) -> QueueKind {
        self.obj.kind
    }

    /// The topology node of its GPU.
    pub fn node_id(&self) -> u32 {
        self.obj.node_id
    }

    /// The `gpu_id` of its GPU.
    pub fn gpu_id(&self) -> u32 {
        self.obj.gpu_id
    }

    /// What creation returned.
    pub fn resource(&self) -> QueueResource {
        self.obj.resource
    }

    /// Address and size of the EOP buffer, if the queue has one.
    pub fn eop_buffer(&self) -> Option<(u64, u64)> {
        self.obj.eop
    }

    /// Address of the CWSR area and its sizes, if the queue has one.
    pub fn cwsr(&self) -> Option<(u64, CwsrSizes)> {
        self.obj.cwsr
    }

    /// The current CU mask: (bit count, words).
    pub fn cu_mask(&self) -> (u32, Vec<u32>) {
        crate::lock(&self.obj.cu_mask).clone()
    }

    /// True if both handles name the same queue.
    pub fn same(&self, other: &Queue) -> bool {
        Arc::ptr_eq(&self.obj, &other.obj)
    }

    /// Runs `f` on the per-queue page, which holds the read and write
    /// pointers of a non-AQL queue (offsets [`page::RPTR`] and
    /// [`page::WPTR`]); [`QueueError::UnknownQueue`] once the queue is
    /// destroyed and the page freed.
    pub(crate) fn with_page<R>(
        &self,
        f: impl FnOnce(&Buffer) -> Result<R, FmmError>,
    ) -> Result<R, QueueError> {
        let buffers = crate::lock(&self.obj.buffers);
        let page = &buffers
            .as_ref()
            .ok_or(QueueError::UnknownQueue(self.obj.id.0))?
            .page;
        f(page).map_err(QueueError::Memory)
    }
}

impl fmt::Debug for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue")
            .field("id", &self.obj.id)
            .field("kfd_queue_id", &self.obj.kfd_queue_id)
            .field("kind", &self.obj.kind)
            .field("node", &self.obj.node_id)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_map() {
        let m: Vec<Option<u32>> = (-4..=4).map(kfd_priority).collect();
        assert_eq!(
            m,
            [
                None,
                Some(0),
                Some(3),
                Some(5),
                Some(7),
                Some(9),
                Some(11),
                Some(15),
                None
            ]
        );
        assert_eq!(kfd_priority(i64::MIN), None);
        assert_eq!(kfd_priority(0xFFFF_FFFF), None);
    }

    #[test]
    fn kinds() {
        assert_eq!(QueueKind::from_hsa(21, 0).unwrap(), QueueKind::ComputeAql);
        assert_eq!(
            QueueKind::from_hsa(6, 3).unwrap(),
            QueueKind::SdmaByEngine(3)
        );
        assert_eq!(
            QueueKind::from_hsa(3, 0).unwrap_err(),
            QueueError::InvalidQueueType(3)
        );
        assert_eq!(
            QueueKind::from_hsa_legacy(6).unwrap_err(),
            QueueError::EngineIdNeedsExt
        );
        for k in [
            QueueKind::Compute,
            QueueKind::ComputeAql,
            QueueKind::Sdma,
            QueueKind::SdmaXgmi,
        ] {
            assert_eq!(QueueKind::from_hsa(k.hsa_type(), 0).unwrap(), k);
        }
    }
}
