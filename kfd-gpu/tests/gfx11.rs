//! gfx1100 (RDNA3) kernels assembled by LLVM 19 run on the shader machine
//! in wave32 and wave64 (the kernel descriptor's wave32 bit selects).

mod common;

use common::{assemble_with, memory, Kernel, DATA, KERNARG};
use kfd_gpu::mem::{FlatMemory, Tlb};
use kfd_gpu::shader::dispatch::prop;
use kfd_gpu::shader::isa::Enc;
use kfd_gpu::shader::{
    self, CodeCache, Dispatch, DispatchError, KernelCode, Limits, Stats, Target,
};

/// `c[i] = a[i] + b[i]` for `i < n`: 32-bit offsets from SGPR bases for
/// the loads, a 64-bit address built with `v_add_co_u32` (VOP3 with a
/// scalar carry-out) and `v_add_co_ci_u32` for the store, a compare and
/// `s_and_saveexec` for the bound. `{vcc}`, `{mask}`, `{saved}` and
/// `{saveexec}` name the wave-size dependent operands.
const VECTOR_ADD: &str = "
  s_load_b128 s[4:7], s[0:1], 0x0
  s_load_b64 s[8:9], s[0:1], 0x10
  s_load_b32 s10, s[0:1], 0x18
  v_and_b32 v0, 0x3ff, v0
  s_waitcnt lgkmcnt(0)
  s_lshl_b32 s3, s2, 8
  v_add_nc_u32 v1, s3, v0
  v_cmp_gt_u32 {vcc}, s10, v1
  {saveexec} {saved}, {vcc}
  s_cbranch_execz .Lend
  v_lshlrev_b32 v2, 2, v1
  global_load_b32 v3, v2, s[4:5]
  global_load_b32 v4, v2, s[6:7]
  s_waitcnt vmcnt(0)
  v_add_nc_u32 v3, v3, v4
  v_mov_b32 v2, 0
  v_lshlrev_b64 v[5:6], 2, v[1:2]
  s_delay_alu instid0(VALU_DEP_1)
  v_add_co_u32 v7, {mask}, s8, v5
  v_add_co_ci_u32_e64 v8, null, s9, v6, {mask}
  global_store_b32 v[7:8], v3, off
.Lend:
  s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)
  s_endpgm
";

const A: u64 = DATA;
const B: u64 = DATA + 0x10_0000;
const C: u64 = DATA + 0x20_0000;

/// The kernel source and `-mattr` for a wave size.
fn vector_add(wave32: bool) -> (String, &'static str) {
    let (vcc, mask, saved, saveexec, attr) = if wave32 {
        ("vcc_lo", "s12", "s11", "s_and_saveexec_b32", "")
    } else {
        (
            "vcc",
            "s[12:13]",
            "s[14:15]",
            "s_and_saveexec_b64",
            "+wavefrontsize64",
        )
    };
    let asm = VECTOR_ADD
        .replace("{vcc}", vcc)
        .replace("{mask}", mask)
        .replace("{saved}", saved)
        .replace("{saveexec}", saveexec);
    (asm, attr)
}

/// A one-dimensional gfx1100 kernel: kernarg pointer in s[0:1], the
/// workgroup id X in s2, wave32 if asked.
fn kernel(wave32: bool, items: u32, wg: u16) -> Kernel {
    let mut k = Kernel::new(Target::Gfx1100, "");
    if wave32 {
        k.properties |= prop::WAVEFRONT_SIZE32;
    }
    k.grid = [items, 1, 1];
    k.workgroup = [wg, 1, 1];
    k
}

fn run_vector_add(wave32: bool, n: u32) -> FlatMemory {
    let mem = memory();
    for i in 0..u64::from(n) + 64 {
        mem.store::<u32>(A + 4 * i, i as u32);
        mem.store::<u32>(B + 4 * i, 1000 * i as u32);
        mem.store::<u32>(C + 4 * i, 0xdead_beef);
    }
    for (k, v) in [A, B, C].into_iter().enumerate() {
        mem.store::<u64>(KERNARG + 8 * k as u64, v);
    }
    mem.store::<u32>(KERNARG + 0x18, n);
    let (asm, attr) = vector_add(wave32);
    let code = assemble_with(Target::Gfx1100, attr, &asm);
    let stats = kernel(wave32, n.next_multiple_of(256), 256)
        .run_code(&mem, &code)
        .unwrap_or_else(|e| panic!("{e}"));
    let per_wave = if wave32 { 32 } else { 64 };
    assert_eq!(
        stats.waves,
        u64::from(n.next_multiple_of(256) / per_wave),
        "waves of {per_wave} lanes"
    );
    mem
}

