//! The few HSA runtime declarations the client uses, declared by hand from
//! `hsa/hsa.h` and `hsa/hsa_ext_amd.h` (the HSA core ABI and the AMD
//! extension, stable from ROCr 5.2 to 7.x) and resolved from
//! `libhsa-runtime64.so.1` at run time. `tests/hsa_layout.rs` checks every
//! constant, size and offset here against the installed header
//! (`libhsa-runtime-dev`).

use std::ffi::{c_char, c_void};
use std::marker::PhantomData;
use std::mem::{offset_of, size_of};

/// `hsa_status_t` (a C enum).
pub type Status = u32;
/// An attribute selector (`hsa_agent_info_t`, `hsa_region_info_t`, ... are
/// C enums, passed as `int`).
pub type Attribute = u32;
/// `hsa_signal_value_t` of the large (64-bit) model.
pub type SignalValue = i64;

/// `hsa_agent_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Agent {
    /// Opaque handle.
    pub handle: u64,
}

/// `hsa_region_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// Opaque handle.
    pub handle: u64,
}

/// `hsa_amd_memory_pool_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryPool {
    /// Opaque handle.
    pub handle: u64,
}

/// `hsa_signal_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Signal {
    /// Opaque handle.
    pub handle: u64,
}

/// `hsa_queue_t` (large model: `base_address` is a full pointer).
#[repr(C)]
#[derive(Debug)]
pub struct Queue {
    /// `hsa_queue_type32_t`.
    pub queue_type: u32,
    /// `HSA_QUEUE_FEATURE_*` bits.
    pub features: u32,
    /// Start of the packet ring.
    pub base_address: *mut c_void,
    /// The doorbell signal.
    pub doorbell_signal: Signal,
    /// Ring size in packets.
    pub size: u32,
    /// Reserved.
    pub reserved1: u32,
    /// Queue id, unique in the process.
    pub id: u64,
}

/// `hsa_barrier_and_packet_t` and `hsa_barrier_or_packet_t` (one layout).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct BarrierPacket {
    /// Packet header (type, barrier bit, fence scopes).
    pub header: u16,
    /// Reserved.
    pub reserved0: u16,
    /// Reserved.
    pub reserved1: u32,
    /// Dependency signals; a zero handle is no dependency.
    pub dep_signal: [Signal; 5],
    /// Reserved.
    pub reserved2: u64,
    /// Decremented when the packet completes (zero: none).
    pub completion_signal: Signal,
}

/// `hsa_amd_barrier_value_packet_t`: waits until `(signal & mask) cond
/// value`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct BarrierValuePacket {
    /// Packet header (`HSA_PACKET_TYPE_VENDOR_SPECIFIC`, ...).
    pub header: u16,
    /// `hsa_amd_packet_type_t` (`HSA_AMD_PACKET_TYPE_BARRIER_VALUE`).
    pub amd_format: u8,
    /// Reserved.
    pub reserved: u8,
    /// Reserved.
    pub reserved0: u32,
    /// The signal compared.
    pub signal: Signal,
    /// The value compared with.
    pub value: SignalValue,
    /// Mask applied to the signal's value first.
    pub mask: SignalValue,
    /// `hsa_signal_condition32_t`.
    pub cond: u32,
    /// Reserved.
    pub reserved1: u32,
    /// Reserved.
    pub reserved2: u64,
    /// Reserved.
    pub reserved3: u64,
    /// Decremented when the packet completes (zero: none).
    pub completion_signal: Signal,
}

/// A 64-byte AQL packet whose first two bytes are its header.
///
/// # Safety
///
/// Implementors must be `repr(C)`, exactly 64 bytes, without padding,
/// with the `u16` header at offset 0.
pub unsafe trait AqlPacket: Copy {
    /// The header to publish last.
    fn header(&self) -> u16;
}

// SAFETY: 2+2+4+5*8+8+8 = 64 bytes, no padding, header first (checked
// against the C header by tests/hsa_layout.rs).
unsafe impl AqlPacket for BarrierPacket {
    fn header(&self) -> u16 {
        self.header
    }
}

// SAFETY: 2+1+1+4+8+8+8+4+4+8+8+8 = 64 bytes, no padding, header first
// (checked against the C header by tests/hsa_layout.rs).
unsafe impl AqlPacket for BarrierValuePacket {
    fn header(&self) -> u16 {
        self.header
    }
}

