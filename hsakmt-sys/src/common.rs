//! hsakmt C types that are identical in the 5.2.3 and the newest header.
//!
//! Everything here is re-exported by both [`super::rocm_5_2`] and
//! [`super::newest`]; prefer those paths. The macros at the end declare
//! the types that differ between generations only in a few members, so
//! the shared part is written once.

use core::ffi::c_void;
use core::fmt;

// ---------------------------------------------------------------------------
// Scalar typedefs and #define constants
// ---------------------------------------------------------------------------

/// `HSAuint8`: unsigned 8-bit integer.
pub type HSAuint8 = u8;
/// `HSAint8`: signed 8-bit integer.
pub type HSAint8 = i8;
/// `HSAuint16`: unsigned 16-bit integer.
pub type HSAuint16 = u16;
/// `HSAint16`: signed 16-bit integer.
pub type HSAint16 = i16;
/// `HSAuint32`: unsigned 32-bit integer.
pub type HSAuint32 = u32;
/// `HSAint32`: signed 32-bit integer.
pub type HSAint32 = i32;
/// `HSAuint64`: unsigned 64-bit integer.
pub type HSAuint64 = u64;
/// `HSAint64`: signed 64-bit integer.
pub type HSAint64 = i64;
/// `HSA_HANDLE`: untyped handle (`void *`).
pub type HSA_HANDLE = *mut c_void;
/// `HSA_QUEUEID`: queue identifier returned by queue creation.
pub type HSA_QUEUEID = u64;
/// `HSA_EVENTID`: event identifier (`HsaEvent::EventId`).
pub type HSA_EVENTID = u32;
/// `HSATraceId`: performance-counter trace identifier.
pub type HSATraceId = u64;
/// `HsaSharedMemoryHandle`: opaque 32-byte IPC handle (out of
/// `hsaKmtShareMemory`, in to `hsaKmtRegisterSharedHandle`).
pub type HsaSharedMemoryHandle = [u32; 8];

/// `HSAKMT_VERSION_MAJOR`: major version of the thunk API definitions
/// (defined by both headers).
pub const HSAKMT_VERSION_MAJOR: u32 = 0;
/// `HSAKMT_VERSION_MINOR`: minor version of the thunk API definitions
/// (defined by both headers).
pub const HSAKMT_VERSION_MINOR: u32 = 99;
/// `INVALID_QUEUEID`: a queue id that never names a queue.
pub const INVALID_QUEUEID: u64 = 0xFFFF_FFFF_FFFF_FFFF;
/// `INVALID_PID`: a process id that never names a process.
pub const INVALID_PID: u32 = 0xFFFF_FFFF;
/// `INVALID_NODEID`: a node id that never names a node.
pub const INVALID_NODEID: u32 = 0xFFFF_FFFF;
/// `HSA_PUBLIC_NAME_SIZE`: element count of the node name arrays.
pub const HSA_PUBLIC_NAME_SIZE: usize = 64;
/// `HSA_CPU_SIBLINGS`: element count of the `SiblingMap` arrays.
pub const HSA_CPU_SIBLINGS: usize = 256;
/// `HSA_PROCESSORID_ALL`: processor id meaning "all processors".
pub const HSA_PROCESSORID_ALL: u32 = 0xFFFF_FFFF;

// ---------------------------------------------------------------------------
// Status codes
// ---------------------------------------------------------------------------

c_enum! {
    /// `HSAKMT_STATUS`: the return code of every hsakmt function.
    pub struct HSAKMT_STATUS(u32) {
        /// The operation succeeded.
        HSAKMT_STATUS_SUCCESS = 0,
        /// Unspecified error.
        HSAKMT_STATUS_ERROR = 1,
        /// The thunk and the kernel driver are not compatible.
        HSAKMT_STATUS_DRIVER_MISMATCH = 2,
        /// An input parameter is invalid.
        HSAKMT_STATUS_INVALID_PARAMETER = 3,
        /// A handle parameter is invalid.
        HSAKMT_STATUS_INVALID_HANDLE = 4,
        /// A node or unit parameter is invalid.
        HSAKMT_STATUS_INVALID_NODE_UNIT = 5,
        /// Out of memory (queues or memory allocation).
        HSAKMT_STATUS_NO_MEMORY = 6,
        /// A buffer needed for the request is too small.
        HSAKMT_STATUS_BUFFER_TOO_SMALL = 7,
        /// Not implemented for these parameters.
        HSAKMT_STATUS_NOT_IMPLEMENTED = 10,
        /// Not supported on this node.
        HSAKMT_STATUS_NOT_SUPPORTED = 11,
        /// Not available now on this node (may be later).
        HSAKMT_STATUS_UNAVAILABLE = 12,
        /// The request exceeds the resources currently available.
        HSAKMT_STATUS_OUT_OF_RESOURCES = 13,
        /// The KFD device has not been opened.
        HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED = 20,
        /// Communication between user and kernel mode failed.
        HSAKMT_STATUS_KERNEL_COMMUNICATION_ERROR = 21,
        /// The KFD device is already open.
        HSAKMT_STATUS_KERNEL_ALREADY_OPENED = 22,
        /// ATS/PRI (IOMMUv2) is not available.
        HSAKMT_STATUS_HSAMMU_UNAVAILABLE = 23,
        /// A wait failed.
        HSAKMT_STATUS_WAIT_FAILURE = 30,
        /// A wait timed out.
        HSAKMT_STATUS_WAIT_TIMEOUT = 31,
        /// The memory is already registered.
        HSAKMT_STATUS_MEMORY_ALREADY_REGISTERED = 35,
        /// The memory is not registered.
        HSAKMT_STATUS_MEMORY_NOT_REGISTERED = 36,
        /// A memory parameter is not suitably aligned.
        HSAKMT_STATUS_MEMORY_ALIGNMENT = 37,
    }
}

impl HSAKMT_STATUS {
    /// `true` for `HSAKMT_STATUS_SUCCESS`.
    pub const fn is_success(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for HSAKMT_STATUS {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "HSAKMT_STATUS({})", self.0),
        }
    }
}

impl std::error::Error for HSAKMT_STATUS {}

// ---------------------------------------------------------------------------
// Version and system properties
// ---------------------------------------------------------------------------

/// `HsaVersionInfo`: KFD interface version (out of `hsaKmtGetVersion`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaVersionInfo {
    /// Kernel interface major version.
    pub KernelInterfaceMajorVersion: u32,
    /// Kernel interface minor version.
    pub KernelInterfaceMinorVersion: u32,
}

/// `HsaSystemProperties`: topology summary (out of
/// `hsaKmtAcquireSystemProperties`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaSystemProperties {
    /// Number of topology nodes.
    pub NumNodes: u32,
    /// Platform OEM id (CRAT OEMID).
    pub PlatformOem: u32,
    /// Platform id (CRAT OEM table id).
    pub PlatformId: u32,
    /// Platform revision (CRAT table revision).
    pub PlatformRev: u32,
}

bitfield! {
    /// `HSA_ENGINE_ID`: GPU engine / firmware identification word
    /// (`ui32` bit fields over `Value`).
    #[repr(transparent)]
    pub struct HSA_ENGINE_ID(u32) {
        /// Microcode (packet processor) version.
        uCode, set_uCode: 0..10;
        /// GFX IP major version.
        Major, set_Major: 10..16;
        /// GFX IP minor version.
        Minor, set_Minor: 16..24;
        /// GFX IP stepping.
        Stepping, set_Stepping: 24..32;
    }
}

bitfield! {
    /// `HSA_ENGINE_VERSION`: SDMA microcode versions (anonymous bit-field
    /// struct over `Value`).
    #[repr(transparent)]
    pub struct HSA_ENGINE_VERSION(u32) {
        /// SDMA engine microcode version.
        uCodeSDMA, set_uCodeSDMA: 0..10;
        /// Reserved microcode version.
        uCodeRes, set_uCodeRes: 10..20;
        /// Reserved, zero.
        Reserved, set_Reserved: 20..32;
    }
}

bitfield! {
    /// `HSA_DEBUG_PROPERTIES`: debug capabilities of a node, a 64-bit word
    /// (4-byte aligned under the header's pack pragma).
    #[repr(C, packed(4))]
    pub struct HSA_DEBUG_PROPERTIES(u64) {
        /// Lowest usable bit of the watch address mask.
        WatchAddrMaskLoBit, set_WatchAddrMaskLoBit: 0..4;
        /// Highest usable bit of the watch address mask.
        WatchAddrMaskHiBit, set_WatchAddrMaskHiBit: 4..10;
        /// 1 if trap temporaries are always set up.
        DispatchInfoAlwaysValid, set_DispatchInfoAlwaysValid: 10..11;
        /// 1 if address watchpoints are per process, 0 if shared.
        AddressWatchpointShareKind, set_AddressWatchpointShareKind: 11..12;
        /// Reserved.
        Reserved, set_Reserved: 12..64;
    }
}

// ---------------------------------------------------------------------------
// Memory properties
// ---------------------------------------------------------------------------

c_enum! {
    /// `HSA_HEAPTYPE`: kind of a memory bank.
    pub struct HSA_HEAPTYPE(u32) {
        /// System memory.
        HSA_HEAPTYPE_SYSTEM = 0,
        /// CPU-visible part of device-local memory.
        HSA_HEAPTYPE_FRAME_BUFFER_PUBLIC = 1,
        /// CPU-invisible part of device-local memory.
        HSA_HEAPTYPE_FRAME_BUFFER_PRIVATE = 2,
        /// GPU global data share.
        HSA_HEAPTYPE_GPU_GDS = 3,
        /// GPU local data share.
        HSA_HEAPTYPE_GPU_LDS = 4,
        /// GPU scratch memory.
        HSA_HEAPTYPE_GPU_SCRATCH = 5,
        /// System memory mapped through device page tables.
        HSA_HEAPTYPE_DEVICE_SVM = 6,
        /// Remapped MMIO (e.g. HDP flush registers).
        HSA_HEAPTYPE_MMIO_REMAP = 7,
        /// Number of heap types.
        HSA_HEAPTYPE_NUMHEAPTYPES = 8,
        /// Forces a 32-bit enum.
        HSA_HEAPTYPE_SIZE = 0xFFFF_FFFF,
    }
}

