//! Runs a compiled GPU kernel from safe Rust, without ROCr: loads an
//! AMDGPU code object (`vector_add(a, b, c, n)`, built with Debian's clang
//! for gfx90a and gfx942: `kfd_codeobj::samples`, whose sources and
//! regenerate commands are in kfd-codeobj's `tests/fixtures`), copies its
//! relocated image into GPU memory, builds the kernel arguments from its
//! metadata, dispatches it on an AQL queue with a completion signal and
//! checks every element of the result.
//!
//! ```text
//! cargo run -p kfd-context --example vector_add                 # simulated MI210 (gfx90a)
//! cargo run -p kfd-context --example vector_add -- mi300x       # gfx942
//! cargo run -p kfd-context --example vector_add -- mi210 my.co  # your own vector_add build
//! ```
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use kfd_codeobj::{CodeObject, Dispatch, KernargBuilder};
use kfd_context::Context;
use kfd_event::{Condition, Signal};
use kfd_fmm::{Buffer, MemFlags};
use kfd_queue::{AqlQueue, KernelDispatch};

/// Elements added: not a multiple of the workgroup size, so the last
/// workgroup is partial.
const N: u32 = 100_000;
/// Work-items per workgroup.
const WORKGROUP: u16 = 256;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let preset = args.next().unwrap_or_else(|| "mi210".into());
    let own = args.next().map(std::fs::read).transpose()?;

    let sim = kfd_sim::Sim::preset(&preset)?;
    let ctx = Context::open_secondary(Arc::new(sim))?;
    let topology = ctx.acquire_system_properties()?;
    let gpu = topology.gpu_nodes().next().ok_or("preset has no GPU")?;
    let isa = gpu.isa_version().map(|v| v.name()).unwrap_or_default();
    let bytes = match (&own, isa.as_str()) {
        (Some(file), _) => file.as_slice(),
        (None, "gfx90a") => kfd_codeobj::samples::VECTOR_ADD_GFX90A,
        (None, "gfx942") => kfd_codeobj::samples::VECTOR_ADD_GFX942,
        (None, other) => {
            return Err(format!("no sample code object for {other}: pass one").into());
        }
    };
    let co = CodeObject::parse(bytes)?;
    println!(
        "kfd-sim {preset}: node {} ({isa}); code object for {}",
        gpu.id,
        co.target()
    );

    let (fmm, events, queues) = (ctx.fmm()?, ctx.events()?, ctx.queues()?);
    // Host memory the GPUs can reach, as ROCr places code and arguments.
    let host = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS;
    let alloc = |node: u32, size: u64, flags: MemFlags| -> Result<Buffer, kfd_fmm::FmmError> {
        let b = fmm.alloc_buffer(node, size.next_multiple_of(4096), 0, flags)?;
        b.map()?;
        Ok(b)
    };

    // The code: the image relocated for the buffer's address.
    let code = alloc(0, co.layout().size, host | MemFlags::EXECUTE_ACCESS)?;
    let image = co.load(code.addr())?;
    code.write(0, image.bytes())?;
    let kernel = image.kernel("vector_add")?;
    let metadata = &kernel.kernel.metadata;

    // The data: in VRAM where the CPU can reach all of it (a large BAR),
    // else in system memory.
    let data_node = if gpu.is_large_bar() { gpu.id } else { 0 };
    let len = u64::from(N) * 4;
    let [a, b, c] = [(); 3].map(|()| alloc(data_node, len, host));
    let (a, b, c) = (a?, b?, c?);
    let floats =
        |f: fn(u32) -> f32| -> Vec<u8> { (0..N).flat_map(|i| f(i).to_le_bytes()).collect() };
    a.write(0, &floats(|i| i as f32))?;
    b.write(0, &floats(|i| 0.5 * i as f32 + 1.0))?;

    let mut builder = KernargBuilder::new(metadata);
    builder
        .set_ptr(0, a.addr())?
        .set_ptr(1, b.addr())?
        .set_ptr(2, c.addr())?
        .set_u32(3, N)?;
    let kernarg = builder.build(&Dispatch::linear(N, WORKGROUP))?;
    let kernargs = alloc(0, kernarg.bytes().len() as u64, host)?;
    kernargs.write(0, kernarg.bytes())?;

    let queue = AqlQueue::new(queues, events, fmm, gpu.id, 64)?;
    let done = Signal::new(events, fmm, 1)?;
    let packet = KernelDispatch::new(&code, kernel.descriptor_address - code.addr())?
        .size(&[N], &[WORKGROUP])?
        .segments(
            metadata.group_segment_fixed_size,
            metadata.private_segment_fixed_size,
        )
        .kernargs(&kernargs)
        .completion(&done)
        .build();
    let start = Instant::now();
    queue.submit(&packet)?;
    queue.wait(&done, Condition::Eq, 0, Duration::from_secs(60))?;
    let took = start.elapsed();

    let mut out = vec![0u8; len as usize];
    c.read(0, &mut out)?;
    for (i, v) in out.chunks_exact(4).enumerate() {
        let got = f32::from_le_bytes(v.try_into()?);
        let want = i as f32 + (0.5 * i as f32 + 1.0);
        if got != want {
            return Err(format!("c[{i}] = {got}, expected {want}").into());
        }
    }
    println!(
        "vector_add of {N} floats in {} workgroups of {WORKGROUP}: {took:?}, every element right",
        N.div_ceil(u32::from(WORKGROUP))
    );
    Ok(())
}
