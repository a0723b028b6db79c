//! The KFD topology tree in sysfs: paths, property keys, and the bit and
//! enum values of `include/uapi/linux/kfd_sysfs.h`.
//!
//! Layout (below the driver's root, normally `/`):
//!
//! ```text
//! sys/devices/virtual/kfd/kfd/topology/
//!     generation_id                 u32, bumped on hot-plug
//!     system_properties             "key value" lines, see [`system`]
//!     nodes/N/gpu_id                u32, 0 for CPU nodes
//!     nodes/N/name                  e.g. "gfx90a"
//!     nodes/N/properties            "key value" lines, see [`node`]
//!     nodes/N/mem_banks/M/properties   see [`mem_bank`]
//!     nodes/N/caches/M/properties      see [`cache`]
//!     nodes/N/io_links/M/properties    see [`io_link`]
//!     nodes/N/p2p_links/M/properties   same keys as io_links
//! ```
//!
//! Property files hold one `name value` pair per line, values in decimal.
//! Constants present in `/usr/include/linux/kfd_sysfs.h` (linux-libc-dev
//! 6.1) are checked by `tests/layout_kfd.rs`; newer ones are pinned there.

/// Path of the KFD class device below the sysfs root.
pub const KFD_SYSFS_DIR: &str = "sys/devices/virtual/kfd/kfd";
/// Path of the topology directory below the sysfs root.
pub const TOPOLOGY_DIR: &str = "sys/devices/virtual/kfd/kfd/topology";
/// Path of the nodes directory below the sysfs root.
pub const NODES_DIR: &str = "sys/devices/virtual/kfd/kfd/topology/nodes";
/// File in the topology directory: generation counter.
pub const GENERATION_ID: &str = "generation_id";
/// File in the topology directory: system properties.
pub const SYSTEM_PROPERTIES: &str = "system_properties";
/// Directory in the topology directory: one subdirectory per node.
pub const NODES: &str = "nodes";
/// File in a node directory: the node's gpu_id (0 for CPUs).
pub const GPU_ID: &str = "gpu_id";
/// File in a node directory: the node's name.
pub const NAME: &str = "name";
/// File in node, bank, cache and link directories: the property list.
pub const PROPERTIES: &str = "properties";
/// Subdirectory of a node: memory banks.
pub const MEM_BANKS: &str = "mem_banks";
/// Subdirectory of a node: caches.
pub const CACHES: &str = "caches";
/// Subdirectory of a node: IO links.
pub const IO_LINKS: &str = "io_links";
/// Subdirectory of a node: peer-to-peer links (indirect, via other nodes).
pub const P2P_LINKS: &str = "p2p_links";

/// Keys of `system_properties`.
pub mod system {
    /// Platform OEM id.
    pub const PLATFORM_OEM: &str = "platform_oem";
    /// Platform id.
    pub const PLATFORM_ID: &str = "platform_id";
    /// Platform revision.
    pub const PLATFORM_REV: &str = "platform_rev";
}

