//! The shader machine's speed, on gfx90a (wave64) and gfx1100 (wave32):
//! VALU lane-instructions per second on one
//! core (a loop of dependent `v_fma_f32`, in hipcc's float mode and with
//! denormals flushed, then eight VALU instructions one by one), a memory-bound kernel's
//! lane-instructions per second on one core (`c[i] = a[i] + b[i]`), and
//! the wall time of a 1M-element vector add on every core. A plain
//! `main` (`cargo bench -p kfd-gpu --bench shader`, or `cargo xtask bench
//! --group shader`); kernels are assembled with Debian's llvm-mc 19.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::*;
use kfd_gpu::mem::FlatMemory;
use kfd_gpu::shader::dispatch::prop;
use kfd_gpu::shader::{self, CodeCache, Dispatch, KernelCode, Limits, Stats, Target};

/// 32 FMAs per iteration over four independent chains, `s4` iterations.
fn valu_kernel(iterations: u32) -> String {
    let mut s = format!(
        "s_mov_b32 s4, {iterations}\n\
         v_mov_b32 v1, 1.0\nv_mov_b32 v2, 0.5\nv_mov_b32 v3, 0.25\n\
         v_mov_b32 v4, 1.0\nv_mov_b32 v5, 1.0\nv_mov_b32 v6, 1.0\n\
         loop:\n"
    );
    for k in 0..32 {
        let d = [1, 4, 5, 6][k % 4];
        s.push_str(&format!("v_fma_f32 v{d}, v{d}, v2, v3\n"));
    }
    s.push_str(
        "s_sub_u32 s4, s4, 1\ns_cmp_lg_u32 s4, 0\ns_cbranch_scc1 loop\n\
         s_load_dwordx2 s[6:7], s[0:1], 0x0\ns_waitcnt lgkmcnt(0)\n\
         v_add_f32 v1, v1, v4\nv_add_f32 v5, v5, v6\nv_add_f32 v1, v1, v5\n\
         v_lshlrev_b32 v7, 2, v0\nglobal_store_dword v7, v1, s[6:7]\ns_endpgm\n",
    );
    s
}

/// 32 scalar adds per iteration, `s4` iterations: the cost of the
/// interpreter's loop around cheap instructions.
fn salu_kernel(iterations: u32) -> String {
    let mut s = format!("s_mov_b32 s4, {iterations}\ns_mov_b32 s5, 0\nloop:\n");
    for _ in 0..32 {
        s.push_str("s_add_u32 s5, s5, 3\n");
    }
    s.push_str("s_sub_u32 s4, s4, 1\ns_cmp_lg_u32 s4, 0\ns_cbranch_scc1 loop\ns_endpgm\n");
    s
}

/// 32 copies of the VALU instruction `op` per iteration, `s4`
/// iterations; v1, v2 and v8..v11 hold lane-varying integers, v6 and v7
/// floats.
fn op_kernel(op: &str, iterations: u32) -> String {
    let mut s = format!(
        "s_mov_b32 s4, {iterations}\n\
         v_mov_b32 v1, v0\nv_add_u32 v2, 7, v0\nv_mov_b32 v8, v0\nv_mov_b32 v9, 1.0\n\
         v_mov_b32 v10, v0\nv_mov_b32 v11, 0\nv_mov_b32 v6, 1.0\nv_mov_b32 v7, 0.5\n\
         loop:\n"
    );
    for _ in 0..32 {
        s.push_str(op);
        s.push('\n');
    }
    s.push_str("s_sub_u32 s4, s4, 1\ns_cmp_lg_u32 s4, 0\ns_cbranch_scc1 loop\ns_endpgm\n");
    s
}

/// The VALU instructions [`op_kernel`] times one by one.
const OPS: [&str; 8] = [
    "v_xor_b32 v8, v1, v8",
    "v_add_u32_e64 v8, v1, v8",
    "v_add3_u32 v8, v1, v8, v2",
    "v_mul_f32 v9, v6, v9",
    "v_fma_f32 v9, v6, v7, v9",
    "v_add_f64 v[10:11], v[10:11], v[6:7]",
    "v_cmp_gt_u32 s[8:9], v8, v1",
    "v_mov_b32_dpp v8, v1 row_shr:1 row_mask:0xf bank_mask:0xf",
];

