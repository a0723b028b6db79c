//! Topology: system and node properties, memory banks, caches, IO links.

use std::sync::Arc;

use crate::convert as ffi;
use hsakmt_sys::common::{HsaMemoryProperties, HsaSystemProperties};
use kfd_context::Context;
use kfd_topology::{SnapshotOptions, Topology};

use crate::border::{check_mut, st, write_array, write_out, Kmt, KmtResult};
use crate::ctx::{self, HsaKFDContext};
use crate::generation::{self, abi};

fn node_of(c: &Context, node: u32) -> KmtResult<(Arc<Topology>, hsakmt_sys::common::HSAuint32)> {
    let topo = c.topology().kmt()?;
    if node >= topo.num_nodes() {
        return Err(st::INVALID_NODE_UNIT);
    }
    Ok((topo, node))
}

/// What `hsaKmtAcquireSystemProperties` does once its arguments are
/// checked, as one change for concurrent readers: takes the context's
/// topology snapshot and sets up its memory manager (apertures),
/// rebuilding what a release destroyed. The C library's internal callers
/// (`hsaKmtCheckRuntimeDebugSupport`) go through here too.
pub(crate) fn acquire(c: &Context) -> KmtResult<Arc<Topology>> {
    let mut opts = SnapshotOptions::from_env(generation::PROFILE.topology);
    opts.svm_api_supported = c.svm_api();
    c.acquire_properties(&opts, generation::PROFILE.border.apertures_follow_topology)
        .kmt()
}

/// The C library's `validate_nodeid` against the context's current
/// snapshot: the node's gpu_id (0 for a CPU node); no snapshot (before
/// the acquire, after the release) or an unknown node → 5.
pub(crate) fn validate_node(c: &Context, node: u32) -> KmtResult<u32> {
    c.topology()
        .kmt()?
        .validate_node(node)
        .map_err(|_| st::INVALID_NODE_UNIT)
}

/// A node's snapshot and apertures, consistent with each other (see
/// `Context::node_view`): no snapshot or a bad node → 5.
fn node_view(
    c: &kfd_context::Context,
    node: u32,
) -> KmtResult<(
    std::sync::Arc<kfd_topology::Topology>,
    kfd_topology::GpuApertures,
)> {
    match c.node_view(node) {
        Err(kfd_context::ContextError::NoSnapshot | kfd_context::ContextError::Topology(_)) => {
            Err(st::INVALID_NODE_UNIT)
        }
        r => r.kmt(),
    }
}