/// Keys of `nodes/N/properties`.
pub mod node {
    /// CPU cores (0 for GPU nodes).
    pub const CPU_CORES_COUNT: &str = "cpu_cores_count";
    /// SIMDs (0 for CPU nodes).
    pub const SIMD_COUNT: &str = "simd_count";
    /// Number of `mem_banks` entries.
    pub const MEM_BANKS_COUNT: &str = "mem_banks_count";
    /// Number of `caches` entries.
    pub const CACHES_COUNT: &str = "caches_count";
    /// Number of `io_links` entries.
    pub const IO_LINKS_COUNT: &str = "io_links_count";
    /// Number of `p2p_links` entries.
    pub const P2P_LINKS_COUNT: &str = "p2p_links_count";
    /// First CPU core id.
    pub const CPU_CORE_ID_BASE: &str = "cpu_core_id_base";
    /// First SIMD id.
    pub const SIMD_ID_BASE: &str = "simd_id_base";
    /// `HSA_CAP_*` word.
    pub const CAPABILITY: &str = "capability";
    /// `HSA_CAP2_*` word (newer kernels).
    pub const CAPABILITY2: &str = "capability2";
    /// `HSA_DBG_*` word (64-bit).
    pub const DEBUG_PROP: &str = "debug_prop";
    /// Max waves per SIMD.
    pub const MAX_WAVES_PER_SIMD: &str = "max_waves_per_simd";
    /// LDS size in KiB.
    pub const LDS_SIZE_IN_KB: &str = "lds_size_in_kb";
    /// GDS size in KiB.
    pub const GDS_SIZE_IN_KB: &str = "gds_size_in_kb";
    /// Global wave syncs.
    pub const NUM_GWS: &str = "num_gws";
    /// Wavefront size.
    pub const WAVE_FRONT_SIZE: &str = "wave_front_size";
    /// Shader arrays in total.
    pub const ARRAY_COUNT: &str = "array_count";
    /// Shader arrays per engine.
    pub const SIMD_ARRAYS_PER_ENGINE: &str = "simd_arrays_per_engine";
    /// CUs per shader array.
    pub const CU_PER_SIMD_ARRAY: &str = "cu_per_simd_array";
    /// SIMDs per CU.
    pub const SIMD_PER_CU: &str = "simd_per_cu";
    /// Scratch slots per CU.
    pub const MAX_SLOTS_SCRATCH_CU: &str = "max_slots_scratch_cu";
    /// `gfx_target_version`, e.g. 90010 for gfx90a.
    pub const GFX_TARGET_VERSION: &str = "gfx_target_version";
    /// PCI vendor id.
    pub const VENDOR_ID: &str = "vendor_id";
    /// PCI device id.
    pub const DEVICE_ID: &str = "device_id";
    /// PCI bus/device/function.
    pub const LOCATION_ID: &str = "location_id";
    /// PCI domain.
    pub const DOMAIN: &str = "domain";
    /// Render node minor (`/dev/dri/renderD<minor>`).
    pub const DRM_RENDER_MINOR: &str = "drm_render_minor";
    /// xGMI hive id (0 if none).
    pub const HIVE_ID: &str = "hive_id";
    /// SDMA engines (PCIe).
    pub const NUM_SDMA_ENGINES: &str = "num_sdma_engines";
    /// SDMA engines for xGMI.
    pub const NUM_SDMA_XGMI_ENGINES: &str = "num_sdma_xgmi_engines";
    /// SDMA queues per engine.
    pub const NUM_SDMA_QUEUES_PER_ENGINE: &str = "num_sdma_queues_per_engine";
    /// Compute queues available to user mode.
    pub const NUM_CP_QUEUES: &str = "num_cp_queues";
    /// Max GPU engine clock in MHz.
    pub const MAX_ENGINE_CLK_FCOMPUTE: &str = "max_engine_clk_fcompute";
    /// Max CPU clock in MHz.
    pub const MAX_ENGINE_CLK_CCOMPUTE: &str = "max_engine_clk_ccompute";
    /// Local memory size (0 on recent kernels; use mem_banks).
    pub const LOCAL_MEM_SIZE: &str = "local_mem_size";
    /// MEC firmware version.
    pub const FW_VERSION: &str = "fw_version";
    /// SDMA firmware version.
    pub const SDMA_FW_VERSION: &str = "sdma_fw_version";
    /// Unique id of the device.
    pub const UNIQUE_ID: &str = "unique_id";
    /// Number of XCCs (partition).
    pub const NUM_XCC: &str = "num_xcc";
    /// amdgpu family id (read by the newest thunk when present).
    pub const FAMILY_ID: &str = "family_id";