bitfield! {
    /// `HSA_MEMORYPROPERTY`: memory bank flags (`ui32` over
    /// `MemoryProperty`).
    #[repr(transparent)]
    pub struct HSA_MEMORYPROPERTY(u32) {
        /// The memory may be removed by a system action.
        HotPluggable, set_HotPluggable: 0..1;
        /// The memory keeps its content across power-off.
        NonVolatile, set_NonVolatile: 1..2;
        /// Reserved.
        Reserved, set_Reserved: 2..32;
    }
}

/// `HsaMemoryProperties`: one memory bank of a node (out of
/// `hsaKmtGetNodeMemoryProperties`).
///
/// The C struct has an anonymous union of `SizeInBytes` and
/// `ui32.{SizeInBytesLow, SizeInBytesHigh}`; it is stored as the 64-bit
/// member, see [`HsaMemoryProperties::SizeInBytesLow`].
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaMemoryProperties {
    /// Kind of memory.
    pub HeapType: HSA_HEAPTYPE,
    /// Size of the bank in bytes.
    pub SizeInBytes: u64,
    /// Bank flags.
    pub Flags: HSA_MEMORYPROPERTY,
    /// Memory interface width in bits.
    pub Width: u32,
    /// Maximum memory clock (MHz).
    pub MemoryClockMax: u32,
    /// Virtual base address in the process, 0 if none.
    pub VirtualBaseAddress: u64,
}

impl HsaMemoryProperties {
    /// The C member `ui32.SizeInBytesLow`: low 32 bits of `SizeInBytes`.
    pub const fn SizeInBytesLow(&self) -> u32 {
        self.SizeInBytes as u32
    }

    /// The C member `ui32.SizeInBytesHigh`: high 32 bits of `SizeInBytes`.
    pub const fn SizeInBytesHigh(&self) -> u32 {
        (self.SizeInBytes >> 32) as u32
    }
}

// ---------------------------------------------------------------------------
// Caches and CPU compute
// ---------------------------------------------------------------------------

bitfield! {
    /// `HsaCacheType`: kind of a cache (`ui32` over `Value`).
    #[repr(transparent)]
    pub struct HsaCacheType(u32) {
        /// Caches data.
        Data, set_Data: 0..1;
        /// Caches instructions.
        Instruction, set_Instruction: 1..2;
        /// A CPU cache.
        CPU, set_CPU: 2..3;
        /// A GPU (HSA compute unit) cache.
        HSACU, set_HSACU: 3..4;
        /// Reserved.
        Reserved, set_Reserved: 4..32;
    }
}

/// `HsaCComputeProperties`: CPU sibling map (out of the never-exported
/// `hsaKmtGetCComputeProperties`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaCComputeProperties {
    /// One bit per sibling processor.
    pub SiblingMap: [u32; HSA_CPU_SIBLINGS],
}

// ---------------------------------------------------------------------------
// IO links
// ---------------------------------------------------------------------------

c_enum! {
    /// `HSA_IOLINKTYPE`: bus type of an IO link.
    pub struct HSA_IOLINKTYPE(u32) {
        /// Undefined.
        HSA_IOLINKTYPE_UNDEFINED = 0,
        /// HyperTransport.
        HSA_IOLINKTYPE_HYPERTRANSPORT = 1,
        /// PCI Express.
        HSA_IOLINKTYPE_PCIEXPRESS = 2,
        /// AMBA.
        HSA_IOLINKTYPE_AMBA = 3,
        /// MIPI.
        HSA_IOLINKTYPE_MIPI = 4,
        /// QPI 1.1.
        HSA_IOLINK_TYPE_QPI_1_1 = 5,
        /// Reserved.
        HSA_IOLINK_TYPE_RESERVED1 = 6,
        /// Reserved.
        HSA_IOLINK_TYPE_RESERVED2 = 7,
        /// RapidIO.
        HSA_IOLINK_TYPE_RAPID_IO = 8,
        /// InfiniBand.
        HSA_IOLINK_TYPE_INFINIBAND = 9,
        /// Reserved.
        HSA_IOLINK_TYPE_RESERVED3 = 10,
        /// xGMI.
        HSA_IOLINK_TYPE_XGMI = 11,
        /// XGOP.
        HSA_IOLINK_TYPE_XGOP = 12,
        /// GZ.
        HSA_IOLINK_TYPE_GZ = 13,
        /// Ethernet RDMA.
        HSA_IOLINK_TYPE_ETHERNET_RDMA = 14,
        /// Other RDMA.
        HSA_IOLINK_TYPE_RDMA_OTHER = 15,
        /// Other.
        HSA_IOLINK_TYPE_OTHER = 16,
        /// Number of link types.
        HSA_IOLINKTYPE_NUMIOLINKTYPES = 17,
        /// Forces a 32-bit enum.
        HSA_IOLINKTYPE_SIZE = 0xFFFF_FFFF,
    }
}

bitfield! {
    /// `HSA_LINKPROPERTY`: IO link flags (`ui32` over `LinkProperty`).
    #[repr(transparent)]
    pub struct HSA_LINKPROPERTY(u32) {
        /// The properties come from this struct, not from the link type.
        Override, set_Override: 0..1;
        /// No coherent transactions.
        NonCoherent, set_NonCoherent: 1..2;
        /// No 32-bit atomics.
        NoAtomics32bit, set_NoAtomics32bit: 2..3;
        /// No 64-bit atomics.
        NoAtomics64bit, set_NoAtomics64bit: 3..4;
        /// No peer-to-peer DMA.
        NoPeerToPeerDMA, set_NoPeerToPeerDMA: 4..5;
        /// Reserved.
        Reserved, set_Reserved: 5..32;
    }
}

// ---------------------------------------------------------------------------
// Memory allocation enums
// ---------------------------------------------------------------------------

c_enum! {
    /// `HSA_CACHING_TYPE`: value of the `CachePolicy` bit fields.
    pub struct HSA_CACHING_TYPE(u32) {
        /// Cached.
        HSA_CACHING_CACHED = 0,
        /// Not cached.
        HSA_CACHING_NONCACHED = 1,
        /// Write-combined.
        HSA_CACHING_WRITECOMBINED = 2,
        /// Reserved.
        HSA_CACHING_RESERVED = 3,
        /// Number of caching types.
        HSA_CACHING_NUM_CACHING = 4,
        /// Forces a 32-bit enum.
        HSA_CACHING_SIZE = 0xFFFF_FFFF,
    }
}

c_enum! {
    /// `HSA_PAGE_SIZE`: value of the `PageSize` bit fields.
    pub struct HSA_PAGE_SIZE(u32) {
        /// 4 KiB.
        HSA_PAGE_SIZE_4KB = 0,
        /// 64 KiB.
        HSA_PAGE_SIZE_64KB = 1,
        /// 2 MiB.
        HSA_PAGE_SIZE_2MB = 2,
        /// 1 GiB.
        HSA_PAGE_SIZE_1GB = 3,
    }
}

c_enum! {
    /// `HSA_DEVICE`: device kind.
    pub struct HSA_DEVICE(u32) {
        /// CPU.
        HSA_DEVICE_CPU = 0,
        /// GPU.
        HSA_DEVICE_GPU = 1,
        /// Number of device kinds.
        MAX_HSA_DEVICE = 2,
    }
}

c_enum! {
    /// `HSA_QUEUE_PRIORITY`: queue priority (in to queue creation and
    /// update). An 8-byte enum in the C ABI: it has negative values and a
    /// 0xFFFFFFFF sentinel, so gcc gives it type `long`; pass it as 64 bits.
    pub struct HSA_QUEUE_PRIORITY(i64) {
        /// Minimum.
        HSA_QUEUE_PRIORITY_MINIMUM = -3,
        /// Low.
        HSA_QUEUE_PRIORITY_LOW = -2,
        /// Below normal.
        HSA_QUEUE_PRIORITY_BELOW_NORMAL = -1,
        /// Normal.
        HSA_QUEUE_PRIORITY_NORMAL = 0,
        /// Above normal.
        HSA_QUEUE_PRIORITY_ABOVE_NORMAL = 1,
        /// High.
        HSA_QUEUE_PRIORITY_HIGH = 2,
        /// Maximum.
        HSA_QUEUE_PRIORITY_MAXIMUM = 3,
        /// Number of priorities (one past the maximum).
        HSA_QUEUE_PRIORITY_NUM_PRIORITY = 4,
        /// Size sentinel (widens the enum to 64 bits).
        HSA_QUEUE_PRIORITY_SIZE = 0xFFFF_FFFF,
    }
}

// ---------------------------------------------------------------------------
// Queues
// ---------------------------------------------------------------------------

/// `HsaUserContextSaveAreaHeader`: header at the start of a queue's user
/// context save area, written on context save.
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaUserContextSaveAreaHeader {
    /// Offset of the saved control stack top.
    pub ControlStackOffset: u32,
    /// Size of the saved control stack.
    pub ControlStackSize: u32,
    /// Offset of the saved wave state.
    pub WaveStateOffset: u32,
    /// Size of the saved wave state.
    pub WaveStateSize: u32,
    /// Offset of the debugger-reserved area.
    pub DebugOffset: u32,
    /// Size of the debugger-reserved area.
    pub DebugSize: u32,
    /// Address of the signal payload receiving the error reason bits.
    pub ErrorReason: *mut i64,
    /// Event id used for exception signalling.
    pub ErrorEventId: u32,
    /// Reserved.
    pub Reserved1: u32,
}

