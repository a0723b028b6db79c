//! What ROCr does at start-up and what a debugger does next, on a
//! simulated GPU: runtime enable, the debugger interface version, then
//! attaching the debugger (DBG_TRAP enable) and a device snapshot.
//!
//! ```text
//! cargo run -p kfd-debug --example runtime            # simulated MI210
//! cargo run -p kfd-debug --example runtime -- mi300x  # another preset
//! ```

use std::sync::Arc;

use kfd_debug::Debug;
use kfd_sys::{kfd, DeviceFile, Driver};
use kfd_topology::Topology;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let preset = std::env::args().nth(1).unwrap_or_else(|| "mi210".into());
    let sim = kfd_sim::Sim::preset(&preset)?;
    let topology = Topology::snapshot(&sim)?;
    let driver: Arc<dyn Driver> = Arc::new(sim.clone());
    let file = Arc::new(DeviceFile::open_kfd(driver)?);
    // `true`: this is the process's primary context, the only one that
    // may debug.
    let debug = Debug::from_topology(file, true, &topology);

    let (major, minor) = debug.kfd_version()?;
    println!("kfd-sim {preset}: KFD ioctl interface {major}.{minor} (DBG_TRAP since 1.13)");
    debug.check_runtime_debug_support()?;
    println!("every GPU's firmware supports the debugger");

    let caps = debug.runtime_enable(0, true)?;
    println!(
        "runtime enabled: capabilities {:#x}, GPU core dumps {}",
        caps.0,
        if caps.supports_core_dump() {
            "supported"
        } else {
            "not supported"
        }
    );

    // 5.2.3's trap version request was thunk-private; current kernels
    // (and the simulator) do not have it.
    match debug.kernel_debug_trap_version() {
        Ok((major, minor)) => println!("debug trap version {major}.{minor} (5.2.3 request)"),
        Err(e) => {
            println!("debug trap version (5.2.3's private request, gone from current kernels): {e}")
        }
    }

    let info = debug.enable(kfd::KFD_EC_MASK_QUEUE)?;
    println!(
        "debugger attached: runtime state {} (enabled = {}), trap temporaries set up: {}",
        info.runtime_state,
        kfd::DEBUG_RUNTIME_STATE_ENABLED,
        info.ttmp_setup
    );
    for dev in debug.device_snapshot(0)? {
        println!(
            "  device gpu_id {}: gfx target version {}, {} XCC(s), capability {:#x}",
            dev.gpu_id, dev.gfx_target_version, dev.num_xcc, dev.capability
        );
    }
    debug.disable()?;
    debug.runtime_disable()?;
    println!("debugger detached, runtime disabled");
    Ok(())
}
