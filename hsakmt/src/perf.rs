//! Performance counters, SPM, PC sampling, clock counters.

use std::ffi::c_void;
use std::sync::{Arc, MutexGuard};

use hsakmt_sys::common::{
    self as hc, HsaClockCounters, HsaCounter, HsaCounterProperties, HsaPmcTraceRoot, HSA_UUID,
};
use kfd_context::Context;
use kfd_perf::pmc::{BlockId, Counter, CounterProperties, ProfileType};
use kfd_perf::{PcSamplingTraceId, Perf};
use kfd_sys::sync::lock;

use crate::border::{check_mut, read_in, slice_in, st, write_out, Kmt, KmtResult};
use crate::ctx::{self, HsaKFDContext};
use crate::generation;
use crate::state::{self, PerfState};

/// The `HSA_PROFILEBLOCK_AMD_*` UUID C names a counter block by (zero
/// for CPC, which no table has).
fn block_uuid(block: BlockId) -> HSA_UUID {
    hc::PERF_BLOCK_UUIDS[block as usize]
}

/// The C layout of a counter table, byte for byte as
/// `hsaKmtPmcGetCounterProperties` returns it: `NumBlocks`,
/// `NumConcurrent`, then each block (`HSA_UUID`, `NumCounters`,
/// `NumConcurrent`, its `HsaCounter`s, 32 bytes each, 4-byte packed),
/// each block starting right after the previous block's last counter:
/// `8 + 24 * blocks + 32 * counters` bytes in all.
fn counter_table_bytes(p: &CounterProperties) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 24 * p.blocks.len() + 32 * p.num_counters());
    out.extend_from_slice(&(p.blocks.len() as u32).to_ne_bytes());
    out.extend_from_slice(&p.num_concurrent.to_ne_bytes());
    for b in &p.blocks {
        let uuid = block_uuid(b.block);
        out.extend_from_slice(&uuid.Data1.to_ne_bytes());
        out.extend_from_slice(&uuid.Data2.to_ne_bytes());
        out.extend_from_slice(&uuid.Data3.to_ne_bytes());
        out.extend_from_slice(&uuid.Data4);
        out.extend_from_slice(&(b.counters.len() as u32).to_ne_bytes());
        out.extend_from_slice(&b.num_concurrent.to_ne_bytes());
        for c in &b.counters {
            out.extend_from_slice(&c.kind.raw().to_ne_bytes());
            out.extend_from_slice(&c.id.to_ne_bytes());
            out.extend_from_slice(&c.size_in_bits.to_ne_bytes());
            out.extend_from_slice(&c.mask.to_ne_bytes());
            out.extend_from_slice(&c.flags.to_ne_bytes());
            out.extend_from_slice(&c.block_index.to_ne_bytes());
        }
    }
    out
}

/// The counter tables and trace buffers this context keeps for C
/// ([`PerfState`]).
fn held(c: &Context) -> KmtResult<MutexGuard<'_, PerfState>> {
    Ok(lock(&state::kept(c)?.perf))
}

fn perf_of(c: &Context) -> KmtResult<&Arc<Perf>> {
    c.perf().kmt()
}

/// The Pmc functions: the C library's counter tables exist only while
/// KFD is open: `NO_MEMORY` otherwise (as C), then the context lookup.
fn pmc_ctx(ctx: *mut HsaKFDContext) -> KmtResult<ctx::CtxRef> {
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
) -> KmtResult<ctx::CtxRef> {
    if trace == 0 {
        return Err(st::INVALID_PARAMETER);
    }
    ctx::check_open().map_err(|_| closed)?;
    ctx::lookup(ctx)
}

/// The prologue of the PC-sampling session calls: trace 0 → 4 (before
/// the open check), 20, then the node against the current snapshot (5).
/// (The 5.2 build has no PC sampling.)
#[cfg_attr(feature = "rocm-5.2", allow(dead_code))]
fn pc_sampling_session(node: u32, trace: u32) -> KmtResult<(ctx::CtxRef, PcSamplingTraceId)> {
    if trace == 0 {
        return Err(st::INVALID_HANDLE);
    }
    let c = ctx::primary()?;
    crate::topology::validate_node(&c, node)?;
    Ok((c, PcSamplingTraceId(trace)))
}