/// `HsaQueueReport`: legacy SI queue report (in/out of the unexported
/// `hsaKmtReportQueue`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaQueueReport {
    /// VMID of the queue.
    pub VMID: u32,
    /// User-mode mapped ring address.
    pub QueueAddress: *mut c_void,
    /// Ring size.
    pub QueueSize: u64,
}

// ---------------------------------------------------------------------------
// Debugger (v1)
// ---------------------------------------------------------------------------

c_enum! {
    /// `HSA_DBG_WAVEOP`: wavefront operation (in to
    /// `hsaKmtDbgWavefrontControl`).
    pub struct HSA_DBG_WAVEOP(u32) {
        /// Halt.
        HSA_DBG_WAVEOP_HALT = 1,
        /// Resume.
        HSA_DBG_WAVEOP_RESUME = 2,
        /// Kill.
        HSA_DBG_WAVEOP_KILL = 3,
        /// Enter debug mode.
        HSA_DBG_WAVEOP_DEBUG = 4,
        /// Take a trap.
        HSA_DBG_WAVEOP_TRAP = 5,
        /// Number of operations.
        HSA_DBG_NUM_WAVEOP = 5,
        /// Forces a 32-bit enum.
        HSA_DBG_MAX_WAVEOP = 0xFFFF_FFFF,
    }
}

c_enum! {
    /// `HSA_DBG_WAVEMODE`: which waves a wave operation targets.
    pub struct HSA_DBG_WAVEMODE(u32) {
        /// One wave.
        HSA_DBG_WAVEMODE_SINGLE = 0,
        /// All waves of the process.
        HSA_DBG_WAVEMODE_BROADCAST_PROCESS = 2,
        /// All waves of the process on one CU.
        HSA_DBG_WAVEMODE_BROADCAST_PROCESS_CU = 3,
        /// Number of modes.
        HSA_DBG_NUM_WAVEMODE = 3,
        /// Forces a 32-bit enum.
        HSA_DBG_MAX_WAVEMODE = 0xFFFF_FFFF,
    }
}

c_enum! {
    /// `HSA_DBG_WAVEMSG_TYPE`: wave message kind.
    pub struct HSA_DBG_WAVEMSG_TYPE(u32) {
        /// Automatic.
        HSA_DBG_WAVEMSG_AUTO = 0,
        /// User.
        HSA_DBG_WAVEMSG_USER = 1,
        /// Error.
        HSA_DBG_WAVEMSG_ERROR = 2,
        /// Number of kinds.
        HSA_DBG_NUM_WAVEMSG = 3,
        /// Forces a 32-bit enum.
        HSA_DBG_MAX_WAVEMSG = 0xFFFF_FFFF,
    }
}

c_enum! {
    /// `HSA_DBG_WATCH_MODE`: address watch mode.
    pub struct HSA_DBG_WATCH_MODE(u32) {
        /// Reads.
        HSA_DBG_WATCH_READ = 0,
        /// Writes and atomics.
        HSA_DBG_WATCH_NONREAD = 1,
        /// Atomics.
        HSA_DBG_WATCH_ATOMIC = 2,
        /// All accesses.
        HSA_DBG_WATCH_ALL = 3,
        /// Number of modes.
        HSA_DBG_WATCH_NUM = 4,
    }
}

c_enum! {
    /// `HSA_DBG_TRAP_OVERRIDE`: how a trap mask is applied.
    pub struct HSA_DBG_TRAP_OVERRIDE(u32) {
        /// OR into the exception mask.
        HSA_DBG_TRAP_OVERRIDE_OR = 0,
        /// Replace the exception mask.
        HSA_DBG_TRAP_OVERRIDE_REPLACE = 1,
        /// Number of modes.
        HSA_DBG_TRAP_OVERRIDE_NUM = 2,
    }
}

c_enum! {
    /// `HSA_DBG_TRAP_MASK`: exception bits.
    pub struct HSA_DBG_TRAP_MASK(u32) {
        /// FP invalid operation.
        HSA_DBG_TRAP_MASK_FP_INVALID = 1,
        /// FP input denormal.
        HSA_DBG_TRAP_MASK_FP_INPUT_DENOMAL = 2,
        /// FP divide by zero.
        HSA_DBG_TRAP_MASK_FP_DIVIDE_BY_ZERO = 4,
        /// FP overflow.
        HSA_DBG_TRAP_MASK_FP_OVERFLOW = 8,
        /// FP underflow.
        HSA_DBG_TRAP_MASK_FP_UNDERFLOW = 16,
        /// FP inexact.
        HSA_DBG_TRAP_MASK_FP_INEXACT = 32,
        /// Integer divide by zero.
        HSA_DBG_TRAP_MASK_INT_DIVIDE_BY_ZERO = 64,
        /// Address watch hit.
        HSA_DBG_TRAP_MASK_DBG_ADDRESS_WATCH = 128,
        /// Memory violation.
        HSA_DBG_TRAP_MASK_DBG_MEMORY_VIOLATION = 256,
    }
}

c_enum! {
    /// `HSA_DBG_WAVE_LAUNCH_MODE`: how new waves are launched.
    pub struct HSA_DBG_WAVE_LAUNCH_MODE(u32) {
        /// Normally.
        HSA_DBG_WAVE_LAUNCH_MODE_NORMAL = 0,
        /// Halted.
        HSA_DBG_WAVE_LAUNCH_MODE_HALT = 1,
        /// Killed before the first instruction.
        HSA_DBG_WAVE_LAUNCH_MODE_KILL = 2,
        /// Single-stepping.
        HSA_DBG_WAVE_LAUNCH_MODE_SINGLE_STEP = 3,
        /// No new waves.
        HSA_DBG_WAVE_LAUNCH_MODE_DISABLE = 4,
        /// Number of modes.
        HSA_DBG_WAVE_LAUNCH_MODE_NUM = 5,
    }
}

c_enum! {
    /// `HSA_DBG_NODE_CONTROL`: node control flags (none defined).
    pub struct HSA_DBG_NODE_CONTROL(u32) {
        /// Upper bound of the flags.
        HSA_DBG_NODE_CONTROL_FLAG_MAX = 1,
    }
}

/// `HsaDbgWaveMsgAMDGen2`: hardware-specific wave message.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaDbgWaveMsgAMDGen2 {
    /// Message value.
    pub Value: u32,
    /// Reserved.
    pub Reserved2: u32,
}

/// `HsaDbgWaveMessageAMD`: union of the hardware wave message formats
/// (only Gen2 is defined).
#[repr(C)]
#[derive(Clone, Copy)]
pub union HsaDbgWaveMessageAMD {
    /// Gen2 format.
    pub WaveMsgInfoGen2: HsaDbgWaveMsgAMDGen2,
}

impl fmt::Debug for HsaDbgWaveMessageAMD {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: the union has a single member made of two integers, so
        // every bit pattern is a valid value of it.
        let gen2 = unsafe { self.WaveMsgInfoGen2 };
        f.debug_struct("HsaDbgWaveMessageAMD")
            .field("WaveMsgInfoGen2", &gen2)
            .finish()
    }
}

/// `HsaDbgWaveMessage`: wave message with its host-accessible data.
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug)]
pub struct HsaDbgWaveMessage {
    /// Host-accessible data of the message.
    pub MemoryVA: *mut c_void,
    /// Hardware message.
    pub DbgWaveMsg: HsaDbgWaveMessageAMD,
}

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

c_enum! {
    /// `HSA_EVENTTYPE`: event kind (in to `hsaKmtCreateEvent`).
    pub struct HSA_EVENTTYPE(u32) {
        /// User-mode generated GPU signal.
        HSA_EVENTTYPE_SIGNAL = 0,
        /// Node attached or detached.
        HSA_EVENTTYPE_NODECHANGE = 1,
        /// Device started or stopped.
        HSA_EVENTTYPE_DEVICESTATECHANGE = 2,
        /// GPU hardware exception.
        HSA_EVENTTYPE_HW_EXCEPTION = 3,
        /// GPU system call.
        HSA_EVENTTYPE_SYSTEM_EVENT = 4,
        /// Debug signal.
        HSA_EVENTTYPE_DEBUG_EVENT = 5,
        /// Profiling signal.
        HSA_EVENTTYPE_PROFILE_EVENT = 6,
        /// Queue idle (end of pipe) signal.
        HSA_EVENTTYPE_QUEUE_EVENT = 7,
        /// Memory access fault.
        HSA_EVENTTYPE_MEMORY = 8,
        /// One past the last id.
        HSA_EVENTTYPE_MAXID = 9,
        /// Forces a 32-bit enum.
        HSA_EVENTTYPE_TYPE_SIZE = 0xFFFF_FFFF,
    }
}

c_enum! {
    /// `HSA_DEBUG_EVENT_TYPE`: kind of a pending debug event.
    pub struct HSA_DEBUG_EVENT_TYPE(u32) {
        /// None.
        HSA_DEBUG_EVENT_TYPE_NONE = 0,
        /// Trap.
        HSA_DEBUG_EVENT_TYPE_TRAP = 1,
        /// VM fault.
        HSA_DEBUG_EVENT_TYPE_VMFAULT = 2,
        /// Trap and VM fault.
        HSA_DEBUG_EVENT_TYPE_TRAP_VMFAULT = 3,
    }
}

