//! Performance counters, SPM, PC sampling, clock counters.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard};

use hsakmt_sys::common::{HsaClockCounters, HsaCounter, HsaCounterProperties, HsaPmcTraceRoot};
use kfd_context::{Context, ContextId};
use kfd_perf::pmc::Counter;
use kfd_perf::Perf;

use crate::border::{check_mut, read_in, slice_in, st, write_out, Kmt, KmtResult};
use crate::ctx::{self, HsaKFDContext};
use crate::generation::{self, Generation};

/// Memory the C caller reads through pointers the border handed out:
/// counter tables (per node) and the buffers traces were started with.
#[derive(Default)]
struct Held {
    tables: BTreeMap<u32, Box<[u64]>>,
    buffers: BTreeMap<u64, (usize, u64)>,
}

static HELD: Mutex<BTreeMap<ContextId, Held>> = Mutex::new(BTreeMap::new());

fn held() -> MutexGuard<'static, BTreeMap<ContextId, Held>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// Drops what is held for a closed context.
pub(crate) fn forget_context(id: ContextId) {
    held().remove(&id);
}

fn perf_of(c: &Context) -> KmtResult<Arc<Perf>> {
    c.perf().kmt()
}

/// The Pmc functions: the C library's counter tables exist only while
/// KFD is open: `NO_MEMORY` otherwise (as C), then the context lookup.
fn pmc_ctx(ctx: *mut HsaKFDContext) -> KmtResult<Context> {
    ctx::check_open().map_err(|_| st::NO_MEMORY)?;
    ctx::lookup(ctx)
}

/// The Pmc functions that take a trace id: the C library checks the id
/// before anything else (0 → 3) and has no open check; with KFD closed
/// no trace can be live, so they fail with `closed` (the status of the
/// check C does next).
fn trace_ctx(
    ctx: *mut HsaKFDContext,
    trace: u64,
    closed: crate::border::Status,
) -> KmtResult<Context> {
    if trace == 0 {
        return Err(st::INVALID_PARAMETER);
    }
    ctx::check_open().map_err(|_| closed)?;
    ctx::lookup(ctx)
}

#[cfg(feature = "newest")]
/// The most PC-sampling method descriptions
/// `hsaKmtPcSamplingQueryCapabilities` asks the kernel for (it knows two
/// methods, hosttrap and stochastic, per GPU).
const PC_SAMPLING_MAX_INFOS: usize = 256;

