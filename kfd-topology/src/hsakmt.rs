//! What the hsakmt C API reports for a snapshot: the memory banks the
//! thunk adds for GPU nodes, and the conversion to the C
//! structs of both ABI generations.

use crate::gfx::GfxVersion;
use crate::model::{HeapType, MemoryBank, Node};
use crate::Topology;

/// A process aperture: `base..=limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aperture {
    /// First address.
    pub base: u64,
    /// Last address.
    pub limit: u64,
}

impl Aperture {
    /// `limit - base + 1`.
    pub const fn size(self) -> u64 {
        self.limit.wrapping_sub(self.base).wrapping_add(1)
    }
}

/// The apertures the memory manager set up for one GPU
/// (`fmm_get_aperture_base_and_limit`); an aperture that is `None` is not
/// reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GpuApertures {
    /// LDS aperture.
    pub lds: Option<Aperture>,
    /// GPUVM aperture (only reported as a bank on Kaveri).
    pub gpuvm: Option<Aperture>,
    /// Scratch aperture.
    pub scratch: Option<Aperture>,
    /// SVM aperture.
    pub svm: Option<Aperture>,
    /// The MMIO-remap page, only when it was mapped.
    pub mmio: Option<Aperture>,
}

/// One entry of `hsaKmtGetNodeMemoryProperties`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryProperties {
    /// The bank (sysfs values, or the thunk-made heap).
    pub bank: MemoryBank,
    /// `VirtualBaseAddress` (0 for sysfs banks).
    pub virtual_base_address: u64,
}

/// The thunk's fixed count of extra banks for a GPU node (LDS, scratch,
/// SVM), whether dGPU or APU.
pub const NUM_GPU_HEAPS: u32 = 3;

/// `HsaNodeProperties.NumMemoryBanks` as `hsaKmtGetNodeProperties`
/// reports it: the sysfs banks, plus 3 for a GPU node, plus 1 if its MMIO
/// page is mapped.
pub fn reported_num_memory_banks(node: &Node, apertures: &GpuApertures) -> u32 {
    let mut n = node.properties.mem_banks_count;
    if node.gpu_id != 0 {
        n += NUM_GPU_HEAPS;
        if apertures.mmio.is_some() {
            n += 1;
        }
    }
    n
}

/// `topology_is_svm_needed`: dGPU systems, and gfx9 or later.
pub fn svm_needed(topology: &Topology, version: Option<GfxVersion>) -> bool {
    topology.is_dgpu() || version.is_some_and(|v| v.full() >= 0x090000)
}

/// `hsaKmtGetNodeMemoryProperties(node, num_banks)`: the sysfs banks, then
/// for GPU nodes LDS, (Kaveri) local memory, scratch, SVM and MMIO, at most
/// `num_banks` entries.
pub fn memory_properties(
    topology: &Topology,
    node: &Node,
    apertures: &GpuApertures,
    num_banks: u32,
) -> Vec<MemoryProperties> {
    let max = num_banks as usize;
    let mut out: Vec<MemoryProperties> = node
        .memory_banks
        .iter()
        .take(max)
        .map(|&bank| MemoryProperties {
            bank,
            virtual_base_address: 0,
        })
        .collect();
    if node.gpu_id == 0 {
        return out;
    }
    let mut push = |heap: HeapType, size: u64, base: u64| {
        if out.len() < max {
            out.push(MemoryProperties {
                bank: MemoryBank {
                    heap_type: heap,
                    size_in_bytes: size,
                    ..MemoryBank::default()
                },
                virtual_base_address: base,
            });
        }
    };
    if let Some(a) = apertures.lds {
        push(
            HeapType::GPU_LDS,
            u64::from(node.properties.lds_size_in_kb.wrapping_mul(1024)),
            a.base,
        );
    }
    let kaveri = node
        .derived
        .gfx_version
        .is_some_and(|v| v.full() == 0x070000);
    if kaveri && node.properties.local_mem_size > 0 {
        if let Some(a) = apertures.gpuvm {
            push(
                HeapType::FRAME_BUFFER_PRIVATE,
                node.properties.local_mem_size,
                a.base,
            );
        }
    }
    if let Some(a) = apertures.scratch {
        push(HeapType::GPU_SCRATCH, a.size(), a.base);
    }
    if svm_needed(topology, node.derived.gfx_version) {
        if let Some(a) = apertures.svm {
            push(HeapType::DEVICE_SVM, a.size(), a.base);
        }
    }
    if let Some(a) = apertures.mmio {
        push(HeapType::MMIO_REMAP, a.size(), a.base);
    }
    out
}