    /// Every key above, in the order the kernel prints GPU nodes.
    pub const ALL: &[&str] = &[
        CPU_CORES_COUNT,
        SIMD_COUNT,
        MEM_BANKS_COUNT,
        CACHES_COUNT,
        IO_LINKS_COUNT,
        P2P_LINKS_COUNT,
        CPU_CORE_ID_BASE,
        SIMD_ID_BASE,
        MAX_WAVES_PER_SIMD,
        LDS_SIZE_IN_KB,
        GDS_SIZE_IN_KB,
        NUM_GWS,
        WAVE_FRONT_SIZE,
        ARRAY_COUNT,
        SIMD_ARRAYS_PER_ENGINE,
        CU_PER_SIMD_ARRAY,
        SIMD_PER_CU,
        MAX_SLOTS_SCRATCH_CU,
        GFX_TARGET_VERSION,
        VENDOR_ID,
        DEVICE_ID,
        LOCATION_ID,
        DOMAIN,
        DRM_RENDER_MINOR,
        HIVE_ID,
        NUM_SDMA_ENGINES,
        NUM_SDMA_XGMI_ENGINES,
        NUM_SDMA_QUEUES_PER_ENGINE,
        NUM_CP_QUEUES,
        MAX_ENGINE_CLK_FCOMPUTE,
        LOCAL_MEM_SIZE,
        FW_VERSION,
        CAPABILITY,
        CAPABILITY2,
        DEBUG_PROP,
        SDMA_FW_VERSION,
        UNIQUE_ID,
        NUM_XCC,
        MAX_ENGINE_CLK_CCOMPUTE,
        FAMILY_ID,
    ];
}

/// Keys of `nodes/N/mem_banks/M/properties`.
pub mod mem_bank {
    /// `HSA_MEM_HEAP_TYPE_*`.
    pub const HEAP_TYPE: &str = "heap_type";
    /// Size in bytes.
    pub const SIZE_IN_BYTES: &str = "size_in_bytes";
    /// `HSA_MEM_FLAGS_*`.
    pub const FLAGS: &str = "flags";
    /// Bus width in bits.
    pub const WIDTH: &str = "width";
    /// Max memory clock in MHz.
    pub const MEM_CLK_MAX: &str = "mem_clk_max";
}

/// Keys of `nodes/N/caches/M/properties`.
pub mod cache {
    /// First processor (CPU core or SIMD id) sharing the cache.
    pub const PROCESSOR_ID_LOW: &str = "processor_id_low";
    /// Cache level.
    pub const LEVEL: &str = "level";
    /// Size in KiB.
    pub const SIZE: &str = "size";
    /// Line size in bytes.
    pub const CACHE_LINE_SIZE: &str = "cache_line_size";
    /// Lines per tag.
    pub const CACHE_LINES_PER_TAG: &str = "cache_lines_per_tag";
    /// Associativity.
    pub const ASSOCIATION: &str = "association";
    /// Latency in ns.
    pub const LATENCY: &str = "latency";
    /// `HSA_CACHE_TYPE_*` bits.
    pub const TYPE: &str = "type";
    /// Comma-separated 0/1 list of the processors sharing the cache; always
    /// the last line.
    pub const SIBLING_MAP: &str = "sibling_map";
}

/// Keys of `nodes/N/io_links/M/properties` (and `p2p_links`).
pub mod io_link {
    /// `HSA_IOLINK_TYPE_*`.
    pub const TYPE: &str = "type";
    /// Link version major.
    pub const VERSION_MAJOR: &str = "version_major";
    /// Link version minor.
    pub const VERSION_MINOR: &str = "version_minor";
    /// Source node (must be this node).
    pub const NODE_FROM: &str = "node_from";
    /// Destination node.
    pub const NODE_TO: &str = "node_to";
    /// NUMA weight.
    pub const WEIGHT: &str = "weight";
    /// Minimum latency.
    pub const MIN_LATENCY: &str = "min_latency";
    /// Maximum latency.
    pub const MAX_LATENCY: &str = "max_latency";
    /// Minimum bandwidth.
    pub const MIN_BANDWIDTH: &str = "min_bandwidth";
    /// Maximum bandwidth.
    pub const MAX_BANDWIDTH: &str = "max_bandwidth";
    /// Recommended transfer size.
    pub const RECOMMENDED_TRANSFER_SIZE: &str = "recommended_transfer_size";
    /// Recommended SDMA engines for this link (KFD 1.17 era kernels).
    pub const RECOMMENDED_SDMA_ENGINE_ID_MASK: &str = "recommended_sdma_engine_id_mask";
    /// `HSA_IOLINK_FLAGS_*`.
    pub const FLAGS: &str = "flags";
}

