//! Built-in machine topologies.
//!
//! Each preset is what the amdkfd driver of a recent kernel reports for a
//! real machine of that kind: the keys and their order follow
//! `kfd_topology.c` (`node_show`, `mem_show`, `kfd_cache_show`,
//! `iolink_show`), the values follow the device's published specs and the
//! values real systems print (rocminfo, the sysfs tree). Where the kernel
//! derives a value from a hash or from the host (gpu_id, unique_id,
//! hive_id, CPU memory size), the preset uses a fixed value so the rendered
//! tree is deterministic.
//!
//! Choices a real kernel leaves to the platform:
//!
//! - **CPU caches are not listed in KFD sysfs** (`caches_count 0` on CPU
//!   nodes), as with the virtual CRAT current kernels build: libhsakmt then
//!   reads `/sys/devices/system/node/.../cache`, which the simulator serves
//!   from each CPU node's cache model ([`crate::sysfs::cpu`]), independent
//!   of the host. The node's [`Node::caches`] are that model; with
//!   [`Platform::cpu_caches_in_kfd`] they are listed in KFD as well (types
//!   5/6/7, i.e. CPU|data, CPU|instruction, CPU|unified), as with an ACPI
//!   CRAT.
//! - **Caches are listed once per kind** (the first instance, with its
//!   sibling map), not once per CU group as real hardware does (an MI210
//!   reports ~200 cache entries). ROCr and rocminfo only use the distinct
//!   levels and sizes.
//! - GPU nodes are numbered after all CPU nodes, as the kernel does.
//! - Data-center GPUs (MI210, MI300X) have a large BAR (all VRAM CPU
//!   visible), as those servers ship, so their VRAM bank is
//!   `heap_type 1` (`HSA_MEM_HEAP_TYPE_FB_PUBLIC`): `kfd_crat.c` reports
//!   FB_PUBLIC when no part of VRAM is private. The RX 7900 XTX has the
//!   consumer default, a 256 MiB BAR, so the whole of its VRAM is one
//!   `heap_type 2` (`HSA_MEM_HEAP_TYPE_FB_PRIVATE`) bank, and the kernel
//!   refuses host-accessible VRAM allocations there. The APU's carve-out is
//!   all CPU visible (amdgpu reports no private part for APUs), so it is
//!   FB_PUBLIC too.

use crate::topology::{
    cache_type, Cache, CpuIdentity, GpuIdentity, Node, Platform, Props, Topology,
};

/// Names of the built-in presets. The first is the default.
pub const NAMES: &[&str] = &["mi210", "mi300x", "apu", "navi31", "large64"];

/// The default preset name.
pub const DEFAULT: &str = "mi210";

/// The built-in topology with the given name.
pub fn preset(name: &str) -> Option<Topology> {
    let mut t = match name {
        "mi210" => mi210(),
        "mi300x" => mi300x(),
        "apu" => apu(),
        "navi31" => navi31(),
        "large64" => large64(),
        _ => return None,
    };
    t.name = name.to_string();
    t.sync_counts();
    debug_assert_eq!(t.validate(), Ok(()));
    Some(t)
}

use kfd_sys::drm::{
    AMDGPU_FAMILY_AI as FAMILY_AI, AMDGPU_FAMILY_GC_11_0_0 as FAMILY_GC_11_0_0,
    AMDGPU_FAMILY_RV as FAMILY_RV, AMDGPU_VRAM_TYPE_DDR4 as VRAM_TYPE_DDR4,
    AMDGPU_VRAM_TYPE_GDDR6 as VRAM_TYPE_GDDR6, AMDGPU_VRAM_TYPE_HBM as VRAM_TYPE_HBM,
};

// VRAM heap types (HSA_MEM_HEAP_TYPE_*).
const HEAP_FB_PUBLIC: u64 = kfd_sys::sysfs::HSA_MEM_HEAP_TYPE_FB_PUBLIC as u64;
const HEAP_FB_PRIVATE: u64 = kfd_sys::sysfs::HSA_MEM_HEAP_TYPE_FB_PRIVATE as u64;

// io_link types (CRAT_IOLINK_TYPE_*).
const LINK_PCIE: u64 = 2;
const LINK_QPI: u64 = 5;
const LINK_XGMI: u64 = 11;

// Kernel link weights (kfd_crat.h).
const WEIGHT_PCIE: u64 = 20;
const WEIGHT_XGMI: u64 = 15;
const WEIGHT_INTER_SOCKET: u64 = 32;

// Capability bits (kfd_topology.h, HSA_CAP_*), declared once in kfd-sys.
use kfd_sys::sysfs::{
    HSA_CAP_AQL_QUEUE_DOUBLE_MAP, HSA_CAP_ASIC_REVISION_SHIFT as CAP_ASIC_REVISION_SHIFT,
    HSA_CAP_DOORBELL_TYPE_2_0, HSA_CAP_DOORBELL_TYPE_TOTALBITS_SHIFT, HSA_CAP_MEM_EDCSUPPORTED,
    HSA_CAP_RASEVENTNOTIFY, HSA_CAP_SRAM_EDCSUPPORTED, HSA_CAP_SVMAPI_SUPPORTED,
    HSA_CAP_TRAP_DEBUG_FIRMWARE_SUPPORTED, HSA_CAP_TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS_SUPPORTED,
    HSA_CAP_TRAP_DEBUG_SUPPORT, HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_MODE_SUPPORTED,
    HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_TRAP_OVERRIDE_SUPPORTED, HSA_CAP_WATCH_POINTS_SUPPORTED,
    HSA_CAP_WATCH_POINTS_TOTALBITS_SHIFT,
};