export! {
    /// `hsaKmtAcquireSystemPropertiesCtx`: takes the context's topology
    /// snapshot and sets up its memory manager (apertures), as the C
    /// library does. 20 first, then a NULL `SystemProperties` → 3.
    ctx fn hsaKmtAcquireSystemPropertiesCtx(ctx: *mut HsaKFDContext, SystemProperties: *mut HsaSystemProperties) {
        let c = ctx::resolve(ctx)?;
        check_mut(SystemProperties, st::INVALID_PARAMETER)?;
        let topo = acquire(&c)?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(SystemProperties, ffi::system_properties(&topo), st::INVALID_PARAMETER) }
    }

    /// `hsaKmtReleaseSystemPropertiesCtx`: drops the snapshot. No open
    /// check; always succeeds for the primary (open or not), as in C.
    ctx fn hsaKmtReleaseSystemPropertiesCtx(ctx: *mut HsaKFDContext) {
        match ctx::lookup(ctx) {
            Ok(c) => {
                // Also destroy the process apertures (topology.c: MMIO
                // remap pages unmapped and freed) where the generation
                // does; the next acquire sets them up again.
                c.release_properties(generation::PROFILE.border.apertures_follow_topology);
                Ok(())
            }
            Err(_) if ctx == ctx::primary_ptr() => {
                // Closed: C's release needs no open KFD, so it acts on a
                // primary kept by the last close, and the snapshot kept
                // for the next open goes.
                if let Some(c) = kfd_context::primary::kept() {
                    c.release_properties(generation::PROFILE.border.apertures_follow_topology);
                }
                kfd_context::primary::forget_snapshot();
                Ok(())
            }
            Err(s) => Err(s),
        }
    }

    /// `hsaKmtGetNodePropertiesCtx`: NULL → 3 (before the open check);
    /// 20; bad node → 5.
    ctx fn hsaKmtGetNodePropertiesCtx(ctx: *mut HsaKFDContext, NodeId: u32, NodeProperties: *mut abi::HsaNodeProperties) {
        check_mut(NodeProperties, st::INVALID_PARAMETER)?;
        let c = ctx::resolve(ctx)?;
        let (topo, ap) = node_view(&c, NodeId)?;
        let node = &topo.nodes[NodeId as usize];
        // SAFETY: checked above; an OUT argument of this generation's size.
        unsafe { write_out(NodeProperties, generation::node_properties(node, &ap), st::INVALID_PARAMETER) }
    }

    /// `hsaKmtGetNodeMemoryPropertiesCtx`: fills at most `NumBanks`
    /// entries. NULL → 3 (before the open check); 20; bad node → 5.
    ctx fn hsaKmtGetNodeMemoryPropertiesCtx(ctx: *mut HsaKFDContext, NodeId: u32, NumBanks: u32, MemoryProperties: *mut HsaMemoryProperties) {
        check_mut(MemoryProperties, st::INVALID_PARAMETER)?;
        let c = ctx::resolve(ctx)?;
        let (topo, ap) = node_view(&c, NodeId)?;
        let node = &topo.nodes[NodeId as usize];
        let banks = ffi::memory_properties_c(&topo, node, &ap, NumBanks);
        // SAFETY: the caller provides `NumBanks` entries; at most that many
        // are written.
        unsafe { write_array(MemoryProperties, &banks, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtGetNodeCachePropertiesCtx`: NULL → 3 (before the open
    /// check); 20; bad node → 5; more caches asked than the node has → 3.
    ctx fn hsaKmtGetNodeCachePropertiesCtx(ctx: *mut HsaKFDContext, NodeId: u32, ProcessorId: u32, NumCaches: u32, CacheProperties: *mut abi::HsaCacheProperties) {
        let _ = ProcessorId;
        check_mut(CacheProperties, st::INVALID_PARAMETER)?;
        let c = ctx::resolve(ctx)?;
        let (topo, id) = node_of(&c, NodeId)?;
        let caches = generation::cache_properties(&topo.nodes[id as usize]);
        if NumCaches as usize > caches.len() {
            return Err(st::INVALID_PARAMETER);
        }
        // SAFETY: the caller provides `NumCaches` entries.
        unsafe { write_array(CacheProperties, &caches[..NumCaches as usize], st::INVALID_PARAMETER) }
    }

    /// `hsaKmtGetNodeIoLinkPropertiesCtx`: NULL → 3 (before the open
    /// check); 20; bad node → 5; more links asked than the node has → 3.
    ctx fn hsaKmtGetNodeIoLinkPropertiesCtx(ctx: *mut HsaKFDContext, NodeId: u32, NumIoLinks: u32, IoLinkProperties: *mut abi::HsaIoLinkProperties) {
        check_mut(IoLinkProperties, st::INVALID_PARAMETER)?;
        let c = ctx::resolve(ctx)?;
        let (topo, id) = node_of(&c, NodeId)?;
        let links = generation::io_link_properties(&topo.nodes[id as usize]);
        if NumIoLinks as usize > links.len() {
            return Err(st::INVALID_PARAMETER);
        }
        // SAFETY: the caller provides `NumIoLinks` entries.
        unsafe { write_array(IoLinkProperties, &links[..NumIoLinks as usize], st::INVALID_PARAMETER) }
    }

    /// `hsaKmtGetNodeWallclockFrequency`: the GPU wall clock in Hz.
    newest fn hsaKmtGetNodeWallclockFrequency(NodeId: u32, Frequency: *mut u64) {
        let c = ctx::primary()?;
        let f = c.perf().kmt()?.wallclock_frequency(NodeId).kmt()?;
        // SAFETY: an OUT argument; checked by `write_out`.
        unsafe { write_out(Frequency, f, st::INVALID_PARAMETER) }
    }
}

forward! {
    /// `hsaKmtAcquireSystemProperties`.
    all fn hsaKmtAcquireSystemProperties(SystemProperties: *mut HsaSystemProperties) => hsaKmtAcquireSystemPropertiesCtx;
    /// `hsaKmtReleaseSystemProperties`.
    all fn hsaKmtReleaseSystemProperties() => hsaKmtReleaseSystemPropertiesCtx;
    /// `hsaKmtGetNodeProperties`.
    all fn hsaKmtGetNodeProperties(NodeId: u32, NodeProperties: *mut abi::HsaNodeProperties) => hsaKmtGetNodePropertiesCtx;
    /// `hsaKmtGetNodeMemoryProperties`.
    all fn hsaKmtGetNodeMemoryProperties(NodeId: u32, NumBanks: u32, MemoryProperties: *mut HsaMemoryProperties) => hsaKmtGetNodeMemoryPropertiesCtx;
    /// `hsaKmtGetNodeCacheProperties`.
    all fn hsaKmtGetNodeCacheProperties(NodeId: u32, ProcessorId: u32, NumCaches: u32, CacheProperties: *mut abi::HsaCacheProperties) => hsaKmtGetNodeCachePropertiesCtx;
    /// `hsaKmtGetNodeIoLinkProperties`.
    all fn hsaKmtGetNodeIoLinkProperties(NodeId: u32, NumIoLinks: u32, IoLinkProperties: *mut abi::HsaIoLinkProperties) => hsaKmtGetNodeIoLinkPropertiesCtx;
}