/// The C member `HsaSyncVar::SyncVar`: the user sync variable as a pointer
/// or as its 64-bit value.
#[repr(C, packed(4))]
#[derive(Clone, Copy)]
pub union HsaSyncVarData {
    /// Pointer to user-mode data.
    pub UserData: *mut c_void,
    /// The same pointer as a 64-bit value.
    pub UserDataPtrValue: u64,
}

impl HsaSyncVarData {
    /// The 64-bit value (both members share these bytes).
    pub fn value(self) -> u64 {
        // SAFETY: both members are 8 bytes of plain data and every bit
        // pattern is a valid u64.
        unsafe { self.UserDataPtrValue }
    }
}

impl Default for HsaSyncVarData {
    fn default() -> Self {
        HsaSyncVarData {
            UserDataPtrValue: 0,
        }
    }
}

impl fmt::Debug for HsaSyncVarData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HsaSyncVarData({:#x})", self.value())
    }
}

/// `HsaSyncVar`: a user-mode sync variable (in to `hsaKmtCreateEvent`
/// through `HsaEventDescriptor`, out in `HsaEventData`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, Default)]
pub struct HsaSyncVar {
    /// The variable's address.
    pub SyncVar: HsaSyncVarData,
    /// The variable's size in bytes.
    pub SyncVarSize: u64,
}

c_enum! {
    /// `HSA_EVENTTYPE_NODECHANGE_FLAGS`: node change kind.
    pub struct HSA_EVENTTYPE_NODECHANGE_FLAGS(u32) {
        /// Node added.
        HSA_EVENTTYPE_NODECHANGE_ADD = 0,
        /// Node removed.
        HSA_EVENTTYPE_NODECHANGE_REMOVE = 1,
        /// Forces a 32-bit enum.
        HSA_EVENTTYPE_NODECHANGE_SIZE = 0xFFFF_FFFF,
    }
}

/// `HsaNodeChange`: data of a node change event.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaNodeChange {
    /// Added or removed.
    pub Flags: HSA_EVENTTYPE_NODECHANGE_FLAGS,
}

c_enum! {
    /// `HSA_EVENTTYPE_DEVICESTATECHANGE_FLAGS`: device state change kind.
    pub struct HSA_EVENTTYPE_DEVICESTATECHANGE_FLAGS(u32) {
        /// Device started.
        HSA_EVENTTYPE_DEVICESTATUSCHANGE_START = 0,
        /// Device stopped.
        HSA_EVENTTYPE_DEVICESTATUSCHANGE_STOP = 1,
        /// Forces a 32-bit enum.
        HSA_EVENTTYPE_DEVICESTATUSCHANGE_SIZE = 0xFFFF_FFFF,
    }
}

/// `HsaDeviceStateChange`: data of a device state change event.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaDeviceStateChange {
    /// Node containing the device.
    pub NodeId: u32,
    /// CPU or GPU.
    pub Device: HSA_DEVICE,
    /// Started or stopped.
    pub Flags: HSA_EVENTTYPE_DEVICESTATECHANGE_FLAGS,
}

c_enum! {
    /// `HSA_EVENTID_MEMORYFLAGS`: severity of a memory fault.
    pub struct HSA_EVENTID_MEMORYFLAGS(u32) {
        /// Recoverable after page adjustment.
        HSA_EVENTID_MEMORY_RECOVERABLE = 0,
        /// Fatal to the process context.
        HSA_EVENTID_MEMORY_FATAL_PROCESS = 1,
        /// Fatal to every GPU VA context.
        HSA_EVENTID_MEMORY_FATAL_VM = 2,
    }
}

bitfield! {
    /// `HsaAccessAttributeFailure`: why a memory access failed (a plain
    /// bit-field struct in C, one 32-bit word).
    #[repr(transparent)]
    pub struct HsaAccessAttributeFailure(u32) {
        /// Page not present or supervisor page.
        NotPresent, set_NotPresent: 0..1;
        /// Write to a read-only page.
        ReadOnly, set_ReadOnly: 1..2;
        /// Execute on a no-execute page.
        NoExecute, set_NoExecute: 2..3;
        /// Host-only page.
        GpuAccess, set_GpuAccess: 3..4;
        /// RAS ECC failure.
        ECC, set_ECC: 4..5;
        /// The fault address is imprecise.
        Imprecise, set_Imprecise: 5..6;
        /// RAS error kind (0 none, 1 SRAM ECC, 2 poison, 3 hang).
        ErrorType, set_ErrorType: 6..9;
        /// Reserved, zero.
        Reserved, set_Reserved: 9..32;
    }
}

/// `HsaMemoryAccessFault`: data of a memory fault event.
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaMemoryAccessFault {
    /// Node of the faulting device.
    pub NodeId: u32,
    /// Faulting virtual address.
    pub VirtualAddress: u64,
    /// Failure attributes.
    pub Failure: HsaAccessAttributeFailure,
    /// Severity.
    pub Flags: HSA_EVENTID_MEMORYFLAGS,
}

/// `HsaEventDescriptor`: what event to create (in to `hsaKmtCreateEvent`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, Default)]
pub struct HsaEventDescriptor {
    /// Event kind.
    pub EventType: HSA_EVENTTYPE,
    /// Node of the GPU that is the event source.
    pub NodeId: u32,
    /// User-mode sync variable (may be null).
    pub SyncVar: HsaSyncVar,
}

c_enum! {
    /// `HsaEventTimeOut`: special wait timeouts (milliseconds otherwise).
    pub struct HsaEventTimeOut(u32) {
        /// Do not wait.
        HSA_EVENTTIMEOUT_IMMEDIATE = 0,
        /// Wait forever.
        HSA_EVENTTIMEOUT_INFINITE = 0xFFFF_FFFF,
    }
}

/// `HsaClockCounters`: clock snapshot (out of `hsaKmtGetClockCounters`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaClockCounters {
    /// GPU clock counter.
    pub GPUClockCounter: u64,
    /// CPU clock counter.
    pub CPUClockCounter: u64,
    /// System clock counter.
    pub SystemClockCounter: u64,
    /// System clock frequency in Hz.
    pub SystemClockFrequencyHz: u64,
}

// ---------------------------------------------------------------------------
// Performance counters
// ---------------------------------------------------------------------------

/// `HSA_UUID`: a GUID naming a profiling block.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HSA_UUID {
    /// First 32 bits.
    pub Data1: u32,
    /// Next 16 bits.
    pub Data2: u16,
    /// Next 16 bits.
    pub Data3: u16,
    /// Last 8 bytes.
    pub Data4: [u8; 8],
}

impl HSA_UUID {
    /// Builds a UUID from its parts, as the C `HSA_DEFINE_UUID` macro does.
    pub const fn new(dw: u32, w1: u16, w2: u16, b: [u8; 8]) -> HSA_UUID {
        HSA_UUID {
            Data1: dw,
            Data2: w1,
            Data3: w2,
            Data4: b,
        }
    }
}

