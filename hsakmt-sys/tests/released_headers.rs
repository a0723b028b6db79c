//! The hsakmt C types of the generations with an installable header,
//! checked against that header by a C probe: size, alignment and every
//! field offset of every struct and union (nested union members by
//! designator), every enum value and `#define` constant, every
//! profiling-block UUID, and the position and width of every bit field (C
//! assigns the field's maximum value and prints the word; the Rust setter
//! must give the same word). A scan of the header then asserts that every
//! typedef, enumerator, numeric `#define`, UUID and bit field in it was
//! checked.
//!
//! - `rocm_5_2` against Debian 12's `/usr/include/hsakmttypes.h`
//!   (libhsakmt-dev 5.2.3, installed on the build machine);
//! - `rocm_6_2` against Debian 13's `hsakmt/hsakmttypes.h` (libhsakmt-dev
//!   6.2.4), taken from the Debian 13 root file system that `cargo xtask`
//!   keeps under `target/rootfs/trixie/root` (or from the include directory
//!   named by `KFD_RS_HSAKMT_6_2_INCLUDE`).

use hsakmt_sys::{common as c, rocm_5_2 as r52, rocm_6_2 as r62, since_6_2 as s62, BitField};
use layout_probe::{layout, Probe};
use std::collections::BTreeSet;
use std::mem::{offset_of, size_of};
use std::path::PathBuf;

/// Names (typedefs, enumerators, constants, bit fields as `Type.field`)
/// that the probe checked.
#[derive(Default)]
struct Seen(BTreeSet<String>);

impl Seen {
    fn add(&mut self, name: &str) {
        self.0.insert(name.to_string());
    }
}

/// Registers a C enum: its size and alignment, and every named value.
fn enum_values<T: Copy>(p: &mut Probe, seen: &mut Seen, ctype: &str, values: &[(&str, T)])
where
    i128: From<Raw<T>>,
{
    p.layout::<T>(ctype, &[]);
    seen.add(ctype);
    for (name, v) in values {
        p.constant(name, i128::from(Raw(*v)));
        seen.add(name);
    }
}

/// Adapter from an enum newtype to its raw integer (for `enum_values`).
struct Raw<T>(T);

macro_rules! raw_from {
    ($($t:ty => $int:ty),* $(,)?) => {$(
        impl From<Raw<$t>> for i128 {
            fn from(r: Raw<$t>) -> i128 {
                // The newtypes are repr(transparent) over $int.
                let v: $int = r.0 .0;
                v as i128
            }
        }
    )*};
}

raw_from!(
    c::HSAKMT_STATUS => u32,
    c::HSA_HEAPTYPE => u32,
    c::HSA_IOLINKTYPE => u32,
    c::HSA_CACHING_TYPE => u32,
    c::HSA_PAGE_SIZE => u32,
    c::HSA_DEVICE => u32,
    c::HSA_QUEUE_PRIORITY => i64,
    c::HSA_DBG_WAVEOP => u32,
    c::HSA_DBG_WAVEMODE => u32,
    c::HSA_DBG_WAVEMSG_TYPE => u32,
    c::HSA_DBG_WATCH_MODE => u32,
    c::HSA_DBG_TRAP_OVERRIDE => u32,
    c::HSA_DBG_TRAP_MASK => u32,
    c::HSA_DBG_WAVE_LAUNCH_MODE => u32,
    c::HSA_DBG_NODE_CONTROL => u32,
    c::HSA_EVENTTYPE => u32,
    c::HSA_DEBUG_EVENT_TYPE => u32,
    c::HSA_EVENTTYPE_NODECHANGE_FLAGS => u32,
    c::HSA_EVENTTYPE_DEVICESTATECHANGE_FLAGS => u32,
    c::HSA_EVENTID_MEMORYFLAGS => u32,
    c::HsaEventTimeOut => u32,
    c::HSA_PROFILE_TYPE => u32,
    c::HSA_SVM_ATTR_TYPE => u32,
    r52::HSA_QUEUE_TYPE => u32,
    r52::HSA_POINTER_TYPE => u32,
    r52::HSA_SVM_FLAGS => u32,
    r62::HSA_QUEUE_TYPE => u32,
    s62::HSA_POINTER_TYPE => u32,
    s62::HSA_SVM_FLAGS => u32,
    s62::HSA_DBG_TRAP_EXCEPTION_CODE => u32,
    s62::HSA_EVENTID_HW_EXCEPTION_CAUSE => u32,
    s62::HSA_EVENT_TYPE => u32,
    s62::HSA_MIGRATE_TRIGGERS => u32,
    s62::HSA_QUEUE_EVICTION_TRIGGERS => u32,
    s62::HSA_SVM_UNMAP_TRIGGERS => u32,
    s62::HSA_PC_SAMPLING_METHOD_KIND => u32,
    s62::HSA_PC_SAMPLING_UNIT_INTERVAL => u32,
);