/// Capability bits every gfx9+ dGPU on a current kernel reports: four
/// watch points, 64-bit doorbells, AQL ring double-mapping, SVM, and the
/// debugger's trap support.
const CAP_GFX9_BASE: u64 = (HSA_CAP_WATCH_POINTS_SUPPORTED
    | (2 << HSA_CAP_WATCH_POINTS_TOTALBITS_SHIFT)
    | (HSA_CAP_DOORBELL_TYPE_2_0 << HSA_CAP_DOORBELL_TYPE_TOTALBITS_SHIFT)
    | HSA_CAP_AQL_QUEUE_DOUBLE_MAP
    | HSA_CAP_SVMAPI_SUPPORTED
    | HSA_CAP_TRAP_DEBUG_SUPPORT
    | HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_TRAP_OVERRIDE_SUPPORTED
    | HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_MODE_SUPPORTED
    | HSA_CAP_TRAP_DEBUG_FIRMWARE_SUPPORTED) as u64;

/// Data-center parts add ECC/RAS and precise memory operations.
const CAP_INSTINCT: u64 = CAP_GFX9_BASE
    | (HSA_CAP_TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS_SUPPORTED
        | HSA_CAP_MEM_EDCSUPPORTED
        | HSA_CAP_RASEVENTNOTIFY
        | HSA_CAP_SRAM_EDCSUPPORTED) as u64;

/// The first `simd_id_base` the kernel hands out to GPU nodes.
const GPU_PROCESSOR_ID_BASE: u64 = 0x8000_1000;

/// One cache kind of a GPU: level, size in KiB, line size, associativity,
/// type bits, and how many CUs share one instance.
#[derive(Clone, Copy)]
struct GpuCache {
    level: u64,
    size_kb: u64,
    line: u64,
    assoc: u64,
    ty: u64,
    cus_shared: u64,
}

const L1_DATA: u64 = cache_type::DATA | cache_type::HSACU;
const L1_INST: u64 = cache_type::INSTRUCTION | cache_type::HSACU;

/// Everything that differs between GPU models.
struct GpuModel {
    name: &'static str,
    gfx_target_version: u64,
    identity: GpuIdentity,
    cus: u64,
    simd_per_cu: u64,
    array_count: u64,
    arrays_per_engine: u64,
    cu_per_simd_array: u64,
    max_waves_per_simd: u64,
    lds_kb: u64,
    num_gws: u64,
    wave_front_size: u64,
    max_slots_scratch_cu: u64,
    sdma_engines: u64,
    sdma_xgmi_engines: u64,
    sdma_queues_per_engine: u64,
    cp_queues: u64,
    max_clk_mhz: u64,
    fw_version: u64,
    sdma_fw_version: u64,
    capability: u64,
    debug_prop: u64,
    num_xcc: u64,
    vram_heap_type: u64,
    vram_bytes: u64,
    vram_width: u64,
    vram_clk_mhz: u64,
    caches: &'static [GpuCache],
}

fn gfx90a() -> GpuModel {
    GpuModel {
        name: "gfx90a",
        gfx_target_version: 90010,
        identity: GpuIdentity {
            device_id: 0x740f,
            pci_rev: 0x02,
            family: FAMILY_AI,
            chip_rev: 1,
            external_rev: 0x3d,
            marketing_name: "AMD Instinct MI210".into(),
            subsystem_vendor: 0x1002,
            subsystem_device: 0x0c34,
            vram_type: VRAM_TYPE_HBM,
            vram_bit_width: 4096,
            num_tcc_blocks: 16,
            gb_addr_config: 0x2a11_4042,
            gpu_counter_freq_khz: 100_000,
            max_memory_clock_mhz: 1600,
            visible_vram_size: 0,
            gtt_size: 0,
        },
        cus: 104,
        simd_per_cu: 4,
        array_count: 8,
        arrays_per_engine: 1,
        cu_per_simd_array: 16,
        max_waves_per_simd: 8,
        lds_kb: 64,
        num_gws: 64,
        wave_front_size: 64,
        max_slots_scratch_cu: 32,
        sdma_engines: 2,
        sdma_xgmi_engines: 3,
        sdma_queues_per_engine: 8,
        cp_queues: 24,
        max_clk_mhz: 1700,
        fw_version: 78,
        sdma_fw_version: 8,
        capability: CAP_INSTINCT | (1 << CAP_ASIC_REVISION_SHIFT),
        debug_prop: 1495,
        num_xcc: 1,
        vram_heap_type: HEAP_FB_PUBLIC,
        vram_bytes: 64 * GIB - 16 * MIB,
        vram_width: 4096,
        vram_clk_mhz: 1600,
        caches: &[
            GpuCache {
                level: 1,
                size_kb: 16,
                line: 64,
                assoc: 4,
                ty: L1_DATA,
                cus_shared: 1,
            },
            GpuCache {
                level: 1,
                size_kb: 64,
                line: 64,
                assoc: 8,
                ty: L1_INST,
                cus_shared: 2,
            },
            GpuCache {
                level: 1,
                size_kb: 16,
                line: 64,
                assoc: 8,
                ty: L1_DATA,
                cus_shared: 2,
            },
            GpuCache {
                level: 2,
                size_kb: 8192,
                line: 128,
                assoc: 16,
                ty: L1_DATA,
                cus_shared: 104,
            },
        ],
    }
}

