//! The memory banks `hsaKmtGetNodeMemoryProperties` reports: a node's
//! sysfs banks, then, for a GPU node, the heaps the thunk makes from the
//! process apertures (LDS, Kaveri's private frame buffer, scratch, SVM,
//! the MMIO remap page), as the C library's `topology.c` adds them.

use kfd_topology::{GfxVersion, GpuApertures, HeapType, MemoryBank, Node, Topology};

/// One reported bank: the bank, and where the thunk placed it
/// (`VirtualBaseAddress`, 0 for a sysfs bank).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryProperties {
    /// The bank (sysfs values, or the heap the thunk made).
    pub bank: MemoryBank,
    /// `VirtualBaseAddress`.
    pub virtual_base_address: u64,
}

/// The heaps every GPU node gets beyond its sysfs banks, dGPU or APU
/// (LDS, scratch, SVM), whether or not their apertures exist.
pub const NUM_GPU_HEAPS: u32 = 3;

/// `HsaNodeProperties.NumMemoryBanks`: the sysfs banks, and for a GPU
/// node [`NUM_GPU_HEAPS`] more, one more when its MMIO page is mapped.
pub fn reported_num_memory_banks(node: &Node, apertures: &GpuApertures) -> u32 {
    let sysfs = node.properties.mem_banks_count;
    if node.gpu_id == 0 {
        return sysfs;
    }
    sysfs + NUM_GPU_HEAPS + u32::from(apertures.mmio.is_some())
}

/// `topology_is_svm_needed`: a dGPU system, or a gfx9 or later GPU.
pub fn svm_needed(topology: &Topology, version: Option<GfxVersion>) -> bool {
    topology.is_dgpu() || version.is_some_and(|v| v.full() >= 0x09_0000)
}

/// At most `num_banks` banks of `node`: the sysfs ones first, then for a
/// GPU node its LDS, (Kaveri) private frame buffer, scratch, SVM (where
/// [`svm_needed`]) and MMIO heaps, each one whose aperture exists.
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
    let p = &node.properties;
    let kaveri = node
        .derived
        .gfx_version
        .is_some_and(|v| v.full() == 0x07_0000);
    let heaps = [
        apertures.lds.map(|a| {
            let lds = u64::from(p.lds_size_in_kb.wrapping_mul(1024));
            (HeapType::GPU_LDS, lds, a.base)
        }),
        apertures
            .gpuvm
            .filter(|_| kaveri && p.local_mem_size > 0)
            .map(|a| (HeapType::FRAME_BUFFER_PRIVATE, p.local_mem_size, a.base)),
        apertures
            .scratch
            .map(|a| (HeapType::GPU_SCRATCH, a.size(), a.base)),
        apertures
            .svm
            .filter(|_| svm_needed(topology, node.derived.gfx_version))
            .map(|a| (HeapType::DEVICE_SVM, a.size(), a.base)),
        apertures
            .mmio
            .map(|a| (HeapType::MMIO_REMAP, a.size(), a.base)),
    ];
    for (heap_type, size_in_bytes, base) in heaps.into_iter().flatten() {
        if out.len() >= max {
            break;
        }
        out.push(MemoryProperties {
            bank: MemoryBank {
                heap_type,
                size_in_bytes,
                ..MemoryBank::default()
            },
            virtual_base_address: base,
        });
    }
    out
}