/// Registers a bit-field word: size and alignment, then for every field a
/// C statement expression that zeroes the object, assigns the field's
/// maximum through `prefix` (`"ui32."` or `""`) and yields the raw word.
fn bitfield<T, V>(
    p: &mut Probe,
    seen: &mut Seen,
    ctype: &str,
    prefix: &str,
    fields: &[BitField<T, V>],
) where
    T: Default + Copy,
    V: Copy + Into<u64> + TryFrom<u64> + PartialEq + std::fmt::Debug,
    <V as TryFrom<u64>>::Error: std::fmt::Debug,
{
    p.layout::<T>(ctype, &[]);
    seen.add(ctype);
    for f in fields {
        let max: u64 = if f.width == 64 {
            u64::MAX
        } else {
            (1u64 << f.width) - 1
        };
        let mut x = T::default();
        (f.set)(&mut x, V::try_from(max).unwrap());
        assert_eq!(
            (f.get)(x),
            V::try_from(max).unwrap(),
            "{ctype}.{} getter",
            f.name
        );
        // SAFETY: T is a repr(transparent) or packed newtype over V.
        let word: u64 = unsafe { std::mem::transmute_copy::<T, V>(&x) }.into();
        assert_eq!(word, max << f.lo, "{ctype}.{} Rust mask", f.name);
        let cexpr = format!(
            "({{ {ctype} x_; memset(&x_, 0, sizeof x_); x_.{prefix}{} = {max}ULL; \
             unsigned long long v_ = 0; memcpy(&v_, &x_, sizeof x_); v_; }})",
            f.name
        );
        p.constant(&cexpr, word);
        seen.add(&format!("{ctype}.{}", f.name));
    }
}

/// Registers a UUID constant (all four parts).
fn uuid(p: &mut Probe, seen: &mut Seen, name: &str, u: c::HSA_UUID) {
    p.constant(&format!("{name}.Data1"), u.Data1);
    p.constant(&format!("{name}.Data2"), u.Data2);
    p.constant(&format!("{name}.Data3"), u.Data3);
    p.constant(
        &format!("({{ unsigned long long v_; memcpy(&v_, {name}.Data4, 8); v_; }})"),
        u64::from_le_bytes(u.Data4),
    );
    seen.add(name);
}

/// Registers a scalar typedef: size, alignment and signedness (`(T)-1`
/// widened must equal `minus_one`).
fn scalar<T>(p: &mut Probe, seen: &mut Seen, ctype: &str, minus_one: i128) {
    p.layout::<T>(ctype, &[]);
    p.constant(&format!("({ctype})-1"), minus_one);
    seen.add(ctype);
}

/// Size of a struct field's type, from a by-value read of the field.
fn size_of_field<T, F>(_read: impl Fn(&T) -> F) -> usize {
    size_of::<F>()
}

/// `lay!(p, seen, Type, [field, ...] $(, ["c.designator" => rust_field, ...])?)`:
/// layout check of `r::Type` (`r`: the generation module imported at the call site) against the C typedef of the same name: size,
/// alignment, the offset of every field and of every extra designator, and
/// the size of every listed field's type.
macro_rules! lay {
    ($p:ident, $seen:ident, $t:ident, [$($f:ident),* $(,)?] $(, [$($c:literal => $rf:ident),* $(,)?])?) => {{
        layout!($p, r::$t, stringify!($t), [$($f,)* $($($c => $rf,)*)?]);
        $(
            $p.constant(
                concat!("sizeof(((", stringify!($t), " *)0)->", stringify!($f), ")"),
                size_of_field(|s: &r::$t| s.$f) as i128,
            );
        )*
        $seen.add(stringify!($t));
    }};
}

