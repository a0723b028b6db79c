//! Vector memory and LDS: FLAT, GLOBAL, SCRATCH and MUBUF loads, stores
//! and atomics, and the DS instructions, on kernels that compute their
//! addresses per lane. Expected values come from host arithmetic on the
//! same inputs.

mod common;

use common::*;
use kfd_gpu::mem::FlatMemory;
use kfd_gpu::shader::{DispatchError, Target};

const ALL: [Target; 3] = [Target::Gfx900, Target::Gfx90a, Target::Gfx940];
const CDNA: [Target; 2] = [Target::Gfx90a, Target::Gfx940];

/// Results: slot `k` of lane `l` at `OUT + 256 * k + 4 * l`.
const OUT: u64 = DATA;
/// Inputs: 16 bytes per lane from `IN`, with 64 bytes before and 8 KiB
/// after.
const IN: u64 = DATA + 0x1_0000;

/// The input byte at `a` (a pattern with every sign and value mix).
fn byte(a: u64) -> u8 {
    let j = a.wrapping_sub(IN - 64);
    (j.wrapping_mul(37).wrapping_add(11) ^ (j >> 3)) as u8
}

fn rd16(a: u64) -> u16 {
    u16::from_le_bytes([byte(a), byte(a + 1)])
}

fn rd32(a: u64) -> u32 {
    u32::from_le_bytes([byte(a), byte(a + 1), byte(a + 2), byte(a + 3)])
}

fn fill(mem: &FlatMemory) {
    for a in IN - 64..IN + 64 * 16 + 8192 {
        mem.store::<u8>(a, byte(a));
    }
}

/// s[4:5] = OUT, s[6:7] = IN (kernel arguments 0 and 1), v1 = 4 * lane,
/// v[2:3] = OUT + 4 * lane, v4 = 16 * lane, v[6:7] = IN + 16 * lane.
const PROLOGUE: &str = "
    s_load_dwordx4 s[4:7], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 2, v0
    v_mov_b32 v3, s5
    v_add_co_u32 v2, vcc, s4, v1
    v_addc_co_u32 v3, vcc, 0, v3, vcc
    v_lshlrev_b32 v4, 4, v0
    v_mov_b32 v7, s7
    v_add_co_u32 v6, vcc, s6, v4
    v_addc_co_u32 v7, vcc, 0, v7, vcc
";

/// A kernel of `PROLOGUE` + `body` + `s_endpgm` with the kernel
/// arguments OUT and IN.
/// gfx940 spells GLC (return the pre-op value) `sc0`.
fn kernel(target: Target, body: &str) -> Kernel {
    let body = if target == Target::Gfx940 {
        body.replace(" glc", " sc0")
    } else {
        body.to_string()
    };
    Kernel::new(target, &format!("{PROLOGUE}{body}\n s_endpgm\n"))
}

fn memory_with_inputs() -> FlatMemory {
    let mem = memory();
    mem.store::<u64>(KERNARG, OUT);
    mem.store::<u64>(KERNARG + 8, IN);
    fill(&mem);
    mem
}

/// Runs one wave of `body`; panics on an error.
fn run(target: Target, body: &str) -> FlatMemory {
    let mem = memory_with_inputs();
    kernel(target, body)
        .run(&mem)
        .unwrap_or_else(|e| panic!("{target:?}: {e}"));
    mem
}

/// Result slot `k` of every lane.
fn slot(mem: &FlatMemory, k: u64) -> Vec<u32> {
    (0..64)
        .map(|l| mem.load::<u32>(OUT + 256 * k + 4 * l))
        .collect()
}

fn expect(mem: &FlatMemory, k: u64, f: impl Fn(u64) -> u32, what: &str) {
    let want: Vec<u32> = (0..64).map(f).collect();
    assert_eq!(slot(mem, k), want, "slot {k}: {what}");
}

#[test]
fn global_loads_of_every_width_and_sign() {
    for t in ALL {
        let mem = run(
            t,
            "
            global_load_ubyte v10, v[6:7], off offset:1
            global_load_sbyte v11, v[6:7], off offset:3
            global_load_ushort v12, v[6:7], off offset:2
            global_load_sshort v13, v[6:7], off offset:6
            global_load_dword v14, v[6:7], off offset:4
            global_load_dwordx2 v[16:17], v[6:7], off offset:8
            global_load_dwordx3 v[20:22], v[6:7], off offset:-16
            global_load_dwordx4 v[24:27], v[6:7], off offset:16
            global_store_dword v[2:3], v10, off
            global_store_dword v[2:3], v11, off offset:256
            global_store_dword v[2:3], v12, off offset:512
            global_store_dword v[2:3], v13, off offset:768
            global_store_dword v[2:3], v14, off offset:1024
            global_store_dword v[2:3], v16, off offset:1280
            global_store_dword v[2:3], v17, off offset:1536
            global_store_dword v[2:3], v20, off offset:1792
            global_store_dword v[2:3], v21, off offset:2048
            global_store_dword v[2:3], v22, off offset:2304
            global_store_dword v[2:3], v24, off offset:2560
            global_store_dword v[2:3], v25, off offset:2816
            global_store_dword v[2:3], v26, off offset:3072
            global_store_dword v[2:3], v27, off offset:3328
            ",
        );
        let a = |l: u64| IN + 16 * l;
        expect(&mem, 0, |l| u32::from(byte(a(l) + 1)), "ubyte");
        expect(&mem, 1, |l| byte(a(l) + 3) as i8 as u32, "sbyte");
        expect(&mem, 2, |l| u32::from(rd16(a(l) + 2)), "ushort");
        expect(&mem, 3, |l| rd16(a(l) + 6) as i16 as u32, "sshort");
        expect(&mem, 4, |l| rd32(a(l) + 4), "dword");
        expect(&mem, 5, |l| rd32(a(l) + 8), "x2.0");
        expect(&mem, 6, |l| rd32(a(l) + 12), "x2.1");
        for k in 0..3 {
            expect(&mem, 7 + k, |l| rd32(a(l) - 16 + 4 * k), "x3");
        }
        for k in 0..4 {
            expect(&mem, 10 + k, |l| rd32(a(l) + 16 + 4 * k), "x4");
        }
    }
}

#[test]
fn d16_loads_replace_one_half() {
    for t in ALL {
        let mem = run(
            t,
            "
            v_mov_b32 v10, 0x12345678
            v_mov_b32 v11, 0x12345678
            v_mov_b32 v12, 0x12345678
            v_mov_b32 v13, 0x12345678
            v_mov_b32 v14, 0x12345678
            v_mov_b32 v15, 0x12345678
            global_load_ubyte_d16 v10, v[6:7], off offset:1
            global_load_ubyte_d16_hi v11, v[6:7], off offset:2
            global_load_sbyte_d16 v12, v[6:7], off offset:3
            global_load_sbyte_d16_hi v13, v[6:7], off offset:5
            global_load_short_d16 v14, v[6:7], off offset:6
            global_load_short_d16_hi v15, v[6:7], off offset:10
            global_store_dword v[2:3], v10, off
            global_store_dword v[2:3], v11, off offset:256
            global_store_dword v[2:3], v12, off offset:512
            global_store_dword v[2:3], v13, off offset:768
            global_store_dword v[2:3], v14, off offset:1024
            global_store_dword v[2:3], v15, off offset:1280
            ",
        );
        let a = |l: u64| IN + 16 * l;
        let sx = |b: u8| u32::from(b as i8 as i16 as u16);
        expect(
            &mem,
            0,
            |l| 0x1234_0000 | u32::from(byte(a(l) + 1)),
            "ubyte_d16",
        );
        expect(
            &mem,
            1,
            |l| 0x5678 | u32::from(byte(a(l) + 2)) << 16,
            "ubyte_d16_hi",
        );
        expect(&mem, 2, |l| 0x1234_0000 | sx(byte(a(l) + 3)), "sbyte_d16");
        expect(
            &mem,
            3,
            |l| 0x5678 | sx(byte(a(l) + 5)) << 16,
            "sbyte_d16_hi",
        );
        expect(
            &mem,
            4,
            |l| 0x1234_0000 | u32::from(rd16(a(l) + 6)),
            "short_d16",
        );
        expect(
            &mem,
            5,
            |l| 0x5678 | u32::from(rd16(a(l) + 10)) << 16,
            "short_d16_hi",
        );
    }
}

