//! Performance counter traces: register/unregister, acquire/release,
//! start/query/stop (`hsaKmtPmc*Trace`).
//!
//! The checks and their order are the C library's (5.2.3 `perfctr.c`).
//! Where C follows a wild pointer (an unknown trace id) or reads a
//! never-built table, this returns an error instead.
//!
//! What a trace can do on a given kernel: only counters whose type is
//! privileged (`HSA_PROFILE_TYPE_PRIVILEGED_*`) are recorded in a trace;
//! the rest are the profiler's business. Slots can only be reserved for
//! the privileged IOMMUv2 block, which no table here reports (see
//! [`crate::pmc`]), so [`Perf::acquire_trace_access`] fails with
//! [`Error::PrivilegedSlotsUnavailable`] (`UNAVAILABLE`) as 5.2.3 does
//! for every other block, and start/stop then fail with `ERROR`, as in C.

use std::collections::BTreeMap;

use crate::pmc::{BlockId, Counter, NUM_BLOCK_IDS};
use crate::{Error, Perf, Result};
use kfd_sys::PAGE_SIZE;

/// The most counters one trace may register (`MAX_COUNTERS`).
pub const MAX_COUNTERS_PER_TRACE: usize = 512;

/// `HSA_PERF_MAGIC4CC` ("HSAT"): the high half of every trace id, so ids
/// are never 0 and are recognisable in traces.
const TRACE_MAGIC: u64 = 0x5441_5348;

/// A trace id (`HSATraceId`): opaque, never 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TraceId(pub u64);

/// What registering a trace returns (`HsaPmcTraceRoot`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRoot {
    /// Minimum size of the trace buffer, page aligned.
    pub trace_buffer_min_size_bytes: u64,
    /// Passes needed to collect all counters (always 1).
    pub number_of_passes: u32,
    /// The trace.
    pub trace_id: TraceId,
}

#[derive(Debug)]
pub(crate) struct Trace {
    gpu_id: u32,
    /// Counter ids per block, in block order.
    blocks: BTreeMap<BlockId, Vec<u64>>,
    acquired: bool,
    started: bool,
    buffer_size: u64,
}

impl Trace {
    fn num_counters(&self) -> usize {
        self.blocks.values().map(Vec::len).sum()
    }
}

impl Perf {
    fn check_trace_id(id: TraceId) -> Result<u64> {
        if id.0 == 0 {
            Err(Error::NullTraceId)
        } else {
            Ok(id.0)
        }
    }

    /// Registers a set of counters of `node` for tracing
    /// (`hsaKmtPmcRegisterTrace`).
    ///
    /// Checks, in the C library's order: no counters →
    /// `INVALID_PARAMETER`; unknown node → `INVALID_NODE_UNIT`; more than
    /// [`MAX_COUNTERS_PER_TRACE`] → `NO_MEMORY`; a block index out of
    /// range → `INVALID_PARAMETER`; then, counting only privileged
    /// counters, a block the node lacks or more counters of a block than
    /// it can count at once → `INVALID_PARAMETER`; nothing privileged left
    /// → `INVALID_PARAMETER`.
    pub fn register_trace(&self, node: u32, counters: &[Counter]) -> Result<TraceRoot> {
        if counters.is_empty() {
            return Err(Error::InvalidArgument("no counters"));
        }
        let gpu_id = self.node(node)?.gpu_id;
        if counters.len() > MAX_COUNTERS_PER_TRACE {
            return Err(Error::TooManyCounters {
                requested: counters.len(),
                max: MAX_COUNTERS_PER_TRACE,
            });
        }
        let mut min_buf_size = 0u64;
        let mut blocks: BTreeMap<BlockId, Vec<u64>> = BTreeMap::new();
        for c in counters {
            let block =
                BlockId::from_index(c.block_index).ok_or(Error::UnknownBlock(c.block_index))?;
            if !c.kind.is_privileged() {
                continue;
            }
            min_buf_size += u64::from(c.size_in_bits / 8);
            blocks.entry(block).or_default().push(c.id);
        }
        if !blocks.is_empty() {
            // The C library reads the concurrency from the node's property
            // table (and crashes when it was never built); build it here.
            let props = self.counter_properties(node)?;
            for (block, ids) in &blocks {
                let limit = props.block(*block).map_or(0, |b| b.num_concurrent);
                if limit == 0 {
                    return Err(Error::UnknownBlock(*block as u32));
                }
                if ids.len() as u32 > limit {
                    return Err(Error::ConcurrencyExceeded {
                        block: *block,
                        requested: ids.len() as u32,
                        limit,
                    });
                }
            }
        }
        if blocks.is_empty() {
            return Err(Error::InvalidArgument("no privileged counters to trace"));
        }
        debug_assert!(blocks.len() <= NUM_BLOCK_IDS as usize);
        let mut s = self.lock();
        s.next_trace += 1;
        let id = (TRACE_MAGIC << 32) | (s.next_trace & 0xffff_ffff);
        s.traces.insert(
            id,
            Trace {
                gpu_id,
                blocks,
                acquired: false,
                started: false,
                buffer_size: 0,
            },
        );
        Ok(TraceRoot {
            trace_buffer_min_size_bytes: min_buf_size.div_ceil(PAGE_SIZE) * PAGE_SIZE,
            number_of_passes: 1,
            trace_id: TraceId(id),
        })
    }