/// Every check that both probe-checked headers (5.2.3 and 6.2.4) share,
/// on the generation module imported as `r` at the call site: scalars,
/// constants, enums, bit fields, every struct and union, UUIDs; then the
/// caller's `extra` checks; then the probe run and the completeness scan
/// of the header. `node`, `graphics` and `event` list the members of
/// `HsaNodeProperties`, `HsaGraphicsResourceInfo` and the event data
/// union, which differ between the two.
macro_rules! released_header {
    (
        $p:ident, $seen:ident,
        include: $include:expr,
        dir: $dir:expr,
        header: $header:expr,
        node: [$($node:tt),* $(,)?],
        graphics: [$($graphics:tt),* $(,)?],
        event: [$($event:tt),* $(,)?],
        extra: { $($extra:tt)* }
    ) => {{
    let mut $p = Probe::new(&[$include]);
    $p.include_dir($dir);
    $p.prelude("#include <string.h>");
    let mut $seen = Seen::default();

    // Scalar typedefs: size, alignment and signedness ((T)-1 widened).
    scalar::<u8>(&mut $p, &mut $seen, "HSAuint8", u8::MAX.into());
    scalar::<i8>(&mut $p, &mut $seen, "HSAint8", -1);
    scalar::<u16>(&mut $p, &mut $seen, "HSAuint16", u16::MAX.into());
    scalar::<i16>(&mut $p, &mut $seen, "HSAint16", -1);
    scalar::<u32>(&mut $p, &mut $seen, "HSAuint32", u32::MAX.into());
    scalar::<i32>(&mut $p, &mut $seen, "HSAint32", -1);
    scalar::<u64>(&mut $p, &mut $seen, "HSAuint64", u64::MAX.into());
    scalar::<i64>(&mut $p, &mut $seen, "HSAint64", -1);
    scalar::<u64>(&mut $p, &mut $seen, "HSA_QUEUEID", u64::MAX.into());
    scalar::<u32>(&mut $p, &mut $seen, "HSA_EVENTID", u32::MAX.into());
    scalar::<u64>(&mut $p, &mut $seen, "HSATraceId", u64::MAX.into());
    $p.layout::<r::HSA_HANDLE>("HSA_HANDLE", &[]);
    $seen.add("HSA_HANDLE");
    $p.layout::<r::HsaSharedMemoryHandle>("HsaSharedMemoryHandle", &[]);
    $seen.add("HsaSharedMemoryHandle");

    // #define constants.
    for (name, v) in [
        ("HSAKMT_VERSION_MAJOR", r::HSAKMT_VERSION_MAJOR as i128),
        ("HSAKMT_VERSION_MINOR", r::HSAKMT_VERSION_MINOR as i128),
        ("INVALID_QUEUEID", r::INVALID_QUEUEID as i128),
        ("INVALID_PID", r::INVALID_PID as i128),
        ("INVALID_NODEID", r::INVALID_NODEID as i128),
        ("HSA_PUBLIC_NAME_SIZE", r::HSA_PUBLIC_NAME_SIZE as i128),
        ("HSA_CPU_SIBLINGS", r::HSA_CPU_SIBLINGS as i128),
        ("HSA_PROCESSORID_ALL", r::HSA_PROCESSORID_ALL as i128),
    ] {
        $p.constant(name, v);
        $seen.add(name);
    }

    // Enums.
    enum_values(&mut $p, &mut $seen, "HSAKMT_STATUS", r::HSAKMT_STATUS::VALUES);
    enum_values(&mut $p, &mut $seen, "HSA_HEAPTYPE", r::HSA_HEAPTYPE::VALUES);
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_IOLINKTYPE",
        r::HSA_IOLINKTYPE::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_CACHING_TYPE",
        r::HSA_CACHING_TYPE::VALUES,
    );
    enum_values(&mut $p, &mut $seen, "HSA_PAGE_SIZE", r::HSA_PAGE_SIZE::VALUES);
    enum_values(&mut $p, &mut $seen, "HSA_DEVICE", r::HSA_DEVICE::VALUES);
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_QUEUE_PRIORITY",
        r::HSA_QUEUE_PRIORITY::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_QUEUE_TYPE",
        r::HSA_QUEUE_TYPE::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_DBG_WAVEOP",
        r::HSA_DBG_WAVEOP::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_DBG_WAVEMODE",
        r::HSA_DBG_WAVEMODE::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_DBG_WAVEMSG_TYPE",
        r::HSA_DBG_WAVEMSG_TYPE::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_DBG_WATCH_MODE",
        r::HSA_DBG_WATCH_MODE::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_DBG_TRAP_OVERRIDE",
        r::HSA_DBG_TRAP_OVERRIDE::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_DBG_TRAP_MASK",
        r::HSA_DBG_TRAP_MASK::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_DBG_WAVE_LAUNCH_MODE",
        r::HSA_DBG_WAVE_LAUNCH_MODE::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_DBG_NODE_CONTROL",
        r::HSA_DBG_NODE_CONTROL::VALUES,
    );
    enum_values(&mut $p, &mut $seen, "HSA_EVENTTYPE", r::HSA_EVENTTYPE::VALUES);
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_DEBUG_EVENT_TYPE",
        r::HSA_DEBUG_EVENT_TYPE::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_EVENTTYPE_NODECHANGE_FLAGS",
        r::HSA_EVENTTYPE_NODECHANGE_FLAGS::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_EVENTTYPE_DEVICESTATECHANGE_FLAGS",
        r::HSA_EVENTTYPE_DEVICESTATECHANGE_FLAGS::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_EVENTID_MEMORYFLAGS",
        r::HSA_EVENTID_MEMORYFLAGS::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HsaEventTimeOut",
        r::HsaEventTimeOut::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_PROFILE_TYPE",
        r::HSA_PROFILE_TYPE::VALUES,
    );
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_POINTER_TYPE",
        r::HSA_POINTER_TYPE::VALUES,
    );
    enum_values(&mut $p, &mut $seen, "HSA_SVM_FLAGS", r::HSA_SVM_FLAGS::VALUES);
    enum_values(
        &mut $p,
        &mut $seen,
        "HSA_SVM_ATTR_TYPE",
        r::HSA_SVM_ATTR_TYPE::VALUES,
    );

    // Bit-field words.
    bitfield(
        &mut $p,
        &mut $seen,
        "HSA_ENGINE_ID",
        "ui32.",
        r::HSA_ENGINE_ID::FIELDS,
    );
    bitfield(
        &mut $p,
        &mut $seen,
        "HSA_ENGINE_VERSION",
        "",
        r::HSA_ENGINE_VERSION::FIELDS,
    );
    bitfield(
        &mut $p,
        &mut $seen,
        "HSA_CAPABILITY",
        "ui32.",
        r::HSA_CAPABILITY::FIELDS,
    );
    bitfield(
        &mut $p,
        &mut $seen,
        "HSA_DEBUG_PROPERTIES",
        "",
        r::HSA_DEBUG_PROPERTIES::FIELDS,
    );
    bitfield(
        &mut $p,
        &mut $seen,
        "HSA_MEMORYPROPERTY",
        "ui32.",
        r::HSA_MEMORYPROPERTY::FIELDS,
    );
    bitfield(
        &mut $p,
        &mut $seen,
        "HsaCacheType",
        "ui32.",
        r::HsaCacheType::FIELDS,
    );
    bitfield(
        &mut $p,
        &mut $seen,
        "HSA_LINKPROPERTY",
        "ui32.",
        r::HSA_LINKPROPERTY::FIELDS,
    );
    bitfield(
        &mut $p,
        &mut $seen,
        "HsaMemFlags",
        "ui32.",
        r::HsaMemFlags::FIELDS,
    );
    bitfield(
        &mut $p,
        &mut $seen,
        "HsaMemMapFlags",
        "ui32.",
        r::HsaMemMapFlags::FIELDS,
    );
    bitfield(
        &mut $p,
        &mut $seen,
        "HsaAccessAttributeFailure",
        "",
        r::HsaAccessAttributeFailure::FIELDS,
    );
    bitfield(
        &mut $p,
        &mut $seen,
        "HsaCounterFlags",
        "ui32.",
        r::HsaCounterFlags::FIELDS,
    );
    // The whole-word members alias the bit fields at offset 0.
    for (c, m) in [
        ("HSA_ENGINE_ID", "Value"),
        ("HSA_ENGINE_VERSION", "Value"),
        ("HSA_CAPABILITY", "Value"),
        ("HSA_DEBUG_PROPERTIES", "Value"),
        ("HSA_MEMORYPROPERTY", "MemoryProperty"),
        ("HsaCacheType", "Value"),
        ("HSA_LINKPROPERTY", "LinkProperty"),
        ("HsaMemFlags", "Value"),
        ("HsaMemMapFlags", "Value"),
        ("HsaCounterFlags", "Value"),
    ] {
        $p.constant(&format!("offsetof({c}, {m})"), 0);
    }

    // Structs and unions.
    lay!(
        $p,
        $seen,
        HsaVersionInfo,
        [KernelInterfaceMajorVersion, KernelInterfaceMinorVersion]
    );
    lay!(
        $p,
        $seen,
        HsaSystemProperties,
        [NumNodes, PlatformOem, PlatformId, PlatformRev]
    );
    lay!(
        $p,
        $seen,
        HsaNodeProperties,
        [$($node),*]
    );
    lay!($p, $seen, HsaMemoryProperties, [HeapType, SizeInBytes, Flags, Width,
        MemoryClockMax, VirtualBaseAddress], ["ui32.SizeInBytesLow" => SizeInBytes]);
    $p.layout::<r::HsaMemoryProperties>(
        "HsaMemoryProperties",
        &[(
            "ui32.SizeInBytesHigh",
            offset_of!(r::HsaMemoryProperties, SizeInBytes) + 4,
        )],
    );
    lay!(
        $p,
        $seen,
        HsaCacheProperties,
        [
            ProcessorIdLow,
            CacheLevel,
            CacheSize,
            CacheLineSize,
            CacheLinesPerTag,
            CacheAssociativity,
            CacheLatency,
            CacheType,
            SiblingMap
        ]
    );
    // The only signed scalar member of the header.
    $p.constant(
        "(__typeof__(((HsaNodeProperties *)0)->DrmRenderMinor))-1",
        -1,
    );
    lay!($p, $seen, HsaCComputeProperties, [SiblingMap]);
    lay!(
        $p,
        $seen,
        HsaIoLinkProperties,
        [
            IoLinkType,
            VersionMajor,
            VersionMinor,
            NodeFrom,
            NodeTo,
            Weight,
            MinimumLatency,
            MaximumLatency,
            MinimumBandwidth,
            MaximumBandwidth,
            RecTransferSize,
            Flags
        ]
    );
    lay!(
        $p,
        $seen,
        HsaGraphicsResourceInfo,
        [$($graphics),*]
    );
    lay!(
        $p,
        $seen,
        HsaUserContextSaveAreaHeader,
        [
            ControlStackOffset,
            ControlStackSize,
            WaveStateOffset,
            WaveStateSize,
            DebugOffset,
            DebugSize,
            ErrorReason,
            ErrorEventId,
            Reserved1
        ]
    );
    lay!(
        $p,
        $seen,
        HsaQueueInfo,
        [
            QueueDetailError,
            QueueTypeExtended,
            NumCUAssigned,
            CUMaskInfo,
            UserContextSaveArea,
            SaveAreaSizeInBytes,
            ControlStackTop,
            ControlStackUsedInBytes,
            SaveAreaHeader,
            Reserved2
        ]
    );
    lay!($p, $seen, HsaQueueResource, [QueueId, QueueDoorBell, QueueWptrValue,
        QueueRptrValue, ErrorReason], ["Queue_DoorBell" => QueueDoorBell,
        "Queue_DoorBell_aql" => QueueDoorBell, "Queue_write_ptr" => QueueWptrValue,
        "Queue_write_ptr_aql" => QueueWptrValue, "Queue_read_ptr" => QueueRptrValue,
        "Queue_read_ptr_aql" => QueueRptrValue]);
    lay!($p, $seen, HsaQueueReport, [VMID, QueueAddress, QueueSize]);
    lay!($p, $seen, HsaDbgWaveMsgAMDGen2, [Value, Reserved2]);
    layout!(
        $p,
        r::HsaDbgWaveMessageAMD,
        "HsaDbgWaveMessageAMD",
        [WaveMsgInfoGen2]
    );
    $seen.add("HsaDbgWaveMessageAMD");
    lay!($p, $seen, HsaDbgWaveMessage, [MemoryVA, DbgWaveMsg]);
    $p.layout::<r::HsaDbgWaveMessage>(
        "HsaDbgWaveMessage",
        &[(
            "DbgWaveMsg.WaveMsgInfoGen2.Reserved2",
            offset_of!(r::HsaDbgWaveMessage, DbgWaveMsg) + 4,
        )],
    );
    layout!(
        $p,
        r::HsaSyncVarData,
        "__typeof__(((HsaSyncVar *)0)->SyncVar)",
        [UserData, UserDataPtrValue]
    );
    lay!($p, $seen, HsaSyncVar, [SyncVar, SyncVarSize], ["SyncVar.UserData" => SyncVar,
        "SyncVar.UserDataPtrValue" => SyncVar]);
    lay!($p, $seen, HsaNodeChange, [Flags]);
    lay!($p, $seen, HsaDeviceStateChange, [NodeId, Device, Flags]);
    lay!(
        $p,
        $seen,
        HsaMemoryAccessFault,
        [NodeId, VirtualAddress, Failure, Flags]
    );
    layout!(
        $p,
        r::HsaEventDataUnion,
        "__typeof__(((HsaEventData *)0)->EventData)",
        [$($event),*]
    );
    lay!(
        $p,
        $seen,
        HsaEventData,
        [EventType, EventData, HWData1, HWData2, HWData3]
    );
    {
        let ed = offset_of!(r::HsaEventData, EventData);
        $p.layout::<r::HsaEventData>(
            "HsaEventData",
            &[
                ("EventData.SyncVar.SyncVarSize", ed + 8),
                ("EventData.DeviceState.Flags", ed + 8),
                ("EventData.MemoryAccessFault.VirtualAddress", ed + 4),
                ("EventData.MemoryAccessFault.Flags", ed + 16),
            ],
        );
    }
    lay!($p, $seen, HsaEventDescriptor, [EventType, NodeId, SyncVar]);
    lay!($p, $seen, HsaEvent, [EventId, EventData]);
    lay!(
        $p,
        $seen,
        HsaClockCounters,
        [
            GPUClockCounter,
            CPUClockCounter,
            SystemClockCounter,
            SystemClockFrequencyHz
        ]
    );
    lay!($p, $seen, HSA_UUID, [Data1, Data2, Data3, Data4]);
    lay!(
        $p,
        $seen,
        HsaCounter,
        [
            Type,
            CounterId,
            CounterSizeInBits,
            CounterMask,
            Flags,
            BlockIndex
        ]
    );
    lay!(
        $p,
        $seen,
        HsaCounterBlockProperties,
        [BlockId, NumCounters, NumConcurrent, Counters]
    );
    lay!(
        $p,
        $seen,
        HsaCounterProperties,
        [NumBlocks, NumConcurrent, Blocks]
    );
    lay!(
        $p,
        $seen,
        HsaPmcTraceRoot,
        [TraceBufferMinSizeBytes, NumberOfPasses, TraceId]
    );
    lay!(
        $p,
        $seen,
        HsaGpuTileConfig,
        [
            TileConfig,
            MacroTileConfig,
            NumTileConfigs,
            NumMacroTileConfigs,
            GbAddrConfig,
            NumBanks,
            NumRanks,
            Reserved
        ]
    );
    lay!(
        $p,
        $seen,
        HsaPointerInfo,
        [
            Type,
            Node,
            MemFlags,
            CPUAddress,
            GPUAddress,
            SizeInBytes,
            NRegisteredNodes,
            NMappedNodes,
            RegisteredNodes,
            MappedNodes,
            UserData
        ]
    );
    lay!($p, $seen, HsaMemoryRange, [MemoryAddress, SizeInBytes]);
    lay!($p, $seen, HSA_SVM_ATTRIBUTE, [value], ["type" => r#type]);

    // Profiling block UUIDs.
    for (name, u) in [
        ("HSA_PROFILEBLOCK_AMD_CB", r::HSA_PROFILEBLOCK_AMD_CB),
        ("HSA_PROFILEBLOCK_AMD_CPF", r::HSA_PROFILEBLOCK_AMD_CPF),
        ("HSA_PROFILEBLOCK_AMD_CPG", r::HSA_PROFILEBLOCK_AMD_CPG),
        ("HSA_PROFILEBLOCK_AMD_DB", r::HSA_PROFILEBLOCK_AMD_DB),
        ("HSA_PROFILEBLOCK_AMD_GDS", r::HSA_PROFILEBLOCK_AMD_GDS),
        ("HSA_PROFILEBLOCK_AMD_GRBM", r::HSA_PROFILEBLOCK_AMD_GRBM),
        (
            "HSA_PROFILEBLOCK_AMD_GRBMSE",
            r::HSA_PROFILEBLOCK_AMD_GRBMSE,
        ),
        ("HSA_PROFILEBLOCK_AMD_IA", r::HSA_PROFILEBLOCK_AMD_IA),
        ("HSA_PROFILEBLOCK_AMD_MC", r::HSA_PROFILEBLOCK_AMD_MC),
        ("HSA_PROFILEBLOCK_AMD_PASC", r::HSA_PROFILEBLOCK_AMD_PASC),
        ("HSA_PROFILEBLOCK_AMD_PASU", r::HSA_PROFILEBLOCK_AMD_PASU),
        ("HSA_PROFILEBLOCK_AMD_SPI", r::HSA_PROFILEBLOCK_AMD_SPI),
        ("HSA_PROFILEBLOCK_AMD_SRBM", r::HSA_PROFILEBLOCK_AMD_SRBM),
        ("HSA_PROFILEBLOCK_AMD_SQ", r::HSA_PROFILEBLOCK_AMD_SQ),
        ("HSA_PROFILEBLOCK_AMD_SX", r::HSA_PROFILEBLOCK_AMD_SX),
        ("HSA_PROFILEBLOCK_AMD_TA", r::HSA_PROFILEBLOCK_AMD_TA),
        ("HSA_PROFILEBLOCK_AMD_TCA", r::HSA_PROFILEBLOCK_AMD_TCA),
        ("HSA_PROFILEBLOCK_AMD_TCC", r::HSA_PROFILEBLOCK_AMD_TCC),
        ("HSA_PROFILEBLOCK_AMD_TCP", r::HSA_PROFILEBLOCK_AMD_TCP),
        ("HSA_PROFILEBLOCK_AMD_TCS", r::HSA_PROFILEBLOCK_AMD_TCS),
        ("HSA_PROFILEBLOCK_AMD_TD", r::HSA_PROFILEBLOCK_AMD_TD),
        ("HSA_PROFILEBLOCK_AMD_VGT", r::HSA_PROFILEBLOCK_AMD_VGT),
        ("HSA_PROFILEBLOCK_AMD_WD", r::HSA_PROFILEBLOCK_AMD_WD),
        (
            "HSA_PROFILEBLOCK_AMD_IOMMUV2",
            r::HSA_PROFILEBLOCK_AMD_IOMMUV2,
        ),
        (
            "HSA_PROFILEBLOCK_AMD_KERNEL_DRIVER",
            r::HSA_PROFILEBLOCK_AMD_KERNEL_DRIVER,
        ),
    ] {
        uuid(&mut $p, &mut $seen, name, u);
    }

    $($extra)*

    let checks = $p.len();
    $p.run(env!("CARGO_TARGET_TMPDIR"));

    // Completeness: everything the header declares was checked above.
    let header = $header;
    let text = std::fs::read_to_string(&header)
        .unwrap_or_else(|e| panic!("read {}: {e}", header.display()));
    let items = scan_header(&text);
    let missing: Vec<&String> = items.iter().filter(|n| !$seen.0.contains(*n)).collect();
    assert!(
        missing.is_empty(),
        "declared in {} but not checked: {missing:?}",
        header.display()
    );
    eprintln!(
        "{}: {checks} probe checks passed; {} header items all covered",
        header.display(),
        items.len()
    );
    }};
}

