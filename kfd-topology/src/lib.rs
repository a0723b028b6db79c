//! kfd-topology: typed snapshots of the KFD sysfs topology.
//!
//! # Example
//!
//! Take a snapshot of a simulated MI300X (`kfd-sim`; with
//! [`kfd_sys::NixDriver`] instead, of this machine) and list its GPUs:
//!
//! ```
//! use kfd_topology::{HeapType, Topology};
//!
//! let sim = kfd_sim::Sim::preset("mi300x")?;
//! let topology = Topology::snapshot(&sim)?;
//! for node in topology.gpu_nodes() {
//!     let isa = node.isa_version().map(|v| v.name()).unwrap_or_default();
//!     let vram = node.memory_size(HeapType::FRAME_BUFFER_PUBLIC);
//!     println!(
//!         "node {}: {isa} \"{}\", {} CUs, {} GiB VRAM",
//!         node.id,
//!         node.derived.marketing_name,
//!         node.compute_units(),
//!         vram >> 30
//!     );
//!     assert_eq!(isa, "gfx942");
//! }
//! assert_eq!(topology.gpu_nodes().count(), 8);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `examples/lsgpu.rs` prints every property, like a tiny rocminfo.
//!
//! # Overview
//!
//! A [`Topology`] is an owned, immutable copy of what the KFD reports below
//! `sys/devices/virtual/kfd/kfd/topology` (system properties, nodes, memory
//! banks, caches, io and p2p links) plus everything the C thunk derives
//! from it and from the host: CPU names from `/proc/cpuinfo`, host CPU
//! caches, the gfx version (device-id table, `gfx_target_version`,
//! `HSA_OVERRIDE_GFX_VERSION`), `AMDName`, the marketing name (libdrm's
//! `amdgpu.ids`), and the indirect io links. Nodes whose render node does
//! not open are dropped and the node ids compacted, as in the C library.
//!
//! There is no global state: each snapshot is taken through a
//! [`kfd_sys::Driver`] (or a root path, for fixtures) and owned by its
//! caller. Where the C libraries derive values differently, each
//! difference is a named switch of [`Rules`] (the default follows the
//! newest library). [`GpuApertures`] carries the process apertures of a
//! GPU, which the C API reports next to the snapshot.
//!
//! Errors are [`TopologyError`]s naming the file and line that failed;
//! which C status a failure becomes is the `hsakmt` border's decision.
//!
//! This crate has no `unsafe` code: the tree is read with `std::fs`, the
//! render nodes are opened through the [`kfd_sys::Driver`].

#![forbid(unsafe_code)]

mod apertures;
mod cpu_cache;
pub mod cpuinfo;
pub mod devices;
mod error;
pub mod gfx;
pub mod ids;
pub mod model;
mod parse;
mod snapshot;

pub use apertures::{Aperture, GpuApertures};
pub use devices::{Devices, DriverDevices, DrmDeviceInfo, FixtureDevices};
pub use error::TopologyError;
pub use gfx::GfxVersion;
pub use model::{
    Cache, CacheType, Capability, HeapType, IoLink, IoLinkType, LinkOrigin, MemoryBank, Node,
    NodeKind, NodeProperties, Rules, SystemProperties, VgprTable,
};
pub use snapshot::{SnapshotOptions, MAX_CACHES, MAX_LINKS, MAX_MEM_BANKS, MAX_NODES};

/// A snapshot of the KFD topology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// `generation_id` the snapshot was taken at.
    pub generation_id: u32,
    /// `system_properties`.
    pub system: SystemProperties,
    /// The rules the derived values follow.
    pub rules: Rules,
    /// Number of entries in sysfs `nodes/` (supported or not).
    pub num_sysfs_nodes: u32,
    /// The supported nodes; `nodes[i].id == i`.
    pub nodes: Vec<Node>,
}

impl Topology {
    /// Number of (supported) nodes: `HsaSystemProperties.NumNodes`.
    pub fn num_nodes(&self) -> u32 {
        self.nodes.len() as u32
    }

    /// The node with id `id`, if any.
    pub fn node(&self, id: u32) -> Option<&Node> {
        self.nodes.get(id as usize)
    }

    /// The C library's `validate_nodeid`: the node's `gpu_id` (0 for a CPU
    /// node), or [`TopologyError::InvalidNode`] (status
    /// `INVALID_NODE_UNIT`) when `id` is not below [`Topology::num_nodes`].
    pub fn validate_node(&self, id: u32) -> Result<u32, TopologyError> {
        self.node(id)
            .map(|n| n.gpu_id)
            .ok_or(TopologyError::InvalidNode {
                node: id,
                num_nodes: self.num_nodes(),
            })
    }

    /// The C library's `validate_nodeid_array`: the `gpu_id`s of `ids`.
    pub fn validate_nodes(&self, ids: &[u32]) -> Result<Vec<u32>, TopologyError> {
        ids.iter().map(|&id| self.validate_node(id)).collect()
    }

    /// The node whose `gpu_id` is `gpu_id` (`gpuid_to_nodeid`).
    pub fn node_by_gpu_id(&self, gpu_id: u32) -> Option<&Node> {
        self.nodes.iter().find(|n| n.gpu_id == gpu_id)
    }

    /// Nodes with a `gpu_id` (dGPUs and APUs).
    pub fn gpu_nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.is_gpu())
    }

    /// Nodes without a `gpu_id`.
    pub fn cpu_nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| !n.is_gpu())
    }

    /// True if some node is a discrete GPU (SIMDs and no CPU cores); the C
    /// library then treats the whole system as dGPU.
    pub fn is_dgpu(&self) -> bool {
        self.nodes
            .iter()
            .any(|n| n.properties.cpu_cores_count == 0 && n.properties.simd_count != 0)
    }

    /// The CPU node a GPU node is attached to (PCIe, weight <= 20) and that
    /// has memory (`get_direct_link_cpu`).
    pub fn direct_link_cpu(&self, gpu_node: u32) -> Option<u32> {
        let n = self.node(gpu_node)?;
        if n.gpu_id == 0 {
            return None;
        }
        let cpu = n.io_links.iter().find_map(|l| {
            let ok = if self.rules.xgmi_cpu_links {
                (l.link_type == IoLinkType::PCIEXPRESS || l.link_type == IoLinkType::XGMI)
                    && l.weight <= 20
                    && self.node(l.node_to).is_some_and(|t| t.gpu_id == 0)
            } else {
                l.link_type == IoLinkType::PCIEXPRESS && l.weight <= 20
            };
            ok.then_some(l.node_to)
        })?;
        let mem: u64 = self
            .node(cpu)?
            .memory_banks
            .iter()
            .map(|b| b.size_in_bytes)
            .sum();
        (mem != 0).then_some(cpu)
    }
}

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