#[test]
fn global_saddr_forms_add_a_32_bit_vgpr_offset() {
    for t in ALL {
        // v4 = 16 * lane: offset from the SGPR base IN; store through the
        // SGPR base OUT with v1 = 4 * lane.
        let mem = run(
            t,
            "
            global_load_dword v10, v4, s[6:7] offset:-4
            global_load_dwordx2 v[12:13], v4, s[6:7] offset:4095
            global_store_dword v1, v10, s[4:5]
            global_store_dword v1, v12, s[4:5] offset:256
            global_store_dword v1, v13, s[4:5] offset:512
            ",
        );
        expect(&mem, 0, |l| rd32(IN + 16 * l - 4), "saddr -4");
        expect(&mem, 1, |l| rd32(IN + 16 * l + 4095), "saddr +4095");
        expect(&mem, 2, |l| rd32(IN + 16 * l + 4099), "saddr x2.1");
    }
}

#[test]
fn stores_of_every_width_leave_inactive_lanes_alone() {
    for t in ALL {
        let mem = memory_with_inputs();
        for a in (OUT..OUT + 16 * 256).step_by(4) {
            mem.store::<u32>(a, 0xdead_beef);
        }
        kernel(
            t,
            "
            v_mov_b32 v10, 0x89abcdef
            v_add_u32 v11, 0x01010100, v0
            v_mov_b32 v12, 0x77665544
            v_mov_b32 v13, 0x33221100
            s_mov_b32 exec_lo, 0x5555aaaa
            s_mov_b32 exec_hi, 0xf0f00f0f
            global_store_byte v[2:3], v11, off
            global_store_short v[2:3], v11, off offset:256
            global_store_byte_d16_hi v[2:3], v10, off offset:512
            global_store_short_d16_hi v[2:3], v10, off offset:768
            global_store_dword v[2:3], v11, off offset:1024
            global_store_dwordx2 v[2:3], v[10:11], off offset:1280
            global_store_dwordx3 v[2:3], v[10:12], off offset:1792
            global_store_dwordx4 v[2:3], v[10:13], off offset:2304
            ",
        )
        .run(&mem)
        .unwrap();
        let exec: u64 = 0xf0f0_0f0f_5555_aaaa;
        let on = |l: u64| exec >> l & 1 != 0;
        let v11 = |l: u64| 0x0101_0100 + l as u32;
        let old = 0xdead_beefu32;
        let at = |a: u64| mem.load::<u32>(a);
        for l in 0..64u64 {
            let o = OUT + 4 * l;
            if !on(l) {
                for k in 0..5 {
                    assert_eq!(at(o + 256 * k), old, "lane {l} slot {k}");
                }
                continue;
            }
            assert_eq!(at(o), old & !0xff | (v11(l) & 0xff), "byte {l}");
            assert_eq!(at(o + 256), old & !0xffff | (v11(l) & 0xffff));
            assert_eq!(at(o + 512), old & !0xff | 0xab);
            assert_eq!(at(o + 768), old & !0xffff | 0x89ab);
            assert_eq!(at(o + 1024), v11(l));
        }
        // The wide stores overlap their neighbours' slots: check lane by
        // lane in order, as the hardware's lanes write in order.
        let img = |base: u64, n: u64| {
            let mut m = vec![old; 64 + 4];
            for l in 0..64u64 {
                if on(l) {
                    let vals = [0x89ab_cdef, v11(l), 0x7766_5544, 0x3322_1100];
                    for k in 0..n {
                        m[(l + k) as usize] = vals[k as usize];
                    }
                }
            }
            (0..64).for_each(|l| assert_eq!(at(base + 4 * l), m[l as usize], "x{n} lane {l}"));
        };
        img(OUT + 1280, 2);
        img(OUT + 1792, 3);
        img(OUT + 2304, 4);
    }
}

#[test]
fn loads_leave_inactive_lanes_alone_and_do_not_fault_for_them() {
    for t in ALL {
        let mem = run_lds(
            t,
            256,
            "
            v_mov_b32 v10, 0x7777
            v_mov_b32 v11, 0x8888
            v_mov_b32 v12, 0x9999
            v_mov_b32 v13, 0xaaaa
            ds_write_b32 v1, v0
            // The lanes to be inactive get an unmapped address.
            s_mov_b32 exec_lo, 0xffff0000
            s_mov_b32 exec_hi, 0x7ffffffe
            v_mov_b32 v7, 0xdead
            v_mov_b32 v4, 0
            s_mov_b32 exec_lo, 0x0000ffff
            s_mov_b32 exec_hi, 0x80000001
            global_load_dword v10, v[6:7], off
            ds_read_b32 v11, v1
            scratch_load_dword v12, v1, off
            global_load_dword v13, v4, s[6:7]
            s_mov_b32 exec_lo, -1
            s_mov_b32 exec_hi, -1
            global_store_dword v[2:3], v10, off
            global_store_dword v[2:3], v11, off offset:256
            global_store_dword v[2:3], v12, off offset:512
            global_store_dword v[2:3], v13, off offset:768
            ",
        );
        let on = |l: u64| l < 16 || l == 32 || l == 63;
        let pick = |l: u64, a: u32, b: u32| if on(l) { a } else { b };
        expect(&mem, 0, |l| pick(l, rd32(IN + 16 * l), 0x7777), "global");
        expect(&mem, 1, |l| pick(l, l as u32, 0x8888), "ds");
        expect(&mem, 2, |l| pick(l, 0, 0x9999), "scratch");
        expect(&mem, 3, |l| pick(l, rd32(IN + 16 * l), 0xaaaa), "saddr");
    }
}

#[test]
fn flat_reaches_global_lds_and_private_memory() {
    for t in ALL {
        let mem = memory_with_inputs();
        let mut k = kernel(
            t,
            "
            // Global through a flat address.
            flat_load_dword v10, v[6:7] offset:4
            flat_store_dword v[2:3], v10
            // LDS: v[8:9] = shared aperture + 4 * lane.
            v_mov_b32 v9, src_shared_base
            v_mov_b32 v8, v1
            v_add_u32 v11, 1000, v0
            flat_store_dword v[8:9], v11 offset:8
            ds_read_b32 v12, v1 offset:8
            global_store_dword v[2:3], v12, off offset:256
            // Private: v[14:15] = private aperture + 12 (per lane).
            v_mov_b32 v15, src_private_base
            v_mov_b32 v14, 12
            v_add_u32 v13, 2000, v0
            flat_store_short v[14:15], v13 offset:2
            flat_store_short v[14:15], v0
            scratch_load_dword v16, off, off offset:12
            flat_load_ubyte v17, v[14:15] offset:2
            global_store_dword v[2:3], v16, off offset:512
            global_store_dword v[2:3], v17, off offset:768
            ",
        );
        if t != Target::Gfx940 {
            // `off, off` scratch needs gfx940's SVE bit: read through VADDR.
            k.asm = k.asm.replace(
                "scratch_load_dword v16, off, off offset:12",
                "v_mov_b32 v18, 12\n scratch_load_dword v16, v18, off",
            );
        }
        k.lds = 64 * 4 + 8;
        k.run(&mem).unwrap_or_else(|e| panic!("{t:?}: {e}"));
        expect(&mem, 0, |l| rd32(IN + 16 * l + 4), "flat global");
        expect(&mem, 1, |l| 1000 + l as u32, "flat lds");
        expect(
            &mem,
            2,
            |l| (2000 + l as u32) << 16 | l as u32,
            "flat private",
        );
        expect(&mem, 3, |l| (2000 + l as u32) & 0xff, "flat private byte");
    }
}