/// The include directory holding Debian 13's `hsakmt/hsakmttypes.h`.
fn rocm_6_2_include() -> PathBuf {
    if let Some(d) = std::env::var_os("KFD_RS_HSAKMT_6_2_INCLUDE") {
        return PathBuf::from(d);
    }
    // CARGO_TARGET_TMPDIR is <target>/tmp.
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let dir = target
        .parent()
        .expect("target dir")
        .join("rootfs/trixie/root/usr/include");
    assert!(
        dir.join("hsakmt/hsakmttypes.h").exists(),
        "{} has no hsakmt/hsakmttypes.h: make the Debian 13 root file system \
         with `cargo xtask rootfs trixie` (or point KFD_RS_HSAKMT_6_2_INCLUDE \
         at the usr/include of an extracted libhsakmt-dev 6.2.4)",
        dir.display()
    );
    dir
}

#[test]
fn rocm_5_2_matches_debian_12_header() {
    use hsakmt_sys::rocm_5_2 as r;
    released_header!(p, seen,
        include: "hsakmttypes.h",
        dir: "/usr/include",
        header: PathBuf::from("/usr/include/hsakmttypes.h"),
        node: [NumCPUCores, NumFComputeCores, NumMemoryBanks, NumCaches, NumIOLinks,
            CComputeIdLo, FComputeIdLo, Capability, MaxWavesPerSIMD, LDSSizeInKB,
            GDSSizeInKB, WaveFrontSize, NumShaderBanks, NumArrays, NumCUPerArray,
            NumSIMDPerCU, MaxSlotsScratchCU, EngineId, VendorId, DeviceId, LocationId,
            LocalMemSize, MaxEngineClockMhzFCompute, MaxEngineClockMhzCCompute,
            DrmRenderMinor, MarketingName, AMDName, uCodeEngineVersions, DebugProperties,
            HiveID, NumSdmaEngines, NumSdmaXgmiEngines, NumSdmaQueuesPerEngine,
            NumCpQueues, NumGws, Reserved2, Domain, UniqueID, VGPRSizePerCU,
            SGPRSizePerCU, Reserved],
        graphics: [MemoryAddress, SizeInBytes, Metadata, MetadataSizeInBytes, Reserved],
        event: [SyncVar, NodeChangeState, DeviceState, MemoryAccessFault],
        extra: {}
    );
}

