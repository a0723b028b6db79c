//! Conversions for Debian's libhsakmt 5.2.3 ABI ([`hsakmt_sys::rocm_5_2`]).

use hsakmt_sys::rocm_5_2 as g;
use kfd_fmm::{GraphicsResource, MemMapFlags};
use kfd_queue::{QueueInfo, QueueRequest, QueueResource};
use kfd_topology::GpuApertures;
use kfd_topology::Node;

/// The 4th argument of `hsaKmtMapMemoryToGPUNodes`: `HsaMemMapFlags`.
pub type MapFlagsArg = g::HsaMemMapFlags;

/// Decodes the map flags argument (taken as is).
pub fn map_flags(f: MapFlagsArg) -> MemMapFlags {
    MemMapFlags::from_bits_retain(f.0)
}

/// `hsaKmtGetNodeProperties` (356 bytes).
pub fn node_properties(node: &Node, apertures: &GpuApertures) -> g::HsaNodeProperties {
    super::node_properties!(g, node, apertures, {})
}

/// `hsaKmtGetNodeCacheProperties` (1056 bytes each).
pub fn cache_properties(node: &Node) -> Vec<g::HsaCacheProperties> {
    super::cache_properties!(g, node, {})
}

/// `hsaKmtGetNodeIoLinkProperties` (48 bytes each).
pub fn io_link_properties(node: &Node) -> Vec<g::HsaIoLinkProperties> {
    super::io_link_properties!(g, node, |l| {})
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
    super::store_queue_info!(info, q)
}

/// Stores an imported graphics buffer into a 32-byte
/// `HsaGraphicsResourceInfo` (offset 28 is `Reserved`, left alone).
pub fn store_graphics_info(
    gr: &GraphicsResource,
    metadata: *const u8,
    info: &mut g::HsaGraphicsResourceInfo,
) {
    super::store_graphics_info!(gr, metadata, info)
}