fn check_vector_add(mem: &FlatMemory, n: u32) {
    for i in 0..u64::from(n) {
        assert_eq!(mem.load::<u32>(C + 4 * i), 1001 * i as u32, "c[{i}]");
    }
    // Past the bound nothing is written.
    for i in u64::from(n)..u64::from(n) + 64 {
        assert_eq!(mem.load::<u32>(C + 4 * i), 0xdead_beef, "c[{i}]");
    }
}

#[test]
fn vector_add_wave32() {
    check_vector_add(&run_vector_add(true, 1000), 1000);
}

#[test]
fn vector_add_wave64() {
    check_vector_add(&run_vector_add(false, 1000), 1000);
}

/// Runs `asm` as one wave of `lanes` work-items storing at `DATA`.
fn run_one(wave32: bool, attr: &str, asm: &str) -> Result<FlatMemory, DispatchError> {
    let mem = memory();
    mem.store::<u64>(KERNARG, DATA);
    let code = assemble_with(Target::Gfx1100, attr, asm);
    let lanes = if wave32 { 32 } else { 64 };
    kernel(wave32, lanes, lanes as u16).run_code(&mem, &code)?;
    Ok(mem)
}

#[test]
fn wave32_masks_are_32_bits() {
    // A compare writes vcc_lo only; v_cmpx writes EXEC only; the
    // saved EXEC of a wave32 is one SGPR.
    let asm = "
      s_load_b64 s[0:1], s[0:1], 0x0
      s_mov_b32 vcc_hi, 0x1234
      s_mov_b32 s5, 0x5678
      v_cmp_gt_u32 vcc_lo, 10, v0
      v_cmp_gt_u32_e64 s4, 20, v0
      s_mov_b32 s6, vcc_lo
      s_mov_b32 s7, exec_lo
      v_cmpx_gt_u32 30, v0
      s_mov_b32 s8, exec_lo
      s_mov_b32 s9, vcc_lo
      v_mov_b32 v1, 0
      v_mov_b32 v2, s6
      v_mov_b32 v3, s4
      v_mov_b32 v4, s5
      v_mov_b32 v5, vcc_hi
      v_mov_b32 v6, s7
      v_mov_b32 v7, s8
      v_mov_b32 v8, s9
      s_waitcnt lgkmcnt(0)
      global_store_b128 v1, v[2:5], s[0:1]
      global_store_b96 v1, v[6:8], s[0:1] offset:16
      s_endpgm
    ";
    let mem = run_one(true, "", asm).unwrap();
    let got: Vec<u32> = (0..7).map(|k| mem.load::<u32>(DATA + 4 * k)).collect();
    assert_eq!(
        got,
        [
            (1 << 10) - 1, // vcc_lo
            (1 << 20) - 1, // s4
            0x5678,        // s5, beside s4, untouched
            0x1234,        // vcc_hi untouched
            u32::MAX,      // exec_lo of 32 lanes
            (1 << 30) - 1, // exec_lo after v_cmpx
            (1 << 10) - 1, // vcc_lo not written by v_cmpx
        ]
    );
}

