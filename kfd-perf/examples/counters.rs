//! Lists the performance counter blocks of a simulated GPU (the C
//! library's per-ASIC tables) and reads its clock counters twice, 100 ms
//! apart, to show the rate of the GPU counter.
//!
//! ```text
//! cargo run -p kfd-perf --example counters            # simulated MI210
//! cargo run -p kfd-perf --example counters -- navi31  # another preset
//! ```

use std::sync::Arc;
use std::time::Duration;

use kfd_perf::Perf;
use kfd_sys::{DeviceFile, Driver};
use kfd_topology::Topology;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let preset = std::env::args().nth(1).unwrap_or_else(|| "mi210".into());
    let sim = kfd_sim::Sim::preset(&preset)?;
    let topology = Topology::snapshot(&sim)?;
    let driver: Arc<dyn Driver> = Arc::new(sim.clone());
    let perf = Perf::from_topology(Arc::new(DeviceFile::open_kfd(driver)?), &topology);

    let gpu = topology.gpu_nodes().next().ok_or("preset has no GPU")?.id;
    let gfx = perf.nodes()[gpu as usize].gfx_version.name();
    let props = perf.counter_properties(gpu)?;
    println!(
        "kfd-sim {preset}: node {gpu} ({gfx}): {} counter blocks, {} counters, {} can count at once",
        props.blocks.len(),
        props.num_counters(),
        props.num_concurrent
    );
    for b in &props.blocks {
        println!(
            "  {:<8} {:>4} counters, {:>2} at once",
            format!("{:?}", b.block),
            b.counters.len(),
            b.num_concurrent
        );
    }

    let hz = perf.wallclock_frequency(gpu)?;
    let a = perf.clock_counters(gpu)?;
    std::thread::sleep(Duration::from_millis(100));
    let b = perf.clock_counters(gpu)?;
    let gpu_ticks = b.gpu - a.gpu;
    let system_ns = b.system - a.system;
    println!("clock counters 100 ms apart:");
    println!("  GPU    {} -> {} (+{gpu_ticks} ticks)", a.gpu, b.gpu);
    println!(
        "  system {} -> {} (+{system_ns} ns at {} Hz)",
        a.system, b.system, a.system_frequency_hz
    );
    println!(
        "  the GPU counter runs at {:.1} MHz",
        gpu_ticks as f64 / system_ns as f64 * 1e3
    );
    if hz == 0 {
        // `Perf::from_topology` has no wall clock frequency: the snapshot
        // does not carry DRM's `gpu_counter_freq` (see `PerfNode`).
        println!("  node wall-clock frequency: unknown (0) from a topology snapshot");
    } else {
        println!("  node wall-clock frequency: {:.1} MHz", hz as f64 / 1e6);
    }
    Ok(())
}
