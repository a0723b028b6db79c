//! ABI generations: which `hsakmt_sys` types a library under test is
//! called with.
//!
//! Debian 12's libhsakmt 5.2.3 and our `rocm-5.2` build take the
//! [`Rocm52`] layouts, Debian 13's libhsakmt 6.2.4 and our `rocm-6.2`
//! build the [`Rocm62`] layouts; a newest-upstream reference and our
//! `newest` build take the [`Newest`] layouts. The scenarios are generic over
//! [`Abi`], so every call passes buffers of exactly the size the library
//! was built for.

use std::fmt::Debug;

use hsakmt_sys::{newest, rocm_5_2, rocm_6_2};

/// The generation named on the command line; ordered by release (a
/// later generation compares greater).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AbiKind {
    /// Debian 12's 5.2.3 layouts (`hsakmt_sys::rocm_5_2`).
    Rocm52,
    /// Debian 13's 6.2.4 layouts (`hsakmt_sys::rocm_6_2`).
    Rocm62,
    /// Newest upstream layouts (`hsakmt_sys::newest`).
    Newest,
}

impl AbiKind {
    /// Parses `rocm-5.2`, `rocm-6.2` or `newest`.
    pub fn parse(s: &str) -> Option<AbiKind> {
        match s {
            "rocm-5.2" => Some(AbiKind::Rocm52),
            "rocm-6.2" => Some(AbiKind::Rocm62),
            "newest" => Some(AbiKind::Newest),
            _ => None,
        }
    }

    /// The name used on the command line and in `target/dist`.
    pub fn name(self) -> &'static str {
        match self {
            AbiKind::Rocm52 => "rocm-5.2",
            AbiKind::Rocm62 => "rocm-6.2",
            AbiKind::Newest => "newest",
        }
    }
}

/// What the scenarios need to read out of an `HsaNodeProperties`.
#[derive(Debug, Clone, Copy, Default)]
pub struct NodeCounts {
    /// `NumMemoryBanks`.
    pub banks: u32,
    /// `NumCaches`.
    pub caches: u32,
    /// `NumIOLinks`.
    pub links: u32,
    /// `NumFComputeCores` (non-zero on GPU nodes).
    pub simds: u32,
    /// `NumCPUCores`.
    pub cpus: u32,
    /// `CComputeIdLo` (the processor id for CPU cache queries).
    pub ccompute_id_lo: u32,
    /// `FComputeIdLo` (the processor id for GPU cache queries).
    pub fcompute_id_lo: u32,
    /// `NumSdmaXgmiEngines`.
    pub sdma_xgmi: u32,
    /// `NumGws`.
    pub gws: u32,
}

/// The fields of an `HsaPointerInfo`, generation independent.
#[derive(Debug, Clone, Copy, Default)]
pub struct PointerInfoView {
    /// `Type` (`HSA_POINTER_TYPE`).
    pub ty: u32,
    /// `Node`.
    pub node: u32,
    /// `MemFlags` as a word.
    pub mem_flags: u32,
    /// `CPUAddress`.
    pub cpu: usize,
    /// `GPUAddress`.
    pub gpu: u64,
    /// `SizeInBytes`.
    pub size: u64,
    /// `NRegisteredNodes`.
    pub n_registered: u32,
    /// `NMappedNodes`.
    pub n_mapped: u32,
    /// `RegisteredNodes`.
    pub registered: usize,
    /// `MappedNodes`.
    pub mapped: usize,
    /// `UserData`.
    pub user_data: usize,
}

/// The fields of an `HsaEvent` the scenarios look at.
#[derive(Debug, Clone, Copy, Default)]
pub struct EventView {
    /// `EventId`.
    pub id: u32,
    /// `EventData.EventType`.
    pub ty: u32,
    /// `EventData.HWData1`.
    pub hw1: u64,
    /// `EventData.HWData2` (the event page slot address).
    pub hw2: u64,
    /// `EventData.HWData3`.
    pub hw3: u32,
}