macro_rules! uuids {
    ($($(#[$m:meta])* $name:ident = ($dw:expr, $w1:expr, $w2:expr, [$($b:expr),*]);)*) => {$(
        $(#[$m])*
        pub const $name: HSA_UUID = HSA_UUID::new($dw, $w1, $w2, [$($b),*]);
    )*};
}

uuids! {
    /// Profiling block: GPU colour buffer (CB).
    HSA_PROFILEBLOCK_AMD_CB = (0x9ba4_29c6, 0xaf2d, 0x4b38, [0xb3, 0x49, 0x15, 0x72, 0x71, 0xbe, 0xac, 0x6a]);
    /// Profiling block: CPF.
    HSA_PROFILEBLOCK_AMD_CPF = (0x2b0a_d2b5, 0x1c43, 0x4f46, [0xa7, 0xbc, 0xe1, 0x19, 0x41, 0x1e, 0xa6, 0xc9]);
    /// Profiling block: CPG.
    HSA_PROFILEBLOCK_AMD_CPG = (0x590e_c94d, 0x20f0, 0x448f, [0x8d, 0xff, 0x31, 0x6c, 0x67, 0x9d, 0xe7, 0xff]);
    /// Profiling block: DB.
    HSA_PROFILEBLOCK_AMD_DB = (0x3d1a_47fc, 0x0013, 0x4ed4, [0x83, 0x06, 0x82, 0x2c, 0xa0, 0xb7, 0xa6, 0xc2]);
    /// Profiling block: GDS.
    HSA_PROFILEBLOCK_AMD_GDS = (0xf592_76ec, 0x2526, 0x4bf8, [0x8e, 0xc0, 0x11, 0x8f, 0x77, 0x70, 0x0d, 0xc9]);
    /// Profiling block: GRBM.
    HSA_PROFILEBLOCK_AMD_GRBM = (0x8f00_933c, 0xc33d, 0x4801, [0x97, 0xb7, 0x70, 0x07, 0xf7, 0x85, 0x73, 0xad]);
    /// Profiling block: GRBMSE.
    HSA_PROFILEBLOCK_AMD_GRBMSE = (0x34eb_d8d7, 0x7c8b, 0x4d15, [0x88, 0xfa, 0x0e, 0x4e, 0x4a, 0xf5, 0x9a, 0xc1]);
    /// Profiling block: IA.
    HSA_PROFILEBLOCK_AMD_IA = (0x3427_6944, 0x4264, 0x4fcd, [0x9d, 0x6e, 0xae, 0x26, 0x45, 0x82, 0xec, 0x51]);
    /// Profiling block: memory controller (MC).
    HSA_PROFILEBLOCK_AMD_MC = (0x1390_0b57, 0x4956, 0x4d98, [0x81, 0xd0, 0x68, 0x52, 0x19, 0x37, 0xf5, 0x9c]);
    /// Profiling block: PASC.
    HSA_PROFILEBLOCK_AMD_PASC = (0xb0e7_fb5d, 0x0efc, 0x4744, [0xb5, 0x16, 0x5d, 0x23, 0xdc, 0x1f, 0xd5, 0x6c]);
    /// Profiling block: PASU.
    HSA_PROFILEBLOCK_AMD_PASU = (0x9a15_2b6a, 0x1fad, 0x45f2, [0xa5, 0xbf, 0xf1, 0x63, 0x82, 0x6b, 0xd0, 0xcd]);
    /// Profiling block: SPI.
    HSA_PROFILEBLOCK_AMD_SPI = (0xeda8_1044, 0xd62c, 0x47eb, [0xaf, 0x89, 0x4f, 0x6f, 0xbf, 0x3b, 0x38, 0xe0]);
    /// Profiling block: SRBM.
    HSA_PROFILEBLOCK_AMD_SRBM = (0x9f80_40e0, 0x6830, 0x4019, [0xac, 0xc8, 0x46, 0x3c, 0x9e, 0x44, 0x5b, 0x89]);
    /// Profiling block: shader sequencer (SQ).
    HSA_PROFILEBLOCK_AMD_SQ = (0xb5c3_96b6, 0xd310, 0x47e4, [0x86, 0xfc, 0x5c, 0xc3, 0x04, 0x3a, 0xf5, 0x08]);
    /// Profiling block: SX.
    HSA_PROFILEBLOCK_AMD_SX = (0xbdb8_d737, 0x43cc, 0x4162, [0xbe, 0x52, 0x51, 0xcf, 0xb8, 0x47, 0xbe, 0xaf]);
    /// Profiling block: TA.
    HSA_PROFILEBLOCK_AMD_TA = (0xc01e_e43d, 0xad92, 0x44b1, [0x8a, 0xb9, 0xbe, 0x5e, 0x69, 0x6c, 0xee, 0xa7]);
    /// Profiling block: texture cache (TCA).
    HSA_PROFILEBLOCK_AMD_TCA = (0x333e_393f, 0xe147, 0x4f49, [0xa6, 0xd1, 0x60, 0x91, 0x4c, 0x70, 0x86, 0xb0]);
    /// Profiling block: texture cache (TCC).
    HSA_PROFILEBLOCK_AMD_TCC = (0x848c_e855, 0xd805, 0x4566, [0xa8, 0xab, 0x73, 0xe8, 0x84, 0xcc, 0x6b, 0xff]);
    /// Profiling block: TCP.
    HSA_PROFILEBLOCK_AMD_TCP = (0xe10a_013b, 0x17d4, 0x4bf5, [0xb0, 0x89, 0x42, 0x95, 0x91, 0x05, 0x9b, 0x60]);
    /// Profiling block: TCS.
    HSA_PROFILEBLOCK_AMD_TCS = (0x4126_245c, 0x4d96, 0x4d1a, [0x8a, 0xed, 0xa9, 0x39, 0xd4, 0xcc, 0x8e, 0xc9]);
    /// Profiling block: TD.
    HSA_PROFILEBLOCK_AMD_TD = (0x7d7c_0fe4, 0xfe41, 0x4fea, [0x92, 0xc9, 0x45, 0x44, 0xd7, 0x70, 0x6d, 0xc6]);
    /// Profiling block: VGT.
    HSA_PROFILEBLOCK_AMD_VGT = (0x0b6a_8cb7, 0x7a01, 0x409f, [0xa2, 0x2c, 0x30, 0x14, 0x85, 0x4f, 0x13, 0x59]);
    /// Profiling block: WD.
    HSA_PROFILEBLOCK_AMD_WD = (0x0e17_6789, 0x46ed, 0x4b02, [0x97, 0x2a, 0x91, 0x6d, 0x2f, 0xac, 0x24, 0x4a]);
}

/// The UUID of each counter block of the thunk's `enum perf_block_id`,
/// indexed by block id (`HsaCounter::BlockIndex`, CB = 0 .. IOMMUv2 = 24):
/// what `hsaKmtPmcGetCounterProperties` reports as a block's
/// `BlockId`. CPC (1), which no counter table has, is all zeros; IOMMUv2
/// is 5.2.3's.
pub const PERF_BLOCK_UUIDS: [HSA_UUID; 25] = [
    HSA_PROFILEBLOCK_AMD_CB,
    HSA_UUID::new(0, 0, 0, [0; 8]),
    HSA_PROFILEBLOCK_AMD_CPF,
    HSA_PROFILEBLOCK_AMD_CPG,
    HSA_PROFILEBLOCK_AMD_DB,
    HSA_PROFILEBLOCK_AMD_GDS,
    HSA_PROFILEBLOCK_AMD_GRBM,
    HSA_PROFILEBLOCK_AMD_GRBMSE,
    HSA_PROFILEBLOCK_AMD_IA,
    HSA_PROFILEBLOCK_AMD_MC,
    HSA_PROFILEBLOCK_AMD_PASC,
    HSA_PROFILEBLOCK_AMD_PASU,
    HSA_PROFILEBLOCK_AMD_SPI,
    HSA_PROFILEBLOCK_AMD_SRBM,
    HSA_PROFILEBLOCK_AMD_SQ,
    HSA_PROFILEBLOCK_AMD_SX,
    HSA_PROFILEBLOCK_AMD_TA,
    HSA_PROFILEBLOCK_AMD_TCA,
    HSA_PROFILEBLOCK_AMD_TCC,
    HSA_PROFILEBLOCK_AMD_TCP,
    HSA_PROFILEBLOCK_AMD_TCS,
    HSA_PROFILEBLOCK_AMD_TD,
    HSA_PROFILEBLOCK_AMD_VGT,
    HSA_PROFILEBLOCK_AMD_WD,
    crate::rocm_5_2::HSA_PROFILEBLOCK_AMD_IOMMUV2,
];

c_enum! {
    /// `HSA_PROFILE_TYPE`: counter access kind.
    pub struct HSA_PROFILE_TYPE(u32) {
        /// Privileged, immediate.
        HSA_PROFILE_TYPE_PRIVILEGED_IMMEDIATE = 0,
        /// Privileged, streaming.
        HSA_PROFILE_TYPE_PRIVILEGED_STREAMING = 1,
        /// User-queue accessible, immediate.
        HSA_PROFILE_TYPE_NONPRIV_IMMEDIATE = 2,
        /// User-queue accessible, streaming.
        HSA_PROFILE_TYPE_NONPRIV_STREAMING = 3,
        /// Number of kinds.
        HSA_PROFILE_TYPE_NUM = 4,
        /// Forces a 32-bit enum.
        HSA_PROFILE_TYPE_SIZE = 0xFFFF_FFFF,
    }
}

bitfield! {
    /// `HsaCounterFlags`: counter properties (`ui32` over `Value`).
    #[repr(transparent)]
    pub struct HsaCounterFlags(u32) {
        /// Global counter (not per VMID, wave or CU).
        Global, set_Global: 0..1;
        /// Can be reset by software.
        Resettable, set_Resettable: 1..2;
        /// Read-only.
        ReadOnly, set_ReadOnly: 2..3;
        /// Can stream to a buffer.
        Stream, set_Stream: 3..4;
        /// Reserved.
        Reserved, set_Reserved: 4..32;
    }
}

/// `HsaCounter`: one performance counter (out, inside
/// `HsaCounterProperties`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaCounter {
    /// Access kind.
    pub Type: HSA_PROFILE_TYPE,
    /// Counter register offset.
    pub CounterId: u64,
    /// Number of meaningful bits.
    pub CounterSizeInBits: u32,
    /// Value mask.
    pub CounterMask: u64,
    /// Properties.
    pub Flags: HsaCounterFlags,
    /// Index of the block owning the counter.
    pub BlockIndex: u32,
}

/// `HsaCounterBlockProperties`: one profiling block; `Counters` is the
/// first element of a `NumCounters`-long trailing array.
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaCounterBlockProperties {
    /// Block identity.
    pub BlockId: HSA_UUID,
    /// Number of counters that follow.
    pub NumCounters: u32,
    /// Counters usable at once.
    pub NumConcurrent: u32,
    /// Start of the counter array.
    pub Counters: [HsaCounter; 1],
}

/// `HsaCounterProperties`: counters of a node (out of
/// `hsaKmtPmcGetCounterProperties`); `Blocks` is the first element of a
/// `NumBlocks`-long trailing array of variable-size blocks.
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaCounterProperties {
    /// Number of blocks.
    pub NumBlocks: u32,
    /// Blocks queryable at once.
    pub NumConcurrent: u32,
    /// Start of the block array.
    pub Blocks: [HsaCounterBlockProperties; 1],
}

/// `HsaPmcTraceRoot`: a registered trace (out of `hsaKmtPmcRegisterTrace`).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HsaPmcTraceRoot {
    /// Minimum trace buffer size (page aligned).
    pub TraceBufferMinSizeBytes: u64,
    /// Number of passes needed.
    pub NumberOfPasses: u32,
    /// Trace id.
    pub TraceId: HSATraceId,
}

// ---------------------------------------------------------------------------
// Tiling, memory ranges, SVM
// ---------------------------------------------------------------------------