#[test]
fn scratch_addresses_are_per_lane_offsets() {
    for t in ALL {
        let mut body = String::from(
            "
            v_add_u32 v10, 7, v0
            v_add_u32 v11, 0x100, v0
            s_mov_b32 s8, 1024
            scratch_store_dword v1, v10, off offset:16
            scratch_store_dwordx2 off, v[10:11], s8 offset:-8
            scratch_store_byte v1, v11, off offset:300
            scratch_store_short_d16_hi v1, v11, off offset:302
            scratch_load_dword v12, v1, off offset:16
            scratch_load_dwordx2 v[14:15], off, s8 offset:-8
            scratch_load_dword v16, v1, off offset:300
            scratch_load_sbyte v17, v1, off offset:300
            global_store_dword v[2:3], v12, off
            global_store_dword v[2:3], v14, off offset:256
            global_store_dword v[2:3], v15, off offset:512
            global_store_dword v[2:3], v16, off offset:768
            global_store_dword v[2:3], v17, off offset:1024
            ",
        );
        if t == Target::Gfx940 {
            // VADDR and SADDR together (SVE).
            body.push_str(
                "
                scratch_store_dword v1, v10, s8 offset:4
                scratch_load_dword v18, v1, s8 offset:4
                global_store_dword v[2:3], v18, off offset:1280
                ",
            );
        }
        let mem = run(t, &body);
        expect(&mem, 0, |l| 7 + l as u32, "vaddr");
        expect(&mem, 1, |l| 7 + l as u32, "saddr x2.0");
        expect(&mem, 2, |l| 0x100 + l as u32, "saddr x2.1");
        // Per lane: offset 4l + 300 has the byte of v11 and offset 4l +
        // 302 its high half (zero); the dword at 4l + 300 may be
        // misaligned (lane-private bytes either way).
        expect(
            &mem,
            3,
            |l| (0x100 + l as u32) & 0xff,
            "byte + short_d16_hi",
        );
        expect(
            &mem,
            4,
            |l| ((0x100 + l as u32) & 0xff) as u8 as i8 as u32,
            "sbyte",
        );
        if t == Target::Gfx940 {
            expect(&mem, 5, |l| 7 + l as u32, "vaddr + saddr");
        }
    }
}

