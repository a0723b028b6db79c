//! The GPU set of a memory manager: its nodes, the GPUs among them with
//! their render-node files, the order the kernel lists their apertures
//! in, and the io links that make GPUs peers.

use std::sync::{Arc, Mutex};

use kfd_sync::SeqWords;
use kfd_sys::DeviceFile;

use super::plan::{has_dgpu, in_svm};
use super::{NodeDesc, RenderNodes, Scratch};
use crate::error::{FmmError, Result};
use crate::objects::GpuIds;

/// One GPU of the set.
#[derive(Debug)]
pub(super) struct Gpu {
    pub gpu_id: u32,
    pub node_id: u32,
    pub device_id: u32,
    pub render: Arc<DeviceFile>,
    /// Its memory lies in the SVM apertures (every GPU of a dGPU system,
    /// gfx9+ APUs), not in an aperture of its own.
    pub svm_needed: bool,
    /// Its scratch backing memory, while allocated.
    pub scratch: Mutex<Option<Scratch>>,
    /// `[base, size]` of that memory (`[0, 0]`: none), written under the
    /// `scratch` lock and read without it: every free, unmap and map asks
    /// whether its address is scratch.
    pub scratch_range: SeqWords<2>,
    /// The address of its MMIO remap page, while mapped.
    pub mmio: Mutex<Option<u64>>,
}

/// The nodes of a memory manager and its GPUs.
///
/// Invariants: `gpus` holds one entry per GPU node of `nodes`, in node
/// order, each with its render-node file open; a GPU's index in `gpus`
/// never changes; `order` lists gpu_ids of `gpus` only, each once.
#[derive(Debug)]
pub(super) struct GpuSet {
    nodes: Vec<NodeDesc>,
    /// Per node, the nodes its io links go to (in link order; empty when
    /// the memory manager was made without a topology).
    io_links: Vec<Vec<u32>>,
    gpus: Vec<Gpu>,
    /// The gpu_ids of the GPUs with apertures, in kernel order (the
    /// default mapping set).
    order: Vec<u32>,
    is_dgpu: bool,
}

impl GpuSet {
    /// The GPU set of `nodes`: each GPU node's render node taken from
    /// `render_nodes` or opened through `kfd`'s driver, in node order.
    pub fn open(
        kfd: &DeviceFile,
        nodes: Vec<NodeDesc>,
        io_links: Vec<Vec<u32>>,
        render_nodes: &RenderNodes,
    ) -> Result<GpuSet> {
        let is_dgpu = has_dgpu(&nodes);
        let mut gpus = Vec::new();
        for (node_id, n) in nodes.iter().enumerate() {
            if !n.is_gpu() {
                continue;
            }
            let shared = match render_nodes {
                RenderNodes::Shared(list) => list
                    .iter()
                    .find(|(m, _)| *m == n.drm_render_minor)
                    .map(|(_, f)| f.clone()),
                RenderNodes::Open => None,
            };
            let render = match shared {
                Some(f) => f,
                None => Arc::new(
                    DeviceFile::open_render_node(kfd.driver().clone(), n.drm_render_minor)
                        .map_err(|errno| FmmError::RenderNode {
                            minor: n.drm_render_minor,
                            errno,
                        })?,
                ),
            };
            gpus.push(Gpu {
                gpu_id: n.gpu_id,
                node_id: node_id as u32,
                device_id: n.device_id,
                render,
                svm_needed: in_svm(is_dgpu, n),
                scratch: Mutex::new(None),
                scratch_range: SeqWords::default(),
                mmio: Mutex::new(None),
            });
        }
        Ok(GpuSet {
            nodes,
            io_links,
            gpus,
            order: Vec::new(),
            is_dgpu,
        })
    }

    /// The nodes, by node id.
    pub fn nodes(&self) -> &[NodeDesc] {
        &self.nodes
    }

    /// True when a node is a discrete GPU.
    pub fn is_dgpu(&self) -> bool {
        self.is_dgpu
    }

    /// The GPUs, by index.
    pub fn all(&self) -> &[Gpu] {
        &self.gpus
    }

    /// GPU `gi` (an index this set gave out).
    pub fn get(&self, gi: usize) -> &Gpu {
        &self.gpus[gi]
    }

    /// The first GPU, if any.
    pub fn first(&self) -> Option<&Gpu> {
        self.gpus.first()
    }

    /// The index of the GPU with `gpu_id` (`None` for 0 and unknown ids).
    pub fn index(&self, gpu_id: u32) -> Option<usize> {
        if gpu_id == 0 {
            return None;
        }
        self.gpus.iter().position(|g| g.gpu_id == gpu_id)
    }

    /// The gpu_id of `node` (0 for a CPU node), or InvalidNode.
    pub fn validate_node(&self, node: u32) -> Result<u32> {
        self.nodes
            .get(node as usize)
            .map(|n| n.gpu_id)
            .ok_or(FmmError::InvalidNode(node))
    }

    /// The gpu_ids of a node list, as `validate_nodeid_array`: an empty
    /// list is an invalid argument, a bad node an invalid node.
    pub fn ids_for_nodes(&self, nodes: &[u32]) -> Result<Vec<u32>> {
        if nodes.is_empty() {
            return Err(FmmError::InvalidArgument("empty node list"));
        }
        nodes.iter().map(|&n| self.validate_node(n)).collect()
    }

    /// The node of the GPU with `gpu_id` (0 when there is none).
    pub fn node_of(&self, gpu_id: u32) -> u32 {
        self.index(gpu_id).map_or(0, |gi| self.gpus[gi].node_id)
    }

    /// The index of the GPU of node `node_id`.
    pub fn of_node(&self, node_id: u32) -> Option<usize> {
        self.gpus.iter().position(|g| g.node_id == node_id)
    }

    /// The node id of the node whose GPU has `gpu_id`, by the node table.
    pub fn node_with_gpu(&self, gpu_id: u32) -> Option<u32> {
        self.nodes
            .iter()
            .position(|n| n.gpu_id == gpu_id)
            .map(|i| i as u32)
    }

    /// The gpu_ids of the GPUs with apertures, in kernel order.
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// Appends `gpu_id` (a GPU of the set) to the kernel order; a
    /// duplicate is the kernel's error.
    pub fn push_order(&mut self, gpu_id: u32) -> Result<()> {
        if self.order.contains(&gpu_id) {
            return Err(FmmError::Failed(
                "duplicate gpu_id in the process apertures",
            ));
        }
        self.order.push(gpu_id);
        Ok(())
    }

    /// The GPUs that can map memory of GPU `gi`, as upstream fmm.c builds
    /// `usable_peer_id_array`: the GPU itself, then, in aperture order,
    /// each GPU with an io link to it (once per such link).
    pub fn usable_peers(&self, gi: usize) -> GpuIds {
        let me = self.gpus[gi].node_id;
        let mut peers = GpuIds::new();
        peers.push(self.gpus[gi].gpu_id);
        for &gpu_id in &self.order {
            let Some(from) = self.index(gpu_id) else {
                continue;
            };
            let links = self
                .io_links
                .get(self.gpus[from].node_id as usize)
                .map_or(&[][..], Vec::as_slice);
            for &to in links {
                if to == me {
                    peers.push(gpu_id);
                }
            }
        }
        peers
    }

    /// The object-index shard of memory made through `gpu_id` (one per
    /// GPU after shard 0, which holds host-only memory).
    pub fn shard_of(&self, gpu_id: u32) -> usize {
        self.index(gpu_id).map_or(0, |gi| gi + 1)
    }
}
