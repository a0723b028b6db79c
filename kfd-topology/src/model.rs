//! The typed values of a topology snapshot.

use std::fmt;

use crate::gfx::GfxVersion;

/// The places where the C libraries derive topology values differently,
/// each a named switch. The C border (hsakmt) picks one value per library
/// generation; the default is the newest upstream library's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rules {
    /// `NumShaderBanks` is `array_count / simd_arrays_per_engine` (on GPU
    /// nodes), not `array_count`.
    pub shader_banks_per_engine: bool,
    /// The gfx-derived fields (EngineId, AMDName, MarketingName, VGPR and
    /// SGPR sizes, NumXcc) are filled only for nodes with SIMDs, and the
    /// marketing name comes from DRM for every GPU node (APUs included),
    /// not only for nodes without CPU cores.
    pub gfx_fields_need_simds: bool,
    /// The device-id table is not consulted for gfx target versions above
    /// 10 (their ids are not in it).
    pub device_table_up_to_gfx10: bool,
    /// `HSA_OVERRIDE_GFX_VERSION` goes into `OverrideEngineId` (EngineId
    /// keeps the device's version), not into EngineId itself.
    pub separate_override_engine_id: bool,
    /// `HSA_OVERRIDE_GFX_VERSION_<node>` overrides one node.
    pub per_node_gfx_override: bool,
    /// `FamilyID` is read from sysfs (`family_id`) first; DRM overrides it.
    /// Without it FamilyID comes from DRM only.
    pub family_id_from_sysfs: bool,
    /// `Capability.SVMAPISupported` is cleared when the context does not
    /// use the SVM API.
    pub clear_svm_capability_without_svm_api: bool,
    /// A CPU node with no cache information is accepted (no caches), not
    /// an error.
    pub cpu_caches_optional: bool,
    /// A GPU's direct CPU link may be xGMI too and must lead to a CPU node
    /// (without it: PCIe only, any target).
    pub xgmi_cpu_links: bool,
    /// Which VGPR register-file size per CU the library assumes.
    pub vgpr_table: VgprTable,
}

impl Default for Rules {
    /// The newest upstream library.
    fn default() -> Self {
        Rules {
            shader_banks_per_engine: true,
            gfx_fields_need_simds: true,
            device_table_up_to_gfx10: true,
            separate_override_engine_id: true,
            per_node_gfx_override: true,
            family_id_from_sysfs: true,
            clear_svm_capability_without_svm_api: true,
            cpu_caches_optional: true,
            xgmi_cpu_links: true,
            vgpr_table: VgprTable::ByGfxRange,
        }
    }
}

/// The VGPR register-file bytes per CU a C library assumes for a gfx
/// version (`VGPRSizePerCU`, and the save-area sizing of queues).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VgprTable {
    /// 512 KiB on gfx908 and gfx90a, 256 KiB elsewhere (libhsakmt 5.2.3).
    Gfx908And90aLarge,
    /// 512 KiB on gfx908, gfx90a and gfx94x; 384 KiB on gfx1100, gfx1101,
    /// gfx1200 and gfx1201; 256 KiB elsewhere (libhsakmt 6.2.4).
    CdnaAndSomeRdnaLarge,
    /// By gfx version range, as the newest library (0 past gfx1250).
    ByGfxRange,
}

impl VgprTable {
    /// The size for `v` under this table.
    pub const fn size_per_cu(self, v: GfxVersion) -> u32 {
        match self {
            VgprTable::Gfx908And90aLarge => v.vgpr_size_per_cu_rocm_5_2(),
            VgprTable::CdnaAndSomeRdnaLarge => match v.full() {
                0x090008 | 0x09000A => 0x80000,
                f if f & !0xff == 0x090400 => 0x80000,
                0x0B0000 | 0x0B0001 | 0x0C0000 | 0x0C0001 => 0x60000,
                _ => 0x40000,
            },
            VgprTable::ByGfxRange => v.vgpr_size_per_cu_current(),
        }
    }
}

/// `system_properties`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SystemProperties {
    /// `platform_oem`.
    pub platform_oem: u32,
    /// `platform_id`.
    pub platform_id: u32,
    /// `platform_rev`.
    pub platform_rev: u32,
}