fn gfx942() -> GpuModel {
    GpuModel {
        name: "gfx942",
        gfx_target_version: 90402,
        identity: GpuIdentity {
            device_id: 0x74a1,
            pci_rev: 0x00,
            family: FAMILY_AI,
            chip_rev: 1,
            external_rev: 0x46,
            marketing_name: "AMD Instinct MI300X".into(),
            subsystem_vendor: 0x1002,
            subsystem_device: 0x74a1,
            vram_type: VRAM_TYPE_HBM,
            vram_bit_width: 8192,
            num_tcc_blocks: 16,
            gb_addr_config: 0x2a11_4042,
            gpu_counter_freq_khz: 100_000,
            max_memory_clock_mhz: 1300,
            visible_vram_size: 0,
            gtt_size: 0,
        },
        cus: 304,
        simd_per_cu: 4,
        array_count: 32,
        arrays_per_engine: 1,
        cu_per_simd_array: 10,
        max_waves_per_simd: 8,
        lds_kb: 64,
        num_gws: 64,
        wave_front_size: 64,
        max_slots_scratch_cu: 32,
        sdma_engines: 2,
        sdma_xgmi_engines: 14,
        sdma_queues_per_engine: 8,
        cp_queues: 24,
        max_clk_mhz: 2100,
        fw_version: 157,
        sdma_fw_version: 19,
        capability: CAP_INSTINCT | (1 << CAP_ASIC_REVISION_SHIFT),
        debug_prop: 1495,
        num_xcc: 8,
        vram_heap_type: HEAP_FB_PUBLIC,
        vram_bytes: 192 * GIB - 16 * MIB,
        vram_width: 8192,
        vram_clk_mhz: 1300,
        caches: &[
            GpuCache {
                level: 1,
                size_kb: 32,
                line: 128,
                assoc: 64,
                ty: L1_DATA,
                cus_shared: 1,
            },
            GpuCache {
                level: 1,
                size_kb: 64,
                line: 64,
                assoc: 8,
                ty: L1_INST,
                cus_shared: 2,
            },
            GpuCache {
                level: 1,
                size_kb: 16,
                line: 64,
                assoc: 8,
                ty: L1_DATA,
                cus_shared: 2,
            },
            GpuCache {
                level: 2,
                size_kb: 4096,
                line: 128,
                assoc: 16,
                ty: L1_DATA,
                cus_shared: 38,
            },
            GpuCache {
                level: 3,
                size_kb: 262_144,
                line: 64,
                assoc: 16,
                ty: L1_DATA,
                cus_shared: 304,
            },
        ],
    }
}

fn gfx1100() -> GpuModel {
    GpuModel {
        name: "gfx1100",
        gfx_target_version: 110000,
        identity: GpuIdentity {
            device_id: 0x744c,
            pci_rev: 0xc8,
            family: FAMILY_GC_11_0_0,
            chip_rev: 0,
            external_rev: 0x01,
            marketing_name: "AMD Radeon RX 7900 XTX".into(),
            subsystem_vendor: 0x1002,
            subsystem_device: 0x0e3b,
            vram_type: VRAM_TYPE_GDDR6,
            vram_bit_width: 384,
            num_tcc_blocks: 96,
            gb_addr_config: 0x0000_0545,
            gpu_counter_freq_khz: 100_000,
            max_memory_clock_mhz: 1250,
            visible_vram_size: 256 * MIB,
            gtt_size: 0,
        },
        cus: 96,
        simd_per_cu: 2,
        array_count: 6,
        arrays_per_engine: 2,
        cu_per_simd_array: 8,
        max_waves_per_simd: 16,
        lds_kb: 64,
        num_gws: 64,
        wave_front_size: 32,
        max_slots_scratch_cu: 32,
        sdma_engines: 2,
        sdma_xgmi_engines: 0,
        sdma_queues_per_engine: 6,
        cp_queues: 8,
        max_clk_mhz: 2482,
        fw_version: 2190,
        sdma_fw_version: 21,
        capability: CAP_GFX9_BASE,
        debug_prop: 1495,
        num_xcc: 1,
        vram_heap_type: HEAP_FB_PRIVATE,
        vram_bytes: 24 * GIB - 512 * MIB,
        vram_width: 384,
        vram_clk_mhz: 1250,
        caches: &[
            GpuCache {
                level: 1,
                size_kb: 32,
                line: 128,
                assoc: 64,
                ty: L1_DATA,
                cus_shared: 1,
            },
            GpuCache {
                level: 1,
                size_kb: 32,
                line: 64,
                assoc: 8,
                ty: L1_INST,
                cus_shared: 2,
            },
            GpuCache {
                level: 1,
                size_kb: 16,
                line: 64,
                assoc: 8,
                ty: L1_DATA,
                cus_shared: 2,
            },
            GpuCache {
                level: 2,
                size_kb: 6144,
                line: 128,
                assoc: 16,
                ty: L1_DATA,
                cus_shared: 96,
            },
            GpuCache {
                level: 3,
                size_kb: 98_304,
                line: 64,
                assoc: 16,
                ty: L1_DATA,
                cus_shared: 96,
            },
        ],
    }
}