// --- Capability bits (node `capability`) ------------------------------------

/// `HSA_CAP_HOT_PLUGGABLE`.
pub const HSA_CAP_HOT_PLUGGABLE: u32 = 0x0000_0001;
/// `HSA_CAP_ATS_PRESENT`.
pub const HSA_CAP_ATS_PRESENT: u32 = 0x0000_0002;
/// `HSA_CAP_SHARED_WITH_GRAPHICS`.
pub const HSA_CAP_SHARED_WITH_GRAPHICS: u32 = 0x0000_0004;
/// `HSA_CAP_QUEUE_SIZE_POW2`.
pub const HSA_CAP_QUEUE_SIZE_POW2: u32 = 0x0000_0008;
/// `HSA_CAP_QUEUE_SIZE_32BIT`.
pub const HSA_CAP_QUEUE_SIZE_32BIT: u32 = 0x0000_0010;
/// `HSA_CAP_QUEUE_IDLE_EVENT`.
pub const HSA_CAP_QUEUE_IDLE_EVENT: u32 = 0x0000_0020;
/// `HSA_CAP_VA_LIMIT`.
pub const HSA_CAP_VA_LIMIT: u32 = 0x0000_0040;
/// `HSA_CAP_WATCH_POINTS_SUPPORTED`.
pub const HSA_CAP_WATCH_POINTS_SUPPORTED: u32 = 0x0000_0080;
/// `HSA_CAP_WATCH_POINTS_TOTALBITS_MASK`.
pub const HSA_CAP_WATCH_POINTS_TOTALBITS_MASK: u32 = 0x0000_0f00;
/// `HSA_CAP_WATCH_POINTS_TOTALBITS_SHIFT`.
pub const HSA_CAP_WATCH_POINTS_TOTALBITS_SHIFT: u32 = 8;
/// `HSA_CAP_DOORBELL_TYPE_TOTALBITS_MASK`.
pub const HSA_CAP_DOORBELL_TYPE_TOTALBITS_MASK: u32 = 0x0000_3000;
/// `HSA_CAP_DOORBELL_TYPE_TOTALBITS_SHIFT`.
pub const HSA_CAP_DOORBELL_TYPE_TOTALBITS_SHIFT: u32 = 12;
/// `HSA_CAP_DOORBELL_TYPE_PRE_1_0`.
pub const HSA_CAP_DOORBELL_TYPE_PRE_1_0: u32 = 0x0;
/// `HSA_CAP_DOORBELL_TYPE_1_0`.
pub const HSA_CAP_DOORBELL_TYPE_1_0: u32 = 0x1;
/// `HSA_CAP_DOORBELL_TYPE_2_0`: 64-bit doorbells (gfx9+).
pub const HSA_CAP_DOORBELL_TYPE_2_0: u32 = 0x2;
/// `HSA_CAP_AQL_QUEUE_DOUBLE_MAP`.
pub const HSA_CAP_AQL_QUEUE_DOUBLE_MAP: u32 = 0x0000_4000;
/// `HSA_CAP_TRAP_DEBUG_SUPPORT` (debugger API, KFD 1.13).
pub const HSA_CAP_TRAP_DEBUG_SUPPORT: u32 = 0x0000_8000;
/// `HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_TRAP_OVERRIDE_SUPPORTED` (debugger API, KFD 1.13).
pub const HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_TRAP_OVERRIDE_SUPPORTED: u32 = 0x0001_0000;
/// `HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_MODE_SUPPORTED` (debugger API, KFD 1.13).
pub const HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_MODE_SUPPORTED: u32 = 0x0002_0000;
/// `HSA_CAP_TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS_SUPPORTED` (debugger API, KFD 1.13).
pub const HSA_CAP_TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS_SUPPORTED: u32 = 0x0004_0000;
/// `HSA_CAP_RESERVED_WAS_SRAM_EDCSUPPORTED`: must stay 0.
pub const HSA_CAP_RESERVED_WAS_SRAM_EDCSUPPORTED: u32 = 0x0008_0000;
/// `HSA_CAP_MEM_EDCSUPPORTED`.
pub const HSA_CAP_MEM_EDCSUPPORTED: u32 = 0x0010_0000;
/// `HSA_CAP_RASEVENTNOTIFY`.
pub const HSA_CAP_RASEVENTNOTIFY: u32 = 0x0020_0000;
/// `HSA_CAP_ASIC_REVISION_MASK`.
pub const HSA_CAP_ASIC_REVISION_MASK: u32 = 0x03c0_0000;
/// `HSA_CAP_ASIC_REVISION_SHIFT`.
pub const HSA_CAP_ASIC_REVISION_SHIFT: u32 = 22;
/// `HSA_CAP_SRAM_EDCSUPPORTED`.
pub const HSA_CAP_SRAM_EDCSUPPORTED: u32 = 0x0400_0000;
/// `HSA_CAP_SVMAPI_SUPPORTED`.
pub const HSA_CAP_SVMAPI_SUPPORTED: u32 = 0x0800_0000;
/// `HSA_CAP_FLAGS_COHERENTHOSTACCESS`.
pub const HSA_CAP_FLAGS_COHERENTHOSTACCESS: u32 = 0x1000_0000;
/// `HSA_CAP_TRAP_DEBUG_FIRMWARE_SUPPORTED` (debugger API, KFD 1.13).
pub const HSA_CAP_TRAP_DEBUG_FIRMWARE_SUPPORTED: u32 = 0x2000_0000;
/// `HSA_CAP_TRAP_DEBUG_PRECISE_ALU_OPERATIONS_SUPPORTED` (newer than the 6.1 header).
pub const HSA_CAP_TRAP_DEBUG_PRECISE_ALU_OPERATIONS_SUPPORTED: u32 = 0x4000_0000;
/// `HSA_CAP_PER_QUEUE_RESET_SUPPORTED` (newer than the 6.1 header).
pub const HSA_CAP_PER_QUEUE_RESET_SUPPORTED: u32 = 0x8000_0000;
/// `HSA_CAP_RESERVED` as the newest header defines it. (It still names
/// bits 15..19, although 15..18 are the trap-debug bits since 6.5; the
/// 6.1 header has `0xe00f8000`.)
pub const HSA_CAP_RESERVED: u32 = 0x000f_8000;