macro_rules! bit_accessors {
    ($ty:ident { $($(#[$m:meta])* $name:ident: $lo:expr, $width:expr;)* }) => {
        impl $ty {
            $(
                $(#[$m])*
                pub const fn $name(self) -> u32 {
                    (self.0 >> $lo) & ((1u32 << $width) - 1)
                }
            )*
        }
    };
}

/// The node `capability` word (`HSA_CAPABILITY`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Capability(pub u32);

bit_accessors!(Capability {
    /// Bit 0: the node can be hot-plugged.
    hot_pluggable: 0, 1;
    /// Bit 1: an IOMMUv2 (ATS) is present.
    hsammu_present: 1, 1;
    /// Bit 2: shared with graphics.
    shared_with_graphics: 2, 1;
    /// Bit 3: queue sizes must be powers of two.
    queue_size_pow2: 3, 1;
    /// Bit 4: queue sizes are 32-bit.
    queue_size_32bit: 4, 1;
    /// Bit 5: queue idle events supported.
    queue_idle_event: 5, 1;
    /// Bit 6: VA limit.
    va_limit: 6, 1;
    /// Bit 7: watch points supported.
    watch_points_supported: 7, 1;
    /// Bits 8-11: log2 of the number of watch points.
    watch_points_total_bits: 8, 4;
    /// Bits 12-13: doorbell type (2 on gfx9+).
    doorbell_type: 12, 2;
    /// Bit 14: AQL queues are double-mapped.
    aql_queue_double_map: 14, 1;
    /// Bit 15: debug trap supported.
    debug_trap_supported: 15, 1;
    /// Bit 16: wave-launch trap override supported.
    wave_launch_trap_override_supported: 16, 1;
    /// Bit 17: wave-launch mode supported.
    wave_launch_mode_supported: 17, 1;
    /// Bit 18: precise memory operations supported.
    precise_memory_operations_supported: 18, 1;
    /// Bit 20: memory EDC.
    mem_edc: 20, 1;
    /// Bit 21: RAS event notification.
    ras_event_notify: 21, 1;
    /// Bits 22-25: ASIC revision.
    asic_revision: 22, 4;
    /// Bit 26: SRAM ECC (`sramecc+` in the ISA name).
    sram_edc_support: 26, 1;
    /// Bit 27: the SVM API is supported.
    svm_api_supported: 27, 1;
    /// Bit 28: coherent host access.
    coherent_host_access: 28, 1;
    /// Bit 29: the firmware supports debugging.
    debug_supported_firmware: 29, 1;
});

impl fmt::Debug for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Capability({:#010x})", self.0)
    }
}

/// A memory heap type (`HSA_HEAPTYPE`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct HeapType(pub u32);

impl HeapType {
    /// System memory.
    pub const SYSTEM: HeapType = HeapType(0);
    /// CPU-visible VRAM.
    pub const FRAME_BUFFER_PUBLIC: HeapType = HeapType(1);
    /// CPU-invisible VRAM.
    pub const FRAME_BUFFER_PRIVATE: HeapType = HeapType(2);
    /// GDS.
    pub const GPU_GDS: HeapType = HeapType(3);
    /// LDS.
    pub const GPU_LDS: HeapType = HeapType(4);
    /// Scratch.
    pub const GPU_SCRATCH: HeapType = HeapType(5);
    /// System memory mapped by the device page tables.
    pub const DEVICE_SVM: HeapType = HeapType(6);
    /// Remapped MMIO (HDP flush).
    pub const MMIO_REMAP: HeapType = HeapType(7);

    fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "SYSTEM",
            1 => "FRAME_BUFFER_PUBLIC",
            2 => "FRAME_BUFFER_PRIVATE",
            3 => "GPU_GDS",
            4 => "GPU_LDS",
            5 => "GPU_SCRATCH",
            6 => "DEVICE_SVM",
            7 => "MMIO_REMAP",
            _ => return None,
        })
    }
}

impl fmt::Debug for HeapType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "HeapType({})", self.0),
        }
    }
}

/// An io-link type (`HSA_IOLINKTYPE`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IoLinkType(pub u32);

impl IoLinkType {
    /// Undefined.
    pub const UNDEFINED: IoLinkType = IoLinkType(0);
    /// HyperTransport.
    pub const HYPERTRANSPORT: IoLinkType = IoLinkType(1);
    /// PCI Express.
    pub const PCIEXPRESS: IoLinkType = IoLinkType(2);
    /// QPI 1.1.
    pub const QPI_1_1: IoLinkType = IoLinkType(5);
    /// xGMI.
    pub const XGMI: IoLinkType = IoLinkType(11);

    fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "UNDEFINED",
            1 => "HYPERTRANSPORT",
            2 => "PCIEXPRESS",
            3 => "AMBA",
            4 => "MIPI",
            5 => "QPI_1_1",
            8 => "RAPID_IO",
            9 => "INFINIBAND",
            11 => "XGMI",
            12 => "XGOP",
            13 => "GZ",
            14 => "ETHERNET_RDMA",
            15 => "RDMA_OTHER",
            16 => "OTHER",
            _ => return None,
        })
    }
}

impl fmt::Debug for IoLinkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "IoLinkType({})", self.0),
        }
    }
}

/// The cache `type` bits (`HsaCacheType`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CacheType(pub u32);

impl CacheType {
    /// Data cache.
    pub const DATA: CacheType = CacheType(1);
    /// Instruction cache.
    pub const INSTRUCTION: CacheType = CacheType(2);
    /// A CPU cache.
    pub const CPU: CacheType = CacheType(4);
    /// A GPU (HSA compute unit) cache.
    pub const HSACU: CacheType = CacheType(8);

    /// True if all bits of `other` are set.
    pub const fn contains(self, other: CacheType) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for CacheType {
    type Output = CacheType;
    fn bitor(self, rhs: CacheType) -> CacheType {
        CacheType(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for CacheType {
    fn bitor_assign(&mut self, rhs: CacheType) {
        self.0 |= rhs.0;
    }
}

impl fmt::Debug for CacheType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        for (bit, name) in [(1, "DATA"), (2, "INSTRUCTION"), (4, "CPU"), (8, "HSACU")] {
            if self.0 & bit != 0 {
                parts.push(name.to_owned());
            }
        }
        if self.0 & !0xf != 0 {
            parts.push(format!("{:#x}", self.0 & !0xf));
        }
        if parts.is_empty() {
            parts.push("0".into());
        }
        f.write_str(&parts.join("|"))
    }
}

/// The values of a node's `properties` file, with the widths of the
/// `HsaNodeProperties` fields they fill. Keys the file does not have are 0.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeProperties {
    /// `cpu_cores_count` (0 for a dGPU).
    pub cpu_cores_count: u32,
    /// `simd_count` (0 for a CPU).
    pub simd_count: u32,
    /// `mem_banks_count`.
    pub mem_banks_count: u32,
    /// `caches_count`.
    pub caches_count: u32,
    /// `io_links_count`.
    pub io_links_count: u32,
    /// `p2p_links_count`, if the file has the key.
    pub p2p_links_count: Option<u32>,
    /// `cpu_core_id_base`.
    pub cpu_core_id_base: u32,
    /// `simd_id_base`.
    pub simd_id_base: u32,
    /// `capability`.
    pub capability: Capability,
    /// `capability2` (newer kernels).
    pub capability2: u32,
    /// `debug_prop`.
    pub debug_prop: u64,
    /// `max_waves_per_simd`.
    pub max_waves_per_simd: u32,
    /// `lds_size_in_kb`.
    pub lds_size_in_kb: u32,
    /// `gds_size_in_kb`.
    pub gds_size_in_kb: u32,
    /// `wave_front_size`.
    pub wave_front_size: u32,
    /// `array_count` (total shader arrays).
    pub array_count: u32,
    /// `simd_arrays_per_engine`.
    pub simd_arrays_per_engine: u32,
    /// `cu_per_simd_array`.
    pub cu_per_simd_array: u32,
    /// `simd_per_cu`.
    pub simd_per_cu: u32,
    /// `max_slots_scratch_cu`.
    pub max_slots_scratch_cu: u32,
    /// `fw_version` (the low 10 bits become `EngineId.uCode`).
    pub fw_version: u32,
    /// `vendor_id`.
    pub vendor_id: u16,
    /// `device_id`.
    pub device_id: u16,
    /// `location_id` (PCI bus << 8 | device << 3 | function).
    pub location_id: u32,
    /// `domain` (PCI domain).
    pub domain: u32,
    /// `max_engine_clk_fcompute` (MHz).
    pub max_engine_clk_fcompute: u32,
    /// `max_engine_clk_ccompute` (MHz).
    pub max_engine_clk_ccompute: u32,
    /// `local_mem_size`.
    pub local_mem_size: u64,
    /// `drm_render_minor`.
    pub drm_render_minor: u32,
    /// `sdma_fw_version`.
    pub sdma_fw_version: u32,
    /// `hive_id` (xGMI hive; 0 if none).
    pub hive_id: u64,
    /// `unique_id`.
    pub unique_id: u64,
    /// `num_sdma_engines`.
    pub num_sdma_engines: u32,
    /// `num_sdma_xgmi_engines`.
    pub num_sdma_xgmi_engines: u32,
    /// `num_gws`.
    pub num_gws: u8,
    /// `num_sdma_queues_per_engine`.
    pub num_sdma_queues_per_engine: u8,
    /// `num_cp_queues`.
    pub num_cp_queues: u8,
    /// `num_xcc` (newer kernels).
    pub num_xcc: u32,
    /// `family_id` (newer kernels).
    pub family_id: u32,
    /// `gfx_target_version` (decimal, e.g. 90010).
    pub gfx_target_version: u32,
}

impl NodeProperties {
    /// The PCI bus number from `location_id`.
    pub const fn pci_bus(&self) -> u32 {
        (self.location_id >> 8) & 0xff
    }

