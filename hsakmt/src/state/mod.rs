//! What the border keeps for C: the handles it hands out and the memory
//! C reads through pointers it was given.
//!
//! Every opaque handle is a token of one [`HandleTable`] type (never
//! reused: see [`handles`]), except the primary context's (one static
//! address) and event pointers (the address of the C struct, which C
//! reads: [`events::EventViews`]).
//!
//! | handle | form | owned by |
//! |---|---|---|
//! | `HsaKFDContext *` of a secondary | cell token (`crate::ctx`) | the process |
//! | `HsaKFDContext *` of the primary | one static address (`crate::ctx`) | the process |
//! | `HsaAMDGPUDeviceHandle` | cell token (`crate::amdgpu`) | the process |
//! | `HsaMemoryObjectHandle` | tagged token (`crate::bo`) | the process |
//! | libdtif's `amdgpu_bo_handle` | tagged token (`crate::dtif::bo`) | the process |
//! | `HsaEvent *` | address of the C struct | its context ([`Kept`]) |
//!
//! Cell tokens (addresses of cells never freed) are for the handles C
//! code may read or write through: the C library's context is a struct,
//! its device handle libdrm's, and a caller that reads one reads zeros
//! instead of faulting, as before these were tokens. Buffer handles are
//! tagged (not addresses), as there may be many and C only passes them
//! back.
//!
//! Why the tables are process-global: the C functions that take those
//! handles take nothing else that names a context (`hsaKmtMemoryCpuMap`,
//! `hsaKmtGetAmdGPUDeviceFd`, libdrm's `amdgpu_bo_*` and
//! `amdgpu_query_gpu_info`), and what the primary context's handles name
//! outlives its close (the C library's per-render-node device array and
//! libdrm's buffer objects do): a table kept in the context would die
//! with it. Entries that belong to a secondary context leave their table
//! when it is closed (`crate::ctx::teardown`), and their tokens stay
//! unknown from then on.
//!
//! Per context, in [`Kept`] (attached to the context, dropped with it):
//! its events, the metadata of graphics buffers it imported, its counter
//! tables and trace buffers.

use std::sync::Mutex;

use kfd_context::Context;
use kfd_sync::SeqWords;
use kfd_sys::sync::lock;

use crate::border::{st, KmtResult};

pub(crate) mod events;
pub(crate) mod handles;

#[cfg(feature = "newest")]
pub(crate) use handles::Tag;
pub(crate) use handles::{HandleTable, Token};

/// Memory the C caller reads through pointers `hsaKmtQueryPointerInfo`
/// handed out: the metadata of imported graphics buffers and the node
/// arrays, per object start, until the object is freed or deregistered.
#[derive(Debug, Default)]
pub(crate) struct MemoryState {
    /// Metadata bytes by object start address.
    pub(crate) metadata: std::collections::BTreeMap<u64, Box<[u8]>>,
    /// The `HsaPointerInfo` node arrays of each queried object, by
    /// object start address.
    pub(crate) nodes: std::collections::BTreeMap<u64, crate::memory::NodeArrays>,
}

/// Memory the C caller reads or the kernel writes through pointers the
/// perf functions were given or handed out.
#[derive(Debug, Default)]
pub(crate) struct PerfState {
    /// Counter tables (the C layout, as 64-bit words) per node.
    pub(crate) tables: std::collections::BTreeMap<u32, Box<[u64]>>,
    /// The caller's buffer (address, size) each trace was started with.
    pub(crate) buffers: std::collections::BTreeMap<u64, (usize, u64)>,
}

/// What the border keeps per context. It lives in the context
/// ([`Context::attached`]) and is dropped with it.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    /// Graphics metadata.
    pub memory: Mutex<MemoryState>,
    /// The node lists of the object last asked about by a pointer query,
    /// readable without `memory`'s lock (written under it): the object's
    /// start + 1 (0: none), its generation, and the first entry and count
    /// of its registered and of its mapped list.
    pub last_nodes: SeqWords<6>,
    /// Counter tables and trace buffers.
    pub perf: Mutex<PerfState>,
    /// The C structs of events.
    pub events: Mutex<events::EventViews>,
}

/// The border state of `c` ([`Kept`]). `ERROR` only if something else
/// attached a value of another type to the context first.
#[inline(always)]
pub(crate) fn kept(c: &Context) -> KmtResult<&Kept> {
    c.attached::<Kept>().ok_or(st::ERROR)
}

/// Forgets the border state of a primary context kept by its last close:
/// the next open starts without it, as a context made anew does.
pub(crate) fn forget(c: &Context) {
    if let Ok(k) = kept(c) {
        let mut memory = lock(&k.memory);
        *memory = Default::default();
        k.last_nodes.write([0; 6]);
        drop(memory);
        *lock(&k.perf) = Default::default();
        *lock(&k.events) = Default::default();
    }
}
