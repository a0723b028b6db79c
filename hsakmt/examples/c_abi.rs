//! The C ABI of libhsakmt, called from Rust in one process on a simulated
//! machine: what a C program linked with our `libhsakmt.so.1` does, with
//! the hsakmt functions linked in from the rlib and the primary context
//! given a kfd-sim driver instead of `/dev/kfd`.
//!
//! (A C program reaches the simulator through the LD_PRELOAD library
//! instead; see the crate README.)
//!
//! ```text
//! cargo run -p hsakmt --example c_abi            # simulated MI210
//! cargo run -p hsakmt --example c_abi -- mi300x  # another preset
//! ```

use std::ffi::c_void;
use std::sync::Arc;

use hsakmt::border::Status;
use hsakmt::generation::abi::{
    HsaMemFlags, HsaNodeProperties, HsaPointerInfo, HsaSystemProperties, HsaVersionInfo,
};
use hsakmt::memory::{
    hsaKmtAllocMemory, hsaKmtFreeMemory, hsaKmtMapMemoryToGPU, hsaKmtQueryPointerInfo,
    hsaKmtUnmapMemoryToGPU,
};
use hsakmt::openclose::{hsaKmtCloseKFD, hsaKmtGetVersion, hsaKmtOpenKFD};
use hsakmt::topology::{
    hsaKmtAcquireSystemProperties, hsaKmtGetNodeProperties, hsaKmtReleaseSystemProperties,
};

/// `Ok` for `HSAKMT_STATUS_SUCCESS`, else an error naming the call.
fn check(call: &str, status: Status) -> Result<(), String> {
    match status.0 {
        0 => Ok(()),
        s => Err(format!("{call} returned HSAKMT_STATUS {s}")),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let preset = std::env::args().nth(1).unwrap_or_else(|| "mi210".into());
    kfd_context::primary::set_driver(Arc::new(kfd_sim::Sim::preset(&preset)?))?;

    let mut version = HsaVersionInfo::default();
    let mut system = HsaSystemProperties::default();
    // SAFETY: no arguments / valid out-pointers to local structs.
    unsafe {
        check("hsaKmtOpenKFD", hsaKmtOpenKFD())?;
        check("hsaKmtGetVersion", hsaKmtGetVersion(&mut version))?;
        check(
            "hsaKmtAcquireSystemProperties",
            hsaKmtAcquireSystemProperties(&mut system),
        )?;
    }
    println!(
        "kfd-sim {preset}: KFD {}.{}, {} nodes",
        version.KernelInterfaceMajorVersion, version.KernelInterfaceMinorVersion, system.NumNodes
    );

    let mut gpu = None;
    for node in 0..system.NumNodes {
        let mut p = HsaNodeProperties::default();
        // SAFETY: `p` is a valid out-pointer of this ABI generation's layout.
        check("hsaKmtGetNodeProperties", unsafe {
            hsaKmtGetNodeProperties(node, &mut p)
        })?;
        let name: String =
            char::decode_utf16(p.MarketingName.iter().copied().take_while(|&c| c != 0))
                .map(|c| c.unwrap_or('?'))
                .collect();
        if p.NumFComputeCores > 0 {
            let e = p.EngineId;
            println!(
                "  node {node}: GPU gfx{}{}{:x} \"{name}\", {} SIMDs, {} MHz",
                e.Major(),
                e.Minor(),
                e.Stepping(),
                { p.NumFComputeCores },
                { p.MaxEngineClockMhzFCompute }
            );
            gpu.get_or_insert(node);
        } else {
            println!("  node {node}: CPU \"{name}\", {} cores", p.NumCPUCores);
        }
    }
    let gpu = gpu.ok_or("preset has no GPU")?;

    // 1 MiB of host-visible VRAM on the first GPU, mapped, written through
    // the CPU pointer, queried, unmapped, freed.
    let size = 1 << 20;
    let mut flags = HsaMemFlags::default();
    flags.set_NonPaged(1);
    flags.set_HostAccess(1);
    let mut addr: *mut c_void = std::ptr::null_mut();
    let mut info = HsaPointerInfo::default();
    // SAFETY: valid out-pointers; `addr` is the allocation hsaKmtAllocMemory
    // returned, host accessible and `size` bytes long, until it is freed.
    unsafe {
        check(
            "hsaKmtAllocMemory",
            hsaKmtAllocMemory(gpu, size, flags, &mut addr),
        )?;
        check(
            "hsaKmtMapMemoryToGPU",
            hsaKmtMapMemoryToGPU(addr, size, std::ptr::null_mut()),
        )?;
        std::ptr::write_bytes(addr.cast::<u8>(), 0xa5, size as usize);
        check(
            "hsaKmtQueryPointerInfo",
            hsaKmtQueryPointerInfo(addr, &mut info),
        )?;
    }
    // The C structs are packed as in hsakmttypes.h: copy fields out.
    let (bytes, node, gpu_va, mapped) =
        ({ info.SizeInBytes }, { info.Node }, { info.GPUAddress }, {
            info.NMappedNodes
        });
    println!(
        "hsaKmtAllocMemory: {} KiB at {addr:p} on node {node}, GPU address {gpu_va:#x}, mapped on {mapped} node(s)",
        bytes >> 10
    );
    // SAFETY: `addr` is live and mapped; after the free nothing uses it.
    unsafe {
        check("hsaKmtUnmapMemoryToGPU", hsaKmtUnmapMemoryToGPU(addr))?;
        check("hsaKmtFreeMemory", hsaKmtFreeMemory(addr, size))?;
        check(
            "hsaKmtReleaseSystemProperties",
            hsaKmtReleaseSystemProperties(),
        )?;
        check("hsaKmtCloseKFD", hsaKmtCloseKFD())?;
        // Closed: every call now reports KERNEL_IO_CHANNEL_NOT_OPENED (20).
        println!(
            "after hsaKmtCloseKFD: hsaKmtGetVersion -> {}",
            hsaKmtGetVersion(&mut version).0
        );
    }
    Ok(())
}
