//! The C structs of every ABI generation, filled from the subsystem
//! crates' Rust values field by field as the C library fills them (and
//! read back where the caller supplies inputs).
//!
//! One module per generation ([`rocm_5_2`], [`rocm_6_2`], [`newest`]); each has the same
//! functions over its own `hsakmt_sys` types, and every build compiles all
//! of them (only the one [`crate::generation`] selects is exported through
//! the C ABI). The field lists the generations share are written once, in
//! the macros of this module.

use hsakmt_sys::common::{
    HsaMemoryProperties, HsaSystemProperties, HSA_HEAPTYPE, HSA_MEMORYPROPERTY,
};
use kfd_fmm::PointerType;
use kfd_topology::GpuApertures;

use banks::memory_properties;
use kfd_topology::{Cache, Node, Topology};

pub mod banks;
pub mod newest;
pub mod rocm_5_2;
pub mod rocm_6_2;

/// The `HSA_POINTER_TYPE` number of `kind`: the same in every generation
/// (5.2.3 names no `HSA_POINTER_RESERVED_ADDR`; 5 is its number there too).
pub fn pointer_type(kind: PointerType) -> u32 {
    match kind {
        PointerType::Unknown => 0,
        PointerType::Allocated => 1,
        PointerType::RegisteredUser => 2,
        PointerType::RegisteredGraphics => 3,
        PointerType::RegisteredShared => 4,
        PointerType::ReservedAddr => 5,
    }
}

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
    let g = node.derived.gfx_version.map_or(0, gfx_word);
    (node.properties.fw_version & 0x3ff) | g
}

/// A gfx version in the Major/Minor/Stepping bits of `HSA_ENGINE_ID`.
fn gfx_word(g: kfd_topology::GfxVersion) -> u32 {
    u32::from(g.major & 0x3f) << 10 | u32::from(g.minor) << 16 | u32::from(g.stepping) << 24
}

/// `OverrideEngineId.Value` of the newest header: the gfx version set by
/// `HSA_OVERRIDE_GFX_VERSION`, or 0.
pub fn override_engine_id(node: &Node) -> u32 {
    node.derived.override_gfx_version.map_or(0, gfx_word)
}

/// `HsaSystemProperties` (the same in every generation).
pub fn system_properties(t: &Topology) -> HsaSystemProperties {
    HsaSystemProperties {
        NumNodes: t.num_nodes(),
        PlatformOem: t.system.platform_oem,
        PlatformId: t.system.platform_id,
        PlatformRev: t.system.platform_rev,
    }
}

/// `hsaKmtGetNodeMemoryProperties` (the struct is the same in every
/// generation).
pub fn memory_properties_c(
    topology: &Topology,
    node: &Node,
    apertures: &GpuApertures,
    num_banks: u32,
) -> Vec<HsaMemoryProperties> {
    memory_properties(topology, node, apertures, num_banks)
        .into_iter()
        .map(|m| HsaMemoryProperties {
            HeapType: HSA_HEAPTYPE(m.bank.heap_type.0),
            SizeInBytes: m.bank.size_in_bytes,
            Flags: HSA_MEMORYPROPERTY(m.bank.flags),
            Width: m.bank.width,
            MemoryClockMax: m.bank.mem_clk_max,
            VirtualBaseAddress: m.virtual_base_address,
        })
        .collect()
}

/// `SiblingMap`: the sysfs sibling list, zero-padded to 256 entries.
pub fn sibling_map(c: &Cache) -> [u32; 256] {
    let mut map = [0u32; 256];
    for (o, &v) in map.iter_mut().zip(&c.sibling_map) {
        *o = v;
    }
    map
}