/// The C structs of both ABI generations (`kfd_sys::hsakmt::{rocm_5_2,
/// current}`), filled field by field as the C library fills them.
pub mod ffi {
    use kfd_sys::hsakmt::{current, rocm_5_2};

    use super::{memory_properties, reported_num_memory_banks, GpuApertures};
    use crate::model::{Cache, IoLink, Node};
    use crate::Topology;

    /// `HSA_PUBLIC_NAME_SIZE`.
    const NAME_SIZE: usize = 64;

    /// `MarketingName`: each byte widened to a UTF-16 unit (the C library
    /// does not decode UTF-8), at most 63 units and a NUL.
    pub fn marketing_name(s: &str) -> [u16; NAME_SIZE] {
        let mut out = [0u16; NAME_SIZE];
        for (o, b) in out.iter_mut().zip(s.bytes().take(NAME_SIZE - 1)) {
            *o = u16::from(b);
        }
        out
    }

    /// `AMDName`: at most 63 bytes and a NUL.
    pub fn amd_name(s: &str) -> [u8; NAME_SIZE] {
        let mut out = [0u8; NAME_SIZE];
        for (o, b) in out.iter_mut().zip(s.bytes().take(NAME_SIZE - 1)) {
            *o = b;
        }
        out
    }

    /// `EngineId.Value`: the low 10 bits of `fw_version`, then the gfx
    /// version in Major/Minor/Stepping.
    pub fn engine_id(node: &Node) -> u32 {
        let mut v = node.properties.fw_version & 0x3ff;
        if let Some(g) = node.derived.gfx_version {
            v |= u32::from(g.major & 0x3f) << 10
                | u32::from(g.minor) << 16
                | u32::from(g.stepping) << 24;
        }
        v
    }

    /// `HsaSystemProperties` (the same in both generations).
    pub fn system_properties(t: &Topology) -> rocm_5_2::HsaSystemProperties {
        rocm_5_2::HsaSystemProperties {
            NumNodes: t.num_nodes(),
            PlatformOem: t.system.platform_oem,
            PlatformId: t.system.platform_id,
            PlatformRev: t.system.platform_rev,
        }
    }

    /// `hsaKmtGetNodeProperties` for ROCr 5.2.3 callers (356 bytes).
    pub fn node_properties_rocm_5_2(
        node: &Node,
        apertures: &GpuApertures,
    ) -> rocm_5_2::HsaNodeProperties {
        let p = &node.properties;
        let d = &node.derived;
        rocm_5_2::HsaNodeProperties {
            NumCPUCores: p.cpu_cores_count,
            NumFComputeCores: p.simd_count,
            NumMemoryBanks: reported_num_memory_banks(node, apertures),
            NumCaches: node.caches.len() as u32,
            NumIOLinks: node.io_links.len() as u32,
            CComputeIdLo: p.cpu_core_id_base,
            FComputeIdLo: p.simd_id_base,
            Capability: rocm_5_2::HSA_CAPABILITY(d.capability.0),
            MaxWavesPerSIMD: p.max_waves_per_simd,
            LDSSizeInKB: p.lds_size_in_kb,
            GDSSizeInKB: p.gds_size_in_kb,
            WaveFrontSize: p.wave_front_size,
            NumShaderBanks: d.num_shader_banks,
            NumArrays: p.simd_arrays_per_engine,
            NumCUPerArray: p.cu_per_simd_array,
            NumSIMDPerCU: p.simd_per_cu,
            MaxSlotsScratchCU: p.max_slots_scratch_cu,
            EngineId: rocm_5_2::HSA_ENGINE_ID(engine_id(node)),
            VendorId: p.vendor_id,
            DeviceId: p.device_id,
            LocationId: p.location_id,
            LocalMemSize: p.local_mem_size,
            MaxEngineClockMhzFCompute: p.max_engine_clk_fcompute,
            MaxEngineClockMhzCCompute: p.max_engine_clk_ccompute,
            DrmRenderMinor: p.drm_render_minor as i32,
            MarketingName: marketing_name(&d.marketing_name),
            AMDName: amd_name(&d.amd_name),
            uCodeEngineVersions: rocm_5_2::HSA_ENGINE_VERSION(p.sdma_fw_version & 0x3ff),
            DebugProperties: rocm_5_2::HSA_DEBUG_PROPERTIES(p.debug_prop),
            HiveID: p.hive_id,
            NumSdmaEngines: p.num_sdma_engines,
            NumSdmaXgmiEngines: p.num_sdma_xgmi_engines,
            NumSdmaQueuesPerEngine: p.num_sdma_queues_per_engine,
            NumCpQueues: p.num_cp_queues,
            NumGws: p.num_gws,
            Domain: p.domain,
            UniqueID: p.unique_id,
            VGPRSizePerCU: d.vgpr_size_per_cu,
            SGPRSizePerCU: d.sgpr_size_per_cu,
            ..rocm_5_2::HsaNodeProperties::default()
        }
    }

