//! A kernel fills a buffer: 256 work-items in four waves store their
//! global id, run by the shader machine on a flat memory buffer.
//!
//! The code is [`kfd_gpu::samples::FILL`] (its source is in its docs).

use kfd_gpu::mem::FlatMemory;
use kfd_gpu::samples::{FILL, FILL_PROPERTIES, FILL_RSRC2};
use kfd_gpu::shader::{self, CodeCache, Dispatch, KernelCode, Limits, Target};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mem = FlatMemory::new(0x10_0000, 0x10_0000);
    let (code, kernarg, out) = (0x10_0000, 0x10_8000, 0x11_0000);
    for (k, w) in FILL.iter().enumerate() {
        mem.store(code + 4 * k as u64, *w);
    }
    mem.store::<u64>(kernarg, out);
    let d = Dispatch {
        target: Target::Gfx90a,
        code: KernelCode {
            entry: code,
            rsrc2: FILL_RSRC2,
            properties: FILL_PROPERTIES,
            ..KernelCode::default()
        },
        grid: [256, 1, 1],
        workgroup: [64, 1, 1],
        group_segment_size: 0,
        private_segment_size: 0,
        kernarg,
        packet: 0,
        queue: 0,
        dispatch_id: 0,
        shared_base: 1 << 48,
        private_base: 2 << 48,
        mem: &mem,
        limits: Limits::default(),
        stop: &|| false,
        clock: &|| 0,
        realtime: &|| 0,
    };
    let stats = shader::run(&d, &CodeCache::new())?;
    for i in 0..256u64 {
        assert_eq!(mem.load::<u32>(out + 4 * i), i as u32);
    }
    println!(
        "{} workgroups, {} waves, {} instructions: 256 values stored and checked",
        stats.workgroups, stats.waves, stats.instructions
    );
    Ok(())
}