/// `HsaNodeProperties` of generation `$g` (a `hsakmt_sys` module): the
/// fields every generation has, then `$extra` (field: value pairs of the
/// generation's own fields), the rest zero.
macro_rules! node_properties {
    ($g:ident, $node:expr, $apertures:expr, { $($extra:tt)* }) => {{
        let node: &kfd_topology::Node = $node;
        let p = &node.properties;
        let d = &node.derived;
        $g::HsaNodeProperties {
            NumCPUCores: p.cpu_cores_count,
            NumFComputeCores: p.simd_count,
            NumMemoryBanks: $crate::convert::banks::reported_num_memory_banks(node, $apertures),
            NumCaches: node.caches.len() as u32,
            NumIOLinks: node.io_links.len() as u32,
            CComputeIdLo: p.cpu_core_id_base,
            FComputeIdLo: p.simd_id_base,
            Capability: $g::HSA_CAPABILITY(d.capability.0),
            MaxWavesPerSIMD: p.max_waves_per_simd,
            LDSSizeInKB: p.lds_size_in_kb,
            GDSSizeInKB: p.gds_size_in_kb,
            WaveFrontSize: p.wave_front_size,
            NumShaderBanks: d.num_shader_banks,
            NumArrays: p.simd_arrays_per_engine,
            NumCUPerArray: p.cu_per_simd_array,
            NumSIMDPerCU: p.simd_per_cu,
            MaxSlotsScratchCU: p.max_slots_scratch_cu,
            EngineId: $g::HSA_ENGINE_ID($crate::convert::engine_id(node)),
            VendorId: p.vendor_id,
            DeviceId: p.device_id,
            LocationId: p.location_id,
            LocalMemSize: p.local_mem_size,
            MaxEngineClockMhzFCompute: p.max_engine_clk_fcompute,
            MaxEngineClockMhzCCompute: p.max_engine_clk_ccompute,
            DrmRenderMinor: p.drm_render_minor as i32,
            MarketingName: $crate::convert::marketing_name(&d.marketing_name),
            AMDName: $crate::convert::amd_name(&d.amd_name),
            uCodeEngineVersions: $g::HSA_ENGINE_VERSION(p.sdma_fw_version & 0x3ff),
            DebugProperties: $g::HSA_DEBUG_PROPERTIES(p.debug_prop),
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
            $($extra)*
            ..$g::HsaNodeProperties::default()
        }
    }};
}

/// `HsaCacheProperties` of generation `$g` for every cache of `$node`,
/// with `$extra` fields on top of the shared ones.
macro_rules! cache_properties {
    ($g:ident, $node:expr, { $($extra:tt)* }) => {{
        let node: &kfd_topology::Node = $node;
        node.caches
            .iter()
            .map(|c| $g::HsaCacheProperties {
                ProcessorIdLow: c.processor_id_low,
                CacheLevel: c.level,
                CacheSize: c.size,
                CacheLineSize: c.cache_line_size,
                CacheLinesPerTag: c.cache_lines_per_tag,
                CacheAssociativity: c.associativity,
                CacheLatency: c.latency,
                CacheType: $g::HsaCacheType(c.cache_type.0),
                SiblingMap: $crate::convert::sibling_map(c),
                $($extra)*
            })
            .collect()
    }};
}

/// `HsaIoLinkProperties` of generation `$g` for every IO link of `$node`;
/// `$extra` is a closure-free field list where `l` names the link.
macro_rules! io_link_properties {
    ($g:ident, $node:expr, |$l:ident| { $($extra:tt)* }) => {{
        let node: &kfd_topology::Node = $node;
        node.io_links
            .iter()
            .map(|$l| $g::HsaIoLinkProperties {
                IoLinkType: $g::HSA_IOLINKTYPE($l.link_type.0),
                VersionMajor: $l.version_major,
                VersionMinor: $l.version_minor,
                NodeFrom: $l.node_from,
                NodeTo: $l.node_to,
                Weight: $l.weight,
                MinimumLatency: $l.min_latency,
                MaximumLatency: $l.max_latency,
                MinimumBandwidth: $l.min_bandwidth,
                MaximumBandwidth: $l.max_bandwidth,
                RecTransferSize: $l.recommended_transfer_size,
                Flags: $g::HSA_LINKPROPERTY($l.flags),
                $($extra)*
            })
            .collect()
    }};
}