/// `c[i] = a[i] + b[i]` with the kernel arguments a, b, c at s[0:1].
const VECTOR_ADD: &str = "
    s_load_dwordx4 s[4:7], s[0:1], 0x0
    s_load_dwordx2 s[8:9], s[0:1], 0x10
    s_lshl_b32 s3, s2, 8
    v_add_u32 v0, s3, v0
    v_lshlrev_b32 v0, 2, v0
    s_waitcnt lgkmcnt(0)
    global_load_dword v1, v0, s[4:5]
    global_load_dword v2, v0, s[6:7]
    s_waitcnt vmcnt(0)
    v_add_f32 v1, v1, v2
    global_store_dword v0, v1, s[8:9]
    s_endpgm
";

/// `COMPUTE_PGM_RSRC1` float mode of hipcc's gfx9 kernels: f32 and
/// f16/f64 denormals kept (FLOAT_DENORM_MODE 3 and 3), DX10 clamp, IEEE.
const HIPCC_MODE: u32 = 0xf << 16 | 1 << 21 | 1 << 23;

/// A GPU the bench runs on: its target and wave size.
#[derive(Clone, Copy)]
struct Gpu {
    target: Target,
    lanes: u32,
}

/// gfx90a (wave64) and gfx1100 (wave32, the descriptor's wave32 bit).
const GPUS: [Gpu; 2] = [
    Gpu {
        target: Target::Gfx90a,
        lanes: 64,
    },
    Gpu {
        target: Target::Gfx1100,
        lanes: 32,
    },
];

impl Gpu {
    /// `asm` in this GPU's spelling: gfx11 names the non-carry add
    /// `v_add_nc_u32`, and a wave32 compare writes one SGPR.
    fn spell(self, asm: &str) -> String {
        if self.target != Target::Gfx1100 {
            return asm.to_string();
        }
        asm.replace("v_add_u32", "v_add_nc_u32")
            .replace("v_cmp_gt_u32 s[8:9]", "v_cmp_gt_u32 s8")
    }

    fn assemble(self, asm: &str) -> Vec<u32> {
        assemble(self.target, &self.spell(asm))
    }
}

fn run(
    gpu: Gpu,
    mem: &FlatMemory,
    code: &[u32],
    grid: u32,
    wg: u16,
    workers: usize,
) -> (Stats, Duration) {
    run_mode(gpu, mem, code, grid, wg, workers, HIPCC_MODE)
}

/// [`run`] with the float mode bits of `rsrc1` given.
fn run_mode(
    gpu: Gpu,
    mem: &FlatMemory,
    code: &[u32],
    grid: u32,
    wg: u16,
    workers: usize,
    rsrc1: u32,
) -> (Stats, Duration) {
    for (k, w) in code.iter().enumerate() {
        mem.store(CODE + 4 * k as u64, *w);
    }
    let wave32 = if gpu.lanes == 32 {
        prop::WAVEFRONT_SIZE32
    } else {
        0
    };
    let d = Dispatch {
        target: gpu.target,
        code: KernelCode {
            entry: CODE,
            rsrc1,
            rsrc2: 2 << 1 | 1 << 7,
            properties: prop::KERNARG_SEGMENT_PTR | wave32,
            ..KernelCode::default()
        },
        grid: [grid, 1, 1],
        workgroup: [wg, 1, 1],
        group_segment_size: 0,
        private_segment_size: 0,
        kernarg: KERNARG,
        packet: 0,
        queue: 0,
        dispatch_id: 0,
        shared_base: SHARED_BASE,
        private_base: PRIVATE_BASE,
        mem,
        limits: Limits {
            workers,
            ..Limits::default()
        },
        stop: &|| false,
        clock: &|| 0,
        realtime: &|| 0,
    };
    let cache = CodeCache::new();
    let t = Instant::now();
    let s = shader::run(&d, &cache).unwrap_or_else(|e| panic!("{e}"));
    (s, t.elapsed())
}

