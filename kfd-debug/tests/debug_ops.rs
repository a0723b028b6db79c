//! Every kfd-debug operation against a fake KFD (tests/mock): success
//! paths, refusal on secondary contexts, unknown nodes, bad arguments and
//! kernel errors, each with its cause.

mod mock;

use hsakmt_sys::newest::{
    HSA_DBG_WATCH_ALL, HSA_DBG_WAVEMODE_BROADCAST_PROCESS, HSA_DBG_WAVEOP_HALT,
};
use kfd_debug::{
    AddressWatchPoint, Debug, DebugNode, DebugRules, DebugTrapRequest, Error,
    MAX_ALLOWED_NUM_POINTS,
};
use kfd_sys::kfd;
use kfd_sys::testing::Cause;
use kfd_sys::Errno;
use mock::{MockKfd, ANY_OP};

const GPU: u32 = 0x1234;

fn nodes() -> Vec<DebugNode> {
    vec![DebugNode::cpu(8), DebugNode::gpu(GPU, 416, true)]
}

fn primary(minor: u32) -> (std::sync::Arc<MockKfd>, Debug) {
    let m = mock::new(1, minor);
    let d = Debug::new(m.open(), true, nodes());
    (m, d)
}

fn status(e: &Error) -> String {
    e.cause()
}

#[test]
fn runtime_enable_disable_round_trip() {
    let (m, d) = primary(17);
    d.check_runtime_debug_support().unwrap();
    let caps = d.runtime_enable(0xdead_0000, true).unwrap();
    assert!(caps.supports_core_dump());
    assert_eq!(d.runtime_capabilities().unwrap(), caps);
    let info = d.core_runtime_info().unwrap();
    assert_eq!(info.r_debug, 0xdead_0000);
    assert_eq!(info.ttmp_setup, 1);
    assert_eq!(info.runtime_state, kfd::DEBUG_RUNTIME_STATE_ENABLED);
    assert_eq!(
        m.state.lock().unwrap().runtime,
        Some((
            0xdead_0000,
            kfd::KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK | kfd::KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK
        ))
    );
    // A second enable: the kernel says EBUSY -> UNAVAILABLE (12).
    let e = d.runtime_enable(0xdead_0000, false).unwrap_err();
    assert_eq!(e, Error::RuntimeBusy);
    assert_eq!(status(&e), "RuntimeBusy");
    assert_eq!(
        d.core_runtime_info().unwrap().runtime_state,
        kfd::DEBUG_RUNTIME_STATE_ENABLED_BUSY
    );
    d.runtime_disable().unwrap();
    assert_eq!(m.state.lock().unwrap().runtime, None);
    assert_eq!(
        d.core_runtime_info().unwrap().runtime_state,
        kfd::DEBUG_RUNTIME_STATE_DISABLED
    );
    // GET_VERSION was asked once and cached.
    assert_eq!(m.calls().iter().filter(|c| c.0 == 0x01).count(), 1);
}