/// Reads the caller-supplied inputs of an `HsaQueueResource` of any
/// generation (read/write pointers and the error-reason payload).
macro_rules! queue_request {
    ($req:expr, $r:expr) => {{
        let (mut req, r): (kfd_queue::QueueRequest, _) = ($req, $r);
        req.read_ptr = r.QueueRptrValue;
        req.write_ptr = r.QueueWptrValue;
        req.error_reason = r.ErrorReason as u64;
        req
    }};
}

/// Stores the outputs of queue creation into an `HsaQueueResource` of any
/// generation: `QueueId`, the doorbell and the read/write pointers.
/// `ErrorReason` (an input) and any generation-specific trailing fields
/// are left alone, so nothing past the generation's size is written.
macro_rules! store_queue_resource {
    ($res:expr, $r:expr) => {{
        let (res, r): (&kfd_queue::QueueResource, _) = ($res, $r);
        r.QueueId = res.queue_id.raw();
        r.QueueDoorBell = res.doorbell;
        r.QueueWptrValue = res.write_ptr;
        r.QueueRptrValue = res.read_ptr;
    }};
}

/// Fills the fields every `HsaQueueInfo` layout shares.
macro_rules! store_queue_info {
    ($info:expr, $q:expr) => {{
        let (info, q): (&kfd_queue::QueueInfo, _) = ($info, $q);
        q.QueueDetailError = 0;
        q.QueueTypeExtended = 0;
        q.NumCUAssigned = info.num_cu_assigned;
        q.CUMaskInfo = info.cu_mask_info as usize as *mut u32;
        q.UserContextSaveArea = info.user_context_save_area as usize as *mut u32;
        q.SaveAreaSizeInBytes = info.save_area_size;
        q.ControlStackTop = info.control_stack_top as usize as *mut u32;
        q.ControlStackUsedInBytes = info.control_stack_used;
        q.SaveAreaHeader = info.save_area_header as usize as *mut _;
    }};
}

/// Fills the fields every `HsaGraphicsResourceInfo` layout shares.
macro_rules! store_graphics_info {
    ($g:expr, $metadata:expr, $info:expr) => {{
        let (g, info): (&kfd_fmm::GraphicsResource, _) = ($g, $info);
        info.MemoryAddress = g.address as usize as *mut core::ffi::c_void;
        info.SizeInBytes = g.size;
        info.Metadata = $metadata as *const core::ffi::c_void;
        info.MetadataSizeInBytes = g.metadata.len() as u32;
    }};
}
pub(crate) use {
    cache_properties, io_link_properties, node_properties, queue_request, store_graphics_info,
    store_queue_info, store_queue_resource,
};

#[cfg(test)]
mod tests {
    use super::{newest, rocm_5_2};
    use hsakmt_sys::{newest as n, rocm_5_2 as r};
    use kfd_queue::{QueueId, QueueInfo, QueueKind, QueueRequest, QueueResource};
    use kfd_topology::{Aperture, GpuApertures};
    use kfd_topology::{FixtureDevices, Rules, SnapshotOptions, Topology};

    /// A kfd-sim preset rendered as sysfs and read back.
    fn preset(name: &str, rules: Rules, gfx_override: Option<&str>) -> Topology {
        let preset = kfd_sim::presets::preset(name).expect("preset exists");
        let root = std::env::temp_dir().join(format!(
            "hsakmt-convert-{}-{name}-{}",
            std::process::id(),
            gfx_override.unwrap_or("")
        ));
        let _ = std::fs::remove_dir_all(&root);
        kfd_sim::sysfs::render(&preset, &root).unwrap();
        let options = SnapshotOptions {
            rules,
            gfx_override: gfx_override.map(str::to_string),
            ..SnapshotOptions::default()
        };
        let topo = Topology::read(&root, &FixtureDevices::new(), &options);
        let _ = std::fs::remove_dir_all(&root);
        topo.unwrap()
    }

    fn apertures() -> GpuApertures {
        let ap = |base: u64, size: u64| {
            Some(Aperture {
                base,
                limit: base + size - 1,
            })
        };
        GpuApertures {
            lds: ap(1 << 48, 1 << 32),
            scratch: ap(2 << 48, 1 << 32),
            svm: ap(0x20_0000, (1 << 47) - 0x20_0000),
            mmio: ap(0x7000_0000_0000, 0x1000),
            gpuvm: None,
        }
    }