    /// The PCI device number from `location_id`.
    pub const fn pci_device(&self) -> u32 {
        (self.location_id >> 3) & 0x1f
    }

    /// The PCI function from `location_id`.
    pub const fn pci_function(&self) -> u32 {
        self.location_id & 7
    }

    /// `DDDD:BB:DD.F`.
    pub fn pci_address(&self) -> String {
        format!(
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.domain,
            self.pci_bus(),
            self.pci_device(),
            self.pci_function()
        )
    }
}

/// What kind of device a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// CPU cores and no SIMDs.
    Cpu,
    /// SIMDs and no CPU cores (a discrete GPU).
    Gpu,
    /// Both (an APU).
    Apu,
    /// Neither (a GPU node without SIMDs, or an empty node).
    Other,
}

/// One memory bank (`mem_banks/M/properties`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryBank {
    /// `heap_type`.
    pub heap_type: HeapType,
    /// `size_in_bytes`.
    pub size_in_bytes: u64,
    /// `flags` (`HSA_MEMORYPROPERTY`).
    pub flags: u32,
    /// `width` (bits).
    pub width: u32,
    /// `mem_clk_max` (MHz).
    pub mem_clk_max: u32,
}

/// One cache (`caches/C/properties`, or a host CPU cache).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cache {
    /// `processor_id_low`.
    pub processor_id_low: u32,
    /// `level`.
    pub level: u32,
    /// `size` (KiB in KFD sysfs; bytes for host CPU caches, as in the C
    /// library).
    pub size: u32,
    /// `cache_line_size`.
    pub cache_line_size: u32,
    /// `cache_lines_per_tag`.
    pub cache_lines_per_tag: u32,
    /// `association`.
    pub associativity: u32,
    /// `latency`.
    pub latency: u32,
    /// `type`.
    pub cache_type: CacheType,
    /// `sibling_map` (at most 256 entries; trailing zeros of host caches
    /// are trimmed).
    pub sibling_map: Vec<u32>,
}

/// Where an io link comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkOrigin {
    /// `io_links/L`.
    IoLink,
    /// `p2p_links/L`.
    P2pLink,
    /// Synthesised by the thunk (GPU-CPU-GPU and similar paths).
    Indirect,
}

/// One io link, with node ids translated to the snapshot's node ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoLink {
    /// Where the link comes from.
    pub origin: LinkOrigin,
    /// `type`.
    pub link_type: IoLinkType,
    /// `version_major`.
    pub version_major: u32,
    /// `version_minor`.
    pub version_minor: u32,
    /// `node_from` (snapshot node id).
    pub node_from: u32,
    /// `node_to` (snapshot node id).
    pub node_to: u32,
    /// `weight`.
    pub weight: u32,
    /// `min_latency`.
    pub min_latency: u32,
    /// `max_latency`.
    pub max_latency: u32,
    /// `min_bandwidth` (MB/s).
    pub min_bandwidth: u32,
    /// `max_bandwidth` (MB/s).
    pub max_bandwidth: u32,
    /// `recommended_transfer_size`.
    pub recommended_transfer_size: u32,
    /// `recommended_sdma_engine_id_mask` (newer kernels).
    pub recommended_sdma_engine_id_mask: u32,
    /// `flags` (`HSA_LINKPROPERTY`).
    pub flags: u32,
}