/// `HSA_CAP2_PER_SDMA_QUEUE_RESET_SUPPORTED` (node `capability2`; newer than the 6.1 header).
pub const HSA_CAP2_PER_SDMA_QUEUE_RESET_SUPPORTED: u32 = 0x0000_0001;
/// `HSA_CAP2_TRAP_DEBUG_LDS_OUT_OF_ADDR_RANGE_SUPPORTED` (KFD 1.21).
pub const HSA_CAP2_TRAP_DEBUG_LDS_OUT_OF_ADDR_RANGE_SUPPORTED: u32 = 0x0000_0002;
/// `HSA_CAP2_RESERVED` (KFD 1.21).
pub const HSA_CAP2_RESERVED: u32 = 0xffff_fffc;

// --- debug_prop bits ---------------------------------------------------------

/// `HSA_DBG_WATCH_ADDR_MASK_LO_BIT_MASK`.
pub const HSA_DBG_WATCH_ADDR_MASK_LO_BIT_MASK: u64 = 0x0000_000f;
/// `HSA_DBG_WATCH_ADDR_MASK_LO_BIT_SHIFT`.
pub const HSA_DBG_WATCH_ADDR_MASK_LO_BIT_SHIFT: u32 = 0;
/// `HSA_DBG_WATCH_ADDR_MASK_HI_BIT_MASK`.
pub const HSA_DBG_WATCH_ADDR_MASK_HI_BIT_MASK: u64 = 0x0000_03f0;
/// `HSA_DBG_WATCH_ADDR_MASK_HI_BIT_SHIFT`.
pub const HSA_DBG_WATCH_ADDR_MASK_HI_BIT_SHIFT: u32 = 4;
/// `HSA_DBG_DISPATCH_INFO_ALWAYS_VALID`.
pub const HSA_DBG_DISPATCH_INFO_ALWAYS_VALID: u64 = 0x0000_0400;
/// `HSA_DBG_WATCHPOINTS_EXCLUSIVE`.
pub const HSA_DBG_WATCHPOINTS_EXCLUSIVE: u64 = 0x0000_0800;
/// `HSA_DBG_RESERVED`.
pub const HSA_DBG_RESERVED: u64 = 0xffff_ffff_ffff_f000;