    /// `hsaKmtGetNodeProperties(Ctx)` for callers built against the newest
    /// header (396 bytes).
    pub fn node_properties_current(
        node: &Node,
        apertures: &GpuApertures,
    ) -> current::HsaNodeProperties {
        let p = &node.properties;
        let d = &node.derived;
        let old = node_properties_rocm_5_2(node, apertures);
        current::HsaNodeProperties {
            NumCPUCores: old.NumCPUCores,
            NumFComputeCores: old.NumFComputeCores,
            NumMemoryBanks: old.NumMemoryBanks,
            NumCaches: old.NumCaches,
            NumIOLinks: old.NumIOLinks,
            CComputeIdLo: old.CComputeIdLo,
            FComputeIdLo: old.FComputeIdLo,
            Capability: current::HSA_CAPABILITY(d.capability.0),
            Capability2: current::HSA_CAPABILITY2(p.capability2),
            MaxWavesPerSIMD: old.MaxWavesPerSIMD,
            LDSSizeInKB: old.LDSSizeInKB,
            GDSSizeInKB: old.GDSSizeInKB,
            WaveFrontSize: old.WaveFrontSize,
            NumShaderBanks: old.NumShaderBanks,
            NumArrays: old.NumArrays,
            NumCUPerArray: old.NumCUPerArray,
            NumSIMDPerCU: old.NumSIMDPerCU,
            MaxSlotsScratchCU: old.MaxSlotsScratchCU,
            EngineId: current::HSA_ENGINE_ID(engine_id(node)),
            OverrideEngineId: current::HSA_ENGINE_ID(d.override_gfx_version.map_or(0, |g| {
                u32::from(g.major & 0x3f) << 10
                    | u32::from(g.minor) << 16
                    | u32::from(g.stepping) << 24
            })),
            VendorId: old.VendorId,
            DeviceId: old.DeviceId,
            LocationId: old.LocationId,
            LocalMemSize: old.LocalMemSize,
            MaxEngineClockMhzFCompute: old.MaxEngineClockMhzFCompute,
            MaxEngineClockMhzCCompute: old.MaxEngineClockMhzCCompute,
            DrmRenderMinor: old.DrmRenderMinor,
            MarketingName: old.MarketingName,
            AMDName: old.AMDName,
            uCodeEngineVersions: current::HSA_ENGINE_VERSION(p.sdma_fw_version & 0x3ff),
            DebugProperties: current::HSA_DEBUG_PROPERTIES(p.debug_prop),
            HiveID: old.HiveID,
            NumSdmaEngines: old.NumSdmaEngines,
            NumSdmaXgmiEngines: old.NumSdmaXgmiEngines,
            NumSdmaQueuesPerEngine: old.NumSdmaQueuesPerEngine,
            NumCpQueues: old.NumCpQueues,
            NumGws: old.NumGws,
            Integrated: u8::from(d.integrated),
            Domain: old.Domain,
            UniqueID: old.UniqueID,
            VGPRSizePerCU: old.VGPRSizePerCU,
            SGPRSizePerCU: old.SGPRSizePerCU,
            NumXcc: d.num_xcc,
            KFDGpuID: node.gpu_id,
            FamilyID: d.family_id,
            ..current::HsaNodeProperties::default()
        }
    }