/// `HsaGpuTileConfig`: tiling configuration (in/out of
/// `hsaKmtGetTileConfig`: the caller provides the arrays and their
/// capacities, the thunk fills them and the counts).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaGpuTileConfig {
    /// Tile config array (caller-provided).
    pub TileConfig: *mut u32,
    /// Macro tile config array (caller-provided).
    pub MacroTileConfig: *mut u32,
    /// In: capacity of `TileConfig`; out: entries written.
    pub NumTileConfigs: u32,
    /// In: capacity of `MacroTileConfig`; out: entries written.
    pub NumMacroTileConfigs: u32,
    /// GB_ADDR_CONFIG value.
    pub GbAddrConfig: u32,
    /// Number of banks.
    pub NumBanks: u32,
    /// Number of ranks.
    pub NumRanks: u32,
    /// Reserved.
    pub Reserved: [u32; 7],
}

/// `HsaMemoryRange`: an address range (in to the process VM read/write
/// calls).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaMemoryRange {
    /// Start address.
    pub MemoryAddress: *mut c_void,
    /// Length in bytes.
    pub SizeInBytes: u64,
}

c_enum! {
    /// `HSA_SVM_ATTR_TYPE`: SVM attribute kind.
    pub struct HSA_SVM_ATTR_TYPE(u32) {
        /// Preferred location (gpu id, 0 system, INVALID_NODEID don't care).
        HSA_SVM_ATTR_PREFERRED_LOC = 0,
        /// Prefetch location; setting it migrates immediately.
        HSA_SVM_ATTR_PREFETCH_LOC = 1,
        /// The gpu id may access the range.
        HSA_SVM_ATTR_ACCESS = 2,
        /// The gpu id may access the range in place.
        HSA_SVM_ATTR_ACCESS_IN_PLACE = 3,
        /// The gpu id may not access the range.
        HSA_SVM_ATTR_NO_ACCESS = 4,
        /// Flags to set (`HSA_SVM_FLAGS`).
        HSA_SVM_ATTR_SET_FLAGS = 5,
        /// Flags to clear.
        HSA_SVM_ATTR_CLR_FLAGS = 6,
        /// Migration granularity (log2 pages).
        HSA_SVM_ATTR_GRANULARITY = 7,
    }
}

/// `HSA_SVM_ATTRIBUTE`: one SVM attribute (in/out of `hsaKmtSVMSetAttr`
/// and `hsaKmtSVMGetAttr`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HSA_SVM_ATTRIBUTE {
    /// Attribute kind (`HSA_SVM_ATTR_TYPE`).
    pub r#type: u32,
    /// Attribute value.
    pub value: u32,
}

zeroed_default!(
    HsaCComputeProperties,
    HsaUserContextSaveAreaHeader,
    HsaQueueReport,
    HsaDbgWaveMessageAMD,
    HsaDbgWaveMessage,
    HsaGpuTileConfig,
    HsaMemoryRange,
);

// ---------------------------------------------------------------------------
// Helpers shared by the per-generation node property structs
// ---------------------------------------------------------------------------

/// Decodes a NUL-terminated UTF-16 name (`HsaNodeProperties::MarketingName`).
pub fn utf16_name(name: &[u16]) -> String {
    let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    String::from_utf16_lossy(&name[..end])
}

/// Decodes a NUL-terminated byte name (`HsaNodeProperties::AMDName`).
pub fn byte_name(name: &[u8]) -> String {
    let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    String::from_utf8_lossy(&name[..end]).into_owned()
}

/// Encodes `s` as UTF-16 into `out`, truncated so that a NUL terminator
/// always fits, and zero-fills the rest.
pub fn set_utf16_name(out: &mut [u16], s: &str) {
    out.fill(0);
    let cap = out.len().saturating_sub(1);
    for (o, c) in out[..cap].iter_mut().zip(s.encode_utf16()) {
        *o = c;
    }
}

/// Copies the bytes of `s` into `out`, truncated so that a NUL terminator
/// always fits, and zero-fills the rest.
pub fn set_byte_name(out: &mut [u8], s: &str) {
    out.fill(0);
    let n = s.len().min(out.len().saturating_sub(1));
    out[..n].copy_from_slice(&s.as_bytes()[..n]);
}

/// Adds name accessors to a generation's `HsaNodeProperties`.
macro_rules! node_name_helpers {
    ($t:ty) => {
        impl $t {
            /// `MarketingName` decoded from UTF-16 (up to the first NUL).
            pub fn marketing_name(&self) -> String {
                let n = self.MarketingName;
                $crate::common::utf16_name(&n)
            }

            /// Stores `s` into `MarketingName` (truncated, NUL-terminated).
            pub fn set_marketing_name(&mut self, s: &str) {
                let mut n = self.MarketingName;
                $crate::common::set_utf16_name(&mut n, s);
                self.MarketingName = n;
            }

            /// `AMDName` decoded as text (up to the first NUL).
            pub fn amd_name(&self) -> String {
                let n = self.AMDName;
                $crate::common::byte_name(&n)
            }

            /// Stores `s` into `AMDName` (truncated, NUL-terminated).
            pub fn set_amd_name(&mut self, s: &str) {
                let mut n = self.AMDName;
                $crate::common::set_byte_name(&mut n, s);
                self.AMDName = n;
            }
        }
    };
}

/// Declares a generation's `HsaEventData` and `HsaEvent` around the
/// `HsaEventDataUnion` in scope at the call site (the union is what
/// differs between generations).
macro_rules! event_data_types {
    () => {
        /// `HsaEventData`: event kind, kind-specific data and thunk-internal
        /// words (out of `hsaKmtCreateEvent` inside `HsaEvent`).
        #[repr(C, packed(4))]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct HsaEventData {
            /// Event kind.
            pub EventType: $crate::common::HSA_EVENTTYPE,
            /// Kind-specific data; which member is valid follows `EventType`.
            pub EventData: HsaEventDataUnion,
            /// Thunk-internal (OS event handle).
            pub HWData1: u64,
            /// Thunk-internal (hardware address: event page slot).
            pub HWData2: u64,
            /// Thunk-internal (hardware data: event slot index / trigger).
            pub HWData3: u32,
        }

        /// `HsaEvent`: an event object allocated by the thunk (out of
        /// `hsaKmtCreateEvent`, in to the set/reset/wait calls).
        #[repr(C, packed(4))]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct HsaEvent {
            /// Event id.
            pub EventId: $crate::common::HSA_EVENTID,
            /// Event data.
            pub EventData: HsaEventData,
        }
    };
}

/// Declares a generation's `HsaPointerInfo` around the `HsaMemFlags` and
/// `HSA_POINTER_TYPE` in scope at the call site.
macro_rules! pointer_info_type {
    () => {
        /// `HsaPointerInfo`: what the thunk knows about an address (out of
        /// `hsaKmtQueryPointerInfo`). The node arrays point into thunk memory.
        #[repr(C, packed(4))]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct HsaPointerInfo {
            /// How the memory was obtained.
            pub Type: HSA_POINTER_TYPE,
            /// Node holding the memory.
            pub Node: u32,
            /// Allocation flags.
            pub MemFlags: HsaMemFlags,
            /// CPU start address.
            pub CPUAddress: *mut ::core::ffi::c_void,
            /// GPU start address.
            pub GPUAddress: u64,
            /// Size in bytes.
            pub SizeInBytes: u64,
            /// Number of entries in `RegisteredNodes`.
            pub NRegisteredNodes: u32,
            /// Number of entries in `MappedNodes`.
            pub NMappedNodes: u32,
            /// Nodes the memory is registered to.
            pub RegisteredNodes: *const u32,
            /// Nodes the memory is mapped to.
            pub MappedNodes: *const u32,
            /// User data set with `hsaKmtSetMemoryUserData`.
            pub UserData: *mut ::core::ffi::c_void,
        }

        zeroed_default!(HsaPointerInfo);
    };
}

/// Adds pointer views of the anonymous pointer/integer unions of a
/// generation's `HsaQueueResource`.
macro_rules! queue_resource_accessors {
    ($t:ty) => {
        impl $t {
            /// The C member `Queue_DoorBell` (doorbell as a 32-bit pointer).
            pub fn Queue_DoorBell(&self) -> *mut u32 {
                self.QueueDoorBell as usize as *mut u32
            }
            /// The C member `Queue_DoorBell_aql` (doorbell as a 64-bit pointer).
            pub fn Queue_DoorBell_aql(&self) -> *mut u64 {
                self.QueueDoorBell as usize as *mut u64
            }
            /// The C member `Queue_write_ptr`.
            pub fn Queue_write_ptr(&self) -> *mut u32 {
                self.QueueWptrValue as usize as *mut u32
            }
            /// The C member `Queue_write_ptr_aql`.
            pub fn Queue_write_ptr_aql(&self) -> *mut u64 {
                self.QueueWptrValue as usize as *mut u64
            }
            /// The C member `Queue_read_ptr`.
            pub fn Queue_read_ptr(&self) -> *mut u32 {
                self.QueueRptrValue as usize as *mut u32
            }
            /// The C member `Queue_read_ptr_aql`.
            pub fn Queue_read_ptr_aql(&self) -> *mut u64 {
                self.QueueRptrValue as usize as *mut u64
            }
        }
    };
}

// ---------------------------------------------------------------------------
// Shared parts of types that differ between generations
// ---------------------------------------------------------------------------

