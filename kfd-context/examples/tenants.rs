//! Four tenants on one simulated MI300X: the primary context and three
//! secondary contexts, each with its own kernel process and GPU address
//! space. Each allocates VRAM, maps it, writes a pattern, and then tries to
//! reach another tenant's buffer — which its own context does not know.
//!
//! `cargo run -p kfd-context --example tenants [-- <preset>]`

use std::sync::Arc;

use kfd_context::{primary, Context};
use kfd_fmm::MemFlags;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let preset = std::env::args().nth(1).unwrap_or_else(|| "mi300x".into());
    let sim = kfd_sim::Sim::preset(&preset)?;
    primary::set_driver(Arc::new(sim.clone()))?;
    let (host, _) = primary::open()?;

    let mut tenants = vec![("primary".to_string(), host)];
    for i in 1..=3 {
        tenants.push((
            format!("secondary-{i}"),
            Context::open_secondary(Arc::new(sim.clone()))?,
        ));
    }

    let mut buffers = Vec::new();
    for (name, ctx) in &tenants {
        let topo = ctx.acquire_system_properties()?;
        let gpu = topo.gpu_nodes().next().ok_or("preset has no GPU")?.id;
        let fmm = ctx.fmm()?;
        let flags = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS | MemFlags::NO_SUBSTITUTE;
        let buf = fmm.alloc_buffer(gpu, 2 << 20, 0, flags)?;
        buf.map()?;
        buf.write(0, name.as_bytes())?;
        println!(
            "{name:12} context {} ({:?}): 2 MiB VRAM on node {gpu} at {:#x}, mapped to the GPU",
            ctx.id(),
            ctx.kind(),
            buf.addr()
        );
        buffers.push(buf);
    }

    println!();
    for (i, (name, ctx)) in tenants.iter().enumerate() {
        let (other, _) = &tenants[(i + 1) % tenants.len()];
        let foreign = buffers[(i + 1) % buffers.len()].addr();
        let fmm = ctx.fmm()?;
        let info = fmm.pointer_info(foreign);
        let map = fmm.map_to_gpu(foreign, 2 << 20);
        let free = fmm.free_memory(foreign);
        println!(
            "{name:12} -> {other}'s buffer: pointer info {}, map {}, free {}",
            outcome(&info),
            outcome(&map),
            outcome(&free)
        );
        // Nobody's context knows another tenant's buffer object, so every
        // use of it is refused. (Through the C ABI, whose primary context
        // takes unknown addresses for SVM memory as the C library does,
        // the primary's map and free would succeed on its own page tables;
        // the other tenant's buffer stays untouched either way.)
        assert!(info.is_err() && map.is_err() && free.is_err());
    }

    let mut out = [0u8; 16];
    for (buf, (name, _)) in buffers.iter().zip(&tenants) {
        buf.read(0, &mut out[..name.len()])?;
        assert_eq!(&out[..name.len()], name.as_bytes());
    }
    println!("\nevery tenant still reads its own data; closing all contexts");
    drop(buffers);
    drop(tenants);
    primary::close()?;
    // The last close keeps the primary for a next open, as the C library
    // does (ContextOptions::keep_after_close); end it here.
    primary::discard_closed();
    let live = sim.live_objects();
    println!("live kernel objects after close: {}", live.processes.len());
    assert!(live.is_empty(), "{live:?}");
    Ok(())
}

fn outcome<T>(r: &Result<T, kfd_fmm::FmmError>) -> String {
    match r {
        Ok(_) => "succeeded".into(),
        Err(e) => format!("refused: {e}"),
    }
}