export! {
    /// `hsaKmtPmcGetCounterPropertiesCtx`: not open → 6; NULL → 3; bad
    /// node → 5. The table stays valid until the context closes.
    ctx fn hsaKmtPmcGetCounterPropertiesCtx(ctx: *mut HsaKFDContext, NodeId: u32, CounterProperties: *mut *mut HsaCounterProperties) {
        let c = pmc_ctx(ctx)?;
        let out = check_mut(CounterProperties, st::INVALID_PARAMETER)?;
        let props = perf_of(&c)?.counter_properties(NodeId).kmt()?;
        let bytes = props.to_c_bytes();
        let mut words = vec![0u64; bytes.len().div_ceil(8)].into_boxed_slice();
        for (i, b) in bytes.iter().enumerate() {
            words[i / 8] |= u64::from(*b) << (8 * (i % 8));
        }
        let p = words.as_mut_ptr() as *mut HsaCounterProperties;
        held().entry(c.id()).or_default().tables.insert(NodeId, words);
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(out, p, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtPmcRegisterTraceCtx`: not open → 6; NULL counters or root,
    /// or 0 counters → 3; bad node → 5; more than 512 counters → 6
    /// (before the array is read, as C); then the counter checks.
    ctx fn hsaKmtPmcRegisterTraceCtx(ctx: *mut HsaKFDContext, NodeId: u32, NumberOfCounters: u32, Counters: *mut HsaCounter, TraceRoot: *mut HsaPmcTraceRoot) {
        let c = pmc_ctx(ctx)?;
        if Counters.is_null() || NumberOfCounters == 0 {
            return Err(st::INVALID_PARAMETER);
        }
        let root = check_mut(TraceRoot, st::INVALID_PARAMETER)?;
        c.topology().kmt()?.validate_node(NodeId).map_err(|_| st::INVALID_NODE_UNIT)?;
        let max = kfd_perf::MAX_COUNTERS_PER_TRACE;
        // SAFETY: the C contract: `NumberOfCounters` counters (at most
        // `max` of them are read; more → NO_MEMORY, as C).
        let raw = unsafe { slice_in(Counters as *const HsaCounter, NumberOfCounters as usize, max, st::NO_MEMORY) }?;
        let counters: Vec<Counter> = raw
            .iter()
            .map(|h| Counter {
                kind: h.Type,
                id: h.CounterId,
                size_in_bits: h.CounterSizeInBits,
                mask: h.CounterMask,
                flags: h.Flags.0,
                block_index: h.BlockIndex,
            })
            .collect();
        let r = perf_of(&c)?.register_trace(NodeId, &counters).kmt()?;
        let out = HsaPmcTraceRoot {
            TraceBufferMinSizeBytes: r.trace_buffer_min_size_bytes,
            NumberOfPasses: r.number_of_passes,
            TraceId: r.trace_id.0,
        };
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(root, out, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtPmcUnregisterTraceCtx`: trace 0 → 3 (first, as C: the
    /// trace functions have no open check); KFD closed → 5 (no snapshot
    /// for the node check, which C does next).
    ctx fn hsaKmtPmcUnregisterTraceCtx(ctx: *mut HsaKFDContext, NodeId: u32, TraceId: u64) {
        let c = trace_ctx(ctx, TraceId, st::INVALID_NODE_UNIT)?;
        perf_of(&c)?.unregister_trace(NodeId, kfd_perf::TraceId(TraceId)).kmt()?;
        if let Some(h) = held().get_mut(&c.id()) {
            h.buffers.remove(&TraceId);
        }
        Ok(())
    }

    /// `hsaKmtPmcAcquireTraceAccessCtx`: trace 0 → 3; KFD closed → 4
    /// (no trace outlives its context).
    ctx fn hsaKmtPmcAcquireTraceAccessCtx(ctx: *mut HsaKFDContext, NodeId: u32, TraceId: u64) {
        let c = trace_ctx(ctx, TraceId, st::INVALID_HANDLE)?;
        perf_of(&c)?.acquire_trace_access(NodeId, kfd_perf::TraceId(TraceId)).kmt()
    }

    /// `hsaKmtPmcReleaseTraceAccessCtx`: trace 0 → 3; KFD closed → 4.
    ctx fn hsaKmtPmcReleaseTraceAccessCtx(ctx: *mut HsaKFDContext, NodeId: u32, TraceId: u64) {
        let c = trace_ctx(ctx, TraceId, st::INVALID_HANDLE)?;
        perf_of(&c)?.release_trace_access(NodeId, kfd_perf::TraceId(TraceId)).kmt()
    }

    /// `hsaKmtPmcStartTrace` (primary): trace 0, NULL buffer or size 0
    /// → 3 (before anything else, as C); KFD closed → 4. The buffer
    /// receives the values at each `hsaKmtPmcQueryTrace`.
    both fn hsaKmtPmcStartTrace(TraceId: u64, TraceBuffer: *mut c_void, TraceBufferSizeBytes: u64) {
        if TraceBuffer.is_null() || TraceBufferSizeBytes == 0 {
            return Err(st::INVALID_PARAMETER);
        }
        let c = trace_ctx(ctx::primary_ptr(), TraceId, st::INVALID_HANDLE)?;
        check_mut(TraceBuffer as *mut u64, st::INVALID_PARAMETER)?;
        perf_of(&c)?.start_trace(kfd_perf::TraceId(TraceId), TraceBufferSizeBytes).kmt()?;
        held().entry(c.id()).or_default().buffers.insert(TraceId, (TraceBuffer as usize, TraceBufferSizeBytes));
        Ok(())
    }

    /// `hsaKmtPmcQueryTrace` (primary): trace 0 → 3; KFD closed → 4;
    /// writes one 64-bit value per counter into the trace buffer.
    both fn hsaKmtPmcQueryTrace(TraceId: u64) {
        let c = trace_ctx(ctx::primary_ptr(), TraceId, st::INVALID_HANDLE)?;
        let values = perf_of(&c)?.query_trace(kfd_perf::TraceId(TraceId)).kmt()?;
        let buf = held().get(&c.id()).and_then(|h| h.buffers.get(&TraceId).copied());
        let (addr, size) = buf.ok_or(st::INVALID_HANDLE)?;
        let n = values.len().min((size / 8) as usize);
        // SAFETY: the buffer given to hsaKmtPmcStartTrace (checked
        // non-NULL and 8-byte aligned then), `size` bytes long, which the
        // caller keeps valid while the trace runs (the API's contract).
        unsafe { crate::border::write_array(addr as *mut u64, &values[..n], st::INVALID_PARAMETER) }
    }

    /// `hsaKmtPmcStopTrace` (primary): trace 0 → 3; KFD closed → 4.
    both fn hsaKmtPmcStopTrace(TraceId: u64) {
        let c = trace_ctx(ctx::primary_ptr(), TraceId, st::INVALID_HANDLE)?;
        perf_of(&c)?.stop_trace(kfd_perf::TraceId(TraceId)).kmt()
    }

    /// `hsaKmtSPMAcquire` (primary): no SPM in the kernel → 11. 5.2.3
    /// has no open check: with KFD closed its node check fails (5).
    both fn hsaKmtSPMAcquire(PreferredNode: u32) {
        let c = ctx::resolve_unchecked(ctx::primary_ptr(), st::INVALID_NODE_UNIT)?;
        perf_of(&c)?.spm_acquire(PreferredNode).kmt()
    }

    /// `hsaKmtSPMRelease` (primary); closed as [`hsaKmtSPMAcquire`].
    both fn hsaKmtSPMRelease(PreferredNode: u32) {
        let c = ctx::resolve_unchecked(ctx::primary_ptr(), st::INVALID_NODE_UNIT)?;
        perf_of(&c)?.spm_release(PreferredNode).kmt()
    }

    /// `hsaKmtSPMSetDestBuffer` (primary): NULL `timeout`, `SizeCopied` or
    /// `isSPMDataLoss` → 3; closed as [`hsaKmtSPMAcquire`] (5.2.3 ignores
    /// its failed node check and returns the raw -1 of the ioctl; see
    /// intended-differences.txt).
    both fn hsaKmtSPMSetDestBuffer(PreferredNode: u32, SizeInBytes: u32, timeout: *mut u32, SizeCopied: *mut u32, DestMemoryAddress: *mut c_void, isSPMDataLoss: *mut bool) {
        let c = ctx::resolve_unchecked(ctx::primary_ptr(), st::INVALID_NODE_UNIT)?;
        // SAFETY: IN/OUT argument; checked by `read_in`.
        let t = unsafe { read_in(timeout as *const u32, st::INVALID_PARAMETER) }?;
        check_mut(SizeCopied, st::INVALID_PARAMETER)?;
        check_mut(isSPMDataLoss, st::INVALID_PARAMETER)?;
        // SAFETY: the API's contract: the destination (NULL stops the
        // stream) stays valid for `SizeInBytes` bytes, for the kernel
        // alone to write, until it is replaced or SPM is released.
        let dest = unsafe { kfd_sys::spm::SpmBuffer::from_raw(DestMemoryAddress as *mut u8, SizeInBytes) };
        let r = perf_of(&c)?.spm_set_dest_buffer(PreferredNode, dest, t).kmt()?;
        // SAFETY: all checked above; OUT arguments.
        unsafe {
            write_out(timeout, r.timeout_left_ms, st::INVALID_PARAMETER)?;
            write_out(SizeCopied, r.bytes_copied, st::INVALID_PARAMETER)?;
            write_out(isSPMDataLoss, r.has_data_loss, st::INVALID_PARAMETER)
        }
    }

    /// `hsaKmtPcSamplingSupport`: 20; KFD < 1.16 → 11.
    current fn hsaKmtPcSamplingSupport() {
        perf_of(&ctx::primary()?)?.pc_sampling_support().kmt()
    }

    /// `hsaKmtPcSamplingQueryCapabilities`: NULL `sz_needed` → 3 (before
    /// the open check); 20; too small → 7 with `*sz_needed` set.
    current fn hsaKmtPcSamplingQueryCapabilities(NodeId: u32, sample_info: *mut c_void, sample_info_sz: u32, sz_needed: *mut u32) {
        check_mut(sz_needed, st::INVALID_PARAMETER)?;
        let c = ctx::primary()?;
        let infos = if sample_info.is_null() { std::ptr::null_mut() } else { check_mut(sample_info as *mut kfd_perf::PcSamplingInfo, st::INVALID_PARAMETER)? };
        // The kernel reports a handful of sampling methods; a larger
        // buffer is offered to it as PC_SAMPLING_MAX_INFOS entries (the
        // same answer), so the allocation stays bounded.
        let n = if infos.is_null() { 0 } else { (sample_info_sz as usize).min(PC_SAMPLING_MAX_INFOS) };
        let mut buf = vec![kfd_perf::PcSamplingInfo::default(); n];
        let r = perf_of(&c)?.pc_sampling_query_capabilities(NodeId, &mut buf);
        let needed = match &r {
            Ok(k) => *k,
            Err(kfd_perf::Error::BufferTooSmall { needed }) => *needed,
            Err(_) => 0,
        };
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(sz_needed, needed, st::INVALID_PARAMETER)? };
        r.kmt()?;
        let k = (needed as usize).min(n);
        // SAFETY: `infos` holds `sample_info_sz >= k` entries (the C
        // contract), checked non-NULL and aligned when `n > 0`.
        unsafe { crate::border::write_array(infos, &buf[..k], st::INVALID_PARAMETER) }
    }

    /// `hsaKmtPcSamplingCreate`: NULL arguments → 3 (before the open
    /// check); 20; the kernel's errno table.
    current fn hsaKmtPcSamplingCreate(node_id: u32, sample_info: *mut kfd_perf::PcSamplingInfo, traceId: *mut u32) {
        let info = check_mut(sample_info, st::INVALID_PARAMETER)?;
        check_mut(traceId, st::INVALID_PARAMETER)?;
        let c = ctx::primary()?;
        // SAFETY: checked above; IN/OUT argument.
        let mut i = unsafe { info.read() };
        let id = perf_of(&c)?.pc_sampling_create(node_id, &mut i).kmt()?;
        // SAFETY: both checked above.
        unsafe {
            write_out(info, i, st::INVALID_PARAMETER)?;
            write_out(traceId, id.0, st::INVALID_PARAMETER)
        }
    }

    /// `hsaKmtPcSamplingDestroy`: trace 0 → 4 (before the open check).
    current fn hsaKmtPcSamplingDestroy(NodeId: u32, traceId: u32) {
        if traceId == 0 {
            return Err(st::INVALID_HANDLE);
        }
        perf_of(&ctx::primary()?)?.pc_sampling_destroy(NodeId, kfd_perf::PcSamplingTraceId(traceId)).kmt()
    }

    /// `hsaKmtPcSamplingStart`: trace 0 → 4 (before the open check).
    current fn hsaKmtPcSamplingStart(NodeId: u32, traceId: u32) {
        if traceId == 0 {
            return Err(st::INVALID_HANDLE);
        }
        perf_of(&ctx::primary()?)?.pc_sampling_start(NodeId, kfd_perf::PcSamplingTraceId(traceId)).kmt()
    }

    /// `hsaKmtPcSamplingStop`: trace 0 → 4 (before the open check).
    current fn hsaKmtPcSamplingStop(NodeId: u32, traceId: u32) {
        if traceId == 0 {
            return Err(st::INVALID_HANDLE);
        }
        perf_of(&ctx::primary()?)?.pc_sampling_stop(NodeId, kfd_perf::PcSamplingTraceId(traceId)).kmt()
    }

    /// `hsaKmtGetClockCountersCtx`: 20; NULL → 3; bad node → 5. The
    /// current build takes the best of several samples, as the newest C
    /// library does; the 5.2 build one sample, as 5.2.3.
    ctx fn hsaKmtGetClockCountersCtx(ctx: *mut HsaKFDContext, NodeId: u32, Counters: *mut HsaClockCounters) {
        let c = ctx::resolve(ctx)?;
        check_mut(Counters, st::INVALID_PARAMETER)?;
        let p = perf_of(&c)?;
        let cc = match generation::GENERATION {
            Generation::Rocm52 => p.clock_counters(NodeId),
            Generation::Current => p.clock_counters_precise(NodeId),
        }
        .kmt()?;
        let out = HsaClockCounters {
            GPUClockCounter: cc.gpu,
            CPUClockCounter: cc.cpu,
            SystemClockCounter: cc.system,
            SystemClockFrequencyHz: cc.system_frequency_hz,
        };
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(Counters, out, st::INVALID_PARAMETER) }
    }
}

forward! {
    /// `hsaKmtPmcGetCounterProperties`.
    both fn hsaKmtPmcGetCounterProperties(NodeId: u32, CounterProperties: *mut *mut HsaCounterProperties) => hsaKmtPmcGetCounterPropertiesCtx;
    /// `hsaKmtPmcRegisterTrace`.
    both fn hsaKmtPmcRegisterTrace(NodeId: u32, NumberOfCounters: u32, Counters: *mut HsaCounter, TraceRoot: *mut HsaPmcTraceRoot) => hsaKmtPmcRegisterTraceCtx;
    /// `hsaKmtPmcUnregisterTrace`.
    both fn hsaKmtPmcUnregisterTrace(NodeId: u32, TraceId: u64) => hsaKmtPmcUnregisterTraceCtx;
    /// `hsaKmtPmcAcquireTraceAccess`.
    both fn hsaKmtPmcAcquireTraceAccess(NodeId: u32, TraceId: u64) => hsaKmtPmcAcquireTraceAccessCtx;
    /// `hsaKmtPmcReleaseTraceAccess`.
    both fn hsaKmtPmcReleaseTraceAccess(NodeId: u32, TraceId: u64) => hsaKmtPmcReleaseTraceAccessCtx;
    /// `hsaKmtGetClockCounters`.
    both fn hsaKmtGetClockCounters(NodeId: u32, Counters: *mut HsaClockCounters) => hsaKmtGetClockCountersCtx;
}
