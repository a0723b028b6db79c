//! Every kfd-perf operation against a fake KFD (tests/mock): success
//! paths, unknown nodes, bad arguments and kernel errors, each with its
//! cause.

mod mock;

use std::sync::Arc;

use kfd_perf::pmc::{BlockId, Counter, GfxVersion, ProfileType, COUNTER_FLAG_GLOBAL};
use kfd_perf::{
    Error, KernelOp, PcSamplingInfo, PcSamplingTraceId, Perf, PerfNode, SpmBuffer, TraceId,
    MAX_COUNTERS_PER_TRACE,
};
use kfd_sys::testing::Cause;
use kfd_sys::{kfd, Errno};
use mock::{MockKfd, ANY_OP, GPU};

fn nodes() -> Vec<PerfNode> {
    vec![
        PerfNode::cpu(),
        PerfNode::gpu(GPU, GfxVersion::new(9, 0, 10), 0x740f, 100_000),
        PerfNode::gpu(0x5678, GfxVersion::new(11, 0, 0), 0x744c, 100_000),
    ]
}

fn perf(minor: u32) -> (Arc<MockKfd>, Perf) {
    let m = mock::new(minor);
    let p = Perf::new(m.open(), nodes());
    (m, p)
}

fn st(e: &Error) -> String {
    e.cause()
}

fn counter(block: BlockId, id: u64, kind: ProfileType) -> Counter {
    Counter {
        kind,
        id,
        size_in_bits: 64,
        mask: u64::MAX,
        flags: COUNTER_FLAG_GLOBAL,
        block_index: block as u32,
    }
}

const PRIV: ProfileType = ProfileType::PrivilegedImmediate;
const NONPRIV: ProfileType = ProfileType::NonPrivImmediate;

#[test]
fn counter_properties_per_node() {
    let (m, p) = perf(17);
    let props = p.counter_properties(1).unwrap();
    assert_eq!(props.blocks.len(), 20);
    // Cached: the same allocation comes back.
    assert!(Arc::ptr_eq(&props, &p.counter_properties(1).unwrap()));
    // CPU node and gfx1100: INVALID_PARAMETER; unknown node: INVALID_NODE_UNIT.
    assert_eq!(st(&p.counter_properties(0).unwrap_err()), "NoCounterTable");
    assert_eq!(st(&p.counter_properties(2).unwrap_err()), "NoCounterTable");
    assert_eq!(p.counter_properties(9).unwrap_err(), Error::InvalidNode(9));
    assert_eq!(st(&p.counter_properties(9).unwrap_err()), "InvalidNode");
    assert!(m.calls().is_empty(), "tables need no ioctl");
}

#[test]
fn register_trace_validation_in_c_order() {
    let (_m, p) = perf(17);
    let sq = counter(BlockId::Sq, 4, PRIV);
    assert_eq!(
        st(&p.register_trace(1, &[]).unwrap_err()),
        "InvalidArgument"
    );
    assert_eq!(st(&p.register_trace(9, &[sq]).unwrap_err()), "InvalidNode");
    let too_many = vec![sq; MAX_COUNTERS_PER_TRACE + 1];
    let e = p.register_trace(1, &too_many).unwrap_err();
    assert_eq!(
        e,
        Error::TooManyCounters {
            requested: 513,
            max: 512
        }
    );
    assert_eq!(st(&e), "TooManyCounters");
    // Block index out of range.
    let mut bad = sq;
    bad.block_index = 25;
    assert_eq!(
        st(&p.register_trace(1, &[bad]).unwrap_err()),
        "UnknownBlock"
    );
    // Only non-privileged counters: nothing to trace.
    assert_eq!(
        st(&p
            .register_trace(1, &[counter(BlockId::Sq, 1, NONPRIV)])
            .unwrap_err()),
        "InvalidArgument"
    );
    // A block gfx90a lacks (TCS), and SQ over its 16 slots.
    assert_eq!(
        p.register_trace(1, &[counter(BlockId::Tcs, 1, PRIV)])
            .unwrap_err(),
        Error::UnknownBlock(BlockId::Tcs as u32)
    );
    let e = p.register_trace(1, &vec![sq; 17]).unwrap_err();
    assert_eq!(
        e,
        Error::ConcurrencyExceeded {
            block: BlockId::Sq,
            requested: 17,
            limit: 16
        }
    );
    assert_eq!(st(&e), "ConcurrencyExceeded");
    // A node without a table (the C library dereferences NULL here).
    assert_eq!(
        st(&p.register_trace(2, &[sq]).unwrap_err()),
        "NoCounterTable"
    );
}