/// One ABI generation's C types.
pub trait Abi: 'static {
    /// The generation.
    const KIND: AbiKind;
    /// `HsaNodeProperties`.
    type NodeProperties: Copy + Debug + Default + 'static;
    /// `HsaCacheProperties`.
    type CacheProperties: Copy + Debug + Default + 'static;
    /// `HsaIoLinkProperties`.
    type IoLinkProperties: Copy + Debug + Default + 'static;
    /// `HsaQueueResource`.
    type QueueResource: Copy + Debug + Default + 'static;
    /// `HsaQueueInfo`.
    type QueueInfo: Copy + Debug + Default + 'static;
    /// `HsaGraphicsResourceInfo`.
    type GraphicsResourceInfo: Copy + Debug + Default + 'static;
    /// `HsaPointerInfo`.
    type PointerInfo: Copy + Debug + Default + 'static;
    /// `HsaMemFlags`.
    type MemFlags: Copy + Debug + crate::fuzz::FuzzArg;
    /// The fourth argument of `hsaKmtMapMemoryToGPUNodes`
    /// (`HsaMemMapFlags` in 5.2.3, `HsaMemFlags` in the newest header).
    type MapFlags: Copy + Debug + crate::fuzz::FuzzArg;
    /// `HsaEvent`.
    type Event: Copy + Debug + 'static;

    /// An `HsaMemFlags` from its word.
    fn mem_flags(bits: u32) -> Self::MemFlags;
    /// The map-flags argument from its word.
    fn map_flags(bits: u32) -> Self::MapFlags;
    /// Counts out of a node.
    fn node_counts(p: &Self::NodeProperties) -> NodeCounts;
    /// `(QueueId, doorbell, write pointer, read pointer)`.
    fn queue_view(q: &Self::QueueResource) -> (u64, u64, u64, u64);
    /// Sets the caller-provided read/write pointers (AQL queues).
    fn set_queue_ptrs(q: &mut Self::QueueResource, wptr: u64, rptr: u64);
    /// The pointer-info fields.
    fn pointer_info(p: &Self::PointerInfo) -> PointerInfoView;
    /// The event fields.
    fn event_view(e: &Self::Event) -> EventView;
    /// `CacheType` word and `ProcessorIdLow` of a cache.
    fn cache_view(c: &Self::CacheProperties) -> (u32, u32);
    /// `MemoryAddress` of a registered graphics buffer.
    fn graphics_address(g: &Self::GraphicsResourceInfo) -> u64;
}

/// Debian libhsakmt 5.2.3 (`hsakmt_sys::rocm_5_2`).
#[derive(Debug, Clone, Copy)]
pub struct Rocm52;

/// Debian libhsakmt 6.2.4 (`hsakmt_sys::rocm_6_2`).
#[derive(Debug, Clone, Copy)]
pub struct Rocm62;

/// Newest upstream (`hsakmt_sys::newest`).
#[derive(Debug, Clone, Copy)]
pub struct Newest;

macro_rules! impl_abi {
    ($t:ty, $kind:expr, $m:ident, $map:ty, $mapctor:expr) => {
        impl Abi for $t {
            const KIND: AbiKind = $kind;
            type NodeProperties = $m::HsaNodeProperties;
            type CacheProperties = $m::HsaCacheProperties;
            type IoLinkProperties = $m::HsaIoLinkProperties;
            type QueueResource = $m::HsaQueueResource;
            type QueueInfo = $m::HsaQueueInfo;
            type GraphicsResourceInfo = $m::HsaGraphicsResourceInfo;
            type PointerInfo = $m::HsaPointerInfo;
            type MemFlags = $m::HsaMemFlags;
            type MapFlags = $map;
            type Event = $m::HsaEvent;

            fn mem_flags(bits: u32) -> Self::MemFlags {
                $m::HsaMemFlags(bits)
            }
            fn map_flags(bits: u32) -> Self::MapFlags {
                $mapctor(bits)
            }
            fn node_counts(p: &Self::NodeProperties) -> NodeCounts {
                let p = *p;
                NodeCounts {
                    banks: p.NumMemoryBanks,
                    caches: p.NumCaches,
                    links: p.NumIOLinks,
                    simds: p.NumFComputeCores,
                    cpus: p.NumCPUCores,
                    ccompute_id_lo: p.CComputeIdLo,
                    fcompute_id_lo: p.FComputeIdLo,
                    sdma_xgmi: p.NumSdmaXgmiEngines,
                    gws: u32::from(p.NumGws),
                }
            }
            fn queue_view(q: &Self::QueueResource) -> (u64, u64, u64, u64) {
                let q = *q;
                (
                    q.QueueId,
                    q.QueueDoorBell,
                    q.QueueWptrValue,
                    q.QueueRptrValue,
                )
            }
            fn graphics_address(g: &Self::GraphicsResourceInfo) -> u64 {
                let g = *g;
                g.MemoryAddress as u64
            }
            fn set_queue_ptrs(q: &mut Self::QueueResource, wptr: u64, rptr: u64) {
                q.QueueWptrValue = wptr;
                q.QueueRptrValue = rptr;
            }
            fn pointer_info(p: &Self::PointerInfo) -> PointerInfoView {
                let p = *p;
                PointerInfoView {
                    ty: p.Type.0,
                    node: p.Node,
                    mem_flags: p.MemFlags.0,
                    cpu: p.CPUAddress as usize,
                    gpu: p.GPUAddress,
                    size: p.SizeInBytes,
                    n_registered: p.NRegisteredNodes,
                    n_mapped: p.NMappedNodes,
                    registered: p.RegisteredNodes as usize,
                    mapped: p.MappedNodes as usize,
                    user_data: p.UserData as usize,
                }
            }
            fn event_view(e: &Self::Event) -> EventView {
                let e = *e;
                let d = e.EventData;
                EventView {
                    id: e.EventId,
                    ty: d.EventType.0,
                    hw1: d.HWData1,
                    hw2: d.HWData2,
                    hw3: d.HWData3,
                }
            }
            fn cache_view(c: &Self::CacheProperties) -> (u32, u32) {
                let c = *c;
                (c.CacheType.0, c.ProcessorIdLow)
            }
        }
    };
}

