//! What the hsakmt C API reports for a snapshot: the memory banks the
//! thunk adds for GPU nodes (the C structs themselves are filled by the
//! `hsakmt` crate).

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