#[test]
fn trace_lifecycle() {
    let (_m, p) = perf(17);
    let counters = [
        counter(BlockId::Sq, 4, PRIV),
        counter(BlockId::Sq, 5, PRIV),
        counter(BlockId::Tcc, 3, PRIV),
        counter(BlockId::Sq, 6, NONPRIV), // skipped
    ];
    let root = p.register_trace(1, &counters).unwrap();
    assert_eq!(root.number_of_passes, 1);
    assert_eq!(root.trace_buffer_min_size_bytes, 4096); // 24 bytes, page aligned
    let t = root.trace_id;
    assert_ne!(t.0, 0);

    // Trace id 0, a zero-sized buffer, and an unknown id.
    let bogus = TraceId(0xdead);
    for e in [
        p.unregister_trace(1, TraceId(0)).unwrap_err(),
        p.acquire_trace_access(1, TraceId(0)).unwrap_err(),
        p.release_trace_access(1, TraceId(0)).unwrap_err(),
        p.start_trace(TraceId(0), 4096).unwrap_err(),
        p.query_trace(TraceId(0)).map(drop).unwrap_err(),
        p.stop_trace(TraceId(0)).unwrap_err(),
    ] {
        assert_eq!(e, Error::NullTraceId);
    }
    assert_eq!(st(&p.start_trace(t, 0).unwrap_err()), "InvalidArgument");
    for e in [
        p.unregister_trace(1, bogus).unwrap_err(),
        p.acquire_trace_access(1, bogus).unwrap_err(),
        p.release_trace_access(1, bogus).unwrap_err(),
        p.start_trace(bogus, 4096).unwrap_err(),
        p.query_trace(bogus).map(drop).unwrap_err(),
        p.stop_trace(bogus).unwrap_err(),
    ] {
        assert_eq!(e, Error::UnknownTrace(0xdead));
    }
    // Node checks: acquire checks the node after the trace; unregister
    // checks the trace belongs to the node.
    assert_eq!(
        st(&p.acquire_trace_access(9, t).unwrap_err()),
        "InvalidNode"
    );
    assert_eq!(st(&p.unregister_trace(9, t).unwrap_err()), "InvalidNode");
    assert_eq!(
        p.unregister_trace(0, t).unwrap_err(),
        Error::TraceNodeMismatch {
            trace: t.0,
            node: 0
        }
    );

    // No privileged slots exist for SQ/TCC: UNAVAILABLE (5.2.3).
    let e = p.acquire_trace_access(1, t).unwrap_err();
    assert_eq!(e, Error::PrivilegedSlotsUnavailable(BlockId::Sq));
    assert_eq!(st(&e), "PrivilegedSlotsUnavailable");
    // Start/stop without open counters: ERROR; query before a buffer was
    // given: NO_MEMORY (the C library's buffer check comes first).
    assert_eq!(st(&p.start_trace(t, 4096).unwrap_err()), "TraceNotAcquired");
    assert_eq!(st(&p.stop_trace(t).unwrap_err()), "TraceNotAcquired");
    assert_eq!(
        p.query_trace(t).unwrap_err(),
        Error::TraceBufferTooSmall {
            size: 0,
            needed: 24
        }
    );
    assert_eq!(st(&p.query_trace(t).unwrap_err()), "TraceBufferTooSmall");
    // Release needs no node check and succeeds.
    p.release_trace_access(99, t).unwrap();
    p.unregister_trace(1, t).unwrap();
    assert_eq!(st(&p.unregister_trace(1, t).unwrap_err()), "UnknownTrace");
}