/// Declares a generation's `HSA_CAPABILITY`: bits 0..30 are the same in
/// every generation; the caller supplies bits 30..32.
macro_rules! hsa_capability {
    ($(#[$m:meta])* ; $($extra:tt)*) => {
        bitfield! {
            $(#[$m])*
            #[repr(transparent)]
            pub struct HSA_CAPABILITY(u32) {
                /// The node may be removed by a system action.
                HotPluggable, set_HotPluggable: 0..1;
                /// An ATS/PRI 1.1 translation agent (IOMMUv2) is present.
                HSAMMUPresent, set_HSAMMUPresent: 1..2;
                /// The GPU also renders the OS user interface.
                SharedWithGraphics, set_SharedWithGraphics: 2..3;
                /// Queue sizes must be powers of two.
                QueueSizePowerOfTwo, set_QueueSizePowerOfTwo: 3..4;
                /// Queue sizes must be below 4 GiB.
                QueueSize32bit, set_QueueSize32bit: 4..5;
                /// Queue idle notification is supported.
                QueueIdleEvent, set_QueueIdleEvent: 5..6;
                /// Limited VA range (typically 40 bits).
                VALimit, set_VALimit: 6..7;
                /// Watchpoints are available.
                WatchPointsSupported, set_WatchPointsSupported: 7..8;
                /// log2 of the number of watchpoints.
                WatchPointsTotalBits, set_WatchPointsTotalBits: 8..12;
                /// Doorbell kind (0 pre-1.0, 1 1.0).
                DoorbellType, set_DoorbellType: 12..14;
                /// AQL queues need a double VA mapping.
                AQLQueueDoubleMap, set_AQLQueueDoubleMap: 14..15;
                /// Debug trap supported.
                DebugTrapSupported, set_DebugTrapSupported: 15..16;
                /// Wave launch trap override supported.
                WaveLaunchTrapOverrideSupported, set_WaveLaunchTrapOverrideSupported: 16..17;
                /// Wave launch mode supported.
                WaveLaunchModeSupported, set_WaveLaunchModeSupported: 17..18;
                /// Precise memory operations supported.
                PreciseMemoryOperationsSupported, set_PreciseMemoryOperationsSupported: 18..19;
                /// Deprecated; must read 0.
                DEPRECATED_SRAM_EDCSupport, set_DEPRECATED_SRAM_EDCSupport: 19..20;
                /// DRAM/HBM EDC/ECC active.
                Mem_EDCSupport, set_Mem_EDCSupport: 20..21;
                /// RAS event notification available.
                RASEventNotify, set_RASEventNotify: 21..22;
                /// ASIC revision.
                ASICRevision, set_ASICRevision: 22..26;
                /// SRAM EDC/ECC active.
                SRAM_EDCSupport, set_SRAM_EDCSupport: 26..27;
                /// The SVM API is supported.
                SVMAPISupported, set_SVMAPISupported: 27..28;
                /// The host can access device memory coherently.
                CoherentHostAccess, set_CoherentHostAccess: 28..29;
                /// The scheduler firmware supports debugging.
                DebugSupportedFirmware, set_DebugSupportedFirmware: 29..30;
                $($extra)*
            }
        }
    };
}

/// Declares a generation's `HsaMemFlags`: bits 0..18 are the same in every
/// generation; the caller supplies the rest.
macro_rules! hsa_mem_flags {
    ($(#[$m:meta])* ; $($extra:tt)*) => {
        bitfield! {
            $(#[$m])*
            #[repr(transparent)]
            pub struct HsaMemFlags(u32) {
                /// Non-pageable memory.
                NonPaged, set_NonPaged: 0..1;
                /// Caching (`HSA_CACHING_TYPE`).
                CachePolicy, set_CachePolicy: 1..3;
                /// Read-only.
                ReadOnly, set_ReadOnly: 3..4;
                /// Page size (`HSA_PAGE_SIZE`).
                PageSize, set_PageSize: 4..6;
                /// The host may access the memory.
                HostAccess, set_HostAccess: 6..7;
                /// Do not fall back to system memory.
                NoSubstitute, set_NoSubstitute: 7..8;
                /// Allocate from GDS.
                GDSMemory, set_GDSMemory: 8..9;
                /// Allocate from scratch.
                Scratch, set_Scratch: 9..10;
                /// All atomics must work on the memory.
                AtomicAccessFull, set_AtomicAccessFull: 10..11;
                /// PCIe atomics (swap, CAS, fetch-add) must work.
                AtomicAccessPartial, set_AtomicAccessPartial: 11..12;
                /// Executable memory.
                ExecuteAccess, set_ExecuteAccess: 12..13;
                /// Coarse-grained coherence.
                CoarseGrain, set_CoarseGrain: 13..14;
                /// The memory holds an AQL queue.
                AQLQueueMemory, set_AQLQueueMemory: 14..15;
                /// Allocate at the given virtual address.
                FixedAddress, set_FixedAddress: 15..16;
                /// Do not bind system memory to a NUMA node.
                NoNUMABind, set_NoNUMABind: 16..17;
                /// Uncached fine-grained memory.
                Uncached, set_Uncached: 17..18;
                $($extra)*
            }
        }
    };
}

/// Declares a generation's `HSA_QUEUE_TYPE`; the caller appends values.
macro_rules! hsa_queue_type {
    ($(#[$m:meta])* ; $($extra:tt)*) => {
        c_enum! {
            $(#[$m])*
            pub struct HSA_QUEUE_TYPE(u32) {
                /// PM4 compute queue.
                HSA_QUEUE_COMPUTE = 1,
                /// PCIe-optimised SDMA queue.
                HSA_QUEUE_SDMA = 2,
                /// Reserved: multimedia decode.
                HSA_QUEUE_MULTIMEDIA_DECODE = 3,
                /// Reserved: multimedia encode.
                HSA_QUEUE_MULTIMEDIA_ENCODE = 4,
                /// xGMI-optimised SDMA queue.
                HSA_QUEUE_SDMA_XGMI = 5,
                /// PM4 compute queue that may use OS graphics resources.
                HSA_QUEUE_COMPUTE_OS = 11,
                /// SDMA queue that may use OS graphics resources.
                HSA_QUEUE_SDMA_OS = 12,
                /// Reserved: multimedia decode (OS).
                HSA_QUEUE_MULTIMEDIA_DECODE_OS = 13,
                /// Reserved: multimedia encode (OS).
                HSA_QUEUE_MULTIMEDIA_ENCODE_OS = 14,
                /// AQL compute queue.
                HSA_QUEUE_COMPUTE_AQL = 21,
                /// AQL DMA queue.
                HSA_QUEUE_DMA_AQL = 22,
                /// AQL xGMI DMA queue.
                HSA_QUEUE_DMA_AQL_XGMI = 23,
                /// Forces a 32-bit enum.
                HSA_QUEUE_TYPE_SIZE = 0xFFFF_FFFF,
                $($extra)*
            }
        }
    };
}

/// Declares a generation's `HSA_POINTER_TYPE`; the caller appends values.
macro_rules! hsa_pointer_type {
    ($(#[$m:meta])* ; $($extra:tt)*) => {
        c_enum! {
            $(#[$m])*
            pub struct HSA_POINTER_TYPE(u32) {
                /// Unknown to the thunk.
                HSA_POINTER_UNKNOWN = 0,
                /// Allocated with `hsaKmtAllocMemory` (not scratch).
                HSA_POINTER_ALLOCATED = 1,
                /// Registered user pointer.
                HSA_POINTER_REGISTERED_USER = 2,
                /// Registered graphics buffer.
                HSA_POINTER_REGISTERED_GRAPHICS = 3,
                /// Registered shared (IPC) buffer.
                HSA_POINTER_REGISTERED_SHARED = 4,
                $($extra)*
            }
        }
    };
}

/// Declares a generation's `HSA_SVM_FLAGS`; the caller appends values.
macro_rules! hsa_svm_flags {
    ($(#[$m:meta])* ; $($extra:tt)*) => {
        c_enum! {
            $(#[$m])*
            pub struct HSA_SVM_FLAGS(u32) {
                /// Guarantee host access.
                HSA_SVM_FLAG_HOST_ACCESS = 0x1,
                /// Fine-grained coherence between all devices with access.
                HSA_SVM_FLAG_COHERENT = 0x2,
                /// Any GPU of the same hive may be the preferred device.
                HSA_SVM_FLAG_HIVE_LOCAL = 0x4,
                /// GPUs only read (allows replication).
                HSA_SVM_FLAG_GPU_RO = 0x8,
                /// GPUs may execute from the range.
                HSA_SVM_FLAG_GPU_EXEC = 0x10,
                /// GPUs mostly read.
                HSA_SVM_FLAG_GPU_READ_MOSTLY = 0x20,
                $($extra)*
            }
        }
    };
}

/// Declares a generation's `HsaNodeProperties` (`#pragma pack(4)`): the
/// fields every generation has, in header order, with the caller's own
/// fields spliced in at the places where generations differ:
/// `after_simds` (after `NumFComputeCores`), `after_capability`,
/// `after_engine_id`, `after_gws` (the byte after `NumGws`: `Reserved2` in
/// 5.2.3, `Integrated` later) and `tail` (after `SGPRSizePerCU`).
macro_rules! node_properties_struct {
    (
        $(#[$m:meta])*
        after_simds { $($simds:tt)* }
        after_capability { $($cap:tt)* }
        after_engine_id { $($engine:tt)* }
        after_gws { $($gws:tt)* }
        tail { $($tail:tt)* }
    ) => {
        $(#[$m])*
        #[repr(C, packed(4))]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct HsaNodeProperties {
            /// Number of CPU cores (0 on a discrete GPU node).
            pub NumCPUCores: u32,
            /// Number of GPU SIMDs (0 on a CPU-only node).
            pub NumFComputeCores: u32,
            $($simds)*
            /// Number of memory banks (`hsaKmtGetNodeMemoryProperties`).
            pub NumMemoryBanks: u32,
            /// Number of caches (`hsaKmtGetNodeCacheProperties`).
            pub NumCaches: u32,
            /// Number of IO links (`hsaKmtGetNodeIoLinkProperties`).
            pub NumIOLinks: u32,
            /// First CPU core id.
            pub CComputeIdLo: u32,
            /// First GPU compute unit id.
            pub FComputeIdLo: u32,
            /// Capabilities.
            pub Capability: HSA_CAPABILITY,
            $($cap)*
            /// Maximum waves per SIMD.
            pub MaxWavesPerSIMD: u32,
            /// LDS size in KiB.
            pub LDSSizeInKB: u32,
            /// GDS size in KiB.
            pub GDSSizeInKB: u32,
            /// Wavefront size (32 or 64).
            pub WaveFrontSize: u32,
            /// Number of shader engines.
            pub NumShaderBanks: u32,
            /// SIMD arrays per engine.
            pub NumArrays: u32,
            /// Compute units per array.
            pub NumCUPerArray: u32,
            /// SIMDs per compute unit.
            pub NumSIMDPerCU: u32,
            /// Scratch wave slots per CU (0 = unlimited).
            pub MaxSlotsScratchCU: u32,
            /// Engine / firmware identification.
            pub EngineId: HSA_ENGINE_ID,
            $($engine)*
            /// PCI vendor id (0 on CPU nodes).
            pub VendorId: u16,
            /// PCI device id (0 on CPU nodes).
            pub DeviceId: u16,
            /// PCI bus/device/function.
            pub LocationId: u32,
            /// Local memory size in bytes.
            pub LocalMemSize: u64,
            /// Maximum GPU engine clock (MHz).
            pub MaxEngineClockMhzFCompute: u32,
            /// Maximum CPU engine clock (MHz).
            pub MaxEngineClockMhzCCompute: u32,
            /// DRM render node minor number.
            pub DrmRenderMinor: i32,
            /// Marketing name, UTF-16, NUL-terminated.
            pub MarketingName: [u16; $crate::common::HSA_PUBLIC_NAME_SIZE],
            /// AMD internal name, ASCII, NUL-terminated.
            pub AMDName: [u8; $crate::common::HSA_PUBLIC_NAME_SIZE],
            /// SDMA microcode versions.
            pub uCodeEngineVersions: $crate::common::HSA_ENGINE_VERSION,
            /// Debug properties.
            pub DebugProperties: $crate::common::HSA_DEBUG_PROPERTIES,
            /// xGMI hive id.
            pub HiveID: u64,
            /// PCIe-optimised SDMA engines.
            pub NumSdmaEngines: u32,
            /// xGMI-optimised SDMA engines.
            pub NumSdmaXgmiEngines: u32,
            /// SDMA queues per engine.
            pub NumSdmaQueuesPerEngine: u8,
            /// Compute queues.
            pub NumCpQueues: u8,
            /// GWS barriers.
            pub NumGws: u8,
            $($gws)*
            /// PCI domain.
            pub Domain: u32,
            /// Unique immutable device id.
            pub UniqueID: u64,
            /// VGPR bytes per CU.
            pub VGPRSizePerCU: u32,
            /// SGPR bytes per CU.
            pub SGPRSizePerCU: u32,
            $($tail)*
        }

        node_name_helpers!(HsaNodeProperties);
    };
}

/// Declares a generation's `HsaCacheProperties`: the shared fields, then
/// the caller's trailing ones.
macro_rules! cache_properties_struct {
    ($(#[$m:meta])* ; $($tail:tt)*) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct HsaCacheProperties {
            /// Processor id the cache belongs to.
            pub ProcessorIdLow: u32,
            /// Cache level (1, 2, ...).
            pub CacheLevel: u32,
            /// Size (KiB).
            pub CacheSize: u32,
            /// Line size in bytes.
            pub CacheLineSize: u32,
            /// Lines per tag.
            pub CacheLinesPerTag: u32,
            /// Associativity.
            pub CacheAssociativity: u32,
            /// Latency (ns).
            pub CacheLatency: u32,
            /// Kind of cache.
            pub CacheType: $crate::common::HsaCacheType,
            /// Processors sharing the cache, one bit each.
            pub SiblingMap: [u32; $crate::common::HSA_CPU_SIBLINGS],
            $($tail)*
        }
    };
}

/// Declares a generation's `HsaIoLinkProperties`: the shared fields, with
/// the caller's fields inserted before `Flags` (the last field).
macro_rules! io_link_properties_struct {
    ($(#[$m:meta])* ; $($before_flags:tt)*) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct HsaIoLinkProperties {
            /// Bus type.
            pub IoLinkType: $crate::common::HSA_IOLINKTYPE,
            /// Bus interface major version.
            pub VersionMajor: u32,
            /// Bus interface minor version.
            pub VersionMinor: u32,
            /// Source node.
            pub NodeFrom: u32,
            /// Destination node.
            pub NodeTo: u32,
            /// Weight (relative distance).
            pub Weight: u32,
            /// Minimum latency (ns).
            pub MinimumLatency: u32,
            /// Maximum latency (ns).
            pub MaximumLatency: u32,
            /// Minimum bandwidth (MB/s).
            pub MinimumBandwidth: u32,
            /// Maximum bandwidth (MB/s).
            pub MaximumBandwidth: u32,
            /// Recommended transfer size (bytes).
            pub RecTransferSize: u32,
            $($before_flags)*
            /// Link flags.
            pub Flags: $crate::common::HSA_LINKPROPERTY,
        }
    };
}

/// Declares a generation's `HsaGraphicsResourceInfo`: the shared fields,
/// then the caller's (the word after `MetadataSizeInBytes` and anything
/// after it).
macro_rules! graphics_resource_info_struct {
    ($(#[$m:meta])* ; $($tail:tt)*) => {
        $(#[$m])*
        #[repr(C, packed(4))]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct HsaGraphicsResourceInfo {
            /// Address to use with `hsaKmtMapMemoryToGPU(Nodes)` (out).
            pub MemoryAddress: *mut ::core::ffi::c_void,
            /// Buffer size (out).
            pub SizeInBytes: u64,
            /// Metadata owned by the thunk (out).
            pub Metadata: *const ::core::ffi::c_void,
            /// Size of the metadata (out).
            pub MetadataSizeInBytes: u32,
            $($tail)*
        }
    };
}

/// Declares a generation's `HsaQueueInfo`: the shared fields, then the
/// caller's trailing ones.
macro_rules! queue_info_struct {
    ($(#[$m:meta])* ; $($tail:tt)*) => {
        $(#[$m])*
        #[repr(C, packed(4))]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct HsaQueueInfo {
            /// Hardware-specific error state.
            pub QueueDetailError: u32,
            /// Hardware-specific queue type (0 = none).
            pub QueueTypeExtended: u32,
            /// Bits in `CUMaskInfo` (multiple of 32).
            pub NumCUAssigned: u32,
            /// CU assignment bit array.
            pub CUMaskInfo: *mut u32,
            /// User context save area.
            pub UserContextSaveArea: *mut u32,
            /// Size of the save area.
            pub SaveAreaSizeInBytes: u64,
            /// Control stack top.
            pub ControlStackTop: *mut u32,
            /// Bytes of control stack in use.
            pub ControlStackUsedInBytes: u64,
            /// Save area header.
            pub SaveAreaHeader: *mut $crate::common::HsaUserContextSaveAreaHeader,
            /// Reserved.
            pub Reserved2: u64,
            $($tail)*
        }
    };
}

/// Declares a generation's `HsaQueueResource` (the three anonymous
/// pointer/value unions of the header stored as their 64-bit members,
/// the pointer members as methods): the shared fields, then the caller's
/// trailing ones.
macro_rules! queue_resource_struct {
    ($(#[$m:meta])* ; $($tail:tt)*) => {
        $(#[$m])*
        #[repr(C, packed(4))]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct HsaQueueResource {
            /// Queue id.
            pub QueueId: $crate::common::HSA_QUEUEID,
            /// Doorbell address (union with `Queue_DoorBell(_aql)`).
            pub QueueDoorBell: u64,
            /// Write pointer address (union with `Queue_write_ptr(_aql)`).
            pub QueueWptrValue: u64,
            /// Read pointer address (union with `Queue_read_ptr(_aql)`).
            pub QueueRptrValue: u64,
            /// Exception bits signal payload.
            pub ErrorReason: *mut i64,
            $($tail)*
        }

        queue_resource_accessors!(HsaQueueResource);
    };
}

/// Declares a generation's `HsaEventDataUnion` (the C member
/// `HsaEventData::EventData`), then its `HsaEventData` and `HsaEvent`:
/// the members every generation has, then the caller's.
macro_rules! event_data_union {
    ($(#[$m:meta])* ; $($extra:tt)*) => {
        $(#[$m])*
        #[repr(C, packed(4))]
        #[derive(Clone, Copy)]
        pub union HsaEventDataUnion {
            /// Signal and other events: the sync variable.
            pub SyncVar: $crate::common::HsaSyncVar,
            /// Node change events.
            pub NodeChangeState: $crate::common::HsaNodeChange,
            /// Device state change events.
            pub DeviceState: $crate::common::HsaDeviceStateChange,
            /// Memory fault events.
            pub MemoryAccessFault: $crate::common::HsaMemoryAccessFault,
            $($extra)*
        }

        impl HsaEventDataUnion {
            /// The 20 raw bytes of the union.
            pub fn bytes(&self) -> [u8; 20] {
                // SAFETY: the union is 20 bytes of plain integer data
                // (checked by the layout tests); any bit pattern is a
                // valid byte array.
                unsafe { ::core::mem::transmute::<HsaEventDataUnion, [u8; 20]>(*self) }
            }
        }

        impl ::core::fmt::Debug for HsaEventDataUnion {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                write!(f, "HsaEventDataUnion({:02x?})", self.bytes())
            }
        }

        zeroed_default!(HsaEventDataUnion);

        event_data_types!();
    };
}