#[test]
fn rocm_6_2_matches_debian_13_header() {
    use hsakmt_sys::rocm_6_2 as r;
    let dir = rocm_6_2_include();
    released_header!(p, seen,
        include: "hsakmt/hsakmttypes.h",
        dir: dir.clone(),
        header: dir.join("hsakmt/hsakmttypes.h"),
        node: [NumCPUCores, NumFComputeCores, NumMemoryBanks, NumCaches, NumIOLinks,
            CComputeIdLo, FComputeIdLo, Capability, MaxWavesPerSIMD, LDSSizeInKB,
            GDSSizeInKB, WaveFrontSize, NumShaderBanks, NumArrays, NumCUPerArray,
            NumSIMDPerCU, MaxSlotsScratchCU, EngineId, VendorId, DeviceId, LocationId,
            LocalMemSize, MaxEngineClockMhzFCompute, MaxEngineClockMhzCCompute,
            DrmRenderMinor, MarketingName, AMDName, uCodeEngineVersions, DebugProperties,
            HiveID, NumSdmaEngines, NumSdmaXgmiEngines, NumSdmaQueuesPerEngine,
            NumCpQueues, NumGws, Integrated, Domain, UniqueID, VGPRSizePerCU,
            SGPRSizePerCU, NumXcc, KFDGpuID, FamilyID],
        graphics: [MemoryAddress, SizeInBytes, Metadata, MetadataSizeInBytes, NodeId],
        event: [SyncVar, NodeChangeState, DeviceState, MemoryAccessFault, HwException],
        extra: {
            // What 6.2.4 added (hsakmt_sys::since_6_2).
            enum_values(&mut p, &mut seen, "HSA_DBG_TRAP_EXCEPTION_CODE",
                r::HSA_DBG_TRAP_EXCEPTION_CODE::VALUES);
            enum_values(&mut p, &mut seen, "HSA_EVENTID_HW_EXCEPTION_CAUSE",
                r::HSA_EVENTID_HW_EXCEPTION_CAUSE::VALUES);
            enum_values(&mut p, &mut seen, "HSA_EVENT_TYPE", r::HSA_EVENT_TYPE::VALUES);
            enum_values(&mut p, &mut seen, "HSA_MIGRATE_TRIGGERS",
                r::HSA_MIGRATE_TRIGGERS::VALUES);
            enum_values(&mut p, &mut seen, "HSA_QUEUE_EVICTION_TRIGGERS",
                r::HSA_QUEUE_EVICTION_TRIGGERS::VALUES);
            enum_values(&mut p, &mut seen, "HSA_SVM_UNMAP_TRIGGERS",
                r::HSA_SVM_UNMAP_TRIGGERS::VALUES);
            enum_values(&mut p, &mut seen, "HSA_PC_SAMPLING_METHOD_KIND",
                r::HSA_PC_SAMPLING_METHOD_KIND::VALUES);
            enum_values(&mut p, &mut seen, "HSA_PC_SAMPLING_UNIT_INTERVAL",
                r::HSA_PC_SAMPLING_UNIT_INTERVAL::VALUES);
            lay!(p, seen, HsaHwException, [NodeId, ResetType, MemoryLost, ResetCause]);
            lay!(p, seen, HsaPcSamplingInfo, [value, value_min, value_max, flags, method, units]);
            p.layout::<r::HsaAMDGPUDeviceHandle>("HsaAMDGPUDeviceHandle", &[]);
            seen.add("HsaAMDGPUDeviceHandle");
            scalar::<r::HsaPcSamplingTraceId>(&mut p, &mut seen, "HsaPcSamplingTraceId",
                u32::MAX.into());
            for (name, v) in [
                ("HSA_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK",
                    i128::from(r::HSA_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK)),
                ("HSA_SMI_EVENT_MSG_SIZE", r::HSA_SMI_EVENT_MSG_SIZE as i128),
            ] {
                p.constant(name, v);
                seen.add(name);
            }
            // The function-like macros, at both ends of their range.
            for i in [1, 5, 64] {
                p.constant(&format!("HSA_EC_MASK({i})"), i128::from(r::HSA_EC_MASK(i)));
                p.constant(&format!("HSA_SMI_EVENT_MASK_FROM_INDEX({i})"),
                    i128::from(r::HSA_SMI_EVENT_MASK_FROM_INDEX(i)));
            }
            let ed = offset_of!(r::HsaEventData, EventData);
            p.layout::<r::HsaEventData>(
                "HsaEventData",
                &[("EventData.HwException.ResetCause", ed + 12)],
            );
        }
    );
}