fn gfx902() -> GpuModel {
    GpuModel {
        name: "gfx902",
        gfx_target_version: 90002,
        identity: GpuIdentity {
            device_id: 0x15dd,
            pci_rev: 0xc6,
            family: FAMILY_RV,
            chip_rev: 0,
            external_rev: 0x01,
            marketing_name: "AMD Radeon Vega 11 Graphics".into(),
            subsystem_vendor: 0x1002,
            subsystem_device: 0x15dd,
            vram_type: VRAM_TYPE_DDR4,
            vram_bit_width: 128,
            num_tcc_blocks: 4,
            gb_addr_config: 0x2400_0042,
            gpu_counter_freq_khz: 25_000,
            max_memory_clock_mhz: 1600,
            visible_vram_size: 0,
            gtt_size: 0,
        },
        cus: 11,
        simd_per_cu: 4,
        array_count: 1,
        arrays_per_engine: 1,
        cu_per_simd_array: 11,
        max_waves_per_simd: 10,
        lds_kb: 64,
        num_gws: 0,
        wave_front_size: 64,
        max_slots_scratch_cu: 32,
        sdma_engines: 1,
        sdma_xgmi_engines: 0,
        sdma_queues_per_engine: 2,
        cp_queues: 24,
        max_clk_mhz: 1250,
        fw_version: 469,
        sdma_fw_version: 433,
        capability: CAP_GFX9_BASE,
        debug_prop: 1495,
        num_xcc: 1,
        vram_heap_type: HEAP_FB_PUBLIC,
        vram_bytes: 2 * GIB,
        vram_width: 128,
        vram_clk_mhz: 1600,
        caches: &[
            GpuCache {
                level: 1,
                size_kb: 16,
                line: 64,
                assoc: 4,
                ty: L1_DATA,
                cus_shared: 1,
            },
            GpuCache {
                level: 1,
                size_kb: 32,
                line: 64,
                assoc: 8,
                ty: L1_INST,
                cus_shared: 3,
            },
            GpuCache {
                level: 1,
                size_kb: 16,
                line: 64,
                assoc: 8,
                ty: L1_DATA,
                cus_shared: 3,
            },
            GpuCache {
                level: 2,
                size_kb: 1024,
                line: 64,
                assoc: 16,
                ty: L1_DATA,
                cus_shared: 11,
            },
        ],
    }
}

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// A CPU model: identity, threads per NUMA node, clock, caches.
struct CpuModel {
    identity: CpuIdentity,
    threads: u64,
    threads_per_core: u64,
    max_clk_mhz: u64,
    l1d_kb: u64,
    l1i_kb: u64,
    l2_kb: u64,
    l3_kb: u64,
    cores_per_l3: u64,
}

fn epyc_7313() -> CpuModel {
    CpuModel {
        identity: CpuIdentity {
            vendor_id: "AuthenticAMD".into(),
            model_name: "AMD EPYC 7313 16-Core Processor".into(),
            family: 25,
            model: 1,
            stepping: 1,
        },
        threads: 32,
        threads_per_core: 2,
        max_clk_mhz: 3000,
        l1d_kb: 32,
        l1i_kb: 32,
        l2_kb: 512,
        l3_kb: 32_768,
        cores_per_l3: 4,
    }
}

fn epyc_9654() -> CpuModel {
    CpuModel {
        identity: CpuIdentity {
            vendor_id: "AuthenticAMD".into(),
            model_name: "AMD EPYC 9654 96-Core Processor".into(),
            family: 25,
            model: 17,
            stepping: 1,
        },
        threads: 192,
        threads_per_core: 2,
        max_clk_mhz: 3707,
        l1d_kb: 32,
        l1i_kb: 32,
        l2_kb: 1024,
        l3_kb: 32_768,
        cores_per_l3: 8,
    }
}

fn ryzen_2400g() -> CpuModel {
    CpuModel {
        identity: CpuIdentity {
            vendor_id: "AuthenticAMD".into(),
            model_name: "AMD Ryzen 5 2400G with Radeon Vega Graphics".into(),
            family: 23,
            model: 17,
            stepping: 0,
        },
        threads: 8,
        threads_per_core: 2,
        max_clk_mhz: 3600,
        l1d_kb: 32,
        l1i_kb: 64,
        l2_kb: 512,
        l3_kb: 4096,
        cores_per_l3: 4,
    }
}

fn ryzen_7950x() -> CpuModel {
    CpuModel {
        identity: CpuIdentity {
            vendor_id: "AuthenticAMD".into(),
            model_name: "AMD Ryzen 9 7950X 16-Core Processor".into(),
            family: 25,
            model: 97,
            stepping: 2,
        },
        threads: 32,
        threads_per_core: 2,
        max_clk_mhz: 5881,
        l1d_kb: 32,
        l1i_kb: 32,
        l2_kb: 1024,
        l3_kb: 32_768,
        cores_per_l3: 8,
    }
}