#[test]
fn traces_are_per_context() {
    let (m, p) = perf(17);
    let other = Perf::new(m.open(), nodes());
    let t = p
        .register_trace(1, &[counter(BlockId::Sq, 1, PRIV)])
        .unwrap()
        .trace_id;
    assert_eq!(
        st(&other.unregister_trace(1, t).unwrap_err()),
        "UnknownTrace"
    );
    p.unregister_trace(1, t).unwrap();
}

#[test]
fn clock_counters() {
    let (m, p) = perf(17);
    let c = p.clock_counters(1).unwrap();
    assert_eq!(c.system_frequency_hz, 1_000_000_000);
    assert_eq!(c.gpu, c.cpu / 10);
    assert_eq!(c.system, c.cpu + 7);
    // CPU node: gpu_id 0, GPU counter 0.
    let cpu = p.clock_counters(0).unwrap();
    assert_eq!(cpu.gpu, 0);
    assert!(cpu.cpu > c.cpu);
    assert_eq!(st(&p.clock_counters(9).unwrap_err()), "InvalidNode");

    // Precise: four samples on a GPU node, one on a CPU node.
    let before = m.calls().len();
    let pc = p.clock_counters_precise(1).unwrap();
    assert_eq!(m.calls().len() - before, 4);
    assert_eq!(pc.system, pc.cpu + 7, "fields come from one sample");
    let before = m.calls().len();
    p.clock_counters_precise(0).unwrap();
    assert_eq!(m.calls().len() - before, 1);
    assert_eq!(st(&p.clock_counters_precise(9).unwrap_err()), "InvalidNode");

    m.fail(0x05, ANY_OP, Errno::EINVAL);
    let e = p.clock_counters(1).unwrap_err();
    assert_eq!(
        e,
        Error::Kernel {
            op: KernelOp::GetClockCounters,
            errno: Errno::EINVAL
        }
    );
    assert_eq!(st(&e), "Kernel");
}

#[test]
fn wallclock_frequency() {
    let (_m, p) = perf(17);
    assert_eq!(p.wallclock_frequency(1).unwrap(), 100_000_000);
    assert_eq!(p.wallclock_frequency(0).unwrap(), 0);
    assert_eq!(st(&p.wallclock_frequency(9).unwrap_err()), "InvalidNode");
}

#[test]
fn spm_where_the_kernel_has_none() {
    let (_m, p) = perf(17);
    for e in [
        p.spm_acquire(1).unwrap_err(),
        p.spm_release(1).unwrap_err(),
        // SAFETY: a null buffer; the call fails before any streaming.
        p.spm_set_dest_buffer(1, None, 10).map(drop).unwrap_err(),
    ] {
        assert!(matches!(e, Error::NotImplementedByKernel(_)), "{e:?}");
        assert_eq!(st(&e), "NotImplementedByKernel");
    }
    assert_eq!(st(&p.spm_acquire(9).unwrap_err()), "InvalidNode");
}

#[test]
fn spm_on_a_rocm_kernel() {
    let (m, p) = perf(17);
    m.state.lock().unwrap().spm = true;
    p.spm_acquire(1).unwrap();
    let e = p.spm_acquire(1).unwrap_err();
    assert_eq!(e.errno(), Some(Errno::EBUSY));
    assert_eq!(st(&e), "Kernel");
    let s = p
        .spm_set_dest_buffer(1, Some(SpmBuffer::zeroed(4096)), 10)
        .unwrap();
    assert_eq!(s.bytes_copied, 64);
    assert!(s.has_data_loss);
    assert_eq!(s.timeout_left_ms, 9);
    p.spm_release(1).unwrap();
    // CPU node: gpu_id 0 reaches the kernel, which refuses it.
    assert_eq!(st(&p.spm_acquire(0).unwrap_err()), "Kernel");
}

