//! Simulated machine topologies: what the KFD sysfs tree reports.
//!
//! A [`Topology`] is a sysfs-shaped description: every node carries the
//! key/value pairs of its `properties` file, its memory banks, caches and
//! links. The kernel model reads the values it needs by key (`gpu_id`,
//! `drm_render_minor`, `size_in_bytes`, ...), so a custom topology file can
//! describe any device without code changes.

/// Ordered `key value` pairs of one sysfs `properties` file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Props(pub Vec<(String, u64)>);

impl Props {
    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<u64> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    /// The value of `key`, or 0.
    pub fn get_or_zero(&self, key: &str) -> u64 {
        self.get(key).unwrap_or(0)
    }

    /// Sets `key` (replacing an existing value, else appending).
    pub fn set(&mut self, key: &str, value: u64) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key.to_string(), value)),
        }
    }
}

/// One cache of a node: its `properties` keys plus the `sibling_map`
/// (written last in the file, as a comma-separated list).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cache {
    /// The numeric keys.
    pub properties: Props,
    /// The sibling map.
    pub sibling_map: Vec<u32>,
}

/// PCI/DRM identity of a GPU node: what libdrm_amdgpu's device queries and
/// the PCI sysfs entries report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuIdentity {
    /// PCI device id (also in `properties` as `device_id`).
    pub device_id: u32,
    /// PCI revision id (`pci_rev` in DEV_INFO; libdrm's amdgpu.ids key).
    pub pci_rev: u32,
    /// amdgpu family id (AMDGPU_FAMILY_*).
    pub family: u32,
    /// Chip revision.
    pub chip_rev: u32,
    /// External revision.
    pub external_rev: u32,
    /// Marketing name.
    pub marketing_name: String,
}

/// One KFD topology node (a CPU or a GPU).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Node {
    /// `nodes/N/name` (e.g. `gfx90a` or empty for CPUs).
    pub name: String,
    /// `nodes/N/gpu_id`: 0 for CPU nodes.
    pub gpu_id: u32,
    /// `nodes/N/properties`.
    pub properties: Props,
    /// `nodes/N/mem_banks/M/properties`.
    pub mem_banks: Vec<Props>,
    /// `nodes/N/caches/C/properties`.
    pub caches: Vec<Cache>,
    /// `nodes/N/io_links/L/properties`.
    pub io_links: Vec<Props>,
    /// `nodes/N/p2p_links/L/properties`.
    pub p2p_links: Vec<Props>,
    /// PCI/DRM identity (GPU nodes only).
    pub gpu: Option<GpuIdentity>,
}

impl Node {
    /// True for GPU nodes.
    pub fn is_gpu(&self) -> bool {
        self.gpu_id != 0
    }
}

/// A whole simulated machine as the KFD topology describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topology {
    /// Preset or file name.
    pub name: String,
    /// `generation_id`.
    pub generation_id: u64,
    /// `system_properties`.
    pub system: Props,
    /// `nodes/0..n`.
    pub nodes: Vec<Node>,
}

impl Topology {
    /// The GPU nodes with their node indices.
    pub fn gpus(&self) -> impl Iterator<Item = (usize, &Node)> {
        self.nodes.iter().enumerate().filter(|(_, n)| n.is_gpu())
    }

    /// The node with the given gpu_id.
    pub fn node_by_gpu_id(&self, gpu_id: u32) -> Option<(usize, &Node)> {
        self.gpus().find(|(_, n)| n.gpu_id == gpu_id)
    }
}