#[test]
fn what_is_not_modelled_stops_naming_it() {
    // Typed buffer loads are not modelled.
    let e = run_one(
        true,
        "",
        "buffer_load_format_x v1, off, s[4:7], 0\ns_endpgm",
    )
    .err();
    match e {
        Some(DispatchError::IllegalInstruction { enc, what, .. }) => {
            assert_eq!((enc, what.as_str()), (Enc::Mubuf, "buffer_load_format_x"));
        }
        e => panic!("{e:?}"),
    }
    // DPP16's row_share decodes (its mnemonic named) but does not run.
    let e = run_one(
        true,
        "",
        "v_mov_b32_dpp v0, v1 row_share:1 row_mask:0xf bank_mask:0xf\ns_endpgm",
    )
    .err();
    match e {
        Some(DispatchError::IllegalInstruction { enc, what, .. }) => {
            assert_eq!((enc, what.as_str()), (Enc::Vop1, "v_mov_b32"));
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn vop3_literals_and_wave32_lane_wrap() {
    // A VOP3 literal (gfx11 only); lane selects and ds_bpermute
    // addresses wrap at the wave's 32 lanes.
    let asm = "
      s_load_b64 s[0:1], s[0:1], 0x0
      v_add_co_u32 v1, s4, 0x12345, v0
      v_mad_u32_u24 v5, v0, 0x100, 7
      s_mov_b32 s6, 33
      v_readlane_b32 s5, v1, s6
      v_add_nc_u32 v3, 1, v0
      v_lshlrev_b32 v3, 2, v3
      ds_bpermute_b32 v2, v3, v0
      v_mov_b32 v4, s5
      v_lshlrev_b32 v6, 2, v0
      s_waitcnt lgkmcnt(0)
      global_store_b32 v6, v1, s[0:1]
      global_store_b32 v6, v2, s[0:1] offset:128
      global_store_b32 v6, v4, s[0:1] offset:256
      global_store_b32 v6, v5, s[0:1] offset:384
      s_endpgm
    ";
    let mem = run_one(true, "", asm).unwrap();
    let at = |k: u64, l: u64| mem.load::<u32>(DATA + 128 * k + 4 * l);
    for l in 0..32u32 {
        let ll = u64::from(l);
        assert_eq!(at(0, ll), 0x12345 + l, "v_add_co_u32 literal, lane {l}");
        assert_eq!(at(1, ll), (l + 1) % 32, "ds_bpermute_b32, lane {l}");
        assert_eq!(at(2, ll), 0x12345 + 1, "v_readlane_b32 lane 33 = 1");
        assert_eq!(at(3, ll), l * 0x100 + 7, "v_mad_u32_u24 literal, lane {l}");
    }
}

/// `c[i] = a[i] + b[i]`, and a workgroup sum through LDS with barriers,
/// as clang 19 compiles OpenCL C for gfx1100 (no device library: the
/// ids come from builtins).
const OPENCL: &str = r#"
__kernel void vector_add(__global const uint *a, __global const uint *b,
                         __global uint *c, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
           __builtin_amdgcn_workitem_id_x();
  if (i < n)
    c[i] = a[i] + b[i];
}

__kernel void reduce(__global const uint *a, __global uint *out) {
  __local uint s[256];
  uint l = __builtin_amdgcn_workitem_id_x();
  uint g = __builtin_amdgcn_workgroup_id_x() * 256 + l;
  s[l] = a[g] * 3u + (g & 7u);
  for (uint k = 128; k > 0; k >>= 1) {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    if (l < k) s[l] += s[l + k];
  }
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  if (l == 0) out[__builtin_amdgcn_workgroup_id_x()] = s[0];
}
"#;

/// Debian's clang 19.
const CLANG: &str = "/usr/lib/llvm-19/bin/clang";

/// Where a compiled kernel's descriptor goes.
const DESCRIPTOR: u64 = common::MEM_BASE + 0xf_0000;

/// Compiles [`OPENCL`] for gfx1100 and places kernel `name`'s code at
/// `CODE` and its descriptor at [`DESCRIPTOR`] (pointing at the code),
/// as a loader would; the descriptor as the command processor reads it.
fn load_compiled(mem: &FlatMemory, name: &str, wave64: bool) -> KernelCode {
    let mut args = vec![
        "-x",
        "cl",
        "-cl-std=CL1.2",
        "-target",
        "amdgcn-amd-amdhsa",
        "-mcpu=gfx1100",
        "-nogpulib",
        "-O2",
        "-c",
        "-o",
        "-",
        "-",
    ];
    if wave64 {
        args.push("-mwavefrontsize64");
    }
    let src = OPENCL;
    // One kernel per object: the other is dropped so `.text` starts with
    // the one we run and `.rodata` holds its descriptor alone.
    let other = if name == "reduce" {
        "vector_add"
    } else {
        "reduce"
    };
    let start = src.find(&format!("__kernel void {other}(")).unwrap();
    let end = src[start..].find("\n}\n").unwrap() + start + 3;
    let src = format!("{}{}", &src[..start], &src[end..]);
    let obj = common::pipe(CLANG, &args, src.as_bytes());
    let section = |s: &str| {
        common::pipe(
            common::LLVM_OBJCOPY,
            &["-O", "binary", &format!("--only-section={s}"), "-", "-"],
            &obj,
        )
    };
    let (text, rodata) = (section(".text"), section(".rodata"));
    // The descriptor (`<name>.kd`) opens `.rodata`.
    assert!(rodata.len() >= 64, "a kernel descriptor");
    mem.write(common::CODE, &text);
    mem.write(DESCRIPTOR, &rodata[..64]);
    // kernel_code_entry_byte_offset, a relocation in the object.
    mem.store::<u64>(DESCRIPTOR + 16, common::CODE.wrapping_sub(DESCRIPTOR));
    KernelCode::read(&mut Tlb::new(mem), DESCRIPTOR).unwrap()
}

/// Runs a compiled kernel over `items` work-items in groups of 256.
fn run_compiled(mem: &FlatMemory, code: KernelCode, items: u32, lds: u32) -> Stats {
    let d = Dispatch {
        target: Target::Gfx1100,
        code,
        grid: [items, 1, 1],
        workgroup: [256, 1, 1],
        group_segment_size: lds,
        private_segment_size: 0,
        kernarg: KERNARG,
        packet: 0,
        queue: 0,
        dispatch_id: 0,
        shared_base: common::SHARED_BASE,
        private_base: common::PRIVATE_BASE,
        mem,
        limits: Limits::default(),
        stop: &|| false,
        clock: &|| 0,
        realtime: &|| 0,
    };
    shader::run(&d, &CodeCache::new()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn clang_compiled_kernels_run_in_both_wave_sizes() {
    for wave64 in [false, true] {
        let mem = memory();
        let code = load_compiled(&mem, "vector_add", wave64);
        assert_eq!(
            code.properties & prop::WAVEFRONT_SIZE32 == 0,
            wave64,
            "the descriptor's wave32 bit"
        );
        let n = 1000u32;
        for i in 0..u64::from(n) + 64 {
            mem.store::<u32>(A + 4 * i, i as u32);
            mem.store::<u32>(B + 4 * i, 1000 * i as u32);
            mem.store::<u32>(C + 4 * i, 0xdead_beef);
        }
        for (k, v) in [A, B, C].into_iter().enumerate() {
            mem.store::<u64>(KERNARG + 8 * k as u64, v);
        }
        mem.store::<u32>(KERNARG + 0x18, n);
        // Code object v5's hidden_group_size_x, after the four arguments.
        mem.store::<u16>(KERNARG + 0x2c, 256);
        let stats = run_compiled(&mem, code, 1024, 0);
        assert_eq!(stats.waves, if wave64 { 16 } else { 32 });
        check_vector_add(&mem, n);

        let mem = memory();
        let code = load_compiled(&mem, "reduce", wave64);
        let groups = 4u64;
        for i in 0..256 * groups {
            mem.store::<u32>(A + 4 * i, i as u32);
        }
        mem.store::<u64>(KERNARG, A);
        mem.store::<u64>(KERNARG + 8, C);
        run_compiled(&mem, code, 256 * groups as u32, 1024);
        for g in 0..groups {
            let want: u64 = (256 * g..256 * (g + 1)).map(|i| 3 * i + (i & 7)).sum();
            assert_eq!(
                u64::from(mem.load::<u32>(C + 4 * g)),
                want,
                "workgroup {g} (wave64 {wave64})"
            );
        }
    }
}

#[test]
fn vopd_runs_both_operations() {
    // X and Y read their sources before either writes: the second pair
    // swaps v1 and v2 (Y reads X's destination, so Y runs first); a
    // literal serves fmaak's K.
    let asm = "
      s_load_b64 s[0:1], s[0:1], 0x0
      v_dual_mov_b32 v2, 7 :: v_dual_mov_b32 v1, v0
      v_dual_mov_b32 v2, v1 :: v_dual_mov_b32 v1, v2
      v_cvt_f32_u32 v4, v0
      v_mov_b32 v3, v0
      v_dual_fmaak_f32 v6, v4, v4, 0x3f800000 :: v_dual_add_nc_u32 v5, 60, v3
      v_cvt_u32_f32 v6, v6
      v_lshlrev_b32 v0, 2, v0
      s_waitcnt lgkmcnt(0)
      global_store_b32 v0, v1, s[0:1]
      global_store_b32 v0, v2, s[0:1] offset:128
      global_store_b32 v0, v5, s[0:1] offset:256
      global_store_b32 v0, v6, s[0:1] offset:384
      s_endpgm
    ";
    let mem = run_one(true, "", asm).unwrap_or_else(|e| panic!("{e}"));
    let at = |k: u64, l: u64| mem.load::<u32>(DATA + 128 * k + 4 * l);
    for l in 0..32u32 {
        let ll = u64::from(l);
        assert_eq!((at(0, ll), at(1, ll)), (7, l), "swap, lane {l}");
        assert_eq!(at(2, ll), 60 + l, "v_dual_add_nc_u32, lane {l}");
        assert_eq!(at(3, ll), l * l + 1, "v_dual_fmaak_f32, lane {l}");
    }
}

#[test]
fn clocks_read_as_hip_reads_them() {
    // wall_clock64: MSG_RTN_GET_REALTIME; clock64: SHADER_CYCLES (the
    // test dispatch's clocks are 2000 and 1000).
    let asm = "
      s_load_b64 s[0:1], s[0:1], 0x0
      s_sendmsg_rtn_b64 s[2:3], sendmsg(MSG_RTN_GET_REALTIME)
      s_getreg_b32 s4, hwreg(HW_REG_SHADER_CYCLES, 0, 20)
      v_mov_b32 v0, 0
      v_mov_b32 v1, s2
      v_mov_b32 v2, s3
      v_mov_b32 v3, s4
      s_waitcnt lgkmcnt(0)
      global_store_b96 v0, v[1:3], s[0:1]
      s_endpgm
    ";
    let mem = run_one(true, "", asm).unwrap_or_else(|e| panic!("{e}"));
    let got: Vec<u32> = (0..3).map(|k| mem.load::<u32>(DATA + 4 * k)).collect();
    assert_eq!(got, [2000, 0, 1000]);
    // Other returning messages are not modelled.
    let e = run_one(
        true,
        "",
        "s_sendmsg_rtn_b32 s2, sendmsg(MSG_RTN_GET_DOORBELL)\ns_endpgm",
    )
    .err();
    assert!(
        matches!(&e, Some(DispatchError::IllegalInstruction { what, .. }) if what.starts_with("s_sendmsg_rtn_b32")),
        "{e:?}"
    );
}

#[test]
fn dpp16_controls_shared_with_gfx9_run() {
    // quad_perm, row_shr with bound_ctrl (a row's first lane reads 0),
    // row_mirror, on a VOP2 with a DPP source 0.
    let asm = "
      s_load_b64 s[0:1], s[0:1], 0x0
      v_mov_b32_dpp v1, v0 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
      v_mov_b32_dpp v2, v0 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
      v_add_nc_u32_dpp v3, v0, v0 row_mirror row_mask:0xf bank_mask:0xf
      v_lshlrev_b32 v4, 2, v0
      s_waitcnt lgkmcnt(0)
      global_store_b32 v4, v1, s[0:1]
      global_store_b32 v4, v2, s[0:1] offset:128
      global_store_b32 v4, v3, s[0:1] offset:256
      s_endpgm
    ";
    let mem = run_one(true, "", asm).unwrap_or_else(|e| panic!("{e}"));
    let at = |k: u64, l: u32| mem.load::<u32>(DATA + 128 * k + 4 * u64::from(l));
    for l in 0..32u32 {
        assert_eq!(at(0, l), l ^ 1, "quad_perm, lane {l}");
        assert_eq!(
            at(1, l),
            if l % 16 == 0 { 0 } else { l - 1 },
            "row_shr, lane {l}"
        );
        assert_eq!(
            at(2, l),
            (l & !15) + 15 - (l & 15) + l,
            "row_mirror, lane {l}"
        );
    }
}

#[test]
fn true16_operands_name_vgpr_halves() {
    // VOP1/VOP2 16-bit operands: bit 7 of the VGPR field is the half
    // (LLVM's real-true16 syntax); VOP3: op_sel. A 16-bit result keeps
    // the other half of its VGPR.
    let asm = "
      s_load_b64 s[0:1], s[0:1], 0x0
      v_mov_b32 v1, 0x11112222
      v_mov_b32 v2, 0x33334444
      v_mov_b16 v1.h, v2.l
      v_mov_b32 v3, 0x3c004000
      v_mov_b32 v4, 0x12347777
      v_add_f16 v4.h, v3.h, v3.l
      v_mov_b32 v5, 0x55556666
      v_add_nc_u16 v5, v1, v2 op_sel:[1,0,1]
      v_mov_b32 v6, 0x9999aaaa
      v_cvt_f32_f16 v7, v3
      v_lshlrev_b32 v8, 2, v0
      s_waitcnt lgkmcnt(0)
      global_store_b32 v8, v1, s[0:1]
      global_store_b32 v8, v4, s[0:1] offset:128
      global_store_b32 v8, v5, s[0:1] offset:256
      global_store_b32 v8, v7, s[0:1] offset:384
      s_endpgm
    ";
    let mem = run_one(true, "+real-true16", asm).unwrap_or_else(|e| panic!("{e}"));
    let at = |k: u64| mem.load::<u32>(DATA + 128 * k + 4 * 5);
    assert_eq!(at(0), 0x4444_2222, "v_mov_b16 v1.h, v2.l");
    // 1.0 + 2.0 = 3.0 (0x4200) into the high half.
    assert_eq!(at(1), 0x4200_7777, "v_add_f16 v4.h, v3.h, v3.l");
    assert_eq!(at(2), 0x8888_6666, "v_add_nc_u16 op_sel:[1,0,1]");
    assert_eq!(at(3), 2.0f32.to_bits(), "v_cvt_f32_f16 of v3.l");
}

/// Runs one WMMA of `op` (with `mods`) in a wave32: A at `DATA`, B at
/// `DATA + 1024`, C at `DATA + 2048` (32 bytes per lane each, the
/// registers as they are), D (v24, or with `in_place` C's registers)
/// stored at `DATA + 3072`.
fn run_wmma(op: &str, ab_regs: u32, mods: &str, in_place: bool, abc: [&[u32]; 3]) -> Vec<u32> {
    let [a, b, c] = abc;
    let mem = memory();
    mem.store::<u64>(KERNARG, DATA);
    for (base, data) in [(0, a), (1024, b), (2048, c)] {
        for (k, v) in data.iter().enumerate() {
            mem.store::<u32>(DATA + base + 4 * k as u64, *v);
        }
    }
    let last = ab_regs - 1;
    let asm = format!(
        "
      s_load_b64 s[0:1], s[0:1], 0x0
      v_lshlrev_b32 v40, 5, v0
      s_waitcnt lgkmcnt(0)
      global_load_b128 v[0:3], v40, s[0:1]
      global_load_b128 v[4:7], v40, s[0:1] offset:16
      global_load_b128 v[8:11], v40, s[0:1] offset:1024
      global_load_b128 v[12:15], v40, s[0:1] offset:1040
      global_load_b128 v[16:19], v40, s[0:1] offset:2048
      global_load_b128 v[20:23], v40, s[0:1] offset:2064
      v_mov_b32 v24, 0x77777777
      s_waitcnt vmcnt(0)
      {op} v[{d}:{d_last}], v[0:{last}], v[8:{b_last}], v[16:23] {mods}
      global_store_b128 v40, v[{d}:{d3}], s[0:1] offset:3072
      global_store_b128 v40, v[{d4}:{d_last}], s[0:1] offset:3088
      s_endpgm
    ",
        b_last = 8 + last,
        d = if in_place { 16 } else { 24 },
        d3 = if in_place { 19 } else { 27 },
        d4 = if in_place { 20 } else { 28 },
        d_last = if in_place { 23 } else { 31 },
    );
    let code = assemble_with(Target::Gfx1100, "", &asm);
    kernel(true, 32, 32)
        .run_code(&mem, &code)
        .unwrap_or_else(|e| panic!("{op}: {e}"));
    (0..256)
        .map(|k| mem.load::<u32>(DATA + 3072 + 4 * k))
        .collect()
}

/// Lane `l`'s register `r` (8 per lane) of the 16x16 matrix `m` as C/D
/// hold it: element `[2r + l / 16][l % 16]`.
fn cd_layout(m: &[[i32; 16]; 16], f: impl Fn(i32) -> u32) -> Vec<u32> {
    (0..32)
        .flat_map(|l| (0..8).map(move |r| (l, r)))
        .map(|(l, r)| f(m[2 * r + l / 16][l % 16]))
        .collect()
}

#[test]
fn wmma_wave32_products() {
    let a: [[i32; 16]; 16] =
        std::array::from_fn(|i| std::array::from_fn(|k| (i * 3 + k) as i32 % 7 - 3));
    let b: [[i32; 16]; 16] =
        std::array::from_fn(|k| std::array::from_fn(|j| (k + 5 * j) as i32 % 5 - 2));
    let c: [[i32; 16]; 16] =
        std::array::from_fn(|i| std::array::from_fn(|j| (i * 16 + j) as i32 - 100));
    // Lane l holds row l%16 of A and column l%16 of B, element k at
    // `bits * k` from its first register's bit 0.
    let pack = |bits: u32, f: &dyn Fn(usize, usize) -> u32| -> Vec<u32> {
        let per = 32 / bits as usize;
        (0..32)
            .flat_map(|l| (0..8).map(move |r| (l, r)))
            .map(|(l, r)| {
                (0..per)
                    .filter(|e| r * per + e < 16)
                    .map(|e| {
                        (f(l % 16, r * per + e) & ((1u64 << bits) - 1) as u32)
                            << (bits as usize * e)
                    })
                    .fold(0, |x, y| x | y)
            })
            .collect()
    };
    let f16 = |v: i32| u32::from(half_bits(v as f32));
    let want: [[i32; 16]; 16] = std::array::from_fn(|i| {
        std::array::from_fn(|j| c[i][j] + (0..16).map(|k| a[i][k] * b[k][j]).sum::<i32>())
    });
    // f32 += f16 * f16.
    let d = run_wmma(
        "v_wmma_f32_16x16x16_f16",
        8,
        "",
        false,
        [
            &pack(16, &|i, k| f16(a[i][k])),
            &pack(16, &|j, k| f16(b[k][j])),
            &cd_layout(&c, |v| (v as f32).to_bits()),
        ],
    );
    assert_eq!(d, cd_layout(&want, |v| (v as f32).to_bits()), "f32_f16");
    // i32 += i8 (signed, neg_lo[0]) * u8 (B + 2: 0..4, unsigned).
    let want8: [[i32; 16]; 16] = std::array::from_fn(|i| {
        std::array::from_fn(|j| c[i][j] + (0..16).map(|k| a[i][k] * (b[k][j] + 2)).sum::<i32>())
    });
    let d = run_wmma(
        "v_wmma_i32_16x16x16_iu8",
        4,
        "neg_lo:[1,0,0]",
        false,
        [
            &pack(8, &|i, k| a[i][k] as u32),
            &pack(8, &|j, k| (b[k][j] + 2) as u32),
            &cd_layout(&c, |v| v as u32),
        ],
    );
    assert_eq!(d, cd_layout(&want8, |v| v as u32), "i32_iu8");
    // f16 += f16 * f16 in the high halves (op_sel[2]), D in C's
    // registers: their low halves stay.
    let d = run_wmma(
        "v_wmma_f16_16x16x16_f16",
        8,
        "op_sel:[0,0,1]",
        true,
        [
            &pack(16, &|i, k| f16(a[i][k])),
            &pack(16, &|j, k| f16(b[k][j])),
            &cd_layout(&c, |v| f16(v) << 16 | 0x1234),
        ],
    );
    assert_eq!(
        d,
        cd_layout(&want, |v| f16(v) << 16 | 0x1234),
        "f16_f16 op_sel"
    );
}

/// The half-precision bits of `x` (exact for the small integers here).
fn half_bits(x: f32) -> u16 {
    let b = x.to_bits();
    if x == 0.0 {
        return (b >> 16) as u16 & 0x8000;
    }
    let sign = (b >> 16) as u16 & 0x8000;
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    sign | (exp as u16) << 10 | ((b >> 13) & 0x3ff) as u16
}

/// Sets SGPRs `s[n:n+3]` to a gfx11 buffer resource: `base`, `stride`,
/// `records` and OOB_SELECT `oob`.
fn vsharp(n: u32, base: u64, stride: u32, records: u32, oob: u32) -> String {
    format!(
        "s_mov_b32 s{}, {:#x}\ns_mov_b32 s{}, {:#x}\ns_mov_b32 s{}, {records}\ns_mov_b32 s{}, {:#x}\n",
        n,
        base as u32,
        n + 1,
        (base >> 32) as u32 | stride << 16,
        n + 2,
        n + 3,
        oob << 28
    )
}

#[test]
fn mubuf_gfx11_loads_stores_atomics_and_ranges() {
    let mem = memory();
    mem.store::<u64>(KERNARG, DATA);
    for k in 0..256u64 {
        mem.store::<u32>(DATA + 4 * k, 0x1000 + k as u32);
    }
    // Raw (OOB 3) 64 bytes at DATA; raw 128 bytes at +1024 for stores;
    // raw 4 bytes at +2048 for an atomic; structured (OOB 1) stride 8,
    // 10 records, at DATA.
    let asm = format!(
        "{}{}{}{}
      v_lshlrev_b32 v2, 2, v0
      buffer_load_b32 v1, v2, s[4:7], 0 offen
      buffer_store_b32 v1, v2, s[8:11], 0 offen
      v_mov_b32 v5, 0
      v_mov_b32 v4, 1
      buffer_atomic_add_u32 v4, v5, s[12:15], 0 offen glc
      buffer_load_b32 v6, v0, s[16:19], 0 idxen offset:4
      s_mov_b32 s3, 8
      buffer_load_b64 v[7:8], v2, s[4:7], s3 offen
      s_load_b64 s[0:1], s[0:1], 0x0
      s_waitcnt vmcnt(0) lgkmcnt(0)
      global_store_b32 v2, v4, s[0:1] offset:3072
      global_store_b32 v2, v6, s[0:1] offset:3200
      global_store_b32 v2, v7, s[0:1] offset:3328
      global_store_b32 v2, v8, s[0:1] offset:3456
      s_endpgm
    ",
        vsharp(4, DATA, 0, 64, 3),
        vsharp(8, DATA + 1024, 0, 128, 3),
        vsharp(12, DATA + 2048, 0, 4, 3),
        vsharp(16, DATA, 8, 10, 1),
    );
    let code = assemble_with(Target::Gfx1100, "", &asm);
    kernel(true, 32, 32)
        .run_code(&mem, &code)
        .unwrap_or_else(|e| panic!("{e}"));
    let at = |off: u64, l: u64| mem.load::<u32>(DATA + off + 4 * l);
    let mut olds: Vec<u32> = (0..32).map(|l| at(3072, l)).collect();
    olds.sort_unstable();
    assert_eq!(olds, (0..32).collect::<Vec<u32>>(), "atomic olds");
    assert_eq!(at(2048, 0), 32, "atomic sum");
    for l in 0..32u64 {
        let raw = if l < 16 { 0x1000 + l as u32 } else { 0 };
        assert_eq!(at(1024, l), raw, "raw load then store, lane {l}");
        let structured = if l < 10 { 0x1000 + 2 * l as u32 + 1 } else { 0 };
        assert_eq!(at(3200, l), structured, "structured idxen, lane {l}");
        // SOFFSET (8) is not part of the range check: dwords at offset
        // 4l + 8 and 4l + 12, in range while 4l (+4) < 64.
        let d = |k: u64| {
            if 4 * l + 4 * k < 64 {
                0x1000 + l as u32 + 2 + k as u32
            } else {
                0
            }
        };
        assert_eq!(
            (at(3328, l), at(3456, l)),
            (d(0), d(1)),
            "soffset, lane {l}"
        );
    }
}

#[test]
fn dpp8_permlane16_cmpstore_and_float_atomics() {
    let mem = memory();
    mem.store::<u64>(KERNARG, DATA);
    // Float atomics' target words.
    mem.store::<u32>(DATA + 2048, 100f32.to_bits());
    mem.store::<u32>(DATA + 2052, 5f32.to_bits());
    mem.store::<u32>(DATA + 2056, 10);
    let asm = "
      s_load_b64 s[0:1], s[0:1], 0x0
      v_mov_b32_dpp v1, v0 dpp8:[7,6,5,4,3,2,1,0]
      s_mov_b32 s4, 0x01234567
      s_mov_b32 s5, 0x89abcdef
      v_permlane16_b32 v3, v0, s4, s5
      v_permlanex16_b32 v4, v0, s4, s5
      v_lshlrev_b32 v10, 2, v0
      v_add_nc_u32 v11, 100, v0
      ds_store_b32 v10, v0
      v_and_b32 v12, -2, v0
      ds_cmpstore_rtn_b32 v5, v10, v11, v12
      ds_load_b32 v6, v10
      v_cvt_f32_u32 v13, v0
      v_mov_b32 v14, 0
      v_mov_b32 v15, 1
      s_waitcnt lgkmcnt(0)
      global_atomic_min_f32 v14, v13, s[0:1] offset:2048
      global_atomic_max_f32 v14, v13, s[0:1] offset:2052
      global_atomic_csub_u32 v7, v14, v15, s[0:1] offset:2056 glc
      global_store_b32 v10, v1, s[0:1]
      global_store_b32 v10, v3, s[0:1] offset:128
      global_store_b32 v10, v4, s[0:1] offset:256
      global_store_b32 v10, v5, s[0:1] offset:384
      global_store_b32 v10, v6, s[0:1] offset:512
      s_endpgm
    ";
    let code = assemble_with(Target::Gfx1100, "", asm);
    let mut k = kernel(true, 32, 32);
    k.lds = 128;
    k.run_code(&mem, &code).unwrap_or_else(|e| panic!("{e}"));
    let at = |k: u64, l: u32| mem.load::<u32>(DATA + 128 * k + 4 * u64::from(l));
    let sel = |l: u32| (0x89ab_cdef_0123_4567u64 >> (4 * (l % 16)) & 15) as u32;
    for l in 0..32u32 {
        assert_eq!(at(0, l), (l & !7) | (7 - (l & 7)), "dpp8, lane {l}");
        assert_eq!(at(1, l), (l & !15) | sel(l), "permlane16, lane {l}");
        assert_eq!(at(2, l), ((l & !15) ^ 16) | sel(l), "permlanex16, lane {l}");
        // DATA0 (100 + l) is the new value, DATA1 (l & !1) the compare:
        // even lanes match and store, odd ones keep l.
        assert_eq!(at(3, l), l, "ds_cmpstore_rtn_b32 old, lane {l}");
        let stored = if l % 2 == 0 { 100 + l } else { l };
        assert_eq!(at(4, l), stored, "ds_cmpstore_rtn_b32 stored, lane {l}");
    }
    assert_eq!(
        mem.load::<u32>(DATA + 2048),
        0f32.to_bits(),
        "global_atomic_min_f32"
    );
    assert_eq!(
        mem.load::<u32>(DATA + 2052),
        31f32.to_bits(),
        "global_atomic_max_f32"
    );
    // 32 lanes subtract 1 from 10, clamped at 0.
    assert_eq!(mem.load::<u32>(DATA + 2056), 0, "global_atomic_csub_u32");
}
