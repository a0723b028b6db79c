//! Conversions for the newest upstream ABI ([`hsakmt_sys::newest`]).

use hsakmt_sys::newest as g;
use kfd_fmm::{GraphicsResource, MemMapFlags};
use kfd_queue::{QueueInfo, QueueRequest, QueueResource};
use kfd_topology::GpuApertures;
use kfd_topology::Node;

/// The 4th argument of `hsaKmtMapMemoryToGPUNodes`: `HsaMemFlags` in the
/// newest header.
pub type MapFlagsArg = g::HsaMemFlags;

/// Decodes the map flags argument: of `HsaMemFlags`, the fields at the
/// positions of the old `HsaMemMapFlags` (CachePolicy, ReadOnly,
/// PageSize, HostAccess: bits 1..=6) are kept.
pub fn map_flags(f: MapFlagsArg) -> MemMapFlags {
    MemMapFlags::from_bits_retain(f.0 & 0b111_1110)
}

/// `hsaKmtGetNodeProperties(Ctx)` (376 bytes; `CwsrSize` and
/// `CtlStackSize` are 0: the topology reports neither).
pub fn node_properties(node: &Node, apertures: &GpuApertures) -> g::HsaNodeProperties {
    let d = &node.derived;
    super::node_properties!(g, node, apertures, {
        Capability2: g::HSA_CAPABILITY2(node.properties.capability2),
        OverrideEngineId: g::HSA_ENGINE_ID(super::override_engine_id(node)),
        Integrated: u8::from(d.integrated),
        NumXcc: d.num_xcc,
        KFDGpuID: node.gpu_id,
        FamilyID: d.family_id,
    })
}

/// `hsaKmtGetNodeCacheProperties(Ctx)` (1056 bytes each).
pub fn cache_properties(node: &Node) -> Vec<g::HsaCacheProperties> {
    super::cache_properties!(g, node, {})
}

/// `hsaKmtGetNodeIoLinkProperties(Ctx)` (52 bytes each).
pub fn io_link_properties(node: &Node) -> Vec<g::HsaIoLinkProperties> {
    super::io_link_properties!(g, node, |l| {
        RecSdmaEngIdMask: l.recommended_sdma_engine_id_mask,
    })
}

/// Takes the caller's inputs of a 40-byte `HsaQueueResource`.
pub fn queue_request(req: QueueRequest, r: &g::HsaQueueResource) -> QueueRequest {
    super::queue_request!(req, r)
}

/// Stores the outputs into a 40-byte `HsaQueueResource`.
pub fn store_queue_resource(res: &QueueResource, r: &mut g::HsaQueueResource) {
    super::store_queue_resource!(res, r)
}

/// Stores queue details into a 68-byte `HsaQueueInfo`.
pub fn store_queue_info(info: &QueueInfo, q: &mut g::HsaQueueInfo) {
    super::store_queue_info!(info, &mut *q);
}

/// Stores an imported graphics buffer into a 32-byte
/// `HsaGraphicsResourceInfo` (with `NodeId`).
pub fn store_graphics_info(
    gr: &GraphicsResource,
    metadata: *const u8,
    info: &mut g::HsaGraphicsResourceInfo,
) {
    super::store_graphics_info!(gr, metadata, &mut *info);
    info.NodeId = gr.node;
}