impl_abi!(
    Rocm52,
    AbiKind::Rocm52,
    rocm_5_2,
    rocm_5_2::HsaMemMapFlags,
    rocm_5_2::HsaMemMapFlags
);
impl_abi!(
    Rocm62,
    AbiKind::Rocm62,
    rocm_6_2,
    rocm_6_2::HsaMemMapFlags,
    rocm_6_2::HsaMemMapFlags
);
impl_abi!(
    Newest,
    AbiKind::Newest,
    newest,
    newest::HsaMemFlags,
    newest::HsaMemFlags
);

/// `HsaMemFlags` bit positions shared by every generation.
pub mod memflag {
    /// `NonPaged`.
    pub const NON_PAGED: u32 = 1 << 0;
    /// `CachePolicy` = write-combined (`HSA_CACHING_WRITECOMBINED` = 2).
    pub const CACHE_WC: u32 = 2 << 1;
    /// `ReadOnly`.
    pub const READ_ONLY: u32 = 1 << 3;
    /// `HostAccess`.
    pub const HOST_ACCESS: u32 = 1 << 6;
    /// `NoSubstitute`.
    pub const NO_SUBSTITUTE: u32 = 1 << 7;
    /// `GDSMemory`.
    pub const GDS: u32 = 1 << 8;
    /// `Scratch`.
    pub const SCRATCH: u32 = 1 << 9;
    /// `ExecuteAccess`.
    pub const EXECUTE: u32 = 1 << 12;
    /// `CoarseGrain`.
    pub const COARSE_GRAIN: u32 = 1 << 13;
    /// `AQLQueueMemory`.
    pub const AQL_QUEUE: u32 = 1 << 14;
    /// `FixedAddress`.
    pub const FIXED_ADDRESS: u32 = 1 << 15;
    /// `NoNUMABind`.
    pub const NO_NUMA_BIND: u32 = 1 << 16;
    /// `Uncached`.
    pub const UNCACHED: u32 = 1 << 17;

    /// Names of the flags above, for scenario names.
    pub const NAMES: &[(u32, &str)] = &[
        (NON_PAGED, "nonpaged"),
        (CACHE_WC, "wc"),
        (READ_ONLY, "ro"),
        (HOST_ACCESS, "host"),
        (NO_SUBSTITUTE, "nosubst"),
        (GDS, "gds"),
        (SCRATCH, "scratch"),
        (EXECUTE, "exec"),
        (COARSE_GRAIN, "coarse"),
        (AQL_QUEUE, "aql"),
        (FIXED_ADDRESS, "fixed"),
        (NO_NUMA_BIND, "nonuma"),
        (UNCACHED, "uncached"),
    ];

    /// `a+b+c` for a flag word (`none` for 0).
    pub fn describe(bits: u32) -> String {
        let v: Vec<&str> = NAMES
            .iter()
            .filter(|(b, _)| bits & b == *b && *b != 0)
            .map(|(_, n)| *n)
            .collect();
        if v.is_empty() {
            "none".into()
        } else {
            v.join("+")
        }
    }
}