/// A buffer resource in s[8:11] for global memory at `base`.
fn vsharp(base: u64, stride: u32, num_records: u32, swizzle: bool, word3: u32) -> String {
    format!(
        "
        s_mov_b32 s8, {:#x}
        s_mov_b32 s9, {:#x}
        s_mov_b32 s10, {:#x}
        s_mov_b32 s11, {:#x}
        ",
        base as u32,
        (base >> 32) as u32 & 0xffff | stride << 16 | u32::from(swizzle) << 31,
        num_records,
        word3
    )
}

/// DST_SEL XYZW, 32-bit format (as LLVM's raw buffers).
const WORD3: u32 = 0x0002_7fac;

#[test]
fn buffer_raw_loads_and_stores_check_the_range() {
    for t in ALL {
        // num_records = 100 bytes from IN: offsets (VADDR + inst offset)
        // at or past it read zero; SOFFSET is not part of the check.
        let body = format!(
            "{}
            s_mov_b32 s12, 8
            v_lshlrev_b32 v10, 1, v1
            buffer_load_dword v11, v10, s[8:11], s12 offen offset:4
            buffer_load_ubyte v12, v10, s[8:11], 0 offen offset:1
            buffer_load_sshort v13, v10, s[8:11], 0 offen offset:2
            buffer_load_dwordx2 v[14:15], v10, s[8:11], 0 offen offset:92
            global_store_dword v[2:3], v11, off
            global_store_dword v[2:3], v12, off offset:256
            global_store_dword v[2:3], v13, off offset:512
            global_store_dword v[2:3], v14, off offset:768
            global_store_dword v[2:3], v15, off offset:1024
            ",
            vsharp(IN, 0, 100, false, WORD3)
        );
        let mem = run(t, &body);
        let inr = |off: u64, v: u32| if off < 100 { v } else { 0 };
        expect(&mem, 0, |l| inr(8 * l + 4, rd32(IN + 8 * l + 12)), "dword");
        expect(
            &mem,
            1,
            |l| inr(8 * l + 1, u32::from(byte(IN + 8 * l + 1))),
            "ubyte",
        );
        expect(
            &mem,
            2,
            |l| inr(8 * l + 2, rd16(IN + 8 * l + 2) as i16 as u32),
            "sshort",
        );
        expect(&mem, 3, |l| inr(8 * l + 92, rd32(IN + 8 * l + 92)), "x2.0");
        expect(&mem, 4, |l| inr(8 * l + 96, rd32(IN + 8 * l + 96)), "x2.1");

        // Stores past the range are dropped.
        let mem = memory_with_inputs();
        let body = format!(
            "{}
            v_add_u32 v10, 0x500, v0
            buffer_store_dword v10, v1, s[8:11], 0 offen
            buffer_store_short v10, v1, s[8:11], 0 offen offset:2048
            ",
            vsharp(OUT, 0, 128, false, WORD3)
        );
        kernel(t, &body).run(&mem).unwrap();
        for l in 0..64u64 {
            let want = if 4 * l < 128 { 0x500 + l as u32 } else { 0 };
            assert_eq!(mem.load::<u32>(OUT + 4 * l), want, "{t:?} lane {l}");
            assert_eq!(mem.load::<u32>(OUT + 2048 + 4 * l), 0);
        }
    }
}

#[test]
fn buffer_index_and_swizzle_addressing() {
    for t in ALL {
        // Structured: stride 12, index = lane (IDXEN), num_records = 40
        // records: lanes 40.. read zero.
        let body = format!(
            "{}
            v_mov_b32 v10, v0
            v_mov_b32 v11, 4
            buffer_load_dword v12, v10, s[8:11], 0 idxen offset:4
            buffer_load_dword v13, v[10:11], s[8:11], 0 idxen offen offset:2
            global_store_dword v[2:3], v12, off
            global_store_dword v[2:3], v13, off offset:256
            ",
            vsharp(IN, 12, 40, false, WORD3)
        );
        let mem = run(t, &body);
        expect(
            &mem,
            0,
            |l| if l < 40 { rd32(IN + 12 * l + 4) } else { 0 },
            "idxen",
        );
        expect(
            &mem,
            1,
            |l| if l < 40 { rd32(IN + 12 * l + 6) } else { 0 },
            "idxen offen",
        );

        // Swizzled: element size 4 (1), index stride 16 (1), stride 8,
        // index = lane, offset 4: (idx/16 * 8 + 4) * 16 + idx%16 * 4.
        let w3 = WORD3 | 1 << 19 | 1 << 21;
        let body = format!(
            "{}
            v_mov_b32 v10, v0
            buffer_load_dword v12, v10, s[8:11], 0 idxen offset:4
            global_store_dword v[2:3], v12, off
            ",
            vsharp(IN, 8, 1000, true, w3)
        );
        let mem = run(t, &body);
        expect(
            &mem,
            0,
            |l| rd32(IN + (l / 16 * 8 + 4) * 16 + l % 16 * 4),
            "swizzled",
        );
    }
}

#[test]
fn private_buffer_scratch_and_flat_share_bytes() {
    // The private segment buffer in s[0:3]; the kernel arguments follow
    // in s[4:5]. A buffer store with the wave-scaled stack offset in s32
    // (64 * 16) lands where a flat access to private offset 16 + 4 and a
    // scratch access to 20 find it.
    for t in ALL {
        let mem = memory_with_inputs();
        let mut k = Kernel::new(
            t,
            "
            s_load_dwordx2 s[6:7], s[4:5], 0x0
            s_waitcnt lgkmcnt(0)
            v_lshlrev_b32 v1, 2, v0
            v_mov_b32 v3, s7
            v_add_co_u32 v2, vcc, s6, v1
            v_addc_co_u32 v3, vcc, 0, v3, vcc
            s_mov_b32 s32, 0x400
            v_add_u32 v5, 0x300, v0
            buffer_store_dword v5, off, s[0:3], s32 offset:4
            v_mov_b32 v9, src_private_base
            v_mov_b32 v8, 20
            flat_load_dword v10, v[8:9]
            v_mov_b32 v11, 20
            scratch_load_dword v12, v11, off
            // And back: flat store at private offset 24, buffer load.
            v_add_u32 v13, 0x700, v0
            flat_store_dword v[8:9], v13 offset:4
            buffer_load_dword v14, off, s[0:3], s32 offset:8
            v_mov_b32 v15, 4
            buffer_load_ushort v16, v15, s[0:3], s32 offen offset:4
            // A 64-bit atomic on the private buffer: per-lane bytes 48..55.
            v_mov_b32 v20, 5
            v_add_u32 v21, 0x900, v0
            buffer_atomic_add_x2 v[20:21], off, s[0:3], s32 offset:32
            buffer_atomic_add_x2 v[20:21], off, s[0:3], s32 offset:32
            flat_load_dwordx2 v[22:23], v[8:9] offset:28
            global_store_dword v[2:3], v22, off offset:1024
            global_store_dword v[2:3], v23, off offset:1280
            global_store_dword v[2:3], v10, off
            global_store_dword v[2:3], v12, off offset:256
            global_store_dword v[2:3], v14, off offset:512
            global_store_dword v[2:3], v16, off offset:768
            s_endpgm
            ",
        );
        k.properties = 1 | 1 << 3;
        k.private = 64;
        k.run(&mem).unwrap_or_else(|e| panic!("{t:?}: {e}"));
        expect(&mem, 0, |l| 0x300 + l as u32, "buffer -> flat");
        expect(&mem, 1, |l| 0x300 + l as u32, "buffer -> scratch");
        expect(&mem, 2, |l| 0x700 + l as u32, "flat -> buffer");
        expect(&mem, 3, |l| 0x700 + l as u32, "flat -> buffer offen");
        expect(&mem, 4, |_| 10, "add_x2 lo");
        expect(&mem, 5, |l| 2 * (0x900 + l as u32), "add_x2 hi");
    }
}

#[test]
fn global_atomics_under_contention_are_exact() {
    for t in ALL {
        // Every lane adds lane + 1 to one dword and gets the old value:
        // lanes go in order, so lane l sees the sum of lanes below it.
        let mem = memory_with_inputs();
        mem.store::<u32>(IN, 5);
        mem.store::<u64>(IN + 8, u64::MAX - 10);
        mem.store::<u32>(IN + 16, 0);
        mem.store::<u32>(IN + 20, 3);
        mem.store::<u32>(IN + 24, 0x8000_0000);
        mem.store::<u32>(IN + 28, 0);
        kernel(
            t,
            "
            v_mov_b32 v8, s6
            v_mov_b32 v9, s7
            v_add_u32 v10, 1, v0
            v_mov_b32 v11, 0
            global_atomic_add v12, v[8:9], v10, off glc
            global_atomic_add_x2 v[14:15], v[8:9], v[10:11], off offset:8 glc
            global_atomic_inc v16, v[8:9], v10, off offset:16 glc
            v_mov_b32 v17, 2
            global_atomic_dec v18, v[8:9], v17, off offset:20 glc
            global_atomic_smax v19, v[8:9], v0, off offset:24 glc
            global_atomic_umax v[8:9], v0, off offset:28
            global_atomic_sub v20, v4, v10, s[6:7] offset:32 glc
            global_store_dword v[2:3], v12, off
            global_store_dword v[2:3], v14, off offset:256
            global_store_dword v[2:3], v15, off offset:512
            global_store_dword v[2:3], v16, off offset:768
            global_store_dword v[2:3], v18, off offset:1024
            global_store_dword v[2:3], v19, off offset:1280
            global_store_dword v[2:3], v20, off offset:1536
            ",
        )
        .run(&mem)
        .unwrap_or_else(|e| panic!("{t:?}: {e}"));
        let tri = |l: u64| l * (l + 1) / 2;
        expect(&mem, 0, |l| 5 + tri(l) as u32, "add rtn");
        assert_eq!(mem.load::<u32>(IN), 5 + tri(64) as u32);
        let x2 = |l: u64| (u64::MAX - 10).wrapping_add(tri(l));
        expect(&mem, 1, |l| x2(l) as u32, "add_x2 lo");
        expect(&mem, 2, |l| (x2(l) >> 32) as u32, "add_x2 hi");
        assert_eq!(mem.load::<u64>(IN + 8), x2(64));
        // inc with limit lane + 1: old values 0, 1, 2, ...: never wraps
        // (old = l < l + 1).
        expect(&mem, 3, |l| l as u32, "inc");
        // dec with limit 2 from 3: 3 > 2 -> 2, then 1, 0, then 2 (wrap).
        let mut d = 3u32;
        let decs: Vec<u32> = (0..64)
            .map(|_| {
                let o = d;
                d = if d == 0 || d > 2 { 2 } else { d - 1 };
                o
            })
            .collect();
        assert_eq!(slot(&mem, 4), decs, "dec");
        // smax from i32::MIN: old values are the running maximum.
        expect(
            &mem,
            5,
            |l| if l == 0 { 0x8000_0000 } else { l as u32 - 1 },
            "smax",
        );
        assert_eq!(mem.load::<u32>(IN + 28), 63, "umax without return");
        // sub of lane + 1 from the lane's own dword at IN + 16 * l + 32.
        expect(&mem, 6, |l| rd32(IN + 16 * l + 32), "sub rtn");
        for l in 0..64u64 {
            assert_eq!(
                mem.load::<u32>(IN + 16 * l + 32),
                rd32(IN + 16 * l + 32).wrapping_sub(l as u32 + 1)
            );
        }
    }
}

#[test]
fn compare_swap_and_bit_atomics() {
    for t in ALL {
        let mem = memory_with_inputs();
        for l in 0..64u64 {
            mem.store::<u32>(OUT + 1024 + 4 * l, l as u32 * 3);
            mem.store::<u64>(OUT + 2048 + 8 * l, l * 5);
        }
        kernel(
            t,
            "
            // cmpswap: data = (new, compare): lanes whose compare matches
            // (even lanes compare 3l, odd lanes 3l + 1) swap in 1000 + l.
            v_add_u32 v10, 1000, v0
            v_lshlrev_b32 v12, 1, v0
            v_add_u32 v11, v0, v12
            v_and_b32 v13, 1, v0
            v_add_u32 v11, v11, v13
            global_atomic_cmpswap v14, v[2:3], v[10:11], off offset:1024 glc
            // cmpswap_x2 on 8-byte slots: v[16:17] = new, v[18:19] =
            // compare = 5l for every lane.
            v_lshlrev_b32 v20, 3, v0
            v_mov_b32 v16, v10
            v_mov_b32 v17, 7
            v_lshlrev_b32 v18, 2, v0
            v_add_u32 v18, v18, v0
            v_mov_b32 v19, 0
            global_atomic_cmpswap_x2 v[22:23], v20, v[16:19], s[4:5] offset:2048 glc
            // and/or/xor/swap on lane-private dwords.
            v_mov_b32 v24, 0xff00ff0f
            global_atomic_and v[2:3], v24, off
            global_atomic_or v[2:3], v0, off offset:256
            global_atomic_xor v25, v[2:3], v24, off offset:512 glc
            global_atomic_swap v26, v[2:3], v10, off offset:768 glc
            global_store_dword v[2:3], v14, off offset:3072
            global_store_dword v[2:3], v22, off offset:3328
            global_store_dword v[2:3], v25, off offset:3584
            global_store_dword v[2:3], v26, off offset:3840
            ",
        )
        .run(&mem)
        .unwrap_or_else(|e| panic!("{t:?}: {e}"));
        for l in 0..64u64 {
            let (n, lu) = (1000 + l as u32, l as u32);
            let swapped = l % 2 == 0;
            assert_eq!(
                mem.load::<u32>(OUT + 1024 + 4 * l),
                if swapped { n } else { 3 * lu }
            );
            assert_eq!(mem.load::<u32>(OUT + 3072 + 4 * l), 3 * lu, "cmpswap old");
            assert_eq!(
                mem.load::<u64>(OUT + 2048 + 8 * l),
                7 << 32 | u64::from(n),
                "cmpswap_x2"
            );
            assert_eq!(mem.load::<u32>(OUT + 3328 + 4 * l), 5 * lu);
        }
        // The lane-private slots 0..3 started zero.
        expect(&mem, 0, |_| 0, "and");
        expect(&mem, 1, |l| l as u32, "or");
        expect(&mem, 2, |_| 0xff00_ff0f, "xor");
        expect(&mem, 3, |l| 1000 + l as u32, "swap");
        expect(&mem, 14, |_| 0, "xor old");
        expect(&mem, 15, |_| 0, "swap old");
    }
}

#[test]
fn buffer_and_flat_atomics() {
    for t in ALL {
        let body = format!(
            "{}
            v_add_u32 v10, 1, v0
            v_mov_b32 v20, 0
            // Every lane adds lane + 1 at IN; the old value returns in
            // VDATA.
            buffer_atomic_add v10, v20, s[8:11], 0 offen glc
            // umax at IN + 64 + 4 * lane: lanes past 128 bytes are out of
            // range: dropped, returning zero.
            v_mov_b32 v11, -1
            buffer_atomic_umax v11, v1, s[8:11], 0 offen offset:64 glc
            // Flat atomics on LDS (all lanes at 0) and private memory.
            v_mov_b32 v9, src_shared_base
            v_mov_b32 v8, 0
            v_add_u32 v12, 1, v0
            flat_atomic_add v14, v[8:9], v12 glc
            ds_read_b32 v15, v8
            v_mov_b32 v17, src_private_base
            v_mov_b32 v16, 8
            flat_atomic_add v[16:17], v12
            flat_atomic_add v18, v[16:17], v12 glc
            global_store_dword v[2:3], v10, off
            global_store_dword v[2:3], v11, off offset:256
            global_store_dword v[2:3], v14, off offset:512
            global_store_dword v[2:3], v15, off offset:768
            global_store_dword v[2:3], v18, off offset:1024
            ",
            vsharp(IN, 0, 128, false, WORD3)
        );
        let mem = run_lds(t, 64, &body);
        let tri = |l: u64| (l * (l + 1) / 2) as u32;
        expect(&mem, 0, |l| rd32(IN).wrapping_add(tri(l)), "buffer add");
        assert_eq!(mem.load::<u32>(IN), rd32(IN).wrapping_add(tri(64)));
        expect(
            &mem,
            1,
            |l| if l < 16 { rd32(IN + 64 + 4 * l) } else { 0 },
            "umax",
        );
        for l in 0..64u64 {
            let a = IN + 64 + 4 * l;
            let want = if l < 16 { u32::MAX } else { rd32(a) };
            assert_eq!(mem.load::<u32>(a), want, "{t:?} umax lane {l}");
        }
        expect(&mem, 2, tri, "flat lds add");
        expect(&mem, 3, |_| tri(64), "flat lds final");
        expect(&mem, 4, |l| l as u32 + 1, "flat private add");
    }
}

#[test]
fn atomics_from_many_workgroups_on_many_threads_are_exact() {
    for t in CDNA {
        let mem = memory_with_inputs();
        mem.store::<u64>(IN, 0);
        let mut k = kernel(
            t,
            "
            v_mov_b32 v8, s6
            v_mov_b32 v9, s7
            v_mov_b32 v10, 1
            s_mov_b32 s20, 0
            global_atomic_add v[8:9], v10, off
            global_atomic_add v[8:9], v10, off offset:4
            ",
        );
        k.grid = [64 * 64, 1, 1];
        k.run(&mem).unwrap();
        assert_eq!(mem.load::<u32>(IN), 64 * 64);
        assert_eq!(mem.load::<u32>(IN + 4), 64 * 64);
    }
}

#[test]
fn float_atomics_of_cdna() {
    for t in CDNA {
        let mem = memory_with_inputs();
        mem.store::<u64>(IN, 0.5f64.to_bits());
        mem.store::<u64>(IN + 8, 100.0f64.to_bits());
        mem.store::<u64>(IN + 16, (-100.0f64).to_bits());
        // f16 pair (1.0, -2.0).
        mem.store::<u32>(IN + 24, 0xc000_3c00);
        mem.store::<u32>(IN + 28, 0.0f32.to_bits());
        let body = format!(
            "
            v_mov_b32 v8, s6
            v_mov_b32 v9, s7
            // v[10:11] = lane - 31.5 (double), v13 = 0.1 * lane (float).
            global_load_dwordx2 v[10:11], v[6:7], off offset:64
            global_load_dword v13, v[6:7], off offset:72
            global_atomic_add_f64 v[14:15], v[8:9], v[10:11], off glc
            global_atomic_min_f64 v[8:9], v[10:11], off offset:8
            global_atomic_max_f64 v[8:9], v[10:11], off offset:16
            v_mov_b32 v16, 0x3c003800
            global_atomic_pk_add_f16 v[8:9], v16, off offset:24
            {}
            global_store_dword v[2:3], v14, off
            global_store_dword v[2:3], v15, off offset:256
            ",
            "global_atomic_add_f32 v17, v[8:9], v13, off offset:28 glc"
        );
        for l in 0..64u64 {
            mem.store::<u64>(IN + 64 + 16 * l, (l as f64 - 31.5).to_bits());
            mem.store::<u32>(IN + 72 + 16 * l, (0.1f32 * l as f32).to_bits());
        }
        kernel(t, &body)
            .run(&mem)
            .unwrap_or_else(|e| panic!("{t:?}: {e}"));
        let mut acc = 0.5f64;
        for l in 0..64u64 {
            let got = u64::from(mem.load::<u32>(OUT + 4 * l))
                | u64::from(mem.load::<u32>(OUT + 256 + 4 * l)) << 32;
            assert_eq!(f64::from_bits(got), acc, "add_f64 old, lane {l}");
            acc += l as f64 - 31.5;
        }
        assert_eq!(f64::from_bits(mem.load::<u64>(IN)), acc);
        assert_eq!(f64::from_bits(mem.load::<u64>(IN + 8)), -31.5);
        assert_eq!(f64::from_bits(mem.load::<u64>(IN + 16)), 31.5);
        // 64 times (0.5, 1.0) onto (1.0, -2.0): (33.0, 62.0), exact in
        // half precision.
        assert_eq!(mem.load::<u32>(IN + 24), 0x53c0_5020);
        let mut s = 0.0f32;
        for l in 0..64 {
            s += 0.1f32 * l as f32;
        }
        assert_eq!(f32::from_bits(mem.load::<u32>(IN + 28)), s);
    }
}

#[test]
fn acc_registers_as_memory_data() {
    for t in CDNA {
        let mem = run_lds(
            t,
            256,
            "
            v_mov_b32 v10, 0
            global_load_dword a10, v[6:7], off
            global_store_dword v[2:3], a10, off
            global_store_dword v[2:3], v10, off offset:256
            ds_write_b32 v1, a10
            ds_read_b32 a11, v1
            global_store_dword v[2:3], a11, off offset:512
            ",
        );
        expect(&mem, 0, |l| rd32(IN + 16 * l), "acc load/store");
        expect(&mem, 1, |_| 0, "v10 untouched");
        expect(&mem, 2, |l| rd32(IN + 16 * l), "acc through LDS");
    }
}

/// Runs `body` with `lds` bytes of LDS.
fn run_lds(t: Target, lds: u32, body: &str) -> FlatMemory {
    let mem = memory_with_inputs();
    let mut k = kernel(t, body);
    k.lds = lds;
    k.run(&mem).unwrap_or_else(|e| panic!("{t:?}: {e}"));
    mem
}

#[test]
fn lds_reads_and_writes_of_every_width() {
    for t in ALL {
        let mem = run_lds(
            t,
            4096,
            "
            v_add_u32 v10, 0x1000, v0
            v_mov_b32 v11, 0xfedcba98
            ds_write_b32 v1, v10
            ds_read_b32 v15, v1 offset:0
            ds_write_b64 v4, v[10:11] offset:1024
            ds_read_u8 v16, v4 offset:1028
            ds_read_i8 v17, v4 offset:1031
            ds_read_u16 v18, v4 offset:1029
            ds_read_i16 v19, v4 offset:1030
            ds_read_b64 v[20:21], v4 offset:1024
            ds_write_b8 v1, v11 offset:3000
            ds_write_b16_d16_hi v1, v11 offset:3001
            ds_write_b8_d16_hi v1, v10 offset:3003
            ds_read_b32 v22, v1 offset:3000
            v_mov_b32 v23, 0x11112222
            v_mov_b32 v24, 0x11112222
            ds_read_u8_d16_hi v23, v4 offset:1031
            ds_read_i8_d16 v24, v4 offset:1031
            global_store_dword v[2:3], v15, off
            global_store_dword v[2:3], v16, off offset:256
            global_store_dword v[2:3], v17, off offset:512
            global_store_dword v[2:3], v18, off offset:768
            global_store_dword v[2:3], v19, off offset:1024
            global_store_dword v[2:3], v20, off offset:1280
            global_store_dword v[2:3], v21, off offset:1536
            global_store_dword v[2:3], v22, off offset:1792
            global_store_dword v[2:3], v23, off offset:2048
            global_store_dword v[2:3], v24, off offset:2304
            ",
        );
        let v10 = |l: u64| 0x1000 + l as u32;
        expect(&mem, 0, v10, "b32");
        // Bytes of 0xfedcba98 at +4: 98 ba dc fe.
        expect(&mem, 1, |_| 0x98, "u8");
        expect(&mem, 2, |_| 0xffff_fffe, "i8");
        expect(&mem, 3, |_| 0xdcba, "u16");
        expect(&mem, 4, |_| 0xffff_fedc, "i16");
        expect(&mem, 5, v10, "b64.0");
        expect(&mem, 6, |_| 0xfedc_ba98, "b64.1");
        expect(
            &mem,
            7,
            |l| (v10(l) >> 16 & 0xff) << 24 | 0xfedc << 8 | 0x98,
            "b8/b16_d16_hi",
        );
        expect(&mem, 8, |_| 0xfe_2222, "u8_d16_hi");
        expect(&mem, 9, |_| 0x1111_fffe, "i8_d16");
    }
}

#[test]
fn lds_two_address_and_wide_forms() {
    for t in ALL {
        let mem = run_lds(
            t,
            65536,
            "
            v_add_u32 v10, 0x100, v0
            v_add_u32 v11, 0x200, v0
            v_add_u32 v12, 0x300, v0
            v_add_u32 v13, 0x400, v0
            // write2_b32: offsets in dwords; st64 in 256-byte units.
            ds_write2_b32 v1, v10, v11 offset1:64
            ds_read2_b32 v[14:15], v1 offset1:64
            ds_write2st64_b32 v1, v12, v13 offset0:2 offset1:3
            ds_read2st64_b32 v[16:17], v1 offset0:3 offset1:2
            // b64 pairs: 8-byte units, st64: 512-byte units.
            v_lshlrev_b32 v30, 3, v0
            ds_write2_b64 v30, v[10:11], v[12:13] offset0:128 offset1:192
            ds_read2_b64 v[18:21], v30 offset0:192 offset1:128
            ds_write2st64_b64 v30, v[12:13], v[10:11] offset0:10 offset1:11
            ds_read2st64_b64 v[22:25], v30 offset0:10 offset1:11
            // b96/b128.
            ds_write_b128 v4, v[10:13] offset:16384
            ds_read_b96 v[26:28], v4 offset:16388
            global_store_dword v[2:3], v14, off
            global_store_dword v[2:3], v15, off offset:256
            global_store_dword v[2:3], v16, off offset:512
            global_store_dword v[2:3], v17, off offset:768
            global_store_dword v[2:3], v18, off offset:1024
            global_store_dword v[2:3], v19, off offset:1280
            global_store_dword v[2:3], v20, off offset:1536
            global_store_dword v[2:3], v21, off offset:1792
            global_store_dword v[2:3], v22, off offset:2048
            global_store_dword v[2:3], v25, off offset:2304
            global_store_dword v[2:3], v26, off offset:2560
            global_store_dword v[2:3], v28, off offset:2816
            ",
        );
        let v = |k: u32| move |l: u64| k + l as u32;
        expect(&mem, 0, v(0x100), "read2.0");
        expect(&mem, 1, v(0x200), "read2.1");
        expect(&mem, 2, v(0x400), "read2st64.0");
        expect(&mem, 3, v(0x300), "read2st64.1");
        expect(&mem, 4, v(0x300), "read2_b64.0");
        expect(&mem, 5, v(0x400), "read2_b64.1");
        expect(&mem, 6, v(0x100), "read2_b64.2");
        expect(&mem, 7, v(0x200), "read2_b64.3");
        expect(&mem, 8, v(0x300), "read2st64_b64.0");
        expect(&mem, 9, v(0x200), "read2st64_b64.3");
        expect(&mem, 10, v(0x200), "b96.0");
        expect(&mem, 11, v(0x400), "b96.2");
    }
}

#[test]
fn lds_out_of_range_reads_zero_and_drops_writes() {
    for t in ALL {
        let mem = run_lds(
            t,
            256,
            "
            v_add_u32 v10, 0x100, v0
            ds_write_b32 v1, v10 offset:128
            ds_read_b32 v11, v1 offset:128
            global_store_dword v[2:3], v11, off
            ",
        );
        expect(
            &mem,
            0,
            |l| {
                if 4 * l + 128 < 256 {
                    0x100 + l as u32
                } else {
                    0
                }
            },
            "bound",
        );
    }
}

#[test]
fn lds_atomics_under_contention_are_exact() {
    for t in ALL {
        let mem = run_lds(
            t,
            1024,
            "
            v_mov_b32 v20, 0
            v_add_u32 v10, 1, v0
            v_mov_b32 v11, 0
            v_mov_b32 v21, 100
            ds_write_b32 v20, v21
            ds_add_rtn_u32 v12, v20, v10
            ds_write_b32 v20, v21 offset:8
            ds_rsub_rtn_u32 v13, v20, v10 offset:8
            ds_min_rtn_i32 v14, v20, v0 offset:16
            ds_max_u32 v20, v0 offset:20
            ds_add_rtn_u64 v[16:17], v20, v[10:11] offset:24
            ds_inc_rtn_u32 v18, v20, v21 offset:32
            ds_read_b32 v19, v20 offset:20
            // mskor: clear bit (l % 32) mask... each lane ORs 1 << (l & 31)
            v_and_b32 v22, 31, v0
            v_mov_b32 v23, 1
            v_lshlrev_b32 v23, v22, v23
            v_mov_b32 v24, 0
            ds_mskor_b32 v20, v24, v23 offset:40
            ds_read_b32 v25, v20 offset:40
            // cmpst: lanes race to replace 0 with lane + 1: lane 0 wins.
            ds_cmpst_rtn_b32 v26, v20, v11, v10 offset:48
            ds_read_b32 v27, v20 offset:48
            global_store_dword v[2:3], v12, off
            global_store_dword v[2:3], v13, off offset:256
            global_store_dword v[2:3], v14, off offset:512
            global_store_dword v[2:3], v16, off offset:768
            global_store_dword v[2:3], v18, off offset:1024
            global_store_dword v[2:3], v19, off offset:1280
            global_store_dword v[2:3], v25, off offset:1536
            global_store_dword v[2:3], v26, off offset:1792
            global_store_dword v[2:3], v27, off offset:2048
            ",
        );
        let tri = |l: u64| (l * (l + 1) / 2) as u32;
        expect(&mem, 0, |l| 100 + tri(l), "add rtn");
        // rsub: m = (l + 1) - m, starting at 100.
        let mut m = 100u32;
        let rs: Vec<u32> = (0..64)
            .map(|l| {
                let o = m;
                m = (l + 1u32).wrapping_sub(m);
                o
            })
            .collect();
        assert_eq!(slot(&mem, 1), rs, "rsub");
        // min_i32 from 0 (LDS starts zeroed): every old is 0.
        expect(&mem, 2, |_| 0, "min");
        expect(&mem, 3, tri, "add_u64 lo");
        expect(&mem, 4, |l| l as u32, "inc (limit 100)");
        expect(&mem, 5, |_| 63, "max");
        expect(&mem, 6, |_| u32::MAX, "mskor");
        expect(&mem, 7, |l| if l == 0 { 0 } else { 1 }, "cmpst old");
        expect(&mem, 8, |_| 1, "cmpst final");
    }
}

/// The half-precision bits of a small non-negative integer.
fn f16_of(n: u32) -> u32 {
    if n == 0 {
        return 0;
    }
    let e = 31 - n.leading_zeros();
    (e + 15) << 10 | ((n << (10 - e)) - 1024)
}

#[test]
fn lds_exchanges_wrap_and_qword_compare_store() {
    for t in ALL {
        let mut body = String::from(
            "
            v_add_u32 v10, 0x100, v0
            v_add_u32 v11, 0x200, v0
            ds_write_b32 v1, v0
            ds_write_b32 v1, v0 offset:256
            ds_wrxchg2_rtn_b32 v[12:13], v1, v10, v11 offset1:64
            ds_read2_b32 v[14:15], v1 offset1:64
            v_mov_b32 v20, 1024
            v_mov_b32 v21, 5
            v_mov_b32 v22, 3
            ds_wrap_rtn_b32 v16, v20, v21, v22
            v_mov_b32 v24, 0
            v_mov_b32 v25, 0
            ds_cmpst_rtn_b64 v[26:27], v20, v[24:25], v[10:11] offset:16
            global_store_dword v[2:3], v12, off
            global_store_dword v[2:3], v13, off offset:256
            global_store_dword v[2:3], v14, off offset:512
            global_store_dword v[2:3], v15, off offset:768
            global_store_dword v[2:3], v16, off offset:1024
            global_store_dword v[2:3], v26, off offset:1280
            global_store_dword v[2:3], v27, off offset:1536
            ",
        );
        if t == Target::Gfx940 {
            body.push_str(
                "
                v_mov_b32 v28, 0x3c003c00
                ds_pk_add_rtn_f16 v29, v20, v28 offset:64
                v_mov_b32 v8, s6
                v_mov_b32 v9, s7
                v_mov_b32 v30, 0x3f003f80
                global_atomic_pk_add_bf16 v31, v[8:9], v30, off sc0
                global_store_dword v[2:3], v29, off offset:1792
                global_store_dword v[2:3], v31, off offset:2048
                ",
            );
        }
        let mem = memory_with_inputs();
        mem.store::<u32>(IN, 0);
        let mut k = kernel(t, &body);
        k.lds = 2048;
        k.run(&mem).unwrap_or_else(|e| panic!("{t:?}: {e}"));
        expect(&mem, 0, |l| l as u32, "wrxchg2 old 0");
        expect(&mem, 1, |l| l as u32, "wrxchg2 old 1");
        expect(&mem, 2, |l| 0x100 + l as u32, "wrxchg2 new 0");
        expect(&mem, 3, |l| 0x200 + l as u32, "wrxchg2 new 1");
        let mut m = 0u32;
        let wraps: Vec<u32> = (0..64)
            .map(|_| {
                let o = m;
                m = if m >= 5 { m - 5 } else { m + 3 };
                o
            })
            .collect();
        assert_eq!(slot(&mem, 4), wraps, "{t:?} wrap");
        expect(&mem, 5, |l| if l == 0 { 0 } else { 0x100 }, "cmpst_b64 lo");
        expect(&mem, 6, |l| if l == 0 { 0 } else { 0x200 }, "cmpst_b64 hi");
        if t == Target::Gfx940 {
            expect(&mem, 7, |l| f16_of(l as u32) * 0x1_0001, "pk_add_f16");
            let bf = |x: f32| x.to_bits() >> 16;
            expect(
                &mem,
                8,
                |l| bf(l as f32) | bf(l as f32 * 0.5) << 16,
                "pk_add_bf16",
            );
            assert_eq!(mem.load::<u32>(IN), bf(64.0) | bf(32.0) << 16);
        }
    }
}

#[test]
fn lds_float_atomics() {
    for t in ALL {
        let has_f64 = t != Target::Gfx900;
        let mem = memory_with_inputs();
        for l in 0..64u64 {
            mem.store::<u32>(OUT + 3072 + 4 * l, (l as f32 * 0.25 - 3.0).to_bits());
        }
        let mut body = String::from(
            "
            global_load_dword v10, v[2:3], off offset:3072
            v_mov_b32 v20, 0
            ds_add_rtn_f32 v11, v20, v10
            ds_min_f32 v20, v10 offset:4
            ds_max_rtn_f32 v12, v20, v10 offset:8
            ds_read_b32 v13, v20 offset:4
            ds_read_b32 v14, v20 offset:8
            // cmpst_f32: -0.0 equals +0.0 in LDS (zeroed): lane 0 swaps.
            v_mov_b32 v15, 0x80000000
            ds_cmpst_rtn_f32 v16, v20, v15, v10 offset:12
            global_store_dword v[2:3], v11, off
            global_store_dword v[2:3], v12, off offset:256
            global_store_dword v[2:3], v13, off offset:512
            global_store_dword v[2:3], v14, off offset:768
            global_store_dword v[2:3], v16, off offset:1024
            ",
        );
        if has_f64 {
            body.push_str(
                "
                v_mov_b32 v30, 0
                v_mov_b32 v31, 0x3ff00000
                ds_add_rtn_f64 v[32:33], v20, v[30:31] offset:16
                ds_read_b64 v[34:35], v20 offset:16
                global_store_dword v[2:3], v33, off offset:1280
                global_store_dword v[2:3], v35, off offset:1536
                ",
            );
        }
        let mut k = kernel(t, &body);
        k.lds = 64;
        k.run(&mem).unwrap_or_else(|e| panic!("{t:?}: {e}"));
        let x = |l: u64| l as f32 * 0.25 - 3.0;
        let mut s = 0.0f32;
        for l in 0..64u64 {
            assert_eq!(
                f32::from_bits(mem.load::<u32>(OUT + 4 * l)),
                s,
                "add_f32 lane {l}"
            );
            s += x(l);
        }
        // min from 0.0: -3.0; max running from 0.0.
        expect(&mem, 2, |_| (-3.0f32).to_bits(), "min_f32");
        expect(&mem, 3, |_| x(63).to_bits(), "max_f32");
        for l in 0..64u64 {
            let prev = (0..l).map(x).fold(0.0f32, f32::max);
            assert_eq!(f32::from_bits(mem.load::<u32>(OUT + 256 + 4 * l)), prev);
        }
        expect(
            &mem,
            4,
            |l| if l == 0 { 0 } else { x(0).to_bits() },
            "cmpst_f32",
        );
        if has_f64 {
            expect(&mem, 5, |l| ((l as f64).to_bits() >> 32) as u32, "add_f64");
            expect(
                &mem,
                6,
                |_| (64.0f64.to_bits() >> 32) as u32,
                "add_f64 final",
            );
        }
    }
}

#[test]
fn swizzle_permute_and_bpermute() {
    for t in ALL {
        let mem = run_lds(
            t,
            0,
            "
            v_add_u32 v10, 0x100, v0
            s_mov_b32 exec_hi, 0x7fffffff
            ds_swizzle_b32 v11, v10 offset:swizzle(QUAD_PERM, 1, 2, 3, 0)
            ds_swizzle_b32 v12, v10 offset:swizzle(BITMASK_PERM, \"01pip\")
            ds_swizzle_b32 v13, v10 offset:swizzle(SWAP, 16)
            // bpermute: read lane (l + 1) mod 64 (lane 63 is inactive).
            v_add_u32 v14, 4, v1
            ds_bpermute_b32 v15, v14, v10
            // permute: send to lane (l + 2) mod 64, via the offset.
            ds_permute_b32 v16, v1, v10 offset:8
            s_mov_b32 exec_hi, -1
            global_store_dword v[2:3], v11, off
            global_store_dword v[2:3], v12, off offset:256
            global_store_dword v[2:3], v13, off offset:512
            global_store_dword v[2:3], v15, off offset:768
            global_store_dword v[2:3], v16, off offset:1024
            ",
        );
        let on = |l: u64| l != 63;
        let val = |l: u64| if on(l) { 0x100 + l as u32 } else { 0 };
        let act = |l: u64, v: u32| if on(l) { v } else { 0 };
        expect(
            &mem,
            0,
            |l| act(l, val((l & !3) + (l + 1) % 4)),
            "quad perm",
        );
        // "01pip", bit 4 first: 0/1 force the bit, p keeps, i inverts.
        let bm = |l: u64| {
            let (and, or, xor) = (0x07u64, 0x08u64, 0x02u64);
            (l & 0x20) | (((l & and) | or) ^ xor) & 0x1f
        };
        expect(&mem, 1, |l| act(l, val(bm(l))), "bitmask");
        expect(&mem, 2, |l| act(l, val(l ^ 16)), "swap 16");
        expect(&mem, 3, |l| act(l, val((l + 1) % 64)), "bpermute");
        // Lane l receives from lane l - 2; lane 1 from lane 63 (inactive:
        // nothing sent, zero).
        expect(&mem, 4, |l| act(l, val((l + 62) % 64)), "permute");
    }
}

#[test]
fn lds_append_and_consume_count_active_lanes() {
    for t in ALL {
        let mem = run_lds(
            t,
            64,
            "
            v_mov_b32 v20, 0
            v_mov_b32 v21, 10
            ds_write_b32 v20, v21 offset:8
            s_mov_b32 m0, 4
            s_mov_b32 exec_hi, 0
            ds_append v10 offset:4
            s_mov_b32 exec_lo, 0xff
            ds_consume v11 offset:4
            s_mov_b32 exec_lo, -1
            s_mov_b32 exec_hi, -1
            ds_read_b32 v12, v20 offset:8
            global_store_dword v[2:3], v10, off
            global_store_dword v[2:3], v11, off offset:256
            global_store_dword v[2:3], v12, off offset:512
            ",
        );
        expect(&mem, 0, |l| if l < 32 { 10 } else { 0 }, "append");
        expect(&mem, 1, |l| if l < 8 { 42 } else { 0 }, "consume");
        expect(&mem, 2, |_| 34, "final");
    }
}

#[test]
fn four_waves_exchange_through_lds_across_a_barrier() {
    for t in ALL {
        let mem = memory_with_inputs();
        let mut k = kernel(
            t,
            "
            v_add_u32 v10, 0x5000, v0
            ds_write_b32 v1, v10
            s_barrier
            // Read the work-item 64 further on (mod 256).
            v_add_u32 v11, 256, v1
            v_and_b32 v11, 0x3ff, v11
            ds_read_b32 v12, v11
            global_store_dword v[2:3], v12, off
            ",
        );
        k.workgroup = [256, 1, 1];
        k.grid = [256 * 3, 1, 1];
        k.lds = 1024;
        k.run(&mem).unwrap_or_else(|e| panic!("{t:?}: {e}"));
        // v[2:3] = OUT + 4 * (x within the workgroup): the three
        // workgroups write the same values to the same slots.
        for i in 0..256u64 {
            assert_eq!(
                mem.load::<u32>(OUT + 4 * i),
                0x5000 + ((i + 64) % 256) as u32,
                "{t:?} item {i}"
            );
        }
    }
}

#[test]
fn unmodelled_forms_are_illegal_instructions() {
    for (t, body) in [
        (Target::Gfx900, "buffer_load_dword off, s[8:11], 0 lds"),
        (
            Target::Gfx900,
            "buffer_load_dword v[1:2], off, s[8:11], 0 tfe",
        ),
        (Target::Gfx900, "ds_read_b32 v1, v2 gds"),
        (Target::Gfx90a, "buffer_load_format_x v1, off, s[8:11], 0"),
        (Target::Gfx940, "global_load_lds_dword v[2:3], off"),
    ] {
        let mem = memory_with_inputs();
        match kernel(t, body).run(&mem) {
            Err(DispatchError::IllegalInstruction { .. }) => {}
            r => panic!("{t:?} {body}: {r:?}"),
        }
    }
}

#[test]
fn a_global_access_outside_memory_faults() {
    let mem = memory_with_inputs();
    let e = kernel(
        Target::Gfx90a,
        "
        v_mov_b32 v8, 0
        v_mov_b32 v9, 0
        global_load_dword v10, v[8:9], off offset:64
        ",
    )
    .run(&mem)
    .unwrap_err();
    match e {
        DispatchError::Fault { fault, .. } => assert_eq!((fault.va, fault.write), (64, false)),
        e => panic!("{e}"),
    }
}

#[test]
fn private_accesses_past_the_limit_fault() {
    for (t, body) in [
        (Target::Gfx940, "scratch_load_dword v10, off, off offset:-2"),
        (
            Target::Gfx90a,
            "v_mov_b32 v11, -2\n scratch_load_dword v10, v11, off",
        ),
        (
            Target::Gfx90a,
            "v_mov_b32 v9, src_private_base\n v_mov_b32 v8, -3\n flat_store_dword v[8:9], v0",
        ),
    ] {
        let mem = memory_with_inputs();
        match kernel(t, body).run(&mem) {
            Err(DispatchError::Fault { .. }) => {}
            r => panic!("{t:?} {body}: {r:?}"),
        }
    }
}

/// Random DS, FLAT/GLOBAL/SCRATCH and MUBUF words with random registers
/// (addresses mostly unmapped) never panic the executors: they run, fault
/// or report an unmodelled form.
#[test]
fn random_memory_instructions_do_not_panic() {
    use kfd_gpu::mem::Tlb;
    use kfd_gpu::shader::dispatch::private_resource;
    use kfd_gpu::shader::exec::{lookup, Ctx};
    use kfd_gpu::shader::isa::decode;
    use kfd_gpu::shader::wave::Wave;
    let mem = memory();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let clock = || 0u64;
    for t in ALL {
        let mut tlb = Tlb::new(&mem);
        let mut lds = vec![0u8; 1024];
        let mut private = Vec::new();
        let mut w = Wave::new(if t == Target::Gfx900 { 256 } else { 512 });
        for n in 0..20_000 {
            let prefix = [0xd800_0000u32, 0xdc00_0000, 0xe000_0000][n % 3];
            let r = rnd();
            let words = [prefix | (r as u32 & 0x03ff_ffff), (r >> 32) as u32, 0];
            let Ok(inst) = decode(t, &words) else {
                continue;
            };
            let Some(exec) = lookup(inst.name) else {
                continue;
            };
            for s in w.sgpr.iter_mut() {
                // Small values: some addresses land in LDS, private memory
                // or the flat memory's range.
                *s = match rnd() % 4 {
                    0 => 0,
                    1 => rnd() as u32 & 0xffff,
                    2 => (MEM_BASE as u32).wrapping_add(rnd() as u32 & 0xffff),
                    _ => rnd() as u32,
                };
            }
            if prefix == 0xe000_0000 && rnd() % 2 == 0 {
                // Half the buffer accesses go to the private buffer.
                let r = ((words[1] >> 16) & 0x1f) as usize * 4;
                for (k, v) in private_resource().into_iter().enumerate() {
                    w.sgpr[(r + k) & 127] = v;
                }
            }
            // Fresh vector registers now and then (the executors write
            // some).
            for v in w.vgpr.iter_mut().take(if n % 16 == 0 { 300 } else { 0 }) {
                for x in v.iter_mut() {
                    *x = if rnd() % 2 == 0 {
                        rnd() as u32 & 0x3ff
                    } else {
                        rnd() as u32
                    };
                }
            }
            let mut c = Ctx {
                target: t,
                tlb: &mut tlb,
                lds: &mut lds,
                private: &mut private,
                private_limit: 1 << 16,
                shared_base: SHARED_BASE,
                private_base: PRIVATE_BASE,
                clock: &clock,
                realtime: &clock,
            };
            let _ = exec(&mut w, &inst, &mut c);
        }
    }
}
