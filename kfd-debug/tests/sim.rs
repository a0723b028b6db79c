//! kfd-debug on kfd-sim: the simulated amdkfd's RUNTIME_ENABLE and
//! DBG_TRAP model, reached through a topology snapshot of a preset.

use std::sync::Arc;

use kfd_debug::{Debug, Error};
use kfd_sim::Sim;
use kfd_sys::testing::Cause;
use kfd_sys::{kfd, DeviceFile, Driver};
use kfd_topology::Topology;

fn open(preset: &str, primary: bool) -> (Arc<Sim>, Debug) {
    let sim = Arc::new(Sim::preset(preset).unwrap());
    let topology = Topology::snapshot(&*sim).unwrap();
    let driver: Arc<dyn Driver> = sim.clone();
    let file = Arc::new(DeviceFile::open_kfd(driver).unwrap());
    (sim, Debug::from_topology(file, primary, &topology))
}

#[test]
fn runtime_enable_and_debugger_ops_on_mi210() {
    let (_sim, d) = open("mi210", true);
    assert_eq!(d.nodes().len(), 2);
    d.check_runtime_debug_support().unwrap();
    d.runtime_enable(0x1000, true).unwrap();
    let e = d.runtime_enable(0x1000, true).unwrap_err();
    assert_eq!(e.cause(), "RuntimeBusy", "{e}");

    let info = d.enable(0).unwrap();
    assert_eq!(info.r_debug, 0x1000);
    assert_eq!(info.runtime_state, kfd::DEBUG_RUNTIME_STATE_ENABLED);
    assert_eq!(info.ttmp_setup, 1);

    let devices = d.device_snapshot(0).unwrap();
    assert_eq!(devices.len(), 1);
    assert_eq!(devices[0].gpu_id, d.nodes()[1].gpu_id);
    assert!(d.queue_snapshot(0).unwrap().is_empty());
    assert!(d.get_queue_data(true).unwrap().is_empty());

    d.set_exceptions_enabled(kfd::KFD_EC_MASK_QUEUE).unwrap();
    d.set_wave_launch_mode(kfd::KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT)
        .unwrap();
    d.set_wave_launch_mode(kfd::KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL)
        .unwrap();
    let o = d
        .set_wave_launch_override(kfd::KFD_DBG_TRAP_OVERRIDE_OR, 0, 0)
        .unwrap();
    assert_ne!(o.supported_mask, 0);
    // Requesting an unsupported trap bit: the kernel's EACCES is ERROR.
    let e = d
        .set_wave_launch_override(kfd::KFD_DBG_TRAP_OVERRIDE_OR, 0, !o.supported_mask)
        .unwrap_err();
    assert_eq!(e.cause(), "Kernel", "{e}");
    let id = d
        .set_node_address_watch(1, 0x10_0000, kfd::KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ALL, 0)
        .unwrap();
    d.clear_node_address_watch(1, id).unwrap();
    assert_eq!(
        d.set_node_address_watch(9, 0, 0, 0).unwrap_err(),
        Error::InvalidNode(9)
    );
    assert_eq!(
        d.set_node_address_watch(0, 0, 0, 0).unwrap_err(),
        Error::NotAGpu(0)
    );
    let prev = d.set_flags(0).unwrap();
    assert_eq!(prev, 0);
    let s = d.suspend_queues(&[42], 0, 0).unwrap();
    assert_eq!(s.processed, 0);
    assert_eq!(s.failed().count(), 1);
    d.query_debug_event(0).map(drop).unwrap_or_else(|e| {
        // No pending event: the kernel's EAGAIN-free answer is an error.
        assert_eq!(e.cause(), "Kernel", "{e}");
    });
    d.disable().unwrap();
    d.runtime_disable().unwrap();
}

#[test]
fn v1_entry_points_on_the_sim() {
    let (_sim, d) = open("mi210", true);
    for e in [
        d.dbg_register(1).unwrap_err(),
        d.dbg_unregister(1).unwrap_err(),
    ] {
        assert_eq!(e.cause(), "Kernel", "{e}");
    }
    assert_eq!(d.dbg_register(5).unwrap_err().cause(), "InvalidNode");
    assert_eq!(d.kernel_debug_trap_version().unwrap_err().cause(), "Kernel");
}

#[test]
fn secondary_context_on_the_sim_refuses() {
    let (_sim, d) = open("mi210", false);
    for e in [
        d.check_runtime_debug_support().unwrap_err(),
        d.runtime_enable(0, false).map(drop).unwrap_err(),
        d.enable(0).map(drop).unwrap_err(),
        d.device_snapshot(0).map(drop).unwrap_err(),
    ] {
        assert_eq!(e, Error::SecondaryContext);
    }
}

#[test]
fn every_preset_supports_runtime_enable_or_says_why() {
    for preset in kfd_sim::presets::NAMES {
        let (_sim, d) = open(preset, true);
        match d.check_runtime_debug_support() {
            Ok(()) => d.runtime_enable(0, false).map(drop).unwrap(),
            Err(e) => assert!(
                matches!(
                    e,
                    Error::FirmwareUnsupported { .. } | Error::KfdTooOld { .. }
                ),
                "{preset}: {e}"
            ),
        }
    }
}