/// A sibling map with the first `shared` of `slots` entries set, padded to
/// a multiple of 32 entries (at most 256, what libhsakmt reads).
fn sibling_map(shared: u64, slots: u64) -> Vec<u32> {
    let len = slots.max(shared).div_ceil(32).clamp(1, 8) * 32;
    (0..len).map(|i| u32::from(i < shared)).collect()
}

fn cache(
    processor_id_low: u64,
    level: u64,
    size_kb: u64,
    line: u64,
    assoc: u64,
    ty: u64,
    map: Vec<u32>,
) -> Cache {
    Cache {
        properties: Props(vec![
            ("processor_id_low".into(), processor_id_low),
            ("level".into(), level),
            ("size".into(), size_kb),
            ("cache_line_size".into(), line),
            ("cache_lines_per_tag".into(), 1),
            ("association".into(), assoc),
            ("latency".into(), if level == 1 { 1 } else { 0 }),
            ("type".into(), ty),
        ]),
        sibling_map: map,
    }
}

fn props(pairs: &[(&str, u64)]) -> Props {
    Props(pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect())
}

fn link(ty: u64, from: usize, to: usize, weight: u64, min_bw: u64, max_bw: u64) -> Props {
    props(&[
        ("type", ty),
        ("version_major", 0),
        ("version_minor", 0),
        ("node_from", from as u64),
        ("node_to", to as u64),
        ("weight", weight),
        ("min_latency", 0),
        ("max_latency", 0),
        ("min_bandwidth", min_bw),
        ("max_bandwidth", max_bw),
        ("recommended_transfer_size", 0),
        ("flags", 1),
    ])
}

/// PCIe bandwidths in MB/s as amdgpu computes them (gen1 x1 minimum,
/// negotiated maximum).
const PCIE_MIN_BW: u64 = 312;
const PCIE4_X16_BW: u64 = 31_504;
const PCIE5_X16_BW: u64 = 63_008;
const XGMI_MI300_BW: u64 = 64_000;
const XGMI_MI300_MIN_BW: u64 = 50_000;

/// The node-properties keys every node has, in the kernel's order.
fn common_props(cpu_cores: u64, simd: u64, cpu_core_id_base: u64, simd_id_base: u64) -> Props {
    props(&[
        ("cpu_cores_count", cpu_cores),
        ("simd_count", simd),
        ("mem_banks_count", 0),
        ("caches_count", 0),
        ("io_links_count", 0),
        ("p2p_links_count", 0),
        ("cpu_core_id_base", cpu_core_id_base),
        ("simd_id_base", simd_id_base),
        ("max_waves_per_simd", 0),
        ("lds_size_in_kb", 0),
        ("gds_size_in_kb", 0),
        ("num_gws", 0),
        ("wave_front_size", 0),
        ("array_count", 0),
        ("simd_arrays_per_engine", 0),
        ("cu_per_simd_array", 0),
        ("simd_per_cu", 0),
        ("max_slots_scratch_cu", 0),
        ("gfx_target_version", 0),
        ("vendor_id", 0),
        ("device_id", 0),
        ("location_id", 0),
        ("domain", 0),
        ("drm_render_minor", 0),
        ("hive_id", 0),
        ("num_sdma_engines", 0),
        ("num_sdma_xgmi_engines", 0),
        ("num_sdma_queues_per_engine", 0),
        ("num_cp_queues", 0),
    ])
}

/// A CPU node whose first logical CPU has APIC id `apic_base`.
fn cpu_node(m: &CpuModel, apic_base: u64, mem_bytes: u64) -> Node {
    let mut properties = common_props(m.threads, 0, apic_base, 0);
    properties.set("max_engine_clk_ccompute", m.max_clk_mhz);
    let slots = m.threads;
    let core = m.threads_per_core;
    let l3 = m.cores_per_l3 * core;
    let caches = vec![
        cache(
            apic_base,
            1,
            m.l1d_kb,
            64,
            8,
            cache_type::DATA | cache_type::CPU,
            sibling_map(core, slots),
        ),
        cache(
            apic_base,
            1,
            m.l1i_kb,
            64,
            8,
            cache_type::INSTRUCTION | cache_type::CPU,
            sibling_map(core, slots),
        ),
        cache(
            apic_base,
            2,
            m.l2_kb,
            64,
            8,
            cache_type::DATA | cache_type::INSTRUCTION | cache_type::CPU,
            sibling_map(core, slots),
        ),
        cache(
            apic_base,
            3,
            m.l3_kb,
            64,
            16,
            cache_type::DATA | cache_type::INSTRUCTION | cache_type::CPU,
            sibling_map(l3, slots),
        ),
    ];
    Node {
        name: String::new(),
        gpu_id: 0,
        properties,
        mem_banks: vec![props(&[
            ("heap_type", 0),
            ("size_in_bytes", mem_bytes),
            ("flags", 0),
            ("width", 0),
            ("mem_clk_max", 0),
        ])],
        caches,
        io_links: Vec::new(),
        p2p_links: Vec::new(),
        gpu: None,
        cpu: Some(m.identity.clone()),
    }
}