    /// The heaps the thunk adds after the sysfs banks, in its order,
    /// cut at the caller's count; none for a CPU node.
    #[test]
    fn thunk_memory_banks() {
        use super::banks::{memory_properties, reported_num_memory_banks};
        use kfd_topology::HeapType;
        let topo = preset("mi210", Rules::default(), None);
        let (cpu, gpu) = (topo.node(0).unwrap(), topo.node(1).unwrap());
        let no_mmio = GpuApertures {
            mmio: None,
            ..apertures()
        };
        let sysfs = gpu.properties.mem_banks_count as usize;
        assert_eq!(reported_num_memory_banks(gpu, &no_mmio) as usize, sysfs + 3);
        let banks = memory_properties(&topo, gpu, &no_mmio, 16);
        let heaps: Vec<HeapType> = banks[sysfs..].iter().map(|b| b.bank.heap_type).collect();
        assert_eq!(
            heaps,
            [
                HeapType::GPU_LDS,
                HeapType::GPU_SCRATCH,
                HeapType::DEVICE_SVM
            ]
        );
        let lds = u64::from(gpu.properties.lds_size_in_kb) * 1024;
        assert_eq!(banks[sysfs].bank.size_in_bytes, lds);
        assert_eq!(banks[sysfs + 1].bank.size_in_bytes, 1 << 32);
        assert_eq!(banks[sysfs + 2].virtual_base_address, 0x20_0000);
        assert!(banks[..sysfs].iter().all(|b| b.virtual_base_address == 0));

        let ap = apertures();
        assert_eq!(reported_num_memory_banks(gpu, &ap) as usize, sysfs + 4);
        let all = memory_properties(&topo, gpu, &ap, 16);
        assert_eq!(all.len(), sysfs + 4);
        assert_eq!(all[sysfs + 3].bank.heap_type, HeapType::MMIO_REMAP);
        assert_eq!(all[sysfs + 3].bank.size_in_bytes, 0x1000);
        assert_eq!(memory_properties(&topo, gpu, &ap, 2).len(), 2);
        assert_eq!(
            reported_num_memory_banks(cpu, &ap),
            cpu.properties.mem_banks_count
        );
        assert_eq!(
            memory_properties(&topo, cpu, &ap, 16).len(),
            cpu.memory_banks.len()
        );
    }

    #[test]
    fn node_properties_of_every_generation() {
        let topo = preset("mi210", crate::profile::ROCM_5_2.topology, None);
        let gpu = topo.node(1).unwrap();
        let ap = apertures();
        let old = rocm_5_2::node_properties(gpu, &ap);
        assert_eq!(core::mem::size_of_val(&old), 356);
        assert_eq!({ old.NumFComputeCores }, gpu.properties.simd_count);
        // sysfs banks + LDS, scratch, SVM + the mapped MMIO page.
        assert_eq!({ old.NumMemoryBanks }, gpu.properties.mem_banks_count + 4);
        assert_eq!({ old.NumCaches }, gpu.caches.len() as u32);
        let e = { old.EngineId };
        assert_eq!(
            (e.uCode(), e.Major(), e.Minor(), e.Stepping()),
            (78, 9, 0, 10)
        );
        assert_eq!({ old.DeviceId }, 0x740F);
        assert_eq!(&old.AMDName[..10], b"Aldebaran\0");
        let name: String = old
            .MarketingName
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8 as char)
            .collect();
        assert_eq!(name, "AMD Instinct MI210");
        assert_eq!({ old.uCodeEngineVersions }.0, 8);