#[test]
fn runtime_enable_checks_in_c_order() {
    // Secondary first: no ioctl at all.
    let m = mock::new(1, 17);
    let d = Debug::new(m.open(), false, nodes());
    assert_eq!(
        d.runtime_enable(0, false).unwrap_err(),
        Error::SecondaryContext
    );
    assert_eq!(
        status(&d.runtime_disable().unwrap_err()),
        "SecondaryContext"
    );
    assert!(m.calls().is_empty());

    // A GPU node without debugger firmware (CPU nodes are skipped, APUs
    // are checked).
    let m = mock::new(1, 17);
    let mut n = nodes();
    n[1].debug_supported_firmware = false;
    let d = Debug::new(m.open(), true, n);
    assert_eq!(
        d.runtime_enable(0, false).unwrap_err(),
        Error::FirmwareUnsupported { node: 1 }
    );
    let apu = DebugNode {
        gpu_id: 7,
        cpu_cores: 4,
        simd_count: 32,
        debug_supported_firmware: false,
    };
    assert!(!apu.is_cpu_only());
    let d = Debug::new(m.open(), true, vec![apu]);
    assert_eq!(
        status(&d.check_runtime_debug_support().unwrap_err()),
        "FirmwareUnsupported"
    );

    // KFD 1.12: NOT_SUPPORTED, no RUNTIME_ENABLE issued.
    let (m, d) = primary(12);
    let e = d.runtime_enable(0, false).unwrap_err();
    assert_eq!(
        e,
        Error::KfdTooOld {
            major: 1,
            minor: 12,
            required_minor: 13
        }
    );
    assert_eq!(status(&e), "KfdTooOld");
    assert!(!m.calls().iter().any(|c| c.0 == 0x25));

    // Any other kernel error: ERROR.
    let (m, d) = primary(17);
    m.fail(0x25, ANY_OP, Errno::EINVAL);
    let e = d.runtime_enable(0, false).unwrap_err();
    assert_eq!(status(&e), "Kernel");
    assert_eq!(e.errno(), Some(Errno::EINVAL));
    assert_eq!(d.runtime_capabilities().unwrap().0, 0);
}

#[test]
fn version_query_failure_is_not_supported() {
    let (m, d) = primary(17);
    m.fail(0x01, ANY_OP, Errno::EIO);
    assert_eq!(
        status(&d.check_runtime_debug_support().unwrap_err()),
        "VersionQuery"
    );
}

#[test]
fn known_version_skips_the_query() {
    let m = mock::new(1, 17);
    let d = Debug::with_kfd_version(m.open(), true, nodes(), 1, 17);
    d.check_runtime_debug_support().unwrap();
    assert!(m.calls().is_empty());
}

#[test]
fn every_debug_entry_point_refuses_a_secondary_context() {
    let m = mock::new(1, 17);
    let d = Debug::new(m.open(), false, nodes());
    assert!(!d.is_primary());
    let results: Vec<Error> = vec![
        d.check_runtime_debug_support().unwrap_err(),
        d.runtime_enable(0, true).map(drop).unwrap_err(),
        d.runtime_disable().unwrap_err(),
        d.runtime_capabilities().map(drop).unwrap_err(),
        d.core_runtime_info().map(drop).unwrap_err(),
        d.enable(0).map(drop).unwrap_err(),
        d.disable().unwrap_err(),
        d.send_runtime_event(0, 1, 0).unwrap_err(),
        d.set_exceptions_enabled(0).unwrap_err(),
        d.set_wave_launch_override(0, 0, 0).map(drop).unwrap_err(),
        d.set_wave_launch_mode(0).unwrap_err(),
        d.suspend_queues(&[1], 0, 0).map(drop).unwrap_err(),
        d.resume_queues(&[1]).map(drop).unwrap_err(),
        d.set_node_address_watch(1, 0x1000, 0, 0)
            .map(drop)
            .unwrap_err(),
        d.clear_node_address_watch(1, 0).unwrap_err(),
        d.set_flags(0).map(drop).unwrap_err(),
        d.query_debug_event(0).map(drop).unwrap_err(),
        d.query_exception_info(GPU, kfd::EC_DEVICE_NEW, false, &mut [0; 8])
            .map(drop)
            .unwrap_err(),
        d.queue_snapshot(0).map(drop).unwrap_err(),
        d.device_snapshot(0).map(drop).unwrap_err(),
        d.get_device_data().map(drop).unwrap_err(),
        d.get_queue_data(true).map(drop).unwrap_err(),
        d.debug_trap_ioctl(
            std::process::id(),
            &mut DebugTrapRequest::Disable { dbg_fd: 0 },
        )
        .map(drop)
        .unwrap_err(),
        d.dbg_register(1).unwrap_err(),
        d.dbg_unregister(1).unwrap_err(),
        d.dbg_wavefront_control(
            1,
            HSA_DBG_WAVEOP_HALT.0,
            HSA_DBG_WAVEMODE_BROADCAST_PROCESS.0,
            0,
            0,
            0,
        )
        .unwrap_err(),
        d.dbg_address_watch(1, &[], None).unwrap_err(),
        d.kernel_debug_trap_version().map(drop).unwrap_err(),
    ];
    for e in results {
        assert_eq!(e, Error::SecondaryContext);
        assert_eq!(status(&e), "SecondaryContext");
    }
    assert!(m.calls().is_empty(), "no request may reach the kernel");
}