/// Where a GPU sits: PCI address, render minor, hive, the host CPU clock
/// the kernel prints on every node, and a seed for the hashed ids.
struct GpuPlace {
    domain: u64,
    bus: u64,
    render_minor: u64,
    simd_id_base: u64,
    hive_id: u64,
    cpu_clk_mhz: u64,
    seed: u64,
}

fn fnv1a(data: &[u64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in data {
        for b in v.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

fn gpu_node(m: &GpuModel, p: &GpuPlace) -> Node {
    let simd = m.cus * m.simd_per_cu;
    let location_id = p.bus << 8;
    let mut properties = common_props(0, simd, 0, p.simd_id_base);
    for (k, v) in [
        ("max_waves_per_simd", m.max_waves_per_simd),
        ("lds_size_in_kb", m.lds_kb),
        ("num_gws", m.num_gws),
        ("wave_front_size", m.wave_front_size),
        ("array_count", m.array_count),
        ("simd_arrays_per_engine", m.arrays_per_engine),
        ("cu_per_simd_array", m.cu_per_simd_array),
        ("simd_per_cu", m.simd_per_cu),
        ("max_slots_scratch_cu", m.max_slots_scratch_cu),
        ("gfx_target_version", m.gfx_target_version),
        ("vendor_id", 0x1002),
        ("device_id", u64::from(m.identity.device_id)),
        ("location_id", location_id),
        ("domain", p.domain),
        ("drm_render_minor", p.render_minor),
        ("hive_id", p.hive_id),
        ("num_sdma_engines", m.sdma_engines),
        ("num_sdma_xgmi_engines", m.sdma_xgmi_engines),
        ("num_sdma_queues_per_engine", m.sdma_queues_per_engine),
        ("num_cp_queues", m.cp_queues),
        ("max_engine_clk_fcompute", m.max_clk_mhz),
        ("local_mem_size", 0),
        ("fw_version", m.fw_version),
        ("capability", m.capability),
        ("debug_prop", m.debug_prop),
        ("sdma_fw_version", m.sdma_fw_version),
        ("unique_id", fnv1a(&[p.seed, 0x756e_6971]) >> 1),
        ("num_xcc", m.num_xcc),
        ("max_engine_clk_ccompute", p.cpu_clk_mhz),
    ] {
        properties.set(k, v);
    }
    let slots = m.array_count * m.arrays_per_engine * m.cu_per_simd_array;
    let caches = m
        .caches
        .iter()
        .map(|c| {
            cache(
                p.simd_id_base,
                c.level,
                c.size_kb,
                c.line,
                c.assoc,
                c.ty,
                sibling_map(c.cus_shared, slots),
            )
        })
        .collect();
    Node {
        name: m.name.to_string(),
        // The kernel folds a hash of the PCI location and device into 16 bits.
        gpu_id: ((fnv1a(&[p.seed, location_id, u64::from(m.identity.device_id)]) % 0xfffe) + 1)
            as u32,
        properties,
        mem_banks: vec![props(&[
            ("heap_type", m.vram_heap_type),
            ("size_in_bytes", m.vram_bytes),
            ("flags", 0),
            ("width", m.vram_width),
            ("mem_clk_max", m.vram_clk_mhz),
        ])],
        caches,
        io_links: Vec::new(),
        p2p_links: Vec::new(),
        gpu: Some(m.identity.clone()),
        cpu: None,
    }
}

/// Builds a machine: `cpus` CPU nodes, then one GPU per entry of `gpus`
/// (model, index of its CPU node, PCI bus), a PCIe link GPU->CPU (and
/// CPU->GPU for a large-BAR GPU), a QPI link between CPU sockets, and
/// xGMI links between GPUs of one hive.
fn machine(
    cpu: &CpuModel,
    cpus: usize,
    cpu_mem: u64,
    gpus: &[(&GpuModel, usize, u64)],
    hive: Option<u64>,
) -> Topology {
    let mut nodes: Vec<Node> = (0..cpus)
        .map(|i| cpu_node(cpu, i as u64 * 256, cpu_mem))
        .collect();
    for (a, node) in nodes.iter_mut().enumerate() {
        for b in (0..cpus).filter(|b| *b != a) {
            node.io_links
                .push(link(LINK_QPI, a, b, WEIGHT_INTER_SOCKET, 0, 0));
        }
    }
    let mut simd_id_base = GPU_PROCESSOR_ID_BASE;
    let hive_id = hive.unwrap_or(0);
    for (i, (m, _, bus)) in gpus.iter().enumerate() {
        let place = GpuPlace {
            domain: 0,
            bus: *bus,
            render_minor: 128 + i as u64,
            simd_id_base,
            hive_id,
            cpu_clk_mhz: cpu.max_clk_mhz,
            seed: i as u64 + 1,
        };
        simd_id_base += m.array_count * m.arrays_per_engine * m.cu_per_simd_array;
        nodes.push(gpu_node(m, &place));
    }
    // Make the hashed gpu_ids unique (the kernel rehashes on collision).
    for n in cpus..nodes.len() {
        while nodes[..n].iter().any(|o| o.gpu_id == nodes[n].gpu_id) {
            nodes[n].gpu_id = nodes[n].gpu_id % 0xfffe + 1;
        }
    }
    for (i, (m, cpu_node_idx, _)) in gpus.iter().enumerate() {
        let g = cpus + i;
        let max_bw = if m.sdma_xgmi_engines >= 8 {
            PCIE5_X16_BW
        } else {
            PCIE4_X16_BW
        };
        nodes[g].io_links.push(link(
            LINK_PCIE,
            g,
            *cpu_node_idx,
            WEIGHT_PCIE,
            PCIE_MIN_BW,
            max_bw,
        ));
        // `kfd_crat.c` marks the GPU's link to its CPU bidirectional only
        // when the device is large-BAR (no private VRAM), and the reverse
        // CPU->GPU link exists only then: runtimes read that link as "the
        // host can reach this GPU's VRAM" and would copy into it with the
        // CPU.
        if m.vram_heap_type == HEAP_FB_PUBLIC {
            nodes[*cpu_node_idx].io_links.push(link(
                LINK_PCIE,
                *cpu_node_idx,
                g,
                WEIGHT_PCIE,
                PCIE_MIN_BW,
                max_bw,
            ));
        }
        if hive.is_some() {
            for j in 0..gpus.len() {
                if j != i {
                    nodes[g].io_links.push(link(
                        LINK_XGMI,
                        g,
                        cpus + j,
                        WEIGHT_XGMI,
                        XGMI_MI300_MIN_BW,
                        XGMI_MI300_BW,
                    ));
                }
            }
        }
    }
    let mut t = Topology {
        name: String::new(),
        generation_id: 1,
        system: props(&[("platform_oem", 0), ("platform_id", 0), ("platform_rev", 0)]),
        nodes,
        platform: Platform::default(),
    };
    t.sync_counts();
    t
}

/// One AMD EPYC 7313 + one AMD Instinct MI210 (gfx90a, 104 CUs, 64 GiB
/// HBM2e) on PCIe 4.0 x16 at 0000:03:00.0.
fn mi210() -> Topology {
    let gpu = gfx90a();
    machine(
        &epyc_7313(),
        1,
        256 * GIB - 1536 * MIB,
        &[(&gpu, 0, 0x03)],
        None,
    )
}

/// Two AMD EPYC 9654 sockets + eight AMD Instinct MI300X (gfx942, 304 CUs,
/// 192 GiB HBM3 each), four per socket on PCIe 5.0, all eight in one xGMI
/// hive with a direct link between every pair.
fn mi300x() -> Topology {
    let gpu = gfx942();
    let buses = [0x05, 0x26, 0x46, 0x65, 0x85, 0xa6, 0xc6, 0xe5];
    let gpus: Vec<(&GpuModel, usize, u64)> = buses
        .iter()
        .enumerate()
        .map(|(i, b)| (&gpu, i / 4, *b))
        .collect();
    machine(
        &epyc_9654(),
        2,
        768 * GIB - 2 * GIB,
        &gpus,
        Some(0x2c6e_9a1b_54f0_d381),
    )
}

/// An AMD Ryzen 5 2400G APU: the CPU node plus its integrated Radeon Vega 11
/// (gfx902, 11 CUs) as a separate GPU node, the layout current kernels
/// report (virtual CRAT). Its "VRAM" is a 2 GiB carve-out of system DDR4,
/// reported as a public frame buffer; GTT is system memory too.
fn apu() -> Topology {
    let gpu = gfx902();
    machine(&ryzen_2400g(), 1, 14 * GIB, &[(&gpu, 0, 0x09)], None)
}

/// An AMD Ryzen 9 7950X + an AMD Radeon RX 7900 XTX (Navi 31, gfx1100,
/// 96 CUs, wave32, 24 GiB GDDR6).
fn navi31() -> Topology {
    let gpu = gfx1100();
    machine(&ryzen_7950x(), 1, 63 * GIB, &[(&gpu, 0, 0x03)], None)
}

/// A synthetic scaling preset: two EPYC 9654 sockets and 64 MI210-class
/// GPUs (32 per socket) on PCIe, no xGMI.
fn large64() -> Topology {
    let gpu = gfx90a();
    let gpus: Vec<(&GpuModel, usize, u64)> = (0..64u64)
        .map(|i| (&gpu, (i / 32) as usize, 0x10 + i * 3))
        .collect();
    machine(&epyc_9654(), 2, 1024 * GIB, &gpus, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologyError;

    #[test]
    fn every_preset_is_valid() {
        for name in NAMES {
            let t = preset(name).unwrap();
            t.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(t.name, *name);
            for (i, n) in t.gpus() {
                assert!(i >= t.cpus().count(), "{name}: GPU nodes follow CPU nodes");
                assert!(n
                    .caches
                    .iter()
                    .all(|c| c.properties.get_or_zero("type") & 8 != 0));
            }
        }
        assert!(preset("nope").is_none());
        assert_eq!(NAMES[0], DEFAULT);
    }

    #[test]
    fn vram_heap_types_follow_the_bar() {
        let heap = |name: &str| -> Vec<u64> {
            preset(name)
                .unwrap()
                .gpus()
                .map(|(_, n)| n.mem_banks[0].get_or_zero("heap_type"))
                .collect()
        };
        // Large BAR (no private VRAM): FB_PUBLIC.
        assert_eq!(heap("mi210"), [HEAP_FB_PUBLIC]);
        assert_eq!(heap("mi300x"), [HEAP_FB_PUBLIC; 8]);
        assert_eq!(heap("large64"), [HEAP_FB_PUBLIC; 64]);
        assert_eq!(heap("apu"), [HEAP_FB_PUBLIC]);
        // 256 MiB BAR: the whole VRAM as one FB_PRIVATE bank.
        assert_eq!(heap("navi31"), [HEAP_FB_PRIVATE]);
        assert_eq!((HEAP_FB_PUBLIC, HEAP_FB_PRIVATE), (1, 2));
    }

    #[test]
    fn cpu_to_gpu_links_only_for_large_bar() {
        for name in NAMES {
            let t = preset(name).unwrap();
            for (g, n) in t.gpus() {
                let large_bar = n.mem_banks[0].get_or_zero("heap_type") == HEAP_FB_PUBLIC;
                let inbound = t
                    .cpus()
                    .flat_map(|(_, c)| &c.io_links)
                    .filter(|l| l.get("node_to") == Some(g as u64))
                    .count();
                assert_eq!(inbound, usize::from(large_bar), "{name} node {g}");
                let to_cpu = n
                    .io_links
                    .iter()
                    .filter(|l| l.get("type") == Some(LINK_PCIE))
                    .count();
                assert_eq!(to_cpu, 1, "{name} node {g}");
            }
        }
        let t = preset("navi31").unwrap();
        assert_eq!(t.nodes[0].properties.get("io_links_count"), Some(0));
    }

    #[test]
    fn preset_shapes() {
        let t = preset("mi210").unwrap();
        assert_eq!((t.cpus().count(), t.gpus().count()), (1, 1));
        let g = &t.nodes[1];
        assert_eq!(g.properties.get("simd_count"), Some(416));
        assert_eq!(g.properties.get("device_id"), Some(0x740f));
        assert_eq!(g.mem_banks[0].get("size_in_bytes"), Some(68_702_699_520));

        let t = preset("mi300x").unwrap();
        assert_eq!((t.cpus().count(), t.gpus().count()), (2, 8));
        for (i, n) in t.gpus() {
            let xgmi = n
                .io_links
                .iter()
                .filter(|l| l.get("type") == Some(11))
                .count();
            assert_eq!(xgmi, 7, "node {i}");
            assert_ne!(n.properties.get_or_zero("hive_id"), 0);
        }

        let t = preset("navi31").unwrap();
        assert_eq!(t.nodes[1].properties.get("wave_front_size"), Some(32));

        let t = preset("large64").unwrap();
        assert_eq!(t.gpus().count(), 64);
        let minors: Vec<u64> = t
            .gpus()
            .map(|(_, n)| n.properties.get_or_zero("drm_render_minor"))
            .collect();
        assert_eq!(minors.first(), Some(&128));
        assert_eq!(minors.last(), Some(&191));
    }

    #[test]
    fn text_format_round_trips() {
        for name in NAMES {
            let t = preset(name).unwrap();
            let back = Topology::parse(&t.to_text()).unwrap();
            assert_eq!(back, t, "{name}");
        }
    }

    #[test]
    fn text_format_overrides_a_base() {
        let text = "base mi210\nname custom\n[node 1 properties]\nsimd_count 208\n[node 1 cache 4]\nprocessor_id_low 1\nlevel 3\nsize 1024\ntype 9\nsibling_map 1,1\n";
        let t = Topology::parse(text).unwrap();
        assert_eq!(t.name, "custom");
        assert_eq!(t.nodes[1].properties.get("simd_count"), Some(208));
        assert_eq!(t.nodes[1].properties.get("caches_count"), Some(5));
        let err = Topology::parse("base mi210\n[node 1 cache 4]\ntype 5\n").unwrap_err();
        assert!(err.to_string().contains("HSACU"), "{err}");
        let err = Topology::parse("[node 2]\n").unwrap_err();
        assert!(matches!(err, TopologyError::Parse { line: 1, .. }), "{err}");
    }

    #[test]
    fn text_format_platform_section() {
        let text = "base mi210\n[platform]\ncpu_caches_in_kfd 1\namdgpu_version 6.8.5\namdgpu_param noretry 0\namdgpu_param noretry 1\n";
        let t = Topology::parse(text).unwrap();
        assert!(t.platform.cpu_caches_in_kfd);
        assert_eq!(t.platform.amdgpu_version.as_deref(), Some("6.8.5"));
        assert_eq!(
            t.platform.amdgpu_params,
            vec![("noretry".to_string(), "1".to_string())]
        );
        assert_eq!(Topology::parse(&t.to_text()).unwrap(), t);
        for bad in ["amdgpu_param a/b 1", "colour blue"] {
            let err = Topology::parse(&format!("base mi210\n[platform]\n{bad}\n")).unwrap_err();
            assert!(
                matches!(err, TopologyError::Parse { line: 3, .. }),
                "{bad}: {err}"
            );
        }
    }
}
