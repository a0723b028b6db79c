//! Layouts of `hsakmt_sys::newest`, which has no installable header
//! (the generations that do are checked by `released_headers.rs`): its
//! sizes and offsets are pinned by hand below for the thunk ROCm 7.2.4
//! links into ROCr: rocm-systems tag `rocm-7.2.4` (branch
//! `release/rocm-rel-7.2`), `projects/rocr-runtime/libhsakmt/include/
//! hsakmt/hsakmttypes.h`, laid out by gcc's x86_64 rules under
//! `#pragma pack(push, 4)`. The struct sizes are cross-checked against
//! Debian experimental's libhsa-runtime64 7.2.4+dfsg-1~exp1 (see the
//! `newest` module docs: 0x178-byte node copies, 0x420-byte cache
//! strides).

use hsakmt_sys::{newest as cur, rocm_5_2 as r, BitField};
use std::collections::BTreeMap;
use std::mem::{align_of, offset_of, size_of};
// ---------------------------------------------------------------------------
// current: pinned by hand
// ---------------------------------------------------------------------------

/// `pin!(Type, size, align, { field: offset, ... })`
macro_rules! pin {
    ($t:ty, $size:expr, $align:expr, { $($f:ident : $off:expr),* $(,)? }) => {{
        assert_eq!(size_of::<$t>(), $size, "size of {}", stringify!($t));
        assert_eq!(align_of::<$t>(), $align, "align of {}", stringify!($t));
        $( assert_eq!(offset_of!($t, $f), $off, "{}.{}", stringify!($t), stringify!($f)); )*
    }};
}