#[test]
fn debugger_operations() {
    let (m, d) = primary(17);
    m.state.lock().unwrap().queues = vec![3, 5];
    d.runtime_enable(0x4000, false).unwrap();
    let info = d.enable(kfd::KFD_EC_MASK_QUEUE).unwrap();
    assert_eq!(info.r_debug, 0x4000);
    assert_eq!(info.runtime_state, 1);
    assert_eq!(m.state.lock().unwrap().exceptions, kfd::KFD_EC_MASK_QUEUE);

    d.set_exceptions_enabled(kfd::KFD_EC_MASK_DEVICE).unwrap();
    assert_eq!(m.state.lock().unwrap().exceptions, kfd::KFD_EC_MASK_DEVICE);
    d.send_runtime_event(kfd::kfd_ec_mask(kfd::EC_PROCESS_RUNTIME), 1, 3)
        .unwrap();

    let o = d
        .set_wave_launch_override(kfd::KFD_DBG_TRAP_OVERRIDE_OR, 1, 0xffff)
        .unwrap();
    assert_eq!(o.supported_mask, 0x1ff);
    d.set_wave_launch_mode(kfd::KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT)
        .unwrap();
    assert_eq!(status(&d.set_wave_launch_mode(9).unwrap_err()), "Kernel");

    let s = d.suspend_queues(&[3, 5, 9], 0, 0).unwrap();
    assert_eq!(s.processed, 2);
    assert_eq!(
        s.failed().collect::<Vec<_>>(),
        vec![9 | kfd::KFD_DBG_QUEUE_INVALID_MASK]
    );
    let r = d.resume_queues(&[3, 5]).unwrap();
    assert_eq!(r.processed, 2);
    assert!(m.state.lock().unwrap().suspended.is_empty());

    let id = d
        .set_node_address_watch(1, 0x7000, kfd::KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ALL, 0xfff)
        .unwrap();
    d.clear_node_address_watch(1, id).unwrap();
    assert_eq!(
        status(&d.clear_node_address_watch(1, id).unwrap_err()),
        "Kernel"
    );

    assert_eq!(
        d.set_flags(kfd::KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP).unwrap(),
        0
    );
    assert_eq!(
        d.set_flags(0).unwrap(),
        kfd::KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP
    );

    let ev = d.query_debug_event(0).unwrap();
    assert_eq!(ev.gpu_id, kfd::rocm::KFD_INVALID_GPUID);

    let mut small = [0u8; 4];
    assert_eq!(
        d.query_exception_info(GPU, kfd::EC_DEVICE_NEW, true, &mut small)
            .unwrap(),
        16
    );
    assert_eq!(small, [0xab; 4]);

    let q = d.queue_snapshot(0).unwrap();
    assert_eq!(q.iter().map(|e| e.queue_id).collect::<Vec<_>>(), vec![3, 5]);
    let dev = d.device_snapshot(0).unwrap();
    assert_eq!(dev.len(), 1);
    assert_eq!(dev[0].gpu_id, GPU);
    assert_eq!(d.get_device_data().unwrap(), dev);

    // DbgGetQueueData with suspend: everything suspended, snapshot after.
    let q = d.get_queue_data(true).unwrap();
    assert_eq!(q.len(), 2);
    assert_eq!(m.state.lock().unwrap().suspended, vec![3, 5]);
    assert_eq!(d.get_queue_data(false).unwrap().len(), 2);

    d.disable().unwrap();
    assert!(!m.state.lock().unwrap().debugger_attached);
    // Operations need an attached debugger: the kernel's EINVAL is ERROR.
    assert_eq!(status(&d.set_flags(0).unwrap_err()), "Kernel");
}