// --- Memory banks -------------------------------------------------------------

/// `HSA_MEM_HEAP_TYPE_SYSTEM`.
pub const HSA_MEM_HEAP_TYPE_SYSTEM: u32 = 0;
/// `HSA_MEM_HEAP_TYPE_FB_PUBLIC`: CPU-visible VRAM.
pub const HSA_MEM_HEAP_TYPE_FB_PUBLIC: u32 = 1;
/// `HSA_MEM_HEAP_TYPE_FB_PRIVATE`: VRAM not visible to the CPU.
pub const HSA_MEM_HEAP_TYPE_FB_PRIVATE: u32 = 2;
/// `HSA_MEM_HEAP_TYPE_GPU_GDS`.
pub const HSA_MEM_HEAP_TYPE_GPU_GDS: u32 = 3;
/// `HSA_MEM_HEAP_TYPE_GPU_LDS`.
pub const HSA_MEM_HEAP_TYPE_GPU_LDS: u32 = 4;
/// `HSA_MEM_HEAP_TYPE_GPU_SCRATCH`.
pub const HSA_MEM_HEAP_TYPE_GPU_SCRATCH: u32 = 5;

/// `HSA_MEM_FLAGS_HOT_PLUGGABLE`.
pub const HSA_MEM_FLAGS_HOT_PLUGGABLE: u32 = 0x0000_0001;
/// `HSA_MEM_FLAGS_NON_VOLATILE`.
pub const HSA_MEM_FLAGS_NON_VOLATILE: u32 = 0x0000_0002;
/// `HSA_MEM_FLAGS_RESERVED`.
pub const HSA_MEM_FLAGS_RESERVED: u32 = 0xffff_fffc;

// --- Caches ---------------------------------------------------------------------

/// `HSA_CACHE_TYPE_DATA`.
pub const HSA_CACHE_TYPE_DATA: u32 = 0x0000_0001;
/// `HSA_CACHE_TYPE_INSTRUCTION`.
pub const HSA_CACHE_TYPE_INSTRUCTION: u32 = 0x0000_0002;
/// `HSA_CACHE_TYPE_CPU`.
pub const HSA_CACHE_TYPE_CPU: u32 = 0x0000_0004;
/// `HSA_CACHE_TYPE_HSACU`.
pub const HSA_CACHE_TYPE_HSACU: u32 = 0x0000_0008;
/// `HSA_CACHE_TYPE_RESERVED`.
pub const HSA_CACHE_TYPE_RESERVED: u32 = 0xffff_fff0;