/// Every size and field offset of `newest`: rocm-systems `rocm-7.2.4`
/// (projects/rocr-runtime/libhsakmt/include/hsakmt/hsakmttypes.h), laid
/// out by gcc's x86_64 rules under `#pragma pack(push, 4)`.
#[test]
fn newest_pinned_layouts() {
    // Types that differ from 5.2.3.
    pin!(cur::HsaNodeProperties, 376, 4, {
        NumCPUCores: 0, NumFComputeCores: 4, NumNeuralCores: 8, NumMemoryBanks: 12,
        NumCaches: 16, NumIOLinks: 20, CComputeIdLo: 24, FComputeIdLo: 28, Capability: 32,
        Capability2: 36, MaxWavesPerSIMD: 40, LDSSizeInKB: 44, GDSSizeInKB: 48,
        WaveFrontSize: 52, NumShaderBanks: 56, NumArrays: 60, NumCUPerArray: 64,
        NumSIMDPerCU: 68, MaxSlotsScratchCU: 72, EngineId: 76, OverrideEngineId: 80,
        VendorId: 84, DeviceId: 86, LocationId: 88, LocalMemSize: 92,
        MaxEngineClockMhzFCompute: 100, MaxEngineClockMhzCCompute: 104, DrmRenderMinor: 108,
        MarketingName: 112, AMDName: 240, uCodeEngineVersions: 304, DebugProperties: 308,
        HiveID: 316, NumSdmaEngines: 324, NumSdmaXgmiEngines: 328,
        NumSdmaQueuesPerEngine: 332, NumCpQueues: 333, NumGws: 334, Integrated: 335,
        Domain: 336, UniqueID: 340, VGPRSizePerCU: 348, SGPRSizePerCU: 352, NumXcc: 356,
        KFDGpuID: 360, FamilyID: 364, CwsrSize: 368, CtlStackSize: 372,
    });
    pin!(cur::HsaCacheProperties, 1056, 4, {
        ProcessorIdLow: 0, CacheLevel: 4, CacheSize: 8, CacheLineSize: 12,
        CacheLinesPerTag: 16, CacheAssociativity: 20, CacheLatency: 24, CacheType: 28,
        SiblingMap: 32,
    });
    pin!(cur::HsaIoLinkProperties, 52, 4, {
        IoLinkType: 0, VersionMajor: 4, VersionMinor: 8, NodeFrom: 12, NodeTo: 16,
        Weight: 20, MinimumLatency: 24, MaximumLatency: 28, MinimumBandwidth: 32,
        MaximumBandwidth: 36, RecTransferSize: 40, RecSdmaEngIdMask: 44, Flags: 48,
    });
    pin!(cur::HsaGraphicsResourceInfo, 32, 4, {
        MemoryAddress: 0, SizeInBytes: 8, Metadata: 16, MetadataSizeInBytes: 24, NodeId: 28,
    });
    pin!(cur::HsaQueueInfo, 68, 4, {
        QueueDetailError: 0, QueueTypeExtended: 4, NumCUAssigned: 8, CUMaskInfo: 12,
        UserContextSaveArea: 20, SaveAreaSizeInBytes: 28, ControlStackTop: 36,
        ControlStackUsedInBytes: 44, SaveAreaHeader: 52, Reserved2: 60,
    });
    pin!(cur::HsaQueueResource, 40, 4, {
        QueueId: 0, QueueDoorBell: 8, QueueWptrValue: 16, QueueRptrValue: 24, ErrorReason: 32,
    });
    pin!(cur::HsaHwException, 16, 4, { NodeId: 0, ResetType: 4, MemoryLost: 8, ResetCause: 12 });
    pin!(cur::HsaEventDataUnion, 20, 4, {
        SyncVar: 0, NodeChangeState: 0, DeviceState: 0, MemoryAccessFault: 0, HwException: 0,
    });
    pin!(cur::HsaEventData, 44, 4, { EventType: 0, EventData: 4, HWData1: 24, HWData2: 32, HWData3: 40 });
    pin!(cur::HsaEvent, 48, 4, { EventId: 0, EventData: 4 });
    pin!(cur::HsaPointerInfo, 68, 4, {
        Type: 0, Node: 4, MemFlags: 8, CPUAddress: 12, GPUAddress: 20, SizeInBytes: 28,
        NRegisteredNodes: 36, NMappedNodes: 40, RegisteredNodes: 44, MappedNodes: 52,
        UserData: 60,
    });

    // Types that exist only in the newest header.
    pin!(cur::HSA_CAPABILITY2, 4, 4, {});
    pin!(cur::HsaWddmSurfaceMetadata, 24, 4, {
        version: 0, swizzle_mode: 4, tile_swizzle: 8, compression_mode: 12, max_comp_blk: 16,
        max_uncomp_blk: 20,
    });
    pin!(cur::HsaFabricHandle, 16, 4, { handle: 0 });
    pin!(cur::HsaPcSamplingInfo, 40, 4, {
        value: 0, value_min: 8, value_max: 16, flags: 24, method: 32, units: 36,
    });
    pin!(cur::HSA_REGISTER_MEM_FLAGS, 4, 4, {});
    pin!(cur::HsaHandleImportDescHandle, 16, 4, { dmabuf_fd: 0, buf_handle: 0, fabric: 0 });
    pin!(cur::HsaHandleImportDesc, 40, 4, {
        device_handle: 0, r#type: 8, handle: 12, mem: 28, metadata: 36,
    });
    pin!(cur::HsaHandleImportResult, 24, 4, {
        buf_handle: 0, dmabuf_fd: 8, alloc_size: 12, metadata: 20,
    });
    pin!(cur::HsaHandleImportFlags, 4, 4, {});
    pin!(cur::HsaStructureSizes, 16, 2, {
        StructureSizes: 0, SizeOfHsaNodeProperties: 2, SizeOfHsaExternalHandleDesc: 4,
        Reserved: 6,
    });
    pin!(cur::HSA_EXTERNAL_SEMAPHORE_HANDLE, 8, 4, { handle: 0 });
    pin!(cur::HsaHandleExportDesc, 28, 4, { device_handle: 0, r#type: 8, buf_handle: 12, size: 20 });
    pin!(cur::HsaMemoryExportResult, 16, 4, { dmabuf_fd: 0, fabric: 0 });
    pin!(cur::HsaHandleExportFlags, 4, 4, {});
    pin!(cur::HsaAMDGPUDeviceHandle, 8, 8, {});
    pin!(cur::HsaMemoryObjectHandle, 8, 8, {});
    pin!(cur::HsaPcSamplingTraceId, 4, 4, {});
    assert_eq!(size_of::<cur::HsaKFDContext>(), 0, "opaque");
    assert_eq!(size_of::<*mut cur::HsaKFDContext>(), 8);
    for e in [
        size_of::<cur::HSA_DBG_TRAP_EXCEPTION_CODE>(),
        size_of::<cur::HSA_EVENTID_HW_EXCEPTION_CAUSE>(),
        size_of::<cur::HSA_EVENT_TYPE>(),
        size_of::<cur::HSA_MIGRATE_TRIGGERS>(),
        size_of::<cur::HSA_QUEUE_EVICTION_TRIGGERS>(),
        size_of::<cur::HSA_SVM_UNMAP_TRIGGERS>(),
        size_of::<cur::HSA_PC_SAMPLING_METHOD_KIND>(),
        size_of::<cur::HSA_PC_SAMPLING_UNIT_INTERVAL>(),
        size_of::<cur::HsaAisFlags>(),
        size_of::<cur::HsaMemoryMapFlags>(),
        size_of::<cur::HsaExternalHandleType>(),
        size_of::<cur::HSA_EXTERNAL_SEMAPHORE_HANDLE_TYPE>(),
    ] {
        assert_eq!(e, 4);
    }

    // Shared types re-exported by `newest` are the very same Rust types.
    let _: r::HsaMemoryProperties = cur::HsaMemoryProperties::default();
    let _: r::HsaClockCounters = cur::HsaClockCounters::default();
    let _: r::HsaSyncVar = cur::HsaSyncVar::default();
    let _: r::HSA_QUEUE_PRIORITY = cur::HSA_QUEUE_PRIORITY::HSA_QUEUE_PRIORITY_NORMAL;
}

/// Section 5.1 of the libhsakmt reference note: the size table, both
/// generations (the `newest` column is the "newest" one).
#[test]
fn size_table_of_the_reference_note() {
    let rows: &[(&str, usize, usize)] = &[
        (
            "HsaVersionInfo",
            size_of::<r::HsaVersionInfo>(),
            size_of::<cur::HsaVersionInfo>(),
        ),
        (
            "HsaSystemProperties",
            size_of::<r::HsaSystemProperties>(),
            size_of::<cur::HsaSystemProperties>(),
        ),
        (
            "HsaNodeProperties",
            size_of::<r::HsaNodeProperties>(),
            size_of::<cur::HsaNodeProperties>(),
        ),
        (
            "HsaMemoryProperties",
            size_of::<r::HsaMemoryProperties>(),
            size_of::<cur::HsaMemoryProperties>(),
        ),
        (
            "HsaCacheProperties",
            size_of::<r::HsaCacheProperties>(),
            size_of::<cur::HsaCacheProperties>(),
        ),
        (
            "HsaCComputeProperties",
            size_of::<r::HsaCComputeProperties>(),
            size_of::<cur::HsaCComputeProperties>(),
        ),
        (
            "HsaIoLinkProperties",
            size_of::<r::HsaIoLinkProperties>(),
            size_of::<cur::HsaIoLinkProperties>(),
        ),
        (
            "HsaMemFlags",
            size_of::<r::HsaMemFlags>(),
            size_of::<cur::HsaMemFlags>(),
        ),
        (
            "HsaGraphicsResourceInfo",
            size_of::<r::HsaGraphicsResourceInfo>(),
            size_of::<cur::HsaGraphicsResourceInfo>(),
        ),
        (
            "HsaSyncVar",
            size_of::<r::HsaSyncVar>(),
            size_of::<cur::HsaSyncVar>(),
        ),
        (
            "HsaEventDescriptor",
            size_of::<r::HsaEventDescriptor>(),
            size_of::<cur::HsaEventDescriptor>(),
        ),
        (
            "HsaEventData",
            size_of::<r::HsaEventData>(),
            size_of::<cur::HsaEventData>(),
        ),
        (
            "HsaEvent",
            size_of::<r::HsaEvent>(),
            size_of::<cur::HsaEvent>(),
        ),
        (
            "HsaMemoryAccessFault",
            size_of::<r::HsaMemoryAccessFault>(),
            size_of::<cur::HsaMemoryAccessFault>(),
        ),
        (
            "HsaQueueResource",
            size_of::<r::HsaQueueResource>(),
            size_of::<cur::HsaQueueResource>(),
        ),
        (
            "HsaQueueInfo",
            size_of::<r::HsaQueueInfo>(),
            size_of::<cur::HsaQueueInfo>(),
        ),
        (
            "HsaUserContextSaveAreaHeader",
            size_of::<r::HsaUserContextSaveAreaHeader>(),
            size_of::<cur::HsaUserContextSaveAreaHeader>(),
        ),
        (
            "HsaQueueReport",
            size_of::<r::HsaQueueReport>(),
            size_of::<cur::HsaQueueReport>(),
        ),
        (
            "HsaClockCounters",
            size_of::<r::HsaClockCounters>(),
            size_of::<cur::HsaClockCounters>(),
        ),
        (
            "HsaGpuTileConfig",
            size_of::<r::HsaGpuTileConfig>(),
            size_of::<cur::HsaGpuTileConfig>(),
        ),
        (
            "HsaPointerInfo",
            size_of::<r::HsaPointerInfo>(),
            size_of::<cur::HsaPointerInfo>(),
        ),
        (
            "HsaMemoryRange",
            size_of::<r::HsaMemoryRange>(),
            size_of::<cur::HsaMemoryRange>(),
        ),
        (
            "HSA_SVM_ATTRIBUTE",
            size_of::<r::HSA_SVM_ATTRIBUTE>(),
            size_of::<cur::HSA_SVM_ATTRIBUTE>(),
        ),
        (
            "HsaCounter",
            size_of::<r::HsaCounter>(),
            size_of::<cur::HsaCounter>(),
        ),
        (
            "HsaCounterBlockProperties",
            size_of::<r::HsaCounterBlockProperties>(),
            size_of::<cur::HsaCounterBlockProperties>(),
        ),
        (
            "HsaCounterProperties",
            size_of::<r::HsaCounterProperties>(),
            size_of::<cur::HsaCounterProperties>(),
        ),
        (
            "HsaPmcTraceRoot",
            size_of::<r::HsaPmcTraceRoot>(),
            size_of::<cur::HsaPmcTraceRoot>(),
        ),
        (
            "HSA_UUID",
            size_of::<r::HSA_UUID>(),
            size_of::<cur::HSA_UUID>(),
        ),
        (
            "HsaDbgWaveMessage",
            size_of::<r::HsaDbgWaveMessage>(),
            size_of::<cur::HsaDbgWaveMessage>(),
        ),
        (
            "HSA_CAPABILITY",
            size_of::<r::HSA_CAPABILITY>(),
            size_of::<cur::HSA_CAPABILITY>(),
        ),
        (
            "HSA_ENGINE_ID",
            size_of::<r::HSA_ENGINE_ID>(),
            size_of::<cur::HSA_ENGINE_ID>(),
        ),
        (
            "HSA_DEBUG_PROPERTIES",
            size_of::<r::HSA_DEBUG_PROPERTIES>(),
            size_of::<cur::HSA_DEBUG_PROPERTIES>(),
        ),
        (
            "HSA_QUEUE_PRIORITY",
            size_of::<r::HSA_QUEUE_PRIORITY>(),
            size_of::<cur::HSA_QUEUE_PRIORITY>(),
        ),
        (
            "HsaSharedMemoryHandle",
            size_of::<r::HsaSharedMemoryHandle>(),
            size_of::<cur::HsaSharedMemoryHandle>(),
        ),
    ];
    let want: BTreeMap<&str, (usize, usize)> = [
        ("HsaVersionInfo", (8, 8)),
        ("HsaSystemProperties", (16, 16)),
        ("HsaNodeProperties", (356, 376)),
        ("HsaMemoryProperties", (32, 32)),
        ("HsaCacheProperties", (1056, 1056)),
        ("HsaCComputeProperties", (1024, 1024)),
        ("HsaIoLinkProperties", (48, 52)),
        ("HsaMemFlags", (4, 4)),
        ("HsaGraphicsResourceInfo", (32, 32)),
        ("HsaSyncVar", (16, 16)),
        ("HsaEventDescriptor", (24, 24)),
        ("HsaEventData", (44, 44)),
        ("HsaEvent", (48, 48)),
        ("HsaMemoryAccessFault", (20, 20)),
        ("HsaQueueResource", (40, 40)),
        ("HsaQueueInfo", (68, 68)),
        ("HsaUserContextSaveAreaHeader", (40, 40)),
        ("HsaQueueReport", (20, 20)),
        ("HsaClockCounters", (32, 32)),
        ("HsaGpuTileConfig", (64, 64)),
        ("HsaPointerInfo", (68, 68)),
        ("HsaMemoryRange", (16, 16)),
        ("HSA_SVM_ATTRIBUTE", (8, 8)),
        ("HsaCounter", (32, 32)),
        ("HsaCounterBlockProperties", (56, 56)),
        ("HsaCounterProperties", (64, 64)),
        ("HsaPmcTraceRoot", (20, 20)),
        ("HSA_UUID", (16, 16)),
        ("HsaDbgWaveMessage", (16, 16)),
        ("HSA_CAPABILITY", (4, 4)),
        ("HSA_ENGINE_ID", (4, 4)),
        ("HSA_DEBUG_PROPERTIES", (8, 8)),
        ("HSA_QUEUE_PRIORITY", (8, 8)),
        ("HsaSharedMemoryHandle", (32, 32)),
    ]
    .into_iter()
    .collect();
    for (name, old, new) in rows {
        assert_eq!(want[name], (*old, *new), "{name}: (5.2.3, newest)");
    }
    // 5.2.3-only: HsaMemMapFlags (4). Newest-only rows are in
    // `current_pinned_layouts`.
    assert_eq!(size_of::<r::HsaMemMapFlags>(), 4);
}

/// Bit positions of the fields that exist only in `newest` (pinned), and
/// the shared part of the generation-specific words (same as 5.2.3).
#[test]
fn newest_bitfields_pinned() {
    fn positions<T, V>(fields: &[BitField<T, V>]) -> Vec<(&'static str, u32, u32)> {
        fields.iter().map(|f| (f.name, f.lo, f.width)).collect()
    }
    // HSA_CAPABILITY: bits 0..30 as in 5.2.3, then two new bits.
    let old = positions(r::HSA_CAPABILITY::FIELDS);
    let new = positions(cur::HSA_CAPABILITY::FIELDS);
    assert_eq!(&old[..old.len() - 1], &new[..new.len() - 2]);
    assert_eq!(
        &new[new.len() - 2..],
        &[
            ("PreciseALUOperationsSupported", 30, 1),
            ("PerQueueResetSupported", 31, 1)
        ]
    );
    assert_eq!(
        positions(cur::HSA_CAPABILITY2::FIELDS),
        [
            ("PerSDMAQueueResetSupported", 0, 1),
            ("AqlEmulationPm4_", 1, 1),
            ("StallOnRetryFault", 2, 1),
            ("Reserved", 3, 29)
        ]
    );
    // HsaMemFlags: the 16 fields of bits 0..18 as in 5.2.3, then seven
    // new bits and a shorter Reserved.
    let old = positions(r::HsaMemFlags::FIELDS);
    let new = positions(cur::HsaMemFlags::FIELDS);
    assert_eq!(old.len(), 17);
    assert_eq!(old[..16], new[..16]);
    assert_eq!(
        &new[16..],
        &[
            ("NoAddress", 18, 1),
            ("OnlyAddress", 19, 1),
            ("ExtendedCoherent", 20, 1),
            ("GTTAccess", 21, 1),
            ("Contiguous", 22, 1),
            ("ExecuteBlit", 23, 1),
            ("QueueObject", 24, 1),
            ("Reserved", 25, 7)
        ]
    );
    assert_eq!(
        positions(cur::HSA_REGISTER_MEM_FLAGS::FIELDS),
        [("requiresVAddr", 0, 1), ("kmtHandle", 1, 1)]
    );
    assert_eq!(
        positions(cur::HsaHandleImportFlags::FIELDS),
        [
            ("IPCHandle", 0, 1),
            ("SysMem", 1, 1),
            ("UpdateMetadata", 2, 1),
            ("Reserved", 3, 29)
        ]
    );
    assert_eq!(
        positions(cur::HsaHandleExportFlags::FIELDS),
        [("Reserved", 0, 32)]
    );
    // Every field covers its own bits and the words are fully described.
    for fields in [
        positions(cur::HSA_CAPABILITY::FIELDS),
        positions(cur::HsaMemFlags::FIELDS),
        positions(cur::HSA_CAPABILITY2::FIELDS),
        positions(cur::HsaHandleImportFlags::FIELDS),
    ] {
        let mut all = 0u32;
        for (name, lo, width) in fields {
            let bits = (u32::MAX >> (32 - width)) << lo;
            assert_eq!(all & bits, 0, "{name} overlaps");
            all |= bits;
        }
        assert_eq!(all, u32::MAX);
    }
}

/// Values that exist only in `newest` (pinned from the upstream header).
#[test]
fn newest_enum_values_pinned() {
    assert_eq!(cur::HSA_QUEUE_SDMA_BY_ENG_ID.0, 6);
    assert_eq!(cur::HSA_POINTER_RESERVED_ADDR.0, 5);
    assert_eq!(cur::HSA_SVM_FLAG_GPU_ALWAYS_MAPPED.0, 0x40);
    assert_eq!(cur::HSA_SVM_FLAG_EXT_COHERENT.0, 0x80);
    assert_eq!(cur::HSA_DBG_EC_QUEUE_PACKET_DISPATCH_DIM_INVALID.0, 16);
    assert_eq!(cur::HSA_DBG_EC_QUEUE_NEW.0, 31);
    assert_eq!(cur::HSA_DBG_EC_DEVICE_NEW.0, 36);
    assert_eq!(cur::HSA_DBG_EC_PROCESS_DEVICE_REMOVE.0, 49);
    assert_eq!(cur::HSA_DBG_EC_MAX.0, 50);
    assert_eq!(cur::HSA_EC_MASK(cur::HSA_DBG_EC_QUEUE_NEW.0), 1 << 30);
    assert_eq!(
        cur::HSA_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK,
        0x8000_0000
    );
    assert_eq!(cur::HSA_EVENTID_HW_EXCEPTION_ECC.0, 1);
    assert_eq!(cur::HSA_SMI_EVENT_INDEX_MAX.0, 12);
    assert_eq!(cur::HSA_SMI_EVENT_ALL_PROCESS.0, 64);
    assert_eq!(
        cur::HSA_SMI_EVENT_MASK_FROM_INDEX(cur::HSA_SMI_EVENT_VMFAULT.0),
        1
    );
    assert_eq!(cur::HSA_SMI_EVENT_MSG_SIZE, 96);
    assert_eq!(cur::HSA_MIGRATE_TRIGGER_TTM_EVICTION.0, 3);
    assert_eq!(cur::HSA_QUEUE_EVICTION_CRIU_RESTORE.0, 5);
    assert_eq!(cur::HSA_SVM_UNMAP_TRIGGER_UNMAP_FROM_CPU.0, 2);
    assert_eq!(cur::HSA_PC_SAMPLING_METHOD_KIND_HOSTTRAP_V1.0, 1);
    assert_eq!(cur::HSA_PC_SAMPLING_METHOD_KIND_STOCHASTIC_V1.0, 2);
    assert_eq!(cur::HSA_PC_SAMPLING_UNIT_INTERVAL_INSTRUCTIONS.0, 2);
    assert_eq!(cur::HSA_AIS_WRITE.0, 2);
    assert_eq!(cur::HSA_MEMORY_ACCESS_RW.0, 3);
    assert_eq!(cur::HSA_EXTERNAL_HANDLE_FABRIC.0, 3);
    assert_eq!(cur::HSA_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD.0, 2);
    // Shared values are the same constants in both generations.
    assert_eq!(cur::HSA_QUEUE_DMA_AQL_XGMI.0, r::HSA_QUEUE_DMA_AQL_XGMI.0);
    assert_eq!(
        cur::HSA_QUEUE_TYPE::VALUES.len(),
        r::HSA_QUEUE_TYPE::VALUES.len() + 1
    );
    assert_eq!(
        cur::HSA_POINTER_TYPE::VALUES.len(),
        r::HSA_POINTER_TYPE::VALUES.len() + 1
    );
    assert_eq!(
        cur::HSA_SVM_FLAGS::VALUES.len(),
        r::HSA_SVM_FLAGS::VALUES.len() + 2
    );
}

#[test]
fn status_names_and_helpers() {
    use hsakmt_sys::HSAKMT_STATUS;
    assert_eq!(
        HSAKMT_STATUS::HSAKMT_STATUS_WAIT_TIMEOUT.to_string(),
        "HSAKMT_STATUS_WAIT_TIMEOUT"
    );
    assert_eq!(HSAKMT_STATUS(99).to_string(), "HSAKMT_STATUS(99)");
    assert_eq!(format!("{:?}", HSAKMT_STATUS(99)), "HSAKMT_STATUS(99)");
    assert!(r::HSAKMT_STATUS_SUCCESS.is_success());
    assert_eq!(r::HSA_QUEUE_PRIORITY_MINIMUM.0, -3);
    assert_eq!(
        format!("{:?}", r::HSA_DBG_NUM_WAVEOP),
        "HSA_DBG_WAVEOP_TRAP"
    );

    let mut n = r::HsaNodeProperties::default();
    n.set_marketing_name("AMD Instinct MI210");
    n.set_amd_name("gfx90a");
    assert_eq!(n.marketing_name(), "AMD Instinct MI210");
    assert_eq!(n.amd_name(), "gfx90a");
    let mut m = cur::HsaNodeProperties::default();
    m.set_amd_name(&"x".repeat(100));
    assert_eq!(m.amd_name().len(), 63);

    let q = r::HsaQueueResource {
        QueueDoorBell: 0x1000,
        ..Default::default()
    };
    assert_eq!(q.Queue_DoorBell() as usize, 0x1000);
    let mp = r::HsaMemoryProperties {
        SizeInBytes: 0x1_2345_6789,
        ..Default::default()
    };
    assert_eq!(
        (mp.SizeInBytesHigh(), mp.SizeInBytesLow()),
        (1, 0x2345_6789)
    );
    let _ = format!("{:?}", r::HsaEvent::default());
    let _ = format!("{:?}", cur::HsaHandleImportDesc::default());
}