#[test]
fn raw_debug_trap_ioctl_success_rule() {
    let (m, d) = primary(17);
    m.state.lock().unwrap().queues = vec![1];
    d.enable(0).unwrap();
    let mut ids = [1u32, 2];
    let mut request = DebugTrapRequest::SuspendQueues {
        exception_mask: 0,
        grace_period: 0,
        queue_ids: &mut ids,
    };
    assert_eq!(
        d.debug_trap_ioctl(std::process::id(), &mut request)
            .unwrap(),
        1
    );
    assert_eq!(ids[1], 2 | kfd::KFD_DBG_QUEUE_INVALID_MASK);
}

#[test]
fn unknown_nodes_and_cpu_nodes() {
    let (m, d) = primary(17);
    d.enable(0).unwrap();
    for e in [
        d.send_runtime_event(0, 7, 0).unwrap_err(),
        d.set_node_address_watch(7, 0, 0, 0).map(drop).unwrap_err(),
        d.clear_node_address_watch(7, 0).unwrap_err(),
        d.dbg_register(7).unwrap_err(),
        d.dbg_unregister(7).unwrap_err(),
        d.dbg_wavefront_control(
            7,
            HSA_DBG_WAVEOP_HALT.0,
            HSA_DBG_WAVEMODE_BROADCAST_PROCESS.0,
            0,
            0,
            0,
        )
        .unwrap_err(),
        d.dbg_address_watch(7, &[], None).unwrap_err(),
    ] {
        assert_eq!(e, Error::InvalidNode(7));
        assert_eq!(status(&e), "InvalidNode");
    }
    // The node-scoped DBG_TRAP operations need a GPU.
    let e = d.set_node_address_watch(0, 0, 0, 0).unwrap_err();
    assert_eq!(e, Error::NotAGpu(0));
    assert_eq!(status(&e), "NotAGpu");
    assert!(!m
        .calls()
        .iter()
        .any(|c| c.1 == kfd::KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH));
}

#[test]
fn v1_debugger_is_refused_by_current_kernels() {
    let (m, d) = primary(17);
    // DbgRegister/Unregister/WavefrontControl/AddressWatch: EPERM -> ERROR.
    for e in [
        d.dbg_register(1).unwrap_err(),
        d.dbg_unregister(1).unwrap_err(),
        d.dbg_wavefront_control(
            1,
            HSA_DBG_WAVEOP_HALT.0,
            HSA_DBG_WAVEMODE_BROADCAST_PROCESS.0,
            0,
            0,
            0,
        )
        .unwrap_err(),
        d.dbg_address_watch(
            1,
            &[AddressWatchPoint {
                mode: HSA_DBG_WATCH_ALL.0,
                address: 0x1000,
                mask: 0,
            }],
            Some(&[0]),
        )
        .unwrap_err(),
    ] {
        assert_eq!(e.errno(), Some(Errno::EPERM));
        assert_eq!(status(&e), "Kernel");
    }
    // CPU nodes pass node validation (gpu_id 0) and reach the kernel.
    assert_eq!(status(&d.dbg_register(0).unwrap_err()), "Kernel");
    // Too many watch points: INVALID_PARAMETER, checked before the ioctl.
    let many = vec![
        AddressWatchPoint {
            mode: HSA_DBG_WATCH_ALL.0,
            address: 0,
            mask: 0
        };
        MAX_ALLOWED_NUM_POINTS + 1
    ];
    let before = m.calls().len();
    assert_eq!(
        status(&d.dbg_address_watch(1, &many, None).unwrap_err()),
        "TooManyWatchPoints"
    );
    assert_eq!(m.calls().len(), before);
    // The event array is appended after the masks as in 5.2.3: one
    // point with a mask is 40 bytes without events, 48 with them.
    let one = [AddressWatchPoint {
        mode: HSA_DBG_WATCH_ALL.0,
        address: 0x1000,
        mask: u64::MAX,
    }];
    m.lock().v1_watch_sizes.clear();
    d.dbg_address_watch(1, &one, None).unwrap_err();
    d.dbg_address_watch(1, &one, Some(&[0x5000])).unwrap_err();
    assert_eq!(m.lock().v1_watch_sizes, [40, 48]);
    // An event array of another length than the points: refused.
    let e = d.dbg_address_watch(1, &one, Some(&[1, 2])).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)));
    assert_eq!(status(&e), "InvalidArgument");
    // 5.2.3's GetKernelDebugTrapVersionInfo: nr 0x82 does not exist.
    let e = d.kernel_debug_trap_version().unwrap_err();
    assert_eq!(e.errno(), Some(Errno::ENOTTY));
    assert_eq!(status(&e), "Kernel");
}