#[test]
fn pc_sampling_needs_kfd_1_16() {
    let (m, p) = perf(15);
    m.state.lock().unwrap().pc_sampling = true;
    assert_eq!(st(&p.pc_sampling_support().unwrap_err()), "KfdTooOld");
    assert_eq!(
        st(&p.pc_sampling_query_capabilities(1, &mut []).unwrap_err()),
        "KfdTooOld"
    );
}

#[test]
fn pc_sampling_where_the_kernel_has_none() {
    let (_m, p) = perf(17);
    p.pc_sampling_support().unwrap();
    // ENOTTY: QueryCapabilities says NOT_SUPPORTED, Create says ERROR.
    assert_eq!(st(&p.pc_sampling_capabilities(1).unwrap_err()), "Kernel");
    let mut info = PcSamplingInfo {
        interval: 1024,
        ..Default::default()
    };
    assert_eq!(
        st(&p.pc_sampling_create(1, &mut info).unwrap_err()),
        "Kernel"
    );
}

#[test]
fn pc_sampling_session() {
    let (m, p) = perf(17);
    m.state.lock().unwrap().pc_sampling = true;
    // Too small a buffer: BUFFER_TOO_SMALL with the count.
    let mut one = [PcSamplingInfo::default()];
    let e = p.pc_sampling_query_capabilities(1, &mut one).unwrap_err();
    assert_eq!(e, Error::BufferTooSmall { needed: 2 });
    assert_eq!(st(&e), "BufferTooSmall");
    let caps = p.pc_sampling_capabilities(1).unwrap();
    assert_eq!(caps.len(), 2);
    assert_eq!(caps[0].method, kfd::rocm::KFD_IOCTL_PCS_METHOD_HOSTTRAP);
    assert_eq!(
        st(&p.pc_sampling_capabilities(9).unwrap_err()),
        "InvalidNode"
    );
    assert_eq!(st(&p.pc_sampling_capabilities(0).unwrap_err()), "Kernel"); // EINVAL

    let mut info = caps[0];
    assert_eq!(
        st(&p.pc_sampling_create(1, &mut info).unwrap_err()),
        "Kernel"
    ); // interval 0
    info.interval = 1024;
    let t = p.pc_sampling_create(1, &mut info).unwrap();
    assert_eq!(
        st(&p.pc_sampling_create(1, &mut info).unwrap_err()),
        "Kernel"
    ); // EBUSY
    assert_eq!(
        st(&p.pc_sampling_create(9, &mut info).unwrap_err()),
        "InvalidNode"
    );

    p.pc_sampling_start(1, t).unwrap();
    assert_eq!(st(&p.pc_sampling_start(1, t).unwrap_err()), "Kernel"); // EALREADY
    p.pc_sampling_stop(1, t).unwrap();
    assert_eq!(st(&p.pc_sampling_stop(1, t).unwrap_err()), "Kernel");
    p.pc_sampling_start(1, t).unwrap();
    // Destroy stops first.
    p.pc_sampling_destroy(1, t).unwrap();
    assert_eq!(st(&p.pc_sampling_destroy(1, t).unwrap_err()), "Kernel"); // EINVAL
    assert_eq!(st(&p.pc_sampling_start(1, t).unwrap_err()), "Kernel");

    // Trace id 0: INVALID_HANDLE, before the node is looked at.
    let zero = PcSamplingTraceId(0);
    for e in [
        p.pc_sampling_destroy(9, zero).unwrap_err(),
        p.pc_sampling_start(9, zero).unwrap_err(),
        p.pc_sampling_stop(9, zero).unwrap_err(),
    ] {
        assert_eq!(e, Error::InvalidPcSamplingTrace);
        assert_eq!(st(&e), "InvalidPcSamplingTrace");
    }
    assert_eq!(st(&p.pc_sampling_start(9, t).unwrap_err()), "InvalidNode");
}
