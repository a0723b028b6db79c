//! A kernel fills a buffer: 256 work-items in four waves store their
//! global id, run by the shader machine on a flat memory buffer.
//!
//! The code is gfx90a machine code; its source (assembled with Debian's
//! `llvm-mc -triple=amdgcn-amd-amdhsa -mcpu=gfx90a -show-encoding`):
//!
//! ```text
//! s_load_dwordx2 s[4:5], s[0:1], 0x0
//! s_lshl_b32 s3, s2, 6
//! v_and_b32 v1, 0x3ff, v0
//! v_add_u32 v1, s3, v1
//! v_lshlrev_b32 v2, 2, v1
//! s_waitcnt lgkmcnt(0)
//! v_mov_b32 v3, s5
//! v_add_co_u32 v2, vcc, s4, v2
//! v_addc_co_u32 v3, vcc, 0, v3, vcc
//! global_store_dword v[2:3], v1, off
//! s_endpgm
//! ```

use kfd_gpu::mem::FlatMemory;
use kfd_gpu::shader::{self, CodeCache, Dispatch, KernelCode, Limits, Target};

const CODE: &[u32] = &[
    0xc006_0100,
    0x0000_0000,
    0x8e03_8602,
    0x2602_00ff,
    0x0000_03ff,
    0x6802_0203,
    0x2404_0282,
    0xbf8c_c07f,
    0x7e06_0205,
    0x3204_0404,
    0x3806_0680,
    0xdc70_8000,
    0x007f_0102,
    0xbf81_0000,
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mem = FlatMemory::new(0x10_0000, 0x10_0000);
    let (code, kernarg, out) = (0x10_0000, 0x10_8000, 0x11_0000);
    for (k, w) in CODE.iter().enumerate() {
        mem.store(code + 4 * k as u64, *w);
    }
    mem.store::<u64>(kernarg, out);
    let d = Dispatch {
        target: Target::Gfx90a,
        code: KernelCode {
            entry: code,
            // USER_SGPR = 2 (the kernarg pointer), workgroup id X enabled.
            rsrc2: 2 << 1 | 1 << 7,
            properties: 1 << 3,
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