/// `hsa_amd_ipc_memory_t`: the 32-byte handle another process attaches
/// with.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IpcMemory {
    /// Opaque words.
    pub handle: [u32; 8],
}

/// `hsa_amd_pointer_info_t` as ROCr 5.2 declares it (later runtimes fill
/// this prefix: the `size` field says how much the caller has).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PointerInfo {
    /// Size of this structure (in), of what the runtime filled (out).
    pub size: u32,
    /// `hsa_amd_pointer_type_t`.
    pub pointer_type: u32,
    /// Base address for non-host agents.
    pub agent_base_address: *mut c_void,
    /// Base address for the host.
    pub host_base_address: *mut c_void,
    /// Size of the allocation.
    pub size_in_bytes: usize,
    /// Application data.
    pub user_data: *mut c_void,
    /// The owning agent.
    pub agent_owner: Agent,
    /// Effective `HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_*` bits.
    pub global_flags: u32,
}

/// Defines the constants and [`CONSTANTS`], the table of all of them by
/// their C name (the header test compares each with the C enum value).
macro_rules! hsa_constants {
    ($($(#[doc = $doc:literal])* $name:ident = $value:expr;)*) => {
        $($(#[doc = $doc])* pub const $name: u32 = $value;)*
        /// Every constant of this module by its C name.
        pub const CONSTANTS: &[(&str, u32)] = &[$((stringify!($name), $name)),*];
    };
}

hsa_constants! {
    /// Success.
    HSA_STATUS_SUCCESS = 0x0;
    /// An iteration callback stopped the traversal.
    HSA_STATUS_INFO_BREAK = 0x1;
    /// `uint16_t`.
    HSA_SYSTEM_INFO_VERSION_MAJOR = 0;
    /// `uint16_t`.
    HSA_SYSTEM_INFO_VERSION_MINOR = 1;
    /// `uint64_t`, ticks per second of the system timestamp.
    HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY = 3;
    /// `char[64]`.
    HSA_AGENT_INFO_NAME = 0;
    /// `char[64]`.
    HSA_AGENT_INFO_VENDOR_NAME = 1;
    /// `uint32_t`.
    HSA_AGENT_INFO_QUEUES_MAX = 12;
    /// `uint32_t`.
    HSA_AGENT_INFO_QUEUE_MIN_SIZE = 13;
    /// `uint32_t`.
    HSA_AGENT_INFO_QUEUE_MAX_SIZE = 14;
    /// `hsa_queue_type32_t`.
    HSA_AGENT_INFO_QUEUE_TYPE = 15;
    /// `uint32_t`, the HSA (topology) node.
    HSA_AGENT_INFO_NODE = 16;
    /// `hsa_device_type_t`.
    HSA_AGENT_INFO_DEVICE = 17;
    /// `uint32_t`.
    HSA_AMD_AGENT_INFO_CHIP_ID = 0xA000;
    /// `uint32_t`.
    HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT = 0xA002;
    /// `uint32_t`, the KFD node id.
    HSA_AMD_AGENT_INFO_DRIVER_NODE_ID = 0xA004;
    /// `char[64]`.
    HSA_AMD_AGENT_INFO_PRODUCT_NAME = 0xA009;
    /// A CPU agent.
    HSA_DEVICE_TYPE_CPU = 0;
    /// A GPU agent.
    HSA_DEVICE_TYPE_GPU = 1;
    /// A DSP agent.
    HSA_DEVICE_TYPE_DSP = 2;
    /// Multiple producers.
    HSA_QUEUE_TYPE_MULTI = 0;
    /// A single producer.
    HSA_QUEUE_TYPE_SINGLE = 1;
    /// The queue accepts kernel dispatch packets.
    HSA_QUEUE_FEATURE_KERNEL_DISPATCH = 1;
    /// The queue accepts agent dispatch packets.
    HSA_QUEUE_FEATURE_AGENT_DISPATCH = 2;
    /// `hsa_region_segment_t`.
    HSA_REGION_INFO_SEGMENT = 0;
    /// `uint32_t`, `HSA_REGION_GLOBAL_FLAG_*` bits.
    HSA_REGION_INFO_GLOBAL_FLAGS = 1;
    /// `size_t`.
    HSA_REGION_INFO_SIZE = 2;
    /// `size_t`.
    HSA_REGION_INFO_ALLOC_MAX_SIZE = 4;
    /// `bool`.
    HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED = 5;
    /// `size_t`.
    HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE = 6;
    /// `size_t`.
    HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT = 7;
    /// Region segment: global.
    HSA_REGION_SEGMENT_GLOBAL = 0;
    /// Region segment: read-only.
    HSA_REGION_SEGMENT_READONLY = 1;
    /// Region segment: private.
    HSA_REGION_SEGMENT_PRIVATE = 2;
    /// Region segment: group.
    HSA_REGION_SEGMENT_GROUP = 3;
    /// Region segment: kernel arguments.
    HSA_REGION_SEGMENT_KERNARG = 4;
    /// Global region flag: kernel arguments.
    HSA_REGION_GLOBAL_FLAG_KERNARG = 1;
    /// Global region flag: fine grained.
    HSA_REGION_GLOBAL_FLAG_FINE_GRAINED = 2;
    /// Global region flag: coarse grained.
    HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED = 4;
    /// `hsa_amd_segment_t`.
    HSA_AMD_MEMORY_POOL_INFO_SEGMENT = 0;
    /// `uint32_t`, `HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_*` bits.
    HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS = 1;
    /// `size_t`.
    HSA_AMD_MEMORY_POOL_INFO_SIZE = 2;
    /// `bool`.
    HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED = 5;
    /// `size_t`.
    HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE = 6;
    /// `size_t`.
    HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT = 7;
    /// `bool`.
    HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL = 15;
    /// `size_t`.
    HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE = 16;
    /// Pool segment: global.
    HSA_AMD_SEGMENT_GLOBAL = 0;
    /// Pool segment: read-only.
    HSA_AMD_SEGMENT_READONLY = 1;
    /// Pool segment: private.
    HSA_AMD_SEGMENT_PRIVATE = 2;
    /// Pool segment: group.
    HSA_AMD_SEGMENT_GROUP = 3;
    /// Global pool flag: can hold kernel arguments.
    HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT = 1;
    /// Global pool flag: fine grained.
    HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED = 2;
    /// Global pool flag: coarse grained.
    HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED = 4;
    /// `hsa_amd_memory_pool_access_t`.
    HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS = 0;
    /// The agent can never access the pool.
    HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED = 0;
    /// The agent can access allocations of the pool without allow_access.
    HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT = 1;
    /// The agent needs allow_access first.
    HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT = 2;
    /// Pointer type: not known to the runtime.
    HSA_EXT_POINTER_TYPE_UNKNOWN = 0;
    /// Pointer type: an HSA allocation.
    HSA_EXT_POINTER_TYPE_HSA = 1;
    /// Pointer type: locked system memory.
    HSA_EXT_POINTER_TYPE_LOCKED = 2;
    /// Pointer type: graphics interop memory.
    HSA_EXT_POINTER_TYPE_GRAPHICS = 3;
    /// Pointer type: attached through IPC.
    HSA_EXT_POINTER_TYPE_IPC = 4;
    /// Wait until the value equals the compare value.
    HSA_SIGNAL_CONDITION_EQ = 0;
    /// Wait until the value differs from the compare value.
    HSA_SIGNAL_CONDITION_NE = 1;
    /// Wait until the value is below the compare value.
    HSA_SIGNAL_CONDITION_LT = 2;
    /// Sleep while waiting.
    HSA_WAIT_STATE_BLOCKED = 0;
    /// Spin while waiting.
    HSA_WAIT_STATE_ACTIVE = 1;
    /// AQL packet type: vendor specific (AMD: `AmdFormat` says which).
    HSA_PACKET_TYPE_VENDOR_SPECIFIC = 0;
    /// AQL packet type: invalid (a free ring slot).
    HSA_PACKET_TYPE_INVALID = 1;
    /// AQL packet type: barrier-AND.
    HSA_PACKET_TYPE_BARRIER_AND = 3;
    /// AQL packet type: barrier-OR.
    HSA_PACKET_TYPE_BARRIER_OR = 5;
    /// Header bit offset of the packet type.
    HSA_PACKET_HEADER_TYPE = 0;
    /// Header bit offset of the barrier bit.
    HSA_PACKET_HEADER_BARRIER = 8;
    /// Header bit offset of the acquire fence scope.
    HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE = 9;
    /// Header bit offset of the release fence scope.
    HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE = 11;
    /// Fence scope: the whole system.
    HSA_FENCE_SCOPE_SYSTEM = 2;
    /// AMD vendor packet format: barrier-value.
    HSA_AMD_PACKET_TYPE_BARRIER_VALUE = 2;
}

/// Attribute values: plain C data for which all-zero bytes are a valid
/// value (the buffer an `*_get_info` call fills starts zeroed).
///
/// # Safety
///
/// Implementors must be `repr(C)`-compatible integers or arrays of them.
pub unsafe trait Plain: Copy {}
// SAFETY: integers and byte arrays: every bit pattern is valid.
unsafe impl Plain for u8 {}
// SAFETY: as above.
unsafe impl Plain for u16 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}
// SAFETY: as above.
unsafe impl Plain for [u8; 64] {}

/// An attribute of objects of kind `O` whose C value type is `T`: the id
/// and the type are paired once, here, so a caller cannot ask for an
/// attribute into a buffer of the wrong size.
#[derive(Debug)]
pub struct Attr<O, T> {
    /// The C enum value.
    pub id: Attribute,
    _kind: PhantomData<fn() -> (O, T)>,
}

impl<O, T> Clone for Attr<O, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<O, T> Copy for Attr<O, T> {}

impl<O, T> Attr<O, T> {
    const fn new(id: Attribute) -> Self {
        Self {
            id,
            _kind: PhantomData,
        }
    }
}

/// Kind marker: `hsa_system_get_info` attributes.
#[derive(Debug)]
pub enum OfSystem {}
/// Kind marker: `hsa_agent_get_info` attributes.
#[derive(Debug)]
pub enum OfAgent {}
/// Kind marker: `hsa_region_get_info` attributes.
#[derive(Debug)]
pub enum OfRegion {}
/// Kind marker: `hsa_amd_memory_pool_get_info` attributes.
#[derive(Debug)]
pub enum OfPool {}

/// A C `bool` attribute, read as its byte (never as a Rust `bool`).
pub type Bool = u8;
/// A C `char[64]` attribute (NUL-padded).
pub type Name = [u8; 64];

/// System version, major.
pub const SYSTEM_VERSION_MAJOR: Attr<OfSystem, u16> = Attr::new(HSA_SYSTEM_INFO_VERSION_MAJOR);
/// System version, minor.
pub const SYSTEM_VERSION_MINOR: Attr<OfSystem, u16> = Attr::new(HSA_SYSTEM_INFO_VERSION_MINOR);
/// Timestamp ticks per second.
pub const SYSTEM_TIMESTAMP_FREQUENCY: Attr<OfSystem, u64> =
    Attr::new(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY);
/// Agent name.
pub const AGENT_NAME: Attr<OfAgent, Name> = Attr::new(HSA_AGENT_INFO_NAME);
/// Agent vendor name.
pub const AGENT_VENDOR_NAME: Attr<OfAgent, Name> = Attr::new(HSA_AGENT_INFO_VENDOR_NAME);
/// Marketing name (AMD extension).
pub const AGENT_PRODUCT_NAME: Attr<OfAgent, Name> = Attr::new(HSA_AMD_AGENT_INFO_PRODUCT_NAME);
/// Device type.
pub const AGENT_DEVICE: Attr<OfAgent, u32> = Attr::new(HSA_AGENT_INFO_DEVICE);
/// HSA node.
pub const AGENT_NODE: Attr<OfAgent, u32> = Attr::new(HSA_AGENT_INFO_NODE);
/// KFD node id.
pub const AGENT_DRIVER_NODE_ID: Attr<OfAgent, u32> = Attr::new(HSA_AMD_AGENT_INFO_DRIVER_NODE_ID);
/// Chip id.
pub const AGENT_CHIP_ID: Attr<OfAgent, u32> = Attr::new(HSA_AMD_AGENT_INFO_CHIP_ID);
/// Compute units.
pub const AGENT_COMPUTE_UNIT_COUNT: Attr<OfAgent, u32> =
    Attr::new(HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT);
/// Most queues the agent supports.
pub const AGENT_QUEUES_MAX: Attr<OfAgent, u32> = Attr::new(HSA_AGENT_INFO_QUEUES_MAX);
/// Smallest queue size, in packets.
pub const AGENT_QUEUE_MIN_SIZE: Attr<OfAgent, u32> = Attr::new(HSA_AGENT_INFO_QUEUE_MIN_SIZE);
/// Largest queue size, in packets.
pub const AGENT_QUEUE_MAX_SIZE: Attr<OfAgent, u32> = Attr::new(HSA_AGENT_INFO_QUEUE_MAX_SIZE);
/// Queue type the agent supports.
pub const AGENT_QUEUE_TYPE: Attr<OfAgent, u32> = Attr::new(HSA_AGENT_INFO_QUEUE_TYPE);
/// Region segment.
pub const REGION_SEGMENT: Attr<OfRegion, u32> = Attr::new(HSA_REGION_INFO_SEGMENT);
/// Region global flags.
pub const REGION_GLOBAL_FLAGS: Attr<OfRegion, u32> = Attr::new(HSA_REGION_INFO_GLOBAL_FLAGS);
/// Region size.
pub const REGION_SIZE: Attr<OfRegion, u64> = Attr::new(HSA_REGION_INFO_SIZE);
/// Largest single allocation.
pub const REGION_ALLOC_MAX_SIZE: Attr<OfRegion, u64> = Attr::new(HSA_REGION_INFO_ALLOC_MAX_SIZE);
/// Whether the runtime may allocate from it.
pub const REGION_RUNTIME_ALLOC_ALLOWED: Attr<OfRegion, Bool> =
    Attr::new(HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED);
/// Allocation granule.
pub const REGION_RUNTIME_ALLOC_GRANULE: Attr<OfRegion, u64> =
    Attr::new(HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE);
/// Allocation alignment.
pub const REGION_RUNTIME_ALLOC_ALIGNMENT: Attr<OfRegion, u64> =
    Attr::new(HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT);
/// Pool segment.
pub const POOL_SEGMENT: Attr<OfPool, u32> = Attr::new(HSA_AMD_MEMORY_POOL_INFO_SEGMENT);
/// Pool global flags.
pub const POOL_GLOBAL_FLAGS: Attr<OfPool, u32> = Attr::new(HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS);
/// Pool size.
pub const POOL_SIZE: Attr<OfPool, u64> = Attr::new(HSA_AMD_MEMORY_POOL_INFO_SIZE);
/// Whether the runtime may allocate from it.
pub const POOL_RUNTIME_ALLOC_ALLOWED: Attr<OfPool, Bool> =
    Attr::new(HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED);
/// Allocation granule.
pub const POOL_RUNTIME_ALLOC_GRANULE: Attr<OfPool, u64> =
    Attr::new(HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE);
/// Allocation alignment.
pub const POOL_RUNTIME_ALLOC_ALIGNMENT: Attr<OfPool, u64> =
    Attr::new(HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT);
/// Whether every agent can access it by default.
pub const POOL_ACCESSIBLE_BY_ALL: Attr<OfPool, Bool> =
    Attr::new(HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL);
/// Largest single allocation.
pub const POOL_ALLOC_MAX_SIZE: Attr<OfPool, u64> =
    Attr::new(HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE);

/// Sizes and offsets checked against the header: each entry is a C
/// expression (compiled by the header test) and the Rust value it must
/// equal.
pub const LAYOUTS: &[(&str, usize)] = &[
    ("sizeof(hsa_status_t)", size_of::<Status>()),
    ("sizeof(hsa_agent_info_t)", size_of::<Attribute>()),
    ("sizeof(hsa_region_info_t)", size_of::<Attribute>()),
    ("sizeof(hsa_amd_memory_pool_info_t)", size_of::<Attribute>()),
    (
        "sizeof(hsa_amd_agent_memory_pool_info_t)",
        size_of::<Attribute>(),
    ),
    ("sizeof(hsa_system_info_t)", size_of::<Attribute>()),
    ("sizeof(hsa_device_type_t)", size_of::<u32>()),
    ("sizeof(hsa_region_segment_t)", size_of::<u32>()),
    ("sizeof(hsa_amd_segment_t)", size_of::<u32>()),
    ("sizeof(hsa_amd_memory_pool_access_t)", size_of::<u32>()),
    ("sizeof(hsa_signal_condition_t)", size_of::<u32>()),
    ("sizeof(hsa_wait_state_t)", size_of::<u32>()),
    ("sizeof(hsa_queue_type32_t)", size_of::<u32>()),
    ("sizeof(hsa_signal_value_t)", size_of::<SignalValue>()),
    ("sizeof(size_t)", size_of::<u64>()),
    ("sizeof(bool)", size_of::<Bool>()),
    ("sizeof(hsa_agent_t)", size_of::<Agent>()),
    ("sizeof(hsa_region_t)", size_of::<Region>()),
    ("sizeof(hsa_amd_memory_pool_t)", size_of::<MemoryPool>()),
    ("sizeof(hsa_signal_t)", size_of::<Signal>()),
    ("sizeof(hsa_queue_t)", size_of::<Queue>()),
    ("offsetof(hsa_queue_t, type)", offset_of!(Queue, queue_type)),
    (
        "offsetof(hsa_queue_t, features)",
        offset_of!(Queue, features),
    ),
    (
        "offsetof(hsa_queue_t, base_address)",
        offset_of!(Queue, base_address),
    ),
    (
        "offsetof(hsa_queue_t, doorbell_signal)",
        offset_of!(Queue, doorbell_signal),
    ),
    ("offsetof(hsa_queue_t, size)", offset_of!(Queue, size)),
    (
        "offsetof(hsa_queue_t, reserved1)",
        offset_of!(Queue, reserved1),
    ),
    ("offsetof(hsa_queue_t, id)", offset_of!(Queue, id)),
    (
        "sizeof(hsa_barrier_and_packet_t)",
        size_of::<BarrierPacket>(),
    ),
    (
        "sizeof(hsa_barrier_or_packet_t)",
        size_of::<BarrierPacket>(),
    ),
    (
        "offsetof(hsa_barrier_and_packet_t, dep_signal)",
        offset_of!(BarrierPacket, dep_signal),
    ),
    (
        "offsetof(hsa_barrier_or_packet_t, completion_signal)",
        offset_of!(BarrierPacket, completion_signal),
    ),
    (
        "sizeof(hsa_amd_barrier_value_packet_t)",
        size_of::<BarrierValuePacket>(),
    ),
    (
        "offsetof(hsa_amd_barrier_value_packet_t, header.AmdFormat)",
        offset_of!(BarrierValuePacket, amd_format),
    ),
    (
        "offsetof(hsa_amd_barrier_value_packet_t, signal)",
        offset_of!(BarrierValuePacket, signal),
    ),
    (
        "offsetof(hsa_amd_barrier_value_packet_t, value)",
        offset_of!(BarrierValuePacket, value),
    ),
    (
        "offsetof(hsa_amd_barrier_value_packet_t, mask)",
        offset_of!(BarrierValuePacket, mask),
    ),
    (
        "offsetof(hsa_amd_barrier_value_packet_t, cond)",
        offset_of!(BarrierValuePacket, cond),
    ),
    (
        "offsetof(hsa_amd_barrier_value_packet_t, completion_signal)",
        offset_of!(BarrierValuePacket, completion_signal),
    ),
    ("sizeof(hsa_amd_ipc_memory_t)", size_of::<IpcMemory>()),
    ("sizeof(hsa_amd_pointer_type_t)", size_of::<u32>()),
    ("sizeof(hsa_amd_pointer_info_t)", size_of::<PointerInfo>()),
    (
        "offsetof(hsa_amd_pointer_info_t, type)",
        offset_of!(PointerInfo, pointer_type),
    ),
    (
        "offsetof(hsa_amd_pointer_info_t, sizeInBytes)",
        offset_of!(PointerInfo, size_in_bytes),
    ),
    (
        "offsetof(hsa_amd_pointer_info_t, agentOwner)",
        offset_of!(PointerInfo, agent_owner),
    ),
    (
        "offsetof(hsa_amd_pointer_info_t, global_flags)",
        offset_of!(PointerInfo, global_flags),
    ),
];

/// `hsa_iterate_agents` callback.
pub type AgentCallback = unsafe extern "C" fn(Agent, *mut c_void) -> Status;
/// `hsa_agent_iterate_regions` callback.
pub type RegionCallback = unsafe extern "C" fn(Region, *mut c_void) -> Status;
/// `hsa_amd_agent_iterate_memory_pools` callback.
pub type PoolCallback = unsafe extern "C" fn(MemoryPool, *mut c_void) -> Status;
/// `hsa_queue_create` error callback.
pub type QueueCallback = unsafe extern "C" fn(Status, *mut Queue, *mut c_void);

entry_points! {
    /// The entry points of `libhsa-runtime64.so.1` this client calls.
    Runtime;
    /// `hsa_init`.
    hsa_init: fn() -> Status;
    /// `hsa_shut_down`.
    hsa_shut_down: fn() -> Status;
    /// `hsa_status_string`.
    hsa_status_string: fn(Status, *mut *const c_char) -> Status;
    /// `hsa_system_get_info`.
    hsa_system_get_info: fn(Attribute, *mut c_void) -> Status;
    /// `hsa_iterate_agents`.
    hsa_iterate_agents: fn(AgentCallback, *mut c_void) -> Status;
    /// `hsa_agent_get_info`.
    hsa_agent_get_info: fn(Agent, Attribute, *mut c_void) -> Status;
    /// `hsa_agent_iterate_regions`.
    hsa_agent_iterate_regions: fn(Agent, RegionCallback, *mut c_void) -> Status;
    /// `hsa_region_get_info`.
    hsa_region_get_info: fn(Region, Attribute, *mut c_void) -> Status;
    /// `hsa_amd_agent_iterate_memory_pools`.
    hsa_amd_agent_iterate_memory_pools: fn(Agent, PoolCallback, *mut c_void) -> Status;
    /// `hsa_amd_memory_pool_get_info`.
    hsa_amd_memory_pool_get_info: fn(MemoryPool, Attribute, *mut c_void) -> Status;
    /// `hsa_amd_agent_memory_pool_get_info`.
    hsa_amd_agent_memory_pool_get_info: fn(Agent, MemoryPool, Attribute, *mut c_void) -> Status;
    /// `hsa_amd_memory_pool_allocate`.
    hsa_amd_memory_pool_allocate: fn(MemoryPool, usize, u32, *mut *mut c_void) -> Status;
    /// `hsa_amd_memory_pool_free`.
    hsa_amd_memory_pool_free: fn(*mut c_void) -> Status;
    /// `hsa_amd_agents_allow_access`.
    hsa_amd_agents_allow_access: fn(u32, *const Agent, *const u32, *const c_void) -> Status;
    /// `hsa_queue_create`.
    hsa_queue_create: fn(
        Agent,
        u32,
        u32,
        Option<QueueCallback>,
        *mut c_void,
        u32,
        u32,
        *mut *mut Queue
    ) -> Status;
    /// `hsa_queue_destroy`.
    hsa_queue_destroy: fn(*mut Queue) -> Status;
    /// `hsa_signal_create`.
    hsa_signal_create: fn(SignalValue, u32, *const Agent, *mut Signal) -> Status;
    /// `hsa_signal_destroy`.
    hsa_signal_destroy: fn(Signal) -> Status;
    /// `hsa_signal_store_screlease`.
    hsa_signal_store_screlease: fn(Signal, SignalValue);
    /// `hsa_signal_load_scacquire`.
    hsa_signal_load_scacquire: fn(Signal) -> SignalValue;
    /// `hsa_signal_wait_scacquire`.
    hsa_signal_wait_scacquire: fn(Signal, u32, SignalValue, u64, u32) -> SignalValue;
    /// `hsa_amd_memory_async_copy`.
    hsa_amd_memory_async_copy: fn(
        *mut c_void,
        Agent,
        *const c_void,
        Agent,
        usize,
        u32,
        *const Signal,
        Signal
    ) -> Status;
    /// `hsa_amd_memory_fill`: `count` 32-bit values at a 4-byte aligned
    /// address.
    hsa_amd_memory_fill: fn(*mut c_void, u32, usize) -> Status;
    /// `hsa_queue_add_write_index_scacq_screl`.
    hsa_queue_add_write_index_scacq_screl: fn(*const Queue, u64) -> u64;
    /// `hsa_queue_load_read_index_scacquire`.
    hsa_queue_load_read_index_scacquire: fn(*const Queue) -> u64;
    /// `hsa_queue_load_write_index_scacquire`.
    hsa_queue_load_write_index_scacquire: fn(*const Queue) -> u64;
    /// `hsa_amd_pointer_info`.
    hsa_amd_pointer_info: fn(
        *const c_void,
        *mut PointerInfo,
        Option<unsafe extern "C" fn(usize) -> *mut c_void>,
        *mut u32,
        *mut *mut Agent
    ) -> Status;
    /// `hsa_amd_ipc_memory_create`.
    hsa_amd_ipc_memory_create: fn(*mut c_void, usize, *mut IpcMemory) -> Status;
    /// `hsa_amd_ipc_memory_attach`.
    hsa_amd_ipc_memory_attach: fn(*const IpcMemory, usize, u32, *const Agent, *mut *mut c_void) -> Status;
    /// `hsa_amd_ipc_memory_detach`.
    hsa_amd_ipc_memory_detach: fn(*mut c_void) -> Status;
}