/// Strips `//` and `/* */` comments.
fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && i + 1 < b.len() && b[i + 1] == b'/' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && i + 1 < b.len() && b[i + 1] == b'*' {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

fn ident_at_end(s: &str) -> Option<String> {
    let s = s.trim_end();
    let start = s
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let id = &s[start..];
    (!id.is_empty() && !id.starts_with(|c: char| c.is_ascii_digit())).then(|| id.to_string())
}

/// Every item the header declares, as the names `Seen` records: typedef
/// names, enumerators, numeric `#define`s, UUID constants, and bit fields
/// as `Typedef.field`.
fn scan_header(text: &str) -> BTreeSet<String> {
    let text = strip_comments(text);
    let mut items = BTreeSet::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("#define") {
            let mut it = rest.split_whitespace();
            if let (Some(name), Some(val)) = (it.next(), it.next()) {
                if !name.contains('(') && val.starts_with(|c: char| c.is_ascii_digit()) {
                    items.insert(name.to_string());
                }
            }
        }
        if let Some(rest) = t.strip_prefix("HSA_DEFINE_UUID(") {
            if let Some(name) = rest.split(',').next() {
                items.insert(name.trim().to_string());
            }
        }
    }
    // typedef statements (with brace matching for struct/union/enum bodies).
    let b = text.as_bytes();
    let mut pos = 0;
    while let Some(off) = text[pos..].find("typedef") {
        let start = pos + off;
        let mut i = start;
        let mut depth = 0;
        let mut body_start = None;
        while i < b.len() {
            match b[i] {
                b'{' => {
                    if depth == 0 {
                        body_start = Some(i + 1);
                    }
                    depth += 1;
                }
                b'}' => depth -= 1,
                b';' if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
        let stmt = &text[start..i];
        let decl_end = stmt.rfind('}').map_or(stmt, |j| &stmt[j + 1..]);
        let decl = decl_end.split('[').next().unwrap();
        let name = ident_at_end(decl).expect("typedef name");
        items.insert(name.clone());
        if let Some(bs) = body_start {
            let body = &text[bs..start + stmt.rfind('}').unwrap()];
            if stmt
                .trim_start_matches("typedef")
                .trim_start()
                .starts_with("enum")
            {
                for e in body.split(',') {
                    if let Some(n) = e.split('=').next().and_then(|n| ident_at_end(n.trim())) {
                        items.insert(n);
                    }
                }
            } else {
                for m in body.split(';') {
                    if let Some((decl, width)) = m.rsplit_once(':') {
                        if width.trim().parse::<u32>().is_ok() {
                            items.insert(format!("{name}.{}", ident_at_end(decl).unwrap()));
                        }
                    }
                }
            }
        }
        pos = i;
    }
    items
}