/// Values the thunk derives for a node rather than reading them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Derived {
    /// The GFX IP version in `EngineId` (None: 0.0.0). Without
    /// [`Rules::separate_override_engine_id`] this already includes
    /// `HSA_OVERRIDE_GFX_VERSION`.
    pub gfx_version: Option<GfxVersion>,
    /// `OverrideEngineId` (with [`Rules::separate_override_engine_id`]).
    pub override_gfx_version: Option<GfxVersion>,
    /// True when the version came from the device-id table.
    pub from_device_table: bool,
    /// `AMDName`: the table's CAL name, `GFX%06x`, or the CPU model name.
    pub amd_name: String,
    /// `MarketingName`: from `amdgpu.ids` for GPUs, the CPU model name for
    /// CPUs and APUs.
    pub marketing_name: String,
    /// `NumShaderBanks`.
    pub num_shader_banks: u32,
    /// `VGPRSizePerCU`.
    pub vgpr_size_per_cu: u32,
    /// `SGPRSizePerCU`.
    pub sgpr_size_per_cu: u32,
    /// `NumXcc` (at least 1 for GPU nodes with SIMDs).
    pub num_xcc: u32,
    /// `FamilyID` (from DRM, or sysfs: [`Rules::family_id_from_sysfs`]).
    pub family_id: u32,
    /// `Integrated` (the DRM fusion flag).
    pub integrated: bool,
    /// `Capability` as reported (SVMAPISupported cleared when the context
    /// has no SVM API: [`Rules::clear_svm_capability_without_svm_api`]).
    pub capability: Capability,
}

/// One node of the snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The node id callers use (supported sysfs nodes, compacted).
    pub id: u32,
    /// The sysfs directory number.
    pub sysfs_id: u32,
    /// `gpu_id` (0 for CPU nodes).
    pub gpu_id: u32,
    /// The `properties` values.
    pub properties: NodeProperties,
    /// Derived values.
    pub derived: Derived,
    /// Memory banks from sysfs (the thunk's LDS/scratch/SVM/MMIO banks are
    /// added by the hsakmt conversion).
    pub memory_banks: Vec<MemoryBank>,
    /// Caches.
    pub caches: Vec<Cache>,
    /// Io links: sysfs io links whose target is supported, then p2p links,
    /// then synthesised indirect links.
    pub io_links: Vec<IoLink>,
}

impl Node {
    /// CPU, GPU, APU or other.
    pub fn kind(&self) -> NodeKind {
        match (
            self.properties.cpu_cores_count != 0,
            self.properties.simd_count != 0,
        ) {
            (true, false) => NodeKind::Cpu,
            (false, true) => NodeKind::Gpu,
            (true, true) => NodeKind::Apu,
            (false, false) => NodeKind::Other,
        }
    }

    /// True for nodes with a `gpu_id`.
    pub fn is_gpu(&self) -> bool {
        self.gpu_id != 0
    }

    /// The ISA version ROCr uses: the override if any, else `EngineId`.
    pub fn isa_version(&self) -> Option<GfxVersion> {
        self.derived
            .override_gfx_version
            .or(self.derived.gfx_version)
    }

    /// Number of compute units (`simd_count / simd_per_cu`).
    pub fn compute_units(&self) -> u32 {
        self.properties
            .simd_count
            .checked_div(self.properties.simd_per_cu)
            .unwrap_or(0)
    }

    /// The node's VRAM in bytes: its frame-buffer banks, public and
    /// private (0 for a CPU node; an APU's carve-out counts).
    pub fn vram_size(&self) -> u64 {
        self.memory_size(HeapType::FRAME_BUFFER_PUBLIC)
            + self.memory_size(HeapType::FRAME_BUFFER_PRIVATE)
    }

    /// The VRAM the topology reports as CPU-mappable: the public
    /// frame-buffer bank. amdkfd reports all of VRAM as one public bank
    /// when the PCI BAR covers it, else as one private bank and no public
    /// one (so this is 0 on a small BAR, whose window the topology does
    /// not describe).
    pub fn host_visible_vram(&self) -> u64 {
        self.memory_size(HeapType::FRAME_BUFFER_PUBLIC)
    }

    /// True if the CPU can map all of the node's VRAM (a large, or
    /// resizable, BAR): host-visible VRAM allocations work; on a small
    /// BAR they fail and VRAM is reached through copies.
    pub fn is_large_bar(&self) -> bool {
        let vram = self.vram_size();
        vram != 0 && self.host_visible_vram() == vram
    }

    /// Sum of the sizes of the memory banks of `heap`.
    pub fn memory_size(&self, heap: HeapType) -> u64 {
        self.memory_banks
            .iter()
            .filter(|b| b.heap_type == heap)
            .map(|b| b.size_in_bytes)
            .sum()
    }
}