/// The best of `reps` runs.
fn best(reps: usize, mut f: impl FnMut() -> (Stats, Duration)) -> (Stats, Duration) {
    (0..reps)
        .map(|_| f())
        .min_by_key(|(_, d)| *d)
        .unwrap_or_default()
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    for gpu in GPUS {
        println!("{:?} (wave{}):", gpu.target, gpu.lanes);
        bench(gpu, quick);
    }
}

/// Every measurement on `gpu`; the waves and workgroups are the same
/// count of waves on both wave sizes.
fn bench(gpu: Gpu, quick: bool) {
    let reps = if quick { 1 } else { 5 };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let lanes = f64::from(gpu.lanes);
    let wave = gpu.lanes as u16;

    // VALU: 8 waves, each 32 FMAs per iteration.
    let iterations = if quick { 200 } else { 2000 };
    let code = gpu.assemble(&valu_kernel(iterations));
    let mem = memory();
    mem.store::<u64>(KERNARG, DATA);
    let fmas = 8.0 * 32.0 * f64::from(iterations) * lanes;
    for (mode, rsrc1) in [("denormals kept", HIPCC_MODE), ("flushed", 0)] {
        let (s, t) = best(reps, || {
            run_mode(gpu, &mem, &code, gpu.lanes * 8, wave, 1, rsrc1)
        });
        println!(
            "valu (v_fma_f32 loop, 1 core, {mode:>14}): {:8.3e} lane-instructions/s ({:.3e} FMA lanes/s, {} instructions in {:.1} ms)",
            s.instructions as f64 * lanes / t.as_secs_f64(),
            fmas / t.as_secs_f64(),
            s.instructions,
            t.as_secs_f64() * 1e3
        );
    }

    // One instruction at a time (8 waves, hipcc's float mode).
    for op in OPS {
        let code = gpu.assemble(&op_kernel(op, iterations / 4));
        let (s, t) = best(reps, || run(gpu, &mem, &code, gpu.lanes * 8, wave, 1));
        println!(
            "  {:<58} {:8.3e} lane-instructions/s",
            gpu.spell(op),
            s.instructions as f64 * lanes / t.as_secs_f64()
        );
    }

    // The interpreter loop: cheap scalar instructions.
    let code = gpu.assemble(&salu_kernel(iterations));
    let (s, t) = best(reps, || run(gpu, &mem, &code, gpu.lanes * 8, wave, 1));
    println!(
        "salu (s_add_u32 loop, 1 core):      {:8.3e} wave-instructions/s ({:.1} ns each)",
        s.instructions as f64 / t.as_secs_f64(),
        t.as_secs_f64() * 1e9 / s.instructions as f64
    );

    // Memory-bound and the 1M vector add.
    let n: u32 = if quick { 1 << 16 } else { 1 << 20 };
    let bytes = u64::from(n) * 4;
    let mem = FlatMemory::new(MEM_BASE, DATA - MEM_BASE + 3 * bytes + 4096);
    let (a, b, c) = (DATA, DATA + bytes, DATA + 2 * bytes);
    for i in 0..u64::from(n) {
        mem.store::<u32>(a + 4 * i, (i as f32).to_bits());
        mem.store::<u32>(b + 4 * i, (0.5 * i as f32).to_bits());
    }
    mem.store::<u64>(KERNARG, a);
    mem.store::<u64>(KERNARG + 8, b);
    mem.store::<u64>(KERNARG + 16, c);
    let code = gpu.assemble(VECTOR_ADD);
    let (s, t) = best(reps, || run(gpu, &mem, &code, n, 256, 1));
    println!(
        "memory (vector add, 1 core):        {:8.3e} lane-instructions/s ({:.1} ms for {n} elements)",
        s.instructions as f64 * lanes / t.as_secs_f64(),
        t.as_secs_f64() * 1e3
    );
    let (_, t) = best(reps, || run(gpu, &mem, &code, n, 256, cores));
    println!(
        "vector add of {n} elements, {cores} cores: {:.1} ms wall",
        t.as_secs_f64() * 1e3
    );
    for i in [0u64, 1, u64::from(n) / 2, u64::from(n) - 1] {
        let got = f32::from_bits(mem.load::<u32>(c + 4 * i));
        assert_eq!(got, 1.5 * i as f32, "c[{i}]");
    }
}