#[cfg(any(feature = "rocm-6.2", feature = "newest"))]
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
        let bytes = counter_table_bytes(&props);
        let mut words = vec![0u64; bytes.len().div_ceil(8)].into_boxed_slice();
        for (i, b) in bytes.iter().enumerate() {
            words[i / 8] |= u64::from(*b) << (8 * (i % 8));
        }
        let p = words.as_mut_ptr() as *mut HsaCounterProperties;
        held(&c)?.tables.insert(NodeId, words);
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
                kind: ProfileType::from_raw(h.Type.0),
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
        held(&c)?.buffers.remove(&TraceId);
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
    all fn hsaKmtPmcStartTrace(TraceId: u64, TraceBuffer: *mut c_void, TraceBufferSizeBytes: u64) {
        if TraceBuffer.is_null() || TraceBufferSizeBytes == 0 {
            return Err(st::INVALID_PARAMETER);
        }
        let c = trace_ctx(ctx::primary_ptr(), TraceId, st::INVALID_HANDLE)?;
        check_mut(TraceBuffer as *mut u64, st::INVALID_PARAMETER)?;
        perf_of(&c)?.start_trace(kfd_perf::TraceId(TraceId), TraceBufferSizeBytes).kmt()?;
        held(&c)?.buffers.insert(TraceId, (TraceBuffer as usize, TraceBufferSizeBytes));
        Ok(())
    }

    /// `hsaKmtPmcQueryTrace` (primary): trace 0 → 3; KFD closed → 4;
    /// writes one 64-bit value per counter into the trace buffer.
    all fn hsaKmtPmcQueryTrace(TraceId: u64) {
        let c = trace_ctx(ctx::primary_ptr(), TraceId, st::INVALID_HANDLE)?;
        let values = perf_of(&c)?.query_trace(kfd_perf::TraceId(TraceId)).kmt()?;
        let buf = held(&c)?.buffers.get(&TraceId).copied();
        let (addr, size) = buf.ok_or(st::INVALID_HANDLE)?;
        let n = values.len().min((size / 8) as usize);
        // SAFETY: the buffer given to hsaKmtPmcStartTrace (checked
        // non-NULL and 8-byte aligned then), `size` bytes long, which the
        // caller keeps valid while the trace runs (the API's contract).
        unsafe { crate::border::write_array(addr as *mut u64, &values[..n], st::INVALID_PARAMETER) }
    }

    /// `hsaKmtPmcStopTrace` (primary): trace 0 → 3; KFD closed → 4.
    all fn hsaKmtPmcStopTrace(TraceId: u64) {
        let c = trace_ctx(ctx::primary_ptr(), TraceId, st::INVALID_HANDLE)?;
        perf_of(&c)?.stop_trace(kfd_perf::TraceId(TraceId)).kmt()
    }

    /// `hsaKmtSPMAcquire` (primary): no SPM in the kernel → 11. 5.2.3
    /// has no open check: with KFD closed its node check fails (5).
    all fn hsaKmtSPMAcquire(PreferredNode: u32) {
        let c = ctx::resolve_unless(ctx::primary_ptr(), generation::PROFILE.border.unchecked.spm, st::INVALID_NODE_UNIT)?;
        perf_of(&c)?.spm_acquire(PreferredNode).kmt()
    }

    /// `hsaKmtSPMRelease` (primary); closed as [`hsaKmtSPMAcquire`].
    all fn hsaKmtSPMRelease(PreferredNode: u32) {
        let c = ctx::resolve_unless(ctx::primary_ptr(), generation::PROFILE.border.unchecked.spm, st::INVALID_NODE_UNIT)?;
        perf_of(&c)?.spm_release(PreferredNode).kmt()
    }

    /// `hsaKmtSPMSetDestBuffer` (primary): NULL `timeout`, `SizeCopied` or
    /// `isSPMDataLoss` → 3; closed as [`hsaKmtSPMAcquire`] (5.2.3 ignores
    /// its failed node check and returns the raw -1 of the ioctl; see
    /// intended-differences.txt).
    all fn hsaKmtSPMSetDestBuffer(PreferredNode: u32, SizeInBytes: u32, timeout: *mut u32, SizeCopied: *mut u32, DestMemoryAddress: *mut c_void, isSPMDataLoss: *mut bool) {
        let c = ctx::resolve_unless(ctx::primary_ptr(), generation::PROFILE.border.unchecked.spm, st::INVALID_NODE_UNIT)?;
        // As C, the node is checked before any pointer is read.
        c.topology().kmt()?.validate_node(PreferredNode).map_err(|_| st::INVALID_NODE_UNIT)?;
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

    /// `hsaKmtPcSamplingSupport`: 20; KFD < 1.16 → 11; nothing else.
    since62 fn hsaKmtPcSamplingSupport() {
        ctx::primary()?.require_minor(kfd_perf::KFD_MINOR_MIN_PC_SAMPLING).kmt()
    }

    /// `hsaKmtPcSamplingQueryCapabilities`: NULL `size` → 3 (before the
    /// open check); 20; KFD < 1.16 → 11; no snapshot or unknown node → 5;
    /// then the request with the caller's buffer (`sample_info` entries,
    /// or a NULL buffer announcing that count), after which `*size` is
    /// the count the kernel left, whatever the result: ENOSPC → 7,
    /// EINVAL → 3, EOPNOTSUPP → 11, EBUSY → 12; a kernel without the
    /// request (ENOTTY) → 11 or 1
    /// ([`crate::profile::Border::pc_sampling_enotty_not_supported`]).
    since62 fn hsaKmtPcSamplingQueryCapabilities(NodeId: u32, sample_info: *mut c_void, sample_info_sz: u32, size: *mut u32) {
        check_mut(size, st::INVALID_PARAMETER)?;
        let c = ctx::primary()?;
        c.require_minor(kfd_perf::KFD_MINOR_MIN_PC_SAMPLING).kmt()?;
        crate::topology::validate_node(&c, NodeId)?;
        let perf = perf_of(&c)?;
        use kfd_perf::{PcSamplingInfo, SampleInfos};
        let infos = sample_info as *mut PcSamplingInfo;
        let (r, n) = if infos.is_null() {
            perf.pc_sampling_query(NodeId, SampleInfos::CountOnly(sample_info_sz))
        } else {
            // The C header's HsaPcSamplingInfo is packed to 4 bytes, so the
            // caller's array is filled through a buffer of ours. The
            // kernel reports a handful of sampling methods: a larger buffer
            // is offered to it as PC_SAMPLING_MAX_INFOS entries (the same
            // answer), so the allocation stays bounded.
            let n = (sample_info_sz as usize).min(PC_SAMPLING_MAX_INFOS);
            let mut buf = vec![PcSamplingInfo::default(); n];
            let (r, n) = perf.pc_sampling_query(NodeId, SampleInfos::Buffer(&mut buf));
            if r.is_ok() {
                let k = (n as usize).min(buf.len());
                for (i, e) in buf[..k].iter().enumerate() {
                    // SAFETY: the caller's array holds `sample_info_sz`
                    // entries (the C contract), `i` is below that; an
                    // unaligned write, as the C type is packed.
                    unsafe { infos.add(i).write_unaligned(*e) };
                }
            }
            (r, n)
        };
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(size, n, st::INVALID_PARAMETER)? };
        r.kmt()
    }

    /// `hsaKmtPcSamplingCreate`: NULL arguments → 3 (before the open
    /// check); 20; `*traceId` = 0; no snapshot or unknown node → 5; the
    /// kernel's errno table (EINVAL 3, ENOMEM 6, EBUSY 12, else 1). The
    /// kernel may adjust `*sample_info`.
    since62 fn hsaKmtPcSamplingCreate(node_id: u32, sample_info: *mut crate::generation::abi::HsaPcSamplingInfo, traceId: *mut u32) {
        // The header's packed-to-4 struct and the kernel's have one field
        // list (hsakmt-sys and kfd-sys layout tests): the same 40 bytes.
        const _: () = assert!(
            std::mem::size_of::<crate::generation::abi::HsaPcSamplingInfo>()
                == std::mem::size_of::<kfd_perf::PcSamplingInfo>()
        );
        let sample_info = sample_info.cast::<kfd_perf::PcSamplingInfo>();
        if sample_info.is_null() {
            return Err(st::INVALID_PARAMETER);
        }
        check_mut(traceId, st::INVALID_PARAMETER)?;
        let c = ctx::primary()?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(traceId, 0, st::INVALID_PARAMETER)? };
        crate::topology::validate_node(&c, node_id)?;
        // SAFETY: non-NULL (checked); IN/OUT argument, read unaligned as
        // the C type is packed to 4 bytes.
        let mut info = unsafe { sample_info.read_unaligned() };
        let id = perf_of(&c)?.pc_sampling_create(node_id, &mut info).kmt()?;
        // SAFETY: as above.
        unsafe { sample_info.write_unaligned(info) };
        // SAFETY: checked above.
        unsafe { write_out(traceId, id.0, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtPcSamplingDestroy`: trace 0 → 4 (before the open check);
    /// 20; no snapshot or unknown node → 5; a stop (its result ignored),
    /// then the destroy: EINVAL 3, else 1.
    since62 fn hsaKmtPcSamplingDestroy(NodeId: u32, traceId: u32) {
        let (c, trace) = pc_sampling_session(NodeId, traceId)?;
        perf_of(&c)?.pc_sampling_destroy(NodeId, trace).kmt()
    }

    /// `hsaKmtPcSamplingStart`: trace 0 → 4 (before the open check); 20;
    /// node → 5; EINVAL 3, ENOMEM 13, EBUSY 12, EALREADY 22, else 1.
    since62 fn hsaKmtPcSamplingStart(NodeId: u32, traceId: u32) {
        let (c, trace) = pc_sampling_session(NodeId, traceId)?;
        perf_of(&c)?.pc_sampling_start(NodeId, trace).kmt()
    }

    /// `hsaKmtPcSamplingStop`: trace 0 → 4 (before the open check); 20;
    /// node → 5; EINVAL 3, EALREADY 22, else 1.
    since62 fn hsaKmtPcSamplingStop(NodeId: u32, traceId: u32) {
        let (c, trace) = pc_sampling_session(NodeId, traceId)?;
        perf_of(&c)?.pc_sampling_stop(NodeId, trace).kmt()
    }

    /// `hsaKmtGetClockCountersCtx`: 20; NULL → 3; bad node → 5. One
    /// sample, or the best of several (the newest library:
    /// [`crate::profile::Border::precise_clock_counters`]).
    ctx fn hsaKmtGetClockCountersCtx(ctx: *mut HsaKFDContext, NodeId: u32, Counters: *mut HsaClockCounters) {
        let c = ctx::resolve(ctx)?;
        check_mut(Counters, st::INVALID_PARAMETER)?;
        let p = perf_of(&c)?;
        let cc = if generation::PROFILE.border.precise_clock_counters {
            p.clock_counters_precise(NodeId)
        } else {
            p.clock_counters(NodeId)
        }
        .kmt()?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(Counters, clock_out(cc), st::INVALID_PARAMETER) }
    }

    /// `hsaKmtGetClockCountersPreciseCtx` (kfd-rs; the C library has only
    /// the legacy form): 20; NULL → 3; bad node → 5; on a GPU node the
    /// best of four samples (the one whose request took least time), on a
    /// CPU node one, whatever
    /// [`crate::profile::Border::precise_clock_counters`] says for
    /// `hsaKmtGetClockCounters`.
    ctx fn hsaKmtGetClockCountersPreciseCtx(ctx: *mut HsaKFDContext, NodeId: u32, Counters: *mut HsaClockCounters) {
        let c = ctx::resolve(ctx)?;
        check_mut(Counters, st::INVALID_PARAMETER)?;
        let cc = perf_of(&c)?.clock_counters_precise(NodeId).kmt()?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(Counters, clock_out(cc), st::INVALID_PARAMETER) }
    }
}

/// The C record of one clock sample.
fn clock_out(cc: kfd_perf::ClockCounters) -> HsaClockCounters {
    HsaClockCounters {
        GPUClockCounter: cc.gpu,
        CPUClockCounter: cc.cpu,
        SystemClockCounter: cc.system,
        SystemClockFrequencyHz: cc.system_frequency_hz,
    }
}

forward! {
    /// `hsaKmtPmcGetCounterProperties`.
    all fn hsaKmtPmcGetCounterProperties(NodeId: u32, CounterProperties: *mut *mut HsaCounterProperties) => hsaKmtPmcGetCounterPropertiesCtx;
    /// `hsaKmtPmcRegisterTrace`.
    all fn hsaKmtPmcRegisterTrace(NodeId: u32, NumberOfCounters: u32, Counters: *mut HsaCounter, TraceRoot: *mut HsaPmcTraceRoot) => hsaKmtPmcRegisterTraceCtx;
    /// `hsaKmtPmcUnregisterTrace`.
    all fn hsaKmtPmcUnregisterTrace(NodeId: u32, TraceId: u64) => hsaKmtPmcUnregisterTraceCtx;
    /// `hsaKmtPmcAcquireTraceAccess`.
    all fn hsaKmtPmcAcquireTraceAccess(NodeId: u32, TraceId: u64) => hsaKmtPmcAcquireTraceAccessCtx;
    /// `hsaKmtPmcReleaseTraceAccess`.
    all fn hsaKmtPmcReleaseTraceAccess(NodeId: u32, TraceId: u64) => hsaKmtPmcReleaseTraceAccessCtx;
    /// `hsaKmtGetClockCounters`.
    all fn hsaKmtGetClockCounters(NodeId: u32, Counters: *mut HsaClockCounters) => hsaKmtGetClockCountersCtx;
    /// `hsaKmtGetClockCountersPrecise` (2026 upstream; not in the 7.2
    /// header). Upstream checks the node against the snapshot before the
    /// open check; with KFD closed ours is 20 first.
    newest fn hsaKmtGetClockCountersPrecise(NodeId: u32, Counters: *mut HsaClockCounters) => hsaKmtGetClockCountersPreciseCtx;
}

#[cfg(test)]
mod tests {
    use super::*;
    use kfd_perf::pmc::Asic;

    #[test]
    fn counter_table_c_layout() {
        let p = Asic::Vega.counter_properties();
        let b = counter_table_bytes(&p);
        assert_eq!(b.len(), 8 + 24 * p.blocks.len() + 32 * p.num_counters());
        let u32_at = |o: usize| u32::from_ne_bytes(b[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_ne_bytes(b[o..o + 8].try_into().unwrap());
        assert_eq!(u32_at(0), 20); // NumBlocks
        assert_eq!(u32_at(4), 158); // NumConcurrent
        assert_eq!(u32_at(8), hc::HSA_PROFILEBLOCK_AMD_CB.Data1);
        assert_eq!(b[20..24], hc::HSA_PROFILEBLOCK_AMD_CB.Data4[4..]);
        assert_eq!(u32_at(24), 438); // Blocks[0].NumCounters
        assert_eq!(u32_at(28), 7); // Blocks[0].NumConcurrent
        let c0 = 32; // Blocks[0].Counters[0]
        assert_eq!(u32_at(c0), 2); // NONPRIV_IMMEDIATE
        assert_eq!(u64_at(c0 + 4), 0); // CounterId
        assert_eq!(u32_at(c0 + 12), 64);
        assert_eq!(u64_at(c0 + 16), u64::MAX);
        assert_eq!(u32_at(c0 + 24), 1); // Global
        assert_eq!(u32_at(c0 + 28), 0); // BlockIndex CB
        let b1 = c0 + 32 * 438; // Blocks[1] follows Counters[437]
        assert_eq!(u32_at(b1), hc::HSA_PROFILEBLOCK_AMD_CPF.Data1);
        assert_eq!(u32_at(b1 + 16), 32);
        assert_eq!(u32_at(b1 + 24 + 28), BlockId::Cpf as u32);
    }

    #[test]
    fn every_table_block_has_its_own_uuid() {
        let mut seen = std::collections::BTreeSet::new();
        for b in BlockId::ALL {
            let u = block_uuid(b);
            assert_eq!(u == HSA_UUID::default(), b == BlockId::Cpc, "{b:?}");
            assert!(seen.insert((u.Data1, u.Data2, u.Data3, u.Data4)), "{b:?}");
        }
    }
}