// --- IO links -------------------------------------------------------------------

/// `HSA_IOLINK_TYPE_UNDEFINED`.
pub const HSA_IOLINK_TYPE_UNDEFINED: u32 = 0;
/// `HSA_IOLINK_TYPE_HYPERTRANSPORT`.
pub const HSA_IOLINK_TYPE_HYPERTRANSPORT: u32 = 1;
/// `HSA_IOLINK_TYPE_PCIEXPRESS`.
pub const HSA_IOLINK_TYPE_PCIEXPRESS: u32 = 2;
/// `HSA_IOLINK_TYPE_AMBA`.
pub const HSA_IOLINK_TYPE_AMBA: u32 = 3;
/// `HSA_IOLINK_TYPE_MIPI`.
pub const HSA_IOLINK_TYPE_MIPI: u32 = 4;
/// `HSA_IOLINK_TYPE_QPI_1_1`.
pub const HSA_IOLINK_TYPE_QPI_1_1: u32 = 5;
/// `HSA_IOLINK_TYPE_RESERVED1`.
pub const HSA_IOLINK_TYPE_RESERVED1: u32 = 6;
/// `HSA_IOLINK_TYPE_RESERVED2`.
pub const HSA_IOLINK_TYPE_RESERVED2: u32 = 7;
/// `HSA_IOLINK_TYPE_RAPID_IO`.
pub const HSA_IOLINK_TYPE_RAPID_IO: u32 = 8;
/// `HSA_IOLINK_TYPE_INFINIBAND`.
pub const HSA_IOLINK_TYPE_INFINIBAND: u32 = 9;
/// `HSA_IOLINK_TYPE_RESERVED3`.
pub const HSA_IOLINK_TYPE_RESERVED3: u32 = 10;
/// `HSA_IOLINK_TYPE_XGMI`.
pub const HSA_IOLINK_TYPE_XGMI: u32 = 11;
/// `HSA_IOLINK_TYPE_XGOP`.
pub const HSA_IOLINK_TYPE_XGOP: u32 = 12;
/// `HSA_IOLINK_TYPE_GZ`.
pub const HSA_IOLINK_TYPE_GZ: u32 = 13;
/// `HSA_IOLINK_TYPE_ETHERNET_RDMA`.
pub const HSA_IOLINK_TYPE_ETHERNET_RDMA: u32 = 14;
/// `HSA_IOLINK_TYPE_RDMA_OTHER`.
pub const HSA_IOLINK_TYPE_RDMA_OTHER: u32 = 15;
/// `HSA_IOLINK_TYPE_OTHER`.
pub const HSA_IOLINK_TYPE_OTHER: u32 = 16;

/// `HSA_IOLINK_FLAGS_ENABLED`.
pub const HSA_IOLINK_FLAGS_ENABLED: u32 = 1 << 0;
/// `HSA_IOLINK_FLAGS_NON_COHERENT`.
pub const HSA_IOLINK_FLAGS_NON_COHERENT: u32 = 1 << 1;
/// `HSA_IOLINK_FLAGS_NO_ATOMICS_32_BIT`.
pub const HSA_IOLINK_FLAGS_NO_ATOMICS_32_BIT: u32 = 1 << 2;
/// `HSA_IOLINK_FLAGS_NO_ATOMICS_64_BIT`.
pub const HSA_IOLINK_FLAGS_NO_ATOMICS_64_BIT: u32 = 1 << 3;
/// `HSA_IOLINK_FLAGS_NO_PEER_TO_PEER_DMA`.
pub const HSA_IOLINK_FLAGS_NO_PEER_TO_PEER_DMA: u32 = 1 << 4;
/// `HSA_IOLINK_FLAGS_RESERVED`.
pub const HSA_IOLINK_FLAGS_RESERVED: u32 = 0xffff_ffe0;
