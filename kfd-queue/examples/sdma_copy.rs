//! Copies memory with a GPU's SDMA engine from safe Rust on a simulated
//! GPU: a host buffer with a pattern goes to VRAM the CPU cannot reach,
//! comes back into a second host buffer, and is compared byte for byte.
//! Each leg ends with the engine completing an HSA signal (an atomic
//! decrement, the event id into the mailbox, a trap) that the host
//! sleeps on.
//!
//! ```text
//! cargo run -p kfd-queue --example sdma_copy          # simulated MI210 (gfx90a)
//! cargo run -p kfd-queue --example sdma_copy -- apu   # gfx902: 4 MiB per packet
//! ```

#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use kfd_event::{Condition, Events, Signal};
use kfd_fmm::{Fmm, FmmOptions, MemFlags};
use kfd_queue::{Queues, SdmaEngine, SdmaQueue};
use kfd_sys::{DeviceFile, Driver};
use kfd_topology::Topology;

/// The copy sizes, an odd one above the 4 MiB of one packet on gfx9
/// parts with a narrow count field.
pub const SIZES: [u64; 3] = [4 << 10, 1 << 20, (16 << 20) + 3];

/// What happened, for the test that runs the same flow.
#[derive(Debug, PartialEq, Eq)]
pub struct Report {
    /// Per size: bytes, and whether they came back unchanged.
    pub copies: Vec<(u64, bool)>,
    /// Queues and events left once everything was dropped.
    pub left: (usize, usize),
}

/// Throughput of `bytes` in `took`, in MiB/s.
fn mib_per_s(bytes: u64, took: Duration) -> f64 {
    bytes as f64 / (1 << 20) as f64 / took.as_secs_f64().max(1e-9)
}

/// The whole flow on simulator preset `preset`, printing each step.
pub fn sdma_copy_demo(preset: &str) -> Result<Report, Box<dyn std::error::Error>> {
    let sim = kfd_sim::Sim::preset(preset)?;
    let topology = Arc::new(Topology::snapshot(&sim)?);
    let driver: Arc<dyn Driver> = Arc::new(sim.clone());
    let kfd = Arc::new(DeviceFile::open_kfd(driver)?);
    let fmm = Arc::new(Fmm::from_topology(
        kfd.clone(),
        &topology,
        FmmOptions::primary(),
    )?);
    let queues = Arc::new(Queues::new(kfd.clone(), topology.clone(), fmm.clone()));
    let events = Arc::new(Events::new(kfd, Some(topology.clone()), Some(fmm.clone())));

    let gpu = topology.gpu_nodes().next().ok_or("preset has no GPU")?;
    let isa = gpu.isa_version().map(|v| v.name()).unwrap_or_default();
    println!("kfd-sim {preset}: node {} ({isa})", gpu.id);

    let queue = SdmaQueue::new(&queues, &events, &fmm, gpu.id, SdmaEngine::Any, 64 << 10)?;
    println!(
        "SDMA queue {:#x}: {} KiB ring, at most {} MiB per COPY_LINEAR",
        queue.queue().id().raw(),
        queue.ring_bytes() >> 10,
        queue.max_copy_bytes() >> 20
    );

    let largest = SIZES.iter().max().copied().unwrap_or(0);
    let alloc = largest.next_multiple_of(4096);
    let host = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
    let (src, dst) = (
        fmm.alloc_buffer(0, alloc, 0, host)?,
        fmm.alloc_buffer(0, alloc, 0, host)?,
    );
    let vram = fmm.alloc_buffer(gpu.id, alloc, 0, MemFlags::NON_PAGED)?;
    for b in [&src, &dst, &vram] {
        b.map()?;
    }
    println!(
        "buffers: host {:#x} and {:#x}, VRAM {:#x} (CPU access: {}), {} KiB each",
        src.addr(),
        dst.addr(),
        vram.addr(),
        vram.is_cpu_accessible(),
        alloc >> 10
    );
    let pattern: Vec<u8> = (0..largest)
        .map(|i| (i.wrapping_mul(0x9e37_79b9) >> 11) as u8)
        .collect();
    src.write(0, &pattern)?;

    // One signal for every leg: the engine takes one off per leg.
    let legs = 2 * SIZES.len() as i64;
    let done = Signal::new(&events, &fmm, legs)?;
    let mut left = legs;
    let mut leg =
        |to: u64, from: u64, bytes: u64| -> Result<Duration, Box<dyn std::error::Error>> {
            let start = Instant::now();
            queue.copy(to, from, bytes)?;
            queue.signal(&done)?;
            left -= 1;
            queue.wait(&done, Condition::Eq, left, Duration::from_secs(60))?;
            Ok(start.elapsed())
        };
    let mut copies = Vec::new();
    for bytes in SIZES {
        let up = leg(vram.addr(), src.addr(), bytes)?;
        let down = leg(dst.addr(), vram.addr(), bytes)?;
        let mut back = vec![0u8; bytes as usize];
        dst.read(0, &mut back)?;
        let same = back[..] == pattern[..bytes as usize];
        println!(
            "{bytes:>9} bytes: host->VRAM {up:>10.2?} ({:.0} MiB/s), VRAM->host {down:>10.2?} \
             ({:.0} MiB/s), {}",
            mib_per_s(bytes, up),
            mib_per_s(bytes, down),
            if same { "equal" } else { "DIFFERENT" }
        );
        copies.push((bytes, same));
    }
    println!(
        "write pointer {} bytes, read pointer {} bytes",
        queue.write_pointer()?,
        queue.read_pointer()?
    );

    drop((queue, done));
    let left = (queues.live_count(), events.live_count());
    println!("dropped: {} queues, {} events left", left.0, left.1);
    Ok(Report { copies, left })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let preset = std::env::args().nth(1).unwrap_or_else(|| "mi210".into());
    let report = sdma_copy_demo(&preset)?;
    if report.copies.iter().any(|(_, same)| !same) {
        return Err("a copy came back different".into());
    }
    Ok(())
}