#[test]
fn debugger_ops_need_kfd_1_13() {
    let (m, d) = primary(12);
    for e in [
        d.enable(0).map(drop).unwrap_err(),
        d.disable().unwrap_err(),
        d.get_device_data().map(drop).unwrap_err(),
        d.get_queue_data(false).map(drop).unwrap_err(),
        d.set_flags(0).map(drop).unwrap_err(),
    ] {
        assert_eq!(status(&e), "KfdTooOld");
    }
    assert!(!m.calls().iter().any(|c| c.0 == 0x26));
}

#[test]
fn the_firmware_check_of_6_2_skips_apus() {
    let m = mock::new(1, 17);
    let apu = DebugNode {
        gpu_id: 7,
        cpu_cores: 4,
        simd_count: 32,
        debug_supported_firmware: false,
    };
    let mut dgpu = nodes();
    dgpu[1].debug_supported_firmware = false;
    let skip = DebugRules {
        firmware_check_skips_apus: true,
    };
    let d = Debug::new(m.open(), true, vec![apu]).with_rules(skip);
    d.check_runtime_debug_support().unwrap();
    // A discrete GPU without debugger firmware still fails.
    let d = Debug::new(m.open(), true, dgpu).with_rules(skip);
    assert_eq!(
        status(&d.check_runtime_debug_support().unwrap_err()),
        "FirmwareUnsupported"
    );
}

#[test]
fn queue_data_issues_the_c_librarys_requests() {
    let (m, d) = primary(17);
    m.state.lock().unwrap().queues = vec![3, 5];
    d.enable(0).unwrap();
    let trap = |calls: &[(u8, u32)]| -> Vec<u32> {
        calls
            .iter()
            .filter(|(nr, _)| *nr == kfd::AMDKFD_IOC_DBG_TRAP.nr())
            .map(|(_, op)| *op)
            .collect()
    };
    let before = m.calls().len();
    assert_eq!(d.get_queue_data(true).unwrap().len(), 2);
    let snap = kfd::KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT;
    // Count, fetch, suspend, fetch again into the same buffer.
    assert_eq!(
        trap(&m.calls()[before..]),
        vec![snap, snap, kfd::KFD_IOC_DBG_TRAP_SUSPEND_QUEUES, snap]
    );
    let before = m.calls().len();
    assert_eq!(d.get_queue_data(false).unwrap().len(), 2);
    assert_eq!(trap(&m.calls()[before..]), vec![snap, snap]);
}

#[test]
fn debug_trap_outcome_is_the_c_rule() {
    use kfd_debug::debug_trap_outcome as outcome;
    assert_eq!(outcome(Some(2), Ok(2)).unwrap(), 2);
    assert_eq!(outcome(Some(2), Ok(0)).unwrap(), 0);
    assert!(matches!(
        outcome(Some(2), Ok(3)),
        Err(Error::UnexpectedReturn { value: 3, .. })
    ));
    assert_eq!(outcome(None, Ok(0)).unwrap(), 0);
    assert!(matches!(
        outcome(None, Ok(1)),
        Err(Error::UnexpectedReturn { value: 1, .. })
    ));
    assert_eq!(
        status(&outcome(None, Err(Errno::EINVAL)).unwrap_err()),
        "Kernel"
    );
}