    /// Unregisters a trace (`hsaKmtPmcUnregisterTrace`), stopping it first
    /// if it runs. Trace id 0 → `INVALID_PARAMETER`; unknown node →
    /// `INVALID_NODE_UNIT`; unknown trace → `INVALID_HANDLE`; a trace of
    /// another node → `INVALID_NODE_UNIT`.
    pub fn unregister_trace(&self, node: u32, trace: TraceId) -> Result<()> {
        let id = Self::check_trace_id(trace)?;
        let gpu_id = self.node(node)?.gpu_id;
        let started = {
            let s = self.lock();
            let t = s.traces.get(&id).ok_or(Error::UnknownTrace(id))?;
            if t.gpu_id != gpu_id {
                return Err(Error::TraceNodeMismatch { trace: id, node });
            }
            t.started
        };
        if started {
            self.stop_trace(trace)?;
        }
        self.lock().traces.remove(&id);
        Ok(())
    }

    /// Reserves the counters of a trace for this process
    /// (`hsaKmtPmcAcquireTraceAccess`). Trace id 0 → `INVALID_PARAMETER`;
    /// unknown trace → `INVALID_HANDLE`; unknown node →
    /// `INVALID_NODE_UNIT` (checked after the trace, as in C).
    ///
    /// Only IOMMUv2 has privileged slots to reserve, so a trace of any
    /// other block fails with [`Error::PrivilegedSlotsUnavailable`]
    /// (`UNAVAILABLE`), as 5.2.3 does. (The newest C library removed the
    /// IOMMUv2 path and returns success without doing anything.)
    pub fn acquire_trace_access(&self, node: u32, trace: TraceId) -> Result<()> {
        let id = Self::check_trace_id(trace)?;
        let mut s = self.lock();
        let t = s.traces.get_mut(&id).ok_or(Error::UnknownTrace(id))?;
        if node as usize >= self.nodes.len() {
            return Err(Error::InvalidNode(node));
        }
        if let Some(block) = t.blocks.keys().next() {
            // Reserving privileged slots needs the host's IOMMU perf-event
            // source and root; neither the simulator nor current upstream
            // offers it, so every block is unavailable.
            return Err(Error::PrivilegedSlotsUnavailable(*block));
        }
        t.acquired = true;
        Ok(())
    }

    /// Gives the counters of a trace back (`hsaKmtPmcReleaseTraceAccess`).
    /// Trace id 0 → `INVALID_PARAMETER`; unknown trace →
    /// `INVALID_HANDLE`. The node is not checked (as in C).
    pub fn release_trace_access(&self, _node: u32, trace: TraceId) -> Result<()> {
        let id = Self::check_trace_id(trace)?;
        let mut s = self.lock();
        let t = s.traces.get_mut(&id).ok_or(Error::UnknownTrace(id))?;
        t.acquired = false;
        Ok(())
    }

    /// Starts a trace writing into a buffer of `buffer_size` bytes
    /// (`hsaKmtPmcStartTrace`). Trace id 0 or size 0 →
    /// `INVALID_PARAMETER`; unknown trace → `INVALID_HANDLE`; a trace
    /// whose access was not acquired → [`Error::TraceNotAcquired`]
    /// (`ERROR`, what the C library's enable of never-opened counters
    /// gives).
    pub fn start_trace(&self, trace: TraceId, buffer_size: u64) -> Result<()> {
        let id = Self::check_trace_id(trace)?;
        if buffer_size == 0 {
            return Err(Error::InvalidArgument("trace buffer size is 0"));
        }
        let mut s = self.lock();
        let t = s.traces.get_mut(&id).ok_or(Error::UnknownTrace(id))?;
        if !t.acquired {
            return Err(Error::TraceNotAcquired(id));
        }
        t.started = true;
        t.buffer_size = buffer_size;
        Ok(())
    }

    /// Reads the current values of a trace's counters
    /// (`hsaKmtPmcQueryTrace`), one `u64` per counter in block order.
    /// Trace id 0 → `INVALID_PARAMETER`; unknown trace →
    /// `INVALID_HANDLE`; a buffer (from start, 0 if never started) too
    /// small for one value per counter → `NO_MEMORY`.
    pub fn query_trace(&self, trace: TraceId) -> Result<Vec<u64>> {
        let id = Self::check_trace_id(trace)?;
        let s = self.lock();
        let t = s.traces.get(&id).ok_or(Error::UnknownTrace(id))?;
        let needed = 8 * t.num_counters() as u64;
        if needed > t.buffer_size {
            return Err(Error::TraceBufferTooSmall {
                size: t.buffer_size,
                needed,
            });
        }
        // Only reachable with acquired privileged counters, which no
        // kernel this crate supports provides.
        Err(Error::TraceNotAcquired(id))
    }

    /// Stops a trace (`hsaKmtPmcStopTrace`). Trace id 0 →
    /// `INVALID_PARAMETER`; unknown trace → `INVALID_HANDLE`; counters not
    /// open → `ERROR`.
    pub fn stop_trace(&self, trace: TraceId) -> Result<()> {
        let id = Self::check_trace_id(trace)?;
        let mut s = self.lock();
        let t = s.traces.get_mut(&id).ok_or(Error::UnknownTrace(id))?;
        if !t.acquired {
            return Err(Error::TraceNotAcquired(id));
        }
        t.started = false;
        Ok(())
    }
}
