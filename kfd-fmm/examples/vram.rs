//! Allocates host-visible VRAM on a simulated GPU, maps it into the GPU's
//! address space, writes a pattern through the CPU mapping, reads it back
//! and shows what the memory manager knows about the pointer.
//!
//! ```text
//! cargo run -p kfd-fmm --example vram            # simulated MI210
//! cargo run -p kfd-fmm --example vram -- mi300x  # another preset
//! ```

use std::sync::Arc;

use kfd_fmm::{Fmm, FmmOptions, MemFlags};
use kfd_sys::{DeviceFile, Driver};
use kfd_topology::{HeapType, Topology};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let preset = std::env::args().nth(1).unwrap_or_else(|| "mi210".into());
    let sim = kfd_sim::Sim::preset(&preset)?;
    let topology = Topology::snapshot(&sim)?;
    let driver: Arc<dyn Driver> = Arc::new(sim.clone());
    let kfd = Arc::new(DeviceFile::open_kfd(driver)?);
    let fmm = Arc::new(Fmm::from_topology(kfd, &topology, FmmOptions::primary())?);

    let gpu = topology.gpu_nodes().next().ok_or("preset has no GPU")?;
    let vram = gpu.memory_size(HeapType::FRAME_BUFFER_PUBLIC)
        + gpu.memory_size(HeapType::FRAME_BUFFER_PRIVATE);
    println!(
        "kfd-sim {preset}: node {} (gpu_id {}), {} MiB VRAM, {} MiB available",
        gpu.id,
        gpu.gpu_id,
        vram >> 20,
        fmm.available_memory(gpu.id)? >> 20
    );

    // 2 MiB of VRAM the CPU can reach; unmapped and freed when `buf` drops.
    let size = 2 << 20;
    let buf = fmm.alloc_buffer(gpu.id, size, 0, MemFlags::NON_PAGED | MemFlags::HOST_ACCESS)?;
    let before = fmm.object_count();
    // The GPU sees VRAM at its CPU address (`map` returns an alternate
    // GPU address only for user pointers).
    buf.map()?;
    println!(
        "allocated {} KiB at {:#x}, mapped to the GPU",
        size >> 10,
        buf.addr()
    );

    let pattern: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 251) as u8).collect();
    buf.write(size - 4096, &pattern)?;
    let mut back = vec![0u8; pattern.len()];
    buf.read(size - 4096, &mut back)?;
    assert_eq!(back, pattern);
    println!(
        "wrote and read back {} bytes at offset {:#x}: equal",
        back.len(),
        size - 4096
    );

    let nodes = fmm.pointer_nodes(buf.addr() + 100)?;
    let info = nodes.info;
    println!("pointer info of {:#x}:", buf.addr() + 100);
    println!(
        "  type {:?}, node {}, flags {:?}",
        info.kind, info.node, info.mem_flags
    );
    println!(
        "  CPU {:#x}, GPU {:#x}, {} KiB, mapped on nodes {:?}",
        info.cpu_address,
        info.gpu_address,
        info.size >> 10,
        nodes.mapped
    );
    println!(
        "  {} MiB available after the allocation",
        fmm.available_memory(gpu.id)? >> 20
    );

    drop(buf);
    assert_eq!(fmm.object_count(), before - 1);
    println!(
        "freed: {} MiB available again",
        fmm.available_memory(gpu.id)? >> 20
    );
    Ok(())
}
