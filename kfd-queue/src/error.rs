//! Errors of the queue operations.

use kfd_sys::ioctl::IoctlInfo;
use kfd_sys::Errno;

use kfd_event::EventError;
use kfd_fmm::FmmError;

/// Why a queue operation failed: the cause, with the errno and the
/// kernel request where the kernel refused. Which C status each C
/// function returns for it (the C library translates some requests'
/// errnos) is decided at the `hsakmt` border.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    /// Priority outside `HSA_QUEUE_PRIORITY_MINIMUM..=MAXIMUM`.
    #[error("invalid queue priority {0}")]
    InvalidPriority(i64),
    /// A queue type the library cannot create.
    #[error("invalid queue type {0}")]
    InvalidQueueType(u32),
    /// `HSA_QUEUE_SDMA_BY_ENG_ID` through the legacy `CreateQueue`, which
    /// has no engine argument.
    #[error("SDMA-by-engine queues need CreateQueueExt/V2")]
    EngineIdNeedsExt,
    /// The node id is not in the topology, or is a CPU-only node.
    #[error("invalid node {0}")]
    InvalidNode(u32),
    /// The metadata ring size is not page aligned.
    #[error("metadata queue size {0:#x} is not page aligned")]
    MetadataUnaligned(u64),
    /// The KFD is too old for the request.
    #[error("needs KFD ioctl minor version {needed}, have {have}")]
    KfdTooOld {
        /// Minor version needed.
        needed: u32,
        /// Minor version the KFD reports.
        have: u32,
    },
    /// A queue id of 0.
    #[error("NULL queue id")]
    NullQueue,
    /// The queue id is not a live queue of this context: destroyed,
    /// created by another context, or garbage. The C library dereferences
    /// such ids (undefined behaviour).
    #[error("unknown queue id {0:#x}")]
    UnknownQueue(u64),
    /// The handle belongs to another context.
    #[error("queue belongs to another context")]
    ForeignQueue,
    /// A CU mask with a bit count of 0 or not a multiple of 32, or shorter
    /// than its count.
    #[error("invalid CU mask: {count} bits in {words} words")]
    InvalidCuMask {
        /// The bit count given.
        count: u32,
        /// The mask words given.
        words: usize,
    },
    /// GetQueueInfo on a queue without a context save area.
    #[error("queue has no context save/restore area")]
    NoCwsrArea,
    /// A buffer for the queue could not be allocated.
    #[error("queue buffer allocation: {0}")]
    Memory(FmmError),
    /// The doorbell page could not be mapped.
    #[error("doorbell mapping failed: {0}")]
    Doorbell(String),
    /// The kernel refused a queue whose ring size is not a power of two
    /// (`EINVAL` from `AMDKFD_IOC_CREATE_QUEUE`).
    #[error("ring size {0:#x} is not a power of two: the kernel refused the queue")]
    RingSize(u64),
    /// The kernel had no SDMA queue left for the request (`ENOMEM` from
    /// `AMDKFD_IOC_CREATE_QUEUE` for an SDMA queue): every queue slot of
    /// the GPU's SDMA engines (or of the engine asked for) is taken.
    #[error(
        "no free SDMA queue{}: every queue slot is taken; destroy an SDMA queue first",
        engine.map(|e| format!(" on engine {e}")).unwrap_or_default()
    )]
    NoFreeSdmaQueue {
        /// The engine asked for (`HSA_QUEUE_SDMA_BY_ENG_ID`), if any.
        engine: Option<u32>,
    },
    /// An AQL ring size that is not a power of two from
    /// [`crate::MIN_AQL_PACKETS`] to [`crate::MAX_AQL_PACKETS`] packets.
    #[error("invalid AQL ring of {0} packets: needs a power of two from 16 to 2^25")]
    InvalidPacketCount(u32),
    /// An SDMA ring size that is not a power of two from
    /// [`crate::MIN_SDMA_RING_BYTES`] to [`crate::MAX_SDMA_RING_BYTES`].
    #[error("invalid SDMA ring of {0} bytes: needs a power of two from 1 KiB to 2 GiB")]
    InvalidSdmaRingSize(u64),
    /// A PM4 ring size that is not a power of two from
    /// [`crate::MIN_PM4_RING_BYTES`] to [`crate::MAX_PM4_RING_BYTES`].
    #[error("invalid PM4 ring of {0} bytes: needs a power of two from 1 KiB to 2 GiB")]
    InvalidPm4RingSize(u64),
    /// A PM4 packet as long as the ring or longer: it could never be
    /// written without overwriting packets the CP has not read.
    #[error("PM4 packet of {bytes} bytes does not fit a ring of {ring}")]
    Pm4PacketTooLarge {
        /// Bytes of the packet.
        bytes: u64,
        /// Bytes of the ring.
        ring: u64,
    },
    /// A type-3 PM4 packet whose opcode `kfd_sys::pm4` does not declare:
    /// the CP of a compute queue would stop on it.
    #[error("unknown PM4 opcode {0:#x}")]
    UnknownPm4Opcode(u32),
    /// An SDMA packet as long as the ring or longer: it could never be
    /// written without overwriting packets the engine has not read.
    #[error("SDMA packet of {bytes} bytes does not fit a ring of {ring}")]
    SdmaPacketTooLarge {
        /// Bytes of the packet.
        bytes: u64,
        /// Bytes of the ring.
        ring: u64,
    },
    /// An SDMA or PM4 packet that could not be built (a size or an
    /// alignment its fields cannot carry), or dwords that are not whole
    /// packets of known formats.
    #[error("packet: {0}")]
    Packet(#[from] kfd_sys::packet::PacketError),
    /// A barrier packet with more dependencies than it holds.
    #[error("{0} barrier dependencies: a barrier packet holds at most 5")]
    TooManyDependencies(usize),
    /// A kernel descriptor outside its buffer or not 64-byte aligned.
    #[error("kernel descriptor at {0:#x} is outside its buffer or not 64-byte aligned")]
    BadKernelObject(u64),
    /// Dispatch sizes out of range: 1 to 3 dimensions, every size at
    /// least 1, at most 1024 work-items per workgroup.
    #[error("invalid dispatch: grid {grid:?}, workgroup {workgroup:?}")]
    BadDispatchSize {
        /// Grid sizes given.
        grid: Vec<u32>,
        /// Workgroup sizes given.
        workgroup: Vec<u16>,
    },
    /// A batch of more packets than the ring has slots.
    #[error("batch of {packets} packets does not fit a ring of {slots}")]
    BatchTooLarge {
        /// Packets in the batch.
        packets: usize,
        /// Slots in the ring.
        slots: u32,
    },
    /// The ring (AQL or SDMA) stayed full for the whole submit timeout:
    /// the GPU is not consuming packets (blocked on a dependency, or
    /// stopped).
    #[error("ring still full after {waited:?}: the GPU is not consuming packets")]
    RingFull {
        /// How long the submission waited.
        waited: std::time::Duration,
    },
    /// The queue stopped on a packet it could not execute: the CP wrote
    /// its error code into the queue's inactive signal.
    #[error("queue stopped: {cause} (CP error code {code:#x})")]
    QueueStopped {
        /// The CP's error code.
        code: u64,
        /// What the code means.
        cause: &'static str,
    },
    /// The kernel reported queue exceptions to the runtime (the
    /// `KFD_EC_MASK` bits of the exception codes, with the runtime
    /// enabled).
    #[error("queue exception: {cause} (exception mask {mask:#x})")]
    QueueException {
        /// The `KFD_EC_MASK` bits.
        mask: u64,
        /// What the first of them means.
        cause: &'static str,
    },
    /// A GPU memory fault stopped the process's queues on the GPU.
    #[error("GPU memory fault at {address:#x} on node {node_id}")]
    MemoryFault {
        /// The GPU's node.
        node_id: u32,
        /// The faulting page.
        address: u64,
    },
    /// A signal or event operation failed (including a signal wait that
    /// timed out).
    #[error(transparent)]
    Event(#[from] EventError),
    /// A KFD request failed.
    #[error("{request} failed: {errno}")]
    Kernel {
        /// The request.
        request: IoctlInfo,
        /// What the kernel returned.
        errno: Errno,
    },
}

impl QueueError {
    pub(crate) fn kernel(request: IoctlInfo) -> impl FnOnce(Errno) -> QueueError {
        move |errno| QueueError::Kernel { request, errno }
    }
}