        let topo = preset("mi210", Rules::default(), Some("9.4.2"));
        let gpu = topo.node(1).unwrap();
        let c = newest::node_properties(gpu, &ap);
        assert_eq!(core::mem::size_of_val(&c), 376);
        assert_eq!({ c.KFDGpuID }, gpu.gpu_id);
        assert_eq!({ c.NumXcc }, 1);
        let (e, ov) = ({ c.EngineId }, { c.OverrideEngineId });
        assert_eq!((e.Major(), e.Minor(), e.Stepping()), (9, 0, 10));
        assert_eq!((ov.Major(), ov.Minor(), ov.Stepping()), (9, 4, 2));
        let cpu = newest::node_properties(topo.node(0).unwrap(), &ap);
        assert_eq!({ cpu.KFDGpuID }, 0);
        assert_eq!(
            { cpu.NumMemoryBanks },
            topo.node(0).unwrap().properties.mem_banks_count
        );
    }

    #[test]
    fn caches_links_and_banks() {
        let topo = preset("mi300x", Rules::default(), None);
        let gpu = topo.nodes.iter().find(|n| n.gpu_id != 0).unwrap();
        let old = rocm_5_2::cache_properties(gpu);
        let new = newest::cache_properties(gpu);
        assert_eq!(old.len(), gpu.caches.len());
        assert_eq!(old[0].CacheSize, gpu.caches[0].size);
        assert_eq!(new[0].SiblingMap, old[0].SiblingMap);
        assert_eq!(core::mem::size_of_val(&new[0]), 1056);
        let links5 = rocm_5_2::io_link_properties(gpu);
        let links = newest::io_link_properties(gpu);
        assert_eq!(links5.len(), gpu.io_links.len());
        assert!(links.iter().zip(&links5).all(|(a, b)| a.NodeTo == b.NodeTo));
        let banks = super::memory_properties_c(&topo, gpu, &apertures(), 64);
        assert_eq!({ banks.last().unwrap().HeapType }.0, 7, "MMIO page last");
        assert_eq!(super::system_properties(&topo).NumNodes, topo.num_nodes());
    }

    #[test]
    fn queue_structs_stay_inside_their_generation() {
        let res = QueueResource {
            queue_id: QueueId::from_raw(0x1000),
            doorbell: 0x2000,
            write_ptr: 0x3000,
            read_ptr: 0x4000,
        };
        // 5.2.3 callers pass 40 bytes: the bytes behind them stay as they were.
        #[repr(C)]
        struct Guarded {
            r: r::HsaQueueResource,
            guard: [u8; 16],
        }
        let mut g = Guarded {
            r: r::HsaQueueResource {
                ErrorReason: 0x4242 as *mut i64,
                QueueRptrValue: 0x11,
                QueueWptrValue: 0x22,
                ..Default::default()
            },
            guard: [0xAA; 16],
        };
        let req = rocm_5_2::queue_request(QueueRequest::new(1, QueueKind::ComputeAql, 0, 0), &g.r);
        assert_eq!(
            (req.read_ptr, req.write_ptr, req.error_reason),
            (0x11, 0x22, 0x4242)
        );
        rocm_5_2::store_queue_resource(&res, &mut g.r);
        assert_eq!(g.guard, [0xAA; 16]);
        assert_eq!({ g.r.QueueId }, 0x1000);
        assert_eq!({ g.r.ErrorReason } as usize, 0x4242);
        assert_eq!(g.r.Queue_DoorBell_aql() as u64, 0x2000);
        let mut c = n::HsaQueueResource::default();
        newest::store_queue_resource(&res, &mut c);
        assert_eq!({ c.QueueRptrValue }, 0x4000);

        let i = QueueInfo {
            control_stack_top: 1,
            user_context_save_area: 2,
            save_area_size: 3,
            control_stack_used: 4,
            num_cu_assigned: 96,
            cu_mask_info: 5,
            save_area_header: 6,
            save_area_alloc_size: 7,
        };
        let mut info5 = r::HsaQueueInfo::default();
        let mut info = n::HsaQueueInfo::default();
        rocm_5_2::store_queue_info(&i, &mut info5);
        newest::store_queue_info(&i, &mut info);
        assert_eq!(info.SaveAreaHeader as usize, 6);
        assert_eq!({ info5.NumCUAssigned }, 96);
        assert_eq!(info5.SaveAreaHeader as usize, 6);
    }
}