    /// `hsaKmtGetNodeMemoryProperties` (the struct is the same in both
    /// generations).
    pub fn memory_properties_c(
        topology: &Topology,
        node: &Node,
        apertures: &GpuApertures,
        num_banks: u32,
    ) -> Vec<rocm_5_2::HsaMemoryProperties> {
        memory_properties(topology, node, apertures, num_banks)
            .into_iter()
            .map(|m| rocm_5_2::HsaMemoryProperties {
                HeapType: rocm_5_2::HSA_HEAPTYPE(m.bank.heap_type.0),
                SizeInBytes: m.bank.size_in_bytes,
                Flags: rocm_5_2::HSA_MEMORYPROPERTY(m.bank.flags),
                Width: m.bank.width,
                MemoryClockMax: m.bank.mem_clk_max,
                VirtualBaseAddress: m.virtual_base_address,
            })
            .collect()
    }

    fn sibling_map(c: &Cache) -> [u32; 256] {
        let mut map = [0u32; 256];
        for (o, &v) in map.iter_mut().zip(&c.sibling_map) {
            *o = v;
        }
        map
    }

    /// `hsaKmtGetNodeCacheProperties` for 5.2.3 callers (1056 bytes each).
    pub fn cache_properties_rocm_5_2(node: &Node) -> Vec<rocm_5_2::HsaCacheProperties> {
        node.caches
            .iter()
            .map(|c| rocm_5_2::HsaCacheProperties {
                ProcessorIdLow: c.processor_id_low,
                CacheLevel: c.level,
                CacheSize: c.size,
                CacheLineSize: c.cache_line_size,
                CacheLinesPerTag: c.cache_lines_per_tag,
                CacheAssociativity: c.associativity,
                CacheLatency: c.latency,
                CacheType: rocm_5_2::HsaCacheType(c.cache_type.0),
                SiblingMap: sibling_map(c),
            })
            .collect()
    }

    /// `hsaKmtGetNodeCacheProperties(Ctx)` for newest callers (1060 bytes
    /// each; `PersistingCacheSizeMax` is 0).
    pub fn cache_properties_current(node: &Node) -> Vec<current::HsaCacheProperties> {
        node.caches
            .iter()
            .map(|c| current::HsaCacheProperties {
                ProcessorIdLow: c.processor_id_low,
                CacheLevel: c.level,
                CacheSize: c.size,
                CacheLineSize: c.cache_line_size,
                CacheLinesPerTag: c.cache_lines_per_tag,
                CacheAssociativity: c.associativity,
                CacheLatency: c.latency,
                CacheType: current::HsaCacheType(c.cache_type.0),
                SiblingMap: sibling_map(c),
                PersistingCacheSizeMax: 0,
            })
            .collect()
    }

    /// `hsaKmtGetNodeIoLinkProperties` for 5.2.3 callers (48 bytes each).
    pub fn io_link_properties_rocm_5_2(node: &Node) -> Vec<rocm_5_2::HsaIoLinkProperties> {
        node.io_links
            .iter()
            .map(|l: &IoLink| rocm_5_2::HsaIoLinkProperties {
                IoLinkType: rocm_5_2::HSA_IOLINKTYPE(l.link_type.0),
                VersionMajor: l.version_major,
                VersionMinor: l.version_minor,
                NodeFrom: l.node_from,
                NodeTo: l.node_to,
                Weight: l.weight,
                MinimumLatency: l.min_latency,
                MaximumLatency: l.max_latency,
                MinimumBandwidth: l.min_bandwidth,
                MaximumBandwidth: l.max_bandwidth,
                RecTransferSize: l.recommended_transfer_size,
                Flags: rocm_5_2::HSA_LINKPROPERTY(l.flags),
            })
            .collect()
    }

    /// `hsaKmtGetNodeIoLinkProperties(Ctx)` for newest callers (52 bytes
    /// each).
    pub fn io_link_properties_current(node: &Node) -> Vec<current::HsaIoLinkProperties> {
        node.io_links
            .iter()
            .map(|l| current::HsaIoLinkProperties {
                IoLinkType: current::HSA_IOLINKTYPE(l.link_type.0),
                VersionMajor: l.version_major,
                VersionMinor: l.version_minor,
                NodeFrom: l.node_from,
                NodeTo: l.node_to,
                Weight: l.weight,
                MinimumLatency: l.min_latency,
                MaximumLatency: l.max_latency,
                MinimumBandwidth: l.min_bandwidth,
                MaximumBandwidth: l.max_bandwidth,
                RecTransferSize: l.recommended_transfer_size,
                RecSdmaEngIdMask: l.recommended_sdma_engine_id_mask,
                Flags: current::HSA_LINKPROPERTY(l.flags),
            })
            .collect()
    }
}
