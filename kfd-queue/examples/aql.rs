//! Creates an AQL compute queue on a simulated GPU and shows what the
//! library set up for it: the queue and doorbell, the ring and the
//! read/write pointers the queue owns, the EOP buffer and the context
//! save/restore area sized for the GPU generation.
//!
//! ```text
//! cargo run -p kfd-queue --example aql            # simulated MI210 (gfx90a)
//! cargo run -p kfd-queue --example aql -- mi300x  # gfx942
//! ```

use std::sync::Arc;

use kfd_event::Events;
use kfd_fmm::{Fmm, FmmOptions};
use kfd_queue::{AqlQueue, Queues, AQL_PACKET_SIZE};
use kfd_sys::{DeviceFile, Driver};
use kfd_topology::Topology;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let preset = std::env::args().nth(1).unwrap_or_else(|| "mi210".into());
    let sim = kfd_sim::Sim::preset(&preset)?;
    let topology = Arc::new(Topology::snapshot(&sim)?);
    let driver: Arc<dyn Driver> = Arc::new(sim.clone());
    let kfd = Arc::new(DeviceFile::open_kfd(driver)?);
    let fmm = Arc::new(Fmm::from_topology(
        kfd.clone(),
        &topology,
        FmmOptions::primary(),
    )?);
    let queues = Arc::new(Queues::new(kfd.clone(), topology.clone(), fmm.clone()));

    let gpu = topology.gpu_nodes().next().ok_or("preset has no GPU")?;
    let isa = gpu.isa_version().map(|v| v.name()).unwrap_or_default();
    println!(
        "kfd-sim {preset}: node {} ({isa}, gpu_id {})",
        gpu.id, gpu.gpu_id
    );

    // An AQL queue that owns its ring (1024 packets, 64 KiB) and the
    // amd_queue_t holding its read and write pointers, both in system
    // memory the GPU can reach, as ROCr allocates them.
    let events = Arc::new(Events::new(kfd, Some(topology.clone()), Some(fmm.clone())));
    let aql = AqlQueue::new(&queues, &events, &fmm, gpu.id, 1024)?;
    let queue = aql.queue();
    let res = queue.resource();
    println!(
        "AQL queue {:#x} (kernel queue id {}):",
        res.queue_id.raw(),
        queue.kfd_queue_id()
    );
    println!(
        "  ring        {} packets, {} KiB",
        aql.packets(),
        (u64::from(aql.packets()) * AQL_PACKET_SIZE) >> 10
    );
    println!("  doorbell    {:#x}", res.doorbell);
    println!(
        "  read ptr    {:#x}, write ptr {:#x}",
        res.read_ptr, res.write_ptr
    );
    if let Some((addr, size)) = queue.eop_buffer() {
        println!("  EOP buffer  {addr:#x}, {size} bytes");
    }
    if let Some((addr, cwsr)) = queue.cwsr() {
        println!(
            "  CWSR area   {addr:#x}, {} KiB: {} waves, control stack {} KiB, debugger {} KiB, x{} XCC",
            cwsr.total_size >> 10,
            cwsr.waves,
            cwsr.ctl_stack_size >> 10,
            cwsr.debug_memory_size >> 10,
            cwsr.num_xcc
        );
    }
    let (bits, mask) = queue.cu_mask();
    let enabled: u32 = mask.iter().map(|w| w.count_ones()).sum();
    println!(
        "  CU mask     {enabled} of {bits} bits set; the GPU has {} CUs",
        gpu.compute_units()
    );

    aql.destroy()?;
    println!("destroyed; live queues: {}", queues.live_count());
    Ok(())
}
